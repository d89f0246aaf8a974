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
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t

from ._random cimport Rng, rng_seed, rng_shuffle


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
    cdef Py_ssize_t n = K.shape[0], k = G.shape[0]
    if K.shape[1] != n or y.shape[0] != n or C.shape[0] != n or G.shape[1] != k \
            or L.shape[0] != k or L.shape[1] != k or beta.shape[0] != n \
            or beta.shape[1] != k or F.shape[0] != n or F.shape[1] != k:
        raise ValueError("solve_dual: inconsistent shapes")
    if n == 0 or k == 0:
        raise ValueError("solve_dual: empty problem")
    cdef double* g = <double*>malloc(k * sizeof(double))
    cdef double* d = <double*>malloc(k * sizeof(double))
    cdef double* v = <double*>malloc(k * sizeof(double))
    cdef int* order = <int*>malloc(n * sizeof(int))
    if g == NULL or d == NULL or v == NULL or order == NULL:
        free(g); free(d); free(v); free(order)
        raise MemoryError()
    cdef Rng rng
    cdef Py_ssize_t it = 0, s, i, j, c, e, yi, steps
    cdef double eps = 0.0, primal = 0.0, dual = 0.0, Kij, Kii
    cdef bint converged = False, moved
    cdef double* beta_i
    cdef const double* loss_row
    with nogil:
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
                Kii = K[i, i]
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
                for j in range(n):                  # F += K[:, i] v^T
                    Kij = K[i, j]
                    if Kij != 0.0:
                        for c in range(k):
                            F[j, c] += Kij * v[c]
            it += 1
            objectives(F, beta, L, y, C, &primal, &dual)
            if primal - dual <= tol * fabs(primal) or primal - dual <= 0.0:
                converged = True
                break
            if not moved:
                if eps <= 1e-14:
                    break                           # no block moves any more: round-off
                eps *= 0.1
    free(g); free(d); free(v); free(order)
    return int(it), float(primal), float(dual), bool(converged)

