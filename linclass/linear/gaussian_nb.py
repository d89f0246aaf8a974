"""Gaussian naive Bayes: class-conditional independent normal features.

``log P(y | x) = log P(y) - 1/2 sum_j [log(2 pi var_yj) + (x_j - mu_yj)^2 / var_yj] + const``

with ``mu_yj`` and ``var_yj`` the (weighted) maximum-likelihood mean and
variance of feature ``j`` in class ``y``, every variance increased by
``var_smoothing * max_j var(X[:, j])`` for stability -- the estimator of
scikit-learn's ``GaussianNB``, whose numbers it reproduces.  The score is
quadratic in ``x``; with variances shared across classes it becomes linear
(the link to logistic regression, Ng & Jordan 2002).

References
----------
Duda, R. O., Hart, P. E. & Stork, D. G. (2001). *Pattern Classification*,
2nd ed., section 2.6 (normal densities).
Ng, A. Y. & Jordan, M. I. (2002). On discriminative vs. generative classifiers:
a comparison of logistic regression and naive Bayes. NIPS 14.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import (as_float_param, check_classification_data, check_finite_output,
                           check_is_fitted, check_n_features, check_state_array, check_X)
from ..base import BaseEstimator, ClassifierMixin
from ._common import log_softmax

__all__ = ["GaussianNB"]


class GaussianNB(ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes.

    Parameters
    ----------
    priors : array-like (n_classes,) or None, default=None
        Class priors (in the order of the sorted classes); None: the weighted
        class frequencies.  Smoothed priors: pass
        ``linclass.decision.laplace_estimate(counts)`` or ``m_estimate``.
    var_smoothing : float, default=1e-9
        Share of the largest feature variance added to every variance.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    class_count_ : ndarray (n_classes,)  weighted counts
    class_prior_ : ndarray (n_classes,)
    theta_ : ndarray (n_classes, n_features)  means
    var_ : ndarray (n_classes, n_features)  variances (smoothed)
    epsilon_ : float  the variance added
    n_features_in_ : int
    """

    def __init__(self, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _check_X_dense(self, X):
        if sp.issparse(X):
            raise TypeError("GaussianNB needs dense data: a sparse matrix was passed "
                            "(use X.toarray())")
        return check_X(X)

    def fit(self, X, y, sample_weight=None):
        """Estimate class priors, means and variances (returns self)."""
        if isinstance(self.var_smoothing, bool) or \
                not isinstance(self.var_smoothing, numbers.Real) or \
                not np.isfinite(self.var_smoothing) or self.var_smoothing < 0:
            raise ValueError("var_smoothing must be a finite number >= 0, got %r"
                             % (self.var_smoothing,))
        self._check_X_dense(X)
        X, classes, codes, sw = check_classification_data(X, y, sample_weight)
        X = np.asarray(X, dtype=np.float64)
        n_classes = len(classes)
        self.epsilon_ = float(self.var_smoothing) * float(np.var(X, axis=0).max())
        counts = np.bincount(codes, weights=sw, minlength=n_classes)
        theta = np.zeros((n_classes, X.shape[1]))
        var = np.zeros((n_classes, X.shape[1]))
        for c in range(n_classes):
            rows = codes == c
            w = sw[rows]
            if w.sum() <= 0:
                raise ValueError("class %r has total sample weight 0" % (classes[c],))
            theta[c] = np.average(X[rows], axis=0, weights=w)
            var[c] = np.average((X[rows] - theta[c]) ** 2, axis=0, weights=w)
        if self.priors is None:
            prior = counts / counts.sum()
        else:
            prior = as_float_param(self.priors, "priors")
            if prior.shape != (n_classes,):
                raise ValueError("Number of priors must match number of classes: priors has "
                                 "shape %r, there are %d classes" % (prior.shape, n_classes))
            if not np.isclose(prior.sum(), 1.0):
                raise ValueError("The sum of the priors should be 1, got %r" % prior.sum())
            if (prior < 0).any():
                raise ValueError("Priors must be non-negative")
        if not (np.isfinite(var).all() and np.isfinite(self.epsilon_)):
            raise ValueError("%s: X holds values up to %.3g in magnitude, so the "
                             "class variances overflow double precision; scale the "
                             "features first" % (type(self).__name__, float(np.abs(X).max())))
        self.classes_ = classes
        self.class_count_ = counts
        self.class_prior_ = prior
        self.theta_ = theta
        self.var_ = var + self.epsilon_
        self.n_features_in_ = X.shape[1]
        return self

    def _check_state(self):
        """Priors, means and variances have one row per class and one column per
        feature; variances are not negative (called by :func:`linclass.load`)."""
        super()._check_state()
        if "theta_" not in vars(self):          # not fitted: nothing to check
            return
        K, F = len(self.classes_), self.n_features_in_
        check_state_array(self.class_prior_, "class_prior_", (K,))
        check_state_array(self.theta_, "theta_", (K, F))
        var = check_state_array(self.var_, "var_", (K, F))
        for name in ("class_prior_", "theta_", "var_"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError("%s holds NaN or infinity (fit never produces it)" % name)
        if (var < 0).any():
            raise ValueError("var_ must not be negative")

    def predict_joint_log_proba(self, X):
        """``log P(y) + log p(x | y)`` (n_samples, n_classes)."""
        check_is_fitted(self, "theta_")
        X = np.asarray(self._check_X_dense(X), dtype=np.float64)
        check_n_features(X, self.n_features_in_, owner=self)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        norm = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_), axis=1)
        inv = 1.0 / self.var_
        quad = (X * X) @ inv.T - 2.0 * X @ (self.theta_ * inv).T + \
            np.sum(self.theta_ ** 2 * inv, axis=1)
        return check_finite_output(self, log_prior + norm - 0.5 * quad, X,
                                   "class log-likelihoods", log_domain=True)

    def predict_log_proba(self, X):
        """Log of the class probabilities, shape (n_samples, n_classes), without underflow."""
        return log_softmax(self.predict_joint_log_proba(X))

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        scores = self.predict_joint_log_proba(X)          # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
