"""Demo of the empirical-risk-minimisation toolbox on generated data (no files).

SGD with several margin losses on the text-like problem of the margin demo;
a Mercer map (rbf, Nystroem) that lets a linear SVM learn a non-linear rule;
ridge and lasso regression on a sparse linear model.
"""
import time
import warnings

import numpy as np


def _timed(fit):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit()
    return result, time.perf_counter() - start


def demo_erm(quick=False):
    """Print accuracy / error and time of SGD, Mercer map + LinearSVC, ridge and lasso.

    Parameters
    ----------
    quick : bool
        Smaller data (a couple of seconds in all).

    Returns
    -------
    list of (name, quality, seconds)
    """
    from .margin import make_text_like
    from ..linear.regression import Lasso, Ridge
    from ..kernels.mercer import MercerMap
    from ..linear.sgd import SGDClassifier
    from ..linear.svm import LinearSVC

    results = []
    n = 1500 if quick else 6000
    X, y = make_text_like(n_samples=n + n // 2, n_features=3000 if quick else 8000, seed=0)
    X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    print("ERM by SGD: generated text-like data, %d train / %d test documents, %d classes"
          % (n, X_test.shape[0], len(np.unique(y))))
    for loss in ("hinge", "logistic", "modified_huber", "squared_hinge", "exponential"):
        # Bottou's "optimal" schedule starts with a step scaled by 1 / |L'(-typw)|,
        # tiny for the exponential loss: a constant step suits it better
        schedule = (dict(learning_rate="constant", eta0=0.2) if loss == "exponential"
                    else {})
        model, seconds = _timed(lambda: SGDClassifier(loss=loss, alpha=1e-5, average=True,
                                                      max_iter=10, tol=None, random_state=0,
                                                      **schedule).fit(X_train, y_train))
        accuracy = float(np.mean(model.predict(X_test) == y_test))
        results.append(("SGD %s" % loss, accuracy, seconds))
        print("  SGD %-22s accuracy %.3f   fit %.3f s" % (loss, accuracy, seconds))

    rng = np.random.default_rng(0)
    m = 600 if quick else 2000
    P = rng.uniform(-1, 1, size=(2 * m, 2))
    labels = (np.sum(P ** 2, axis=1) < 0.5).astype(int)          # inside a disc
    print("Mercer map: points inside/outside a disc (%d train / %d test)" % (m, m))
    linear, seconds = _timed(lambda: LinearSVC(random_state=0).fit(P[:m], labels[:m]))
    accuracy = float(np.mean(linear.predict(P[m:]) == labels[m:]))
    results.append(("LinearSVC on raw inputs", accuracy, seconds))
    print("  %-26s accuracy %.3f   fit %.3f s" % ("LinearSVC on raw inputs", accuracy, seconds))
    for n_landmarks in (10, 50):
        def fit():
            mapper = MercerMap(n_landmarks=n_landmarks, gamma=2.0, random_state=0).fit(P[:m])
            return mapper, LinearSVC(C=10, random_state=0).fit(mapper.transform(P[:m]),
                                                               labels[:m])
        (mapper, svm), seconds = _timed(fit)
        accuracy = float(np.mean(svm.predict(mapper.transform(P[m:])) == labels[m:]))
        name = "MercerMap(m=%d) + LinearSVC" % n_landmarks
        results.append((name, accuracy, seconds))
        print("  %-26s accuracy %.3f   fit %.3f s" % (name, accuracy, seconds))

    d = 200 if quick else 1000
    A = X_train[:, :d]
    w = np.zeros(d)
    w[rng.choice(d, 10, replace=False)] = rng.normal(size=10) * 5
    target = np.asarray(A @ w).ravel() + 0.05 * rng.normal(size=A.shape[0])
    print("regression: sparse target from 10 of %d features" % d)
    for name, model in (("ridge (CG)", Ridge(alpha=1e-3)),
                        ("lasso (coordinate descent)", Lasso(alpha=1e-4))):
        fitted, seconds = _timed(lambda: model.fit(A, target))
        r2 = fitted.score(A, target)
        results.append((name, r2, seconds))
        print("  %-26s R^2 %.4f  nonzero weights %4d   fit %.3f s"
              % (name, r2, int(np.sum(fitted.coef_ != 0)), seconds))
    return results
