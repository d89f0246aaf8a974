"""Kernels against scikit-learn / numpy and explicit feature maps; bad parameters."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.kernels import pairwise_kernels

pairwise = pytest.importorskip("sklearn.metrics.pairwise")


def _data(seed, sparse):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(13, 6)) * (rng.random((13, 6)) < 0.6)
    Y = rng.normal(size=(7, 6)) * (rng.random((7, 6)) < 0.6)
    return (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)


@pytest.mark.parametrize("sparse_x,sparse_y", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("kernel,params", [
    ("linear", {}), ("poly", dict(gamma=0.3, degree=3, coef0=1.5)),
    ("poly", dict(gamma=1.0, degree=1, coef0=0.0)), ("rbf", dict(gamma=0.7)),
    ("sigmoid", dict(gamma=0.2, coef0=-0.5))])
def test_matches_sklearn(kernel, params, sparse_x, sparse_y):
    X, _ = _data(0, sparse_x)
    _, Y = _data(1, sparse_y)
    ours = pairwise_kernels(X, Y, kernel=kernel, **params)
    ref = pairwise.pairwise_kernels(X, Y, metric=kernel, **params)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_polynomial_equals_explicit_feature_map():
    # (x.x' + 1)^2 = phi(x).phi(x') with phi = (1, sqrt2 x_i, x_i^2, sqrt2 x_i x_j (i<j))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 3))

    def phi(x):
        feats = [1.0] + list(np.sqrt(2) * x) + list(x ** 2)
        feats += [np.sqrt(2) * x[i] * x[j] for i in range(3) for j in range(i + 1, 3)]
        return np.array(feats)

    P = np.array([phi(x) for x in X])
    np.testing.assert_allclose(pairwise_kernels(X, kernel="poly", gamma=1.0, degree=2,
                                                coef0=1.0), P @ P.T, rtol=1e-12)
    np.testing.assert_allclose(pairwise_kernels(sp.csr_matrix(X), kernel="poly", gamma=1.0,
                                                degree=2, coef0=1.0), P @ P.T, rtol=1e-12)


def test_callable_and_precomputed():
    X, Y = _data(2, False)
    K = pairwise_kernels(X, Y, kernel=lambda A, B: A @ B.T)
    np.testing.assert_allclose(K, X @ Y.T)
    G = X @ X.T
    np.testing.assert_array_equal(pairwise_kernels(G, kernel="precomputed"), G)


@pytest.mark.parametrize("kernel,params,match", [
    ("rbf", dict(gamma=-1.0), "gamma"), ("rbf", dict(gamma=0.0), "gamma"),
    ("poly", dict(degree=0), "degree"), ("poly", dict(degree=2.5), "degree"),
    ("poly", dict(coef0=np.nan), "coef0"), ("linear", dict(gamma=1.0), "unexpected"),
    ("laplacian", {}, "kernel must be one of")])
def test_bad_parameters(kernel, params, match):
    X, _ = _data(0, False)
    with pytest.raises(ValueError, match=match):
        pairwise_kernels(X, kernel=kernel, **params)


def test_callable_nonfinite_or_wrong_shape():
    X, _ = _data(0, False)
    with pytest.raises(ValueError, match="non-finite"):
        pairwise_kernels(X, kernel=lambda A, B: np.full((len(A), len(B)), np.nan))
    with pytest.raises(ValueError, match="shape"):
        pairwise_kernels(X, kernel=lambda A, B: np.ones((2, 2)))


def test_feature_mismatch():
    with pytest.raises(ValueError, match="features"):
        pairwise_kernels(np.ones((2, 3)), np.ones((2, 4)), kernel="rbf")
