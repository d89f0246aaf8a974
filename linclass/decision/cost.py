"""Minimum-expected-cost (Bayes) decisions from posteriors and a cost matrix.

With posteriors ``P(k | x)`` and a cost matrix ``cost[k, j]`` = cost of
predicting class ``j`` when the true class is ``k``, the expected cost of
predicting ``j`` is ``R(j | x) = sum_k P(k | x) cost[k, j]`` and the Bayes
decision is ``argmin_j R(j | x)`` (Duda, Hart & Stork 2001, section 2.2).  With
the 0/1 cost it is the argmax of the posterior.  Two classes with costs of
errors ``c_FP = cost[0, 1]`` and ``c_FN = cost[1, 0]`` (and zero cost of
correct decisions) predict positive when ``P(1 | x) > c_FP / (c_FP + c_FN)``
(Elkan 2001, theorem 1).

References
----------
Duda, R. O., Hart, P. E. & Stork, D. G. (2001). *Pattern Classification*, 2nd
ed., Wiley, chapter 2.
Elkan, C. (2001). The foundations of cost-sensitive learning. IJCAI.
"""
import numpy as np

from .._validation import as_float_param, check_is_fitted
from ..base import BaseEstimator
from ._common import (MetaClassifierMixin, check_estimator_protocol, clone_estimator,
                      posteriors)

__all__ = ["CostSensitiveClassifier", "expected_costs", "minimum_expected_cost"]


def _check_cost_matrix(cost_matrix, n_classes):
    if cost_matrix is None and n_classes is not None:
        return 1.0 - np.eye(n_classes)            # 0/1 cost: the argmax of the posterior
    C = as_float_param(cost_matrix, "cost_matrix") if cost_matrix is not None else None
    if C is None or C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ValueError("cost_matrix must be a square (n_classes, n_classes) array, got %r"
                         % (None if C is None else C.shape,))
    if n_classes is not None and C.shape[0] != n_classes:
        raise ValueError("cost_matrix has shape %r but there are %d classes (rows: true "
                         "class, columns: predicted class, in the order of classes_)"
                         % (C.shape, n_classes))
    if not np.isfinite(C).all():
        raise ValueError("cost_matrix contains NaN or infinity")
    return C


def expected_costs(proba, cost_matrix):
    """Expected cost of predicting each class: ``proba @ cost_matrix``.

    Parameters
    ----------
    proba : array (n_samples, n_classes)
        Posterior probabilities (rows sum to 1).
    cost_matrix : array (n_classes, n_classes)
        ``cost_matrix[k, j]``: cost of predicting ``j`` when the truth is ``k``.

    Returns
    -------
    ndarray (n_samples, n_classes)
    """
    P = np.asarray(proba, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError("proba must be 2-D (n_samples, n_classes), got shape %r" % (P.shape,))
    if not np.isfinite(P).all() or (P < 0).any():
        raise ValueError("proba must hold finite non-negative probabilities")
    C = _check_cost_matrix(cost_matrix, P.shape[1])
    return P @ C


def minimum_expected_cost(proba, cost_matrix):
    """Index of the class of minimum expected cost per sample (ties: the first class)."""
    return np.argmin(expected_costs(proba, cost_matrix), axis=1)


class CostSensitiveClassifier(MetaClassifierMixin, BaseEstimator):
    """Predict the class of minimum expected cost from any probabilistic classifier.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None (``LogisticRegression()``)
        Fitted (with ``prefit=True``) or cloned and fitted by :meth:`fit`.
    cost_matrix : array-like (n_classes, n_classes) or None, default=None
        None: the 0/1 cost (argmax of the posterior).  ``cost_matrix[k, j]``:
        cost of predicting class ``classes_[j]`` when the true class is
        ``classes_[k]`` (rows: truth, columns: prediction, the orientation of
        a confusion matrix).
    prefit : bool, default=False
        Use ``estimator`` as already fitted: :meth:`fit` only checks the cost
        matrix against its classes.

    Attributes
    ----------
    estimator_ : the fitted classifier
    classes_ : ndarray (n_classes,)
    cost_matrix_ : ndarray (n_classes, n_classes)
    n_features_in_ : int (when the estimator has it)

    Notes
    -----
    The decision is only as good as the posteriors: wrap a poorly calibrated
    model in :class:`~linclass.decision.CalibratedClassifier` first.
    """

    def __init__(self, estimator=None, cost_matrix=None, prefit=False):
        self.estimator = estimator
        self.cost_matrix = cost_matrix
        self.prefit = prefit

    def _check_state(self):
        super()._check_state()
        if "cost_matrix_" not in vars(self):          # not fitted: nothing to check
            return
        self.cost_matrix_ = _check_cost_matrix(self.cost_matrix_, len(self.classes_))

    def fit(self, X, y=None, sample_weight=None):
        """Fit the wrapped classifier (unless ``prefit``) and check the costs."""
        inner = self._wrapped()               # estimator, or the default
        check_estimator_protocol(inner, ["predict_proba"], "CostSensitiveClassifier")
        if self.prefit:
            check_is_fitted(inner, "classes_")
            est = inner
        else:
            est = clone_estimator(inner)
            if sample_weight is None:
                est.fit(X, y)
            else:
                est.fit(X, y, sample_weight=sample_weight)
        self.estimator_ = est
        self.classes_ = np.asarray(est.classes_)
        self.cost_matrix_ = _check_cost_matrix(self.cost_matrix, len(self.classes_))
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    def predict_proba(self, X):
        """The wrapped classifier's posteriors."""
        check_is_fitted(self, "estimator_")
        return posteriors(self.estimator_, X)

    def expected_cost(self, X):
        """Expected cost of predicting each class, (n_samples, n_classes)."""
        return expected_costs(self.predict_proba(X), self.cost_matrix_)

    def decision_function(self, X):
        """Minus the expected cost (larger is better); for two classes the
        difference ``R(0 | x) - R(1 | x)`` (> 0: predict ``classes_[1]``)."""
        R = self.expected_cost(X)
        if R.shape[1] == 2:
            return R[:, 0] - R[:, 1]
        return -R

    def predict(self, X):
        """The class of minimum expected cost (ties: the first class)."""
        cost = self.expected_cost(X)          # checks that the model is fitted
        return self.classes_[np.argmin(cost, axis=1)]
