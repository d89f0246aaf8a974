"""Tests of linclass.features: template parsing and FeatureTemplate.

The reference is a slow pure-Python extractor that builds each token's
feature strings the way CRFsuite's ``crfutils.apply_templates`` does; the
Cython path must produce the same feature set per token (compared through
``get_feature_names_out``), in first-occurrence id order.
"""
import gzip
import os
import pathlib
import pickle
import random

import numpy as np
import pytest
import scipy.sparse as sp

import linclass
from linclass.exceptions import NotFittedError
from linclass.features import (CONLL2002_NER, CRFSUITE_CHUNKING, NER_TEMPLATE, NER_WORD_TEMPLATE,
                               POS_TEMPLATE, FeatureTemplate, named_template,
                                parse_template)


# -- data ------------------------------------------------------------------------
def _data_home():
    env = os.environ.get("LINCLASS_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _read_columns(path, n_sentences=None):
    sentences, current = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            if not fields:
                if current:
                    sentences.append(current)
                    current = []
                    if n_sentences and len(sentences) == n_sentences:
                        break
            else:
                current.append(tuple(fields[:-1]))
    if current:
        sentences.append(current)
    return sentences


@pytest.fixture(scope="module")
def conll2000():
    path = _data_home() / "conll2000_chunking" / "train.txt.gz"
    if not path.exists():
        pytest.skip("CoNLL-2000 data not found at %s (set LINCLASS_DATA)" % path)
    return _read_columns(path, n_sentences=400)


WORDS = ["the", "The", "cat", "sat", "on", "mat", "U.S.", "1999", "3-4", "New", "York",
         "naïve", "ÉTÉ", "well-known", "A", "x", ",", ".", "Mr.", "CO2"]
TAGS = ["DT", "NN", "VBD", "IN", "NNP", "CD", ",", "."]


def _random_sentences(n, seed, max_len=9):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        length = rng.choice([0, 1, 2] + list(range(3, max_len)))
        out.append([(rng.choice(WORDS), rng.choice(TAGS)) for _ in range(length)])
    return out


# -- slow reference ----------------------------------------------------------------
def _ref_shape(s):
    out = []
    for c in s:
        if c.isupper():
            out.append("X")
        elif c.islower():
            out.append("x")
        elif c.isdigit():
            out.append("d")
        else:
            out.append(c)
    return "".join(out)


def _ref_shortshape(s):
    shape = _ref_shape(s)
    return "".join(c for i, c in enumerate(shape) if i == 0 or shape[i - 1] != c)


def _ref_transform(name, s):
    if name.startswith("prefix"):
        return s[:int(name[6:])]
    if name.startswith("suffix"):
        n = int(name[6:])
        return s[-n:]
    return {
        "lower": lambda: s.lower(), "upper": lambda: s.upper(),
        "shape": lambda: _ref_shape(s), "shortshape": lambda: _ref_shortshape(s),
        "len": lambda: str(len(s)), "isdigit": lambda: str(s.isdigit()),
        "isalpha": lambda: str(s.isalpha()), "istitle": lambda: str(s.istitle()),
        "isupper": lambda: str(s.isupper()), "islower": lambda: str(s.islower()),
        "hasdigit": lambda: str(bool(set(s) & set("0123456789"))),
        "hashyphen": lambda: str(s.find("-") >= 0),
    }[name]()


def reference_features(sentences, template, columns, boundary="drop"):
    """Per token, the list of feature strings (crfutils.apply_templates + BOS/EOS)."""
    items = parse_template(template, columns)
    out = []
    for sentence in sentences:
        n = len(sentence)
        for t in range(n):
            feats = []
            for item in items:
                if item.kind == 1:
                    if t == 0:
                        feats.append("__BOS__")
                    continue
                if item.kind == 2:
                    if t == n - 1:
                        feats.append("__EOS__")
                    continue
                if not item.atoms:
                    feats.append("bias")
                    continue
                values = []
                for atom in item.atoms:
                    p = t + atom.offset
                    if not 0 <= p < n:
                        if boundary == "drop":
                            values = None
                            break
                        values.append("__BOS__" if p < 0 else "__EOS__")
                        continue
                    token = sentence[p]
                    v = token if isinstance(token, str) else token[columns.index(atom.column)]
                    for tr in atom.transforms:
                        v = v if tr == "iftrue" else _ref_transform(tr, v)
                    if "iftrue" in atom.transforms and v != "True":
                        values = None              # a false boolean feature is absent
                        break
                    values.append(v)
                if values is not None:
                    feats.append("%s=%s" % (item.name, "|".join(values)))
            out.append(feats)
    return out


def row_names(X, names):
    return [set(names[X.indices[X.indptr[i]:X.indptr[i + 1]]]) for i in range(X.shape[0])]


def first_occurrence(feature_lists):
    seen = {}
    for feats in feature_lists:
        for f in feats:
            seen.setdefault(f, len(seen))
    return list(seen)


def check_canonical(X, n_rows, n_features):
    assert sp.isspmatrix_csr(X)
    assert X.shape == (n_rows, n_features)
    assert X.dtype == np.float64 and X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    for i in range(n_rows):
        row = X.indices[X.indptr[i]:X.indptr[i + 1]]
        assert np.all(np.diff(row) > 0), "row %d not strictly sorted" % i


# -- parsing ---------------------------------------------------------------------
def test_parse_template_names_and_nesting():
    items = parse_template("""
        w[0] w[+1]  # comment w[9]
        suffix3(lower(w[-1]))|pos[0] bias __BOS__ __EOS__
    """, columns=("w", "pos"))
    assert [it.name for it in items] == ["w[0]", "w[1]", "suffix3(lower(w[-1]))|pos[0]",
                                         "bias", "__BOS__", "__EOS__"]
    atom = items[2].atoms[0]
    assert (atom.column, atom.offset, atom.transforms) == ("w", -1, ("lower", "suffix3"))
    assert len(parse_template(CRFSUITE_CHUNKING)) == 21
    assert [it.name for it in parse_template(["w[0]", "pos[-1]|pos[0]"])] == \
        ["w[0]", "pos[-1]|pos[0]"]


@pytest.mark.parametrize("template, message", [
    ("w[0] pos[-1", r"'pos\[-1'.*line 1, column 6.*expected '\]'"),
    ("w[0]\n  w[x]", r"'w\[x\]'.*line 2, column 3.*integer offset"),
    ("foo(w[0])", r"unknown transform 'foo'"),
    ("prefix0(w[0])", r"unknown transform 'prefix0'"),
    ("w[0]|", r"expected a column name"),
    ("w[0] w[0]", r"repeats"),
    ("lem[0]", r"unknown column 'lem'"),
    ("", r"no items"),
    ("lower(w[0]", r"expected '\)'"),
])
def test_parse_template_errors(template, message):
    with pytest.raises(ValueError, match=message):
        parse_template(template, columns=("w", "pos"))


def test_transforms_match_reference():
    ft = FeatureTemplate("shape(w[0]) shortshape(w[0]) len(w[0]) hasdigit(w[0]) "
                         "hashyphen(w[0]) prefix2(w[0]) suffix9(w[0]) upper(w[0])",
                         columns=("w",))
    ft.fit([["Mr.3", "well-known", "ÉTÉ", "x"]])
    names = set(ft.get_feature_names_out())
    assert {"shape(w[0])=Xx.d", "shortshape(w[0])=Xx.d", "shape(w[0])=xxxx-xxxxx",
            "shortshape(w[0])=x-x", "shape(w[0])=XXX", "shortshape(w[0])=X", "len(w[0])=4",
            "hasdigit(w[0])=True", "hasdigit(w[0])=False", "hashyphen(w[0])=True",
            "prefix2(w[0])=Mr", "suffix9(w[0])=ell-known", "suffix9(w[0])=x",
            "upper(w[0])=MR.3"} <= names



def test_transforms_on_unicode_match_the_definitions():
    """The C-speed transforms (slices, groupby short shape, hasdigit via isalpha)
    equal their definitions on non-ASCII text; the transform of unseen words (the
    type cache path) equals a fresh fit's values."""
    import re
    from linclass.features import templates as tm
    words = ["x²", "٣٤", "ǅemal", "Ⅻ", "aaa--bb", "", "ÉTÉ99", "½", "日本語", "A1b2", "ß", "--"]
    for w in words:
        assert tm._TRANSFORMS["hasdigit"](w) == str(any(c.isdigit() for c in w))
        assert tm._TRANSFORMS["shortshape"](w) == re.sub(r"(.)\1+", r"\1",
                                                          tm._TRANSFORMS["shape"](w),
                                                          flags=re.DOTALL)
        for n in (1, 2, 4):
            assert tm._transform_function("prefix%d" % n)(w) == w[:n]
            assert tm._transform_function("suffix%d" % n)(w) == w[-n:]
        for name in ("isdigit", "isalpha", "istitle", "isupper", "islower"):
            assert tm._map_transform(name, [w]) == [str(getattr(w, name)())]
    ft = FeatureTemplate(POS_TEMPLATE, columns=("w",)).fit([["the", "cat"]])
    X, _ = ft.transform([words])
    ref = FeatureTemplate(POS_TEMPLATE, columns=("w",)).fit([["the", "cat"] + words])
    names = ft.get_feature_names_out()
    assert row_names(X, names) == [
        {f for f in r if f in set(names)}
        for r in row_names(*_fit_rows(ref, words))]


def _fit_rows(ft, words):
    X, _ = ft.transform([words])
    return X, ft.get_feature_names_out()


# -- equality with the reference ------------------------------------------------
@pytest.mark.parametrize("template, columns, boundary", [
    (CRFSUITE_CHUNKING, ("w", "pos"), "drop"),
    (CRFSUITE_CHUNKING, ("w", "pos"), "pad"),
    (CONLL2002_NER, ("w", "pos"), "drop"),
    (NER_TEMPLATE, ("w", "pos"), "drop"),
    (NER_WORD_TEMPLATE, ("w", "pos"), "pad"),
    ("bias w[-3]|pos[3] len(w[0])|isupper(w[1])|pos[-1]", ("w", "pos"), "pad"),
])
def test_matches_reference_on_random_sentences(template, columns, boundary):
    sentences = _random_sentences(60, seed=len(template) + len(boundary))
    ft = FeatureTemplate(template, columns, boundary=boundary)
    X, lengths = ft.fit_transform(sentences)
    ref = reference_features(sentences, template, list(columns), boundary)
    assert list(lengths) == [len(s) for s in sentences] and lengths.dtype == np.int64
    check_canonical(X, len(ref), ft.n_features_)
    names = ft.get_feature_names_out()
    assert list(names) == first_occurrence(ref)           # ids in first-occurrence order
    assert row_names(X, names) == [set(f) for f in ref]
    assert np.all(X.data == 1.0)
    assert ft.feature_counts_.sum() == sum(map(len, ref))


def test_pos_template_single_column_plain_string_tokens():
    sentences = [[w for w, _ in s] for s in _random_sentences(40, seed=3)]
    ft = FeatureTemplate(POS_TEMPLATE, columns=("w",))
    X, lengths = ft.fit_transform(sentences)
    ref = reference_features(sentences, POS_TEMPLATE, ["w"])
    names = ft.get_feature_names_out()
    assert list(names) == first_occurrence(ref)
    assert row_names(X, names) == [set(f) for f in ref]


def test_matches_reference_on_conll2000(conll2000):
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    X, lengths = ft.fit_transform(conll2000)
    ref = reference_features(conll2000, CRFSUITE_CHUNKING, ["w", "pos"])
    names = ft.get_feature_names_out()
    assert list(names) == first_occurrence(ref)
    assert row_names(X, names) == [set(f) for f in ref]
    # a middle token has the 19 template features; the first one loses the 9
    # reaching offset -1 or -2 and gains __BOS__
    assert X.getnnz(axis=1)[2] == 19 and X.getnnz(axis=1)[0] == 11


def test_bos_eos_behaviour():
    sentences = [["a", "b", "c"], ["z"]]
    ft = FeatureTemplate("w[-1] w[1] __BOS__ __EOS__", columns=("w",))
    X, _ = ft.fit_transform(sentences)
    rows = row_names(X, ft.get_feature_names_out())
    assert rows == [{"w[1]=b", "__BOS__"}, {"w[-1]=a", "w[1]=c"}, {"w[-1]=b", "__EOS__"},
                    {"__BOS__", "__EOS__"}]
    ft.set_params(boundary="pad")
    X, _ = ft.fit_transform(sentences)
    rows = row_names(X, ft.get_feature_names_out())
    assert rows[0] == {"w[-1]=__BOS__", "w[1]=b", "__BOS__"}
    assert rows[3] == {"w[-1]=__BOS__", "w[1]=__EOS__", "__BOS__", "__EOS__"}


def test_empty_sentences_give_zero_rows():
    ft = FeatureTemplate("w[0] w[-1]|w[0]", columns=("w",))
    X, lengths = ft.fit_transform([[], ["a", "b"], []])
    assert X.shape == (2, 3) and list(lengths) == [0, 2, 0]
    X, lengths = ft.transform([[], []])
    assert X.shape == (0, 3) and list(lengths) == [0, 0]
    X, lengths = ft.transform([])
    assert X.shape == (0, 3) and len(lengths) == 0


def test_transform_drops_unseen_features():
    train = _random_sentences(30, seed=11)
    test = _random_sentences(30, seed=12) + [[("zebra", "NN"), ("cat", "QQ")]]
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    ft.fit(train)
    vocab = set(ft.get_feature_names_out())
    X, lengths = ft.transform(test)
    ref = reference_features(test, CRFSUITE_CHUNKING, ["w", "pos"])
    check_canonical(X, len(ref), ft.n_features_)
    assert row_names(X, ft.get_feature_names_out()) == [set(f) & vocab for f in ref]
    last = row_names(X, ft.get_feature_names_out())[-1]
    assert {"w[0]=cat", "pos[-1]=NN", "__EOS__"} <= last
    assert not any("zebra" in f or "QQ" in f for f in last)
    # derived values of an unseen word still match: suffix of an unseen word
    ft2 = FeatureTemplate("suffix2(w[0])", columns=("w",)).fit([["cat"]])
    X2, _ = ft2.transform([["hat", "dog"]])
    assert X2.toarray().tolist() == [[1.0], [0.0]]


def test_min_count_prunes_and_renumbers():
    sentences = _random_sentences(80, seed=5)
    full = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    X_full, _ = full.fit_transform(sentences)
    pruned = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), min_count=3)
    X, _ = pruned.fit_transform(sentences)
    keep = np.flatnonzero(full.feature_counts_ >= 3)
    assert 0 < len(keep) < full.n_features_
    assert pruned.n_features_ == len(keep)
    assert list(pruned.get_feature_names_out()) == list(full.get_feature_names_out()[keep])
    assert np.array_equal(pruned.feature_counts_, full.feature_counts_[keep])
    assert (X != X_full[:, keep]).nnz == 0
    check_canonical(X, X_full.shape[0], len(keep))
    X_t, _ = pruned.transform(sentences)                # pruned features are dropped
    assert (X_t != X).nnz == 0


def test_hashing_mode():
    sentences = _random_sentences(50, seed=8)
    vocab = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos")).fit(sentences)
    X_vocab, _ = vocab.transform(sentences)
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_hash=2 ** 24)
    X, lengths = ft.fit_transform(sentences)
    check_canonical(X, X_vocab.shape[0], 2 ** 24)
    assert ft.n_features_ == 2 ** 24
    # no collision at this size: same number of features per token
    assert np.array_equal(X.getnnz(axis=1), X_vocab.getnnz(axis=1))
    # stateless: another fit gives the same matrix for the same sentences
    other = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_hash=2 ** 24)
    other.fit(_random_sentences(5, seed=99))
    assert (other.transform(sentences)[0] != X).nnz == 0
    # equal feature names <-> equal buckets (one feature per token)
    one = FeatureTemplate("w[0]", ("w", "pos"), n_hash=2 ** 20)
    Xw, _ = one.fit_transform(sentences)
    words = [w for s in sentences for w, _ in s]
    bucket = dict(zip(words, Xw.indices))
    assert all(bucket[w] == b for w, b in zip(words, Xw.indices))
    assert len(set(bucket.values())) == len(bucket)
    # tiny table: collisions are summed, the row sums count the features
    small = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_hash=7)
    Xs, _ = small.fit_transform(sentences)
    check_canonical(Xs, X_vocab.shape[0], 7)
    assert np.array_equal(np.asarray(Xs.sum(axis=1)).ravel(), X_vocab.getnnz(axis=1))
    with pytest.raises(ValueError, match="hashing mode"):
        small.get_feature_names_out()


# -- python-crfsuite input ----------------------------------------------------------
def _crfsuite_sentences():
    return [
        [{"bias": 1.0, "word.lower()": "the", "postag": "DT", "word.istitle()": True,
          "word.isupper()": False, "+1": {"word.lower()": "cat", "len": 3}},
         {"bias": 1.0, "word.lower()": "cat", "postag": "NN", "tags": ["a", "b"],
          "count": 2, "word.istitle()": False}],
        [],
        [["w=the", "pos=DT", "w=the"], ("w=dog",)],
    ]


def test_attribute_mode_matches_pycrfsuite():
    pycrfsuite = pytest.importorskip("pycrfsuite")
    sentences = _crfsuite_sentences()
    ft = FeatureTemplate(template=None)
    X, lengths = ft.fit_transform(sentences)
    assert list(lengths) == [2, 0, 2]
    names = ft.get_feature_names_out()
    rows = []
    for s in sentences:
        for item in pycrfsuite.ItemSequence(s).items():
            rows.append({k: v for k, v in item.items() if v != 0.0})
    check_canonical(X, 4, ft.n_features_)
    got = [{names[j]: X.data[p] for p, j in enumerate(X.indices) if X.indptr[i] <= p <
            X.indptr[i + 1]} for i in range(4)]
    assert got == rows
    assert list(names) == first_occurrence(rows)
    X2, _ = ft.transform([[{"postag": "DT", "unseen": "x", "count": 0.5}]])
    assert X2.shape == (1, ft.n_features_)
    assert {names[j]: v for j, v in zip(X2.indices, X2.data)} == {"postag:DT": 1.0,
                                                                  "count": 0.5}


def test_attribute_mode_min_count_and_hashing():
    sentences = _crfsuite_sentences()
    ft = FeatureTemplate(template=None, min_count=2)
    X, _ = ft.fit_transform(sentences)
    # only "bias" occurs twice ("w=the" repeats inside one token: counted once,
    # like python-crfsuite; weight-0 attributes are left out)
    assert list(ft.get_feature_names_out()) == ["bias"]
    assert list(ft.feature_counts_) == [2] and X.toarray().ravel().tolist() == [1, 1, 0, 0]
    hashed = FeatureTemplate(template=None, n_hash=2 ** 20)
    Xh, _ = hashed.fit_transform(sentences)
    full = FeatureTemplate(template=None)
    Xf, _ = full.fit_transform(sentences)
    assert np.array_equal(Xh.getnnz(axis=1), Xf.getnnz(axis=1))
    assert np.allclose(np.sort(Xh.data), np.sort(Xf.data))


# -- persistence ---------------------------------------------------------------------
@pytest.mark.parametrize("params", [
    dict(template=CRFSUITE_CHUNKING, columns=("w", "pos")),
    dict(template=CRFSUITE_CHUNKING, columns=("w", "pos"), min_count=2, boundary="pad"),
    dict(template=CRFSUITE_CHUNKING, columns=("w", "pos"), n_hash=1000),
    dict(template=None),
])
def test_save_load_and_pickle_round_trip(tmp_path, params):
    if params["template"] is None:
        train, test = _crfsuite_sentences(), _crfsuite_sentences()[::-1]
    else:
        train, test = _random_sentences(40, seed=1), _random_sentences(20, seed=2)
    ft = FeatureTemplate(**params)
    ft.fit(train)
    X, lengths = ft.transform(test)
    for loaded in (linclass.load(ft.save(tmp_path / "ft.npz")),
                   pickle.loads(pickle.dumps(ft))):
        assert type(loaded) is FeatureTemplate and loaded.get_params() == ft.get_params()
        assert loaded.n_features_ == ft.n_features_
        X2, lengths2 = loaded.transform(test)
        assert (X2 != X).nnz == 0 and np.array_equal(lengths, lengths2)
        if ft.n_hash is None:
            assert list(loaded.get_feature_names_out()) == list(ft.get_feature_names_out())


# -- bad input -----------------------------------------------------------------------
def test_bad_input_errors():
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    with pytest.raises(NotFittedError):
        ft.transform([[("a", "DT")]])
    with pytest.raises(ValueError, match=r"sentence 1, token 2 has 3 columns, expected 2"):
        ft.fit([[("a", "DT")], [("b", "NN"), ("c", "NN"), ("d", "NN", "B-NP")]])
    with pytest.raises(ValueError, match=r"sentence 0, token 1: column 'pos' must be a string"):
        ft.fit([[("a", "DT"), ("b", 3)]])
    with pytest.raises(ValueError, match=r"sentence 0, token 0 is a feature dict"):
        ft.fit([[{"w": "a"}]])
    with pytest.raises(ValueError, match=r"sentence 0, token 0 must be a tuple"):
        ft.fit([["ab"]])
    with pytest.raises(ValueError, match="at least one sentence"):
        ft.fit([])
    with pytest.raises(ValueError, match="sentence 1 must be a list of tokens"):
        ft.fit([[("a", "DT")], "abc"])
    with pytest.raises(ValueError, match="list of sentences"):
        ft.fit("a sentence")
    with pytest.raises(ValueError, match="unknown column 'pos'"):
        FeatureTemplate(CRFSUITE_CHUNKING, ("w",)).fit([["a"]])
    with pytest.raises(ValueError, match="boundary"):
        FeatureTemplate(boundary="none").fit([[("a", "DT")]])
    with pytest.raises(ValueError, match="cannot be combined with n_hash"):
        FeatureTemplate(n_hash=16, min_count=2).fit([[("a", "DT")]])
    with pytest.raises(ValueError, match="min_count"):
        FeatureTemplate(min_count=0).fit([[("a", "DT")]])
    with pytest.raises(ValueError, match=r"sentence 0, token 0: feature 'x' has the non-finite"):
        FeatureTemplate(template=None).fit([[{"x": float("nan")}]])
    with pytest.raises(ValueError, match=r"sentence 0, token 1 must be a dict"):
        FeatureTemplate(template=None).fit([[{"x": 1}, 5]])
    with pytest.raises(ValueError, match=r"sentence 0, token 0: column 'w' must be a string"):
        ft.fit([[(["a"], "DT")]])                      # unhashable value
    with pytest.raises(ValueError, match="n_jobs"):
        FeatureTemplate(n_jobs=0).fit([[("a", "DT")]])
    with pytest.raises(ValueError, match="n_jobs"):
        FeatureTemplate(n_jobs=1.5).fit([[("a", "DT")]])
    # the same transformer still works after errors
    X, _ = ft.fit_transform([[("a", "DT")]])
    assert X.shape[0] == 1


def test_get_params_and_clone():
    sklearn_base = pytest.importorskip("sklearn.base")
    ft = FeatureTemplate(POS_TEMPLATE, ("w",), min_count=2)
    clone = sklearn_base.clone(ft)
    assert clone.get_params() == ft.get_params()
    assert "min_count=2" in repr(ft)


def test_ner_templates_on_hand_made_tokens():
    assert named_template("ner", ("w",)) == NER_WORD_TEMPLATE
    assert named_template("ner", ("w", "pos")) == NER_TEMPLATE
    assert named_template("chunking", ("w", "pos")) == CRFSUITE_CHUNKING
    assert named_template("w[0]", ("w",)) is None
    sentence = [("Dr.", "NNP"), ("John", "NNP"), ("Smith-Jones", "NNP"), ("left", "VBD")]
    ft = FeatureTemplate(NER_TEMPLATE, columns=("w", "pos"))
    X, _ = ft.fit_transform([sentence])
    names = ft.get_feature_names_out()
    second = set(names[X.indices[X.indptr[1]:X.indptr[2]]])     # "John"
    assert {"w[0]=John", "lower(w[0])=john", "prefix4(w[0])=John", "suffix1(w[0])=n",
            "shape(w[0])=Xxxx", "shortshape(w[0])=Xx", "istitle(w[0])=True",
            "lower(w[-1])=dr.", "lower(w[1])=smith-jones", "lower(w[2])=left",
            "shortshape(w[-1])=Xx.", "shortshape(w[1])=Xx-Xx",
            "shortshape(w[-1])|shortshape(w[0])=Xx.|Xx",
            "shortshape(w[0])|shortshape(w[1])=Xx|Xx-Xx",
            "suffix3(lower(w[-1]))=dr.", "lower(w[0])|lower(w[1])=john|smith-jones",
            "pos[-1]|pos[0]=NNP|NNP", "pos[1]=NNP", "bias"} <= second
    assert not any(n.startswith(("lower(w[-2])", "__")) for n in second)
    first = set(names[X.indices[X.indptr[0]:X.indptr[1]]])
    assert "__BOS__" in first and not any("w[-1]" in n or "pos[-1]" in n for n in first)
    assert "hashyphen(w[0])=True" in set(names[X.indices[X.indptr[2]:X.indptr[3]]])
    # the words-only template refuses a pos atom, the words+pos one needs the column
    with pytest.raises(ValueError, match="unknown column 'pos'"):
        FeatureTemplate(NER_TEMPLATE, columns=("w",)).fit([["a"]])


@pytest.mark.parametrize("template", [CRFSUITE_CHUNKING, None])
def test_partial_fit_transform_grows_like_one_fit(template):
    """Fit on A then grow on B = one fit on A + B (names, ids, counts, rows)."""
    sentences = _random_sentences(50, seed=11)
    if template is None:
        sentences = [[["w=" + w, "p=" + p] for w, p in s] for s in sentences]
    a, b = sentences[:20], sentences[20:]
    if template is None:                           # attributes unseen in a
        b = [[tok + ["x=%d" % i] for tok in s] for i, s in enumerate(b)]
    grown = FeatureTemplate(template, ("w", "pos"))
    grown.fit(a)
    n_before = grown.n_features_
    Xb, lengths = grown.partial_fit_transform(b)
    once = FeatureTemplate(template, ("w", "pos"))
    X_all, _ = once.fit_transform(a + b)
    assert grown.n_features_ == once.n_features_ > n_before
    np.testing.assert_array_equal(grown.get_feature_names_out(), once.get_feature_names_out())
    np.testing.assert_array_equal(grown.feature_counts_, once.feature_counts_)
    rows = sum(map(len, a))
    assert (Xb != X_all[rows:]).nnz == 0 and list(lengths) == [len(s) for s in b]
    Xt, _ = grown.transform(b)                     # transform now knows the grown vocabulary
    assert (Xt != Xb).nnz == 0


def _same_csr(a, b):
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data))


@pytest.mark.parametrize("params", [{}, {"min_count": 2}, {"n_hash": 4099},
                                    {"boundary": "pad"}])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_threaded_template_pass_equals_one_thread(conll2000, params, n_jobs):
    """Sentence blocks in threads, private key tables merged in block order: the
    vocabulary, the ids and the matrices of fit, transform and partial_fit are
    those of n_jobs=1, bit for bit (hashing collisions summed the same way)."""
    train, test = conll2000[:3000], conll2000[3000:4000]
    one = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), **params)
    many = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_jobs=n_jobs, **params)
    X1, l1 = one.fit_transform(train)
    Xn, ln = many.fit_transform(train)
    assert _same_csr(X1, Xn) and np.array_equal(l1, ln)
    if "n_hash" not in params:
        np.testing.assert_array_equal(one.feature_keys_, many.feature_keys_)
        np.testing.assert_array_equal(one.feature_counts_, many.feature_counts_)
    assert _same_csr(one.transform(test)[0], many.transform(test)[0])
    # growing the vocabulary: block 0 inserts into the fitted table, the others merge
    assert _same_csr(one.partial_fit_transform(test)[0], many.partial_fit_transform(test)[0])
    if "n_hash" not in params:
        np.testing.assert_array_equal(one.feature_keys_, many.feature_keys_)


def test_threaded_template_pass_on_small_and_empty_inputs():
    sentences = _random_sentences(50, seed=5) * 100 + [[]] * 7       # > 2048 tokens
    ref = reference_features(sentences, NER_TEMPLATE, ["w", "pos"])
    ft = FeatureTemplate(NER_TEMPLATE, ("w", "pos"), n_jobs=4)
    X, lengths = ft.fit_transform(sentences)
    names = ft.get_feature_names_out()
    assert list(names) == first_occurrence(ref)
    assert row_names(X, names) == [set(f) for f in ref]
    X, lengths = ft.transform([[], []])
    assert X.shape == (0, ft.n_features_) and list(lengths) == [0, 0]


def test_iftrue_features_are_the_tutorial_dicts_of_python_crfsuite():
    """CONLL2002_NER gives, token by token, the attributes python-crfsuite makes of
    the sklearn-crfsuite tutorial's feature dicts (False booleans absent)."""
    sentences = _random_sentences(40, seed=21) + [[("Madrid", "NC"), ("EU", "NP"),
                                                   ("1998", "Z"), ("de", "SP")]]

    def tutorial(sent):                 # sklearn-crfsuite's CoNLL-2002 word2features
        out = []
        for i, (word, postag) in enumerate(sent):
            f = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:],
                 "word[-2:]": word[-2:], "word.isupper()": word.isupper(),
                 "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit(),
                 "postag": postag, "postag[:2]": postag[:2]}
            for o, name in ((-1, "-1:"), (1, "+1:")):
                if 0 <= i + o < len(sent):
                    w1, p1 = sent[i + o]
                    f.update({name + "word.lower()": w1.lower(),
                              name + "word.istitle()": w1.istitle(),
                              name + "word.isupper()": w1.isupper(), name + "postag": p1,
                              name + "postag[:2]": p1[:2]})
            f["BOS" if i == 0 else "x"] = i == 0
            f["EOS" if i == len(sent) - 1 else "y"] = i == len(sent) - 1
            out.append(f)
        return out
    attr = FeatureTemplate(template=None).fit([tutorial(s) for s in sentences])
    Xa, _ = attr.transform([tutorial(s) for s in sentences])
    ft = FeatureTemplate(CONLL2002_NER, ("w", "pos"))
    X, _ = ft.fit_transform(sentences)
    assert np.array_equal(X.getnnz(axis=1), Xa.getnnz(axis=1))
    assert X.nnz == Xa.nnz and X.shape[1] == Xa.shape[1]
    names = ft.get_feature_names_out()
    assert "iftrue(istitle(w[0]))=True" in set(names)
    assert not any(n.endswith("=False") for n in names)
    # unseen words in transform (the type cache path) follow the same rule
    X2, _ = ft.transform([[("Lyon", "NC"), ("lyon", "NC")]])
    rows = row_names(X2, names)
    assert "iftrue(istitle(w[0]))=True" in rows[0] and "iftrue(istitle(w[0]))=True" not in rows[1]
    with pytest.raises(ValueError, match="outermost"):
        FeatureTemplate("upper(iftrue(istitle(w[0])))", ("w",)).fit([["a"]])


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_count_ids_equals_bincount(n_jobs):
    from linclass._core import _features
    rng = np.random.default_rng(n_jobs)
    ids = rng.integers(0, 1000, 600000).astype(np.int32)      # > 2 blocks of 262144
    counts = _features.count_ids(ids, 1003, n_jobs)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, np.bincount(ids, minlength=1003))
    np.testing.assert_array_equal(_features.count_ids(ids[:0], 4), np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="outside"):
        _features.count_ids(np.array([0, 4], np.int32), 4)


def test_c_shapes_and_hasdigit_equal_the_python_transforms():
    from linclass._core import _features
    from linclass.features.templates import _hasdigit, _shape, _shortshape
    words = ["", "a", "Mr.3", "McDonald's", "U.S.A.", "ǅemal", "x²", "٣٤", "Straße",
             "ÀÉÎõü-42", "日本語テキスト", "🙂ok🙂", "ΑΒΓ αβγ", "aaaBBB111---", "x" * 200 + "Y9",
             "tab\there", "ﬁ", "Ⅻ", "⅓", "İstanbul"]
    assert _features.shapes(words) == [_shape(w) for w in words]
    assert _features.shapes(words, True) == [_shortshape(w) for w in words]
    assert _features.has_digit(words) == [_hasdigit(w) for w in words]
    with pytest.raises(TypeError, match="str"):
        _features.shapes(["a", 3])
    with pytest.raises(TypeError, match="str"):
        _features.has_digit([b"a"])


@pytest.mark.parametrize("params", [{}, {"min_count": 2}, {"boundary": "pad"}])
@pytest.mark.parametrize("n_jobs", [2, 3, 64])
def test_template_parallel_fit_equals_one_thread(params, n_jobs):
    """The fit pass with n_jobs > 1 deals the templates to the threads (private
    tables, keys numbered in the one-thread order, the fitted table assembled
    from their parts): vocabulary, ids, counts and matrix are those of n_jobs=1,
    and the assembled table serves transform and partial_fit (n_jobs=64: more
    threads than templates)."""
    train = _random_sentences(3000, seed=31) + [[]] * 3
    test = _random_sentences(300, seed=32) + [[("Zebra", "NNP"), ("quux", "VB")]]
    for template in (CRFSUITE_CHUNKING, NER_TEMPLATE, CONLL2002_NER):
        one = FeatureTemplate(template, ("w", "pos"), **params)
        many = FeatureTemplate(template, ("w", "pos"), n_jobs=n_jobs, **params)
        X1, l1 = one.fit_transform(train)
        Xn, ln = many.fit_transform(train)
        assert X1.shape[0] > 4096                     # several threads do run
        assert _same_csr(X1, Xn) and np.array_equal(l1, ln)
        np.testing.assert_array_equal(one.feature_keys_, many.feature_keys_)
        np.testing.assert_array_equal(one.feature_counts_, many.feature_counts_)
        assert _same_csr(one.transform(test)[0], many.transform(test)[0])
        assert _same_csr(one.partial_fit_transform(test)[0],
                         many.partial_fit_transform(test)[0])
        np.testing.assert_array_equal(one.feature_keys_, many.feature_keys_)
        assert _same_csr(one.transform(train)[0], many.transform(train)[0])


@pytest.mark.parametrize("n_jobs", [2, 3, 5])
def test_threaded_fit_with_late_keys_equals_one_thread(n_jobs):
    """The template-parallel fit on a corpus large enough for every thread,
    with the keys of a tag first seen late in the corpus and tokens with no
    feature of some templates: the one-thread matrix and keys, bit for bit
    (synthetic corpus, no data needed)."""
    rng = np.random.default_rng(3)
    words = ["w%d" % i for i in range(3000)]
    tags = ["T%d" % i for i in range(12)]
    train = []
    for s in range(900):
        n = int(rng.integers(1, 25))
        # a tag that only shows up late in the corpus: its keys start late
        tag_pool = tags + (["LATE"] if s > 700 else [])
        train.append([(words[int(rng.zipf(1.3)) % 3000],
                       tag_pool[int(rng.integers(len(tag_pool)))]) for _ in range(n)])
    one = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    many = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_jobs=n_jobs)
    X1, l1 = one.fit_transform(train)
    Xn, ln = many.fit_transform(train)
    assert X1.shape[0] > 2048 * n_jobs                # every thread gets a block
    assert _same_csr(X1, Xn) and np.array_equal(l1, ln)
    np.testing.assert_array_equal(one.feature_keys_, many.feature_keys_)
    np.testing.assert_array_equal(one.feature_counts_, many.feature_counts_)
    test = train[::7]
    assert _same_csr(one.transform(test)[0], many.transform(test)[0])



def _same_type_ids(a, b):
    """Two (dicts, ids) results of the column pass are equal: the dicts' items
    in order (first-occurrence order), the id arrays bit for bit."""
    return (len(a[0]) == len(b[0])
            and all(list(x.items()) == list(y.items()) for x, y in zip(a[0], b[0]))
            and a[1].dtype == b[1].dtype and np.array_equal(a[1], b[1]))


@pytest.mark.parametrize("n_jobs", [1, 2, 3, 7])
def test_threaded_column_pass_equals_the_dict_pass(n_jobs):
    """column_type_ids_threaded (token blocks interned without the GIL into
    private string tables, renumbered in block order) gives the dicts and ids
    of the one-thread dict pass: strings of every PEP 393 kind and of every
    length around the hash's 8-byte words, values first seen late in the
    corpus, more distinct values than the tables' first capacity; plain str
    tokens of one column (the labels); other tokens are left to the dict pass
    (None)."""
    from linclass._core import _features
    rng = np.random.default_rng(n_jobs)
    pool = (["w%d" % i for i in range(20000)] + ["x" * k for k in range(1, 40)]
            + ["é", "Straße", "日本語", "日本語テキスト", "🙂", "🙂ok🙂", "a\x00b", "", "İ"])
    tokens = []
    for i in range(60000):
        w = pool[int(rng.zipf(1.2)) % len(pool)] if i < 50000 else "late%d" % (i % 977)
        # equal strings as distinct objects (no identity shortcut)
        tokens.append(("".join(list(w)), "T%d" % int(rng.integers(0, 45)), w[:3]))
    for used in ([0, 1], [1], [2, 0, 1]):
        ref = _features.column_type_ids(tokens, 3, used)
        got = _features.column_type_ids_threaded(tokens, 3, used, n_jobs)
        assert _same_type_ids(ref, got)
    labels = [t[1] for t in tokens]
    assert _same_type_ids(_features.column_type_ids(labels, 1, [0]),
                          _features.column_type_ids_threaded(labels, 1, [0], n_jobs))
    one_column = [(t[0],) for t in tokens]
    assert _same_type_ids(_features.column_type_ids(one_column, 1, [0]),
                          _features.column_type_ids_threaded(one_column, 1, [0], n_jobs))

    class Word(str):
        pass
    late = 59000                                # in the last block of every n_jobs
    for bad in ([list(t) for t in tokens],       # lists, not tuples
                tokens[:late] + [("a", "b")] + tokens[late + 1:],      # 2 columns, not 3
                tokens[:late] + [("a", 3, "c")] + tokens[late + 1:],   # a non-str value
                tokens[:late] + [(Word("a"), "b", "c")] + tokens[late + 1:]):
        assert _features.column_type_ids_threaded(bad, 3, [0, 1], n_jobs) is None
    assert _features.column_type_ids_threaded(labels[:late] + [7] + labels[late + 1:], 1,
                                              [0], n_jobs) is None
    assert _features.column_type_ids_threaded([], 1, [0], n_jobs) is None
    with pytest.raises(ValueError, match="column 3 out of range"):
        _features.column_type_ids_threaded(tokens, 3, [3], n_jobs)
    with pytest.raises(ValueError, match="n_jobs"):
        _features.column_type_ids_threaded(tokens, 3, [0], 0)


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_threaded_fit_with_str_subclasses_and_lists_equals_one_thread(n_jobs):
    """Tokens the threaded column pass leaves to the dict pass (a str subclass,
    list tokens) give the features of n_jobs=1, and bad tokens the same
    errors."""
    class Word(str):
        pass
    train = _random_sentences(3500, seed=5)
    assert sum(map(len, train)) > 4096 * n_jobs       # every thread gets a block
    variants = ([s[:] for s in train[:-1]] + [[(Word(w), p) for w, p in train[-1]]],
                [[list(t) for t in s] for s in train])
    for sentences in variants:
        X1, l1 = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos")).fit_transform(sentences)
        Xn, ln = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"),
                                 n_jobs=n_jobs).fit_transform(sentences)
        assert _same_csr(X1, Xn) and np.array_equal(l1, ln)
    bad = train[:3200] + [[("a", "DT"), ("b", 3)]] + train[3201:]
    for n in (1, n_jobs):
        with pytest.raises(ValueError, match=r"sentence 3200, token 1: column 'pos' must be"):
            FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_jobs=n).fit(bad)


def test_key_table_adopt_parts_checks_its_input():
    from linclass._core import _features
    table = _features.KeyTable(3, 2)
    table.add_keys(np.array([[0, 1, 2]], dtype=np.int64))
    parts = [_features.KeyTable(3, 2), _features.KeyTable(3, 2)]
    owner = np.array([0, 1], dtype=np.int32)
    offset = np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="empty table"):
        table._adopt_parts(parts, owner, np.zeros(0, np.int32), offset)
    with pytest.raises(ValueError, match="owner"):
        _features.KeyTable(3, 2)._adopt_parts(parts, np.array([0, 2], np.int32),
                                              np.zeros(0, np.int32), offset)
    with pytest.raises(ValueError, match="layouts"):
        _features.KeyTable(3, 2)._adopt_parts([_features.KeyTable(2, 2)] * 2, owner,
                                              np.zeros(0, np.int32), offset)


@pytest.mark.parametrize("params", [{}, {"min_count": 2}, {"n_hash": 257},
                                    {"boundary": "pad"}])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_template_matrices_are_canonical(params, n_jobs):
    """The tagger skips check_array for the template pass's own matrices: they
    must be canonical CSR (int32 indices strictly increasing in every row and
    in range, float64 contiguous data, positive finite counts) in fit,
    transform and partial_fit."""
    train = _random_sentences(2500, seed=41)
    test = _random_sentences(200, seed=42) + [[("Zebra", "NNP")], []]
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_jobs=n_jobs, **params)
    for step in (lambda: ft.fit_transform(train), lambda: ft.transform(test),
                 lambda: ft.partial_fit_transform(test)):
        X, _ = step()
        assert type(X) is sp.csr_matrix and X.shape[1] == ft.n_features_
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        assert X.data.dtype == np.float64
        assert X.data.flags.c_contiguous and X.indices.flags.c_contiguous
        assert X.indptr[0] == 0 and X.indptr[-1] == X.nnz == len(X.indices) == len(X.data)
        assert np.all(np.diff(X.indptr) >= 0)
        assert X.nnz == 0 or (X.indices.min() >= 0 and X.indices.max() < X.shape[1])
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        same_row = rows[1:] == rows[:-1]
        assert np.all(np.diff(X.indices.astype(np.int64))[same_row] > 0)
        assert np.all(np.isfinite(X.data)) and np.all(X.data >= 1)
