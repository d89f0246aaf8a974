"""Fused one-vs-rest dual coordinate descent (``_linear_svm.ovr_dual_cd_svc``):
one pass over the rows serves the K binary problems.  Each column reaches the
optimum of its binary problem (the per-class solver's dual objective, the KKT
conditions, liblinear's solution); a class's result is the same bits whatever
classes run with it (so every n_jobs gives the same model); warm starts, zero
costs, more than 64 classes and bad shapes."""
import ctypes
import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _linear_svm
from linclass._validation import kernel_rows
from linclass.linear import svm as svm_module
from linclass.linear.svm import LinearSVC, svm_dual_objective, svm_primal_objective

from .test_linear_svc_ovr import _blobs as _ovr_blobs

LOSS = {"hinge": 1, "squared_hinge": 2}


# Gaussian blobs with zeroed entries, 9 classes by default here
_blobs = functools.partial(_ovr_blobs, n=260, d=14, k=9)


def _fused(X, y, classes, loss, C=1.0, tol=1e-8, max_iter=20000, shrinking=True, seed=7,
           alpha=None, bias=1.0, cost=None, handover=0.0):
    n, d = X.shape
    rows = kernel_rows(sp.csr_matrix(X) if sp.issparse(X) else np.ascontiguousarray(X))
    cost = np.full(n, C) if cost is None else cost
    K = len(classes)
    W = np.zeros((d + 1, K))
    alpha = np.zeros((n, K)) if alpha is None else alpha
    norms = _linear_svm.row_sq_norms(**rows, n_samples=n, n_features=d)
    n_iter, viol = _linear_svm.ovr_dual_cd_svc(
        **rows, n_samples=n, n_features=d, codes=y.astype(np.int32),
        positive=np.asarray(classes, dtype=np.int32), cost=cost, loss=LOSS[loss], bias=bias,
        W=W, alpha=alpha, tol=tol, max_iter=max_iter, shrinking=shrinking, seed=seed,
        sq_norms=norms, handover=handover)
    return W, alpha, n_iter, viol


def _binary(X, y, k, loss, C=1.0, tol=1e-8, max_iter=20000, shrinking=True):
    n, d = X.shape
    rows = kernel_rows(sp.csr_matrix(X) if sp.issparse(X) else np.ascontiguousarray(X))
    ysign = np.where(y == k, 1.0, -1.0)
    w, alpha = np.zeros(d + 1), np.zeros(n)
    _linear_svm.dual_cd_svc(**rows, n_samples=n, n_features=d, ysign=ysign,
                            cost=np.full(n, C), loss=LOSS[loss], bias=1.0, w=w, alpha=alpha,
                            tol=tol, max_iter=max_iter, shrinking=shrinking, seed=3)
    return w, alpha


def _kkt_spread(Xd, ysign, w, alpha, cost, loss):
    G = ysign * (Xd @ w[:-1] + w[-1]) - 1.0
    upper = cost if loss == "hinge" else np.inf
    if loss == "squared_hinge":
        G = G + alpha * 0.5 / cost
    PG = np.where(alpha <= 0.0, np.minimum(G, 0.0),
                  np.where(alpha >= upper, np.maximum(G, 0.0), G))
    return PG.max() - PG.min()


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("handover", [0.0, 0.5])
def test_each_column_is_its_binary_optimum(loss, sparse, shrinking, handover):
    X, y = _blobs(seed=1)
    Xf = sp.csr_matrix(X) if sparse else X
    C = 2.0
    cost = np.full(len(y), C)
    W, alpha, n_iter, viol = _fused(Xf, y, range(9), loss, C=C, shrinking=shrinking,
                                    handover=handover)
    assert np.all(viol <= 1e-8) and np.all(n_iter < 20000) and np.all(n_iter > 1)
    for k in range(9):
        ysign = np.where(y == k, 1.0, -1.0)
        w = W[:, k]
        # W[:, k] = sum_i alpha_ik s_ik [x_i, 1] and the KKT conditions hold
        np.testing.assert_allclose(w[:-1], X.T @ (alpha[:, k] * ysign), atol=1e-10)
        np.testing.assert_allclose(w[-1], np.sum(alpha[:, k] * ysign), atol=1e-10)
        assert _kkt_spread(X, ysign, w, alpha[:, k], cost, loss) <= 1e-7
        w_ref, a_ref = _binary(Xf, y, k, loss, C=C, shrinking=shrinking)
        ref = svm_dual_objective(w_ref, a_ref, cost, loss)
        assert abs(svm_dual_objective(w, alpha[:, k], cost, loss) - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(w, w_ref, atol=1e-5)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("handover", [0.0, 0.3])
def test_a_class_gives_the_same_bits_in_any_group(loss, sparse, handover):
    """9 classes together (vector lanes, a scalar lane, the few-lanes path once
    most variables are shrunk, classes handed over to finish alone), in two
    groups, and each alone."""
    X, y = _blobs(seed=2)
    Xf = sp.csr_matrix(X) if sparse else X
    W, alpha, n_iter, viol = _fused(Xf, y, range(9), loss, tol=1e-6, max_iter=300,
                                    handover=handover)
    for group in ([0, 1, 2, 3], [4, 5, 6, 7, 8], [3], [8], [6, 2]):
        Wg, ag, ng, vg = _fused(Xf, y, group, loss, tol=1e-6, max_iter=300,
                                handover=handover)
        np.testing.assert_array_equal(Wg, W[:, group])
        np.testing.assert_array_equal(ag, alpha[:, group])
        np.testing.assert_array_equal(ng, n_iter[group])
        np.testing.assert_array_equal(vg, viol[group])


def test_warm_start_zero_costs_and_no_bias():
    X, y = _blobs(n=200, seed=3)
    cost = np.full(len(y), 0.5)
    cost[::4] = 0.0
    W, alpha, n_iter, _ = _fused(X, y, range(9), "hinge", tol=1e-7, cost=cost, bias=0.0)
    assert np.all(alpha[::4] == 0.0)
    keep = cost > 0
    W2, _, _, _ = _fused(X[keep], y[keep], range(9), "hinge", tol=1e-7, cost=cost[keep],
                         bias=0.0)
    np.testing.assert_allclose(W, W2, atol=1e-5)
    assert np.all(W[-1] == 0.0)
    # from the solution (with the zero-cost rows' variables set off their bound:
    # they are reset to 0), a few passes confirm it
    W, alpha, _, _ = _fused(X, y, range(9), "squared_hinge", tol=1e-7, cost=cost)
    warm = alpha.copy()
    warm[::4] = 1.0
    W3, alpha3, n3, v3 = _fused(X, y, range(9), "squared_hinge", tol=1e-7, cost=cost,
                                alpha=warm)
    assert np.all(n3 <= 5) and np.all(v3 <= 1e-7)
    np.testing.assert_allclose(W3, W, atol=1e-6)
    assert np.all(alpha3[::4] == 0.0)


def test_bad_shapes_raise():
    X, y = _blobs(n=50, k=3, seed=4)
    with pytest.raises(ValueError, match="inconsistent"):
        _fused(X, y, list(range(3)) * 22, "hinge")                   # 66 > 64 lanes
    with pytest.raises(ValueError, match="inconsistent"):
        _fused(X, y, [0, 1], "hinge", alpha=np.zeros((50, 3)))
    with pytest.raises(ValueError, match="handover"):
        _fused(X, y, [0, 1], "hinge", handover=1.5)
    with pytest.raises(ValueError, match="loss"):
        rows = kernel_rows(X)
        _linear_svm.ovr_dual_cd_svc(
            **rows, n_samples=50, n_features=X.shape[1], codes=y.astype(np.int32),
            positive=np.arange(3, dtype=np.int32), cost=np.ones(50), loss=3, bias=1.0,
            W=np.zeros((X.shape[1] + 1, 3)), alpha=np.zeros((50, 3)), tol=1e-3,
            max_iter=10, shrinking=True, seed=0, sq_norms=np.ones(50))


def _per_class(monkeypatch, X, y, **params):
    monkeypatch.setattr(svm_module, "_FUSED_OVR", False)
    try:
        return LinearSVC(**params).fit(X, y)
    finally:
        monkeypatch.setattr(svm_module, "_FUSED_OVR", True)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_estimator_fused_equals_per_class_and_n_jobs(monkeypatch, loss):
    X, y = _blobs(n=300, seed=5)
    Xs = sp.csr_matrix(X)
    params = dict(loss=loss, C=1.5, tol=1e-8, max_iter=20000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = LinearSVC(**params).fit(Xs, y)
        three = LinearSVC(n_jobs=3, **params).fit(Xs, y)
        per_class = _per_class(monkeypatch, Xs, y, **params)
    np.testing.assert_array_equal(fused.coef_, three.coef_)
    np.testing.assert_array_equal(fused.dual_coef_, three.dual_coef_)
    np.testing.assert_allclose(fused.dual_objective_, per_class.dual_objective_, rtol=1e-9)
    np.testing.assert_allclose(fused.coef_, per_class.coef_, atol=1e-5)


def test_more_than_64_classes(monkeypatch):
    """70 classes: two fused runs (at most 64 lanes each), same optimum as the
    per-class solver."""
    X, y = _blobs(n=420, d=10, k=70, seed=6, spread=1.0, density=1.0)
    params = dict(C=1.0, tol=1e-7, max_iter=20000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = LinearSVC(**params).fit(X, y)
        per_class = _per_class(monkeypatch, X, y, **params)
    assert fused.coef_.shape == (70, 10)
    np.testing.assert_allclose(fused.dual_objective_, per_class.dual_objective_, rtol=1e-8)


def test_newton_finish_after_fused_passes(monkeypatch):
    """The classes the fused dual leaves above tol go to the primal Newton
    method one by one; its optimum is the per-class solver's."""
    X, y = _blobs(n=260, k=5, seed=7, spread=5.0)
    params = dict(C=50.0, tol=1e-6, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = LinearSVC(**params).fit(X, y)
        per_class = _per_class(monkeypatch, X, y, **params)
    assert fused.n_iter_ > svm_module._NEWTON_AFTER_PASSES
    cost = np.full(len(y), 50.0)
    for k in range(5):
        ysign = np.where(y == k, 1.0, -1.0)
        f = svm_primal_objective(X, ysign, np.append(fused.coef_[k], fused.intercept_[k]),
                                 1.0, cost, "squared_hinge")
        g = svm_primal_objective(X, ysign, np.append(per_class.coef_[k],
                                                     per_class.intercept_[k]),
                                 1.0, cost, "squared_hinge")
        assert abs(f - g) <= 1e-9 * g


def _newsgroups_subset(n_docs=1500):
    from linclass import datasets
    text = pytest.importorskip("sklearn.feature_extraction.text")
    try:
        train = datasets.load_20newsgroups("train")
    except (OSError, ValueError) as err:
        pytest.skip("20 Newsgroups not available: %s" % err)
    rng = np.random.default_rng(0)
    pick = np.sort(rng.choice(len(train.data), n_docs, replace=False))
    X = text.TfidfVectorizer().fit_transform([train.data[i] for i in pick]).tocsr()
    return X, np.asarray(train.target)[pick]


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_defaults_on_20newsgroups_match_liblinear(loss):
    """Default parameters on tf-idf text (20 classes, > 4096 features: the
    renumbered columns too): each binary problem's primal objective within
    1e-3 of LIBLINEAR's (scikit-learn's LinearSVC at the same C and tol), the
    same predictions on nearly every document."""
    skl = pytest.importorskip("sklearn.svm")
    X, y = _newsgroups_subset()
    ctypes.CDLL(None).srand(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = LinearSVC(loss=loss, random_state=0).fit(X, y)
        peer = skl.LinearSVC(loss=loss, random_state=0, dual=True).fit(X, y)
    cost = np.ones(X.shape[0])
    for k in range(20):
        ysign = np.where(y == k, 1.0, -1.0)
        f = svm_primal_objective(X, ysign, np.append(ours.coef_[k], ours.intercept_[k]),
                                 1.0, cost, loss)
        g = svm_primal_objective(X, ysign, np.append(peer.coef_[k], peer.intercept_[k]),
                                 1.0, cost, loss)
        assert abs(f - g) <= 1e-3 * g
        # our dual objective is a lower bound on the optimum, close to it
        assert -ours.dual_objective_[k] <= g * (1 + 1e-9)
        assert -ours.dual_objective_[k] >= g * (1 - 1e-3)
    assert np.mean(ours.predict(X) == peer.predict(X)) >= 0.995


def test_hinge_one_vs_rest_runs_per_class(monkeypatch):
    """The fused run serves the squared hinge only (the hinge's long runs on
    small active sets measured faster one class at a time)."""
    calls = []
    original = _linear_svm.ovr_dual_cd_svc

    def spy(*args, **kwargs):
        calls.append(kwargs["loss"])
        return original(*args, **kwargs)

    monkeypatch.setattr(_linear_svm, "ovr_dual_cd_svc", spy)
    X, y = _blobs(n=200, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LinearSVC(loss="hinge", random_state=0).fit(X, y)
        assert calls == []
        LinearSVC(random_state=0).fit(X, y)
    assert calls == [LOSS["squared_hinge"]]
