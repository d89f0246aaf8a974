"""LinearSVC's squared hinge: when dual coordinate descent has not reached
``tol`` after ``_NEWTON_AFTER_PASSES`` passes it finishes with the primal
finite Newton method (``_linear_svm.l2svm_newton``).  The solution equals the
fully converged dual and scikit-learn's / LIBLINEAR's primal Newton solver;
the dual variables recovered from the KKT conditions give a dual objective
within the tolerance of the primal one."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear import svm as svm_module
from linclass.linear.svm import LinearSVC, svm_primal_objective


def _data(n=300, d=20, n_classes=2, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(n_classes, d))
    y = rng.integers(0, n_classes, n)
    X = centers[y] + 2.0 * rng.normal(size=(n, d))        # overlapping: many margin errors
    X[:, 0] *= 5.0                                          # badly scaled: the dual CD is slow
    if sparse:
        X[np.abs(X) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def _primal(model, X, y, cost, p=0):
    positive = model.classes_[1] if len(model.classes_) == 2 else model.classes_[p]
    ysign = np.where(y == positive, 1.0, -1.0)
    w = np.append(model.coef_[p], model.intercept_[p] / model.intercept_scaling)
    return svm_primal_objective(X, ysign, w, model.intercept_scaling, cost, "squared_hinge")


@pytest.mark.parametrize("sparse", [False, True])
def test_newton_finish_reaches_the_optimum_where_the_dual_stalls(sparse, monkeypatch):
    skl = pytest.importorskip("sklearn.svm")
    X, y = _data(sparse=sparse)
    rng = np.random.default_rng(1)
    sw = rng.uniform(0.0, 2.0, len(y))
    sw[:10] = 0.0                                           # left out of the problem
    C = 10.0
    cost = C * sw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = skl.LinearSVC(C=C, dual=False, tol=1e-10, max_iter=10000).fit(X, y, sw)
        monkeypatch.setattr(svm_module, "_NEWTON_AFTER_PASSES", 10**9)
        dual = LinearSVC(C=C, tol=1e-4, max_iter=3000, random_state=0).fit(X, y, sw)
        monkeypatch.setattr(svm_module, "_NEWTON_AFTER_PASSES", 5)
        newton = LinearSVC(C=C, tol=1e-4, random_state=0).fit(X, y, sw)
    ref = _primal(peer, X, y, cost)
    p_newton = _primal(newton, X, y, cost)
    assert newton.n_iter_ < 50
    assert abs(p_newton - ref) <= 1e-7 * ref
    # the dual alone, 3000 passes, is still far from it (hence the switch)
    assert _primal(dual, X, y, cost) - ref > 1e-5 * ref
    # KKT duals: a dual objective within the tolerance of the primal
    assert abs(-newton.dual_objective_[0] - p_newton) <= 1e-5 * p_newton
    np.testing.assert_array_equal(newton.dual_coef_[0][:10], 0.0)
    assert np.all(newton.dual_coef_ >= 0.0)
    np.testing.assert_allclose(newton.coef_, peer.coef_, rtol=1e-4, atol=1e-5)


def test_newton_finish_matches_liblinear_primal_newton(monkeypatch):
    skl = pytest.importorskip("sklearn.svm")
    X, y = _data(seed=2, n_classes=3)
    C = 5.0
    monkeypatch.setattr(svm_module, "_NEWTON_AFTER_PASSES", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = skl.LinearSVC(C=C, dual=False, tol=1e-10, max_iter=10000).fit(X, y)
        ours = LinearSVC(C=C, tol=1e-6, random_state=0).fit(X, y)
        two = LinearSVC(C=C, tol=1e-6, random_state=0, n_jobs=2).fit(X, y)
    cost = np.full(len(y), C)
    for p in range(3):
        ref = _primal(peer, X, y, cost, p)
        assert abs(_primal(ours, X, y, cost, p) - ref) <= 1e-8 * ref
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ours.coef_, two.coef_)


def test_newton_kernel_from_zero_reaches_the_optimum():
    """l2svm_newton alone (from w = 0) on a problem small enough to check the
    optimality condition of the primal directly."""
    from linclass._core import _linear_svm
    from linclass._validation import kernel_rows
    X, y = _data(n=80, d=5, seed=3)
    ysign = np.where(y == 1, 1.0, -1.0)
    cost = np.full(len(y), 2.0)
    w, alpha = np.zeros(6), np.zeros(len(y))
    it, n_cg, rel = _linear_svm.l2svm_newton(
        **kernel_rows(X), n_samples=len(y), n_features=5, ysign=ysign, cost=cost, bias=1.0,
        w=w, alpha=alpha, tol=1e-10, max_iter=100)
    assert 0 < it < 100 and rel <= 1e-10
    Xb = np.hstack([X, np.ones((len(y), 1))])
    xi = np.maximum(0.0, 1.0 - ysign * (Xb @ w))
    grad = w - 2.0 * Xb.T @ (cost * ysign * xi)
    assert np.max(np.abs(grad)) <= 1e-7 * max(1.0, np.max(np.abs(w)))
    np.testing.assert_allclose(alpha, 2.0 * cost * xi)
    np.testing.assert_allclose(w, Xb.T @ (alpha * ysign), rtol=1e-7, atol=1e-8)
