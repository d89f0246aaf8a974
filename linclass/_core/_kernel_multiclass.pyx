"""Dual (kernelised) multi-class structural SVM: the kernel Crammer--Singer SVM
and its generalisation to class descriptions and taxonomies.

Joint kernel ``k((x, y), (x', y')) = K(x, x') G[y, y']`` with ``G = Lambda
Lambda^T`` the kernel between classes (identity for one-hot classes).  Primal
(sum over examples, as liblinear and :class:`MultiClassSVM`):

    P(w) = 1/2 ||w||^2 + sum_i C_i max_y [L[y_i, y] + s_y(x_i) - s_{y_i}(x_i)]

Dual, one simplex block per example (``alpha_i >= 0``, ``sum_y alpha_iy = C_i``),
written with ``beta_ic = C_i [c == y_i] - alpha_ic``:

    D(beta) = -sum_ic beta_ic L[y_i, c] - 1/2 sum_ij K_ij beta_i^T G beta_j

The solution is ``w = sum_ic beta_ic phi(x_i) (x) Lambda(c)`` and the scores
are ``F = K beta G`` (n, n_classes), kept up to date: after a change ``d`` of
block i, ``F += K[:, i] (d G)^T`` in O(n n_classes).  The gradient of ``D``
with respect to ``alpha_ic`` is ``g_ic = L[y_i, c] + F_ic``, so a block is
optimal when every class with ``alpha_ic > 0`` has the largest ``g_ic``.

Each visit of a block solves its sub-problem by pairwise steps (SMO on the
simplex; Crammer & Singer 2001, sec. 6; the pairwise Frank--Wolfe step of
Osokin et al. 2016 with exact line search): mass ``t`` moves from the class
with positive ``alpha`` and the lowest ``g`` to the class with the highest
``g``; ``t = (g_a - g_b) / (K_ii (G_aa + G_bb - 2 G_ab))`` clipped to
``alpha_ib`` (the full mass when the curvature is not positive).  Within the
block ``g_i`` moves by ``K_ii t (G[b] - G[a])`` in O(n_classes), so the scores
of the other examples are updated once per visit.  A block whose violation
``max g - min_{alpha > 0} g`` is at most ``eps`` is skipped in O(n_classes);
``eps`` starts at a tenth of the largest loss and is divided by 10 whenever a
pass changes nothing and the duality gap is still above the tolerance.

Kernel rows: either the whole Gram matrix is given (``solve_dual``:
precomputed, callable and string kernels, whose Gram matrix the Python layer
needs anyway), or row ``i`` of ``K`` is computed when block ``i`` first moves
and kept in the LRU cache of ``_kernel_rows.pxd`` (``solve_dual_rows``:
linear, poly, rbf and sigmoid kernels on the data rows, as LIBSVM's SMO).
Rows of examples that never move are never computed, and memory is bounded
by the cache budget (at least one row).  Rows are kept in double precision
(``F`` and the objectives stay exact), and a row is always computed the same
way, so the result does not depend on the cache size.

Stopping: after each pass the exact primal and dual are computed from ``F``
and ``beta`` in O(n n_classes) (``||w||^2 = sum beta * F``); the fit stops
when ``(P - D) / |P| <= tol``.  ``P - D`` is the sum of the blocks' Frank--Wolfe
gaps ``C_i max_c g_ic - alpha_i . g_i >= 0``, whatever ``K``: for a kernel
that is not positive semi-definite the solver stops at a stationary point.

References
----------
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
kernel-based vector machines. JMLR 2, 2001.
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005.
S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher. Block-coordinate
Frank-Wolfe optimization for structural SVMs. ICML 2013 (kernelised form).
A. Osokin, J.-B. Alayrac, I. Lukasewitz, P. Dokania, S. Lacoste-Julien.
Minding the gaps for block Frank-Wolfe optimization of structured SVMs.
ICML 2016.
"""
from libc.math cimport fabs
from libc.stdlib cimport calloc, free, malloc
from libc.stdint cimport uint64_t

from ._kernel_rows cimport (Cache, CacheHead, Kernel, KERNEL_PRECOMPUTED, KERNEL_RBF,
                            cache_free, cache_get_data, cache_init, kernel_diag, kernel_fill)
from ._random cimport Rng, rng_seed, rng_shuffle

import numpy as np

# A CSR matrix with no stored entries still needs a non-NULL `indices`: the kernels
# tell a CSR row from a dense one by it (a NULL would send them into dense reads).
cdef int _NO_INDEX[1]


cdef Py_ssize_t solve_block(const double[:, ::1] G, const double* loss_row, double* beta_i,
                            double* g, double* d, Py_ssize_t k, Py_ssize_t yi, double Ci,
                            double Kii, double eps, Py_ssize_t max_inner) noexcept nogil:
    """Pairwise steps on block i; d accumulates the change of beta_i.  Returns the steps."""
    cdef Py_ssize_t c, a, b, steps = 0
    cdef double alpha_c, best, worst, q, t, alpha_b
    while steps < max_inner:
        a = 0
        best = g[0]
        for c in range(1, k):
            if g[c] > best:
                best = g[c]
                a = c
        b = k                                   # none yet
        worst = 0.0
        for c in range(k):
            alpha_c = (Ci if c == yi else 0.0) - beta_i[c]
            if alpha_c > 0.0 and c != a and (b == k or g[c] < worst):
                worst = g[c]
                b = c
        if b == k or best - worst <= eps:
            break
        alpha_b = (Ci if b == yi else 0.0) - beta_i[b]
        q = Kii * (G[a, a] + G[b, b] - 2.0 * G[a, b])
        if q > 0.0 and (best - worst) < q * alpha_b:
            t = (best - worst) / q
            beta_i[b] += t
        else:
            t = alpha_b
            beta_i[b] = Ci if b == yi else 0.0  # alpha_ib = 0 exactly
        beta_i[a] -= t
        d[a] -= t
        d[b] += t
        for c in range(k):                      # g_i += K_ii t (G[b] - G[a])
            g[c] += Kii * t * (G[b, c] - G[a, c])
        steps += 1
    return steps


cdef double block_violation(const double* g, const double* beta_i, Py_ssize_t k,
                            Py_ssize_t yi, double Ci) noexcept nogil:
    """max_c g_c - min_{alpha_c > 0} g_c (0 when only the best class has mass)."""
    cdef Py_ssize_t c
    cdef double best = g[0], worst = 0.0, alpha_c
    cdef bint found = False
    for c in range(1, k):
        if g[c] > best:
            best = g[c]
    for c in range(k):
        alpha_c = (Ci if c == yi else 0.0) - beta_i[c]
        if alpha_c > 0.0 and (not found or g[c] < worst):
            worst = g[c]
            found = True
    return best - worst if found else 0.0


cdef void objectives(const double[:, ::1] F, const double[:, ::1] beta, const double[:, ::1] L,
                     const int[::1] y, const double[::1] C, double* primal,
                     double* dual) noexcept nogil:
    """Exact P and D from the scores F = K beta G and beta."""
    cdef Py_ssize_t n = F.shape[0], k = F.shape[1], i, c, yi
    cdef double wnorm = 0.0, lin = 0.0, hinge = 0.0, m, v
    for i in range(n):
        yi = y[i]
        m = 0.0
        for c in range(k):
            wnorm += beta[i, c] * F[i, c]
            lin += beta[i, c] * L[yi, c]
            v = L[yi, c] + F[i, c] - F[i, yi]
            if v > m:
                m = v
        hinge += C[i] * m
    primal[0] = 0.5 * wnorm + hinge
    dual[0] = -lin - 0.5 * wnorm


cdef struct RowSource:
    const double* K          # (n, n) full Gram matrix, or NULL: rows from the cache
    Kernel kernel
    Cache cache
    const int* all_rows      # 0, 1, ..., n - 1
    double shift             # added to every kernel value (the intercept's scale)
    long long rows_computed  # number of kernel rows computed (cache misses)


cdef const double* cached_row(RowSource* src, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Row i of K + shift from the cache, computed if missing; NULL when out of memory.

    The cache of ``_kernel_rows.pxd`` counts in floats: a row of n doubles is
    a column of 2n floats (malloc'd memory is aligned for double), always
    requested and filled whole."""
    cdef float* data
    cdef double* row
    cdef int first = cache_get_data(&src.cache, <int>i, &data, <int>(2 * n))
    cdef Py_ssize_t j
    if first < 0:
        return NULL
    row = <double*>data
    if first < 2 * n:
        kernel_fill(&src.kernel, i, src.all_rows, n, row)
        if src.shift != 0.0:
            for j in range(n):
                row[j] += src.shift
        src.rows_computed += 1
    return row


cdef int run_passes(RowSource* src, const double* diag, const int[::1] y,
                    const double[:, ::1] G, const double[:, ::1] L, const double[::1] C,
                    double[:, ::1] beta, double[:, ::1] F, double tol, Py_ssize_t max_iter,
                    Py_ssize_t max_inner, uint64_t seed, double* g, double* d, double* v,
                    int* order, Py_ssize_t* n_iter, double* primal_out,
                    double* dual_out) noexcept nogil:
    """The passes of the solver; returns 1 converged, 0 not, -1 out of memory."""
    cdef Py_ssize_t n = F.shape[0], k = G.shape[0]
    cdef Rng rng
    cdef Py_ssize_t it = 0, s, i, j, c, e, yi, steps
    cdef double eps = 0.0, primal = 0.0, dual = 0.0, Kij, Kii
    cdef int status = 0
    cdef bint moved
    cdef double* beta_i
    cdef const double* loss_row
    cdef const double* Kd
    rng_seed(&rng, seed)
    for i in range(n):
        order[i] = <int>i
    for c in range(k):                          # eps = 0.1 max L
        for e in range(k):
            if 0.1 * L[c, e] > eps:
                eps = 0.1 * L[c, e]
    while it < max_iter:
        rng_shuffle(&rng, order, n)
        moved = False
        for s in range(n):
            i = order[s]
            yi = y[i]
            Kii = diag[i]
            beta_i = &beta[i, 0]
            loss_row = &L[yi, 0]
            for c in range(k):
                g[c] = loss_row[c] + F[i, c]
            if block_violation(g, beta_i, k, yi, C[i]) <= eps:
                continue
            for c in range(k):
                d[c] = 0.0
            steps = solve_block(G, loss_row, beta_i, g, d, k, yi, C[i], Kii, 0.1 * eps,
                                max_inner)
            if steps == 0:
                continue
            moved = True
            for c in range(k):                  # v = G d (G symmetric)
                v[c] = 0.0
                for e in range(k):
                    v[c] += G[c, e] * d[e]
            if src.K != NULL:
                Kd = src.K + i * n
            else:
                Kd = cached_row(src, i, n)
                if Kd == NULL:
                    status = -1
                    break
            for j in range(n):                  # F += K[:, i] v^T
                Kij = Kd[j]
                if Kij != 0.0:
                    for c in range(k):
                        F[j, c] += Kij * v[c]
        if status < 0:
            break
        it += 1
        objectives(F, beta, L, y, C, &primal, &dual)
        if primal - dual <= tol * fabs(primal) or primal - dual <= 0.0:
            status = 1
            break
        if not moved:
            if eps <= 1e-14:
                break                           # no block moves any more: round-off
            eps *= 0.1
    n_iter[0] = it
    primal_out[0] = primal
    dual_out[0] = dual
    return status


cdef object check_shapes(Py_ssize_t n, const int[::1] y, const double[:, ::1] G,
                         const double[:, ::1] L, const double[::1] C,
                         double[:, ::1] beta, double[:, ::1] F):
    cdef Py_ssize_t k = G.shape[0]
    if y.shape[0] != n or C.shape[0] != n or G.shape[1] != k \
            or L.shape[0] != k or L.shape[1] != k or beta.shape[0] != n \
            or beta.shape[1] != k or F.shape[0] != n or F.shape[1] != k:
        raise ValueError("solve_dual: inconsistent shapes")
    if n == 0 or k == 0:
        raise ValueError("solve_dual: empty problem")
    cdef Py_ssize_t i
    for i in range(n):
        if y[i] < 0 or y[i] >= k:
            raise ValueError("solve_dual: class index out of range")


def solve_dual(const double[:, ::1] K, const int[::1] y, const double[:, ::1] G,
               const double[:, ::1] L, const double[::1] C, double[:, ::1] beta,
               double[:, ::1] F, *, double tol, Py_ssize_t max_iter,
               Py_ssize_t max_inner, uint64_t seed):
    """Solve the dual above in place (``beta`` and ``F = K beta G`` must agree on entry).

    K : (n, n) Gram matrix of the inputs (symmetric); y : (n,) int32 classes in
    ``[0, k)``; G : (k, k) class kernel; L : (k, k) loss; C : (n,) costs > 0;
    beta, F : (n, k) start point and its scores (zeros: the all-correct dual
    point).  Returns ``(n_iter, primal, dual, converged)``.
    """
    cdef Py_ssize_t n = K.shape[0], k = G.shape[0], i
    if K.shape[1] != n:
        raise ValueError("solve_dual: K must be square")
    check_shapes(n, y, G, L, C, beta, F)
    cdef RowSource src
    src.K = &K[0, 0]
    src.rows_computed = 0
    cdef double* g = <double*>malloc(k * sizeof(double))
    cdef double* d = <double*>malloc(k * sizeof(double))
    cdef double* v = <double*>malloc(k * sizeof(double))
    cdef double* diag = <double*>malloc(n * sizeof(double))
    cdef int* order = <int*>malloc(n * sizeof(int))
    cdef Py_ssize_t n_iter = 0
    cdef double primal = 0.0, dual = 0.0
    cdef int status = 0
    try:
        if g == NULL or d == NULL or v == NULL or order == NULL or diag == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                diag[i] = K[i, i]
            status = run_passes(&src, diag, y, G, L, C, beta, F, tol, max_iter, max_inner,
                                seed, g, d, v, order, &n_iter, &primal, &dual)
    finally:
        free(g); free(d); free(v); free(order); free(diag)
    return int(n_iter), float(primal), float(dual), status == 1


def solve_dual_rows(*, data, indices, indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                    bint sparse, sq_norms, int kind, double gamma, double coef0, int degree,
                    double shift, double cache_bytes, const int[::1] y,
                    const double[:, ::1] G, const double[:, ::1] L, const double[::1] C,
                    double[:, ::1] beta, double[:, ::1] F, double tol, Py_ssize_t max_iter,
                    Py_ssize_t max_inner, uint64_t seed):
    """``solve_dual`` with the kernel rows computed on demand and cached.

    data, indices, indptr, n_rows, n_cols, sparse : the training inputs (as
    ``_smo.smo_solve`` takes them; dense: the C-ordered flat values);
    sq_norms : (n_rows,) squared row norms (RBF) or None; kind, gamma, coef0,
    degree : the kernel (codes of ``_kernel_rows.pxd``, not precomputed);
    shift : added to every kernel value; cache_bytes : the cache budget.
    Returns ``(n_iter, primal, dual, converged, rows_computed)``.
    """
    cdef Py_ssize_t n = n_rows, k = G.shape[0], i
    cdef const double[::1] dv = np.ascontiguousarray(data, dtype=np.float64)
    cdef const int[::1] ind = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const int[::1] ptr = np.ascontiguousarray(indptr, dtype=np.int32)
    cdef const double[::1] sq_view
    check_shapes(n, y, G, L, C, beta, F)
    if kind < 0 or kind >= KERNEL_PRECOMPUTED:
        raise ValueError("solve_dual_rows: kernel code %d is not a kernel function" % kind)
    if sparse and ptr.shape[0] != n_rows + 1:
        raise ValueError("indptr must have n_rows + 1 entries")
    if sparse and (ptr[0] != 0 or ptr[n_rows] != dv.shape[0] or ind.shape[0] != dv.shape[0]):
        raise ValueError("inconsistent CSR arrays")
    if not sparse and dv.shape[0] != n_rows * n_cols:
        raise ValueError("dense data must hold n_rows * n_cols values")
    if kind == KERNEL_RBF and sq_norms is None:
        raise ValueError("the RBF kernel needs sq_norms")
    if not cache_bytes > 0:
        raise ValueError("cache_bytes must be > 0")
    if 2 * n >= 2**31 - 1:
        raise ValueError("too many samples for the kernel cache")
    cdef RowSource src
    src.K = NULL
    src.rows_computed = 0
    src.shift = shift
    src.kernel.kind = kind
    src.kernel.gamma = gamma
    src.kernel.coef0 = coef0
    src.kernel.degree = degree
    src.kernel.X.data = &dv[0] if dv.shape[0] else NULL
    src.kernel.X.indices = (&ind[0] if ind.shape[0] else &_NO_INDEX[0]) if sparse else NULL
    src.kernel.X.indptr = &ptr[0] if sparse else NULL
    src.kernel.X.n_rows = n_rows
    src.kernel.X.n_cols = n_cols
    src.kernel.sq_norms = NULL
    if sq_norms is not None:
        sq_view = np.ascontiguousarray(sq_norms, dtype=np.float64)
        if sq_view.shape[0] != n_rows:
            raise ValueError("sq_norms must have n_rows entries")
        src.kernel.sq_norms = &sq_view[0]
    src.cache.head = NULL
    src.kernel.dense_buf = <double*>calloc(max(n_cols, 1), sizeof(double)) if sparse else NULL
    cdef int* all_rows = <int*>malloc(n * sizeof(int))
    src.all_rows = all_rows
    cdef CacheHead* heads = <CacheHead*>calloc(n, sizeof(CacheHead))
    cdef double* g = <double*>malloc(k * sizeof(double))
    cdef double* d = <double*>malloc(k * sizeof(double))
    cdef double* v = <double*>malloc(k * sizeof(double))
    cdef double* diag = <double*>malloc(n * sizeof(double))
    cdef int* order = <int*>malloc(n * sizeof(int))
    cdef Py_ssize_t n_iter = 0
    cdef double primal = 0.0, dual = 0.0
    cdef int status = 0
    try:
        if g == NULL or d == NULL or v == NULL or order == NULL or diag == NULL \
                or all_rows == NULL or heads == NULL \
                or (sparse and src.kernel.dense_buf == NULL):
            raise MemoryError("KernelMultiClassSVM: cannot allocate the solver's arrays "
                              "for %d samples" % n)
        with nogil:
            cache_init(&src.cache, <int>n, heads, <long long>cache_bytes)
            for i in range(n):
                all_rows[i] = <int>i
                diag[i] = kernel_diag(&src.kernel, i) + shift
            status = run_passes(&src, diag, y, G, L, C, beta, F, tol, max_iter, max_inner,
                                seed, g, d, v, order, &n_iter, &primal, &dual)
    finally:
        cache_free(&src.cache)
        free(heads); free(src.kernel.dense_buf); free(all_rows)
        free(g); free(d); free(v); free(order); free(diag)
    if status < 0:
        raise MemoryError("KernelMultiClassSVM: out of memory while filling the kernel cache")
    return int(n_iter), float(primal), float(dual), status == 1, int(src.rows_computed)
