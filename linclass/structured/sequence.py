"""Linear-chain sequence labelling as a Structure (for the generic learners).

``x`` is a sentence given as its token-feature rows (see :meth:`split`), ``y``
an int array of label codes.  The weight vector is laid out as

    [ W (n_features x K, row-major) | trans (K x K) | start (K) | stop (K) | trans2 (K**3) ]

``decode`` and ``loss_augmented_decode`` run the Cython Viterbi kernel on
views of that vector (no copy); the loss is the Hamming loss.  The fused
perceptron epoch of :class:`linclass.SequenceTagger` is the fast path of the
same model; the generic :class:`StructuredPerceptron` on this structure gives
the same weights (tested).
"""
import numpy as np

from .._core import _sequence
from .base import Structure

__all__ = ["SequenceStructure", "SentenceFeatures"]


class SentenceFeatures:
    """Token-feature rows of one sentence: CSR arrays with indptr from 0."""

    __slots__ = ("indices", "data", "indptr", "offsets")

    def __init__(self, indices, data, indptr):
        self.indices = indices
        self.data = data
        self.indptr = indptr
        self.offsets = np.array([0, len(indptr) - 1], dtype=np.int64)

    def __len__(self):
        return len(self.indptr) - 1


class SequenceStructure(Structure):
    """Linear-chain CRF-style structure with Hamming loss.

    Parameters
    ----------
    n_token_features : int
        Number of token attributes (columns of the token-feature matrix).
    n_labels : int
    order : {1, 2}
    loss_weight : float
        Scale of the Hamming loss in loss-augmented decoding.
    """

    def __init__(self, n_token_features, n_labels, order=1, loss_weight=1.0):
        if n_labels < 1 or n_token_features < 1:
            raise ValueError("need at least one label and one token feature")
        if order not in (1, 2):
            raise ValueError("order must be 1 or 2")
        self.n_token_features = int(n_token_features)
        self.n_labels = int(n_labels)
        self.order = order
        self.loss_weight = float(loss_weight)
        F, K = self.n_token_features, self.n_labels
        self._o_trans = F * K
        self._o_start = self._o_trans + K * K
        self._o_stop = self._o_start + K
        self._o_trans2 = self._o_stop + K
        self.n_features = self._o_trans2 + (K ** 3 if order == 2 else 0)

    # -- data ------------------------------------------------------------
    @staticmethod
    def split(Xf, offsets):
        """Sentences of a token-feature CSR matrix as :class:`SentenceFeatures`."""
        out = []
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            p0, p1 = Xf.indptr[a], Xf.indptr[b]
            out.append(SentenceFeatures(Xf.indices[p0:p1], Xf.data[p0:p1],
                                        np.ascontiguousarray(Xf.indptr[a:b + 1] - p0)))
        return out

    def unpack(self, w):
        """Views (W, trans, trans2, start, stop) of a weight vector."""
        F, K = self.n_token_features, self.n_labels
        w = np.asarray(w)
        W = w[:self._o_trans].reshape(F, K)
        trans = w[self._o_trans:self._o_start].reshape(K, K)
        start = w[self._o_start:self._o_stop]
        stop = w[self._o_stop:self._o_trans2]
        trans2 = w[self._o_trans2:]
        return W, trans, trans2, start, stop

    def check_output(self, x, y):
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(x):
            raise ValueError("label sequence of length %d for a sentence of %d tokens"
                             % (len(y), len(x)))
        if len(y) and (y.min() < 0 or y.max() >= self.n_labels):
            raise ValueError("label codes must lie in [0, %d)" % self.n_labels)

    # -- protocol --------------------------------------------------------
    def joint_feature(self, x, y):
        F, K = self.n_token_features, self.n_labels
        y = np.asarray(y, dtype=np.int64)
        n = len(y)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        counts = np.diff(x.indptr)
        emit_idx = x.indices.astype(np.int64) * K + np.repeat(y, counts)
        idx = [emit_idx,
               self._o_trans + y[:-1] * K + y[1:],
               [self._o_start + y[0], self._o_stop + y[-1]]]
        vals = [np.asarray(x.data, np.float64), np.ones(n - 1), np.ones(2)]
        if self.order == 2 and n > 2:
            idx.append(self._o_trans2 + (y[:-2] * K + y[1:-1]) * K + y[2:])
            vals.append(np.ones(n - 2))
        return np.concatenate(idx).astype(np.int64), np.concatenate(vals)

    def _viterbi(self, w, x, gold=None):
        w = np.ascontiguousarray(w, dtype=np.float64)
        W, trans, trans2, start, stop = self.unpack(w)
        out = np.zeros(len(x), dtype=np.int32)
        if len(x) == 0:
            return out
        scores = np.zeros(1)
        g = None if gold is None else np.ascontiguousarray(gold, dtype=np.int32)
        _sequence.viterbi_batch(W, trans, trans2, start, stop, x.indices, x.data, x.indptr,
                                x.offsets, out, scores, order=self.order, gold=g,
                                loss_weight=self.loss_weight)
        return out

    def decode(self, w, x):
        return self._viterbi(w, x)

    def loss_augmented_decode(self, w, x, y):
        return self._viterbi(w, x, gold=y)

    def loss(self, y, y_hat):
        return self.loss_weight * float(np.sum(np.asarray(y) != np.asarray(y_hat)))
