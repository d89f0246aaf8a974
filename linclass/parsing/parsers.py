"""Constituency parsing: treebank PCFGs with Viterbi-CKY, and a discriminative CKY parser.

* :func:`treebank_to_cnf` / :func:`debinarize` -- treebank trees to the
  Chomsky normal form that CKY searches, and back;
* :class:`PCFG` -- probabilistic context-free grammars, estimated from a
  treebank by relative frequency (:meth:`PCFG.from_treebank`) or written by
  hand (:meth:`PCFG.from_string`, :meth:`PCFG.from_rules`), parsed with
  Viterbi-CKY in Cython (:mod:`linclass._core._cky`) with an unknown-word
  model (Berkeley-style signatures);
* :class:`DiscriminativeParser` -- ``F(x, y) = w . Phi(x, y)`` over CNF trees
  with rule and rule-word features (:class:`~linclass.structured.GrammarStructure`),
  trained by the averaged structured perceptron or the structural SVM with a
  loss-augmented CKY.

Evaluation: :mod:`linclass.metrics` (PARSEVAL / evalb).

CNF conversion
--------------
:func:`treebank_to_cnf` applies, in order: function tags and indices removed
(``NP-SBJ-1`` -> ``NP``), ``-NONE-`` elements and the constituents they leave
empty removed, unary chains above phrasal nodes collapsed into one label
joined by ``+`` (``(S (VP ...))`` -> ``(S+VP ...)``; a phrase over a single
preterminal stays a unary rule), optional parent annotation
(``vertical_markov=2``: ``NP^S``), right-factored binarisation with
horizontal Markovisation (the intermediate symbol ``@NP~JJ~NN`` remembers the
parent and the next ``horizontal_markov`` children), and a root node
``ROOT``.  :func:`debinarize` undoes all of it except the removals.  The
characters ``+ ^ ~`` and a leading ``@`` are therefore reserved and rejected
in treebank labels (the PTB uses none of them).

References
----------
M. Johnson. PCFG models of linguistic tree representations. Computational
Linguistics 24(4), 1998 (parent annotation).
D. Klein and C. Manning. Accurate unlexicalized parsing. ACL 2003
(Markovisation).
S. Petrov, L. Barrett, R. Thibaux, D. Klein. Learning accurate, compact, and
interpretable tree annotation. ACL 2006 (unknown-word signatures).
B. Taskar, D. Klein, M. Collins, D. Koller, C. Manning. Max-margin parsing.
EMNLP 2004.
"""
import math
import re
from collections import Counter, defaultdict

import numpy as np

from .._validation import check_is_fitted, check_positive, check_random_state
from ..base import BaseEstimator
from ..datasets.trees import Tree
from .grammar import NoParseError as _NoParse
from .grammar import (CompiledGrammar, GrammarStructure, _check_words, nodes_to_tree,
                      signature_backoffs, word_signature)
from .spans import SpanGrammarStructure

__all__ = ["PCFG", "DiscriminativeParser", "treebank_to_cnf", "debinarize",
           "word_signature"]

_RESERVED = re.compile(r"[+^~]|^@")


# ------------------------------------------------------------ CNF conversion --

def _clean(tree):
    if not isinstance(tree, Tree):
        raise ValueError("expected a linclass Tree, got %s" % type(tree).__name__)
    cleaned = tree.strip_function_tags().remove_empty_elements()
    if cleaned is None:
        raise ValueError("the tree %s holds only empty elements" % _short(tree))
    if cleaned.label == "":
        if len(cleaned.children) == 1 and isinstance(cleaned.children[0], Tree):
            cleaned = cleaned.children[0]
        else:
            raise ValueError("unlabeled root with %d children: %s"
                             % (len(cleaned.children), _short(tree)))
    return cleaned


def _short(tree):
    text = str(tree)
    return text if len(text) <= 70 else text[:66] + " ..."


def _transform(root, expand, build):
    """A tree transformation without recursion (trees of any depth).

    ``expand(item)`` returns ``(info, child_items)``; ``build(info, results)``
    makes the result of an item from its info and the results of its
    child items (in order), children first."""
    results = []
    stack = [(root, None, -1)]
    while stack:
        item, info, n_children = stack.pop()
        if n_children < 0:
            info, children = expand(item)
            stack.append((None, info, len(children)))
            stack.extend((child, None, -1) for child in reversed(children))
        else:
            cut = len(results) - n_children
            done = results[cut:]
            del results[cut:]
            results.append(build(info, done))
    return results.pop()


def _check_label(label):
    if _RESERVED.search(label) or not label:
        raise ValueError("label %r is empty or uses a character reserved by the CNF "
                         "conversion (+ ^ ~, or a leading @)" % label)


def _collapse_expand(tree):
    """One node of :func:`_collapse`: its (collapsed) label and the children to collapse."""
    label = tree.label
    _check_label(label)
    children = tree.children
    if all(isinstance(c, str) for c in children):
        if len(children) != 1:
            raise ValueError("preterminal (%s ...) covers %d words" % (label, len(children)))
        return (label, list(children)), []
    if any(isinstance(c, str) for c in children):
        raise ValueError("constituent %s mixes words and constituents" % _short(tree))
    while len(children) == 1 and not children[0].is_preterminal():
        child = children[0]
        _check_label(child.label)
        label = label + "+" + child.label
        children = child.children
        if any(isinstance(c, str) for c in children):
            raise ValueError("constituent %s mixes words and constituents" % _short(child))
    return (label, None), children


def _collapse(tree):
    """Collapse unary chains over phrasal nodes; check labels and word/phrase mixing."""
    def build(info, children):
        label, words = info
        return Tree(label, words if words is not None else children)
    return _transform(tree, _collapse_expand, build)


def _base(label):
    return label.split("^", 1)[0].split("+", 1)[0]


def _annotate(tree, parent):
    """Parent annotation (``NP^S``) of every phrasal label."""
    def expand(item):
        node, parent_label = item
        if node.is_preterminal():
            return node, []
        return node.label + "^" + _base(parent_label), [(c, node.label) for c in node.children]

    def build(info, children):
        return info if isinstance(info, Tree) else Tree(info, children)
    return _transform((tree, parent), expand, build)


def _binarize(tree, h):
    """Right-factored binarisation with horizontal Markovisation ``h``."""
    def expand(node):
        return node, ([] if node.is_preterminal() else node.children)

    def build(node, children):
        if node.is_preterminal():
            return node
        if len(children) <= 2:
            return Tree(node.label, children)
        # right-factored: A -> c1 @A|c2..  -> c2 @A|c3.. -> ... -> c_{k-1} c_k
        labels = [c.label for c in node.children]
        right = children[len(children) - 1]
        for k in range(len(children) - 2, 0, -1):
            siblings = labels[k:] if h is None else labels[k:k + h]
            right = Tree("@%s~%s" % (node.label, "~".join(siblings)), [children[k], right])
        return Tree(node.label, [children[0], right])
    return _transform(tree, expand, build)


def treebank_to_cnf(tree, *, horizontal_markov=1, vertical_markov=1, root_label="ROOT"):
    """Convert a treebank tree to the CNF tree space of CKY (see the module docs).

    Parameters
    ----------
    tree : Tree
        As read from the treebank (function tags, ``-NONE-`` elements and an
        unlabeled outer bracket are allowed).
    horizontal_markov : int >= 0 or None
        Siblings remembered by the intermediate symbols of the binarisation
        (None: all, an exact binarisation).
    vertical_markov : {1, 2}
        2 annotates every phrasal label with its parent's (``NP^S``).
    root_label : str

    Returns
    -------
    Tree
        ``(ROOT X)`` with X binary or unary-over-binary/preterminal at every span.
    """
    if horizontal_markov is not None:
        check_positive(horizontal_markov, "horizontal_markov", strict=False, integer=True)
    if vertical_markov not in (1, 2):
        raise ValueError("vertical_markov must be 1 or 2, got %r" % (vertical_markov,))
    tree = _collapse(_clean(tree))
    if vertical_markov == 2:
        tree = _annotate(tree, root_label)
    return Tree(root_label, [_binarize(tree, horizontal_markov)])


def debinarize(tree, *, root_label="ROOT"):
    """Undo :func:`treebank_to_cnf`: splice ``@`` nodes, expand ``A+B`` chains,
    drop parent annotations and the root node.  Works on any tree (labels
    without the reserved characters are left alone)."""
    if not isinstance(tree, Tree):
        raise ValueError("expected a linclass Tree, got %s" % type(tree).__name__)
    if tree.label == root_label and len(tree.children) == 1 \
            and isinstance(tree.children[0], Tree):
        tree = tree.children[0]

    def expand(node):
        if not isinstance(node, Tree):
            return node, []
        spliced, pending = [], list(reversed(node.children))
        while pending:                       # splice @ nodes, however deep
            child = pending.pop()
            if isinstance(child, Tree) and child.label.startswith("@"):
                pending.extend(reversed(child.children))
            else:
                spliced.append(child)
        return node.label.split("^", 1)[0].split("+"), spliced

    def build(chain, children):
        if isinstance(chain, str):
            return chain
        result = Tree(chain[len(chain) - 1], children)
        for label in reversed(chain[:len(chain) - 1]):
            result = Tree(label, [result])
        return result

    return _transform(tree, expand, build)


# ------------------------------------------------------------------- PCFG --

def _check_sentence(words):
    """The words of a sentence as a list (checks shared with GrammarStructure)."""
    return list(_check_words(words))


_RULE_LINE = re.compile(r"^\s*(\S+)\s*->\s*(.*)$")
_RHS_ITEM = re.compile(r"'([^']*)'|\"([^\"]*)\"|\[([^\]]*)\]|(\|)|([^\s'\"\[\]|]+)")


class PCFG:
    """A probabilistic context-free grammar in CNF, parsed with Viterbi-CKY.

    Rules are ``A -> B C`` (binary), ``A -> B`` (unary; chains are handled by
    the unary closure: the best chain ``A =>+ B`` is precomputed, cycles never
    help since log-probabilities are <= 0) and ``A -> word`` (lexical).

    Build one with :meth:`from_treebank`, :meth:`from_string` or
    :meth:`from_rules`.

    Parameters
    ----------
    rules : iterable of (lhs, rhs, prob, lexical)
        ``rhs`` a tuple of one or two symbols, or ``(word,)`` when ``lexical``.
    start : str
    unknown_words : {"signature", None}
        ``"signature"``: a word without lexical rule is replaced by the first
        of its :func:`word_signature` back-offs that is a terminal of the
        grammar (the treebank estimate turns rare words into signatures);
        None: such a word raises ``ValueError``.
    transform : dict or None
        The :func:`treebank_to_cnf` options the grammar was estimated with;
        when set, :meth:`parse` returns debinarized trees.

    Attributes
    ----------
    symbols : list of str
    n_rules : int

    Raises
    ------
    ValueError
        No rules, no rule for the start symbol, a start symbol that derives
        no word (unproductive), probabilities outside (0, 1] or not summing to
        1 per left-hand side, rules not in CNF.

    References
    ----------
    D. Jurafsky and J. H. Martin, Speech and Language Processing, ch. 14
    (probabilistic CKY).  T. Kasami (1965), D. Younger (1967).
    """

    def __init__(self, rules, start, *, unknown_words=None, transform=None, tol=1e-6):
        if unknown_words not in ("signature", None):
            raise ValueError("unknown_words must be 'signature' or None, got %r"
                             % (unknown_words,))
        self.start = start
        self.unknown_words = unknown_words
        self.transform = transform
        self.tol = tol
        rules = list(rules)
        if not rules:
            raise ValueError("a grammar needs at least one rule")
        totals = defaultdict(float)
        symbols = {}
        for rule in rules:
            if len(rule) != 4:
                raise ValueError("a rule is (lhs, rhs, prob, lexical), got %r" % (rule,))
            lhs, rhs, prob, lexical = rule
            if not isinstance(lhs, str) or not lhs:
                raise ValueError("rule left-hand side must be a non-empty str, got %r" % (lhs,))
            rhs = tuple(rhs)
            if not (1 <= len(rhs) <= (1 if lexical else 2)) or \
                    not all(isinstance(s, str) and s for s in rhs):
                raise ValueError("rule %s -> %s is not in Chomsky normal form (A -> B C, "
                                 "A -> B, A -> word)" % (lhs, " ".join(map(repr, rhs))))
            prob = float(prob)
            if not 0.0 < prob <= 1.0:
                raise ValueError("rule %s -> %s has probability %r outside (0, 1]"
                                 % (lhs, " ".join(rhs), prob))
            totals[lhs] += prob
            symbols.setdefault(lhs, None)
        for lhs, total in totals.items():
            if abs(total - 1.0) > tol:
                raise ValueError("the probabilities of the rules of %s sum to %.9g, not 1"
                                 % (lhs, total))
        if start not in symbols:
            raise ValueError("the start symbol %r has no rules" % (start,))
        for lhs, rhs, prob, lexical in rules:
            if not lexical:
                for s in rhs:
                    if s not in symbols:
                        raise ValueError("rule %s -> %s uses %r, which has no rules (a "
                                         "nonterminal without expansion)"
                                         % (lhs, " ".join(rhs), s))
        self.symbols = list(symbols)
        index = {s: k for k, s in enumerate(self.symbols)}
        self._index = index
        binary, binary_lp, unary, unary_lp = [], [], [], []
        lexicon = defaultdict(list)
        self._rule_logprob = {}
        self._rules_given = [(lhs, tuple(rhs), float(prob), bool(lexical))
                             for lhs, rhs, prob, lexical in rules]
        for lhs, rhs, prob, lexical in rules:
            lp = math.log(float(prob))
            key = (lhs, tuple(rhs), bool(lexical))
            if key in self._rule_logprob:
                raise ValueError("rule %s -> %s is given twice" % (lhs, " ".join(rhs)))
            self._rule_logprob[key] = lp
            if lexical:
                lexicon[rhs[0]].append((index[lhs], lp))
            elif len(rhs) == 2:
                binary.append((index[lhs], index[rhs[0]], index[rhs[1]]))
                binary_lp.append(lp)
            else:
                unary.append((index[lhs], index[rhs[0]]))
                unary_lp.append(lp)
        self.n_rules = len(rules)
        self._check_productive(binary, unary, lexicon)
        self._lexicon = {w: (np.array([t for t, _ in v], dtype=np.int64),
                             np.array([lp for _, lp in v])) for w, v in lexicon.items()}
        self._binary_lp = np.array(binary_lp, dtype=np.float64)
        closure, closure_lp, self._closure_paths = self._unary_closure(unary, unary_lp)
        self._closure_lp = np.array(closure_lp, dtype=np.float64)
        self._grammar = CompiledGrammar(self.symbols, binary, closure)
        self._root = np.full(len(self.symbols), -np.inf)
        self._root[index[start]] = 0.0

    # -- persistence (linclass.persistence) --------------------------------------
    def get_params(self, deep=False):
        """The constructor arguments (the rules with the probabilities as given)."""
        return {"rules": list(self._rules_given), "start": self.start,
                "unknown_words": self.unknown_words, "transform": self.transform,
                "tol": self.tol}

    def _get_state(self):
        state = {}
        if hasattr(self, "rare_threshold"):
            state["rare_threshold"] = self.rare_threshold
        return state

    def _set_state(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def save(self, path):
        """Write the grammar to ``path`` (``.npz`` + JSON, no pickle); load it back
        with :func:`linclass.load`."""
        from ..persistence import save_model
        return save_model(self, path)

    # -- construction ------------------------------------------------------------
    def _check_productive(self, binary, unary, lexicon):
        productive = np.zeros(len(self.symbols), dtype=bool)
        for entries in lexicon.values():
            for t, _ in entries:
                productive[t] = True
        changed = True
        while changed:
            changed = False
            for a, b, c in binary:
                if not productive[a] and productive[b] and productive[c]:
                    productive[a] = changed = True
            for a, b in unary:
                if not productive[a] and productive[b]:
                    productive[a] = changed = True
        if not productive[self._index[self.start]]:
            raise ValueError("the start symbol %r is unproductive: it derives no string of "
                             "words" % (self.start,))

    def _unary_closure(self, unary, unary_lp):
        """Best chain A =>+ B for every pair linked by unary rules (Floyd-Warshall, max-plus)."""
        if not unary:
            return [], [], []
        involved = sorted({s for rule in unary for s in rule})
        pos = {s: k for k, s in enumerate(involved)}
        m = len(involved)
        D = np.full((m, m), -np.inf)
        for (a, b), lp in zip(unary, unary_lp):
            D[pos[a], pos[b]] = max(D[pos[a], pos[b]], lp)
        via = np.full((m, m), -1, dtype=np.int64)
        parents = {pos[a] for a, _ in unary}
        children = {pos[b] for _, b in unary}
        for k in sorted(parents & children):      # intermediate symbols of chains
            # only rows a with a =>+ k and columns b with k =>+ b can improve
            rows = np.flatnonzero(np.isfinite(D[:, k]))
            cols = np.flatnonzero(np.isfinite(D[k, :]))
            block = np.ix_(rows, cols)
            cand = D[rows, k, None] + D[None, k, cols]   # D[a, k] + D[k, b]
            better = cand > D[block]
            if better.any():
                D[block] = np.where(better, cand, D[block])
                sub = via[block]
                sub[better] = k
                via[block] = sub
        rules, lps, ends = [], [], []
        for a, b in zip(*np.nonzero(np.isfinite(D))):
            if a == b:
                continue
            rules.append((involved[a], involved[b]))
            lps.append(D[a, b])
            ends.append((a, b))
        return rules, lps, _ClosurePaths(via, involved, ends, self.symbols)

    @classmethod
    def from_rules(cls, rules, start, *, unknown_words=None):
        """A PCFG from ``(lhs, rhs, prob)`` triples.

        Symbols that never appear as a left-hand side are words: ``("N",
        ("cat",), 0.5)`` is a lexical rule because ``cat`` has no rule.
        """
        rules = [tuple(r) for r in rules]
        for r in rules:
            if len(r) != 3:
                raise ValueError("a rule is (lhs, rhs, prob), got %r" % (r,))
        lhs = {r[0] for r in rules}
        out = []
        for a, rhs, p in rules:
            rhs = (rhs,) if isinstance(rhs, str) else tuple(rhs)
            words = [s for s in rhs if s not in lhs]
            if words and len(rhs) != 1:
                raise ValueError("rule %s -> %s mixes words and symbols or has several "
                                 "words; CNF needs A -> B C, A -> B or A -> word"
                                 % (a, " ".join(rhs)))
            out.append((a, rhs, p, bool(words)))
        return cls(out, start, unknown_words=unknown_words)

    @classmethod
    def from_string(cls, text, *, start=None, unknown_words=None):
        """A PCFG in NLTK's notation: ``S -> NP VP [1.0]``, words quoted,
        alternatives with ``|``; the start symbol is the first left-hand side
        unless given."""
        rules = []
        first = None
        for lineno, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = _RULE_LINE.match(line)
            if not m:
                raise ValueError("line %d: expected 'A -> B C [p]', got %r" % (lineno, line))
            lhs = m.group(1)
            first = first or lhs
            rhs, words = [], False
            for item in _RHS_ITEM.finditer(m.group(2)):
                quoted1, quoted2, prob, bar, symbol = item.groups()
                if bar:
                    continue
                if prob is not None:
                    if not rhs:
                        raise ValueError("line %d: empty right-hand side" % lineno)
                    try:
                        p = float(prob)
                    except ValueError:
                        raise ValueError("line %d: bad probability [%s]" % (lineno, prob)) \
                            from None
                    rules.append((lhs, tuple(rhs), p, words))
                    rhs, words = [], False
                elif symbol is not None:
                    rhs.append(symbol)
                else:
                    rhs.append(quoted1 if quoted1 is not None else quoted2)
                    words = True
            if rhs:
                raise ValueError("line %d: rule without probability [p]" % lineno)
        for lhs, rhs, p, words in rules:
            if words and len(rhs) != 1:
                raise ValueError("rule %s -> %s is not in CNF" % (lhs, " ".join(rhs)))
        return cls(rules, start if start is not None else first, unknown_words=unknown_words)

    @classmethod
    def from_treebank(cls, trees, *, horizontal_markov=1, vertical_markov=1,
                      rare_threshold=1, unknown_words="signature", root_label="ROOT"):
        """Relative-frequency estimate from treebank trees.

        Each tree goes through :func:`treebank_to_cnf`; the probability of a
        rule is its count over the count of its left-hand side.  With
        ``unknown_words="signature"`` words seen at most ``rare_threshold``
        times are replaced by their :func:`word_signature` before counting,
        so the grammar has lexical rules ``T -> UNK-...`` for unseen words.

        Parameters
        ----------
        trees : iterable of Tree
        horizontal_markov, vertical_markov : see :func:`treebank_to_cnf`
        rare_threshold : int >= 0
        unknown_words : {"signature", None}
        root_label : str

        Returns
        -------
        PCFG
        """
        check_positive(rare_threshold, "rare_threshold", strict=False, integer=True)
        cnf = []
        for k, tree in enumerate(trees):
            try:
                cnf.append(treebank_to_cnf(tree, horizontal_markov=horizontal_markov,
                                           vertical_markov=vertical_markov,
                                           root_label=root_label))
            except ValueError as exc:
                raise ValueError("tree %d: %s" % (k, exc)) from None
        if not cnf:
            raise ValueError("no training trees")
        word_counts = Counter(w for t in cnf for w in t.leaves())
        counts = Counter()
        for tree in cnf:
            first = _first_preterminal(tree)
            for node in tree.subtrees():
                if node.is_preterminal():
                    word = node.children[0]
                    if unknown_words == "signature" and word_counts[word] <= rare_threshold:
                        word = word_signature(word, sentence_initial=node is first)
                    counts[(node.label, (word,), True)] += 1
                else:
                    counts[(node.label, tuple(c.label for c in node.children), False)] += 1
        lhs_counts = Counter()
        for (lhs, _, _), c in counts.items():
            lhs_counts[lhs] += c
        rules = [(lhs, rhs, c / lhs_counts[lhs], lexical)
                 for (lhs, rhs, lexical), c in counts.items()]
        transform = {"horizontal_markov": horizontal_markov,
                     "vertical_markov": vertical_markov, "root_label": root_label}
        grammar = cls(rules, root_label, unknown_words=unknown_words, transform=transform)
        grammar.rare_threshold = rare_threshold
        return grammar

    # -- rules ----------------------------------------------------------------------
    def rules(self):
        """All rules as ``(lhs, rhs, prob, lexical)`` tuples."""
        return [(lhs, rhs, math.exp(lp), lexical)
                for (lhs, rhs, lexical), lp in self._rule_logprob.items()]

    def to_nltk(self):
        """The same grammar as an ``nltk.PCFG`` (needs NLTK)."""
        import nltk
        prods = []
        nts = {s: nltk.Nonterminal(s) for s in self.symbols}
        for lhs, rhs, prob, lexical in self.rules():
            items = list(rhs) if lexical else [nts[s] for s in rhs]
            prods.append(nltk.ProbabilisticProduction(nts[lhs], items, prob=prob))
        return nltk.PCFG(nts[self.start], prods)

    def terminals(self, words):
        """The grammar terminals used for ``words``: the word itself, or the
        first of its signature back-offs that the grammar knows (unknown-word model)."""
        words = _check_sentence(words)
        out = []
        for i, word in enumerate(words):
            if word in self._lexicon:
                out.append(word)
                continue
            if self.unknown_words is None:
                raise _NoParse("word %r (position %d) has no lexical rule and the "
                                 "unknown-word model is disabled (unknown_words=None)"
                                 % (word, i))
            for sig in signature_backoffs(word_signature(word, sentence_initial=(i == 0))):
                if sig in self._lexicon:
                    out.append(sig)
                    break
            else:
                raise _NoParse("word %r (position %d) has no lexical rule and none of its "
                                 "signatures %s is a terminal of the grammar"
                                 % (word, i, signature_backoffs(word_signature(word))))
        return out

    # -- parsing --------------------------------------------------------------------
    def _parse_cnf(self, words):
        words = _check_sentence(words)
        terminals = self.terminals(words)
        lex = np.full((len(words), len(self.symbols)), -np.inf)
        for i, token in enumerate(terminals):
            tags, lps = self._lexicon[token]
            lex[i, tags] = lps
        score, nodes = self._grammar.viterbi(lex, self._binary_lp, self._closure_lp,
                                             self._root)
        if not nodes.shape[0]:
            return None, -np.inf
        paths = self._closure_paths
        tree = nodes_to_tree(nodes, self.symbols, words, root_label=None,
                             unary_expand=lambda r: paths[r])
        return tree, float(score)

    def parse(self, words, *, cnf=False, return_log_prob=False):
        """The most probable tree of a sentence (Viterbi-CKY).

        Parameters
        ----------
        words : sequence of str
        cnf : bool
            Return the tree in the grammar's own form (binarised, annotated)
            instead of :func:`debinarize`-d (grammars from :meth:`from_treebank`).
        return_log_prob : bool
            Also return the natural log-probability of the best parse.

        Returns
        -------
        Tree or None, [float]
            None (and ``-inf``) when the grammar derives no tree of the sentence.

        Raises
        ------
        ValueError
            An empty sentence or a word that is not a non-empty str.
        NoParseError
            (a ``ValueError``) A word without lexical rule while the
            unknown-word model is disabled, or none of whose signatures is a
            terminal of the grammar.
        """
        tree, score = self._parse_cnf(words)
        if tree is not None and self.transform is not None and not cnf:
            tree = debinarize(tree, root_label=self.transform["root_label"])
        return (tree, score) if return_log_prob else tree

    def parse_many(self, sentences, *, cnf=False, return_log_prob=False):
        """:meth:`parse` of every sentence; a list (of trees, or of (tree, log-prob))."""
        return [self.parse(s, cnf=cnf, return_log_prob=return_log_prob) for s in sentences]

    def log_prob(self, tree):
        """Natural log-probability of a tree in the grammar's form (``-inf`` when it
        uses a rule the grammar does not have).  Words go through :meth:`terminals`."""
        if not isinstance(tree, Tree):
            raise ValueError("expected a linclass Tree, got %s" % type(tree).__name__)
        terminals = iter(self.terminals(tree.leaves()))
        total = 0.0
        for node in tree.subtrees():
            if node.is_preterminal():
                if len(node.children) != 1:
                    return -np.inf
                key = (node.label, (next(terminals),), True)
            else:
                if any(isinstance(c, str) for c in node.children):
                    return -np.inf
                key = (node.label, tuple(c.label for c in node.children), False)
            lp = self._rule_logprob.get(key)
            if lp is None:
                return -np.inf
            total += lp
        return total if tree.label == self.start else -np.inf


class _ClosurePaths:
    """The intermediate labels of each closure rule's best chain, computed on
    first use (storing all of them takes memory cubic in the chain length)."""

    def __init__(self, via, involved, ends, symbols):
        self._via, self._involved, self._ends, self._symbols = via, involved, ends, symbols
        self._cache = {}

    def __len__(self):
        return len(self._ends)

    def __getitem__(self, rule):
        path = self._cache.get(rule)
        if path is None:
            path = self._cache[rule] = self._path(*self._ends[rule])
        return path

    def _path(self, a, b):
        """The symbols strictly between ``a`` and ``b`` on the best chain (no
        recursion: a chain may be as long as the grammar has symbols)."""
        out, pending = [], [(a, b)]
        while pending:
            item = pending.pop()
            if not isinstance(item, tuple):
                out.append(self._symbols[item])
                continue
            k = self._via[item[0], item[1]]
            if k >= 0:                     # a =>+ k =>+ b: the left part first
                pending.extend([(k, item[1]), self._involved[k], (item[0], k)])
        return out


def _first_preterminal(tree):
    node = tree
    while not node.is_preterminal():
        node = node.children[0]
    return node


# --------------------------------------------------------- discriminative --

class _SpanPerceptron:
    """Averaged structured perceptron over a :class:`SpanGrammarStructure`,
    started from the PCFG and with the epoch chosen on held-out trees.

    ``w`` starts at ``coef_init``; every mistake adds ``Phi(x, y) - Phi(x,
    y_hat)`` to the weights except the log-probability features 0 and 1 when
    ``fixed_logprob`` (the PCFG's weight stays what ``coef_init`` says, so the
    update unit, relative to that weight, is the learning rate).  The averaged
    weights after each epoch are scored on the validation trees (labelled
    PARSEVAL F1, evalb conventions) and the best epoch wins, epoch 0 being
    ``coef_init`` itself (the PCFG): training can only be kept when it helps
    on the held-out trees.

    Attributes (after :meth:`fit`)
    ------------------------------
    coef_ : ndarray
    n_iter_ : int
        Epochs run.
    best_epoch_ : int
        Epoch whose averaged weights are ``coef_`` (the last one without
        validation trees).
    validation_scores_ : list of float
        F1 on the validation trees after epochs 0 .. n_iter_ (empty without).
    history_ : list of dict
    """

    def __init__(self, structure, *, max_iter, average=True, random_state=None,
                 coef_init=None, fixed_logprob=False, verbose=0):
        self.structure = structure
        self.max_iter = max_iter
        self.average = average
        self.random_state = random_state
        self.coef_init = coef_init
        self.fixed_logprob = fixed_logprob
        self.verbose = verbose

    def _validation_f1(self, w, X_val, Y_val):
        from ..metrics.parsing import parseval
        predicted = []
        for x in X_val:
            try:
                predicted.append(debinarize(self.structure.decode(w, x)))
            except _NoParse:
                predicted.append(None)
        return parseval(Y_val, predicted)["f1"]

    def fit(self, X, Y, X_val=(), Y_val=()):
        """``X`` prepared inputs, ``Y`` CNF trees; ``X_val`` / ``Y_val``
        validation inputs and their treebank trees (may be empty)."""
        import time
        s = self.structure
        rng = check_random_state(self.random_state)
        n = len(X)
        w = np.zeros(s.n_features) if self.coef_init is None \
            else np.array(self.coef_init, dtype=np.float64)
        u = np.zeros(s.n_features)
        c = 1.0
        first = 2 if self.fixed_logprob else 0
        validate = len(X_val) > 0
        self.validation_scores_ = [self._validation_f1(w, X_val, Y_val)] if validate else []
        best_w, self.best_epoch_ = w.copy(), 0
        self.history_ = []
        start = time.perf_counter()
        for epoch in range(1, self.max_iter + 1):
            n_mistakes = 0
            for i in rng.permutation(n):
                # w: float64, finite (unit updates of finite features)
                y_hat = s.decode_with_score(w, X[i], check_w=False)[0]
                if y_hat != Y[i]:                    # loss > 0 iff the trees differ
                    gi, gv = s.joint_feature(X[i], Y[i])
                    hi, hv = s.joint_feature(X[i], y_hat)
                    idx = np.concatenate([gi, hi])
                    val = np.concatenate([gv, -hv])
                    keep = idx >= first
                    idx, val = idx[keep], val[keep]
                    np.add.at(w, idx, val)           # w += Phi(x, y) - Phi(x, y_hat)
                    np.add.at(u, idx, c * val)       # u += c * (same update)
                    n_mistakes += 1
                c += 1.0
            avg = w - u / c if self.average else w.copy()
            record = {"iteration": epoch, "n_mistakes": n_mistakes,
                      "time": time.perf_counter() - start}
            if validate:
                f1 = self._validation_f1(avg, X_val, Y_val)
                record["validation_f1"] = f1
                if f1 > max(self.validation_scores_):
                    best_w, self.best_epoch_ = avg, epoch
                self.validation_scores_.append(f1)
            else:
                best_w, self.best_epoch_ = avg, epoch
            self.history_.append(record)
            if self.verbose:
                print("epoch %3d  mistakes %6d  %s time %.2fs"
                      % (epoch, n_mistakes, "validation F1 %.4f  " % record["validation_f1"]
                         if validate else "", record["time"]))
            if n_mistakes == 0:
                break
        self.n_iter_ = len(self.history_)
        self.coef_ = best_w
        return self



class DiscriminativeParser(BaseEstimator):
    """CKY parser with ``F(x, y) = w . Phi(x, y)``, trained discriminatively.

    Two feature maps (``features``):

    * ``"spans"`` (default): the log-probability of the treebank PCFG
      estimated on the training trees as one real-valued feature (and the
      lexical log-probability as another), rule indicators, and hashed span
      features conjoined with the node's label -- first/last word, the words
      around the span, length, boundary bigrams and shapes
      (:class:`~linclass.parsing.SpanGrammarStructure`; Hall, Durrett and
      Klein, 2014).  The PCFG's rules and lexicon define the tree space.
    * ``"rules"``: rule uses and rule-word / rule-signature pairs over the CNF
      tree (:class:`~linclass.parsing.GrammarStructure`); the grammar (rules
      and candidate tags) is read off the training trees.

    Training is the
    averaged structured perceptron (Collins, 2002) or the 1-slack structural
    SVM (Joachims et al., 2009) whose most violated constraint comes from a
    loss-augmented CKY with the labelled-bracket loss (Taskar et al., 2004).
    With ``"spans"`` the perceptron starts from the PCFG (``pcfg_weight``):
    the log-probability weights stay fixed and every other weight learns a
    correction, each update worth ``1 / pcfg_weight`` nats of the PCFG's
    score, so the model before training is the PCFG; ``validation_fraction``
    keeps the epoch (0 = the PCFG) with the best F1 on held-out trees.  On
    the Penn Treebank sample a unit update against weight 1 (the plain
    PCFG-scaled start) over-corrects and a weight of 20 learns too slowly;
    5 was best on development trees (``benchmarks/bench_parsing.py``).

    Parameters
    ----------
    learner : {"perceptron", "svm"}
    max_iter : int
        Perceptron epochs, or cutting-plane iterations of the SVM.
    C : float
        SVM regularisation (sum of slacks).
    tol : float
        SVM stopping tolerance (loss units per sentence).
    average : bool
        Averaged perceptron.
    horizontal_markov, vertical_markov : see :func:`treebank_to_cnf`
    rare_threshold : int
        Words seen at most this often define the tags of each signature.
    random_state : None, int or Generator
        Perceptron shuffling.
    verbose : int
    features : {"spans", "rules"}
    beam_size : int >= 0
        ``"spans"`` only: 0 for exact CKY, else the number of upper nodes each
        chart cell keeps (beam pruning; Collins and Roark, 2004).
    hash_bits : int
        ``"spans"`` only: ``2 ** hash_bits`` hashed span-template values (each
        with one weight per coarse label).
    pcfg_weight : None or float > 0, default=5.0
        ``"spans"`` with the perceptron only: start from the PCFG (the
        log-probability features with this effective weight, every other
        weight 0) and keep that weight fixed, so the perceptron learns
        corrections to the PCFG, each unit update being worth
        ``1 / pcfg_weight`` nats of the PCFG's score (the learning rate is
        ``1 / pcfg_weight``).  The model before the first update is the PCFG.
        None: start from zero weights and learn the log-probability weights
        too.
    logprob_scale : float > 0
        ``"spans"`` only: the log-probability features are scaled by this
        factor (see :class:`~linclass.parsing.SpanGrammarStructure`); it
        matters only when ``pcfg_weight`` is None.
    test_beam_size : None or int >= 0
        ``"spans"`` only: the beam of :meth:`predict` (0: exact CKY; None:
        ``beam_size``).  Training uses ``beam_size``.
    validation_fraction : None or float in (0, 0.5], default=None
        ``"spans"`` with the perceptron only: hold out the last
        ``ceil(validation_fraction * n_trees)`` training trees, estimate the
        PCFG and train on the others, score the averaged weights after every
        epoch (and the PCFG start, epoch 0) on the held-out trees (labelled
        F1, evalb conventions) and keep the best epoch (``best_epoch_``,
        ``validation_scores_``).  None: no held-out trees, the last epoch.

    Attributes
    ----------
    structure_ : GrammarStructure or SpanGrammarStructure
    learner_ : _SpanPerceptron, StructuredPerceptron or StructuredSVM (not saved)
    best_epoch_ : int
        Perceptron with ``"spans"``: the epoch whose averaged weights are kept.
    validation_scores_ : list of float
        With ``validation_fraction``: held-out F1 after epochs 0, 1, ...
    coef_ : ndarray (n_features,)
    pcfg_ : PCFG
        ``"spans"`` only: the grammar whose log-probabilities are features.

    References
    ----------
    D. Hall, G. Durrett, D. Klein. Less grammar, more features. ACL 2014.
    """

    def __init__(self, *, learner="perceptron", max_iter=5, C=1.0, tol=0.1, average=True,
                 horizontal_markov=1, vertical_markov=2, rare_threshold=1,
                 random_state=None, verbose=0, features="spans", beam_size=0, hash_bits=15,
                 pcfg_weight=5.0, logprob_scale=1.0, test_beam_size=None,
                 validation_fraction=None):
        self.validation_fraction = validation_fraction
        self.pcfg_weight = pcfg_weight
        self.logprob_scale = logprob_scale
        self.test_beam_size = test_beam_size
        self.features = features
        self.beam_size = beam_size
        self.hash_bits = hash_bits
        self.learner = learner
        self.max_iter = max_iter
        self.C = C
        self.tol = tol
        self.average = average
        self.horizontal_markov = horizontal_markov
        self.vertical_markov = vertical_markov
        self.rare_threshold = rare_threshold
        self.random_state = random_state
        self.verbose = verbose

    def _cnf(self, tree):
        return treebank_to_cnf(tree, horizontal_markov=self.horizontal_markov,
                               vertical_markov=self.vertical_markov)

    def fit(self, X, Y=None):
        """Train on sentences ``X`` and their treebank trees ``Y``, or on trees
        alone (``fit(trees)``: the sentences are the trees' words without
        ``-NONE-`` elements)."""
        from ..structured import StructuredPerceptron, StructuredSVM
        if self.learner not in ("perceptron", "svm"):
            raise ValueError("learner must be 'perceptron' or 'svm', got %r" % (self.learner,))
        check_positive(self.max_iter, "max_iter", integer=True)
        check_positive(self.rare_threshold, "rare_threshold", strict=False, integer=True)
        if self.features not in ("spans", "rules"):
            raise ValueError("features must be 'spans' or 'rules', got %r" % (self.features,))
        check_positive(self.beam_size, "beam_size", strict=False, integer=True)
        check_positive(self.hash_bits, "hash_bits", integer=True)
        check_positive(self.logprob_scale, "logprob_scale")
        span_perceptron = self.features == "spans" and self.learner == "perceptron"
        if self.pcfg_weight is not None:
            check_positive(self.pcfg_weight, "pcfg_weight")
        if self.validation_fraction is not None:
            check_positive(self.validation_fraction, "validation_fraction")
            if not self.validation_fraction <= 0.5:
                raise ValueError("validation_fraction must be in (0, 0.5], got %r"
                                 % (self.validation_fraction,))
            if not span_perceptron:
                raise ValueError("validation_fraction needs features='spans' and "
                                 "learner='perceptron'")
        if self.test_beam_size is not None:
            check_positive(self.test_beam_size, "test_beam_size", strict=False, integer=True)
        trees = list(X if Y is None else Y)
        if not trees:
            raise ValueError("no training trees")
        cnf = []
        for k, tree in enumerate(trees):
            try:
                cnf.append(self._cnf(tree))
            except ValueError as exc:
                raise ValueError("tree %d: %s" % (k, exc)) from None
        sentences = [t.leaves() for t in cnf]
        if Y is not None:
            X = list(X)
            if len(X) != len(trees):
                raise ValueError("X has %d sentences but Y has %d trees" % (len(X), len(trees)))
            for k, (x, s) in enumerate(zip(X, sentences)):
                if list(x) != s:
                    raise ValueError("sentence %d differs from the words of its tree (without "
                                     "-NONE- elements)" % k)
        val_trees, X_val = [], []
        if self.validation_fraction is not None:
            n_val = int(math.ceil(self.validation_fraction * len(trees)))
            if n_val >= len(trees):
                raise ValueError("validation_fraction=%r leaves no training tree out of %d"
                                 % (self.validation_fraction, len(trees)))
            val_trees = trees[len(trees) - n_val:]
            X_val = sentences[len(trees) - n_val:]
            trees, cnf = trees[:len(trees) - n_val], cnf[:len(trees) - n_val]
            sentences = sentences[:len(trees)]
        if self.features == "spans":
            pcfg = PCFG.from_treebank(trees, horizontal_markov=self.horizontal_markov,
                                      vertical_markov=self.vertical_markov,
                                      rare_threshold=self.rare_threshold)
            structure = SpanGrammarStructure(pcfg, hash_bits=self.hash_bits,
                                             beam_size=self.beam_size,
                                             logprob_scale=self.logprob_scale)
            self.pcfg_ = pcfg
        else:
            structure = GrammarStructure.from_trees(cnf, rare_threshold=self.rare_threshold)
        if span_perceptron:
            coef_init = None
            if self.pcfg_weight is not None:
                coef_init = np.zeros(structure.n_features)
                coef_init[:2] = self.pcfg_weight / self.logprob_scale
            learner = _SpanPerceptron(structure, max_iter=self.max_iter, average=self.average,
                                     random_state=self.random_state, coef_init=coef_init,
                                     fixed_logprob=self.pcfg_weight is not None,
                                     verbose=self.verbose)
            learner.fit(structure.batch_inputs(sentences), cnf,
                        [structure.prepare(x) for x in X_val], val_trees)
            self.best_epoch_ = learner.best_epoch_
            self.validation_scores_ = learner.validation_scores_
        elif self.learner == "perceptron":
            learner = StructuredPerceptron(structure, max_iter=self.max_iter,
                                           average=self.average,
                                           random_state=self.random_state,
                                           verbose=self.verbose)
            learner.fit(sentences, cnf)
        else:
            learner = StructuredSVM(structure, C=self.C, tol=self.tol, max_iter=self.max_iter,
                                    verbose=self.verbose)
            learner.fit(sentences, cnf)
        if self.features == "spans":
            structure.beam_size = self._test_beam()
        self.structure_ = structure
        self.learner_ = learner
        self.coef_ = learner.coef_
        return self

    def _test_beam(self):
        return int(self.beam_size if self.test_beam_size is None else self.test_beam_size)

    # -- persistence (linclass.persistence) ------------------------------------
    def _get_state(self):
        check_is_fitted(self, "coef_")
        state = {"coef_": self.coef_}
        if getattr(self, "input_spec_", None) is not None:
            state["input_spec_"] = self.input_spec_
        if isinstance(self.structure_, SpanGrammarStructure):
            state["pcfg_"] = self.structure_.pcfg
        else:
            state["grammar_spec"] = self.structure_.spec
        return state

    def _set_state(self, state):
        state = dict(state)
        coef = np.asarray(state.pop("coef_"), dtype=np.float64)
        if "input_spec_" in state:
            self.input_spec_ = state.pop("input_spec_")
        if "pcfg_" in state:
            self.pcfg_ = state.pop("pcfg_")
            if not isinstance(self.pcfg_, PCFG):
                raise ValueError("the saved parser's pcfg_ is not a PCFG")
            structure = SpanGrammarStructure(self.pcfg_, hash_bits=self.hash_bits,
                                             beam_size=self._test_beam(),
                                             logprob_scale=self.logprob_scale)
        else:
            spec = dict(state.pop("grammar_spec"))
            root_label = spec.pop("root_label")
            structure = GrammarStructure(**spec, root_label=root_label)
        if coef.shape != (structure.n_features,):
            raise ValueError("the saved weights have shape %r but the saved grammar has %d "
                             "features" % (coef.shape, structure.n_features))
        if not np.isfinite(coef).all():
            raise ValueError("the saved weights contain NaN or inf")
        self.structure_ = structure
        self.coef_ = coef

    def predict(self, X, *, cnf=False):
        """Best trees of sentences ``X`` (debinarized unless ``cnf``).

        A sentence that the grammar read off the training trees cannot cover
        (a rule or a tag it would need was never seen, or a word that neither
        it nor any of its signatures was seen with a tag) gets None.
        """
        check_is_fitted(self, "coef_")
        if isinstance(self.structure_, SpanGrammarStructure):
            if self.test_beam_size is not None:
                check_positive(self.test_beam_size, "test_beam_size", strict=False,
                               integer=True)
            self.structure_.beam_size = self._test_beam()
        out = []
        for x in X:
            try:
                px = self.structure_.prepare(x)     # NoParseError: a word no tag can take
                tree = self.structure_.decode(self.coef_, px)
            except _NoParse:
                out.append(None)
                continue
            out.append(tree if cnf else debinarize(tree))
        return out

    def score(self, X, Y):
        """PARSEVAL labelled F1 (evalb conventions) of the predictions against trees ``Y``."""
        from ..metrics.parsing import parseval
        return parseval(list(Y), self.predict(X))["f1"]
