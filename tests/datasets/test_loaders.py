"""Loaders of the benchmark data and of the bundled data set.

Counts are the ones measured in each data folder's README.md.
"""
import collections
import gzip
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

import linclass.datasets as datasets
from linclass.datasets import data_home, write_conll
from linclass.exceptions import DataFormatError


def _home():
    try:
        return data_home()
    except FileNotFoundError as err:
        pytest.skip("benchmark data not available: %s" % err)


@pytest.fixture(scope="module")
def home():
    return _home()


def _needs_svmlight():
    try:
        spec = importlib.util.find_spec("linclass.datasets.svmlight")
    except ImportError:
        spec = None
    if spec is None:
        pytest.skip("linclass.datasets.svmlight is not available in this tree")


# -- data_home -----------------------------------------------------------------------

def test_data_home_explicit_env_and_missing(tmp_path, monkeypatch):
    assert data_home(tmp_path) == tmp_path
    monkeypatch.setenv("LINCLASS_DATA", str(tmp_path))
    assert data_home() == tmp_path
    with pytest.raises(FileNotFoundError, match="LINCLASS_DATA"):
        data_home(tmp_path / "missing")
    monkeypatch.setenv("LINCLASS_DATA", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="LINCLASS_DATA"):
        data_home()
    # loaders take data_home= and say which file is missing
    with pytest.raises(FileNotFoundError, match="conll2000_chunking"):
        datasets.load_conll2000(data_home=tmp_path)


def test_bad_choices_raise_value_error():
    with pytest.raises(ValueError, match="split"):
        datasets.load_conll2000("dev")
    with pytest.raises(ValueError, match="language"):
        datasets.load_conll2002("eng")
    with pytest.raises(ValueError, match="only train"):
        datasets.load_libsvm_binary("w8a", "test")
    with pytest.raises(ValueError, match="name"):
        datasets.load_citation_graph("pubmed")
    with pytest.raises(ValueError, match="split"):
        datasets.load_bundled_ud_english("dev")


# -- the bundled data ---------------------------------------------------------------

def test_bundled_ud_english():
    train = datasets.load_bundled_ud_english("train")
    test = datasets.load_bundled_ud_english("test")
    assert (len(train), sum(map(len, train))) == (3136, 51717)
    assert (len(test), sum(map(len, test))) == (501, 6518)
    upos = collections.Counter(tag for s in train for tag in s.column("upos"))
    assert len(upos) == 17
    assert sum(len(s.extra_rows) for s in train) == 655
    assert all(s.metadata.get("sent_id") and "text" in s.metadata for s in train)
    package_data = Path(datasets.__file__).parent / "data"
    total = sum(p.stat().st_size for p in package_data.iterdir())
    assert total < 1_000_000
    readme = (package_data / "README.md").read_text()
    assert "CC BY-SA 4.0" in readme and "v2.16" in readme
    assert (package_data / "LICENSE_UD_English_EWT.txt").exists()


def test_bundled_is_every_fourth_sentence_of_ewt(home):
    path = home / "ud_english_ewt" / "en_ewt-ud-dev.conllu.gz"
    if not path.exists():
        pytest.skip("%s not found" % path)
    dev = datasets.load_ud_english_ewt("dev")
    bundled = datasets.load_bundled_ud_english("test")
    assert [s.metadata["sent_id"] for s in bundled] == [s.metadata["sent_id"] for s in dev[::4]]
    assert bundled == dev[::4]


# -- sequence labelling and parsing -------------------------------------------------

def test_conll2000(home):
    train = datasets.load_conll2000("train")
    test = datasets.load_conll2000("test")
    assert (len(train), sum(map(len, train))) == (8936, 211727)
    assert (len(test), sum(map(len, test))) == (2012, 47377)
    chunks = collections.Counter(t for s in train for t in s.column("chunk"))
    assert sum(n for t, n in chunks.items() if t.startswith("B-")) == 106978
    assert len(chunks) == 22
    assert len({t for s in train for t in s.column("pos")}) == 44


@pytest.mark.parametrize("language, split, n_sentences, n_tokens, n_docstart, n_entities", [
    ("esp", "train", 8323, 264715, 0, 18797),
    ("esp", "testb", 1517, 51533, 0, 3558),
    ("ned", "train", 15806, 202644, 287, 13344),
    ("ned", "testa", 2895, 37687, 74, 2616),
])
def test_conll2002(home, language, split, n_sentences, n_tokens, n_docstart, n_entities):
    sentences = datasets.load_conll2002(language, split)
    assert len(sentences) == n_sentences
    assert sum(map(len, sentences)) == n_tokens
    assert sum("docstart" in s.metadata for s in sentences) == n_docstart
    assert sentences[-1].doc_index == max(n_docstart - 1, 0)
    assert sum(t.startswith("B-") for s in sentences for t in s.column("ner")) == n_entities
    assert not any(w == "-DOCSTART-" for s in sentences for w in s.column("word"))
    # the files are UTF-8: accented words come through intact
    if language == "esp":
        assert any("ñ" in w for s in sentences[:500] for w in s.column("word"))
    # writing back reproduces the file
    out = io.StringIO()
    write_conll(sentences, out)
    with gzip.open(home / "conll2002_ner" / ("%s.%s.gz" % (language, split)), "rt",
                   encoding="utf-8") as handle:
        assert out.getvalue() == handle.read()


@pytest.mark.parametrize("split, n_docs, n_sentences, n_words, n_multiword, n_empty", [
    ("dev", 318, 2001, 25147, 359, 4),
    ("test", 316, 2077, 25094, 354, 2),
])
def test_ud_english_ewt(home, split, n_docs, n_sentences, n_words, n_multiword, n_empty):
    sentences = datasets.load_ud_english_ewt(split)
    assert len(sentences) == n_sentences
    assert sum(map(len, sentences)) == n_words
    extra_ids = [row[0] for s in sentences for _, row in s.extra_rows]
    assert sum("-" in i for i in extra_ids) == n_multiword
    assert sum("." in i for i in extra_ids) == n_empty
    assert sentences[-1].doc_index + 1 == n_docs
    assert len({t for s in sentences for t in s.column("upos")}) == 17
    out = io.StringIO()
    write_conll(sentences, out)
    with gzip.open(home / "ud_english_ewt" / ("en_ewt-ud-%s.conllu.gz" % split), "rt",
                   encoding="utf-8") as handle:
        assert out.getvalue() == handle.read()


def test_ud_english_ewt_train_counts(home):
    sentences = datasets.load_ud_english_ewt("train")
    assert (len(sentences), sum(map(len, sentences))) == (12544, 204577)
    assert sentences[-1].doc_index + 1 == 540


@pytest.mark.parametrize("split, n_trees, n_leaves, n_words, n_tags", [
    ("train", 3396, 87514, 81793, 46),
    ("dev", 273, 6772, 6327, 39),
    ("test", 245, 6390, 5964, 40),
])
def test_ptb_sample(home, split, n_trees, n_leaves, n_words, n_tags):
    trees = datasets.load_ptb_sample(split)
    assert len(trees) == n_trees
    assert all(t.label != "" for t in trees)
    pos = [p for t in trees for p in t.pos()]
    assert len(pos) == n_leaves
    assert sum(tag != "-NONE-" for _, tag in pos) == n_words
    assert len({tag for _, tag in pos}) == n_tags
    cleaned = [t.strip_function_tags().remove_empty_elements() for t in trees]
    assert sum(len(t.leaves()) for t in cleaned) == n_words


# -- text classification -----------------------------------------------------------

def test_20newsgroups(home):
    train = datasets.load_20newsgroups("train")
    assert len(train.data) == len(train.target) == len(train.ids) == 11314
    assert len(train.target_names) == 20
    counts = np.bincount(train.target, minlength=20)
    assert counts[train.target_names.index("alt.atheism")] == 480
    assert counts[train.target_names.index("talk.religion.misc")] == 377
    assert train.top_level_names == ["alt", "comp", "misc", "rec", "sci", "soc", "talk"]
    comp = train.top_level_names.index("comp")
    assert np.sum(train.target_top_level == comp) == 584 + 591 + 590 + 578 + 593
    assert [train.top_level_names[k] for k in train.label_top_level[:3]] == ["alt", "comp", "comp"]
    assert train.data[0].startswith("From:")
    assert sum(len(t) for t in train.data[:5]) > 0


# -- svmlight data --------------------------------------------------------------------

def test_libsvm_binary(home):
    _needs_svmlight()
    X, y = datasets.load_libsvm_binary("a9a", "test")
    assert X.shape == (16281, 123) and X.nnz == 225731
    assert (np.sum(y == 1), np.sum(y == -1)) == (3846, 12435)
    X, y = datasets.load_libsvm_binary("w8a")
    assert X.shape == (49749, 300) and X.nnz == 579586


def test_lambdarank(home):
    _needs_svmlight()
    X, y, qid = datasets.load_lambdarank("test")
    assert X.shape == (768, 300) and X.nnz == 74663
    assert len(np.unique(qid)) == 50 and qid.min() == 10001
    assert np.bincount(y.astype(int)).tolist() == [206, 256, 252, 44, 10]


# -- graphs -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, n_papers, n_words, nnz, n_classes, n_links, n_dropped, "
                         "n_self, n_undirected, n_isolated", [
                             ("cora", 2708, 1433, 49216, 7, 5429, 0, 0, 5278, 0),
                             ("citeseer", 3312, 3703, 105165, 6, 4715, 17, 124, 4536, 48),
                         ])
def test_citation_graph(home, name, n_papers, n_words, nnz, n_classes, n_links, n_dropped,
                        n_self, n_undirected, n_isolated):
    graph = datasets.load_citation_graph(name)
    assert graph.features.shape == (n_papers, n_words)
    assert graph.features.nnz == nnz and set(np.unique(graph.features.data)) == {1.0}
    assert len(graph.label_names) == n_classes
    assert len(graph.node_ids) == len(graph.labels) == n_papers
    assert graph.edges.shape == (n_links, 2)
    assert len(graph.dropped_links) == n_dropped
    assert int(np.sum(graph.edges[:, 0] == graph.edges[:, 1])) == n_self
    undirected = {tuple(sorted(e)) for e in graph.edges.tolist() if e[0] != e[1]}
    assert len(undirected) == n_undirected
    touched = np.zeros(n_papers, dtype=bool)
    touched[graph.edges[graph.edges[:, 0] != graph.edges[:, 1]].ravel()] = True
    assert int(np.sum(~touched)) == n_isolated
    if name == "cora":
        assert np.bincount(graph.labels)[graph.label_names.index("Neural_Networks")] == 818
    else:
        ids = set(graph.node_ids)
        missing = {x for pair in graph.dropped_links for x in pair if x not in ids}
        assert len(missing) == 15


def test_citation_graph_malformed_content(tmp_path):
    folder = tmp_path / "citation_graphs" / "cora"
    folder.mkdir(parents=True)
    with gzip.open(folder / "cora.content.gz", "wt") as handle:
        handle.write("1\t0\t1\tA\n2\t0\t2\tB\n")
    (folder / "cora.cites").write_text("1\t2\n")
    with pytest.raises(DataFormatError, match="0 or 1") as info:
        datasets.load_citation_graph("cora", data_home=tmp_path)
    assert info.value.lineno == 2 and "cora.content.gz" in info.value.filename
    with gzip.open(folder / "cora.content.gz", "wt") as handle:
        handle.write("1\t0\t1\tA\n2\t0\tB\n")
    with pytest.raises(DataFormatError, match="expected 2 word indicators"):
        datasets.load_citation_graph("cora", data_home=tmp_path)


# -- alignment ---------------------------------------------------------------------------

def test_balibase(home):
    bali = datasets.load_balibase()
    assert len(bali.cases) == 164
    assert bali.blosum62.shape == (24, 24)
    assert np.array_equal(bali.blosum62, bali.blosum62.T)
    assert bali.alphabet[:4] == ["A", "R", "N", "D"] and bali.alphabet[-1] == "*"
    index = {a: k for k, a in enumerate(bali.alphabet)}
    assert bali.blosum62[index["A"], index["A"]] == 4
    assert bali.blosum62[index["W"], index["W"]] == 11
    expected = {("RV11", "BB"): (38, 261, 943, 51, 1192), ("RV12", "BB"): (44, 396, 2335, 49, 2766),
                ("RV11", "BBS"): (38, 261, 943, 47, 544), ("RV12", "BBS"): (44, 396, 2335, 49, 1006)}
    for (reference_set, variant), numbers in expected.items():
        cases = [c for c in bali.cases
                 if c.reference_set == reference_set and c.variant == variant]
        lengths = [len(s) for c in cases for s in c.sequences]
        assert (len(cases), sum(len(c) for c in cases),
                sum(len(c.pairwise_alignments()) for c in cases),
                min(lengths), max(lengths)) == numbers
    case = bali.cases[0]
    assert all(row.replace("-", "") == seq for row, seq in zip(case.alignment, case.sequences))
    assert case.core_columns.shape == (len(case.alignment[0]),) and case.core_columns.any()
    i, j, row_i, row_j = case.pairwise_alignments()[0]
    assert len(row_i) == len(row_j)
    assert not any(a == "-" and b == "-" for a, b in zip(row_i, row_j))
    assert row_i.replace("-", "") == case.sequences[i]
    only_bbs = datasets.load_balibase(["RV11"], variant="BBS")
    assert len(only_bbs.cases) == 38 and all(c.name.startswith("BBS") for c in only_bbs.cases)
