"""Decisions and representer-theorem models: kernel ridge, string kernels, calibration.

Cases (linclass and the peer timed in the same process, paired and
interleaved: one call of each per round, medians over the rounds):

* kernel ridge regression of the +-1 labels of a9a (RBF, gamma=0.05,
  alpha=1; 2,000 training rows with ``--quick``, 5,000 otherwise) against
  scikit-learn's ``KernelRidge``; quality: test accuracy of the sign on 4,000
  a9a.t rows and the largest difference of the dual coefficients.
* the 3-spectrum string kernel on raw text (the first 400 characters of 20
  Newsgroups documents, comp.graphics vs sci.space; 600 / 1,500 documents)
  against the explicit character 3-gram map (scikit-learn's
  ``CountVectorizer(analyzer="char")``) and its sparse Gram product; quality:
  the largest difference of the two Gram matrices and the test accuracy of
  ``KernelRidgeClassifier`` on each.
* the gap-weighted subsequence kernel (n=3, decay 0.5) on the first 60
  characters of the same documents (200 / 400); no peer implements it, the
  row reports linclass's time only.
* Platt and isotonic calibration of MultinomialNB on a9a (train 10,000,
  calibration 5,000 held out, test a9a.t) against scikit-learn's
  ``CalibratedClassifierCV(FrozenEstimator(...))``; quality: the test Brier
  score before and after.
"""
import gc
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.datasets import load_svmlight_file  # noqa: E402
from linclass.decision import CalibratedClassifier  # noqa: E402
from linclass.kernels import (KernelRidge, KernelRidgeClassifier, SpectrumKernel,  # noqa: E402
                              SubsequenceKernel)
from linclass.linear import MultinomialNB  # noqa: E402
from linclass.metrics import brier_score_loss  # noqa: E402

NOTES = ["Timings are paired and interleaved (one linclass call, one peer call per "
         "round, medians); the machine was shared with other jobs while measuring."]


def _paired(fn_ours, fn_peer, repeat):
    """Median seconds of each, alternating calls; returns (ours_s, peer_s, ours, peer)."""
    times_a, times_b = [], []
    ours = peer = None
    for _ in range(max(1, repeat)):
        for which in (0, 1):
            fn = fn_ours if which == 0 else fn_peer
            if fn is None:
                continue
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                out = fn()
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
            if which == 0:
                times_a.append(elapsed)
                ours = out
            else:
                times_b.append(elapsed)
                peer = out
    return (statistics.median(times_a), statistics.median(times_b) if times_b else None,
            ours, peer)


def _a9a(data_dir):
    base = pathlib.Path(data_dir) / "libsvm_binary"
    X, y = load_svmlight_file(base / "a9a.gz", n_features=123)[:2]
    Xt, yt = load_svmlight_file(base / "a9a.t.gz", n_features=123)[:2]
    return X, y, Xt, yt


def _kernel_ridge(data_dir, quick, repeat):
    X, y, Xt, yt = _a9a(data_dir)
    n = 2000 if quick else 5000
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], n, replace=False))
    tidx = np.sort(rng.choice(Xt.shape[0], 4000, replace=False))
    Xs, ys, Xts, yts = X[idx].toarray(), y[idx], Xt[tidx].toarray(), yt[tidx]
    sk = _harness.import_peer("sklearn.kernel_ridge")
    ours_fn = lambda: KernelRidge(alpha=1.0, kernel="rbf", gamma=0.05).fit(Xs, ys)  # noqa: E731
    peer_fn = (lambda: sk.KernelRidge(alpha=1.0, kernel="rbf", gamma=0.05).fit(Xs, ys)) \
        if sk else None
    t_ours, t_peer, ours, peer = _paired(ours_fn, peer_fn, repeat)
    acc = float(np.mean(np.sign(ours.predict(Xts)) == yts))
    q_ours = "acc %.4f" % acc
    if peer is None:
        return _harness.make_row("kernel ridge (rbf)", "a9a %d" % n, None, None, t_ours, None,
                                 q_ours, note="scikit-learn not installed")
    diff = float(np.abs(ours.dual_coef_ - peer.dual_coef_).max())
    q_peer = "acc %.4f" % float(np.mean(np.sign(peer.predict(Xts)) == yts))
    return _harness.make_row("kernel ridge (rbf)", "a9a %d dense" % n,
                             "scikit-learn KernelRidge", t_peer, t_ours, q_peer,
                             q_ours + ", max|d dual| %.1e" % diff)


def _newsgroup_text(data_dir, quick, n_chars, n_docs):
    from linclass.datasets import load_20newsgroups
    train = load_20newsgroups("train", data_home=data_dir)
    names = list(train.target_names)
    pick = [names.index("comp.graphics"), names.index("sci.space")]
    target = np.asarray(train.target)
    idx = np.flatnonzero(np.isin(target, pick))
    rng = np.random.default_rng(0)
    idx = rng.choice(idx, min(n_docs, len(idx)), replace=False)      # shuffled
    docs = [" ".join(train.data[i].split())[:n_chars] for i in idx]
    labels = (target[idx] == pick[1]).astype(int)
    return docs, labels


def _spectrum(data_dir, quick, repeat):
    n_docs = 600 if quick else 1500
    docs, labels = _newsgroup_text(data_dir, quick, 400, n_docs)
    half = len(docs) // 2
    kernel = SpectrumKernel(3)
    fe = _harness.import_peer("sklearn.feature_extraction.text")

    def explicit():
        vec = fe.CountVectorizer(analyzer="char", ngram_range=(3, 3), lowercase=False)
        M = vec.fit_transform(docs).astype(np.float64)
        return (M @ M.T).toarray()
    t_ours, t_peer, K, K_ref = _paired(lambda: kernel(docs), explicit if fe else None, repeat)
    krc = KernelRidgeClassifier(alpha=1.0, kernel="precomputed").fit(K[:half, :half],
                                                                      labels[:half])
    acc = float(np.mean(krc.predict(K[half:, :half]) == labels[half:]))
    q_ours = "KRR acc %.4f" % acc
    if K_ref is None:
        return _harness.make_row("3-spectrum Gram", "20NG %d docs" % len(docs), None, None,
                                 t_ours, None, q_ours, note="scikit-learn not installed")
    Phi = fe.CountVectorizer(analyzer="char", ngram_range=(3, 3),
                             lowercase=False).fit_transform(docs).astype(np.float64)
    lin = KernelRidgeClassifier(alpha=1.0, kernel="linear").fit(Phi[:half], labels[:half])
    acc_ref = float(np.mean(lin.predict(Phi[half:]) == labels[half:]))
    return _harness.make_row("3-spectrum Gram", "20NG %d docs x 400 chars" % len(docs),
                             "char 3-gram CountVectorizer + X X^T", t_peer, t_ours,
                             "KRR acc %.4f" % acc_ref,
                             q_ours + ", max|dK| %.0e" % float(np.abs(K - K_ref).max()))


def _subsequence(data_dir, quick, repeat):
    n_docs = 200 if quick else 400
    docs, labels = _newsgroup_text(data_dir, quick, 60, n_docs)
    kernel = SubsequenceKernel(3, 0.5)
    t_ours, _, K, _ = _paired(lambda: kernel(docs), None, repeat)
    half = len(docs) // 2
    krc = KernelRidgeClassifier(alpha=0.1, kernel="precomputed").fit(K[:half, :half],
                                                                      labels[:half])
    acc = float(np.mean(krc.predict(K[half:, :half]) == labels[half:]))
    return _harness.make_row("subsequence kernel n=3", "20NG %d docs x 60 chars" % len(docs),
                             None, None, t_ours, None, "KRR acc %.4f" % acc,
                             note="no peer library implements the gap-weighted kernel")


def _calibration(data_dir, quick, repeat):
    X, y, Xt, yt = _a9a(data_dir)
    y, yt = (y > 0).astype(int), (yt > 0).astype(int)
    rng = np.random.default_rng(1)
    idx = rng.permutation(X.shape[0])
    tr, cal = idx[:10000], idx[10000:15000]
    nb = MultinomialNB().fit(X[tr], y[tr])
    raw = brier_score_loss(yt, nb.predict_proba(Xt)[:, 1])
    rows = []
    skc = _harness.import_peer("sklearn.calibration")
    frozen = _harness.import_peer("sklearn.frozen")
    for method in ("sigmoid", "isotonic"):
        ours_fn = lambda: CalibratedClassifier(nb, method=method, cv="prefit").fit(  # noqa
            X[cal], y[cal])
        peer_fn = (lambda: skc.CalibratedClassifierCV(frozen.FrozenEstimator(nb),  # noqa
                                                      method=method).fit(X[cal], y[cal])) \
            if skc and frozen else None
        t_ours, t_peer, ours, peer = _paired(ours_fn, peer_fn, repeat)
        b_ours = brier_score_loss(yt, ours.predict_proba(Xt)[:, 1])
        q_ours = "Brier %.4f -> %.4f" % (raw, b_ours)
        if peer is None:
            rows.append(_harness.make_row("calibration (%s)" % method, "a9a NB", None, None,
                                          t_ours, None, q_ours, note="peer missing"))
            continue
        b_peer = brier_score_loss(yt, peer.predict_proba(Xt)[:, 1])
        rows.append(_harness.make_row("calibration (%s)" % method,
                                      "a9a MultinomialNB, 5,000 held out",
                                      "scikit-learn CalibratedClassifierCV", t_peer, t_ours,
                                      "Brier %.4f -> %.4f" % (raw, b_peer), q_ours))
    return rows


def run(quick, data_dir):
    repeat = _harness.n_repeats(quick)
    rows = [_kernel_ridge(data_dir, quick, repeat), _spectrum(data_dir, quick, repeat),
            _subsequence(data_dir, quick, repeat)]
    rows.extend(_calibration(data_dir, quick, repeat))
    return rows


if __name__ == "__main__":
    for row in run("--quick" in sys.argv, _harness.default_data_dir()):
        print(row)
