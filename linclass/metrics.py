"""Evaluation metrics: classification, probability, margin losses, ranking, chunks.

Everything here is plain numpy (no Cython, no scikit-learn).  Functions that
have a scikit-learn namesake take the same arguments and return the same
numbers (checked against scikit-learn in ``tests/test_metrics.py``); the
few deliberate differences are listed in each docstring.

Groups of functions
-------------------
Label predictions
    :func:`accuracy_score`, :func:`error_rate`, :func:`precision_score`,
    :func:`recall_score` (true positive rate), :func:`specificity_score`
    (true negative rate), :func:`f1_score`, :func:`fbeta_score`,
    :func:`precision_recall_fscore_support`, :func:`confusion_matrix`,
    :func:`classification_report`, :func:`class_ratio`.
Scores (rankings)
    :func:`roc_curve`, :func:`coverage_curve`, :func:`roc_auc_score`,
    :func:`pairwise_ranking_accuracy`, :func:`ndcg_at_k`.
Probability estimates
    :func:`brier_score`, :func:`brier_score_loss`, :func:`log_loss`.
Margin losses
    :func:`margin_loss` (objects with ``value`` and ``derivative``),
    :func:`zero_one_loss_margin`, :func:`hinge_loss_margin`,
    :func:`logistic_loss_margin`, :func:`exponential_loss_margin`,
    :func:`squared_loss_margin`, :func:`hinge_loss`.
Sequences (chunking / named entities, as the CoNLL ``conlleval`` script)
    :func:`chunk_precision_recall_f1`, :func:`chunk_f1`, :func:`conlleval_counts`,
    :func:`conlleval_report`, :func:`conlleval_report_from_lines`,
    :func:`read_conlleval_lines`,
    :func:`token_accuracy`, :func:`sentence_accuracy`.

References
----------
.. [Flach2012] P. Flach, *Machine Learning: The Art and Science of Algorithms
   that Make Sense of Data*, Cambridge University Press, 2012 (chapter 2:
   coverage plots, ROC plots, ranking accuracy, squared error of probability
   estimates; chapter 7: margin losses).
.. [Brier1950] G. W. Brier, "Verification of forecasts expressed in terms of
   probability", Monthly Weather Review 78(1), 1950.
.. [Conll2000] E. F. Tjong Kim Sang and S. Buchholz, "Introduction to the
   CoNLL-2000 shared task: chunking", CoNLL 2000; the ``conlleval`` script
   (version 2004-01-26) by E. F. Tjong Kim Sang.
.. [TjongKimSang1999] E. F. Tjong Kim Sang and J. Veenstra, "Representing text
   chunks", EACL 1999 (the IOB1/IOB2/IOE1/IOE2 representations).
.. [Jarvelin2002] K. Jarvelin and J. Kekalainen, "Cumulated gain-based
   evaluation of IR techniques", ACM TOIS 20(4), 2002.
.. [McSherry2008] F. McSherry and M. Najork, "Computing information retrieval
   performance measures efficiently in the presence of tied scores", ECIR 2008.
"""
import numbers
import warnings
from collections import Counter

import numpy as np

from ._validation import check_sample_weight
from .exceptions import DataFormatError

__all__ = [
    "UndefinedMetricWarning",
    # label predictions
    "accuracy_score", "error_rate", "precision_score", "recall_score",
    "specificity_score", "f1_score", "fbeta_score",
    "precision_recall_fscore_support", "confusion_matrix",
    "classification_report", "class_ratio",
    # scores
    "roc_curve", "coverage_curve", "roc_auc_score",
    "pairwise_ranking_accuracy", "ndcg_at_k",
    # probabilities
    "brier_score", "brier_score_loss", "log_loss",
    # margin losses
    "MarginLoss", "margin_loss", "MARGIN_LOSSES", "zero_one_loss_margin",
    "hinge_loss_margin", "logistic_loss_margin", "exponential_loss_margin",
    "squared_loss_margin", "hinge_loss",
    # sequences
    "CHUNK_SCHEMES", "ConllevalCounts", "conlleval_counts",
    "chunk_precision_recall_f1", "chunk_f1", "conlleval_report",
    "read_conlleval_lines", "conlleval_report_from_lines", "token_accuracy",
    "sentence_accuracy",
]


class UndefinedMetricWarning(UserWarning):
    """A metric divided by zero and was set to ``zero_division`` (0 by default)."""


_AVERAGES = (None, "binary", "micro", "macro", "weighted")


# ---------------------------------------------------------------------------
# input validation shared by the metrics
# ---------------------------------------------------------------------------

def _as_1d(values, name):
    if values is None:
        raise ValueError("%s is required (got None)" % name)
    if isinstance(values, (str, bytes)):
        raise ValueError("%s must be an array-like of labels, got a string" % name)
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError("%s must be 1-D (one value per sample), got shape %r"
                         % (name, arr.shape))
    return arr


def _check_labels_1d(y, name):
    """A 1-D array of class labels: no NaN/None, no continuous values."""
    y = _as_1d(y, name)
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("%s contains NaN or infinity" % name)
        if np.any(y != np.round(y)):
            raise ValueError("%s holds continuous values (e.g. %r); classification "
                             "metrics need class labels"
                             % (name, y[np.flatnonzero(y != np.round(y))[0]]))
    elif y.dtype == object:
        if any(v is None for v in y):
            raise ValueError("%s contains None" % name)
        kinds = {isinstance(v, str) for v in y}
        if len(kinds) > 1:
            raise ValueError("%s mixes strings and numbers" % name)
        if kinds == {True}:
            y = y.astype(str)
    elif y.dtype.kind not in "iubUS":
        raise ValueError("%s has unsupported dtype %s for class labels" % (name, y.dtype))
    return y


def _is_text(arr):
    return arr.dtype.kind in "US" or arr.dtype == object


def _check_same_kind(arrays_and_names):
    kinds = {_is_text(a) for a, _ in arrays_and_names if a.size}
    if len(kinds) > 1:
        names = ", ".join(n for _, n in arrays_and_names)
        raise ValueError("labels in %s mix strings and numbers" % names)


def _check_lengths(n_expected, arr, name, other="y_true"):
    if arr.shape[0] != n_expected:
        raise ValueError("%s has %d entries but %s has %d; they must have one "
                         "entry per sample" % (name, arr.shape[0], other, n_expected))


def _check_targets(y_true, y_pred):
    y_true = _check_labels_1d(y_true, "y_true")
    y_pred = _check_labels_1d(y_pred, "y_pred")
    _check_lengths(y_true.shape[0], y_pred, "y_pred")
    if y_true.shape[0] == 0:
        raise ValueError("y_true and y_pred are empty; at least one sample is required")
    _check_same_kind([(y_true, "y_true"), (y_pred, "y_pred")])
    return y_true, y_pred


def _weights(sample_weight, n_samples):
    if sample_weight is None:
        return None
    return check_sample_weight(sample_weight, n_samples)


def _check_scores(scores, name, n_samples=None, ndim=(1,)):
    if scores is None:
        raise ValueError("%s is required (got None)" % name)
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("%s must hold numbers" % name)
    if arr.ndim == 2 and arr.shape[1] == 1 and 1 in ndim:
        arr = arr.ravel()
    if arr.ndim not in ndim:
        raise ValueError("%s must be %s, got shape %r"
                         % (name, " or ".join("%d-D" % d for d in ndim), arr.shape))
    if n_samples is not None:
        _check_lengths(n_samples, arr, name)
    if arr.shape[0] == 0:
        raise ValueError("%s is empty; at least one sample is required" % name)
    if not np.isfinite(arr).all():
        raise ValueError("%s contains NaN or infinity; scores must be finite" % name)
    return arr


def _check_zero_division(zero_division):
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, numbers.Real) and not isinstance(zero_division, bool):
        if zero_division in (0, 1):
            return float(zero_division)
        if np.isnan(zero_division):
            return np.nan
    raise ValueError('zero_division must be "warn", 0, 1 or np.nan, got %r'
                     % (zero_division,))


def _check_average(average, allowed=_AVERAGES):
    if average not in allowed:
        raise ValueError("average must be one of %r, got %r" % (allowed, average))


def _union_labels(*arrays):
    try:
        return np.unique(np.concatenate([np.asarray(a).ravel() for a in arrays]))
    except TypeError:
        raise ValueError("labels are not mutually comparable (mixed types?)")


def _encode(y, classes):
    """Index of each label of ``y`` in sorted ``classes`` (-1 if absent)."""
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    return np.where(classes[pos] == y, pos, -1)


# ---------------------------------------------------------------------------
# label predictions
# ---------------------------------------------------------------------------

def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None):
    """Fraction (or weighted count) of correctly predicted labels.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    normalize : bool, default=True
        Return the fraction; if False, the (weighted) number of correct labels.
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    weight = _weights(sample_weight, y_true.shape[0])
    correct = (y_true == y_pred).astype(np.float64)
    if weight is None:
        return float(correct.mean()) if normalize else float(correct.sum())
    if normalize:
        if weight.sum() == 0:
            raise ValueError("sample_weight sums to zero")
        return float(np.average(correct, weights=weight))
    return float(np.dot(correct, weight))


def error_rate(y_true, y_pred, *, sample_weight=None):
    """Fraction of wrongly predicted labels, ``1 - accuracy_score``."""
    return 1.0 - accuracy_score(y_true, y_pred, sample_weight=sample_weight)


def _resolve_labels(y_true, y_pred, labels, average, pos_label):
    """Labels to score (scikit-learn's rules for ``average='binary'``)."""
    _check_average(average)
    present = _union_labels(y_true, y_pred)
    if average == "binary":
        if len(present) > 2:
            raise ValueError("y_true and y_pred hold %d classes but average='binary'; "
                             "choose average='micro', 'macro', 'weighted' or None"
                             % len(present))
        if pos_label not in present.tolist() and len(present) >= 2:
            raise ValueError("pos_label=%r is not a valid label; it should be one "
                             "of %s" % (pos_label, present.tolist()))
        return np.asarray([pos_label])
    if labels is None:
        return present
    labels = _as_1d(labels, "labels")
    if labels.shape[0] == 0:
        raise ValueError("labels is empty")
    _check_same_kind([(labels, "labels"), (present, "y_true/y_pred")])
    return labels


def _one_vs_rest_counts(y_true, y_pred, labels, weight):
    """Weighted tp, fp, fn, tn for each label (one against the rest)."""
    classes = _union_labels(y_true, y_pred, labels)
    n_classes = len(classes)
    true_code = _encode(y_true, classes)
    pred_code = _encode(y_pred, classes)
    w = np.ones(y_true.shape[0]) if weight is None else weight
    true_sum = np.bincount(true_code, weights=w, minlength=n_classes)
    pred_sum = np.bincount(pred_code, weights=w, minlength=n_classes)
    hit = true_code == pred_code
    tp = np.bincount(true_code[hit], weights=w[hit], minlength=n_classes)
    label_code = _encode(labels, classes)
    tp, true_sum, pred_sum = tp[label_code], true_sum[label_code], pred_sum[label_code]
    total = w.sum()
    if weight is None:       # exact integer counts, as scikit-learn returns
        tp, true_sum, pred_sum = (np.rint(a).astype(np.int64)
                                  for a in (tp, true_sum, pred_sum))
        total = int(round(total))
    fp = pred_sum - tp
    fn = true_sum - tp
    tn = total - tp - fp - fn
    return tp, fp, fn, tn


def _divide(numerator, denominator, zero_division, what, warn):
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    zero = denominator == 0
    result = numerator / np.where(zero, 1.0, denominator)
    if np.any(zero):
        result[zero] = _check_zero_division(zero_division)
        if warn and isinstance(zero_division, str):
            warnings.warn("%s is ill-defined and being set to 0.0 for %d label(s) "
                          "with no %s samples; use the zero_division parameter to "
                          "control this" % (what[0], int(zero.sum()), what[1]),
                          UndefinedMetricWarning, stacklevel=3)
    return result


def _nanaverage(values, weights=None):
    keep = ~np.isnan(values)
    if not keep.any():
        return np.nan
    if weights is None or np.sum(weights[keep]) == 0:
        return float(np.mean(values[keep]))
    return float(np.average(values[keep], weights=weights[keep]))


def precision_recall_fscore_support(y_true, y_pred, *, beta=1.0, labels=None,
                                    pos_label=1, average=None,
                                    warn_for=("precision", "recall", "f-score"),
                                    sample_weight=None, zero_division="warn"):
    """Precision, recall, F-beta and support, per label or averaged.

    ``precision = tp / (tp + fp)``, ``recall = tp / (tp + fn)`` and
    ``F_beta = (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp)``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    beta : float, default=1.0
        Weight of recall against precision (``inf`` gives recall, 0 precision).
    labels : array-like, optional
        Labels to score (and their order for ``average=None``); default all
        labels of ``y_true`` and ``y_pred``, sorted.
    pos_label : label, default=1
        The positive class for ``average='binary'``.
    average : {None, 'binary', 'micro', 'macro', 'weighted'}, default=None
        None: one value per label.  'binary': the positive class only.
        'micro': from summed counts.  'macro': unweighted mean over labels.
        'weighted': mean weighted by support.
    warn_for : tuple of str
        Which of "precision", "recall", "f-score" warn on zero division.
    sample_weight : array-like of shape (n_samples,), optional
    zero_division : {"warn", 0, 1, np.nan}, default="warn"
        Value for a division by zero; "warn" gives 0 and an
        :class:`UndefinedMetricWarning`.  NaN values are left out of averages.

    Returns
    -------
    precision, recall, fbeta : float or ndarray of shape (n_labels,)
    support : ndarray of shape (n_labels,) or None (when averaged)
    """
    _check_zero_division(zero_division)
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not beta >= 0:
        raise ValueError("beta must be a number >= 0, got %r" % (beta,))
    y_true, y_pred = _check_targets(y_true, y_pred)
    weight = _weights(sample_weight, y_true.shape[0])
    labels = _resolve_labels(y_true, y_pred, labels, average, pos_label)
    tp, fp, fn, _ = _one_vs_rest_counts(y_true, y_pred, labels, weight)
    pred_sum, true_sum = tp + fp, tp + fn
    if average == "micro":
        tp, pred_sum, true_sum = (np.array([a.sum()]) for a in (tp, pred_sum, true_sum))
    precision = _divide(tp, pred_sum, zero_division, ("Precision", "predicted"),
                        "precision" in warn_for)
    recall = _divide(tp, true_sum, zero_division, ("Recall", "true"),
                     "recall" in warn_for)
    if np.isposinf(beta):
        fscore = recall
    elif beta == 0:
        fscore = precision
    else:
        beta2 = float(beta) ** 2
        fscore = _divide((1 + beta2) * tp, beta2 * true_sum + pred_sum, zero_division,
                         ("F-score", "true nor predicted"), "f-score" in warn_for)
    if average is None:
        return precision, recall, fscore, true_sum
    weights = np.asarray(true_sum, dtype=np.float64) if average == "weighted" else None
    return (_nanaverage(precision, weights), _nanaverage(recall, weights),
            _nanaverage(fscore, weights), None)


def precision_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary",
                    sample_weight=None, zero_division="warn"):
    """Precision ``tp / (tp + fp)``; see :func:`precision_recall_fscore_support`."""
    return precision_recall_fscore_support(
        y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("precision",), sample_weight=sample_weight,
        zero_division=zero_division)[0]


def recall_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary",
                 sample_weight=None, zero_division="warn"):
    """Recall = true positive rate ``tp / (tp + fn)``; see
    :func:`precision_recall_fscore_support`."""
    return precision_recall_fscore_support(
        y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("recall",), sample_weight=sample_weight,
        zero_division=zero_division)[1]


def fbeta_score(y_true, y_pred, *, beta, labels=None, pos_label=1, average="binary",
                sample_weight=None, zero_division="warn"):
    """F-beta score; see :func:`precision_recall_fscore_support`."""
    return precision_recall_fscore_support(
        y_true, y_pred, beta=beta, labels=labels, pos_label=pos_label,
        average=average, warn_for=("f-score",), sample_weight=sample_weight,
        zero_division=zero_division)[2]


def f1_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary",
             sample_weight=None, zero_division="warn"):
    """F1 score, the harmonic mean of precision and recall."""
    return fbeta_score(y_true, y_pred, beta=1.0, labels=labels, pos_label=pos_label,
                       average=average, sample_weight=sample_weight,
                       zero_division=zero_division)


def specificity_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary",
                      sample_weight=None, zero_division="warn"):
    """Specificity = true negative rate ``tn / (tn + fp)`` (one label against the rest).

    Same arguments as :func:`recall_score`.  For a binary problem the
    specificity for ``pos_label`` is the recall of the other class.
    ``average='micro'`` divides the summed ``tn`` by the summed ``tn + fp``;
    ``'weighted'`` weights each label by its support (its number of true
    samples), as the other scores do.  [Flach2012]_ section 2.1.

    Returns
    -------
    float, or ndarray of shape (n_labels,) for ``average=None``
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    weight = _weights(sample_weight, y_true.shape[0])
    labels = _resolve_labels(y_true, y_pred, labels, average, pos_label)
    tp, fp, fn, tn = _one_vs_rest_counts(y_true, y_pred, labels, weight)
    true_sum = tp + fn
    if average == "micro":
        tn, fp = np.array([tn.sum()]), np.array([fp.sum()])
    value = _divide(tn, tn + fp, zero_division, ("Specificity", "negative"), True)
    if average is None:
        return value
    weights = np.asarray(true_sum, dtype=np.float64) if average == "weighted" else None
    return _nanaverage(value, weights)


def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize=None):
    """Confusion matrix ``C[i, j]`` = (weighted) count of true ``labels[i]``
    predicted as ``labels[j]``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like, optional
        Row/column order; samples whose true or predicted label is not listed
        are left out.  Default: sorted union of the labels seen.
    sample_weight : array-like of shape (n_samples,), optional
    normalize : {None, 'true', 'pred', 'all'}
        Divide by row sums, column sums or the total (0/0 gives 0).

    Returns
    -------
    ndarray of shape (n_labels, n_labels)
        int64 without weights or normalisation, float64 otherwise.
    """
    if normalize not in (None, "true", "pred", "all"):
        raise ValueError("normalize must be None, 'true', 'pred' or 'all', got %r"
                         % (normalize,))
    y_true, y_pred = _check_targets(y_true, y_pred)
    weight = _weights(sample_weight, y_true.shape[0])
    if labels is None:
        labels = _union_labels(y_true, y_pred)
    else:
        labels = _as_1d(labels, "labels")
        if labels.shape[0] == 0:
            raise ValueError("labels is empty")
        _check_same_kind([(labels, "labels"), (y_true, "y_true")])
        if not np.isin(labels, y_true).any():
            raise ValueError("none of the given labels occurs in y_true")
    n_labels = labels.shape[0]
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    if np.any(sorted_labels[1:] == sorted_labels[:-1]):
        raise ValueError("labels contains duplicates")
    true_code, pred_code = _encode(y_true, sorted_labels), _encode(y_pred, sorted_labels)
    keep = (true_code >= 0) & (pred_code >= 0)
    position = np.empty(n_labels, dtype=np.int64)
    position[order] = np.arange(n_labels)          # sorted index -> caller's order
    rows, cols = order[true_code[keep]], order[pred_code[keep]]
    w = np.ones(keep.sum()) if weight is None else weight[keep]
    matrix = np.bincount(rows * n_labels + cols, weights=w,
                         minlength=n_labels * n_labels).reshape(n_labels, n_labels)
    if weight is None:
        matrix = np.rint(matrix).astype(np.int64)
    if normalize is None:
        return matrix
    matrix = matrix.astype(np.float64)
    with np.errstate(all="ignore"):
        if normalize == "true":
            matrix = matrix / matrix.sum(axis=1, keepdims=True)
        elif normalize == "pred":
            matrix = matrix / matrix.sum(axis=0, keepdims=True)
        else:
            matrix = matrix / matrix.sum()
    return np.nan_to_num(matrix)


def classification_report(y_true, y_pred, *, labels=None, target_names=None,
                          sample_weight=None, digits=2, output_dict=False,
                          zero_division="warn"):
    """Text table of precision, recall, F1 and support per label, with averages.

    The layout is scikit-learn's: one row per label, then ``accuracy`` (the
    micro average, when every present label is listed), ``macro avg`` and
    ``weighted avg``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like, optional
    target_names : list of str, optional
        Display names, one per label.
    sample_weight : array-like of shape (n_samples,), optional
    digits : int, default=2
    output_dict : bool, default=False
        Return a nested dict instead of text.
    zero_division : {"warn", 0, 1, np.nan}

    Returns
    -------
    str or dict
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    present = _union_labels(y_true, y_pred)
    labels_given = labels is not None
    labels = present if labels is None else _as_1d(labels, "labels")
    micro_is_accuracy = (not labels_given
                         or set(labels.tolist()) >= set(present.tolist()))
    if target_names is not None and len(labels) != len(target_names):
        if labels_given:
            warnings.warn("labels size, %d, does not match size of target_names, %d"
                          % (len(labels), len(target_names)))
        else:
            raise ValueError("there are %d classes but %d target_names; pass labels= "
                             "to choose the classes" % (len(labels), len(target_names)))
    if target_names is None:
        target_names = ["%s" % label for label in labels]
    headers = ["precision", "recall", "f1-score", "support"]
    p, r, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average=None, sample_weight=sample_weight,
        zero_division=zero_division)
    rows = list(zip(target_names, p, r, f1, support))
    averaged = []
    for average in ("micro", "macro", "weighted"):
        heading = "accuracy" if average == "micro" and micro_is_accuracy \
            else average + " avg"
        avg_p, avg_r, avg_f, _ = precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=average,
            sample_weight=sample_weight, zero_division=zero_division)
        averaged.append((heading, avg_p, avg_r, avg_f, np.sum(support)))
    if output_dict:
        report = {name: dict(zip(headers, [float(v) for v in values]))
                  for name, *values in rows + averaged}
        if "accuracy" in report:
            report["accuracy"] = report["accuracy"]["precision"]
        return report
    width = max(max(len(name) for name in target_names), len("weighted avg"), digits)
    head_fmt = "{:>{width}s} " + " {:>9}" * len(headers)
    row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
    text = head_fmt.format("", *headers, width=width) + "\n\n"
    for row in rows:
        text += row_fmt.format(*row, width=width, digits=digits)
    text += "\n"
    for heading, avg_p, avg_r, avg_f, total in averaged:
        if heading == "accuracy":
            acc_fmt = ("{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f}"
                       + " {:>9}\n")
            text += acc_fmt.format(heading, "", "", avg_f, total, width=width,
                                   digits=digits)
        else:
            text += row_fmt.format(heading, avg_p, avg_r, avg_f, total, width=width,
                                   digits=digits)
    return text


def class_ratio(y_true, *, pos_label=1, sample_weight=None):
    """Class ratio ``clr = Pos / Neg`` ([Flach2012]_ table 2.2).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    pos_label : label, default=1
        Every other label counts as negative.
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
        ``inf`` when there are no negatives.
    """
    y_true = _check_labels_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required")
    weight = _weights(sample_weight, y_true.shape[0])
    positive = (y_true == pos_label)
    w = np.ones(y_true.shape[0]) if weight is None else weight
    n_pos, n_neg = float(w[positive].sum()), float(w[~positive].sum())
    if n_neg == 0:
        if n_pos == 0:
            raise ValueError("all sample weights are zero")
        return float("inf")
    return n_pos / n_neg


# ---------------------------------------------------------------------------
# scores: ROC, coverage, AUC (ranking accuracy), ranking
# ---------------------------------------------------------------------------

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


def _group_slices(groups, n_samples):
    if groups is None:
        return [np.arange(n_samples)]
    groups = _as_1d(groups, "groups")
    _check_lengths(n_samples, groups, "groups")
    _, inverse = np.unique(groups, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    bounds = np.flatnonzero(np.diff(inverse.ravel()[order])) + 1
    return np.split(order, bounds)


def pairwise_ranking_accuracy(y_true, scores, groups=None):
    """Fraction of correctly ordered pairs, averaged over groups (queries).

    Within a group, every pair of items with different grades ``y_true``
    counts; it is correct when the higher-graded item has the higher score,
    half correct when the scores tie.  Groups without such a pair are left
    out; the result is the unweighted mean over the remaining groups.  With
    two grades and one group this is :func:`roc_auc_score`.  O(n_grades *
    n log n) per group.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Numeric relevance grades.
    scores : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,), optional
        Query id of each item; pairs are only formed inside a group.

    Returns
    -------
    float
    """
    y_true = _check_scores(y_true, "y_true")
    scores = _check_scores(scores, "scores", y_true.shape[0])
    per_group = []
    for index in _group_slices(groups, y_true.shape[0]):
        grade, score = y_true[index], scores[index]
        grades = np.unique(grade)
        if len(grades) < 2:
            continue
        correct = 0.0
        n_pairs = 0.0
        for g in grades[1:]:
            # items of grade g against all items of lower grade
            subset = grade <= g
            higher = grade[subset] == g
            fps, tps, _ = _curve_counts(higher, score[subset], None)
            pos_step = np.diff(np.r_[0.0, tps])
            neg_step = np.diff(np.r_[0.0, fps])
            correct += np.dot(pos_step, fps[-1] - fps + 0.5 * neg_step)
            n_pairs += tps[-1] * fps[-1]
        per_group.append(correct / n_pairs)
    if not per_group:
        raise ValueError("no group has two items with different grades; pairwise "
                         "ranking accuracy is undefined")
    return float(np.mean(per_group))


def _tie_averaged_dcg(gain, score, discount):
    """DCG where tied scores share the mean gain of their block [McSherry2008]_."""
    _, inverse, counts = np.unique(-score, return_inverse=True, return_counts=True)
    block_gain = np.bincount(inverse.ravel(), weights=gain) / counts
    cumulative = np.cumsum(discount)
    ends = np.cumsum(counts) - 1
    block_discount = np.diff(np.r_[0.0, cumulative[ends]])
    return float(np.dot(block_gain, block_discount))


def ndcg_at_k(y_true, scores, k=None, groups=None, *, gain="linear", ignore_ties=False):
    """Normalised discounted cumulative gain at rank ``k``, averaged over groups.

    ``DCG@k = sum_{i<=k} gain(rel_i) / log2(i + 1)`` over the items sorted
    by decreasing score, divided by the DCG of the ideal order
    [Jarvelin2002]_.  Tied scores share their averaged gain (as
    scikit-learn's ``ndcg_score`` with ``ignore_ties=False``).  A group
    without any relevant item scores 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative relevance grades.
    scores : array-like of shape (n_samples,)
    k : int, optional
        Cut-off rank (default: all items).
    groups : array-like of shape (n_samples,), optional
        Query ids; NDCG is computed per group and averaged (unweighted).
    gain : {'linear', 'exponential'}, default='linear'
        ``rel`` (scikit-learn) or ``2**rel - 1`` (LambdaMART, LightGBM).
    ignore_ties : bool, default=False
        Break ties by position instead of averaging (faster, arbitrary).

    Returns
    -------
    float
    """
    y_true = _check_scores(y_true, "y_true")
    scores = _check_scores(scores, "scores", y_true.shape[0])
    if (y_true < 0).any():
        raise ValueError("y_true (relevance grades) must be non-negative")
    if k is not None:
        check_k = isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1
        if not check_k:
            raise ValueError("k must be a positive integer or None, got %r" % (k,))
    if gain not in ("linear", "exponential"):
        raise ValueError("gain must be 'linear' or 'exponential', got %r" % (gain,))
    values = []
    for index in _group_slices(groups, y_true.shape[0]):
        relevance, score = y_true[index], scores[index]
        gains = relevance if gain == "linear" else np.exp2(relevance) - 1.0
        discount = 1.0 / np.log2(np.arange(len(index)) + 2.0)
        if k is not None:
            discount[k:] = 0.0
        ideal = float(np.dot(np.sort(gains)[::-1], discount))
        if ideal == 0:
            values.append(0.0)
            continue
        if ignore_ties:
            dcg = float(np.dot(gains[np.argsort(-score, kind="stable")], discount))
        else:
            dcg = _tie_averaged_dcg(gains, score, discount)
        values.append(dcg / ideal)
    return float(np.mean(values))


# ---------------------------------------------------------------------------
# probability estimates
# ---------------------------------------------------------------------------

def _proba_targets(y_true, y_proba, labels, pos_label, sample_weight):
    """One-hot truth and 2-D probabilities, columns in the order of the classes."""
    y_true = _check_labels_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required")
    proba = _check_probabilities(y_proba, "y_proba", y_true.shape[0])
    weight = _weights(sample_weight, y_true.shape[0])
    if proba.ndim == 1:
        if labels is not None:
            classes = np.unique(_as_1d(labels, "labels"))
            if len(classes) > 2:
                raise ValueError("y_proba is 1-D (binary) but labels lists %d classes"
                                 % len(classes))
            if pos_label is None:
                pos_label = classes[-1]
        is_positive = _binary_truth(y_true, pos_label)
        truth = np.column_stack([~is_positive, is_positive]).astype(np.float64)
        proba = np.column_stack([1.0 - proba, proba])
        return truth, proba, weight
    if labels is None:
        classes = np.unique(y_true)
    else:
        classes = _as_1d(labels, "labels")
        if len(np.unique(classes)) != len(classes):
            raise ValueError("labels contains duplicates")
        classes = np.sort(classes)
    if proba.shape[1] != len(classes):
        raise ValueError("y_proba has %d columns but there are %d classes %s; pass "
                         "labels= to list all classes" % (proba.shape[1], len(classes),
                                                          classes.tolist()[:10]))
    code = _encode(y_true, classes)
    if (code < 0).any():
        raise ValueError("y_true holds label %r, which is not in labels"
                         % (y_true[np.flatnonzero(code < 0)[0]],))
    truth = np.zeros_like(proba)
    truth[np.arange(len(code)), code] = 1.0
    return truth, proba, weight


def brier_score(y_true, y_proba, *, labels=None, pos_label=None, sample_weight=None):
    """Brier's original score: mean over samples of ``sum_k (p_k - [y = k])^2``.

    Normalisation: the sum over *all* classes, as in [Brier1950]_, so the
    range is ``[0, 2]``.  [Flach2012]_ (section 2.3) halves the per-sample
    sum ("squared error"); his mean squared error is ``brier_score / 2``.
    For two classes ``brier_score = 2 * brier_score_loss`` (scikit-learn's
    binary convention, mean of ``(p - y)^2``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        1-D: probability of the positive class (binary).  2-D: class
        probabilities, columns in sorted class order; rows must sum to 1.
    labels : array-like, optional
        All classes (when ``y_true`` misses some of the columns).
    pos_label : label, optional
        Binary 1-D case: the positive class (default 1 for {0,1}/{-1,1}).
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
    """
    truth, proba, weight = _proba_targets(y_true, y_proba, labels, pos_label,
                                          sample_weight)
    per_sample = np.sum((proba - truth) ** 2, axis=1)
    return float(np.average(per_sample, weights=weight))


def brier_score_loss(y_true, y_proba, *, sample_weight=None, pos_label=None,
                     labels=None, scale_by_half="auto"):
    """scikit-learn's Brier score loss.

    :func:`brier_score` halved when ``scale_by_half`` is True; "auto" halves
    for one or two probability columns (the binary convention: the mean of
    ``(p - y)^2``) and not for three or more classes.

    Returns
    -------
    float
    """
    if scale_by_half not in ("auto", True, False):
        raise ValueError("scale_by_half must be True, False or 'auto', got %r"
                         % (scale_by_half,))
    score = brier_score(y_true, y_proba, labels=labels, pos_label=pos_label,
                        sample_weight=sample_weight)
    if scale_by_half == "auto":
        ndim_shape = np.shape(y_proba)
        scale_by_half = len(ndim_shape) == 1 or ndim_shape[1] < 3
    return score * 0.5 if scale_by_half else score


def log_loss(y_true, y_pred, *, normalize=True, sample_weight=None, labels=None):
    """Cross-entropy: mean over samples of ``-ln p_{y}``.

    Probabilities are clipped to ``[eps, 1 - eps]`` with ``eps`` the float64
    machine epsilon, as scikit-learn does.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        1-D: probability of the greater of the two labels.  2-D: class
        probabilities in sorted class order; rows must sum to 1.
    normalize : bool, default=True
        Mean (True) or sum (False).
    sample_weight : array-like of shape (n_samples,), optional
    labels : array-like, optional
        All classes, needed when ``y_true`` holds a single class.

    Returns
    -------
    float
    """
    y_true_arr = _check_labels_1d(y_true, "y_true")
    classes = np.unique(y_true_arr) if labels is None else np.unique(_as_1d(labels, "labels"))
    if len(classes) < 2:
        raise ValueError("y_true holds a single label (%r); pass labels= with all "
                         "classes" % (classes.tolist(),))
    proba_shape = np.shape(y_pred)
    if len(proba_shape) == 1 or (len(proba_shape) == 2 and proba_shape[1] == 1):
        if len(classes) != 2:
            raise ValueError("y_pred is 1-D (binary) but there are %d classes"
                             % len(classes))
        truth, proba, weight = _proba_targets(y_true_arr, y_pred, classes,
                                              classes[-1], sample_weight)
    else:
        truth, proba, weight = _proba_targets(y_true_arr, y_pred, classes, None,
                                              sample_weight)
    eps = np.finfo(np.float64).eps
    proba = np.clip(proba, eps, 1 - eps)
    loss = -np.sum(truth * np.log(proba), axis=1)
    if normalize:
        return float(np.average(loss, weights=weight))
    return float(np.dot(loss, weight) if weight is not None else loss.sum())


# ---------------------------------------------------------------------------
# margin losses
# ---------------------------------------------------------------------------

class MarginLoss:
    """A loss as a function of the margin ``z = y f(x)`` (``y`` in {-1, +1}).

    Attributes
    ----------
    name : str
    value : callable
        ``value(z)``, vectorised.
    derivative : callable
        ``derivative(z)``, vectorised (a subgradient where the loss has a kink).
    """

    def __init__(self, name, value, derivative, description):
        self.name = name
        self.value = value
        self.derivative = derivative
        self.description = description

    def __call__(self, z):
        return self.value(z)

    def __repr__(self):
        return "MarginLoss(%r: %s)" % (self.name, self.description)


def _margin(z):
    arr = np.asarray(z, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError("margin z contains NaN")
    return arr


def _out(arr, like):
    return arr if np.ndim(like) else float(arr)


def zero_one_loss_margin(z):
    """0-1 loss: 1 if ``z <= 0`` (wrong or on the boundary), else 0.
    Derivative 0 (almost everywhere)."""
    m = _margin(z)
    return _out((m <= 0).astype(np.float64), z)


def hinge_loss_margin(z):
    """Hinge loss ``max(0, 1 - z)``; subgradient -1 for ``z < 1``, 0 for ``z >= 1``."""
    m = _margin(z)
    return _out(np.maximum(0.0, 1.0 - m), z)


def logistic_loss_margin(z, base=2.0):
    """Logistic loss ``log_base(1 + exp(-z))``.

    Base 2 by default, so that the loss is 1 at ``z = 0`` like the 0-1 and
    hinge losses and upper-bounds the 0-1 loss ([Flach2012]_ figure 7.7);
    ``base=np.e`` gives the natural-log loss of logistic regression.
    Computed stably with ``logaddexp``.
    """
    m = _margin(z)
    return _out(np.logaddexp(0.0, -m) / np.log(base), z)


def exponential_loss_margin(z):
    """Exponential loss ``exp(-z)`` (AdaBoost)."""
    m = _margin(z)
    return _out(np.exp(-m), z)


def squared_loss_margin(z):
    """Squared loss ``(1 - z)^2``."""
    m = _margin(z)
    return _out((1.0 - m) ** 2, z)


def _logistic_derivative(z, base):
    m = _margin(z)
    # d/dz log(1 + exp(-z)) = -1 / (1 + exp(z)) = -sigmoid(-z), computed stably
    sigmoid_neg = np.exp(-np.logaddexp(0.0, m))
    return _out(-sigmoid_neg / np.log(base), z)


def _make_margin_losses(base):
    return {
        "zero_one": MarginLoss(
            "zero_one", zero_one_loss_margin,
            lambda z: _out(np.zeros_like(_margin(z)), z), "1 if z <= 0 else 0"),
        "hinge": MarginLoss(
            "hinge", hinge_loss_margin,
            lambda z: _out(-(_margin(z) < 1).astype(np.float64), z), "max(0, 1 - z)"),
        "logistic": MarginLoss(
            "logistic", lambda z: logistic_loss_margin(z, base),
            lambda z: _logistic_derivative(z, base),
            "log(1 + exp(-z)) / log(%g)" % base),
        "exponential": MarginLoss(
            "exponential", exponential_loss_margin,
            lambda z: _out(-np.exp(-_margin(z)), z), "exp(-z)"),
        "squared": MarginLoss(
            "squared", squared_loss_margin,
            lambda z: _out(-2.0 * (1.0 - _margin(z)), z), "(1 - z)^2"),
    }


#: Names accepted by :func:`margin_loss`.
MARGIN_LOSSES = ("zero_one", "hinge", "logistic", "exponential", "squared")


def margin_loss(name, *, base=2.0):
    """The margin loss called ``name`` as a :class:`MarginLoss`.

    Parameters
    ----------
    name : {'zero_one', 'hinge', 'logistic', 'exponential', 'squared'}
    base : float, default=2.0
        Logarithm base of the logistic loss (2: value 1 at z = 0; ``np.e``:
        natural log).

    Returns
    -------
    MarginLoss
        With vectorised ``value(z)`` and ``derivative(z)``.
    """
    if not (isinstance(base, numbers.Real) and np.isfinite(base) and base > 1):
        raise ValueError("base must be a number > 1, got %r" % (base,))
    losses = _make_margin_losses(float(base))
    if name not in losses:
        raise ValueError("unknown margin loss %r; choose one of %s" % (name, MARGIN_LOSSES))
    return losses[name]


def hinge_loss(y_true, pred_decision, *, labels=None, sample_weight=None):
    """Average hinge loss of decision values, as scikit-learn's ``hinge_loss``.

    Binary: the greater label is +1, the other -1, and the loss is the mean of
    ``max(0, 1 - y f(x))``.  Multi-class (``pred_decision`` of shape
    (n_samples, n_classes)): Crammer–Singer, ``max(0, 1 - f_y(x) +
    max_{k != y} f_k(x))``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    pred_decision : array-like of shape (n_samples,) or (n_samples, n_classes)
    labels : array-like, optional
        Multi-class: all classes (the columns of ``pred_decision``).
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
    """
    y_true = _check_labels_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required")
    decision = _check_scores(pred_decision, "pred_decision", y_true.shape[0],
                             ndim=(1, 2))
    weight = _weights(sample_weight, y_true.shape[0])
    classes = np.unique(y_true) if labels is None else np.unique(_as_1d(labels, "labels"))
    if decision.ndim == 2 and decision.shape[1] > 1 or len(classes) > 2:
        if decision.ndim != 2 or decision.shape[1] != len(classes):
            raise ValueError("pred_decision must have one column per class (%d), got "
                             "shape %r" % (len(classes), decision.shape))
        code = _encode(y_true, classes)
        if (code < 0).any():
            raise ValueError("y_true holds label %r, which is not in labels"
                             % (y_true[np.flatnonzero(code < 0)[0]],))
        rows = np.arange(len(code))
        true_score = decision[rows, code]
        others = decision.copy()
        others[rows, code] = -np.inf
        margin = true_score - others.max(axis=1)
    else:
        sign = np.where(y_true == classes[-1], 1.0, -1.0) if len(classes) == 2 \
            else -np.ones(y_true.shape[0])
        margin = sign * decision
    losses = np.maximum(0.0, 1.0 - margin)
    return float(np.average(losses, weights=weight))


# ---------------------------------------------------------------------------
# sequences: chunk F1 exactly as conlleval
# ---------------------------------------------------------------------------

#: Tagging schemes accepted by the chunk metrics.
CHUNK_SCHEMES = (None, "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")

_SCHEME_PREFIXES = {
    "IOB1": {"I", "O", "B"}, "IOB2": {"I", "O", "B"},
    "IOE1": {"I", "O", "E"}, "IOE2": {"I", "O", "E"},
    "IOBES": {"I", "O", "B", "E", "S"}, "BILOU": {"B", "I", "L", "O", "U"},
}
# single-token and chunk-final tags of IOBES/BILOU rewritten to IOB2, which
# keeps the chunks of every valid sequence and lets conlleval's rules apply
_TO_IOB2 = {"IOBES": {"S": "B", "E": "I"}, "BILOU": {"U": "B", "L": "I"}}

_END_PAIRS = frozenset([("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
                        ("E", "E"), ("E", "I"), ("E", "O")])
_START_PAIRS = frozenset([("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
                          ("E", "E"), ("E", "I"), ("O", "E")])


def _split_tag(tag):
    """conlleval's split of a tag into chunk prefix and type: text before
    the first hyphen and text after it (no hyphen: the whole tag, type "").
    A type "0" becomes "" (Perl treats the string "0" as false)."""
    prefix, hyphen, chunk_type = tag.partition("-")
    if not hyphen or chunk_type == "0":
        return prefix, ""
    return prefix, chunk_type


def _chunk_ends(prev_tag, tag, prev_type, chunk_type):
    """True when a chunk ended between the previous and the current token
    (conlleval's ``endOfChunk``, rules of [TjongKimSang1999]_)."""
    return ((prev_tag, tag) in _END_PAIRS
            or (prev_tag != "O" and prev_tag != "." and prev_type != chunk_type)
            or prev_tag == "[" or prev_tag == "]")   # bracket chunks have length 1


def _chunk_starts(prev_tag, tag, prev_type, chunk_type):
    """True when a chunk started at the current token (conlleval's
    ``startOfChunk``).  ``O I-X`` starts a chunk; so does any type change."""
    return ((prev_tag, tag) in _START_PAIRS
            or (tag != "O" and tag != "." and prev_type != chunk_type)
            or tag == "[" or tag == "]")


class ConllevalCounts:
    """Counts gathered by :func:`conlleval_counts`, as the ``conlleval`` script.

    Attributes
    ----------
    n_tokens : int
        Tokens processed (sentence boundaries excluded).
    n_correct_tags : int
        Tokens whose gold and guessed prefix and type agree.
    n_true_chunks, n_pred_chunks, n_correct_chunks : int
        Phrases in the gold data, phrases found, phrases found exactly.
    true_chunks, pred_chunks, correct_chunks : dict
        The same per chunk type.
    """

    def __init__(self):
        self.n_tokens = 0
        self.n_correct_tags = 0
        self.n_true_chunks = 0
        self.n_pred_chunks = 0
        self.n_correct_chunks = 0
        self.true_chunks = Counter()
        self.pred_chunks = Counter()
        self.correct_chunks = Counter()

    def types(self):
        """Chunk types in conlleval's order: sorted (by UTF-8 bytes); the empty
        type appears twice when both gold and guessed chunks have it, a quirk of
        the script that :func:`conlleval_report` keeps."""
        keys = list(self.true_chunks) + list(self.pred_chunks)
        keys.sort(key=lambda t: t.encode("utf-8"))
        ordered, last = [], None
        for key in keys:
            if not last or last != key:      # Perl: not($lastType) or $lastType ne $i
                ordered.append(key)
            last = key
        return ordered

    def precision_recall_f1(self, chunk_type=None):
        """Precision, recall and F1 in percent (conlleval's formulas; 0 when
        undefined).  ``chunk_type=None``: overall."""
        if chunk_type is None:
            correct, found, gold = (self.n_correct_chunks, self.n_pred_chunks,
                                    self.n_true_chunks)
        else:
            correct, found, gold = (self.correct_chunks[chunk_type],
                                    self.pred_chunks[chunk_type],
                                    self.true_chunks[chunk_type])
        precision = 100 * correct / found if found > 0 else 0.0
        recall = 100 * correct / gold if gold > 0 else 0.0
        fb1 = 2 * precision * recall / (precision + recall) \
            if precision + recall > 0 else 0.0
        return precision, recall, fb1


class _ConllevalState:
    """conlleval's main loop, fed one (gold, guessed) tag pair at a time."""

    def __init__(self):
        self.counts = ConllevalCounts()
        self.in_correct = False
        self.last_true, self.last_true_type = "O", ""
        self.last_pred, self.last_pred_type = "O", ""

    def feed(self, true_tag, pred_tag, boundary=False):
        counts = self.counts
        correct, correct_type = _split_tag(true_tag)
        guessed, guessed_type = _split_tag(pred_tag)
        if boundary:              # sentence breaks are always outside chunks
            guessed = "O"
        true_end = _chunk_ends(self.last_true, correct, self.last_true_type, correct_type)
        pred_end = _chunk_ends(self.last_pred, guessed, self.last_pred_type, guessed_type)
        true_start = _chunk_starts(self.last_true, correct, self.last_true_type,
                                   correct_type)
        pred_start = _chunk_starts(self.last_pred, guessed, self.last_pred_type,
                                   guessed_type)
        if self.in_correct:
            if true_end and pred_end and self.last_pred_type == self.last_true_type:
                self.in_correct = False
                counts.n_correct_chunks += 1
                counts.correct_chunks[self.last_true_type] += 1
            elif true_end != pred_end or guessed_type != correct_type:
                self.in_correct = False
        if true_start and pred_start and guessed_type == correct_type:
            self.in_correct = True
        if true_start:
            counts.n_true_chunks += 1
            counts.true_chunks[correct_type] += 1
        if pred_start:
            counts.n_pred_chunks += 1
            counts.pred_chunks[guessed_type] += 1
        if not boundary:
            if correct == guessed and guessed_type == correct_type:
                counts.n_correct_tags += 1
            counts.n_tokens += 1
        self.last_true, self.last_true_type = correct, correct_type
        self.last_pred, self.last_pred_type = guessed, guessed_type

    def finish(self):
        if self.in_correct:
            self.counts.n_correct_chunks += 1
            self.counts.correct_chunks[self.last_true_type] += 1
            self.in_correct = False
        return self.counts


def _check_sentences(y_true_sents, y_pred_sents, scheme):
    if scheme not in CHUNK_SCHEMES:
        raise ValueError("scheme must be one of %r, got %r" % (CHUNK_SCHEMES, scheme))
    if isinstance(y_true_sents, str) or isinstance(y_pred_sents, str):
        raise ValueError("y_true_sents and y_pred_sents must be lists of tag sequences")
    y_true_sents, y_pred_sents = list(y_true_sents), list(y_pred_sents)
    if len(y_true_sents) != len(y_pred_sents):
        raise ValueError("y_true_sents has %d sentences but y_pred_sents has %d"
                         % (len(y_true_sents), len(y_pred_sents)))
    if not y_true_sents:
        raise ValueError("no sentences given; at least one is required")
    allowed = _SCHEME_PREFIXES.get(scheme)
    rewrite = _TO_IOB2.get(scheme)
    pairs = []
    for i, (true_tags, pred_tags) in enumerate(zip(y_true_sents, y_pred_sents)):
        if isinstance(true_tags, str) or isinstance(pred_tags, str):
            raise ValueError("sentence %d is a string; each sentence must be a "
                             "sequence of tags" % i)
        true_tags, pred_tags = list(true_tags), list(pred_tags)
        if len(true_tags) != len(pred_tags):
            raise ValueError("sentence %d has %d gold tags but %d predicted tags"
                             % (i, len(true_tags), len(pred_tags)))
        for tags, name in ((true_tags, "y_true_sents"), (pred_tags, "y_pred_sents")):
            for j, tag in enumerate(tags):
                if not isinstance(tag, str) or not tag:
                    raise ValueError("%s[%d][%d] = %r is not a non-empty tag string"
                                     % (name, i, j, tag))
                if allowed is not None and _split_tag(tag)[0] not in allowed:
                    raise ValueError("%s[%d][%d] = %r is not a %s tag (prefixes %s)"
                                     % (name, i, j, tag, scheme, sorted(allowed)))
        if rewrite is not None:
            true_tags = [_rewrite_tag(t, rewrite) for t in true_tags]
            pred_tags = [_rewrite_tag(t, rewrite) for t in pred_tags]
        pairs.append((true_tags, pred_tags))
    return pairs


def _rewrite_tag(tag, mapping):
    prefix, hyphen, rest = tag.partition("-")
    return mapping.get(prefix, prefix) + hyphen + rest


def conlleval_counts(y_true_sents, y_pred_sents, *, scheme=None):
    """Token, phrase and correct-phrase counts exactly as ``conlleval`` counts them.

    The input is read as a conlleval file with one blank line after every
    sentence (the usual CoNLL layout).  A chunk is recognised with the
    script's ``startOfChunk``/``endOfChunk`` rules [Conll2000]_, which cover
    IOB1, IOB2, IOE1 and IOE2 at once as well as the single-token bracket
    tags ``[`` and ``]``, and are lenient with invalid sequences: ``O I-NP``
    starts a chunk, and a type change (``B-NP I-VP``) ends one chunk and
    starts another.  A found chunk is correct when it starts and ends at the
    same tokens as a gold chunk of the same type.

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
        Gold and predicted tags (``B-NP``, ``I-PER``, ``O`` ...), sentence
        by sentence.
    scheme : {None, 'IOB1', 'IOB2', 'IOE1', 'IOE2', 'IOBES', 'BILOU'}
        None: any tags, conlleval's rules as they are.  IOB1/IOB2/IOE1/IOE2:
        the same rules (made for these schemes), and a tag with a prefix
        outside the scheme raises ``ValueError``.  IOBES/BILOU (which
        conlleval does not know: it misses the boundary in ``E-X B-X`` and
        ``S-X S-X``): tags are first rewritten ``S``/``U`` -> ``B``,
        ``E``/``L`` -> ``I``, which keeps every chunk of a valid sequence.

    Returns
    -------
    ConllevalCounts
    """
    state = _ConllevalState()
    for true_tags, pred_tags in _check_sentences(y_true_sents, y_pred_sents, scheme):
        for true_tag, pred_tag in zip(true_tags, pred_tags):
            state.feed(true_tag, pred_tag)
        state.feed("O", "O", boundary=True)
    return state.finish()


def chunk_precision_recall_f1(y_true_sents, y_pred_sents, *, scheme=None,
                              average="micro"):
    """Chunk (phrase) precision, recall and F1 as ``conlleval`` computes them.

    See :func:`conlleval_counts` for how chunks are found.  Values are
    fractions in [0, 1] (conlleval prints percentages); an undefined value
    is 0, as in the script.

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
    scheme : {None, 'IOB1', 'IOB2', 'IOE1', 'IOE2', 'IOBES', 'BILOU'}
    average : {'micro', 'macro', None}, default='micro'
        'micro': conlleval's overall line.  'macro': unweighted mean of the
        per-type values.  None: a dict ``type -> (precision, recall, f1,
        n_true_chunks)``.  Tags without a type (``B``, ``I``) form the
        chunk type ``""``, which conlleval also reports.

    Returns
    -------
    (precision, recall, f1) or dict
    """
    _check_average(average, ("micro", "macro", None))
    counts = conlleval_counts(y_true_sents, y_pred_sents, scheme=scheme)
    types = sorted(set(counts.types()))
    if average == "micro":
        return tuple(v / 100 for v in counts.precision_recall_f1())
    per_type = {t: tuple(v / 100 for v in counts.precision_recall_f1(t))
                + (counts.true_chunks[t],) for t in types}
    if average is None:
        return per_type
    if not per_type:
        return 0.0, 0.0, 0.0
    values = np.array([v[:3] for v in per_type.values()])
    return tuple(float(v) for v in values.mean(axis=0))


def chunk_f1(y_true_sents, y_pred_sents, *, scheme=None):
    """Overall chunk F1 (conlleval's ``FB1`` / 100); see
    :func:`chunk_precision_recall_f1`."""
    return chunk_precision_recall_f1(y_true_sents, y_pred_sents, scheme=scheme)[2]


def _pad_bytes(text, width):
    # Perl's printf pads byte strings: pad by the UTF-8 length, as the script does
    return " " * max(0, width - len(text.encode("utf-8"))) + text


def conlleval_report(y_true_sents, y_pred_sents, *, scheme=None):
    """The text that ``conlleval`` (2004-01-26, default options) prints.

    ::

        processed N tokens with M phrases; found: K phrases; correct: C.
        accuracy:  xx.xx%; precision:  xx.xx%; recall:  xx.xx%; FB1:  xx.xx
                     TYPE: precision:  xx.xx%; recall:  xx.xx%; FB1:  xx.xx  K_type

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
    scheme : see :func:`conlleval_counts`

    Returns
    -------
    str
        Byte-for-byte the script's output on a file holding these sentences,
        each followed by a blank line (print it with ``print(report, end="")``).
    """
    counts = conlleval_counts(y_true_sents, y_pred_sents, scheme=scheme)
    return _format_conlleval(counts)


def _format_conlleval(counts):
    lines = ["processed %d tokens with %d phrases; found: %d phrases; correct: %d.\n"
             % (counts.n_tokens, counts.n_true_chunks, counts.n_pred_chunks,
                counts.n_correct_chunks)]
    if counts.n_tokens > 0:
        precision, recall, fb1 = counts.precision_recall_f1()
        lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; "
                     "FB1: %6.2f\n" % (100 * counts.n_correct_tags / counts.n_tokens,
                                       precision, recall, fb1))
    for chunk_type in counts.types():
        precision, recall, fb1 = counts.precision_recall_f1(chunk_type)
        lines.append("%s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d\n"
                     % (_pad_bytes(chunk_type, 17), precision, recall, fb1,
                        counts.pred_chunks[chunk_type]))
    return "".join(lines)


def _conlleval_records(lines, delimiter, boundary, filename):
    """(gold tag, guessed tag, is_boundary) per line, as the script reads them."""
    n_fields = None
    for lineno, line in enumerate(lines, start=1):
        fields = line.rstrip("\r\n").split(delimiter)
        while fields and fields[-1] == "":      # Perl's split drops trailing empties
            fields.pop()
        if fields:
            if n_fields is None:
                n_fields = len(fields)
            elif len(fields) != n_fields:
                raise DataFormatError("unexpected number of features: %d (%d)"
                                      % (len(fields), n_fields), filename, lineno)
        if not fields or fields[0] == boundary:
            yield "O", "O", True
            continue
        if len(fields) < 2:
            raise DataFormatError("a line needs at least two fields (gold and guessed "
                                  "tag), got %d" % len(fields), filename, lineno)
        yield fields[-2], fields[-1], False


def read_conlleval_lines(lines, *, delimiter=" ", boundary="-X-", filename=None):
    """Read conlleval input: gold and guessed tags in the last two columns.

    A blank line, or a line whose first field is ``boundary``, ends a
    sentence (every such line ends one, so two in a row give an empty
    sentence).  Fields are split on ``delimiter`` with trailing empty fields
    dropped, as Perl's ``split`` does.  To score a file exactly as the script
    does, also when it does not end with a blank line, use
    :func:`conlleval_report_from_lines`.

    Parameters
    ----------
    lines : iterable of str
        E.g. an open text file.
    delimiter : str, default=" "
    boundary : str, default="-X-"
    filename : str, optional
        Used in error messages.

    Returns
    -------
    y_true_sents, y_pred_sents : list of list of str

    Raises
    ------
    DataFormatError
        A line with a different number of fields than the first one, or
        with fewer than two.
    """
    y_true_sents, y_pred_sents = [], []
    true_tags, pred_tags = [], []
    for true_tag, pred_tag, is_boundary in _conlleval_records(lines, delimiter,
                                                              boundary, filename):
        if is_boundary:
            y_true_sents.append(true_tags)
            y_pred_sents.append(pred_tags)
            true_tags, pred_tags = [], []
        else:
            true_tags.append(true_tag)
            pred_tags.append(pred_tag)
    if true_tags:
        y_true_sents.append(true_tags)
        y_pred_sents.append(pred_tags)
    return y_true_sents, y_pred_sents


def conlleval_report_from_lines(lines, *, delimiter=" ", boundary="-X-", filename=None,
                                return_counts=False):
    """Run ``conlleval`` on the lines of a conlleval input file.

    Line for line the script's processing (see :func:`read_conlleval_lines`
    for the format), so the output is the script's also for files that do
    not end with a blank line.

    Parameters
    ----------
    lines : iterable of str
    delimiter, boundary, filename
        As :func:`read_conlleval_lines`.
    return_counts : bool, default=False
        Also return the :class:`ConllevalCounts`.

    Returns
    -------
    str, or (str, ConllevalCounts)
    """
    state = _ConllevalState()
    for true_tag, pred_tag, is_boundary in _conlleval_records(lines, delimiter,
                                                              boundary, filename):
        state.feed(true_tag, pred_tag, boundary=is_boundary)
    counts = state.finish()
    report = _format_conlleval(counts)
    return (report, counts) if return_counts else report


def token_accuracy(y_true_sents, y_pred_sents):
    """Fraction of tokens whose predicted tag equals the gold tag (exact string
    match; conlleval's ``accuracy`` differs only for types named ``0``)."""
    pairs = _check_sentences(y_true_sents, y_pred_sents, None)
    n_tokens = sum(len(t) for t, _ in pairs)
    if n_tokens == 0:
        raise ValueError("the sentences hold no tokens")
    return sum(a == b for t, p in pairs for a, b in zip(t, p)) / n_tokens


def sentence_accuracy(y_true_sents, y_pred_sents):
    """Fraction of sentences tagged entirely correctly."""
    pairs = _check_sentences(y_true_sents, y_pred_sents, None)
    return sum(t == p for t, p in pairs) / len(pairs)
