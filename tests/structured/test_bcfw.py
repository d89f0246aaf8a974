"""Block-coordinate Frank--Wolfe structural SVM: against the full QP (scipy SLSQP),
against the cutting-plane methods, fused passes against the generic Python pass,
and the refusal of unavailable rescalings before any decoding."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from linclass.exceptions import ConvergenceWarning
from linclass.joint.svm import MultiClassSVM
from linclass.sequence.structure import SentenceBatch, SequenceStructure
from linclass.structured import (
    MultiClassStructure,
    Structure,
    StructuredSVM,
    TaxonomyStructure,
)
from linclass.structured.learners import supports_slack_rescaling

from .test_structured_learners import (
    GenericView,
    TinyMultiLabel,
    blobs,
    full_qp_primal,
    primal,
)


def random_sentences(n_sent, n_feat, n_labels, seed, max_len=6):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_len + 1, size=n_sent)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n_tok = int(offsets[-1])
    rows = [np.sort(rng.choice(n_feat, size=3, replace=False)) for _ in range(n_tok)]
    indptr = np.arange(n_tok + 1) * 3
    X = SentenceBatch(np.concatenate(rows), rng.uniform(0.5, 1.5, 3 * n_tok), indptr, offsets)
    labels = np.array([r[0] % n_labels for r in rows])       # learnable from feature 0
    noise = rng.random(n_tok) < 0.2
    labels[noise] = rng.integers(0, n_labels, noise.sum())
    return X, X.split(labels)


@pytest.mark.parametrize("average", [False, True])
def test_bcfw_equals_full_qp_multiclass(average):
    X, Y = blobs(8, 2, 3, seed=1)
    s = MultiClassStructure(2, 3)
    w_ref, obj_ref = full_qp_primal(s, list(X), list(Y), range(3), C=0.7)
    # the averaged iterate converges as O(1/k): a looser tolerance
    tol = 1e-3 if average else 1e-5
    for structure in (s, GenericView(s)):       # fused Cython pass and generic pass
        m = StructuredSVM(structure, C=0.7, method="bcfw", tol=tol, average=average,
                          max_iter=20000, random_state=0).fit(X, Y)
        # a relative duality gap <= tol bounds the distance to the optimum
        assert obj_ref * (1 - 1e-7) <= m.objective_ <= obj_ref * (1 + tol) + 1e-9
        np.testing.assert_allclose(m.coef_, w_ref, atol=2e-2)
        assert 0 <= m.objective_ - m.dual_objective_ <= tol * m.objective_ + 1e-12
        assert primal(s, m.coef_, list(X), list(Y), range(3), 0.7) == pytest.approx(
            m.objective_)


@pytest.mark.parametrize("rescaling", ["margin", "slack"])
def test_bcfw_equals_full_qp_generic_structure(rescaling):
    rng = np.random.default_rng(3)
    s = TinyMultiLabel(3)
    X = list(rng.normal(size=(7, 3)))
    Y = [tuple(int(v) for v in rng.integers(0, 2, 2)) for _ in range(7)]
    _, obj_ref = full_qp_primal(s, X, Y, s.outputs, C=0.5, rescaling=rescaling)
    tol = 1e-3
    m = StructuredSVM(s, C=0.5, method="bcfw", rescaling=rescaling, tol=tol,
                      max_iter=20000, random_state=0).fit(X, Y)
    assert obj_ref * (1 - 1e-7) <= m.objective_ <= obj_ref * (1 + tol) + 1e-9


def test_three_methods_reach_same_objective_taxonomy_and_loss_matrix():
    X, Y = blobs(30, 4, 4, seed=5)
    s = TaxonomyStructure(4, [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y", "z")])
    L = np.array([[0, 1, 2, 2], [1, 0, 2, 2], [3, 3, 0, 1], [3, 3, 1, 0]], dtype=float)
    one_hot = MultiClassStructure(4, 4, loss_matrix=L)
    for structure in (s, one_hot):
        objs = [StructuredSVM(structure, C=0.3, method=meth, tol=1e-3 if meth == "bcfw"
                              else 1e-7, max_iter=5000, random_state=0).fit(X, Y).objective_
                for meth in ("bcfw", "1-slack", "n-slack")]
        np.testing.assert_allclose(objs[2], objs[1], rtol=1e-5)
        assert objs[1] * (1 - 1e-5) <= objs[0] <= objs[1] * (1 + 1e-3)


@pytest.mark.parametrize("average", [False, True])
def test_bcfw_taxonomy_fused_pass_equals_full_qp(average):
    X, Y = blobs(10, 3, 4, seed=4)
    s = TaxonomyStructure(3, [("a", "x"), ("a", "y"), ("b",), ("c", "d", "e")])
    assert s.bcfw_state(sp.csr_matrix(X), Y, 0.6, average) is not None   # fused pass
    w_ref, obj_ref = full_qp_primal(s, list(X), list(Y), range(4), C=0.6)
    tol = 1e-3 if average else 1e-5
    # (the generic Python pass converges too slowly here for a fast test; the
    # full QP is the reference)
    m = StructuredSVM(s, C=0.6, method="bcfw", tol=tol, average=average,
                      max_iter=20000, random_state=0).fit(X, Y)
    assert obj_ref * (1 - 1e-7) <= m.objective_ <= obj_ref * (1 + tol) + 1e-9
    np.testing.assert_allclose(m.coef_, w_ref, atol=2e-2)
    assert 0 <= m.objective_ - m.dual_objective_ <= tol * m.objective_ + 1e-12
    assert primal(s, m.coef_, list(X), list(Y), range(4), 0.6) == pytest.approx(m.objective_)


def test_bcfw_sparse_equals_dense_and_multiclass_svm_objective():
    X, y = blobs(80, 5, 4, seed=2)
    dense = MultiClassSVM(C=0.5, method="bcfw", tol=1e-3).fit(X, y)
    sparse = MultiClassSVM(C=0.5, method="bcfw", tol=1e-3).fit(sp.csr_matrix(X), y)
    ref = MultiClassSVM(C=0.5, method="n-slack", tol=1e-7).fit(X, y)
    for m in (dense, sparse):
        assert ref.objective_ * (1 - 1e-6) <= m.objective_ <= ref.objective_ * (1 + 1e-3)
    assert (dense.predict(X) == ref.predict(X)).mean() > 0.95


@pytest.mark.parametrize("average", [False, True])
def test_bcfw_sequences_fused_equals_generic_and_cutting_plane(average):
    X, Y = random_sentences(12, 12, 3, seed=4)
    s = SequenceStructure(12, 3)
    tol = 1e-2 if average else 1e-3
    fused = StructuredSVM(s, C=0.2, method="bcfw", tol=tol, max_iter=20000, average=average,
                          random_state=1).fit(X, Y)
    generic = StructuredSVM(GenericView(s), C=0.2, method="bcfw", tol=tol, max_iter=20000,
                            average=average,
                            random_state=1).fit([X[i] for i in range(len(X))], Y)
    one_slack = StructuredSVM(s, C=0.2, method="1-slack", tol=1e-7).fit(X, Y)
    best = one_slack.objective_
    for m in (fused, generic):
        assert best * (1 - 1e-5) <= m.objective_ <= best * (1 + tol)


def test_bcfw_sequences_full_qp_tiny():
    X, Y = random_sentences(4, 4, 2, seed=0, max_len=3)
    s = SequenceStructure(4, 2)
    sents = [X[i] for i in range(len(X))]
    # the full QP by enumerating every label sequence of every sentence
    rows, rhs, owner = [], [], []
    for i, x in enumerate(sents):
        gold = np.zeros(s.n_features)
        idx, val = s.joint_feature(x, Y[i])
        np.add.at(gold, idx, val)
        for y in itertools.product(range(2), repeat=len(x)):
            phi = np.zeros(s.n_features)
            idx, val = s.joint_feature(x, np.array(y))
            np.add.at(phi, idx, val)
            rows.append(gold - phi)
            rhs.append(s.loss(Y[i], np.array(y)))
            owner.append(i)
    A, b, owner = np.array(rows), np.array(rhs), np.array(owner)
    d, n, C = s.n_features, len(sents), 0.4
    res = minimize(lambda z: 0.5 * z[:d] @ z[:d] + C * z[d:].sum(),
                   np.concatenate([np.zeros(d), np.full(n, b.max())]),
                   jac=lambda z: np.concatenate([z[:d], np.full(n, C)]),
                   constraints=[{"type": "ineq", "fun": lambda z: A @ z[:d] - b + z[d:][owner],
                                 "jac": lambda z: np.hstack([A, np.eye(n)[owner]])},
                                {"type": "ineq", "fun": lambda z: z[d:],
                                 "jac": lambda z: np.hstack([np.zeros((n, d)), np.eye(n)])}],
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
    assert res.success
    m = StructuredSVM(s, C=C, method="bcfw", tol=1e-3, max_iter=50000, random_state=0).fit(X, Y)
    assert res.fun * (1 - 1e-7) <= m.objective_ <= res.fun * (1 + 1e-3) + 1e-9


def test_bcfw_history_gap_and_warning():
    X, y = blobs(40, 3, 3, seed=0)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        StructuredSVM(GenericView(MultiClassStructure(3, 3)), method="bcfw", max_iter=1,
                      tol=1e-12).fit(X, y)
    m = StructuredSVM(MultiClassStructure(3, 3), method="bcfw", tol=1e-3).fit(X, y)
    checked = [r for r in m.history_ if r["gap"] is not None]
    assert checked[0]["iteration"] == 0
    assert all(r["gap"] >= -1e-9 for r in checked)
    assert checked[-1]["gap"] <= 1e-3 * checked[-1]["objective"]


# -- rescalings: train or refuse before any decoding ------------------------------------
class NoDecodeYet(SequenceStructure):
    """Fails loudly if the learner decodes anything."""

    def loss_augmented_decode(self, w, x, y):
        raise AssertionError("decoded before refusing")

    batch_loss_augmented_decode = loss_augmented_decode


def _task_structures():
    # no exact slack-rescaled argmax: loopy graphs (alignments and grammars have
    # one: tests/alignment/test_slack_rescaled.py, tests/parsing/test_parsing.py)
    from linclass.graph.structure import GraphStructure
    return [GraphStructure]


@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_slack_rescaling_refused_at_fit_start(method):
    s = NoDecodeYet(4, 2, order=2)          # second order: no exact slack-rescaled argmax
    X, Y = random_sentences(3, 4, 2, seed=0)
    with pytest.raises(ValueError, match="rescaling='slack' is not available for NoDecodeYet"):
        StructuredSVM(s, rescaling="slack", method=method).fit(X, Y)
    for cls in _task_structures():
        assert not supports_slack_rescaling(cls.__new__(cls)), cls
    from linclass.parsing.grammar import GrammarStructure
    assert supports_slack_rescaling(GrammarStructure.__new__(GrammarStructure))
    assert supports_slack_rescaling(MultiClassStructure(2, 2))
    assert supports_slack_rescaling(TinyMultiLabel(2))
    assert supports_slack_rescaling(SequenceStructure(4, 2))
    assert supports_slack_rescaling(SequenceStructure(4, 2, loss="zero_one"))
    assert not supports_slack_rescaling(SequenceStructure(4, 2, order=2))
    assert not supports_slack_rescaling(SequenceStructure(4, 2, label_cost=[[0, 1], [2, 0]]))


@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
@pytest.mark.parametrize("rescaling", ["margin", "slack"])
def test_every_rescaling_trains_multiclass_and_taxonomy(method, rescaling):
    X, Y = blobs(40, 3, 3, seed=7)
    for s in (MultiClassStructure(3, 3), TaxonomyStructure(3, [("a",), ("b", "c"), ("b", "d")])):
        m = StructuredSVM(s, method=method, rescaling=rescaling, tol=1e-2, max_iter=3000,
                          random_state=0).fit(X, Y)
        assert m.score(X, Y) > 0.6


def test_bcfw_detects_wrong_decoder_and_nonfinite_features():
    class SloppyDecoder(TinyMultiLabel):
        def loss_augmented_decode(self, w, x, y):
            return (1 - y[0], y[1]) if np.any(w) else (1 - y[0], 1 - y[1])

    rng = np.random.default_rng(0)
    Xm = list(rng.normal(size=(6, 2)))
    Ym = [(int(a), int(b)) for a, b in rng.integers(0, 2, (6, 2))]
    with pytest.raises(ValueError, match="not an exact argmax"):
        StructuredSVM(SloppyDecoder(2), C=10.0, method="bcfw").fit(Xm, Ym)

    class NaNFeatures(TinyMultiLabel):
        def joint_feature(self, x, y):
            idx, val = super().joint_feature(x, y)
            return idx, val * (np.nan if y == (0, 0) else 1.0)

    Ym = [(0, 0)] * 6
    with pytest.raises(ValueError, match="NaN or infinite"):
        StructuredSVM(NaNFeatures(2), method="bcfw").fit(Xm, Ym)
    X = sp.csr_matrix(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError):
        StructuredSVM(MultiClassStructure(2, 2), method="bcfw").fit(X, [0, 1])

    class EmptyOutputs(Structure):
        n_features = 2

        def joint_feature(self, x, y):
            return np.zeros(0, np.int64), np.zeros(0)

        def decode(self, w, x):
            return 0

        def loss_augmented_decode(self, w, x, y):
            return 0

        def loss(self, y, y_hat):
            return 0.0

    with pytest.raises(ValueError, match="empty"):
        StructuredSVM(EmptyOutputs(), method="bcfw").fit([], [])
