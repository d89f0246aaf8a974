"""The averaged perceptron on partitions: iterative parameter mixing.

Each round every partition runs one epoch of the estimator's own
``partial_fit`` from the mixed weights, with its own seed drawn from
``(random_state, partition, round)``; the driver mixes the weights in
proportion to the partition sizes (McDonald, Hall & Mann 2010, "iterative
parameter mixing").  The averaging sums are mixed too: each partition also
returns the sum of the weight vectors it visited in the round (from the lazy
averaging state ``c W - U``), the driver adds them to the global sum ``S`` of
every weight vector any partition visited and sets the mixed ``U = c W - S``,
so the published averaged weights are ``S / c`` -- the average over all
updates of all partitions, as in the averaged perceptron (Collins 2002).
Rounds stop when an epoch makes no mistake in any partition, or after
``min(max_rounds, max_iter)`` rounds.

Communication per round: two (n_vectors x (n_features + 1)) matrices down to
every worker and up from every partition.

References
----------
McDonald, R., Hall, K. & Mann, G. (2010). Distributed training strategies for
the structured perceptron. NAACL-HLT.
Collins, M. (2002). Discriminative training methods for hidden Markov models.
EMNLP.
"""
import time

import numpy as np

from .._validation import iteration_budget
from .._validation import draw_seed
from .partitions import make_shard
from .runner import partition_seed

__all__ = ["fit_perceptron"]


def _epoch(shard, params, classes, W, U, n_seen, seed, round_index):
    """One partial_fit epoch from the mixed state -> (n_k W_k, S_k, n_k, mistakes)."""
    estimator_class, estimator_params = params
    n = shard["X"].shape[0]
    if n == 0:
        return np.zeros_like(W), np.zeros_like(W), 0, 0
    model = estimator_class(**dict(estimator_params, warm_start=False,
                                   random_state=partition_seed(seed, shard["index"],
                                                               round_index)))
    # the state fit() and partial_fit() keep between epochs, set to the mixed one
    model.classes_ = classes
    model.n_features_in_ = shard["X"].shape[1]
    model.n_iter_ = 0
    model._init_state(len(classes), shard["X"].shape[1])
    model._W[:] = W
    model._U[:] = U
    model._n_seen = float(n_seen)
    model.partial_fit(shard["X"], classes[shard["codes"]], classes=classes,
                      sample_weight=shard["weights"])
    visited = (model._n_seen * model._W - model._U) - (n_seen * W - U)
    steps = model._n_seen - n_seen
    mistakes = int(model.mistakes_per_epoch_[len(model.mistakes_per_epoch_) - 1]) \
        if len(model.mistakes_per_epoch_) else 0
    return model._W * steps, visited, steps, mistakes


def _add4(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]


def fit_perceptron(estimator, partitions, classes, runner, info, *, max_rounds=200):
    """Fit ``estimator`` (Perceptron, average=True or not; not voted) by parameter mixing."""
    estimator._check_params()
    if estimator.voted:
        raise ValueError("linclass.distributed does not fit the voted perceptron (its votes "
                         "are a sequence over all rows); use average=True")
    n_features = partitions.n_features
    n_vectors = 1 if len(classes) == 2 else len(classes)
    seed = draw_seed(estimator.random_state)
    params = (type(estimator), estimator.get_params(deep=False))
    delayed = runner.dask.delayed
    shards = runner.persist([
        delayed(make_shard, pure=False)(X, y, w, k, n_features, classes)
        for k, (X, y, w) in enumerate(zip(partitions.X_blocks, partitions.y_blocks,
                                          partitions.w_blocks))])
    W = np.zeros((n_vectors, n_features + 1))
    U = np.zeros_like(W)
    S = np.zeros_like(W)
    n_seen = 0.0
    seconds = []
    rounds = 0
    try:
        n_rounds = min(iteration_budget(max_rounds), iteration_budget(estimator.max_iter))
        for rounds in range(1, n_rounds + 1):
            start = time.perf_counter()
            weighted_W, visited, steps, mistakes = runner.map_reduce(
                _epoch, shards, _add4, params, classes, W, U, n_seen, seed, rounds)
            seconds.append(time.perf_counter() - start)
            if steps > 0:
                W = weighted_W / steps                  # mixing in proportion to the steps
            S = S + visited
            n_seen += steps
            U = n_seen * W - S                          # so that W - U / n_seen = S / n_seen
            if mistakes == 0:
                break
    finally:
        runner.release(shards)
    estimator._init_state(len(classes), n_features)
    estimator._W[:] = W
    estimator._U[:] = U
    estimator._n_seen = n_seen
    estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    estimator.n_iter_ = rounds
    estimator._rng = None
    estimator._publish()
    info["rounds"] = rounds
    info["seconds_per_round"] = float(np.median(seconds)) if seconds else 0.0
    return estimator
