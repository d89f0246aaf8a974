"""Figures of the gallery page (docs/gallery.rst), drawn at docs build time.

``conf.py`` calls :func:`build` when the builder starts; the PNGs go to
``docs/_gallery/`` (ignored by git: generated, never committed).  Every model
is small and seeded, so the whole gallery takes a few seconds.
"""
import pathlib
import warnings

import numpy as np

FIGURES = ("pos_transitions", "pos_learning_curve", "ssvm_duality_gap", "l1_svm_path",
           "roc_pr", "confusion_matrix", "margin_losses")


def _tagger_data(n_train=600):
    from linclass.datasets import load_bundled_ud_english
    train = load_bundled_ud_english("train")[:n_train]
    test = load_bundled_ud_english("test")[:200]

    def split(sentences):
        return ([[(w,) for w in s.column("form")] for s in sentences],
                [s.column("upos") for s in sentences])
    return split(train) + split(test)


def _flat(seed=0, n=300, n_features=20):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, n_features))
    X[:, :3] += np.eye(3)[y] * 2.0
    return X, y


def build(outdir):
    """Draw every figure of :data:`FIGURES` into ``outdir`` (PNG); returns the paths."""
    import linclass
    from linclass.metrics import plotting
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    figures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X_tr, Y_tr, X_te, Y_te = _tagger_data()
        tagger = linclass.SequenceTagger(features="pos", max_iter=8, random_state=0)
        tagger.fit(X_tr, Y_tr)
        figures["pos_transitions"] = plotting.plot_transitions(tagger)
        figures["pos_learning_curve"] = plotting.plot_training_history(
            tagger, "token_error_rate")

        X, y = _flat()
        fits = {method: linclass.MultiClassSVM(method=method, C=1.0, tol=1e-4,
                                               random_state=0).fit(X, y)
                for method in ("bcfw", "1-slack")}
        figures["ssvm_duality_gap"] = plotting.plot_duality_gap(fits, relative=True)

        from matplotlib.figure import Figure
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot(1, 1, 1)
        Cs = np.logspace(-3, 0, 12)
        coefs = np.array([linclass.LinearSVC(penalty="l1", C=C, random_state=0)
                          .fit(X, y == 0).coef_[0] for C in Cs])
        ax.plot(Cs, coefs)
        ax.set_xscale("log")
        ax.set_xlabel("C")
        ax.set_ylabel("weight")
        ax.set_title("LinearSVC(penalty='l1'): weights against C")
        figures["l1_svm_path"] = fig

        svc = linclass.LinearSVC(random_state=0).fit(X, y == 0)
        scores = svc.decision_function(X)
        fig = Figure(figsize=(10, 4.5))
        ax1, ax2 = fig.subplots(1, 2)
        plotting.plot_roc(y == 0, scores, ax=ax1)
        plotting.plot_precision_recall(y == 0, scores, ax=ax2)
        figures["roc_pr"] = fig
        model = linclass.LinearSVC(random_state=0).fit(X, y)
        figures["confusion_matrix"] = plotting.plot_confusion_matrix(y, model.predict(X))
        figures["margin_losses"] = plotting.plot_margin_losses()
    paths = []
    for name in FIGURES:
        path = outdir / ("%s.png" % name)
        figures[name].savefig(path, dpi=80, bbox_inches="tight")
        paths.append(path)
    return paths
