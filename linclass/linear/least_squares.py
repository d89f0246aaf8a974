"""Least-squares classifiers: plain, ridge (L2) and lasso (L1) regularised.

Each class gets a target of +1 for its examples and -1 for the others (one
column for two classes); a linear model is fitted to the targets by (weighted)
least squares and the prediction is the class of the highest score (for two
classes: ``classes_[1]`` when ``x.w + b - t > 0``).  The intercept is never
penalised: it is eliminated by centring ``X`` and the targets (implicitly for
sparse ``X``).

References
----------
Hastie, Tibshirani & Friedman (2009), *The Elements of Statistical Learning*,
2nd ed., sec. 4.2 (linear regression of an indicator matrix) and 3.4 (ridge,
lasso).
Hoerl & Kennard (1970), "Ridge regression: biased estimation for
nonorthogonal problems", Technometrics 12.
Hestenes & Stiefel (1952), "Methods of conjugate gradients for solving linear
systems" (the sparse ridge path).
Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed., ch. 12;
Carson & Higham (2018), "Accelerating the solution of linear systems by
iterative refinement in three precisions", SIAM J. Sci. Comput. 40 (the
mixed-precision dense ridge path).
Tibshirani (1996), "Regression shrinkage and selection via the lasso";
Friedman, Hastie & Tibshirani (2010), "Regularization paths for generalized
linear models via coordinate descent", J. Stat. Softw. 33.
"""
import numbers
import os
import warnings

import numpy as np
import scipy.linalg
import scipy.linalg.blas
import scipy.sparse as sp

from .._core import _coordinate_descent, _ridge
from ._common import LinearDecisionMixin, map_threads, resolve_n_jobs
from .._validation import check_max_iter, iteration_budget
from .._validation import (check_classification_data, class_weight_per_sample,
                           kernel_rows)
from .._validation import blas_threads, check_positive
from .._validation import check_finite_fit, check_finite_values, check_no_overflow
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["LeastSquaresClassifier", "RidgeClassifier", "LassoClassifier"]


def _targets(codes, n_classes):
    """+-1 indicator targets: (n, 1) for two classes, else (n, n_classes)."""
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((len(codes), n_classes))
    Y[np.arange(len(codes)), codes] = 1.0
    return Y


def blas_context(n_jobs):
    """BLAS limited to ``n_jobs`` threads (None: one) around a least-squares solver.

    The Gram matrices, factorisations and products of this family run in BLAS;
    linclass does not let BLAS start threads the caller did not ask for (see
    :func:`linclass._validation.blas_threads`): one thread unless ``n_jobs``
    says otherwise (-1: every CPU).  The solution does not depend on it beyond
    BLAS's own rounding.
    """
    return blas_threads(resolve_n_jobs(n_jobs, os.cpu_count() or 1))


class _CenteredOperator:
    """``Xt = D (X - 1 mu^T)`` applied without forming it (dense or CSR ``X``)."""

    def __init__(self, X, sw, fit_intercept):
        self.X = X
        self.v = np.sqrt(sw)
        self._sw = sw
        self._fit_intercept = fit_intercept
        self._mu = None

    @property
    def mu(self):
        """The (weighted) column means ``X^T sw / sum(sw)`` (zeros without an
        intercept), computed on first use unless :meth:`set_column_sums` gave them."""
        if self._mu is None:
            self.set_column_sums(None)
        return self._mu

    def set_column_sums(self, sums):
        """Set ``mu`` from ``sums = X^T sw`` when a kernel computed them on the way
        (``None``: compute them here, one product with ``X``)."""
        total = self._sw.sum()
        if self._fit_intercept and total > 0:
            if sums is None:
                sums = np.asarray(self.X.T @ self._sw).ravel()
            self._mu = np.asarray(sums, dtype=np.float64) / total
        else:
            self._mu = np.zeros(self.X.shape[1])

    @property
    def needs_column_sums(self):
        """Whether ``mu`` is still to be computed and is not zero."""
        return self._mu is None and self._fit_intercept and self._sw.sum() > 0

    def matmat(self, P):
        """Xt @ P  (n_samples, k)"""
        return self.v[:, None] * (np.asarray(self.X @ P) - (self.mu @ P)[None, :])

    def rmatmat(self, Z):
        """Xt.T @ Z  (n_features, k)"""
        DZ = self.v[:, None] * Z
        return np.asarray(self.X.T @ DZ) - np.outer(self.mu, DZ.sum(axis=0))


class _LeastSquaresBase(LinearDecisionMixin, ClassifierMixin, BaseEstimator):

    def _prepare(self, X, y, sample_weight):
        # every solver here reads a row's entries in any order (up to rounding):
        # unsorted CSR rows are not copied and sorted
        X, classes, codes, sw = check_classification_data(X, y, sample_weight,
                                                          accept_unsorted=True)
        sw = class_weight_per_sample(getattr(self, "class_weight", None), classes, codes, sw)
        if not np.any(sw > 0):
            raise ValueError("all sample weights are zero")
        Y = _targets(codes, len(classes))
        total = sw.sum()
        ybar = (sw @ Y) / total if self.fit_intercept else np.zeros(Y.shape[1])
        op = _CenteredOperator(X, sw, self.fit_intercept)
        Yt = op.v[:, None] * (Y - ybar)
        return X, classes, op, Yt, ybar

    def _publish(self, X, classes, coef, ybar, mu):
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.coef_ = np.ascontiguousarray(coef.T)              # (n_targets, n_features)
        self.intercept_ = ybar - self.coef_ @ mu
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)


def _dense_centered(op):
    X = op.X.toarray() if sp.issparse(op.X) else op.X
    return op.v[:, None] * (X - op.mu[None, :])


def solve_least_squares(op, Yt):
    """Minimum-norm least-squares ``W`` of ``Xt W = Yt`` (``op`` a :class:`_CenteredOperator`).

    Normal equations through the eigendecomposition of the Gram matrix:
    directions with eigenvalue <= 1e-10 * largest are dropped, which gives
    the minimum-norm solution when ``Xt^T Xt`` is singular.  Shared by
    :class:`LeastSquaresClassifier` and :class:`linclass.linear.regression.LinearRegression`.
    """
    A = _dense_centered(op)
    gram = A.T @ A
    rhs = A.T @ Yt
    eigval, eigvec = scipy.linalg.eigh(gram, check_finite=False)
    keep = eigval > 1e-10 * max(eigval.max(), 0.0)
    return eigvec[:, keep] @ ((eigvec[:, keep].T @ rhs) / eigval[keep][:, None])


def check_ridge_params(est):
    """The parameters every ridge estimator shares (alpha, tol, max_iter, solver)."""
    check_positive(est.alpha, "alpha")
    check_positive(est.tol, "tol")
    if est.max_iter is not None:
        check_max_iter(est, est.max_iter)
    if est.solver not in ("auto", "cholesky", "cg"):
        raise ValueError("solver must be 'auto', 'cholesky' or 'cg', got %r" % (est.solver,))


#: Largest ``n_features`` for which ``solver="auto"`` forms the Gram matrix of
#: sparse input (a dense ``d x d`` matrix from one sparse product, O(d^3 / 3)
#: Cholesky); beyond it, or when there are more features than samples, conjugate
#: gradients (measured: the sparse kernel ``X X^T`` plus its factorisation lost to
#: CG on 800 x 20000 at 1 % density, 0.079 s vs 0.015 s).
SPARSE_GRAM_LIMIT = 1000


#: ``solver="auto"`` on dense ``X`` with ``n_samples >= n_features >=
#: MIXED_MIN_FEATURES`` and at most ``n_features / MIXED_FEATURES_PER_TARGET``
#: target columns uses the mixed-precision Cholesky (``"primal_mixed"``, see
#: :func:`_solve_mixed`).  Cost model: the float32 Gram matrix halves the
#: ``n p^2 / 2`` multiply-adds of ``syrk`` (twice the SIMD width); each
#: refinement step costs two memory-bound float64 products with ``X`` (``X W``
#: and ``X^T Z``, about 8x the cost per multiply-add of ``syrk``; by blocks of
#: rows, one read of ``X`` from memory), and two or three steps are needed.  Measured (one thread) on Gaussian 10000 x 500: the
#: float64 ``syrk`` 0.065 s, float32 0.034 s, one float64 pass 0.002 s.
MIXED_MIN_FEATURES = 200
MIXED_FEATURES_PER_TARGET = 50


def ridge_solver(X, solver="auto", n_targets=1):
    """The solver ``solve_ridge`` uses for ``X``: ``"primal"`` (Cholesky of the
    ``n_features``-side Gram matrix ``Xt^T Xt``), ``"dual"`` (Cholesky of the
    ``n_samples``-side kernel ``Xt Xt^T``), ``"cg"`` (conjugate gradients on the
    primal normal equations) or ``"cg_dual"`` (on the kernel system, when
    ``n_samples < n_features``: the same two sparse products per iteration, but
    the CG vectors have ``n_samples`` rows; measured 1.35x faster on 20NG tf-idf
    3000 x 68466).  For CSR input both CG forms apply their operator to all target
    columns at once in one fused pass over ``X`` (:mod:`linclass._core._ridge`; the
    kernel form by columns, ``X X^T Z = sum_j x_j (x_j^T Z)``, touching only
    (n_samples, k) blocks): on 20NG tf-idf 3000 x 68466 with 20 classes one product
    costs ~10 ms against ~60 ms for scipy's two sparse products with the centring
    in numpy, and the whole fit takes 22 iterations.  The kernel form by Cholesky
    (the dense 3000 x 3000 ``Xt Xt^T``, n^3 / 3 = 9 Gflop to factorise) would cost
    more than those 22 products.

    ``"primal_mixed"``: the primal Gram matrix in float32, factorised in
    float64 and refined against the exact float64 operator until the
    corrections reach float64 rounding (:func:`_solve_mixed`; it falls back to
    ``"primal"`` when the refinement does not converge, e.g. ill-conditioned
    or badly scaled ``X``).

    ``"auto"``: dense input -> ``"primal_mixed"`` when ``n_samples >=
    n_features >= MIXED_MIN_FEATURES`` (200) and ``n_targets <= n_features /
    MIXED_FEATURES_PER_TARGET`` (50), else Cholesky on the smaller side (``X Xt^T`` when
    ``n_samples < n_features``); sparse input -> the primal Gram matrix when
    ``n_features <= min(n_samples, SPARSE_GRAM_LIMIT)`` (from one sparse
    product: ``X`` is never densified), else conjugate gradients.
    ``"cholesky"``: the smaller side whatever the input (sparse ``X`` is
    densified).  ``"cg"``: conjugate gradients on the smaller side.
    """
    n_samples, n_features = X.shape
    side = "primal" if n_features <= n_samples else "dual"
    cg = "cg" if side == "primal" else "cg_dual"
    if solver == "cg":
        return cg
    if solver == "auto" and sp.issparse(X) and (side == "dual"
                                               or n_features > SPARSE_GRAM_LIMIT):
        return cg
    if (solver == "auto" and side == "primal" and not sp.issparse(X)
            and n_features >= MIXED_MIN_FEATURES
            and n_targets * MIXED_FEATURES_PER_TARGET <= n_features):
        return "primal_mixed"
    return side


def _syrk_upper(A, outer=False):
    """Upper triangle of ``A^T A`` (or ``A A^T`` when ``outer``) by BLAS ``syrk``
    (half the flops of ``A.T @ A``); ``A`` C-contiguous, read without a copy."""
    return scipy.linalg.blas.dsyrk(1.0, np.ascontiguousarray(A).T, trans=int(outer),
                                   lower=0)


def _sparse_gram(X, sw):
    """``X^T diag(sw) X`` (dense, full) of a validated sparse ``X``: for CSR input
    one pass over the rows of :func:`linclass._core._ridge.sparse_gram` (a dense
    ``d x d`` accumulator; the callers limit ``d``, see :data:`SPARSE_GRAM_LIMIT`);
    measured on a9a (32561 x 123, 14 stored values a row) ~6x faster than
    scipy's ``X.T @ diag(sw) @ X`` (which converts ``X.T`` to CSR, counts, fills and
    sorts a sparse product before densifying it)."""
    if X.format != "csr" or X.nnz == 0:
        return np.asarray((X.T @ sp.diags(sw) @ X).toarray())
    return _ridge.sparse_gram(np.ascontiguousarray(X.data, dtype=np.float64),
                              np.ascontiguousarray(X.indices, dtype=np.int32),
                              np.ascontiguousarray(X.indptr, dtype=np.int32), X.shape[1],
                              np.ascontiguousarray(sw, dtype=np.float64))


def _centred_gram(op, side, densify):
    """Upper triangle of ``Xt^T Xt`` (``side="primal"``) or ``Xt Xt^T`` (``"dual"``),
    ``Xt = D^1/2 (X - 1 mu^T)``, without forming ``Xt`` for sparse ``X`` (primal
    side) nor for dense ``X`` with unit weights (primal side)."""
    X, v, mu = op.X, op.v, op.mu
    sw = v * v
    total = float(sw.sum())
    if sp.issparse(X) and not densify:
        # X^T D X - total mu mu^T   (sw @ X = total mu); only the primal side
        G = _sparse_gram(X, sw)
        G -= total * np.outer(mu, mu)
        return G
    if side == "primal" and not sp.issparse(X):
        unit = bool(np.all(sw == 1.0))
        G = _syrk_upper(X if unit else v[:, None] * X)
        G -= total * np.outer(mu, mu)
        return G
    A = _dense_centered(op)
    return _syrk_upper(A, outer=side == "dual")


def solve_ridge(op, Yt, alpha, solver, tol, max_iter, owner="Ridge", finite_checked=True):
    """``W`` of ``(Xt^T Xt + alpha I) W = Xt^T Yt``'s normal equations; returns (W, n_iter).

    ``solver``: ``"cholesky"`` (the primal Gram matrix, or the kernel form
    ``W = Xt^T (Xt Xt^T + alpha I)^{-1} Yt`` when there are more features than
    samples), ``"cg"`` (conjugate gradients with implicit centring, sparse
    stays sparse) or ``"auto"`` (see :func:`ridge_solver`: Cholesky on the
    smaller side for dense input, on the primal side for sparse input with at
    most :data:`SPARSE_GRAM_LIMIT` features and more samples, else CG).  The
    Gram matrices come from BLAS ``syrk`` (dense) or one sparse product,
    centred by a rank-one correction, and are factorised by Cholesky.
    Warns (``ConvergenceWarning``, naming ``owner``) when CG hits ``max_iter``.
    Shared by :class:`RidgeClassifier` and :class:`linclass.linear.regression.Ridge`.
    ``finite_checked=False``: ``X`` comes from ``check_X(..., finite=False)``;
    the mixed-precision path checks its values on its own pass (a NaN or an
    infinity makes the float32 Gram matrix non-finite, and the path gives up),
    every other path checks them first.
    """
    method = ridge_solver(op.X, solver, Yt.shape[1])
    if method == "primal_mixed":
        coef = _solve_mixed(op, Yt, alpha)
        if coef is not None:
            return coef, 1
        method = "primal"
    if not finite_checked:
        check_finite_values(op.X, "X")
    if method not in ("cg", "cg_dual"):
        G = _centred_gram(op, method, densify=solver == "cholesky")
        G[np.diag_indices_from(G)] += alpha
        factor = scipy.linalg.cho_factor(G, lower=False, overwrite_a=True, check_finite=False)
        if method == "primal":
            coef = scipy.linalg.cho_solve(factor, op.rmatmat(Yt), check_finite=False)
        else:
            coef = op.rmatmat(scipy.linalg.cho_solve(factor, Yt, check_finite=False))
        return coef, 1
    coef, n_iter, converged = _conjugate_gradient(op, Yt, alpha, tol, max_iter,
                                                  dual=method == "cg_dual")
    if not converged:
        warnings.warn("%s: conjugate gradients reached max_iter=%d before tol=%g"
                      % (owner, n_iter, tol), ConvergenceWarning)
    return coef, n_iter


def _solve_mixed(op, Yt, alpha, max_steps=10):
    """Ridge on the primal side in mixed precision, or None when it does not converge.

    ``A = float32(Xt)`` (one pass, :func:`linclass._core._ridge.centred_float32`),
    ``G = float64(A^T A) + alpha I`` (float32 ``syrk`` through numpy: half the
    time of the float64 one) factorised by Cholesky in float64, then iterative
    refinement against the exact operator: ``R = Xt^T Yt - (Xt^T Xt + alpha
    I) W = Xt^T (Yt - Xt W) - alpha W`` in float64 (the two products by blocks of
    :data:`MIXED_BLOCK_ROWS` rows), ``W += G^{-1} R``.  The error
    contracts by about ``cond(Xt^T Xt + alpha I) * 1e-7`` a step (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., ch. 12 (iterative refinement);
    Carson & Higham 2018 for the mixed-precision form): stops when a correction is
    below 1e-14 of ``max|W|`` or the next one, extrapolated from the contraction
    of the last two, is below 1e-15 of it, or when the corrections stop shrinking (float64
    rounding of the residual, the accuracy of the float64 Cholesky solution
    itself) below 1e-9 of it.  Returns None (the caller falls back to the
    float64 Gram matrix) when the float32 Gram is not positive definite or
    not finite, or the corrections stagnate above that or do not reach it in
    ``max_steps`` steps."""
    X = np.ascontiguousarray(op.X, dtype=np.float64)
    VY = op.v[:, None] * Yt
    # X^T sw (the column sums, mu) and X^T (v Yt) by blocks of MIXED_BLOCK_ROWS rows:
    # each block read from memory once, the second product from cache
    vectors = ([op.v * op.v] if op.needs_column_sums else []) + list(VY.T)
    products = [np.zeros(X.shape[1]) for _ in vectors]
    for start in range(0, X.shape[0], MIXED_BLOCK_ROWS):
        XbT = X[start:start + MIXED_BLOCK_ROWS].T
        for u, out in zip(vectors, products):
            out += XbT @ u[start:start + MIXED_BLOCK_ROWS]
    if op.needs_column_sums:
        op.set_column_sums(products.pop(0))
    XVY = np.column_stack(products)
    B = XVY - np.outer(op.mu, VY.sum(axis=0))                 # Xt^T Yt
    A = _ridge.centred_float32(X, np.ascontiguousarray(op.mu, dtype=np.float64),
                               np.ascontiguousarray(op.v, dtype=np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        G = (A.T @ A).astype(np.float64)               # numpy calls ssyrk for A.T @ A
    del A
    if not np.isfinite(G).all():
        return None
    G[np.diag_indices_from(G)] += alpha
    try:
        factor = scipy.linalg.cho_factor(G, lower=False, overwrite_a=True,
                                         check_finite=False)
    except np.linalg.LinAlgError:
        return None
    W = scipy.linalg.cho_solve(factor, B, check_finite=False)
    previous = np.inf
    v = op.v
    mu = op.mu
    for _ in range(max_steps):
        # R = Xt^T (Yt - Xt W) - alpha W by blocks of MIXED_BLOCK_ROWS rows: each block
        # is read from memory once (X_b W), then again from cache (X_b^T Z_b)
        muW = mu @ W
        R = -alpha * W
        zsum = np.zeros(W.shape[1])
        for start in range(0, X.shape[0], MIXED_BLOCK_ROWS):
            Xb = X[start:start + MIXED_BLOCK_ROWS]
            vb = v[start:start + MIXED_BLOCK_ROWS, None]
            Z = vb * (Yt[start:start + MIXED_BLOCK_ROWS] - vb * (Xb @ W - muW))
            R += Xb.T @ Z
            zsum += Z.sum(axis=0)
        R -= np.outer(mu, zsum)
        dW = scipy.linalg.cho_solve(factor, R, check_finite=False)
        W += dW
        size = float(np.max(np.abs(W)))
        step = float(np.max(np.abs(dW)))
        if not np.isfinite(step):
            return None
        # the contraction factor (unknown after the first correction)
        ratio = step / previous if np.isfinite(previous) and previous > 0 else 1.0
        if step <= 1e-14 * size or (ratio < 0.1 and step * ratio <= 1e-15 * size):
            return W                     # the next correction would be below 1e-15
        if ratio > 0.5 and np.isfinite(previous):
            return W if step <= 1e-9 * size else None
        previous = step
    return None


#: Rows a block of the mixed-precision ridge's refinement residual (:func:`_solve_mixed`):
#: 512 rows of 500 features are 2 MB, read back from cache for the second product.
#: Measured (loaded, one thread) on Gaussian 10000 x 500: 4.4 ms a residual against
#: 5.3 ms for the two whole-matrix products (64 rows: 7.0 ms, call overheads).
MIXED_BLOCK_ROWS = 512


def _fused_operator(op, alpha, dual, k):
    """``P -> (Xt Xt^T + alpha I) P`` (``dual``) or ``(Xt^T Xt + alpha I) P`` by the fused
    passes of :mod:`linclass._core._ridge` for CSR ``X`` (None for dense ``X``: the
    numpy products are BLAS calls there).  Each product is one pass over ``X``: the
    dual one over its columns (a CSC copy made here), the primal one over its rows."""
    X = op.X
    if not sp.issparse(X) or X.format != "csr" or X.nnz == 0:
        return None
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
    n, d = X.shape
    mu = np.ascontiguousarray(op.mu, dtype=np.float64)
    if dual:
        v = np.ascontiguousarray(op.v, dtype=np.float64)
        m = np.ascontiguousarray(np.asarray(X @ mu).ravel(), dtype=np.float64)
        mumu = float(mu @ mu)
        csc = X.tocsc()
        c_data = np.ascontiguousarray(csc.data, dtype=np.float64)
        c_rows = np.ascontiguousarray(csc.indices, dtype=np.int32)
        c_ptr = np.ascontiguousarray(csc.indptr, dtype=np.int32)

        def apply(Q):
            Q = np.ascontiguousarray(Q, dtype=np.float64)
            return _ridge.dual_apply(c_data, c_rows, c_ptr, d, v, m, mumu, float(alpha), Q,
                                     np.empty_like(Q))

        apply.to_primal = lambda A: _ridge.dual_to_primal(              # noqa: E731
            c_data, c_rows, c_ptr, d, v, mu, np.ascontiguousarray(A, dtype=np.float64))
    else:
        sw = np.ascontiguousarray(op.v * op.v, dtype=np.float64)

        def apply(P):
            P = np.ascontiguousarray(P, dtype=np.float64)
            return _ridge.primal_apply(data, indices, indptr, n, sw, mu, float(alpha), P,
                                       np.empty_like(P))
    return apply


def _conjugate_gradient(op, Yt, alpha, tol, max_iter, dual=False):
    """CG on (Xt^T Xt + alpha I) W = Xt^T Yt, one independent CG per column; with
    ``dual``, on (Xt Xt^T + alpha I) A = Yt and W = Xt^T A (the primal residual
    is Xt^T times the dual one)."""
    if dual:
        B = Yt
        apply = _fused_operator(op, alpha, True, Yt.shape[1]) or (
            lambda P: op.matmat(op.rmatmat(P)) + alpha * P)           # noqa: E731
    else:
        B = op.rmatmat(Yt)                                   # (d, k)
        apply = _fused_operator(op, alpha, False, Yt.shape[1]) or (
            lambda P: op.rmatmat(op.matmat(P)) + alpha * P)           # noqa: E731
    d, k = B.shape
    max_iter = max_iter if max_iter is not None else max(op.X.shape[1], 10)
    W = np.zeros((d, k))
    R = B.copy()
    P = R.copy()
    rs = np.sum(R * R, axis=0)
    stop = (float(tol) * np.sqrt(np.sum(B * B, axis=0))) ** 2
    it = 0
    active = rs > stop
    while it < max_iter and np.any(active):
        AP = apply(P)
        pAp = np.sum(P * AP, axis=0)
        step = np.where(active, rs / np.where(pAp > 0, pAp, 1.0), 0.0)
        W += step * P
        R -= step * AP
        rs_new = np.sum(R * R, axis=0)
        beta = np.where(active, rs_new / np.where(rs > 0, rs, 1.0), 0.0)
        P = R + beta * P
        rs = rs_new
        active = rs > stop
        it += 1
    if dual:
        W = apply.to_primal(W) if hasattr(apply, "to_primal") else op.rmatmat(W)
    return W, it, not np.any(active)


#: ``precompute="auto"`` uses covariance updates on dense ``X`` when
#: ``n_features <= min(LASSO_GRAM_LIMIT, LASSO_GRAM_PER_TARGET * n_targets)`` (and
#: ``n_samples >= n_features``).  Cost model: the Gram matrix is one BLAS ``syrk``,
#: ``n_samples * n_features^2 / 2`` multiply-adds at BLAS-3 speed (about 5x the
#: rate of a memory-bound column sweep), shared by every target column; naive
#: updates cost two sweeps of ``n_samples`` per coordinate and pass, for each
#: target, plus one transposed copy of ``X``.  With the ~10 passes a lasso
#: typically needs, the Gram matrix pays off below about 100 features per target
#: column.  Measured (loaded) on dense Gaussian 10000 x 500, one target, 9 passes:
#: naive 0.14 s, covariance 0.22 s, scikit-learn 0.17 s.
LASSO_GRAM_PER_TARGET = 100
LASSO_GRAM_LIMIT = 2000


#: Passes over the features a lasso is assumed to take when ``precompute="auto"``
#: weighs a sparse Gram matrix against naive updates (:func:`_sparse_gram_pays`;
#: measured at ``alpha=1e-3``: a9a 61-163 passes, w8a 44-181; with 10, w8a's
#: first 8000 rows fell just on the naive side: 0.034 s against 0.0065 s).
LASSO_SPARSE_PASSES = 20


def _sparse_gram_pays(X, n_targets=1):
    """Whether covariance updates beat naive ones on sparse ``X`` (cost model in
    multiply-adds): the Gram matrix costs ``sum_i nnz_i^2 / 2`` once
    (:func:`linclass._core._ridge.sparse_gram`, ``nnz_i`` the stored values of
    row ``i``) and at most ``n_features^2`` a pass and target; a naive pass
    costs ``2 nnz`` a target (a column's product and its residual update).
    Covariance when ``gram + P k d^2 <= P k 2 nnz`` with ``P =
    LASSO_SPARSE_PASSES``, ``k = n_targets``.  On a9a (32561 x 123, 14 values a
    row) the Gram matrix costs 3.5 naive passes and a covariance pass 1/30 of
    one: measured 0.009 s against 0.165 s for the 163 naive passes."""
    row_nnz = np.diff(X.indptr).astype(np.float64)
    gram = 0.5 * float(row_nnz @ row_nnz)
    d = X.shape[1]
    work = LASSO_SPARSE_PASSES * n_targets
    return gram + work * float(d) * d <= work * 2.0 * X.nnz


def check_lasso_params(est):
    """The parameters every lasso estimator shares (alpha, tol, max_iter, precompute)."""
    check_positive(est.alpha, "alpha")
    check_positive(est.tol, "tol")
    check_max_iter(est, est.max_iter)
    if not (isinstance(est.precompute, (bool, np.bool_)) or
            (isinstance(est.precompute, str) and est.precompute == "auto")):
        raise ValueError("precompute must be 'auto', True or False, got %r"
                         % (est.precompute,))


def lasso_updates(X, precompute="auto", n_targets=1):
    """The coordinate-descent updates a lasso on ``X`` uses: ``"covariance"`` or ``"naive"``.

    ``"covariance"`` (glmnet's covariance updates, ``precompute=True``): the
    centred Gram matrix ``Xt^T Xt`` is formed once (BLAS ``syrk`` for dense
    ``X``, one sparse product for sparse ``X``) and coordinate descent keeps
    the gradient ``Xt^T r``: an update costs O(n_features), independent of
    ``n_samples``, and all target columns share the matrix.  ``"naive"``
    (``precompute=False``): the residual is kept and an update costs one sweep
    of the feature's column (O(nnz) for sparse ``X``).

    ``"auto"``: covariance for dense ``X`` with ``n_samples >= n_features`` and
    ``n_features <= min(LASSO_GRAM_LIMIT, LASSO_GRAM_PER_TARGET * n_targets)``
    (``n_targets``: the target columns sharing the matrix, one per class for
    :class:`LassoClassifier` with more than two classes); for sparse ``X``
    (the Gram matrix from one pass over the rows, :func:`_sparse_gram`) when
    ``n_samples >= n_features``, ``n_features <= LASSO_GRAM_LIMIT`` and the
    cost model of :func:`_sparse_gram_pays` says the matrix and
    ``LASSO_SPARSE_PASSES`` (20) covariance passes cost less than as many naive
    passes (few features, few stored values a row: a9a, w8a); naive otherwise
    (wide ``X``, long sparse rows).
    """
    if isinstance(precompute, str):
        n_samples, n_features = X.shape
        if sp.issparse(X):
            gram = (n_samples >= n_features and n_features <= LASSO_GRAM_LIMIT
                    and _sparse_gram_pays(X, n_targets))
        else:
            gram = (n_samples >= n_features and n_features <= min(
                LASSO_GRAM_LIMIT, LASSO_GRAM_PER_TARGET * n_targets))
    else:
        gram = bool(precompute)
    return "covariance" if gram else "naive"


def lasso_columns(op):
    """The columns of ``D X`` as the rows a ``lasso_cd`` kernel reads (CSR of
    ``(D X)^T`` or the dense transpose), as :func:`kernel_rows` arrays."""
    X = op.X
    if sp.issparse(X):
        XT = sp.csr_matrix(sp.diags(op.v) @ X).T.tocsr()
        XT.sort_indices()
        XT = sp.csr_matrix((np.ascontiguousarray(XT.data, dtype=np.float64),
                            XT.indices.astype(np.int32), XT.indptr.astype(np.int32)),
                           shape=XT.shape)
    else:
        XT = np.ascontiguousarray((op.v[:, None] * X).T)
    return kernel_rows(XT)


def lasso_design(op, precompute="auto", n_targets=1):
    """What :func:`solve_lasso` reads of ``X``, prepared once (and reused along a
    path): ``("covariance", G)`` with ``G`` the full symmetric centred Gram
    matrix, ``("dense", (XT, sq))`` (naive updates on dense ``X``: the columns of
    ``D X`` as rows and their squared norms) or ``("naive", rows)`` with ``rows``
    the arrays of :func:`lasso_columns` (sparse ``X``)."""
    if lasso_updates(op.X, precompute, n_targets) == "covariance":
        G = _centred_gram(op, "primal", densify=False)
        lower = np.tril_indices(G.shape[0], -1)
        G[lower] = G.T[lower]                               # syrk filled the upper half
        return "covariance", np.ascontiguousarray(G)
    if not sp.issparse(op.X):
        sq = np.empty(op.X.shape[1])
        sums = np.empty(op.X.shape[1]) if op.needs_column_sums else None
        XT = _coordinate_descent.scaled_transpose(
            np.ascontiguousarray(op.X, dtype=np.float64), op.v, sq, sums)
        if sums is not None:
            op.set_column_sums(sums)              # mu from the copy: no product with X
        return "dense", (XT, sq)
    return "naive", lasso_columns(op)


def solve_lasso(op, Yt, alpha, tol, max_iter, W0=None, n_jobs=None, design=None,
                precompute="auto"):
    """Lasso by coordinate descent for each column of ``Yt``.

    Minimises ``1 / (2 n) ||yt - Xt w||^2 + alpha ||w||_1`` (``n`` the sum of
    the sample weights) per column, from ``W0`` (rows: columns of ``Yt``) or
    zeros, the columns on ``n_jobs`` threads, with the updates
    :func:`lasso_updates` chooses.  ``design``: the result of
    :func:`lasso_design` when the caller reuses it (a regularisation path).
    Returns ``(W, results)`` with ``W`` of shape (n_features, n_targets) and
    ``results`` a list of ``(w, n_iter, gap, gap_tol)``.  Shared by
    :class:`LassoClassifier`, :class:`linclass.linear.regression.Lasso` and
    :func:`linclass.linear.regression.lasso_path`.
    """
    n_samples, n_features = op.X.shape
    if design is None:
        design = lasso_design(op, precompute, Yt.shape[1])
    kind, prepared = design
    lam = float(alpha) * float(np.sum(op.v ** 2))
    if kind == "covariance":
        C = np.ascontiguousarray(op.rmatmat(Yt).T)           # (n_targets, n_features)
        yy = np.einsum("ij,ij->j", Yt, Yt)

    def solve(k):
        w = np.array(W0[k], dtype=np.float64) if W0 is not None else np.zeros(n_features)
        if kind == "covariance":
            n_iter, gap, gap_tol = _coordinate_descent.lasso_cd_gram(
                prepared, C[k], float(yy[k]), w, lam, float(tol), iteration_budget(max_iter))
        elif kind == "dense":
            n_iter, gap, gap_tol = _coordinate_descent.lasso_cd_dense(
                prepared[0], prepared[1], op.mu, op.v, np.ascontiguousarray(Yt[:, k]), w,
                lam, float(tol), iteration_budget(max_iter))
        else:
            n_iter, gap, gap_tol = _coordinate_descent.lasso_cd(
                **prepared, n_features=n_features, n_samples=n_samples, mu=op.mu, v=op.v,
                yt=np.ascontiguousarray(Yt[:, k]), w=w, lam=lam, tol=float(tol),
                max_iter=iteration_budget(max_iter))
        return w, n_iter, gap, gap_tol

    results = map_threads(solve, range(Yt.shape[1]), n_jobs)
    return np.column_stack([r[0] for r in results]), results


def fit_lasso(est, X, op, Yt, owner, finite_checked=True):
    """The fit both lasso estimators share: validate the parameters, warm-start
    from ``est.coef_`` when asked and its shape fits, solve, set ``n_iter_`` and
    warn when a column did not converge.  Returns ``(coef, gaps)`` with ``coef``
    of shape (n_features, n_targets).  ``finite_checked=False``: ``X`` comes
    from ``check_X(..., finite=False)``; its values are checked here before a
    kernel reads them (from the dense transposed copy's squared column norms
    when there is one: a NaN or an infinity makes its column's norm one)."""
    # dense X, unit weights, naive updates: the overflow check is the sum of the
    # squared column norms the transposed copy of lasso_design computes anyway
    # (the same sum as check_no_overflow's, without its extra pass over X)
    fused = (not sp.issparse(X) and np.all(op.v == 1.0)
             and lasso_updates(X, est.precompute, Yt.shape[1]) == "naive")
    if not fused:
        if not finite_checked:
            check_finite_values(X, "X")
        check_no_overflow(X, est)
    design = lasso_design(op, est.precompute, Yt.shape[1])
    if fused and not np.isfinite(design[1][1].sum()):
        if not finite_checked:
            check_finite_values(X, "X")                        # NaN or infinity: named
        check_no_overflow(X, est)                             # raises, naming the values
    W0 = None
    prev = getattr(est, "coef_", None)
    if est.warm_start and prev is not None:
        prev = np.atleast_2d(prev)
        if prev.shape == (Yt.shape[1], X.shape[1]):
            W0 = prev
    coef, results = solve_lasso(op, Yt, float(est.alpha), float(est.tol),
                                iteration_budget(est.max_iter), W0, est.n_jobs, design=design)
    est.n_iter_ = int(max(r[1] for r in results))
    if any(r[2] > r[3] for r in results):
        warnings.warn("%s: coordinate descent reached max_iter=%d with duality gap above "
                      "tol" % (owner, est.max_iter), ConvergenceWarning)
    return coef, np.array([r[2] for r in results])


class LeastSquaresClassifier(_LeastSquaresBase):
    """Least-squares classification from the normal equations.

    Solves ``Xt^T Xt w = Xt^T yt`` (centred, weighted data) through the
    eigendecomposition of ``Xt^T Xt``; when it is singular (eigenvalues below
    1e-10 times the largest), the minimum-norm least-squares solution.  For two classes
    the rule is ``c(x) = sign(x.w + b - t)``.

    Parameters
    ----------
    threshold : float, default=0.0
        ``t`` above: subtracted from every score.
    fit_intercept : bool, default=True
    class_weight : None, "balanced" or dict
        Multiplies each example's squared error.
    n_jobs : None or int, default=None
        BLAS threads for the Gram matrix and its eigendecomposition (None: one,
        -1: every CPU; see :func:`blas_context`).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_
    n_iter_ : int
        Always 1 (direct solver).

    Notes
    -----
    Sparse ``X`` is densified (the Gram matrix is dense anyway); use
    :class:`RidgeClassifier` for large sparse problems.
    """

    def __init__(self, threshold=0.0, fit_intercept=True, class_weight=None, n_jobs=None):
        self.threshold = threshold
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit by least squares (returns self)."""
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, numbers.Real) \
                or not np.isfinite(self.threshold):
            raise ValueError("threshold must be a finite number, got %r" % (self.threshold,))
        with blas_context(self.n_jobs):
            X, classes, op, Yt, ybar = self._prepare(X, y, sample_weight)
            coef = solve_least_squares(op, Yt)
        self._publish(X, classes, coef, ybar, op.mu)
        self.intercept_ = self.intercept_ - float(self.threshold)
        self.n_iter_ = 1
        return self


class RidgeClassifier(_LeastSquaresBase):
    """Ridge (L2-regularised least-squares) classification.

    Solves ``(Xt^T Xt + alpha I) W = Xt^T Yt`` for the centred, weighted data.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (> 0).
    solver : {"auto", "cholesky", "cg"}, default="auto"
        ``"cholesky"``: dense factorisation of the ``n_features`` x
        ``n_features`` system, or of the ``n_samples`` x ``n_samples`` kernel
        system ``W = Xt^T (Xt Xt^T + alpha I)^{-1} Yt`` when there are more
        features than samples.  ``"cg"``: conjugate gradients on the normal
        equations with the centring applied implicitly (sparse ``X`` stays
        sparse), all target columns at once.  ``"auto"``: Cholesky on the
        smaller side of ``X`` for dense input -- in mixed precision (float32
        Gram matrix, float64 factor, refined against the float64 data to the
        accuracy of the float64 Cholesky; falls back to it when the refinement
        does not converge) when ``n_samples >= n_features >= 200`` and there are
        at most ``n_features / 50`` target columns; for sparse input the
        ``n_features``-side Gram matrix when ``n_features <= n_samples`` and
        ``n_features <= SPARSE_GRAM_LIMIT`` (1000; one pass over the rows, ``X``
        never densified), CG otherwise (see :func:`ridge_solver`).
    tol : float, default=1e-6
        CG stops when every column's residual norm is <= tol * ||Xt^T Yt||
        (on the kernel system, with more features than samples: <= tol *
        ||Yt||).
    max_iter : int or None, default=None
        CG iterations (None: ``n_features``).
    fit_intercept : bool, default=True
    class_weight : None, "balanced" or dict
    n_jobs : None or int, default=None
        BLAS threads for the Gram matrix, factorisation and products (None:
        one, -1: every CPU; see :func:`blas_context`).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_
    n_iter_ : int
        CG iterations (1 for Cholesky).
    """

    def __init__(self, alpha=1.0, solver="auto", tol=1e-6, max_iter=None, fit_intercept=True,
                 class_weight=None, n_jobs=None):
        self.alpha = alpha
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit the ridge classifier (returns self)."""
        check_ridge_params(self)
        with blas_context(self.n_jobs):
            X, classes, op, Yt, ybar = self._prepare(X, y, sample_weight)
            coef, n_iter = solve_ridge(op, Yt, float(self.alpha), self.solver, float(self.tol),
                                       iteration_budget(self.max_iter), owner="RidgeClassifier")
        self._publish(X, classes, coef, ybar, op.mu)
        self.n_iter_ = int(n_iter)
        return self


class LassoClassifier(_LeastSquaresBase):
    """L1-regularised least-squares classification by coordinate descent.

    For each target column ``yt`` (one for two classes, else one per class)
    minimises ``1 / (2 n) ||yt - Xt w||^2 + alpha ||w||_1`` (``n`` the sum of
    the sample weights; the objective of scikit-learn's ``Lasso``) by cyclic
    coordinate descent in Cython, on the centred data without forming it.

    Parameters
    ----------
    alpha : float, default=0.01
        L1 strength (> 0).
    tol : float, default=1e-4
        Duality-gap tolerance, relative to ``||yt||^2`` (as scikit-learn).
    max_iter : int, default=1000
        Passes over the features.
    fit_intercept : bool, default=True
    class_weight : None, "balanced" or dict
    warm_start : bool, default=False
        Start from the previous ``coef_``.
    n_jobs : None or int
        Threads for the per-class problems, and BLAS threads for the Gram
        matrix (None: one, -1: every CPU; see :func:`blas_context`).
    precompute : "auto", True or False, default="auto"
        Covariance updates on the centred Gram matrix (True, shared by all
        classes) or naive updates on the residual (False); "auto" chooses by
        shape and sparsity (covariance for dense ``X`` with at most 100 features
        per class, and for sparse ``X`` with few features and short rows, such
        as a9a), see :func:`lasso_updates`.  Same solution either way.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_
    n_iter_ : int
        Largest number of passes over the per-class problems.
    dual_gap_ : ndarray of shape (n_targets,)
    """

    def __init__(self, alpha=0.01, tol=1e-4, max_iter=1000, fit_intercept=True,
                 class_weight=None, warm_start=False, n_jobs=None, precompute="auto"):
        self.alpha = alpha
        self.precompute = precompute
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit by coordinate descent (returns self)."""
        check_lasso_params(self)
        with blas_context(self.n_jobs):
            X, classes, op, Yt, ybar = self._prepare(X, y, sample_weight)
            coef, self.dual_gap_ = fit_lasso(self, X, op, Yt, "LassoClassifier")
        self._publish(X, classes, coef, ybar, op.mu)
        return self
