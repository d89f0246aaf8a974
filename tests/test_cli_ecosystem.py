"""The linclass command as LIBLINEAR / CRFsuite / conlleval / evalb users drive it:
run as a subprocess from outside the source tree (as an installed command)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import linclass
from linclass.cli import main
from linclass.datasets import dump_svmlight_file


def run(cwd, *args):
    env = dict(os.environ)
    # the package under test, not a checkout in cwd
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(linclass.__file__))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "linclass"] + [str(a) for a in args],
                          cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    """Integer-labelled svmlight files; the test file uses 3 features more."""
    d = tmp_path_factory.mktemp("cli_flat")
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(120, 5)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > X[:, 2] + X[:, 3], 1, -1)
    dump_svmlight_file(X, y, d / "train.svm", zero_based=False)
    X_test = np.hstack([X[:40], rng.poisson(1.0, size=(40, 3))])
    dump_svmlight_file(X_test, y[:40], d / "test.svm", zero_based=False)
    out = run(d, "train", "--model", "logistic", "train.svm", "-o", "m.npz")
    assert out.returncode == 0, out.stderr
    return d, X, y


def test_unknown_features_ignored_with_one_warning_and_labels_as_read(flat):
    d, X, y = flat
    out = run(d, "predict", "m.npz", "test.svm")
    assert out.returncode == 0, out.stderr
    warning = out.stderr.strip().splitlines()
    assert len(warning) == 1 and "warning" in warning[0] and "ignored" in warning[0]
    assert "3 feature(s)" in warning[0]
    labels = out.stdout.split()
    assert set(labels) <= {"1", "-1"}                  # as written, not "-1.0"
    # reference: the same model on the test rows without the unknown columns
    model = linclass.load(d / "m.npz")
    np.testing.assert_array_equal(np.array(labels, dtype=float), model.predict(X[:40]))


def test_proba_decision_and_with_gold(flat):
    d, X, y = flat
    model = linclass.load(d / "m.npz")
    out = run(d, "predict", "--proba", "m.npz", "test.svm")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "labels -1 1"                   # LIBLINEAR's -b 1 header
    rows = [line.split() for line in lines[1:]]
    proba = np.array([r[1:] for r in rows], dtype=float)
    np.testing.assert_allclose(proba, model.predict_proba(X[:40]), atol=1e-6)
    assert [r[0] for r in rows] == ["%d" % v for v in model.predict(X[:40])]
    out = run(d, "predict", "--decision", "m.npz", "test.svm")
    lines = out.stdout.splitlines()
    assert lines[0] == "decision 1"
    scores = np.array([line.split()[1] for line in lines[1:]], dtype=float)
    np.testing.assert_allclose(scores, model.decision_function(X[:40]), rtol=1e-5, atol=1e-6)
    out = run(d, "predict", "--with-gold", "m.npz", "test.svm")
    pairs = [line.split() for line in out.stdout.splitlines()]
    assert [p[0] for p in pairs] == ["%d" % v for v in y[:40]]


def test_exit_codes(flat, tmp_path, capsys):
    """0 ok, 1 usage, 2 data, 3 model file (in-process: main returns the status)."""
    d, X, y = flat
    m, test = str(d / "m.npz"), str(d / "test.svm")
    # 1: usage
    with pytest.raises(SystemExit) as exc:
        main(["predict", "--nope", m, test])
    assert exc.value.code == 2
    assert main(["train", "--model", "nope", str(d / "train.svm"), "-o", "x.npz"]) == 2
    assert main(["train", "--model", "logistic", str(d / "train.svm")]) == 2     # no -o
    assert main(["predict", "--proba", "--decision", m, test]) == 2
    svm = str(tmp_path / "svm.npz")
    assert main(["train", "--model", "linear-svc", str(d / "train.svm"), "-o", svm]) == 0
    capsys.readouterr()
    assert main(["predict", "--proba", svm, test]) == 2
    assert "probabilities" in capsys.readouterr().err
    # 2: data
    assert main(["predict", m, str(d / "missing.svm")]) == 2
    assert capsys.readouterr().err.startswith("linclass predict: error:")
    (tmp_path / "bad.svm").write_text("1 1:0.5\n-1 2:abc\n")
    assert main(["predict", m, str(tmp_path / "bad.svm")]) == 2
    assert "bad.svm" in capsys.readouterr().err
    # 3: model file
    assert main(["predict", str(d / "missing.npz"), test]) == 3
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    assert main(["evaluate", str(tmp_path / "junk.npz"), test]) == 3
    assert "junk.npz" in capsys.readouterr().err
    linclass.LogisticRegression().fit(X, y).save(tmp_path / "api.npz")
    assert main(["predict", str(tmp_path / "api.npz"), test]) == 3
    assert "not saved by 'linclass train'" in capsys.readouterr().err


def test_cross_validation_leave_one_out_matches_the_api(flat, tmp_path, capsys):
    d, X, y = flat
    X, y = X[:30], y[:30]
    dump_svmlight_file(X, y, tmp_path / "small.svm", zero_based=False)
    capsys.readouterr()
    assert main(["train", "--model", "logistic", "-p", "C=0.5", "-v", "30",
                 str(tmp_path / "small.svm")]) == 0
    printed = capsys.readouterr().out
    # leave-one-out does not depend on how folds are drawn: recompute it
    correct = 0
    for i in range(30):
        keep = np.arange(30) != i
        model = linclass.LogisticRegression(C=0.5).fit(X[keep], y[keep])
        correct += int(model.predict(X[i:i + 1])[0] == y[i])
    assert printed.strip() == "Cross Validation Accuracy = %g%%" % (100.0 * correct / 30)
    assert main(["train", "--model", "logistic", "-v", "1", str(tmp_path / "small.svm")]) == 2
    assert main(["train", "--model", "ranksvm", "-v", "3", str(tmp_path / "small.svm")]) in (1, 2)


@pytest.fixture(scope="module")
def conll(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_conll")
    sents = [[("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"),
              ("deficit", "NN", "I-NP"), (".", ".", "O")],
             [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("sees", "VBZ", "B-VP"),
              ("a", "DT", "B-NP"), ("cat", "NN", "I-NP"), (".", ".", "O")]] * 6
    text = "".join("\n".join(" ".join(r) for r in s) + "\n\n" for s in sents)
    (d / "train.conll").write_text(text)
    test = [[("A", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("reckons", "VBZ", "B-VP"),
             (".", ".", "O")], [("He", "PRP", "B-NP"), ("sees", "VBZ", "B-VP"),
                                ("deficit", "NN", "B-NP"), (".", ".", "O")]]
    (d / "test.conll").write_text("".join("\n".join(" ".join(r) for r in s) + "\n\n"
                                          for s in test))
    out = run(d, "train", "--model", "tagger", "-p", "features=chunking", "-p", "max_iter=3",
              "train.conll", "-o", "chunker.npz")
    assert out.returncode == 0, out.stderr
    return d, test


def test_with_gold_then_evaluate_conll_is_conlleval(conll):
    from linclass.metrics import conlleval_report
    d, test = conll
    out = run(d, "predict", "--with-gold", "chunker.npz", "test.conll", "-o", "both.conll")
    assert out.returncode == 0, out.stderr
    lines = [line.split() for line in (d / "both.conll").read_text().splitlines()]
    rows = [r for r in lines if r]
    assert [r[:3] for r in rows] == [list(t) for s in test for t in s]   # words, POS, gold
    model = linclass.load(d / "chunker.npz")
    pred = model.predict([[t[:2] for t in s] for s in test])
    assert [r[3] for r in rows] == [p for s in pred for p in s]
    out = run(d, "evaluate", "--conll", "both.conll")
    assert out.returncode == 0, out.stderr
    assert out.stdout == conlleval_report([[t[2] for t in s] for s in test], pred)
    # the model-based evaluation prints the same table
    out2 = run(d, "evaluate", "chunker.npz", "test.conll")
    assert out.stdout in out2.stdout
    # usage: --proba on a sequence model; --conll with a model
    assert main(["predict", "--proba", str(d / "chunker.npz"), str(d / "test.conll")]) == 2
    assert main(["evaluate", "--conll", str(d / "both.conll"), str(d / "chunker.npz")]) == 2


def test_verbose_progress_only_when_asked(conll):
    d, _ = conll
    quiet = run(d, "predict", "chunker.npz", "test.conll")
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = run(d, "predict", "--verbose", "chunker.npz", "test.conll")
    assert loud.returncode == 0 and "linclass predict: predicted test.conll" in loud.stderr
    assert loud.stdout == quiet.stdout


def test_parse_and_evalb(tmp_path):
    from linclass.datasets import read_trees
    from linclass.demo.parsing import make_toy_treebank
    from linclass.metrics.parsing import parseval
    trees = make_toy_treebank(80, max_words=7, random_state=5)
    (tmp_path / "train.mrg").write_text("\n".join(str(t) for t in trees[:64]) + "\n")
    (tmp_path / "test.mrg").write_text("\n".join(str(t) for t in trees[64:]) + "\n")
    (tmp_path / "test.txt").write_text("\n".join(" ".join(t.leaves()) for t in trees[64:]))
    out = run(tmp_path, "train", "--model", "parser", "-p", "max_iter=2", "-p", "hash_bits=8",
              "train.mrg", "-o", "parser.npz")
    assert out.returncode == 0, out.stderr
    out = run(tmp_path, "parse", "parser.npz", "test.txt", "-o", "parsed.mrg")
    assert out.returncode == 0, out.stderr
    parsed = read_trees(tmp_path / "parsed.mrg")
    model = linclass.load(tmp_path / "parser.npz")
    expected = model.predict([t.leaves() for t in trees[64:]])
    assert [str(p) for p in parsed] == [str(e) for e in expected]
    out = run(tmp_path, "evaluate", "--evalb", "parser.npz", "test.mrg")
    assert out.returncode == 0, out.stderr
    res = parseval(trees[64:], expected)
    summary = dict(line.split(" = ") for line in out.stdout.splitlines() if " = " in line)
    summary = {k.strip(): float(v) for k, v in summary.items()}
    assert summary["Number of sentence"] == 16
    assert summary["Bracketing Recall"] == pytest.approx(100 * res["recall"], abs=0.006)
    assert summary["Bracketing Precision"] == pytest.approx(100 * res["precision"], abs=0.006)
    assert summary["Bracketing FMeasure"] == pytest.approx(100 * res["f1"], abs=0.006)
    assert summary["Tagging accuracy"] == pytest.approx(100 * res["tagging_accuracy"],
                                                       abs=0.006)
    per_sentence = [line for line in out.stdout.splitlines()
                    if line[:4].strip().isdigit()]
    assert len(per_sentence) == 16
    assert main(["parse", str(tmp_path / "missing.npz"), str(tmp_path / "test.txt")]) == 3


def test_cross_validation_of_a_sequence_model(conll, capsys):
    d, _ = conll
    capsys.readouterr()
    assert main(["train", "--model", "tagger", "-p", "features=chunking", "-p", "max_iter=2",
                 "-v", "3", "--verbose", str(d / "train.conll")]) == 0
    captured = capsys.readouterr()
    # the training sentences repeat, so every held-out sentence was seen in training
    # (--verbose also turns on the model's own per-epoch lines)
    assert captured.out.strip().splitlines()[-1] == "Cross Validation Token Accuracy = 100%"
    assert captured.err.count("linclass train: fold") == 3
