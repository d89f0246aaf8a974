"""Margin-based linear classifiers: linclass vs LIBLINEAR / scikit-learn.

Cases (targets from issue 4, recorded, never asserted):

* 20 Newsgroups (tf-idf built once with scikit-learn's TfidfVectorizer,
  20 classes): LinearSVC one-vs-rest, L2 and L1 loss, vs scikit-learn's
  LinearSVC (LIBLINEAR) at the same C and tol (dual objective within 1e-3
  relative, accuracy within 0.1 point, ratio >= 1), and with ``n_jobs=2``;
  Crammer-Singer vs LIBLINEAR ``-s 4`` (ratio >= 2); averaged perceptron vs
  ``SGDClassifier(loss="perceptron", average=True)`` with the same epochs
  (ratio >= 2, accuracy not lower); ridge vs ``RidgeClassifier`` (same
  solution, ratio >= 1); Weston-Watkins next to Crammer-Singer and OvR.
* a9a / w8a (``libsvm_binary``): binary LinearSVC vs liblinear-official
  (``-s 1`` / ``-s 3``, ``-B 1``) and lasso classification vs scikit-learn's
  ``Lasso`` on +-1 targets.  liblinear ``-s 3`` stops at its 300-pass cap
  above the optimum, so the hinge has two equal-footing rows besides the
  default one: the same 300-pass cap, and linclass timed at the smallest
  ``max_iter`` whose primal objective reaches liblinear's final primal.
* L1-regularised LinearSVC (``penalty="l1"``, squared hinge, primal
  coordinate descent) vs LIBLINEAR ``-s 5``: liblinear-official on a9a/w8a,
  scikit-learn's ``LinearSVC(penalty="l1", dual=False)`` on 20NG (OvR);
  quality: accuracy, primal objective ``||w||_1 + C sum loss`` (summed over
  the binary problems) and the number of non-zero weights.  Paired fits.

Quality strings: ``acc`` is test accuracy (a9a: a9a.t; w8a and 20NG: their
test split or, for w8a, training accuracy); ``obj`` the summed objective of
the binary problems: the peer's primal, linclass's dual (a lower bound of the
optimum) and ``rel`` their relative gap.  ``--quick`` subsamples 20NG to
3,000 training / 2,000 test messages and a9a/w8a to 8,000 rows.
"""
import pathlib
import sys
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.linear.least_squares import LassoClassifier, RidgeClassifier  # noqa: E402
from linclass.linear.multiclass import CrammerSingerSVC, WestonWatkinsSVC  # noqa: E402
from linclass.linear.perceptron import Perceptron  # noqa: E402
from linclass.linear import svm as _svm  # noqa: E402
from linclass.linear.svm import LinearSVC, l1_svm_objective, svm_primal_objective  # noqa: E402

def _newsgroups(data_dir, quick):
    return _harness.newsgroups_tfidf(data_dir, quick)[:4]


def _libsvm(data_dir, name, quick):
    from linclass.datasets import load_libsvm_binary
    train = load_libsvm_binary(name, "train", data_home=data_dir)
    X, y = train.data if hasattr(train, "data") else train[0], \
        train.target if hasattr(train, "target") else train[1]
    X = sp.csr_matrix(X)
    y = np.asarray(y)
    if name == "a9a":
        test = load_libsvm_binary(name, "test", data_home=data_dir)
        Xt = sp.csr_matrix(test.data if hasattr(test, "data") else test[0])
        yt = np.asarray(test.target if hasattr(test, "target") else test[1])
        if Xt.shape[1] < X.shape[1]:
            Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], X.shape[1]))
    else:
        Xt, yt = X, y
    if quick:
        X, y = X[:8000], y[:8000]
        Xt, yt = Xt[:8000], yt[:8000]
    return X, y, Xt, yt


def _quiet(fn):
    def wrapped():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return wrapped


def _ovr_primal_sum(X, y, classes, coef, intercept, C, loss):
    total = 0.0
    cost = np.full(X.shape[0], C)
    if len(classes) == 2:
        problems = [(1, np.where(y == classes[1], 1.0, -1.0))]
    else:
        problems = [(k, np.where(y == c, 1.0, -1.0)) for k, c in enumerate(classes)]
    for row, (k, ysign) in enumerate(problems):
        w = np.append(coef[row], intercept[row])
        total += svm_primal_objective(X, ysign, w, 1.0, cost, loss)
    return total


def _ovr_l1_sum(X, y, classes, coef, intercept, C):
    """Summed ``||w||_1 + C sum max(0, 1 - m)^2`` of the one-vs-rest problems."""
    total = 0.0
    for k in range(coef.shape[0]):
        pos = classes[1] if len(classes) == 2 else classes[k]
        ysign = np.where(y == pos, 1.0, -1.0)
        total += l1_svm_objective(X, ysign, np.append(coef[k], intercept[k]), 1.0,
                                  np.full(X.shape[0], C))
    return total


def _crammer_singer_primal(X, y, classes, coef, intercept, C):
    """0.5 ||[W, b]||^2 + C sum_i max(0, max_{m != y_i} 1 + s_im - s_iy_i) (bias
    weight regularised, as LIBLINEAR's -B 1 and linclass do)."""
    codes = np.searchsorted(classes, y)
    scores = np.asarray(X @ coef.T) + intercept
    n = len(codes)
    margins = 1.0 + scores - scores[np.arange(n), codes][:, None]
    margins[np.arange(n), codes] = 0.0
    return 0.5 * (float(np.sum(coef ** 2)) + float(np.sum(intercept ** 2))) \
        + C * float(np.maximum(margins.max(axis=1), 0.0).sum())


def _acc(model, X, y):
    return float(np.mean(model.predict(X) == y))


def _hinge_primal(model, X, y, C):
    ysign = np.where(y == model.classes_[1], 1.0, -1.0)
    w = np.append(model.coef_[0], model.intercept_[0])
    return svm_primal_objective(X, ysign, w, 1.0, np.full(X.shape[0], C), "hinge")


def _hinge_equal_objective_rows(X, y, Xt, yt, prob, opts, target, C, tol, repeat, data):
    """liblinear ``-s 3`` stops at its 300-pass cap, above the optimum that
    linclass's default run (up to max_iter=1000 passes) goes on to: two rows
    at equal footing, (a) the same 300-pass cap and (b) linclass with the
    smallest pass cap whose primal objective is at or below liblinear's final
    primal (found by an untimed search over max_iter; then timed paired)."""
    import liblinear.liblinearutil as liblinear

    def ours(m):
        return _quiet(lambda: LinearSVC(loss="hinge", C=C, tol=tol, max_iter=m,
                                        random_state=0).fit(X, y))
    rows = []
    (p_s, o_s), (model, fit) = _harness.paired_median_times(
        [lambda: liblinear.train(prob, opts), ours(300)], repeat)
    o_obj = _hinge_primal(fit, X, y, C)
    rows.append(_harness.make_row(
        "LinearSVC hinge, 300-pass cap", data, "liblinear-official -s 3 (300-pass cap)",
        p_s, o_s, "primal %.4f" % target,
        "primal %.4f (%d passes, rel %+.1e) acc %.4f" % (o_obj, fit.n_iter_,
                                                        (o_obj - target) / target,
                                                        _acc(fit, Xt, yt)),
        note="median of %d paired fits" % repeat))
    # smallest cap reaching liblinear's primal: doubling, then bisection
    lo, hi = 0, 1
    while hi < 1000 and _hinge_primal(ours(hi)(), X, y, C) > target:
        lo, hi = hi, min(2 * hi, 1000)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _hinge_primal(ours(mid)(), X, y, C) > target:
            lo = mid
        else:
            hi = mid
    (p_s, o_s), (model, fit) = _harness.paired_median_times(
        [lambda: liblinear.train(prob, opts), ours(hi)], repeat)
    o_obj = _hinge_primal(fit, X, y, C)
    rows.append(_harness.make_row(
        "LinearSVC hinge to liblinear's objective", data, "liblinear-official -s 3", p_s,
        o_s, "primal %.4f (300 passes)" % target,
        "primal %.4f (max_iter=%d, rel %+.1e) acc %.4f" % (o_obj, hi,
                                                         (o_obj - target) / target,
                                                         _acc(fit, Xt, yt)),
        note="linclass timed at the smallest max_iter whose primal objective is at or "
             "below liblinear's final one (untimed search); median of %d paired fits"
             % repeat))
    return rows


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    repeat = _harness.n_repeats(quick)
    heavy = 1 if not quick else 1        # the slow peer fits (CS at tol 1e-4) run once
    sklearn = _harness.import_peer("sklearn")
    rows = []
    news_ok = (data_dir / "20newsgroups_bydate").exists() and sklearn is not None
    if news_ok:
        from sklearn.linear_model import RidgeClassifier as SkRidge
        from sklearn.linear_model import SGDClassifier
        from sklearn.svm import LinearSVC as SkLinearSVC
        Xtr, ytr, Xte, yte = _newsgroups(data_dir, quick)
        data = "20NG tf-idf%s (%dx%d)" % (" quick" if quick else "", *Xtr.shape)
        C, tol = 1.0, 1e-4
        for loss, short in (("squared_hinge", "L2"), ("hinge", "L1")):
            peer_fit = _quiet(lambda: SkLinearSVC(loss=loss, C=C, tol=tol, max_iter=1000,
                                                  random_state=0).fit(Xtr, ytr))
            ours_fit = _quiet(lambda: LinearSVC(loss=loss, C=C, tol=tol, max_iter=1000,
                                                random_state=0).fit(Xtr, ytr))
            ours2_fit = _quiet(lambda: LinearSVC(loss=loss, C=C, tol=tol, max_iter=1000,
                                                 random_state=0, n_jobs=2).fit(Xtr, ytr))
            # interleaved (peer, linclass, linclass n_jobs=2, ...): the same load for all
            (p_s, o_s, o2_s), (peer, ours, ours2) = _harness.paired_median_times(
                [peer_fit, ours_fit, ours2_fit], repeat)
            p_obj = _ovr_primal_sum(Xtr, ytr, peer.classes_, peer.coef_, peer.intercept_, C, loss)
            d_obj = -float(np.sum(ours.dual_objective_))
            rel = abs(p_obj - d_obj) / p_obj
            pq = "acc %.4f obj %.2f" % (_acc(peer, Xte, yte), p_obj)
            oq = "acc %.4f obj %.2f rel %.1e" % (_acc(ours, Xte, yte), d_obj, rel)
            rows.append(_harness.make_row("LinearSVC %s OvR" % short, data,
                                          "sklearn LinearSVC (liblinear)", p_s, o_s, pq, oq))
            rows.append(_harness.make_row("LinearSVC %s OvR n_jobs=2" % short, data,
                                          "sklearn LinearSVC (liblinear)", p_s, o2_s, pq,
                                          "acc %.4f" % _acc(ours2, Xte, yte)))
        # L1-regularised squared hinge (liblinear -s 5 inside scikit-learn), paired
        l1_peer_fit = _quiet(lambda: SkLinearSVC(penalty="l1", dual=False, C=C, tol=tol,
                                                 max_iter=1000, random_state=0).fit(Xtr, ytr))
        l1_fit = _quiet(lambda: LinearSVC(penalty="l1", dual=False, C=C, tol=tol,
                                          max_iter=1000, random_state=0).fit(Xtr, ytr))
        (p_s, o_s), (peer, ours) = _harness.paired_median_times([l1_peer_fit, l1_fit], repeat)
        p_obj = _ovr_l1_sum(Xtr, ytr, peer.classes_, peer.coef_, peer.intercept_, C)
        o_obj = _ovr_l1_sum(Xtr, ytr, ours.classes_, ours.coef_, ours.intercept_, C)
        rows.append(_harness.make_row(
            "LinearSVC penalty=l1 OvR", data,
            "sklearn LinearSVC(penalty=l1, dual=False) (liblinear -s 5)", p_s, o_s,
            "acc %.4f obj %.2f nnz %d" % (_acc(peer, Xte, yte), p_obj,
                                          np.count_nonzero(peer.coef_)),
            "acc %.4f obj %.2f nnz %d rel %.1e" % (_acc(ours, Xte, yte), o_obj,
                                                   np.count_nonzero(ours.coef_),
                                                   (o_obj - p_obj) / p_obj),
            note="median of %d paired fits" % repeat))
        # Crammer-Singer at LIBLINEAR's tol as passed by scikit-learn; paired and
        # interleaved (peer, linclass, ...) so that both see the same load
        cs_peer_fit = _quiet(lambda: SkLinearSVC(multi_class="crammer_singer", C=C, tol=tol,
                                                 max_iter=1000, random_state=0).fit(Xtr, ytr))
        cs_fit = _quiet(lambda: CrammerSingerSVC(C=C, tol=tol, max_iter=1000,
                                                 random_state=0).fit(Xtr, ytr))
        (p_s, o_s), (peer, cs) = _harness.paired_median_times([cs_peer_fit, cs_fit], heavy)
        p_obj = _crammer_singer_primal(Xtr, ytr, peer.classes_, peer.coef_, peer.intercept_, C)
        o_obj = _crammer_singer_primal(Xtr, ytr, cs.classes_, cs.coef_, cs.intercept_, C)
        d_obj = -cs.dual_objective_
        rows.append(_harness.make_row(
            "Crammer-Singer", data, "sklearn LinearSVC crammer_singer (liblinear -s 4)",
            p_s, o_s, "acc %.4f primal %.6f" % (_acc(peer, Xte, yte), p_obj),
            "acc %.4f primal %.6f dual %.6f (gap %.1e, %d passes)"
            % (_acc(cs, Xte, yte), o_obj, d_obj, (o_obj - d_obj) / o_obj, cs.n_iter_),
            note="median of %d paired fits; the dual is a lower bound of the optimum"
                 % heavy))
        ww_fit = _quiet(lambda: WestonWatkinsSVC(C=C, tol=1e-2, max_iter=1000,
                                                 random_state=0).fit(Xtr, ytr))
        w_s, ww = _harness.median_time(ww_fit, min(repeat, 3))
        rows.append(_harness.make_row(
            "Weston-Watkins (tol 1e-2)", data, None, None, w_s, None,
            "acc %.4f (CS %.4f, OvR L2 see above)" % (_acc(ww, Xte, yte), _acc(cs, Xte, yte)),
            note="no mainstream peer implements Weston-Watkins; compare with the CS and "
                 "OvR rows"))
        # averaged perceptron, same number of epochs
        epochs = 10
        sgd_fit = _quiet(lambda: SGDClassifier(loss="perceptron", penalty=None, alpha=0.0,
                                               learning_rate="constant", eta0=1.0,
                                               average=True, max_iter=epochs, tol=None,
                                               shuffle=True, random_state=0).fit(Xtr, ytr))
        perc_fit = _quiet(lambda: Perceptron(average=True, max_iter=epochs,
                                             random_state=0).fit(Xtr, ytr))
        p_s, peer = _harness.median_time(sgd_fit, repeat)
        o_s, perc = _harness.median_time(perc_fit, repeat)
        rows.append(_harness.make_row(
            "averaged perceptron %d epochs" % epochs, data,
            "sklearn SGDClassifier(perceptron, average)", p_s, o_s,
            "acc %.4f" % _acc(peer, Xte, yte),
            "acc %.4f (%d epochs)" % (_acc(perc, Xte, yte), perc.n_iter_),
            note="peer: one-vs-rest binary perceptrons; linclass: multi-class perceptron"))
        # ridge
        ridge_peer = lambda: SkRidge(alpha=1.0).fit(Xtr, ytr)  # noqa: E731
        ridge_ours = _quiet(lambda: RidgeClassifier(alpha=1.0, tol=1e-6).fit(Xtr, ytr))
        p_s, peer = _harness.median_time(ridge_peer, repeat)
        o_s, ridge = _harness.median_time(ridge_ours, repeat)
        diff = float(np.max(np.abs(peer.coef_ - ridge.coef_)) / np.max(np.abs(peer.coef_)))
        rows.append(_harness.make_row("ridge classifier", data, "sklearn RidgeClassifier",
                                      p_s, o_s, "acc %.4f" % _acc(peer, Xte, yte),
                                      "acc %.4f coef rel diff %.1e" % (_acc(ridge, Xte, yte),
                                                                       diff)))
    else:
        rows.append(_harness.make_row("20NG cases", "20 Newsgroups", None, None, None,
                                      note="skipped: 20newsgroups_bydate data or "
                                           "scikit-learn missing"))

    liblinear = _harness.import_peer("liblinear.liblinearutil")
    for name in ("a9a", "w8a"):
        if not (data_dir / "libsvm_binary").exists():
            break
        X, y, Xt, yt = _libsvm(data_dir, name, quick)
        data = "%s%s (%dx%d)" % (name, " quick" if quick else "", *X.shape)
        C, tol = 1.0, 1e-4
        for loss, solver_type in (("squared_hinge", 1), ("hinge", 3)):
            ours_fit = _quiet(lambda: LinearSVC(loss=loss, C=C, tol=tol, max_iter=1000,
                                                random_state=0).fit(X, y))
            o_s, ours = _harness.median_time(ours_fit, repeat)
            d_obj = -float(ours.dual_objective_[0])
            oq = "acc %.4f obj %.2f (%d passes%s)" % (
                _acc(ours, Xt, yt), d_obj, ours.n_iter_,
                " incl. primal Newton" if loss == "squared_hinge"
                and ours.n_iter_ > _svm._NEWTON_AFTER_PASSES else "")
            if liblinear is None:
                rows.append(_harness.make_row("LinearSVC %s" % loss, data, None, None, o_s,
                                              None, oq, note="liblinear-official missing"))
                continue
            ysign = np.where(y == ours.classes_[1], 1, -1)
            prob = liblinear.problem(ysign.tolist(), X)
            opts = "-s %d -c %g -e %g -B 1 -q" % (solver_type, C, tol)
            p_s, model = _harness.median_time(lambda: liblinear.train(prob, opts), repeat)
            w, b = model.get_decfun()
            w = np.append(np.asarray(w), b)
            if model.get_labels()[0] != 1:
                w = -w
            p_obj = svm_primal_objective(X, ysign.astype(float), w, 1.0,
                                         np.full(X.shape[0], C), loss)
            pred = np.where(np.asarray(Xt @ w[:-1]).ravel() + w[-1] > 0, ours.classes_[1],
                            ours.classes_[0])
            rel = abs(p_obj - d_obj) / p_obj
            rows.append(_harness.make_row(
                "LinearSVC %s" % loss, data, "liblinear-official -s %d" % solver_type, p_s,
                o_s, "acc %.4f obj %.2f" % (np.mean(pred == yt), p_obj),
                oq + " rel %.1e" % rel))
            if loss == "hinge":
                rows.extend(_hinge_equal_objective_rows(X, y, Xt, yt, prob, opts, p_obj,
                                                        C, tol, repeat, data))
        if liblinear is not None:
            ysign = np.where(y == np.unique(y)[1], 1, -1)
            prob = liblinear.problem(ysign.tolist(), X)
            opts = "-s 5 -c %g -e %g -B 1 -q" % (C, tol)
            l1_fit = _quiet(lambda: LinearSVC(penalty="l1", dual=False, C=C, tol=tol,
                                              max_iter=1000, random_state=0).fit(X, y))
            (p_s, o_s), (model, ours) = _harness.paired_median_times(
                [lambda: liblinear.train(prob, opts), l1_fit], repeat)
            w, b = model.get_decfun()
            w = np.append(np.asarray(w), b)
            if model.get_labels()[0] != 1:
                w = -w
            cost = np.full(X.shape[0], C)
            p_obj = l1_svm_objective(X, ysign.astype(float), w, 1.0, cost)
            o_obj = float(ours.objective_[0])
            pred = np.where(np.asarray(Xt @ w[:-1]).ravel() + w[-1] > 0, np.unique(y)[1],
                            np.unique(y)[0])
            rows.append(_harness.make_row(
                "LinearSVC penalty=l1", data, "liblinear-official -s 5", p_s, o_s,
                "acc %.4f obj %.2f nnz %d" % (np.mean(pred == yt), p_obj,
                                              np.count_nonzero(w[:-1])),
                "acc %.4f obj %.2f nnz %d rel %.1e" % (_acc(ours, Xt, yt), o_obj,
                                                       np.count_nonzero(ours.coef_),
                                                       (o_obj - p_obj) / p_obj),
                note="median of %d paired fits" % repeat))
        if sklearn is not None:
            from sklearn.linear_model import Lasso
            alpha = 1e-3
            ysign = np.where(y == np.unique(y)[1], 1.0, -1.0)
            p_s, peer = _harness.median_time(
                _quiet(lambda: Lasso(alpha=alpha, tol=1e-4, max_iter=1000).fit(X, ysign)),
                repeat)
            o_s, lasso = _harness.median_time(
                _quiet(lambda: LassoClassifier(alpha=alpha, tol=1e-4, max_iter=1000).fit(X, y)),
                repeat)
            diff = float(np.max(np.abs(peer.coef_ - lasso.coef_[0])))
            acc_peer = float(np.mean(np.where(peer.predict(Xt) > 0, np.unique(y)[1],
                                              np.unique(y)[0]) == yt))
            rows.append(_harness.make_row(
                "lasso classifier a=1e-3", data, "sklearn Lasso on +-1 targets", p_s, o_s,
                "acc %.4f nnz %d" % (acc_peer, np.count_nonzero(peer.coef_)),
                "acc %.4f nnz %d max|dw| %.1e" % (_acc(lasso, Xt, yt),
                                                  np.count_nonzero(lasso.coef_), diff)))
    return rows


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=pathlib.Path, default=_harness.default_data_dir())
    args = parser.parse_args()
    print(_harness.format_table(run(args.quick, args.data)))
