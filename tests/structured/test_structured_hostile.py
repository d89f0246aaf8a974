"""Issue #35 for the generic structured learners on sequences: label
sequences as tuples or numpy arrays work like lists; labels that are not
integer codes are refused (a float code was truncated, a string crashed in
numpy); NotFittedError before fit."""
import numpy as np
import pytest

import linclass

from linclass.exceptions import NotFittedError
from linclass.sequence.structure import SentenceBatch, SequenceStructure
from linclass.structured import StructuredPerceptron, StructuredSVM


def _sentences(seed=0, n_sent=10, n_feat=6, n_labels=3):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 5, size=n_sent)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n_tok = int(offsets[-1])
    indices = rng.integers(0, n_feat, size=n_tok)
    X = SentenceBatch(indices, np.ones(n_tok), np.arange(n_tok + 1), offsets)
    return X, X.split(indices % n_labels)


@pytest.mark.parametrize("learner", [
    lambda s: StructuredPerceptron(s, max_iter=5, random_state=0),
    lambda s: StructuredSVM(s, max_iter=30, random_state=0),
], ids=["perceptron", "svm"])
def test_label_sequences_as_tuples_or_arrays(learner):
    X, Y = _sentences()
    structure = SequenceStructure(6, 3)
    expected = learner(structure).fit(X, [list(y) for y in Y]).coef_
    for convert in (tuple, lambda y: np.asarray(y, dtype=np.int64),
                    lambda y: np.asarray(y, dtype=np.int32)):
        got = learner(structure).fit(X, [convert(y) for y in Y]).coef_
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bad", [lambda y: np.asarray(y) + 0.5,
                                 lambda y: np.array(["a"] * len(y))])
def test_label_codes_must_be_integers(bad):
    X, Y = _sentences()
    Y = list(Y)
    Y[3] = bad(Y[3])
    with pytest.raises(ValueError, match="example 3.*integer label codes"):
        StructuredPerceptron(SequenceStructure(6, 3), max_iter=2).fit(X, Y)


@pytest.mark.parametrize("cls", [StructuredPerceptron, StructuredSVM])
def test_not_fitted_error_before_fit(cls):
    X, _ = _sentences()
    with pytest.raises(NotFittedError):
        cls(SequenceStructure(6, 3)).predict(X)


def test_bcfw_with_a_c_whose_steps_overflow_raises():
    X, Y = _sentences()
    structure = SequenceStructure(6, 3)
    with pytest.raises(ValueError, match="C=1e\\+300.*overflow"):
        StructuredSVM(structure, C=1e300, method="bcfw", max_iter=5).fit(X, Y)
    from linclass.sequence import SequenceTagger
    sentences = [["the", "dog", "runs"], ["a", "cat", "sleeps"]] * 3
    with pytest.raises(ValueError, match="C=1e\\+300.*overflow"):
        SequenceTagger(trainer="ssvm", C=1e300).fit(sentences, [["D", "N", "V"]] * 6)
    # a tiny C takes no step either, and the weights 0 are then the answer
    tiny = StructuredSVM(structure, C=1e-300, method="bcfw", max_iter=5).fit(X, Y)
    assert np.all(np.abs(tiny.coef_) < 1e-250)
    fine = StructuredSVM(structure, C=1.0, method="bcfw", max_iter=50).fit(X, Y)
    assert np.any(fine.coef_ != 0)


@pytest.mark.parametrize("method", ["1-slack", "n-slack"])
def test_cutting_plane_at_huge_c_stops_on_the_qp_work_budget(method, monkeypatch):
    """Non-separable data at a huge C: each cutting-plane QP needs ever more
    steps; the fit stops when the budget of QP work is spent (a deterministic
    count, lowered here), with a ConvergenceWarning saying so, and a finite model."""
    from linclass.structured import learners
    monkeypatch.setattr(learners, "QP_WORK_BUDGET", 2 * 10 ** 6)
    rng = np.random.RandomState(0)
    X, y = rng.randn(40, 5), rng.randint(0, 3, 40)          # random labels
    model = linclass.MultiClassSVM(C=1e10, method=method)
    with pytest.warns(linclass.ConvergenceWarning, match="QP work budget"):
        model.fit(X, y)
    assert model.n_iter_ < model.max_iter
    assert np.isfinite(model.coef_).all() and model.history_[-1]["qp_budget_spent"]
    assert model.history_[-1]["objective"] is not None


@pytest.mark.parametrize("C", [1e14, 1e300])
def test_one_slack_whose_qp_loses_precision_raises(C):
    """With C * n near 1e14 the 1-slack dual weights (summing to C * n) cannot
    resolve the constraints' weights: the fit "converged" (violation 0) with a
    primal far above the dual to weights predicting one label everywhere."""
    from linclass.graph.structure import Graph, GraphStructure
    rng = np.random.default_rng(0)
    F = rng.random((8, 3))
    F[:, 0] += np.array([0, 1] * 4)
    g = Graph(F, np.array([[0, 1], [1, 2], [2, 3], [4, 5], [5, 6], [6, 7]]))
    labels = np.array([0, 1] * 4)
    fine = StructuredSVM(GraphStructure(3, 2), C=1e6, max_iter=100).fit([g], [labels])
    np.testing.assert_array_equal(fine.predict([g])[0], labels)
    with pytest.raises(ValueError, match="lost precision"):
        StructuredSVM(GraphStructure(3, 2), C=C, max_iter=100).fit([g], [labels])
