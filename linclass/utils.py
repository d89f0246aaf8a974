"""Utilities for tools that inspect linclass estimators.

:func:`expected_failed_checks` declares, for scikit-learn's estimator checks,
the few checks a linclass estimator fails on purpose and why::

    from sklearn.utils.estimator_checks import check_estimator
    from linclass.utils import expected_failed_checks

    model = linclass.LinearSVC()
    check_estimator(model, expected_failed_checks=expected_failed_checks(model))

scikit-learn (1.6 and later) has no estimator tag for this; its
``check_estimator`` and ``parametrize_with_checks`` take the mapping as an
argument.  Every other check passes.
"""

__all__ = ["expected_failed_checks"]

_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")

_ONLINE = ("online learner: a repeated example is visited twice, at different moments, "
           "while a weight of 2 doubles one step; the two fits differ by design")

_TOLERANCE = ("the solver stops at its tolerance tol, and a weighted problem and its "
              "repeated-rows twin are different duals of the same primal: their approximate "
              "solutions differ by more than the check's 1e-7 (they agree with tol=1e-12, "
              "tested in linclass's suite; scikit-learn lists its own SVC as failing this)")

_EM = ("EM from a random start: the starting responsibilities are drawn per row, so a "
       "repeated row and a weight of 2 start (and end) in different local optima")

_PAIR_WEIGHTS = ("pair (i, j) weighs (s_i + s_j) / 2 (documented): a weight of 2 is not "
                 "two copies of a document, whose pairs would weigh s_i s_j")

_FOLDS_1FEATURE = ("the check's 10 samples cannot be split into the default 5 stratified "
                   "folds: the error names the folds, not the single feature")


def _own(estimator):
    """Declared failures of ``estimator`` itself (not of what it wraps)."""
    # imported here: linclass.utils must not import every model family on import
    from . import (CalibratedClassifier, CrammerSingerSVC, KernelMultiClassSVM,
                   KernelPerceptron, LinearSVC, LogisticRegression, MixtureNB, Perceptron,
                   RankSVM, SGDClassifier, SVC, ThresholdTuner, WestonWatkinsSVC)
    expected = {}
    if isinstance(estimator, (Perceptron, SGDClassifier)) or (
            isinstance(estimator, LinearSVC) and getattr(estimator, "solver", None) == "pegasos"):
        expected.update(dict.fromkeys(_WEIGHT_CHECKS, _ONLINE))
        if isinstance(estimator, LinearSVC):
            expected["check_class_weight_classifiers"] = (
                "stochastic sub-gradient steps scale with this check's class weights "
                "1000 : 0.0001; Pegasos stays far from the optimum that "
                "LinearSVC(solver='dual_cd') reaches (and passes)")
    elif isinstance(estimator, KernelPerceptron):
        reason = ("a perceptron step has no weighted form: unequal sample weights raise a "
                  "ValueError (a weight of 0 leaves a sample out)")
        expected.update(dict.fromkeys(_WEIGHT_CHECKS, reason))
        expected["check_sample_weights_not_overwritten"] = reason
    elif isinstance(estimator, (LinearSVC, CrammerSingerSVC, WestonWatkinsSVC, SVC,
                                KernelMultiClassSVM)):
        tol = getattr(estimator, "tol", None)
        if tol is None or not tol <= 1e-10:      # None: the solver's default tolerance
            expected.update(dict.fromkeys(_WEIGHT_CHECKS, _TOLERANCE))
    elif isinstance(estimator, LogisticRegression) and \
            getattr(estimator, "penalty", None) == "l1":
        expected.update(dict.fromkeys(_WEIGHT_CHECKS, (
            "L1 by bound-constrained L-BFGS-B stops ~1e-6 (relative) from the optimum on "
            "this check's data; the check demands 1e-7")))
    elif isinstance(estimator, MixtureNB):
        expected.update(dict.fromkeys(_WEIGHT_CHECKS, _EM))
    elif isinstance(estimator, RankSVM):
        expected.update(dict.fromkeys(_WEIGHT_CHECKS, _PAIR_WEIGHTS))
    if isinstance(estimator, ThresholdTuner):
        expected["check_classifiers_train"] = (
            "by design the tuned threshold moves predict away from the argmax of the "
            "(unchanged) posteriors that predict_proba returns")
    if isinstance(estimator, (ThresholdTuner, CalibratedClassifier)) and \
            getattr(estimator, "cv", None) == 5:
        expected["check_fit2d_1feature"] = _FOLDS_1FEATURE
    return expected


def expected_failed_checks(estimator):
    """The scikit-learn estimator checks ``estimator`` fails by design.

    Parameters
    ----------
    estimator : a linclass estimator instance

    Returns
    -------
    dict
        ``{check_name: reason}``, at most five entries; pass it as
        ``check_estimator(estimator, expected_failed_checks=...)`` or
        ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)``.
        A meta-estimator (one-vs-rest, decision wrappers) also declares the
        sample-weight checks that its wrapped estimators fail.
    """
    expected = _own(estimator)
    inner = [getattr(estimator, "estimator", None)]
    inner += list(getattr(estimator, "estimators", None) or [])
    for member in inner:
        if member is not None and hasattr(member, "get_params"):
            for name, reason in expected_failed_checks(member).items():
                if name in _WEIGHT_CHECKS:
                    expected.setdefault(name, "the wrapped %s: %s"
                                        % (type(member).__name__, reason))
    return expected
