# Build a `Rows` view (see _rows.pxd) from the arrays the Python layer hands
# over: for CSR, (data, indices, indptr); for dense, the row-major ravelled
# matrix in `data` and 1-element placeholders for `indices`/`indptr`.  Empty
# arrays must be padded to length 1 by the caller (linclass._margin.kernel_rows
# does it), so that taking `&a[0]` is valid under the bounds-checked build.

from linclass._core._rows cimport Rows


cdef inline Rows rows_from_views(const double[::1] data, const int[::1] indices,
                                 const int[::1] indptr, bint is_sparse,
                                 Py_ssize_t n_rows, Py_ssize_t n_cols) noexcept:
    cdef Rows X
    X.data = &data[0]
    X.indices = &indices[0] if is_sparse else NULL
    X.indptr = &indptr[0] if is_sparse else NULL
    X.n_rows = n_rows
    X.n_cols = n_cols
    return X
