"""Plots of fitted models (training history, transition heat map, duality gap),
rendered to PNG; each checks that the drawn data are the model's own numbers."""
import warnings

import numpy as np
import pytest

import linclass
from linclass.metrics import plotting

_X = [["the", "dog", "runs"], ["a", "cat", "sleeps", "now"], ["dogs", "run"],
      ["the", "cats", "sleep"]] * 4
_Y = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"], ["D", "N", "V"]] * 4


def _png(figure, path):
    figure.savefig(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000


def _quiet_fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _flat(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 60)
    return rng.normal(size=(60, 4)) + np.eye(3, 4)[y] * 2.0, y


@pytest.fixture(autouse=True)
def _needs_matplotlib():
    pytest.importorskip("matplotlib")


def test_transitions_heat_map_of_tagger_crf_and_hmm(tmp_path):
    models = {
        "tagger": _quiet_fit(linclass.SequenceTagger(max_iter=5, random_state=0), _X, _Y),
        "crf": _quiet_fit(linclass.CRF(max_iterations=10, features="pos"), _X, _Y),
        "hmm": _quiet_fit(linclass.HMM(), _X, _Y),
    }
    for name, model in models.items():
        figure = plotting.plot_transitions(model)
        _png(figure, tmp_path / ("%s.png" % name))
        ax = figure.axes[0]
        drawn = np.asarray(ax.get_images()[0].get_array())
        expected = getattr(model, "transitions_", None)
        if expected is None:
            expected = model.log_transitions_
        np.testing.assert_allclose(drawn, expected, rtol=1e-6)
        labels = [str(c) for c in model.classes_]
        assert [t.get_text() for t in ax.get_xticklabels()] == labels
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
        assert ax.get_xlabel() == "next label" and ax.get_ylabel() == "previous label"
        # a centred colour scale: 0 is the middle of the map
        low, high = ax.get_images()[0].get_clim()
        assert low == -high
    # the learned grammar shows: determiner -> noun beats determiner -> verb
    tagger = models["tagger"]
    d, n, v = (list(tagger.classes_).index(c) for c in "DNV")
    assert tagger.transitions_[d, n] > tagger.transitions_[d, v]
    with pytest.raises(ValueError, match="transitions_"):
        plotting.plot_transitions(linclass.LinearSVC())


def test_duality_gap_against_time_is_the_recorded_history(tmp_path):
    X, y = _flat()
    model = _quiet_fit(linclass.MultiClassSVM(random_state=0, tol=1e-4), X, y)
    figure = plotting.plot_duality_gap(model)
    _png(figure, tmp_path / "gap.png")
    ax = figure.axes[0]
    rows = [r for r in model.history_ if r["gap"] is not None and r["gap"] > 0]
    assert len(rows) >= 3
    line = ax.get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata(), [r["time"] for r in rows])
    np.testing.assert_array_equal(line.get_ydata(), [r["gap"] for r in rows])
    assert ax.get_yscale() == "log"
    assert np.all(np.diff(line.get_xdata()) >= 0)
    # the last exact gap is below tol * objective (the solver's stopping rule)
    assert rows[-1]["gap"] <= 1e-4 * rows[-1]["objective"]
    # relative gap against iteration; several fits under their names
    rel = plotting.plot_duality_gap(model, x="iteration", relative=True)
    line = rel.axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), [r["gap"] / r["objective"] for r in rows])
    np.testing.assert_array_equal(line.get_xdata(), [r["iteration"] for r in rows])
    tagger = _quiet_fit(linclass.SequenceTagger(trainer="ssvm", random_state=0), _X, _Y)
    one_slack = _quiet_fit(linclass.MultiClassSVM(method="1-slack", random_state=0), X, y)
    both = plotting.plot_duality_gap({"bcfw": model, "1-slack": one_slack,
                                      "ssvm tagger": tagger.history_})
    _png(both, tmp_path / "gaps.png")
    assert [t.get_text() for t in both.axes[0].get_legend().get_texts()] == \
        ["bcfw", "1-slack", "ssvm tagger"]
    with pytest.raises(ValueError, match="no duality gap"):
        plotting.plot_duality_gap(_quiet_fit(linclass.SequenceTagger(max_iter=2), _X, _Y))
    with pytest.raises(ValueError, match="history_"):
        plotting.plot_duality_gap(linclass.LinearSVC())
    with pytest.raises(ValueError, match="x must be"):
        plotting.plot_duality_gap(model, x="epoch")


def test_training_history_of_tagger_crf_and_structured_svm(tmp_path):
    tagger = _quiet_fit(linclass.SequenceTagger(max_iter=6, random_state=0), _X, _Y)
    figure = plotting.plot_training_history(tagger, "token_errors")
    _png(figure, tmp_path / "tagger.png")
    line = figure.axes[0].get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata(), [r["epoch"] for r in tagger.history_])
    np.testing.assert_array_equal(line.get_ydata(),
                                  [r["token_errors"] for r in tagger.history_])
    by_time = plotting.plot_training_history(tagger, ["token_error_rate"], x="time")
    np.testing.assert_array_equal(by_time.axes[0].get_lines()[0].get_xdata(),
                                  [r["seconds"] for r in tagger.history_])
    # every numeric entry by default; None entries (cached iterations) left out
    X, y = _flat(1)
    svm = _quiet_fit(linclass.MultiClassSVM(method="1-slack", random_state=0), X, y)
    figure = plotting.plot_training_history(svm, logy=True)
    _png(figure, tmp_path / "svm.png")
    drawn = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert {"objective", "dual_objective", "gap", "violation"} <= set(drawn)
    assert "time" not in drawn and "iteration" not in drawn
    gaps = [r["gap"] for r in svm.history_ if r["gap"] is not None and r["gap"] > 0]
    np.testing.assert_array_equal(drawn["gap"].get_ydata(), gaps)
    crf = _quiet_fit(linclass.CRF(max_iterations=8, features="pos"), _X, _Y)
    _png(plotting.plot_training_history(crf), tmp_path / "crf.png")
    with pytest.raises(ValueError, match="no iteration of the history records"):
        plotting.plot_training_history(tagger, "gap")
    with pytest.raises(ValueError, match="history_"):
        plotting.plot_training_history({"a": 1})
