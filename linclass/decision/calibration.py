"""Calibration of classifier scores into probabilities: Platt's sigmoid and isotonic regression.

:class:`CalibratedClassifier` maps the scores of any classifier
(``decision_function``, else ``predict_proba``) to probabilities fitted on
data the classifier did not train on:

* ``method="sigmoid"`` -- Platt (2000): ``P(1 | s) = 1 / (1 + exp(A s + B))``
  fitted by maximum likelihood on the regularised targets ``(N+ + 1) / (N+ +
  2)`` and ``1 / (N- + 2)``, by Newton's method with backtracking as Lin, Lin &
  Weng (2007) give it (:func:`fit_platt`).  Unlike the sigmoid inside
  :class:`~linclass.SVC`, which fixes ``B = 0`` so that its probabilities agree
  with its predictions, the offset is fitted here.
* ``method="isotonic"`` -- the monotone step function of least squared error
  (pool-adjacent-violators; Zadrozny & Elkan 2002), interpolated linearly
  between the fitted points (:func:`fit_isotonic`).

Several classes are calibrated one-vs-rest and the row is normalised
(Zadrozny & Elkan 2002).  Data for the calibration: out-of-fold scores of a
``cv``-fold stratified cross-validation (the classifier is then refitted on
everything), a held-out share, or -- ``cv="prefit"`` -- the data passed to
``fit`` for an already fitted classifier.

References
----------
Platt, J. (2000). Probabilistic outputs for support vector machines and
comparisons to regularized likelihood methods. Advances in Large Margin
Classifiers, MIT Press.
Lin, H.-T., Lin, C.-J. & Weng, R. C. (2007). A note on Platt's probabilistic
outputs for support vector machines. Machine Learning 68, 267-276.
Zadrozny, B. & Elkan, C. (2002). Transforming classifier scores into accurate
multiclass probability estimates. KDD.
Niculescu-Mizil, A. & Caruana, R. (2005). Predicting good probabilities with
supervised learning. ICML.
"""
import numpy as np

from .._validation import (check_classification_target, check_is_fitted, check_sample_weight,
                           check_state_array)
from ..base import BaseEstimator
from ._common import (MetaClassifierMixin, as_rows, check_cv, check_estimator_protocol,
                      cv_splits, fit_clone, holdout_split, scores_matrix, take_rows)

__all__ = ["CalibratedClassifier", "fit_platt", "fit_isotonic"]


def fit_platt(scores, positive, sample_weight=None, max_iter=100):
    """Platt's sigmoid ``P(1 | s) = 1 / (1 + exp(A s + B))``: returns ``(A, B)``.

    Newton's method with backtracking line search on the cross-entropy to the
    regularised targets (Lin, Lin & Weng 2007, algorithm 1).
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    pos = np.asarray(positive, dtype=bool).ravel()
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, float)
    n_pos, n_neg = w[pos].sum(), w[~pos].sum()
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def objective(A, B):
        z = A * s + B
        return np.dot(w, np.logaddexp(0.0, z) - (1.0 - t) * z)

    A, B = 0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))
    value = objective(A, B)
    for _ in range(max_iter):
        z = A * s + B
        q = 0.5 * (1.0 + np.tanh(0.5 * z))       # 1 - P(1 | s) = sigmoid(z), stable
        d1 = w * (q - (1.0 - t))
        d2 = w * q * (1.0 - q)
        gA, gB = np.dot(d1, s), d1.sum()
        if abs(gA) < 1e-5 and abs(gB) < 1e-5:
            break
        hAA = np.dot(d2, s * s) + 1e-12
        hAB = np.dot(d2, s)
        hBB = d2.sum() + 1e-12
        det = hAA * hBB - hAB * hAB
        dA = -(hBB * gA - hAB * gB) / det
        dB = -(-hAB * gA + hAA * gB) / det
        gd = gA * dA + gB * dB
        step = 1.0
        while step >= 1e-10:
            new_value = objective(A + step * dA, B + step * dB)
            if new_value < value + 1e-4 * step * gd:
                break
            step *= 0.5
        else:
            break
        A, B, value = A + step * dA, B + step * dB, new_value
    return float(A), float(B)


def fit_isotonic(scores, targets, sample_weight=None):
    """Non-decreasing least-squares fit of ``targets`` on ``scores`` (PAV).

    Returns ``(x, y)``: the distinct scores and the fitted values, to be
    interpolated with ``np.interp`` (constant beyond the ends).
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    t = np.asarray(targets, dtype=np.float64).ravel()
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, float).ravel()
    keep = w > 0
    s, t, w = s[keep], t[keep], w[keep]
    order = np.argsort(s, kind="mergesort")
    s, t, w = s[order], t[order], w[order]
    x, start = np.unique(s, return_index=True)          # pool equal scores first
    wsum = np.add.reduceat(w, start)
    mean = np.add.reduceat(w * t, start) / wsum
    # pool adjacent violators on the blocks
    vals, weights, counts = [], [], []
    for m, ww in zip(mean.tolist(), wsum.tolist()):
        vals.append(m)
        weights.append(ww)
        counts.append(1)
        while len(vals) > 1 and vals[len(vals) - 2] > vals[len(vals) - 1]:
            w2 = weights.pop()
            v2 = vals.pop()
            c2 = counts.pop()
            w1 = weights[len(weights) - 1]
            vals[len(vals) - 1] = (vals[len(vals) - 1] * w1 + v2 * w2) / (w1 + w2)
            weights[len(weights) - 1] = w1 + w2
            counts[len(counts) - 1] += c2
    y = np.repeat(np.array(vals), np.array(counts))
    return x, y


class CalibratedClassifier(MetaClassifierMixin, BaseEstimator):
    """Calibrate any classifier's scores into probabilities (sigmoid or isotonic).

    Parameters
    ----------
    estimator : classifier, default=None (``LogisticRegression()``)
        With ``decision_function`` or ``predict_proba``.
    method : {"sigmoid", "isotonic"}, default="sigmoid"
    cv : int, float, "prefit", splitter or iterable, default=5
        Folds of a stratified cross-validation (out-of-fold scores calibrate,
        then the classifier is refitted on all the data); a held-out share in
        (0, 1); or ``"prefit"`` (``estimator`` is fitted; ``fit`` receives
        the calibration data).  A splitter with ``split(X, y)`` (scikit-learn's
        ``StratifiedKFold``, ...) or ``(train, test)`` index pairs give the
        folds: the held-out scores of every test fold are pooled.
    response : {"auto", "decision_function", "predict_proba"}, default="auto"
    random_state : int, Generator or None

    Attributes
    ----------
    estimator_ : the fitted classifier
    classes_, n_features_in_
    calibrators_ : list, one per calibrated column: ``(A, B)`` arrays for the
        sigmoid, ``(x, y)`` arrays for isotonic
    """

    def __init__(self, estimator=None, method="sigmoid", cv=5, response="auto",
                 random_state=None):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.response = response
        self.random_state = random_state

    def _check_state(self):
        """One calibrator per calibrated column: Platt's (A, B), or the
        increasing knots and values of the isotonic fit (called by
        :func:`linclass.load`)."""
        super()._check_state()
        if "calibrators_" not in vars(self):          # not fitted: nothing to check
            return
        if self.method not in ("sigmoid", "isotonic"):
            raise ValueError("method must be 'sigmoid' or 'isotonic', got %r" % (self.method,))
        k = len(self.classes_)
        calibrators = self.calibrators_
        if not isinstance(calibrators, (list, tuple)) or len(calibrators) != (1 if k == 2 else k):
            raise ValueError("calibrators_ must hold one calibrator per calibrated column")
        for pair in calibrators:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError("each calibrator must be a pair of arrays")
            size = 1 if self.method == "sigmoid" else None
            a = check_state_array(pair[0], "calibrator knots", (size,))
            b = check_state_array(pair[1], "calibrator values", (a.shape[0],))
            if a.shape[0] == 0 or not (np.isfinite(a).all() and np.isfinite(b).all()):
                raise ValueError("calibrators must be non-empty and finite")
            if self.method == "isotonic" and (np.diff(a) < 0).any():
                raise ValueError("isotonic calibrator knots must be increasing")

    def fit(self, X, y, sample_weight=None):
        """Fit the classifier and the calibration map; returns self."""
        inner = self._wrapped()               # estimator, or the default
        check_estimator_protocol(inner, [("decision_function", "predict_proba")],
                                 "CalibratedClassifier")
        if self.method not in ("sigmoid", "isotonic"):
            raise ValueError("method must be 'sigmoid' or 'isotonic', got %r" % (self.method,))
        if self.response not in ("auto", "decision_function", "predict_proba"):
            raise ValueError("response must be 'auto', 'decision_function' or 'predict_proba', "
                             "got %r" % (self.response,))
        cv = check_cv(self.cv)
        X, n = as_rows(X, y)
        classes, codes = check_classification_target(y, n)    # before numpy mixes labels
        y = np.asarray(y)
        sample_weight = check_sample_weight(sample_weight, n)
        self.classes_ = classes
        k = len(classes)
        if cv == "prefit":
            check_is_fitted(inner, "classes_")
            if list(np.asarray(inner.classes_)) != list(classes):
                raise ValueError("the prefit estimator's classes %r differ from those of the "
                                 "calibration data %r" % (list(inner.classes_),
                                                          list(classes)))
            est = inner
            S, truth, w = scores_matrix(est, X, k, self.response), codes, sample_weight
        elif isinstance(cv, float):
            held = holdout_split(codes, cv, self.random_state)
            est = fit_clone(inner, take_rows(X, ~held), y[~held], sample_weight[~held])
            S = scores_matrix(est, take_rows(X, held), k, self.response)
            truth, w = codes[held], sample_weight[held]
        else:
            # out-of-fold scores of every test fold (a splitter's folds may overlap
            # or leave samples out: each held-out score counts once per fold)
            parts = []
            for train, test in cv_splits(cv, codes, X, y, self.random_state):
                part = fit_clone(inner, take_rows(X, train), y[train],
                                 sample_weight[train])
                parts.append((scores_matrix(part, take_rows(X, test), k, self.response),
                              codes[test], sample_weight[test]))
            S, truth, w = (np.concatenate(p) for p in zip(*parts))
            est = fit_clone(inner, X, y, sample_weight)
        columns = [truth == 1] if k == 2 else [truth == c for c in range(k)]
        self.calibrators_ = []
        for j, positive in enumerate(columns):
            if self.method == "sigmoid":
                A, B = fit_platt(S[:, j], positive, w)
                self.calibrators_.append((np.array([A]), np.array([B])))
            else:
                self.calibrators_.append(fit_isotonic(S[:, j], positive, w))
        self.estimator_ = est
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    def _calibrate(self, S):
        out = np.empty_like(S)
        for j, (a, b) in enumerate(self.calibrators_):
            if self.method == "sigmoid":
                z = a[0] * S[:, j] + b[0]
                out[:, j] = 0.5 * (1.0 - np.tanh(0.5 * z))    # 1 / (1 + exp(z))
            else:
                out[:, j] = np.interp(S[:, j], a, b)
        return out

    def predict_proba(self, X):
        """Calibrated probabilities (n_samples, n_classes)."""
        check_is_fitted(self, "calibrators_")
        k = len(self.classes_)
        P = self._calibrate(scores_matrix(self.estimator_, X, k, self.response))
        if k == 2:
            return np.column_stack([1.0 - P[:, 0], P[:, 0]])
        total = P.sum(axis=1, keepdims=True)
        uniform = total[:, 0] <= 0
        P[uniform] = 1.0 / k
        total[uniform] = 1.0
        return P / total

    def decision_function(self, X):
        """Calibrated log odds (two classes) or log probabilities."""
        P = np.clip(self.predict_proba(X), 1e-300, None)
        if P.shape[1] == 2:
            return np.log(P[:, 1]) - np.log(P[:, 0])
        return np.log(P)

    def predict(self, X):
        """The class of highest calibrated probability."""
        scores = self.predict_proba(X)          # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]
