"""Mercer map (empirical kernel map, Nystroem form): kernel machines at linear cost.

For a positive semi-definite kernel ``k`` and ``m`` landmark points ``X_m``
with kernel matrix ``K_mm = U Lambda U^T``, the map

    phi(x) = Lambda^{-1/2} U^T k(X_m, x)

sends inputs into the span of the leading eigenvectors of ``K_mm``, so that
``phi(x) . phi(x') = k(x, X_m) K_mm^+ k(X_m, x')``, the Nystroem
approximation of ``k(x, x')`` -- exact when ``x`` and ``x'`` are landmarks (so
with every training point a landmark, ``phi(X) phi(X)^T = K``).  Any linear
linclass model trained on ``phi(X)`` is a kernel machine whose cost grows
linearly with the number of examples.

References
----------
Williams & Seeger (2001), "Using the Nystroem method to speed up kernel
machines", NIPS 13.
Schoelkopf & Smola (2002), *Learning with Kernels*, sec. 2.2.6 (the
empirical kernel map).
Drineas & Mahoney (2005), "On the Nystroem method for approximating a Gram
matrix for improved kernel-based learning", JMLR 6.
Arthur & Vassilvitskii (2007), "k-means++: the advantages of careful
seeding", SODA (the landmark seeding); Zhang, Tsang & Kwok (2008),
"Improved Nystroem low-rank approximation and error analysis", ICML
(clustered landmarks).
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._validation import check_X
from .._validation import (check_is_fitted, check_positive, check_random_state,
                           check_state_array)
from ..base import BaseEstimator, TransformerMixin

__all__ = ["MercerMap", "kernel_matrix", "MERCER_KERNELS"]

#: Kernels :class:`MercerMap` and :func:`kernel_matrix` compute.
MERCER_KERNELS = ("rbf", "poly", "linear")
_LANDMARKS = ("uniform", "kmeans++")


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _dot(A, B):
    """A @ B.T as a dense array (A, B dense or CSR)."""
    out = A @ B.T
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def kernel_matrix(A, B, *, kernel="rbf", gamma=None, degree=3, coef0=1.0):
    """Kernel values ``k(a_i, b_j)`` between the rows of ``A`` and ``B``.

    ``rbf``: ``exp(-gamma ||a - b||^2)``; ``poly``: ``(gamma a.b + coef0)^degree``;
    ``linear``: ``a.b``.  ``gamma=None`` means ``1 / n_features``.

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_a, n_features)
    B : array-like or sparse matrix of shape (n_b, n_features)

    Returns
    -------
    ndarray of shape (n_a, n_b)
    """
    A = check_X(A, "A")
    B = check_X(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError("A has %d features but B has %d" % (A.shape[1], B.shape[1]))
    kernel, gamma = _check_kernel(kernel, gamma, degree, coef0, A.shape[1])
    return _kernel(A, B, kernel, gamma, degree, coef0, owner="kernel_matrix")


def _check_kernel(kernel, gamma, degree, coef0, n_features):
    if kernel not in MERCER_KERNELS:
        raise ValueError("kernel must be one of %s, got %r" % (MERCER_KERNELS, kernel))
    if gamma is None:
        gamma = 1.0 / n_features
    check_positive(gamma, "gamma")
    check_positive(degree, "degree", integer=True)      # checked even where unused
    check_positive(coef0, "coef0", strict=False)
    return kernel, float(gamma)


def _kernel(A, B, kernel, gamma, degree, coef0, owner):
    """k(A, B) through linclass.kernels (the Cython kernel rows SVC uses); an
    overflow raises a ValueError naming ``owner``."""
    from .pairwise import pairwise_kernels_for
    params = {"linear": {}, "rbf": {"gamma": gamma},
              "poly": {"gamma": gamma, "degree": degree, "coef0": coef0}}[kernel]
    return pairwise_kernels_for(owner, A, B, kernel=kernel, **params)


def _kmeanspp(X, m, rng):
    """k-means++ seeding: m distinct row indices, each drawn with probability
    proportional to its squared distance to the nearest chosen row."""
    n = X.shape[0]
    sq = _row_sq_norms(X)
    chosen = [int(rng.integers(n))]
    nearest = np.maximum(sq + sq[chosen[0]] - 2.0 * _dot(X, X[chosen[0]]).ravel(), 0.0)
    nearest[chosen[0]] = 0.0
    for _ in range(1, m):
        total = nearest.sum()
        if total > 0:
            j = int(rng.choice(n, p=nearest / total))
        else:                                 # every row sits on a chosen one
            free = np.setdiff1d(np.arange(n), chosen)
            j = int(rng.choice(free))
        chosen.append(j)
        dist = np.maximum(sq + sq[j] - 2.0 * _dot(X, X[j]).ravel(), 0.0)
        np.minimum(nearest, dist, out=nearest)
        nearest[chosen] = 0.0
    return np.array(chosen)


class MercerMap(TransformerMixin, BaseEstimator):
    """Map inputs to the leading eigen-directions of a kernel matrix on landmarks.

    Parameters
    ----------
    n_landmarks : int, default=100
        Number ``m`` of landmark rows taken from the training data; with
        fewer samples every sample is a landmark (and a warning says so).
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    gamma : float or None, default=None
        Kernel width (None: ``1 / n_features``).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        ``"uniform"``: m distinct rows drawn uniformly; ``"kmeans++"``: the
        k-means++ seeding (spread-out rows, a better approximation for the
        same ``m`` at ``O(n m)`` extra cost).
    n_components : int or None, default=None
        Keep only this many leading eigenvectors (None: all whose eigenvalue
        exceeds ``eigen_tol`` times the largest).
    eigen_tol : float, default=1e-10
        Relative eigenvalue cut-off: directions of ``K_mm`` below it are
        dropped (pseudo-inverse), which keeps the map finite when landmarks
        repeat or the kernel matrix is singular.
    random_state : None, int or numpy Generator/RandomState

    Attributes
    ----------
    landmarks_ : ndarray or CSR matrix of shape (m, n_features)
    landmark_indices_ : ndarray of shape (m,)
        Rows of the training data used as landmarks.
    eigenvalues_ : ndarray of shape (``n_components_``,)
        Kept eigenvalues of ``K_mm``, largest first.
    projection_ : ndarray of shape (m, ``n_components_``)
        ``U Lambda^{-1/2}``: ``transform(X) = k(X, X_m) @ projection_``.
    n_components_ : int
    n_features_in_ : int
    """

    def __init__(self, n_landmarks=100, kernel="rbf", gamma=None, degree=3, coef0=1.0,
                 landmarks="uniform", n_components=None, eigen_tol=1e-10, random_state=None):
        self.n_landmarks = n_landmarks
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.landmarks = landmarks
        self.n_components = n_components
        self.eigen_tol = eigen_tol
        self.random_state = random_state

    def fit(self, X, y=None):
        """Choose the landmarks and eigendecompose their kernel matrix (returns self)."""
        X = check_X(X)
        n_samples, n_features = X.shape
        check_positive(self.n_landmarks, "n_landmarks", integer=True)
        m = int(self.n_landmarks)
        if m > n_samples:
            # a landmark is a training row: all of them (as scikit-learn's Nystroem does)
            warnings.warn("MercerMap: n_landmarks=%d exceeds the number of samples "
                          "(n_samples = %d); every sample is a landmark" % (m, n_samples),
                          UserWarning, stacklevel=2)
            m = n_samples
        if self.landmarks not in _LANDMARKS:
            raise ValueError("landmarks must be one of %s, got %r"
                             % (_LANDMARKS, self.landmarks))
        if self.n_components is not None:
            check_positive(self.n_components, "n_components", integer=True)
        check_positive(self.eigen_tol, "eigen_tol", strict=False)
        kernel, gamma = _check_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                                      n_features)
        rng = check_random_state(self.random_state)
        if self.landmarks == "uniform":
            idx = np.sort(rng.choice(n_samples, m, replace=False))
        else:
            idx = _kmeanspp(X, m, rng)
        L = X[idx]
        K = _kernel(L, L, kernel, gamma, self.degree, self.coef0, owner=self)
        K = 0.5 * (K + K.T)
        eigval, eigvec = scipy.linalg.eigh(K, check_finite=False)
        order = np.argsort(eigval)[::-1]                       # largest first
        eigval, eigvec = eigval[order], eigvec[:, order]
        top = max(eigval[0], 0.0)
        keep = eigval > float(self.eigen_tol) * top if top > 0 else np.zeros(m, dtype=bool)
        if self.n_components is not None:
            keep &= np.arange(m) < int(self.n_components)
        if not keep.any():
            raise ValueError("the kernel matrix of the landmarks is zero; no direction to "
                             "map onto (check gamma and the data)")
        self.landmarks_ = L
        self.landmark_indices_ = idx
        self.eigenvalues_ = eigval[keep]
        self.projection_ = np.ascontiguousarray(eigvec[:, keep] / np.sqrt(eigval[keep]))
        self.n_components_ = int(keep.sum())
        self.n_features_in_ = n_features
        self._gamma = gamma
        return self

    def transform(self, X):
        """``phi(X) = k(X, X_m) U Lambda^{-1/2}``, shape (n_samples, ``n_components_``)."""
        check_is_fitted(self, "projection_")
        X = check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d features, but MercerMap is expecting %d features as "
                             "input" % (X.shape[1], self.n_features_in_))
        gamma = self.gamma if self.gamma is not None else 1.0 / self.n_features_in_
        C = _kernel(X, self.landmarks_, self.kernel, float(gamma), self.degree, self.coef0,
                    owner=self)
        return C @ self.projection_

    def _check_state(self):
        """The landmarks, their eigen-directions and the map agree and are
        finite (called by :func:`linclass.load`, after the generic checks)."""
        super()._check_state()
        if "projection_" not in vars(self):        # not fitted: nothing to check
            return
        from .pairwise import check_finite_rows
        n_components = self.n_components_
        if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral) \
                or n_components < 1:
            raise ValueError("n_components_ must be an integer >= 1, got %r" % (n_components,))
        projection = check_state_array(self.projection_, "projection_", (None, n_components))
        m = projection.shape[0]
        check_state_array(self.eigenvalues_, "eigenvalues_", (n_components,))
        check_state_array(self.landmark_indices_, "landmark_indices_", (m,), kinds="iu")
        landmarks = self.landmarks_
        if sp.issparse(landmarks):
            if landmarks.shape != (m, self.n_features_in_):
                raise ValueError("landmarks_ has shape %r, expected %r"
                                 % (landmarks.shape, (m, self.n_features_in_)))
            self.landmarks_ = landmarks = check_X(landmarks, "landmarks_")
        else:
            check_state_array(landmarks, "landmarks_", (m, self.n_features_in_))
        check_finite_rows(landmarks, "landmarks_")
        for name in ("projection_", "eigenvalues_"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError("%s must be finite (it holds NaN or infinity)" % name)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``mercermap0``, ``mercermap1``, ...

        The components mix every input feature, so they are numbered as
        scikit-learn numbers its ``Nystroem`` components.

        Parameters
        ----------
        input_features : array-like of str, optional
            Only checked against ``feature_names_in_`` (or ``n_features_in_``).

        Returns
        -------
        ndarray of str objects, shape (``n_components_``,)
        """
        check_is_fitted(self, "projection_")
        if input_features is not None:
            input_features = list(input_features)
            fitted = getattr(self, "feature_names_in_", None)
            if fitted is not None and input_features != list(fitted):
                raise ValueError("input_features is not equal to feature_names_in_")
            if len(input_features) != self.n_features_in_:
                raise ValueError("input_features should have length equal to the number of "
                                 "features (%d), got %d"
                                 % (self.n_features_in_, len(input_features)))
        return np.array(["mercermap%d" % i for i in range(self.n_components_)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        return tags
