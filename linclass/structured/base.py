"""The Structure protocol: what a structured prediction problem provides.

A structured problem scores an input/output pair linearly,
``F(x, y) = w . Phi(x, y)``, and predicts ``argmax_y F(x, y)``.  A
:class:`Structure` describes one such problem to the generic learners
(:class:`~linclass.structured.StructuredPerceptron`,
:class:`~linclass.structured.StructuredSVM`) through four required members:

``n_features``
    Dimension of the joint feature vector ``Phi``.
``joint_feature(x, y)``
    ``Phi(x, y)`` as a sparse vector ``(indices, values)``: int64 indices in
    ``[0, n_features)`` and float64 values of the same length; duplicate
    indices are summed.
``decode(w, x)``
    ``argmax_y w . Phi(x, y)`` (Viterbi, CKY, a tree walk, enumeration ...).
``loss_augmented_decode(w, x, y)``
    ``argmax_y' w . Phi(x, y') + loss(y, y')``, the most violated constraint
    of the structural SVM with margin rescaling.  It must be an exact argmax:
    the learners check that what it returns scores at least as high as ``y``
    itself and raise a ``ValueError`` otherwise.
``loss(y, y_hat)``
    ``Delta(y, y_hat) >= 0``, zero if and only if the two are equal.

Optional members, with generic defaults here:

``check_output(x, y)``
    Raise ``ValueError`` for an output that is not valid for ``x`` (a class
    with no description, a path that is not in the tree, ...).  Default:
    check that ``joint_feature(x, y)`` is well formed.
``slack_rescaled_decode(w, x, y)``
    ``argmax_y' loss(y, y') (1 + w . Phi(x, y') - w . Phi(x, y))``, needed only
    by ``StructuredSVM(rescaling="slack")``.
``batch_inputs(X)`` and the ``batch_*`` methods
    Whole-data-set versions of the methods above.  The defaults loop over the
    examples and call the per-example methods; a structure whose examples can
    be processed as one matrix (multi-class: one sparse matrix product scores
    every class of every example) overrides them as a **fast path**.  A fast
    path must give the same results as these defaults; the tests check this
    for the structures of linclass.

Writing a new problem in Python means subclassing :class:`Structure` and
implementing the four required members; the learners then work unchanged.

References
----------
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005.
M. Collins. Discriminative training methods for hidden Markov models: theory
and experiments with perceptron algorithms. EMNLP 2002.
"""
import numbers

import numpy as np

__all__ = ["Structure", "check_joint_feature"]


def check_joint_feature(structure, indices, values, where="joint_feature"):
    """Validate a sparse joint feature vector returned by a structure.

    Returns ``(indices, values)`` as int64/float64 arrays; raises
    ``ValueError`` naming the structure when the dimension, the lengths or the
    values are wrong.
    """
    name = type(structure).__name__
    indices = np.asarray(indices)
    values = np.asarray(values, dtype=np.float64)
    if indices.ndim != 1 or values.ndim != 1 or indices.shape != values.shape:
        raise ValueError("%s.%s must return two 1-D arrays of equal length "
                         "(indices, values), got shapes %r and %r"
                         % (name, where, indices.shape, values.shape))
    if indices.size and indices.dtype.kind not in "iu":
        raise ValueError("%s.%s returned indices of dtype %s; integers are required"
                         % (name, where, indices.dtype))
    indices = indices.astype(np.int64, copy=False)
    n_features = structure.n_features
    if indices.size and (indices.min() < 0 or indices.max() >= n_features):
        bad = indices[(indices < 0) | (indices >= n_features)][0]
        raise ValueError("%s.%s returned feature index %d, outside the joint "
                         "feature space [0, %d) given by n_features"
                         % (name, where, bad, n_features))
    if values.size and not np.isfinite(values).all():
        raise ValueError("%s.%s returned NaN or infinite values" % (name, where))
    return indices, values


def _n_samples(X):
    return X.shape[0] if hasattr(X, "shape") and not isinstance(X, list) else len(X)


class Structure:
    """Abstract base of structured prediction problems (see the module docs).

    Subclasses set ``n_features`` and implement :meth:`joint_feature`,
    :meth:`decode`, :meth:`loss_augmented_decode` and :meth:`loss`.
    """

    n_features = None

    # -- the required protocol ---------------------------------------------
    def joint_feature(self, x, y):
        """``Phi(x, y)`` as ``(indices int64, values float64)``."""
        raise NotImplementedError("%s must implement joint_feature(x, y)"
                                  % type(self).__name__)

    def decode(self, w, x):
        """``argmax_y w . Phi(x, y)``."""
        raise NotImplementedError("%s must implement decode(w, x)" % type(self).__name__)

    def loss_augmented_decode(self, w, x, y):
        """``argmax_y' w . Phi(x, y') + loss(y, y')``."""
        raise NotImplementedError("%s must implement loss_augmented_decode(w, x, y)"
                                  % type(self).__name__)

    def loss(self, y, y_hat):
        """``Delta(y, y_hat) >= 0``, zero iff equal."""
        raise NotImplementedError("%s must implement loss(y, y_hat)" % type(self).__name__)

    # -- optional, with defaults -------------------------------------------
    def check_output(self, x, y):
        """Raise ``ValueError`` if ``y`` is not a valid output for ``x``.

        The default checks that ``joint_feature(x, y)`` is well formed.
        """
        check_joint_feature(self, *self.joint_feature(x, y))

    def slack_rescaled_decode(self, w, x, y):
        """``argmax_y' loss(y, y') * (1 + w.Phi(x, y') - w.Phi(x, y))``."""
        raise NotImplementedError(
            "%s does not implement slack_rescaled_decode(w, x, y), which "
            "StructuredSVM(rescaling='slack') needs; use rescaling='margin'"
            % type(self).__name__)

    def score(self, w, x, y):
        """``w . Phi(x, y)``."""
        idx, val = self.joint_feature(x, y)
        return float(np.dot(np.asarray(w)[np.asarray(idx, dtype=np.int64)], val))

    # -- batched versions (fast paths override these) -----------------------
    def batch_inputs(self, X):
        """The container the ``batch_*`` methods take (default: a list)."""
        return X if isinstance(X, list) else list(X)

    def batch_decode(self, w, X):
        """``[decode(w, x) for x in X]``."""
        return [self.decode(w, X[i]) for i in range(_n_samples(X))]

    def batch_loss_augmented_decode(self, w, X, Y):
        """``[loss_augmented_decode(w, x, y) for x, y in zip(X, Y)]``."""
        return [self.loss_augmented_decode(w, X[i], Y[i]) for i in range(_n_samples(X))]

    def batch_slack_rescaled_decode(self, w, X, Y):
        """``[slack_rescaled_decode(w, x, y) for x, y in zip(X, Y)]``."""
        return [self.slack_rescaled_decode(w, X[i], Y[i]) for i in range(_n_samples(X))]

    def batch_loss(self, Y, Y_hat):
        """``loss`` of every pair, as a float64 array."""
        return np.array([float(self.loss(y, yh)) for y, yh in zip(Y, Y_hat)], dtype=np.float64)

    def batch_score(self, w, X, Y_lists):
        """Scores ``w . Phi(X[i], Y_lists[j][i])`` as an array (len(Y_lists), n)."""
        w = np.asarray(w, dtype=np.float64)
        n = _n_samples(X)
        out = np.empty((len(Y_lists), n))
        for j, Y in enumerate(Y_lists):
            for i in range(n):
                idx, val = self.joint_feature(X[i], Y[i])
                out[j, i] = np.dot(w[np.asarray(idx, dtype=np.int64)], val)
        return out

    def batch_joint_feature(self, X, Y_lists, weights):
        """``sum_j sum_i weights[j, i] * Phi(X[i], Y_lists[j][i])`` as a dense vector."""
        out = np.zeros(self.n_features)
        n = _n_samples(X)
        weights = np.asarray(weights, dtype=np.float64).reshape(len(Y_lists), n)
        for j, Y in enumerate(Y_lists):
            for i in range(n):
                if weights[j, i] != 0.0:
                    idx, val = check_joint_feature(self, *self.joint_feature(X[i], Y[i]))
                    np.add.at(out, idx, weights[j, i] * val)
        return out

    def has_fast_path(self):
        """True when the subclass overrides the batched joint features and scores."""
        cls = type(self)
        return (cls.batch_score is not Structure.batch_score
                and cls.batch_joint_feature is not Structure.batch_joint_feature)


def _check_n_features(structure):
    n = getattr(structure, "n_features", None)
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, np.integer)) or n < 1:
        raise ValueError("%s.n_features must be a positive integer, got %r"
                         % (type(structure).__name__, n))
    return int(n)
