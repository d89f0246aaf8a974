"""Logistic regression: binary and multinomial (softmax), MAP estimate under a
Gaussian (L2) or Laplace (L1) prior.

The objective minimised is the negative log posterior

    sum_i s_i c_{y_i} * loss_i(w)  +  penalty(w)

with ``loss_i`` the logistic (binary) or softmax cross-entropy (multinomial)
loss, ``s_i`` the sample weights and ``c_y`` the class weights, and

* L2 (Gaussian prior ``N(0, Sigma)``, ``Sigma = diag(C)``):
  ``penalty = 0.5 * sum_j w_j**2 / C_j``;
* L1 (Laplace prior): ``penalty = sum_j |w_j| / C_j``.

``C`` is a scalar (``Sigma = C * I``) or one prior variance per feature.  With a
scalar ``C`` the optimum is the one of scikit-learn's and LIBLINEAR's
``C * sum loss + 0.5 ||w||^2``.  The intercept is not penalised unless
``penalize_intercept=True`` (then it gets the scalar variance ``C``, as
LIBLINEAR's ``-B 1`` does).

Loss and gradient are computed by :mod:`linclass._core._logistic` in one pass
over the rows (dense or CSR); a multinomial model on CSR rows with a diagonal
prior takes two phases instead (the residuals of every row, then the gradient
row of each feature over ``X`` transposed, with the prior, the scaling and
``max |g|`` in the same pass: no scattered writes into a gradient larger than
the caches, and threads share no output).  Solvers:

* ``"lbfgs"`` -- L-BFGS on the objective divided by ``sum(s_i)``: with the L2
  penalty (or none) linclass's own unconstrained L-BFGS
  (:mod:`linclass.linear._lbfgs`: the two-loop recursion in Cython, fused
  passes over float32 curvature pairs, Armijo backtracking; 20 pairs below
  8,192 parameters, 10 above), whose iteration
  costs a fraction of scipy's L-BFGS-B driver on the million parameters of a
  softmax model over a text vocabulary; L1 by the variable splitting
  ``w = u - v``, ``u, v >= 0`` (bound-constrained, smooth) with scipy's
  L-BFGS-B, which handles the bounds natively;
* ``"newton"`` -- Newton's method with the exact Hessian ``X.T D X`` (formed by
  :func:`linclass._core._logistic.binary_hessian` over the pairs of stored
  entries of each row), Cholesky steps and Armijo backtracking: binary problems
  with few features (a9a at tol=1e-6: 7 iterations where L-BFGS needs 249);
  ``solver="auto"`` (the default) picks it by shape and sparsity, see
  :func:`logistic_solver`;
* ``"tron"`` -- the trust-region Newton method of Lin, Weng & Keerthi (2008),
  with Steihaug's truncated conjugate gradient on Hessian-vector products
  ``X.T @ (D * (X @ v))``, preconditioned by the Hessian's diagonal (Hsia,
  Chiang & Lin 2018) (binary problems with the L2 penalty only).

References
----------
Lin, C.-J., Weng, R. C. & Keerthi, S. S. (2008). Trust region Newton method for
large-scale logistic regression. JMLR 9, 627-650.
Hsia, C.-Y., Chiang, W.-L. & Lin, C.-J. (2018). Preconditioned conjugate
gradient methods in truncated Newton frameworks for large-scale linear
classification. ACML.
Byrd, R. H., Lu, P., Nocedal, J. & Zhu, C. (1995). A limited memory algorithm for
bound constrained optimization. SIAM J. Sci. Comput. 16(5).
Andrew, G. & Gao, J. (2007). Scalable training of L1-regularized log-linear models.
ICML (the L1 objective; solved here by variable splitting instead of OWL-QN).
"""
import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import OptimizeResult, minimize
from scipy.special import expit

from .._core import _checks, _logistic
from ._lbfgs import lbfgs_minimize
from ._common import (rows_args, single_threaded_blas, CheckedScoreMixin, log_softmax,
                      lbfgs_progress, resolve_n_jobs)
from .._validation import check_finite_fit, check_max_iter, iteration_budget
from .._validation import as_float_param, check_classification_target, class_weight_vector
from .._validation import check_finite_output
from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_sample_weight)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["LogisticRegression", "logistic_data_term", "logistic_solver"]


class _Objective:
    """Loss + prior of one problem, as a function of the flat parameter vector."""

    def __init__(self, X, y, sample_weight, n_classes, fit_intercept, inv_var, scale):
        self.rows = rows_args(X)
        self.binary = n_classes == 2
        # indicator features (a9a): the binary passes read a row's indices alone
        self.unit_x = self.binary and _checks.csr_unit_values(self.rows["data"],
                                                               not self.rows["dense"])
        self.n_classes = n_classes
        self.fit_intercept = fit_intercept
        self.sample_weight = sample_weight
        self.inv_var = inv_var           # 1 / prior variance per parameter (0: not penalised)
        self.precision = None            # full prior precision Sigma^-1 of the weights, or None
        self.scale = scale               # objective is divided by this (sum of weights)
        if self.binary:
            self.y = np.where(y == 1, 1.0, -1.0)
        else:
            self.y = np.ascontiguousarray(y, dtype=np.int32)
        self.D = None
        self.n_evals = 0
        self.X = X
        self._columns = None             # state of the two-phase multinomial pass

    def loss_grad(self, theta):
        """Data term and its gradient (unscaled)."""
        self.n_evals += 1
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if self.binary:
            loss, grad, self.D = _logistic.binary_loss_grad(
                y=self.y, sample_weight=self.sample_weight, params=theta,
                fit_intercept=self.fit_intercept, unit_x=self.unit_x, **self.rows)
        else:
            loss, grad = _logistic.multinomial_loss_grad(
                y=self.y, sample_weight=self.sample_weight, params=theta,
                n_classes=self.n_classes, fit_intercept=self.fit_intercept, **self.rows)
        return loss, grad

    def prior_times(self, theta):
        """Gradient of the Gaussian prior term: ``diag(inv_var) theta``, or with a full
        covariance ``Sigma^-1 W`` for the weight rows of ``theta`` as
        (n_features + fit_intercept, n_out) (the intercept is not penalised then)."""
        if self.precision is None:
            return self.inv_var * theta
        n_features = self.precision.shape[0]
        T = theta.reshape(-1, 1 if self.binary else self.n_classes)
        out = np.zeros_like(T)
        out[:n_features] = self.precision @ T[:n_features]
        return out.ravel()

    def l2(self, theta):
        if self._column_state() is not None:
            return self._l2_columns(theta, None, [(0, self.rows["n_rows"])], None)
        return self._l2_plain(theta)

    def l2_into(self, theta, out):
        """:meth:`l2` with the gradient written into ``out`` (float64, C-contiguous, of
        theta's length) when the pass allows it (the two-phase pass: no fresh pages
        for a gradient larger than the caches every evaluation), else a new array."""
        if self._column_state() is not None:
            if out.shape != theta.shape or out.dtype != np.float64 \
                    or not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("l2_into: out must be a writeable float64 C-contiguous "
                                 "array shaped like theta")
            return self._l2_columns(theta, getattr(self, "threads", None),
                                    getattr(self, "row_blocks", None)
                                    or [(0, self.rows["n_rows"])],
                                    len(getattr(self, "parts", ())) or None, out=out)
        return self.l2(theta)

    def _l2_plain(self, theta):
        loss, grad = self.loss_grad(theta)
        pen = self.prior_times(theta)
        return (loss + 0.5 * theta @ pen) / self.scale, (grad + pen) / self.scale

    # -- multinomial, CSR rows, diagonal prior: the two-phase pass of
    # _core._logistic (residuals over row blocks, then the gradient over blocks of
    # feature columns of X transposed, prior and scaling included)
    def _column_state(self):
        if getattr(self, "_columns", None) is None:
            self._columns = False
            X = getattr(self, "X", None)
            if (self.binary or self.precision is not None or self.inv_var is None
                    or X is None or not sp.issparse(X) or X.shape[0] < 1 or X.shape[1] < 1):
                return None
            K = self.n_classes
            inv_var = self.inv_var.reshape(-1, K)
            if not np.all(inv_var == inv_var[:, :1]):
                return None
            XT = X.T.tocsr()             # CSR of X.T: the rows of each feature
            data = np.ascontiguousarray(XT.data, dtype=np.float64)
            indices = np.ascontiguousarray(XT.indices, dtype=np.int32)
            indptr = np.ascontiguousarray(XT.indptr, dtype=np.int32)
            if data.shape[0] == 0:
                data, indices = np.zeros(1), np.zeros(1, dtype=np.int32)
            elif int(indices.max()) >= X.shape[0] or int(indices.min()) < 0:
                raise ValueError("X has column indices out of range")
            self._columns = dict(
                t_data=data, t_indices=indices, t_indptr=indptr,
                row_inv_var=np.ascontiguousarray(inv_var[:, 0]),
                R=np.empty((X.shape[0], K)), row_loss=np.empty(X.shape[0]),
                row_quad=np.empty(inv_var.shape[0]),
                col_nnz=np.diff(indptr), max_abs=None)
        return self._columns or None

    def _column_blocks(self, n_blocks):
        """Parameter-row ranges of about equal work (stored entries + one per row)."""
        state = self._columns
        key = ("col_blocks", n_blocks)
        if key not in state:
            work = np.concatenate([state["col_nnz"], [self.rows["n_rows"]] if self.fit_intercept
                                   else []]) + 4.0
            cuts = np.searchsorted(np.cumsum(work), np.linspace(0, work.sum(), n_blocks + 1))
            cuts = np.clip(cuts, 0, len(work))
            cuts[0], cuts[-1] = 0, len(work)
            cuts = np.maximum.accumulate(cuts)
            state[key] = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        return state[key]

    def _l2_columns(self, theta, threads, row_blocks, n_col_blocks, out=None):
        state = self._columns
        self.n_evals += 1
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        K, R, row_loss = self.n_classes, state["R"], state["row_loss"]

        def residuals(block):
            _logistic.multinomial_residuals(
                y=self.y, sample_weight=self.sample_weight, params=theta, n_classes=K,
                fit_intercept=self.fit_intercept, R=R, row_loss=row_loss, lo=block[0],
                hi=block[1], **self.rows)

        grad = np.empty(theta.shape[0]) if out is None else out

        def columns(block):
            return _logistic.multinomial_gradient_columns(
                t_data=state["t_data"], t_indices=state["t_indices"],
                t_indptr=state["t_indptr"], n_rows=self.rows["n_rows"],
                n_cols=self.rows["n_cols"], R=R, params=theta,
                row_inv_var=state["row_inv_var"], scale=float(self.scale), n_classes=K,
                fit_intercept=self.fit_intercept, grad=grad, lo=block[0], hi=block[1],
                row_quad=state["row_quad"])

        if threads is None:
            residuals(row_blocks[0])
            parts = [columns(self._column_blocks(1)[0])]
        else:
            threads.map(residuals, row_blocks)
            parts = threads.map(columns, self._column_blocks(n_col_blocks))
        loss = float(np.sum(row_loss))   # the same sums whatever the row / column blocks
        penalty = float(np.sum(state["row_quad"]))
        state["max_abs"] = (grad, max(m for _, m in parts))
        return (loss + 0.5 * penalty) / self.scale, grad

    def grad_max_abs(self, g):
        """``max |g|``, free when ``g`` is the last gradient of the two-phase pass."""
        state = getattr(self, "_columns", None)
        if state and state["max_abs"] is not None and state["max_abs"][0] is g:
            return state["max_abs"][1]
        return float(np.max(np.abs(g)))

    def data_hessian(self):
        """Upper triangle of ``X.T diag(D) X`` (intercept last) at the last evaluated
        point (binary), unscaled, without the prior."""
        if self.rows["dense"] and self.rows["n_rows"] * self.rows["n_cols"] > 0:
            X = self.rows["data"][:self.rows["n_rows"] * self.rows["n_cols"]].reshape(
                self.rows["n_rows"], self.rows["n_cols"])
            if self.fit_intercept:
                X = np.column_stack([X, np.ones(X.shape[0])])
            return (X.T * self.D) @ X
        return _logistic.binary_hessian(D=self.D, fit_intercept=self.fit_intercept,
                                        **self.rows)

    def hessian(self):
        """The full Hessian of :meth:`l2` (data term + prior, scaled) at the last
        evaluated point (binary)."""
        H = self.data_hessian()
        H = np.triu(H) + np.triu(H, 1).T
        if self.precision is None:
            H[np.diag_indices_from(H)] += self.inv_var
        else:
            n_features = self.precision.shape[0]
            H[:n_features, :n_features] += self.precision
        H /= self.scale
        return H

    def hess_diag(self):
        """The diagonal of :meth:`hessian` without forming it (binary): TRON's
        preconditioner."""
        data = _logistic.binary_hessian_diag(D=self.D, fit_intercept=self.fit_intercept,
                                             unit_x=self.unit_x, **self.rows)
        return (data + self._prior_diag()) / self.scale

    def _prior_diag(self):
        if self.precision is None:
            return self.inv_var
        out = np.zeros(self.inv_var.shape[0])
        out[:self.precision.shape[0]] = np.diag(self.precision)
        return out

    def hess_vec(self, v):
        """(X.T D X + prior precision) v / scale at the last evaluated point (binary)."""
        hv = _logistic.binary_hess_vec(D=self.D, v=np.ascontiguousarray(v),
                                       fit_intercept=self.fit_intercept, unit_x=self.unit_x,
                                       **self.rows)
        return (hv + self.prior_times(v)) / self.scale



class _DataTermObjective(_Objective):
    """An objective whose data term is a function (rows elsewhere: no Hessian)."""

    def __init__(self, data_term, n_classes, fit_intercept):
        self.data_term = data_term
        self.binary = n_classes == 2
        self.n_classes = n_classes
        self.fit_intercept = fit_intercept
        self.inv_var = None
        self.precision = None
        self.scale = None
        self.D = None
        self.n_evals = 0

    def loss_grad(self, theta):
        self.n_evals += 1
        return self.data_term(np.ascontiguousarray(theta, dtype=np.float64))


def row_block_bounds(X, n_blocks):
    """``n_blocks + 1`` row bounds of contiguous blocks of about equal work (non-zeros
    for CSR, rows for dense); a fixed function of X and ``n_blocks`` (deterministic)."""
    n_rows = X.shape[0]
    n_blocks = max(1, min(int(n_blocks), n_rows))
    if hasattr(X, "indptr"):
        targets = np.linspace(0, X.indptr[n_rows], n_blocks + 1)[1:n_blocks]
        inner = np.searchsorted(X.indptr, targets)
    else:
        inner = np.linspace(0, n_rows, n_blocks + 1)[1:n_blocks]
    bounds = np.concatenate([[0], np.asarray(inner, dtype=np.int64), [n_rows]])
    return np.maximum.accumulate(bounds)


def row_block(X, start, stop):
    """Rows ``start:stop`` of a dense or CSR X without copying the CSR values."""
    if not hasattr(X, "indptr"):
        return X[start:stop]
    import scipy.sparse as sp
    lo, hi = X.indptr[start], X.indptr[stop]
    block = sp.csr_matrix((X.data[lo:hi], X.indices[lo:hi], X.indptr[start:stop + 1] - lo),
                          shape=(stop - start, X.shape[1]), copy=False)
    block.has_sorted_indices = X.has_sorted_indices
    return block


class ThreadedSum:
    """Sums of a GIL-releasing kernel over row blocks on ``n_jobs`` threads, kept for
    one fit (no thread start per evaluation).  Block 0 runs on the calling thread,
    blocks 1.. on the pool; the partial results are added in block order, so the
    sum is the same for a fixed number of blocks whatever the thread timing."""

    def __init__(self, n_jobs):
        from concurrent.futures import ThreadPoolExecutor
        self.pool = ThreadPoolExecutor(max_workers=max(1, n_jobs - 1))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.pool.shutdown(wait=True)

    def map(self, function, blocks):
        """``[function(b) for b in blocks]``, the first block on this thread."""
        futures = [self.pool.submit(function, b) for b in blocks[1:]]
        first = function(blocks[0])
        return [first] + [f.result() for f in futures]


class _ThreadedObjective(_Objective):
    """The data term over contiguous row blocks on threads (``n_jobs > 1``): the
    ``_core._logistic`` kernels release the GIL; loss, gradient (and, for TRON,
    Hessian-vector products) are added in block order."""

    def __init__(self, X, y, sample_weight, n_classes, fit_intercept, threads, n_blocks):
        super().__init__(X, y, sample_weight, n_classes, fit_intercept, None, None)
        bounds = row_block_bounds(X, n_blocks)
        self.threads = threads
        self.row_blocks = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        self.parts = [_Objective(row_block(X, a, b), y[a:b], sample_weight[a:b], n_classes,
                                 fit_intercept, None, None)
                      for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def _param_slices(self, n_params):
        bounds = np.linspace(0, n_params, len(self.parts) + 1).astype(np.int64)
        return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]

    def _block_sums(self, theta):
        """(summed loss, the blocks' gradients) at theta, losses added in block order."""
        self.n_evals += 1
        results = self.threads.map(lambda part: part.loss_grad(theta), self.parts)
        loss = results[0][0]
        for part_loss, _ in results[1:]:
            loss += part_loss
        return loss, [g for _, g in results]

    def loss_grad(self, theta):
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        loss, grads = self._block_sums(theta)

        def add(where):                  # grads[0] += the others, in block order
            for g in grads[1:]:
                grads[0][where] += g[where]

        self.threads.map(add, self._param_slices(len(theta)))
        return loss, grads[0]

    def l2(self, theta):
        """Data term + Gaussian prior, scaled; the per-parameter work (adding the
        blocks' gradients, the prior, the scaling) also split over the threads
        (numpy releases the GIL on these slices), in a fixed slice order.  Multinomial
        models on CSR rows run the two-phase pass instead (residuals over the row
        blocks, then the gradient over as many blocks of feature columns)."""
        if self._column_state() is not None:
            return self._l2_columns(theta, self.threads, self.row_blocks, len(self.parts))
        if self.precision is not None:
            return super().l2(theta)
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        loss, grads = self._block_sums(theta)
        inv_var, scale = self.inv_var, self.scale

        def finish(where):
            g = grads[0][where]
            for other in grads[1:]:
                g += other[where]
            pen = inv_var[where] * theta[where]
            quad = float(theta[where] @ pen)
            g += pen
            g /= scale
            return quad

        quads = self.threads.map(finish, self._param_slices(len(theta)))
        penalty = 0.0
        for quad in quads:
            penalty += quad
        return (loss + 0.5 * penalty) / scale, grads[0]

    @property
    def D(self):
        """The blocks' Hessian weights (TRON saves and restores them on a rejected step)."""
        return tuple(part.D for part in getattr(self, "parts", ()))

    @D.setter
    def D(self, value):
        if value is not None:
            for part, block_D in zip(self.parts, value):
                part.D = block_D

    def data_hessian(self):
        parts = self.threads.map(lambda part: part.data_hessian(), self.parts)
        H = parts[0]
        for part_H in parts[1:]:
            H += part_H
        return H

    def hess_diag(self):
        parts = self.threads.map(lambda part: _logistic.binary_hessian_diag(
            D=part.D, fit_intercept=self.fit_intercept, unit_x=part.unit_x, **part.rows),
            self.parts)
        diag = parts[0]
        for part_diag in parts[1:]:
            diag += part_diag
        return (diag + self._prior_diag()) / self.scale

    def hess_vec(self, v):
        v = np.ascontiguousarray(v)
        results = self.threads.map(lambda part: _logistic.binary_hess_vec(
            D=part.D, v=v, fit_intercept=self.fit_intercept, unit_x=part.unit_x,
            **part.rows), self.parts)
        hv = results[0]
        for part_hv in results[1:]:
            hv += part_hv
        return (hv + self.prior_times(v)) / self.scale


def logistic_data_term(X, codes, sample_weight, theta, *, n_classes, fit_intercept):
    """Unscaled weighted loss and gradient of one block of rows (a public hook).

    ``X`` passed :func:`linclass._validation.check_array`, ``codes`` are int
    class codes in ``0..n_classes-1``, ``sample_weight`` float64 >= 0 (times the
    class weights), ``theta`` as in :meth:`LogisticRegression.fit_data_term`.
    Sums over blocks of rows add up to the data term of all rows.
    """
    objective = _Objective(X, codes, np.ascontiguousarray(sample_weight, dtype=np.float64),
                           n_classes, fit_intercept, None, None)
    return objective.loss_grad(theta)


#: TRON's CG stops when ``||r|| <= R_GOAL * tol * ||g0||`` (see :func:`_tron`)
R_GOAL = 0.5


def _tron(objective, theta, *, tol, max_iter, verbose=0, callback=None):
    """Trust-region Newton method (Lin, Weng & Keerthi, 2008, Algorithm 2) with
    the diagonal preconditioner of Hsia, Chiang & Lin (2018).

    ``objective.l2(theta) -> (f, g)`` also stores the Hessian's diagonal part
    ``objective.D`` used by ``objective.hess_vec(v)`` and ``objective.hess_diag()``.
    Each step is Steihaug's conjugate gradients preconditioned by ``M = diag(H)``
    (scaled by ``M``, the problem is TRON's in the variables ``M^1/2 s``: the
    trust region and the step norms are measured in the ``M`` norm).  Measured
    on a9a and w8a (C = 1 and 100, tol 1e-2 to 1e-6) against the same method
    without it: never more iterations (4-15 against 5-23); at tol=1e-2 it stops
    at a lower objective (up to 23% lower on w8a), at tighter tolerances within
    1e-6 (relative) of the unpreconditioned run's.  Two looser CG stops were faster at tol=1e-2 and slower
    at tol=1e-6 (up to 7x the iterations) and were not kept: Nash & Sofer's
    quadratic-model rule, which LIBLINEAR's Newton solver uses, and a
    residual tolerance of ``min(0.5, sqrt(||g|| / ||g0||))``.  Stops when
    ``||g|| <= tol * ||g0||``.

    CG also stops once its residual (the model's gradient at the step) is below
    ``R_GOAL * tol * ||g0||``: a step that accurate already meets the stopping
    test up to the model's error, so the last Newton system is not solved
    further than the test needs.  Measured (a9a and w8a, C = 0.1, 1, 100, tol
    1e-2 to 1e-8, 30 fits): the same number of iterations or fewer in every
    fit, 3,632 Hessian-vector products against 3,814 (a9a at LIBLINEAR's
    stopping rule: 21 against 28, LIBLINEAR 19); at loose tolerances the
    solver stops at a higher objective than without the rule (on a9a still
    lower than LIBLINEAR's at its own rule; up to 1e-3 higher at tol=1e-4 on
    w8a, C=100), at tol <= 1e-6 within 3e-7 (relative) of it.
    Returns ``(theta, f, n_iter, converged)``.
    """
    fun, hess_vec = objective.l2, objective.hess_vec
    eta0, eta1, eta2 = 1e-4, 0.25, 0.75
    sigma1, sigma2, sigma3 = 0.25, 0.5, 4.0
    f, g = fun(theta)
    gnorm0 = np.linalg.norm(g)
    if gnorm0 == 0.0:
        return theta, f, 0, True
    M = _preconditioner(objective)
    delta = np.sqrt(g @ (g / M))                 # ||g||, in the preconditioned variables
    n_iter = 0
    converged = False
    while n_iter < max_iter:
        n_iter += 1
        s, r = _truncated_cg(hess_vec, g, delta, M, R_GOAL * tol * gnorm0)
        gs = g @ s
        predicted = -0.5 * (gs - s @ r)           # q(0) - q(s), q the quadratic model
        theta_new = theta + s
        D_current = objective.D
        f_new, g_new = fun(theta_new)
        actual = f - f_new
        snorm = np.sqrt(s @ (M * s))
        if n_iter == 1:
            delta = min(delta, snorm)
        # step size that minimises the 1-D quadratic interpolation of f along s
        if f_new - f - gs <= 0:
            alpha = sigma3
        else:
            alpha = max(sigma1, -0.5 * (gs / (f_new - f - gs)))
        if actual < eta0 * predicted:
            delta = min(max(alpha, sigma1) * snorm, sigma2 * delta)
        elif actual < eta1 * predicted:
            delta = max(sigma1 * delta, min(alpha * snorm, sigma2 * delta))
        elif actual < eta2 * predicted:
            delta = max(sigma1 * delta, min(alpha * snorm, sigma3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, sigma3 * delta))
        if actual > eta0 * predicted:
            theta, f, g = theta_new, f_new, g_new
            M = _preconditioner(objective)
        else:
            objective.D = D_current     # the Hessian stays the one at theta
        if callback is not None:
            callback(theta, f, g)
        if verbose:
            print("tron iter %3d  f %.10g  |g| %.3e  delta %.3e" % (n_iter, f, np.linalg.norm(g),
                                                               delta))
        if np.linalg.norm(g) <= tol * gnorm0:
            converged = True
            break
        if f < -1e32 or (abs(actual) <= 1e-12 * abs(f) and abs(predicted) <= 1e-12 * abs(f)):
            converged = np.linalg.norm(g) <= max(tol, 1e-6) * gnorm0
            break
        if delta <= 1e-300:
            break
    return theta, f, n_iter, converged


def _preconditioner(objective):
    """TRON's diagonal preconditioner at the last evaluated point: the Hessian's
    diagonal with 1% of its mean mixed in, ``M = 0.99 diag(H) + 0.01 mean(diag(H))``,
    so that a column of zeros (or an unpenalised intercept on separable data)
    keeps ``M`` positive, the same at any scale of the objective."""
    diag = objective.hess_diag()
    floor = float(np.mean(diag))
    if not floor > 0:
        return np.ones_like(diag)
    return 0.99 * diag + 0.01 * floor


#: ``solver="auto"`` uses Newton's method when the model has at most this many
#: parameters (the dense Hessian is p x p, its Cholesky factorisation p^3 / 3).
NEWTON_MAX_PARAMS = 1000
#: ... and when forming the Hessian costs at most this many passes' worth of
#: gradient work: sum_i nnz_i^2 / 2 <= NEWTON_MAX_PASSES * nnz (e.g. rows of at
#: most ~2 * NEWTON_MAX_PASSES stored entries).  Cost model: L-BFGS needs some
#: hundreds of passes over the rows on a well-posed problem at the default tol,
#: Newton 5-15 iterations of one pass plus one Hessian each.  Measured (a9a,
#: 32561 x 123, 14 entries a row, tol=1e-6): Newton 8 iterations, L-BFGS 324.
NEWTON_MAX_PASSES = 32


def logistic_solver(X, n_classes, penalty, solver="auto"):
    """The solver ``LogisticRegression`` runs: ``solver`` itself unless it is
    ``"auto"``, which picks ``"newton"`` for binary problems with the L2 penalty
    (or none), sparse (CSR) ``X``, at most :data:`NEWTON_MAX_PARAMS` parameters and
    a Hessian no dearer than :data:`NEWTON_MAX_PASSES` passes over the rows, else
    ``"lbfgs"`` (``X=None``, a data term evaluated elsewhere: ``"lbfgs"``)."""
    if solver != "auto":
        return solver
    if X is None or n_classes != 2 or penalty not in ("l2", None, "none"):
        return "lbfgs"
    n_rows, n_cols = X.shape
    if n_cols + 1 > NEWTON_MAX_PARAMS:
        return "lbfgs"
    if not hasattr(X, "indptr"):
        # dense rows: the Hessian costs n_features / 2 passes, and L-BFGS converges in
        # few iterations on the well-conditioned dense problems measured (10000 x 200
        # Gaussian: L-BFGS 9 iterations, 0.09 s; Newton 5 iterations, 0.58 s)
        return "lbfgs"
    counts = np.diff(X.indptr).astype(np.float64)
    hessian_work = 0.5 * float(counts @ (counts + 1.0))
    pass_work = max(float(counts.sum()), 1.0)
    return "newton" if hessian_work <= NEWTON_MAX_PASSES * pass_work else "lbfgs"


def _scipy_callback(record):
    """A ``scipy.optimize.minimize`` callback (scipy passes its ``OptimizeResult``
    to a parameter named ``intermediate_result``) that records the objective."""
    def callback(intermediate_result):
        record(intermediate_result.x, intermediate_result.fun)
    return callback


def _newton(objective, theta, *, tol, max_iter, verbose=0,
            ftol=64 * np.finfo(float).eps, callback=None):
    """Newton's method with the exact Hessian and a backtracking (Armijo) line search.

    ``objective.l2`` gives the scaled objective and gradient and stores the
    curvature weights ``D`` that ``objective.hessian()`` uses; the step solves
    ``H p = -g`` by Cholesky (a tiny multiple of the identity is added when ``H``
    is singular, which only happens without a penalty).  Stopping rules are
    L-BFGS's (:func:`linclass.linear._lbfgs.lbfgs_minimize`): ``max |g| <= tol``,
    a relative decrease below ``ftol`` twice in a row, or a line search that
    cannot decrease f.  Returns ``(theta, f, n_iter, converged)``.
    """
    theta = np.array(theta, dtype=np.float64, copy=True)
    f, g = objective.l2(theta)
    n_iter = 0
    flat_steps = 0
    if not (np.isfinite(f) and np.all(np.isfinite(g))):
        return theta, f, 0, False
    while n_iter < max_iter:
        if np.max(np.abs(g)) <= tol:
            return theta, f, n_iter, True
        H = objective.hessian()
        shift = 0.0
        for attempt in range(80):       # 1e-12 * 100**79 overflows: bounded
            try:
                factor = cho_factor(H, lower=False, check_finite=False)
                break
            except np.linalg.LinAlgError:
                if attempt == 79 or not np.isfinite(shift):
                    raise ValueError("LogisticRegression (solver='newton'): the Hessian "
                                     "is not finite or cannot be factorised "
                                     "(overflow); scale the features") from None
                old = shift
                shift = max(1e-12 * float(np.max(np.abs(np.diag(H)))), 1e-300) \
                    if shift == 0.0 else 100.0 * shift
                H[np.diag_indices_from(H)] += shift - old
        d = -cho_solve(factor, g, check_finite=False)
        gd = float(g @ d)
        if not gd < 0.0:
            d, gd = -g, -float(g @ g)
        step = 1.0
        accepted = False
        for _ in range(50):
            theta_new = theta + step * d
            f_new, g_new = objective.l2(theta_new)
            if np.isfinite(f_new) and f_new <= f + 1e-4 * step * gd:
                accepted = True
                break
            step *= 0.5
        n_iter += 1
        if not accepted:
            objective.l2(theta)             # D back at theta; f is flat to rounding along d
            return theta, f, n_iter, True
        f_old = f
        theta, f, g = theta_new, f_new, g_new
        if callback is not None:
            callback(theta, f, g)
        if verbose:
            print("LogisticRegression newton iter %3d  f %.10g  max|g| %.3e  step %g"
                  % (n_iter, f, np.max(np.abs(g)), step))
        if f_old - f <= ftol * max(abs(f_old), abs(f), 1.0):
            flat_steps += 1
            if flat_steps == 2:
                return theta, f, n_iter, True
        else:
            flat_steps = 0
    return theta, f, n_iter, bool(np.max(np.abs(g)) <= tol)


def _truncated_cg(hess_vec, g, delta, M, r_goal=0.0):
    """Steihaug's preconditioned CG for ``H s = -g`` inside ``||s||_M <= delta``
    (``||s||_M^2 = s . (M s)``, ``M`` a positive diagonal given as a vector);
    returns ``(s, r = -g - H s)``.  Stops on the boundary, on a direction of
    non-positive curvature, when ``sqrt(r . M^-1 r) <= 0.1 sqrt(g . M^-1 g)``
    (TRON's rule in the preconditioned variables), or when ``||r|| <= r_goal``
    (the caller's goal for the gradient; 0: none)."""
    s = np.zeros_like(g)
    r = -g
    z = r / M
    d = z.copy()
    rz = r @ z
    cg_tol = 0.1 * np.sqrt(rz)
    for _ in range(max(10, g.shape[0])):
        if np.sqrt(rz) <= cg_tol or (r_goal > 0.0 and r @ r <= r_goal * r_goal):
            break
        Hd = hess_vec(d)
        dHd = d @ Hd
        alpha = rz / dHd if dHd > 0 else np.inf
        s_next = s + alpha * d if np.isfinite(alpha) else None
        if s_next is None or s_next @ (M * s_next) > delta * delta:
            # move along d to the trust-region boundary: ||s + tau d||_M = delta
            Md = M * d
            sd, dd, ss = s @ Md, d @ Md, s @ (M * s)
            rad = np.sqrt(max(sd * sd + dd * (delta * delta - ss), 0.0))
            tau = (delta * delta - ss) / (sd + rad) if sd >= 0 else (rad - sd) / dd
            s = s + tau * d
            r = r - tau * Hd
            break
        s = s_next
        r = r - alpha * Hd
        z = r / M
        rz_new = r @ z
        d = z + (rz_new / rz) * d
        rz = rz_new
    return s, r


class LogisticRegression(CheckedScoreMixin, ClassifierMixin, BaseEstimator):
    """Binary and multinomial logistic regression (MAP under a Gaussian or Laplace prior).

    Parameters
    ----------
    penalty : {"l2", "l1", None}, default="l2"
        Prior on the weights: Gaussian (``"l2"``), Laplace (``"l1"``) or none
        (maximum likelihood; may diverge on separable data).
    C : float, array of shape (n_features,) or (n_features, n_features), default=1.0
        Prior variance(s): ``Sigma = C * I`` for a scalar, ``diag(C)`` for a
        vector, the full covariance ``Sigma = C`` (symmetric positive definite;
        ``penalty="l2"`` only) for a matrix: the MAP estimate under
        ``w ~ N(0, Sigma)`` minimises ``sum_i loss_i + w' Sigma^-1 w / 2``
        (Bishop 2006, section 4.5; correlated weights, e.g. features known
        to act alike).  Larger means weaker regularisation (same scale as
        scikit-learn's and LIBLINEAR's ``C``).
    fit_intercept : bool, default=True
    penalize_intercept : bool, default=False
        Put the prior (variance ``C``, which must be scalar) on the intercept too.
    solver : {"auto", "lbfgs", "newton", "tron"}, default="auto"
        ``"newton"``: Newton's method with the exact (dense) Hessian, Cholesky
        steps and an Armijo line search, for binary problems with the L2
        penalty or none; each iteration forms ``X.T D X`` (one pass over the
        pairs of stored entries of each row), so it suits few features and
        sparse rows.  ``"tron"`` (trust-region Newton, Hessian-vector products)
        handles the same problems at any size.  ``"auto"``: ``"newton"`` when the
        problem is binary with the L2 penalty (or none), ``X`` is sparse, has at most
        ``NEWTON_MAX_PARAMS`` (1000) parameters and forming its Hessian costs at
        most ``NEWTON_MAX_PASSES`` (32) passes over the rows (sparse rows of
        up to ~60 stored entries; see :func:`logistic_solver`), else ``"lbfgs"``.
        ``"newton"`` and ``"lbfgs"`` stop by the same rule (``tol`` below), so
        either reaches the same optimum; on a9a (32561 x 123) at ``tol=1e-6``
        Newton takes 8 iterations where L-BFGS takes 324.
    tol : float, default=1e-5
        ``"lbfgs"``: stop when the largest projected-gradient entry of the
        objective divided by ``sum(sample_weight)`` is below ``tol``.  The
        default reaches the optimum to about 1e-6 relative objective on text
        problems (20 Newsgroups tf-idf, 20 classes, C=1: 6.6e-7 above it,
        where 1e-4 -- scikit-learn's default -- stops 1.2e-4 above it).
        ``"newton"``: the same rule as ``"lbfgs"``.
        ``"tron"``: stop when ``||grad|| <= tol * ||grad at start||``.
    max_iter : int, default=1000
    class_weight : None, "balanced" or dict {label: weight}, default=None
    warm_start : bool, default=False
        Start from the previous ``coef_``/``intercept_`` when the shapes agree.
    verbose : int, default=0
    l1_ratio : float in [0, 1], optional
        With ``penalty="elasticnet"`` (Zou & Hastie 2005; scikit-learn's
        ``LogisticRegression(penalty="elasticnet")``): the penalty is
        ``sum_j (l1_ratio |w_j| + (1 - l1_ratio) w_j**2 / 2) / C_j``, solved as
        the L1 penalty (bound-constrained L-BFGS on ``w = u - v``).
    n_jobs : int or None, default=1
        Threads for the passes over the rows (loss, gradient and TRON's
        Hessian-vector products): the rows are cut into ``n_jobs`` contiguous
        blocks of about equal non-zeros, each block's sums computed by the GIL-free
        kernel on its own thread and added in block order.  None: 1; -1: all
        CPUs.  The result depends on ``n_jobs`` only through the rounding of that
        sum (deterministic for a fixed ``n_jobs``; ``n_jobs=1`` is the
        single-threaded fit, bit for bit).  Multinomial models on CSR input
        compute the residuals over the row blocks and the gradient over as many
        blocks of features (every gradient entry the same sum whatever
        ``n_jobs``); with ``(n_features + 1) * n_classes >= 8192`` the L-BFGS
        history passes and vector work run over column blocks on the threads too,
        with every sum formed the same way whatever the blocks: such a fit (L2,
        diagonal prior, solver L-BFGS) gives the same bits for every ``n_jobs``.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    coef_ : ndarray (1, n_features) for two classes, else (n_classes, n_features)
    intercept_ : ndarray (1,) or (n_classes,)
    n_features_in_ : int
    n_iter_ : ndarray (1,) of int
        Solver iterations.
    solver_ : str
        The solver that ran (``"lbfgs"``, ``"newton"`` or ``"tron"``; see ``solver``).
    objective_ : float
        Final value of the (unscaled) objective above.
    history_ : list of dict
        One row per solver iteration: ``iteration``, ``objective`` (unscaled),
        ``gradient_max`` (largest gradient entry; not for ``penalty="l1"``)
        and ``time`` (seconds since the solver started); see
        :func:`linclass.metrics.plotting.plot_training_history`.
    """

    def __init__(self, penalty="l2", C=1.0, *, fit_intercept=True, penalize_intercept=False,
                 solver="auto", tol=1e-5, max_iter=1000, class_weight=None,
                 warm_start=False, verbose=0, l1_ratio=None, n_jobs=1):
        self.penalty = penalty
        self.C = C
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.verbose = verbose
        self.l1_ratio = l1_ratio
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fit --
    def _check_params(self, n_features):
        if self.penalty == "elasticnet":
            if isinstance(self.l1_ratio, bool) or not isinstance(
                    self.l1_ratio, numbers.Real) or not 0.0 <= self.l1_ratio <= 1.0:
                raise ValueError("penalty='elasticnet' needs l1_ratio, a number in [0, 1]; "
                                 "got %r" % (self.l1_ratio,))
        elif self.penalty not in ("l2", "l1", None, "none"):
            raise ValueError("penalty must be 'l2', 'l1' or None, got %r" % (self.penalty,))
        elif self.l1_ratio is not None and (
                isinstance(self.l1_ratio, bool) or not isinstance(self.l1_ratio, numbers.Real)
                or not 0.0 <= self.l1_ratio <= 1.0):
            raise ValueError("l1_ratio must be None or a number in [0, 1] (used with "
                             "penalty='elasticnet'), got %r" % (self.l1_ratio,))
        if self.solver not in ("auto", "lbfgs", "newton", "tron"):
            raise ValueError("solver must be 'auto', 'lbfgs', 'newton' or 'tron', got %r"
                             % (self.solver,))
        check_positive(self.tol, "tol", strict=False)
        check_max_iter(self, self.max_iter)
        if isinstance(self.C, numbers.Real) and not isinstance(self.C, bool):
            check_positive(self.C, "C")
            variance = np.full(n_features, float(self.C))
        else:
            variance = as_float_param(self.C, "C")
            if variance.ndim == 2:
                return self._check_covariance(variance, n_features)
            if variance.shape != (n_features,):
                raise ValueError("C must be a positive number or an array of one prior "
                                 "variance per feature (shape (%d,)), got shape %r"
                                 % (n_features, variance.shape))
            if not np.all(np.isfinite(variance)) or np.any(variance <= 0):
                raise ValueError("every prior variance in C must be finite and > 0")
            if self.penalize_intercept:
                raise ValueError("penalize_intercept=True needs a scalar C (the intercept's "
                                 "prior variance)")
        return variance

    def _check_covariance(self, sigma, n_features):
        if sigma.shape != (n_features, n_features):
            raise ValueError("a prior covariance C must have shape (n_features, n_features) = "
                             "(%d, %d), got %r" % (n_features, n_features, sigma.shape))
        if not np.all(np.isfinite(sigma)):
            raise ValueError("the prior covariance C holds NaN or infinite values")
        if not np.allclose(sigma, sigma.T, rtol=1e-10, atol=1e-12 * np.abs(sigma).max()):
            raise ValueError("the prior covariance C must be symmetric")
        if self.penalty != "l2":
            raise ValueError("a full prior covariance C needs penalty='l2' (a Gaussian prior), "
                             "got penalty=%r" % (self.penalty,))
        if self.penalize_intercept:
            raise ValueError("penalize_intercept=True needs a scalar C (the intercept's "
                             "prior variance)")
        try:
            factor = cho_factor(sigma)
        except np.linalg.LinAlgError:
            raise ValueError("the prior covariance C must be positive definite (its Cholesky "
                             "factorisation failed)") from None
        return cho_solve(factor, np.eye(n_features))     # the precision Sigma^-1

    def fit(self, X, y, sample_weight=None):
        """Fit the model (MAP estimate).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), optional
        """
        X = check_array(X)
        n_samples, n_features = X.shape
        classes, codes = check_classification_target(y, n_samples)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        self._check_params(n_features)
        weights = sample_weight * class_weight_vector(self.class_weight, classes, codes,
                                                      sample_weight)[codes]
        weights = np.ascontiguousarray(weights)
        n_jobs = resolve_n_jobs(self.n_jobs, n_samples)
        solver = logistic_solver(X, len(classes), self.penalty, self.solver)
        if n_jobs == 1:
            objective = _Objective(X, codes, weights, len(classes), bool(self.fit_intercept),
                                   None, None)
            return self._fit_objective(objective, classes, n_features, weights.sum(), solver)
        with ThreadedSum(n_jobs) as threads:
            objective = _ThreadedObjective(X, codes, weights, len(classes),
                                           bool(self.fit_intercept), threads, n_jobs)
            return self._fit_objective(objective, classes, n_features, weights.sum(), solver)

    def fit_data_term(self, data_term, *, classes, n_features, weight_sum):
        """Fit on a data term evaluated elsewhere (the hook of :mod:`linclass.distributed`).

        Everything but the pass over the rows is :meth:`fit`'s own code: the
        prior, the starting point, the solver and the fitted attributes.

        Parameters
        ----------
        data_term : callable
            ``data_term(theta) -> (loss, grad)``: the unscaled weighted loss
            ``sum_i s_i c_{y_i} loss_i`` and its gradient, as
            :func:`logistic_data_term` computes them, at the flat parameters
            ``theta`` of shape ((n_features + fit_intercept) * n_out,) (C order
            of (n_features + fit_intercept, n_out); ``n_out`` is 1 for two classes).
        classes : array (n_classes,)
            Sorted class labels; ``classes[k]`` is code ``k`` of the data term.
        n_features : int
        weight_sum : float
            ``sum_i s_i c_{y_i}``: the objective is divided by it inside the solver.
        """
        if self.solver in ("tron", "newton"):
            raise ValueError("solver=%r needs the rows in memory (Hessian products); use "
                             "solver='lbfgs' or 'auto' with fit_data_term" % (self.solver,))
        classes = np.asarray(classes)
        objective = _DataTermObjective(data_term, len(classes), bool(self.fit_intercept))
        return self._fit_objective(objective, classes, int(n_features), float(weight_sum),
                                   logistic_solver(None, len(classes), self.penalty,
                                                   self.solver))

    def _fit_objective(self, objective, classes, n_features, scale, solver):
        variance = self._check_params(n_features)
        n_classes = len(classes)
        binary = n_classes == 2
        l1 = self.penalty in ("l1", "elasticnet")
        no_penalty = self.penalty in (None, "none")
        if solver in ("tron", "newton") and (not binary or l1):
            raise ValueError("solver=%r handles binary problems with penalty='l2' (or "
                             "None); use solver='lbfgs' for %s"
                             % (solver, "L1" if l1 else "%d classes" % n_classes))
        if scale <= 0:
            raise ValueError("sample weights (times class weights) are all zero: nothing to fit")

        n_out = 1 if binary else n_classes
        fi = bool(self.fit_intercept)
        inv_var = np.zeros((n_features + fi, n_out))
        if variance.ndim == 2:                           # full covariance: its precision
            objective.precision = variance
        elif not no_penalty:
            inv_var[:n_features] = (1.0 / variance)[:, None]
            if fi and self.penalize_intercept:
                inv_var[n_features] = 1.0 / float(self.C)
        inv_var = inv_var.ravel()

        theta0 = np.zeros((n_features + fi, n_out))
        if (self.warm_start and hasattr(self, "coef_")
                and self.coef_.shape == (n_out, n_features)
                and getattr(self, "intercept_", np.zeros(0)).shape == (n_out,)):
            theta0[:n_features] = self.coef_.T
            if fi:
                theta0[n_features] = self.intercept_
        theta0 = theta0.ravel()

        objective.inv_var = inv_var
        objective.scale = scale
        with single_threaded_blas():
            theta, fval, n_iter, converged = self._solve(objective, theta0, l1, solver)
        if not converged:
            warnings.warn("LogisticRegression (solver=%r) stopped at max_iter=%d before "
                          "reaching tol=%g; increase max_iter or scale the data"
                          % (solver, self.max_iter, self.tol), ConvergenceWarning)
        theta = theta.reshape(n_features + fi, n_out)
        check_finite_fit(self, coef_=theta, objective_=fval)
        self.classes_ = classes
        self.coef_ = np.ascontiguousarray(theta[:n_features].T)
        self.intercept_ = theta[n_features].copy() if fi else np.zeros(n_out)
        self.n_features_in_ = n_features
        self.n_iter_ = np.array([n_iter], dtype=np.int32)
        self.objective_ = float(fval * scale)
        self.solver_ = solver
        return self

    def _solve(self, objective, theta0, l1, solver):
        """(theta, objective / scale, n_iter, converged) of the chosen solver;
        one row per iteration in ``history_``."""
        self.history_ = history = []
        start = time.perf_counter()

        def record(theta, f, g=None):
            row = {"iteration": len(history) + 1, "objective": float(f) * objective.scale}
            if g is not None:
                row["gradient_max"] = float(np.max(np.abs(g))) * objective.scale
            row["time"] = time.perf_counter() - start
            history.append(row)

        if solver == "tron":
            return _tron(objective, theta0, tol=self.tol, max_iter=iteration_budget(self.max_iter),
                         verbose=self.verbose, callback=record)
        if solver == "newton":
            return _newton(objective, theta0, tol=self.tol,
                           max_iter=iteration_budget(self.max_iter), verbose=self.verbose,
                           callback=record)
        if l1:
            return self._fit_l1(objective, theta0, record)
        progress = lbfgs_progress("LogisticRegression", self.verbose)

        def callback(x, f, g):
            record(x, f, g)
            if progress is not None:
                progress(OptimizeResult(x=x, fun=f, jac=g))

        return lbfgs_minimize(objective.l2, theta0, gtol=self.tol,
                              max_iter=iteration_budget(self.max_iter),
                              callback=callback, threads=getattr(objective, "threads", None),
                              max_abs=objective.grad_max_abs, fun_into=objective.l2_into)

    def _fit_l1(self, objective, theta0, record):
        """L1 by splitting theta = u - v with u, v >= 0 where penalised."""
        ratio = float(self.l1_ratio) if self.penalty == "elasticnet" else 1.0
        lam = ratio * objective.inv_var
        lam2 = (1.0 - ratio) * objective.inv_var          # elastic net's L2 part
        penalized = objective.inv_var > 0
        n = theta0.shape[0]

        def fun(uv):
            theta = uv[:n] - uv[n:]
            loss, grad = objective.loss_grad(theta)
            loss = loss + 0.5 * float(lam2 @ (theta * theta))
            grad = grad + lam2 * theta
            f = (loss + lam @ (uv[:n] + uv[n:])) / objective.scale
            g = np.concatenate([grad + lam, -grad + lam]) / objective.scale
            return f, g

        u0, v0 = np.where(penalized, np.maximum(theta0, 0), theta0), np.maximum(-theta0, 0)
        v0[~penalized] = 0.0
        bounds = [(0, None) if p else (None, None) for p in penalized] + \
                 [(0, None) if p else (0, 0) for p in penalized]
        result = minimize(fun, np.concatenate([u0, v0]), method="L-BFGS-B", jac=True,
                          bounds=bounds, callback=_scipy_callback(record),
                          options=dict(maxiter=iteration_budget(self.max_iter), gtol=self.tol,
                                       ftol=64 * np.finfo(float).eps, maxls=50))
        theta = result.x[:n] - result.x[n:]
        return theta, result.fun, result.nit, result.status != 1

    # -------------------------------------------------------------- predict --
    def _check_X(self, X):
        check_is_fitted(self, "coef_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_, owner=self)
        return X

    def decision_function(self, X):
        """Scores: ``X @ coef_.T + intercept_``; 1-D (log-odds of ``classes_[1]``) for
        two classes, else (n_samples, n_classes)."""
        X = self._check_X(X)
        with np.errstate(over="ignore", invalid="ignore"):      # checked just below
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        check_finite_output(self, scores, X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_log_proba(self, X):
        """Log-probabilities (n_samples, n_classes), computed with log-sum-exp."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            scores = np.column_stack([np.zeros_like(scores), scores])
        return log_softmax(scores)

    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes); rows sum to one."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p1 = expit(scores)
            return np.column_stack([1.0 - p1, p1])
        return np.exp(log_softmax(scores))
