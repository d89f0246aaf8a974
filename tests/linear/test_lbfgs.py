"""linclass's own L-BFGS (two-loop recursion over float32 pairs, in Cython)
against references: the textbook two-loop recursion in numpy, scipy's
L-BFGS-B on the same functions, and the closed-form minimum of a quadratic."""
import numpy as np
import pytest
import scipy.optimize

from linclass._core import _lbfgs as core
from linclass.linear._lbfgs import lbfgs_minimize


def _two_loop_reference(g, pairs):
    """Nocedal & Wright (2006), Algorithm 7.4; pairs oldest first, float64."""
    q = g.copy()
    alphas = []
    for s, y in reversed(pairs):
        a = (s @ q) / (s @ y)
        q -= a * y
        alphas.append(a)
    s, y = pairs[-1]
    q *= (s @ y) / (y @ y)
    for (s, y), a in zip(pairs, reversed(alphas)):
        b = (y @ q) / (s @ y)
        q += (a - b) * s
    return -q


@pytest.mark.parametrize("n_pairs", [1, 3, 5])
def test_two_loop_direction_equals_the_textbook_recursion(n_pairs):
    rng = np.random.default_rng(n_pairs)
    n, memory = 50, 5
    A = rng.normal(size=(n, n))
    H = A @ A.T + n * np.eye(n)                      # SPD: s.y > 0 for every pair
    S = np.zeros((memory, n), dtype=np.float32)
    Y = np.zeros((memory, n), dtype=np.float32)
    rho = np.zeros(memory)
    slots, pairs = [], []
    for k in range(n_pairs):                         # ring buffer, starting at slot 2
        slot = (2 + k) % memory
        x, x_new = rng.normal(size=n), rng.normal(size=n)
        g, g_new = H @ x, H @ x_new
        sy, yy = core.lbfgs_store_pair(x_new, x, g_new, g, S, Y, slot)
        s32, y32 = S[slot].astype(np.float64), Y[slot].astype(np.float64)
        np.testing.assert_allclose(s32, x_new - x, rtol=1e-6)
        assert sy == pytest.approx(s32 @ y32, rel=1e-12)
        assert yy == pytest.approx(y32 @ y32, rel=1e-12)
        rho[slot] = 1.0 / sy
        slots.insert(0, slot)
        pairs.append((s32, y32))
    g = rng.normal(size=n)
    s, y = pairs[-1]
    out = np.empty(n)
    core.lbfgs_direction(g, S, Y, rho, np.array(slots, dtype=np.int32), (s @ y) / (y @ y), out)
    np.testing.assert_allclose(out, _two_loop_reference(g, pairs), rtol=1e-10, atol=1e-12)


def test_direction_without_pairs_is_scaled_steepest_descent():
    g = np.arange(1.0, 6.0)
    out = np.empty(5)
    S = np.zeros((3, 5), dtype=np.float32)
    core.lbfgs_direction(g, S, S.copy(), np.zeros(3), np.zeros(0, dtype=np.int32), 0.5, out)
    np.testing.assert_array_equal(out, -0.5 * g)
    with pytest.raises(ValueError, match="slot out of range"):
        core.lbfgs_direction(g, S, S.copy(), np.zeros(3), np.array([3], dtype=np.int32), 1.0,
                             out)


def test_quadratic_minimum_in_closed_form():
    rng = np.random.default_rng(0)
    n = 40
    A = rng.normal(size=(n, n))
    H = A @ A.T / n + 0.1 * np.eye(n)
    b = rng.normal(size=n)
    x, f, n_iter, converged = lbfgs_minimize(lambda x: (0.5 * x @ H @ x - b @ x, H @ x - b),
                                             np.zeros(n), gtol=1e-10, max_iter=1000, ftol=0.0)
    assert converged          # by gtol, or where f stops decreasing in float64
    np.testing.assert_allclose(x, np.linalg.solve(H, b), atol=1e-6)
    assert np.max(np.abs(H @ x - b)) < 1e-7


def test_rosenbrock_like_scipy_and_max_iter_reported():
    fun = lambda x: (scipy.optimize.rosen(x), scipy.optimize.rosen_der(x))  # noqa: E731
    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    x, f, n_iter, converged = lbfgs_minimize(fun, x0, gtol=1e-9, max_iter=2000)
    ref = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                                  options=dict(gtol=1e-9, ftol=1e-15, maxiter=2000))
    assert converged
    np.testing.assert_allclose(x, ref.x, atol=1e-6)
    np.testing.assert_allclose(x, np.ones(4), atol=1e-6)
    x, f, n_iter, converged = lbfgs_minimize(fun, x0, gtol=1e-9, max_iter=3)
    assert n_iter == 3 and not converged


@pytest.mark.parametrize("n", [60, 9000])
def test_default_memory_is_twenty_pairs_below_the_blocked_size_else_ten(n):
    """memory=None keeps MEMORY_SMALL (20) pairs below BLOCKED_MIN_PARAMS
    parameters and MEMORY_LARGE (10) from there on: the default run is the same
    run, bit for bit, as the one with that memory and differs from the other."""
    from linclass.linear._lbfgs import BLOCKED_MIN_PARAMS, MEMORY_LARGE, MEMORY_SMALL
    rng = np.random.default_rng(5)
    scales = np.logspace(-2, 2, n)               # ill-conditioned: memory matters
    b = rng.normal(size=n)

    def fun(x):
        r = scales * x - b
        return 0.5 * r @ r + 0.25 * np.sum(x ** 4), scales * r + x ** 3

    runs = {m: lbfgs_minimize(fun, np.zeros(n), gtol=1e-8, max_iter=60, memory=m)
            for m in (None, MEMORY_SMALL, MEMORY_LARGE)}
    chosen = MEMORY_SMALL if n < BLOCKED_MIN_PARAMS else MEMORY_LARGE
    other = MEMORY_LARGE if chosen == MEMORY_SMALL else MEMORY_SMALL
    np.testing.assert_array_equal(runs[None][0], runs[chosen][0])
    assert runs[None][2] == runs[chosen][2]
    assert not np.array_equal(runs[None][0], runs[other][0])


class _SequentialThreads:
    """``threads.map`` as the driver calls it, run in order on this thread."""

    def map(self, function, blocks):
        return [function(b) for b in blocks]


@pytest.mark.parametrize("n_blocks", [1, 3])
def test_compact_history_equals_the_textbook_recursion(n_blocks):
    # the driver's compact representation over a run of iterations: ring buffer
    # wrap-around, a rejected pair (s.y <= 0), products of older pairs with each new y
    # added to the next direction's pass; against the float64 two-loop recursion
    # on the float32-rounded pairs
    from linclass.linear._lbfgs import _CompactHistory
    # (blocks are cut on the kernels' tile grid: n spans more than n_blocks tiles; the
    # Hessian diagonal plus low rank)
    rng = np.random.default_rng(n_blocks)
    n, memory = 40 + (n_blocks - 1) * core.TILE, 4
    U = rng.normal(size=(n, 6))
    diag = rng.uniform(1.0, 30.0, n)

    class _H:
        def __matmul__(self, v):
            return diag * v + U @ (U.T @ v)
    H = _H()
    history = _CompactHistory(n, memory, _SequentialThreads() if n_blocks > 1 else None,
                              n_blocks)
    assert len(history.blocks) == n_blocks
    pairs = []
    x = rng.normal(size=n)
    g = H @ x
    out = np.empty(n)
    for it in range(9):
        history.direction(g, out)
        if pairs:
            np.testing.assert_allclose(out, _two_loop_reference(g, pairs[-memory:]),
                                       rtol=1e-9, atol=1e-11)
        else:
            np.testing.assert_allclose(out, -g)
        x_new = x + 0.3 * rng.normal(size=n)
        g_new = H @ x_new
        if it == 5:                      # negative curvature: refused, history unchanged
            g_new = g - (H @ (x_new - x))
            assert not history.store(x_new, x, g_new, g)
            if len(pairs) >= memory:
                pairs = pairs[-(memory - 1):]   # the oldest pair's slot was given up
        else:
            assert history.store(x_new, x, g_new, g)
            slot = history.newest_first[0]
            pairs.append((history.S[slot].astype(np.float64),
                          history.Y[slot].astype(np.float64)))
        x, g = x_new, g_new


def test_threaded_driver_vector_work_is_deterministic_and_reaches_the_serial_optimum():
    """With threads and >= 8192 parameters the trial points, g.d and max|g| run on the
    column blocks: the same minimum as the serial driver, the same bits run to run,
    and every callback gets its own copy of x (the driver reuses its buffers)."""
    from linclass.linear.logistic import ThreadedSum
    rng = np.random.default_rng(50)
    n = 20000
    scale = rng.uniform(0.5, 20.0, n)
    center = rng.normal(size=n)

    def fun(x):
        r = x - center
        return 0.5 * float(r @ (scale * r)) + 0.1 * float(np.sum(r ** 4)), \
            scale * r + 0.4 * r ** 3

    serial = lbfgs_minimize(fun, np.zeros(n), gtol=1e-9, max_iter=500)
    seen = []
    with ThreadedSum(2) as threads:
        runs = [lbfgs_minimize(fun, np.zeros(n), gtol=1e-9, max_iter=500, threads=threads,
                               callback=lambda x, f, g: seen.append(x))
                for _ in range(2)]
    assert serial[3] and runs[0][3]
    np.testing.assert_allclose(runs[0][0], center, atol=1e-8)
    np.testing.assert_allclose(runs[0][0], serial[0], atol=1e-8)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][2] == runs[1][2] == len(seen) // 2
    assert len({id(x) for x in seen}) == len(seen)
    assert not np.array_equal(seen[0], seen[1])


def test_logistic_n_jobs_2_with_many_parameters_is_deterministic():
    import scipy.sparse as sp
    from linclass.linear.logistic import LogisticRegression
    rng = np.random.default_rng(51)
    X = sp.random(400, 3000, density=0.01, format="csr", random_state=3)
    y = np.argmax(X @ rng.normal(size=(3000, 4)) + 0.1 * rng.normal(size=(400, 4)), axis=1)
    one = LogisticRegression(C=10.0, tol=1e-7).fit(X, y)
    two = [LogisticRegression(C=10.0, tol=1e-7, n_jobs=2).fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(two[0].coef_, two[1].coef_)
    assert abs(two[0].objective_ - one.objective_) <= 1e-6 * one.objective_
    assert one.solver_ == "lbfgs"
