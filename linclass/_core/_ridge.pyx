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

from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS, debug_check_index

cdef extern from "_ridge_simd.h" nogil:
    void lc_ridge_xxtz(const double* data, const int* rows, const int* colptr,
                       Py_ssize_t d, Py_ssize_t k, const double* Z, double* out, double* u)
    int lc_ridge_level()
    int lc_ridge_set_level(int level)


cdef void dual_apply_pass(const double* data, const int* rows, const int* colptr,
                          Py_ssize_t n, Py_ssize_t d, Py_ssize_t k,
                          const double* v, const double* m, double mumu, double alpha,
                          const double* Q, double* out, double* Z, double* u,
                          double* s, double* mz) noexcept nogil:
    """X given by columns (CSC: ``rows``/``colptr``).  X X^T Z = sum_j x_j (x_j^T Z):
    column by column, u = x_j^T Z (k values) then out += x_j u^T, so X is read
    once and only the (n, k) blocks Z and out are touched at random (they stay
    in cache), no (n_features, k) array at all."""
    cdef Py_ssize_t i, c
    cdef double x, vi, mi
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
    lc_ridge_xxtz(data, rows, colptr, d, k, Z, out, u)      # out = X X^T Z
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


def simd_level(level=None):
    """The vector level of the kernel-side product (0 baseline C, 2 AVX2);
    ``level``: 0 forces the baseline, anything else the CPU's best (tests).
    Every level gives the same bits."""
    if level is not None:
        return lc_ridge_set_level(int(level))
    return lc_ridge_level()


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
    cdef Py_ssize_t j, p
    if LINCLASS_DEBUG_CHECKS:               # the C column loop indexes Z and out by row
        for j in range(n_cols):
            debug_check_index(colptr[j], colptr[j + 1] + 1, "dual_apply: colptr")
            for p in range(colptr[j], colptr[j + 1]):
                debug_check_index(rows[p], n, "dual_apply: row index")
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
