"""Decision meta-estimators against brute force, scikit-learn and the formulas."""
import numpy as np
import pytest

import linclass
from linclass.decision import (CalibratedClassifier, CostSensitiveClassifier, PosteriorCombiner,
                               PriorShiftClassifier, RejectOption, ThresholdTuner,
                               adjust_to_priors, estimate_priors_em, fit_isotonic, fit_platt,
                               laplace_estimate, m_estimate, shift_intercept)
from linclass.linear import GaussianNB, LogisticRegression, MultinomialNB
from linclass.metrics import (average_cost, brier_score_loss, coverage_accuracy_curve,
                              f1_score)


def _blobs(n=120, k=3, seed=0, d=2):
    rng = np.random.RandomState(seed)
    centers = rng.randn(k, d) * 2.0
    y = rng.randint(k, size=n)
    return centers[y] + rng.randn(n, d), y


def test_cost_sensitive_equals_brute_force_expected_cost():
    X, y = _blobs()
    rng = np.random.RandomState(1)
    cost = rng.uniform(0, 5, size=(3, 3))
    np.fill_diagonal(cost, 0.0)
    model = CostSensitiveClassifier(GaussianNB(), cost).fit(X, y)
    P = model.predict_proba(X)
    # brute force: try every prediction, sum the posterior-weighted costs
    expected = []
    for p in P:
        risks = [sum(p[k] * cost[k, j] for k in range(3)) for j in range(3)]
        expected.append(int(np.argmin(risks)))
    np.testing.assert_array_equal(model.predict(X), model.classes_[expected])
    # on the training data, it minimises average cost over all constant tweaks? at least
    # it is no worse than argmax in expected cost
    assert (model.expected_cost(X).min(axis=1) <= model.expected_cost(X)[
        np.arange(len(X)), np.argmax(P, axis=1)] + 1e-12).all()


def test_cost_sensitive_binary_threshold_is_elkan():
    X, y = _blobs(k=2, seed=3)
    c_fp, c_fn = 1.0, 4.0
    model = CostSensitiveClassifier(LogisticRegression(), [[0, c_fp], [c_fn, 0]]).fit(X, y)
    p1 = model.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(model.predict(X), (p1 > c_fp / (c_fp + c_fn)).astype(int))


def test_cost_sensitive_default_is_argmax_and_bad_matrix():
    X, y = _blobs()
    model = CostSensitiveClassifier(GaussianNB()).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), GaussianNB().fit(X, y).predict(X))
    with pytest.raises(ValueError, match="3 classes"):
        CostSensitiveClassifier(GaussianNB(), np.ones((2, 2))).fit(X, y)
    with pytest.raises(ValueError, match="predict_proba"):
        CostSensitiveClassifier(linclass.Perceptron()).fit(X, y)


def test_reject_option_and_coverage_curve():
    X, y = _blobs(seed=4)
    base = GaussianNB().fit(X, y)
    conf = base.predict_proba(X).max(axis=1)
    t = np.median(conf)
    model = RejectOption(GaussianNB(), threshold=t).fit(X, y)
    pred = model.predict(X)
    assert model.reject_label_ == -1
    np.testing.assert_array_equal(pred == -1, conf < t)
    np.testing.assert_array_equal(pred[conf >= t], base.predict(X)[conf >= t])
    cov, acc, thr = coverage_accuracy_curve(y, base.predict(X), conf)
    # brute force each point
    for c, a, th in zip(cov, acc, thr):
        keep = conf >= th
        assert c == pytest.approx(keep.mean())
        assert a == pytest.approx((base.predict(X)[keep] == y[keep]).mean())
    assert cov[len(cov) - 1] == 1.0
    margin = RejectOption(LogisticRegression(), threshold=0.5, criterion="margin").fit(X, y)
    S = np.sort(margin.decision_function(X), axis=1)
    np.testing.assert_array_equal(margin.accepted(X), S[:, 2] - S[:, 1] >= 0.5)
    with pytest.raises(ValueError, match="one of the classes"):
        RejectOption(GaussianNB(), reject_label=1).fit(X, y)


def test_threshold_tuner_matches_exhaustive_search_prefit():
    X, y = _blobs(k=2, seed=5, n=200)
    rng = np.random.RandomState(0)
    y = np.where(rng.rand(len(y)) < 0.15, 1 - y, y)        # noisy labels
    Xtr, ytr, Xva, yva = X[:100], y[:100], X[100:], y[100:]
    est = LogisticRegression().fit(Xtr, ytr)
    tuner = ThresholdTuner(est, scoring="f1", cv="prefit").fit(Xva, yva)
    s = est.decision_function(Xva)
    best = max(f1_score(yva, (s > c).astype(int)) for c in np.r_[s, s.min() - 1])
    assert tuner.best_score_ == pytest.approx(best)
    assert f1_score(yva, tuner.predict(Xva)) == pytest.approx(best)
    # a callable metric reaches the same optimum up to the candidate grid
    tuner2 = ThresholdTuner(est, scoring=lambda a, b: f1_score(a, b), cv="prefit",
                            n_thresholds=500).fit(Xva, yva)
    assert tuner2.best_score_ >= best - 0.02
    cv = ThresholdTuner(LogisticRegression(), cv=3, random_state=0).fit(X, y)
    assert np.isfinite(cv.threshold_)


def test_prior_shift_formula_intercept_and_em():
    X, y = _blobs(k=2, seed=6, n=400)
    model = PriorShiftClassifier(LogisticRegression(), priors=[0.2, 0.8]).fit(X, y)
    base = model.estimator_
    pi = np.bincount(y) / len(y)
    P = base.predict_proba(X)
    Q = P * np.array([0.2, 0.8]) / pi
    np.testing.assert_allclose(model.predict_proba(X), Q / Q.sum(1, keepdims=True))
    # for logistic regression, the intercept shift gives the same posteriors
    z = X @ base.coef_.ravel() + model.intercept_[0]
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], 1 / (1 + np.exp(-z)), rtol=1e-6)
    # EM recovers the priors of a resampled test set (Saerens et al. 2002)
    Xt, yt = _blobs(k=2, seed=6, n=4000)
    idx = np.r_[np.flatnonzero(yt == 0)[:300], np.flatnonzero(yt == 1)]
    model.estimate_priors(Xt[idx])
    true = np.bincount(yt[idx]) / len(idx)
    assert np.abs(model.priors_ - true).max() < 0.05
    priors, _ = estimate_priors_em(base.predict_proba(Xt[idx]), pi)
    np.testing.assert_allclose(priors, model.priors_)
    np.testing.assert_allclose(shift_intercept([0.0, 1.0, 0.0], [1, 1, 1], [1, 2, 1]),
                               [0.0, 1.0, 0.0] + np.log(np.array([0.25, 0.5, 0.25]) * 3))
    np.testing.assert_allclose(shift_intercept([0.5], [0.5, 0.5], [0.2, 0.8]),
                               [0.5 + np.log(4.0)])


def test_adjust_to_priors_identity():
    P = np.array([[0.3, 0.7], [0.9, 0.1]])
    np.testing.assert_allclose(adjust_to_priors(P, [0.5, 0.5], [0.5, 0.5]), P)
    with pytest.raises(ValueError, match="one entry per class"):
        adjust_to_priors(P, [1.0], [0.5, 0.5])


def test_platt_matches_scipy_optimum():
    from scipy.optimize import minimize
    rng = np.random.RandomState(0)
    s = rng.randn(300)
    pos = rng.rand(300) < 1 / (1 + np.exp(-2 * s - 0.5))
    A, B = fit_platt(s, pos)
    n_pos, n_neg = pos.sum(), (~pos).sum()
    t = np.where(pos, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab):
        z = ab[0] * s + ab[1]
        return np.sum(np.logaddexp(0, z) - (1 - t) * z)
    ref = minimize(nll, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose([A, B], ref, atol=1e-4)


def test_isotonic_matches_sklearn():
    sk = pytest.importorskip("sklearn.isotonic")
    rng = np.random.RandomState(1)
    s = np.round(rng.randn(200), 1)           # with ties
    t = (rng.rand(200) < 1 / (1 + np.exp(-s))).astype(float)
    w = rng.uniform(0.5, 2, 200)
    x, yv = fit_isotonic(s, t, w)
    ref = sk.IsotonicRegression(out_of_bounds="clip").fit(s, t, sample_weight=w)
    grid = np.linspace(-4, 4, 101)
    np.testing.assert_allclose(np.interp(grid, x, yv), ref.predict(grid), atol=1e-10)


def test_calibration_prefit_equals_sklearn_sigmoid():
    pytest.importorskip("sklearn")
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator
    X, y = _blobs(k=2, seed=8, n=300)
    est = linclass.LinearSVC(random_state=0).fit(X[:150], y[:150])
    ours = CalibratedClassifier(est, cv="prefit").fit(X[150:], y[150:])
    ref = CalibratedClassifierCV(FrozenEstimator(est), method="sigmoid").fit(X[150:], y[150:])
    # scikit-learn >= 1.6 fits Platt on the raw targets with the same prior smoothing
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=2e-3)


def test_calibration_cv_multiclass_and_isotonic():
    X, y = _blobs(k=3, seed=9, n=300)
    for method in ("sigmoid", "isotonic"):
        model = CalibratedClassifier(linclass.LinearSVC(random_state=0), method=method,
                                     cv=3, random_state=0).fit(X, y)
        P = model.predict_proba(X)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        assert (model.predict(X) == y).mean() > 0.6


def test_calibration_reduces_brier_on_a9a(tmp_path):
    import os
    data = os.path.join(os.environ.get("LINCLASS_DATA", "/work/shared/data"),
                        "libsvm_binary", "a9a.gz")
    if not os.path.exists(data):
        pytest.skip("a9a not found under LINCLASS_DATA")
    from linclass.datasets import load_svmlight_file
    X, y = load_svmlight_file(data, n_features=123)[:2]
    y = (y > 0).astype(int)
    rng = np.random.RandomState(0)
    idx = rng.permutation(X.shape[0])[:12000]
    tr, cal, te = idx[:6000], idx[6000:9000], idx[9000:]
    nb = MultinomialNB().fit(X[tr], y[tr])
    raw = brier_score_loss(y[te], nb.predict_proba(X[te])[:, 1])
    for method in ("sigmoid", "isotonic"):
        cal_model = CalibratedClassifier(nb, method=method, cv="prefit").fit(X[cal], y[cal])
        calibrated = brier_score_loss(y[te], cal_model.predict_proba(X[te])[:, 1])
        assert calibrated < raw - 0.01, (method, raw, calibrated)


def test_posterior_combiner_rules_by_hand():
    X, y = _blobs(seed=10)
    ests = [GaussianNB(), LogisticRegression()]
    fitted = [e.fit(X, y) for e in [GaussianNB(), LogisticRegression()]]
    Ps = [e.predict_proba(X) for e in fitted]
    s = PosteriorCombiner(ests, rule="sum").fit(X, y)
    np.testing.assert_allclose(s.predict_proba(X), (Ps[0] + Ps[1]) / 2)
    p = PosteriorCombiner(ests, rule="product", weights=[1, 1]).fit(X, y)
    prod = np.sqrt(Ps[0] * Ps[1])
    np.testing.assert_allclose(p.predict_proba(X), prod / prod.sum(1, keepdims=True))
    v = PosteriorCombiner(ests + [linclass.MaxEnt()], rule="vote").fit(X, y)
    votes = np.zeros_like(Ps[0])
    for e in v.estimators_:
        votes[np.arange(len(X)), np.argmax(e.predict_proba(X), axis=1)] += 1
    np.testing.assert_allclose(v.predict_proba(X), votes / 3)


def test_laplace_and_m_estimate():
    np.testing.assert_allclose(laplace_estimate([3, 0, 1]), [4 / 7, 1 / 7, 2 / 7])
    np.testing.assert_allclose(laplace_estimate([3, 0, 1], alpha=0), [0.75, 0, 0.25])
    np.testing.assert_allclose(m_estimate([3, 0, 1], prior=[0.5, 0.25, 0.25], m=4),
                               [(3 + 2) / 8, 1 / 8, 2 / 8])
    # Laplace = m-estimate with uniform prior and m = K
    np.testing.assert_allclose(m_estimate([5, 2], m=2), laplace_estimate([5, 2]))
    with pytest.raises(ValueError):
        m_estimate([1, 2], prior=[1, 2, 3])


def test_average_cost_brute_force():
    y_true = np.array([0, 1, 2, 1, 0])
    y_pred = np.array([0, 2, 2, 0, 1])
    C = np.arange(9.0).reshape(3, 3)
    assert average_cost(y_true, y_pred, C) == pytest.approx(
        np.mean([C[a, b] for a, b in zip(y_true, y_pred)]))


@pytest.mark.parametrize("make", [
    lambda: CostSensitiveClassifier(GaussianNB(), [[0, 1, 2], [1, 0, 1], [3, 1, 0]]),
    lambda: CalibratedClassifier(LogisticRegression(), cv=3, random_state=0),
    lambda: CalibratedClassifier(LogisticRegression(), method="isotonic", cv=0.3,
                                 random_state=0),
    lambda: PosteriorCombiner([GaussianNB(), LogisticRegression()], rule="product"),
    lambda: PriorShiftClassifier(GaussianNB(), priors=[0.5, 0.3, 0.2]),
    lambda: RejectOption(GaussianNB(), threshold=0.6),
])
def test_meta_estimators_save_load(make, tmp_path):
    X, y = _blobs(seed=11)
    model = make().fit(X, y)
    path = tmp_path / "m.npz"
    model.save(path)
    again = linclass.load(path)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_allclose(again.predict_proba(X), model.predict_proba(X))


def test_meta_estimators_in_grid_search():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = _blobs(k=2, seed=12)
    pipe = make_pipeline(StandardScaler(),
                         CalibratedClassifier(LogisticRegression(), cv=3, random_state=0))
    grid = GridSearchCV(pipe, {"calibratedclassifier__estimator__C": [0.1, 1.0],
                               "calibratedclassifier__method": ["sigmoid", "isotonic"]}, cv=3)
    grid.fit(X, y)
    assert grid.best_score_ > 0.7
