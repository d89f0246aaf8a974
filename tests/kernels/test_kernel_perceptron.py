"""Kernel perceptron: primal equivalence, convergence on separable data, budget, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.kernels.kernel_perceptron import KernelPerceptron
from linclass.kernels import pairwise_kernels


def _primal_mistakes(X, y01, n_epochs):
    """The textbook primal perceptron (no bias), visiting rows in order."""
    w = np.zeros(X.shape[1])
    y_pm = np.where(y01 == 1, 1.0, -1.0)
    mistakes = []
    for _ in range(n_epochs):
        m = 0
        for x, t in zip(X, y_pm):
            if t * (w @ x) <= 0:
                w += t * x
                m += 1
        mistakes.append(m)
    return np.array(mistakes), w


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_kernel_makes_the_primal_mistakes(seed, sparse):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    y = (X @ rng.normal(size=4) + 0.3 * rng.normal(size=60) > 0).astype(int)
    mistakes, w = _primal_mistakes(X, y, 5)
    model = KernelPerceptron(kernel="linear", max_iter=5, shuffle=False, average=False)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(sp.csr_matrix(X) if sparse else X, y)
    np.testing.assert_array_equal(model.mistakes_, mistakes[:model.n_iter_])
    # same weight vector: 1/2 (a_1 - a_0) summed over support vectors
    w_dual = 0.5 * (model.dual_coef_[1] - model.dual_coef_[0]) @ X[model.support_]
    np.testing.assert_allclose(w_dual, w, atol=1e-12)


def test_separable_rbf_converges_and_fits():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (np.linalg.norm(X, axis=1) > 1.1).astype(int)        # a circle: not linearly separable
    model = KernelPerceptron(kernel="rbf", gamma=2.0, max_iter=50, random_state=0).fit(X, y)
    assert model.mistakes_[-1] == 0 and model.n_iter_ < 50
    assert model.score(X, y) == 1.0 or not model.average
    last = KernelPerceptron(kernel="rbf", gamma=2.0, max_iter=50, random_state=0,
                            average=False).fit(X, y)
    assert last.score(X, y) == 1.0                           # converged: no training error


def test_multiclass_and_cache_budget_invariance():
    rng = np.random.default_rng(2)
    centers = rng.normal(scale=3, size=(4, 3))
    y = rng.integers(0, 4, size=150)
    X = centers[y] + rng.normal(size=(150, 3))
    kwargs = dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0, max_iter=8, random_state=3)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        big = KernelPerceptron(cache_size=50, **kwargs).fit(X, y)
        tiny = KernelPerceptron(cache_size=1e-6, **kwargs).fit(X, y)
    np.testing.assert_array_equal(big.dual_coef_, tiny.dual_coef_)
    assert big.decision_function(X).shape == (150, 4)
    assert big.score(X, y) > 0.8


@pytest.mark.parametrize("average", [False, True])
def test_budget_is_respected(average):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=300) > 0).astype(int)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KernelPerceptron(budget=25, average=average, random_state=0).fit(X, y)
        free = KernelPerceptron(average=average, random_state=0).fit(X, y)
    assert len(model.support_) <= 25 < len(free.support_)
    assert model.dual_coef_.shape == (2, len(model.support_))


def test_precomputed_equals_builtin():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    K = pairwise_kernels(X, kernel="rbf", gamma=0.5)
    a = KernelPerceptron(kernel="rbf", gamma=0.5, random_state=1).fit(X, y)
    b = KernelPerceptron(kernel="precomputed", random_state=1).fit(K, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(K), atol=1e-5)


@pytest.mark.parametrize("params,match", [
    (dict(gamma=-1.0), "gamma"), (dict(kernel="poly", degree=0), "degree"),
    (dict(budget=0), "budget"), (dict(cache_size=0), "cache_size"),
    (dict(max_iter=0), "max_iter"), (dict(kernel="nope"), "kernel")])
def test_bad_parameters(params, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=match):
        KernelPerceptron(**params).fit(X, y)


def test_unequal_sample_weight_rejected():
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="equal sample weights"):
        KernelPerceptron().fit(X, y, sample_weight=np.arange(20) + 1.0)
