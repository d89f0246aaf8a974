"""Feature templates for sequence labelling, compiled to integer feature ids once.

A *template* is a small text of whitespace-separated items, each one feature
family, in the notation of CRFsuite's example feature extractors [1]_:

``w[0]``
    the value of column ``w`` at the current token (offset 0);
``w[-1]|w[0]``
    a conjunction: the values at offsets -1 and 0, joined (``w[-1]|w[0]=the|cat``);
``lower(w[0])``, ``suffix3(lower(w[1]))``
    transforms of a column value (nestable, applied inside out);
``bias``
    a feature present at every token;
``__BOS__`` / ``__EOS__``
    a feature present only at the first / last token of a sentence.

Transforms: ``lower``, ``upper``, ``prefixN`` / ``suffixN`` (any ``N >= 1``:
``s[:N]`` / ``s[-N:]``, the whole value when it is shorter), ``shape`` (each
upper-case letter -> ``X``, lower-case -> ``x``, digit -> ``d``, other characters
kept: ``"Mr.3"`` -> ``"Xx.d"``), ``shortshape`` (``shape`` with runs of one
character collapsed: ``"Xxxxx"`` -> ``"Xx"``), ``len`` (the length as a
decimal string) and the predicates ``isdigit``, ``isalpha``, ``istitle``,
``isupper``, ``islower``, ``hasdigit``, ``hashyphen`` (value ``True`` or
``False``).  ``iftrue(...)``, the outermost transform of an atom, keeps the
feature only where the value is ``True`` (``iftrue(istitle(w[0]))``: a feature
at title-case words, none elsewhere -- a boolean feature the way
python-crfsuite treats ``{"istitle": False}``: absent).  ``#`` starts a comment
that runs to the end of the line.

Out-of-sentence offsets.  With ``boundary="drop"`` (the default) a feature
any of whose atoms falls outside the sentence is omitted, exactly as in
CRFsuite's ``crfutils.apply_templates``; the chunking example then appends
``__BOS__`` to the first and ``__EOS__`` to the last token, which the
:data:`CRFSUITE_CHUNKING` template reproduces.  With ``boundary="pad"`` such an
atom takes the value ``__BOS__`` (before the start) or ``__EOS__`` (after the
end) instead, so e.g. ``w[-1]`` at the first token is the feature
``w[-1]=__BOS__``.

How it is fast.  No per-token string is ever built.  Each column's strings
are mapped to integer *type* ids once (one dict lookup per token and column);
transforms run once per distinct type; then the Cython kernel
(:mod:`linclass._core._features`) forms, for each token and template, the exact
integer key ``(template index, value ids at the offsets)`` and looks it up in
an open-addressing hash table that assigns feature ids in first-occurrence
order (fit) or drops unknown keys (transform).  With ``n_hash`` the key's
64-bit hash modulo ``n_hash`` is the feature id (no vocabulary; value ids are
then stable hashes of the value strings, so unseen words still get features).

References
----------
.. [1] N. Okazaki, "CRFsuite: a fast implementation of Conditional Random
   Fields (CRFs)", 2007, http://www.chokkan.org/software/crfsuite/ -- the
   ``example/chunking.py`` and ``example/crfutils.py`` feature extractors.
.. [2] K. Weinberger, A. Dasgupta, J. Langford, A. Smola, J. Attenberg,
   "Feature hashing for large scale multitask learning", ICML 2009.
"""
import collections
import hashlib
import itertools
import math
import numbers
import operator
import re

import numpy as np
import scipy.sparse as sp

from ..base import BaseEstimator, TransformerMixin
from ..exceptions import NotFittedError

__all__ = ["FeatureTemplate", "TemplateItem", "Atom", "parse_template",
           "CRFSUITE_CHUNKING", "POS_TEMPLATE", "CONLL2002_NER", "NER_TEMPLATE",
           "NER_WORD_TEMPLATE", "NAMED_TEMPLATES", "named_template"]

#: CRFsuite's ``example/chunking.py`` template (CoNLL-2000, columns ``w pos``):
#: 19 conjunctions plus ``__BOS__``/``__EOS__`` at the sentence ends.
CRFSUITE_CHUNKING = """
w[-2] w[-1] w[0] w[1] w[2] w[-1]|w[0] w[0]|w[1]
pos[-2] pos[-1] pos[0] pos[1] pos[2]
pos[-2]|pos[-1] pos[-1]|pos[0] pos[0]|pos[1] pos[1]|pos[2]
pos[-2]|pos[-1]|pos[0] pos[-1]|pos[0]|pos[1] pos[0]|pos[1]|pos[2]
__BOS__ __EOS__
"""

#: A standard part-of-speech template over the word column ``w`` alone
#: (in the spirit of Ratnaparkhi 1996 / Collins 2002): the word, its lower
#: case, prefixes and suffixes of length 1-4, shape and orthographic
#: predicates, and the neighbouring words at +-1 and +-2.
POS_TEMPLATE = """
bias
w[0] lower(w[0])
prefix1(w[0]) prefix2(w[0]) prefix3(w[0]) prefix4(w[0])
suffix1(w[0]) suffix2(w[0]) suffix3(w[0]) suffix4(w[0])
shape(w[0]) shortshape(w[0])
isdigit(w[0]) istitle(w[0]) isupper(w[0]) hasdigit(w[0]) hashyphen(w[0])
lower(w[-1]) lower(w[1]) lower(w[-2]) lower(w[2])
suffix3(lower(w[-1])) suffix3(lower(w[1]))
lower(w[-1])|lower(w[0]) lower(w[0])|lower(w[1])
__BOS__ __EOS__
"""

#: CoNLL-2002 NER template (columns ``w pos``), the feature set of the
#: sklearn-crfsuite CoNLL-2002 tutorial: lower-cased word, suffixes 2 and 3,
#: case and digit predicates, POS tag and its first two characters, the same
#: (without suffixes) for the neighbours at -1 and +1, ``__BOS__``/``__EOS__``.
#: The predicates are boolean features present only when true
#: (``iftrue``), as python-crfsuite turns the tutorial's ``False`` values
#: into absent attributes: exactly the tutorial's feature set.
CONLL2002_NER = """
bias
lower(w[0]) suffix3(w[0]) suffix2(w[0])
iftrue(isupper(w[0])) iftrue(istitle(w[0])) iftrue(isdigit(w[0]))
pos[0] prefix2(pos[0])
lower(w[-1]) iftrue(istitle(w[-1])) iftrue(isupper(w[-1])) pos[-1] prefix2(pos[-1])
lower(w[1]) iftrue(istitle(w[1])) iftrue(isupper(w[1])) pos[1] prefix2(pos[1])
__BOS__ __EOS__
"""

#: Named-entity template over the word column ``w`` alone: the word, its
#: lower case, prefixes and suffixes of length 1-4, shape, short shape and
#: orthographic predicates, the lower-cased neighbours at +-1 and +-2, the
#: short shapes of the neighbours at +-1 alone and joined with the current
#: one, neighbour suffixes and word bigrams.  Named entities are signalled by
#: capitalisation in context (``Xx Xx``), which the shape conjunctions catch
#: and the sklearn-crfsuite tutorial features (:data:`CONLL2002_NER`) miss.
NER_WORD_TEMPLATE = """
bias
w[0] lower(w[0])
prefix1(w[0]) prefix2(w[0]) prefix3(w[0]) prefix4(w[0])
suffix1(w[0]) suffix2(w[0]) suffix3(w[0]) suffix4(w[0])
shape(w[0]) shortshape(w[0])
isdigit(w[0]) istitle(w[0]) isupper(w[0]) hasdigit(w[0]) hashyphen(w[0])
lower(w[-1]) lower(w[1]) lower(w[-2]) lower(w[2])
shortshape(w[-1]) shortshape(w[1])
shortshape(w[-1])|shortshape(w[0]) shortshape(w[0])|shortshape(w[1])
suffix3(lower(w[-1])) suffix3(lower(w[1]))
lower(w[-1])|lower(w[0]) lower(w[0])|lower(w[1])
__BOS__ __EOS__
"""

#: :data:`NER_WORD_TEMPLATE` plus the part-of-speech column ``pos``: the tags
#: at -1, 0, +1 and the tag bigrams around the current token (columns ``w pos``).
NER_TEMPLATE = NER_WORD_TEMPLATE + """
pos[0] pos[-1] pos[1] pos[-1]|pos[0] pos[0]|pos[1]
"""

#: :data:`POS_TEMPLATE` plus an ambiguity-class column ``a`` (the set of tags
#: each word had in training, :class:`linclass.features.ambiguity.AmbiguityClasses`,
#: jackknifed on the training sentences): the classes at -2..+2 and the class
#: bigrams around the current token (columns ``w a``).
POS_AMBIGUITY_TEMPLATE = POS_TEMPLATE + """
a[0] a[-1] a[1] a[-1]|a[0] a[0]|a[1] a[2] a[-2]
"""

#: Predefined templates by name (``SequenceTagger(features=name)``).  A name
#: maps to one template per set of columns: ``"ner"`` is
#: :data:`NER_TEMPLATE` when the tokens have a ``pos`` column and
#: :data:`NER_WORD_TEMPLATE` when they have the word column alone.
NAMED_TEMPLATES = {
    "pos": POS_TEMPLATE,
    "chunking": CRFSUITE_CHUNKING,
    "ner": NER_TEMPLATE,
    "conll2002-tutorial": CONLL2002_NER,
}


def named_template(name, columns):
    """The predefined template called ``name`` for tokens with ``columns``.

    Returns ``None`` when ``name`` is not a predefined name (it is then a
    template text).  ``"ner"`` without a ``pos`` column gives
    :data:`NER_WORD_TEMPLATE`.
    """
    if name not in NAMED_TEMPLATES:
        return None
    if name == "ner" and (columns is None or "pos" not in columns):
        return NER_WORD_TEMPLATE
    return NAMED_TEMPLATES[name]


# Template item kinds (values shared with linclass._core._features).
KIND_CONJUNCTION = 0
KIND_BOS = 1
KIND_EOS = 2
BOS_NAME = "__BOS__"
EOS_NAME = "__EOS__"
MAX_ARITY = 15
_BEFORE_START = -1
_AFTER_END = -2
_UNKNOWN = -3
_ABSENT = -4         # iftrue(...) of a false predicate: the feature is left out


# -- transforms (str -> str), applied once per distinct value ----------------
class _ShapeTable(dict):
    """``str.translate`` table of the shape transform, filled one character at a time."""

    def __missing__(self, code):
        c = chr(code)
        value = self[code] = ("X" if c.isupper() else "x" if c.islower() else
                              "d" if c.isdigit() else c)
        return value


_SHAPE_TABLE = _ShapeTable()
_FIRST = operator.itemgetter(0)


def _shape(s):
    return s.translate(_SHAPE_TABLE)


def _shortshape(s):
    # runs of one character collapsed to one (as the regex (.)\1+ -> \1, faster)
    return "".join(map(_FIRST, itertools.groupby(s.translate(_SHAPE_TABLE))))


def _hasdigit(s):
    # an alphabetic string holds no digit (str.isdigit characters are not letters)
    return "False" if s.isalpha() else str(any(c.isdigit() for c in s))


_TRANSFORMS = {
    "lower": str.lower,
    "upper": str.upper,
    "shape": _shape,
    "shortshape": _shortshape,
    "len": lambda s: str(len(s)),
    "isdigit": lambda s: str(s.isdigit()),
    "isalpha": lambda s: str(s.isalpha()),
    "istitle": lambda s: str(s.istitle()),
    "isupper": lambda s: str(s.isupper()),
    "islower": lambda s: str(s.islower()),
    "hasdigit": _hasdigit,
    "hashyphen": lambda s: str("-" in s),
    "iftrue": str,              # the value; a value other than "True" drops the feature
}
# predicates applied to a whole list at C speed: map(str, map(method, values))
_PREDICATE_METHODS = {"isdigit": str.isdigit, "isalpha": str.isalpha,
                      "istitle": str.istitle, "isupper": str.isupper,
                      "islower": str.islower}
_AFFIX = re.compile(r"(prefix|suffix)([0-9]+)\Z")


def _transform_function(name):
    """The str -> str function of a transform name, or None if unknown."""
    if name in _TRANSFORMS:
        return _TRANSFORMS[name]
    m = _AFFIX.match(name)
    if m and int(m.group(2)) >= 1:
        n = int(m.group(2))
        # s[:n] / s[-n:] as a C-level slice getter
        return operator.itemgetter(slice(None, n) if m.group(1) == "prefix"
                                   else slice(-n, None))
    return None


def _map_transform(name, values):
    """``[transform(v) for v in values]`` for one transform name, at C speed
    where possible (predicates, slices, ``str`` methods, the shapes and
    ``hasdigit`` in :mod:`linclass._core._features`)."""
    method = _PREDICATE_METHODS.get(name)
    if method is not None:
        return list(map(str, map(method, values)))
    if name in ("shape", "shortshape", "hasdigit") and \
            all(map(type.__instancecheck__, itertools.repeat(str), values)):
        from .._core import _features
        if name == "hasdigit":
            return _features.has_digit(values)
        return _features.shapes(values, name == "shortshape")
    return list(map(_transform_function(name), values))


def _derive_all(spaces, column_types):
    """The derived values of every space ``(column, transforms)``: the
    transforms applied to the column's types, each prefix of a transform
    chain computed once (``suffix3(lower(w))`` reuses ``lower(w)``).
    Returns one list per space."""
    memo = {}

    def derive(c, transforms):
        key = (c, transforms)
        if key not in memo:
            if not transforms:
                memo[key] = column_types[c]
            else:
                memo[key] = _map_transform(transforms[-1], derive(c, transforms[:-1]))
        return memo[key]
    return [derive(c, tuple(transforms)) for c, transforms in spaces]


# -- parsing ------------------------------------------------------------------
Atom = collections.namedtuple("Atom", "column offset transforms")
Atom.__doc__ = """One value of a template item: ``column[offset]`` under ``transforms``
(a tuple of transform names, innermost first)."""


def _atom_name(atom):
    s = "%s[%d]" % (atom.column, atom.offset)
    for t in atom.transforms:
        s = "%s(%s)" % (t, s)
    return s


class TemplateItem(collections.namedtuple("TemplateItem", "kind atoms")):
    """One feature family: ``kind`` (conjunction, BOS or EOS) and its atoms."""
    __slots__ = ()

    @property
    def name(self):
        """Canonical text of the item (``"w[-1]|w[0]"``, ``"bias"``, ``"__BOS__"``)."""
        if self.kind == KIND_BOS:
            return BOS_NAME
        if self.kind == KIND_EOS:
            return EOS_NAME
        if not self.atoms:
            return "bias"
        return "|".join(_atom_name(a) for a in self.atoms)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[+-]?[0-9]+")


class _ItemParser:
    def __init__(self, text, where):
        self.text = text
        self.where = where
        self.i = 0

    def fail(self, what):
        raise ValueError("malformed template item %r (%s), at character %d: %s"
                         % (self.text, self.where, self.i + 1, what))

    def expect(self, char):
        if self.i >= len(self.text) or self.text[self.i] != char:
            found = repr(self.text[self.i]) if self.i < len(self.text) else "the end"
            self.fail("expected %r, found %s" % (char, found))
        self.i += 1

    def atom(self, depth=0):
        m = _IDENT.match(self.text, self.i)
        if not m:
            self.fail("expected a column name or a transform such as lower(...)")
        name = m.group()
        self.i = m.end()
        if self.i < len(self.text) and self.text[self.i] == "(":
            if _transform_function(name) is None:
                self.fail("unknown transform %r (known: %s, prefixN, suffixN)"
                          % (name, ", ".join(sorted(_TRANSFORMS))))
            self.i += 1
            inner = self.atom(depth + 1)
            self.expect(")")
            if "iftrue" in inner.transforms:
                self.fail("iftrue(...) must be the outermost transform of an atom")
            return inner._replace(transforms=inner.transforms + (name,))
        self.expect("[")
        m = _INT.match(self.text, self.i)
        if not m:
            self.fail("expected an integer offset inside [...]")
        if abs(int(m.group())) > 2 ** 31 - 1:
            self.fail("offset %s is out of range (at most 2**31 - 1 tokens away)" % m.group())
        self.i = m.end()
        self.expect("]")
        return Atom(name, int(m.group()), ())

    def item(self):
        if self.text == "bias":
            return TemplateItem(KIND_CONJUNCTION, ())
        if self.text == BOS_NAME:
            return TemplateItem(KIND_BOS, ())
        if self.text == EOS_NAME:
            return TemplateItem(KIND_EOS, ())
        atoms = [self.atom()]
        while self.i < len(self.text):
            self.expect("|")
            atoms.append(self.atom())
        if len(atoms) > MAX_ARITY:
            self.fail("more than %d atoms in one conjunction" % MAX_ARITY)
        return TemplateItem(KIND_CONJUNCTION, tuple(atoms))


def parse_template(template, columns=None):
    """Parse a template (see the module docstring) into a list of :class:`TemplateItem`.

    Parameters
    ----------
    template : str or sequence of str
        Whitespace-separated items (``#`` comments allowed), or a list of items.
    columns : sequence of str, optional
        Column names; an atom naming another column raises ``ValueError``.

    Returns
    -------
    list of TemplateItem
        In template order; a repeated item raises ``ValueError``.

    Examples
    --------
    >>> [item.name for item in parse_template("w[0] lower(w[-1])|pos[0] bias")]
    ['w[0]', 'lower(w[-1])|pos[0]', 'bias']
    """
    pieces = []                     # (item text, where)
    if isinstance(template, str):
        for lineno, line in enumerate(template.splitlines(), 1):
            line = line.split("#", 1)[0]
            for m in re.finditer(r"\S+", line):
                pieces.append((m.group(), "line %d, column %d" % (lineno, m.start() + 1)))
    elif isinstance(template, (list, tuple)):
        for k, text in enumerate(template):
            if not isinstance(text, str) or not text.strip() or len(text.split()) != 1:
                raise ValueError("template item %d must be one non-empty string without "
                                 "spaces, got %r" % (k, text))
            pieces.append((text.strip(), "item %d" % k))
    else:
        raise ValueError("template must be a string or a list of strings, got %s"
                         % type(template).__name__)
    if not pieces:
        raise ValueError("the template has no items")
    items, seen = [], {}
    for text, where in pieces:
        item = _ItemParser(text, where).item()
        if columns is not None:
            for atom in item.atoms:
                if atom.column not in columns:
                    raise ValueError("template item %r (%s) names the unknown column %r; "
                                     "the columns are %s" % (text, where, atom.column,
                                                             ", ".join(map(repr, columns))))
        if item.name in seen:
            raise ValueError("template item %r (%s) repeats %r (%s)"
                             % (text, where, item.name, seen[item.name]))
        seen[item.name] = where
        items.append(item)
    return items


class _Compiled:
    """Integer arrays of a parsed template, as the Cython kernel reads them."""

    def __init__(self, items, columns):
        self.items = items
        self.spaces = []            # distinct (column index, transforms)
        space_of = {}
        kind, atom_ptr, atom_space, atom_offset = [], [0], [], []
        for item in items:
            kind.append(item.kind)
            for atom in item.atoms:
                key = (columns.index(atom.column), atom.transforms)
                if key not in space_of:
                    space_of[key] = len(self.spaces)
                    self.spaces.append(key)
                atom_space.append(space_of[key])
                atom_offset.append(atom.offset)
            atom_ptr.append(len(atom_space))
        self.kind = np.array(kind, dtype=np.int32)
        self.atom_ptr = np.array(atom_ptr, dtype=np.int32)
        self.atom_space = np.array(atom_space, dtype=np.int32)
        self.atom_offset = np.array(atom_offset, dtype=np.int32)
        self.width = 1 + max(len(item.atoms) for item in items)
        self.used_columns = sorted({c for c, _ in self.spaces})


# -- input validation -----------------------------------------------------------
def _as_sentence_list(sentences):
    if isinstance(sentences, (str, bytes)) or sentences is None:
        raise ValueError("sentences must be a list of sentences (lists of tokens), got %s"
                         % type(sentences).__name__)
    try:
        sentences = list(sentences)
    except TypeError:
        raise ValueError("sentences must be a list of sentences (lists of tokens), got %s"
                         % type(sentences).__name__) from None
    if all(map(isinstance, sentences, itertools.repeat((list, tuple)))):
        return sentences
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, np.ndarray) and sentence.ndim in (1, 2):
            # numpy strings -> str (1-D: one token per item; 2-D: a row of columns)
            sentences[i] = sentence.tolist() if sentence.ndim == 1 else \
                [tuple(row) for row in sentence.tolist()]
        elif not isinstance(sentence, (list, tuple)):
            raise ValueError("sentence %d must be a list of tokens, got %s"
                             % (i, type(sentence).__name__))
    return sentences


def _locate_token(sentences, bad):
    """(sentence index, token index, token) of the first token where bad(token) is true."""
    for i, sentence in enumerate(sentences):
        for j, token in enumerate(sentence):
            if bad(token):
                return i, j, token
    raise AssertionError("no bad token found")      # pragma: no cover


def _column_values(sentences, columns, used):
    """Validate column-format sentences; returns (lengths, {column index: list of str})."""
    n_columns = len(columns)
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    tokens = list(itertools.chain.from_iterable(sentences))
    if n_columns == 1 and all(map(isinstance, tokens, itertools.repeat(str))):
        return lengths, {0: tokens}
    if not all(map(isinstance, tokens, itertools.repeat((tuple, list)))):
        i, j, tok = _locate_token(sentences, lambda t: not isinstance(t, (tuple, list)))
        if isinstance(tok, dict):
            raise ValueError("sentence %d, token %d is a feature dict; dict (python-crfsuite) "
                             "input needs FeatureTemplate(template=None)" % (i, j))
        raise ValueError("sentence %d, token %d must be a tuple of %d column strings (%s), "
                         "got %r" % (i, j, n_columns, ", ".join(columns), tok))
    if tokens and set(map(len, tokens)) != {n_columns}:
        i, j, tok = _locate_token(sentences, lambda t: len(t) != n_columns)
        raise ValueError("sentence %d, token %d has %d columns, expected %d (%s): %r"
                         % (i, j, len(tok), n_columns, ", ".join(columns), tok))
    out = {}
    for c in used:
        # the values' types are checked on the distinct values (_column_type_ids)
        out[c] = list(map(operator.itemgetter(c), tokens))
    return lengths, out


def _column_types(sentences, columns, used, n_jobs=1):
    """(lengths, {column: (types, int64 type id per token)}, {column: [value -> id]})
    of column-format sentences, validated (one C pass over the tokens, in
    ``n_jobs`` token blocks without the GIL when the tokens are tuples of
    ``str``; the Python checks name the first bad token)."""
    from .._core import _features
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    tokens = list(itertools.chain.from_iterable(sentences))
    result = _features.column_type_ids_threaded(tokens, len(columns), list(used), n_jobs)
    if result is None:
        result = _features.column_type_ids(tokens, len(columns), list(used))
    if result is not None:
        dicts, ids = result
        local = {c: (list(d), ids[j]) for j, (c, d) in enumerate(zip(used, dicts))}
        return lengths, local, {c: [d] for c, d in zip(used, dicts)}
    lengths, column_values = _column_values(sentences, columns, used)   # raises
    type_index = {}
    local = {c: _column_type_ids(sentences, columns, c, v, type_index.setdefault(c, []))
             for c, v in column_values.items()}
    return lengths, local, type_index


def _column_type_ids(sentences, columns, c, values, index_out):
    """:func:`_type_ids` of column ``c``'s values, refusing non-string values
    (checked once per distinct value) with the sentence and token named."""
    def bad_value():
        i, j, tok = _locate_token(sentences, lambda t: not isinstance(t[c], str))
        raise ValueError("sentence %d, token %d: column %r must be a string, got %r"
                         % (i, j, columns[c], tok[c]))
    try:
        types, ids = _type_ids(values, index_out)
    except TypeError:                                  # an unhashable value
        bad_value()
    if not all(map(isinstance, types, itertools.repeat(str))):
        bad_value()
    return types, ids


def _type_ids(values, index_out=None):
    """(distinct values in first-occurrence order, int64 id of each value).

    With ``index_out`` (a list), the value -> id dict is appended to it.
    """
    index = collections.defaultdict()
    index.default_factory = index.__len__        # unseen value -> next id, in C
    ids = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    if index_out is not None:
        index.default_factory = None
        index_out.append(index)
    return list(index), ids


def _grow_ids(values, index, known):
    """int64 id of each value in ``index``, adding unseen values (to ``known`` too)."""
    ids = np.empty(len(values), dtype=np.int64)
    get = index.get
    for k, v in enumerate(values):
        i = get(v)
        if i is None:
            i = index[v] = len(known)
            known.append(v)
        ids[k] = i
    return ids


def _stable_hash(s):
    """Process-independent signed 64-bit hash of a string (BLAKE2b)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "little", signed=True)


def _token_attributes(token, where):
    """{attribute: weight} of one python-crfsuite item (dict or list of strings)."""
    out = {}
    if isinstance(token, dict):
        _add_attributes("", token, out, where)
    elif isinstance(token, (list, tuple)):
        for name in token:
            if not isinstance(name, str):
                raise ValueError("%s: attribute %r must be a string" % (where, name))
            out[name] = 1.0
    else:
        raise ValueError("%s must be a dict of features or a list of attribute strings "
                         "(python-crfsuite item), got %s" % (where, type(token).__name__))
    return out


def _add_attributes(prefix, features, out, where):
    # Follows python-crfsuite's ItemSequence conversion rules.
    for key, value in features.items():
        if not isinstance(key, str):
            raise ValueError("%s: feature name %r must be a string" % (where, key))
        name = prefix + key
        if isinstance(value, str):
            out[name + ":" + value] = 1.0
        elif isinstance(value, (bool, np.bool_)):
            out[name] = 1.0 if value else 0.0
        elif isinstance(value, numbers.Real):
            value = float(value)
            if not math.isfinite(value):
                raise ValueError("%s: feature %r has the non-finite weight %r"
                                 % (where, name, value))
            out[name] = value
        elif isinstance(value, dict):
            _add_attributes(name + ":", value, out, where)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for v in value:
                if not isinstance(v, str):
                    raise ValueError("%s: feature %r holds %r; lists may hold strings only"
                                     % (where, name, v))
                out[name + ":" + v] = 1.0
        else:
            raise ValueError("%s: feature %r has a value of type %s; use str, a number, "
                             "bool, dict or a list of strings" % (where, name,
                                                                 type(value).__name__))


# -- the estimator --------------------------------------------------------------
class FeatureTemplate(TransformerMixin, BaseEstimator):
    """Turn sentences into a sparse matrix of integer template features, one row per token.

    Parameters
    ----------
    template : str, list of str or None, default=CRFSUITE_CHUNKING
        Feature template (see the module docstring and :func:`parse_template`).
        ``None`` selects *attribute mode*: the input is python-crfsuite /
        sklearn-crfsuite data (each token a dict of features or a list of
        attribute strings) and its attributes are used as given.
    columns : sequence of str, default=("w", "pos")
        Names of the token columns, in order (template mode only).  With a
        single column, tokens may be plain strings.
    min_count : int, default=1
        Keep only features occurring at least this many times in ``fit``
        (ids are then renumbered, keeping first-occurrence order).
    n_hash : int or None, default=None
        Hashing mode: the feature id is a 64-bit hash of the feature modulo
        ``n_hash`` (no vocabulary, so unseen words still get features;
        colliding features in one row are summed).  ``min_count`` must be 1.
    boundary : {"drop", "pad"}, default="drop"
        Out-of-sentence offsets: ``"drop"`` omits the feature (CRFsuite's
        behaviour); ``"pad"`` gives the atom the value ``__BOS__``/``__EOS__``.
    n_jobs : int, default=1
        Threads of the template pass, which run without the GIL: the column
        values' type ids (tokens cut into ``n_jobs`` blocks, each with
        private string tables renumbered in block order; tokens that are not
        tuples of ``str`` take a one-thread pass) and the integer key
        lookups.  ``fit`` deals the templates to the threads, each
        running its templates over all the sentences with a private table
        (the templates' keys are disjoint), then numbers the keys in
        first-occurrence order; ``transform`` and ``partial_fit`` cut the
        sentences into blocks (``partial_fit``'s private tables are merged in
        block order).  The vocabulary, the feature ids and the output are
        identical for every ``n_jobs`` (only the time differs).

    Attributes
    ----------
    n_features_ : int
        Number of columns of the output (``n_hash`` in hashing mode).
    feature_keys_ : ndarray of int64, shape (``n_features_``, width)
        Template mode: the integer key of each feature (template index, then
        the value ids of its atoms; -1/-2 = before start/after end).
    feature_counts_ : ndarray of int64, shape (``n_features_``,)
        Occurrences of each feature in the fitted sentences.
    space_values_ : list of list of str
        Template mode: the distinct values of each derived column
        ``(column, transforms)`` seen in ``fit``; value id = position.
    attributes_ : list of str
        Attribute mode: the attribute of each feature id.

    Notes
    -----
    ``fit_transform`` and ``transform`` return ``(X, lengths)``: ``X`` a
    ``scipy.sparse.csr_matrix`` of shape ``(n_tokens, n_features_)`` with
    float64 data, int32 indices, sorted indices and no duplicates; ``lengths``
    the int64 number of tokens of each sentence (empty sentences give 0 rows).
    In ``transform`` features not seen in ``fit`` are dropped.

    Attribute mode converts a token as python-crfsuite's ``ItemSequence``
    does: ``{"k": "v"}`` -> attribute ``"k:v"`` with weight 1, ``{"k": 2.5}``
    -> ``"k"`` with weight 2.5, ``bool`` -> weight 1 or 0, a nested dict
    ``{"k": {"j": ...}}`` -> ``"k:j..."``, a list or set of strings under
    ``"k"`` -> ``"k:s"`` each with weight 1, and a token given as a list of
    strings -> each with weight 1 (repeats count once).  Attributes of weight
    0 contribute nothing to a linear score and are left out.

    Examples
    --------
    >>> ft = FeatureTemplate("w[0] w[-1]|w[0]", columns=("w",))
    >>> X, lengths = ft.fit_transform([["the", "cat"], ["a", "cat"]])
    >>> X.shape, lengths.tolist()
    ((4, 5), [2, 2])
    >>> list(ft.get_feature_names_out())
    ['w[0]=the', 'w[0]=cat', 'w[-1]|w[0]=the|cat', 'w[0]=a', 'w[-1]|w[0]=a|cat']
    """

    def __init__(self, template=CRFSUITE_CHUNKING, columns=("w", "pos"), *, min_count=1,
                 n_hash=None, boundary="drop", n_jobs=1):
        self.template = template
        self.columns = columns
        self.min_count = min_count
        self.n_hash = n_hash
        self.boundary = boundary
        self.n_jobs = n_jobs

    # -- parameters ----------------------------------------------------------
    def _check_params(self):
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, numbers.Integral) \
                or self.min_count < 1:
            raise ValueError("min_count must be an integer >= 1, got %r" % (self.min_count,))
        if self.n_hash is not None:
            if isinstance(self.n_hash, bool) or not isinstance(self.n_hash, numbers.Integral) \
                    or not 1 <= self.n_hash <= np.iinfo(np.int32).max:
                raise ValueError("n_hash must be None or an integer in 1..2**31-1, got %r"
                                 % (self.n_hash,))
            if self.min_count != 1:
                raise ValueError("min_count > 1 needs a vocabulary; it cannot be combined "
                                 "with n_hash")
        if self.boundary not in ("drop", "pad"):
            raise ValueError("boundary must be 'drop' or 'pad', got %r" % (self.boundary,))
        n_jobs = getattr(self, "n_jobs", 1)
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < 1:
            raise ValueError("n_jobs must be an integer >= 1, got %r" % (n_jobs,))
        if self.template is None:
            return None
        columns = self.columns
        if isinstance(columns, str) or not isinstance(columns, (list, tuple)) or not columns \
                or not all(isinstance(c, str) and _IDENT.fullmatch(c) for c in columns):
            raise ValueError("columns must be a non-empty list of column names (identifiers), "
                             "got %r" % (columns,))
        if len(set(columns)) != len(columns):
            raise ValueError("columns has repeated names: %r" % (columns,))
        return _Compiled(parse_template(self.template, columns=tuple(columns)), list(columns))

    def _compiled(self):
        if getattr(self, "_compiled_cache", None) is None:
            self._compiled_cache = self._check_params()
        return self._compiled_cache

    def _check_fitted(self):
        if not hasattr(self, "n_features_"):
            raise NotFittedError("this FeatureTemplate is not fitted yet; call fit or "
                                 "fit_transform first")

    # -- public API ------------------------------------------------------------
    def fit(self, sentences, y=None):
        """Learn the feature vocabulary of ``sentences``; returns self."""
        self.fit_transform(sentences)
        return self

    def fit_transform(self, sentences, y=None):
        """Learn the vocabulary and return ``(X, lengths)`` of ``sentences`` in one pass."""
        self._compiled_cache = None
        self._table = None
        self._space_index = None
        self._attribute_index = None
        self._type_cache = None
        compiled = self._compiled()
        sentences = _as_sentence_list(sentences)
        if not sentences:
            raise ValueError("fit needs at least one sentence, got an empty list")
        for name in ("feature_keys_", "feature_counts_", "space_values_", "attributes_"):
            self.__dict__.pop(name, None)
        if compiled is None:
            X, lengths = self._attributes_fit(sentences)
        elif self.n_hash is not None:
            self.n_features_ = int(self.n_hash)
            X, lengths = self._template_transform(compiled, sentences, fitting=False)
        else:
            X, lengths = self._template_transform(compiled, sentences, fitting=True)
        return X, lengths

    def transform(self, sentences):
        """``(X, lengths)`` of ``sentences``; features unseen in ``fit`` are dropped."""
        self._check_fitted()
        compiled = self._compiled()
        sentences = _as_sentence_list(sentences)
        if compiled is None:
            return self._attributes_transform(sentences)
        return self._template_transform(compiled, sentences, fitting=False)

    def partial_fit(self, sentences, y=None):
        """Add the features of ``sentences`` unseen so far to the vocabulary; returns self."""
        self.partial_fit_transform(sentences)
        return self

    def partial_fit_transform(self, sentences, y=None):
        """``(X, lengths)`` of ``sentences``, growing the vocabulary first.

        Features seen before keep their ids; new ones get the next ids, in
        first-occurrence order, so ``n_features_`` only grows (a model fitted
        on the old columns extends its weights with zero rows).  New features
        are kept from their first occurrence: ``min_count`` applies to the
        first ``fit`` only.  In hashing mode (``n_hash``) this is
        ``transform``.  Unfitted, this is ``fit_transform``.
        """
        if not hasattr(self, "n_features_"):
            return self.fit_transform(sentences)
        compiled = self._compiled()
        sentences = _as_sentence_list(sentences)
        if compiled is None:
            if self.n_hash is not None:
                return self._attributes_transform(sentences)
            return self._attributes_grow(sentences)
        if self.n_hash is not None:
            return self._template_transform(compiled, sentences, fitting=False)
        return self._template_transform(compiled, sentences, fitting=False, grow=True)

    def prune(self, min_count):
        """Drop the features seen fewer than ``min_count`` times in the data
        that built the vocabulary (``fit`` plus every ``partial_fit``);
        the kept features are renumbered in their order.  Returns self.

        Growing a vocabulary shard by shard with ``partial_fit`` and then
        pruning gives the vocabulary, with the same ids, that ``fit`` with
        ``min_count`` gives on the shards concatenated (first-occurrence
        order, global counts): the distributed tagger builds its feature
        space this way.  Not available in hashing mode.
        """
        self._check_fitted()
        if isinstance(min_count, bool) or not isinstance(min_count, numbers.Integral) \
                or min_count < 1:
            raise ValueError("min_count must be an integer >= 1, got %r" % (min_count,))
        if self.n_hash is not None:
            raise ValueError("a hashed feature space (n_hash) has no vocabulary to prune")
        counts = np.asarray(self.feature_counts_, dtype=np.int64)
        keep = counts >= min_count
        if self._compiled() is None:
            self.attributes_ = [a for a, k in zip(self.attributes_, keep.tolist()) if k]
            self._attribute_index = None
        else:
            self.feature_keys_ = np.ascontiguousarray(self.feature_keys_[keep])
            self._table = None
            self._type_cache = None
        self.feature_counts_ = counts[keep]
        self.n_features_ = int(keep.sum())
        return self

    def get_feature_names_out(self, input_features=None):
        """Feature name of each column of ``X`` (object array of str).

        Template features read ``"<item>=<values>"`` (``"w[-1]|w[0]=the|cat"``),
        ``"bias"``, ``"__BOS__"``, ``"__EOS__"``; attribute mode gives the
        attributes.  Not available in hashing mode.
        """
        self._check_fitted()
        if self.n_hash is not None:
            raise ValueError("feature names are not available in hashing mode (n_hash=%d): "
                             "no vocabulary is kept" % self.n_hash)
        compiled = self._compiled()
        if compiled is None:
            return np.array(self.attributes_, dtype=object)
        names = []
        items = compiled.items
        values = self.space_values_
        atom_space = compiled.atom_space
        atom_ptr = compiled.atom_ptr
        for key in self.feature_keys_.tolist():
            k = key[0]
            item = items[k]
            if not item.atoms:
                names.append(item.name)
                continue
            parts = []
            for j, a in enumerate(range(atom_ptr[k], atom_ptr[k + 1])):
                v = key[1 + j]
                parts.append(BOS_NAME if v == _BEFORE_START else
                             EOS_NAME if v == _AFTER_END else values[atom_space[a]][v])
            names.append(item.name + "=" + "|".join(parts))
        return np.array(names, dtype=object)

    feature_names_out = get_feature_names_out

    # -- template mode -----------------------------------------------------------
    def _template_transform(self, compiled, sentences, fitting, grow=False):
        lengths, local, type_index = _column_types(sentences, list(self.columns),
                                                   compiled.used_columns,
                                                   int(getattr(self, "n_jobs", 1)))
        n_tokens = int(lengths.sum())
        values = np.empty((len(compiled.spaces), n_tokens), dtype=np.int64)
        cache = getattr(self, "_type_cache", None) if not (fitting or grow) else None
        if fitting:
            self.space_values_ = []
            self._space_index = [] if self.n_hash is None else None
        else:
            self._space_index_ready()
        self._type_cache = None
        space_ids = []
        if cache is not None:
            # types seen in fit: their ids from the cache; the transforms run on new
            # ones only (one cache lookup per column, shared by its spaces)
            known_rows, new_types = {}, {}
            for c, (types, _) in local.items():
                known_index = cache[0][c]
                rows = np.fromiter(map(known_index.get, types, itertools.repeat(-1, len(types))),
                                   dtype=np.int64, count=len(types))
                new = np.flatnonzero(rows < 0)
                known_rows[c] = (rows, rows >= 0, new)
                new_types[c] = [types[i] for i in new.tolist()]
            new_derived = _derive_all(compiled.spaces, new_types)
        else:
            all_derived = _derive_all(compiled.spaces, {c: v[0] for c, v in local.items()})
        for s, (c, transforms) in enumerate(compiled.spaces):
            types, type_ids = local[c]
            if cache is not None:
                rows, seen, new = known_rows[c]
                known_ids = cache[1][s]
                ids = np.empty(len(types), dtype=np.int64)
                ids[seen] = known_ids[rows[seen]]
                if len(new):
                    derived = new_derived[s]
                    if self.n_hash is not None:
                        ids[new] = np.fromiter(map(_stable_hash, derived), dtype=np.int64,
                                               count=len(derived))
                    else:
                        get = self._space_index[s].get
                        ids[new] = np.fromiter(
                            map(get, derived, itertools.repeat(_UNKNOWN, len(derived))),
                            dtype=np.int64, count=len(derived))
                if len(new) and transforms[-1:] == ("iftrue",):
                    ids[new[np.array([v != "True" for v in derived], dtype=bool)]] = _ABSENT
                values[s] = ids[type_ids]
                continue
            derived = all_derived[s]
            if self.n_hash is not None:
                ids = np.fromiter(map(_stable_hash, derived), dtype=np.int64, count=len(derived))
            elif fitting and not transforms and c in type_index:
                # a bare column: its values are the column's types, whose value -> id
                # dict (first-occurrence order) the column pass built already
                self._space_index.append(type_index[c][0].copy())
                self.space_values_.append(list(types))
                ids = np.arange(len(types), dtype=np.int64)
            elif fitting:
                # the value -> id dicts are kept: transform after fit needs them
                space_values, ids = _type_ids(derived, self._space_index)
                self.space_values_.append(space_values)
            elif grow:
                ids = _grow_ids(derived, self._space_index[s], self.space_values_[s])
            else:
                get = self._space_index[s].get
                ids = np.fromiter(map(get, derived, itertools.repeat(_UNKNOWN, len(derived))),
                                  dtype=np.int64, count=len(derived))
            if transforms[-1:] == ("iftrue",):
                ids = ids.copy()
                ids[np.array([v != "True" for v in derived], dtype=bool)] = _ABSENT
            values[s] = ids[type_ids]
            space_ids.append(ids)
        if fitting:
            # the training types' ids per space, so transform skips their transforms
            self._type_cache = ({c: type_index[c][0] for c in type_index}, space_ids)
        elif cache is not None:
            self._type_cache = cache
        return self._extract(compiled, values, lengths, n_tokens, fitting, grow)

    def _space_index_ready(self):
        if self.n_hash is None and getattr(self, "_space_index", None) is None:
            self._space_index = [{v: i for i, v in enumerate(vals)}
                                 for vals in self.space_values_]

    def _extract(self, compiled, values, lengths, n_tokens, fitting, grow):
        from .._core import _features
        sentence_ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=sentence_ptr[1:])
        table = None
        if self.n_hash is None:
            if fitting:
                table = _features.KeyTable(compiled.width, len(compiled.kind), max(1024, n_tokens))
            else:
                table = self._get_table(compiled)
        hook = self.__dict__.pop("_before_extract", None)
        if hook is not None:
            hook()          # a caller's signal: the GIL-bound part of the pass is done
        indptr, indices, data = _features.extract_features(
            values=values, sentence_ptr=sentence_ptr, kind=compiled.kind,
            atom_ptr=compiled.atom_ptr, atom_space=compiled.atom_space,
            atom_offset=compiled.atom_offset, pad=self.boundary == "pad", table=table,
            insert=fitting or grow, n_hash=0 if self.n_hash is None else int(self.n_hash),
            n_jobs=int(getattr(self, "n_jobs", 1)))
        n_jobs = int(getattr(self, "n_jobs", 1))
        if grow:
            keys = table.keys_array()
            counts = _features.count_ids(indices, len(keys), n_jobs)
            counts[:len(self.feature_counts_)] += self.feature_counts_
            self.feature_keys_ = keys
            self.feature_counts_ = counts
            self.n_features_ = int(len(counts))
        if fitting:
            keys = table.keys_array()
            counts = _features.count_ids(indices, len(keys), n_jobs)
            if self.min_count > 1:
                keep = counts >= self.min_count
                new_id = np.full(len(counts), -1, dtype=np.int64)
                new_id[keep] = np.arange(int(keep.sum()))
                mapped = new_id[indices]
                kept = mapped >= 0
                cum = np.concatenate(([0], np.cumsum(kept)))
                indptr = cum[indptr].astype(np.int32)
                indices = mapped[kept].astype(np.int32)      # monotone map: rows stay sorted
                data = data[kept]
                keys, counts = keys[keep], counts[keep]
                table = None
            self.feature_keys_ = keys
            self.feature_counts_ = counts
            self.n_features_ = int(len(counts))
            self._table = table
        X = sp.csr_matrix((data, indices, indptr), shape=(n_tokens, self.n_features_))
        return X, lengths

    def _check_state(self):
        """The saved feature keys build the key table (template width, no
        duplicates): called by :func:`linclass.load`, so that a bad file is
        refused there and not at the first transform."""
        super()._check_state()
        keys = vars(self).get("feature_keys_")
        if isinstance(keys, np.ndarray) and keys.size:
            self._table = None
            self._get_table(self._compiled())
        self._check_width()

    def _check_width(self):
        """``n_features_`` is the number of ids ``transform`` can produce (the
        columns a model's weights have): ``n_hash``, the number of feature
        keys, or of attributes; a smaller one lets ids index past the weights."""
        n = vars(self).get("n_features_")
        if n is None:
            return
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError("n_features_ must be an integer >= 0, got %r" % (n,))
        if self.n_hash is not None:
            expected, what = int(self.n_hash), "n_hash"
        elif self._compiled() is not None:
            keys = vars(self).get("feature_keys_")
            expected = 0 if keys is None else int(np.shape(keys)[0])
            what = "the number of feature keys"
        else:
            expected, what = len(vars(self).get("attributes_", ())), "the number of attributes"
        if n != expected:
            raise ValueError("n_features_ = %d but %s is %d: the state is inconsistent"
                             % (n, what, expected))
        counts = vars(self).get("feature_counts_")
        if self.n_hash is None and counts is not None and np.shape(counts) != (n,):
            raise ValueError("feature_counts_ has shape %r, expected (%d,)"
                             % (np.shape(counts), n))

    def _get_table(self, compiled):
        if getattr(self, "_table", None) is None:
            from .._core import _features
            keys = np.ascontiguousarray(self.feature_keys_, dtype=np.int64)
            if keys.ndim != 2 or keys.shape[1] != compiled.width:
                raise ValueError("feature_keys_ has shape %r, expected (n, %d): the state "
                                 "does not match the template" % (keys.shape, compiled.width))
            table = _features.KeyTable(compiled.width, len(compiled.kind), max(16, len(keys)))
            table.add_keys(keys)
            self._table = table
        return self._table

    # -- attribute mode (python-crfsuite input) ------------------------------------
    def _attribute_rows(self, sentences):
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        names, weights, row_nnz = [], [], []
        for i, sentence in enumerate(sentences):
            for j, token in enumerate(sentence):
                attrs = _token_attributes(token, "sentence %d, token %d" % (i, j))
                n = 0
                for name, w in attrs.items():
                    if w != 0.0:
                        names.append(name)
                        weights.append(w)
                        n += 1
                row_nnz.append(n)
        indptr = np.zeros(len(row_nnz) + 1, dtype=np.int64)
        np.cumsum(row_nnz, out=indptr[1:])
        return lengths, names, np.array(weights, dtype=np.float64), indptr

    def _attributes_fit(self, sentences):
        lengths, names, weights, indptr = self._attribute_rows(sentences)
        if self.n_hash is not None:
            self.n_features_ = int(self.n_hash)
            return self._attribute_matrix(names, weights, indptr, lengths, None)
        attributes, ids = _type_ids(names)
        counts = np.bincount(ids, minlength=len(attributes)).astype(np.int64)
        if self.min_count > 1:
            keep = counts >= self.min_count
            new_id = np.full(len(counts), -1, dtype=np.int64)
            new_id[keep] = np.arange(int(keep.sum()))
            ids = new_id[ids]
            attributes = [a for a, k in zip(attributes, keep) if k]
            counts = counts[keep]
        self.attributes_ = attributes
        self.feature_counts_ = counts
        self.n_features_ = len(attributes)
        self._attribute_index = None
        return self._attribute_matrix(names, weights, indptr, lengths, ids)

    def _attributes_grow(self, sentences):
        lengths, names, weights, indptr = self._attribute_rows(sentences)
        if getattr(self, "_attribute_index", None) is None:
            self._attribute_index = {a: i for i, a in enumerate(self.attributes_)}
        ids = _grow_ids(names, self._attribute_index, self.attributes_)
        counts = np.bincount(ids, minlength=len(self.attributes_)).astype(np.int64)
        counts[:len(self.feature_counts_)] += self.feature_counts_
        self.feature_counts_ = counts
        self.n_features_ = len(self.attributes_)
        return self._attribute_matrix(names, weights, indptr, lengths, ids)

    def _attributes_transform(self, sentences):
        lengths, names, weights, indptr = self._attribute_rows(sentences)
        if self.n_hash is not None:
            return self._attribute_matrix(names, weights, indptr, lengths, None)
        if getattr(self, "_attribute_index", None) is None:
            self._attribute_index = {a: i for i, a in enumerate(self.attributes_)}
        get = self._attribute_index.get
        ids = np.fromiter(map(get, names, itertools.repeat(-1, len(names))),
                          dtype=np.int64, count=len(names))
        return self._attribute_matrix(names, weights, indptr, lengths, ids)

    def _attribute_matrix(self, names, weights, indptr, lengths, ids):
        n_tokens = int(lengths.sum())
        if ids is None:                                   # hashing mode
            types, type_ids = _type_ids(names)
            hashes = np.array([_stable_hash(t) for t in types], dtype=np.int64).view(np.uint64)
            ids = (hashes % np.uint64(self.n_hash)).astype(np.int64)[type_ids]
        kept = ids >= 0
        cum = np.concatenate(([0], np.cumsum(kept)))
        X = sp.csr_matrix((weights[kept], ids[kept].astype(np.int32),
                           cum[indptr].astype(np.int32)), shape=(n_tokens, self.n_features_))
        X.sum_duplicates()                    # sorts indices; sums hash collisions
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
        return X, lengths

    # -- persistence ---------------------------------------------------------------
    _STATE = ("n_features_", "feature_keys_", "feature_counts_", "space_values_", "attributes_")

    def _get_state(self):
        return {k: getattr(self, k) for k in self._STATE if hasattr(self, k)}

    def _set_state(self, state):
        for k in self._STATE:
            self.__dict__.pop(k, None)
        for k, v in state.items():
            if k not in self._STATE:
                raise ValueError("unknown FeatureTemplate state entry %r" % k)
            setattr(self, k, v)
        if "space_values_" in state:
            self.space_values_ = [list(v) for v in state["space_values_"]]
        if "attributes_" in state:
            self.attributes_ = list(state["attributes_"])
        self._compiled_cache = None
        self._table = None
        self._space_index = None
        self._attribute_index = None
        self._type_cache = None

    def __getstate__(self):
        state = super().__getstate__()
        for k in ("_table", "_compiled_cache", "_space_index", "_attribute_index",
                  "_type_cache"):
            state.pop(k, None)                   # caches, rebuilt on demand
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("n_jobs", 1)         # files written before n_jobs
        self._compiled_cache = None
        self._table = None
        self._space_index = None
        self._attribute_index = None
        self._type_cache = None
