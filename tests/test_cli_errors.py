"""#35, errors users can read: every argument of ``linclass`` is validated, and
every error is one line ``linclass COMMAND: error: ...`` on standard error with
its exit status (1 usage, 2 data, 3 model file), never a Python traceback
(``--debug`` shows it)."""
import contextlib
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import linclass
from linclass import cli
from linclass.datasets import dump_svmlight_file

CONLL = "He PRP B-NP\nsees VBZ B-VP\nthe DT B-NP\ndog NN I-NP\n\n" \
        "A DT B-NP\ncat NN I-NP\nsleeps VBZ B-VP\n\n"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def one_error_line(err, command):
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("linclass %s: error: " % command), err
    return err


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 4)).astype(float)
    dump_svmlight_file(X, np.where(X[:, 0] > X[:, 1], 1, -1), tmp_path / "flat.svm",
                       zero_based=False)
    dump_svmlight_file(X, rng.integers(0, 3, 30), tmp_path / "rank.svm", zero_based=False,
                       query_id=np.repeat(np.arange(3), 10))
    (tmp_path / "seq.conll").write_text(CONLL * 2)
    return tmp_path


def test_label_column_out_of_range_is_an_error_not_a_modulo(files):
    for column in ("99", "3", "-4"):
        code, _, err = run("train", "--model", "tagger", "--label-column", column,
                           files / "seq.conll", "-o", files / "m.npz")
        assert code == cli.EXIT_DATA
        assert "out of range" in one_error_line(err, "train") and "3 columns" in err
    assert not (files / "m.npz").exists()


def test_label_column_counts_from_the_end_when_negative_and_is_stored_as_an_index(files):
    assert run("train", "--model", "tagger", "-p", "max_iter=2", "--label-column", "-1",
               files / "seq.conll", "-o", files / "m.npz")[0] == 0
    spec = linclass.load(files / "m.npz").input_spec_
    assert spec["label_column"] == 2 and spec["n_columns"] == 3
    code, _, err = run("train", "--model", "tagger", "--label-column", "pos",
                       files / "seq.conll", "-o", files / "m2.npz")
    assert code == cli.EXIT_DATA and "no column 'pos'" in one_error_line(err, "train")


@pytest.mark.parametrize("columns, code", [("7", cli.EXIT_DATA), ("-9", cli.EXIT_DATA),
                                           ("0,,1", cli.EXIT_USAGE), ("x", cli.EXIT_DATA)])
def test_bad_token_columns(files, columns, code):
    status, _, err = run("train", "--model", "tagger", "--token-columns", columns,
                         files / "seq.conll", "-o", files / "m.npz")
    assert status == code
    one_error_line(err, "train")


def test_predict_refuses_a_file_with_other_columns_than_the_training_file(files):
    assert run("train", "--model", "tagger", "-p", "max_iter=2", files / "seq.conll",
               "-o", files / "m.npz")[0] == 0
    two = "\n".join(" ".join(line.split()[:2]) for line in CONLL.splitlines()) + "\n"
    (files / "two.conll").write_text(two)
    code, out, err = run("predict", files / "m.npz", files / "two.conll")
    assert code == cli.EXIT_DATA and out == ""
    assert "2 columns" in one_error_line(err, "predict")


@pytest.mark.parametrize("value", ["-5", "-1", "x", "1.5"])
def test_max_queries_must_be_a_non_negative_integer(files, value):
    assert run("train", "--model", "ranksvm", files / "rank.svm", "-o", files / "r.npz")[0] == 0
    code, out, err = run("evaluate", "--max-queries", value, files / "r.npz", files / "rank.svm")
    assert code == cli.EXIT_USAGE and out == ""
    assert "--max-queries" in one_error_line(err, "evaluate")


def test_max_queries_zero_prints_only_the_mean(files):
    assert run("train", "--model", "ranksvm", files / "rank.svm", "-o", files / "r.npz")[0] == 0
    code, out, _ = run("evaluate", "--max-queries", "0", files / "r.npz", files / "rank.svm")
    assert code == 0 and "(3 more queries)" in out


@pytest.mark.parametrize("folds", ["0", "1", "-3"])
def test_cross_validation_needs_two_folds(files, folds):
    code, _, err = run("train", "--model", "logistic", "-v", folds, files / "flat.svm")
    assert code == cli.EXIT_USAGE
    assert "-v" in one_error_line(err, "train")


def test_argparse_errors_are_one_line(files):
    for argv, command in ((["train", files / "flat.svm"], "train"),
                          (["predict", "--nope", "a", "b"], "predict"),
                          (["evaluate", "--plot-kind", "pie", "a", "b"], "evaluate")):
        code, _, err = run(*argv)
        assert code == cli.EXIT_USAGE
        one_error_line(err, command)


def test_a_malformed_data_file_gives_its_file_and_line(files):
    (files / "bad.svm").write_text("1 1:1\n1 2:x\n")
    code, _, err = run("train", "--model", "logistic", files / "bad.svm", "-o", files / "m.npz")
    assert code == cli.EXIT_DATA and "bad.svm:2" in one_error_line(err, "train")
    (files / "bad.conll").write_text("a DT B-NP\nb NN\n")
    code, _, err = run("train", "--model", "tagger", files / "bad.conll", "-o", files / "m.npz")
    assert code == cli.EXIT_DATA and "bad.conll:2" in one_error_line(err, "train")


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xff\xfe\x00\x01"])
def test_empty_or_undecodable_inputs(files, content):
    (files / "in.conll").write_bytes(content)
    (files / "in.svm").write_bytes(content)
    for argv, command in ((["train", "--model", "tagger", files / "in.conll"], "train"),
                          (["train", "--model", "logistic", files / "in.svm"], "train"),
                          (["train", "--model", "parser", files / "in.conll"], "train"),
                          (["evaluate", "--conll", files / "in.conll"], "evaluate")):
        code, _, err = run(*argv, *(["-o", files / "m.npz"] if command == "train" else []))
        assert code == cli.EXIT_DATA
        one_error_line(err, command)
    assert not (files / "m.npz").exists()


def test_directories_and_devices_as_inputs(files):
    for argv, code in ((["train", "--model", "logistic", files, "-o", files / "m"], cli.EXIT_DATA),
                       (["evaluate", "--conll", files], cli.EXIT_DATA),
                       (["predict", files, files / "flat.svm"], cli.EXIT_MODEL),
                       (["predict", os.devnull, files / "flat.svm"], cli.EXIT_MODEL)):
        status, _, err = run(*argv)
        assert status == code
        assert "Errno" not in one_error_line(err, argv[0])


def test_an_unexpected_exception_is_one_line_and_debug_shows_it(monkeypatch):
    def broken(args):
        raise TypeError("a bug\nover two lines")
    monkeypatch.setattr(cli, "cmd_models", broken)
    code, _, err = run("models")
    assert code == cli.EXIT_DATA
    assert "TypeError: a bug over two lines" in one_error_line(err, "models")
    with pytest.raises(TypeError):
        run("models", "--debug")
    with pytest.raises(TypeError):
        run("--debug", "models")


def test_no_traceback_from_a_real_process(files):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(linclass.__file__))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    out = subprocess.run([sys.executable, "-m", "linclass", "train", "--model", "tagger",
                          "--token-columns", "5", str(files / "seq.conll"), "-o",
                          str(files / "m.npz")], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == cli.EXIT_DATA
    one_error_line(out.stderr, "train")


def test_a_closed_standard_output_stops_quietly(files, monkeypatch):
    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    assert run("train", "--model", "logistic", files / "flat.svm", "-o", files / "m.npz")[0] == 0
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    with contextlib.redirect_stderr(err):
        code = cli.main(["predict", str(files / "m.npz"), str(files / "flat.svm")])
    assert code == cli.EXIT_BROKEN_PIPE and err.getvalue() == ""


@pytest.mark.parametrize("argv", [["--model", "logistic", "--label-column", "0"],
                                  ["--model", "ranksvm", "--token-columns", "0"],
                                  ["--model", "parser", "--label-column", "1"],
                                  ["--model", "logistic", "--format", "conll"],
                                  ["--model", "tagger", "--format", "svmlight"],
                                  ["--model", "parser", "--format", "conllu"]])
def test_training_options_that_do_not_apply_are_refused(files, argv):
    code, _, err = run("train", *argv, files / "flat.svm", "-o", files / "m.npz")
    assert code == cli.EXIT_USAGE
    assert "appl" in one_error_line(err, "train")
    assert not (files / "m.npz").exists()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_devices_are_refused_as_data_files(files):
    assert run("train", "--model", "logistic", files / "flat.svm", "-o", files / "m.npz")[0] == 0
    for argv in (["train", "--model", "logistic", os.devnull, "-o", files / "m2.npz"],
                 ["predict", files / "m.npz", os.devnull],
                 ["evaluate", files / "m.npz", os.devnull],
                 ["evaluate", "--conll", os.devnull]):
        code, _, err = run(*argv)
        assert code == cli.EXIT_DATA
        assert "is a device" in one_error_line(err, argv[0])
    # an endless device: in a child process with bounded memory and time
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(linclass.__file__))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    out = subprocess.run([sys.executable, "-m", "linclass", "predict", str(files / "m.npz"),
                          "/dev/zero"], capture_output=True, text=True, env=env, timeout=120,
                         preexec_fn=limit)
    assert out.returncode == cli.EXIT_DATA
    assert "is a device" in one_error_line(out.stderr, "predict")


def test_evaluate_options_that_do_not_apply_are_refused(files):
    assert run("train", "--model", "logistic", files / "flat.svm", "-o", files / "f.npz")[0] == 0
    assert run("train", "--model", "ranksvm", files / "rank.svm", "-o", files / "r.npz")[0] == 0
    (files / "both.conll").write_text("He PRP B-NP B-NP\n\n")
    for argv in (["--max-queries", "3", files / "f.npz", files / "flat.svm"],
                 ["--scheme", "IOB2", files / "r.npz", files / "rank.svm"],
                 ["--evalb", files / "f.npz", files / "flat.svm"],
                 ["--plot", files / "p.png", files / "r.npz", files / "rank.svm"],
                 ["--plot-kind", "roc", files / "f.npz", files / "flat.svm"],
                 ["--conll", files / "both.conll", "--max-queries", "3"],
                 ["--conll", files / "both.conll", "--evalb"]):
        code, out, err = run("evaluate", *argv)
        assert code == cli.EXIT_USAGE and out == ""
        one_error_line(err, "evaluate")
    assert not (files / "p.png").exists()
    assert run("evaluate", "--conll", files / "both.conll", "--scheme", "IOB2")[0] == 0


def test_corrupt_compressed_inputs(files):
    import gzip
    (files / "trunc.txt.gz").write_bytes(gzip.compress(b"the dog\n" * 50)[:25])
    (files / "plain.txt.gz").write_bytes(b"not compressed")
    (files / "plain.txt.bz2").write_bytes(b"not compressed")
    for name in ("trunc.txt.gz", "plain.txt.gz", "plain.txt.bz2"):
        code, _, err = run("evaluate", "--conll", files / name)
        assert code == cli.EXIT_DATA
        assert "cannot decompress" in one_error_line(err, "evaluate")


def test_an_empty_output_name_is_a_usage_error_before_anything_runs(files):
    assert run("train", "--model", "logistic", files / "flat.svm", "-o",
               files / "m.npz")[0] == cli.EXIT_OK
    before = sorted(p.name for p in files.iterdir())
    for argv in (("predict", files / "m.npz", files / "flat.svm", "-o", ""),
                 ("evaluate", files / "m.npz", files / "flat.svm", "--plot", ""),
                 ("train", "--model", "logistic", files / "flat.svm", "-o", " ")):
        code, _, err = run(*argv)
        assert code == cli.EXIT_USAGE and "needs a file name" in one_error_line(err, argv[0])
    assert sorted(p.name for p in files.iterdir()) == before
