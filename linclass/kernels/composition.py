"""Kernel objects, their composition, and the Mercer (positive semi-definiteness) check.

Sums, products and positive multiples of kernels are kernels, and so is the
normalised kernel ``k(x, y) / sqrt(k(x, x) k(y, y))`` (the cosine of the angle
between feature vectors); Schölkopf & Smola (2002, section 13.1) and
Shawe-Taylor & Cristianini (2004, proposition 3.22).  A kernel object is a
callable ``kernel(X, Y=None) -> Gram matrix`` and composes with the operators::

    k = 0.5 * KernelFunction("rbf", gamma=0.1) + KernelFunction("linear")
    k = NormalizedKernel(KernelFunction("poly", degree=2)) * SpectrumKernel(3)

Kernel objects are accepted as ``kernel=`` by every kernel model of
``linclass.kernels`` (``SVC`` and ``KernelPerceptron`` call them as the
callable kernel they accept; the string kernels need the models that take raw
sequences, or ``kernel="precomputed"``).

:func:`check_mercer` tests a Gram matrix for symmetry and positive
semi-definiteness (smallest eigenvalue against a tolerance) and says by how
much it fails.

References
----------
Schölkopf, B. & Smola, A. J. (2002). *Learning with Kernels*, MIT Press.
Shawe-Taylor, J. & Cristianini, N. (2004). *Kernel Methods for Pattern
Analysis*, Cambridge University Press, chapter 3.
"""
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._validation import check_array
from ..base import BaseEstimator
from .pairwise import pairwise_kernels

__all__ = ["Kernel", "KernelFunction", "SumKernel", "ProductKernel", "ScaledKernel",
           "NormalizedKernel", "check_mercer", "is_positive_semidefinite"]


def _mercer_gap(K, tol):
    K = np.asarray(K, dtype=np.float64)
    scale = max(float(np.abs(K).max()) if K.size else 0.0, 1.0)
    asym = float(np.abs(K - K.T).max()) if K.size else 0.0
    if asym > tol * scale:
        return "asym", asym
    smallest = float(scipy.linalg.eigvalsh(0.5 * (K + K.T), subset_by_index=[0, 0],
                                           check_finite=False)[0]) if K.size else 0.0
    return ("neg", smallest) if smallest < -tol * scale else ("ok", smallest)


def is_positive_semidefinite(K, tol=1e-8):
    """True when the square matrix K is symmetric and its smallest eigenvalue is
    at least ``-tol * max(1, max|K|)``."""
    K = _check_square(K)
    return _mercer_gap(K, tol)[0] == "ok"


def _check_square(K):
    if sp.issparse(K):
        K = K.toarray()
    K = check_array(K, name="K", accept_sparse=False)
    if K.shape[0] != K.shape[1]:
        raise ValueError("a Gram matrix must be square, got shape %r" % (K.shape,))
    return K


def check_mercer(K, tol=1e-8, name="kernel"):
    """Check that K is a valid (Mercer) Gram matrix: symmetric and positive semi-definite.

    Parameters
    ----------
    K : array-like of shape (n, n)
    tol : float, default=1e-8
        Relative tolerance: eigenvalues down to ``-tol * max(1, max|K|)`` count
        as zero (round-off).
    name : str
        Named in the error message.

    Returns
    -------
    K : ndarray, the checked matrix.

    Raises
    ------
    ValueError
        When K is not square, not symmetric, or has a negative eigenvalue; the
        message gives the asymmetry or the smallest eigenvalue.

    Examples
    --------
    >>> import numpy as np
    >>> from linclass.kernels import check_mercer
    >>> check_mercer(np.array([[1.0, 2.0], [2.0, 1.0]]))
    Traceback (most recent call last):
    ...
    ValueError: the kernel's Gram matrix is not positive semi-definite: smallest eigenvalue -1 ...
    """
    K = _check_square(K)
    kind, value = _mercer_gap(K, tol)
    if kind == "asym":
        raise ValueError("the %s's Gram matrix is not symmetric (largest |K - K.T| = %g): "
                         "not a Mercer kernel" % (name, value))
    if kind == "neg":
        raise ValueError("the %s's Gram matrix is not positive semi-definite: smallest "
                         "eigenvalue %g < 0 (tolerance %g); it is not a Mercer kernel on this "
                         "data (sigmoid kernels and hand-made similarities often are not)"
                         % (name, value, tol * max(float(np.abs(K).max()), 1.0)))
    return K


class Kernel(BaseEstimator):
    """Base class of kernel objects: ``kernel(X, Y=None)`` returns the Gram matrix.

    Subclasses implement ``__call__`` and ``diag(X)`` (``k(x, x)`` per row).
    ``+``, ``*`` and multiplication by a positive number build
    :class:`SumKernel`, :class:`ProductKernel` and :class:`ScaledKernel`.
    """

    accepts_sequences = False

    def __call__(self, X, Y=None):
        raise NotImplementedError

    def diag(self, X):
        raise NotImplementedError

    def n_samples(self, X):
        """Number of samples in ``X`` (rows of a matrix, or items of a sequence)."""
        return X.shape[0]

    def __add__(self, other):
        return SumKernel(self, other)

    def __mul__(self, other):
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return ScaledKernel(self, float(other))
        return ProductKernel(self, other)

    __rmul__ = __mul__


def _check_kernel_object(k, name):
    if not isinstance(k, Kernel):
        raise ValueError("%s must be a linclass kernel object (KernelFunction, "
                         "SpectrumKernel, ...), got %r" % (name, k))


class KernelFunction(Kernel):
    """A named kernel of :func:`~linclass.kernels.pairwise_kernels` as a kernel object.

    Parameters
    ----------
    name : {"linear", "poly", "rbf", "sigmoid"}, default="rbf"
    gamma : float or None, default=None
        None: ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=1.0
    """

    def __init__(self, name="rbf", gamma=None, degree=3, coef0=1.0):
        self.name = name
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def _params(self):
        if self.name not in ("linear", "poly", "rbf", "sigmoid"):
            raise ValueError("KernelFunction name must be 'linear', 'poly', 'rbf' or 'sigmoid', "
                             "got %r" % (self.name,))
        return {"linear": {}, "rbf": {"gamma": self.gamma},
                "poly": {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0},
                "sigmoid": {"gamma": self.gamma, "coef0": self.coef0}}[self.name]

    def __call__(self, X, Y=None):
        return pairwise_kernels(X, Y, kernel=self.name, **self._params())

    def diag(self, X):
        """Kernel values ``k(x, x)`` of each sample with itself, shape (n_samples,)."""
        X = check_array(X)
        if self.name == "rbf":
            return np.ones(X.shape[0])
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) \
            else (X * X).sum(axis=1)
        if self.name == "linear":
            return sq
        gamma = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        if self.name == "poly":
            return (gamma * sq + float(self.coef0)) ** int(self.degree)
        return np.tanh(gamma * sq + float(self.coef0))


class SumKernel(Kernel):
    """``k1(x, y) + k2(x, y)``."""

    def __init__(self, k1, k2):
        self.k1 = k1
        self.k2 = k2

    @property
    def accepts_sequences(self):
        return getattr(self.k1, "accepts_sequences", False)

    def n_samples(self, X):
        """Number of samples in ``X`` (rows of a matrix, or items of a sequence)."""
        return self.k1.n_samples(X)

    def __call__(self, X, Y=None):
        _check_kernel_object(self.k1, "k1")
        _check_kernel_object(self.k2, "k2")
        return self.k1(X, Y) + self.k2(X, Y)

    def diag(self, X):
        """Kernel values ``k(x, x)`` of each sample with itself, shape (n_samples,)."""
        return self.k1.diag(X) + self.k2.diag(X)


class ProductKernel(SumKernel):
    """``k1(x, y) * k2(x, y)`` (the Schur product of PSD matrices is PSD)."""

    def __call__(self, X, Y=None):
        _check_kernel_object(self.k1, "k1")
        _check_kernel_object(self.k2, "k2")
        return self.k1(X, Y) * self.k2(X, Y)

    def diag(self, X):
        """Kernel values ``k(x, x)`` of each sample with itself, shape (n_samples,)."""
        return self.k1.diag(X) * self.k2.diag(X)


class ScaledKernel(Kernel):
    """``scale * k(x, y)`` with ``scale > 0``."""

    def __init__(self, kernel, scale=1.0):
        self.kernel = kernel
        self.scale = scale

    @property
    def accepts_sequences(self):
        return getattr(self.kernel, "accepts_sequences", False)

    def n_samples(self, X):
        """Number of samples in ``X`` (rows of a matrix, or items of a sequence)."""
        return self.kernel.n_samples(X)

    def _checked_scale(self):
        _check_kernel_object(self.kernel, "kernel")
        if isinstance(self.scale, bool) or not isinstance(self.scale, numbers.Real) \
                or not np.isfinite(self.scale) or self.scale <= 0:
            raise ValueError("scale must be a finite number > 0 (a negative multiple of a "
                             "kernel is not a kernel), got %r" % (self.scale,))
        return float(self.scale)

    def __call__(self, X, Y=None):
        return self._checked_scale() * self.kernel(X, Y)

    def diag(self, X):
        """Kernel values ``k(x, x)`` of each sample with itself, shape (n_samples,)."""
        return self._checked_scale() * self.kernel.diag(X)


class NormalizedKernel(ScaledKernel):
    """Cosine normalisation ``k(x, y) / sqrt(k(x, x) k(y, y))`` (0 where a norm is 0)."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, X, Y=None):
        _check_kernel_object(self.kernel, "kernel")
        K = self.kernel(X, Y)
        dx = self.kernel.diag(X)
        dy = dx if Y is None else self.kernel.diag(Y)
        scale = np.sqrt(np.maximum(np.outer(dx, dy), 0.0))
        return np.divide(K, scale, out=np.zeros_like(K), where=scale > 0)

    def diag(self, X):
        """Kernel values ``k(x, x)`` of each sample with itself, shape (n_samples,)."""
        _check_kernel_object(self.kernel, "kernel")
        return (self.kernel.diag(X) > 0).astype(np.float64)
