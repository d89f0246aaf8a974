"""Empirical risk minimisation toolbox: linclass vs scikit-learn / libsvm.

Cases (targets from issue 10, recorded, never asserted):

* SGD vs scikit-learn's ``SGDClassifier`` on a9a and 20 Newsgroups (tf-idf),
  same loss, ``alpha``, epochs (``tol=None``, fixed ``max_iter``), averaging
  and shuffling seed policy: accuracy within 0.3 point, ratio >= 2.  Hinge
  and logistic loss, plain and averaged; on 20NG also ``n_jobs=2`` for both.
* Mercer map (Nystroem, rbf) + LinearSVC vs ``SVC(kernel="rbf")`` of
  scikit-learn and of libsvm-official on a9a, over the number of landmarks
  ``m``: the accuracy/time curve.
* Ridge and lasso regression vs scikit-learn's ``Ridge``/``Lasso`` on a9a
  (+-1 targets) and a dense problem: same solution, ratio >= 1.
* Mixture naive Bayes vs plain multinomial NB on 20 Newsgroups.

Quality strings: ``acc`` test accuracy (a9a.t, 20NG test split); regression:
``obj`` the objective and ``|dw|`` the largest coefficient difference to the
peer.  ``--quick`` subsamples 20NG to 3,000 / 2,000 messages and a9a to
8,000 rows (Mercer map: 4,000 rows).
"""
import pathlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.linear.sgd import SGDClassifier  # noqa: E402

_A9A_CACHE = {}


def _newsgroups(data_dir, quick):
    return _harness.newsgroups_tfidf(data_dir, quick)


def _a9a(data_dir, quick):
    key = (str(data_dir), quick)
    if key not in _A9A_CACHE:
        from linclass.datasets import load_libsvm_binary
        train = load_libsvm_binary("a9a", "train", data_home=data_dir)
        test = load_libsvm_binary("a9a", "test", data_home=data_dir)
        X = sp.csr_matrix(train.data if hasattr(train, "data") else train[0])
        y = np.asarray(train.target if hasattr(train, "target") else train[1])
        Xt = sp.csr_matrix(test.data if hasattr(test, "data") else test[0])
        yt = np.asarray(test.target if hasattr(test, "target") else test[1])
        d = max(X.shape[1], Xt.shape[1])
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
        Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], d))
        if quick:
            X, y, Xt, yt = X[:8000], y[:8000], Xt[:8000], yt[:8000]
        _A9A_CACHE[key] = (X, y, Xt, yt)
    return _A9A_CACHE[key]


def _quiet(fn):
    def wrapped():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return wrapped


def _acc(model, X, y):
    return float(np.mean(model.predict(X) == y))


# ---------------------------------------------------------------- SGD --

def _sgd_rows(quick, data_dir, repeat, sklearn):
    from sklearn.linear_model import SGDClassifier as SkSGD
    rows = []
    cases = []
    if (data_dir / "libsvm_binary" / "a9a.gz").exists():
        cases.append(("a9a", _a9a(data_dir, quick)[:4], 1e-4, (1,)))
    if (data_dir / "20newsgroups_bydate").exists():
        cases.append(("20NG tf-idf", _newsgroups(data_dir, quick)[:4], 1e-5, (1, 2)))
    epochs = 5 if quick else 10
    for name, (X, y, Xt, yt), alpha, jobs in cases:
        data = "%s%s (%dx%d)" % (name, " quick" if quick else "", *X.shape)
        for loss, sk_loss in (("hinge", "hinge"), ("logistic", "log_loss")):
            for average in (False, True):
                for n_jobs in jobs:
                    common = dict(alpha=alpha, max_iter=epochs, tol=None, average=average,
                                  random_state=0, n_jobs=n_jobs)
                    peer_fit = _quiet(lambda: SkSGD(loss=sk_loss, **common).fit(X, y))
                    ours_fit = _quiet(lambda: SGDClassifier(loss=loss, **common).fit(X, y))
                    # interleaved (peer, linclass, peer, ...): both under the same
                    # load; a fit on a9a takes a few ms, so it is timed more often
                    (p_s, o_s), (peer, ours) = _harness.paired_median_times(
                        [peer_fit, ours_fit], repeat if name != "a9a" else 5 * repeat)
                    task = "SGD %s%s, %d epochs%s" % (
                        loss, " averaged" if average else "", epochs,
                        ", n_jobs=%d" % n_jobs if n_jobs > 1 else "")
                    rows.append(_harness.make_row(
                        task, data, "sklearn SGDClassifier", p_s, o_s,
                        "acc %.4f" % _acc(peer, Xt, yt), "acc %.4f" % _acc(ours, Xt, yt)))
    return rows


# -------------------------------------------------------- Mercer map --

def _libsvm_rbf(X, y, Xt, yt, gamma, C):
    from libsvm import svmutil
    prob = svmutil.svm_problem(np.asarray(y, dtype=np.float64), X)
    param = svmutil.svm_parameter("-s 0 -t 2 -g %r -c %r -m 500 -q" % (gamma, C))
    model = svmutil.svm_train(prob, param)
    return model


def _libsvm_acc(model, Xt, yt):
    from libsvm import svmutil
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        pred, _, _ = svmutil.svm_predict(np.asarray(yt, dtype=np.float64), Xt, model, "-q")
    return float(np.mean(np.asarray(pred) == yt))


def _mercer_rows(quick, data_dir, repeat):
    from linclass.kernels.mercer import MercerMap
    from linclass.linear.svm import LinearSVC
    from sklearn.svm import SVC
    rows = []
    if not (data_dir / "libsvm_binary" / "a9a.gz").exists():
        return [_harness.make_row("Mercer map + LinearSVC", "a9a", None, None, None,
                                  note="a9a not found in the data directory")]
    X, y, Xt, yt = _a9a(data_dir, quick)
    n_train, n_test = (4000, 4000) if quick else (16000, 8000)
    X, y, Xt, yt = X[:n_train], y[:n_train], Xt[:n_test], yt[:n_test]
    gamma, C = 0.05, 1.0
    data = "a9a %d train / %d test rows" % (n_train, n_test)
    # the kernel SVMs are slow: timed once
    sk_s, sk_model = _harness.median_time(
        lambda: SVC(kernel="rbf", gamma=gamma, C=C, cache_size=500).fit(X, y), 1)
    sk_acc = "acc %.4f" % _acc(sk_model, Xt, yt)
    have_libsvm = _harness.import_peer("libsvm") is not None
    if have_libsvm:
        import libsvm.svmutil  # noqa: F401  (records the version)
        lib_s, lib_model = _harness.median_time(lambda: _libsvm_rbf(X, y, Xt, yt, gamma, C), 1)
        lib_acc = "acc %.4f" % _libsvm_acc(lib_model, Xt, yt)
    rows_m = (50, 200, 800) if quick else (100, 300, 1000, 2000)
    for m in rows_m:
        def ours_fit():
            mapper = MercerMap(n_landmarks=m, gamma=gamma, random_state=0).fit(X)
            clf = LinearSVC(C=C, random_state=0).fit(mapper.transform(X), y)
            return mapper, clf
        o_s, (mapper, clf) = _quiet(lambda: _harness.median_time(ours_fit, repeat))()
        ours_acc = "acc %.4f" % _acc(clf, mapper.transform(Xt), yt)
        task = "MercerMap(rbf, m=%d) + LinearSVC vs SVC(rbf)" % m
        rows.append(_harness.make_row(task, data, "sklearn SVC", sk_s, o_s, sk_acc, ours_acc))
        if have_libsvm:
            rows.append(_harness.make_row(
                task, data, "libsvm", lib_s, o_s, lib_acc, ours_acc,
                note="libsvm-official time includes its Python conversion of the CSR "
                     "matrix into svm_problem" if m == rows_m[0] else None))
        else:
            rows.append(_harness.make_row(task, data, "libsvm", None, o_s, None, ours_acc,
                                          note="libsvm-official not installed"))
    return rows


# -------------------------------------------------------- regression --

def _regression_rows(quick, data_dir, repeat):
    from sklearn.linear_model import Lasso as SkLasso
    from sklearn.linear_model import Ridge as SkRidge
    from linclass.linear.regression import Lasso, Ridge
    from linclass.linear.least_squares import lasso_updates, ridge_solver
    rows = []
    problems = []
    if (data_dir / "libsvm_binary" / "a9a.gz").exists():
        X, y, _, _ = _a9a(data_dir, quick)
        problems.append(("a9a +-1 targets (%dx%d, CSR)" % X.shape, X,
                         np.where(y > 0, 1.0, -1.0)))
    rng = np.random.default_rng(0)
    n, d = (2000, 200) if quick else (10000, 500)
    Xd = rng.normal(size=(n, d))
    yd = Xd @ (rng.normal(size=d) * (rng.random(d) < 0.2)) + rng.normal(size=n)
    problems.append(("dense gaussian (%dx%d)" % (n, d), Xd, yd))
    for data, X, y in problems:
        for name, ours_cls, peer_cls, params in (
                ("Ridge", Ridge, SkRidge, dict(alpha=1.0)),
                ("Lasso", Lasso, SkLasso, dict(alpha=1e-3, tol=1e-6, max_iter=5000))):
            # interleaved (peer, linclass, peer, ...): both under the same load
            (p_s, o_s), (peer, ours) = _harness.paired_median_times(
                [_quiet(lambda: peer_cls(**params).fit(X, y)),
                 _quiet(lambda: ours_cls(**params).fit(X, y))], repeat)
            diff = float(np.max(np.abs(ours.coef_ - peer.coef_)))

            def objective(model):
                r = y - np.asarray(X @ model.coef_).ravel() - model.intercept_
                if name == "Ridge":
                    return float(r @ r + params["alpha"] * model.coef_ @ model.coef_)
                return float(0.5 * (r @ r) / len(y) + params["alpha"]
                             * np.abs(model.coef_).sum())

            path = (ridge_solver(X, "auto") if name == "Ridge" else
                    "%s updates" % lasso_updates(X, "auto"))
            rows.append(_harness.make_row(
                "%s regression alpha=%g" % (name, params["alpha"]), data,
                "sklearn %s" % name, p_s, o_s, "obj %.6g" % objective(peer),
                "obj %.6g |dw| %.1e" % (objective(ours), diff),
                note="linclass solver: %s; median of %d paired fits" % (path, repeat)))
    return rows


def _mixture_nb_rows(quick, data_dir, repeat):
    """Mixture NB vs plain multinomial NB on 20 Newsgroups word counts (one
    CountVectorizer vocabulary); both linclass, the issue asks for the accuracies."""
    if not (data_dir / "20newsgroups_bydate").exists():
        return []
    from sklearn.feature_extraction.text import CountVectorizer
    from linclass.datasets import load_20newsgroups
    from linclass.linear.mixture_nb import MixtureNB
    from linclass.linear.naive_bayes import MultinomialNB
    train = load_20newsgroups("train", data_home=data_dir)
    test = load_20newsgroups("test", data_home=data_dir)
    keep = np.random.default_rng(0).permutation(len(train.data))[:3000 if quick else None]
    vec = CountVectorizer(min_df=2)
    X = vec.fit_transform([train.data[i] for i in keep])
    Xt = vec.transform(test.data)
    y, yt = np.asarray(train.target)[keep], np.asarray(test.target)
    t_nb, nb = _harness.median_time(lambda: MultinomialNB(alpha=0.1).fit(X, y), repeat)
    rows = []
    for m in (2, 4):
        t_mix, mix = _harness.median_time(
            lambda: MixtureNB(n_components=m, alpha=0.1, n_init=2, max_iter=30,
                              random_state=0).fit(X, y), 1)
        rows.append(_harness.make_row(
            "mixture NB (M=%d, EM) vs NB" % m, "20news %dx%d counts" % X.shape,
            "linclass MultinomialNB", t_nb, t_mix, "acc %.4f" % nb.score(Xt, yt),
            "acc %.4f" % mix.score(Xt, yt),
            note="alpha=0.1 both; EM 2 restarts x <= 30 iterations per class"))
    return rows


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    repeat = _harness.n_repeats(quick)
    sklearn = _harness.import_peer("sklearn")
    rows = []
    if sklearn is None:
        rows.append(_harness.make_row("SGD", "-", None, None, None,
                                      note="scikit-learn not installed: no peer"))
        return rows
    rows += _sgd_rows(quick, data_dir, repeat, sklearn)
    rows += _mercer_rows(quick, data_dir, repeat)
    rows += _regression_rows(quick, data_dir, repeat)
    rows += _mixture_nb_rows(quick, data_dir, repeat)
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    t = time.time()
    result = run(quick, _harness.default_data_dir())
    print(_harness.format_table(result))
    print("%.1f s" % (time.time() - t))
