"""Metrics of decisions beyond accuracy: error rates by kind, ranking error, the
coverage-accuracy trade-off of a reject option, and the average cost under a
cost matrix.

``false_positive_rate`` ``fp / (fp + tn)`` and ``false_negative_rate``
``fn / (fn + tp)`` ([Flach2012]_ table 2.3: 1 - specificity and 1 - recall);
``ranking_error`` ([Flach2012]_ section 2.2): the share of (positive, negative)
pairs ranked the wrong way, a tie counting one half, so that
``ranking_error = 1 - roc_auc_score`` exactly (with ``ties="strict"`` a tie is
a whole error and the identity becomes ``ranking_error >= 1 - AUC``);
``coverage_accuracy_curve``: accuracy on the accepted samples against the share
accepted, when samples below a confidence threshold are rejected (Chow 1970;
El-Yaniv & Wiener 2010 call it the risk-coverage curve); ``average_cost``: mean
of ``cost[y_true, y_pred]``.

References
----------
Chow, C. K. (1970). On optimum recognition error and reject tradeoff. IEEE
Trans. Information Theory 16(1), 41-46.
El-Yaniv, R. & Wiener, Y. (2010). On the foundations of noise-free selective
classification. JMLR 11, 1605-1641.
"""
import numpy as np

from ._checks import _check_labels_1d, _check_scores, _check_targets, _encode, _weights
from .classification import recall_score, specificity_score
from .scores import _binary_truth, _curve_counts

__all__ = ["average_cost", "coverage_accuracy_curve", "false_negative_rate",
           "false_positive_rate", "ranking_error"]


def false_positive_rate(y_true, y_pred, *, pos_label=1, sample_weight=None):
    """``fp / (fp + tn)``: the share of negatives predicted positive (1 - specificity).

    Binary labels; ``pos_label`` names the positive class.  Raises ``ValueError``
    when there are no negatives.
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    if not (y_true != pos_label).any():
        raise ValueError("false_positive_rate needs negative samples; y_true has none")
    return 1.0 - float(specificity_score(y_true, y_pred, pos_label=pos_label,
                                         sample_weight=sample_weight, zero_division=0.0))


def false_negative_rate(y_true, y_pred, *, pos_label=1, sample_weight=None):
    """``fn / (fn + tp)``: the share of positives predicted negative (1 - recall, the miss rate).

    Raises ``ValueError`` when there are no positives.
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    if not (y_true == pos_label).any():
        raise ValueError("false_negative_rate needs positive samples; y_true has none")
    return 1.0 - float(recall_score(y_true, y_pred, pos_label=pos_label,
                                    sample_weight=sample_weight, zero_division=0.0))


def ranking_error(y_true, y_score, *, pos_label=None, sample_weight=None, ties="half"):
    """Share of (positive, negative) pairs the scores rank the wrong way.

    Parameters
    ----------
    y_true : array-like (n_samples,) binary labels
    y_score : array-like (n_samples,) scores, larger = more positive
    pos_label : label, optional (default: 1 for {0, 1} or {-1, 1} labels)
    sample_weight : array-like, optional (a pair weighs the product of its weights)
    ties : {"half", "strict"}, default="half"
        A tied pair counts 1/2 (then ``ranking_error = 1 - roc_auc_score``) or
        1 (``"strict"``: only pairs with the positive strictly above are right).

    Returns
    -------
    float in [0, 1]
    """
    if ties not in ("half", "strict"):
        raise ValueError("ties must be 'half' or 'strict', got %r" % (ties,))
    is_positive = _binary_truth(y_true, pos_label)
    score = _check_scores(y_score, "y_score", is_positive.shape[0])
    weight = _weights(sample_weight, is_positive.shape[0])
    fps, tps, _ = _curve_counts(is_positive, score, weight)
    n_pos, n_neg = tps[len(tps) - 1], fps[len(fps) - 1]
    if n_pos <= 0 or n_neg <= 0:
        raise ValueError("ranking_error needs both positive and negative samples")
    pos_step = np.diff(np.r_[0.0, tps])
    neg_step = np.diff(np.r_[0.0, fps])
    neg_above = fps - neg_step                    # negatives scored strictly higher
    tie_weight = 0.5 if ties == "half" else 1.0
    wrong = np.dot(pos_step, neg_above + tie_weight * neg_step)
    return float(wrong / (n_pos * n_neg))


def coverage_accuracy_curve(y_true, y_pred, confidence, *, sample_weight=None):
    """Accuracy of the accepted samples against coverage, over rejection thresholds.

    A sample is accepted at threshold ``t`` when ``confidence >= t``; one point
    per distinct confidence, from the most confident sample alone to all.

    Parameters
    ----------
    y_true, y_pred : array-like (n_samples,)
    confidence : array-like (n_samples,)  e.g. the largest posterior or the margin
    sample_weight : array-like, optional

    Returns
    -------
    coverage : ndarray  share of (weighted) samples accepted, increasing to 1
    accuracy : ndarray  accuracy on the accepted samples
    thresholds : ndarray  decreasing confidence thresholds
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    conf = _check_scores(confidence, "confidence", y_true.shape[0])
    weight = _weights(sample_weight, y_true.shape[0])
    if weight is None:
        weight = np.ones(y_true.shape[0])
    order = np.argsort(-conf, kind="mergesort")
    c, w = conf[order], weight[order]
    correct = (y_true == y_pred)[order].astype(np.float64) * w
    last = np.r_[np.flatnonzero(c[1:] != c[:-1]), len(c) - 1]
    accepted = np.cumsum(w)[last]
    right = np.cumsum(correct)[last]
    total = accepted[len(accepted) - 1]
    if total <= 0:
        raise ValueError("all sample weights are zero")
    accuracy = np.divide(right, accepted, out=np.ones_like(right), where=accepted > 0)
    return accepted / total, accuracy, c[last]


def average_cost(y_true, y_pred, cost_matrix, *, labels=None, sample_weight=None):
    """Mean of ``cost_matrix[y_true, y_pred]`` (rows: truth, columns: prediction).

    ``labels`` gives the order of the rows/columns (default: the sorted labels
    of ``y_true`` and ``y_pred``).
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    C = np.asarray(cost_matrix, dtype=np.float64)
    if labels is None:
        labels = np.unique(np.concatenate([y_true, y_pred]))
    else:
        labels = _check_labels_1d(labels, "labels")
    if C.shape != (len(labels), len(labels)) or not np.isfinite(C).all():
        raise ValueError("cost_matrix must be a finite (%d, %d) array for labels %s, got "
                         "shape %r" % (len(labels), len(labels), list(labels)[:10], C.shape))
    ti, pi = _encode(y_true, np.asarray(labels)), _encode(y_pred, np.asarray(labels))
    if (ti < 0).any() or (pi < 0).any():
        raise ValueError("y_true / y_pred hold labels not in labels")
    return float(np.average(C[ti, pi], weights=_weights(sample_weight, y_true.shape[0])))
