"""Kernel ridge regression and classification (the representer theorem for squared loss).

:class:`KernelRidge` minimises ``sum_i s_i (y_i - f(x_i))^2 + alpha ||f||_H^2``
over the RKHS of the kernel; by the representer theorem
``f(x) = sum_i dual_coef_i k(x_i, x)`` with

    dual_coef = (K + alpha diag(1 / s))^{-1} y

(Saunders, Gammerman & Vovk 1998), solved by Cholesky; no intercept (add a
constant to the kernel, e.g. ``coef0`` of the polynomial kernel, or centre
``y``), as scikit-learn's ``KernelRidge``, whose numbers it reproduces.  With
the linear kernel it is ridge regression without intercept:
``coef_ = X.T @ dual_coef_``.

:class:`KernelRidgeClassifier` regresses the ``{-1, +1}`` one-vs-rest
indicators of the classes (as ``RidgeClassifier``) and predicts the class of
largest score.

``n_components=m`` replaces the kernel by its Nystroem approximation on ``m``
landmarks (:class:`~linclass.kernels.MercerMap`): ridge regression in the ``m``
mapped features, O(n m^2) instead of O(n^3); ``dual_coef_`` then holds one
coefficient per landmark (``X_fit_`` are the landmarks).

References
----------
Saunders, C., Gammerman, A. & Vovk, V. (1998). Ridge regression learning
algorithm in dual variables. ICML.
Kimeldorf, G. & Wahba, G. (1971). Some results on Tchebycheffian spline
functions. J. Math. Anal. Appl. 33, 82-95.
Williams, C. & Seeger, M. (2001). Using the Nystroem method to speed up
kernel machines. NIPS 13.
"""
import numpy as np
import scipy.linalg

from .._validation import (check_classification_target, check_is_fitted,
                           check_regression_target, check_sample_weight)
from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from .representer import RepresenterMixin, check_alpha

__all__ = ["KernelRidge", "KernelRidgeClassifier"]


def _solve_dual(K, Y, alpha, sample_weight):
    """``(K + alpha diag(1/s))^{-1} Y`` (rows of weight 0 get coefficient 0)."""
    sw = np.sqrt(sample_weight)
    A = K * np.outer(sw, sw)
    A[np.diag_indices_from(A)] += alpha
    rhs = Y * sw[:, None]
    try:
        coef = scipy.linalg.solve(A, rhs, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        coef = scipy.linalg.lstsq(A, rhs, check_finite=False)[0]
    return coef * sw[:, None]


def _solve_primal(Phi, Y, alpha, sample_weight):
    """Ridge in the mapped features: ``(Phi' S Phi + alpha I)^{-1} Phi' S Y``."""
    G = Phi.T @ (Phi * sample_weight[:, None])
    G[np.diag_indices_from(G)] += alpha
    rhs = Phi.T @ (Y * sample_weight[:, None])
    try:
        return scipy.linalg.solve(G, rhs, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return scipy.linalg.lstsq(G, rhs, check_finite=False)[0]


class _KernelRidgeBase(RepresenterMixin, BaseEstimator):
    def __init__(self, alpha=1.0, kernel="linear", gamma=None, degree=3, coef0=1.0,
                 n_components=None, random_state=None):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state

    def _fit_targets(self, X, Y, sample_weight):
        alpha = check_alpha(self.alpha)
        self._check_kernel()
        if self.n_components is None:
            K = self._gram(X, None if self.kernel != "precomputed" else X)
            if alpha == 0 and (sample_weight == 0).any():
                raise ValueError("alpha=0 with zero sample weights leaves the dual singular")
            self.dual_coef_ = _solve_dual(K, Y, alpha, sample_weight)
            self.X_fit_ = X if self.kernel != "precomputed" else np.empty((0, 0))
            self.landmark_indices_ = None
        else:
            Phi, to_dual = self._fit_basis(X)
            self.dual_coef_ = to_dual @ _solve_primal(Phi, Y, alpha, sample_weight)

    def _raw_predict(self, X):
        return self._kernel_to_fit(X) @ self.dual_coef_

    @property
    def coef_(self):
        """Primal weights ``X_fit_.T @ dual_coef_`` (linear kernel only)."""
        check_is_fitted(self, "dual_coef_")
        if self.kernel != "linear":
            raise AttributeError("coef_ exists only for kernel='linear' (got kernel=%r); "
                                 "use dual_coef_" % (self.kernel,))
        W = np.asarray(self.X_fit_.T @ self.dual_coef_)
        return W.T


class KernelRidge(RegressorMixin, _KernelRidgeBase):
    """Kernel ridge regression.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (>= 0); the ridge ``alpha``.
    kernel : str, callable or kernel object, default="linear"
        ``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"``, ``"precomputed"``
        (X is the Gram matrix), a callable ``kernel(X, Y)``, or a
        :mod:`linclass.kernels` kernel object (composed kernels, string
        kernels over lists of strings / token sequences).
    gamma : float or None, default=None
        Width of rbf/poly/sigmoid (None: ``1 / n_features``).
    degree : int, default=3
    coef0 : float, default=1.0
    n_components : int or None, default=None
        Use the Nystroem approximation on this many landmarks (MercerMap).
    random_state : int, Generator or None
        Landmark choice with ``n_components``.

    Attributes
    ----------
    dual_coef_ : ndarray (n_basis,) or (n_basis, n_targets)
    X_fit_ : training inputs (or the Nystroem landmarks); empty for precomputed
    coef_ : ndarray (linear kernel only), ``X_fit_.T @ dual_coef_``
    n_features_in_ : int
    """

    def fit(self, X, y, sample_weight=None):
        """Solve for the dual coefficients (returns self)."""
        X = self._check_X(X, at_fit=True)
        n = self._n_rows(X)
        # the shared check: real numbers only (complex, None, NaN, infinity raise)
        Y = check_regression_target(y, n)
        if Y.ndim not in (1, 2) or Y.shape[0] != n:
            raise ValueError("y must have shape (n_samples,) or (n_samples, n_targets) with "
                             "n_samples = %d, got %r" % (n, Y.shape))
        was_1d = Y.ndim == 1
        Y = Y.reshape(n, -1)
        sample_weight = check_sample_weight(sample_weight, n)
        if not (sample_weight > 0).any():
            raise ValueError("sample_weight: all weights are zero; nothing to train on")
        self._fit_targets(X, Y, sample_weight)
        if was_1d:
            self.dual_coef_ = self.dual_coef_.ravel()
        return self

    def _n_outputs(self):
        return "any"                    # 1-D, or one column per target

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True            # y may be (n_samples, n_targets)
        return tags

    def predict(self, X):
        """``k(X, X_fit_) @ dual_coef_``."""
        return self._raw_predict(X)


class KernelRidgeClassifier(ClassifierMixin, _KernelRidgeBase):
    """Kernel ridge classification: regression of one-vs-rest ``{-1, +1}`` targets.

    Parameters are those of :class:`KernelRidge`.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    dual_coef_ : ndarray (n_basis,) for two classes (positive = ``classes_[1]``),
        (n_basis, n_classes) otherwise
    X_fit_, n_features_in_, coef_ : as in :class:`KernelRidge`
    """

    def fit(self, X, y, sample_weight=None):
        """Fit one kernel ridge regression per class (one for two classes)."""
        X = self._check_X(X, at_fit=True)
        n = self._n_rows(X)
        classes, codes = check_classification_target(y, n)
        sample_weight = check_sample_weight(sample_weight, n)
        if not (sample_weight > 0).any():
            raise ValueError("sample_weight: all weights are zero; nothing to train on")
        self.classes_ = classes
        if len(classes) == 2:
            Y = np.where(codes == 1, 1.0, -1.0)[:, None]
        else:
            Y = -np.ones((n, len(classes)))
            Y[np.arange(n), codes] = 1.0
        self._fit_targets(X, Y, sample_weight)
        if len(classes) == 2:
            self.dual_coef_ = self.dual_coef_.ravel()
        return self

    def decision_function(self, X):
        """Scores (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        return self._raw_predict(X)

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
