"""Run the linclass benchmark suites against their peers and record the results.

Usage::

    python benchmarks/run.py [--quick] [suite ...] [--data DIR] [--repeat N]
                             [--output benchmarks/RESULTS.md] [--no-write] [--list]

Every ``benchmarks/bench_<name>.py`` is a suite (``run(quick, data_dir)`` returning
rows, see ``_harness.py``); all suites run when none is named.  One aligned table
row is printed per case, and each suite's section of the results file is replaced
(other suites' sections are kept).
"""
import argparse
import importlib.util
import pathlib
import shlex
import sys
import time
import traceback

BENCH_DIR = pathlib.Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import _harness  # noqa: E402  (also puts the repository root on sys.path)


def discover():
    """{suite name: path} of every benchmarks/bench_*.py, sorted by name."""
    return {p.stem[len("bench_"):]: p for p in sorted(BENCH_DIR.glob("bench_*.py"))}


def load_suite(name, path):
    spec = importlib.util.spec_from_file_location("bench_" + name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise AttributeError("%s has no run(quick, data_dir) function" % path.name)
    return module


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", metavar="suite",
                        help="suites to run (default: all); 'svmlight' or 'bench_svmlight'")
    parser.add_argument("--quick", action="store_true",
                        help="small cases and 3 repeats: a few minutes in all")
    parser.add_argument("--data", type=pathlib.Path, default=None,
                        help="data directory (default: $LINCLASS_DATA, else "
                             "<repo>/../shared/data)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed repeats per case (default 5, 3 with --quick)")
    parser.add_argument("--output", type=pathlib.Path, default=BENCH_DIR / "RESULTS.md",
                        help="results file to update (default benchmarks/RESULTS.md)")
    parser.add_argument("--no-write", action="store_true",
                        help="print the tables only; leave the results file alone")
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    args = parser.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be >= 1")
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    available = discover()
    if args.list:
        print("\n".join(available))
        return 0
    names = [s[len("bench_"):] if s.startswith("bench_") else s for s in args.suites]
    names = [n[:-3] if n.endswith(".py") else n for n in names] or list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        print("unknown suite(s): %s; available: %s"
              % (", ".join(unknown), ", ".join(available)), file=sys.stderr)
        return 2
    data_dir = args.data if args.data is not None else _harness.default_data_dir()
    _harness.REPEAT_OVERRIDE = args.repeat
    command = " ".join(["python benchmarks/run.py"] + [shlex.quote(a) for a in argv])
    print("data: %s%s" % (data_dir, "" if data_dir.exists() else "  (MISSING)"))
    print("repeats: %d%s" % (_harness.n_repeats(args.quick), " (quick)" if args.quick else ""))

    failed = []
    for name in names:
        print("\n== %s ==" % name, flush=True)
        start = time.perf_counter()
        error, rows = None, []
        try:
            module = load_suite(name, available[name])
            rows = list(module.run(args.quick, data_dir))
            for row in rows:
                _harness.check_row(row)
        except Exception as exc:  # one broken suite must not stop the others
            traceback.print_exc()
            error = "%s: %s" % (type(exc).__name__, exc)
            failed.append(name)
        if rows:
            print(_harness.format_table(rows))
            for row in rows:
                if row.get("note"):
                    print("  note (%s / %s): %s" % (row["task"], row["data"], row["note"]))
        elapsed = time.perf_counter() - start
        print("(%s: %.1f s)" % (name, elapsed), flush=True)
        if args.no_write:
            continue
        if error and not rows:
            print("not updating %s for the failed suite %s" % (args.output, name))
            continue
        notes = list(getattr(module, "NOTES", ()))
        notes.append("suite wall time %.1f s" % elapsed)
        section = _harness.render_section(name, command, rows, notes, error=error)
        _harness.update_results(args.output, name, section)
    if not args.no_write:
        print("\nresults written to %s" % args.output)
    if failed:
        print("FAILED suites: %s" % ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
