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
S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher, "Block-coordinate
Frank-Wolfe optimization for structural SVMs", ICML 2013: duality gap
against time (figures 2-3).
"""
import numpy as np

from . import _checks
from . import classification as _classification
from . import losses as _losses
from . import scores as _scores

__all__ = ["plot_roc", "plot_coverage", "plot_precision_recall", "plot_confusion_matrix",
           "plot_margin_losses", "plot_learning_curve", "plot_training_history",
           "plot_transitions", "plot_duality_gap"]

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
                          figsize=None, max_labels=50):
    """Confusion matrix as a heat map with the counts (or rates) written in the cells.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like, optional
        Order of the rows/columns (default: sorted union of the labels).
    normalize : {None, "true", "pred", "all"}
        As :func:`linclass.metrics.confusion_matrix`.
    ax : matplotlib Axes, optional
    figsize : (float, float), optional
        Default: grows with the number of classes and the length of their
        names, so that tick labels and cell values stay readable (and inside
        the figure) from 2 to 50 classes.
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
    k = len(labels)
    if k > max_labels:
        raise ValueError("%d classes: more than max_labels=%d for a readable confusion "
                         "matrix" % (k, max_labels))
    # cells of ~0.45 inch up to 12 classes, shrinking to ~0.3 inch; label
    # margins from the longest name (at ~0.09 inch per character of 9-point text)
    cell = 0.45 if k <= 12 else max(0.3, 0.45 - 0.01 * (k - 12))
    longest = max((len(label) for label in labels), default=1)
    margin = min(0.09 * longest, 3.0) + 0.9
    tick_size = 9 if k <= 12 else max(6, 9 - (k - 12) // 4)
    cell_size = 8 if k <= 12 else max(5, 8 - (k - 12) // 4)
    if figsize is None:
        side = max(3.0, cell * k)
        figsize = (side + margin + 1.4, side + margin + 0.6)     # colour bar, title
    figure, ax = _new_axes(ax, figsize)
    image = ax.imshow(matrix, cmap="Blues", interpolation="nearest")
    figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ticks = np.arange(k)
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=45 if longest > 2 else 0,
                       ha="right" if longest > 2 else "center",
                       rotation_mode="anchor", fontsize=tick_size)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=tick_size)
    top = matrix.max() if matrix.size else 0
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            value = matrix[i, j]
            text = ("%d" % value) if normalize is None else ("%.2f" % value)
            ax.text(j, i, text, ha="center", va="center",
                    color="white" if top and value > top / 2 else "black", fontsize=cell_size)
    ax.set_xlabel("predicted label")
    ax.set_ylabel("true label")
    ax.set_title("Confusion matrix")
    if ax.figure is figure and len(figure.axes) == 2:         # our own figure: fit it
        figure.tight_layout()
    return figure


def _history_rows(source, name="estimator_or_history"):
    """The per-iteration rows of ``source``: a fitted estimator's ``history_`` or
    the list of dicts itself."""
    rows = getattr(source, "history_", source)
    if isinstance(rows, dict) or not isinstance(rows, (list, tuple)) \
            or not all(isinstance(r, dict) for r in rows):
        raise ValueError("%s must be a fitted estimator with a history_ (list of dict per "
                         "iteration) or such a list, got %s" % (name, type(source).__name__))
    if not rows:
        raise ValueError("%s has an empty history: nothing to plot" % name)
    return list(rows)


def _is_number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


_X_KEYS = ("iteration", "epoch")
_TIME_KEYS = ("time", "seconds")


def plot_training_history(estimator_or_history, keys=None, *, x="iteration", logy=False,
                          ax=None, figsize=(6, 4)):
    """Learning curve of one fit: the numbers an estimator records per
    iteration (its ``history_``; what ``verbose`` prints) against iteration or time.

    Parameters
    ----------
    estimator_or_history : fitted estimator with ``history_``, or list of dict
        E.g. :class:`~linclass.SequenceTagger` (``token_error_rate`` per epoch),
        :class:`~linclass.CRF` (``loss``), :class:`~linclass.StructuredSVM`
        (``objective``, ``dual_objective``, ``gap``), :class:`~linclass.MixtureNB`.
    keys : str or list of str, optional
        The entries to draw (default: every numeric entry that is neither the
        x axis nor a time).  Rows without a numeric value for a key (e.g.
        ``gap`` of an iteration served from a cache) are left out of its line.
    x : {"iteration", "time"}, default="iteration"
        ``"iteration"``: the row's ``iteration``/``epoch`` entry (its position
        when there is none); ``"time"``: its ``time``/``seconds`` entry.
    logy : bool, default=False
        Logarithmic y axis (non-positive values are then left out).
    ax : matplotlib Axes, optional
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = _history_rows(estimator_or_history)
    if x not in ("iteration", "time"):
        raise ValueError("x must be 'iteration' or 'time', got %r" % (x,))
    if x == "time":
        x_key = next((k for k in _TIME_KEYS if k in rows[0]), None)
        if x_key is None:
            raise ValueError("x='time': the history records no time (no 'time' or 'seconds' "
                             "entry); use x='iteration'")
    else:
        x_key = next((k for k in _X_KEYS if k in rows[0]), None)
    skip = set(_X_KEYS) | set(_TIME_KEYS) | {"cpu_seconds"}
    if keys is None:
        keys = [k for k, v in rows[0].items() if k not in skip and _is_number(v)]
        for row in rows[1:]:
            keys += [k for k, v in row.items() if k not in skip and k not in keys
                     and _is_number(v)]
        if not keys:
            raise ValueError("the history has no numeric entry to plot besides %s"
                             % sorted(skip & set(rows[0])))
    elif isinstance(keys, str):
        keys = [keys]
    else:
        keys = list(keys)
    missing = [k for k in keys if not any(_is_number(r.get(k)) for r in rows)]
    if missing:
        raise ValueError("keys %s: no iteration of the history records a number for them; "
                         "available: %s" % (missing, sorted({k for r in rows for k, v in
                                                             r.items() if _is_number(v)})))
    figure, ax = _new_axes(ax, figsize)
    for key in keys:
        xs, ys = [], []
        for pos, row in enumerate(rows):
            value = row.get(key)
            if not _is_number(value) or (logy and value <= 0):
                continue
            xs.append(float(row[x_key]) if x_key is not None else pos + 1.0)
            ys.append(float(value))
        ax.plot(xs, ys, marker="o" if len(xs) <= 50 else None, label=key)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("seconds since the start of fit" if x == "time" else (x_key or "iteration"))
    ax.set_ylabel(keys[0] if len(keys) == 1 else "value")
    ax.set_title("Training history")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    return figure


def plot_transitions(tagger_or_crf, *, ax=None, cmap="RdBu_r", annotate=None,
                     figsize=None):
    """Heat map of a sequence model's label-transition weights.

    Row ``a``, column ``b`` shows the weight of the transition from label
    ``a`` (previous token) to label ``b`` (next token): ``transitions_[a, b]``
    of :class:`~linclass.SequenceTagger` and :class:`~linclass.CRF`, the log
    transition probabilities ``log_transitions_`` of :class:`~linclass.HMM`.
    The colour scale is centred on 0.

    Parameters
    ----------
    tagger_or_crf : fitted model with ``transitions_`` (or ``log_transitions_``)
        of shape (K, K) and ``classes_`` (K,)
    ax : matplotlib Axes, optional
    cmap : str, default="RdBu_r"
        A diverging colormap: positive weights red, negative blue.
    annotate : bool, optional
        Write each weight in its cell (default: when K <= 12).
    figsize : (float, float), optional
        Default grows with the number of labels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    trans = getattr(tagger_or_crf, "transitions_", None)
    what = "transition weight"
    if trans is None and getattr(tagger_or_crf, "log_transitions_", None) is not None:
        trans = tagger_or_crf.log_transitions_
        what = "log P(next | previous)"
    classes = getattr(tagger_or_crf, "classes_", None)
    if trans is None or classes is None:
        raise ValueError("tagger_or_crf must be a fitted sequence model with transitions_ and "
                         "classes_ (SequenceTagger, CRF), got %s" % type(tagger_or_crf).__name__)
    trans = np.asarray(trans, dtype=np.float64)
    labels = [str(c) for c in classes]
    K = len(labels)
    if trans.shape != (K, K):
        raise ValueError("transitions_ has shape %r, expected (%d, %d) for %d classes_"
                         % (trans.shape, K, K, K))
    if annotate is None:
        annotate = K <= 12
    if figsize is None:
        side = min(12.0, 2.5 + 0.45 * K)
        figsize = (side + 1.0, side)
    figure, ax = _new_axes(ax, figsize)
    finite = np.abs(trans[np.isfinite(trans)])
    bound = float(finite.max()) if finite.size and np.any(finite) else 1.0
    image = ax.imshow(trans, cmap=cmap, vmin=-bound, vmax=bound, interpolation="nearest")
    figure.colorbar(image, ax=ax, label=what)
    ax.set_xticks(np.arange(K))
    ax.set_xticklabels(labels, rotation=90 if K > 6 else 0)
    ax.set_yticks(np.arange(K))
    ax.set_yticklabels(labels)
    ax.set_xlabel("next label")
    ax.set_ylabel("previous label")
    ax.set_title("Transition weights")
    if annotate:
        for a in range(K):
            for b in range(K):
                ax.text(b, a, "%.2g" % trans[a, b], ha="center", va="center", fontsize=8,
                        color="white" if abs(trans[a, b]) > 0.6 * bound else "black")
    return figure


def plot_duality_gap(estimator_or_history, *, x="time", relative=False, ax=None,
                     figsize=(6, 4)):
    """Duality gap of a structural SVM fit against time (or iteration), log scale.

    Reads the ``gap`` (primal minus dual objective) and ``time`` (seconds since
    the start of ``fit``) that :class:`~linclass.StructuredSVM`,
    :class:`~linclass.MultiClassSVM` and ``SequenceTagger(trainer="ssvm")``
    record per iteration in ``history_``; iterations without an exact gap
    (BCFW passes between gap checks, iterations served from the inference
    cache) are left out.

    Parameters
    ----------
    estimator_or_history : fitted estimator, list of dict, or dict of name to either
        Several fits under their names draw one line each (e.g. methods compared).
    x : {"time", "iteration"}, default="time"
    relative : bool, default=False
        Plot ``gap / objective`` (the relative gap the solvers stop on).
    ax : matplotlib Axes, optional
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    if x not in ("time", "iteration"):
        raise ValueError("x must be 'time' or 'iteration', got %r" % (x,))
    if isinstance(estimator_or_history, dict) and not all(
            isinstance(k, str) for k in estimator_or_history):
        raise ValueError("estimator_or_history as a dict maps names (str) to fits")
    named = (list(estimator_or_history.items()) if isinstance(estimator_or_history, dict)
             else [(None, estimator_or_history)])
    if not named:
        raise ValueError("estimator_or_history is an empty dict; give at least one fit")
    curves = []
    for name, source in named:
        rows = _history_rows(source)
        points = []
        for pos, row in enumerate(rows):
            gap = row.get("gap")
            if not _is_number(gap):
                continue
            if relative:
                primal = row.get("objective")
                if not _is_number(primal) or primal <= 0:
                    continue
                gap = gap / primal
            if x == "time":
                t = row.get("time", row.get("seconds"))
                if not _is_number(t):
                    raise ValueError("x='time': the history records no time per iteration; "
                                     "use x='iteration'")
            else:
                t = row.get("iteration", pos + 1)
            points.append((float(t), max(float(gap), 0.0)))
        if not points:
            raise ValueError("%s records no duality gap (history_ rows need a numeric 'gap', "
                             "as StructuredSVM/MultiClassSVM write)"
                             % ("the history" if name is None else repr(name)))
        curves.append((name, points))
    figure, ax = _new_axes(ax, figsize)
    for name, points in curves:
        xs = np.array([p[0] for p in points])
        gaps = np.array([p[1] for p in points])
        positive = gaps > 0                    # an exact 0 has no place on a log axis
        ax.plot(xs[positive], gaps[positive], marker="o" if len(xs) <= 50 else None,
                label=name)
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the start of fit" if x == "time" else "iteration")
    ax.set_ylabel("relative duality gap" if relative else "duality gap (primal - dual)")
    ax.set_title("Duality gap")
    ax.grid(True, which="both", alpha=0.3)
    if any(name is not None for name, _ in curves):
        ax.legend(loc="best")
    return figure
