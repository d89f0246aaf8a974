"""SVC by SMO: KKT conditions, agreement with LIBSVM (scikit-learn's SVC), Platt, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.exceptions import ConvergenceWarning
from linclass.kernels import pairwise_kernels
from linclass.kernels.svc import SVC

sklearn_svm = pytest.importorskip("sklearn.svm")


def _binary(seed=0, n=120, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.5, 1, 0)
    return X, y


def _multi(seed=0, n=150):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(4, 3))
    y = rng.integers(0, 4, size=n)
    return centers[y] + rng.normal(size=(n, 3)), y


KERNELS = [("linear", {}), ("rbf", dict(gamma=0.3)), ("poly", dict(gamma=0.2, degree=2, coef0=1.0)),
           ("sigmoid", dict(gamma=0.01, coef0=0.0))]


def _full_coef(model, n):
    coef = np.zeros(n)
    coef[model.support_] = model.dual_coef_[0]
    return coef


def _kkt_gap(K, y_pm, coef, C):
    alpha = coef * y_pm
    minus_yG = -(K @ coef) + y_pm                  # -y_i G_i with G = Q a - e
    up = ((alpha < C - 1e-12) & (y_pm > 0)) | ((alpha > 1e-12) & (y_pm < 0))
    low = ((alpha < C - 1e-12) & (y_pm < 0)) | ((alpha > 1e-12) & (y_pm > 0))
    return minus_yG[up].max() - minus_yG[low].min(), alpha


def _dual_objective(K, coef):
    return 0.5 * coef @ K @ coef - np.abs(coef).sum()


@pytest.mark.parametrize("kernel,params", KERNELS)
@pytest.mark.parametrize("sparse", [False, True])
def test_binary_kkt_and_libsvm(kernel, params, sparse):
    X, y = _binary()
    Xf = sp.csr_matrix(X) if sparse else X
    C = 2.0
    ours = SVC(kernel=kernel, C=C, tol=1e-4, **params).fit(Xf, y)
    ref = sklearn_svm.SVC(kernel=kernel, C=C, tol=1e-4, **params).fit(X, y)
    K = pairwise_kernels(X, kernel=kernel, **params)
    y_pm = np.where(y == 1, 1.0, -1.0)
    coef = _full_coef(ours, len(y))
    gap, alpha = _kkt_gap(K, y_pm, coef, C)
    assert gap <= 1e-4 * 1.01 + 1e-6
    assert alpha.min() >= 0 and alpha.max() <= C * (1 + 1e-12)
    assert abs(coef.sum()) < 1e-8                  # sum a_i y_i = 0
    obj_ref = _dual_objective(K, _full_coef(ref, len(y)))
    obj = _dual_objective(K, coef)
    np.testing.assert_allclose(obj, ours.dual_objective_[0], rtol=1e-5)
    assert abs(obj - obj_ref) <= 1e-4 * abs(obj_ref)
    if kernel != "sigmoid":        # (sigmoid: not PSD, the dual may have several optima)
        np.testing.assert_allclose(ours.decision_function(Xf), ref.decision_function(X),
                                   atol=2e-3)
        assert np.mean(ours.predict(Xf) == ref.predict(X)) >= 0.98


@pytest.mark.parametrize("kernel,params", KERNELS[:3])
def test_multiclass_ovo_matches_libsvm(kernel, params):
    X, y = _multi()
    ours = SVC(kernel=kernel, tol=1e-5, **params).fit(X, y)
    ref = sklearn_svm.SVC(kernel=kernel, tol=1e-5, **params).fit(X, y)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, atol=1e-3)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-3)
    for shape in ("ovr", "ovo"):
        ours.set_params(decision_function_shape=shape)
        ref.set_params(decision_function_shape=shape)
        np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X),
                                   atol=2e-3)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_ovr_and_labels():
    X, y = _multi(1)
    labels = np.array(["a", "b", "c", "d"])[y]
    model = SVC(multi_class="ovr", gamma=0.5).fit(X, labels)
    assert model.decision_function(X).shape == (len(y), 4)
    assert model.dual_coef_.shape[0] == 4
    from sklearn.multiclass import OneVsRestClassifier
    ref = OneVsRestClassifier(sklearn_svm.SVC(gamma=0.5)).fit(X, labels)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=2e-3)
    assert np.mean(model.predict(X) == ref.predict(X)) >= 0.98


def test_class_and_sample_weight_match_libsvm():
    X, y = _binary(2)
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=len(y))
    ours = SVC(C=0.7, class_weight={0: 2.0, 1: 0.5}, tol=1e-5).fit(X, y, sample_weight=w)
    ref = sklearn_svm.SVC(C=0.7, class_weight={0: 2.0, 1: 0.5}, tol=1e-5).fit(X, y,
                                                                                  sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-3)
    # weight 0 leaves a sample out
    w0 = w.copy()
    w0[:10] = 0
    a = SVC(gamma=0.3, tol=1e-6).fit(X, y, sample_weight=w0)
    b = SVC(gamma=0.3, tol=1e-6).fit(X[10:], y[10:], sample_weight=w[10:])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


@pytest.mark.parametrize("shrinking", [True, False])
def test_cache_budget_does_not_change_the_result(shrinking):
    X, y = _binary(3, n=400)
    big = SVC(gamma=0.5, cache_size=100, shrinking=shrinking).fit(X, y)
    tiny = SVC(gamma=0.5, cache_size=1e-6, shrinking=shrinking).fit(X, y)   # 2 columns
    np.testing.assert_array_equal(big.support_, tiny.support_)
    np.testing.assert_allclose(big.dual_coef_, tiny.dual_coef_, rtol=0, atol=0)
    np.testing.assert_allclose(big.intercept_, tiny.intercept_, rtol=0, atol=0)


def test_shrinking_reaches_the_same_optimum():
    X, y = _binary(4, n=300)
    a = SVC(gamma=0.5, shrinking=True, tol=1e-6).fit(X, y)
    b = SVC(gamma=0.5, shrinking=False, tol=1e-6).fit(X, y)
    np.testing.assert_allclose(a.dual_objective_, b.dual_objective_, rtol=1e-6)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-4)


def test_precomputed_and_callable_equal_builtin():
    X, y = _multi(2)
    K = pairwise_kernels(X, kernel="rbf", gamma=0.4)
    a = SVC(kernel="rbf", gamma=0.4).fit(X, y)
    b = SVC(kernel="precomputed").fit(K, y)
    c = SVC(kernel=lambda A, B: pairwise_kernels(A, B, kernel="rbf", gamma=0.4)).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(K), atol=1e-5)
    np.testing.assert_allclose(a.decision_function(X), c.decision_function(X), atol=1e-5)
    with pytest.raises(ValueError, match="should be equal to"):
        b.predict(K[:, :10])


@pytest.mark.parametrize("data", ["binary", "multi"])
def test_platt_probabilities_agree_with_predict(data):
    X, y = _binary(5) if data == "binary" else _multi(5)
    model = SVC(probability=True, random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (proba >= 0).all()
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))
    assert (model.probA_ < 0).all() and (model.probB_ == 0).all()
    # calibration: confident predictions are mostly right
    sure = proba.max(axis=1) > 0.9
    assert np.mean(model.predict(X)[sure] == y[sure]) > 0.9
    if data == "binary":
        # monotone in the decision value
        order = np.argsort(model.decision_function(X))
        assert np.all(np.diff(proba[order, 1]) >= -1e-12)
    assert not hasattr(SVC().fit(X, y), "predict_proba")


def test_max_iter_warns_and_model_usable():
    X, y = _binary(6, n=300)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        model = SVC(max_iter=5).fit(X, y)
    assert model.fit_status_ == 1
    assert np.isfinite(model.decision_function(X)).all()
    assert model.score(X, y) > 0.5


@pytest.mark.parametrize("params,match", [
    (dict(C=0), "C must be"), (dict(C=-1.0), "C must be"), (dict(gamma=-0.5), "gamma"),
    (dict(kernel="poly", degree=0), "degree"), (dict(cache_size=0), "cache_size"),
    (dict(cache_size=-3), "cache_size"), (dict(tol=0), "tol"), (dict(kernel="foo"), "kernel"),
    (dict(max_iter=0), "max_iter"), (dict(multi_class="all"), "multi_class"),
    (dict(class_weight="bogus"), "class_weight")])
def test_bad_parameters(params, match):
    X, y = _binary()
    with pytest.raises(ValueError, match=match):
        SVC(**params).fit(X, y)


def test_bad_precomputed_and_callable():
    X, y = _binary()
    K = X @ X.T
    with pytest.raises(ValueError, match="square"):
        SVC(kernel="precomputed").fit(K[:, :50], y)
    K_asym = K.copy()
    K_asym[0, 1] += 1.0
    with pytest.raises(ValueError, match="symmetric"):
        SVC(kernel="precomputed").fit(K_asym, y)
    with pytest.raises(ValueError, match="non-finite"):
        SVC(kernel=lambda A, B: np.full((len(A), len(B)), np.inf)).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        SVC().fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="one class"):
        SVC().fit(X, np.zeros(len(y)))


def test_one_vs_one_meta_estimator_wraps_svc():
    multiclass = pytest.importorskip("linclass.linear.multiclass")
    X, y = _multi(7)
    meta = multiclass.OneVsOneClassifier(SVC(gamma=0.5)).fit(X, y)
    own = SVC(gamma=0.5).fit(X, y)
    assert np.mean(meta.predict(X) == own.predict(X)) > 0.97


def test_persistence_round_trip(tmp_path):
    from linclass import load
    X, y = _multi(8)
    model = SVC(gamma=0.5, probability=True, random_state=0).fit(X, y)
    path = tmp_path / "svc.npz"
    model.save(path)
    back = load(path)
    np.testing.assert_allclose(back.decision_function(X), model.decision_function(X))
    np.testing.assert_allclose(back.predict_proba(X), model.predict_proba(X))
