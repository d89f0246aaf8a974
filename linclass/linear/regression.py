"""Least-squares regression: ordinary, ridge (L2) and lasso (L1), with a lasso path.

The regression counterparts of :mod:`linclass.linear.least_squares`, on the same
solvers (:func:`~linclass.linear.least_squares.solve_least_squares`,
:func:`~linclass.linear.least_squares.solve_ridge` -- Cholesky or conjugate
gradients with implicit centring -- and
:func:`~linclass.linear.least_squares.solve_lasso`, cyclic coordinate descent in
Cython).  The intercept is not penalised: it is eliminated by centring ``X``
and ``y`` with the sample weights (implicitly for sparse ``X``).

Objectives (``sw`` the sample weights, ``n = sum(sw)``)::

    LinearRegression  sum_i sw_i (y_i - x_i w - b)^2                  (min-norm solution)
    Ridge             sum_i sw_i (y_i - x_i w - b)^2 + alpha ||w||^2
    Lasso             1/(2n) sum_i sw_i (y_i - x_i w - b)^2 + alpha ||w||_1

the objectives of scikit-learn's ``LinearRegression``, ``Ridge`` and
``Lasso``.

References
----------
Hastie, Tibshirani & Friedman (2009), *The Elements of Statistical Learning*,
2nd ed., sec. 3.2 (least squares), 3.4 (ridge, lasso), 3.8.6 (pathwise
coordinate optimisation).
Hoerl & Kennard (1970), "Ridge regression", Technometrics 12.
Tibshirani (1996), "Regression shrinkage and selection via the lasso", JRSS B.
Friedman, Hastie & Tibshirani (2010), "Regularization paths for generalized
linear models via coordinate descent", J. Stat. Softw. 33 (path, warm starts,
``alpha_max``).
"""
import numbers

import numpy as np

from .._validation import check_max_iter, iteration_budget
from .._validation import check_X, check_predict_X, check_regression_target
from .._validation import check_positive, check_sample_weight
from .._validation import check_finite_fit, check_finite_output
from ..base import BaseEstimator, RegressorMixin
from .least_squares import (_CenteredOperator, blas_context, check_lasso_params,
                            check_ridge_params,
                            fit_lasso, lasso_design, solve_lasso, solve_least_squares,
                            solve_ridge)

__all__ = ["LinearRegression", "Ridge", "Lasso", "lasso_path"]


def _check_regression_data(X, y, sample_weight, finite=True):
    """(X, Y (n, k) float64, was_1d, sw) with finite targets, one row per sample
    (``finite=False``: X's values are left for the caller to check)."""
    X = check_X(X, finite=finite)
    Y = check_regression_target(y, X.shape[0])
    if Y.ndim == 0 or Y.ndim > 2:
        raise ValueError("y must be 1-D (n_samples,) or 2-D (n_samples, n_targets), "
                         "got shape %r" % (Y.shape,))
    was_1d = Y.ndim == 1
    Y = Y.reshape(Y.shape[0], -1)
    if Y.shape[0] != X.shape[0]:
        raise ValueError("y has %d rows but X has %d samples" % (Y.shape[0], X.shape[0]))
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    sw = check_sample_weight(sample_weight, X.shape[0])
    return X, Y, was_1d, sw


def _centre(X, Y, sw, fit_intercept):
    op = _CenteredOperator(X, sw, fit_intercept)
    ybar = (sw @ Y) / sw.sum() if fit_intercept else np.zeros(Y.shape[1])
    Yt = op.v[:, None] * (Y - ybar)
    return op, Yt, ybar


class _LinearRegressionBase(RegressorMixin, BaseEstimator):

    def _publish(self, X, coef, ybar, mu, was_1d):
        coef = coef.T                                        # (n_targets, n_features)
        intercept = ybar - coef @ mu
        if was_1d:
            self.coef_ = np.ascontiguousarray(coef[0])
            self.intercept_ = float(intercept[0])
        else:
            self.coef_ = np.ascontiguousarray(coef)
            self.intercept_ = intercept
        self.n_features_in_ = X.shape[1]
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True            # y may be (n_samples, n_targets)
        return tags

    def predict(self, X):
        """``X @ coef_.T + intercept_``."""
        X = check_predict_X(self, X)
        return check_finite_output(self, np.asarray(X @ self.coef_.T) + self.intercept_, X,
                                   "predictions")


class LinearRegression(_LinearRegressionBase):
    """Ordinary least squares (minimum-norm solution when ``X^T X`` is singular).

    Parameters
    ----------
    fit_intercept : bool, default=True
    n_jobs : None or int, default=None
        BLAS threads for the Gram matrix and its eigendecomposition (None: one,
        -1: every CPU; see :func:`~linclass.linear.least_squares.blas_context`).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    n_features_in_ : int

    Notes
    -----
    Sparse ``X`` is densified (the Gram matrix is dense anyway).
    """

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit by least squares (returns self)."""
        with blas_context(self.n_jobs):
            X, Y, was_1d, sw = _check_regression_data(X, y, sample_weight)
            op, Yt, ybar = _centre(X, Y, sw, self.fit_intercept)
            coef = solve_least_squares(op, Yt)
        self._publish(X, coef, ybar, op.mu, was_1d)
        return self


class Ridge(_LinearRegressionBase):
    """Ridge regression: least squares with an L2 penalty ``alpha ||w||^2``.

    Parameters
    ----------
    alpha : float, default=1.0
        (> 0)
    solver : {"auto", "cholesky", "cg"}, default="auto"
        As :class:`linclass.linear.least_squares.RidgeClassifier` (the same code;
        "auto" on dense ``X`` with ``n_samples >= n_features >= 200``: the
        mixed-precision Cholesky, "cholesky": always float64).
    tol : float, default=1e-6
        CG relative residual tolerance.
    max_iter : int or None, default=None
        CG iterations (None: ``n_features``).
    fit_intercept : bool, default=True
    n_jobs : None or int, default=None
        BLAS threads for the Gram matrix, factorisation and products (None:
        one, -1: every CPU; see
        :func:`~linclass.linear.least_squares.blas_context`).

    Attributes
    ----------
    coef_, intercept_, n_features_in_
    n_iter_ : int
    """

    def __init__(self, alpha=1.0, solver="auto", tol=1e-6, max_iter=None, fit_intercept=True,
                 n_jobs=None):
        self.alpha = alpha
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit the ridge regression (returns self)."""
        check_ridge_params(self)
        with blas_context(self.n_jobs):
            # X's values are checked by solve_ridge (on the mixed-precision pass)
            X, Y, was_1d, sw = _check_regression_data(X, y, sample_weight, finite=False)
            op, Yt, ybar = _centre(X, Y, sw, self.fit_intercept)
            coef, n_iter = solve_ridge(op, Yt, float(self.alpha), self.solver, float(self.tol),
                                       iteration_budget(self.max_iter), owner="Ridge",
                                       finite_checked=False)
        self._publish(X, coef, ybar, op.mu, was_1d)
        self.n_iter_ = int(n_iter)
        return self


class Lasso(_LinearRegressionBase):
    """The lasso: least squares with an L1 penalty, by cyclic coordinate descent.

    Minimises ``1/(2n) ||y - X w - b||^2 + alpha ||w||_1``.

    Parameters
    ----------
    alpha : float, default=1.0
        (> 0; see :func:`lasso_path` for a sequence of values)
    tol : float, default=1e-4
        Duality-gap tolerance relative to ``||y - ybar||^2``.
    max_iter : int, default=1000
        Passes over the features.
    fit_intercept : bool, default=True
    warm_start : bool, default=False
        Start from the previous ``coef_`` (as along a path).
    n_jobs : None or int
        Threads over the target columns, and BLAS threads for the Gram matrix
        (None: one, -1: every CPU; see
        :func:`~linclass.linear.least_squares.blas_context`).
    precompute : "auto", True or False, default="auto"
        Covariance updates on the centred Gram matrix (True; glmnet's
        "covariance" type, shared by all target columns) or naive updates on
        the residual (False).  "auto": covariance for dense ``X`` with
        ``n_samples >= n_features`` and at most 100 features per target column
        (2000 at most), and for sparse ``X`` with ``n_samples >= n_features``
        when the Gram matrix (one pass over the rows) and 20 covariance passes
        cost less than 20 naive passes (few features, short rows: a9a, w8a);
        naive otherwise
        (see :func:`~linclass.linear.least_squares.lasso_updates`).
        Same solution either way.

    Attributes
    ----------
    coef_, intercept_, n_features_in_
    n_iter_ : int
    dual_gap_ : float or ndarray of shape (n_targets,)
    """

    def __init__(self, alpha=1.0, tol=1e-4, max_iter=1000, fit_intercept=True,
                 warm_start=False, n_jobs=None, precompute="auto"):
        self.alpha = alpha
        self.precompute = precompute
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit by coordinate descent (returns self)."""
        check_lasso_params(self)
        with blas_context(self.n_jobs):
            # X's values are checked by fit_lasso, on the pass its transposed copy makes
            X, Y, was_1d, sw = _check_regression_data(X, y, sample_weight, finite=False)
            op, Yt, ybar = _centre(X, Y, sw, self.fit_intercept)
            coef, gaps = fit_lasso(self, X, op, Yt, "Lasso", finite_checked=False)
        self._publish(X, coef, ybar, op.mu, was_1d)
        self.dual_gap_ = float(gaps[0]) if was_1d else gaps
        return self


def lasso_path(X, y, *, alphas=None, n_alphas=100, eps=1e-3, fit_intercept=True,
               sample_weight=None, tol=1e-4, max_iter=1000, precompute="auto"):
    """Lasso solutions along a decreasing sequence of ``alpha``, warm-started.

    Each solution starts from the previous one (Friedman et al. 2010), which
    makes the whole path cost little more than its last, densest point.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    alphas : array-like or None
        Values to visit (sorted decreasing here).  None: ``n_alphas`` values
        spaced evenly on a log scale from ``alpha_max = max_j |x_j . (y -
        ybar)| / n`` (the smallest alpha with ``w = 0``) down to ``eps *
        alpha_max``.
    n_alphas : int, default=100
    eps : float, default=1e-3
    fit_intercept : bool, default=True
    sample_weight, tol, max_iter, precompute : as :class:`Lasso` (the Gram matrix
        or the columns are prepared once for the whole path)

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
    coefs : ndarray of shape (n_features, n_alphas)
    intercepts : ndarray of shape (n_alphas,)
    dual_gaps : ndarray of shape (n_alphas,)
    """
    with blas_context(None):
        return _lasso_path(X, y, alphas, n_alphas, eps, fit_intercept, sample_weight, tol,
                           max_iter, precompute)


def _lasso_path(X, y, alphas, n_alphas, eps, fit_intercept, sample_weight, tol, max_iter,
                precompute):
    X, Y, was_1d, sw = _check_regression_data(X, y, sample_weight)
    if Y.shape[1] != 1:
        raise ValueError("lasso_path needs a 1-D y")
    check_positive(tol, "tol")
    check_max_iter(None, max_iter)
    if not (isinstance(precompute, (bool, np.bool_)) or
            (isinstance(precompute, str) and precompute == "auto")):
        raise ValueError("precompute must be 'auto', True or False, got %r" % (precompute,))
    op, Yt, ybar = _centre(X, Y, sw, fit_intercept)
    n_eff = float(sw.sum())
    if alphas is None:
        check_positive(n_alphas, "n_alphas", integer=True)
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < eps < 1:
            raise ValueError("eps must be in (0, 1), got %r" % (eps,))
        alpha_max = float(np.max(np.abs(op.rmatmat(Yt)))) / n_eff
        if alpha_max <= 0:
            raise ValueError("y is constant (after centring): every alpha gives w = 0")
        alphas = np.geomspace(alpha_max, eps * alpha_max, int(n_alphas))
    else:
        alphas = np.sort(np.asarray(alphas, dtype=np.float64).ravel())[::-1]
        if alphas.size == 0 or not np.isfinite(alphas).all() or (alphas <= 0).any():
            raise ValueError("alphas must be finite and > 0")
    design = lasso_design(op, precompute)
    coefs = np.zeros((X.shape[1], len(alphas)))
    gaps = np.zeros(len(alphas))
    w = np.zeros((1, X.shape[1]))
    for k, alpha in enumerate(alphas):
        coef, results = solve_lasso(op, Yt, float(alpha), float(tol),
                                    iteration_budget(max_iter), w, design=design)
        w = coef.T
        coefs[:, k] = coef[:, 0]
        gaps[k] = results[0][2]
    intercepts = ybar[0] - op.mu @ coefs
    return alphas, coefs, intercepts, gaps
