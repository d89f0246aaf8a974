"""Cyclic coordinate descent for the lasso with implicit (weighted) centring.

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

The caller (linclass.least_squares) validates every array.
"""
from libc.math cimport fabs, INFINITY

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy, row_sq_norm
from linclass._core._rowsview cimport rows_from_views


cdef inline double soft_threshold(double x, double lam) noexcept nogil:
    """sign(x) * max(|x| - lam, 0)"""
    if x > lam:
        return x - lam
    if x < -lam:
        return x + lam
    return 0.0


cdef double duality_gap(const Rows* XT, const double* mu, const double* v,
                        const double* a, double vv, const double* r_stored, double s,
                        const double* yt, const double* w, double lam, double* R) noexcept nogil:
    """Lasso duality gap at w (R: n_samples workspace, filled with the residual)."""
    cdef Py_ssize_t i, j, nnz, n = XT.n_cols
    cdef const double* values
    cdef const int* indices
    cdef double vr = 0.0, xr, dual_norm = 0.0, R_norm2 = 0.0, w_norm1 = 0.0, Ry = 0.0
    cdef double const_, gap
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
    if dual_norm > lam:
        const_ = lam / dual_norm
        gap = 0.5 * (R_norm2 + R_norm2 * const_ * const_)
    else:
        const_ = 1.0
        gap = R_norm2
    return gap + lam * w_norm1 - const_ * Ry


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
