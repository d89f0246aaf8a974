"""Metrics of scores: ROC and coverage curves, AUC as ranking accuracy
(Flach 2012, section 2.2)."""
import warnings

import numpy as np

from ._checks import UndefinedMetricWarning, _as_1d, _check_average, _check_labels_1d, _check_scores, _is_text, _weights

__all__ = ['average_precision_score', 'coverage_curve', 'precision_recall_curve', 'roc_auc_score',
           'roc_curve']


def _binary_truth(y_true, pos_label, name="y_true"):
    """Boolean "is positive" array, scikit-learn's rule for pos_label=None."""
    y_true = _check_labels_1d(y_true, name)
    if y_true.shape[0] == 0:
        raise ValueError("%s is empty; at least one sample is required" % name)
    classes = np.unique(y_true)
    if len(classes) > 2:
        raise ValueError("%s holds %d classes; this metric needs a binary target"
                         % (name, len(classes)))
    if pos_label is None:
        numeric = not _is_text(classes)
        if not numeric or not set(classes.tolist()) <= {-1, 0, 1} \
                or set(classes.tolist()) == {-1, 0}:
            raise ValueError("%s takes the values %s; set pos_label to say which "
                             "one is positive" % (name, classes.tolist()))
        pos_label = 1
    return y_true == pos_label


def _curve_counts(is_positive, y_score, weight):
    """Weighted false and true positive counts at each distinct threshold,
    thresholds decreasing ([Flach2012]_ section 2.2)."""
    order = np.argsort(y_score, kind="mergesort")[::-1]
    score = y_score[order]
    positive = is_positive[order].astype(np.float64)
    w = np.ones_like(score) if weight is None else weight[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(score)), score.size - 1]
    tps = np.cumsum(positive * w)[last_of_tie]
    fps = np.cumsum((1.0 - positive) * w)[last_of_tie]
    return fps, tps, score[last_of_tie]


def _drop_collinear(fps, tps, thresholds):
    """Keep the corners of the curve only (scikit-learn's drop_intermediate)."""
    if len(fps) <= 2:
        return fps, tps, thresholds
    keep = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)),
                                True])
    return fps[keep], tps[keep], thresholds[keep]


def coverage_curve(y_true, y_score, *, pos_label=None, sample_weight=None,
                   drop_intermediate=False):
    """Coverage plot: true positive count against false positive count.

    Sweeping the threshold from high to low, each distinct score adds its
    positives and negatives; the curve runs from ``(0, 0)`` to
    ``(Neg, Pos)`` ([Flach2012]_ section 2.2, "coverage plot").  The ROC
    curve is this curve with both axes normalised.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning "more positive".
    pos_label : label, optional
        Default 1 when the labels are {0, 1} or {-1, 1}.
    sample_weight : array-like of shape (n_samples,), optional
        Counts become sums of weights.
    drop_intermediate : bool, default=False
        Drop points on straight segments (as :func:`roc_curve`).

    Returns
    -------
    fp_counts, tp_counts : ndarray
        Samples scored ``>= thresholds[i]``, negative resp. positive.
    thresholds : ndarray
        Decreasing; ``thresholds[0] = inf`` is the empty prediction.
    """
    is_positive = _binary_truth(y_true, pos_label)
    y_score = _check_scores(y_score, "y_score", is_positive.shape[0])
    weight = _weights(sample_weight, is_positive.shape[0])
    fps, tps, thresholds = _curve_counts(is_positive, y_score, weight)
    if drop_intermediate:
        fps, tps, thresholds = _drop_collinear(fps, tps, thresholds)
    return np.r_[0.0, fps], np.r_[0.0, tps], np.r_[np.inf, thresholds]


def roc_curve(y_true, y_score, *, pos_label=None, sample_weight=None,
              drop_intermediate=True):
    """Receiver operating characteristic curve: true against false positive rate.

    Same output as scikit-learn's ``roc_curve`` (>= 1.3): the first point
    is ``(0, 0)`` with threshold ``inf``; with ``drop_intermediate`` the
    points lying on a straight segment between their neighbours (same fpr
    or same tpr change as the next step) are dropped, which leaves the area
    unchanged.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,)
    pos_label : label, optional
    sample_weight : array-like of shape (n_samples,), optional
    drop_intermediate : bool, default=True

    Returns
    -------
    fpr, tpr, thresholds : ndarray
        ``fpr`` is NaN (with an :class:`UndefinedMetricWarning`) when there
        are no negatives, ``tpr`` likewise without positives.
    """
    fps, tps, thresholds = coverage_curve(y_true, y_score, pos_label=pos_label,
                                          sample_weight=sample_weight,
                                          drop_intermediate=False)
    if drop_intermediate:
        fps, tps, thresholds = _drop_collinear(fps[1:], tps[1:], thresholds[1:])
        fps, tps, thresholds = np.r_[0.0, fps], np.r_[0.0, tps], np.r_[np.inf, thresholds]
    rates = []
    for counts, what in ((fps, "negative"), (tps, "positive")):
        if counts[-1] <= 0:
            warnings.warn("no %s samples in y_true; the %s rate is meaningless"
                          % (what, "false positive" if what == "negative" else
                             "true positive"), UndefinedMetricWarning, stacklevel=2)
            rates.append(np.full(counts.shape, np.nan))
        else:
            rates.append(counts / counts[-1])
    return rates[0], rates[1], thresholds


def _ranking_accuracy(is_positive, y_score, weight):
    """Weighted fraction of (positive, negative) pairs with the positive scored
    higher, ties counting one half: the area under the ROC curve.  One sort,
    O(n log n) ([Flach2012]_ section 2.2)."""
    fps, tps, _ = _curve_counts(is_positive, y_score, weight)
    n_pos, n_neg = tps[-1], fps[-1]
    if n_pos <= 0 or n_neg <= 0:
        raise ValueError("ranking accuracy (ROC AUC) needs both positive and negative "
                         "samples (with non-zero weight); y_true has only one class")
    pos_step = np.diff(np.r_[0.0, tps])      # positives at each distinct score
    neg_step = np.diff(np.r_[0.0, fps])
    neg_below = n_neg - fps                  # negatives scored strictly lower
    correct = np.dot(pos_step, neg_below + 0.5 * neg_step)
    return float(correct / (n_pos * n_neg))


def _check_probabilities(proba, name, n_samples=None):
    proba = _check_scores(proba, name, n_samples, ndim=(1, 2))
    if proba.min() < 0 or proba.max() > 1:
        raise ValueError("%s holds values outside [0, 1]; probabilities expected "
                         "(min %g, max %g)" % (name, proba.min(), proba.max()))
    if proba.ndim == 2:
        sums = proba.sum(axis=1)
        bad = ~np.isclose(sums, 1.0, rtol=np.sqrt(np.finfo(np.float64).eps), atol=0)
        if bad.any():
            i = np.flatnonzero(bad)[0]
            raise ValueError("rows of %s must sum to 1 (class probabilities); row %d "
                             "sums to %r" % (name, i, float(sums[i])))
    return proba


def roc_auc_score(y_true, y_score, *, average="macro", sample_weight=None,
                  multi_class="ovr", labels=None):
    """Area under the ROC curve, computed as ranking accuracy.

    For two classes, the (weighted) fraction of positive–negative pairs in
    which the positive gets the higher score, a tie counting one half
    ([Flach2012]_ section 2.2; the Mann–Whitney statistic).  Computed with
    one sort, O(n log n).  For more classes, one-vs-rest: each class against
    the others on its own column of ``y_score``, then averaged.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (the greater label is positive) or class labels.
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
        Binary: scores of the greater label (a 2-column array uses column 1).
        Multi-class: class probabilities (rows must sum to 1, as in
        scikit-learn), columns in the order of ``labels``.
    average : {'macro', 'weighted'}, default='macro'
        Multi-class averaging; 'weighted' uses the (weighted) class counts.
    sample_weight : array-like of shape (n_samples,), optional
    multi_class : {'ovr', 'raise'}, default='ovr'
        Unlike scikit-learn (default 'raise') one-vs-rest is the default.
    labels : array-like, optional
        Multi-class: the classes of the columns of ``y_score`` (default the
        sorted classes of ``y_true``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When ``y_true`` holds a single class (scikit-learn warns and returns NaN).
    """
    if multi_class not in ("ovr", "raise"):
        raise ValueError("multi_class must be 'ovr' or 'raise', got %r" % (multi_class,))
    _check_average(average, ("macro", "weighted"))
    y_true = _check_labels_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required")
    y_score = _check_scores(y_score, "y_score", y_true.shape[0], ndim=(1, 2))
    weight = _weights(sample_weight, y_true.shape[0])
    classes = np.unique(y_true)
    is_multiclass = len(classes) > 2 or (y_score.ndim == 2 and y_score.shape[1] > 2)
    if not is_multiclass:
        if y_score.ndim == 2:
            y_score = y_score[:, 1]
        return _ranking_accuracy(y_true == classes[-1], y_score, weight)
    if multi_class == "raise":
        raise ValueError("y_true holds %d classes; pass multi_class='ovr'" % len(classes))
    if y_score.ndim != 2:
        raise ValueError("multi-class ROC AUC needs y_score of shape (n_samples, "
                         "n_classes)")
    y_score = _check_probabilities(y_score, "y_score")
    if labels is None:
        labels = classes
    else:
        labels = _as_1d(labels, "labels")
        if len(np.unique(labels)) != len(labels):
            raise ValueError("labels contains duplicates")
        missing = np.setdiff1d(classes, labels)
        if missing.size:
            raise ValueError("y_true holds label %r, which is not in labels" % (missing[0],))
    if len(labels) != y_score.shape[1]:
        raise ValueError("y_score has %d columns but there are %d classes"
                         % (y_score.shape[1], len(labels)))
    w = np.ones(y_true.shape[0]) if weight is None else weight
    scores, prevalence = [], []
    for k, label in enumerate(labels):
        is_positive = y_true == label
        scores.append(_ranking_accuracy(is_positive, y_score[:, k], weight))
        prevalence.append(w[is_positive].sum())
    if average == "weighted":
        return float(np.average(scores, weights=prevalence))
    return float(np.mean(scores))


def precision_recall_curve(y_true, y_score, *, pos_label=None, sample_weight=None):
    """Precision against recall at every distinct score threshold.

    Same output as scikit-learn's ``precision_recall_curve``: ``thresholds``
    increasing; ``precision[i]`` and ``recall[i]`` of predicting positive when
    the score is ``>= thresholds[i]``; a last point ``(precision 1, recall 0)``
    without a threshold.  Precision of an empty prediction is 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning "more positive".
    pos_label : label, optional
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    precision, recall : ndarray of shape (n_thresholds + 1,)
    thresholds : ndarray of shape (n_thresholds,)
    """
    fps, tps, thresholds = coverage_curve(y_true, y_score, pos_label=pos_label,
                                          sample_weight=sample_weight)
    fps, tps, thresholds = fps[1:], tps[1:], thresholds[1:]
    predicted = tps + fps
    precision = np.zeros_like(tps)
    np.divide(tps, predicted, out=precision, where=predicted != 0)
    if tps.size == 0 or tps[tps.size - 1] <= 0:
        warnings.warn("no positive samples in y_true; recall is set to 1 everywhere",
                      UndefinedMetricWarning, stacklevel=2)
        recall = np.ones_like(tps)
    else:
        recall = tps / tps[tps.size - 1]
    return (np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1])


def average_precision_score(y_true, y_score, *, pos_label=None, sample_weight=None):
    """Area under the precision-recall step curve: ``sum_n (R_n - R_{n-1}) P_n``.

    As scikit-learn's ``average_precision_score`` for binary labels (no
    interpolation).  For ranking metrics by query see :func:`mean_average_precision`.
    """
    precision, recall, _ = precision_recall_curve(y_true, y_score, pos_label=pos_label,
                                                  sample_weight=sample_weight)
    return float(-np.sum(np.diff(recall) * precision[:precision.size - 1]))
