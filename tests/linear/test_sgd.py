"""SGDClassifier: losses against finite differences, convergence to the
dual-CD SVM, step-for-step agreement with scikit-learn's SGDClassifier,
divergence, partial_fit, early stopping, bad input."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _checks, _sgd
from linclass.exceptions import ConvergenceWarning
from linclass.linear.sgd import SGD_LOSSES, SGDClassifier, SGDDivergenceError, sgd_loss
from linclass.linear.svm import LinearSVC


def _blobs(n=200, d=6, n_classes=2, seed=0, sep=1.5):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=sep, size=(n_classes, d))
    y = rng.integers(0, n_classes, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y


# ------------------------------------------------------------ losses --

_KINKS = {"hinge": [1.0], "squared_hinge": [1.0], "perceptron": [0.0],
          "modified_huber": [-1.0, 1.0]}


@pytest.mark.parametrize("name", SGD_LOSSES)
def test_loss_derivative_matches_finite_differences(name):
    loss = sgd_loss(name)
    rng = np.random.default_rng(1)
    z = rng.uniform(-4, 4, size=200)
    for kink in _KINKS.get(name, []):
        z = z[np.abs(z - kink) > 1e-3]
    h = 1e-6
    numeric = (loss.value(z + h) - loss.value(z - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(z), numeric, rtol=1e-6, atol=1e-6)
    # the kernel's loss and derivative are the same functions
    code = list(SGD_LOSSES).index(name)
    kernel = np.array([_sgd.loss_py(code, float(v)) for v in z])
    np.testing.assert_allclose(kernel[:, 0], loss.value(z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel[:, 1], loss.derivative(z), rtol=1e-12, atol=1e-12)


def test_loss_values_known_points():
    assert sgd_loss("hinge")(0.0) == 1.0
    assert sgd_loss("perceptron")(-2.0) == 2.0
    assert sgd_loss("squared_hinge")(-1.0) == 4.0
    assert sgd_loss("modified_huber")(-3.0) == 12.0
    assert sgd_loss("exponential")(0.0) == 1.0
    assert sgd_loss("logistic")(0.0) == pytest.approx(np.log(2.0))
    assert sgd_loss("log_loss").name == "logistic"
    with pytest.raises(ValueError, match="unknown loss"):
        sgd_loss("cubic")


def test_logistic_loss_stable_for_large_margins():
    value, deriv = _sgd.loss_py(2, -800.0)
    assert value == pytest.approx(800.0) and deriv == pytest.approx(-1.0)
    value, deriv = _sgd.loss_py(2, 800.0)
    assert value == 0.0 and deriv == 0.0


# ------------------------------------------- convergence to the SVM --

def test_hinge_sgd_converges_to_dual_cd_svm():
    X, y = _blobs(n=150, d=5, sep=1.0, seed=3)
    n, C = X.shape[0], 0.05
    svc = LinearSVC(loss="hinge", C=C, fit_intercept=False, tol=1e-10, max_iter=100000,
                    random_state=0).fit(X, y)
    ysign = np.where(y == 1, 1.0, -1.0)

    def objective(w):      # (1/(C n)) * SVM primal = SGD objective
        return 0.5 / (C * n) * (w @ w) + np.mean(np.maximum(0, 1 - ysign * (X @ w)))

    w_svm = svc.coef_.ravel()
    gaps = []
    for epochs in (100, 3000):
        sgd = SGDClassifier(loss="hinge", alpha=1.0 / (C * n), fit_intercept=False, tol=None,
                            max_iter=epochs, average=True, random_state=0).fit(X, y)
        w_sgd = sgd.coef_.ravel()
        gaps.append(objective(w_sgd) / objective(w_svm) - 1)
    assert 0 <= gaps[1] < gaps[0] / 3          # converging, from above
    assert gaps[1] < 3e-4
    assert np.linalg.norm(w_sgd - w_svm) <= 0.01 * np.linalg.norm(w_svm)
    assert sgd.objective(X, y)[0] == pytest.approx(objective(w_sgd), rel=1e-12)


# --------------------------------- agreement with scikit-learn's SGD --

_SK_CASES = [
    dict(loss="hinge"),
    dict(loss="perceptron"),
    dict(loss="hinge", average=True),
    dict(loss="hinge", average=7),
    dict(loss="hinge", penalty="l1", alpha=1e-2),
    # (with averaging and L1 the two differ on purpose: scikit-learn adds the
    # iterate to the average before the step's L1 penalty, linclass after it)
    dict(loss="hinge", penalty="elasticnet", alpha=1e-2, l1_ratio=0.5),
    dict(loss="hinge", learning_rate="invscaling", eta0=0.1),
    dict(loss="log_loss", learning_rate="constant", eta0=0.01),
    dict(loss="modified_huber", learning_rate="constant", eta0=0.01, average=True),
    dict(loss="squared_hinge", learning_rate="constant", eta0=0.001),
]


@pytest.mark.parametrize("params", _SK_CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_same_steps_as_sklearn_without_shuffling(params, sparse):
    skl = pytest.importorskip("sklearn.linear_model")
    X, y = _blobs(n=300, d=8, seed=4)
    X[X < -0.5] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    ours = SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(X, y)
    peer = skl.SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(X, y)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-9, atol=1e-10)


def test_multiclass_one_vs_rest_and_threads():
    X, y = _blobs(n=300, n_classes=4, seed=5, sep=3.0)
    one = SGDClassifier(random_state=0, average=True).fit(X, y)
    two = SGDClassifier(random_state=0, average=True, n_jobs=2).fit(X, y)
    assert one.coef_.shape == (4, X.shape[1])
    np.testing.assert_array_equal(one.coef_, two.coef_)
    assert one.score(X, y) > 0.9
    # each row is the binary problem "class k against the rest"
    skl = pytest.importorskip("sklearn.linear_model")
    peer = skl.SGDClassifier(random_state=0, average=True).fit(X, y)
    assert abs(one.score(X, y) - peer.score(X, y)) < 0.05


def test_l1_penalty_zeroes_irrelevant_weights():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 20))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    l1 = SGDClassifier(penalty="l1", alpha=0.01, random_state=0, tol=None,
                       max_iter=30).fit(X, y)
    l2 = SGDClassifier(penalty="l2", alpha=0.01, random_state=0, tol=None,
                       max_iter=30).fit(X, y)
    assert np.sum(l1.coef_ == 0) >= 10
    assert np.sum(l2.coef_ == 0) == 0
    assert set(np.flatnonzero(np.abs(l1.coef_[0]) > 0.05)) <= {0, 1} | set(range(20))
    assert np.abs(l1.coef_[0, :2]).min() > 5 * np.abs(l1.coef_[0, 2:]).max()


# ------------------------------------------------------- divergence --

def test_divergence_is_reported_not_nan():
    X, y = _blobs(n=100, seed=6)
    X = X * 10.0
    model = SGDClassifier(loss="squared", learning_rate="constant", eta0=10.0,
                          penalty=None, tol=None, max_iter=50, random_state=0)
    with pytest.raises(SGDDivergenceError, match="diverged.*smaller eta0.*'optimal'"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    assert issubclass(SGDDivergenceError, ValueError)
    # with the optimal schedule the message recommends the other schedules
    huge = SGDClassifier(loss="logistic", tol=None, max_iter=2, random_state=0)
    with pytest.raises(SGDDivergenceError, match="optimal.*use learning_rate='constant' or "
                                                 "'invscaling'"):
        huge.fit(X * 1e300, y)


def _squared_loss_optimum(X, ysign, loss, alpha):
    """min alpha/2 ||w||^2 + mean L(y (w.x + b)) by scipy (reference)."""
    from scipy.optimize import minimize
    n = len(ysign)

    def objective(v):
        w, b = v[:-1], v[-1]
        r = 1 - ysign * (X @ w + b)
        if loss == "squared_hinge":
            r = np.maximum(r, 0)
        g = -2 * r * ysign / n
        return alpha / 2 * w @ w + np.mean(r * r), np.append(alpha * w + X.T @ g, g.sum())

    return minimize(objective, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                    options={"maxiter": 5000, "gtol": 1e-12}).fun


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_squared_losses_converge_with_the_default_optimal_schedule(loss):
    # Bottou's t0 alone starts at 10 / 22 here: every step overshoots (||x||^2 ~ 14)
    rng = np.random.default_rng(3)
    X = (rng.random((600, 40)) < 0.3).astype(float)
    ysign = np.where(X[:, :5].sum(axis=1) + rng.normal(0, 0.7, 600) > 1.5, 1.0, -1.0)
    model = SGDClassifier(loss=loss, random_state=0, average=True, tol=None,
                          max_iter=30).fit(X, ysign)
    optimum = _squared_loss_optimum(X, ysign, loss, 1e-4)
    assert model.objective(X, ysign)[0] <= 1.03 * optimum
    plain = SGDClassifier(loss=loss, random_state=0).fit(sp.csr_matrix(X), ysign)
    assert plain.objective(X, ysign)[0] <= 1.25 * optimum


# ------------------------------------------- partial_fit, stopping --

def test_partial_fit_equals_fit_epochs_without_shuffling():
    X, y = _blobs(n=120, n_classes=3, seed=7)
    full = SGDClassifier(shuffle=False, tol=None, max_iter=3, average=True).fit(X, y)
    inc = SGDClassifier(shuffle=False, tol=None, average=True)
    for _ in range(3):
        inc.partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(inc.coef_, full.coef_, rtol=1e-12)
    np.testing.assert_allclose(inc.intercept_, full.intercept_, rtol=1e-12)
    assert inc.n_iter_ == 3
    with pytest.raises(ValueError, match="classes"):
        SGDClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        inc.partial_fit(X[:, :2], y)
    # a pickled model continues where it stopped
    again = pickle.loads(pickle.dumps(inc)).partial_fit(X, y)
    assert again.n_iter_ == 4


def test_tol_stops_early_and_max_iter_warns():
    X, y = _blobs(n=200, seed=8)
    model = SGDClassifier(random_state=0, max_iter=1000, tol=1e-3).fit(X, y)
    assert model.n_iter_ < 1000
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        SGDClassifier(random_state=0, max_iter=2, tol=1e-3).fit(X, y)


def test_early_stopping_on_validation_fraction():
    X, y = _blobs(n=400, seed=9, sep=2.0)
    model = SGDClassifier(early_stopping=True, validation_fraction=0.2, n_iter_no_change=3,
                          random_state=0, max_iter=500).fit(X, y)
    assert model.n_iter_ < 50
    assert model.score(X, y) > 0.85
    with pytest.raises(ValueError, match="validation_fraction"):
        SGDClassifier(early_stopping=True, validation_fraction=1.5).fit(X, y)


def test_predict_proba_only_for_probabilistic_losses():
    X, y = _blobs(n=200, n_classes=3, seed=10)
    model = SGDClassifier(loss="logistic", random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.classes_[proba.argmax(axis=1)] == model.predict(X)) > 0.95
    assert not hasattr(SGDClassifier(loss="hinge").fit(X, y), "predict_proba")


@pytest.mark.parametrize("params, match", [
    (dict(alpha=-1.0), "alpha"),
    (dict(loss="cubic"), "loss"),
    (dict(penalty="l3"), "penalty"),
    (dict(learning_rate="fast"), "learning_rate"),
    (dict(learning_rate="optimal", alpha=0.0), "alpha"),
    (dict(learning_rate="constant", eta0=0.0), "eta0"),
    (dict(l1_ratio=1.5, penalty="elasticnet"), "l1_ratio"),
    (dict(max_iter=0), "max_iter"),
    (dict(average=-1), "average"),
])
def test_bad_hyperparameters_raise(params, match):
    X, y = _blobs(n=20)
    with pytest.raises(ValueError, match=match):
        SGDClassifier(**params).fit(X, y)


def test_bad_data_raises_before_the_kernel():
    X, y = _blobs(n=20)
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SGDClassifier().fit(X, y)
    with pytest.raises(ValueError):
        SGDClassifier().fit(np.ones((5, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="one class"):
        SGDClassifier().fit(np.ones((5, 2)), np.zeros(5))


def test_save_and_load_roundtrip(tmp_path):
    from linclass.persistence import load
    X, y = _blobs(n=100, n_classes=3, seed=11)
    model = SGDClassifier(random_state=0, average=True).fit(X, y)
    path = model.save(tmp_path / "sgd.npz")
    loaded = load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    loaded.partial_fit(X, y)       # restarts from the published weights
    assert loaded.coef_.shape == model.coef_.shape



# --------------------------------------------- scikit-learn's checks --
try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:     # pragma: no cover
    parametrize_with_checks = None

from linclass.utils import expected_failed_checks  # noqa: E402

if parametrize_with_checks is not None:
    @parametrize_with_checks([SGDClassifier(random_state=0, max_iter=50, tol=None),
                              SGDClassifier(loss="logistic", average=True, random_state=0,
                                            max_iter=50, tol=None)],
                             expected_failed_checks=expected_failed_checks)
    def test_sklearn_compatible(estimator, check):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            check(estimator)


# ------------------------------------------- kernel arithmetic (dot4) --

@pytest.mark.parametrize("nnz", [1, 2, 3, 4, 5, 7, 8, 13])
def test_dot4_sums_in_four_interleaved_partial_sums(nnz):
    rng = np.random.default_rng(nnz)
    v = rng.normal(size=20) * 10.0 ** rng.integers(-8, 8, size=20)
    ind = rng.choice(20, size=nnz, replace=False).astype(np.int32)
    values = rng.normal(size=nnz)
    prods = values * v[ind]
    parts = [0.0] * 4
    for r in range(4):             # each partial sum left to right, as the kernel
        acc = 0.0
        for p in prods[r::4]:
            acc += p
        parts[r] = acc
    expected = (parts[0] + parts[1]) + (parts[2] + parts[3])
    assert _sgd.dot4_py(values, ind, v) == expected
    dense = np.zeros(20)
    dense[ind] = values
    np.testing.assert_allclose(_sgd.dot4_py(dense, None, v), float(dense @ v), rtol=1e-12)
    with pytest.raises(ValueError, match="index out of range"):
        _sgd.dot4_py(values, np.full(nnz, 20, dtype=np.int32), v)


@pytest.mark.parametrize("n_classes", [5, 6, 7, 9])
@pytest.mark.parametrize("params", [dict(loss="hinge"), dict(loss="logistic", average=True)])
@pytest.mark.parametrize("sparse", [True, False])
def test_fused_kernel_vector_lanes_and_tail_equal_the_binary_fits(n_classes, params, sparse):
    """The fused kernel handles the classes 4 lanes at a time plus a scalar
    tail (n_classes % 4 lanes): every lane equals its binary fit bit for bit,
    on sparse rows whose lengths are not multiples of 4 and on dense rows
    (averaged logistic: the one-pass update of the weights and the averaged
    sums, with the prefetch of the sums' rows)."""
    X, y = _blobs(n=240, d=11, n_classes=n_classes, seed=n_classes, sep=2.0)
    X[np.abs(X) < 0.4] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    kw = dict(max_iter=4, tol=None, random_state=1, **params)
    model = SGDClassifier(**kw).fit(X, y)
    for c in range(n_classes):
        ref = SGDClassifier(**kw).fit(X, y == c)
        np.testing.assert_array_equal(model.coef_[c], ref.coef_[0])
        assert model.intercept_[c] == ref.intercept_[0]
    assert model.score(X, y) > 0.6


# ------------------------------------------- all epochs in one call --

def _kernel_args(X, y, loss, averaging, l1_ratio):
    from linclass._validation import kernel_rows
    n, d = X.shape
    return dict(**kernel_rows(X), n_samples=n, n_features=d,
                ysign=np.where(y == 1, 1.0, -1.0), weight=np.linspace(0.5, 1.5, n),
                shuffle=True, loss=loss, learning_rate=1,
                eta0=0.01, power_t=0.5, t0=_sgd.optimal_t0(loss, 1e-3), alpha=1e-3,
                l1_ratio=l1_ratio, intercept_decay=0.01 if sp.issparse(X) else 1.0,
                fit_intercept=True, averaging=averaging,
                average_start=3.0 if averaging else 0.0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss,averaging,l1_ratio", [(0, False, 0.0), (2, True, 0.0),
                                                     (2, False, 0.15), (6, True, 0.15)])
def test_sgd_epochs_equals_one_call_per_epoch(sparse, loss, averaging, l1_ratio):
    """`sgd_epochs` (the fit path without a stopping rule) gives the bits of
    one `sgd_epoch` call per epoch with the same seeds and carried scale."""
    X, y = _blobs(n=150, d=7, seed=3)
    X[np.abs(X) < 0.6] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    args = _kernel_args(X, y, loss, averaging, l1_ratio)
    d = X.shape[1]
    seeds = np.random.default_rng(5).integers(0, 2**63 - 1, size=4)
    out = []
    for batched in (False, True):
        w, U, q = np.zeros(d), np.zeros(d if averaging else 1), np.zeros(d if l1_ratio else 1)
        state = np.array([1.0, 0, 0, 0, 0, 0])
        scale = np.ones(1)
        order = np.arange(X.shape[0], dtype=np.int32)
        if batched:
            status, epochs, stopped = _sgd.sgd_epochs(**args, order=order,
                                                      seeds=seeds.astype(np.uint64), w=w,
                                                      avg_sum=U, l1_q=q, state=state,
                                                      scale=scale)
            assert (status, epochs, stopped) == (0, 4, False)
        else:
            for s in seeds:
                status, _ = _sgd.sgd_epoch(**args, order=order, seed=int(s), w=w,
                                           avg_sum=U, l1_q=q, state=state,
                                           compute_loss=False, scale=scale)
                assert status == 0
        assert scale[0] < 1.0           # the scale was carried, not folded
        _sgd.sgd_fold(w.reshape(-1, 1), state.reshape(1, -1), scale)
        out.append((w, U, q, state, order))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_sgd_epochs_reports_divergence_and_checks_shapes():
    X, y = _blobs(n=60, seed=6)
    args = _kernel_args(X * 1e300, y, 2, False, 0.0)
    w, state = np.zeros(X.shape[1]), np.array([1.0, 0, 0, 0, 0, 0])
    seeds = np.arange(3, dtype=np.uint64)
    status, epochs, stopped = _sgd.sgd_epochs(
        **args, order=np.arange(60, dtype=np.int32), seeds=seeds, w=w, avg_sum=np.zeros(1),
        l1_q=np.zeros(1), state=state, scale=np.ones(1))
    assert status == 1 and epochs == 1 and not stopped
    with pytest.raises(ValueError, match="sgd_epochs: inconsistent array shapes"):
        _sgd.sgd_epochs(**args, order=np.arange(59, dtype=np.int32), seeds=seeds, w=w,
                        avg_sum=np.zeros(1), l1_q=np.zeros(1), state=state,
                        scale=np.ones(1))
    with pytest.raises(ValueError, match="sgd_epochs: scale must be positive"):
        _sgd.sgd_epochs(**args, order=np.arange(60, dtype=np.int32), seeds=seeds, w=w,
                        avg_sum=np.zeros(1), l1_q=np.zeros(1), state=state,
                        scale=np.zeros(1))


def test_fit_without_stopping_rule_equals_per_epoch_fit(capsys):
    """fit(tol=None) runs its epochs in one kernel call (`sgd_epochs`); the
    per-epoch path (one kernel call per epoch, taken with verbose output or
    early stopping) gives the same shuffles, the same bits."""
    X, y = _blobs(n=120, d=5, seed=8)
    for loss, average in (("hinge", False), ("log_loss", True)):
        full = SGDClassifier(loss=loss, average=average, tol=None, max_iter=3,
                             random_state=0).fit(X, y)
        # reference: the per-epoch path, taken by a verbose fit with a stopping
        # rule that cannot trigger within max_iter (n_iter_no_change > max_iter)
        ref = SGDClassifier(loss=loss, average=average, tol=1e-3, n_iter_no_change=10,
                            max_iter=3, random_state=0, verbose=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ref.fit(X, y)
        assert "problem 0 epoch 3: training loss" in capsys.readouterr().out
        np.testing.assert_array_equal(full.coef_, ref.coef_)
        np.testing.assert_array_equal(full.intercept_, ref.intercept_)
        assert full.n_iter_ == ref.n_iter_ == 3 and full.t_ == ref.t_


def test_param_names_cache_follows_subclass_init():
    class Sub(SGDClassifier):
        def __init__(self, loss="hinge", extra=1):
            super().__init__(loss=loss)
            self.extra = extra
    assert "extra" not in SGDClassifier()._get_param_names()
    assert SGDClassifier._get_param_names() == sorted(SGDClassifier().get_params())
    assert Sub._get_param_names() == ["extra", "loss"]
    assert Sub(extra=3).get_params()["extra"] == 3


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("params", [dict(loss="hinge"), dict(loss="log_loss", average=True),
                                    dict(loss="modified_huber", penalty="elasticnet"),
                                    dict(loss="hinge", tol=0.05, n_iter_no_change=2),
                                    dict(loss="log_loss", class_weight="balanced")])
def test_stopping_rule_in_the_kernel_equals_the_per_epoch_rule(params, sparse, capsys):
    """The default fit (tol=1e-3) runs the stopping rule on the training loss
    inside `sgd_epochs`; the verbose fit applies it in Python after each
    `sgd_epoch` call: the same epochs, the same bits, the same warning."""
    X, y = _blobs(n=300, d=8, seed=11, sep=1.0)
    X[np.abs(X) < 0.3] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    for max_iter in (1000, 3):
        kw = dict(random_state=2, max_iter=max_iter, **params)
        with warnings.catch_warnings(record=True) as w_fast:
            warnings.simplefilter("always")
            fast = SGDClassifier(**kw).fit(X, y)
        with warnings.catch_warnings(record=True) as w_ref:
            warnings.simplefilter("always")
            ref = SGDClassifier(verbose=1, **kw).fit(X, y)
        out = capsys.readouterr().out
        assert "epoch %d: training loss" % ref.n_iter_ in out
        assert fast.n_iter_ == ref.n_iter_ and fast.t_ == ref.t_
        np.testing.assert_array_equal(fast.coef_, ref.coef_)
        np.testing.assert_array_equal(fast.intercept_, ref.intercept_)
        warned = [issubclass(w.category, ConvergenceWarning) for w in w_fast]
        assert warned == [issubclass(w.category, ConvergenceWarning) for w in w_ref]
        if max_iter == 3:
            assert fast.n_iter_ == 3 and any(warned)
        else:
            assert fast.n_iter_ < max_iter and not any(warned)


def test_sgd_epochs_stopping_rule_and_fold():
    """`sgd_epochs` with ``tol``: stops after ``n_iter_no_change`` epochs
    without an improvement of the summed loss by ``tol * n_samples`` (a huge
    tol: only the first epoch improves, on +inf); ``fold`` folds the
    scale; bad ``tol``/``n_iter_no_change`` raise."""
    X, y = _blobs(n=80, d=4, seed=12)
    args = _kernel_args(X, y, 2, True, 0.0)
    seeds = np.arange(20, dtype=np.uint64)

    def run(**kw):
        w, U, state, scale = np.zeros(4), np.zeros(4), np.array([1.0, 0, 0, 0, 0, 0]), np.ones(1)
        out = _sgd.sgd_epochs(**args, order=np.arange(80, dtype=np.int32), seeds=seeds, w=w,
                              avg_sum=U, l1_q=np.zeros(1), state=state, scale=scale, **kw)
        return out, w, state, scale
    (status, epochs, stopped), _, _, _ = run(tol=1e300, n_iter_no_change=3)
    assert (status, epochs, stopped) == (0, 4, True)
    (status, epochs, stopped), _, _, _ = run(tol=None)
    assert (status, epochs, stopped) == (0, 20, False)
    (_, _, _), w, state, scale = run(tol=None, fold=False)
    (_, _, _), w_f, state_f, scale_f = run(tol=None, fold=True)
    assert scale[0] < 1.0 and scale_f[0] == 1.0
    _sgd.sgd_fold(w.reshape(-1, 1), state.reshape(1, -1), scale)
    np.testing.assert_array_equal(w, w_f)
    np.testing.assert_array_equal(state, state_f)
    with pytest.raises(ValueError, match="tol must be"):
        run(tol=-1.0)
    with pytest.raises(ValueError, match="n_iter_no_change"):
        run(tol=1e-3, n_iter_no_change=0)


# ------------------------------- binary (indicator) rows: values not read --

@pytest.mark.parametrize("nnz", [1, 2, 3, 4, 5, 7, 8, 13])
def test_dot4_unit_equals_dot4_with_unit_values(nnz):
    rng = np.random.default_rng(nnz)
    v = rng.normal(size=20) * 10.0 ** rng.integers(-8, 8, size=20)
    ind = rng.choice(20, size=nnz, replace=False).astype(np.int32)
    assert _sgd.dot4_unit_py(ind, v) == _sgd.dot4_py(np.ones(nnz), ind, v)
    with pytest.raises(ValueError, match="index out of range"):
        _sgd.dot4_unit_py(np.full(nnz, 20, dtype=np.int32), v)


def _binary_rows(n=300, d=40, n_classes=2, seed=0):
    """Indicator features (every stored value 1.0) that carry the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    P = rng.uniform(0.02, 0.3, size=(n_classes, d))
    X = (rng.uniform(size=(n, d)) < P[y]).astype(np.float64)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("params", [dict(loss="hinge"), dict(loss="hinge", average=True),
                                    dict(loss="log_loss", learning_rate="constant", eta0=0.01,
                                         average=True),
                                    dict(loss="hinge", penalty="elasticnet", alpha=1e-2)])
def test_binary_rows_same_steps_as_sklearn(params):
    """On a matrix whose stored values are all 1.0 the binary epoch reads only
    the column indices; its steps are still scikit-learn's."""
    skl = pytest.importorskip("sklearn.linear_model")
    X, y = _binary_rows(seed=1)
    assert np.all(X.data == 1.0)
    ours = SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(X, y)
    peer = skl.SGDClassifier(shuffle=False, tol=None, max_iter=4, **params).fit(X, y)
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("params", [dict(loss="hinge"), dict(loss="logistic", average=True),
                                    dict(loss="modified_huber", penalty="l1", alpha=1e-3)])
def test_binary_rows_binary_fits_equal_the_fused_lanes_bit_for_bit(params):
    """The binary fits take the index-only path (values all 1.0); the fused
    one-vs-rest kernel reads the values: every lane equals its binary fit bit
    for bit, so skipping the values changes no bit."""
    X, y = _binary_rows(n=260, d=37, n_classes=5, seed=2)
    kw = dict(max_iter=4, tol=None, random_state=3, **params)
    model = SGDClassifier(**kw).fit(X, y)
    for c in range(5):
        ref = SGDClassifier(**kw).fit(X, y == c)
        np.testing.assert_array_equal(model.coef_[c], ref.coef_[0])
        assert model.intercept_[c] == ref.intercept_[0]
    # one stored value other than 1.0 leaves the index-only path: still a fit
    X2 = X.copy()
    X2.data[0] = 2.0
    assert np.all(np.isfinite(SGDClassifier(**kw).fit(X2, y == 0).coef_))


@pytest.mark.parametrize("loss,averaging,l1_ratio", [(0, False, 0.0), (2, True, 0.0),
                                                     (6, True, 0.15)])
def test_index_only_epoch_equals_the_epoch_reading_the_values(loss, averaging, l1_ratio):
    """`sgd_epoch` with ``unit_x`` True (index-only) and False (values read)
    on the same indicator rows: the same bits; None detects it."""
    X, y = _binary_rows(n=180, d=23, seed=4)
    args = _kernel_args(X, y, loss, averaging, l1_ratio)
    assert _checks.csr_unit_values(args["data"], True)
    assert not _checks.csr_unit_values(args["data"], False)        # dense: never
    d = X.shape[1]
    out = []
    for unit_x in (False, True, None):
        w, U, q = np.zeros(d), np.zeros(d if averaging else 1), np.zeros(d if l1_ratio else 1)
        state = np.array([1.0, 0, 0, 0, 0, 0])
        order = np.arange(X.shape[0], dtype=np.int32)
        for seed in (1, 2, 3):
            status, loss_sum = _sgd.sgd_epoch(**args, order=order, seed=seed, w=w,
                                              avg_sum=U, l1_q=q, state=state,
                                              compute_loss=True, unit_x=unit_x)
            assert status == 0
        out.append((w, U, q, state, loss_sum))
    for ref in out[1:]:
        for a, b in zip(out[0], ref):
            np.testing.assert_array_equal(a, b)
    X2 = X.copy()
    X2.data[-1] = 0.5
    assert not _checks.csr_unit_values(X2.data, True)
