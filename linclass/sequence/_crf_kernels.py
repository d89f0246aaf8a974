"""Shared plumbing of the probabilistic sequence models (CRF, HMM): the sparse
state-feature table, the checked calls into :mod:`linclass._core._crf`, and the
threaded, deterministic gradient over sentences.

A model is ``(w, attr_ptr, attr_label, trans, start, stop)``: attribute ``f``
owns the state features ``attr_ptr[f]:attr_ptr[f+1]``, feature ``p`` scoring
label ``attr_label[p]`` with weight ``w[p]`` (see the kernel's docstring).
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._core import _crf

__all__ = ["StateTable", "check_tokens", "nll_and_gradient", "node_marginals", "viterbi",
           "sentence_chunks", "dense_score_marginals", "sgd_epoch", "sub_batch",
           "online_epoch", "ONLINE_RULES"]


class StateTable:
    """The (attribute, label) pairs that carry a weight, grouped by attribute.

    Parameters
    ----------
    attr_ptr : int32 (n_attributes + 1,)
    attr_label : int32 (n_state_features,)
    """

    def __init__(self, attr_ptr, attr_label, n_labels):
        self.attr_ptr = np.ascontiguousarray(attr_ptr, dtype=np.int32)
        self.attr_label = np.ascontiguousarray(attr_label, dtype=np.int32)
        self.n_labels = int(n_labels)
        self.check()

    @classmethod
    def dense(cls, n_attributes, n_labels):
        """Every attribute with every label (the F x K matrix, row-major)."""
        ptr = np.arange(n_attributes + 1, dtype=np.int64) * n_labels
        if ptr[-1] > np.iinfo(np.int32).max:
            raise ValueError("%d attributes x %d labels is too many state features"
                             % (n_attributes, n_labels))
        return cls(ptr, np.tile(np.arange(n_labels, dtype=np.int32), n_attributes), n_labels)

    @classmethod
    def observed(cls, Xf, gold, n_labels, min_freq=0, extra_keys=None):
        """The pairs (attribute, label of its token) seen in training at least
        ``min_freq`` times (CRFsuite's state features); ``extra_keys``
        (``attribute * K + label``) are added when ``min_freq`` is 0."""
        K = int(n_labels)
        F = Xf.shape[1]
        labels = np.repeat(np.asarray(gold, np.int64), np.diff(Xf.indptr))
        keys = Xf.indices.astype(np.int64) * K + labels
        keys, counts = np.unique(keys, return_counts=True)
        if min_freq > 0:
            keys = keys[counts >= min_freq]
        elif extra_keys is not None and len(extra_keys):
            keys = np.union1d(keys, np.asarray(extra_keys, dtype=np.int64))
        attrs = keys // K
        ptr = np.zeros(F + 1, dtype=np.int64)
        np.cumsum(np.bincount(attrs, minlength=F), out=ptr[1:])
        return cls(ptr, keys % K, K)

    @property
    def n_attributes(self):
        return len(self.attr_ptr) - 1

    @property
    def n_state_features(self):
        return len(self.attr_label)

    def check(self):
        ptr, lab = self.attr_ptr, self.attr_label
        if ptr.ndim != 1 or len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(lab) \
                or np.any(np.diff(ptr) < 0):
            raise ValueError("state table: attr_ptr must rise monotonically from 0 to %d"
                             % len(lab))
        if len(lab) and (lab.min() < 0 or lab.max() >= self.n_labels):
            raise ValueError("state table: labels must lie in [0, %d)" % self.n_labels)
        # labels strictly increasing within each attribute (the kernel reads an
        # attribute with K state features as a dense row of labels 0..K-1)
        same_attr = np.ones(len(lab), dtype=bool)
        same_attr[ptr[:-1][ptr[:-1] < len(lab)]] = False
        if len(lab) > 1 and np.any(np.diff(lab)[same_attr[1:]] <= 0):
            raise ValueError("state table: the labels of each attribute must be distinct "
                             "and sorted")

    def attribute_of(self):
        """Attribute id of each state feature."""
        return np.repeat(np.arange(self.n_attributes, dtype=np.int64), np.diff(self.attr_ptr))


def check_tokens(Xf, offsets, table):
    """Token rows against the table: attribute ids in range, finite values."""
    if Xf.shape[1] != table.n_attributes:
        raise ValueError("token features have %d columns, the model %d attributes"
                         % (Xf.shape[1], table.n_attributes))
    if len(Xf.indices) and (Xf.indices.min() < 0 or Xf.indices.max() >= table.n_attributes):
        raise ValueError("token feature ids must lie in [0, %d)" % table.n_attributes)
    if not np.all(np.isfinite(Xf.data)):
        raise ValueError("token feature values must be finite (found NaN or inf)")
    if offsets[-1] != Xf.shape[0]:
        raise ValueError("%d token rows for %d tokens" % (Xf.shape[0], offsets[-1]))


def _csr(Xf):
    return (np.ascontiguousarray(Xf.indices, dtype=np.int32),
            np.ascontiguousarray(Xf.data, dtype=np.float64),
            np.ascontiguousarray(Xf.indptr, dtype=np.int32))


def sentence_chunks(offsets, n_jobs):
    """Sentence ranges [a, b) of about equal token counts, one per thread."""
    n_sent = len(offsets) - 1
    n_jobs = max(1, min(int(n_jobs), n_sent))
    if n_jobs == 1:
        return [(0, n_sent)]
    targets = np.linspace(0, offsets[-1], n_jobs + 1)[1:-1]
    cuts = np.searchsorted(offsets, targets)
    bounds = np.unique(np.concatenate([[0], cuts, [n_sent]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


class _Batch:
    """A data set in the kernel's contract, checked once."""

    def __init__(self, Xf, offsets, table, gold=None):
        check_tokens(Xf, offsets, table)
        self.indices, self.data, self.indptr = _csr(Xf)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.gold = None if gold is None else np.ascontiguousarray(gold, dtype=np.int32)
        if self.gold is not None:
            if len(self.gold) != self.offsets[-1]:
                raise ValueError("%d labels for %d tokens" % (len(self.gold), self.offsets[-1]))
            if len(self.gold) and (self.gold.min() < 0 or self.gold.max() >= table.n_labels):
                raise ValueError("label codes must lie in [0, %d)" % table.n_labels)
        self.n_tokens = int(self.offsets[-1])
        self.n_sentences = len(self.offsets) - 1


def make_batch(Xf, offsets, table, gold=None):
    return _Batch(Xf, offsets, table, gold)


def _model_args(table, w, trans, start, stop):
    K = table.n_labels
    return (np.ascontiguousarray(w, dtype=np.float64), table.attr_ptr, table.attr_label,
            np.ascontiguousarray(trans, dtype=np.float64).reshape(K, K),
            np.ascontiguousarray(start, dtype=np.float64),
            np.ascontiguousarray(stop, dtype=np.float64))


def nll_and_gradient(table, batch, w, trans, start, stop, chunks, out_w=None):
    """(nll, grad_w, grad_trans, grad_start, grad_stop) summed over all sentences.

    ``chunks``: sentence ranges, one thread each; per-thread gradients are
    summed in chunk order, so the result does not depend on thread timing.
    ``out_w`` (float64, contiguous, one entry per state feature), when given,
    receives grad_w (overwritten) and is returned as it.
    Raises FloatingPointError when a forward-backward overflows.
    """
    args = _model_args(table, w, trans, start, stop)
    K = table.n_labels
    if out_w is not None and (out_w.dtype != np.float64 or out_w.shape != args[0].shape
                              or not out_w.flags.c_contiguous):
        raise ValueError("out_w must be a contiguous float64 array like w")

    def work(ab):
        if out_w is not None and ab == chunks[0]:
            out_w.fill(0.0)
            gw = out_w
        else:
            gw = np.zeros(len(args[0]))
        g = (gw, np.zeros((K, K)), np.zeros(K), np.zeros(K))
        nll, status = _crf.negative_log_likelihood(
            *args, batch.indices, batch.data, batch.indptr, batch.offsets, batch.gold, *g,
            first=ab[0], last=ab[1])
        return nll, status, g

    if len(chunks) == 1:
        results = [work(chunks[0])]
    else:
        with ThreadPoolExecutor(len(chunks)) as pool:
            results = list(pool.map(work, chunks))
    if any(r[1] != 0 for r in results):
        raise FloatingPointError("forward-backward overflowed: the weights are too large "
                                 "(increase c2 or check the feature values)")
    nll = 0.0
    grads = results[0][2]
    for r in results:
        nll += r[0]
    for r in results[1:]:
        for a, b in zip(grads, r[2]):
            a += b
    return (nll,) + grads


def sub_batch(batch, sentence_ids):
    """The sentences ``sentence_ids`` (sorted) of a checked batch, as a batch."""
    off = batch.offsets
    ids = np.asarray(sentence_ids, dtype=np.int64)
    lengths = off[ids + 1] - off[ids]
    rows = np.concatenate([np.arange(off[i], off[i + 1]) for i in ids.tolist()]) \
        if len(ids) else np.zeros(0, dtype=np.int64)
    sub = _Batch.__new__(_Batch)
    starts, ends = batch.indptr[rows], batch.indptr[rows + 1]
    nnz = ends - starts
    sub.indptr = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(nnz, out=sub.indptr[1:])
    take = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), ends.tolist())]) \
        if len(rows) else np.zeros(0, dtype=np.int64)
    take = take.astype(np.int64)
    sub.indices = np.ascontiguousarray(batch.indices[take])
    sub.data = np.ascontiguousarray(batch.data[take])
    sub.offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=sub.offsets[1:])
    sub.gold = None if batch.gold is None else np.ascontiguousarray(batch.gold[rows])
    sub.n_tokens = int(sub.offsets[-1])
    sub.n_sentences = len(ids)
    return sub


def sgd_epoch(table, batch, w, trans, trans_mask, order, lam, t0, t, scale):
    """One SGD epoch in place on ``scale * (w, trans)``: see ``_crf.sgd_epoch``.

    Returns (sum of nll, t, scale, status)."""
    return _crf.sgd_epoch(w, table.attr_ptr, table.attr_label, trans, trans_mask,
                          batch.indices, batch.data, batch.indptr, batch.offsets, batch.gold,
                          np.ascontiguousarray(order, dtype=np.int64), float(lam), float(t0),
                          float(t), float(scale))


def node_marginals(table, batch, w, trans, start, stop, edges=False):
    """(node (n_tokens, K), log_z (n_sentences,), edge (n_tokens, K, K) or None)."""
    K = table.n_labels
    node = np.zeros((batch.n_tokens, K))
    log_z = np.zeros(batch.n_sentences)
    edge = np.zeros((batch.n_tokens, K, K)) if edges else None
    status = _crf.marginals(*_model_args(table, w, trans, start, stop), batch.indices,
                            batch.data, batch.indptr, batch.offsets, node, log_z, edge)
    if status != 0:
        raise FloatingPointError("forward-backward overflowed: the weights are too large")
    return node, log_z, edge


def viterbi(table, batch, w, trans, start, stop, n_jobs=1):
    """(codes (n_tokens,) int32, best scores (n_sentences,))."""
    out = np.zeros(batch.n_tokens, dtype=np.int32)
    scores = np.zeros(batch.n_sentences)
    args = _model_args(table, w, trans, start, stop) + (batch.indices, batch.data,
                                                         batch.indptr, batch.offsets, out,
                                                         scores)
    chunks = sentence_chunks(batch.offsets, n_jobs if batch.n_sentences >= 64 * n_jobs else 1)
    if len(chunks) <= 1:
        _crf.viterbi(*args)
    else:
        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(lambda ab: _crf.viterbi(*args, first=ab[0], last=ab[1]), chunks))
    return out, scores


def dense_score_marginals(E, offsets, trans, start, stop, trans2=None):
    """Node marginals of the Gibbs distribution ``p(y | x) ∝ exp(score(x, y))``
    of a linear chain given its dense per-token label scores.

    Parameters
    ----------
    E : ndarray (n_tokens, K)
        Emission score of each label at each token.
    offsets : int array (n_sentences + 1,)
    trans : (K, K) ``[previous, next]``; start, stop : (K,)
    trans2 : (K**3,) or None
        Second-order transitions ``[y_{t-2}, y_{t-1}, y_t]``, applied from the
        third token on.  A second-order chain runs as a first-order chain over
        the pairs ``(y_{t-1}, y_t)`` with a "before the sentence" value for
        ``y_{t-1}`` (``(K + 1) K`` states: ``O(n K^4)`` per sentence).

    Returns
    -------
    node : ndarray (n_tokens, K), log_z : ndarray (n_sentences,)

    The scores enter the forward-backward kernel of :mod:`linclass._core._crf`
    as one attribute per token (value 1) whose state weights are that token's
    scores, so no feature table of the model itself is needed.
    """
    E = np.ascontiguousarray(E, dtype=np.float64)
    n_tokens, K = E.shape
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if offsets[-1] != n_tokens:
        raise ValueError("%d token rows for %d tokens" % (n_tokens, offsets[-1]))
    if not (np.all(np.isfinite(E)) and np.all(np.isfinite(trans))
            and np.all(np.isfinite(start)) and np.all(np.isfinite(stop))
            and (trans2 is None or np.all(np.isfinite(trans2)))):
        raise ValueError("sequence scores must be finite (found NaN or inf)")
    if n_tokens > np.iinfo(np.int32).max - 1:
        raise ValueError("too many tokens (%d) for one call" % n_tokens)
    one_per_token = (np.arange(n_tokens, dtype=np.int32), np.ones(n_tokens),
                     np.arange(n_tokens + 1, dtype=np.int32))
    if trans2 is None:
        table = StateTable.dense(n_tokens, K)
        node = np.zeros((n_tokens, K))
        log_z = np.zeros(len(offsets) - 1)
        status = _crf.marginals(*_model_args(table, E.ravel(), trans, start, stop),
                                *one_per_token, offsets, node, log_z)
        if status != 0:    # extreme scores: redo in log space (slower, exact)
            node, log_z = _log_space_marginals(E, offsets, trans, start, stop)
        return node, log_z
    # pair states (a, b), a in {0..K-1, BOS=K}, b in {0..K-1}: index a * K + b
    trans = np.asarray(trans, dtype=np.float64).reshape(K, K)
    trans2 = np.asarray(trans2, dtype=np.float64).reshape(K, K, K)
    S = (K + 1) * K
    pair_trans = np.full((K + 1, K, K + 1, K), -np.inf)
    for b in range(K):
        # (a, b) -> (b, c): trans[b, c] + trans2[a, b, c]; from (BOS, b): trans[b, c] only
        pair_trans[:K, b, b, :] = trans[b][None, :] + trans2[:, b, :]
        pair_trans[K, b, b, :] = trans[b]
    starts = offsets[:-1][offsets[:-1] < offsets[1:]]
    is_first = np.zeros(n_tokens, dtype=bool)
    is_first[starts] = True
    E2 = np.empty((n_tokens, K + 1, K))
    E2[:] = E[:, None, :]
    E2[is_first, :K, :] = -np.inf           # the first token's predecessor is BOS
    E2[~is_first, K, :] = -np.inf           # later tokens have a real predecessor
    table = StateTable.dense(n_tokens, S)
    pnode = np.zeros((n_tokens, S))
    log_z = np.zeros(len(offsets) - 1)
    pstart = np.tile(np.asarray(start, dtype=np.float64), K + 1)
    pstop = np.tile(np.asarray(stop, dtype=np.float64), K + 1)
    status = _crf.marginals(*_model_args(table, E2.ravel(), pair_trans.reshape(S, S), pstart,
                                         pstop), *one_per_token, offsets, pnode, log_z)
    if status != 0:
        pnode, log_z = _log_space_marginals(E2.reshape(n_tokens, S), offsets,
                                            pair_trans.reshape(S, S), pstart, pstop)
    return pnode.reshape(n_tokens, K + 1, K).sum(axis=1), log_z


def _log_space_marginals(E, offsets, trans, start, stop):
    """Forward-backward in log space with numpy (one step per token): the
    fallback when the scaled kernel under/overflows (scores with a range far
    beyond ``exp``'s, e.g. a tiny temperature)."""
    from scipy.special import logsumexp
    n_tokens, K = E.shape
    trans = np.asarray(trans, dtype=np.float64).reshape(K, K)
    node = np.zeros((n_tokens, K))
    log_z = np.zeros(len(offsets) - 1)
    with np.errstate(invalid="ignore"):
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            if b == a:
                continue
            scores = E[a:b].copy()
            scores[0] += start
            scores[b - a - 1] += stop
            alpha = np.empty_like(scores)
            beta = np.zeros_like(scores)
            alpha[0] = scores[0]
            for t in range(1, b - a):
                alpha[t] = scores[t] + logsumexp(alpha[t - 1][:, None] + trans, axis=0)
            for t in range(b - a - 2, -1, -1):
                beta[t] = logsumexp(trans + (scores[t + 1] + beta[t + 1])[None, :], axis=1)
            lz = logsumexp(alpha[b - a - 1])
            log_z[s] = lz
            node[a:b] = np.exp(alpha + beta - lz)
    return node, log_z


#: update rules of :func:`online_epoch` (CRFsuite's trainers)
ONLINE_RULES = {"perceptron": _crf.ONLINE_PERCEPTRON, "pa0": _crf.ONLINE_PA,
                "pa1": _crf.ONLINE_PA1, "pa2": _crf.ONLINE_PA2, "arow": _crf.ONLINE_AROW}


def online_epoch(table, batch, w, trans, trans_mask, order, w_aux, trans_aux, *, rule,
                 c=1.0, error_sensitive=True, gamma=1.0, counter=1.0):
    """One epoch of the averaged perceptron, passive-aggressive or AROW in
    place on ``w``, ``trans`` and their auxiliary arrays: see
    ``_crf.online_epoch``.  Returns (sum of the costs, counter, number of updates)."""
    loss, counter, n_updates, _ = _crf.online_epoch(
        w, table.attr_ptr, table.attr_label, trans, trans_mask, batch.indices, batch.data,
        batch.indptr, batch.offsets, batch.gold, np.ascontiguousarray(order, dtype=np.int64),
        w_aux, trans_aux, rule=ONLINE_RULES[rule], c=float(c),
        error_sensitive=bool(error_sensitive), gamma=float(gamma), counter=float(counter))
    return loss, counter, n_updates
