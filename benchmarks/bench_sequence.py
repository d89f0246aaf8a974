"""Sequence labelling: linclass SequenceTagger vs python-crfsuite (CRFsuite ``ap``).

Cases (data in ``<data>``; see each folder's README):

* CoNLL-2000 chunking with CRFsuite's chunking template (19 conjunctions +
  BOS/EOS), 10 epochs of the averaged perceptron on both sides:
  - ``train``: linclass ``fit`` on integer features already extracted vs
    CRFsuite ``Trainer.train`` on items already appended;
  - ``file-to-model``: read the gz file, build features, train (linclass:
    read_conll + FeatureTemplate + epochs; python-crfsuite: the same reader,
    string features built in Python as in CRFsuite's ``chunking.py``,
    ``Trainer.append``, ``train``);
  - ``decode``: tag the test set from raw tokens (linclass: templates + Viterbi)
    vs CRFsuite ``Tagger.tag`` on string features built beforehand;
  - ``viterbi kernel``: tokens/s of the Cython Viterbi on extracted features.
  Quality: chunk F1 (conlleval, IOB2) on the test set.
* UD English EWT UPOS with a standard POS template, 10 epochs: accuracy; then
  second-order transitions with the epochs chosen on UD dev.
* CoNLL-2002 NER (esp, ned) with the sklearn-crfsuite tutorial features:
  entity F1 on testb (10 epochs; then epochs chosen on testa), and the
  ``ner`` template (words+POS, words only) with CRFsuite on the same features.

The structural SVM tagger has its own suite, ``bench_sequence_ssvm.py``.
"""
import gc
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass import metrics  # noqa: E402
from linclass.datasets import read_conll  # noqa: E402
from linclass.features import FeatureTemplate  # noqa: E402
from linclass.features.ambiguity import AmbiguityClasses  # noqa: E402
from linclass.features.templates import (CONLL2002_NER, NER_TEMPLATE, NER_WORD_TEMPLATE,
                                         POS_AMBIGUITY_TEMPLATE, POS_TEMPLATE)
from linclass.sequence import SequenceTagger  # noqa: E402

EPOCHS = 10
NOTES = [
    "CRFsuite peer: python-crfsuite `Trainer(algorithm='ap')`, `max_iterations=10`; linclass: "
    "`SequenceTagger(max_iter=10)` (averaged perceptron, whole epochs in Cython).",
    "train/decode ratios exclude feature building on the CRFsuite side (its string features "
    "are built once, outside the timer); 'file-to-model' includes everything on both sides.",
    "F1 is conlleval's chunk/entity F1 (IOB2), accuracy is token accuracy.",
    "n_jobs=2 rows: training by iterative parameter mixing (2 shards per epoch, weights "
    "averaged after each epoch; deterministic for a seed, a different model than n_jobs=1); "
    "labels and column values in 2 token blocks, the template pass in 2 threads "
    "(features identical to n_jobs=1); "
    "decoding in 2 threads (labels identical to n_jobs=1).",
    "'chunking fit phases' rows: CPU seconds on the critical path of a fit (main thread "
    "plus the largest worker of each thread pool) -- what the fit takes on idle cores, "
    "independent of machine load -- with the wall seconds beside; ratio = n_jobs=1 / n_jobs=2.",
    "NER tutorial rows: CONLL2002_NER keeps the tutorial's boolean features only where true "
    "(iftrue), so both sides have exactly the same feature set.",
    "'(dev)' rows choose the number of epochs on the dev set (UD dev, CoNLL-2002 testa), "
    "never on the test set.",
    "Where the time goes (CoNLL-2000 chunking, CPU seconds by stage, process_time, loaded "
    "machine, 2026-12-01): read_conll 0.39, token tuples 0.23, label codes 0.08, template "
    "features of the training set 0.93 (cProfile: 60% the Cython key-table pass over 3.8M "
    "token x template keys, 20% type ids of the columns, 15% column checks/lists), 10 epochs "
    "2.9 (the first epoch ~1.5x a later one: page faults of the 335674 x 22 weight and sum "
    "arrays); decoding the test set from raw tokens: features 0.175, Viterbi 0.054 -- "
    "feature extraction is 3/4 of decoding and 1/4 of file-to-model.",
]


# --------------------------------------------------- peer feature builders --

def crfsuite_chunking_features(sent):
    """CRFsuite example/chunking.py: templates over w and pos, BOS/EOS."""
    w = [tok[0] for tok in sent]
    p = [tok[1] for tok in sent]
    n = len(sent)
    cols = {"w": w, "pos": p}
    templates = [(("w", -2),), (("w", -1),), (("w", 0),), (("w", 1),), (("w", 2),),
                 (("w", -1), ("w", 0)), (("w", 0), ("w", 1)),
                 (("pos", -2),), (("pos", -1),), (("pos", 0),), (("pos", 1),), (("pos", 2),),
                 (("pos", -2), ("pos", -1)), (("pos", -1), ("pos", 0)),
                 (("pos", 0), ("pos", 1)), (("pos", 1), ("pos", 2)),
                 (("pos", -2), ("pos", -1), ("pos", 0)), (("pos", -1), ("pos", 0), ("pos", 1)),
                 (("pos", 0), ("pos", 1), ("pos", 2))]
    names = ["|".join("%s[%d]" % (c, o) for c, o in t) for t in templates]
    out = []
    for t in range(n):
        feats = []
        for name, tmpl in zip(names, templates):
            values = []
            for c, o in tmpl:
                if not 0 <= t + o < n:
                    break
                values.append(cols[c][t + o])
            else:
                feats.append("%s=%s" % (name, "|".join(values)))
        out.append(feats)
    if n:
        out[0].append("__BOS__")
        out[-1].append("__EOS__")
    return out


def _shape(word):
    out = []
    for ch in word:
        out.append("X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch)
    return "".join(out)


def _shortshape(word):
    s = _shape(word)
    return "".join(c for i, c in enumerate(s) if i == 0 or c != s[i - 1])


def crfsuite_pos_features(sent):
    """The POS template built as strings, the way a python-crfsuite user would."""
    words = [tok[0] for tok in sent]
    lows = [w.lower() for w in words]
    n = len(words)
    out = []
    for t, w in enumerate(words):
        lw = lows[t]
        f = ["bias", "w[0]=" + w, "lower=" + lw]
        for k in range(1, 5):
            f.append("prefix%d=%s" % (k, w[:k]))
            f.append("suffix%d=%s" % (k, w[-k:]))
        f += ["shape=" + _shape(w), "shortshape=" + _shortshape(w),
              "isdigit=%s" % w.isdigit(), "istitle=%s" % w.istitle(),
              "isupper=%s" % w.isupper(), "hasdigit=%s" % any(c.isdigit() for c in w),
              "hashyphen=%s" % ("-" in w)]
        for o in (-1, 1, -2, 2):
            if 0 <= t + o < n:
                f.append("lower[%d]=%s" % (o, lows[t + o]))
        if t > 0:
            f.append("suffix3(lower[-1])=" + lows[t - 1][-3:])
            f.append("lower[-1]|lower[0]=%s|%s" % (lows[t - 1], lw))
        if t < n - 1:
            f.append("suffix3(lower[1])=" + lows[t + 1][-3:])
            f.append("lower[0]|lower[1]=%s|%s" % (lw, lows[t + 1]))
        out.append(f)
    if n:
        out[0].append("__BOS__")
        out[-1].append("__EOS__")
    return out


def crfsuite_ner_features(sent):
    """sklearn-crfsuite's CoNLL-2002 tutorial word2features (dicts)."""
    out = []
    n = len(sent)
    for i, (word, postag) in enumerate(sent):
        f = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:],
             "word[-2:]": word[-2:], "word.isupper()": word.isupper(),
             "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit(),
             "postag": postag, "postag[:2]": postag[:2]}
        if i > 0:
            w1, p1 = sent[i - 1]
            f.update({"-1:word.lower()": w1.lower(), "-1:word.istitle()": w1.istitle(),
                      "-1:word.isupper()": w1.isupper(), "-1:postag": p1,
                      "-1:postag[:2]": p1[:2]})
        else:
            f["BOS"] = True
        if i < n - 1:
            w1, p1 = sent[i + 1]
            f.update({"+1:word.lower()": w1.lower(), "+1:word.istitle()": w1.istitle(),
                      "+1:word.isupper()": w1.isupper(), "+1:postag": p1,
                      "+1:postag[:2]": p1[:2]})
        else:
            f["EOS"] = True
        out.append(f)
    return out


# ------------------------------------------------------------- the peer ---

def crfsuite_train(pycrfsuite, X_feats, Y, model_path):
    trainer = pycrfsuite.Trainer(algorithm="ap", verbose=False)
    trainer.set_params({"max_iterations": EPOCHS})
    t0 = time.perf_counter()
    for x, y in zip(X_feats, Y):
        trainer.append(x, y)
    t_append = time.perf_counter() - t0
    t0 = time.perf_counter()
    trainer.train(model_path)
    return t_append, time.perf_counter() - t0


def crfsuite_tag(pycrfsuite, model_path, X_feats):
    tagger = pycrfsuite.Tagger()
    tagger.open(model_path)
    try:
        return [tagger.tag(x) for x in X_feats]
    finally:
        tagger.close()


# ----------------------------------------------------------------- cases ---

def _read(path, token_cols, label_col):
    sents = read_conll(path)
    X = [[tuple(row[i] for i in token_cols) for row in s] for s in sents]
    Y = [[row[label_col] for row in s] for s in sents]
    return X, Y


def _f1(Y, P):
    return metrics.chunk_precision_recall_f1(Y, P)[2]


def timed_fits(make_tagger, X, Y, repeat):
    """Median wall seconds of whole fits and of their training part, and the last model.

    The training part of a fit is its wall time minus the wall time of its own
    template pass (the tagger's ``_featurize`` call, timed inside the same
    fit): label codes, weights, the epochs and the averaging.  Subtracting a
    separately timed template pass instead would take the difference of two
    noisy medians on a loaded machine.
    """
    totals, trains, tagger = [], [], None
    for _ in range(max(1, repeat)):
        tagger = make_tagger()
        featurize, spent = tagger._featurize, []

        def timed(*a, _f=featurize, **k):
            t0 = time.perf_counter()
            out = _f(*a, **k)
            spent.append(time.perf_counter() - t0)
            return out
        tagger._featurize = timed
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            tagger.fit(X, Y)
            total = time.perf_counter() - t0
        finally:
            if was_enabled:
                gc.enable()
            del tagger.__dict__["_featurize"]
        totals.append(total)
        trains.append(total - sum(spent))
    return float(np.median(totals)), float(np.median(trains)), tagger


def case_chunking(data_dir, quick, rows, pycrfsuite, repeat):
    folder = data_dir / "conll2000_chunking"
    train_path, test_path = folder / "train.txt.gz", folder / "test.txt.gz"
    Xtr, Ytr = _read(train_path, (0, 1), 2)
    Xte, Yte = _read(test_path, (0, 1), 2)
    n_train_tok = sum(map(len, Xtr))
    data = "CoNLL-2000 (%d sent, %d tok)" % (len(Xtr), n_train_tok)

    # linclass, training alone: each fit minus its own template pass
    _, t_lc_train, tagger = timed_fits(
        lambda: SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0),
        Xtr, Ytr, repeat)
    P = tagger.predict(Xte)
    f1_lc = _f1(Yte, P)

    def file_to_model():
        X, Y = _read(train_path, (0, 1), 2)
        return SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0).fit(X, Y)
    t_lc_file, _ = _harness.median_time(file_to_model, repeat)

    # linclass decoding from raw tokens, and the kernel alone
    t_lc_dec, _ = _harness.median_time(lambda: tagger.predict(Xte), repeat)
    Xf, offsets = tagger._featurize(Xte, fit=False)
    t_kernel, _ = _harness.median_time(lambda: tagger._decode_codes(Xf, offsets), repeat)
    n_test_tok = sum(map(len, Xte))

    peer = "python-crfsuite ap"
    if pycrfsuite is None:
        for task, t in (("chunking train", t_lc_train), ("chunking file-to-model", t_lc_file),
                        ("chunking decode (raw tokens)", t_lc_dec)):
            rows.append(_harness.make_row(task, data, None, None, t, None, "F1 %.2f" % (100 * f1_lc),
                                          note="python-crfsuite not installed"))
        return
    tmp = tempfile.mkdtemp()
    model_path = os.path.join(tmp, "chunk.crfsuite")
    t0 = time.perf_counter()
    Ftr = [crfsuite_chunking_features(x) for x in Xtr]
    t_peer_feat = time.perf_counter() - t0
    peer_train_times, peer_append_times = [], []
    for _ in range(max(1, repeat if not quick else 1)):
        t_app, t_tr = crfsuite_train(pycrfsuite, Ftr, Ytr, model_path)
        peer_append_times.append(t_app)
        peer_train_times.append(t_tr)
    t_peer_train = float(np.median(peer_train_times))
    t0 = time.perf_counter()
    _read(train_path, (0, 1), 2)
    t_read = time.perf_counter() - t0
    t_peer_file = t_read + t_peer_feat + float(np.median(peer_append_times)) + t_peer_train
    Fte = [crfsuite_chunking_features(x) for x in Xte]
    t_peer_dec, Pp = _harness.median_time(lambda: crfsuite_tag(pycrfsuite, model_path, Fte),
                                          repeat)
    f1_peer = _f1(Yte, Pp)
    q_peer, q_lc = "F1 %.2f" % (100 * f1_peer), "F1 %.2f" % (100 * f1_lc)

    # the same with two threads (parameter mixing in training, threaded Viterbi)
    _, t_lc2_train, tagger2 = timed_fits(
        lambda: SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0,
                               n_jobs=2), Xtr, Ytr, repeat)
    f1_lc2 = _f1(Yte, tagger2.predict(Xte))

    def file_to_model2():
        X, Y = _read(train_path, (0, 1), 2)
        return SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0,
                              n_jobs=2).fit(X, Y)
    t_lc2_file, _ = _harness.median_time(file_to_model2, repeat)
    tagger.set_params(n_jobs=2)
    t_lc2_dec, P2 = _harness.median_time(lambda: tagger.predict(Xte), repeat)
    tagger.set_params(n_jobs=1)
    same = "identical labels" if P2 == P else "LABELS DIFFER"
    q_lc2 = "F1 %.2f" % (100 * f1_lc2)
    rows.append(_harness.make_row("chunking train (10 ep)", data, peer, t_peer_train, t_lc_train,
                                  q_peer, q_lc,
                                  note="linclass: wall time of fit minus its own template pass "
                                       "(timed inside the same fit), median of %d" % repeat))
    rows.append(_harness.make_row("chunking file-to-model", data, peer, t_peer_file, t_lc_file,
                                  q_peer, q_lc,
                                  note="peer: read %.2fs + string features %.2fs + append %.2fs"
                                  " + train %.2fs" % (t_read, t_peer_feat,
                                                      np.median(peer_append_times),
                                                      t_peer_train)))
    rows.append(_harness.make_row(
        "chunking decode test", "CoNLL-2000 test (%d tok)" % n_test_tok, peer, t_peer_dec,
        t_lc_dec, "%.0f tok/s" % (n_test_tok / t_peer_dec), "%.0f tok/s" % (n_test_tok / t_lc_dec),
        note="linclass from raw tokens (templates + Viterbi); peer from prebuilt string features"))
    rows.append(_harness.make_row(
        "Viterbi kernel only", "CoNLL-2000 test (%d tok)" % n_test_tok, None, None, t_kernel,
        None, "%.2fM tok/s" % (n_test_tok / t_kernel / 1e6)))
    rows.append(_harness.make_row("chunking train (10 ep), n_jobs=2", data, peer, t_peer_train,
                                  t_lc2_train, q_peer, q_lc2,
                                  note="iterative parameter mixing over 2 threads; fit minus "
                                       "its own template pass"))
    rows.append(_harness.make_row("chunking file-to-model, n_jobs=2", data, peer, t_peer_file,
                                  t_lc2_file, q_peer, q_lc2))
    rows.append(_harness.make_row(
        "chunking decode test, n_jobs=2", "CoNLL-2000 test (%d tok)" % n_test_tok, peer,
        t_peer_dec, t_lc2_dec, "%.0f tok/s" % (n_test_tok / t_peer_dec),
        "%.0f tok/s" % (n_test_tok / t_lc2_dec), note=same + " to n_jobs=1"))


class _ThreadClock:
    """CPU seconds of the tagger's kernels by thread while a fit runs (the kernel
    entry points are wrapped for the duration, then restored).

    The critical path -- main-thread CPU plus, for each thread pool, the
    largest worker's CPU -- is what the fit would take on idle cores: a
    load-independent estimate of the wall time of ``n_jobs > 1`` fits."""

    KERNELS = (("_sequence", "perceptron_epoch"), ("_sequence", "perceptron_epoch_shard"),
               ("_sequence", "mix_shard_rows"), ("_sequence", "averaged_weights"),
               ("_sequence", "fold_shard_sums"), ("_features", "_run_block"),
               ("_features", "_remap_block"), ("_features", "_local_pass"),
               ("_features", "_rows_pass"), ("_features", "_column_block"))

    def __enter__(self):
        import threading
        from linclass._core import _features, _sequence
        modules = {"_sequence": _sequence, "_features": _features}
        self.calls, self.saved, lock = [], [], threading.Lock()
        main = threading.main_thread()
        for mod_name, name in self.KERNELS:
            mod = modules[mod_name]
            f = getattr(mod, name)
            self.saved.append((mod, name, f))

            def timed(*a, _f=f, _name=name, **k):
                c0 = time.thread_time()
                out = _f(*a, **k)
                with lock:
                    self.calls.append((_name, threading.current_thread() is main,
                                       time.thread_time() - c0))
                return out
            setattr(mod, name, timed)
        return self

    def __exit__(self, *exc):
        for mod, name, f in self.saved:
            setattr(mod, name, f)

    def worker_max(self, name, n_jobs):
        """Sum over pools of the largest worker's CPU in ``name`` (calls come in
        groups of n_jobs per pool), and the sum over all workers."""
        xs = [c for n, main, c in self.calls if n == name and not main]
        groups = [xs[i:i + n_jobs] for i in range(0, len(xs), n_jobs)]
        return sum(max(g) for g in groups), sum(xs)


def fit_phases(Xtr, Ytr, n_jobs):
    """Per-phase CPU (main thread; workers: largest per pool / all) and wall
    seconds of one chunking fit: template features, epochs (+ mixing), rest."""
    tagger = SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0,
                            n_jobs=n_jobs)
    marks = {}
    for phase in ("_featurize", "_fit_perceptron"):
        f = getattr(tagger, phase)

        def timed(*a, _f=f, _phase=phase, **k):
            c0, w0 = time.thread_time(), time.perf_counter()
            out = _f(*a, **k)
            marks[_phase] = (time.thread_time() - c0, time.perf_counter() - w0)
            return out
        setattr(tagger, phase, timed)
    with _ThreadClock() as clock:
        c0, w0 = time.thread_time(), time.perf_counter()
        tagger.fit(Xtr, Ytr)
        main_cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
    for phase in ("_featurize", "_fit_perceptron"):
        del tagger.__dict__[phase]
    blocks = clock.worker_max("_run_block", n_jobs)
    remap = clock.worker_max("_remap_block", 1)
    local = clock.worker_max("_local_pass", n_jobs)       # the template-parallel fit pass
    rows_pass = clock.worker_max("_rows_pass", n_jobs)
    columns = clock.worker_max("_column_block", n_jobs)   # labels' and columns' type ids
    epochs = clock.worker_max("perceptron_epoch_shard", n_jobs)
    mixing = clock.worker_max("mix_shard_rows", n_jobs)
    tail = [clock.worker_max("averaged_weights", n_jobs),
            clock.worker_max("fold_shard_sums", n_jobs)]
    blocks = (blocks[0] + local[0] + rows_pass[0] + columns[0],
              blocks[1] + local[1] + rows_pass[1] + columns[1])
    feat = marks["_featurize"][0] + blocks[0] + remap[0]
    perc = marks["_fit_perceptron"][0] + epochs[0] + mixing[0] + sum(t[0] for t in tail)
    other = main_cpu - marks["_featurize"][0] - marks["_fit_perceptron"][0]
    return tagger, {
        "crit": feat + perc + other, "wall": wall, "feat": feat, "feat_wall": marks["_featurize"][1],
        "feat_workers": blocks[1] + remap[1], "epochs": perc, "epochs_wall": marks["_fit_perceptron"][1],
        "epoch_workers": epochs[1], "mixing": mixing[0], "mixing_workers": mixing[1],
        "other": other, "main": main_cpu}


def case_chunking_phases(data_dir, rows, repeat):
    """Where the time of a chunking fit goes, n_jobs=1 and 2: CPU by phase on the
    critical path (main thread + largest worker per pool) and wall seconds."""
    folder = data_dir / "conll2000_chunking"
    Xtr, Ytr = _read(folder / "train.txt.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "test.txt.gz", (0, 1), 2)
    runs = {1: [], 2: []}
    for _ in range(max(3, repeat)):                  # interleaved pairs
        for n_jobs in (1, 2):
            runs[n_jobs].append(fit_phases(Xtr, Ytr, n_jobs))
    med = {}
    for n_jobs, results in runs.items():
        keys = results[0][1]
        med[n_jobs] = {k: float(np.median([r[1][k] for r in results])) for k in keys}
    data = "CoNLL-2000 (%d sent)" % len(Xtr)
    for n_jobs in (1, 2):
        m = med[n_jobs]
        f1 = _f1(Yte, runs[n_jobs][0][0].predict(Xte))
        rows.append(_harness.make_row(
            "chunking fit phases, n_jobs=%d (critical-path CPU)" % n_jobs, data,
            "n_jobs=1 (same)" if n_jobs == 2 else None,
            med[1]["crit"] if n_jobs == 2 else None, m["crit"], None, "F1 %.2f" % (100 * f1),
            note="medians of %d interleaved fits; CPU s on the critical path: template "
                 "features %.3f (worker CPU %.3f), epochs+mixing %.3f (epoch worker CPU %.3f, "
                 "mixing %.3f on the path / %.3f all), rest %.3f; wall s: fit %.3f, "
                 "features %.3f, epochs %.3f; wall ratio n_jobs=1/n_jobs=%d %.2f"
                 % (len(runs[n_jobs]), m["feat"], m["feat_workers"], m["epochs"],
                    m["epoch_workers"], m["mixing"], m["mixing_workers"], m["other"],
                    m["wall"], m["feat_wall"], m["epochs_wall"], n_jobs,
                    med[1]["wall"] / m["wall"])))


def epochs_on_dev(make_tagger, Xtr, Ytr, Xdev, Ydev, score, max_epochs):
    """The epoch count (1..max_epochs) with the best ``score`` on the dev set.

    One run, continued one epoch at a time with ``partial_fit`` (the same
    shuffles and averaging as ``fit(max_iter=n)`` with that seed).
    """
    tagger = make_tagger(1, np.random.default_rng(0)).fit(Xtr, Ytr)
    best, best_epoch = score(Ydev, tagger.predict(Xdev)), 1
    for epoch in range(2, max_epochs + 1):
        tagger.partial_fit(Xtr, Ytr, max_iter=1)
        value = score(Ydev, tagger.predict(Xdev))
        if value > best:
            best, best_epoch = value, epoch
    return best_epoch, best


def template_peer_features(template, columns, Xtr):
    """CRFsuite string features equal to linclass's template features (the feature names)."""
    ft = FeatureTemplate(template, columns=columns)
    ft.fit(Xtr)
    names = ft.get_feature_names_out()

    def build(sent):
        X, _ = ft.transform([sent])
        return [names[X.indices[X.indptr[t]:X.indptr[t + 1]]].tolist()
                for t in range(X.shape[0])]
    return build


def case_generic(name, data, Xtr, Ytr, Xte, Yte, template, peer_features, quality, quick, rows,
                 pycrfsuite, repeat, epochs=EPOCHS, order=1, note=""):
    t_lc, tagger = _harness.median_time(
        lambda: SequenceTagger(features=template, max_iter=epochs, random_state=0,
                               order=order).fit(Xtr, Ytr),
        repeat)
    q_lc = quality(Yte, tagger.predict(Xte))
    if pycrfsuite is None:
        rows.append(_harness.make_row(name, data, None, None, t_lc, None, q_lc,
                                      note="python-crfsuite not installed"))
        return
    tmp = tempfile.mkdtemp()
    model_path = os.path.join(tmp, "m.crfsuite")
    Ftr = [peer_features(x) for x in Xtr]
    times = []
    for _ in range(1 if quick else max(1, min(repeat, 3))):
        times.append(crfsuite_train(pycrfsuite, Ftr, Ytr, model_path)[1])
    Pp = crfsuite_tag(pycrfsuite, model_path, [peer_features(x) for x in Xte])
    rows.append(_harness.make_row(name, data, "python-crfsuite ap", float(np.median(times)), t_lc,
                                  quality(Yte, Pp), q_lc,
                                  note="train times; linclass includes its feature extraction"
                                  + note))


def _acc(Y, P):
    return "acc %.2f" % (100 * metrics.token_accuracy(Y, P))


def _ef1(Y, P):
    return "F1 %.2f" % (100 * _f1(Y, P))


def case_ud(data_dir, quick, rows, pycrfsuite, repeat):
    folder = data_dir / "ud_english_ewt"
    tr = read_conll(folder / "en_ewt-ud-train.conllu.gz")
    te = read_conll(folder / "en_ewt-ud-test.conllu.gz")
    dev = read_conll(folder / "en_ewt-ud-dev.conllu.gz")
    Xtr = [[(w,) for w in s.column("form")] for s in tr]
    Ytr = [s.column("upos") for s in tr]
    Xte = [[(w,) for w in s.column("form")] for s in te]
    Yte = [s.column("upos") for s in te]
    Xdv = [[(w,) for w in s.column("form")] for s in dev]
    Ydv = [s.column("upos") for s in dev]
    case_ud_ambiguity(Xtr, Ytr, Xdv, Ydv, Xte, Yte, quick, rows, pycrfsuite, repeat)
    case_generic("UD EWT UPOS (10 ep)", "EWT train %d sent" % len(Xtr), Xtr, Ytr, Xte, Yte,
                 POS_TEMPLATE, crfsuite_pos_features, _acc, quick, rows, pycrfsuite, repeat)
    if quick:
        return
    epochs, dev_acc = epochs_on_dev(
        lambda n, rng: SequenceTagger(features="pos", max_iter=n, random_state=rng, order=2),
        Xtr, Ytr, Xdv, Ydv, metrics.token_accuracy, 12)
    case_generic("UD EWT UPOS, order 2, %d ep (dev)" % epochs, "EWT train %d sent" % len(Xtr),
                 Xtr, Ytr, Xte, Yte, POS_TEMPLATE, crfsuite_pos_features, _acc, quick, rows,
                 pycrfsuite, 1, epochs=epochs, order=2,
                 note="; linclass second-order transitions, %d epochs chosen on dev (dev acc "
                      "%.2f, epochs 1-12); peer first order, 10 epochs" % (epochs, 100 * dev_acc))


def case_ud_ambiguity(Xtr, Ytr, Xdv, Ydv, Xte, Yte, quick, rows, pycrfsuite, repeat):
    """UPOS with a jackknifed ambiguity-class column ``a`` (AmbiguityClasses),
    :data:`POS_AMBIGUITY_TEMPLATE`, linclass epochs chosen on dev; the peer
    trains 10 epochs on the same template features (the same columns)."""
    t0 = time.perf_counter()
    amb = AmbiguityClasses()
    Atr = amb.fit_transform(Xtr, Ytr)
    t_columns = time.perf_counter() - t0
    Adv, Ate = amb.transform(Xdv), amb.transform(Xte)
    template = FeatureTemplate(POS_AMBIGUITY_TEMPLATE, columns=("w", "a"))
    epochs, dev_acc = epochs_on_dev(
        lambda n, rng: SequenceTagger(features=template, max_iter=n, random_state=rng),
        Atr, Ytr, Adv, Ydv, metrics.token_accuracy, 12)
    case_generic("UD EWT UPOS, ambiguity classes, %d ep (dev)" % epochs,
                 "EWT train %d sent" % len(Xtr), Atr, Ytr, Ate, Yte, template,
                 template_peer_features(POS_AMBIGUITY_TEMPLATE, ("w", "a"), Atr), _acc, quick,
                 rows, pycrfsuite, repeat, epochs=epochs,
                 note="; both sides get the same ambiguity-class column (AmbiguityClasses, "
                      "10-fold jackknife on train: %.2f s, not in either time) and the same "
                      "POS_AMBIGUITY_TEMPLATE features; linclass %d epochs chosen on dev "
                      "(dev acc %.2f, epochs 1-12); peer 10 epochs"
                      % (t_columns, epochs, 100 * dev_acc))


def case_ner(data_dir, quick, rows, pycrfsuite, repeat, lang):
    folder = data_dir / "conll2002_ner"
    Xtr, Ytr = _read(folder / ("%s.train.gz" % lang), (0, 1), 2)
    Xte, Yte = _read(folder / ("%s.testb.gz" % lang), (0, 1), 2)
    data = "%s train %d sent" % (lang, len(Xtr))
    case_generic("CoNLL-2002 NER %s (10 ep)" % lang, data,
                 Xtr, Ytr, Xte, Yte, CONLL2002_NER, crfsuite_ner_features, _ef1, quick, rows,
                 pycrfsuite, repeat)
    if quick:
        return
    Xdv, Ydv = _read(folder / ("%s.testa.gz" % lang), (0, 1), 2)

    def dev_epochs(features, X, Xd):
        return epochs_on_dev(
            lambda n, rng: SequenceTagger(features=features, max_iter=n, random_state=rng),
            X, Ytr, Xd, Ydv, _f1, 15)
    epochs, dev_f1 = dev_epochs(CONLL2002_NER, Xtr, Xdv)
    case_generic("NER %s tutorial features, %d ep (dev)" % (lang, epochs), data,
                 Xtr, Ytr, Xte, Yte, CONLL2002_NER, crfsuite_ner_features, _ef1, quick, rows,
                 pycrfsuite, 1, epochs=epochs,
                 note="; linclass epochs chosen on testa (F1 %.2f, epochs 1-15); peer 10 epochs"
                      % (100 * dev_f1, ))
    words = [[w for w, _ in s] for s in Xtr]
    for label, template, X, columns, Xd, Xt in (
            ("words+POS", NER_TEMPLATE, Xtr, ("w", "pos"), Xdv, Xte),
            ("words only", NER_WORD_TEMPLATE, words, ("w",),
             [[w for w, _ in s] for s in Xdv], [[w for w, _ in s] for s in Xte])):
        epochs, dev_f1 = dev_epochs("ner", X, Xd)
        case_generic("NER %s 'ner' template (%s), %d ep (dev)" % (lang, label, epochs), data,
                     X, Ytr, Xt, Yte, template, template_peer_features(template, columns, X),
                     _ef1, quick, rows, pycrfsuite, 1, epochs=epochs,
                     note="; the same template features on both sides; linclass epochs chosen "
                          "on testa (F1 %.2f, epochs 1-15); peer 10 epochs" % (100 * dev_f1, ))


def case_demo(rows):
    """The tagging speed ``linclass demo`` prints: the first ``score`` after ``fit``."""
    from linclass.datasets import load_bundled_ud_english
    train, test = load_bundled_ud_english("train"), load_bundled_ud_english("test")
    Xtr = [[(w,) for w in s.column("form")] for s in train]
    Xte = [[(w,) for w in s.column("form")] for s in test]
    Ytr, Yte = [s.column("upos") for s in train], [s.column("upos") for s in test]
    n_tok = sum(map(len, Xte))
    tagger = SequenceTagger(features="pos", max_iter=10, random_state=0).fit(Xtr, Ytr)
    gc.collect()                                # as the demo (and timeit) does
    t0 = time.perf_counter()
    tagger.score(Xte, Yte)                      # first call, as in the demo
    t_cold = time.perf_counter() - t0
    t_warm, _ = _harness.median_time(lambda: tagger.predict(Xte), 5)
    rows.append(_harness.make_row(
        "demo tagging (first score after fit)", "bundled EWT slice test (%d tok)" % n_tok,
        None, None, t_cold, None, "%.0f tok/s" % (n_tok / t_cold),
        note="warm predict on the same tokens: %.0f tok/s; the pending full garbage "
             "collection (~8 ms, due after building the data lists) is paid before the "
             "timed call, as in the demo" % (n_tok / t_warm)))


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    pycrfsuite = _harness.import_peer("pycrfsuite")
    repeat = _harness.n_repeats(quick)
    rows = []
    case_chunking(data_dir, quick, rows, pycrfsuite, repeat)
    case_chunking_phases(data_dir, rows, repeat)
    case_demo(rows)
    case_ud(data_dir, quick, rows, pycrfsuite, 1 if quick else repeat)
    for lang in ("esp", "ned"):
        case_ner(data_dir, quick, rows, pycrfsuite, 1 if quick else repeat, lang)
    return rows
