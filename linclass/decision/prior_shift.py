"""Correction for a change of class priors between training and deployment.

A discriminative model estimates ``P_train(k | x)``.  When the class priors
change to ``pi'`` while ``p(x | k)`` stays the same, Bayes' rule gives

    P'(k | x)  ∝  P_train(k | x) * pi'_k / pi_k

(Saerens, Latinne & Decaestecker 2002, eq. 2.3).  For a model whose posterior
is a softmax / sigmoid of linear scores (logistic regression, MaxEnt) this is
exactly a shift of the intercept: ``b'_k = b_k + log(pi'_k / pi_k)``
(:func:`shift_intercept`).  When the new priors are unknown, the EM algorithm
of Saerens et al. estimates them from unlabelled data of the new distribution
(:func:`estimate_priors_em`).

References
----------
Saerens, M., Latinne, P. & Decaestecker, C. (2002). Adjusting the outputs of a
classifier to new a priori probabilities: a simple procedure. Neural
Computation 14(1), 21-41.
King, G. & Zeng, L. (2001). Logistic regression in rare events data. Political
Analysis 9(2), 137-163 (prior correction of the logit intercept).
"""
import numbers

import numpy as np

from .._validation import iteration_budget
from .._validation import (as_float_param, check_classification_target, check_is_fitted,
                           check_sample_weight)
from ..base import BaseEstimator
from ._common import MetaClassifierMixin, check_estimator_protocol, clone_estimator, posteriors

__all__ = ["PriorShiftClassifier", "adjust_to_priors", "estimate_priors_em", "shift_intercept"]


def _check_priors(priors, n_classes, name):
    p = as_float_param(priors, name)
    if p.ndim != 1 or len(p) != n_classes:
        raise ValueError("%s must have one entry per class (%d), got shape %r"
                         % (name, n_classes, p.shape))
    if not np.isfinite(p).all() or (p <= 0).any():
        raise ValueError("%s must be finite and > 0, got %r" % (name, p.tolist()))
    return p / p.sum()


def adjust_to_priors(proba, train_priors, new_priors):
    """Posteriors under new class priors: ``P'(k|x) ∝ P(k|x) new_k / train_k``.

    Parameters
    ----------
    proba : array (n_samples, n_classes)
    train_priors, new_priors : array (n_classes,)  positive (normalised here)

    Returns
    -------
    ndarray (n_samples, n_classes), rows summing to 1
    """
    P = np.asarray(proba, dtype=np.float64)
    if P.ndim != 2 or not np.isfinite(P).all() or (P < 0).any():
        raise ValueError("proba must be a 2-D array of finite non-negative probabilities")
    ratio = _check_priors(new_priors, P.shape[1], "new_priors") / \
        _check_priors(train_priors, P.shape[1], "train_priors")
    Q = P * ratio
    total = Q.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    return Q / total


def shift_intercept(intercept, train_priors, new_priors):
    """Intercept of a logistic/softmax model under new priors.

    One intercept per class (softmax): ``b_k + log(new_k / train_k)``; a single
    binary intercept (sigmoid of ``w.x + b`` for ``classes_[1]``):
    ``b + log(new_1 / new_0) - log(train_1 / train_0)``.
    """
    b = np.asarray(intercept, dtype=np.float64)
    if b.ndim == 0 or len(b) == 1:
        tr = _check_priors(train_priors, 2, "train_priors")
        nw = _check_priors(new_priors, 2, "new_priors")
        return b + np.log(nw[1] / nw[0]) - np.log(tr[1] / tr[0])
    tr = _check_priors(train_priors, len(b), "train_priors")
    nw = _check_priors(new_priors, len(b), "new_priors")
    return b + np.log(nw / tr)


def estimate_priors_em(proba, train_priors, *, max_iter=1000, tol=1e-8):
    """EM estimate of the class priors of unlabelled data (Saerens et al. 2002).

    Alternates ``P'(k|x) ∝ P(k|x) pi'_k / pi_k`` and ``pi'_k = mean_x P'(k|x)``
    from ``pi' = train_priors`` until the priors move by less than ``tol``.

    Returns
    -------
    priors : ndarray (n_classes,)
    n_iter : int
    """
    P = np.asarray(proba, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0:
        raise ValueError("proba must be a non-empty 2-D array (n_samples, n_classes)")
    train = _check_priors(train_priors, P.shape[1], "train_priors")
    new = train.copy()
    for it in range(1, iteration_budget(max_iter) + 1):
        Q = adjust_to_priors(P, train, np.maximum(new, 1e-300))
        updated = Q.mean(axis=0)
        if np.abs(updated - new).max() < tol:
            return updated, it
        new = updated
    return new, iteration_budget(max_iter)


class PriorShiftClassifier(MetaClassifierMixin, BaseEstimator):
    """A probabilistic classifier whose posteriors are moved to new class priors.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None (``LogisticRegression()``)
    priors : array-like (n_classes,), "estimate" or None, default=None
        The deployment priors.  None: the training priors (no change);
        ``"estimate"``: call :meth:`estimate_priors` on unlabelled deployment
        data after ``fit``.
    train_priors : array-like (n_classes,) or None, default=None
        Priors the estimator was trained under; None: the (weighted) class
        frequencies of ``y`` in ``fit``.
    prefit : bool, default=False

    Attributes
    ----------
    estimator_, classes_
    train_priors_ : ndarray (n_classes,)
    priors_ : ndarray (n_classes,)  the deployment priors in use
    intercept_ : ndarray, when the estimator has ``intercept_``: the shifted
        intercept (exact for logistic regression / MaxEnt)
    """

    def __init__(self, estimator=None, priors=None, train_priors=None, prefit=False):
        self.estimator = estimator
        self.priors = priors
        self.train_priors = train_priors
        self.prefit = prefit

    def _check_state(self):
        super()._check_state()
        if "priors_" not in vars(self):          # not fitted: nothing to check
            return
        n_classes = len(self.classes_)
        self.train_priors_ = _check_priors(self.train_priors_, n_classes, "train_priors_")
        self.priors_ = _check_priors(self.priors_, n_classes, "priors_")

    def fit(self, X, y, sample_weight=None):
        """Fit the estimator (unless ``prefit``) and record the training priors."""
        inner = self._wrapped()               # estimator, or the default
        check_estimator_protocol(inner, ["predict_proba"], "PriorShiftClassifier")
        if self.prefit:
            check_is_fitted(inner, "classes_")
            est = inner
        else:
            est = clone_estimator(inner)
            est = est.fit(X, y) if sample_weight is None else \
                est.fit(X, y, sample_weight=sample_weight)
        self.estimator_ = est
        self.classes_ = np.asarray(est.classes_)
        n_classes = len(self.classes_)
        if self.train_priors is None:
            classes, codes = check_classification_target(y, None, min_classes=1)
            y = np.asarray(y)
            weight = check_sample_weight(sample_weight, len(y))
            counts = np.bincount(codes, weights=weight, minlength=len(classes))
            index = {c: i for i, c in enumerate(classes.tolist())}
            freq = np.array([counts[index[c]] if c in index else 0.0
                             for c in self.classes_.tolist()])
            self.train_priors_ = _check_priors(freq, n_classes, "the class frequencies of y")
        else:
            self.train_priors_ = _check_priors(self.train_priors, n_classes, "train_priors")
        if self.priors is None or (isinstance(self.priors, str) and self.priors == "estimate"):
            self.priors_ = self.train_priors_.copy()
        else:
            self.priors_ = _check_priors(self.priors, n_classes, "priors")
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        self._shift_intercept()
        return self

    def _shift_intercept(self):
        if hasattr(self.estimator_, "intercept_"):
            self.intercept_ = shift_intercept(self.estimator_.intercept_, self.train_priors_,
                                              self.priors_)

    def estimate_priors(self, X, max_iter=1000, tol=1e-8):
        """Estimate the deployment priors from unlabelled ``X`` by EM and use them."""
        check_is_fitted(self, "estimator_")
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) \
                or max_iter < 1:
            raise ValueError("max_iter must be a positive integer, got %r" % (max_iter,))
        self.priors_, self.n_iter_ = estimate_priors_em(
            posteriors(self.estimator_, X), self.train_priors_, max_iter=max_iter, tol=tol)
        self._shift_intercept()
        return self

    def predict_proba(self, X):
        """Posteriors under ``priors_``."""
        check_is_fitted(self, "estimator_")
        return adjust_to_priors(posteriors(self.estimator_, X), self.train_priors_, self.priors_)

    def decision_function(self, X):
        """Log posterior odds (two classes) or log posteriors (several)."""
        P = np.clip(self.predict_proba(X), 1e-300, None)
        if P.shape[1] == 2:
            return np.log(P[:, 1]) - np.log(P[:, 0])
        return np.log(P)

    def predict(self, X):
        """The class of highest posterior under the new class priors."""
        scores = self.predict_proba(X)          # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]
