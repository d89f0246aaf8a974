"""Loaders of the benchmark data (``../shared/data`` or ``$LINCLASS_DATA``) and of
the small data set bundled with the package.

The benchmark data are *not* part of linclass (their licences forbid
redistribution, see each folder's ``README.md``); :func:`data_home` finds
them.  The only data shipped inside the package is a CC BY-SA 4.0 slice of UD
English EWT, loaded by :func:`load_bundled_ud_english` (see
``linclass/datasets/data/README.md``).

Every loader returns plain Python / numpy / scipy objects:

======================== ======================================================
loader                   returns
======================== ======================================================
load_conll2000           list of :class:`Sentence` (word, pos, chunk)
load_conll2002           list of :class:`Sentence` (word, pos, ner)
load_ud_english_ewt      list of :class:`Sentence` (the 10 CoNLL-U columns)
load_bundled_ud_english  list of :class:`Sentence` (the 10 CoNLL-U columns)
load_ptb_sample          list of :class:`Tree`
load_20newsgroups        :class:`Bunch` (data, target, target_names, ...)
load_libsvm_binary       ``(X, y)``, X a CSR matrix
load_lambdarank          ``(X, y, qid)``
load_citation_graph      :class:`Bunch` (features, labels, node_ids, edges, ...)
load_balibase            :class:`Bunch` (cases, blosum62, alphabet)
======================== ======================================================
"""
import json
import os
import tarfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataFormatError
from ._io import iter_lines

__all__ = [
    "Bunch", "BalibaseCase", "data_home", "load_conll2000", "load_ud_english_ewt",
    "load_conll2002", "load_ptb_sample", "load_20newsgroups", "load_libsvm_binary",
    "load_lambdarank", "load_citation_graph", "load_balibase", "load_bundled_ud_english",
]

_ENV_VAR = "LINCLASS_DATA"
_BUNDLED_DIR = Path(__file__).resolve().parent / "data"


class Bunch(dict):
    """A dict whose keys are also attributes (like scikit-learn's ``Bunch``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value

    def __dir__(self):
        return list(self.keys())


def data_home(path=None):
    """The folder that holds the benchmark data.

    Looked up in this order: ``path`` if given; the environment variable
    ``LINCLASS_DATA``; ``<repository>/../shared/data`` relative to the
    linclass source tree (a development checkout next to the shared data).

    Parameters
    ----------
    path : str or os.PathLike, optional

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        When the folder does not exist, with a hint how to point at it.
    """
    hint = ("set the environment variable %s to the folder holding the benchmark data "
            "(with sub-folders such as conll2000_chunking/, ud_english_ewt/, ...), or pass "
            "data_home=... to the loader" % _ENV_VAR)
    if path is not None:
        home = Path(path).expanduser()
        if not home.is_dir():
            raise FileNotFoundError("data folder %s does not exist; %s" % (home, hint))
        return home
    env = os.environ.get(_ENV_VAR)
    if env:
        home = Path(env).expanduser()
        if not home.is_dir():
            raise FileNotFoundError("%s=%s is not a folder; %s" % (_ENV_VAR, env, hint))
        return home
    repository = Path(__file__).resolve().parents[2]
    home = (repository / ".." / "shared" / "data").resolve()
    if home.is_dir():
        return home
    raise FileNotFoundError("no benchmark data found (looked for %s next to the source tree); "
                            "%s" % (home, hint))


def _data_file(folder, filename, home):
    path = data_home(home) / folder / filename
    if not path.exists():
        raise FileNotFoundError("%s not found; is %s the right data folder?"
                                % (path, data_home(home)))
    return path


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(map(repr, choices)),
                                                             value))


# -- sequence labelling and parsing ---------------------------------------------

def load_conll2000(split="train", *, data_home=None):
    """CoNLL-2000 chunking (WSJ): sentences of ``(word, pos, chunk)`` rows.

    Parameters
    ----------
    split : {"train", "test"}
        8,936 / 2,012 sentences, 211,727 / 47,377 tokens.  There is no dev set.
    data_home : path, optional
        See :func:`data_home`.

    Returns
    -------
    list of Sentence
        Columns named ``"word", "pos", "chunk"``; chunk tags are IOB2.

    References
    ----------
    Tjong Kim Sang and Buchholz (2000), Introduction to the CoNLL-2000 shared
    task: chunking.
    """
    from .conll import read_conll
    _check_choice(split, "split", ("train", "test"))
    path = _data_file("conll2000_chunking", split + ".txt.gz", data_home)
    return read_conll(path, format="conll", columns=("word", "pos", "chunk"))


def load_conll2002(language="esp", split="train", *, data_home=None):
    """CoNLL-2002 named entities (Spanish ``esp`` or Dutch ``ned``).

    Parameters
    ----------
    language : {"esp", "ned"}
    split : {"train", "testa", "testb"}
        ``testa`` is the development set, ``testb`` the final test set.
        Sentences: esp 8,323 / 1,915 / 1,517; ned 15,806 / 2,895 / 5,195.
    data_home : path, optional

    Returns
    -------
    list of Sentence
        Columns ``"word", "pos", "ner"`` (IOB2 over PER/ORG/LOC/MISC).  The
        Dutch ``-DOCSTART-`` lines are document boundaries, not tokens:
        see :attr:`Sentence.doc_index` and ``metadata["docstart"]``.  The files
        are UTF-8.

    References
    ----------
    Tjong Kim Sang (2002), Introduction to the CoNLL-2002 shared task:
    language-independent named entity recognition.
    """
    from .conll import read_conll
    _check_choice(language, "language", ("esp", "ned"))
    _check_choice(split, "split", ("train", "testa", "testb"))
    path = _data_file("conll2002_ner", "%s.%s.gz" % (language, split), data_home)
    return read_conll(path, format="conll", columns=("word", "pos", "ner"), encoding="utf-8")


def load_ud_english_ewt(split="train", *, data_home=None):
    """UD English EWT v2.16 (CoNLL-U): sentences of syntactic words.

    Parameters
    ----------
    split : {"train", "dev", "test"}
        12,544 / 2,001 / 2,077 sentences; 204,577 / 25,147 / 25,094 words.
    data_home : path, optional

    Returns
    -------
    list of Sentence
        The 10 CoNLL-U columns (``column("form")``, ``column("upos")``,
        ``column("xpos")``, ...); multi-word tokens and empty nodes are in
        ``extra_rows``; comments in ``metadata``.

    References
    ----------
    Silveira et al. (2014), A gold standard dependency corpus for English. LREC.
    """
    from .conll import read_conll
    _check_choice(split, "split", ("train", "dev", "test"))
    path = _data_file("ud_english_ewt", "en_ewt-ud-%s.conllu.gz" % split, data_home)
    return read_conll(path, format="conllu")


_BUNDLED_FILES = {"train": "ud_english_ewt_sample.train.conllu.gz",
                  "test": "ud_english_ewt_sample.test.conllu.gz"}


def load_bundled_ud_english(split="train"):
    """A small slice of UD English EWT v2.16 shipped inside linclass.

    Every 4th sentence of the EWT train file (3,136 sentences) as ``"train"``
    and every 4th sentence of the EWT dev file (501 sentences) as ``"test"``,
    unchanged CoNLL-U lines.  Licence CC BY-SA 4.0; see
    ``linclass/datasets/data/README.md`` for the attribution.

    Parameters
    ----------
    split : {"train", "test"}

    Returns
    -------
    list of Sentence
        As :func:`load_ud_english_ewt`.
    """
    from .conll import read_conll
    _check_choice(split, "split", ("train", "test"))
    return read_conll(_BUNDLED_DIR / _BUNDLED_FILES[split], format="conllu")


def load_ptb_sample(split="train", *, strip_outer=True, data_home=None):
    """The NLTK 10 % sample of the Penn Treebank WSJ, split by file.

    Parameters
    ----------
    split : {"train", "dev", "test"}
        wsj_0001-0159 / 0160-0179 / 0180-0199: 3,396 / 273 / 245 trees.
    strip_outer : bool
        Remove the unlabeled outer bracket of each tree (``((S ...))`` ->
        ``(S ...)``), as NLTK's treebank reader does.
    data_home : path, optional

    Returns
    -------
    list of Tree
        With function tags and ``-NONE-`` elements as in the treebank (see
        :meth:`Tree.strip_function_tags`, :meth:`Tree.remove_empty_elements`).

    References
    ----------
    Marcus, Santorini and Marcinkiewicz (1993), Building a large annotated
    corpus of English: the Penn Treebank.
    """
    from .trees import read_trees
    _check_choice(split, "split", ("train", "dev", "test"))
    path = _data_file("ptb_wsj_sample", split + ".mrg.gz", data_home)
    return read_trees(path, strip_outer=strip_outer)


# -- text classification ------------------------------------------------------

def load_20newsgroups(split="train", *, data_home=None):
    """20 Newsgroups, "bydate" split, raw messages with headers.

    Parameters
    ----------
    split : {"train", "test"}
        11,314 / 7,532 messages.
    data_home : path, optional

    Returns
    -------
    Bunch
        ``data`` (list of str, the raw messages), ``target`` (int64 array,
        index into ``target_names``, equal to scikit-learn's target),
        ``target_names`` (the 20 sorted newsgroup names), ``ids``
        (``"group/number"``), ``top_level_names`` (the 7 sorted top-level
        groups ``alt, comp, misc, rec, sci, soc, talk``),
        ``target_top_level`` (int64 array, each message's top-level group as
        an index into ``top_level_names``) and ``label_top_level`` (int64
        array, for each of the 20 labels the index of its top-level group).

    References
    ----------
    Lang, K. (1995). NewsWeeder: learning to filter netnews. ICML.
    """
    _check_choice(split, "split", ("train", "test"))
    path = _data_file("20newsgroups_bydate", "20news-bydate-%s.jsonl.gz" % split, data_home)
    texts, labels, label_indices, ids = [], [], [], []
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            texts.append(record["text"])
            labels.append(record["label"])
            label_indices.append(int(record["label_index"]))
            ids.append(record["id"])
        except (ValueError, KeyError, TypeError) as err:
            raise DataFormatError("not a JSON record with id/label/label_index/text (%s)"
                                  % err, str(path), lineno) from None
    target_names = sorted(set(labels))
    index = {name: k for k, name in enumerate(target_names)}
    target = np.array([index[name] for name in labels], dtype=np.int64)
    if len(target_names) == 20 and not np.array_equal(target, label_indices):
        raise DataFormatError("label_index disagrees with the sorted label names", str(path))
    top_names = sorted({name.split(".")[0] for name in target_names})
    top_index = {name: k for k, name in enumerate(top_names)}
    label_top = np.array([top_index[name.split(".")[0]] for name in target_names],
                         dtype=np.int64)
    return Bunch(data=texts, target=target, target_names=target_names, ids=ids,
                 top_level_names=top_names, target_top_level=label_top[target],
                 label_top_level=label_top)


# -- svmlight data --------------------------------------------------------------

_LIBSVM_FILES = {("a9a", "train"): ("a9a.gz", 123), ("a9a", "test"): ("a9a.t.gz", 123),
                 ("w8a", "train"): ("w8a.gz", 300)}


def load_libsvm_binary(name="a9a", split="train", *, data_home=None):
    """LIBSVM binary classification sets a9a (train/test) and w8a (train only).

    Parameters
    ----------
    name : {"a9a", "w8a"}
    split : {"train", "test"}
        a9a: 32,561 / 16,281 examples, 123 features; w8a: 49,749 training
        examples, 300 features (no test file).
    data_home : path, optional

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_samples, n_features)
        ``n_features`` is fixed (123 or 300), so train and test agree.
    y : ndarray of float64
        Labels -1 / +1.
    """
    _check_choice(name, "name", ("a9a", "w8a"))
    _check_choice(split, "split", ("train", "test"))
    if (name, split) not in _LIBSVM_FILES:
        raise ValueError("%s has no %s split (only train)" % (name, split))
    from .svmlight import load_svmlight_file
    filename, n_features = _LIBSVM_FILES[name, split]
    path = _data_file("libsvm_binary", filename, data_home)
    X, y = load_svmlight_file(os.fspath(path), n_features=n_features, zero_based=False)[:2]
    return X, y


def load_lambdarank(split="train", *, data_home=None):
    """The LightGBM LambdaRank example (graded relevance 0-4, query groups).

    Parameters
    ----------
    split : {"train", "test"}
        201 / 50 queries, 3,005 / 768 documents, 300 features.
    data_home : path, optional

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_documents, 300)
    y : ndarray of float64
        Relevance 0..4.
    qid : ndarray of int64
        Query id of each document (train 1..201, test 10001..10050);
        documents of a query are consecutive.
    """
    _check_choice(split, "split", ("train", "test"))
    from .svmlight import load_svmlight_file
    path = _data_file("lightgbm_lambdarank", "rank.%s.qid.svm.gz" % split, data_home)
    X, y, qid = load_svmlight_file(os.fspath(path), n_features=300, zero_based=False,
                                   query_id=True)[:3]
    return X, y, np.asarray(qid, dtype=np.int64)


# -- graphs ---------------------------------------------------------------------------

def _parse_content_line(line, n_words, path, lineno):
    """Word indicators of one ``.content`` line -> (paper id, nonzero word indices, label)."""
    head, sep1, rest = line.partition("\t")
    body, sep2, label = rest.rpartition("\t")
    if not (sep1 and sep2):
        raise DataFormatError("expected <paper id> <word indicators...> <label> separated "
                              "by tabs", path, lineno)
    if len(body) == 2 * n_words - 1 and body.count("\t") == n_words - 1:
        codes = np.frombuffer(body[::2].encode("ascii", "replace"), dtype=np.uint8)
        if not ((codes == 48) | (codes == 49)).all():
            raise DataFormatError("word indicators must be 0 or 1", path, lineno)
        return head, np.flatnonzero(codes == 49), label
    fields = body.split("\t")
    if len(fields) != n_words:
        raise DataFormatError("expected %d word indicators, found %d"
                              % (n_words, len(fields)), path, lineno)
    if not set(fields) <= {"0", "1"}:
        raise DataFormatError("word indicators must be 0 or 1", path, lineno)
    return head, np.array([k for k, v in enumerate(fields) if v == "1"], dtype=np.intp), label


def load_citation_graph(name="cora", *, data_home=None):
    """Cora or CiteSeer (LINQS): binary bag-of-words papers and citation links.

    Parameters
    ----------
    name : {"cora", "citeseer"}
        Cora: 2,708 papers, 1,433 words, 7 classes, 5,429 links.
        CiteSeer: 3,312 papers, 3,703 words, 6 classes, 4,732 links of which
        17 mention one of 15 paper ids absent from the content file.
    data_home : path, optional

    Returns
    -------
    Bunch
        ``features``: CSR float64 (n_papers, n_words) of 0/1;
        ``labels``: int64 index into ``label_names`` (sorted class names);
        ``node_ids``: the paper ids (str) in file order;
        ``edges``: int64 array (n_links, 2) of ``(citing, cited)`` node
        indices, in the order of the ``.cites`` file, self-links included
        (CiteSeer has 124);
        ``dropped_links``: the ``(cited id, citing id)`` pairs of links whose
        ends are not both in the content file -- left out of ``edges``, as the
        data README says (none for Cora, 17 for CiteSeer).
        The data have no official train/test split.

    References
    ----------
    Sen, P. et al. (2008). Collective classification in network data.
    AI Magazine 29(3).
    """
    _check_choice(name, "name", ("cora", "citeseer"))
    content_path = str(_data_file("citation_graphs", "%s/%s.content.gz" % (name, name), data_home))
    cites_path = str(_data_file("citation_graphs", "%s/%s.cites" % (name, name), data_home))
    node_ids, label_strings, columns, indptr = [], [], [], [0]
    n_words = None
    index = {}
    for lineno, line in iter_lines(content_path):
        if not line.strip():
            continue
        if n_words is None:
            n_words = line.count("\t") - 1
            if n_words < 1:
                raise DataFormatError("expected <paper id> <word indicators...> <label>",
                                      content_path, lineno)
        paper, words, label = _parse_content_line(line, n_words, content_path, lineno)
        if paper in index:
            raise DataFormatError("paper id %r appears twice" % paper, content_path, lineno)
        index[paper] = len(node_ids)
        node_ids.append(paper)
        label_strings.append(label)
        columns.append(words)
        indptr.append(indptr[-1] + len(words))
    if not node_ids:
        raise DataFormatError("no papers in the content file", content_path)
    indices = np.concatenate(columns).astype(np.int32)
    features = sp.csr_matrix((np.ones(len(indices)), indices, np.array(indptr, dtype=np.int32)),
                             shape=(len(node_ids), n_words))
    label_names = sorted(set(label_strings))
    label_index = {label: k for k, label in enumerate(label_names)}
    labels = np.array([label_index[label] for label in label_strings], dtype=np.int64)
    edges, dropped = [], []
    for lineno, line in iter_lines(cites_path):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise DataFormatError("expected <cited paper id> <citing paper id>, found %d fields"
                                  % len(fields), cites_path, lineno)
        cited, citing = fields
        if cited in index and citing in index:
            edges.append((index[citing], index[cited]))
        else:
            dropped.append((cited, citing))
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return Bunch(features=features, labels=labels, label_names=label_names, node_ids=node_ids,
                 edges=edges, dropped_links=dropped)


# -- alignment ----------------------------------------------------------------------------

class BalibaseCase:
    """One BAliBASE test case: unaligned sequences and the reference alignment.

    Attributes
    ----------
    name : str
        ``"BB11001"`` (full-length sequences) or ``"BBS11001"`` (homologous
        regions only).
    reference_set : str
        ``"RV11"`` or ``"RV12"``.
    names : list of str
        Sequence names, in the order of the ``.msf`` alignment.
    sequences : list of str
        Unaligned sequences (upper-case residues), from the ``.tfa`` file,
        in the order of ``names``.
    alignment : list of str
        The reference multiple alignment, one row per sequence, gaps as ``-``;
        removing the gaps gives ``sequences``.
    core_columns : ndarray of bool or None
        The alignment columns in BAliBASE core blocks (from the ``.xml``).
    """

    __slots__ = ("name", "reference_set", "names", "sequences", "alignment", "core_columns")

    def __init__(self, name, reference_set, names, sequences, alignment, core_columns):
        self.name = name
        self.reference_set = reference_set
        self.names = names
        self.sequences = sequences
        self.alignment = alignment
        self.core_columns = core_columns

    @property
    def variant(self):
        """``"BB"`` or ``"BBS"``."""
        return "BBS" if self.name.startswith("BBS") else "BB"

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        return "BalibaseCase(%s/%s, %d sequences, %d columns)" % (
            self.reference_set, self.name, len(self.names),
            len(self.alignment[0]) if self.alignment else 0)

    def pairwise_alignment(self, i, j):
        """The reference alignment projected onto sequences ``i`` and ``j``.

        Columns where both rows are gaps are dropped.

        Returns
        -------
        row_i, row_j : str
            Equal-length rows with ``-`` gaps.
        """
        a, b = self.alignment[i], self.alignment[j]
        kept = [(x, y) for x, y in zip(a, b) if not (x == "-" and y == "-")]
        return "".join(x for x, _ in kept), "".join(y for _, y in kept)

    def pairwise_alignments(self):
        """All ``(i, j, row_i, row_j)`` for ``i < j`` (see :meth:`pairwise_alignment`)."""
        n = len(self.names)
        return [(i, j) + self.pairwise_alignment(i, j) for i in range(n) for j in range(i + 1, n)]


def _parse_fasta(text, where):
    names, sequences = [], []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            names.append(line[1:].split()[0] if line[1:].split() else "")
            sequences.append([])
        elif not names:
            raise DataFormatError("sequence data before the first '>' header", where, lineno)
        else:
            sequences[-1].append(line)
    return names, ["".join(parts).upper() for parts in sequences]


def _parse_msf(text, where):
    lines = text.split("\n")
    names = []
    separator = None
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("Name:"):
            fields = stripped.split()
            if len(fields) < 2:
                raise DataFormatError("'Name:' line without a name", where, lineno)
            names.append(fields[1])
        elif stripped == "//":
            separator = lineno
            break
    if separator is None or not names:
        raise DataFormatError("not a GCG MSF file (no 'Name:' lines or no '//' separator)",
                              where, len(lines))
    rows = {name: [] for name in names}
    for lineno, line in enumerate(lines[separator:], separator + 1):
        fields = line.split()
        if not fields:
            continue
        if fields[0] in rows:
            rows[fields[0]].append("".join(fields[1:]))
        elif not all(f.isdigit() for f in fields):  # column-number rulers are allowed
            raise DataFormatError("alignment line for an unknown sequence %r" % fields[0],
                                  where, lineno)
    alignment = ["".join(rows[name]).replace(".", "-").replace("~", "-").upper()
                 for name in names]
    if len({len(row) for row in alignment}) != 1:
        raise DataFormatError("alignment rows have different lengths", where, len(lines))
    return names, alignment


def _parse_core_blocks(data, where):
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as err:
        raise DataFormatError("malformed XML (%s)" % err, where, err.position[0]) from None
    for score in root.iter("column-score"):
        if (score.findtext("colsco-name") or "").strip() == "coreblock":
            values = (score.findtext("colsco-data") or "").split()
            try:
                return np.array([int(v) for v in values]) == 1
            except ValueError:
                raise DataFormatError("non-integer core-block column score", where) from None
    return None


def _parse_blosum(path):
    path = str(path)
    alphabet = None
    rows = {}
    for lineno, line in iter_lines(path):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if alphabet is None:
            alphabet = fields
            continue
        if len(fields) != len(alphabet) + 1 or fields[0] not in alphabet:
            raise DataFormatError("expected '<symbol> <%d scores>'" % len(alphabet), path, lineno)
        try:
            rows[fields[0]] = [int(v) for v in fields[1:]]
        except ValueError:
            raise DataFormatError("non-integer score", path, lineno) from None
    if alphabet is None or set(rows) != set(alphabet):
        raise DataFormatError("matrix rows do not match the header symbols", path)
    matrix = np.array([rows[a] for a in alphabet], dtype=np.int64)
    return alphabet, matrix


def load_blosum62(*, data_home=None):
    """The BLOSUM62 substitution matrix from the data directory's ``alignment`` folder.

    Returns ``(alphabet, matrix)``: the 24 symbols ``ARNDCQEGHILKMFPSTWYVBZX*``
    (a list of str) and the int64 score matrix (24, 24).  Raises
    ``FileNotFoundError`` when the data is absent and
    :class:`~linclass.exceptions.DataFormatError` for a malformed file.
    """
    return _parse_blosum(_data_file("alignment", "BLOSUM62.txt", data_home))


def load_balibase(reference_sets=("RV11", "RV12"), variant=None, *, data_home=None):
    """BAliBASE 3.0 Reference 1 (RV11, RV12) alignments and the BLOSUM62 matrix.

    Parameters
    ----------
    reference_sets : sequence of {"RV11", "RV12"}
        RV11: 38 cases (< 20 % identity), RV12: 44 cases (20-40 %).
    variant : {None, "BB", "BBS"}
        ``"BB"``: full-length sequences; ``"BBS"``: homologous regions only;
        None: both (so 2 x 82 cases).
    data_home : path, optional

    Returns
    -------
    Bunch
        ``cases``: list of :class:`BalibaseCase`, sorted by set and name;
        ``blosum62``: int64 (24, 24) matrix; ``alphabet``: its 24 symbols
        ``A R N D C Q E G H I L K M F P S T W Y V B Z X *`` (the order of rows
        and columns).  BAliBASE is an evaluation-only benchmark: no split.

    References
    ----------
    Thompson, Plewniak and Poch (1999), BAliBASE: a benchmark alignment
    database. Bioinformatics 15:87-88.  Henikoff and Henikoff (1992), Amino
    acid substitution matrices from protein blocks. PNAS 89:10915.
    """
    reference_sets = tuple(reference_sets)
    for reference_set in reference_sets:
        _check_choice(reference_set, "reference set", ("RV11", "RV12"))
    _check_choice(variant, "variant", (None, "BB", "BBS"))
    tar_path = str(_data_file("alignment", "balibase3_RV11_RV12.tar.gz", data_home))
    alphabet, blosum = _parse_blosum(_data_file("alignment", "BLOSUM62.txt", data_home))
    members = {}
    with tarfile.open(tar_path, "r:gz") as archive:
        for member in archive:
            if not member.isfile():
                continue
            parts = member.name.split("/")
            if len(parts) != 3 or parts[1] not in reference_sets:
                continue
            stem, _, extension = parts[2].rpartition(".")
            if extension not in ("tfa", "msf", "xml"):
                continue
            if variant is not None and (stem.startswith("BBS") != (variant == "BBS")):
                continue
            members[parts[1], stem, extension] = archive.extractfile(member).read()
    cases = []
    for reference_set, stem in sorted({(s, n) for s, n, _ in members}):
        where = "%s::balibase/%s/%s" % (tar_path, reference_set, stem)
        try:
            tfa = members[reference_set, stem, "tfa"].decode("ascii")
            msf = members[reference_set, stem, "msf"].decode("ascii")
        except KeyError as err:
            raise DataFormatError("missing .%s file" % err.args[0][2], where) from None
        fasta_names, fasta_sequences = _parse_fasta(tfa, where + ".tfa")
        names, alignment = _parse_msf(msf, where + ".msf")
        by_name = dict(zip(fasta_names, fasta_sequences))
        if set(by_name) != set(names):
            raise DataFormatError("the .tfa and .msf files name different sequences", where)
        sequences = [by_name[name] for name in names]
        for name, row, sequence in zip(names, alignment, sequences):
            if row.replace("-", "") != sequence:
                raise DataFormatError("aligned sequence %s without gaps differs from the .tfa "
                                      "sequence" % name, where + ".msf")
        core = None
        if (reference_set, stem, "xml") in members:
            core = _parse_core_blocks(members[reference_set, stem, "xml"], where + ".xml")
            if core is not None and len(core) != len(alignment[0]):
                raise DataFormatError("core-block annotation has %d columns, the alignment %d"
                                      % (len(core), len(alignment[0])), where + ".xml")
        cases.append(BalibaseCase(stem, reference_set, names, sequences, alignment, core))
    if not cases:
        raise DataFormatError("no test cases found for %s" % (reference_sets,), tar_path)
    return Bunch(cases=cases, blosum62=blosum, alphabet=alphabet)

