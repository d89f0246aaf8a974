"""Maximum entropy classifier with class-specific feature functions.

The model is the general conditional log-linear model

    P(y | x) = exp(sum_j lam_j f_j(x, y)) / Z(x)

where the features ``f_j(x, y)`` may depend on the class in any way (not only
``phi(x) (x) e_y``).  Inputs to :meth:`MaxEnt.fit` / :meth:`MaxEnt.predict`:

1. a numeric matrix X (dense or sparse, n_samples x d): the tensor-product
   features ``f(x, y) = phi(x) (x) e_y`` (``d * n_classes`` weights; the model
   then equals multinomial logistic regression without intercept);
2. a list of NLTK-style featuresets (dicts ``{name: value}``): the template
   creates one feature per ``(name, value, label)`` for string / bool values
   (indicators, as NLTK's ``BinaryMaxentFeatureEncoding``) and per
   ``(name, label)`` with the value for numbers; only combinations seen with
   their gold label in training become features;
3. with ``feature_function=f``: any list of inputs, ``f(x, label)`` returning
   ``{feature name: value}`` for each candidate label (class-specific
   features; every name produced in training becomes a feature);
4. the feature vectors of every candidate class directly: a 3-D array
   ``(n_samples, n_classes, n_features)`` or a list of ``(n_classes,
   n_features)`` matrices (dense or sparse), candidate k belonging to
   ``classes[k]`` (the ``classes`` parameter, else the sorted labels of y).

Trainers (all maximise the log-likelihood minus ``||lam||^2 / (2 sigma^2)``
when ``prior_variance=sigma^2`` is given):

* ``"gis"`` -- generalised iterative scaling (Darroch & Ratcliff, 1972).  The
  correction feature ``f_c(x, y) = C - sum_j f_j(x, y)`` (C the largest feature
  sum in training) makes the sums constant, as in the original algorithm and
  NLTK; with ``correction_feature=False`` the same update with the slack
  ``C`` is still a valid bound (Curran & Clark, 2003).
* ``"iis"`` -- improved iterative scaling (Della Pietra et al., 1997): each
  weight's update solves ``sum_{i,y} P(y|x_i) f_j(x_i,y) exp(delta f#(x_i,y))
  = E~[f_j]`` by Newton's method.
* ``"lbfgs"`` -- scipy's L-BFGS-B on the negative log-likelihood (Malouf, 2002).

With a prior, GIS and IIS solve ``E~[f_j] - (lam_j + delta)/sigma^2 =
sum P f_j exp(delta f#)`` per feature by Newton's method (Chen & Rosenfeld,
2000).  Without one, weights of features never seen in training are
``-inf`` under GIS/IIS (as in NLTK); L-BFGS drives them towards it.
GIS and IIS need non-negative features.

The empirical and model expectations are computed by
:mod:`linclass._core._maxent` in one pass over the data per iteration.

References
----------
Darroch, J. N. & Ratcliff, D. (1972). Generalized iterative scaling for log-linear
models. Annals of Mathematical Statistics 43(5).
Della Pietra, S., Della Pietra, V. & Lafferty, J. (1997). Inducing features of
random fields. IEEE TPAMI 19(4).
Berger, A. (1997). The improved iterative scaling algorithm: a gentle introduction.
Malouf, R. (2002). A comparison of algorithms for maximum entropy parameter
estimation. CoNLL.
Chen, S. F. & Rosenfeld, R. (2000). A survey of smoothing techniques for ME models.
IEEE Trans. Speech and Audio Processing 8(1).
Curran, J. R. & Clark, S. (2003). Investigating GIS and smoothing for maximum
entropy taggers. EACL.
"""
import gc
import numbers
import warnings
from collections import defaultdict
from collections.abc import Mapping
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from .._core import _maxent
from ._common import (single_threaded_blas, CheckedScoreMixin, lbfgs_progress, log_softmax,
                      resolve_n_jobs)
from .._validation import check_max_iter, iteration_budget
from .._validation import check_classification_target, check_finite_output
from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_sample_weight, check_target, encode_labels)
from ..base import BaseEstimator, ClassifierMixin, binary_decision
from ..exceptions import ConvergenceWarning

__all__ = ["MaxEnt"]

_NUMERIC, _FEATURESETS, _FUNCTION, _CANDIDATES = "matrix", "featuresets", "function", "candidates"


def _label_key(label):
    return label.item() if hasattr(label, "item") else label


def _is_number(value):
    return isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_))


def _featureset_keys_slow(X):
    """(keys, values, counts) item by item: any mix of value types."""
    keys, values, counts = [], [], []
    for i, fs in enumerate(X):
        n_before = len(keys)
        for name, value in fs.items():
            kind = type(value)
            if kind is str or kind is bool:
                key, v = (name, value), 1.0
            elif kind is int or kind is float or _is_number(value):
                v = float(value)
                if v != v or v in (np.inf, -np.inf):
                    raise ValueError("example %d: feature %r has the value %r; features "
                                     "must be finite" % (i, name, value))
                key = (name,)
            elif isinstance(value, (str, bool, np.bool_)) or value is None:
                key, v = (name, _label_key(value)), 1.0
            else:
                raise ValueError("example %d: feature %r has a %s value; use str, bool or "
                                 "a number" % (i, name, type(value).__name__))
            keys.append(key)
            values.append(v)
        counts.append(len(keys) - n_before)
    return keys, np.asarray(values, dtype=np.float64), counts


def _featureset_keys(X):
    """Attribute keys, values and per-example counts of NLTK-style featuresets.

    An indicator (str or bool value) has the key ``(name, value)`` and the
    value 1; a number has the key ``(name,)`` and its value.  When every value
    is a number (the usual numeric case) the keys are the bare names
    (``bare_names`` True: their hashes are cached, tuples would be hashed
    anew at every look-up).  When every featureset is a dict and every value
    of one kind, names and values come out of C-level iteration."""
    if set(map(type, X)) != {dict}:
        for i, fs in enumerate(X):
            if not isinstance(fs, Mapping):
                raise ValueError("example %d is a %s, expected a dict featureset like the "
                                 "others" % (i, type(fs).__name__))
        X = [dict(fs) for fs in X]
    counts = list(map(len, X))
    names = list(chain.from_iterable(X))
    if not names:
        return [], np.zeros(0), counts, False
    raw_values = list(chain.from_iterable(map(dict.values, X)))
    kinds = set(map(type, raw_values))
    if kinds <= {str, bool}:
        return list(zip(names, raw_values)), np.ones(len(names)), counts, False
    if kinds <= {int, float}:
        try:
            values = np.array(raw_values, dtype=np.float64)
        except OverflowError:
            return _featureset_keys_slow(X) + (False,)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            i = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
            raise ValueError("example %d: feature %r has the value %r; features must be "
                             "finite" % (i, names[bad[0]], raw_values[bad[0]]))
        return names, values, counts, True
    return _featureset_keys_slow(X) + (False,)


def _featureset_ids(X, base_ids, fitting):
    """(attribute id, value, example index) of every known attribute of X;
    when fitting, new attributes are numbered in order of first occurrence."""
    # the keys are fresh tuples without cycles: the cyclic garbage collector,
    # triggered every few hundred allocations, would otherwise cost more than
    # the encoding itself
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        fast = _featureset_ids_numeric(X, base_ids, fitting)
        if fast is not None:
            return fast
        keys, values, counts, bare_names = _featureset_keys(X)
        if bare_names:
            lookup = {key[0]: j for key, j in base_ids.items() if len(key) == 1}
        else:
            lookup = base_ids
        if fitting:
            # one C-level pass: a missing key gets the number of keys seen so far
            # (a defaultdict whose factory is its own length), i.e. ids in order
            # of first occurrence
            numbering = defaultdict(None, lookup)
            numbering.default_factory = numbering.__len__
            ids = np.fromiter(map(numbering.__getitem__, keys), dtype=np.int64,
                              count=len(keys))
            for key, j in numbering.items():
                if bare_names:
                    base_ids.setdefault((key,), j)
                else:
                    base_ids.setdefault(key, j)
            lookup = numbering
        else:
            ids = np.fromiter(map(lookup.get, keys, repeat(-1)), dtype=np.int64,
                              count=len(keys))
    finally:
        if gc_was_enabled:
            gc.enable()
    example = np.repeat(np.arange(len(X)), counts)
    if fitting:
        return ids, values, example
    known = ids >= 0
    return ids[known], values[known], example[known]


def _featureset_ids_numeric(X, base_ids, fitting):
    """:func:`_featureset_ids` for dict featuresets with only int/float values (the
    keys are the bare names), in one Cython walk over the dicts
    (:func:`linclass._core._maxent.featureset_ids_numeric`); None when another
    value type or a non-dict example occurs (the general path handles it)."""
    if not isinstance(X, list):
        X = list(X)
    numbering = {key[0]: j for key, j in base_ids.items() if len(key) == 1}
    encoded = _maxent.featureset_ids_numeric(X, numbering, fitting)
    if encoded is None:
        return None
    ids, values, counts = encoded
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        i = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
        name = [key for key, j in numbering.items() if j == ids[bad[0]]]
        raise ValueError("example %d: feature %r has the value %r; features must be "
                         "finite" % (i, name[0] if name else "?", float(values[bad[0]])))
    if fitting:
        for key, j in numbering.items():
            base_ids.setdefault((key,), j)
    example = np.repeat(np.arange(len(X)), counts)
    if fitting:
        return ids, values, example
    known = ids >= 0
    return ids[known], values[known], example[known]


def _append_last_column(F, column):
    """A canonical CSR ``F`` with ``column`` appended as its new last column (its
    zeros not stored): rows stay sorted, so no re-validation is needed."""
    rows = np.flatnonzero(column != 0)
    ends = F.indptr[1:][rows]
    data = np.insert(F.data, ends, column[rows])
    indices = np.insert(F.indices, ends, np.int32(F.shape[1])).astype(np.int32, copy=False)
    added = np.zeros(F.shape[0] + 1, dtype=np.int64)
    added[1:][rows] = 1
    indptr = (F.indptr + np.cumsum(added)).astype(np.int32)
    return sp.csr_matrix((data, indices, indptr), shape=(F.shape[0], F.shape[1] + 1))


def _example_blocks(problem, n_blocks):
    """The kernels' arguments for contiguous blocks of examples of about equal non-zeros
    (views of the joint matrix's values; a fixed function of the data and n_blocks)."""
    n_samples, n_classes = problem["n_samples"], problem["n_classes"]
    indptr = problem["indptr"]
    example_ends = indptr[::n_classes]                   # non-zeros before each example
    targets = np.linspace(0, indptr[len(indptr) - 1], n_blocks + 1)[1:n_blocks]
    bounds = np.concatenate([[0], np.searchsorted(example_ends, targets), [n_samples]])
    bounds = np.maximum.accumulate(bounds.astype(np.int64))
    blocks = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b <= a:
            continue
        lo, hi = indptr[a * n_classes], indptr[b * n_classes]
        data, indices = problem["data"][lo:hi], problem["indices"][lo:hi]
        if hi == lo:                                     # the kernels read one value
            data, indices = np.zeros(1), np.zeros(1, dtype=np.int32)
        blocks.append(dict(problem, data=data, indices=indices, n_samples=int(b - a),
                           indptr=np.ascontiguousarray(
                               indptr[a * n_classes:b * n_classes + 1] - lo, dtype=np.int32),
                           y=problem["y"][a:b], sample_weight=problem["sample_weight"][a:b]))
    return blocks


def _joint_rows(ids, values, example, n_examples, table, n_weights):
    """CSR of the joint features: row ``e * K + k`` holds, for each attribute
    ``ids[j]`` of example ``e`` (``example`` sorted), the weight index
    ``table[ids[j], k]`` (when >= 0) with value ``values[j]``; built in row order
    with sorted rows and no explicit zeros by
    :func:`linclass._core._maxent.joint_rows`."""
    counts = np.bincount(example, minlength=n_examples).astype(np.int64) if len(ids) else \
        np.zeros(n_examples, dtype=np.int64)
    data, indices, indptr = _maxent.joint_rows(
        np.ascontiguousarray(ids, dtype=np.int64), np.ascontiguousarray(values, dtype=np.float64),
        counts, np.ascontiguousarray(table, dtype=np.int64))
    return sp.csr_matrix((data, indices, indptr), shape=(n_examples * table.shape[1], n_weights))


def _as_input(X):
    """Array-likes that are not lists (pandas frames, objects with
    ``__array__``) as numpy arrays; lists (featuresets, candidate matrices),
    arrays and sparse matrices as given."""
    if isinstance(X, (list, tuple, np.ndarray)) or sp.issparse(X) or not hasattr(X, "__array__"):
        return X
    return np.asarray(X)


class MaxEnt(CheckedScoreMixin, ClassifierMixin, BaseEstimator):
    """Conditional maximum entropy classifier with class-specific features.

    Parameters
    ----------
    algorithm : {"lbfgs", "gis", "iis"}, default="lbfgs"
    prior_variance : float or None, default=None
        Variance ``sigma^2`` of the Gaussian prior on every weight; None: plain
        maximum likelihood.
    max_iter : int, default=100
    tol : float, default=1e-7
        GIS/IIS: stop when the objective changes by less than ``tol`` times its
        size; L-BFGS: projected-gradient tolerance of the objective divided by
        ``sum(sample_weight)``.
    correction_feature : bool or None, default=None
        Add ``C - sum_j f_j(x, y)``; None: True for GIS, False otherwise.
    gis_constant : float or None, default=None
        The constant C of GIS and of the correction feature; None: the largest
        feature total ``sum_j f_j(x, y)`` in training (the tightest valid one),
        plus one when the correction feature is used and every training
        example's gold candidate reaches that total (then ``C - sum_j f_j``
        would be zero on all of them, its weight pinned at ``-inf`` and every
        candidate with fewer active features impossible).  With featuresets in
        which every example carries every attribute name this equals NLTK's
        ``GISEncoding`` constant (number of attribute names + 1), so the
        default reproduces NLTK's GIS; otherwise NLTK's constant is larger
        (slower steps, same fixed point) and can be passed here.
    feature_function : callable or None
        ``feature_function(x, label) -> {name: value}`` (input kind 3).
    classes : array-like or None
        The candidate labels in order; default: sorted labels of y.
    verbose : int, default=0
    n_jobs : int or None, default=1
        Threads for the L-BFGS trainer's expectation pass: the examples are cut
        into ``n_jobs`` contiguous blocks of about equal non-zeros, each block's
        sums computed by the GIL-free kernel on its own thread and added in block
        order (deterministic for a fixed ``n_jobs``; ``n_jobs=1`` is the
        single-threaded fit, bit for bit).  None: 1; -1: all CPUs.  GIS and IIS
        run on one thread.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    coef_ : ndarray (n_weights,)
        One weight per feature (``-inf`` for features never seen under GIS/IIS
        without a prior).
    correction_ : tuple (C, weight) or None
        The correction feature's constant and weight.
    vocabulary_ : dict or None
        Feature key -> weight index (input kinds 2 and 3).
    input_kind_ : str
    n_features_in_ : int
        Columns of the numeric input (kinds 1 and 4), else 0.
    n_iter_ : int
    loglik_ : float
        Training log-likelihood at the final weights.
    objective_ : float
        ``-loglik_`` plus the prior's penalty.

    Examples
    --------
    >>> from linclass.linear.maxent import MaxEnt
    >>> X = [{"shape": "round", "color": "red"}, {"shape": "long", "color": "yellow"}]
    >>> model = MaxEnt(algorithm="gis", prior_variance=1.0, max_iter=50)
    >>> str(model.fit(X * 5, ["apple", "banana"] * 5).predict([{"shape": "long"}])[0])
    'banana'
    """

    _coef_is_per_feature = False         # coef_ holds the joint feature weights

    def __init__(self, algorithm="lbfgs", *, prior_variance=None, max_iter=100, tol=1e-7,
                 correction_feature=None, gis_constant=None, feature_function=None,
                 classes=None, verbose=0, n_jobs=1):
        self.algorithm = algorithm
        self.prior_variance = prior_variance
        self.max_iter = max_iter
        self.tol = tol
        self.correction_feature = correction_feature
        self.gis_constant = gis_constant
        self.feature_function = feature_function
        self.classes = classes
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------- input --
    def _input_kind(self, X):
        if self.feature_function is not None:
            if not callable(self.feature_function):
                raise ValueError("feature_function must be callable(x, label) -> dict")
            return _FUNCTION
        if sp.issparse(X):
            return _NUMERIC
        if isinstance(X, np.ndarray):
            return _CANDIDATES if X.ndim == 3 else _NUMERIC
        if isinstance(X, (list, tuple)) and len(X):
            first = X[0]
            if isinstance(first, Mapping):
                return _FEATURESETS
            if sp.issparse(first) or (isinstance(first, np.ndarray) and first.ndim == 2):
                return _CANDIDATES
        return _NUMERIC

    def _joint_matrix(self, X, fitting, y_codes=None):
        """(F, n_samples): one CSR row per (example, candidate class)."""
        kind = self._input_kind(X)
        if not fitting and kind != self.input_kind_:
            raise ValueError("the model was fitted on %s input, got %s input"
                             % (self.input_kind_, kind))
        n_classes = len(self.classes_)
        if kind == _NUMERIC:
            X = check_array(X)
            if fitting:
                self.n_features_in_ = X.shape[1]
            else:
                check_n_features(X, self.n_features_in_, owner=self)
            X = sp.csr_matrix(X) if not sp.issparse(X) else X
            # row i*K + k = X[i] placed in column block k
            F = sp.kron(X, sp.eye(n_classes, format="csr"), format="csr")
            # kron gives column j*K + k; that is the layout coef_.reshape(d, K)
            return self._canonical(F, X.shape[0] * n_classes, X.shape[1] * n_classes), X.shape[0]
        if kind == _CANDIDATES:
            return self._candidate_matrix(X, fitting)
        if kind == _FEATURESETS:
            return self._featureset_matrix(X, fitting, y_codes)
        return self._function_matrix(X, fitting)

    def _canonical(self, F, n_rows, n_cols):
        F = check_array(F, name="feature matrix")
        F.eliminate_zeros()
        if F.shape != (n_rows, n_cols):
            raise ValueError("feature functions with inconsistent dimensions: got a %r "
                             "matrix, expected %r" % (F.shape, (n_rows, n_cols)))
        return F

    def _candidate_matrix(self, X, fitting):
        n_classes = len(self.classes_)
        if isinstance(X, np.ndarray):
            if X.shape[1] != n_classes:
                raise ValueError("feature functions with inconsistent dimensions: X has %d "
                                 "candidates per example but there are %d classes"
                                 % (X.shape[1], n_classes))
            n_samples, _, n_features = X.shape
            blocks = [check_array(X.reshape(n_samples * n_classes, n_features))]
        else:
            blocks = []
            for i, block in enumerate(X):
                if not (sp.issparse(block) or (isinstance(block, np.ndarray) and block.ndim == 2)):
                    raise ValueError("example %d: expected a (n_classes, n_features) matrix "
                                     "of candidate feature vectors, got %s"
                                     % (i, type(block).__name__))
                if block.shape[0] != n_classes:
                    raise ValueError("feature functions with inconsistent dimensions: example "
                                     "%d has %d candidate vectors, expected %d (one per class)"
                                     % (i, block.shape[0], n_classes))
                if blocks and block.shape[1] != blocks[0].shape[1]:
                    raise ValueError("feature functions with inconsistent dimensions: example "
                                     "%d has %d features, example 0 has %d"
                                     % (i, block.shape[1], blocks[0].shape[1]))
                blocks.append(sp.csr_matrix(block))
            n_samples, n_features = len(blocks), blocks[0].shape[1]
        if fitting:
            self.n_features_in_ = n_features
        elif n_features != self.n_features_in_:
            raise ValueError("feature functions with inconsistent dimensions: %d features, "
                             "the model was fitted with %d" % (n_features, self.n_features_in_))
        F = sp.vstack([sp.csr_matrix(b) for b in blocks], format="csr")
        return self._canonical(F, n_samples * n_classes, n_features), n_samples

    def _build_from_dicts(self, per_row_dicts, n_rows, fitting, allowed_keys=None):
        """CSR from one {key: value} dict per row, growing the vocabulary when fitting."""
        vocabulary = self.vocabulary_
        indptr, indices, values = [0], [], []
        for r, features in enumerate(per_row_dicts):
            for key, value in features:
                j = vocabulary.get(key)
                if j is None:
                    if not fitting or (allowed_keys is not None and key not in allowed_keys):
                        continue
                    j = vocabulary[key] = len(vocabulary)
                indices.append(j)
                values.append(value)
            indptr.append(len(indices))
        n_cols = max(len(vocabulary), 1)
        F = sp.csr_matrix((np.asarray(values, dtype=np.float64),
                           np.asarray(indices, dtype=np.int32),
                           np.asarray(indptr, dtype=np.int32)), shape=(n_rows, n_cols))
        return F

    def _featureset_matrix(self, X, fitting, y_codes):
        """Joint (attribute, label) features of NLTK-style featuresets.

        Each featureset is read once into (attribute id, value) pairs; the
        joint feature of attribute a and class k is ``table[a, k]`` (-1: not
        a feature), so the per-class rows are built with numpy."""
        classes = [_label_key(c) for c in self.classes_]
        n_classes = len(classes)
        if fitting:
            base_ids = {}
        else:
            base_ids, table = self._featureset_table()
        ids, values, example = _featureset_ids(X, base_ids, fitting)
        if fitting:
            # NLTK's encoding: only (attribute, label) pairs seen with their gold label,
            # numbered in order of first occurrence
            pairs = ids * n_classes + np.asarray(y_codes, dtype=np.int64)[example]
            # pairs in order of first occurrence: the first position of each pair by
            # a minimum over a table of all (attribute, class) slots (no sort of
            # all the pairs, only of the distinct ones)
            first = np.full(max(len(base_ids), 1) * n_classes, len(pairs), dtype=np.int64)
            np.minimum.at(first, pairs, np.arange(len(pairs), dtype=np.int64))
            unique_pairs = np.flatnonzero(first < len(pairs))
            unique_pairs = unique_pairs[np.argsort(first[unique_pairs], kind="stable")]
            table = np.full((max(len(base_ids), 1), n_classes), -1, dtype=np.int64)
            table.ravel()[unique_pairs] = np.arange(len(unique_pairs))
            base_keys = list(base_ids)
            self.vocabulary_ = {base_keys[pair // n_classes] + (classes[pair % n_classes],):
                                index for index, pair in enumerate(unique_pairs.tolist())}
            self.n_features_in_ = 0
            self._table_cache = (base_ids, table)
        n_weights = max(len(self.vocabulary_), 1)
        F = _joint_rows(ids, values, example, len(X), table, n_weights)
        return self._canonical(F, len(X) * n_classes, n_weights), len(X)

    def _featureset_table(self):
        """(attribute key -> id, table[id, class] -> weight index) from vocabulary_."""
        cache = getattr(self, "_table_cache", None)
        if cache is not None and cache[1].shape[1] == len(self.classes_):
            return cache
        class_index = {_label_key(c): k for k, c in enumerate(self.classes_)}
        base_ids = {}
        entries = []
        for key, index in self.vocabulary_.items():
            base, label = tuple(key[:-1]), key[-1]
            j = base_ids.setdefault(base, len(base_ids))
            entries.append((j, class_index[label], index))
        table = np.full((max(len(base_ids), 1), len(self.classes_)), -1, dtype=np.int64)
        for j, k, index in entries:
            table[j, k] = index
        self._table_cache = (base_ids, table)
        return self._table_cache

    def _function_matrix(self, X, fitting):
        if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
            raise ValueError("with feature_function, X must be a list of inputs")
        classes = [_label_key(c) for c in self.classes_]
        if fitting:
            self.vocabulary_ = {}
            self.n_features_in_ = 0

        def rows():
            for i, x in enumerate(X):
                for label in classes:
                    features = self.feature_function(x, label)
                    if not isinstance(features, Mapping):
                        raise ValueError("feature_function(x[%d], %r) returned a %s, expected "
                                         "a dict {feature name: value}"
                                         % (i, label, type(features).__name__))
                    for name, value in features.items():
                        if not _is_number(value) and not isinstance(value, (bool, np.bool_)):
                            raise ValueError("feature_function(x[%d], %r): feature %r has a "
                                             "non-numeric value %r" % (i, label, name, value))
                    yield features.items()

        F = self._build_from_dicts(rows(), len(X) * len(classes), fitting)
        return self._canonical(F, len(X) * len(classes), F.shape[1]), len(X)

    # --------------------------------------------------------------- fit --
    def _check_params(self):
        if self.algorithm not in ("lbfgs", "gis", "iis"):
            raise ValueError("algorithm must be 'lbfgs', 'gis' or 'iis', got %r"
                             % (self.algorithm,))
        if self.prior_variance is not None:
            check_positive(self.prior_variance, "prior_variance")
        check_max_iter(self, self.max_iter)
        check_positive(self.tol, "tol", strict=False)
        if self.correction_feature not in (None, True, False):
            raise ValueError("correction_feature must be None, True or False")
        if self.gis_constant is not None:
            check_positive(self.gis_constant, "gis_constant")

    def fit(self, X, y, sample_weight=None):
        """Fit the weights with the chosen trainer.

        Parameters
        ----------
        X : see the module documentation (four input kinds)
        y : array-like (n_samples,)
        sample_weight : array-like (n_samples,), optional
        """
        self._check_params()
        for attr in ("vocabulary_", "correction_", "coef_", "_table_cache"):
            self.__dict__.pop(attr, None)
        self.vocabulary_ = None
        X = _as_input(X)
        if self._input_kind(X) == _NUMERIC:
            X = check_array(X)           # X's problems (complex, NaN) before y's
        n_samples = X.shape[0] if hasattr(X, "shape") else len(X)
        if self.classes is not None:
            y = check_target(y, n_samples)
            classes = np.asarray(self.classes)
            if classes.ndim != 1 or classes.dtype == object or \
                    len(np.unique(classes)) != len(classes) or len(classes) < 2:
                raise ValueError("classes must hold at least two distinct labels")
            order = np.argsort(classes, kind="stable")
            _, sorted_codes = encode_labels(y, classes[order])
            codes = order[sorted_codes].astype(np.int32)
            self.classes_ = classes
        else:
            self.classes_, codes = check_classification_target(y, n_samples)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        self.input_kind_ = self._input_kind(X)
        F, n = self._joint_matrix(X, fitting=True, y_codes=codes)
        if n != n_samples:
            raise ValueError("X has %d examples but y has %d labels" % (n, n_samples))
        iterative_scaling = self.algorithm in ("gis", "iis")
        if iterative_scaling and F.nnz and F.data.min() < 0:
            raise ValueError("GIS and IIS need non-negative feature values (found %g); use "
                             "algorithm='lbfgs'" % F.data.min())
        correction = (self.algorithm == "gis") if self.correction_feature is None \
            else self.correction_feature
        self.correction_ = None
        totals = np.asarray(F.sum(axis=1)).ravel()
        C = float(totals.max())
        if correction and self.gis_constant is None:
            gold_totals = totals.reshape(n_samples, len(self.classes_))[
                np.arange(n_samples), codes]
            if float((C - gold_totals) @ sample_weight) <= 0:
                # every gold candidate reaches the largest total (the usual case of
                # featuresets with the same number of attributes): the correction
                # feature would be unattested and pinned at -inf, zeroing every
                # candidate with fewer active features
                C += 1.0
        if self.gis_constant is not None:
            if self.gis_constant < C:
                raise ValueError("gis_constant=%g is below the largest feature total %g"
                                 % (self.gis_constant, C))
            C = float(self.gis_constant)
        self._gis_constant = C
        if correction:
            if F.nnz and F.data.min() < 0:
                raise ValueError("the correction feature needs non-negative feature values")
            F = _append_last_column(F, C - totals)
            self.correction_ = (C, 0.0)
        n_weights = F.shape[1]
        if F.nnz == 0:
            raise ValueError("no feature fires on any example: nothing to learn")
        problem = dict(data=F.data, indices=F.indices, indptr=F.indptr, n_samples=n_samples,
                       n_classes=len(self.classes_), n_features=n_weights, y=codes,
                       sample_weight=sample_weight)
        empirical = _maxent.empirical_expectation(**problem)
        inv_var = 0.0 if self.prior_variance is None else 1.0 / self.prior_variance
        if iterative_scaling:
            lam, loglik, n_iter = self._fit_scaling(F, problem, empirical, inv_var)
        else:
            lam, loglik, n_iter = self._fit_lbfgs(problem, empirical, inv_var, sample_weight)
        return self._set_weights(lam, loglik, n_iter, inv_var)

    def _set_weights(self, lam, loglik, n_iter, inv_var):
        """The fitted attributes from the trained weights (the correction's last)."""
        if self.correction_ is not None:
            self.correction_ = (self.correction_[0], float(lam[-1]))
            lam = lam[:-1]
        if np.isnan(lam).any() or np.isnan(loglik):
            raise ValueError("%s: the solver produced NaN weights or log-likelihood "
                             "(overflow); scale the features or increase the "
                             "regularisation" % type(self).__name__)
        self.coef_ = lam
        self.n_iter_ = n_iter
        self.loglik_ = float(loglik)
        finite = np.isfinite(lam)
        penalty = 0.5 * inv_var * float(lam[finite] @ lam[finite])
        if self.correction_ is not None:
            penalty += 0.5 * inv_var * self.correction_[1] ** 2
        self.objective_ = -self.loglik_ + penalty
        return self

    def _fit_lbfgs(self, problem, empirical, inv_var, sample_weight):
        n_jobs = resolve_n_jobs(self.n_jobs, problem["n_samples"])
        if n_jobs == 1:
            return self._lbfgs(lambda lam: _maxent.model_expectation(weights=lam, **problem),
                               empirical, inv_var, sample_weight.sum(), problem["n_features"])
        from .logistic import ThreadedSum
        blocks = _example_blocks(problem, n_jobs)
        with ThreadedSum(n_jobs) as threads:
            def expectation(lam):
                results = threads.map(
                    lambda block: _maxent.model_expectation(weights=lam, **block), blocks)
                loglik, model = results[0]
                for block_loglik, block_model in results[1:]:
                    loglik += block_loglik
                    model += block_model
                return loglik, model

            return self._lbfgs(expectation, empirical, inv_var, sample_weight.sum(),
                               problem["n_features"])

    def _lbfgs(self, expectation, empirical, inv_var, scale, n_weights):
        """L-BFGS-B over ``expectation(lam) -> (loglik, model expectation)`` (in memory,
        or summed over partitions by :mod:`linclass.distributed.maxent`)."""

        def fun(lam):
            loglik, model = expectation(lam)
            f = -loglik + 0.5 * inv_var * (lam @ lam)
            g = model - empirical + inv_var * lam
            return f / scale, g / scale

        with single_threaded_blas():
            result = minimize(fun, np.zeros(n_weights), method="L-BFGS-B",
                              jac=True, callback=lbfgs_progress("MaxEnt", self.verbose),
                              options=dict(maxiter=iteration_budget(self.max_iter), gtol=self.tol,
                                                     ftol=64 * np.finfo(float).eps, maxls=50))
        if result.status == 1:
            warnings.warn("MaxEnt (lbfgs) stopped at max_iter=%d before reaching tol=%g"
                          % (self.max_iter, self.tol), ConvergenceWarning)
        lam = result.x
        loglik, _ = expectation(lam)
        return lam, loglik, int(result.nit)

    def _fit_scaling(self, F, problem, empirical, inv_var):
        """GIS / IIS: one expectation pass and one closed-form or Newton update per
        iteration."""
        totals = np.asarray(F.sum(axis=1)).ravel()
        if self.algorithm == "gis":
            nf_values = np.array([self._gis_constant])

            def expectation(lam):
                loglik, model = _maxent.model_expectation(weights=lam, **problem)
                return loglik, model[:, None]
        else:
            nf_values, nf_index = np.unique(totals, return_inverse=True)
            nf_index = nf_index.astype(np.int32).ravel()

            def expectation(lam):
                return _maxent.model_expectation(weights=lam, nf_index=nf_index,
                                                 n_nf=len(nf_values), **problem)
        return self._scaling_loop(expectation, nf_values, empirical, inv_var,
                                  problem["n_features"])

    def _scaling_loop(self, expectation, nf_values, empirical, inv_var, n_weights):
        """The GIS/IIS iterations over ``expectation(lam) -> (loglik, table)`` (in
        memory, or summed over partitions by :mod:`linclass.distributed.maxent`)."""
        lam = np.zeros(n_weights)
        unattested = (empirical <= 0) if inv_var == 0 else np.zeros(n_weights, dtype=bool)
        lam[unattested] = -np.inf
        previous = None
        converged = False
        n_iter = 0
        loglik = previous_loglik = -np.inf
        last_lam = lam.copy()
        while True:
            loglik, table = expectation(lam)
            finite = np.isfinite(lam)
            objective = -loglik + 0.5 * inv_var * float(lam[finite] @ lam[finite])
            if self.verbose:
                print("%s iter %3d  loglik %.10g  objective %.10g"
                      % (self.algorithm, n_iter, loglik, objective))
            if not np.isfinite(objective):
                warnings.warn("MaxEnt (%s) diverged at iteration %d (objective %r); keeping "
                              "the last finite weights" % (self.algorithm, n_iter, objective),
                              ConvergenceWarning)
                lam = last_lam
                loglik = previous_loglik
                break
            if previous is not None and abs(previous - objective) <= self.tol * max(
                    abs(objective), 1e-300):
                converged = True
                break
            if n_iter >= iteration_budget(self.max_iter):
                break
            previous, previous_loglik, last_lam = objective, loglik, lam.copy()
            lam = lam + self._scaling_step(lam, table, nf_values, empirical, inv_var,
                                           unattested)
            n_iter += 1
        if not converged and n_iter >= iteration_budget(self.max_iter):
            warnings.warn("MaxEnt (%s) stopped at max_iter=%d before the objective changed "
                          "by less than tol=%g" % (self.algorithm, self.max_iter, self.tol),
                          ConvergenceWarning)
        return lam, loglik, n_iter

    @staticmethod
    def _scaling_step(lam, table, nf_values, empirical, inv_var, unattested):
        """delta_j solving sum_m table[j, m] exp(delta nf_m) + inv_var (lam_j + delta)
        = empirical_j (closed form for GIS without prior, else Newton)."""
        delta = np.zeros_like(lam)
        active = ~unattested
        if not active.any():
            return delta
        A = table[active]
        target = empirical[active]
        base = np.where(np.isfinite(lam[active]), lam[active], 0.0)
        nf_max = float(nf_values.max())
        if nf_max <= 0:
            return delta
        limit = 50.0 / nf_max               # keeps exp(delta * nf) finite
        if len(nf_values) == 1 and inv_var == 0:
            with np.errstate(divide="ignore"):
                d = (np.log(target) - np.log(np.maximum(A[:, 0], 1e-300))) / nf_values[0]
            delta[active] = np.clip(d, -limit, limit)
            return delta
        # Newton's method on each feature's scalar equation (in Cython: one loop per
        # feature, each stopping on its own)
        delta[active] = _maxent.iis_newton(
            np.ascontiguousarray(A, dtype=np.float64),
            np.ascontiguousarray(nf_values, dtype=np.float64),
            np.ascontiguousarray(target, dtype=np.float64),
            np.ascontiguousarray(base, dtype=np.float64), float(inv_var), float(limit))
        return delta

    def _min_features_in(self):
        # featuresets and feature functions have no input width: fit stores 0
        return 1 if getattr(self, "input_kind_", None) == "matrix" else 0

    def _check_state(self):
        """coef_ is 1-D with one weight per joint feature (``n_features_in_ *
        n_classes`` for matrix input); called by :func:`linclass.load`."""
        super()._check_state()
        coef = self.coef_
        if not isinstance(coef, np.ndarray) or coef.ndim != 1 or coef.dtype.kind != "f":
            raise ValueError("coef_ must be a 1-D float array")
        if getattr(self, "input_kind_", None) == "matrix" and \
                coef.shape[0] != self.n_features_in_ * len(self.classes_):
            raise ValueError("coef_ has %d weights but %d features x %d classes need %d"
                             % (coef.shape[0], self.n_features_in_, len(self.classes_),
                                self.n_features_in_ * len(self.classes_)))

    # ------------------------------------------------------------ predict --
    def decision_function(self, X):
        """Scores ``lam @ f(x, y)`` of every class, shape (n_samples, n_classes);
        for two classes their difference (class ``classes_[1]`` minus
        ``classes_[0]``), shape (n_samples,)."""
        return binary_decision(self._class_scores(X))

    def _class_scores(self, X):
        check_is_fitted(self, "coef_")
        X = _as_input(X)
        F, n_samples = self._joint_matrix(X, fitting=False)
        n_weights = self.coef_.shape[0]
        if F.shape[1] < n_weights:
            F = sp.csr_matrix((F.data, F.indices, F.indptr), shape=(F.shape[0], n_weights))
        with np.errstate(invalid="ignore"):
            scores = F @ self.coef_
        if self.correction_ is not None:
            C, weight = self.correction_
            if weight != 0:
                value = C - np.asarray(F.sum(axis=1)).ravel()
                nonzero = value != 0                  # 0 * -inf counts as 0
                scores[nonzero] += weight * value[nonzero]
        check_finite_output(self, scores, log_domain=True)
        return scores.reshape(n_samples, len(self.classes_))

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        scores = self._class_scores(X)              # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_log_proba(self, X):
        """Log of the class probabilities, shape (n_samples, n_classes), without underflow."""
        return log_softmax(self._class_scores(X))

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))

