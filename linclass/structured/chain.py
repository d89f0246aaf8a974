"""Block-coordinate Frank--Wolfe state of the first-order chain structural SVM
(:meth:`linclass.sequence.SequenceStructure.bcfw_state` for order 1 and the
Hamming loss; the tagger's ``trainer="ssvm"``), whole passes in
:func:`linclass._core._bcfw.chain_pass`.

The kernel keeps each sentence's dual block in marginal form and exploits that
a token's direction is non-zero only on the gold label and the labels the
decoder ever chose for it (see ``_core/_bcfw.pyx``); a pass costs about one
scoring pass plus one Viterbi pass over the data.  Imported by
:mod:`linclass.sequence.tagger` on use (not by :mod:`linclass.structured`'s
``__init__``).
"""
import numpy as np

from .._core import _bcfw

__all__ = ["ChainBCFW", "fit_chain_ssvm"]


class ChainBCFW:
    """Per-sentence BCFW state; the protocol of ``Structure.bcfw_state``:
    ``run_pass(order) -> sum of block gaps`` and ``iterate(average) -> (w, l)``."""

    def __init__(self, structure, X, Y, C, average):
        gold = X.concat(Y)
        n_tokens = int(X.offsets[len(X.offsets) - 1])
        if len(gold) != n_tokens:
            raise ValueError("%d labels for %d tokens" % (len(gold), n_tokens))
        if X.data.size and not np.isfinite(X.data).all():
            raise ValueError("token feature values contain NaN or infinity")
        K = structure.n_labels
        self.structure, self.X, self.gold = structure, X, gold
        self.C = float(C)
        self.average = bool(average)
        self.w = np.zeros(structure.n_features)
        self.v = np.zeros(structure.n_features if average else 0)
        self.token_state = np.zeros((n_tokens, K))
        self.sent_state = np.zeros((len(X), K * K + 2 * K))
        self.l = np.zeros(len(X))
        self.step = 0.0
        self.lv = 0.0

    def run_pass(self, order):
        X = self.X
        gap, self.step, self.lv = _bcfw.chain_pass(
            self.w, self.v, self.structure.n_labels, X.indices, X.data, X.indptr,
            X.offsets, self.gold, self.token_state, self.sent_state, self.l,
            np.ascontiguousarray(order, dtype=np.int64), C=self.C,
            loss_weight=self.structure.loss_weight, average=self.average, step=self.step,
            lv=self.lv)
        return gap

    def hinge(self, w):
        """Sum of the structured hinge losses at ``w`` (one scoring and Viterbi pass)."""
        X = self.X
        return _bcfw.chain_hinge(np.ascontiguousarray(w, dtype=np.float64),
                                 self.structure.n_labels, X.indices, X.data, X.indptr,
                                 X.offsets, self.gold,
                                 loss_weight=self.structure.loss_weight)

    def iterate(self, average):
        """The last iterate, or the weighted average (``rho_k = k``), and its
        dual linear part."""
        if not average or self.step == 0:
            return self.w, float(self.l.sum())
        R = 0.5 * self.step * (self.step + 1.0)
        return self.w - self.v / R, float(self.l.sum()) - self.lv / R


def fit_chain_ssvm(structure, sentences, Ys, *, C, tol, max_passes, random_state=None,
                   verbose=0):
    """Train the tagger's structural SVM by BCFW with weighted averaging.

    Stops when the duality gap of the averaged iterate is at most
    ``tol * C * n_tokens`` (``P(w) - P* <= tol`` hinge-loss units per
    training token), or after ``max_passes`` passes with a
    ``ConvergenceWarning``.  Returns ``(w, history, converged)``.
    """
    import warnings

    from ..exceptions import ConvergenceWarning
    from .learners import StructuredSVM, _prepare

    svm = StructuredSVM(structure, C=C, tol=tol, method="bcfw", max_iter=max_passes,
                        average=True, random_state=random_state, verbose=verbose)
    svm._check_params()
    n_features, Xb, Y, n = _prepare(structure, sentences, Ys)
    n_tokens = int(sum(len(y) for y in Y))
    scale = float(C) * max(n_tokens, 1)
    w, converged, history = svm._fit_bcfw(Xb, Y, n, n_features, gap_scale=scale)
    if not converged:
        last = history[len(history) - 1]
        warnings.warn("SequenceTagger(trainer='ssvm') did not converge in %d passes "
                      "(duality gap %.3g per training token > tol=%g); increase max_iter "
                      "or tol" % (max_passes, last["gap"] / scale, tol), ConvergenceWarning)
    return np.array(w, dtype=np.float64), history, converged
