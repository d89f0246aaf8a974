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
           "sentence_chunks"]


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


def nll_and_gradient(table, batch, w, trans, start, stop, chunks):
    """(nll, grad_w, grad_trans, grad_start, grad_stop) summed over all sentences.

    ``chunks``: sentence ranges, one thread each; per-thread gradients are
    summed in chunk order, so the result does not depend on thread timing.
    Raises FloatingPointError when a forward-backward overflows.
    """
    args = _model_args(table, w, trans, start, stop)
    K = table.n_labels

    def work(ab):
        g = (np.zeros(len(args[0])), np.zeros((K, K)), np.zeros(K), np.zeros(K))
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
