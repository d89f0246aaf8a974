"""Demo of the probabilistic classifiers on data generated here (no files).

Three small problems, each drawn from the model family it demonstrates:

* word counts from a multinomial mixture (naive Bayes' own generative model);
* Gaussian features with a softmax labelling (logistic regression);
* NLTK-style dict featuresets with string attributes (MaxEnt GIS / IIS / L-BFGS).
"""
import time
import warnings

import numpy as np


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _accuracy(y, pred):
    return float(np.mean(np.asarray(y) == np.asarray(pred)))


def _word_counts(rng, n_docs, n_words, n_topics, doc_length):
    topic_words = rng.dirichlet(np.full(n_words, 0.3), size=n_topics)
    y = rng.integers(0, n_topics, n_docs)
    X = np.vstack([rng.multinomial(doc_length, topic_words[t]) for t in y]).astype(float)
    return X, y


def _featuresets(rng, n):
    colours, shapes, sizes = ["red", "green", "yellow"], ["round", "long", "oval"], ["s", "m", "l"]
    X, y = [], []
    for _ in range(n):
        fruit = rng.choice(["apple", "banana", "lemon"])
        colour = {"apple": rng.choice(["red", "green"]), "banana": "yellow",
                  "lemon": "yellow"}[fruit] if rng.random() < 0.85 else rng.choice(colours)
        shape = {"apple": "round", "banana": "long", "lemon": "oval"}[fruit] \
            if rng.random() < 0.8 else rng.choice(shapes)
        X.append({"colour": colour, "shape": shape, "size": rng.choice(sizes)})
        y.append(fruit)
    return X, y


def demo_probabilistic(quick=False):
    """Train naive Bayes, logistic regression and MaxEnt on generated data and print
    test accuracy and training time."""
    from ..linear.logistic import LogisticRegression
    from ..linear.maxent import MaxEnt
    from ..linear.naive_bayes import BernoulliNB, MultinomialNB
    from ..exceptions import ConvergenceWarning
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    n_docs = 2000 if quick else 10000
    X, y = _word_counts(rng, n_docs, n_words=2000, n_topics=8, doc_length=15)
    X = sp.csr_matrix(X)
    split = n_docs * 3 // 4
    print("== Naive Bayes: %d generated documents (8 topics, 2000-word vocabulary)" % n_docs)
    for model in (MultinomialNB(alpha=1.0), MultinomialNB(m=2000.0), BernoulliNB(alpha=1.0)):
        fitted, seconds = _timed(lambda: model.fit(X[:split], y[:split]))
        print("   %-32s test accuracy %.3f   fit %.3f s"
              % (repr(model), _accuracy(y[split:], fitted.predict(X[split:])), seconds))

    n = 3000 if quick else 20000
    W = rng.normal(size=(30, 4))
    Xg = rng.normal(size=(n, 30))
    yg = np.argmax(Xg @ W + rng.gumbel(size=(n, 4)), axis=1)
    yb = (yg >= 2).astype(int)
    split = n * 3 // 4
    print("== Logistic regression: %d generated examples, 30 Gaussian features" % n)
    for label, model, target in (
            ("multinomial, L2, lbfgs", LogisticRegression(C=1.0), yg),
            ("multinomial, L1, lbfgs", LogisticRegression(penalty="l1", C=0.1), yg),
            ("binary, L2, trust-region Newton", LogisticRegression(solver="tron"), yb)):
        fitted, seconds = _timed(lambda: model.fit(Xg[:split], target[:split]))
        print("   %-32s test accuracy %.3f   fit %.3f s"
              % (label, _accuracy(target[split:], fitted.predict(Xg[split:])), seconds))

    n = 1500 if quick else 6000
    Xf, yf = _featuresets(rng, n)
    split = n * 3 // 4
    print("== MaxEnt: %d generated fruit descriptions (dict featuresets)" % n)
    for algorithm in ("gis", "iis", "lbfgs"):
        model = MaxEnt(algorithm, prior_variance=10.0, max_iter=100 if algorithm != "lbfgs" else 200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fitted, seconds = _timed(lambda: model.fit(Xf[:split], yf[:split]))
        print("   %-32s test accuracy %.3f   fit %.3f s   log-likelihood %.1f"
              % (algorithm.upper(), _accuracy(yf[split:], fitted.predict(Xf[split:])), seconds,
                 fitted.loglik_))
