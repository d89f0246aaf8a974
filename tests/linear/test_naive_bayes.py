"""Naive Bayes: hand-computed tables, smoothing identities, scikit-learn parity."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.naive_bayes import BernoulliNB, MultinomialNB

# Tiny corpus (Manning, Raghavan & Schuetze 2008, ch. 13, example 13.1):
# vocabulary [chinese, beijing, shanghai, macao, tokyo, japan]
DOCS = np.array([[2, 1, 0, 0, 0, 0],    # Chinese Beijing Chinese       -> c
                 [2, 0, 1, 0, 0, 0],    # Chinese Chinese Shanghai      -> c
                 [1, 0, 0, 1, 0, 0],    # Chinese Macao                 -> c
                 [1, 0, 0, 0, 1, 1]],   # Tokyo Japan Chinese           -> j
                dtype=float)
LABELS = np.array(["c", "c", "c", "j"])
TEST_DOC = np.array([[3, 0, 0, 0, 1, 1]], dtype=float)   # Chinese x3 Tokyo Japan


def test_multinomial_matches_the_textbook_example():
    model = MultinomialNB(alpha=1.0).fit(DOCS, LABELS)
    # P(Chinese|c) = (5+1)/(8+6) = 3/7, P(Tokyo|c) = P(Japan|c) = 1/14
    # P(Chinese|j) = (1+1)/(3+6) = 2/9, P(Tokyo|j) = P(Japan|j) = 2/9
    theta = np.exp(model.feature_log_prob_)
    np.testing.assert_allclose(theta[0, [0, 4, 5]], [3 / 7, 1 / 14, 1 / 14])
    np.testing.assert_allclose(theta[1, [0, 4, 5]], [2 / 9, 2 / 9, 2 / 9])
    np.testing.assert_allclose(np.exp(model.class_log_prior_), [3 / 4, 1 / 4])
    # P(c|d) ~ 3/4 (3/7)^3 (1/14)^2 ~ 0.0003, P(j|d) ~ 1/4 (2/9)^5 ~ 0.0001
    joint = np.array([0.75 * (3 / 7) ** 3 / 14 ** 2, 0.25 * (2 / 9) ** 5])
    np.testing.assert_allclose(model.predict_proba(TEST_DOC)[0], joint / joint.sum())
    assert model.predict(TEST_DOC)[0] == "c"


def test_bernoulli_matches_the_textbook_example():
    # IIR example 13.2: P(Chinese|c) = (3+1)/(3+2) = 4/5, P(Japan|c) = 1/5, ...
    model = BernoulliNB(alpha=1.0).fit(DOCS, LABELS)
    theta = np.exp(model.feature_log_prob_)
    np.testing.assert_allclose(theta[0], [4 / 5, 2 / 5, 2 / 5, 2 / 5, 1 / 5, 1 / 5])
    np.testing.assert_allclose(theta[1], [2 / 3, 1 / 3, 1 / 3, 1 / 3, 2 / 3, 2 / 3])
    # P(c|d) ~ 0.005, P(j|d) ~ 0.022 -> j
    t0, t1 = theta
    present = TEST_DOC[0] > 0
    joint = np.array([0.75 * np.prod(np.where(present, t0, 1 - t0)),
                      0.25 * np.prod(np.where(present, t1, 1 - t1))])
    np.testing.assert_allclose(model.predict_proba(TEST_DOC)[0], joint / joint.sum())
    assert model.predict(TEST_DOC)[0] == "j"


def test_counts_and_class_counts_are_weighted_sums():
    weights = np.array([1.0, 2.0, 0.5, 3.0])
    model = MultinomialNB().fit(DOCS, LABELS, sample_weight=weights)
    np.testing.assert_allclose(model.class_count_, [3.5, 3.0])
    np.testing.assert_allclose(model.feature_count_[1], 3.0 * DOCS[3])
    np.testing.assert_allclose(model.feature_count_[0], (weights[:3, None] * DOCS[:3]).sum(0))


@pytest.mark.parametrize("Model, n_values", [(MultinomialNB, 6), (BernoulliNB, 2)])
def test_m_estimate_identities(Model, n_values):
    # m = 0 is maximum likelihood; Laplace == m-estimate with uniform p, m = n_values
    laplace = Model(alpha=1.0).fit(DOCS, LABELS)
    m_est = Model(m=n_values).fit(DOCS, LABELS)
    np.testing.assert_allclose(m_est.feature_log_prob_, laplace.feature_log_prob_)
    ml = Model(m=0).fit(DOCS, LABELS)
    lidstone0 = Model(alpha=0.0).fit(DOCS, LABELS)
    np.testing.assert_allclose(ml.feature_log_prob_, lidstone0.feature_log_prob_)
    counts = laplace.feature_count_
    totals = counts.sum(1, keepdims=True) if Model is MultinomialNB else laplace.class_count_[:, None]
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(ml.feature_log_prob_, np.log(counts / totals))


def test_m_estimate_with_a_given_prior():
    p = np.array([0.5, 0.1, 0.1, 0.1, 0.1, 0.1])
    model = MultinomialNB(m=3.0, prior_p=p).fit(DOCS, LABELS)
    counts = model.feature_count_
    expected = (counts + 3.0 * p) / (counts.sum(1, keepdims=True) + 3.0)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_), expected)


def test_class_priors_learned_uniform_given():
    assert np.allclose(np.exp(MultinomialNB().fit(DOCS, LABELS).class_log_prior_), [.75, .25])
    assert np.allclose(np.exp(MultinomialNB(fit_prior=False).fit(DOCS, LABELS).class_log_prior_),
                       [.5, .5])
    given = MultinomialNB(class_prior=[0.1, 0.9]).fit(DOCS, LABELS)
    assert np.allclose(np.exp(given.class_log_prior_), [0.1, 0.9])
    with pytest.raises(ValueError, match="class_prior"):
        MultinomialNB(class_prior=[0.5, 0.6]).fit(DOCS, LABELS)


def test_log_proba_does_not_underflow_on_long_documents():
    long_doc = TEST_DOC * 10000
    model = MultinomialNB().fit(DOCS, LABELS)
    log_proba = model.predict_log_proba(long_doc)
    assert np.all(np.isfinite(log_proba))
    assert np.isclose(np.logaddexp(*log_proba[0]), 0.0)
    assert np.isclose(model.predict_proba(long_doc).sum(), 1.0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_same_as_scikit_learn(sparse, alpha):
    sknb = pytest.importorskip("sklearn.naive_bayes")
    rng = np.random.default_rng(3)
    X = rng.poisson(0.4, size=(120, 30)).astype(float)
    y = rng.integers(0, 4, 120)
    w = rng.random(120)
    Xin = sp.csr_matrix(X) if sparse else X
    for ours, theirs in ((MultinomialNB(alpha=alpha), sknb.MultinomialNB(alpha=alpha)),
                         (BernoulliNB(alpha=alpha, binarize=0.5),
                          sknb.BernoulliNB(alpha=alpha, binarize=0.5))):
        ours.fit(Xin, y, sample_weight=w)
        theirs.fit(Xin, y, sample_weight=w)
        np.testing.assert_allclose(ours.predict_log_proba(Xin), theirs.predict_log_proba(Xin),
                                   atol=1e-10)
        np.testing.assert_array_equal(ours.predict(Xin), theirs.predict(Xin))


def test_partial_fit_equals_fit():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(60, 8)).astype(float)
    y = rng.integers(0, 3, 60)
    for Model in (MultinomialNB, BernoulliNB):
        streamed = Model().partial_fit(X[:20], y[:20], classes=[0, 1, 2])
        streamed.partial_fit(sp.csr_matrix(X[20:]), y[20:])
        full = Model().fit(X, y)
        np.testing.assert_allclose(streamed.feature_log_prob_, full.feature_log_prob_)
        np.testing.assert_allclose(streamed.class_log_prior_, full.class_log_prior_)
    with pytest.raises(ValueError, match="classes must be given"):
        MultinomialNB().partial_fit(X, y)
    with pytest.raises(ValueError, match="not seen"):
        MultinomialNB().partial_fit(X, y, classes=[0, 1])


def test_bad_input():
    with pytest.raises(ValueError, match="Negative values"):
        MultinomialNB().fit(-DOCS, LABELS)
    with pytest.raises(ValueError, match="one class"):
        MultinomialNB().fit(DOCS, ["c"] * 4)
    bad = DOCS.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BernoulliNB().fit(bad, LABELS)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MultinomialNB().fit(bad, LABELS)
    model = MultinomialNB().fit(DOCS, LABELS)
    pred = model.predict(DOCS)
    assert model.score(DOCS, list(pred[:3]) + ["x"]) == pytest.approx(0.75)   # unseen: error
    with pytest.raises(ValueError, match="features"):
        model.predict(DOCS[:, :3])
    with pytest.raises(ValueError, match="alpha"):
        MultinomialNB(alpha=-1).fit(DOCS, LABELS)


def test_save_and_load(tmp_path):
    import linclass
    model = BernoulliNB(alpha=0.5).fit(DOCS, LABELS)
    model.save(tmp_path / "nb.npz")
    loaded = linclass.load(tmp_path / "nb.npz")
    np.testing.assert_allclose(loaded.predict_proba(DOCS), model.predict_proba(DOCS))


@pytest.mark.parametrize("alpha", [1.0, 0.01])
def test_sparse_counts_equal_scikit_learn_parameters_and_predictions(alpha):
    """Log-probabilities taken only where a count is not 0 (``_log_smoothed``)
    equal the direct form and scikit-learn's parameters; identical predictions."""
    skl = pytest.importorskip("sklearn.naive_bayes")
    from linclass.linear.naive_bayes import _log_smoothed
    rng = np.random.default_rng(5)
    X = sp.random(300, 400, density=0.05, random_state=5, format="csr",
                  data_rvs=lambda n: rng.integers(1, 6, n).astype(float))
    y = rng.integers(0, 4, 300)
    sw = rng.uniform(0.5, 2.0, 300)
    Xt = sp.random(100, 400, density=0.05, random_state=6, format="csr") * 4
    for ours_cls, name in ((MultinomialNB, "MultinomialNB"), (BernoulliNB, "BernoulliNB")):
        ours = ours_cls(alpha=alpha).fit(X, y, sample_weight=sw)
        peer = getattr(skl, name)(alpha=alpha).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(ours.feature_log_prob_, peer.feature_log_prob_,
                                   rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(ours.predict(Xt), peer.predict(Xt))
        np.testing.assert_allclose(ours.predict_log_proba(Xt), peer.predict_log_proba(Xt),
                                   rtol=1e-10, atol=1e-10)
    counts = np.zeros((3, 50))
    counts[rng.random(counts.shape) < 0.2] = 3.0
    totals = counts.sum(axis=1) + 7.0
    logden = rng.normal(size=3)
    np.testing.assert_allclose(_log_smoothed(counts, 0.5, logden),
                               np.log(counts + 0.5) - logden[:, None], rtol=1e-15)
    np.testing.assert_allclose(_log_smoothed(counts, 0.5, logden, totals=totals),
                               np.log(totals[:, None] - counts + 0.5) - logden[:, None],
                               rtol=1e-15)
