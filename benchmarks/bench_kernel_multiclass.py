"""Kernel Crammer--Singer (``KernelMultiClassSVM``, dual structural SVM) vs one-vs-one SVC.

Issue #13's benchmark: the kernelised multi-class structural SVM (one-hot
classes, RBF kernel, solved in the dual) next to the one-vs-one SVC of LIBSVM
(libsvm-official) and of linclass (:class:`~linclass.kernels.SVC`), in one
process, on

* a9a, the first 5,000 training rows (quick: 2,000), test accuracy on the
  first 5,000 rows of a9a.t; RBF with LIBSVM's guide values C=1, gamma=0.05;
* 20 Newsgroups, the five ``comp.*`` groups (tf-idf built once with
  scikit-learn's TfidfVectorizer; quick: 1,500 training documents), RBF with
  C=10, gamma=1 (the values of bench_kernel).

The models are different (one joint multi-class hinge vs ``K(K-1)/2`` binary
SVMs with an unregularised bias), so the rows compare accuracy and time at
the same C and gamma, not objectives.  ``KernelMultiClassSVM`` stops at a
relative duality gap of 1e-3 (its default); the SVCs at LIBSVM's KKT
tolerance 1e-3 with a 200 MB kernel cache.  The timings are interleaved
(linclass, peer, linclass, peer, ...) and the medians are reported; LIBSVM's
``svm_problem`` (the conversion of the data to its node lists) is built once,
outside the timed calls.  ``KernelMultiClassSVM`` computes the rows of the
training Gram matrix it needs on demand (the rows of examples whose block
moves) into an LRU cache of the same 200 MB; computing them still dominates
its time on these data.
"""
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.kernels import KernelMultiClassSVM, SVC  # noqa: E402

CACHE_MB = 200
TOL = 1e-3

NOTES = ["KernelMultiClassSVM = kernel Crammer-Singer (one joint hinge, regularised bias via "
         "the kernel + 1), dual block-coordinate solver, stops at relative duality gap 1e-3; "
         "SVC = one-vs-one binary SVMs (SMO, KKT tol 1e-3, 200 MB cache). Same C and gamma; "
         "timings interleaved, medians."]


def _interleaved(fns, repeat):
    """Median seconds and last result of each function, the calls interleaved."""
    times = [[] for _ in fns]
    results = [None] * len(fns)
    for _ in range(max(1, repeat)):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            results[k] = fn()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times], results


def _case(task, data, X, y, Xt, yt, C, gamma, repeat):
    def ours():
        return KernelMultiClassSVM(kernel="rbf", C=C, gamma=gamma, tol=TOL,
                                   cache_size=CACHE_MB, random_state=0).fit(X, y)

    def svc():
        return SVC(kernel="rbf", C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit(X, y)

    fns = [ours, svc]
    svmutil = _harness.import_peer("libsvm.svmutil")
    if svmutil is not None:
        opts = "-s 0 -t 2 -c %g -g %g -e %g -m %d -q" % (C, gamma, TOL, CACHE_MB)
        problem = svmutil.svm_problem(list(y), X)   # conversion to LIBSVM nodes: not timed
        fns.append(lambda: svmutil.svm_train(problem, opts))
    seconds, models = _interleaved(fns, repeat)
    acc = float(np.mean(models[0].predict(Xt) == yt))
    gap = (models[0].objective_ - models[0].dual_objective_) / models[0].objective_
    q_ours = "acc %.4f, nSV %d, gap %.1e, %d passes" % (acc, len(models[0].support_), gap,
                                                        models[0].n_iter_)
    svc_acc = float(np.mean(models[1].predict(Xt) == yt))
    rows = [_harness.make_row(task, data, "linclass SVC ovo", seconds[1], seconds[0],
                              "acc %.4f, nSV %d" % (svc_acc, len(models[1].support_)), q_ours)]
    if svmutil is not None:
        pred, _, _ = svmutil.svm_predict(yt, Xt, models[2], "-q")
        lib_acc = float(np.mean(np.asarray(pred) == yt))
        rows.append(_harness.make_row(task, data, "libsvm-official SVC ovo", seconds[2],
                                      seconds[0], "acc %.4f, nSV %d"
                                      % (lib_acc, models[2].get_nr_sv()), q_ours))
    else:
        rows.append(_harness.make_row(task, data, None, None, seconds[0], None, q_ours,
                                      note="libsvm-official not installed"))
    return rows


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    repeat = _harness.n_repeats(quick) if quick else 3
    rows = []
    from linclass.datasets import load_libsvm_binary
    n_a9a = 2000 if quick else 5000
    try:
        X, y = load_libsvm_binary("a9a", "train", data_home=data_dir)
        Xt, yt = load_libsvm_binary("a9a", "test", data_home=data_dir)
    except (OSError, ValueError) as exc:
        rows.append(_harness.make_row("kernel Crammer-Singer rbf", "a9a", None, None, None,
                                      note="skipped: a9a not found (%s)" % exc))
    else:
        X, y = X[:n_a9a], y[:n_a9a]
        Xt, yt = Xt[:5000], yt[:5000]
        rows += _case("kernel Crammer-Singer rbf C=1 g=0.05", "a9a (first %d)" % n_a9a,
                      X, y, Xt, yt, 1.0, 0.05, repeat)
    sklearn_text = _harness.import_peer("sklearn.feature_extraction.text")
    if sklearn_text is None or not (data_dir / "20newsgroups_bydate").exists():
        rows.append(_harness.make_row("kernel Crammer-Singer rbf", "20 Newsgroups", None, None,
                                      None, note="skipped: 20newsgroups_bydate or "
                                      "scikit-learn missing"))
        return rows
    from linclass.datasets import load_20newsgroups
    train = load_20newsgroups("train", data_home=data_dir)
    test = load_20newsgroups("test", data_home=data_dir)
    groups = [k for k, name in enumerate(train.target_names) if name.startswith("comp.")]
    tr = np.flatnonzero(np.isin(train.target, groups))
    te = np.flatnonzero(np.isin(test.target, groups))
    if quick:
        tr = np.random.default_rng(0).choice(tr, 1500, replace=False)
        te = te[:1500]
    vec = sklearn_text.TfidfVectorizer()
    X = vec.fit_transform([train.data[i] for i in tr]).tocsr()
    Xt = vec.transform([test.data[i] for i in te]).tocsr()
    y = np.asarray(train.target)[tr].astype(float)
    yt = np.asarray(test.target)[te].astype(float)
    rows += _case("kernel Crammer-Singer rbf C=10 g=1", "20NG comp.* (%d docs)" % len(tr),
                  X, y, Xt, yt, 10.0, 1.0, repeat)
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    result = run(quick, _harness.default_data_dir())
    print(_harness.format_table(result))
