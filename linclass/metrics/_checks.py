"""Input checks shared by the metrics (private to :mod:`linclass.metrics`)."""
import numbers

import numpy as np

from .._validation import check_sample_weight, check_target


class UndefinedMetricWarning(UserWarning):
    """A metric divided by zero and was set to ``zero_division`` (0 by default)."""


_AVERAGES = (None, "binary", "micro", "macro", "weighted")



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
        check_target(y, name=name)          # the labels of one kind every model accepts
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
    if np.asarray(scores).dtype.kind == "c":         # a cast would drop the imaginary part
        raise ValueError("%s holds complex numbers; scores must be real" % name)
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


