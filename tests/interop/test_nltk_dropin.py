"""#39 item 2: linclass.interop's MaxentClassifier, NaiveBayesClassifier and
NLTKParser are NLTK's classes with one import changed; compared with NLTK on
the same data (NLTK's own doctests, names-gender style data, CoNLL-2000 tokens,
Penn Treebank sample trees)."""
import contextlib
import gzip
import io
import pickle
import random
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

nltk = pytest.importorskip("nltk")

from nltk.classify import maxent as nltk_maxent  # noqa: E402

from linclass.interop import (MaxentClassifier, NaiveBayesClassifier,  # noqa: E402
                              NLTKParser, treebank_tree)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
CONLL = DATA / "conll2000_chunking" / "train.txt.gz"
PTB = DATA / "ptb_wsj_sample"


def _printed(function, *args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = function(*args, **kwargs)
    return out.getvalue(), result


def _names(n, seed, drop=0.0):
    """Names-gender featuresets (NLTK book ch. 6, ``gender_features``): the
    last letter decides mostly; with ``drop`` some featuresets lack a feature."""
    rng = random.Random(seed)
    data = []
    for _ in range(n):
        label = rng.choice(["female", "male"])
        last = rng.choice("aei" if label == "female" else "dknors")
        if rng.random() < 0.1:
            last = rng.choice("aeidknors")
        fs = {"last_letter": last, "length": rng.randint(3, 9),
              "first_letter": rng.choice("abcdefgh")}
        if rng.random() < drop:
            del fs["first_letter"]
        data.append((fs, label))
    return data


def _chunk_tokens(n):
    """CoNLL-2000 tokens as featuresets -> B/I/O (the chunk tag's prefix)."""
    if not CONLL.exists():
        pytest.skip("CoNLL-2000 data not found at %s" % CONLL)
    rows, prev = [], "<s>"
    with gzip.open(CONLL, "rt") as f:
        for line in f:
            parts = line.split()
            if not parts:
                prev = "<s>"
                continue
            word, pos, chunk = parts
            rows.append(({"word": word.lower(), "pos": pos, "prev_pos": prev,
                          "suffix": word[-2:]}, chunk[0]))
            prev = pos
            if len(rows) >= n:
                break
    return rows


# NLTK's classify.doctest ("Regression Tests"), import changed only
DOCTEST_TRAIN = [
    (dict(a=1, b=1, c=1), "y"), (dict(a=1, b=1, c=1), "x"), (dict(a=1, b=1, c=0), "y"),
    (dict(a=0, b=1, c=1), "x"), (dict(a=0, b=1, c=1), "y"), (dict(a=0, b=0, c=1), "y"),
    (dict(a=0, b=1, c=0), "x"), (dict(a=0, b=0, c=0), "x"), (dict(a=0, b=1, c=1), "y"),
    (dict(a=None, b=1, c=0), "x")]
DOCTEST_TEST = [dict(a=1, b=0, c=1), dict(a=1, b=0, c=0), dict(a=0, b=1, c=1),
                dict(a=0, b=1, c=0)]


def _run_ok(code):
    """Run ``code`` in a fresh interpreter; it must print ok."""
    # cwd outside the source tree: an unbuilt checkout would shadow the installed package
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_import_linclass_does_not_import_nltk():
    code = ("import sys, linclass, linclass.interop, linclass.interop.nltk\n"
            "from linclass.interop import NLTKClassifier, to_nltk_tree\n"
            "assert 'nltk' not in sys.modules, 'nltk imported'\n"
            "from linclass.interop import MaxentClassifier\n"
            "import nltk.classify.api as api\n"
            "assert issubclass(MaxentClassifier, api.ClassifierI)\n"
            "print('ok')\n")
    _run_ok(code)


def test_classifiers_work_without_nltk():
    code = ("import sys\n"
            "sys.modules['nltk'] = None            # import nltk fails\n"
            "from linclass.interop import MaxentClassifier, NaiveBayesClassifier\n"
            "data = [({'a': 1, 'b': 'x'}, 'p'), ({'a': 2, 'b': 'y'}, 'q')] * 3\n"
            "nb = NaiveBayesClassifier.train(data)\n"
            "me = MaxentClassifier.train(data, 'GIS', trace=0, max_iter=5)\n"
            "assert nb.classify({'a': 1}) == me.classify({'a': 1}) == 'p'\n"
            "assert abs(sum(nb.prob_classify({'b': 'y'}).prob(l) for l in 'pq') - 1) < 1e-12\n"
            "print('ok')\n")
    _run_ok(code)


def test_classes_are_nltk_classifiers_and_keep_nltk_signatures():
    import inspect
    for ours, theirs in ((MaxentClassifier, nltk.MaxentClassifier),
                         (NaiveBayesClassifier, nltk.NaiveBayesClassifier)):
        assert issubclass(ours, nltk.classify.api.ClassifierI)
        assert inspect.signature(ours.train) == inspect.signature(theirs.train)
    assert issubclass(NLTKParser, nltk.parse.api.ParserI)
    import linclass.interop as interop
    assert interop.MaxentClassifier is MaxentClassifier


def test_naive_bayes_doctest():
    classifier = NaiveBayesClassifier.train(DOCTEST_TRAIN)
    assert sorted(classifier.labels()) == ["x", "y"]
    assert classifier.classify_many(DOCTEST_TEST) == ["y", "x", "y", "x"]
    probs = ["%.4f %.4f" % (d.prob("x"), d.prob("y"))
             for d in classifier.prob_classify_many(DOCTEST_TEST)]
    assert probs == ["0.2500 0.7500", "0.5833 0.4167", "0.3571 0.6429", "0.7000 0.3000"]
    text, _ = _printed(classifier.show_most_informative_features)
    assert text == (
        "Most Informative Features\n"
        "                       c = 0                   x : y      =      2.3 : 1.0\n"
        "                       c = 1                   y : x      =      1.8 : 1.0\n"
        "                       a = 1                   y : x      =      1.7 : 1.0\n"
        "                       a = 0                   x : y      =      1.0 : 1.0\n"
        "                       b = 0                   x : y      =      1.0 : 1.0\n"
        "                       b = 1                   x : y      =      1.0 : 1.0\n")


@pytest.mark.parametrize("algorithm", ["GIS", "IIS"])
def test_maxent_doctest(algorithm):
    classifier = MaxentClassifier.train(DOCTEST_TRAIN, algorithm, trace=0, max_iter=1000)
    row = " ".join("%8.2f%6.2f" % (d.prob("x"), d.prob("y"))
                   for d in classifier.prob_classify_many(DOCTEST_TEST))
    assert row == "    0.16  0.84     0.46  0.54     0.41  0.59     0.76  0.24"


def test_maxent_typed_encoding_doctest():
    train = [({"a": 1, "b": 1, "c": 1}, "y"), ({"a": 5, "b": 5, "c": 5}, "x"),
             ({"a": 0.9, "b": 0.9, "c": 0.9}, "y"), ({"a": 5.5, "b": 5.4, "c": 5.3}, "x"),
             ({"a": 0.8, "b": 1.2, "c": 1}, "y"), ({"a": 5.1, "b": 4.9, "c": 5.2}, "x")]
    test = [{"a": 1, "b": 0.8, "c": 1.2}, {"a": 5.2, "b": 5.1, "c": 5}]
    encoding = nltk_maxent.TypedMaxentFeatureEncoding.train(
        train, count_cutoff=3, alwayson_features=True)
    ours = MaxentClassifier.train(train, bernoulli=False, encoding=encoding, trace=0)
    theirs = nltk.MaxentClassifier.train(train, bernoulli=False, encoding=encoding, trace=0)
    assert ours.classify_many(test) == ["y", "x"]
    np.testing.assert_allclose(ours.weights(), theirs.weights(), atol=1e-9)
    gis = nltk_maxent.GISEncoding.train(train)
    ours = MaxentClassifier.train(train, "gis", encoding=gis, trace=0, max_iter=20)
    theirs = nltk.MaxentClassifier.train(train, "gis", encoding=gis, trace=0, max_iter=20)
    np.testing.assert_allclose(ours.weights(), theirs.weights(), atol=1e-9)


def test_naive_bayes_equals_nltk():
    train, test = _names(400, 0, drop=0.2), _names(150, 1, drop=0.2)
    test = [fs for fs, _ in test] + [{"length": 99, "unknown": 1}, {}, {"last_letter": "q"}]
    ours, theirs = NaiveBayesClassifier.train(train), nltk.NaiveBayesClassifier.train(train)
    assert ours.labels() == theirs.labels()
    for a, b in zip(ours.prob_classify_many(test), theirs.prob_classify_many(test)):
        for label in theirs.labels():
            assert abs(a.prob(label) - b.prob(label)) <= 1e-12
    assert ours.classify_many(test) == theirs.classify_many(test)
    assert ours.most_informative_features(100) == theirs.most_informative_features(100)
    assert _printed(ours.show_most_informative_features, 25)[0] == \
        _printed(theirs.show_most_informative_features, 25)[0]
    assert nltk.classify.accuracy(ours, train) == nltk.classify.accuracy(theirs, train)


@pytest.mark.parametrize("estimator", ["LaplaceProbDist", "MLEProbDist", "Lidstone0.1"])
def test_naive_bayes_other_estimators_equal_nltk(estimator):
    if estimator == "Lidstone0.1":
        def estimator(freqdist, bins=None):
            return nltk.LidstoneProbDist(freqdist, 0.1, bins)
    else:
        estimator = getattr(nltk.probability, estimator)
    train, test = _names(200, 2, drop=0.3), [fs for fs, _ in _names(60, 3)]
    ours = NaiveBayesClassifier.train(train, estimator)
    theirs = nltk.NaiveBayesClassifier.train(train, estimator)
    for a, b in zip(ours.prob_classify_many(test), theirs.prob_classify_many(test)):
        for label in theirs.labels():
            assert abs(a.prob(label) - b.prob(label)) <= 1e-12
    assert _printed(ours.show_most_informative_features, 10)[0] == \
        _printed(theirs.show_most_informative_features, 10)[0]


@pytest.mark.parametrize("algorithm", ["GIS", "iis"])
def test_maxent_equals_nltk_on_names(algorithm):
    train, test = _names(300, 4), _names(150, 5)
    ours_trace, ours = _printed(MaxentClassifier.train, train, algorithm, max_iter=10)
    theirs_trace, theirs = _printed(nltk.MaxentClassifier.train, train, algorithm, max_iter=10)
    assert ours_trace == theirs_trace                           # trace=3: NLTK's table
    assert "Log Likelihood" in ours_trace and "Final" in ours_trace
    np.testing.assert_allclose(ours.weights(), theirs.weights(), rtol=0, atol=1e-8)
    acc, acc_ref = nltk.classify.accuracy(ours, test), nltk.classify.accuracy(theirs, test)
    assert abs(acc - acc_ref) <= 0.01, (acc, acc_ref)
    assert ours.labels() == theirs.labels()
    assert ours.most_informative_features(20) == theirs.most_informative_features(20)
    for show in ("all", "pos", "neg"):
        assert _printed(ours.show_most_informative_features, 12, show)[0] == \
            _printed(theirs.show_most_informative_features, 12, show)[0]
    assert _printed(ours.explain, test[0][0])[0] == _printed(theirs.explain, test[0][0])[0]
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("algorithm", ["GIS", "IIS"])
def test_maxent_within_a_point_of_nltk_on_conll2000(algorithm):
    data = _chunk_tokens(2400)
    train, test = data[:1600], data[1600:]
    ours = MaxentClassifier.train(train, algorithm, trace=0, max_iter=8)
    theirs = nltk.MaxentClassifier.train(train, algorithm, trace=0, max_iter=8)
    acc, acc_ref = nltk.classify.accuracy(ours, test), nltk.classify.accuracy(theirs, test)
    assert abs(acc - acc_ref) <= 0.01, (acc, acc_ref)
    assert acc > 0.8
    np.testing.assert_allclose(ours.weights(), theirs.weights(), rtol=0, atol=1e-6)
    assert _printed(ours.show_most_informative_features, 10)[0] == \
        _printed(theirs.show_most_informative_features, 10)[0]


def test_naive_bayes_equals_nltk_on_conll2000():
    data = _chunk_tokens(2400)
    train, test = data[:1600], [fs for fs, _ in data[1600:]]
    ours, theirs = NaiveBayesClassifier.train(train), nltk.NaiveBayesClassifier.train(train)
    worst = max(abs(a.prob(label) - b.prob(label))
                for a, b in zip(ours.prob_classify_many(test), theirs.prob_classify_many(test))
                for label in theirs.labels())
    assert worst <= 1e-12
    assert _printed(ours.show_most_informative_features, 20)[0] == \
        _printed(theirs.show_most_informative_features, 20)[0]


def test_maxent_cutoffs_and_labels_as_nltk():
    train = _names(200, 6)
    kwargs = dict(trace=3, max_iter=50, min_lldelta=0.01)
    ours_trace, ours = _printed(MaxentClassifier.train, train, "GIS", **kwargs)
    theirs_trace, theirs = _printed(nltk.MaxentClassifier.train, train, "GIS", **kwargs)
    assert ours_trace == theirs_trace               # stops at the same iteration
    assert ours_trace.count("\n") < 50
    for algorithm in ("GIS", "IIS"):                # a label never seen in training
        labels = ["female", "male", "unknown"]
        ours = MaxentClassifier.train(train, algorithm, trace=0, labels=labels, max_iter=5)
        theirs = nltk.MaxentClassifier.train(train, algorithm, trace=0, labels=labels,
                                             max_iter=5)
        fs = train[0][0]
        for label in labels:
            assert abs(ours.prob_classify(fs).prob(label)
                       - theirs.prob_classify(fs).prob(label)) < 1e-9
    assert _printed(MaxentClassifier.train, train, "gis", trace=0, max_iter=3)[0] == ""
    text = _printed(MaxentClassifier.train, train, "gis", trace=1, max_iter=3)[0]
    assert text == "  ==> Training (3 iterations)\n"


def test_maxent_weights_set_weights_and_errors():
    train, test = _names(200, 7), [fs for fs, _ in _names(50, 8)]
    theirs = nltk.MaxentClassifier.train(train, "GIS", trace=0, max_iter=5)
    ours = MaxentClassifier.train(train, "Gis", trace=0, max_iter=2)
    ours.set_weights(theirs.weights())              # NLTK's weights drive our model
    for a, b in zip(ours.prob_classify_many(test), theirs.prob_classify_many(test)):
        assert abs(a.prob("male") - b.prob("male")) < 1e-12
    np.testing.assert_array_equal(ours.weights(), theirs.weights())
    weights = ours.weights()                         # NLTK's idiom: change in place
    weights += 1.0
    ours.set_weights(weights)
    theirs_weights = theirs.weights()
    theirs_weights += 1.0
    theirs.set_weights(theirs_weights)
    assert abs(ours.prob_classify(test[0]).prob("male")
               - theirs.prob_classify(test[0]).prob("male")) < 1e-12
    ours.weights()[:] = 0.0                          # the array is the model's, as in NLTK
    assert ours.prob_classify(test[0]).prob("male") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="weights"):
        ours.set_weights([0.0, 1.0])
    for name in ("MEGAM", "tadm"):
        with pytest.raises(ValueError, match="external"):
            MaxentClassifier.train(train, name, trace=0)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        MaxentClassifier.train(train, "lbfgs-ish", trace=0)
    with pytest.raises(TypeError, match="Unexpected keyword"):
        MaxentClassifier.train(train, "GIS", trace=0, max_iters=3)
    with pytest.raises(TypeError, match="encoding that defines C"):
        MaxentClassifier.train(train, "GIS", trace=0,
                               encoding=nltk_maxent.BinaryMaxentFeatureEncoding.train(train))
    with pytest.raises(ValueError, match="Unexpected label"):
        MaxentClassifier.train(train, trace=0, labels=["female"])
    with pytest.raises(ValueError, match="at least one"):
        NaiveBayesClassifier.train([])
    with pytest.raises(TypeError, match="pair"):
        NaiveBayesClassifier.train([{"a": 1}])


def test_classifiers_pickle():
    train, test = _names(120, 9), [fs for fs, _ in _names(30, 10)]
    for classifier in (MaxentClassifier.train(train, "IIS", trace=0, max_iter=4),
                       NaiveBayesClassifier.train(train)):
        again = pickle.loads(pickle.dumps(classifier))
        assert again.classify_many(test) == classifier.classify_many(test)


# ------------------------------------------------------------------ parsing --

TRACED = [
    "( (S (NP-SBJ-1 (DT The) (NN board)) (VP (VBD was) (VP (VBN named) (NP (-NONE- *-1)) "
    "(PP-CLR (IN by) (NP (DT the) (NN chairman))))) (. .)) )",
    "( (S (NP-SBJ (DT The) (NN chairman)) (VP (VBD named) (NP (DT the) (NN board)) "
    "(SBAR (-NONE- 0) (S (-NONE- *T*-2)))) (. .)) )",
    "(S (NP-SBJ (NNS Directors)) (VP (VBD joined) (NP (DT the) (NN board))) (. .))",
    "(S (NP-SBJ (DT The) (NN board)) (VP (VBD joined) (NP (DT the) (NN chairman))) (. .))",
]


def test_treebank_tree_removes_traces_and_function_tags():
    tree = treebank_tree(nltk.Tree.fromstring(TRACED[1]))
    assert str(tree) == "(S (NP (DT The) (NN chairman)) (VP (VBD named) (NP (DT the) " \
                        "(NN board))) (. .))"
    with pytest.raises(ValueError, match="only empty"):
        treebank_tree(nltk.Tree.fromstring("(S (-NONE- *))"))


def test_parser_takes_and_returns_nltk_trees():
    trees = [nltk.Tree.fromstring(s) for s in TRACED]
    parser = NLTKParser().fit(trees)
    parsed = parser.predict(trees)                   # the trees' words, traces removed
    assert all(isinstance(t, nltk.Tree) for t in parsed)
    assert parsed[0].label() == "S"
    assert parsed[0].leaves() == ["The", "board", "was", "named", "by", "the", "chairman", "."]
    assert "-NONE-" not in str(parsed[1]) and "NP-SBJ" not in str(parsed[1])
    assert parser.score(trees, trees) == pytest.approx(1.0)
    best = parser.parse_one("The board joined the chairman .".split())
    assert isinstance(best, nltk.Tree) and best.label() == "S"
    assert list(parser.parse("The board joined the chairman .".split())) == [best]
    assert best.prob() > 0                           # a ProbabilisticTree, as ViterbiParser
    assert isinstance(parser.grammar(), nltk.PCFG)
    with pytest.raises(TypeError, match="list of words"):
        parser.predict(["The board joined"])


def test_viterbi_parser_doctest():
    """NLTK's parse.doctest (ViterbiParser with toy_pcfg2), the grammar read by
    linclass's PCFG and parsed behind NLTKParser."""
    from linclass.parsing import PCFG
    text = """
        S    -> NP VP         [1.0]
        VP   -> V NP          [.59]
        VP   -> V             [.40]
        VP   -> VP PP         [.01]
        NP   -> Det N         [.41]
        NP   -> Name          [.28]
        NP   -> NP PP         [.31]
        PP   -> P NP          [1.0]
        V    -> 'saw'         [.21]
        V    -> 'ate'         [.51]
        V    -> 'ran'         [.28]
        N    -> 'boy'         [.11]
        N    -> 'cookie'      [.12]
        N    -> 'table'       [.13]
        N    -> 'telescope'   [.14]
        N    -> 'hill'        [.5]
        Name -> 'Jack'        [.52]
        Name -> 'Bob'         [.48]
        P    -> 'with'        [.61]
        P    -> 'under'       [.39]
        Det  -> 'the'         [.41]
        Det  -> 'a'           [.31]
        Det  -> 'my'          [.28]
        """
    parser = NLTKParser(PCFG.from_string(text))
    tokens = "Jack saw Bob with my cookie".split()
    printed = [str(t) for t in parser.parse(tokens)]
    assert printed == ["""(S
  (NP (Name Jack))
  (VP
    (V saw)
    (NP
      (NP (Name Bob))
      (PP (P with) (NP (Det my) (N cookie)))))) (p=6.31607e-06)"""]
    reference = nltk.ViterbiParser(nltk.PCFG.fromstring(text))
    for sentence, ties in (("the boy saw Jack with Bob under the table with a telescope", True),
                           ("Bob ran", False), ("Jack ate a cookie under the hill", False)):
        words = sentence.split()
        ours, theirs = parser.parse_one(words), next(reference.parse(words))
        assert ours.prob() == pytest.approx(theirs.prob(), rel=1e-9)
        if not ties:                                 # equally probable trees may differ
            assert str(ours) == str(theirs)
    assert list(parser.parse("Bob ran ran".split())) == []
    with pytest.raises(ValueError, match="already estimated"):
        parser.fit([nltk.Tree.fromstring(TRACED[2])])


def test_discriminative_parser_behind_nltk_trees():
    from linclass.parsing import DiscriminativeParser
    trees = [nltk.Tree.fromstring(s) for s in TRACED]
    parser = NLTKParser(DiscriminativeParser(features="rules", max_iter=2,
                                             random_state=0)).fit(trees)
    parsed = parser.predict(trees)
    assert all(t is None or isinstance(t, nltk.Tree) for t in parsed)
    assert 0.0 <= parser.score(trees, trees) <= 1.0


def test_parser_on_penn_treebank_sample():
    if not (PTB / "train.mrg.gz").exists():
        pytest.skip("Penn Treebank sample not found at %s" % PTB)
    with gzip.open(PTB / "train.mrg.gz", "rt") as f:
        train = [nltk.Tree.fromstring(line) for _, line in zip(range(300), f)]
    with gzip.open(PTB / "dev.mrg.gz", "rt") as f:
        dev = [nltk.Tree.fromstring(line) for _, line in zip(range(60), f)]
    assert sum("-NONE-" in str(t) for t in train) > 100          # traces in the data
    short = [t for t in dev if len(treebank_tree(t).leaves()) <= 12]
    parser = NLTKParser().fit(train)
    parsed = parser.predict(short)
    assert sum(isinstance(t, nltk.Tree) for t in parsed) >= 0.8 * len(short)
    for tree, gold in zip(parsed, short):            # None: no parse under this grammar
        if tree is not None:
            assert tree.leaves() == [w for w, tag in gold.pos() if tag != "-NONE-"]
    assert parser.score(short, short) > 0.4
