"""linclass.metrics.plotting renders each figure to PNG (skipped without matplotlib)."""
import sys

import numpy as np
import pytest

from linclass.metrics import plotting


def _binary_problem(seed=0, n=80):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    return y, y + rng.normal(size=n)


def _assert_png(figure, path):
    figure.savefig(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000


def test_each_plot_renders_to_png(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    y, s = _binary_problem()
    figures = {
        "roc": plotting.plot_roc(y, {"model": s,
                                     "noise": np.random.default_rng(1).random(len(y))}),
        "coverage": plotting.plot_coverage(y, s),
        "losses": plotting.plot_margin_losses(),
        "loss_derivatives": plotting.plot_margin_losses(["hinge", "logistic"],
                                                        derivatives=True, base=np.e),
        "learning": plotting.plot_learning_curve(
            [10, 20, 40], np.array([[0.9, 0.8], [0.85, 0.86], [0.84, 0.83]]),
            [[0.6, 0.62], [0.7, 0.71], [0.76, 0.78]]),
        "learning_1d": plotting.plot_learning_curve([1, 2, 3], [0.5, 0.6, 0.7]),
        "precision_recall": plotting.plot_precision_recall(y, {"model": s, "inverted": -s}),
        "confusion": plotting.plot_confusion_matrix(y, (s > 0.5).astype(int)),
        "confusion_rates": plotting.plot_confusion_matrix(
            ["a", "b", "c", "a"], ["a", "c", "c", "b"], normalize="true"),
    }
    for name, figure in figures.items():
        assert isinstance(figure, Figure)
        _assert_png(figure, tmp_path / ("%s.png" % name))
    # the ROC legend carries the ranking accuracy
    legend = [t.get_text() for t in figures["roc"].axes[0].get_legend().get_texts()]
    assert any("AUC = " in text for text in legend)
    # the coverage plot ends at (Neg, Pos)
    line = figures["coverage"].axes[0].get_lines()[0]
    assert (line.get_xdata()[-1], line.get_ydata()[-1]) == ((y == 0).sum(), (y == 1).sum())


def test_draws_into_given_axes():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    figure = Figure()
    ax1, ax2 = figure.subplots(1, 2)
    y, s = _binary_problem()
    assert plotting.plot_roc(y, s, ax=ax1) is figure
    assert plotting.plot_coverage(y, s, ax=ax2) is figure
    assert len(ax1.get_lines()) == 2 and len(ax2.get_lines()) == 2


def test_bad_input_raises_value_error():
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="z_range"):
        plotting.plot_margin_losses(z_range=(1, -1))
    with pytest.raises(ValueError, match="unknown margin loss"):
        plotting.plot_margin_losses(["huber"])
    with pytest.raises(ValueError, match="entries"):
        plotting.plot_learning_curve([1, 2], [0.5, 0.6, 0.7])
    with pytest.raises(ValueError, match="NaN"):
        plotting.plot_roc([0, 1], [0.1, np.nan])


def test_missing_matplotlib_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'linclass\[plot\]'"):
        plotting.plot_margin_losses()


def test_confusion_matrix_plot_refuses_too_many_classes():
    pytest.importorskip("matplotlib")
    y = np.arange(60)
    with pytest.raises(ValueError, match="max_labels"):
        plotting.plot_confusion_matrix(y, y)
