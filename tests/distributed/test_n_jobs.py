"""Multi-core training on one machine: ``n_jobs`` threads.

LogisticRegression and MaxEnt sum their data term over ``n_jobs`` row blocks
(GIL-free kernels, block order fixed): ``n_jobs=1`` is the single-threaded
fit bit for bit, ``n_jobs=2`` is deterministic and reaches the same optimum
(reference: the single-threaded fit).  The sequence tagger mixes ``n_jobs``
shards (parameter mixing): deterministic for a fixed seed and ``n_jobs``.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linclass
from linclass.linear import LogisticRegression
from linclass.linear.maxent import MaxEnt


def _sparse_problem(n=600, d=400, n_classes=4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, random_state=seed, format="csr")
    y = np.argmax(X @ rng.normal(size=(d, n_classes)) + 0.3 * rng.normal(size=(n, n_classes)),
                  axis=1)
    return X, y


@pytest.mark.parametrize("case", ["multinomial", "binary-dense", "tron", "l1", "weights"])
def test_logistic_regression_threads(case):
    X, y = _sparse_problem()
    params, fit_args = {}, {}
    if case == "binary-dense":
        X, y = X.toarray(), y % 2
    elif case == "tron":
        y, params = y % 2, {"solver": "tron"}
    elif case == "l1":
        params = {"penalty": "l1", "C": 2.0}
    elif case == "weights":
        fit_args = {"sample_weight": np.random.default_rng(1).uniform(0.5, 2, X.shape[0])}
        params = {"class_weight": "balanced"}
    single = LogisticRegression(**params).fit(X, y, **fit_args)
    one = LogisticRegression(n_jobs=1, **params).fit(X, y, **fit_args)
    assert np.array_equal(one.coef_, single.coef_)
    assert np.array_equal(one.intercept_, single.intercept_)
    two = [LogisticRegression(n_jobs=2, **params).fit(X, y, **fit_args) for _ in range(2)]
    assert np.array_equal(two[0].coef_, two[1].coef_)
    assert np.array_equal(two[0].intercept_, two[1].intercept_)
    assert abs(two[0].objective_ - single.objective_) <= 1e-6 * single.objective_
    three = LogisticRegression(n_jobs=3, **params).fit(X, y, **fit_args)
    assert abs(three.objective_ - single.objective_) <= 1e-6 * single.objective_


def test_the_threaded_data_term_is_the_sum_of_the_blocks():
    from linclass.linear.logistic import (ThreadedSum, _Objective, _ThreadedObjective,
                                          row_block_bounds)
    X, y = _sparse_problem(n=101)
    w = np.ones(X.shape[0])
    theta = np.random.default_rng(2).normal(size=(X.shape[1] + 1) * 4)
    whole = _Objective(X, y, w, 4, True, None, None).loss_grad(theta)
    with ThreadedSum(3) as threads:
        parts = _ThreadedObjective(X, y, w, 4, True, threads, 3)
        got = parts.loss_grad(theta)
    bounds = row_block_bounds(X, 3)
    assert bounds[0] == 0 and bounds[-1] == 101 and np.all(np.diff(bounds) > 0)
    assert len(parts.parts) == 3
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], whole[1], rtol=1e-12, atol=1e-12)


def test_logistic_regression_n_jobs_is_saved_validated_and_capped(tmp_path):
    X, y = _sparse_problem(n=60)
    model = LogisticRegression(n_jobs=-1).fit(X, y)          # all CPUs
    model.set_params(n_jobs=2).save(tmp_path / "lr.npz")
    assert linclass.load(tmp_path / "lr.npz").get_params()["n_jobs"] == 2
    LogisticRegression(n_jobs=64).fit(X[:5], np.arange(5) % 2)  # more threads than rows
    with pytest.raises(ValueError, match="n_jobs"):
        LogisticRegression(n_jobs=0).fit(X, y)


def _featuresets(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = [{"a%d" % rng.integers(40): "v%d" % rng.integers(3), "b": "w%d" % (i % 4),
          "n": float(rng.integers(1, 5))} for i in range(n)]
    y = [["p", "q", "r"][(i % 4) % 3] if rng.random() < 0.8 else "q" for i in range(n)]
    return X, y


@pytest.mark.parametrize("prior_variance", [None, 1.0])
def test_maxent_threads(prior_variance):
    X, y = _featuresets()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linclass.ConvergenceWarning)
        single = MaxEnt(prior_variance=prior_variance).fit(X, y)
        one = MaxEnt(prior_variance=prior_variance, n_jobs=1).fit(X, y)
        two = [MaxEnt(prior_variance=prior_variance, n_jobs=2).fit(X, y) for _ in range(2)]
        three = MaxEnt(prior_variance=prior_variance, n_jobs=3).fit(X, y)
    assert np.array_equal(one.coef_, single.coef_)
    assert np.array_equal(two[0].coef_, two[1].coef_)
    if prior_variance is not None:     # without a prior the weights run off to -inf
        for model in (two[0], three):
            assert abs(model.objective_ - single.objective_) <= 1e-6 * abs(single.objective_)
    else:
        assert two[0].objective_ <= 1.01 * single.objective_
    # numeric input, and blocks without any non-zero
    rng = np.random.default_rng(3)
    Xn = rng.normal(size=(90, 3))
    Xn[:40] = 0.0
    yn = rng.integers(0, 2, 90)
    ref = MaxEnt(prior_variance=1.0).fit(Xn, yn)
    got = MaxEnt(prior_variance=1.0, n_jobs=4).fit(Xn, yn)
    assert abs(got.objective_ - ref.objective_) <= 1e-9 * ref.objective_
    with pytest.raises(ValueError, match="n_jobs"):
        MaxEnt(n_jobs=0).fit(X, y)


def test_sequence_tagger_n_jobs_is_deterministic():
    from linclass.datasets import load_bundled_ud_english
    from linclass.sequence import SequenceTagger
    sentences = load_bundled_ud_english("train")[:300]
    X = [s.column("form") for s in sentences]
    Y = [s.column("upos") for s in sentences]
    params = {"features": "w[0] w[-1] suffix3(w[0])", "max_iter": 3, "random_state": 0}
    single = SequenceTagger(**params).fit(X, Y)
    one = SequenceTagger(n_jobs=1, **params).fit(X, Y)
    assert np.array_equal(single.emission_, one.emission_)
    two = [SequenceTagger(n_jobs=2, **params).fit(X, Y) for _ in range(2)]
    assert np.array_equal(two[0].emission_, two[1].emission_)
    assert np.array_equal(two[0].transitions_, two[1].transitions_)
    assert abs(two[0].score(X, Y) - single.score(X, Y)) < 0.03


def test_cocoa_on_local_threads_equals_the_synchronous_run():
    """Multi-core CoCoA+ on one machine: linclass.distributed.fit without a client runs
    the partitions on dask's thread pool (the _cocoa kernel releases the GIL); for a
    fixed chunking and seed the result is the synchronous one, bit for bit."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    import linclass.distributed as ld
    from linclass.linear import LinearSVC
    X, y = _sparse_problem(n=300, n_classes=3)
    Xd = da.from_array(X, chunks=((150, 150), (X.shape[1],)), asarray=False)
    fits = {}
    for scheduler in ("synchronous", "threads"):
        with dask.config.set(scheduler=scheduler, num_workers=2), warnings.catch_warnings():
            warnings.simplefilter("ignore", linclass.ConvergenceWarning)
            fits[scheduler] = ld.fit(LinearSVC(random_state=0), Xd, y, max_rounds=20)
    assert np.array_equal(fits["threads"].coef_, fits["synchronous"].coef_)
    assert np.array_equal(fits["threads"].intercept_, fits["synchronous"].intercept_)
