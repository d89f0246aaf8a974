"""Demo of the margin-based classifiers on a generated sparse text-like problem.

The data are generated here, deterministically (no files): documents of a
few classes, each class with its own Zipf-like word distribution over a shared
vocabulary plus common "stop words", as L2-normalised term-frequency rows of a
CSR matrix.
"""
import time
import warnings

import numpy as np
import scipy.sparse as sp


def make_text_like(n_samples=3000, n_features=5000, n_classes=5, words_per_doc=60,
                   seed=0):
    """Deterministic sparse bag-of-words classification data.

    Returns ``(X, y)``: ``X`` a CSR matrix (n_samples, n_features) of
    L2-normalised word counts, ``y`` int labels ``0..n_classes-1``.
    """
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, n_features + 1, dtype=np.float64)
    background = 1.0 / ranks ** 1.1                       # shared Zipf distribution
    rows, cols, vals = [], [], []
    y = np.arange(n_samples) % n_classes
    topic_words = [rng.choice(n_features, size=n_features // 20, replace=False)
                   for _ in range(n_classes)]
    for i in range(n_samples):
        p = background.copy()
        p[topic_words[y[i]]] += 3.0 * background.mean()   # the class's topical words
        p /= p.sum()
        words = rng.choice(n_features, size=words_per_doc, p=p)
        uniq, counts = np.unique(words, return_counts=True)
        norm = np.sqrt(np.sum(counts.astype(float) ** 2))
        rows.append(np.full(len(uniq), i))
        cols.append(uniq)
        vals.append(counts / norm)
    X = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n_samples, n_features))
    return X, y


def demo_margin(quick=False):
    """Train a few margin-based classifiers and print accuracy and time.

    Parameters
    ----------
    quick : bool
        Smaller data (a couple of seconds in all).
    """
    from ..linear.least_squares import RidgeClassifier
    from ..linear.multiclass import CrammerSingerSVC, WestonWatkinsSVC
    from ..linear.perceptron import Perceptron
    from ..linear.svm import LinearSVC

    n = 1500 if quick else 6000
    X, y = make_text_like(n_samples=n + n // 2, n_features=3000 if quick else 8000, seed=0)
    X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    print("margin classifiers: generated text-like data, %d train / %d test documents, "
          "%d features, %d classes" % (X_train.shape[0], X_test.shape[0], X.shape[1],
                                       len(np.unique(y))))
    models = [
        ("averaged perceptron", Perceptron(average=True, max_iter=10, random_state=0)),
        ("LinearSVC (dual CD, one-vs-rest)", LinearSVC(C=1.0, random_state=0)),
        ("LinearSVC (Pegasos)", LinearSVC(solver="pegasos", max_iter=10, random_state=0)),
        ("Crammer-Singer SVM", CrammerSingerSVC(C=1.0, tol=1e-2, random_state=0)),
        ("Weston-Watkins SVM", WestonWatkinsSVC(C=1.0, tol=1e-2, random_state=0)),
        ("ridge classifier (CG)", RidgeClassifier(alpha=1.0)),
    ]
    results = []
    for name, model in models:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(X_test) == y_test))
        results.append((name, accuracy, seconds))
        print("  %-34s accuracy %.3f   fit %.3f s" % (name, accuracy, seconds))
    return results
