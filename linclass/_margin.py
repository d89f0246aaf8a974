"""Helpers shared by the margin-based linear classifiers.

Perceptron, LinearSVC, the multi-class SVMs, the least-squares family and the
one-vs-rest / one-vs-one meta-estimators all score ``x @ coef_.T + intercept_``
and take the same inputs.  This module holds what they share on top of
:mod:`linclass._validation` (which remains the one place defining the input
contract): label checks for classifiers, class weights, the arrays handed to
``_core`` kernels, the thread count, and the linear decision function.
"""
import numbers
import os

import numpy as np
import scipy.sparse as sp

from ._validation import (check_array, check_is_fitted, check_sample_weight,
                          check_target, encode_labels)

__all__ = ["check_classification_data", "class_weight_per_sample", "kernel_rows",
           "resolve_n_jobs", "LinearDecisionMixin", "check_predict_X",
           "dense_or_csr_matmul"]


def check_X(X, name="X"):
    """:func:`linclass._validation.check_array` with scikit-learn's wording for
    the cases its estimator checks match on (complex values, 1-D input, zero
    features, non-numeric objects); everything else is check_array's."""
    if X is not None and not isinstance(X, (str, bytes)):
        if sp.issparse(X):
            kind, shape = X.dtype.kind, X.shape
        else:
            arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
            kind, shape = arr.dtype.kind, arr.shape
            if arr.dtype == object:
                try:
                    arr.astype(np.float64)
                except TypeError as exc:
                    raise TypeError("%s holds non-numeric values: %s" % (name, exc)) from None
                except ValueError as exc:
                    raise ValueError("%s holds non-numeric values: %s" % (name, exc)) from None
        if kind == "c":
            raise ValueError("Complex data not supported: %s holds complex numbers" % name)
        if len(shape) == 1:
            raise ValueError("Reshape your data: %s must be 2-D (n_samples, n_features), "
                             "got a 1-D array of shape %r; use X.reshape(-1, 1) for one "
                             "feature or X.reshape(1, -1) for one sample" % (name, shape))
        if len(shape) == 2 and shape[1] == 0:
            raise ValueError("%s has 0 feature(s) (shape=(%d, 0)) while a minimum of 1 is "
                             "required." % (name, shape[0]))
    return check_array(X, name=name)


def check_classification_data(X, y, sample_weight=None, *, min_classes=2):
    """Validate ``(X, y, sample_weight)`` for a classifier's ``fit``.

    Returns ``(X, classes, codes, sample_weight)``: ``X`` in canonical form,
    the sorted class labels, int32 codes ``0..n_classes-1`` and float64
    weights.  Continuous targets raise ``ValueError("Unknown label type ...")``
    (scikit-learn's wording) and fewer than ``min_classes`` classes raise a
    ``ValueError`` naming the class found.
    """
    X = check_X(X)
    if y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None")
    y = check_target(y, X.shape[0])
    if y.dtype.kind == "f" and np.any(y != np.round(y)):
        raise ValueError("Unknown label type: continuous. linclass classifiers "
                         "need discrete class labels, got float values such as %r"
                         % (y[np.flatnonzero(y != np.round(y))[0]],))
    if y.dtype.kind == "c":
        raise ValueError("Unknown label type: complex values")
    classes, codes = encode_labels(y)
    if len(classes) < min_classes:
        raise ValueError("y has only one class (%r); a classifier needs at least "
                         "%d classes to train" % (classes.tolist()[:1], min_classes))
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    if not np.any(sample_weight > 0):
        raise ValueError("sample_weight: all weights are zero; at least one sample must "
                         "have a positive weight")
    return X, classes, codes, sample_weight


def class_weight_per_sample(class_weight, classes, codes, sample_weight):
    """Per-sample weight ``sample_weight[i] * class_weight[y_i]``.

    ``class_weight`` is None, ``"balanced"`` (``n_samples / (n_classes *
    count(c))``, as in King & Zeng 2001 and scikit-learn) or a dict mapping
    class labels to positive numbers (missing classes get 1).
    """
    n_classes = len(classes)
    if class_weight is None:
        per_class = np.ones(n_classes)
    elif isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError("class_weight must be None, 'balanced' or a dict, got %r"
                             % (class_weight,))
        counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
        per_class = len(codes) / (n_classes * np.maximum(counts, 1.0))
    elif isinstance(class_weight, dict):
        per_class = np.ones(n_classes)
        known = {c.item() if hasattr(c, "item") else c: k for k, c in enumerate(classes)}
        for label, weight in class_weight.items():
            key = label.item() if hasattr(label, "item") else label
            if key not in known:
                raise ValueError("class_weight names class %r, which is not in y "
                                 "(classes: %s)" % (label, classes.tolist()[:20]))
            if (isinstance(weight, bool) or not isinstance(weight, numbers.Real)
                    or not np.isfinite(weight) or weight < 0):
                raise ValueError("class_weight[%r] must be a finite number >= 0, got %r"
                                 % (label, weight))
            per_class[known[key]] = float(weight)
    else:
        raise ValueError("class_weight must be None, 'balanced' or a dict, got %r"
                         % (class_weight,))
    return np.ascontiguousarray(sample_weight * per_class[codes], dtype=np.float64)


def kernel_rows(X):
    """The arrays a ``_core`` kernel reads a validated matrix from.

    Returns ``dict(data=..., indices=..., indptr=..., is_sparse=...)``: for a
    canonical CSR matrix its three arrays; for a dense C-contiguous matrix the
    ravelled values and 1-element placeholders.  Empty arrays are padded to one
    element (never read) so kernels may take the address of element 0.
    """
    if sp.issparse(X):
        data, indices = X.data, X.indices
        if data.shape[0] == 0:
            data = np.zeros(1)
            indices = np.zeros(1, dtype=np.int32)
        return dict(data=data, indices=indices, indptr=X.indptr, is_sparse=True)
    data = X.reshape(-1)
    if data.shape[0] == 0:
        data = np.zeros(1)
    return dict(data=data, indices=np.zeros(1, dtype=np.int32),
                indptr=np.zeros(1, dtype=np.int32), is_sparse=False)


def resolve_n_jobs(n_jobs, n_tasks):
    """Number of worker threads: None -> 1, -1 -> all CPUs, capped at n_tasks."""
    if n_jobs is None:
        n = 1
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError("n_jobs must be None, a positive integer or -1 (all CPUs), "
                         "got %r" % (n_jobs,))
    elif n_jobs < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
    else:
        n = int(n_jobs)
    return max(1, min(n, n_tasks))


def map_threads(function, tasks, n_jobs):
    """``[function(t) for t in tasks]``, on a thread pool when ``n_jobs > 1``.

    The ``_core`` kernels release the GIL, so threads run them in parallel.
    """
    tasks = list(tasks)
    n = resolve_n_jobs(n_jobs, len(tasks))
    if n == 1:
        return [function(t) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(function, tasks))


def check_predict_X(estimator, X):
    """Validate ``X`` for ``predict``/``decision_function`` of a fitted model.

    The feature-count message follows scikit-learn's wording ("X has 1
    features, but Perceptron is expecting 4 features as input").
    """
    check_is_fitted(estimator, "n_features_in_")
    X = check_X(X)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError("X has %d features, but %s is expecting %d features as input"
                         % (X.shape[1], type(estimator).__name__, estimator.n_features_in_))
    return X


def dense_or_csr_matmul(X, M):
    """``X @ M`` as a dense ndarray for dense or CSR ``X`` and dense ``M``."""
    out = X @ M
    return np.asarray(out)


class LinearDecisionMixin:
    """``decision_function`` / ``predict`` of a linear classifier.

    Expects ``coef_`` of shape (1, n_features) for two classes (positive
    score -> ``classes_[1]``) or (n_classes, n_features), ``intercept_`` to
    match, and ``classes_``.
    """

    def decision_function(self, X):
        """Scores ``X @ coef_.T + intercept_``.

        Returns shape (n_samples,) for a binary problem (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        X = check_predict_X(self, X)
        scores = dense_or_csr_matmul(X, self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the highest score (ties go to the first class)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
