"""The L-BFGS history without a store pass of its own (s written by the fused
trial-point pass, y and s.y, y.y by the next projection pass) and the vectorised
history kernels (every level the same bits): against the textbook two-loop
recursion on the stored float32 pairs, the store-pass kernels, and plain loops."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _lbfgs as core
from linclass.linear._lbfgs import _CompactHistory, lbfgs_minimize


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


class _SequentialThreads:
    def map(self, function, blocks):
        return [function(b) for b in blocks]


@pytest.fixture
def plain_then_best():
    yield
    core.simd_level(2)                  # back to the CPU's best level


def _kernel_outputs(rng_seed, lo, hi):
    rng = np.random.default_rng(rng_seed)
    n, m = 9011, 5
    S = rng.normal(size=(m, n)).astype(np.float32)
    Y = rng.normal(size=(m, n)).astype(np.float32)
    g, g_old, x = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    order = np.array([3, 0, 2, 4], dtype=np.int32)
    a, b = rng.normal(size=4), rng.normal(size=4)
    out = [np.concatenate(core.lbfgs_project(g, S, Y, order, -1, lo, hi)),
           np.concatenate(core.lbfgs_project(g, S, Y, order, 2, lo, hi))]
    p = core.lbfgs_project(g, S, Y, order, 4, lo, hi, g_old)
    out += [np.concatenate(p[:4]), np.array(p[4]), Y.copy()]
    d = np.zeros(n)
    core.lbfgs_combine(g, S, Y, order, a, b, 0.7, d, lo, hi)
    x_out = np.zeros(n)
    gd = core.lbfgs_combine_trial(g, S, Y, order, a, b, 0.7, x, x_out, lo, hi, 3)
    return out + [d, x_out, np.array([gd]), S.copy()]


@pytest.mark.parametrize("lo, hi", [(0, 9011), (5, 4103), (8000, 8007)])
def test_every_vector_level_gives_the_same_bits(lo, hi, plain_then_best):
    best = core.simd_level()
    assert core.simd_level(0) == 0
    plain = _kernel_outputs(7, lo, hi)
    assert core.simd_level(2) == best
    vector = _kernel_outputs(7, lo, hi)
    for u, v in zip(plain, vector):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("level", [0, 2])
def test_fused_pair_writes_equal_the_store_pass(level, plain_then_best):
    core.simd_level(level)
    rng = np.random.default_rng(3)
    n, m, lo, hi = 10001, 4, 17, 9990
    S = rng.normal(size=(m, n)).astype(np.float32)
    Y = rng.normal(size=(m, n)).astype(np.float32)
    g, g_new, x = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    order = np.array([1, 2, 0, 3], dtype=np.int32)        # slot 1 the oldest
    a, b = rng.normal(size=4), rng.normal(size=4)
    # the trial pass: x_out as without s_slot, and s written to the oldest pair's slot
    # only after its tiles were used
    x_plain = np.zeros(n)
    gd_plain = core.lbfgs_combine_trial(g, S.copy(), Y, order, a, b, 0.5, x, x_plain, lo, hi)
    x_out = np.zeros(n)
    S_before = S.copy()
    gd = core.lbfgs_combine_trial(g, S, Y, order, a, b, 0.5, x, x_out, lo, hi, 1)
    np.testing.assert_array_equal(x_out, x_plain)
    assert gd == gd_plain
    np.testing.assert_array_equal(S[1, lo:hi], (x_out[lo:hi] - x[lo:hi]).astype(np.float32))
    np.testing.assert_array_equal(S[1, :lo], S_before[1, :lo])
    np.testing.assert_array_equal(S[1, hi:], S_before[1, hi:])
    # the store pass on the same pair
    S2, Y2 = S.copy(), Y.copy()
    sy_ref, yy_ref = core.lbfgs_store_range(x_out, x, g_new, g, S2, Y2, 1, lo, hi)
    np.testing.assert_array_equal(S2[1], S[1])
    # the projection writes y and adds s.y, y.y; its products equal a plain projection
    new_order = np.array([2, 0, 3, 1], dtype=np.int32)
    Y_before = Y.copy()
    fused = core.lbfgs_project(g_new, S, Y, new_order, 1, lo, hi, g)
    np.testing.assert_array_equal(Y[1, lo:hi], Y2[1, lo:hi])
    np.testing.assert_array_equal(Y[1, :lo], Y_before[1, :lo])
    np.testing.assert_allclose(fused[4], (sy_ref, yy_ref), rtol=1e-12)
    plain = core.lbfgs_project(g_new, S, Y, new_order, 1, lo, hi)
    for u, v in zip(fused[:4], plain):
        np.testing.assert_array_equal(u, v)
    s64, y64 = S[1, lo:hi].astype(np.float64), Y[1, lo:hi].astype(np.float64)
    np.testing.assert_allclose(fused[2], S[new_order, lo:hi].astype(np.float64) @ y64,
                               rtol=1e-10)
    np.testing.assert_allclose(fused[0][3], s64 @ g_new[lo:hi], rtol=1e-10)
    with pytest.raises(ValueError):
        core.lbfgs_project(g_new, S, Y, new_order, -1, lo, hi, g)
    with pytest.raises(ValueError):
        core.lbfgs_combine_trial(g, S, Y, order, a, b, 0.5, x, x_out, lo, hi, m)
    with pytest.raises(ValueError):
        core.lbfgs_store_s(x_out, x[:-1], S, 0, 0, n)


@pytest.mark.parametrize("n_blocks", [1, 3])
def test_deferred_pairs_equal_the_textbook_recursion(n_blocks):
    """The driver's blocked flow: direction (writing s for the unit step), defer, the
    next direction writing y; ring wrap-around, a backtracked step (s written by
    defer), a refused pair (negative curvature); every direction against the
    textbook recursion on the float32 pairs kept."""
    rng = np.random.default_rng(20 + n_blocks)
    n, memory = 60 + (n_blocks - 1) * core.TILE, 4
    U = rng.normal(size=(n, 6))
    diag = rng.uniform(1.0, 30.0, n)

    class _H:                            # diagonal plus low rank, positive definite
        def __matmul__(self, v):
            return diag * v + U @ (U.T @ v)
    H = _H()
    history = _CompactHistory(n, memory, _SequentialThreads() if n_blocks > 1 else None,
                              n_blocks)
    assert len(history.blocks) == n_blocks
    pairs = []
    x = rng.normal(size=n)
    g = H @ x
    d = np.empty(n)
    x_trial = np.empty(n)
    refused_slot = None
    for it in range(11):
        gd = history.direction(g, d, x, x_trial, write_s=True)
        if it == 6:                      # the pair deferred at it == 5 was refused
            assert history.newest_first[0] != refused_slot
        if pairs:
            expected = _two_loop_reference(g, pairs[-memory:])
            np.testing.assert_allclose(x_trial - x, expected, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(gd, g @ expected, rtol=1e-8)
            assert history.s_written
            step = 1.0 if it % 4 else 0.5            # every 4th a backtracked step
            x_new = x + step * (x_trial - x)
            if step != 1.0:
                history.s_written = False             # as the driver does
            else:
                x_new = x_trial.copy()
        else:
            assert gd is None and not history.s_written
            np.testing.assert_allclose(d, -g)
            x_new = x + 0.1 * d
        g_new = H @ x_new
        if it == 5:                      # negative curvature: refused at the next pass
            g_new = g - H @ (x_new - x)
        slot = history.next_slot()
        history.defer(x_new, x, g)
        s32 = history.S[slot].astype(np.float64)
        np.testing.assert_array_equal(history.S[slot], (x_new - x).astype(np.float32))
        if it == 5:
            refused_slot = slot
            if len(pairs) >= memory:
                pairs = pairs[-(memory - 1):]
        else:
            pairs.append((s32, (g_new - g).astype(np.float32).astype(np.float64)))
        x, g = x_new, g_new


def test_driver_with_deferred_pairs_reaches_the_optimum():
    """The blocked driver (deferred pairs): a separable quartic with 20,000 parameters
    (its minimum known), and a multinomial logistic regression with 9,006 parameters
    against scikit-learn's lbfgs at a tight tolerance."""
    rng = np.random.default_rng(5)
    n = 20000
    scale = rng.uniform(0.5, 20.0, n)
    center = rng.normal(size=n)

    def fun(x):
        r = x - center
        return 0.5 * float(r @ (scale * r)) + 0.1 * float(np.sum(r ** 4)), \
            scale * r + 0.4 * r ** 3

    x, f, n_iter, converged = lbfgs_minimize(fun, np.zeros(n), gtol=1e-9, max_iter=500)
    assert converged and n_iter > 5
    np.testing.assert_allclose(x, center, atol=1e-8)

    from sklearn.linear_model import LogisticRegression as SkLR
    from linclass.linear import LogisticRegression
    X = sp.random(300, 1500, density=0.02, format="csr", random_state=4)
    y = rng.integers(0, 6, 300)
    ours = LogisticRegression(C=10.0, tol=1e-8, max_iter=2000).fit(X, y)
    assert (X.shape[1] + 1) * 6 >= 8192                 # the blocked driver ran
    ref = SkLR(C=10.0, tol=1e-10, max_iter=5000).fit(X, y)
    P = ref.predict_proba(X)
    C = 10.0
    ref_obj = -np.sum(np.log(P[np.arange(300), y])) + 0.5 / C * np.sum(ref.coef_ ** 2)
    np.testing.assert_allclose(ours.objective_, ref_obj, rtol=1e-7)
    np.testing.assert_allclose(ours.predict_proba(X), P, atol=1e-4)


def test_multinomial_fit_does_not_depend_on_n_jobs():
    """Every sum of the blocked L-BFGS driver and of the two-phase objective is formed
    the same way whatever the blocks (history products per tile of a fixed grid, the
    penalty per parameter row, rows and columns independent): n_jobs = 1, 2, 3 give
    the same bits."""
    from linclass.linear import LogisticRegression
    rng = np.random.default_rng(8)
    X = sp.random(500, 8000, density=0.005, format="csr", random_state=9)
    y = rng.integers(0, 5, 500)
    assert (X.shape[1] + 1) * 5 >= 3 * 2 * 4096              # >= 2 tiles per block
    fits = [LogisticRegression(C=10.0, tol=1e-7, n_jobs=j).fit(X, y) for j in (1, 2, 3)]
    assert fits[0].n_iter_[0] > 10
    for other in fits[1:]:
        np.testing.assert_array_equal(other.coef_, fits[0].coef_)
        np.testing.assert_array_equal(other.intercept_, fits[0].intercept_)
        assert other.n_iter_[0] == fits[0].n_iter_[0]
        assert other.objective_ == fits[0].objective_


def test_small_problem_history_is_the_two_loop_recursion():
    """Below BLOCKED_MIN_PARAMS the driver keeps float64 pairs and runs the
    two-loop recursion (``_TwoLoopHistory``): its direction equals the textbook
    recursion on the last ``memory`` accepted pairs, a pair with too little
    curvature is refused, and ``clear`` forgets every pair."""
    from linclass.linear._lbfgs import _TwoLoopHistory
    rng = np.random.default_rng(12)
    n, memory = 40, 4
    A = rng.normal(size=(n, n))
    H = A @ A.T + n * np.eye(n)                     # a convex quadratic's Hessian
    history = _TwoLoopHistory(n, memory)
    pairs = []
    x = rng.normal(size=n)
    for _ in range(7):
        x_new = x + rng.normal(size=n)
        assert history.store(x_new, x, H @ x_new, H @ x)
        pairs.append((x_new - x, H @ (x_new - x)))
        x = x_new
    g = rng.normal(size=n)
    out = np.empty(n)
    history.direction(g, out)
    np.testing.assert_allclose(out, _two_loop_reference(g, pairs[-memory:]), rtol=1e-12)
    assert not history.store(x + 1.0, x, H @ x, H @ x)           # y = 0: refused
    assert len(history.newest_first) == memory
    history.clear()
    history.direction(g, out)
    np.testing.assert_allclose(out, -history.gamma * g)
