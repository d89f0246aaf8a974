"""Naive Bayes classifiers for discrete features: multinomial and multivariate
Bernoulli event models, trained by (weighted) counting.

Both models score ``log P(y) + log P(x | y)`` linearly in the features:

* :class:`MultinomialNB` (word counts): ``log P(x|y) = sum_j x_j log theta_{yj}``
  (the multinomial coefficient does not depend on ``y`` and is dropped);
* :class:`BernoulliNB` (word presence): ``log P(x|y) = sum_j b_j log theta_{yj}
  + (1 - b_j) log(1 - theta_{yj})`` with ``b_j = [x_j > binarize]``.

Smoothing of the estimate of ``theta`` from counts ``n_{yj}`` (``n_y`` the total
for class y: total count of features for the multinomial model, number of
documents for the Bernoulli model):

* Lidstone (Laplace for ``alpha=1``): ``(n_{yj} + alpha) / (n_y + alpha * V)``
  with ``V = n_features`` (multinomial) or 2 (Bernoulli, per feature);
* m-estimate (``m`` given): ``(n_{yj} + m p_j) / (n_y + m)`` with the prior
  ``p`` (``prior_p``; uniform by default: ``1/n_features`` for the multinomial,
  ``1/2`` for the Bernoulli model).  ``m = 0`` is maximum likelihood; Laplace
  is the m-estimate with uniform ``p`` and ``m = V``.

Class priors are learned (relative weighted class frequencies), uniform
(``fit_prior=False``) or given (``class_prior``).  Probabilities are computed in
log space with log-sum-exp, so long documents do not underflow.

The (n_classes, n_features) tables (``feature_count_``, ``feature_log_prob_``,
``feature_log_prob_absent_``) are Fortran-ordered: each feature's class entries
are contiguous, which keeps the rows of frequent words in cache while counting
and scoring sparse text (see ``linclass._core._naive_bayes``).  Sparse input is
scored by a kernel that adds each row's entries in scipy's order (the same
bits as ``X @ feature_log_prob_.T``), and Bernoulli's binarisation happens as
the kernels read X, without a binarised copy.

References
----------
McCallum, A. & Nigam, K. (1998). A comparison of event models for naive Bayes
text classification. AAAI-98 Workshop on Learning for Text Categorization.
Mitchell, T. (1997). Machine Learning, section 6.9.1 (the m-estimate).
Manning, Raghavan & Schuetze (2008). Introduction to Information Retrieval, ch. 13.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._core import _naive_bayes
from ._common import rows_args
from ._common import CheckedScoreMixin, log_softmax
from .._validation import as_float_param, check_classification_target, check_finite_output
from .._validation import (check_array, check_is_fitted, check_n_features, check_sample_weight,
                           check_target, encode_labels, plain_labels)
from ..base import BaseEstimator, ClassifierMixin

__all__ = ["MultinomialNB", "BernoulliNB"]


def _feature_major(table):
    """A (K, n_features) table as the C-contiguous (n_features, K) array the
    kernels read (no copy for the Fortran-ordered tables ``fit`` stores)."""
    return np.ascontiguousarray(np.asarray(table, dtype=np.float64).T)


class _BaseDiscreteNB(CheckedScoreMixin, ClassifierMixin, BaseEstimator):
    """Counting, smoothing, priors and log-space prediction shared by both models."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # count models on Gaussian blobs: scikit-learn's accuracy bar does not apply
        tags.classifier_tags.poor_score = True
        return tags

    _n_values_per_feature = None     # V of the Laplace rule (set by subclasses)

    # -- input -------------------------------------------------------------
    def _prepare_X(self, X):
        """Validated X (Bernoulli's kernels binarise it as they read it)."""
        return check_array(X)

    def _binarize_threshold(self):
        """(binarize, threshold) for the kernels: count and score ``[x > threshold]``
        instead of ``x`` when ``binarize``."""
        return False, 0.0

    def _check_params(self):
        if self.m is None:
            if (isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real)
                    or not np.isfinite(self.alpha) or self.alpha < 0):
                raise ValueError("alpha must be a finite number >= 0, got %r" % (self.alpha,))
        else:
            if (isinstance(self.m, bool) or not isinstance(self.m, numbers.Real)
                    or not np.isfinite(self.m) or self.m < 0):
                raise ValueError("m must be a finite number >= 0, got %r" % (self.m,))
        if self.prior_p is not None:
            p = as_float_param(self.prior_p, "prior_p")
            if p.ndim > 1 or not ((p >= 0) & (p <= 1)).all():
                raise ValueError("prior_p must hold probabilities in [0, 1], got %r"
                                 % (self.prior_p,))
        if self.class_prior is not None:
            p = as_float_param(self.class_prior, "class_prior")
            if p.ndim != 1 or not np.isfinite(p).all() or (p < 0).any():
                raise ValueError("class_prior must be a 1-D array of probabilities, got %r"
                                 % (self.class_prior,))
        if not isinstance(self.fit_prior, (bool, np.bool_)):
            raise ValueError("fit_prior must be True or False, got %r" % (self.fit_prior,))

    # -- fitting -----------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Count features per class and estimate the smoothed parameters.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), optional
            Each sample counts ``sample_weight[i]`` times.
        """
        self._check_params()
        X = self._prepare_X(X)
        classes, codes = check_classification_target(y, X.shape[0])
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if not sample_weight.any():
            raise ValueError("sample weights are all zero: there is nothing to count")
        self._reset(classes, X.shape[1])
        self._count(X, codes, sample_weight)
        self._update_parameters()
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a batch of samples to the counts (streaming training).

        Parameters
        ----------
        X, y, sample_weight : as in :meth:`fit`
        classes : array-like, required on the first call
            Every label the stream will contain.
        """
        self._check_params()
        X = self._prepare_X(X)
        y = check_target(y, X.shape[0])
        first_call = not hasattr(self, "classes_")
        if first_call:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit "
                                 "(every label the data stream will contain)")
            # the shared label check: no NaN/None/complex class, one kind
            classes = plain_labels(np.unique(check_target(classes, name="classes")))
            if len(classes) < 2:
                raise ValueError("classes has only one class; naive Bayes needs at least 2")
            self._reset(classes, X.shape[1])
        else:
            check_n_features(X, self.n_features_in_, owner=self)
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)),
                                                           self.classes_):
                raise ValueError("classes %r differ from those of the first partial_fit "
                                 "call %r" % (list(classes), list(self.classes_)))
        _, codes = encode_labels(y, self.classes_)
        sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=True)
        self._count(X, codes, sample_weight)
        self._update_parameters()
        return self

    def _reset(self, classes, n_features):
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.class_count_ = np.zeros(len(classes))
        # feature-major storage (see linclass._core._naive_bayes), seen as (K, n_features)
        self.feature_count_ = np.zeros((n_features, len(classes))).T

    def _count(self, X, codes, sample_weight):
        """class_count_ += weighted class counts; feature_count_ += Y.T @ X."""
        n_classes = len(self.classes_)
        if np.shape(self.feature_count_) != (n_classes, X.shape[1]):
            # the kernel adds to column y_i of each feature's row: shapes checked here
            raise ValueError("feature_count_ has shape %r, expected (n_classes, n_features) "
                             "= %r" % (np.shape(self.feature_count_), (n_classes, X.shape[1])))
        counts = self.feature_count_.T
        if not (counts.flags.c_contiguous and counts.flags.writeable
                and counts.dtype == np.float64):     # e.g. a loaded model's C-ordered counts
            self.feature_count_ = np.asfortranarray(self.feature_count_, dtype=np.float64)
            counts = self.feature_count_.T
        binarize, threshold = self._binarize_threshold()
        _naive_bayes.count_features(y=np.ascontiguousarray(codes, dtype=np.int32),
                                    sample_weight=sample_weight, binarize=binarize,
                                    threshold=threshold, counts=counts, **rows_args(X))
        self.class_count_ += np.bincount(codes, weights=sample_weight, minlength=n_classes)

    def _m_estimate(self, counts, totals, n_values):
        """log theta of the m-estimate, (K, n_features) Fortran-ordered:
        log(counts + m p) - log(totals + m)."""
        prior = self._prior_p(counts.shape[1], n_values)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asfortranarray(np.log(counts + self.m * prior)
                                     - np.log(totals[:, None] + self.m))

    def _prior_p(self, n_features, n_values):
        if self.prior_p is None:
            return np.full(n_features, 1.0 / n_values)
        p = np.asarray(self.prior_p, dtype=np.float64)
        if p.shape != (n_features,):
            raise ValueError("prior_p must have one probability per feature, shape (%d,), "
                             "got %r" % (n_features, p.shape))
        if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
            raise ValueError("prior_p must hold probabilities in [0, 1]")
        return p

    def _update_class_log_prior(self):
        n_classes = len(self.classes_)
        if self.class_prior is not None:
            prior = np.asarray(self.class_prior, dtype=np.float64)
            if prior.shape != (n_classes,):
                raise ValueError("class_prior must have one probability per class, shape "
                                 "(%d,), got %r" % (n_classes, prior.shape))
            if not np.all(np.isfinite(prior)) or np.any(prior < 0) or \
                    not np.isclose(prior.sum(), 1.0):
                raise ValueError("class_prior must be non-negative and sum to 1")
            with np.errstate(divide="ignore"):
                self.class_log_prior_ = np.log(prior)
        elif self.fit_prior:
            total = self.class_count_.sum()
            with np.errstate(divide="ignore"):
                self.class_log_prior_ = (np.log(self.class_count_) - np.log(total)
                                         if total > 0 else np.full(n_classes, -np.log(n_classes)))
        else:
            self.class_log_prior_ = np.full(n_classes, -np.log(n_classes))

    def _smoothing_positive(self):
        """True when the smoothing (alpha or m) is > 0: no log-probability is -inf,
        so prediction needs no pass looking for one (a given ``prior_p`` may hold 0)."""
        if self.m is None:
            return isinstance(self.alpha, numbers.Real) and self.alpha > 0
        return self.prior_p is None and isinstance(self.m, numbers.Real) and self.m > 0

    # -- prediction --------------------------------------------------------
    def _check_X(self, X):
        check_is_fitted(self, "feature_log_prob_")
        X = self._prepare_X(X)
        check_n_features(X, self.n_features_in_, owner=self)
        return X

    def _scores(self, X, table, minus=None):
        """``X @ (table - minus)`` (``minus`` optional) for the feature-major
        (n_features, K) tables, X read as the model counts it (binarised by
        Bernoulli); sparse X by the prefetching kernel, in scipy's sum order."""
        binarize, threshold = self._binarize_threshold()
        # the kernel indexes the table's rows by X's columns: shapes checked here
        # (fitted attributes may have been replaced since fit)
        K = len(self.classes_)
        if table.shape != (X.shape[1], K) or (minus is not None and minus.shape != table.shape):
            raise ValueError("the fitted log-probability tables have shape %r, expected "
                             "(n_classes, n_features) = %r"
                             % (table.T.shape, (K, X.shape[1])))
        if sp.issparse(X):
            out = np.empty((X.shape[0], table.shape[1]))
            if X.shape[0]:
                args = rows_args(X)
                _naive_bayes.sparse_scores(data=args["data"], indices=args["indices"],
                                           indptr=args["indptr"], n_rows=X.shape[0],
                                           table=table, minus=minus, binarize=binarize,
                                           threshold=threshold, out=out)
            return out
        if binarize:
            X = (X > threshold).astype(np.float64)
        return np.asarray(X @ (table if minus is None else table - minus))

    def predict_joint_log_proba(self, X):
        """``log P(x, y)`` up to a per-sample constant, shape (n_samples, n_classes)."""
        X = self._check_X(X)
        return check_finite_output(self, self._joint_log_likelihood(X), X,
                                   "class log-likelihoods", log_domain=True)

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        jll = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X):
        """``log P(y | x)`` normalised with log-sum-exp (no underflow)."""
        return log_softmax(self.predict_joint_log_proba(X))

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))


class MultinomialNB(_BaseDiscreteNB):
    """Multinomial naive Bayes (word counts; McCallum & Nigam, 1998).

    Parameters
    ----------
    alpha : float, default=1.0
        Lidstone smoothing (1 = Laplace, 0 = maximum likelihood).  Ignored when
        ``m`` is given.
    m : float or None, default=None
        Equivalent sample size of the m-estimate ``(n_yj + m p_j) / (n_y + m)``.
    prior_p : array (n_features,) or None
        The m-estimate's prior ``p`` (uniform ``1/n_features`` by default).
    fit_prior : bool, default=True
        Learn class priors from the data; False: uniform.
    class_prior : array (n_classes,) or None
        Given class priors (override ``fit_prior``).

    Attributes
    ----------
    classes_, class_count_, feature_count_ (n_classes, n_features),
    class_log_prior_, feature_log_prob_ (log theta), n_features_in_
    """

    def __init__(self, alpha=1.0, *, m=None, prior_p=None, fit_prior=True, class_prior=None):
        self.alpha = alpha
        self.m = m
        self.prior_p = prior_p
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _prepare_X(self, X):
        X = check_array(X)
        values = X.data if sp.issparse(X) else X
        if values.size and values.min() < 0:
            raise ValueError("Negative values in data passed to MultinomialNB: it needs "
                             "non-negative feature counts (min %g)" % values.min())
        return X

    def _update_parameters(self):
        counts = _feature_major(self.feature_count_)
        totals = counts.sum(axis=0)
        if not np.isfinite(totals).all():           # one check of the (n_classes,) totals
            raise ValueError("%s: the feature counts of a class overflow double precision "
                             "(X holds values up to the largest double); scale the counts"
                             % type(self).__name__)
        n_features = counts.shape[0]
        if self.m is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                log_den = np.log(totals + self.alpha * n_features)
            table = np.empty_like(counts)
            _naive_bayes.multinomial_tables(counts, float(self.alpha), log_den, table)
            self.feature_log_prob_ = table.T
        else:
            self.feature_log_prob_ = self._m_estimate(counts.T, totals, n_features)
        self._update_class_log_prior()

    def _joint_log_likelihood(self, X):
        flp = self.feature_log_prob_
        if not self._smoothing_positive() and np.isneginf(flp).any():
            # maximum likelihood with unseen features: 0 * log 0 counts as 0
            flp = np.where(np.isneginf(flp), -1e300, flp)
        return self._scores(X, _feature_major(flp)) + self.class_log_prior_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


class BernoulliNB(_BaseDiscreteNB):
    """Multivariate Bernoulli naive Bayes (word presence; McCallum & Nigam, 1998).

    Parameters
    ----------
    alpha : float, default=1.0
        Lidstone smoothing ``(n_yj + alpha) / (n_y + 2 alpha)``; ignored when
        ``m`` is given.
    binarize : float or None, default=0.0
        A feature is present when ``x_j > binarize``; None: X is used as it is
        (it should hold 0/1 values).
    m : float or None, default=None
        m-estimate ``(n_yj + m p_j) / (n_y + m)``.
    prior_p : array (n_features,) or None
        The m-estimate's prior probability of presence (default 1/2).
    fit_prior, class_prior : as in :class:`MultinomialNB`.

    Attributes
    ----------
    classes_, class_count_, feature_count_, class_log_prior_,
    feature_log_prob_ (log P(x_j = 1 | y)), feature_log_prob_absent_
    (log P(x_j = 0 | y)), n_features_in_
    """

    def __init__(self, alpha=1.0, *, binarize=0.0, m=None, prior_p=None, fit_prior=True,
                 class_prior=None):
        self.alpha = alpha
        self.binarize = binarize
        self.m = m
        self.prior_p = prior_p
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _check_params(self):
        super()._check_params()
        if self.binarize is not None and (
                isinstance(self.binarize, bool) or not isinstance(self.binarize, numbers.Real)
                or np.isnan(self.binarize)):
            raise ValueError("binarize must be a number or None, got %r" % (self.binarize,))

    def _binarize_threshold(self):
        self._check_params()
        if self.binarize is None:
            return False, 0.0
        return True, float(self.binarize)

    def _update_parameters(self):
        counts = _feature_major(self.feature_count_)
        totals = np.ascontiguousarray(self.class_count_, dtype=np.float64)
        if self.m is None:
            # log((n_y - n_yj + alpha) / (n_y + 2 alpha)) directly: exact for theta ~ 1
            with np.errstate(divide="ignore", invalid="ignore"):
                log_den = np.log(totals + 2 * self.alpha)
            present, absent = np.empty_like(counts), np.empty_like(counts)
            _naive_bayes.bernoulli_tables(counts, float(self.alpha), totals, log_den,
                                          present, absent)
            self.feature_log_prob_, self.feature_log_prob_absent_ = present.T, absent.T
        else:
            self.feature_log_prob_ = self._m_estimate(counts.T, totals, 2)
            with np.errstate(divide="ignore", invalid="ignore"):
                self.feature_log_prob_absent_ = np.log1p(-np.exp(self.feature_log_prob_))
        self._update_class_log_prior()

    def _joint_log_likelihood(self, X):
        present, absent = self.feature_log_prob_, self.feature_log_prob_absent_
        if not self._smoothing_positive():
            present = np.where(np.isneginf(present), -1e300, present)
            absent = np.where(np.isneginf(absent), -1e300, absent)
        # sum_j x_j log p_j + (1 - x_j) log(1 - p_j) = x . (log p - log(1 - p)) + sum_j log(1 - p_j)
        absent = _feature_major(absent)
        return (self._scores(X, _feature_major(present), absent)
                + absent.sum(axis=0) + self.class_log_prior_)
