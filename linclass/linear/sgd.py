"""Regularised empirical risk minimisation by stochastic gradient descent.

:class:`SGDClassifier` minimises, for each binary problem (labels ``s_i =
+-1``, one problem for two classes, one per class against the rest
otherwise),

    1/n sum_i c_i L(s_i (w . x_i + b)) + alpha ((1 - l1_ratio)/2 ||w||^2 + l1_ratio ||w||_1)

with ``L`` one of the margin losses of :func:`sgd_loss` (hinge, squared
hinge, logistic, exponential, squared, perceptron, modified Huber) and
``c_i`` the sample weight times the class weight of ``y_i``.  One Cython
epoch loop (``linclass._core._sgd``) walks dense or CSR rows with a scaled
weight vector (O(1) L2 shrinkage), lazy averaging (ASGD) and the cumulative
L1 penalty.  With more than two classes the K one-vs-rest problems walk the
rows together (``_sgd.sgd_epoch_ovr``): each epoch is one pass over the rows,
each row is read once and updates the K weight vectors, stored feature-major
(n_features, K) so that the K margins and updates are K-wide loops.  The
problems therefore share one shuffle per epoch (scikit-learn shuffles each
problem with its own seed); problem k's result is exactly the binary fit of
"class k against the rest" with the same ``random_state``.  ``n_jobs``
threads each take a contiguous block of the classes; the result does not
depend on ``n_jobs``.  A binary problem on a CSR matrix whose stored values
are all 1.0 (indicator features, such as a9a's) reads only the column
indices in its epochs: the same bits, a third of the memory traffic per
stored entry.

References
----------
Bottou (2010), "Large-scale machine learning with stochastic gradient
descent", COMPSTAT; Bottou (2012), "Stochastic gradient descent tricks",
Neural Networks: Tricks of the Trade (the "optimal" schedule, the scaled
weight vector, averaging).
Tsuruoka, Tsujii & Ananiadou (2009), "Stochastic gradient descent training
for L1-regularized log-linear models with cumulative penalty", ACL.
Xu (2011), "Towards optimal one pass large scale learning with averaged
stochastic gradient descent", arXiv:1107.2490 (lazy averaging).
Zhang (2004), "Solving large scale linear prediction problems using
stochastic gradient descent algorithms", ICML (modified Huber loss).
Flach (2012), *Machine Learning*, ch. 7 (margin losses).
Bach & Moulines (2011), "Non-asymptotic analysis of stochastic approximation
algorithms for machine learning", NIPS (step sizes for smooth losses).
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from .._core import _checks, _sgd
from ._common import LinearDecisionMixin, map_threads, resolve_n_jobs
from .._validation import check_finite_fit, check_max_iter, iteration_budget
from .._validation import (check_classification_data, check_predict_X, check_X,
                           class_weight_per_sample, kernel_rows)
from .._validation import (check_n_features, check_partial_fit_classes, check_positive,
                           check_random_state, check_sample_weight, check_target, encode_labels)
from ..base import BaseEstimator, ClassifierMixin
from ..exceptions import ConvergenceWarning
from ..metrics.losses import MarginLoss, margin_loss

__all__ = ["SGDClassifier", "sgd_loss", "SGD_LOSSES", "SGDDivergenceError"]

_LOSS_CODES = {"hinge": 0, "squared_hinge": 1, "logistic": 2, "exponential": 3,
               "squared": 4, "perceptron": 5, "modified_huber": 6}
#: Loss names accepted by :class:`SGDClassifier` and :func:`sgd_loss`.
SGD_LOSSES = tuple(_LOSS_CODES)
_LOSS_ALIASES = {"log_loss": "logistic", "log": "logistic"}
_SCHEDULES = {"constant": 0, "optimal": 1, "invscaling": 2}
_PENALTIES = ("l2", "l1", "elasticnet", None)
_SPARSE_INTERCEPT_DECAY = 0.01   # as scikit-learn: the intercept moves slower on sparse data
_N_STATE = 6
#: sup of L''(z) for the losses whose derivative is unbounded.  Example i's loss
#: then has the smoothness constant L_i = L'' c_i (||x_i||^2 + 1) (with the
#: intercept); SGD with steps above 2 / L_i overshoots and blows up, steps below
#: 1 / (2 max L_i) converge in expectation (Bach & Moulines 2011; Needell, Srebro &
#: Ward 2014): the optimal schedule starts at half of that bound, 1 / (4 max L_i)
_UNBOUNDED_CURVATURE = {"squared": 2.0, "squared_hinge": 2.0}




class SGDDivergenceError(ValueError, ArithmeticError):
    """SGD produced a non-finite score: the step size is too large for the data."""


def _intercept_decay(X):
    """Factor of the intercept's steps (smaller on sparse data)."""
    return _SPARSE_INTERCEPT_DECAY if sp.issparse(X) else 1.0


def _row_squared_norms(X):
    """||x_i||^2 of every row of a validated dense or CSR matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _out(arr, like):
    return arr if np.ndim(like) else float(arr)


def _z(z):
    arr = np.asarray(z, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError("margin z contains NaN")
    return arr


def _squared_hinge(z):
    return _out(np.maximum(0.0, 1.0 - _z(z)) ** 2, z)


def _squared_hinge_derivative(z):
    return _out(-2.0 * np.maximum(0.0, 1.0 - _z(z)), z)


def _perceptron(z):
    return _out(np.maximum(0.0, -_z(z)), z)


def _perceptron_derivative(z):
    return _out(-(_z(z) <= 0).astype(np.float64), z)


def _modified_huber(z):
    m = _z(z)
    return _out(np.where(m >= -1.0, np.maximum(0.0, 1.0 - m) ** 2, -4.0 * m), z)


def _modified_huber_derivative(z):
    m = _z(z)
    return _out(np.where(m >= -1.0, -2.0 * np.maximum(0.0, 1.0 - m), -4.0), z)


def sgd_loss(name):
    """The margin loss ``L(z)`` (``z = y f(x)``) that :class:`SGDClassifier` minimises.

    Hinge, exponential and squared loss are those of
    :func:`linclass.metrics.margin_loss`; the logistic loss is its natural-log
    form ``log(1 + exp(-z))``; added here are the squared hinge
    ``max(0, 1 - z)^2``, the perceptron criterion ``max(0, -z)`` and the
    modified Huber loss (``max(0, 1 - z)^2`` for ``z >= -1``, else ``-4z``;
    Zhang 2004).

    Parameters
    ----------
    name : str
        One of :data:`SGD_LOSSES` (``"log_loss"`` is accepted for ``"logistic"``).

    Returns
    -------
    linclass.metrics.MarginLoss
        With vectorised ``value(z)`` and ``derivative(z)`` (a subgradient at
        kinks, the one the SGD kernel uses).
    """
    name = _LOSS_ALIASES.get(name, name) if isinstance(name, str) else name
    if name == "logistic":
        return margin_loss("logistic", base=np.e)
    if name in ("hinge", "exponential", "squared"):
        loss = margin_loss(name)
        if name == "hinge":     # the kernel's subgradient at z = 1 is -1, as scikit-learn
            return MarginLoss("hinge", loss.value,
                              lambda z: _out(-(_z(z) <= 1).astype(np.float64), z),
                              loss.description)
        return loss
    if name == "squared_hinge":
        return MarginLoss(name, _squared_hinge, _squared_hinge_derivative, "max(0, 1 - z)^2")
    if name == "perceptron":
        return MarginLoss(name, _perceptron, _perceptron_derivative, "max(0, -z)")
    if name == "modified_huber":
        return MarginLoss(name, _modified_huber, _modified_huber_derivative,
                          "max(0, 1 - z)^2 if z >= -1 else -4 z")
    raise ValueError("unknown loss %r; choose one of %s" % (name, SGD_LOSSES))


class _BinaryState:
    """What one binary problem carries from epoch to epoch (and call to call)."""

    def __init__(self, n_features, averaging, l1):
        self.w = np.zeros(n_features)
        self.avg_sum = np.zeros(n_features if averaging else 1)
        self.l1_q = np.zeros(n_features if l1 else 1)
        self.scalars = np.zeros(_N_STATE)
        self.scalars[0] = 1.0               # t counts steps from 1

    def coef(self, averaging):
        """(weights, intercept) to publish: the averages once averaging has begun."""
        n_avg = self.scalars[3]
        if averaging and n_avg > 0:
            return ((self.avg_sum + self.scalars[2] * self.w) / n_avg,
                    self.scalars[4] / n_avg)
        return self.w.copy(), self.scalars[1]


class _OvRBlock:
    """One-vs-rest problems solved together by ``_sgd.sgd_epoch_ovr``.

    Problem ``k`` of the block separates class code ``positive[k]`` from the
    rest; its weights are column ``k`` of ``V`` (n_features, K), so that one
    pass over a row updates all of them (see the kernel).
    """

    def __init__(self, positive, n_features, averaging, l1):
        k = len(positive)
        self.positive = np.asarray(positive, dtype=np.int32)
        self.V = np.zeros((n_features, k))
        self.avg_sum = np.zeros((n_features if averaging else 1, k))
        self.l1_q = np.zeros((n_features if l1 else 1, k))
        self.scalars = np.zeros((k, _N_STATE))
        self.scalars[:, 0] = 1.0            # t counts steps from 1

    def coef(self, k, averaging):
        """(weights, intercept) of problem k to publish (as :meth:`_BinaryState.coef`)."""
        n_avg = self.scalars[k, 3]
        if averaging and n_avg > 0:
            return ((self.avg_sum[:, k] + self.scalars[k, 2] * self.V[:, k]) / n_avg,
                    self.scalars[k, 4] / n_avg)
        return self.V[:, k].copy(), self.scalars[k, 1]

    def coefs(self, averaging):
        """(weights (K, n_features), intercepts (K,)) of all the block's problems."""
        n_avg = self.scalars[:, 3]
        W, b = self.V, self.scalars[:, 1].copy()
        if averaging and np.any(n_avg > 0):
            use = n_avg > 0
            safe = np.where(use, n_avg, 1.0)
            W = np.where(use, (self.avg_sum + self.V * self.scalars[:, 2]) / safe, W)
            b = np.where(use, self.scalars[:, 4] / safe, b)
        return _transpose(W), b


def _transpose(A, rows=512):
    """``A.T`` as a C-contiguous array, copied in blocks of ``rows`` rows of ``A``
    (a plain strided copy of a tall (n_features, K) block walks it K times)."""
    out = np.empty((A.shape[1], A.shape[0]), dtype=A.dtype)
    for start in range(0, A.shape[0], rows):
        out[:, start:start + rows] = A[start:start + rows].T
    return out


def _regroup(blocks, groups):
    """The problems of ``blocks`` rearranged into blocks of the class codes ``groups``."""
    if [list(b.positive) for b in blocks] == [list(g) for g in groups]:
        return blocks
    order = np.concatenate([b.positive for b in blocks])
    where = np.argsort(order)
    V = np.hstack([b.V for b in blocks])[:, where]
    U = np.hstack([b.avg_sum for b in blocks])[:, where]
    Q = np.hstack([b.l1_q for b in blocks])[:, where]
    S = np.vstack([b.scalars for b in blocks])[where]
    out = []
    for g in groups:
        block = _OvRBlock.__new__(_OvRBlock)
        block.positive = np.asarray(g, dtype=np.int32)
        block.V = np.ascontiguousarray(V[:, g])
        block.avg_sum = np.ascontiguousarray(U[:, g])
        block.l1_q = np.ascontiguousarray(Q[:, g])
        block.scalars = np.ascontiguousarray(S[g])
        out.append(block)
    return out


class SGDClassifier(LinearDecisionMixin, ClassifierMixin, BaseEstimator):
    """Linear classifier trained by stochastic gradient descent on a margin loss.

    Parameters
    ----------
    loss : str, default="hinge"
        ``"hinge"`` (linear SVM), ``"squared_hinge"``, ``"logistic"`` (or
        ``"log_loss"``: logistic regression), ``"exponential"``,
        ``"squared"`` (``(1 - z)^2``), ``"perceptron"``,
        ``"modified_huber"``; see :func:`sgd_loss`.
    penalty : {"l2", "l1", "elasticnet", None}, default="l2"
    alpha : float, default=1e-4
        Regularisation strength (``lambda``; >= 0, > 0 for the optimal schedule).
    l1_ratio : float in [0, 1], default=0.15
        Share of L1 in the elastic net (``penalty="elasticnet"`` only).
    fit_intercept : bool, default=True
        The intercept is not penalised; on sparse data its steps are
        multiplied by 0.01 (as scikit-learn).
    max_iter : int, default=1000
        Epochs.
    tol : float or None, default=1e-3
        Stop when the epoch's training loss (or, with ``early_stopping``, the
        validation accuracy) has not improved by ``tol`` (times
        ``n_samples`` for the loss) for ``n_iter_no_change`` epochs.  None:
        run ``max_iter`` epochs.
    shuffle : bool, default=True
        Shuffle the rows before each epoch (one shuffle shared by the
        one-vs-rest problems).
    learning_rate : {"optimal", "constant", "invscaling"}, default="optimal"
        ``eta_t = 1 / (alpha (t0 + t - 1))`` with Bottou's ``t0`` (first
        step ``typw / max(1, |L'(-typw)|)``, ``typw = alpha^(-1/4)``),
        ``eta0``, or ``eta0 / t^power_t``.  For the exponential loss, whose
        derivative at ``-typw`` is huge, the optimal schedule starts with
        tiny steps: prefer a constant step there.  For the squared and squared
        hinge losses, whose derivative is unbounded, the optimal schedule
        also starts no higher than ``1 / (8 max_i c_i (||x_i||^2 + 1))``, an
        eighth of the largest stable step (``t0`` raised accordingly; ``c_i``
        the example's weight): larger steps overshoot the example's margin and
        the iterates blow up (Bach & Moulines, 2011).
    eta0 : float, default=0.01
        Step size of the constant and inverse-scaling schedules (> 0).
    power_t : float, default=0.5
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data (stratified) and stop on
        its accuracy.
    validation_fraction : float in (0, 1), default=0.1
    n_iter_no_change : int, default=5
    average : bool or int, default=False
        Averaged SGD: publish the mean of the weights after each step (from
        step ``average`` on when an int).
    class_weight : None, "balanced" or dict
    warm_start : bool, default=False
        ``fit`` continues from the previous weights.
    random_state : None, int or numpy Generator/RandomState
    n_jobs : None or int
        Threads for the one-vs-rest problems, each on a block of the classes
        (-1: all CPUs); the fit is the same for every ``n_jobs``.
    verbose : int, default=0

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_, n_features_in_
    n_iter_ : int
        Epochs run (largest over the binary problems).
    t_ : float
        Steps taken plus one (of the first binary problem).
    loss_function_ : linclass.metrics.MarginLoss
        The loss as a function of the margin.

    Raises
    ------
    SGDDivergenceError
        (a ValueError) when the iterates overflow; lower ``eta0`` or scale
        the features.
    """

    def __init__(self, loss="hinge", penalty="l2", alpha=1e-4, l1_ratio=0.15,
                 fit_intercept=True, max_iter=1000, tol=1e-3, shuffle=True,
                 learning_rate="optimal", eta0=0.01, power_t=0.5, early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=5, average=False,
                 class_weight=None, warm_start=False, random_state=None, n_jobs=None,
                 verbose=0):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.average = average
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------
    def _loss_name(self):
        name = _LOSS_ALIASES.get(self.loss, self.loss) if isinstance(self.loss, str) else None
        if name not in _LOSS_CODES:
            raise ValueError("loss must be one of %s, got %r" % (SGD_LOSSES, self.loss))
        return name

    def _check_params(self):
        self._loss_name()
        if self.penalty not in _PENALTIES:
            raise ValueError("penalty must be one of %s, got %r" % (_PENALTIES, self.penalty))
        check_positive(self.alpha, "alpha", strict=False)
        if self.learning_rate not in _SCHEDULES:
            raise ValueError("learning_rate must be one of %s, got %r"
                             % (tuple(_SCHEDULES), self.learning_rate))
        if self.learning_rate == "optimal" and self.alpha == 0:
            raise ValueError("alpha must be > 0 with learning_rate='optimal' "
                             "(eta_t = 1 / (alpha (t0 + t)))")
        check_positive(self.eta0, "eta0")           # checked even where unused
        check_positive(self.power_t, "power_t", strict=False)
        if (isinstance(self.l1_ratio, bool) or not isinstance(self.l1_ratio, numbers.Real)
                or not 0.0 <= self.l1_ratio <= 1.0):
            raise ValueError("l1_ratio must be a number in [0, 1], got %r" % (self.l1_ratio,))
        check_max_iter(self, self.max_iter)
        if self.tol is not None:
            if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) \
                    or np.isnan(self.tol) or self.tol < 0:
                raise ValueError("tol must be a number >= 0 or None, got %r" % (self.tol,))
        check_positive(self.n_iter_no_change, "n_iter_no_change", integer=True)
        v = self.validation_fraction                # checked even without early stopping
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 < v < 1.0:
            raise ValueError("validation_fraction must be in (0, 1), got %r" % (v,))
        if not isinstance(self.average, (bool, np.bool_)):
            if isinstance(self.average, numbers.Integral) and self.average >= 0:
                pass
            else:
                raise ValueError("average must be a bool or an integer >= 0, got %r"
                                 % (self.average,))

    def _l1_ratio(self):
        if self.penalty == "l1":
            return 1.0
        if self.penalty == "elasticnet":
            return float(self.l1_ratio)
        return 0.0

    def _alpha(self):
        return 0.0 if self.penalty is None else float(self.alpha)

    def _average_start(self):
        if isinstance(self.average, (bool, np.bool_)):
            return 1.0 if self.average else 0.0
        return float(self.average)

    def _rng_source(self):
        if getattr(self, "_rng", None) is None:
            self._rng = check_random_state(self.random_state)
        return self._rng

    @property
    def loss_function_(self):
        return sgd_loss(self._loss_name())

    # ------------------------------------------------------------------
    def _run(self, X, codes, n_classes, weight, n_epochs, use_stopping, X_val=None,
             codes_val=None):
        """Run the binary problems; returns (epochs, converged, diverged) per problem."""
        n_samples, n_features = X.shape
        rows = kernel_rows(X)
        loss_code = _LOSS_CODES[self._loss_name()]
        alpha = self._alpha()
        schedule = _SCHEDULES[self.learning_rate]
        # with no penalty the optimal schedule is undefined; checked in _check_params
        t0 = _sgd.optimal_t0(loss_code, alpha) if schedule == 1 else 0.0
        curvature = _UNBOUNDED_CURVATURE.get(self._loss_name())
        if schedule == 1 and curvature is not None and n_samples:
            # the optimal schedule's steps 1 / (alpha (t0 + t - 1)) only shrink: the
            # first one at most 1 / (4 max L_i) keeps every step stable
            smoothness = curvature * float(np.max(weight * (_row_squared_norms(X) + (
                _intercept_decay(X) if self.fit_intercept else 0.0))))
            t0 = max(t0, 4.0 * smoothness / alpha)
        averaging = self._average_start() > 0
        tol = None if (self.tol is None or not use_stopping) else float(self.tol)
        early = bool(self.early_stopping) and use_stopping and X_val is not None
        rng = self._rng_source()
        # one shuffle per epoch, shared by the one-vs-rest problems (so that they
        # can walk the rows together)
        seeds = rng.integers(0, 2**63 - 1, size=n_epochs)
        common = dict(**rows, n_samples=n_samples, n_features=n_features, weight=weight,
                      shuffle=bool(self.shuffle), loss=loss_code, learning_rate=schedule,
                      eta0=float(self.eta0), power_t=float(self.power_t), t0=t0,
                      alpha=alpha, l1_ratio=self._l1_ratio(),
                      intercept_decay=_intercept_decay(X),
                      fit_intercept=bool(self.fit_intercept), averaging=averaging,
                      average_start=self._average_start(),
                      compute_loss=tol is not None and not early)

        def stopper(p):
            """The stopping rule of problem p: call with the epoch's loss, True = stop."""
            positive = 1 if n_classes == 2 else p
            yval = (np.where(codes_val == positive, 1.0, -1.0) if early else None)
            track = {"best": -np.inf if early else np.inf, "no_change": 0, "epoch": 0}

            def step(sum_loss, coef):
                track["epoch"] += 1
                if early:
                    w, b = coef()
                    value = float(np.mean(np.sign(np.asarray(X_val @ w).ravel() + b)
                                          == yval))
                    better = value >= track["best"] + tol
                    track["best"] = max(track["best"], value)
                else:
                    value = sum_loss
                    better = sum_loss <= track["best"] - tol * n_samples
                    track["best"] = min(track["best"], sum_loss)
                track["no_change"] = 0 if better else track["no_change"] + 1
                if self.verbose:
                    print("-- problem %d epoch %d: %s %.6g" % (
                        p, track["epoch"], "validation accuracy" if early
                        else "training loss", value))
                return track["no_change"] >= self.n_iter_no_change
            return step

        def solve(p):
            """Binary problem p alone (two classes)."""
            state = self._states[p]
            ysign = np.where(codes == 1, 1.0, -1.0)
            order = np.arange(n_samples, dtype=np.int32)
            stop = stopper(p) if tol is not None else None
            epochs = 0
            # the weight scale is carried from epoch to epoch and folded into w
            # once at the end (and every epoch when early stopping reads w)
            scale = np.ones(1)

            def fold():
                return _sgd.sgd_fold(state.w.reshape(-1, 1), state.scalars.reshape(1, -1),
                                     scale)[0] != 0
            if not early and not (stop is not None and self.verbose):
                # nothing the kernel cannot do between the epochs (the stopping
                # rule on the training loss runs in it): the whole fit in one call
                kw = {k: v for k, v in common.items() if k != "compute_loss"}
                status, epochs, stopped = _sgd.sgd_epochs(
                    **kw, ysign=ysign, order=order, seeds=seeds.astype(np.uint64),
                    w=state.w, avg_sum=state.avg_sum, l1_q=state.l1_q,
                    state=state.scalars, scale=scale, tol=tol,
                    n_iter_no_change=int(self.n_iter_no_change), fold=True)
                if status != 0:
                    return [(epochs, False, True)]
                return [(epochs, tol is None or stopped, False)]
            unit_x = _checks.csr_unit_values(rows["data"], rows["is_sparse"])
            for epoch in range(n_epochs):
                status, sum_loss = _sgd.sgd_epoch(
                    **common, ysign=ysign, order=order, seed=int(seeds[epoch]),
                    w=state.w, avg_sum=state.avg_sum, l1_q=state.l1_q,
                    state=state.scalars, scale=scale, unit_x=unit_x)
                epochs += 1
                if status != 0 or (early and fold()):
                    fold()
                    return [(epochs, False, True)]
                if stop is not None and stop(sum_loss, lambda: state.coef(averaging)):
                    return [(epochs, True, fold())]
            return [(epochs, tol is None, fold())]

        def solve_block(block):
            """The one-vs-rest problems of one block, fused in one pass per epoch."""
            K = len(block.positive)
            active = np.ones(K, dtype=np.uint8)
            order = np.arange(n_samples, dtype=np.int32)
            stops = [stopper(int(p)) for p in block.positive] if tol is not None else None
            out = [[0, tol is None, False] for _ in range(K)]
            codes32 = np.ascontiguousarray(codes, dtype=np.int32)
            # the K weight scales are carried from epoch to epoch (one pass over
            # V per epoch saved) and folded in once at the end, and every epoch
            # when early stopping reads the weights
            scale = np.ones(K)
            for epoch in range(n_epochs):
                status, sum_loss = _sgd.sgd_epoch_ovr(
                    **common, codes=codes32, positive=block.positive, active=active,
                    order=order, seed=int(seeds[epoch]), V=block.V,
                    avg_sum=block.avg_sum, l1_q=block.l1_q, state=block.scalars,
                    scale=scale)
                for k in np.flatnonzero(active):
                    out[k][0] += 1
                if early:
                    status = status | _sgd.sgd_fold(block.V, block.scalars, scale)
                if status.any():
                    for k in range(K):
                        out[k][2] = bool(status[k])
                    break
                if stops is None:
                    continue
                for k in np.flatnonzero(active):
                    if stops[k](sum_loss[k], lambda k=k: block.coef(k, averaging)):
                        active[k] = 0
                        out[k][1] = True
                if not active.any():
                    break
            final = _sgd.sgd_fold(block.V, block.scalars, scale)   # also checks the weights
            for k in range(K):
                out[k][2] = bool(out[k][2] or final[k])
            return [tuple(r) for r in out]

        if n_classes == 2:
            results = solve(0)
        else:
            groups = np.array_split(np.arange(n_classes),
                                    resolve_n_jobs(self.n_jobs, n_classes))
            self._states = _regroup(self._states, groups)
            results = [r for rs in map_threads(solve_block, self._states, self.n_jobs)
                       for r in rs]
        if any(r[2] for r in results):
            raise SGDDivergenceError(
                "SGDClassifier diverged: a score overflowed to infinity or NaN (loss=%r, "
                "learning_rate=%r, eta0=%r, alpha=%r); %s" % (
                    self.loss, self.learning_rate, self.eta0, self.alpha, self._divergence_hint()))
        return results

    def _divergence_hint(self):
        if self.learning_rate == "optimal":
            return ("use learning_rate='constant' or 'invscaling' with a smaller eta0, a "
                    "larger alpha, or scaled features")
        return ("use a smaller eta0 (below 1 / max_i ||x_i||^2 for the squared losses), "
                "learning_rate='optimal' or scaled features")

    def _publish(self):
        averaging = self._average_start() > 0
        if isinstance(self._states[0], _OvRBlock):
            pairs = [b.coefs(averaging) for b in self._states]
            self.t_ = float(self._states[0].scalars[0, 0])
            self.coef_ = (pairs[0][0] if len(pairs) == 1
                          else np.ascontiguousarray(np.vstack([w for w, _ in pairs])))
            self.intercept_ = np.concatenate([b for _, b in pairs]).astype(np.float64)
            return
        pairs = [s.coef(averaging) for s in self._states]
        self.t_ = float(self._states[0].scalars[0])
        self.coef_ = (pairs[0][0].reshape(1, -1) if len(pairs) == 1   # a fresh array
                      else np.ascontiguousarray(np.vstack([w for w, _ in pairs])))
        self.intercept_ = np.array([b for _, b in pairs], dtype=np.float64)

    def _new_states(self, n_classes, n_features):
        averaging = self._average_start() > 0
        if n_classes == 2:
            return [_BinaryState(n_features, averaging, self._l1_ratio() > 0)]
        # one block per thread (_run regroups them when n_jobs changes)
        groups = np.array_split(np.arange(n_classes), resolve_n_jobs(self.n_jobs, n_classes))
        return [_OvRBlock(g, n_features, averaging, self._l1_ratio() > 0) for g in groups]

    def _validation_split(self, codes, n_classes):
        """Stratified hold-out: boolean mask of the validation rows."""
        rng = self._rng_source()
        mask = np.zeros(len(codes), dtype=bool)
        for c in range(n_classes):
            idx = np.flatnonzero(codes == c)
            n_val = int(round(self.validation_fraction * len(idx)))
            if len(idx) >= 2:
                n_val = min(max(n_val, 1), len(idx) - 1)
            else:
                n_val = 0
            mask[rng.choice(idx, n_val, replace=False)] = True
        if mask.all() or not mask.any():
            raise ValueError("early_stopping: validation_fraction=%r leaves no training or "
                             "no validation data" % (self.validation_fraction,))
        return mask

    # ------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit by SGD for up to ``max_iter`` epochs (returns self).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each example's loss (and step).
        """
        self._check_params()
        # the epoch kernels' sums and updates do not depend on the order of a
        # row's entries: unsorted CSR rows are used as they are (no copy)
        X, classes, codes, sample_weight = check_classification_data(
            X, y, sample_weight, accept_unsorted=True)
        # without class weights the validated sample weights are the weights as
        # they are (the kernels only read them): no product with ones, no copy
        weight = (sample_weight if self.class_weight is None else
                  class_weight_per_sample(self.class_weight, classes, codes, sample_weight))
        n_features = X.shape[1]
        keep = (self.warm_start and getattr(self, "_states", None) is not None
                and hasattr(self, "classes_") and np.array_equal(self.classes_, classes)
                and self.n_features_in_ == n_features)
        self._rng = None
        if not keep:
            self._states = self._new_states(len(classes), n_features)
        X_val = codes_val = None
        if self.early_stopping:
            val = self._validation_split(codes, len(classes))
            X_val, codes_val = X[val], codes[val]
            X, codes, weight = X[~val], codes[~val], np.ascontiguousarray(weight[~val])
        results = self._run(X, codes, len(classes), weight, iteration_budget(self.max_iter), True,
                            X_val, codes_val)
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.n_iter_ = int(max(r[0] for r in results))
        self._publish()
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)
        if self.tol is not None and not all(r[1] for r in results):
            warnings.warn("SGDClassifier: reached max_iter=%d epochs before the stopping "
                          "criterion (tol=%g) was met; increase max_iter"
                          % (self.max_iter, self.tol), ConvergenceWarning)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over ``(X, y)``, continuing from the current state.

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
        if X.shape[0] == 0:
            raise ValueError("X has 0 samples; partial_fit needs at least one")
        y = check_target(y, X.shape[0])
        if not first:
            check_n_features(X, self.n_features_in_, owner=self)
        classes, codes = encode_labels(y, classes)
        sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=True)
        weight = class_weight_per_sample(self.class_weight, classes, codes, sample_weight)
        if first or getattr(self, "_states", None) is None:
            self._states = self._new_states(len(classes), X.shape[1])
            if not first:     # loaded from disk: restart from the published weights
                if isinstance(self._states[0], _OvRBlock):
                    for block in self._states:
                        block.V[:] = self.coef_[block.positive].T
                        block.scalars[:, 1] = self.intercept_[block.positive]
                else:
                    for s, w, b in zip(self._states, self.coef_, self.intercept_):
                        s.w[:] = w
                        s.scalars[1] = b
            self._rng = None
            self.n_iter_ = 0
        self._run(X, codes, len(classes), weight, 1, False)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.n_iter_ += 1
        self._publish()
        return self

    # ------------------------------------------------------------------
    def objective(self, X, y, sample_weight=None):
        """Regularised empirical risk of the fitted weights, per binary problem.

        ``1/n sum_i c_i L(s_i (w.x_i + b)) + alpha ((1 - rho)/2 ||w||^2 + rho ||w||_1)``
        with ``n`` the number of samples and ``c_i`` as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_problems,)
        """
        X = check_predict_X(self, X)
        y = check_target(y, X.shape[0])
        _, codes = encode_labels(y, self.classes_)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        weight = class_weight_per_sample(self.class_weight, self.classes_, codes,
                                         sample_weight)
        loss = self.loss_function_
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        rho, alpha = self._l1_ratio(), self._alpha()
        out = []
        for p in range(self.coef_.shape[0]):
            positive = 1 if self.coef_.shape[0] == 1 else p
            ysign = np.where(codes == positive, 1.0, -1.0)
            w = self.coef_[p]
            risk = float(np.mean(weight * loss.value(ysign * scores[:, p])))
            out.append(risk + alpha * (0.5 * (1 - rho) * float(w @ w)
                                       + rho * float(np.abs(w).sum())))
        return np.array(out)

    @property
    def predict_proba(self):
        """Class probabilities (``loss="logistic"`` or ``"modified_huber"`` only).

        Logistic: ``sigmoid(score)`` per binary problem; modified Huber:
        ``(clip(score, -1, 1) + 1) / 2`` (Zhang 2004).  With more than two
        classes the one-vs-rest values are normalised to sum to 1 (uniform
        when all are 0).
        """
        if self._loss_name() not in ("logistic", "modified_huber"):
            raise AttributeError("predict_proba is available for loss='logistic' or "
                                 "'modified_huber', not %r" % (self.loss,))
        return self._predict_proba

    def _predict_proba(self, X):
        scores = self.decision_function(X)
        if self._loss_name() == "logistic":
            prob = np.exp(-np.logaddexp(0.0, -scores))
        else:
            prob = (np.clip(scores, -1.0, 1.0) + 1.0) / 2.0
        if prob.ndim == 1:
            return np.column_stack([1.0 - prob, prob])
        total = prob.sum(axis=1, keepdims=True)
        n_classes = prob.shape[1]
        return np.where(total > 0, prob / np.where(total > 0, total, 1.0), 1.0 / n_classes)

    @property
    def predict_log_proba(self):
        """Logarithm of :meth:`predict_proba` (same availability)."""
        proba = self.predict_proba
        return lambda X: np.log(proba(X))

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_rng", None)
        return state
