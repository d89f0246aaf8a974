"""One-pass structural checks of sparse input, run on every CSR matrix that
enters linclass (see ``linclass._validation.check_array``).

scipy builds a ``csr_matrix`` from ``(data, indices, indptr)`` without looking
at the values of ``indices`` and ``indptr``; kernels index through them without
bounds checks.  :func:`csr_structure` reads both arrays once, in C, and reports
the first violation as a status code that the Python layer turns into a
``ValueError`` naming the problem.
"""

# status codes (kept in sync with linclass._validation._CSR_PROBLEMS)
cdef enum:
    CSR_OK = 0
    CSR_BAD_START = 1         # indptr[0] != 0
    CSR_DECREASING = 2        # indptr[i + 1] < indptr[i]
    CSR_BAD_END = 3           # indptr[i] > nnz (past the stored values)
    CSR_INDEX_RANGE = 4       # indices[k] < 0 or >= n_cols


cdef int _csr_structure(const int* indptr, const int* indices, Py_ssize_t n_rows,
                        Py_ssize_t n_cols, Py_ssize_t nnz, Py_ssize_t* where,
                        bint* canonical) noexcept nogil:
    """Check indptr/indices of a CSR matrix; on failure `where[0]` is the
    position in `indptr` (indptr problems) or in `indices` (index problems).
    Entries of `indices` past indptr[n_rows] (unused capacity) are not read.
    `canonical[0]`: every row's indices strictly increasing (sorted, no
    duplicates)."""
    cdef Py_ssize_t i, k, start, end
    cdef int col, prev
    canonical[0] = True
    if indptr[0] != 0:
        where[0] = 0
        return CSR_BAD_START
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        if end < start:
            where[0] = i
            return CSR_DECREASING
        if end > nnz:
            where[0] = i + 1
            return CSR_BAD_END
        prev = -1
        for k in range(start, end):
            col = indices[k]
            if col < 0 or col >= n_cols:
                where[0] = k
                return CSR_INDEX_RANGE
            if col <= prev:
                canonical[0] = False
            prev = col
    return CSR_OK


def csr_structure(const int[::1] indptr, const int[::1] indices, Py_ssize_t n_rows,
                  Py_ssize_t n_cols):
    """``(status, where, canonical)`` for int32 ``indptr`` (n_rows + 1,) and
    ``indices`` (nnz,); ``status`` 0 means valid (see the codes above)."""
    cdef Py_ssize_t where = 0
    cdef bint canonical = True
    cdef int status
    cdef int zero = 0
    if n_rows < 0 or n_cols < 0:
        raise ValueError("negative shape")
    if indptr.shape[0] != n_rows + 1:
        raise ValueError("indptr has %d entries, expected n_rows + 1 = %d"
                         % (indptr.shape[0], n_rows + 1))
    cdef Py_ssize_t nnz = indices.shape[0]
    cdef const int* ind_ptr = &indices[0] if nnz > 0 else &zero
    with nogil:
        status = _csr_structure(&indptr[0], ind_ptr, n_rows, n_cols, nnz,
                                &where, &canonical)
    return status, where, bool(canonical)


from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS
from linclass._core._rows cimport values_all_one

# True in the debug build (LINCLASS_DEBUG_BUILD=1), whose kernels check the
# indices they follow through raw pointers (see _debug.pxd and setup.py).
DEBUG_BUILD = bool(LINCLASS_DEBUG_CHECKS)


def csr_has_duplicates(const int[::1] indptr, const int[::1] indices, Py_ssize_t n_rows,
                       Py_ssize_t n_cols):
    """True when some row of a structurally valid CSR matrix (checked by
    :func:`csr_structure` first) stores a column twice, in any order.

    One pass over the stored indices with a marker per column (the last row
    that stored it), O(nnz + n_cols): the check behind
    ``check_array(accept_unsorted=True)``, which keeps unsorted rows as they
    are but must still sum duplicates (a kernel's squared row norm counts
    them twice otherwise)."""
    if n_rows < 0 or n_cols < 0 or indptr.shape[0] != n_rows + 1:
        raise ValueError("csr_has_duplicates: inconsistent shapes")
    cdef Py_ssize_t nnz = indices.shape[0]
    if n_rows and indptr[n_rows] > nnz:
        raise ValueError("csr_has_duplicates: indptr points past the stored indices")
    if nnz == 0 or n_rows == 0:
        return False
    import numpy as np
    cdef int[::1] mark = np.zeros(max(n_cols, 1), dtype=np.int32)
    cdef Py_ssize_t i, k
    cdef int col, row_tag
    cdef bint found = False
    with nogil:
        for i in range(n_rows):
            row_tag = <int>(i + 1)
            for k in range(indptr[i], indptr[i + 1]):
                col = indices[k]
                if mark[col] == row_tag:
                    found = True
                    break
                mark[col] = row_tag
            if found:
                break
    return bool(found)


def csr_unit_values(data, bint is_sparse):
    """Whether ``data`` holds the stored values of a sparse matrix that are all
    1.0 (a binary, indicator-feature matrix such as a9a's): kernels can then
    read only the column indices (SGD's epochs, the binary logistic passes), the
    same bits with a third of the memory traffic per entry.  Stops at the first
    other value, so other inputs pay almost nothing for the check."""
    cdef const double[::1] values
    if not is_sparse:
        return False
    values = data
    return values.shape[0] == 0 or values_all_one(&values[0], values.shape[0])
