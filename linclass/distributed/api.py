"""``fit(estimator, X, y, client=None)``: the one entry point of linclass.distributed.

Why a function and not distributed twins of the estimators: the estimator
keeps every parameter, ``get_params``/``set_params``, ``clone`` and
persistence exactly as they are, and what comes back is the estimator itself,
fitted -- an ordinary linclass model that predicts and saves without Dask.
The distributed algorithm follows from the estimator's type; its own knobs
(none yet beyond the client) are keyword arguments of :func:`fit`.
"""
import time

import numpy as np

from .._validation import check_max_iter
from .runner import DistributedError, Runner, import_dask
from .partitions import label_counts, merge_label_counts, row_partitions

__all__ = ["DistributedError", "fit"]


def _resolve_client(client):
    """The client to use: the one given, else dask's default client, else None (local)."""
    if client is not None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ImportError("a client needs dask.distributed: pip install 'linclass[dask]'") \
                from exc
        if not isinstance(client, Client):
            raise TypeError("client must be a distributed.Client or None, got %s"
                            % type(client).__name__)
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        client = default_client()
    except ValueError:          # no client: dask's local scheduler
        return None
    return client


def _algorithm(estimator):
    from ..linear import BernoulliNB, LinearSVC, LogisticRegression, MultinomialNB, Perceptron
    from ..linear.maxent import MaxEnt
    from ..sequence import SequenceTagger
    if isinstance(estimator, SequenceTagger):
        return "tagger"
    if isinstance(estimator, MaxEnt):
        return "maxent"
    if isinstance(estimator, (MultinomialNB, BernoulliNB)):
        return "naive_bayes"
    if isinstance(estimator, LogisticRegression):
        return "logistic"
    if isinstance(estimator, LinearSVC):
        return "linear_svc"
    if isinstance(estimator, Perceptron):
        return "perceptron"
    raise TypeError("linclass.distributed.fit has no distributed algorithm for %s; supported: "
                    "MultinomialNB, BernoulliNB, LogisticRegression, MaxEnt, LinearSVC, "
                    "Perceptron, SequenceTagger"
                    % type(estimator).__name__)


def fit(estimator, X, y, *, sample_weight=None, client=None, info=None, max_rounds=200,
        local_epochs=1, gap_tol=1e-4):
    """Fit a linclass estimator on partitioned data with Dask.

    Parameters
    ----------
    estimator : MultinomialNB, BernoulliNB, LogisticRegression, MaxEnt, LinearSVC,
        Perceptron or SequenceTagger
        Its parameters are used as they are; it is fitted in place and returned.
    X : dask.array.Array, shape (n_samples, n_features), or dask.bag.Bag
        Dense (numpy) or scipy-sparse chunks, one column chunk (rows whole).
        Each row chunk is a partition; empty partitions are allowed.  A bag of
        sentences for SequenceTagger; for MaxEnt a bag of its in-memory inputs
        (featuresets, ``feature_function`` inputs or candidate matrices), or of
        ``(input, label)`` pairs with ``y=None``.
    y : dask array, array-like or dask.bag.Bag, shape (n_samples,), or None
        Labels; the classes are the labels of all partitions together.  A bag
        partitioned like a bag ``X``; None when ``X`` holds (input, label) pairs.
    sample_weight : dask array or array-like, shape (n_samples,), optional
        (a bag partitioned like ``X`` for a bag ``X``)
    client : distributed.Client or None
        None: dask's default client if one exists, else dask's local scheduler
        in this process (``dask.config.set(scheduler=...)``).  Its default,
        "threads", runs the partitions on ``num_workers`` threads (the kernels
        release the GIL): multi-core CoCoA+ for LinearSVC on one machine, with
        the same result as the synchronous scheduler for a fixed chunking and seed.  A closed client
        or a cluster lost during the fit raises :class:`DistributedError` and
        leaves the estimator unchanged.
    max_rounds, local_epochs, gap_tol : int, int, float
        LinearSVC (CoCoA+): at most ``max_rounds`` communication rounds of
        ``local_epochs`` local passes each, until the relative duality gap of every
        binary problem is at most ``gap_tol``.  Perceptron: at most
        ``min(max_rounds, max_iter)`` mixing rounds of one epoch each.
    info : dict or None
        When given, filled with ``rounds`` (passes over the partitions),
        ``seconds_per_round`` (median) and ``seconds`` (wall time of the fit).

    Returns
    -------
    estimator : the same estimator, fitted (no reference to Dask kept).

    Algorithms
    ----------
    * naive Bayes: per-partition counts by the estimator's own ``partial_fit``,
      tree reduction, the estimator's own smoothing (exact: bit-for-bit equal to
      ``fit`` on integer-valued counts);
    * logistic regression (L2, L1 or none; binary or multinomial; solver
      "lbfgs"): L-BFGS-B on the driver over loss and gradient sums of the
      partitions (Chu et al., 2007), the same optimum as ``fit``;
    * MaxEnt: the feature vocabulary built over all partitions first (the same
      ``vocabulary_`` as ``fit`` on the concatenation), then L-BFGS-B on the
      driver over log-likelihood and model-expectation sums of the partitions
      (the same optimum as ``fit``), or GIS/IIS over exact reductions of the
      expectation tables (the same iterations as ``fit``); see
      :mod:`linclass.distributed.maxent`;
    * LinearSVC (hinge or squared hinge, binary or one-vs-rest): CoCoA+ (Ma et
      al., 2015) with dual coordinate descent on each partition, stopped by the
      duality gap;
    * Perceptron (plain or averaged): iterative parameter mixing (McDonald, Hall
      & Mann, 2010), one epoch per partition and round, the averaging sums mixed
      too;
    * SequenceTagger (trainer="perceptron", order 1 or 2): ``X`` and ``y`` are
      dask bags of sentences and label sequences partitioned alike (see
      :func:`conll_bags`); the label set and the feature vocabulary are built
      over all partitions first (the same feature ids as ``fit`` on the
      concatenation), then iterative parameter mixing of the structured
      perceptron, one epoch per partition and round (see
      :mod:`linclass.distributed.sequence`).
    """
    start = time.perf_counter()
    info = {} if info is None else info
    max_rounds = check_max_iter(estimator, max_rounds, "max_rounds")   # hard cap
    algorithm = _algorithm(estimator)
    import_dask()
    runner = Runner(_resolve_client(client))
    if algorithm == "tagger":
        if sample_weight is not None:
            raise ValueError("SequenceTagger takes no sample_weight")
        from .sequence import fit_tagger
        with runner.driver_context():
            fit_tagger(estimator, X, y, runner, info, max_rounds=max_rounds)
        info["seconds"] = time.perf_counter() - start
        info["n_partitions"] = X.npartitions
        return estimator
    if algorithm == "maxent":
        from .maxent import fit_maxent
        with runner.driver_context():
            fit_maxent(estimator, X, y, sample_weight, runner, info)
        info["seconds"] = time.perf_counter() - start
        return estimator
    partitions = row_partitions(X, y, sample_weight)
    delayed = runner.dask.delayed
    with runner.driver_context():
        counts = [delayed(label_counts, pure=False)(yb, wb)
                  for yb, wb in zip(partitions.y_blocks, partitions.w_blocks)]
        classes, class_totals, class_counts = runner.compute_reduce(counts, merge_label_counts)
        if classes.dtype.kind == "f" and np.any(classes != np.round(classes)):
            raise ValueError("Unknown label type: continuous values in y (first %r); a "
                             "classifier needs discrete class labels"
                             % classes[classes != np.round(classes)][0])
        if sample_weight is not None and not np.any(class_totals > 0):
            raise ValueError("sample_weight: all weights are zero over all partitions; at "
                             "least one sample must have a positive weight")
        if len(classes) < 2:
            raise ValueError("y has only one class (%r) over all partitions; this classifier "
                             "needs at least 2 classes to train"
                             % (classes[0] if len(classes) else None,))
        if algorithm == "naive_bayes":
            from .naive_bayes import fit_naive_bayes
            fit_naive_bayes(estimator, partitions, classes, runner, info)
        elif algorithm == "logistic":
            from .logistic import fit_logistic
            fit_logistic(estimator, partitions, classes, class_totals, runner, info)
        elif algorithm == "perceptron":
            from .perceptron import fit_perceptron
            fit_perceptron(estimator, partitions, classes, runner, info, max_rounds=max_rounds)
        else:
            from .svm import fit_linear_svc
            fit_linear_svc(estimator, partitions, classes, class_counts, runner, info,
                           max_rounds=max_rounds, local_epochs=local_epochs, gap_tol=gap_tol)
    info["seconds"] = time.perf_counter() - start
    info["n_partitions"] = len(partitions)
    return estimator
