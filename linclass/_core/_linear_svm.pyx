"""Linear SVM solvers: dual coordinate descent (binary, L1/L2 loss), the
Crammer-Singer and Weston-Watkins multi-class duals by block coordinate
descent, and the Pegasos primal stochastic sub-gradient method.

Data rows come through `Rows` (dense or CSR).  A bias is an extra constant
feature of value `bias` (0 disables it) whose weight is stored after the
n_features weights and is regularised like any other weight (as in LIBLINEAR).

Binary dual (Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML 2008, "A dual
coordinate descent method for large-scale linear SVM"):

    min_a  0.5 a^T (Q + D) a - e^T a,   0 <= a_i <= U_i,   Q_ij = s_i s_j x_i.x_j
    L1 loss (hinge):         D_ii = 0,          U_i = C_i
    L2 loss (squared hinge): D_ii = 1 / (2 C_i), U_i = inf
    w = sum_i a_i s_i x_i

One coordinate at a time in a random order, with the shrinking heuristic of
the paper (sec. 3.2): a variable at a bound whose projected gradient points
outside by more than last pass's extreme values leaves the active set; at
convergence on the active set all variables are checked once more.

Crammer & Singer (2001) dual, solved one example block at a time by the
sequential dual method of Keerthi, Sundararajan, Chang, Hsieh & Lin (KDD
2008), whose sub-problem has a closed form after sorting K numbers.

Weston & Watkins (1999) / Vapnik (1998) multi-class SVM:

    min_W 0.5 sum_m ||w_m||^2 + sum_i C_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)

Its dual has one variable a_im in [0, C_i] per example and wrong class with
w_m = sum_i ([m = y_i] sum_r a_ir - [m != y_i] a_im) x_i and only box
constraints; block coordinate descent updates the K-1 variables of one example
exactly one after the other, keeping the K scores W^T x_i current in O(1) per
variable, then writes the combined change into W in one pass over the row.

Pegasos (Shalev-Shwartz, Singer, Srebro & Cotter, 2011): step 1/(lambda t),
O(1) shrinkage through a scaled weight vector, optional projection onto the
ball holding the optimum (radius sqrt(2 f(0) / lambda)).

The caller (linclass.svm, linclass.multiclass) validates every array.
"""
from libc.math cimport fabs, sqrt, INFINITY
from libc.stdlib cimport qsort
from libc.string cimport memset

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy, row_sq_norm
from linclass._core._rowsview cimport rows_from_views
from linclass._core._weights cimport ScaledWeights, sw_init, sw_dot, sw_add, sw_scale, sw_reset_scale
from linclass._core._random cimport Rng, rng_seed, rng_shuffle, rng_shuffle32
from linclass._core._prefetch cimport PREFETCH_AHEAD, prefetch_row, LINCLASS_PREFETCH


# ------------------------------------------------------ binary dual CD --

cdef void binary_rebuild_w(const Rows* X, const double* ysign, const double* alpha,
                           double bias, double* w) noexcept nogil:
    """w = sum_i alpha_i s_i [x_i, bias]"""
    cdef Py_ssize_t i, nnz
    cdef const double* values
    cdef const int* indices
    memset(w, 0, (X.n_cols + 1) * sizeof(double))
    for i in range(X.n_rows):
        if alpha[i] != 0.0:
            nnz = rows_get(X, i, &values, &indices)
            row_axpy(alpha[i] * ysign[i], values, indices, nnz, w)
            w[X.n_cols] += alpha[i] * ysign[i] * bias


cdef struct DualVar:
    # the per-sample numbers one coordinate step reads, packed in one 32-byte
    # block: the visit order is random, and separate arrays cost one cache miss
    # each per visit (LIBLINEAR keeps upper bound and diagonal per class, 3 values)
    double alpha
    double QD          # Q_ii + D_ii
    double upper       # U_i
    double diag        # D_ii


cdef enum:
    UNSHRINK_PASSES = 100      # passes between two forced checks of every variable


cdef Py_ssize_t binary_dual_cd(const Rows* X, const double* ysign, DualVar* var,
                               double bias, double* w, int* index, Py_ssize_t n_active_all,
                               double tol, Py_ssize_t max_iter, bint shrinking, Rng* rng,
                               double* violation) noexcept nogil:
    """Dual CD passes until max PG - min PG <= tol on all variables; returns passes.

    The next rows of the permutation are prefetched (their DualVar and CSR
    extent PREFETCH_AHEAD visits ahead, their entries two visits ahead)."""
    cdef Py_ssize_t it = 0, s, i, nnz, active = n_active_all, ahead, last_full = 0
    cdef Py_ssize_t d = X.n_cols
    cdef int tmp
    cdef const double* values
    cdef const int* indices
    cdef double G, PG, old, step, a_new
    cdef double PGmax_old = INFINITY, PGmin_old = -INFINITY
    cdef double PGmax_new, PGmin_new
    cdef DualVar* v
    cdef bint sparse = X.indptr != NULL
    violation[0] = INFINITY
    while it < max_iter:
        PGmax_new = -INFINITY
        PGmin_new = INFINITY
        rng_shuffle32(rng, index, active)
        s = 0
        while s < active:
            ahead = s + PREFETCH_AHEAD
            if ahead < active:
                LINCLASS_PREFETCH(&var[index[ahead]])
                if sparse:
                    LINCLASS_PREFETCH(&X.indptr[index[ahead]])
            ahead = s + 2
            if sparse and ahead < active:
                i = index[ahead]
                LINCLASS_PREFETCH(&X.data[X.indptr[i]])
                LINCLASS_PREFETCH(&X.indices[X.indptr[i]])
            i = index[s]
            v = &var[i]
            nnz = rows_get(X, i, &values, &indices)
            # G = s_i (w . x_i) - 1 + D_ii a_i     (gradient of the dual in a_i)
            G = ysign[i] * (row_dot(values, indices, nnz, w) + w[d] * bias) - 1.0 \
                + v.diag * v.alpha
            PG = 0.0
            if v.alpha == 0.0:
                if shrinking and G > PGmax_old:
                    active -= 1
                    tmp = index[s]
                    index[s] = index[active]
                    index[active] = tmp
                    continue
                if G < 0.0:
                    PG = G
            elif v.alpha >= v.upper:
                if shrinking and G < PGmin_old:
                    active -= 1
                    tmp = index[s]
                    index[s] = index[active]
                    index[active] = tmp
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            if PG > PGmax_new:
                PGmax_new = PG
            if PG < PGmin_new:
                PGmin_new = PG
            if fabs(PG) > 1e-12:
                old = v.alpha
                a_new = old - G / v.QD                             # Newton step, then clip
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > v.upper:
                    a_new = v.upper
                v.alpha = a_new
                step = (a_new - old) * ysign[i]
                row_axpy(step, values, indices, nnz, w)              # w += step * x_i
                w[d] += step * bias
            s += 1
        it += 1
        violation[0] = PGmax_new - PGmin_new
        if violation[0] <= tol or it - last_full >= UNSHRINK_PASSES:
            if violation[0] <= tol and active == n_active_all:
                break
            # verify all variables; also every UNSHRINK_PASSES passes, so that a
            # variable shrunk by mistake comes back when the active set cannot
            # reach tol (a tol at the rounding floor stalled 3e-7 above the optimum)
            active = n_active_all
            last_full = it
            PGmax_old = INFINITY
            PGmin_old = -INFINITY
            continue
        PGmax_old = PGmax_new if PGmax_new > 0.0 else INFINITY
        PGmin_old = PGmin_new if PGmin_new < 0.0 else -INFINITY
    return it


def dual_cd_svc(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                Py_ssize_t n_features, const double[::1] ysign, const double[::1] cost,
                int loss, double bias, double[::1] w, double[::1] alpha, double tol,
                Py_ssize_t max_iter, bint shrinking, unsigned long long seed):
    """Binary linear SVM by dual coordinate descent, in place on ``w``/``alpha``.

    ``ysign`` is +-1 per sample, ``cost`` the per-sample C (C x class weight x
    sample weight, >= 0; samples with cost 0 are left out), ``loss`` 1 (hinge)
    or 2 (squared hinge), ``bias`` the value of the constant feature (0 = no
    bias).  ``w`` has n_features + 1 entries (last: bias weight) and is
    rebuilt from ``alpha`` (the warm start) before the first pass.

    Returns (n_passes, max_violation).
    """
    if w.shape[0] != n_features + 1 or alpha.shape[0] != n_samples \
            or ysign.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1:
        raise ValueError("dual_cd_svc: inconsistent array shapes")
    if loss != 1 and loss != 2:
        raise ValueError("loss must be 1 or 2")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    var_arr = np.empty(n_samples * 4)                  # DualVar[n_samples]
    index_arr = np.empty(n_samples, dtype=np.int32)
    cdef double[::1] var_view = var_arr
    cdef DualVar* var = <DualVar*>&var_view[0]
    cdef int[::1] index = index_arr
    cdef Py_ssize_t i, nnz, n_active = 0, n_iter
    cdef const double* values
    cdef const int* ind
    cdef double violation = 0.0
    cdef Rng rng
    rng_seed(&rng, seed)
    with nogil:
        for i in range(n_samples):
            if cost[i] > 0.0:
                index[n_active] = <int>i
                n_active += 1
            else:
                alpha[i] = 0.0
            if loss == 1:
                var[i].upper = cost[i]
                var[i].diag = 0.0
            else:
                var[i].upper = INFINITY
                var[i].diag = 0.5 / cost[i] if cost[i] > 0.0 else 0.0
            if alpha[i] < 0.0:
                alpha[i] = 0.0
            if alpha[i] > var[i].upper:
                alpha[i] = var[i].upper
            var[i].alpha = alpha[i]
            nnz = rows_get(&X, i, &values, &ind)
            var[i].QD = row_sq_norm(values, nnz) + bias * bias + var[i].diag   # Q_ii + D_ii
        binary_rebuild_w(&X, &ysign[0], &alpha[0], bias, &w[0])
        n_iter = binary_dual_cd(&X, &ysign[0], var, bias, &w[0], &index[0], n_active, tol,
                                max_iter, shrinking, &rng, &violation)
        for i in range(n_samples):
            alpha[i] = var[i].alpha
    return n_iter, violation


# ------------------------------------- one-vs-rest dual CD, fused --
#
# The K binary problems "class positive[k] against the rest" share the rows.
# Solved one after the other, each reads every active row of X and gathers
# from its own weight vector, so X streams through the caches K times per
# round of passes.  Here the K problems advance together: pass t visits the
# rows in one random order and, at row i, makes the coordinate step of every
# problem for which i is active.  The K weight vectors are the columns of one
# row-major block W (n_features + 1, K), so the K scores of a row come from one
# walk over its entries (K-wide rows of W, adjacent in memory) and the steps of
# the problems that moved are one more walk (as the Crammer-Singer kernel
# does).  Each problem keeps its own dual variables, shrinking state
# (PGmax/PGmin of its last pass, its active rows), stopping test and pass
# count exactly as `binary_dual_cd`; a problem that has converged (or reached
# max_iter) stops taking part.  Pass t's order is a permutation of all rows
# drawn from the seed alone, and a problem's score at a row sums the row's
# entries in storage order whichever walk computes it, so problem k's
# iterates do not depend on which other problems share its block (the result
# is the same for every n_jobs).
#
# Once few problems remain, the shared block costs more than it saves (each
# step of one problem touches a cache line of W per entry, and W is K times
# larger than one w), so a problem still running after FUSED_PASSES passes
# continues alone: `binary_dual_cd` from its dual variables on a contiguous
# copy of its column, all variables active again, seeded by the seed and its
# class code (again independent of the grouping).


cdef enum:
    FUSED_PASSES = 50


cdef void ovr_scores(const double* W, Py_ssize_t K, const double* values, const int* ind,
                     Py_ssize_t nnz, double bias, Py_ssize_t d, const int* cls,
                     Py_ssize_t n_cls, double* out) noexcept nogil:
    """out[cls[c]] = [x, bias] . W[:, cls[c]] for the listed columns only.

    One walk over the row per listed column, the sum in a register (the row
    and the K-wide rows of W it meets stay in the first-level cache after the
    first column).  Every column's sum starts at the bias term and adds the
    entries in storage order, as `scores_all` does for all K columns."""
    cdef Py_ssize_t k, c, col
    cdef double acc
    for c in range(n_cls):
        col = cls[c]
        acc = bias * W[d * K + col]
        if ind == NULL:
            for k in range(nnz):
                acc += values[k] * W[k * K + col]
        else:
            for k in range(nnz):
                acc += values[k] * W[ind[k] * K + col]
        out[col] = acc


cdef void ovr_add(double* W, Py_ssize_t K, const double* values, const int* ind,
                  Py_ssize_t nnz, double bias, Py_ssize_t d, const double* delta,
                  const int* changed, Py_ssize_t n_changed) noexcept nogil:
    """W[:, m] += delta[m] [x, bias] for m in changed: one walk over the row
    per changed column (the row's K-wide rows of W are cached from the scores),
    or, when every column changed, one walk with a contiguous K-wide update."""
    cdef Py_ssize_t k, c, col, m
    cdef double a, v
    cdef double* wrow
    if n_changed == K:
        for k in range(nnz):
            wrow = W + (k if ind == NULL else ind[k]) * K
            v = values[k]
            for m in range(K):
                wrow[m] += delta[m] * v
        for m in range(K):
            W[d * K + m] += delta[m] * bias
        return
    for c in range(n_changed):
        col = changed[c]
        a = delta[col]
        if ind == NULL:
            for k in range(nnz):
                W[k * K + col] += a * values[k]
        else:
            for k in range(nnz):
                W[ind[k] * K + col] += a * values[k]
        W[d * K + col] += a * bias


def dual_cd_svc_ovr(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                    Py_ssize_t n_features, const int[::1] codes, const int[::1] positive,
                    const double[::1] cost, int loss, double bias, double[:, ::1] W,
                    double[:, ::1] alpha, double tol, Py_ssize_t max_iter, bint shrinking,
                    unsigned long long seed):
    """K one-vs-rest binary SVM duals by fused dual coordinate descent, in place.

    Problem k: ``s_i = +1`` where ``codes[i] == positive[k]``, else -1; per
    sample cost ``cost`` (0 = left out), ``loss`` 1 (hinge) or 2 (squared
    hinge), ``bias`` the constant feature's value.  ``W`` (n_features + 1, K)
    holds w_k in column k and is rebuilt from ``alpha`` (K, n_samples, the
    warm start) first.  Each problem stops as `dual_cd_svc` does.
    Returns ``(n_passes (K,) int64, violation (K,))``.
    """
    cdef Py_ssize_t K = W.shape[1]
    if W.shape[0] != n_features + 1 or alpha.shape[0] != K or alpha.shape[1] != n_samples \
            or codes.shape[0] != n_samples or cost.shape[0] != n_samples \
            or positive.shape[0] != K or n_samples < 1 or K < 1:
        raise ValueError("dual_cd_svc_ovr: inconsistent array shapes")
    if loss != 1 and loss != 2:
        raise ValueError("loss must be 1 or 2")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef Py_ssize_t n = n_samples, d = n_features
    cdef double[::1] A = np.empty(n * K)                 # alpha, row-major (n, K)
    cdef unsigned char[::1] act = np.zeros(n * K, dtype=np.uint8)
    cdef int[::1] row_cnt = np.zeros(n, dtype=np.int32)  # active problems per row
    cdef double[::1] QD = np.empty(n), diag = np.empty(n), upper = np.empty(n)
    cdef double[::1] ysg = np.empty(n * K)               # s_ik, row-major (n, K)
    cdef int[::1] perm = np.arange(n, dtype=np.int32)
    cdef int[::1] cls = np.empty(K, dtype=np.int32), changed = np.empty(K, dtype=np.int32)
    cdef double[::1] S = np.zeros(K), delta = np.zeros(K)
    cdef double[::1] pgmax_old = np.full(K, INFINITY), pgmin_old = np.full(K, -INFINITY)
    cdef double[::1] pgmax_new = np.full(K, -INFINITY), pgmin_new = np.full(K, INFINITY)
    n_iter_arr = np.zeros(K, dtype=np.int64)
    viol_arr = np.full(K, INFINITY)
    cdef long long[::1] n_iter = n_iter_arr
    cdef double[::1] viol = viol_arr
    cdef long long[::1] last_full = np.zeros(K, dtype=np.int64)
    cdef long long[::1] n_act = np.zeros(K, dtype=np.int64)
    cdef unsigned char[::1] running = np.ones(K, dtype=np.uint8)
    cdef Py_ssize_t i, k, c, s, nnz, na, n_changed, n_all = 0, n_running = K, ahead
    cdef const double* values
    cdef const int* ind
    cdef double* W0
    cdef double G, PG, a, a_new, yk, pmax, pmin
    cdef Rng rng
    rng_seed(&rng, seed)
    with nogil:
        W0 = &W[0, 0]
        memset(W0, 0, (d + 1) * K * sizeof(double))
        for i in range(n):
            if loss == 1:
                upper[i] = cost[i]
                diag[i] = 0.0
            else:
                upper[i] = INFINITY
                diag[i] = 0.5 / cost[i] if cost[i] > 0.0 else 0.0
            nnz = rows_get(&X, i, &values, &ind)
            QD[i] = row_sq_norm(values, nnz) + bias * bias + diag[i]
            if cost[i] > 0.0:
                n_all += 1
            n_changed = 0
            for k in range(K):
                yk = 1.0 if codes[i] == positive[k] else -1.0
                ysg[i * K + k] = yk
                a = alpha[k, i]
                if cost[i] <= 0.0 or a < 0.0:
                    a = 0.0
                if a > upper[i]:
                    a = upper[i]
                A[i * K + k] = a
                if cost[i] > 0.0:
                    act[i * K + k] = 1
                    row_cnt[i] += 1
                if a != 0.0:
                    delta[k] = a * yk
                    changed[n_changed] = <int>k
                    n_changed += 1
            if n_changed:
                add_columns(W0, K, values, ind, nnz, bias, d, &delta[0], &changed[0],
                            n_changed)                          # w_k += a_ik s_ik x_i
        for k in range(K):
            n_act[k] = n_all
        if max_iter < 1 or n_all == 0:
            n_running = 0
            for k in range(K):
                running[k] = 0
        while n_running > 0:
            rng_shuffle32(&rng, &perm[0], n)          # the same order for every grouping
            for s in range(n):
                ahead = s + PREFETCH_AHEAD
                if ahead < n and row_cnt[perm[ahead]] > 0:
                    LINCLASS_PREFETCH(&A[perm[ahead] * K])
                    if X.indptr != NULL:
                        LINCLASS_PREFETCH(&X.data[X.indptr[perm[ahead]]])
                        LINCLASS_PREFETCH(&X.indices[X.indptr[perm[ahead]]])
                i = perm[s]
                if row_cnt[i] == 0:
                    continue
                na = 0
                for k in range(K):
                    if act[i * K + k]:
                        cls[na] = <int>k
                        na += 1
                nnz = rows_get(&X, i, &values, &ind)
                if na == K:
                    scores_all(W0, K, values, ind, nnz, bias, d, &S[0])
                else:
                    ovr_scores(W0, K, values, ind, nnz, bias, d, &cls[0], na, &S[0])
                n_changed = 0
                for c in range(na):
                    k = cls[c]
                    a = A[i * K + k]
                    yk = ysg[i * K + k]
                    G = yk * S[k] - 1.0 + diag[i] * a
                    PG = 0.0
                    if a == 0.0:
                        if shrinking and G > pgmax_old[k]:
                            act[i * K + k] = 0
                            row_cnt[i] -= 1
                            n_act[k] -= 1
                            continue
                        if G < 0.0:
                            PG = G
                    elif a >= upper[i]:
                        if shrinking and G < pgmin_old[k]:
                            act[i * K + k] = 0
                            row_cnt[i] -= 1
                            n_act[k] -= 1
                            continue
                        if G > 0.0:
                            PG = G
                    else:
                        PG = G
                    if PG > pgmax_new[k]:
                        pgmax_new[k] = PG
                    if PG < pgmin_new[k]:
                        pgmin_new[k] = PG
                    if fabs(PG) > 1e-12:
                        a_new = a - G / QD[i]                    # Newton step, then clip
                        if a_new < 0.0:
                            a_new = 0.0
                        elif a_new > upper[i]:
                            a_new = upper[i]
                        A[i * K + k] = a_new
                        delta[k] = (a_new - a) * yk
                        changed[n_changed] = <int>k
                        n_changed += 1
                if n_changed:
                    ovr_add(W0, K, values, ind, nnz, bias, d, &delta[0], &changed[0],
                            n_changed)                          # w_k += step_k x_i
            # end of the pass: each running problem's stopping test and shrinking
            for k in range(K):
                if not running[k]:
                    continue
                n_iter[k] += 1
                pmax = pgmax_new[k]
                pmin = pgmin_new[k]
                viol[k] = pmax - pmin
                pgmax_new[k] = -INFINITY
                pgmin_new[k] = INFINITY
                if viol[k] <= tol or n_iter[k] - last_full[k] >= UNSHRINK_PASSES:
                    if viol[k] <= tol and n_act[k] == n_all:
                        running[k] = 0                           # converged
                    else:
                        # check every variable again (as binary_dual_cd)
                        for i in range(n):
                            if cost[i] > 0.0 and not act[i * K + k]:
                                act[i * K + k] = 1
                                row_cnt[i] += 1
                        n_act[k] = n_all
                        last_full[k] = n_iter[k]
                        pgmax_old[k] = INFINITY
                        pgmin_old[k] = -INFINITY
                else:
                    pgmax_old[k] = pmax if pmax > 0.0 else INFINITY
                    pgmin_old[k] = pmin if pmin < 0.0 else -INFINITY
                if running[k] and (n_iter[k] >= max_iter or n_iter[k] >= FUSED_PASSES):
                    running[k] = 0                   # (max_iter, or go on alone below)
                if not running[k]:
                    n_running -= 1
                    for i in range(n):
                        if act[i * K + k]:
                            act[i * K + k] = 0
                            row_cnt[i] -= 1
        for i in range(n):
            for k in range(K):
                alpha[k, i] = A[i * K + k]
    # problems that have not converged after FUSED_PASSES passes: on alone
    cdef double[::1] w_solo
    cdef double[::1] y_solo
    cdef double[::1] var_view
    cdef int[::1] index
    cdef DualVar* var
    cdef Py_ssize_t j, n_active, passes
    cdef double violation
    for k in range(K):
        if n_iter[k] >= max_iter or viol[k] <= tol or n_all == 0:
            continue
        w_solo = np.ascontiguousarray(W[:, k])
        y_solo = np.ascontiguousarray(np.asarray(ysg).reshape(n, K)[:, k])
        var_view = np.empty(n * 4)
        index = np.empty(n, dtype=np.int32)
        var = <DualVar*>&var_view[0]
        rng_seed(&rng, seed ^ (<unsigned long long>(positive[k] + 1) * 0x9E3779B97F4A7C15ULL))
        with nogil:
            n_active = 0
            for i in range(n):
                var[i].alpha = alpha[k, i]
                var[i].QD = QD[i]
                var[i].upper = upper[i]
                var[i].diag = diag[i]
                if cost[i] > 0.0:
                    index[n_active] = <int>i
                    n_active += 1
            passes = binary_dual_cd(&X, &y_solo[0], var, bias, &w_solo[0], &index[0],
                                    n_active, tol, max_iter - n_iter[k], shrinking, &rng,
                                    &violation)
            n_iter[k] += passes
            viol[k] = violation
            for i in range(n):
                alpha[k, i] = var[i].alpha
            for j in range(d + 1):
                W[j, k] = w_solo[j]
    return n_iter_arr, viol_arr


# ------------------------------------- primal Newton, squared hinge --
#
#   min_w f(w) = 0.5 ||w||^2 + sum_i C_i max(0, 1 - s_i w.[x_i, bias])^2
#
# f is piecewise quadratic and continuously differentiable; with the active
# set I = {i : 1 - s_i z_i > 0} (z = X w) its gradient and generalised Hessian
# are
#   g = w - 2 sum_{i in I} C_i s_i (1 - s_i z_i) x_i,   H = 1 + 2 sum_{i in I} C_i x_i x_i^T.
# Each iteration solves H p = -g by conjugate gradients (to a relative
# residual CG_RTOL, one pass over the active rows per product) and moves along
# p by the exact minimiser of the piecewise-quadratic f(w + t p) (safeguarded
# Newton on its monotone, piecewise-linear derivative), keeping z current.
# This is the finite Newton method of Mangasarian (2002) and Keerthi & DeCoste
# (2005, JMLR 6, "A modified finite Newton method for fast solution of large
# scale linear SVMs"); LIBLINEAR hands its dual coordinate descent over to its
# primal Newton solver (-s 2) the same way when the dual stalls (Lin, Weng &
# Keerthi 2008 for the trust-region variant).

cdef enum:
    CG_MAX_ITER = 250

cdef double CG_RTOL = 0.1


cdef inline double xdot(const Rows* X, Py_ssize_t i, const double* v, double bias) noexcept nogil:
    """[x_i, bias] . v"""
    cdef const double* values
    cdef const int* ind
    cdef Py_ssize_t nnz = rows_get(X, i, &values, &ind)
    return row_dot(values, ind, nnz, v) + v[X.n_cols] * bias


cdef inline void xaxpy(const Rows* X, Py_ssize_t i, double a, double* v, double bias) noexcept nogil:
    """v += a [x_i, bias]"""
    cdef const double* values
    cdef const int* ind
    cdef Py_ssize_t nnz = rows_get(X, i, &values, &ind)
    row_axpy(a, values, ind, nnz, v)
    v[X.n_cols] += a * bias


cdef void l2svm_hess_vec(const Rows* X, const double* cost, const int* act,
                         Py_ssize_t n_act, double bias, const double* v, double* out) noexcept nogil:
    """out = v + 2 sum_{i in act} C_i (x_i . v) x_i"""
    cdef Py_ssize_t k, i, d1 = X.n_cols + 1
    for k in range(d1):
        out[k] = v[k]
    for k in range(n_act):
        i = act[k]
        xaxpy(X, i, 2.0 * cost[i] * xdot(X, i, v, bias), out, bias)


cdef double l2svm_line_derivative(Py_ssize_t n, const double* ysign, const double* cost,
                                  const double* z, const double* dz, double wp, double pp,
                                  double t, double* second) noexcept nogil:
    """phi'(t) of phi(t) = f(w + t p) (wp = w.p, pp = p.p); phi''(t) in second."""
    cdef Py_ssize_t i
    cdef double xi, der = wp + t * pp, sec = pp
    for i in range(n):
        if cost[i] > 0.0:
            xi = 1.0 - ysign[i] * (z[i] + t * dz[i])
            if xi > 0.0:
                der -= 2.0 * cost[i] * xi * ysign[i] * dz[i]
                sec += 2.0 * cost[i] * dz[i] * dz[i]
    second[0] = sec
    return der


def l2svm_newton(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                 Py_ssize_t n_features, const double[::1] ysign, const double[::1] cost,
                 double bias, double[::1] w, double[::1] alpha, double tol,
                 Py_ssize_t max_iter):
    """Primal finite Newton for the squared-hinge SVM, from ``w`` (in place).

    Stops when ``||g|| <= tol * ||g(0)||`` or after ``max_iter`` Newton
    iterations; writes the dual variables of the KKT conditions,
    ``alpha_i = 2 C_i max(0, 1 - s_i w.[x_i, bias])``, into ``alpha``.
    Returns ``(n_newton, n_cg, ||g|| / ||g(0)||)``.
    """
    if w.shape[0] != n_features + 1 or alpha.shape[0] != n_samples \
            or ysign.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1:
        raise ValueError("l2svm_newton: inconsistent array shapes")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef Py_ssize_t d1 = n_features + 1, n = n_samples
    z_arr = np.empty(n)
    dz_arr = np.empty(n)
    act_arr = np.empty(n, dtype=np.int32)
    vec_arr = np.zeros((5, d1))
    cdef double[::1] z = z_arr, dz = dz_arr
    cdef int[::1] act = act_arr
    cdef double[:, ::1] vec = vec_arr
    cdef double* g = &vec[0, 0]
    cdef double* p = &vec[1, 0]
    cdef double* r = &vec[2, 0]
    cdef double* q = &vec[3, 0]
    cdef double* Hq = &vec[4, 0]
    cdef Py_ssize_t i, k, it = 0, n_cg = 0, n_act, cg_it, ls
    cdef double xi, gnorm0 = 0.0, gnorm, rr, rr_new, qHq, a, beta
    cdef double wp, pp, t, lo, hi, der, sec, t_new, der0
    with nogil:
        # ||g(0)||: g(0) = -2 sum_i C_i s_i [x_i, bias]
        for i in range(n):
            if cost[i] > 0.0:
                xaxpy(&X, i, -2.0 * cost[i] * ysign[i], g, bias)
        for k in range(d1):
            gnorm0 += g[k] * g[k]
        gnorm0 = sqrt(gnorm0)
        for i in range(n):
            z[i] = xdot(&X, i, &w[0], bias)
        while True:
            # gradient on the active set
            n_act = 0
            for k in range(d1):
                g[k] = w[k]
            for i in range(n):
                if cost[i] > 0.0:
                    xi = 1.0 - ysign[i] * z[i]
                    if xi > 0.0:
                        act[n_act] = <int>i
                        n_act += 1
                        xaxpy(&X, i, -2.0 * cost[i] * ysign[i] * xi, g, bias)
            gnorm = 0.0
            for k in range(d1):
                gnorm += g[k] * g[k]
            gnorm = sqrt(gnorm)
            if gnorm <= tol * gnorm0 or it >= max_iter:
                break
            it += 1
            # CG on H p = -g
            rr = 0.0
            for k in range(d1):
                p[k] = 0.0
                r[k] = -g[k]
                q[k] = r[k]
                rr += r[k] * r[k]
            cg_it = 0
            while cg_it < CG_MAX_ITER and sqrt(rr) > CG_RTOL * gnorm:
                l2svm_hess_vec(&X, &cost[0], &act[0], n_act, bias, q, Hq)
                qHq = 0.0
                for k in range(d1):
                    qHq += q[k] * Hq[k]
                a = rr / qHq
                rr_new = 0.0
                for k in range(d1):
                    p[k] += a * q[k]
                    r[k] -= a * Hq[k]
                    rr_new += r[k] * r[k]
                beta = rr_new / rr
                rr = rr_new
                for k in range(d1):
                    q[k] = r[k] + beta * q[k]
                cg_it += 1
            n_cg += cg_it
            # exact line search along p: phi'(t) = 0, bracketed
            wp = 0.0
            pp = 0.0
            for k in range(d1):
                wp += w[k] * p[k]
                pp += p[k] * p[k]
            for i in range(n):
                dz[i] = xdot(&X, i, p, bias)
            der0 = l2svm_line_derivative(n, &ysign[0], &cost[0], &z[0], &dz[0], wp, pp,
                                         0.0, &sec)
            if not der0 < 0.0:                  # no descent left (rounding floor)
                break
            lo = 0.0
            hi = 1.0
            while l2svm_line_derivative(n, &ysign[0], &cost[0], &z[0], &dz[0], wp, pp,
                                        hi, &sec) < 0.0 and hi < 1e10:
                lo = hi
                hi *= 2.0
            t = hi
            for ls in range(100):
                der = l2svm_line_derivative(n, &ysign[0], &cost[0], &z[0], &dz[0], wp,
                                            pp, t, &sec)
                if fabs(der) <= 1e-12 * fabs(der0):
                    break
                if der < 0.0:
                    lo = t
                else:
                    hi = t
                t_new = t - der / sec
                if not (t_new > lo and t_new < hi):
                    t_new = 0.5 * (lo + hi)
                if t_new == t:
                    break
                t = t_new
            for k in range(d1):
                w[k] += t * p[k]
            for i in range(n):
                z[i] += t * dz[i]
        for i in range(n):
            xi = 1.0 - ysign[i] * z[i]
            alpha[i] = 2.0 * cost[i] * xi if (xi > 0.0 and cost[i] > 0.0) else 0.0
    return it, n_cg, (gnorm / gnorm0 if gnorm0 > 0.0 else 0.0)


# ------------------------------------------------------------- Pegasos --

def pegasos_svc(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                Py_ssize_t n_features, const double[::1] ysign, const double[::1] cost,
                double lam, int loss, double bias, double[::1] w, double t_start,
                Py_ssize_t n_epochs, bint project, double radius2, unsigned long long seed):
    """Pegasos epochs on ``w`` (n_features + 1, last entry the bias weight).

    Minimises ``lam/2 ||w||^2 + 1/n sum_i cost_i loss(s_i w.[x_i, bias])`` with
    ``loss`` 1 (hinge) or 2 (squared hinge); ``t_start`` is the number of
    steps already taken (warm start).  Returns the new step count.
    """
    if w.shape[0] != n_features + 1 or ysign.shape[0] != n_samples \
            or cost.shape[0] != n_samples or n_samples < 1:
        raise ValueError("pegasos_svc: inconsistent array shapes")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    order_arr = np.arange(n_samples, dtype=np.int32)
    cdef int[::1] order = order_arr
    cdef Py_ssize_t epoch, k, i, nnz, d = n_features
    cdef const double* values
    cdef const int* ind
    cdef double t = t_start, eta, margin, g, old
    cdef ScaledWeights v
    cdef Rng rng
    rng_seed(&rng, seed)
    with nogil:
        sw_init(&v, &w[0], n_features + 1)
        for epoch in range(n_epochs):
            rng_shuffle(&rng, &order[0], n_samples)
            for k in range(n_samples):
                i = order[k]
                t += 1.0
                eta = 1.0 / (lam * t)
                nnz = rows_get(&X, i, &values, &ind)
                margin = ysign[i] * (sw_dot(&v, values, ind, nnz) + v.scale * v.w[d] * bias)
                sw_scale(&v, 1.0 - eta * lam)                      # w *= 1 - eta lam
                if margin < 1.0 and cost[i] > 0.0:
                    g = cost[i] if loss == 1 else 2.0 * cost[i] * (1.0 - margin)
                    g *= eta * ysign[i]
                    sw_add(&v, g, values, ind, nnz)                # w += g x_i
                    old = v.w[d]
                    v.w[d] = old + g * bias / v.scale              # bias weight += g bias
                    v.sq_norm += 2.0 * g * bias * v.scale * old + g * g * bias * bias
                if project and v.sq_norm > radius2:
                    sw_scale(&v, sqrt(radius2 / v.sq_norm))        # project onto the ball
        sw_reset_scale(&v)
    return t


# ------------------------------------------------ multi-class helpers --

cdef void scores_all(const double* W, Py_ssize_t K, const double* values, const int* indices,
                     Py_ssize_t nnz, double bias, Py_ssize_t d, double* out) noexcept nogil:
    """out[:K] = [x, bias] @ W      (W is (d + 1, K) row-major)"""
    cdef Py_ssize_t k, m
    cdef const double* wrow
    cdef double v
    for m in range(K):
        out[m] = bias * W[d * K + m]
    if indices == NULL:
        for k in range(nnz):
            wrow = W + k * K
            v = values[k]
            for m in range(K):
                out[m] += v * wrow[m]
        return
    for k in range(nnz if nnz < PREFETCH_AHEAD else PREFETCH_AHEAD):
        prefetch_row(W + indices[k] * K, K)
    for k in range(nnz):
        if k + PREFETCH_AHEAD < nnz:
            prefetch_row(W + indices[k + PREFETCH_AHEAD] * K, K)
        wrow = W + indices[k] * K
        v = values[k]
        for m in range(K):
            out[m] += v * wrow[m]


cdef void add_columns(double* W, Py_ssize_t K, const double* values, const int* indices,
                      Py_ssize_t nnz, double bias, Py_ssize_t d, const double* delta,
                      const int* changed, Py_ssize_t n_changed) noexcept nogil:
    """W[:, m] += delta[m] * [x, bias] for m in changed"""
    cdef Py_ssize_t k, c, m
    cdef double* wrow
    cdef double v
    for k in range(nnz):
        wrow = W + (k if indices == NULL else indices[k]) * K
        v = values[k]
        for c in range(n_changed):
            m = changed[c]
            wrow[m] += delta[m] * v
    for c in range(n_changed):
        m = changed[c]
        W[d * K + m] += delta[m] * bias


cdef int compare_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    if x > y:
        return -1
    if x < y:
        return 1
    return 0


cdef inline void sort_desc(double* a, Py_ssize_t n) noexcept nogil:
    """Sort a[:n] in decreasing order: insertion sort for the few values of an
    example's active classes, qsort beyond 32."""
    cdef Py_ssize_t i, j
    cdef double v
    if n > 32:
        qsort(a, n, sizeof(double), compare_desc)
        return
    for i in range(1, n):
        v = a[i]
        j = i
        while j > 0 and a[j - 1] < v:
            a[j] = a[j - 1]
            j -= 1
        a[j] = v


# -------------------------------------------------------- Crammer-Singer --

cdef void cs_subproblem(double A, Py_ssize_t n_active, Py_ssize_t y_pos, double Ci,
                        const double* B, double* D, double* alpha_new) noexcept nogil:
    """argmin_a 0.5 A ||a||^2 + B.a  s.t. a_m <= C_i [m = y_pos], sum_m a_m = -s
    over the ``n_active`` active classes of one example, where ``s`` is C_i when
    the true class is shrunk (``y_pos >= n_active``: its variable sits at C_i,
    every other shrunk variable at 0) and 0 otherwise.

    Closed form (Crammer & Singer 2001, sec. 6; Keerthi et al. 2008):
    a_m = min(C_i [m = y_pos], (beta - B_m) / A) with beta found on the sorted
    values D = B + A C_i e_{y_pos}."""
    cdef Py_ssize_t r, m
    cdef double beta, value
    for m in range(n_active):
        D[m] = B[m]
    if y_pos < n_active:
        D[y_pos] += A * Ci
    sort_desc(D, n_active)
    beta = D[0] - A * Ci
    r = 1
    while r < n_active and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for m in range(n_active):
        value = (beta - B[m]) / A
        if m == y_pos:
            if value > Ci:
                value = Ci
        elif value > 0.0:
            value = 0.0
        alpha_new[m] = value


cdef inline bint cs_can_shrink(double alpha_im, double bound, double G_m,
                               double minG) noexcept nogil:
    """A variable at its upper bound whose gradient is below every gradient of
    a variable that may still grow will not move (LIBLINEAR's be_shrunk)."""
    return alpha_im == bound and G_m < minG


def crammer_singer(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                   Py_ssize_t n_features, const int[::1] y, const double[::1] cost,
                   double bias, double[:, ::1] W, double[:, ::1] alpha, double tol,
                   Py_ssize_t max_iter, unsigned long long seed, bint shrinking=True):
    """Crammer-Singer multi-class SVM dual by sequential block updates.

    Dual (one block a_i in R^K per example):
        min 0.5 sum_m ||w_m||^2 + sum_i sum_{m != y_i} a_im
        s.t. a_im <= C_i [m = y_i], sum_m a_im = 0,  w_m = sum_i a_im [x_i, bias]
    ``W`` is (n_features + 1, K), rebuilt from ``alpha`` (n_samples, K) first.

    Shrinking (Keerthi et al. 2008, sec. 4; LIBLINEAR's Solver_MCSVM_CS): each
    example keeps its active classes first in a permutation ``class_order[i]``
    (``n_active[i]`` of them; ``y_pos[i]`` is where its true class sits).  A
    variable at its bound whose gradient is below the smallest gradient of the
    variables that can still grow leaves the example's active set; an example
    left with one active class leaves the pass.  Scores, sub-problem and the
    update of ``W`` touch the active classes only.  When the largest violation
    of a pass over the active examples drops below ``eps_shrink``, everything is
    made active again and ``eps_shrink`` halves (down to ``tol``); the solver
    stops only when a pass over all examples and classes is below ``tol``.
    Without shrinking every pass is such a full pass.

    Stops when max_i (max_m G_im - min_{m: a_im < bound} G_im) <= tol.
    Returns (n_passes, max_violation of the last pass).
    """
    cdef Py_ssize_t K = W.shape[1]
    if W.shape[0] != n_features + 1 or alpha.shape[0] != n_samples or alpha.shape[1] != K \
            or y.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1 or K < 2:
        raise ValueError("crammer_singer: inconsistent array shapes")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef double[::1] G = np.zeros(K), S = np.zeros(K), B = np.zeros(K), D = np.zeros(K)
    cdef double[::1] a_new = np.zeros(K), delta = np.zeros(K), sqn = np.zeros(n_samples)
    cdef int[::1] changed = np.zeros(K, dtype=np.int32)
    cdef int[::1] order = np.arange(n_samples, dtype=np.int32)
    cdef int[:, ::1] class_order = np.empty((n_samples, K), dtype=np.int32)
    cdef int[::1] n_active = np.full(n_samples, K, dtype=np.int32)
    cdef int[::1] y_pos = np.empty(n_samples, dtype=np.int32)
    cdef Py_ssize_t it = 0, s, i, m, c, k, nnz, n_changed, act, yp, tmp_pos
    cdef Py_ssize_t d = n_features, active_examples = n_samples
    cdef const double* values
    cdef const int* ind
    cdef const double* wrow
    cdef double* W0
    cdef double* a_i
    cdef int* cls
    cdef double A, Ci, v, maxG, minG, bound, stopping = INFINITY, tmp_d
    cdef double eps_shrink = tol
    cdef bint full_pass = True
    cdef int tmp_i
    cdef Rng rng
    if shrinking:
        eps_shrink = 10.0 * tol if 10.0 * tol > 1.0 else 1.0
    rng_seed(&rng, seed)
    with nogil:
        W0 = &W[0, 0]
        memset(W0, 0, (d + 1) * K * sizeof(double))
        for i in range(n_samples):
            for m in range(K):
                class_order[i, m] = <int>m
            y_pos[i] = y[i]
            nnz = rows_get(&X, i, &values, &ind)
            sqn[i] = row_sq_norm(values, nnz) + bias * bias
            n_changed = 0
            for m in range(K):
                if alpha[i, m] != 0.0:
                    delta[m] = alpha[i, m]
                    changed[n_changed] = <int>m
                    n_changed += 1
            if n_changed:
                add_columns(W0, K, values, ind, nnz, bias, d, &delta[0],
                            &changed[0], n_changed)        # W[:, m] += a_im x_i
        while it < max_iter:
            stopping = 0.0
            rng_shuffle(&rng, &order[0], active_examples)
            s = 0
            while s < active_examples:
                i = order[s]
                A = sqn[i]
                Ci = cost[i]
                if Ci <= 0.0 or A <= 0.0:
                    s += 1
                    continue
                a_i = &alpha[i, 0]
                cls = &class_order[i, 0]
                act = n_active[i]
                yp = y_pos[i]
                nnz = rows_get(&X, i, &values, &ind)
                # G[c] = 1[class != y_i] + w_class . [x_i, bias] over the active classes
                if 2 * act >= K:           # most classes: contiguous scores, then gather
                    scores_all(W0, K, values, ind, nnz, bias, d, &S[0])
                    for c in range(act):
                        G[c] = S[cls[c]] + 1.0
                else:
                    for c in range(act):
                        G[c] = 1.0 + bias * W0[d * K + cls[c]]
                    for k in range(nnz):
                        if ind != NULL and k + PREFETCH_AHEAD < nnz:
                            prefetch_row(W0 + ind[k + PREFETCH_AHEAD] * K, K)
                        wrow = W0 + (k if ind == NULL else ind[k]) * K
                        v = values[k]
                        for c in range(act):
                            G[c] += v * wrow[cls[c]]
                if yp < act:
                    G[yp] -= 1.0
                maxG = -INFINITY
                minG = INFINITY
                for c in range(act):
                    bound = Ci if c == yp else 0.0
                    if G[c] > maxG:
                        maxG = G[c]
                    if a_i[cls[c]] < bound and G[c] < minG:
                        minG = G[c]
                if shrinking:
                    c = 0
                    while c < act:
                        bound = Ci if c == yp else 0.0
                        if cs_can_shrink(a_i[cls[c]], bound, G[c], minG):
                            act -= 1             # swap the last active class into c
                            if c != act:
                                tmp_i = cls[c]
                                cls[c] = cls[act]
                                cls[act] = tmp_i
                                tmp_d = G[c]
                                G[c] = G[act]
                                G[act] = tmp_d
                                if yp == act:
                                    yp = c
                                elif yp == c:
                                    yp = act
                        else:
                            c += 1
                    n_active[i] = <int>act
                    y_pos[i] = <int>yp
                    if act <= 1:                  # nothing left to move: leave the pass
                        active_examples -= 1
                        tmp_i = order[s]
                        order[s] = order[active_examples]
                        order[active_examples] = tmp_i
                        continue
                if maxG - minG <= 1e-12:
                    s += 1
                    continue
                if maxG - minG > stopping:
                    stopping = maxG - minG
                for c in range(act):
                    B[c] = G[c] - A * a_i[cls[c]]
                cs_subproblem(A, act, yp, Ci, &B[0], &D[0], &a_new[0])
                n_changed = 0
                for c in range(act):
                    m = cls[c]
                    v = a_new[c] - a_i[m]
                    a_i[m] = a_new[c]
                    if fabs(v) >= 1e-12:
                        delta[m] = v
                        changed[n_changed] = <int>m
                        n_changed += 1
                if n_changed:
                    add_columns(W0, K, values, ind, nnz, bias, d, &delta[0],
                                &changed[0], n_changed)        # W[:, m] += delta_m x_i
                s += 1
            it += 1
            if stopping <= eps_shrink:
                if stopping <= tol and full_pass:
                    break
                # un-shrink: the next pass visits every example and class
                active_examples = n_samples
                for i in range(n_samples):
                    n_active[i] = <int>K
                eps_shrink = eps_shrink / 2.0 if eps_shrink / 2.0 > tol else tol
                full_pass = True
            else:
                full_pass = not shrinking
    return it, stopping


# -------------------------------------------------------- Weston-Watkins --

def weston_watkins(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                   Py_ssize_t n_features, const int[::1] y, const double[::1] cost,
                   double bias, double[:, ::1] W, double[:, ::1] alpha, double tol,
                   Py_ssize_t max_iter, Py_ssize_t inner_sweeps, unsigned long long seed):
    """Weston-Watkins multi-class SVM dual by block coordinate descent.

    Dual: min 0.5 sum_m ||w_m||^2 - sum_i sum_{m != y_i} a_im, 0 <= a_im <= C_i
    (alpha[i, y_i] is unused and kept 0).  ``W`` (n_features + 1, K) is rebuilt
    from ``alpha`` first.  Each visit of example i makes up to ``inner_sweeps``
    exact coordinate sweeps over its K - 1 variables.  Stops when the largest
    projected gradient of a pass is <= tol.  Returns (n_passes, max_violation).
    """
    cdef Py_ssize_t K = W.shape[1]
    if W.shape[0] != n_features + 1 or alpha.shape[0] != n_samples or alpha.shape[1] != K \
            or y.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1 or K < 2:
        raise ValueError("weston_watkins: inconsistent array shapes")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef double[::1] s = np.zeros(K), delta = np.zeros(K), sqn = np.zeros(n_samples)
    cdef int[::1] changed = np.zeros(K, dtype=np.int32)
    cdef int[::1] order = np.arange(n_samples, dtype=np.int32)
    cdef Py_ssize_t it = 0, k, i, m, nnz, n_changed, sweep, d = n_features
    cdef int yi
    cdef const double* values
    cdef const int* ind
    cdef double q, g, pg, a, step, total, worst = INFINITY, sweep_change
    cdef Rng rng
    rng_seed(&rng, seed)
    with nogil:
        memset(&W[0, 0], 0, (d + 1) * K * sizeof(double))
        for i in range(n_samples):
            nnz = rows_get(&X, i, &values, &ind)
            sqn[i] = row_sq_norm(values, nnz) + bias * bias
            alpha[i, y[i]] = 0.0
            total = 0.0
            n_changed = 0
            for m in range(K):
                delta[m] = 0.0
                if alpha[i, m] != 0.0:
                    delta[m] = -alpha[i, m]
                    total += alpha[i, m]
                    changed[n_changed] = <int>m
                    n_changed += 1
            if n_changed:
                delta[y[i]] = total
                changed[n_changed] = y[i]
                n_changed += 1
                add_columns(&W[0, 0], K, values, ind, nnz, bias, d, &delta[0],
                            &changed[0], n_changed)
        while it < max_iter:
            worst = 0.0
            rng_shuffle(&rng, &order[0], n_samples)
            for k in range(n_samples):
                i = order[k]
                q = sqn[i]
                yi = y[i]
                if cost[i] <= 0.0 or q <= 0.0:
                    continue
                nnz = rows_get(&X, i, &values, &ind)
                scores_all(&W[0, 0], K, values, ind, nnz, bias, d, &s[0])   # s = W^T x_i
                for m in range(K):
                    delta[m] = 0.0
                for sweep in range(inner_sweeps):
                    sweep_change = 0.0
                    for m in range(K):
                        if m == yi:
                            continue
                        a = alpha[i, m]
                        g = s[yi] - s[m] - 1.0           # d dual / d a_im
                        if a <= 0.0:
                            pg = g if g < 0.0 else 0.0
                        elif a >= cost[i]:
                            pg = g if g > 0.0 else 0.0
                        else:
                            pg = g
                        if sweep == 0 and fabs(pg) > worst:
                            worst = fabs(pg)
                        if pg == 0.0:
                            continue
                        a = a - g / (2.0 * q)
                        if a < 0.0:
                            a = 0.0
                        elif a > cost[i]:
                            a = cost[i]
                        step = a - alpha[i, m]
                        alpha[i, m] = a
                        s[yi] += step * q                    # w_y += step x_i
                        s[m] -= step * q                     # w_m -= step x_i
                        delta[yi] += step
                        delta[m] -= step
                        if fabs(step) > sweep_change:
                            sweep_change = fabs(step)
                    if sweep_change <= 1e-12:
                        break
                n_changed = 0
                for m in range(K):
                    if delta[m] != 0.0:
                        changed[n_changed] = <int>m
                        n_changed += 1
                if n_changed:
                    add_columns(&W[0, 0], K, values, ind, nnz, bias, d, &delta[0],
                                &changed[0], n_changed)
            it += 1
            if worst <= tol:
                break
    return it, worst
