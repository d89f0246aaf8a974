"""scikit-learn's estimator checks on the decision meta-estimators, GaussianNB and the
representer-theorem kernel models."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from linclass.decision import (CalibratedClassifier, CostSensitiveClassifier,  # noqa: E402
                               PosteriorCombiner, PriorShiftClassifier, RejectOption,
                               ThresholdTuner)
from linclass.kernels import (KernelLogisticRegression, KernelRidge,  # noqa: E402
                              KernelRidgeClassifier)
from linclass.linear import GaussianNB, LogisticRegression  # noqa: E402

_COMMON = {"check_supervised_y_2d": "linclass accepts a column-vector y without "
                                    "scikit-learn's DataConversionWarning"}

ESTIMATORS = [
    GaussianNB(),
    KernelRidge(),
    KernelRidgeClassifier(),
    KernelLogisticRegression(),
    CostSensitiveClassifier(LogisticRegression()),
    RejectOption(LogisticRegression()),
    ThresholdTuner(LogisticRegression(), cv=3, random_state=0),
    PriorShiftClassifier(LogisticRegression()),
    CalibratedClassifier(LogisticRegression(), cv=3, random_state=0),
    PosteriorCombiner([LogisticRegression(), LogisticRegression(C=0.1)], rule="product"),
]


def _expected_failed_checks(estimator):
    expected = dict(_COMMON)
    if isinstance(estimator, (ThresholdTuner, CalibratedClassifier)):
        reason = ("the calibration / threshold data come from a stratified split of the "
                  "samples: weights and repeated rows change the folds, so the weighted "
                  "and the repeated fits see different held-out sets")
        expected["check_sample_weight_equivalence_on_dense_data"] = reason
        expected["check_sample_weight_equivalence_on_sparse_data"] = reason
    if isinstance(estimator, ThresholdTuner):
        reason = ("by design the tuned threshold moves predict away from the argmax of the "
                  "(unchanged) posteriors that predict_proba returns")
        expected["check_classifiers_train"] = reason
        expected["check_classifiers_train(readonly_memmap=True)"] = reason
        expected["check_classifiers_train(readonly_memmap=True,X_dtype=float32)"] = reason
    return expected


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
