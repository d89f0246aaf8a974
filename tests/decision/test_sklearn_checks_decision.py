"""scikit-learn's estimator checks on the decision meta-estimators with settings
other than their defaults (the defaults: tests/test_sklearn_estimator_checks.py)."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from linclass.decision import (CalibratedClassifier, PosteriorCombiner,  # noqa: E402
                               ThresholdTuner)
from linclass.linear import GaussianNB, LogisticRegression  # noqa: E402
from linclass.utils import expected_failed_checks  # noqa: E402

ESTIMATORS = [
    ThresholdTuner(LogisticRegression(), cv=3, random_state=0),
    CalibratedClassifier(LogisticRegression(), cv=3, random_state=0),
    CalibratedClassifier(LogisticRegression(), method="isotonic", cv=0.3, random_state=0),
    PosteriorCombiner([LogisticRegression(), GaussianNB()], rule="product"),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
