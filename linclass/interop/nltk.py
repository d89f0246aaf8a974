"""linclass classifiers behind NLTK's classifier interface, and tree conversion.

NLTK's classifiers (``nltk.classify.ClassifierI``) train from labelled
featuresets -- ``[({"last_letter": "a", "length": 5}, "female"), ...]`` -- and
answer ``classify``, ``classify_many``, ``prob_classify`` and ``labels``.
:class:`NLTKClassifier` gives any linclass classifier that interface: the
featuresets are encoded once by :class:`FeaturesetEncoder`, exactly as NLTK's
own classifiers read them (every ``(name, value)`` pair is one binary
feature), so ``nltk.classify.accuracy(classifier, test_set)`` works unchanged::

    from linclass.interop import NLTKClassifier
    classifier = NLTKClassifier.train(train_set)           # MaxEnt by default
    nltk.classify.accuracy(classifier, test_set)
    classifier.show_most_informative_features(5)

References
----------
S. Bird, E. Klein and E. Loper, *Natural Language Processing with Python*,
O'Reilly 2009, chapter 6 (the ``ClassifierI`` interface and featuresets).
"""
import math

import numpy as np
import scipy.sparse as sp

from ..datasets.trees import Tree
from ..exceptions import NotFittedError

__all__ = ["FeaturesetEncoder", "NLTKClassifier", "to_nltk_tree", "from_nltk_tree"]

# NLTK's own classes answered by linclass (MaxentClassifier, NaiveBayesClassifier,
# NLTKParser) are in :mod:`._nltk_dropin`, which imports NLTK: the package
# ``linclass.interop`` loads it on the first access to one of them.


def _check_featureset(featureset, where):
    if not isinstance(featureset, dict):
        raise TypeError("%s is a %s, expected a featureset (a dict {feature name: value})"
                        % (where, type(featureset).__name__))
    return featureset


def _pair(name, value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError("%s: the value of feature %r is unhashable (%s); featureset values "
                        "must be hashable, as in NLTK" % (where, name, type(value).__name__))
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("%s: feature %r has the value NaN" % (where, name))
    return (name, value)


class FeaturesetEncoder:
    """NLTK featuresets -> a CSR matrix of binary ``(name, value)`` indicators.

    As NLTK's ``MaxentFeatureEncoding``/``NaiveBayesClassifier`` read them: a
    feature ``"length": 5`` is the indicator of the pair ``("length", 5)``,
    not the number 5.  Pairs never seen while fitting are ignored (NLTK's
    ``unseen_features=False``).

    Attributes
    ----------
    pairs_ : list of (name, value)
        The pair of each column.
    """

    def fit(self, featuresets):
        index = {}
        for i, fs in enumerate(featuresets):
            for name, value in _check_featureset(fs, "featureset %d" % i).items():
                key = _pair(name, value, "featureset %d" % i)
                if key not in index:
                    index[key] = len(index)
        self.index_ = index
        self.pairs_ = list(index)
        return self

    def transform(self, featuresets):
        index = self.index_
        indptr, indices = [0], []
        for i, fs in enumerate(featuresets):
            cols = set()
            for name, value in _check_featureset(fs, "featureset %d" % i).items():
                col = index.get(_pair(name, value, "featureset %d" % i))
                if col is not None:
                    cols.add(col)
            indices.extend(sorted(cols))
            indptr.append(len(indices))
        n = len(indptr) - 1
        return sp.csr_matrix((np.ones(len(indices)), np.asarray(indices, dtype=np.int32),
                              np.asarray(indptr, dtype=np.int32)),
                             shape=(n, max(len(index), 1)))

    def get_feature_names_out(self, input_features=None):
        """Name of each column, ``"name=value"`` (scikit-learn's ``DictVectorizer``
        spelling), as an object array of str."""
        if not hasattr(self, "pairs_"):
            raise NotFittedError("this FeaturesetEncoder instance is not fitted yet; "
                                 "call fit() first")
        out = np.empty(len(self.pairs_), dtype=object)
        out[:] = ["%s=%s" % pair for pair in self.pairs_]
        return out

    def fit_transform(self, featuresets):
        featuresets = list(featuresets)
        return self.fit(featuresets).transform(featuresets)


class _ProbDist:
    """The part of ``nltk.probability.ProbDistI`` classifiers' users call."""

    def __init__(self, probs):
        self._probs = probs

    def prob(self, sample):
        return self._probs.get(sample, 0.0)

    def logprob(self, sample):
        p = self.prob(sample)
        return math.log2(p) if p > 0 else -math.inf

    def max(self):
        return max(self._probs, key=self._probs.get)

    def samples(self):
        return list(self._probs)

    def __repr__(self):
        return "<ProbDist with %d samples>" % len(self._probs)


def _prob_dist(probs):
    try:
        from nltk.probability import DictionaryProbDist
    except ImportError:
        return _ProbDist(probs)
    return DictionaryProbDist(probs)


def _plain(label):
    return label.item() if isinstance(label, np.generic) else label


class NLTKClassifier:
    """A fitted linclass classifier with NLTK's ``ClassifierI`` methods.

    Parameters
    ----------
    estimator : linclass classifier
        Any classifier with ``fit``/``predict``; ``prob_classify`` needs
        ``predict_proba``.  Build one with :meth:`train`.
    encoder : FeaturesetEncoder
        The fitted featureset encoder.
    """

    def __init__(self, estimator, encoder):
        self.estimator = estimator
        self.encoder = encoder

    @classmethod
    def train(cls, labeled_featuresets, estimator=None, **params):
        """Train from ``[(featureset, label), ...]`` as NLTK's ``train`` methods.

        ``estimator`` is an unfitted linclass classifier (default:
        ``MaxEnt(**params)``, the model of NLTK's ``MaxentClassifier``, fitted
        by L-BFGS); ``params`` are passed to the default only.
        """
        data = list(labeled_featuresets)
        if not data:
            raise ValueError("train needs at least one (featureset, label) pair")
        for i, item in enumerate(data):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError("labeled_featuresets[%d] is not a (featureset, label) pair" % i)
        featuresets = [fs for fs, _ in data]
        labels = [label for _, label in data]
        if estimator is None:
            from ..linear.maxent import MaxEnt
            estimator = MaxEnt(**params)
        elif params:
            raise TypeError("params are for the default MaxEnt; configure %s yourself"
                            % type(estimator).__name__)
        encoder = FeaturesetEncoder()
        X = encoder.fit_transform(featuresets)
        estimator.fit(X, labels)
        return cls(estimator, encoder)

    def labels(self):
        """The class labels, as given to :meth:`train`."""
        return [_plain(c) for c in self.estimator.classes_]

    def classify(self, featureset):
        return self.classify_many([featureset])[0]

    def classify_many(self, featuresets):
        return [_plain(y) for y in self.estimator.predict(self.encoder.transform(featuresets))]

    def prob_classify(self, featureset):
        return self.prob_classify_many([featureset])[0]

    def prob_classify_many(self, featuresets):
        if not hasattr(self.estimator, "predict_proba"):
            raise AttributeError("%s has no predict_proba: prob_classify needs a "
                                 "probabilistic classifier" % type(self.estimator).__name__)
        proba = self.estimator.predict_proba(self.encoder.transform(featuresets))
        labels = self.labels()
        return [_prob_dist(dict(zip(labels, map(float, row)))) for row in proba]

    def most_informative_features(self, n=10):
        """``[(name, value), ...]`` ordered by how much their weights separate the classes.

        For a linear model the spread ``max_k w_k - min_k w_k`` of the pair's
        weights over the classes (the absolute weight for a binary model); for
        naive Bayes the spread of the log-probabilities, NLTK's likelihood
        ratio.
        """
        spread = self._weight_spread()
        order = np.argsort(-spread, kind="stable")[:n]
        return [self.encoder.pairs_[j] for j in order]

    def _weights(self):
        est = self.estimator
        n, k = len(self.encoder.pairs_), len(est.classes_)
        for attr in ("coef_", "feature_log_prob_"):
            w = getattr(est, attr, None)
            if w is not None:
                w = np.atleast_2d(np.asarray(w.toarray() if sp.issparse(w) else w))
                if w.shape == (1, n * k) and k > 1:      # MaxEnt: joint (feature, class) weights
                    w = w.reshape(n, k).T
                return w
        raise AttributeError("%s exposes no per-feature weights (coef_ or feature_log_prob_)"
                             % type(est).__name__)

    def _weight_spread(self):
        w = self._weights()
        n = len(self.encoder.pairs_)
        if w.shape[1] != n:
            raise AttributeError("%s's weights do not match the featureset encoding"
                                 % type(self.estimator).__name__)
        return np.abs(w[0]) if w.shape[0] == 1 else w.max(axis=0) - w.min(axis=0)

    def show_most_informative_features(self, n=10):
        """Print the ``n`` most informative ``name = value`` pairs with the class
        whose weight is highest and the spread, as NLTK prints them."""
        w = self._weights()
        labels = self.labels()
        spread = self._weight_spread()
        print("Most Informative Features")
        for name, value in self.most_informative_features(n):
            j = self.encoder.index_[(name, value)]
            if w.shape[0] == 1:
                top = labels[1] if w[0, j] > 0 else labels[0]
            else:
                top = labels[int(np.argmax(w[:, j]))]
            print("%24s = %-14r %8s  weight spread %.3f" % (name, value, top, spread[j]))


def to_nltk_tree(tree):
    """A :class:`linclass.datasets.Tree` as an ``nltk.Tree`` (needs NLTK)."""
    try:
        import nltk
    except ImportError:  # pragma: no cover - the tests install nltk
        raise ImportError("to_nltk_tree needs NLTK: pip install nltk") from None
    if not isinstance(tree, Tree):
        raise TypeError("to_nltk_tree expects a linclass Tree, got %s" % type(tree).__name__)
    # iterative post-order: deep trees do not hit the recursion limit
    done = {}
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            done[id(node)] = nltk.Tree(node.label, [done[id(c)] if isinstance(c, Tree)
                                                    else c for c in node.children])
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in node.children if isinstance(c, Tree))
    return done[id(tree)]


def from_nltk_tree(nltk_tree):
    """An ``nltk.Tree`` (or anything with ``label()`` and children) as a linclass Tree."""
    def label_of(node):
        label = node.label() if callable(getattr(node, "label", None)) else None
        if not isinstance(label, str):
            raise TypeError("tree node %r has no string label()" % (node,))
        return label

    if isinstance(nltk_tree, Tree):
        return nltk_tree
    label_of(nltk_tree)
    done = {}
    open_nodes = set()          # ids of the nodes being built: the current node's ancestors
    stack = [(nltk_tree, False)]
    while stack:
        node, expanded = stack.pop()
        children = list(node)
        if not expanded and id(node) in open_nodes:
            raise ValueError("the tree contains itself (a node %r is its own descendant)"
                             % (label_of(node),))
        if expanded:
            open_nodes.discard(id(node))
            out = []
            for c in children:
                if isinstance(c, str):
                    out.append(c)
                else:
                    out.append(done[id(c)])
            done[id(node)] = Tree(label_of(node), out)
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for c in children:
            if not isinstance(c, str):
                label_of(c)
                stack.append((c, False))
    return done[id(nltk_tree)]
