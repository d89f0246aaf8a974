"""linclass.distributed.fit for MaxEnt on dask's in-process scheduler.

Reference: ``MaxEnt.fit`` on the partitions concatenated (itself checked
against NLTK in tests/linear): the same vocabulary_ (feature layout), the
optimum within a relative 1e-6 of the objective.
"""
import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")

import linclass  # noqa: E402
import linclass.distributed as ld  # noqa: E402
from linclass.linear.maxent import MaxEnt  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield


def _featuresets(n=300, seed=0):
    """Indicator and numeric attributes, three string labels."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        b = int(rng.integers(4))
        fs = {"a%d" % rng.integers(5): "v%d" % rng.integers(3), "b": "w%d" % b,
              "len": float(rng.integers(1, 6)), "up": bool(rng.random() < 0.3)}
        X.append(fs)
        y.append(["p", "q", "r"][b % 3] if rng.random() < 0.8 else "q")
    return X, y


def _bags(items, sizes):
    """A bag with the given partition sizes (zeros allowed)."""
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    parts = [items[bounds[k]:bounds[k + 1]] for k in range(len(sizes))]
    return db.from_delayed([dask.delayed(list)(p) for p in parts])


def _close(got, ref, rel=1e-6):
    assert abs(got.objective_ - ref.objective_) <= rel * abs(ref.objective_)
    assert abs(got.loglik_ - ref.loglik_) <= 2 * rel * abs(ref.objective_)


@pytest.mark.parametrize("sizes", [(300,), (80, 0, 120, 100), (1, 1, 298)])
@pytest.mark.parametrize("prior_variance", [None, 1.0])
def test_featuresets_reach_the_in_memory_optimum_with_the_same_vocabulary(sizes,
                                                                          prior_variance):
    X, y = _featuresets()
    ref = MaxEnt(prior_variance=prior_variance, max_iter=300).fit(X, y)
    info = {}
    got = ld.fit(MaxEnt(prior_variance=prior_variance, max_iter=300), _bags(X, sizes),
                 _bags(y, sizes), info=info)
    assert got.vocabulary_ == ref.vocabulary_            # same keys, same weight indices
    assert list(got.classes_) == list(ref.classes_) == ["p", "q", "r"]
    assert got.input_kind_ == "featuresets"
    _close(got, ref)
    if prior_variance is not None:                       # strictly convex: the same weights
        np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-4)
        np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    assert info["rounds"] >= 5 and info["n_partitions"] == len(sizes)


@pytest.mark.filterwarnings("ignore::linclass.ConvergenceWarning")
def test_default_parameters_one_class_partitions_and_classes_in_one_partition_only():
    X, y = _featuresets(n=240, seed=3)
    order = np.argsort(y, kind="stable")        # sorted by label: one class per partition
    X, y = [X[i] for i in order], [y[i] for i in order]
    counts = [y.count(c) for c in ("p", "q", "r")]
    ref = MaxEnt().fit(X, y)
    got = ld.fit(MaxEnt(), _bags(X, counts), _bags(y, counts))
    assert got.vocabulary_ == ref.vocabulary_
    _close(got, ref)
    assert np.mean(got.predict(X) == ref.predict(X)) >= 0.99


@pytest.mark.filterwarnings("ignore::linclass.ConvergenceWarning")
@pytest.mark.parametrize("params", [
    {"algorithm": "gis"}, {"algorithm": "gis", "prior_variance": 1.0, "max_iter": 40},
    {"algorithm": "iis", "max_iter": 30}, {"algorithm": "iis", "prior_variance": 1.0,
                                           "max_iter": 30},
    {"algorithm": "gis", "correction_feature": False, "max_iter": 20},
    {"algorithm": "gis", "gis_constant": 9.0, "max_iter": 20},
    {"correction_feature": True, "prior_variance": 1.0}])
def test_iterative_scaling_and_the_correction_feature_are_the_in_memory_fit(params):
    """GIS/IIS by exact reductions of the expectation tables: the same iterations as
    in memory, the same weights up to the rounding of the partition sums (the
    unattested features at -inf alike)."""
    X, y = _featuresets(n=200)
    sizes = (60, 0, 140)
    ref = MaxEnt(**params).fit(X, y)
    got = ld.fit(MaxEnt(**params), _bags(X, sizes), _bags(y, sizes))
    assert got.n_iter_ == ref.n_iter_ and got.vocabulary_ == ref.vocabulary_
    finite = np.isfinite(ref.coef_)
    assert np.array_equal(np.isfinite(got.coef_), finite)
    if params.get("algorithm", "lbfgs") == "lbfgs":
        _close(got, ref)
        np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-6)
    else:
        _close(got, ref, rel=1e-12)
        np.testing.assert_allclose(got.coef_[finite], ref.coef_[finite], atol=1e-10)
    assert (got.correction_ is None) == (ref.correction_ is None)
    if ref.correction_ is not None:
        assert got.correction_[0] == ref.correction_[0]
        assert abs(got.correction_[1] - ref.correction_[1]) <= 1e-6
    assert np.array_equal(got.predict(X), ref.predict(X))


def test_pairs_bag_equals_two_bags_and_the_run_is_deterministic():
    X, y = _featuresets(n=200, seed=5)
    sizes = (50, 70, 80)
    a = ld.fit(MaxEnt(prior_variance=2.0), _bags(X, sizes), _bags(y, sizes))
    b = ld.fit(MaxEnt(prior_variance=2.0), _bags(list(zip(X, y)), sizes), None)
    c = ld.fit(MaxEnt(prior_variance=2.0), _bags(list(zip(X, y)), sizes), None)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(b.coef_, c.coef_)


def test_featuresets_with_a_bag_of_sample_weights():
    X, y = _featuresets(n=200, seed=8)
    w = list(np.random.default_rng(8).uniform(0.2, 3.0, 200))
    ref = MaxEnt(prior_variance=1.0).fit(X, y, sample_weight=w)
    sizes = (70, 0, 130)
    got = ld.fit(MaxEnt(prior_variance=1.0), _bags(X, sizes), _bags(y, sizes),
                 sample_weight=_bags(w, sizes))
    _close(got, ref)
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-4)
    with pytest.raises(ValueError, match="partition 2 has 130 inputs but 129 sample weights"):
        ld.fit(MaxEnt(), _bags(X, sizes), _bags(y, sizes), sample_weight=_bags(w[:199],
                                                                            (70, 0, 129)))


def test_numeric_rows_in_a_dask_array_with_sample_weights():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 6))
    y = np.argmax(X[:, :3] + 0.5 * rng.normal(size=(240, 3)), axis=1)
    w = rng.uniform(0.5, 2.0, 240)
    ref = MaxEnt(prior_variance=2.0).fit(X, y, sample_weight=w)
    Xd = da.from_array(sp.csr_matrix(X), chunks=((60, 0, 100, 80), (6,)), asarray=False)
    got = ld.fit(MaxEnt(prior_variance=2.0), Xd, y, sample_weight=w)
    assert got.input_kind_ == "matrix" and got.n_features_in_ == 6
    assert got.coef_.shape == ref.coef_.shape == (18,)
    _close(got, ref)
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-4)


def _length_features(x, label):
    """Class-specific features of a word (module level: picklable for workers)."""
    return {"suffix=%s|%s" % (x[-1:], label): 1.0, "len|%s" % label: len(x) / 5.0,
            "cap": float(x[:1].isupper() and label == "NAME")}


def test_feature_function_and_an_unsorted_classes_parameter():
    rng = np.random.default_rng(2)
    words = ["".join(rng.choice(list("abcdeyz"), size=rng.integers(1, 7))) for _ in range(150)]
    words = [w.capitalize() if rng.random() < 0.3 else w for w in words]
    y = ["NAME" if w[0].isupper() else ("ADJ" if w.endswith("y") else "NOUN") for w in words]
    params = dict(feature_function=_length_features, classes=["NOUN", "NAME", "ADJ"],
                  prior_variance=1.0)
    ref = MaxEnt(**params).fit(words, y)
    got = ld.fit(MaxEnt(**params), _bags(words, (40, 60, 50)), _bags(y, (40, 60, 50)))
    assert list(got.classes_) == ["NOUN", "NAME", "ADJ"]
    assert got.vocabulary_ == ref.vocabulary_
    _close(got, ref)
    assert np.array_equal(got.predict(words), ref.predict(words))


def test_candidate_matrices():
    rng = np.random.default_rng(4)
    cands = [rng.uniform(0, 1, size=(3, 5)) for _ in range(90)]
    y = [int(np.argmax(c @ np.arange(5.0) + rng.normal(size=3))) for c in cands]
    ref = MaxEnt(prior_variance=1.0).fit(cands, y)
    got = ld.fit(MaxEnt(prior_variance=1.0), _bags(cands, (30, 30, 30)), _bags(y, (30, 30, 30)))
    assert got.input_kind_ == "candidates"
    _close(got, ref)
    # inconsistent feature widths across partitions
    bad = cands[:60] + [c[:, :4] for c in cands[60:]]
    with pytest.raises(ValueError, match="inconsistent feature widths across partitions: "
                                         "partition 0 has 5 features, partition 2 has 4"):
        ld.fit(MaxEnt(), _bags(bad, (30, 30, 30)), _bags(y, (30, 30, 30)))


def test_bad_input_is_refused_and_nothing_is_half_written():
    X, y = _featuresets(n=60)
    Xb, yb = _bags(X, (30, 30)), _bags(y, (30, 30))
    rng = np.random.default_rng(0)
    negative = [rng.normal(size=(3, 4)) for _ in range(60)]
    for algorithm in ("gis", "iis"):
        with pytest.raises(ValueError, match="GIS and IIS need non-negative feature values"):
            ld.fit(MaxEnt(algorithm=algorithm), _bags(negative, (30, 30)), yb)
    with pytest.raises(ValueError, match="correction feature needs non-negative"):
        ld.fit(MaxEnt(correction_feature=True), _bags(negative, (30, 30)), yb)
    with pytest.raises(ValueError, match="gis_constant=2 is below the largest feature total"):
        ld.fit(MaxEnt(algorithm="gis", gis_constant=2.0), Xb, yb)
    with pytest.raises(ValueError, match="X has 2 partitions but y has 3"):
        ld.fit(MaxEnt(), Xb, _bags(y, (20, 20, 20)))
    with pytest.raises(ValueError, match="partition 1 has 30 inputs in X but 29 labels"):
        ld.fit(MaxEnt(), Xb, _bags(y[:59], (30, 29)))
    with pytest.raises(ValueError, match="only one class"):
        ld.fit(MaxEnt(), Xb, _bags(["p"] * 60, (30, 30)))
    with pytest.raises(ValueError, match="not in classes"):
        ld.fit(MaxEnt(classes=["p", "q"]), Xb, yb)
    with pytest.raises(ValueError, match="no rows in any partition"):
        ld.fit(MaxEnt(), _bags([], (0, 0)), _bags([], (0, 0)))
    with pytest.raises(ValueError, match="pairs"):
        ld.fit(MaxEnt(), Xb, None)
    with pytest.raises(TypeError, match="dask bag"):
        ld.fit(MaxEnt(), X, y)
    with pytest.raises(TypeError, match="y must be a dask bag"):
        ld.fit(MaxEnt(), Xb, np.asarray(y))
    mixed = X[:30] + [np.ones((3, 4))] * 30
    with pytest.raises(ValueError, match="partition 0 holds featuresets input but partition 1 "
                                         "holds candidates"):
        ld.fit(MaxEnt(), _bags(mixed, (30, 30)), yb)
    with pytest.raises(ValueError, match="partition 1 of X holds list items.*2-D dask array"):
        ld.fit(MaxEnt(), _bags(X[:30] + [[1.0, 2.0]] * 30, (30, 30)), yb)
    fitted = ld.fit(MaxEnt(prior_variance=1.0), Xb, yb)
    coef = fitted.coef_.copy()
    with pytest.raises(ValueError):                          # a failed refit keeps the model
        ld.fit(fitted, Xb, _bags(["p"] * 60, (30, 30)))
    assert np.array_equal(fitted.coef_, coef)
    fresh = MaxEnt()
    with pytest.raises(ValueError):
        ld.fit(fresh, Xb, _bags(["p"] * 60, (30, 30)))
    assert not hasattr(fresh, "coef_")


def test_the_fitted_model_pickles_and_saves_without_dask(tmp_path):
    import pickle
    X, y = _featuresets(n=120)
    got = ld.fit(MaxEnt(prior_variance=1.0), _bags(X, (60, 60)), _bags(y, (60, 60)))
    back = pickle.loads(pickle.dumps(got))
    assert np.array_equal(back.predict_proba(X), got.predict_proba(X))
    # linclass.load refuses featureset MaxEnt models (n_features_in_ = 0) on main as
    # well, in-memory fits included: saved here with numeric input
    rng = np.random.default_rng(0)
    Xn, yn = rng.normal(size=(80, 4)), rng.integers(0, 2, 80)
    got = ld.fit(MaxEnt(prior_variance=1.0), da.from_array(Xn, chunks=(40, 4)), yn)
    got.save(tmp_path / "m.npz")
    back = linclass.load(tmp_path / "m.npz")
    assert np.array_equal(back.predict_proba(Xn), got.predict_proba(Xn))
