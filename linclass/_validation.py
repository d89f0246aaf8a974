"""The contract between the Python layer and ``linclass._core``.

Kernels in ``_core`` run without bounds checks.  Everything they receive passes
through here first and comes out in one canonical form:

* dense matrices: 2-D, float64, C-contiguous, finite;
* sparse matrices: ``scipy.sparse.csr_matrix`` with float64 ``data``, int32
  ``indices``/``indptr``, sorted indices, no duplicates, finite values;
* labels: int32 codes ``0..n_classes-1`` (see :func:`encode_labels`);
* sample weights: float64, finite, non-negative, one per sample.

No model re-implements these checks.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .exceptions import NotFittedError

INT32_MAX = np.iinfo(np.int32).max


def _describe(obj):
    return type(obj).__name__


def _check_finite(values, name):
    if values.size and not np.isfinite(values).all():
        bad = np.flatnonzero(~np.isfinite(values.ravel()))[0]
        kind = "NaN" if np.isnan(values.ravel()[bad]) else "infinity"
        raise ValueError("%s contains %s (first at flat position %d); "
                         "linclass models need finite values" % (name, kind, bad))


def check_array(X, *, name="X", accept_sparse=True, allow_empty=False,
                ensure_2d=True, dtype=np.float64, copy=False):
    """Validate a data matrix and return it in canonical form.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix
    name : str
        Used in error messages.
    accept_sparse : bool
        If False, sparse input raises ``TypeError``.
    allow_empty : bool
        Accept zero rows.
    ensure_2d : bool
        Require a 2-D array (a 1-D array raises with a hint to reshape).
    dtype : numpy dtype
        float64 (default) or float32.
    copy : bool
        Always return a new array.
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError("%s is a sparse matrix, but this model needs dense "
                            "input; call X.toarray() first" % name)
        X = X.tocsr() if X.format != "csr" else X
        if X.nnz > INT32_MAX or X.shape[1] > INT32_MAX:
            raise ValueError("%s has %d stored values and %d columns; linclass "
                             "supports up to %d of each" % (name, X.nnz, X.shape[1], INT32_MAX))
        # A new matrix object around (possibly converted) arrays: the caller's
        # matrix is never modified, not even its attributes.
        X = sp.csr_matrix((np.asarray(X.data, dtype=dtype),
                           np.asarray(X.indices, dtype=np.int32),
                           np.asarray(X.indptr, dtype=np.int32)),
                          shape=X.shape, copy=copy)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()          # sorts indices, adds duplicates
        X.data = np.ascontiguousarray(X.data, dtype=dtype)
        X.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        X.indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
        _check_finite(X.data, name)
    else:
        if isinstance(X, (str, bytes)) or X is None:
            raise TypeError("%s must be an array-like or a scipy.sparse matrix, "
                            "got %s" % (name, _describe(X)))
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise ValueError("%s cannot be converted to a numeric array: %s" % (name, exc))
        if arr.dtype == object or arr.dtype.kind in "USV":
            try:
                arr = arr.astype(dtype)
            except (TypeError, ValueError) as exc:
                # keep the exception type: a dict is a TypeError, "abc" a ValueError
                raise type(exc)("%s holds non-numeric values (dtype %s): %s"
                                % (name, arr.dtype, exc)) from None
        if arr.dtype.kind == "c":
            raise ValueError("%s holds complex numbers: Complex data not supported" % name)
        if ensure_2d:
            if arr.ndim == 1:
                raise ValueError("%s must be 2-D (n_samples, n_features), got a 1-D "
                                 "array of shape %r. Reshape your data: X.reshape(-1, 1) "
                                 "for one feature or X.reshape(1, -1) for one sample"
                                 % (name, arr.shape))
            if arr.ndim != 2:
                raise ValueError("%s must be 2-D (n_samples, n_features), got %d "
                                 "dimensions" % (name, arr.ndim))
        X = np.array(arr, dtype=dtype, order="C", copy=True) if copy else \
            np.ascontiguousarray(arr, dtype=dtype)
        _check_finite(X, name)
    if ensure_2d:
        n_samples, n_features = X.shape
        if n_samples == 0 and not allow_empty:
            raise ValueError("%s has 0 samples: found array with 0 sample(s) (shape=%r) while "
                             "a minimum of 1 is required." % (name, X.shape))
        if n_features == 0:
            raise ValueError("%s has 0 features: found array with 0 feature(s) (shape=(%d, 0)) "
                             "while a minimum of 1 is required." % (name, n_samples))
    return X


def check_target(y, n_samples=None, *, name="y"):
    """A 1-D label array with one label per sample (no NaN)."""
    if y is None:
        raise ValueError("%s is required (got None)" % name)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError("%s must be 1-D with one label per sample, got shape %r"
                         % (name, y.shape))
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError("%s has %d labels but X has %d samples"
                         % (name, y.shape[0], n_samples))
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("%s contains NaN or infinity" % name)
    if y.dtype == object and any(v is None for v in y):
        raise ValueError("%s contains None" % name)
    return y


def check_X_y(X, y, **kwargs):
    X = check_array(X, **kwargs)
    return X, check_target(y, X.shape[0])


def encode_labels(y, classes=None):
    """Map labels to int32 codes.

    Returns ``(classes, codes)`` with ``classes`` sorted unique labels and
    ``classes[codes] == y``.  With ``classes`` given, every label of ``y`` must
    be one of them (``ValueError`` names the first that is not).
    """
    y = np.asarray(y)
    if classes is None:
        try:
            classes, codes = np.unique(y, return_inverse=True)
        except TypeError:
            raise ValueError("labels must be mutually comparable (mixed types?)")
        return classes, codes.astype(np.int32).ravel()
    classes = np.asarray(classes)
    codes = np.searchsorted(classes, y)
    codes = np.clip(codes, 0, len(classes) - 1)
    bad = classes[codes] != y
    if np.any(bad):
        first = y[np.flatnonzero(bad)[0]]
        raise ValueError("label %r was not seen in training; known labels: %s"
                         % (getattr(first, "item", lambda: first)(), classes.tolist()[:20]))
    return classes, codes.astype(np.int32)


def check_partial_fit_classes(classes, fitted_classes):
    """The class list of ``partial_fit``: required (>= 2 labels) on the first
    call, optional and equal to the fitted one afterwards.  Returns the sorted
    unique classes on the first call, else the fitted classes."""
    if fitted_classes is None:
        if classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        classes = np.unique(check_target(classes, name="classes"))
        if len(classes) < 2:
            raise ValueError("classes must hold at least two class labels, got %r"
                             % (classes.tolist(),))
        return classes
    if classes is not None and not np.array_equal(np.unique(classes), fitted_classes):
        raise ValueError("classes %r differ from those of the first call %r"
                         % (np.unique(classes).tolist(), fitted_classes.tolist()))
    return fitted_classes


def check_sample_weight(sample_weight, n_samples):
    """float64 weights, one per sample, finite and >= 0 (None -> ones)."""
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = np.ascontiguousarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError("sample_weight must have shape (%d,), got %r"
                         % (n_samples, w.shape))
    _check_finite(w, "sample_weight")
    if (w < 0).any():
        raise ValueError("sample_weight has negative entries (first at %d)"
                         % np.flatnonzero(w < 0)[0])
    return w


def check_n_features(X, n_features_in, name="X", owner=None):
    """The number of columns seen in ``fit``; ``owner`` (the estimator) names it."""
    if X.shape[1] != n_features_in:
        who = type(owner).__name__ if owner is not None else "the_model"
        raise ValueError("%s has %d features, but %s is expecting %d features as input "
                         "(the number seen in fit)" % (name, X.shape[1], who, n_features_in))


def check_lengths(lengths, n_samples):
    """Sequence lengths that split ``n_samples`` rows: int64, >= 0, summing to it."""
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and lengths.dtype.kind not in "iu"):
        raise ValueError("lengths must be a 1-D array of integers")
    lengths = lengths.astype(np.int64)
    if (lengths < 0).any():
        raise ValueError("lengths must be >= 0")
    if lengths.sum() != n_samples:
        raise ValueError("lengths sum to %d but there are %d samples"
                         % (lengths.sum(), n_samples))
    return lengths


def check_positive(value, name, *, strict=True, integer=False):
    """A finite number > 0 (or >= 0 with strict=False)."""
    kinds = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kinds) or not np.isfinite(value):
        raise ValueError("%s must be a finite %s, got %r"
                         % (name, "integer" if integer else "number", value))
    if value < 0 or (strict and value == 0):
        raise ValueError("%s must be %s 0, got %r" % (name, ">" if strict else ">=", value))
    return value


def check_random_state(random_state):
    """A ``numpy.random.Generator`` from None / int / RandomState / Generator."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.integer)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise ValueError("random_state must be None, an int, a numpy RandomState or "
                     "Generator, got %r" % (random_state,))


def draw_seed(random_state):
    """A 64-bit seed for the ``_core`` PRNG, drawn from ``random_state``."""
    return int(check_random_state(random_state).integers(0, 2**63 - 1))


def check_is_fitted(estimator, attributes=None):
    """Raise :class:`NotFittedError` unless ``fit`` has set its attributes."""
    if attributes is None:
        fitted = [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]
    else:
        fitted = [a for a in ([attributes] if isinstance(attributes, str) else attributes)
                  if hasattr(estimator, a)]
        if len(fitted) < (1 if isinstance(attributes, str) else len(attributes)):
            fitted = []
    if not fitted:
        raise NotFittedError("this %s instance is not fitted yet; call fit() first"
                             % type(estimator).__name__)
