"""Linear-chain sequence labelling as a Structure (for the generic learners).

``x`` is a sentence given as its token-feature rows (see :meth:`split`), ``y``
an int array of label codes.  The weight vector is laid out as

    [ W (n_features x K, row-major) | trans (K x K) | start (K) | stop (K) | trans2 (K**3) ]

``decode`` and ``loss_augmented_decode`` run the Cython Viterbi kernel on
views of that vector (no copy); the loss is the Hamming loss by default (or a
weighted Hamming loss with a label-cost matrix, or the 0/1 loss), with exact
slack-rescaled decoding for the Hamming and 0/1 losses.  The fused
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
    """Linear-chain CRF-style structure with a Hamming, weighted Hamming or 0/1 loss.

    Parameters
    ----------
    n_token_features : int
        Number of token attributes (columns of the token-feature matrix).
    n_labels : int
    order : {1, 2}
    loss_weight : float
        Scale of the loss (``loss_weight * loss``).
    loss : {"hamming", "zero_one"}, default="hamming"
        ``"hamming"``: the number of mislabelled tokens, or with
        ``label_cost`` the sum of ``label_cost[y_t, y'_t]`` (weighted
        Hamming).  ``"zero_one"``: 1 when the sequences differ anywhere;
        loss-augmented decoding then needs the best path other than the
        gold one, found exactly from the max-product forward and backward
        messages (the second-best path differs from the best at some token).
    label_cost : array (K, K) or None
        Cost of predicting label ``j`` for a token of label ``i``
        (non-negative, zero diagonal); only with ``loss="hamming"``.
        Loss-augmented Viterbi adds ``label_cost[gold_t]`` to token ``t``'s
        label scores (as ``K`` extra "gold label" attributes whose weights are
        the cost rows).

    Slack rescaling (``StructuredSVM(rescaling="slack")``) is exact for the
    Hamming loss -- by dynamic programming over (token, label, number of
    mistakes): the best path at each Hamming distance ``d``, then the
    ``d`` that maximises ``d (1 + s_d - s_gold)`` (Bauer, Görnitz, Braun,
    Müller 2014) -- and for the 0/1 loss (the best non-gold path); both for
    ``order=1``.  With ``label_cost`` or ``order=2`` it is refused when the
    learner is configured.
    """

    def __init__(self, n_token_features, n_labels, order=1, loss_weight=1.0, loss="hamming",
                 label_cost=None):
        if n_labels < 1 or n_token_features < 1:
            raise ValueError("need at least one label and one token feature")
        if order not in (1, 2):
            raise ValueError("order must be 1 or 2")
        if loss not in ("hamming", "zero_one"):
            raise ValueError("loss must be 'hamming' or 'zero_one', got %r" % (loss,))
        if not (np.isfinite(loss_weight) and loss_weight > 0):
            raise ValueError("loss_weight must be a finite number > 0, got %r" % (loss_weight,))
        if loss == "zero_one" and order != 1:
            raise ValueError("loss='zero_one' needs order=1 (its loss-augmented decoding "
                             "uses first-order max-marginals)")
        if label_cost is not None:
            if loss != "hamming":
                raise ValueError("label_cost weights the Hamming loss: use loss='hamming'")
            label_cost = np.array(label_cost, dtype=np.float64)
            if label_cost.shape != (n_labels, n_labels):
                raise ValueError("label_cost must be (n_labels, n_labels) = (%d, %d), got %r"
                                 % (n_labels, n_labels, label_cost.shape))
            if not np.all(np.isfinite(label_cost)) or label_cost.min() < 0:
                raise ValueError("label_cost must be finite and non-negative")
            if np.any(np.diag(label_cost) != 0):
                raise ValueError("label_cost must have a zero diagonal (a correct label "
                                 "costs nothing)")
        self.n_token_features = int(n_token_features)
        self.n_labels = int(n_labels)
        self.order = order
        self.loss_weight = float(loss_weight)
        self.loss_kind = loss
        self.label_cost = label_cost
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
        if len(y) and y.dtype.kind not in "iu":
            raise ValueError("a label sequence must hold integer label codes in [0, %d), "
                             "got dtype %s (encode string labels first)"
                             % (self.n_labels, y.dtype))
        if len(y) and (y.min() < 0 or y.max() >= self.n_labels):
            raise ValueError("label codes must lie in [0, %d)" % self.n_labels)

    # -- protocol --------------------------------------------------------
    def joint_feature(self, x, y):
        K = self.n_labels
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
        if self.loss_kind == "zero_one":
            return self._zero_one_augmented(w, x, y, slack=False)
        if self.label_cost is not None:
            return self._cost_viterbi(w, x, y)
        return self._viterbi(w, x, gold=y)

    def loss(self, y, y_hat):
        y, y_hat = np.asarray(y, dtype=np.int64), np.asarray(y_hat, dtype=np.int64)
        if self.loss_kind == "zero_one":
            return self.loss_weight * float(not np.array_equal(y, y_hat))
        if self.label_cost is not None:
            return self.loss_weight * float(self.label_cost[y, y_hat].sum())
        return self.loss_weight * float(np.sum(y != y_hat))

    def supports_slack_rescaling(self):
        return self.order == 1 and self.label_cost is None

    def slack_rescaled_decode(self, w, x, y):
        """``argmax_y' loss(y, y') (1 + s(y') - s(y))``, exactly (order 1, Hamming or 0/1)."""
        if not self.supports_slack_rescaling():
            raise ValueError("slack rescaling needs order=1 and no label_cost")
        if self.loss_kind == "zero_one":
            return self._zero_one_augmented(w, x, y, slack=True)
        return self._hamming_slack(w, x, y)

    # -- exact decoders on dense scores (order 1) --------------------------
    def _dense_scores(self, w, x, gold):
        """(E (n, K) with start/stop added, trans (K, K)) for one sentence."""
        W, trans, _, start, stop = self.unpack(np.asarray(w, dtype=np.float64))
        g = np.ascontiguousarray(gold, dtype=np.int64)
        if len(g) != len(x):
            raise ValueError("%d labels for a sentence of %d tokens" % (len(g), len(x)))
        self._check_rows(x, g)
        n = len(x)
        E = np.zeros((n, self.n_labels))
        rows = np.repeat(np.arange(n), np.diff(x.indptr))
        np.add.at(E, rows, np.asarray(x.data, np.float64)[:, None] * W[x.indices])
        if n:
            E[0] += start
            E[n - 1] += stop
        return E, trans, g

    @staticmethod
    def _path_score(E, trans, y):
        n = len(y)
        return float(E[np.arange(n), y].sum() + trans[y[:n - 1], y[1:]].sum()) if n else 0.0

    def _zero_one_augmented(self, w, x, y, slack):
        """The best path if it is not the gold one, else the best non-gold path (from
        the max-marginals: best path through (t, k) = alpha_t[k] + beta_t[k]),
        returned when it beats the gold path under the (margin or slack) objective."""
        E, trans, g = self._dense_scores(w, x, y)
        n, K = E.shape
        if n == 0:
            return g.astype(np.int32)
        alpha = np.empty((n, K))
        back = np.zeros((n, K), dtype=np.int64)
        alpha[0] = E[0]
        for t in range(1, n):
            cand = alpha[t - 1][:, None] + trans
            back[t] = np.argmax(cand, axis=0)
            alpha[t] = E[t] + cand[back[t], np.arange(K)]
        beta = np.zeros((n, K))
        fwd = np.zeros((n, K), dtype=np.int64)
        for t in range(n - 2, -1, -1):
            cand = trans + (E[t + 1] + beta[t + 1])[None, :]
            fwd[t] = np.argmax(cand, axis=1)
            beta[t] = cand[np.arange(K), fwd[t]]
        through = alpha + beta
        best = through.copy()
        best[np.arange(n), g] = -np.inf            # paths leaving the gold label somewhere
        if K == 1:
            return g.astype(np.int32)
        t_star, k_star = np.unravel_index(int(np.argmax(best)), best.shape)
        path = np.empty(n, dtype=np.int64)
        path[t_star] = k_star
        for t in range(t_star, 0, -1):
            path[t - 1] = back[t][path[t]]
        for t in range(t_star, n - 1):
            path[t + 1] = fwd[t][path[t]]
        s_gold = self._path_score(E, trans, g)
        s_path = float(best[t_star, k_star])
        if slack:
            better = 1.0 + s_path - s_gold > 0.0
        else:
            better = s_path + self.loss_weight > s_gold
        return (path if better else g).astype(np.int32)

    def _hamming_slack(self, w, x, y):
        """Dynamic programme over (token, Hamming distance, label): the best prefix score
        for every number of mistakes; then the distance d maximising
        d * (1 + s_d - s_gold) (Bauer et al. 2014)."""
        E, trans, g = self._dense_scores(w, x, y)
        n, K = E.shape
        if n == 0:
            return g.astype(np.int32)
        D = n + 1
        miss = np.ones((n, K))
        miss[np.arange(n), g] = 0.0
        neg = -np.inf
        best = np.full((D, K), neg)
        best[miss[0].astype(np.int64), np.arange(K)] = E[0]
        back = np.zeros((n, D, K), dtype=np.int64)
        for t in range(1, n):
            cand = best[:, :, None] + trans[None, :, :]          # (d, prev, k)
            arg = np.argmax(cand, axis=1)                          # (d, k)
            val = np.take_along_axis(cand, arg[:, None, :], axis=1)[:, 0, :] + E[t]
            new = np.full((D, K), neg)
            # correct label at t: distance unchanged; wrong label: distance + 1
            correct = g[t]
            new[:, correct] = val[:, correct]
            back[t][:, correct] = arg[:, correct]
            wrong = np.arange(K) != correct
            new[1:, wrong] = val[:D - 1, wrong]
            back[t][1:, wrong] = arg[:D - 1, wrong]
            best = new
        s_gold = self._path_score(E, trans, g)
        ends = best.max(axis=1)                                   # s_d
        d = np.arange(D, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            value = np.where(np.isfinite(ends), d * (1.0 + ends - s_gold), neg)
        value[0] = 0.0
        d_star = int(np.argmax(value))
        if d_star == 0 or value[d_star] <= 0.0:
            return g.astype(np.int32)
        path = np.empty(n, dtype=np.int64)
        path[n - 1] = int(np.argmax(best[d_star]))
        dist = d_star
        for t in range(n - 1, 0, -1):
            k = path[t]
            prev = back[t][dist, k]
            if k != g[t]:
                dist -= 1
            path[t - 1] = prev
        return path.astype(np.int32)

    def _cost_viterbi(self, w, x, y):
        """Loss-augmented Viterbi for the weighted Hamming loss of one sentence."""
        batch = SentenceBatch(x.indices, x.data, x.indptr, x.offsets)
        return self._batch_cost_viterbi(w, batch, [y])[0]

    def _batch_cost_viterbi(self, w, X, Y):
        """Viterbi on the token features plus one "gold label" attribute per token whose
        weight row is ``loss_weight * label_cost[gold]``: the cost-augmented argmax."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        W, trans, trans2, start, stop = self.unpack(w)
        gold = X.concat(Y)
        n_tok = int(X.offsets[len(X.offsets) - 1])
        if len(gold) != n_tok:
            raise ValueError("%d labels for %d tokens" % (len(gold), n_tok))
        self._check_rows(X, gold)
        F = self.n_token_features
        W_aug = np.vstack([W, self.loss_weight * self.label_cost])
        ends = X.indptr[1:]
        indices = np.insert(X.indices, ends, (F + gold).astype(np.int32)).astype(np.int32)
        data = np.insert(X.data, ends, 1.0)
        indptr = (X.indptr + np.arange(n_tok + 1)).astype(np.int32)
        out = np.zeros(n_tok, dtype=np.int32)
        scores = np.zeros(len(X))
        _sequence.viterbi_batch(W_aug, trans, trans2, start, stop, indices, data, indptr,
                                X.offsets, out, scores, order=self.order)
        return X.split(out)

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
        if self.loss_kind == "zero_one":
            return [self._zero_one_augmented(w, X[i], Y[i], slack=False)
                    for i in range(len(X))]
        if self.label_cost is not None:
            return self._batch_cost_viterbi(w, X, Y)
        return self._batch_viterbi(w, X, Y)

    def batch_loss(self, Y, Y_hat):
        if self.loss_kind == "zero_one" or self.label_cost is not None:
            return np.array([self.loss(y, yh) for y, yh in zip(Y, Y_hat)], dtype=np.float64)
        out = np.empty(len(Y))
        for i, (y, yh) in enumerate(zip(Y, Y_hat)):
            out[i] = np.count_nonzero(np.asarray(y) != np.asarray(yh))
        return self.loss_weight * out

    def bcfw_state(self, X, Y, C, average):
        """Fused block-coordinate Frank--Wolfe state (first order only, else None).

        Each pass of :class:`~linclass.structured.StructuredSVM` with
        ``method="bcfw"`` runs in :func:`linclass._core._bcfw.chain_pass`
        (:class:`linclass.structured.chain.ChainBCFW`): the
        Hamming-loss-augmented Viterbi, the exact line search and the update of
        a sentence happen in one kernel call per pass.
        """
        if self.order != 1 or self.loss_kind != "hamming" or self.label_cost is not None:
            return None            # the fused pass knows the plain Hamming loss only
        from ..structured.chain import ChainBCFW
        state = ChainBCFW(self, X, Y, C, average)       # checks the label count
        self._check_rows(X, state.gold)
        return state

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
