"""Coordinate descent in the primal: the lasso with implicit (weighted)
centring, and the L1-regularised squared-hinge SVM (``l1r_l2_svc``, below).

Lasso
-----

Problem, for one target column (Friedman, Hastie & Tibshirani 2010,
"Regularization paths for generalized linear models via coordinate descent"):

    min_w 0.5 || yt - Xt w ||^2 + lam ||w||_1,
    Xt = D (X - 1 mu^T),   yt = D (y - ybar),   D = diag(v),  v = sqrt(sample_weight)

The centred matrix is never formed (it would be dense for sparse X).  The
kernel receives the *columns* of D X as the rows of a `Rows` view (CSR of
(D X)^T, i.e. CSC of D X, or the dense transpose) and keeps the residual as

    r = r_stored + s v,   so that   Xt_j . r = (D x_j) . r_stored + s a_j - mu_j (v . r_stored) - mu_j s (v . v)

with a_j = (D x_j) . v; an update of w_j by delta costs O(nnz of column j):
r_stored -= delta D x_j, s += delta mu_j, (v . r_stored) -= delta a_j.

Stopping rule as in scikit-learn's Lasso: when the largest coordinate change
of a pass is below tol times the largest |w_j|, the duality gap is computed
and the solver stops if it is below tol * (yt . yt).

L1-regularised L2-loss SVM
--------------------------
``l1r_l2_svc`` solves, for labels s_i = +-1 and costs C_i,

    min_w ||w||_1 + sum_i C_i max(0, 1 - s_i w . x_i)^2

by the coordinate descent of Yuan, Chang, Hsieh & Lin (2010), "A comparison
of optimization methods and software for large-scale L1-regularized linear
classification", JMLR 11, section 4.1.1 (LIBLINEAR's ``-s 5``): for each
coordinate j a one-variable Newton direction of the loss's second-order
model plus |w_j| (a soft-thresholded step), then a backtracking line search
on the exact objective (sufficient decrease with sigma = 0.01), first tried
against a cheap upper bound of the loss change.  The slack b_i = 1 - s_i w.x_i
is kept up to date, so a step costs O(nnz of column j).  Shrinking removes
coordinates at zero whose gradient lies well inside the interval from -1 to 1; the
solver stops when the sum of minimum-norm subgradients of a pass falls below tol times the
first pass's (from a warm start: times the sum at w = 0), after a final pass
over every coordinate.

The callers (linclass.linear.least_squares, linclass.linear.svm) validate
every array.
"""
from libc.math cimport fabs, INFINITY
from libc.stdint cimport uint64_t

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy, row_sq_norm
from linclass._core._rowsview cimport rows_from_views
from linclass._core._random cimport Rng, rng_seed, rng_below



cdef extern from *:
    """
    /* max(x, 0) and [x > 0] without a branch: whether a slack is positive is a coin
       flip for the rows near the margin, and compilers turn the C ternaries back
       into (mispredicted) jumps */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static inline double linclass_positive_part(double x) {
        return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_setzero_pd()));
    }
    static inline double linclass_is_positive(double x) {
        return _mm_cvtsd_f64(_mm_and_pd(_mm_cmpgt_sd(_mm_set_sd(x), _mm_setzero_pd()),
                                        _mm_set_sd(1.0)));
    }
    #else
    static inline double linclass_positive_part(double x) { return x > 0.0 ? x : 0.0; }
    static inline double linclass_is_positive(double x) { return x > 0.0 ? 1.0 : 0.0; }
    #endif
    """
    double positive_part "linclass_positive_part"(double x) noexcept nogil
    double is_positive "linclass_is_positive"(double x) noexcept nogil


cdef extern from *:
    """
    /* The column sweeps of the dense lasso (lasso_cd_dense) with SSE2 (the x86-64
       baseline): two doubles a vector, four vector sums in flight.  Scalar C with
       separate sums is not vectorised without -ffast-math, and the sweeps were
       bound by the latency of those sums rather than by memory. */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static inline double linclass_hsum(__m128d a) {
        return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a)));
    }
    /* x . y */
    static double linclass_cd_dot(Py_ssize_t n, const double* x, const double* y) {
        __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        Py_ssize_t i = 0;
        double s;
        for (; i + 8 <= n; i += 8) {
            s0 = _mm_add_pd(s0, _mm_mul_pd(_mm_loadu_pd(x + i), _mm_loadu_pd(y + i)));
            s1 = _mm_add_pd(s1, _mm_mul_pd(_mm_loadu_pd(x + i + 2), _mm_loadu_pd(y + i + 2)));
            s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd(x + i + 4), _mm_loadu_pd(y + i + 4)));
            s3 = _mm_add_pd(s3, _mm_mul_pd(_mm_loadu_pd(x + i + 6), _mm_loadu_pd(y + i + 6)));
        }
        s = linclass_hsum(_mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3)));
        for (; i < n; i++) s += x[i] * y[i];
        return s;
    }
    /* r += alpha x, then y . r (one sweep over r) */
    static double linclass_cd_axpy_dot(Py_ssize_t n, double alpha, const double* x,
                                       double* r, const double* y) {
        __m128d a = _mm_set1_pd(alpha), s0 = _mm_setzero_pd(), s1 = s0, r0, r1;
        Py_ssize_t i = 0;
        double s, ri;
        for (; i + 4 <= n; i += 4) {
            r0 = _mm_add_pd(_mm_loadu_pd(r + i), _mm_mul_pd(a, _mm_loadu_pd(x + i)));
            r1 = _mm_add_pd(_mm_loadu_pd(r + i + 2), _mm_mul_pd(a, _mm_loadu_pd(x + i + 2)));
            _mm_storeu_pd(r + i, r0);
            _mm_storeu_pd(r + i + 2, r1);
            s0 = _mm_add_pd(s0, _mm_mul_pd(_mm_loadu_pd(y + i), r0));
            s1 = _mm_add_pd(s1, _mm_mul_pd(_mm_loadu_pd(y + i + 2), r1));
        }
        s = linclass_hsum(_mm_add_pd(s0, s1));
        for (; i < n; i++) { ri = r[i] + alpha * x[i]; r[i] = ri; s += y[i] * ri; }
        return s;
    }
    #else
    static double linclass_cd_dot(Py_ssize_t n, const double* x, const double* y) {
        double s = 0.0; Py_ssize_t i;
        for (i = 0; i < n; i++) s += x[i] * y[i];
        return s;
    }
    static double linclass_cd_axpy_dot(Py_ssize_t n, double alpha, const double* x,
                                       double* r, const double* y) {
        double s = 0.0, ri; Py_ssize_t i;
        for (i = 0; i < n; i++) { ri = r[i] + alpha * x[i]; r[i] = ri; s += y[i] * ri; }
        return s;
    }
    #endif
    """
    double _dot "linclass_cd_dot"(Py_ssize_t n, const double* x, const double* y) noexcept nogil
    double _axpy_dot "linclass_cd_axpy_dot"(Py_ssize_t n, double alpha, const double* x,
                                            double* r, const double* y) noexcept nogil


cdef extern from *:
    """
    /* Two adjacent doubles of the transposed copy (scaled_transpose): with
       `stream`, a non-temporal store (the copy is written once and read by the
       next sweep from memory anyway: no read-for-ownership of its lines, a
       third less traffic than a plain store); p must then be 16-byte aligned. */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static inline void linclass_cd_store2(double* p, double x, double y, int stream) {
        if (stream) _mm_stream_pd(p, _mm_set_pd(y, x));
        else { p[0] = x; p[1] = y; }
    }
    static inline void linclass_cd_store_fence(void) { _mm_sfence(); }
    #define LINCLASS_CD_STREAM 1
    #else
    static inline void linclass_cd_store2(double* p, double x, double y, int stream) {
        p[0] = x; p[1] = y;
    }
    static inline void linclass_cd_store_fence(void) { }
    #define LINCLASS_CD_STREAM 0
    #endif
    """
    void _store2 "linclass_cd_store2"(double* p, double x, double y, int stream) noexcept nogil
    void _store_fence "linclass_cd_store_fence"() noexcept nogil
    int CD_STREAM "LINCLASS_CD_STREAM"


cdef inline double soft_threshold(double x, double lam) noexcept nogil:
    """sign(x) * max(|x| - lam, 0)"""
    if x > lam:
        return x - lam
    if x < -lam:
        return x + lam
    return 0.0


cdef inline double gap_from_residual(double R_norm2, double Ry, double w_norm1,
                                     double dual_norm, double lam) noexcept nogil:
    """The lasso duality gap from the residual's squared norm ``R_norm2``, its product
    ``Ry`` with the targets, ``||w||_1`` and ``||X^T R||_inf`` (the dual point is
    the residual scaled into the feasible set)."""
    cdef double const_, gap
    if dual_norm > lam:
        const_ = lam / dual_norm
        gap = 0.5 * (R_norm2 + R_norm2 * const_ * const_)
    else:
        const_ = 1.0
        gap = R_norm2
    return gap + lam * w_norm1 - const_ * Ry


cdef double duality_gap(const Rows* XT, const double* mu, const double* v,
                        const double* a, double vv, const double* r_stored, double s,
                        const double* yt, const double* w, double lam, double* R) noexcept nogil:
    """Lasso duality gap at w (R: n_samples workspace, filled with the residual)."""
    cdef Py_ssize_t i, j, nnz, n = XT.n_cols
    cdef const double* values
    cdef const int* indices
    cdef double vr = 0.0, xr, dual_norm = 0.0, R_norm2 = 0.0, w_norm1 = 0.0, Ry = 0.0
    for i in range(n):
        R[i] = r_stored[i] + s * v[i]                      # r = r_stored + s v
        vr += v[i] * R[i]
        R_norm2 += R[i] * R[i]
        Ry += R[i] * yt[i]
    for j in range(XT.n_rows):
        nnz = rows_get(XT, j, &values, &indices)
        xr = row_dot(values, indices, nnz, R) - mu[j] * vr   # Xt_j . R
        if fabs(xr) > dual_norm:
            dual_norm = fabs(xr)
        w_norm1 += fabs(w[j])
    return gap_from_residual(R_norm2, Ry, w_norm1, dual_norm, lam)


def scaled_transpose(const double[:, ::1] X, const double[::1] v, double[::1] sq,
                     double[::1] sums=None, Py_ssize_t tile_rows=512, Py_ssize_t tile_cols=64):
    """``(diag(v) X)^T`` as a C-contiguous array, copied in cache-sized tiles
    (numpy's strided transposing copy of a tall matrix is 2-3x slower), and
    the squared norms of its rows in ``sq`` (and, when ``sums`` is given, the
    weighted column sums ``X^T v^2`` there: the lasso's column means, without
    another pass over ``X``); the scaling is skipped when every ``v`` is 1.
    Tiles of ``tile_rows x tile_cols`` (512 x 64: 256 KiB, in L2; each row of the
    copy is written 4 KiB at a time) and two rows at a time with two sums
    (measured, loaded, one thread, 10000 x 500: 512 x 64 tiles 13.7-14.9 ms against
    17.3-22.0 ms for 128 x 128, 32 x 500 and 2048 x 8 tiles slower still; 128 x 128 had
    been measured 1.3x faster than 32 x 32 tiles one row at a time)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i0, j0, i, j, i1, j1
    cdef Py_ssize_t B = tile_rows, BJ = tile_cols
    cdef double x, y, acc, acc2, c1, c2
    cdef bint with_sums = sums is not None
    if v.shape[0] != n or sq.shape[0] != d or (with_sums and sums.shape[0] != d) \
            or B < 1 or BJ < 1:
        raise ValueError("scaled_transpose: inconsistent array shapes or tile sizes")
    out = np.empty((d, n), dtype=np.float64)
    cdef double[:, ::1] T = out
    cdef double[::1] cs = sums if with_sums else np.empty(d)
    cdef bint unit = True
    for i in range(n):
        if v[i] != 1.0:
            unit = False
            break
    # non-temporal stores need 16-byte aligned pairs: every row of the copy
    # starts aligned when the array does and n is even, and i stays even when
    # the tiles start at even rows (tile_rows even)
    cdef int stream = (CD_STREAM and n % 2 == 0 and B % 2 == 0
                       and (<size_t>&T[0, 0]) % 16 == 0)
    with nogil:
        for j in range(d):
            sq[j] = 0.0
            cs[j] = 0.0
        i0 = 0
        while i0 < n:
            i1 = i0 + B if i0 + B < n else n
            j0 = 0
            while j0 < d:
                j1 = j0 + BJ if j0 + BJ < d else d
                for j in range(j0, j1):
                    acc = 0.0
                    acc2 = 0.0
                    c1 = 0.0
                    c2 = 0.0
                    i = i0
                    if unit:
                        while i + 2 <= i1:
                            x = X[i, j]
                            y = X[i + 1, j]
                            _store2(&T[j, i], x, y, stream)   # T[j, i], T[j, i + 1]
                            acc += x * x
                            acc2 += y * y
                            c1 += x
                            c2 += y
                            i += 2
                        if i < i1:
                            x = X[i, j]
                            T[j, i] = x
                            acc += x * x
                            c1 += x
                    else:
                        while i + 2 <= i1:
                            x = v[i] * X[i, j]
                            y = v[i + 1] * X[i + 1, j]
                            _store2(&T[j, i], x, y, stream)   # T[j, i], T[j, i + 1]
                            acc += x * x
                            acc2 += y * y
                            c1 += v[i] * x
                            c2 += v[i + 1] * y
                            i += 2
                        if i < i1:
                            x = v[i] * X[i, j]
                            T[j, i] = x
                            acc += x * x
                            c1 += v[i] * x
                    sq[j] += acc + acc2
                    cs[j] += c1 + c2
                j0 = j1
            i0 = i1
        _store_fence()
    return out


def lasso_cd_dense(const double[:, ::1] XT, const double[::1] sq, const double[::1] mu,
                   const double[::1] v, const double[::1] yt, double[::1] w, double lam,
                   double tol, Py_ssize_t max_iter):
    """:func:`lasso_cd` for dense ``X``: the columns of ``D X`` are the rows of
    ``XT`` (n_features x n_samples, from :func:`scaled_transpose`, which also
    gives their squared norms ``sq``), and the column sweeps are contiguous dot
    products and axpys over those rows (vectorised; the generic row loops are
    not), the gap's ``Xt^T r`` one more such pass.  Same updates, stopping rule and result as :func:`lasso_cd`.
    Uses ``(D x_j) . v = sum_i sw_i x_ij = (v . v) mu_j`` (``mu`` is zero
    without an intercept, and then that term is not needed).
    """
    cdef Py_ssize_t d = XT.shape[0], n = XT.shape[1]
    if sq.shape[0] != d or mu.shape[0] != d or w.shape[0] != d or v.shape[0] != n \
            or yt.shape[0] != n or d < 1 or n < 1:
        raise ValueError("lasso_cd_dense: inconsistent array shapes")
    cdef double[::1] r = np.array(yt, dtype=np.float64)       # r_stored
    cdef double[::1] norm = np.empty(d), a = np.empty(d), xr_all = np.empty(d)
    cdef double[::1] R = np.empty(n)
    cdef Py_ssize_t it = 0, i, j
    cdef double vv = 0.0, vr = 0.0, s = 0.0, yy = 0.0, rho, xr, w_new, delta
    cdef double d_max, w_max, gap = INFINITY, gap_tol
    cdef double dual_norm, R_norm2, w_norm1, Ry, pending_delta
    cdef const double* Xj
    cdef const double* pending
    with nogil:
        for i in range(n):
            vv += v[i] * v[i]
            yy += yt[i] * yt[i]
        gap_tol = tol * yy
        for j in range(d):
            a[j] = vv * mu[j]
            norm[j] = sq[j] - 2.0 * mu[j] * a[j] + mu[j] * mu[j] * vv
            if w[j] != 0.0:
                row_axpy(-w[j], &XT[j, 0], NULL, n, &r[0])
                s += w[j] * mu[j]
        vr = _dot(n, &v[0], &r[0])
        while it < max_iter:
            d_max = 0.0
            w_max = 0.0
            # the update r -= delta Xt_j of a coordinate is deferred (pending,
            # pending_delta) and fused with the next coordinate's product
            pending = NULL
            pending_delta = 0.0
            for j in range(d):
                if norm[j] <= 0.0:
                    w[j] = 0.0
                    continue
                Xj = &XT[j, 0]
                if pending != NULL:
                    xr = _axpy_dot(n, -pending_delta, pending, &r[0], Xj)
                    pending = NULL
                else:
                    xr = _dot(n, Xj, &r[0])
                xr = xr + s * a[j] - mu[j] * vr - mu[j] * s * vv      # Xt_j . r
                rho = xr + w[j] * norm[j]
                w_new = soft_threshold(rho, lam) / norm[j]
                delta = w_new - w[j]
                if delta != 0.0:
                    pending = Xj                                       # r -= delta Xt_j
                    pending_delta = delta
                    s += delta * mu[j]
                    vr -= delta * a[j]
                    w[j] = w_new
                if fabs(delta) > d_max:
                    d_max = fabs(delta)
                if fabs(w[j]) > w_max:
                    w_max = fabs(w[j])
            if pending != NULL:
                row_axpy(-pending_delta, pending, NULL, n, &r[0])
            it += 1
            if w_max == 0.0 or d_max <= tol * w_max or it == max_iter:
                # the gap of duality_gap, with X^T R row by row of XT
                vr = 0.0
                R_norm2 = 0.0
                Ry = 0.0
                for i in range(n):
                    R[i] = r[i] + s * v[i]
                    vr += v[i] * R[i]
                    R_norm2 += R[i] * R[i]
                    Ry += R[i] * yt[i]
                for j in range(d):
                    xr_all[j] = _dot(n, &XT[j, 0], &R[0])
                dual_norm = 0.0
                w_norm1 = 0.0
                for j in range(d):
                    xr = fabs(xr_all[j] - mu[j] * vr)
                    if xr > dual_norm:
                        dual_norm = xr
                    w_norm1 += fabs(w[j])
                gap = gap_from_residual(R_norm2, Ry, w_norm1, dual_norm, lam)
                vr = _dot(n, &v[0], &r[0])
                if gap <= gap_tol:
                    break
    return it, gap, gap_tol


def lasso_cd_gram(const double[:, ::1] G, const double[::1] c, double yy, double[::1] w,
                  double lam, double tol, Py_ssize_t max_iter):
    """Lasso by cyclic coordinate descent with covariance updates, in place on ``w``.

    glmnet's "covariance" updates (Friedman, Hastie & Tibshirani 2010, sec.
    2.2): with the Gram matrix ``G = Xt^T Xt`` (full, symmetric) and ``c =
    Xt^T yt`` the gradient ``g = Xt^T r = c - G w`` is kept instead of the
    residual, so an update costs O(n_features) (one row of ``G``) whatever
    n_samples, and a coordinate that stays at zero costs O(1).  ``yy = yt .
    yt``.  Same stopping rule and duality gap as :func:`lasso_cd` (the gap
    from ``g``, ``w . c`` and ``yy`` in O(n_features)).  Returns
    (n_passes, duality_gap, gap_tolerance).
    """
    cdef Py_ssize_t d = G.shape[0]
    if G.shape[1] != d or c.shape[0] != d or w.shape[0] != d or d < 1:
        raise ValueError("lasso_cd_gram: inconsistent array shapes")
    cdef double[::1] g = np.array(c, dtype=np.float64)
    cdef Py_ssize_t it = 0, j, k
    cdef const double* Gj
    cdef double rho, w_new, delta, d_max, w_max, gap = INFINITY, gap_tol = tol * yy
    cdef double wc, wg, w_norm1, dual_norm, r_norm2
    with nogil:
        for j in range(d):
            if w[j] != 0.0:
                Gj = &G[j, 0]
                for k in range(d):
                    g[k] -= w[j] * Gj[k]                               # g = c - G w
        while it < max_iter:
            d_max = 0.0
            w_max = 0.0
            for j in range(d):
                if G[j, j] <= 0.0:
                    w[j] = 0.0
                    continue
                rho = g[j] + w[j] * G[j, j]
                w_new = soft_threshold(rho, lam) / G[j, j]
                delta = w_new - w[j]
                if delta != 0.0:
                    Gj = &G[j, 0]
                    for k in range(d):
                        g[k] -= delta * Gj[k]
                    w[j] = w_new
                if fabs(delta) > d_max:
                    d_max = fabs(delta)
                if fabs(w[j]) > w_max:
                    w_max = fabs(w[j])
            it += 1
            if w_max == 0.0 or d_max <= tol * w_max or it == max_iter:
                # ||r||^2 = yy - 2 w.c + w.G w = yy - w.c - w.g;  Xt^T r = g;  r.yt = yy - w.c
                wc = 0.0
                wg = 0.0
                w_norm1 = 0.0
                dual_norm = 0.0
                for j in range(d):
                    wc += w[j] * c[j]
                    wg += w[j] * g[j]
                    w_norm1 += fabs(w[j])
                    if fabs(g[j]) > dual_norm:
                        dual_norm = fabs(g[j])
                r_norm2 = yy - wc - wg
                if r_norm2 < 0.0:
                    r_norm2 = 0.0
                gap = gap_from_residual(r_norm2, yy - wc, w_norm1, dual_norm, lam)
                if gap <= gap_tol:
                    break
    return it, gap, gap_tol


def lasso_cd(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_features,
             Py_ssize_t n_samples, const double[::1] mu, const double[::1] v,
             const double[::1] yt, double[::1] w, double lam, double tol, Py_ssize_t max_iter):
    """Lasso by cyclic coordinate descent, in place on ``w`` (warm start).

    ``data/indices/indptr`` hold (D X)^T as n_features rows of n_samples
    columns; ``mu`` the (weighted) column means (zeros without intercept),
    ``v`` the square roots of the sample weights, ``yt`` the centred, scaled
    target.  Returns (n_passes, duality_gap, gap_tolerance).
    """
    if mu.shape[0] != n_features or w.shape[0] != n_features or v.shape[0] != n_samples \
            or yt.shape[0] != n_samples or n_features < 1 or n_samples < 1:
        raise ValueError("lasso_cd: inconsistent array shapes")
    cdef Rows XT = rows_from_views(data, indices, indptr, is_sparse, n_features, n_samples)
    cdef double[::1] r_stored = np.array(yt, dtype=np.float64)
    cdef double[::1] a = np.zeros(n_features), norm = np.zeros(n_features)
    cdef double[::1] R = np.zeros(n_samples)
    cdef Py_ssize_t it = 0, i, j, nnz
    cdef const double* values
    cdef const int* ind
    cdef double vv = 0.0, vr = 0.0, s = 0.0, yy = 0.0, rho, xr, w_new, delta
    cdef double d_max, w_max, gap = INFINITY, gap_tol
    with nogil:
        for i in range(n_samples):
            vv += v[i] * v[i]
            yy += yt[i] * yt[i]
        gap_tol = tol * yy
        for j in range(n_features):
            nnz = rows_get(&XT, j, &values, &ind)
            a[j] = row_dot(values, ind, nnz, &v[0])                   # (D x_j) . v
            norm[j] = row_sq_norm(values, nnz) - 2.0 * mu[j] * a[j] + mu[j] * mu[j] * vv
            if w[j] != 0.0:
                row_axpy(-w[j], values, ind, nnz, &r_stored[0])       # r -= w_j D x_j
                s += w[j] * mu[j]
        for i in range(n_samples):
            vr += v[i] * r_stored[i]
        while it < max_iter:
            d_max = 0.0
            w_max = 0.0
            for j in range(n_features):
                if norm[j] <= 0.0:
                    w[j] = 0.0
                    continue
                nnz = rows_get(&XT, j, &values, &ind)
                xr = row_dot(values, ind, nnz, &r_stored[0]) + s * a[j] \
                    - mu[j] * vr - mu[j] * s * vv                      # Xt_j . r
                rho = xr + w[j] * norm[j]
                w_new = soft_threshold(rho, lam) / norm[j]
                delta = w_new - w[j]
                if delta != 0.0:
                    row_axpy(-delta, values, ind, nnz, &r_stored[0])   # r -= delta Xt_j
                    s += delta * mu[j]
                    vr -= delta * a[j]
                    w[j] = w_new
                if fabs(delta) > d_max:
                    d_max = fabs(delta)
                if fabs(w[j]) > w_max:
                    w_max = fabs(w[j])
            it += 1
            if w_max == 0.0 or d_max <= tol * w_max or it == max_iter:
                gap = duality_gap(&XT, &mu[0], &v[0], &a[0], vv, &r_stored[0], s, &yt[0],
                                  &w[0], lam, &R[0])
                if gap <= gap_tol:
                    break
    return it, gap, gap_tol


cdef inline double sq_hinge_loss(const double* b, Py_ssize_t n_samples) noexcept nogil:
    """sum_i max(0, b_i)^2 (the costs are folded into b: b_i = sqrt(C_i) slack_i)"""
    cdef double s = 0.0, bi
    cdef Py_ssize_t i
    for i in range(n_samples):
        bi = b[i] if b[i] > 0.0 else 0.0
        s += bi * bi
    return s


cdef inline double column_shift_loss(const double* values, const int* indices, Py_ssize_t nnz,
                                     double step, double* b, double* loss_old) noexcept nogil:
    """b_i += step * z_ij on column j's entries; returns the new loss of those
    entries, and (if loss_old is not NULL) stores their loss before the shift.
    Branch-free: whether b_i > 0 is a coin flip for the rows near the margin."""
    cdef Py_ssize_t k, i
    cdef double new = 0.0, old = 0.0, bi, p
    for k in range(nnz):
        i = k if indices == NULL else indices[k]
        bi = b[i]
        p = positive_part(bi)
        old += p * p
        bi = bi + step * values[k]
        b[i] = bi
        p = positive_part(bi)
        new += p * p
    if loss_old != NULL:
        loss_old[0] = old
    return new


cdef inline void column_grad_hess(const double* values, const int* indices, Py_ssize_t nnz,
                                  const double* b, double* g, double* h) noexcept nogil:
    """g = -sum_{b_i > 0} b_i z_ij,  h = sum_{b_i > 0} z_ij^2 (costs folded into z and b),
    branch-free"""
    cdef Py_ssize_t k
    cdef double gs = 0.0, hs = 0.0, bi, v, one
    if indices == NULL:
        for k in range(nnz):
            bi = b[k]
            v = values[k]
            one = is_positive(bi)
            gs -= v * (one * bi)
            hs += one * v * v
    else:
        for k in range(nnz):
            bi = b[indices[k]]
            v = values[k]
            one = is_positive(bi)
            gs -= v * (one * bi)
            hs += one * v * v
    g[0] = gs
    h[0] = hs


cdef Py_ssize_t l1r_l2_svc_kernel(const Rows* XT, const double* root,
                                  double* w, double* b, double* xj_sq, int* index,
                                  double tol, Py_ssize_t max_iter, bint shrinking,
                                  uint64_t seed, double* out_gnorm) noexcept nogil:
    """The solver of the module docstring, in place on w (n_features = XT.n_rows).

    XT holds z_ij = sqrt(C_i) s_i x_ij (labels and costs folded into the columns;
    root[i] = sqrt(C_i)); b (n_samples) receives the scaled slacks
    sqrt(C_i) (1 - s_i w . x_i), so that the loss is sum_i max(0, b_i)^2 and
    its derivatives need no costs; xj_sq and index are n_features workspaces.
    Returns the number of passes; out_gnorm[0:2] the
    last and the first pass's sum of minimum-norm subgradients."""
    cdef Py_ssize_t n_features = XT.n_rows, n_samples = XT.n_cols
    cdef Py_ssize_t j, s, k, i, it = 0, active = n_features, n_search, tmp
    cdef Py_ssize_t max_search = 20
    cdef const double* values
    cdef const int* ind
    cdef Py_ssize_t nnz
    cdef double sigma = 0.01, g_loss, G, H, Gp, Gn, violation, d, d_old, d_diff
    cdef double delta, cond, appxcond, loss_old = 0.0, loss_new
    cdef double gmax_old = INFINITY, gmax_new, gnorm_new = 0.0, gnorm_init = -1.0
    cdef bint warm = False
    cdef Rng rng
    rng_seed(&rng, seed)
    for i in range(n_samples):
        b[i] = root[i]
    for j in range(n_features):
        index[j] = <int>j
        nnz = rows_get(XT, j, &values, &ind)
        xj_sq[j] = row_sq_norm(values, nnz)                     # sum_i C_i x_ij^2
        if w[j] != 0.0:
            warm = True
            row_axpy(-w[j], values, ind, nnz, b)       # b -= w_j z_j
    if warm:
        # a warm start may begin near the optimum, where the first pass's
        # subgradient sum is no scale: measure it at w = 0 instead (b = 1)
        gnorm_init = 0.0
        for j in range(n_features):
            nnz = rows_get(XT, j, &values, &ind)
            G = 0.0
            for k in range(nnz):
                i = k if ind == NULL else ind[k]
                G -= 2.0 * root[i] * values[k]                   # d loss / d w_j at w = 0
            if fabs(G) > 1.0:
                gnorm_init += fabs(G) - 1.0
    while it < max_iter:
        gmax_new = 0.0
        gnorm_new = 0.0
        for s in range(active):                                  # random order
            k = s + rng_below(&rng, active - s)
            tmp = index[k]
            index[k] = index[s]
            index[s] = <int>tmp
        s = 0
        while s < active:
            j = index[s]
            nnz = rows_get(XT, j, &values, &ind)
            column_grad_hess(values, ind, nnz, b, &g_loss, &H)
            g_loss *= 2.0
            G = g_loss
            H *= 2.0
            if H < 1e-12:
                H = 1e-12
            Gp = G + 1.0
            Gn = G - 1.0
            violation = 0.0
            if w[j] == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif shrinking and Gp > gmax_old / n_samples and Gn < -gmax_old / n_samples:
                    active -= 1                                  # shrink j
                    tmp = index[s]
                    index[s] = index[active]
                    index[active] = <int>tmp
                    continue
            elif w[j] > 0.0:
                violation = fabs(Gp)
            else:
                violation = fabs(Gn)
            if violation > gmax_new:
                gmax_new = violation
            gnorm_new += violation
            # Newton direction of  G d + H d^2 / 2 + |w_j + d|
            if Gp < H * w[j]:
                d = -Gp / H
            elif Gn > H * w[j]:
                d = -Gn / H
            else:
                d = -w[j]
            if fabs(d) < 1.0e-12:
                s += 1
                continue
            delta = fabs(w[j] + d) - fabs(w[j]) + G * d
            d_old = 0.0
            n_search = 0
            while n_search < max_search:
                d_diff = d_old - d
                cond = fabs(w[j] + d) - fabs(w[j]) - sigma * delta
                appxcond = xj_sq[j] * d * d + g_loss * d + cond     # upper bound first
                if appxcond <= 0.0:
                    row_axpy(d_diff, values, ind, nnz, b)
                    break
                if n_search == 0:
                    loss_new = column_shift_loss(values, ind, nnz, d_diff, b, &loss_old)
                else:
                    loss_new = column_shift_loss(values, ind, nnz, d_diff, b, NULL)
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                n_search += 1
            w[j] += d
            if n_search >= max_search:                           # recompute b from w
                for i in range(n_samples):
                    b[i] = root[i]
                for k in range(n_features):
                    if w[k] != 0.0:
                        nnz = rows_get(XT, k, &values, &ind)
                        row_axpy(-w[k], values, ind, nnz, b)
            s += 1
        if it == 0 and not warm:
            gnorm_init = gnorm_new
        it += 1
        if gnorm_new <= tol * gnorm_init:
            if active == n_features:
                break
            active = n_features                                  # unshrink, check all
            gmax_old = INFINITY
            continue
        gmax_old = gmax_new
    out_gnorm[0] = gnorm_new
    out_gnorm[1] = gnorm_init
    return it


def l1r_l2_svc(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_features,
               Py_ssize_t n_samples, const double[::1] cost,
               double[::1] w, double tol, Py_ssize_t max_iter, bint shrinking, uint64_t seed):
    """L1-regularised squared-hinge SVM by primal coordinate descent, in place on ``w``.

    ``data/indices/indptr`` hold the columns of Z = diag(s) X (labels s_i =
    +-1 folded in; with the constant bias column appended by the caller when
    there is an intercept) as the n_features rows of a CSR or dense matrix
    over n_samples columns; ``cost`` the per-sample C_i >= 0, ``w`` the start
    point.  Returns (n_passes, final subgradient sum, first subgradient sum,
    objective ||w||_1 + sum_i C_i max(0, 1 - z_i . w)^2).
    """
    if cost.shape[0] != n_samples \
            or w.shape[0] != n_features or n_features < 1 or n_samples < 1:
        raise ValueError("l1r_l2_svc: inconsistent array shapes")
    cdef const double[::1] values = data
    cdef const int[::1] ind = indices
    cdef const int[::1] ptr = indptr
    cdef double[::1] root = np.sqrt(np.asarray(cost, dtype=np.float64))
    # z_ij sqrt(C_i): the costs folded into the columns once, for all passes
    scaled = np.array(values, dtype=np.float64)
    cdef double[::1] z = scaled
    cdef Py_ssize_t it, j, k, n_stored
    if is_sparse:
        n_stored = ptr[n_features]
        if ptr.shape[0] != n_features + 1 or n_stored > z.shape[0]:
            raise ValueError("l1r_l2_svc: inconsistent array shapes")
        with nogil:
            for k in range(n_stored):
                z[k] = z[k] * root[ind[k]]
    else:
        if z.shape[0] < n_features * n_samples:
            raise ValueError("l1r_l2_svc: inconsistent array shapes")
        with nogil:
            for j in range(n_features):
                for k in range(n_samples):
                    z[j * n_samples + k] = z[j * n_samples + k] * root[k]
    cdef Rows XT = rows_from_views(z, indices, indptr, is_sparse, n_features, n_samples)
    cdef double[::1] b = np.zeros(n_samples), xj_sq = np.zeros(n_features)
    cdef int[::1] index = np.zeros(n_features, dtype=np.int32)
    cdef double gnorm[2]
    cdef double objective = 0.0
    with nogil:
        it = l1r_l2_svc_kernel(&XT, &root[0], &w[0], &b[0], &xj_sq[0], &index[0],
                               tol, max_iter, shrinking, seed, gnorm)
        for j in range(n_features):
            objective += fabs(w[j])
        objective += sq_hinge_loss(&b[0], n_samples)
    return it, gnorm[0], gnorm[1], objective
