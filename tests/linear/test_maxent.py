"""MaxEnt: expectation kernels vs numpy, GIS / IIS / L-BFGS reach the same optimum,
equivalence with multinomial logistic regression, input kinds, bad input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _maxent
from linclass.exceptions import ConvergenceWarning
from linclass.linear.logistic import LogisticRegression
from linclass.linear.maxent import MaxEnt


def _indicator_problem(seed=0, n_samples=200, n_features=6):
    rng = np.random.default_rng(seed)
    X = (rng.random((n_samples, n_features)) < 0.4).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.random(n_samples) > 1.2).astype(int)
    return X, y


def test_expectation_kernels_match_numpy():
    rng = np.random.default_rng(1)
    n, K, d = 30, 3, 7
    F = sp.random(n * K, d, density=0.4, random_state=2, format="csr")
    y = rng.integers(0, K, n).astype(np.int32)
    sw = rng.random(n)
    lam = rng.normal(size=d)
    problem = dict(data=F.data, indices=F.indices, indptr=F.indptr, n_samples=n,
                   n_classes=K, n_features=d, y=y, sample_weight=sw)
    dense = F.toarray().reshape(n, K, d)
    scores = dense @ lam
    P = np.exp(scores - np.log(np.exp(scores).sum(1, keepdims=True)))
    empirical = (sw[:, None] * dense[np.arange(n), y]).sum(0)
    model = np.einsum("i,ik,ikd->d", sw, P, dense)
    loglik = np.sum(sw * np.log(P[np.arange(n), y]))
    np.testing.assert_allclose(_maxent.empirical_expectation(**problem), empirical)
    ll, expectation = _maxent.model_expectation(weights=lam, **problem)
    np.testing.assert_allclose(expectation, model)
    assert np.isclose(ll, loglik)
    # the IIS table: grouped by each row's feature total
    totals = dense.sum(2).ravel()
    values, index = np.unique(totals, return_inverse=True)
    ll2, table = _maxent.model_expectation(weights=lam, nf_index=index.astype(np.int32),
                                           n_nf=len(values), **problem)
    assert np.isclose(ll2, loglik)
    np.testing.assert_allclose(table.sum(1), model)
    m = 1
    mask = (totals.reshape(n, K) == values[m])
    np.testing.assert_allclose(table[:, m], np.einsum("i,ik,ikd->d", sw, P * mask, dense))


@pytest.mark.parametrize("prior_variance", [None, 1.0])
def test_gis_iis_lbfgs_reach_the_same_optimum(prior_variance):
    X, y = _indicator_problem()
    results = {}
    for algorithm in ("lbfgs", "gis", "iis"):
        for correction in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = MaxEnt(algorithm, prior_variance=prior_variance, max_iter=3000,
                               tol=1e-12, correction_feature=correction).fit(X, y)
            results[algorithm, correction] = model
    reference = results["lbfgs", False].objective_
    for key, model in results.items():
        assert np.isclose(model.objective_, reference, rtol=1e-7), key
        np.testing.assert_allclose(model.predict_proba(X),
                                   results["lbfgs", False].predict_proba(X), atol=1e-4)


def test_gis_objective_decreases_every_iteration():
    X, y = _indicator_problem(seed=3)
    objectives = []
    for n_iter in range(1, 8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            objectives.append(MaxEnt("gis", max_iter=n_iter, tol=0,
                                     prior_variance=2.0).fit(X, y).objective_)
    assert np.all(np.diff(objectives) < 0)


def test_tensor_features_equal_multinomial_logistic_regression():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 5))
    y = rng.integers(0, 3, 150)
    maxent = MaxEnt("lbfgs", prior_variance=0.8, tol=1e-10, max_iter=1000).fit(X, y)
    logistic = LogisticRegression(C=0.8, fit_intercept=False, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(maxent.coef_.reshape(5, 3).T, logistic.coef_, atol=1e-6)
    np.testing.assert_allclose(maxent.predict_proba(X), logistic.predict_proba(X), atol=1e-7)
    assert np.isclose(maxent.objective_, logistic.objective_, rtol=1e-9)


def test_class_specific_feature_vectors_and_feature_function():
    # a ranking-like problem: the feature of candidate k is "k equals argmax of x"
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    y = np.argmax(X + 0.3 * rng.normal(size=X.shape), axis=1)
    candidates = np.stack([np.stack([[X[i, k], float(k == np.argmax(X[i]))]
                                     for k in range(3)]) for i in range(120)])
    dense = MaxEnt(prior_variance=10.0).fit(candidates, y)
    assert dense.coef_.shape == (2,) and dense.coef_[0] > 0
    as_list = MaxEnt(prior_variance=10.0).fit([sp.csr_matrix(c) for c in candidates], y)
    np.testing.assert_allclose(as_list.coef_, dense.coef_, atol=1e-6)

    def features(x, label):
        return {"value": float(x[label]), "is_max": float(label == np.argmax(x))}

    function = MaxEnt(prior_variance=10.0, feature_function=features).fit(list(X), y)
    ordered = [function.vocabulary_["value"], function.vocabulary_["is_max"]]
    np.testing.assert_allclose(function.coef_[ordered], dense.coef_, atol=1e-6)
    assert function.score(list(X), y) == dense.score(candidates, y) > 0.6


def test_featuresets_like_nltk():
    nltk_classify = pytest.importorskip("nltk.classify")
    rng = np.random.default_rng(6)
    colours, shapes = ["red", "green", "blue"], ["round", "long"]
    train, labels = [], []
    for _ in range(150):
        c, s = rng.choice(colours), rng.choice(shapes)
        extra = {"big": True} if rng.random() < 0.5 else {}
        label = "fruit" if (c == "red") ^ (s == "long") ^ (rng.random() < 0.15) else "veg"
        train.append({"colour": c, "shape": s, **extra})
        labels.append(label)
    for algorithm in ("gis", "iis"):
        # NLTK's GISEncoding takes C = number of attribute names + 1, and its
        # CutoffChecker stops after max_iter - 1 updates
        ours = MaxEnt(algorithm, max_iter=9, tol=0, gis_constant=4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours.fit(train, labels)
        theirs = nltk_classify.MaxentClassifier.train(list(zip(train, labels)),
                                                      algorithm=algorithm, max_iter=10,
                                                      trace=0)
        nltk_proba = np.array([[theirs.prob_classify(fs).prob(c) for c in ours.classes_]
                               for fs in train])
        np.testing.assert_allclose(ours.predict_proba(train), nltk_proba, atol=1e-6)


def _categorical_featuresets(rng, n_samples):
    """Every example carries every attribute name (the usual NLTK case)."""
    values = rng.integers(0, 4, size=(n_samples, 5))
    score = (values[:, 0] == 1) + 1.0 * (values[:, 1] >= 2) - (values[:, 2] == 3) \
        + rng.normal(0, 0.6, n_samples)
    labels = np.where(score > 0.5, "a", np.where(score > -0.3, "b", "c"))
    return [{"x%d" % j: "v%d" % values[i, j] for j in range(5)}
            for i in range(n_samples)], labels


def test_gis_default_constant_matches_nltk_when_every_example_has_every_attribute():
    nltk_classify = pytest.importorskip("nltk.classify")
    rng = np.random.default_rng(11)
    train, labels = _categorical_featuresets(rng, 120)
    test, _ = _categorical_featuresets(rng, 60)
    test += [{"x0": "unseen", "x1": "v0", "x2": "v1", "x3": "v2", "x4": "v3"}]
    # the gold candidate of every example reaches the largest feature total (5):
    # C = 5 would leave the correction feature unattested and pin it at -inf
    ours = MaxEnt("gis", max_iter=9, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours.fit(train, labels)
    assert ours.correction_[0] == 6.0 and np.isfinite(ours.correction_[1])
    theirs = nltk_classify.MaxentClassifier.train(list(zip(train, labels)), algorithm="gis",
                                                  max_iter=10, trace=0)
    for featuresets in (train, test):
        nltk_proba = np.array([[theirs.prob_classify(fs).prob(c) for c in ours.classes_]
                               for fs in featuresets])
        np.testing.assert_allclose(ours.predict_proba(featuresets), nltk_proba, atol=1e-6)
    assert np.all(np.isfinite(ours.decision_function(test)))


def test_gis_default_constant_keeps_the_tightest_bound_when_it_is_attested():
    X, y = _indicator_problem()
    model = MaxEnt("gis", max_iter=5, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    assert model.correction_[0] == X.sum(axis=1).max()


def test_featureset_fast_encoding_equals_item_by_item_encoding():
    rng = np.random.default_rng(12)
    train, labels = _categorical_featuresets(rng, 80)
    numeric = [{name: float(value[1:]) + 0.5 for name, value in fs.items()} for fs in train]
    # numpy scalars take the item-by-item path, Python values the bulk path
    slow_numeric = [{name: np.float64(v) for name, v in fs.items()} for fs in numeric]
    slow_indicators = [{name: np.str_(v) for name, v in fs.items()} for fs in train]
    for fast, slow in ((numeric, slow_numeric), (train, slow_indicators)):
        a = MaxEnt(prior_variance=1.0).fit(fast, labels)
        b = MaxEnt(prior_variance=1.0).fit(slow, labels)
        assert a.vocabulary_ == b.vocabulary_
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.predict_proba(slow), b.predict_proba(fast))
    mixed = [dict(fs, size=1.5) for fs in train]
    model = MaxEnt(prior_variance=1.0).fit(mixed, labels)
    assert ("size", "a") in model.vocabulary_ and ("x0", "v1", "a") in model.vocabulary_
    with pytest.raises(ValueError, match="example 3: feature 'x1' has the value nan"):
        MaxEnt().fit(numeric[:3] + [dict(numeric[3], x1=float("nan"))] + numeric[4:], labels)
    with pytest.raises(ValueError, match="example 2 is a list"):
        MaxEnt().fit(train[:2] + [["x0"]] + train[3:], labels)


def test_convergence_warning_and_bad_input():
    X, y = _indicator_problem()
    with pytest.warns(ConvergenceWarning):
        MaxEnt("iis", max_iter=2, tol=1e-15).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        MaxEnt("gis").fit(X - 0.5, y)
    with pytest.raises(ValueError, match="one class"):
        MaxEnt().fit(X, np.zeros(len(y)))
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MaxEnt().fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent dimensions"):
        MaxEnt().fit([np.ones((2, 3)), np.ones((3, 3))], [0, 1])
    with pytest.raises(ValueError, match="inconsistent dimensions"):
        MaxEnt().fit([np.ones((2, 3)), np.ones((2, 4))], [0, 1])
    model = MaxEnt(prior_variance=1.0).fit(np.ones((4, 2, 3)) * np.arange(2)[:, None], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="inconsistent dimensions"):
        model.predict(np.ones((2, 2, 5)))
    fitted = MaxEnt().fit(X, y)
    pred = fitted.predict(X[:2])
    assert fitted.score(X[:2], [pred[0], 5]) == pytest.approx(0.5)   # unseen label: an error
    with pytest.raises(ValueError, match="algorithm"):
        MaxEnt("sgd").fit(X, y)


def test_save_and_load(tmp_path):
    import linclass
    X, y = _indicator_problem()
    model = MaxEnt("gis", max_iter=20, tol=1e-4).fit(X, y)
    model.save(tmp_path / "me.npz")
    np.testing.assert_allclose(linclass.load(tmp_path / "me.npz").predict_proba(X),
                               model.predict_proba(X))


@pytest.mark.parametrize("algorithm", ["lbfgs", "gis", "iis"])
def test_featureset_model_saves_and_loads(tmp_path, algorithm):
    # featureset input has no fixed width (n_features_in_ = 0): load must accept it
    import linclass
    rng = np.random.default_rng(7)
    X = [{"w=" + str(rng.integers(0, 6)): 1, "s=" + str(rng.integers(0, 3)): 1}
         for _ in range(80)]
    y = [("a" if "w=1" in x or "s=2" in x else "b") for x in X]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MaxEnt(algorithm, max_iter=50).fit(X, y)
    model.save(tmp_path / "me.npz")
    loaded = linclass.load(tmp_path / "me.npz")
    assert loaded.n_features_in_ == 0 and loaded.input_kind_ == "featuresets"
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X))
    assert list(loaded.predict(X)) == list(model.predict(X))


def test_joint_rows_kernel_matches_a_dense_construction():
    from linclass._core import _maxent
    rng = np.random.default_rng(30)
    n_examples, n_attr, K = 25, 9, 3
    counts = rng.integers(0, 6, n_examples)
    ids = np.concatenate([rng.permutation(n_attr)[:c] for c in counts]).astype(np.int64)
    values = rng.choice([0.0, 1.0, 2.5], size=len(ids))
    table = np.where(rng.random((n_attr, K)) < 0.7,
                     rng.permutation(n_attr * K).reshape(n_attr, K), -1).astype(np.int64)
    data, indices, indptr = _maxent.joint_rows(ids, values, counts.astype(np.int64), table)
    F = sp.csr_matrix((data, indices, indptr), shape=(n_examples * K, n_attr * K))
    dense = np.zeros((n_examples * K, n_attr * K))
    start = 0
    for e, c in enumerate(counts):
        for j in range(start, start + c):
            for k in range(K):
                if table[ids[j], k] >= 0:
                    dense[e * K + k, table[ids[j], k]] += values[j]
        start += c
    np.testing.assert_array_equal(F.toarray(), dense)
    assert np.all(F.data != 0)
    assert all(np.all(np.diff(indices[indptr[r]:indptr[r + 1]]) > 0) for r in range(len(indptr) - 1))
    with pytest.raises(ValueError, match="out of range"):
        _maxent.joint_rows(ids + n_attr, values, counts.astype(np.int64), table)
    with pytest.raises(ValueError, match="add up"):
        _maxent.joint_rows(ids, values, counts.astype(np.int64) + 1, table)


def test_numeric_featuresets_cython_walk_equals_the_general_path():
    rng = np.random.default_rng(31)
    train, labels = _categorical_featuresets(rng, 90)
    ints = [{name: int(value[1:]) for name, value in fs.items()} for fs in train]
    slow = [{name: np.int64(v) for name, v in fs.items()} for fs in ints]   # general path
    a = MaxEnt("gis", max_iter=20, tol=0)
    b = MaxEnt("gis", max_iter=20, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a.fit(ints, labels)
        b.fit(slow, labels)
    assert a.vocabulary_ == b.vocabulary_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # unseen names and zero values at prediction; a bool value takes the general path
    test = [dict(fs, unseen=3) for fs in ints[:10]] + [dict(ints[0], x1=0)]
    np.testing.assert_array_equal(a.predict_proba(test), b.predict_proba(test))
    with_bool = [dict(fs, flag=True) for fs in ints]
    model = MaxEnt(prior_variance=1.0).fit(with_bool, labels)
    assert ("flag", True, "a") in model.vocabulary_ and ("x0", "a") in model.vocabulary_
    with pytest.raises(ValueError, match="example 4: feature 'x2' has the value inf"):
        MaxEnt().fit(ints[:4] + [dict(ints[4], x2=float("inf"))] + ints[5:], labels)


def test_iis_newton_kernel_solves_each_feature_equation():
    from linclass._core import _maxent
    rng = np.random.default_rng(32)
    A = rng.uniform(0.01, 1.0, (40, 4))
    nf = np.array([1.0, 2.0, 3.0, 5.0])
    target = rng.uniform(0.05, 2.0, 40)
    base = rng.normal(size=40)
    for inv_var in (0.0, 0.5):
        d = _maxent.iis_newton(A, nf, target, base, inv_var, 50.0 / nf.max())
        residual = (A * np.exp(np.outer(d, nf))).sum(axis=1) + inv_var * (base + d) - target
        np.testing.assert_allclose(residual, 0.0, atol=1e-10)
    with pytest.raises(ValueError, match="inconsistent"):
        _maxent.iis_newton(A, nf[:3], target, base, 0.0, 1.0)
