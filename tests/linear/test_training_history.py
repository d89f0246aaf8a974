"""Iterative linear models record one row per iteration in ``history_``, which
plot_training_history draws (it raised for LogisticRegression)."""
import numpy as np
import pytest

import linclass


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("params", [{}, dict(solver="tron"), dict(solver="newton"),
                                    dict(penalty="l1"), dict(penalty="elasticnet",
                                                             l1_ratio=0.5)])
def test_history_has_a_row_per_iteration_ending_at_the_objective(params):
    X, y = _data()
    model = linclass.LogisticRegression(**params).fit(X, y)
    rows = model.history_
    assert len(rows) == int(model.n_iter_[0])
    assert [r["iteration"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[-1]["objective"] == pytest.approx(model.objective_, rel=1e-12)
    objectives = [r["objective"] for r in rows]
    assert max(np.diff(objectives), default=0.0) <= 1e-9 * abs(objectives[0])   # descent
    times = [r["time"] for r in rows]
    assert times == sorted(times)
    if "penalty" not in params:
        assert rows[-1]["gradient_max"] <= model.tol * 300 * 10


def test_training_history_plot_of_logistic_regression():
    pytest.importorskip("matplotlib")
    from linclass.metrics.plotting import plot_training_history
    X, y = _data()
    model = linclass.LogisticRegression().fit(X, y)
    figure = plot_training_history(model, "objective")
    line = figure.axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), [r["objective"] for r in model.history_])


def test_history_survives_save_and_load(tmp_path):
    X, y = _data()
    model = linclass.LogisticRegression().fit(X, y)
    loaded = linclass.load(model.save(tmp_path / "lr.npz"))
    assert loaded.history_ == model.history_


def test_perceptron_history_is_its_mistakes_per_epoch():
    X, y = _data()
    model = linclass.Perceptron(max_iter=6, random_state=0, shuffle=True)
    with pytest.warns(linclass.ConvergenceWarning):
        model.fit(X, y)
    assert [r["epoch"] for r in model.history_] == list(range(1, model.n_iter_ + 1))
    assert [r["mistakes"] for r in model.history_] == model.mistakes_per_epoch_.tolist()
