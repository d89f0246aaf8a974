"""Naive Bayes with mixture class-conditionals, trained by EM.

Plain naive Bayes models each class with one distribution; a class whose
documents fall into several sub-topics is then poorly described.  Here each
class ``w`` has ``M`` components:

    P(x | w) = sum_m P(c_m | w) P(x | c_m, w)

with multinomial (word counts) or multivariate Bernoulli (word presence)
components.  The components of each class are fitted by expectation
maximisation on that class's samples; prediction is ``argmax_w log P(w) +
log P(x | w)`` with log-sum-exp over the components.

EM maximises the posterior (MAP-EM): the Lidstone smoothing ``alpha`` is a
symmetric Dirichlet(alpha + 1) prior on each component's parameters (a
Beta(alpha + 1, alpha + 1) per feature for the Bernoulli model) and
``alpha_weights`` a Dirichlet(alpha_weights + 1) prior on the mixing weights.
The objective -- weighted log-likelihood plus log prior -- never decreases
from one EM iteration to the next (``history_`` records it; the tests check
it).  ``n_init`` restarts from random responsibilities (seeded by
``random_state``) keep the best objective per class.  With ``n_components=1``
the model is exactly :class:`linclass.MultinomialNB` / :class:`BernoulliNB`
with the same ``alpha``.

References
----------
Nigam, K., McCallum, A., Thrun, S., Mitchell, T. (2000). Text classification
from labeled and unlabeled documents using EM. Machine Learning 39.
Dempster, A., Laird, N., Rubin, D. (1977). Maximum likelihood from incomplete
data via the EM algorithm. JRSS B 39.
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from ._common import CheckedScoreMixin
from .._validation import check_max_iter, iteration_budget
from .._validation import check_classification_target, check_finite_output
from .._validation import (check_array, check_is_fitted, check_n_features, check_positive,
                           check_random_state, check_sample_weight)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning

__all__ = ["MixtureNB"]

_EVENT_MODELS = ("multinomial", "bernoulli")


def _dot(X, A):
    """X @ A as a dense array (X dense or CSR)."""
    out = X @ A
    return np.asarray(out.toarray() if sp.issparse(out) else out)


class MixtureNB(CheckedScoreMixin, ClassifierMixin, BaseEstimator):
    """Naive Bayes whose class-conditionals are mixtures, fitted by EM.

    Parameters
    ----------
    n_components : int, default=2
        Mixture components per class (``M``).
    event_model : {"multinomial", "bernoulli"}
    alpha : float, default=1.0
        Lidstone smoothing of the component parameters (> 0).
    alpha_weights : float, default=1.0
        Smoothing of the mixing weights ``P(c_m | w)`` (>= 0).
    binarize : float, default=0.0
        Bernoulli model: ``x_j > binarize`` counts as present.
    fit_prior : bool, default=True
        Learn the class priors (else uniform).
    max_iter : int, default=100
        EM iterations per restart.
    tol : float, default=1e-6
        Stop when the objective improves by less than ``tol`` times its
        absolute value.
    n_init : int, default=3
        Random restarts per class; the best objective is kept.
    random_state : int, RandomState, Generator or None

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    class_log_prior_ : ndarray (n_classes,)
    component_log_weight_ : ndarray (n_classes, n_components)
        ``log P(c_m | w)``.
    feature_log_prob_ : ndarray (n_classes, n_components, n_features)
        ``log theta`` of each component.
    feature_log_neg_prob_ : ndarray (n_classes, n_components, n_features)
        Bernoulli model only: ``log(1 - theta)``.
    objective_ : ndarray (n_classes,)
        Final MAP objective of each class's mixture.
    history_ : list (per class) of lists (per restart) of objective values
    n_iter_ : ndarray (n_classes,) EM iterations of the kept restart
    n_features_in_ : int
    """

    def __init__(self, n_components=2, event_model="multinomial", alpha=1.0, alpha_weights=1.0,
                 binarize=0.0, fit_prior=True, max_iter=100, tol=1e-6, n_init=3,
                 random_state=None):
        self.n_components = n_components
        self.event_model = event_model
        self.alpha = alpha
        self.alpha_weights = alpha_weights
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True     # count models on Gaussian blobs
        tags.input_tags.positive_only = True
        return tags

    # -- parameters and input -------------------------------------------------
    def _check_params(self):
        check_positive(self.n_components, "n_components", integer=True)
        if self.event_model not in _EVENT_MODELS:
            raise ValueError("event_model must be one of %s, got %r"
                             % (_EVENT_MODELS, self.event_model))
        check_positive(self.alpha, "alpha")
        check_positive(self.alpha_weights, "alpha_weights", strict=False)
        check_max_iter(self, self.max_iter)
        check_positive(self.tol, "tol", strict=False)
        check_positive(self.n_init, "n_init", integer=True)
        if not isinstance(self.binarize, numbers.Real) or not np.isfinite(self.binarize):
            raise ValueError("binarize must be a finite number, got %r" % (self.binarize,))
        if not isinstance(self.fit_prior, (bool, np.bool_)):
            raise ValueError("fit_prior must be True or False, got %r" % (self.fit_prior,))

    def _prepare_X(self, X):
        X = check_array(X)
        if self.event_model == "bernoulli":
            if sp.issparse(X):
                X = X.copy()
                X.data = (X.data > self.binarize).astype(np.float64)
                X.eliminate_zeros()
            else:
                X = (X > self.binarize).astype(np.float64)
        else:
            data = X.data if sp.issparse(X) else X
            if data.size and data.min() < 0:
                raise ValueError("Negative values in data: the multinomial model needs "
                                 "non-negative counts")
        return X

    # -- EM --------------------------------------------------------------------
    def _log_component_likelihood(self, X, log_theta, log_neg):
        """(n, M) log P(x_i | c_m) up to a constant that does not depend on m."""
        if self.event_model == "multinomial":
            return _dot(X, log_theta.T)                                 # x_i . log theta_m
        # b . log theta + (1 - b) . log(1 - theta)
        return _dot(X, (log_theta - log_neg).T) + log_neg.sum(axis=1)[None, :]

    def _m_step(self, X, w, R):
        """MAP parameters from responsibilities R (n, M) and sample weights w."""
        WR = R * w[:, None]                                             # (n, M)
        Nm = WR.sum(axis=0)                                             # (M,)
        counts = np.asarray((X.T @ WR).T if sp.issparse(X) else WR.T @ X)   # (M, d)
        M = R.shape[1]
        a, aw = float(self.alpha), float(self.alpha_weights)
        log_weight = np.log(Nm + aw) - np.log(Nm.sum() + M * aw) if Nm.sum() + M * aw > 0 \
            else np.full(M, -np.log(M))
        if self.event_model == "multinomial":
            num = counts + a
            log_theta = np.log(num) - np.log(num.sum(axis=1, keepdims=True))
            return log_weight, log_theta, None
        num = counts + a
        den = Nm[:, None] + 2 * a
        return log_weight, np.log(num) - np.log(den), np.log(den - num) - np.log(den)

    def _objective(self, X, w, log_weight, log_theta, log_neg):
        """Weighted log-likelihood + log prior; also the responsibilities."""
        joint = self._log_component_likelihood(X, log_theta, log_neg) + log_weight[None, :]
        norm = logsumexp(joint, axis=1)
        R = np.exp(joint - norm[:, None])
        a, aw = float(self.alpha), float(self.alpha_weights)
        log_prior = aw * log_weight.sum() + a * log_theta.sum()
        if log_neg is not None:
            log_prior += a * log_neg.sum()
        return float(w @ norm) + log_prior, R

    def _fit_class(self, X, w, rng):
        n, M = X.shape[0], int(self.n_components)
        best = None
        histories = []
        for _ in range(int(self.n_init)):
            R = rng.dirichlet(np.ones(M), size=n)                      # random soft start
            history = []
            converged = False
            for it in range(iteration_budget(self.max_iter)):
                params = self._m_step(X, w, R)
                obj, R = self._objective(X, w, *params)
                if not np.isfinite(obj):
                    raise ValueError("MixtureNB: the EM objective became %r at iteration %d "
                                     "(overflow); scale the counts or increase alpha"
                                     % (obj, it + 1))
                history.append(obj)
                if it and obj - history[-2] <= self.tol * abs(obj):
                    converged = True
                    break
            histories.append(history)
            if best is None or history[-1] > best[0]:
                best = (history[-1], params, len(history), converged)
        if not best[3] and M > 1:
            warnings.warn("MixtureNB: EM did not converge in max_iter=%d iterations; increase "
                          "max_iter or tol" % self.max_iter, ConvergenceWarning)
        return best, histories

    def fit(self, X, y, sample_weight=None):
        """Fit each class's mixture by EM on that class's samples."""
        self._check_params()
        X = self._prepare_X(X)
        classes, codes = check_classification_target(y, X.shape[0])
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        n_classes, M, d = len(classes), int(self.n_components), X.shape[1]
        class_weight = np.bincount(codes, weights=sample_weight, minlength=n_classes)
        if np.any(class_weight <= 0):
            raise ValueError("class %r has zero total sample weight"
                             % classes[np.flatnonzero(class_weight <= 0)[0]])
        log_weight = np.empty((n_classes, M))
        log_theta = np.empty((n_classes, M, d))
        log_neg = np.empty((n_classes, M, d)) if self.event_model == "bernoulli" else None
        self.objective_ = np.empty(n_classes)
        self.n_iter_ = np.empty(n_classes, dtype=np.int64)
        self.history_ = []
        for k in range(n_classes):
            rows = np.flatnonzero(codes == k)
            (obj, params, n_iter, _), histories = self._fit_class(X[rows], sample_weight[rows],
                                                                  rng)
            log_weight[k], log_theta[k] = params[0], params[1]
            if log_neg is not None:
                log_neg[k] = params[2]
            self.objective_[k] = obj
            self.n_iter_[k] = n_iter
            self.history_.append(histories)
        self.classes_ = classes
        self.class_log_prior_ = (np.log(class_weight) - np.log(class_weight.sum())
                                 if self.fit_prior else np.full(n_classes, -np.log(n_classes)))
        self.component_log_weight_ = log_weight
        self.feature_log_prob_ = log_theta
        if log_neg is not None:
            self.feature_log_neg_prob_ = log_neg
        self.n_features_in_ = d
        return self

    # -- prediction ------------------------------------------------------------
    def _joint_log_likelihood(self, X):
        check_is_fitted(self, "feature_log_prob_")
        X = self._prepare_X(X)
        check_n_features(X, self.n_features_in_, owner=self)
        out = np.empty((X.shape[0], len(self.classes_)))
        for k in range(len(self.classes_)):
            log_neg = (self.feature_log_neg_prob_[k] if self.event_model == "bernoulli"
                       else None)
            comp = self._log_component_likelihood(X, self.feature_log_prob_[k], log_neg)
            out[:, k] = self.class_log_prior_[k] + logsumexp(
                comp + self.component_log_weight_[k][None, :], axis=1)
        return check_finite_output(self, out, X, "class log-likelihoods", log_domain=True)

    def predict_log_proba(self, X):
        """log P(w | x), normalised with log-sum-exp."""
        jll = self._joint_log_likelihood(X)
        return jll - logsumexp(jll, axis=1)[:, None]

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Predicted class label of each sample (the highest-scoring class)."""
        scores = self._joint_log_likelihood(X)          # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]
