"""Sequence labelling kernels: Viterbi decoding and the averaged structured
perceptron epoch of linear-chain models.

Model (first order, K labels, F token attributes):
    score(x, y) = start[y_0] + sum_t E[t, y_t] + sum_{t>=1} trans[y_{t-1}, y_t]
                  + stop[y_{T-1}]   (+ sum_{t>=2} trans2[y_{t-2}, y_{t-1}, y_t] for order 2)
    E[t, :] = sum_{f in x_t} x_t[f] * W[f, :]          (one sparse-dense product)

Tokens of all sentences are rows of one CSR matrix (indices int32, data float64,
indptr int32); sentence s owns rows sent_offsets[s]:sent_offsets[s+1].  Weights
are float32 (training) or float64 (the structural SVM's weight vector): the
kernels are fused over both.  Ties are broken towards the smallest label index
at each step, scanning predecessors in increasing order.

Collins (2002), "Discriminative training methods for hidden Markov models";
Daume III (2006) for the lazy averaging.  The caller (linclass.sequence)
validates every array: no bounds checks happen here.
"""
from cython cimport floating
from libc.math cimport INFINITY
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset

from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS

import numpy as np


cdef extern from "_sequence_simd.h" nogil:
    void LC_PREFETCH(const void* p)
    Py_ssize_t lc_pad8(Py_ssize_t K)
    int lc_simd_level()
    int lc_simd_set_level(int level)
    void lc_emission_f32(const float* W, Py_ssize_t K, const int* ind, const double* data,
                         const int* indptr, Py_ssize_t row0, Py_ssize_t n, int binary,
                         float* E, Py_ssize_t ldE)
    void lc_pad_trans(const float* trans, Py_ssize_t K, float* Tp, float* Tt)
    void lc_set_trans(const float* trans, Py_ssize_t K, Py_ssize_t j, Py_ssize_t k,
                      float* Tp, float* Tt)
    int lc_all_ones(const double* x, Py_ssize_t n)
    float lc_viterbi1_f32(const float* E, Py_ssize_t n, Py_ssize_t K, const float* trans,
                          const float* Tp, const float* Tt, const float* start,
                          const float* stop, float* D, int* out)


def simd_level(level=None):
    """The instruction set of the float32 tagger kernels: 0 scalar, 1 SSE2,
    2 AVX2 (chosen at import from the CPU).  ``level`` selects a lower one
    (for tests: every level gives bit-identical results); returns the level
    in effect."""
    if level is None:
        return lc_simd_level()
    if level not in (0, 1, 2):
        raise ValueError("level must be 0, 1 or 2")
    return lc_simd_set_level(level)


# ---------------------------------------------------------------- kernels --

cdef void emission_scores(const floating* W, Py_ssize_t K,
                          const int* indices, const double* data, const int* indptr,
                          Py_ssize_t row0, Py_ssize_t n, floating* E) noexcept nogil:
    """E[t, :] = X[row0 + t] @ W for t < n   (E is n x K, overwritten).

    Scores are accumulated in the weights' precision (float32 when training
    the perceptron): the K-wide inner loop then vectorises.
    """
    cdef Py_ssize_t t, p, k
    cdef const floating* wrow
    cdef floating v
    cdef floating* erow
    for t in range(n):
        erow = E + t * K
        for k in range(K):
            erow[k] = 0
        for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
            wrow = W + <Py_ssize_t>indices[p] * K
            v = <floating>data[p]
            for k in range(K):
                erow[k] += v * wrow[k]            # E[t] += x[t, f] * W[f]


cdef void add_hamming(floating* E, Py_ssize_t n, Py_ssize_t K, Py_ssize_t ld,
                      const int* gold, double weight) noexcept nogil:
    """E[t, k] += weight * (k != gold[t])   (loss augmentation; rows of stride ld)"""
    cdef Py_ssize_t t, k
    for t in range(n):
        for k in range(K):
            if k != gold[t]:
                E[t * ld + k] += <floating>weight


cdef inline void relax(const floating* prev, const floating* trans, Py_ssize_t K,
                       floating* cur, int* back) noexcept nogil:
    """cur[k] = max_j prev[j] + trans[j, k];  back[k] = argmax (smallest j on ties).

    Predecessor-major: contiguous rows of trans.  (The float32 tagger decodes
    order 1 with the kernels of _sequence_simd.h instead.)
    """
    cdef Py_ssize_t j, k
    cdef floating pj, s
    cdef const floating* row
    for k in range(K):
        cur[k] = prev[0] + trans[k]
        back[k] = 0
    for j in range(1, K):
        pj = prev[j]
        row = trans + j * K
        for k in range(K):
            s = pj + row[k]
            if s > cur[k]:
                cur[k] = s
                back[k] = <int>j


cdef double viterbi1(const floating* E, Py_ssize_t n, Py_ssize_t K,
                     const floating* trans, const floating* start, const floating* stop,
                     floating* delta, int* back, int* out) noexcept nogil:
    """First-order Viterbi; writes the best path to out[0:n], returns its score.
    delta: 2*K values of workspace, back: n*K ints."""
    cdef Py_ssize_t t, k
    cdef floating best, s
    cdef int arg
    cdef floating* prev = delta
    cdef floating* cur = delta + K
    cdef floating* tmp
    if n == 0:
        return 0.0
    for k in range(K):
        prev[k] = start[k] + E[k]
    for t in range(1, n):
        relax(prev, trans, K, cur, back + t * K)
        for k in range(K):
            cur[k] += E[t * K + k]
        tmp = prev
        prev = cur
        cur = tmp
    best = prev[0] + stop[0]
    arg = 0
    for k in range(1, K):
        s = prev[k] + stop[k]
        if s > best:
            best = s
            arg = <int>k
    out[n - 1] = arg
    t = n - 1
    while t > 0:
        out[t - 1] = back[t * K + out[t]]
        t -= 1
    return best


cdef double viterbi2(const floating* E, Py_ssize_t n, Py_ssize_t K,
                     const floating* trans, const floating* trans2,
                     const floating* start, const floating* stop,
                     floating* delta, int* back, int* out) noexcept nogil:
    """Second-order Viterbi over label pairs (y_{t-1}, y_t), O(n K^3).
    delta: 2*K*K values, back: n*K*K ints."""
    cdef Py_ssize_t t, i, j, k, KK = K * K
    cdef floating best, s
    cdef int arg, bi, bj
    cdef floating* prev = delta
    cdef floating* cur = delta + KK
    cdef floating* tmp
    cdef floating* cj
    cdef int* bk
    if n == 0:
        return 0.0
    if n == 1:
        best = start[0] + E[0] + stop[0]
        arg = 0
        for k in range(1, K):
            s = start[k] + E[k] + stop[k]
            if s > best:
                best = s
                arg = <int>k
        out[0] = arg
        return best
    for j in range(K):                          # t = 1: pair (y_0 = j, y_1 = k)
        for k in range(K):
            prev[j * K + k] = start[j] + E[j] + trans[j * K + k] + E[K + k]
    for t in range(2, n):
        for j in range(K):
            # cur[j, k] = max_i prev[i, j] + trans2[i, j, k]  (+ trans[j, k] + E[t, k])
            cj = cur + j * K
            bk = back + t * KK + j * K
            for k in range(K):
                cj[k] = prev[j] + trans2[j * K + k]
                bk[k] = 0
            for i in range(1, K):
                for k in range(K):
                    s = prev[i * K + j] + trans2[(i * K + j) * K + k]
                    if s > cj[k]:
                        cj[k] = s
                        bk[k] = <int>i
            for k in range(K):
                cj[k] += trans[j * K + k] + E[t * K + k]
        tmp = prev
        prev = cur
        cur = tmp
    best = prev[0] + stop[0]
    bi = 0
    bj = 0
    for j in range(K):
        for k in range(K):
            s = prev[j * K + k] + stop[k]
            if s > best:
                best = s
                bi = <int>j
                bj = <int>k
    out[n - 2] = bi
    out[n - 1] = bj
    t = n - 1
    while t > 1:
        out[t - 2] = back[t * KK + out[t - 1] * K + out[t]]
        t -= 1
    return best


cdef struct Workspace:
    void* E            # max_len * K scores (float or double)
    void* delta        # 2 * K * K scores
    int* back          # max_len * K * K (order 2) or max_len * K
    int* path          # max_len
    # float32, order 1 (_sequence_simd.h): rows of Kp = lc_pad8(K) floats
    float* Ep          # max_len * Kp emission scores (pad lanes stay zero)
    float* Dp          # max_len * Kp forward maxima
    float* Tp          # K * Kp: trans, padded (refreshed by the caller, lc_pad_trans)
    float* Tt          # K * Kp: trans transposed, padded with -inf (lc_pad_trans)
    int binary         # every data value is 1.0


cdef int workspace_alloc(Workspace* ws, Py_ssize_t max_len, Py_ssize_t K, int order) noexcept nogil:
    """Buffers sized for double scores (enough for float too); -1 if out of memory."""
    cdef Py_ssize_t width = K * K if order == 2 else K
    cdef Py_ssize_t m = max_len if max_len > 0 else 1
    cdef Py_ssize_t Kp = lc_pad8(K)
    ws.E = malloc(m * K * sizeof(double))
    ws.delta = malloc(2 * K * K * sizeof(double))
    ws.back = <int*>malloc(m * width * sizeof(int))
    ws.path = <int*>malloc(m * sizeof(int))
    ws.Ep = <float*>calloc(m * Kp, sizeof(float))
    ws.Dp = <float*>malloc(m * Kp * sizeof(float))
    ws.Tp = <float*>calloc(K * Kp, sizeof(float))
    ws.Tt = <float*>calloc(K * Kp, sizeof(float))
    ws.binary = 0
    if (ws.E == NULL or ws.delta == NULL or ws.back == NULL or ws.path == NULL
            or ws.Ep == NULL or ws.Dp == NULL or ws.Tp == NULL or ws.Tt == NULL):
        return -1
    return 0


cdef void workspace_free(Workspace* ws) noexcept nogil:
    free(ws.E)
    free(ws.delta)
    free(ws.back)
    free(ws.path)
    free(ws.Ep)
    free(ws.Dp)
    free(ws.Tp)
    free(ws.Tt)


cdef double decode_sentence(const floating* W, const floating* trans, const floating* trans2,
                            const floating* start, const floating* stop, Py_ssize_t K, int order,
                            const int* indices, const double* data, const int* indptr,
                            Py_ssize_t row0, Py_ssize_t n, const int* gold, double loss_weight,
                            Workspace* ws, int* out) noexcept nogil:
    cdef floating* E = <floating*>ws.E
    cdef floating* delta = <floating*>ws.delta
    cdef Py_ssize_t Kp
    if floating is float:
        if order == 1:            # SIMD emission and max-only forward pass, padded rows
            Kp = lc_pad8(K)
            lc_emission_f32(W, K, indices, data, indptr, row0, n, ws.binary, ws.Ep, Kp)
            if gold != NULL:
                add_hamming(ws.Ep, n, K, Kp, gold, loss_weight)
            return lc_viterbi1_f32(ws.Ep, n, K, trans, ws.Tp, ws.Tt, start, stop, ws.Dp, out)
        lc_emission_f32(W, K, indices, data, indptr, row0, n, ws.binary, E, K)
    else:
        emission_scores(W, K, indices, data, indptr, row0, n, E)
    if gold != NULL:
        add_hamming(E, n, K, K, gold, loss_weight)
    if order == 2:
        return viterbi2(E, n, K, trans, trans2, start, stop, delta, ws.back, out)
    return viterbi1(E, n, K, trans, start, stop, delta, ws.back, out)


# ----------------------------------------------------------- entry points --

def _max_length(const long long[::1] sent_offsets, Py_ssize_t s0, Py_ssize_t s1):
    cdef Py_ssize_t s, m = 0
    for s in range(s0, s1):
        if sent_offsets[s + 1] - sent_offsets[s] > m:
            m = sent_offsets[s + 1] - sent_offsets[s]
    return m


def _check_shapes(Py_ssize_t F, Py_ssize_t K, tuple trans_shape, Py_ssize_t n_start,
                  Py_ssize_t n_stop, Py_ssize_t n_trans2, int order, Py_ssize_t n_indices,
                  Py_ssize_t n_data, const int[::1] indptr, const long long[::1] sent_offsets):
    """O(1) agreement checks of the entry points (index *values* -- feature ids
    below F, labels below K -- are the Python layer's contract)."""
    if F < 1 or K < 1:
        raise ValueError("W must be (n_features >= 1, n_labels >= 1)")
    if trans_shape[0] != K or trans_shape[1] != K or n_start != K or n_stop != K:
        raise ValueError("trans must be (K, K) and start/stop (K,) with K = W.shape[1]")
    if order not in (1, 2):
        raise ValueError("order must be 1 or 2")
    if order == 2 and n_trans2 != K * K * K:
        raise ValueError("order 2 needs trans2 with K**3 entries")
    if n_indices != n_data:
        raise ValueError("indices and data differ in length")
    cdef Py_ssize_t s, n_rows = indptr.shape[0] - 1
    if sent_offsets.shape[0] < 1 or n_rows < 0:
        raise ValueError("sent_offsets and indptr must not be empty")
    if sent_offsets[0] < 0:
        raise ValueError("sent_offsets must be >= 0")
    for s in range(1, sent_offsets.shape[0]):
        if sent_offsets[s] < sent_offsets[s - 1]:
            raise ValueError("sent_offsets must be non-decreasing")
    cdef Py_ssize_t n_tokens = sent_offsets[sent_offsets.shape[0] - 1]
    if n_tokens > n_rows or indptr[n_rows] > n_indices or indptr[0] < 0:
        raise ValueError("sentences reach row %d but indptr covers %d rows (ending at %d "
                         "of %d indices)" % (n_tokens, n_rows, indptr[n_rows], n_indices))
    return n_tokens


def _debug_check_values(Py_ssize_t F, Py_ssize_t K, const int[::1] indices,
                        const int[::1] indptr, Py_ssize_t n_tokens, const int[::1] gold):
    """Debug build only (LINCLASS_DEBUG_BUILD=1): the index *values* the
    kernels follow through raw pointers -- the CSR extent of every token row,
    feature ids below F, gold labels below K -- raise IndexError instead of
    being read out of bounds.  A no-op in the release build."""
    cdef Py_ssize_t r, p
    if not LINCLASS_DEBUG_CHECKS:
        return
    for r in range(n_tokens):
        if indptr[r] > indptr[r + 1] or indptr[r] < 0:
            raise IndexError("debug build: indptr decreases at token row %d" % r)
        for p in range(indptr[r], indptr[r + 1]):
            if indices[p] < 0 or indices[p] >= F:
                raise IndexError("debug build: feature index %d at position %d outside "
                                 "[0, %d)" % (indices[p], p, F))
    if gold is not None:
        for r in range(min(n_tokens, gold.shape[0])):
            if gold[r] < 0 or gold[r] >= K:
                raise IndexError("debug build: gold label %d of token %d outside [0, %d)"
                                 % (gold[r], r, K))


def viterbi_batch(floating[:, ::1] W, floating[:, ::1] trans, floating[::1] trans2,
                  floating[::1] start, floating[::1] stop,
                  const int[::1] indices, const double[::1] data, const int[::1] indptr,
                  const long long[::1] sent_offsets, int[::1] out, double[::1] scores,
                  *, int order=1, const int[::1] gold=None, double loss_weight=1.0,
                  Py_ssize_t first=0, Py_ssize_t last=-1, int binary=-1):
    """Decode sentences first..last-1 (all by default) into `out` (one label per
    token row) and `scores` (one per sentence), with the GIL released.

    W (F, K), trans (K, K), trans2 (K*K*K,) or empty for order 1, start/stop (K,);
    tokens as CSR rows (indices, data, indptr); sent_offsets (n_sentences + 1,).
    With `gold` (one label per token), decodes the loss-augmented argmax
    score + loss_weight * Hamming(gold, y).  ``binary`` = 1 asserts that every
    value of ``data`` is 1.0 (the caller checked it once), 0 that some is not,
    -1 (default) checks it here.  Validation happens in the caller.
    """
    cdef Py_ssize_t K = W.shape[1]
    cdef Py_ssize_t n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t s, row0, n, t, max_len, n_tokens
    cdef Workspace ws
    cdef int status
    cdef const int* gold_ptr = NULL
    cdef const int* gold_base = NULL
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const floating* trans2_ptr = &trans2[0] if trans2.shape[0] > 0 else NULL
    if last < 0:
        last = n_sent
    n_tokens = _check_shapes(W.shape[0], K, (trans.shape[0], trans.shape[1]), start.shape[0],
                             stop.shape[0], trans2.shape[0], order, indices.shape[0],
                             data.shape[0], indptr, sent_offsets)
    _debug_check_values(W.shape[0], K, indices, indptr, n_tokens, gold)
    if first < 0 or last > n_sent:
        raise ValueError("sentence range [%d, %d) outside [0, %d)" % (first, last, n_sent))
    if out.shape[0] < n_tokens or scores.shape[0] < n_sent:
        raise ValueError("out needs one entry per token and scores one per sentence")
    if gold is not None and gold.shape[0] < n_tokens:
        raise ValueError("gold needs one label per token")
    if n_sent <= 0 or last <= first:
        return
    if gold is not None and gold.shape[0] > 0:
        gold_base = &gold[0]
    max_len = _max_length(sent_offsets, first, last)
    with nogil:
        status = workspace_alloc(&ws, max_len, K, order)
        if status == 0:
            if binary >= 0:
                ws.binary = binary
            elif data_ptr != NULL:
                ws.binary = lc_all_ones(data_ptr + indptr[sent_offsets[first]],
                                        indptr[sent_offsets[last]] - indptr[sent_offsets[first]])
            if floating is float:
                lc_pad_trans(&trans[0, 0], K, ws.Tp, ws.Tt)
            for s in range(first, last):
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                if gold_base != NULL:
                    gold_ptr = gold_base + row0
                scores[s] = decode_sentence(&W[0, 0], &trans[0, 0], trans2_ptr, &start[0],
                                            &stop[0], K, order, ind_ptr, data_ptr,
                                            &indptr[0], row0, n, gold_ptr, loss_weight,
                                            &ws, ws.path)
                for t in range(n):
                    out[row0 + t] = ws.path[t]
        workspace_free(&ws)
    if status != 0:
        raise MemoryError("viterbi_batch: cannot allocate the decoding workspace")


def averaged_weights(const float[::1] w, const double[::1] u, double counter, float[::1] out):
    """out = w - u / counter  (the lazy average; see perceptron_epoch), in place."""
    cdef Py_ssize_t j, n = w.shape[0]
    if u.shape[0] != n or out.shape[0] != n or counter <= 0:
        raise ValueError("averaged_weights: shapes differ or counter <= 0")
    with nogil:
        for j in range(n):
            out[j] = <float>(w[j] - u[j] / counter)


cdef inline void avg_add(float* w, double* u, Py_ssize_t j, double delta, double c) noexcept nogil:
    """w[j] += delta; u[j] += c * delta   (lazy averaging, see _weights.pxd)"""
    w[j] += <float>delta
    u[j] += c * delta


cdef struct Overlay:
    # A parameter-mixing shard's averaging sums of the emission rows it updated during
    # the fit (see perceptron_epoch_shard): slot[2 f] = 0 (row f not updated yet) or
    # r + 1 (its sums are pool_u[r]), rows[r] = f for the n_rows rows in use;
    # slot[2 f + 1] = the stamp of the last epoch that updated row f, and touched
    # lists the n_touched rows this epoch (stamp) updated, in first-update order.
    int* slot
    int* rows
    double* pool_u
    Py_ssize_t n_rows
    int* touched
    Py_ssize_t n_touched
    int stamp


cdef inline Py_ssize_t overlay_row(Overlay* ov, Py_ssize_t f, Py_ssize_t K) noexcept nogil:
    """The pool row of feature f's sums (zero at the row's first update); lists f
    among the epoch's updated rows at its first update of the epoch."""
    cdef int* sf = ov.slot + 2 * f
    cdef Py_ssize_t r = sf[0] - 1
    if r < 0:
        r = ov.n_rows
        ov.n_rows = r + 1
        ov.rows[r] = <int>f
        sf[0] = <int>(r + 1)
        memset(ov.pool_u + r * K, 0, K * sizeof(double))
    if sf[1] != ov.stamp:
        sf[1] = ov.stamp
        ov.touched[ov.n_touched] = <int>f
        ov.n_touched += 1
    return r


cdef int _epoch(float* W, double* U_W, float* trans, double* U_trans, float* trans2,
                double* U_trans2, float* start, double* U_start, float* stop, double* U_stop,
                Py_ssize_t K, int order, const int* ind_ptr, const double* data_ptr,
                const int* indptr, Py_ssize_t n_tokens, const long long* sent_offsets,
                Py_ssize_t max_len, const int* gold_base, const int* visit_order,
                Py_ssize_t n_visit, int binary, double sum_scale, Overlay* ov,
                unsigned char* touched, double* counter, Py_ssize_t* n_sent_err_out,
                Py_ssize_t* n_tok_err_out) noexcept nogil:
    """The perceptron epoch (see perceptron_epoch); with ``ov`` the averaging sums
    of the emission rows go to the shard's compact overlay (U_W is not
    written).  Returns -1 when the workspace cannot be allocated."""
    cdef Workspace ws
    cdef Py_ssize_t i, s, row0, n, t, p, f, q, nnz, max_nnz = 0
    cdef Py_ssize_t n_sent_err = 0, n_tok_err = 0
    cdef int g, y, differs
    cdef double c = counter[0], v, cs
    cdef int* pred
    cdef const int* gs
    cdef float* wrow
    cdef double* urow
    cdef double** sums_of
    for i in range(n_visit):                  # the most feature entries of a sentence
        s = visit_order[i]
        nnz = indptr[sent_offsets[s + 1]] - indptr[sent_offsets[s]]
        if nnz > max_nnz:
            max_nnz = nnz
    sums_of = <double**>malloc((max_nnz if max_nnz > 0 else 1) * sizeof(double*))
    if sums_of == NULL:
        return -1
    if workspace_alloc(&ws, max_len, K, order) != 0:
        workspace_free(&ws)
        free(sums_of)
        return -1
    pred = ws.path
    if binary >= 0:
        ws.binary = binary
    elif data_ptr != NULL:
        ws.binary = lc_all_ones(data_ptr + indptr[0], indptr[n_tokens] - indptr[0])
    lc_pad_trans(trans, K, ws.Tp, ws.Tt)
    for i in range(n_visit):
        s = visit_order[i]
        row0 = sent_offsets[s]
        n = sent_offsets[s + 1] - row0
        if n > 0:
            cs = c * sum_scale
            gs = gold_base + row0
            decode_sentence(<const float*>W, <const float*>trans, <const float*>trans2,
                            <const float*>start, <const float*>stop, K, order, ind_ptr,
                            data_ptr, indptr, row0, n, NULL, 0.0, &ws, pred)
            differs = 0
            for t in range(n):
                if gs[t] != pred[t]:
                    differs = 1
                    n_tok_err += 1
            if differs:
                # The emission updates of the sentence's wrong tokens, in three
                # passes so that the scattered rows of their averaging sums are
                # fetched together instead of one cache miss after another: the
                # sum rows are located (an overlay's slots prefetched first) and
                # prefetched at the two columns updated, then the updates are
                # made in the order of a single pass (the same bits; an overlay
                # takes its new rows in the same order).
                if ov != NULL:
                    for t in range(n):
                        if gs[t] != pred[t]:
                            for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                                LC_PREFETCH(ov.slot + 2 * ind_ptr[p])
                q = 0
                for t in range(n):
                    g = gs[t]
                    y = pred[t]
                    if g == y:
                        continue
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        f = ind_ptr[p]
                        if ov == NULL:
                            urow = U_W + f * K
                            if touched != NULL:
                                touched[f] = 1
                        else:
                            urow = ov.pool_u + overlay_row(ov, f, K) * K
                        LC_PREFETCH(urow + g)
                        LC_PREFETCH(urow + y)
                        sums_of[q] = urow
                        q += 1
                q = 0
                for t in range(n):
                    g = gs[t]
                    y = pred[t]
                    if g == y:
                        continue
                    for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                        f = ind_ptr[p]
                        v = data_ptr[p]
                        wrow = W + f * K
                        urow = sums_of[q]
                        q += 1
                        avg_add(wrow, urow, g, v, cs)      # W[f, g] += v
                        avg_add(wrow, urow, y, -v, cs)     # W[f, y] -= v
            if differs:
                n_sent_err += 1
                if gs[0] != pred[0]:
                    avg_add(start, U_start, gs[0], 1.0, cs)
                    avg_add(start, U_start, pred[0], -1.0, cs)
                if gs[n - 1] != pred[n - 1]:
                    avg_add(stop, U_stop, gs[n - 1], 1.0, cs)
                    avg_add(stop, U_stop, pred[n - 1], -1.0, cs)
                for t in range(1, n):
                    if gs[t - 1] != pred[t - 1] or gs[t] != pred[t]:
                        avg_add(trans, U_trans, gs[t - 1] * K + gs[t], 1.0, cs)
                        avg_add(trans, U_trans, pred[t - 1] * K + pred[t], -1.0, cs)
                        lc_set_trans(trans, K, gs[t - 1], gs[t], ws.Tp, ws.Tt)
                        lc_set_trans(trans, K, pred[t - 1], pred[t], ws.Tp, ws.Tt)
                if order == 2:
                    for t in range(2, n):
                        if (gs[t - 2] != pred[t - 2] or gs[t - 1] != pred[t - 1]
                                or gs[t] != pred[t]):
                            avg_add(trans2, U_trans2,
                                    (gs[t - 2] * K + gs[t - 1]) * K + gs[t], 1.0, cs)
                            avg_add(trans2, U_trans2,
                                    (pred[t - 2] * K + pred[t - 1]) * K + pred[t], -1.0, cs)
        c += 1.0
    workspace_free(&ws)
    free(sums_of)
    counter[0] = c
    n_sent_err_out[0] = n_sent_err
    n_tok_err_out[0] = n_tok_err
    return 0


def _check_epoch_args(Py_ssize_t F, Py_ssize_t K, trans, start, stop, trans2, int order,
                      const int[::1] indices, const double[::1] data, const int[::1] indptr,
                      const long long[::1] sent_offsets, const int[::1] gold,
                      const int[::1] visit_order, sums):
    """The entry points' checks (shapes, gold length, visit order); returns n_tokens."""
    cdef Py_ssize_t i, n_tokens
    n_tokens = _check_shapes(F, K, (trans.shape[0], trans.shape[1]), start.shape[0],
                             stop.shape[0], trans2.shape[0], order, indices.shape[0],
                             data.shape[0], indptr, sent_offsets)
    _debug_check_values(F, K, indices, indptr, n_tokens, gold)
    if gold.shape[0] < n_tokens:
        raise ValueError("gold needs one label per token")
    U_W, U_trans, U_trans2, U_start, U_stop = sums
    if ((U_W is not None and (U_W.shape[0] != F or U_W.shape[1] != K))
            or U_trans.shape[0] != K or U_trans.shape[1] != K
            or U_trans2.shape[0] != trans2.shape[0]
            or U_start.shape[0] != K or U_stop.shape[0] != K):
        raise ValueError("the averaging sums must have the shapes of the weights")
    for i in range(visit_order.shape[0]):
        if visit_order[i] < 0 or visit_order[i] >= sent_offsets.shape[0] - 1:
            raise ValueError("visit_order holds sentence %d, outside [0, %d)"
                             % (visit_order[i], sent_offsets.shape[0] - 1))
    return n_tokens


def perceptron_epoch(float[:, ::1] W, double[:, ::1] U_W,
                     float[:, ::1] trans, double[:, ::1] U_trans,
                     float[::1] trans2, double[::1] U_trans2,
                     float[::1] start, double[::1] U_start,
                     float[::1] stop, double[::1] U_stop,
                     const int[::1] indices, const double[::1] data, const int[::1] indptr,
                     const long long[::1] sent_offsets, const int[::1] gold,
                     const int[::1] visit_order, *, int order=1, double counter=1.0,
                     unsigned char[::1] touched=None, int binary=-1, double sum_scale=1.0):
    """One epoch of the averaged structured perceptron, entirely without the GIL.

    For each sentence in `visit_order`: decode with the current weights; where
    the predicted path differs from `gold`, add the gold features and subtract
    the predicted ones (emissions only at tokens whose labels differ,
    transitions only where the label pair/triple differs); `U_*` accumulate
    counter * update for lazy averaging; the counter advances once per sentence.
    The averaged weights are  W - U_W / counter  (computed by the caller).
    `touched` (optional, one byte per feature row) gets 1 at every row of `W`
    the epoch updates (the distributed mixing then ships those rows only).
    ``binary``: as in :func:`viterbi_batch` (1: every value of ``data`` is 1.0).
    ``sum_scale``: the averaging sums get ``(counter * sum_scale) * update``
    (1.0 gives exactly ``counter * update``).

    Returns (counter, n_sentence_errors, n_token_errors).
    """
    cdef Py_ssize_t K = W.shape[1]
    cdef Py_ssize_t n_visit = visit_order.shape[0], n_tokens, max_len
    cdef Py_ssize_t n_sent_err = 0, n_tok_err = 0
    cdef double c = counter
    cdef int status = 0
    cdef unsigned char* touched_ptr = NULL
    n_tokens = _check_epoch_args(W.shape[0], K, trans, start, stop, trans2, order, indices,
                                 data, indptr, sent_offsets, gold, visit_order,
                                 (U_W, U_trans, U_trans2, U_start, U_stop))
    if touched is not None:
        if touched.shape[0] != W.shape[0]:
            raise ValueError("touched must have one entry per row of W")
        if touched.shape[0] > 0:
            touched_ptr = &touched[0]
    if n_visit == 0:
        return counter, 0, 0
    max_len = _max_length(sent_offsets, 0, sent_offsets.shape[0] - 1)
    with nogil:
        status = _epoch(&W[0, 0], &U_W[0, 0], &trans[0, 0], &U_trans[0, 0],
                        &trans2[0] if trans2.shape[0] > 0 else NULL,
                        &U_trans2[0] if U_trans2.shape[0] > 0 else NULL,
                        &start[0], &U_start[0], &stop[0], &U_stop[0], K, order,
                        &indices[0] if indices.shape[0] > 0 else NULL,
                        &data[0] if data.shape[0] > 0 else NULL, &indptr[0], n_tokens,
                        &sent_offsets[0], max_len, &gold[0] if gold.shape[0] > 0 else NULL,
                        &visit_order[0], n_visit, binary, sum_scale, NULL, touched_ptr,
                        &c, &n_sent_err, &n_tok_err)
    if status != 0:
        raise MemoryError("perceptron_epoch: cannot allocate the decoding workspace")
    return c, n_sent_err, n_tok_err


# ------------------------------------------- iterative parameter mixing --

def _check_overlay(Py_ssize_t F, Py_ssize_t K, int[:, ::1] slot, int[::1] rows,
                   double[:, ::1] pool_u, Py_ssize_t n_rows, int[::1] touched):
    """The overlay arrays of a shard agree (the kernels index through them):
    slot (F, 2), rows and touched (F,), pool_u (F, K); the first column of slot
    holds 0 or a pool row + 1 within ``n_rows`` and exactly ``n_rows`` rows
    are in use, each listed in ``rows`` at its slot."""
    cdef Py_ssize_t f, r, used = 0, bad = -1
    if (slot.shape[0] != F or slot.shape[1] != 2 or rows.shape[0] != F
            or touched.shape[0] != F or pool_u.shape[0] != F or pool_u.shape[1] != K):
        raise ValueError("overlay: slot must be (F, 2), rows and touched (F,), pool_u the "
                         "shape of W")
    if not 0 <= n_rows <= F:
        raise ValueError("n_rows must be in [0, F]")
    with nogil:                           # O(F): the other shards' threads run meanwhile
        for f in range(F):
            r = slot[f, 0]
            if r != 0:
                if r < 0 or r > n_rows or rows[r - 1] != f:
                    bad = f
                    break
                used += 1
    if bad >= 0:
        raise ValueError("overlay: slot of row %d is inconsistent with rows" % bad)
    if used != n_rows:
        raise ValueError("overlay: %d rows in use but n_rows is %d" % (used, n_rows))


def perceptron_epoch_shard(float[:, ::1] W,
                           float[:, ::1] trans, double[:, ::1] U_trans,
                           float[::1] trans2, double[::1] U_trans2,
                           float[::1] start, double[::1] U_start,
                           float[::1] stop, double[::1] U_stop,
                           const int[::1] indices, const double[::1] data,
                           const int[::1] indptr, const long long[::1] sent_offsets,
                           const int[::1] gold, const int[::1] visit_order,
                           int[:, ::1] slot, int[::1] rows, double[:, ::1] pool_u,
                           Py_ssize_t n_rows, int[::1] touched, int stamp, *, int order=1,
                           double counter=1.0, int binary=-1, double sum_scale=1.0):
    """One shard's epoch of iterative parameter mixing, without the GIL.

    The perceptron epoch of :func:`perceptron_epoch` on the sentences of
    ``visit_order``, on the shard's own weights (``W`` -- the model's array
    for shard 0, a private copy for the others -- and private copies of the
    small arrays, their sums in ``U_*``), bit for bit.  The averaging sums of
    the emission rows go to a compact *overlay*, kept over all the epochs of
    a fit, instead of a dense array: ``slot`` (F, 2) int32, ``slot[f, 0] = r
    + 1`` when row ``f`` was updated and its sums are ``pool_u[r]`` (zero at
    the first update), ``rows[r] = f`` for the first ``n_rows`` rows in use
    (a new overlay: ``slot`` all zero, ``n_rows = 0``; allocate ``pool_u``
    (F, K) with ``np.empty``: only the rows used take memory).  The rows the
    epoch updates are listed in ``touched`` (F,), in first-update order, and
    marked ``slot[f, 1] = stamp`` (``stamp`` >= 1, new for each epoch of the
    fit).

    Returns (counter, n_sentence_errors, n_token_errors, n_rows, n_touched).
    """
    cdef Py_ssize_t F = W.shape[0], K = W.shape[1]
    cdef Py_ssize_t n_visit = visit_order.shape[0], n_tokens, max_len
    cdef Py_ssize_t n_sent_err = 0, n_tok_err = 0
    cdef double c = counter
    cdef int status = 0
    cdef Overlay ov
    n_tokens = _check_epoch_args(F, K, trans, start, stop, trans2, order, indices, data,
                                 indptr, sent_offsets, gold, visit_order,
                                 (None, U_trans, U_trans2, U_start, U_stop))
    _check_overlay(F, K, slot, rows, pool_u, n_rows, touched)
    if stamp < 1:
        raise ValueError("stamp must be >= 1")
    max_len = _max_length(sent_offsets, 0, sent_offsets.shape[0] - 1)
    ov.slot = &slot[0, 0]
    ov.rows = &rows[0]
    ov.pool_u = &pool_u[0, 0]
    ov.n_rows = n_rows
    ov.touched = &touched[0]
    ov.n_touched = 0
    ov.stamp = stamp
    if n_visit > 0:
        with nogil:
            status = _epoch(&W[0, 0], NULL, &trans[0, 0], &U_trans[0, 0],
                            &trans2[0] if trans2.shape[0] > 0 else NULL,
                            &U_trans2[0] if U_trans2.shape[0] > 0 else NULL,
                            &start[0], &U_start[0], &stop[0], &U_stop[0], K, order,
                            &indices[0] if indices.shape[0] > 0 else NULL,
                            &data[0] if data.shape[0] > 0 else NULL, &indptr[0], n_tokens,
                            &sent_offsets[0], max_len,
                            &gold[0] if gold.shape[0] > 0 else NULL, &visit_order[0],
                            n_visit, binary, sum_scale, &ov, NULL, &c, &n_sent_err,
                            &n_tok_err)
    if status != 0:
        raise MemoryError("perceptron_epoch_shard: cannot allocate the decoding workspace")
    return c, n_sent_err, n_tok_err, ov.n_rows, ov.n_touched


def mix_shard_rows(Py_ssize_t part, Py_ssize_t n_parts, list shard_w, list slots,
                   list touched, list n_touched, int stamp):
    """Iterative parameter mixing of the emission rows the shards updated in the
    epoch ``stamp``, the share ``part`` of ``n_parts`` (rows ``f`` with ``f %
    n_parts == part``: the calls of different parts can run in parallel).

    ``shard_w[j]`` is shard ``j``'s weight matrix (shard 0: the model's),
    ``slots[j]``, ``touched[j]`` and ``n_touched[j]`` its overlay (see
    :func:`perceptron_epoch_shard`).  Every row some shard updated is mixed
    once: ``shard_w[j][f] := float32(sum_j shard_w[j][f] / n)`` for every
    ``j``, summed in float64 in shard order.  (Rows no shard updated are equal
    in every shard already.)  The overlays are read only.
    """
    cdef Py_ssize_t n = len(slots), F, K, i, j, k, f, m = 0, total = 0
    cdef int[:, ::1] sv
    cdef int[::1] tv
    cdef float[:, ::1] wv
    if n < 1 or not (len(shard_w) == len(touched) == len(n_touched) == n):
        raise ValueError("mix_shard_rows: one weight matrix, slot and touched list per shard")
    if not 0 <= part < n_parts:
        raise ValueError("mix_shard_rows: part must be in [0, n_parts)")
    wv = shard_w[0]
    F, K = wv.shape[0], wv.shape[1]
    for j in range(n):
        sv = slots[j]
        wv = shard_w[j]
        tv = touched[j]
        if (sv.shape[0] != F or sv.shape[1] != 2 or wv.shape[0] != F or wv.shape[1] != K
                or tv.shape[0] != F or not 0 <= n_touched[j] <= F):
            raise ValueError("mix_shard_rows: shard %d has the wrong shapes" % j)
        for i in range(n_touched[j]):
            if not 0 <= tv[i] < F:
                raise ValueError("mix_shard_rows: row %d out of range" % tv[i])
        total += n_touched[j]
    if total == 0:
        return
    cdef int** sp = <int**>malloc(n * sizeof(int*))
    cdef float** wp = <float**>malloc(n * sizeof(float*))
    cdef int** tp = <int**>malloc(n * sizeof(int*))
    cdef Py_ssize_t* nt = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef int* mine = <int*>malloc(total * sizeof(int))
    if sp == NULL or wp == NULL or tp == NULL or nt == NULL or mine == NULL:
        free(sp)
        free(wp)
        free(tp)
        free(nt)
        free(mine)
        raise MemoryError()
    for j in range(n):
        sv = slots[j]
        wv = shard_w[j]
        tv = touched[j]
        sp[j] = &sv[0, 0]
        wp[j] = &wv[0, 0]
        tp[j] = &tv[0]
        nt[j] = n_touched[j]
    cdef double mean, denom = <double>n
    cdef float value
    cdef bint earlier
    cdef Py_ssize_t g, q, ahead = 4           # rows ahead whose memory is prefetched
    with nogil:
        # this part's rows, each once (the first shard that updated it lists it)
        for j in range(n):
            for i in range(nt[j]):
                f = tp[j][i]
                if f % n_parts != part:
                    continue
                earlier = False
                for q in range(j):
                    if sp[q][2 * f + 1] == stamp:
                        earlier = True
                        break
                if not earlier:
                    mine[m] = <int>f
                    m += 1
        for i in range(m):
            if i + ahead < m:
                # the rows are scattered: fetch a later row's weights while this one mixes
                g = mine[i + ahead]
                for j in range(n):
                    LC_PREFETCH(&wp[j][g * K])
                    LC_PREFETCH(&wp[j][g * K + K - 1])
            f = mine[i]
            for k in range(K):
                mean = 0.0
                for j in range(n):
                    mean += wp[j][f * K + k]
                value = <float>(mean / denom)
                for j in range(n):
                    wp[j][f * K + k] = value
    free(sp)
    free(wp)
    free(tp)
    free(nt)
    free(mine)


def fold_shard_sums(Py_ssize_t first, Py_ssize_t last, float[:, ::1] W, double[:, ::1] U_W,
                    list slots, list pools_u, double counter=1.0, float[:, ::1] avg=None,
                    bint zero_start=False, bint write_sums=True):
    """The end of a parameter-mixing fit, on emission rows ``first..last-1``:
    the shards' overlay sums are added to the model's sums in shard order
    (``U_W[f] += pools_u[j][slots[j][f, 0] - 1]`` for the shards that updated
    row f; rows no shard updated are not written), and with ``avg`` the
    averaged weights ``avg[f] = W[f] - U_W[f] / counter`` (as
    :func:`averaged_weights`, the same bits).  Calls on disjoint row ranges
    can run in parallel.

    ``zero_start``: the fit started from zero weights and sums, so the rows
    no shard updated are zero in ``W`` and ``U_W``: they are not read (their
    averages are written 0, the same bits), and the updated rows of ``U_W``
    are written without being read.  ``write_sums=False`` (with ``avg``):
    the averages only, ``U_W`` is read (unless ``zero_start``) but not
    written (the sums are folded later, by a call with ``write_sums``).
    """
    cdef Py_ssize_t n = len(slots), F = W.shape[0], K = W.shape[1], j, k, f, r
    cdef int[:, ::1] sv
    cdef double[:, ::1] pu
    if len(pools_u) != n:
        raise ValueError("fold_shard_sums: one slot array and pool per shard")
    if U_W.shape[0] != F or U_W.shape[1] != K:
        raise ValueError("fold_shard_sums: U_W must have the shape of W")
    if avg is not None and (avg.shape[0] != F or avg.shape[1] != K):
        raise ValueError("fold_shard_sums: avg must have the shape of W")
    if avg is None and not write_sums:
        raise ValueError("fold_shard_sums: nothing to write (no avg, write_sums=False)")
    if not 0 <= first <= last <= F:
        raise ValueError("fold_shard_sums: rows must satisfy 0 <= first <= last <= F")
    if avg is not None and counter <= 0:
        raise ValueError("fold_shard_sums: counter must be > 0")
    for j in range(n):
        sv = slots[j]
        pu = pools_u[j]
        if sv.shape[0] != F or sv.shape[1] != 2 or pu.shape[1] != K:
            raise ValueError("fold_shard_sums: shard %d has the wrong shapes" % j)
        for f in range(first, last):
            if not 0 <= sv[f, 0] <= pu.shape[0]:
                raise ValueError("fold_shard_sums: slot of row %d out of range" % f)
    if first == last:
        return
    cdef int** sp = <int**>malloc(n * sizeof(int*))
    cdef double** up = <double**>malloc(n * sizeof(double*))
    cdef double** rowp = <double**>malloc(n * sizeof(double*))
    if sp == NULL or up == NULL or rowp == NULL:
        free(sp)
        free(up)
        free(rowp)
        raise MemoryError()
    for j in range(n):
        sv = slots[j]
        pu = pools_u[j]
        sp[j] = &sv[0, 0]
        up[j] = &pu[0, 0] if pu.shape[0] > 0 else NULL
    cdef double* u
    cdef const float* w
    cdef float* a = NULL
    cdef bint averaging = avg is not None
    cdef double acc
    cdef Py_ssize_t m, g, ahead = 8        # rows ahead whose pool rows are prefetched
    with nogil:
        for f in range(first, last):
            if f + ahead < last:
                # the pool rows are in first-update order, scattered: fetch a later
                # row's sums while this one is added
                g = f + ahead
                for j in range(n):
                    r = sp[j][2 * g] - 1
                    if r >= 0:
                        for k in range(0, K, 8):
                            LC_PREFETCH(&up[j][r * K + k])
                        LC_PREFETCH(&up[j][r * K + K - 1])
            m = 0                                 # the pool rows of f, in shard order
            for j in range(n):
                r = sp[j][2 * f] - 1
                if r >= 0:
                    rowp[m] = up[j] + r * K
                    m += 1
            if averaging:
                a = &avg[f, 0]
            if m == 0 and zero_start:             # never updated: zero weights and sums
                if averaging:
                    memset(a, 0, K * sizeof(float))
                continue
            u = &U_W[f, 0]
            w = &W[f, 0]
            for k in range(K):
                acc = 0.0 if zero_start else u[k]
                for j in range(m):
                    acc = acc + rowp[j][k]
                if write_sums and m > 0:
                    u[k] = acc
                if averaging:
                    a[k] = <float>(w[k] - acc / counter)
    free(sp)
    free(up)
    free(rowp)
