"""The reject option: abstain when the classifier is not confident enough.

Chow's rule (1970): with posteriors, reject ``x`` when ``max_k P(k | x) <
threshold`` -- optimal when a rejection costs ``1 - threshold`` and an error
costs 1.  With a margin classifier, reject when the margin (the distance of
the decision value from 0 for two classes, the gap between the two best
scores otherwise) is below ``threshold``.  The trade-off between the share of
accepted samples and their accuracy is
:func:`linclass.metrics.coverage_accuracy_curve`.

References
----------
Chow, C. K. (1970). On optimum recognition error and reject tradeoff. IEEE
Trans. Information Theory 16(1), 41-46.
Herbei, R. & Wegkamp, M. H. (2006). Classification with reject option.
Canadian Journal of Statistics 34(4), 709-721.
"""
import numbers

import numpy as np

from .._validation import check_finite_output, check_is_fitted
from ..base import BaseEstimator
from ._common import MetaClassifierMixin, check_estimator_protocol, clone_estimator

__all__ = ["RejectOption"]


class RejectOption(MetaClassifierMixin, BaseEstimator):
    """Wrap a classifier so that it abstains on low-confidence inputs.

    Parameters
    ----------
    estimator : classifier, default=None (``LogisticRegression()``)
        With ``predict_proba`` (``criterion="posterior"``) or
        ``decision_function`` (``criterion="margin"``).
    threshold : float, default=0.0
        Accept when the confidence is ``>= threshold`` (0: never reject).
    criterion : {"posterior", "margin"}, default="posterior"
        ``"posterior"``: the largest posterior; ``"margin"``: ``|f(x)|`` for two
        classes, the difference of the two largest scores otherwise.
    reject_label : object or None, default=None
        Returned by :meth:`predict` for rejected samples (must not be a
        class).  None: ``min(classes_) - 1`` for numeric classes, the string
        ``"<rejected>"`` otherwise (``reject_label_``).
    prefit : bool, default=False
        Use ``estimator`` as already fitted.

    Attributes
    ----------
    estimator_, classes_, n_features_in_
    reject_label_ : the label of rejected samples
    """

    def __init__(self, estimator=None, threshold=0.0, criterion="posterior", reject_label=None,
                 prefit=False):
        self.estimator = estimator
        self.threshold = threshold
        self.criterion = criterion
        self.reject_label = reject_label
        self.prefit = prefit

    def _check_params(self):
        if self.criterion not in ("posterior", "margin"):
            raise ValueError("criterion must be 'posterior' or 'margin', got %r"
                             % (self.criterion,))
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, numbers.Real) \
                or not np.isfinite(self.threshold):
            raise ValueError("threshold must be a finite number, got %r" % (self.threshold,))
        if self.criterion == "posterior" and not 0.0 <= self.threshold <= 1.0:
            raise ValueError("threshold must be in [0, 1] for criterion='posterior' (a "
                             "posterior probability), got %r" % (self.threshold,))

    def fit(self, X, y=None, sample_weight=None):
        """Fit the wrapped classifier (unless ``prefit``); returns self."""
        self._check_params()
        need = "predict_proba" if self.criterion == "posterior" else "decision_function"
        inner = self._wrapped()               # estimator, or the default
        check_estimator_protocol(inner, [need], "RejectOption")
        if self.prefit:
            check_is_fitted(inner, "classes_")
            est = inner
        else:
            est = clone_estimator(inner)
            est = est.fit(X, y) if sample_weight is None else \
                est.fit(X, y, sample_weight=sample_weight)
        self.estimator_ = est
        self.classes_ = np.asarray(est.classes_)
        label = self.reject_label
        if label is None:
            label = (self.classes_.min() - 1 if self.classes_.dtype.kind in "iuf"
                     else "<rejected>")
        self.reject_label_ = label
        if label in set(self.classes_.tolist()):
            raise ValueError("reject_label=%r is one of the classes; choose another value"
                             % (self.reject_label,))
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    def confidence(self, X):
        """The confidence compared with ``threshold``, (n_samples,)."""
        check_is_fitted(self, "estimator_")
        self._check_params()
        if self.criterion == "posterior":
            P = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
            return check_finite_output(self.estimator_, P, X, "posteriors").max(axis=1)
        S = np.asarray(self.estimator_.decision_function(X), dtype=np.float64)
        check_finite_output(self.estimator_, S, X)      # NaN >= threshold would reject
        if S.ndim == 1:
            return np.abs(S)
        top2 = np.sort(S, axis=1)[:, S.shape[1] - 2:]
        return top2[:, 1] - top2[:, 0]

    def accepted(self, X):
        """True where the wrapped classifier's prediction is kept."""
        return self.confidence(X) >= float(self.threshold)

    def predict_proba(self, X):
        """The wrapped classifier's posteriors (``predict_proba`` of ``estimator_``)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def decision_function(self, X):
        """The wrapped classifier's scores (``decision_function`` of ``estimator_``)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict_with_reject(self, X):
        """``(labels, accepted)``: the wrapped prediction and the acceptance mask."""
        check_is_fitted(self, "estimator_")
        return np.asarray(self.estimator_.predict(X)), self.accepted(X)

    def predict(self, X):
        """The wrapped prediction, ``reject_label`` where the confidence is too low."""
        labels, accepted = self.predict_with_reject(X)
        if accepted.all():
            return labels
        reject = np.asarray(self.reject_label_)
        if (labels.dtype.kind in "US") != (reject.dtype.kind in "US"):
            out = labels.astype(object)     # numbers stay numbers beside a string label
        else:
            try:
                out = labels.astype(np.result_type(labels.dtype, reject))
            except TypeError:
                out = labels.astype(object)
        if out.dtype.kind in "US" and len(str(self.reject_label_)) > out.dtype.itemsize // 4:
            out = labels.astype(object)
        out[~accepted] = self.reject_label_
        return out
