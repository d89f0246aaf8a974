"""Discriminative CKY parsing with the PCFG score and span features.

The tree space is the one of :class:`~linclass.parsing.GrammarStructure`
(CNF trees with a root rule and at most one unary rule per span), restricted
to the rules and the lexicon of a treebank :class:`~linclass.parsing.PCFG`
estimated on the same CNF transform ("less grammar, more features": the
grammar is the treebank's, the features carry the rest).

Joint features
--------------
``Phi(x, y)`` holds

* ``[0]`` the sum of the PCFG log-probabilities of the binary, unary and root
  rules of ``y`` (one real-valued feature, so the PCFG is the model with
  weight 1 there and 0 elsewhere);
* ``[1]`` the sum of the lexical log-probabilities ``log P(word | tag)``
  (unknown words through their signature, as the PCFG does);
* one indicator per binary, unary and root rule;
* span features of every *lower* node (a preterminal or a binary node) over
  the span ``[i, j)`` with symbol ``A``, each conjoined with the coarse label
  of ``A`` (``NP^S`` -> ``NP``, ``@NP^S~JJ`` -> ``@NP``): first word, last
  word, the word before and the word after the span, the length bucket, the
  two boundary bigrams (word before + first word, last word + word after), the
  shapes of the first and last words with the length bucket, the last word's
  three-letter suffix, and the pair (word before, word after).  Words seen at
  most ``rare_threshold`` times in training are replaced by their
  :func:`~linclass.parsing.word_signature`.  Each template value is hashed
  (a fixed hash, the same in every process) to one of ``2 ** hash_bits`` rows
  of a table with one column per coarse label; the span scores of a sentence
  are then one gather from that table.

The split-point features of Hall et al. (2014) are not included: they would
need a score per (span, split, rule) in the CKY kernel.

Decoding is Viterbi-CKY (:mod:`linclass._core._cky`) with these span scores
added per (cell, symbol), optionally with beam pruning (the ``beam_size``
best upper nodes of each cell survive, and a sentence the beam loses is
parsed again without pruning), which makes training on the whole treebank
practical at the price of exactness.

References
----------
D. Hall, G. Durrett, D. Klein. Less grammar, more features. ACL 2014.
M. Collins. Discriminative training methods for hidden Markov models.
EMNLP 2002 (the averaged perceptron).
M. Collins and B. Roark. Incremental parsing with the perceptron algorithm.
ACL 2004 (beam search with the perceptron).
"""
import zlib

import numpy as np

from .grammar import (NODE_BINARY, NODE_LEXICAL, NODE_ROOT, NODE_UNARY, CompiledGrammar,
                      GrammarStructure, NoParseError, _check_words, cnf_tree_nodes,
                      nodes_to_tree, word_signature)

__all__ = ["SpanGrammarStructure"]

N_TEMPLATES = 10
_MASK64 = (1 << 64) - 1
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_K = [np.uint64(0x9E3779B97F4A7C15 * (t + 1) & _MASK64) for t in range(4)]


def _string_hash(text):
    """A 64-bit hash of a string, identical in every process (crc32 of two salts)."""
    data = text.encode("utf-8")
    return (zlib.crc32(data) << 32) | zlib.crc32(b"\x01" + data)


def _mix(h):
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    h = h ^ (h >> np.uint64(30))
    h = h * _MIX1
    h = h ^ (h >> np.uint64(27))
    h = h * _MIX2
    return h ^ (h >> np.uint64(31))


def _length_bucket(length):
    """1, 2, 3, 4, 5, 6-10, 11-20, 21+ as 0..7."""
    return np.minimum(length, 5) - 1 + (length > 5) + (length > 10) + (length > 20)


def _shape_class(word):
    first = word[0]
    if first.isupper():
        return "X"
    if first.islower():
        return "x"
    if first.isdigit():
        return "d"
    return first


def coarse_label(symbol):
    """The label a span feature is conjoined with: no parent annotation and, for
    the intermediate symbols of the binarisation, ``@`` + the parent category."""
    if symbol.startswith("@"):
        return "@" + symbol[1:].split("~", 1)[0].split("^", 1)[0]
    return symbol.split("^", 1)[0]


class SpanParserInput:
    """A sentence prepared for :class:`SpanGrammarStructure`: its words, the
    candidate (position, tag) pairs with their lexical log-probabilities and
    the hashed span templates of every chart cell (``(n_cells, N_TEMPLATES)``
    rows of the span-weight table, cell order of the CKY kernel)."""

    __slots__ = ("words", "position", "tag", "lexical_logprob", "templates")

    def __init__(self, words, position, tag, lexical_logprob, templates):
        self.words = words
        self.position = position
        self.tag = tag
        self.lexical_logprob = lexical_logprob
        self.templates = templates

    def __len__(self):
        return len(self.words)


def _cell_of(i, j, n):
    return i * n - (i * (i - 1)) // 2 + (j - i - 1)


class SpanGrammarStructure(GrammarStructure):
    """CKY parsing with the PCFG score, rule indicators and hashed span features.

    See the module docs for the feature map.  The loss (labelled-bracket
    node loss) and the tree space are those of
    :class:`~linclass.parsing.GrammarStructure`.

    Parameters
    ----------
    pcfg : PCFG
        Estimated with :meth:`PCFG.from_treebank` (its symbols, binary rules,
        direct unary rules, root rules ``ROOT -> X`` and lexicon define the
        tree space; its log-probabilities are features 0 and 1).
    hash_bits : int
        ``2 ** hash_bits`` rows of the span-weight table (times the number of
        coarse labels weights).
    beam_size : int
        0: exact CKY; otherwise the number of upper nodes kept per cell.
    root_label : str
    logprob_scale : float > 0
        Features 0 and 1 hold the log-probabilities times this factor.  A
        small factor with a large starting weight (``pcfg_weight /
        logprob_scale``) keeps the PCFG's weight nearly fixed under unit
        perceptron updates: the update of feature 0 is the scale times the
        log-probability difference, its effect on the score the scale squared.
    """

    def __init__(self, pcfg, *, hash_bits=15, beam_size=0, root_label="ROOT",
                 logprob_scale=1.0):
        if not 4 <= int(hash_bits) <= 24:
            raise ValueError("hash_bits must be in [4, 24], got %r" % (hash_bits,))
        if int(beam_size) < 0:
            raise ValueError("beam_size must be >= 0, got %r" % (beam_size,))
        logprob_scale = float(logprob_scale)
        if not (np.isfinite(logprob_scale) and logprob_scale > 0):
            raise ValueError("logprob_scale must be a finite number > 0, got %r"
                             % (logprob_scale,))
        self.logprob_scale = logprob_scale
        self.pcfg = pcfg
        self.hash_bits = int(hash_bits)
        self.beam_size = int(beam_size)
        self.root_label = root_label
        self.symbols = list(pcfg.symbols)
        index = {s: k for k, s in enumerate(self.symbols)}
        self.symbol_index = index
        binary, binary_lp, unary, unary_lp, root, root_lp = [], [], [], [], [], []
        for (lhs, rhs, lexical), lp in pcfg._rule_logprob.items():
            if lexical:
                continue
            if len(rhs) == 2:
                binary.append((index[lhs], index[rhs[0]], index[rhs[1]]))
                binary_lp.append(lp)
            elif lhs == root_label:
                root.append(index[rhs[0]])
                root_lp.append(lp)
            else:
                unary.append((index[lhs], index[rhs[0]]))
                unary_lp.append(lp)
        if not root:
            raise ValueError("the PCFG has no rule %s -> X" % root_label)
        self.grammar = CompiledGrammar(self.symbols, binary, unary)
        self.binary_index = {r: k for k, r in enumerate(binary)}
        self.unary_index = {r: k for k, r in enumerate(unary)}
        self.root_index = {s: k for k, s in enumerate(root)}
        self.root_symbols = np.array(root, dtype=np.int64)
        self.binary_logprob = np.array(binary_lp, dtype=np.float64)
        self.unary_logprob = np.array(unary_lp, dtype=np.float64)
        self.root_logprob = np.array(root_lp, dtype=np.float64)
        self._offset_binary = 2
        self._offset_unary = 2 + len(binary)
        self._offset_root = self._offset_unary + len(unary)
        self._offset_span = self._offset_root + len(root)
        coarse = {}
        self.coarse_of_symbol = np.array(
            [coarse.setdefault(coarse_label(s), len(coarse)) for s in self.symbols],
            dtype=np.int64)
        self.coarse_labels = list(coarse)
        self.n_features = self._offset_span + (1 << self.hash_bits) * len(coarse)
        self._word_hash = {}

    # -- inputs -------------------------------------------------------------------
    def _feature_word(self, word, i):
        if word in self.pcfg._lexicon:
            return word
        return word_signature(word, sentence_initial=(i == 0))

    def _hash(self, text):
        h = self._word_hash.get(text)
        if h is None:
            h = self._word_hash[text] = _string_hash(text)
        return h

    def prepare(self, x):
        """A :class:`SpanParserInput` for sentence ``x`` (returned unchanged if it is one)."""
        if isinstance(x, SpanParserInput):
            return x
        words = _check_words(x)
        n = len(words)
        terminals = self.pcfg.terminals(words)
        position, tag, lp = [], [], []
        for i, token in enumerate(terminals):
            tags, lps = self.pcfg._lexicon[token]
            position.extend([i] * len(tags))
            tag.extend(tags.tolist())
            lp.extend(lps.tolist())
        fwords = [self._feature_word(w, i) for i, w in enumerate(words)]
        pad = np.array([self._hash("<S>")] + [self._hash("w=" + w) for w in fwords]
                       + [self._hash("</S>")], dtype=np.uint64)
        shape = np.array([0] + [self._hash("shape=" + _shape_class(w)) for w in words] + [0],
                         dtype=np.uint64)
        suffix = np.array([0] + [self._hash("suf=" + w[-3:].lower()) for w in words] + [0],
                          dtype=np.uint64)
        # cells in kernel order: c = i*n - i(i-1)/2 + (j-i-1)
        starts = np.repeat(np.arange(n), np.arange(n, 0, -1))
        ends = np.concatenate([np.arange(i + 1, n + 1) for i in range(n)])
        length = ends - starts
        bucket = _length_bucket(length).astype(np.uint64)
        first, last = pad[starts + 1], pad[ends]
        before, after = pad[starts], pad[ends + 1]
        k0, k1, k2, k3 = _K
        with np.errstate(over="ignore"):
            columns = [first, last * k1, before * k2, after * k3, bucket + k0,
                       before * k1 + first * k2, last * k1 + after * k3,
                       shape[starts + 1] * k1 + shape[ends] * k2 + bucket,
                       suffix[ends], before * k2 + after * k1]
            templates = np.empty((length.size, N_TEMPLATES), dtype=np.int64)
            shift = np.uint64(64 - self.hash_bits)
            for t, col in enumerate(columns):
                templates[:, t] = (_mix(col + np.uint64(t + 1) * k3) >> shift).astype(np.int64)
        return SpanParserInput(words, np.array(position, dtype=np.int64),
                               np.array(tag, dtype=np.int64), np.array(lp, dtype=np.float64),
                               templates)

    def batch_inputs(self, X):
        return [self.prepare(x) for x in X]

    def _span_indices(self, rows, coarse):
        """Feature ids of template rows (m, T) conjoined with coarse labels (m,): (m, T)."""
        return self._offset_span + rows * len(self.coarse_labels) + coarse[:, None]

    def span_scores(self, w, px):
        """``(n_cells, N)`` span-feature scores of the lower nodes of every cell."""
        table = w[self._offset_span:].reshape(1 << self.hash_bits, len(self.coarse_labels))
        return table[px.templates].sum(axis=1)[:, self.coarse_of_symbol]

    # -- decoding -----------------------------------------------------------------
    def _check_w(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError("w must have shape (%d,), got %r" % (self.n_features, w.shape))
        if not np.isfinite(w).all():
            raise ValueError("w contains NaN or inf")
        return w

    def _score_arrays(self, w, px):
        n = len(px.words)
        lexical = np.full((n, self.grammar.n_symbols), -np.inf)
        w0, w1 = w[0] * self.logprob_scale, w[1] * self.logprob_scale
        lexical[px.position, px.tag] = w1 * px.lexical_logprob
        binary = w0 * self.binary_logprob + w[self._offset_binary:self._offset_unary]
        unary = w0 * self.unary_logprob + w[self._offset_unary:self._offset_root]
        root = np.full(self.grammar.n_symbols, -np.inf)
        root[self.root_symbols] = (w0 * self.root_logprob
                                   + w[self._offset_root:self._offset_span])
        return lexical, binary, unary, root, self.span_scores(w, px)

    def decode_with_score(self, w, x, gold=None, *, check_w=True):
        """The best CNF tree and its score ``w . Phi(x, y)`` (plus the loss
        bonuses when ``gold`` nodes are given).  ``check_w=False`` skips the
        check of ``w`` (shape, finite values) for callers whose ``w`` is a
        float64 array of ``n_features`` finite values by construction."""
        px = self.prepare(x)
        if check_w:
            w = self._check_w(w)
        lexical, binary, unary, root, spans = self._score_arrays(w, px)
        score, nodes = self.grammar.viterbi(lexical, binary, unary, root, gold=gold,
                                            span_score=spans, beam_size=self.beam_size)
        if not nodes.shape[0] and self.beam_size:
            # the beam lost every complete tree: search again without pruning
            score, nodes = self.grammar.viterbi(lexical, binary, unary, root, gold=gold,
                                                span_score=spans)
        if not nodes.shape[0]:
            raise NoParseError("no parse of %r under the grammar" % (" ".join(px.words),))
        return nodes_to_tree(nodes, self.symbols, px.words, root_label=self.root_label), score

    def _decode(self, w, x, gold=None):
        return self.decode_with_score(w, x, gold=gold)[0]

    # -- features -----------------------------------------------------------------
    def joint_feature(self, x, y):
        px = self.prepare(x)
        nodes = self._checked_nodes(px, y)
        index = self.symbol_index
        idx, val = [0, 1], [0.0, 0.0]
        lower_cells, lower_coarse = [], []
        n = len(px.words)
        for kind, label, start, end, rhs in nodes:
            if kind == NODE_ROOT:
                k = self.root_index[index[rhs[0]]]
                idx.append(self._offset_root + k)
                val.append(1.0)
                val[0] += self.root_logprob[k]
                continue
            A = index[label]
            if kind == NODE_UNARY:
                k = self.unary_index[(A, index[rhs[0]])]
                idx.append(self._offset_unary + k)
                val.append(1.0)
                val[0] += self.unary_logprob[k]
                continue
            if kind == NODE_BINARY:
                k = self.binary_index[(A, index[rhs[0]], index[rhs[1]])]
                idx.append(self._offset_binary + k)
                val.append(1.0)
                val[0] += self.binary_logprob[k]
            else:
                k = np.flatnonzero((px.position == start) & (px.tag == A))
                val[1] += px.lexical_logprob[k[0]]
            lower_cells.append(_cell_of(start, end, n))
            lower_coarse.append(self.coarse_of_symbol[A])
        span = self._span_indices(px.templates[lower_cells],
                                  np.array(lower_coarse, dtype=np.int64)).ravel()
        val[0] *= self.logprob_scale
        val[1] *= self.logprob_scale
        idx = np.concatenate([np.array(idx, dtype=np.int64), span])
        val = np.concatenate([np.array(val), np.ones(span.size)])
        return idx, val

    def _checked_nodes(self, px, y):
        nodes, words = cnf_tree_nodes(y, root_label=self.root_label)
        if tuple(words) != px.words:
            raise ValueError("the tree's words %r differ from the sentence %r"
                             % (" ".join(words), " ".join(px.words)))
        index = self.symbol_index
        for kind, label, start, end, rhs in nodes:
            labels = rhs if kind == NODE_ROOT else \
                ((label,) if kind == NODE_LEXICAL else (label,) + rhs)
            for s in labels:
                if s not in index:
                    raise ValueError("label %r is not a symbol of the grammar" % s)
            if kind == NODE_ROOT and index[rhs[0]] not in self.root_index:
                raise ValueError("root rule %s -> %s is not in the grammar"
                                 % (self.root_label, rhs[0]))
            if kind == NODE_BINARY and (index[label], index[rhs[0]], index[rhs[1]]) \
                    not in self.binary_index:
                raise ValueError("binary rule %s -> %s %s is not in the grammar"
                                 % ((label,) + rhs))
            if kind == NODE_UNARY and (index[label], index[rhs[0]]) not in self.unary_index:
                raise ValueError("unary rule %s -> %s is not in the grammar" % (label, rhs[0]))
            if kind == NODE_LEXICAL and not ((px.position == start)
                                             & (px.tag == index[label])).any():
                raise ValueError("tag %s is not a candidate for the word %r"
                                 % (label, rhs[0]))
        return nodes

    def check_output(self, x, y):
        """Raise ``ValueError`` unless ``y`` is a CNF tree over ``x`` in the tree space."""
        self._checked_nodes(self.prepare(x), y)

