"""Over-relaxed dual coordinate descent (``relax`` of ``_linear_svm.dual_cd_svc``
and ``ovr_dual_cd_svc``; projected SOR, Mangasarian & Musicant 1999): every
relax in (0, 2) reaches the optimum of plain coordinate descent and LIBLINEAR's;
the fused one-vs-rest run keeps its per-class bits with relax != 1; the
default LinearSVC uses it for the squared hinge only, and takes fewer passes to
the same objective there; values outside (0, 2) raise."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _linear_svm
from linclass._validation import kernel_rows
from linclass.linear import svm as svm_module
from linclass.linear.svm import LinearSVC, svm_dual_objective, svm_primal_objective

LOSS = {"hinge": 1, "squared_hinge": 2}


def _text_like(n=400, d=900, k=6, seed=0):
    """Sparse non-negative rows with a few class-specific and many shared terms,
    unit norm (tf-idf-like)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    rows, cols, vals = [], [], []
    for i in range(n):
        own = rng.choice(d // k, 8, replace=False) + (d // k) * y[i]
        shared = rng.choice(d, 25, replace=False)
        c = np.unique(np.concatenate([own, shared]))
        rows.extend([i] * len(c))
        cols.extend(c)
        vals.extend(rng.random(len(c)) + 0.1)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1.0 / norms) @ X), y


def _binary(X, ysign, loss, relax, C=1.0, tol=1e-9, max_iter=50000, shrinking=True, seed=3,
            **kernel_kw):
    """`dual_cd_svc` from zero on one binary problem (``kernel_kw``: its other
    arguments); returns (w, alpha, passes, violation)."""
    n, d = X.shape
    w, alpha = np.zeros(d + 1), np.zeros(n)
    n_iter, viol = _linear_svm.dual_cd_svc(
        **kernel_rows(X), n_samples=n, n_features=d, ysign=ysign, cost=np.full(n, C),
        loss=LOSS[loss], bias=1.0, w=w, alpha=alpha, tol=tol, max_iter=max_iter,
        shrinking=shrinking, seed=seed, relax=relax, **kernel_kw)
    return w, alpha, n_iter, viol


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("relax", [0.6, 1.2, 1.5, 1.8])
@pytest.mark.parametrize("shrinking", [True, False])
def test_relaxed_steps_reach_the_optimum(loss, relax, shrinking):
    X, y = _text_like(seed=1)
    ysign = np.where(y == 2, 1.0, -1.0)
    cost = np.ones(len(y))
    w1, a1, _, _ = _binary(X, ysign, loss, 1.0, shrinking=shrinking)
    w, a, n_iter, viol = _binary(X, ysign, loss, relax, shrinking=shrinking)
    assert viol <= 1e-9 and n_iter < 50000
    # w is sum_i alpha_i s_i [x_i, 1] and the dual optimum is plain CD's
    np.testing.assert_allclose(w[:-1], X.T @ (a * ysign), atol=1e-10)
    ref = svm_dual_objective(w1, a1, cost, loss)
    assert abs(svm_dual_objective(w, a, cost, loss) - ref) <= 1e-10 * abs(ref)
    np.testing.assert_allclose(w, w1, atol=1e-5)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_relaxed_matches_liblinear(loss):
    """LIBLINEAR (-s 1 / -s 3 through scikit-learn) at a tight tol: the same
    primal objective and weights."""
    skl = pytest.importorskip("sklearn.svm")
    X, y = _text_like(seed=2)
    ysign = np.where(y == 0, 1.0, -1.0)
    w, _, _, _ = _binary(X, ysign, loss, 1.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = skl.LinearSVC(loss=loss, C=1.0, tol=1e-9, max_iter=200000,
                             random_state=0).fit(X, ysign)
    w_peer = np.append(peer.coef_[0], peer.intercept_[0])
    cost = np.ones(len(y))
    f = svm_primal_objective(X, ysign, w, 1.0, cost, loss)
    g = svm_primal_objective(X, ysign, w_peer, 1.0, cost, loss)
    assert abs(f - g) <= 1e-7 * g
    np.testing.assert_allclose(w, w_peer, atol=1e-3)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_fused_relaxed_columns_are_the_binary_optimum_and_same_bits(loss):
    X, y = _text_like(n=300, k=7, seed=3)
    n, d = X.shape
    rows = kernel_rows(X)
    norms = _linear_svm.row_sq_norms(**rows, n_samples=n, n_features=d)

    def fused(group, tol=1e-9, max_iter=50000, handover=0.3):
        W = np.zeros((d + 1, len(group)))
        alpha = np.zeros((n, len(group)))
        n_iter, viol = _linear_svm.ovr_dual_cd_svc(
            **rows, n_samples=n, n_features=d, codes=y.astype(np.int32),
            positive=np.asarray(group, dtype=np.int32), cost=np.ones(n), loss=LOSS[loss],
            bias=1.0, W=W, alpha=alpha, tol=tol, max_iter=max_iter, shrinking=True, seed=11,
            sq_norms=norms, handover=handover, relax=1.25)
        return W, alpha, n_iter, viol

    W, alpha, n_iter, viol = fused(range(7))
    assert np.all(viol <= 1e-9)
    cost = np.ones(n)
    for k in range(7):
        ysign = np.where(y == k, 1.0, -1.0)
        w1, a1, _, _ = _binary(X, ysign, loss, 1.0)
        ref = svm_dual_objective(w1, a1, cost, loss)
        got = svm_dual_objective(W[:, k], alpha[:, k], cost, loss)
        assert abs(got - ref) <= 1e-10 * abs(ref)
    # a class's bits do not depend on the classes running with it
    W, alpha, n_iter, viol = fused(range(7), tol=1e-5, max_iter=200)
    for group in ([0, 1, 2, 3, 4], [5, 6], [3], [6, 1]):
        Wg, ag, ng, vg = fused(group, tol=1e-5, max_iter=200)
        np.testing.assert_array_equal(Wg, W[:, group])
        np.testing.assert_array_equal(ag, alpha[:, group])
        np.testing.assert_array_equal(ng, n_iter[group])


def test_estimator_relaxes_the_squared_hinge_only(monkeypatch):
    seen = []
    binary, ovr = _linear_svm.dual_cd_svc, _linear_svm.ovr_dual_cd_svc

    def spy_binary(*args, **kwargs):
        seen.append((kwargs["loss"], kwargs["relax"]))
        return binary(*args, **kwargs)

    def spy_ovr(*args, **kwargs):
        seen.append((kwargs["loss"], kwargs["relax"]))
        return ovr(*args, **kwargs)

    monkeypatch.setattr(_linear_svm, "dual_cd_svc", spy_binary)
    monkeypatch.setattr(_linear_svm, "ovr_dual_cd_svc", spy_ovr)
    X, y = _text_like(n=200, k=3, seed=4)
    LinearSVC(random_state=0).fit(X, y)
    LinearSVC(loss="hinge", random_state=0).fit(X, y)
    LinearSVC(random_state=0).fit(X, y == 1)
    assert set(seen) == {(2, svm_module._RELAX["squared_hinge"]), (1, 1.0)}
    assert 1.0 < svm_module._RELAX["squared_hinge"] < 2.0


def test_default_squared_hinge_fewer_passes_same_objective(monkeypatch):
    """The default over-relaxed squared hinge vs plain steps (relax 1) at the
    default tol: a primal objective no higher than plain steps' (to 1e-9) and
    fewer passes in all (seeded, so the counts are fixed)."""
    X, y = _text_like(n=600, d=1500, k=8, seed=5)
    cost = np.ones(X.shape[0])

    def fit(relax):
        monkeypatch.setitem(svm_module._RELAX, "squared_hinge", relax)
        passes = []
        original = _linear_svm.ovr_dual_cd_svc

        def spy(*args, **kwargs):
            out = original(*args, **kwargs)
            passes.extend(out[0])
            return out

        monkeypatch.setattr(_linear_svm, "ovr_dual_cd_svc", spy)
        model = LinearSVC(random_state=0).fit(X, y)
        monkeypatch.setattr(_linear_svm, "ovr_dual_cd_svc", original)
        primal = sum(svm_primal_objective(X, np.where(y == c, 1.0, -1.0),
                                          np.append(model.coef_[k], model.intercept_[k]),
                                          1.0, cost, "squared_hinge")
                     for k, c in enumerate(model.classes_))
        return primal, sum(passes)

    relaxed, plain = fit(svm_module._RELAX["squared_hinge"]), fit(1.0)
    assert relaxed[0] <= plain[0] * (1 + 1e-9)
    assert relaxed[1] < plain[1]


@pytest.mark.parametrize("relax", [0.0, 2.0, -0.5, 2.5, float("nan")])
def test_relax_outside_open_interval_raises(relax):
    X, y = _text_like(n=40, k=2, seed=6)
    n, d = X.shape
    rows = kernel_rows(X)
    with pytest.raises(ValueError, match="relax"):
        _binary(X, np.where(y == 0, 1.0, -1.0), "hinge", relax)
    with pytest.raises(ValueError, match="relax"):
        _linear_svm.ovr_dual_cd_svc(
            **rows, n_samples=n, n_features=d, codes=y.astype(np.int32),
            positive=np.array([0, 1], dtype=np.int32), cost=np.ones(n), loss=2, bias=1.0,
            W=np.zeros((d + 1, 2)), alpha=np.zeros((n, 2)), tol=1e-3, max_iter=10,
            shrinking=True, seed=0, sq_norms=np.ones(n), relax=relax)
