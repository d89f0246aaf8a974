"""Ranking SVM kernels: the pairwise hinge loss of all pairs of every query in
O(n log n) by sorting, and dual coordinate descent over explicit pairs.

Pairwise objective (scores s = X @ w, documents grouped by query):

    L(s) = sum_q sum_{i, j in q, y_i > y_j} p_ij * loss(1 - (s_i - s_j)),
    p_ij = (w_i + w_j) / 2,     loss(r) = max(0, r)  or  max(0, r)**2

with w_i the sample weight of document i (a constant weight inside a query is
a query weight).  Sorting-based evaluation (Joachims 2006, "Training linear
SVMs in linear time", sec. 4; Chapelle & Keerthi 2010, "Efficient algorithms
for ranking with SVMs", sec. 3; Airola, Pahikkala & Salakoski 2011 for graded
labels): with a_i = s_i - 1 and b_j = s_j the pair (i, j) is active (r_ij =
b_j - a_i > 0) iff b_j > a_i.  Sorting the query once by s, a sweep in
decreasing s adds documents j (with b_j > a_i) into a Fenwick tree indexed by
grade rank, and the prefix of grades below y_i gives, for document i in its
role as the higher one, the count and the sums of w_j, b_j, w_j b_j, b_j**2,
w_j b_j**2 over its active pairs -- enough for the loss and its derivative.
A second sweep in increasing s does the same for documents in their role as
the lower one.  Cost O(n log n + n log G) per query, G grades.

Layout contract (checked by linclass.ranking, nothing is checked here):
documents of query q are rows query_ptr[q]:query_ptr[q+1]; grade_rank holds
dense ranks 0..G_q-1 of the grades inside each query (G_q <= max_grades);
scores, weights are float64 arrays of n_samples entries.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy
from linclass._core._random cimport Rng, rng_seed, rng_shuffle

cdef enum:
    N_CHANNELS = 6


# ------------------------------------------------------------- sorting --

cdef void argsort_merge(const double* key, int* idx, int* tmp, Py_ssize_t n) noexcept nogil:
    """Sort idx[0:n] by key[idx] ascending, stable (idx = np.argsort(key, kind='stable'))."""
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, k
    cdef int* src = idx
    cdef int* dst = tmp
    cdef int* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width
            if mid > n:
                mid = n
            hi = lo + 2 * width
            if hi > n:
                hi = n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if key[src[j]] < key[src[i]]:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != idx:
        for i in range(n):
            idx[i] = src[i]


# ------------------------------------------------------------- Fenwick tree --
# tree[(r + 1) * N_CHANNELS + c], r = grade rank 0..G-1: N_CHANNELS running sums.

cdef inline void fenwick_clear(double* tree, Py_ssize_t G) noexcept nogil:
    cdef Py_ssize_t k
    for k in range((G + 1) * N_CHANNELS):
        tree[k] = 0.0


cdef inline void fenwick_add(double* tree, Py_ssize_t G, Py_ssize_t rank,
                             const double* values) noexcept nogil:
    """sums[rank, :] += values"""
    cdef Py_ssize_t r = rank + 1, c
    while r <= G:
        for c in range(N_CHANNELS):
            tree[r * N_CHANNELS + c] += values[c]
        r += r & (-r)


cdef inline void fenwick_prefix(const double* tree, Py_ssize_t count,
                                double* out) noexcept nogil:
    """out = sums[:count, :].sum(axis=0)  (ranks strictly below `count`)"""
    cdef Py_ssize_t r = count, c
    for c in range(N_CHANNELS):
        out[c] = 0.0
    while r > 0:
        for c in range(N_CHANNELS):
            out[c] += tree[r * N_CHANNELS + c]
        r -= r & (-r)


# ------------------------------------------------------------- per-query sweeps --

cdef double query_loss_grad(Py_ssize_t start, Py_ssize_t n, const double* scores,
                            const int* grade_rank, const double* weights, bint squared,
                            double* grad, int* order, int* tmp, double* a, double* b,
                            double* tree) noexcept nogil:
    """Loss of the query's pairs; grad[start:start+n] += dL/ds; order = argsort(s)."""
    cdef Py_ssize_t k, ptr, G = 0, i, j, c
    cdef double shift, loss = 0.0, wi, ai, bj, pair_sum
    cdef double add[N_CHANNELS]
    cdef double S[N_CHANNELS]
    cdef double T[N_CHANNELS]
    if n < 2:
        if n == 1:
            order[0] = <int>start
        return 0.0
    for k in range(n):
        tmp[k] = <int>(start + k)
        order[k] = <int>(start + k)
        if grade_rank[start + k] + 1 > G:
            G = grade_rank[start + k] + 1
    argsort_merge(scores, order, tmp, n)          # order = start + argsort(s_q)
    shift = scores[order[n // 2]]                 # centre: r = b_j - a_i is shift-free
    for k in range(n):
        i = order[k]
        a[k] = (scores[i] - shift) - 1.0          # a = s - 1 (sorted order)
        b[k] = scores[i] - shift                  # b = s
    if G < 2:
        return 0.0

    # sweep 1: documents as the higher one, decreasing s; j enters when b_j > a_i
    fenwick_clear(tree, G)
    ptr = n - 1
    for k in range(n - 1, -1, -1):
        i = order[k]
        ai = a[k]
        while ptr >= 0 and b[ptr] > ai:
            j = order[ptr]
            bj = b[ptr]
            add[0] = 1.0
            add[1] = weights[j]
            add[2] = bj
            add[3] = weights[j] * bj
            add[4] = bj * bj
            add[5] = weights[j] * bj * bj
            fenwick_add(tree, G, grade_rank[j], add)
            ptr -= 1
        fenwick_prefix(tree, grade_rank[i], S)    # active j of lower grade
        if S[0] == 0.0:
            continue
        wi = weights[i]
        # sum_j (w_i + w_j) (b_j - a_i) over active j
        pair_sum = wi * (S[2] - ai * S[0]) + (S[3] - ai * S[1])
        if squared:
            # sum_j p_ij (b_j - a_i)^2 ; d/ds_i = -2 sum_j p_ij (b_j - a_i)
            loss += 0.5 * (wi * (S[4] - 2.0 * ai * S[2] + ai * ai * S[0])
                           + (S[5] - 2.0 * ai * S[3] + ai * ai * S[1]))
            grad[i] -= pair_sum
        else:
            loss += 0.5 * pair_sum
            grad[i] -= 0.5 * (wi * S[0] + S[1])   # -sum_j p_ij

    # sweep 2: documents as the lower one, increasing s; i enters when a_i < b_j
    fenwick_clear(tree, G)
    ptr = 0
    for k in range(n):
        j = order[k]
        bj = b[k]
        while ptr < n and a[ptr] < bj:
            i = order[ptr]
            ai = a[ptr]
            add[0] = 1.0
            add[1] = weights[i]
            add[2] = ai
            add[3] = weights[i] * ai
            add[4] = 0.0
            add[5] = 0.0
            fenwick_add(tree, G, grade_rank[i], add)
            ptr += 1
        fenwick_prefix(tree, G, T)                # all entered
        fenwick_prefix(tree, grade_rank[j] + 1, S)  # grades <= y_j
        for c in range(4):
            T[c] -= S[c]                          # grades > y_j
        if T[0] <= 0.0:
            continue
        wi = weights[j]
        if squared:
            # d/ds_j = 2 sum_i p_ij (b_j - a_i) = sum_i (w_i + w_j)(b_j - a_i)
            grad[j] += wi * (bj * T[0] - T[2]) + (bj * T[1] - T[3])
        else:
            grad[j] += 0.5 * (wi * T[0] + T[1])   # +sum_i p_ij
    return loss


cdef void query_hessian_product(Py_ssize_t start, Py_ssize_t n, const double* scores,
                                const int* grade_rank, const double* weights,
                                const int* order, const double* z, double* out,
                                double* a, double* b, double* tree) noexcept nogil:
    """out[q] = H_q z[q], H = sum_active 2 p_ij (e_i - e_j)(e_i - e_j)^T (squared hinge)."""
    cdef Py_ssize_t k, ptr, G = 0, i, j, c
    cdef double shift, wi
    cdef double add[N_CHANNELS]
    cdef double S[N_CHANNELS]
    cdef double T[N_CHANNELS]
    if n < 2:
        return
    for k in range(n):
        if grade_rank[start + k] + 1 > G:
            G = grade_rank[start + k] + 1
    if G < 2:
        return
    shift = scores[order[n // 2]]
    for k in range(n):
        i = order[k]
        a[k] = (scores[i] - shift) - 1.0
        b[k] = scores[i] - shift
    add[4] = 0.0
    add[5] = 0.0
    fenwick_clear(tree, G)
    ptr = n - 1
    for k in range(n - 1, -1, -1):
        i = order[k]
        while ptr >= 0 and b[ptr] > a[k]:
            j = order[ptr]
            add[0] = 1.0
            add[1] = weights[j]
            add[2] = z[j]
            add[3] = weights[j] * z[j]
            fenwick_add(tree, G, grade_rank[j], add)
            ptr -= 1
        fenwick_prefix(tree, grade_rank[i], S)
        if S[0] == 0.0:
            continue
        wi = weights[i]
        # sum_j 2 p_ij (z_i - z_j) = sum_j (w_i + w_j)(z_i - z_j)
        out[i] += wi * (z[i] * S[0] - S[2]) + (z[i] * S[1] - S[3])
    fenwick_clear(tree, G)
    ptr = 0
    for k in range(n):
        j = order[k]
        while ptr < n and a[ptr] < b[k]:
            i = order[ptr]
            add[0] = 1.0
            add[1] = weights[i]
            add[2] = z[i]
            add[3] = weights[i] * z[i]
            fenwick_add(tree, G, grade_rank[i], add)
            ptr += 1
        fenwick_prefix(tree, G, T)
        fenwick_prefix(tree, grade_rank[j] + 1, S)
        for c in range(4):
            T[c] -= S[c]
        if T[0] <= 0.0:
            continue
        wi = weights[j]
        out[j] += wi * (z[j] * T[0] - T[2]) + (z[j] * T[1] - T[3])


# ------------------------------------------------------------- entry points --

def _check_layout(scores, grade_rank, weights, query_ptr, Py_ssize_t max_grades):
    n = scores.shape[0]
    if grade_rank.shape[0] != n or weights.shape[0] != n:
        raise ValueError("scores, grade_rank and weights must have the same length")
    if query_ptr.shape[0] < 1 or query_ptr[0] != 0 or query_ptr[query_ptr.shape[0] - 1] != n:
        raise ValueError("query_ptr must start at 0 and end at n_samples")
    if max_grades < 1:
        raise ValueError("max_grades must be >= 1")


def pairwise_loss_grad(*, const double[::1] scores, const int[::1] grade_rank,
                       const double[::1] weights, const long long[::1] query_ptr,
                       Py_ssize_t max_grades, Py_ssize_t max_query_size, bint squared):
    """Pairwise (squared) hinge loss of all queries, its gradient w.r.t. the scores,
    and the per-query sort order of the scores.

    Returns ``(loss, grad, order)``: ``loss = sum_pairs p_ij loss(1 - s_i + s_j)``,
    ``grad = dloss/dscores`` (a subgradient for the hinge), ``order[q]`` the
    indices of query q sorted by increasing score (input of
    :func:`pairwise_hessian_product`).
    """
    _check_layout(scores, grade_rank, weights, query_ptr, max_grades)
    cdef Py_ssize_t n = scores.shape[0], n_queries = query_ptr.shape[0] - 1, q
    grad_arr = np.zeros(n)
    order_arr = np.zeros(max(n, 1), dtype=np.int32)
    cdef double[::1] grad = grad_arr
    cdef int[::1] order = order_arr
    cdef double loss = 0.0
    cdef int* tmp = NULL
    cdef double* ab = NULL
    cdef double* tree = NULL
    cdef Py_ssize_t m = max_query_size if max_query_size > 1 else 1
    if n == 0:
        return 0.0, grad_arr, order_arr[:0]
    with nogil:
        tmp = <int*>malloc(m * sizeof(int))
        ab = <double*>malloc(2 * m * sizeof(double))
        tree = <double*>malloc((max_grades + 1) * N_CHANNELS * sizeof(double))
        if tmp != NULL and ab != NULL and tree != NULL:
            for q in range(n_queries):
                loss += query_loss_grad(query_ptr[q], query_ptr[q + 1] - query_ptr[q],
                                        &scores[0], &grade_rank[0], &weights[0], squared,
                                        &grad[0], &order[query_ptr[q]], tmp, ab, ab + m, tree)
    ok = tmp != NULL and ab != NULL and tree != NULL
    free(tmp)
    free(ab)
    free(tree)
    if not ok:
        raise MemoryError("cannot allocate the ranking workspace")
    return loss, grad_arr, order_arr


def pairwise_hessian_product(*, const double[::1] scores, const int[::1] grade_rank,
                             const double[::1] weights, const long long[::1] query_ptr,
                             const int[::1] order, const double[::1] z,
                             Py_ssize_t max_grades, Py_ssize_t max_query_size):
    """H z for the generalized Hessian of the squared pairwise hinge at ``scores``
    (``order`` as returned by :func:`pairwise_loss_grad` for the same scores)."""
    _check_layout(scores, grade_rank, weights, query_ptr, max_grades)
    cdef Py_ssize_t n = scores.shape[0], n_queries = query_ptr.shape[0] - 1, q
    if z.shape[0] != n or order.shape[0] != n:
        raise ValueError("z and order must have one entry per sample")
    out_arr = np.zeros(n)
    cdef double[::1] out = out_arr
    cdef double* ab = NULL
    cdef double* tree = NULL
    cdef Py_ssize_t m = max_query_size if max_query_size > 1 else 1
    if n == 0:
        return out_arr
    with nogil:
        ab = <double*>malloc(2 * m * sizeof(double))
        tree = <double*>malloc((max_grades + 1) * N_CHANNELS * sizeof(double))
        if ab != NULL and tree != NULL:
            for q in range(n_queries):
                query_hessian_product(query_ptr[q], query_ptr[q + 1] - query_ptr[q],
                                      &scores[0], &grade_rank[0], &weights[0],
                                      &order[query_ptr[q]], &z[0], &out[0],
                                      ab, ab + m, tree)
    ok = ab != NULL and tree != NULL
    free(ab)
    free(tree)
    if not ok:
        raise MemoryError("cannot allocate the ranking workspace")
    return out_arr


# ------------------------------------------------------------- dual CD over pairs --

cdef int dual_cd_pairs(const Rows* X, const int* pair_hi, const int* pair_lo,
                       const double* upper, const double* diag, const double* qdiag,
                       Py_ssize_t n_pairs, double* w, double* alpha, int* perm,
                       Py_ssize_t max_iter, double tol, Rng* rng,
                       double* pg_gap) noexcept nogil:
    """Dual coordinate descent (Hsieh et al. 2008) on
    min_a 1/2 a'(Q + D)a - sum a,  0 <= a_p <= U_p,  Q_pq = d_p . d_q,
    d_p = x_hi - x_lo, w = sum_p a_p d_p kept up to date.  Returns the epochs run."""
    cdef Py_ssize_t epoch, t, p, nnz
    cdef const double* vals
    cdef const int* ind
    cdef double G, PG, qpp, a_old, a_new, pg_max, pg_min
    for epoch in range(max_iter):
        rng_shuffle(rng, perm, n_pairs)
        pg_max = -INFINITY
        pg_min = INFINITY
        for t in range(n_pairs):
            p = perm[t]
            nnz = rows_get(X, pair_hi[p], &vals, &ind)
            G = row_dot(vals, ind, nnz, w)              # w @ (x_hi - x_lo) - 1 + D a
            nnz = rows_get(X, pair_lo[p], &vals, &ind)
            G -= row_dot(vals, ind, nnz, w)
            G += -1.0 + diag[p] * alpha[p]
            a_old = alpha[p]
            if a_old == 0.0:
                PG = G if G < 0.0 else 0.0
            elif a_old >= upper[p]:
                PG = G if G > 0.0 else 0.0
            else:
                PG = G
            if PG > pg_max:
                pg_max = PG
            if PG < pg_min:
                pg_min = PG
            if PG == 0.0:
                continue
            qpp = qdiag[p] + diag[p]
            if qpp <= 0.0:
                continue
            a_new = a_old - G / qpp
            if a_new < 0.0:
                a_new = 0.0
            if a_new > upper[p]:
                a_new = upper[p]
            alpha[p] = a_new
            if a_new != a_old:
                nnz = rows_get(X, pair_hi[p], &vals, &ind)
                row_axpy(a_new - a_old, vals, ind, nnz, w)     # w += delta * x_hi
                nnz = rows_get(X, pair_lo[p], &vals, &ind)
                row_axpy(a_old - a_new, vals, ind, nnz, w)     # w -= delta * x_lo
        pg_gap[0] = pg_max - pg_min
        if pg_max - pg_min <= tol:
            return <int>(epoch + 1)
    return <int>max_iter


def pairs_dual_cd(X, *, const int[::1] pair_hi, const int[::1] pair_lo,
                  const double[::1] upper, const double[::1] diag,
                  const double[::1] qdiag, double[::1] alpha,
                  Py_ssize_t max_iter, double tol, unsigned long long seed):
    """Dual coordinate descent of the pairwise SVM over explicit pairs.

    ``X`` is a C-contiguous float64 ndarray or a canonical CSR matrix (int32
    indices).  ``upper`` = C * pair weight (hinge) or inf (squared hinge),
    ``diag`` = 0 (hinge) or 1 / (2 C pair weight) (squared hinge), ``qdiag`` =
    ||x_hi - x_lo||^2.  ``alpha`` (one per pair) is updated in place.
    Returns ``(w, n_epochs, projected_gradient_gap)``.
    """
    cdef Py_ssize_t n_pairs = pair_hi.shape[0], n_rows = X.shape[0], n_cols = X.shape[1]
    if (pair_lo.shape[0] != n_pairs or upper.shape[0] != n_pairs or diag.shape[0] != n_pairs
            or qdiag.shape[0] != n_pairs or alpha.shape[0] != n_pairs):
        raise ValueError("pair arrays must have the same length")
    if hasattr(X, "indptr"):
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
        if indices.shape[0] == 0:
            data = np.zeros(1)
            indices = np.zeros(1, dtype=np.int32)
    else:
        data = np.ascontiguousarray(X, dtype=np.float64).ravel()
        indices = np.zeros(1, dtype=np.int32)
        indptr = None
    cdef const double[::1] d = data
    cdef const int[::1] ind = indices
    cdef const int[::1] ptr = indptr if indptr is not None else np.zeros(1, dtype=np.int32)
    cdef Rows rows
    rows.data = &d[0] if d.shape[0] > 0 else NULL
    rows.indices = &ind[0] if indptr is not None else NULL
    rows.indptr = &ptr[0] if indptr is not None else NULL
    rows.n_rows = n_rows
    rows.n_cols = n_cols
    w_arr = np.zeros(max(n_cols, 1))
    perm_arr = np.arange(max(n_pairs, 1), dtype=np.int32)
    cdef double[::1] w = w_arr
    cdef int[::1] perm = perm_arr
    cdef Rng rng
    cdef int n_epochs = 0
    cdef double gap = 0.0
    cdef Py_ssize_t p, nnz
    cdef const double* vals
    cdef const int* idx
    if n_pairs == 0:
        return w_arr[:n_cols], 0, 0.0
    rng_seed(&rng, seed)
    with nogil:
        for p in range(n_pairs):                     # w = sum_p alpha_p (x_hi - x_lo)
            if alpha[p] != 0.0:
                nnz = rows_get(&rows, pair_hi[p], &vals, &idx)
                row_axpy(alpha[p], vals, idx, nnz, &w[0])
                nnz = rows_get(&rows, pair_lo[p], &vals, &idx)
                row_axpy(-alpha[p], vals, idx, nnz, &w[0])
        n_epochs = dual_cd_pairs(&rows, &pair_hi[0], &pair_lo[0], &upper[0], &diag[0],
                                 &qdiag[0], n_pairs, &w[0], &alpha[0], &perm[0],
                                 max_iter, tol, &rng, &gap)
    return w_arr[:n_cols], n_epochs, gap
