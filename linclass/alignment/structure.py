"""Pairwise sequence alignment as a Structure: learn a substitution matrix and gap costs.

Input ``x``: a pair of sequences ``(a, b)`` (strings over the alphabet, or
integer code arrays).  Output ``y``: the alignment as the partner array of
``a``: ``y[i]`` is the index of the residue of ``b`` aligned with ``a[i]``, or
``-1`` when ``a[i]`` faces a gap.  The aligned pairs must be strictly
increasing in both sequences (a monotone matching).

Joint feature ``Phi(x, y)`` (``n_features = K (K + 1) / 2 + 2`` by default):

* one count per **unordered** residue pair ``{s, t}`` aligned (the matrix is
  symmetric, ``S[s, t] = S[t, s] = w[pair_index(s, t)]``);
* ``gap_open``: the number of gap runs; ``gap_extend``: the number of residues
  facing a gap; a run of length ``L`` thus scores ``w_open + L w_extend``
  (BLAST's convention: "11/1" is ``w_open = -11, w_extend = -1``);
* with ``end_gaps=True`` (global mode): two more, ``end_gap_open`` and
  ``end_gap_extend``, count the runs before the first and after the last
  aligned pair (and their residues), which then no longer count as internal
  runs: terminal gaps get their own (usually cheaper) costs;
* with ``residue_classes``: one count per unordered pair of residue
  **classes** (e.g. hydrophobic, aromatic, charged, ...) aligned, so the
  effective score of ``{s, t}`` is ``w[pair(s, t)] + w[class_pair(c(s), c(t))]``:
  a class-pair offset with far fewer weights than the matrix;
* with ``gap_classes=True`` (needs ``residue_classes``): one count per
  residue class of the residues facing a gap (internal or terminal), so a
  gapped residue of class ``c`` adds ``w[gap_class(c)]``: residue-specific gap
  costs (as CLUSTAL W lowers them for hydrophilic residues).

Feature order: residue pairs, gap open, gap extend, [end gap open, end gap
extend], [class pairs], [gap classes], [the prior feature].

Gap runs are defined by the matching alone: between two consecutive aligned
pairs (and, in global mode, before the first and after the last) the
unaligned residues of ``a`` form one run and those of ``b`` another.  In local
mode only the part between the first and the last aligned pair counts.  The
DP of :mod:`linclass._core._alignment` enumerates exactly these alignments,
so ``decode`` is an exact argmax of ``w . Phi`` for any ``w``.

Loss ``Delta(y, y_hat)`` (``loss="residue"``): the number of residues, of
``a`` and of ``b``, whose partner (a residue of the other sequence, or none)
differs between the two alignments.  It is zero iff the alignments are equal
and decomposes over the DP cells, so the loss-augmented alignment is the same
DP.  ``loss="q"`` is the column-wise loss of the evaluation (the Q-score): the
number of the reference's aligned pairs that ``y_hat`` does not reproduce,
``(1 - Q) * n_pairs(y)``; it ignores pairs aligned in ``y_hat`` only, and it
decomposes over the match cells.  Slack rescaling (``Delta (1 - margin)``)
does not decompose; its exact argmax comes from the same DP with one more
dimension, the loss count (:meth:`AlignmentStructure.slack_rescaled_decode`).

References
----------
Gotoh (1982), An improved algorithm for matching biological sequences.
J. Mol. Biol. 162:705.  Yu, Joachims, Elber and Pillardy (2008), Support
vector training of protein alignment models. J. Comput. Biol. 15:867.
"""
import numpy as np

from .._core._alignment import align_batch, slack_rescaled_align
from ..structured.base import Structure

__all__ = ["AlignmentStructure", "SequencePair", "pair_index_matrix", "RESIDUE_CLASSES"]

#: Physico-chemical classes of the 20 amino acids (symbols outside them, e.g.
#: B, Z, X, *, form one more class): aliphatic hydrophobic, aromatic, positive,
#: negative, polar, small, cysteine, glycine, proline.
RESIDUE_CLASSES = ("ILMV", "FWY", "HKR", "DE", "NQST", "A", "C", "G", "P")

#: Largest DP table (entries per state) of the exact slack-rescaled argmax.
SLACK_MAX_ENTRIES = 50_000_000


def pair_index_matrix(n_symbols):
    """(K, K) int64 matrix: the feature index of the unordered pair {s, t}."""
    rows, cols = np.triu_indices(n_symbols)
    index = np.empty((n_symbols, n_symbols), dtype=np.int64)
    index[rows, cols] = np.arange(rows.size)
    index[cols, rows] = np.arange(rows.size)
    return index


class SequencePair:
    """Two encoded sequences (int32 codes), the canonical input of the structure."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __len__(self):
        return 2

    def __iter__(self):
        return iter((self.a, self.b))

    def __repr__(self):
        return "SequencePair(len(a)=%d, len(b)=%d)" % (self.a.size, self.b.size)


def _joined_characters(sequence, name):
    """A sequence of one-character strings as one string; anything else as it is."""
    if isinstance(sequence, np.ndarray):
        if sequence.dtype.kind not in "UO" or sequence.ndim != 1:
            return sequence
        items = sequence.tolist()
    elif isinstance(sequence, (list, tuple)):
        items = sequence
    else:
        return sequence
    if not items or not all(isinstance(c, str) for c in items):
        return sequence
    bad = next((k for k, c in enumerate(items) if len(c) != 1), None)
    if bad is not None:
        raise ValueError("%s is a sequence of strings, but item %d (%r) is not one "
                         "character" % (name, bad, items[bad]))
    return "".join(items)


class AlignmentStructure(Structure):
    """Global or local pairwise alignment with affine gaps (see the module docs).

    Parameters
    ----------
    alphabet : str or sequence of str
        The residue symbols; codes are positions in it.
    mode : {"global", "local"}
        Needleman--Wunsch or Smith--Waterman.
    base_weights : None or array of shape (n_features,)
        Decode with ``w + base_weights``: the generic
        :class:`~linclass.structured.StructuredPerceptron` then starts from
        ``base_weights`` (e.g. BLOSUM62 with gaps 11/1) and learns a
        correction.  ``score`` and ``batch_score`` include the offset.  Not for
        :class:`~linclass.structured.StructuredSVM`, whose working-set QP
        assumes the score ``w . Phi``; use ``prior_weights`` there.
    prior_weights : None or array of shape (n_base_features,)
        Add one last feature, ``prior_weights . Phi(x, y)`` (for example the
        BLOSUM62 score of the alignment), whose learned weight scales the
        prior; any learner can use it.  ``n_base_features`` is ``K (K + 1) /
        2 + 2`` plus the end-gap and class-pair features, if any.
    loss_weight : float, default=1.0
        Weight of each wrongly aligned residue (``"residue"``) or missed
        reference pair (``"q"``) in the loss.
    loss : {"residue", "q"}, default="residue"
        ``"residue"``: residues of both sequences whose partner differs;
        ``"q"``: reference pairs missed (the Q-score's complement; see the
        module docs).
    end_gaps : bool, default=False
        Global mode only: separate weights for the terminal gap runs (before
        the first and after the last aligned pair); see the module docs.
    residue_classes : None or sequence of str, default=None
        Disjoint groups of alphabet symbols (e.g. :data:`RESIDUE_CLASSES`);
        the symbols in no group form one more class.  Adds one feature per
        unordered class pair (see the module docs).
    gap_classes : bool, default=False
        With ``residue_classes``: one more weight per class, added for every
        residue of that class facing a gap (see the module docs).
    """

    def __init__(self, alphabet, *, mode="global", base_weights=None, prior_weights=None,
                 loss_weight=1.0, loss="residue", end_gaps=False, residue_classes=None,
                 gap_classes=False):
        if loss not in ("residue", "q"):
            raise ValueError("loss must be 'residue' or 'q', got %r" % (loss,))
        self.loss_kind = loss
        alphabet = list(alphabet)
        if not alphabet or any(not isinstance(s, str) or len(s) != 1 for s in alphabet):
            raise ValueError("alphabet must be a non-empty sequence of single characters")
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet has repeated symbols")
        if mode not in ("global", "local"):
            raise ValueError("mode must be 'global' or 'local', got %r" % (mode,))
        loss_weight = float(loss_weight)
        if not (np.isfinite(loss_weight) and loss_weight > 0):
            raise ValueError("loss_weight must be a positive finite number")
        self.alphabet = alphabet
        self.mode = mode
        self.loss_weight = loss_weight
        self.n_symbols = len(alphabet)
        self.n_pairs = self.n_symbols * (self.n_symbols + 1) // 2
        self.gap_open_index = self.n_pairs
        self.gap_extend_index = self.n_pairs + 1
        self.pair_index = pair_index_matrix(self.n_symbols)
        if end_gaps not in (True, False):
            raise ValueError("end_gaps must be True or False, got %r" % (end_gaps,))
        if end_gaps and mode != "global":
            raise ValueError("end_gaps applies to mode='global' only")
        self.end_gaps = bool(end_gaps)
        n = self.n_pairs + 2
        self.end_open_index = self.end_extend_index = None
        if self.end_gaps:
            self.end_open_index, self.end_extend_index = n, n + 1
            n += 2
        self.residue_classes = None
        self.class_offset = n
        self.class_pair_index = None
        if residue_classes is not None:
            self.residue_classes, classes = self._check_classes(residue_classes, alphabet)
            n_classes = int(classes.max()) + 1
            self.class_pair_index = np.ascontiguousarray(
                n + pair_index_matrix(n_classes)[classes[:, None], classes[None, :]])
            n += n_classes * (n_classes + 1) // 2
        if gap_classes not in (True, False):
            raise ValueError("gap_classes must be True or False, got %r" % (gap_classes,))
        if gap_classes and residue_classes is None:
            raise ValueError("gap_classes=True needs residue_classes")
        self.gap_classes = bool(gap_classes)
        self.gap_class_index = None
        if self.gap_classes:
            self.gap_class_index = np.ascontiguousarray(n + classes)
            n += n_classes
        self.n_base_features = n
        self._ascii = np.full(128, -1, dtype=np.int32)      # ASCII byte -> code
        self._other = {}                                     # other characters -> code
        for k, s in enumerate(alphabet):
            if ord(s) < 128:
                self._ascii[ord(s)] = k
            else:
                self._other[s] = k
        self.prior_weights = None
        if prior_weights is not None:
            self.prior_weights = self._check_vector(prior_weights, "prior_weights",
                                                    self.n_base_features)
        self.n_features = self.n_base_features + (prior_weights is not None)
        self.base_weights = None
        if base_weights is not None:
            self.base_weights = self._check_vector(base_weights, "base_weights",
                                                   self.n_features)

    # -- helpers -------------------------------------------------------------
    @staticmethod
    def _check_classes(residue_classes, alphabet):
        """(the groups as a tuple of str, class code of each symbol)."""
        if isinstance(residue_classes, str):
            raise ValueError("residue_classes must be a sequence of strings (groups of "
                             "symbols), got a single string")
        groups = []
        classes = np.full(len(alphabet), -1, dtype=np.int64)
        position = {s: k for k, s in enumerate(alphabet)}
        for g, group in enumerate(residue_classes):
            if not isinstance(group, str) or not group:
                raise ValueError("residue_classes[%d] must be a non-empty string of symbols, "
                                 "got %r" % (g, group))
            for symbol in group:
                if symbol not in position:
                    raise ValueError("residue_classes[%d] has symbol %r, which is not in the "
                                     "alphabet" % (g, symbol))
                if classes[position[symbol]] >= 0:
                    raise ValueError("residue_classes: symbol %r is in two groups" % symbol)
                classes[position[symbol]] = g
            groups.append(group)
        if not groups:
            raise ValueError("residue_classes must have at least one group")
        classes[classes < 0] = len(groups)              # the remaining symbols
        return tuple(groups), classes

    @staticmethod
    def _check_vector(w, name, size):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (size,):
            raise ValueError("%s must have shape (%d,), got %r" % (name, size, w.shape))
        if not np.isfinite(w).all():
            raise ValueError("%s contains NaN or infinite values" % name)
        return np.ascontiguousarray(w)

    def encode(self, sequence, name="sequence"):
        """int32 codes of a string (or a validated copy of a code array); a
        list, tuple or numpy array of one-character strings is the string
        they spell."""
        if not isinstance(sequence, str):
            sequence = _joined_characters(sequence, name)
        if isinstance(sequence, str):
            if sequence.isascii():
                codes = self._ascii[np.frombuffer(sequence.encode("ascii"), dtype=np.uint8)]
            else:
                codes = np.array([self._ascii[ord(c)] if ord(c) < 128 else
                                  self._other.get(c, -1) for c in sequence], dtype=np.int32)
            bad = np.flatnonzero(codes < 0)
            if bad.size:
                raise ValueError("%s has character %r at position %d, which is not in the "
                                 "alphabet %s" % (name, sequence[bad[0]], bad[0],
                                                  "".join(self.alphabet)))
            return codes.astype(np.int32)
        codes = np.asarray(sequence)
        if codes.ndim != 1 or (codes.size and codes.dtype.kind not in "iu"):
            raise ValueError("%s must be a string or a 1-D integer array of codes" % name)
        if codes.size and (codes.min() < 0 or codes.max() >= self.n_symbols):
            raise ValueError("%s has code %d outside [0, %d)" % (
                name, codes[(codes < 0) | (codes >= self.n_symbols)][0], self.n_symbols))
        return np.ascontiguousarray(codes, dtype=np.int32)

    def encode_pair(self, x):
        """A :class:`SequencePair` from ``(a, b)``."""
        if isinstance(x, SequencePair):
            return x
        try:
            a, b = x
        except (TypeError, ValueError):
            raise ValueError("an alignment input must be a pair (a, b) of sequences") from None
        return SequencePair(self.encode(a, "sequence a"), self.encode(b, "sequence b"))

    def batch_inputs(self, X):
        out = []
        for p, x in enumerate(X):
            try:
                out.append(self.encode_pair(x))
            except ValueError as exc:
                raise ValueError("pair %d: %s" % (p, exc)) from None
        return out

    def check_output(self, x, y):
        """Raise ``ValueError`` unless ``y`` is a monotone partner array for ``x``."""
        self._partners(self.encode_pair(x), y)

    def _partners(self, x, y):
        y = np.asarray(y)
        m, n = x.a.size, x.b.size
        if y.shape != (m,) or (m and y.dtype.kind not in "iu"):
            raise ValueError("an alignment output must be an integer partner array of "
                             "length len(a) = %d, got shape %r" % (m, y.shape))
        y = y.astype(np.int64, copy=False)
        matched = y[y >= 0]
        if y.size and (y.min() < -1 or (matched.size and matched.max() >= n)):
            raise ValueError("partner indices must be -1 or in [0, len(b)) = [0, %d)" % n)
        if matched.size > 1 and np.any(np.diff(matched) <= 0):
            raise ValueError("aligned pairs must be strictly increasing in both sequences "
                             "(a partner array that crosses or repeats a residue of b)")
        return y

    def _effective(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError("w must have shape (%d,), got %r" % (self.n_features, w.shape))
        if self.base_weights is not None:
            w = w + self.base_weights
        base = w[:self.n_base_features]
        if self.prior_weights is not None:
            base = base + w[-1] * self.prior_weights
        return base

    def weights(self, w):
        """Effective (substitution matrix (K, K), gap_open, gap_extend) of ``w``
        (the matrix includes the class-pair offsets)."""
        base = self._effective(w)
        S = base[self.pair_index]
        if self.class_pair_index is not None:
            S = S + base[self.class_pair_index]
        return (np.ascontiguousarray(S), float(base[self.gap_open_index]),
                float(base[self.gap_extend_index]))

    def end_weights(self, w):
        """Effective (end_gap_open, end_gap_extend) weights of ``w``, or
        (None, None) without ``end_gaps``."""
        if not self.end_gaps:
            return None, None
        base = self._effective(w)
        return float(base[self.end_open_index]), float(base[self.end_extend_index])

    def gap_residue_weights(self, w):
        """Effective weight (K,) of a residue facing a gap, by symbol, or None
        without ``gap_classes``."""
        if not self.gap_classes:
            return None
        return np.ascontiguousarray(self._effective(w)[self.gap_class_index])

    def substitution_weights(self, substitution, gap_open, gap_extend, end_gap_open=None,
                             end_gap_extend=None):
        """The base weight vector (length ``n_base_features``) of a symmetric matrix and
        gap weights: the end gaps (if any) default to the internal weights, the
        class-pair offsets (if any) are zero."""
        S = np.asarray(substitution, dtype=np.float64)
        if S.shape != (self.n_symbols, self.n_symbols):
            raise ValueError("substitution must have shape (%d, %d)"
                             % (self.n_symbols, self.n_symbols))
        if not np.allclose(S, S.T):
            raise ValueError("the substitution matrix must be symmetric")
        rows, cols = np.triu_indices(self.n_symbols)
        parts = [S[rows, cols], [gap_open, gap_extend]]
        if self.end_gaps:
            parts.append([gap_open if end_gap_open is None else end_gap_open,
                          gap_extend if end_gap_extend is None else end_gap_extend])
        out = np.concatenate(parts)
        return np.concatenate([out, np.zeros(self.n_base_features - out.size)])

    # -- protocol ------------------------------------------------------------
    def joint_feature(self, x, y):
        x = self.encode_pair(x)
        y = self._partners(x, y)
        a, b = x.a, x.b
        i = np.flatnonzero(y >= 0)
        j = y[i]
        sub = self.pair_index[a[i], b[j]]
        if self.mode == "global":
            ii = np.concatenate([[-1], i, [a.size]])
            jj = np.concatenate([[-1], j, [b.size]])
        else:
            ii, jj = i, j
        gap_a = np.diff(ii) - 1 if ii.size > 1 else np.zeros(0, np.int64)
        gap_b = np.diff(jj) - 1 if jj.size > 1 else np.zeros(0, np.int64)
        idx = [sub, [self.gap_open_index, self.gap_extend_index]]
        val = [np.ones(sub.size)]
        if self.end_gaps:          # global: the first and last runs are the end runs
            ends_a = gap_a[[0, -1]] if gap_a.size > 1 else gap_a
            ends_b = gap_b[[0, -1]] if gap_b.size > 1 else gap_b
            gap_a, gap_b = gap_a[1:-1], gap_b[1:-1]
            val.append([(gap_a > 0).sum() + (gap_b > 0).sum(), gap_a.sum() + gap_b.sum(),
                        (ends_a > 0).sum() + (ends_b > 0).sum(), ends_a.sum() + ends_b.sum()])
            idx.append([self.end_open_index, self.end_extend_index])
        else:
            val.append([(gap_a > 0).sum() + (gap_b > 0).sum(), gap_a.sum() + gap_b.sum()])
        if self.class_pair_index is not None:
            idx.append(self.class_pair_index[a[i], b[j]])
            val.append(np.ones(i.size))
        if self.gap_classes:       # residues facing a gap (local: inside the alignment)
            gapped_a = y < 0
            gapped_b = inverse_partners(y, b.size) < 0
            if self.mode == "local":
                inside_a = np.zeros(a.size, bool)
                inside_b = np.zeros(b.size, bool)
                if i.size:
                    inside_a[i[0]:i[-1] + 1] = True
                    inside_b[j[0]:j[-1] + 1] = True
                gapped_a &= inside_a
                gapped_b &= inside_b
            idx += [self.gap_class_index[a[gapped_a]], self.gap_class_index[b[gapped_b]]]
            val += [np.ones(int(gapped_a.sum())), np.ones(int(gapped_b.sum()))]
        idx = np.concatenate(idx).astype(np.int64)
        val = np.concatenate(val).astype(np.float64)
        if self.prior_weights is not None:
            prior = float(self.prior_weights[idx] @ val)
            idx = np.append(idx, self.n_features - 1)
            val = np.append(val, prior)
        return idx, val

    def score(self, w, x, y):
        idx, val = self.joint_feature(x, y)
        w = np.asarray(w, dtype=np.float64)
        if self.base_weights is not None:
            w = w + self.base_weights
        return float(w[idx] @ val)

    def batch_score(self, w, X, Y_lists):
        return np.array([[self.score(w, X[i], Y[i]) for i in range(len(X))]
                         for Y in Y_lists]).reshape(len(Y_lists), len(X))

    def _run(self, w, X, Y=None, sign=1.0):
        X = [self.encode_pair(x) for x in X]
        S, gap_open, gap_extend = self.weights(w)
        end_open, end_extend = self.end_weights(w)
        codes_a = np.concatenate([x.a for x in X] + [np.zeros(0, np.int32)])
        codes_b = np.concatenate([x.b for x in X] + [np.zeros(0, np.int32)])
        offsets_a = np.concatenate([[0], np.cumsum([x.a.size for x in X])]).astype(np.int64)
        offsets_b = np.concatenate([[0], np.cumsum([x.b.size for x in X])]).astype(np.int64)
        ref_a = ref_b = None
        if Y is not None:
            ref_a = np.concatenate([self._partners(x, y) for x, y in zip(X, Y)]
                                   + [np.zeros(0, np.int64)])
            if self.loss_kind == "q":            # only a's reference pairs count
                ref_b = np.full(codes_b.size, -1, dtype=np.int64)
            else:
                ref_b = np.concatenate([inverse_partners(self._partners(x, y), x.b.size)
                                        for x, y in zip(X, Y)] + [np.zeros(0, np.int64)])
        scores, partners = align_batch(
            codes_a=codes_a, offsets_a=offsets_a, codes_b=codes_b, offsets_b=offsets_b,
            substitution=S, gap_open=gap_open, gap_extend=gap_extend,
            local=self.mode == "local", ref_a=ref_a, ref_b=ref_b,
            loss_weight=sign * self.loss_weight, q_loss=self.loss_kind == "q",
            end_gap_open=end_open, end_gap_extend=end_extend,
            gap_residue=self.gap_residue_weights(w))
        return scores, [partners[offsets_a[p]:offsets_a[p + 1]].copy() for p in range(len(X))]

    def decode(self, w, x):
        return self._run(w, [x])[1][0]

    def loss_augmented_decode(self, w, x, y):
        return self._run(w, [x], [y])[1][0]

    def batch_decode(self, w, X):
        return self._run(w, X)[1] if len(X) else []

    def batch_loss_augmented_decode(self, w, X, Y):
        return self._run(w, X, Y)[1] if len(X) else []

    def batch_loss_diminished_decode(self, w, X, Y):
        """The "hope" alignments ``argmax_y w . Phi(x, y) - Delta(y_ref, y)``: the
        best-scoring alignments that also agree with the references (Chiang,
        2012); the same DP with the loss subtracted, an exact argmax."""
        return self._run(w, X, Y, sign=-1.0)[1] if len(X) else []

    def check_slack_rescaling(self, X, Y):
        """``ValueError`` naming the first training pair whose exact slack-rescaled
        argmax would need more than :data:`SLACK_MAX_ENTRIES` table entries per DP
        state (called by :class:`~linclass.structured.StructuredSVM` at the start
        of ``fit``, so that no pair is refused mid-fit); the exact argmax does not
        support ``end_gaps``, which is refused here too."""
        if self.end_gaps or self.gap_classes:
            raise ValueError("rescaling='slack' does not support end_gaps=True or "
                             "gap_classes=True; use rescaling='margin'")
        for i, (x, y) in enumerate(zip(X, Y)):
            x = self.encode_pair(x)
            m, n = x.a.size, x.b.size
            if self.loss_kind == "q":
                l_max = int(np.count_nonzero(np.asarray(self._partners(x, y)) >= 0))
            else:
                l_max = m + n
            entries = (m + 1) * (n + 1) * (l_max + 1)
            if entries > SLACK_MAX_ENTRIES:
                raise ValueError(
                    "rescaling='slack': training pair %d (%d x %d residues) needs %d table "
                    "entries per DP state for the exact slack-rescaled argmax, above %d; "
                    "use rescaling='margin' or shorter pairs"
                    % (i, m, n, entries, SLACK_MAX_ENTRIES))

    def slack_rescaled_decode(self, w, x, y):
        """Exact slack-rescaled argmax ``argmax_y Delta(y) (1 + w.Phi(x, y) - w.Phi(x, y_ref))``
        by the DP with a loss-count dimension (``_core._alignment.slack_rescaled_align``):
        time and memory grow with ``len(a) len(b) (L_max + 1)``, ``L_max`` the
        largest possible loss; pairs whose tables would exceed 5e7 values per
        DP state are refused with a ``ValueError``."""
        if self.end_gaps or self.gap_classes:
            raise ValueError("slack-rescaled decoding does not support end_gaps=True or "
                             "gap_classes=True")
        x = self.encode_pair(x)
        y = self._partners(x, y)
        S, gap_open, gap_extend = self.weights(w)
        if self.loss_kind == "q":
            ref_b = np.full(x.b.size, -1, dtype=np.int64)
        else:
            ref_b = inverse_partners(y, x.b.size)
        _, _, partners = slack_rescaled_align(
            x.a, x.b, S, gap_open, gap_extend, self.mode == "local",
            np.ascontiguousarray(y, dtype=np.int64), ref_b, self.loss_weight,
            self.loss_kind == "q", self.score(w, x, y), SLACK_MAX_ENTRIES)
        return partners

    def align(self, w, X):
        """(scores, partner arrays) of the best alignments of every pair under ``w``."""
        return self._run(w, X)

    def loss(self, y, y_hat):
        y = np.asarray(y, dtype=np.int64)
        y_hat = np.asarray(y_hat, dtype=np.int64)
        if y.shape != y_hat.shape:
            raise ValueError("the two alignments are of sequences of different lengths")
        if self.loss_kind == "q":
            return self.loss_weight * int(np.count_nonzero((y >= 0) & (y_hat != y)))
        n_b = int(max(y.max(initial=-1), y_hat.max(initial=-1))) + 1
        wrong_a = int(np.count_nonzero(y != y_hat))
        wrong_b = int(np.count_nonzero(inverse_partners(y, n_b) != inverse_partners(y_hat, n_b)))
        return self.loss_weight * (wrong_a + wrong_b)


def inverse_partners(partners, n_b):
    """Partner array of ``b`` (length ``n_b``) from the partner array of ``a``."""
    partners = np.asarray(partners, dtype=np.int64)
    out = np.full(n_b, -1, dtype=np.int64)
    i = np.flatnonzero(partners >= 0)
    out[partners[i]] = i
    return out
