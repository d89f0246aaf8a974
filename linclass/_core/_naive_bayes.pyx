"""Naive Bayes: counting, smoothing and scoring, each in one pass.

Every per-feature table is stored **feature-major**, shape (n_features, K): the
K class entries of feature j are one contiguous row.  Text is Zipf-distributed,
so the rows of the few thousand frequent words, which most stored entries
address, stay in cache together (class-major, each frequent word would take a
cache line in each of the K class rows).  The models expose the tables as
(K, n_features) Fortran-ordered views of these arrays.

* ``count_features``:  ``counts[j, y_i] += w_i x_ij`` over the rows of X (what
  ``onehot(y).T @ X`` computes, without the one-hot matrix);
* ``multinomial_tables`` / ``bernoulli_tables``: smoothed log-probabilities,
  the logarithm taken only where a count is not 0;
* ``sparse_scores``:  ``out[i, :] = sum_j x_ij table[j, :]`` over a CSR row, in
  the stored order of its entries -- the sums scipy's ``csr @ dense`` product
  forms, bit for bit, with the table rows prefetched ahead.

With ``binarize`` a stored value counts as 1.0 when it is ``> threshold`` and
is skipped otherwise (Bernoulli's presence indicators, without a binarised copy
of X; ``w * 1.0 == w`` exactly, so the sums are those of the copy).
The caller (linclass.linear.naive_bayes) validates every array: labels and
column indices are not checked here (the debug build checks them).
"""
from libc.math cimport log

import numpy as np

from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS, debug_check_index
from linclass._core._prefetch cimport prefetch_row
from linclass._core._rows cimport Rows, rows_get


cdef enum:
    # entries ahead whose table rows are prefetched: a stored entry costs only
    # a few ns here, so the shared distance (8) hides too little of a miss;
    # measured on 20NG counts, in one process: counting 8.6 / 7.2 / 5.7 ms and
    # scoring 13.1 / 12.4 / 12.3 ms at 8 / 16 / 32 entries
    PREFETCH_AHEAD = 32


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_PREFETCH_WRITE(p) __builtin_prefetch((const void*)(p), 1, 3)
    #else
    #define LINCLASS_PREFETCH_WRITE(p) ((void)0)
    #endif
    """
    void LINCLASS_PREFETCH_WRITE(const void* p) noexcept nogil


cdef void count_pass(const Rows* X, const int* y, const double* sw, Py_ssize_t K,
                     bint binarize, double threshold, double* counts) noexcept nogil:
    cdef Py_ssize_t i, p, nnz, end, j
    cdef const double* values
    cdef const int* indices
    cdef double w, v
    cdef int c
    end = X.indptr[X.n_rows] if X.indptr != NULL else 0
    for i in range(X.n_rows):
        w = sw[i]
        if w == 0.0:
            continue
        c = y[i]
        if LINCLASS_DEBUG_CHECKS:
            debug_check_index(c, K, "count_features: label")
        nnz = rows_get(X, i, &values, &indices)
        if indices == NULL:                          # dense row: every column
            for j in range(nnz):
                v = values[j]
                if binarize:
                    if v > threshold:
                        counts[j * K + c] += w
                elif v != 0.0:
                    counts[j * K + c] += w * v
            continue
        for p in range(nnz):
            # the target of the entry PREFETCH_AHEAD on (rows in storage order)
            if values + p + PREFETCH_AHEAD < X.data + end:
                LINCLASS_PREFETCH_WRITE(counts + <Py_ssize_t>indices[p + PREFETCH_AHEAD] * K + c)
            v = values[p]
            if binarize:
                if v > threshold:
                    counts[<Py_ssize_t>indices[p] * K + c] += w
            else:
                counts[<Py_ssize_t>indices[p] * K + c] += w * v


def count_features(*, const double[::1] data, const int[::1] indices, const int[::1] indptr,
                   Py_ssize_t n_rows, Py_ssize_t n_cols, bint dense, const int[::1] y,
                   const double[::1] sample_weight, bint binarize, double threshold,
                   double[:, ::1] counts):
    """Add each row of X, times its weight, to column ``y_i`` of the
    feature-major ``counts`` (n_cols, K), in place.  Labels must lie in
    ``0..K-1`` (unchecked)."""
    if n_rows < 1 or n_cols < 1 or counts.shape[0] != n_cols or counts.shape[1] < 1:
        raise ValueError("bad shapes")
    if y.shape[0] != n_rows or sample_weight.shape[0] != n_rows:
        raise ValueError("y and sample_weight need one entry per row")
    if data.shape[0] < 1 or indices.shape[0] < 1:
        raise ValueError("data and indices must hold at least one value")
    if dense and data.shape[0] < n_rows * n_cols:
        raise ValueError("dense data too short")
    if not dense and (indptr.shape[0] != n_rows + 1 or indptr[n_rows] > data.shape[0]
                      or indptr[n_rows] > indices.shape[0]):
        raise ValueError("indptr must have n_rows + 1 entries, within data and indices")
    cdef Rows X
    X.data = &data[0]
    X.indices = NULL if dense else &indices[0]
    X.indptr = NULL if dense else &indptr[0]
    X.n_rows = n_rows
    X.n_cols = n_cols
    with nogil:
        count_pass(&X, &y[0], &sample_weight[0], counts.shape[1], binarize, threshold,
                   &counts[0, 0])


cdef enum:
    # counts below this that are whole numbers take their logarithms from a
    # per-class table (text: 99% of the non-zero counts of 20NG, zero included)
    SMALL_COUNTS = 256


cdef inline Py_ssize_t small_count(double c) noexcept nogil:
    """``c`` as a table index when it is a whole number in [0, SMALL_COUNTS), else -1."""
    cdef Py_ssize_t m
    if c >= 0.0 and c < SMALL_COUNTS:
        m = <Py_ssize_t>c
        if <double>m == c:
            return m
    return -1


def multinomial_tables(const double[:, ::1] counts, double alpha, const double[::1] log_den,
                       double[:, ::1] out):
    """``out[j, k] = log(counts[j, k] + alpha) - log_den[k]`` (feature-major).

    A count that is a whole number below ``SMALL_COUNTS`` (zero included: count
    matrices of text are mostly zeros, and the logarithms dominated fitting)
    takes the value from a table of ``log(m + alpha) - log_den[k]``, computed
    by the same expression, hence the same bits.  ``log`` of the C library,
    which numpy's float64 ``log`` calls on CPUs without AVX-512, so the values
    equal ``np.log`` of the direct form there."""
    cdef Py_ssize_t d = counts.shape[0], K = counts.shape[1], j, k, m
    cdef double c
    if out.shape[0] != d or out.shape[1] != K or log_den.shape[0] != K:
        raise ValueError("multinomial_tables: inconsistent array shapes")
    cdef double[:, ::1] small = np.empty((K, SMALL_COUNTS))
    with nogil:
        for k in range(K):
            for m in range(SMALL_COUNTS):
                small[k, m] = log(<double>m + alpha) - log_den[k]
        for j in range(d):
            for k in range(K):
                c = counts[j, k]
                m = small_count(c)
                out[j, k] = small[k, m] if m >= 0 else log(c + alpha) - log_den[k]


def bernoulli_tables(const double[:, ::1] counts, double alpha, const double[::1] totals,
                     const double[::1] log_den, double[:, ::1] present, double[:, ::1] absent):
    """Smoothed log-probabilities of presence and of absence, feature-major, in
    one pass (small whole counts from per-class tables, as in
    :func:`multinomial_tables`)::

        present[j, k] = log(counts[j, k] + alpha) - log_den[k]
        absent[j, k]  = log(totals[k] - counts[j, k] + alpha) - log_den[k]
    """
    cdef Py_ssize_t d = counts.shape[0], K = counts.shape[1], j, k, m
    cdef double c
    if (present.shape[0] != d or present.shape[1] != K or absent.shape[0] != d
            or absent.shape[1] != K or totals.shape[0] != K or log_den.shape[0] != K):
        raise ValueError("bernoulli_tables: inconsistent array shapes")
    cdef double[:, ::1] small_present = np.empty((K, SMALL_COUNTS))
    cdef double[:, ::1] small_absent = np.empty((K, SMALL_COUNTS))
    with nogil:
        for k in range(K):
            for m in range(SMALL_COUNTS):
                small_present[k, m] = log(<double>m + alpha) - log_den[k]
                small_absent[k, m] = log(totals[k] - <double>m + alpha) - log_den[k]
        for j in range(d):
            for k in range(K):
                c = counts[j, k]
                m = small_count(c)
                if m >= 0:
                    present[j, k] = small_present[k, m]
                    absent[j, k] = small_absent[k, m]
                else:
                    present[j, k] = log(c + alpha) - log_den[k]
                    absent[j, k] = log(totals[k] - c + alpha) - log_den[k]


cdef inline void add_row(double* acc, double v, const double* row, const double* minus,
                         Py_ssize_t K, bint unit) noexcept nogil:
    """acc += v * (row - minus) (``minus`` may be NULL; ``unit``: v is 1.0)."""
    cdef Py_ssize_t k
    if minus == NULL:
        if unit:
            for k in range(K):
                acc[k] += row[k]                     # 1.0 * row[k] == row[k]
        else:
            for k in range(K):
                acc[k] += v * row[k]
    elif unit:
        for k in range(K):
            acc[k] += row[k] - minus[k]
    else:
        for k in range(K):
            acc[k] += v * (row[k] - minus[k])


def sparse_scores(*, const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  Py_ssize_t n_rows, const double[:, ::1] table, const double[:, ::1] minus,
                  bint binarize, double threshold, double[:, ::1] out):
    """``out[i, :] = sum_j x_ij (table[j, :] - minus[j, :])`` for the CSR rows of
    X (``minus`` may be None; ``out`` is overwritten), adding the entries of a
    row in their stored order: the bits of scipy's ``X @ (table - minus)``.
    Column indices must lie in ``0..table.shape[0]-1`` (unchecked)."""
    cdef Py_ssize_t K = table.shape[1], d = table.shape[0], i, p, k, end, j
    cdef const double* T = &table[0, 0]
    cdef const double* M = NULL
    cdef const double* mrow
    cdef double* acc
    cdef double v
    if n_rows < 1 or out.shape[0] != n_rows or out.shape[1] != K or K < 1 or d < 1:
        raise ValueError("sparse_scores: inconsistent array shapes")
    if minus is not None:
        if minus.shape[0] != d or minus.shape[1] != K:
            raise ValueError("sparse_scores: minus must have the table's shape")
        M = &minus[0, 0]
    if indptr.shape[0] != n_rows + 1 or data.shape[0] < 1 or indices.shape[0] < 1:
        raise ValueError("sparse_scores: indptr must have n_rows + 1 entries")
    end = indptr[n_rows]
    if end > data.shape[0] or end > indices.shape[0]:
        raise ValueError("sparse_scores: indptr runs past data or indices")
    with nogil:
        for i in range(n_rows):
            acc = &out[i, 0]
            for k in range(K):
                acc[k] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                if p + PREFETCH_AHEAD < end:
                    j = indices[p + PREFETCH_AHEAD]
                    prefetch_row(T + j * K, K)
                    if M != NULL:
                        prefetch_row(M + j * K, K)
                j = indices[p]
                if LINCLASS_DEBUG_CHECKS:
                    debug_check_index(j, d, "sparse_scores: column index")
                v = data[p]
                mrow = NULL
                if M != NULL:
                    mrow = M + j * K
                if not binarize:
                    add_row(acc, v, T + j * K, mrow, K, False)
                elif v > threshold:
                    add_row(acc, 1.0, T + j * K, mrow, K, True)
