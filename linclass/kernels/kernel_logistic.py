"""Kernel logistic regression (the representer theorem for the logistic loss).

:class:`KernelLogisticRegression` minimises, over ``f`` in the RKHS of the
kernel and an unpenalised intercept ``b``,

    C * sum_i s_i c_{y_i} loss(y_i, f(x_i) + b)  +  1/2 ||f||_H^2

with the logistic loss (two classes) or the softmax cross-entropy (one
function per class, several classes) -- exactly the objective of
:class:`~linclass.LogisticRegression` with ``penalty="l2"`` and a scalar
``C``, with ``w . x`` replaced by ``f(x)``.  By the representer theorem
``f(x) = sum_i dual_coef_i k(x_i, x)`` (Zhu & Hastie 2005).

Solver: L-BFGS on the dual coefficients, written in the kernel's eigenbasis
(``K = U diag(lam) U^T``, ``f = U diag(sqrt(lam)) z``, ``||f||^2 = ||z||^2``) --
the same minimiser, but a well-conditioned problem (the raw dual gradient
``K (g + alpha)`` squares the kernel's condition number).  ``dual_coef_ =
U diag(lam^-1/2) z``.  ``n_components=m`` uses the Nystroem approximation
(:class:`~linclass.kernels.MercerMap`) instead of the eigenbasis.

References
----------
Zhu, J. & Hastie, T. (2005). Kernel logistic regression and the import vector
machine. J. Comp. Graph. Stat. 14(1), 185-205.
Schölkopf, B., Herbrich, R. & Smola, A. J. (2001). A generalized representer
theorem. COLT.
"""

import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logsumexp, softmax

from .._validation import (check_classification_target, check_is_fitted, check_positive,
                           check_sample_weight, class_weight_vector)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning
from .representer import RepresenterMixin

__all__ = ["KernelLogisticRegression"]


def _objective(params, Phi, y, weight, C, n_classes, fit_intercept, scale):
    """Value and gradient of the (scaled) regularised negative log-likelihood."""
    r = Phi.shape[1]
    k = 1 if n_classes == 2 else n_classes
    Z = params[:r * k].reshape(r, k)
    b = params[r * k:] if fit_intercept else np.zeros(k)
    F = Phi @ Z + b
    if n_classes == 2:
        f = F[:, 0]
        margin = y * f
        loss = -np.dot(weight, log_expit(margin))
        dF = (-(weight * y) * expit(-margin))[:, None]
    else:
        lse = logsumexp(F, axis=1)
        loss = np.dot(weight, lse - F[np.arange(len(y)), y])
        dF = softmax(F, axis=1)
        dF[np.arange(len(y)), y] -= 1.0
        dF *= weight[:, None]
    value = C * loss + 0.5 * np.sum(Z * Z)
    gZ = C * (Phi.T @ dF) + Z
    grad = gZ.ravel()
    if fit_intercept:
        grad = np.concatenate([grad, C * dF.sum(axis=0)])
    return value / scale, grad / scale


class KernelLogisticRegression(RepresenterMixin, ClassifierMixin, BaseEstimator):
    """Kernel logistic regression, binary or multinomial, L2 (RKHS-norm) regularised.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength (> 0), as in LogisticRegression.
    kernel : str, callable or kernel object, default="rbf"
        As in :class:`~linclass.kernels.KernelRidge` (names, ``"precomputed"``,
        callables, composed and string kernels).
    gamma : float or None, default=None
        Width of rbf/poly/sigmoid (None: ``1 / n_features``).
    degree : int, default=3
    coef0 : float, default=1.0
    fit_intercept : bool, default=True
        Add an unpenalised intercept.
    n_components : int or None, default=None
        Nystroem approximation on this many landmarks.
    tol : float, default=1e-6
        Gradient tolerance of L-BFGS (on the objective divided by the sum of
        the weights).
    max_iter : int, default=1000
    class_weight : None, "balanced" or dict, default=None
    random_state : int, Generator or None
        Landmark choice with ``n_components``.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    dual_coef_ : ndarray (n_basis,) for two classes (positive = ``classes_[1]``),
        (n_basis, n_classes) otherwise
    intercept_ : ndarray (1,) or (n_classes,)
    X_fit_ : training inputs (or landmarks); empty for precomputed
    coef_ : ndarray (1 or n_classes, n_features), linear kernel only
    n_iter_ : int
    n_features_in_ : int
    """

    def __init__(self, C=1.0, kernel="rbf", gamma=None, degree=3, coef0=1.0,
                 fit_intercept=True, n_components=None, tol=1e-6, max_iter=1000,
                 class_weight=None, random_state=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the dual coefficients by L-BFGS (returns self)."""
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_positive(self.max_iter, "max_iter", integer=True)
        X = self._check_X(X, at_fit=True)
        n = self._n_rows(X)
        classes, codes = check_classification_target(y, n)
        sample_weight = check_sample_weight(sample_weight, n)
        weight = sample_weight * class_weight_vector(self.class_weight, classes, codes,
                                                     sample_weight)[codes]
        if not (weight > 0).any():
            raise ValueError("every sample has weight zero: nothing to train on")
        self.classes_ = classes
        n_classes = len(classes)
        Phi, to_dual = self._fit_basis(X)
        k = 1 if n_classes == 2 else n_classes
        y_ = np.where(codes == 1, 1.0, -1.0) if n_classes == 2 else codes.astype(np.intp)
        fit_intercept = bool(self.fit_intercept)
        x0 = np.zeros(Phi.shape[1] * k + (k if fit_intercept else 0))
        result = minimize(_objective, x0, jac=True, method="L-BFGS-B",
                          args=(Phi, y_, weight, float(self.C), n_classes, fit_intercept,
                                float(weight.sum())),
                          options={"maxiter": int(self.max_iter), "gtol": float(self.tol),
                                   "ftol": 1e3 * np.finfo(float).eps, "maxcor": 20})
        if not result.success and result.nit >= int(self.max_iter):
            warnings.warn("KernelLogisticRegression: L-BFGS did not converge in %d "
                          "iterations (%s); increase max_iter" % (self.max_iter, result.message),
                          ConvergenceWarning)
        r = Phi.shape[1]
        Z = result.x[:r * k].reshape(r, k)
        dual = to_dual @ Z
        self.dual_coef_ = dual.ravel() if k == 1 else dual
        self.intercept_ = result.x[r * k:].copy() if fit_intercept else np.zeros(k)
        self.n_iter_ = int(result.nit)
        return self

    def decision_function(self, X):
        """``f(x) + b``: (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        F = self._kernel_to_fit(X) @ self.dual_coef_
        return F + (self.intercept_[0] if F.ndim == 1 else self.intercept_)

    def predict_proba(self, X):
        """Class probabilities (sigmoid or softmax of the decision function)."""
        F = self.decision_function(X)
        if F.ndim == 1:
            p = expit(F)
            return np.column_stack([1.0 - p, p])
        return softmax(F, axis=1)

    def predict_log_proba(self, X):
        """Log of the class probabilities, shape (n_samples, n_classes), without underflow."""
        return np.log(np.clip(self.predict_proba(X), 1e-300, None))

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(np.intp)]
        return self.classes_[np.argmax(F, axis=1)]

    @property
    def coef_(self):
        """Primal weights ``(X_fit_.T @ dual_coef_).T`` (linear kernel only)."""
        check_is_fitted(self, "dual_coef_")
        if self.kernel != "linear":
            raise AttributeError("coef_ exists only for kernel='linear' (got kernel=%r); "
                                 "use dual_coef_" % (self.kernel,))
        return np.atleast_2d(np.asarray(self.X_fit_.T @ self.dual_coef_).T)



