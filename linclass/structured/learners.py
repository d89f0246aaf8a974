"""Generic structured learners written once against the Structure protocol.

* :class:`StructuredPerceptron` -- Collins (2002), averaged with the
  lazy-averaging trick (Daume III, 2006).
* :class:`StructuredSVM` -- the cutting-plane structural SVM: the n-slack
  working-set algorithm (Tsochantaridis et al., 2005) and the 1-slack
  formulation (Joachims, Finley and Yu, 2009), margin or slack rescaling, with
  linclass's own QP solver for the working-set dual
  (:mod:`linclass._core._qp`); and block-coordinate Frank--Wolfe
  (Lacoste-Julien et al., 2013), stopped by the duality gap.

Both take ``X`` and ``Y`` as sequences of inputs and outputs of the structure
(for :class:`~linclass.structured.MultiClassStructure` ``X`` may also be a
CSR matrix or a 2-D array).
"""
import time
import warnings

import numpy as np

from .._validation import check_is_fitted, check_positive, check_random_state
from ..base import BaseEstimator
from ..exceptions import ConvergenceWarning
from .._core._qp import solve_block_simplex_qp, solve_block_sparse_dual
from .base import Structure, _check_n_features, _n_samples, check_joint_feature

__all__ = ["StructuredPerceptron", "StructuredSVM"]

_REQUIRED = ("joint_feature", "decode", "loss_augmented_decode", "loss")
_METHODS = ("bcfw", "1-slack", "n-slack")
_GAP_CHECK = 10          # BCFW: passes between two exact duality-gap evaluations
# Cutting plane: the most work the QP solves of one fit may do, in constraint
# visits (SMO sweeps times working-set size for 1-slack, passes times
# constraints for n-slack); a few seconds of work.  Non-separable data at a very
# large C needs ever more QP steps per cutting-plane iteration; past this budget
# the fit stops with a ConvergenceWarning instead of running for minutes.
QP_WORK_BUDGET = 2 * 10 ** 9
_QP_MAX_SWEEPS = 100000


def supports_slack_rescaling(structure):
    """True when ``structure`` has an exact slack-rescaled argmax.

    A structure declares it by overriding ``slack_rescaled_decode`` (or its
    batched version) of :class:`Structure`; a structure may also set
    ``supports_slack_rescaling`` explicitly (to refuse, for example, a
    rescaled argmax that is exact only for some of its losses).
    """
    declared = getattr(structure, "supports_slack_rescaling", None)
    if declared is not None:
        return bool(declared() if callable(declared) else declared)
    cls = type(structure)
    for name in ("slack_rescaled_decode", "batch_slack_rescaled_decode"):
        method = getattr(cls, name, None)
        if method is not None and method is not getattr(Structure, name, None):
            return True
    return False


def check_rescaling(structure, rescaling):
    """Refuse ``rescaling='slack'`` for a structure without an exact slack-rescaled argmax.

    Called when a learner is configured (at the start of ``fit``, before any
    decoding), so the error never comes mid-fit.
    """
    if rescaling == "slack" and structure is not None and not supports_slack_rescaling(structure):
        raise ValueError(
            "rescaling='slack' is not available for %s: it has no exact slack-rescaled "
            "argmax (slack_rescaled_decode); use rescaling='margin'"
            % type(structure).__name__)


def _check_structure(structure):
    if structure is None:
        raise ValueError("a Structure is required (got None)")
    for name in _REQUIRED:
        if not callable(getattr(structure, name, None)):
            raise ValueError("%s is not a Structure: it has no %s() method"
                             % (type(structure).__name__, name))
    return _check_n_features(structure)


def _prepare(structure, X, Y):
    """Validate the structure and the data; return (n_features, Xb, Y, n)."""
    n_features = _check_structure(structure)
    if X is None or Y is None:
        raise ValueError("X and Y are required")
    n = _n_samples(X)
    if n == 0:
        raise ValueError("X is empty: at least one example is required")
    if len(Y) != n:
        raise ValueError("X has %d examples but Y has %d outputs" % (n, len(Y)))
    batch_inputs = getattr(structure, "batch_inputs", None)
    Xb = batch_inputs(X) if batch_inputs is not None else list(X)
    if hasattr(structure, "batch_check_outputs"):
        Y = structure.batch_check_outputs(Xb, Y)
    else:
        Y = list(Y)
        check = getattr(structure, "check_output", None)
        for i in range(n):
            try:
                if check is not None:
                    check(Xb[i], Y[i])
                else:
                    check_joint_feature(structure, *structure.joint_feature(Xb[i], Y[i]))
            except ValueError as exc:
                raise ValueError("example %d: invalid output: %s" % (i, exc)) from None
    return n_features, Xb, Y, n


def _call(structure, name, *args):
    """The structure's batched method, or the generic loop of Structure."""
    method = getattr(structure, name, None)
    if method is None:
        method = getattr(Structure, name).__get__(structure)
    return method(*args)


def _sparse_vector(structure, x, y):
    idx, val = check_joint_feature(structure, *structure.joint_feature(x, y))
    if idx.size == 0:
        return idx, val
    uniq, inverse = np.unique(idx, return_inverse=True)
    return uniq, np.bincount(inverse, weights=val, minlength=uniq.size)


def _sparse_dot(a_idx, a_val, b_idx, b_val):
    _, ia, ib = np.intersect1d(a_idx, b_idx, assume_unique=True, return_indices=True)
    return float(a_val[ia] @ b_val[ib])


class _StructuredMixin:
    def predict(self, X):
        """Decode every input with the learned weights; returns a list of outputs."""
        check_is_fitted(self, "coef_")
        Xb = _call(self.structure, "batch_inputs", X)
        return list(_call(self.structure, "batch_decode", self.coef_, Xb))

    def score(self, X, Y):
        """Exact-match accuracy: the fraction of examples whose output is predicted
        with zero loss (see :meth:`mean_loss` for the mean of the loss)."""
        Y_hat = self.predict(X)
        return float(np.mean(_call(self.structure, "batch_loss", list(Y), Y_hat) == 0))

    def mean_loss(self, X, Y):
        """Mean of the structure's loss between ``Y`` and the predictions."""
        Y_hat = self.predict(X)
        return float(np.mean(_call(self.structure, "batch_loss", list(Y), Y_hat)))


class StructuredPerceptron(_StructuredMixin, BaseEstimator):
    """Structured perceptron (Collins, 2002), optionally averaged.

    On a mistake ``w <- w + Phi(x, y) - Phi(x, y_hat)`` with
    ``y_hat = decode(w, x)``.  The averaged weights (the mean of the weights
    after every example) are kept with the lazy-averaging trick: a second
    vector ``u`` collects every update times the step it happened at, and the
    average is ``w - u / c`` after ``c`` steps (Daume III, 2006, sec. 2.1.1),
    so an update costs only the size of ``Phi``.

    Parameters
    ----------
    structure : Structure
    max_iter : int, default=10
        Maximum number of epochs.  Training stops earlier after an epoch with
        no mistake.  Reaching ``max_iter`` is the normal way to stop on
        non-separable data and does not warn.
    average : bool, default=True
    shuffle : bool, default=True
        Visit the examples in a new random order each epoch.
    random_state : None, int or numpy Generator
    verbose : int, default=0
        Print one line per epoch when > 0.
    coef_init : None or array of shape (n_features,), default=None
        Starting weights (None: zeros), e.g. a base model's weights so that
        the perceptron learns corrections to it.  The average includes them.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int
        Epochs run.
    history_ : list of dict
        Per epoch: ``iteration``, ``n_mistakes``, ``objective`` (mean loss of
        the online predictions during the epoch), ``time`` (seconds since the
        start of ``fit``).
    objective_ : float
        ``objective`` of the last epoch.

    References
    ----------
    M. Collins. Discriminative training methods for hidden Markov models:
    theory and experiments with perceptron algorithms. EMNLP 2002.
    H. Daume III. Practical structured learning techniques for natural
    language processing. PhD thesis, USC, 2006.
    """

    def __init__(self, structure=None, *, max_iter=10, average=True, shuffle=True,
                 random_state=None, verbose=0, coef_init=None):
        self.structure = structure
        self.max_iter = max_iter
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose
        self.coef_init = coef_init

    def fit(self, X, Y):
        """Learn ``coef_`` from inputs ``X`` and outputs ``Y``."""
        check_positive(self.max_iter, "max_iter", integer=True)
        n_features, Xb, Y, n = _prepare(self.structure, X, Y)
        rng = check_random_state(self.random_state)
        s = self.structure
        if self.coef_init is None:
            w = np.zeros(n_features)
        else:
            w = np.array(self.coef_init, dtype=np.float64)
            if w.shape != (n_features,):
                raise ValueError("coef_init must have shape (%d,), got %r"
                                 % (n_features, w.shape))
            if not np.isfinite(w).all():
                raise ValueError("coef_init contains NaN or inf")
        u = np.zeros(n_features)       # sum of c * update
        c = 1.0
        history = []
        start = time.perf_counter()
        for epoch in range(1, self.max_iter + 1):
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            n_mistakes = 0
            total_loss = 0.0
            for i in order:
                x, y = Xb[i], Y[i]
                y_hat = s.decode(w, x)
                loss = float(s.loss(y, y_hat))
                if loss < 0:
                    raise ValueError("%s.loss returned %r < 0" % (type(s).__name__, loss))
                if loss > 0:
                    gi, gv = check_joint_feature(s, *s.joint_feature(x, y))
                    hi, hv = check_joint_feature(s, *s.joint_feature(x, y_hat))
                    np.add.at(w, gi, gv)            # w += Phi(x, y) - Phi(x, y_hat)
                    np.add.at(w, hi, -hv)
                    np.add.at(u, gi, c * gv)        # u += c * (same update)
                    np.add.at(u, hi, -c * hv)
                    n_mistakes += 1
                    total_loss += loss
                c += 1.0
            history.append({"iteration": epoch, "n_mistakes": n_mistakes,
                            "objective": total_loss / n,
                            "time": time.perf_counter() - start})
            if self.verbose:
                print("epoch %3d  mistakes %6d  mean loss %.6g  time %.2fs"
                      % (epoch, n_mistakes, total_loss / n, history[-1]["time"]))
            if n_mistakes == 0:
                break
        self.coef_ = w - u / c if self.average else w
        self.n_iter_ = len(history)
        self.history_ = history
        self.objective_ = history[-1]["objective"]
        return self


class _VectorStore:
    """1-slack constraints kept as dense vectors (generic structures)."""

    def __init__(self, structure, Xb, Y, n):
        self.structure, self.Xb, self.Y, self.n = structure, Xb, Y, n
        self.vectors = []

    def add(self, Y_hat, coef):
        g = _call(self.structure, "batch_joint_feature", self.Xb, [self.Y, Y_hat],
                  np.vstack([coef, -coef])) / self.n
        col = np.array([v @ g for v in self.vectors] + [g @ g])
        self.vectors.append(g)
        return g, col

    def remove(self, keep):
        self.vectors = [self.vectors[k] for k in keep]

    def weights(self, a, n_features):
        w = np.zeros(n_features)
        for ak, v in zip(a, self.vectors):
            if ak != 0.0:
                w += ak * v
        return w


class _OutputStore:
    """1-slack constraints kept as the decoded outputs (structures with a fast path).

    Constraint k is ``g_k = (1/n) sum_i c_ki (Phi(x_i, y_i) - Phi(x_i, yhat_ki))``;
    its products with a new constraint come from one batched scoring pass.
    """

    def __init__(self, structure, Xb, Y, n):
        self.structure, self.Xb, self.Y, self.n = structure, Xb, Y, n
        self.outputs = []
        self.coefs = []

    def add(self, Y_hat, coef):
        s = self.structure
        g = s.batch_joint_feature(self.Xb, [self.Y, Y_hat], np.vstack([coef, -coef])) / self.n
        S = s.batch_score(g, self.Xb, [self.Y] + self.outputs + [Y_hat])
        col = np.array([(c * (S[0] - S[k + 1])).sum() / self.n
                        for k, c in enumerate(self.coefs + [coef])])
        self.outputs.append(Y_hat)
        self.coefs.append(coef)
        return g, col

    def remove(self, keep):
        self.outputs = [self.outputs[k] for k in keep]
        self.coefs = [self.coefs[k] for k in keep]

    def weights(self, a, n_features):
        if not self.outputs:
            return np.zeros(n_features)
        gold = sum(ak * c for ak, c in zip(a, self.coefs))
        weights = np.vstack([gold] + [-ak * c for ak, c in zip(a, self.coefs)])
        return self.structure.batch_joint_feature(self.Xb, [self.Y] + self.outputs,
                                                  weights) / self.n


class _GenericBCFW:
    """Block-coordinate Frank--Wolfe state for any Structure (per-example Python steps).

    Block i holds ``w_i`` (a sparse vector, its share of ``w``) and ``l_i``
    (its share of the dual's linear part); the corner of a step is
    ``C c Psi_i(y*)``, ``C Delta_i(y*)`` with ``y*`` the loss-augmented (or
    slack-rescaled) argmax and ``c`` 1 (margin) or ``Delta`` (slack
    rescaling, whose constraint vectors are ``Delta Psi``).  Structures with a
    fused pass offer the same interface through ``bcfw_state``.
    """

    def __init__(self, learner, Xb, Y, n, n_features, C, average):
        self.learner, self.Xb, self.Y, self.C = learner, Xb, Y, C
        self.w = np.zeros(n_features)
        self.v = np.zeros(n_features) if average else None
        self.wi_idx = [np.zeros(0, np.int64) for _ in range(n)]
        self.wi_val = [np.zeros(0) for _ in range(n)]
        self.l = np.zeros(n)
        self.step = 0.0
        self.lv = 0.0
        s = learner.structure
        self.gold = [_sparse_vector(s, Xb[i], Y[i]) for i in range(n)]

    def run_pass(self, order):
        learner, s, C, w = self.learner, self.learner.structure, self.C, self.w
        slack = learner.rescaling == "slack"
        gap = 0.0
        for i in order:
            self.step += 1.0
            x, y = self.Xb[i], self.Y[i]
            y_hat = (s.slack_rescaled_decode(w, x, y) if slack
                     else s.loss_augmented_decode(w, x, y))
            delta = float(s.loss(y, y_hat))
            if not np.isfinite(delta) or delta < 0:
                raise ValueError("%s.loss returned %r; a finite value >= 0 is required"
                                 % (type(s).__name__, delta))
            gi, gv = self.gold[i]
            hi, hv = _sparse_vector(s, x, y_hat)
            coef = delta if slack else 1.0
            margin = float(w[gi] @ gv - w[hi] @ hv)
            h = delta - coef * margin
            if learner.check_decoder and h < -1e-9 * (1.0 + abs(delta) + abs(h)):
                learner._bad_decoder(i, -h, delta)
            # d = C coef (Phi(x, y) - Phi(x, y_hat)) - w_i, as one sparse vector
            idx = np.concatenate([gi, hi, self.wi_idx[i]])
            val = np.concatenate([C * coef * gv, -C * coef * hv, -self.wi_val[i]])
            idx, inverse = np.unique(idx, return_inverse=True)
            d = np.bincount(inverse, weights=val, minlength=idx.size)
            ls = C * delta
            g = ls - self.l[i] - float(w[idx] @ d)
            q = float(d @ d)
            gap += g
            if g <= 0.0 or q <= 0.0:
                continue
            gamma = min(1.0, g / q)
            # the new w_i = w_i + gamma d lives on d's support (which contains w_i's)
            old = np.zeros(idx.size)
            old[np.searchsorted(idx, self.wi_idx[i])] = self.wi_val[i]
            self.wi_idx[i], self.wi_val[i] = idx, old + gamma * d
            w[idx] += gamma * d
            if self.v is not None:
                weight = 0.5 * self.step * (self.step - 1.0) * gamma
                self.v[idx] += weight * d
                self.lv += weight * (ls - self.l[i])
            self.l[i] += gamma * (ls - self.l[i])
        return gap

    def iterate(self, average):
        """(w, sum_i l_i) of the last or of the weighted-average iterate."""
        if not average or self.step == 0:
            return self.w, float(self.l.sum())
        R = 0.5 * self.step * (self.step + 1.0)
        return self.w - self.v / R, float(self.l.sum()) - self.lv / R


class StructuredSVM(_StructuredMixin, BaseEstimator):
    """Structural SVM trained by the cutting-plane method.

    Minimises the primal objective

        ``P(w) = 1/2 ||w||^2 + C sum_i xi_i``,
        ``xi_i = max_y [Delta(y_i, y) - w . (Phi(x_i, y_i) - Phi(x_i, y))]``

    (margin rescaling; with slack rescaling the term in brackets is
    ``Delta(y_i, y) (1 - w . (Phi(x_i, y_i) - Phi(x_i, y)))``).  Note the sum
    over examples, as in liblinear/scikit-learn's ``LinearSVC``: with the one-hot
    :class:`~linclass.structured.MultiClassStructure` this is exactly the
    Crammer--Singer objective of ``LinearSVC(multi_class="crammer_singer")``
    at the same ``C``.

    Each iteration decodes every example with the current weights
    (``loss_augmented_decode``; batched when the structure has a fast path),
    adds the most violated constraints to the working set and re-solves the
    dual of the working-set QP with linclass's SMO solver
    (:func:`linclass._core._qp.solve_block_simplex_qp`).

    * ``method="1-slack"`` (Joachims, Finley and Yu, 2009): one joint
      constraint per iteration, the average of the examples' constraints; the
      dual is a single simplex of size ``C n``.
    * ``method="n-slack"`` (Tsochantaridis et al., 2005): one working set per
      example; the dual is solved by block coordinate ascent (one simplex of
      size ``C`` per example, the weight vector kept up to date).

    Training stops when no constraint is violated by more than ``tol`` beyond
    the slack of the working set (per example, in loss units); then
    ``P(w) - D(alpha) <= C n tol``.

    Parameters
    ----------
    structure : Structure
    C : float, default=1.0
        Weight of the slack sum, > 0.
    method : {"1-slack", "n-slack", "bcfw"}, default="1-slack"
        ``"bcfw"``: block-coordinate Frank--Wolfe (Lacoste-Julien, Jaggi,
        Schmidt and Pletscher, 2013): passes over the examples in random
        order, one loss-augmented decoding and an exact line search per
        example, per-example dual state ``(w_i, l_i)``; stops when the exact
        duality gap ``P(w) - D(alpha)`` (evaluated with one batched decoding
        pass after a pass whose summed block gaps fall below ``tol * P``, and
        every 10 passes) is at most ``tol * P(w)``: ``tol`` is a *relative*
        gap and ``max_iter`` counts passes.  A structure with a
        ``bcfw_state(X, Y, C, average)`` method (one-hot multi-class,
        first-order sequences) runs whole passes in Cython.
    rescaling : {"margin", "slack"}, default="margin"
        Slack rescaling needs an exact slack-rescaled argmax (the structure
        overrides ``slack_rescaled_decode``); it is refused with a
        ``ValueError`` at the start of ``fit``, before any decoding, otherwise.
    tol : float, default=1e-3
    max_iter : int, default=1000
        Maximum number of cutting-plane iterations (decoding passes).  The
        cutting-plane methods also stop, with a ``ConvergenceWarning``, once
        their QP solves have spent ``QP_WORK_BUDGET`` (2e9) constraint visits,
        a few seconds of work: at a very large ``C`` on data that is not
        separable every QP needs ever more steps.
    inference_cache : int, default=0
        Keep the outputs of the last ``inference_cache`` decoding passes and,
        when the best cached outputs already give a constraint violated by
        more than ``tol``, use them instead of decoding (Joachims et al., 2009,
        sec. 5.1).  Useful when decoding is expensive.  Iterations served from
        the cache record no primal objective.
    inactive_window : int, default=50
        Drop a working-set constraint whose dual weight stayed zero for this
        many consecutive iterations.
    qp_tol : float or None, default=None
        KKT tolerance of the working-set QP; default ``tol / 10``.
    max_inner_passes : int, default=10000
        n-slack only: maximum block-coordinate passes per iteration.  An
        iteration whose QP is left unconverged never stops training; the next
        iteration continues the optimisation from where it stopped.
    check_decoder : bool, default=True
        Raise ``ValueError`` when ``loss_augmented_decode`` returns an output
        whose augmented score is lower than that of the correct output (the
        decoder is then not an exact argmax and the cutting-plane guarantees
        are lost).
    average : bool, default=False
        ``bcfw`` only: return the weighted average of the iterates (weights
        proportional to the step number, Alg. 4 of the paper) and its dual.
    random_state : None, int or numpy Generator
        ``bcfw`` only: the order of the examples in each pass.
    verbose : int, default=0
        Print one line per iteration when > 0.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    objective_ : float
        Primal objective ``P(coef_)``.
    dual_objective_ : float
    n_iter_ : int
    history_ : list of dict
        Per iteration: ``iteration``, ``objective`` (primal at the weights the
        iteration started from; None when served from the inference cache),
        ``dual_objective``, ``gap``, ``violation`` (most violated constraint
        minus working-set slack), ``n_constraints``, ``time`` (seconds since
        the start of ``fit``), ``cached``.

    References
    ----------
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin
    methods for structured and interdependent output variables. JMLR 6, 2005.
    T. Joachims, T. Finley, C.-N. Yu. Cutting-plane training of structural
    SVMs. Machine Learning 77, 2009.
    S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher. Block-coordinate
    Frank-Wolfe optimization for structural SVMs. ICML 2013.
    """

    def __init__(self, structure=None, *, C=1.0, method="1-slack", rescaling="margin",
                 tol=1e-3, max_iter=1000, inference_cache=0, inactive_window=50,
                 qp_tol=None, max_inner_passes=10000, check_decoder=True, average=False,
                 random_state=None, verbose=0):
        self.structure = structure
        self.C = C
        self.method = method
        self.rescaling = rescaling
        self.tol = tol
        self.max_iter = max_iter
        self.inference_cache = inference_cache
        self.inactive_window = inactive_window
        self.qp_tol = qp_tol
        self.max_inner_passes = max_inner_passes
        self.check_decoder = check_decoder
        self.average = average
        self.random_state = random_state
        self.verbose = verbose

    # -- validation ------------------------------------------------------------
    def _check_params(self):
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_positive(self.max_iter, "max_iter", integer=True)
        check_positive(self.inference_cache, "inference_cache", strict=False, integer=True)
        check_positive(self.inactive_window, "inactive_window", integer=True)
        check_positive(self.max_inner_passes, "max_inner_passes", integer=True)
        if self.qp_tol is not None:
            check_positive(self.qp_tol, "qp_tol")
        if self.method not in _METHODS:
            raise ValueError("method must be one of %s, got %r" % (_METHODS, self.method))
        if self.rescaling not in ("margin", "slack"):
            raise ValueError("rescaling must be 'margin' or 'slack', got %r"
                             % (self.rescaling,))
        check_rescaling(self.structure, self.rescaling)

    # -- shared pieces -----------------------------------------------------------
    def _most_violated(self, w, Xb, Y, n):
        """Decode all examples; returns (Y_hat, Delta, h) with h_i the slack each needs."""
        s = self.structure
        if self.rescaling == "margin":
            Y_hat = _call(s, "batch_loss_augmented_decode", w, Xb, Y)
        else:
            Y_hat = _call(s, "batch_slack_rescaled_decode", w, Xb, Y)
        if _n_samples(Y_hat) != n:
            raise ValueError("%s returned %d outputs for %d examples"
                             % (type(s).__name__, _n_samples(Y_hat), n))
        Delta, h = self._violations(w, Xb, Y, Y_hat)
        if self.check_decoder:
            # the correct output itself reaches h = 0; an exact argmax cannot do worse
            scale = 1e-9 * (1.0 + np.abs(Delta) + np.abs(h))
            bad = np.flatnonzero(h < -scale)
            if bad.size:
                self._bad_decoder(bad[0], -h[bad[0]], Delta[bad[0]])
        return Y_hat, Delta, np.maximum(h, 0.0)

    def _violations(self, w, Xb, Y, Y_hat):
        s = self.structure
        Delta = np.asarray(_call(s, "batch_loss", Y, Y_hat), dtype=np.float64)
        if Delta.size and (not np.isfinite(Delta).all() or Delta.min() < 0):
            raise ValueError("%s.loss returned a negative or non-finite value"
                             % type(s).__name__)
        gold, hat = _call(s, "batch_score", w, Xb, [Y, Y_hat])
        margin = gold - hat
        h = Delta - margin if self.rescaling == "margin" else Delta * (1.0 - margin)
        return Delta, h

    def _coefficients(self, Delta):
        return np.ones_like(Delta) if self.rescaling == "margin" else Delta.copy()

    def _from_cache(self, cache, w, Xb, Y, n):
        """Best cached output per example: (Y_hat, Delta, h), h >= 0."""
        best_h = np.zeros(n)
        pick = np.full(n, -1)
        Deltas = []
        for j, Yc in enumerate(cache):
            Delta, h = self._violations(w, Xb, Y, Yc)
            Deltas.append(Delta)
            better = h > best_h
            best_h[better] = h[better]
            pick[better] = j
        Y_hat = [cache[pick[i]][i] if pick[i] >= 0 else Y[i] for i in range(n)]
        if isinstance(Y, np.ndarray):
            Y_hat = np.asarray(Y_hat, dtype=Y.dtype)
        Delta = np.array([Deltas[pick[i]][i] if pick[i] >= 0 else 0.0 for i in range(n)])
        return Y_hat, Delta, best_h

    def _record(self, history, start, **row):
        row["time"] = time.perf_counter() - start
        history.append(row)
        if self.verbose:
            obj = row["objective"]
            print("iter %4d  primal %s  dual %.10g  gap %s  violation %.3g  "
                  "constraints %d  time %.2fs%s"
                  % (row["iteration"], "%.10g" % obj if obj is not None else "    (cache)",
                     row["dual_objective"],
                     "%.3g" % row["gap"] if row["gap"] is not None else "-",
                     row["violation"], row["n_constraints"], row["time"],
                     "  [cache]" if row["cached"] else ""))

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, Y):
        """Learn ``coef_`` from inputs ``X`` and outputs ``Y``."""
        self._check_params()
        n_features, Xb, Y, n = _prepare(self.structure, X, Y)
        if self.rescaling == "slack":
            # a structure whose exact slack-rescaled argmax has limits on the
            # data (alignments: table size) refuses here, before any decoding
            check_data = getattr(self.structure, "check_slack_rescaling", None)
            if callable(check_data):
                check_data(Xb, Y)
        qp_tol = self.qp_tol if self.qp_tol is not None else 0.1 * self.tol
        if self.method == "bcfw":
            w, converged, history = self._fit_bcfw(Xb, Y, n, n_features)
        elif self.method == "1-slack":
            w, converged, history = self._fit_one_slack(Xb, Y, n, n_features, qp_tol)
        else:
            w, converged, history = self._fit_n_slack(Xb, Y, n, n_features, qp_tol)
        last = history[-1]
        if converged and self.method != "bcfw":
            self._check_working_set_gap(last, n, qp_tol)
        self.coef_ = w
        self.history_ = history
        self.n_iter_ = len(history)
        self.objective_ = last["objective"]
        self.dual_objective_ = last["dual_objective"]
        if not converged and self.method == "bcfw":
            warnings.warn("StructuredSVM (bcfw) did not converge in max_iter=%d passes "
                          "(relative duality gap %.3g > tol=%g); increase max_iter or tol"
                          % (self.max_iter, last["gap"] / max(last["objective"], 1e-300),
                             self.tol), ConvergenceWarning)
        elif not converged and last.get("qp_budget_spent"):
            warnings.warn("StructuredSVM (%s) stopped after %d iterations: the QP work "
                          "budget (QP_WORK_BUDGET = %d constraint visits) is spent "
                          "(violation %.3g > tol=%g); C=%g is very large for this data: "
                          "use a smaller C, a larger tol or method='bcfw'"
                          % (self.method, len(history), QP_WORK_BUDGET, last["violation"],
                             self.tol, self.C), ConvergenceWarning)
        elif not converged:
            warnings.warn("StructuredSVM (%s) did not converge in max_iter=%d iterations "
                          "(violation %.3g > tol=%g); increase max_iter or tol"
                          % (self.method, self.max_iter, last["violation"], self.tol),
                          ConvergenceWarning)
        return self

    def _check_working_set_gap(self, last, n, qp_tol):
        """At convergence of the cutting-plane methods, primal - dual is at
        most C * n * (tol + qp_tol) (the violation of the final constraint
        plus the working-set QP's own gap).  A much larger gap means the QP
        lost precision: with C * n near 1e14 or above, the dual weights
        (which sum to C * n) cannot resolve the O(1) weights of the
        constraints, and the "converged" weights are not the SVM's (on
        separable data they can predict one class for every example)."""
        primal, dual = last["objective"], last["dual_objective"]
        if primal is None or dual is None:
            return
        bound = 2.0 * self.C * n * (self.tol + qp_tol) + 1e-6 * max(1.0, abs(primal))
        if not (primal - dual <= bound):
            raise ValueError(
                "StructuredSVM (%s): the working-set QP lost precision with C=%g on %d "
                "examples (primal %.6g, dual %.6g: a gap far above C * n * tol); the "
                "weights would not be the SVM solution; use a smaller C (C * n well "
                "below 1e13) or method='bcfw'" % (self.method, self.C, n, primal, dual))

    def _bad_decoder(self, i, shortfall, delta):
        which = ("loss_augmented_decode" if self.rescaling == "margin"
                 else "slack_rescaled_decode")
        raise ValueError(
            "%s.%s is not an exact argmax: for example %d it returned an output "
            "whose augmented score is %.6g lower than that of the correct output "
            "(loss %.6g); the structural SVM needs the most violated constraint"
            % (type(self.structure).__name__, which, i, shortfall, delta))

    def _fit_bcfw(self, Xb, Y, n, n_features, gap_scale=None):
        """Block-coordinate Frank--Wolfe (Lacoste-Julien et al., 2013, Alg. 3/4).

        Passes over the examples in random order; after a pass whose summed
        block gaps fall below ``tol * P`` (and every ``_GAP_CHECK`` passes) the
        exact duality gap ``P(w) - D(alpha)`` is computed with one batched
        decoding pass; training stops when it is at most ``tol * P(w)``.
        With ``gap_scale`` (the tagger: ``C`` times the number of training
        tokens) the stopping threshold is ``tol * gap_scale`` instead.  After
        a check that fails, the next one waits until the summed block gaps,
        corrected by the ratio exact gap / summed block gaps of that check,
        fall below the threshold (or ``_GAP_CHECK`` passes).
        """
        s = self.structure
        C = float(self.C)
        rng = check_random_state(self.random_state)
        state = None
        make = getattr(s, "bcfw_state", None)
        if make is not None and self.rescaling == "margin":
            state = make(Xb, Y, C, self.average)        # fused pass, or None
        if state is None:
            state = _GenericBCFW(self, Xb, Y, n, n_features, C, self.average)
        history = []
        start = time.perf_counter()
        converged = False
        last_check = 0
        primal = None
        calibration = 1.0
        for it in range(0, self.max_iter + 1):
            estimate = None
            if it > 0:
                before = np.array(state.w, copy=True)
                estimate = float(state.run_pass(rng.permutation(n).astype(np.int64)))
                self._check_bcfw_progress(state, before, estimate, C)
            check = (it == 0 or it == self.max_iter or it - last_check >= _GAP_CHECK
                     or estimate * calibration
                     <= self.tol * (primal if gap_scale is None else gap_scale))
            if not check:
                self._record(history, start, iteration=it, objective=None,
                             dual_objective=None, gap=None, violation=estimate,
                             n_constraints=0, cached=False)
                continue
            last_check = it
            w, lin = state.iterate(self.average)
            ww = float(w @ w)
            if hasattr(state, "hinge"):             # fused primal (sum of hinge losses)
                h_sum = float(state.hinge(w))
            else:
                h_sum = float(self._most_violated(w, Xb, Y, n)[2].sum())
            primal = 0.5 * ww + C * h_sum
            dual = lin - 0.5 * ww
            self._record(history, start, iteration=it, objective=primal,
                         dual_objective=dual, gap=primal - dual,
                         violation=estimate if estimate is not None else primal - dual,
                         n_constraints=0, cached=False)
            if estimate is not None and estimate > 0.0:
                calibration = max(1.0, (primal - dual) / estimate)
            if primal - dual <= self.tol * (primal if gap_scale is None else gap_scale):
                converged = True
                break
        w, _ = state.iterate(self.average)
        return np.array(w, dtype=np.float64), converged, history

    def _check_bcfw_progress(self, state, before, estimate, C):
        """A pass with a positive duality-gap estimate takes a step unless the
        step sizes overflowed (``||C Phi||^2`` beyond double precision makes
        every line search return 0): raise instead of returning the start.
        (A tiny C takes no step either, but there 0 is the right answer.)"""
        if not np.isfinite(estimate):
            raise ValueError("StructuredSVM (bcfw): the duality gap became non-finite "
                             "(NaN or infinity) with C=%g: the data or C overflow double "
                             "precision; use a smaller C or scale the features" % C)
        with np.errstate(over="ignore"):
            squares_overflow = not np.isfinite(C * C)
        if estimate > 0.0 and squares_overflow and np.array_equal(before, state.w):
            raise ValueError("StructuredSVM (bcfw): no step could be taken with C=%g (the "
                             "squared step directions C * Phi overflow double precision); "
                             "use a smaller C" % C)

    def _fit_one_slack(self, Xb, Y, n, n_features, qp_tol):
        s = self.structure
        store = (_OutputStore if isinstance(s, Structure) and s.has_fast_path()
                 else _VectorStore)(s, Xb, Y, n)
        Cn = self.C * n
        # index 0: the null constraint (g = 0, l = 0) carrying the unused slack weight
        K = np.zeros((1, 1))
        lin = np.zeros(1)
        alpha = np.array([Cn])
        inactive = np.zeros(1, dtype=np.int64)
        w = np.zeros(n_features)
        cache = []
        history = []
        start = time.perf_counter()
        converged = False
        qp_converged = True
        qp_work = 0
        for it in range(1, self.max_iter + 2):
            Kalpha = K @ alpha
            dual = float(lin @ alpha - 0.5 * alpha @ Kalpha)
            xi_ws = max(0.0, float(np.max(lin - Kalpha)))
            ww = float(w @ w)
            cached = False
            if cache:
                Y_hat, Delta, h = self._from_cache(cache, w, Xb, Y, n)
                cached = h.mean() - xi_ws > self.tol
            if not cached:
                Y_hat, Delta, h = self._most_violated(w, Xb, Y, n)
                if self.inference_cache:
                    cache.append(Y_hat)
                    del cache[:-self.inference_cache]
            violation = float(h.mean()) - xi_ws
            primal = None if cached else 0.5 * ww + self.C * float(h.sum())
            self._record(history, start, iteration=it, objective=primal,
                         dual_objective=dual,
                         gap=None if primal is None else primal - dual,
                         violation=violation, n_constraints=len(lin) - 1, cached=cached)
            if not cached and violation <= self.tol and qp_converged:
                converged = True
                break
            if it > self.max_iter:
                if cached:      # finish with an exact primal for the final weights
                    Y_hat, Delta, h = self._most_violated(w, Xb, Y, n)
                    history[-1]["objective"] = 0.5 * ww + self.C * float(h.sum())
                    history[-1]["gap"] = history[-1]["objective"] - dual
                    history[-1]["violation"] = float(h.mean()) - xi_ws
                    history[-1]["cached"] = False
                break
            coef = self._coefficients(Delta)
            _, col = store.add(Y_hat, coef)
            m = len(lin)
            K2 = np.empty((m + 1, m + 1))
            K2[:m, :m] = K
            K2[m, 1:] = col
            K2[1:, m] = col
            K2[m, 0] = K2[0, m] = 0.0
            K = K2
            lin = np.append(lin, float(Delta.mean()))
            alpha = np.append(alpha, 0.0)
            inactive = np.append(inactive, 0)
            sweeps = max(1, min(_QP_MAX_SWEEPS, (QP_WORK_BUDGET - qp_work) // (m + 1)))
            alpha, n_sweeps, qp_violation = solve_block_simplex_qp(
                gram=K, linear=lin, block_starts=np.array([0, m + 1]), alpha=alpha,
                tol=qp_tol, max_iter=sweeps)
            qp_work += n_sweeps * (m + 1)
            qp_converged = qp_violation <= qp_tol
            # prune constraints inactive for inactive_window iterations
            inactive = np.where(alpha <= 1e-12 * Cn, inactive + 1, 0)
            inactive[0] = 0
            drop = inactive >= self.inactive_window
            if drop.any():
                keep = np.flatnonzero(~drop)
                alpha[0] += alpha[drop].sum()
                K = K[np.ix_(keep, keep)]
                lin, alpha, inactive = lin[keep], alpha[keep], inactive[keep]
                store.remove(keep[1:] - 1)
            w = store.weights(alpha[1:], n_features)
            if qp_work >= QP_WORK_BUDGET:
                self._finish_on_budget(history, w, Xb, Y, n, float(w @ w), xi_ws)
                break
        return w, converged, history

    def _finish_on_budget(self, history, w, Xb, Y, n, ww, xi_ws):
        """The QP work budget is spent: record the exact primal of the final
        weights and mark the history (``fit`` warns)."""
        _, _, h = self._most_violated(w, Xb, Y, n)
        last = history[-1]
        last["objective"] = 0.5 * ww + self.C * float(h.sum())
        last["gap"] = None if last["dual_objective"] is None else \
            last["objective"] - last["dual_objective"]
        last["violation"] = float(np.max(h - xi_ws)) if np.ndim(xi_ws) else \
            float(h.mean()) - xi_ws
        last["cached"] = False
        last["qp_budget_spent"] = True

    def _fit_n_slack(self, Xb, Y, n, n_features, qp_tol):
        s = self.structure
        C = self.C
        # per example: sparse constraint vectors d (index 0 is the null constraint
        # d = 0, l = 0), losses l, dual weights a (summing to C), inactivity counters
        d_idx = [[np.zeros(0, np.int64)] for _ in range(n)]
        d_val = [[np.zeros(0)] for _ in range(n)]
        ls = [[0.0] for _ in range(n)]
        alphas = [[C] for _ in range(n)]
        inactive = [[0] for _ in range(n)]
        w = np.zeros(n_features)
        cache = []
        history = []
        start = time.perf_counter()
        converged = False
        qp_converged = True
        qp_work = 0

        def flatten():
            sizes = np.array([len(losses) for losses in ls], dtype=np.int64)
            block_starts = np.concatenate([[0], np.cumsum(sizes)])
            rows_idx = [v for per in d_idx for v in per]
            rows_val = [v for per in d_val for v in per]
            indptr = np.concatenate([[0], np.cumsum([v.size for v in rows_idx])])
            indices = np.concatenate(rows_idx)
            data = np.concatenate(rows_val)
            return (data, indices, indptr.astype(np.int64), block_starts,
                    np.concatenate([np.asarray(losses, dtype=np.float64) for losses in ls]),
                    np.concatenate([np.asarray(a, dtype=np.float64) for a in alphas]))

        for it in range(1, self.max_iter + 2):
            data, indices, indptr, block_starts, l_flat, a_flat = flatten()
            ww = float(w @ w)
            dual = float(l_flat @ a_flat) - 0.5 * ww
            # working-set slack of each example: max_k (l_k - w . d_k), null gives 0
            wd = np.add.reduceat(np.append(data * w[indices], 0.0), indptr[:-1]) \
                * (np.diff(indptr) > 0)
            xi_ws = np.maximum(np.maximum.reduceat(l_flat - wd, block_starts[:-1]), 0.0)
            cached = False
            if cache:
                Y_hat, Delta, h = self._from_cache(cache, w, Xb, Y, n)
                cached = float(np.max(h - xi_ws)) > self.tol
            if not cached:
                Y_hat, Delta, h = self._most_violated(w, Xb, Y, n)
                if self.inference_cache:
                    cache.append(Y_hat)
                    del cache[:-self.inference_cache]
            excess = h - xi_ws
            violation = float(np.max(excess))
            primal = None if cached else 0.5 * ww + C * float(h.sum())
            self._record(history, start, iteration=it, objective=primal,
                         dual_objective=dual,
                         gap=None if primal is None else primal - dual,
                         violation=violation, n_constraints=len(l_flat) - n, cached=cached)
            if not cached and violation <= self.tol and qp_converged:
                converged = True
                break
            if it > self.max_iter:
                if cached:
                    Y_hat, Delta, h = self._most_violated(w, Xb, Y, n)
                    history[-1]["objective"] = 0.5 * ww + C * float(h.sum())
                    history[-1]["gap"] = history[-1]["objective"] - dual
                    history[-1]["violation"] = float(np.max(h - xi_ws))
                    history[-1]["cached"] = False
                break
            coef = self._coefficients(Delta)
            for i in np.flatnonzero(excess > self.tol):
                gi, gv = _sparse_vector(s, Xb[i], Y[i])
                hi, hv = _sparse_vector(s, Xb[i], Y_hat[i])
                idx = np.concatenate([gi, hi])
                val = np.concatenate([gv, -hv]) * coef[i]
                if idx.size:
                    idx, inverse = np.unique(idx, return_inverse=True)
                    val = np.bincount(inverse, weights=val, minlength=idx.size)
                d_idx[i].append(idx)
                d_val[i].append(val)
                ls[i].append(float(Delta[i]))
                alphas[i].append(0.0)
                inactive[i].append(0)
            data, indices, indptr, block_starts, l_flat, a_flat = flatten()
            # one pass: every constraint scanned, up to 10 SMO steps per block,
            # each reading and updating two constraint rows
            size = len(l_flat)
            size += data.size + 10 * n * 2 * (data.size // size + 1)
            passes = max(1, min(self.max_inner_passes, (QP_WORK_BUDGET - qp_work) // size))
            a_flat, w, n_passes, qp_violation = solve_block_sparse_dual(
                data=data, indices=indices, indptr=indptr, losses=l_flat,
                block_starts=block_starts, alpha=a_flat, w=w, tol=qp_tol,
                max_passes=passes)
            qp_work += n_passes * size
            qp_converged = qp_violation <= qp_tol
            # unpack, and prune constraints inactive for inactive_window iterations
            for i in range(n):
                b0, b1 = block_starts[i], block_starts[i + 1]
                if b1 - b0 == 1:
                    continue
                a = a_flat[b0:b1].copy()
                counts = np.where(a <= 1e-12 * C, np.asarray(inactive[i]) + 1, 0)
                counts[0] = 0
                drop = counts >= self.inactive_window
                if drop.any():
                    keep = np.flatnonzero(~drop)
                    a[0] += a[drop].sum()
                    a, counts = a[keep], counts[keep]
                    ls[i] = [ls[i][k] for k in keep]
                    d_idx[i] = [d_idx[i][k] for k in keep]
                    d_val[i] = [d_val[i][k] for k in keep]
                alphas[i] = list(a)
                inactive[i] = list(counts)
            if qp_work >= QP_WORK_BUDGET:
                self._finish_on_budget(history, w, Xb, Y, n, float(w @ w), xi_ws)
                break
        return w, converged, history
