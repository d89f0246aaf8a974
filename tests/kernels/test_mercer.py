"""MercerMap: m = n reproduces the kernel matrix; agreement with
scikit-learn's Nystroem; landmarks; bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.kernels.mercer import MercerMap, kernel_matrix
from linclass.linear.svm import LinearSVC


def _data(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d))


@pytest.mark.parametrize("kernel, params", [("rbf", dict(gamma=0.3)),
                                            ("poly", dict(degree=2, gamma=0.5, coef0=1.0)),
                                            ("linear", {})])
@pytest.mark.parametrize("landmarks", ["uniform", "kmeans++"])
def test_all_points_as_landmarks_reproduce_the_kernel_matrix(kernel, params, landmarks):
    X = _data()
    phi = MercerMap(n_landmarks=X.shape[0], kernel=kernel, landmarks=landmarks,
                    random_state=0, **params).fit_transform(X)
    K = kernel_matrix(X, X, kernel=kernel, **params)
    np.testing.assert_allclose(phi @ phi.T, K, atol=1e-7)


def test_kernel_matrix_against_brute_force_and_sparse():
    X = _data(20, 4, seed=1)
    Y = _data(7, 4, seed=2)
    brute = np.array([[np.exp(-0.2 * np.sum((a - b) ** 2)) for b in Y] for a in X])
    np.testing.assert_allclose(kernel_matrix(X, Y, gamma=0.2), brute, rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(sp.csr_matrix(X), Y, gamma=0.2), brute,
                               rtol=1e-10)
    poly = (0.5 * X @ Y.T + 2.0) ** 3
    np.testing.assert_allclose(kernel_matrix(X, Y, kernel="poly", gamma=0.5, coef0=2.0),
                               poly, rtol=1e-12)


def test_landmark_kernel_exact_and_matches_sklearn_nystroem():
    sk = pytest.importorskip("sklearn.kernel_approximation")
    X = _data(200, 6, seed=3)
    ours = MercerMap(n_landmarks=40, gamma=0.2, random_state=0).fit(X)
    L = ours.landmarks_
    # exact on the landmarks: phi(X_m) phi(X_m)^T = K_mm
    phi_L = ours.transform(L)
    np.testing.assert_allclose(phi_L @ phi_L.T, kernel_matrix(L, L, gamma=0.2), atol=1e-8)
    # same approximate kernel as scikit-learn's Nystroem on the same landmarks
    peer = sk.Nystroem(kernel="rbf", gamma=0.2, n_components=40, random_state=0).fit(L)
    a, b = ours.transform(X), peer.transform(X)
    np.testing.assert_allclose(a @ a.T, b @ b.T, atol=1e-6)


def test_more_landmarks_approximate_better_and_kmeanspp_helps():
    # four well separated clusters: uniform landmarks may miss one, k-means++ not
    X = np.vstack([_data(100, 3, seed=s) + 6 * s for s in range(4)])
    K = kernel_matrix(X, X, gamma=0.5)

    def err(m, how, seed):
        phi = MercerMap(n_landmarks=m, gamma=0.5, landmarks=how,
                        random_state=seed).fit_transform(X)
        return np.linalg.norm(phi @ phi.T - K) / np.linalg.norm(K)

    assert err(80, "uniform", 0) < err(10, "uniform", 0)
    uniform = np.mean([err(8, "uniform", s) for s in range(5)])
    kmeanspp = np.mean([err(8, "kmeans++", s) for s in range(5)])
    assert kmeanspp < uniform


def test_linear_svm_on_the_map_learns_a_nonlinear_rule():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = (np.sum(X ** 2, axis=1) < 0.5).astype(int)        # a disc: not linearly separable
    linear = LinearSVC(random_state=0).fit(X, y).score(X, y)
    phi = MercerMap(n_landmarks=100, gamma=2.0, random_state=0).fit(X)
    kernel = LinearSVC(C=10, random_state=0, max_iter=5000).fit(phi.transform(X), y)
    assert kernel.score(phi.transform(X), y) > 0.95 > linear


def test_repeated_landmarks_stay_finite():
    X = np.ones((10, 3))
    phi = MercerMap(n_landmarks=10, random_state=0).fit(X)
    assert phi.n_components_ == 1
    assert np.isfinite(phi.transform(X)).all()


def test_more_landmarks_than_samples_uses_every_sample_with_a_warning():
    X = _data(30)
    with pytest.warns(UserWarning, match="exceeds the number of samples"):
        big = MercerMap(n_landmarks=100, random_state=0).fit(X)
    exact = MercerMap(n_landmarks=30, random_state=0).fit(X)
    assert len(big.landmark_indices_) == 30
    np.testing.assert_allclose(np.abs(big.transform(X)), np.abs(exact.transform(X)),
                               atol=1e-8)


@pytest.mark.parametrize("params, match", [
    (dict(n_landmarks=0), "n_landmarks"),
    (dict(n_landmarks=5, kernel="sigmoid"), "kernel"),
    (dict(n_landmarks=5, gamma=-1.0), "gamma"),
    (dict(landmarks="random"), "landmarks"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        MercerMap(**params).fit(_data(30))


def test_bad_input():
    X = _data(30)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MercerMap(n_landmarks=5).fit(X)
    fitted = MercerMap(n_landmarks=5, random_state=0).fit(_data(30))
    with pytest.raises(ValueError, match="features"):
        fitted.transform(_data(3, 2))


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:     # pragma: no cover
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    @parametrize_with_checks([MercerMap(n_landmarks=5, random_state=0)])
    def test_sklearn_compatible(estimator, check):
        check(estimator)
