"""Block-coordinate Frank--Wolfe passes of the structural SVM for one-hot
multi-class problems (the Crammer--Singer multi-class SVM).

Primal (sum over examples, as liblinear):

    P(w) = 1/2 ||w||^2 + C sum_i max_y [L[y_i, y] + s_y(x_i) - s_{y_i}(x_i)]

with ``s_c(x) = x . W[:, c]``.  The weight vector is stored feature-major,
``w[j * K + c] = W[j, c]`` (the layout of ``MultiClassStructure``).  Block i
of the dual is a simplex of size C over the outputs of example i; its
contribution to ``w`` is ``w_i = x_i (x) beta_i`` with ``beta_i`` in R^K
(``beta_i = sum_y a_iy (e_{y_i} - e_y)``) and to the dual's linear part
``l_i = sum_y a_iy L[y_i, y]``, so the per-example state is ``(beta_i, l_i)``:
K + 1 numbers.

A block step (Lacoste-Julien, Jaggi, Schmidt and Pletscher, 2013, Alg. 3):
the loss-augmented argmax ``y*`` gives the corner ``s = C (e_{y_i} - e_{y*})``,
``ls = C L[y_i, y*]``; the block duality gap is
``g = ls - l_i - scores . (s - beta_i)``; the exact line search
``gamma = clip(g / (||x_i||^2 ||s - beta_i||^2), 0, 1)`` moves
``beta_i, l_i`` and ``w``.  Since ``w`` changes only by ``x_i (x) d`` the
scores of example i change by ``||x_i||^2 d``: ``max_inner`` Frank--Wolfe
steps on the same block cost O(K) each after the first (one sparse row pass
to score, one to update ``w``).  The steps are *pairwise* Frank--Wolfe steps
(Osokin et al., 2016): weight moves from the away corner (the output with
positive weight and the lowest augmented score) to the Frank--Wolfe corner,
which, unlike plain Frank--Wolfe steps, converges linearly on the block; the
block gap of the plain Frank--Wolfe corner is what the pass returns.

Weighted averaging (``rho_k = k``, Alg. 4 of the paper) by the lazy trick:
with ``u_k`` the update of step k and ``R_k = sum_{j<=k} j``,
``sum_k rho_k w_k / R_K = w_K - v / R_K`` where ``v = sum_k R_{k-1} u_k``.

References
----------
S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher. Block-coordinate
Frank-Wolfe optimization for structural SVMs. ICML 2013.
A. Osokin, J.-B. Alayrac, I. Lukasewitz, P. Dokania, S. Lacoste-Julien.
Minding the gaps for block Frank-Wolfe optimization of structured SVMs.
ICML 2016.
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
kernel-based vector machines. JMLR 2, 2001.
"""
from libc.stdlib cimport malloc, calloc, free

import numpy as np

from ._prefetch cimport PREFETCH_AHEAD, prefetch_row


cdef double multiclass_block(double* w, double* v, const int* indices, const double* data,
                             Py_ssize_t p0, Py_ssize_t p1, Py_ssize_t K, Py_ssize_t yi,
                             double xx, double* beta, double* l_i, const double* loss_row,
                             double C, Py_ssize_t max_inner, double inner_tol,
                             double avg_weight, double* dl_avg,
                             double* scores, double* d, double* total) noexcept nogil:
    """BCFW steps on one example; returns the block gap before the first step."""
    cdef Py_ssize_t p, c, it, best
    cdef bint moved = False
    cdef double xv, g, gamma, best_val, val, ls, g0 = 0.0, dl_total = 0.0, dl
    cdef double away_val, a_c
    cdef Py_ssize_t away
    cdef const double* wrow
    cdef double* wrow_m
    for c in range(K):
        scores[c] = 0.0
        total[c] = 0.0
    for p in range(p0, p1):                     # scores = x_i @ W
        xv = data[p]
        wrow = w + <Py_ssize_t>indices[p] * K
        for c in range(K):
            scores[c] += xv * wrow[c]
    # first: the Frank--Wolfe corner and the block gap (the pass's gap estimate)
    best = 0
    best_val = scores[0] + loss_row[0]
    for c in range(1, K):
        val = scores[c] + loss_row[c]
        if val > best_val:
            best_val = val
            best = c
    ls = C * loss_row[best]
    g0 = ls - l_i[0]                            # g = ls - l_i - scores . (s - beta)
    for c in range(K):
        g0 += scores[c] * beta[c]
    g0 -= C * (scores[yi] - scores[best])
    # then pairwise steps: move dual weight from the away corner (the worst
    # output with weight > 0) to the Frank--Wolfe corner, exact line search
    # (block pairwise Frank--Wolfe; in the one-hot case the weights are
    # a_c = -beta_c for c != y_i and a_{y_i} = C - beta_{y_i})
    for it in range(max_inner):
        best = 0
        best_val = scores[0] + loss_row[0]
        away = -1
        away_val = 0.0
        for c in range(K):
            val = scores[c] + loss_row[c]       # dual gradient + scores[y_i]
            if val > best_val:
                best_val = val
                best = c
            a_c = C - beta[c] if c == yi else -beta[c]
            if a_c > 1e-12 * C and (away < 0 or val < away_val):
                away_val = val
                away = c
        if away < 0 or best == away:
            break
        g = best_val - away_val
        if g <= inner_tol * g0 or g <= 0.0 or xx <= 0.0:
            break
        a_c = C - beta[away] if away == yi else -beta[away]
        gamma = g / (2.0 * xx)
        if gamma > a_c:
            gamma = a_c
        moved = True
        dl = gamma * (loss_row[best] - loss_row[away])
        l_i[0] += dl
        dl_total += dl
        beta[away] += gamma
        beta[best] -= gamma
        total[away] += gamma
        total[best] -= gamma
        scores[away] += gamma * xx
        scores[best] -= gamma * xx
    if moved:
        for p in range(p0, p1):                 # w += x_i (x) total
            xv = data[p]
            wrow_m = w + <Py_ssize_t>indices[p] * K
            for c in range(K):
                wrow_m[c] += xv * total[c]
        if v != NULL:
            for p in range(p0, p1):             # v += R_{k-1} x_i (x) total
                xv = data[p] * avg_weight
                wrow_m = v + <Py_ssize_t>indices[p] * K
                for c in range(K):
                    wrow_m[c] += xv * total[c]
            dl_avg[0] += avg_weight * dl_total
    return g0


def multiclass_pass(double[::1] w, double[::1] v, const int[::1] indices,
                    const double[::1] data, const long long[::1] indptr,
                    const long long[::1] y, const double[::1] sq_norms,
                    double[:, ::1] beta, double[::1] l, const double[:, ::1] loss_matrix,
                    const long long[::1] order, *, double C, Py_ssize_t max_inner=1,
                    double inner_tol=0.0, bint average=False, double step=0.0,
                    double lv=0.0):
    """One BCFW pass over the examples in ``order``, with the GIL released.

    w (n_features_x * K,) weights (feature-major) updated in place; v the
    averaging sum (same shape; untouched unless ``average``); X as CSR
    (indices int32, data, indptr int64) with ``sq_norms[i] = ||x_i||^2``;
    y (n,) classes; beta (n, K) and l (n,) the per-example dual state;
    loss_matrix (K, K); ``step`` the number of block steps done before this
    pass and ``lv`` the averaging sum of the dual's linear part.

    Returns ``(sum of block gaps, step, lv)``.  Index values (features below
    n_features_x, classes below K, order within [0, n)) are the caller's
    contract; only shapes are checked here.
    """
    cdef Py_ssize_t K = loss_matrix.shape[0]
    cdef Py_ssize_t n = beta.shape[0]
    cdef Py_ssize_t n_visit = order.shape[0]
    cdef Py_ssize_t j, i
    cdef double gap = 0.0, k = step, dl_avg = lv
    cdef double* scores
    cdef double* d
    cdef double* total
    cdef double* vptr = NULL
    cdef int status = 0
    if K < 1 or loss_matrix.shape[1] != K or beta.shape[1] != K:
        raise ValueError("loss_matrix must be (K, K) and beta (n, K)")
    if w.shape[0] % K != 0 or (average and v.shape[0] != w.shape[0]):
        raise ValueError("w must hold n_features_x * K weights and v the same")
    if (y.shape[0] != n or l.shape[0] != n or sq_norms.shape[0] != n
            or indptr.shape[0] != n + 1):
        raise ValueError("y, l, sq_norms need one entry per example and indptr n + 1")
    if indices.shape[0] != data.shape[0] or indptr[n] > indices.shape[0] or indptr[0] < 0:
        raise ValueError("indices/data/indptr disagree")
    if n_visit == 0 or n == 0:
        return 0.0, step, lv
    if average:
        vptr = &v[0]
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    with nogil:
        scores = <double*>malloc(3 * K * sizeof(double))
        if scores == NULL:
            status = -1
        else:
            d = scores + K
            total = scores + 2 * K
            for j in range(n_visit):
                i = order[j]
                k += 1.0
                gap += multiclass_block(&w[0], vptr, ind_ptr, data_ptr, indptr[i],
                                        indptr[i + 1], K, y[i], sq_norms[i], &beta[i, 0],
                                        &l[i], &loss_matrix[y[i], 0], C, max_inner,
                                        inner_tol, 0.5 * k * (k - 1.0), &dl_avg,
                                        scores, d, total)
            free(scores)
    if status != 0:
        raise MemoryError("multiclass_pass: cannot allocate the workspace")
    return gap, k, dl_avg


# -- classes described by attribute vectors (taxonomies) ----------------------------
#
# With Phi(x, y) = x (x) Lambda[y] (Lambda: K x A, w[j * A + a] = W[j, a]) the
# block state stays (beta_i, l_i) in class space: w_i = x_i (x) (Lambda^T beta_i),
# the scores of example i are s = Lambda (W^T x_i), and a pairwise step moving
# gamma from the away class a to the Frank--Wolfe class b changes the scores by
# gamma ||x_i||^2 (G[:, a] - G[:, b]) with G = Lambda Lambda^T; its exact line
# search is gamma = gap / (||x_i||^2 (G[a, a] + G[b, b] - 2 G[a, b])).  With
# Lambda = I this is the one-hot pass above.

cdef double description_block(double* w, double* v, const int* indices, const double* data,
                              Py_ssize_t p0, Py_ssize_t p1, Py_ssize_t K, Py_ssize_t A,
                              const double* lam, const double* gram, Py_ssize_t yi,
                              double xx, double* beta, double* l_i, const double* loss_row,
                              double C, Py_ssize_t max_inner, double avg_weight,
                              double* dl_avg, double* scores, double* z,
                              double* total) noexcept nogil:
    """BCFW steps on one example (classes described by lam); returns the first block gap."""
    cdef Py_ssize_t p, c, a, it, best, away
    cdef bint moved = False
    cdef double xv, g, gamma, best_val, val, ls, g0, dl_total = 0.0, dl, curv
    cdef double away_val, a_c
    cdef const double* wrow
    cdef double* wrow_m
    for a in range(A):
        z[a] = 0.0
    for c in range(K):
        total[c] = 0.0
    for p in range(p0, p1):                     # z = W^T x_i
        xv = data[p]
        wrow = w + <Py_ssize_t>indices[p] * A
        for a in range(A):
            z[a] += xv * wrow[a]
    for c in range(K):                          # scores = Lambda z
        val = 0.0
        for a in range(A):
            val += lam[c * A + a] * z[a]
        scores[c] = val
    best = 0
    best_val = scores[0] + loss_row[0]
    for c in range(1, K):
        val = scores[c] + loss_row[c]
        if val > best_val:
            best_val = val
            best = c
    ls = C * loss_row[best]
    g0 = ls - l_i[0]                            # g = ls - l_i - scores . (s - beta)
    for c in range(K):
        g0 += scores[c] * beta[c]
    g0 -= C * (scores[yi] - scores[best])
    for it in range(max_inner):
        best = 0
        best_val = scores[0] + loss_row[0]
        away = -1
        away_val = 0.0
        for c in range(K):
            val = scores[c] + loss_row[c]
            if val > best_val:
                best_val = val
                best = c
            a_c = C - beta[c] if c == yi else -beta[c]
            if a_c > 1e-12 * C and (away < 0 or val < away_val):
                away_val = val
                away = c
        if away < 0 or best == away:
            break
        g = best_val - away_val
        curv = xx * (gram[away * K + away] + gram[best * K + best] - 2.0 * gram[away * K + best])
        if g <= 0.0 or curv <= 0.0:
            break
        a_c = C - beta[away] if away == yi else -beta[away]
        gamma = g / curv
        if gamma > a_c:
            gamma = a_c
        moved = True
        dl = gamma * (loss_row[best] - loss_row[away])
        l_i[0] += dl
        dl_total += dl
        beta[away] += gamma
        beta[best] -= gamma
        total[away] += gamma
        total[best] -= gamma
        for c in range(K):                      # scores += gamma ||x||^2 G (e_away - e_best)
            scores[c] += gamma * xx * (gram[c * K + away] - gram[c * K + best])
    if moved:
        for a in range(A):                      # z = Lambda^T total
            val = 0.0
            for c in range(K):
                val += lam[c * A + a] * total[c]
            z[a] = val
        for p in range(p0, p1):                 # w += x_i (x) z
            xv = data[p]
            wrow_m = w + <Py_ssize_t>indices[p] * A
            for a in range(A):
                wrow_m[a] += xv * z[a]
        if v != NULL:
            for p in range(p0, p1):
                xv = data[p] * avg_weight
                wrow_m = v + <Py_ssize_t>indices[p] * A
                for a in range(A):
                    wrow_m[a] += xv * z[a]
            dl_avg[0] += avg_weight * dl_total
    return g0


def description_pass(double[::1] w, double[::1] v, const int[::1] indices,
                     const double[::1] data, const long long[::1] indptr,
                     const long long[::1] y, const double[::1] sq_norms,
                     double[:, ::1] beta, double[::1] l, const double[:, ::1] loss_matrix,
                     const double[:, ::1] class_vectors, const double[:, ::1] gram,
                     const long long[::1] order, *, double C, Py_ssize_t max_inner=1,
                     bint average=False, double step=0.0, double lv=0.0):
    """One BCFW pass for classes described by ``class_vectors`` (K, A), GIL released.

    As :func:`multiclass_pass` with ``w`` holding ``n_features_x * A`` weights
    (feature-major) and ``gram = class_vectors @ class_vectors.T``.  Returns
    ``(sum of block gaps, step, lv)``.
    """
    cdef Py_ssize_t K = loss_matrix.shape[0]
    cdef Py_ssize_t A = class_vectors.shape[1]
    cdef Py_ssize_t n = beta.shape[0]
    cdef Py_ssize_t n_visit = order.shape[0]
    cdef Py_ssize_t j, i
    cdef double gap = 0.0, k = step, dl_avg = lv
    cdef double* work
    cdef double* vptr = NULL
    cdef int status = 0
    if K < 1 or A < 1 or loss_matrix.shape[1] != K or beta.shape[1] != K \
            or class_vectors.shape[0] != K or gram.shape[0] != K or gram.shape[1] != K:
        raise ValueError("loss_matrix and gram must be (K, K), class_vectors (K, A), beta (n, K)")
    if w.shape[0] % A != 0 or (average and v.shape[0] != w.shape[0]):
        raise ValueError("w must hold n_features_x * A weights and v the same")
    if (y.shape[0] != n or l.shape[0] != n or sq_norms.shape[0] != n
            or indptr.shape[0] != n + 1):
        raise ValueError("y, l, sq_norms need one entry per example and indptr n + 1")
    if indices.shape[0] != data.shape[0] or indptr[n] > indices.shape[0] or indptr[0] < 0:
        raise ValueError("indices/data/indptr disagree")
    if n_visit == 0 or n == 0:
        return 0.0, step, lv
    if average:
        vptr = &v[0]
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    with nogil:
        work = <double*>malloc((2 * K + A) * sizeof(double))
        if work == NULL:
            status = -1
        else:
            for j in range(n_visit):
                i = order[j]
                k += 1.0
                gap += description_block(&w[0], vptr, ind_ptr, data_ptr, indptr[i],
                                         indptr[i + 1], K, A, &class_vectors[0, 0],
                                         &gram[0, 0], y[i], sq_norms[i], &beta[i, 0], &l[i],
                                         &loss_matrix[y[i], 0], C, max_inner,
                                         0.5 * k * (k - 1.0), &dl_avg, work, work + K,
                                         work + K + A)
            free(work)
    if status != 0:
        raise MemoryError("description_pass: cannot allocate the workspace")
    return gap, k, dl_avg


# -- first-order linear chains (the structural SVM sequence tagger) ------------------
#
# w = [W (F x K) | trans (K x K) | start (K) | stop (K)].  The block of sentence s
# is kept in marginal form: its share of w is
# sum_t x_t (x) m_t + (0 | r_s) with one K-row m_t per token and one
# (K*K + 2K)-row r_s per sentence, and l_s its share of the dual's linear part.
# A token row m_t = C sum_y a_y (e_{g_t} - e_{y_t}) is non-zero only on the gold
# label and the labels the loss-augmented decoder ever chose for that token, so
# the direction D_t = C (e_{g_t} - e_{p_t}) - m_t is sparse: the pass gathers its
# active labels once per token and does the line search's ||x (x) D||^2, the
# update of W and of the averaging sum over nnz(x_t) * (active labels) entries
# instead of nnz(x_t) * K.  Only the scores (nnz(x) * K) and the Viterbi
# recursion (n K^2) stay dense.

cdef void chain_viterbi(const double* E, Py_ssize_t n, Py_ssize_t K, const double* trans,
                        const double* start, const double* stop, double* alpha,
                        int* out) noexcept nogil:
    """First-order Viterbi (smallest index on ties); alpha: n*K workspace.

    The forward pass keeps only the max-plus values (a branch-free inner loop
    over the next label that the compiler vectorises); the back-pointers are
    recomputed during the backtrack, O(K) per token, with the same additions,
    so the path equals that of the usual recursion with stored back-pointers.
    """
    cdef Py_ssize_t t, j, k
    cdef double best, s, pj
    cdef int arg
    cdef double* prev
    cdef double* cur
    cdef const double* row
    for k in range(K):
        alpha[k] = start[k] + E[k]
    for t in range(1, n):
        prev = alpha + (t - 1) * K
        cur = alpha + t * K
        pj = prev[0]
        for k in range(K):
            cur[k] = pj + trans[k]
        for j in range(1, K):
            pj = prev[j]
            row = trans + j * K
            for k in range(K):
                s = pj + row[k]
                cur[k] = s if s > cur[k] else cur[k]
        for k in range(K):
            cur[k] += E[t * K + k]
    prev = alpha + (n - 1) * K
    best = prev[0] + stop[0]
    arg = 0
    for k in range(1, K):
        s = prev[k] + stop[k]
        if s > best:
            best = s
            arg = <int>k
    out[n - 1] = arg
    t = n - 1
    while t > 0:
        prev = alpha + (t - 1) * K
        k = out[t]
        best = prev[0] + trans[k]
        arg = 0
        for j in range(1, K):
            s = prev[j] + trans[j * K + k]
            if s > best:
                best = s
                arg = <int>j
        out[t - 1] = arg
        t -= 1


cdef Py_ssize_t _check_chain_batch(Py_ssize_t K, Py_ssize_t n_weights,
                                   const int[::1] indices, const double[::1] data,
                                   const int[::1] indptr, const long long[::1] sent_offsets,
                                   const int[::1] gold, Py_ssize_t* F_out) except -1:
    """The checks shared by :func:`chain_pass` and :func:`chain_hinge`: the weight
    layout (``F_out`` gets F), monotone offsets, CSR token rows and every index
    the kernels follow.  Returns the longest sentence's length."""
    cdef Py_ssize_t T = K * K + 2 * K
    cdef Py_ssize_t n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t F, n_tokens, s, t, p, max_len = 0
    if K < 1 or n_weights < T + K or (n_weights - T) % K != 0:
        raise ValueError("w must hold F*K + K*K + 2K weights")
    F = (n_weights - T) // K
    if n_sent < 0 or sent_offsets[0] != 0:
        raise ValueError("sent_offsets must start at 0")
    for s in range(n_sent):
        if sent_offsets[s + 1] < sent_offsets[s]:
            raise ValueError("sent_offsets must be non-decreasing")
        if sent_offsets[s + 1] - sent_offsets[s] > max_len:
            max_len = sent_offsets[s + 1] - sent_offsets[s]
    n_tokens = sent_offsets[n_sent]
    if indptr.shape[0] != n_tokens + 1 or gold.shape[0] != n_tokens:
        raise ValueError("indptr needs n_tokens + 1 entries and gold one per token")
    if indptr[0] != 0 or indptr[n_tokens] > indices.shape[0] \
            or indices.shape[0] != data.shape[0]:
        raise ValueError("indices/data/indptr disagree")
    for t in range(n_tokens):
        if indptr[t + 1] < indptr[t]:
            raise ValueError("indptr must be non-decreasing")
        if gold[t] < 0 or gold[t] >= K:
            raise ValueError("gold label %d outside [0, %d)" % (gold[t], K))
    for p in range(indptr[n_tokens]):
        if indices[p] < 0 or indices[p] >= F:
            raise ValueError("feature index %d outside [0, %d)" % (indices[p], F))
    F_out[0] = F
    return max_len


def chain_pass(double[::1] w, double[::1] v, Py_ssize_t K, const int[::1] indices,
               const double[::1] data, const int[::1] indptr,
               const long long[::1] sent_offsets, const int[::1] gold,
               double[:, ::1] token_state, double[:, ::1] sent_state, double[::1] l,
               const long long[::1] visit_order, *, double C, double loss_weight=1.0,
               bint average=False, double step=0.0, double lv=0.0):
    """One block-coordinate Frank--Wolfe pass of the first-order chain SSVM
    (Hamming loss, margin rescaling), without the GIL.

    State (see the comment above): ``w`` updated in place, ``v`` the weighted-averaging sum (``rho_k = k``),
    ``token_state`` (n_tokens, K), ``sent_state`` (n_sent, K*K + 2K), ``l``
    (n_sent,).  Tokens are CSR rows (``indptr`` int32 with one entry per token
    + 1), ``sent_offsets`` the token offsets of the sentences.  All index
    values are checked here (features < F, labels < K, offsets monotone).

    Returns ``(sum of block gaps, step, lv)``.
    """
    cdef Py_ssize_t T = K * K + 2 * K
    cdef Py_ssize_t n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t n_visit = visit_order.shape[0]
    cdef Py_ssize_t F, n_tokens, i, s, row0, n, t, p, k, j, a, max_len = 0, ham, n_act
    cdef Py_ssize_t p0, p1, f
    cdef double g, q, gamma, ls, x, val, gap = 0.0, kstep = step, lv_sum = lv, avg_w, lw
    cdef int status = 0
    cdef double* E = NULL
    cdef double* alpha
    cdef double* dtail
    cdef double* scratch = NULL
    cdef double* dval
    cdef int* dlab
    cdef Py_ssize_t* dstart
    cdef int* back = NULL
    cdef int* pred
    cdef double* W
    cdef double* tail
    cdef double* V = NULL
    cdef double* Vtail = NULL
    cdef double* m
    cdef double* st
    cdef const int* gs
    cdef const int* ind_ptr
    cdef const double* data_ptr
    max_len = _check_chain_batch(K, w.shape[0], indices, data, indptr, sent_offsets, gold,
                                 &F)
    if average and v.shape[0] != w.shape[0]:
        raise ValueError("v must have the shape of w")
    n_tokens = sent_offsets[n_sent]
    if (token_state.shape[0] != n_tokens or token_state.shape[1] != K
            or sent_state.shape[0] != n_sent or sent_state.shape[1] != T
            or l.shape[0] != n_sent):
        raise ValueError("token_state must be (n_tokens, K), sent_state (n_sent, K*K+2K) "
                         "and l one entry per sentence")
    for i in range(n_visit):
        if visit_order[i] < 0 or visit_order[i] >= n_sent:
            raise ValueError("visit_order holds sentence %d, outside [0, %d)"
                             % (visit_order[i], n_sent))
    if n_visit == 0 or n_tokens == 0:
        return 0.0, step, lv
    ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    data_ptr = &data[0] if data.shape[0] > 0 else NULL
    W = &w[0]
    tail = W + F * K
    if average:
        V = &v[0]
        Vtail = V + F * K
    lw = loss_weight
    with nogil:
        # E (n K) | alpha (n K) | dtail (T) | dval (n K) ; pred (n) | dlab (n K)
        E = <double*>malloc((3 * max_len * K + T + 1) * sizeof(double))
        back = <int*>malloc((max_len * K + max_len + 1) * sizeof(int))
        dstart = <Py_ssize_t*>malloc((max_len + 1) * sizeof(Py_ssize_t))
        scratch = <double*>calloc(F * K + 1, sizeof(double))
        if E == NULL or back == NULL or dstart == NULL or scratch == NULL:
            status = -1
        else:
            alpha = E + max_len * K
            dtail = alpha + max_len * K
            dval = dtail + T
            pred = back
            dlab = pred + max_len
            for i in range(n_visit):
                s = visit_order[i]
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                kstep += 1.0
                if n == 0:
                    continue
                gs = &gold[row0]
                # scores E = x_t . W[:, k]
                for t in range(n * K):
                    E[t] = 0.0
                p1 = indptr[row0 + n]
                for t in range(n):
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        if p + PREFETCH_AHEAD < p1:
                            prefetch_row(W + <Py_ssize_t>ind_ptr[p + PREFETCH_AHEAD] * K, K)
                        x = data_ptr[p]
                        m = W + <Py_ssize_t>ind_ptr[p] * K
                        for k in range(K):
                            E[t * K + k] += x * m[k]
                # loss-augmented Viterbi (Hamming): scores + lw for labels != gold
                for t in range(n * K):
                    dval[t] = E[t] + lw
                for t in range(n):
                    dval[t * K + gs[t]] -= lw
                chain_viterbi(dval, n, K, tail, tail + K * K, tail + K * K + K, alpha, pred)
                ham = 0
                for t in range(n):
                    if pred[t] != gs[t]:
                        ham += 1
                ls = C * lw * ham
                # tail direction: C Psi_tail(x, y*) - r_s
                st = &sent_state[s, 0]
                for k in range(T):
                    dtail[k] = -st[k]
                for t in range(1, n):
                    dtail[gs[t - 1] * K + gs[t]] += C
                    dtail[pred[t - 1] * K + pred[t]] -= C
                dtail[K * K + gs[0]] += C
                dtail[K * K + pred[0]] -= C
                dtail[K * K + K + gs[n - 1]] += C
                dtail[K * K + K + pred[n - 1]] -= C
                g = ls - l[s]
                q = 0.0
                for k in range(T):
                    g -= tail[k] * dtail[k]
                    q += dtail[k] * dtail[k]
                # sparse token directions D_t (active labels only)
                n_act = 0
                for t in range(n):
                    dstart[t] = n_act
                    m = &token_state[row0 + t, 0]
                    for k in range(K):
                        val = -m[k]
                        if k == gs[t]:
                            val = val + C
                        if k == pred[t]:
                            val = val - C
                        if val != 0.0:
                            dlab[n_act] = <int>k
                            dval[n_act] = val
                            g -= E[t * K + k] * val
                            n_act += 1
                dstart[n] = n_act
                # ||sum_t x_t (x) D_t||^2 through the zeroed scratch buffer
                for t in range(n):
                    if dstart[t + 1] == dstart[t]:
                        continue
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        f = <Py_ssize_t>ind_ptr[p] * K
                        x = data_ptr[p]
                        for a in range(dstart[t], dstart[t + 1]):
                            scratch[f + dlab[a]] += x * dval[a]
                for t in range(n):
                    if dstart[t + 1] == dstart[t]:
                        continue
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        f = <Py_ssize_t>ind_ptr[p] * K
                        for a in range(dstart[t], dstart[t + 1]):
                            val = scratch[f + dlab[a]]
                            q += val * val
                            scratch[f + dlab[a]] = 0.0
                gap += g
                if g <= 0.0 or q <= 0.0:
                    continue
                gamma = g / q
                if gamma > 1.0:
                    gamma = 1.0
                avg_w = 0.5 * kstep * (kstep - 1.0) * gamma
                for t in range(n):
                    if dstart[t + 1] == dstart[t]:
                        continue
                    m = &token_state[row0 + t, 0]
                    for a in range(dstart[t], dstart[t + 1]):
                        m[dlab[a]] += gamma * dval[a]
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        f = <Py_ssize_t>ind_ptr[p] * K
                        x = data_ptr[p]
                        for a in range(dstart[t], dstart[t + 1]):
                            W[f + dlab[a]] += gamma * x * dval[a]
                        if V != NULL:
                            for a in range(dstart[t], dstart[t + 1]):
                                V[f + dlab[a]] += avg_w * x * dval[a]
                for k in range(T):
                    st[k] += gamma * dtail[k]
                    tail[k] += gamma * dtail[k]
                    if Vtail != NULL:
                        Vtail[k] += avg_w * dtail[k]
                lv_sum += avg_w * (ls - l[s])
                l[s] += gamma * (ls - l[s])
        free(E)
        free(back)
        free(dstart)
        free(scratch)
    if status != 0:
        raise MemoryError("chain_pass: cannot allocate the workspace")
    return gap, kstep, lv_sum


def chain_hinge(const double[::1] w, Py_ssize_t K, const int[::1] indices,
                const double[::1] data, const int[::1] indptr,
                const long long[::1] sent_offsets, const int[::1] gold, *,
                double loss_weight=1.0):
    """Sum over sentences of the structured hinge loss of the first-order chain
    (Hamming loss, margin rescaling), without the GIL:
    ``sum_s max_y [lw Ham(g_s, y) + F(x_s, y)] - F(x_s, g_s)``, one scoring and
    one Viterbi pass.  Arguments as :func:`chain_pass` (same checks)."""
    cdef Py_ssize_t T = K * K + 2 * K
    cdef Py_ssize_t n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t F, n_tokens, s, row0, n, t, p, k, p1, max_len = 0
    cdef double total = 0.0, x, best
    cdef int status = 0
    cdef double* E = NULL
    cdef double* alpha
    cdef int* pred = NULL
    cdef const double* W
    cdef const double* tail
    cdef const double* m
    cdef const int* gs
    cdef const int* ind_ptr
    cdef const double* data_ptr
    max_len = _check_chain_batch(K, w.shape[0], indices, data, indptr, sent_offsets, gold,
                                 &F)
    n_tokens = sent_offsets[n_sent]
    if n_tokens == 0:
        return 0.0
    ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    data_ptr = &data[0] if data.shape[0] > 0 else NULL
    W = &w[0]
    tail = W + F * K
    with nogil:
        E = <double*>malloc((2 * max_len * K + 1) * sizeof(double))
        pred = <int*>malloc((max_len + 1) * sizeof(int))
        if E == NULL or pred == NULL:
            status = -1
        else:
            alpha = E + max_len * K
            for s in range(n_sent):
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                if n == 0:
                    continue
                gs = &gold[row0]
                for t in range(n * K):
                    E[t] = loss_weight
                for t in range(n):
                    E[t * K + gs[t]] = 0.0
                p1 = indptr[row0 + n]
                for t in range(n):
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        if p + PREFETCH_AHEAD < p1:
                            prefetch_row(W + <Py_ssize_t>ind_ptr[p + PREFETCH_AHEAD] * K, K)
                        x = data_ptr[p]
                        m = W + <Py_ssize_t>ind_ptr[p] * K
                        for k in range(K):
                            E[t * K + k] += x * m[k]
                chain_viterbi(E, n, K, tail, tail + K * K, tail + K * K + K, alpha, pred)
                # augmented score of the argmax minus the gold path's score
                best = tail[K * K + pred[0]] + tail[K * K + K + pred[n - 1]] \
                    - tail[K * K + gs[0]] - tail[K * K + K + gs[n - 1]]
                for t in range(n):
                    best += E[t * K + pred[t]] - E[t * K + gs[t]]
                for t in range(1, n):
                    best += tail[pred[t - 1] * K + pred[t]] - tail[gs[t - 1] * K + gs[t]]
                total += best if best > 0.0 else 0.0
        free(E)
        free(pred)
    if status != 0:
        raise MemoryError("chain_hinge: cannot allocate the workspace")
    return total
