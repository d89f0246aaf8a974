"""Linear support vector classification.

:class:`LinearSVC` solves the L2-regularised SVM with hinge (L1) or squared
hinge (L2) loss by dual coordinate descent, or by the Pegasos primal method
for streaming-sized problems; with ``penalty="l1"`` it solves the
L1-regularised squared-hinge SVM by primal coordinate descent (LIBLINEAR's
``-s 5``), which gives sparse weights.  More than two classes are handled one versus
the rest, the binary problems running on a thread pool (``n_jobs``).

References
----------
Hsieh, Chang, Lin, Keerthi & Sundararajan (2008), "A dual coordinate descent
method for large-scale linear SVM", ICML.
Mangasarian & Musicant (1999), "Successive overrelaxation for support vector
machines", IEEE Transactions on Neural Networks 10(5).
Fan, Chang, Hsieh, Wang & Lin (2008), "LIBLINEAR: A library for large linear
classification", JMLR 9.
Yuan, Chang, Hsieh & Lin (2010), "A comparison of optimization methods and
software for large-scale L1-regularized linear classification", JMLR 11.
Shalev-Shwartz, Singer, Srebro & Cotter (2011), "Pegasos: primal estimated
sub-gradient solver for SVM", Mathematical Programming 127.
"""
import warnings
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._core import _coordinate_descent, _linear_svm
from ._common import LinearDecisionMixin, map_threads, resolve_n_jobs
from .._validation import check_finite_fit, check_max_iter, iteration_budget
from .._validation import check_classification_data, class_weight_per_sample, kernel_rows
from .._validation import check_positive, check_random_state
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["LinearSVC"]

_LOSSES = {"hinge": 1, "squared_hinge": 2}
_SOLVERS = ("dual_cd", "pegasos")
#: dual CD passes after which the squared hinge, if not converged, switches to
#: the primal Newton method (LIBLINEAR switches from -s 1 to -s 2 after 300)
_NEWTON_AFTER_PASSES = 50
#: the Newton finish stops at ||g|| <= _NEWTON_RTOL_FACTOR * tol * ||g(0)||
_NEWTON_RTOL_FACTOR = 0.01
#: sparse inputs with more features than this have their columns renumbered by
#: decreasing frequency for ``dual_cd`` (4096 doubles: a 32 KiB L1 data cache)
_REORDER_MIN_FEATURES = 4096
#: one-vs-rest ``dual_cd`` with the squared hinge solves its problems together,
#: one pass over the rows serving every class (``_linear_svm.ovr_dual_cd_svc``);
#: False (and the hinge): one after the other (``dual_cd_svc``)
_FUSED_OVR = True
#: most classes one fused run holds (one bit per class and row)
_FUSED_MAX_CLASSES = 64
#: a class leaves the fused run and finishes alone once fewer than this
#: fraction of the rows are active in it (small active sets stay in cache when
#: solved one class at a time: 20 Newsgroups hinge, loaded CPU time 22.7 s all
#: fused, 10.0 s per class, 8.3 s with 0.2)
_FUSED_HANDOVER = 0.2
#: over-relaxation of the dual CD steps per loss (projected SOR, Mangasarian &
#: Musicant 1999): each step moves this many times the exact coordinate
#: minimiser, then clips.  The squared hinge's duals are unbounded above and
#: most support vectors stay free for many passes, a linear system that
#: over-relaxation solves in fewer passes.  20 Newsgroups, 20 one-vs-rest
#: problems, tol 1e-4, row visits per class in units of nnz(X), mean of 3
#: seeds (3,000 documents / all 11,314): relax 1.0 18.96 / 15.49, 1.2 16.55 /
#: 13.66, 1.3 16.02 / 13.13, 1.4 15.68 / 12.92; the summed primal moves by
#: seed noise only (within 2e-11 relative of LIBLINEAR's at every value).  The
#: hinge's many variables at the upper bound gain less and its primal at tol
#: comes out higher (3,000 documents: 2903.7171 plain, 2903.7238 at 1.2;
#: LIBLINEAR 2903.7160), so it keeps plain steps
_RELAX = {"hinge": 1.0, "squared_hinge": 1.3}
#: passes between the steps of the dual CD on all its free variables together
#: (``_linear_svm.dual_cd_svc(subspace_every=)``: five conjugate-gradient steps
#: on their sub-problem, projected onto the box, exact line search; skipped
#: when they outnumber half the features).  The hinge spends most of its
#: passes on a free set that changes little (20 Newsgroups, 3,000 documents,
#: 20 one-vs-rest problems, tol 1e-4, 3 seeds: CPU 2.69 / 2.81 / 2.68 s ->
#: 1.65 / 1.78 / 1.66 s, passes 6614 -> 3091 for seed 0, summed primal
#: 2903.7181 -> 2903.7188 on average, within the seeds' spread of 0.0017;
#: all 11,314 documents 9.66 -> 6.54 s); the squared hinge's free sets are
#: already well served by the relaxed steps (there the CG steps cost more
#: than the passes they save)
_SUBSPACE_EVERY = {"hinge": 20, "squared_hinge": 0}


def svm_dual_objective(w, alpha, cost, loss):
    """Dual objective (minimisation form) of a binary problem of :class:`LinearSVC`.

    ``0.5 ||w||^2 + 0.5 sum_i D_ii alpha_i^2 - sum_i alpha_i`` with
    ``D_ii = 0`` (hinge) or ``1 / (2 C_i)`` (squared hinge); ``w`` includes
    the bias weight.  This is the value LIBLINEAR prints as "Objective value".
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    # a plain sum of squares, not BLAS's ddot: its threads would compete with
    # the caller's (and with n_jobs) for nothing on one vector
    value = 0.5 * float(np.square(w).sum()) - float(alpha.sum())
    if loss == "squared_hinge":
        pos = cost > 0
        value += 0.5 * float(np.sum(alpha[pos] ** 2 * (0.5 / cost[pos])))
    return value


def svm_primal_objective(X, ysign, w, bias, cost, loss):
    """``0.5 ||w||^2 + sum_i C_i loss(s_i [x_i, bias] . w)`` of a binary problem."""
    margins = ysign * (np.asarray(X @ w[:-1]).ravel() + bias * w[-1])
    slack = np.maximum(0.0, 1.0 - margins)
    if loss == "squared_hinge":
        slack = slack ** 2
    return 0.5 * float(w @ w) + float(cost @ slack)


def l1_svm_objective(X, ysign, w, bias, cost):
    """Primal objective of a binary problem of ``LinearSVC(penalty="l1")``.

    ``||w||_1 + sum_i C_i max(0, 1 - s_i [x_i, bias] w)^2`` with ``w``
    including the bias weight; the value ``objective_`` holds.
    """
    margins = ysign * (np.asarray(X @ w[:-1]).ravel() + bias * w[-1])
    slack = np.maximum(0.0, 1.0 - margins)
    return float(np.abs(w).sum()) + float(cost @ slack ** 2)


def _frequency_ordered_rows(X):
    """:func:`kernel_rows` arrays of the CSR matrix ``X`` with its columns
    renumbered by decreasing number of stored entries, and ``position`` (int32,
    ``position[j]`` = new number of column ``j``).

    Dual coordinate descent reads and updates ``w[j]`` for every stored entry
    of the row it visits, in a random row order; a text matrix spends most of
    its entries on few frequent terms, and numbering those first packs their
    weights into a few cache lines that stay cached (20 Newsgroups: a 550 kB
    ``w``, half of the entries on 1,000 terms).  The solution is the same up to
    rounding: the weights of the renumbered problem are ``w[position]``.
    """
    n_features = X.shape[1]
    counts = np.bincount(X.indices, minlength=n_features)
    # the sort key as int16 (counts capped at 32767, a tie among the very
    # frequent columns): numpy sorts 16-bit keys by radix, 10x faster than
    # int64 (68,466 columns: 0.5 vs 5 ms); any order gives the same model
    key = -np.minimum(counts, 32767).astype(np.int16)
    order = np.argsort(key, kind="stable")                  # new column -> old
    position = np.empty(n_features, dtype=np.int32)
    position[order] = np.arange(n_features, dtype=np.int32)  # old column -> new
    return dict(data=X.data, indices=position[X.indices], indptr=X.indptr,
                is_sparse=True), position


def _feature_columns(X, bias):
    """The columns of ``X`` (and the constant column ``bias`` when it is not 0)
    as the rows of a CSR or dense C-ordered matrix, as :func:`kernel_rows` arrays
    for ``_coordinate_descent.l1r_l2_svc``."""
    n_samples = X.shape[0]
    if sp.issparse(X):
        XT = sp.csr_matrix(X.T)
        if bias:
            XT = sp.vstack([XT, sp.csr_matrix(np.full((1, n_samples), bias))], format="csr")
        XT.sum_duplicates()
        XT.sort_indices()
        XT = sp.csr_matrix((np.ascontiguousarray(XT.data, dtype=np.float64),
                            XT.indices.astype(np.int32), XT.indptr.astype(np.int32)),
                           shape=XT.shape)
    else:
        XT = X.T
        if bias:
            XT = np.vstack([XT, np.full((1, n_samples), bias)])
        XT = np.ascontiguousarray(XT, dtype=np.float64)
    return kernel_rows(XT), XT.shape[0]


class LinearSVC(LinearDecisionMixin, ClassifierMixin, BaseEstimator):
    """Linear support vector classifier.

    Minimises, for each binary problem (labels ``s_i = +-1``),

        0.5 ||w||^2 + sum_i C_i loss(s_i (w . x_i + w_b * intercept_scaling))

    with ``C_i = C * class_weight[y_i] * sample_weight[i]`` and ``loss`` the
    hinge ``max(0, 1 - m)`` or squared hinge ``max(0, 1 - m)^2``.

    The intercept is learned as the weight ``w_b`` of an extra constant
    feature equal to ``intercept_scaling`` and **is regularised** like every
    other weight (as in LIBLINEAR and scikit-learn); a larger
    ``intercept_scaling`` weakens that regularisation.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength (> 0).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    solver : {"dual_cd", "pegasos"}, default="dual_cd"
        ``"dual_cd"``: dual coordinate descent with random permutation and
        shrinking, stopping when the projected-gradient spread is <= ``tol``.
        With the squared hinge each step is over-relaxed, 1.3 times the exact
        coordinate minimiser before clipping (projected SOR, Mangasarian &
        Musicant 1999: the same optimum, fewer passes on its many free
        variables); the hinge takes the exact steps and, every 20 passes, a
        step on all its free variables (0 < alpha_i < C_i) together: five
        conjugate-gradient steps on their sub-problem, projected onto the box,
        with an exact line search (skipped when they outnumber half the
        features).
        With the squared hinge, a dual that has not reached ``tol`` after 50
        passes hands its ``w`` to the primal finite Newton method (conjugate
        gradients on the generalised Hessian, exact line search; Keerthi &
        DeCoste 2005), which stops at ``||g|| <= 0.01 tol ||g(0)||``; the
        dual variables then come from the KKT conditions,
        ``alpha_i = 2 C_i max(0, 1 - s_i w.x_i)`` (LIBLINEAR switches from
        ``-s 1`` to ``-s 2`` the same way, after 300 passes).
        With more than two classes and the squared hinge, the one-vs-rest
        problems share each pass:
        a row is read once, its margins for all the classes come from one
        walk over its entries (the weights stored class-minor, each feature's
        weights adjacent), and every class takes its own step, with its own
        shrinking and stopping; a class whose active set falls below 20% of
        the rows finishes alone (its few rows then stay in cache).  The
        hinge's problems run one after the other (its long runs on small
        active sets measured faster that way).
        ``"pegasos"``: primal stochastic sub-gradient, ``max_iter`` epochs
        (no convergence test; suited to streaming via ``warm_start``).
    tol : float, default=1e-4
        Stopping tolerance of ``dual_cd`` on the projected gradient.
    max_iter : int, default=1000
        Passes over the data.
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
    class_weight : None, "balanced" or dict, default=None
    shrinking : bool, default=True
        Shrinking heuristic of dual coordinate descent (LIBLINEAR's); all
        variables are checked again after 100 passes without such a check,
        then after 200, 400, ... passes, so that one shrunk by mistake comes
        back even when the active set cannot reach ``tol``.
    warm_start : bool, default=False
        Start from the previous dual solution (``dual_cd``, same training set
        size) or the previous weights (``pegasos``).
    pegasos_projection : bool, default=True
        After each Pegasos step, project onto the ball ``||w||^2 <= 2 f(0) /
        lambda`` that holds the optimum (``f`` the objective, ``lambda = 1 /
        (C n)``); keeps the squared hinge from diverging.
    random_state : None, int or numpy Generator/RandomState
        Order of the coordinates / examples.
    n_jobs : None or int, default=None
        Threads for the one-vs-rest problems (-1: all CPUs).  ``dual_cd``
        with the squared hinge solves the problems together, one pass over
        the rows serving every class (see ``solver``), the classes split
        between the threads; every
        class sees the same row order, drawn from ``random_state``, and its
        result does not depend on the other classes, so the model is the same
        for every ``n_jobs``.
    verbose : int, default=0
        > 0: one progress line per binary problem when it is solved (passes,
        projected-gradient spread and dual objective for ``dual_cd``; steps
        for Pegasos).
    penalty : {"l2", "l1"}, default="l2"
        The regulariser.  ``"l2"``: ``0.5 ||w||^2`` as above, solved by
        ``solver``.  ``"l1"``: ``||w||_1`` with the squared hinge (the
        problem ``||w||_1 + sum_i C_i max(0, 1 - m_i)^2``, LIBLINEAR's ``-s 5``
        and scikit-learn's ``LinearSVC(penalty="l1", dual=False)``), solved
        in the primal by coordinate descent with a Newton direction and line
        search (Yuan et al. 2010), with shrinking when ``shrinking``; it
        stops when the sum of the minimum-norm subgradients of a pass is
        below ``tol`` times the first pass's (after a warm start: times the
        sum at ``w = 0``).  Many weights come out exactly
        0; the intercept weight is L1-regularised too.  Needs
        ``loss="squared_hinge"`` and ``dual`` False or ``"auto"``;
        ``solver`` does not apply.
    dual : {"auto", True, False}, default="auto"
        scikit-learn's choice between the primal and the dual problem.  For
        the squared hinge the L2-regularised problem is strictly convex, so
        both have the same solution and linclass solves it in the dual
        (``dual_cd``) whatever the value; ``dual=False`` with the hinge loss
        raises, as in scikit-learn (the primal hinge problem is not
        differentiable).  ``penalty="l1"`` is solved in the primal only:
        ``dual=True`` with it raises, ``"auto"`` means the primal.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        ``"ovr"``: one binary problem per class.  ``"crammer_singer"``: the
        joint multi-class SVM, fitted by :class:`CrammerSingerSVC` (``C``,
        ``tol``, ``max_iter``, ``fit_intercept``, ``intercept_scaling``,
        ``class_weight`` and ``random_state`` passed on; ``loss`` and
        ``solver`` do not apply).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_, n_features_in_
    n_iter_ : int
        Largest number of passes over the binary problems (dual passes plus
        Newton iterations when the squared hinge finished in the primal).
    objective_ : ndarray of shape (n_problems,)
        Final primal objective of each problem (``penalty="l1"`` only; see
        :func:`l1_svm_objective`).
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        Dual variables ``alpha`` (``dual_cd`` only), for ``warm_start``; not
        written by :meth:`save` (a model file holds what predicts).
    dual_objective_ : ndarray of shape (n_problems,)
        Final dual objective of each problem (``dual_cd`` only; see
        :func:`svm_dual_objective`).
    """

    _training_only = ("dual_coef_",)

    def __init__(self, C=1.0, loss="squared_hinge", solver="dual_cd", tol=1e-4, max_iter=1000,
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None, shrinking=True,
                 warm_start=False, pegasos_projection=True, random_state=None, n_jobs=None,
                 verbose=0, penalty="l2", dual="auto", multi_class="ovr"):
        self.C = C
        self.loss = loss
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.shrinking = shrinking
        self.warm_start = warm_start
        self.pegasos_projection = pegasos_projection
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.penalty = penalty
        self.dual = dual
        self.multi_class = multi_class

    def _check_params(self):
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_max_iter(self, self.max_iter)
        if self.loss not in _LOSSES:
            raise ValueError("loss must be one of %s, got %r" % (sorted(_LOSSES), self.loss))
        if self.solver not in _SOLVERS:
            raise ValueError("solver must be one of %s, got %r" % (_SOLVERS, self.solver))
        if self.fit_intercept:
            check_positive(self.intercept_scaling, "intercept_scaling")
        if not isinstance(self.penalty, str) or self.penalty not in ("l2", "l1"):
            raise ValueError("penalty must be 'l2' or 'l1', got %r" % (self.penalty,))
        if not (self.dual == "auto" or isinstance(self.dual, (bool, np.bool_))):
            raise ValueError("dual must be 'auto', True or False, got %r" % (self.dual,))
        if self.penalty == "l1":
            if self.loss != "squared_hinge":
                raise ValueError("Unsupported set of arguments: penalty='l1' is only supported "
                                 "with loss='squared_hinge', got loss=%r" % (self.loss,))
            if self.dual is True:
                raise ValueError("Unsupported set of arguments: penalty='l1' with "
                                 "loss='squared_hinge' is solved in the primal only; use "
                                 "dual=False or dual='auto'")
            if self.multi_class != "ovr":
                raise ValueError("penalty='l1' needs multi_class='ovr' (the Crammer-Singer "
                                 "SVM is L2-regularised), got multi_class=%r"
                                 % (self.multi_class,))
        if self.dual is False and self.loss == "hinge":
            raise ValueError("Unsupported set of arguments: loss='hinge' is not supported "
                             "with dual=False (the primal hinge problem is not "
                             "differentiable); use dual=True or loss='squared_hinge'")
        if self.multi_class not in ("ovr", "crammer_singer"):
            raise ValueError("multi_class must be 'ovr' or 'crammer_singer', got %r"
                             % (self.multi_class,))

    def fit(self, X: Any, y: ArrayLike,
            sample_weight: Optional[ArrayLike] = None) -> "LinearSVC":
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
        self._check_params()
        if self.multi_class == "crammer_singer":
            return self._fit_crammer_singer(X, y, sample_weight)
        # dual CD, the Newton finish and Pegasos read rows through order-independent
        # sums and updates (duplicates are still summed): unsorted CSR rows are
        # used as they are; the penalty="l1" path sorts its own column copy
        X, classes, codes, sample_weight = check_classification_data(
            X, y, sample_weight, accept_unsorted=True)
        cost = class_weight_per_sample(self.class_weight, classes, codes, sample_weight) \
            * float(self.C)
        n_samples, n_features = X.shape
        n_problems = 1 if len(classes) == 2 else len(classes)
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        rng = check_random_state(self.random_state)
        seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=n_problems)]
        if self.penalty == "l1":
            return self._fit_l1(X, classes, codes, cost, bias, seeds)
        self.__dict__.pop("objective_", None)
        position = None
        if self.solver == "dual_cd" and sp.issparse(X) and X.nnz \
                and n_features > _REORDER_MIN_FEATURES:
            rows, position = _frequency_ordered_rows(X)
        else:
            rows = kernel_rows(X)
        warm = (self.warm_start and hasattr(self, "coef_") and hasattr(self, "classes_")
                and np.array_equal(self.classes_, classes) and self.n_features_in_ == n_features)
        prev_alpha = getattr(self, "dual_coef_", None) if warm else None
        if prev_alpha is not None and prev_alpha.shape != (n_problems, n_samples):
            prev_alpha = None
        prev_w = None
        if warm:
            prev_w = np.hstack([self.coef_, (self.intercept_ / bias if bias else
                                             np.zeros_like(self.intercept_))[:, None]])
        prev_t = getattr(self, "_pegasos_steps", None) if warm else None

        max_iter = iteration_budget(self.max_iter)
        # the diagonal of Q, shared by the one-vs-rest problems
        sq_norms = (_linear_svm.row_sq_norms(**rows, n_samples=n_samples,
                                             n_features=n_features)
                    if self.solver == "dual_cd" and n_problems > 1 else None)
        newton = self.loss == "squared_hinge" and max_iter > _NEWTON_AFTER_PASSES
        dual_passes = _NEWTON_AFTER_PASSES if newton else max_iter

        def ysign_of(p):
            return np.where(codes == (1 if n_problems == 1 else p), 1.0, -1.0)

        def finish(p, ysign, w, alpha, n_iter, violation):
            """Problem p after its dual passes: the Newton finish when the squared
            hinge has not converged; the tuple the solvers return."""
            converged = violation <= float(self.tol)
            w_dual = w
            if self.verbose and not (newton and not converged):
                print("LinearSVC dual_cd problem %d/%d: %d passes, projected-gradient "
                      "spread %.3g (tol %g), dual objective %.10g"
                      % (p + 1, n_problems, n_iter, violation, self.tol,
                         svm_dual_objective(w, alpha, cost, self.loss)))
            if newton and not converged:
                spread = violation
                # the dual stalls: finish with the primal Newton method from its w
                n_newton, n_cg, violation = _linear_svm.l2svm_newton(
                    **rows, n_samples=n_samples, n_features=n_features, ysign=ysign,
                    cost=cost, bias=bias, w=w, alpha=alpha,
                    tol=_NEWTON_RTOL_FACTOR * float(self.tol),
                    max_iter=max_iter - n_iter)
                n_dual = n_iter
                n_iter += n_newton
                converged = violation <= _NEWTON_RTOL_FACTOR * float(self.tol)
                u = alpha * ysign                    # w(alpha) for the dual objective
                w_dual = np.append(np.asarray(X.T @ u).ravel(), bias * u.sum())
                if self.verbose:
                    print("LinearSVC dual_cd problem %d/%d: %d passes (%d dual, spread "
                          "%.3g > tol %g, then %d primal Newton iterations, %d CG steps, "
                          "||g|| / ||g(0)|| %.3g), dual objective %.10g"
                          % (p + 1, n_problems, n_iter, n_dual, spread, self.tol,
                             n_newton, n_cg, violation,
                             svm_dual_objective(w_dual, alpha, cost, self.loss)))
            return w, alpha, n_iter, violation, 0.0, converged, w_dual

        def solve(p):
            ysign = ysign_of(p)
            if self.solver == "dual_cd":
                alpha = (prev_alpha[p].copy() if prev_alpha is not None
                         else np.zeros(n_samples))
                w = np.zeros(n_features + 1)
                n_iter, violation = _linear_svm.dual_cd_svc(
                    **rows, n_samples=n_samples, n_features=n_features, ysign=ysign,
                    cost=cost, loss=_LOSSES[self.loss], bias=bias, w=w, alpha=alpha,
                    tol=float(self.tol), max_iter=dual_passes,
                    shrinking=bool(self.shrinking), seed=seeds[p], sq_norms=sq_norms,
                    relax=_RELAX[self.loss], subspace_every=_SUBSPACE_EVERY[self.loss])
                return finish(p, ysign, w, alpha, n_iter, violation)
            w = prev_w[p].copy() if prev_w is not None else np.zeros(n_features + 1)
            t0 = float(prev_t[p]) if prev_t is not None else 0.0
            lam = 1.0 / (float(self.C) * n_samples)
            t = _linear_svm.pegasos_svc(
                **rows, n_samples=n_samples, n_features=n_features, ysign=ysign,
                cost=cost / float(self.C), lam=lam, loss=_LOSSES[self.loss], bias=bias, w=w,
                t_start=t0, n_epochs=iteration_budget(self.max_iter),
                project=bool(self.pegasos_projection),
                radius2=2.0 * float(np.mean(cost)) / float(self.C) / lam, seed=seeds[p])
            if self.verbose:
                print("LinearSVC pegasos problem %d/%d: %d epochs, %d steps"
                      % (p + 1, n_problems, iteration_budget(self.max_iter), int(t)))
            return w, None, iteration_budget(self.max_iter), 0.0, t, True, None

        def solve_group(group):
            """The one-vs-rest problems of ``group`` by one fused dual CD."""
            alpha = (np.ascontiguousarray(prev_alpha[group].T) if prev_alpha is not None
                     else np.zeros((n_samples, len(group))))
            W = np.zeros((n_features + 1, len(group)))
            n_iter, violation = _linear_svm.ovr_dual_cd_svc(
                **rows, n_samples=n_samples, n_features=n_features, codes=codes32,
                positive=group.astype(np.int32), cost=cost, loss=_LOSSES[self.loss],
                bias=bias, W=W, alpha=alpha, tol=float(self.tol), max_iter=dual_passes,
                shrinking=bool(self.shrinking), seed=seeds[0], sq_norms=sq_norms,
                handover=_FUSED_HANDOVER, relax=_RELAX[self.loss])
            return W, alpha, n_iter, violation

        # the squared hinge only: the hinge's long runs on small active sets are
        # faster one class at a time (quiet, CPU s, 20NG 3000 docs: fused 5.34 vs
        # per class 2.41; all 11,314 docs 8.59 vs 8.85), the squared hinge's are
        # not (all docs 2.04 vs 2.41; 3000 docs 0.47 vs 0.47)
        fused = (self.solver == "dual_cd" and n_problems > 1 and _FUSED_OVR
                 and self.loss == "squared_hinge")
        if fused:
            # one fused pass over the rows per group of classes (a group per
            # thread); every group draws the same row order from seeds[0], so
            # problem p's solution does not depend on the grouping
            codes32 = codes.astype(np.int32)
            n_groups = max(resolve_n_jobs(self.n_jobs, n_problems),
                           -(-n_problems // _FUSED_MAX_CLASSES))
            groups = np.array_split(np.arange(n_problems), n_groups)
            # one problem per row (the Newton finish works in place on them)
            W_all = np.empty((n_problems, n_features + 1))
            alpha_all = np.empty((n_problems, n_samples))
            tasks = []
            for group, (W, alpha, n_iter, violation) in zip(
                    groups, map_threads(solve_group, groups, self.n_jobs)):
                W_all[group] = W.T
                alpha_all[group] = alpha.T
                tasks.extend((int(p), int(n_iter[c]), float(violation[c]))
                             for c, p in enumerate(group))
            results = map_threads(
                lambda t: finish(t[0], ysign_of(t[0]), W_all[t[0]], alpha_all[t[0]], t[1], t[2]),
                tasks, self.n_jobs)
        else:
            results = map_threads(solve, range(n_problems), self.n_jobs)
        W = W_all if fused else np.vstack([r[0] for r in results])
        self.classes_ = classes
        self.n_features_in_ = n_features
        # renumbered columns (see _frequency_ordered_rows): back to the input's order
        # (np.take: 3.4 ms where W[:, position] takes 17.5 ms, 20 x 68,466)
        self.coef_ = np.ascontiguousarray(np.take(W, position, axis=1) if position is not None
                                          else W[:, :-1])
        self.intercept_ = W[:, -1] * bias
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)
        self.n_iter_ = int(max(r[2] for r in results))
        if self.solver == "dual_cd":
            self.dual_coef_ = alpha_all if fused else np.vstack([r[1] for r in results])
            self.dual_objective_ = np.array([svm_dual_objective(r[6], r[1], cost, self.loss)
                                             for r in results])
            check_finite_fit(self, dual_coef_=self.dual_coef_,
                             dual_objective_=self.dual_objective_)
            if not all(r[5] for r in results):
                worst = max(r[3] for r in results if not r[5])
                warnings.warn("LinearSVC: dual coordinate descent (and the primal Newton "
                              "finish of the squared hinge) reached max_iter=%d with "
                              "projected-gradient spread (relative gradient norm) %.3g > "
                              "tol=%g; increase max_iter or scale the data"
                              % (self.max_iter, worst, self.tol), ConvergenceWarning)
        else:
            self._pegasos_steps = np.array([r[4] for r in results])
            self.__dict__.pop("dual_coef_", None)
            self.__dict__.pop("dual_objective_", None)
        return self

    def _fit_l1(self, X, classes, codes, cost, bias, seeds):
        """One-vs-rest L1-regularised squared-hinge problems (``penalty="l1"``)."""
        n_samples, n_features = X.shape
        n_problems = len(seeds)
        columns, n_columns = _feature_columns(X, bias)
        warm = (self.warm_start and hasattr(self, "coef_") and hasattr(self, "classes_")
                and np.array_equal(self.classes_, classes) and self.n_features_in_ == n_features
                and self.coef_.shape[0] == n_problems)

        def solve(p):
            if n_problems == 1:
                ysign = np.where(codes == 1, 1.0, -1.0)
            else:
                ysign = np.where(codes == p, 1.0, -1.0)
            # the labels folded into the columns: z_ij = s_i x_ij
            if columns["is_sparse"]:
                signed = dict(columns, data=columns["data"] * ysign[columns["indices"]])
            else:
                signed = dict(columns, data=(columns["data"].reshape(n_columns, n_samples)
                                             * ysign).reshape(-1))
            w = np.zeros(n_columns)
            if warm:
                w[:n_features] = self.coef_[p]
                if bias:
                    w[n_features] = self.intercept_[p] / bias
            n_iter, gnorm, gnorm0, objective = _coordinate_descent.l1r_l2_svc(
                **signed, n_features=n_columns, n_samples=n_samples, cost=cost,
                w=w, tol=float(self.tol), max_iter=iteration_budget(self.max_iter),
                shrinking=bool(self.shrinking), seed=seeds[p])
            if self.verbose:
                print("LinearSVC l1 problem %d/%d: %d passes, subgradient sum %.3g (first "
                      "pass %.3g, tol %g), objective %.10g, %d non-zero weights"
                      % (p + 1, n_problems, n_iter, gnorm, gnorm0, self.tol, objective,
                         int(np.count_nonzero(w[:n_features]))))
            return w, n_iter, gnorm, gnorm0, objective

        results = map_threads(solve, range(n_problems), self.n_jobs)
        W = np.vstack([r[0] for r in results])
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.coef_ = np.ascontiguousarray(W[:, :n_features])
        self.intercept_ = W[:, n_features] * bias if bias else np.zeros(n_problems)
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)
        self.n_iter_ = int(max(r[1] for r in results))
        self.objective_ = np.array([r[4] for r in results])
        check_finite_fit(self, objective_=self.objective_)
        for name in ("dual_coef_", "dual_objective_", "_pegasos_steps"):
            self.__dict__.pop(name, None)
        if self.n_iter_ >= iteration_budget(self.max_iter):
            worst = max(r[2] / r[3] if r[3] > 0 else 0.0 for r in results)
            warnings.warn("LinearSVC(penalty='l1'): coordinate descent reached max_iter=%d "
                          "with relative subgradient sum %.3g > tol=%g; increase max_iter "
                          "or scale the data" % (self.max_iter, worst, self.tol),
                          ConvergenceWarning)
        return self

    def _fit_crammer_singer(self, X, y, sample_weight):
        from .multiclass import CrammerSingerSVC
        joint = CrammerSingerSVC(
            C=self.C, tol=self.tol, max_iter=iteration_budget(self.max_iter),
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling, class_weight=self.class_weight,
            random_state=self.random_state)
        joint.fit(X, y, sample_weight=sample_weight)
        for name in ("classes_", "n_features_in_", "coef_", "intercept_", "n_iter_"):
            setattr(self, name, getattr(joint, name))
        # the joint dual (one row per sample) has another shape than the
        # one-vs-rest duals this class documents: not kept
        for name in ("dual_coef_", "dual_objective_"):
            self.__dict__.pop(name, None)
        return self
