"""Per-phase time of one ``SequenceTagger`` fit on CoNLL-2000 chunking (issue 16's row).

Usage::

    python benchmarks/phases_tagger.py [--quick] [--n-jobs 1 2] [--repeat 3] [--data DIR]
                                       [--scaling] [--paired N]

For each ``n_jobs`` (interleaved, ``--repeat`` times): one fit with the
chunking template and the defaults of ``benchmarks/bench_distributed.py``
(10 epochs, ``random_state=0``), then chunk F1 on the test set.  Phases:
``labels`` (label encoding; a second thread overlaps it with the template
pass when ``n_jobs > 1``, left out of the critical path), ``featurize``
(the template pass: column types, key tables, the blocks' merge and
remap, CSR checks), ``epoch 1`` and
``epochs 2..`` (``perceptron_epoch``, or the shards'
``perceptron_epoch_shard`` calls), ``mixing`` (``mix_shard_rows``, run by
the shards' threads right after their epochs), ``averaging`` (the published
averaged weights; with ``n_jobs > 1`` also the ``fold_shard_sums`` calls
that average the emission rows from the shards' overlays, in the pool's
threads); with ``n_jobs > 1`` ``shard setup`` (the shards' buffers),
``columns`` (the token blocks of the columns' type ids, ``_column_block``,
in the pool's threads; ``label blocks``: those of the labels, inside
``labels``) and ``templates`` (the template pass's thread
calls, ``_local_pass`` and ``_rows_pass``); the ``featurize`` row is then
the main thread's part.  Columns: calls, wall time
of the phase (for the pool calls: summed over the calls of the epoch's
threads, so the wall column of a phase run in 2 threads is about twice its
elapsed time), and the thread CPU time of the calls (``time.thread_time`` in
the thread that ran them: on a shared machine read the CPU columns), and the
critical-path CPU (main-thread calls, plus for the pool calls the largest of
each group of ``n_jobs`` calls: what the phase takes on idle cores).  ``fit``
gives the fit's elapsed wall time and the CPU time of all threads.  Epoch 1
is separate because it first touches the weight and sum arrays (page faults:
on this machine 150-400 ms for the ~95 MB, more with transparent huge pages
being compacted), which later epochs do not pay.

``--scaling`` then measures what two threads can gain on this machine at
best, with no mixing and no updates (interleaved, median of ``--repeat``
rounds of 1 and 2 threads on the same work): ``decode``, the read-only part
of an epoch (Viterbi of all training sentences with the fitted emission
matrix: the same scattered row reads of a F x K float32 matrix, in 2
sentence halves for 2 threads), and ``stream``, a sequential sum of a 256 MB
float64 array (memory bandwidth).  A speed-up well below 2 there bounds the
speed-up of the epochs.

``--paired N`` first times the fits as the n_jobs row of
``benchmarks/bench_distributed.py`` does (``_harness.paired_median_times``:
n_jobs=1 and n_jobs=2 interleaved, N rounds, no profiling wrappers) and
prints the median seconds, the speed-up and both F1.
"""
import argparse
import collections
import pathlib
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402


def _conll2000(data_dir, quick):
    from linclass.datasets import load_conll2000

    def split(sentences):
        return ([[tuple(r[:2]) for r in s] for s in sentences],
                [[r[2] for r in s] for s in sentences])
    train = load_conll2000("train", data_home=data_dir)
    if quick:
        train = train[:3000]
    return split(train) + split(load_conll2000("test", data_home=data_dir))


def profile_fit(data, n_jobs):
    from linclass._core import _features, _sequence
    from linclass.metrics import chunk_f1
    from linclass.sequence import SequenceTagger, tagger
    X, Y, Xt, Yt = data
    stats = collections.defaultdict(lambda: [0, 0.0, 0.0])
    workers = collections.defaultdict(list)       # label -> CPU of its pool-thread calls
    main = threading.main_thread()
    lock = threading.Lock()
    epoch = [0]
    patched = []

    def wrap(owner, name, label):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            w0, t0 = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                key = label(args) if callable(label) else label
                cpu = time.thread_time() - t0
                with lock:
                    s = stats[key]
                    s[0] += 1
                    s[1] += time.perf_counter() - w0
                    s[2] += cpu
                    if threading.current_thread() is not main:
                        workers[key].append(cpu)
        setattr(owner, name, timed)
        patched.append((owner, name, original))

    def epoch_label(args):
        return "epoch 1" if epoch[0] == 0 else "epochs 2.."

    in_labels = threading.local()          # the column blocks of the label encoding
    original_labels = tagger._encode_label_sequences

    def encode_labels(*args, **kwargs):
        in_labels.on = True
        try:
            return original_labels(*args, **kwargs)
        finally:
            in_labels.on = False
    tagger._encode_label_sequences = encode_labels
    patched.append((tagger, "_encode_label_sequences", original_labels))
    wrap(tagger, "_encode_label_sequences", "labels")
    wrap(SequenceTagger, "_featurize", "featurize")
    wrap(SequenceTagger, "_publish_weights", "averaging")
    wrap(SequenceTagger, "_shard_buffers", "shard setup")
    wrap(_sequence, "perceptron_epoch", epoch_label)
    wrap(_sequence, "perceptron_epoch_shard", epoch_label)
    wrap(_features, "_column_block",
         lambda args: "label blocks" if getattr(in_labels, "on", False) else "columns")
    wrap(_features, "_local_pass", "templates")
    wrap(_features, "_rows_pass", "templates")
    wrap(_sequence, "mix_shard_rows", "mixing")
    wrap(_sequence, "fold_shard_sums", "averaging")
    original_mixed = SequenceTagger._mixed_epoch

    def count_epochs(self, *args, **kwargs):
        try:
            return original_mixed(self, *args, **kwargs)
        finally:
            epoch[0] += 1
    SequenceTagger._mixed_epoch = count_epochs
    patched.append((SequenceTagger, "_mixed_epoch", original_mixed))
    original_epoch = _sequence.perceptron_epoch

    def serial_epoch(*args, **kwargs):
        try:
            return original_epoch(*args, **kwargs)
        finally:
            epoch[0] += 1
    _sequence.perceptron_epoch = serial_epoch
    patched.append((_sequence, "perceptron_epoch", original_epoch))
    try:
        w0, p0 = time.perf_counter(), time.process_time()
        model = SequenceTagger(features="chunking", random_state=0, n_jobs=n_jobs).fit(X, Y)
        wall, cpu = time.perf_counter() - w0, time.process_time() - p0
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)
    f1 = chunk_f1(Yt, model.predict(Xt))
    errors = sum(h["token_errors"] for h in model.history_)
    print("n_jobs=%d: fit wall %.3f s, CPU (all threads) %.3f s, F1 %.4f, %d epochs, "
          "%d token errors" % (n_jobs, wall, cpu, 100 * f1, model.n_iter_, errors))
    print("  %-12s %6s %10s %14s %12s" % ("phase", "calls", "wall s", "thread CPU s",
                                           "crit CPU s"))
    total = 0.0
    for label in ("labels", "label blocks", "columns", "featurize", "templates", "shard setup", "epoch 1",
                  "epochs 2..", "mixing", "averaging"):
        if label in stats:
            n, w, t = stats[label]
            xs = workers.get(label, [])
            # pool calls come in groups of n_jobs (one per thread): the largest of each
            groups = [xs[i:i + n_jobs] for i in range(0, len(xs), n_jobs)]
            crit = t - sum(xs) + sum(max(g) for g in groups)
            if label == "columns":
                # one-block calls run in the main thread, inside featurize
                crit = sum(max(g) for g in groups)
            if label == "label blocks":
                crit = 0.0                                 # inside labels
            if not (label == "labels" and n_jobs > 1):     # beside the template pass
                total += crit
            print("  %-12s %6d %10.3f %14.3f %12.3f" % (label, n, w, t, crit))
    print("  critical-path CPU (main-thread phases + the largest pool thread of each "
          "group, labels excluded for n_jobs > 1): %.3f s" % total)
    return model


def paired(data, repeat):
    """The n_jobs row of bench_distributed: medians of interleaved fits."""
    from linclass.metrics import chunk_f1
    from linclass.sequence import SequenceTagger
    X, Y, Xt, Yt = data
    fits = [lambda j=j: SequenceTagger(features="chunking", random_state=0, n_jobs=j).fit(X, Y)
            for j in (1, 2)]
    (one_s, two_s), (one, two) = _harness.paired_median_times(fits, repeat)
    print("paired fits (median of %d): n_jobs=1 %.3f s, F1 %.4f; n_jobs=2 %.3f s, F1 %.4f; "
          "speed-up %.2fx" % (repeat, one_s, 100 * chunk_f1(Yt, one.predict(Xt)), two_s,
                              100 * chunk_f1(Yt, two.predict(Xt)), one_s / two_s))


def scaling(model, X, repeat):
    """1 vs 2 threads on decoding (the epoch's read-only part) and on a streaming sum."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from linclass._core import _sequence
    from linclass.sequence.tagger import _binary_flag
    Xf, offsets = model._featurize(X, fit=False)
    n_sent = len(offsets) - 1
    out, scores = np.zeros(Xf.shape[0], np.int32), np.zeros(n_sent)
    args = (model.emission_, model.transitions_, model.transitions2_, model.start_,
            model.stop_, Xf.indices, Xf.data, Xf.indptr, offsets, out, scores)
    binary = _binary_flag(Xf)
    big = np.ones(32 * 2 ** 20)

    def decode(a, b):
        _sequence.viterbi_batch(*args, order=model.order, first=int(a), last=int(b),
                                binary=binary)

    def stream(a, b):
        big[a:b].sum()

    with ThreadPoolExecutor(2) as pool:
        for name, fn, n in (("decode", decode, n_sent), ("stream", stream, big.size)):
            times = {1: [], 2: []}
            for _ in range(max(1, repeat)):
                for j in (1, 2):
                    bounds = np.linspace(0, n, j + 1).astype(np.int64)
                    w0 = time.perf_counter()
                    list(pool.map(lambda k: fn(bounds[k], bounds[k + 1]), range(j)))
                    times[j].append(time.perf_counter() - w0)
            one, two = np.median(times[1]), np.median(times[2])
            print("scaling %-7s 1 thread %8.1f ms, 2 threads %8.1f ms: %.2fx"
                  % (name, 1e3 * one, 1e3 * two, one / two))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=pathlib.Path, default=None,
                        help="benchmark data folder (default: as benchmarks/run.py)")
    parser.add_argument("--paired", type=int, default=0, metavar="N",
                        help="first time the n_jobs=1 / n_jobs=2 fits as bench_distributed's "
                             "row does, N interleaved rounds")
    parser.add_argument("--scaling", action="store_true",
                        help="also time decoding and a streaming pass in 1 and 2 threads")
    args = parser.parse_args(argv)
    data = _conll2000(args.data or _harness.default_data_dir(), args.quick)
    print("CoNLL-2000 chunking: %d training sentences, %d test sentences"
          % (len(data[0]), len(data[2])))
    if args.paired > 0:
        paired(data, args.paired)
    model = None
    for _ in range(args.repeat):
        for n_jobs in args.n_jobs:
            model = profile_fit(data, n_jobs)
    if args.scaling and model is not None:
        scaling(model, data[0], max(args.repeat, 5))


if __name__ == "__main__":
    main()
