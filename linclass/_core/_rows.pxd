# Row access shared by every kernel that walks a data matrix, dense or CSR.
#
# One accessor for both layouts (the idea of lightning's RowDataset): a row is
# (values, indices, nnz).  For a dense matrix `indices` is NULL and the row's
# values are the n_cols contiguous entries; for CSR `indices` holds the column
# of each stored value.  The kernels below branch once per row, not per entry.

from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS, debug_check_index


cdef struct Rows:
    const double* data      # CSR .data (nnz,) or dense (n_rows * n_cols,)
    const int* indices      # CSR .indices (nnz,) or NULL for dense
    const int* indptr       # CSR .indptr (n_rows + 1,) or NULL for dense
    Py_ssize_t n_rows
    Py_ssize_t n_cols


cdef inline Py_ssize_t rows_get(const Rows* X, Py_ssize_t i,
                                const double** values,
                                const int** indices) noexcept nogil:
    """Point `values`/`indices` at row i; return its number of stored entries.

    The debug build checks i, the row's extent and its column indices."""
    cdef Py_ssize_t start, k
    if LINCLASS_DEBUG_CHECKS:
        debug_check_index(i, X.n_rows, "rows_get: row")
        if X.indptr != NULL:
            debug_check_index(X.indptr[i], X.indptr[i + 1] + 1, "rows_get: indptr[i]")
            for k in range(X.indptr[i], X.indptr[i + 1]):
                debug_check_index(X.indices[k], X.n_cols, "rows_get: column index")
    if X.indptr == NULL:
        values[0] = X.data + i * X.n_cols          # X[i, :]
        indices[0] = NULL
        return X.n_cols
    start = X.indptr[i]
    values[0] = X.data + start                     # X.data[indptr[i]:indptr[i+1]]
    indices[0] = X.indices + start
    return X.indptr[i + 1] - start


cdef inline double row_dot(const double* values, const int* indices,
                           Py_ssize_t nnz, const double* w) noexcept nogil:
    """x_row @ w"""
    cdef double s = 0.0
    cdef Py_ssize_t k
    if indices == NULL:
        for k in range(nnz):
            s += values[k] * w[k]
    else:
        for k in range(nnz):
            s += values[k] * w[indices[k]]
    return s


cdef inline void row_axpy(double alpha, const double* values, const int* indices,
                          Py_ssize_t nnz, double* w) noexcept nogil:
    """w += alpha * x_row"""
    cdef Py_ssize_t k
    if indices == NULL:
        for k in range(nnz):
            w[k] += alpha * values[k]
    else:
        for k in range(nnz):
            w[indices[k]] += alpha * values[k]


cdef inline bint values_all_one(const double* values, Py_ssize_t n) noexcept nogil:
    """Whether values[0:n] are all 1.0 (stops at the first other value)."""
    cdef Py_ssize_t k
    for k in range(n):
        if values[k] != 1.0:
            return False
    return True


cdef inline bint rows_unit_values(const Rows* X) noexcept nogil:
    """Whether X is CSR and every stored value is 1.0 (indicator features,
    e.g. a9a, w8a): such rows can be walked by their column indices alone
    (``1.0 * x == x`` and ``a * 1.0 == a`` exactly: the same bits with a third
    of the memory traffic per entry).  Stops at the first other value."""
    if X.indptr == NULL:
        return False
    return values_all_one(X.data, X.indptr[X.n_rows])


cdef inline void row_axpy_unit(double alpha, const int* indices, Py_ssize_t nnz,
                               double* w) noexcept nogil:
    """`row_axpy` of a CSR row whose stored values are all 1.0 (the same bits)."""
    cdef Py_ssize_t k
    for k in range(nnz):
        w[indices[k]] += alpha


cdef inline double row_dot_split(const double* values, const int* indices,
                                 Py_ssize_t nnz, const double* w) noexcept nogil:
    """x_row @ w with four partial sums: one running sum makes every addition
    wait for the previous one (3-4 cycles each on current x86), four let the
    gathered products of a long sparse row add up in parallel."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t k = 0, n4 = nnz - nnz % 4
    if indices == NULL:
        while k < n4:
            s0 += values[k] * w[k]
            s1 += values[k + 1] * w[k + 1]
            s2 += values[k + 2] * w[k + 2]
            s3 += values[k + 3] * w[k + 3]
            k += 4
        while k < nnz:
            s0 += values[k] * w[k]
            k += 1
    else:
        while k < n4:
            s0 += values[k] * w[indices[k]]
            s1 += values[k + 1] * w[indices[k + 1]]
            s2 += values[k + 2] * w[indices[k + 2]]
            s3 += values[k + 3] * w[indices[k + 3]]
            k += 4
        while k < nnz:
            s0 += values[k] * w[indices[k]]
            k += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double row_dot_split_unit(const int* indices, Py_ssize_t nnz,
                                      const double* w) noexcept nogil:
    """`row_dot_split` of a CSR row whose stored values are all 1.0: the same
    partial sums in the same order, the values not read (the same bits)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t k = 0, n4 = nnz - nnz % 4
    while k < n4:
        s0 += w[indices[k]]
        s1 += w[indices[k + 1]]
        s2 += w[indices[k + 2]]
        s3 += w[indices[k + 3]]
        k += 4
    while k < nnz:
        s0 += w[indices[k]]
        k += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double row_sq_norm(const double* values, Py_ssize_t nnz) noexcept nogil:
    """x_row @ x_row (explicit zeros of a dense row add nothing)"""
    cdef double s = 0.0
    cdef Py_ssize_t k
    for k in range(nnz):
        s += values[k] * values[k]
    return s
