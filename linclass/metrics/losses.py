"""Margin losses as functions of the margin ``z = y f(x)`` with their
derivatives, and the multi-class hinge loss (Flach 2012, section 7.3)."""
import numbers

import numpy as np

from ._checks import _as_1d, _check_labels_1d, _check_scores, _encode, _weights

__all__ = ['MARGIN_LOSSES', 'MarginLoss', 'exponential_loss_margin', 'hinge_loss', 'hinge_loss_margin', 'logistic_loss_margin', 'margin_loss', 'squared_loss_margin', 'zero_one_loss_margin']


class MarginLoss:
    """A loss as a function of the margin ``z = y f(x)`` (``y`` in {-1, +1}).

    Attributes
    ----------
    name : str
    value : callable
        ``value(z)``, vectorised.
    derivative : callable
        ``derivative(z)``, vectorised (a subgradient where the loss has a kink).
    """

    def __init__(self, name, value, derivative, description):
        self.name = name
        self.value = value
        self.derivative = derivative
        self.description = description

    def __call__(self, z):
        return self.value(z)

    def __repr__(self):
        return "MarginLoss(%r: %s)" % (self.name, self.description)


def _margin(z):
    arr = np.asarray(z, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError("margin z contains NaN")
    return arr


def _out(arr, like):
    return arr if np.ndim(like) else float(arr)


def zero_one_loss_margin(z):
    """0-1 loss: 1 if ``z <= 0`` (wrong or on the boundary), else 0.
    Derivative 0 (almost everywhere)."""
    m = _margin(z)
    return _out((m <= 0).astype(np.float64), z)


def hinge_loss_margin(z):
    """Hinge loss ``max(0, 1 - z)``; subgradient -1 for ``z < 1``, 0 for ``z >= 1``."""
    m = _margin(z)
    return _out(np.maximum(0.0, 1.0 - m), z)


def logistic_loss_margin(z, base=2.0):
    """Logistic loss ``log_base(1 + exp(-z))``.

    Base 2 by default, so that the loss is 1 at ``z = 0`` like the 0-1 and
    hinge losses and upper-bounds the 0-1 loss ([Flach2012]_ figure 7.7);
    ``base=np.e`` gives the natural-log loss of logistic regression.
    Computed stably with ``logaddexp``.
    """
    m = _margin(z)
    return _out(np.logaddexp(0.0, -m) / np.log(base), z)


def exponential_loss_margin(z):
    """Exponential loss ``exp(-z)`` (AdaBoost)."""
    m = _margin(z)
    return _out(np.exp(-m), z)


def squared_loss_margin(z):
    """Squared loss ``(1 - z)^2``."""
    m = _margin(z)
    return _out((1.0 - m) ** 2, z)


def _logistic_derivative(z, base):
    m = _margin(z)
    # d/dz log(1 + exp(-z)) = -1 / (1 + exp(z)) = -sigmoid(-z), computed stably
    sigmoid_neg = np.exp(-np.logaddexp(0.0, m))
    return _out(-sigmoid_neg / np.log(base), z)


def _make_margin_losses(base):
    return {
        "zero_one": MarginLoss(
            "zero_one", zero_one_loss_margin,
            lambda z: _out(np.zeros_like(_margin(z)), z), "1 if z <= 0 else 0"),
        "hinge": MarginLoss(
            "hinge", hinge_loss_margin,
            lambda z: _out(-(_margin(z) < 1).astype(np.float64), z), "max(0, 1 - z)"),
        "logistic": MarginLoss(
            "logistic", lambda z: logistic_loss_margin(z, base),
            lambda z: _logistic_derivative(z, base),
            "log(1 + exp(-z)) / log(%g)" % base),
        "exponential": MarginLoss(
            "exponential", exponential_loss_margin,
            lambda z: _out(-np.exp(-_margin(z)), z), "exp(-z)"),
        "squared": MarginLoss(
            "squared", squared_loss_margin,
            lambda z: _out(-2.0 * (1.0 - _margin(z)), z), "(1 - z)^2"),
    }


#: Names accepted by :func:`margin_loss`.
MARGIN_LOSSES = ("zero_one", "hinge", "logistic", "exponential", "squared")


def margin_loss(name, *, base=2.0):
    """The margin loss called ``name`` as a :class:`MarginLoss`.

    Parameters
    ----------
    name : {'zero_one', 'hinge', 'logistic', 'exponential', 'squared'}
    base : float, default=2.0
        Logarithm base of the logistic loss (2: value 1 at z = 0; ``np.e``:
        natural log).

    Returns
    -------
    MarginLoss
        With vectorised ``value(z)`` and ``derivative(z)``.
    """
    if not (isinstance(base, numbers.Real) and np.isfinite(base) and base > 1):
        raise ValueError("base must be a number > 1, got %r" % (base,))
    losses = _make_margin_losses(float(base))
    if name not in losses:
        raise ValueError("unknown margin loss %r; choose one of %s" % (name, MARGIN_LOSSES))
    return losses[name]


def hinge_loss(y_true, pred_decision, *, labels=None, sample_weight=None):
    """Average hinge loss of decision values, as scikit-learn's ``hinge_loss``.

    Binary: the greater label is +1, the other -1, and the loss is the mean of
    ``max(0, 1 - y f(x))``.  Multi-class (``pred_decision`` of shape
    (n_samples, n_classes)): Crammer–Singer, ``max(0, 1 - f_y(x) +
    max_{k != y} f_k(x))``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    pred_decision : array-like of shape (n_samples,) or (n_samples, n_classes)
    labels : array-like, optional
        Multi-class: all classes (the columns of ``pred_decision``).
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
    """
    y_true = _check_labels_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required")
    decision = _check_scores(pred_decision, "pred_decision", y_true.shape[0],
                             ndim=(1, 2))
    weight = _weights(sample_weight, y_true.shape[0])
    classes = np.unique(y_true) if labels is None else np.unique(_as_1d(labels, "labels"))
    if decision.ndim == 2 and decision.shape[1] > 1 or len(classes) > 2:
        if decision.ndim != 2 or decision.shape[1] != len(classes):
            raise ValueError("pred_decision must have one column per class (%d), got "
                             "shape %r" % (len(classes), decision.shape))
        code = _encode(y_true, classes)
        if (code < 0).any():
            raise ValueError("y_true holds label %r, which is not in labels"
                             % (y_true[np.flatnonzero(code < 0)[0]],))
        rows = np.arange(len(code))
        true_score = decision[rows, code]
        others = decision.copy()
        others[rows, code] = -np.inf
        margin = true_score - others.max(axis=1)
    else:
        sign = np.where(y_true == classes[-1], 1.0, -1.0) if len(classes) == 2 \
            else -np.ones(y_true.shape[0])
        margin = sign * decision
    losses = np.maximum(0.0, 1.0 - margin)
    return float(np.average(losses, weights=weight))


