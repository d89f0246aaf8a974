"""Combining classifiers by rules on their posteriors (Kittler et al. 1998).

For ``R`` classifiers with posteriors ``P_r(k | x)`` and weights ``w_r``:

* ``"sum"`` (mean rule): ``sum_r w_r P_r(k|x)``, normalised;
* ``"product"``: ``prod_r P_r(k|x)^{w_r}``, normalised (computed in logs; the
  rule for independent classifiers sharing the class priors, Kittler eq. 11
  up to the prior term);
* ``"max"`` / ``"min"``: the largest / smallest posterior over classifiers,
  normalised;
* ``"vote"``: the weighted share of classifiers whose argmax is ``k`` (ties of
  votes go to the class of larger summed posterior).

References
----------
Kittler, J., Hatef, M., Duin, R. P. W. & Matas, J. (1998). On combining
classifiers. IEEE Trans. PAMI 20(3), 226-239.
Kuncheva, L. I. (2004). *Combining Pattern Classifiers*, Wiley, chapter 5.
"""
import numpy as np

from .._validation import as_float_param, check_classification_target, check_is_fitted
from ..base import BaseEstimator
from ._common import (MetaClassifierMixin, as_rows, check_estimator_protocol, clone_estimator,
                      posteriors)

__all__ = ["PosteriorCombiner"]

_RULES = ("sum", "product", "max", "min", "vote")


class PosteriorCombiner(MetaClassifierMixin, BaseEstimator):
    """Combine the posteriors of several classifiers by a fixed rule.

    Parameters
    ----------
    estimators : list of classifiers with ``predict_proba``
        Each is cloned and fitted on the same data (or used as fitted with
        ``prefit=True``).
    rule : {"sum", "product", "max", "min", "vote"}, default="sum"
    weights : array-like (n_estimators,) or None
        Non-negative weights of the classifiers (None: equal).
    prefit : bool, default=False

    Attributes
    ----------
    estimators_ : list of fitted classifiers
    classes_, n_features_in_
    """

    def __init__(self, estimators=None, rule="sum", weights=None, prefit=False):
        self.estimators = estimators
        self.rule = rule
        self.weights = weights
        self.prefit = prefit

    def _weights(self):
        n = len(self.estimators_)
        if self.weights is None:
            return np.ones(n)
        w = as_float_param(self.weights, "weights")
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError("weights must be %d finite non-negative numbers, not all zero, "
                             "got %r" % (n, self.weights))
        return w

    def fit(self, X, y, sample_weight=None):
        """Fit every classifier (unless ``prefit``); returns self."""
        if self.rule not in _RULES:
            raise ValueError("rule must be one of %s, got %r" % (_RULES, self.rule))
        if not isinstance(self.estimators, (list, tuple)) or not self.estimators:
            raise ValueError("estimators must be a non-empty list of classifiers, got %r"
                             % (self.estimators,))
        for e in self.estimators:
            check_estimator_protocol(e, ["predict_proba"], "PosteriorCombiner")
        if self.prefit:
            fitted = list(self.estimators)
            for e in fitted:
                check_is_fitted(e, "classes_")
            self.classes_ = np.unique(np.concatenate([np.asarray(e.classes_) for e in fitted]))
        else:
            X, n = as_rows(X, y)
            self.classes_, _ = check_classification_target(y, n)
            fitted = []
            for e in self.estimators:
                e = clone_estimator(e)
                fitted.append(e.fit(X, y) if sample_weight is None
                              else e.fit(X, y, sample_weight=sample_weight))
        self.estimators_ = fitted
        self._weights()
        nf = [getattr(e, "n_features_in_", None) for e in fitted]
        if nf[0] is not None:
            self.n_features_in_ = nf[0]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.input_tags.sparse = all(e.__sklearn_tags__().input_tags.sparse
                                         for e in self.estimators)
        except Exception:
            pass
        return tags

    def predict_proba(self, X):
        """Combined posteriors (n_samples, n_classes), rows summing to 1."""
        check_is_fitted(self, "estimators_")
        w = self._weights()
        w = w / w.sum()
        Ps = [posteriors(e, X, self.classes_) for e in self.estimators_]
        if self.rule == "sum":
            C = sum(wi * P for wi, P in zip(w, Ps))
        elif self.rule == "product":
            L = sum(wi * np.log(np.clip(P, 1e-300, None)) for wi, P in zip(w, Ps))
            C = np.exp(L - L.max(axis=1, keepdims=True))
        elif self.rule == "max":
            C = np.max([P for P in Ps], axis=0)
        elif self.rule == "min":
            C = np.min([P for P in Ps], axis=0)
        else:
            C = np.zeros_like(Ps[0])
            rows = np.arange(C.shape[0])
            for wi, P in zip(w, Ps):
                C[rows, np.argmax(P, axis=1)] += wi
        total = C.sum(axis=1, keepdims=True)
        zero = total[:, 0] <= 0
        C[zero] = 1.0
        total[zero] = C.shape[1]
        return C / total

    def predict(self, X):
        """The class of largest combined score (votes: ties by summed posteriors)."""
        C = self.predict_proba(X)
        if self.rule == "vote":
            check_is_fitted(self, "estimators_")
            w = self._weights()
            S = sum(wi * posteriors(e, X, self.classes_) for wi, e in zip(w, self.estimators_))
            top = C >= C.max(axis=1, keepdims=True) - 1e-12
            C = np.where(top, S, -np.inf)
        return self.classes_[np.argmax(C, axis=1)]
