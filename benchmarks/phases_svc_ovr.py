"""LinearSVC one-vs-rest on 20 Newsgroups tf-idf: scikit-learn's LinearSVC
(LIBLINEAR, one class after the other) vs linclass's fused one-vs-rest dual
coordinate descent (the default) and linclass's per-class path
(``linclass.linear.svm._FUSED_OVR = False``), all single-threaded, in one
process, interleaved, timed in CPU seconds (``time.process_time``).
``--plain`` adds the default run with plain coordinate steps only
(``linclass.linear.svm._RELAX[loss] = 1.0``, ``_SUBSPACE_EVERY[loss] = 0``;
the default over-relaxes the squared hinge's steps by 1.3 and gives the
hinge a step on its free variables every 20 passes).

Prints per loss: median CPU seconds of each, ratio = LIBLINEAR / linclass,
the summed primal objective of the binary problems (the optimum is shared: the
values agree to the tolerance) and the test accuracy.

    python benchmarks/phases_svc_ovr.py [--quick] [--repeat N] [--loss hinge] [--plain]
"""
import argparse
import gc
import pathlib
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.linear import svm as _svm  # noqa: E402
from linclass.linear.svm import LinearSVC, svm_primal_objective  # noqa: E402


def _primal_sum(X, y, model, loss):
    cost = np.ones(X.shape[0])
    return sum(svm_primal_objective(X, np.where(y == c, 1.0, -1.0),
                                    np.append(model.coef_[k], model.intercept_[k]), 1.0,
                                    cost, loss)
               for k, c in enumerate(model.classes_))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loss", action="append", choices=["squared_hinge", "hinge"])
    parser.add_argument("--plain", action="store_true",
                        help="also time the default run with plain coordinate steps only")
    parser.add_argument("--data", type=pathlib.Path, default=_harness.default_data_dir())
    args = parser.parse_args()
    from sklearn.svm import LinearSVC as SkLinearSVC
    X, y, Xt, yt = _harness.newsgroups_tfidf(args.data, args.quick)[:4]
    print("20NG tf-idf %d x %d, %d stored entries" % (*X.shape, X.nnz))
    for loss in args.loss or ["squared_hinge", "hinge"]:
        params = dict(loss=loss, C=1.0, tol=1e-4, max_iter=1000, random_state=0)

        def peer():
            return SkLinearSVC(**params).fit(X, y)

        def fused():
            return LinearSVC(**params).fit(X, y)

        def per_class():
            _svm._FUSED_OVR = False
            try:
                return LinearSVC(**params).fit(X, y)
            finally:
                _svm._FUSED_OVR = True

        def plain():
            relax, every = _svm._RELAX[loss], _svm._SUBSPACE_EVERY[loss]
            _svm._RELAX[loss], _svm._SUBSPACE_EVERY[loss] = 1.0, 0
            try:
                return LinearSVC(**params).fit(X, y)
            finally:
                _svm._RELAX[loss], _svm._SUBSPACE_EVERY[loss] = relax, every

        runs = [("liblinear", peer), ("linclass fused", fused), ("linclass per class", per_class)]
        if args.plain:
            runs.append(("linclass plain steps", plain))
        times = {name: [] for name, _ in runs}
        models = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(args.repeat):
                for name, fn in runs:
                    gc.collect()
                    start = time.process_time()
                    models[name] = fn()
                    times[name].append(time.process_time() - start)
        base = statistics.median(times["liblinear"])
        for name, _ in runs:
            t = statistics.median(times[name])
            print("%-13s %-20s CPU %7.3f s  ratio %5.2f  primal %.6f  acc %.4f"
                  % (loss, name, t, base / t, _primal_sum(X, y, models[name], loss),
                     np.mean(models[name].predict(Xt) == yt)))


if __name__ == "__main__":
    main()
