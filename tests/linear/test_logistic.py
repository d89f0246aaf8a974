"""Logistic regression: kernels vs numpy and finite differences, solvers vs
scikit-learn / liblinear, priors, weights, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from linclass.exceptions import ConvergenceWarning
from linclass.linear.logistic import LogisticRegression, _Objective


def _problem(n_classes, seed=0, n_samples=150, n_features=12, density=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)) * (rng.random((n_samples, n_features)) < density)
    w = rng.normal(size=(n_features, n_classes))
    y = np.argmax(X @ w + rng.gumbel(size=(n_samples, n_classes)), axis=1)
    return X, y, rng.random(n_samples) + 0.5


def _numpy_objective(theta, X, y, sw, n_classes, inv_var):
    """The objective written directly with numpy (the reference)."""
    n_features = X.shape[1]
    if n_classes == 2:
        z = X @ theta[:n_features] + theta[n_features]
        s = np.where(y == 1, 1.0, -1.0)
        loss = np.sum(sw * np.logaddexp(0, -s * z))
    else:
        W = theta.reshape(n_features + 1, n_classes)
        Z = X @ W[:n_features] + W[n_features]
        loss = np.sum(sw * (logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]))
    return loss + 0.5 * theta @ (inv_var * theta)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("sparse", [False, True])
def test_loss_and_gradient_match_numpy_and_finite_differences(n_classes, sparse):
    X, y, sw = _problem(n_classes)
    n_params = (X.shape[1] + 1) * (1 if n_classes == 2 else n_classes)
    rng = np.random.default_rng(1)
    inv_var = rng.random(n_params)
    theta = rng.normal(size=n_params) * 0.3
    obj = _Objective(sp.csr_matrix(X) if sparse else X, y, sw, n_classes, True, inv_var, 1.0)
    f, g = obj.l2(theta)
    assert np.isclose(f, _numpy_objective(theta, X, y, sw, n_classes, inv_var), rtol=1e-12)
    eps = 1e-6
    numeric = np.array([(obj.l2(theta + eps * e)[0] - obj.l2(theta - eps * e)[0]) / (2 * eps)
                        for e in np.eye(n_params)])
    np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6)


def test_hessian_vector_product_matches_finite_differences_of_the_gradient():
    X, y, sw = _problem(2)
    obj = _Objective(sp.csr_matrix(X), y, sw, 2, True, np.full(X.shape[1] + 1, 0.5), 1.0)
    rng = np.random.default_rng(2)
    theta, v = rng.normal(size=(2, X.shape[1] + 1))
    obj.l2(theta)
    hv = obj.hess_vec(v)
    eps = 1e-6
    numeric = (obj.l2(theta + eps * v)[1] - obj.l2(theta - eps * v)[1]) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_same_optimum_as_scikit_learn_lbfgs(n_classes):
    sklm = pytest.importorskip("sklearn.linear_model")
    X, y, sw = _problem(n_classes, seed=4)
    ours = LogisticRegression(C=0.7, tol=1e-10, max_iter=5000).fit(X, y, sample_weight=sw)
    theirs = sklm.LogisticRegression(C=0.7, tol=1e-10, max_iter=5000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-5)


def test_tron_and_lbfgs_reach_the_liblinear_optimum():
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    X, y, _ = _problem(2, seed=5, n_samples=300)
    Xs = sp.csr_matrix(X)
    # LIBLINEAR -s 0 with -B 1 penalises the bias: penalize_intercept=True
    tron = LogisticRegression(C=2.0, solver="tron", penalize_intercept=True, tol=1e-8).fit(Xs, y)
    lbfgs = LogisticRegression(C=2.0, penalize_intercept=True, tol=1e-10).fit(Xs, y)
    model = liblinear.train(np.where(y == 1, 1.0, -1.0), Xs, "-s 0 -c 2 -e 1e-8 -B 1 -q")
    w = np.array(model.get_decfun()[0])
    b = model.get_decfun()[1]
    if model.get_labels()[0] != 1:
        w, b = -w, -b
    for ours in (tron, lbfgs):
        np.testing.assert_allclose(ours.coef_[0], w, atol=1e-5)
        assert np.isclose(ours.intercept_[0], b, atol=1e-5)
    assert np.isclose(tron.objective_, lbfgs.objective_, rtol=1e-9)


def test_per_feature_prior_variance_equals_rescaled_features():
    # N(0, diag(c)) prior on w  <=>  N(0, I) prior on v = w / sqrt(c) with features x*sqrt(c)
    X, y, _ = _problem(3, seed=6)
    c = np.linspace(0.2, 3.0, X.shape[1])
    a = LogisticRegression(C=c, tol=1e-10).fit(X, y)
    b = LogisticRegression(C=1.0, tol=1e-10).fit(X * np.sqrt(c), y)
    np.testing.assert_allclose(a.coef_, b.coef_ * np.sqrt(c), atol=1e-6)
    assert np.isclose(a.objective_, b.objective_, rtol=1e-9)


def test_l1_gives_sparse_weights_and_satisfies_optimality():
    X, y, _ = _problem(2, seed=7, n_features=30)
    C = 0.5
    model = LogisticRegression(penalty="l1", C=C, tol=1e-10, max_iter=5000).fit(X, y)
    assert 0 < np.sum(model.coef_ == 0) < X.shape[1]
    # KKT: |grad_j| <= 1/C where w_j == 0, grad_j = -sign(w_j)/C elsewhere
    obj = _Objective(X, y, np.ones(len(y)), 2, True, np.zeros(X.shape[1] + 1), 1.0)
    _, g = obj.loss_grad(np.append(model.coef_[0], model.intercept_))
    w = model.coef_[0]
    assert np.all(np.abs(g[:-1][w == 0]) <= 1 / C + 1e-5)
    np.testing.assert_allclose(g[:-1][w != 0], -np.sign(w[w != 0]) / C, atol=1e-4)
    assert abs(g[-1]) < 1e-5


def test_unpenalised_intercept_and_warm_start():
    X, y, _ = _problem(2, seed=8)
    model = LogisticRegression(C=1e-4).fit(X + 0.0, y)
    # with a tiny prior variance the weights vanish but the intercept fits the base rate
    assert np.abs(model.coef_).max() < 1e-2
    assert np.isclose(model.intercept_[0], np.log(y.mean() / (1 - y.mean())), atol=1e-2)
    cold = LogisticRegression(C=1.0, tol=1e-8).fit(X, y)
    warm = LogisticRegression(C=1.0, tol=1e-8, warm_start=True)
    warm.coef_, warm.intercept_ = cold.coef_.copy(), cold.intercept_.copy()
    warm.fit(X, y)
    assert warm.n_iter_[0] <= 2
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-6)


def test_class_weight_equals_sample_weight():
    X, y, _ = _problem(3, seed=9)
    cw = {0: 2.0, 1: 0.5, 2: 1.0}
    a = LogisticRegression(class_weight=cw, tol=1e-10).fit(X, y)
    b = LogisticRegression(tol=1e-10).fit(X, y, sample_weight=np.array([cw[v] for v in y]))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)
    balanced = LogisticRegression(class_weight="balanced").fit(X, y)
    assert balanced.coef_.shape == (3, X.shape[1])


def test_predict_proba_is_safe_for_huge_scores():
    X, y, _ = _problem(3, seed=10)
    model = LogisticRegression().fit(X, y)
    proba = model.predict_proba(X * 1e6)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(1), 1)
    assert np.all(np.isfinite(model.predict_log_proba(X * 1e6)))
    binary = LogisticRegression().fit(*_problem(2)[:2])
    assert np.all(np.isfinite(binary.predict_log_proba(np.full((2, 12), 1e8))))


def test_convergence_warning_at_max_iter():
    X, y, _ = _problem(3, seed=11)
    with pytest.warns(ConvergenceWarning):
        LogisticRegression(max_iter=2, tol=1e-12).fit(X, y)
    with pytest.warns(ConvergenceWarning):
        LogisticRegression(solver="tron", max_iter=1, tol=1e-12).fit(*_problem(2)[:2])


def test_bad_input():
    X, y, _ = _problem(3)
    with pytest.raises(ValueError, match="one class"):
        LogisticRegression().fit(X, np.zeros(len(y)))
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression().fit(bad, y)
    with pytest.raises(ValueError, match="tron"):
        LogisticRegression(solver="tron").fit(X, y)
    with pytest.raises(ValueError, match="C"):
        LogisticRegression(C=np.ones(3)).fit(X, y)
    with pytest.raises(ValueError, match="continuous"):
        LogisticRegression().fit(X, np.linspace(0, 1, len(y)))
    model = LogisticRegression().fit(X, y)
    # a label never seen in training counts as an error (scikit-learn's accuracy)
    pred = model.predict(X[:3])
    assert model.score(X[:3], [pred[0], pred[1], 7]) == pytest.approx(2 / 3)


def test_save_and_load(tmp_path):
    import linclass
    X, y, _ = _problem(3)
    model = LogisticRegression().fit(sp.csr_matrix(X), y)
    model.save(tmp_path / "lr.npz")
    np.testing.assert_allclose(linclass.load(tmp_path / "lr.npz").predict_proba(X),
                               model.predict_proba(X))


def test_verbose_prints_one_progress_line_per_iteration_or_problem(capsys):
    from linclass.linear.maxent import MaxEnt
    from linclass.linear.svm import LinearSVC
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    quiet = LogisticRegression().fit(X, y)
    model = LogisticRegression(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == model.n_iter_[0] > 0
    assert all(line.startswith("LogisticRegression lbfgs iter") for line in lines)
    np.testing.assert_array_equal(model.coef_, quiet.coef_)
    maxent = MaxEnt(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == maxent.n_iter_ and lines[0].startswith("MaxEnt lbfgs iter 1:")
    svc = LinearSVC(verbose=1).fit(X, np.arange(60) % 3)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "LinearSVC dual_cd problem %d/3" % p for p in (1, 2, 3)]
    assert "%d passes" % svc.n_iter_ in " ".join(lines)


def test_full_covariance_prior_is_a_change_of_variables():
    """MAP under w ~ N(0, A A') on X equals A times the MAP under N(0, I) on X A."""
    rng = np.random.RandomState(3)
    X = rng.randn(120, 4)
    y = (X @ [1.0, -2.0, 0.5, 0.0] + 0.3 * rng.randn(120) > 0).astype(int)
    A = np.array([[1.0, 0, 0, 0], [0.8, 0.5, 0, 0], [0.1, -0.3, 1.2, 0], [0, 0.4, 0.2, 0.7]])
    full = LogisticRegression(C=A @ A.T, tol=1e-10, max_iter=5000).fit(X, y)
    plain = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(X @ A, y)
    np.testing.assert_allclose(full.coef_, plain.coef_ @ A.T, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(full.intercept_, plain.intercept_, rtol=1e-5, atol=1e-7)
    tron = LogisticRegression(C=A @ A.T, solver="tron", tol=1e-10).fit(X, y)
    np.testing.assert_allclose(tron.coef_, full.coef_, rtol=1e-4, atol=1e-6)


def test_full_covariance_prior_multinomial_and_diagonal_equivalence():
    rng = np.random.RandomState(4)
    X = rng.randn(150, 3)
    y = np.argmax(X @ rng.randn(3, 3) + 0.5 * rng.randn(150, 3), axis=1)
    c = np.array([0.5, 2.0, 1.0])
    diag = LogisticRegression(C=c, tol=1e-10, max_iter=5000).fit(X, y)
    full = LogisticRegression(C=np.diag(c), tol=1e-10, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(full.coef_, diag.coef_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("C, match", [
    (np.ones((3, 3)), "positive definite"),
    (np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
    (np.eye(2), "shape"),
    (np.diag([1.0, np.nan, 1.0]), "NaN"),
])
def test_full_covariance_prior_is_checked(C, match):
    X = np.random.RandomState(0).randn(20, 3)
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match=match):
        LogisticRegression(C=C).fit(X, y)
    with pytest.raises(ValueError, match="penalty='l2'"):
        LogisticRegression(C=np.eye(3), penalty="l1").fit(X, y)


# -- Newton's method with the exact Hessian, and solver="auto" ---------------------------

@pytest.mark.parametrize("fit_intercept", [True, False])
def test_binary_hessian_kernel_matches_numpy_with_unsorted_and_repeated_columns(
        fit_intercept):
    from linclass._core import _logistic
    from linclass.linear._common import rows_args
    rng = np.random.default_rng(20)
    X = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.5)
    D = rng.random(40)
    D[3] = 0.0
    Xa = np.column_stack([X, np.ones(40)]) if fit_intercept else X
    expected = (Xa.T * D) @ Xa
    # a CSR matrix whose row 0 lists its columns in reverse and repeats column 2
    csr = sp.csr_matrix(X)
    data, indices = list(csr.data), list(csr.indices)
    lo, hi = csr.indptr[0], csr.indptr[1]
    row0 = list(zip(indices[lo:hi], data[lo:hi]))[::-1] + [(2, 0.75)]
    expected_row = X[0].copy()
    expected_row[2] += 0.75
    Xe = X.copy()
    Xe[0] = expected_row
    Xea = np.column_stack([Xe, np.ones(40)]) if fit_intercept else Xe
    expected_dup = (Xea.T * D) @ Xea
    new_indices = [c for c, _ in row0] + indices[hi:]
    new_data = [v for _, v in row0] + data[hi:]
    shift = len(row0) - (hi - lo)
    indptr = np.concatenate([[0], csr.indptr[1:] + shift]).astype(np.int32)
    weird = sp.csr_matrix((np.array(new_data), np.array(new_indices, dtype=np.int32), indptr),
                          shape=X.shape)
    for matrix, reference in ((X, expected), (csr, expected), (weird, expected_dup)):
        H = _logistic.binary_hessian(D=D, fit_intercept=fit_intercept, **rows_args(matrix))
        assert np.all(np.tril(H, -1) == 0)
        np.testing.assert_allclose(np.triu(H) + np.triu(H, 1).T, reference, rtol=1e-12,
                                   atol=1e-12)


def test_full_hessian_matches_finite_differences_of_the_gradient():
    X, y, sw = _problem(2, seed=21)
    obj = _Objective(sp.csr_matrix(X), y, sw, 2, True, np.full(X.shape[1] + 1, 0.5), 3.0)
    theta = np.random.default_rng(22).normal(size=X.shape[1] + 1)
    obj.l2(theta)
    H = obj.hessian()
    eps = 1e-6
    numeric = np.column_stack([(obj.l2(theta + eps * e)[1] - obj.l2(theta - eps * e)[1])
                               / (2 * eps) for e in np.eye(len(theta))])
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("options", [
    dict(),
    dict(penalize_intercept=True),
    dict(fit_intercept=False),
    dict(class_weight={0: 3.0, 1: 0.5}),
    dict(C=np.linspace(0.3, 2.0, 12)),
])
def test_newton_reaches_the_lbfgs_and_scikit_learn_optimum(options):
    sklm = pytest.importorskip("sklearn.linear_model")
    X, y, sw = _problem(2, seed=23, n_samples=300)
    Xs = sp.csr_matrix(X)
    newton = LogisticRegression(solver="newton", tol=1e-10, **options).fit(Xs, y,
                                                                           sample_weight=sw)
    lbfgs = LogisticRegression(solver="lbfgs", tol=1e-10, max_iter=5000, **options).fit(
        Xs, y, sample_weight=sw)
    assert newton.solver_ == "newton" and lbfgs.solver_ == "lbfgs"
    assert newton.n_iter_[0] < lbfgs.n_iter_[0]
    np.testing.assert_allclose(newton.coef_, lbfgs.coef_, atol=1e-6)
    np.testing.assert_allclose(newton.intercept_, lbfgs.intercept_, atol=1e-6)
    assert np.isclose(newton.objective_, lbfgs.objective_, rtol=1e-10)
    if not options.get("penalize_intercept") and np.ndim(options.get("C", 1.0)) == 0:
        theirs = sklm.LogisticRegression(
            solver="newton-cholesky", tol=1e-10, max_iter=1000,
            fit_intercept=options.get("fit_intercept", True),
            class_weight=options.get("class_weight")).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(newton.coef_, theirs.coef_, atol=1e-6)


def test_newton_with_a_full_covariance_prior_and_without_penalty():
    rng = np.random.RandomState(24)
    X = rng.randn(200, 4)
    y = (X @ [1.0, -2.0, 0.5, 0.0] + 1.5 * rng.randn(200) > 0).astype(int)
    Xs = sp.csr_matrix(X)
    A = np.array([[1.0, 0, 0, 0], [0.8, 0.5, 0, 0], [0.1, -0.3, 1.2, 0], [0, 0.4, 0.2, 0.7]])
    for kwargs in (dict(C=A @ A.T), dict(penalty=None)):
        newton = LogisticRegression(solver="newton", tol=1e-10, **kwargs).fit(Xs, y)
        lbfgs = LogisticRegression(solver="lbfgs", tol=1e-10, max_iter=5000, **kwargs).fit(
            Xs, y)
        np.testing.assert_allclose(newton.coef_, lbfgs.coef_, rtol=1e-5, atol=1e-7)
        assert np.isclose(newton.objective_, lbfgs.objective_, rtol=1e-10)


def test_newton_n_jobs_2_equals_n_jobs_1():
    X, y, sw = _problem(2, seed=25, n_samples=400)
    Xs = sp.csr_matrix(X)
    one = LogisticRegression(solver="newton", tol=1e-10).fit(Xs, y, sample_weight=sw)
    two = LogisticRegression(solver="newton", tol=1e-10, n_jobs=2).fit(Xs, y, sample_weight=sw)
    again = LogisticRegression(solver="newton", tol=1e-10, n_jobs=2).fit(Xs, y,
                                                                          sample_weight=sw)
    np.testing.assert_allclose(two.coef_, one.coef_, atol=1e-8)
    np.testing.assert_array_equal(two.coef_, again.coef_)


def test_auto_solver_choice_by_shape_and_sparsity():
    from linclass.linear.logistic import NEWTON_MAX_PARAMS, logistic_solver
    rng = np.random.default_rng(26)
    narrow = sp.random(500, 50, density=0.1, format="csr", random_state=1)
    wide = sp.random(50, NEWTON_MAX_PARAMS + 5, density=0.001, format="csr", random_state=1)
    dense_rows = sp.csr_matrix(rng.normal(size=(300, 200)))         # 200 entries a row
    assert logistic_solver(narrow, 2, "l2") == "newton"
    assert logistic_solver(narrow, 2, None) == "newton"
    assert logistic_solver(narrow, 3, "l2") == "lbfgs"
    assert logistic_solver(narrow, 2, "l1") == "lbfgs"
    assert logistic_solver(narrow, 2, "elasticnet") == "lbfgs"
    assert logistic_solver(wide, 2, "l2") == "lbfgs"
    assert logistic_solver(dense_rows, 2, "l2") == "lbfgs"
    assert logistic_solver(narrow.toarray(), 2, "l2") == "lbfgs"
    assert logistic_solver(None, 2, "l2") == "lbfgs"
    assert logistic_solver(narrow, 3, "l2", "tron") == "tron"
    # the default path on a realistic sparse binary problem: Newton, the lbfgs optimum
    X = sp.random(2000, 60, density=0.15, format="csr", random_state=2, data_rvs=np.ones)
    y = (X @ rng.normal(size=60) + rng.logistic(size=2000) > 0.5).astype(int)
    auto = LogisticRegression().fit(X, y)
    lbfgs = LogisticRegression(solver="lbfgs").fit(X, y)
    assert auto.solver_ == "newton" and lbfgs.solver_ == "lbfgs"
    assert auto.objective_ <= lbfgs.objective_ * (1 + 1e-6)
    np.testing.assert_array_equal(auto.predict(X), lbfgs.predict(X))


def test_newton_rejects_what_it_cannot_solve():
    X, y, _ = _problem(3)
    with pytest.raises(ValueError, match="newton"):
        LogisticRegression(solver="newton").fit(X, y)
    X2, y2, _ = _problem(2)
    with pytest.raises(ValueError, match="newton"):
        LogisticRegression(solver="newton", penalty="l1").fit(X2, y2)
    with pytest.raises(ValueError, match="solver"):
        LogisticRegression(solver="newton-cg").fit(X2, y2)
    with pytest.warns(ConvergenceWarning):
        LogisticRegression(solver="newton", max_iter=1, tol=1e-14).fit(sp.csr_matrix(X2), y2)


def test_newton_verbose_prints_one_line_per_iteration(capsys):
    X, y, _ = _problem(2, seed=27, n_samples=200)
    model = LogisticRegression(solver="newton", verbose=1).fit(sp.csr_matrix(X), y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == model.n_iter_[0] > 0
    assert all(line.startswith("LogisticRegression newton iter") for line in lines)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_binary_passes_on_indicator_rows_read_indices_alone_same_bits(fit_intercept):
    """On a CSR matrix whose stored values are all 1.0 (a9a-like indicator
    features) the binary loss/gradient and Hessian-vector passes read only the
    column indices (``unit_x``): the same bits as the passes that read the
    values; the model flags such input itself and fits the same coefficients."""
    from linclass._core import _checks, _logistic
    from linclass.linear._common import rows_args
    rng = np.random.default_rng(8)
    X = sp.random(300, 40, density=0.15, format="csr", random_state=8)
    X.data[:] = 1.0
    y = np.where(rng.random(300) < 0.4, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, 300)
    rows = rows_args(X)
    assert _checks.csr_unit_values(rows["data"], True)
    theta = rng.normal(size=40 + fit_intercept) * 0.3
    plain = _logistic.binary_loss_grad(y=y, sample_weight=sw, params=theta,
                                       fit_intercept=fit_intercept, **rows)
    unit = _logistic.binary_loss_grad(y=y, sample_weight=sw, params=theta,
                                      fit_intercept=fit_intercept, unit_x=True, **rows)
    assert plain[0] == unit[0]
    np.testing.assert_array_equal(plain[1], unit[1])
    np.testing.assert_array_equal(plain[2], unit[2])
    hv_plain = _logistic.binary_hess_vec(D=plain[2], v=theta, fit_intercept=fit_intercept,
                                         **rows)
    hv_unit = _logistic.binary_hess_vec(D=plain[2], v=theta, fit_intercept=fit_intercept,
                                        unit_x=True, **rows)
    np.testing.assert_array_equal(hv_plain, hv_unit)
    Xd = X.toarray()                                  # the dense reference
    z = Xd @ theta[:40] + (theta[40] if fit_intercept else 0.0)
    np.testing.assert_allclose(unit[0], np.sum(sw * np.logaddexp(0.0, -y * z)), rtol=1e-12)
    for solver in ("lbfgs", "newton", "tron"):
        model = LogisticRegression(solver=solver, fit_intercept=fit_intercept, tol=1e-10,
                                   max_iter=500).fit(X, y > 0)
        dense = LogisticRegression(solver=solver, fit_intercept=fit_intercept, tol=1e-10,
                                   max_iter=500).fit(Xd, y > 0)
        np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["csr", "indicator", "dense", "threaded"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_hessian_diagonal_is_the_diagonal_of_the_hessian(kind, fit_intercept):
    """TRON's preconditioner: ``hess_diag()`` equals the diagonal of the full
    Hessian on CSR, indicator (index-only), dense and row-block (threaded) input,
    with sample weights; and TRON with it reaches L-BFGS's optimum on data with
    an empty column (its diagonal entry is only the prior's)."""
    from linclass.linear.logistic import ThreadedSum, _ThreadedObjective
    rng = np.random.default_rng(3)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=3)
    if kind == "indicator":
        X.data[:] = 1.0
    X = sp.csr_matrix(X.toarray() * (np.arange(30) != 7))       # column 7 empty
    y = (rng.random(200) < 0.4).astype(np.int32)
    sw = rng.uniform(0.5, 2.0, 200)
    Xin = X.toarray() if kind == "dense" else X
    p = 30 + fit_intercept
    inv_var = np.full(p, 0.5)
    if fit_intercept:
        inv_var[-1] = 0.0
    if kind == "threaded":
        with ThreadedSum(2) as threads:
            objective = _ThreadedObjective(Xin, y, sw, 2, fit_intercept, threads, 2)
            objective.inv_var, objective.scale = inv_var, 200.0
            objective.l2(rng.normal(size=p) * 0.2)
            diag, full = objective.hess_diag(), objective.data_hessian()
        full = (np.diag(full) + inv_var) / 200.0
    else:
        objective = _Objective(Xin, y, sw, 2, fit_intercept, inv_var, 200.0)
        objective.l2(rng.normal(size=p) * 0.2)
        diag, full = objective.hess_diag(), np.diag(objective.hessian())
    np.testing.assert_allclose(diag, full, rtol=1e-12, atol=1e-15)
    tron = LogisticRegression(solver="tron", fit_intercept=fit_intercept, tol=1e-10,
                              max_iter=200).fit(Xin, y, sample_weight=sw)
    lbfgs = LogisticRegression(solver="lbfgs", fit_intercept=fit_intercept, tol=1e-10,
                               max_iter=2000).fit(Xin, y, sample_weight=sw)
    assert np.isclose(tron.objective_, lbfgs.objective_, rtol=1e-9)
    assert tron.coef_[0, 7] == 0.0


def _binary_terms_reference(t, sw, y):
    """The binary loss terms in long double (80-bit on x86-64): the reference
    for linclass's own exp and log1p."""
    tl = np.asarray(t, dtype=np.longdouble)
    e = np.exp(-np.abs(tl))
    loss = np.log1p(e) + np.maximum(-tl, 0)
    q = np.where(tl >= 0, e / (1 + e), 1 / (1 + e))          # sigmoid(-t)
    p = np.where(tl >= 0, 1 / (1 + e), e / (1 + e))          # sigmoid(t), not 1 - q
    return sw * loss, -sw * y * q, sw * p * q


def _margins():
    """Margins over every branch of the kernel: around 0, around the switch of
    log1p's reduction (exp(-|t|) = sqrt(2) - 1), large, near exp's underflow
    (|t| = 708), beyond it, and random ones."""
    rng = np.random.default_rng(11)
    switch = -np.log(np.sqrt(2.0) - 1.0)
    special = np.concatenate([
        [0.0, -0.0, 5e-324, 1e-300, 1e-17, 1e-9, 0.5, 1.0, 36.0, 37.0, 700.0,
         707.9, 708.0, 708.1, 745.0, 746.0, 1e10],
        np.nextafter(switch, [-np.inf, np.inf]), [switch],
        np.logspace(-12, 2.8, 400), rng.normal(scale=3.0, size=3000),
        rng.uniform(-40, 40, size=3000)])
    return np.concatenate([special, -special])


def test_binary_terms_are_within_two_units_in_the_last_place_of_the_exact_values():
    """The vectorised loss terms (own exp and log1p, _logistic_simd.h) against
    long-double references: loss within 2 units in the last place (relative
    4.5e-16), gradient coefficient and curvature within 4."""
    from linclass._core import _logistic
    t = _margins()
    rng = np.random.default_rng(12)
    y = np.where(rng.random(t.size) < 0.5, 1.0, -1.0)
    sw = rng.uniform(0.25, 4.0, t.size)
    loss, coef, D = _logistic.binary_terms(t, sw, y)
    ref = _binary_terms_reference(t, sw, y)
    eps = np.finfo(np.float64).eps
    for got, want, ulps in zip((loss, coef, D), ref, (2, 4, 4)):
        want = want.astype(np.float64)
        tiny = np.abs(want) < 1e-300                 # exp(-|t|) below 3.4e-308 is taken as 0
        assert np.all(np.abs(got[tiny]) < 1e-300)
        rel = np.abs(got[~tiny] - want[~tiny]) / np.abs(want[~tiny])
        assert rel.max() <= ulps * eps, (rel.max() / eps, t[~tiny][np.argmax(rel)])
    assert np.array_equal(loss[t >= 746.0], np.zeros(np.sum(t >= 746.0)))


def test_binary_terms_of_infinite_and_nan_margins():
    from linclass._core import _logistic
    t = np.array([np.inf, -np.inf, np.nan])
    loss, coef, D = _logistic.binary_terms(t, np.ones(3), np.ones(3))
    assert loss[0] == 0.0 and coef[0] == 0.0 and D[0] == 0.0
    assert loss[1] == np.inf and coef[1] == -1.0 and D[1] == 0.0
    assert np.isnan(loss[2]) and np.isnan(coef[2]) and np.isnan(D[2])
    with pytest.raises(ValueError, match="same non-zero length"):
        _logistic.binary_terms(t, np.ones(2), np.ones(3))


def test_binary_terms_give_the_same_bits_at_every_vector_level():
    """The baseline C and the AVX2 build of the loss terms compute the same
    elementwise operations (no contraction into FMA): the same bits, and so
    the same fits on every CPU."""
    from linclass._core import _logistic
    t = _margins()
    rng = np.random.default_rng(13)
    y = np.where(rng.random(t.size) < 0.5, 1.0, -1.0)
    sw = rng.uniform(0.25, 4.0, t.size)
    best = _logistic.simd_level()
    try:
        assert _logistic.simd_level(0) == 0
        base = _logistic.binary_terms(t, sw, y)
        assert _logistic.simd_level(best) == best
        vector = _logistic.binary_terms(t, sw, y)
    finally:
        _logistic.simd_level(best)
    for a, b in zip(base, vector):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_rows", [1, 255, 256, 257, 1000])
def test_binary_pass_in_blocks_matches_numpy(n_rows):
    """binary_pass works in blocks of 256 rows: loss, gradient and curvature
    equal the numpy reference for row counts around the block size."""
    from linclass._core import _logistic
    from linclass.linear._common import rows_args
    rng = np.random.default_rng(n_rows)
    X = sp.random(n_rows, 25, density=0.3, format="csr", random_state=n_rows)
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, n_rows)
    theta = rng.normal(size=26)
    loss, grad, D = _logistic.binary_loss_grad(y=y, sample_weight=sw, params=theta,
                                               fit_intercept=True, **rows_args(X))
    z = X @ theta[:25] + theta[25]
    p = 1.0 / (1.0 + np.exp(-z))
    r = sw * (p - (y > 0))
    assert np.isclose(loss, np.sum(sw * np.logaddexp(0.0, -y * z)), rtol=1e-13)
    np.testing.assert_allclose(grad, np.append(X.T @ r, r.sum()), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(D, sw * p * (1 - p), rtol=1e-12, atol=1e-300)


def test_tron_cg_stops_at_the_callers_residual_goal():
    """TRON's CG stops once ``||r|| <= r_goal``: the step it returns has a
    residual below the goal, ``r = -g - H s`` holds, and it took fewer
    Hessian-vector products than the run without a goal (which goes on to
    TRON's relative rule); with ``r_goal=0`` nothing changes."""
    from linclass.linear.logistic import _truncated_cg
    rng = np.random.default_rng(21)
    A = rng.normal(size=(60, 60))
    H = A @ A.T / 60 + np.diag(np.logspace(-2, 1, 60))
    g = rng.normal(size=60)
    M = np.diag(H).copy()
    calls = []

    def hess_vec(v):
        calls.append(1)
        return H @ v

    s_full, r_full = _truncated_cg(hess_vec, g, 1e6, M)
    n_full = len(calls)
    np.testing.assert_allclose(r_full, -g - H @ s_full, atol=1e-10)
    goal = 0.5 * np.linalg.norm(g)
    calls.clear()
    s, r = _truncated_cg(hess_vec, g, 1e6, M, goal)
    assert np.linalg.norm(r) <= goal
    np.testing.assert_allclose(r, -g - H @ s, atol=1e-10)
    assert 0 < len(calls) < n_full
    calls.clear()
    s0, r0 = _truncated_cg(hess_vec, g, 1e6, M, 0.0)
    np.testing.assert_array_equal(s0, s_full)
    assert len(calls) == n_full


@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_tron_meets_its_stopping_rule_at_the_liblinear_tolerances(tol):
    """With the residual goal, TRON still ends with ``||g|| <= tol ||g0||``
    (reported as converged) on a realistic sparse problem."""
    from linclass.linear.logistic import _tron
    rng = np.random.default_rng(22)
    X = sp.random(2000, 60, density=0.1, format="csr", random_state=22)
    y = (X @ rng.normal(size=60) + 0.3 * rng.logistic(size=2000) > 0).astype(np.int32)
    obj = _Objective(X, y, np.ones(2000), 2, True, np.full(61, 1.0), 2000.0)
    g0 = obj.l2(np.zeros(61))[1]
    theta, f, n_iter, converged = _tron(obj, np.zeros(61), tol=tol, max_iter=100)
    assert converged
    assert np.linalg.norm(obj.l2(theta)[1]) <= tol * np.linalg.norm(g0)


def _logistic_simd_constants():
    """The ``#define LC_...`` numbers of the shipped ``_logistic_simd.h``."""
    import pathlib
    import re
    import linclass._core
    text = (pathlib.Path(linclass._core.__file__).parent / "_logistic_simd.h").read_text()
    found = re.findall(r"^#define LC_(\w+) \(?(-?[0-9][0-9.e+-]*)\)?", text, re.M)
    return {name: float(value) for name, value in found}


def _binary_terms_transcribed(t, sw, y):
    """_logistic_simd.h's operations, one numpy ufunc each in the C's order:
    IEEE arithmetic gives every one of them a single correct result, so the
    compiled kernel (any vector level, any build) must match bit for bit."""
    K = _logistic_simd_constants()
    P = [K["EXP_P%d" % i] for i in range(10)]
    G = [K["LOG_G%d" % i] for i in range(7)]
    with np.errstate(all="ignore"):
        x = -np.abs(t)
        xc = np.where(x < K["EXP_MIN"], K["EXP_MIN"], x)
        kd = xc * K["INV_LN2"] + K["SHIFT"]
        kbits = kd.view(np.uint64)
        kd = kd - K["SHIFT"]
        r = (xc - kd * K["LN2_HI"]) - kd * K["LN2_LO"]
        r2 = r * r
        r4 = r2 * r2
        r8 = r4 * r4
        p01, p23 = P[0] + P[1] * r, P[2] + P[3] * r
        p45, p67 = P[4] + P[5] * r, P[6] + P[7] * r
        p89 = P[8] + P[9] * r
        poly = ((p01 + p23 * r2) + (p45 + p67 * r2) * r4) + p89 * r8
        er = 1.0 + (r + r2 * poly)
        shift_bits = np.array([K["SHIFT"]]).view(np.uint64)[0]
        scale = ((kbits - shift_bits + np.uint64(1023)) << np.uint64(52)).view(np.float64)
        e = np.where(x < K["EXP_MIN"], 0.0, er * scale)
        u = 1.0 + e
        ru = 1.0 / u
        eru = e * ru
        c = (e - (u - 1.0)) * ru
        big = u > K["SQRT2"]
        j = np.where(big, 1.0, 0.0)
        f = np.where(big, 0.5 * u, u) - 1.0
        s = f / (2.0 + f)
        z = s * s
        z2 = z * z
        z4 = z2 * z2
        R = z * (((G[0] + G[1] * z) + (G[2] + G[3] * z) * z2)
                 + ((G[4] + G[5] * z) + G[6] * z2) * z4)
        hfsq = 0.5 * f * f
        lg = j * K["LN2_HI"] + (f - (hfsq - (s * (hfsq + R) + (j * K["LN2_LO"] + c))))
        pos = t >= 0.0
        p = np.where(pos, ru, eru)
        q = np.where(pos, eru, ru)
        return sw * np.where(pos, lg, lg - t), -(sw * q) * y, (sw * p) * q


def test_binary_terms_equal_their_transcription_bit_for_bit():
    """The compiled loss terms give exactly the bits of their operations done
    one by one in numpy: no contraction into FMA, no reordering, on this CPU's
    level and on the baseline (and so on every machine)."""
    from linclass._core import _logistic
    t = np.concatenate([_margins(), [np.inf, -np.inf, np.nan]])
    rng = np.random.default_rng(14)
    y = np.where(rng.random(t.size) < 0.5, 1.0, -1.0)
    sw = rng.uniform(0.25, 4.0, t.size)
    want = _binary_terms_transcribed(t, sw, y)
    best = _logistic.simd_level()
    try:
        for level in (best, 0):
            _logistic.simd_level(level)
            for got, ref in zip(_logistic.binary_terms(t, sw, y), want):
                np.testing.assert_array_equal(got, ref)
    finally:
        _logistic.simd_level(best)
