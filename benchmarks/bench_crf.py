"""Linear-chain CRF: linclass ``CRF`` vs python-crfsuite (CRFsuite ``lbfgs``).

Cases (data in ``<data>``; see each folder's README):

* CoNLL-2000 chunking with CRFsuite's chunking template (19 conjunctions +
  BOS/EOS; linclass: ``linclass.features.CRFSUITE_CHUNKING``, CRFsuite: the same
  string features built in Python as its ``example/chunking.py``), L-BFGS with
  L2 ``c2=1``, 100 iterations on both sides: chunk F1 on the test set, the
  median time per iteration of each (CRFsuite's own per-iteration log times
  vs linclass's per-iteration history), their ratio, the same with
  ``n_jobs=2`` (20 iterations), and the time linclass needs to reach CRFsuite's final
  objective.
* CoNLL-2002 esp and ned (ned: full runs only) with the sklearn-crfsuite
  tutorial features (dicts, python-crfsuite input on both sides), ``c1=0.1,
  c2=0.1``, 100 iterations, ``all_possible_transitions=True``: entity F1 on
  testb, whole-training time ratio; and CRFsuite's online trainers ``ap``,
  ``pa``, ``arow`` at their defaults on esp (same epochs).

Training times exclude feature extraction on both sides (linclass: its
features are extracted once before the timer, and the estimator is fitted on
those; CRFsuite: items appended before ``train``).
"""
import pathlib
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass import metrics  # noqa: E402
from linclass.datasets import read_conll  # noqa: E402
from linclass.features.templates import CRFSUITE_CHUNKING  # noqa: E402
from linclass.sequence import CRF  # noqa: E402

ITERATIONS = 100
NOTES = [
    "Peer: python-crfsuite `Trainer(algorithm='lbfgs')` with the same c1/c2/max_iterations "
    "(and `feature.possible_transitions` as linclass's `all_possible_transitions`); same "
    "features on both sides (CRFsuite's observed-pair state features).",
    "Chunking ratio = CRFsuite median CPU seconds per iteration / linclass median CPU "
    "seconds per iteration (both from the per-iteration logs of one run each, in the same "
    "process; CRFsuite's log times iterations with clock(), i.e. process CPU time, so "
    "linclass's are CPU time too -- wall-clock times are meaningless on this machine).  "
    "The n_jobs=2 row compares wall-clock per iteration with linclass's own n_jobs=1 (CPU "
    "time adds the threads up).  NER ratio "
    "= whole `train` wall time ratio.",
]


def _read(path, token_cols, label_col):
    sents = read_conll(path)
    X = [[tuple(row[i] for i in token_cols) for row in s] for s in sents]
    Y = [[row[label_col] for row in s] for s in sents]
    return X, Y


def chunking_features(sent):
    """CRFsuite example/chunking.py attributes (strings), BOS/EOS."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import bench_sequence
    return bench_sequence.crfsuite_chunking_features(sent)


def ner_features(sent):
    import bench_sequence
    return bench_sequence.crfsuite_ner_features(sent)


def crfsuite_fit(pycrfsuite, feats, Y, params, path, algorithm="lbfgs"):
    trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
    trainer.set_params(params)
    for x, y in zip(feats, Y):
        trainer.append(x, y)
    t0 = time.perf_counter()
    trainer.train(path)
    seconds = time.perf_counter() - t0
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return trainer.logparser, seconds, tagger


def _per_iteration(history, key="cpu_seconds"):
    """Median CPU seconds per iteration (CRFsuite's log reports clock(), CPU time)."""
    t = np.array([0.0] + [h[key] for h in history])
    return float(np.median(np.diff(t)))


def case_chunking(data_dir, quick, rows, pycrfsuite):
    folder = data_dir / "conll2000_chunking"
    Xtr, Ytr = _read(folder / "train.txt.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "test.txt.gz", (0, 1), 2)
    iters = 20 if quick else ITERATIONS
    if quick:
        Xtr, Ytr = Xtr[:3000], Ytr[:3000]
    fits = {}
    for n_jobs in (1, 2):
        crf = CRF(features=CRFSUITE_CHUNKING, columns=("w", "pos"), c1=0.0, c2=1.0,
                  max_iterations=iters if n_jobs == 1 else min(iters, 20), n_jobs=n_jobs)
        t0 = time.perf_counter()
        crf.fit(Xtr, Ytr)
        total = time.perf_counter() - t0
        f1 = metrics.chunk_f1(Yte, crf.predict(Xte))
        fits[n_jobs] = (crf, total, f1)
    crf1, total1, f1_lin = fits[1]
    per_lin = _per_iteration(crf1.history_)
    per_lin2 = _per_iteration(fits[2][0].history_, "seconds")
    if pycrfsuite is None:
        rows.append(_harness.make_row("chunking CRF L2 (%d it) s/iter" % iters, "CoNLL-2000",
                                      "python-crfsuite", None, per_lin, None,
                                      "F1 %.4f" % f1_lin, note="python-crfsuite missing"))
        return
    feats_tr = [chunking_features(s) for s in Xtr]
    feats_te = [chunking_features(s) for s in Xte]
    with tempfile.TemporaryDirectory() as tmp:
        log, seconds, tagger = crfsuite_fit(
            pycrfsuite, feats_tr, Ytr, {"c1": 0.0, "c2": 1.0, "max_iterations": iters},
            tmp + "/chunk.crfsuite")
        f1_peer = metrics.chunk_f1(Yte, [tagger.tag(x) for x in feats_te])
        tagger.close()
    peer_times = [it["time"] for it in log.iterations]
    per_peer = float(np.median(peer_times))
    final_peer = log.last_iteration["loss"]
    # CRFsuite logs the loss with 6 decimals: "reached" allows that rounding
    reach = next((h["cpu_seconds"] for h in crf1.history_
                  if h["objective"] <= final_peer + 1e-6), None)
    peer_obj = [it["loss"] for it in log.iterations]
    lin_obj = [h["objective"] for h in crf1.history_]
    same = next((k for k, (a, b) in enumerate(zip(lin_obj, peer_obj))
                 if abs(a - b) > 1e-6 * abs(b)), min(len(lin_obj), len(peer_obj)))
    note = ("linclass %d it (%s), objective %.1f; CRFsuite %d it, objective %.1f; CPU s in "
            "the iterations: linclass %.1f, CRFsuite %.1f; wall: linclass fit incl. feature "
            "extraction %.1fs, CRFsuite train %.1fs; linclass reaches CRFsuite's final "
            "objective after %s CPU; the two objective logs agree to 1e-6 (relative) for the "
            "first %d iterations (the same line search and steps; rounding differences grow "
            "later); evaluations: linclass %d, CRFsuite %d; n_jobs=1 wall s/iter %.3f"
            % (crf1.n_iter_, crf1.stop_reason_, crf1.objective_, len(log.iterations),
               final_peer, crf1.history_[-1]["cpu_seconds"], sum(peer_times), total1, seconds,
               "%.1fs" % reach if reach is not None else "never (within its iterations)",
               same, sum(h["evaluations"] for h in crf1.history_),
               sum(it["linesearch_trials"] for it in log.iterations),
               _per_iteration(crf1.history_, "seconds")))
    rows.append(_harness.make_row("chunking CRF L2 c2=1 (%d it) s/iter" % iters,
                                  "CoNLL-2000 %d sent" % len(Xtr), "python-crfsuite", per_peer,
                                  per_lin, "F1 %.4f" % f1_peer, "F1 %.4f" % f1_lin, note=note))
    per_lin1_wall = _per_iteration(crf1.history_[:fits[2][0].n_iter_], "seconds")
    rows.append(_harness.make_row("chunking CRF L2 wall s/iter, n_jobs=2 vs n_jobs=1",
                                  "CoNLL-2000 %d sent" % len(Xtr), "linclass n_jobs=1",
                                  per_lin1_wall, per_lin2, "F1 %.4f" % f1_lin,
                                  "F1 %.4f (%d it)" % (fits[2][2], fits[2][0].n_iter_),
                                  note="wall-clock medians over the same first %d iterations; "
                                  "the gradient is summed over 2 sentence blocks of equal "
                                  "token counts (GIL released), in block order"
                                  % fits[2][0].n_iter_))


def case_chunking_sgd(data_dir, quick, rows, pycrfsuite):
    """CRFsuite's l2sgd against CRF(algorithm="l2sgd"): same epochs, same c2."""
    folder = data_dir / "conll2000_chunking"
    Xtr, Ytr = _read(folder / "train.txt.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "test.txt.gz", (0, 1), 2)
    epochs = 5 if quick else 30
    if quick:
        Xtr, Ytr = Xtr[:3000], Ytr[:3000]
    crf = CRF(algorithm="l2sgd", features=CRFSUITE_CHUNKING, columns=("w", "pos"), c2=1.0,
              max_iterations=epochs, period=0)
    t0 = time.perf_counter()
    crf.fit(Xtr, Ytr)
    t_lin = time.perf_counter() - t0
    f1_lin = metrics.chunk_f1(Yte, crf.predict(Xte))
    label = "chunking CRF l2sgd c2=1 (%d epochs)" % epochs
    if pycrfsuite is None:
        rows.append(_harness.make_row(label, "CoNLL-2000", "python-crfsuite", None, t_lin, None,
                                      "F1 %.4f" % f1_lin, note="python-crfsuite missing"))
        return
    feats_tr = [chunking_features(s) for s in Xtr]
    feats_te = [chunking_features(s) for s in Xte]
    with tempfile.TemporaryDirectory() as tmp:
        _, t_peer, tagger = crfsuite_fit(
            pycrfsuite, feats_tr, Ytr, {"c2": 1.0, "max_iterations": epochs, "period": epochs + 1},
            tmp + "/sgd.crfsuite", algorithm="l2sgd")
        f1_peer = metrics.chunk_f1(Yte, [tagger.tag(x) for x in feats_te])
        tagger.close()
    note = ("wall time of train (CRFsuite, incl. its calibration) vs fit (linclass, incl. "
            "feature extraction and calibration); linclass objective %.1f after %d epochs, "
            "calibrated eta %.3g" % (crf.objective_, crf.n_iter_, crf.learning_rate_))
    rows.append(_harness.make_row(label, "CoNLL-2000 %d sent" % len(Xtr), "python-crfsuite",
                                  t_peer, t_lin, "F1 %.4f" % f1_peer, "F1 %.4f" % f1_lin,
                                  note=note))


def case_ner(data_dir, quick, rows, pycrfsuite, lang):
    folder = data_dir / "conll2002_ner"
    Xtr, Ytr = _read(folder / ("%s.train.gz" % lang), (0, 1), 2)
    Xte, Yte = _read(folder / ("%s.testb.gz" % lang), (0, 1), 2)
    iters = 30 if quick else ITERATIONS
    feats_tr = [ner_features(s) for s in Xtr]
    feats_te = [ner_features(s) for s in Xte]
    crf = CRF(c1=0.1, c2=0.1, max_iterations=iters, all_possible_transitions=True)
    t0 = time.perf_counter()
    crf.fit(feats_tr, Ytr)
    t_lin = time.perf_counter() - t0
    f1_lin = metrics.chunk_f1(Yte, crf.predict(feats_te))
    if pycrfsuite is None:
        rows.append(_harness.make_row("NER CRF c1=c2=0.1 (%d it)" % iters, "CoNLL-2002 " + lang,
                                      "python-crfsuite", None, t_lin, None, "F1 %.4f" % f1_lin,
                                      note="python-crfsuite missing"))
        return
    with tempfile.TemporaryDirectory() as tmp:
        log, t_peer, tagger = crfsuite_fit(
            pycrfsuite, feats_tr, Ytr, {"c1": 0.1, "c2": 0.1, "max_iterations": iters,
                                        "feature.possible_transitions": True},
            tmp + "/ner.crfsuite")
        f1_peer = metrics.chunk_f1(Yte, [tagger.tag(x) for x in feats_te])
        tagger.close()
    note = ("linclass fit includes attribute extraction from the dicts; objective %.1f "
            "(%d it) vs CRFsuite %.1f (%d it); per-iteration median %.3fs vs %.3fs"
            % (crf.objective_, crf.n_iter_, log.last_iteration["loss"], len(log.iterations),
               _per_iteration(crf.history_), float(np.median([i["time"] for i in
                                                                log.iterations]))))
    rows.append(_harness.make_row("NER CRF c1=c2=0.1 (%d it)" % iters, "CoNLL-2002 %s testb"
                                  % lang, "python-crfsuite", t_peer, t_lin, "F1 %.4f" % f1_peer,
                                  "F1 %.4f" % f1_lin, note=note))


def case_ner_online(data_dir, quick, rows, pycrfsuite):
    """CRFsuite's online trainers (ap, pa, arow) against CRF(algorithm=...): the
    esp tutorial features, the same epochs; whole-training wall time."""
    folder = data_dir / "conll2002_ner"
    Xtr, Ytr = _read(folder / "esp.train.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "esp.testb.gz", (0, 1), 2)
    iters = 20 if quick else ITERATIONS
    feats_tr = [ner_features(s) for s in Xtr]
    feats_te = [ner_features(s) for s in Xte]
    for algorithm in ("ap", "pa", "arow"):
        label = "NER CRF %s (%d epochs)" % (algorithm, iters)
        crf = CRF(algorithm=algorithm, max_iterations=iters, all_possible_transitions=True)
        t0 = time.perf_counter()
        crf.fit(feats_tr, Ytr)
        t_lin = time.perf_counter() - t0
        f1_lin = metrics.chunk_f1(Yte, crf.predict(feats_te))
        if pycrfsuite is None:
            rows.append(_harness.make_row(label, "CoNLL-2002 esp testb", "python-crfsuite",
                                          None, t_lin, None, "F1 %.4f" % f1_lin,
                                          note="python-crfsuite missing"))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            _, t_peer, tagger = crfsuite_fit(
                pycrfsuite, feats_tr, Ytr, {"max_iterations": iters,
                                            "feature.possible_transitions": True},
                tmp + "/online.crfsuite", algorithm=algorithm)
            f1_peer = metrics.chunk_f1(Yte, [tagger.tag(x) for x in feats_te])
            tagger.close()
        rows.append(_harness.make_row(label, "CoNLL-2002 esp testb", "python-crfsuite",
                                      t_peer, t_lin, "F1 %.4f" % f1_peer, "F1 %.4f" % f1_lin,
                                      note="linclass fit includes attribute extraction from "
                                      "the dicts; CRFsuite's defaults for the algorithm"))


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    pycrfsuite = _harness.import_peer("pycrfsuite")
    rows = []
    case_chunking(data_dir, quick, rows, pycrfsuite)
    case_chunking_sgd(data_dir, quick, rows, pycrfsuite)
    for lang in ("esp",) if quick else ("esp", "ned"):
        case_ner(data_dir, quick, rows, pycrfsuite, lang)
    case_ner_online(data_dir, quick, rows, pycrfsuite)
    return rows


if __name__ == "__main__":
    import os
    quick = "--quick" in sys.argv
    for row in run(quick, os.environ.get("LINCLASS_DATA", "../shared/data")):
        print(row)
