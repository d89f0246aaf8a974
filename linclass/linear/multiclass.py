"""Multi-class linear SVMs and multi-class meta-estimators.

* :class:`CrammerSingerSVC` -- one hinge per example on the best wrong class
  (Crammer & Singer 2001), solved by the sequential dual method of Keerthi
  et al. (2008).
* :class:`WestonWatkinsSVC` -- one hinge per example and wrong class (Weston &
  Watkins 1999; Vapnik 1998, sec. 10.10), solved by dual block coordinate
  descent.
* :class:`OneVsRestClassifier`, :class:`OneVsOneClassifier` -- reduce to binary
  problems solved by any linclass binary classifier, on a thread pool.

References
----------
Crammer & Singer (2001), "On the algorithmic implementation of multiclass
kernel-based vector machines", JMLR 2.
Keerthi, Sundararajan, Chang, Hsieh & Lin (2008), "A sequential dual method
for large scale multi-class linear SVMs", KDD.
Weston & Watkins (1999), "Support vector machines for multi-class pattern
recognition", ESANN.
Hsu & Lin (2002), "A comparison of methods for multiclass support vector
machines", IEEE TNN 13 (one-vs-one voting).
"""
import itertools
import warnings

import numpy as np
import scipy.sparse as sp

from .._core import _linear_svm
from ._common import LinearDecisionMixin, map_threads
from .._validation import check_finite_fit, check_max_iter, iteration_budget
from .._validation import (check_classification_data, check_predict_X, class_weight_per_sample,
                           kernel_rows)
from .._validation import check_finite_output, check_positive, draw_seed
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["CrammerSingerSVC", "WestonWatkinsSVC", "OneVsRestClassifier",
           "OneVsOneClassifier", "crammer_singer_dual_objective",
           "weston_watkins_dual_objective", "weston_watkins_primal_objective"]


def crammer_singer_dual_objective(W, alpha, codes):
    """``0.5 sum_m ||w_m||^2 + sum_i sum_{m != y_i} alpha_im`` (minimisation form).

    ``W`` is (n_features + 1, n_classes) including the bias row.
    """
    mask = np.ones_like(alpha, dtype=bool)
    mask[np.arange(len(codes)), codes] = False
    return 0.5 * float(np.sum(W * W)) + float(alpha[mask].sum())


def weston_watkins_dual_objective(W, alpha, codes):
    """``0.5 sum_m ||w_m||^2 - sum_{i, m != y_i} alpha_im`` (minimisation form)."""
    mask = np.ones_like(alpha, dtype=bool)
    mask[np.arange(len(codes)), codes] = False
    return 0.5 * float(np.sum(W * W)) - float(alpha[mask].sum())


def weston_watkins_primal_objective(X, codes, W, bias, cost):
    """``0.5 sum_m ||w_m||^2 + sum_i C_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)``."""
    scores = np.asarray(X @ W[:-1]) + bias * W[-1]
    n = len(codes)
    true = scores[np.arange(n), codes][:, None]
    hinge = np.maximum(0.0, 1.0 - (true - scores))
    hinge[np.arange(n), codes] = 0.0
    return 0.5 * float(np.sum(W * W)) + float(cost @ hinge.sum(axis=1))


class _MultiClassDualSVC(LinearDecisionMixin, ClassifierMixin, BaseEstimator):
    """Shared fit of the two multi-class duals (subclasses set ``_kernel``)."""

    _name = None
    _training_only = ("dual_coef_",)        # for warm_start; a model file holds what predicts

    def __init__(self, C=1.0, tol=1e-3, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, warm_start=False, random_state=None):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state

    def _run_kernel(self, rows, n_samples, n_features, codes, cost, bias, W, alpha, seed):
        raise NotImplementedError

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies ``C`` per sample.

        Returns
        -------
        self
        """
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_max_iter(self, self.max_iter)
        if self.fit_intercept:
            check_positive(self.intercept_scaling, "intercept_scaling")
        X, classes, codes, sample_weight = check_classification_data(X, y, sample_weight)
        cost = class_weight_per_sample(self.class_weight, classes, codes, sample_weight) \
            * float(self.C)
        n_samples, n_features = X.shape
        K = len(classes)
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        with np.errstate(over="ignore"):
            squares = X.multiply(X).sum() if sp.issparse(X) else np.einsum("ij,ij->", X, X)
        if not np.isfinite(squares + bias * bias * n_samples):
            raise ValueError("%s: X holds values so large that the squared norms of its "
                             "rows overflow float64; scale the features" % type(self).__name__)
        alpha = None
        if (self.warm_start and getattr(self, "dual_coef_", None) is not None
                and self.dual_coef_.shape == (n_samples, K)
                and np.array_equal(self.classes_, classes)):
            alpha = self.dual_coef_.copy()
        if alpha is None:
            alpha = np.zeros((n_samples, K))
        W = np.zeros((n_features + 1, K))
        n_iter, violation = self._run_kernel(kernel_rows(X), n_samples, n_features, codes,
                                             cost, bias, W, alpha,
                                             draw_seed(self.random_state))
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.n_iter_ = int(n_iter)
        self.dual_coef_ = alpha
        self.weights_ = W
        self.dual_objective_ = self._dual_objective(W, alpha, codes)
        if K == 2:   # binary: one score, positive for classes_[1]
            self.coef_ = np.ascontiguousarray((W[:-1, 1] - W[:-1, 0])[None, :])
            self.intercept_ = np.array([bias * (W[-1, 1] - W[-1, 0])])
        else:
            self.coef_ = np.ascontiguousarray(W[:-1].T)
            self.intercept_ = bias * W[-1].copy()
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_,
                         dual_coef_=self.dual_coef_, dual_objective_=self.dual_objective_)
        if n_iter >= iteration_budget(self.max_iter) and violation > self.tol:
            warnings.warn("%s: reached max_iter=%d with KKT violation %.3g > tol=%g"
                          % (type(self).__name__, self.max_iter, violation, self.tol),
                          ConvergenceWarning)
        return self


class CrammerSingerSVC(_MultiClassDualSVC):
    """Crammer-Singer multi-class linear SVM.

    Minimises ``0.5 sum_m ||w_m||^2 + sum_i C_i max(0, max_{m != y_i}
    (1 + w_m.x_i - w_{y_i}.x_i))`` (with ``C_i = C * class_weight[y_i] *
    sample_weight[i]``) through its dual, one example's block of ``K``
    variables at a time in closed form (Keerthi et al. 2008).

    Parameters
    ----------
    C : float, default=1.0
    tol : float, default=1e-3
        Stop when the largest per-example KKT violation of a pass is <= tol
        (LIBLINEAR's ``-e`` for ``-s 4``).
    max_iter : int, default=1000
        Passes over the data.
    fit_intercept : bool, default=True
        The intercept is the weight of a constant feature ``intercept_scaling``
        and is regularised (as in LIBLINEAR).
    intercept_scaling : float, default=1.0
    class_weight : None, "balanced" or dict
    warm_start : bool, default=False
        Start from the previous dual solution (same training set size).
    random_state : None, int or numpy Generator/RandomState
        Order of the examples in each pass.
    shrinking : bool, default=True
        Per-example class shrinking (Keerthi et al. 2008, sec. 4, as in
        LIBLINEAR): a dual variable at its bound whose gradient says it will
        stay there leaves its example's active class set, an example with one
        active class leaves the pass, and scores, sub-problem and weight
        updates touch the active classes only.  The solver stops only after a
        pass over every example and class meets ``tol``, so the solution is
        the one without shrinking (to the tolerance).

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_features) (``(1, n_features)`` for two classes)
    intercept_, classes_, n_features_in_, n_iter_
    weights_ : ndarray of shape (n_features + 1, n_classes)
        Per-class weights, last row the bias weight.
    dual_coef_ : ndarray of shape (n_samples, n_classes)
    dual_objective_ : float
        See :func:`crammer_singer_dual_objective`.
    """

    def __init__(self, C=1.0, tol=1e-3, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, warm_start=False, random_state=None,
                 shrinking=True):
        super().__init__(C=C, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, class_weight=class_weight,
                         warm_start=warm_start, random_state=random_state)
        self.shrinking = shrinking

    def _run_kernel(self, rows, n_samples, n_features, codes, cost, bias, W, alpha, seed):
        order = None
        if rows["is_sparse"] and n_features > 1:
            # Renumber the columns by decreasing frequency: the weight rows of the
            # frequent features then share cache lines and memory pages (the
            # solver is bound by the latency of fetching W's rows), and the
            # solution is the same up to the permutation of W's rows.
            frequency = np.bincount(rows["indices"][:rows["indptr"][n_samples]],
                                    minlength=n_features)
            order = np.argsort(-frequency, kind="stable")
            rank = np.empty(n_features, dtype=np.int32)
            rank[order] = np.arange(n_features, dtype=np.int32)
            rows = dict(rows, indices=rank[rows["indices"]])
            W_run = np.zeros_like(W)
        else:
            W_run = W
        result = _linear_svm.crammer_singer(
            **rows, n_samples=n_samples, n_features=n_features, y=codes, cost=cost,
            bias=bias, W=W_run, alpha=alpha, tol=float(self.tol),
            max_iter=iteration_budget(self.max_iter), seed=seed, shrinking=bool(self.shrinking))
        if order is not None:
            W[order] = W_run[:n_features]
            W[n_features] = W_run[n_features]
        return result

    @staticmethod
    def _dual_objective(W, alpha, codes):
        return crammer_singer_dual_objective(W, alpha, codes)


class WestonWatkinsSVC(_MultiClassDualSVC):
    """Weston-Watkins multi-class linear SVM (one slack per wrong class).

    Minimises ``0.5 sum_m ||w_m||^2 + sum_i C_i sum_{m != y_i} max(0, 1 -
    (w_{y_i} - w_m).x_i)``.  Its dual has box constraints only
    (``0 <= alpha_im <= C_i``); each visit of an example updates its ``K - 1``
    variables exactly one after the other (block coordinate descent).

    Parameters
    ----------
    Same as :class:`CrammerSingerSVC`; ``tol`` bounds the largest projected
    gradient of a pass.

    Attributes
    ----------
    Same as :class:`CrammerSingerSVC`; ``dual_coef_[i, y_i]`` is 0 and
    ``dual_objective_`` is :func:`weston_watkins_dual_objective`.
    """

    def _run_kernel(self, rows, n_samples, n_features, codes, cost, bias, W, alpha, seed):
        return _linear_svm.weston_watkins(
            **rows, n_samples=n_samples, n_features=n_features, y=codes, cost=cost,
            bias=bias, W=W, alpha=alpha, tol=float(self.tol),
            max_iter=iteration_budget(self.max_iter), inner_sweeps=5, seed=seed)

    @staticmethod
    def _dual_objective(W, alpha, codes):
        return weston_watkins_dual_objective(W, alpha, codes)


# ---------------------------------------------------------------- meta --

def _clone(estimator):
    """A new unfitted estimator with the same parameters (nested ones cloned)."""
    if not hasattr(estimator, "get_params"):
        raise ValueError("estimator must be a linclass (or scikit-learn) estimator "
                         "with get_params, got %r" % (estimator,))
    params = estimator.get_params(deep=False)
    params = {k: _clone(v) if hasattr(v, "get_params") and not isinstance(v, type) else v
              for k, v in params.items()}
    return type(estimator)(**params)


def _binary_scores(estimator, X):
    """Score of the positive class (label 1) of a fitted binary estimator
    (non-finite scores raise, naming the estimator: any estimator may be wrapped)."""
    scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
    if scores.ndim == 2:  # (n, 2) from an estimator scoring both classes
        scores = scores[:, 1] - scores[:, 0]
    return check_finite_output(estimator, scores, X)


def _fit_binary(estimator, X, y01, sample_weight):
    est = _clone(estimator)
    if sample_weight is None:
        return est.fit(X, y01)
    return est.fit(X, y01, sample_weight=sample_weight)


class _MetaBase(ClassifierMixin, BaseEstimator):
    def __init__(self, estimator, n_jobs=None):
        self.estimator = estimator
        self.n_jobs = n_jobs

    def _check_estimator(self):
        if not (hasattr(self.estimator, "fit") and hasattr(self.estimator, "decision_function")
                and hasattr(self.estimator, "get_params")):
            raise ValueError("estimator must be a binary classifier with fit, "
                             "decision_function and get_params, got %r" % (self.estimator,))

    def _check_state(self):
        """One fitted binary estimator per problem, each on ``n_features_in_``
        features with labels {0, 1} (called by :func:`linclass.load`)."""
        super()._check_state()
        if "estimators_" not in vars(self):     # not fitted: nothing to check
            return
        n_problems = len(self._problem_classes())
        estimators = self.estimators_
        if not isinstance(estimators, list) or len(estimators) != n_problems:
            raise ValueError("estimators_ must be a list of %d fitted estimators for %d "
                             "classes" % (n_problems, len(self.classes_)))
        for est in estimators:
            if not hasattr(est, "decision_function"):
                raise ValueError("estimators_ must hold classifiers, got %r" % (est,))
            if getattr(est, "n_features_in_", self.n_features_in_) != self.n_features_in_:
                raise ValueError("an estimator of estimators_ has %r features, the model %d"
                                 % (est.n_features_in_, self.n_features_in_))
            classes = getattr(est, "classes_", None)
            if classes is not None and (len(classes) != 2 or list(classes) != [0, 1]):
                raise ValueError("each estimator of estimators_ must be binary with labels "
                                 "[0, 1], got %r" % (list(classes)[:5],))

    def predict(self, X):
        """Labels of the highest-scoring class."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.input_tags.sparse = self.estimator.__sklearn_tags__().input_tags.sparse
        except Exception:
            pass
        return tags


class OneVsRestClassifier(_MetaBase):
    """One binary problem per class (that class against all others).

    Parameters
    ----------
    estimator : binary classifier
        Any linclass (or scikit-learn) binary classifier whose
        ``decision_function`` is positive for label 1; cloned per class.
    n_jobs : None or int, default=None
        Threads running the binary fits and predictions (-1: all CPUs).
        linclass kernels release the GIL, so threads run in parallel.

    Attributes
    ----------
    estimators_ : list of fitted estimators (one for two classes)
    classes_, n_features_in_
    coef_, intercept_ : stacked from the estimators when they have them

    Notes
    -----
    Prediction is the class with the highest score; ties go to the first class.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit one binary estimator per class (returns self)."""
        self._check_estimator()
        X, classes, codes, sw = check_classification_data(X, y, sample_weight)
        if sample_weight is None:
            sw = None
        if len(classes) == 2:
            tasks = [codes]
        else:
            tasks = [(codes == k).astype(np.int32) for k in range(len(classes))]
        self.estimators_ = map_threads(lambda t: _fit_binary(self.estimator, X, t, sw),
                                       tasks, self.n_jobs)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        # an estimator's n_iter_ may be an array (SVC: one per pair of classes)
        self.n_iter_ = int(max(np.max(np.asarray(getattr(e, "n_iter_", 0)), initial=0)
                               for e in self.estimators_))
        if all(hasattr(e, "coef_") and hasattr(e, "intercept_") for e in self.estimators_):
            self.coef_ = np.vstack([np.atleast_2d(e.coef_) for e in self.estimators_])
            self.intercept_ = np.concatenate([np.ravel(e.intercept_) for e in self.estimators_])
        return self

    def _problem_classes(self):
        K = len(self.classes_)
        return [1] if K == 2 else list(range(K))

    def decision_function(self, X):
        """Scores: (n_samples,) for two classes, else (n_samples, n_classes)."""
        X = check_predict_X(self, X)
        cols = map_threads(lambda e: _binary_scores(e, X), self.estimators_, self.n_jobs)
        if len(cols) == 1:
            return cols[0]
        return np.column_stack(cols)


class OneVsOneClassifier(_MetaBase):
    """One binary problem per pair of classes, combined by voting.

    Parameters
    ----------
    estimator : binary classifier (see :class:`OneVsRestClassifier`)
    n_jobs : None or int, default=None
        Threads for the ``K (K - 1) / 2`` binary fits and predictions.

    Attributes
    ----------
    estimators_ : list of fitted estimators, pairs ``(a, b)`` with ``a < b``
        in ``itertools.combinations`` order; label 1 means class ``b``.
    pairs_ : ndarray of shape (n_pairs, 2)
    classes_, n_features_in_

    Notes
    -----
    Each pair votes for one of its classes.  Ties in the number of votes are
    broken deterministically: first by the sum over pairs of each class's
    confidence (the pair's score, taken positive for the class it favours),
    scaled into (-1/3, 1/3) so that it never overrides a vote; then by the
    smallest class index.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit one binary estimator per pair of classes (returns self)."""
        self._check_estimator()
        X, classes, codes, sw = check_classification_data(X, y, sample_weight)
        if sample_weight is None:
            sw = None
        pairs = list(itertools.combinations(range(len(classes)), 2))

        def fit_pair(pair):
            a, b = pair
            rows = np.flatnonzero((codes == a) | (codes == b))
            return _fit_binary(self.estimator, X[rows], (codes[rows] == b).astype(np.int32),
                               None if sw is None else sw[rows])

        self.estimators_ = map_threads(fit_pair, pairs, self.n_jobs)
        self.pairs_ = np.array(pairs, dtype=np.intp).reshape(-1, 2)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        return self

    def _problem_classes(self):
        return list(itertools.combinations(range(len(self.classes_)), 2))

    def _check_state(self):
        super()._check_state()
        if "pairs_" not in vars(self):          # not fitted: nothing to check
            return
        pairs = np.asarray(self._problem_classes(), dtype=np.intp).reshape(-1, 2)
        if not isinstance(self.pairs_, np.ndarray) or self.pairs_.shape != pairs.shape or \
                self.pairs_.dtype.kind not in "iu" or not np.array_equal(self.pairs_, pairs):
            raise ValueError("pairs_ must list the %d pairs of classes in order"
                             % len(pairs))

    def _votes_and_confidence(self, X):
        K = len(self.classes_)
        votes = np.zeros((X.shape[0], K))
        confidence = np.zeros((X.shape[0], K))
        scores = map_threads(lambda e: _binary_scores(e, X), self.estimators_, self.n_jobs)
        for (a, b), s in zip(self.pairs_, scores):
            votes[:, b] += s > 0
            votes[:, a] += s <= 0
            confidence[:, b] += s
            confidence[:, a] -= s
        return votes, confidence

    def decision_function(self, X):
        """Votes plus the tie-breaking confidence term, shape (n_samples, n_classes)
        ((n_samples,) for two classes: positive means ``classes_[1]``)."""
        X = check_predict_X(self, X)
        votes, confidence = self._votes_and_confidence(X)
        scaled = confidence / (3.0 * (np.abs(confidence) + 1.0))
        scores = votes + scaled
        if len(self.classes_) == 2:
            return scores[:, 1] - scores[:, 0]
        return scores
