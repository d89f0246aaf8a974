"""One-vs-rest and one-vs-one around any binary classifier (#35): estimators
whose ``n_iter_`` is an array (SVC, LogisticRegression), saving and loading
the fitted ensemble, non-finite scores of a wrapped model."""
import warnings

import numpy as np
import pytest

import linclass
from linclass.linear import OneVsOneClassifier, OneVsRestClassifier

def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(60) % 3
    X = rng.standard_normal((60, 4)) + 2.0 * y[:, None]
    return X, y


_INNER = [
    pytest.param(lambda: linclass.LinearSVC(random_state=0), id="LinearSVC"),
    pytest.param(lambda: linclass.LogisticRegression(), id="LogisticRegression"),
    pytest.param(lambda: linclass.SVC(), id="SVC"),
    pytest.param(lambda: linclass.KernelPerceptron(random_state=0, max_iter=3),
                 id="KernelPerceptron"),
]


@pytest.mark.parametrize("make_inner", _INNER)
@pytest.mark.parametrize("meta", [OneVsRestClassifier, OneVsOneClassifier])
def test_meta_estimators_fit_any_binary_classifier(meta, make_inner):
    """n_iter_ of the wrapped estimators may be arrays (numpy 2.4 refuses
    ``int()`` of one): the meta-estimator's n_iter_ is their largest entry."""
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = meta(make_inner()).fit(X, y)
    assert model.score(X, y) > 0.8
    if meta is OneVsRestClassifier:
        expected = max(int(np.max(np.asarray(getattr(e, "n_iter_", 0))))
                       for e in model.estimators_)
        assert isinstance(model.n_iter_, int) and model.n_iter_ == expected


def _round_trip(meta, make_inner, tmp_path):
    X, y = _data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = meta(make_inner()).fit(X, y)
    path = model.save(tmp_path / "meta.npz")
    loaded = linclass.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert type(loaded.estimator) is type(model.estimator)


@pytest.mark.parametrize("meta", [OneVsRestClassifier, OneVsOneClassifier])
@pytest.mark.parametrize("make_inner", _INNER)
def test_meta_estimators_save_and_load(meta, make_inner, tmp_path):
    """OneVsOneClassifier(SVC()) could not be saved (#35): the unfitted template
    is a parameter, the fitted binary models are state; both round-trip."""
    _round_trip(meta, make_inner, tmp_path)


@pytest.mark.parametrize("meta", [OneVsRestClassifier, OneVsOneClassifier])
def test_non_finite_scores_of_a_wrapped_model_raise(meta):
    X, y = _data()
    model = meta(linclass.LinearSVC(random_state=0)).fit(X, y)
    for est in model.estimators_:
        est.coef_ = est.coef_ * 1e6 + np.sign(est.coef_) * 10.0
    huge = np.where(np.arange(8).reshape(2, 4) % 2, 1e308, -1.7e308)
    with pytest.raises(ValueError, match="LinearSVC: .*not finite"):
        model.predict(huge)
