"""CoCoA+ local solver: dual coordinate ascent on one partition's subproblem.

CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtarik & Takac, ICML 2015; the adding
variant of CoCoA, Jaggi et al., NIPS 2014) splits the dual of the binary
linear SVM

    min_a  0.5 ||A a||^2 + 0.5 sum_i D_ii a_i^2 - sum_i a_i,   0 <= a_i <= U_i,
    A a = sum_i a_i s_i [x_i, bias],   w = A a

over K partitions.  With the shared w fixed, partition k approximately
minimises its local quadratic upper bound (sigma' = K for adding, gamma = 1)

    G_k(d) = sum_{i in k} (0.5 D_ii (a_i + d_i)^2 - (a_i + d_i)) + w . (A_k d)
             + 0.5 sigma' ||A_k d||^2

by randomised coordinate descent (the Hsieh et al. 2008 step with the
curvature sigma' Q_ii + D_ii), keeping u = w + sigma' A_k d current; it
returns the change v = A_k d of w, and the driver adds the v of all partitions.
L1 loss: D_ii = 0, U_i = C_i; L2 loss: D_ii = 1 / (2 C_i), U_i = inf.

The caller (linclass.distributed.svm) validates every array.
"""
from libc.math cimport INFINITY

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy, row_sq_norm
from linclass._core._rowsview cimport rows_from_views
from linclass._core._random cimport Rng, rng_seed, rng_shuffle


cdef Py_ssize_t local_sdca(const Rows* X, const double* ysign, const double* upper,
                           const double* diag, const double* QD, double bias, double sigma,
                           double* u, double* v, double* alpha, int* index,
                           Py_ssize_t n_active, Py_ssize_t n_epochs, Rng* rng) noexcept nogil:
    """n_epochs passes of coordinate descent on G_k; returns the number of updates."""
    cdef Py_ssize_t epoch, s, i, nnz, d = X.n_cols, n_updates = 0
    cdef const double* values
    cdef const int* indices
    cdef double G, old, new, step
    for epoch in range(n_epochs):
        rng_shuffle(rng, index, n_active)
        for s in range(n_active):
            i = index[s]
            nnz = rows_get(X, i, &values, &indices)
            # G = s_i (u . x_i) - 1 + D_ii a_i     (gradient of G_k in d_i)
            G = ysign[i] * (row_dot(values, indices, nnz, u) + u[d] * bias) - 1.0 \
                + diag[i] * alpha[i]
            old = alpha[i]
            new = old - G / QD[i]                     # Newton step on sigma' Q_ii + D_ii, clipped
            if new < 0.0:
                new = 0.0
            elif new > upper[i]:
                new = upper[i]
            if new != old:
                alpha[i] = new
                step = (new - old) * ysign[i]
                row_axpy(step, values, indices, nnz, v)          # v += step * x_i
                v[d] += step * bias
                row_axpy(sigma * step, values, indices, nnz, u)  # u += sigma' step x_i
                u[d] += sigma * step * bias
                n_updates += 1
    return n_updates


def cocoa_local_round(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                      Py_ssize_t n_features, const double[::1] ysign, const double[::1] cost,
                      int loss, double bias, const double[::1] w, double[::1] alpha,
                      double sigma, Py_ssize_t n_epochs, unsigned long long seed):
    """One CoCoA+ round on one partition: ``alpha`` updated in place.

    ``w`` (n_features + 1, last entry the bias weight) is the shared weight
    vector at the start of the round, ``cost`` the per-sample C (0 leaves a
    sample out), ``loss`` 1 (hinge) or 2 (squared hinge), ``sigma`` the
    subproblem's sigma' (the number of partitions for CoCoA+).

    Returns (v, n_updates): ``v`` = A_k (alpha_new - alpha_old), the change
    this partition proposes for ``w``.
    """
    if w.shape[0] != n_features + 1 or alpha.shape[0] != n_samples \
            or ysign.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1:
        raise ValueError("cocoa_local_round: inconsistent array shapes")
    if loss != 1 and loss != 2:
        raise ValueError("loss must be 1 or 2")
    if not sigma > 0.0 or n_epochs < 0:
        raise ValueError("sigma must be > 0 and n_epochs >= 0")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    upper_arr = np.empty(n_samples)
    diag_arr = np.zeros(n_samples)
    QD_arr = np.empty(n_samples)
    index_arr = np.empty(n_samples, dtype=np.int32)
    u_arr = np.array(w, dtype=np.float64)
    v_arr = np.zeros(n_features + 1)
    cdef double[::1] upper = upper_arr, diag = diag_arr, QD = QD_arr, u = u_arr, v = v_arr
    cdef int[::1] index = index_arr
    cdef Py_ssize_t i, nnz, n_active = 0, n_updates
    cdef const double* values
    cdef const int* ind
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
                upper[i] = cost[i]
                diag[i] = 0.0
            else:
                upper[i] = INFINITY
                diag[i] = 0.5 / cost[i] if cost[i] > 0.0 else 0.0
            nnz = rows_get(&X, i, &values, &ind)
            QD[i] = sigma * (row_sq_norm(values, nnz) + bias * bias) + diag[i]
            if QD[i] <= 0.0:             # an all-zero row without bias: nothing to move
                QD[i] = 1.0
        n_updates = local_sdca(&X, &ysign[0], &upper[0], &diag[0], &QD[0], bias, sigma,
                               &u[0], &v[0], &alpha[0], &index[0], n_active, n_epochs, &rng)
    return v_arr, n_updates
