# Weight vectors shared by the online learners.
#
# ScaledWeights: w_true = scale * w.  Multiplying w_true by a factor (the L2
# shrinkage step of SGD/Pegasos) is O(1): only `scale` changes.  The squared
# norm of w_true is maintained incrementally so projections are O(1) too.
# (Shalev-Shwartz et al., Pegasos, 2007; Bottou, SGD tricks, 2012.)
#
# AveragedWeights: the lazy-averaging trick for the averaged perceptron
# (Daume III, 2006, thesis sec. 2.1.1; Collins, 2002).  Instead of adding w to
# a running sum after every example (O(n_features) per step), keep
#     w  = sum_t delta_t           (the current weights)
#     u  = sum_t c_t * delta_t     (updates weighted by the step they happened)
# where c counts steps from 1.  After c steps the average of the c weight
# vectors w_1..w_c is  w - u / c.  An update costs O(nnz of the update).

from linclass._core._rows cimport row_dot


cdef struct ScaledWeights:
    double* w            # (n,) storage; w_true = scale * w
    Py_ssize_t n
    double scale
    double sq_norm       # ||w_true||^2


cdef inline void sw_init(ScaledWeights* v, double* w, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    v.w = w
    v.n = n
    v.scale = 1.0
    v.sq_norm = 0.0
    for j in range(n):
        v.sq_norm += w[j] * w[j]


cdef inline double sw_dot(const ScaledWeights* v, const double* values,
                          const int* indices, Py_ssize_t nnz) noexcept nogil:
    """x_row @ w_true"""
    return v.scale * row_dot(values, indices, nnz, v.w)


cdef inline void sw_add(ScaledWeights* v, double alpha, const double* values,
                        const int* indices, Py_ssize_t nnz) noexcept nogil:
    """w_true += alpha * x_row, keeping sq_norm exact."""
    cdef Py_ssize_t k, j
    cdef double step = alpha / v.scale
    cdef double old, inner = 0.0, xsq = 0.0
    for k in range(nnz):
        j = k if indices == NULL else indices[k]
        old = v.w[j]
        inner += old * values[k]                  # (w @ x) before the update
        xsq += values[k] * values[k]
        v.w[j] = old + step * values[k]
    # ||s w + a x||^2 = ||s w||^2 + 2 a s (w @ x) + a^2 ||x||^2   (indices unique)
    v.sq_norm += 2.0 * alpha * v.scale * inner + alpha * alpha * xsq


cdef inline void sw_reset_scale(ScaledWeights* v) noexcept nogil:
    """Fold `scale` into the storage: w *= scale; scale = 1."""
    cdef Py_ssize_t j
    for j in range(v.n):
        v.w[j] *= v.scale
    v.scale = 1.0


cdef inline void sw_scale(ScaledWeights* v, double factor) noexcept nogil:
    """w_true *= factor in O(1) (O(n) only to renormalise a tiny scale)."""
    cdef Py_ssize_t j
    if factor == 0.0:
        for j in range(v.n):
            v.w[j] = 0.0
        v.scale = 1.0
        v.sq_norm = 0.0
        return
    v.scale *= factor
    v.sq_norm *= factor * factor
    if v.scale < 1e-9 and v.scale > -1e-9:
        sw_reset_scale(v)


cdef struct AveragedWeights:
    double* w            # (n,) current weights
    double* u            # (n,) sum of step-weighted updates
    Py_ssize_t n
    double c             # steps taken so far, counted from 1


cdef inline void aw_init(AveragedWeights* a, double* w, double* u, Py_ssize_t n) noexcept nogil:
    """`w` holds the starting weights; `u` must be zero-filled."""
    a.w = w
    a.u = u
    a.n = n
    a.c = 1.0


cdef inline void aw_add(AveragedWeights* a, double alpha, const double* values,
                        const int* indices, Py_ssize_t nnz) noexcept nogil:
    """w += alpha * x_row;  u += c * alpha * x_row"""
    cdef Py_ssize_t k, j
    cdef double cu = a.c * alpha
    for k in range(nnz):
        j = k if indices == NULL else indices[k]
        a.w[j] += alpha * values[k]
        a.u[j] += cu * values[k]


cdef inline void aw_add_at(AveragedWeights* a, Py_ssize_t j, double alpha) noexcept nogil:
    """w[j] += alpha;  u[j] += c * alpha"""
    a.w[j] += alpha
    a.u[j] += a.c * alpha


cdef inline void aw_tick(AveragedWeights* a) noexcept nogil:
    """One step (one example) has passed."""
    a.c += 1.0


cdef inline void aw_average(const AveragedWeights* a, double* out) noexcept nogil:
    """out = w - u / c: the mean of the weights after each of the c steps
    (including the starting weights, counted as the first step)."""
    cdef Py_ssize_t j
    for j in range(a.n):
        out[j] = a.w[j] - a.u[j] / a.c
