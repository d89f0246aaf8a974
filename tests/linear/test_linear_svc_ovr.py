"""One-vs-rest dual coordinate descent of LinearSVC: problem k is solved to the
optimum of "class k against the rest" (the binary solver's dual objective and
KKT conditions), including the squared-hinge Newton finish; every n_jobs gives
the same model; warm starts and zero costs behave as in the binary solver."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.svm import LinearSVC, svm_dual_objective


def _blobs(n=240, d=12, k=5, seed=0, spread=2.5, density=0.6):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    y = rng.integers(0, k, n)
    X = centers[y] + spread * rng.normal(size=(n, d)) / np.sqrt(d)
    X[rng.random(X.shape) > density] = 0.0
    return X, y


def _kkt_spread(X, ysign, w, alpha, cost, loss):
    """max - min projected gradient of the binary dual at (w, alpha)."""
    G = ysign * (X @ w[:-1] + w[-1]) - 1.0
    if loss == "squared_hinge":
        G = G + alpha * 0.5 / cost
        upper = np.inf
    else:
        upper = cost
    PG = np.where(alpha <= 0.0, np.minimum(G, 0.0), np.where(alpha >= upper,
                                                              np.maximum(G, 0.0), G))
    return PG.max() - PG.min()


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shrinking", [True, False])
def test_ovr_reaches_each_binary_optimum(loss, sparse, shrinking):
    X, y = _blobs(seed=1)
    Xf = sp.csr_matrix(X) if sparse else X
    C = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearSVC(loss=loss, C=C, tol=1e-7, max_iter=20000, shrinking=shrinking,
                          random_state=0).fit(Xf, y)
    cost = np.full(len(y), C)
    for k in range(5):
        ysign = np.where(y == k, 1.0, -1.0)
        w = np.append(model.coef_[k], model.intercept_[k])
        alpha = model.dual_coef_[k]
        # w is w(alpha) (to the Newton finish's tolerance when it ran) and the
        # KKT conditions hold
        np.testing.assert_allclose(w[:-1], X.T @ (alpha * ysign), atol=1e-6)
        assert _kkt_spread(X, ysign, w, alpha, cost, loss) <= 1e-5
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = LinearSVC(loss=loss, C=C, tol=1e-7, max_iter=20000, shrinking=shrinking,
                            random_state=0).fit(Xf, (y == k).astype(int))
        assert abs(model.dual_objective_[k] - ref.dual_objective_[0]) \
            <= 1e-7 * abs(ref.dual_objective_[0])


def test_ovr_matches_liblinear_one_vs_rest():
    skl = pytest.importorskip("sklearn.svm")
    X, y = _blobs(n=300, seed=2)
    for loss in ("squared_hinge", "hinge"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = LinearSVC(loss=loss, tol=1e-8, max_iter=100000, random_state=0).fit(X, y)
            peer = skl.LinearSVC(loss=loss, tol=1e-8, max_iter=100000, random_state=0,
                                 dual=True).fit(X, y)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-3, atol=1e-4)
        np.testing.assert_array_equal(ours.predict(X), peer.predict(X))


def test_ovr_n_jobs_newton_finish_and_warm_start():
    X, y = _blobs(n=260, seed=4, spread=5.0)
    Xs = sp.csr_matrix(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = LinearSVC(C=50.0, tol=1e-6, random_state=5).fit(Xs, y)
        for n_jobs in (2, 3):
            b = LinearSVC(C=50.0, tol=1e-6, random_state=5, n_jobs=n_jobs).fit(Xs, y)
            np.testing.assert_array_equal(a.coef_, b.coef_)
            np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    # C = 50 on overlapping classes: the dual does not reach tol in 50 passes, the
    # primal Newton method finishes; the result is the optimum (KKT of the primal)
    assert a.n_iter_ > 50
    cost = np.full(len(y), 50.0)
    for k in range(5):
        ysign = np.where(y == k, 1.0, -1.0)
        w = np.append(a.coef_[k], a.intercept_[k])
        margin = ysign * (X @ w[:-1] + w[-1])
        grad = w - 2.0 * np.append(X.T @ (cost * ysign * np.maximum(0.0, 1.0 - margin)),
                                   np.sum(cost * ysign * np.maximum(0.0, 1.0 - margin)))
        g0 = 2.0 * np.append(X.T @ (cost * ysign), np.sum(cost * ysign))   # gradient at 0
        assert np.linalg.norm(grad) <= 1e-6 * np.linalg.norm(g0)
    # warm start from the solution: a few passes to the same objective
    c = LinearSVC(C=1.0, tol=1e-6, random_state=0, warm_start=True).fit(X, y)
    first = c.dual_objective_.copy()
    c.fit(X, y)
    assert c.n_iter_ <= 5
    np.testing.assert_allclose(c.dual_objective_, first, rtol=1e-6)


def test_ovr_zero_cost_samples_are_left_out():
    X, y = _blobs(n=150, seed=6)
    sw = np.ones(len(y))
    sw[::3] = 0.0
    keep = sw > 0
    a = LinearSVC(tol=1e-8, max_iter=10000, random_state=0).fit(X, y, sample_weight=sw)
    b = LinearSVC(tol=1e-8, max_iter=10000, random_state=0).fit(X[keep], y[keep])
    assert np.all(a.dual_coef_[:, ~keep] == 0.0)
    np.testing.assert_allclose(a.dual_objective_, b.dual_objective_, rtol=1e-7)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-6)
    w = np.append(a.coef_[0], a.intercept_[0])
    assert np.isfinite(svm_dual_objective(w, a.dual_coef_[0], np.full(len(y), 1.0),
                                          "squared_hinge"))
