"""scikit-learn's estimator checks on SVC settings other than its defaults (the
defaults: tests/test_sklearn_estimator_checks.py)."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from linclass.kernels.svc import SVC  # noqa: E402
from linclass.utils import expected_failed_checks  # noqa: E402


@parametrize_with_checks([SVC(kernel="linear", multi_class="ovr")],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
