"""Issue #35 for RankSVM: weights that leave no preference to learn raise
(they trained a null model), overflowing data raises naming the model."""
import numpy as np
import pytest

from linclass.exceptions import NotFittedError
from linclass.ranking import RankSVM


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, size=40)
    return X, y, np.repeat(np.arange(4), 10)


@pytest.mark.parametrize("solver, loss", [("newton", "squared_hinge"), ("pairs", "hinge")])
def test_all_zero_sample_weight_raises(solver, loss):
    X, y, qid = _data()
    with pytest.raises(ValueError, match="zero"):
        RankSVM(solver=solver, loss=loss).fit(X, y, qid=qid, sample_weight=np.zeros(40))


@pytest.mark.parametrize("solver, loss", [("newton", "squared_hinge"), ("pairs", "hinge")])
def test_weight_only_outside_preference_pairs_raises(solver, loss):
    X, y, qid = _data()
    y[:10] = 1                                  # query 0 has one grade: no pair
    weight = np.zeros(40)
    weight[:10] = 1.0                           # only its documents weigh
    with pytest.raises(ValueError, match="no preference to learn"):
        RankSVM(solver=solver, loss=loss).fit(X, y, qid=qid, sample_weight=weight)
    weight[10] = 1.0                            # one document of a ranked query: fine
    model = RankSVM(solver=solver, loss=loss).fit(X, y, qid=qid, sample_weight=weight)
    assert np.any(model.coef_ != 0)


def test_fit_pairs_refuses_all_zero_pair_weights():
    X, _, _ = _data()
    with pytest.raises(ValueError, match="zero"):
        RankSVM().fit_pairs(X, np.array([[0, 1], [2, 3]]), pair_weight=[0.0, 0.0])


def test_overflow_raises_naming_the_model():
    X, y, qid = _data()
    with pytest.raises(ValueError, match="RankSVM"):
        RankSVM().fit(X * 1e150, y, qid=qid)
    model = RankSVM().fit(X, y, qid=qid)
    model.coef_ = np.full(3, 3.0)                # 3 * 3 * 1e308 overflows
    assert np.isfinite(model.predict(np.full((2, 3), 1e307))).all()
    with pytest.raises(ValueError, match="RankSVM: the scores"):
        model.predict(np.full((2, 3), 1e308))


def test_not_fitted_error_before_fit():
    X, y, qid = _data()
    for call in (lambda m: m.predict(X), lambda m: m.decision_function(X),
                 lambda m: m.score(X, y, qid=qid)):
        with pytest.raises(NotFittedError):
            call(RankSVM())


def test_huge_c_raises_instead_of_returning_the_zero_weights():
    """C = 1e300 (newton): the line search could take no step from 0, and the
    zero weights (a null model, ranking score 0.5) came back with only a
    ConvergenceWarning.  The dual pair solver copes with the same C."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 6))
    y, qid = np.round(X @ np.arange(1.0, 7.0)), np.repeat(np.arange(3), 10)
    with pytest.raises(ValueError, match="RankSVM: no Newton step.*C=1e\\+300"):
        RankSVM(C=1e300, solver="newton").fit(X, y, qid=qid)
    model = RankSVM(C=1e300, solver="pairs").fit(X, y, qid=qid)
    assert model.score(X, y, qid=qid) > 0.9


def test_complex_query_ids_are_refused():
    rng = np.random.default_rng(0)
    X = rng.random((30, 6))
    y, qid = np.round(X @ np.arange(1.0, 7.0)), np.repeat(np.arange(3), 10)
    with pytest.raises(ValueError, match="qid holds complex"):
        RankSVM().fit(X, y, qid=qid + 1j)
