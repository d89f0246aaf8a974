"""LogisticRegression(penalty="elasticnet", l1_ratio=...) against scikit-learn and
its two limits (l1_ratio=1: the L1 penalty, l1_ratio=0: the L2 penalty)."""
import warnings

import numpy as np
import pytest

from linclass.linear import LogisticRegression


def _data(n_classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 6))
    score = X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=80)
    y = (score > 0).astype(int) if n_classes == 2 else np.digitize(score, [-0.5, 0.5])
    return X, y


@pytest.mark.parametrize("n_classes,l1_ratio,C", [(2, 0.5, 0.3), (3, 0.3, 0.5)])
def test_matches_scikit_learn_saga(n_classes, l1_ratio, C):
    linear_model = pytest.importorskip("sklearn.linear_model")
    X, y = _data(n_classes)
    ours = LogisticRegression(penalty="elasticnet", l1_ratio=l1_ratio, C=C, tol=1e-10,
                              max_iter=10000).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # saga's convergence / penalty deprecations
        theirs = linear_model.LogisticRegression(
            penalty="elasticnet", l1_ratio=l1_ratio, C=C, solver="saga", tol=1e-12,
            max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-5)
    np.testing.assert_array_equal(ours.coef_ == 0, theirs.coef_ == 0)   # same sparsity


def test_limits_are_the_l1_and_l2_penalties():
    X, y = _data(3, seed=1)
    kw = dict(C=0.4, tol=1e-10, max_iter=10000)
    np.testing.assert_allclose(
        LogisticRegression(penalty="elasticnet", l1_ratio=1.0, **kw).fit(X, y).coef_,
        LogisticRegression(penalty="l1", **kw).fit(X, y).coef_, atol=1e-6)
    np.testing.assert_allclose(
        LogisticRegression(penalty="elasticnet", l1_ratio=0.0, **kw).fit(X, y).coef_,
        LogisticRegression(penalty="l2", **kw).fit(X, y).coef_, atol=1e-5)


def test_bad_l1_ratio_and_solver():
    X, y = _data(2)
    for bad in (None, -0.1, 1.5, "half", True):
        with pytest.raises(ValueError, match="l1_ratio"):
            LogisticRegression(penalty="elasticnet", l1_ratio=bad).fit(X, y)
    with pytest.raises(ValueError, match="tron"):
        LogisticRegression(penalty="elasticnet", l1_ratio=0.5, solver="tron").fit(X, y)
