"""Metrics of probability estimates: Brier score and log loss (Brier 1950;
Flach 2012, section 2.3)."""

import numpy as np

from ._checks import _as_1d, _check_labels_1d, _encode, _weights
from .scores import _binary_truth, _check_probabilities

__all__ = ['brier_score', 'brier_score_loss', 'log_loss']


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


