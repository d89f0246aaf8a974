"""Naive Bayes fit + predict on 20 Newsgroups counts against scikit-learn,
paired round after round for a given time, optionally with the test suite
running beside it (the "under load" rows of the flat-solver issue).

Each round fits and predicts with scikit-learn and with linclass (alpha=1, the
shared ``CountVectorizer`` vocabulary of ``bench_probabilistic``), one BLAS
thread, and checks that the predictions are identical.  Reported per model:
the ratio scikit-learn / linclass of single rounds (median, 10th percentile,
minimum) and of windows of 5 consecutive rounds (each window's median times:
what one benchmark row with 5 paired repeats sees), minimum and median.

    python benchmarks/phases_nb_load.py [--seconds S] [--load] [--data DIR]

``--load`` starts ``python -m pytest -q tests`` in the repository beside the
measurement (the test suite, up to 2 threads, memory-hungry phases included)
and stops it at the end.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness  # noqa: E402,F401  (sets up the import path like every suite)
import bench_probabilistic  # noqa: E402

from linclass.linear import naive_bayes  # noqa: E402


def _rounds(X, y, X_test, seconds, sknb):
    times = {"MultinomialNB": [], "BernoulliNB": []}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, pair in times.items():
            preds, row = [], []
            for module in (sknb, naive_bayes):
                t0 = time.perf_counter()
                preds.append(getattr(module, name)(alpha=1.0).fit(X, y).predict(X_test))
                row.append(time.perf_counter() - t0)
            if not np.array_equal(preds[0], preds[1]):
                raise AssertionError("%s: predictions differ from scikit-learn's" % name)
            pair.append(row)
    return times


def _report(times):
    for name, pair in times.items():
        t = np.array(pair)
        ratio = t[:, 0] / t[:, 1]
        windows = [np.median(t[i:i + 5, 0]) / np.median(t[i:i + 5, 1])
                   for i in range(0, len(t) - 4, 5)]
        print("%-13s rounds %4d  single: median %.2f p10 %.2f min %.2f  |  5-round windows "
              "(%d): min %.2f median %.2f  |  median s: scikit-learn %.4f linclass %.4f"
              % (name, len(t), np.median(ratio), np.percentile(ratio, 10), ratio.min(),
                 len(windows), min(windows) if windows else np.nan,
                 np.median(windows) if windows else np.nan,
                 np.median(t[:, 0]), np.median(t[:, 1])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--load", action="store_true",
                        help="run the test suite beside the measurement")
    parser.add_argument("--data", default=os.environ.get("LINCLASS_DATA"))
    args = parser.parse_args(argv)
    import sklearn.naive_bayes as sknb
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
    X, y, X_test, _ = bench_probabilistic._newsgroups(args.data, False)
    load = None
    if args.load:
        load = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "tests"], cwd=HERE.parent, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(5)
    try:
        times = _rounds(X, y, X_test, args.seconds, sknb)
    finally:
        if load is not None:
            load.terminate()
            load.wait()
    print("load: %s" % ("the test suite beside it" if args.load else "none"))
    _report(times)


if __name__ == "__main__":
    main()
