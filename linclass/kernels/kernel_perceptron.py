"""The kernel (dual) perceptron.

The perceptron's weight vector is a sum of training examples, so it can be kept
in the dual: ``F(x, c) = sum_s a[s, c] k(x_s, x)`` and a mistake on example i
adds 1 to ``a[i, y_i]`` (and subtracts 1 from the wrongly preferred class).
With the linear kernel it makes exactly the mistakes of the primal perceptron.

References
----------
Aizerman, M. A., Braverman, E. M. & Rozonoer, L. I. (1964). Theoretical
foundations of the potential function method in pattern recognition learning.
Freund, Y. & Schapire, R. E. (1999). Large margin classification using the
perceptron algorithm. Machine Learning 37, 277-296.
Dekel, O., Shalev-Shwartz, S. & Singer, Y. (2008). The Forgetron: a
kernel-based perceptron on a budget. SIAM J. Computing 37(5), 1342-1372.
"""
import warnings

import numpy as np

from .._validation import check_classification_target, check_no_overflow
from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_random_state, check_sample_weight, draw_seed)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning
from .pairwise import (KERNEL_CODES, KernelModelMixin, call_kernel, check_coef0, check_degree,
                       check_gamma, check_kernel_name, kernel_matrix, resolve_gamma, row_sq_norms,
                       rows_arguments)
from .svc import check_precomputed_gram

__all__ = ["KernelPerceptron"]


class KernelPerceptron(KernelModelMixin, ClassifierMixin, BaseEstimator):
    """Multi-class kernel perceptron with optional averaging and a budget.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    degree, gamma, coef0 :
        Kernel parameters, as in :class:`linclass.SVC`.
    max_iter : int, default=10
        Number of passes (epochs) over the training data.  Training stops
        early after an epoch without mistakes.
    average : bool, default=True
        Predict with the dual coefficients averaged over all steps (the
        averaged perceptron, a cheap stand-in for the voted perceptron of
        Freund & Schapire); False: the last coefficients.
    budget : int or None, default=None
        Maximal number of support vectors; when a mistake would exceed it,
        the oldest support vector is removed (the Forgetron's removal step).
    shuffle : bool, default=True
        Visit the examples in a new random order every epoch.
    cache_size : float, default=200
        Budget of the kernel-column cache in MB, > 0.
    random_state : int, Generator or None, default=None
    verbose : bool, default=False

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    support_ : ndarray (n_SV,) training indices with non-zero coefficients
    support_vectors_ : ndarray or sparse matrix (n_SV, n_features)
    dual_coef_ : ndarray (n_classes, n_SV)  coefficient of each support vector per class
    n_iter_ : int  epochs run
    mistakes_ : ndarray (``n_iter_``,)  mistakes per epoch
    n_features_in_ : int
    """

    def __init__(self, kernel="rbf", degree=3, gamma="scale", coef0=0.0, max_iter=10,
                 average=True, budget=None, shuffle=True, cache_size=200, random_state=None,
                 verbose=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.max_iter = max_iter
        self.average = average
        self.budget = budget
        self.shuffle = shuffle
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        """Check the parameters (fit and :func:`linclass.load` call it);
        returns the checked (degree, coef0)."""
        check_kernel_name(self.kernel)
        check_positive(self.max_iter, "max_iter", integer=True)
        check_positive(self.cache_size, "cache_size")
        degree = check_degree(self.degree)
        coef0 = check_coef0(self.coef0)
        if self.budget is not None:
            check_positive(self.budget, "budget", integer=True)
        if not (isinstance(self.gamma, str) and self.gamma in ("scale", "auto")):
            check_gamma(self.gamma)
        check_random_state(self.random_state)
        return degree, coef0

    def fit(self, X, y, sample_weight=None):
        """Run the perceptron on X, y.

        ``sample_weight`` is accepted for API compatibility only when every
        weight is equal (a perceptron step has no natural weighted form):
        other weights raise ``ValueError``; examples of weight 0 are left out.
        """
        degree, coef0 = self._check_params()
        if self.kernel == "precomputed":
            X = check_precomputed_gram(X, at_fit=True)
        else:
            X = check_array(X)
        check_no_overflow(X, self)
        n_samples = X.shape[0]
        classes, codes = check_classification_target(y, n_samples)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        keep = sample_weight > 0
        if not keep.any():
            raise ValueError("every sample has weight zero: nothing to train on")
        positive = sample_weight[keep]
        if not np.allclose(positive, positive[0]):
            raise ValueError("KernelPerceptron supports only equal sample weights (or 0 "
                             "to leave a sample out)")
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.shape_fit_ = X.shape
        kept = np.flatnonzero(keep)
        if callable(self.kernel):
            solver_X = call_kernel(self.kernel, X[kept], X[kept])
            kernel_name, gamma = "precomputed", 0.0
        elif self.kernel == "precomputed":
            solver_X = np.ascontiguousarray(X[np.ix_(kept, kept)])
            kernel_name, gamma = "precomputed", 0.0
        else:
            solver_X = X[kept] if len(kept) < n_samples else X
            kernel_name = self.kernel
            gamma = resolve_gamma(self.gamma, X) if kernel_name != "linear" else 0.0
        self._gamma = gamma
        args = rows_arguments(solver_X)
        from .._core._kernel_perceptron import kernel_perceptron_fit
        alpha, alpha_avg, mistakes = kernel_perceptron_fit(
            **args, sq_norms=row_sq_norms(solver_X) if kernel_name == "rbf" else None,
            codes=codes[kept], n_classes=len(classes), kind=KERNEL_CODES[kernel_name],
            gamma=gamma, coef0=coef0, degree=degree, n_epochs=int(self.max_iter),
            shuffle=bool(self.shuffle), seed=draw_seed(self.random_state),
            budget=int(self.budget or 0), average=bool(self.average),
            cache_bytes=float(self.cache_size) * 2**20)
        # epochs after the first one without mistakes change nothing but the
        # average; report the number that mattered
        clean = np.flatnonzero(mistakes == 0)
        self.n_iter_ = int(clean[0] + 1) if len(clean) else int(self.max_iter)
        self.mistakes_ = mistakes[:self.n_iter_]
        if self.verbose:
            print("KernelPerceptron: mistakes per epoch %s" % self.mistakes_.tolist())
        if not len(clean) and len(classes) >= 2:
            warnings.warn("KernelPerceptron made mistakes in every one of its %d epochs "
                          "(the data may not be separable in the kernel's feature space)"
                          % self.max_iter, ConvergenceWarning)
        coef = alpha_avg if self.average else alpha
        is_sv = (alpha != 0).any(axis=1)
        sv_local = np.flatnonzero(is_sv)
        self.support_ = kept[sv_local].astype(np.int32)
        self.dual_coef_ = np.ascontiguousarray(coef[sv_local].T)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[self.support_]
        self._sv_sq_norms = (row_sq_norms(self.support_vectors_) if kernel_name == "rbf"
                             and self.kernel != "precomputed" else None)
        return self

    def _scores(self, X):
        check_is_fitted(self, "support_")
        if self.kernel == "precomputed":
            K = check_precomputed_gram(X, at_fit=False, n_train=self.shape_fit_[0])
            K = K[:, self.support_]
        else:
            X = check_array(X)
            check_n_features(X, self.n_features_in_, owner=self)
            if callable(self.kernel):
                K = call_kernel(self.kernel, X, self.support_vectors_)
            else:
                K = kernel_matrix(X, self.support_vectors_, self.kernel, gamma=self._gamma,
                                  owner=self,
                                  coef0=float(self.coef0), degree=check_degree(self.degree),
                                  Y_sq_norms=self._sv_sq_norms)
        return K @ self.dual_coef_.T

    def decision_function(self, X):
        """Scores (n_samples, n_classes); for two classes the difference (n_samples,)."""
        scores = self._scores(X)
        if len(self.classes_) == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """The class of highest score (ties: the first class)."""
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

