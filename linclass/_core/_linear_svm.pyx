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
from libc.stdlib cimport qsort, malloc, free
from libc.string cimport memset
from libc.stdint cimport uint64_t

import numpy as np

from linclass._core._rows cimport (Rows, rows_get, row_dot, row_axpy, row_sq_norm,
                                   rows_unit_values, row_axpy_unit,
                                   row_dot_split, row_dot_split_unit)
from linclass._core._rowsview cimport rows_from_views
from linclass._core._weights cimport ScaledWeights, sw_init, sw_dot, sw_add, sw_scale, sw_reset_scale
from linclass._core._random cimport Rng, rng_seed, rng_shuffle, rng_shuffle32, splitmix64
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
    UNSHRINK_PASSES = 100      # passes before the first forced check of every variable



cdef enum:
    SUBSPACE_CG = 5            # conjugate-gradient steps of one free-set step


cdef inline double cg_update(Py_ssize_t n, double a, double rr, double* x, double* r,
                             double* d, const double* Hd) noexcept nogil:
    """One conjugate-gradient update after the step length ``a``: x += a d,
    r -= a Hd, then the next direction d = r + (r.r / rr) d; returns r.r
    (the free-set step and the primal Newton finish share it)."""
    cdef Py_ssize_t k
    cdef double rr_new = 0.0, beta
    for k in range(n):
        x[k] += a * d[k]
        r[k] -= a * Hd[k]
        rr_new += r[k] * r[k]
    beta = rr_new / rr
    for k in range(n):
        d[k] = r[k] + beta * d[k]
    return rr_new


cdef inline double zdot(const Rows* X, Py_ssize_t i, const double* u,
                        double bias) noexcept nogil:
    """[x_i, bias] . u"""
    cdef const double* values
    cdef const int* indices
    cdef Py_ssize_t nnz = rows_get(X, i, &values, &indices)
    return row_dot_split(values, indices, nnz, u) + u[X.n_cols] * bias


cdef inline void zaxpy(const Rows* X, Py_ssize_t i, double a, double* u,
                       double bias) noexcept nogil:
    """u += a [x_i, bias]"""
    cdef const double* values
    cdef const int* indices
    cdef Py_ssize_t nnz = rows_get(X, i, &values, &indices)
    row_axpy(a, values, indices, nnz, u)
    u[X.n_cols] += a * bias


cdef bint free_set_step(const Rows* X, const double* ysign, DualVar* var, double bias,
                        double* w, const int* index, Py_ssize_t active) noexcept nogil:
    """One step of the dual on its free variables F (0 < alpha_i < U_i among
    the active ones): SUBSPACE_CG conjugate-gradient steps on
    (Q_FF + D_F) d = -G_F from d = 0 (one product costs a walk over the rows
    of F: u = sum_i d_i s_i z_i, then s_i z_i . u), the change projected onto
    the box, then the exact minimiser of the dual along the projected change
    (at most the whole change, so it stays in the box); w follows alpha.
    Skipped (returns False) when F has fewer than 2 rows or more than half as
    many rows as [x, bias] has columns (Q_FF is then singular or nearly so,
    and the projected change mostly moves along its null space), or when the
    change does not descend.

    Coordinate descent on the hinge's dual spends most of its passes on a
    free set that changes little, converging linearly at a rate set by the
    conditioning of Q_FF; a few CG steps move all of F at once along the
    directions CD is slow on."""
    cdef Py_ssize_t nf = 0, s, i, c, t, d1 = X.n_cols + 1
    cdef int* F
    cdef double* buf
    cdef double* u
    cdef double* g
    cdef double* dd
    cdef double* r
    cdef double* pp
    cdef double* q
    cdef double rr, rr0, pq, a, gdel, dqd, step, x
    cdef bint ok = False
    for s in range(active):
        i = index[s]
        if var[i].alpha > 0.0 and var[i].alpha < var[i].upper:
            nf += 1
    if nf < 2 or 2 * nf > d1:
        return False
    F = <int*>malloc(nf * sizeof(int))
    buf = <double*>malloc(5 * nf * sizeof(double))
    u = <double*>malloc(d1 * sizeof(double))
    if F == NULL or buf == NULL or u == NULL:
        free(F)
        free(buf)
        free(u)
        return False
    g = buf
    dd = buf + nf
    r = buf + 2 * nf
    pp = buf + 3 * nf
    q = buf + 4 * nf
    nf = 0
    for s in range(active):
        i = index[s]
        if var[i].alpha > 0.0 and var[i].alpha < var[i].upper:
            F[nf] = <int>i
            nf += 1
    # G_F, the dual gradient on F, and CG from d = 0 (residual r = -G_F)
    rr = 0.0
    for c in range(nf):
        i = F[c]
        g[c] = ysign[i] * zdot(X, i, w, bias) - 1.0 + var[i].diag * var[i].alpha
        dd[c] = 0.0
        r[c] = -g[c]
        pp[c] = r[c]
        rr += r[c] * r[c]
    rr0 = rr
    for t in range(SUBSPACE_CG):
        if rr <= 1e-12 * rr0 or rr == 0.0:
            break
        memset(u, 0, d1 * sizeof(double))
        for c in range(nf):
            if pp[c] != 0.0:
                zaxpy(X, F[c], pp[c] * ysign[F[c]], u, bias)
        pq = 0.0
        for c in range(nf):
            i = F[c]
            q[c] = ysign[i] * zdot(X, i, u, bias) + var[i].diag * pp[c]
            pq += pp[c] * q[c]
        if pq <= 0.0:
            break
        a = rr / pq
        rr = cg_update(nf, a, rr, dd, r, pp, q)
    # the change projected onto the box, u = its w change, and the dual along it:
    # f(step) - f(0) = step G.delta + step^2 / 2 (|u|^2 + sum D delta^2)
    memset(u, 0, d1 * sizeof(double))
    gdel = 0.0
    dqd = 0.0
    for c in range(nf):
        i = F[c]
        x = var[i].alpha + dd[c]
        if x < 0.0:
            x = 0.0
        elif x > var[i].upper:
            x = var[i].upper
        dd[c] = x - var[i].alpha
        gdel += g[c] * dd[c]
        dqd += var[i].diag * dd[c] * dd[c]
        if dd[c] != 0.0:
            zaxpy(X, i, dd[c] * ysign[i], u, bias)
    for c in range(d1):
        dqd += u[c] * u[c]
    if gdel < 0.0 and dqd > 0.0:
        step = -gdel / dqd
        if step > 1.0:
            step = 1.0
        for c in range(nf):
            i = F[c]
            x = var[i].alpha + step * dd[c]       # inside the box (a convex combination)
            if x < 0.0:
                x = 0.0
            elif x > var[i].upper:
                x = var[i].upper
            var[i].alpha = x
        for c in range(d1):
            w[c] += step * u[c]
        ok = True
    free(F)
    free(buf)
    free(u)
    return ok


cdef Py_ssize_t binary_dual_cd(const Rows* X, const double* ysign, DualVar* var,
                               double bias, double* w, int* index, Py_ssize_t n_active_all,
                               double tol, Py_ssize_t max_iter, bint shrinking, Rng* rng,
                               double* violation, Py_ssize_t it0=0, Py_ssize_t active0=-1,
                               Py_ssize_t last_full0=0,
                               Py_ssize_t unshrink_after0=UNSHRINK_PASSES,
                               double PGmax_old0=INFINITY,
                               double PGmin_old0=-INFINITY,
                               double relax=1.0,
                               Py_ssize_t subspace_every=0,
                               bint unit_x=False) noexcept nogil:
    """Dual CD passes until max PG - min PG <= tol on all variables; returns passes.

    Each step moves ``relax`` times the exact minimiser along the coordinate
    (then clips to the box): 1 is plain coordinate descent, 1 < relax < 2 the
    projected successive over-relaxation of Mangasarian & Musicant (1999),
    which converges for any relax in (0, 2) and, on the squared hinge's
    unbounded duals, needs fewer passes (see ``dual_cd_svc``).

    ``subspace_every`` > 0: after every pass number divisible by it (not
    a pass that ends in a check of all variables), one `free_set_step`.

    The next rows of the permutation are prefetched (their DualVar and CSR
    extent PREFETCH_AHEAD visits ahead, their entries two visits ahead).
    The optional arguments resume a run (the fused one-vs-rest solver hands
    its classes over): passes done, the active rows (the first ``active0`` of
    ``index``; -1: all), the shrinking thresholds and un-shrink schedule.
    ``unit_x``: X is CSR with every stored value 1.0 (`rows_unit_values`):
    the steps read only the column indices (the same bits)."""
    cdef Py_ssize_t it = it0, s, i, nnz, ahead, last_full = last_full0
    cdef Py_ssize_t active = n_active_all if active0 < 0 else active0
    cdef Py_ssize_t unshrink_after = unshrink_after0
    cdef Py_ssize_t d = X.n_cols
    cdef int tmp
    cdef const double* values
    cdef const int* indices
    cdef double G, PG, old, step, a_new
    cdef double PGmax_old = PGmax_old0, PGmin_old = PGmin_old0
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
                if not unit_x:
                    LINCLASS_PREFETCH(&X.data[X.indptr[i]])
                LINCLASS_PREFETCH(&X.indices[X.indptr[i]])
            i = index[s]
            v = &var[i]
            nnz = rows_get(X, i, &values, &indices)
            # G = s_i (w . x_i) - 1 + D_ii a_i     (gradient of the dual in a_i)
            if unit_x:
                G = ysign[i] * (row_dot_split_unit(indices, nnz, w) + w[d] * bias) - 1.0 \
                    + v.diag * v.alpha
            else:
                G = ysign[i] * (row_dot_split(values, indices, nnz, w) + w[d] * bias) - 1.0 \
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
                a_new = old - relax * G / v.QD         # (relaxed) Newton step, then clip
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > v.upper:
                    a_new = v.upper
                v.alpha = a_new
                step = (a_new - old) * ysign[i]
                if unit_x:
                    row_axpy_unit(step, indices, nnz, w)             # w += step * x_i
                else:
                    row_axpy(step, values, indices, nnz, w)          # w += step * x_i
                w[d] += step * bias
            s += 1
        it += 1
        violation[0] = PGmax_new - PGmin_new
        if violation[0] <= tol or it - last_full >= unshrink_after:
            if violation[0] <= tol and active == n_active_all:
                break
            # verify all variables; also after UNSHRINK_PASSES passes without
            # such a check, so that a variable shrunk by mistake comes back when
            # the active set cannot reach tol (a tol at the rounding floor stalled
            # 3e-7 above the optimum).  Each forced check doubles the wait for the
            # next: a full pass un-shrinks everything and the active set takes
            # passes to shrink again (checks every 100 passes cost the hinge on
            # a9a 14% more updates to reach a given primal objective)
            if violation[0] > tol:
                unshrink_after *= 2
            active = n_active_all
            last_full = it
            PGmax_old = INFINITY
            PGmin_old = -INFINITY
            continue
        PGmax_old = PGmax_new if PGmax_new > 0.0 else INFINITY
        PGmin_old = PGmin_new if PGmin_new < 0.0 else -INFINITY
        if subspace_every > 0 and it % subspace_every == 0:
            free_set_step(X, ysign, var, bias, w, index, active)
    return it


def dual_cd_svc(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                Py_ssize_t n_features, const double[::1] ysign, const double[::1] cost,
                int loss, double bias, double[::1] w, double[::1] alpha, double tol,
                Py_ssize_t max_iter, bint shrinking, unsigned long long seed,
                const double[::1] sq_norms=None, double relax=1.0,
                Py_ssize_t subspace_every=0, unit_x=None):
    """Binary linear SVM by dual coordinate descent, in place on ``w``/``alpha``.

    ``ysign`` is +-1 per sample, ``cost`` the per-sample C (C x class weight x
    sample weight, >= 0; samples with cost 0 are left out), ``loss`` 1 (hinge)
    or 2 (squared hinge), ``bias`` the value of the constant feature (0 = no
    bias).  ``w`` has n_features + 1 entries (last: bias weight) and is
    rebuilt from ``alpha`` (the warm start) before the first pass.
    ``sq_norms``: ``x_i . x_i`` per sample (:func:`row_sq_norms`, computed
    once for all the one-vs-rest problems of a fit), else computed here.
    ``relax`` in (0, 2): the step is ``relax`` times the exact coordinate
    minimiser, clipped to the box (projected SOR, Mangasarian & Musicant
    1999; 1 = plain coordinate descent).  The stopping test is unchanged (it
    reads the projected gradient before the step).
    ``subspace_every`` (>= 0; 0: never): after every pass whose number it
    divides, a step on the free variables together (a few conjugate-gradient
    steps on their sub-problem, projected onto the box, exact line search;
    skipped when they are more than half as many as the columns of
    [x, bias]).  The stopping test is the same, so is the optimum.
    ``unit_x``: None (or True) detects a CSR matrix whose stored values are
    all 1.0 (then the coordinate steps read only its column indices: the same
    bits); False always reads the values (for tests).

    Returns (n_passes, max_violation).
    """
    if w.shape[0] != n_features + 1 or alpha.shape[0] != n_samples \
            or ysign.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1 \
            or (sq_norms is not None and sq_norms.shape[0] != n_samples):
        raise ValueError("dual_cd_svc: inconsistent array shapes")
    if loss != 1 and loss != 2:
        raise ValueError("loss must be 1 or 2")
    if not 0.0 < relax < 2.0:
        raise ValueError("relax must be in (0, 2), got %r" % (relax,))
    if subspace_every < 0:
        raise ValueError("subspace_every must be >= 0, got %d" % subspace_every)
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    var_arr = np.empty(n_samples * 4)                  # DualVar[n_samples]
    index_arr = np.empty(n_samples, dtype=np.int32)
    cdef double[::1] var_view = var_arr
    cdef DualVar* var = <DualVar*>&var_view[0]
    cdef int[::1] index = index_arr
    cdef Py_ssize_t i, nnz, n_active = 0, n_iter
    cdef const double* values
    cdef const int* ind
    cdef double violation = 0.0, sq
    cdef bint have_norms = sq_norms is not None
    cdef bint index_only = unit_x is None or bool(unit_x)
    cdef Rng rng
    rng_seed(&rng, seed)
    with nogil:
        if index_only:
            index_only = rows_unit_values(&X)
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
            if have_norms:
                sq = sq_norms[i]
            else:
                nnz = rows_get(&X, i, &values, &ind)
                sq = row_sq_norm(values, nnz)
            var[i].QD = sq + bias * bias + var[i].diag        # Q_ii + D_ii
        binary_rebuild_w(&X, &ysign[0], &alpha[0], bias, &w[0])
        n_iter = binary_dual_cd(&X, &ysign[0], var, bias, &w[0], &index[0], n_active, tol,
                                max_iter, shrinking, &rng, &violation, 0, -1, 0,
                                UNSHRINK_PASSES, INFINITY, -INFINITY, relax,
                                subspace_every, index_only)
        for i in range(n_samples):
            alpha[i] = var[i].alpha
    return n_iter, violation


def row_sq_norms(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                 Py_ssize_t n_features):
    """``x_i . x_i`` of every row (the diagonal of Q that every one-vs-rest
    problem of :func:`dual_cd_svc` shares), as a float64 array."""
    if n_samples < 1:
        raise ValueError("row_sq_norms: no rows")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    out_arr = np.empty(n_samples)
    cdef double[::1] out = out_arr
    cdef Py_ssize_t i, nnz
    cdef const double* values
    cdef const int* ind
    with nogil:
        for i in range(n_samples):
            nnz = rows_get(&X, i, &values, &ind)
            out[i] = row_sq_norm(values, nnz)                 # (X ** 2).sum(axis=1)
    return out_arr


# ------------------------------------------- fused one-vs-rest dual CD --
#
# The K binary problems "class k against the rest" share their rows, the
# diagonal Q_ii + D_ii and the bounds (they differ in the signs s_i only).
# One pass over a random permutation of the rows serves all of them: row x_i
# is read once, its K margins come from one walk over its entries against the
# K-wide rows of W (n_features + 1, K), row-major, so that feature j's K
# weights are adjacent (one to three cache lines instead of K scattered
# words), each class takes its coordinate step on alpha_ik, and the steps are
# scattered back in one more walk.  Per pass, the row data and the weight
# lines come from memory once instead of K times (LIBLINEAR solves the K
# problems one after the other).
#
# Every class keeps the shrinking, un-shrinking and stopping of
# `binary_dual_cd` on its own: a bit per (row, class) says whether the variable
# is active; a row whose running classes are all shrunk is skipped; a class
# that has converged stops (its lane is frozen).  Lane k's arithmetic (the
# partial sums of its margin, its step) never depends on the other lanes, and
# every group of classes draws the same permutations from the same seed, so
# class k's solution is the same bits whatever other classes share its run
# (the Python layer may split the classes between threads).

cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
        && defined(__GLIBC__)   /* target_clones needs ifunc (glibc) */
    #define LINCLASS_SVM_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define LINCLASS_SVM_CLONES
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_SVM_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #define LINCLASS_SVM_VEC 1
    typedef double linclass_svm_v4d __attribute__((vector_size(32)));
    static inline int linclass_ctz64(uint64_t x) { return __builtin_ctzll(x); }
    static inline int linclass_popcount64(uint64_t x) { return __builtin_popcountll(x); }
    #else
    #define LINCLASS_SVM_PREFETCH(p) ((void)0)
    static inline int linclass_ctz64(uint64_t x) { int n = 0; while (!(x & 1)) { x >>= 1; n++; } return n; }
    static inline int linclass_popcount64(uint64_t x) { int n = 0; while (x) { x &= x - 1; n++; } return n; }
    #endif
    #define LINCLASS_SVM_AHEAD 8

    /* acc[k] = x_i . W[:, k] for every lane k, summed as `row_dot_split`
       (entry m < n4 into running sum m % 4, the tail into sum 0, then
       (s0 + s1) + (s2 + s3)): lanes by blocks of 4, one vector register per
       running sum, one walk over the row per block (the row stays in L1; the
       first walk prefetches the K-wide weight rows 8 entries ahead); the
       remaining lanes one by one.  A separate multiply and add (no FMA), so
       vector and scalar lanes give the same bits. */
    #define LINCLASS_SVM_MAC(acc_, x_, p_) do { \
            linclass_svm_v4d xv_ = {(x_), (x_), (x_), (x_)}, pv_; \
            memcpy(&pv_, (p_), sizeof(pv_)); \
            (acc_) += xv_ * pv_; \
        } while (0)
    LINCLASS_SVM_CLONES
    static void linclass_svm_ovr_margins(double* acc, double* part, const double* W,
                                         Py_ssize_t K, const double* values,
                                         const int* ind, Py_ssize_t nnz)
    {
        Py_ssize_t m, k, e, off, kb = 0, n4 = nnz - nnz % 4;
        (void)part;
    #ifdef LINCLASS_SVM_VEC
        for (; kb + 4 <= K; kb += 4) {
            linclass_svm_v4d a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, r;
            const double* Wb = W + kb;
            if (ind == NULL) {
                for (m = 0; m < n4; m += 4) {
                    LINCLASS_SVM_MAC(a0, values[m], Wb + m * K);
                    LINCLASS_SVM_MAC(a1, values[m + 1], Wb + (m + 1) * K);
                    LINCLASS_SVM_MAC(a2, values[m + 2], Wb + (m + 2) * K);
                    LINCLASS_SVM_MAC(a3, values[m + 3], Wb + (m + 3) * K);
                }
                for (; m < nnz; m++)
                    LINCLASS_SVM_MAC(a0, values[m], Wb + m * K);
            } else {
                for (m = 0; m < n4; m += 4) {
                    if (kb == 0 && m + LINCLASS_SVM_AHEAD + 4 <= nnz) {
                        for (e = m + LINCLASS_SVM_AHEAD; e < m + LINCLASS_SVM_AHEAD + 4; e++) {
                            const double* ahead = W + (Py_ssize_t)ind[e] * K;
                            for (off = 0; off < K; off += 8)
                                LINCLASS_SVM_PREFETCH(ahead + off);
                            LINCLASS_SVM_PREFETCH(ahead + K - 1);
                        }
                    }
                    LINCLASS_SVM_MAC(a0, values[m], Wb + (Py_ssize_t)ind[m] * K);
                    LINCLASS_SVM_MAC(a1, values[m + 1], Wb + (Py_ssize_t)ind[m + 1] * K);
                    LINCLASS_SVM_MAC(a2, values[m + 2], Wb + (Py_ssize_t)ind[m + 2] * K);
                    LINCLASS_SVM_MAC(a3, values[m + 3], Wb + (Py_ssize_t)ind[m + 3] * K);
                }
                for (; m < nnz; m++)
                    LINCLASS_SVM_MAC(a0, values[m], Wb + (Py_ssize_t)ind[m] * K);
            }
            r = (a0 + a1) + (a2 + a3);
            memcpy(acc + kb, &r, sizeof(r));
        }
    #endif
        for (k = kb; k < K; k++) {                 /* the remaining lanes */
            const double* w = W + k;
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            for (m = 0; m < n4; m += 4) {
                s0 += values[m] * w[(ind == NULL ? m : (Py_ssize_t)ind[m]) * K];
                s1 += values[m + 1] * w[(ind == NULL ? m + 1 : (Py_ssize_t)ind[m + 1]) * K];
                s2 += values[m + 2] * w[(ind == NULL ? m + 2 : (Py_ssize_t)ind[m + 2]) * K];
                s3 += values[m + 3] * w[(ind == NULL ? m + 3 : (Py_ssize_t)ind[m + 3]) * K];
            }
            for (; m < nnz; m++)
                s0 += values[m] * w[(ind == NULL ? m : (Py_ssize_t)ind[m]) * K];
            acc[k] = (s0 + s1) + (s2 + s3);
        }
    }

    /* the same sums for the n_lanes lanes listed in `lanes` only: one walk
       over the row per lane (the row stays in L1), four running sums as
       `row_dot_split` (entry m < n4 into sum m % 4, the tail into sum 0); the
       first walk prefetches every lane's weight 8 entries ahead */
    static void linclass_svm_ovr_margins_some(double* acc, double* part, const double* W,
                                              Py_ssize_t K, const int* lanes,
                                              Py_ssize_t n_lanes, const double* values,
                                              const int* ind, Py_ssize_t nnz)
    {
        Py_ssize_t m, c, e, n4 = nnz - nnz % 4;
        (void)part;
        for (c = 0; c < n_lanes; c++) {
            const double* w = W + lanes[c];
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            if (ind == NULL) {
                for (m = 0; m < n4; m += 4) {
                    s0 += values[m] * w[m * K];
                    s1 += values[m + 1] * w[(m + 1) * K];
                    s2 += values[m + 2] * w[(m + 2) * K];
                    s3 += values[m + 3] * w[(m + 3) * K];
                }
                for (; m < nnz; m++)
                    s0 += values[m] * w[m * K];
            } else {
                for (m = 0; m < n4; m += 4) {
                    if (c == 0 && m + LINCLASS_SVM_AHEAD + 4 <= nnz) {
                        for (e = m + LINCLASS_SVM_AHEAD; e < m + LINCLASS_SVM_AHEAD + 4; e++) {
                            const double* ahead = W + (Py_ssize_t)ind[e] * K;
                            Py_ssize_t cc;
                            for (cc = 0; cc < n_lanes; cc++)
                                LINCLASS_SVM_PREFETCH(ahead + lanes[cc]);
                        }
                    }
                    s0 += values[m] * w[(Py_ssize_t)ind[m] * K];
                    s1 += values[m + 1] * w[(Py_ssize_t)ind[m + 1] * K];
                    s2 += values[m + 2] * w[(Py_ssize_t)ind[m + 2] * K];
                    s3 += values[m + 3] * w[(Py_ssize_t)ind[m + 3] * K];
                }
                for (; m < nnz; m++)
                    s0 += values[m] * w[(Py_ssize_t)ind[m] * K];
            }
            acc[lanes[c]] = (s0 + s1) + (s2 + s3);
        }
    }

    /* W[j, k] += step[k] x_j for every stored j and every lane (a lane with
       step 0 adds 0) */
    LINCLASS_SVM_CLONES
    static void linclass_svm_ovr_axpy(double* W, Py_ssize_t K, const double* values,
                                      const int* ind, Py_ssize_t nnz, const double* step)
    {
        Py_ssize_t m, k, j;
        for (m = 0; m < nnz; m++) {
            const double x = values[m];
            double* row;
            j = (ind == NULL) ? m : ind[m];
            row = W + j * K;
            k = 0;
    #ifdef LINCLASS_SVM_VEC
            {
                const linclass_svm_v4d xv = {x, x, x, x};
                linclass_svm_v4d sv, rv;
                for (; k + 4 <= K; k += 4) {
                    memcpy(&sv, step + k, sizeof(sv));
                    memcpy(&rv, row + k, sizeof(rv));
                    rv += sv * xv;
                    memcpy(row + k, &rv, sizeof(rv));
                }
            }
    #endif
            for (; k < K; k++)
                row[k] += step[k] * x;
        }
    }

    /* the same for the listed lanes only, one walk over the row per lane */
    static void linclass_svm_ovr_axpy_some(double* W, Py_ssize_t K, const double* values,
                                           const int* ind, Py_ssize_t nnz, const double* step,
                                           const int* lanes, Py_ssize_t n_lanes)
    {
        Py_ssize_t m, c;
        for (c = 0; c < n_lanes; c++) {
            double* w = W + lanes[c];
            const double a = step[lanes[c]];
            if (ind == NULL) {
                for (m = 0; m < nnz; m++)
                    w[m * K] += a * values[m];
            } else {
                for (m = 0; m < nnz; m++)
                    w[(Py_ssize_t)ind[m] * K] += a * values[m];
            }
        }
    }
    """
    int linclass_ctz64(uint64_t x) noexcept nogil
    int linclass_popcount64(uint64_t x) noexcept nogil
    void linclass_svm_ovr_margins(double* acc, double* part, const double* W, Py_ssize_t K,
                                  const double* values, const int* ind,
                                  Py_ssize_t nnz) noexcept nogil
    void linclass_svm_ovr_margins_some(double* acc, double* part, const double* W,
                                       Py_ssize_t K, const int* lanes, Py_ssize_t n_lanes,
                                       const double* values, const int* ind,
                                       Py_ssize_t nnz) noexcept nogil
    void linclass_svm_ovr_axpy(double* W, Py_ssize_t K, const double* values,
                               const int* ind, Py_ssize_t nnz,
                               const double* step) noexcept nogil
    void linclass_svm_ovr_axpy_some(double* W, Py_ssize_t K, const double* values,
                                    const int* ind, Py_ssize_t nnz, const double* step,
                                    const int* lanes, Py_ssize_t n_lanes) noexcept nogil


cdef struct RowVar:
    # what the K problems share about row i (one 32-byte block per row)
    double QD          # Q_ii + D_ii
    double upper       # U_i
    double diag        # D_ii
    int code           # the row's class code
    int used           # C_i > 0


cdef struct ClassState:
    double PGmax_old
    double PGmin_old
    double PGmax_new
    double PGmin_new
    double violation
    Py_ssize_t n_active       # rows whose variable of this class is active
    Py_ssize_t last_full
    Py_ssize_t unshrink_after
    Py_ssize_t n_iter
    bint handed               # left the fused run to finish alone


cdef void ovr_dual_cd(const Rows* X, const int* positive, Py_ssize_t K,
                      const RowVar* var, double bias, double* W, double* alpha,
                      uint64_t* mask, int* index, int* live, Py_ssize_t n_active_all, double tol,
                      Py_ssize_t max_iter, bint shrinking, Rng* rng, ClassState* cls,
                      double* buf, int* lanes, double handover,
                      double relax=1.0) noexcept nogil:
    """Dual CD passes for the K problems until each has max PG - min PG <= tol
    on all its variables or max_iter passes; W is (d + 1, K), alpha (n, K).
    ``buf`` has room for 7 K doubles, ``lanes`` for 2 K ints.

    A class whose active rows (after a pass without a full check) are fewer
    than ``handover`` times all rows leaves the run (``handed``), with its
    shrinking state in ``cls``, to finish alone (`ovr_finish_alone`): the
    shared pass pays off while the classes' active sets are large; once they
    are small, one class at a time keeps its few rows and weights in cache
    over its many remaining passes (the hinge on 20 Newsgroups: passes 1-20
    fused 0.8 s vs 1.16 s per class, passes 20-50 1.13 s vs 0.68 s)."""
    cdef Py_ssize_t it = 0, s, i, k, c, nnz, ahead, n_lanes, n_step, n_live
    cdef Py_ssize_t d = X.n_cols
    cdef const double* values
    cdef const int* indices
    cdef double* acc = buf
    cdef double* step = buf + K
    cdef double* part = buf + 2 * K
    cdef int* stepped = lanes + K
    cdef double G, PG, old, a_new, ys
    cdef double* a_i
    cdef const RowVar* v
    cdef uint64_t running = 0, m, bit
    cdef ClassState* st
    cdef bint sparse = X.indptr != NULL
    for k in range(K):
        running |= (<uint64_t>1) << k
        step[k] = 0.0
        cls[k].PGmax_old = INFINITY
        cls[k].PGmin_old = -INFINITY
        cls[k].violation = INFINITY
        cls[k].n_active = n_active_all
        cls[k].last_full = 0
        cls[k].unshrink_after = UNSHRINK_PASSES
        cls[k].n_iter = 0
        cls[k].handed = False
    while it < max_iter and running != 0:
        m = running
        while m != 0:
            k = linclass_ctz64(m)
            m &= m - 1
            cls[k].PGmax_new = -INFINITY
            cls[k].PGmin_new = INFINITY
        rng_shuffle32(rng, index, n_active_all)
        # the rows with an active variable in a running class, in the order of
        # the permutation of all rows (which does not depend on the other
        # classes); once the classes have shrunk, most rows drop out here and
        # cost neither the prefetches nor the visit below
        n_live = 0
        for s in range(n_active_all):
            if mask[index[s]] & running:
                live[n_live] = index[s]
                n_live += 1
        for s in range(n_live):
            ahead = s + PREFETCH_AHEAD
            if ahead < n_live:
                i = live[ahead]
                LINCLASS_PREFETCH(&var[i])
                LINCLASS_PREFETCH(&alpha[i * K])
                if sparse:
                    LINCLASS_PREFETCH(&X.indptr[i])
            ahead = s + 2
            if sparse and ahead < n_live:
                i = live[ahead]
                LINCLASS_PREFETCH(&X.data[X.indptr[i]])
                LINCLASS_PREFETCH(&X.indices[X.indptr[i]])
            i = live[s]
            m = mask[i] & running
            if m == 0:
                continue
            nnz = rows_get(X, i, &values, &indices)
            n_lanes = linclass_popcount64(m)
            if 4 * n_lanes <= K:            # few active classes: their lanes only
                n_lanes = 0
                bit = m
                while bit != 0:
                    lanes[n_lanes] = linclass_ctz64(bit)
                    n_lanes += 1
                    bit &= bit - 1
                linclass_svm_ovr_margins_some(acc, part, W, K, lanes, n_lanes, values,
                                              indices, nnz)
            else:
                linclass_svm_ovr_margins(acc, part, W, K, values, indices, nnz)
            v = &var[i]
            a_i = &alpha[i * K]
            n_step = 0
            while m != 0:
                k = linclass_ctz64(m)
                bit = (<uint64_t>1) << k
                m &= m - 1
                st = &cls[k]
                ys = 1.0 if v.code == positive[k] else -1.0
                # G = s_i (w_k . x_i) - 1 + D_ii a_ik
                G = ys * (acc[k] + W[d * K + k] * bias) - 1.0 + v.diag * a_i[k]
                PG = 0.0
                if a_i[k] == 0.0:
                    if shrinking and G > st.PGmax_old:
                        mask[i] &= ~bit
                        st.n_active -= 1
                        continue
                    if G < 0.0:
                        PG = G
                elif a_i[k] >= v.upper:
                    if shrinking and G < st.PGmin_old:
                        mask[i] &= ~bit
                        st.n_active -= 1
                        continue
                    if G > 0.0:
                        PG = G
                else:
                    PG = G
                if PG > st.PGmax_new:
                    st.PGmax_new = PG
                if PG < st.PGmin_new:
                    st.PGmin_new = PG
                if fabs(PG) > 1e-12:
                    old = a_i[k]
                    a_new = old - relax * G / v.QD     # (relaxed) Newton step, then clip
                    if a_new < 0.0:
                        a_new = 0.0
                    elif a_new > v.upper:
                        a_new = v.upper
                    a_i[k] = a_new
                    step[k] = (a_new - old) * ys
                    stepped[n_step] = <int>k
                    n_step += 1
            if n_step == 0:
                continue
            if 4 * n_step <= K:
                linclass_svm_ovr_axpy_some(W, K, values, indices, nnz, step, stepped, n_step)
            else:
                linclass_svm_ovr_axpy(W, K, values, indices, nnz, step)   # W += x_i step^T
            for c in range(n_step):
                k = stepped[c]
                W[d * K + k] += step[k] * bias
                step[k] = 0.0
        it += 1
        # end of pass: each running class as binary_dual_cd
        m = running
        while m != 0:
            k = linclass_ctz64(m)
            bit = (<uint64_t>1) << k
            m &= m - 1
            st = &cls[k]
            st.n_iter = it
            st.violation = st.PGmax_new - st.PGmin_new
            if st.violation <= tol or it - st.last_full >= st.unshrink_after:
                if st.violation <= tol and st.n_active == n_active_all:
                    running &= ~bit                          # converged: frozen
                    continue
                if st.violation > tol:
                    st.unshrink_after *= 2
                for s in range(n_active_all):                # all variables active again
                    mask[index[s]] |= bit
                st.n_active = n_active_all
                st.last_full = it
                st.PGmax_old = INFINITY
                st.PGmin_old = -INFINITY
                continue
            st.PGmax_old = st.PGmax_new if st.PGmax_new > 0.0 else INFINITY
            st.PGmin_old = st.PGmin_new if st.PGmin_new < 0.0 else -INFINITY
            if st.n_active < handover * n_active_all and it < max_iter:
                running &= ~bit
                st.handed = True


cdef void ovr_finish_alone(const Rows* X, const int* positive, Py_ssize_t K, Py_ssize_t k,
                           const RowVar* var, double bias, double* W, double* alpha,
                           const uint64_t* mask, const int* index, Py_ssize_t n_active_all,
                           double tol, Py_ssize_t max_iter, bint shrinking,
                           uint64_t seed, ClassState* st, DualVar* dv, double* ysign,
                           int* index_k, double* w, double relax=1.0) noexcept nogil:
    """Class k, handed over by `ovr_dual_cd`, to the end by `binary_dual_cd`
    from where it left (its active rows first in ``index_k``, its thresholds
    and schedule), with its own permutations (seeded by ``seed`` and its class
    code, not by the other classes)."""
    cdef Py_ssize_t i, s, j, n_act = 0, n_all = 0, d = X.n_cols
    cdef uint64_t bit = (<uint64_t>1) << k
    cdef double viol = INFINITY
    cdef Rng rng
    rng_seed(&rng, seed ^ splitmix64(<uint64_t>positive[k] + 1))
    for j in range(d + 1):
        w[j] = W[j * K + k]
    for i in range(X.n_rows):
        dv[i].alpha = alpha[i * K + k]
        dv[i].QD = var[i].QD
        dv[i].upper = var[i].upper
        dv[i].diag = var[i].diag
        ysign[i] = 1.0 if var[i].code == positive[k] else -1.0
    # active rows first, then the others, each in increasing order (the fused
    # run's permutation at this point depends on the classes that ran on)
    for i in range(X.n_rows):
        if var[i].used and mask[i] & bit:
            index_k[n_act] = <int>i
            n_act += 1
    n_all = n_act
    for i in range(X.n_rows):
        if var[i].used and not (mask[i] & bit):
            index_k[n_all] = <int>i
            n_all += 1
    st.n_iter = binary_dual_cd(X, ysign, dv, bias, w, index_k, n_active_all, tol, max_iter,
                               shrinking, &rng, &viol, st.n_iter, n_act, st.last_full,
                               st.unshrink_after, st.PGmax_old, st.PGmin_old, relax)
    st.violation = viol
    for j in range(d + 1):
        W[j * K + k] = w[j]
    for i in range(X.n_rows):
        alpha[i * K + k] = dv[i].alpha


def ovr_dual_cd_svc(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                    Py_ssize_t n_features, const int[::1] codes, const int[::1] positive,
                    const double[::1] cost, int loss, double bias, double[:, ::1] W,
                    double[:, ::1] alpha, double tol, Py_ssize_t max_iter, bint shrinking,
                    unsigned long long seed, const double[::1] sq_norms,
                    double handover=0.0, double relax=1.0):
    """K one-vs-rest binary linear SVMs by one fused dual coordinate descent,
    in place on ``W`` (n_features + 1, K) and ``alpha`` (n_samples, K).

    Problem k has ``s_i = +1`` where ``codes[i] == positive[k]``, else -1;
    ``cost``, ``loss``, ``bias``, ``tol``, ``shrinking`` as in
    :func:`dual_cd_svc`; ``sq_norms`` from :func:`row_sq_norms`.  ``W`` is
    rebuilt from ``alpha`` (the warm start) first.  1 <= K <= 64.  Every
    problem sees the same row permutations (drawn from ``seed``), so column k
    of the result does not depend on which other problems run with it.

    ``handover`` (in [0, 1]): a class whose active rows fall below this
    fraction of all rows (after a pass without a full check) finishes alone
    by :func:`dual_cd_svc`'s solver, from the same state (0: never).
    ``relax``: the over-relaxation of the steps, as in :func:`dual_cd_svc`.

    Returns (n_passes, max_violation), two arrays of K values.
    """
    cdef Py_ssize_t K = W.shape[1]
    if W.shape[0] != n_features + 1 or alpha.shape[0] != n_samples or alpha.shape[1] != K \
            or codes.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1 \
            or sq_norms.shape[0] != n_samples or positive.shape[0] != K or K < 1 or K > 64:
        raise ValueError("ovr_dual_cd_svc: inconsistent array shapes")
    if loss != 1 and loss != 2:
        raise ValueError("loss must be 1 or 2")
    if not 0.0 <= handover <= 1.0:
        raise ValueError("handover must be in [0, 1]")
    if not 0.0 < relax < 2.0:
        raise ValueError("relax must be in (0, 2), got %r" % (relax,))
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    var_arr = np.empty(n_samples * 4)                  # RowVar[n_samples]
    index_arr = np.empty(n_samples, dtype=np.int32)
    live_arr = np.empty(n_samples, dtype=np.int32)
    mask_arr = np.zeros(n_samples, dtype=np.uint64)
    buf_arr = np.zeros(7 * K)
    lanes_arr = np.zeros(2 * K, dtype=np.int32)
    cdef double[::1] var_view = var_arr, buf = buf_arr
    cdef RowVar* var = <RowVar*>&var_view[0]
    cdef ClassState* cls
    cdef int[::1] index = index_arr, lanes = lanes_arr, live = live_arr
    dv_arr = np.empty(n_samples * 4)                   # DualVar[n_samples], for a class alone
    cdef double[::1] dv_view = dv_arr, ysign_k = np.empty(n_samples)
    cdef double[::1] w_k = np.empty(n_features + 1)
    cdef DualVar* dv = <DualVar*>&dv_view[0]
    cdef uint64_t[::1] mask = mask_arr
    cdef Py_ssize_t i, k, nnz, n_active = 0
    cdef const double* values
    cdef const int* ind
    cdef double a, ys
    cdef uint64_t all_classes = 0
    cdef Rng rng
    rng_seed(&rng, seed)
    n_iter_arr = np.empty(K, dtype=np.intp)
    violation_arr = np.empty(K)
    cdef Py_ssize_t[::1] n_iter = n_iter_arr
    cdef double[::1] violation = violation_arr
    with nogil:
        for k in range(K):
            all_classes |= (<uint64_t>1) << k
        memset(&W[0, 0], 0, (n_features + 1) * K * sizeof(double))
        for i in range(n_samples):
            var[i].code = codes[i]
            var[i].used = cost[i] > 0.0
            if cost[i] > 0.0:
                index[n_active] = <int>i
                n_active += 1
                mask[i] = all_classes
            if loss == 1:
                var[i].upper = cost[i]
                var[i].diag = 0.0
            else:
                var[i].upper = INFINITY
                var[i].diag = 0.5 / cost[i] if cost[i] > 0.0 else 0.0
            var[i].QD = sq_norms[i] + bias * bias + var[i].diag     # Q_ii + D_ii
            nnz = rows_get(&X, i, &values, &ind)
            for k in range(K):
                a = alpha[i, k]
                if cost[i] <= 0.0 or a < 0.0:
                    a = 0.0
                if a > var[i].upper:
                    a = var[i].upper
                alpha[i, k] = a
                if a != 0.0:                         # W[:, k] += a s_ik [x_i, bias]
                    ys = 1.0 if codes[i] == positive[k] else -1.0
                    buf[k] = a * ys
            linclass_svm_ovr_axpy(&W[0, 0], K, values, ind, nnz, &buf[0])
            for k in range(K):
                W[n_features, k] += buf[k] * bias
                buf[k] = 0.0
    cls = <ClassState*>malloc(K * sizeof(ClassState))
    if cls == NULL:
        raise MemoryError()
    try:
        with nogil:
            if n_active > 0:
                ovr_dual_cd(&X, &positive[0], K, var, bias, &W[0, 0],
                            &alpha[0, 0], &mask[0], &index[0], &live[0], n_active, tol,
                            max_iter, shrinking, &rng, cls, &buf[0], &lanes[0], handover,
                            relax)
                for k in range(K):
                    if cls[k].handed:
                        ovr_finish_alone(&X, &positive[0], K, k, var, bias, &W[0, 0],
                                         &alpha[0, 0], &mask[0], &index[0], n_active, tol,
                                         max_iter, shrinking, seed, &cls[k], dv, &ysign_k[0],
                                         &live[0], &w_k[0], relax)
            for k in range(K):
                n_iter[k] = cls[k].n_iter if n_active > 0 else 0
                violation[k] = cls[k].violation if n_active > 0 else 0.0
    finally:
        free(cls)
    return n_iter_arr, violation_arr


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
    cdef double xi, gnorm0 = 0.0, gnorm, rr, qHq, a
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
                rr = cg_update(d1, a, rr, p, r, q, Hq)
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
