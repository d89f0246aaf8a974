"""Python shims around the shared ``cdef`` helpers of ``_core``'s ``.pxd`` files.

They exist so the tests can check each inline helper against numpy; no model
uses them.  Inputs are validated here because the helpers themselves are not.
"""
from libc.stdint cimport uint64_t

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy, row_sq_norm
from linclass._core._weights cimport (
    ScaledWeights, sw_init, sw_dot, sw_add, sw_scale, sw_reset_scale,
    AveragedWeights, aw_init, aw_add, aw_tick, aw_average)
from linclass._core._random cimport Rng, rng_seed, rng_next, rng_uniform, rng_below, rng_shuffle
from linclass._core._mathutils cimport logsumexp, logaddexp


cdef Rows _rows_of(data, indices, indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                   const double[::1] d, const int[::1] ind, const int[::1] ptr):
    cdef Rows X
    X.data = &d[0] if d.shape[0] > 0 else NULL
    X.indices = (&ind[0] if ind.shape[0] > 0 else NULL) if indptr is not None else NULL
    X.indptr = &ptr[0] if indptr is not None else NULL
    X.n_rows = n_rows
    X.n_cols = n_cols
    return X


def _as_rows(X):
    """(data, indices, indptr) arrays of a dense ndarray or a canonical CSR matrix."""
    if hasattr(X, "indptr"):
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
        if indices.shape[0] == 0:
            indices = np.zeros(1, dtype=np.int32)     # never read: every row is empty
            data = np.zeros(1)
        return data, indices, indptr
    data = np.ascontiguousarray(X, dtype=np.float64).ravel()
    return data, np.zeros(1, dtype=np.int32), None


def rows_dot_py(X, w):
    """X @ w row by row through rows_get/row_dot."""
    data, indices, indptr = _as_rows(X)
    cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
    n_rows, n_cols = X.shape
    if wv.shape[0] != n_cols:
        raise ValueError("w has %d entries, X has %d columns" % (wv.shape[0], n_cols))
    cdef const int[::1] ptr = indptr if indptr is not None else np.zeros(1, dtype=np.int32)
    cdef Rows rows = _rows_of(data, indices, indptr, n_rows, n_cols, data, indices, ptr)
    out = np.zeros(n_rows)
    cdef double[::1] o = out
    cdef const double* vals
    cdef const int* ind
    cdef Py_ssize_t i, nnz
    with nogil:
        for i in range(rows.n_rows):
            nnz = rows_get(&rows, i, &vals, &ind)
            o[i] = row_dot(vals, ind, nnz, &wv[0]) if rows.n_cols > 0 else 0.0
    return out


def rows_axpy_py(X, coefs, n_out):
    """w = sum_i coefs[i] * X[i] through row_axpy (w has n_out >= n_cols entries)."""
    data, indices, indptr = _as_rows(X)
    n_rows, n_cols = X.shape
    cdef const double[::1] c = np.ascontiguousarray(coefs, dtype=np.float64)
    if c.shape[0] != n_rows or n_out < n_cols:
        raise ValueError("coefs must have one entry per row and n_out >= n_cols")
    cdef const int[::1] ptr = indptr if indptr is not None else np.zeros(1, dtype=np.int32)
    cdef Rows rows = _rows_of(data, indices, indptr, n_rows, n_cols, data, indices, ptr)
    w = np.zeros(max(int(n_out), 1))
    cdef double[::1] wv = w
    cdef const double* vals
    cdef const int* ind
    cdef Py_ssize_t i, nnz
    with nogil:
        for i in range(rows.n_rows):
            nnz = rows_get(&rows, i, &vals, &ind)
            row_axpy(c[i], vals, ind, nnz, &wv[0])
    return w[:n_out]


def rows_sq_norm_py(X):
    data, indices, indptr = _as_rows(X)
    n_rows, n_cols = X.shape
    cdef const int[::1] ptr = indptr if indptr is not None else np.zeros(1, dtype=np.int32)
    cdef Rows rows = _rows_of(data, indices, indptr, n_rows, n_cols, data, indices, ptr)
    out = np.zeros(n_rows)
    cdef double[::1] o = out
    cdef const double* vals
    cdef const int* ind
    cdef Py_ssize_t i, nnz
    for i in range(rows.n_rows):
        nnz = rows_get(&rows, i, &vals, &ind)
        o[i] = row_sq_norm(vals, nnz) if nnz > 0 else 0.0
    return out


def scaled_weights_py(w0, ops):
    """Apply ops to a ScaledWeights and return (w_true, sq_norm, dots).

    ops: list of ("add", alpha, dense_row) | ("scale", factor) | ("dot", dense_row)
    | ("reset",).  Dense rows of length n are used (indices NULL).
    """
    w = np.array(w0, dtype=np.float64, copy=True)
    cdef Py_ssize_t n = w.shape[0]
    cdef double[::1] wv = w
    cdef ScaledWeights v
    cdef const double[::1] x
    sw_init(&v, &wv[0], n)
    dots = []
    for op in ops:
        if op[0] == "add":
            x = np.ascontiguousarray(op[2], dtype=np.float64)
            if x.shape[0] != n:
                raise ValueError("row length mismatch")
            sw_add(&v, op[1], &x[0], NULL, n)
        elif op[0] == "scale":
            sw_scale(&v, op[1])
        elif op[0] == "dot":
            x = np.ascontiguousarray(op[1], dtype=np.float64)
            if x.shape[0] != n:
                raise ValueError("row length mismatch")
            dots.append(sw_dot(&v, &x[0], NULL, n))
        elif op[0] == "reset":
            sw_reset_scale(&v)
        else:
            raise ValueError("unknown op %r" % (op[0],))
    return w * v.scale, v.sq_norm, dots


def averaged_weights_py(w0, updates):
    """Run the lazy-averaging trick over a list of steps.

    updates: one entry per step, each a list of (index, alpha) sparse updates
    applied during that step.  Returns (final w, averaged w).
    """
    w = np.array(w0, dtype=np.float64, copy=True)
    cdef Py_ssize_t n = w.shape[0]
    u = np.zeros(n)
    avg = np.zeros(n)
    cdef double[::1] wv = w, uv = u, av = avg
    cdef AveragedWeights a
    cdef double one = 1.0
    cdef int j
    aw_init(&a, &wv[0], &uv[0], n)
    for step in updates:
        for idx, alpha in step:
            if not 0 <= idx < n:
                raise ValueError("index out of range")
            j = idx
            aw_add(&a, alpha, &one, &j, 1)
        aw_tick(&a)
    aw_average(&a, &av[0])
    return w, avg


def logsumexp_py(a):
    cdef const double[::1] v = np.ascontiguousarray(a, dtype=np.float64)
    if v.shape[0] == 0:
        return logsumexp(NULL, 0)
    return logsumexp(&v[0], v.shape[0])


def logaddexp_py(double a, double b):
    return logaddexp(a, b)


def rng_py(uint64_t seed, Py_ssize_t n, str kind="uniform", Py_ssize_t bound=1):
    """n draws of kind 'uniform' (floats in [0, 1)), 'below' (ints in [0, bound))
    or 'raw' (uint64)."""
    cdef Rng r
    cdef Py_ssize_t i
    rng_seed(&r, seed)
    if kind == "uniform":
        out = np.empty(n)
        for i in range(n):
            out[i] = rng_uniform(&r)
    elif kind == "below":
        if bound < 1:
            raise ValueError("bound must be >= 1")
        out = np.empty(n, dtype=np.int64)
        for i in range(n):
            out[i] = rng_below(&r, bound)
    elif kind == "raw":
        out = np.empty(n, dtype=np.uint64)
        for i in range(n):
            out[i] = rng_next(&r)
    else:
        raise ValueError("unknown kind %r" % (kind,))
    return out


def rng_shuffle_py(uint64_t seed, a):
    """A shuffled int32 copy of a."""
    out = np.array(a, dtype=np.int32, copy=True)
    cdef int[::1] v = out
    cdef Rng r
    rng_seed(&r, seed)
    if v.shape[0] > 0:
        rng_shuffle(&r, &v[0], v.shape[0])
    return out
