"""LinearSVC's dual coordinate descent on sparse inputs with many features
renumbers the columns by decreasing frequency (cache locality of ``w``): the
renumbering is a permutation, the fitted model is the one of the input order
(the same operations in the same order, only the addresses of the weights
differ) and it solves the problem scikit-learn's LIBLINEAR solves."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear import svm
from linclass.linear.svm import LinearSVC, svm_primal_objective


def _zipf_text(n=300, d=6000, k=3, seed=0):
    """Sparse tf-idf-like rows: column use follows a Zipf law (frequent terms
    have large numbers), class-dependent terms, unsorted columns in some rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    p = rng.permutation(p / p.sum())             # frequent terms spread over the numbers
    rows, cols, vals = [], [], []
    for i in range(n):
        m = int(rng.integers(5, 40))
        c = np.unique(np.concatenate([rng.choice(d, m, p=p),
                                      rng.choice(50, 3) + 100 * y[i]]))
        c = rng.permutation(c) if i % 3 == 0 else c
        rows.append(np.full(len(c), i))
        cols.append(c)
        vals.append(rng.random(len(c)) + 0.1)
    X = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, d))
    X = sp.csr_matrix((X.data / np.repeat(np.sqrt(X.multiply(X).sum(axis=1)).A.ravel(),
                                          np.diff(X.indptr)), X.indices, X.indptr),
                      shape=X.shape)
    return X, y


def test_frequency_order_is_a_permutation_by_decreasing_count():
    X, _ = _zipf_text()
    rows, position = svm._frequency_ordered_rows(X)
    d = X.shape[1]
    assert position.dtype == np.int32
    assert np.array_equal(np.sort(position), np.arange(d))
    counts = np.bincount(X.indices, minlength=d)
    renumbered = np.empty(d, dtype=counts.dtype)
    renumbered[position] = counts
    assert np.all(np.diff(renumbered) <= 0)
    # the same entries, renamed: row i of the renumbered matrix is row i of X
    Xr = sp.csr_matrix((rows["data"], rows["indices"], rows["indptr"]), shape=X.shape)
    np.testing.assert_array_equal(Xr.toarray()[:, position], X.toarray())


def _fit(X, y, monkeypatch, threshold, **params):
    monkeypatch.setattr(svm, "_REORDER_MIN_FEATURES", threshold)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LinearSVC(random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_renumbered_fit_equals_input_order_fit(loss, n_classes, monkeypatch):
    X, y = _zipf_text()
    y = y % n_classes
    assert X.shape[1] > svm._REORDER_MIN_FEATURES
    params = dict(loss=loss, C=1.0, tol=1e-6, max_iter=2000)
    ordered = _fit(X, y, monkeypatch, svm._REORDER_MIN_FEATURES, **params)
    plain = _fit(X, y, monkeypatch, 10**9, **params)
    np.testing.assert_allclose(ordered.coef_, plain.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ordered.intercept_, plain.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ordered.dual_coef_, plain.dual_coef_, rtol=0, atol=1e-12)
    assert ordered.n_iter_ == plain.n_iter_
    np.testing.assert_array_equal(ordered.predict(X), plain.predict(X))


def test_renumbered_newton_finish_equals_input_order(monkeypatch):
    """The squared hinge handed to the primal Newton method after 50 passes
    (tol below what 50 dual passes reach) runs on the renumbered rows too."""
    X, y = _zipf_text(seed=3)
    params = dict(loss="squared_hinge", C=10.0, tol=1e-9, max_iter=200)
    ordered = _fit(X, y, monkeypatch, svm._REORDER_MIN_FEATURES, **params)
    plain = _fit(X, y, monkeypatch, 10**9, **params)
    assert ordered.n_iter_ > svm._NEWTON_AFTER_PASSES      # the Newton finish ran
    # the dual passes give the same bits; the Newton finish sums over the
    # features (w.p, p.p, CG's inner products) in the column order, so the two
    # differ by rounding (2e-10 at C = 10 after the fused one-vs-rest passes)
    np.testing.assert_allclose(ordered.coef_, plain.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ordered.dual_objective_, plain.dual_objective_, rtol=1e-12)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_renumbered_fit_matches_liblinear(loss):
    sklearn_svm = pytest.importorskip("sklearn.svm")
    X, y = _zipf_text(seed=1)
    C = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = LinearSVC(loss=loss, C=C, tol=1e-8, max_iter=20000, random_state=0).fit(X, y)
        ref = sklearn_svm.LinearSVC(loss=loss, C=C, tol=1e-8, max_iter=20000,
                                    random_state=0).fit(X, y)
    cost = np.full(X.shape[0], C)
    for k in range(3):
        ysign = np.where(y == k, 1.0, -1.0)
        p_ours = svm_primal_objective(X, ysign, np.append(ours.coef_[k], ours.intercept_[k]),
                                      1.0, cost, loss)
        p_ref = svm_primal_objective(X, ysign, np.append(ref.coef_[k], ref.intercept_[k]),
                                     1.0, cost, loss)
        assert abs(p_ours - p_ref) <= 1e-5 * p_ref
        # the dual objective is a lower bound that meets the primal at the optimum
        assert abs(p_ours + ours.dual_objective_[k]) <= 1e-5 * p_ours
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=2e-3)


def _stalling_problem():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 20))
    y = (X[:, 0] + 0.8 * rng.normal(size=400) > 0).astype(int)
    return X, y


def test_tol_below_rounding_with_shrinking_reaches_the_unshrunk_optimum():
    """tol=1e-15 cannot be reached in floating point: the shrunk dual never
    stops on its own.  On this problem a variable shrunk by mistake keeps the
    shrunk hinge 7e-4 above the optimum for ever unless all variables are
    checked again (after 100, then 200, 400, 800 ... passes): at 3000 passes
    the objective is the one without shrinking."""
    X, y = _stalling_problem()
    cost = np.full(len(y), 1.0)
    objectives = []
    for shrinking in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LinearSVC(loss="hinge", C=1.0, tol=1e-15, max_iter=3000,
                              shrinking=shrinking, random_state=0).fit(X, y)
        w = np.append(model.coef_[0], model.intercept_[0])
        objectives.append(svm_primal_objective(X, np.where(y == 1, 1.0, -1.0), w, 1.0,
                                               cost, "hinge"))
        # primal and dual meet: the optimum
        assert abs(objectives[-1] + model.dual_objective_[0]) <= 1e-10 * objectives[-1]
    assert abs(objectives[0] - objectives[1]) <= 1e-10 * objectives[1]


def test_squared_hinge_dual_with_shrinking_below_rounding_reaches_the_optimum():
    """The same for the squared-hinge dual alone (LinearSVC would hand it to
    the Newton finish after 50 passes): 1000 passes reach the optimum."""
    from linclass._core import _linear_svm
    from linclass._validation import kernel_rows
    X, y = _stalling_problem()
    X = np.ascontiguousarray(X)
    n, d = X.shape
    ysign = np.where(y == 1, 1.0, -1.0)
    duals = []
    for shrinking in (True, False):
        w = np.zeros(d + 1)
        alpha = np.zeros(n)
        n_iter, _ = _linear_svm.dual_cd_svc(
            **kernel_rows(X), n_samples=n, n_features=d, ysign=ysign, cost=np.ones(n),
            loss=2, bias=1.0, w=w, alpha=alpha, tol=1e-15, max_iter=1000,
            shrinking=shrinking, seed=1)
        assert n_iter == 1000
        primal = svm_primal_objective(X, ysign, w, 1.0, np.ones(n), "squared_hinge")
        dual = -(0.5 * w @ w - alpha.sum() + 0.25 * alpha @ alpha)
        assert abs(primal - dual) <= 1e-10 * primal
        duals.append(dual)
    assert abs(duals[0] - duals[1]) <= 1e-12 * duals[1]


@pytest.mark.parametrize("sparse", [False, True])
def test_shared_row_norms(sparse):
    """The one-vs-rest problems share x_i . x_i (row_sq_norms); the dual with
    the shared norms is the dual that computes them itself."""
    from linclass._core import _linear_svm
    from linclass._validation import kernel_rows
    X, y = _zipf_text(n=120, d=300)
    if not sparse:
        X = np.ascontiguousarray(X.toarray())
    n, d = X.shape
    rows = kernel_rows(X)
    norms = _linear_svm.row_sq_norms(**rows, n_samples=n, n_features=d)
    dense = X.toarray() if sparse else X
    np.testing.assert_allclose(norms, (dense ** 2).sum(axis=1), rtol=1e-13)
    ysign = np.where(y == 0, 1.0, -1.0)
    runs = []
    for shared in (norms, None):
        w, alpha = np.zeros(d + 1), np.zeros(n)
        _linear_svm.dual_cd_svc(**rows, n_samples=n, n_features=d, ysign=ysign,
                                cost=np.ones(n), loss=1, bias=1.0, w=w, alpha=alpha,
                                tol=1e-6, max_iter=500, shrinking=True, seed=3,
                                sq_norms=shared)
        runs.append((w, alpha))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    with pytest.raises(ValueError, match="inconsistent array shapes"):
        _linear_svm.dual_cd_svc(**rows, n_samples=n, n_features=d, ysign=ysign,
                                cost=np.ones(n), loss=1, bias=1.0, w=np.zeros(d + 1),
                                alpha=np.zeros(n), tol=1e-6, max_iter=5, shrinking=True,
                                seed=3, sq_norms=norms[:-1])


def test_renumbered_warm_start_and_threads():
    """A warm start continues from the dual variables (indexed by sample, not by
    column) and the weights stay in the input's column order: w = X^T (alpha s)."""
    X, y = _zipf_text(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearSVC(loss="hinge", C=1.0, tol=1e-6, max_iter=3, warm_start=True,
                          random_state=0).fit(X, y)
        first = model.dual_coef_.copy()
        model.set_params(max_iter=2000).fit(X, y)
        threads = LinearSVC(loss="hinge", C=1.0, tol=1e-6, max_iter=2000, n_jobs=2,
                            random_state=0).fit(X, y)
    assert not np.array_equal(first, model.dual_coef_)
    for k in range(3):
        ysign = np.where(y == k, 1.0, -1.0)
        u = model.dual_coef_[k] * ysign
        np.testing.assert_allclose(model.coef_[k], X.T @ u, atol=1e-9)
        np.testing.assert_allclose(model.intercept_[k], u.sum(), atol=1e-9)
    np.testing.assert_allclose(model.dual_objective_, threads.dual_objective_, rtol=1e-6)


def test_frequency_order_caps_counts_at_32767():
    """The sort key is 16-bit: columns stored in more than 32767 rows tie (kept
    in input order) ahead of all the others, still a permutation by decreasing
    (capped) count, and the same model as the input order."""
    n, d = 40000, 5000
    col3 = np.arange(0, 35000)                     # 35,000 entries
    col7 = np.arange(n)                            # 40,000 entries
    col9 = np.arange(0, n, 400)                    # 100 entries
    col1 = np.arange(0, n, 2)                      # 20,000 entries
    rows = np.concatenate([col3, col7, col9, col1])
    cols = np.concatenate([np.full(len(col3), 3), np.full(len(col7), 7),
                           np.full(len(col9), 9), np.full(len(col1), 1)])
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, d))
    _, position = svm._frequency_ordered_rows(X)
    assert np.array_equal(np.sort(position), np.arange(d))
    assert list(position[[3, 7, 1, 9]]) == [0, 1, 2, 3]
