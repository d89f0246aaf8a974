"""LinearRegression, Ridge, Lasso and lasso_path against scikit-learn."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.regression import Lasso, LinearRegression, Ridge, lasso_path

skl = pytest.importorskip("sklearn.linear_model")


def _data(n=80, d=10, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.4] = 0.0
    w = rng.normal(size=d) * (rng.random(d) < 0.5)
    y = X @ w + 0.5 + 0.1 * rng.normal(size=n)
    sw = rng.uniform(0.5, 2.0, size=n)
    return (sp.csr_matrix(X) if sparse else X), y, sw


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_regression_equals_sklearn(sparse, fit_intercept):
    X, y, sw = _data(sparse=sparse)
    ours = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    peer = skl.LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), rtol=1e-8, atol=1e-9)
    assert ours.score(X, y) == pytest.approx(peer.score(X, y), rel=1e-10)


@pytest.mark.parametrize("solver", ["cholesky", "cg"])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_equals_sklearn(solver, sparse):
    X, y, sw = _data(sparse=sparse, seed=1)
    Y = np.column_stack([y, -2 * y + 1])
    ours = Ridge(alpha=0.7, solver=solver, tol=1e-12).fit(X, Y, sample_weight=sw)
    peer = skl.Ridge(alpha=0.7, solver="auto", tol=1e-12).fit(X, Y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-7, atol=1e-9)
    one = Ridge(alpha=0.7, solver=solver, tol=1e-12).fit(X, y)
    assert one.coef_.shape == (X.shape[1],) and isinstance(one.intercept_, float)


def test_ridge_more_features_than_samples():
    X, y, _ = _data(n=15, d=40, seed=2)
    ours = Ridge(alpha=0.3, solver="cholesky").fit(X, y)
    peer = skl.Ridge(alpha=0.3).fit(X, y)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape, sparse, expected", [
    ((80, 10), False, "primal"), ((15, 40), False, "dual"),
    ((80, 10), True, "primal"), ((15, 40), True, "cg_dual"),
    ((1200, 1001), True, "cg")])
def test_ridge_auto_solver_by_shape_and_sparsity(shape, sparse, expected):
    from linclass.linear.least_squares import ridge_solver
    rng = np.random.default_rng(5)
    X = rng.normal(size=shape) * (rng.random(shape) < 0.05)
    X = sp.csr_matrix(X) if sparse else X
    assert ridge_solver(X, "auto") == expected
    assert ridge_solver(X, "cg") == ("cg" if shape[1] <= shape[0] else "cg_dual")
    assert ridge_solver(X, "cholesky") == ("primal" if shape[1] <= shape[0] else "dual")


@pytest.mark.parametrize("shape", [(80, 10), (15, 40)])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_every_ridge_path_solves_the_normal_equations(shape, sparse, weighted, fit_intercept):
    # auto (syrk Gram, sparse Gram or CG), cholesky and cg against the closed form
    # of the weighted, centred problem, and against scikit-learn
    X, y, sw = _data(n=shape[0], d=shape[1], seed=6, sparse=sparse)
    sw = sw if weighted else np.ones(shape[0])
    Xd = X.toarray() if sparse else X
    mu = sw @ Xd / sw.sum() if fit_intercept else np.zeros(shape[1])
    ybar = sw @ y / sw.sum() if fit_intercept else 0.0
    A = np.sqrt(sw)[:, None] * (Xd - mu)
    exact = np.linalg.solve(A.T @ A + 0.7 * np.eye(shape[1]), A.T @ (np.sqrt(sw) * (y - ybar)))
    peer = skl.Ridge(alpha=0.7, fit_intercept=fit_intercept, tol=1e-12).fit(
        X, y, sample_weight=sw)
    for solver in ("auto", "cholesky", "cg"):
        ours = Ridge(alpha=0.7, solver=solver, tol=1e-13, fit_intercept=fit_intercept).fit(
            X, y, sample_weight=sw if weighted else None)
        np.testing.assert_allclose(ours.coef_, exact, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("precompute", ["auto", True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_lasso_equals_sklearn(sparse, precompute):
    X, y, sw = _data(sparse=sparse, seed=3)
    ours = Lasso(alpha=0.05, tol=1e-10, max_iter=10000, precompute=precompute).fit(
        X, y, sample_weight=sw)
    peer = skl.Lasso(alpha=0.05, tol=1e-10, max_iter=10000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-6, atol=1e-8)
    assert np.sum(ours.coef_ == 0) == np.sum(peer.coef_ == 0) > 0


def test_lasso_updates_chosen_by_shape():
    from linclass.linear.least_squares import (LASSO_GRAM_LIMIT, LASSO_GRAM_PER_TARGET,
                                               lasso_updates)
    tall = np.zeros((400, LASSO_GRAM_PER_TARGET))
    assert lasso_updates(tall) == "covariance"
    assert lasso_updates(np.zeros((400, LASSO_GRAM_PER_TARGET + 1))) == "naive"
    assert lasso_updates(np.zeros((400, 150)), n_targets=2) == "covariance"
    assert lasso_updates(np.zeros((50, 60)), n_targets=5) == "naive"         # wide
    assert lasso_updates(np.zeros((5000, LASSO_GRAM_LIMIT + 1)), n_targets=100) == "naive"
    assert lasso_updates(sp.csr_matrix(tall)) == "naive"                     # sparse
    assert lasso_updates(sp.csr_matrix(tall), True) == "covariance"
    assert lasso_updates(tall, False) == "naive"


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_lasso_dense_updates_equal_on_larger_problem(fit_intercept, weighted):
    """Covariance (Gram) and dense naive updates, 2 targets, against scikit-learn;
    columns with a large mean (the Gram matrix is centred by subtraction)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 40)) + rng.uniform(-5, 5, size=40)
    Y = np.column_stack([X[:, :5] @ rng.normal(size=5), X[:, 5:9] @ rng.normal(size=4)])
    Y += 0.3 * rng.normal(size=Y.shape) + 2.0
    sw = rng.uniform(0.5, 2.0, size=300) if weighted else None
    peer = skl.Lasso(alpha=0.02, tol=1e-12, max_iter=100000,
                     fit_intercept=fit_intercept).fit(X, Y, sample_weight=sw)
    for precompute in (True, False):
        ours = Lasso(alpha=0.02, tol=1e-12, max_iter=100000, precompute=precompute,
                     fit_intercept=fit_intercept).fit(X, Y, sample_weight=sw)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-6, atol=1e-7)
        assert (ours.coef_ == 0).any()
        assert ours.dual_gap_.shape == (2,)
    # a warm start from the solution stops after one pass on either path
    for precompute in (True, False):
        est = Lasso(alpha=0.02, tol=1e-8, max_iter=100000, warm_start=True,
                    precompute=precompute,
                    fit_intercept=fit_intercept).fit(X, Y, sample_weight=sw)
        est.fit(X, Y, sample_weight=sw)
        assert est.n_iter_ == 1


def test_scaled_transpose():
    from linclass._core._coordinate_descent import scaled_transpose
    rng = np.random.default_rng(0)
    # not multiples of the tile (default 512 x 64), odd row counts (the scalar tail
    # of the two-row loop); other tile shapes, down to 1 x 1
    for n, d, tiles in ((70, 45, {}), (301, 260, {}), (1031, 131, {}),
                        (301, 260, dict(tile_rows=128, tile_cols=128)),
                        (37, 11, dict(tile_rows=1, tile_cols=1)),
                        (37, 11, dict(tile_rows=5, tile_cols=3)),
                        # even row counts (the non-temporal stores), with even
                        # and odd tile heights (odd: plain stores)
                        (512, 70, {}), (38, 11, dict(tile_rows=5, tile_cols=3)),
                        (38, 11, dict(tile_rows=6, tile_cols=3))):
        X = rng.normal(size=(n, d))
        for v in (np.ones(n), rng.uniform(0.1, 2.0, size=n)):
            sq, sums = np.empty(d), np.empty(d)
            T = scaled_transpose(X, v, sq, **tiles)
            np.testing.assert_array_equal(T, (v[:, None] * X).T)
            np.testing.assert_allclose(sq, ((v[:, None] * X) ** 2).sum(axis=0), rtol=1e-13)
            T = scaled_transpose(X, v, sq, sums, **tiles)
            np.testing.assert_array_equal(T, (v[:, None] * X).T)
            np.testing.assert_allclose(sums, X.T @ v ** 2, rtol=1e-12, atol=1e-12)
    X = rng.normal(size=(70, 45))
    with pytest.raises(ValueError, match="shapes"):
        scaled_transpose(X, np.ones(3), np.empty(45))
    with pytest.raises(ValueError, match="shapes"):
        scaled_transpose(X, np.ones(70), np.empty(45), None, 0, 64)


@pytest.mark.filterwarnings("ignore:'n_alphas' was deprecated:FutureWarning")
def test_lasso_path_equals_sklearn_and_warm_start():
    X, y, _ = _data(seed=4)
    alphas, coefs, intercepts, gaps = lasso_path(X, y, n_alphas=20, fit_intercept=False,
                                                 tol=1e-10, max_iter=10000)
    peer_alphas, peer_coefs, _ = skl.lasso_path(X, y, n_alphas=20, tol=1e-10,
                                                max_iter=10000)
    np.testing.assert_allclose(alphas, peer_alphas, rtol=1e-10)
    np.testing.assert_allclose(coefs, peer_coefs, rtol=1e-6, atol=1e-8)
    assert np.all(coefs[:, 0] == 0)                           # alpha_max: w = 0
    assert np.count_nonzero(coefs[:, -1]) > np.count_nonzero(coefs[:, 5])
    # with intercept: each point equals a cold-started Lasso
    alphas, coefs, intercepts, _ = lasso_path(X, y, n_alphas=8, tol=1e-10, max_iter=10000)
    for k in (0, 4, 7):
        cold = Lasso(alpha=alphas[k], tol=1e-10, max_iter=10000).fit(X, y)
        np.testing.assert_allclose(coefs[:, k], cold.coef_, rtol=1e-6, atol=1e-8)
        assert intercepts[k] == pytest.approx(cold.intercept_, rel=1e-6, abs=1e-8)
    # a warm start from the solution needs one pass
    est = Lasso(alpha=alphas[4], tol=1e-6, warm_start=True).fit(X, y)
    est.fit(X, y)
    assert est.n_iter_ == 1


@pytest.mark.parametrize("model, match", [
    (Ridge(alpha=-1), "alpha"), (Lasso(alpha=0), "alpha"), (Ridge(solver="svd"), "solver"),
    (Lasso(precompute="yes"), "precompute"),
])
def test_bad_parameters(model, match):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


def test_bad_targets():
    X, y, _ = _data()
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Ridge().fit(X, y)
    with pytest.raises(ValueError, match="rows"):
        Lasso().fit(X, y[:5])
    with pytest.raises(ValueError, match="features"):
        Ridge().fit(X, np.ones(len(y))).predict(X[:, :3])


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:     # pragma: no cover
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    @parametrize_with_checks([LinearRegression(), Ridge(), Lasso(alpha=0.01)],
                             expected_failed_checks=lambda e: {})
    def test_sklearn_compatible(estimator, check):
        check(estimator)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_fused_ridge_operators_match_numpy(fit_intercept):
    from linclass.linear.least_squares import _CenteredOperator, _fused_operator
    rng = np.random.default_rng(40)
    X = sp.random(60, 90, density=0.1, format="csr", random_state=4)
    X = sp.csr_matrix(X.toarray() * (np.arange(90) % 7 != 0))      # some empty columns
    sw = rng.uniform(0.2, 2.0, 60)
    sw[[3, 17]] = 0.0
    op = _CenteredOperator(X, sw, fit_intercept)
    Xd = X.toarray()
    A = np.sqrt(sw)[:, None] * (Xd - op.mu)
    Q, P = rng.normal(size=(60, 5)), rng.normal(size=(90, 5))
    dual = _fused_operator(op, 0.3, True, 5)
    primal = _fused_operator(op, 0.3, False, 5)
    np.testing.assert_allclose(dual(Q), A @ (A.T @ Q) + 0.3 * Q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(primal(P), A.T @ (A @ P) + 0.3 * P, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dual.to_primal(Q), A.T @ Q, rtol=1e-12, atol=1e-12)
    assert _fused_operator(_CenteredOperator(Xd, sw, fit_intercept), 0.3, True, 5) is None


@pytest.mark.parametrize("k", [1, 3, 4, 20, 37])
def test_ridge_kernel_product_every_vector_level_same_bits(k):
    """The kernel-side product's column loop (``_ridge_simd.h``) gives the same
    bits at the baseline level and at the CPU's best (AVX2 where it has it),
    for block widths that are and are not multiples of the vector width, with
    empty columns and columns longer than the prefetch distance."""
    from linclass._core import _ridge
    from linclass.linear.least_squares import _CenteredOperator, _fused_operator
    rng = np.random.default_rng(k)
    X = sp.random(200, 150, density=0.08, format="csr", random_state=k)
    X = sp.csr_matrix(X.toarray() * (np.arange(150) % 9 != 0))
    X[:, 5] = rng.normal(size=(200, 1))                           # a long column
    X = sp.csr_matrix(X)
    sw = rng.uniform(0.2, 2.0, 200)
    op = _CenteredOperator(X, sw, True)
    A = np.sqrt(sw)[:, None] * (X.toarray() - op.mu)
    Q = rng.normal(size=(200, k))
    best = _ridge.simd_level()
    try:
        assert _ridge.simd_level(0) == 0
        plain = _fused_operator(op, 0.3, True, k)(Q)
        assert _ridge.simd_level(2) == best
        vector = _fused_operator(op, 0.3, True, k)(Q)
    finally:
        _ridge.simd_level(2)
    np.testing.assert_array_equal(plain, vector)
    np.testing.assert_allclose(vector, A @ (A.T @ Q) + 0.3 * Q, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(120, 400), (400, 60)])
def test_ridge_classifier_paths_give_the_same_coefficients(shape):
    from linclass.linear.least_squares import RidgeClassifier
    rng = np.random.default_rng(41)
    X = sp.random(*shape, density=0.05, format="csr", random_state=5)
    y = rng.integers(0, 5, shape[0])
    sw = rng.uniform(0.5, 2.0, shape[0])
    peer = skl.RidgeClassifier(alpha=0.8, tol=1e-12, solver="sparse_cg").fit(
        X, y, sample_weight=sw)
    fits = {s: RidgeClassifier(alpha=0.8, solver=s, tol=1e-12).fit(X, y, sample_weight=sw)
            for s in ("auto", "cg", "cholesky")}
    for model in fits.values():
        np.testing.assert_allclose(model.coef_, fits["cholesky"].coef_, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(model.intercept_, fits["cholesky"].intercept_, rtol=1e-7,
                                   atol=1e-9)
        np.testing.assert_allclose(model.coef_, peer.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(model.predict(X), peer.predict(X))


# ---- one-pass sparse Gram, mixed-precision ridge, sparse covariance lasso --

def test_sparse_gram_kernel_matches_scipy():
    from linclass._core._ridge import sparse_gram
    rng = np.random.default_rng(50)
    X = sp.random(90, 17, density=0.3, format="csr", random_state=7)
    sw = rng.uniform(0.2, 2.0, 90)
    sw[[4, 30]] = 0.0
    exact = (X.T @ sp.diags(sw) @ X).toarray()
    args = (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32), 17, sw)
    np.testing.assert_allclose(sparse_gram(*args), exact, rtol=1e-13, atol=1e-14)
    # rows stored in reverse column order: pairs land in the other triangle
    Xr = X.copy()
    for i in range(90):
        a, b = Xr.indptr[i], Xr.indptr[i + 1]
        Xr.indices[a:b] = Xr.indices[a:b][::-1].copy()
        Xr.data[a:b] = Xr.data[a:b][::-1].copy()
    G = sparse_gram(Xr.data, Xr.indices.astype(np.int32), Xr.indptr.astype(np.int32), 17, sw)
    np.testing.assert_allclose(G, exact, rtol=1e-13, atol=1e-14)
    with pytest.raises(ValueError, match="inconsistent"):
        sparse_gram(X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32), 17,
                    sw[:50])


def test_centred_float32_kernel():
    from linclass._core._ridge import centred_float32
    rng = np.random.default_rng(51)
    X = rng.normal(size=(33, 7)) + 4.0
    mu, v = X.mean(axis=0), rng.uniform(0.5, 2.0, 33)
    A = centred_float32(X, mu, v)
    assert A.dtype == np.float32 and A.shape == (33, 7)
    np.testing.assert_array_equal(A, (v[:, None] * (X - mu)).astype(np.float32))
    with pytest.raises(ValueError, match="shapes"):
        centred_float32(X, mu[:3], v)


def test_ridge_mixed_precision_chosen_by_shape():
    from linclass.linear.least_squares import (MIXED_FEATURES_PER_TARGET,
                                               MIXED_MIN_FEATURES, ridge_solver)
    d = MIXED_MIN_FEATURES
    assert ridge_solver(np.zeros((d + 5, d)), "auto") == "primal_mixed"
    assert ridge_solver(np.zeros((d + 5, d - 1)), "auto") == "primal"       # too few features
    assert ridge_solver(np.zeros((d - 1, d)), "auto") == "dual"             # wide
    k = d // MIXED_FEATURES_PER_TARGET
    assert ridge_solver(np.zeros((d + 5, d)), "auto", n_targets=k) == "primal_mixed"
    assert ridge_solver(np.zeros((d + 5, d)), "auto", n_targets=k + 1) == "primal"
    assert ridge_solver(np.zeros((d + 5, d)), "cholesky") == "primal"       # plain float64
    assert ridge_solver(sp.csr_matrix((d + 5, d)), "auto") == "primal"      # sparse Gram


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ridge_mixed_precision_equals_sklearn(weighted, fit_intercept):
    # correlated columns with large means (centring before the float32 rounding)
    rng = np.random.default_rng(52)
    X = rng.normal(size=(600, 220)) @ (np.eye(220) + 0.3 * rng.normal(size=(220, 220)))
    X += rng.uniform(-20, 20, size=220)
    Y = np.column_stack([X @ rng.normal(size=220), X[:, :3].sum(axis=1)])
    Y += rng.normal(size=Y.shape) + 3.0
    sw = rng.uniform(0.5, 2.0, 600) if weighted else None
    ours = Ridge(alpha=2.0, fit_intercept=fit_intercept).fit(X, Y, sample_weight=sw)
    plain = Ridge(alpha=2.0, solver="cholesky", fit_intercept=fit_intercept).fit(
        X, Y, sample_weight=sw)
    peer = skl.Ridge(alpha=2.0, fit_intercept=fit_intercept, solver="cholesky").fit(
        X, Y, sample_weight=sw)
    scale = np.abs(peer.coef_).max()
    assert np.abs(ours.coef_ - peer.coef_).max() <= 1e-10 * scale
    assert np.abs(plain.coef_ - peer.coef_).max() <= 1e-8 * scale
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-9, atol=1e-9)
    one = Ridge(alpha=2.0, fit_intercept=fit_intercept).fit(X, Y[:, 0], sample_weight=sw)
    np.testing.assert_allclose(one.coef_, peer.coef_[0], rtol=1e-9, atol=1e-10 * scale)


def test_ridge_mixed_precision_falls_back_to_float64():
    from linclass.linear.least_squares import _CenteredOperator, _solve_mixed
    rng = np.random.default_rng(53)
    n, d = 400, 210
    # squares overflow float32 (not float64): the float32 Gram is not finite
    X = rng.normal(size=(n, d)) * 1e22
    y = X @ rng.normal(size=d) / 1e22 + rng.normal(size=n)
    op = _CenteredOperator(X, np.ones(n), True)
    assert _solve_mixed(op, (y - y.mean())[:, None], 1.0) is None
    for X in (X, np.repeat(rng.normal(size=(n, d // 2)), 2, axis=1)):   # duplicated columns
        for alpha in (1.0, 1e-9):
            ours = Ridge(alpha=alpha).fit(X, y)
            # reference: least squares on the augmented system [Xc; sqrt(alpha) I] (QR,
            # the condition number not squared)
            Xc = X - X.mean(axis=0)
            aug = np.vstack([Xc, np.sqrt(alpha) * np.eye(d)])
            exact = np.linalg.lstsq(aug, np.concatenate([y - y.mean(), np.zeros(d)]),
                                    rcond=None)[0]
            scale = np.abs(exact).max()
            # no worse than the float64 Cholesky (duplicated columns with alpha=1e-9:
            # condition number ~1e12, both off by ~1e-4)
            plain = Ridge(alpha=alpha, solver="cholesky").fit(X, y)
            limit = max(1e-6 * scale, 2.0 * np.abs(plain.coef_ - exact).max())
            assert np.abs(ours.coef_ - exact).max() <= limit
            peer = skl.Ridge(alpha=alpha, solver="cholesky").fit(X, y)
            assert np.abs(ours.predict(X) - peer.predict(X)).max() <= 1e-6 * np.abs(y).max()


def test_lasso_sparse_covariance_chosen_by_cost():
    from linclass.linear.least_squares import _sparse_gram_pays, lasso_updates
    rng = np.random.default_rng(54)
    short = sp.random(2000, 100, density=0.1, format="csr", random_state=8)   # 10 a row
    long_rows = sp.random(2000, 100, density=0.9, format="csr", random_state=8)
    assert _sparse_gram_pays(short) and lasso_updates(short) == "covariance"
    assert not _sparse_gram_pays(long_rows) and lasso_updates(long_rows) == "naive"
    assert lasso_updates(short, False) == "naive"
    wide = sp.random(50, 100, density=0.1, format="csr", random_state=8)
    assert lasso_updates(wide) == "naive"
    # same solution on either path, and against scikit-learn, with a warm start
    y = short @ rng.normal(size=100) + 0.1 * rng.normal(size=2000)
    sw = rng.uniform(0.5, 2.0, 2000)
    peer = skl.Lasso(alpha=1e-3, tol=1e-10, max_iter=10000).fit(short, y, sample_weight=sw)
    for precompute in ("auto", False):
        ours = Lasso(alpha=1e-3, tol=1e-10, max_iter=10000, precompute=precompute).fit(
            short, y, sample_weight=sw)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-6, atol=1e-8)


def test_lasso_classifier_sparse_auto_equals_sklearn():
    from linclass.linear.least_squares import LassoClassifier
    rng = np.random.default_rng(55)
    X = sp.random(1500, 60, density=0.15, format="csr", random_state=9)
    X.data[:] = 1.0                                                    # binary, as a9a
    y3 = rng.integers(0, 3, 1500)
    for y in (y3 % 2, y3):
        ours = LassoClassifier(alpha=1e-3, tol=1e-10, max_iter=10000).fit(X, y)
        classes = np.unique(y)
        targets = [np.where(y == classes[1], 1.0, -1.0)] if len(classes) == 2 else \
            [np.where(y == c, 1.0, -1.0) for c in classes]
        for k, t in enumerate(targets):
            peer = skl.Lasso(alpha=1e-3, tol=1e-10, max_iter=10000).fit(X, t)
            np.testing.assert_allclose(ours.coef_[k], peer.coef_, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(ours.intercept_[k], peer.intercept_, rtol=1e-6,
                                       atol=1e-8)


def test_lasso_dense_naive_overflow_check():
    from linclass.linear.least_squares import lasso_updates
    rng = np.random.default_rng(56)
    X = rng.normal(size=(300, 150))
    assert lasso_updates(X) == "naive"
    X[5, 7] = 1e200
    y = rng.normal(size=300)
    for sw in (None, rng.uniform(0.5, 2.0, 300)):
        with pytest.raises(ValueError, match="overflow double precision"):
            Lasso(alpha=0.1).fit(X, y, sample_weight=sw)


def test_ridge_classifier_dense_default_path_is_mixed_and_equals_sklearn():
    from linclass.linear.least_squares import RidgeClassifier, ridge_solver
    rng = np.random.default_rng(57)
    X = rng.normal(size=(700, 230)) + rng.uniform(-3, 3, size=230)
    y = rng.integers(0, 3, 700)
    X[y == 1, :5] += 1.0
    assert ridge_solver(X, "auto", n_targets=3) == "primal_mixed"
    sw = rng.uniform(0.5, 2.0, 700)
    ours = RidgeClassifier(alpha=1.5).fit(X, y, sample_weight=sw)
    peer = skl.RidgeClassifier(alpha=1.5, solver="cholesky").fit(X, y, sample_weight=sw)
    scale = np.abs(peer.coef_).max()
    assert np.abs(ours.coef_ - peer.coef_).max() <= 1e-10 * scale
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))


def test_lasso_path_sparse_covariance_equals_naive_and_sklearn():
    rng = np.random.default_rng(58)
    X = sp.random(600, 30, density=0.2, format="csr", random_state=10)
    y = X @ (rng.normal(size=30) * (rng.random(30) < 0.5)) + 0.05 * rng.normal(size=600)
    from linclass.linear.least_squares import lasso_updates
    assert lasso_updates(X) == "covariance"
    alphas, cov, _, _ = lasso_path(X, y, n_alphas=8, tol=1e-10, max_iter=10000)
    _, naive, _, _ = lasso_path(X, y, alphas=alphas, tol=1e-10, max_iter=10000,
                                precompute=False)
    np.testing.assert_allclose(cov, naive, rtol=1e-6, atol=1e-9)
    Xc = X.toarray() - X.toarray().mean(axis=0)
    _, peer, _ = skl.lasso_path(Xc, y - y.mean(), alphas=alphas, tol=1e-10, max_iter=10000)
    np.testing.assert_allclose(cov, peer, rtol=1e-6, atol=1e-8)


def test_lasso_dense_design_gives_the_column_means():
    from linclass.linear.least_squares import _CenteredOperator, lasso_design
    rng = np.random.default_rng(59)
    X = rng.normal(size=(300, 150)) + 2.0
    for sw, fit_intercept in ((np.ones(300), True), (rng.uniform(0.5, 2, 300), True),
                              (np.ones(300), False)):
        op = _CenteredOperator(X, sw, fit_intercept)
        assert op.needs_column_sums == fit_intercept
        kind, _ = lasso_design(op)
        assert kind == "dense" and not op.needs_column_sums
        expected = sw @ X / sw.sum() if fit_intercept else np.zeros(150)
        np.testing.assert_allclose(op.mu, expected, rtol=1e-12, atol=1e-13)


def test_defaults_on_a9a_equal_sklearn():
    """Real data on the default paths: Ridge (one-pass sparse Gram), Lasso and
    LassoClassifier (sparse covariance updates) on a9a's first 6000 rows."""
    from linclass import datasets
    from linclass.linear.least_squares import LassoClassifier, lasso_updates, ridge_solver
    try:
        X, y = datasets.load_libsvm_binary("a9a", "train")
    except (FileNotFoundError, OSError) as err:
        pytest.skip("a9a not available: %s" % err)
    X, y = sp.csr_matrix(X)[:6000], np.asarray(y)[:6000]
    t = np.where(y > 0, 1.0, -1.0)
    assert ridge_solver(X, "auto") == "primal" and lasso_updates(X) == "covariance"
    ours = Ridge(alpha=1.0).fit(X, t)
    Xc = X.toarray() - X.toarray().mean(axis=0)
    exact = np.linalg.solve(Xc.T @ Xc + np.eye(X.shape[1]), Xc.T @ (t - t.mean()))
    np.testing.assert_allclose(ours.coef_, exact, rtol=1e-7, atol=1e-9)
    peer = skl.Lasso(alpha=1e-3, tol=1e-8, max_iter=10000).fit(X, t)
    lasso = Lasso(alpha=1e-3, tol=1e-8, max_iter=10000).fit(X, t)
    clf = LassoClassifier(alpha=1e-3, tol=1e-8, max_iter=10000).fit(X, y)
    for coef in (lasso.coef_, clf.coef_[0]):
        np.testing.assert_allclose(coef, peer.coef_, rtol=1e-5, atol=1e-6)
    assert clf.score(X, y) > 0.8


def test_check_finite_fast_path_still_exact():
    # the BLAS-dot fast path (C-contiguous float arrays of >= 4096 values): NaN and
    # +-infinity anywhere still raise with their position; finite values whose
    # squares overflow (float64 and float32) are accepted by the exact check
    from linclass._validation import check_finite_values
    for dtype in (np.float64, np.float32):
        X = np.ones((80, 60), dtype=dtype)
        check_finite_values(X, "X")
        for bad, kind in ((np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")):
            Y = X.copy()
            Y[41, 17] = bad
            with pytest.raises(ValueError, match="X contains %s .*position %d" % (kind, 41 * 60 + 17)):
                check_finite_values(Y, "X")
        check_finite_values(X * np.finfo(dtype).max / 2, "X")
    with pytest.raises(ValueError, match="X contains NaN"):
        Ridge().fit(np.where(np.eye(100, 50) > 0, np.nan, 1.0), np.ones(100))


@pytest.mark.parametrize("case", ["dense", "dense_gram", "weighted", "sparse"])
@pytest.mark.parametrize("bad, kind", [(np.nan, "NaN"), (np.inf, "infinity"),
                                       (-np.inf, "infinity")])
def test_lasso_checks_x_values_on_its_own_pass(case, bad, kind):
    """Lasso leaves X's finiteness check to fit_lasso (on the dense transposed
    copy's pass): NaN and infinity still raise, naming the value and its
    position, on every update path; huge finite values still raise as overflow."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20 if case == "dense_gram" else 150))
    y = rng.normal(size=300)
    X[7, 11] = bad
    sw = rng.uniform(0.5, 2, 300) if case == "weighted" else None
    Xin = sp.csr_matrix(X) if case == "sparse" else X
    position = 7 * X.shape[1] + 11          # (every value stored: the same in CSR data)
    with pytest.raises(ValueError, match="X contains %s .*position %d" % (kind, position)):
        Lasso(alpha=0.01).fit(Xin, y, sample_weight=sw)
    X[7, 11] = 1e200                                  # finite, but its square overflows
    with pytest.raises(ValueError, match="overflow|too large|1e\\+200"):
        Lasso(alpha=0.01).fit(sp.csr_matrix(X) if case == "sparse" else X, y,
                              sample_weight=sw)
    X[7, 11] = 0.5
    model = Lasso(alpha=0.01).fit(sp.csr_matrix(X) if case == "sparse" else X, y,
                                  sample_weight=sw)
    assert np.isfinite(model.coef_).all()


@pytest.mark.parametrize("solver, sparse, shape", [
    ("auto", False, (300, 40)),          # mixed precision (checks on its own pass)
    ("auto", False, (40, 300)),          # dual side
    ("cholesky", False, (300, 40)),
    ("cg", False, (300, 40)),
    ("auto", True, (300, 40)),
])
@pytest.mark.parametrize("bad, kind", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_ridge_checks_x_values_on_every_solver_path(solver, sparse, shape, bad, kind):
    """Ridge leaves X's finiteness check to solve_ridge: NaN and infinity still
    raise, naming the value and its position, whichever solver runs."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=shape)
    y = rng.normal(size=shape[0])
    X[5, 3] = bad
    position = 5 * shape[1] + 3
    Xin = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match="X contains %s .*position %d" % (kind, position)):
        Ridge(solver=solver).fit(Xin, y)
    X[5, 3] = 0.25
    model = Ridge(solver=solver).fit(sp.csr_matrix(X) if sparse else X, y)
    assert np.isfinite(model.coef_).all()
