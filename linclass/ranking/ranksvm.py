"""Ranking SVM: a linear scoring function learned from pairwise preferences.

:class:`RankSVM` fits ``f(x) = w . x`` so that, inside each query, documents of
a higher relevance grade score higher:

    min_w  1/2 ||w||^2 + C * sum_q sum_{i, j in q, y_i > y_j} p_ij * loss(1 - w . (x_i - x_j))

with ``loss(r) = max(0, r)**2`` (``loss='squared_hinge'``, the L2-SVM) or
``max(0, r)`` (``loss='hinge'``) and pair weights ``p_ij = (s_i + s_j) / 2``
from the sample weights ``s`` (a constant weight inside a query is a query
weight).  Two solvers:

``'newton'``
    truncated Newton in the primal (Chapelle & Keerthi 2010, "PRSVM"): the
    loss, its gradient and Hessian-vector products over all pairs of a query
    are computed in O(n log n) by sorting the scores
    (:mod:`linclass._core._ranking`), never forming the O(n^2) pair list.
    Squared hinge only.
``'pairs'``
    dual coordinate descent over the explicit list of pairs (Hsieh et al.
    2008 applied to pair differences), for small data, the hinge loss, and
    :meth:`RankSVM.fit_pairs` (preferences from click logs, see
    :func:`click_pairs`).

References
----------
.. [Herbrich2000] R. Herbrich, T. Graepel, K. Obermayer, "Large margin rank
   boundaries for ordinal regression", Advances in Large Margin Classifiers, 2000.
.. [Joachims2002] T. Joachims, "Optimizing search engines using clickthrough
   data", KDD 2002.
.. [Joachims2006] T. Joachims, "Training linear SVMs in linear time", KDD 2006.
.. [Chapelle2010] O. Chapelle, S. S. Keerthi, "Efficient algorithms for ranking
   with SVMs", Information Retrieval 13(3), 2010.
.. [Hsieh2008] C.-J. Hsieh et al., "A dual coordinate descent method for
   large-scale linear SVM", ICML 2008.
.. [Joachims2017] T. Joachims, A. Swaminathan, T. Schnabel, "Unbiased
   learning-to-rank with biased feedback", WSDM 2017.
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from .._validation import (check_array, check_target, check_sample_weight, check_positive,
                           check_n_features, check_is_fitted, draw_seed, check_random_state,
                           single_threaded_blas, check_finite_fit)
from ..base import BaseEstimator
from ..exceptions import ConvergenceWarning

__all__ = ["RankSVM", "click_pairs", "ranksvm_objective", "group_by_query"]

_LOSSES = ("squared_hinge", "hinge")
_SOLVERS = ("auto", "newton", "pairs")


# ---------------------------------------------------------------------------
# query groups
# ---------------------------------------------------------------------------

class QueryLayout:
    """Documents reordered so that each query is contiguous (internal).

    Attributes: ``order`` (row permutation), ``query_ptr`` (int64 bounds of
    each kept query), ``grade_rank`` (int32 dense rank of the grade inside
    the query), ``query_ids``, ``n_skipped`` (queries with one document or a
    single grade), ``max_query_size``, ``max_grades``, ``n_pairs``.
    """

    def __init__(self, order, query_ptr, grade_rank, query_ids, n_skipped, n_pairs):
        self.order = order
        self.query_ptr = query_ptr
        self.grade_rank = grade_rank
        self.query_ids = query_ids
        self.n_skipped = n_skipped
        self.n_pairs = n_pairs
        sizes = np.diff(query_ptr)
        self.max_query_size = int(sizes.max()) if sizes.size else 1
        self.max_grades = int(grade_rank.max()) + 1 if grade_rank.size else 1


def _check_qid(qid, n_samples):
    """Query ids: 1-D, one per sample, no NaN/None (ints, floats or strings)."""
    if qid is None:
        return np.zeros(n_samples, dtype=np.int64)
    qid = np.asarray(qid)
    if qid.ndim == 2 and qid.shape[1] == 1:
        qid = qid.ravel()
    if qid.ndim != 1:
        raise ValueError("qid must be 1-D with one query id per sample, got shape %r"
                         % (qid.shape,))
    if qid.shape[0] != n_samples:
        raise ValueError("qid has %d entries but X has %d samples" % (qid.shape[0], n_samples))
    if qid.dtype.kind == "f" and not np.isfinite(qid).all():
        raise ValueError("qid contains NaN or infinity (first at %d); every document "
                         "needs a query id" % np.flatnonzero(~np.isfinite(qid))[0])
    if qid.dtype.kind == "c":
        raise ValueError("qid holds complex numbers; query ids must be real numbers or "
                         "strings")
    if qid.dtype == object and any(v is None for v in qid):
        raise ValueError("qid contains None; every document needs a query id")
    return qid


def _check_grades(y, n_samples):
    y = check_target(y, n_samples, name="y")
    try:
        grades = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("y must hold numeric relevance grades (got dtype %s)" % y.dtype)
    if not np.isfinite(grades).all():
        raise ValueError("y contains NaN or infinity; relevance grades must be finite")
    return grades


def group_by_query(y, qid):
    """Group documents by query id and rank the grades inside each query.

    Documents of one query need not be consecutive: rows are grouped by a
    stable sort on ``qid`` (so non-contiguous query groups are grouped
    correctly, never split into two queries).  Queries with one document or
    a single grade have no pair; they are dropped and counted.

    Parameters
    ----------
    y : ndarray of float64, shape (n_samples,)
    qid : ndarray, shape (n_samples,)

    Returns
    -------
    QueryLayout
    """
    _, codes = np.unique(qid, return_inverse=True)
    codes = codes.ravel()
    order = np.lexsort((y, codes))                 # by query, then grade
    c, g = codes[order], y[order]
    n = order.shape[0]
    new_query = np.r_[True, c[1:] != c[:-1]] if n else np.zeros(0, bool)
    new_grade = new_query | (np.r_[True, g[1:] != g[:-1]] if n else np.zeros(0, bool))
    starts = np.flatnonzero(new_query)
    sizes = np.diff(np.r_[starts, n])
    cum = np.cumsum(new_grade) - 1
    query_of_row = np.cumsum(new_query) - 1
    rank = cum - cum[starts][query_of_row]
    n_grades = rank[np.r_[starts[1:], n] - 1] + 1 if n else np.zeros(0, int)
    # pairs with different grades: (n^2 - sum_g n_g^2) / 2 per query
    grade_counts = np.diff(np.r_[np.flatnonzero(new_grade), n])
    grade_query = query_of_row[np.flatnonzero(new_grade)]
    same = np.bincount(grade_query, weights=grade_counts.astype(float) ** 2,
                       minlength=len(starts))
    pairs_per_query = (sizes.astype(float) ** 2 - same) / 2
    keep = n_grades >= 2
    keep_rows = np.repeat(keep, sizes)
    kept_sizes = sizes[keep]
    return QueryLayout(order=order[keep_rows],
                       query_ptr=np.r_[0, np.cumsum(kept_sizes)].astype(np.int64),
                       grade_rank=np.ascontiguousarray(rank[keep_rows], dtype=np.int32),
                       query_ids=np.unique(qid)[keep] if n else np.zeros(0),
                       n_skipped=int((~keep).sum()),
                       n_pairs=int(round(pairs_per_query[keep].sum())))


def _explicit_pairs(y, qid):
    """All (higher, lower) index pairs of different grades inside each query."""
    layout = group_by_query(y, qid)
    hi_parts, lo_parts = [], []
    for q in range(len(layout.query_ptr) - 1):
        rows = layout.order[layout.query_ptr[q]:layout.query_ptr[q + 1]]
        grades = y[rows]
        higher = grades[:, None] > grades[None, :]
        i, j = np.nonzero(higher)
        hi_parts.append(rows[i])
        lo_parts.append(rows[j])
    if not hi_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), layout
    return np.concatenate(hi_parts), np.concatenate(lo_parts), layout


def _row_sq_dist(X, hi, lo):
    """||X[hi] - X[lo]||^2 row by row."""
    D = X[hi] - X[lo]
    if sp.issparse(D):
        return np.asarray(D.multiply(D).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", D, D)


# ---------------------------------------------------------------------------
# objective
# ---------------------------------------------------------------------------

def ranksvm_objective(coef, X, y, qid=None, *, C=1.0, loss="squared_hinge",
                      sample_weight=None):
    """Primal RankSVM objective ``1/2 ||w||^2 + C * sum_pairs p_ij loss(1 - w.(x_i - x_j))``.

    Evaluated by the O(n log n) sorting kernel; pairs and weights as in
    :class:`RankSVM`.

    Parameters
    ----------
    coef : array-like of shape (n_features,)
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Relevance grades.
    qid : array-like of shape (n_samples,), optional
        Query ids (None: one query).
    C : float
    loss : {'squared_hinge', 'hinge'}
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
    """
    from .._core._ranking import pairwise_loss_grad
    X = check_array(X)
    coef = np.ascontiguousarray(coef, dtype=np.float64).ravel()
    check_n_features(X, coef.shape[0], name="X")
    y = _check_grades(y, X.shape[0])
    qid = _check_qid(qid, X.shape[0])
    weights = check_sample_weight(sample_weight, X.shape[0])
    check_positive(C, "C")
    if loss not in _LOSSES:
        raise ValueError("loss must be one of %s, got %r" % (_LOSSES, loss))
    layout = group_by_query(y, qid)
    scores = np.ascontiguousarray(X[layout.order] @ coef)
    total, _, _ = pairwise_loss_grad(
        scores=scores, grade_rank=layout.grade_rank,
        weights=np.ascontiguousarray(weights[layout.order]), query_ptr=layout.query_ptr,
        max_grades=layout.max_grades, max_query_size=layout.max_query_size,
        squared=loss == "squared_hinge")
    return 0.5 * float(coef @ coef) + C * total


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------

class RankSVM(BaseEstimator):
    """Linear ranking SVM learned from graded relevance labels inside query groups.

    Pairs are formed inside each query between documents of different grades
    (the higher grade is preferred); documents of different queries are never
    compared.  Scores are ``decision_function(X) = X @ coef_`` (no intercept:
    it cancels in every pair).

    Parameters
    ----------
    C : float, default=1.0
        Weight of the summed pairwise losses against ``1/2 ||w||^2`` (the
        losses are summed, not averaged, over pairs -- as for scikit-learn's
        ``LinearSVC`` trained on the pair differences).
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        ``max(0, 1 - m)**2`` or ``max(0, 1 - m)`` of the pair margin ``m =
        w . (x_i - x_j)``.
    solver : {'auto', 'newton', 'pairs'}, default='auto'
        ``'newton'``: primal truncated Newton with O(n log n) sorting-based
        loss, gradient and Hessian products per query, no pair list
        (squared hinge only) [Chapelle2010]_.  ``'pairs'``: dual coordinate
        descent over the explicit pairs [Hsieh2008]_ (memory O(n_pairs);
        for small data, the hinge loss and :meth:`fit_pairs`).  ``'auto'``:
        ``'newton'`` for the squared hinge, ``'pairs'`` for the hinge.
    tol : float, optional
        Newton: stop when ``||grad|| <= tol * ||grad at w=0||`` (default
        1e-6).  Pairs: stop when the spread (max - min) of the projected dual
        gradient over an epoch is ``<= tol`` (default 1e-2; liblinear's
        criterion, in the dual's units).
    max_iter : int, optional
        Newton iterations (default 50) or epochs over the pairs (default 1000).
    random_state : int, Generator or None
        Order of the pairs in the dual solver.
    verbose : int, default=0

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_features_in_ : int
    n_iter_ : int
        Newton iterations or epochs run.
    n_queries_ : int
        Queries that contributed pairs.
    n_skipped_queries_ : int
        Queries with a single document or a single grade (no pair): skipped,
        not an error.
    n_pairs_ : int
        Preference pairs in the objective.
    objective_ : float
        Primal objective at ``coef_``.

    Notes
    -----
    Query groups come from ``qid``; documents of a query need not be
    consecutive (rows are grouped by query id, so an interleaved file is
    grouped correctly).  ``qid=None`` treats all samples as one query.
    Grades may be any finite real numbers (only their order inside a query
    matters).  ``score`` is the pairwise ranking accuracy averaged over
    queries (:func:`linclass.metrics.pairwise_ranking_accuracy`), defined for
    any grades; use :func:`linclass.metrics.ranking_report` for NDCG,
    MAP, MRR and precision@k.

    References
    ----------
    .. [Herbrich2000] Herbrich, Graepel, Obermayer, "Large margin rank
       boundaries for ordinal regression", 2000.
    .. [Joachims2006] T. Joachims, "Training linear SVMs in linear time", KDD 2006.
    .. [Chapelle2010] O. Chapelle, S. S. Keerthi, "Efficient algorithms for
       ranking with SVMs", Information Retrieval 13(3), 2010.
    .. [Hsieh2008] C.-J. Hsieh et al., "A dual coordinate descent method for
       large-scale linear SVM", ICML 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from linclass.ranking import RankSVM
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [1.0, 1.0]])
    >>> y = np.array([2, 0, 1, 1]); qid = np.array([7, 7, 7, 8])
    >>> model = RankSVM(C=1.0).fit(X, y, qid=qid)
    >>> model.n_skipped_queries_
    1
    >>> bool(model.decision_function(X)[0] > model.decision_function(X)[2] > model.decision_function(X)[1])
    True
    """

    def __init__(self, C=1.0, loss="squared_hinge", solver="auto", tol=None,
                 max_iter=None, random_state=None, verbose=0):
        self.C = C
        self.loss = loss
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    # -- parameters -----------------------------------------------------
    def _check_params(self):
        check_positive(self.C, "C")
        if self.loss not in _LOSSES:
            raise ValueError("loss must be one of %s, got %r" % (_LOSSES, self.loss))
        if self.solver not in _SOLVERS:
            raise ValueError("solver must be one of %s, got %r" % (_SOLVERS, self.solver))
        solver = self.solver
        if solver == "auto":
            solver = "newton" if self.loss == "squared_hinge" else "pairs"
        if solver == "newton" and self.loss != "squared_hinge":
            raise ValueError("solver='newton' needs loss='squared_hinge' (the Newton "
                             "method needs a differentiable loss); use solver='pairs' "
                             "for the hinge")
        if self.max_iter is None:
            max_iter = 50 if solver == "newton" else 1000
        else:
            max_iter = check_positive(self.max_iter, "max_iter", integer=True)
        check_random_state(self.random_state)        # raises on anything else
        return solver, max_iter

    def _tol(self, solver):
        if self.tol is None:
            return 1e-6 if solver == "newton" else 1e-2
        return float(check_positive(self.tol, "tol"))

    # -- fitting ----------------------------------------------------------
    def fit(self, X, y, qid=None, sample_weight=None):
        """Fit on graded relevance labels grouped by query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance grades (any finite numbers; higher is better).
        qid : array-like of shape (n_samples,), optional
            Query id of each sample; need not be sorted or contiguous.
            None: all samples are one query.
        sample_weight : array-like of shape (n_samples,), optional
            Pair (i, j) weighs ``(sample_weight[i] + sample_weight[j]) / 2``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On NaN/infinite features, grades or query ids, mismatched
            lengths, invalid parameters, or when no query has two documents of
            different grades.
        """
        solver, max_iter = self._check_params()
        self._tol(solver)
        X = check_array(X)
        y = _check_grades(y, X.shape[0])
        qid = _check_qid(qid, X.shape[0])
        weights = check_sample_weight(sample_weight, X.shape[0])
        layout = group_by_query(y, qid)
        self.n_features_in_ = X.shape[1]
        self.n_skipped_queries_ = layout.n_skipped
        self.n_queries_ = len(layout.query_ptr) - 1
        if self.n_queries_ == 0:
            raise ValueError("no query has two documents with different grades "
                             "(%d queries skipped, n_samples = %d); there is no preference "
                             "to learn" % (layout.n_skipped, X.shape[0]))
        # every document of a kept query has a pair, which weighs > 0 when the
        # document does: no positive weight there would train a null model
        if not (weights[layout.order] > 0).any():
            raise ValueError("RankSVM: every document that takes part in a preference pair "
                             "has sample_weight 0; there is no preference to learn")
        # numpy's threaded BLAS in the dense products would fight the caller's threads
        with single_threaded_blas():
            if solver == "newton":
                coef, n_iter, converged, objective = self._fit_newton(X, weights, layout,
                                                                      max_iter)
                self.n_pairs_ = layout.n_pairs
            else:
                hi, lo, _ = _explicit_pairs(y, qid)
                pair_weight = 0.5 * (weights[hi] + weights[lo])
                coef, n_iter, converged = self._fit_dual_pairs(X, hi, lo, pair_weight,
                                                               max_iter)
                self.n_pairs_ = int(hi.shape[0])
                objective = None
        check_finite_fit(self, coef_=coef)
        self.coef_ = coef
        self.n_iter_ = int(n_iter)
        self.objective_ = (objective if objective is not None else
                           ranksvm_objective(coef, X, y, qid, C=self.C, loss=self.loss,
                                             sample_weight=weights))
        if not converged:
            warnings.warn("RankSVM (solver=%r) stopped at max_iter=%d before reaching "
                          "tol=%g; increase max_iter" % (solver, max_iter, self._tol(solver)),
                          ConvergenceWarning)
        return self

    def fit_pairs(self, X, pairs, pair_weight=None):
        """Fit on explicit preferences ``X[pairs[k, 0]]`` over ``X[pairs[k, 1]]``.

        Uses the dual coordinate solver (``solver`` is ignored).  Use it with
        :func:`click_pairs`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        pairs : array-like of int, shape (n_pairs, 2)
            Row indices (preferred, less preferred); the two must differ.
        pair_weight : array-like of shape (n_pairs,), optional
            Non-negative weight of each preference (default 1).

        Returns
        -------
        self
        """
        _, max_iter = self._check_params()
        tol = self._tol("pairs")
        if self.max_iter is None:
            max_iter = 1000
        X = check_array(X)
        pairs = np.asarray(pairs)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError("pairs must have shape (n_pairs, 2), got %r" % (pairs.shape,))
        if pairs.shape[0] == 0:
            raise ValueError("pairs is empty; there is no preference to learn")
        if pairs.dtype.kind not in "iu":
            raise ValueError("pairs must hold integer row indices, got dtype %s" % pairs.dtype)
        if pairs.min() < 0 or pairs.max() >= X.shape[0]:
            raise ValueError("pairs holds row indices outside [0, %d)" % X.shape[0])
        if (pairs[:, 0] == pairs[:, 1]).any():
            raise ValueError("pair %d compares a row with itself"
                             % np.flatnonzero(pairs[:, 0] == pairs[:, 1])[0])
        weight = check_sample_weight(pair_weight, pairs.shape[0])
        self.n_features_in_ = X.shape[1]
        with single_threaded_blas():
            coef, n_iter, converged = self._fit_dual_pairs(
                X, pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64), weight,
                max_iter)
        check_finite_fit(self, coef_=coef)
        self.coef_ = coef
        self.n_iter_ = int(n_iter)
        self.n_pairs_ = int(pairs.shape[0])
        self.n_queries_ = 0
        self.n_skipped_queries_ = 0
        margins = X[pairs[:, 0]] @ coef - X[pairs[:, 1]] @ coef
        slack = np.maximum(0.0, 1.0 - margins)
        if self.loss == "squared_hinge":
            slack = slack ** 2
        self.objective_ = 0.5 * float(coef @ coef) + self.C * float(weight @ slack)
        if not converged:
            warnings.warn("RankSVM.fit_pairs stopped at max_iter=%d before reaching "
                          "tol=%g; increase max_iter" % (max_iter, tol),
                          ConvergenceWarning)
        return self

    def _fit_newton(self, X, weights, layout, max_iter):
        """Truncated Newton with exact line search on the squared pairwise hinge
        [Chapelle2010]_; all pair sums by the sorting kernel."""
        from .._core._ranking import pairwise_loss_grad, pairwise_hessian_product
        Xq = X[layout.order]
        XqT = Xq.T                          # CSC view of the CSR rows: no copy
        wq = np.ascontiguousarray(weights[layout.order])
        C = float(self.C)
        common = dict(grade_rank=layout.grade_rank, weights=wq, query_ptr=layout.query_ptr,
                      max_grades=layout.max_grades)

        def loss_grad(scores):
            return pairwise_loss_grad(scores=scores, max_query_size=layout.max_query_size,
                                      squared=True, **common)

        def hess(scores, order, z):
            return pairwise_hessian_product(scores=scores, order=order, z=z,
                                            max_query_size=layout.max_query_size, **common)

        n_features = X.shape[1]
        coef = np.zeros(n_features)
        scores = np.zeros(Xq.shape[0])
        loss, g_scores, order = loss_grad(scores)
        objective = C * loss
        grad = C * np.asarray(XqT @ g_scores).ravel() + coef
        grad0_norm = np.linalg.norm(grad)
        converged = grad0_norm == 0.0
        n_iter = 0
        while not converged and n_iter < max_iter:
            n_iter += 1
            grad_norm = np.linalg.norm(grad)
            # Newton direction by conjugate gradient on (I + C X' H X) d = -grad
            direction = self._conjugate_gradient(
                lambda v: v + C * np.asarray(XqT @ hess(scores, order,
                                                         np.ascontiguousarray(Xq @ v))).ravel(),
                -grad, tol=min(0.5, np.sqrt(grad_norm / grad0_norm)) * grad_norm,
                max_iter=max(10, min(n_features, 200)))
            z = np.ascontiguousarray(Xq @ direction)
            step, new_obj, new_loss, new_g, new_order = self._line_search(
                coef, direction, scores, z, objective, grad @ direction, C, loss_grad, hess)
            if step == 0.0:
                if n_iter == 1:
                    # no step from coef = 0 although the gradient is not zero: the
                    # Newton system overflowed (C times the pair Hessian beyond double
                    # precision); returning the zero weights would be a null model
                    raise ValueError(
                        "RankSVM: no Newton step could be taken from the zero weights with "
                        "C=%g (C times the pairwise loss curvature overflows double "
                        "precision); use a smaller C or scale the features" % C)
                break
            coef = coef + step * direction
            # recompute exactly (no drift of the scores along the steps)
            scores = np.ascontiguousarray(Xq @ coef)
            loss, g_scores, order = loss_grad(scores)
            old_objective, objective = objective, 0.5 * coef @ coef + C * loss
            grad = coef + C * np.asarray(XqT @ g_scores).ravel()
            if self.verbose:
                print("RankSVM newton iter %d: objective %.10g, |grad| %.3g, step %.3g"
                      % (n_iter, objective, np.linalg.norm(grad), step))
            if np.linalg.norm(grad) <= self._tol("newton") * grad0_norm:
                converged = True
            elif old_objective - objective <= 1e-15 * abs(objective):
                converged = True          # no further progress possible in float64
        return coef, n_iter, converged, float(objective)

    @staticmethod
    def _conjugate_gradient(matvec, rhs, tol, max_iter):
        x = np.zeros_like(rhs)
        r = rhs.copy()
        p = r.copy()
        rr = r @ r
        for _ in range(max_iter):
            if np.sqrt(rr) <= tol:
                break
            Ap = matvec(p)
            alpha = rr / (p @ Ap)
            x += alpha * p
            r -= alpha * Ap
            rr_new = r @ r
            p = r + (rr_new / rr) * p
            rr = rr_new
        return x

    @staticmethod
    def _line_search(coef, direction, scores, z, objective, slope, C, loss_grad, hess):
        """Exact minimisation of the piecewise quadratic phi(t) = f(w + t d) by
        1-D Newton steps in score space (O(n log n) each)."""
        dd = direction @ direction
        wd = coef @ direction

        def phi(t):
            s = np.ascontiguousarray(scores + t * z)
            loss, g, order = loss_grad(s)
            value = 0.5 * (coef @ coef) + t * wd + 0.5 * t * t * dd + C * loss
            return value, s, loss, g, order

        t = 1.0
        best = None
        for _ in range(30):
            value, s, loss, g, order = phi(t)
            if best is None or value < best[1]:
                best = (t, value, loss, g, order)
            d1 = wd + t * dd + C * (g @ z)
            d2 = dd + C * (z @ hess(s, order, z))
            if d2 <= 0:
                break
            t_new = max(t - d1 / d2, 0.0)
            if abs(t_new - t) <= 1e-12 * max(1.0, t):
                break
            t = t_new
        t, value, loss, g, order = best
        if value >= objective:
            # no decrease (rounding at the optimum): backtrack on Armijo
            t = 1.0
            while t > 1e-10:
                value, s, loss, g, order = phi(t)
                if value <= objective + 1e-4 * t * slope and value < objective:
                    return t, value, loss, g, order
                t *= 0.5
            return 0.0, objective, None, None, None
        return t, value, loss, g, order

    def _fit_dual_pairs(self, X, hi, lo, pair_weight, max_iter):
        from .._core._ranking import pairs_dual_cd
        keep = pair_weight > 0
        hi, lo, pair_weight = hi[keep], lo[keep], pair_weight[keep]
        C = float(self.C)
        if self.loss == "hinge":
            upper = C * pair_weight
            diag = np.zeros_like(pair_weight)
        else:
            upper = np.full_like(pair_weight, np.inf)
            diag = 1.0 / (2.0 * C * pair_weight)
        qdiag = _row_sq_dist(X, hi, lo)
        alpha = np.zeros(hi.shape[0])
        coef, n_epochs, gap = pairs_dual_cd(
            X, pair_hi=np.ascontiguousarray(hi, dtype=np.int32),
            pair_lo=np.ascontiguousarray(lo, dtype=np.int32),
            upper=np.ascontiguousarray(upper), diag=np.ascontiguousarray(diag),
            qdiag=np.ascontiguousarray(qdiag, dtype=np.float64), alpha=alpha,
            max_iter=max_iter, tol=self._tol("pairs"),
            seed=draw_seed(self.random_state))
        self.dual_coef_ = alpha
        return np.array(coef), n_epochs, gap <= self._tol("pairs")

    # -- prediction -------------------------------------------------------
    def decision_function(self, X):
        """Ranking scores ``X @ coef_`` (higher ranks first)."""
        check_is_fitted(self, "coef_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_, owner=self)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = np.asarray(X @ self.coef_).ravel()
        if not np.isfinite(scores).all():
            raise ValueError("RankSVM: the scores on this X are not finite (NaN or infinity): "
                             "X holds values too large for double precision; scale the "
                             "features as they were scaled for fit")
        return scores

    def predict(self, X):
        """Same as :meth:`decision_function`: a ranking model predicts scores;
        sort each query's documents by decreasing score."""
        return self.decision_function(X)

    def score(self, X, y, qid=None):
        """Pairwise ranking accuracy averaged over queries (ties count one half).

        Parameters
        ----------
        X : {array-like, sparse matrix}
        y : array-like of relevance grades
        qid : array-like, optional (None: one query)

        Returns
        -------
        float
        """
        from ..metrics.ranking import pairwise_ranking_accuracy
        scores = self.decision_function(X)
        y = _check_grades(y, scores.shape[0])
        qid = None if qid is None else _check_qid(qid, scores.shape[0])
        return pairwise_ranking_accuracy(y, scores, groups=qid)


# ---------------------------------------------------------------------------
# preferences from click logs
# ---------------------------------------------------------------------------

def click_pairs(shown, clicks, *, position_bias=None):
    """Preference pairs from click logs by the skip-above rule [Joachims2002]_.

    For each impression (one query's displayed list), a clicked document at
    rank ``c`` is preferred to every *unclicked* document shown above it
    (ranks ``0..c-1``).  Unclicked documents below the last click and clicked
    documents above give no preference.

    Parameters
    ----------
    shown : sequence of sequences of int
        For each impression, the displayed documents (e.g. row indices of the
        feature matrix) from rank 0 (top) down.
    clicks : sequence of sequences of int
        For each impression, the clicked ranks (0-based positions in the
        corresponding ``shown`` list; any order; no repeats).
    position_bias : None, float or array-like, optional
        Inverse-propensity weighting of each pair by its clicked rank
        [Joachims2017]_.  None: every pair weighs 1.  A float ``eta >= 0``:
        examination probability ``(1 / (rank + 1)) ** eta`` (weight
        ``(rank + 1) ** eta``).  An array: examination probability of each
        rank (positive, at least as long as the longest list); the weight is
        its inverse.

    Returns
    -------
    pairs : ndarray of int64, shape (n_pairs, 2)
        (preferred document, less preferred document), impression by
        impression, clicks by increasing rank, skipped documents top down.
    weights : ndarray of float64, shape (n_pairs,)
    impression : ndarray of int64, shape (n_pairs,)
        Index of the impression each pair comes from.

    Examples
    --------
    >>> pairs, weights, _ = click_pairs([[10, 11, 12, 13]], [[2]])
    >>> pairs.tolist()
    [[12, 10], [12, 11]]
    """
    if isinstance(shown, (str, bytes)) or isinstance(clicks, (str, bytes)):
        raise ValueError("shown and clicks must be sequences of sequences of int")
    shown = list(shown)
    clicks = list(clicks)
    if len(shown) != len(clicks):
        raise ValueError("shown has %d impressions but clicks has %d"
                         % (len(shown), len(clicks)))
    lists, clicked = [], []
    for k, (docs, ranks) in enumerate(zip(shown, clicks)):
        docs = np.asarray(docs)
        ranks = np.asarray(ranks)
        if docs.ndim != 1 or (docs.size and docs.dtype.kind not in "iu"):
            raise ValueError("shown[%d] must be a 1-D sequence of integer document ids" % k)
        if ranks.ndim != 1 or (ranks.size and ranks.dtype.kind not in "iu"):
            raise ValueError("clicks[%d] must be a 1-D sequence of integer ranks" % k)
        if ranks.size and (ranks.min() < 0 or ranks.max() >= docs.size):
            raise ValueError("clicks[%d] holds rank %d outside the %d shown documents"
                             % (k, ranks.min() if ranks.min() < 0 else ranks.max(),
                                docs.size))
        if np.unique(ranks).size != ranks.size:
            raise ValueError("clicks[%d] repeats a rank" % k)
        lists.append(docs.astype(np.int64))
        clicked.append(np.sort(ranks).astype(np.int64))
    max_len = max((d.size for d in lists), default=0)
    if position_bias is None:
        weight_of_rank = np.ones(max_len)
    elif isinstance(position_bias, numbers.Real) and not isinstance(position_bias, bool):
        if not np.isfinite(position_bias) or position_bias < 0:
            raise ValueError("position_bias as a number is the exponent eta >= 0, got %r"
                             % (position_bias,))
        weight_of_rank = np.arange(1, max_len + 1, dtype=float) ** float(position_bias)
    else:
        propensity = np.asarray(position_bias, dtype=np.float64)
        if propensity.ndim != 1 or propensity.size < max_len:
            raise ValueError("position_bias as an array needs one examination probability "
                             "per rank (at least %d), got shape %r"
                             % (max_len, propensity.shape))
        if not np.isfinite(propensity).all() or (propensity <= 0).any():
            raise ValueError("position_bias probabilities must be finite and > 0")
        weight_of_rank = 1.0 / propensity[:max_len]
    preferred, other, weights, impression = [], [], [], []
    for k, (docs, ranks) in enumerate(zip(lists, clicked)):
        is_clicked = np.zeros(docs.size, dtype=bool)
        is_clicked[ranks] = True
        for c in ranks:
            skipped = np.flatnonzero(~is_clicked[:c])
            preferred.append(np.full(skipped.size, docs[c]))
            other.append(docs[skipped])
            weights.append(np.full(skipped.size, weight_of_rank[c]))
            impression.append(np.full(skipped.size, k))
    if not preferred:
        return (np.zeros((0, 2), np.int64), np.zeros(0), np.zeros(0, np.int64))
    pairs = np.column_stack([np.concatenate(preferred), np.concatenate(other)])
    return (pairs.astype(np.int64), np.concatenate(weights).astype(np.float64),
            np.concatenate(impression).astype(np.int64))
