"""From dask collections to row partitions, and from partitions to validated shards.

A partition is one row block of ``X`` (a dask array with one column chunk:
rows whole; dense numpy or scipy-sparse chunks) with the matching blocks of
``y`` and ``sample_weight``.  Labels are gathered globally first (each
partition sends its distinct labels and their weighted counts), so every
shard is encoded against the same ``classes``; a shard is a plain dict of
numpy arrays / a CSR matrix validated by :mod:`linclass._validation`
(nothing compiled is pickled).
"""
import numbers

import numpy as np

from .._validation import check_array, check_sample_weight, check_target, encode_labels
from .runner import import_dask

__all__ = ["RowPartitions", "row_partitions", "make_shard", "label_counts", "merge_label_counts"]


class RowPartitions:
    """Delayed row blocks of X, y and sample_weight (``None`` when not given)."""

    def __init__(self, X_blocks, y_blocks, w_blocks, n_features, n_rows):
        self.X_blocks = X_blocks
        self.y_blocks = y_blocks
        self.w_blocks = w_blocks
        self.n_features = n_features
        self.n_rows = n_rows

    def __len__(self):
        return len(self.X_blocks)


def _split_like(values, chunks, name, dask):
    """Blocks of a 1-D ``values`` (dask array or in-memory) that follow X's row chunks."""
    import dask.array as da
    if values is None:
        return [None] * len(chunks)
    if isinstance(values, numbers.Number) and name == "sample_weight":
        values = np.full(int(sum(chunks)), float(values))
    if isinstance(values, da.Array):
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError("%s must be 1-D with one entry per row, got a dask array of shape "
                             "%r" % (name, values.shape))
        if tuple(values.chunks[0]) != tuple(chunks):
            if any(np.isnan(c) for c in values.chunks[0]) or any(np.isnan(c) for c in chunks):
                raise ValueError("%s has row chunks %r but X has %r, and unknown chunk sizes "
                                 "cannot be aligned; call compute_chunk_sizes() on both"
                                 % (name, values.chunks[0], chunks))
            if values.shape[0] != sum(chunks):
                raise ValueError("%s has %d entries but X has %d rows"
                                 % (name, values.shape[0], sum(chunks)))
            values = values.rechunk((tuple(chunks),))
        return list(values.to_delayed().ravel())
    values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values.ravel()
    if values.ndim != 1:
        raise ValueError("%s must be 1-D with one entry per row, got shape %r"
                         % (name, values.shape))
    if any(np.isnan(c) for c in chunks):
        raise ValueError("X has unknown row chunk sizes; call X.compute_chunk_sizes() or give "
                         "%s as a dask array chunked like X" % name)
    if values.shape[0] != sum(chunks):
        raise ValueError("%s has %d entries but X has %d rows"
                         % (name, values.shape[0], int(sum(chunks))))
    bounds = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64)
    return [values[bounds[k]:bounds[k + 1]] for k in range(len(chunks))]


def row_partitions(X, y, sample_weight=None):
    """Split a 2-D dask array X (rows whole) and its targets into partitions.

    Raises ``TypeError`` for X that is not a dask array and ``ValueError`` for
    several column chunks, an unknown width or targets that do not match.
    """
    dask = import_dask()
    import dask.array as da
    if not isinstance(X, da.Array):
        raise TypeError("X must be a dask array (dense or scipy-sparse chunks), got %s; for data "
                        "in memory call the estimator's own fit, or wrap it with "
                        "dask.array.from_array(X, chunks=(rows_per_partition, -1))"
                        % type(X).__name__)
    if X.ndim != 2:
        raise ValueError("X must be 2-D (n_samples, n_features), got a dask array with %d "
                         "dimension(s)" % X.ndim)
    if X.numblocks[1] != 1:
        raise ValueError("X has %d column chunks; the distributed learners need whole rows in "
                         "each partition: X = X.rechunk({1: -1})" % X.numblocks[1])
    n_features = X.shape[1]
    if not isinstance(n_features, numbers.Integral) or np.isnan(n_features):
        raise ValueError("X has an unknown number of columns; give the dask array its shape")
    if y is None:
        raise ValueError("y is required (got None)")
    chunks = X.chunks[0]
    X_blocks = list(X.to_delayed().ravel())
    y_blocks = _split_like(y, chunks, "y", dask)
    w_blocks = _split_like(sample_weight, chunks, "sample_weight", dask)
    n_rows = None if any(np.isnan(c) for c in chunks) else int(sum(chunks))
    return RowPartitions(X_blocks, y_blocks, w_blocks, int(n_features), n_rows)


# -- worker-side functions -----------------------------------------------------------
def label_counts(y, sample_weight):
    """(distinct labels, their weighted counts, their counts) of one partition's targets."""
    y = check_target(y)
    if y.shape[0] == 0:
        return y[:0], np.zeros(0), np.zeros(0)
    labels, codes = encode_labels(y)
    weights = check_sample_weight(sample_weight, y.shape[0], allow_all_zero=True)
    return (labels, np.bincount(codes, weights=weights, minlength=len(labels)),
            np.bincount(codes, minlength=len(labels)).astype(np.float64))


def merge_label_counts(a, b):
    """Union of two (labels, weighted counts, counts) triples, counts added."""
    labels = np.union1d(a[0], b[0]) if len(a[0]) and len(b[0]) else (a[0] if len(a[0]) else b[0])
    weighted, counts = np.zeros(len(labels)), np.zeros(len(labels))
    for part in (a, b):
        if len(part[0]):
            where = np.searchsorted(labels, part[0])
            weighted[where] += part[1]
            counts[where] += part[2]
    return labels, weighted, counts


def check_partition(X, y, sample_weight, index, n_features, classes):
    """Validated (X, codes, sample_weight) of partition ``index``."""
    X = check_array(X, name="X (partition %d)" % index, allow_empty=True)
    if X.shape[1] != n_features:
        raise ValueError("partition %d of X has %d columns but X has %d: every partition "
                         "must have the same width" % (index, X.shape[1], n_features))
    y = check_target(y, X.shape[0], name="y (partition %d)" % index)
    _, codes = encode_labels(y, classes) if y.shape[0] else (classes, np.zeros(0, np.int32))
    sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=True)
    return X, codes, sample_weight


def make_shard(X, y, sample_weight, index, n_features, classes, class_weights=None):
    """A validated partition as a plain dict (kept on its worker between rounds).

    ``weights`` are ``sample_weight * class_weights[codes]``, exactly as the
    in-memory estimators form them.
    """
    X, codes, sample_weight = check_partition(X, y, sample_weight, index, n_features, classes)
    weights = sample_weight
    if class_weights is not None:
        weights = np.ascontiguousarray(sample_weight * class_weights[codes])
    return {"X": X, "codes": codes, "weights": weights, "index": index}
