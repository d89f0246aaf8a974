"""Ridge kernels: the centred, weighted Gram operators applied to a block of k
columns in fused passes over a CSR matrix (the products conjugate gradients
needs, without forming the centred matrix nor any (n_features, k) temporary).

With ``v = sqrt(sw)``, ``mu = X^T sw / sum(sw)`` and ``Xt = diag(v) (X - 1 mu^T)``:

* dual (kernel) side, Q of shape (n_samples, k):
  ``out = (Xt Xt^T + alpha I) Q``.  With ``Z = diag(v) Q``, ``s = 1^T Z`` and
  ``m = X mu``: ``out_i = v_i ((X X^T Z)_i - m_i s - m^T Z + (mu.mu) s) + alpha Q_i``,
  ``X X^T Z = sum_j x_j (x_j^T Z)`` in one pass over the columns of X (CSC).
* primal side, P of shape (n_features, k):
  ``out = (Xt^T Xt + alpha I) P`` in ONE pass over the rows: for each row
  ``r = sw_i (x_i P - mu^T P)`` is scattered, ``out += x_i^T r``, and
  ``out -= mu (1^T R)`` at the end.

Hestenes & Stiefel (1952); scikit-learn's ``sparse_cg`` solver applies the same
operators column by column through scipy's LinearOperator.  The caller
(linclass.linear.least_squares) validates every array.
"""
import numpy as np


cdef extern from *:
    """
    /* x . y with SSE2 (the x86-64 baseline), four vector sums in flight (scalar C
       with one sum is not vectorised without -ffast-math); the dense refinement
       pass of the mixed-precision ridge (dense_normal_residual). */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static double linclass_ridge_dot(Py_ssize_t n, const double* x, const double* y) {
        __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        Py_ssize_t i = 0;
        double s;
        for (; i + 8 <= n; i += 8) {
            s0 = _mm_add_pd(s0, _mm_mul_pd(_mm_loadu_pd(x + i), _mm_loadu_pd(y + i)));
            s1 = _mm_add_pd(s1, _mm_mul_pd(_mm_loadu_pd(x + i + 2), _mm_loadu_pd(y + i + 2)));
            s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd(x + i + 4), _mm_loadu_pd(y + i + 4)));
            s3 = _mm_add_pd(s3, _mm_mul_pd(_mm_loadu_pd(x + i + 6), _mm_loadu_pd(y + i + 6)));
        }
        s0 = _mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3));
        s = _mm_cvtsd_f64(_mm_add_sd(s0, _mm_unpackhi_pd(s0, s0)));
        for (; i < n; i++) s += x[i] * y[i];
        return s;
    }
    #else
    static double linclass_ridge_dot(Py_ssize_t n, const double* x, const double* y) {
        double s = 0.0; Py_ssize_t i;
        for (i = 0; i < n; i++) s += x[i] * y[i];
        return s;
    }
    #endif
    """
    double _dot "linclass_ridge_dot"(Py_ssize_t n, const double* x, const double* y) noexcept nogil


cdef void dual_apply_pass(const double* data, const int* rows, const int* colptr,
                          Py_ssize_t n, Py_ssize_t d, Py_ssize_t k,
                          const double* v, const double* m, double mumu, double alpha,
                          const double* Q, double* out, double* Z, double* u,
                          double* s, double* mz) noexcept nogil:
    """X given by columns (CSC: ``rows``/``colptr``).  X X^T Z = sum_j x_j (x_j^T Z):
    column by column, u = x_j^T Z (k values) then out += x_j u^T, so X is read
    once and only the (n, k) blocks Z and out are touched at random (they stay
    in cache), no (n_features, k) array at all."""
    cdef Py_ssize_t i, j, c, p
    cdef double x, vi, mi
    cdef const double* zrow
    cdef double* orow
    for c in range(k):
        s[c] = 0.0
        mz[c] = 0.0
    for i in range(n):                      # Z = diag(v) Q, s = 1^T Z, mz = m^T Z
        vi = v[i]
        mi = m[i]
        for c in range(k):
            x = vi * Q[i * k + c]
            Z[i * k + c] = x
            s[c] += x
            mz[c] += mi * x
            out[i * k + c] = 0.0
    for j in range(d):                      # out = X X^T Z, one column at a time
        if colptr[j + 1] == colptr[j]:
            continue
        for c in range(k):
            u[c] = 0.0
        for p in range(colptr[j], colptr[j + 1]):
            x = data[p]
            zrow = Z + rows[p] * k
            for c in range(k):
                u[c] += x * zrow[c]
        for p in range(colptr[j], colptr[j + 1]):
            x = data[p]
            orow = out + rows[p] * k
            for c in range(k):
                orow[c] += x * u[c]
    for i in range(n):                      # out_i = v_i (out_i - m_i s - m^T Z + mumu s) + alpha Q_i
        vi = v[i]
        mi = m[i]
        for c in range(k):
            out[i * k + c] = vi * (out[i * k + c] + mumu * s[c] - mz[c] - mi * s[c]) \
                + alpha * Q[i * k + c]


cdef void primal_apply_pass(const double* data, const int* indices, const int* indptr,
                            Py_ssize_t n, Py_ssize_t d, Py_ssize_t k,
                            const double* sw, const double* mu, double alpha,
                            const double* P, double* out, double* r, double* muP,
                            double* rsum) noexcept nogil:
    cdef Py_ssize_t i, j, c, p, col
    cdef double x
    cdef const double* prow
    cdef double* orow
    for c in range(k):
        muP[c] = 0.0
        rsum[c] = 0.0
    for j in range(d):                      # muP = mu^T P, out = alpha P
        x = mu[j]
        prow = P + j * k
        orow = out + j * k
        for c in range(k):
            muP[c] += x * prow[c]
            orow[c] = alpha * prow[c]
    for i in range(n):
        if sw[i] == 0.0:
            continue
        for c in range(k):
            r[c] = -muP[c]
        for p in range(indptr[i], indptr[i + 1]):       # r = x_i P - mu^T P
            prow = P + indices[p] * k
            x = data[p]
            for c in range(k):
                r[c] += x * prow[c]
        for c in range(k):
            r[c] *= sw[i]
            rsum[c] += r[c]
        for p in range(indptr[i], indptr[i + 1]):       # out += x_i^T r
            orow = out + indices[p] * k
            x = data[p]
            for c in range(k):
                orow[c] += x * r[c]
    for j in range(d):                      # out -= mu (1^T R)
        x = mu[j]
        orow = out + j * k
        for c in range(k):
            orow[c] -= x * rsum[c]


def _check_csr(data, indices, indptr, n, d):
    if n < 1 or d < 1 or indptr.shape[0] != n + 1 or data.shape[0] < 1 \
            or indices.shape[0] != data.shape[0] or indptr[n] > data.shape[0]:
        raise ValueError("inconsistent CSR arrays")


def dual_apply(const double[::1] data, const int[::1] rows, const int[::1] colptr,
               Py_ssize_t n_cols, const double[::1] v, const double[::1] m, double mumu,
               double alpha, const double[:, ::1] Q, double[:, ::1] out):
    """``out = (Xt Xt^T + alpha I) Q`` (see the module docstring) with ``X`` given
    by its CSC arrays (``rows`` the row index of each stored value)."""
    cdef Py_ssize_t n = Q.shape[0], k = Q.shape[1]
    _check_csr(data, rows, colptr, n_cols, n)
    if k < 1 or out.shape[0] != n or out.shape[1] != k or v.shape[0] != n \
            or m.shape[0] != n:
        raise ValueError("dual_apply: inconsistent shapes")
    Z = np.empty((n, k))
    sums = np.empty(3 * k)
    cdef double[:, ::1] z = Z
    cdef double[::1] sv = sums
    with nogil:
        dual_apply_pass(&data[0], &rows[0], &colptr[0], n, n_cols, k, &v[0], &m[0], mumu,
                        alpha, &Q[0, 0], &out[0, 0], &z[0, 0], &sv[0], &sv[k], &sv[2 * k])
    return out


def primal_apply(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 Py_ssize_t n_rows, const double[::1] sw, const double[::1] mu, double alpha,
                 const double[:, ::1] P, double[:, ::1] out):
    """``out = (Xt^T Xt + alpha I) P`` (see the module docstring)."""
    cdef Py_ssize_t d = P.shape[0], k = P.shape[1]
    _check_csr(data, indices, indptr, n_rows, d)
    if k < 1 or out.shape[0] != d or out.shape[1] != k or sw.shape[0] != n_rows \
            or mu.shape[0] != d:
        raise ValueError("primal_apply: inconsistent shapes")
    work = np.empty(3 * k)
    cdef double[::1] w = work
    with nogil:
        primal_apply_pass(&data[0], &indices[0], &indptr[0], n_rows, d, k, &sw[0], &mu[0],
                          alpha, &P[0, 0], &out[0, 0], &w[0], &w[k], &w[2 * k])
    return out


def dual_to_primal(const double[::1] data, const int[::1] rows, const int[::1] colptr,
                   Py_ssize_t n_cols, const double[::1] v, const double[::1] mu,
                   const double[:, ::1] A):
    """``W = Xt^T A = X^T (diag(v) A) - mu (1^T diag(v) A)``, shape (n_cols, k), with
    ``X`` given by its CSC arrays: row j of W from column j of X (one pass)."""
    cdef Py_ssize_t n = A.shape[0], k = A.shape[1], i, j, c, p
    _check_csr(data, rows, colptr, n_cols, n)
    if k < 1 or v.shape[0] != n or mu.shape[0] != n_cols:
        raise ValueError("dual_to_primal: inconsistent shapes")
    W = np.empty((n_cols, k))
    Z = np.empty((n, k))
    sums = np.zeros(k)
    cdef double[:, ::1] w = W
    cdef double[:, ::1] z = Z
    cdef double[::1] s = sums
    cdef double x
    with nogil:
        for i in range(n):
            for c in range(k):
                x = v[i] * A[i, c]
                z[i, c] = x
                s[c] += x
        for j in range(n_cols):
            for c in range(k):
                w[j, c] = -mu[j] * s[c]
            for p in range(colptr[j], colptr[j + 1]):
                x = data[p]
                for c in range(k):
                    w[j, c] += x * z[rows[p], c]
    return W


def sparse_gram(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                Py_ssize_t n_cols, const double[::1] sw):
    """``X^T diag(sw) X`` of a CSR matrix as a dense ``(n_cols, n_cols)`` array, in one
    pass over the rows: for each row, every pair of its stored entries ``(a, b)``
    (``a`` at or before ``b`` in the row) adds ``sw_i x_a x_b`` to ``G[col_a, col_b]``
    (a dense accumulator: meant for few columns, where it stays in cache, against
    scipy's sparse product that builds, sorts and converts a sparse result).
    Each unordered pair lands in one triangle or the other depending on the order
    of the row's entries; the result is folded into the full symmetric matrix."""
    cdef Py_ssize_t n = sw.shape[0], i, p, q, end
    if n_cols < 1 or n < 1 or indptr.shape[0] != n + 1 \
            or indices.shape[0] != data.shape[0] or indptr[n] > data.shape[0]:
        raise ValueError("sparse_gram: inconsistent CSR arrays")
    G = np.zeros((n_cols, n_cols))
    cdef double[:, ::1] g = G
    cdef double xa
    cdef double* grow
    with nogil:
        for i in range(n):
            if sw[i] == 0.0:
                continue
            end = indptr[i + 1]
            for p in range(indptr[i], end):
                xa = sw[i] * data[p]
                grow = &g[indices[p], 0]
                for q in range(p, end):
                    grow[indices[q]] += xa * data[q]
    diag = np.diag(G).copy()
    G += G.T
    G[np.diag_indices_from(G)] = diag
    return G


def centred_float32(const double[:, ::1] X, const double[::1] mu, const double[::1] v):
    """``float32(diag(v) (X - 1 mu^T))`` in one pass over ``X`` (the float32 copy the
    mixed-precision ridge solver forms its Gram matrix from: centring before the
    rounding keeps the column means out of the float32 products)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j
    if mu.shape[0] != d or v.shape[0] != n:
        raise ValueError("centred_float32: inconsistent array shapes")
    out = np.empty((n, d), dtype=np.float32)
    cdef float[:, ::1] o = out
    cdef double vi
    with nogil:
        for i in range(n):
            vi = v[i]
            for j in range(d):
                o[i, j] = <float>(vi * (X[i, j] - mu[j]))
    return out


def centred_float32_fused(const double[:, ::1] X, const double[::1] v, const double[::1] c,
                          const double[:, ::1] Yt, double[::1] sums, double[:, ::1] B):
    """One pass over ``X`` for the mixed-precision ridge: returns
    ``A = float32(diag(v) (X - 1 c^T))`` (``c`` a shift close to the column means,
    e.g. the mean of the first rows, so that the float32 values are centred up to
    a small remainder, corrected in float64 by the caller), and fills
    ``sums = sum_i v_i^2 (x_i - c)`` (the exact column means follow) and
    ``B = sum_i Yt_ic v_i (x_i - c)`` (shape (k, d); the right-hand side
    ``Xt^T Yt`` follows), all from the float64 values of the row."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = Yt.shape[1], i, j, t
    if v.shape[0] != n or c.shape[0] != d or Yt.shape[0] != n or sums.shape[0] != d \
            or B.shape[0] != k or B.shape[1] != d or n < 1 or d < 1:
        raise ValueError("centred_float32_fused: inconsistent array shapes")
    out = np.empty((n, d), dtype=np.float32)
    row = np.empty(d)
    cdef float[:, ::1] o = out
    cdef double[::1] buf = row
    cdef double vi, z
    cdef double* b
    cdef double* s = &sums[0]
    cdef float* orow
    cdef const double* xrow
    with nogil:
        for j in range(d):
            s[j] = 0.0
        for t in range(k):
            for j in range(d):
                B[t, j] = 0.0
        for i in range(n):
            vi = v[i]
            xrow = &X[i, 0]
            orow = &o[i, 0]
            for j in range(d):
                z = vi * (xrow[j] - c[j])
                buf[j] = z
                orow[j] = <float>z
            for j in range(d):
                s[j] += vi * buf[j]
            for t in range(k):
                z = Yt[i, t]
                b = &B[t, 0]
                for j in range(d):
                    b[j] += z * buf[j]
    return out


def dense_normal_residual(const double[:, ::1] X, const double[::1] mu, const double[::1] v,
                          const double[:, ::1] Yt, const double[:, ::1] W, double[:, ::1] out):
    """``out = Xt^T (Yt - Xt W^T)`` (shape (k, d); ``W`` of shape (k, d)) with ``Xt =
    diag(v) (X - 1 mu^T)``, in ONE pass over the rows of dense ``X`` (each row is
    read for its products with ``W`` and again, from L1, for its update of ``out``;
    numpy needs two passes, ``X W`` then ``X^T Z``): the residual of the
    mixed-precision ridge's refinement steps."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = Yt.shape[1], i, j, t
    if mu.shape[0] != d or v.shape[0] != n or Yt.shape[0] != n or W.shape[0] != k \
            or W.shape[1] != d or out.shape[0] != k or out.shape[1] != d or n < 1 or d < 1:
        raise ValueError("dense_normal_residual: inconsistent array shapes")
    work = np.zeros(3 * k)
    cdef double[::1] wk = work                 # mu.W_t, sum_i z_it, z_it
    cdef double z
    cdef double* o
    cdef const double* xrow
    with nogil:
        for t in range(k):
            wk[t] = _dot(d, &mu[0], &W[t, 0])
            for j in range(d):
                out[t, j] = 0.0
        for i in range(n):
            xrow = &X[i, 0]
            for t in range(k):
                z = v[i] * (Yt[i, t] - v[i] * (_dot(d, xrow, &W[t, 0]) - wk[t]))
                wk[k + t] += z
                wk[2 * k + t] = z
            for t in range(k):
                z = wk[2 * k + t]
                o = &out[t, 0]
                for j in range(d):
                    o[j] += z * xrow[j]
        for t in range(k):
            z = wk[k + t]
            for j in range(d):
                out[t, j] -= z * mu[j]
    return out
