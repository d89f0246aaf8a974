"""Support vector classification in the dual, trained by SMO.

:class:`SVC` solves, for each binary sub-problem,

    min_a 1/2 sum_ij a_i a_j y_i y_j k(x_i, x_j) - sum_i a_i
    s.t.  0 <= a_i <= C_i,  sum_i a_i y_i = 0,

with ``C_i = C * class_weight[y_i] * sample_weight_i``, by sequential minimal
optimisation (``linclass._core._smo``: second-order working-set selection,
LRU kernel-column cache of ``cache_size`` MB, shrinking, KKT tolerance
``tol``), and predicts with ``f(x) = sum_i a_i y_i k(x_i, x) + b``.

Multi-class problems are split one-vs-one (default, as LIBSVM) or one-vs-rest.
The sub-problems share one set of support vectors, so the kernel between a test
point and the support vectors is computed once for all of them; the layout of
``dual_coef_``/``intercept_`` is LIBSVM's (and scikit-learn's).

Probabilities (``probability=True``) follow Platt (2000) as implemented in
LIBSVM (Lin, Lin & Weng, 2007): each sub-problem's decision values are
obtained by internal 5-fold cross-validation and a sigmoid is fitted to them;
multi-class probabilities couple the pairwise ones (Wu, Lin & Weng, 2004).
**Agreement with predict**: the sigmoid ``P(+|f) = 1 / (1 + exp(A f))`` is
fitted with its offset fixed at ``B = 0`` and ``A < 0``, so ``P > 1/2`` exactly
when ``f > 0``: binary probabilities always agree with ``predict``.  For
several classes the coupled probabilities may rank classes differently from
the one-vs-one vote; in those rows (rare, near ties) the probability of the
voted class and the largest probability are swapped, so that ``argmax
predict_proba == predict`` always holds.

References
----------
Platt, J. (1998). Sequential minimal optimization: a fast algorithm for
training support vector machines. MSR-TR-98-14.
Fan, R.-E., Chen, P.-H. & Lin, C.-J. (2005). Working set selection using
second order information for training SVM. JMLR 6, 1889-1918.
Chang, C.-C. & Lin, C.-J. (2011). LIBSVM: a library for support vector
machines. ACM TIST 2(3), 27.
Platt, J. (2000). Probabilistic outputs for support vector machines.
Lin, H.-T., Lin, C.-J. & Weng, R. C. (2007). A note on Platt's probabilistic
outputs for support vector machines. Machine Learning 68, 267-276.
Wu, T.-F., Lin, C.-J. & Weng, R. C. (2004). Probability estimates for
multi-class classification by pairwise coupling. JMLR 5, 975-1005.
"""
import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from .._validation import check_classification_target, check_no_overflow, class_weight_vector
from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_random_state, check_sample_weight, check_state_array)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning
from .pairwise import (KERNEL_CODES, KernelModelMixin, call_kernel, check_coef0, check_degree,
                       check_kernel_name, kernel_matrix, resolve_gamma, row_sq_norms,
                       rows_arguments)

__all__ = ["SVC"]

#: SMO iterations per sub-problem when ``max_iter=-1``: at least this many,
#: and ``100 * n_samples`` for larger problems (LIBSVM's solver typically needs
#: a few times ``n_samples``); reaching it issues a ConvergenceWarning.
SMO_ITERATION_CAP = 10_000_000


def smo_iteration_budget(max_iter, n_samples):
    """The finite SMO budget: ``max_iter``, or the hard cap for ``-1``."""
    if max_iter == -1:
        return max(SMO_ITERATION_CAP, 100 * int(n_samples))
    return int(max_iter)


def check_precomputed_gram(K, *, at_fit, n_train=None, name="X"):
    """A precomputed kernel: square and symmetric at fit, (n, n_train) later."""
    if sp.issparse(K):
        K = K.toarray()
    K = check_array(K, name=name, accept_sparse=False)
    if at_fit:
        if K.shape[0] != K.shape[1]:
            raise ValueError("%s should be a square kernel matrix with kernel='precomputed', "
                             "got shape %r" % (name, K.shape))
        scale = max(np.abs(K).max(), 1.0)
        if not np.allclose(K, K.T, rtol=1e-7, atol=1e-10 * scale):
            raise ValueError("%s must be a symmetric Gram matrix with kernel='precomputed' "
                             "(largest |K - K.T| = %g)" % (name, np.abs(K - K.T).max()))
    elif K.shape[1] != n_train:
        raise ValueError("%s.shape[1] = %d should be equal to %d, the number of samples at "
                         "training time (kernel='precomputed')" % (name, K.shape[1], n_train))
    return K


def _ovr_decision_function(predictions, confidences, n_classes):
    """One-vs-one votes plus confidences squashed into (-1/3, 1/3) (scikit-learn's shape)."""
    n_samples = predictions.shape[0]
    votes = np.zeros((n_samples, n_classes))
    sum_of_confidences = np.zeros((n_samples, n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            sum_of_confidences[:, i] -= confidences[:, k]
            sum_of_confidences[:, j] += confidences[:, k]
            votes[predictions[:, k] == 0, i] += 1
            votes[predictions[:, k] == 1, j] += 1
            k += 1
    transformed = sum_of_confidences / (3 * (np.abs(sum_of_confidences) + 1))
    return votes + transformed


def fit_platt_sigmoid(decision, positive, prior_positive=None, prior_negative=None):
    """Fit ``P(positive | f) = 1 / (1 + exp(A f))`` (offset B = 0) by Newton's method.

    Targets are Platt's regularised ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``
    (Lin, Lin & Weng, 2007).  ``A`` is kept < 0 so that ``P > 1/2`` iff ``f > 0``.
    """
    decision = np.asarray(decision, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n_pos = positive.sum() if prior_positive is None else prior_positive
    n_neg = (~positive).sum() if prior_negative is None else prior_negative
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def nll(a):
        z = a * decision
        return np.sum(np.logaddexp(0.0, z) - (1.0 - target) * z)

    a = 0.0
    value = nll(a)
    for _ in range(100):
        z = a * decision
        p = 0.5 * (1.0 - np.tanh(0.5 * z))          # 1 / (1 + exp(z)), stable
        grad = np.sum(decision * (target - p))
        hess = np.sum(decision * decision * p * (1.0 - p)) + 1e-12
        if abs(grad) < 1e-5 * max(1.0, len(decision)) * 1e-2:
            break
        step = -grad / hess
        t = 1.0
        while t > 1e-10:
            new_a = a + t * step
            new_value = nll(new_a)
            if new_value < value + 1e-4 * t * step * grad:
                break
            t *= 0.5
        else:
            break
        a, value = new_a, new_value
    return min(a, -1e-12)


def couple_pairwise(pairwise, n_classes):
    """Multi-class probabilities from pairwise ``r[i, j] = P(i | i or j)``.

    Solves ``min_p p^T Q p`` s.t. ``sum(p) = 1`` (Wu, Lin & Weng 2004, method 2)
    exactly, by one linear system per sample.  ``pairwise`` has shape
    (n_samples, n_pairs) in the order (0,1), (0,2), ..., (k-2,k-1).
    """
    n_samples = pairwise.shape[0]
    r = np.zeros((n_samples, n_classes, n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            r[:, i, j] = pairwise[:, k]
            r[:, j, i] = 1.0 - pairwise[:, k]
            k += 1
    Q = -r.transpose(0, 2, 1) * r                      # Q[t, j] = -r[j, t] r[t, j]
    diag = np.einsum("sjt,sjt->st", r, r) - np.einsum("stt->st", r) ** 2
    idx = np.arange(n_classes)
    Q[:, idx, idx] = diag                              # Q[t, t] = sum_{j != t} r[j, t]^2
    system = np.zeros((n_samples, n_classes + 1, n_classes + 1))
    system[:, :n_classes, :n_classes] = Q
    system[:, :n_classes, n_classes] = 1.0
    system[:, n_classes, :n_classes] = 1.0
    rhs = np.zeros((n_samples, n_classes + 1))
    rhs[:, n_classes] = 1.0
    try:
        p = np.linalg.solve(system, rhs[..., None])[..., 0][:, :n_classes]
    except np.linalg.LinAlgError:
        p = np.stack([np.linalg.lstsq(s, b, rcond=None)[0][:n_classes]
                      for s, b in zip(system, rhs)])
    p = np.clip(p, 0.0, None)
    total = p.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    return p / total


class SVC(KernelModelMixin, ClassifierMixin, BaseEstimator):
    """C-support vector classifier with kernels, trained by SMO.

    Parameters
    ----------
    C : float, default=1.0
        Upper bound of the dual variables (inverse regularisation), > 0.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        A callable is called as ``kernel(X, Y)`` and must return the
        (n_X, n_Y) kernel matrix; with ``"precomputed"`` X is the Gram matrix
        (square and symmetric in ``fit``, (n_samples, n_train) later).
    degree : int, default=3
        Degree of the polynomial kernel, >= 1.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of poly/rbf/sigmoid, > 0.  ``"scale"``:
        ``1 / (n_features * X.var())``; ``"auto"``: ``1 / n_features``.
    coef0 : float, default=0.0
        Constant of the poly and sigmoid kernels.
    shrinking : bool, default=True
        Shrink variables at bound (with gradient reconstruction).
    probability : bool, default=False
        Fit Platt sigmoids by internal 5-fold cross-validation (5x slower fit)
        and enable :meth:`predict_proba`.
    tol : float, default=1e-3
        KKT stopping tolerance (maximal violation ``m(a) - M(a)``).
    cache_size : float, default=200
        Budget of the kernel-column cache in MB, > 0 (per sub-problem being
        solved; with ``n_jobs`` threads, ``n_jobs`` caches are alive).
    class_weight : None, "balanced" or dict, default=None
        Multiplies C per class.
    verbose : bool, default=False
    max_iter : int, default=-1
        SMO iterations per sub-problem; -1: no user limit, but a hard cap of
        ``max(10_000_000, 100 * n_samples)`` iterations
        (``linclass.kernels.svc.SMO_ITERATION_CAP``) still applies, so that a problem that
        cannot reach ``tol`` in floating point (extreme ``C`` or weights)
        returns.  When reached, a
        :class:`~linclass.exceptions.ConvergenceWarning` is issued and the
        model is still usable.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of :meth:`decision_function` with one-vs-one training:
        (n_samples, n_classes) votes + confidences, or the raw
        (n_samples, n_classes * (n_classes - 1) / 2) pairwise values.
    multi_class : {"ovo", "ovr"}, default="ovo"
        How more than two classes are split into binary SVMs.
    random_state : int, Generator or None, default=None
        Folds of the internal cross-validation of ``probability=True``.
    n_jobs : int or None, default=None
        Threads solving sub-problems in parallel (the solver releases the GIL).

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    support_ : ndarray (n_SV,) indices of the support vectors, grouped by class
    support_vectors_ : ndarray or sparse matrix (n_SV, n_features)
        Empty for ``kernel="precomputed"``.
    n_support_ : ndarray (n_classes,) int32
    dual_coef_ : ndarray (n_classes - 1, n_SV) for one-vs-one (LIBSVM layout;
        (1, n_SV) for two classes, ``a_i y_i`` with y = +1 for ``classes_[1]``),
        (n_classes, n_SV) for one-vs-rest
    intercept_ : ndarray (n_problems,)  the ``b`` of each sub-problem
    dual_objective_ : ndarray (n_problems,)  ``1/2 a^T Q a - e^T a`` at the solution
    n_iter_ : ndarray (n_problems,) int  SMO iterations
    fit_status_ : int  0 if every sub-problem converged, 1 otherwise
    probA_, probB_ : ndarray (n_problems,)  Platt sigmoids (``probB_`` is 0)
    n_features_in_ : int
    """

    def __init__(self, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", multi_class="ovo", random_state=None,
                 n_jobs=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.multi_class = multi_class
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- parameters -------------------------------------------------------
    def _check_params(self):
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_positive(self.cache_size, "cache_size")
        check_kernel_name(self.kernel)
        check_degree(self.degree)
        check_coef0(self.coef0)
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) \
                or (self.max_iter < 1 and self.max_iter != -1):
            raise ValueError("max_iter must be a positive integer or -1 (no limit), got %r"
                             % (self.max_iter,))
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError("decision_function_shape must be 'ovr' or 'ovo', got %r"
                             % (self.decision_function_shape,))
        if self.multi_class not in ("ovo", "ovr"):
            raise ValueError("multi_class must be 'ovo' or 'ovr', got %r" % (self.multi_class,))
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or
                                        not isinstance(self.n_jobs, numbers.Integral)
                                        or self.n_jobs == 0):
            raise ValueError("n_jobs must be None, -1 or a positive integer, got %r"
                             % (self.n_jobs,))

    def _n_dual_rows(self):
        n_classes = len(self.classes_)
        if n_classes == 2 or self.multi_class == "ovr":
            return len(self._problems(n_classes))
        return n_classes - 1

    def _check_state(self):
        """Per-problem arrays, class counts of the support vectors and Platt
        sigmoids agree with the classes (called by :func:`linclass.load`)."""
        super()._check_state()
        if "support_" not in vars(self):          # not fitted: nothing to check
            return
        n_problems = len(self._problems(len(self.classes_)))
        check_state_array(self.intercept_, "intercept_", (n_problems,))
        n_support = check_state_array(self.n_support_, "n_support_", (len(self.classes_),),
                                      kinds="iu")
        if n_support.min() < 0 or n_support.sum() != self.support_.shape[0]:
            raise ValueError("n_support_ must be counts summing to the %d support vectors"
                             % self.support_.shape[0])
        for name in ("probA_", "probB_"):
            value = getattr(self, name)
            size = value.shape[0] if isinstance(value, np.ndarray) and value.ndim == 1 else -1
            check_state_array(value, name, (0 if size == 0 else n_problems,))
        if self.probA_.shape != self.probB_.shape:
            raise ValueError("probA_ and probB_ must have the same shape")

    def _n_threads(self, n_tasks):
        import os
        if self.n_jobs is None:
            return 1
        n = (os.cpu_count() or 1) if self.n_jobs < 0 else self.n_jobs
        return max(1, min(n, n_tasks))

    # -- fit ----------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit the SVM (all sub-problems) to X, y.

        Parameters
        ----------
        X : array-like or sparse matrix (n_samples, n_features), or the Gram
            matrix (n_samples, n_samples) for ``kernel="precomputed"``
        y : array-like (n_samples,)
        sample_weight : array-like (n_samples,), optional
            Multiplies C per sample (a sample with weight 0 is left out).
        """
        self._check_params()
        kernel = self.kernel
        if kernel == "precomputed":
            X = check_precomputed_gram(X, at_fit=True)
        else:
            X = check_array(X)
            if not callable(kernel):
                check_no_overflow(X, self)
        n_samples = X.shape[0]
        classes, codes = check_classification_target(y, n_samples)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        C_per_sample = (float(self.C) * sample_weight *
                        class_weight_vector(self.class_weight, classes, codes,
                                            sample_weight)[codes])
        if not np.isfinite(C_per_sample).all():
            raise ValueError("SVC: C * sample_weight * class_weight overflows double "
                             "precision (C=%r, largest sample weight %.3g); scale them down"
                             % (self.C, float(sample_weight.max())))
        if not (C_per_sample > 0).any():
            raise ValueError("every sample has weight zero (sample_weight * class_weight): "
                             "nothing to train on")
        n_classes = len(classes)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.shape_fit_ = X.shape

        # the kernel, as seen by the solver
        if callable(kernel):
            gram = call_kernel(kernel, X, X)
            solver_X, kernel_name, gamma = gram, "precomputed", 0.0
        elif kernel == "precomputed":
            solver_X, kernel_name, gamma = X, "precomputed", 0.0
        else:
            solver_X, kernel_name = X, kernel
            gamma = resolve_gamma(self.gamma, X) if kernel != "linear" else 0.0
        self._gamma = gamma
        solver_args = rows_arguments(solver_X)
        solver_args["sq_norms"] = row_sq_norms(solver_X) if kernel_name == "rbf" else None
        kernel_args = dict(kind=KERNEL_CODES[kernel_name], gamma=gamma,
                           coef0=float(self.coef0), degree=check_degree(self.degree))

        problems = self._problems(n_classes)
        rng = check_random_state(self.random_state)
        seeds = rng.integers(0, 2**31 - 1, size=len(problems))

        def solve_problem(k):
            pos_class, neg_class = problems[k]
            if neg_class is None:
                member = C_per_sample > 0
            else:
                member = ((codes == pos_class) | (codes == neg_class)) & (C_per_sample > 0)
            rows = np.flatnonzero(member).astype(np.int32)
            sign = np.where(codes[rows] == pos_class, 1.0, -1.0)
            alpha, rho, obj, n_iter, status = self._solve_binary(
                solver_args, kernel_args, rows, sign, C_per_sample[rows], self.max_iter)
            prob_a = None
            if self.probability:
                prob_a = self._platt_cv(solver_args, kernel_args, solver_X, rows, sign,
                                        C_per_sample[rows], seeds[k])
            return rows, sign * alpha, rho, obj, n_iter, status, prob_a

        n_threads = self._n_threads(len(problems))
        if n_threads > 1:
            with ThreadPoolExecutor(n_threads) as pool:
                results = list(pool.map(solve_problem, range(len(problems))))
        else:
            results = [solve_problem(k) for k in range(len(problems))]

        # the union of the support vectors, grouped by class (LIBSVM's order)
        coef_full = np.zeros((len(problems), n_samples))
        for k, (rows, coef, *_rest) in enumerate(results):
            coef_full[k, rows] = coef
        is_sv = (coef_full != 0).any(axis=0)
        order = np.lexsort((np.arange(n_samples), codes))
        support = order[is_sv[order]].astype(np.int32)
        problem_coef = coef_full[:, support]
        self.support_ = support
        self.n_support_ = np.bincount(codes[support], minlength=n_classes).astype(np.int32)
        if kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[support]
        self._sv_sq_norms = (row_sq_norms(self.support_vectors_) if kernel_name == "rbf"
                             else None)
        self.dual_coef_ = self._to_dual_coef(problem_coef, codes[support], n_classes)
        self.intercept_ = np.array([-r[2] for r in results])
        self.dual_objective_ = np.array([r[3] for r in results])
        self.n_iter_ = np.array([r[4] for r in results], dtype=np.int64)
        statuses = [r[5] for r in results]
        self.fit_status_ = int(any(s != 0 for s in statuses))
        if self.fit_status_:
            budget = smo_iteration_budget(self.max_iter, n_samples)
            warnings.warn("SMO stopped at max_iter=%d%s before reaching the KKT tolerance "
                          "tol=%g in %d of %d sub-problems; the model is usable but not "
                          "optimal (raise max_iter, or scale C and sample_weight down)"
                          % (budget, " (the hard cap of max_iter=-1)"
                             if self.max_iter == -1 else "", self.tol,
                                                       sum(s != 0 for s in statuses),
                                                       len(statuses)),
                          ConvergenceWarning)
        if self.probability:
            self.probA_ = np.array([r[6] for r in results])
            self.probB_ = np.zeros(len(problems))
        else:
            self.probA_ = np.empty(0)
            self.probB_ = np.empty(0)
        return self

    def _problems(self, n_classes):
        """(positive class, negative class or None for 'the rest') per sub-problem."""
        if n_classes == 2:
            return [(1, 0)]            # decision > 0 means classes_[1]
        if self.multi_class == "ovr":
            return [(c, None) for c in range(n_classes)]
        return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]

    def _solve_binary(self, solver_args, kernel_args, rows, sign, C_rows, max_iter):
        """(alpha, rho, objective, n_iter, status) of one binary problem."""
        n_pos = int((sign > 0).sum())
        if n_pos == 0 or n_pos == len(sign):
            # one side is empty (all its samples have weight 0): constant decision
            rho = -1.0 if n_pos else 1.0
            return np.zeros(len(rows)), rho, 0.0, 0, 0
        from .._core._smo import smo_solve
        try:
            return smo_solve(rows=rows, y=sign, C=np.ascontiguousarray(C_rows),
                             tol=float(self.tol), cache_bytes=float(self.cache_size) * 2**20,
                             shrinking=bool(self.shrinking),
                             max_iter=smo_iteration_budget(max_iter, len(rows)),
                             **solver_args, **kernel_args)
        except FloatingPointError as exc:
            raise ValueError("SVC: %s; the data, C or sample_weight are too large for "
                             "double precision (scale them down)" % exc) from None

    def _platt_cv(self, solver_args, kernel_args, solver_X, rows, sign, C_rows, seed):
        """Platt's A from decision values of 5-fold cross-validation (LIBSVM's scheme)."""
        n = len(rows)
        n_folds = 5
        perm = np.random.default_rng(seed).permutation(n)
        decision = np.zeros(n)
        for f in range(n_folds):
            test = perm[f * n // n_folds:(f + 1) * n // n_folds]
            train = np.setdiff1d(perm, test, assume_unique=True)
            train_sign = sign[train]
            n_pos = (train_sign > 0).sum()
            if len(train) < 2 or n_pos == 0 or n_pos == len(train):
                decision[test] = 1.0 if n_pos else -1.0
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                alpha, rho, _, _, _ = self._solve_binary(
                    solver_args, kernel_args, rows[train], train_sign, C_rows[train],
                    self.max_iter)
            nz = alpha != 0
            sv_rows = rows[train][nz]
            coef = (alpha * train_sign)[nz]
            decision[test] = self._kernel_between(solver_X, rows[test], sv_rows,
                                                  kernel_args) @ coef - rho
        return fit_platt_sigmoid(decision, sign > 0)

    def _kernel_between(self, solver_X, rows_a, rows_b, kernel_args):
        """Kernel values between rows of the training matrix (for the Platt folds)."""
        if kernel_args["kind"] == KERNEL_CODES["precomputed"]:
            return solver_X[np.ix_(rows_a, rows_b)]
        name = [k for k, v in KERNEL_CODES.items() if v == kernel_args["kind"]][0]
        return kernel_matrix(solver_X[rows_a], solver_X[rows_b], name, owner=self,
                             gamma=kernel_args["gamma"], coef0=kernel_args["coef0"],
                             degree=kernel_args["degree"])

    def _to_dual_coef(self, problem_coef, sv_codes, n_classes):
        """Per-problem coefficients -> LIBSVM's dual_coef_ layout."""
        if n_classes == 2 or self.multi_class == "ovr":
            # C order, as load() gives it back: the same BLAS path, the same bits
            return np.ascontiguousarray(problem_coef)
        dual = np.zeros((n_classes - 1, problem_coef.shape[1]))
        k = 0
        for i in range(n_classes):
            for j in range(i + 1, n_classes):
                in_i = sv_codes == i
                in_j = sv_codes == j
                dual[j - 1, in_i] = problem_coef[k, in_i]
                dual[i, in_j] = problem_coef[k, in_j]
                k += 1
        return dual

    def _problem_coef(self):
        """dual_coef_ -> (n_problems, n_SV) coefficients of each sub-problem."""
        n_classes = len(self.classes_)
        if n_classes == 2 or self.multi_class == "ovr":
            return self.dual_coef_
        sv_codes = np.repeat(np.arange(n_classes), self.n_support_)
        coef = np.zeros((n_classes * (n_classes - 1) // 2, len(sv_codes)))
        k = 0
        for i in range(n_classes):
            for j in range(i + 1, n_classes):
                in_i = sv_codes == i
                in_j = sv_codes == j
                coef[k, in_i] = self.dual_coef_[j - 1, in_i]
                coef[k, in_j] = self.dual_coef_[i, in_j]
                k += 1
        return coef

    # -- prediction -------------------------------------------------------
    def _kernel_to_support(self, X):
        check_is_fitted(self, "support_")
        if self.kernel == "precomputed":
            K = check_precomputed_gram(X, at_fit=False, n_train=self.shape_fit_[0])
            return K[:, self.support_]
        X = check_array(X)
        check_n_features(X, self.n_features_in_, owner=self)
        if callable(self.kernel):
            return call_kernel(self.kernel, X, self.support_vectors_)
        return kernel_matrix(X, self.support_vectors_, self.kernel, gamma=self._gamma, owner=self,
                             coef0=float(self.coef0), degree=check_degree(self.degree),
                             Y_sq_norms=self._sv_sq_norms)

    def _raw_decision(self, X):
        """(n_samples, n_problems) f(x) = sum_i coef_i k(x_i, x) + b per sub-problem."""
        K = self._kernel_to_support(X)
        return K @ self._problem_coef().T + self.intercept_

    @property
    def coef_(self):
        """Primal weights of each sub-problem, ``dual_coef @ support_vectors_``
        (n_problems, n_features); only for ``kernel="linear"``.

        ``X @ coef_.T + intercept_`` are the raw sub-problem decision values
        (the binary decision function for two classes).
        """
        check_is_fitted(self, "support_")
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel "
                                 "(kernel=%r); use dual_coef_ and support_vectors_"
                                 % (self.kernel,))
        coef = self._problem_coef()
        sv = self.support_vectors_
        W = (sv.T @ coef.T).T if sp.issparse(sv) else coef @ sv
        return np.ascontiguousarray(np.asarray(W))

    def decision_function(self, X):
        """Decision values.

        Two classes: shape (n_samples,), > 0 for ``classes_[1]``.  One-vs-one:
        (n_samples, n_classes) votes plus squashed confidences with
        ``decision_function_shape="ovr"``, else the raw pairwise values
        (positive for the first class of each pair).  One-vs-rest:
        (n_samples, n_classes).
        """
        dec = self._raw_decision(X)
        n_classes = len(self.classes_)
        if n_classes == 2:
            return dec.ravel()
        if self.multi_class == "ovo" and self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, n_classes)
        return dec

    def _predict_codes(self, dec):
        n_classes = len(self.classes_)
        if n_classes == 2:
            return (dec[:, 0] > 0).astype(np.intp)
        if self.multi_class == "ovr":
            return np.argmax(dec, axis=1)
        votes = np.zeros((dec.shape[0], n_classes), dtype=np.int64)
        k = 0
        for i in range(n_classes):
            for j in range(i + 1, n_classes):
                wins_i = dec[:, k] > 0
                votes[wins_i, i] += 1
                votes[~wins_i, j] += 1
                k += 1
        return np.argmax(votes, axis=1)        # ties: the first class, as LIBSVM

    def predict(self, X):
        """Class labels: sign of f (binary), one-vs-one votes or one-vs-rest argmax."""
        return self.classes_[self._predict_codes(self._raw_decision(X))]

    @property
    def predict_proba(self):
        """Class probabilities (Platt scaling); needs ``probability=True``.

        Returns a function ``predict_proba(X) -> (n_samples, n_classes)``
        whose row-wise argmax always equals :meth:`predict` (see the module
        docstring for how).
        """
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False "
                                 "(fit with SVC(probability=True))")
        return self._predict_proba

    @property
    def predict_log_proba(self):
        """``log(predict_proba(X))``; needs ``probability=True``."""
        if not self.probability:
            raise AttributeError("predict_log_proba is not available when probability=False")
        return self._predict_log_proba

    def _predict_proba(self, X):
        check_is_fitted(self, "support_")
        if len(self.probA_) == 0:
            raise AttributeError("this SVC was fitted with probability=False; refit with "
                                 "probability=True to use predict_proba")
        dec = self._raw_decision(X)
        z = dec * self.probA_
        p_first = 0.5 * (1.0 - np.tanh(0.5 * z))        # 1 / (1 + exp(A f))
        n_classes = len(self.classes_)
        if n_classes == 2:
            p1 = p_first[:, 0]
            return np.column_stack([1.0 - p1, p1])
        if self.multi_class == "ovr":
            total = p_first.sum(axis=1, keepdims=True)
            proba = np.where(total > 0, p_first / np.where(total > 0, total, 1.0),
                             1.0 / n_classes)
        else:
            proba = couple_pairwise(np.clip(p_first, 1e-7, 1 - 1e-7), n_classes)
        # make argmax agree with predict (see the module docstring)
        predicted = self._predict_codes(dec)
        top = np.argmax(proba, axis=1)
        rows = np.flatnonzero(top != predicted)
        if len(rows):
            a = proba[rows, predicted[rows]].copy()
            proba[rows, predicted[rows]] = proba[rows, top[rows]]
            proba[rows, top[rows]] = a
        return proba

    def _predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self._predict_proba(X))

    # -- persistence and scikit-learn -------------------------------------
