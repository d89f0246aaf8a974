"""linclass.distributed.fit on dask's in-process schedulers, against the in-memory fits.

References: the in-memory estimators on the same rows (naive Bayes bit-for-bit
on integer counts; logistic regression's optimum; LinearSVC's primal objective).
"""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import linclass  # noqa: E402
import linclass.distributed as ld  # noqa: E402
from linclass.linear import (BernoulliNB, LinearSVC, LogisticRegression,  # noqa: E402
                             MultinomialNB, Perceptron, Ridge)
from linclass.linear.svm import svm_primal_objective  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield


def _counts(n=240, d=40, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=seed, format="csr")
    X.data = np.floor(X.data * 6) + 1.0                    # word counts
    y = rng.integers(0, n_classes, n)
    return X, y


def _real(n=240, d=30, n_classes=3, seed=1):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(n_classes, d))
    y = rng.integers(0, n_classes, n)
    X = centers[y] + 1.5 * rng.normal(size=(n, d))
    return X, y


def _dask(X, chunks):
    """A dask array with the given row chunk sizes (zeros allowed: empty partitions)."""
    out = da.from_array(X, chunks=(tuple(chunks), (X.shape[1],)), asarray=False)
    assert out.numblocks[0] == len(chunks)
    return out


CHUNKINGS = [(240,), (50, 0, 70, 60, 60), (1,) * 3 + (237,)]


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("model", [MultinomialNB(), BernoulliNB(alpha=0.5),
                                   MultinomialNB(m=2.0), BernoulliNB(fit_prior=False)])
def test_naive_bayes_is_bit_for_bit_the_in_memory_fit(model, chunks):
    X, y = _counts()
    weights = np.random.default_rng(3).integers(0, 4, X.shape[0]).astype(float)
    for sparse in (True, False):
        Xs = X if sparse else X.toarray()
        ref = type(model)(**model.get_params()).fit(Xs, y, sample_weight=weights)
        got = ld.fit(type(model)(**model.get_params()), _dask(Xs, chunks), y,
                     sample_weight=weights)
        for name in ("class_count_", "feature_count_", "class_log_prior_",
                     "feature_log_prob_"):
            assert np.array_equal(getattr(got, name), getattr(ref, name)), name
        assert np.array_equal(got.classes_, ref.classes_)
        assert got.n_features_in_ == ref.n_features_in_


def test_naive_bayes_on_real_values_agrees_to_rounding():
    X, y = _real()
    X = np.abs(X)                                   # tf-idf-like non-negative reals
    ref = MultinomialNB().fit(X, y)
    one = ld.fit(MultinomialNB(), _dask(X, (240,)), y)
    assert np.array_equal(one.feature_log_prob_, ref.feature_log_prob_)
    many = ld.fit(MultinomialNB(), _dask(X, (30, 90, 120)), y)
    np.testing.assert_allclose(many.feature_log_prob_, ref.feature_log_prob_, rtol=1e-13)
    assert np.array_equal(many.predict(X), ref.predict(X))


def test_classes_seen_in_one_partition_only_and_one_class_partitions():
    X, y = _counts(n=120)
    y = np.sort(y)                                  # every partition holds (mostly) one class
    y[y == 2] = 7                                   # a label only the last partition has
    ref = MultinomialNB().fit(X, y)
    got = ld.fit(MultinomialNB(), _dask(X, (40, 40, 40)), da.from_array(y, chunks=40))
    assert list(got.classes_) == [0, 1, 7]
    assert np.array_equal(got.feature_log_prob_, ref.feature_log_prob_)
    lr = ld.fit(LogisticRegression(), _dask(X, (40, 40, 40)), y)
    ref_lr = LogisticRegression().fit(X, y)
    assert abs(lr.objective_ - ref_lr.objective_) <= 1e-6 * ref_lr.objective_


def test_svm_and_perceptron_with_one_class_and_empty_partitions():
    """Sorted labels: partitions of one class each, a class only the last one has,
    and an empty partition; CoCoA still reaches the in-memory objective."""
    X, y = _text_like(n=240, n_classes=3)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    y[y == 2] = 7
    chunks = (80, 0, 80, 80)
    ref = LinearSVC(tol=1e-6, max_iter=5000, random_state=0).fit(X, y)
    info = {}
    got = ld.fit(LinearSVC(random_state=0), _dask(X, chunks), y, info=info, max_rounds=500,
                 local_epochs=2, gap_tol=1e-3)
    assert list(got.classes_) == [0, 1, 7] and info["duality_gap"] <= 1e-3
    codes = np.searchsorted(ref.classes_, y)
    for p in range(3):
        ysign = np.where(codes == p, 1.0, -1.0)
        objective = [svm_primal_objective(X, ysign, np.append(m.coef_[p], m.intercept_[p]),
                                          1.0, np.ones(X.shape[0]), "squared_hinge")
                     for m in (ref, got)]
        assert objective[0] * (1 - 1e-6) <= objective[1] <= objective[0] * (1 + 1e-3)
    # parameter mixing over one-class partitions needs more rounds than over mixed
    # ones, but separates these separable rows as the in-memory perceptron does
    perceptron = ld.fit(Perceptron(random_state=0, max_iter=100), _dask(X, chunks), y)
    assert list(perceptron.classes_) == [0, 1, 7] and np.all(np.isfinite(perceptron.coef_))
    assert np.mean(Perceptron(random_state=0, max_iter=100).fit(X, y).predict(X) == y) == 1.0
    assert np.mean(perceptron.predict(X) == y) == 1.0


@pytest.mark.parametrize("n_classes, sparse, params", [
    (2, True, dict(C=0.3)), (4, True, dict(C=0.3)), (4, False, dict(C=10.0, class_weight="balanced")),
    (2, False, dict(C=10.0, class_weight={0: 2.0})), (2, True, dict(C=1.0, penalty="l1", tol=1e-7)),
    (4, False, dict(C=2.0, fit_intercept=False))])
def test_logistic_regression_reaches_the_in_memory_optimum(n_classes, sparse, params):
    X, y = _real(n_classes=n_classes)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    weights = np.random.default_rng(5).uniform(0.5, 2.0, X.shape[0])
    # the in-memory fit with the distributed fit's solver (solver="auto" may pick Newton
    # in memory, whose optimum is closer than L-BFGS's stop at the default tol)
    ref = LogisticRegression(solver="lbfgs", **params).fit(X, y, sample_weight=weights)
    info = {}
    got = ld.fit(LogisticRegression(**params), _dask(X, (70, 0, 90, 80)), y,
                 sample_weight=da.from_array(weights, chunks=60), info=info)
    assert abs(got.objective_ - ref.objective_) <= 1e-6 * abs(ref.objective_)
    assert got.coef_.shape == ref.coef_.shape and np.array_equal(got.classes_, ref.classes_)
    np.testing.assert_allclose(got.decision_function(X), ref.decision_function(X),
                               atol=1e-2 if params.get("penalty") == "l1" else 1e-3)
    assert info["rounds"] >= 2 and info["n_partitions"] == 4


def _text_like(n=240, d=500, n_classes=2, seed=2):
    """Sparse, high-dimensional rows (CoCoA's home ground: few shared features)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, random_state=seed, format="csr")
    scores = X @ rng.normal(size=(d, n_classes)) + 0.3 * rng.normal(size=(n, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("loss, n_classes, fit_intercept", [("squared_hinge", 2, True),
                                                            ("hinge", 3, False)])
def test_linear_svc_by_cocoa_reaches_the_in_memory_objective(loss, n_classes, fit_intercept):
    X, y = _text_like(n_classes=n_classes)
    params = dict(C=1.0, loss=loss, fit_intercept=fit_intercept)
    ref = LinearSVC(tol=1e-6, max_iter=5000, random_state=0, **params).fit(X, y)
    info = {}
    got = ld.fit(LinearSVC(random_state=0, **params), _dask(X, (120, 0, 120)), y, info=info,
                 max_rounds=500, local_epochs=2, gap_tol=1e-3)
    codes = np.searchsorted(ref.classes_, y)
    cost = np.ones(X.shape[0])
    for p in range(ref.coef_.shape[0]):
        ysign = np.where(codes == (1 if n_classes == 2 else p), 1.0, -1.0)
        objective = [svm_primal_objective(X, ysign, np.append(m.coef_[p], m.intercept_[p]),
                                          float(fit_intercept), cost, loss) for m in (ref, got)]
        assert objective[1] <= objective[0] * (1 + 1e-3)
        assert objective[1] >= objective[0] * (1 - 1e-6)   # the in-memory fit is optimal
    assert info["duality_gap"] <= 1e-3
    assert got.dual_coef_.shape == ref.dual_coef_.shape
    # the dual variables give back w = sum_i alpha_i s_i x_i (problem 0)
    ysign = np.where(codes == (1 if n_classes == 2 else 0), 1.0, -1.0)
    np.testing.assert_allclose(X.T @ (got.dual_coef_[0] * ysign), got.coef_[0], atol=1e-8)
    assert np.mean(got.predict(X) == ref.predict(X)) >= 0.97


def test_cocoa_is_deterministic_for_a_fixed_chunking_and_seed():
    X, y = _text_like(n=150)
    with pytest.warns(linclass.ConvergenceWarning, match="max_rounds=10"):
        fits = [ld.fit(LinearSVC(random_state=3), _dask(X, (50, 50, 50)), y, max_rounds=10)
                for _ in range(2)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    with pytest.warns(linclass.ConvergenceWarning):
        other = ld.fit(LinearSVC(random_state=4), _dask(X, (50, 50, 50)), y, max_rounds=10)
    assert not np.array_equal(other.coef_, fits[0].coef_)


def test_the_fitted_model_is_an_ordinary_model(tmp_path):
    X, y = _counts()
    model = ld.fit(LogisticRegression(), _dask(X, (120, 120)), y)
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = linclass.load(path)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    clone = pickle.loads(pickle.dumps(model))
    assert np.array_equal(clone.coef_, model.coef_)
    assert not any("dask" in type(v).__module__ for v in vars(model).values())


def test_importing_linclass_does_not_import_dask(tmp_path):
    code = ("import sys, linclass, linclass.distributed; "
            "from linclass.linear import LogisticRegression; "
            "assert 'dask' not in sys.modules and 'distributed' not in sys.modules")
    # run outside the source tree: from the checkout's root "import linclass" would find
    # the (possibly unbuilt) sources instead of the installed package
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_bad_input_is_refused_with_a_clear_error():
    X, y = _counts()
    Xd = _dask(X, (120, 120))
    with pytest.raises(TypeError, match="dask array"):
        ld.fit(MultinomialNB(), X, y)
    with pytest.raises(TypeError, match="no distributed algorithm"):
        ld.fit(Ridge(), Xd, y)
    with pytest.raises(ValueError, match="column chunks"):
        ld.fit(MultinomialNB(), da.from_array(X.toarray(), chunks=(120, 20)), y)
    with pytest.raises(ValueError, match="only one class"):
        ld.fit(LogisticRegression(), Xd, np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="has 239 entries"):
        ld.fit(LogisticRegression(), Xd, y[:239])
    with pytest.raises(ValueError, match="continuous"):
        ld.fit(LogisticRegression(), Xd, y + 0.5)
    with pytest.raises(ValueError, match="Negative values"):
        ld.fit(MultinomialNB(), _dask(-X, (120, 120)), y)
    with pytest.raises(ValueError, match="tron"):
        ld.fit(LogisticRegression(solver="tron"), Xd, y % 2)
    with pytest.raises(TypeError, match="client"):
        ld.fit(MultinomialNB(), Xd, y, client="tcp://localhost:8786")
    # a partition whose real width differs from what the dask array declares
    lying = da.concatenate([
        da.from_delayed(dask.delayed(X[:120]), shape=(120, 40), dtype=float, meta=X[:0]),
        da.from_delayed(dask.delayed(X[120:, :39]), shape=(120, 40), dtype=float,
                        meta=X[:0])])
    for model in (MultinomialNB(), LogisticRegression(), LinearSVC(), Perceptron()):
        with pytest.raises(ValueError, match="partition 1 of X has 39 columns"):
            ld.fit(model, lying, y)
    # nothing was half-written by the failed fits
    fresh = LogisticRegression()
    with pytest.raises(ValueError):
        ld.fit(fresh, lying, y)
    assert not hasattr(fresh, "coef_")


def test_parameter_mixing_with_one_partition_is_a_sequence_of_partial_fit_epochs():
    from linclass._validation import draw_seed
    from linclass.distributed.runner import partition_seed
    X, y = _text_like(n=200, n_classes=3)
    info = {}
    got = ld.fit(Perceptron(average=True, max_iter=4, random_state=11), _dask(X, (200,)), y,
                 info=info)
    seed = draw_seed(11)
    ref = Perceptron(average=True)
    for r in range(1, info["rounds"] + 1):
        ref.set_params(random_state=partition_seed(seed, 0, r))
        ref._rng = None
        ref.partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-12, atol=1e-12)


def test_parameter_mixing_separates_separable_data_and_averages_all_updates():
    X, y = _text_like(n=300, n_classes=2, seed=8)
    info = {}
    got = ld.fit(Perceptron(average=True, max_iter=100, random_state=0),
                 _dask(X, (100, 0, 100, 100)), y, info=info)
    ref = Perceptron(average=True, max_iter=100, random_state=0).fit(X, y)
    assert info["rounds"] < 100                     # stopped: an epoch without mistakes
    assert ref.score(X, y) - got.score(X, y) <= 0.02
    plain = ld.fit(Perceptron(max_iter=100, random_state=0), _dask(X, (100, 0, 100, 100)), y)
    assert plain.score(X, y) == 1.0                 # the mixed weights separate the data
    with pytest.raises(ValueError, match="voted"):
        ld.fit(Perceptron(voted=True), _dask(X, (150, 150)), y)


@pytest.mark.parametrize("make", [linclass.LogisticRegression, linclass.LinearSVC,
                                  linclass.Perceptron, linclass.MultinomialNB, linclass.MaxEnt])
def test_all_zero_sample_weight_over_all_partitions_raises(make):
    """#35: all-zero weights name sample_weight (a partition of zero weights alone
    is fine: the others carry the data)."""
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).random((40, 3))
    y = np.arange(40) % 2
    Xd, yd = da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10)
    with pytest.raises(ValueError, match="sample_weight"):
        ld.fit(make(), Xd, yd, sample_weight=da.from_array(np.zeros(40), chunks=10))
    w = np.zeros(40)
    w[:20] = 1.0                                  # two partitions of zero weight
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ld.fit(make(), Xd, yd, sample_weight=da.from_array(w, chunks=10))
    assert model.predict(X).shape == (40,)
