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
    """Log-probabilities taken only where a count is not 0 (the feature-major
    table kernels) equal the direct form and scikit-learn's parameters;
    identical predictions."""
    skl = pytest.importorskip("sklearn.naive_bayes")
    from linclass._core import _naive_bayes
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
    counts = np.zeros((50, 3))                      # feature-major (n_features, K)
    counts[rng.random(counts.shape) < 0.2] = 3.0    # small whole counts: from the tables
    counts[rng.random(counts.shape) < 0.1] = 255.0
    counts[rng.random(counts.shape) < 0.1] = 256.0  # the rest: direct logarithms
    counts[rng.random(counts.shape) < 0.1] = 2.5
    totals = counts.sum(axis=0) + 7.0
    logden = rng.normal(size=3)
    out, absent = np.empty_like(counts), np.empty_like(counts)
    _naive_bayes.multinomial_tables(counts, 0.5, logden, out)
    np.testing.assert_allclose(out, np.log(counts + 0.5) - logden, rtol=1e-15)
    _naive_bayes.bernoulli_tables(counts, 0.5, totals, logden, out, absent)
    np.testing.assert_allclose(out, np.log(counts + 0.5) - logden, rtol=1e-15)
    np.testing.assert_allclose(absent, np.log(totals - counts + 0.5) - logden, rtol=1e-15)
    with pytest.raises(ValueError, match="inconsistent"):
        _naive_bayes.bernoulli_tables(counts, 0.5, totals, logden, out, absent[:10])


def test_sparse_scores_are_scipys_product_bit_for_bit():
    """The prefetching score kernel adds a row's entries in their stored order,
    as scipy's ``csr @ dense`` does: the same bits, with or without a subtracted
    table and with binarisation (= the product with a binarised copy), for
    unsorted rows, empty rows and rows shorter than the prefetch distance."""
    from linclass._core import _naive_bayes
    rng = np.random.default_rng(11)
    X = sp.random(200, 3000, density=0.01, random_state=2, format="csr",
                  data_rvs=lambda n: rng.normal(size=n))
    X = X[rng.permutation(200)]
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    for i in range(0, 200, 7):                      # shuffle some rows' entries
        a, b = X.indptr[i], X.indptr[i + 1]
        order = a + rng.permutation(b - a)
        X.indices[a:b], X.data[a:b] = X.indices[order], X.data[order]
    X.has_sorted_indices = False
    for K in (1, 3, 20):
        table, minus = rng.normal(size=(3000, K)), rng.normal(size=(3000, K))
        out = np.empty((200, K))
        args = dict(data=X.data, indices=X.indices, indptr=X.indptr, n_rows=200, out=out)
        _naive_bayes.sparse_scores(table=table, minus=None, binarize=False, threshold=0.0,
                                   **args)
        np.testing.assert_array_equal(out, X @ table)
        _naive_bayes.sparse_scores(table=table, minus=minus, binarize=False, threshold=0.0,
                                   **args)
        np.testing.assert_array_equal(out, X @ (table - minus))
        binary = X.copy()
        binary.data = (binary.data > 0.3).astype(np.float64)
        binary.eliminate_zeros()
        _naive_bayes.sparse_scores(table=table, minus=minus, binarize=True, threshold=0.3,
                                   **args)
        np.testing.assert_array_equal(out, binary @ (table - minus))
    with pytest.raises(ValueError, match="past"):
        _naive_bayes.sparse_scores(data=X.data[:5], indices=X.indices, indptr=X.indptr,
                                   n_rows=200, table=table, minus=None, binarize=False,
                                   threshold=0.0, out=out)


@pytest.mark.parametrize("binarize", [0.0, 1.5])
def test_bernoulli_binarises_as_it_reads_bit_for_bit(binarize):
    """Counting and scoring ``[x > binarize]`` inside the kernels gives the bits
    of the model fitted and evaluated on an explicitly binarised copy, sparse
    or dense."""
    rng = np.random.default_rng(4)
    X = sp.random(150, 60, density=0.2, random_state=3, format="csr",
                  data_rvs=lambda n: rng.integers(1, 4, n).astype(float))
    y = rng.integers(0, 3, 150)
    w = rng.uniform(0.5, 2.0, 150)
    binary = X.copy()
    binary.data = (binary.data > binarize).astype(np.float64)
    binary.eliminate_zeros()
    reference = BernoulliNB(binarize=None).fit(binary, y, sample_weight=w)
    for Xin in (X, X.toarray()):
        model = BernoulliNB(binarize=binarize).fit(Xin, y, sample_weight=w)
        np.testing.assert_array_equal(model.feature_count_, reference.feature_count_)
        np.testing.assert_array_equal(model.feature_log_prob_, reference.feature_log_prob_)
        np.testing.assert_array_equal(model.predict_joint_log_proba(X),
                                      reference.predict_joint_log_proba(binary))
    np.testing.assert_allclose(model.predict_joint_log_proba(X.toarray()),
                               reference.predict_joint_log_proba(binary), rtol=1e-12)


def test_tables_are_feature_major_views_and_partial_fit_accepts_any_order():
    """``feature_count_`` and ``feature_log_prob_`` are (K, n_features) views of
    feature-major arrays; a model whose counts were set C-ordered (as a loaded
    model's may be) keeps counting correctly."""
    rng = np.random.default_rng(1)
    X = rng.poisson(0.7, size=(80, 12)).astype(float)
    y = rng.integers(0, 3, 80)
    for Model in (MultinomialNB, BernoulliNB):
        model = Model().fit(X, y)
        assert model.feature_count_.shape == model.feature_log_prob_.shape == (3, 12)
        assert model.feature_count_.T.flags.c_contiguous
        assert model.feature_log_prob_.T.flags.c_contiguous
        streamed = Model().partial_fit(X[:40], y[:40], classes=[0, 1, 2])
        streamed.feature_count_ = np.ascontiguousarray(streamed.feature_count_)
        streamed.partial_fit(X[40:], y[40:])
        np.testing.assert_array_equal(streamed.feature_count_, model.feature_count_)
        np.testing.assert_allclose(streamed.feature_log_prob_, model.feature_log_prob_,
                                   rtol=1e-15)


def test_replaced_tables_of_the_wrong_shape_raise_instead_of_reading_out_of_bounds():
    """The scoring kernel indexes the tables by X's columns without bounds checks:
    fitted tables replaced by arrays of the wrong shape raise a ValueError."""
    X = sp.csr_matrix(DOCS)
    for Model in (MultinomialNB, BernoulliNB):
        model = Model().fit(X, LABELS)
        model.feature_log_prob_ = np.zeros((2, 3))
        with pytest.raises(ValueError, match="tables have shape"):
            model.predict(X)
    model = BernoulliNB().fit(X, LABELS)
    model.feature_log_prob_absent_ = np.zeros((2, 5))
    with pytest.raises(ValueError, match="tables have shape"):
        model.predict(X)
    model.feature_count_ = np.zeros((1, 6))                 # one class too few
    with pytest.raises(ValueError, match="feature_count_ has shape"):
        model.partial_fit(X, LABELS)
