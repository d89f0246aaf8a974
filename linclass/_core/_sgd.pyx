"""Stochastic gradient descent for regularised empirical risk minimisation.

One binary problem (labels s_i = +-1, weights c_i), objective

    1/n sum_i c_i L(s_i (w.x_i + b)) + alpha ( (1 - rho)/2 ||w||^2 + rho ||w||_1 )

with L a margin loss (see `loss_derivative`), the intercept b unpenalised.
Each step on example i (Bottou, "Stochastic gradient descent tricks", 2012):

    eta_t   = schedule(t)
    w      *= 1 - eta_t alpha (1 - rho)              O(1): scaled weight vector
    w      -= eta_t c_i L'(z) s_i x_i                O(nnz of x_i)
    b      -= eta_t c_i L'(z) s_i * intercept_decay
    L1: cumulative penalty of Tsuruoka, Tsujii & Ananiadou (ACL 2009),
        applied to the features of x_i (clipping at zero)

Averaged SGD (Polyak & Juditsky 1992; Xu 2011, "Towards optimal one pass
large scale learning with averaged stochastic gradient descent"): the sum of
the weight vectors after each step since averaging started is kept lazily as

    S = U + A v        (v the stored weights, w = scale * v)

a sparse change delta of v costs U -= A delta on the same entries, the end of
a step costs A += scale, folding the scale into v costs A /= scale.  The
average is S / n_averaged.

Schedules (t counts steps from 1): constant eta0; optimal
1 / (alpha (t0 + t - 1)) with Bottou's t0; inverse scaling eta0 / t^power_t.
A non-finite score or a loss gradient beyond 1e12 in magnitude (where
scikit-learn clips it, which turns the blow-up into linear growth of the
weights instead of stopping it) ends the epoch with status 1 (divergence),
which the Python layer reports.

One call runs one epoch (so the Python layer can test convergence and
early stopping between epochs); the state carried between calls lives in
`w`, `avg_sum`, `l1_q` and `state`.  The caller (linclass.sgd) validates
every array.
"""
from libc.math cimport exp, fabs, log, log1p, pow, isfinite, INFINITY
from libc.stdlib cimport malloc, free

import numpy as np

from linclass._core._rows cimport Rows, rows_get, rows_unit_values
from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS
from linclass._core._rowsview cimport rows_from_views
from libc.stdint cimport uint32_t, uint64_t
from linclass._core._random cimport Rng, rng_seed, rng_next, rng_shuffle32
from linclass._core._prefetch cimport PREFETCH_AHEAD
from linclass._core._prefetch cimport prefetch_row as prefetch_wrow

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define LINCLASS_PREFETCH(p) ((void)0)
    #endif
    """
    void LINCLASS_PREFETCH(const void* p) noexcept nogil


# The K-wide loops of the fused one-vs-rest epoch, in C so that GCC can build
# them twice (target_clones: an AVX2 copy and the baseline SSE2 copy, chosen
# once at load time by the CPU; no -march flags): the loops over k are
# independent lanes, so both copies give the same bits (no FMA: the AVX2
# clone does not enable it, mul and add stay separate as in `dot4`).
cdef extern from *:
    """
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
        && defined(__GLIBC__)   /* target_clones needs ifunc (glibc) */
    #define LINCLASS_SGD_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define LINCLASS_SGD_CLONES
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_SGD_RESTRICT __restrict__
    #define LINCLASS_SGD_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #define LINCLASS_SGD_PREFETCHW(p) __builtin_prefetch((const void*)(p), 1, 3)
    #else
    #define LINCLASS_SGD_RESTRICT
    #define LINCLASS_SGD_PREFETCH(p) ((void)0)
    #define LINCLASS_SGD_PREFETCHW(p) ((void)0)
    #endif

    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_SGD_VEC 1
    typedef double linclass_v4d __attribute__((vector_size(32)));
    /* acc += x * p[0:4] (a separate multiply and add, as the scalar code) */
    #define LINCLASS_SGD_MAC(acc, x, p) do { \
            linclass_v4d xv_ = {(x), (x), (x), (x)}, pv_; \
            memcpy(&pv_, (p), sizeof(pv_)); \
            (acc) += xv_ * pv_; \
        } while (0)
    #endif

    /* acc[k] = x_i @ V[:, k] for the K problems, summed as dot4 does: entry m
       into partial sum m % 4, then (s0 + s1) + (s2 + s3); each lane k is its
       own sum, so a block of 4 lanes runs in one vector register per partial
       sum (the row is walked once per block of lanes).  Sparse rows: the
       weight rows of the entry 8 ahead are prefetched in the first walk. */
    LINCLASS_SGD_CLONES
    static void linclass_sgd_ovr_margins(double* acc, const double* V, Py_ssize_t K,
                                         const double* values, const int* ind,
                                         Py_ssize_t nnz, const double* U)
    {
        Py_ssize_t m, k, j, off, kb = 0;
        int first = 1;
        double s[4];
    #ifdef LINCLASS_SGD_VEC
        for (; kb + 4 <= K; kb += 4) {
            linclass_v4d a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, r;
            const double* Vb = V + kb;
            m = 0;
            if (ind == NULL) {
                for (; m + 4 <= nnz; m += 4) {
                    LINCLASS_SGD_MAC(a0, values[m], Vb + m * K);
                    LINCLASS_SGD_MAC(a1, values[m + 1], Vb + (m + 1) * K);
                    LINCLASS_SGD_MAC(a2, values[m + 2], Vb + (m + 2) * K);
                    LINCLASS_SGD_MAC(a3, values[m + 3], Vb + (m + 3) * K);
                }
            } else {
                for (; m + 4 <= nnz; m += 4) {
                    if (first && m + 12 < nnz) {
                        for (j = 8; j < 12; j++) {
                            const double* ahead = V + (Py_ssize_t)ind[m + j] * K;
                            for (off = 0; off < K; off += 8)
                                LINCLASS_SGD_PREFETCH(ahead + off);
                            LINCLASS_SGD_PREFETCH(ahead + K - 1);
                        }
                    }
                    if (first && U != NULL) {
                        /* the averaged sum's rows, which the update pass writes
                           after the margins are known (written: prefetch for write) */
                        for (j = 0; j < 4; j++) {
                            const double* uahead = U + (Py_ssize_t)ind[m + j] * K;
                            for (off = 0; off < K; off += 8)
                                LINCLASS_SGD_PREFETCHW(uahead + off);
                            LINCLASS_SGD_PREFETCHW(uahead + K - 1);
                        }
                    }
                    LINCLASS_SGD_MAC(a0, values[m], Vb + (Py_ssize_t)ind[m] * K);
                    LINCLASS_SGD_MAC(a1, values[m + 1], Vb + (Py_ssize_t)ind[m + 1] * K);
                    LINCLASS_SGD_MAC(a2, values[m + 2], Vb + (Py_ssize_t)ind[m + 2] * K);
                    LINCLASS_SGD_MAC(a3, values[m + 3], Vb + (Py_ssize_t)ind[m + 3] * K);
                }
            }
            for (; m < nnz; m++) {
                j = (ind == NULL) ? m : ind[m];
                if ((m & 3) == 0)
                    LINCLASS_SGD_MAC(a0, values[m], Vb + j * K);
                else if ((m & 3) == 1)
                    LINCLASS_SGD_MAC(a1, values[m], Vb + j * K);
                else
                    LINCLASS_SGD_MAC(a2, values[m], Vb + j * K);
            }
            first = 0;
            r = (a0 + a1) + (a2 + a3);
            memcpy(acc + kb, &r, sizeof(r));
        }
    #endif
        for (k = kb; k < K; k++) {                 /* the remaining lanes */
            s[0] = 0.0; s[1] = 0.0; s[2] = 0.0; s[3] = 0.0;
            for (m = 0; m < nnz; m++) {
                j = (ind == NULL) ? m : ind[m];
                if (first && ind != NULL && m + 8 < nnz) {
                    const double* ahead = V + (Py_ssize_t)ind[m + 8] * K;
                    for (off = 0; off < K; off += 8)
                        LINCLASS_SGD_PREFETCH(ahead + off);
                    LINCLASS_SGD_PREFETCH(ahead + K - 1);
                }
                s[m & 3] += values[m] * V[j * K + k];
            }
            first = 0;
            acc[k] = (s[0] + s[1]) + (s[2] + s[3]);
        }
    }

    /* V[j, k] += coef[k] * x_j (sign > 0) or -= (sign < 0) for every stored j. */
    LINCLASS_SGD_CLONES
    static void linclass_sgd_ovr_axpy(double* V, Py_ssize_t K, const double* values,
                                      const int* ind, Py_ssize_t nnz,
                                      const double* coef, int sign)
    {
        Py_ssize_t m, k, j;
        const double* LINCLASS_SGD_RESTRICT c = coef;
        for (m = 0; m < nnz; m++) {
            double* LINCLASS_SGD_RESTRICT row;
            const double x = values[m];
            j = (ind == NULL) ? m : ind[m];
            row = V + j * K;
    #ifdef LINCLASS_SGD_VEC
            {
                const linclass_v4d xv = {x, x, x, x};
                linclass_v4d cv, rv;
                Py_ssize_t kb = 0;
                for (; kb + 4 <= K; kb += 4) {
                    memcpy(&cv, c + kb, sizeof(cv));
                    memcpy(&rv, row + kb, sizeof(rv));
                    if (sign > 0)
                        rv += cv * xv;
                    else
                        rv -= cv * xv;
                    memcpy(row + kb, &rv, sizeof(rv));
                }
                for (k = kb; k < K; k++) {
                    if (sign > 0)
                        row[k] += c[k] * x;
                    else
                        row[k] -= c[k] * x;
                }
                continue;
            }
    #endif
            if (sign > 0) {
                for (k = 0; k < K; k++)
                    row[k] += c[k] * x;
            } else {
                for (k = 0; k < K; k++)
                    row[k] -= c[k] * x;
            }
        }
    }

    /* The averaged SGD update of one row in one pass over its entries:
       V[j, k] += step[k] x_j and U[j, k] -= cavg[k] x_j for every stored j (the
       operations of two linclass_sgd_ovr_axpy calls, the same bits: V and U are
       distinct arrays); each entry's two rows are asked for together. */
    LINCLASS_SGD_CLONES
    static void linclass_sgd_ovr_axpy2(double* V, double* U, Py_ssize_t K,
                                       const double* values, const int* ind,
                                       Py_ssize_t nnz, const double* step,
                                       const double* cavg)
    {
        Py_ssize_t m, k, j;
        const double* LINCLASS_SGD_RESTRICT c = step;
        const double* LINCLASS_SGD_RESTRICT a = cavg;
        for (m = 0; m < nnz; m++) {
            double* LINCLASS_SGD_RESTRICT row;
            double* LINCLASS_SGD_RESTRICT urow;
            const double x = values[m];
            j = (ind == NULL) ? m : ind[m];
            row = V + j * K;
            urow = U + j * K;
            k = 0;
    #ifdef LINCLASS_SGD_VEC
            {
                const linclass_v4d xv = {x, x, x, x};
                linclass_v4d cv, rv, av, uv;
                for (; k + 4 <= K; k += 4) {
                    memcpy(&cv, c + k, sizeof(cv));
                    memcpy(&rv, row + k, sizeof(rv));
                    memcpy(&av, a + k, sizeof(av));
                    memcpy(&uv, urow + k, sizeof(uv));
                    rv += cv * xv;
                    uv -= av * xv;
                    memcpy(row + k, &rv, sizeof(rv));
                    memcpy(urow + k, &uv, sizeof(uv));
                }
            }
    #endif
            for (; k < K; k++) {
                row[k] += c[k] * x;
                urow[k] -= a[k] * x;
            }
        }
    }
    """
    void linclass_sgd_ovr_axpy2(double* V, double* U, Py_ssize_t K, const double* values,
                                const int* ind, Py_ssize_t nnz, const double* step,
                                const double* cavg) noexcept nogil
    void linclass_sgd_ovr_margins(double* acc, const double* V, Py_ssize_t K,
                                  const double* values, const int* ind,
                                  Py_ssize_t nnz, const double* U) noexcept nogil
    void linclass_sgd_ovr_axpy(double* V, Py_ssize_t K, const double* values,
                               const int* ind, Py_ssize_t nnz, const double* coef,
                               int sign) noexcept nogil


cdef inline void prefetch_row(const Rows* X, Py_ssize_t i) noexcept nogil:
    """Ask the cache for the start of row i (rows are visited in random order)."""
    if X.indptr == NULL:
        LINCLASS_PREFETCH(X.data + i * X.n_cols)
    else:
        LINCLASS_PREFETCH(X.data + X.indptr[i])
        LINCLASS_PREFETCH(X.indices + X.indptr[i])


# loss codes (linclass.sgd._LOSS_CODES)
cdef enum:
    HINGE = 0
    SQUARED_HINGE = 1
    LOGISTIC = 2
    EXPONENTIAL = 3
    SQUARED = 4
    PERCEPTRON = 5
    MODIFIED_HUBER = 6

# learning-rate codes
cdef enum:
    CONSTANT = 0
    OPTIMAL = 1
    INVSCALING = 2

# slots of `state`
cdef enum:
    S_T = 0              # step counter t (from 1)
    S_INTERCEPT = 1      # b
    S_AVG_A = 2          # A of S = U + A v
    S_N_AVG = 3          # number of averaged steps
    S_AVG_INTERCEPT = 4  # sum of b over averaged steps
    S_L1_U = 5           # total L1 penalty each weight could have received
    N_STATE = 6

cdef double MAX_DLOSS = 1e12      # |L'(z)| beyond this: the run diverges


cdef inline double loss_value(int loss, double z) noexcept nogil:
    """L(z) at the margin z = s p."""
    cdef double r
    if loss == HINGE:
        return 1.0 - z if z < 1.0 else 0.0                 # max(0, 1 - z)
    if loss == PERCEPTRON:
        return -z if z < 0.0 else 0.0                      # max(0, -z)
    if loss == SQUARED_HINGE:
        r = 1.0 - z
        return r * r if r > 0.0 else 0.0                   # max(0, 1 - z)^2
    if loss == LOGISTIC:                                   # log(1 + exp(-z)), stably
        if z > 0.0:
            return log1p(exp(-z))
        return -z + log1p(exp(z))
    if loss == EXPONENTIAL:
        return exp(-z)
    if loss == SQUARED:
        return (1.0 - z) * (1.0 - z)
    # modified Huber (Zhang 2004)
    if z >= 1.0:
        return 0.0
    if z >= -1.0:
        return (1.0 - z) * (1.0 - z)
    return -4.0 * z


cdef inline double loss_derivative(int loss, double z) noexcept nogil:
    """dL/dz at the margin z (a subgradient at kinks: -1 at z = 1 for the hinge)."""
    cdef double r
    if loss == HINGE:
        return -1.0 if z <= 1.0 else 0.0
    if loss == PERCEPTRON:
        return -1.0 if z <= 0.0 else 0.0
    if loss == SQUARED_HINGE:
        return -2.0 * (1.0 - z) if z < 1.0 else 0.0
    if loss == LOGISTIC:                                   # -sigmoid(-z), stably
        # -r / (1 + r) for z > 0, -1 / (1 + r) otherwise, r = exp(-|z|): the
        # same bits as the two-branch form, without its branch (the sign of
        # the margin is random from step to step: a mispredicted jump on the
        # step's critical path)
        r = exp(-fabs(z))
        return -(r if z > 0.0 else 1.0) / (1.0 + r)
    if loss == EXPONENTIAL:
        return -exp(-z)
    if loss == SQUARED:
        return -2.0 * (1.0 - z)
    if z >= 1.0:
        return 0.0
    if z >= -1.0:
        return -2.0 * (1.0 - z)
    return -4.0


def loss_py(int loss, double z):
    """(L(z), L'(z)) of the kernel, for tests."""
    return loss_value(loss, z), loss_derivative(loss, z)


def optimal_t0(int loss, double alpha):
    """Bottou's t0 of the "optimal" schedule eta_t = 1 / (alpha (t0 + t - 1)).

    A typical weight ``typw = sqrt(1 / sqrt(alpha))`` and the first step
    ``eta0 = typw / max(1, |L'(-typw)|)`` give ``t0 = 1 / (eta0 alpha)``
    (sgd-2.1, svmsgd.cpp; scikit-learn's SGDClassifier).
    """
    cdef double typw = (1.0 / alpha ** 0.5) ** 0.5
    cdef double d = -loss_derivative(loss, -typw)
    if d > MAX_DLOSS:
        d = MAX_DLOSS
    cdef double eta0 = typw / (d if d > 1.0 else 1.0)
    return 1.0 / (eta0 * alpha)


cdef struct Params:
    int loss
    int schedule
    double eta0
    double power_t
    double t0
    double l2            # alpha (1 - rho)
    double l1            # alpha rho
    double inv_alpha     # 1 / alpha (optimal schedule)
    double intercept_decay
    bint fit_intercept
    double average_start # averaging is on from step t >= average_start (0: off)


cdef Params make_params(str kernel, int loss, int learning_rate, double eta0,
                        double power_t, double t0, double alpha, double l1_ratio,
                        double intercept_decay, bint fit_intercept,
                        double average_start) except *:
    """The checked step parameters of ``sgd_epoch`` / ``sgd_epoch_ovr`` (``kernel``
    names the caller in the error messages)."""
    if loss < HINGE or loss > MODIFIED_HUBER or learning_rate < CONSTANT \
            or learning_rate > INVSCALING:
        raise ValueError("%s: unknown loss or learning-rate code" % kernel)
    if learning_rate == OPTIMAL and not alpha > 0.0:
        raise ValueError("%s: the optimal schedule needs alpha > 0" % kernel)
    cdef Params P
    P.loss = loss
    P.schedule = learning_rate
    P.eta0 = eta0
    P.power_t = power_t
    P.t0 = t0
    P.l2 = alpha * (1.0 - l1_ratio)
    P.l1 = alpha * l1_ratio
    P.inv_alpha = 1.0 / alpha if alpha > 0.0 else 0.0
    P.intercept_decay = intercept_decay
    P.fit_intercept = fit_intercept
    P.average_start = average_start
    return P


cdef inline double dot4(const double* values, const int* ind, Py_ssize_t nnz,
                        const double* v) noexcept nogil:
    """x_i @ v summed in 4 interleaved partial sums (entry m into sum m % 4),
    combined as (s0 + s1) + (s2 + s3): four short dependency chains instead of
    one of length nnz (the epoch is latency bound: each step's dot waits for
    the previous step's update).  `run_epoch_ovr` sums in the same order."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t m = 0, n4 = nnz - nnz % 4
    if ind == NULL:
        while m < n4:
            s0 += values[m] * v[m]
            s1 += values[m + 1] * v[m + 1]
            s2 += values[m + 2] * v[m + 2]
            s3 += values[m + 3] * v[m + 3]
            m += 4
        if m < nnz:
            s0 += values[m] * v[m]
        if m + 1 < nnz:
            s1 += values[m + 1] * v[m + 1]
        if m + 2 < nnz:
            s2 += values[m + 2] * v[m + 2]
    else:
        while m < n4:
            s0 += values[m] * v[ind[m]]
            s1 += values[m + 1] * v[ind[m + 1]]
            s2 += values[m + 2] * v[ind[m + 2]]
            s3 += values[m + 3] * v[ind[m + 3]]
            m += 4
        if m < nnz:
            s0 += values[m] * v[ind[m]]
        if m + 1 < nnz:
            s1 += values[m + 1] * v[ind[m + 1]]
        if m + 2 < nnz:
            s2 += values[m + 2] * v[ind[m + 2]]
    return (s0 + s1) + (s2 + s3)


def dot4_py(const double[::1] values, const int[::1] ind, const double[::1] v):
    """`dot4` of a sparse row (``ind`` its columns) or, with ``ind`` None, a
    dense row of length ``v.shape[0]``; for tests."""
    if v.shape[0] == 0:
        raise ValueError("dot4_py: v is empty")
    if ind is None:
        if values.shape[0] != v.shape[0]:
            raise ValueError("dot4_py: values and v differ in length")
        return dot4(&values[0], NULL, v.shape[0], &v[0])
    if ind.shape[0] != values.shape[0]:
        raise ValueError("dot4_py: values and ind differ in length")
    if values.shape[0] == 0:
        return 0.0
    if np.any(np.asarray(ind) < 0) or np.any(np.asarray(ind) >= v.shape[0]):
        raise ValueError("dot4_py: index out of range")
    return dot4(&values[0], &ind[0], values.shape[0], &v[0])


cdef inline void axpy4(double step, const double* values, const int* ind,
                       Py_ssize_t nnz, double* v) noexcept nogil:
    """v[ind] += step * values, unrolled by 4 (entry by entry in order, so a
    repeated column is updated as by the plain loop)."""
    cdef Py_ssize_t m = 0, n4 = nnz - nnz % 4
    while m < n4:
        v[ind[m]] += step * values[m]
        v[ind[m + 1]] += step * values[m + 1]
        v[ind[m + 2]] += step * values[m + 2]
        v[ind[m + 3]] += step * values[m + 3]
        m += 4
    while m < nnz:
        v[ind[m]] += step * values[m]
        m += 1


cdef inline double dot4_unit(const int* ind, Py_ssize_t nnz, const double* v) noexcept nogil:
    """`dot4` of a sparse row whose stored values are all 1.0: the same sums in
    the same order without reading the values (``1.0 * x == x`` exactly, so
    the bits are those of `dot4`)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t m = 0, n4 = nnz - nnz % 4
    while m < n4:
        s0 += v[ind[m]]
        s1 += v[ind[m + 1]]
        s2 += v[ind[m + 2]]
        s3 += v[ind[m + 3]]
        m += 4
    if m < nnz:
        s0 += v[ind[m]]
    if m + 1 < nnz:
        s1 += v[ind[m + 1]]
    if m + 2 < nnz:
        s2 += v[ind[m + 2]]
    return (s0 + s1) + (s2 + s3)


cdef inline void axpy4_unit(double step, const int* ind, Py_ssize_t nnz,
                            double* v) noexcept nogil:
    """`axpy4` of a row whose stored values are all 1.0 (``step * 1.0 == step``
    exactly: the same bits without reading the values)."""
    cdef Py_ssize_t m = 0, n4 = nnz - nnz % 4
    while m < n4:
        v[ind[m]] += step
        v[ind[m + 1]] += step
        v[ind[m + 2]] += step
        v[ind[m + 3]] += step
        m += 4
    while m < nnz:
        v[ind[m]] += step
        m += 1


def dot4_unit_py(const int[::1] ind, const double[::1] v):
    """`dot4_unit` (for tests)."""
    if v.shape[0] == 0:
        raise ValueError("dot4_unit_py: v is empty")
    if ind.shape[0] == 0:
        return 0.0
    if np.any(np.asarray(ind) < 0) or np.any(np.asarray(ind) >= v.shape[0]):
        raise ValueError("dot4_unit_py: index out of range")
    return dot4_unit(&ind[0], ind.shape[0], &v[0])


cdef inline void fold_scale(double* v, double* scale, double* avg_a,
                            Py_ssize_t d) noexcept nogil:
    """v *= scale; A /= scale; scale = 1   (S = U + A v unchanged)"""
    cdef Py_ssize_t j
    cdef double s = scale[0]
    for j in range(d):
        v[j] *= s
    avg_a[0] /= s
    scale[0] = 1.0


cdef inline void l1_penalty(double* v, double scale, double* q, double u, double* U,
                            double avg_a, const int* ind, Py_ssize_t nnz) noexcept nogil:
    """Cumulative L1 penalty on the features of one row (Tsuruoka et al. 2009).

    w_j = scale v_j is moved towards 0 by what it could have received in total
    (u) minus what it has received (q_j), clipped at 0.
    """
    cdef Py_ssize_t k, j
    cdef double z, new
    for k in range(nnz):
        j = k if ind == NULL else ind[k]
        z = v[j]
        if z * scale > 0.0:
            new = z - (u + q[j]) / scale
            if new < 0.0:
                new = 0.0
        elif z * scale < 0.0:
            new = z + (u - q[j]) / scale
            if new > 0.0:
                new = 0.0
        else:
            continue
        v[j] = new
        q[j] += scale * (new - z)
        if avg_a != 0.0:
            U[j] -= avg_a * (new - z)                    # S = U + A v unchanged


cdef int run_epoch(const Rows* X, const double* ysign, const double* weight,
                   const int* order, const Params* P, double* v, double* U, double* q,
                   double* state, bint averaging, bint compute_loss,
                   double* sum_loss, double* scale_io, bint fold,
                   bint unit_weight, bint unit_x) noexcept nogil:
    """One pass in the order given; returns 0, or 1 when a score is not finite.

    The true weights are ``scale_io[0] * v`` on entry and on exit; with
    ``fold`` the scale is folded into ``v`` at the end (``scale_io[0] = 1``),
    otherwise it is carried to the next epoch (one pass over ``v`` saved).
    ``unit_weight``: every weight is 1 (the multiplication by it is skipped,
    the same bits: ``x * 1.0 == x``).  ``unit_x``: X is sparse and its stored
    values are all 1.0 (`rows_unit_values`): only the column indices are read."""
    cdef Py_ssize_t k, i, j, m, nnz, d = X.n_cols
    cdef const double* values
    cdef const int* ind
    cdef double scale = scale_io[0], p, z, g, eta, update, step, factor, c
    cdef double t = state[S_T], b = state[S_INTERCEPT], avg_a = state[S_AVG_A]
    cdef double n_avg = state[S_N_AVG], avg_b = state[S_AVG_INTERCEPT], u = state[S_L1_U]
    cdef int status = 0
    cdef bint l1 = P.l1 > 0.0
    for k in range(X.n_rows):
        i = order[k]
        nnz = rows_get(X, i, &values, &ind)
        if unit_x:
            if k + 1 < X.n_rows:
                LINCLASS_PREFETCH(X.indices + X.indptr[order[k + 1]])
            p = scale * dot4_unit(ind, nnz, v) + b                   # w @ x_i + b
        else:
            if k + 1 < X.n_rows:
                prefetch_row(X, order[k + 1])
            p = scale * dot4(values, ind, nnz, v) + b                # w @ x_i + b
        if not isfinite(p):
            status = 1
            break
        if P.schedule == OPTIMAL:
            eta = P.inv_alpha / (P.t0 + t - 1.0)                   # 1 / (alpha (t0 + t - 1))
        elif P.schedule == INVSCALING:
            eta = P.eta0 / pow(t, P.power_t)
        else:
            eta = P.eta0
        z = ysign[i] * p
        if compute_loss:
            sum_loss[0] += loss_value(P.loss, z)
        g = loss_derivative(P.loss, z)
        if g < -MAX_DLOSS or g > MAX_DLOSS:                          # diverging
            status = 1
            break
        # -eta g s_i c_i with s_i = +-1: (-eta s_i) is exact and a product with
        # s_i commutes exactly, so (-eta s_i) g is the bits of (-eta g) s_i,
        # with one multiplication less after g (the step's critical path)
        update = (-eta * ysign[i]) * g
        if not unit_weight:
            update = update * weight[i]
        if P.l2 > 0.0:
            factor = 1.0 - eta * P.l2
            if factor <= 0.0:                                        # w = 0
                for j in range(d):
                    if avg_a != 0.0:
                        U[j] += avg_a * v[j]
                    v[j] = 0.0
                scale = 1.0
            else:
                scale *= factor                                      # w *= 1 - eta l2
                if scale < 1e-9:
                    fold_scale(v, &scale, &avg_a, d)
        if update != 0.0:
            step = update * (1.0 / scale)      # 1 / scale: off the critical path
            if avg_a != 0.0:
                c = avg_a * step
                if ind == NULL:
                    for m in range(nnz):
                        v[m] += step * values[m]                     # w += update x_i
                        U[m] -= c * values[m]                        # U -= A delta
                elif unit_x:
                    axpy4_unit(step, ind, nnz, v)                    # w += update x_i
                    axpy4_unit(-c, ind, nnz, U)                      # U -= A delta
                else:
                    # two unrolled passes (v and U are distinct arrays: the same
                    # bits as one interleaved pass; U - c x == U + (-c) x exactly)
                    axpy4(step, values, ind, nnz, v)                 # w += update x_i
                    axpy4(-c, values, ind, nnz, U)                   # U -= A delta
            elif ind == NULL:
                for m in range(nnz):
                    v[m] += step * values[m]                         # w += update x_i
            elif unit_x:
                axpy4_unit(step, ind, nnz, v)                        # w += update x_i
            else:
                axpy4(step, values, ind, nnz, v)                     # w += update x_i
            if P.fit_intercept:
                b += update * P.intercept_decay
        if l1:
            u += eta * P.l1
            l1_penalty(v, scale, q, u, U, avg_a, ind, nnz)
        if averaging and t >= P.average_start:
            avg_a += scale                                           # S += w
            avg_b += b
            n_avg += 1.0
        t += 1.0
    if fold:
        fold_scale(v, &scale, &avg_a, d)
    scale_io[0] = scale
    if not isfinite(b) or not isfinite(avg_a):
        status = 1
    state[S_T] = t
    state[S_INTERCEPT] = b
    state[S_AVG_A] = avg_a
    state[S_N_AVG] = n_avg
    state[S_AVG_INTERCEPT] = avg_b
    state[S_L1_U] = u
    return status


cdef bint all_ones(const double[::1] weight) noexcept:
    """Whether every weight is 1 (the steps can skip the multiplication by it)."""
    cdef Py_ssize_t i
    for i in range(weight.shape[0]):
        if weight[i] != 1.0:
            return False
    return True


def sgd_epoch(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
              Py_ssize_t n_features, const double[::1] ysign, const double[::1] weight,
              int[::1] order, bint shuffle, unsigned long long seed, int loss,
              int learning_rate, double eta0, double power_t, double t0, double alpha,
              double l1_ratio, double intercept_decay, bint fit_intercept,
              bint averaging, double average_start, double[::1] w, double[::1] avg_sum,
              double[::1] l1_q, double[::1] state, bint compute_loss,
              double[::1] scale=None, unit_x=None):
    """One SGD epoch over the ``n_samples`` rows, in place on the state arrays.

    ``order`` (int32 permutation of the rows, shuffled in place first when
    ``shuffle``); ``w`` the weights, ``avg_sum`` the ``U`` of the averaged sum
    (length n_features when ``averaging``, else >= 1), ``l1_q`` the penalty
    received per weight (length n_features when ``l1_ratio > 0``, else >= 1),
    ``state`` the 6 scalars documented in the module.  ``scale`` (length 1):
    the true weights are ``scale[0] * w``; the epoch starts from it and leaves
    its scale there without folding it into ``w`` (call `sgd_fold` before
    reading ``w``/``avg_sum``); None: start at 1 and fold at the end.
    ``unit_x``: whether ``data`` is sparse with every stored value 1.0
    (`linclass._core._checks.csr_unit_values`; None: checked here, a pass over
    ``data`` for such inputs, which a caller running many epochs saves by
    passing it).  Returns
    ``(status, sum_loss)``: status 0 ok, 1 diverged (a non-finite score).
    """
    if ysign.shape[0] != n_samples or weight.shape[0] != n_samples \
            or order.shape[0] != n_samples or w.shape[0] != n_features \
            or state.shape[0] != N_STATE or n_samples < 1 or n_features < 1 \
            or (averaging and avg_sum.shape[0] != n_features) \
            or (l1_ratio > 0.0 and l1_q.shape[0] != n_features) \
            or avg_sum.shape[0] < 1 or l1_q.shape[0] < 1 \
            or (scale is not None and scale.shape[0] != 1):
        raise ValueError("sgd_epoch: inconsistent array shapes")
    if scale is not None and not scale[0] > 0.0:
        raise ValueError("sgd_epoch: scale must be positive")
    cdef Params P = make_params("sgd_epoch", loss, learning_rate, eta0, power_t, t0, alpha,
                                l1_ratio, intercept_decay, fit_intercept, average_start)
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef Rng rng
    cdef int status
    cdef double sum_loss = 0.0, one = 1.0
    cdef double* scale_ptr = &one if scale is None else &scale[0]
    cdef bint unit = all_ones(weight)
    cdef bint index_only = (rows_unit_values(&X) if unit_x is None
                            else (bool(unit_x) and is_sparse))
    if LINCLASS_DEBUG_CHECKS and index_only and not rows_unit_values(&X):
        raise ValueError("sgd_epoch: unit_x is True but a stored value is not 1.0")
    rng_seed(&rng, seed)
    with nogil:
        if shuffle:
            rng_shuffle32(&rng, &order[0], n_samples)
        status = run_epoch(&X, &ysign[0], &weight[0], &order[0], &P, &w[0], &avg_sum[0],
                           &l1_q[0], &state[0], averaging, compute_loss, &sum_loss,
                           scale_ptr, scale is None, unit, index_only)
    return status, sum_loss


def sgd_epochs(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
               Py_ssize_t n_features, const double[::1] ysign, const double[::1] weight,
               int[::1] order, bint shuffle, const uint64_t[::1] seeds, int loss,
               int learning_rate, double eta0, double power_t, double t0, double alpha,
               double l1_ratio, double intercept_decay, bint fit_intercept,
               bint averaging, double average_start, double[::1] w, double[::1] avg_sum,
               double[::1] l1_q, double[::1] state, double[::1] scale, tol=None,
               Py_ssize_t n_iter_no_change=5, bint fold=False):
    """Up to ``len(seeds)`` epochs of `sgd_epoch` in one call.

    Epoch e shuffles ``order`` with ``seeds[e]`` (when ``shuffle``) and runs
    as ``sgd_epoch(..., seed=seeds[e], scale=scale)`` would: the same steps,
    the same bits, the scale carried in ``scale``.  ``tol`` (None: run every
    epoch) is the stopping rule of the fit on the training loss, applied after
    each epoch as `linclass.linear.sgd` does between `sgd_epoch` calls: the
    epoch's loss (summed over the rows during the epoch, as with
    ``compute_loss``) is an improvement when ``<= best - tol * n_samples``
    (``best`` the smallest so far, +inf at first); the run stops after
    ``n_iter_no_change`` epochs in a row without one.  ``fold``: fold the
    scale into ``w`` at the end (as `sgd_fold`), otherwise call `sgd_fold`
    before reading ``w``/``avg_sum``.  Returns ``(status, epochs, stopped)``:
    status 0 ok, 1 diverged (in epoch ``epochs``, which then stopped early),
    2 (with ``fold`` only) a weight, the intercept or the averaging factor is
    not finite at the end; ``stopped`` whether the stopping rule ended the run.
    """
    if ysign.shape[0] != n_samples or weight.shape[0] != n_samples \
            or order.shape[0] != n_samples or w.shape[0] != n_features \
            or state.shape[0] != N_STATE or n_samples < 1 or n_features < 1 \
            or (averaging and avg_sum.shape[0] != n_features) \
            or (l1_ratio > 0.0 and l1_q.shape[0] != n_features) \
            or avg_sum.shape[0] < 1 or l1_q.shape[0] < 1 or scale.shape[0] != 1:
        raise ValueError("sgd_epochs: inconsistent array shapes")
    if not scale[0] > 0.0:
        raise ValueError("sgd_epochs: scale must be positive")
    if n_iter_no_change < 1:
        raise ValueError("sgd_epochs: n_iter_no_change must be >= 1")
    cdef bint stopping = tol is not None
    cdef double tol_n = float(tol) * n_samples if stopping else 0.0
    if stopping and not tol_n >= 0.0:
        raise ValueError("sgd_epochs: tol must be a number >= 0 or None")
    cdef Params P = make_params("sgd_epochs", loss, learning_rate, eta0, power_t, t0, alpha,
                                l1_ratio, intercept_decay, fit_intercept, average_start)
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef Rng rng
    cdef int status = 0
    cdef Py_ssize_t e, j, n_epochs = seeds.shape[0], done = 0, no_change = 0
    cdef double sum_loss = 0.0, best = INFINITY, check = 0.0
    cdef bint unit = all_ones(weight), stopped = False
    cdef bint unit_x = rows_unit_values(&X)
    with nogil:
        for e in range(n_epochs):
            rng_seed(&rng, seeds[e])
            if shuffle:
                rng_shuffle32(&rng, &order[0], n_samples)
            sum_loss = 0.0
            status = run_epoch(&X, &ysign[0], &weight[0], &order[0], &P, &w[0],
                               &avg_sum[0], &l1_q[0], &state[0], averaging, stopping,
                               &sum_loss, &scale[0], False, unit, unit_x)
            done += 1
            if status != 0:
                break
            if stopping:
                # the rule of the Python layer's per-epoch loop, operation for operation
                if sum_loss <= best - tol_n:
                    no_change = 0
                else:
                    no_change += 1
                if sum_loss < best:
                    best = sum_loss
                if no_change >= n_iter_no_change:
                    stopped = True
                    break
        if fold:
            fold_scale(&w[0], &scale[0], &state[S_AVG_A], n_features)
            for j in range(n_features):
                check += w[j] * 0.0                           # NaN once a weight is not finite
            if status == 0 and (check != 0.0 or not isfinite(state[S_INTERCEPT])
                                or not isfinite(state[S_AVG_A])):
                status = 2
    return status, done, stopped


# ---------------------------------------------------------------------------
# One-vs-rest, fused: one pass over the rows updates K binary problems.
#
# The K weight vectors live in one row-major block V (n_features, K): the
# entries of feature j for the K problems are adjacent, so a row is read once,
# its K margins come from one sparse product against K-wide rows of V (the
# inner loop over k vectorises), and the K updates are one K-wide axpy per
# stored entry.  Every problem keeps its own scale, step counter, intercept,
# averaging and L1 scalars and sees the rows in the same order; each problem's
# arithmetic is the one of `run_epoch` operation for operation (the sums of
# the margins run over the row's entries in the same order), so column k of
# the result equals what `sgd_epoch` gives problem k with the same order.
# A problem whose `active` flag is 0 is frozen (its column and scalars are not
# changed): the Python layer stops problems one by one.


cdef inline void fold_column(double* V, Py_ssize_t K, Py_ssize_t k, double* scale,
                             double* avg_a, Py_ssize_t d) noexcept nogil:
    """Column k of V *= scale[k]; A_k /= scale[k]; scale[k] = 1."""
    cdef Py_ssize_t j
    cdef double s = scale[k]
    for j in range(d):
        V[j * K + k] *= s
    avg_a[k] /= s
    scale[k] = 1.0


cdef int run_epoch_ovr(const Rows* X, const int* codes, const int* positive,
                       const unsigned char* active, Py_ssize_t K, const double* weight,
                       const int* order, const Params* P, double* V, double* U, double* Q,
                       double* state, bint averaging, bint compute_loss,
                       double* sum_loss, int* status, double* buf, double* scale_io,
                       bint fold) noexcept nogil:
    """One pass over the rows for the K problems; returns 1 when one diverged.

    `state` is (K, N_STATE) row-major; `buf` has room for 16 K doubles.
    Column k's true weights are ``scale_io[k]`` times it on entry and exit;
    with `fold` every scale is folded into V at the end (and the weights are
    checked to be finite), otherwise the scales are carried over."""
    cdef Py_ssize_t r, i, j, m, k, nnz, d = X.n_cols
    cdef const double* values
    cdef const int* ind
    cdef double* acc = buf
    cdef double* step = buf + K
    cdef double* cavg = buf + 2 * K
    cdef double* scale = buf + 3 * K
    cdef double* t = buf + 4 * K
    cdef double* b = buf + 5 * K
    cdef double* avg_a = buf + 6 * K
    cdef double* n_avg = buf + 7 * K
    cdef double* avg_b = buf + 8 * K
    cdef double* u = buf + 9 * K
    cdef double* eta = buf + 10 * K
    cdef double* ysign = buf + 11 * K
    cdef double p, z, g, update, factor, x, s, zv, new, wk
    cdef double* row
    cdef double* urow
    cdef double* qrow
    cdef Py_ssize_t n_step, n_avg_step, s_k
    cdef int* stepped = <int*>(buf + 12 * K)              # (K,) problems with a step
    cdef double* acc1 = buf + 13 * K                      # partial sums of the margins
    cdef double* acc2 = buf + 14 * K
    cdef double* acc3 = buf + 15 * K
    cdef bint l1 = P.l1 > 0.0, failed = False
    # the averaged sums are updated on every step once averaging has started
    # (almost always the case for the smooth losses): their rows are prefetched
    cdef bint prefetch_u = averaging and P.loss != HINGE and P.loss != PERCEPTRON
    for k in range(K):
        scale[k] = scale_io[k]
        t[k] = state[k * N_STATE + S_T]
        b[k] = state[k * N_STATE + S_INTERCEPT]
        avg_a[k] = state[k * N_STATE + S_AVG_A]
        n_avg[k] = state[k * N_STATE + S_N_AVG]
        avg_b[k] = state[k * N_STATE + S_AVG_INTERCEPT]
        u[k] = state[k * N_STATE + S_L1_U]
        status[k] = 0
    for r in range(X.n_rows):
        i = order[r]
        if r + 1 < X.n_rows:
            prefetch_row(X, order[r + 1])
        nnz = rows_get(X, i, &values, &ind)
        # acc = V^T x_i, in dot4's order (V's rows are met at random: prefetched)
        linclass_sgd_ovr_margins(acc, V, K, values, ind, nnz,
                                 U if prefetch_u else NULL)
        n_step = 0
        n_avg_step = 0
        for k in range(K):
            step[k] = 0.0
            cavg[k] = 0.0
            if not active[k]:
                continue
            p = scale[k] * acc[k] + b[k]                      # w_k @ x_i + b_k
            if not isfinite(p):
                status[k] = 1
                failed = True
                break
            if P.schedule == OPTIMAL:
                eta[k] = P.inv_alpha / (P.t0 + t[k] - 1.0)
            elif P.schedule == INVSCALING:
                eta[k] = P.eta0 / pow(t[k], P.power_t)
            else:
                eta[k] = P.eta0
            ysign[k] = 1.0 if codes[i] == positive[k] else -1.0
            z = ysign[k] * p
            if compute_loss:
                sum_loss[k] += loss_value(P.loss, z)
            g = loss_derivative(P.loss, z)
            if g < -MAX_DLOSS or g > MAX_DLOSS:
                status[k] = 1
                failed = True
                break
            update = -eta[k] * g * ysign[k] * weight[i]
            if P.l2 > 0.0:
                factor = 1.0 - eta[k] * P.l2
                if factor <= 0.0:                             # w_k = 0
                    for j in range(d):
                        if avg_a[k] != 0.0:
                            U[j * K + k] += avg_a[k] * V[j * K + k]
                        V[j * K + k] = 0.0
                    scale[k] = 1.0
                else:
                    scale[k] *= factor
                    if scale[k] < 1e-9:
                        fold_column(V, K, k, scale, avg_a, d)
            if update != 0.0:
                step[k] = update * (1.0 / scale[k])
                stepped[n_step] = <int>k
                n_step += 1
                if avg_a[k] != 0.0:
                    cavg[k] = avg_a[k] * step[k]
                    n_avg_step += 1
                if P.fit_intercept:
                    b[k] += update * P.intercept_decay
        if failed:
            break
        if 4 * n_step <= K:
            # few problems step (the hinge losses once most margins exceed 1):
            # touch only their entries
            for m in range(nnz):                              # V[:, k] += step_k x_i
                j = m if ind == NULL else ind[m]
                x = values[m]
                row = V + j * K
                for s_k in range(n_step):
                    k = stepped[s_k]
                    row[k] += step[k] * x
            if n_avg_step > 0:
                for m in range(nnz):                          # U[:, k] -= A_k step_k x_i
                    j = m if ind == NULL else ind[m]
                    x = values[m]
                    urow = U + j * K
                    for s_k in range(n_step):
                        k = stepped[s_k]
                        urow[k] -= cavg[k] * x
        else:
            # K-wide (a problem without a step adds 0)
            if n_avg_step > 0:                                # V += x_i step^T,
                linclass_sgd_ovr_axpy2(V, U, K, values, ind, nnz, step, cavg)  # U -= x_i (A step)^T
            else:
                linclass_sgd_ovr_axpy(V, K, values, ind, nnz, step, 1)  # V += x_i step^T
        if l1:
            for k in range(K):
                if active[k]:
                    u[k] += eta[k] * P.l1
            for m in range(nnz):                              # cumulative L1 penalty
                j = m if ind == NULL else ind[m]
                row = V + j * K
                qrow = Q + j * K
                for k in range(K):
                    if not active[k]:
                        continue
                    zv = row[k]
                    s = scale[k]
                    if zv * s > 0.0:
                        new = zv - (u[k] + qrow[k]) / s
                        if new < 0.0:
                            new = 0.0
                    elif zv * s < 0.0:
                        new = zv + (u[k] - qrow[k]) / s
                        if new > 0.0:
                            new = 0.0
                    else:
                        continue
                    row[k] = new
                    qrow[k] += s * (new - zv)
                    if avg_a[k] != 0.0:                   # only when averaging
                        U[j * K + k] -= avg_a[k] * (new - zv)
        for k in range(K):
            if not active[k]:
                continue
            if averaging and t[k] >= P.average_start:
                avg_a[k] += scale[k]                          # S_k += w_k
                avg_b[k] += b[k]
                n_avg[k] += 1.0
            t[k] += 1.0
    for k in range(K):
        acc[k] = 0.0
    if fold:
        for j in range(d):                                    # fold every scale into V
            row = V + j * K
            for k in range(K):
                row[k] *= scale[k]
                acc[k] += row[k] * 0.0                        # NaN once a weight is not finite
        for k in range(K):
            avg_a[k] /= scale[k]
            scale[k] = 1.0
    for k in range(K):
        scale_io[k] = scale[k]
        if not isfinite(b[k]) or not isfinite(avg_a[k]) or acc[k] != 0.0:
            status[k] = 1
            failed = True
        state[k * N_STATE + S_T] = t[k]
        state[k * N_STATE + S_INTERCEPT] = b[k]
        state[k * N_STATE + S_AVG_A] = avg_a[k]
        state[k * N_STATE + S_N_AVG] = n_avg[k]
        state[k * N_STATE + S_AVG_INTERCEPT] = avg_b[k]
        state[k * N_STATE + S_L1_U] = u[k]
    return 1 if failed else 0


def sgd_epoch_ovr(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                  Py_ssize_t n_features, const int[::1] codes, const int[::1] positive,
                  const unsigned char[::1] active, const double[::1] weight,
                  int[::1] order, bint shuffle, unsigned long long seed, int loss,
                  int learning_rate, double eta0, double power_t, double t0, double alpha,
                  double l1_ratio, double intercept_decay, bint fit_intercept,
                  bint averaging, double average_start, double[:, ::1] V,
                  double[:, ::1] avg_sum, double[:, ::1] l1_q, double[:, ::1] state,
                  bint compute_loss, double[::1] scale=None):
    """One SGD epoch of K one-vs-rest problems in one pass over the rows.

    Problem k separates the rows with ``codes == positive[k]`` (+1) from the
    others (-1); ``V`` (n_features, K) holds its weights in column k,
    ``avg_sum`` and ``l1_q`` likewise (shape (n_features, K) when averaging /
    ``l1_ratio > 0``, else (1, K)), ``state`` (K, 6) its scalars (as
    `sgd_epoch`), ``active`` (K,) which problems take steps.  ``codes`` must
    be int32 in ``[0, n_classes)`` (the caller checks).  ``scale`` (K,): as in
    `sgd_epoch`, per problem (carried without folding; `sgd_fold` folds);
    None: start at 1 and fold at the end.  Returns
    ``(status (K,) int32, sum_loss (K,))``: status 1 where a problem diverged
    (a non-finite score, intercept or weight; the epoch stops at the first
    non-finite score).
    """
    cdef Py_ssize_t K = V.shape[1]
    if codes.shape[0] != n_samples or weight.shape[0] != n_samples \
            or order.shape[0] != n_samples or V.shape[0] != n_features \
            or positive.shape[0] != K or active.shape[0] != K or K < 1 \
            or state.shape[0] != K or state.shape[1] != N_STATE \
            or n_samples < 1 or n_features < 1 \
            or avg_sum.shape[1] != K or l1_q.shape[1] != K \
            or avg_sum.shape[0] != (n_features if averaging else avg_sum.shape[0]) \
            or l1_q.shape[0] != (n_features if l1_ratio > 0.0 else l1_q.shape[0]) \
            or avg_sum.shape[0] < 1 or l1_q.shape[0] < 1 \
            or (scale is not None and scale.shape[0] != K):
        raise ValueError("sgd_epoch_ovr: inconsistent array shapes")
    if scale is not None and not np.all(np.asarray(scale) > 0.0):
        raise ValueError("sgd_epoch_ovr: scale must be positive")
    cdef Params P = make_params("sgd_epoch_ovr", loss, learning_rate, eta0, power_t, t0, alpha,
                                l1_ratio, intercept_decay, fit_intercept, average_start)
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef Rng rng
    status = np.zeros(K, dtype=np.int32)
    sum_loss = np.zeros(K)
    cdef int[::1] status_v = status
    cdef double[::1] loss_v = sum_loss
    cdef bint fold = scale is None
    scale_arr = np.ones(K) if scale is None else None
    cdef double[::1] scale_v = scale_arr if scale is None else scale
    cdef double* buf = <double*>malloc(16 * K * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    rng_seed(&rng, seed)
    try:
        with nogil:
            if shuffle:
                rng_shuffle32(&rng, &order[0], n_samples)
            run_epoch_ovr(&X, &codes[0], &positive[0], &active[0], K, &weight[0],
                          &order[0], &P, &V[0, 0], &avg_sum[0, 0], &l1_q[0, 0],
                          &state[0, 0], averaging, compute_loss, &loss_v[0],
                          &status_v[0], buf, &scale_v[0], fold)
    finally:
        free(buf)
    return status, sum_loss


def sgd_fold(double[:, ::1] V, double[:, ::1] state, double[::1] scale):
    """Fold the carried scales of `sgd_epoch` / `sgd_epoch_ovr` into the weights.

    ``V`` (n_features, K) holds problem k's stored weights in column k (a
    binary problem's ``w`` as (n_features, 1)), ``state`` (K, 6) its scalars,
    ``scale`` (K,) its scales: ``V[:, k] *= scale[k]``, the averaging factor
    ``A_k /= scale[k]`` (the average is unchanged), ``scale[k] = 1``.
    Returns status (K,) int32: 1 where a weight, the intercept or ``A_k`` is
    not finite.
    """
    cdef Py_ssize_t d = V.shape[0], K = V.shape[1], j, k
    if state.shape[0] != K or state.shape[1] != N_STATE or scale.shape[0] != K or K < 1:
        raise ValueError("sgd_fold: inconsistent array shapes")
    if not np.all(np.asarray(scale) > 0.0):
        raise ValueError("sgd_fold: scale must be positive")
    status = np.zeros(K, dtype=np.int32)
    acc_arr = np.zeros(K)
    cdef int[::1] st = status
    cdef double[::1] acc = acc_arr
    cdef double* row
    with nogil:
        for j in range(d):
            row = &V[j, 0]
            for k in range(K):
                row[k] *= scale[k]
                acc[k] += row[k] * 0.0                        # NaN once a weight is not finite
        for k in range(K):
            state[k, S_AVG_A] /= scale[k]
            scale[k] = 1.0
            if acc[k] != 0.0 or not isfinite(state[k, S_INTERCEPT]) \
                    or not isfinite(state[k, S_AVG_A]):
                st[k] = 1
    return status
