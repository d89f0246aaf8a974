"""The least-squares family runs BLAS on one thread unless ``n_jobs`` asks for more.

Issue 18: numpy's BLAS threads inside linclass's own products must not fight
with the caller's threads.  ``Ridge``/``Lasso``/``LinearRegression`` and their
classifier counterparts now limit BLAS to ``n_jobs`` threads (None: one) for
the whole fit; the solution does not depend on it beyond rounding.
"""
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

from linclass import _validation
from linclass.linear import least_squares
from linclass.linear.least_squares import (LassoClassifier, LeastSquaresClassifier,
                                           RidgeClassifier)
from linclass.linear.regression import Lasso, LinearRegression, Ridge, lasso_path

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads_now():
    return [info["num_threads"] for info in threadpoolctl.threadpool_info()
            if info["user_api"] == "blas"]


def _data(classification):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 40))
    y = X @ rng.normal(size=40) + 0.1 * rng.normal(size=300)
    if classification:
        y = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    return X, y


MODELS = [
    (LinearRegression, {}, False, "solve_least_squares"),
    (Ridge, {"alpha": 2.0}, False, "solve_ridge"),
    (Lasso, {"alpha": 0.01}, False, "fit_lasso"),
    (LeastSquaresClassifier, {}, True, "solve_least_squares"),
    (RidgeClassifier, {"alpha": 2.0}, True, "solve_ridge"),
    (LassoClassifier, {"alpha": 0.01}, True, "fit_lasso"),
]


@pytest.mark.parametrize("cls, params, classification, solver", MODELS,
                         ids=[m[0].__name__ for m in MODELS])
def test_solver_sees_one_blas_thread_by_default(monkeypatch, cls, params, classification,
                                                 solver):
    X, y = _data(classification)
    seen = []
    original = getattr(least_squares, solver)

    def spy(*args, **kwargs):
        seen.append(_blas_threads_now())
        return original(*args, **kwargs)

    module = sys.modules[cls.__module__]
    monkeypatch.setattr(module, solver, spy)
    before = _blas_threads_now()
    model = cls(**params).fit(X, y)
    assert seen and seen[0] and all(n == 1 for n in seen[0])
    assert _blas_threads_now() == before                # restored after the fit

    seen.clear()
    threaded = cls(n_jobs=2, **params).fit(X, y)
    assert seen and all(n == min(2, b) for n, b in zip(seen[0], before))
    np.testing.assert_allclose(threaded.coef_, model.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(threaded.intercept_, model.intercept_, rtol=1e-9, atol=1e-12)


def test_lasso_path_one_blas_thread(monkeypatch):
    X, y = _data(False)
    seen = []
    from linclass.linear import regression
    original = regression.solve_lasso

    def spy(*args, **kwargs):
        seen.append(_blas_threads_now())
        return original(*args, **kwargs)

    monkeypatch.setattr(regression, "solve_lasso", spy)
    alphas, coefs, _, _ = lasso_path(sp.csr_matrix(X), y, n_alphas=5)
    assert len(seen) == 5 and all(n == 1 for row in seen for n in row)
    last = Lasso(alpha=alphas[-1], tol=1e-8, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(coefs[:, -1], last.coef_, atol=1e-4)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs(n_jobs):
    X, y = _data(False)
    with pytest.raises(ValueError, match="n_jobs"):
        Ridge(n_jobs=n_jobs).fit(X, y)


def test_controller_cached_and_rebuilt_after_imports():
    first = _validation._blas_controller()
    assert _validation._blas_controller() is first          # no rescan per fit
    name = "_linclass_test_fake_module"
    sys.modules[name] = types.ModuleType(name)              # a new import may load a BLAS
    try:
        assert _validation._blas_controller() is not first
    finally:
        del sys.modules[name]
    with _validation.blas_threads(1):
        assert all(n == 1 for n in _blas_threads_now())
