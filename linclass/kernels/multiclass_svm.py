"""The kernelised multi-class structural SVM (kernel Crammer--Singer, class descriptions, taxonomies).

:class:`KernelMultiClassSVM` minimises, over ``w`` in the feature space of the
joint kernel ``k((x, y), (x', y')) = k(x, x') Lambda(y) . Lambda(y')``,

    1/2 ||w||^2 + sum_i C_i max_y [loss(y_i, y) + F(x_i, y) - F(x_i, y_i)]

-- the objective of :class:`~linclass.MultiClassSVM` (and, for one-hot
classes and the 0/1 loss, of :class:`~linclass.CrammerSingerSVC`) with the
inner product ``x . x'`` replaced by any kernel of :mod:`linclass.kernels`.
``Lambda`` is the identity for ``structure="onehot"`` (the kernel
Crammer--Singer SVM), the user's class-description matrix for
``structure="description"`` and the path indicator of each leaf for
``structure="taxonomy"`` (``Lambda(y) . Lambda(y')`` = depth of the lowest
common ancestor; the loss defaults to the tree distance).

It is solved in the dual, one block of ``n_classes`` variables per example
(:mod:`linclass._core._kernel_multiclass`: pairwise steps with exact line
search on each block, the scores of all examples kept up to date, the exact
duality gap as the stopping rule).  By the representer theorem

    F(x, y) = sum_{i in support_} sum_c dual_coef_[c, i] k(x_i, x) G[c, y] + intercept_[y]

with ``G = Lambda Lambda^T``.  For the kernels ``"linear"``, ``"poly"``,
``"rbf"`` and ``"sigmoid"`` the rows of the training Gram matrix are computed
when an example's block first moves and kept in an LRU cache of
``cache_size`` MB (double precision, ``8 n`` bytes a row); the rows of examples that
never move are never computed.  For precomputed, callable and string kernels,
and whenever the Gram matrix has to be checked (below), it is computed once
and held in memory (``8 n^2`` bytes).

Kernels that are positive semi-definite by construction (``"linear"``,
``"rbf"``, ``"poly"`` with ``coef0 >= 0``) are used as they are.  For the
others (``"sigmoid"``, ``"precomputed"``, callables and kernel objects) the
training Gram matrix is checked with :func:`~linclass.kernels.check_mercer`
(symmetric, smallest eigenvalue ``>= -1e-8 max|K|``; an ``O(n^3)``
eigenvalue computation) and a ``ValueError`` giving the smallest eigenvalue
is raised when it fails.  ``check_kernel=False`` skips the check: the dual is
then not concave, and the block-coordinate solver stops at a stationary point
(every block optimal), which need not be the global optimum.

References
----------
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
kernel-based vector machines. JMLR 2, 2001.
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005, sec. 4.1.
S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher. Block-coordinate
Frank-Wolfe optimization for structural SVMs. ICML 2013.
L. Cai, T. Hofmann. Hierarchical document categorization with support vector
machines. CIKM 2004.
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from .._core import _kernel_multiclass
from .._validation import (check_classification_target, check_is_fitted, check_positive,
                           check_sample_weight, check_target, draw_seed)
from ..base import BaseEstimator, ClassifierMixin, binary_decision
from ..exceptions import ConvergenceWarning
from ..joint.svm import class_structure
from .composition import check_mercer
from .pairwise import (KERNEL_CODES, check_coef0, check_degree, check_gamma,
                       check_kernel_name, row_sq_norms, rows_arguments)
from .representer import RepresenterMixin

__all__ = ["KernelMultiClassSVM"]


class KernelMultiClassSVM(RepresenterMixin, ClassifierMixin, BaseEstimator):
    """Multi-class structural SVM with a joint kernel, solved in the dual.

    Parameters
    ----------
    structure : {"onehot", "description", "taxonomy"}, default="onehot"
        Class representation ``Lambda`` (see the module docstring).
    C : float, default=1.0
        Cost of the hinge of each example (sum over examples, as
        :class:`~linclass.MultiClassSVM`).
    kernel : str, callable or kernel object, default="rbf"
        ``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"``, ``"precomputed"``
        (``X`` is then the Gram matrix, ``(n_samples, n_train)`` at predict),
        a callable ``kernel(X, Y)`` or a kernel object of
        :mod:`linclass.kernels` (string kernels take lists of sequences).
    gamma : float or None, default=None
        Width of rbf/poly/sigmoid (None: ``1 / n_features``).
    degree : int, default=3
    coef0 : float, default=1.0
    class_descriptions : array-like of shape (n_classes, n_attributes), optional
        Required for ``structure="description"``: row ``k`` is ``Lambda`` of
        class ``classes[k]``.
    classes : sequence, optional
        Labels of the description rows; may include classes absent from the
        training labels (default: the sorted training labels).
    taxonomy : dict, optional
        Required for ``structure="taxonomy"``: label -> root-to-leaf path tuple.
    loss_matrix : array-like of shape (n_classes, n_classes), optional
        In the order of ``classes_``; default 0/1 (tree distance for a taxonomy).
    fit_intercept : bool, default=True
        Add ``intercept_scaling ** 2`` to the kernel: the weight of a constant
        feature ``intercept_scaling``, regularised (as in liblinear and
        :class:`~linclass.MultiClassSVM`).
    intercept_scaling : float, default=1.0
    tol : float, default=1e-3
        Stop when the relative duality gap ``(P - D) / P`` is at most ``tol``
        (the objective is then within ``tol`` of the optimum, relative).
    max_iter : int, default=1000
        Passes over the examples.
    max_inner : int, default=50
        Pairwise steps per visit of an example's block.
    check_kernel : bool, default=True
        Check the Gram matrix of kernels that are not PSD by construction.
    cache_size : float, default=200
        Budget of the kernel-row cache in MB (``"linear"``, ``"poly"``,
        ``"rbf"``, ``"sigmoid"`` kernels; ``8 n_samples`` bytes a row; at least
        one row is always kept).
        It changes the speed, not the result.
    random_state : None, int or numpy Generator
        Order of the examples in each pass.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_vectors_ : ndarray of shape (n_classes, n_attributes)
        ``Lambda`` (the identity for one-hot classes).
    support_ : ndarray of shape (n_support,)
        Indices of the training examples with a non-zero dual block.
    dual_coef_ : ndarray of shape (n_classes, n_support)
        ``beta``: ``w = sum_s sum_c dual_coef_[c, s] phi(x_s) (x) Lambda(c)``;
        each column sums to zero, ``dual_coef_[c, s] <= 0`` off the true class.
    intercept_ : ndarray of shape (n_classes,)
    X_fit_ : the support inputs (rows ``support_`` of the training data;
        empty for ``kernel="precomputed"``)
    shape_fit_ : tuple, shape of the training ``X``
    objective_, dual_objective_ : float
        Primal and dual objectives at the solution.
    n_iter_ : int
        Passes run.
    n_kernel_rows_ : int
        Kernel rows computed during the fit (cache misses; ``n_samples`` when
        the full Gram matrix was computed).
    n_features_in_ : int
    coef_ : ndarray of shape (n_classes, n_features), linear kernel only
    """

    n_components = None         # RepresenterMixin: no Nystroem basis here

    def __init__(self, structure="onehot", *, C=1.0, kernel="rbf", gamma=None, degree=3,
                 coef0=1.0, class_descriptions=None, classes=None, taxonomy=None,
                 loss_matrix=None, fit_intercept=True, intercept_scaling=1.0, tol=1e-3,
                 max_iter=1000, max_inner=50, check_kernel=True, cache_size=200.0,
                 random_state=None):
        self.structure = structure
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_descriptions = class_descriptions
        self.classes = classes
        self.taxonomy = taxonomy
        self.loss_matrix = loss_matrix
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_inner = max_inner
        self.check_kernel = check_kernel
        self.cache_size = cache_size
        self.random_state = random_state

    def _psd_by_construction(self):
        if self.kernel in ("linear", "rbf"):
            return True
        return self.kernel == "poly" and isinstance(self.coef0, numbers.Real) \
            and self.coef0 >= 0

    def fit(self, X, y, sample_weight=None):
        """Solve the dual on inputs ``X`` and labels ``y`` (returns self)."""
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_positive(self.max_iter, "max_iter", integer=True)
        check_positive(self.max_inner, "max_inner", integer=True)
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.cache_size, "cache_size")
        if not callable(self.kernel):
            check_kernel_name(self.kernel)
        X = self._check_X(X, at_fit=True)
        n = self._n_rows(X)
        check_classification_target(y, n)         # >= 2 classes, discrete labels
        y = check_target(y, n)
        classes, codes, structure = class_structure(
            self.structure, y, 1, class_descriptions=self.class_descriptions,
            classes=self.classes, taxonomy=self.taxonomy, loss_matrix=self.loss_matrix)
        cost = float(self.C) * check_sample_weight(sample_weight, n)
        scale = float(self.intercept_scaling) ** 2 if self.fit_intercept else 0.0
        Lam = np.ascontiguousarray(structure.class_vectors, dtype=np.float64)
        G = np.ascontiguousarray(Lam @ Lam.T)
        L = np.ascontiguousarray(structure.loss_matrix, dtype=np.float64)
        k = G.shape[0]
        beta = np.zeros((n, k))
        F = np.zeros((n, k))
        codes32 = np.ascontiguousarray(codes, dtype=np.int32)
        solver = dict(tol=float(self.tol), max_iter=int(self.max_iter),
                      max_inner=int(self.max_inner), seed=draw_seed(self.random_state))
        if self._rows_on_demand():
            n_iter, primal, dual, converged, n_rows = _kernel_multiclass.solve_dual_rows(
                **self._row_kernel_arguments(X), shift=scale,
                cache_bytes=float(self.cache_size) * 2**20, y=codes32, G=G, L=L, C=cost,
                beta=beta, F=F, **solver)
        else:
            K = np.array(self._gram(X, None if self.kernel != "precomputed" else X),
                         dtype=np.float64, order="C", copy=True)
            if not np.isfinite(K).all():
                raise ValueError("the kernel matrix of the training data contains NaN or "
                                 "infinity")
            if self.check_kernel and not self._psd_by_construction():
                check_mercer(K, name="the kernel %r on the training data" % (self.kernel,))
            if scale:
                K += scale
            n_iter, primal, dual, converged = _kernel_multiclass.solve_dual(
                K, codes32, G, L, cost, beta, F, **solver)
            n_rows = n
        if not converged:
            warnings.warn("KernelMultiClassSVM: relative duality gap %.3g > tol=%g after %d "
                          "passes; increase max_iter" % ((primal - dual) / max(primal, 1e-300),
                                                        self.tol, n_iter), ConvergenceWarning)
        support = np.flatnonzero(np.any(beta != 0.0, axis=1))
        self.classes_ = classes
        self.class_vectors_ = Lam
        self.support_ = support.astype(np.intp)
        self.dual_coef_ = np.ascontiguousarray(beta[support].T)
        self.intercept_ = scale * (self.dual_coef_.sum(axis=1) @ G)
        if self.kernel == "precomputed":
            self.X_fit_ = np.empty((0, 0))
        elif isinstance(X, list):
            self.X_fit_ = [X[i] for i in support]
        else:
            self.X_fit_ = X[support]
        self.shape_fit_ = (n, n) if self.kernel == "precomputed" else (n, self.n_features_in_)
        self.objective_ = float(primal)
        self.dual_objective_ = float(dual)
        self.n_iter_ = int(n_iter)
        self.n_kernel_rows_ = int(n_rows)
        return self

    def _rows_on_demand(self):
        """Kernel rows computed on demand and cached (no Gram matrix check needed)."""
        return isinstance(self.kernel, str) \
            and self.kernel in ("linear", "poly", "rbf", "sigmoid") \
            and (self._psd_by_construction() or not self.check_kernel)

    def _row_kernel_arguments(self, X):
        """The data and kernel arguments of ``solve_dual_rows`` (kernel values checked finite)."""
        params = self._kernel_params()
        gamma = params.get("gamma")
        gamma = 1.0 / X.shape[1] if gamma is None else check_gamma(gamma)
        degree = check_degree(params.get("degree", 3))
        coef0 = check_coef0(params.get("coef0", 1.0))
        if not sp.issparse(X):
            X = np.ascontiguousarray(X, dtype=np.float64)
        sq = row_sq_norms(X)
        top = float(sq.max()) if len(sq) else 0.0
        # |x . x'| <= max ||x||^2 (Cauchy-Schwarz): a bound on every kernel value
        bound = np.float64(top if self.kernel in ("linear", "rbf")
                           else gamma * top + abs(coef0))
        if self.kernel == "poly":
            with np.errstate(over="ignore", invalid="ignore"):
                bound = bound ** degree
        if not np.isfinite(bound):
            raise ValueError("KernelMultiClassSVM: the %r kernel overflows on the training "
                             "data (squared row norms up to %.3g): rescale X"
                             % (self.kernel, top))
        args = rows_arguments(X)
        args.update(sq_norms=sq if self.kernel == "rbf" else None,
                    kind=KERNEL_CODES[self.kernel], gamma=float(gamma), coef0=float(coef0),
                    degree=degree)
        return args

    def _support_kernel(self, X):
        check_is_fitted(self, "dual_coef_")
        X = self._check_X(X, at_fit=False)
        if self.kernel == "precomputed":
            return X[:, self.support_]
        if len(self.support_) == 0:
            return np.zeros((self._n_rows(X), 0))
        return self._gram(X, self.X_fit_)

    def decision_function(self, X):
        """Class scores ``F(x, y)``, shape (n_samples, n_classes); for two classes
        ``F(x, classes_[1]) - F(x, classes_[0])``, shape (n_samples,)."""
        return binary_decision(self._class_scores(X))

    def _class_scores(self, X):
        Ks = self._support_kernel(X)
        G = self.class_vectors_ @ self.class_vectors_.T
        return np.asarray(Ks @ (self.dual_coef_.T @ G)) + self.intercept_

    def predict(self, X):
        """Highest-scoring class of each sample."""
        return self.classes_[np.argmax(self._class_scores(X), axis=1)]

    @property
    def coef_(self):
        """Primal class weights ``Lambda W`` (linear kernel only), (n_classes, n_features)."""
        check_is_fitted(self, "dual_coef_")
        if self.kernel != "linear":
            raise AttributeError("coef_ exists only for kernel='linear' (got kernel=%r); "
                                 "use dual_coef_" % (self.kernel,))
        G = self.class_vectors_ @ self.class_vectors_.T
        if len(self.support_) == 0:
            return np.zeros((len(self.classes_), self.n_features_in_))
        return np.asarray((self.X_fit_.T @ (self.dual_coef_.T @ G)).T)

    def _check_state(self):
        # not RepresenterMixin's check: dual_coef_ is (n_classes, n_support) here
        super(RepresenterMixin, self)._check_state()
        state = vars(self)
        n_classes = len(self.classes_)
        lam = state.get("class_vectors_")
        if not isinstance(lam, np.ndarray) or lam.ndim != 2 or lam.shape[0] != n_classes \
                or not np.isfinite(lam).all():
            raise ValueError("class_vectors_ must be a finite (n_classes, n_attributes) array")
        coef = state.get("dual_coef_")
        support = state.get("support_")
        if not isinstance(coef, np.ndarray) or coef.ndim != 2 or coef.shape[0] != n_classes \
                or not isinstance(support, np.ndarray) or coef.shape[1] != support.shape[0] \
                or not np.isfinite(coef).all():
            raise ValueError("dual_coef_ must be a finite (n_classes, n_support) array")
        if self.kernel != "precomputed" and self._n_rows(self.X_fit_) != support.shape[0]:
            raise ValueError("X_fit_ must hold one input per support index")
