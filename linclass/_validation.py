"""The contract between the Python layer and ``linclass._core``.

Kernels in ``_core`` run without bounds checks.  Everything they receive passes
through here first and comes out in one canonical form:

* dense matrices: 2-D, float64, C-contiguous, finite;
* sparse matrices: ``scipy.sparse.csr_matrix`` with float64 ``data``, int32
  ``indices``/``indptr``, sorted indices, no duplicates, finite values
  (``check_array(accept_unsorted=True)``, for kernels that do not rely on the
  order of a row's entries, keeps unsorted rows; never duplicates);
* labels: of one kind (numbers or strings; no None, NaN or complex number,
  :func:`check_target`), for a classifier at least two classes and no
  continuous values (:func:`check_classification_target`, the one check every
  classifier's ``fit`` runs), as int32 codes ``0..n_classes-1`` (see
  :func:`encode_labels`);
* sample weights: float64, real, finite, non-negative, one per sample, not
  all zero, with a finite sum (:func:`check_sample_weight`);
* complex numbers anywhere (dense or sparse ``X``, weights, labels) raise
  rather than lose their imaginary part;
* what comes out: scores that are NaN or infinite raise naming the model
  (:func:`check_finite_output`, :func:`check_finite_fit`); iteration budgets
  are capped (:data:`MAX_ITER_CAP`).

No model re-implements these checks.
"""
import contextlib
import numbers
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from .exceptions import DataConversionWarning, NotFittedError

INT32_MAX = np.iinfo(np.int32).max


def _describe(obj):
    return type(obj).__name__


def check_finite_values(values, name):
    """Raise ``ValueError`` naming the first NaN or infinity of ``values`` (a
    numpy array, or the values of a sparse matrix)."""
    if sp.issparse(values):
        values = values.data
    if values.size >= 4096 and values.dtype.kind == "f" and values.flags.c_contiguous:
        # fast path: one BLAS dot of the values with themselves is finite when every
        # value is (NaN and infinity propagate; an overflow of the squares only sends
        # it to the exact check below), without isfinite's boolean temporary
        flat = values.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(flat @ flat):
                return
    if values.size and not np.isfinite(values).all():
        bad = np.flatnonzero(~np.isfinite(values.ravel()))[0]
        kind = "NaN" if np.isnan(values.ravel()[bad]) else "infinity"
        raise ValueError("%s contains %s (first at flat position %d); "
                         "linclass models need finite values" % (name, kind, bad))


def check_array(X, *, name="X", accept_sparse=True, allow_empty=False,
                ensure_2d=True, dtype=np.float64, copy=False, accept_unsorted=False,
                finite=True):
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
    accept_unsorted : bool, default=False
        Opt-in for kernels whose result does not depend on the order of a
        row's stored entries (up to rounding): a CSR matrix whose rows are
        not sorted but hold no duplicate column is returned without the
        copy-and-sort (its ``has_sorted_indices`` stays False); duplicates
        are still summed (on a copy).  Default: every non-canonical matrix is
        copied, sorted and summed.
    finite : bool, default=True
        Check that every value is finite.  ``False`` only for a caller that
        checks it on a pass over ``X`` of its own before anything else reads
        ``X`` (the dense lasso's transposed copy, ``fit_lasso``).
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError("%s is a sparse matrix, but this model needs dense "
                            "input; call X.toarray() first" % name)
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported: %s is a sparse matrix of complex "
                             "numbers (dtype %s); linclass models need real values"
                             % (name, X.dtype))
        if X.format == "csc":
            # scipy's csc -> csr conversion indexes through the CSC arrays
            _csr_arrays(X, name, transposed=True)
        X = X.tocsr() if X.format != "csr" else X
        if X.shape[0] > INT32_MAX or X.shape[1] > INT32_MAX:
            raise ValueError("%s has shape %r; linclass supports up to %d rows and columns"
                             % (name, X.shape, INT32_MAX))
        data, indices, indptr, canonical = _csr_arrays(X, name)
        # A new matrix object around (possibly converted) arrays: the caller's
        # matrix is never modified, not even its attributes.
        X = sp.csr_matrix((np.asarray(data, dtype=dtype), indices, indptr),
                          shape=X.shape, copy=copy)
        if not canonical and not (accept_unsorted and not _has_duplicates(X)):
            X = X.copy()
            X.sum_duplicates()          # sorts indices, adds duplicates
        elif not canonical:
            X.has_sorted_indices = False        # scipy must not trust the rows' order
        X.data = np.ascontiguousarray(X.data, dtype=dtype)
        X.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        X.indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
        if finite:
            check_finite_values(X.data, name)
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
        if finite:
            check_finite_values(X, name)
    if ensure_2d:
        n_samples, n_features = X.shape
        if n_samples == 0 and not allow_empty:
            raise ValueError("%s has 0 samples: found array with 0 sample(s) (shape=%r) while "
                             "a minimum of 1 is required." % (name, X.shape))
        if n_features == 0:
            raise ValueError("%s has 0 features: found array with 0 feature(s) (shape=(%d, 0)) "
                             "while a minimum of 1 is required." % (name, n_samples))
    return X


def _has_duplicates(X):
    """Whether a structurally checked CSR matrix stores a column twice in a row."""
    from ._core._checks import csr_has_duplicates
    return csr_has_duplicates(X.indptr, X.indices[:X.indptr[-1]], X.shape[0], X.shape[1])


_CSR_PROBLEMS = {
    1: "indptr[0] must be 0, got %(value)s",
    2: "indptr must be non-decreasing, but indptr[%(where)d + 1] < indptr[%(where)d] "
       "(row %(where)d)",
    3: "indptr points past the stored values: indptr[%(where)d] = %(value)s but there "
       "are %(nnz)d stored values (and as many indices)",
    4: "column index out of range: indices[%(where)d] = %(value)s, but the matrix has "
       "%(n_cols)d columns (indices must be in [0, %(n_cols)d))",
}


def _as_int32_index(arr, name, what):
    """An index array as C-contiguous int32; values that do not fit raise
    (casting would wrap them into range silently)."""
    arr = np.asarray(arr)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError("%s: sparse %s must be a 1-D integer array, got dtype %s and "
                         "shape %r" % (name, what, arr.dtype, arr.shape))
    if arr.dtype != np.int32 and arr.size:
        lo, hi = arr.min(), arr.max()
        if lo < -INT32_MAX - 1 or hi > INT32_MAX:
            raise ValueError("%s: sparse %s holds %d, outside the int32 range linclass "
                             "supports" % (name, what, hi if hi > INT32_MAX else lo))
    return np.ascontiguousarray(arr, dtype=np.int32)


def _csr_arrays(X, name, transposed=False):
    """``(data, indices, indptr, canonical)`` of a CSR matrix (or, with
    ``transposed``, a CSC matrix), checked in one pass
    (:func:`linclass._core._checks.csr_structure`): ``indptr`` starts at 0,
    never decreases and ends at nnz; every index is in range.  ``canonical``
    says whether each row's indices are strictly increasing.  Raises
    ``ValueError`` naming the first problem; scipy itself accepts such
    matrices, and a kernel reading them would write outside its arrays."""
    from ._core._checks import csr_structure
    n_rows, n_cols = X.shape[::-1] if transposed else X.shape
    indptr = _as_int32_index(X.indptr, name, "indptr")
    indices = _as_int32_index(X.indices, name, "indices")
    data = np.asarray(X.data)
    if data.ndim != 1:
        raise ValueError("%s: sparse data must be 1-D, got shape %r" % (name, data.shape))
    if indptr.shape[0] != n_rows + 1:
        raise ValueError("%s: malformed sparse matrix: indptr has %d entries, expected "
                         "%d (number of %s + 1)" % (name, indptr.shape[0], n_rows + 1,
                                                    "columns" if transposed else "rows"))
    n_stored = min(data.shape[0], indices.shape[0])
    status, where, canonical = csr_structure(indptr, indices[:n_stored], n_rows, n_cols)
    if not status:
        nnz = int(indptr[n_rows])
        indices, data = indices[:nnz], data[:nnz]     # unused capacity (scipy's prune)
    else:
        value = indptr[where] if status in (1, 2, 3) else indices[where]
        msg = _CSR_PROBLEMS[status] % dict(where=where, value=value, nnz=n_stored,
                                           n_cols=n_cols)
        if transposed:
            msg = msg.replace("row", "column").replace("columns (", "rows (")
        raise ValueError("%s: malformed sparse %s matrix: %s"
                         % (name, "CSC" if transposed else "CSR", msg))
    return data, indices, indptr, canonical


def check_target(y, n_samples=None, *, name="y"):
    """A 1-D label array with one label per sample (no NaN)."""
    if y is None:
        raise ValueError("%s is required (got None)" % name)
    given = y
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        # an instance, so that filters on scikit-learn's class match its twin
        warnings.warn(DataConversionWarning(
            "A column-vector y was passed when a 1d array was expected. Please change "
            "the shape of %s to (n_samples,), for example using ravel()." % name),
            stacklevel=3)
        y = y.ravel()
    if y.dtype == object or (y.dtype.kind in "US" and not (
            isinstance(given, np.ndarray) and given.dtype.kind in "US")):
        _check_label_types(given if y.dtype.kind in "US" else y, name)
    if y.ndim != 1:
        raise ValueError("%s must be 1-D with one label per sample, got shape %r"
                         % (name, y.shape))
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError("%s has %d labels but X has %d samples"
                         % (name, y.shape[0], n_samples))
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("%s contains NaN or infinity" % name)
    if y.dtype.kind == "c":
        raise ValueError("Unknown label type: complex values in %s; labels must be "
                         "real numbers or strings" % name)
    return y


def _check_label_types(y, name):
    """Labels of one kind: a mix that numpy would silently turn into strings
    (``[1, "a", 2]``) raises, as in scikit-learn ("Mix of label input
    types"); so do None, NaN (``NaN != NaN``: each would become a class of
    its own) and complex numbers inside an object array."""
    # the set of types at C speed, then one isinstance-equivalent test per type
    values = np.asarray(y, dtype=object).ravel().tolist()
    types = set(map(type, values))
    if type(None) in types:
        raise ValueError("%s contains None (first at %d); labels must not be missing"
                         % (name, values.index(None)))
    if any(issubclass(t, (complex, np.complexfloating)) for t in types):
        raise ValueError("Unknown label type: complex values in %s; labels must be "
                         "real numbers or strings" % name)
    kinds = {"string" if issubclass(t, (str, bytes, np.str_, np.bytes_)) else "number"
             for t in types}
    if len(kinds) > 1:
        raise ValueError("Mix of label input types (string and number) in %s: "
                         "labels must be all strings or all numbers" % name)
    if any(issubclass(t, (float, np.floating)) for t in types):
        objects = np.asarray(values, dtype=object)
        # NaN != NaN; comparisons run in numpy's object loop, not a Python one
        bad = (objects != objects) | (objects == np.inf) | (objects == -np.inf)
        if bad.any():
            raise ValueError("%s contains NaN or infinity (first at %d); labels must "
                             "not be missing" % (name, np.flatnonzero(bad)[0]))


def check_no_overflow(X, owner):
    """Refuse data whose squared entries overflow double precision.

    A learner that forms ``x @ x`` or ``x @ w`` (perceptron updates, kernel
    values, coordinate-descent column norms) turns such data into infinite or
    NaN weights.  ``X`` is a validated matrix; ``owner`` names the model."""
    values = X.data if sp.issparse(X) else X.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.dot(values, values)) if values.size else 0.0
    if not np.isfinite(total):
        raise ValueError("%s: X holds values up to %.3g in magnitude, so sums of squared "
                         "features overflow double precision and the fitted weights "
                         "would be infinite or NaN; scale the features first (for "
                         "example divide each column by its largest absolute value)"
                         % (type(owner).__name__, np.abs(values).max()))


def check_finite_output(owner, values, X=None, what="decision values", *,
                        log_domain=False):
    """Return ``values`` (scores a fitted model computed from ``X`` for
    ``predict``) after checking that they are finite: NaN or infinity
    (overflow on input with values near the largest double, or ``inf - inf``
    between features) raises a ``ValueError`` naming the model instead of a
    silently wrong prediction.  ``log_domain``: log-probabilities, where -inf
    (probability 0) is valid.

    One pass over the (n_samples, n_classes) output, not over ``X`` (``X`` is
    only read to word the error)."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype.kind != "f" or not flat.size:
        return values
    if log_domain:
        bad = np.isnan(flat).any() or (flat == np.inf).any()
    else:
        bad = not np.isfinite(flat).all()
    largest = 0.0
    if X is not None and (bad or (log_domain and np.ndim(values) == 2 and (
            np.max(values, axis=1) == -np.inf).any())):
        # a row of log-probabilities that are all -inf is an impossible sample,
        # or an overflow when X holds values near the largest double
        data = X.data if sp.issparse(X) else np.asarray(X)
        largest = float(np.abs(data).max()) if data.size else 0.0
        bad = bad or largest > 1e300
    if bad:
        largest = " (largest magnitude %.3g)" % largest if largest else ""
        raise ValueError("%s: the %s on this X are not finite (NaN or infinity): X holds "
                         "values too large for double precision%s; scale the features "
                         "as they were scaled for fit"
                         % (type(owner).__name__, what, largest))
    return values


def check_finite_fit(owner, **arrays):
    """Raise when a solver produced NaN or infinite weights (named in the
    error with the model), instead of returning a model that predicts garbage."""
    for name, value in arrays.items():
        value = np.asarray(value)
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise ValueError("%s: the solver produced non-finite values in %s (overflow); "
                             "scale the features or increase the regularisation"
                             % (type(owner).__name__, name))


def check_regression_target(y, n_samples=None, *, name="y"):
    """Real-valued targets as float64, one row per sample when ``n_samples`` is
    given (other dimensions are left to the caller): complex numbers (whose
    imaginary part a cast would drop), values that are not numbers, None, NaN
    and infinity raise ``ValueError``."""
    if y is None:
        raise ValueError("this regressor requires %s to be passed, but the target %s is "
                         "None" % (name, name))
    arr = np.asarray(y)
    if arr.dtype.kind == "c" or (arr.dtype == object and any(
            isinstance(v, (complex, np.complexfloating)) for v in arr.ravel().tolist())):
        raise ValueError("%s holds complex numbers; the values must be real" % name)
    if arr.dtype == object and any(value is None for value in arr.ravel().tolist()):
        raise ValueError("%s contains None; regression targets must not be missing" % name)
    try:
        arr = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("%s must hold numbers (regression targets)" % name) from None
    if n_samples is not None and (arr.ndim == 0 or arr.shape[0] != n_samples):
        raise ValueError("%s has %s rows but X has %d samples"
                         % (name, arr.shape[0] if arr.ndim else "no", n_samples))
    check_finite_values(arr, name)
    return arr


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
        return plain_labels(classes), codes.astype(np.int32).ravel()
    classes = np.asarray(classes)
    try:
        codes = np.searchsorted(classes, y)
    except TypeError:
        # labels of another kind than the fitted classes (numbers against the
        # strings of an object classes_): numpy's '<' between them fails
        first = y.ravel()[0] if y.size else None
        raise ValueError("label %r was not seen in training (labels of another kind than "
                         "the fitted classes); known labels: %s"
                         % (getattr(first, "item", lambda: first)(),
                            classes.tolist()[:20])) from None
    codes = np.clip(codes, 0, len(classes) - 1)
    bad = classes[codes] != y
    if np.any(bad):
        first = y[np.flatnonzero(bad)[0]]
        raise ValueError("label %r was not seen in training; known labels: %s"
                         % (getattr(first, "item", lambda: first)(), classes.tolist()[:20]))
    return classes, codes.astype(np.int32)


def plain_labels(classes):
    """Sorted unique labels as a fitted ``classes_``: numpy strings become an
    object array of Python ``str`` (as scikit-learn's ``classes_`` for labels
    read from a DataFrame), so that ``classes_[0]``, ``list(classes_)`` and
    the labels ``predict`` returns print as ``'a'``, not ``np.str_('a')``;
    numbers are returned unchanged."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "US":
        out = np.empty(classes.shape[0], dtype=object)
        out[:] = classes.tolist()
        return out
    return classes


def check_partial_fit_classes(classes, fitted_classes):
    """The class list of ``partial_fit``: required (>= 2 labels) on the first
    call, optional and equal to the fitted one afterwards.  Returns the sorted
    unique classes on the first call, else the fitted classes."""
    if fitted_classes is None:
        if classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        classes = plain_labels(np.unique(check_target(classes, name="classes")))
        if len(classes) < 2:
            raise ValueError("classes must hold at least two class labels, got %r"
                             % (classes.tolist(),))
        return classes
    if classes is not None and not np.array_equal(np.unique(classes), fitted_classes):
        raise ValueError("classes %r differ from those of the first call %r"
                         % (np.unique(classes).tolist(), fitted_classes.tolist()))
    return fitted_classes


def check_sample_weight(sample_weight, n_samples, *, allow_all_zero=False):
    """float64 weights, one per sample: real, finite, >= 0 and (unless
    ``allow_all_zero``, for a batch of ``partial_fit`` or a fold) not all zero
    (None -> ones).  Complex weights raise rather than lose their imaginary part."""
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, (bool, np.bool_)) or (
            isinstance(sample_weight, numbers.Number)
            and not isinstance(sample_weight, numbers.Real)):
        raise ValueError("sample_weight must be a real number or an array of them, got %r"
                         % (sample_weight,))
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = np.asarray(sample_weight)
    if w.dtype.kind == "c" or (w.dtype == object and any(
            isinstance(v, (complex, np.complexfloating)) for v in w.ravel().tolist())):
        raise ValueError("sample_weight holds complex numbers; weights must be real")
    try:
        w = np.ascontiguousarray(w, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("sample_weight must hold numbers: %s" % exc) from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError("sample_weight must have shape (%d,), got %r"
                         % (n_samples, w.shape))
    check_finite_values(w, "sample_weight")
    if not n_samples:
        return w
    if not w.min() > 0:                         # one pass in the usual all-positive case
        if (w < 0).any():
            raise ValueError("sample_weight has negative entries (first at %d)"
                             % np.flatnonzero(w < 0)[0])
        if not allow_all_zero and not w.any():
            raise ValueError("sample_weight: all %d weights are zero; at least one sample "
                             "must have a positive weight" % n_samples)
    total = float(w.sum())
    if not np.isfinite(total):
        raise ValueError("sample_weight sums to infinity (weights up to %.3g): every "
                         "weighted sum would overflow; divide the weights by a constant"
                         % float(w.max()))
    if 0.0 < total < np.finfo(np.float64).tiny and not allow_all_zero:
        raise ValueError("sample_weight sums to %.3g, below the smallest normal double: "
                         "the weights are too small to train on; multiply them by a "
                         "constant" % total)
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


def check_X(X, name="X", *, accept_unsorted=False, finite=True):
    """:func:`linclass._validation.check_array` with scikit-learn's wording for
    the cases its estimator checks match on (complex values, 1-D input, zero
    features, non-numeric objects); everything else is check_array's
    (``accept_unsorted`` and ``finite`` are passed on)."""
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
    return check_array(X, name=name, accept_unsorted=accept_unsorted, finite=finite)


def check_classification_data(X, y, sample_weight=None, *, min_classes=2,
                              accept_unsorted=False):
    """Validate ``(X, y, sample_weight)`` for a classifier's ``fit``.

    Returns ``(X, classes, codes, sample_weight)``: ``X`` in canonical form,
    the sorted class labels, int32 codes ``0..n_classes-1`` and float64
    weights.  Continuous targets raise ``ValueError("Unknown label type ...")``
    (scikit-learn's wording) and fewer than ``min_classes`` classes raise a
    ``ValueError`` naming the class found.  ``accept_unsorted``: see
    :func:`check_array` (only for kernels that do not rely on sorted rows).
    """
    X = check_X(X, accept_unsorted=accept_unsorted)
    classes, codes = check_classification_target(y, X.shape[0], min_classes=min_classes)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
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


def check_classification_target(y, n_samples, *, min_classes=2):
    """Labels of a classification problem -> ``(classes, codes)``.

    The one check of every classifier's ``y`` (flat, kernel, joint, decision
    wrappers): :func:`check_target` (one label per sample, labels of one kind:
    no NaN, None, complex numbers or mix of strings and numbers), then
    continuous targets (floats that are not whole numbers, also inside an
    object array) raise ``ValueError("Unknown label type: continuous ...")``
    (scikit-learn's wording), and fewer than ``min_classes`` classes raise a
    ``ValueError`` naming the class found.
    """
    if y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None")
    y = check_target(y, n_samples)
    numeric = y
    if y.dtype == object and y.size and not isinstance(y.flat[0], (str, bytes)):
        try:
            numeric = y.astype(np.float64)
        except (TypeError, ValueError):
            numeric = y
    if numeric.dtype.kind == "f" and numeric.size:
        fractional = numeric != np.round(numeric)
        if fractional.any():
            raise ValueError("Unknown label type: continuous. linclass classifiers need "
                             "discrete class labels, got float values such as %r"
                             % (float(numeric[np.flatnonzero(fractional)[0]]),))
    classes, codes = encode_labels(y)
    if len(classes) < min_classes:
        raise ValueError("y has only one class (%r); a classifier needs at least "
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


#: ``[controller, len(sys.modules) when it was built]``: threadpoolctl's
#: ``ThreadpoolController`` scans the loaded shared libraries (about 0.4 ms, as
#: much as a small fit's solver), so it is built once and rebuilt only after
#: new modules were imported (a new module may have loaded another BLAS).
_BLAS_CONTROLLER = [None, -1]


def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    n_modules = len(sys.modules)
    if _BLAS_CONTROLLER[0] is None or _BLAS_CONTROLLER[1] != n_modules:
        _BLAS_CONTROLLER[0] = ThreadpoolController()
        _BLAS_CONTROLLER[1] = n_modules
    return _BLAS_CONTROLLER[0]


def blas_threads(n_threads=1):
    """Context limiting BLAS to ``n_threads`` threads (when ``threadpoolctl`` is installed).

    Not an input check, but a contract of every solver around ``_core``: linclass
    must not oversubscribe the caller's cores.  scipy's L-BFGS-B calls BLAS on
    short vectors once per iteration; with OpenBLAS's thread pool on a loaded
    machine each call can cost milliseconds (measured 3.5 s vs 0.13 s for a
    124-parameter fit), numpy's threaded matrix-vector products inside
    RankSVM's Newton solver fought with the caller's threads (1.6-8 s instead
    of 0.5 s), and a small dense ridge fit took 8.9 ms with OpenBLAS's two
    threads against 5.3 ms with one.  Solvers therefore run BLAS on one thread
    unless the caller asks for more through ``n_jobs``
    (``blas_threads(resolve_n_jobs(n_jobs, ...))``).  Entering the context
    costs about 15 microseconds (the controller is cached).
    """
    controller = _blas_controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=int(n_threads), user_api="blas")


def single_threaded_blas():
    """``blas_threads(1)``: the solvers' default (see :func:`blas_threads`)."""
    return blas_threads(1)


def check_state_array(value, name, shape, *, kinds="f"):
    """A fitted array read back from a model file (for ``_check_state``).

    ``value`` must be a numpy array whose dtype kind is one of ``kinds``
    (``"f"`` float, ``"i"``/``"u"`` integers, ``"b"`` bool) and whose shape is
    ``shape`` (a tuple; ``None`` leaves that axis free).  Raises ``ValueError``
    naming the attribute otherwise; returns ``value``.
    """
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds \
            or value.ndim != len(shape) \
            or any(want is not None and want != got for want, got in zip(shape, value.shape)):
        want = "(%s)" % ", ".join("any" if s is None else str(s) for s in shape)
        got = ("array of shape %r and dtype %s" % (value.shape, value.dtype)
               if isinstance(value, np.ndarray) else type(value).__name__)
        raise ValueError("%s must be an array of shape %s with dtype kind in %r, got %s"
                         % (name, want, kinds, got))
    return value


#: Hard cap on the iterations (epochs, passes, outer iterations) of every
#: iterative solver of the flat family: a ``max_iter`` above it runs
#: ``MAX_ITER_CAP`` iterations, with a ConvergenceWarning saying so, so that no
#: value a user passes makes a fit run without bound.
MAX_ITER_CAP = 1_000_000


def check_max_iter(owner, value, name="max_iter"):
    """Check an iteration budget at ``fit``: an integer >= 1 (a ``ValueError``
    naming ``name`` otherwise; -1 is not "unlimited" in linclass's flat
    models); above :data:`MAX_ITER_CAP` a ``ConvergenceWarning`` says that the
    solver stops at the cap.  Returns the budget the solver runs
    (:func:`iteration_budget`)."""
    check_positive(value, name, integer=True)
    if value > MAX_ITER_CAP:
        import warnings
        from .exceptions import ConvergenceWarning
        warnings.warn("%s: %s=%d is above the hard cap of %d iterations; the solver "
                      "stops after %d" % (type(owner).__name__ if owner is not None
                                          else "linclass", name, value, MAX_ITER_CAP,
                                          MAX_ITER_CAP), ConvergenceWarning, stacklevel=3)
    return iteration_budget(value)


def iteration_budget(value):
    """``min(max_iter, MAX_ITER_CAP)`` as a Python int (fits a C ``int``);
    None (the solver's own default) stays None."""
    return None if value is None else int(min(int(value), MAX_ITER_CAP))


def check_int_param(value, name, *, low=None, high=None):
    """An integer parameter in ``[low, high]`` (either bound may be None).

    Raises ``ValueError`` naming the parameter for a non-integer (bools and
    floats included) or an integer out of range (as :func:`check_positive`).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError("%s must be an integer, got %r" % (name, value))
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = ">= %d" % low if high is None else ("<= %d" % high if low is None
                                                     else "in [%d, %d]" % (low, high))
        raise ValueError("%s must be %s, got %r" % (name, bounds, value))
    return int(value)


# Parameters with one meaning in every linclass model (checked by name before
# each ``fit``: see ``BaseEstimator.__init_subclass__``).
BOOLEAN_PARAMS = frozenset([
    "fit_intercept", "warm_start", "shuffle", "voted", "shrinking", "probability",
    "early_stopping", "pegasos_projection", "penalize_intercept", "prefit", "normalize",
    "lowercase", "all_possible_states", "all_possible_transitions"])


def check_common_params(estimator):
    """Check the parameters whose name fixes their type in every linclass model:
    the boolean switches of :data:`BOOLEAN_PARAMS`, ``average`` (bool, or the
    step an average starts at), ``verbose`` (bool or int >= 0), ``random_state``
    (None, an int >= 0, a RandomState or Generator) and ``n_jobs`` (None or a
    non-zero int).  The ``ValueError`` names the parameter."""
    names = set(type(estimator)._get_param_names()) if hasattr(
        type(estimator), "_get_param_names") else set(vars(estimator))
    params = {k: v for k, v in vars(estimator).items() if k in names}
    for name in BOOLEAN_PARAMS.intersection(params):
        if not isinstance(params[name], (bool, np.bool_)):
            raise ValueError("%s must be True or False, got %r" % (name, params[name]))
    if "average" in params and not isinstance(params["average"], (bool, np.bool_)):
        check_int_param(params["average"], "average", low=0)
    if "verbose" in params and not isinstance(params["verbose"], (bool, np.bool_)):
        check_int_param(params["verbose"], "verbose", low=0)
    if "random_state" in params:
        random_state = params["random_state"]
        if not (random_state is None or isinstance(
                random_state, (np.random.RandomState, np.random.Generator))):
            check_int_param(random_state, "random_state", low=0)
    if "n_jobs" in params and params["n_jobs"] is not None:
        n_jobs = check_int_param(params["n_jobs"], "n_jobs")
        if n_jobs == 0:
            raise ValueError("n_jobs must be None, -1 (all CPUs) or a positive integer, got 0")


def as_float_param(value, name):
    """``np.asarray(value, dtype=float64)`` for an array-valued parameter
    (priors, weights, cost matrices), with a ``ValueError`` naming the
    parameter when it does not hold numbers."""
    try:
        arr = np.asarray(value)
        if arr.dtype.kind == "c":
            raise ValueError("%s holds complex numbers; it must be real" % name)
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(name + " holds complex"):
            raise
        raise ValueError("%s must be an array of numbers, got %r (%s)"
                         % (name, value if np.ndim(value) == 0 else type(value).__name__,
                            exc)) from None
