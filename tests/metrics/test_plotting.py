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


def _overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("n_classes", [2, 5, 9, 12, 20])
@pytest.mark.parametrize("names", ["short", "long"])
def test_confusion_matrix_labels_stay_inside_and_apart(n_classes, names):
    """At 9 classes the tick labels were clipped: every tick label and cell value
    must lie inside the figure, neighbours must not overlap, text >= 5 points."""
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(n_classes)
    classes = [("c%d" % i) if names == "short" else
               ("comp.sys.ibm.pc.hardware.%d" % i) for i in range(n_classes)]
    y = np.array(classes)[rng.integers(0, n_classes, 400)]
    pred = np.where(rng.random(400) < 0.7, y, np.array(classes)[rng.integers(0, n_classes, 400)])
    figure = plotting.plot_confusion_matrix(y, pred)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    frame = figure.bbox
    ax = figure.axes[0]
    for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
        boxes = [t.get_window_extent(renderer) for t in ticks]
        assert len(boxes) == n_classes
        for t, box in zip(ticks, boxes):
            assert t.get_fontsize() >= 5
            assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, t.get_text()
            assert frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1, t.get_text()
    # neighbours: horizontal labels must not overlap; labels rotated by r
    # degrees are parallel lines whose distance, spacing * sin(r), must exceed
    # the text height (their axis-aligned boxes overlap anyway)
    y_boxes = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
    assert not any(_overlap(a, b) for a, b in zip(y_boxes, y_boxes[1:]))
    x_ticks = ax.get_xticklabels()
    rotation = x_ticks[0].get_rotation()
    if rotation == 0:
        x_boxes = [t.get_window_extent(renderer) for t in x_ticks]
        assert not any(_overlap(a, b) for a, b in zip(x_boxes, x_boxes[1:]))
    else:
        spacing = abs(ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0])
        height = x_ticks[0].get_fontsize() * figure.dpi / 72.0
        assert spacing * np.sin(np.radians(rotation)) >= height
    cells = list(ax.texts)
    assert len(cells) == n_classes ** 2
    for t in cells:
        box = t.get_window_extent(renderer)
        assert frame.contains((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
        assert t.get_fontsize() >= 5
