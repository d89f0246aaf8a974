"""L-BFGS kernels over float32 history: the two-loop recursion with fused passes,
and the column kernels of the compact representation.

With a million parameters an L-BFGS iteration is bound by memory traffic, not
arithmetic: the classic two-loop recursion (Nocedal 1980; Nocedal & Wright
2006, Algorithm 7.4) reads 2m history vectors twice and the work vector 4m
times.  Here each update of the work vector q also computes the dot product
the next step needs, so the recursion makes 2k + 1 passes (k pairs stored),
each reading q and two history vectors; and the pairs (s, y) are stored in
float32, which halves their traffic (the inverse-Hessian approximation stays
positive definite because rho = 1 / (s.y) is computed from the stored,
rounded values; only the search direction is affected by the rounding, and
the line search keeps every step a descent step).

The compact-representation kernels (projection, combination, the fused trial
point; used by linclass.linear._lbfgs._CompactHistory) store the new pair on
the way (s in the trial-point pass, y in the next projection) and run their
column loops in ``_lbfgs_simd.h`` (AVX2 when the CPU has it, else plain C;
every level gives the same bits).

The caller (linclass.linear._lbfgs) validates every array.
"""
import numpy as np


cdef extern from "_lbfgs_simd.h" nogil:
    int lc_lb_level()
    int lc_lb_set_level(int level)
    void lc_lb_dot2(const float* s, const float* y, const double* g, Py_ssize_t n,
                    double* out)
    void lc_lb_dot4(const float* s, const float* y, const double* g, const float* z,
                    Py_ssize_t n, double* out)
    void lc_lb_ydiff(const double* g, const double* gp, const float* s, float* y,
                     Py_ssize_t n, double* out)
    void lc_lb_axpy2(double* acc, const float* s, const float* y, double a, double b,
                     Py_ssize_t n)
    double lc_lb_trial(const double* acc, const double* g, const double* x, double* x_out,
                       float* s_out, Py_ssize_t n)


def simd_level(level=None):
    """The vector level of the history kernels (0 plain C, 2 AVX2); ``level``: 0 forces
    the plain C kernels, anything else the CPU's best (tests).  Every level gives
    the same bits."""
    if level is not None:
        return lc_lb_set_level(int(level))
    return lc_lb_level()


cdef void store_pair(const double* x_new, const double* x, const double* g_new,
                     const double* g, float* s, float* y, Py_ssize_t n,
                     double* sy, double* yy) noexcept nogil:
    cdef Py_ssize_t j
    cdef float a, b
    cdef double acc_sy = 0.0, acc_yy = 0.0
    for j in range(n):
        a = <float>(x_new[j] - x[j])
        b = <float>(g_new[j] - g[j])
        s[j] = a
        y[j] = b
        acc_sy += <double>a * <double>b
        acc_yy += <double>b * <double>b
    sy[0] = acc_sy
    yy[0] = acc_yy


cdef void two_loop(const double* g, const float* S, const float* Y, const double* rho,
                   const int* slots, Py_ssize_t k, Py_ssize_t n, double gamma,
                   double* q, double* alpha) noexcept nogil:
    """q = -H g, H the L-BFGS inverse Hessian of the k pairs in rows slots[0..k-1]
    of S and Y (newest first), with initial matrix gamma * I."""
    cdef Py_ssize_t j, i
    cdef const float* s
    cdef const float* yv
    cdef const float* s_next
    cdef const float* y_next
    cdef double t, a, coef
    if k == 0:
        for j in range(n):
            q[j] = -gamma * g[j]
        return
    # q = -g and the first dot s_0 . q
    s = S + slots[0] * n
    t = 0.0
    for j in range(n):
        q[j] = -g[j]
        t += s[j] * q[j]
    alpha[0] = rho[slots[0]] * t
    # first loop, newest to oldest: q -= alpha_i y_i, with s_{i+1} . q on the fly
    for i in range(k - 1):
        yv = Y + slots[i] * n
        s_next = S + slots[i + 1] * n
        a = alpha[i]
        t = 0.0
        for j in range(n):
            q[j] -= a * yv[j]
            t += s_next[j] * q[j]
        alpha[i + 1] = rho[slots[i + 1]] * t
    # last update of the first loop, times gamma, and y_oldest . q for the second loop
    yv = Y + slots[k - 1] * n
    a = alpha[k - 1]
    t = 0.0
    for j in range(n):
        q[j] = gamma * (q[j] - a * yv[j])
        t += yv[j] * q[j]
    # second loop, oldest to newest: q += (alpha_i - beta_i) s_i, with y_{i-1} . q on the fly
    i = k - 1
    while i >= 0:
        s = S + slots[i] * n
        coef = alpha[i] - rho[slots[i]] * t
        t = 0.0
        if i > 0:
            y_next = Y + slots[i - 1] * n
            for j in range(n):
                q[j] += coef * s[j]
                t += y_next[j] * q[j]
        else:
            for j in range(n):
                q[j] += coef * s[j]
        i -= 1


def lbfgs_store_pair(const double[::1] x_new, const double[::1] x, const double[::1] g_new,
                     const double[::1] g, float[:, ::1] S, float[:, ::1] Y, Py_ssize_t slot):
    """Row ``slot`` of S and Y := float32(x_new - x), float32(g_new - g);
    returns (s.y, y.y) of the stored values."""
    cdef Py_ssize_t n = x.shape[0]
    if x_new.shape[0] != n or g.shape[0] != n or g_new.shape[0] != n or S.shape[1] != n \
            or Y.shape[1] != n or S.shape[0] != Y.shape[0] or not 0 <= slot < S.shape[0] \
            or n < 1:
        raise ValueError("lbfgs_store_pair: inconsistent shapes")
    cdef double sy = 0.0, yy = 0.0
    with nogil:
        store_pair(&x_new[0], &x[0], &g_new[0], &g[0], &S[slot, 0], &Y[slot, 0], n, &sy, &yy)
    return sy, yy


def lbfgs_direction(const double[::1] g, const float[:, ::1] S, const float[:, ::1] Y,
                    const double[::1] rho, const int[::1] slots, double gamma,
                    double[::1] out):
    """``out = -H g`` for the pairs in rows ``slots`` (newest first) of S and Y."""
    cdef Py_ssize_t n = g.shape[0], k = slots.shape[0], i
    if out.shape[0] != n or S.shape[1] != n or Y.shape[1] != n or S.shape[0] != Y.shape[0] \
            or rho.shape[0] != S.shape[0] or k > S.shape[0] or n < 1:
        raise ValueError("lbfgs_direction: inconsistent shapes")
    for i in range(k):
        if not 0 <= slots[i] < S.shape[0]:
            raise ValueError("lbfgs_direction: slot out of range")
    alpha = np.zeros(max(k, 1))
    cdef double[::1] alpha_view = alpha
    with nogil:
        two_loop(&g[0], &S[0, 0], &Y[0, 0], &rho[0], &slots[0] if k else NULL, k, n, gamma,
                 &out[0], &alpha_view[0])
    return out


# -- compact representation (Byrd, Nocedal & Schnabel 1994) ---------------------------
# The direction -H g needs only the 2k inner products S^T g, Y^T g (one pass over the
# history) and one combination pass d = -gamma g - S a - Y b; the small k x k algebra
# runs in Python (linclass.linear._lbfgs._CompactHistory).  Both passes work on a column range [lo, hi), so threads can share
# them without synchronisation (their partial products are added in block order).

cdef Py_ssize_t _TILE = 4096     # columns per tile: the tile of g / d stays in cache

#: Columns per tile.  With ``tile_sums`` the kernels write one row of partial sums per
#: tile of the global grid (tile t = columns [t TILE, (t + 1) TILE)); the caller adds
#: the rows in tile order, so a sum does not depend on how the columns were cut into
#: blocks (ranges then start on the grid).
TILE = _TILE


cdef _check_tiles(double[:, ::1] tile_sums, Py_ssize_t n, Py_ssize_t lo, Py_ssize_t width):
    if tile_sums.shape[0] != (n + _TILE - 1) // _TILE or tile_sums.shape[1] != width \
            or lo % _TILE != 0:
        raise ValueError("tile_sums must be (ceil(n / TILE), %d) and lo a multiple of TILE"
                         % width)


def lbfgs_project(const double[::1] g, float[:, ::1] S, float[:, ::1] Y,
                  const int[::1] slots, Py_ssize_t new_slot, Py_ssize_t lo, Py_ssize_t hi,
                  const double[::1] g_old=None, double[:, ::1] tile_sums=None):
    """Partial products over columns [lo, hi) for the rows ``slots``: (S^T g, Y^T g)
    and, when ``new_slot >= 0``, also (S^T y_new, Y^T y_new) with y_new the row
    ``new_slot`` of Y (in the same pass; empty arrays otherwise).

    With ``g_old`` (and ``new_slot >= 0``) the pass first stores the new pair's y
    itself, tile by tile: ``Y[new_slot, lo:hi] = float32(g - g_old)``, and adds the
    partial ``(s_new . y_new, y_new . y_new)`` of the stored float32 values (s_new
    the row ``new_slot`` of S, written before) as a fifth item of the result; the
    curvature pair then costs no pass of its own.

    ``tile_sums`` (shape ``(ceil(n / TILE), 4 k + 2)``, ``lo`` on the tile grid): each
    tile's partial products go to its row instead (pair i in columns 4i..4i+3, the
    new pair's s.y, y.y in the last two; unused columns 0) and None is returned."""
    cdef Py_ssize_t n = g.shape[0], k = slots.shape[0], i, j, t0, t1
    if S.shape[1] != n or Y.shape[1] != n or S.shape[0] != Y.shape[0] \
            or not 0 <= lo <= hi <= n or new_slot >= S.shape[0]:
        raise ValueError("lbfgs_project: inconsistent shapes")
    if g_old is not None and (g_old.shape[0] != n or new_slot < 0):
        raise ValueError("lbfgs_project: g_old needs new_slot >= 0 and g's length")
    for i in range(k):
        if not 0 <= slots[i] < S.shape[0]:
            raise ValueError("lbfgs_project: slot out of range")
    cdef bint tiled = tile_sums is not None
    if tiled:
        _check_tiles(tile_sums, n, lo, 4 * k + 2)
    sums = np.zeros((k, 4))
    cdef double[:, ::1] acc = sums
    cdef double* row
    cdef const float* z = &Y[new_slot, 0] if new_slot >= 0 else NULL
    cdef float* y_new = &Y[new_slot, 0] if g_old is not None else NULL
    cdef const float* s_new = &S[new_slot, 0] if g_old is not None else NULL
    cdef const double* gp = &g_old[0] if g_old is not None else NULL
    cdef double pair[2]
    pair[0] = 0.0
    pair[1] = 0.0
    with nogil:
        t0 = lo
        while t0 < hi:
            t1 = min(t0 + _TILE, hi)
            if tiled:
                row = &tile_sums[t0 // _TILE, 0]
                for i in range(4 * k + 2):
                    row[i] = 0.0
                if y_new != NULL:
                    lc_lb_ydiff(&g[t0], gp + t0, s_new + t0, y_new + t0, t1 - t0, row + 4 * k)
                for i in range(k):
                    if z != NULL:
                        lc_lb_dot4(&S[slots[i], t0], &Y[slots[i], t0], &g[t0], z + t0,
                                   t1 - t0, row + 4 * i)
                    else:
                        lc_lb_dot2(&S[slots[i], t0], &Y[slots[i], t0], &g[t0], t1 - t0,
                                   row + 4 * i)
                t0 = t1
                continue
            if y_new != NULL:            # the new y, read back from cache below
                lc_lb_ydiff(&g[t0], gp + t0, s_new + t0, y_new + t0, t1 - t0, pair)
            for i in range(k):
                if z != NULL:
                    lc_lb_dot4(&S[slots[i], t0], &Y[slots[i], t0], &g[t0], z + t0, t1 - t0,
                               &acc[i, 0])
                else:
                    lc_lb_dot2(&S[slots[i], t0], &Y[slots[i], t0], &g[t0], t1 - t0,
                               &acc[i, 0])
            t0 = t1
    if tile_sums is not None:
        return None
    if g_old is not None:
        return sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3], (pair[0], pair[1])
    if new_slot >= 0:
        return sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
    return sums[:, 0], sums[:, 1], np.zeros(0), np.zeros(0)


def lbfgs_combine(const double[::1] g, const float[:, ::1] S, const float[:, ::1] Y,
                  const int[::1] slots, const double[::1] a, const double[::1] b,
                  double gamma, double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """out[lo:hi] = -gamma g - sum_i a_i S[slots[i]] - sum_i b_i Y[slots[i]]."""
    cdef Py_ssize_t n = g.shape[0], k = slots.shape[0], i, j, t0, t1
    if S.shape[1] != n or Y.shape[1] != n or S.shape[0] != Y.shape[0] or out.shape[0] != n \
            or a.shape[0] != k or b.shape[0] != k or not 0 <= lo <= hi <= n:
        raise ValueError("lbfgs_combine: inconsistent shapes")
    for i in range(k):
        if not 0 <= slots[i] < S.shape[0]:
            raise ValueError("lbfgs_combine: slot out of range")
    with nogil:
        t0 = lo
        while t0 < hi:
            t1 = min(t0 + _TILE, hi)
            for j in range(t0, t1):
                out[j] = -gamma * g[j]
            for i in range(k):
                lc_lb_axpy2(&out[t0], &S[slots[i], t0], &Y[slots[i], t0], a[i], b[i],
                            t1 - t0)
            t0 = t1
    return out


def lbfgs_store_range(const double[::1] x_new, const double[::1] x, const double[::1] g_new,
                      const double[::1] g, float[:, ::1] S, float[:, ::1] Y, Py_ssize_t slot,
                      Py_ssize_t lo, Py_ssize_t hi):
    """Columns [lo, hi) of row ``slot`` of S and Y := float32(x_new - x), float32(g_new - g)."""
    cdef Py_ssize_t n = x.shape[0]
    if x_new.shape[0] != n or g.shape[0] != n or g_new.shape[0] != n or S.shape[1] != n \
            or Y.shape[1] != n or S.shape[0] != Y.shape[0] or not 0 <= slot < S.shape[0] \
            or not 0 <= lo <= hi <= n:
        raise ValueError("lbfgs_store_range: inconsistent shapes")
    cdef double sy = 0.0, yy = 0.0
    if hi > lo:
        with nogil:
            store_pair(&x_new[lo], &x[lo], &g_new[lo], &g[lo], &S[slot, lo], &Y[slot, lo],
                       hi - lo, &sy, &yy)
    return sy, yy


def lbfgs_combine_trial(const double[::1] g, float[:, ::1] S, const float[:, ::1] Y,
                        const int[::1] slots, const double[::1] a, const double[::1] b,
                        double gamma, const double[::1] x, double[::1] x_out,
                        Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t s_slot=-1,
                        double[:, ::1] tile_sums=None):
    """:func:`lbfgs_combine` fused with ``g . d`` and the line search's first trial
    point, without writing the direction: over columns
    [lo, hi) ``x_out = x + d`` with ``d = -gamma g - S^T a - Y^T b`` formed tile by
    tile in a cache-resident scratch; returns the partial ``g . d``.  (The line
    search needs d itself only after a rejected unit step; then ``x_out - x``.)

    ``s_slot >= 0``: also ``S[s_slot, lo:hi] = float32(d)``, the next curvature
    pair's s should the unit step be accepted (written after the tile's products
    were formed, so ``s_slot`` may be one of ``slots``: the oldest pair's slot).

    ``tile_sums`` (shape ``(ceil(n / TILE), 1)``, ``lo`` on the tile grid): each
    tile's partial ``g . d`` goes to its row instead, and 0.0 is returned."""
    cdef Py_ssize_t n = g.shape[0], k = slots.shape[0], i, j, t0, t1
    if S.shape[1] != n or Y.shape[1] != n or S.shape[0] != Y.shape[0] \
            or x.shape[0] != n or x_out.shape[0] != n \
            or a.shape[0] != k or b.shape[0] != k or not 0 <= lo <= hi <= n \
            or s_slot >= S.shape[0]:
        raise ValueError("lbfgs_combine_trial: inconsistent shapes")
    for i in range(k):
        if not 0 <= slots[i] < S.shape[0]:
            raise ValueError("lbfgs_combine_trial: slot out of range")
    cdef bint tiled = tile_sums is not None
    if tiled:
        _check_tiles(tile_sums, n, lo, 1)
    cdef double part
    scratch = np.empty(_TILE)
    cdef double[::1] acc_view = scratch
    cdef double* acc = &acc_view[0]
    cdef double gd = 0.0
    cdef float* s_out = &S[s_slot, 0] if s_slot >= 0 else NULL
    with nogil:
        t0 = lo
        while t0 < hi:
            t1 = min(t0 + _TILE, hi)
            for j in range(t0, t1):
                acc[j - t0] = -gamma * g[j]
            for i in range(k):
                lc_lb_axpy2(acc, &S[slots[i], t0], &Y[slots[i], t0], a[i], b[i], t1 - t0)
            part = lc_lb_trial(acc, &g[t0], &x[t0], &x_out[t0],
                               s_out + t0 if s_out != NULL else NULL, t1 - t0)
            if tiled:
                tile_sums[t0 // _TILE, 0] = part
            else:
                gd += part
            t0 = t1
    return gd


def lbfgs_store_s(const double[::1] x_new, const double[::1] x, float[:, ::1] S,
                  Py_ssize_t slot, Py_ssize_t lo, Py_ssize_t hi):
    """Columns [lo, hi) of row ``slot`` of S := float32(x_new - x) (the pair's s after
    a step other than the fused unit step; its y comes with the next projection)."""
    cdef Py_ssize_t n = x.shape[0], j
    if x_new.shape[0] != n or S.shape[1] != n or not 0 <= slot < S.shape[0] \
            or not 0 <= lo <= hi <= n:
        raise ValueError("lbfgs_store_s: inconsistent shapes")
    cdef float* s = &S[slot, 0]
    with nogil:
        for j in range(lo, hi):
            s[j] = <float>(x_new[j] - x[j])
