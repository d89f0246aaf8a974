"""Constituency parsing as a Structure: CNF trees scored by rule and rule-word features.

Tree space
----------
Trees are in the Chomsky-normal form that :func:`linclass.parsing.treebank_to_cnf`
produces (and that CKY searches):

* a root node (label ``root_label``, ``"ROOT"`` by default) with one child,
  the *upper* node of the whole sentence;
* every span holds a *lower* node -- a preterminal ``(T word)`` for one word,
  a binary node ``(A B C)`` otherwise -- and optionally one unary node
  ``(A (B ...))`` above it (the upper node; without a unary rule the lower
  node is the upper node).  Two unary rules over the same span are not part
  of the space (:func:`~linclass.parsing.treebank_to_cnf` collapses unary
  chains into single labels such as ``S+VP``).

Joint features (Collins' "rule features" and the lecture's
``phi_{NP->N}(y)``, ``phi_{N->cat}(x, y)``)
----------------------------------------------------------------
``Phi(x, y)`` counts

* each binary rule ``A -> B C``, unary rule ``A -> B`` and root rule
  ``ROOT -> X`` of the grammar used in ``y``;
* each rule-word pair ``T -> word`` (a preterminal over a word seen with it
  in training) and each rule-signature pair ``T -> signature(word)`` (the
  Berkeley-style unknown-word class of :func:`word_signature`), so that words
  never seen in training are scored by their shape.

Candidate tags of a word are the tags it had in training; an unseen word gets
the tags that training words of the same signature had (backing off to
coarser signatures, then to every tag seen on a rare word).

Loss
----
``Delta(y, y')`` = number of nodes in one tree but not the other, a node
being (label, start, end, layer) with layer 0 for lower (preterminal or
binary) and 1 for unary nodes (the root, identical in all trees, is not
counted).  This labelled-bracket loss is the false positives plus the false
negatives of the brackets, preterminals included; it is zero exactly when the
trees are equal and decomposes over the chart, so the loss-augmented argmax
is one CKY pass with per-node bonuses (Taskar et al., 2004).

References
----------
B. Taskar, D. Klein, M. Collins, D. Koller, C. Manning. Max-margin parsing.
EMNLP 2004.
M. Collins. Discriminative training methods for hidden Markov models.
EMNLP 2002 (the perceptron).
S. Petrov, L. Barrett, R. Thibaux, D. Klein. Learning accurate, compact and
interpretable tree annotation. ACL 2006 (unknown-word signatures).
"""
from collections import Counter, defaultdict

import numpy as np

from .._core._cky import cky_viterbi
from ..datasets.trees import Tree
from ..structured.base import Structure

__all__ = ["GrammarStructure", "NoParseError", "CompiledGrammar", "word_signature", "signature_backoffs",
           "cnf_tree_nodes"]

NODE_ROOT, NODE_UNARY, NODE_BINARY, NODE_LEXICAL = 0, 1, 2, 3

# ------------------------------------------------------- unknown words --

_SUFFIXES = ("ing", "ion", "ed", "er", "est", "ly", "ity", "al", "ble", "ive", "ous",
             "ment", "ness", "s", "y")


def word_signature(word, *, sentence_initial=False):
    """Berkeley-style unknown-word class of a word (English).

    The signature is ``UNK`` followed by shape features: capitalisation
    (``-INITC`` first character upper case and not at the sentence start,
    ``-CAPS`` all letters upper case, ``-LC`` lower case, ``-MIXED``), digits
    (``-NUM`` if any), dashes (``-DASH``), and one frequent English suffix
    (``-s``, ``-ed``, ``-ing``, ``-ly``, ...) for words of at least four
    characters.

    Parameters
    ----------
    word : str
    sentence_initial : bool
        Capitalisation at the start of a sentence says little; such words
        get ``-INITC0`` instead of ``-INITC``.

    Returns
    -------
    str

    References
    ----------
    S. Petrov et al. (2006), the Berkeley parser's ``SimpleLexicon`` /
    ``getSignature`` (unknown-word level 5).
    """
    if not isinstance(word, str) or not word:
        raise ValueError("a word must be a non-empty str, got %r" % (word,))
    parts = ["UNK"]
    letters = [ch for ch in word if ch.isalpha()]
    if letters:
        if all(ch.isupper() for ch in letters):
            parts.append("CAPS")
        elif word[0].isupper():
            parts.append("INITC0" if sentence_initial else "INITC")
        elif all(ch.islower() for ch in letters):
            parts.append("LC")
        else:
            parts.append("MIXED")
    if any(ch.isdigit() for ch in word):
        parts.append("NUM")
    if "-" in word:
        parts.append("DASH")
    lower = word.lower()
    if len(word) >= 4 and letters:
        for suffix in _SUFFIXES:
            if lower.endswith(suffix):
                parts.append("s=" + suffix)
                break
    return "-".join(parts)


def signature_backoffs(signature):
    """The signature, then coarser ones: without the suffix, then shape only, then ``UNK``."""
    parts = signature.split("-")
    out = [signature]
    if parts[-1].startswith("s="):
        parts = parts[:-1]
        out.append("-".join(parts))
    if len(parts) > 2:
        out.append("-".join(parts[:2]))
    if out[-1] != "UNK":
        out.append("UNK")
    return out


# --------------------------------------------------------- CNF trees --

def cnf_tree_nodes(tree, *, root_label=None):
    """The nodes of a CNF tree (see the module docs) as (kind, label, start, end, rhs).

    ``kind`` is 0 root, 1 unary, 2 binary, 3 lexical; ``rhs`` is the child
    label(s) (``(B,)``, ``(B, C)``) or the word (``(word,)``).  With
    ``root_label`` None the tree has no root node: its top node is the upper
    node of the sentence.  Returns (nodes, words).

    Raises
    ------
    ValueError
        When the tree is not in that normal form (three children, two unary
        rules over one span, a preterminal with several words, a word next to
        a constituent, a wrong root label).
    """
    if not isinstance(tree, Tree):
        raise ValueError("a parse must be a linclass Tree, got %s" % type(tree).__name__)
    nodes = []
    words = []
    if root_label is not None:
        if tree.label != root_label or len(tree.children) != 1 \
                or not isinstance(tree.children[0], Tree):
            raise ValueError("a CNF tree must have the root %r with exactly one constituent "
                             "child, got %s" % (root_label, _short(tree)))
        nodes.append([NODE_ROOT, root_label, 0, None, (tree.children[0].label,)])
        top = tree.children[0]
    else:
        top = tree
    # stack items: (tree, may_be_unary) or an index into nodes to close
    stack = [(top, True)]
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            nodes[item][3] = len(words)
            continue
        node, may_be_unary = item
        children = node.children
        if not children:
            raise ValueError("constituent (%s) has no children" % node.label)
        if all(isinstance(c, str) for c in children):
            if len(children) != 1:
                raise ValueError("preterminal (%s ...) covers %d words; CNF needs one"
                                 % (node.label, len(children)))
            nodes.append([NODE_LEXICAL, node.label, len(words), len(words) + 1, (children[0],)])
            words.append(children[0])
            continue
        if any(isinstance(c, str) for c in children):
            raise ValueError("constituent %s mixes words and constituents" % _short(node))
        if len(children) == 1:
            if not may_be_unary:
                raise ValueError("two unary rules over one span at %s; the CNF tree space "
                                 "allows one (collapse unary chains)" % _short(node))
            kind, may_child = NODE_UNARY, False
        elif len(children) == 2:
            kind, may_child = NODE_BINARY, True
        else:
            raise ValueError("constituent %s has %d children; CNF needs at most 2"
                             % (_short(node), len(children)))
        stack.append(len(nodes))
        nodes.append([kind, node.label, len(words), None, tuple(c.label for c in children)])
        for child in reversed(children):
            stack.append((child, may_child))
    if root_label is not None:
        nodes[0][3] = len(words)
    return [tuple(n) for n in nodes], words


def _short(tree):
    text = str(tree)
    return text if len(text) <= 60 else text[:56] + " ..."


# ----------------------------------------------------- compiled grammar --

def _check_scores(values, name, length=None):
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length):
        raise ValueError("%s must be a 1-D array of %s values, got shape %r"
                         % (name, length, arr.shape))
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError("%s contains NaN or +inf" % name)
    return arr


class CompiledGrammar:
    """Symbols and rules of a CNF grammar in the layout of the CKY kernel.

    Parameters
    ----------
    symbols : sequence of str
        Nonterminals and preterminals; symbol ids are positions here.
    binary : array (R, 3) of int
        Rules ``parent -> left right`` as symbol ids.
    unary : array (U, 2) of int
        Rules ``parent -> child``; ``parent != child``.

    Scores are given per call of :meth:`viterbi` in the order of ``binary`` /
    ``unary`` (the kernel's sorted order is internal).
    """

    def __init__(self, symbols, binary, unary):
        self.symbols = list(symbols)
        self.index = {s: k for k, s in enumerate(self.symbols)}
        if len(self.index) != len(self.symbols):
            raise ValueError("grammar symbols must be distinct")
        N = len(self.symbols)
        if N == 0:
            raise ValueError("a grammar needs at least one symbol")
        binary = np.asarray(binary, dtype=np.int64).reshape(-1, 3)
        unary = np.asarray(unary, dtype=np.int64).reshape(-1, 2)
        for arr, what in ((binary, "binary"), (unary, "unary")):
            if arr.size and (arr.min() < 0 or arr.max() >= N):
                raise ValueError("%s rules refer to symbol ids outside [0, %d)" % (what, N))
        if unary.size and (unary[:, 0] == unary[:, 1]).any():
            k = int(np.flatnonzero(unary[:, 0] == unary[:, 1])[0])
            raise ValueError("unary rule %s -> %s rewrites a symbol as itself"
                             % (self.symbols[unary[k, 0]], self.symbols[unary[k, 0]]))
        self.binary = binary
        self.unary = unary
        self.n_symbols = N
        # kernel layout: binary rules sorted by left child, unary by child
        self._bin_order = np.argsort(binary[:, 1], kind="stable")
        b = binary[self._bin_order]
        self._bin_left = np.ascontiguousarray(b[:, 1], dtype=np.int32)
        self._bin_right = np.ascontiguousarray(b[:, 2], dtype=np.int32)
        self._bin_parent = np.ascontiguousarray(b[:, 0], dtype=np.int32)
        self._bin_ptr = np.searchsorted(self._bin_left, np.arange(N + 1)).astype(np.int32)
        self._un_order = np.argsort(unary[:, 1], kind="stable")
        u = unary[self._un_order]
        self._un_child = np.ascontiguousarray(u[:, 1], dtype=np.int32)
        self._un_parent = np.ascontiguousarray(u[:, 0], dtype=np.int32)
        self._un_ptr = np.searchsorted(self._un_child, np.arange(N + 1)).astype(np.int32)

    def viterbi(self, lexical, binary_score, unary_score, root_score, gold=None, *,
                span_score=None, beam_size=0):
        """Run CKY.  Returns ``(score, nodes)``; ``nodes`` rows (kind, symbol,
        start, end, rule) with rule ids in the caller's order; score -inf and no
        nodes when nothing covers the sentence.

        ``gold`` (loss augmentation): a list of (symbol, start, end, layer).
        ``span_score``: ``(n_cells, n_symbols)`` finite scores added to the lower
        node of each symbol over each span (cells in the kernel's order).
        ``beam_size``: 0 for exact search, else the upper nodes kept per cell.
        """
        lexical = np.ascontiguousarray(lexical, dtype=np.float64)
        if lexical.ndim != 2 or lexical.shape[1] != self.n_symbols:
            raise ValueError("lexical scores must have shape (n_words, %d), got %r"
                             % (self.n_symbols, lexical.shape))
        n = lexical.shape[0]
        if n == 0:
            raise ValueError("cannot parse an empty sentence")
        if np.isnan(lexical).any() or np.isposinf(lexical).any():
            raise ValueError("lexical scores contain NaN or +inf")
        binary_score = _check_scores(binary_score, "binary rule scores", len(self.binary))
        unary_score = _check_scores(unary_score, "unary rule scores", len(self.unary))
        root_score = _check_scores(root_score, "root scores", self.n_symbols)
        kwargs = {}
        beam_size = int(beam_size)
        if beam_size < 0:
            raise ValueError("beam_size must be >= 0, got %d" % beam_size)
        if span_score is not None:
            span_score = np.ascontiguousarray(span_score, dtype=np.float64)
            if span_score.shape != (n * (n + 1) // 2, self.n_symbols):
                raise ValueError("span scores must have shape (%d, %d), got %r"
                                 % (n * (n + 1) // 2, self.n_symbols, span_score.shape))
            if not np.isfinite(span_score).all():
                raise ValueError("span scores contain NaN or inf")
            kwargs["span_score"] = span_score
        if gold is not None:
            n_cells = n * (n + 1) // 2
            keys = []
            for symbol, start, end, layer in gold:
                if not (0 <= start < end <= n) or layer not in (0, 1) \
                        or not 0 <= symbol < self.n_symbols:
                    raise ValueError("gold node %r is outside the chart" % ((symbol, start,
                                                                            end, layer),))
                cell = start * n - (start * (start - 1)) // 2 + (end - start - 1)
                keys.append((2 * cell + layer, symbol))
            keys.sort()
            slots = np.array([k for k, _ in keys], dtype=np.int64)
            kwargs.update(loss_augmented=True,
                          gold_ptr=np.searchsorted(slots, np.arange(2 * n_cells + 1)).astype(
                              np.int64),
                          gold_symbol=np.array([s for _, s in keys], dtype=np.int32))
        score, nodes = cky_viterbi(
            lexical=lexical, binary_left_ptr=self._bin_ptr, binary_left=self._bin_left,
            binary_right=self._bin_right, binary_parent=self._bin_parent,
            binary_score=np.ascontiguousarray(binary_score[self._bin_order]),
            unary_child_ptr=self._un_ptr, unary_child=self._un_child,
            unary_parent=self._un_parent,
            unary_score=np.ascontiguousarray(unary_score[self._un_order]),
            root_score=root_score, beam_size=beam_size, **kwargs)
        if nodes.shape[0]:
            b = nodes[:, 0] == NODE_BINARY
            nodes[b, 4] = self._bin_order[nodes[b, 4]]
            u = nodes[:, 0] == NODE_UNARY
            nodes[u, 4] = self._un_order[nodes[u, 4]]
        return score, nodes


def nodes_to_tree(nodes, symbols, words, *, root_label, unary_expand=None):
    """Build a :class:`Tree` from the kernel's pre-order node rows.

    ``root_label`` None drops the root node (its child becomes the tree).
    ``unary_expand(rule)`` optionally maps a unary rule to the list of
    intermediate labels between parent and child (unary closure chains).
    """
    stack = []
    for k in range(len(nodes) - 1, -1, -1):       # reverse pre-order: children first
        kind, sym, start, end, rule = (int(v) for v in nodes[k])
        if kind == NODE_LEXICAL:
            stack.append(Tree(symbols[sym], [words[start]]))
        elif kind == NODE_ROOT:
            if root_label is not None:
                stack.append(Tree(root_label, [stack.pop()]))
        elif kind == NODE_UNARY:
            child = stack.pop()
            if unary_expand is not None:
                for label in reversed(unary_expand(rule)):
                    child = Tree(label, [child])
            stack.append(Tree(symbols[sym], [child]))
        else:
            left = stack.pop()
            right = stack.pop()
            stack.append(Tree(symbols[sym], [left, right]))
    return stack.pop()


def _slack_rescaled_cky(grammar, lexical, binary, unary, root, span, gold, n_gold,
                        gold_score):
    """The slack-rescaled argmax of :meth:`GrammarStructure.slack_rescaled_decode`
    as pre-order node rows, or None when nothing covers the sentence.

    Chart entries are vectors over ``d + D`` (``D = 4 n``, the most nodes a
    tree can have): ``low[c][A, d + D]`` the best score of a lower node
    ``A`` over cell ``c`` whose subtree has node-count ``d``, ``up`` the same
    for upper nodes (the lower node itself, or one unary rule over it).
    """
    n, N = lexical.shape
    D = 4 * n
    L = 2 * D + 1
    neg = -np.inf
    cells = {}
    for length in range(1, n + 1):
        for i in range(n - length + 1):
            j = i + length
            low = np.full((N, L), neg)
            bp_low = {}                      # (A, d index) -> (k, rule, left d index)
            c = i * n - (i * (i - 1)) // 2 + (j - i - 1)
            if length == 1:
                for A in np.flatnonzero(np.isfinite(lexical[i])).tolist():
                    bonus = -1 if (A, i, j, 0) in gold else 1
                    low[A, D + bonus] = lexical[i, A]
            else:
                for k in range(i + 1, j):
                    up_l, up_r = cells[(i, k)][1], cells[(k, j)][1]
                    for r, (A, B, C) in enumerate(grammar.binary.tolist()):
                        a, b = up_l[B], up_r[C]
                        fa, fb = np.flatnonzero(np.isfinite(a)), np.flatnonzero(np.isfinite(b))
                        if not fa.size or not fb.size:
                            continue
                        bonus = -1 if (A, i, j, 0) in gold else 1
                        for p in fa:
                            for q in fb:
                                t = p + q - D + bonus        # (p-D) + (q-D) + bonus + D
                                s = a[p] + b[q] + binary[r]
                                if s > low[A, t]:
                                    low[A, t] = s
                                    bp_low[(A, t)] = (k, r, p)
            if span is not None:
                low += span[c][:, None]
            up = low.copy()
            bp_up = {}                       # (A, d index) -> (unary rule, child d index)
            for u, (A, B) in enumerate(grammar.unary.tolist()):
                bonus = -1 if (A, i, j, 1) in gold else 1
                for p in np.flatnonzero(np.isfinite(low[B])):
                    s = low[B, p] + unary[u]
                    if s > up[A, p + bonus]:
                        up[A, p + bonus] = s
                        bp_up[(A, p + bonus)] = (u, p)
            cells[(i, j)] = (low, up, bp_low, bp_up)
    top = cells[(0, n)][1] + root[:, None]
    best, best_key = neg, None
    for X, t in zip(*(a.tolist() for a in np.nonzero(np.isfinite(top)))):
        value = (n_gold + t - D) * (1.0 + top[X, t] - gold_score)
        if best_key is None or value > best:
            best, best_key = value, (X, t)
    if best_key is None:
        return None
    rows = [(NODE_ROOT, -1, 0, n, -1)]
    stack = [(1, best_key[0], 0, n, best_key[1])]
    while stack:
        layer, A, i, j, t = stack.pop()
        low, up, bp_low, bp_up = cells[(i, j)]
        if layer == 1:
            if (A, t) in bp_up and up[A, t] > low[A, t]:
                u, p = bp_up[(A, t)]
                rows.append((NODE_UNARY, A, i, j, u))
                A, t = int(grammar.unary[u, 1]), p
            stack.append((0, A, i, j, t))
            continue
        if j == i + 1:
            rows.append((NODE_LEXICAL, A, i, j, -1))
            continue
        k, r, p = bp_low[(A, t)]
        bonus = -1 if (A, i, j, 0) in gold else 1
        q = t - p + D - bonus
        rows.append((NODE_BINARY, A, i, j, r))
        stack.append((1, int(grammar.binary[r, 2]), k, j, q))
        stack.append((1, int(grammar.binary[r, 1]), i, k, p))
    return np.array(rows, dtype=np.int64)


# ------------------------------------------------------------- inputs --

class NoParseError(ValueError):
    """No tree of the grammar covers the sentence."""


class ParserInput:
    """A sentence prepared for :class:`GrammarStructure`: words, candidate
    (position, tag) pairs and their feature indices (-1: no such feature)."""

    __slots__ = ("words", "position", "tag", "word_feature", "signature_feature")

    def __init__(self, words, position, tag, word_feature, signature_feature):
        self.words = words
        self.position = position
        self.tag = tag
        self.word_feature = word_feature
        self.signature_feature = signature_feature

    def __len__(self):
        return len(self.words)


def _check_words(x):
    if isinstance(x, str) or not hasattr(x, "__len__"):
        raise ValueError("a sentence must be a sequence of word strings, got %s"
                         % type(x).__name__)
    if getattr(x, "ndim", 1) != 1:
        raise ValueError("a sentence must be a one-dimensional sequence of words, got an "
                         "array of shape %r" % (getattr(x, "shape", None),))
    words = tuple(x)
    if not words:
        raise ValueError("cannot parse an empty sentence")
    for k, word in enumerate(words):
        if not isinstance(word, str) or not word:
            raise ValueError("word %d of the sentence is %r; words must be non-empty str"
                             % (k, word))
    # plain str: numpy string arrays give np.str_, which would leak into the trees
    return tuple(word if type(word) is str else str(word) for word in words)


# ------------------------------------------------------------ structure --

class GrammarStructure(Structure):
    """Discriminative CKY parsing as a :class:`~linclass.structured.Structure`.

    Build it from CNF training trees with :meth:`from_trees`; ``x`` is a
    sentence (sequence of words), ``y`` a CNF tree (see the module docs).

    Parameters
    ----------
    symbols : list of str
    binary_rules, unary_rules, root_rules : lists of label tuples
        ``(A, B, C)``, ``(A, B)``, ``(X,)``: the rules that get a feature and
        may be used by a parse.
    word_tags : dict word -> list of tags
        The rule-word features ``T -> word`` (and each known word's candidate tags).
    signature_tags : dict signature -> list of tags
        The rule-signature features ``T -> signature`` (and the candidate tags
        of unknown words, by signature with back-off).
    root_label : str
    """

    def __init__(self, symbols, binary_rules, unary_rules, root_rules, word_tags,
                 signature_tags, *, root_label="ROOT"):
        self.root_label = root_label
        self.symbols = list(symbols)
        # the constructor arguments, for persistence (feature ids follow their order)
        self.spec = {"symbols": list(symbols), "binary_rules": [tuple(r) for r in binary_rules],
                     "unary_rules": [tuple(r) for r in unary_rules],
                     "root_rules": [tuple(r) for r in root_rules],
                     "word_tags": {w: list(t) for w, t in word_tags.items()},
                     "signature_tags": {s: list(t) for s, t in signature_tags.items()},
                     "root_label": root_label}
        index = {s: k for k, s in enumerate(self.symbols)}
        self.symbol_index = index

        def ids(rules, arity, what):
            out = []
            for rule in rules:
                if len(rule) != arity:
                    raise ValueError("%s rule %r must have %d labels" % (what, rule, arity))
                try:
                    out.append([index[s] for s in rule])
                except KeyError as exc:
                    raise ValueError("%s rule %r uses the unknown symbol %s"
                                     % (what, rule, exc)) from None
            return np.array(out, dtype=np.int64).reshape(-1, arity)

        binary = ids(binary_rules, 3, "binary")
        unary = ids(unary_rules, 2, "unary")
        root = ids(root_rules, 1, "root")[:, 0]
        if root.size == 0:
            raise ValueError("the grammar has no root rule: no symbol can be the child of %r"
                             % root_label)
        self.grammar = CompiledGrammar(self.symbols, binary, unary)
        self.binary_index = {tuple(r): k for k, r in enumerate(binary.tolist())}
        self.unary_index = {tuple(r): k for k, r in enumerate(unary.tolist())}
        n_bin, n_un, n_root = len(binary), len(unary), len(root)
        self.root_symbols = root
        self.root_index = {int(s): k for k, s in enumerate(root)}
        self._offset_unary = n_bin
        self._offset_root = n_bin + n_un
        offset = n_bin + n_un + n_root
        self.word_feature = {}
        self.word_tags = {}
        for word, tags in word_tags.items():
            tag_ids = sorted({index[t] for t in tags})
            self.word_tags[word] = np.array(tag_ids, dtype=np.int64)
            for t in tag_ids:
                self.word_feature[(t, word)] = offset
                offset += 1
        self.signature_feature = {}
        self.signature_tags = {}
        for sig, tags in signature_tags.items():
            tag_ids = sorted({index[t] for t in tags})
            self.signature_tags[sig] = np.array(tag_ids, dtype=np.int64)
            for t in tag_ids:
                self.signature_feature[(t, sig)] = offset
                offset += 1
        open_class = sorted({t for tags in self.signature_tags.values() for t in tags.tolist()})
        self.open_class_tags = np.array(open_class, dtype=np.int64)
        if not self.word_tags and not open_class:
            raise ValueError("the grammar has no lexical rules")
        self.n_features = int(offset)

    # -- construction -----------------------------------------------------------
    @classmethod
    def from_trees(cls, trees, *, rare_threshold=1, root_label="ROOT"):
        """The structure whose rules and lexical features are those of CNF training trees.

        Words seen at most ``rare_threshold`` times also give rule-signature
        features to their tags (every word gets its signature features
        scored, but only rare words define which tags a signature allows).
        """
        binary, unary, root = {}, {}, {}
        word_tags = defaultdict(dict)
        word_counts = Counter()
        tagged = []
        symbols = {}
        for k, tree in enumerate(trees):
            try:
                nodes, words = cnf_tree_nodes(tree, root_label=root_label)
            except ValueError as exc:
                raise ValueError("training tree %d: %s" % (k, exc)) from None
            for kind, label, start, end, rhs in nodes:
                if kind == NODE_ROOT:
                    root.setdefault((rhs[0],), None)
                    continue
                symbols.setdefault(label, None)
                if kind == NODE_BINARY:
                    binary.setdefault((label,) + rhs, None)
                elif kind == NODE_UNARY:
                    unary.setdefault((label,) + rhs, None)
                else:
                    word_tags[rhs[0]].setdefault(label, None)
                    word_counts[rhs[0]] += 1
                    tagged.append((rhs[0], label, start == 0))
        if not symbols:
            raise ValueError("no training trees")
        signature_tags = defaultdict(dict)
        for word, tag, initial in tagged:
            if word_counts[word] <= rare_threshold:
                for sig in signature_backoffs(word_signature(word, sentence_initial=initial)):
                    signature_tags[sig].setdefault(tag, None)
        return cls(list(symbols), list(binary), list(unary), list(root),
                   {w: list(t) for w, t in word_tags.items()},
                   {s: list(t) for s, t in signature_tags.items()}, root_label=root_label)

    # -- inputs -----------------------------------------------------------------
    def prepare(self, x):
        """A :class:`ParserInput` for sentence ``x`` (returned unchanged if it is one)."""
        if isinstance(x, ParserInput):
            return x
        words = _check_words(x)
        position, tag, wf, sf = [], [], [], []
        for i, word in enumerate(words):
            sigs = signature_backoffs(word_signature(word, sentence_initial=(i == 0)))
            tags = self.word_tags.get(word)
            if tags is None:
                for sig in sigs:
                    tags = self.signature_tags.get(sig)
                    if tags is not None:
                        break
                else:
                    tags = self.open_class_tags
            if tags.size == 0:
                raise ValueError("word %r (position %d) has no candidate tag" % (word, i))
            for t in tags.tolist():
                position.append(i)
                tag.append(t)
                wf.append(self.word_feature.get((t, word), -1))
                f = -1
                for sig in sigs:        # the most specific signature feature that exists
                    f = self.signature_feature.get((t, sig), -1)
                    if f >= 0:
                        break
                sf.append(f)
        return ParserInput(words, np.array(position, dtype=np.int64),
                           np.array(tag, dtype=np.int64), np.array(wf, dtype=np.int64),
                           np.array(sf, dtype=np.int64))

    def batch_inputs(self, X):
        return [self.prepare(x) for x in X]

    def _lexical(self, w, px):
        lex = np.full((len(px.words), self.grammar.n_symbols), -np.inf)
        score = np.where(px.word_feature >= 0, w[np.maximum(px.word_feature, 0)], 0.0) \
            + np.where(px.signature_feature >= 0, w[np.maximum(px.signature_feature, 0)], 0.0)
        lex[px.position, px.tag] = score
        return lex

    def _scores(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError("w must have shape (%d,), got %r" % (self.n_features, w.shape))
        b = w[:self._offset_unary]
        u = w[self._offset_unary:self._offset_root]
        root = np.full(self.grammar.n_symbols, -np.inf)
        root[self.root_symbols] = w[self._offset_root:self._offset_root + len(self.root_symbols)]
        return w, b, u, root

    def _score_arrays(self, w, px):
        """(lexical (n, N), binary (R,), unary (U,), root (N,), span (n_cells, N) or
        None): the chart scores of ``w`` for the prepared sentence ``px``."""
        w, b, u, root = self._scores(w)
        return self._lexical(w, px), b, u, root, None

    def slack_rescaled_decode(self, w, x, y):
        """``argmax_y' loss(y, y') (1 + w . Phi(x, y') - w . Phi(x, y))``, exactly.

        The loss is ``|y| + d(y')`` with ``d`` the sum over the nodes of
        ``y'`` of -1 (a node of ``y``) or +1 (not in ``y``); CKY with one more
        chart dimension, ``d``, finds the best score ``S(d)`` of every value
        of ``d``, and the answer is the tree of the ``d`` maximising
        ``(|y| + d)(1 + S(d) - w . Phi(x, y))`` (for a fixed loss the
        objective grows with the score).  Time and memory grow with the
        number of words cubed times the grammar (times ``8 n + 1`` loss
        values): a pure-Python/NumPy dynamic program meant for small grammars
        and short sentences (Tsochantaridis et al., 2005, slack rescaling;
        Sarawagi and Gupta, 2008, the loss as an extra state dimension).
        """
        px = self.prepare(x)
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,) or not np.isfinite(w).all():
            raise ValueError("w must be %d finite values, got shape %r"
                             % (self.n_features, w.shape))
        nodes, words = cnf_tree_nodes(y, root_label=self.root_label)
        if tuple(words) != tuple(px.words):
            raise ValueError("the tree's words differ from the sentence")
        gold, n_gold = set(), 0
        for kind, label, start, end, _ in nodes:
            if kind == NODE_ROOT:
                continue
            n_gold += 1
            sym = self.symbol_index.get(label)
            if sym is not None:
                gold.add((sym, start, end, 1 if kind == NODE_UNARY else 0))
        idx, val = self.joint_feature(px, y)
        gold_score = float(w[np.asarray(idx, dtype=np.int64)] @ np.asarray(val))
        lexical, binary, unary, root, span = self._score_arrays(w, px)
        rows = _slack_rescaled_cky(self.grammar, lexical, binary, unary, root, span, gold,
                                   n_gold, gold_score)
        if rows is None:
            raise NoParseError("no parse of %r under the grammar" % (" ".join(px.words),))
        return nodes_to_tree(rows, self.symbols, px.words, root_label=self.root_label)

    def _decode(self, w, x, gold=None):
        px = self.prepare(x)
        w, b, u, root = self._scores(w)
        score, nodes = self.grammar.viterbi(self._lexical(w, px), b, u, root, gold=gold)
        if not nodes.shape[0]:
            raise NoParseError("no parse of %r under the grammar" % (" ".join(px.words),))
        return nodes_to_tree(nodes, self.symbols, px.words, root_label=self.root_label)

    # -- protocol -----------------------------------------------------------------
    def decode(self, w, x):
        """The best CNF tree of sentence ``x`` under weights ``w`` (CKY)."""
        return self._decode(w, x)

    def loss_augmented_decode(self, w, x, y):
        """``argmax_y' w . Phi(x, y') + loss(y, y')`` by loss-augmented CKY."""
        px = self.prepare(x)
        gold = []
        nodes, words = cnf_tree_nodes(y, root_label=self.root_label)
        if len(words) != len(px.words):
            raise ValueError("the tree has %d words, the sentence %d"
                             % (len(words), len(px.words)))
        for kind, label, start, end, _ in nodes:
            if kind == NODE_ROOT:
                continue
            sym = self.symbol_index.get(label)
            if sym is None:      # a gold node no parse can contain: no bonus needed
                continue
            gold.append((sym, start, end, 1 if kind == NODE_UNARY else 0))
        return self._decode(w, px, gold=gold)

    def _node_set(self, y):
        nodes, _ = cnf_tree_nodes(y, root_label=self.root_label)
        return Counter((label, start, end, kind == NODE_UNARY)
                       for kind, label, start, end, _ in nodes if kind != NODE_ROOT)

    def loss(self, y, y_hat):
        """Nodes (label, span, layer) in one tree and not the other (multiset)."""
        a, b = self._node_set(y), self._node_set(y_hat)
        return float(sum(((a - b) + (b - a)).values()))

    def joint_feature(self, x, y):
        px = self.prepare(x)
        nodes, words = cnf_tree_nodes(y, root_label=self.root_label)
        if tuple(words) != px.words:
            raise ValueError("the tree's words %r differ from the sentence %r"
                             % (" ".join(words), " ".join(px.words)))
        idx = []
        index = self.symbol_index
        for kind, label, start, end, rhs in nodes:
            try:
                if kind == NODE_ROOT:
                    f = self.root_index.get(index[rhs[0]])
                    if f is not None:
                        idx.append(self._offset_root + f)
                elif kind == NODE_BINARY:
                    f = self.binary_index.get((index[label], index[rhs[0]], index[rhs[1]]))
                    if f is not None:
                        idx.append(f)
                elif kind == NODE_UNARY:
                    f = self.unary_index.get((index[label], index[rhs[0]]))
                    if f is not None:
                        idx.append(self._offset_unary + f)
                else:
                    t = index[label]
                    sel = (px.position == start) & (px.tag == t)
                    if sel.any():
                        k = int(np.flatnonzero(sel)[0])
                        for f in (px.word_feature[k], px.signature_feature[k]):
                            if f >= 0:
                                idx.append(int(f))
            except KeyError:
                continue    # unknown symbol: no feature (check_output rejects such trees)
        idx = np.array(idx, dtype=np.int64)
        return idx, np.ones(idx.size)

    def check_output(self, x, y):
        """Raise ``ValueError`` unless ``y`` is a CNF tree over ``x`` that CKY can produce."""
        px = self.prepare(x)
        nodes, words = cnf_tree_nodes(y, root_label=self.root_label)
        if tuple(words) != px.words:
            raise ValueError("the tree's words %r differ from the sentence %r"
                             % (" ".join(words), " ".join(px.words)))
        index = self.symbol_index
        for kind, label, start, end, rhs in nodes:
            labels = (label,) + rhs if kind != NODE_LEXICAL else (label,)
            if kind == NODE_ROOT:
                labels = rhs
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
