"""Kernel methods: SVC (SMO) vs scikit-learn SVC and libsvm-official; kernel perceptron.

Cases, all at the same C, gamma, tolerance (1e-3) and cache size (200 MB), each
side single-threaded:

* a9a, RBF (C=1, gamma=0.05, LIBSVM's guide values): the full 32,561 training
  examples (``--quick``: a random 4,000), test accuracy on a9a.t (quick: 4,000).
* 20 Newsgroups subset (tf-idf built once with scikit-learn's TfidfVectorizer
  on the five ``comp.*`` groups; quick: 1,500 training documents), one-vs-one,
  linear kernel (C=1) and RBF (C=10, gamma=1).
* kernel perceptron (RBF, same gamma, 5 epochs, averaged) next to SVC on the
  same data (peer: linclass SVC).

Quality: test accuracy, number of support vectors and, for binary problems,
the dual objective ``1/2 a^T Q a - e^T a`` (linclass's own; scikit-learn's
computed from its dual_coef_ by the same kernel code).
"""
import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.kernels.kernel_perceptron import KernelPerceptron  # noqa: E402
from linclass.kernels import kernel_matrix  # noqa: E402
from linclass.kernels.svc import SVC  # noqa: E402

CACHE_MB = 200
TOL = 1e-3


def _dual_objective(X, support, coef, kernel, gamma):
    """1/2 c^T K c - sum|c| over the support vectors (blocks of 2,000 rows)."""
    S = X[support]
    quad = 0.0
    for start in range(0, len(support), 2000):
        K = kernel_matrix(S[start:start + 2000], S, kernel, gamma=gamma)
        quad += coef[start:start + 2000] @ (K @ coef)
    return 0.5 * quad - np.abs(coef).sum()


def _libsvm(X, y, Xt, yt, kernel, C, gamma, repeat):
    svmutil = _harness.import_peer("libsvm.svmutil")
    if svmutil is None:
        return None
    opts = "-s 0 -t %d -c %g -g %g -e %g -m %d -q" % (0 if kernel == "linear" else 2, C, gamma,
                                                      TOL, CACHE_MB)
    seconds, model = _harness.median_time(lambda: svmutil.svm_train(y, X, opts), repeat)
    pred, _, _ = svmutil.svm_predict(yt, Xt, model, "-q")
    return seconds, float(np.mean(np.asarray(pred) == yt)), model.get_nr_sv()


def _svc_case(task, data, X, y, Xt, yt, kernel, C, gamma, repeat, binary):
    rows = []
    ours_t, ours = _harness.median_time(
        lambda: SVC(kernel=kernel, C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit(X, y),
        repeat)
    acc = float(np.mean(ours.predict(Xt) == yt))
    q_ours = "acc %.4f, nSV %d" % (acc, len(ours.support_))
    sk = _harness.import_peer("sklearn.svm")
    if sk is not None:
        sk_t, ref = _harness.median_time(
            lambda: sk.SVC(kernel=kernel, C=C, gamma=gamma, tol=TOL,
                           cache_size=CACHE_MB).fit(X, y), repeat)
        sk_acc = float(np.mean(ref.predict(Xt) == yt))
        q_ref = "acc %.4f, nSV %d" % (sk_acc, len(ref.support_))
        q = q_ours
        if binary:
            obj_ref = _dual_objective(X, ref.support_, np.asarray(ref.dual_coef_.todense()
                                      if hasattr(ref.dual_coef_, "todense") else
                                      ref.dual_coef_).ravel(), kernel, gamma)
            q_ref += ", dual %.6g" % obj_ref
            q += ", dual %.6g (rel %.1e)" % (ours.dual_objective_[0],
                                            abs(ours.dual_objective_[0] - obj_ref) / abs(obj_ref))
        rows.append(_harness.make_row(task, data, "scikit-learn SVC", sk_t, ours_t, q_ref, q))
    else:
        rows.append(_harness.make_row(task, data, None, None, ours_t, None, q_ours,
                                      note="scikit-learn not installed"))
    lib = _libsvm(X, y, Xt, yt, kernel, C, gamma, repeat)
    if lib is not None:
        rows.append(_harness.make_row(task, data, "libsvm-official", lib[0], ours_t,
                                      "acc %.4f, nSV %d" % (lib[1], lib[2]), q_ours))
    else:
        rows.append(_harness.make_row(task, data, None, None, ours_t, None, q_ours,
                                      note="libsvm-official not installed"))
    return rows, ours_t, acc


def _perceptron_row(task, data, X, y, Xt, yt, gamma, svc_seconds, svc_acc, repeat):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, model = _harness.median_time(
            lambda: KernelPerceptron(kernel="rbf", gamma=gamma, max_iter=5, random_state=0,
                                     cache_size=CACHE_MB).fit(X, y), repeat)
    acc = float(np.mean(model.predict(Xt) == yt))
    return _harness.make_row(task, data, "linclass SVC (same data)", svc_seconds, t,
                             "acc %.4f" % svc_acc,
                             "acc %.4f, nSV %d" % (acc, len(model.support_)))


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    repeat = 1 if not quick else min(_harness.n_repeats(quick), 3)
    rows = []
    from linclass.datasets import load_libsvm_binary
    try:
        X, y = load_libsvm_binary("a9a", "train", data_home=data_dir)
        Xt, yt = load_libsvm_binary("a9a", "test", data_home=data_dir)
    except (OSError, ValueError) as exc:
        rows.append(_harness.make_row("SVC rbf", "a9a", None, None, None,
                                      note="skipped: a9a not found (%s)" % exc))
    else:
        label = "a9a"
        if quick:
            rng = np.random.default_rng(0)
            keep = np.sort(rng.choice(X.shape[0], 4000, replace=False))
            X, y = X[keep], y[keep]
            Xt, yt = Xt[:4000], yt[:4000]
            label = "a9a (4,000)"
        new, svc_t, svc_acc = _svc_case("SVC rbf C=1 g=0.05", label, X, y, Xt, yt, "rbf",
                                        1.0, 0.05, repeat, True)
        rows += new
        rows.append(_perceptron_row("kernel perceptron rbf", label, X, y, Xt, yt, 0.05,
                                    svc_t, svc_acc, repeat))
    sklearn_text = _harness.import_peer("sklearn.feature_extraction.text")
    if sklearn_text is None or not (data_dir / "20newsgroups_bydate").exists():
        rows.append(_harness.make_row("SVC ovo", "20 Newsgroups", None, None, None,
                                      note="skipped: 20newsgroups_bydate or scikit-learn missing"))
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
    y = train.target[tr].astype(float)
    yt = test.target[te].astype(float)
    label = "20NG comp.* (%d docs)" % len(tr)
    new, _, _ = _svc_case("SVC linear ovo C=1", label, X, y, Xt, yt, "linear", 1.0, 1.0,
                          repeat, False)
    rows += new
    new, svc_t, svc_acc = _svc_case("SVC rbf ovo C=10 g=1", label, X, y, Xt, yt, "rbf", 10.0,
                                    1.0, repeat, False)
    rows += new
    rows.append(_perceptron_row("kernel perceptron rbf", label, X, y, Xt, yt, 1.0, svc_t,
                                svc_acc, repeat))
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    result = run(quick, _harness.default_data_dir())
    print(_harness.format_table(result))
