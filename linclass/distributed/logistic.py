"""Logistic regression on partitions: L-BFGS on the driver, loss and gradient sums
from the workers.

The partitions are validated once into shards that stay on the workers.  At
each evaluation the driver scatters the flat parameter vector to every worker
once; each partition returns its weighted loss and gradient, computed by
:func:`linclass.linear.logistic.logistic_data_term` (the ``_core._logistic``
kernels through the estimator's own objective class), and the sums are
combined by a pairwise tree on the workers.  Everything else -- the prior,
class weights, the starting point, scipy's L-BFGS-B with the estimator's
options, the fitted attributes -- is ``LogisticRegression``'s own code
(:meth:`~linclass.linear.LogisticRegression.fit_data_term`), so the optimum
is the in-memory one up to the rounding of the partition sums.

Communication per evaluation: ``(n_features + 1) * n_out`` doubles down to
each worker and up from each partition (tree-combined on the workers).

Reference: Byrd, Lu, Nocedal & Zhu (1995), L-BFGS-B; Chu et al. (2007),
Map-Reduce for machine learning on multicore (gradient sums over partitions).
"""
import time

import numpy as np

from .._validation import class_weight_vector
from ..linear.logistic import logistic_data_term
from .partitions import make_shard

__all__ = ["fit_logistic"]


def _shard_loss_grad(shard, theta, n_classes, fit_intercept):
    if shard["X"].shape[0] == 0:
        return 0.0, np.zeros_like(theta)
    return logistic_data_term(shard["X"], shard["codes"], shard["weights"], theta,
                              n_classes=n_classes, fit_intercept=fit_intercept)


def _shard_weight_sum(shard):
    return float(shard["weights"].sum())


def _add_pair(a, b):
    return a[0] + b[0], a[1] + b[1]


def fit_logistic(estimator, partitions, classes, class_totals, runner, info):
    """Fit ``estimator`` (LogisticRegression, solver lbfgs; ``"auto"`` means lbfgs
    here) on the partitions."""
    if estimator.solver not in ("lbfgs", "auto"):
        raise ValueError("linclass.distributed fits LogisticRegression with solver='lbfgs' "
                         "or 'auto' (got %r: it needs Hessian products over all rows)"
                         % (estimator.solver,))
    n_classes = len(classes)
    # the class weights fit() computes, from the global (weighted) class counts
    class_weights = class_weight_vector(estimator.class_weight, classes,
                                        np.arange(n_classes), class_totals)
    delayed = runner.dask.delayed
    shards = runner.persist([
        delayed(make_shard, pure=False)(X, y, w, k, partitions.n_features, classes, class_weights)
        for k, (X, y, w) in enumerate(zip(partitions.X_blocks, partitions.y_blocks,
                                          partitions.w_blocks))])
    try:
        weight_sum = sum(runner.map(_shard_weight_sum, shards))
        fit_intercept = bool(estimator.fit_intercept)
        seconds = []

        def data_term(theta):
            start = time.perf_counter()
            result = runner.map_reduce(_shard_loss_grad, shards, _add_pair, theta, n_classes,
                                       fit_intercept)
            seconds.append(time.perf_counter() - start)
            return result

        estimator.fit_data_term(data_term, classes=classes, n_features=partitions.n_features,
                                weight_sum=weight_sum)
    finally:
        runner.release(shards)
    info["rounds"] = len(seconds)
    info["seconds_per_round"] = float(np.median(seconds)) if seconds else 0.0
    return estimator
