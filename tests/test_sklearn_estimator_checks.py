"""scikit-learn's ``check_estimator`` on every public flat estimator at its
defaults: every check passes except those ``linclass.utils.expected_failed_checks``
declares (each with a reason, at most five per estimator)."""
import inspect

import pytest

import linclass
from linclass._registry import PUBLIC_MODELS
from linclass.utils import expected_failed_checks

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

_NOT_FLAT = ("sequence", "structured", "parsing", "alignment", "graph", "features")

# what a user must give (no default): the wrapped estimators
_REQUIRED = {
    "OneVsRestClassifier": dict(estimator=linclass.LinearSVC()),
    "OneVsOneClassifier": dict(estimator=linclass.LinearSVC()),
    "PosteriorCombiner": dict(estimators=[linclass.LogisticRegression(),
                                          linclass.LogisticRegression(C=0.1)]),
}


def flat_estimator_names():
    return sorted(name for name, family in PUBLIC_MODELS.items()
                  if family not in _NOT_FLAT and hasattr(getattr(linclass, name), "fit"))


def at_defaults(name):
    return getattr(linclass, name)(**_REQUIRED.get(name, {}))


def test_only_the_wrapped_estimators_are_given():
    # everything else runs at its default (PosteriorCombiner's estimators=None
    # is a clear error at fit: there is no natural default ensemble)
    for name in flat_estimator_names():
        sig = inspect.signature(getattr(linclass, name))
        required = {p.name for p in sig.parameters.values() if p.default is p.empty}
        assert required <= set(_REQUIRED.get(name, {})), name
    assert len(flat_estimator_names()) >= 33


@parametrize_with_checks([at_defaults(name) for name in flat_estimator_names()],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_check_at_defaults(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", flat_estimator_names())
def test_declared_failures_are_few_named_and_real(name):
    from sklearn.utils import estimator_checks
    estimator = at_defaults(name)
    declared = expected_failed_checks(estimator)
    assert len(declared) <= 5
    for check, reason in declared.items():
        assert callable(getattr(estimator_checks, check)), check
        assert isinstance(reason, str) and len(reason) > 20


def test_meta_estimators_inherit_the_weight_checks_of_what_they_wrap():
    wrapped = linclass.CostSensitiveClassifier(linclass.Perceptron())
    declared = expected_failed_checks(wrapped)
    assert "Perceptron" in declared["check_sample_weight_equivalence_on_dense_data"]
    assert expected_failed_checks(linclass.CostSensitiveClassifier()) == {}


def test_expected_failures_follow_the_parameters():
    assert expected_failed_checks(linclass.LogisticRegression()) == {}
    assert set(expected_failed_checks(linclass.LogisticRegression(penalty="l1"))) == {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data"}
    assert "check_fit2d_1feature" not in expected_failed_checks(
        linclass.CalibratedClassifier(cv=3))
