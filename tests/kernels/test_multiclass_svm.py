"""KernelMultiClassSVM: the dual structural SVM against the primal solvers and scipy."""
import numpy as np
import pytest
import scipy.optimize

import linclass
from linclass import CrammerSingerSVC, MultiClassSVM
from linclass.joint import TaxonomyStructure
from linclass.kernels import KernelFunction, KernelMultiClassSVM, SpectrumKernel, rbf_kernel


def _data(n=60, d=5, k=4, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centres[y] + rng.normal(size=(n, d))
    return X, y


def _primal(coef, intercept, X, y, C, scaling=1.0, L=None):
    """1/2 (||W||^2 + ||w_bias||^2) + C sum_i max_c [L(y_i, c) + s_c - s_{y_i}]."""
    S = X @ coef.T + intercept
    k = S.shape[1]
    L = 1.0 - np.eye(k) if L is None else L
    hinge = np.max(L[y] + S - S[np.arange(len(y)), y][:, None], axis=1)
    bias = intercept / scaling
    return 0.5 * (np.sum(coef ** 2) + np.sum(bias ** 2)) + C * hinge.sum()


def _dual_value(K, y, G, L, C, alpha):
    n, k = alpha.shape
    beta = C * np.eye(k)[y] - alpha
    return -np.sum(beta * L[y]) - 0.5 * np.sum((K @ beta @ G) * beta)


def _slsqp_dual(K, y, G, L, C):
    """max_alpha D over alpha_i >= 0, sum_c alpha_ic = C, by scipy's SLSQP."""
    n, k = len(y), G.shape[0]

    def negative(a):
        return -_dual_value(K, y, G, L, C, a.reshape(n, k))

    def gradient(a):
        alpha = a.reshape(n, k)
        beta = C * np.eye(k)[y] - alpha
        return -(L[y] + K @ beta @ G).ravel()

    cons = {"type": "eq", "fun": lambda a: a.reshape(n, k).sum(axis=1) - C,
            "jac": lambda a: np.kron(np.eye(n), np.ones((1, k)))}
    x0 = (C * np.eye(k)[y]).ravel()
    res = scipy.optimize.minimize(negative, x0, jac=gradient, method="SLSQP",
                                  bounds=[(0, None)] * (n * k), constraints=[cons],
                                  options={"ftol": 1e-14, "maxiter": 2000})
    assert res.success, res.message
    return -res.fun


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_linear_kernel_equals_crammer_singer(C):
    X, y = _data()
    kernel = KernelMultiClassSVM(kernel="linear", C=C, tol=1e-10, max_iter=100000,
                                 random_state=0).fit(X, y)
    primal = CrammerSingerSVC(C=C, tol=1e-9, max_iter=100000, random_state=0).fit(X, y)
    p_kernel = _primal(kernel.coef_, kernel.intercept_, X, y, C)
    p_primal = _primal(primal.coef_, primal.intercept_, X, y, C)
    assert p_kernel == pytest.approx(kernel.objective_, rel=1e-9)
    assert p_kernel == pytest.approx(p_primal, rel=1e-6)
    assert kernel.dual_objective_ == pytest.approx(kernel.objective_, rel=1e-9)
    np.testing.assert_array_equal(kernel.predict(X), primal.predict(X))
    np.testing.assert_allclose(kernel.coef_, primal.coef_, atol=1e-4)


def test_linear_kernel_equals_multiclass_svm_without_intercept():
    X, y = _data(seed=1)
    kernel = KernelMultiClassSVM(kernel="linear", C=0.5, fit_intercept=False, tol=1e-10,
                                 max_iter=100000, random_state=0).fit(X, y)
    primal = MultiClassSVM(C=0.5, fit_intercept=False, tol=1e-9, max_iter=100000,
                           random_state=0).fit(X, y)
    assert kernel.objective_ == pytest.approx(primal.objective_, rel=1e-6)
    np.testing.assert_array_equal(kernel.predict(X), primal.predict(X))
    np.testing.assert_allclose(kernel.intercept_, 0.0)


@pytest.mark.parametrize("structure", ["onehot", "description", "taxonomy"])
def test_dual_objective_equals_slsqp(structure):
    X, y = _data(n=8, d=3, k=4, seed=2)
    C = 0.7
    kwargs = {}
    if structure == "description":
        rng = np.random.default_rng(3)
        kwargs["class_descriptions"] = rng.uniform(0.1, 1.0, size=(4, 3))
    if structure == "taxonomy":
        kwargs["taxonomy"] = {0: ("a", "a0"), 1: ("a", "a1"), 2: ("b", "b0"), 3: ("b", "b1")}
    model = KernelMultiClassSVM(structure, kernel="rbf", gamma=0.3, C=C, fit_intercept=False,
                                tol=1e-12, max_iter=100000, random_state=0, **kwargs).fit(X, y)
    K = rbf_kernel(X, gamma=0.3)
    Lam = model.class_vectors_
    if structure == "taxonomy":
        L = TaxonomyStructure(1, [kwargs["taxonomy"][c] for c in range(4)]).loss_matrix
    else:
        L = 1.0 - np.eye(4)
    reference = _slsqp_dual(K, y, Lam @ Lam.T, L, C)
    assert model.dual_objective_ == pytest.approx(reference, rel=1e-6, abs=1e-9)
    assert model.objective_ == pytest.approx(reference, rel=1e-6, abs=1e-9)
    # the stored dual point gives the stored dual objective
    beta = np.zeros((len(y), 4))
    beta[model.support_] = model.dual_coef_.T
    alpha = C * np.eye(4)[y] - beta
    assert alpha.min() >= -1e-12
    np.testing.assert_allclose(alpha.sum(axis=1), C)
    assert _dual_value(K, y, Lam @ Lam.T, L, C, alpha) == pytest.approx(model.dual_objective_,
                                                                         rel=1e-9, abs=1e-12)


def test_identity_descriptions_equal_onehot():
    X, y = _data(seed=4)
    common = dict(kernel="rbf", gamma=0.2, C=2.0, tol=1e-9, max_iter=100000, random_state=0)
    onehot = KernelMultiClassSVM(**common).fit(X, y)
    described = KernelMultiClassSVM("description", class_descriptions=np.eye(4), **common)
    described.fit(X, y)
    assert described.objective_ == pytest.approx(onehot.objective_, rel=1e-7)
    np.testing.assert_allclose(described.decision_function(X), onehot.decision_function(X),
                               atol=1e-4)
    np.testing.assert_array_equal(described.predict(X), onehot.predict(X))


def test_taxonomy_equals_path_descriptions_and_linear_primal():
    X, y = _data(seed=5)
    taxonomy = {0: ("a", "a0"), 1: ("a", "a1"), 2: ("b", "b0"), 3: ("b", "b1")}
    tree = TaxonomyStructure(1, [taxonomy[c] for c in range(4)])
    common = dict(kernel="linear", C=1.0, tol=1e-9, max_iter=100000, random_state=0)
    by_tree = KernelMultiClassSVM("taxonomy", taxonomy=taxonomy, **common).fit(X, y)
    by_paths = KernelMultiClassSVM("description", class_descriptions=tree.class_vectors,
                                   loss_matrix=tree.loss_matrix, **common).fit(X, y)
    assert by_tree.objective_ == pytest.approx(by_paths.objective_, rel=1e-7)
    primal = MultiClassSVM("taxonomy", taxonomy=taxonomy, C=1.0, method="1-slack", tol=1e-6,
                           max_iter=2000).fit(X, y)
    assert by_tree.objective_ == pytest.approx(primal.objective_, rel=1e-6)
    np.testing.assert_array_equal(by_tree.predict(X), primal.predict(X))


def test_description_predicts_an_unseen_class():
    X, y = _data(seed=6, k=3)
    D = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    model = KernelMultiClassSVM("description", class_descriptions=D, classes=[0, 1, 2],
                                kernel="rbf", gamma=0.5, tol=1e-6).fit(X[y < 2], y[y < 2])
    assert model.decision_function(X).shape == (len(X), 3)
    assert set(model.classes_) == {0, 1, 2}


def test_rbf_separates_what_linear_cannot():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(200, 2))
    radius = np.hypot(X[:, 0], X[:, 1])
    y = np.digitize(radius, [0.45, 0.8])             # three rings
    rbf = KernelMultiClassSVM(kernel="rbf", gamma=5.0, C=10.0, random_state=0).fit(X, y)
    linear = KernelMultiClassSVM(kernel="linear", C=10.0, random_state=0).fit(X, y)
    assert rbf.score(X, y) > 0.9 > linear.score(X, y)
    assert 0 < len(rbf.support_) <= len(X)
    np.testing.assert_allclose(rbf.dual_coef_.sum(axis=0), 0.0, atol=1e-9)


def test_precomputed_and_callable_equal_named():
    X, y = _data(seed=8)
    common = dict(C=1.0, tol=1e-9, max_iter=100000, random_state=0)
    named = KernelMultiClassSVM(kernel="rbf", gamma=0.3, **common).fit(X, y)
    K = rbf_kernel(X, gamma=0.3)
    pre = KernelMultiClassSVM(kernel="precomputed", **common).fit(K, y)
    obj = KernelMultiClassSVM(kernel=KernelFunction("rbf", gamma=0.3), **common).fit(X, y)
    Xt, _ = _data(n=10, seed=9)
    Kt = rbf_kernel(Xt, X, gamma=0.3)
    np.testing.assert_allclose(pre.decision_function(Kt), named.decision_function(Xt),
                               atol=1e-8)
    np.testing.assert_allclose(obj.decision_function(Xt), named.decision_function(Xt),
                               atol=1e-8)


def test_string_kernel_on_sequences(tmp_path):
    docs = ["aab", "aaa", "aba", "bbb", "bba", "bab", "ccc", "cca", "cac"]
    y = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    model = KernelMultiClassSVM(kernel=SpectrumKernel(1), C=10.0, random_state=0).fit(docs, y)
    assert model.score(docs, y) == 1.0
    model.save(tmp_path / "m")
    loaded = linclass.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.decision_function(docs), model.decision_function(docs))


def test_not_psd_kernel_is_refused():
    X, y = _data(n=20, seed=10)
    K = rbf_kernel(X, gamma=0.3)
    K_bad = K - 2.0 * np.eye(len(K))                 # negative eigenvalues
    with pytest.raises(ValueError, match="eigenvalue"):
        KernelMultiClassSVM(kernel="precomputed").fit(K_bad, y)
    with pytest.raises(ValueError, match="symmetric"):
        KernelMultiClassSVM(kernel="precomputed").fit(K + np.triu(K, 1), y)
    with pytest.raises(ValueError, match="eigenvalue"):
        KernelMultiClassSVM(kernel="sigmoid", gamma=5.0, coef0=-3.0).fit(X, y)
    # documented handling without the check: a stationary point (every block optimal
    # up to the tolerance: the blocks' Frank--Wolfe gaps sum to at most tol |P|)
    C = 1.0
    model = KernelMultiClassSVM(kernel="precomputed", check_kernel=False, C=C, tol=1e-6,
                                max_iter=10000).fit(K_bad, y)
    beta = np.zeros((len(y), 4))
    beta[model.support_] = model.dual_coef_.T
    g = (1.0 - np.eye(4))[y] + (K_bad + 1.0) @ beta      # + 1: the intercept's constant
    alpha = C * np.eye(4)[y] - beta
    gaps = C * g.max(axis=1) - np.sum(alpha * g, axis=1)
    assert gaps.min() >= -1e-9
    assert gaps.sum() <= 1e-6 * abs(model.objective_) + 1e-12
    assert gaps.sum() == pytest.approx(model.objective_ - model.dual_objective_, abs=1e-9)


def test_bad_input():
    X, y = _data(n=20, seed=11)
    with pytest.raises(ValueError, match="C"):
        KernelMultiClassSVM(C=-1.0).fit(X, y)
    with pytest.raises(ValueError):
        KernelMultiClassSVM(kernel="nope").fit(X, y)
    with pytest.raises(ValueError, match="square"):
        KernelMultiClassSVM(kernel="precomputed").fit(X, y)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError):
        KernelMultiClassSVM().fit(X_nan, y)
    with pytest.raises(ValueError, match="description"):
        KernelMultiClassSVM("description").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        KernelMultiClassSVM().fit(X, y).predict(X[:, :2])


def test_save_load_and_edited_state(tmp_path):
    X, y = _data(seed=12)
    model = KernelMultiClassSVM(kernel="rbf", gamma=0.3, random_state=0).fit(X, y)
    model.save(tmp_path / "m")
    loaded = linclass.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X))
    broken = KernelMultiClassSVM(kernel="rbf", gamma=0.3, random_state=0).fit(X, y)
    broken.dual_coef_ = broken.dual_coef_[:, :3]
    with pytest.raises(ValueError):
        broken._check_state()


def test_sklearn_clone_and_params():
    sklearn = pytest.importorskip("sklearn.base")
    model = KernelMultiClassSVM(C=3.0, kernel="poly", degree=2)
    clone = sklearn.clone(model)
    assert clone.get_params()["C"] == 3.0 and clone.get_params()["degree"] == 2


# -- kernel rows on demand (LRU cache) ------------------------------------------------
@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.3}),
                                            ("poly", {"gamma": 0.2, "degree": 2}),
                                            ("linear", {})])
def test_cache_size_does_not_change_the_result(kernel, params):
    """A cache holding one row (every row recomputed) and one holding all rows give the
    same solution, bit for bit; it equals the full-Gram path (a precomputed Gram)."""
    X, y = _data(n=80, k=4, seed=3)
    common = dict(kernel=kernel, C=0.7, tol=1e-6, random_state=0, **params)
    tiny = KernelMultiClassSVM(cache_size=1e-9, **common).fit(X, y)
    big = KernelMultiClassSVM(cache_size=200, **common).fit(X, y)
    np.testing.assert_array_equal(tiny.dual_coef_, big.dual_coef_)
    np.testing.assert_array_equal(tiny.support_, big.support_)
    assert tiny.objective_ == big.objective_ and tiny.n_iter_ == big.n_iter_
    assert tiny.n_kernel_rows_ > big.n_kernel_rows_          # rows were evicted and redone
    assert big.n_kernel_rows_ <= len(y)
    K = linclass.kernels.pairwise_kernels(X, kernel=kernel, **params)
    full = KernelMultiClassSVM(kernel="precomputed", C=0.7, tol=1e-6, random_state=0,
                               check_kernel=False).fit(K, y)
    assert full.n_kernel_rows_ == len(y)
    # the same problem to tol 1e-6 (round-off steers the two paths apart a little;
    # the primal solution is unique, the dual one need not be)
    assert full.objective_ == pytest.approx(big.objective_, rel=2e-6)
    np.testing.assert_allclose(full.decision_function(K), big.decision_function(X), atol=1e-3)


def test_sparse_rows_equal_dense_rows_and_taxonomy_uses_the_cache():
    sp = pytest.importorskip("scipy.sparse")
    X, y = _data(n=70, k=4, seed=4)
    X[np.abs(X) < 0.8] = 0.0
    names = np.array(["a.x", "a.y", "b.z", "c"])[y]
    tax = {n: tuple(n.split(".")) for n in names}
    dense = KernelMultiClassSVM("taxonomy", taxonomy=tax, gamma=0.2, tol=1e-6,
                                cache_size=1e-9, random_state=1).fit(X, names)
    sparse = KernelMultiClassSVM("taxonomy", taxonomy=tax, gamma=0.2, tol=1e-6,
                                 random_state=1).fit(sp.csr_matrix(X), names)
    np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, atol=1e-10)
    np.testing.assert_array_equal(sparse.predict(X), dense.predict(X))


def test_cache_size_and_overflow_are_refused():
    X, y = _data(n=30)
    for bad in (0.0, -1.0, np.nan, "x"):
        with pytest.raises(ValueError, match="cache_size"):
            KernelMultiClassSVM(cache_size=bad).fit(X, y)
    with pytest.raises(ValueError, match="overflows"):
        KernelMultiClassSVM(kernel="poly", degree=200, gamma=1.0).fit(X * 1e3, y)
