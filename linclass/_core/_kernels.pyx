# Kernel matrices between two row sets, dense or CSR, for prediction and for
# linclass.kernels.pairwise_kernels (the element formulas live in
# _kernel_rows.pxd, shared with the SMO solver and the kernel perceptron).

from libc.stdlib cimport calloc, free

from ._rows cimport Rows, rows_get, row_dot
from ._kernel_rows cimport Kernel, kernel_transform, KERNEL_PRECOMPUTED

import numpy as np

# A CSR matrix with no stored entries still needs a non-NULL `indices`: the kernels
# tell a CSR row from a dense one by it (a NULL would send them into dense reads).
cdef int _NO_INDEX[1]


cdef Rows _make_rows(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                     Py_ssize_t n_rows, Py_ssize_t n_cols, bint sparse):
    cdef Rows r
    r.data = &data[0] if data.shape[0] else NULL
    r.indices = (&indices[0] if indices.shape[0] else &_NO_INDEX[0]) if sparse else NULL
    r.indptr = &indptr[0] if sparse else NULL
    r.n_rows = n_rows
    r.n_cols = n_cols
    return r


cdef void _block(const Kernel* k, const Rows* A, const double* sq_a,
                 const Rows* B, const double* sq_b, double* buf,
                 double* out) noexcept nogil:
    """out[a, b] = k(A[a], B[b]) (out has shape (A.n_rows, B.n_rows))"""
    cdef Py_ssize_t a, b, m, nnz_a, nnz_b
    cdef const double* va
    cdef const int* ia
    cdef const double* vb
    cdef const int* ib
    cdef const double* dense_a
    cdef double dot
    for a in range(A.n_rows):
        nnz_a = rows_get(A, a, &va, &ia)
        if ia != NULL:
            for m in range(nnz_a):              # buf[a.indices] = a.data
                buf[ia[m]] = va[m]
            dense_a = buf
        else:
            dense_a = va
        for b in range(B.n_rows):
            nnz_b = rows_get(B, b, &vb, &ib)
            dot = row_dot(vb, ib, nnz_b, dense_a)            # B[b] @ A[a]
            out[a * B.n_rows + b] = kernel_transform(
                k, dot, sq_a[a] if sq_a != NULL else 0.0, sq_b[b] if sq_b != NULL else 0.0)
        if ia != NULL:
            for m in range(nnz_a):
                buf[ia[m]] = 0.0


def kernel_block(*, a_data, a_indices, a_indptr, Py_ssize_t a_rows, bint a_sparse,
                 b_data, b_indices, b_indptr, Py_ssize_t b_rows, bint b_sparse,
                 Py_ssize_t n_cols, a_sq_norms, b_sq_norms, int kind, double gamma,
                 double coef0, int degree):
    """Kernel matrix K[a, b] = k(A[a], B[b]), shape (a_rows, b_rows).

    A and B are given as (data, indices, indptr) of CSR matrices or, when not
    sparse, as the C-ordered flat data of a dense matrix (indices/indptr
    ignored).  Both have ``n_cols`` columns.  ``*_sq_norms`` are the squared
    row norms (RBF) or None.  The Python layer has checked everything.
    """
    cdef const double[::1] ad = np.ascontiguousarray(a_data, dtype=np.float64)
    cdef const int[::1] ai = np.ascontiguousarray(a_indices, dtype=np.int32)
    cdef const int[::1] ap = np.ascontiguousarray(a_indptr, dtype=np.int32)
    cdef const double[::1] bd = np.ascontiguousarray(b_data, dtype=np.float64)
    cdef const int[::1] bi = np.ascontiguousarray(b_indices, dtype=np.int32)
    cdef const int[::1] bp = np.ascontiguousarray(b_indptr, dtype=np.int32)
    cdef const double[::1] sqa
    cdef const double[::1] sqb
    cdef const double* sqa_p = NULL
    cdef const double* sqb_p = NULL
    if kind == KERNEL_PRECOMPUTED:
        raise ValueError("kernel_block does not evaluate precomputed kernels")
    if a_sparse and ap.shape[0] != a_rows + 1:
        raise ValueError("a_indptr must have a_rows + 1 entries")
    if b_sparse and bp.shape[0] != b_rows + 1:
        raise ValueError("b_indptr must have b_rows + 1 entries")
    if not a_sparse and ad.shape[0] != a_rows * n_cols:
        raise ValueError("dense A must hold a_rows * n_cols values")
    if not b_sparse and bd.shape[0] != b_rows * n_cols:
        raise ValueError("dense B must hold b_rows * n_cols values")
    if a_sq_norms is not None:
        sqa = np.ascontiguousarray(a_sq_norms, dtype=np.float64)
        if sqa.shape[0] != a_rows:
            raise ValueError("a_sq_norms must have a_rows entries")
        if a_rows:
            sqa_p = &sqa[0]
    if b_sq_norms is not None:
        sqb = np.ascontiguousarray(b_sq_norms, dtype=np.float64)
        if sqb.shape[0] != b_rows:
            raise ValueError("b_sq_norms must have b_rows entries")
        if b_rows:
            sqb_p = &sqb[0]
    out = np.empty((a_rows, b_rows), dtype=np.float64)
    cdef double[:, ::1] out_view = out
    if a_rows == 0 or b_rows == 0:
        return out
    cdef Rows A = _make_rows(ad, ai, ap, a_rows, n_cols, a_sparse)
    cdef Rows B = _make_rows(bd, bi, bp, b_rows, n_cols, b_sparse)
    cdef Kernel k
    k.kind = kind
    k.gamma = gamma
    k.coef0 = coef0
    k.degree = degree
    cdef double* buf = <double*>calloc(max(n_cols, 1), sizeof(double))
    if buf == NULL:
        raise MemoryError("kernel_block: cannot allocate %d doubles" % n_cols)
    with nogil:
        _block(&k, &A, sqa_p, &B, sqb_p, buf, &out_view[0, 0])
    free(buf)
    return out


def row_sq_norms(*, data, indices, indptr, Py_ssize_t n_rows, Py_ssize_t n_cols, bint sparse):
    """Squared Euclidean norm of every row, shape (n_rows,)."""
    cdef const double[::1] d = np.ascontiguousarray(data, dtype=np.float64)
    cdef const int[::1] ind = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const int[::1] ptr = np.ascontiguousarray(indptr, dtype=np.int32)
    if sparse and ptr.shape[0] != n_rows + 1:
        raise ValueError("indptr must have n_rows + 1 entries")
    if not sparse and d.shape[0] != n_rows * n_cols:
        raise ValueError("dense data must hold n_rows * n_cols values")
    out = np.zeros(n_rows, dtype=np.float64)
    cdef double[::1] o = out
    cdef Rows R = _make_rows(d, ind, ptr, n_rows, n_cols, sparse)
    cdef Py_ssize_t i, m, nnz
    cdef const double* v
    cdef const int* idx
    cdef double s
    with nogil:
        for i in range(n_rows):
            nnz = rows_get(&R, i, &v, &idx)
            s = 0.0
            for m in range(nnz):
                s += v[m] * v[m]                # (X[i] ** 2).sum()
            o[i] = s
    return out
