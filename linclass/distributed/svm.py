"""Linear SVMs on partitions: CoCoA+ with dual coordinate descent as the local solver.

Each binary problem of :class:`~linclass.linear.LinearSVC` (one, or one per
class for one-vs-rest) keeps its dual variables ``alpha`` on the workers,
partition by partition.  A round: the driver scatters the weight matrix ``W``
(n_problems x (n_features + 1)) once; every partition runs ``local_epochs``
passes of randomised coordinate descent on its CoCoA+ subproblem
(``linclass._core._cocoa``: sigma' = K partitions, adding, gamma = 1) and
returns the change ``A_k d`` it proposes for ``W`` together with its share of
the primal loss at ``W`` and of the dual objective at ``alpha``; the driver
adds the changes.  The duality gap ``P(w) - D(alpha)`` of the round's start
point bounds the primal suboptimality: the fit stops when it is at most
``gap_tol * P(w)`` for every problem.

Communication per round: ``n_problems * (n_features + 1)`` doubles down to
every worker and up from every partition (tree-combined on the workers).

References
----------
Jaggi, M., Smith, V., Takac, M., Terhorst, J., Krishnan, S., Hofmann, T. &
Jordan, M. I. (2014). Communication-efficient distributed dual coordinate
ascent. NIPS.
Ma, C., Smith, V., Jaggi, M., Jordan, M. I., Richtarik, P. & Takac, M. (2015).
Adding vs. averaging in distributed primal-dual optimization. ICML.
Hsieh, C.-J., Chang, K.-W., Lin, C.-J., Keerthi, S. S. & Sundararajan, S. (2008).
A dual coordinate descent method for large-scale linear SVM. ICML.
"""
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .._core import _cocoa
from .._validation import check_positive, class_weight_per_sample, draw_seed
from ..exceptions import ConvergenceWarning
from ..linear.svm import svm_dual_objective
from .partitions import make_shard
from .runner import partition_seed

__all__ = ["fit_linear_svc"]

_LOSS_CODES = {"hinge": 1, "squared_hinge": 2}


def _rows(X):
    if sp.issparse(X):
        return dict(data=X.data, indices=X.indices, indptr=X.indptr, is_sparse=True)
    return dict(data=X.reshape(-1), indices=np.zeros(1, np.int32),
                indptr=np.zeros(1, np.int32), is_sparse=False)


def _init_state(shard, n_problems, cost_per_class, C):
    """Partition state: the shard, its per-sample cost and one alpha row per problem."""
    n = shard["X"].shape[0]
    cost = np.ascontiguousarray(shard["weights"] * cost_per_class[shard["codes"]] * C)
    return dict(shard, cost=cost, alpha=np.zeros((n_problems, n)))


def _ysign(codes, n_problems, p):
    positive = codes == (1 if n_problems == 1 else p)
    return np.where(positive, 1.0, -1.0)


def _round(state, W, sigma, local_epochs, seed, round_index, loss, bias):
    """One CoCoA+ round on a partition -> (new state, (V, primal loss, dual part))."""
    n_problems, width = W.shape
    X = state["X"]
    n = X.shape[0]
    V = np.zeros_like(W)
    primal = np.zeros(n_problems)
    dual = np.zeros(n_problems)
    if n == 0:
        return state, (V, primal, dual)
    alpha = state["alpha"].copy()
    cost = state["cost"]
    margins_all = np.asarray(X @ W[:, :width - 1].T) + bias * W[:, width - 1]
    rows = _rows(X)
    for p in range(n_problems):
        ysign = _ysign(state["codes"], n_problems, p)
        # the round's start point: primal loss at W, dual part at alpha
        slack = np.maximum(0.0, 1.0 - ysign * margins_all[:, p])
        primal[p] = cost @ (slack ** 2 if loss == 2 else slack)
        a = alpha[p]
        dual[p] = a.sum()
        if loss == 2:
            positive = cost > 0
            dual[p] -= 0.5 * np.sum(a[positive] ** 2 * (0.5 / cost[positive]))
        a = np.ascontiguousarray(a)
        V[p], _ = _cocoa.cocoa_local_round(
            **rows, n_samples=n, n_features=width - 1, ysign=ysign, cost=cost,
            loss=loss, bias=bias, w=np.ascontiguousarray(W[p]), alpha=a, sigma=sigma,
            n_epochs=local_epochs, seed=partition_seed(seed, state["index"], round_index, p))
        alpha[p] = a
    return dict(state, alpha=alpha), (V, primal, dual)


def _add_round(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


def _n_rows(shard):
    return shard["X"].shape[0]


def _alpha_cost(state):
    return state["alpha"], state["cost"]


def fit_linear_svc(estimator, partitions, classes, class_counts, runner, info, *,
                   max_rounds=200, local_epochs=1, gap_tol=1e-4):
    """Fit ``estimator`` (LinearSVC, solver "dual_cd") by CoCoA+ on the partitions."""
    estimator._check_params()
    if estimator.solver != "dual_cd":
        raise ValueError("linclass.distributed fits LinearSVC with solver='dual_cd' (CoCoA+ "
                         "over dual coordinate descent), got %r" % (estimator.solver,))
    check_positive(max_rounds, "max_rounds", integer=True)
    check_positive(local_epochs, "local_epochs", integer=True)
    check_positive(gap_tol, "gap_tol")
    n_classes = len(classes)
    n_problems = 1 if n_classes == 2 else n_classes
    n_features = partitions.n_features
    bias = float(estimator.intercept_scaling) if estimator.fit_intercept else 0.0
    loss = _LOSS_CODES[estimator.loss]
    seed = draw_seed(estimator.random_state)
    # fit()'s per-sample class weights, from the global class counts
    codes = np.repeat(np.arange(n_classes, dtype=np.int32), class_counts.astype(np.int64))
    per_sample = class_weight_per_sample(estimator.class_weight, classes, codes,
                                         np.ones(codes.shape[0]))
    cost_per_class = np.ones(n_classes)
    starts = np.concatenate([[0], np.cumsum(class_counts.astype(np.int64))])
    for k in range(n_classes):
        if class_counts[k] > 0:
            cost_per_class[k] = per_sample[starts[k]]
    delayed = runner.dask.delayed
    shards = runner.persist([
        delayed(make_shard, pure=False)(X, y, w, k, n_features, classes)
        for k, (X, y, w) in enumerate(zip(partitions.X_blocks, partitions.y_blocks,
                                          partitions.w_blocks))])
    states = runner.map_persist(_init_state, shards, n_problems, cost_per_class,
                                float(estimator.C))
    n_rows = runner.map(_n_rows, shards)
    runner.release(shards)
    # sigma' = gamma K for the K partitions that hold rows (empty ones add nothing to w)
    sigma = float(max(1, sum(1 for n in n_rows if n > 0)))
    W = np.zeros((n_problems, n_features + 1))
    seconds, gaps = [], []
    converged = False
    rounds = 0
    try:
        for rounds in range(1, max_rounds + 1):
            start = time.perf_counter()
            new_states, (V, primal_loss, dual_part) = runner.map_update(
                _round, states, _add_round, W, sigma, int(local_epochs), seed, rounds, loss,
                bias)
            seconds.append(time.perf_counter() - start)
            half_norm = 0.5 * np.einsum("ij,ij->i", W, W)
            primal = half_norm + primal_loss
            gap = primal - (dual_part - half_norm)
            gaps.append(float(np.max(gap / np.maximum(primal, 1e-300))))
            if np.all(gap <= gap_tol * primal):
                converged = True
                runner.release(new_states)
                break                   # W and states are the round's start point
            runner.release(states)
            states = new_states
            W = W + V
        alpha_cost = runner.map(_alpha_cost, states)
    finally:
        runner.release(states)
    if not converged:
        warnings.warn("CoCoA+ for LinearSVC stopped at max_rounds=%d with a relative duality "
                      "gap %.3g > gap_tol=%g; increase max_rounds or local_epochs"
                      % (max_rounds, gaps[len(gaps) - 1], gap_tol), ConvergenceWarning)
    alpha = np.hstack([a for a, _ in alpha_cost]) if alpha_cost else np.zeros((n_problems, 0))
    cost = np.concatenate([c for _, c in alpha_cost])
    # the attributes LinearSVC.fit sets for solver="dual_cd"
    estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    estimator.coef_ = np.ascontiguousarray(W[:, :n_features])
    estimator.intercept_ = W[:, n_features] * bias
    estimator.n_iter_ = int(rounds)
    estimator.dual_coef_ = alpha
    estimator.dual_objective_ = np.array([svm_dual_objective(W[p], alpha[p], cost,
                                                             estimator.loss)
                                          for p in range(n_problems)])
    info["rounds"] = rounds
    info["seconds_per_round"] = float(np.median(seconds)) if seconds else 0.0
    info["duality_gap"] = gaps[len(gaps) - 1] if gaps else None
    return estimator
