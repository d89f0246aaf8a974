"""Per-phase time of one multinomial ``LogisticRegression`` fit (issue 16's row).

Usage::

    python benchmarks/phases_logistic.py [--quick] [--n-jobs 1 2] [--C 10] [--data DIR]

For each ``n_jobs``: one fit on 20 Newsgroups tf-idf, and for every phase of an
L-BFGS iteration its calls, wall time, the CPU time of the calling thread and
the CPU time of all threads (``time.process_time``; the pool threads' share is
their difference).  Phases: ``eval`` (loss and gradient: the two-phase pass for
a multinomial model on CSR rows), ``direction`` (the compact-representation
passes over the history, fused with ``g.d`` and the unit-step trial point),
``store`` / ``defer`` (the new curvature pair: a pass of its own below 8192
parameters, else only s after a backtracked step), ``step`` (backtracked trial points),
``dot`` / ``max_abs`` (the driver's vector work when not fused); ``rest`` is
the fit's wall time outside those phases (validation, setup, Python).  A phase
whose all-thread CPU time is close to twice its wall time used both cores; on a
shared machine read the CPU columns, not the wall times.
"""
import argparse
import collections
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402


def profile_fit(X, y, n_jobs, C):
    from linclass.linear import _lbfgs, logistic
    stats = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    depth = [0]
    patched = []

    def wrap(owner, name, label):
        original = owner.__dict__[name]

        def timed(*args, **kwargs):
            if depth[0]:
                return original(*args, **kwargs)
            depth[0] += 1
            w0, p0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                s = stats[label]
                s[0] += 1
                s[1] += time.perf_counter() - w0
                s[2] += time.thread_time() - t0
                s[3] += time.process_time() - p0
                depth[0] -= 1
        setattr(owner, name, timed)
        patched.append((owner, name, original))

    for name in ("direction", "store", "defer", "step", "dot", "max_abs"):
        wrap(_lbfgs._CompactHistory, name, name)
    wrap(logistic._Objective, "l2", "eval")
    wrap(logistic._ThreadedObjective, "l2", "eval")
    wrap(logistic._Objective, "l2_into", "eval")     # the blocked driver's fun_into
    try:
        w0, p0 = time.perf_counter(), time.process_time()
        model = logistic.LogisticRegression(C=C, n_jobs=n_jobs).fit(X, y)
        wall, cpu = time.perf_counter() - w0, time.process_time() - p0
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)
    print("n_jobs=%d: wall %.2f s, CPU (all threads) %.2f s, %d iterations, objective %.10g"
          % (n_jobs, wall, cpu, model.n_iter_[0], model.objective_))
    print("  %-10s %6s %10s %12s %14s %14s" % ("phase", "calls", "wall s", "ms/call",
                                              "caller CPU s", "all CPU s"))
    inside = 0.0
    for label, (n, w, t, p) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
        inside += w
        print("  %-10s %6d %10.3f %12.2f %14.3f %14.3f" % (label, n, w, 1e3 * w / max(n, 1), t, p))
    print("  %-10s %6s %10.3f" % ("rest", "", wall - inside))
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--data", type=pathlib.Path, default=None,
                        help="benchmark data folder (default: as benchmarks/run.py)")
    args = parser.parse_args(argv)
    X, y, _, _, _, _ = _harness.newsgroups_tfidf(args.data or _harness.default_data_dir(),
                                                  args.quick)
    print("20NG tf-idf %d x %d, %d classes" % (X.shape[0], X.shape[1], len(set(y))))
    for n_jobs in args.n_jobs:
        profile_fit(X, y, n_jobs, args.C)


if __name__ == "__main__":
    main()
