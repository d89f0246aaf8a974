"""Perceptron epochs: sequential (online) and batch updates, binary and
multi-class, with the lazy-averaging trick.

Weights are a (n_vectors, n_features + 1) C-contiguous matrix ``W``; column
``n_features`` holds the intercept (it stays 0 unless ``fit_intercept``).
Binary problems use one vector (``n_vectors == 1``) and labels coded 0/1
(sign -1/+1); multi-class problems use one vector per class.

* Binary: a mistake is ``s_i * (w @ x_i + b) <= 0``; update
  ``w += eta * c_i * s_i * x_i``.
* Multi-class: ``r = argmax_{m != y_i} score_m`` (first on ties); a mistake
  is ``score_r >= score_{y_i}``; update ``W[y_i] += eta c_i x_i``,
  ``W[r] -= eta c_i x_i`` (Crammer & Singer 2003, "ultraconservative" form).

Averaging (Collins 2002; Daume III 2006): ``U`` accumulates every update
weighted by the number of examples seen before it (``n_seen``); the mean of
the weight vectors after each example is ``W - U / n_seen``.  Batch mode
(the perceptron criterion, Duda, Hart & Stork 2001, sec. 5.5) sums the updates
of all mistakes of one epoch with ``W`` fixed, applies them once, and counts
one "example" per epoch for the average.

The caller (linclass.perceptron) validates every array: no bounds checks here.
"""
from libc.stdlib cimport malloc, free, realloc
from libc.string cimport memset

import numpy as np

from linclass._core._rows cimport Rows, rows_get, row_dot, row_axpy
from linclass._core._rowsview cimport rows_from_views
from linclass._core._weights cimport AveragedWeights, aw_add, aw_add_at
from linclass._core._random cimport Rng, rng_seed, rng_shuffle
from linclass._core._prefetch cimport PREFETCH_AHEAD, prefetch_row


cdef struct MistakeLog:
    int* example         # (capacity,) row of the mistake
    int* target          # class (or vector) moved towards; -1 for binary
    int* rival           # class moved away from; -1 for binary
    double* step         # signed step size of the update (eta * c_i * s_i)
    double* n_seen       # examples seen before the mistake
    Py_ssize_t size
    Py_ssize_t capacity
    bint failed


cdef void log_append(MistakeLog* log, int i, int target, int rival, double step,
                     double n_seen) noexcept nogil:
    cdef Py_ssize_t cap
    if log.failed:
        return
    if log.size == log.capacity:
        cap = 2 * log.capacity + 64
        log.example = <int*>realloc(log.example, cap * sizeof(int))
        log.target = <int*>realloc(log.target, cap * sizeof(int))
        log.rival = <int*>realloc(log.rival, cap * sizeof(int))
        log.step = <double*>realloc(log.step, cap * sizeof(double))
        log.n_seen = <double*>realloc(log.n_seen, cap * sizeof(double))
        if (log.example == NULL or log.target == NULL or log.rival == NULL
                or log.step == NULL or log.n_seen == NULL):
            log.failed = True
            return
        log.capacity = cap
    log.example[log.size] = i
    log.target[log.size] = target
    log.rival[log.size] = rival
    log.step[log.size] = step
    log.n_seen[log.size] = n_seen
    log.size += 1


cdef double vector_score(const double* w, Py_ssize_t n_features, const double* values,
                         const int* indices, Py_ssize_t nnz) noexcept nogil:
    """x_row @ w[:n_features] + w[n_features]"""
    return row_dot(values, indices, nnz, w) + w[n_features]


cdef Py_ssize_t sequential_epoch(const Rows* X, const int* y, const double* cost,
                                 const int* order, double* W, double* U,
                                 Py_ssize_t n_vectors, double eta, bint fit_intercept,
                                 bint average, double* n_seen, double* score,
                                 MistakeLog* log, bint logging) noexcept nogil:
    """One online pass over X in `order`; returns the number of mistakes."""
    cdef Py_ssize_t t, i, nnz, m, rival, n_mistakes = 0
    cdef Py_ssize_t d1 = X.n_cols + 1
    cdef const double* values
    cdef const int* indices
    cdef double s, best, step
    cdef AveragedWeights a_target, a_rival
    for t in range(X.n_rows):
        i = order[t]
        nnz = rows_get(X, i, &values, &indices)
        if n_vectors == 1:
            s = vector_score(W, X.n_cols, values, indices, nnz)      # x_i @ w + b
            step = 1.0 if y[i] == 1 else -1.0
            if step * s <= 0.0 and cost[i] > 0.0:
                n_mistakes += 1
                step *= eta * cost[i]
                a_target.w = W
                a_target.u = U
                a_target.n = d1
                a_target.c = n_seen[0]
                if average:
                    aw_add(&a_target, step, values, indices, nnz)   # w += step x; u += c step x
                    if fit_intercept:
                        aw_add_at(&a_target, X.n_cols, step)
                else:
                    row_axpy(step, values, indices, nnz, W)         # w += step * x
                    if fit_intercept:
                        W[X.n_cols] += step
                if logging:
                    log_append(log, <int>i, -1, -1, step, n_seen[0])
        else:
            for m in range(n_vectors):
                score[m] = vector_score(W + m * d1, X.n_cols, values, indices, nnz)  # W @ x + b
            rival = -1
            best = 0.0
            for m in range(n_vectors):
                if m != y[i] and (rival < 0 or score[m] > best):
                    rival = m
                    best = score[m]
            if best >= score[y[i]] and cost[i] > 0.0:
                n_mistakes += 1
                step = eta * cost[i]
                a_target.w = W + y[i] * d1
                a_target.u = U + y[i] * d1
                a_target.n = d1
                a_target.c = n_seen[0]
                a_rival.w = W + rival * d1
                a_rival.u = U + rival * d1
                a_rival.n = d1
                a_rival.c = n_seen[0]
                if average:
                    aw_add(&a_target, step, values, indices, nnz)   # W[y] += step x
                    aw_add(&a_rival, -step, values, indices, nnz)   # W[r] -= step x
                    if fit_intercept:
                        aw_add_at(&a_target, X.n_cols, step)
                        aw_add_at(&a_rival, X.n_cols, -step)
                else:
                    row_axpy(step, values, indices, nnz, a_target.w)
                    row_axpy(-step, values, indices, nnz, a_rival.w)
                    if fit_intercept:
                        a_target.w[X.n_cols] += step
                        a_rival.w[X.n_cols] -= step
                if logging:
                    log_append(log, <int>i, <int>y[i], <int>rival, step, n_seen[0])
        n_seen[0] += 1.0
    return n_mistakes


cdef Py_ssize_t sequential_epoch_fused(const Rows* X, const int* y, const double* cost,
                                       const int* order, double* WT, double* UT,
                                       Py_ssize_t K, double eta, bint fit_intercept,
                                       bint average, double* n_seen, double* score,
                                       MistakeLog* log, bint logging) noexcept nogil:
    """`sequential_epoch` for K > 1 classes on the transposed layout.

    ``WT`` / ``UT`` are (n_features + 1, K): row j holds feature j's weights of
    the K classes (row n_features the intercepts), so the K scores of a row
    come from one pass over its entries with a K-wide inner loop instead of K
    separate sparse products.  Every score is summed over the row's entries
    in the same order as `sequential_epoch`, and the updates are the same
    operations, so the results are identical.
    """
    cdef Py_ssize_t t, i, nnz, m, e, j, yi, rival, n_mistakes = 0
    cdef Py_ssize_t nf = X.n_cols
    cdef const double* values
    cdef const int* indices
    cdef const double* wrow
    cdef double* row
    cdef double* urow
    cdef double best, step, mstep, cu, mcu, x
    for t in range(X.n_rows):
        i = order[t]
        nnz = rows_get(X, i, &values, &indices)
        for m in range(K):
            score[m] = 0.0
        for e in range(nnz):                                      # score = WT^T x
            if indices == NULL:
                j = e
            else:
                j = indices[e]
                if e + PREFETCH_AHEAD < nnz:                      # WT's rows are met at random
                    prefetch_row(WT + indices[e + PREFETCH_AHEAD] * K, K)
            x = values[e]
            wrow = WT + j * K
            for m in range(K):
                score[m] += x * wrow[m]
        wrow = WT + nf * K
        for m in range(K):
            score[m] += wrow[m]                                   # + b
        yi = y[i]
        rival = -1
        best = 0.0
        for m in range(K):
            if m != yi and (rival < 0 or score[m] > best):
                rival = m
                best = score[m]
        if best >= score[yi] and cost[i] > 0.0:
            n_mistakes += 1
            step = eta * cost[i]
            mstep = -step
            if average:
                cu = n_seen[0] * step
                mcu = n_seen[0] * mstep
                for e in range(nnz):                              # W[y] += step x, W[r] -= step x
                    j = e if indices == NULL else indices[e]
                    x = values[e]
                    row = WT + j * K
                    urow = UT + j * K
                    row[yi] += step * x
                    urow[yi] += cu * x
                    row[rival] += mstep * x
                    urow[rival] += mcu * x
                if fit_intercept:
                    row = WT + nf * K
                    urow = UT + nf * K
                    row[yi] += step
                    urow[yi] += n_seen[0] * step
                    row[rival] += mstep
                    urow[rival] += n_seen[0] * mstep
            else:
                for e in range(nnz):
                    j = e if indices == NULL else indices[e]
                    x = values[e]
                    row = WT + j * K
                    row[yi] += step * x
                    row[rival] += mstep * x
                if fit_intercept:
                    row = WT + nf * K
                    row[yi] += step
                    row[rival] -= step
            if logging:
                log_append(log, <int>i, <int>yi, <int>rival, step, n_seen[0])
        n_seen[0] += 1.0
    return n_mistakes


cdef Py_ssize_t batch_epoch(const Rows* X, const int* y, const double* cost,
                            double* W, double* U, double* G, Py_ssize_t n_vectors,
                            double eta, bint fit_intercept, bint average,
                            double* n_seen, double* score) noexcept nogil:
    """One batch step: G = sum of the updates of all mistakes at fixed W;
    W += G (and U += n_seen * G).  Returns the number of mistakes."""
    cdef Py_ssize_t i, nnz, m, rival, j, n_mistakes = 0
    cdef Py_ssize_t d1 = X.n_cols + 1
    cdef const double* values
    cdef const int* indices
    cdef double s, best, step
    memset(G, 0, n_vectors * d1 * sizeof(double))
    for i in range(X.n_rows):
        if cost[i] <= 0.0:
            continue
        nnz = rows_get(X, i, &values, &indices)
        if n_vectors == 1:
            s = vector_score(W, X.n_cols, values, indices, nnz)
            step = 1.0 if y[i] == 1 else -1.0
            if step * s <= 0.0:
                n_mistakes += 1
                step *= eta * cost[i]
                row_axpy(step, values, indices, nnz, G)             # G += step * x
                if fit_intercept:
                    G[X.n_cols] += step
        else:
            for m in range(n_vectors):
                score[m] = vector_score(W + m * d1, X.n_cols, values, indices, nnz)
            rival = -1
            best = 0.0
            for m in range(n_vectors):
                if m != y[i] and (rival < 0 or score[m] > best):
                    rival = m
                    best = score[m]
            if best >= score[y[i]]:
                n_mistakes += 1
                step = eta * cost[i]
                row_axpy(step, values, indices, nnz, G + y[i] * d1)
                row_axpy(-step, values, indices, nnz, G + rival * d1)
                if fit_intercept:
                    G[y[i] * d1 + X.n_cols] += step
                    G[rival * d1 + X.n_cols] -= step
    for j in range(n_vectors * d1):
        W[j] += G[j]                                                # W += G
        if average:
            U[j] += n_seen[0] * G[j]                                # U += c * G
    n_seen[0] += 1.0
    return n_mistakes


cdef dict _log_arrays(const MistakeLog* log):
    """Copy the C mistake log into numpy arrays."""
    example = np.empty(log.size, dtype=np.int32)
    target = np.empty(log.size, dtype=np.int32)
    rival = np.empty(log.size, dtype=np.int32)
    step = np.empty(log.size, dtype=np.float64)
    n_seen = np.empty(log.size, dtype=np.float64)
    cdef int[::1] e = example, t = target, r = rival
    cdef double[::1] s = step, c = n_seen
    cdef Py_ssize_t k
    for k in range(log.size):
        e[k] = log.example[k]
        t[k] = log.target[k]
        r[k] = log.rival[k]
        s[k] = log.step[k]
        c[k] = log.n_seen[k]
    return dict(example=example, target=target, rival=rival, step=step, n_seen=n_seen)


def perceptron_fit(*, data, indices, indptr, bint is_sparse, Py_ssize_t n_samples,
                   Py_ssize_t n_features, const int[::1] y, const double[::1] cost,
                   double[:, ::1] coef, double[:, ::1] avg_sum, double n_seen,
                   Py_ssize_t max_epochs, bint batch, bint shuffle, unsigned long long seed,
                   double eta, bint fit_intercept, bint average, bint stop_when_separated,
                   bint record_mistakes, int fused=-1):
    """Run up to ``max_epochs`` perceptron epochs, in place on ``coef``/``avg_sum``.

    Parameters (keyword-only; validated by the caller)
    ----------
    data, indices, indptr, is_sparse : the rows of X (see linclass._margin.kernel_rows)
    y : int32 (n_samples,) class codes (0/1 for one vector)
    cost : float64 (n_samples,) per-sample step multipliers (sample x class weight)
    coef : float64 (n_vectors, n_features + 1) weights, last column the intercept
    avg_sum : float64 same shape, the step-weighted update sum ``U``
    n_seen : examples (sequential) or epochs (batch) already averaged over
    fused : sequential multi-class epochs on the transposed (n_features + 1,
        n_vectors) copies of ``coef``/``avg_sum`` (`sequential_epoch_fused`,
        identical results): 1 yes, 0 no, -1 when the epochs' work outweighs
        the two transpositions

    Returns
    -------
    (n_epochs_run, mistakes_per_epoch, n_seen, log) where ``log`` is None or a
    dict of mistake arrays (sequential mode with ``record_mistakes``).
    """
    cdef Py_ssize_t n_vectors = coef.shape[0]
    if coef.shape[1] != n_features + 1 or avg_sum.shape[0] != n_vectors \
            or avg_sum.shape[1] != n_features + 1:
        raise ValueError("coef/avg_sum must have shape (n_vectors, n_features + 1)")
    if y.shape[0] != n_samples or cost.shape[0] != n_samples or n_samples < 1:
        raise ValueError("y and cost must have one entry per sample")
    cdef Rows X = rows_from_views(data, indices, indptr, is_sparse, n_samples, n_features)
    cdef int[::1] order = np.arange(n_samples, dtype=np.int32)
    cdef double[::1] score = np.zeros(n_vectors)
    cdef double[:, ::1] G = np.zeros((n_vectors if batch else 1, n_features + 1 if batch else 1))
    mistakes = np.zeros(max(max_epochs, 1), dtype=np.int64)
    cdef long long[::1] mistakes_v = mistakes
    cdef Py_ssize_t epoch, n_run = 0
    cdef Rng rng
    cdef MistakeLog log
    memset(&log, 0, sizeof(MistakeLog))
    rng_seed(&rng, seed)
    cdef Py_ssize_t total_nnz = (X.indptr[n_samples] if X.indptr != NULL
                                 else n_samples * n_features)
    if fused < 0:
        fused = 1 if max_epochs * total_nnz >= 2 * (n_features + 1) else 0
    cdef bint use_fused = fused != 0 and n_vectors > 1 and not batch
    cdef double[:, ::1] WT = coef.T.copy() if use_fused else coef
    cdef double[:, ::1] UT = avg_sum.T.copy() if use_fused and average else avg_sum
    with nogil:
        for epoch in range(max_epochs):
            if use_fused:
                if shuffle:
                    rng_shuffle(&rng, &order[0], n_samples)
                mistakes_v[epoch] = sequential_epoch_fused(
                    &X, &y[0], &cost[0], &order[0], &WT[0, 0], &UT[0, 0], n_vectors,
                    eta, fit_intercept, average, &n_seen, &score[0], &log, record_mistakes)
            elif batch:
                mistakes_v[epoch] = batch_epoch(&X, &y[0], &cost[0], &coef[0, 0],
                                                &avg_sum[0, 0], &G[0, 0], n_vectors, eta,
                                                fit_intercept, average, &n_seen, &score[0])
            else:
                if shuffle:
                    rng_shuffle(&rng, &order[0], n_samples)
                mistakes_v[epoch] = sequential_epoch(&X, &y[0], &cost[0], &order[0],
                                                     &coef[0, 0], &avg_sum[0, 0], n_vectors,
                                                     eta, fit_intercept, average, &n_seen,
                                                     &score[0], &log, record_mistakes)
            n_run += 1
            if log.failed or (stop_when_separated and mistakes_v[epoch] == 0):
                break
    if use_fused:
        np.asarray(coef)[...] = np.asarray(WT).T
        if average:
            np.asarray(avg_sum)[...] = np.asarray(UT).T
    result_log = None
    try:
        if log.failed:
            raise MemoryError("perceptron: out of memory while logging mistakes")
        if record_mistakes:
            result_log = _log_arrays(&log)
    finally:
        free(log.example)
        free(log.target)
        free(log.rival)
        free(log.step)
        free(log.n_seen)
    return n_run, mistakes[:n_run], n_seen, result_log
