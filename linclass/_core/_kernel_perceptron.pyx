# The kernel (dual) perceptron, multi-class (Freund & Schapire, 1999; Crammer
# & Singer, 2003, the "max" update): the scores are F(x, c) = sum_s a[s, c]
# k(x_s, x); on a mistake on example i (true class y, best other class p, a
# mistake also when F(x_i, y) == F(x_i, p)) a[i, y] += 1 and a[i, p] -= 1.
#
# The scores of ALL training examples are kept up to date: a mistake on i adds
# the kernel column k(x_i, .) to F[:, y] and subtracts it from F[:, p], so a
# visit costs O(n_classes) and a mistake O(n) with the column from the LRU
# cache of _kernel_rows.pxd (the same cache as the SMO solver).  With a budget
# on the number of support vectors, the oldest support vector is removed when a
# new one would exceed it (Dekel, Shalev-Shwartz & Singer, 2008, the Forgetron
# without its shrinking step).  Averaging keeps the running sum of the dual
# coefficients with the lazy time-stamp trick (an averaged-perceptron
# approximation of Freund & Schapire's voted perceptron).

from libc.stdlib cimport calloc, free, malloc

from ._kernel_rows cimport (Cache, CacheHead, Kernel, cache_free, cache_get_data,
                            cache_init, kernel_fill)
from ._random cimport Rng, rng_seed, rng_shuffle

import numpy as np

# A CSR matrix with no stored entries still needs a non-NULL `indices`: the kernels
# tell a CSR row from a dense one by it (a NULL would send them into dense reads).
cdef int _NO_INDEX[1]


cdef struct Perceptron:
    int n
    int n_classes
    Kernel kernel
    Cache cache
    int* all_rows          # (n,) 0..n-1
    double* kbuf           # (n,)
    double* F              # (n, n_classes) current scores of the training examples
    double* alpha          # (n, n_classes)
    double* acc            # (n, n_classes) running sums for averaging, or NULL
    long long* last        # (n,) step of the last change of alpha[i], or NULL
    int* fifo              # (n,) support vectors in order of arrival (ring buffer)
    int fifo_start
    int fifo_len
    char* is_sv            # (n,)


cdef float* get_column(Perceptron* p, int i) noexcept nogil:
    """k(x_i, x_j) for every j (cached)."""
    cdef float* data
    cdef int start = cache_get_data(&p.cache, i, &data, p.n)
    cdef int j
    if start < 0:
        return NULL
    if start < p.n:
        kernel_fill(&p.kernel, i, p.all_rows + start, p.n - start, p.kbuf)
        for j in range(start, p.n):
            data[j] = <float>p.kbuf[j - start]
    return data


cdef inline void settle_average(Perceptron* p, int i, long long step) noexcept nogil:
    """acc[i] += alpha[i] * (steps alpha[i] was in effect)"""
    cdef int c
    if p.acc == NULL:
        return
    for c in range(p.n_classes):
        p.acc[i * p.n_classes + c] += p.alpha[i * p.n_classes + c] * (step - p.last[i])
    p.last[i] = step


cdef int remove_oldest(Perceptron* p) noexcept nogil:
    cdef int s = p.fifo[p.fifo_start]
    cdef int c, j
    cdef double a
    cdef float* col = get_column(p, s)
    if col == NULL:
        return -1
    p.fifo_start = (p.fifo_start + 1) % p.n
    p.fifo_len -= 1
    p.is_sv[s] = 0
    for c in range(p.n_classes):
        a = p.alpha[s * p.n_classes + c]
        if a != 0:
            for j in range(p.n):
                p.F[j * p.n_classes + c] -= a * col[j]      # F[:, c] -= a[s, c] K[s, :]
        p.alpha[s * p.n_classes + c] = 0.0
        if p.acc != NULL:
            p.acc[s * p.n_classes + c] = 0.0
    return 0


cdef int run_epochs(Perceptron* p, const int* codes, int n_epochs, bint shuffle,
                    Rng* rng, long long budget, int* order, long long* mistakes) noexcept nogil:
    cdef int epoch, t, i, y, c, best, j
    cdef double best_score
    cdef long long step = 0
    cdef float* col
    cdef int nc = p.n_classes
    for epoch in range(n_epochs):
        if shuffle:
            rng_shuffle(rng, order, p.n)
        mistakes[epoch] = 0
        for t in range(p.n):
            step += 1
            i = order[t]
            y = codes[i]
            best = -1
            best_score = 0.0
            for c in range(nc):                 # best other class
                if c != y and (best < 0 or p.F[i * nc + c] > best_score):
                    best = c
                    best_score = p.F[i * nc + c]
            if p.F[i * nc + y] > best_score:
                continue
            mistakes[epoch] += 1
            col = get_column(p, i)
            if col == NULL:
                return -1
            settle_average(p, i, step)
            p.alpha[i * nc + y] += 1.0
            p.alpha[i * nc + best] -= 1.0
            for j in range(p.n):                # F[:, y] += K[i, :]; F[:, best] -= K[i, :]
                p.F[j * nc + y] += col[j]
                p.F[j * nc + best] -= col[j]
            if not p.is_sv[i]:
                p.is_sv[i] = 1
                p.fifo[(p.fifo_start + p.fifo_len) % p.n] = i
                p.fifo_len += 1
                if budget > 0 and p.fifo_len > budget:
                    if remove_oldest(p) < 0:
                        return -1
    if p.acc != NULL:
        for i in range(p.n):
            if p.is_sv[i]:
                settle_average(p, i, step + 1)
    return 0


def kernel_perceptron_fit(*, data, indices, indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                          bint sparse, sq_norms, codes, int n_classes, int kind, double gamma,
                          double coef0, int degree, int n_epochs, bint shuffle,
                          unsigned long long seed, long long budget, bint average,
                          double cache_bytes):
    """Train the multi-class kernel perceptron on all rows of X.

    Returns ``(alpha, alpha_average or None, mistakes_per_epoch)``; alpha has
    shape (n_rows, n_classes), the average is over all ``n_epochs * n_rows``
    steps.  ``budget`` <= 0: no budget.
    """
    cdef const double[::1] d = np.ascontiguousarray(data, dtype=np.float64)
    cdef const int[::1] ind = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const int[::1] ptr = np.ascontiguousarray(indptr, dtype=np.int32)
    cdef const int[::1] code_view = np.ascontiguousarray(codes, dtype=np.int32)
    cdef const double[::1] sq_view
    cdef int n = n_rows, i
    if n < 1 or n_classes < 2 or n_epochs < 1:
        raise ValueError("need n_rows >= 1, n_classes >= 2, n_epochs >= 1")
    if code_view.shape[0] != n:
        raise ValueError("codes must have n_rows entries")
    if np.any(np.asarray(code_view) < 0) or np.any(np.asarray(code_view) >= n_classes):
        raise ValueError("codes must lie in [0, n_classes)")
    if sparse and ptr.shape[0] != n_rows + 1:
        raise ValueError("indptr must have n_rows + 1 entries")
    if not sparse and d.shape[0] != n_rows * n_cols:
        raise ValueError("dense data must hold n_rows * n_cols values")
    if kind == 4 and n_cols != n_rows:
        raise ValueError("a precomputed kernel needs a square Gram matrix")
    if kind == 2 and sq_norms is None:
        raise ValueError("the RBF kernel needs sq_norms")
    if cache_bytes <= 0:
        raise ValueError("cache_bytes must be > 0")
    cdef Perceptron p
    p.n = n
    p.n_classes = n_classes
    p.kernel.kind = kind
    p.kernel.gamma = gamma
    p.kernel.coef0 = coef0
    p.kernel.degree = degree
    p.kernel.X.data = &d[0] if d.shape[0] else NULL
    p.kernel.X.indices = (&ind[0] if ind.shape[0] else &_NO_INDEX[0]) if sparse else NULL
    p.kernel.X.indptr = &ptr[0] if sparse else NULL
    p.kernel.X.n_rows = n_rows
    p.kernel.X.n_cols = n_cols
    p.kernel.sq_norms = NULL
    if sq_norms is not None:
        sq_view = np.ascontiguousarray(sq_norms, dtype=np.float64)
        if sq_view.shape[0] != n_rows:
            raise ValueError("sq_norms must have n_rows entries")
        p.kernel.sq_norms = &sq_view[0]
    alpha = np.zeros((n, n_classes), dtype=np.float64)
    acc = np.zeros((n, n_classes), dtype=np.float64) if average else None
    F = np.zeros((n, n_classes), dtype=np.float64)
    mistakes = np.zeros(n_epochs, dtype=np.int64)
    order_arr = np.arange(n, dtype=np.int32)
    cdef double[:, ::1] alpha_view = alpha
    cdef double[:, ::1] F_view = F
    cdef double[:, ::1] acc_view
    cdef long long[::1] mistakes_view = mistakes
    cdef int[::1] order_view = order_arr
    p.alpha = &alpha_view[0, 0]
    p.F = &F_view[0, 0]
    p.acc = NULL
    p.last = NULL
    if average:
        acc_view = acc
        p.acc = &acc_view[0, 0]
    p.kernel.dense_buf = <double*>calloc(max(n_cols, 1), sizeof(double)) if sparse else NULL
    p.all_rows = <int*>malloc(n * sizeof(int))
    p.kbuf = <double*>malloc(n * sizeof(double))
    p.fifo = <int*>malloc(n * sizeof(int))
    p.is_sv = <char*>calloc(n, sizeof(char))
    if average:
        p.last = <long long*>calloc(n, sizeof(long long))
    cdef CacheHead* heads = <CacheHead*>calloc(n, sizeof(CacheHead))
    p.cache.head = NULL
    p.fifo_start = 0
    p.fifo_len = 0
    cdef Rng rng
    cdef int status = 0
    try:
        if (p.all_rows == NULL or p.kbuf == NULL or p.fifo == NULL or p.is_sv == NULL
                or heads == NULL or (average and p.last == NULL)
                or (sparse and p.kernel.dense_buf == NULL)):
            raise MemoryError("kernel perceptron: cannot allocate arrays for %d samples" % n)
        with nogil:
            cache_init(&p.cache, n, heads, <long long>cache_bytes)
            for i in range(n):
                p.all_rows[i] = i
            rng_seed(&rng, seed)
            status = run_epochs(&p, &code_view[0], n_epochs, shuffle, &rng, budget,
                                &order_view[0], &mistakes_view[0])
    finally:
        cache_free(&p.cache)
        free(heads)
        free(p.kernel.dense_buf)
        free(p.all_rows)
        free(p.kbuf)
        free(p.fifo)
        free(p.is_sv)
        free(p.last)
    if status < 0:
        raise MemoryError("kernel perceptron: out of memory while filling the kernel cache")
    if average:
        acc /= float(n_epochs) * n
    return alpha, acc, mistakes
