"""Kernel functions: linear, polynomial, Gaussian RBF, sigmoid, precomputed, callables.

=============  =====================================  ==========================
name           k(x, x')                               parameters
=============  =====================================  ==========================
``linear``     ``x . x'``
``poly``       ``(gamma x . x' + coef0) ** degree``   gamma > 0, degree >= 1
``rbf``        ``exp(-gamma ||x - x'||^2)``           gamma > 0
``sigmoid``    ``tanh(gamma x . x' + coef0)``         gamma > 0 (not PSD in general)
=============  =====================================  ==========================

``precomputed`` means the user hands over the Gram matrix itself; a callable
``kernel(X, Y)`` must return the ``(n_X, n_Y)`` matrix of kernel values, which is
checked for shape and finiteness.

Dense inputs use one BLAS product ``X @ Y.T`` and then the element formula;
sparse (CSR) inputs use the Cython kernel rows of ``linclass._core._kernels``
(one row scattered into a dense vector, the other rows dotted with it), with
squared row norms computed once for RBF.

References
----------
Schölkopf, B. & Smola, A. J. (2002). *Learning with Kernels*, MIT Press, ch. 2.
Chang, C.-C. & Lin, C.-J. (2011). LIBSVM: a library for support vector
machines. ACM TIST 2(3), 27.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import check_array

__all__ = ["pairwise_kernels", "linear_kernel", "polynomial_kernel", "rbf_kernel",
           "sigmoid_kernel", "KERNEL_NAMES"]

# codes of linclass/_core/_kernel_rows.pxd
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}
KERNEL_NAMES = tuple(KERNEL_CODES)


def check_kernel_name(kernel):
    """``kernel`` is one of :data:`KERNEL_NAMES` or a callable."""
    if callable(kernel):
        return kernel
    if not isinstance(kernel, str) or kernel not in KERNEL_CODES:
        raise ValueError("kernel must be one of %s or a callable, got %r"
                         % (", ".join(repr(k) for k in KERNEL_NAMES), kernel))
    return kernel


def check_gamma(gamma, name="gamma"):
    """A finite gamma > 0 (strings such as ``"scale"`` are resolved by the caller)."""
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not np.isfinite(gamma):
        raise ValueError("%s must be a finite number > 0 (or 'scale'/'auto' in SVC), got %r"
                         % (name, gamma))
    if gamma <= 0:
        raise ValueError("%s must be > 0, got %r: a kernel width must be positive"
                         % (name, gamma))
    return float(gamma)


def check_degree(degree):
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral):
        if isinstance(degree, numbers.Real) and float(degree).is_integer():
            degree = int(degree)
        else:
            raise ValueError("degree must be an integer >= 1, got %r" % (degree,))
    if degree < 1:
        raise ValueError("degree must be an integer >= 1, got %r" % (degree,))
    if degree > 1000:
        raise ValueError("degree must be at most 1000, got %r" % (degree,))
    return int(degree)


def check_coef0(coef0):
    if isinstance(coef0, bool) or not isinstance(coef0, numbers.Real) or not np.isfinite(coef0):
        raise ValueError("coef0 must be a finite number, got %r" % (coef0,))
    return float(coef0)


def resolve_gamma(gamma, X):
    """``"scale"``: 1 / (n_features * X.var()); ``"auto"``: 1 / n_features; else checked."""
    n_features = X.shape[1]
    if isinstance(gamma, str):
        if gamma == "auto":
            return 1.0 / n_features
        if gamma == "scale":
            if sp.issparse(X):
                n_values = X.shape[0] * X.shape[1]
                mean = X.data.sum() / n_values
                var = (X.data ** 2).sum() / n_values - mean ** 2
            else:
                var = X.var()
            return 1.0 / (n_features * var) if var > 0 else 1.0
        raise ValueError("gamma must be 'scale', 'auto' or a number > 0, got %r" % gamma)
    return check_gamma(gamma)


def rows_arguments(X):
    """The (data, indices, indptr, n_rows, n_cols, sparse) view of a checked matrix."""
    if sp.issparse(X):
        return dict(data=X.data, indices=X.indices, indptr=X.indptr, n_rows=X.shape[0],
                    n_cols=X.shape[1], sparse=True)
    empty = np.zeros(0, dtype=np.int32)
    return dict(data=X.reshape(-1), indices=empty, indptr=empty, n_rows=X.shape[0],
                n_cols=X.shape[1], sparse=False)


def row_sq_norms(X):
    """Squared Euclidean norm of each row of a checked matrix."""
    from .._core._kernels import row_sq_norms as _row_sq_norms
    return _row_sq_norms(**rows_arguments(X))


def kernel_matrix(X, Y, kernel, *, gamma=1.0, coef0=0.0, degree=3, X_sq_norms=None,
                  Y_sq_norms=None, owner="pairwise_kernels"):
    """K[a, b] = k(X[a], Y[b]) for already checked X, Y and parameters (internal).

    Values near the largest double overflow the dot products or the squared
    distances (NaN from ``inf - inf``): a non-finite K raises a ``ValueError``
    naming ``owner`` (an estimator or a function name) instead of decision
    values that are silently NaN.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        K = _kernel_values(X, Y, kernel, gamma=gamma, coef0=coef0, degree=degree,
                           X_sq_norms=X_sq_norms, Y_sq_norms=Y_sq_norms)
    check_finite_kernel(K, owner, kernel)
    return K


def check_finite_kernel(K, owner, kernel):
    """Raise when kernel values overflowed (``owner``: an estimator or a name)."""
    if K.size and not np.isfinite(K).all():
        name = owner if isinstance(owner, str) else type(owner).__name__
        raise ValueError("%s: the %r kernel values are not finite (NaN or infinity): the "
                         "data hold values too large for double precision; scale the "
                         "features first" % (name, kernel))


def _kernel_values(X, Y, kernel, *, gamma, coef0, degree, X_sq_norms, Y_sq_norms):
    code = KERNEL_CODES[kernel]
    if code == 4:
        raise ValueError("a precomputed kernel has no kernel function")
    if not sp.issparse(X) and not sp.issparse(Y):
        dot = X @ Y.T                                       # BLAS
        if code == 0:
            return np.ascontiguousarray(dot)
        if code == 1:
            return (gamma * dot + coef0) ** degree
        if code == 3:
            return np.tanh(gamma * dot + coef0)
        xx = (X * X).sum(axis=1) if X_sq_norms is None else X_sq_norms
        yy = (Y * Y).sum(axis=1) if Y_sq_norms is None else Y_sq_norms
        d2 = xx[:, None] + yy[None, :] - 2.0 * dot
        np.maximum(d2, 0.0, out=d2)
        return np.exp(-gamma * d2)
    if not sp.issparse(X):
        X = np.ascontiguousarray(X)
    if not sp.issparse(Y):
        Y = np.ascontiguousarray(Y)
    if code == 2:
        X_sq_norms = row_sq_norms(X) if X_sq_norms is None else X_sq_norms
        Y_sq_norms = row_sq_norms(Y) if Y_sq_norms is None else Y_sq_norms
    else:
        X_sq_norms = Y_sq_norms = None
    from .._core._kernels import kernel_block
    a = rows_arguments(X)
    b = rows_arguments(Y)
    return kernel_block(a_data=a["data"], a_indices=a["indices"], a_indptr=a["indptr"],
                        a_rows=a["n_rows"], a_sparse=a["sparse"],
                        b_data=b["data"], b_indices=b["indices"], b_indptr=b["indptr"],
                        b_rows=b["n_rows"], b_sparse=b["sparse"], n_cols=X.shape[1],
                        a_sq_norms=X_sq_norms, b_sq_norms=Y_sq_norms, kind=code,
                        gamma=gamma, coef0=coef0, degree=degree)


def check_finite_rows(X, name):
    """Fitted rows a kernel will read (support vectors, landmarks, a training
    basis) hold finite values whose squared row norms are finite too: NaN or
    values near the largest double would only surface as non-finite kernel
    values at predict (for ``_check_state``, which ``load`` always runs)."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.dtype.kind != "f" or not values.size:
        return
    if not np.isfinite(values).all():
        raise ValueError("%s must be finite (it holds NaN or infinity)" % name)
    with np.errstate(over="ignore"):
        total = float(np.dot(values.reshape(-1), values.reshape(-1)))
    if not np.isfinite(total):
        raise ValueError("%s holds values up to %.3g in magnitude, so kernel values would "
                         "overflow" % (name, float(np.abs(values).max())))


def call_kernel(kernel, X, Y, params=None):
    """Evaluate a user callable ``kernel(X, Y, **params)`` and check its result."""
    K = kernel(X, Y, **(params or {}))
    if sp.issparse(K):
        K = K.toarray()
    if np.asarray(K).dtype.kind == "c":
        # asarray(dtype=float64) would drop the imaginary parts
        raise ValueError("the kernel callable returned complex values; a kernel matrix "
                         "must be real")
    try:
        K = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("the kernel callable returned non-numeric values: %s" % exc) from None
    expected = (X.shape[0], Y.shape[0])
    if K.shape != expected:
        raise ValueError("the kernel callable must return a matrix of shape %r "
                         "(n_samples_X, n_samples_Y), got %r" % (expected, K.shape))
    if not np.isfinite(K).all():
        raise ValueError("the kernel callable returned non-finite values (NaN or infinity)")
    return np.ascontiguousarray(K)


def pairwise_kernels(X, Y=None, kernel="linear", **params):
    """Kernel matrix between the rows of X and those of Y.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples_X, n_features)
    Y : array-like or sparse matrix, shape (n_samples_Y, n_features), optional
        Defaults to X.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable
        ``"precomputed"`` returns X itself (checked).  A callable is called as
        ``kernel(X, Y, **params)`` and must return an (n_samples_X,
        n_samples_Y) matrix of finite values.
    **params
        ``gamma`` (default 1 / n_features), ``degree`` (default 3) and
        ``coef0`` (default 1), as in scikit-learn's kernel functions.

    Returns
    -------
    K : ndarray, shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from linclass.kernels import pairwise_kernels
    >>> pairwise_kernels(np.eye(2), kernel="rbf", gamma=0.5).round(3)
    array([[1.   , 0.368],
           [0.368, 1.   ]])
    """
    return pairwise_kernels_for("pairwise_kernels", X, Y, kernel, **params)


def pairwise_kernels_for(owner, X, Y=None, kernel="linear", **params):
    """:func:`pairwise_kernels` whose overflow error names ``owner`` (an
    estimator of this family, or a function name)."""
    kernel = check_kernel_name(kernel)
    X = check_array(X, name="X")
    if Y is not None:
        Y = check_array(Y, name="Y")
    if callable(kernel):
        return call_kernel(kernel, X, X if Y is None else Y, params)
    if kernel == "precomputed":
        if params:
            raise ValueError("a precomputed kernel takes no parameters, got %s" % sorted(params))
        if sp.issparse(X):
            X = X.toarray()
        if Y is not None:
            raise ValueError("a precomputed kernel takes no Y")
        return X
    allowed = {"linear": (), "poly": ("gamma", "degree", "coef0"), "rbf": ("gamma",),
               "sigmoid": ("gamma", "coef0")}[kernel]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError("unexpected parameters %s for the %r kernel (it takes %s)"
                         % (unknown, kernel, list(allowed) or "none"))
    Y_ = X if Y is None else Y
    if Y_.shape[1] != X.shape[1]:
        raise ValueError("X has %d features but Y has %d: incompatible dimension"
                         % (X.shape[1], Y_.shape[1]))
    gamma = params.get("gamma")
    gamma = 1.0 / X.shape[1] if gamma is None else check_gamma(gamma)
    degree = check_degree(params.get("degree", 3))
    coef0 = check_coef0(params.get("coef0", 1.0))
    return kernel_matrix(X, Y_, kernel, gamma=gamma, coef0=coef0, degree=degree, owner=owner)


def linear_kernel(X, Y=None):
    """``X @ Y.T``"""
    return pairwise_kernels(X, Y, kernel="linear")


def polynomial_kernel(X, Y=None, degree=3, gamma=None, coef0=1.0):
    """``(gamma X @ Y.T + coef0) ** degree``"""
    return pairwise_kernels(X, Y, kernel="poly", degree=degree, gamma=gamma, coef0=coef0)


def rbf_kernel(X, Y=None, gamma=None):
    """``exp(-gamma ||x - y||^2)``"""
    return pairwise_kernels(X, Y, kernel="rbf", gamma=gamma)


def sigmoid_kernel(X, Y=None, gamma=None, coef0=1.0):
    """``tanh(gamma X @ Y.T + coef0)``"""
    return pairwise_kernels(X, Y, kernel="sigmoid", gamma=gamma, coef0=coef0)


class KernelModelMixin:
    """Persistence and scikit-learn tags shared by the kernel models (SVC,
    KernelPerceptron): the cached squared norms of the support vectors and the
    resolved gamma are private state that ``save``/``load`` must keep."""

    def _get_state(self):
        state = super()._get_state()
        if "_gamma" in vars(self):           # fitted (an unfitted model saves as well)
            state["sv_sq_norms_"] = self._sv_sq_norms
            state["gamma_"] = self._gamma
        return state

    def _set_state(self, state):
        state = dict(state)
        self._sv_sq_norms = state.pop("sv_sq_norms_", None)
        self._gamma = state.pop("gamma_", 0.0)
        super()._set_state(state)

    def _check_state(self):
        """The support vectors, their coefficients, norms and the resolved gamma
        agree (called by :func:`linclass.load`, after the generic checks)."""
        super()._check_state()
        if "support_" not in vars(self):          # not fitted: nothing to check
            return
        from .._validation import check_state_array
        classes = self.classes_
        if len(classes) < 2:
            raise ValueError("classes_ must hold at least 2 classes, got %d" % len(classes))
        gamma = self._gamma
        if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) \
                or not np.isfinite(gamma) or gamma < 0:
            raise ValueError("gamma_ must be a finite number >= 0, got %r" % (gamma,))
        shape_fit = self.shape_fit_
        if not isinstance(shape_fit, (tuple, list)) or len(shape_fit) != 2 or any(
                isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0
                for d in shape_fit):
            raise ValueError("shape_fit_ must be a pair of sizes, got %r" % (shape_fit,))
        support = check_state_array(self.support_, "support_", (None,), kinds="iu")
        n_sv = support.shape[0]
        if n_sv and (support.min() < 0 or support.max() >= shape_fit[0]):
            raise ValueError("support_ indexes outside the %d training samples" % shape_fit[0])
        check_state_array(self.dual_coef_, "dual_coef_", (self._n_dual_rows(), n_sv))
        self._check_finite_state()
        if self.kernel == "precomputed":
            return
        sv = self.support_vectors_
        if sp.issparse(sv):
            if sv.shape != (n_sv, self.n_features_in_):
                raise ValueError("support_vectors_ has shape %r, expected %r"
                                 % (sv.shape, (n_sv, self.n_features_in_)))
            self.support_vectors_ = check_array(sv)     # canonical CSR (kernels index it)
        else:
            check_state_array(sv, "support_vectors_", (n_sv, self.n_features_in_))
        if self._sv_sq_norms is not None:
            check_state_array(self._sv_sq_norms, "sv_sq_norms_", (n_sv,))

    def _check_finite_state(self):
        """NaN or infinity in a fitted array would only surface as non-finite
        decision values: refuse them at load."""
        sv = self.support_vectors_
        arrays = {"dual_coef_": self.dual_coef_, "intercept_": vars(self).get("intercept_"),
                  "probA_": vars(self).get("probA_"), "probB_": vars(self).get("probB_"),
                  "sv_sq_norms_": self._sv_sq_norms}
        for name, value in arrays.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" \
                    and not np.isfinite(value).all():
                raise ValueError("%s must be finite (it holds NaN or infinity)" % name)
        check_finite_rows(sv, "support_vectors_")      # empty for a precomputed kernel

    def _n_dual_rows(self):
        """Rows of ``dual_coef_`` for the fitted classes."""
        return len(self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
