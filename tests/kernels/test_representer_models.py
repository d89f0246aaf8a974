"""Kernel ridge / kernel logistic regression against their primal twins and scikit-learn."""
import numpy as np
import pytest

import linclass
from linclass.kernels import (KernelFunction, KernelLogisticRegression, KernelRidge,
                              KernelRidgeClassifier, SVC, SpectrumKernel, pairwise_kernels)


def _data(n=60, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = X @ rng.randn(d) + 0.1 * rng.randn(n)
    return X, y


def test_kernel_ridge_linear_equals_ridge_without_intercept():
    X, y = _data()
    kr = KernelRidge(alpha=0.7, kernel="linear").fit(X, y)
    ridge = linclass.Ridge(alpha=0.7, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(kr.coef_.ravel(), np.ravel(ridge.coef_), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(kr.predict(X), ridge.predict(X), rtol=1e-8, atol=1e-10)
    # normal equations by hand
    w = np.linalg.solve(X.T @ X + 0.7 * np.eye(X.shape[1]), X.T @ y)
    np.testing.assert_allclose(kr.coef_.ravel(), w, rtol=1e-8)


@pytest.mark.parametrize("kernel,params", [("rbf", {"gamma": 0.3}), ("poly", {"degree": 2}),
                                           ("linear", {})])
def test_kernel_ridge_equals_sklearn(kernel, params):
    skl = pytest.importorskip("sklearn.kernel_ridge")
    X, y = _data(seed=1)
    w = np.random.RandomState(2).uniform(0.2, 2.0, len(y))
    ours = KernelRidge(alpha=0.5, kernel=kernel, **params).fit(X, y, sample_weight=w)
    ref = skl.KernelRidge(alpha=0.5, kernel=kernel, **params).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.predict(X[:7]), ref.predict(X[:7]), rtol=1e-7, atol=1e-9)


def test_kernel_ridge_precomputed_callable_and_nystroem():
    X, y = _data(n=80, seed=3)
    K = pairwise_kernels(X, kernel="rbf", gamma=0.2)
    a = KernelRidge(kernel="rbf", gamma=0.2).fit(X, y)
    b = KernelRidge(kernel="precomputed").fit(K, y)
    c = KernelRidge(kernel=KernelFunction("rbf", gamma=0.2)).fit(X, y)
    np.testing.assert_allclose(b.predict(K[:5]), a.predict(X[:5]), rtol=1e-10)
    np.testing.assert_allclose(c.predict(X[:5]), a.predict(X[:5]), rtol=1e-10)
    # Nystroem with every row as a landmark is the exact model
    full = KernelRidge(kernel="rbf", gamma=0.2, n_components=80, random_state=0).fit(X, y)
    np.testing.assert_allclose(full.predict(X), a.predict(X), rtol=1e-5, atol=1e-6)
    few = KernelRidge(kernel="rbf", gamma=0.2, n_components=20, random_state=0).fit(X, y)
    assert few.dual_coef_.shape == (20,)
    with pytest.raises(ValueError, match="square"):
        KernelRidge(kernel="precomputed").fit(K[:, :10], y)


def test_kernel_ridge_classifier_equals_ridge_classifier():
    X, y = _data(seed=4)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    ours = KernelRidgeClassifier(alpha=1.0, kernel="linear").fit(X, labels)
    ref = linclass.RidgeClassifier(alpha=1.0, fit_intercept=False).fit(X, labels)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_logistic_equals_logistic_regression_on_linear_kernel(n_classes):
    X, y = _data(n=80, seed=5)
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    ours = KernelLogisticRegression(C=0.5, kernel="linear", tol=1e-10).fit(X, labels)
    ref = linclass.LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, labels)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, np.ravel(ref.intercept_), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)


def test_kernel_logistic_rbf_optimality_and_save(tmp_path):
    X, y = _data(n=60, seed=6)
    labels = (y > 0).astype(int)
    model = KernelLogisticRegression(C=2.0, kernel="rbf", gamma=0.5, tol=1e-10).fit(X, labels)
    # stationarity in the dual: K (C * dloss + alpha) = 0 and sum dloss = 0
    K = pairwise_kernels(X, kernel="rbf", gamma=0.5)
    f = model.decision_function(X)
    t = np.where(labels == 1, 1.0, -1.0)
    dloss = -t / (1 + np.exp(t * f))
    np.testing.assert_allclose(K @ (2.0 * dloss + model.dual_coef_), 0, atol=1e-5)
    assert abs(dloss.sum()) < 1e-5
    path = tmp_path / "klr.npz"
    model.save(path)
    np.testing.assert_allclose(linclass.load(path).predict_proba(X), model.predict_proba(X))


def test_string_kernel_models_and_precomputed_svc():
    docs = ["the cat sat", "a cat sat down", "dogs bark loud", "the dog barked",
            "cats purr", "a dog barks", "the cat purrs", "loud dogs"]
    y = np.array([0, 0, 1, 1, 0, 1, 0, 1])
    k = SpectrumKernel(k=3)
    krc = KernelRidgeClassifier(alpha=0.1, kernel=k).fit(docs, y)
    klr = KernelLogisticRegression(C=10.0, kernel=k).fit(docs, y)
    assert (krc.predict(docs) == y).all() and (klr.predict(docs) == y).all()
    K = k(docs)
    svc = SVC(kernel="precomputed").fit(K, y)
    perc = linclass.KernelPerceptron(kernel="precomputed", random_state=0).fit(K, y)
    assert (svc.predict(K) == y).all() and (perc.predict(K) == y).all()
    # the same model on the explicit feature map and the linear kernel
    Phi, _ = k.feature_map(docs)
    lin = KernelRidgeClassifier(alpha=0.1, kernel="linear").fit(Phi, y)
    np.testing.assert_allclose(krc.decision_function(docs), lin.decision_function(Phi),
                               rtol=1e-8, atol=1e-10)
    tmp = krc.predict(["a cat", "the dog"])
    assert tmp.shape == (2,)


def test_svc_linear_exposes_coef():
    X, y = _data(seed=7)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    for lab in (labels, (y > 0).astype(int)):
        svc = SVC(kernel="linear").fit(X, lab)
        raw = X @ svc.coef_.T + svc.intercept_
        if raw.shape[1] == 1:
            np.testing.assert_allclose(raw.ravel(), svc.decision_function(X), atol=1e-10)
        else:
            svc.decision_function_shape = "ovo"
            np.testing.assert_allclose(raw, svc.decision_function(X), atol=1e-10)
    with pytest.raises(AttributeError, match="linear kernel"):
        SVC(kernel="rbf").fit(X, labels).coef_
    skl = pytest.importorskip("sklearn.svm")
    ref = skl.SVC(kernel="linear").fit(X, (y > 0).astype(int))
    ours = SVC(kernel="linear").fit(X, (y > 0).astype(int))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-2, atol=1e-2)
