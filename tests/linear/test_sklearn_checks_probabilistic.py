"""scikit-learn's estimator checks on LogisticRegression with L1 (the defaults of
every flat estimator: tests/test_sklearn_estimator_checks.py)."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from linclass.linear.logistic import LogisticRegression  # noqa: E402
from linclass.utils import expected_failed_checks  # noqa: E402


# solver="tron" is binary-only by design (a clear ValueError for more classes,
# which most checks use); it is compared with L-BFGS and liblinear in
# test_logistic.py instead.
@parametrize_with_checks([LogisticRegression(penalty="l1", C=10.0, tol=1e-6)],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
