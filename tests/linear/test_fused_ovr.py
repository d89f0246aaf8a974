"""The fused one-vs-rest kernels: SGDClassifier's multi-class epochs (one pass
over the rows updates all K binary problems, ``_sgd.sgd_epoch_ovr``) and the
multi-class perceptron's transposed-layout epochs give exactly the results of
the per-problem / per-class paths, for every loss, penalty, averaging, stopping
rule, layout and thread count; multi-class SGD without shuffling equals
scikit-learn's one-vs-rest steps."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _perceptron
from linclass._validation import kernel_rows
from linclass.linear.perceptron import Perceptron
from linclass.linear.sgd import SGDClassifier


def _data(n=150, d=12, n_classes=4, seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(n_classes, d))
    y = rng.integers(0, n_classes, n)
    X = centers[y] + rng.normal(size=(n, d))
    X[rng.random(X.shape) > density] = 0.0
    return X, y, rng.uniform(0.5, 2.0, n)


_CASES = [
    dict(loss="hinge"),
    dict(loss="logistic", average=True),
    dict(loss="modified_huber", penalty="elasticnet", average=10),
    dict(loss="squared_hinge", penalty="l1", learning_rate="invscaling", eta0=0.05),
    dict(loss="perceptron", learning_rate="constant", eta0=0.5, tol=1e-3, max_iter=30),
    dict(loss="hinge", penalty="elasticnet", average=True, tol=1e-2, max_iter=50),
    dict(loss="exponential", learning_rate="constant", eta0=0.01, class_weight="balanced"),
]


@pytest.mark.parametrize("params", _CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_one_vs_rest_equals_the_binary_problems(params, sparse):
    """Problem k of the fused kernel = the binary fit of "class k against the
    rest" with the same seed (same shuffles, same arithmetic), bit for bit;
    also with the problems split over threads, and with per-problem stopping."""
    X, y, sw = _data(seed=1)
    X = sp.csr_matrix(X) if sparse else X
    kw = dict(dict(max_iter=7, tol=None, random_state=3), **params)
    cw = kw.pop("class_weight", None)
    if cw == "balanced":     # the per-sample weights of the multi-class problem
        counts = np.bincount(y)
        sw = sw * (len(y) / (len(counts) * counts))[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = [SGDClassifier(**kw).fit(X, y == c, sample_weight=sw) for c in range(4)]
        for n_jobs in (None, 2, 3):
            model = SGDClassifier(n_jobs=n_jobs, class_weight=cw, **kw).fit(
                X, y, sample_weight=sw if cw is None else sw / ((len(y) / (
                    4 * np.bincount(y)))[y]))
            np.testing.assert_array_equal(model.coef_, np.vstack([r.coef_ for r in ref]))
            np.testing.assert_array_equal(model.intercept_,
                                          np.hstack([r.intercept_ for r in ref]))
            assert model.n_iter_ == max(r.n_iter_ for r in ref)
            assert model.t_ == ref[0].t_


@pytest.mark.parametrize("params", [
    dict(loss="hinge"), dict(loss="hinge", average=True),
    dict(loss="log_loss", learning_rate="constant", eta0=0.01),
    dict(loss="hinge", penalty="l1", alpha=1e-2),
    dict(loss="modified_huber", learning_rate="constant", eta0=0.01, average=True)])
def test_multiclass_same_steps_as_sklearn_without_shuffling(params):
    skl = pytest.importorskip("sklearn.linear_model")
    X, y, _ = _data(n=200, d=8, n_classes=3, seed=2)
    for Xv in (X, sp.csr_matrix(X)):
        ours = SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(Xv, y)
        peer = skl.SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(Xv, y)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-9, atol=1e-10)


def test_fused_sgd_deterministic_warm_start_and_partial_fit_across_n_jobs():
    X, y, _ = _data(n=120, n_classes=5, seed=4)
    a = SGDClassifier(random_state=0, tol=None, max_iter=5, average=True).fit(X, y)
    b = SGDClassifier(random_state=0, tol=None, max_iter=5, average=True).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # warm start regroups the problems when n_jobs changes: same result
    c = SGDClassifier(random_state=0, tol=None, max_iter=2, warm_start=True, n_jobs=2).fit(X, y)
    c.set_params(n_jobs=None).fit(X, y)
    d = SGDClassifier(random_state=0, tol=None, max_iter=2, warm_start=True).fit(X, y)
    d.fit(X, y)
    np.testing.assert_array_equal(c.coef_, d.coef_)
    np.testing.assert_array_equal(c.intercept_, d.intercept_)
    # partial_fit through a pickle continues the same run (the pickle drops the
    # random stream, so without shuffling)
    e = SGDClassifier(shuffle=False, average=True).partial_fit(X, y, classes=np.arange(5))
    f = pickle.loads(pickle.dumps(e)).partial_fit(X, y)
    e.partial_fit(X, y)
    np.testing.assert_array_equal(e.coef_, f.coef_)


def test_fused_sgd_divergence_is_reported():
    from linclass.linear.sgd import SGDDivergenceError
    X, y, _ = _data(n=60, n_classes=3, seed=5)
    with pytest.raises(SGDDivergenceError):
        SGDClassifier(loss="squared", learning_rate="constant", eta0=50.0, tol=None,
                      max_iter=20, random_state=0).fit(X * 100, y)


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_perceptron_fused_epochs_equal_the_per_class_epochs(average, fit_intercept, sparse):
    X, y, cost = _data(n=150, d=12, n_classes=5, seed=6)
    X = sp.csr_matrix(X) if sparse else X
    y = y.astype(np.int32)
    start = np.random.default_rng(0).normal(size=(5, 13))
    out = []
    for fused in (0, 1):
        W, U = start.copy(), np.zeros((5, 13))
        res = _perceptron.perceptron_fit(
            **kernel_rows(X), n_samples=150, n_features=12, y=y, cost=cost, coef=W,
            avg_sum=U, n_seen=3.0, max_epochs=6, batch=False, shuffle=True, seed=7,
            eta=0.7, fit_intercept=fit_intercept, average=average,
            stop_when_separated=True, record_mistakes=True, fused=fused)
        out.append((W, U, res))
    (W0, U0, r0), (W1, U1, r1) = out
    np.testing.assert_array_equal(W0, W1)
    np.testing.assert_array_equal(U0, U1)
    assert r0[0] == r1[0] and r0[2] == r1[2]
    np.testing.assert_array_equal(r0[1], r1[1])
    for key in r0[3]:
        np.testing.assert_array_equal(r0[3][key], r1[3][key])
    assert not np.array_equal(W0, start)


def test_perceptron_model_at_its_defaults_equals_the_per_class_path():
    """The averaged multi-class Perceptron (which takes the fused path here)
    publishes exactly the average of the per-class kernel path run on the
    same seed."""
    X, y, _ = _data(n=80, d=6, n_classes=3, seed=8, density=1.0)
    model = Perceptron(average=True, max_iter=4, random_state=0).fit(X, y)
    from linclass._validation import draw_seed
    seed = draw_seed(0)
    W, U = np.zeros((3, 7)), np.zeros((3, 7))
    _perceptron.perceptron_fit(
        **kernel_rows(X), n_samples=80, n_features=6, y=y.astype(np.int32), cost=np.ones(80),
        coef=W, avg_sum=U, n_seen=0.0, max_epochs=4, batch=False, shuffle=True, seed=seed,
        eta=1.0, fit_intercept=True, average=True, stop_when_separated=True,
        record_mistakes=False, fused=0)
    n_seen = 80.0 * model.n_iter_
    avg = W - U / n_seen
    np.testing.assert_allclose(model.coef_, avg[:, :-1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, avg[:, -1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_loaded_model_restarts_every_block_from_its_weights(tmp_path, n_jobs):
    from linclass.persistence import load
    X, y, _ = _data(n=100, n_classes=4, seed=9)
    model = SGDClassifier(random_state=0, n_jobs=n_jobs, tol=None, max_iter=3).fit(X, y)
    loaded = load(model.save(tmp_path / "sgd.npz"))
    # a vanishing step: partial_fit keeps the weights each block restarted from
    loaded.set_params(learning_rate="constant", eta0=1e-300).partial_fit(X, y)
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    np.testing.assert_array_equal(loaded.intercept_, model.intercept_)
