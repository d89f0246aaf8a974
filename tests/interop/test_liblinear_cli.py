"""``linclass liblinear-train`` / ``liblinear-predict``: LIBLINEAR's command
lines (issue #39, item 3), checked against the peer ``liblinear-official`` on
real data (a9a and a four-class Cora subset from ``LINCLASS_DATA``), and for
LIBLINEAR's output formats, standard input/output, errors and file safety."""
import contextlib
import gzip
import io
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from linclass import cli

DATA = os.environ.get("LINCLASS_DATA", "")
A9A = os.path.join(DATA, "libsvm_binary", "a9a.gz")
A9A_TEST = os.path.join(DATA, "libsvm_binary", "a9a.t.gz")
CORA = os.path.join(DATA, "citation_graphs", "cora", "cora.content.gz")
FOUR_CLASSES = ("Neural_Networks", "Probabilistic_Methods", "Genetic_Algorithms", "Theory")
ACCURACY = re.compile(r"^Accuracy = ([0-9.]+)% \((\d+)/(\d+)\)$")

PM = "+1 1:1 2:0.5\n-1 1:-1 3:1\n+1 2:1\n-1 3:2\n-1 1:-0.5 3:1\n"


def run(*argv, cwd=None):
    """(exit status, stdout, stderr) of ``linclass argv`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if cwd is not None:
                os.chdir(cwd)
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
        finally:
            os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def run_process(*argv, stdin=b"", cwd=None):
    """``python -m linclass argv`` in a subprocess: (status, stdout bytes, stderr text)."""
    # run outside the source tree by default: an unbuilt checkout there would
    # shadow the installed package (as in CI's clean checkout)
    done = subprocess.run([sys.executable, "-m", "linclass"] + [str(a) for a in argv],
                          input=stdin, capture_output=True, timeout=120,
                          cwd=os.path.dirname(os.path.abspath(__file__)) if cwd is None else cwd)
    return done.returncode, done.stdout, done.stderr.decode()


def accuracy_of(stdout):
    match = ACCURACY.match(stdout.strip())
    assert match, stdout
    return float(match.group(1))


def one_line_error(code, out, err, status=2):
    assert code == status, (code, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and " error: " in lines[0], err
    return lines[0]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """Subsets of a9a (6000 training, 4000 test lines) and a four-class Cora
    split (LIBLINEAR's ``four_class_data_file``), written to a temporary folder."""
    if not all(os.path.exists(p) for p in (A9A, A9A_TEST, CORA)):
        pytest.skip("the benchmark data (LINCLASS_DATA: libsvm_binary, citation_graphs) "
                    "is absent")
    d = tmp_path_factory.mktemp("liblinear_real")
    for source, name, n in ((A9A, "a9a", 6000), (A9A_TEST, "a9a.t", 4000)):
        with gzip.open(source, "rt") as fh:
            lines = [next(fh) for _ in range(n)]
        (d / name).write_text("".join(lines))
    with gzip.open(CORA, "rt") as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh]
    rows = [r for r in rows if r[-1] in FOUR_CLASSES]
    random.Random(0).shuffle(rows)
    lines = ["%d %s\n" % (FOUR_CLASSES.index(r[-1]) + 1,
                          " ".join("%d:1" % j for j, v in enumerate(r[1:-1], 1) if v == "1"))
             for r in rows]
    half = len(lines) // 2
    (d / "four").write_text("".join(lines[:half]))
    (d / "four.t").write_text("".join(lines[half:]))
    return d


@pytest.fixture(scope="module")
def peer():
    return pytest.importorskip("liblinear.liblinearutil")


def peer_accuracy(peer, train_file, test_file, options):
    y, x = peer.svm_read_problem(str(train_file))
    yt, xt = peer.svm_read_problem(str(test_file))
    model = peer.train(y, x, options + " -q")
    _, (accuracy, _, _), _ = peer.predict(yt, xt, model, "-q")
    return accuracy, model


def peer_accuracy_range(peer, train_file, test_file, options, runs=5):
    """(lowest, highest) test accuracy of LIBLINEAR over ``runs`` fits: its
    coordinate-descent solvers draw their order from C's ``rand()``, whose
    stream goes on from fit to fit, so at the default tolerances the result
    moves by up to a point on a small set (-s 5 and 6 on the four-class data)."""
    y, x = peer.svm_read_problem(str(train_file))
    yt, xt = peer.svm_read_problem(str(test_file))
    accuracies = [peer.predict(yt, xt, peer.train(y, x, options + " -q"), "-q")[1][0]
                  for _ in range(runs)]
    return min(accuracies), max(accuracies)


def linclass_accuracy(d, options, train_file, test_file):
    code, out, err = run("liblinear-train", "-q", *options.split(), train_file, d / "m.model")
    assert code == 0 and out == "", (code, out, err)
    code, out, err = run("liblinear-predict", test_file, d / "m.model", d / "m.out")
    assert code == 0, err
    return accuracy_of(out)


# ------------------------------------------------- against LIBLINEAR ---

@pytest.mark.parametrize("solver_type", [0, 1, 2, 3, 4, 5, 6, 7])
def test_binary_accuracy_matches_liblinear(real, peer, solver_type):
    """Every -s linclass offers, LIBLINEAR's defaults, on a9a: within 0.3 points
    of LIBLINEAR's accuracy (of the range of its runs, see peer_accuracy_range)."""
    options = "-s %d" % solver_type
    low, high = peer_accuracy_range(peer, real / "a9a", real / "a9a.t", options)
    got = linclass_accuracy(real, options, real / "a9a", real / "a9a.t")
    assert low - 0.3 <= got <= high + 0.3, (solver_type, got, low, high)


@pytest.mark.parametrize("solver_type", [0, 2, 7])
def test_multiclass_weighted_matches_liblinear(real, peer, solver_type):
    """README's ``train -c 10 -w1 2 -w2 5 -w3 2 four_class_data_file``: one-vs-rest
    with each class's weight on its own examples.  The strictly convex types at a
    tight -e reach LIBLINEAR's optimum: the same accuracy to 0.3 points."""
    options = "-s %d -c 10 -w1 2 -w2 5 -w3 2 -e 0.0001" % solver_type
    expected, _ = peer_accuracy(peer, real / "four", real / "four.t", options)
    got = linclass_accuracy(real, options, real / "four", real / "four.t")
    assert abs(got - expected) <= 0.3, (solver_type, got, expected)


@pytest.mark.parametrize("solver_type", [0, 1, 2, 3, 4, 5, 6, 7])
def test_multiclass_every_type_near_liblinear(real, peer, solver_type):
    """Every -s at LIBLINEAR's default tolerances on the four-class data: within
    0.3 points of LIBLINEAR, between its runs and its converged solution (1007
    test examples, 0.1 point each).  C = 10 regularises loosely: at the default
    -e both stop short of the optimum, each at its own point (-s 0 and 2:
    LIBLINEAR 0.5 points above its own optimum, linclass at it)."""
    options = "-s %d -c 10 -w1 2 -w2 5 -w3 2" % solver_type
    low, high = peer_accuracy_range(peer, real / "four", real / "four.t", options)
    converged, _ = peer_accuracy(peer, real / "four", real / "four.t", options + " -e 0.0001")
    low, high = min(low, converged), max(high, converged)
    got = linclass_accuracy(real, options, real / "four", real / "four.t")
    assert low - 0.3 <= got <= high + 0.3, (solver_type, got, low, high)


def test_readme_examples(real, peer, tmp_path):
    """LIBLINEAR README's examples, run as they are written (in the data's folder)."""
    for name in ("a9a", "a9a.t"):
        (tmp_path / name).write_bytes((real / name).read_bytes())
    code, out, err = run("liblinear-train", "a9a", cwd=tmp_path)        # train data_file
    assert code == 0, err
    assert out.startswith("optimization finished, #iter = ")
    assert (tmp_path / "a9a.model").is_file()

    code, out, err = run("liblinear-train", "-s", "0", "a9a", cwd=tmp_path)
    assert code == 0, err

    # train -v 5 -e 0.001 data_file: the folds are not LIBLINEAR's, the accuracy near it
    code, out, err = run("liblinear-train", "-v", "5", "-e", "0.001", "a9a", cwd=tmp_path)
    assert code == 0, err
    match = re.fullmatch(r"Cross Validation Accuracy = ([0-9.]+)%\n", out)
    assert match, out
    y, x = peer.svm_read_problem(str(tmp_path / "a9a"))
    expected = peer.train(y, x, "-v 5 -e 0.001 -q")
    assert abs(float(match.group(1)) - expected) <= 1.0

    # predict -b 1 test_file data_file.model output_file (a -s 0 model)
    code, out, err = run("liblinear-predict", "-b", "1", "a9a.t", "a9a.model", "out",
                         cwd=tmp_path)
    assert code == 0, err
    expected, model = peer_accuracy(peer, tmp_path / "a9a", tmp_path / "a9a.t", "-s 0")
    assert abs(accuracy_of(out) - expected) <= 0.3
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[0] == "labels " + " ".join("%d" % v for v in model.get_labels())
    assert lines[0] == "labels 1 -1"           # -1 comes first in a9a: LIBLINEAR swaps
    assert len(lines) == 4001
    yt, xt = peer.svm_read_problem(str(tmp_path / "a9a.t"))
    labels, _, prob = peer.predict(yt, xt, model, "-b 1 -q")
    ours = np.array([[float(v) for v in line.split()[1:]] for line in lines[1:]])
    assert np.abs(ours - np.array(prob)).max() < 0.1     # both stop early at -e 0.01
    for line in lines[1:]:
        label, *p = line.split()
        assert label in ("1", "-1") and len(p) == 2
    # at a tight tolerance both reach the optimum: the same probabilities
    assert run("liblinear-train", "-q", "-s", "0", "-e", "0.0001", "a9a", cwd=tmp_path)[0] == 0
    assert run("liblinear-predict", "-b", "1", "a9a.t", "a9a.model", "out",
               cwd=tmp_path)[0] == 0
    ours = np.loadtxt(tmp_path / "out", skiprows=1)[:, 1:]
    model = peer.train(*peer.svm_read_problem(str(tmp_path / "a9a")), "-s 0 -e 0.0001 -q")
    prob = peer.predict(yt, xt, model, "-b 1 -q")[2]
    assert np.abs(ours - np.array(prob)).max() < 0.005


# ------------------------------------------------------------ formats ---

def test_labels_printed_as_liblinear_prints_them(tmp_path):
    (tmp_path / "pm").write_text(PM)
    (tmp_path / "multi").write_text("2 1:1\n3 2:1\n2 1:0.9\n3 2:1.1\n5 3:1\n-7 4:1\n")
    assert run("liblinear-train", "-q", "pm", tmp_path / "pm.model", cwd=tmp_path)[0] == 0
    code, out, _ = run("liblinear-predict", "pm", "pm.model", "pm.out", cwd=tmp_path)
    assert code == 0 and out == "Accuracy = 100% (5/5)\n"
    assert (tmp_path / "pm.out").read_text() == "1\n-1\n1\n-1\n-1\n"     # +1 is printed 1
    for s in ("4", "1"):
        assert run("liblinear-train", "-q", "-s", s, "multi", cwd=tmp_path)[0] == 0
        code, out, err = run("liblinear-predict", "multi", "multi.model", "-", cwd=tmp_path)
        assert code == 0, err
        assert out == "2\n3\n2\n3\n5\n-7\n"
        assert err == "Accuracy = 100% (6/6)\n"      # the predictions own the stdout


def test_test_features_beyond_training_are_ignored(tmp_path):
    """As LIBLINEAR's predict: indices above the training maximum are not used."""
    (tmp_path / "pm").write_text(PM)
    (tmp_path / "wide").write_text("+1 1:1 2:0.5 7:100\n-1 1:-1 3:1 9:-4\n")
    (tmp_path / "zero").write_text("+1 0:1 2:0.5\n")
    assert run("liblinear-train", "-q", "pm", cwd=tmp_path)[0] == 0
    code, out, err = run("liblinear-predict", "wide", "pm.model", "o", cwd=tmp_path)
    assert (code, out, err) == (0, "Accuracy = 100% (2/2)\n", "")
    code, out, err = run("liblinear-predict", "zero", "pm.model", "o", cwd=tmp_path)
    assert "zero" in one_line_error(code, out, err)          # LIBLINEAR's indices start at 1


def test_probability_output_format(tmp_path):
    (tmp_path / "pm").write_text(PM)
    assert run("liblinear-train", "-q", "-s", "0", "-B", "1", "pm", cwd=tmp_path)[0] == 0
    code, out, err = run("liblinear-predict", "-b", "1", "pm", "pm.model", "-",
                         cwd=tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "labels 1 -1"
    for line in lines[1:]:
        assert re.fullmatch(r"-?1 [0-9.e-]+ [0-9.e-]+", line), line
        label, p1, p2 = line.split()
        assert abs(float(p1) + float(p2) - 1) < 1e-5
        assert (label == "1") == (float(p1) > 0.5)
    # -b 1 is for logistic regression only, as in LIBLINEAR; nothing is written
    assert run("liblinear-train", "-q", "-s", "1", "pm", "svm.model", cwd=tmp_path)[0] == 0
    (tmp_path / "kept").write_text("old")
    code, out, err = run("liblinear-predict", "-b", "1", "pm", "svm.model", "kept",
                         cwd=tmp_path)
    assert "only supported for logistic regression" in one_line_error(code, out, err)
    assert (tmp_path / "kept").read_text() == "old"


def test_quiet(tmp_path):
    (tmp_path / "pm").write_text(PM)
    assert run("liblinear-train", "-q", "-w5", "2", "pm", cwd=tmp_path) == (0, "", "")
    assert run("liblinear-predict", "-q", "pm", "pm.model", "o", cwd=tmp_path) == (0, "", "")
    code, out, err = run("liblinear-train", "-w5", "2", "pm", cwd=tmp_path)
    assert code == 0 and "class label 5 specified in weight is not found" in err
    code, out, _ = run("liblinear-train", "-q", "-v", "2", "pm", cwd=tmp_path)
    assert code == 0 and out.startswith("Cross Validation Accuracy = ")   # as LIBLINEAR


def test_stdin_and_stdout():
    """``-`` is the standard input or output, for data, models and predictions."""
    code, model, err = run_process("liblinear-train", "-q", "-s", "0", "-", "-",
                                   stdin=PM.encode())
    assert code == 0, err
    assert model[:2] == b"PK"                                 # the .npz model itself
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "pm.model"), "wb") as fh:
            fh.write(model)
        code, out, err = run_process("liblinear-predict", "-", "pm.model", "-",
                                     stdin=PM.encode(), cwd=d)
        assert code == 0, err
        assert out.decode() == "1\n-1\n1\n-1\n-1\n"
        assert err == "Accuracy = 100% (5/5)\n"
        with open(os.path.join(d, "pm"), "w") as fh:
            fh.write(PM)
        code, out, err = run_process("liblinear-predict", "-q", "pm", "-", "-", stdin=model,
                                     cwd=d)
        assert (code, out.decode(), err) == (0, "1\n-1\n1\n-1\n-1\n", "")
        code, out, err = run_process("liblinear-predict", "-", "-", "out", cwd=d)
        assert "both be the standard input" in one_line_error(code, out, err)


def test_bias_and_unregularised_bias(tmp_path):
    (tmp_path / "pm").write_text(PM)
    from linclass import load
    for options in (["-s", "0", "-B", "1"], ["-s", "0", "-B", "1", "-R"],
                    ["-s", "6", "-B", "3"], ["-s", "1", "-B", "2"], ["-s", "4", "-B", "1"]):
        code, _, err = run("liblinear-train", "-q", *options, "pm", "m", cwd=tmp_path)
        assert code == 0, (options, err)
        model = load(tmp_path / "m")
        assert model.input_spec_["liblinear"]["bias"] == float(options[3])
        assert model.coef_.shape[1] == 3                   # the bias is the intercept
    code, _, _ = run("liblinear-train", "-q", "-s", "0", "pm", "m", cwd=tmp_path)
    assert code == 0 and np.all(load(tmp_path / "m").intercept_ == 0)


def test_models_work_in_linclass_predict(tmp_path):
    (tmp_path / "pm").write_text(PM)
    assert run("liblinear-train", "-q", "-s", "2", "pm", cwd=tmp_path)[0] == 0
    code, out, err = run("predict", tmp_path / "pm.model", tmp_path / "pm")
    assert code == 0 and out == "1\n-1\n1\n-1\n-1\n", err


def test_cross_validation_more_folds_than_data(tmp_path):
    (tmp_path / "pm").write_text(PM)
    code, out, err = run("liblinear-train", "-v", "10", "pm", cwd=tmp_path)
    assert code == 0 and "leave-one-out" in err
    assert re.fullmatch(r"Cross Validation Accuracy = [0-9.]+%\n", out)
    assert not (tmp_path / "pm.model").exists()               # -v writes no model


# ------------------------------------------------------------- errors ---

@pytest.mark.parametrize("argv, words", [
    (["-s", "99", "pm"], "unknown solver type -s 99"),
    (["-s", "11", "pm"], "linclass has no solver for it yet"),
    (["-s", "13", "pm"], "L2R_L1LOSS_SVR_DUAL"),
    (["-c", "abc", "pm"], "option -c expects a number, got 'abc'"),
    (["-c", "0", "pm"], "C <= 0"),
    (["-c", "nan", "pm"], "finite"),
    (["-e", "0", "pm"], "eps <= 0"),
    (["-c4", "pm"], "separate argument"),
    (["-x", "1", "pm"], "unknown option: -x"),
    (["-w", "2", "pm"], "-wLABEL WEIGHT"),
    (["-wa", "2", "pm"], "option -wa"),
    (["-w1", "-2", "pm"], "must be >= 0"),
    (["-v", "1", "pm"], "n must >= 2"),
    (["-s"], "needs a value"),
    (["-q"], "no training_set_file"),
    (["pm", "a", "b"], "too many file names"),
    (["-C", "-s", "5", "pm"], "-C (parameter search) is available for"),
    (["-R", "-s", "0", "pm"], "must specify -B 1 along with -R"),
    (["-R", "-B", "1", "-s", "2", "pm"], "always regularise the bias"),
    (["-R", "-B", "1", "-s", "3", "pm"], "-R option supported only"),
    (["missing_file"], "missing_file"),
    (["bad"], "bad"),
    (["one_class"], "one class"),
    (["-", ], "give the model_file"),
])
def test_train_errors(tmp_path, argv, words):
    (tmp_path / "pm").write_text(PM)
    (tmp_path / "bad").write_text("+1 1:1\n-1 x:2\n")
    (tmp_path / "one_class").write_text("1 1:1\n1 2:1\n")
    code, out, err = run("liblinear-train", *argv, cwd=tmp_path)
    assert words in one_line_error(code, out, err)
    assert sorted(os.listdir(tmp_path)) == ["bad", "one_class", "pm"]     # nothing written


@pytest.mark.parametrize("argv, words, status", [
    (["-b", "2", "pm", "pm.model", "o"], "-b expects 0 or 1", 2),
    (["pm", "pm.model"], "expected test_file model_file output_file", 2),
    (["-z", "pm", "pm.model", "o"], "unknown option: -z", 2),
    (["missing", "pm.model", "o"], "missing", 2),
    (["pm", "missing.model", "o"], "no model file missing.model", 3),
    (["pm", "pm", "o"], "not a readable linclass or LIBLINEAR model", 3),
    (["pm", "pm.model", "pm"], "is also an input", 2),
    (["pm", "pm.model", "pm.model"], "is also an input", 2),
])
def test_predict_errors(tmp_path, argv, words, status):
    (tmp_path / "pm").write_text(PM)
    assert run("liblinear-train", "-q", "pm", cwd=tmp_path)[0] == 0
    before = {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)}
    code, out, err = run("liblinear-predict", *argv, cwd=tmp_path)
    assert words in one_line_error(code, out, err, status)
    assert {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)} == before


def test_failing_runs_leave_files_byte_identical(tmp_path):
    (tmp_path / "pm").write_text(PM)
    (tmp_path / "bad").write_text("+1 1:1\n-1 2:1 1:3\n")       # indices must increase
    (tmp_path / "m.model").write_bytes(b"precious model bytes")
    (tmp_path / "out").write_bytes(b"precious predictions")
    before = {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)}
    for argv in (["liblinear-train", "bad", "m.model"],
                 ["liblinear-train", "-s", "12", "pm", "m.model"],
                 ["liblinear-train", "pm", "pm"],
                 ["liblinear-predict", "pm", "m.model", "out"],        # not a model
                 ["liblinear-predict", "bad", "m.model", "out"],
                 ["liblinear-predict", "pm", "m.model", "m.model"]):
        code, out, err = run(*argv, cwd=tmp_path)
        assert code in (2, 3) and "Traceback" not in err, (argv, err)
        assert {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)} == before
    # a good run replaces the model only once it is complete
    assert run("liblinear-train", "-q", "pm", "m.model", cwd=tmp_path)[0] == 0
    assert (tmp_path / "m.model").read_bytes()[:2] == b"PK"
    assert sorted(os.listdir(tmp_path)) == ["bad", "m.model", "out", "pm"]


def test_help(tmp_path):
    code, out, _ = run("liblinear-train", "--help")
    assert code == 0 and out.startswith("Usage: linclass liblinear-train [options]")
    code, out, _ = run("liblinear-predict", "-h")
    assert code == 0 and "-b probability_estimates" in out
    code, out, err = run("liblinear-predict", "-b", "1")
    assert "expected test_file model_file output_file" in one_line_error(code, out, err)
    with pytest.raises(cli.CLIError):          # --debug: the traceback, before or after
        cli.main(["--debug", "liblinear-predict", "-b", "1"])
    with pytest.raises(cli.CLIError):
        cli.main(["liblinear-train", "--debug", "-c", "abc", "file"])


@pytest.mark.parametrize("data, options", [("a9a", "-s 1"), ("a9a", "-s 5 -B 2"),
                                           ("four", "-s 0 -B 1"), ("four", "-s 4"),
                                           ("four", "-s 3 -c 4")])
def test_predict_reads_liblinear_text_models(real, peer, tmp_path, data, options):
    """A model saved by LIBLINEAR's own train: exactly LIBLINEAR's predictions."""
    y, x = peer.svm_read_problem(str(real / data))
    yt, xt = peer.svm_read_problem(str(real / (data + ".t")))
    model = peer.train(y, x, options + " -q")
    peer.save_model(str(tmp_path / "ll.model"), model)
    probability = options.startswith("-s 0")
    labels, (accuracy, _, _), prob = peer.predict(yt, xt, model,
                                                  "-q -b 1" if probability else "-q")
    code, out, err = run("liblinear-predict", "-b", "1" if probability else "0",
                         real / (data + ".t"), tmp_path / "ll.model", tmp_path / "out")
    assert code == 0, err
    assert out == "Accuracy = %g%% (%d/%d)\n" % (accuracy, round(accuracy * len(yt) / 100),
                                                 len(yt))
    lines = (tmp_path / "out").read_text().splitlines()
    if probability:
        assert lines.pop(0) == "labels " + " ".join("%d" % v for v in model.get_labels())
        ours = np.array([[float(v) for v in line.split()[1:]] for line in lines])
        assert np.abs(ours - np.array(prob)).max() < 1e-5
    assert [line.split()[0] for line in lines] == ["%.17g" % v for v in labels]


def test_damaged_liblinear_text_model(tmp_path):
    (tmp_path / "pm").write_text(PM)
    for name, text in (("short", "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\n"
                                 "bias -1\nw\n0.5\n0.25\n"),
                       ("svr", "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\n"
                               "bias -1\nw\n0.5\n0.25\n1\n"),
                       ("header", "solver_type L2R_LR\nnr_class two\nw\n")):
        (tmp_path / name).write_text(text)
        code, out, err = run("liblinear-predict", "pm", name, "out", cwd=tmp_path)
        one_line_error(code, out, err, 3)
        assert not (tmp_path / "out").exists()
    (tmp_path / "good").write_text("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\n"
                                   "bias -1\nw\n1 \n0.5 \n-1 \n")
    code, out, err = run("liblinear-predict", "-b", "1", "pm", "good", "-", cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[:2] == ["labels 1 -1", "1 0.7773 0.2227"]   # 1/(1+e^-1.25)


def test_parameter_search(tmp_path):
    (tmp_path / "pm").write_text(PM * 4)
    code, out, err = run("liblinear-train", "-C", "-s", "0", "-c", "0.25", "pm", "m",
                         cwd=tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Doing parameter search with 5-fold cross validation."
    assert lines[1] == "log2c=  -2.00\trate=100"
    assert lines[-2] == "log2c=  10.00\trate=100"
    assert lines[-1] == "Best C = 0.25  CV accuracy = 100%"
    assert not (tmp_path / "m").exists()                      # -C writes no model
    code, out, err = run("liblinear-train", "-q", "-C", "-v", "3", "pm", cwd=tmp_path)
    assert code == 0 and err == ""
    assert out.startswith("Doing parameter search with 3-fold cross validation.\nBest C = ")
    code, out, err = run("liblinear-train", "-C", "-v", "3", "pm", cwd=tmp_path)
    assert "Solver not specified. Using -s 2" in err
    code, out, err = run("liblinear-train", "-C", "-s", "1", "pm", cwd=tmp_path)
    assert "available for -s 0 and -s 2" in one_line_error(code, out, err)
