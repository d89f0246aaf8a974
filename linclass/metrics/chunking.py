"""Chunk precision/recall/F1 exactly as the CoNLL ``conlleval`` script, and
token and sentence accuracy of label sequences (Tjong Kim Sang and Buchholz 2000)."""
from collections import Counter

import numpy as np

from ..exceptions import DataFormatError
from ._checks import _check_average

__all__ = ['CHUNK_SCHEMES', 'ConllevalCounts', 'chunk_f1', 'chunk_precision_recall_f1', 'conlleval_counts', 'conlleval_report', 'conlleval_report_from_lines', 'read_conlleval_lines', 'sentence_accuracy', 'token_accuracy',
           'flat_accuracy_score', 'flat_precision_score', 'flat_recall_score', 'flat_f1_score',
           'flat_fbeta_score', 'flat_classification_report', 'sequence_accuracy_score']


#: Tagging schemes accepted by the chunk metrics.
CHUNK_SCHEMES = (None, "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")

_SCHEME_PREFIXES = {
    "IOB1": {"I", "O", "B"}, "IOB2": {"I", "O", "B"},
    "IOE1": {"I", "O", "E"}, "IOE2": {"I", "O", "E"},
    "IOBES": {"I", "O", "B", "E", "S"}, "BILOU": {"B", "I", "L", "O", "U"},
}
# single-token and chunk-final tags of IOBES/BILOU rewritten to IOB2, which
# keeps the chunks of every valid sequence and lets conlleval's rules apply
_TO_IOB2 = {"IOBES": {"S": "B", "E": "I"}, "BILOU": {"U": "B", "L": "I"}}

_END_PAIRS = frozenset([("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
                        ("E", "E"), ("E", "I"), ("E", "O")])
_START_PAIRS = frozenset([("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
                          ("E", "E"), ("E", "I"), ("O", "E")])


def _split_tag(tag):
    """conlleval's split of a tag into chunk prefix and type: text before
    the first hyphen and text after it (no hyphen: the whole tag, type "").
    A type "0" becomes "" (Perl treats the string "0" as false)."""
    prefix, hyphen, chunk_type = tag.partition("-")
    if not hyphen or chunk_type == "0":
        return prefix, ""
    return prefix, chunk_type


def _chunk_ends(prev_tag, tag, prev_type, chunk_type):
    """True when a chunk ended between the previous and the current token
    (conlleval's ``endOfChunk``, rules of [TjongKimSang1999]_)."""
    return ((prev_tag, tag) in _END_PAIRS
            or (prev_tag != "O" and prev_tag != "." and prev_type != chunk_type)
            or prev_tag == "[" or prev_tag == "]")   # bracket chunks have length 1


def _chunk_starts(prev_tag, tag, prev_type, chunk_type):
    """True when a chunk started at the current token (conlleval's
    ``startOfChunk``).  ``O I-X`` starts a chunk; so does any type change."""
    return ((prev_tag, tag) in _START_PAIRS
            or (tag != "O" and tag != "." and prev_type != chunk_type)
            or tag == "[" or tag == "]")


class ConllevalCounts:
    """Counts gathered by :func:`conlleval_counts`, as the ``conlleval`` script.

    Attributes
    ----------
    n_tokens : int
        Tokens processed (sentence boundaries excluded).
    n_correct_tags : int
        Tokens whose gold and guessed prefix and type agree.
    n_true_chunks, n_pred_chunks, n_correct_chunks : int
        Phrases in the gold data, phrases found, phrases found exactly.
    true_chunks, pred_chunks, correct_chunks : dict
        The same per chunk type.
    """

    def __init__(self):
        self.n_tokens = 0
        self.n_correct_tags = 0
        self.n_true_chunks = 0
        self.n_pred_chunks = 0
        self.n_correct_chunks = 0
        self.true_chunks = Counter()
        self.pred_chunks = Counter()
        self.correct_chunks = Counter()

    def types(self):
        """Chunk types in conlleval's order: sorted (by UTF-8 bytes); the empty
        type appears twice when both gold and guessed chunks have it, a quirk of
        the script that :func:`conlleval_report` keeps."""
        keys = list(self.true_chunks) + list(self.pred_chunks)
        keys.sort(key=lambda t: t.encode("utf-8"))
        ordered, last = [], None
        for key in keys:
            if not last or last != key:      # Perl: not($lastType) or $lastType ne $i
                ordered.append(key)
            last = key
        return ordered

    def precision_recall_f1(self, chunk_type=None):
        """Precision, recall and F1 in percent (conlleval's formulas; 0 when
        undefined).  ``chunk_type=None``: overall."""
        if chunk_type is None:
            correct, found, gold = (self.n_correct_chunks, self.n_pred_chunks,
                                    self.n_true_chunks)
        else:
            correct, found, gold = (self.correct_chunks[chunk_type],
                                    self.pred_chunks[chunk_type],
                                    self.true_chunks[chunk_type])
        precision = 100 * correct / found if found > 0 else 0.0
        recall = 100 * correct / gold if gold > 0 else 0.0
        fb1 = 2 * precision * recall / (precision + recall) \
            if precision + recall > 0 else 0.0
        return precision, recall, fb1


class _ConllevalState:
    """conlleval's main loop, fed one (gold, guessed) tag pair at a time."""

    def __init__(self):
        self.counts = ConllevalCounts()
        self.in_correct = False
        self.last_true, self.last_true_type = "O", ""
        self.last_pred, self.last_pred_type = "O", ""

    def feed(self, true_tag, pred_tag, boundary=False):
        counts = self.counts
        correct, correct_type = _split_tag(true_tag)
        guessed, guessed_type = _split_tag(pred_tag)
        if boundary:              # sentence breaks are always outside chunks
            guessed = "O"
        true_end = _chunk_ends(self.last_true, correct, self.last_true_type, correct_type)
        pred_end = _chunk_ends(self.last_pred, guessed, self.last_pred_type, guessed_type)
        true_start = _chunk_starts(self.last_true, correct, self.last_true_type,
                                   correct_type)
        pred_start = _chunk_starts(self.last_pred, guessed, self.last_pred_type,
                                   guessed_type)
        if self.in_correct:
            if true_end and pred_end and self.last_pred_type == self.last_true_type:
                self.in_correct = False
                counts.n_correct_chunks += 1
                counts.correct_chunks[self.last_true_type] += 1
            elif true_end != pred_end or guessed_type != correct_type:
                self.in_correct = False
        if true_start and pred_start and guessed_type == correct_type:
            self.in_correct = True
        if true_start:
            counts.n_true_chunks += 1
            counts.true_chunks[correct_type] += 1
        if pred_start:
            counts.n_pred_chunks += 1
            counts.pred_chunks[guessed_type] += 1
        if not boundary:
            if correct == guessed and guessed_type == correct_type:
                counts.n_correct_tags += 1
            counts.n_tokens += 1
        self.last_true, self.last_true_type = correct, correct_type
        self.last_pred, self.last_pred_type = guessed, guessed_type

    def finish(self):
        if self.in_correct:
            self.counts.n_correct_chunks += 1
            self.counts.correct_chunks[self.last_true_type] += 1
            self.in_correct = False
        return self.counts


def _check_sentences(y_true_sents, y_pred_sents, scheme):
    if scheme not in CHUNK_SCHEMES:
        raise ValueError("scheme must be one of %r, got %r" % (CHUNK_SCHEMES, scheme))
    if isinstance(y_true_sents, str) or isinstance(y_pred_sents, str):
        raise ValueError("y_true_sents and y_pred_sents must be lists of tag sequences")
    y_true_sents, y_pred_sents = list(y_true_sents), list(y_pred_sents)
    if len(y_true_sents) != len(y_pred_sents):
        raise ValueError("y_true_sents has %d sentences but y_pred_sents has %d"
                         % (len(y_true_sents), len(y_pred_sents)))
    if not y_true_sents:
        raise ValueError("no sentences given; at least one is required")
    allowed = _SCHEME_PREFIXES.get(scheme)
    rewrite = _TO_IOB2.get(scheme)
    pairs = []
    for i, (true_tags, pred_tags) in enumerate(zip(y_true_sents, y_pred_sents)):
        if isinstance(true_tags, str) or isinstance(pred_tags, str):
            raise ValueError("sentence %d is a string; each sentence must be a "
                             "sequence of tags" % i)
        true_tags, pred_tags = list(true_tags), list(pred_tags)
        if len(true_tags) != len(pred_tags):
            raise ValueError("sentence %d has %d gold tags but %d predicted tags"
                             % (i, len(true_tags), len(pred_tags)))
        for tags, name in ((true_tags, "y_true_sents"), (pred_tags, "y_pred_sents")):
            for j, tag in enumerate(tags):
                if not isinstance(tag, str) or not tag:
                    raise ValueError("%s[%d][%d] = %r is not a non-empty tag string"
                                     % (name, i, j, tag))
                if allowed is not None and _split_tag(tag)[0] not in allowed:
                    raise ValueError("%s[%d][%d] = %r is not a %s tag (prefixes %s)"
                                     % (name, i, j, tag, scheme, sorted(allowed)))
        if rewrite is not None:
            true_tags = [_rewrite_tag(t, rewrite) for t in true_tags]
            pred_tags = [_rewrite_tag(t, rewrite) for t in pred_tags]
        pairs.append((true_tags, pred_tags))
    return pairs


def _rewrite_tag(tag, mapping):
    prefix, hyphen, rest = tag.partition("-")
    return mapping.get(prefix, prefix) + hyphen + rest


def conlleval_counts(y_true_sents, y_pred_sents, *, scheme=None):
    """Token, phrase and correct-phrase counts exactly as ``conlleval`` counts them.

    The input is read as a conlleval file with one blank line after every
    sentence (the usual CoNLL layout).  A chunk is recognised with the
    script's ``startOfChunk``/``endOfChunk`` rules [Conll2000]_, which cover
    IOB1, IOB2, IOE1 and IOE2 at once as well as the single-token bracket
    tags ``[`` and ``]``, and are lenient with invalid sequences: ``O I-NP``
    starts a chunk, and a type change (``B-NP I-VP``) ends one chunk and
    starts another.  A found chunk is correct when it starts and ends at the
    same tokens as a gold chunk of the same type.

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
        Gold and predicted tags (``B-NP``, ``I-PER``, ``O`` ...), sentence
        by sentence.
    scheme : {None, 'IOB1', 'IOB2', 'IOE1', 'IOE2', 'IOBES', 'BILOU'}
        None: any tags, conlleval's rules as they are.  IOB1/IOB2/IOE1/IOE2:
        the same rules (made for these schemes), and a tag with a prefix
        outside the scheme raises ``ValueError``.  IOBES/BILOU (which
        conlleval does not know: it misses the boundary in ``E-X B-X`` and
        ``S-X S-X``): tags are first rewritten ``S``/``U`` -> ``B``,
        ``E``/``L`` -> ``I``, which keeps every chunk of a valid sequence.

    Returns
    -------
    ConllevalCounts
    """
    state = _ConllevalState()
    for true_tags, pred_tags in _check_sentences(y_true_sents, y_pred_sents, scheme):
        for true_tag, pred_tag in zip(true_tags, pred_tags):
            state.feed(true_tag, pred_tag)
        state.feed("O", "O", boundary=True)
    return state.finish()


def chunk_precision_recall_f1(y_true_sents, y_pred_sents, *, scheme=None,
                              average="micro"):
    """Chunk (phrase) precision, recall and F1 as ``conlleval`` computes them.

    See :func:`conlleval_counts` for how chunks are found.  Values are
    fractions in [0, 1] (conlleval prints percentages); an undefined value
    is 0, as in the script.

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
    scheme : {None, 'IOB1', 'IOB2', 'IOE1', 'IOE2', 'IOBES', 'BILOU'}
    average : {'micro', 'macro', None}, default='micro'
        'micro': conlleval's overall line.  'macro': unweighted mean of the
        per-type values.  None: a dict ``type -> (precision, recall, f1,
        n_true_chunks)``.  Tags without a type (``B``, ``I``) form the
        chunk type ``""``, which conlleval also reports.

    Returns
    -------
    (precision, recall, f1) or dict
    """
    _check_average(average, ("micro", "macro", None))
    counts = conlleval_counts(y_true_sents, y_pred_sents, scheme=scheme)
    types = sorted(set(counts.types()))
    if average == "micro":
        return tuple(v / 100 for v in counts.precision_recall_f1())
    per_type = {t: tuple(v / 100 for v in counts.precision_recall_f1(t))
                + (counts.true_chunks[t],) for t in types}
    if average is None:
        return per_type
    if not per_type:
        return 0.0, 0.0, 0.0
    values = np.array([v[:3] for v in per_type.values()])
    return tuple(float(v) for v in values.mean(axis=0))


def chunk_f1(y_true_sents, y_pred_sents, *, scheme=None):
    """Overall chunk F1 (conlleval's ``FB1`` / 100); see
    :func:`chunk_precision_recall_f1`."""
    return chunk_precision_recall_f1(y_true_sents, y_pred_sents, scheme=scheme)[2]


def _pad_bytes(text, width):
    # Perl's printf pads byte strings: pad by the UTF-8 length, as the script does
    return " " * max(0, width - len(text.encode("utf-8"))) + text


def conlleval_report(y_true_sents, y_pred_sents, *, scheme=None):
    """The text that ``conlleval`` (2004-01-26, default options) prints.

    ::

        processed N tokens with M phrases; found: K phrases; correct: C.
        accuracy:  xx.xx%; precision:  xx.xx%; recall:  xx.xx%; FB1:  xx.xx
                     TYPE: precision:  xx.xx%; recall:  xx.xx%; FB1:  xx.xx  K_type

    Parameters
    ----------
    y_true_sents, y_pred_sents : list of list of str
    scheme : see :func:`conlleval_counts`

    Returns
    -------
    str
        Byte-for-byte the script's output on a file holding these sentences,
        each followed by a blank line (print it with ``print(report, end="")``).
    """
    counts = conlleval_counts(y_true_sents, y_pred_sents, scheme=scheme)
    return _format_conlleval(counts)


def _format_conlleval(counts):
    lines = ["processed %d tokens with %d phrases; found: %d phrases; correct: %d.\n"
             % (counts.n_tokens, counts.n_true_chunks, counts.n_pred_chunks,
                counts.n_correct_chunks)]
    if counts.n_tokens > 0:
        precision, recall, fb1 = counts.precision_recall_f1()
        lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; "
                     "FB1: %6.2f\n" % (100 * counts.n_correct_tags / counts.n_tokens,
                                       precision, recall, fb1))
    for chunk_type in counts.types():
        precision, recall, fb1 = counts.precision_recall_f1(chunk_type)
        lines.append("%s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d\n"
                     % (_pad_bytes(chunk_type, 17), precision, recall, fb1,
                        counts.pred_chunks[chunk_type]))
    return "".join(lines)


def _conlleval_records(lines, delimiter, boundary, filename):
    """(gold tag, guessed tag, is_boundary) per line, as the script reads them."""
    n_fields = None
    for lineno, line in enumerate(lines, start=1):
        fields = line.rstrip("\r\n").split(delimiter)
        while fields and fields[-1] == "":      # Perl's split drops trailing empties
            fields.pop()
        if fields:
            if n_fields is None:
                n_fields = len(fields)
            elif len(fields) != n_fields:
                raise DataFormatError("unexpected number of features: %d (%d)"
                                      % (len(fields), n_fields), filename, lineno)
        if not fields or fields[0] == boundary:
            yield "O", "O", True
            continue
        if len(fields) < 2:
            raise DataFormatError("a line needs at least two fields (gold and guessed "
                                  "tag), got %d" % len(fields), filename, lineno)
        yield fields[-2], fields[-1], False


def read_conlleval_lines(lines, *, delimiter=" ", boundary="-X-", filename=None):
    """Read conlleval input: gold and guessed tags in the last two columns.

    A blank line, or a line whose first field is ``boundary``, ends a
    sentence (every such line ends one, so two in a row give an empty
    sentence).  Fields are split on ``delimiter`` with trailing empty fields
    dropped, as Perl's ``split`` does.  To score a file exactly as the script
    does, also when it does not end with a blank line, use
    :func:`conlleval_report_from_lines`.

    Parameters
    ----------
    lines : iterable of str
        E.g. an open text file.
    delimiter : str, default=" "
    boundary : str, default="-X-"
    filename : str, optional
        Used in error messages.

    Returns
    -------
    y_true_sents, y_pred_sents : list of list of str

    Raises
    ------
    DataFormatError
        A line with a different number of fields than the first one, or
        with fewer than two.
    """
    y_true_sents, y_pred_sents = [], []
    true_tags, pred_tags = [], []
    for true_tag, pred_tag, is_boundary in _conlleval_records(lines, delimiter,
                                                              boundary, filename):
        if is_boundary:
            y_true_sents.append(true_tags)
            y_pred_sents.append(pred_tags)
            true_tags, pred_tags = [], []
        else:
            true_tags.append(true_tag)
            pred_tags.append(pred_tag)
    if true_tags:
        y_true_sents.append(true_tags)
        y_pred_sents.append(pred_tags)
    return y_true_sents, y_pred_sents


def conlleval_report_from_lines(lines, *, delimiter=" ", boundary="-X-", filename=None,
                                return_counts=False):
    """Run ``conlleval`` on the lines of a conlleval input file.

    Line for line the script's processing (see :func:`read_conlleval_lines`
    for the format), so the output is the script's also for files that do
    not end with a blank line.

    Parameters
    ----------
    lines : iterable of str
    delimiter, boundary, filename
        As :func:`read_conlleval_lines`.
    return_counts : bool, default=False
        Also return the :class:`ConllevalCounts`.

    Returns
    -------
    str, or (str, ConllevalCounts)
    """
    state = _ConllevalState()
    for true_tag, pred_tag, is_boundary in _conlleval_records(lines, delimiter,
                                                              boundary, filename):
        state.feed(true_tag, pred_tag, boundary=is_boundary)
    counts = state.finish()
    report = _format_conlleval(counts)
    return (report, counts) if return_counts else report


def token_accuracy(y_true_sents, y_pred_sents):
    """Fraction of tokens whose predicted tag equals the gold tag (exact string
    match; conlleval's ``accuracy`` differs only for types named ``0``)."""
    pairs = _check_sentences(y_true_sents, y_pred_sents, None)
    n_tokens = sum(len(t) for t, _ in pairs)
    if n_tokens == 0:
        raise ValueError("the sentences hold no tokens")
    return sum(a == b for t, p in pairs for a, b in zip(t, p)) / n_tokens


def sentence_accuracy(y_true_sents, y_pred_sents):
    """Fraction of sentences tagged entirely correctly."""
    pairs = _check_sentences(y_true_sents, y_pred_sents, None)
    return sum(t == p for t, p in pairs) / len(pairs)


# -- sklearn-crfsuite's ``metrics`` module: token-level metrics of flattened sequences --
def _flatten(y_true_sents, y_pred_sents):
    pairs = _check_sentences(y_true_sents, y_pred_sents, None)
    return ([a for t, _ in pairs for a in t], [b for _, p in pairs for b in p])


def flat_accuracy_score(y_true, y_pred):
    """Token accuracy of label sequences (sklearn-crfsuite's ``flat_accuracy_score``)."""
    from .classification import accuracy_score
    return accuracy_score(*_flatten(y_true, y_pred))


def flat_precision_score(y_true, y_pred, **kwargs):
    """:func:`precision_score` of the flattened sequences (sklearn-crfsuite's)."""
    from .classification import precision_score
    return precision_score(*_flatten(y_true, y_pred), **kwargs)


def flat_recall_score(y_true, y_pred, **kwargs):
    """:func:`recall_score` of the flattened sequences (sklearn-crfsuite's)."""
    from .classification import recall_score
    return recall_score(*_flatten(y_true, y_pred), **kwargs)


def flat_f1_score(y_true, y_pred, **kwargs):
    """:func:`f1_score` of the flattened sequences, e.g. ``average="weighted",
    labels=[...]`` as in sklearn-crfsuite's tutorial."""
    from .classification import f1_score
    return f1_score(*_flatten(y_true, y_pred), **kwargs)


def flat_fbeta_score(y_true, y_pred, beta, **kwargs):
    """:func:`fbeta_score` of the flattened sequences (sklearn-crfsuite's)."""
    from .classification import fbeta_score
    return fbeta_score(*_flatten(y_true, y_pred), beta=beta, **kwargs)


def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """:func:`classification_report` of the flattened sequences (sklearn-crfsuite's)."""
    from .classification import classification_report
    return classification_report(*_flatten(y_true, y_pred), labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """Fraction of sequences predicted entirely correctly (sklearn-crfsuite's
    ``sequence_accuracy_score``; the same as :func:`sentence_accuracy`)."""
    return sentence_accuracy(y_true, y_pred)
