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
from ..structured.base import Structure

__all__ = ["SequenceStructure", "SentenceFeatures", "SentenceBatch"]


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


class SentenceBatch:
    """All sentences of a data set as one token-feature CSR matrix.

    ``batch[i]`` is the :class:`SentenceFeatures` of sentence ``i`` (a view);
    the ``batch_*`` methods of :class:`SequenceStructure` decode and score the
    whole batch with one kernel call.
    """

    def __init__(self, indices, data, indptr, offsets):
        self.indices = np.ascontiguousarray(indices, dtype=np.int32)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int32)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.lengths = np.diff(self.offsets)
        self.nnz_per_token = np.diff(self.indptr)

    @classmethod
    def from_matrix(cls, Xf, offsets):
        return cls(Xf.indices, Xf.data, Xf.indptr, offsets)

    @classmethod
    def from_sentences(cls, sentences):
        lengths = np.array([len(x) for x in sentences], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        nnz = [len(x.indices) for x in sentences]
        starts = np.concatenate([[0], np.cumsum(nnz)])
        indptr = np.concatenate([x.indptr[:-1] + starts[i] for i, x in enumerate(sentences)]
                                + [[starts[-1]]]) if sentences else np.zeros(1)
        return cls(np.concatenate([x.indices for x in sentences]) if sentences else [],
                   np.concatenate([x.data for x in sentences]) if sentences else [],
                   indptr, offsets)

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        p0, p1 = self.indptr[a], self.indptr[b]
        return SentenceFeatures(self.indices[p0:p1], self.data[p0:p1],
                                np.ascontiguousarray(self.indptr[a:b + 1] - p0))

    def concat(self, Y):
        """One int32 label array for label sequences Y (one per sentence)."""
        if len(Y) == 0:
            return np.zeros(0, np.int32)
        return np.ascontiguousarray(np.concatenate([np.asarray(y) for y in Y]), dtype=np.int32)

    def split(self, flat):
        return [flat[self.offsets[s]:self.offsets[s + 1]] for s in range(len(self))]


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
        batch = SentenceBatch.from_matrix(Xf, offsets)
        return [batch[s] for s in range(len(batch))]

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

    def _check_rows(self, x, gold):
        """Feature ids below n_token_features and labels below n_labels: the
        kernel does not check index values."""
        if len(x.indices) and (x.indices.min() < 0
                               or x.indices.max() >= self.n_token_features):
            raise ValueError("token feature ids must lie in [0, %d)" % self.n_token_features)
        if gold is not None and len(gold) and (gold.min() < 0 or gold.max() >= self.n_labels):
            raise ValueError("label codes must lie in [0, %d)" % self.n_labels)

    def _viterbi(self, w, x, gold=None):
        w = np.ascontiguousarray(w, dtype=np.float64)
        W, trans, trans2, start, stop = self.unpack(w)
        out = np.zeros(len(x), dtype=np.int32)
        if len(x) == 0:
            return out
        scores = np.zeros(1)
        g = None if gold is None else np.ascontiguousarray(gold, dtype=np.int32)
        if g is not None and len(g) != len(x):
            raise ValueError("%d labels for a sentence of %d tokens" % (len(g), len(x)))
        self._check_rows(x, g)
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

    # -- fast path: whole data set per call ------------------------------
    def batch_inputs(self, X):
        if isinstance(X, SentenceBatch):
            return X
        return SentenceBatch.from_sentences(list(X))

    def _batch_viterbi(self, w, X, Y=None):
        w = np.ascontiguousarray(w, dtype=np.float64)
        W, trans, trans2, start, stop = self.unpack(w)
        out = np.zeros(int(X.offsets[-1]), dtype=np.int32)
        scores = np.zeros(len(X))
        gold = None if Y is None else X.concat(Y)
        if gold is not None and len(gold) != len(out):
            raise ValueError("%d labels for %d tokens" % (len(gold), len(out)))
        self._check_rows(X, gold)
        _sequence.viterbi_batch(W, trans, trans2, start, stop, X.indices, X.data, X.indptr,
                                X.offsets, out, scores, order=self.order, gold=gold,
                                loss_weight=self.loss_weight)
        return X.split(out)

    def batch_decode(self, w, X):
        return self._batch_viterbi(w, X)

    def batch_loss_augmented_decode(self, w, X, Y):
        return self._batch_viterbi(w, X, Y)

    def batch_loss(self, Y, Y_hat):
        out = np.empty(len(Y))
        for i, (y, yh) in enumerate(zip(Y, Y_hat)):
            out[i] = np.count_nonzero(np.asarray(y) != np.asarray(yh))
        return self.loss_weight * out

    def bcfw_state(self, X, Y, C, average):
        """Fused block-coordinate Frank--Wolfe state (first order only, else None).

        Each pass of :class:`~linclass.structured.StructuredSVM` with
        ``method="bcfw"`` runs in :func:`linclass._core._sequence.bcfw_pass`:
        the Hamming-loss-augmented Viterbi, the exact line search and the
        update of a sentence happen in one kernel call per pass.
        """
        if self.order != 1:
            return None
        return _SequenceBCFW(self, X, Y, C, average)

    def _flat_parts(self, X, Y):
        """Index arrays of Phi(X[i], Y[i]) for all i at once: (emission indices,
        emission values, per-nnz sentence ids, transition indices + sentence ids, ...)."""
        K = self.n_labels
        y = X.concat(Y).astype(np.int64)
        sent_of_token = np.repeat(np.arange(len(X)), X.lengths)
        y_rep = np.repeat(y, X.nnz_per_token)
        parts = [(X.indices.astype(np.int64) * K + y_rep, X.data,
                  np.repeat(sent_of_token, X.nnz_per_token))]
        first = X.offsets[:-1][X.lengths > 0]
        last = X.offsets[1:][X.lengths > 0] - 1
        nonempty = np.flatnonzero(X.lengths > 0)
        parts.append((self._o_start + y[first], np.ones(len(first)), nonempty))
        parts.append((self._o_stop + y[last], np.ones(len(last)), nonempty))
        not_first = np.ones(len(y), dtype=bool)
        not_first[first] = False
        t = np.flatnonzero(not_first)
        parts.append((self._o_trans + y[t - 1] * K + y[t], np.ones(len(t)), sent_of_token[t]))
        if self.order == 2:
            second = np.zeros(len(y), dtype=bool)
            second[first[X.lengths[nonempty] > 1] + 1] = True
            t2 = np.flatnonzero(not_first & ~second)
            parts.append((self._o_trans2 + (y[t2 - 2] * K + y[t2 - 1]) * K + y[t2],
                          np.ones(len(t2)), sent_of_token[t2]))
        return parts

    def batch_score(self, w, X, Y_lists):
        w = np.asarray(w, dtype=np.float64)
        out = np.zeros((len(Y_lists), len(X)))
        for j, Y in enumerate(Y_lists):
            parts = self._flat_parts(X, Y)
            idx = np.concatenate([p[0] for p in parts])
            val = np.concatenate([p[1] for p in parts])
            sent = np.concatenate([p[2] for p in parts])
            out[j] = np.bincount(sent, weights=w[idx] * val, minlength=len(X))
        return out

    def batch_joint_feature(self, X, Y_lists, weights):
        weights = np.asarray(weights, dtype=np.float64).reshape(len(Y_lists), len(X))
        idx_all, val_all = [], []
        for j, Y in enumerate(Y_lists):
            if not weights[j].any():
                continue
            for idx, val, sent in self._flat_parts(X, Y):
                wj = weights[j][sent]
                keep = wj != 0.0
                idx_all.append(idx[keep])
                val_all.append(val[keep] * wj[keep])
        if not idx_all:
            return np.zeros(self.n_features)
        # one dense accumulation for all constraints and parts
        return np.bincount(np.concatenate(idx_all), weights=np.concatenate(val_all),
                           minlength=self.n_features).astype(np.float64)


class _SequenceBCFW:
    """Per-sentence BCFW state in marginal form (see ``_sequence.bcfw_pass``)."""

    def __init__(self, structure, X, Y, C, average):
        gold = X.concat(Y)
        if len(gold) != int(X.offsets[len(X.offsets) - 1]):
            raise ValueError("%d labels for %d tokens" % (len(gold), X.offsets[len(X)]))
        structure._check_rows(X, gold)
        if X.data.size and not np.isfinite(X.data).all():
            raise ValueError("token feature values contain NaN or infinity")
        K = structure.n_labels
        self.structure, self.X, self.gold = structure, X, gold
        self.C = float(C)
        self.average = bool(average)
        self.w = np.zeros(structure.n_features)
        self.v = np.zeros(structure.n_features if average else 0)
        self.scratch = np.zeros(structure.n_token_features * K)
        self.token_state = np.zeros((len(gold), K))
        self.sent_state = np.zeros((len(X), K * K + 2 * K))
        self.l = np.zeros(len(X))
        self.step = 0.0
        self.lv = 0.0

    def run_pass(self, order):
        X = self.X
        gap, self.step, self.lv = _sequence.bcfw_pass(
            self.w, self.v, self.scratch, self.structure.n_labels, X.indices, X.data,
            X.indptr, X.offsets, self.gold, self.token_state, self.sent_state, self.l,
            order, C=self.C, loss_weight=self.structure.loss_weight,
            average=self.average, step=self.step, lv=self.lv)
        return gap

    def iterate(self, average):
        if not average or self.step == 0:
            return self.w, float(self.l.sum())
        R = 0.5 * self.step * (self.step + 1.0)
        return self.w - self.v / R, float(self.l.sum()) - self.lv / R
