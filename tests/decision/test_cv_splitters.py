"""The decision wrappers take scikit-learn splitters and (train, test) index pairs
as ``cv``, and LogisticRegression as their default estimator."""
import warnings

import numpy as np
import pytest

import linclass
from linclass.decision._common import stratified_folds
from linclass.exceptions import DataConversionWarning


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 4)) + y[:, None]
    return X, y


@pytest.mark.parametrize("cls", ["CalibratedClassifier", "ThresholdTuner"])
def test_index_pairs_of_the_internal_folds_give_the_same_model(cls):
    X, y = _data()
    fold = stratified_folds(y.astype(np.int32), 3, 0)
    pairs = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(3)]
    make = getattr(linclass, cls)
    by_int = make(linclass.LogisticRegression(), cv=3, random_state=0).fit(X, y)
    by_pairs = make(linclass.LogisticRegression(), cv=pairs).fit(X, y)
    by_masks = make(linclass.LogisticRegression(),
                    cv=iter([(fold != f, fold == f) for f in range(3)])).fit(X, y)
    for other in (by_pairs, by_masks):
        np.testing.assert_allclose(other.predict_proba(X), by_int.predict_proba(X),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(other.predict(X), by_int.predict(X))


def test_a_scikit_learn_splitter_is_used_through_its_split():
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = _data()
    splitter = model_selection.KFold(4, shuffle=True, random_state=1)
    pairs = list(splitter.split(X, y))
    a = linclass.CalibratedClassifier(cv=splitter).fit(X, y)
    b = linclass.CalibratedClassifier(cv=pairs).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("cv, match", [
    ([(np.arange(10), np.arange(10, 95))], "outside"),
    ([(np.arange(10), np.array([], dtype=int))], "none to hold out"),
    ([(np.arange(10),)], "not a \\(train, test\\) pair"),
    ([], "no \\(train, test\\) split"),
    ("folds", "cv must be"),
    ([(np.ones(5, dtype=bool), np.ones(5, dtype=bool))], "boolean mask needs 90"),
])
def test_bad_splits_are_named(cv, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        linclass.CalibratedClassifier(cv=cv).fit(X, y)


@pytest.mark.parametrize("cls", ["CalibratedClassifier", "ThresholdTuner",
                                 "CostSensitiveClassifier", "PriorShiftClassifier",
                                 "RejectOption"])
def test_the_default_estimator_is_logistic_regression(cls):
    X, y = _data()
    seeded = {"random_state": 0} if cls in ("CalibratedClassifier", "ThresholdTuner") else {}
    default = getattr(linclass, cls)(**seeded).fit(X, y)
    explicit = getattr(linclass, cls)(linclass.LogisticRegression(), **seeded).fit(X, y)
    np.testing.assert_array_equal(default.predict(X), explicit.predict(X))
    assert default.estimator is None                 # the parameter is left as given
    with pytest.raises(ValueError, match="prefit needs the fitted estimator"):
        if cls in ("CalibratedClassifier", "ThresholdTuner"):
            getattr(linclass, cls)(cv="prefit").fit(X, y)
        else:
            getattr(linclass, cls)(prefit=True).fit(X, y)


def test_a_column_vector_y_warns_with_scikit_learns_class():
    exceptions = pytest.importorskip("sklearn.exceptions")
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = linclass.LogisticRegression().fit(X, y[:, None])
    kinds = [w.category for w in caught]
    assert any(issubclass(k, exceptions.DataConversionWarning) for k in kinds)
    assert any(issubclass(k, DataConversionWarning) for k in kinds)
    np.testing.assert_array_equal(a.predict(X), linclass.LogisticRegression().fit(X, y).predict(X))
