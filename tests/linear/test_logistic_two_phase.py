"""The two-phase multinomial pass (residuals over row blocks, gradient over
feature-column blocks of X.T with prior, scaling and max |g| fused) against the
one-pass kernel plus the prior in numpy, and the blocked L-BFGS driver (direction,
g.d and the unit-step trial point in one pass) against scikit-learn's optimum."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.logistic import (LogisticRegression, ThreadedSum, _Objective,
                                      _ThreadedObjective)


def _problem(n=230, d=150, K=5, seed=0):
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=0.05, random_state=seed, format="csr").toarray()
    A[7] = 0.0                                   # an empty row
    A[:, 11] = 0.0                               # an empty column
    X = sp.csr_matrix(A)
    y = rng.integers(0, K, n).astype(np.int32)
    w = rng.uniform(0.2, 3.0, n)
    return X, y, w


def _reference(objective, theta):
    """Data term by the one-pass kernel, prior and scaling in numpy."""
    loss, grad = objective.loss_grad(theta)
    pen = objective.inv_var * theta
    return (loss + 0.5 * theta @ pen) / objective.scale, (grad + pen) / objective.scale


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_two_phase_pass_equals_the_one_pass_kernel(fit_intercept, n_blocks):
    X, y, w = _problem()
    K, d = 5, X.shape[1]
    rng = np.random.default_rng(1)
    inv_var = np.repeat(rng.uniform(0.1, 2.0, d + fit_intercept), K)
    if fit_intercept:
        inv_var[-K:] = 0.0                       # unpenalised intercepts
    theta = rng.normal(size=(d + fit_intercept) * K)

    def make(threads):
        if threads is None:
            objective = _Objective(X, y, w, K, fit_intercept, None, None)
        else:
            objective = _ThreadedObjective(X, y, w, K, fit_intercept, threads, n_blocks)
        objective.inv_var, objective.scale = inv_var, float(w.sum())
        return objective

    serial = make(None)
    f_ref, g_ref = _reference(serial, theta)
    f1, g1 = serial.l2(theta)
    assert serial._columns                        # the two-phase path ran
    np.testing.assert_allclose(f1, f_ref, rtol=1e-13)
    np.testing.assert_allclose(g1, g_ref, rtol=1e-12, atol=1e-15)
    assert serial.grad_max_abs(g1) == np.max(np.abs(g1))
    with ThreadedSum(n_blocks) as threads:
        threaded = make(threads)
        f2, g2 = threaded.l2(theta)
    np.testing.assert_array_equal(g2, g1)        # column blocks: the same sums exactly
    np.testing.assert_allclose(f2, f1, rtol=1e-14)


def test_gradients_held_by_the_caller_are_never_overwritten():
    X, y, w = _problem(seed=2)
    K, d = 5, X.shape[1]
    objective = _Objective(X, y, w, K, True, None, None)
    objective.inv_var, objective.scale = np.full((d + 1) * K, 0.5), float(w.sum())
    rng = np.random.default_rng(3)
    held = []
    for _ in range(7):
        theta = rng.normal(size=(d + 1) * K)
        f, g = objective.l2(theta)
        held.append((theta, g, g.copy()))
        objective.l2(rng.normal(size=(d + 1) * K))     # a result nobody keeps
    for theta, g, copy in held:
        np.testing.assert_array_equal(g, copy)
        np.testing.assert_allclose(g, _reference(objective, theta)[1], rtol=1e-12, atol=1e-15)


def test_full_prior_covariance_and_binary_keep_the_one_pass_kernel():
    X, y, w = _problem(d=20, seed=4)
    objective = _Objective(X, y % 2, w, 2, True, None, None)
    objective.inv_var, objective.scale = np.ones(21), 1.0
    objective.l2(np.zeros(21))
    assert objective._columns is False
    dense = _Objective(X.toarray(), y, w, 5, True, None, None)
    dense.inv_var, dense.scale = np.ones(21 * 5), 1.0
    dense.l2(np.zeros(21 * 5))
    assert dense._columns is False


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_many_parameters_reach_scikit_learns_optimum(n_jobs):
    """>= 8192 parameters: the blocked driver (fused direction and unit step) and the
    two-phase pass reach the optimum of scikit-learn's multinomial lbfgs run to a
    tight tolerance (same objective C sum loss + ||W||^2 / 2)."""
    from sklearn.linear_model import LogisticRegression as SkLR
    rng = np.random.default_rng(5)
    X = sp.random(500, 3000, density=0.01, format="csr", random_state=6)
    y = np.argmax(X @ rng.normal(size=(3000, 4)) + 0.05 * rng.normal(size=(500, 4)), axis=1)
    ours = LogisticRegression(C=10.0, tol=1e-8, n_jobs=n_jobs).fit(X, y)
    assert (X.shape[1] + 1) * 4 >= 8192 and ours.solver_ == "lbfgs"
    sk = SkLR(C=10.0, tol=1e-12, max_iter=20000).fit(X, y)
    W, b = sk.coef_, sk.intercept_
    Z = np.asarray(X @ W.T) + b
    Z -= Z.max(axis=1, keepdims=True)
    loss = -np.sum(Z[np.arange(len(y)), y] - np.log(np.exp(Z).sum(axis=1)))
    sk_objective = 10.0 * loss + 0.5 * np.sum(W ** 2)
    assert ours.objective_ <= sk_objective * (1 + 1e-7)
    assert np.mean(ours.predict(X) == sk.predict(X)) >= 0.99


@pytest.mark.parametrize("threaded", [False, True])
def test_blocked_driver_backtracks_from_the_fused_unit_step(threaded):
    """>= 8192 parameters: the unit-step trial point comes from the fused direction pass
    (which does not write d); rejected unit steps rebuild d = x_trial - x and backtrack.
    An exponential objective rejects many unit steps; the minimiser is known."""
    from linclass.linear._lbfgs import lbfgs_minimize
    rng = np.random.default_rng(7)
    n = 10000
    weight = rng.uniform(0.5, 5.0, n)
    target = rng.uniform(0.5, 3.0, n)
    calls = []

    def fun(x):
        calls.append(1)
        e = np.exp(x)
        return float(weight @ (e - target * x)), weight * (e - target)

    x0 = np.full(n, 2.5)
    if threaded:
        with ThreadedSum(2) as threads:
            x, f, n_iter, converged = lbfgs_minimize(fun, x0, gtol=1e-9, max_iter=500,
                                                     threads=threads)
    else:
        x, f, n_iter, converged = lbfgs_minimize(fun, x0, gtol=1e-9, max_iter=500)
    assert converged
    assert len(calls) > n_iter + 2                 # some unit steps were rejected
    best = np.log(target)
    f_best = float(weight @ (target - target * best))
    assert f <= f_best + 1e-12 * abs(f_best)      # stopped where f is flat to rounding
    np.testing.assert_allclose(x, best, atol=1e-4)


def test_l2_into_writes_the_callers_buffer_and_checks_it():
    X, y, w = _problem(seed=8)
    K, d = 5, X.shape[1]
    objective = _Objective(X, y, w, K, True, None, None)
    objective.inv_var, objective.scale = np.full((d + 1) * K, 0.3), float(w.sum())
    theta = np.random.default_rng(9).normal(size=(d + 1) * K)
    out = np.full(theta.shape, np.nan)
    f, g = objective.l2_into(theta, out)
    assert g is out
    f_ref, g_ref = objective.l2(theta)
    assert f == f_ref
    np.testing.assert_array_equal(g, g_ref)
    for bad in (np.empty(theta.shape, dtype=np.float32), np.empty(theta.shape[0] + 1),
                np.empty(2 * theta.shape[0])[::2]):
        with pytest.raises(ValueError, match="out must be"):
            objective.l2_into(theta, bad)


def test_driver_with_fun_into_reaches_the_same_fit_and_hands_out_copies():
    """LogisticRegression passes l2_into to the blocked driver (two gradient buffers,
    swapped): the fit equals the one through plain l2, and the verbose callback's
    gradients are copies (none shares memory with another)."""
    from linclass.linear._lbfgs import lbfgs_minimize
    rng = np.random.default_rng(10)
    X = sp.random(300, 2500, density=0.01, format="csr", random_state=11)
    y = rng.integers(0, 4, 300).astype(np.int32)
    n = 2501 * 4
    objective = _Objective(X, y, np.ones(300), 4, True, None, None)
    objective.inv_var, objective.scale = np.full(n, 0.1), 300.0
    seen = []
    into = lbfgs_minimize(objective.l2, np.zeros(n), gtol=1e-9, max_iter=300,
                          max_abs=objective.grad_max_abs, fun_into=objective.l2_into,
                          callback=lambda x, f, g: seen.append(g))
    plain = lbfgs_minimize(objective.l2, np.zeros(n), gtol=1e-9, max_iter=300)
    np.testing.assert_array_equal(into[0], plain[0])
    assert into[2] == plain[2] == len(seen) and into[3]
    assert not any(np.shares_memory(a, b) for a, b in zip(seen, seen[1:]))


@pytest.mark.parametrize("lo, hi", [(0, 9000), (0, 4096), (123, 8311), (5000, 5000)])
def test_combine_trial_equals_combine_plus_unit_step(lo, hi):
    from linclass._core import _lbfgs as core
    rng = np.random.default_rng(12)
    n, m = 9000, 4
    S = rng.normal(size=(m, n)).astype(np.float32)
    Y = rng.normal(size=(m, n)).astype(np.float32)
    g, x = rng.normal(size=n), rng.normal(size=n)
    slots = np.array([2, 0, 3], dtype=np.int32)
    a, b = rng.normal(size=3), rng.normal(size=3)
    d = np.zeros(n)
    core.lbfgs_combine(g, S, Y, slots, a, b, 0.7, d, lo, hi)
    x_out = np.full(n, np.nan)
    gd = core.lbfgs_combine_trial(g, S, Y, slots, a, b, 0.7, x, x_out, lo, hi)
    np.testing.assert_array_equal(x_out[lo:hi], x[lo:hi] + d[lo:hi])
    assert np.all(np.isnan(x_out[:lo])) and np.all(np.isnan(x_out[hi:]))
    np.testing.assert_allclose(gd, g[lo:hi] @ d[lo:hi], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        core.lbfgs_combine_trial(g, S, Y, np.array([4], dtype=np.int32), a[:1], b[:1], 0.7,
                                 x, x_out, lo, hi)
