"""The linclass command: train / predict / evaluate round trip, errors, help."""
import gzip
import subprocess
import sys

import pytest

from linclass.cli import main


@pytest.fixture(scope="module")
def conll_files(tmp_path_factory):
    """A tiny CoNLL-2000-like corpus (word POS chunk) written by the test."""
    d = tmp_path_factory.mktemp("cli")
    sents = [
        [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"),
         ("deficit", "NN", "I-NP"), (".", ".", "O")],
        [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("sees", "VBZ", "B-VP"),
         ("a", "DT", "B-NP"), ("cat", "NN", "I-NP"), (".", ".", "O")],
    ] * 10
    text = "".join("\n".join(" ".join(r) for r in s) + "\n\n" for s in sents)
    train = d / "train.txt.gz"
    with gzip.open(train, "wt") as fh:
        fh.write(text)
    test = d / "test.txt"
    test.write_text(text)
    return train, test


def test_train_predict_evaluate_sequence(conll_files, tmp_path, capsys):
    train, test = conll_files
    model = tmp_path / "chunker.npz"
    assert main(["train", "--model", "tagger", "-p", "features='chunking'", "-p", "max_iter=5",
                 str(train), "-o", str(model)]) == 0
    assert "trained tagger" in capsys.readouterr().out
    out = tmp_path / "pred.conll"
    assert main(["predict", str(model), str(test), "-o", str(out)]) == 0
    assert out.read_text() == test.read_text()       # learnt perfectly; same layout
    assert main(["evaluate", str(model), str(test)]) == 0
    report = capsys.readouterr().out
    assert "token accuracy: 1.0000" in report
    assert "FB1: 100.00" in report


def test_bad_model_name_and_param(conll_files, tmp_path, capsys):
    train, _ = conll_files
    assert main(["train", "--model", "nope", str(train), "-o", str(tmp_path / "m")]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err
    assert main(["train", "--model", "tagger", "-p", "oops", str(train),
                 "-o", str(tmp_path / "m")]) == 2
    assert "name=value" in capsys.readouterr().err
    assert main(["train", "--model", "tagger", "-p", "nope=1", str(train),
                 "-o", str(tmp_path / "m")]) == 2
    assert "unknown parameter(s) nope" in capsys.readouterr().err


def test_malformed_file_reports_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("a DT B-NP\nb NN\n")
    assert main(["train", "--model", "tagger", str(bad), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "bad.conll:2" in err


def test_help_for_every_command():
    for cmd in ("demo", "train", "predict", "evaluate", "models"):
        r = subprocess.run([sys.executable, "-m", "linclass", cmd, "--help"],
                           capture_output=True, text=True)
        assert r.returncode == 0 and "usage: linclass " + cmd in r.stdout
    r = subprocess.run([sys.executable, "-m", "linclass", "models"], capture_output=True,
                       text=True)
    assert "tagger" in r.stdout


def test_ranking_train_evaluate(tmp_path, capsys):
    import numpy as np
    from linclass.datasets import dump_svmlight_file
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    qid = np.repeat(np.arange(6), 10)
    y = np.clip(np.round(X @ [1.0, -0.5, 0.0, 0.2] + 1.5), 0, 3)
    path = tmp_path / "rank.svm"
    dump_svmlight_file(X, y, path, query_id=qid)
    model = tmp_path / "rank.npz"
    assert main(["train", "--model", "ranksvm", str(path), "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), str(path)]) == 0
    assert "ndcg" in capsys.readouterr().out.lower()
    assert main(["predict", str(model), str(path)]) == 0
    scores = np.array(capsys.readouterr().out.split(), dtype=float)
    assert scores.shape == (60,)
    no_qid = tmp_path / "plain.svm"
    dump_svmlight_file(X, y, no_qid)
    assert main(["train", "--model", "ranksvm", str(no_qid), "-o", str(model)]) == 2
    assert "qid" in capsys.readouterr().err


@pytest.mark.parametrize("model", ["linear-svc", "perceptron", "logistic", "multinomial-nb"])
def test_flat_train_predict_evaluate(model, tmp_path, capsys):
    import numpy as np
    from linclass.datasets import dump_svmlight_file
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, size=(200, 6)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > X[:, 2] + X[:, 3], 1, -1)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, path)
    out = tmp_path / "m.npz"
    assert main(["train", "--model", model, str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["predict", str(out), str(path)]) == 0
    pred = np.array(capsys.readouterr().out.split(), dtype=float)
    assert (pred == y).mean() > 0.8
    assert main(["evaluate", str(out), str(path)]) == 0
    assert "accuracy:" in capsys.readouterr().out


def test_evaluate_plot_roc(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import numpy as np
    from linclass.datasets import dump_svmlight_file
    rng = np.random.default_rng(2)
    X = rng.standard_normal((100, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, path)
    out = tmp_path / "m.npz"
    assert main(["train", "--model", "linear-svc", str(path), "-o", str(out)]) == 0
    png = tmp_path / "roc.png"
    assert main(["evaluate", str(out), str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "ROC curve written" in capsys.readouterr().out
    for kind, what in (("pr", "precision-recall curve"), ("confusion", "confusion matrix")):
        png = tmp_path / ("%s.png" % kind)
        assert main(["evaluate", str(out), str(path), "--plot", str(png),
                     "--plot-kind", kind]) == 0
        assert png.read_bytes()[:4] == b"\x89PNG"
        assert "%s written" % what in capsys.readouterr().out


def test_evaluate_plot_confusion_matrix_of_a_multiclass_model(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import numpy as np
    from linclass.datasets import dump_svmlight_file
    from linclass.metrics import confusion_matrix
    rng = np.random.default_rng(3)
    y = rng.integers(1, 4, 90)
    X = rng.standard_normal((90, 3)) + np.eye(3)[y - 1] * 2.0
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, path)
    out = tmp_path / "m.npz"
    assert main(["train", "--model", "linear-svc", str(path), "-o", str(out)]) == 0
    png = tmp_path / "cm.png"
    assert main(["evaluate", str(out), str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "confusion matrix written" in capsys.readouterr().out
    # the drawn matrix is the confusion matrix of the model's predictions
    from linclass.metrics.plotting import plot_confusion_matrix
    pred = linclass_load(out).predict(X)
    drawn = plot_confusion_matrix(y, pred).axes[0].get_images()[0].get_array()
    np.testing.assert_array_equal(np.asarray(drawn), confusion_matrix(y, pred))
    assert main(["evaluate", str(out), str(path), "--plot", str(png), "--plot-kind",
                 "roc"]) == 2
    assert "binary model" in capsys.readouterr().err


def linclass_load(path):
    import linclass
    return linclass.load(path)


def test_parser_train_predict_evaluate(tmp_path, capsys):
    from linclass.datasets import read_trees
    from linclass.demo.parsing import make_toy_treebank
    trees = make_toy_treebank(120, max_words=8, random_state=4)
    train = tmp_path / "train.mrg"
    train.write_text("\n".join(str(t) for t in trees[:100]) + "\n")
    test = tmp_path / "test.mrg"
    test.write_text("\n".join(str(t) for t in trees[100:]) + "\n")
    model = tmp_path / "parser.npz"
    assert main(["train", "--model", "parser", "-p", "max_iter=3", "-p", "hash_bits=8",
                 str(train), "-o", str(model)]) == 0
    assert "trained parser" in capsys.readouterr().out
    assert main(["evaluate", str(model), str(test)]) == 0
    report = capsys.readouterr().out
    assert "PARSEVAL" in report and "F1" in report
    text = tmp_path / "test.txt"
    text.write_text("\n".join(" ".join(t.leaves()) for t in trees[100:]) + "\n")
    out = tmp_path / "pred.mrg"
    assert main(["predict", str(model), str(text), "-o", str(out)]) == 0
    predicted = read_trees(out)
    assert len(predicted) == 20
    assert [p.leaves() for p in predicted] == [t.leaves() for t in trees[100:]]
