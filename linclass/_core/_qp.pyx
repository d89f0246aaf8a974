"""A QP solver for the working-set duals of the structural SVM.

Both cutting-plane formulations (n-slack and 1-slack) lead to the same dual

    maximise    D(a) = l . a - 1/2 a^T K a
    subject to  a >= 0,  sum_{k in block b} a_k = cap_b   for every block b

where K is the Gram matrix of the constraint vectors (K_jk = g_j . g_k), l the
constraint losses and the blocks partition the constraints (one block for the
1-slack problem, one per example for n-slack).  Each block holds a "null"
constraint (g = 0, l = 0) put there by the caller, which turns the inequality
``sum a <= cap`` of the slack variable into the equality above.

The solver is the SMO method of Platt (1998) with the maximal-violating-pair
rule of Keerthi et al. (2001), applied within each block: pick the constraint
with the largest gradient and the one with the smallest gradient among those
with positive weight, move weight between the two along the exact line
optimum (clipped to the box), update the gradient; stop when no block has a
pair violating the KKT conditions by more than ``tol``.

References
----------
J. C. Platt. Fast training of support vector machines using sequential
minimal optimization. In Advances in Kernel Methods, 1998.
S. S. Keerthi, S. K. Shevade, C. Bhattacharyya, K. R. K. Murthy. Improvements
to Platt's SMO algorithm for SVM classifier design. Neural Computation, 2001.
"""
from libc.stdint cimport int64_t

import numpy as np


cdef double _block_step(const double[:, ::1] K, double[::1] alpha,
                        double[::1] grad, Py_ssize_t start, Py_ssize_t stop,
                        double tol) noexcept nogil:
    """One SMO step inside block [start, stop); returns the block's KKT violation
    (max gradient - min gradient over positive weights) before the step."""
    cdef Py_ssize_t k, up = -1, down = -1, m = K.shape[0]
    cdef double g_up = -1e300, g_down = 1e300, eta, t, violation
    for k in range(start, stop):
        if grad[k] > g_up:                    # up = argmax(grad[block])
            g_up = grad[k]
            up = k
        if alpha[k] > 0.0 and grad[k] < g_down:   # down = argmin(grad[block][alpha > 0])
            g_down = grad[k]
            down = k
    if up < 0 or down < 0:
        return 0.0
    violation = g_up - g_down
    if violation <= tol or up == down:
        return violation
    # D(a + t e_up - t e_down) - D(a) = t (g_up - g_down) - t^2 eta / 2
    eta = K[up, up] + K[down, down] - 2.0 * K[up, down]
    if eta > 1e-12:
        t = violation / eta
        if t > alpha[down]:
            t = alpha[down]
    else:
        t = alpha[down]                       # linear along the pair: go to the bound
    alpha[up] += t
    alpha[down] -= t
    if alpha[down] < 1e-14 * (1.0 + alpha[up]):
        alpha[up] += alpha[down]
        alpha[down] = 0.0
    for k in range(m):                        # grad -= t * (K[:, up] - K[:, down])
        grad[k] -= t * (K[k, up] - K[k, down])
    return violation


cdef Py_ssize_t _smo(const double[:, ::1] K, const double[::1] linear,
                     const int64_t[::1] block_starts, double[::1] alpha,
                     double[::1] grad, double tol, Py_ssize_t max_iter,
                     double* final_violation) noexcept nogil:
    cdef Py_ssize_t m = K.shape[0], n_blocks = block_starts.shape[0] - 1
    cdef Py_ssize_t it, b, j, k
    cdef double worst, v, s
    for j in range(m):                        # grad = linear - K @ alpha
        s = 0.0
        for k in range(m):
            s += K[j, k] * alpha[k]
        grad[j] = linear[j] - s
    worst = 0.0
    for it in range(max_iter):
        worst = 0.0
        for b in range(n_blocks):
            v = _block_step(K, alpha, grad, block_starts[b], block_starts[b + 1], tol)
            if v > worst:
                worst = v
        if worst <= tol:
            final_violation[0] = worst
            return it + 1
    final_violation[0] = worst
    return max_iter


def solve_block_simplex_qp(*, gram, linear, block_starts, alpha, tol=1e-10, max_iter=100000):
    """Maximise ``linear @ a - a @ gram @ a / 2`` over blocks of scaled simplices.

    Parameters
    ----------
    gram : ndarray of shape (m, m), float64, C-contiguous
        Symmetric positive semi-definite Gram matrix of the constraints.
    linear : ndarray of shape (m,), float64
    block_starts : ndarray of shape (n_blocks + 1,), int64
        Block b holds constraints ``block_starts[b]:block_starts[b+1]``;
        ``block_starts[0] == 0`` and ``block_starts[n_blocks] == m``, increasing.
    alpha : ndarray of shape (m,), float64
        Feasible starting point (>= 0, each block summing to its capacity);
        it is copied, not modified.
    tol : float
        Stop when every block's maximal violating pair differs in gradient by
        at most ``tol``.
    max_iter : int
        Maximum number of sweeps over the blocks (one SMO step per block and
        sweep).

    Returns
    -------
    alpha : ndarray of shape (m,)
    n_iter : int
        Sweeps made.
    violation : float
        Largest KKT violation left.
    """
    K = np.ascontiguousarray(gram, dtype=np.float64)
    lin = np.ascontiguousarray(linear, dtype=np.float64)
    starts = np.ascontiguousarray(block_starts, dtype=np.int64)
    a = np.array(alpha, dtype=np.float64, copy=True, order="C")
    m = lin.shape[0]
    if K.ndim != 2 or K.shape[0] != m or K.shape[1] != m:
        raise ValueError("gram must have shape (%d, %d), got %r" % (m, m, K.shape))
    if a.ndim != 1 or a.shape[0] != m:
        raise ValueError("alpha must have shape (%d,), got %r" % (m, a.shape))
    if starts.ndim != 1 or starts.shape[0] < 2 or starts[0] != 0 or starts[starts.shape[0] - 1] != m \
            or np.any(np.diff(starts) <= 0):
        raise ValueError("block_starts must increase strictly from 0 to %d" % m)
    if not (np.isfinite(K).all() and np.isfinite(lin).all() and np.isfinite(a).all()):
        raise ValueError("gram, linear and alpha must be finite")
    if np.any(a < 0):
        raise ValueError("alpha must be >= 0")
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    grad = np.empty(m)
    cdef const double[:, ::1] Kv = K
    cdef const double[::1] lv = lin
    cdef const int64_t[::1] sv = starts
    cdef double[::1] av = a
    cdef double[::1] gv = grad
    cdef double c_tol = tol, violation = 0.0
    cdef Py_ssize_t c_max_iter = max_iter, n_iter
    with nogil:
        n_iter = _smo(Kv, lv, sv, av, gv, c_tol, c_max_iter, &violation)
    return a, int(n_iter), float(violation)


cdef double _csr_row_dot(const double[::1] data, const int64_t[::1] indices,
                         Py_ssize_t a0, Py_ssize_t a1, Py_ssize_t b0,
                         Py_ssize_t b1) noexcept nogil:
    """D[a] @ D[b] for two CSR rows with sorted, unique column indices (merge)."""
    cdef double s = 0.0
    while a0 < a1 and b0 < b1:
        if indices[a0] == indices[b0]:
            s += data[a0] * data[b0]
            a0 += 1
            b0 += 1
        elif indices[a0] < indices[b0]:
            a0 += 1
        else:
            b0 += 1
    return s


cdef double _row_w_dot(const double[::1] data, const int64_t[::1] indices,
                       Py_ssize_t k0, Py_ssize_t k1, const double[::1] w) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(k0, k1):                   # D[k] @ w
        s += data[p] * w[indices[p]]
    return s


cdef Py_ssize_t _block_cd(const double[::1] data, const int64_t[::1] indices,
                          const int64_t[::1] indptr, const double[::1] losses,
                          const int64_t[::1] block_starts, double[::1] alpha,
                          double[::1] w, double[::1] grad, const double[::1] sq_norms,
                          double tol, Py_ssize_t max_passes, Py_ssize_t max_block_steps,
                          double* final_violation) noexcept nogil:
    cdef Py_ssize_t n_blocks = block_starts.shape[0] - 1
    cdef Py_ssize_t it, b, k, p, step, up, down, start, stop
    cdef double worst = 0.0, g_up, g_down, violation, eta, t
    for it in range(max_passes):
        worst = 0.0
        for b in range(n_blocks):
            start = block_starts[b]
            stop = block_starts[b + 1]
            if stop - start < 2:
                continue
            for step in range(max_block_steps):
                up = -1
                down = -1
                g_up = -1e300
                g_down = 1e300
                for k in range(start, stop):  # grad = losses - D @ w  (block rows)
                    grad[k] = losses[k] - _row_w_dot(data, indices, indptr[k], indptr[k + 1], w)
                    if grad[k] > g_up:
                        g_up = grad[k]
                        up = k
                    if alpha[k] > 0.0 and grad[k] < g_down:
                        g_down = grad[k]
                        down = k
                if up < 0 or down < 0:
                    break
                violation = g_up - g_down
                if step == 0 and violation > worst:
                    worst = violation
                if violation <= tol or up == down:
                    break
                eta = sq_norms[up] + sq_norms[down] - 2.0 * _csr_row_dot(
                    data, indices, indptr[up], indptr[up + 1], indptr[down], indptr[down + 1])
                if eta > 1e-12:
                    t = violation / eta
                    if t > alpha[down]:
                        t = alpha[down]
                else:
                    t = alpha[down]
                alpha[up] += t
                alpha[down] -= t
                if alpha[down] < 1e-14 * (1.0 + alpha[up]):
                    alpha[up] += alpha[down]
                    alpha[down] = 0.0
                for p in range(indptr[up], indptr[up + 1]):        # w += t * D[up]
                    w[indices[p]] += t * data[p]
                for p in range(indptr[down], indptr[down + 1]):    # w -= t * D[down]
                    w[indices[p]] -= t * data[p]
        if worst <= tol:
            final_violation[0] = worst
            return it + 1
    final_violation[0] = worst
    return max_passes


def solve_block_sparse_dual(*, data, indices, indptr, losses, block_starts, alpha, w,
                            tol=1e-6, max_passes=1000, max_block_steps=10):
    """Block coordinate ascent on the n-slack dual with the weights kept explicitly.

    Maximise ``losses @ a - ||w||^2 / 2`` with ``w = w_fixed + D.T @ a``, ``a >= 0``
    and each block of ``a`` summing to its (given) total, where ``D`` is a CSR
    matrix of constraint vectors (one row per constraint, sorted unique column
    indices; an empty row is a null constraint).  Blocks are visited in order;
    in each, up to ``max_block_steps`` SMO steps on the maximal violating pair
    are made (Keerthi et al., 2001) and ``w`` is updated along.  This is the
    block-coordinate method of Crammer and Singer (2001) / Keerthi et al.
    (2008) for a general working set.

    ``alpha`` and ``w`` must be consistent (``w`` includes ``D.T @ alpha``);
    both are copied.  Returns ``(alpha, w, n_passes, violation)``.
    """
    d = np.ascontiguousarray(data, dtype=np.float64)
    ind = np.ascontiguousarray(indices, dtype=np.int64)
    ptr = np.ascontiguousarray(indptr, dtype=np.int64)
    l = np.ascontiguousarray(losses, dtype=np.float64)
    starts = np.ascontiguousarray(block_starts, dtype=np.int64)
    a = np.array(alpha, dtype=np.float64, copy=True, order="C")
    wv = np.array(w, dtype=np.float64, copy=True, order="C")
    m = l.shape[0]
    if ptr.ndim != 1 or ptr.shape[0] != m + 1 or ptr[0] != 0 or np.any(np.diff(ptr) < 0) \
            or ptr[ptr.shape[0] - 1] != d.shape[0] or ind.shape[0] != d.shape[0]:
        raise ValueError("data/indices/indptr do not describe a CSR matrix with %d rows" % m)
    if a.shape != (m,):
        raise ValueError("alpha must have shape (%d,)" % m)
    if ind.shape[0] and (ind.min() < 0 or ind.max() >= wv.shape[0]):
        raise ValueError("column indices must lie in [0, %d)" % wv.shape[0])
    if ind.shape[0] > 1:
        unsorted = np.diff(ind) <= 0              # within a row, indices must increase
        row_starts = ptr[1:ptr.shape[0] - 1]
        row_starts = row_starts[(row_starts > 0) & (row_starts < ind.shape[0])]
        unsorted[row_starts - 1] = False
        if unsorted.any():
            raise ValueError("a row has unsorted or duplicate column indices")
    if starts.ndim != 1 or starts.shape[0] < 2 or starts[0] != 0 or starts[starts.shape[0] - 1] != m \
            or np.any(np.diff(starts) <= 0):
        raise ValueError("block_starts must increase strictly from 0 to %d" % m)
    if not (np.isfinite(d).all() and np.isfinite(l).all() and np.isfinite(a).all()
            and np.isfinite(wv).all()):
        raise ValueError("data, losses, alpha and w must be finite")
    if np.any(a < 0):
        raise ValueError("alpha must be >= 0")
    if max_passes < 1 or max_block_steps < 1:
        raise ValueError("max_passes and max_block_steps must be >= 1")
    sq = np.zeros(m)
    if m:
        sq = np.add.reduceat(np.append(d * d, 0.0), ptr[:ptr.shape[0] - 1]) * (np.diff(ptr) > 0)
    grad = np.zeros(m)
    cdef const double[::1] dv = d if d.shape[0] else np.zeros(1)
    cdef const int64_t[::1] iv = ind if ind.shape[0] else np.zeros(1, dtype=np.int64)
    cdef const int64_t[::1] pv = ptr
    cdef const double[::1] lv = l
    cdef const int64_t[::1] sv = starts
    cdef double[::1] av = a
    cdef double[::1] wmv = wv
    cdef double[::1] gv = grad
    cdef const double[::1] sqv = sq
    cdef double c_tol = tol, violation = 0.0
    cdef Py_ssize_t c_passes = max_passes, c_steps = max_block_steps, n_passes
    with nogil:
        n_passes = _block_cd(dv, iv, pv, lv, sv, av, wmv, gv, sqv, c_tol, c_passes,
                             c_steps, &violation)
    return a, wv, int(n_passes), float(violation)
