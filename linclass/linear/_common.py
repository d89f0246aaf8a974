"""Helpers shared by the flat linear family (not part of the public API).

The margin-based classifiers (perceptron, linear and multi-class SVMs, the
least-squares family, SGD, one-vs-rest / one-vs-one) share the linear decision
function and the thread pool; the probabilistic ones (naive Bayes, logistic
regression, MaxEnt) share the stable log-softmax, a ``score`` that refuses
unseen labels, single-threaded BLAS around L-BFGS and the arrays their
kernels read.  Input checks are not here: they are the contract of
:mod:`linclass._validation`.
"""
import numbers
import os
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._validation import (check_finite_output, check_is_fitted, check_predict_X, check_target,
                           single_threaded_blas)

__all__ = ["LinearDecisionMixin", "CheckedScoreMixin", "dense_or_csr_matmul", "log_softmax",
           "lbfgs_progress", "map_threads", "resolve_n_jobs", "rows_args",
           "single_threaded_blas"]


def resolve_n_jobs(n_jobs, n_tasks):
    """Number of worker threads: None -> 1, -1 -> all CPUs, capped at n_tasks."""
    if n_jobs is None:
        n = 1
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError("n_jobs must be None, a positive integer or -1 (all CPUs), "
                         "got %r" % (n_jobs,))
    elif n_jobs < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
    else:
        n = int(n_jobs)
    return max(1, min(n, n_tasks))


def map_threads(function, tasks, n_jobs):
    """``[function(t) for t in tasks]``, on a thread pool when ``n_jobs > 1``.

    The ``_core`` kernels release the GIL, so threads run them in parallel.
    """
    tasks = list(tasks)
    n = resolve_n_jobs(n_jobs, len(tasks))
    if n == 1:
        return [function(t) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(function, tasks))


def dense_or_csr_matmul(X, M):
    """``X @ M`` as a dense ndarray for dense or CSR ``X`` and dense ``M`` (an
    overflow is not warned about: callers check the scores, check_finite_output)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = X @ M
    return np.asarray(out)


class LinearDecisionMixin:
    """``decision_function`` / ``predict`` of a linear classifier.

    Expects ``coef_`` of shape (1, n_features) for two classes (positive
    score -> ``classes_[1]``) or (n_classes, n_features), ``intercept_`` to
    match, and ``classes_``.
    """

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores ``X @ coef_.T + intercept_``.

        Returns shape (n_samples,) for a binary problem (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        X = check_predict_X(self, X)
        scores = dense_or_csr_matmul(X, self.coef_.T) + self.intercept_
        check_finite_output(self, scores, X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: the highest score (ties go to the first class)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]


def log_softmax(scores):
    """Row-wise ``log(softmax(scores))`` with the max subtracted first."""
    scores = np.asarray(scores, dtype=np.float64)
    top = np.max(scores, axis=1, keepdims=True)
    impossible = np.isneginf(top).ravel()      # every class has probability 0
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        shifted = scores - top
        out = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    if impossible.any():                       # no evidence for any class: uniform
        out[impossible] = -np.log(scores.shape[1])
    return out


class CheckedScoreMixin:
    """``score`` that validates ``y`` before predicting (before ClassifierMixin)."""

    def score(self, X: Any, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (weighted if given).

        A label of ``y`` that is not in ``classes_`` can never be predicted
        and counts as an error, as in scikit-learn (so a cross-validation fold
        holding a class the training folds lack still gets a score); ``y``
        itself is validated first (no NaN, no mix of strings and numbers).
        """
        check_is_fitted(self, "classes_")
        y = check_target(y)
        return super().score(X, y, sample_weight=sample_weight)


def lbfgs_progress(owner, verbose):
    """A ``scipy.optimize.minimize`` callback printing one line per L-BFGS
    iteration (iteration, objective, gradient norm) when ``verbose``, else None."""
    if not verbose:
        return None
    state = {"iteration": 0}

    def callback(intermediate_result):
        state["iteration"] += 1
        jac = getattr(intermediate_result, "jac", None)
        grad = "" if jac is None else ", |grad| %.3g" % float(np.linalg.norm(jac))
        print("%s lbfgs iter %d: objective / sum(sample_weight) %.10g%s"
              % (owner, state["iteration"], float(intermediate_result.fun), grad))

    return callback


def rows_args(X):
    """Keyword arguments describing X for the ``_core._logistic`` kernels."""
    n_rows, n_cols = X.shape
    if sp.issparse(X):
        data, indices, indptr = X.data, X.indices, X.indptr
        if data.shape[0] == 0:       # all rows empty: give the kernel a readable pointer
            data, indices = np.zeros(1), np.zeros(1, dtype=np.int32)
        return dict(data=data, indices=indices, indptr=indptr, n_rows=n_rows,
                    n_cols=n_cols, dense=False)
    return dict(data=X.reshape(-1), indices=np.zeros(1, dtype=np.int32),
                indptr=np.zeros(1, dtype=np.int32), n_rows=n_rows, n_cols=n_cols, dense=True)
