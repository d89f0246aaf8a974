"""MaxEnt (class-specific feature functions) on partitions: L-BFGS on the driver,
log-likelihood and model-expectation sums from the workers.

Data: a dask bag of inputs (NLTK-style featuresets, inputs of a
``feature_function``, or ``(n_classes, n_features)`` candidate matrices) with
a bag of labels partitioned alike, or one bag of ``(input, label)`` pairs
(``y=None``); or a 2-D dask array of numeric rows (the tensor-product
features).  Training runs in three phases:

1. **Labels, globally**: the union of the partitions' labels (sorted), or
   the estimator's ``classes`` (every label must be one of them).
2. **Feature vocabulary, globally**: each partition lists its joint features
   in order of first occurrence (featuresets: the ``(attribute, label)``
   pairs seen with their gold label; ``feature_function``: every name it
   produced); the lists are merged in partition order keeping first
   occurrences (a pairwise tree on the workers, order-preserving), so
   ``vocabulary_`` -- and with it the layout of ``coef_`` -- is exactly the
   one ``MaxEnt.fit`` builds on the partitions concatenated.
3. **L-BFGS**: each partition builds its joint feature matrix against the
   global vocabulary once (kept on its worker, plain numpy/CSR); the
   empirical expectation is summed once; at each evaluation the driver
   scatters the weights and every partition returns its log-likelihood and
   model expectation (``_core._maxent.model_expectation``), tree-combined on
   the workers.  The optimiser, its options and the fitted attributes are
   ``MaxEnt``'s own code (``MaxEnt._lbfgs``), so the optimum is the in-memory
   one up to the rounding of the partition sums.

GIS and IIS (``algorithm="gis"/"iis"``) are distributed too, as exact
reductions: the largest feature total (GIS's constant C, with ``fit``'s rule
for the correction feature), the gold candidates' slack, and for IIS the set
of distinct feature totals are reduced first; the correction feature is then
appended on each partition, and each iteration reduces the partitions'
log-likelihoods and expectation tables (``n_weights x n_totals`` doubles up
per partition) and runs ``MaxEnt``'s own update (``MaxEnt._scaling_loop``) on
the driver: the same iterations as in memory, equal up to the rounding of the
sums.  The correction feature works with L-BFGS as well.

Communication per evaluation: ``n_weights`` doubles down to each worker and
``n_weights + 1`` up from each partition (tree-combined).

Reference: Malouf, R. (2002). A comparison of algorithms for maximum entropy
parameter estimation. CoNLL.  Chu et al. (2007), Map-Reduce for machine
learning on multicore.
"""
import operator
import time
from itertools import chain

import numpy as np

from .._validation import check_sample_weight, check_target, encode_labels, plain_labels
from .partitions import label_counts, merge_label_counts, row_partitions

__all__ = ["fit_maxent"]

_FITTED = ("classes_", "input_kind_", "vocabulary_", "n_features_in_", "correction_",
           "_gis_constant", "coef_", "n_iter_", "loglik_", "objective_")


def _model(params, classes=None, state=None):
    from ..linear.maxent import MaxEnt
    model = MaxEnt(**params)
    if classes is not None:
        model.classes_ = classes
    for key, value in (state or {}).items():
        setattr(model, key, value)
    return model


# -- worker-side functions -------------------------------------------------------------
def _bag_shard(X_part, y_part, w_part, index, pairs):
    """One bag partition: its inputs (a list), labels and sample weights, checked."""
    X_part = list(X_part)
    if pairs:
        for i, item in enumerate(X_part):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError("partition %d, item %d: with y=None, X must be a bag of "
                                 "(input, label) pairs, got %s"
                                 % (index, i, type(item).__name__))
        y_part = [item[1] for item in X_part]
        X_part = [item[0] for item in X_part]
    else:
        y_part = list(y_part)
        if len(y_part) != len(X_part):
            raise ValueError("partition %d has %d inputs in X but %d labels in y: X and y "
                             "must be partitioned alike" % (index, len(X_part), len(y_part)))
    y = check_target(y_part, len(X_part), name="y (partition %d)" % index) if X_part \
        else np.zeros(0)
    w = None if w_part is None else list(w_part)
    if w is not None and len(w) != len(X_part):
        raise ValueError("partition %d has %d inputs but %d sample weights"
                         % (index, len(X_part), len(w)))
    return {"X": X_part, "y": y, "index": index,
            "w": check_sample_weight(w, len(X_part), allow_all_zero=True),
            "array": False}


def _array_shard(X, y, w, index, n_features):
    """One row block of a dask array (numeric input), checked."""
    from .._validation import check_array
    X = check_array(X, name="X (partition %d)" % index, allow_empty=True)
    if X.shape[1] != n_features:
        raise ValueError("partition %d of X has %d columns but X has %d: every partition "
                         "must have the same width" % (index, X.shape[1], n_features))
    y = check_target(y, X.shape[0], name="y (partition %d)" % index) if X.shape[0] \
        else np.zeros(0)
    return {"X": X, "y": y, "index": index,
            "w": check_sample_weight(w, X.shape[0], allow_all_zero=True),
            "array": True}


def _shard_labels(shard):
    return label_counts(shard["y"], shard["w"])


def _codes(y, classes):
    """Codes of y in ``classes`` order (the estimator's ``classes`` may be unsorted)."""
    order = np.argsort(classes, kind="stable")
    _, sorted_codes = encode_labels(y, classes[order])
    return order[sorted_codes].astype(np.int32)


def _shard_vocabulary(shard, params, classes):
    """(kind, first partition of that kind, joint feature keys in order of first
    occurrence or None, input width or None, first partition with that width)."""
    index = shard["index"]
    n = shard["X"].shape[0] if shard["array"] else len(shard["X"])
    if n == 0:
        return None, None, None, None, None
    model = _model(params, classes)
    kind = "matrix" if shard["array"] else model._input_kind(shard["X"])
    codes = _codes(shard["y"], classes)
    if kind == "featuresets":
        # MaxEnt's own encoding on this partition: the (attribute, label) pairs seen
        # with their gold label, in order of first occurrence
        model._featureset_matrix(shard["X"], True, codes)
        return kind, index, list(model.vocabulary_), None, None
    if kind == "function":
        model._function_matrix(shard["X"], fitting=True)
        return kind, index, list(model.vocabulary_), None, None
    if kind == "candidates":
        model._candidate_matrix(shard["X"], fitting=True)
        return kind, index, None, model.n_features_in_, index
    if not shard["array"]:
        raise ValueError("partition %d of X holds %s items: a bag must hold featuresets "
                         "(dicts), candidate matrices, or inputs of feature_function; numeric "
                         "rows go in a 2-D dask array" % (index, type(shard["X"][0]).__name__))
    return kind, index, None, shard["X"].shape[1], index


def _merge_vocabulary(a, b):
    """Order-preserving union of two partitions' (or subtrees') vocabularies."""
    if a[0] is None:
        return b
    if b[0] is None:
        return a
    if a[0] != b[0]:
        raise ValueError("partition %d holds %s input but partition %d holds %s input: every "
                         "partition must hold the same kind" % (a[1], a[0], b[1], b[0]))
    if a[3] != b[3]:
        raise ValueError("inconsistent feature widths across partitions: partition %d has "
                         "%d features, partition %d has %d" % (a[4], a[3], b[4], b[3]))
    keys = None if a[2] is None else list(dict.fromkeys(chain(a[2], b[2])))
    return a[0], a[1], keys, a[3], a[4]


def _shard_problem(shard, params, classes, state):
    """The partition's joint feature matrix against the global vocabulary, as the
    keyword arguments of ``_core._maxent`` (plain numpy arrays)."""
    n = shard["X"].shape[0] if shard["array"] else len(shard["X"])
    if n == 0:
        return {"n_samples": 0, "index": shard["index"]}
    model = _model(params, classes, state)
    F, n_rows = model._joint_matrix(shard["X"], fitting=False)
    if n_rows != n:
        raise ValueError("partition %d: %d examples but %d labels"
                         % (shard["index"], n_rows, n))
    n_weights = state["_n_weights"]
    if F.shape[1] != n_weights:       # cannot happen with the global vocabulary
        raise ValueError("partition %d: joint feature matrix of width %d, expected %d"
                         % (shard["index"], F.shape[1], n_weights))
    data, indices = np.ascontiguousarray(F.data, np.float64), np.ascontiguousarray(
        F.indices, np.int32)
    nnz = data.shape[0]
    if nnz == 0:                       # the kernels need one (unread) value
        data, indices = np.zeros(1), np.zeros(1, np.int32)
    totals = np.asarray(F.sum(axis=1)).ravel()
    return {"data": data, "indices": indices,
            "indptr": np.ascontiguousarray(F.indptr, np.int32), "n_samples": n,
            "n_classes": len(classes), "n_features": n_weights,
            "y": _codes(shard["y"], classes), "sample_weight": shard["w"],
            "index": shard["index"], "nnz": nnz,
            "max_total": float(totals.max()) if len(totals) else -np.inf}


_KERNEL_KEYS = ("data", "indices", "indptr", "n_samples", "n_classes", "n_features", "y",
                "sample_weight")


def _shard_constants(problem, n_weights):
    """(empirical expectation, weight sum, nnz, largest feature total, smallest feature
    value) of a partition."""
    from .._core import _maxent
    if problem["n_samples"] == 0:
        return np.zeros(n_weights), 0.0, 0, -np.inf, np.inf
    empirical = _maxent.empirical_expectation(**{k: problem[k] for k in _KERNEL_KEYS})
    nnz = problem["nnz"]
    return (empirical, float(problem["sample_weight"].sum()), nnz, problem["max_total"],
            float(problem["data"][:nnz].min()) if nnz else np.inf)


def _add_constants(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], max(a[3], b[3]), min(a[4], b[4])


def _matrix(problem):
    import scipy.sparse as sp
    nnz = problem["nnz"]
    return sp.csr_matrix((problem["data"][:nnz], problem["indices"][:nnz], problem["indptr"]),
                         shape=(problem["n_samples"] * problem["n_classes"],
                                problem["n_features"]))


def _shard_gold_slack(problem, C):
    """sum_i w_i (C - total of the gold candidate's features) of a partition."""
    if problem["n_samples"] == 0:
        return 0.0
    totals = np.asarray(_matrix(problem).sum(axis=1)).ravel()
    gold = totals.reshape(problem["n_samples"], problem["n_classes"])[
        np.arange(problem["n_samples"]), problem["y"]]
    return float((C - gold) @ problem["sample_weight"])


def _shard_add_correction(problem, C):
    """The partition with the correction feature ``C - sum_j f_j`` as its last column
    (zeros dropped), as ``MaxEnt.fit`` appends it."""
    import scipy.sparse as sp
    if problem["n_samples"] == 0:
        return problem
    F = _matrix(problem)
    totals = np.asarray(F.sum(axis=1)).ravel()
    F = sp.hstack([F, sp.csr_matrix((C - totals)[:, None])], format="csr")
    F.eliminate_zeros()
    F.sort_indices()
    out = dict(problem, data=np.ascontiguousarray(F.data, np.float64),
               indices=np.ascontiguousarray(F.indices, np.int32),
               indptr=np.ascontiguousarray(F.indptr, np.int32),
               n_features=problem["n_features"] + 1, nnz=F.nnz)
    if F.nnz == 0:
        out["data"], out["indices"] = np.zeros(1), np.zeros(1, np.int32)
    return out


def _shard_totals(problem):
    """Distinct feature totals of a partition's candidates (IIS)."""
    if problem["n_samples"] == 0:
        return np.zeros(0)
    return np.unique(np.asarray(_matrix(problem).sum(axis=1)).ravel())


def _shard_nf_index(problem, nf_values):
    """The partition with each candidate's index into the global ``nf_values`` (IIS)."""
    if problem["n_samples"] == 0:
        return problem
    totals = np.asarray(_matrix(problem).sum(axis=1)).ravel()
    return dict(problem, nf_index=np.searchsorted(nf_values, totals).astype(np.int32))


def _shard_scaling_expectation(problem, lam, n_nf):
    """(log-likelihood, expectation table (n_weights, n_nf)) of a partition: GIS
    (n_nf = 0: one column) or IIS (by feature total)."""
    from .._core import _maxent
    if problem["n_samples"] == 0:
        return 0.0, np.zeros((lam.shape[0], max(n_nf, 1)))
    arguments = {k: problem[k] for k in _KERNEL_KEYS}
    if n_nf == 0:
        loglik, model = _maxent.model_expectation(weights=lam, **arguments)
        return loglik, model[:, None]
    return _maxent.model_expectation(weights=lam, nf_index=problem["nf_index"], n_nf=n_nf,
                                     **arguments)


def _shard_expectation(problem, lam):
    from .._core import _maxent
    if problem["n_samples"] == 0:
        return 0.0, np.zeros_like(lam)
    return _maxent.model_expectation(weights=lam, **{k: problem[k] for k in _KERNEL_KEYS})


def _add_pair(a, b):
    return a[0] + b[0], a[1] + b[1]


# -- driver ----------------------------------------------------------------------------
def _check_estimator(estimator):
    estimator._check_params()


def _global_classes(estimator, labels):
    """classes_ as MaxEnt.fit sets them, from the union of the partitions' labels."""
    if estimator.classes is not None:
        classes = np.asarray(estimator.classes)
        if classes.ndim != 1 or classes.dtype == object or \
                len(np.unique(classes)) != len(classes) or len(classes) < 2:
            raise ValueError("classes must hold at least two distinct labels")
        unknown = np.setdiff1d(labels, classes) if len(labels) else labels
        if len(unknown):
            raise ValueError("label %r is not in classes=%r" % (unknown[0], classes.tolist()))
        return classes
    if len(labels) == 0:
        raise ValueError("X has no rows in any partition: nothing to learn")
    if len(labels) < 2:
        raise ValueError("y has only one class (%r) over all partitions; MaxEnt needs at "
                         "least 2 classes to train" % (labels[0] if len(labels) else None,))
    return plain_labels(labels)


def _shards(X, y, sample_weight, runner):
    """Persisted raw shards from a dask bag (with a bag y, or pairs) or a dask array."""
    import dask.array as da
    import dask.bag as db
    delayed = runner.dask.delayed
    if isinstance(X, da.Array):
        partitions = row_partitions(X, y, sample_weight)
        return runner.persist([
            delayed(_array_shard, pure=False)(Xb, yb, wb, k, partitions.n_features)
            for k, (Xb, yb, wb) in enumerate(zip(partitions.X_blocks, partitions.y_blocks,
                                                 partitions.w_blocks))])
    if not isinstance(X, db.Bag):
        raise TypeError("X must be a dask bag (featuresets, feature_function inputs or "
                        "candidate matrices; or (input, label) pairs with y=None) or a 2-D "
                        "dask array of numeric rows, got %s" % type(X).__name__)
    parts = {}
    for name, value in (("y", y), ("sample_weight", sample_weight)):
        if value is None:
            parts[name] = [None] * X.npartitions
            continue
        if not isinstance(value, db.Bag):
            raise TypeError("with a bag X, %s must be a dask bag partitioned like X (or None), "
                            "got %s" % (name, type(value).__name__))
        if value.npartitions != X.npartitions:
            raise ValueError("X has %d partitions but %s has %d: they must be partitioned "
                             "alike" % (X.npartitions, name, value.npartitions))
        parts[name] = value.to_delayed()
    return runner.persist([
        delayed(_bag_shard, pure=False)(xp, yp, wp, k, y is None)
        for k, (xp, yp, wp) in enumerate(zip(X.to_delayed(), parts["y"],
                                              parts["sample_weight"]))])


def fit_maxent(estimator, X, y, sample_weight, runner, info):
    """Fit ``estimator`` (MaxEnt: L-BFGS, GIS or IIS) on partitions; returns it fitted.

    The work happens on a fresh copy: the estimator changes only once all went well."""
    _check_estimator(estimator)
    params = estimator.get_params()
    raw = _shards(X, y, sample_weight, runner)
    problems = []
    try:
        labels, totals, _ = runner.map_reduce(_shard_labels, raw, merge_label_counts)
        if sample_weight is not None and not np.any(np.asarray(totals) > 0):
            raise ValueError("sample_weight: all weights are zero over all partitions; at "
                             "least one sample must have a positive weight")
        classes = _global_classes(estimator, labels)
        kind, _, keys, width, _ = runner.map_reduce(_shard_vocabulary, raw, _merge_vocabulary,
                                                    params, classes)
        if kind is None:
            raise ValueError("X has no rows in any partition: nothing to learn")
        state = {"input_kind_": kind, "vocabulary_": None, "n_features_in_": 0}
        if keys is not None:
            state["vocabulary_"] = {key: j for j, key in enumerate(keys)}
            n_weights = max(len(keys), 1)
        else:
            state["n_features_in_"] = int(width)
            n_weights = int(width) * (len(classes) if kind == "matrix" else 1)
        state["_n_weights"] = n_weights
        problems = runner.map_persist(_shard_problem, raw, params, classes, state)
        runner.release(raw)
        raw = []
        empirical, weight_sum, nnz, max_total, min_value = runner.map_reduce(
            _shard_constants, problems, _add_constants, n_weights)
        # MaxEnt.fit's checks and constants, from the reduced numbers
        iterative_scaling = estimator.algorithm in ("gis", "iis")
        if iterative_scaling and min_value < 0:
            raise ValueError("GIS and IIS need non-negative feature values (found %g); use "
                             "algorithm='lbfgs'" % min_value)
        correction = (estimator.algorithm == "gis") if estimator.correction_feature is None \
            else estimator.correction_feature
        C = float(max_total) if nnz else 0.0
        if correction and estimator.gis_constant is None:
            if runner.map_reduce(_shard_gold_slack, problems, operator.add, C) <= 0:
                C += 1.0        # as MaxEnt.fit: keep the correction feature attested
        if estimator.gis_constant is not None:
            if estimator.gis_constant < C:
                raise ValueError("gis_constant=%g is below the largest feature total %g"
                                 % (estimator.gis_constant, C))
            C = float(estimator.gis_constant)
        if correction:
            if min_value < 0:
                raise ValueError("the correction feature needs non-negative feature values")
            corrected = runner.map_persist(_shard_add_correction, problems, C)
            runner.release(problems)
            problems = corrected
            n_weights += 1
            empirical, weight_sum, nnz, _, _ = runner.map_reduce(
                _shard_constants, problems, _add_constants, n_weights)
        if nnz == 0:
            raise ValueError("no feature fires on any example: nothing to learn")
        inv_var = 0.0 if estimator.prior_variance is None else 1.0 / estimator.prior_variance
        seconds = []
        work_state = {k: v for k, v in state.items() if k != "_n_weights"}
        work = _model(params, classes, dict(work_state, correction_=(C, 0.0) if correction
                                            else None, _gis_constant=C))
        if iterative_scaling:
            if estimator.algorithm == "gis":
                nf_values, n_nf = np.array([C]), 0
            else:
                nf_values = runner.map_reduce(_shard_totals, problems, np.union1d)
                indexed = runner.map_persist(_shard_nf_index, problems, nf_values)
                runner.release(problems)
                problems, n_nf = indexed, len(nf_values)

            def table(lam):
                start = time.perf_counter()
                result = runner.map_reduce(_shard_scaling_expectation, problems, _add_pair,
                                           lam, n_nf)
                seconds.append(time.perf_counter() - start)
                return result

            lam, loglik, n_iter = work._scaling_loop(table, nf_values, empirical, inv_var,
                                                     n_weights)
        else:
            def expectation(lam):
                start = time.perf_counter()
                result = runner.map_reduce(_shard_expectation, problems, _add_pair, lam)
                seconds.append(time.perf_counter() - start)
                return result

            lam, loglik, n_iter = work._lbfgs(expectation, empirical, inv_var, weight_sum,
                                              n_weights)
        work._set_weights(lam, loglik, n_iter, inv_var)
    finally:
        runner.release(raw)
        runner.release(problems)
    for attr in ("vocabulary_", "correction_", "coef_", "_table_cache"):
        estimator.__dict__.pop(attr, None)
    for attr in _FITTED:
        setattr(estimator, attr, getattr(work, attr))
    info["rounds"] = len(seconds)
    info["seconds_per_round"] = float(np.median(seconds)) if seconds else 0.0
    info["n_partitions"] = len(problems)
    return estimator
