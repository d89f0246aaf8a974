"""Helpers shared by the probabilistic classifiers (naive Bayes, logistic
regression, MaxEnt): classification targets, class weights, stable softmax.

Input checks themselves live in :mod:`linclass._validation`; these helpers only
add what a classifier needs on top of them.
"""
import contextlib
import numbers

import numpy as np

from ._validation import check_target, encode_labels


def check_classification_target(y, n_samples, *, min_classes=2):
    """Labels of a classification problem -> ``(classes, codes)``.

    Raises ``ValueError`` for continuous targets (floats that are not whole
    numbers: "Unknown label type") and for fewer than ``min_classes`` classes.
    """
    if y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None")
    y = check_target(y, n_samples)
    if y.dtype.kind == "f" and y.size and np.any(y != np.round(y)):
        raise ValueError("Unknown label type: continuous values in y (first %r); "
                         "a classifier needs discrete class labels" % y[y != np.round(y)][0])
    if y.dtype.kind == "c":
        raise ValueError("Unknown label type: complex values in y")
    classes, codes = encode_labels(y)
    if len(classes) < min_classes:
        raise ValueError("y has only one class (%r); this classifier needs at least "
                         "%d classes to train" % (classes[0] if len(classes) else None,
                                                  min_classes))
    return classes, codes


def class_weight_vector(class_weight, classes, codes, sample_weight):
    """Per-class weights (n_classes,) from None, "balanced" or a {label: weight} dict.

    "balanced" gives ``n_samples / (n_classes * count(class))`` with counts
    weighted by ``sample_weight`` (King & Zeng, 2001).
    """
    n_classes = len(classes)
    if class_weight is None:
        return np.ones(n_classes)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError("class_weight must be None, 'balanced' or a dict, got %r"
                             % class_weight)
        counts = np.bincount(codes, weights=sample_weight, minlength=n_classes)
        total = counts.sum()
        with np.errstate(divide="ignore"):
            weights = np.where(counts > 0, total / (n_classes * np.maximum(counts, 1e-300)), 1.0)
        return weights
    if not isinstance(class_weight, dict):
        raise ValueError("class_weight must be None, 'balanced' or a dict, got %s"
                         % type(class_weight).__name__)
    weights = np.ones(n_classes)
    known = {c.item() if hasattr(c, "item") else c: k for k, c in enumerate(classes)}
    for label, value in class_weight.items():
        key = label.item() if hasattr(label, "item") else label
        if key not in known:
            raise ValueError("class_weight names label %r, which is not in y (labels: %s)"
                             % (label, list(classes)[:20]))
        if not isinstance(value, numbers.Real) or not np.isfinite(value) or value < 0:
            raise ValueError("class_weight[%r] must be a finite number >= 0, got %r"
                             % (label, value))
        weights[known[key]] = float(value)
    return weights


def log_softmax(scores):
    """Row-wise ``log(softmax(scores))`` with the max subtracted first."""
    scores = np.asarray(scores, dtype=np.float64)
    top = np.max(scores, axis=1, keepdims=True)
    impossible = np.isneginf(top).ravel()      # every class has probability 0
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        shifted = scores - top
        out = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    if impossible.any():                       # no evidence for any class: uniform
        out[impossible] = -np.log(scores.shape[1])
    return out


class CheckedScoreMixin:
    """``score`` that refuses labels the model never saw (before ClassifierMixin)."""

    def score(self, X, y, sample_weight=None):
        """Mean accuracy; a label of ``y`` not in ``classes_`` raises ``ValueError``."""
        from ._validation import check_is_fitted
        check_is_fitted(self, "classes_")
        y = check_target(y)
        encode_labels(y, np.sort(self.classes_))
        return super().score(X, y, sample_weight=sample_weight)


def single_threaded_blas():
    """Context limiting BLAS to one thread (when ``threadpoolctl`` is installed).

    scipy's L-BFGS-B calls BLAS on short vectors once per iteration; with
    OpenBLAS's thread pool on a loaded machine each call can cost milliseconds
    (measured 3.5 s vs 0.13 s for a 124-parameter fit).  The loss and gradient
    run in linclass's own single-threaded kernels, so nothing is lost.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
