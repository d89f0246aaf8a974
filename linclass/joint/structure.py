"""Multi-class classification as a structure: ``Phi(x, y) = phi(x) (x) Lambda(y)``.

The weight vector is a matrix ``W`` of shape ``(n_attributes, n_features_x)``;
the score of class ``y`` is ``Lambda(y) . (W x)``.  ``w`` stores ``W.T``
row-major (feature-major: ``w[j * n_attributes + a] = W[a, j]``), the layout
in which the batched products below need no copy.  With the one-hot ``Lambda`` (the default) row ``c``
of ``W`` is the weight vector of class ``c`` and the structural SVM is the
multi-class SVM of Crammer and Singer (2001).  With **class descriptions**
(``Lambda(y)`` = row ``y`` of a user matrix, for example a term-frequency
vector of the class's description) the joint kernel is
``k(x, x') Lambda(y) . Lambda(y')``: classes with similar descriptions share
weights, and a class with no training example can still be predicted from its
description (Tsochantaridis et al., 2005, sec. 4.1).

Examples are 1-D dense arrays of length ``n_features_x`` or 1-row
``scipy.sparse`` matrices; outputs are class indices ``0..n_classes-1``.

Fast path
---------
The ``batch_*`` methods score every class of every example with one matrix
product ``X @ W.T @ Lambda.T`` (``X`` a CSR matrix or a 2-D array from
:meth:`MultiClassStructure.batch_inputs`), and the learners' summed joint
features with one product ``A.T @ X``.  They give the same results as the
per-example methods of :class:`~linclass.structured.Structure` (tested).

References
----------
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
kernel-based vector machines. JMLR 2, 2001.
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005, sec. 4.1.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._core import _bcfw
from .._validation import as_float_param, check_array, check_positive
from ..structured.base import Structure

__all__ = ["MultiClassStructure"]


# largest loss the margin-rescaled solvers accept (see _check_loss_matrix)
_MAX_LOSS = 1e12


def _check_loss_matrix(loss_matrix, n_classes):
    L = np.array(as_float_param(loss_matrix, "loss_matrix"))
    if L.shape != (n_classes, n_classes):
        raise ValueError("loss_matrix must have shape (%d, %d) (n_classes x n_classes), "
                         "got %r" % (n_classes, n_classes, L.shape))
    if not np.isfinite(L).all():
        raise ValueError("loss_matrix contains NaN or infinity")
    if np.any(np.diag(L) != 0):
        raise ValueError("loss_matrix must have a zero diagonal (loss(y, y) = 0)")
    off = ~np.eye(n_classes, dtype=bool)
    largest = float(np.abs(L).max()) if L.size else 0.0
    if largest > _MAX_LOSS:
        # the solvers add losses to scores w . Phi(x, y) in double precision:
        # beside a loss of 1e16 a score of 1 vanishes, and the argmax then
        # follows the loss alone (every sample predicted as one class)
        raise ValueError(
            "loss_matrix holds values up to %.3g; above %.0e the scores w . Phi(x, y) "
            "vanish beside the losses in double precision and the fit would predict "
            "from the losses alone. Scaling the loss matrix and C by the same constant "
            "scales the solution and keeps its predictions: divide both" % (largest, _MAX_LOSS))
    if np.any(L[off] <= 0):
        raise ValueError("loss_matrix must be > 0 off the diagonal (loss is zero "
                         "only for the correct class)")
    return L


class MultiClassStructure(Structure):
    """Multi-class problem with one-hot or description-based class vectors.

    Parameters
    ----------
    n_features_x : int
        Dimension of the input vectors ``phi(x)``.
    n_classes : int
        Number of classes (outputs ``0..n_classes-1``).  With
        ``class_descriptions`` it may be omitted (one class per row).
    class_descriptions : array-like of shape (n_classes, n_attributes), optional
        ``Lambda(y)`` = row ``y``.  Default: the identity (one-hot).
    loss_matrix : array-like of shape (n_classes, n_classes), optional
        ``loss(y, y') = loss_matrix[y, y']``; zero diagonal, positive
        elsewhere.  Default: the 0/1 loss.

    Attributes
    ----------
    n_features : int
        ``n_features_x * n_attributes``.
    n_attributes : int
    class_vectors : ndarray of shape (n_classes, n_attributes)
        The ``Lambda`` matrix.
    """

    def __init__(self, n_features_x, n_classes=None, *, class_descriptions=None,
                 loss_matrix=None):
        self.n_features_x = int(check_positive(n_features_x, "n_features_x", integer=True))
        if class_descriptions is None:
            if n_classes is None:
                raise ValueError("give n_classes or class_descriptions")
            n_classes = int(check_positive(n_classes, "n_classes", integer=True))
            self.class_vectors = np.eye(n_classes)
            self.one_hot = True
        else:
            D = np.array(class_descriptions, dtype=np.float64)
            if D.ndim != 2 or D.shape[0] == 0 or D.shape[1] == 0:
                raise ValueError("class_descriptions must be a non-empty 2-D array "
                                 "(n_classes, n_attributes), got shape %r" % (D.shape,))
            if not np.isfinite(D).all():
                raise ValueError("class_descriptions contains NaN or infinity")
            if n_classes is not None and int(n_classes) != D.shape[0]:
                raise ValueError("class_descriptions has %d rows but n_classes=%r; "
                                 "every class needs exactly one description row"
                                 % (D.shape[0], n_classes))
            zero = np.flatnonzero(~D.any(axis=1))
            if zero.size:
                raise ValueError("class %d has an all-zero description; it could "
                                 "never be scored apart from the others" % zero[0])
            self.class_vectors = D
            self.one_hot = False
        self.n_classes = self.class_vectors.shape[0]
        self.n_attributes = self.class_vectors.shape[1]
        self.n_features = self.n_features_x * self.n_attributes
        if loss_matrix is None:
            self.loss_matrix = 1.0 - np.eye(self.n_classes)
        else:
            self.loss_matrix = _check_loss_matrix(loss_matrix, self.n_classes)

    # -- helpers -------------------------------------------------------------
    def _x_entries(self, x):
        """(column indices, values) of one example."""
        if sp.issparse(x):
            if x.shape != (1, self.n_features_x):
                raise ValueError("a sparse example must have shape (1, %d), got %r"
                                 % (self.n_features_x, x.shape))
            x = x.tocsr()
            return x.indices.astype(np.int64), x.data.astype(np.float64)
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.shape[0] != self.n_features_x:
            raise ValueError("an example must have %d features, got %d"
                             % (self.n_features_x, x.shape[0]))
        idx = np.flatnonzero(x)
        return idx.astype(np.int64), x[idx]

    def _class_scores(self, w, x):
        WT = self._weight_matrix(w)
        idx, val = self._x_entries(x)
        return self.class_vectors @ (val @ WT[idx])

    def _weight_matrix(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError("w must have shape (%d,), got %r" % (self.n_features, w.shape))
        return w.reshape(self.n_features_x, self.n_attributes)     # W.T, no copy

    def _check_class(self, y):
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (numbers.Integral, np.integer)):
            raise ValueError("a multi-class output must be an integer class index, got %r"
                             % (y,))
        if not 0 <= y < self.n_classes:
            raise ValueError("class %d is out of range: this structure has %d classes "
                             "(one description row each)" % (y, self.n_classes))
        return int(y)

    # -- protocol ------------------------------------------------------------
    def joint_feature(self, x, y):
        y = self._check_class(y)
        idx, val = self._x_entries(x)
        attrs = np.flatnonzero(self.class_vectors[y])
        lam = self.class_vectors[y, attrs]
        indices = (idx[:, None] * self.n_attributes + attrs[None, :]).ravel()
        values = (val[:, None] * lam[None, :]).ravel()
        return indices.astype(np.int64), values

    def decode(self, w, x):
        return int(np.argmax(self._class_scores(w, x)))

    def loss_augmented_decode(self, w, x, y):
        y = self._check_class(y)
        return int(np.argmax(self._class_scores(w, x) + self.loss_matrix[y]))

    def slack_rescaled_decode(self, w, x, y):
        y = self._check_class(y)
        s = self._class_scores(w, x)
        return int(np.argmax(self.loss_matrix[y] * (1.0 + s - s[y])))

    def loss(self, y, y_hat):
        return float(self.loss_matrix[self._check_class(y), self._check_class(y_hat)])

    def check_output(self, x, y):
        self._check_class(y)

    # -- fast path -------------------------------------------------------------
    def batch_inputs(self, X):
        """A CSR matrix or a 2-D float64 array of shape (n_samples, n_features_x)."""
        if isinstance(X, list):
            if any(sp.issparse(x) for x in X):
                X = sp.vstack([sp.csr_matrix(x) for x in X], format="csr")
            else:
                X = np.vstack([np.asarray(x, dtype=np.float64).reshape(1, -1) for x in X])
        X = check_array(X, name="X")
        if X.shape[1] != self.n_features_x:
            raise ValueError("X has %d features, the structure expects n_features_x=%d"
                             % (X.shape[1], self.n_features_x))
        return X

    def batch_class_scores(self, w, X):
        """Scores of every class for every example, shape (n_samples, n_classes).

        The last result is remembered (with a copy of ``w``), so the learners'
        decoding and scoring of the same weights cost one matrix product.
        """
        WT = self._weight_matrix(w)
        cached = getattr(self, "_last_scores", None)
        if cached is not None and cached[0] is X and np.array_equal(cached[1], WT):
            return cached[2]
        S = np.asarray(X @ WT)                          # (n, n_attributes)
        S = S if self.one_hot else S @ self.class_vectors.T
        self._last_scores = (X, WT.copy(), S)
        return S

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_last_scores", None)
        state.pop("_last_transpose", None)
        return state

    def batch_check_outputs(self, X, Y):
        """Vectorised :meth:`check_output`; returns Y as an int64 array."""
        Y = np.asarray(Y)
        if Y.ndim != 1 or (Y.size and Y.dtype.kind not in "iu"):
            raise ValueError("multi-class outputs must be a 1-D sequence of integer "
                             "class indices")
        Y = Y.astype(np.int64)
        bad = (Y < 0) | (Y >= self.n_classes)
        if bad.any():
            i = np.flatnonzero(bad)[0]
            raise ValueError("output %d is class %d, out of range: this structure has "
                             "%d classes (one description row each)"
                             % (i, Y[i], self.n_classes))
        return Y

    def batch_decode(self, w, X):
        return np.argmax(self.batch_class_scores(w, X), axis=1)

    def batch_loss_augmented_decode(self, w, X, Y):
        Y = np.asarray(Y, dtype=np.int64)
        return np.argmax(self.batch_class_scores(w, X) + self.loss_matrix[Y], axis=1)

    def batch_slack_rescaled_decode(self, w, X, Y):
        Y = np.asarray(Y, dtype=np.int64)
        S = self.batch_class_scores(w, X)
        gold = S[np.arange(len(Y)), Y][:, None]
        return np.argmax(self.loss_matrix[Y] * (1.0 + S - gold), axis=1)

    def batch_loss(self, Y, Y_hat):
        return self.loss_matrix[np.asarray(Y, dtype=np.int64), np.asarray(Y_hat, dtype=np.int64)]

    def batch_score(self, w, X, Y_lists):
        S = self.batch_class_scores(w, X)
        rows = np.arange(S.shape[0])
        return np.array([S[rows, np.asarray(Y, dtype=np.int64)] for Y in Y_lists]).reshape(
            len(Y_lists), S.shape[0])

    def batch_joint_feature(self, X, Y_lists, weights):
        n = X.shape[0]
        weights = np.asarray(weights, dtype=np.float64).reshape(len(Y_lists), n)
        rows = np.arange(n) * self.n_classes
        cells = np.concatenate([rows + np.asarray(Y, dtype=np.int64) for Y in Y_lists])
        P = np.bincount(cells, weights=weights.ravel(),              # P[i, Y_j[i]] += weights[j, i]
                        minlength=n * self.n_classes).reshape(n, self.n_classes)
        A = P if self.one_hot else P @ self.class_vectors      # (n, n_attributes)
        if sp.issparse(X):
            # X.T as CSR, built once per data set: a row-major transpose makes
            # the product about twice as fast as scipy's CSC kernel
            cached = getattr(self, "_last_transpose", None)
            if cached is None or cached[0] is not X:
                cached = (X, X.T.tocsr())
                self._last_transpose = cached
            WT = np.asarray(cached[1] @ A)                       # (n_features_x, n_attributes)
        else:
            WT = X.T @ A
        return np.ascontiguousarray(WT).ravel()

    def bcfw_state(self, X, Y, C, average):
        """Fused block-coordinate Frank--Wolfe state.

        Used by :class:`~linclass.structured.StructuredSVM` with
        ``method="bcfw"`` and margin rescaling: each pass runs in
        :func:`linclass._core._bcfw.multiclass_pass`, with up to
        ``_BCFW_INNER`` Frank--Wolfe steps per example (the extra steps need
        no access to ``x_i``: its scores move by ``||x_i||^2`` times the step);
        classes with descriptions (taxonomies) run
        :func:`linclass._core._bcfw.description_pass`, the same steps with the
        scores ``Lambda (W^T x_i)`` and the line search through
        ``Lambda Lambda^T``.
        """
        if not self.one_hot:
            return _DescriptionBCFW(self, X, Y, C, average)
        return _OneHotBCFW(self, X, Y, C, average)

    # -- kernelised form -----------------------------------------------------
    def output_kernel(self):
        """``Lambda Lambda^T``: the kernel between classes, shape (n_classes, n_classes)."""
        return self.class_vectors @ self.class_vectors.T

    def kernel_class_scores(self, K, dual_coef):
        """Class scores of the kernelised model ``sum_i sum_c beta_ic k(x_i, x) Lambda(c).Lambda(y)``.

        Parameters
        ----------
        K : array-like of shape (n_test, n_train)
            ``K[t, i] = k(x_i, x_t)``.
        dual_coef : array-like of shape (n_train, n_classes)
            ``beta``: with ``w = sum_i sum_c beta_ic phi(x_i) (x) Lambda(c)``
            (the form of every structural SVM solution) the scores are
            ``K @ beta @ Lambda @ Lambda.T``.

        Returns
        -------
        ndarray of shape (n_test, n_classes)
        """
        K = np.asarray(K, dtype=np.float64)
        beta = np.asarray(dual_coef, dtype=np.float64)
        if K.ndim != 2 or beta.ndim != 2 or K.shape[1] != beta.shape[0] \
                or beta.shape[1] != self.n_classes:
            raise ValueError("K must be (n_test, n_train) and dual_coef (n_train, %d); "
                             "got %r and %r" % (self.n_classes, K.shape, beta.shape))
        return K @ beta @ self.output_kernel()


_BCFW_INNER = 10        # Frank--Wolfe steps per example and pass (fused one-hot path)


class _OneHotBCFW:
    """Per-example state ``(beta_i, l_i)`` of the one-hot BCFW (see _core/_bcfw.pyx)."""

    def __init__(self, structure, X, Y, C, average):
        X = sp.csr_matrix(X)
        X.sum_duplicates()
        if X.data.size and not np.isfinite(X.data).all():
            raise ValueError("X contains NaN or infinity")
        n, K = X.shape[0], structure.n_classes
        self.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        self.y = np.ascontiguousarray(Y, dtype=np.int64)
        self.sq_norms = np.bincount(np.repeat(np.arange(n), np.diff(self.indptr)),
                                    weights=self.data ** 2, minlength=n)
        self.loss_matrix = np.ascontiguousarray(structure.loss_matrix, dtype=np.float64)
        self.C = float(C)
        self.average = bool(average)
        self.w = np.zeros(structure.n_features)
        self.v = np.zeros(structure.n_features if average else 0)
        self.beta = np.zeros((n, K))
        self.l = np.zeros(n)
        self.step = 0.0
        self.lv = 0.0

    def run_pass(self, order):
        gap, self.step, self.lv = _bcfw.multiclass_pass(
            self.w, self.v, self.indices, self.data, self.indptr, self.y, self.sq_norms,
            self.beta, self.l, self.loss_matrix, order, C=self.C, max_inner=_BCFW_INNER,
            inner_tol=0.0, average=self.average, step=self.step, lv=self.lv)
        return gap

    def iterate(self, average):
        if not average or self.step == 0:
            return self.w, float(self.l.sum())
        R = 0.5 * self.step * (self.step + 1.0)
        return self.w - self.v / R, float(self.l.sum()) - self.lv / R


class _DescriptionBCFW(_OneHotBCFW):
    """Per-example state ``(beta_i, l_i)`` of the BCFW for described classes
    (``w_i = x_i (x) Lambda^T beta_i``; see ``description_pass`` in _core/_bcfw.pyx)."""

    def __init__(self, structure, X, Y, C, average):
        super().__init__(structure, X, Y, C, average)
        self.class_vectors = np.ascontiguousarray(structure.class_vectors, dtype=np.float64)
        self.gram = np.ascontiguousarray(self.class_vectors @ self.class_vectors.T)

    def run_pass(self, order):
        gap, self.step, self.lv = _bcfw.description_pass(
            self.w, self.v, self.indices, self.data, self.indptr, self.y, self.sq_norms,
            self.beta, self.l, self.loss_matrix, self.class_vectors, self.gram, order,
            C=self.C, max_inner=_BCFW_INNER, average=self.average, step=self.step,
            lv=self.lv)
        return gap
