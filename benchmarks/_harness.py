"""Shared helpers of the benchmark suites: timing, rows, tables, RESULTS.md.

A suite is a module ``benchmarks/bench_<name>.py`` with::

    def run(quick: bool, data_dir: pathlib.Path) -> list[dict]

returning one dict per case with the keys of :data:`ROW_KEYS` (``note``
optional).  Suites import this module as ``import _harness`` (``run.py`` and
running a suite as a script both put ``benchmarks/`` on ``sys.path``), time
their calls with :func:`median_time` and build rows with :func:`make_row`.

Importing this module also puts the repository root first on ``sys.path`` so
that the benchmarks measure the ``linclass`` of this checkout (built in place).
"""
import datetime
import gc
import importlib
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import time

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

ROW_KEYS = ("task", "data", "peer", "peer_seconds", "linclass_seconds", "ratio",
            "peer_quality", "linclass_quality")
COLUMNS = ("task", "data", "peer", "peer s", "linclass s", "ratio",
           "peer quality", "linclass quality")

# set by run.py --repeat; None: 3 repeats with --quick, else 5
REPEAT_OVERRIDE = None

# peers whose versions are recorded when a suite has imported them
KNOWN_PEERS = {"sklearn": "scikit-learn", "pycrfsuite": "python-crfsuite",
               "nltk": "nltk", "liblinear": "liblinear-official",
               "libsvm": "libsvm-official", "scipy": "scipy"}


def default_data_dir():
    """``$LINCLASS_DATA``, else ``<repo>/../shared/data``."""
    env = os.environ.get("LINCLASS_DATA")
    if env:
        return pathlib.Path(env)
    return REPO_ROOT.parent / "shared" / "data"


def n_repeats(quick):
    """Number of timed repeats: ``--repeat`` if given, else 3 (quick) or 5."""
    if REPEAT_OVERRIDE is not None:
        return REPEAT_OVERRIDE
    return 3 if quick else 5


def median_time(fn, repeat, warmup=0):
    """Run ``fn()`` ``warmup`` + ``repeat`` times; return (median seconds, last result).

    A garbage collection runs before each call and the collector is off while
    the call is timed, so that one call does not pay for another's garbage.
    """
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(max(1, repeat)):
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - start)
        finally:
            if was_enabled:
                gc.enable()
    return statistics.median(times), result


def import_peer(module_name):
    """The peer module, or None when it is not installed."""
    try:
        return importlib.import_module(module_name)
    except ImportError:
        return None


def make_row(task, data, peer, peer_seconds, linclass_seconds, peer_quality=None,
             linclass_quality=None, note=None):
    """One result row; ``ratio`` = peer / linclass time (> 1: linclass faster)."""
    ratio = None
    if peer_seconds is not None and linclass_seconds:
        ratio = peer_seconds / linclass_seconds
    row = {"task": task, "data": data, "peer": peer, "peer_seconds": peer_seconds,
           "linclass_seconds": linclass_seconds, "ratio": ratio,
           "peer_quality": peer_quality, "linclass_quality": linclass_quality}
    if note:
        row["note"] = note
    return row


def check_row(row):
    """Raise ValueError when a suite's row misses a key of the interface."""
    missing = [k for k in ROW_KEYS if k not in row]
    if missing:
        raise ValueError("benchmark row %r lacks keys %s" % (row.get("task"), missing))


def _fmt_seconds(value):
    if value is None:
        return "-"
    if value >= 100:
        return "%.0f" % value
    if value >= 1:
        return "%.2f" % value
    if value >= 0.001:
        return "%.4f" % value
    return "%.2e" % value


def _fmt_ratio(value):
    if value is None:
        return "-"
    return "%.2f" % value if value < 100 else "%.0f" % value


def row_cells(row):
    """The eight table cells of a row, as strings."""
    return [str(row["task"]), str(row["data"]),
            str(row["peer"]) if row.get("peer") else "-",
            _fmt_seconds(row.get("peer_seconds")),
            _fmt_seconds(row.get("linclass_seconds")),
            _fmt_ratio(row.get("ratio")),
            "-" if row.get("peer_quality") is None else str(row["peer_quality"]),
            "-" if row.get("linclass_quality") is None else str(row["linclass_quality"])]


def _numeric_column(index):
    return index in (3, 4, 5)


def format_table(rows):
    """Aligned plain-text table (header, rule, one line per row)."""
    cells = [list(COLUMNS)] + [row_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = []
    for n, line in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if _numeric_column(i) and n else c.ljust(w)
                               for i, (c, w) in enumerate(zip(line, widths))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_markdown(rows):
    """The same table in Markdown."""
    head = "| " + " | ".join(COLUMNS) + " |"
    rule = "|" + "|".join("---:" if _numeric_column(i) else "---"
                          for i in range(len(COLUMNS))) + "|"
    body = ["| " + " | ".join(c.replace("|", "\\|") for c in row_cells(r)) + " |"
            for r in rows]
    return "\n".join([head, rule] + body)


def git_revision():
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        rev = out.stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (rev + ("+local changes" if dirty else "")) if rev else None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info():
    """One line: CPU count, platform, python, numpy and peer versions."""
    import numpy
    parts = ["%s CPUs" % os.cpu_count(), "%s %s" % (platform.system(), platform.machine()),
             "python %s" % platform.python_version(), "numpy %s" % numpy.__version__]
    for module, dist in KNOWN_PEERS.items():
        mod = sys.modules.get(module)
        if mod is not None:
            version = getattr(mod, "__version__", None)
            if version is None:
                try:
                    from importlib.metadata import version as dist_version
                    version = dist_version(dist)
                except Exception:
                    version = "?"
            parts.append("%s %s" % (dist, version))
    return ", ".join(parts)


_SECTION_RE = r"<!-- suite: {name} -->\n.*?<!-- end suite: {name} -->\n?"
HEADER = """# linclass benchmark results

Written by `benchmarks/run.py` (see `benchmarks/README.md`); one section per suite,
replaced whenever that suite is run again.  Times are medians of repeated runs in one
process; **ratio = peer seconds / linclass seconds** (above 1: linclass is faster).

"""


def render_section(name, command, rows, notes=(), error=None):
    """The Markdown section of one suite, between its HTML comment markers."""
    lines = ["<!-- suite: %s -->" % name, "## %s" % name, "",
             "- command: `%s`" % command,
             "- date: %s" % datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
             "- machine: %s" % machine_info()]
    rev = git_revision()
    if rev:
        lines.append("- linclass revision: %s" % rev)
    lines.append("")
    if error:
        lines += ["**The suite failed:** `%s`" % error, ""]
    if rows:
        lines += [format_markdown(rows), ""]
    row_notes = ["%s / %s: %s" % (r["task"], r["data"], r["note"]) for r in rows if r.get("note")]
    all_notes = list(notes) + row_notes
    if all_notes:
        lines.append("Notes:")
        lines += ["- %s" % n for n in all_notes]
        lines.append("")
    lines.append("<!-- end suite: %s -->" % name)
    return "\n".join(lines) + "\n"


def update_results(path, name, section):
    """Replace suite ``name``'s section in ``path`` (append it if new); keep the rest."""
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    pattern = re.compile(_SECTION_RE.format(name=re.escape(name)), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        if not text.endswith("\n\n"):
            text = text.rstrip("\n") + "\n\n"
        text += section
    path.write_text(text, encoding="utf-8")


_NEWS_CACHE = {}


def newsgroups_tfidf(data_dir, quick):
    """20 Newsgroups bydate as tf-idf, built once per process and shared by the
    suites: ``(X_train, y_train, X_test, y_test, docs_train, docs_test)``.
    ``quick``: 3,000 training and 2,000 test documents drawn with seed 0."""
    import numpy as np
    key = (str(data_dir), quick)
    if key not in _NEWS_CACHE:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from linclass.datasets import load_20newsgroups
        train = load_20newsgroups("train", data_home=data_dir)
        test = load_20newsgroups("test", data_home=data_dir)
        docs_train, y_train = train.data, np.asarray(train.target)
        docs_test, y_test = test.data, np.asarray(test.target)
        if quick:
            rng = np.random.default_rng(0)
            a = np.sort(rng.choice(len(docs_train), 3000, replace=False))
            b = np.sort(rng.choice(len(docs_test), 2000, replace=False))
            docs_train = [docs_train[i] for i in a]
            y_train = y_train[a]
            docs_test = [docs_test[i] for i in b]
            y_test = y_test[b]
        vec = TfidfVectorizer()
        X_train = vec.fit_transform(docs_train).tocsr()
        X_test = vec.transform(docs_test).tocsr()
        _NEWS_CACHE[key] = (X_train, y_train, X_test, y_test, docs_train, docs_test)
    return _NEWS_CACHE[key]


def paired_median_times(fns, repeat):
    """Time the callables ``fns`` interleaved (A B A B ...), ``repeat`` rounds.

    On a shared machine the load drifts during a run; alternating the peer and
    linclass in one process gives both the same conditions.  A garbage
    collection runs before each call and the collector is off while it is
    timed.  Returns ``(median seconds per callable, last result per callable)``.
    """
    times = [[] for _ in fns]
    results = [None] * len(fns)
    for _ in range(max(1, repeat)):
        for k, fn in enumerate(fns):
            gc.collect()
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                start = time.perf_counter()
                results[k] = fn()
                times[k].append(time.perf_counter() - start)
            finally:
                if was_enabled:
                    gc.enable()
    return [statistics.median(t) for t in times], results
