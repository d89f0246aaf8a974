"""Reading and writing CoNLL column files and CoNLL-U.

Two layouts are supported:

``"conll"``
    One token per line, columns separated by whitespace (or ``sep``), a blank
    line between sentences: CoNLL-2000 chunking (``word POS chunk``),
    CoNLL-2002 NER (``word POS tag``), CoNLL-2003 and the like.  A line whose
    first field is ``-DOCSTART-`` marks a document boundary: it is not a token
    (see *Documents* below).  ``#`` has no special meaning (``#`` is a word in
    the WSJ text).

``"conllu"``
    `CoNLL-U <https://universaldependencies.org/format.html>`_: exactly 10
    tab-separated fields ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS
    MISC``; ``#`` comment lines before a sentence; integer word ids
    ``1, 2, ...`` in order; multi-word token lines (``3-4``) and empty nodes
    (``8.1``).

Sentences
    :class:`Sentence` is a ``list`` of rows, each row a tuple of strings (one
    per column).  For CoNLL-U only the *syntactic words* (integer ids) are
    rows, so ``len(sentence)`` is the number of words and ``column("upos")``
    gives one tag per word.  Multi-word token lines and empty nodes are kept in
    :attr:`Sentence.extra_rows` as ``(position, row)`` pairs, ``position``
    being the number of words that precede the line in the file, so that
    :func:`write_conll` puts them back where they were.

Metadata
    CoNLL-U comment lines are kept verbatim in :attr:`Sentence.comments`
    (without the leading ``#``-line newline) and parsed into
    :attr:`Sentence.metadata`: ``# key = value`` gives ``metadata[key] =
    value``; a comment without `` = `` (``# newpar``) gives
    ``metadata[text] = None``.

Documents
    :attr:`Sentence.doc_index` numbers documents from 0.  A new document
    starts at a ``-DOCSTART-`` line (CoNLL) or a ``# newdoc`` comment
    (CoNLL-U).  The ``-DOCSTART-`` row itself is stored in
    ``metadata["docstart"]`` of the sentence that follows it (and
    ``metadata["docstart_own_block"] = True`` when a blank line followed it),
    so that writing reproduces it.  A ``-DOCSTART-`` at the very end of a file
    with no sentence after it is dropped.

All errors in the input raise :class:`~linclass.exceptions.DataFormatError`
with the file name and line number.

References
----------
Tjong Kim Sang, E. F. and Buchholz, S. (2000). Introduction to the CoNLL-2000
shared task: chunking. CoNLL.
Nivre, J. et al. (2020). Universal Dependencies v2: an evergrowing
multilingual treebank collection. LREC.  (The CoNLL-U format.)
"""
from ..exceptions import DataFormatError
from ._io import gc_paused, open_text, read_text, source_name

__all__ = ["Sentence", "read_conll", "write_conll", "CONLLU_COLUMNS"]

#: The column names of CoNLL-U, in order.
CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head",
                  "deprel", "deps", "misc")

_DOCSTART = "-DOCSTART-"


class Sentence(list):
    """A sentence of a column file: a list of rows, each a tuple of strings.

    Parameters
    ----------
    rows : iterable of sequences of str
        The token rows.
    columns : sequence of str, optional
        Column names; enables ``column("name")``.
    metadata : dict, optional
        Parsed comments / document marks (see the module docstring).
    comments : list of str, optional
        Comment lines exactly as in the file (each starting with ``#``).
    extra_rows : list of (int, tuple), optional
        CoNLL-U multi-word token lines and empty nodes with their position
        (number of words preceding them).
    doc_index : int
        Index of the document the sentence belongs to.

    Attributes
    ----------
    columns, metadata, comments, extra_rows, doc_index
        As above.
    """

    __slots__ = ("columns", "metadata", "comments", "extra_rows", "doc_index")

    def __init__(self, rows=(), *, columns=None, metadata=None, comments=None,
                 extra_rows=None, doc_index=0):
        super().__init__(rows)
        self.columns = tuple(columns) if columns is not None else None
        self.metadata = {} if metadata is None else metadata
        self.comments = [] if comments is None else comments
        self.extra_rows = [] if extra_rows is None else extra_rows
        self.doc_index = doc_index

    def column(self, key):
        """The values of one column, one per row.

        Parameters
        ----------
        key : int or str
            A column index or a name from :attr:`columns` (for CoNLL-U
            ``"id", "form", "lemma", "upos", "xpos", "feats", "head",
            "deprel", "deps", "misc"``).

        Returns
        -------
        list of str
        """
        if isinstance(key, str):
            if self.columns is None or key not in self.columns:
                raise KeyError("no column named %r (columns: %s); pass columns=... to "
                               "read_conll to name them" % (key, self.columns))
            key = self.columns.index(key)
        return [row[key] for row in self]

    @property
    def n_columns(self):
        """Number of columns (0 for an empty sentence without names)."""
        if self:
            return len(self[0])
        return len(self.columns) if self.columns is not None else 0

    def copy(self):
        """A shallow copy with copied metadata containers."""
        return Sentence(self, columns=self.columns, metadata=dict(self.metadata),
                        comments=list(self.comments), extra_rows=list(self.extra_rows),
                        doc_index=self.doc_index)

    def __repr__(self):
        words = " ".join(row[1] if self.columns == CONLLU_COLUMNS else row[0]
                         for row in self[:8])
        more = " ..." if len(self) > 8 else ""
        return "Sentence(%d rows: %s%s)" % (len(self), words, more)

    def __reduce__(self):
        return (_rebuild_sentence, (list(self), self.columns, self.metadata, self.comments,
                                    self.extra_rows, self.doc_index))


def _rebuild_sentence(rows, columns, metadata, comments, extra_rows, doc_index):
    return Sentence(rows, columns=columns, metadata=metadata, comments=comments,
                    extra_rows=extra_rows, doc_index=doc_index)


def _parse_comment(line, metadata):
    body = line[1:].strip()
    key, eq, value = body.partition(" = ")
    if eq:
        metadata[key.strip()] = value
    elif body.endswith(" ="):  # "# text =" with an empty value
        metadata[body[:-2].strip()] = ""
    else:
        metadata[body] = None


def _detect_format(lines, name):
    if name.lower().endswith((".conllu", ".conllu.gz", ".conllu.bz2")):
        return "conllu"
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        return "conllu" if line.count("\t") == 9 else "conll"
    return "conll"


def read_conll(f, *, columns=None, format="auto", sep=None, encoding="utf-8"):
    """Read a CoNLL column file or a CoNLL-U file.

    Parameters
    ----------
    f : str, os.PathLike or file object
        ``.gz`` / ``.bz2`` paths are decompressed transparently.
    columns : sequence of str, optional
        Names of the columns (their number must match the file).  CoNLL-U
        defaults to :data:`CONLLU_COLUMNS`; CoNLL defaults to no names
        (use integer indices with :meth:`Sentence.column`).
    format : {"auto", "conll", "conllu"}
        ``"auto"`` picks CoNLL-U for ``*.conllu[.gz]`` files, or when the first
        line that is neither blank nor a ``#`` line has exactly 10
        tab-separated fields; else CoNLL.
    sep : str, optional
        Column separator.  Default: any run of whitespace for CoNLL, a tab
        for CoNLL-U (whose FORM/LEMMA fields may contain spaces).
    encoding : str
        Text encoding (default UTF-8).

    Returns
    -------
    list of Sentence

    Raises
    ------
    DataFormatError
        A row with a different number of columns than the first row of the
        file; for CoNLL-U: not 10 fields, word ids not ``1, 2, ...`` in order,
        malformed multi-word or empty-node ids, a comment inside a sentence.
    """
    if format not in ("auto", "conll", "conllu"):
        raise ValueError("format must be 'auto', 'conll' or 'conllu', got %r" % (format,))
    text, name = read_text(f, encoding=encoding)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if format == "auto":
        format = _detect_format(lines, name)
    if format == "conllu":
        if columns is None:
            columns = CONLLU_COLUMNS
        if len(columns) != 10:
            raise ValueError("CoNLL-U has 10 columns; columns= gives %d names" % len(columns))
        with gc_paused():
            return _read_conllu(lines, name, tuple(columns), "\t" if sep is None else sep)
    with gc_paused():
        return _read_conll(lines, name, None if columns is None else tuple(columns), sep)


def _read_conll(lines, name, columns, sep):
    sentences = []
    rows = []
    n_columns = len(columns) if columns is not None else -1
    columns_line = 0
    doc_index = 0
    seen_docstart = False
    pending_docstart = False   # a -DOCSTART- row waits for its first token
    metadata = {}
    split_on_whitespace = sep is None
    for lineno, line in enumerate(lines, 1):
        if split_on_whitespace:
            row = line.split()
        elif line and not line.isspace():
            row = line.split(sep)
        else:
            row = None
        if not row:
            if rows:
                sentences.append(Sentence(rows, columns=columns, metadata=metadata,
                                          doc_index=doc_index))
                rows = []
                metadata = {}
            elif pending_docstart:
                metadata["docstart_own_block"] = True
            pending_docstart = False
            continue
        if len(row) != n_columns:
            if n_columns < 0:
                n_columns = len(row)
                columns_line = lineno
            elif columns_line:
                raise DataFormatError("expected %d columns (as on line %d), found %d: %r"
                                      % (n_columns, columns_line, len(row), line),
                                      name, lineno)
            else:
                raise DataFormatError("expected %d columns (columns=%r), found %d: %r"
                                      % (n_columns, columns, len(row), line), name, lineno)
        if row[0] == _DOCSTART:
            if rows:
                raise DataFormatError("-DOCSTART- inside a sentence (a document boundary "
                                      "must start a sentence block)", name, lineno)
            if sentences or seen_docstart:
                doc_index += 1
            seen_docstart = True
            metadata = {"docstart": tuple(row)}
            pending_docstart = True
            continue
        pending_docstart = False
        rows.append(tuple(row))
    if rows:
        sentences.append(Sentence(rows, columns=columns, metadata=metadata, doc_index=doc_index))
    return sentences


def _conllu_error(reason, name, lineno):
    return DataFormatError(reason, name, lineno)


_ID_STRINGS = [str(i) for i in range(1024)]


def _id_string(i):
    return _ID_STRINGS[i] if i < 1024 else str(i)


def _read_conllu(lines, name, columns, sep):
    sentences = []
    rows = []
    comments = []
    metadata = {}
    extra = []
    doc_index = -1
    expected_id = 1          # next integer word id
    next_id = "1"            # the same as a string (fast path compares strings)
    mwt_end = 0              # last id covered by a multi-word token
    last_empty = (0, 0)      # (major, minor) of the last empty node
    in_sentence = False
    append = rows.append
    for lineno, line in enumerate(lines, 1):
        row = line.split(sep)
        if len(row) == 10 and row[0] == next_id:      # the common case: a word line
            append(tuple(row))
            expected_id += 1
            next_id = _id_string(expected_id)
            in_sentence = True
            continue
        if not line or line.isspace():
            if in_sentence:
                if not rows:
                    raise _conllu_error("sentence without any word (integer id) lines",
                                        name, lineno - 1)
                if mwt_end >= expected_id:
                    raise _conllu_error("multi-word token range ends at %d but the sentence "
                                        "has only %d words" % (mwt_end, expected_id - 1),
                                        name, lineno - 1)
                sentences.append(Sentence(rows, columns=columns, metadata=metadata,
                                          comments=comments, extra_rows=extra,
                                          doc_index=max(doc_index, 0)))
                rows, comments, metadata, extra = [], [], {}, []
                append = rows.append
                expected_id, next_id, mwt_end, last_empty = 1, "1", 0, (0, 0)
                in_sentence = False
            elif comments:
                raise _conllu_error("comment lines not followed by a sentence", name, lineno)
            continue
        if line[0] == "#":
            if in_sentence:
                raise _conllu_error("comment line inside a sentence (comments must come "
                                    "before the first word line)", name, lineno)
            comments.append(line)
            _parse_comment(line, metadata)
            if line.startswith("# newdoc"):
                doc_index += 1
            continue
        if len(row) != 10:
            raise _conllu_error("CoNLL-U needs exactly 10 %s-separated fields, found %d: %r"
                                % ("tab" if sep == "\t" else repr(sep), len(row), line),
                                name, lineno)
        in_sentence = True
        token_id = row[0]
        if not token_id.isascii():
            raise _conllu_error("malformed word id %r (ids are ASCII digits)" % token_id,
                                name, lineno)
        if token_id.isdigit():
            raise _conllu_error("word id %s out of order (expected %d)"
                                % (token_id, expected_id), name, lineno)
        first, dash, last = token_id.partition("-")
        if dash:
            if not (first.isdigit() and last.isdigit()):
                raise _conllu_error("malformed multi-word token id %r" % token_id, name, lineno)
            if int(first) != expected_id or int(last) <= int(first) or mwt_end >= expected_id:
                raise _conllu_error("multi-word token %s must start at the next word id %d, "
                                    "span at least two words and not overlap another range"
                                    % (token_id, expected_id), name, lineno)
            mwt_end = int(last)
            extra.append((len(rows), tuple(row)))
            continue
        major, dot, minor = token_id.partition(".")
        if dot and major.isdigit() and minor.isdigit():
            major, minor = int(major), int(minor)
            want_minor = last_empty[1] + 1 if last_empty[0] == expected_id - 1 else 1
            if major != expected_id - 1 or minor != want_minor:
                raise _conllu_error("empty node %s out of order (expected %d.%d)"
                                    % (token_id, expected_id - 1, want_minor), name, lineno)
            last_empty = (major, minor)
            extra.append((len(rows), tuple(row)))
            continue
        raise _conllu_error("malformed word id %r (expected an integer, a range like 3-4 "
                            "or an empty node like 8.1)" % token_id, name, lineno)
    if in_sentence:
        if mwt_end >= expected_id:
            raise _conllu_error("multi-word token range ends at %d but the sentence "
                                "has only %d words" % (mwt_end, expected_id - 1),
                                name, len(lines))
        if not rows:
            raise _conllu_error("sentence without any word (integer id) lines", name,
                                len(lines))
        sentences.append(Sentence(rows, columns=columns, metadata=metadata, comments=comments,
                                  extra_rows=extra, doc_index=max(doc_index, 0)))
    elif comments:
        raise _conllu_error("comment lines not followed by a sentence", name, len(lines))
    return sentences


def _is_conllu(sentences):
    for sentence in sentences:
        if getattr(sentence, "columns", None) == CONLLU_COLUMNS:
            return True
        if getattr(sentence, "comments", None) or getattr(sentence, "extra_rows", None):
            return True
        if len(sentence):
            return False
    return False


def _conll_field_check(sep):
    """Problem with a CoNLL row that ``read_conll`` (which splits on any run of
    whitespace) would not read back, or None."""
    def check(row):
        for field in row:
            if not field or field.split() != [field]:
                return "field %r is empty or contains whitespace" % (field,)
            if sep not in (" ", "\t") and sep in field:
                return "field %r contains the separator %r" % (field, sep)
        if row and row[0] == _DOCSTART:
            return "a row starting with %s reads back as a document boundary" % _DOCSTART
        return None
    return check


def _conllu_field_check(sep):
    """Problem with a CoNLL-U row (fields split on ``sep``, lines on newlines)."""
    def check(row):
        for field in row:
            if sep in field or "\n" in field or "\r" in field:
                return "field %r contains the separator or a line break" % (field,)
        return None
    return check


def write_conll(sentences, f, *, format="auto", sep=None, encoding="utf-8"):
    """Write sentences as a CoNLL column file or CoNLL-U.

    Each sentence is written as its comment lines (CoNLL-U), its
    ``-DOCSTART-`` row if it has one in ``metadata["docstart"]`` (CoNLL), its
    rows (with CoNLL-U multi-word tokens and empty nodes put back at their
    positions), then a blank line.  Reading a file and writing the result
    reproduces the file byte for byte when it uses ``\\n`` line ends, a single
    separator between fields (a space for CoNLL, a tab for CoNLL-U) and one
    blank line after each sentence.

    Parameters
    ----------
    sentences : iterable of Sentence or of sequences of rows
        Plain lists of rows (tuples of strings) are accepted too.
    f : str, os.PathLike or file object
        ``.gz`` / ``.bz2`` paths are compressed.  A path is replaced
        atomically: the file is written beside it and renamed over it only
        when complete (a failure leaves it as it was).
    format : {"auto", "conll", "conllu"}
        Only chooses the default separator; ``"auto"`` means CoNLL-U if the
        sentences come from a CoNLL-U file (10 named CoNLL-U columns, comments
        or multi-word lines).
    sep : str, optional
        Field separator; default a tab for CoNLL-U and a space for CoNLL.
    encoding : str

    Raises
    ------
    DataFormatError
        A row that :func:`read_conll` could not read back as written: in
        CoNLL, a field that is empty or contains whitespace (the reader
        splits on runs of whitespace, so ``"New York"`` would become two
        columns) or a row whose first field is ``-DOCSTART-``; in CoNLL-U, a
        field holding the separator or a line break.  Nothing is escaped:
        replace such characters (e.g. ``"New_York"``) before writing.
    """
    if format not in ("auto", "conll", "conllu"):
        raise ValueError("format must be 'auto', 'conll' or 'conllu', got %r" % (format,))
    sentences = list(sentences)
    if format == "auto":
        format = "conllu" if _is_conllu(sentences) else "conll"
    if sep is None:
        sep = "\t" if format == "conllu" else " "
    name = source_name(f)
    check_field = _conllu_field_check(sep) if format == "conllu" else _conll_field_check(sep)
    out = []
    for index, sentence in enumerate(sentences):
        comments = getattr(sentence, "comments", None) or ()
        for comment in comments:
            out.append(comment if comment.startswith("#") else "# " + comment)
        metadata = getattr(sentence, "metadata", None) or {}
        docstart = metadata.get("docstart")
        if docstart is not None:
            out.append(sep.join(docstart))
            if metadata.get("docstart_own_block"):
                out.append("")
        extra = getattr(sentence, "extra_rows", None) or ()
        k = 0
        n_extra = len(extra)
        for position, row in enumerate(sentence):
            while k < n_extra and extra[k][0] <= position:
                out.append(sep.join(extra[k][1]))
                k += 1
            try:
                out.append(sep.join(row))
            except TypeError:
                raise DataFormatError("sentence %d, row %d: fields must be strings, got %r"
                                      % (index, position, row), name) from None
            problem = check_field(row)
            if problem:
                raise DataFormatError("sentence %d, row %d: %s; read_conll could not read "
                                      "it back: %r" % (index, position, problem, row), name)
        while k < n_extra:
            out.append(sep.join(extra[k][1]))
            k += 1
        out.append("")
    text = "\n".join(out) + "\n" if out else ""
    with open_text(f, "w", encoding=encoding) as stream:
        stream.write(text)
