"""Decision-threshold tuning for binary classifiers.

A binary classifier predicts the positive class when its score exceeds a
threshold; 0 for a decision function and 1/2 for a posterior are the defaults,
right for accuracy on the training distribution but not for F1, balanced
accuracy or an unequal class distribution.  :class:`ThresholdTuner` collects
scores on data the model did not train on (a held-out share, out-of-fold
scores of a cross-validation, or a validation set with an already fitted
model) and picks the threshold that maximises the chosen metric there, as
scikit-learn's ``TunedThresholdClassifierCV`` and Flach (2012, section 2.2)
(the optimal operating point on the ROC curve) describe.

References
----------
Flach, P. (2012). *Machine Learning: The Art and Science of Algorithms that Make
Sense of Data*, Cambridge University Press, chapter 2.
Lipton, Z. C., Elkan, C. & Narayanaswamy, B. (2014). Optimal thresholding of
classifiers to maximize F1 measure. ECML PKDD.
"""
import numpy as np

from .._validation import (check_classification_target, check_int_param, check_is_fitted,
                           check_sample_weight)
from ..base import BaseEstimator
from ._common import (MetaClassifierMixin, as_rows, binary_scores, check_cv,
                      check_estimator_protocol, cv_splits, fit_clone, holdout_split, take_rows)

__all__ = ["ThresholdTuner"]

_METRICS = ("accuracy", "balanced_accuracy", "f1", "youden")


def _sweep(scores, truth, weight, metric):
    """Metric of ``predict positive iff score >= u`` at every distinct score ``u``
    (descending) and of "all negative"; returns (thresholds, values)."""
    order = np.argsort(-scores, kind="mergesort")
    s, t, w = scores[order], truth[order], weight[order]
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), len(s) - 1]     # end of each tie group
    tp = np.r_[0.0, np.cumsum(w * t)[last]]
    fp = np.r_[0.0, np.cumsum(w * (1 - t))[last]]
    P, N = tp[len(tp) - 1], fp[len(fp) - 1]
    fn, tn = P - tp, N - fp
    if metric == "accuracy":
        values = (tp + tn) / (P + N)
    elif metric in ("balanced_accuracy", "youden"):
        tpr = tp / P if P > 0 else np.zeros_like(tp)
        tnr = tn / N if N > 0 else np.zeros_like(tn)
        values = 0.5 * (tpr + tnr) if metric == "balanced_accuracy" else tpr + tnr - 1.0
    else:                                                        # f1
        denom = 2 * tp + fp + fn
        values = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    u = s[last]
    # a cut between u_i and the next smaller distinct score (midpoints); all-negative
    # cuts above the largest score
    lower = np.r_[u[1:], u[len(u) - 1] - 1.0]
    cuts = np.r_[u[0] + 1.0, 0.5 * (u + lower)]
    return cuts, values


class ThresholdTuner(MetaClassifierMixin, BaseEstimator):
    """Choose the decision threshold of a binary classifier on held-out data.

    Parameters
    ----------
    estimator : binary classifier, default=None (``LogisticRegression()``)
        With ``decision_function`` or ``predict_proba``.
    scoring : str or callable, default="balanced_accuracy"
        ``"balanced_accuracy"``, ``"accuracy"``, ``"f1"`` or ``"youden"``.
        The metric maximised; a callable ``scoring(y_true, y_pred) -> float``
        (labels of ``classes_``) is evaluated at up to ``n_thresholds``
        quantiles of the scores.
    cv : int, float, "prefit", splitter or iterable, default=5
        Folds of a stratified cross-validation (out-of-fold scores; the model
        is then refitted on all the data), a held-out share in (0, 1) (the
        model stays fitted on the rest), or ``"prefit"``: ``estimator`` is
        fitted and ``fit(X, y)`` receives the validation data.  A splitter with ``split(X, y)`` (scikit-learn's
        ``StratifiedKFold``, ...) or ``(train, test)`` index pairs give the
        folds: the held-out scores of every test fold are pooled.
    response : {"auto", "decision_function", "predict_proba"}, default="auto"
    n_thresholds : int, default=200
        Candidates for a callable ``scoring``.
    random_state : int, Generator or None

    Attributes
    ----------
    estimator_ : the fitted classifier used for prediction
    threshold_ : float
        Predict ``classes_[1]`` when the score is ``> threshold_``.
    best_score_ : float
        The metric at ``threshold_`` on the held-out scores.
    classes_, n_features_in_
    """

    def __init__(self, estimator=None, scoring="balanced_accuracy", cv=5, response="auto",
                 n_thresholds=200, random_state=None):
        self.estimator = estimator
        self.scoring = scoring
        self.cv = cv
        self.response = response
        self.n_thresholds = n_thresholds
        self.random_state = random_state

    def _heldout_scores(self, X, y, codes, sample_weight):
        cv = check_cv(self.cv)
        inner = self._wrapped()               # estimator, or the default
        if cv == "prefit":
            check_is_fitted(inner, "classes_")
            if list(np.asarray(inner.classes_)) != list(self.classes_):
                raise ValueError("the prefit estimator's classes %r differ from those of y %r"
                                 % (list(inner.classes_), list(self.classes_)))
            return inner, binary_scores(inner, X, self.response), \
                codes, sample_weight
        if isinstance(cv, float):
            held = holdout_split(codes, cv, self.random_state)
            est = fit_clone(inner, take_rows(X, ~held), y[~held], sample_weight[~held])
            return est, binary_scores(est, take_rows(X, held), self.response), \
                codes[held], sample_weight[held]
        # out-of-fold scores of every test fold (see CalibratedClassifier)
        parts = []
        for train, test in cv_splits(cv, codes, X, y, self.random_state):
            est = fit_clone(inner, take_rows(X, train), y[train], sample_weight[train])
            parts.append((binary_scores(est, take_rows(X, test), self.response), codes[test],
                          sample_weight[test]))
        scores, truth, w = (np.concatenate(p) for p in zip(*parts))
        est = fit_clone(inner, X, y, sample_weight)
        return est, scores, truth, w

    def fit(self, X, y, sample_weight=None):
        """Fit (or take) the classifier and choose the threshold; returns self."""
        inner = self._wrapped()               # estimator, or the default
        check_estimator_protocol(inner, [("decision_function", "predict_proba")],
                                 "ThresholdTuner")
        if self.response not in ("auto", "decision_function", "predict_proba"):
            raise ValueError("response must be 'auto', 'decision_function' or 'predict_proba', "
                             "got %r" % (self.response,))
        if not callable(self.scoring) and self.scoring not in _METRICS:
            raise ValueError("scoring must be one of %s or a callable(y_true, y_pred), got %r"
                             % (_METRICS, self.scoring))
        check_int_param(self.n_thresholds, "n_thresholds", low=2)
        X, n = as_rows(X, y)
        classes, codes = check_classification_target(y, n)    # before numpy mixes labels
        y = np.asarray(y)
        if len(classes) != 2:
            raise ValueError("Only binary classification is supported: ThresholdTuner needs a "
                             "binary problem, y has %d classes"
                             % len(classes))
        sample_weight = check_sample_weight(sample_weight, n)
        self.classes_ = classes
        est, scores, truth, weight = self._heldout_scores(X, y, codes, sample_weight)
        if callable(self.scoring):
            qs = np.unique(np.quantile(scores, np.linspace(0, 1, int(self.n_thresholds))))
            cuts = np.r_[qs[0] - 1.0, 0.5 * (qs[1:] + qs[:len(qs) - 1]), qs[len(qs) - 1] + 1.0]
            values = np.array([float(self.scoring(classes[truth],
                                                  classes[(scores > c).astype(np.intp)]))
                               for c in cuts])
        else:
            cuts, values = _sweep(scores, truth.astype(np.float64), weight, self.scoring)
        best = int(np.argmax(values))
        self.estimator_ = est
        self.threshold_ = float(cuts[best])
        self.best_score_ = float(values[best])
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X):
        """The wrapped score minus ``threshold_`` (> 0: ``classes_[1]``)."""
        check_is_fitted(self, "estimator_")
        return binary_scores(self.estimator_, X, self.response) - self.threshold_

    def predict(self, X):
        """``classes_[1]`` where the score exceeds the tuned ``threshold_``, else
        ``classes_[0]``."""
        scores = self.decision_function(X)          # checks that the model is fitted
        return self.classes_[(scores > 0).astype(np.intp)]

    def predict_proba(self, X):
        """The wrapped classifier's posteriors (unchanged by the threshold)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

