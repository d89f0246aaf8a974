"""#35, files are sacred: every ``linclass`` command that writes reads all its
inputs first, refuses an output that names an input, and writes through a
temporary file, so a failing run leaves every existing file byte-identical
and a successful one produces its output."""
import contextlib
import io
import os

import numpy as np
import pytest

import linclass
from linclass import cli
from linclass.datasets import dump_svmlight_file, read_trees

CONLL = "He PRP B-NP\nsees VBZ B-VP\nthe DT B-NP\ndog NN I-NP\n\n" \
        "A DT B-NP\ncat NN I-NP\nsleeps VBZ B-VP\n\n"


def run(*argv):
    """(exit status, stdout, stderr) of ``linclass argv`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def snapshot(directory):
    """Every file under ``directory``: relative path -> bytes."""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                files[os.path.relpath(path, directory)] = fh.read()
    return files


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Inputs and models of every kind, built once; tests copy what they change."""
    d = tmp_path_factory.mktemp("cli_safety")
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(40, 4)).astype(float)
    y = np.where(X[:, 0] > X[:, 1], 1, -1)
    dump_svmlight_file(X, y, d / "flat.svm", zero_based=False)
    dump_svmlight_file(X, rng.integers(0, 3, 40), d / "rank.svm", zero_based=False,
                       query_id=np.repeat(np.arange(4), 10))
    (d / "seq.conll").write_text(CONLL * 3)
    from linclass.demo.parsing import make_toy_treebank
    trees = make_toy_treebank(30, max_words=6, random_state=1)
    (d / "train.mrg").write_text("\n".join(map(str, trees)) + "\n")
    (d / "sentences.txt").write_text("\n".join(" ".join(t.leaves()) for t in trees[:4]) + "\n")
    for argv in (["--model", "logistic", d / "flat.svm", "-o", d / "flat.npz"],
                 ["--model", "ranksvm", d / "rank.svm", "-o", d / "rank.npz"],
                 ["--model", "tagger", "-p", "max_iter=3", d / "seq.conll", "-o", d / "seq.npz"],
                 ["--model", "parser", "-p", "max_iter=1", "-p", "hash_bits=8", d / "train.mrg",
                  "-o", d / "parser.npz"]):
        code, _, err = run("train", *argv)
        assert code == 0, err
    return d


@pytest.fixture
def work(models, tmp_path):
    """A private copy of the inputs and models, plus an existing output file."""
    for name, data in snapshot(models).items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "bad.svm").write_text("1 1:1\nnot-a-label 2:1\n")
    (tmp_path / "bad.conll").write_text("He PRP B-NP\nsees VBZ\n")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe not utf-8\n")
    (tmp_path / "old.txt").write_text("precious results\n")
    return tmp_path


def assert_failed_untouched(work, *argv, code=None):
    before = snapshot(work)
    status, _, err = run(*argv)
    assert status != 0, err
    if code is not None:
        assert status == code, err
    assert snapshot(work) == before          # byte-identical, no file added or left behind
    assert err.startswith("linclass ") and err.count("\n") == 1, err
    return err


# ------------------------------------------------------------------ predict ---

@pytest.mark.parametrize("model, data", [("flat.npz", "flat.svm"), ("seq.npz", "seq.conll"),
                                         ("rank.npz", "rank.svm"),
                                         ("parser.npz", "sentences.txt")])
def test_predict_refuses_an_output_naming_an_input(work, model, data):
    err = assert_failed_untouched(work, "predict", work / model, work / data, "-o", work / data,
                                  code=cli.EXIT_DATA)
    assert "also an input" in err
    assert_failed_untouched(work, "predict", work / model, work / data, "-o", work / model,
                            code=cli.EXIT_DATA)


def test_predict_refuses_an_output_that_is_a_symlink_to_the_input(work):
    os.symlink(work / "flat.svm", work / "link.txt")
    err = assert_failed_untouched(work, "predict", work / "flat.npz", work / "flat.svm",
                                  "-o", work / "link.txt")
    assert "also an input" in err


@pytest.mark.parametrize("model, bad", [("flat.npz", "bad.svm"), ("seq.npz", "bad.conll"),
                                        ("rank.npz", "bad.svm"), ("parser.npz", "bad.txt"),
                                        ("flat.npz", "missing.svm"), ("missing.npz", "flat.svm"),
                                        ("flat.svm", "flat.svm")])
def test_failing_predict_leaves_the_existing_output_untouched(work, model, bad):
    assert_failed_untouched(work, "predict", work / model, work / bad, "-o", work / "old.txt")


@pytest.mark.parametrize("model, data", [("flat.npz", "flat.svm"), ("seq.npz", "seq.conll"),
                                         ("rank.npz", "rank.svm")])
def test_predict_replaces_the_output_with_what_it_prints(work, model, data):
    code, printed, err = run("predict", work / model, work / data)
    assert code == 0, err and printed
    code, _, err = run("predict", work / model, work / data, "-o", work / "old.txt")
    assert code == 0, err
    assert (work / "old.txt").read_text() == printed
    assert not [n for n in os.listdir(work) if n.endswith(".tmp")]


# -------------------------------------------------------------------- parse ---

def test_parse_refuses_inputs_as_output_and_keeps_files_on_failure(work):
    for target in ("sentences.txt", "parser.npz"):
        assert_failed_untouched(work, "parse", work / "parser.npz", work / "sentences.txt",
                                "-o", work / target, code=cli.EXIT_DATA)
    (work / "adir").mkdir()
    for bad in ("bad.txt", "missing.txt", "adir"):
        assert_failed_untouched(work, "parse", work / "parser.npz", work / bad,
                                "-o", work / "old.txt")
    assert_failed_untouched(work, "parse", work / "flat.npz", work / "sentences.txt",
                            "-o", work / "old.txt", code=cli.EXIT_USAGE)


def test_parse_writes_one_tree_per_sentence(work):
    code, _, err = run("parse", work / "parser.npz", work / "sentences.txt", "-o", work / "old.txt")
    assert code == 0, err
    parsed = read_trees(work / "old.txt")
    sentences = [line.split() for line in (work / "sentences.txt").read_text().splitlines()]
    assert [t.leaves() for t in parsed] == sentences


# -------------------------------------------------------------------- train ---

@pytest.mark.parametrize("model, data", [("logistic", "flat.svm"), ("tagger", "seq.conll"),
                                         ("ranksvm", "rank.svm"), ("parser", "train.mrg")])
def test_train_refuses_to_overwrite_its_training_data(work, model, data):
    err = assert_failed_untouched(work, "train", "--model", model, work / data, "-o", work / data,
                                  code=cli.EXIT_DATA)
    assert "also an input" in err


@pytest.mark.parametrize("argv", [
    ["--model", "logistic", "bad.svm"],
    ["--model", "logistic", "missing.svm"],
    ["--model", "logistic", "-p", "C=-1", "flat.svm"],
    ["--model", "tagger", "bad.conll"],
    ["--model", "tagger", "--label-column", "9", "seq.conll"],
    ["--model", "parser", "seq.conll"],
    ["--model", "nope", "flat.svm"],
])
def test_failing_train_leaves_the_existing_model_untouched(work, argv):
    argv = [str(work / a) if a.endswith((".svm", ".conll")) else a for a in argv]
    assert_failed_untouched(work, "train", *argv, "-o", work / "flat.npz")


def test_train_replaces_the_model_only_when_done(work):
    old = (work / "flat.npz").read_bytes()
    code, _, err = run("train", "--model", "logistic", "-p", "C=0.01", work / "flat.svm",
                       "-o", work / "flat.npz")
    assert code == 0, err
    assert (work / "flat.npz").read_bytes() != old
    assert linclass.load(work / "flat.npz").C == 0.01
    assert not [n for n in os.listdir(work) if n.endswith(".tmp")]


# -------------------------------------------------------- hostile outputs ---

@pytest.mark.parametrize("command", ["train", "predict", "parse", "evaluate"])
def test_outputs_in_a_missing_directory_or_on_a_directory_are_refused(work, command):
    (work / "adir").mkdir()
    argv = {"train": ["train", "--model", "logistic", work / "flat.svm", "-o"],
            "predict": ["predict", work / "flat.npz", work / "flat.svm", "-o"],
            "parse": ["parse", work / "parser.npz", work / "sentences.txt", "-o"],
            "evaluate": ["evaluate", work / "flat.npz", work / "flat.svm", "--plot"]}[command]
    err = assert_failed_untouched(work, *argv, work / "nodir" / "out.txt", code=cli.EXIT_DATA)
    assert "does not exist" in err
    err = assert_failed_untouched(work, *argv, work / "adir", code=cli.EXIT_DATA)
    assert "is a directory" in err
    if os.path.exists("/dev/null"):
        assert "not a regular file" in assert_failed_untouched(work, *argv, "/dev/null")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may write into a read-only directory")
def test_output_in_a_read_only_directory_is_refused(work):
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        err = assert_failed_untouched(work, "predict", work / "flat.npz", work / "flat.svm",
                                      "-o", ro / "out.txt", code=cli.EXIT_DATA)
        assert "permission denied" in err
    finally:
        ro.chmod(0o700)


# ----------------------------------------------------------------- evaluate ---

def test_evaluate_plot_refuses_inputs_and_keeps_files_on_failure(work):
    for target in ("flat.npz", "flat.svm"):
        assert_failed_untouched(work, "evaluate", work / "flat.npz", work / "flat.svm",
                                "--plot", work / target, code=cli.EXIT_DATA)
    (work / "old.png").write_bytes(b"an old figure")
    assert_failed_untouched(work, "evaluate", work / "flat.npz", work / "bad.svm",
                            "--plot", work / "old.png")
    assert_failed_untouched(work, "evaluate", work / "flat.npz", work / "flat.svm",
                            "--plot", work / "figure.unknownformat")


def test_evaluate_plot_writes_exactly_the_named_file(work):
    pytest.importorskip("matplotlib")
    code, _, err = run("evaluate", work / "flat.npz", work / "flat.svm", "--plot", work / "fig")
    assert code == 0, err
    assert (work / "fig").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (work / "fig.png").exists()


# ------------------------------------------------- promises and encodings ---

def test_parse_writes_noparse_for_a_sentence_it_cannot_parse(work):
    sentences = [line.split() for line in (work / "sentences.txt").read_text().splitlines()]
    odd = ["Zork", "-", "42"]        # no signature of these words is known to the parser
    (work / "in.txt").write_text("\n".join(" ".join(s) for s in sentences[:2] + [odd]
                                           + sentences[2:]) + "\n")
    code, _, err = run("parse", work / "parser.npz", work / "in.txt", "-o", work / "out.mrg")
    assert code == 0
    assert err.count("\n") == 1 and "warning: 1 of 5 sentence(s) without parse" in err
    lines = (work / "out.mrg").read_text().splitlines()
    assert lines[2] == "(NOPARSE (X Zork) (X -) (X 42))"
    expected = linclass.load(work / "parser.npz").predict(sentences)
    assert lines[:2] + lines[3:] == [str(t) for t in expected]


def test_inputs_with_a_byte_order_mark_read_as_without(work):
    for command, model, data in (("parse", "parser.npz", "sentences.txt"),
                                 ("predict", "seq.npz", "seq.conll"),
                                 ("predict", "flat.npz", "flat.svm")):
        plain = run(command, work / model, work / data)
        (work / "bom").write_bytes(b"\xef\xbb\xbf" + (work / data).read_bytes())
        assert plain[0] == 0 and run(command, work / model, work / "bom") == plain
    (work / "both.conll").write_text("He PRP B-NP B-NP\nsees VBZ B-VP B-VP\n\n")
    plain = run("evaluate", "--conll", work / "both.conll")
    (work / "bom").write_bytes(b"\xef\xbb\xbf" + (work / "both.conll").read_bytes())
    assert plain[0] == 0 and run("evaluate", "--conll", work / "bom") == plain


def test_parse_writes_brackets_in_words_as_the_treebank_does(work):
    (work / "in.txt").write_text("the ( dog )\nf(x) slept\n")
    code, _, err = run("parse", work / "parser.npz", work / "in.txt", "-o", work / "out.mrg")
    assert code == 0, err
    trees = read_trees(work / "out.mrg")
    assert [t.leaves() for t in trees] == [["the", "-LRB-", "dog", "-RRB-"],
                                           ["f-LRB-x-RRB-", "slept"]]


def test_parse_and_evaluate_trees_with_unknown_words_or_no_words(work):
    gold = (work / "train.mrg").read_text().splitlines()[:3]
    (work / "gold.mrg").write_text("\n".join(gold + ["(S (NP (NNP Zork)) (VP (VBD -)) (. 42))"]))
    code, out, err = run("evaluate", work / "parser.npz", work / "gold.mrg")
    assert code == 0, err
    assert "4 sentences, 1 without parse" in out
    (work / "empty.mrg").write_text("\n".join(gold + ["(S (-NONE- *T*))"]))
    for argv in (["parse", work / "parser.npz", work / "empty.mrg", "-o", work / "old.txt"],
                 ["evaluate", work / "parser.npz", work / "empty.mrg"]):
        err = assert_failed_untouched(work, *argv, code=cli.EXIT_DATA)
        assert "tree 4 of" in err and "no words" in err
