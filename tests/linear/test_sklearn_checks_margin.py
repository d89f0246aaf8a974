"""scikit-learn's estimator checks on the margin-based classifiers with settings other
than their defaults (the defaults: tests/test_sklearn_estimator_checks.py)."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from linclass.linear.least_squares import LassoClassifier  # noqa: E402
from linclass.linear.multiclass import (CrammerSingerSVC, OneVsOneClassifier,
                                         OneVsRestClassifier, WestonWatkinsSVC)  # noqa: E402
from linclass.linear.perceptron import Perceptron  # noqa: E402
from linclass.linear.svm import LinearSVC  # noqa: E402
from linclass.utils import expected_failed_checks  # noqa: E402

ESTIMATORS = [
    Perceptron(average=True, max_iter=20, random_state=0),
    Perceptron(voted=True, max_iter=5, random_state=0),
    # tight tolerances: the sample-weight equivalence checks compare two
    # solutions of the same strictly convex problem to rtol=1e-7
    LinearSVC(random_state=0, tol=1e-12, max_iter=20000),
    LinearSVC(solver="pegasos", random_state=0, max_iter=100),
    LinearSVC(penalty="l1", dual=False, random_state=0, tol=1e-12, max_iter=20000),
    CrammerSingerSVC(random_state=0, tol=1e-12, max_iter=20000),
    WestonWatkinsSVC(random_state=0, tol=1e-12, max_iter=20000),
    OneVsRestClassifier(LinearSVC(random_state=0, tol=1e-12, max_iter=20000)),
    OneVsOneClassifier(LinearSVC(random_state=0, tol=1e-12, max_iter=20000)),
    LassoClassifier(alpha=0.001),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
