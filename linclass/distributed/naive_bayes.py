"""Naive Bayes on partitions: per-partition counts, summed by a tree reduction.

Each partition is counted by the estimator's own ``partial_fit`` (the same
validation, binarisation and counting kernel as ``fit``), on a fresh copy that
knows every class; the ``(class_count_, feature_count_)`` pairs are added
pairwise on the workers and the driver smooths the totals with the model's
own ``_update_parameters`` -- the code path of ``fit``.

Exactness: ``fit`` adds the rows of a class one after the other; the tree adds
partition sums.  Both are exact, hence bit-for-bit equal, whenever the summed
values are integers below 2**53 (word counts, binarised Bernoulli features,
integer sample weights) -- the data these event models are made for.  For
real-valued features (tf-idf) the two sums differ by rounding only (about
1e-16 relative); with a single partition they are bit-for-bit equal.

Reference: McCallum & Nigam (1998), A comparison of event models for naive
Bayes text classification.
"""
import numpy as np

from .partitions import check_partition

__all__ = ["fit_naive_bayes"]


def _partition_counts(params, X, y, sample_weight, index, n_features, classes):
    """(class_count, feature_count) of one partition, counted by ``partial_fit``."""
    estimator_class, estimator_params = params
    X, codes, sample_weight = check_partition(X, y, sample_weight, index, n_features, classes)
    if X.shape[0] == 0:
        return np.zeros(len(classes)), np.zeros((len(classes), n_features))
    model = estimator_class(**estimator_params)
    model.partial_fit(X, classes[codes], classes=classes, sample_weight=sample_weight)
    return model.class_count_, model.feature_count_


def _add_counts(a, b):
    return a[0] + b[0], a[1] + b[1]


def fit_naive_bayes(estimator, partitions, classes, runner, info):
    """Fit ``estimator`` (MultinomialNB or BernoulliNB) from partition counts."""
    estimator._check_params()
    delayed = runner.dask.delayed
    params = (type(estimator), estimator.get_params(deep=False))
    counts = [delayed(_partition_counts, pure=False)(params, X, y, w, k,
                                                     partitions.n_features, classes)
              for k, (X, y, w) in enumerate(zip(partitions.X_blocks, partitions.y_blocks,
                                                partitions.w_blocks))]
    class_count, feature_count = runner.compute_reduce(counts, _add_counts)
    if not class_count.any():
        raise ValueError("sample weights are all zero: there is nothing to count")
    # the state fit() leaves before smoothing, then fit()'s own smoothing
    estimator._reset(classes, partitions.n_features)
    estimator.class_count_ += class_count
    estimator.feature_count_ += feature_count
    estimator._update_parameters()
    info["rounds"] = 1
    return estimator
