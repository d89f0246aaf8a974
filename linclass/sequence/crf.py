"""Linear-chain conditional random field with sklearn-crfsuite's interface.

The model is the tagger's linear chain read as a log-linear distribution,

    P(y | x) = exp(F(x, y)) / Z(x),
    F(x, y) = sum_t sum_{f in x_t} x_t[f] * w[f, y_t] + sum_{t>=1} trans[y_{t-1}, y_t],

fitted by minimising the negative conditional log-likelihood plus
``c1 * ||theta||_1 + c2 * ||theta||_2^2`` (CRFsuite's objective) with L-BFGS
(``c1 = 0``) or OWL-QN (``c1 > 0``), or by SGD (``l2sgd``); or fitted by
CRFsuite's online learners over the same features (averaged perceptron ``ap``,
passive-aggressive ``pa``, ``arow``).  Log-partition, marginals and the
gradient come from one Cython forward-backward call over all sentences, an
online epoch from one Cython call (:mod:`linclass._core._crf`).

Switching from sklearn-crfsuite is one import: ``from linclass import CRF``.
Every constructor parameter of ``sklearn_crfsuite.CRF`` is accepted with its
meaning; ``fit``, ``predict``, ``predict_single``, ``predict_marginals``,
``predict_marginals_single``, ``score``, ``classes_``, ``size_``,
``num_attributes_``, ``attributes_``, ``state_features_``,
``transition_features_``, ``training_log_`` and ``tagger_`` behave as there
(:mod:`linclass.sequence._crf_compat` holds the python-crfsuite-like log and
tagger); the ``flat_*`` metrics are in :mod:`linclass.metrics`.
Differences: ``predict`` returns a list of lists (not an object array); a dev
set also stops training early (``n_iter_no_change``); models are saved in
linclass's format (CRFsuite's binary model files are read, not written).

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
import io
import numbers
import os
import time
import warnings

import numpy as np

from scipy.linalg.blas import daxpy, ddot

from .. import _validation
from ..base import BaseEstimator
from ..exceptions import ConvergenceWarning, NotFittedError
from . import _crf_kernels as kernels
from ._crf_compat import ParsedDump, Tagger, TrainingLog, holdout_scores
from ._optimize import minimize_owlqn
from .tagger import (_check_features_param, _check_sentences, _encode_label_sequences,
                     _resolve_template, _token_accuracy)

__all__ = ["CRF"]

_ALGORITHMS = ("lbfgs", "l2sgd", "ap", "pa", "arow")
#: seed of the sentence order of the online algorithms (fixed: training is deterministic)
_ONLINE_SEED = 0
#: CRFsuite's line searches -> minimize_owlqn's (OWL-QN always backtracks)
_LINESEARCHES = {"MoreThuente": "auto", "Backtracking": "backtracking",
                 "StrongBacktracking": "backtracking"}


def _check_real(value, name, low, strict=True):
    """A finite real number > low (>= low when not strict)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) \
            or value < low or (strict and value == low):
        raise ValueError("%s must be a finite number %s %g, got %r"
                         % (name, ">" if strict else ">=", low, value))


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
    """Linear-chain conditional random field (first order), a drop-in for
    ``sklearn_crfsuite.CRF``.

    Every parameter, attribute and method that sklearn-crfsuite documents is
    here with its meaning; the training algorithms are CRFsuite's.

    Parameters
    ----------
    algorithm : {"lbfgs", "l2sgd", "ap", "pa", "arow"}, default="lbfgs"
        ``"lbfgs"``: limited-memory quasi-Newton on the regularised negative
        log-likelihood; OWL-QN when ``c1 > 0`` (as CRFsuite).
        ``"l2sgd"``: stochastic gradient descent on the L2-regularised
        objective (``c2 > 0``, ``c1 = 0``): one Cython pass per epoch updating
        only the active features, step ``1 / (lambda (t0 + t))`` with
        ``lambda = 2 c2 / N`` and ``t0`` from a calibrated initial rate.
        ``"ap"``: averaged perceptron (Collins 2002): each sentence is decoded
        with Viterbi and, when wrong, the weights move by
        ``phi(x, y) - phi(x, y_hat)``; the model is the average of the weights
        after every sentence.
        ``"pa"``: passive-aggressive (Crammer et al. 2006): the same
        difference vector scaled by ``tau`` (``pa_type``, ``c``), averaged when
        ``averaging``.  ``"arow"``: adaptive regularisation of weights
        (Crammer, Kulesza, Dredze 2009) with a diagonal covariance
        (``variance``, ``gamma``).  The online algorithms visit the sentences
        in a pseudo-random order drawn from a fixed seed per epoch, so that
        training is deterministic, and use CRFsuite's feature set and
        update rules (the ``_core._crf.online_epoch`` kernel).
    c1 : float, default=0
        L1 coefficient (``c1 * sum |theta|``; lbfgs only).
    c2 : float, default=1
        L2 coefficient (``c2 * sum theta**2``; CRFsuite's convention; lbfgs, l2sgd).
    max_iterations : int or None, default=None
        Iterations (epochs).  None: CRFsuite's default per algorithm --
        lbfgs until a stopping rule holds (with a hard cap of 100,000 and a
        ConvergenceWarning when it is reached), l2sgd 1000, ap/pa/arow 100.
    all_possible_states : bool, default=False
        Weights for every (attribute, label) pair; by default only for the
        pairs seen in training (CRFsuite's default).
    all_possible_transitions : bool, default=False
        Weights for every label pair; by default only for pairs seen in training.
    min_freq : float, default=0
        Drop state features seen fewer times in training.
    num_memories : int, default=6
        Correction pairs kept by L-BFGS.
    epsilon : float or None, default=None
        lbfgs: stop when ``||gradient|| / max(1, ||theta||) < epsilon``
        (default 1e-5); ap/pa/arow: stop when the epoch's loss divided by the
        number of sentences falls below it (default 0: never).
    period : int, default=10
    delta : float or None, default=None
        Stop when the objective decreased by less than ``delta`` (relative)
        over the last ``period`` iterations (lbfgs, l2sgd; None: CRFsuite's
        defaults 1e-5 for lbfgs, 1e-6 for l2sgd).  l2sgd returns the weights
        of its epoch of lowest loss, as CRFsuite.
    linesearch : {"MoreThuente", "Backtracking", "StrongBacktracking"}, default="MoreThuente"
        L-BFGS line search: Moré--Thuente (strong Wolfe conditions), or
        backtracking (halving the step until the sufficient-decrease condition
        holds; both backtracking names select it).  With ``c1 > 0`` OWL-QN
        always backtracks along the projected path, as CRFsuite.
    max_linesearch : int, default=20
    calibration_eta, calibration_rate, calibration_samples, calibration_candidates, \
calibration_max_trials : ``l2sgd`` only (CRFsuite's names and defaults 0.1, 2,
        1000, 10, 20): the initial learning rate is chosen by running one epoch
        on ``calibration_samples`` sentences for rates ``calibration_eta``
        times powers of ``calibration_rate`` and keeping the one with the
        lowest loss.
    pa_type : {0, 1, 2}, default=1
        ``pa``: step ``tau = cost / ||delta||^2`` (0), ``min(c, cost /
        ||delta||^2)`` (PA-I, 1) or ``cost / (||delta||^2 + 1 / (2 c))`` (PA-II, 2).
    c : float, default=1
        ``pa``: aggressiveness of PA-I and PA-II.
    error_sensitive : bool, default=True
        ``pa``: the cost adds the square root of the number of wrong labels
        (else 1) to the score difference.
    averaging : bool, default=True
        ``pa``: return the average of the weights over all updates.
    variance : float, default=1
        ``arow``: initial variance of every weight.
    gamma : float, default=1
        ``arow``: trade-off between the loss and the change of the weights.
    verbose : bool or int, default=False
        Print one line per iteration (sklearn-crfsuite's format: iteration,
        time, loss, active features, feature norm, dev scores) and a summary.
    model_filename : str or path-like, optional
        Where the fitted model is also saved (atomically, in linclass's model
        format: :func:`linclass.load` reads it).  A CRF constructed with the
        name of an existing model file and not fitted loads it when first
        used (``predict``, ``classes_``, ``tagger_``, ...), as sklearn-crfsuite;
        the file may also be a model trained by CRFsuite (python-crfsuite,
        sklearn-crfsuite, ``crfsuite learn``), read without python-crfsuite.
    keep_tempfiles : bool, default=False
        Accepted for sklearn-crfsuite's signature: no temporary files are made.
    trainer_cls : class, optional
        With ``verbose``, a class with python-crfsuite's trainer hooks
        (``on_iteration(log, info)``, ``on_optimization_end(log)``), for
        instance a ``pycrfsuite.Trainer`` subclass such as sklearn-crfsuite's
        ``LinePerIterationTrainer``: it is built as ``trainer_cls(algorithm=,
        params={}, verbose=True)``, its ``logparser`` set to
        ``training_log_``, and its hooks replace the built-in printing.
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

    Attributes
    ----------
    classes_ : list of str
        The labels (sorted).
    size_ : int
        Size of the model in bytes: of ``model_filename`` when the model was
        saved there, else of the model as :meth:`save` would write it.
    num_attributes_ : int
        Number of attributes with at least one non-zero state feature
        (CRFsuite keeps only those in its model file).
    attributes_ : list of str
        Those attributes.
    state_features_ : dict {(attribute, label): weight}
        Non-zero state feature weights.
    transition_features_ : dict {(label_from, label_to): weight}
        Non-zero transition weights.
    training_log_ : TrainingLog or None
        Per-iteration records with CRFsuite's keys (``.iterations``,
        ``.last_iteration``); None for a model loaded from a file.
    tagger_ : Tagger or None
        A python-crfsuite-like tagger of this model (``set``, ``tag``,
        ``marginal``, ``probability``, ``labels``, ``info``); None before fit.
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
    history_ : list of dict
        Per iteration: objective, gradient norm, step, evaluations, seconds
        (wall clock and process CPU time since the start), dev accuracy.
    n_iter_ : int
    stop_reason_ : str

    References
    ----------
    Collins, M. (2002). Discriminative training methods for hidden Markov
    models.  EMNLP.  Crammer, K. et al. (2006). Online passive-aggressive
    algorithms.  JMLR 7.  Crammer, K., Kulesza, A., Dredze, M. (2009).
    Adaptive regularization of weight vectors.  NIPS.
    """

    def __init__(self, algorithm="lbfgs", c1=0.0, c2=1.0, max_iterations=None,
                 all_possible_states=False, all_possible_transitions=False, min_freq=0,
                 num_memories=6, epsilon=None, period=10, delta=None,
                 linesearch="MoreThuente", max_linesearch=20,
                 calibration_eta=0.1, calibration_rate=2.0, calibration_samples=1000,
                 calibration_candidates=10, calibration_max_trials=20,
                 pa_type=1, c=1.0, error_sensitive=True, averaging=True, variance=1.0,
                 gamma=1.0, verbose=False, model_filename=None, keep_tempfiles=False,
                 trainer_cls=None, features=None, columns=None, n_iter_no_change=10,
                 n_jobs=1):
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
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.features = features
        self.columns = columns
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs

    # -------------------------------------------------------------- checks --
    def _check_params(self):
        if not isinstance(self.algorithm, str) or self.algorithm not in _ALGORITHMS:
            raise ValueError("algorithm must be one of %s, got %r" % (_ALGORITHMS, self.algorithm))
        for name in ("c1", "c2", "min_freq"):
            _check_real(getattr(self, name), name, 0.0, strict=False)
        for name in ("epsilon", "delta"):
            if getattr(self, name) is not None:
                _check_real(getattr(self, name), name, 0.0, strict=False)
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
        if not isinstance(self.linesearch, str) or self.linesearch not in _LINESEARCHES:
            raise ValueError("linesearch must be one of %s, got %r"
                             % (tuple(_LINESEARCHES), self.linesearch))
        _check_real(self.calibration_eta, "calibration_eta", 0.0)
        _check_real(self.calibration_rate, "calibration_rate", 1.0)
        for name in ("calibration_samples", "calibration_candidates", "calibration_max_trials"):
            _validation.check_positive(getattr(self, name), name, integer=True)
        if isinstance(self.pa_type, bool) or not isinstance(self.pa_type, numbers.Integral) \
                or self.pa_type not in (0, 1, 2):
            raise ValueError("pa_type must be 0, 1 or 2, got %r" % (self.pa_type,))
        for name in ("c", "variance", "gamma"):
            _check_real(getattr(self, name), name, 0.0)
        for name in ("error_sensitive", "averaging", "keep_tempfiles"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError("%s must be True or False, got %r" % (name, getattr(self, name)))
        if self.model_filename is not None:
            if not isinstance(self.model_filename, (str, os.PathLike)) \
                    or not os.fspath(self.model_filename):
                raise ValueError("model_filename must be a non-empty path or None, got %r"
                                 % (self.model_filename,))
        if self.trainer_cls is not None and not callable(self.trainer_cls):
            raise ValueError("trainer_cls must be a class (python-crfsuite trainer hooks) or "
                             "None, got %r" % (self.trainer_cls,))
        if self.algorithm == "l2sgd":
            if self.c1 != 0:
                raise ValueError("algorithm='l2sgd' minimises the L2-regularised objective "
                                 "only: c1 must be 0 (got %r); use algorithm='lbfgs' for L1"
                                 % (self.c1,))
            if self.c2 <= 0:
                raise ValueError("algorithm='l2sgd' needs c2 > 0 (its step size is "
                                 "1 / (2 c2 / N (t0 + t))), got %r" % (self.c2,))

    def _check_fitted(self):
        if "coef_" not in self.__dict__:
            self._load_model_file()
        if "coef_" not in self.__dict__:
            raise NotFittedError("this CRF is not fitted yet; call fit() first")

    # ------------------------------------------------------- model files --
    def _load_model_file(self):
        """Load ``model_filename`` into this unfitted CRF (sklearn-crfsuite
        reads an existing model file on first use)."""
        name = self.__dict__.get("model_filename")
        if name is None or not os.path.isfile(os.fspath(name)):
            return
        model = read_model_file(name)
        for key, value in vars(model).items():
            if key.endswith("_") and not key.startswith("_"):
                self.__dict__[key] = value
        self.__dict__["_table"] = model._state_table()
        self.__dict__["training_log_"] = None
        self.__dict__["_size"] = os.path.getsize(os.fspath(name))

    def _set_crfsuite_model(self, parsed):
        """Fitted state from a CRFsuite model file (``read_crfsuite_model``):
        labels sorted, attributes in the file's order, the file's features."""
        from ..features import FeatureTemplate
        labels = parsed["labels"]
        classes = sorted(labels)
        if len(set(classes)) != len(classes):
            raise ValueError("CRFsuite model: repeated labels")
        code = np.array([classes.index(label) for label in labels], dtype=np.int64)
        attributes = parsed["attributes"]
        features = FeatureTemplate(template=None, min_count=1)
        if attributes:
            features.fit([[[a] for a in attributes]])
        else:
            features.fit([[[]]])
        K, F = len(classes), len(features.attributes_)
        index = {a: i for i, a in enumerate(features.attributes_)}
        attr_ids = np.array([index[a] for a in attributes], dtype=np.int64)
        src, dst, weight = parsed["state"]
        keys = attr_ids[src] * K + code[dst]
        order = np.argsort(keys, kind="stable")
        keys, weight = keys[order], weight[order]
        if len(keys) > 1 and np.any(np.diff(keys) == 0):
            raise ValueError("CRFsuite model: a state feature is repeated")
        ptr = np.zeros(F + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // K, minlength=F), out=ptr[1:])
        table = kernels.StateTable(ptr, keys % K, K)
        t_src, t_dst, t_weight = parsed["transitions"]
        transitions = np.zeros((K, K))
        mask = np.zeros((K, K), dtype=bool)
        transitions[code[t_src], code[t_dst]] = t_weight
        mask[code[t_src], code[t_dst]] = True
        self.features_ = features
        self.classes_ = classes
        self.coef_ = np.ascontiguousarray(weight, dtype=np.float64)
        self.attr_ptr_ = table.attr_ptr
        self.attr_label_ = table.attr_label
        self.transitions_ = transitions
        self.transition_mask_ = mask
        self.history_ = []
        self.training_log_ = None
        self._table = table
        return self

    def __getattr__(self, name):
        # only reached when normal lookup fails: an unfitted CRF built on a
        # model file reads it when a fitted attribute is first asked for
        if name in _FITTED and "coef_" not in self.__dict__ \
                and self.__dict__.get("model_filename") is not None:
            self._load_model_file()
            if name in self.__dict__:
                return self.__dict__[name]
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

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
            Evaluated after every iteration (CRFsuite's holdout scores in
            ``training_log_``): training stops after ``n_iter_no_change``
            iterations without a better token accuracy and the best weights
            are kept.  Dev labels must occur in ``y``.
        """
        self._check_params()
        X = self._check_sentence_list(X)
        if (X_dev is None) != (y_dev is None):
            raise ValueError("give both X_dev and y_dev, or neither")
        t_featgen = time.perf_counter()
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
        class_names = [str(c) for c in classes]
        for key in _CACHES:
            self.__dict__.pop(key, None)
        log = TrainingLog()
        log.featgen_num_features = n_state + int(mask.sum())
        log.featgen_seconds = time.perf_counter() - t_featgen
        self.training_log_ = log
        hooks = self._trainer_hooks(log)

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
        last = [t_start]

        def record(k, theta, F, extra, pg_norm=float("nan"), step=float("nan"), n_evals=0):
            """One iteration into history_ and training_log_; True stops (dev)."""
            now = time.perf_counter()
            row = {"iteration": k, "objective": float(F), "gradient_norm": float(pg_norm),
                   "step": float(step), "evaluations": int(n_evals),
                   "seconds": now - t_start,
                   "cpu_seconds": time.process_time() - cpu_start,
                   "active_features": int(np.count_nonzero(theta))}
            info = {"num": k, "scores": {}, "loss": float(F),
                    "feature_norm": float(np.sqrt(ddot(theta, theta)))}
            info.update(extra)
            info["time"] = now - last[0]
            last[0] = now
            stop = False
            if dev is not None:
                w, trans = unpack(theta)
                codes, _ = kernels.viterbi(table, dev[0], w, trans, zeros_k, zeros_k,
                                           self.n_jobs)
                acc = float(np.mean(codes == dev[1])) if len(codes) else 1.0
                row["dev_accuracy"] = acc
                info.update(holdout_scores(codes, dev[1], dev[0].offsets, class_names))
                if acc > best["acc"]:
                    best.update(acc=acc, theta=theta.copy(), since=0)
                else:
                    best["since"] += 1
                    stop = best["since"] >= self.n_iter_no_change
            self.history_.append(row)
            log.add_iteration(info, "Epoch" if self.algorithm == "l2sgd" else "Iteration")
            if hooks is not None:
                hooks.on_iteration(log.last_log, info)
            return stop

        def lbfgs_callback(k, theta, F, pg_norm, step, n_evals):
            return record(k, theta, F, {"error_norm": float(pg_norm),
                                        "active_features": int(np.count_nonzero(theta)),
                                        "linesearch_trials": int(n_evals),
                                        "linesearch_step": float(step)},
                          pg_norm, step, n_evals)

        theta0 = np.zeros(n_state + int(mask.sum()))
        if self.algorithm == "l2sgd":
            theta, F, n_iter, reason = self._fit_l2sgd(table, batch, mask, record)
        elif self.algorithm in ("ap", "pa", "arow"):
            theta, F, n_iter, reason = self._fit_online(table, batch, mask, record)
        else:
            with _validation.single_threaded_blas():
                theta, F, n_iter, reason = minimize_owlqn(
                    objective, theta0, c1=float(self.c1), max_iterations=self.max_iterations,
                    num_memories=int(self.num_memories),
                    epsilon=1e-5 if self.epsilon is None else float(self.epsilon),
                    period=int(self.period),
                    delta=1e-5 if self.delta is None else float(self.delta),
                    max_linesearch=int(self.max_linesearch), callback=lbfgs_callback,
                    linesearch=_LINESEARCHES[self.linesearch])
        if dev is not None and best["theta"] is not None:
            theta = best["theta"]
        if not np.all(np.isfinite(theta)):
            raise ValueError("CRF: training diverged: non-finite weights (the feature values "
                             "or c1/c2 overflow double precision)")
        if reason == "max_iterations (hard cap)":
            warnings.warn("CRF: L-BFGS stopped at the hard cap of %d iterations "
                          "(max_iterations=None) before a stopping rule held"
                          % n_iter, ConvergenceWarning)
        log.finish("Stopped after %d iterations: %s" % (n_iter, reason),
                   time.perf_counter() - t_start)
        w, trans = unpack(theta)
        self.classes_ = class_names
        self.coef_ = np.ascontiguousarray(w)
        self.attr_ptr_ = table.attr_ptr
        self.attr_label_ = table.attr_label
        self.transitions_ = trans
        self.transition_mask_ = mask
        self.objective_ = float(F)
        self.n_iter_ = int(n_iter)
        self.stop_reason_ = reason
        self._table = table
        if self.model_filename is not None:
            t_store = time.perf_counter()
            self.save(self.model_filename)
            log.storing_seconds = time.perf_counter() - t_store
        if hooks is not None:
            hooks.on_optimization_end(log.last_log)
        return self

    def _trainer_hooks(self, log):
        """The object whose on_iteration / on_optimization_end print progress
        (None when not verbose)."""
        if not self.verbose:
            return None
        if self.trainer_cls is None:
            return _LinePerIteration(log)
        trainer = self.trainer_cls(algorithm=self.algorithm, params={}, verbose=True)
        try:
            trainer.logparser = log
        except AttributeError:
            pass
        return trainer

    def _fit_online(self, table, batch, mask, record):
        """Epochs of the averaged perceptron, passive-aggressive or AROW
        (``_crf.online_epoch``), CRFsuite's trainers ``ap``, ``pa``, ``arow``."""
        K = table.n_labels
        N = batch.n_sentences
        n_state = table.n_state_features
        algorithm = self.algorithm
        if algorithm == "ap":
            rule, averaged = "perceptron", True
        elif algorithm == "pa":
            rule, averaged = "pa%d" % int(self.pa_type), bool(self.averaging)
        else:
            rule, averaged = "arow", False
        w = np.zeros(n_state)
        trans = np.zeros((K, K))
        if algorithm == "arow":          # the auxiliary arrays hold the variances
            w_aux = np.full(n_state, float(self.variance))
            trans_aux = np.full((K, K), float(self.variance))
        else:                            # ... or the sums of the lazy average
            w_aux = np.zeros(n_state)
            trans_aux = np.zeros((K, K))
        mask_f = mask.astype(np.float64)
        epsilon = 0.0 if self.epsilon is None else float(self.epsilon)
        max_epochs = self.max_iterations if self.max_iterations is not None else 100
        rng = np.random.default_rng(_ONLINE_SEED)
        counter = 1.0
        reason = "max_iterations reached"
        k = 0
        loss = 0.0
        theta = np.zeros(n_state + int(mask.sum()))
        for k in range(1, max_epochs + 1):
            loss, counter, n_updates = kernels.online_epoch(
                table, batch, w, trans, mask_f, rng.permutation(N), w_aux, trans_aux,
                rule=rule, c=self.c, error_sensitive=self.error_sensitive, gamma=self.gamma,
                counter=counter)
            if averaged:                 # the average of the weights after each sentence
                theta = np.concatenate([w - w_aux / counter, (trans - trans_aux / counter)[mask]])
            else:
                theta = np.concatenate([w, trans[mask]])
            if not (np.isfinite(loss) and np.all(np.isfinite(theta))):
                raise ValueError("CRF: %s diverged in epoch %d (non-finite weights: the "
                                 "feature values overflow)" % (algorithm, k))
            if record(k, theta, loss, {"updates": int(n_updates)}):
                reason = "no dev improvement in %d epochs" % self.n_iter_no_change
                break
            # CRFsuite: ap and pa stop when the mean loss is below epsilon, arow
            # when it is at most epsilon (so with epsilon = 0 after an epoch without errors)
            mean_loss = loss / max(N, 1)
            if mean_loss < epsilon or (algorithm == "arow" and mean_loss <= epsilon):
                reason = "mean loss below epsilon"
                break
        return theta, float(loss), k, reason

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
        period = int(self.period)
        delta = 1e-6 if self.delta is None else float(self.delta)
        losses = []
        reason = "max_iterations reached"
        k = 0
        F = np.inf
        best_F, best_theta = np.inf, None
        for k in range(1, max_epochs + 1):
            nll, t, scale, status = epoch(batch, w, trans, rng.permutation(N).astype(np.int64),
                                          t0, t, scale)
            eta_now = 1.0 / (lam * (t0 + t))           # CRFsuite logs the rate after the epoch
            if status != 0:
                raise ValueError("CRF: l2sgd diverged in epoch %d (forward-backward "
                                 "overflowed); lower calibration_eta" % k)
            theta = theta_of(w, trans, scale)
            F = nll + c2 * theta.dot(theta)
            losses.append(F)
            if not np.isfinite(F):
                raise ValueError("CRF: l2sgd diverged in epoch %d (non-finite loss)" % k)
            if F < best_F:                   # CRFsuite returns the epoch of lowest loss
                best_F, best_theta = F, theta
            if callback(k, theta, F, {"learning_rate": eta_now}, step=eta_now, n_evals=N):
                reason = "no dev improvement in %d epochs" % self.n_iter_no_change
                break
            if period and len(losses) > period:
                old = losses[len(losses) - 1 - period]
                if (old - F) / max(abs(F), 1e-300) < delta:
                    reason = "relative decrease over %d epochs below delta" % period
                    break
        if best_theta is None:
            best_theta, best_F = theta_of(w, trans, scale), F
        return best_theta, float(best_F), k, reason

    # -------------------------------------------------------------- predict --
    def _state_table(self):
        table = self.__dict__.get("_table")
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

    def _path_scores(self, batch, X, y):
        """score(x, y) = sum of the state and transition weights along each
        label sequence of ``y`` (sentences ``X``, featurised in ``batch``)."""
        _, gold = _encode_label_sequences(y, X, classes=np.asarray(self.classes_))
        K = len(self.classes_)
        table = self._state_table()
        attr_of = table.attribute_of()
        dense_index = {}
        for p, (f, k) in enumerate(zip(attr_of.tolist(), table.attr_label.tolist())):
            dense_index[f * K + k] = p
        scores = np.zeros(batch.n_sentences)
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
        return scores

    def predict_proba_sequence(self, X, y):
        """P(y | x) of the given label sequences (one probability per sentence)."""
        batch, _, log_z, _ = self._marginals(X)
        return np.exp(self._path_scores(batch, X, y) - log_z)

    def score(self, X, y):
        """Token accuracy of ``predict(X)`` against ``y`` (sklearn-crfsuite's score)."""
        return _token_accuracy(self.predict(X), y, "y")

    # ------------------------------------------------------ introspection --
    def _active_attributes(self):
        """Ids of the attributes with a non-zero state feature (CRFsuite's
        model keeps only those), in attribute order."""
        table = self._state_table()
        attr = table.attribute_of()
        return np.unique(attr[self.coef_ != 0])

    @property
    def num_attributes_(self):
        """Number of attributes with at least one non-zero state feature."""
        self._check_fitted()
        return int(len(self._active_attributes()))

    @property
    def attributes_(self):
        """Names of the attributes with at least one non-zero state feature."""
        self._check_fitted()
        names = self.features_.get_feature_names_out()
        return [str(names[f]) for f in self._active_attributes().tolist()]

    @property
    def state_features_(self):
        """{(attribute, label): weight} of the non-zero state features (built
        once per fitted model, as sklearn-crfsuite's)."""
        self._check_fitted()
        cached = self.__dict__.get("_state_features")
        if cached is None:
            names = self.features_.get_feature_names_out()
            table = self._state_table()
            attr = table.attribute_of()
            nz = np.flatnonzero(self.coef_)
            cached = self._state_features = {
                (str(names[attr[p]]), self.classes_[table.attr_label[p]]): float(self.coef_[p])
                for p in nz.tolist()}
        return cached

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight} of the non-zero transition features."""
        self._check_fitted()
        cached = self.__dict__.get("_transition_features")
        if cached is None:
            cached = self._transition_features = {}
            for i, j in zip(*np.nonzero(self.transition_mask_ & (self.transitions_ != 0))):
                cached[(self.classes_[i], self.classes_[j])] = float(self.transitions_[i, j])
        return cached

    @property
    def size_(self):
        """Size of the model in bytes: of ``model_filename`` when the model
        was saved there (or loaded from it), else of the file :meth:`save` writes."""
        self._check_fitted()
        size = self.__dict__.get("_size")
        if size is None:
            name = self.model_filename
            if name is not None and os.path.isfile(os.fspath(name)):
                size = os.path.getsize(os.fspath(name))
            else:
                buf = io.BytesIO()
                self.save(buf)
                size = len(buf.getvalue())
            self._size = size
        return int(size)

    @property
    def tagger_(self):
        """A python-crfsuite-like :class:`~linclass.sequence._crf_compat.Tagger`
        of this model (None when the CRF is not fitted)."""
        try:
            self._check_fitted()
        except NotFittedError:
            return None
        tagger = self.__dict__.get("_tagger")
        if tagger is None:
            tagger = self._tagger = Tagger(self)
        return tagger

    def _parsed_dump(self):
        """The model as python-crfsuite's ``Tagger.info()`` describes it."""
        self._check_fitted()
        info = ParsedDump()
        state = self.state_features_
        transitions = self.transition_features_
        attributes = self.attributes_
        info.header = {"magic": "lCRF", "size": str(self.size_), "type": "FOMC",
                       "version": "100",
                       "num_features": str(len(state) + len(transitions)),
                       "num_labels": str(len(self.classes_)),
                       "num_attrs": str(len(attributes))}
        info.labels = {label: str(i) for i, label in enumerate(self.classes_)}
        info.attributes = {name: str(i) for i, name in enumerate(attributes)}
        info.transitions = transitions
        info.state_features = state
        return info

    # -------------------------------------------------------- persistence --
    def _get_state(self):
        return {k: v for k, v in vars(self).items()
                if k.endswith("_") and not k.startswith("_") and k not in _NOT_SAVED}

    def _set_state(self, state):
        super()._set_state(state)
        self.classes_ = [str(c) for c in self.classes_]
        K = len(self.classes_)
        self.coef_ = np.ascontiguousarray(self.coef_, dtype=np.float64)
        self.transitions_ = np.ascontiguousarray(self.transitions_, dtype=np.float64)
        self.transition_mask_ = np.asarray(self.transition_mask_, dtype=bool)
        self._table = kernels.StateTable(self.attr_ptr_, self.attr_label_, K)
        self.training_log_ = None
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
        for key in _CACHES:
            state.pop(key, None)
        return state


def read_model_file(name):
    """The CRF in the model file ``name``: linclass's format (``CRF.save``)
    or CRFsuite's binary one (python-crfsuite, ``crfsuite learn``)."""
    from ._crfsuite_format import is_crfsuite_model, read_crfsuite_model
    if is_crfsuite_model(name):
        model = CRF()._set_crfsuite_model(read_crfsuite_model(name))
    else:
        from ..persistence import load
        model = load(name)
        if not isinstance(model, CRF):
            raise ValueError("%s holds a %s, not a CRF" % (os.fspath(name),
                                                           type(model).__name__))
    model._size = os.path.getsize(os.fspath(name))       # size_: of the file read
    return model


Tagger.read_model = staticmethod(read_model_file)


#: the fitted attributes an unfitted CRF with a model file loads on first access
_FITTED = frozenset(["classes_", "coef_", "attr_ptr_", "attr_label_", "transitions_",
                     "transition_mask_", "features_", "history_", "n_iter_", "objective_",
                     "stop_reason_", "training_log_", "learning_rate_"])
#: what a CRF computes once from its fitted state (dropped on refit and pickling)
_CACHES = ("_size", "_tagger", "_state_features", "_transition_features")
#: fitted attributes kept out of model files (the training log is not model state)
_NOT_SAVED = frozenset(["training_log_"])


class _LinePerIteration:
    """Verbose progress as sklearn-crfsuite's ``LinePerIterationTrainer``: one
    line per iteration, the per-label dev scores at the end."""

    def __init__(self, log):
        self.logparser = log

    def on_iteration(self, log, info):
        parts = ["Iter {num:<3} ", "time={time:<5.2f} ", "loss={loss:<8.2f} "]
        if "active_features" in info:
            parts.append("active={active_features:<5} ")
        if "avg_precision" in info:
            parts += ["precision={avg_precision:0.3f}  ", "recall={avg_recall:0.3f}  ",
                      "F1={avg_f1:0.3f}  ",
                      "Acc(item/seq)={item_accuracy_float:0.3f} "
                      "{instance_accuracy_float:0.3f}  "]
        if "feature_norm" in info:
            parts.append("feature_norm={feature_norm:<8.2f}")
        print("".join(parts).format(**info).strip())

    def on_optimization_end(self, log):
        last = self.logparser.last_iteration
        if last and last.get("scores"):
            rows = [(label, sc.precision or 0.0, sc.recall or 0.0, sc.f1 or 0.0, sc.ref)
                    for label, sc in sorted(last["scores"].items())]
            width = max([len("Label")] + [len(r[0]) for r in rows])
            head = "%-*s  %9s  %6s  %6s  %7s" % (width, "Label", "Precision", "Recall", "F1",
                                                   "Support")
            print("=" * len(head))
            print(head)
            for r in rows:
                print("%-*s  %9.3f  %6.3f  %6.3f  %7d" % ((width,) + r))
            print("-" * len(head))
        print(log, end="")
