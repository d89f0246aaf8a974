"""Plots of evaluation results (optional; needs matplotlib: ``pip install 'linclass[plot]'``).

Every function returns a :class:`matplotlib.figure.Figure`.  Figures are built
with matplotlib's object-oriented API (``matplotlib.figure.Figure``), not with
``pyplot``: nothing here selects or changes a backend, no window opens, and
the functions work on headless machines (save with ``fig.savefig(path)``).
Pass ``ax=`` to draw into an existing axes instead (its figure is returned).

References
----------
P. Flach, *Machine Learning: The Art and Science of Algorithms that Make Sense
of Data*, Cambridge University Press, 2012: coverage and ROC plots (section
2.2), margin losses (figure 7.7).
"""
import numpy as np

from . import _checks
from . import classification as _classification
from . import losses as _losses
from . import scores as _scores

__all__ = ["plot_roc", "plot_coverage", "plot_precision_recall", "plot_confusion_matrix",
           "plot_margin_losses", "plot_learning_curve"]

_INSTALL_HINT = ("linclass.metrics.plotting needs matplotlib, which is not installed; "
                 "install it with: pip install 'linclass[plot]'")


def _new_axes(ax, figsize):
    """The given axes, or a new one on a pyplot-free Figure."""
    if ax is not None:
        return ax.figure, ax
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    figure = Figure(figsize=figsize)
    return figure, figure.add_subplot(1, 1, 1)


def _named_scores(y_score):
    if isinstance(y_score, dict):
        if not y_score:
            raise ValueError("y_score is an empty dict; give at least one score array")
        return list(y_score.items())
    return [(None, y_score)]


def plot_roc(y_true, y_score, *, pos_label=None, sample_weight=None, ax=None,
             show_auc=True, show_chance=True, figsize=(5, 5)):
    """ROC curve(s): true positive rate against false positive rate.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,) or dict of str to array-like
        Scores of one model, or ``{name: scores}`` for several curves.
    pos_label, sample_weight
        As :func:`linclass.metrics.roc_curve`.
    ax : matplotlib Axes, optional
    show_auc : bool, default=True
        Put the AUC (ranking accuracy) in the legend.
    show_chance : bool, default=True
        Draw the diagonal of a random ranking.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    named = _named_scores(y_score)
    curves = []
    for name, scores in named:
        fpr, tpr, _ = _scores.roc_curve(y_true, scores, pos_label=pos_label,
                                        sample_weight=sample_weight)
        auc = _scores.roc_auc_score(np.asarray(_scores._binary_truth(y_true, pos_label),
                                               dtype=int), scores,
                                    sample_weight=sample_weight)
        curves.append((name, fpr, tpr, auc))
    figure, ax = _new_axes(ax, figsize)
    for name, fpr, tpr, auc in curves:
        label = name or "ROC"
        if show_auc:
            label += " (AUC = %.3f)" % auc
        ax.plot(fpr, tpr, drawstyle="default", label=label)
    if show_chance:
        ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1,
                label="random ranking")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("ROC curve")
    ax.legend(loc="lower right")
    return figure


def plot_coverage(y_true, y_score, *, pos_label=None, sample_weight=None, ax=None,
                  show_chance=True, figsize=(5, 5)):
    """Coverage plot(s): true positive count against false positive count.

    The curve runs from ``(0, 0)`` to ``(Neg, Pos)`` inside the ``Neg x Pos``
    rectangle ([Flach2012] section 2.2); unlike the ROC plot, the class ratio
    stays visible as the rectangle's shape.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,) or dict of str to array-like
    pos_label, sample_weight
        As :func:`linclass.metrics.coverage_curve`.
    ax : matplotlib Axes, optional
    show_chance : bool, default=True
        Draw the diagonal of a random ranking.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    curves = [(name,) + _scores.coverage_curve(y_true, scores, pos_label=pos_label,
                                               sample_weight=sample_weight)[:2]
              for name, scores in _named_scores(y_score)]
    figure, ax = _new_axes(ax, figsize)
    n_neg, n_pos = curves[0][1][-1], curves[0][2][-1]
    for name, fp, tp in curves:
        ax.plot(fp, tp, marker="." if len(fp) < 60 else None, label=name or "ranking")
    if show_chance:
        ax.plot([0, n_neg], [0, n_pos], linestyle="--", color="grey", linewidth=1,
                label="random ranking")
    ax.set_xlim(0, max(n_neg, 1))
    ax.set_ylim(0, max(n_pos, 1))
    ax.set_aspect("equal")
    ax.set_xlabel("negatives covered (false positives)")
    ax.set_ylabel("positives covered (true positives)")
    ax.set_title("Coverage plot (Pos = %g, Neg = %g)" % (n_pos, n_neg))
    ax.legend(loc="lower right")
    return figure


def plot_margin_losses(names=_losses.MARGIN_LOSSES, *, z_range=(-2.0, 2.0), base=2.0,
                       derivatives=False, n_points=401, ax=None, figsize=(6, 4)):
    """Margin losses ``L(z)`` (or their derivatives) against the margin ``z = y f(x)``.

    Parameters
    ----------
    names : sequence of str
        Names accepted by :func:`linclass.metrics.margin_loss`.
    z_range : (float, float)
    base : float, default=2.0
        Logarithm base of the logistic loss.
    derivatives : bool, default=False
        Plot ``dL/dz`` instead of ``L``.
    n_points : int
    ax : matplotlib Axes, optional
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    low, high = (float(v) for v in z_range)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError("z_range must be two finite numbers, low < high; got %r"
                         % (z_range,))
    if isinstance(names, str):
        names = [names]
    losses = [_losses.margin_loss(name, base=base) for name in names]
    if not losses:
        raise ValueError("names is empty; give at least one margin loss")
    z = np.linspace(low, high, int(n_points))
    figure, ax = _new_axes(ax, figsize)
    for loss in losses:
        values = loss.derivative(z) if derivatives else loss.value(z)
        ax.plot(z, values, label=loss.description,
                drawstyle="steps-post" if loss.name == "zero_one" else "default")
    ax.axvline(0.0, color="grey", linewidth=0.5)
    ax.set_xlabel("margin z = y f(x)")
    ax.set_ylabel("dL/dz" if derivatives else "loss L(z)")
    if not derivatives:
        top = max(2.0, min(4.0, float(np.max([loss.value(low) for loss in losses]))))
        ax.set_ylim(-0.05, top)
    ax.set_title("Margin loss derivatives" if derivatives else "Margin losses")
    ax.legend()
    return figure


def plot_learning_curve(train_sizes, train_scores, test_scores=None, *,
                        score_name="score", xlabel="training examples", ax=None,
                        figsize=(6, 4)):
    """Learning curve: scores against training set size (or epoch).

    Parameters
    ----------
    train_sizes : array-like of shape (n_ticks,)
        X positions (training examples, epochs ...).
    train_scores : array-like of shape (n_ticks,) or (n_ticks, n_folds)
        With several folds the mean is drawn with a +- one standard deviation band
        (the layout of scikit-learn's ``learning_curve`` output).
    test_scores : array-like, optional
        Same shape, drawn as "validation".
    score_name, xlabel : str
    ax : matplotlib Axes, optional
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    sizes = _checks._check_scores(train_sizes, "train_sizes")
    series = [("training", _checks._check_scores(train_scores, "train_scores",
                                                 sizes.shape[0], ndim=(1, 2)))]
    if test_scores is not None:
        series.append(("validation", _checks._check_scores(
            test_scores, "test_scores", sizes.shape[0], ndim=(1, 2))))
    figure, ax = _new_axes(ax, figsize)
    for label, scores in series:
        if scores.ndim == 1:
            ax.plot(sizes, scores, marker="o", label=label)
            continue
        mean, std = scores.mean(axis=1), scores.std(axis=1)
        (line,) = ax.plot(sizes, mean, marker="o", label=label)
        ax.fill_between(sizes, mean - std, mean + std, alpha=0.2, color=line.get_color())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(score_name)
    ax.set_title("Learning curve")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    return figure


def plot_precision_recall(y_true, y_score, *, pos_label=None, sample_weight=None, ax=None,
                          show_ap=True, figsize=(5, 5)):
    """Precision-recall curve(s) as steps, with the average precision in the legend.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,) or dict of str to array-like
        Scores of one model, or ``{name: scores}`` for several curves.
    pos_label, sample_weight
        As :func:`linclass.metrics.precision_recall_curve`.
    ax : matplotlib Axes, optional
    show_ap : bool, default=True
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    curves = []
    for name, scores in _named_scores(y_score):
        precision, recall, _ = _scores.precision_recall_curve(
            y_true, scores, pos_label=pos_label, sample_weight=sample_weight)
        ap = _scores.average_precision_score(y_true, scores, pos_label=pos_label,
                                             sample_weight=sample_weight)
        curves.append((name, precision, recall, ap))
    figure, ax = _new_axes(ax, figsize)
    for name, precision, recall, ap in curves:
        label = name or "precision-recall"
        if show_ap:
            label += " (AP = %.3f)" % ap
        ax.step(recall, precision, where="post", label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title("Precision-recall curve")
    ax.legend(loc="lower left")
    return figure


def plot_confusion_matrix(y_true, y_pred, *, labels=None, normalize=None, ax=None,
                          figsize=(5, 4.5), max_labels=50):
    """Confusion matrix as a heat map with the counts (or rates) written in the cells.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like, optional
        Order of the rows/columns (default: sorted union of the labels).
    normalize : {None, "true", "pred", "all"}
        As :func:`linclass.metrics.confusion_matrix`.
    ax : matplotlib Axes, optional
    figsize : (float, float)
    max_labels : int, default=50
        Refuse more classes than this (a heat map of them is unreadable).

    Returns
    -------
    matplotlib.figure.Figure
    """
    matrix = _classification.confusion_matrix(y_true, y_pred, labels=labels,
                                              normalize=normalize)
    if labels is None:
        labels = np.unique(np.concatenate([np.asarray(y_true).ravel(),
                                           np.asarray(y_pred).ravel()]))
    labels = [str(label) for label in labels]
    if len(labels) > max_labels:
        raise ValueError("%d classes: more than max_labels=%d for a readable confusion "
                         "matrix" % (len(labels), max_labels))
    figure, ax = _new_axes(ax, figsize)
    image = ax.imshow(matrix, cmap="Blues", interpolation="nearest")
    figure.colorbar(image, ax=ax)
    ticks = np.arange(len(labels))
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=45, ha="right")
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels)
    top = matrix.max() if matrix.size else 0
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            value = matrix[i, j]
            text = ("%d" % value) if normalize is None else ("%.2f" % value)
            ax.text(j, i, text, ha="center", va="center",
                    color="white" if top and value > top / 2 else "black", fontsize=8)
    ax.set_xlabel("predicted label")
    ax.set_ylabel("true label")
    ax.set_title("Confusion matrix")
    return figure
