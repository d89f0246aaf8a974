"""The perceptron family: online and batch perceptron, averaged and voted.

References
----------
Rosenblatt (1958), "The perceptron: a probabilistic model for information
storage and organization in the brain".
Duda, Hart & Stork (2001), *Pattern Classification*, 2nd ed., sec. 5.5 (the
perceptron criterion and its batch gradient step).
Freund & Schapire (1999), "Large margin classification using the perceptron
algorithm" (voted perceptron).
Collins (2002), "Discriminative training methods for hidden Markov models"
(averaged perceptron); Daume III (2006), thesis sec. 2.1.1 (lazy averaging).
Crammer & Singer (2003), "Ultraconservative online algorithms for multiclass
problems" (one weight vector per class, update towards the true and away from
the best wrong class).
"""
import warnings

import numpy as np
import scipy.sparse as sp

from .._core import _perceptron
from ._common import LinearDecisionMixin
from .._validation import check_max_iter, iteration_budget
from .._validation import check_finite_fit, check_finite_output, check_no_overflow
from .._validation import (check_X, check_classification_data, check_predict_X,
                           class_weight_per_sample, kernel_rows)
from .._validation import (check_n_features, check_partial_fit_classes,
                           check_positive, check_sample_weight, check_target, draw_seed,
                           encode_labels)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["Perceptron"]

_MODES = ("sequential", "batch")


class Perceptron(LinearDecisionMixin, ClassifierMixin, BaseEstimator):
    """Perceptron classifier (binary or multi-class), optionally averaged or voted.

    Binary problems learn one weight vector ``w`` and predict
    ``classes_[1]`` when ``x @ w + b > 0``.  With more classes there is one
    vector per class and the prediction is ``argmax_m x @ w_m + b_m``; a
    mistake moves the true class's vector towards ``x`` and the best-scoring
    wrong class's vector away from it.

    Parameters
    ----------
    mode : {"sequential", "batch"}, default="sequential"
        ``"sequential"``: the classic online rule, one update per mistake.
        ``"batch"``: per epoch, the sum of the updates of all misclassified
        points with the weights held fixed (a gradient step on the perceptron
        criterion ``sum_{mistakes} -y_i w @ x_i``).
    max_iter : int, default=100
        Maximum number of epochs (passes over the data).
    fit_intercept : bool, default=True
        Learn an (unregularised) intercept ``b``.
    average : bool, default=False
        Publish the average of the weight vectors after every example
        (per epoch in batch mode), computed with the lazy-averaging trick.
    voted : bool, default=False
        Voted perceptron (Freund & Schapire 1999): predictions are a vote of
        every intermediate weight vector, weighted by how many examples it
        survived.  The mistakes are stored (``voted_support_``), so memory
        grows with their number.  Sequential mode and ``fit`` only; ``coef_``
        then holds the averaged weights.
    shuffle : bool, default=True
        Visit the examples in a new random order every epoch (sequential mode).
    eta0 : float, default=1.0
        Step size multiplying every update.
    class_weight : None, "balanced" or dict, default=None
        Multiplies the step of examples of each class.
    random_state : None, int or numpy Generator/RandomState
        Seeds the shuffling.
    warm_start : bool, default=False
        ``fit`` starts from the previous solution (and its running average).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        Epochs run by the last ``fit`` (or total over ``partial_fit`` calls).
    mistakes_per_epoch_ : ndarray of int
        Misclassified training points in each epoch of the last call.
    history_ : list of dict
        The same, one row per epoch (``epoch``, ``mistakes``), as
        :func:`linclass.metrics.plotting.plot_training_history` draws it.

    Notes
    -----
    Training stops at the first epoch without a mistake (the data are then
    separated, with ties counted as mistakes); otherwise at ``max_iter``
    with a :class:`~linclass.exceptions.ConvergenceWarning`.
    """

    def __init__(self, mode="sequential", max_iter=100, fit_intercept=True, average=False,
                 voted=False, shuffle=True, eta0=1.0, class_weight=None, random_state=None,
                 warm_start=False):
        self.mode = mode
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.average = average
        self.voted = voted
        self.shuffle = shuffle
        self.eta0 = eta0
        self.class_weight = class_weight
        self.random_state = random_state
        self.warm_start = warm_start

    # ------------------------------------------------------------------
    def _check_params(self):
        if self.mode not in _MODES:
            raise ValueError("mode must be one of %s, got %r" % (_MODES, self.mode))
        check_max_iter(self, self.max_iter)
        check_positive(self.eta0, "eta0")
        if self.voted and self.mode != "sequential":
            raise ValueError("voted=True needs mode='sequential'")

    def _init_state(self, n_classes, n_features):
        n_vectors = 1 if n_classes == 2 else n_classes
        self._W = np.zeros((n_vectors, n_features + 1))
        self._U = np.zeros((n_vectors, n_features + 1))
        self._n_seen = 0.0

    def _run(self, X, codes, cost, max_epochs, stop_when_separated, record_mistakes):
        rows = kernel_rows(X)
        n_run, mistakes, n_seen, log = _perceptron.perceptron_fit(
            **rows, n_samples=X.shape[0], n_features=X.shape[1], y=codes, cost=cost,
            coef=self._W, avg_sum=self._U, n_seen=float(self._n_seen),
            max_epochs=int(max_epochs), batch=self.mode == "batch",
            shuffle=bool(self.shuffle), seed=draw_seed(self._rng_source()), eta=float(self.eta0),
            fit_intercept=bool(self.fit_intercept), average=bool(self.average or self.voted),
            stop_when_separated=stop_when_separated, record_mistakes=record_mistakes)
        self._n_seen = n_seen
        self.mistakes_per_epoch_ = mistakes
        self.history_ = [{"epoch": e + 1, "mistakes": int(m)} for e, m in enumerate(mistakes)]
        return n_run, mistakes, log

    def _rng_source(self):
        # one stream per estimator and call: successive partial_fit calls
        # shuffle differently but reproducibly
        if not hasattr(self, "_rng") or self._rng is None:
            from .._validation import check_random_state
            self._rng = check_random_state(self.random_state)
        return self._rng

    def _publish(self):
        if (self.average or self.voted) and self._n_seen > 0:
            W = self._W - self._U / self._n_seen
        else:
            W = self._W
        self.coef_ = np.ascontiguousarray(W[:, :-1])
        self.intercept_ = W[:, -1].copy()

    # ------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Train on ``(X, y)`` for up to ``max_iter`` epochs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each example's step size.

        Returns
        -------
        self
        """
        self._check_params()
        # the kernel's sums and updates do not depend on the order of a row's
        # entries: unsorted CSR rows are used as they are (no copy)
        X, classes, codes, sample_weight = check_classification_data(
            X, y, sample_weight, accept_unsorted=True)
        check_no_overflow(X, self)
        cost = class_weight_per_sample(self.class_weight, classes, codes, sample_weight)
        keep = (self.warm_start and hasattr(self, "_W") and hasattr(self, "classes_")
                and np.array_equal(self.classes_, classes)
                and self.n_features_in_ == X.shape[1] and not self.voted)
        self._rng = None
        if not keep:
            self._init_state(len(classes), X.shape[1])
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        W_start = self._W.copy()
        n_run, mistakes, log = self._run(X, codes, cost, iteration_budget(self.max_iter), True,
                                         bool(self.voted))
        self.n_iter_ = int(n_run)
        self._publish()
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)
        if self.voted:
            self._store_votes(X, log, W_start)
        if mistakes.size and mistakes[-1] > 0:
            warnings.warn("Perceptron: %d training points still misclassified after "
                          "max_iter=%d epochs; the data may not be linearly separable"
                          % (mistakes[-1], self.max_iter), ConvergenceWarning)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over ``(X, y)``, continuing from the current weights.

        Parameters
        ----------
        X, y, sample_weight : as in :meth:`fit`
        classes : array-like, required on the first call
            All class labels that will ever appear.

        Returns
        -------
        self
        """
        self._check_params()
        first = not hasattr(self, "classes_")
        classes = check_partial_fit_classes(classes, getattr(self, "classes_", None))
        X = check_X(X, accept_unsorted=True)
        y = check_target(y, X.shape[0])
        if not first:
            check_n_features(X, self.n_features_in_, owner=self)
        classes, codes = encode_labels(y, classes)
        sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=True)
        cost = class_weight_per_sample(self.class_weight, classes, codes, sample_weight)
        if first or not hasattr(self, "_W"):
            self._init_state(len(classes), X.shape[1])
            if not first:   # loaded from disk: restart from the published weights
                self._W[:, :-1] = self.coef_
                self._W[:, -1] = self.intercept_
            self._rng = None
            self.n_iter_ = 0
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        W_start = self._W.copy()
        n_run, _, log = self._run(X, codes, cost, 1, False, bool(self.voted))
        self.n_iter_ += int(n_run)
        self._publish()
        if self.voted:
            self._store_votes(X, log, W_start, append=not first)
        return self

    # -- voted perceptron ---------------------------------------------
    def _store_votes(self, X, log, W_start, append=False):
        support = X[log["example"]]
        if append and hasattr(self, "voted_counts_"):
            old = self.voted_support_
            if sp.issparse(old) or sp.issparse(support):
                support = sp.vstack([sp.csr_matrix(old), sp.csr_matrix(support)]).tocsr()
            else:
                support = np.vstack([old, support])
            for key in ("target", "rival", "step"):
                log[key] = np.concatenate([getattr(self, "voted_%s_" % key), log[key]])
            previous = np.cumsum(self.voted_counts_)[:-1]    # n_seen of the old mistakes
            log["n_seen"] = np.concatenate([previous, log["n_seen"]])
        else:
            self.voted_initial_ = W_start
        self.voted_support_ = support
        self.voted_target_ = log["target"]
        self.voted_rival_ = log["rival"]
        self.voted_step_ = log["step"]
        # vector k (after the k-th mistake) is the current one for the examples
        # between mistake k and mistake k + 1 (Freund & Schapire's c_k)
        self.voted_counts_ = np.diff(np.concatenate([[0.0], log["n_seen"], [self._n_seen]]))

    def _vote_scores(self, X):
        n_vectors = self.voted_initial_.shape[0]
        support = self.voted_support_
        n_mistakes = support.shape[0]
        ones = 1.0 if self.fit_intercept else 0.0
        counts = self.voted_counts_
        if n_vectors == 1:
            delta = self.voted_step_[:, None]
        else:
            delta = np.zeros((n_mistakes, n_vectors))
            rows = np.arange(n_mistakes)
            delta[rows, self.voted_target_] += self.voted_step_
            delta[rows, self.voted_rival_] -= self.voted_step_
        n_out = 1 if n_vectors == 1 else n_vectors
        votes = np.zeros((X.shape[0], n_out))
        block = max(1, int(4e6 // max(1, (n_mistakes + 1) * n_vectors)))
        W0 = self.voted_initial_
        for start in range(0, X.shape[0], block):
            Xb = X[start:start + block]
            base = np.asarray(Xb @ W0[:, :-1].T) + W0[:, -1]               # (b, V)
            if n_mistakes:
                G = Xb @ support.T                                            # (b, M)
                G = (G.toarray() if sp.issparse(G) else np.asarray(G)) + ones
                S = np.cumsum(G[:, :, None] * delta[None, :, :], axis=1)     # (b, M, V)
                S = np.concatenate([np.zeros_like(S[:, :1]), S], axis=1) + base[:, None, :]
            else:
                S = base[:, None, :]
            if n_vectors == 1:
                votes[start:start + block, 0] = np.sign(S[:, :, 0]) @ counts
            else:
                winner = np.argmax(S, axis=2)                                 # (b, M+1)
                for v in range(n_vectors):
                    votes[start:start + block, v] = (winner == v) @ counts
        return votes / max(counts.sum(), 1.0)

    def decision_function(self, X):
        """Scores ``X @ coef_.T + intercept_``; for ``voted=True`` the vote shares.

        Returns shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        if not self.voted or not hasattr(self, "voted_counts_"):
            return super().decision_function(X)
        X = check_predict_X(self, X)
        scores = check_finite_output(self, self._vote_scores(X), X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_rng", None)
        return state
