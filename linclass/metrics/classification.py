"""Metrics of label predictions: accuracy, precision/recall/F1, specificity,
confusion matrix, classification report, class ratio (Flach 2012, ch. 2)."""
import numbers
import warnings

import numpy as np

from ._checks import UndefinedMetricWarning, _as_1d, _check_average, _check_labels_1d, _check_same_kind, _check_targets, _check_zero_division, _encode, _union_labels, _weights

__all__ = ['accuracy_score', 'class_ratio', 'classification_report', 'confusion_matrix', 'error_rate', 'f1_score', 'fbeta_score', 'precision_recall_fscore_support', 'precision_score', 'recall_score', 'specificity_score']


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


