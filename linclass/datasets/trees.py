"""Bracketed (Penn Treebank) trees: reading, writing and the usual views.

The format is the one of the Penn Treebank ``.mrg`` files::

    ( (S (NP-SBJ (NNP Mr.) (NNP Vinken))
         (VP (VBZ is) (NP-PRD (NN chairman)))
         (. .)) )

* a constituent is ``(LABEL child child ...)``; a child is a constituent or a
  word (any run of characters other than whitespace and parentheses);
* a bracket with no label, like the outer ``( (S ...) )`` of the PTB files,
  gets the label ``""``; :func:`read_trees` and :func:`parse_tree` remove such
  an unlabeled root when it has exactly one child (``strip_outer=True``, as
  NLTK's treebank reader does);
* a file may hold several trees per line or one tree over several lines.

Empty elements (``(-NONE- *T*-1)``) and function tags / co-indices
(``NP-SBJ-1``, ``NP=2``) are kept as read;
:meth:`Tree.remove_empty_elements` and :meth:`Tree.strip_function_tags`
remove them, as a parser evaluation (PARSEVAL / evalb) does.

Malformed input (a ``)`` without its ``(``, a ``(`` never closed, ``()``, a
constituent without children, a word outside any bracket, no tree where one
is expected) raises :class:`~linclass.exceptions.DataFormatError` with the
file and line.

References
----------
Marcus, M. P., Santorini, B. and Marcinkiewicz, M. A. (1993). Building a large
annotated corpus of English: the Penn Treebank. Computational Linguistics 19(2).
Bies, A. et al. (1995). Bracketing Guidelines for Treebank II Style Penn
Treebank Project.
"""
import re
from collections import namedtuple

from ..exceptions import DataFormatError
from ._io import gc_paused, read_text

__all__ = ["Tree", "Production", "parse_tree", "read_trees"]

_TOKEN_RE = re.compile(r"[()]|[^\s()]+")


class Production(namedtuple("Production", ["lhs", "rhs", "lexical"])):
    """A context-free rule read off a tree node.

    Attributes
    ----------
    lhs : str
        The node's label.
    rhs : tuple of str
        The labels of the children, or the words for leaf children.
    lexical : bool
        True when every child is a word (a preterminal such as ``NN -> dog``).
        PTB trees never mix words and constituents under one node; if a tree
        does, its words appear in ``rhs`` as they are and ``lexical`` is False.
    """

    __slots__ = ()

    def __str__(self):
        rhs = " ".join(repr(x) if self.lexical else x for x in self.rhs)
        return "%s -> %s" % (self.lhs, rhs)


def strip_label(label):
    # -NONE-, -LRB-, -RRB- and the like start with '-' and have no function tag
    if not label or label[0] == "-":
        return label
    for k, char in enumerate(label):
        if char == "-" or char == "=":
            return label[:k] if k else label
    return label


class Tree:
    """A labeled ordered tree whose leaves are words (strings).

    Parameters
    ----------
    label : str
        The constituent label (``"NP"``, ``"NP-SBJ-1"``, ``"NN"``; ``""`` for an
        unlabeled root).
    children : iterable of (Tree or str)
        Sub-constituents and words, in order.

    Notes
    -----
    ``len(tree)``, ``tree[i]`` and iteration go over the children.  Two trees
    are equal when labels and children are equal.  ``str(tree)`` gives the
    bracketed form on one line, which :func:`parse_tree` reads back.
    """

    __slots__ = ("label", "children")

    def __init__(self, label, children=()):
        if not isinstance(label, str):
            raise TypeError("a tree label must be a str, got %s" % type(label).__name__)
        self.label = label
        self.children = list(children)
        for child in self.children:
            if not isinstance(child, (Tree, str)):
                raise TypeError("tree children must be Tree or str, got %s"
                                % type(child).__name__)

    # -- container protocol -------------------------------------------------
    def __len__(self):
        return len(self.children)

    def __getitem__(self, index):
        return self.children[index]

    def __iter__(self):
        return iter(self.children)

    def __eq__(self, other):
        if not isinstance(other, Tree):
            return NotImplemented
        stack = [(self, other)]                  # iterative: no RecursionError on deep trees
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if a.label != b.label or len(a.children) != len(b.children):
                return False
            for x, y in zip(a.children, b.children):
                x_tree, y_tree = isinstance(x, Tree), isinstance(y, Tree)
                if x_tree and y_tree:
                    stack.append((x, y))
                elif x_tree or y_tree or x != y:
                    return False
        return True

    __hash__ = None

    def __repr__(self):
        try:
            text = str(self)
        except ValueError:
            text = "%s ... (not writable as brackets)" % self.label
        if len(text) > 80:
            text = text[:76] + " ..."
        return "Tree(%s)" % text

    def __str__(self):
        """The bracketed form on one line; ``parse_tree(str(t)) == t`` (for a root
        that ``strip_outer`` does not strip).  Raises ``ValueError`` for a tree
        the parser could not read back: a label or word that is empty (labels
        may be empty only before a sub-tree) or contains whitespace or
        parentheses, or a constituent without children.  Nothing is escaped."""
        parts = []
        stack = [self]
        while stack:
            item = stack.pop()
            if item is _CLOSE or item is _SPACE:        # markers, not words
                parts.append(")" if item is _CLOSE else " ")
            elif isinstance(item, Tree):
                if not item.children:
                    raise ValueError("constituent (%s) has no children: the bracketed form "
                                     "cannot express it" % item.label)
                if item.label == "":
                    if not isinstance(item.children[0], Tree):
                        raise ValueError("an unlabeled constituent whose first child is the "
                                         "word %r would read back with that word as its label"
                                         % item.children[0])
                elif not _writable(item.label):
                    raise ValueError("label %r contains whitespace or parentheses: the "
                                     "bracketed form cannot express it" % item.label)
                parts.append("(" + item.label)
                stack.append(_CLOSE)
                for child in reversed(item.children):
                    stack.append(child)
                    stack.append(_SPACE)
            else:
                if not _writable(item):
                    raise ValueError("word %r is empty or contains whitespace or parentheses: "
                                     "the bracketed form cannot express it" % item)
                parts.append(item)
        return "".join(parts)

    def __reduce__(self):
        return (_rebuild_tree, (_flatten(self),))

    # -- views ----------------------------------------------------------------
    def copy(self):
        """A deep copy (iterative: deep trees do not hit the recursion limit)."""
        return _rebuild_tree(_flatten(self))

    def is_preterminal(self):
        """True when every child is a word (and there is at least one)."""
        return bool(self.children) and all(isinstance(c, str) for c in self.children)

    def subtrees(self):
        """Iterate over all constituents (this tree included) in pre-order."""
        stack = [self]
        while stack:
            tree = stack.pop()
            yield tree
            stack.extend(c for c in reversed(tree.children) if isinstance(c, Tree))

    def leaves(self):
        """The words, left to right (``-NONE-`` elements included)."""
        out = []
        stack = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, Tree):
                stack.extend(reversed(item.children))
            else:
                out.append(item)
        return out

    def pos(self):
        """``(word, tag)`` pairs, left to right: each word with its parent's label."""
        out = []
        stack = [(self, None)]
        while stack:
            item, parent_label = stack.pop()
            if isinstance(item, Tree):
                stack.extend((child, item.label) for child in reversed(item.children))
            else:
                out.append((item, parent_label))
        return out

    def productions(self):
        """The context-free rules used by the tree, in pre-order.

        Returns
        -------
        list of Production
            One per constituent: ``Production(label, child labels or words,
            lexical)``.  Compare NLTK's ``Tree.productions()``.
        """
        out = []
        for tree in self.subtrees():
            lexical = bool(tree.children) and all(isinstance(c, str) for c in tree.children)
            rhs = tuple(c.label if isinstance(c, Tree) else c for c in tree.children)
            out.append(Production(tree.label, rhs, lexical))
        return out

    def height(self):
        """Height as in NLTK: a preterminal ``(NN dog)`` has height 2, a word 1."""
        best = 0
        stack = [(self, 1)]
        while stack:
            tree, depth = stack.pop()
            for child in tree.children:
                if isinstance(child, Tree):
                    stack.append((child, depth + 1))
                elif depth + 1 > best:
                    best = depth + 1
            if depth > best:
                best = depth
        return best

    def labeled_spans(self, *, preterminals=False):
        """Constituents as ``(label, start, end)`` word spans (``end`` exclusive).

        Positions count the leaves of this tree, ``-NONE-`` included (call
        :meth:`remove_empty_elements` first for PARSEVAL).  Constituents with an
        empty label (the unlabeled PTB root) are left out.

        Parameters
        ----------
        preterminals : bool
            Include preterminal (part-of-speech) nodes; PARSEVAL does not.

        Returns
        -------
        list of (str, int, int)
            In pre-order (a parent before its children, left to right).
        """
        out = []
        position = 0
        # stack items: a Tree to open, or an index into ``out`` to close
        stack = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, int):
                label, start, _ = out[item]
                out[item] = (label, start, position)
                continue
            if isinstance(item, str):
                position += 1
                continue
            keep = item.label != "" and (preterminals or not item.is_preterminal())
            if keep:
                stack.append(len(out))
                out.append((item.label, position, None))
            stack.extend(reversed(item.children))
        return out

    # -- transformations --------------------------------------------------------
    def strip_function_tags(self):
        """A copy with function tags and indices removed from every label.

        ``NP-SBJ-1`` -> ``NP``, ``S-TPC-2`` -> ``S``, ``NP=3`` -> ``NP``; labels
        that start with ``-`` (``-NONE-``, ``-LRB-``, ``-RRB-``) are kept.
        """
        return _rebuild_tree([(strip_label(item[0]), item[1]) if isinstance(item, tuple)
                              else item for item in _flatten(self)])

    def remove_empty_elements(self, empty_label="-NONE-"):
        """A copy without empty elements and the constituents left empty.

        Parameters
        ----------
        empty_label : str
            The preterminal label of empty elements.

        Returns
        -------
        Tree or None
            None when nothing but empty elements was in the tree.
        """
        def build(node, children):
            if node.label == empty_label:
                return None
            kept = [c for c in children if c is not None]
            if node.children and not kept:
                return None
            return Tree(node.label, kept)

        return _bottom_up(self, build)


def _bottom_up(tree, build):
    """``build(node, new_children)`` applied to every constituent, children
    first (words are passed through as they are), without recursion: deep
    trees do not hit the interpreter's recursion limit."""
    results = []
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if not isinstance(node, Tree):
            results.append(node)
        elif expanded:
            cut = len(results) - len(node.children)
            children = results[cut:]
            del results[cut:]
            results.append(build(node, children))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
    return results.pop()


_CLOSE = object()      # markers of Tree.__str__'s stack
_SPACE = object()


def _writable(token):
    """A label or word the bracket parser reads back as itself."""
    return bool(token) and "(" not in token and ")" not in token and token.split() == [token]


def _flatten(tree):
    """Pre-order list: a constituent is ``(label, n_children)``, a word a str."""
    out = []
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Tree):
            out.append((item.label, len(item.children)))
            stack.extend(reversed(item.children))
        else:
            out.append(item)
    return out


def _rebuild_tree(flat):
    """Inverse of :func:`_flatten`, without recursion."""
    root = None
    stack = []          # [tree, children still to attach]
    for item in flat:
        if isinstance(item, str):
            node = item
        else:
            label, n_children = item
            node = Tree.__new__(Tree)
            node.label = label
            node.children = []
        if stack:
            parent = stack[len(stack) - 1]
            parent[0].children.append(node)
            parent[1] -= 1
        else:
            root = node
        if not isinstance(node, str) and item[1] > 0:
            stack.append([node, item[1]])
        while stack and stack[len(stack) - 1][1] == 0:
            stack.pop()
    return root


def _tokenize(text):
    return text.replace("(", " ( ").replace(")", " ) ").split()


def _line_of_token(text, token_index):
    """1-based line of the token number ``token_index`` of ``text`` (slow; errors only)."""
    for k, match in enumerate(_TOKEN_RE.finditer(text)):
        if k == token_index:
            return text.count("\n", 0, match.start()) + 1
    return text.count("\n") + 1


def _parse(text, name, strip_outer):
    tokens = _tokenize(text)
    n_tokens = len(tokens)
    trees = []
    stack = []      # open constituents: (label, children, token index of "(")

    def fail(reason, token_index):
        raise DataFormatError(reason, name, _line_of_token(text, token_index))

    i = 0
    while i < n_tokens:
        token = tokens[i]
        if token == "(":
            nxt = tokens[i + 1] if i + 1 < n_tokens else None
            if nxt is None:
                fail("'(' at the end of the input is never closed", i)
            if nxt == ")":
                fail("empty brackets '()'", i)
            if nxt == "(":
                stack.append(("", [], i))
                i += 1
            else:
                stack.append((nxt, [], i))
                i += 2
        elif token == ")":
            if not stack:
                fail("unbalanced brackets: ')' without a matching '('", i)
            label, children, _ = stack.pop()
            if not children:
                fail("constituent (%s) has no children" % label, i)
            tree = Tree.__new__(Tree)
            tree.label = label
            tree.children = children
            if stack:
                stack[-1][1].append(tree)
            else:
                if strip_outer and label == "" and len(children) == 1 \
                        and isinstance(children[0], Tree):
                    tree = children[0]
                trees.append(tree)
            i += 1
        else:
            if not stack:
                fail("word %r outside of any bracket (a tree must start with '(')" % token, i)
            stack[-1][1].append(token)
            i += 1
    if stack:
        fail("unbalanced brackets: '(' opened here is never closed (%d open at the end)"
             % len(stack), stack[0][2])
    return trees


def parse_tree(s, *, strip_outer=True):
    """Parse one bracketed tree from a string.

    Parameters
    ----------
    s : str
        Exactly one tree, possibly over several lines.
    strip_outer : bool
        Remove an unlabeled root with a single child (``( (S ...) )`` ->
        ``(S ...)``).

    Returns
    -------
    Tree

    Raises
    ------
    DataFormatError
        No tree, more than one tree, or malformed brackets (the message gives
        the line within ``s``).
    """
    if not isinstance(s, str):
        raise TypeError("parse_tree expects a str, got %s" % type(s).__name__)
    trees = _parse(s, None, strip_outer)
    if not trees:
        raise DataFormatError("expected a bracketed tree, found no tree", None, 1)
    if len(trees) > 1:
        raise DataFormatError("expected one tree, found %d" % len(trees), None,
                              _second_tree_line(s))
    return trees[0]


def _second_tree_line(s):
    depth = 0
    for match in _TOKEN_RE.finditer(s):
        token = match.group()
        if token == "(":
            if depth == 0 and match.start() > 0 and s[:match.start()].strip():
                return s.count("\n", 0, match.start()) + 1
            depth += 1
        elif token == ")":
            depth -= 1
    return 1


def read_trees(f, *, strip_outer=True, encoding="utf-8"):
    """Read all bracketed trees of a file.

    Parameters
    ----------
    f : str, os.PathLike or file object
        ``.gz`` / ``.bz2`` paths are decompressed transparently.  Trees may
        span lines, and a line may hold several trees.
    strip_outer : bool
        Remove the unlabeled PTB root (``( (S ...) )`` -> ``(S ...)``) when
        it has a single child.
    encoding : str

    Returns
    -------
    list of Tree
        Empty for a file with no trees (only whitespace).

    Raises
    ------
    DataFormatError
        Malformed brackets, with the file name and line.
    """
    text, name = read_text(f, encoding=encoding)
    with gc_paused():
        return _parse(text, name, strip_outer)
