"""Helpers shared by the decision meta-estimators (the wrapped-estimator protocol)."""
import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import check_array, check_finite_output, check_random_state
from ..base import ClassifierMixin

__all__ = ["clone_estimator", "check_estimator_protocol", "posteriors", "binary_scores",
           "stratified_folds", "cv_splits", "aligned_columns", "MetaClassifierMixin"]


def clone_estimator(estimator):
    """A new unfitted estimator with the same parameters (nested estimators cloned)."""
    if isinstance(estimator, (list, tuple)):
        return type(estimator)(clone_estimator(e) for e in estimator)
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        raise ValueError("estimator must be a linclass (or scikit-learn) estimator with "
                         "get_params, got %r" % (estimator,))
    params = estimator.get_params(deep=False)
    params = {k: clone_estimator(v) if hasattr(v, "get_params") and not isinstance(v, type)
              else v for k, v in params.items()}
    return type(estimator)(**params)


def check_estimator_protocol(estimator, methods, owner):
    """The wrapped estimator has ``fit`` and each of ``methods`` (one of a tuple suffices)."""
    if estimator is None or isinstance(estimator, type) or not hasattr(estimator, "fit"):
        raise ValueError("%s: estimator must be a classifier instance with fit, got %r"
                         % (owner, estimator))
    for m in methods:
        alternatives = m if isinstance(m, tuple) else (m,)
        if not any(hasattr(estimator, a) for a in alternatives):
            raise ValueError("%s: estimator %s has no %s; it is needed here"
                             % (owner, type(estimator).__name__, " or ".join(alternatives)))


def aligned_columns(estimator_classes, classes):
    """Column of each of ``classes`` in the estimator's ``classes_`` (-1 if absent)."""
    index = {c: i for i, c in enumerate(np.asarray(estimator_classes).tolist())}
    return np.array([index.get(c, -1) for c in np.asarray(classes).tolist()], dtype=np.intp)


def posteriors(estimator, X, classes=None):
    """``predict_proba(X)`` with columns in the order of ``classes`` (0 for absent ones)."""
    if not hasattr(estimator, "predict_proba"):
        raise ValueError("%s has no predict_proba: posteriors are needed (wrap it in "
                         "CalibratedClassifier first)" % type(estimator).__name__)
    P = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    if P.ndim != 2:
        raise ValueError("predict_proba of %s returned shape %r, expected (n_samples, "
                         "n_classes)" % (type(estimator).__name__, P.shape))
    # any estimator may be wrapped (scikit-learn's too): no NaN passes on silently
    check_finite_output(estimator, P, X, "posteriors")
    if classes is None:
        return P
    cols = aligned_columns(estimator.classes_, classes)
    out = np.zeros((P.shape[0], len(cols)))
    present = cols >= 0
    out[:, present] = P[:, cols[present]]
    return out


def binary_scores(estimator, X, response="auto"):
    """A score increasing with the positive class (``classes_[1]``) of a binary classifier.

    ``response``: ``"decision_function"``, ``"predict_proba"`` or ``"auto"``
    (the decision function when there is one).
    """
    use_df = response == "decision_function" or (response == "auto" and
                                                 hasattr(estimator, "decision_function"))
    if use_df:
        s = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if s.ndim == 2:
            s = s[:, 1] - s[:, 0] if s.shape[1] == 2 else s[:, 0]
        return check_finite_output(estimator, s, X)
    P = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    return check_finite_output(estimator, P[:, 1], X, "posteriors")


def scores_matrix(estimator, X, n_classes, response="auto"):
    """(n_samples, n_columns) scores: one column (binary) or one per class."""
    if n_classes == 2:
        return binary_scores(estimator, X, response)[:, None]
    use_df = response == "decision_function" or (response == "auto" and
                                                 hasattr(estimator, "decision_function"))
    S = np.asarray(estimator.decision_function(X) if use_df else estimator.predict_proba(X),
                   dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != n_classes:
        raise ValueError("the estimator's scores have shape %r, expected (n_samples, %d)"
                         % (S.shape, n_classes))
    return check_finite_output(estimator, S, X)


def stratified_folds(codes, n_folds, random_state):
    """Fold id of each sample, each class spread over the folds (shuffled)."""
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral) or n_folds < 2:
        raise ValueError("cv must be an integer >= 2, 'prefit' or a fraction in (0, 1), "
                         "got %r" % (n_folds,))
    counts = np.bincount(codes)
    if counts.min() < n_folds:
        raise ValueError("cv=%d folds but the smallest class has only %d samples; use fewer "
                         "folds" % (n_folds, counts.min()))
    rng = check_random_state(random_state)
    fold = np.empty(len(codes), dtype=np.intp)
    for c in range(len(counts)):
        idx = np.flatnonzero(codes == c)
        rng.shuffle(idx)
        fold[idx] = np.arange(len(idx)) % n_folds
    return fold


def check_cv(cv):
    """``"prefit"``, an integer >= 2 (stratified folds), a fraction in (0, 1)
    (held-out share), a splitter with ``split(X, y)`` (scikit-learn's
    ``KFold``, ``StratifiedKFold``, ...) or an iterable of ``(train, test)``
    index arrays (returned as a list)."""
    if isinstance(cv, str):
        if cv != "prefit":
            raise ValueError("cv must be an integer >= 2, 'prefit', a fraction in (0, 1), a "
                             "splitter or (train, test) index pairs, got %r" % (cv,))
        return cv
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError("cv must be >= 2 folds, got %r" % (cv,))
        return int(cv)
    if isinstance(cv, numbers.Real) and not isinstance(cv, bool) and 0.0 < cv < 1.0:
        return float(cv)
    if hasattr(cv, "split") and not isinstance(cv, (bytes, np.ndarray)):
        return cv
    if hasattr(cv, "__iter__") and not isinstance(cv, (bytes, np.ndarray, numbers.Number)):
        return list(cv)
    raise ValueError("cv must be an integer >= 2, 'prefit', a fraction in (0, 1), a splitter "
                     "or (train, test) index pairs, got %r" % (cv,))


def cv_splits(cv, codes, X, y, random_state):
    """``(train, test)`` index arrays of the folds of a checked ``cv`` that is
    an integer, a splitter or a list of index pairs (each index checked to be
    a row of the data, each fold to have data on both sides)."""
    n = len(codes)
    if isinstance(cv, int):
        fold = stratified_folds(codes, cv, random_state)
        return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(cv)]
    pairs = list(cv.split(X, y)) if hasattr(cv, "split") else cv
    if not pairs:
        raise ValueError("cv gives no (train, test) split")
    splits = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError("cv split %d is not a (train, test) pair" % k)
        train, test = (_fold_indices(part, n, "cv split %d %s" % (k, side))
                       for part, side in zip(pair, ("train", "test")))
        if not len(train) or not len(test):
            raise ValueError("cv split %d leaves no data to fit or none to hold out" % k)
        splits.append((train, test))
    return splits


def _fold_indices(part, n, where):
    idx = np.asarray(part)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError("%s: a boolean mask needs %d entries, got shape %r"
                             % (where, n, idx.shape))
        return np.flatnonzero(idx)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise ValueError("%s must be 1-D integer indices, got %r" % (where, idx.dtype))
    idx = idx.astype(np.intp)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError("%s holds indices outside [0, %d)" % (where, n))
    return idx


def holdout_split(codes, fraction, random_state):
    """Boolean mask of a stratified held-out share ``fraction`` of the samples."""
    rng = check_random_state(random_state)
    held = np.zeros(len(codes), dtype=bool)
    for c in np.unique(codes):
        idx = np.flatnonzero(codes == c)
        rng.shuffle(idx)
        n_held = int(round(fraction * len(idx)))
        n_held = min(max(n_held, 1), len(idx) - 1) if len(idx) > 1 else 0
        held[idx[:n_held]] = True
    if held.all() or not held.any():
        raise ValueError("cv=%r leaves no data to fit or none to hold out" % (fraction,))
    return held


def as_rows(X, y=None, *, need_y=True):
    """X as an indexable collection of rows (arrays stay, array-likes become arrays,
    lists of sequences stay lists) and its number of rows; checks that y is given."""
    if need_y and y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None")
    if X is None:
        raise ValueError("X is required (got None)")
    if sp.issparse(X):
        # the shared structural check before scipy slices it into folds (a
        # malformed CSR would make scipy's C++ read out of bounds and abort)
        X = check_array(X, accept_unsorted=True)
    elif not isinstance(X, (list, np.ndarray)):
        X = np.asarray(X)
    if isinstance(X, np.ndarray) and X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers")
    n = len(X) if isinstance(X, list) else X.shape[0]
    return X, n


def fit_clone(estimator, X, y, sample_weight=None):
    est = clone_estimator(estimator)
    if sample_weight is None:
        return est.fit(X, y)
    return est.fit(X, y, sample_weight=sample_weight)


def take_rows(X, idx):
    """Rows ``idx`` (boolean mask or indices) of an array, sparse matrix or list."""
    idx = np.asarray(idx)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    if isinstance(X, list):
        return [X[i] for i in idx]
    return X[idx]


class MetaClassifierMixin(ClassifierMixin):
    """Tags of a meta-estimator follow those of its inner estimator; its fitted
    inner estimator (``estimator_``) has the classes of the meta-estimator."""

    def _check_state(self):
        """``estimator_`` knows the classes and features of the meta-estimator
        (called by :func:`linclass.load`)."""
        super()._check_state()
        inner = vars(self).get("estimator_")
        if inner is None:
            return
        inner_classes = getattr(inner, "classes_", None)
        if inner_classes is not None and list(np.asarray(inner_classes).tolist()) != \
                list(np.asarray(self.classes_).tolist()):
            raise ValueError("estimator_ has classes %r, the model %r"
                             % (list(inner_classes)[:10], list(self.classes_)[:10]))
        n_features = vars(self).get("n_features_in_")
        if n_features is not None and getattr(inner, "n_features_in_", n_features) != n_features:
            raise ValueError("estimator_ has %r features, the model %r"
                             % (inner.n_features_in_, n_features))

    def _wrapped(self):
        """The classifier to wrap: ``estimator``, or ``LogisticRegression()`` when
        it is None (a prefit meta-estimator needs its fitted estimator given)."""
        if self.estimator is not None:
            return self.estimator
        if getattr(self, "prefit", False) or getattr(self, "cv", None) == "prefit":
            raise ValueError("%s: prefit needs the fitted estimator, got estimator=None"
                             % type(self).__name__)
        from ..linear import LogisticRegression
        return LogisticRegression()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = getattr(self, "estimator", None)
        if inner is not None and hasattr(inner, "__sklearn_tags__"):
            try:
                inner_tags = inner.__sklearn_tags__()
                tags.input_tags.sparse = inner_tags.input_tags.sparse
                tags.input_tags.pairwise = inner_tags.input_tags.pairwise
            except Exception:
                pass
        return tags
