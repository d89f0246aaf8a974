"""Probabilistic classifiers: naive Bayes, logistic regression, MaxEnt GIS/IIS.

Cases (``--quick`` subsamples the training sets):

* ``MultinomialNB`` / ``BernoulliNB`` fit + predict on 20 Newsgroups bydate vs
  scikit-learn with the same smoothing (alpha=1), on one shared
  ``CountVectorizer`` vocabulary built here.  Quality: test accuracy; the
  linclass cell says whether the predictions are identical.
* multinomial L2 logistic regression (C=1, tol=1e-6) on 20 Newsgroups
  (L2-normalised counts; first 1,000 documents with ``--quick``; at most 2
  timed fits) vs scikit-learn ``lbfgs``; quality: the final
  objective ``C * sum loss + ||W||^2 / 2`` of each, evaluated by the same code.
* binary L2 logistic regression (C=1) on a9a vs liblinear ``-s 0 -B 1 -e 0.01``
  (TRON; linclass ``solver="tron"`` with ``penalize_intercept=True``, the same
  objective, and LIBLINEAR's stopping rule), and linclass's TRON at the loosest
  multiple of that rule reaching LIBLINEAR's objective (paired); linclass's default solver on
  the same bias-penalised objective (tol=1e-6) vs liblinear ``-s 0`` at the
  loosest ``-e`` that reaches linclass's objective within 1e-5 (an
  equal-objective row; paired, interleaved); and, at tol=1e-6, linclass's
  default solver (``"auto"``, which picks Newton's method here) vs scikit-learn
  ``lbfgs`` and ``newton-cholesky``, and linclass ``lbfgs`` vs scikit-learn
  ``lbfgs``, once at linclass's default memory (20 curvature pairs on this
  small problem) and once at scikit-learn's 10 (paired, interleaved; quality:
  the objective and its relative difference, negative when linclass's is
  lower).
* MaxEnt GIS / IIS on 5,000 a9a examples vs NLTK ``MaxentClassifier`` with 10
  iterations (NLTK's ``max_iter=10`` performs 9 updates; linclass runs 9 with
  NLTK's GIS constant, so both compute the same model).  Quality: accuracy on
  the first 2,000 a9a test examples.  NLTK is timed once (it takes seconds).

Everything runs with one BLAS thread (threadpoolctl), see :func:`run`.
"""
import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.exceptions import ConvergenceWarning  # noqa: E402
from linclass.linear.logistic import LogisticRegression, _Objective  # noqa: E402
from linclass.linear.maxent import MaxEnt  # noqa: E402
from linclass.linear.naive_bayes import BernoulliNB, MultinomialNB  # noqa: E402


def _accuracy(y, pred):
    return float(np.mean(np.asarray(y) == np.asarray(pred)))


def _objective(X, y, coef, intercept, C, penalize_intercept=False):
    """C * sum loss + 0.5 ||w||^2 (intercept penalised on request), any classifier's."""
    classes, codes = np.unique(y, return_inverse=True)
    K = len(classes)
    n_out = 1 if K == 2 else K
    theta = np.vstack([np.asarray(coef).T.reshape(-1, n_out),
                       np.asarray(intercept).reshape(1, n_out)]).ravel()
    inv = np.zeros((X.shape[1] + 1, n_out))
    inv[:X.shape[1]] = 1.0 / C
    if penalize_intercept:
        inv[X.shape[1]] = 1.0 / C
    obj = _Objective(X, codes, np.ones(X.shape[0]), K, True, inv.ravel(), 1.0)
    return C * obj.l2(theta)[0]


def _newsgroups(data_dir, quick):
    from linclass.datasets import load_20newsgroups
    from sklearn.feature_extraction.text import CountVectorizer
    train = load_20newsgroups("train", data_home=data_dir)
    test = load_20newsgroups("test", data_home=data_dir)
    docs, y = train.data, np.asarray(train.target)
    if quick:
        keep = np.random.default_rng(0).permutation(len(docs))[:3000]
        docs, y = [docs[i] for i in keep], y[keep]
    vectorizer = CountVectorizer()            # one tokenisation and vocabulary for both
    X = vectorizer.fit_transform(docs).astype(np.float64).tocsr()
    X_test = vectorizer.transform(test.data).astype(np.float64).tocsr()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X, y, X_test, np.asarray(test.target)


def _nb_rows(X, y, X_test, y_test, repeat, sknb):
    rows = []
    data = "20news %dx%d" % X.shape
    for name, ours_cls, kwargs in (("MultinomialNB", MultinomialNB, {}),
                                   ("BernoulliNB", BernoulliNB, {"binarize": 0.0})):
        def ours():
            return ours_cls(alpha=1.0, **kwargs).fit(X, y).predict(X_test)

        if sknb is None:
            lc_s, pred = _harness.median_time(ours, repeat, warmup=1)
            rows.append(_harness.make_row(name + " fit+predict", data, None, None, lc_s, None,
                                          "acc %.4f" % _accuracy(y_test, pred),
                                          note="scikit-learn is not installed"))
            continue
        sk_cls = getattr(sknb, name)

        def peer():
            return sk_cls(alpha=1.0, **kwargs).fit(X, y).predict(X_test)

        # paired and interleaved (peer, linclass, peer, ...): the same load for
        # both (the rows are ~0.1 s fits, which a loaded machine moves by tens of %)
        ours(), peer()                                          # warm-up
        (sk_s, lc_s), (sk_pred, pred) = _harness.paired_median_times(
            [peer, ours], max(repeat, 5))
        same = np.array_equal(pred, sk_pred)
        rows.append(_harness.make_row(
            name + " fit+predict", data, "scikit-learn", sk_s, lc_s,
            "acc %.4f" % _accuracy(y_test, sk_pred),
            "acc %.4f, %s" % (_accuracy(y_test, pred),
                              "identical predictions" if same else "PREDICTIONS DIFFER")))
    return rows


def _multinomial_rows(X, y, repeat, sklm, quick):
    from sklearn.preprocessing import normalize
    if quick:
        X, y = X[:1000], y[:1000]
    repeat = min(repeat, 2)     # one fit takes minutes on the full set
    Xn = normalize(X).tocsr()
    Xn.indices, Xn.indptr = Xn.indices.astype(np.int32), Xn.indptr.astype(np.int32)
    data = "20news %dx%d L2-normalised" % Xn.shape
    C, tol = 1.0, 1e-6
    fit_ours = lambda: LogisticRegression(C=C, tol=tol, max_iter=2000).fit(Xn, y)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if sklm is None:
            lc_s, ours = _harness.median_time(fit_ours, repeat)
            ours_obj = _objective(Xn, y, ours.coef_, ours.intercept_, C)
            return [_harness.make_row("logistic multinomial L2", data, None, None, lc_s, None,
                                      "obj %.8g" % ours_obj,
                                      note="scikit-learn is not installed")]
        # paired and interleaved (peer, linclass, peer, linclass, ...): same load for both
        (sk_s, lc_s), (sk, ours) = _harness.paired_median_times(
            [lambda: sklm.LogisticRegression(C=C, tol=tol, max_iter=2000).fit(Xn, y),
             fit_ours], repeat)
        # linclass at its default tol: how far above the optimum it stops
        default = LogisticRegression(C=C, max_iter=2000).fit(Xn, y)
    ours_obj = _objective(Xn, y, ours.coef_, ours.intercept_, C)
    sk_obj = _objective(Xn, y, sk.coef_, sk.intercept_, C)
    best = min(ours_obj, sk_obj)
    default_obj = _objective(Xn, y, default.coef_, default.intercept_, C)
    rel = abs(ours_obj - sk_obj) / abs(sk_obj)
    return [_harness.make_row("logistic multinomial L2 (lbfgs)", data,
                              "scikit-learn lbfgs", sk_s, lc_s,
                              "obj %.10g (%d it)" % (sk_obj, sk.n_iter_[0]),
                              "obj %.10g (%d it, rel diff %.1e); default tol: %.1e above"
                              % (ours_obj, ours.n_iter_[0], rel,
                                 (default_obj - best) / abs(best)),
                              note="median of %d paired fits, tol=%g both" % (repeat, tol))]


#: rounds of the paired timings of TRON against LIBLINEAR (fits of 20-60 ms on
#: a9a, whose medians over 5 rounds moved by +-30% between runs on a shared machine)
SHORT_FIT_ROUNDS = 21


def _tron_to_liblinear_objective(X, y01, C, repeat, tron_tol, ll_obj, peer, data):
    """linclass's TRON at the loosest tolerance (LIBLINEAR's rule times 1, 2, 4, ...,
    64; an untimed search) whose objective is at or below LIBLINEAR's final one
    (``-e 0.01``), timed paired and interleaved with LIBLINEAR: the two at equal
    objective (the row above compares them at the same stopping rule, where
    linclass ends lower)."""
    def fit(tol):
        return LogisticRegression(C=C, solver="tron", penalize_intercept=True,
                                  tol=tol).fit(X, y01)

    tol = tron_tol
    for factor in (64, 32, 16, 8, 4, 2, 1):
        model = fit(tron_tol * factor)
        if _objective(X, y01, model.coef_, model.intercept_, C, True) <= ll_obj:
            tol = tron_tol * factor
            break
    (ll_s, lc_s), (_, model) = _harness.paired_median_times(
        [peer, lambda: fit(tol)], max(repeat, SHORT_FIT_ROUNDS))
    obj = _objective(X, y01, model.coef_, model.intercept_, C, True)
    return _harness.make_row(
        "logistic binary L2 (tron) to liblinear's objective", data, "liblinear -s 0 -e 0.01",
        ll_s, lc_s, "obj %.8g" % ll_obj,
        "obj %.8g (tol %.2g = %g x liblinear's rule, %d it, rel diff %.1e)"
        % (obj, tol, tol / tron_tol, model.n_iter_[0], (obj - ll_obj) / ll_obj),
        note="paired interleaved medians; linclass at the loosest of LIBLINEAR's tolerance "
             "x 1, 2, ..., 64 reaching LIBLINEAR's objective")


def _lbfgs_with_memory(memory, model, X, y):
    """``model.fit(X, y)`` with L-BFGS keeping ``memory`` curvature pairs on a
    small problem (linclass keeps 20 below 8,192 parameters by default,
    scikit-learn's L-BFGS-B 10): the row that runs scikit-learn's algorithm."""
    from linclass.linear import _lbfgs
    saved = _lbfgs.MEMORY_SMALL
    _lbfgs.MEMORY_SMALL = memory
    try:
        return model.fit(X, y)
    finally:
        _lbfgs.MEMORY_SMALL = saved


def _a9a_logistic_rows(X, y, repeat, sklm, liblinear):
    rows = []
    data = "a9a %dx%d" % X.shape
    C = 1.0
    y01 = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # --- liblinear -s 0 (TRON), bias penalised (-B 1)
        # LIBLINEAR's stopping rule: ||g|| <= eps * max(min(#pos, #neg), 1) / n * ||g0||
        tron_tol = 0.01 * max(min(y01.sum(), len(y01) - y01.sum()), 1) / len(y01)

        def tron_fit():
            return LogisticRegression(C=C, solver="tron", penalize_intercept=True,
                                      tol=tron_tol).fit(X, y01)

        if liblinear is None:
            lc_s, tron = _harness.median_time(tron_fit, repeat)
            tron_obj = _objective(X, y01, tron.coef_, tron.intercept_, C, True)
            rows.append(_harness.make_row("logistic binary L2 (tron)", data, None, None, lc_s,
                                          None, "obj %.8g" % tron_obj,
                                          note="liblinear-official is not installed"))
        else:
            yl = np.where(y01 == 1, 1.0, -1.0)

            def peer():
                return liblinear.train(yl, X, "-s 0 -c %g -e 0.01 -B 1 -q" % C)

            # fits of 20-60 ms: paired, interleaved, at least SHORT_FIT_ROUNDS rounds
            (ll_s, lc_s), (model, tron) = _harness.paired_median_times(
                [peer, tron_fit], max(repeat, SHORT_FIT_ROUNDS))
            tron_obj = _objective(X, y01, tron.coef_, tron.intercept_, C, True)
            w, b = model.get_decfun()
            w, b = np.asarray(w), float(b)
            if model.get_labels()[0] != 1:
                w, b = -w, -b
            ll_obj = _objective(X, y01, w[None, :], [b], C, True)
            rows.append(_harness.make_row(
                "logistic binary L2 (tron, eps 0.01)", data, "liblinear -s 0", ll_s, lc_s,
                "obj %.8g" % ll_obj,
                "obj %.8g (rel diff %.1e)" % (tron_obj, (tron_obj - ll_obj) / ll_obj),
                note="median of %d paired interleaved fits" % max(repeat, SHORT_FIT_ROUNDS)))
            rows.append(_tron_to_liblinear_objective(X, y01, C, repeat, tron_tol, ll_obj,
                                                     peer, data))
            rows.append(_a9a_liblinear_equal_objective(X, y01, yl, C, repeat, liblinear))
        # --- scikit-learn lbfgs / newton-cholesky, intercept not penalised; linclass at
        # its default solver ("auto": Newton on this sparse 123-feature problem) and with
        # solver="lbfgs"; all at tol=1e-6, timed paired and interleaved
        fits = [lambda: LogisticRegression(C=C, tol=1e-6).fit(X, y01),
                lambda: LogisticRegression(C=C, tol=1e-6, solver="lbfgs").fit(X, y01),
                lambda: _lbfgs_with_memory(10, LogisticRegression(C=C, tol=1e-6,
                                                                  solver="lbfgs"), X, y01)]
        names = ["auto", "lbfgs", "lbfgs memory 10"]
        if sklm is not None:
            fits += [lambda: sklm.LogisticRegression(C=C, tol=1e-6, max_iter=1000).fit(X, y01),
                     lambda: sklm.LogisticRegression(C=C, tol=1e-6, max_iter=1000,
                                                     solver="newton-cholesky").fit(X, y01)]
            names += ["sk lbfgs", "sk newton-cholesky"]
        times, models = _harness.paired_median_times(fits, repeat)
        t = dict(zip(names, times))
        m = dict(zip(names, models))
        obj = {k: _objective(X, y01, v.coef_, v.intercept_, C) for k, v in m.items()}
        note = "median of %d paired interleaved fits, tol=1e-6 all" % repeat
        if sklm is None:
            for k in ("auto", "lbfgs"):
                rows.append(_harness.make_row(
                    "logistic binary L2 (%s: %s)" % (k, m[k].solver_), data, None, None, t[k],
                    None, "obj %.8g (%d it)" % (obj[k], m[k].n_iter_[0]),
                    note="scikit-learn is not installed"))
            return rows
        for ours, peer in (("auto", "sk lbfgs"), ("auto", "sk newton-cholesky"),
                           ("lbfgs", "sk lbfgs"), ("lbfgs memory 10", "sk lbfgs")):
            rows.append(_harness.make_row(
                "logistic binary L2 (%s: %s)" % (ours, m[ours].solver_), data,
                "scikit-learn " + peer[3:], t[peer], t[ours],
                "obj %.10g (%d it)" % (obj[peer], m[peer].n_iter_[0]),
                "obj %.10g (%d it, rel diff %.1e)" % (
                    obj[ours], m[ours].n_iter_[0], (obj[ours] - obj[peer]) / obj[peer]),
                note=note))
    return rows


def _a9a_liblinear_equal_objective(X, y01, yl, C, repeat, liblinear):
    """linclass's default binary solver on liblinear's objective (bias
    penalised, ``penalize_intercept=True``, tol 1e-6) against liblinear -s 0
    at the loosest eps (1e-2, 1e-3, ...) whose objective is within 1e-5
    (relative) of linclass's or below it: an equal-objective comparison (at
    its default eps 0.01 liblinear stops ~5e-4 above the optimum)."""
    def ours():
        return LogisticRegression(C=C, penalize_intercept=True, tol=1e-6).fit(X, y01)

    def peer_at(eps):
        model = liblinear.train(yl, X, "-s 0 -c %g -e %g -B 1 -q" % (C, eps))
        w, b = model.get_decfun()
        w, b = np.asarray(w), float(b)
        if model.get_labels()[0] != 1:
            w, b = -w, -b
        return w[None, :], [b]

    first = ours()
    target = _objective(X, y01, first.coef_, first.intercept_, C, True)
    for eps in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
        ll_obj = _objective(X, y01, *peer_at(eps), C, True)
        if ll_obj <= target * (1 + 1e-5):
            break
    (ll_s, lc_s), (_, model) = _harness.paired_median_times(
        [lambda: peer_at(eps), ours], repeat)
    obj = _objective(X, y01, model.coef_, model.intercept_, C, True)
    return _harness.make_row(
        "logistic binary L2, bias penalised, equal objective (%s)" % model.solver_,
        "a9a %dx%d" % X.shape, "liblinear -s 0 -e %g" % eps, ll_s, lc_s,
        "obj %.10g" % ll_obj, "obj %.10g (rel diff %.1e)" % (obj, (obj - ll_obj) / ll_obj),
        note="median of %d paired interleaved fits; liblinear at the loosest eps "
             "reaching linclass's objective within 1e-5" % repeat)


def _featuresets(X):
    X = X.tocsr()
    return [{"f%d" % j: 1 for j in X.indices[X.indptr[i]:X.indptr[i + 1]]}
            for i in range(X.shape[0])]


def _maxent_rows(X, y, X_test, y_test, repeat, nltk_classify, quick):
    rows = []
    n_train = 1000 if quick else 5000
    train_fs = _featuresets(X[:n_train])
    labels = ["+1" if v > 0 else "-1" for v in y[:n_train]]
    test_fs = _featuresets(X_test[:2000])
    test_labels = ["+1" if v > 0 else "-1" for v in y_test[:2000]]
    n_names = len({name for fs in train_fs for name in fs})
    data = "a9a first %d, dict featuresets" % n_train
    for algorithm in ("gis", "iis"):
        def ours():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                return MaxEnt(algorithm, max_iter=9, tol=0,
                              gis_constant=n_names + 1).fit(train_fs, labels)

        lc_s, model = _harness.median_time(ours, repeat)
        acc = _accuracy(test_labels, model.predict(test_fs))
        task = "MaxEnt %s, 10 iterations" % algorithm.upper()
        if nltk_classify is None:
            rows.append(_harness.make_row(task, data, None, None, lc_s, None, "acc %.4f" % acc,
                                          note="nltk is not installed"))
            continue

        def peer():
            return nltk_classify.MaxentClassifier.train(
                list(zip(train_fs, labels)), algorithm=algorithm, max_iter=10, trace=0)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nl_s, theirs = _harness.median_time(peer, 1)
        nl_acc = _accuracy(test_labels, theirs.classify_many(test_fs))
        rows.append(_harness.make_row(task, data, "nltk", nl_s, lc_s, "acc %.4f" % nl_acc,
                                      "acc %.4f" % acc, note="nltk timed once"))
    if not quick:
        full_fs = _featuresets(X)
        full_labels = ["+1" if v > 0 else "-1" for v in y]
        for algorithm in ("gis", "iis"):
            def ours_full():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    return MaxEnt(algorithm, max_iter=100, tol=0).fit(full_fs, full_labels)

            lc_s, model = _harness.median_time(ours_full, 1)
            rows.append(_harness.make_row(
                "MaxEnt %s, 100 iterations" % algorithm.upper(), "a9a full, dict featuresets",
                None, None, lc_s, None,
                "acc %.4f" % _accuracy(test_labels, model.predict(test_fs)),
                note="NLTK not run (minutes); linclass timed once, C = max feature total"))
    return rows


def run(quick, data_dir):
    threadpoolctl = _harness.import_peer("threadpoolctl")
    if threadpoolctl is None:
        return _run(quick, data_dir)
    # scikit-learn and linclass both drive scipy's L-BFGS-B, whose BLAS calls on
    # short vectors suffer from OpenBLAS's thread pool on a loaded machine: both
    # sides run with one BLAS thread
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        return _run(quick, data_dir)


def _run(quick, data_dir):
    repeat = _harness.n_repeats(quick)
    data_dir = pathlib.Path(data_dir)
    sknb = _harness.import_peer("sklearn.naive_bayes")
    sklm = _harness.import_peer("sklearn.linear_model")
    liblinear = _harness.import_peer("liblinear.liblinearutil")
    nltk_classify = _harness.import_peer("nltk.classify")
    rows = []
    news_dir = data_dir / "20newsgroups_bydate"
    if not news_dir.exists() or _harness.import_peer("sklearn.feature_extraction.text") is None:
        rows.append(_harness.make_row("naive Bayes / multinomial logistic", "20news", None,
                                      None, None,
                                      note="20 Newsgroups data or scikit-learn's "
                                           "CountVectorizer missing"))
    else:
        X, y, X_test, y_test = _newsgroups(data_dir, quick)
        rows += _nb_rows(X, y, X_test, y_test, repeat, sknb)
        rows += _multinomial_rows(X, y, repeat, sklm, quick)
    if not (data_dir / "libsvm_binary" / "a9a.gz").exists():
        rows.append(_harness.make_row("logistic / MaxEnt", "a9a", None, None, None,
                                      note="a9a not found in %s" % data_dir))
        return rows
    from linclass.datasets import load_libsvm_binary
    X, y = load_libsvm_binary("a9a", "train", data_home=data_dir)
    X_test, y_test = load_libsvm_binary("a9a", "test", data_home=data_dir)
    if quick:
        X, y = X[:8000], y[:8000]
    rows += _a9a_logistic_rows(X, y, repeat, sklm, liblinear)
    rows += _maxent_rows(X, y, X_test, y_test, repeat, nltk_classify, quick)
    return rows


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=pathlib.Path, default=_harness.default_data_dir())
    args = parser.parse_args()
    print(_harness.format_table(run(args.quick, args.data)))
