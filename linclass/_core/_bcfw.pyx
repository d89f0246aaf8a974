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
from libc.stdlib cimport malloc, free

import numpy as np


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
