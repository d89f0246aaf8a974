"""GaussianNB against scikit-learn's GaussianNB."""
import numpy as np
import pytest

import linclass
from linclass.decision import laplace_estimate
from linclass.linear import GaussianNB


def test_equals_sklearn_with_weights_and_priors(tmp_path):
    skl = pytest.importorskip("sklearn.naive_bayes")
    rng = np.random.RandomState(0)
    X = rng.randn(150, 5) * [1, 10, 0.1, 1, 3]
    y = rng.choice(["a", "b", "c"], size=150)
    X[y == "b"] += 1.0
    w = rng.uniform(0.1, 3, size=150)
    for kwargs in ({}, {"priors": [0.2, 0.3, 0.5]}, {"var_smoothing": 1e-2}):
        ours = GaussianNB(**kwargs).fit(X, y, sample_weight=w)
        ref = skl.GaussianNB(**kwargs).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(ours.theta_, ref.theta_, rtol=1e-10)
        np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-10)
        np.testing.assert_allclose(ours.class_prior_, ref.class_prior_)
        np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    ours.save(tmp_path / "g.npz")
    np.testing.assert_allclose(linclass.load(tmp_path / "g.npz").predict_proba(X),
                               ours.predict_proba(X))


def test_smoothed_priors_and_errors():
    rng = np.random.RandomState(1)
    X = rng.randn(20, 2)
    y = np.r_[np.zeros(18, int), np.ones(2, int)]
    priors = laplace_estimate(np.bincount(y))
    model = GaussianNB(priors=priors).fit(X, y)
    np.testing.assert_allclose(model.class_prior_, [19 / 22, 3 / 22])
    with pytest.raises(ValueError, match="sum of the priors"):
        GaussianNB(priors=[0.5, 0.6]).fit(X, y)
    with pytest.raises(TypeError, match="dense"):
        import scipy.sparse as sp
        GaussianNB().fit(sp.csr_matrix(X), y)
