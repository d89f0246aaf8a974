"""linclass classifiers through NLTK's classifier interface; trees both ways."""
import random

import numpy as np
import pytest

from linclass import BernoulliNB, LogisticRegression, MaxEnt
from linclass.datasets import Tree, parse_tree
from linclass.interop import FeaturesetEncoder, NLTKClassifier, from_nltk_tree, to_nltk_tree

nltk = pytest.importorskip("nltk")


def _names(n, seed):
    """Names-gender style data (NLTK book ch. 6): the last letter decides mostly."""
    rng = random.Random(seed)
    data = []
    for _ in range(n):
        label = rng.choice(["female", "male"])
        last = rng.choice("aei" if label == "female" else "dknors")
        if rng.random() < 0.1:                       # label noise
            last = rng.choice("aeidknors")
        length = rng.randint(3, 9)
        data.append(({"last_letter": last, "length": length,
                      "first_letter": rng.choice("abcdefghijklmnopqrstuvwxyz")}, label))
    return data


def test_encoder_reads_pairs_as_nltk_does():
    enc = FeaturesetEncoder().fit([{"a": 1, "b": "x"}, {"a": 2}])
    X = enc.transform([{"a": 1, "b": "x"}, {"a": 3, "c": True}]).toarray()
    assert enc.pairs_ == [("a", 1), ("b", "x"), ("a", 2)]
    np.testing.assert_array_equal(X, [[1, 1, 0], [0, 0, 0]])     # unseen pairs ignored
    with pytest.raises(TypeError, match="featureset"):
        enc.transform(["not a dict"])
    with pytest.raises(TypeError, match="unhashable"):
        enc.fit([{"a": [1, 2]}])


@pytest.mark.parametrize("estimator", [None, BernoulliNB(), LogisticRegression(C=10.0)])
def test_classifier_interface_matches_nltk(estimator):
    train, test = _names(400, 0), _names(200, 1)
    ours = NLTKClassifier.train(train, estimator=estimator)
    reference = nltk.NaiveBayesClassifier.train(train)
    acc = nltk.classify.accuracy(ours, test)
    acc_ref = nltk.classify.accuracy(reference, test)
    assert acc >= acc_ref - 0.03, (acc, acc_ref)
    assert sorted(ours.labels()) == ["female", "male"]
    assert all(isinstance(label, str) for label in ours.labels())
    assert ours.classify(test[0][0]) == ours.classify_many([test[0][0]])[0]
    dist = ours.prob_classify(test[0][0])
    assert abs(sum(dist.prob(label) for label in ours.labels()) - 1) < 1e-9
    assert dist.max() == ours.classify(test[0][0])
    assert ours.most_informative_features(1)[0][0] == "last_letter"


def test_naive_bayes_probabilities_equal_nltk():
    """BernoulliNB over NLTK's pair indicators with alpha=0.5 is NLTK's ELE NB when
    every feature name occurs in every featureset with a value from a fixed set."""
    train, test = _names(300, 2), _names(50, 3)
    ours = NLTKClassifier.train(train, estimator=BernoulliNB(alpha=0.5))
    ref = nltk.NaiveBayesClassifier.train(train)
    agree = np.mean([ours.classify(fs) == ref.classify(fs) for fs, _ in test])
    assert agree >= 0.9


def test_show_most_informative_features(capsys):
    ours = NLTKClassifier.train(_names(300, 4), estimator=MaxEnt())
    ours.show_most_informative_features(3)
    out = capsys.readouterr().out
    assert out.startswith("Most Informative Features") and "last_letter" in out


def test_train_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        NLTKClassifier.train([])
    with pytest.raises(TypeError, match="pair"):
        NLTKClassifier.train([{"a": 1}])


def test_trees_round_trip_through_nltk():
    tree = parse_tree("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    theirs = to_nltk_tree(tree)
    assert isinstance(theirs, nltk.Tree) and theirs.leaves() == ["the", "dog", "barks"]
    assert str(theirs) == str(nltk.Tree.fromstring(str(tree)))
    assert from_nltk_tree(theirs) == tree
    deep = Tree("X", ["w"])
    for _ in range(5000):                            # no RecursionError
        deep = Tree("X", [deep])
    assert str(from_nltk_tree(to_nltk_tree(deep))) == str(deep)
    with pytest.raises(TypeError):
        to_nltk_tree("(S x)")
