"""Generative hidden Markov model tagger (first order), on the CRF's kernels.

    P(x, y) = pi(y_0) * prod_{t>=1} A(y_{t-1}, y_t) * A(y_{T-1}, END) * prod_t B(x_t | y_t)

with every distribution estimated by counting with additive (Lidstone)
smoothing.  The emission vocabulary gets one extra "unknown word" outcome,
so words not seen in training keep the probability
``alpha / (count(y) + alpha * (V + 1))``.

``log P(x, y)`` is a linear chain score: the start, stop and transition
scores are the log-probabilities, and each token carries two features, its
word (weight ``log B(w|y) - log B(unk|y)``) and a bias (weight
``log B(unk|y)``).  Viterbi decoding and the posterior marginals
``P(y_t | x)`` (forward-backward; the log-partition is ``log P(x)``) are the
Cython kernels of :class:`CRF`.

References
----------
Rabiner, L. (1989). A tutorial on hidden Markov models and selected
applications in speech recognition.  Proceedings of the IEEE 77(2).
Brants, T. (2000). TnT -- a statistical part-of-speech tagger.  ANLP.
"""
import numbers

import numpy as np

from ..base import BaseEstimator
from ..exceptions import NotFittedError
from . import _crf_kernels as kernels
from .tagger import _check_sentences, _encode_label_sequences

__all__ = ["HMM"]


class HMM(BaseEstimator):
    """First-order HMM tagger estimated by smoothed counting.

    Parameters
    ----------
    emission_smoothing : float, default=1.0
        Lidstone constant added to every (label, word) count (and the unknown word).
    transition_smoothing : float, default=1.0
        Constant added to start, transition and stop counts.
    lowercase : bool, default=False
        Lower-case words before counting.

    Tokens are word strings or tuples whose first column is the word.

    Attributes
    ----------
    classes_ : list of str
    vocabulary_ : list of str
        Words seen in training (the attributes, after ``"bias"``).
    log_start_ : ndarray (K,)
    log_transitions_ : ndarray (K, K), [previous, next]
    log_stop_ : ndarray (K,)
    log_emissions_ : ndarray (V, K)
        ``log B(word | label)`` for the vocabulary.
    log_unknown_ : ndarray (K,)
        ``log B(unknown word | label)``.
    """

    def __init__(self, emission_smoothing=1.0, transition_smoothing=1.0, lowercase=False):
        self.emission_smoothing = emission_smoothing
        self.transition_smoothing = transition_smoothing
        self.lowercase = lowercase

    def _check_params(self):
        for name in ("emission_smoothing", "transition_smoothing"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0 \
                    or not np.isfinite(v):
                raise ValueError("%s must be a finite number > 0, got %r" % (name, v))

    def _words(self, X, name="X"):
        X = _check_sentences(X, name)
        out = []
        for i, sent in enumerate(X):
            words = []
            for j, tok in enumerate(sent):
                if not isinstance(tok, str):
                    tok = self._word_of(tok, name, i, j)
                words.append(tok.lower() if self.lowercase else tok)
            out.append(words)
        return out

    @staticmethod
    def _word_of(tok, name, i, j):
        """The word of a token that is not a ``str``: a tuple of columns whose
        first is the word (a CoNLL row); anything else (a list, a number, None,
        a nested sequence) is refused -- the vocabulary holds word strings,
        and a number would silently meet its decimal string."""
        if isinstance(tok, tuple) and tok and isinstance(tok[0], str):
            return str(tok[0])
        raise ValueError("%s[%d][%d]: a token must be a word string or a tuple whose first "
                         "column is the word string, got %s %r"
                         % (name, i, j, type(tok).__name__, tok))

    def _codes(self, words):
        """Word ids (-1: unknown) of every token and the sentence offsets."""
        lengths = np.array([len(s) for s in words], dtype=np.int64)
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        get = self._index.get
        ids = np.fromiter((get(w, -1) for s in words for w in s), dtype=np.int64,
                          count=int(offsets[-1]))
        return ids, offsets

    def fit(self, X, y):
        """Count start, transition, stop and emission events of ``(X, y)``."""
        self._check_params()
        words = self._words(X)
        classes, gold = _encode_label_sequences(y, X)
        K = len(classes)
        vocabulary = sorted({w for s in words for w in s})
        self._index = {w: i for i, w in enumerate(vocabulary)}
        ids, offsets = self._codes(words)
        V = len(vocabulary)
        a, b = float(self.emission_smoothing), float(self.transition_smoothing)
        nonempty = np.flatnonzero(np.diff(offsets) > 0)
        firsts = gold[offsets[nonempty]]
        lasts = gold[offsets[nonempty + 1] - 1]
        start = np.bincount(firsts, minlength=K) + b
        stop_counts = np.bincount(lasts, minlength=K).astype(float)
        not_first = np.ones(len(gold), dtype=bool)
        not_first[offsets[nonempty]] = False
        t = np.flatnonzero(not_first)
        trans = np.bincount(gold[t - 1].astype(np.int64) * K + gold[t], minlength=K * K)
        trans = trans.reshape(K, K) + b
        out_total = trans.sum(1) + stop_counts + b
        emit = np.bincount(ids * K + gold, minlength=V * K).reshape(V, K).astype(float)
        label_total = emit.sum(0) + a * (V + 1)
        self.classes_ = [str(c) for c in classes]
        self.vocabulary_ = vocabulary
        self.log_start_ = np.log(start / start.sum())
        self.log_transitions_ = np.log(trans / out_total[:, None])
        self.log_stop_ = np.log((stop_counts + b) / out_total)
        self.log_emissions_ = np.log((emit + a) / label_total)
        self.log_unknown_ = np.log(a / label_total)
        return self

    # -------------------------------------------------------------- predict --
    def _check_fitted(self):
        if not hasattr(self, "log_emissions_"):
            raise NotFittedError("this HMM is not fitted yet; call fit() first")
        if getattr(self, "_index", None) is None:
            self._index = {w: i for i, w in enumerate(self.vocabulary_)}

    def _model(self, X):
        """(table, batch, w, trans, start, stop) of the kernels for sentences X."""
        import scipy.sparse as sp
        self._check_fitted()
        ids, offsets = self._codes(self._words(X))
        K, V = len(self.classes_), len(self.vocabulary_)
        n = len(ids)
        known = ids >= 0
        # row t: bias (attribute 0) and, for a known word, attribute id + 1
        nnz = 1 + known.astype(np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(nnz, out=indptr[1:])
        indices = np.zeros(int(indptr[-1]), dtype=np.int64)
        indices[indptr[:-1][known] + 1] = ids[known] + 1
        Xf = sp.csr_matrix((np.ones(len(indices)), indices.astype(np.int32),
                            indptr.astype(np.int32)), shape=(n, V + 1))
        table = kernels.StateTable.dense(V + 1, K)
        w = np.vstack([self.log_unknown_[None, :],
                       self.log_emissions_ - self.log_unknown_[None, :]]).ravel()
        batch = kernels.make_batch(Xf, offsets, table)
        return table, batch, w, self.log_transitions_, self.log_start_, self.log_stop_

    def predict(self, X):
        """Most probable label sequence of each sentence (Viterbi)."""
        table, batch, *params = self._model(X)
        codes, _ = kernels.viterbi(table, batch, *params)
        labels = np.asarray(self.classes_, dtype=object)[codes]
        off = batch.offsets
        return [labels[off[s]:off[s + 1]].tolist() for s in range(batch.n_sentences)]

    def predict_single(self, xseq):
        _check_sentences([xseq], "xseq")
        return self.predict([xseq])[0]

    def predict_marginals(self, X):
        """Posterior P(y_t = label | x) per token: lists of dicts {label: probability}."""
        table, batch, *params = self._model(X)
        node, _, _ = kernels.node_marginals(table, batch, *params)
        rows = [dict(zip(self.classes_, r)) for r in node.tolist()]
        off = batch.offsets
        return [rows[off[s]:off[s + 1]] for s in range(batch.n_sentences)]

    def predict_marginals_single(self, xseq):
        _check_sentences([xseq], "xseq")
        return self.predict_marginals([xseq])[0]

    def log_likelihood(self, X):
        """log P(x) of each sentence (the forward algorithm)."""
        table, batch, *params = self._model(X)
        return kernels.node_marginals(table, batch, *params)[1]

    def score(self, X, y):
        """Token accuracy of ``predict(X)`` against ``y``."""
        pred = self.predict(X)
        _encode_label_sequences(y, X)                    # same shapes, string labels
        flat_true = [t for s in y for t in s]
        flat_pred = [t for s in pred for t in s]
        return float(np.mean([a == b for a, b in zip(flat_true, flat_pred)])) if flat_true \
            else 1.0

    def _set_state(self, state):
        super()._set_state(state)
        self.classes_ = [str(c) for c in self.classes_]
        self.vocabulary_ = [str(v) for v in self.vocabulary_]
        self._index = None
        K, V = len(self.classes_), len(self.vocabulary_)
        if (np.shape(self.log_emissions_) != (V, K) or np.shape(self.log_transitions_) != (K, K)
                or np.shape(self.log_start_) != (K,) or np.shape(self.log_stop_) != (K,)
                or np.shape(self.log_unknown_) != (K,)):
            raise ValueError("HMM state: the probability tables do not match %d labels and "
                             "%d words" % (K, V))

    def _check_state(self):
        """The probability tables hold log-probabilities (no NaN, no +inf):
        called by :func:`linclass.load` after ``_set_state`` checked shapes."""
        super()._check_state()
        for name in ("log_start_", "log_transitions_", "log_stop_", "log_emissions_",
                     "log_unknown_"):
            table = vars(self).get(name)
            if table is None:
                continue
            table = np.asarray(table)
            if table.dtype.kind != "f" or np.isnan(table).any() or (table > 0).any():
                raise ValueError("%s must hold log-probabilities (<= 0, no NaN)" % name)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_index", None)
        return state
