"""Linear-chain conditional random field with sklearn-crfsuite's interface.

The model is the tagger's linear chain read as a log-linear distribution,

    P(y | x) = exp(F(x, y)) / Z(x),
    F(x, y) = sum_t sum_{f in x_t} x_t[f] * w[f, y_t] + sum_{t>=1} trans[y_{t-1}, y_t],

fitted by minimising the negative conditional log-likelihood plus
``c1 * ||theta||_1 + c2 * ||theta||_2^2`` (CRFsuite's objective) with L-BFGS
(``c1 = 0``) or OWL-QN (``c1 > 0``).  Log-partition, marginals and the gradient
come from one Cython forward-backward call over all sentences
(:mod:`linclass._core._crf`), threaded over sentences with ``n_jobs``.

Switching from sklearn-crfsuite is one import: ``CRF(algorithm="lbfgs", c1=0.1,
c2=0.1, max_iterations=100, all_possible_transitions=True)``, ``fit``,
``predict``, ``predict_single``, ``predict_marginals``,
``predict_marginals_single``, ``score``, ``classes_``, ``state_features_``,
``transition_features_`` behave as there; the ``flat_*`` metrics are in
:mod:`linclass.metrics`.

References
----------
Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
probabilistic models for segmenting and labeling sequence data.  ICML.
Sha, F., Pereira, F. (2003). Shallow parsing with conditional random fields.
HLT-NAACL.
Andrew, G., Gao, J. (2007). Scalable training of L1-regularized log-linear
models.  ICML.
Okazaki, N. (2007). CRFsuite: a fast implementation of conditional random
fields.  http://www.chokkan.org/software/crfsuite/
"""
import numbers
import time
import warnings

import numpy as np

from scipy.linalg.blas import daxpy, ddot

from .. import _validation
from ..base import BaseEstimator
from ..exceptions import ConvergenceWarning, NotFittedError
from . import _crf_kernels as kernels
from ._optimize import minimize_owlqn
from .tagger import (_check_features_param, _check_sentences, _encode_label_sequences,
                     _resolve_template, _token_accuracy)

__all__ = ["CRF"]

_ALGORITHMS = ("lbfgs", "l2sgd")


def _zero_valued(features, prefix, out):
    """Names of the attributes of one python-crfsuite item given the value 0."""
    for key, value in features.items():
        if isinstance(value, dict):
            _zero_valued(value, prefix + str(key) + ":", out)
        elif isinstance(value, (bool, np.bool_, numbers.Real)) and not isinstance(value, str) \
                and value == 0:
            out.append(prefix + str(key))


def _zero_valued_pairs(X, gold, attributes, n_labels):
    """Keys ``attribute * K + label`` of attributes given the value 0 at a token.

    CRFsuite creates the state feature (attribute, label) for every attribute
    of a training token, whatever its value; such a feature scores the label
    wherever the attribute is non-zero, so it changes the model.  The token
    matrix keeps no explicit zeros: they are found here.
    """
    index = {a: i for i, a in enumerate(attributes)}
    keys = []
    t = 0
    for sent in X:
        for token in sent:
            if isinstance(token, dict):
                names = []
                _zero_valued(token, "", names)
                for name in names:
                    f = index.get(name)
                    if f is not None:
                        keys.append(f * n_labels + int(gold[t]))
            t += 1
    return np.asarray(keys, dtype=np.int64)


class SequenceFeaturesMixin:
    """Token features of the probabilistic sequence models: python-crfsuite
    items (``features=None``) or a linclass feature template."""

    def _make_featurizer(self, X):
        from copy import deepcopy

        from ..features import FeatureTemplate
        if isinstance(self.features, FeatureTemplate):
            return deepcopy(self.features)
        if self.features is None:
            return FeatureTemplate(template=None, min_count=1)
        columns = self.columns
        if columns is None:
            first = next((tok for sent in X for tok in sent), None)
            if first is None or isinstance(first, str):
                columns = ("w",)
            elif isinstance(first, dict):
                raise ValueError("tokens are feature dicts: pass features=None "
                                 "(python-crfsuite style input)")
            elif not isinstance(first, (tuple, list, np.ndarray)):
                raise ValueError("X[0][0]: a token must be a word string or a tuple of "
                                 "column strings, got %s %r" % (type(first).__name__, first))
            else:
                n_cols = len(first)
                columns = ("w", "pos") if n_cols == 2 else \
                    ("w",) if n_cols == 1 else tuple("c%d" % i for i in range(n_cols))
        return FeatureTemplate(template=_resolve_template(self.features, columns), columns=columns)

    @staticmethod
    def _check_sentence_list(X, name="X"):
        X = _check_sentences(X, name)
        for i, sent in enumerate(X):
            if isinstance(sent, dict):
                raise ValueError("%s[%d] is a dict (a token?): %s must be a list of sentences, "
                                 "each a list of tokens; for one sentence use the *_single "
                                 "methods" % (name, i, name))
        return X

    def _featurize(self, X, fit, name="X"):
        X = self._check_sentence_list(X, name)
        if self.features is not None:
            first = next((tok for sent in X for tok in sent), None)
            if isinstance(first, str):
                X = [[(tok,) for tok in sent] for sent in X]
        if fit:
            Xf, lengths = self.features_.fit_transform(X)
        else:
            Xf, lengths = self.features_.transform(X)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Xf, offsets


class CRF(SequenceFeaturesMixin, BaseEstimator):
    """Linear-chain conditional random field (first order), trained by L-BFGS / OWL-QN.

    Parameters
    ----------
    algorithm : {"lbfgs", "l2sgd"}, default="lbfgs"
        ``"lbfgs"``: limited-memory quasi-Newton; OWL-QN when ``c1 > 0`` (as
        CRFsuite).  ``"l2sgd"``: stochastic gradient descent on the
        L2-regularised objective (CRFsuite's ``l2sgd``; ``c2 > 0``, ``c1 = 0``):
        one Cython pass per epoch updating only the active features, step
        ``1 / (lambda (t0 + t))`` with ``lambda = 2 c2 / N`` and ``t0`` from a
        calibrated initial rate; for large data, where one epoch of SGD gets
        near the optimum that L-BFGS needs many full passes to reach.
        Sentences are visited in a fixed pseudo-random order (seed 0), so
        training is deterministic.
    c1 : float, default=0
        L1 coefficient (``c1 * sum |theta|``).
    c2 : float, default=1
        L2 coefficient (``c2 * sum theta**2``; CRFsuite's convention).
    max_iterations : int or None, default=None
        Quasi-Newton iterations, or SGD epochs (None: until a stopping rule
        holds, with a hard cap of 100,000 quasi-Newton iterations and a
        ConvergenceWarning when it is reached; for ``l2sgd`` at most 1000
        epochs, CRFsuite's default).
    all_possible_states : bool, default=False
        Weights for every (attribute, label) pair; by default only for the
        pairs seen in training (CRFsuite's default).
    all_possible_transitions : bool, default=False
        Weights for every label pair; by default only for pairs seen in training.
    min_freq : float, default=0
        Drop state features seen fewer times in training.
    num_memories : int, default=6
        Correction pairs kept by L-BFGS.
    epsilon : float, default=1e-5
        Stop when ``||gradient|| / max(1, ||theta||) < epsilon``.
    period : int, default=10
    delta : float, default=1e-5
        Stop when the objective decreased by less than ``delta`` (relative)
        over the last ``period`` iterations (epochs for ``l2sgd``).
    max_linesearch : int, default=20
    features : None, str or FeatureTemplate, default=None
        ``None``: python-crfsuite input, each token a dict of features or a
        list of attribute strings (sklearn-crfsuite's ``sent2features``).
        A template string, a predefined template name (``"pos"``,
        ``"chunking"``, ``"ner"``) or a
        :class:`~linclass.features.FeatureTemplate`: tokens are strings or
        tuples of column values, as for :class:`SequenceTagger`.
    columns : tuple of str, optional
        Column names for a template (default as :class:`SequenceTagger`).
    n_iter_no_change : int, default=10
        With a dev set: stop after this many iterations without a better dev
        token accuracy, and keep the best weights.
    n_jobs : int, default=1
        Threads for the gradient (sentences split in equal-token chunks,
        results summed in a fixed order: deterministic) and for ``predict``.
    verbose : bool or int, default=False
        Print one line per iteration (loss, gradient norm, step, time, dev accuracy).
    calibration_eta, calibration_rate, calibration_samples, calibration_candidates, \
calibration_max_trials : ``l2sgd`` only (CRFsuite's names and defaults 0.1, 2,
        1000, 10, 20): the initial learning rate is chosen by running one epoch
        on ``calibration_samples`` sentences for rates ``calibration_eta``
        times powers of ``calibration_rate`` and keeping the one with the
        lowest loss.

    Attributes
    ----------
    classes_ : list of str
        The labels (sorted).
    features_ : FeatureTemplate (fitted)
    coef_ : ndarray (n_state_features,)
        Weights of the state features.
    attr_ptr_, attr_label_ : ndarray of int32
        State feature ``p`` belongs to attribute ``f`` with
        ``attr_ptr_[f] <= p < attr_ptr_[f+1]`` and scores label ``attr_label_[p]``.
    transitions_ : ndarray (K, K)
        Transition weights ``[previous, next]`` (zero where no feature exists).
    transition_mask_ : ndarray of bool (K, K)
        The label pairs that have a transition feature.
    state_features_ : dict {(attribute, label): weight}
        Non-zero state feature weights (as sklearn-crfsuite).
    transition_features_ : dict {(label_from, label_to): weight}
    history_ : list of dict
        Per iteration: objective, gradient norm, step, evaluations, seconds
        (wall clock and process CPU time since the start), dev accuracy.
    n_iter_ : int
    stop_reason_ : str
    """

    def __init__(self, algorithm="lbfgs", c1=0.0, c2=1.0, max_iterations=None,
                 all_possible_states=False, all_possible_transitions=False, min_freq=0,
                 num_memories=6, epsilon=1e-5, period=10, delta=1e-5, max_linesearch=20,
                 features=None, columns=None, n_iter_no_change=10, n_jobs=1, verbose=False,
                 calibration_eta=0.1, calibration_rate=2.0, calibration_samples=1000,
                 calibration_candidates=10, calibration_max_trials=20):
        self.algorithm = algorithm
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.min_freq = min_freq
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.max_linesearch = max_linesearch
        self.features = features
        self.columns = columns
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials

    # -------------------------------------------------------------- checks --
    def _check_params(self):
        if self.algorithm not in _ALGORITHMS:
            raise ValueError("algorithm must be one of %s, got %r" % (_ALGORITHMS, self.algorithm))
        for name in ("c1", "c2", "epsilon", "delta", "min_freq"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) \
                    or v < 0:
                raise ValueError("%s must be a finite number >= 0, got %r" % (name, v))
        if self.max_iterations is not None:
            _validation.check_positive(self.max_iterations, "max_iterations", integer=True)
        _validation.check_positive(self.num_memories, "num_memories", integer=True)
        _validation.check_positive(self.max_linesearch, "max_linesearch", integer=True)
        _validation.check_positive(self.n_iter_no_change, "n_iter_no_change", integer=True)
        _validation.check_positive(self.n_jobs, "n_jobs", integer=True)
        _check_features_param(self.features, self.columns)
        if isinstance(self.period, bool) or not isinstance(self.period, numbers.Integral) \
                or self.period < 0:
            raise ValueError("period must be an integer >= 0, got %r" % (self.period,))
        for name, low in (("calibration_eta", 0.0), ("calibration_rate", 1.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) \
                    or v <= low:
                raise ValueError("%s must be a finite number > %g, got %r" % (name, low, v))
        for name in ("calibration_samples", "calibration_candidates", "calibration_max_trials"):
            _validation.check_positive(getattr(self, name), name, integer=True)
        if self.algorithm == "l2sgd":
            if self.c1 != 0:
                raise ValueError("algorithm='l2sgd' minimises the L2-regularised objective "
                                 "only: c1 must be 0 (got %r); use algorithm='lbfgs' for L1"
                                 % (self.c1,))
            if self.c2 <= 0:
                raise ValueError("algorithm='l2sgd' needs c2 > 0 (its step size is "
                                 "1 / (2 c2 / N (t0 + t))), got %r" % (self.c2,))

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise NotFittedError("this CRF is not fitted yet; call fit() first")

    # ------------------------------------------------------------------ fit --
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on sentences ``X`` with label sequences ``y``.

        Parameters
        ----------
        X : list of sentences
            Each a list of tokens (feature dicts / attribute lists with
            ``features=None``, else strings or tuples of columns).
        y : list of list of str
        X_dev, y_dev : optional held-out sentences and labels
            Evaluated (token accuracy) after every iteration: training stops
            after ``n_iter_no_change`` iterations without improvement and the
            best weights are kept.  Dev labels must occur in ``y``.
        """
        self._check_params()
        X = self._check_sentence_list(X)
        if (X_dev is None) != (y_dev is None):
            raise ValueError("give both X_dev and y_dev, or neither")
        classes, gold = _encode_label_sequences(y, X)
        K = len(classes)
        self.features_ = self._make_featurizer(X)
        Xf, offsets = self._featurize(X, fit=True)
        if self.all_possible_states:
            table = kernels.StateTable.dense(Xf.shape[1], K)
        else:
            extra = None
            if self.features is None and self.min_freq == 0:
                extra = _zero_valued_pairs(X, gold, self.features_.attributes_, K)
            table = kernels.StateTable.observed(Xf, gold, K, self.min_freq, extra)
        batch = kernels.make_batch(Xf, offsets, table, gold)
        dev = None
        if X_dev is not None:
            X_dev = _check_sentences(X_dev, "X_dev")
            _, dev_gold = _encode_label_sequences(y_dev, X_dev, classes=classes)
            if not len(dev_gold):
                # an accuracy on no tokens is 1.0 at every iteration: early stopping
                # would keep the weights of the first iteration
                raise ValueError("X_dev holds no tokens: give a dev set with at least one "
                                 "labelled token, or none")
            dXf, doff = self._featurize(X_dev, fit=False, name="X_dev")
            dev = (kernels.make_batch(dXf, doff, table), dev_gold)
        if self.all_possible_transitions:
            mask = np.ones((K, K), dtype=bool)
        else:
            mask = np.zeros((K, K), dtype=bool)
            for s in range(len(offsets) - 1):
                g = gold[offsets[s]:offsets[s + 1]]
                mask[g[:-1], g[1:]] = True if len(g) > 1 else mask[g[:-1], g[1:]]
        n_state = table.n_state_features
        zeros_k = np.zeros(K)
        chunks = kernels.sentence_chunks(offsets, self.n_jobs)
        c2 = float(self.c2)

        def unpack(theta):
            trans = np.zeros((K, K))
            trans[mask] = theta[n_state:]
            return theta[:n_state], trans

        def objective(theta):
            w, trans = unpack(theta)
            grad = np.empty(len(theta))          # the kernel writes grad_w into its head
            nll, _, gt, _, _ = kernels.nll_and_gradient(table, batch, w, trans, zeros_k,
                                                        zeros_k, chunks, out_w=grad[:n_state])
            grad[n_state:] = gt[mask]
            if c2 > 0:
                nll += c2 * ddot(theta, theta)
                grad = daxpy(theta, grad, a=2.0 * c2)      # in place
            return nll, grad

        self.history_ = []
        best = {"acc": -1.0, "theta": None, "since": 0}
        t_start = time.perf_counter()
        cpu_start = time.process_time()

        def callback(k, theta, F, pg_norm, step, n_evals):
            row = {"iteration": k, "objective": float(F), "gradient_norm": float(pg_norm),
                   "step": float(step), "evaluations": int(n_evals),
                   "seconds": time.perf_counter() - t_start,
                   "cpu_seconds": time.process_time() - cpu_start,
                   "active_features": int(np.count_nonzero(theta))}
            stop = False
            if dev is not None:
                w, trans = unpack(theta)
                codes, _ = kernels.viterbi(table, dev[0], w, trans, zeros_k, zeros_k,
                                           self.n_jobs)
                acc = float(np.mean(codes == dev[1])) if len(codes) else 1.0
                row["dev_accuracy"] = acc
                if acc > best["acc"]:
                    best.update(acc=acc, theta=theta.copy(), since=0)
                else:
                    best["since"] += 1
                    stop = best["since"] >= self.n_iter_no_change
            self.history_.append(row)
            if self.verbose:
                print("iter %(iteration)4d  loss %(objective)14.4f  |g| %(gradient_norm)10.4e  "
                      "step %(step).3g  evals %(evaluations)d  active %(active_features)d  "
                      "%(seconds).2fs" % row
                      + ("  dev acc %.4f" % row["dev_accuracy"] if dev is not None else ""))
            return stop

        theta0 = np.zeros(n_state + int(mask.sum()))
        if self.algorithm == "l2sgd":
            theta, F, n_iter, reason = self._fit_l2sgd(table, batch, mask, callback)
        else:
            with _validation.single_threaded_blas():
                theta, F, n_iter, reason = minimize_owlqn(
                    objective, theta0, c1=float(self.c1), max_iterations=self.max_iterations,
                    num_memories=int(self.num_memories), epsilon=float(self.epsilon),
                    period=int(self.period), delta=float(self.delta),
                    max_linesearch=int(self.max_linesearch), callback=callback)
        if dev is not None and best["theta"] is not None:
            theta = best["theta"]
        if not np.all(np.isfinite(theta)):
            raise ValueError("CRF: training diverged: non-finite weights (the feature values "
                             "or c1/c2 overflow double precision)")
        if reason == "max_iterations (hard cap)":
            warnings.warn("CRF: L-BFGS stopped at the hard cap of %d iterations "
                          "(max_iterations=None) before a stopping rule held"
                          % n_iter, ConvergenceWarning)
        if self.verbose:
            print("stopped after %d iterations: %s" % (n_iter, reason))
        w, trans = unpack(theta)
        self.classes_ = [str(c) for c in classes]
        self.coef_ = np.ascontiguousarray(w)
        self.attr_ptr_ = table.attr_ptr
        self.attr_label_ = table.attr_label
        self.transitions_ = trans
        self.transition_mask_ = mask
        self.objective_ = float(F)
        self.n_iter_ = int(n_iter)
        self.stop_reason_ = reason
        self._table = table
        return self

    def _fit_l2sgd(self, table, batch, mask, callback):
        """SGD epochs (``_crf.sgd_epoch``) after calibrating the initial rate."""
        K = table.n_labels
        N = batch.n_sentences
        c2 = float(self.c2)
        lam = 2.0 * c2 / max(N, 1)
        rng = np.random.default_rng(0)
        mask_f = mask.astype(np.float64)

        def epoch(sub, w, trans, order, t0, t, scale):
            return kernels.sgd_epoch(table, sub, w, trans, mask_f, order, lam, t0, t, scale)

        def theta_of(w, trans, scale):
            return np.concatenate([scale * w, scale * trans[mask]])

        # calibration (CRFsuite's l2sgd_calibration): one epoch on a sample per
        # candidate rate, from zero weights; keep the rate with the lowest loss
        sample_ids = np.sort(rng.permutation(N)[:min(N, int(self.calibration_samples))])
        sample = kernels.sub_batch(batch, sample_ids)
        n_s = sample.n_sentences
        reg_share = c2 * n_s / max(N, 1)

        def sample_loss(w, trans):
            nll, _, _, _, _ = kernels.nll_and_gradient(table, sample, w, trans, np.zeros(K),
                                                       np.zeros(K), [(0, n_s)])
            return nll + reg_share * (w.dot(w) + (trans * trans).sum())

        initial = sample_loss(np.zeros(table.n_state_features), np.zeros((K, K)))
        eta = float(self.calibration_eta)
        rate = float(self.calibration_rate)
        best_eta, best_loss = eta, np.inf
        candidates, trials, decreasing = int(self.calibration_candidates), 0, False
        sample_order = rng.permutation(n_s).astype(np.int64)
        while candidates > 0 and trials < int(self.calibration_max_trials):
            w = np.zeros(table.n_state_features)
            trans = np.zeros((K, K))
            t0 = max(1.0 / (lam * eta), 1.0 + 1e-6)
            try:
                _, _, scale, status = epoch(sample, w, trans, sample_order, t0, 0.0, 1.0)
                loss = sample_loss(scale * w, scale * trans) if status == 0 else np.inf
            except FloatingPointError:
                loss = np.inf
            ok = bool(np.isfinite(loss) and loss < initial)
            if ok:
                candidates -= 1
                if loss < best_loss:
                    best_eta, best_loss = eta, loss
            if self.verbose:
                print("calibration: eta %.6g  loss %.4f%s" % (eta, loss, "" if ok else
                                                               "  (worse than initial)"))
            if not decreasing:
                if ok and candidates > 0:
                    eta *= rate
                else:
                    decreasing, candidates = True, int(self.calibration_candidates)
                    eta = float(self.calibration_eta) / rate
            else:
                eta /= rate
            trials += 1
        if not np.isfinite(best_loss):
            raise ValueError("CRF: l2sgd calibration found no learning rate that lowers "
                             "the loss; lower calibration_eta")
        self.learning_rate_ = best_eta
        t0 = max(1.0 / (lam * best_eta), 1.0 + 1e-6)
        w = np.zeros(table.n_state_features)
        trans = np.zeros((K, K))
        t, scale = 0.0, 1.0
        max_epochs = self.max_iterations if self.max_iterations is not None else 1000
        period, delta = int(self.period), float(self.delta)
        losses = []
        reason = "max_iterations reached"
        k = 0
        F = np.inf
        for k in range(1, max_epochs + 1):
            eta_now = 1.0 / (lam * (t0 + t))
            nll, t, scale, status = epoch(batch, w, trans, rng.permutation(N).astype(np.int64),
                                          t0, t, scale)
            if status != 0:
                raise ValueError("CRF: l2sgd diverged in epoch %d (forward-backward "
                                 "overflowed); lower calibration_eta" % k)
            theta = theta_of(w, trans, scale)
            F = nll + c2 * theta.dot(theta)
            losses.append(F)
            if not np.isfinite(F):
                raise ValueError("CRF: l2sgd diverged in epoch %d (non-finite loss)" % k)
            if callback(k, theta, F, float("nan"), eta_now, N):
                reason = "no dev improvement in %d epochs" % self.n_iter_no_change
                break
            if period and len(losses) > period:
                old = losses[len(losses) - 1 - period]
                if (old - F) / max(abs(F), 1e-300) < delta:
                    reason = "relative decrease over %d epochs below delta" % period
                    break
        return theta_of(w, trans, scale), float(F), k, reason

    # -------------------------------------------------------------- predict --
    def _state_table(self):
        table = getattr(self, "_table", None)
        if table is None:
            table = kernels.StateTable(self.attr_ptr_, self.attr_label_, len(self.classes_))
            self._table = table
        return table

    def _batch(self, X):
        self._check_fitted()
        Xf, offsets = self._featurize(X, fit=False)
        return kernels.make_batch(Xf, offsets, self._state_table())

    def _zeros(self):
        return np.zeros(len(self.classes_))

    def predict(self, X):
        """Most likely label sequence of each sentence (a list of lists of str)."""
        batch = self._batch(X)
        codes, _ = kernels.viterbi(self._state_table(), batch, self.coef_, self.transitions_,
                                   self._zeros(), self._zeros(), self.n_jobs)
        labels = np.asarray(self.classes_, dtype=object)[codes]
        off = batch.offsets
        return [labels[off[s]:off[s + 1]].tolist() for s in range(batch.n_sentences)]

    def predict_single(self, xseq):
        """Label sequence of one sentence."""
        _check_sentences([xseq], "xseq")
        return self.predict([xseq])[0]

    def _marginals(self, X, edges=False):
        batch = self._batch(X)
        node, log_z, edge = kernels.node_marginals(self._state_table(), batch, self.coef_,
                                                   self.transitions_, self._zeros(),
                                                   self._zeros(), edges=edges)
        return batch, node, log_z, edge

    def predict_marginals(self, X):
        """P(y_t = label | x) for every token: a list (sentences) of lists
        (tokens) of dicts {label: probability}, as sklearn-crfsuite."""
        batch, node, _, _ = self._marginals(X)
        classes = self.classes_
        rows = [dict(zip(classes, r)) for r in node.tolist()]
        off = batch.offsets
        return [rows[off[s]:off[s + 1]] for s in range(batch.n_sentences)]

    def predict_marginals_single(self, xseq):
        """Marginals of one sentence (a list of dicts {label: probability})."""
        _check_sentences([xseq], "xseq")
        return self.predict_marginals([xseq])[0]

    def predict_proba_sequence(self, X, y):
        """P(y | x) of the given label sequences (one probability per sentence)."""
        batch, _, log_z, _ = self._marginals(X)
        _, gold = _encode_label_sequences(y, X, classes=np.asarray(self.classes_))
        K = len(self.classes_)
        table = self._state_table()
        scores = np.zeros(batch.n_sentences)
        # score(x, y) from the state table: one pass over tokens
        attr_of = table.attribute_of()
        dense_index = {}
        for p, (f, k) in enumerate(zip(attr_of.tolist(), table.attr_label.tolist())):
            dense_index[f * K + k] = p
        for s in range(batch.n_sentences):
            a, b = batch.offsets[s], batch.offsets[s + 1]
            total = 0.0
            for t in range(a, b):
                for p in range(batch.indptr[t], batch.indptr[t + 1]):
                    q = dense_index.get(int(batch.indices[p]) * K + int(gold[t]))
                    if q is not None:
                        total += batch.data[p] * self.coef_[q]
                if t > a:
                    total += self.transitions_[gold[t - 1], gold[t]]
            scores[s] = total
        return np.exp(scores - log_z)

    def score(self, X, y):
        """Token accuracy of ``predict(X)`` against ``y`` (sklearn-crfsuite's score)."""
        return _token_accuracy(self.predict(X), y, "y")

    # ------------------------------------------------------ introspection --
    @property
    def attributes_(self):
        """Name of each attribute (column of the token features)."""
        self._check_fitted()
        return list(self.features_.get_feature_names_out())

    @property
    def state_features_(self):
        """{(attribute, label): weight} of the non-zero state features."""
        self._check_fitted()
        names = self.features_.get_feature_names_out()
        table = self._state_table()
        attr = table.attribute_of()
        nz = np.flatnonzero(self.coef_)
        return {(str(names[attr[p]]), self.classes_[table.attr_label[p]]): float(self.coef_[p])
                for p in nz.tolist()}

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight} of the transition features."""
        self._check_fitted()
        out = {}
        for i, j in zip(*np.nonzero(self.transition_mask_)):
            out[(self.classes_[i], self.classes_[j])] = float(self.transitions_[i, j])
        return out

    # -------------------------------------------------------- persistence --
    def _get_state(self):
        return {k: v for k, v in vars(self).items()
                if k.endswith("_") and not k.startswith("_")}

    def _set_state(self, state):
        super()._set_state(state)
        self.classes_ = [str(c) for c in self.classes_]
        K = len(self.classes_)
        self.coef_ = np.ascontiguousarray(self.coef_, dtype=np.float64)
        self.transitions_ = np.ascontiguousarray(self.transitions_, dtype=np.float64)
        self.transition_mask_ = np.asarray(self.transition_mask_, dtype=bool)
        self._table = kernels.StateTable(self.attr_ptr_, self.attr_label_, K)
        if len(self.coef_) != self._table.n_state_features:
            raise ValueError("CRF state: %d weights for %d state features"
                             % (len(self.coef_), self._table.n_state_features))
        if self.transitions_.shape != (K, K) or self.transition_mask_.shape != (K, K):
            raise ValueError("CRF state: transitions must be (%d, %d)" % (K, K))
        if not np.all(np.isfinite(self.coef_)) or not np.all(np.isfinite(self.transitions_)):
            raise ValueError("CRF state: non-finite weights")
        if self._table.n_attributes != self.features_.n_features_:
            raise ValueError("CRF state: the state table has %d attributes, the features %d"
                             % (self._table.n_attributes, self.features_.n_features_))

    def _check_state(self):
        """The feature extractor's own state agrees (its ids index the state
        table checked in ``_set_state``); called by :func:`linclass.load`."""
        super()._check_state()
        features = vars(self).get("features_")
        check = getattr(type(features), "_check_state", None)
        if callable(check):
            check(features)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_table", None)
        return state
