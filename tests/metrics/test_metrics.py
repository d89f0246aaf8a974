"""Classification, ranking, probability and margin metrics against scikit-learn,
brute force and textbook values."""
import itertools
import warnings

import numpy as np
import pytest

from linclass import metrics as M

sk = pytest.importorskip("sklearn.metrics")

SEEDS = range(25)


def _labels(rng, n, n_classes, kind="int"):
    y = rng.integers(0, n_classes, n)
    if kind == "str":
        return np.array(["c%d" % v for v in y])
    if kind == "pm1":
        return 2 * y - 1
    return y


def _weights(rng, n):
    w = rng.random(n) * 3
    w[rng.random(n) < 0.1] = 0.0
    return w


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _close(a, b):
    if a is None or b is None:
        return a is b
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                       equal_nan=True, rtol=1e-12, atol=1e-12)


# --- label predictions ------------------------------------------------------

@pytest.mark.parametrize("seed", range(16))
def test_prf_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    n_classes = int(rng.integers(1, 5))
    kind = ["int", "str", "pm1"][seed % 3]
    y_true, y_pred = _labels(rng, n, n_classes, kind), _labels(rng, n, n_classes, kind)
    weight = _weights(rng, n) if seed % 2 else None
    present = np.unique(np.r_[y_true, y_pred])
    averages = [None, "micro", "macro", "weighted"]
    if len(present) <= 2 and kind != "str":
        averages.append("binary")
    for average, zero_division, beta in itertools.product(
            averages, ["warn", 0, 1, np.nan], [1.0, 0.5 + seed % 3]):
        pos_label = present[-1] if average == "binary" else 1
        if average == "binary" and len(present) == 2 and pos_label not in present:
            continue
        kw = dict(average=average, sample_weight=weight, zero_division=zero_division)
        ours = _quiet(M.precision_recall_fscore_support, y_true, y_pred, beta=beta,
                      pos_label=pos_label, **kw)
        theirs = _quiet(sk.precision_recall_fscore_support, y_true, y_pred, beta=beta,
                        pos_label=pos_label, **kw)
        for a, b in zip(ours, theirs):
            assert _close(a, b), (average, zero_division, beta, ours, theirs)
    # explicit labels (subset and an unseen label)
    labels = list(present[:2]) + (["zz"] if kind == "str" else [99])
    for average in (None, "micro", "macro", "weighted"):
        for ours_f, sk_f in ((M.precision_score, sk.precision_score),
                             (M.recall_score, sk.recall_score),
                             (M.f1_score, sk.f1_score)):
            a = _quiet(ours_f, y_true, y_pred, labels=labels, average=average,
                       sample_weight=weight)
            b = _quiet(sk_f, y_true, y_pred, labels=labels, average=average,
                       sample_weight=weight)
            assert _close(a, b)


@pytest.mark.parametrize("seed", SEEDS)
def test_accuracy_confusion_report_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50))
    kind = ["int", "str"][seed % 2]
    y_true, y_pred = _labels(rng, n, 4, kind), _labels(rng, n, 4, kind)
    weight = _weights(rng, n) if seed % 3 else None
    if weight is None or weight.sum() > 0:
        assert M.accuracy_score(y_true, y_pred, sample_weight=weight) == pytest.approx(
            sk.accuracy_score(y_true, y_pred, sample_weight=weight))
        assert M.error_rate(y_true, y_pred, sample_weight=weight) == pytest.approx(
            1 - sk.accuracy_score(y_true, y_pred, sample_weight=weight))
    assert M.accuracy_score(y_true, y_pred, normalize=False) == \
        sk.accuracy_score(y_true, y_pred, normalize=False)
    for normalize in (None, "true", "pred", "all"):
        ours = _quiet(M.confusion_matrix, y_true, y_pred, sample_weight=weight,
                      normalize=normalize)
        theirs = _quiet(sk.confusion_matrix, y_true, y_pred, sample_weight=weight,
                        normalize=normalize)
        assert ours.dtype.kind == theirs.dtype.kind
        np.testing.assert_allclose(ours, theirs)
    labels = list(np.unique(y_true)[::-1][:3])
    np.testing.assert_array_equal(M.confusion_matrix(y_true, y_pred, labels=labels),
                                  sk.confusion_matrix(y_true, y_pred, labels=labels))
    for digits in (2, 4):
        assert _quiet(M.classification_report, y_true, y_pred, digits=digits) == \
            _quiet(sk.classification_report, y_true, y_pred, digits=digits)
    kw = dict(labels=labels, target_names=["name %d" % i for i in range(len(labels))],
              zero_division=0)
    assert M.classification_report(y_true, y_pred, **kw) == \
        sk.classification_report(y_true, y_pred, **kw)
    ours = _quiet(M.classification_report, y_true, y_pred, output_dict=True)
    theirs = _quiet(sk.classification_report, y_true, y_pred, output_dict=True)
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert ours[key] == (pytest.approx(value) if isinstance(value, float) else
                             {k: pytest.approx(v) for k, v in value.items()})


@pytest.mark.parametrize("seed", SEEDS)
def test_specificity_from_confusion_counts(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    y_true, y_pred = _labels(rng, n, 3), _labels(rng, n, 3)
    weight = _weights(rng, n) if seed % 2 else None
    mcm = sk.multilabel_confusion_matrix(y_true, y_pred, sample_weight=weight)
    tn, fp = mcm[:, 0, 0], mcm[:, 0, 1]
    support = mcm[:, 1, 0] + mcm[:, 1, 1]
    with np.errstate(all="ignore"):
        per_class = np.where(tn + fp > 0, tn / np.where(tn + fp > 0, tn + fp, 1), 0.0)
    ours = _quiet(M.specificity_score, y_true, y_pred, average=None, sample_weight=weight)
    np.testing.assert_allclose(ours, per_class)
    assert _quiet(M.specificity_score, y_true, y_pred, average="macro",
                  sample_weight=weight) == pytest.approx(per_class.mean())
    if tn.sum() + fp.sum() > 0:
        assert M.specificity_score(y_true, y_pred, average="micro", sample_weight=weight) \
            == pytest.approx(tn.sum() / (tn.sum() + fp.sum()))
    if support.sum() > 0:
        assert _quiet(M.specificity_score, y_true, y_pred, average="weighted",
                      sample_weight=weight) == pytest.approx(
            np.average(per_class, weights=support))
    # binary: specificity of class 1 = recall of class 0
    yb_true, yb_pred = y_true % 2, y_pred % 2
    assert _quiet(M.specificity_score, yb_true, yb_pred, sample_weight=weight) == \
        pytest.approx(_quiet(sk.recall_score, yb_true, yb_pred, pos_label=0,
                             sample_weight=weight))


def test_textbook_contingency_table():
    # Flach (2012) example 2.2 style: 50 positives, 50 negatives;
    # tp=40, fn=10, fp=5, tn=45 (pos=1)
    y_true = np.r_[np.ones(50), np.zeros(50)].astype(int)
    y_pred = np.r_[np.ones(40), np.zeros(10), np.ones(5), np.zeros(45)].astype(int)
    assert M.accuracy_score(y_true, y_pred) == pytest.approx(0.85)
    assert M.recall_score(y_true, y_pred) == pytest.approx(0.8)
    assert M.specificity_score(y_true, y_pred) == pytest.approx(0.9)
    assert M.precision_score(y_true, y_pred) == pytest.approx(40 / 45)
    assert M.f1_score(y_true, y_pred) == pytest.approx(2 * 40 / (2 * 40 + 10 + 5))
    assert M.class_ratio(y_true) == 1.0
    assert M.class_ratio([1, 1, 1, 0]) == 3.0
    assert M.class_ratio(["a", "b", "b"], pos_label="b", sample_weight=[2, 1, 1]) == 1.0
    assert M.class_ratio([1, 1]) == np.inf


def test_zero_division_warns():
    with pytest.warns(M.UndefinedMetricWarning):
        assert M.precision_score([1, 0, 1], [0, 0, 0]) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert M.precision_score([1, 0, 1], [0, 0, 0], zero_division=1) == 1.0
        assert np.isnan(M.precision_score([1, 0, 1], [0, 0, 0], zero_division=np.nan))


@pytest.mark.parametrize("func", [M.accuracy_score, M.precision_score, M.f1_score,
                                  M.confusion_matrix, M.specificity_score])
def test_label_input_validation(func):
    with pytest.raises(ValueError, match="entries"):
        func([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
    with pytest.raises(ValueError, match="NaN"):
        func([0.0, np.nan], [0, 1])
    with pytest.raises(ValueError, match="continuous"):
        func([0.5, 1.0], [0, 1])
    with pytest.raises(ValueError, match="mix"):
        func(["a", "b"], [0, 1])


def test_average_validation():
    with pytest.raises(ValueError, match="average must be one of"):
        M.f1_score([0, 1], [0, 1], average="samples")
    with pytest.raises(ValueError, match="average='binary'"):
        M.f1_score([0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="pos_label"):
        M.f1_score(["a", "b"], ["a", "b"])
    with pytest.raises(ValueError, match="zero_division"):
        M.f1_score([0, 1], [0, 1], zero_division=0.5)
    with pytest.raises(ValueError, match="sample_weight"):
        M.f1_score([0, 1], [0, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="sample_weight"):
        M.f1_score([0, 1], [0, 1], sample_weight=[1, 1, 1])


# --- scores -------------------------------------------------------------------

def _scores(rng, n, ties):
    s = rng.normal(size=n)
    return np.round(s, 0) if ties else s


@pytest.mark.parametrize("seed", SEEDS)
def test_roc_curve_and_auc_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1
    if seed % 4 == 3:
        y = 2 * y - 1              # {-1, 1}
    s = _scores(rng, n, ties=seed % 2 == 0)
    weight = _weights(rng, n) + 0.01 if seed % 3 == 0 else None
    for drop in (True, False):
        ours = M.roc_curve(y, s, sample_weight=weight, drop_intermediate=drop)
        theirs = sk.roc_curve(y, s, sample_weight=weight, drop_intermediate=drop)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert M.roc_auc_score(y, s, sample_weight=weight) == pytest.approx(
        sk.roc_auc_score(y, s, sample_weight=weight), abs=1e-12)
    # string labels with pos_label
    names = np.where(y == y.max(), "spam", "ham")
    fpr, tpr, _ = M.roc_curve(names, s, pos_label="spam")
    np.testing.assert_allclose(fpr, sk.roc_curve(names, s, pos_label="spam")[0])


def _brute_force_auc(y, s, w):
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    num = den = 0.0
    for i in pos:
        for j in neg:
            num += w[i] * w[j] * ((s[i] > s[j]) + 0.5 * (s[i] == s[j]))
            den += w[i] * w[j]
    return num / den


@pytest.mark.parametrize("seed", range(10))
def test_auc_is_ranking_accuracy(seed):
    rng = np.random.default_rng(seed)
    n = 30
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = rng.integers(0, 4, n).astype(float)     # many ties
    w = rng.random(n)
    assert M.roc_auc_score(y, s, sample_weight=w) == pytest.approx(
        _brute_force_auc(y, s, w))
    assert M.pairwise_ranking_accuracy(y, s) == pytest.approx(
        _brute_force_auc(y, s, np.ones(n)))


@pytest.mark.parametrize("seed", range(10))
def test_coverage_curve(seed):
    rng = np.random.default_rng(seed)
    n = 40
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = _scores(rng, n, ties=True)
    fp, tp, thresholds = M.coverage_curve(y, s)
    assert (fp[0], tp[0], thresholds[0]) == (0, 0, np.inf)
    assert (fp[-1], tp[-1]) == ((y == 0).sum(), (y == 1).sum())
    for f, t, th in zip(fp[1:], tp[1:], thresholds[1:]):
        assert f == ((s >= th) & (y == 0)).sum() and t == ((s >= th) & (y == 1)).sum()
    fpr, tpr, thr = M.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, fp / fp[-1])
    np.testing.assert_allclose(tpr, tp / tp[-1])
    np.testing.assert_array_equal(thr, thresholds)


def test_flach_ranking_example():
    # Flach (2012) section 2.2: a ranking + + - + - - has 1 of 9 pairs misranked
    y = [1, 1, 0, 1, 0, 0]
    s = [6, 5, 4, 3, 2, 1]
    assert M.roc_auc_score(y, s) == pytest.approx(8 / 9)
    fp, tp, _ = M.coverage_curve(y, s)
    np.testing.assert_array_equal(fp, [0, 0, 0, 1, 1, 2, 3])
    np.testing.assert_array_equal(tp, [0, 1, 2, 2, 3, 3, 3])


@pytest.mark.parametrize("seed", range(15))
def test_multiclass_auc_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, k = 50, int(rng.integers(3, 5))
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    p = rng.random((n, k))
    if seed % 2:
        p = np.round(p, 1) + 0.01
    p /= p.sum(axis=1, keepdims=True)
    weight = _weights(rng, n) + 0.01 if seed % 3 == 0 else None
    for average in ("macro", "weighted"):
        assert M.roc_auc_score(y, p, average=average, sample_weight=weight) == \
            pytest.approx(sk.roc_auc_score(y, p, average=average, multi_class="ovr",
                                           sample_weight=weight), abs=1e-12)
    names = np.array(["a", "b", "c", "d"])[:k]
    assert M.roc_auc_score(names[y], p, labels=names) == pytest.approx(
        sk.roc_auc_score(names[y], p, multi_class="ovr", labels=names))


def test_score_validation():
    with pytest.raises(ValueError, match="NaN or infinity"):
        M.roc_auc_score([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="NaN or infinity"):
        M.roc_curve([0, 1], [0.1, np.inf])
    with pytest.raises(ValueError, match="one class"):
        M.roc_auc_score([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="entries"):
        M.roc_auc_score([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="sum to 1"):
        M.roc_auc_score([0, 1, 2], [[0.5, 0.5, 0.5]] * 3)
    with pytest.raises(ValueError, match="multi_class"):
        M.roc_auc_score([0, 1, 2], np.eye(3), multi_class="raise")
    with pytest.raises(ValueError, match="pos_label"):
        M.roc_curve(["a", "b"], [0.1, 0.2])
    with pytest.raises(ValueError, match="binary"):
        M.coverage_curve([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="empty"):
        M.roc_curve([], [])


def test_pairwise_ranking_accuracy_groups():
    y = [2, 1, 0, 1, 0, 0, 3]
    s = [0.9, 0.5, 0.5, 0.2, 0.3, 0.3, 1.0]
    groups = [1, 1, 1, 2, 2, 2, 3]
    # group 1: pairs (2>1) ok, (2>0) ok, (1>0) tie -> 2.5 / 3
    # group 2: pairs (1>0) wrong twice -> 0 / 2; group 3: no pair, skipped
    assert M.pairwise_ranking_accuracy(y, s, groups) == pytest.approx((2.5 / 3 + 0) / 2)
    with pytest.raises(ValueError, match="different grades"):
        M.pairwise_ranking_accuracy([1, 1], [0.1, 0.2])


def _brute_force_pairs(y, s):
    num = den = 0.0
    for i, j in itertools.permutations(range(len(y)), 2):
        if y[i] > y[j]:
            den += 1
            num += (s[i] > s[j]) + 0.5 * (s[i] == s[j])
    return num / den


@pytest.mark.parametrize("seed", range(10))
def test_pairwise_ranking_accuracy_brute_force(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 25)
    s = rng.integers(0, 6, 25)
    assert M.pairwise_ranking_accuracy(y, s) == pytest.approx(_brute_force_pairs(y, s))


@pytest.mark.parametrize("seed", range(15))
def test_ndcg_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n_queries, n_docs = int(rng.integers(1, 5)), int(rng.integers(2, 9))
    y = rng.integers(0, 4, (n_queries, n_docs)).astype(float)
    s = rng.integers(0, 3, (n_queries, n_docs)).astype(float)     # ties
    groups = np.repeat(np.arange(n_queries), n_docs)
    for k in (None, 1, 3):
        for ignore_ties in (False, True):
            if ignore_ties:
                s_use = s + rng.random(s.shape) * 1e-3   # no ties: both agree
            else:
                s_use = s
            assert M.ndcg_at_k(y.ravel(), s_use.ravel(), k, groups,
                               ignore_ties=ignore_ties) == pytest.approx(
                sk.ndcg_score(y, s_use, k=k, ignore_ties=ignore_ties))


def test_ndcg_exponential_gain_hand_computed():
    y, s = [3, 0, 1], [0.1, 0.9, 0.5]
    dcg = 0 / 1 + 1 / np.log2(3) + 7 / np.log2(4)
    ideal = 7 / 1 + 1 / np.log2(3)
    assert M.ndcg_at_k(y, s, gain="exponential") == pytest.approx(dcg / ideal)


# --- probabilities ------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_probability_losses_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    weight = _weights(rng, n) + 0.01 if seed % 2 else None
    # binary
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    p = rng.random(n)
    p[0] = 0.0
    assert M.brier_score_loss(y, p, sample_weight=weight) == pytest.approx(
        sk.brier_score_loss(y, p, sample_weight=weight))
    assert M.brier_score(y, p, sample_weight=weight) == pytest.approx(
        2 * sk.brier_score_loss(y, p, sample_weight=weight))
    assert M.log_loss(y, p, sample_weight=weight) == pytest.approx(
        sk.log_loss(y, p, sample_weight=weight))
    assert M.log_loss(y, p, normalize=False) == pytest.approx(
        sk.log_loss(y, p, normalize=False))
    # multi-class
    k = int(rng.integers(3, 5))
    y = rng.integers(0, k, n)
    P = rng.random((n, k))
    P /= P.sum(axis=1, keepdims=True)
    labels = np.arange(k)
    for scale in ("auto", True, False):
        assert M.brier_score_loss(y, P, labels=labels, sample_weight=weight,
                                  scale_by_half=scale) == pytest.approx(
            sk.brier_score_loss(y, P, labels=labels, sample_weight=weight,
                                scale_by_half=scale))
    onehot = np.eye(k)[y]
    expected = np.average(((P - onehot) ** 2).sum(axis=1), weights=weight)
    assert M.brier_score(y, P, labels=labels, sample_weight=weight) == pytest.approx(
        expected)
    assert M.log_loss(y, P, labels=labels, sample_weight=weight) == pytest.approx(
        sk.log_loss(y, P, labels=labels, sample_weight=weight))


def test_probability_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        M.brier_score([0, 1, 2], [[0.2, 0.2, 0.2]] * 3)
    with pytest.raises(ValueError, match="sum to 1"):
        M.log_loss([0, 1, 2], [[0.5, 0.5, 0.5]] * 3)
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        M.brier_score_loss([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="columns"):
        M.log_loss([0, 1, 2], np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="single label"):
        M.log_loss([1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="NaN"):
        M.brier_score([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError, match="entries"):
        M.brier_score([0, 1, 1], [0.5, 0.5])


# --- margin losses -----------------------------------------------------------

def test_margin_loss_values():
    z = np.array([-2.0, 0.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(M.zero_one_loss_margin(z), [1, 1, 0, 0, 0])
    np.testing.assert_allclose(M.hinge_loss_margin(z), [3, 1, 0.5, 0, 0])
    np.testing.assert_allclose(M.logistic_loss_margin(z), np.log2(1 + np.exp(-z)))
    np.testing.assert_allclose(M.logistic_loss_margin(z, base=np.e), np.log1p(np.exp(-z)))
    np.testing.assert_allclose(M.exponential_loss_margin(z), np.exp(-z))
    np.testing.assert_allclose(M.squared_loss_margin(z), (1 - z) ** 2)
    assert M.logistic_loss_margin(0.0) == pytest.approx(1.0)
    assert M.logistic_loss_margin(-800.0) == pytest.approx(800 / np.log(2))  # no overflow
    assert isinstance(M.hinge_loss_margin(0.5), float)


@pytest.mark.parametrize("name", M.MARGIN_LOSSES)
def test_margin_loss_derivatives_by_finite_differences(name):
    loss = M.margin_loss(name, base=np.e if name == "logistic" else 2.0)
    z = np.linspace(-3, 3, 61) + 0.013      # avoid kinks at 0 and 1
    h = 1e-6
    numeric = (loss.value(z + h) - loss.value(z - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(z), numeric, atol=1e-6)
    assert loss(0.3) == loss.value(0.3)
    # every convex surrogate here upper-bounds the 0-1 loss (base 2 for logistic)
    if name != "zero_one":
        surrogate = M.margin_loss(name)
        assert np.all(surrogate.value(z) >= M.zero_one_loss_margin(z) - 1e-12)


def test_margin_loss_errors():
    with pytest.raises(ValueError, match="unknown margin loss"):
        M.margin_loss("huber")
    with pytest.raises(ValueError, match="base"):
        M.margin_loss("logistic", base=1.0)
    with pytest.raises(ValueError, match="NaN"):
        M.hinge_loss_margin([np.nan])


@pytest.mark.parametrize("seed", range(15))
def test_hinge_loss_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    weight = _weights(rng, n) + 0.01 if seed % 2 else None
    y = rng.integers(0, 2, n) * 2 - 1
    d = rng.normal(size=n) * 2
    assert M.hinge_loss(y, d, sample_weight=weight) == pytest.approx(
        sk.hinge_loss(y, d, sample_weight=weight))
    yb = np.where(y > 0, "yes", "no")
    assert M.hinge_loss(yb, d) == pytest.approx(sk.hinge_loss(yb, d))
    k = 4
    y = rng.integers(0, k, n)
    D = rng.normal(size=(n, k))
    assert M.hinge_loss(y, D, labels=np.arange(k), sample_weight=weight) == \
        pytest.approx(sk.hinge_loss(y, D, labels=np.arange(k), sample_weight=weight))


def test_hinge_loss_single_class_like_sklearn():
    y, d = [1, 1, 1], [0.5, -1.0, 2.0]
    assert M.hinge_loss(y, d) == pytest.approx(sk.hinge_loss(y, d))


@pytest.mark.parametrize("seed", range(5))
def test_precision_recall_curve_matches_sklearn(seed):
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 60)
    y[:2] = [0, 1]
    scores = np.round(y + rng.normal(size=60), 1)          # ties included
    w = rng.random(60)
    for kwargs in ({}, {"sample_weight": w}):
        p, r, t = M.precision_recall_curve(y, scores, **kwargs)
        p_ref, r_ref, t_ref = sk.precision_recall_curve(y, scores, **kwargs)
        np.testing.assert_allclose(p, p_ref)
        np.testing.assert_allclose(r, r_ref)
        np.testing.assert_allclose(t, t_ref)
        assert M.average_precision_score(y, scores, **kwargs) == pytest.approx(
            sk.average_precision_score(y, scores, **kwargs))


def test_labels_and_scores_of_one_kind():
    """#35: NaN inside object labels never becomes a class; complex scores are
    refused, not cast to their real part."""
    from linclass.metrics import accuracy_score, roc_auc_score
    with pytest.raises(ValueError, match="NaN"):
        accuracy_score([0, 1], np.array([0.0, float("nan")], dtype=object))
    with pytest.raises(ValueError, match="None"):
        accuracy_score(np.array(["a", None], dtype=object), ["a", "b"])
    with pytest.raises(ValueError, match="complex"):
        roc_auc_score([0, 1, 0, 1], np.array([0.1, 0.2 + 1j, 0.3, 0.4]))
