"""Linear-chain CRF kernels: forward-backward (log-partition, node and edge
marginals), the negative conditional log-likelihood with its gradient over a
batch of sentences, and Viterbi decoding, all without the GIL.

Model (first order, K labels, F token attributes):
    score(x, y) = start[y_0] + sum_t E[t, y_t] + sum_{t>=1} trans[y_{t-1}, y_t] + stop[y_{T-1}]
    E[t, k] = sum_{f in x_t} x_t[f] * sum_{p in attr_ptr[f]:attr_ptr[f+1], attr_label[p] == k} w[p]

State features are *sparse* (as in CRFsuite): attribute f owns the state
features p = attr_ptr[f] .. attr_ptr[f+1]-1, each for one label attr_label[p]
with weight w[p]; the labels of one attribute are distinct and increasing, so
an attribute with K state features is a dense row (labels 0..K-1, read with
a contiguous, vectorisable loop).  With all (attribute, label) pairs present
this is the dense F x K weight matrix in row-major order.  Tokens of all sentences are rows of
one CSR matrix (indices int32, data float64, indptr int32); sentence s owns rows
sent_offsets[s]:sent_offsets[s+1].

Forward-backward is *scaled* (Rabiner 1989), not in log space: per token the
potentials exp(E[t] - max_k E[t, k]) and once per call exp(trans - max trans)
are formed (K exps per token, K*K per call); the recursions are then plain
multiply-adds over K x K with one normalisation (the scale c_t) per token, and
log Z = sum_t (log c_t + max_k E[t, k]) + (T - 1) max trans.  The per-token
shift keeps every potential in [0, 1] with one of them equal to 1, so nothing
overflows; the scales keep alpha and beta normalised, so nothing underflows
along long sentences.  Log-space recursions would need K*K exp/log per token
(about 20x more transcendental calls for K = 23 in CoNLL-2000).  The one case
scaling cannot represent -- every path of a sentence below 1e-308 relative to
the best one (transition weights differing by more than ~700) -- is detected
(a zero or non-finite scale) and reported as status 1; the caller raises.

Layout and vector code: every per-token label vector (scores, potentials,
alpha, beta, u_t = e_t * beta_t / c_t) is a row of Kp = K padded to a
multiple of 8 doubles with zero pad lanes, and T is a zero-padded Kp x Kp
matrix.  The forward and backward steps are mat-vecs, the edge marginals of
a sentence one rank-(n-1) update M += sum_t alpha_{t-1} (x) u_t (their
expected counts T * M are formed once per call), and the potentials use a
vectorised exp: all in _crf_simd.h, AVX2 / SSE2 / scalar chosen at run time
(``set_simd_level`` for tests), with bit-identical results on every level.

References: Lafferty, McCallum, Pereira (2001), "Conditional random fields";
Rabiner (1989), "A tutorial on hidden Markov models" (scaling); Sha and
Pereira (2003), "Shallow parsing with conditional random fields".  The caller
(linclass.sequence.crf) validates every array: no bounds checks happen here.
"""
from libc.math cimport exp, log, sqrt, INFINITY
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset

from linclass._core._debug cimport debug_check_index

import numpy as np


cdef extern from "_crf_simd.h" nogil:
    Py_ssize_t lc_crf_pad(Py_ssize_t K)
    int lc_crf_level()
    int lc_crf_set_level(int level)
    void lc_crf_matvec(int level, const double* x, const double* M, double* out,
                       Py_ssize_t K, Py_ssize_t Kp)
    void lc_crf_expshift(int level, double* e, double m, Py_ssize_t K, Py_ssize_t Kp)
    double lc_crf_exp1(double x)
    void lc_crf_gather_add(double* E, const int* lab, const double* w, Py_ssize_t q0,
                           Py_ssize_t q1)
    void lc_crf_scatter_add(double* G, const int* lab, const double* P, Py_ssize_t q0,
                            Py_ssize_t q1)
    void lc_crf_ger(int level, double* M, const double* A, const double* U, Py_ssize_t n,
                    Py_ssize_t K, Py_ssize_t Kp)


def simd_level():
    """The vector level the kernels use: 0 scalar, 1 SSE2, 2 AVX2."""
    return lc_crf_level()


def set_simd_level(int level):
    """Use vector level ``level`` (at most the CPU's; -1: the best).  For tests
    comparing the paths; returns the level in effect."""
    return lc_crf_set_level(level)


cdef struct Workspace:
    Py_ssize_t Kp     # row stride: K padded to a multiple of 8 (pad lanes hold 0)
    int level         # vector level of _crf_simd.h
    double* E         # n x Kp emission scores, then potentials exp(E - m)
    double* alpha     # n x Kp scaled forward
    double* beta      # n x Kp scaled backward
    double* U         # n x Kp  u_t = e_t * beta_t / c_t (rows 1..n-1)
    double* scale     # n   scales c_t
    double* shift     # n   shifts m_t
    double* T         # Kp x Kp exp(trans - max trans), zero padded
    double* Tt        # Kp x Kp its transpose (the backward pass reads columns of T as rows)
    double* M         # Kp x Kp edge sums  sum_t alpha_{t-1} (x) u_t  (times T: expected counts)
    int* back         # n x K Viterbi back pointers
    double* tmp       # Kp  scratch


cdef int workspace_alloc(Workspace* ws, Py_ssize_t n, Py_ssize_t K) noexcept nogil:
    cdef Py_ssize_t Kp = lc_crf_pad(K)
    if n < 1:
        n = 1
    ws.Kp = Kp
    ws.level = lc_crf_level()
    ws.E = <double*>malloc(n * Kp * sizeof(double))
    ws.alpha = <double*>malloc(n * Kp * sizeof(double))
    ws.beta = <double*>malloc(n * Kp * sizeof(double))
    ws.U = <double*>malloc(n * Kp * sizeof(double))
    ws.scale = <double*>malloc(n * sizeof(double))
    ws.shift = <double*>malloc(n * sizeof(double))
    ws.T = <double*>malloc(Kp * Kp * sizeof(double))
    ws.Tt = <double*>malloc(Kp * Kp * sizeof(double))
    ws.M = <double*>malloc(Kp * Kp * sizeof(double))
    ws.back = <int*>malloc(n * K * sizeof(int))
    ws.tmp = <double*>malloc(Kp * sizeof(double))
    if (ws.tmp == NULL or ws.Tt == NULL or ws.E == NULL or ws.alpha == NULL or ws.beta == NULL
            or ws.U == NULL or ws.M == NULL or ws.scale == NULL
            or ws.shift == NULL or ws.T == NULL or ws.back == NULL):
        return 1
    memset(ws.M, 0, Kp * Kp * sizeof(double))
    memset(ws.U, 0, n * Kp * sizeof(double))
    return 0


cdef void workspace_free(Workspace* ws) noexcept nogil:
    free(ws.E)
    free(ws.alpha)
    free(ws.beta)
    free(ws.U)
    free(ws.scale)
    free(ws.shift)
    free(ws.T)
    free(ws.Tt)
    free(ws.M)
    free(ws.back)
    free(ws.tmp)


cdef void emission_scores(const double* w, const int* attr_ptr, const int* attr_label,
                          Py_ssize_t K, Py_ssize_t Kp, const int* indices, const double* data,
                          const int* indptr, Py_ssize_t row0, Py_ssize_t n,
                          const double* start, const double* stop,
                          double* E) noexcept nogil:
    """E[t, :] = sparse state scores of token row0 + t; start added at t = 0,
    stop at t = n - 1   (E: n x Kp, overwritten; pad lanes 0)."""
    cdef Py_ssize_t t, p, q, k, f, q0, q1
    cdef double v
    cdef double* erow
    cdef const double* wrow
    for t in range(n):
        erow = E + t * Kp
        for k in range(Kp):
            erow[k] = 0.0
        for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
            f = indices[p]
            v = data[p]
            q0 = attr_ptr[f]
            q1 = attr_ptr[f + 1]
            if q1 - q0 == K:                         # every label (sorted): a dense row
                wrow = w + q0
                for k in range(K):
                    erow[k] += v * wrow[k]           # E[t] += x[t, f] * W[f]
            elif v == 1.0:                           # binary attribute (1.0 * w == w)
                lc_crf_gather_add(erow, attr_label, w, q0, q1)
            else:
                for q in range(q0, q1):
                    erow[attr_label[q]] += v * w[q]  # E[t, label(q)] += x[t, f] * w[q]
    if n > 0:
        for k in range(K):
            E[k] += start[k]
            E[(n - 1) * Kp + k] += stop[k]


cdef void emission_rescale(double* E, Py_ssize_t n, Py_ssize_t K, Py_ssize_t Kp,
                           double w_scale, const double* start,
                           const double* stop) noexcept nogil:
    """E (state scores of weights w plus start/stop) -> scores of w_scale * w
    plus start/stop."""
    cdef Py_ssize_t i, k
    if n == 0:
        return
    for k in range(K):
        E[k] -= start[k]
        E[(n - 1) * Kp + k] -= stop[k]
    for i in range(n * Kp):
        E[i] *= w_scale
    for k in range(K):
        E[k] += start[k]
        E[(n - 1) * Kp + k] += stop[k]


cdef void exp_transitions(const double* trans, Py_ssize_t K, Py_ssize_t Kp, double* T,
                          double* Tt, double* shift) noexcept nogil:
    """T = exp(trans - max(trans)) (Kp x Kp, zero padded); Tt = T.T;
    shift[0] = max(trans)"""
    cdef Py_ssize_t i, k
    cdef double m = -INFINITY
    for i in range(K * K):
        if trans[i] > m:
            m = trans[i]
    memset(T, 0, Kp * Kp * sizeof(double))
    memset(Tt, 0, Kp * Kp * sizeof(double))
    for i in range(K):
        for k in range(K):
            T[i * Kp + k] = exp(trans[i * K + k] - m)
            Tt[k * Kp + i] = T[i * Kp + k]
    shift[0] = m


cdef void finish_edges(Workspace* ws, Py_ssize_t K, double* grad_trans) noexcept nogil:
    """grad_trans += T * M (the expected transition counts summed in M); M = 0."""
    cdef Py_ssize_t i, k, Kp = ws.Kp
    for i in range(K):
        for k in range(K):
            grad_trans[i * K + k] += ws.T[i * Kp + k] * ws.M[i * Kp + k]
    memset(ws.M, 0, Kp * Kp * sizeof(double))


cdef int forward_backward(Workspace* ws, Py_ssize_t n, Py_ssize_t K, double trans_shift,
                          double* log_z) noexcept nogil:
    """Scaled forward-backward on ws.E (scores, turned into potentials in place).

    Afterwards node marginals are alpha[t, k] * beta[t, k]; the edge marginal
    of (y_{t-1} = i, y_t = j) is alpha[t-1, i] T[i, j] U[t, j] with
    U[t] = e_t * beta_t / scale[t] (t >= 1).
    Returns 1 when a scale is zero or not finite, else 0.
    """
    cdef Py_ssize_t t, k, Kp = ws.Kp
    cdef double m, c, lz = 0.0
    cdef double* e
    cdef double* al
    cdef double* be
    cdef double* u
    if n == 0:
        log_z[0] = 0.0
        return 0
    for t in range(n):                                    # potentials e_t = exp(E_t - m_t)
        e = ws.E + t * Kp
        m = e[0]
        for k in range(1, K):
            if e[k] > m:
                m = e[k]
        if not (m > -INFINITY and m < INFINITY):
            return 1
        lc_crf_expshift(ws.level, e, m, K, Kp)
        ws.shift[t] = m
        lz += m
    # forward: alpha_t = e_t * (alpha_{t-1} @ T), normalised
    for t in range(n):
        al = ws.alpha + t * Kp
        e = ws.E + t * Kp
        if t > 0:
            lc_crf_matvec(ws.level, ws.alpha + (t - 1) * Kp, ws.T, al, K, Kp)
        else:
            for k in range(Kp):
                al[k] = 1.0
        c = 0.0
        for k in range(Kp):
            al[k] *= e[k]                              # pad lanes: 0 * 0
            c += al[k]
        if not (c > 0.0 and c < INFINITY):
            return 1
        ws.scale[t] = c
        lz += log(c)
        c = 1.0 / c
        for k in range(Kp):
            al[k] *= c
    log_z[0] = lz + (n - 1) * trans_shift
    # backward: beta_{t-1} = T @ u_t,  u_t = e_t * beta_t / c_t
    be = ws.beta + (n - 1) * Kp
    for k in range(K):
        be[k] = 1.0
    for k in range(K, Kp):
        be[k] = 0.0
    t = n - 1
    while t > 0:
        be = ws.beta + t * Kp
        e = ws.E + t * Kp
        u = ws.U + t * Kp
        c = 1.0 / ws.scale[t]
        for k in range(Kp):
            u[k] = e[k] * be[k] * c
        lc_crf_matvec(ws.level, u, ws.Tt, ws.beta + (t - 1) * Kp, K, Kp)
        t -= 1
    return 0


cdef double path_score(const double* E, Py_ssize_t Kp, Py_ssize_t K, const double* trans,
                       const int* path, Py_ssize_t n) noexcept nogil:
    """Score of the label path ``path[0..n-1]`` under the emission scores E
    (n x Kp) and the transitions (K x K): sum_t E[t, y_t] + sum_{t>=1} trans[y_{t-1}, y_t]."""
    cdef Py_ssize_t t
    cdef double total = 0.0
    for t in range(n):
        total += E[t * Kp + path[t]]
    for t in range(1, n):
        total += trans[path[t - 1] * K + path[t]]
    return total


cdef double viterbi_path(Workspace* ws, Py_ssize_t n, Py_ssize_t K, const double* trans,
                         int* out) noexcept nogil:
    """Best label path through the emission scores ws.E (n >= 1 tokens, n x Kp)
    and the transitions (K x K) into out[0..n-1]; returns its score.  Ties go
    to the smallest label index.  Uses ws.alpha and ws.back."""
    cdef Py_ssize_t Kp = ws.Kp, t, j, k
    cdef int arg
    cdef double best, v
    cdef double* prev
    cdef double* cur
    # delta_t in alpha rows: delta_t[k] = E[t, k] + max_j delta_{t-1}[j] + trans[j, k]
    for k in range(K):
        ws.alpha[k] = ws.E[k]
    for t in range(1, n):
        prev = ws.alpha + (t - 1) * Kp
        cur = ws.alpha + t * Kp
        for k in range(K):
            cur[k] = prev[0] + trans[k]
            ws.back[t * K + k] = 0
        for j in range(1, K):
            for k in range(K):
                v = prev[j] + trans[j * K + k]
                if v > cur[k]:
                    cur[k] = v
                    ws.back[t * K + k] = <int>j
        for k in range(K):
            cur[k] += ws.E[t * Kp + k]
    prev = ws.alpha + (n - 1) * Kp
    best = prev[0]
    arg = 0
    for k in range(1, K):
        if prev[k] > best:
            best = prev[k]
            arg = <int>k
    out[n - 1] = arg
    t = n - 1
    while t > 0:
        out[t - 1] = ws.back[t * K + out[t]]
        t -= 1
    return best


cdef int sentence_gradient(const double* w, const int* attr_ptr, const int* attr_label,
                           Py_ssize_t K, const int* indices, const double* data,
                           const int* indptr, Py_ssize_t row0, Py_ssize_t n,
                           const double* trans, const double* start, const double* stop,
                           double trans_shift, const int* gold, Workspace* ws,
                           double* grad_w, double* grad_trans, double* grad_start,
                           double* grad_stop, double* nll, double w_scale=1.0,
                           double gain=1.0) noexcept nogil:
    """nll += log Z - score(gold); gradients += E_model[phi] - phi(gold), except
    the model's expected transition counts, which are summed in ws.M (the
    caller adds them with finish_edges once per call).

    The state weights are ``w_scale * w`` (``trans``, ``start``, ``stop`` are
    the actual values), and the state-feature gradient is added times
    ``gain``: SGD passes ``grad_w = w`` itself and ``gain = -eta / scale`` to
    update the weights in place (the marginals are complete before the first
    write)."""
    cdef Py_ssize_t t, p, q, k, f, q0, q1, Kp = ws.Kp
    cdef double lz, v, gold_score = 0.0
    cdef double* gq
    cdef double* P
    cdef int status
    if n == 0:
        return 0
    emission_scores(w, attr_ptr, attr_label, K, Kp, indices, data, indptr, row0, n, start, stop,
                    ws.E)
    if w_scale != 1.0:
        emission_rescale(ws.E, n, K, Kp, w_scale, start, stop)
    gold_score = path_score(ws.E, Kp, K, trans, gold, n)
    status = forward_backward(ws, n, K, trans_shift, &lz)
    if status != 0:
        return status
    nll[0] += lz - gold_score
    # edge marginals alpha_{t-1}[i] T[i, k] u_t[k]: M += sum_t alpha_{t-1} (x) u_t
    if n > 1:
        lc_crf_ger(ws.level, ws.M, ws.alpha, ws.U + Kp, n - 1, K, Kp)
    for t in range(1, n):
        grad_trans[gold[t - 1] * K + gold[t]] -= 1.0
    # node marginals P_t = alpha_t * beta_t (into beta), minus the gold indicator
    for t in range(n):
        P = ws.beta + t * Kp
        for k in range(K):
            P[k] *= ws.alpha[t * Kp + k]
    for k in range(K):
        grad_start[k] += ws.beta[k]
        grad_stop[k] += ws.beta[(n - 1) * Kp + k]
    grad_start[gold[0]] -= 1.0
    grad_stop[gold[n - 1]] -= 1.0
    for t in range(n):
        P = ws.beta + t * Kp
        P[gold[t]] -= 1.0
        for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
            f = indices[p]
            v = gain * data[p]
            q0 = attr_ptr[f]
            q1 = attr_ptr[f + 1]
            if q1 - q0 == K:                          # a dense row: labels 0..K-1
                gq = grad_w + q0
                for k in range(K):
                    gq[k] += v * P[k]                 # grad[f] += x[t, f] * (P_t - e_{y_t})
            elif v == 1.0:                            # binary attribute, gain 1
                lc_crf_scatter_add(grad_w, attr_label, P, q0, q1)
            else:
                for q in range(q0, q1):
                    grad_w[q] += v * P[attr_label[q]]  # grad[f, k] += x[t, f] * (P_t[k] - [k == y_t])
    return 0


def _exp(double x):
    """The kernel's exp (tests compare it with numpy's)."""
    return lc_crf_exp1(x)


def _check_common(Py_ssize_t n_state, Py_ssize_t K, attr_ptr, attr_label, trans, start,
                  stop, indices, data, indptr, sent_offsets):
    if K < 1:
        raise ValueError("need at least one label")
    if trans.shape[0] != K or trans.shape[1] != K or start.shape[0] != K or stop.shape[0] != K:
        raise ValueError("trans must be (K, K) and start/stop (K,) for K = %d" % K)
    if attr_ptr.shape[0] < 1 or attr_label.shape[0] != n_state:
        raise ValueError("attr_ptr needs n_attributes + 1 entries and attr_label one per "
                         "state feature")
    if attr_ptr[0] != 0 or attr_ptr[attr_ptr.shape[0] - 1] != n_state:
        raise ValueError("attr_ptr must run from 0 to the number of state features")
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data differ in length")
    if sent_offsets.shape[0] < 1 or sent_offsets[0] != 0:
        raise ValueError("sent_offsets must start at 0")
    n_tokens = sent_offsets[sent_offsets.shape[0] - 1]
    if indptr.shape[0] != n_tokens + 1:
        raise ValueError("indptr has %d entries for %d tokens" % (indptr.shape[0], n_tokens))
    if indptr[0] != 0 or indptr[indptr.shape[0] - 1] != indices.shape[0]:
        raise ValueError("indptr must run from 0 to nnz")
    return n_tokens


cdef Py_ssize_t _max_length(const long long[::1] sent_offsets, Py_ssize_t first,
                            Py_ssize_t last):
    cdef Py_ssize_t s, m = 0
    for s in range(first, last):
        if sent_offsets[s + 1] - sent_offsets[s] > m:
            m = sent_offsets[s + 1] - sent_offsets[s]
    return m


def negative_log_likelihood(const double[::1] w, const int[::1] attr_ptr,
                            const int[::1] attr_label, const double[:, ::1] trans,
                            const double[::1] start, const double[::1] stop,
                            const int[::1] indices, const double[::1] data,
                            const int[::1] indptr, const long long[::1] sent_offsets,
                            const int[::1] gold, double[::1] grad_w, double[:, ::1] grad_trans,
                            double[::1] grad_start, double[::1] grad_stop, *,
                            Py_ssize_t first=0, Py_ssize_t last=-1):
    """Sum over sentences first..last-1 of  log Z(x) - score(x, y)  (the negative
    conditional log-likelihood); its gradient is *added* to grad_* (zero them
    first).  One nogil call for the whole range.

    Returns (nll, status): status 1 means a sentence's forward-backward
    under/overflowed (weights too large for the scaled recursions).
    """
    cdef Py_ssize_t K = trans.shape[0], n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t s, row0, n, max_len, n_tokens
    cdef Workspace ws
    cdef int status = 0
    cdef double nll = 0.0, trans_shift = 0.0
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const double* w_ptr = &w[0] if w.shape[0] > 0 else NULL
    cdef double* gw_ptr = &grad_w[0] if grad_w.shape[0] > 0 else NULL
    cdef const int* al_ptr = &attr_label[0] if attr_label.shape[0] > 0 else NULL
    cdef const int* gold_ptr = &gold[0] if gold.shape[0] > 0 else NULL
    n_tokens = _check_common(w.shape[0], K, attr_ptr, attr_label, trans, start, stop,
                             indices, data, indptr, sent_offsets)
    if grad_w.shape[0] != w.shape[0] or grad_trans.shape[0] != K or grad_trans.shape[1] != K \
            or grad_start.shape[0] != K or grad_stop.shape[0] != K:
        raise ValueError("gradients must have the shapes of the weights")
    if gold.shape[0] != n_tokens:
        raise ValueError("gold needs one label per token")
    if last < 0:
        last = n_sent
    if first < 0 or last > n_sent:
        raise ValueError("sentence range [%d, %d) outside [0, %d)" % (first, last, n_sent))
    if last <= first or n_tokens == 0:
        return 0.0, 0
    max_len = _max_length(sent_offsets, first, last)
    with nogil:
        status = workspace_alloc(&ws, max_len, K)
        if status == 0:
            exp_transitions(&trans[0, 0], K, ws.Kp, ws.T, ws.Tt, &trans_shift)
            for s in range(first, last):
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                status = sentence_gradient(w_ptr, &attr_ptr[0], al_ptr, K, ind_ptr, data_ptr,
                                           &indptr[0], row0, n, &trans[0, 0], &start[0],
                                           &stop[0], trans_shift, gold_ptr + row0, &ws, gw_ptr,
                                           &grad_trans[0, 0], &grad_start[0], &grad_stop[0],
                                           &nll)
                if status != 0:
                    break
            if status == 0:
                finish_edges(&ws, K, &grad_trans[0, 0])
        else:
            status = 2
        workspace_free(&ws)
    if status == 2:
        raise MemoryError("negative_log_likelihood: cannot allocate the workspace")
    return nll, status


def marginals(const double[::1] w, const int[::1] attr_ptr, const int[::1] attr_label,
              const double[:, ::1] trans, const double[::1] start, const double[::1] stop,
              const int[::1] indices, const double[::1] data, const int[::1] indptr,
              const long long[::1] sent_offsets, double[:, ::1] node, double[::1] log_z,
              double[:, :, ::1] edge=None, *, Py_ssize_t first=0, Py_ssize_t last=-1):
    """Forward-backward of sentences first..last-1: node[t, k] = P(y_t = k | x),
    log_z[s] = log Z(x_s), and, when given, edge[t, i, j] = P(y_{t-1} = i, y_t = j | x)
    for every token t that is not the first of its sentence (edge[first token] = 0).

    Returns the status (1: a forward-backward under/overflowed).
    """
    cdef Py_ssize_t K = trans.shape[0], n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t Kp = lc_crf_pad(K)
    cdef Py_ssize_t s, row0, n, t, i, k, max_len, n_tokens
    cdef Workspace ws
    cdef int status = 0
    cdef double trans_shift = 0.0, lz, a, c
    cdef double* eb
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const double* w_ptr = &w[0] if w.shape[0] > 0 else NULL
    cdef const int* al_ptr = &attr_label[0] if attr_label.shape[0] > 0 else NULL
    cdef bint want_edge = edge is not None
    n_tokens = _check_common(w.shape[0], K, attr_ptr, attr_label, trans, start, stop,
                             indices, data, indptr, sent_offsets)
    if node.shape[0] != n_tokens or node.shape[1] != K or log_z.shape[0] != n_sent:
        raise ValueError("node must be (n_tokens, K) and log_z (n_sentences,)")
    if want_edge and (edge.shape[0] != n_tokens or edge.shape[1] != K or edge.shape[2] != K):
        raise ValueError("edge must be (n_tokens, K, K)")
    if last < 0:
        last = n_sent
    if first < 0 or last > n_sent:
        raise ValueError("sentence range [%d, %d) outside [0, %d)" % (first, last, n_sent))
    if last <= first:
        return 0
    max_len = _max_length(sent_offsets, first, last)
    with nogil:
        status = workspace_alloc(&ws, max_len, K)
        if status == 0:
            exp_transitions(&trans[0, 0], K, Kp, ws.T, ws.Tt, &trans_shift)
            for s in range(first, last):
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                emission_scores(w_ptr, &attr_ptr[0], al_ptr, K, Kp, ind_ptr, data_ptr, &indptr[0],
                                row0, n, &start[0], &stop[0], ws.E)
                status = forward_backward(&ws, n, K, trans_shift, &lz)
                if status != 0:
                    break
                log_z[s] = lz
                for t in range(n):
                    for k in range(K):
                        node[row0 + t, k] = ws.alpha[t * Kp + k] * ws.beta[t * Kp + k]
                if want_edge and n > 0:
                    for k in range(K):
                        for i in range(K):
                            edge[row0, i, k] = 0.0
                    for t in range(1, n):
                        eb = ws.U + t * Kp              # e_t * beta_t / c_t
                        for i in range(K):
                            a = ws.alpha[(t - 1) * Kp + i]
                            for k in range(K):
                                edge[row0 + t, i, k] = a * ws.T[i * Kp + k] * eb[k]
        else:
            status = 2
        workspace_free(&ws)
    if status == 2:
        raise MemoryError("marginals: cannot allocate the workspace")
    return status


def viterbi(const double[::1] w, const int[::1] attr_ptr, const int[::1] attr_label,
            const double[:, ::1] trans, const double[::1] start, const double[::1] stop,
            const int[::1] indices, const double[::1] data, const int[::1] indptr,
            const long long[::1] sent_offsets, int[::1] out, double[::1] scores, *,
            Py_ssize_t first=0, Py_ssize_t last=-1):
    """Best label sequence of sentences first..last-1 into out (one code per
    token) and its score into scores[s].  Ties go to the smallest label index."""
    cdef Py_ssize_t K = trans.shape[0], n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t Kp = lc_crf_pad(K)
    cdef Py_ssize_t s, row0, n, max_len, n_tokens
    cdef Workspace ws
    cdef int status = 0
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const double* w_ptr = &w[0] if w.shape[0] > 0 else NULL
    cdef const int* al_ptr = &attr_label[0] if attr_label.shape[0] > 0 else NULL
    n_tokens = _check_common(w.shape[0], K, attr_ptr, attr_label, trans, start, stop,
                             indices, data, indptr, sent_offsets)
    if out.shape[0] != n_tokens or scores.shape[0] != n_sent:
        raise ValueError("out needs one entry per token and scores one per sentence")
    if last < 0:
        last = n_sent
    if first < 0 or last > n_sent:
        raise ValueError("sentence range [%d, %d) outside [0, %d)" % (first, last, n_sent))
    if last <= first:
        return
    max_len = _max_length(sent_offsets, first, last)
    with nogil:
        status = workspace_alloc(&ws, max_len, K)
        if status == 0:
            for s in range(first, last):
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                if n == 0:
                    scores[s] = 0.0
                    continue
                emission_scores(w_ptr, &attr_ptr[0], al_ptr, K, Kp, ind_ptr, data_ptr,
                                &indptr[0], row0, n, &start[0], &stop[0], ws.E)
                scores[s] = viterbi_path(&ws, n, K, &trans[0, 0], &out[row0])
        workspace_free(&ws)
    if status != 0:
        raise MemoryError("viterbi: cannot allocate the workspace")


def sgd_epoch(double[::1] w, const int[::1] attr_ptr, const int[::1] attr_label,
              double[:, ::1] trans, const double[:, ::1] trans_mask,
              const int[::1] indices, const double[::1] data, const int[::1] indptr,
              const long long[::1] sent_offsets, const int[::1] gold,
              const long long[::1] order, double lam, double t0, double t, double scale):
    """One epoch of stochastic gradient descent on the L2-regularised negative
    log-likelihood, visiting the sentences ``order`` (CRFsuite's ``l2sgd``,
    after Shalev-Shwartz et al. 2007 and Bottou 2010).

    The weights are ``scale * w`` and ``scale * trans`` (the scale makes the
    L2 decay O(1) per step; updates touch only the active features).  Step
    ``k`` uses ``eta = 1 / (lam * (t0 + t + k))`` on the per-sentence loss
    ``nll_i + lam / 2 * ||theta||^2`` (``lam = 2 * c2 / N``).  Transition
    entries with ``trans_mask == 0`` stay zero.  ``t0 > 1`` keeps every decay
    factor ``1 - eta * lam`` positive.

    Returns (sum of the sentences' nll at their visit, t, scale, status);
    status 1: a forward-backward under/overflowed (the step was too large).
    """
    cdef Py_ssize_t K = trans.shape[0], n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t j, s, i, row0, n, max_len, n_tokens, n_state = w.shape[0]
    cdef Py_ssize_t n_order = order.shape[0]
    cdef Workspace ws
    cdef int status = 0
    cdef double nll = 0.0, trans_shift = 0.0, eta, decay, new_scale, step
    cdef double* actual = NULL
    cdef double* grad_trans = NULL
    cdef double* zeros = NULL
    cdef double* scratch = NULL
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef double* w_ptr = &w[0] if w.shape[0] > 0 else NULL
    cdef const int* al_ptr = &attr_label[0] if attr_label.shape[0] > 0 else NULL
    cdef const int* gold_ptr = &gold[0] if gold.shape[0] > 0 else NULL
    cdef double* tr = &trans[0, 0]
    cdef const double* mask = &trans_mask[0, 0]
    zeros_k = np.zeros(K)
    n_tokens = _check_common(n_state, K, attr_ptr, attr_label, trans, zeros_k, zeros_k,
                             indices, data, indptr, sent_offsets)
    if trans_mask.shape[0] != K or trans_mask.shape[1] != K:
        raise ValueError("trans_mask must be (K, K)")
    if gold.shape[0] != n_tokens:
        raise ValueError("gold needs one label per token")
    for j in range(n_order):
        if order[j] < 0 or order[j] >= n_sent:
            raise ValueError("order holds a sentence index outside [0, %d)" % n_sent)
    if not (lam > 0.0 and t0 > 1.0 and t >= 0.0 and scale > 0.0):
        raise ValueError("need lam > 0, t0 > 1, t >= 0 and scale > 0")
    if n_order == 0 or n_tokens == 0:
        return 0.0, t, scale, 0
    max_len = _max_length(sent_offsets, 0, n_sent)
    with nogil:
        status = workspace_alloc(&ws, max_len, K)
        actual = <double*>malloc(K * K * sizeof(double))
        grad_trans = <double*>malloc(K * K * sizeof(double))
        zeros = <double*>malloc(K * sizeof(double))
        scratch = <double*>malloc(K * sizeof(double))
        if actual == NULL or grad_trans == NULL or zeros == NULL or scratch == NULL:
            status = 2
        if status == 0:
            for i in range(K):
                zeros[i] = 0.0
            for j in range(n_order):
                s = order[j]
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                eta = 1.0 / (lam * (t0 + t))
                decay = 1.0 - eta * lam
                new_scale = scale * decay
                for i in range(K * K):
                    actual[i] = scale * tr[i]
                    grad_trans[i] = 0.0
                exp_transitions(actual, K, ws.Kp, ws.T, ws.Tt, &trans_shift)
                status = sentence_gradient(w_ptr, &attr_ptr[0], al_ptr, K, ind_ptr, data_ptr,
                                           &indptr[0], row0, n, actual, zeros, zeros,
                                           trans_shift, gold_ptr + row0, &ws, w_ptr,
                                           grad_trans, scratch, scratch, &nll, scale,
                                           -eta / new_scale)
                if status != 0:
                    break
                finish_edges(&ws, K, grad_trans)
                step = eta / new_scale
                for i in range(K * K):
                    tr[i] -= step * mask[i] * grad_trans[i]
                scale = new_scale
                t += 1.0
                if scale < 1e-9:                      # fold the scale into the weights
                    for i in range(n_state):
                        w_ptr[i] *= scale
                    for i in range(K * K):
                        tr[i] *= scale
                    scale = 1.0
        else:
            status = 2
        workspace_free(&ws)
        free(actual)
        free(grad_trans)
        free(zeros)
        free(scratch)
    if status == 2:
        raise MemoryError("sgd_epoch: cannot allocate the workspace")
    return nll, t, scale, status


# update rules of online_epoch (C constants; the Python names below mirror them)
cdef enum:
    RULE_PERCEPTRON = 0
    RULE_PA = 1
    RULE_PA1 = 2
    RULE_PA2 = 3
    RULE_AROW = 4

ONLINE_PERCEPTRON = RULE_PERCEPTRON
ONLINE_PA = RULE_PA
ONLINE_PA1 = RULE_PA1
ONLINE_PA2 = RULE_PA2
ONLINE_AROW = RULE_AROW


cdef inline Py_ssize_t state_feature(const int* attr_ptr, const int* attr_label, int f,
                                     int label, Py_ssize_t K) noexcept nogil:
    """Id of the state feature (attribute f, label), or -1 when the model has none
    (the labels of an attribute are sorted: a dense row, else binary search)."""
    cdef Py_ssize_t lo = attr_ptr[f], hi = attr_ptr[f + 1], mid
    if hi - lo == K:
        return lo + label
    while lo < hi:
        mid = (lo + hi) // 2
        if attr_label[mid] < label:
            lo = mid + 1
        else:
            hi = mid
    if lo < attr_ptr[f + 1] and attr_label[lo] == label:
        return lo
    return -1


cdef inline void delta_add(double* delta, char* used, Py_ssize_t* active, Py_ssize_t* n_active,
                           Py_ssize_t q, double v) noexcept nogil:
    """delta[q] += v, recording q once in the active list."""
    if not used[q]:
        used[q] = 1
        active[n_active[0]] = q
        n_active[0] += 1
    delta[q] += v


def online_epoch(double[::1] w, const int[::1] attr_ptr, const int[::1] attr_label,
                 double[:, ::1] trans, const double[:, ::1] trans_mask,
                 const int[::1] indices, const double[::1] data, const int[::1] indptr,
                 const long long[::1] sent_offsets, const int[::1] gold,
                 const long long[::1] order, double[::1] w_aux, double[:, ::1] trans_aux, *,
                 int rule, double c=1.0, bint error_sensitive=True, double gamma=1.0,
                 double counter=1.0):
    """One epoch of an online learner over the CRF's features, visiting the
    sentences ``order`` (CRFsuite's ``ap``, ``pa`` and ``arow`` trainers).

    Each sentence is decoded with the current weights (``viterbi_path``); when
    the best path differs from the gold one in ``d > 0`` labels, the weights
    move along ``delta = phi(x, gold) - phi(x, best)`` (only the features the
    model has: state features of the table, transitions with
    ``trans_mask != 0``):

    * ``ONLINE_PERCEPTRON`` (Collins 2002): ``w += delta``; loss ``d / n``.
    * ``ONLINE_PA``, ``ONLINE_PA1``, ``ONLINE_PA2`` (Crammer et al. 2006):
      ``w += tau * delta`` with ``cost = score(best) - score(gold) + sqrt(d)``
      (``+ 1`` when not ``error_sensitive``) and ``tau = cost / ||delta||^2``,
      ``min(c, cost / ||delta||^2)`` or ``cost / (||delta||^2 + 1 / (2 c))``.

      For these, ``w_aux``/``trans_aux`` accumulate ``counter * step`` (the
      lazy-averaging sums: the average of the weights after each sentence is
      ``w - w_aux / counter`` at the end); ``counter`` grows by one per sentence.
    * ``ONLINE_AROW`` (Crammer, Kulesza, Dredze 2009, diagonal covariance):
      ``cost = score(best) - score(gold) + d``, ``alpha = cost / (gamma +
      sum delta^2 var)``, ``w += alpha var delta``, ``var = 1 / (1 / var +
      delta^2 / gamma)``; ``w_aux``/``trans_aux`` hold ``var``.

    Returns (sum of the costs, counter, number of updates, status); status 2:
    out of memory.  The caller validates every array (no bounds checks here).
    """
    cdef Py_ssize_t K = trans.shape[0], n_sent = sent_offsets.shape[0] - 1
    cdef Py_ssize_t Kp = lc_crf_pad(K)
    cdef Py_ssize_t j, s, t, p, q, i, row0, n, max_len, max_nnz, n_tokens
    cdef Py_ssize_t n_state = w.shape[0], n_order = order.shape[0], n_active = 0
    cdef Py_ssize_t n_attributes = attr_ptr.shape[0] - 1
    cdef Py_ssize_t n_updates = 0
    cdef Workspace ws
    cdef int status = 0, d, yg, yv, f
    cdef double loss = 0.0, sv, sc, v, cost, norm2, tau, step, frac
    cdef double* delta = NULL
    cdef double* dtrans = NULL
    cdef char* used = NULL
    cdef Py_ssize_t* active = NULL
    cdef int* best = NULL
    cdef double* zeros = NULL
    cdef const int* ind_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef double* w_ptr = &w[0] if n_state > 0 else NULL
    cdef double* aux_ptr = &w_aux[0] if n_state > 0 else NULL
    cdef const int* al_ptr = &attr_label[0] if attr_label.shape[0] > 0 else NULL
    cdef const int* gold_ptr = &gold[0] if gold.shape[0] > 0 else NULL
    cdef double* tr = &trans[0, 0]
    cdef double* tr_aux = &trans_aux[0, 0]
    cdef const double* mask = &trans_mask[0, 0]
    zeros_k = np.zeros(K)
    n_tokens = _check_common(n_state, K, attr_ptr, attr_label, trans, zeros_k, zeros_k,
                             indices, data, indptr, sent_offsets)
    if trans_mask.shape[0] != K or trans_mask.shape[1] != K or trans_aux.shape[0] != K \
            or trans_aux.shape[1] != K or w_aux.shape[0] != n_state:
        raise ValueError("trans_mask and trans_aux must be (K, K) and w_aux like w")
    if gold.shape[0] != n_tokens:
        raise ValueError("gold needs one label per token")
    for j in range(n_order):
        if order[j] < 0 or order[j] >= n_sent:
            raise ValueError("order holds a sentence index outside [0, %d)" % n_sent)
    if rule < RULE_PERCEPTRON or rule > RULE_AROW:
        raise ValueError("unknown update rule %d" % rule)
    if not (c > 0.0 and gamma > 0.0 and counter >= 1.0):
        raise ValueError("need c > 0, gamma > 0 and counter >= 1")
    if n_order == 0 or n_tokens == 0:
        return 0.0, counter, 0, 0
    max_len = _max_length(sent_offsets, 0, n_sent)
    max_nnz = 0
    for s in range(n_sent):
        q = indptr[sent_offsets[s + 1]] - indptr[sent_offsets[s]]
        if q > max_nnz:
            max_nnz = q
    with nogil:
        status = workspace_alloc(&ws, max_len, K)
        delta = <double*>calloc(n_state + 1, sizeof(double))
        used = <char*>calloc(n_state + 1, sizeof(char))
        active = <Py_ssize_t*>malloc((2 * max_nnz + 1) * sizeof(Py_ssize_t))
        dtrans = <double*>calloc(K * K, sizeof(double))
        best = <int*>malloc((max_len + 1) * sizeof(int))
        zeros = <double*>calloc(K, sizeof(double))
        if delta == NULL or used == NULL or active == NULL or dtrans == NULL or best == NULL \
                or zeros == NULL:
            status = 2
        if status == 0:
            for j in range(n_order):
                s = order[j]
                row0 = sent_offsets[s]
                n = sent_offsets[s + 1] - row0
                if n == 0:
                    counter += 1.0
                    continue
                emission_scores(w_ptr, &attr_ptr[0], al_ptr, K, Kp, ind_ptr, data_ptr,
                                &indptr[0], row0, n, zeros, zeros, ws.E)
                sv = viterbi_path(&ws, n, K, tr, best)
                d = 0
                for t in range(n):
                    if best[t] != gold_ptr[row0 + t]:
                        d += 1
                if d == 0:
                    counter += 1.0
                    continue
                sc = path_score(ws.E, Kp, K, tr, gold_ptr + row0, n)
                # delta = phi(x, gold) - phi(x, best), over the model's features
                n_active = 0
                for t in range(n):
                    yg = gold_ptr[row0 + t]
                    yv = best[t]
                    debug_check_index(yg, K, "online_epoch: gold label")
                    if yg != yv:
                        for p in range(indptr[row0 + t], indptr[row0 + t + 1]):
                            f = indices[p]
                            v = data[p]
                            debug_check_index(f, n_attributes, "online_epoch: attribute id")
                            q = state_feature(&attr_ptr[0], al_ptr, f, yg, K)
                            if q >= 0:
                                debug_check_index(q, n_state, "online_epoch: state feature")
                                delta_add(delta, used, active, &n_active, q, v)
                            q = state_feature(&attr_ptr[0], al_ptr, f, yv, K)
                            if q >= 0:
                                debug_check_index(q, n_state, "online_epoch: state feature")
                                delta_add(delta, used, active, &n_active, q, -v)
                            debug_check_index(n_active, 2 * max_nnz + 1,
                                              "online_epoch: active list")
                    if t > 0:
                        q = gold_ptr[row0 + t - 1] * K + yg
                        i = best[t - 1] * K + yv
                        if q != i:
                            dtrans[q] += mask[q]
                            dtrans[i] -= mask[i]
                norm2 = 0.0
                if rule == RULE_AROW:
                    frac = gamma
                    for i in range(n_active):
                        q = active[i]
                        frac += delta[q] * delta[q] * aux_ptr[q]
                    for i in range(K * K):
                        frac += dtrans[i] * dtrans[i] * tr_aux[i]
                    cost = sv - sc + d
                    tau = cost / frac
                    for i in range(n_active):
                        q = active[i]
                        w_ptr[q] += tau * aux_ptr[q] * delta[q]
                        aux_ptr[q] = 1.0 / (1.0 / aux_ptr[q] + delta[q] * delta[q] / gamma)
                    for i in range(K * K):
                        if dtrans[i] != 0.0:
                            tr[i] += tau * tr_aux[i] * dtrans[i]
                            tr_aux[i] = 1.0 / (1.0 / tr_aux[i] + dtrans[i] * dtrans[i] / gamma)
                else:
                    if rule == RULE_PERCEPTRON:
                        cost = d / <double>n
                        tau = 1.0
                    else:
                        for i in range(n_active):
                            norm2 += delta[active[i]] * delta[active[i]]
                        for i in range(K * K):
                            norm2 += dtrans[i] * dtrans[i]
                        cost = sv - sc + (sqrt(<double>d) if error_sensitive else 1.0)
                        if norm2 > 0.0:
                            if rule == RULE_PA:
                                tau = cost / norm2
                            elif rule == RULE_PA1:
                                tau = min(c, cost / norm2)
                            else:
                                tau = cost / (norm2 + 0.5 / c)
                        else:
                            tau = 0.0                  # no feature tells the paths apart
                    step = tau * counter
                    for i in range(n_active):
                        q = active[i]
                        w_ptr[q] += tau * delta[q]      # w += tau * delta
                        aux_ptr[q] += step * delta[q]   # sums for the average
                    for i in range(K * K):
                        if dtrans[i] != 0.0:
                            tr[i] += tau * dtrans[i]
                            tr_aux[i] += step * dtrans[i]
                for i in range(n_active):
                    q = active[i]
                    delta[q] = 0.0
                    used[q] = 0
                for i in range(K * K):
                    dtrans[i] = 0.0
                loss += cost
                n_updates += 1
                counter += 1.0
        workspace_free(&ws)
        free(delta)
        free(used)
        free(active)
        free(dtrans)
        free(best)
        free(zeros)
    if status != 0:
        raise MemoryError("online_epoch: cannot allocate the workspace")
    return loss, counter, n_updates, 0
