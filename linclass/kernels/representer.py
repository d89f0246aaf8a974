"""What the representer-theorem models share: kernel evaluation and the feature basis.

By the representer theorem (Kimeldorf & Wahba 1971; Schölkopf, Herbrich &
Smola 2001) the minimiser of a regularised empirical risk in an RKHS is
``f(x) = sum_i dual_coef_i k(x_i, x)``.  :class:`RepresenterMixin` gives
:class:`~linclass.kernels.KernelRidge`, :class:`~linclass.kernels.KernelRidgeClassifier`
and :class:`~linclass.kernels.KernelLogisticRegression` one way to

* accept ``kernel`` as a name (``"linear"``, ``"poly"``, ``"rbf"``,
  ``"sigmoid"``), ``"precomputed"``, a callable ``kernel(X, Y)``, or a kernel
  object of :mod:`linclass.kernels.composition` / string kernel (then ``X`` may
  be a list of strings or token sequences);
* build the training basis: either the exact one (eigendecomposition
  ``K = U diag(lam) U^T`` and features ``Phi = U diag(sqrt(lam))``, so that
  ``||f||_H^2 = ||w||^2`` and any primal solver on ``Phi`` solves the dual:
  ``dual_coef = U diag(lam^-1/2) w``), or the Nystroem one of
  :class:`~linclass.kernels.MercerMap` (``n_components`` landmarks; the dual
  coefficients then live on the landmarks).
"""
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_state_array)
from .mercer import MercerMap
from .pairwise import (call_kernel, check_coef0, check_degree, check_finite_rows, check_gamma,
                       check_kernel_name, pairwise_kernels_for)

__all__ = ["RepresenterMixin"]

_NAMED = ("linear", "poly", "rbf", "sigmoid")


class RepresenterMixin:
    """Kernel handling of the representer-theorem models (see the module docstring).

    Uses the parameters ``kernel``, ``gamma``, ``degree``, ``coef0``,
    ``n_components`` and ``random_state`` of the model.
    """

    def _kernel_params(self):
        if self.kernel == "linear":
            return {}
        if self.kernel == "rbf":
            return {"gamma": self.gamma}
        if self.kernel == "sigmoid":
            return {"gamma": self.gamma, "coef0": self.coef0}
        return {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}

    def _is_sequence_kernel(self):
        return bool(getattr(self.kernel, "accepts_sequences", False))

    def _check_params(self):
        """The kernel's parameters (fit checks them; so does :func:`linclass.load`)."""
        self._check_kernel()

    def _check_kernel(self):
        if not callable(self.kernel):
            check_kernel_name(self.kernel)
        if self.gamma is not None:              # checked even where the kernel ignores them
            check_gamma(self.gamma)
        check_degree(self.degree)
        check_coef0(self.coef0)
        if self.n_components is not None:
            check_positive(self.n_components, "n_components", integer=True)
            if self.kernel not in ("linear", "poly", "rbf"):
                raise ValueError("n_components (Nystroem) needs kernel 'linear', 'poly' or "
                                 "'rbf' (the kernels of MercerMap), got %r" % (self.kernel,))

    def _check_X(self, X, *, at_fit):
        """Inputs in the form the kernel takes; sets n_features_in_ at fit."""
        if self._is_sequence_kernel():
            if not hasattr(X, "__len__"):
                X = list(X)         # a generator: read once (n_samples would consume it)
            n = self.kernel.n_samples(X)
            X = list(X)
            if at_fit:
                if n == 0:
                    raise ValueError("X is empty: at least one sequence is needed")
                self.n_features_in_ = 1
            return X
        if self.kernel == "precomputed":
            if sp.issparse(X):
                X = X.toarray()
            X = check_array(X, accept_sparse=False)
            if at_fit:
                if X.shape[0] != X.shape[1]:
                    raise ValueError("X should be a square kernel matrix with "
                                     "kernel='precomputed', got shape %r" % (X.shape,))
                self.n_features_in_ = X.shape[1]
            elif X.shape[1] != self.n_features_in_:
                raise ValueError("X.shape[1] = %d should be equal to %d, the number of samples "
                                 "at training time (kernel='precomputed')"
                                 % (X.shape[1], self.n_features_in_))
            return X
        X = check_array(X)
        if at_fit:
            self.n_features_in_ = X.shape[1]
        else:
            check_n_features(X, self.n_features_in_, owner=self)
        return X

    def _gram(self, X, Y):
        if self.kernel == "precomputed":
            return X
        if callable(self.kernel):
            if self._is_sequence_kernel() or hasattr(self.kernel, "diag"):
                K = np.asarray(self.kernel(X, Y))
                if K.dtype.kind == "c":
                    raise ValueError("the kernel returned complex values; a kernel matrix "
                                     "must be real")
                K = np.asarray(K, dtype=np.float64)
                if not np.isfinite(K).all():
                    raise ValueError("the kernel returned non-finite values")
                return K
            # Y None: the Gram matrix of X with itself (a user callable takes two
            # matrices, as SVC and KernelPerceptron call it)
            return call_kernel(self.kernel, X, X if Y is None else Y)
        return pairwise_kernels_for(self, X, Y, kernel=self.kernel, **self._kernel_params())

    def _fit_basis(self, X):
        """Features ``Phi`` (n, r) of the training rows and the map ``w -> dual_coef``."""
        self._check_kernel()
        if self.n_components is not None:
            gamma = self.gamma
            mercer = MercerMap(n_landmarks=min(int(self.n_components), self._n_rows(X)),
                               kernel=self.kernel, gamma=gamma, degree=self.degree,
                               coef0=self.coef0, random_state=self.random_state).fit(X)
            Phi = mercer.transform(X)
            self.X_fit_ = mercer.landmarks_
            self.landmark_indices_ = mercer.landmark_indices_
            return Phi, mercer.projection_
        K = self._gram(X, None if self.kernel != "precomputed" else X)
        K = 0.5 * (K + K.T)
        lam, U = scipy.linalg.eigh(K, check_finite=False)
        top = max(float(lam.max()), 0.0) if len(lam) else 0.0
        keep = lam > 1e-10 * top if top > 0 else np.zeros(len(lam), dtype=bool)
        if not keep.any():
            raise ValueError("the kernel matrix of the training data is zero: nothing to fit "
                             "(check gamma and the data)")
        lam, U = lam[keep], U[:, keep]
        Phi = U * np.sqrt(lam)
        self.X_fit_ = X if self.kernel != "precomputed" else np.empty((0, 0))
        self.landmark_indices_ = None
        return Phi, U / np.sqrt(lam)

    def _check_state(self):
        """The basis (``X_fit_`` or the landmarks) and ``dual_coef_`` agree
        (called by :func:`linclass.load`)."""
        super()._check_state()
        if "dual_coef_" not in vars(self):          # not fitted: nothing to check
            return
        landmarks = getattr(self, "landmark_indices_", None)   # models without Nystroem
        if landmarks is not None:
            check_state_array(landmarks, "landmark_indices_", (None,), kinds="iu")
        if self._is_sequence_kernel():
            if not isinstance(self.X_fit_, list):
                raise ValueError("X_fit_ must be a list of sequences")
            n_basis = len(self.X_fit_)
        elif self.kernel == "precomputed":
            n_train = self.n_features_in_
            if landmarks is None:
                n_basis = n_train
            else:
                n_basis = landmarks.shape[0]
                if n_basis and (landmarks.min() < 0 or landmarks.max() >= n_train):
                    raise ValueError("landmark_indices_ index outside the %d training samples"
                                     % n_train)
        else:
            X_fit = self.X_fit_
            if sp.issparse(X_fit):
                if X_fit.shape[1] != self.n_features_in_:
                    raise ValueError("X_fit_ has %d columns, n_features_in_ is %d"
                                     % (X_fit.shape[1], self.n_features_in_))
                self.X_fit_ = check_array(X_fit)
            else:
                check_state_array(X_fit, "X_fit_", (None, self.n_features_in_))
            check_finite_rows(X_fit, "X_fit_")
            n_basis = X_fit.shape[0]
        if n_basis == 0:
            raise ValueError("the model has an empty basis (X_fit_)")
        n_outputs = self._n_outputs()
        dual = self.dual_coef_
        if n_outputs == "any" and isinstance(dual, np.ndarray) and dual.ndim == 2:
            n_outputs = dual.shape[1]
        shape = (n_basis,) if n_outputs in (1, "any") else (n_basis, n_outputs)
        check_state_array(dual, "dual_coef_", shape)
        if "intercept_" in vars(self):
            check_state_array(self.intercept_, "intercept_", (n_outputs,))
        for name in ("dual_coef_", "intercept_"):
            value = vars(self).get(name)
            if isinstance(value, np.ndarray) and not np.isfinite(value).all():
                raise ValueError("%s must be finite (it holds NaN or infinity)" % name)

    def _n_outputs(self):
        """Columns of ``dual_coef_``: 1 (stored 1-D) for two classes, else one per
        class; regressors override it."""
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    @staticmethod
    def _n_rows(X):
        return len(X) if isinstance(X, list) else X.shape[0]

    def _kernel_to_fit(self, X):
        """``k(X, X_fit_)`` for prediction, shape (n_samples, n_basis)."""
        check_is_fitted(self, "dual_coef_")
        X = self._check_X(X, at_fit=False)
        if self.kernel == "precomputed":
            if self.landmark_indices_ is not None:
                return X[:, self.landmark_indices_]
            return X
        return self._gram(X, self.X_fit_)

    def _get_state(self):
        state = super()._get_state()
        if isinstance(state.get("X_fit_"), list):
            state["X_fit_"] = [s if isinstance(s, str) else list(s) for s in state["X_fit_"]]
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        if self._is_sequence_kernel():
            tags.input_tags.string = True
            tags.input_tags.two_d_array = False
        return tags


def check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) \
            or alpha < 0:
        raise ValueError("alpha must be a finite number >= 0, got %r" % (alpha,))
    return float(alpha)
