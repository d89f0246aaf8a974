"""The sequence tagger (structured perceptron) on partitions of sentences.

Data: two dask bags with the same partitioning, sentences and their label
sequences (or :func:`conll_bags` on sharded CoNLL files, one partition per
file).  Training runs in three phases:

1. **Labels and vocabulary, globally.**  The label set is the union over the
   partitions (sorted).  The feature vocabulary grows partition after
   partition on the workers (``FeatureTemplate.partial_fit``, the template
   travelling from one partition's worker to the next), then features seen
   fewer than ``min_count`` times in all the data are pruned: the feature
   ids are exactly those ``fit`` gives on the partitions concatenated.  This
   pass is sequential (one featurisation of the data); with ``n_hash`` there
   is no vocabulary and it is skipped.
2. **Features per partition**, in parallel, kept on the workers.
3. **Iterative parameter mixing** (McDonald, Hall & Mann 2010): each round
   every partition runs one epoch of the averaged perceptron's Cython kernel
   (``_core._sequence.perceptron_epoch``) from the mixed weights, in its own
   shuffled order (seed from ``(random_state, partition, round)``), and
   returns only the rows of the emission matrix it updated; the driver mixes
   the weights and the averaging sums in proportion to the partitions'
   sentence counts, exactly as ``SequenceTagger(n_jobs=k)`` mixes its
   threads' shards.  Rounds stop when no partition makes a mistake, or after
   ``min(max_rounds, max_iter)`` rounds.

Communication per round: the weights down to every worker (``F x K`` float32
plus the transitions), and from every partition its updated rows (float32
weights and float64 averaging sums) up.

References
----------
McDonald, R., Hall, K. & Mann, G. (2010). Distributed training strategies for
the structured perceptron. NAACL-HLT.
Collins, M. (2002). Discriminative training methods for hidden Markov models.
EMNLP.
"""
import operator
import time

import numpy as np

from .._validation import iteration_budget
from .._validation import draw_seed
from .runner import partition_seed

__all__ = ["conll_bags", "fit_tagger"]


def _as_list(part, name, index):
    part = list(part)
    for i, sentence in enumerate(part):
        if isinstance(sentence, (str, bytes, dict)) or not hasattr(sentence, "__len__"):
            raise ValueError("partition %d of %s: item %d is %s, not a sentence (a list of "
                             "tokens)" % (index, name, i, type(sentence).__name__))
    return part


def _raw_shard(X_part, Y_part, index):
    """One partition's sentences and label sequences, checked."""
    X = _as_list(X_part, "X", index)
    Y = [list(y) for y in _as_list(Y_part, "y", index)]
    if len(X) != len(Y):
        raise ValueError("partition %d has %d sentences in X but %d label sequences in y: "
                         "X and y must be partitioned alike" % (index, len(X), len(Y)))
    for i, (x, y) in enumerate(zip(X, Y)):
        if len(x) != len(y):
            raise ValueError("partition %d, sentence %d has %d tokens but %d labels"
                             % (index, i, len(x), len(y)))
        for label in y:
            if not isinstance(label, str):
                raise ValueError("labels must be strings, found %r (%s) in partition %d"
                                 % (label, type(label).__name__, index))
    return {"X": X, "Y": Y, "index": index}


def _labels(shard):
    return sorted({label for y in shard["Y"] for label in y})


def _first_tokens(shard):
    return next((s for s in shard["X"] if len(s)), None)


def _tagger(params):
    from ..sequence import SequenceTagger
    return SequenceTagger(**params)


def _grow_vocabulary(template, shard, params):
    """The template after this partition's features were added (fitted on the first)."""
    tagger = _tagger(params)
    if not shard["X"]:
        return template
    if template is None:
        tagger.features_ = tagger._make_featurizer(shard["X"])
        tagger.features_.set_params(min_count=1)
        tagger._featurize(shard["X"], fit=True)
    else:
        tagger.features_ = template
        tagger._featurize(shard["X"], fit=False, grow=True)
    return tagger.features_


def _featurize(shard, params, template, classes):
    """Token features (CSR parts), sentence offsets and gold codes of a partition."""
    tagger = _tagger(params)
    tagger.features_ = template
    if shard["X"]:
        Xf, offsets = tagger._featurize(shard["X"], fit=False)
        labels = np.array([label for y in shard["Y"] for label in y], dtype=str)
        gold = np.searchsorted(classes, labels).astype(np.int32)
        indices = np.ascontiguousarray(Xf.indices, dtype=np.int32)
        data = np.ascontiguousarray(Xf.data, dtype=np.float64)
        indptr = np.ascontiguousarray(Xf.indptr, dtype=np.int32)
    else:
        offsets = np.zeros(1, dtype=np.int64)
        gold = np.zeros(0, dtype=np.int32)
        indices, data = np.zeros(0, dtype=np.int32), np.zeros(0)
        indptr = np.zeros(1, dtype=np.int32)
    return {"indices": indices, "data": data, "indptr": indptr, "offsets": offsets,
            "gold": gold, "index": shard["index"], "n_sentences": len(offsets) - 1,
            "n_tokens": int(offsets[len(offsets) - 1])}


def _epoch(shard, weights, counter, seed, round_index, order, shuffle):
    """One perceptron epoch on a partition from the mixed weights.

    Returns (rows, W[rows], U_W[rows], small weights, small sums, counter,
    sentence errors, token errors, n_sentences)."""
    from .._core import _sequence
    n_sent = shard["n_sentences"]
    W = weights[0].copy()
    small = [w.copy() for w in weights[1:]]
    sums = [np.zeros(w.shape, np.float64) for w in weights]
    touched = np.zeros(W.shape[0], np.uint8)
    visit = np.arange(n_sent, dtype=np.int32)
    if shuffle:
        np.random.default_rng(partition_seed(seed, shard["index"], round_index)).shuffle(visit)
    c, n_sent_err, n_tok_err = counter, 0, 0
    if n_sent:
        c, n_sent_err, n_tok_err = _sequence.perceptron_epoch(
            W, sums[0], small[0], sums[1], small[1], sums[2], small[2], sums[3], small[3],
            sums[4], shard["indices"], shard["data"], shard["indptr"], shard["offsets"],
            shard["gold"], visit, order=order, counter=counter, touched=touched)
    rows = np.flatnonzero(touched)
    return (rows, W[rows], sums[0][rows], small, sums[1:], float(c), int(n_sent_err),
            int(n_tok_err), n_sent)


def _mix(weights, sums, results):
    """Mix the partitions' weights and averaging sums in proportion to their sizes."""
    total = sum(r[8] for r in results)
    shares = [r[8] / total if total else 1.0 / len(results) for r in results]
    W, U = weights[0], sums[0]
    union = np.unique(np.concatenate([r[0] for r in results])) if results else \
        np.zeros(0, np.int64)
    if len(union):
        base = W[union].astype(np.float64)
        mixed = np.zeros_like(base)
        for share, r in zip(shares, results):
            rows, w_rows, u_rows = r[0], r[1], r[2]
            own = base.copy()
            pos = np.searchsorted(union, rows)
            own[pos] = w_rows
            mixed += share * own
            U[rows] += share * u_rows
        W[union] = mixed.astype(np.float32)
    for a in range(1, len(weights)):
        mixed = np.zeros(weights[a].shape, np.float64)
        for share, r in zip(shares, results):
            mixed += share * r[3][a - 1]
            sums[a] += share * r[4][a - 1]
        weights[a][...] = mixed.astype(np.float32)
    return max(r[5] for r in results)


def fit_tagger(estimator, X, y, runner, info, *, max_rounds=200):
    """Fit a ``SequenceTagger`` (trainer="perceptron") by iterative parameter mixing."""
    estimator._check_params()
    if estimator.trainer != "perceptron":
        raise ValueError("linclass.distributed fits SequenceTagger(trainer='perceptron') by "
                         "iterative parameter mixing; trainer=%r is not distributed"
                         % (estimator.trainer,))
    import dask.bag
    if not isinstance(X, dask.bag.Bag) or not isinstance(y, dask.bag.Bag):
        raise TypeError("SequenceTagger needs X and y as dask bags of sentences and of label "
                        "sequences (e.g. from linclass.distributed.conll_bags), got %s and %s"
                        % (type(X).__name__, type(y).__name__))
    if X.npartitions != y.npartitions:
        raise ValueError("X has %d partitions but y has %d: partition them alike"
                         % (X.npartitions, y.npartitions))
    delayed = dask.delayed
    raw = runner.persist([delayed(_raw_shard, pure=False)(xd, yd, k) for k, (xd, yd) in
                          enumerate(zip(X.to_delayed(), y.to_delayed()))])
    shards = []
    try:
        classes = np.array(sorted(set().union(*runner.map(_labels, raw))), dtype=str)
        if len(classes) == 0:
            raise ValueError("y holds no labels (all sentences are empty)")
        params = estimator.get_params(deep=False)
        params.update(n_jobs=1, verbose=0)
        if estimator.n_hash is not None:
            first = next((t for t in runner.map(_first_tokens, raw) if t is not None), None)
            if first is None:
                raise ValueError("X holds no tokens")
            template = _grow_vocabulary(None, {"X": [first]}, params)
        else:
            template = runner.fold(_grow_vocabulary, None, raw, params)
            if template is None:
                raise ValueError("X holds no tokens")
            if estimator.min_count > 1:
                template.prune(int(estimator.min_count))
            template.set_params(min_count=estimator.min_count)
        shards = runner.map_persist(_featurize, raw, params, template, classes)
    finally:
        runner.release(raw)
    try:
        n_features = int(template.n_features_)
        K = len(classes)
        estimator.classes_ = classes
        estimator.features_ = template
        estimator.n_features_ = n_features
        estimator._init_weights(n_features, K)
        state = estimator._train_state
        weights, sums = state["weights"], state["sums"]
        seed = draw_seed(estimator.random_state)
        estimator.history_ = []
        seconds = []
        rounds = 0
        n_rounds = min(iteration_budget(max_rounds), iteration_budget(estimator.max_iter))
        for rounds in range(1, n_rounds + 1):
            start = time.perf_counter()
            results = runner.map(_epoch, shards, weights, state["counter"], seed, rounds,
                                 estimator.order, bool(estimator.shuffle))
            state["counter"] = _mix(weights, sums, results)
            seconds.append(time.perf_counter() - start)
            n_sent_err = sum(r[6] for r in results)
            n_tok_err = sum(r[7] for r in results)
            n_tokens = max(1, sum(r[8] for r in results))
            estimator.history_.append({"epoch": rounds, "sentence_errors": n_sent_err,
                                       "token_errors": n_tok_err,
                                       "token_error_rate": n_tok_err / n_tokens,
                                       "seconds": seconds[len(seconds) - 1]})
            if estimator.verbose:
                print("round %3d  sentence errors %6d  token errors %7d  %.2fs"
                      % (rounds, n_sent_err, n_tok_err, seconds[len(seconds) - 1]))
            if n_sent_err == 0:
                break
    finally:
        runner.release(shards)
    estimator.n_iter_ = rounds
    estimator._publish_weights()
    info["rounds"] = rounds
    info["seconds_per_round"] = float(np.median(seconds)) if seconds else 0.0
    return estimator


def _read_conll_file(path, token_columns, label_column):
    from ..datasets import read_conll
    sentences = read_conll(path)
    X, Y = [], []
    for rows in sentences:
        X.append([tuple(row[c] for c in token_columns) if len(token_columns) > 1
                  else row[token_columns[0]] for row in rows])
        Y.append([row[label_column] for row in rows])
    return X, Y


def conll_bags(paths, token_columns=(0,), label_column=-1):
    """Two dask bags (sentences, label sequences) from CoNLL files, one partition per file.

    Parameters
    ----------
    paths : list of str or path
        The shards (plain or ``.gz``/``.bz2``), read on the workers with
        :func:`linclass.datasets.read_conll`.
    token_columns : tuple of int, default=(0,)
        Columns making up a token: one column gives string tokens, several
        give tuples (e.g. ``(0, 1)`` for word and POS).
    label_column : int, default=-1
        The column holding the label (negative counts from the end).

    Returns
    -------
    X, y : dask.bag.Bag, partitioned alike
    """
    from .runner import import_dask
    import_dask()
    import dask.bag as db
    from dask import delayed
    paths = [str(p) for p in paths]
    if not paths:
        raise ValueError("conll_bags needs at least one file")
    token_columns = tuple(int(c) for c in token_columns)
    if not token_columns:
        raise ValueError("token_columns must name at least one column")
    parts = [delayed(_read_conll_file, pure=True)(p, token_columns, int(label_column))
             for p in paths]
    X = db.from_delayed([delayed(operator.itemgetter(0))(p) for p in parts])
    Y = db.from_delayed([delayed(operator.itemgetter(1))(p) for p in parts])
    return X, Y
