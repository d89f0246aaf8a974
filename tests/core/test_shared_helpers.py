"""The inline helpers of linclass/_core/*.pxd against numpy."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from linclass._core import _testing as T


def _random_matrix(rng, n_rows, n_cols, density):
    dense = rng.standard_normal((n_rows, n_cols))
    dense[rng.random((n_rows, n_cols)) > density] = 0.0
    return dense


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("density", [0.0, 0.1, 1.0])
def test_row_dot_axpy_norm_match_numpy(seed, density):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = rng.integers(1, 8), rng.integers(1, 9)
    dense = _random_matrix(rng, n_rows, n_cols, density)
    w = rng.standard_normal(n_cols)
    coefs = rng.standard_normal(n_rows)
    for X in (dense, sp.csr_matrix(dense)):
        np.testing.assert_allclose(T.rows_dot_py(X, w), dense @ w, atol=1e-12)
        np.testing.assert_allclose(T.rows_axpy_py(X, coefs, n_cols), coefs @ dense, atol=1e-12)
        np.testing.assert_allclose(T.rows_sq_norm_py(X), (dense ** 2).sum(1), atol=1e-12)


def test_rows_empty_csr():
    X = sp.csr_matrix((3, 4))
    np.testing.assert_array_equal(T.rows_dot_py(X, np.ones(4)), np.zeros(3))
    np.testing.assert_array_equal(T.rows_axpy_py(X, np.ones(3), 4), np.zeros(4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "scale", "dot", "reset"]),
                          st.floats(-2, 2, allow_nan=False),
                          st.integers(0, 2**31)), max_size=30),
       st.integers(1, 6))
def test_scaled_weights_equal_plain_vector(ops, n):
    rng = np.random.default_rng(n)
    w0 = rng.standard_normal(n)
    plain = w0.copy()
    shim_ops, expected_dots = [], []
    for kind, value, seed in ops:
        x = np.random.default_rng(seed).standard_normal(n)
        if kind == "add":
            shim_ops.append(("add", value, x))
            plain += value * x
        elif kind == "scale":
            factor = value if abs(value) > 1e-3 else 0.0
            shim_ops.append(("scale", factor))
            plain *= factor
        elif kind == "dot":
            shim_ops.append(("dot", x))
            expected_dots.append(plain @ x)
        else:
            shim_ops.append(("reset",))
    w, sq_norm, dots = T.scaled_weights_py(w0, shim_ops)
    np.testing.assert_allclose(w, plain, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sq_norm, plain @ plain, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(dots, expected_dots, rtol=1e-9, atol=1e-9)


def test_scaled_weights_tiny_scale_is_renormalised():
    ops = [("scale", 1e-5)] * 3 + [("add", 1.0, np.array([1.0, 0.0]))]
    w, sq_norm, _ = T.scaled_weights_py(np.array([1.0, 1.0]), ops)
    np.testing.assert_allclose(w, [1.0 + 1e-15, 1e-15])
    np.testing.assert_allclose(sq_norm, w @ w)


@pytest.mark.parametrize("seed", range(20))
def test_lazy_averaging_equals_explicit_average(seed):
    rng = np.random.default_rng(seed)
    n, n_steps = int(rng.integers(1, 6)), int(rng.integers(1, 15))
    w0 = rng.standard_normal(n)
    steps = []
    for _ in range(n_steps):
        k = int(rng.integers(0, 3))
        steps.append([(int(rng.integers(0, n)), float(rng.standard_normal())) for _ in range(k)])
    # explicit: the mean of the weights after each step, starting weights counted first
    w = w0.copy()
    history = [w.copy()]
    for step in steps:
        for j, alpha in step:
            w[j] += alpha
        history.append(w.copy())
    final, avg = T.averaged_weights_py(w0, steps)
    np.testing.assert_allclose(final, w, atol=1e-12)
    # The trick with c counted from 1 averages the weights in effect *during*
    # each of the c = n_steps + 1 counter values: w_0 .. w_{n_steps}.
    np.testing.assert_allclose(avg, np.mean(history, axis=0), atol=1e-12)


@pytest.mark.parametrize("a", [[], [0.0], [1000.0, 1000.0], [-np.inf, -np.inf], [-np.inf, 0.0],
                               [1e-300, -745.0, 3.0], [np.inf, 1.0]])
def test_logsumexp(a):
    a = np.array(a, dtype=float)
    with np.errstate(divide="ignore"):
        expected = np.logaddexp.reduce(a) if a.size else -np.inf
    assert T.logsumexp_py(a) == pytest.approx(expected)


@pytest.mark.parametrize("a,b", [(0.0, 0.0), (-np.inf, 2.0), (3.0, -np.inf), (800.0, 799.0),
                                 (-np.inf, -np.inf)])
def test_logaddexp(a, b):
    assert T.logaddexp_py(a, b) == pytest.approx(np.logaddexp(a, b))


def test_rng_is_deterministic_and_uniform():
    a = T.rng_py(42, 20000)
    np.testing.assert_array_equal(a, T.rng_py(42, 20000))
    assert not np.array_equal(a, T.rng_py(43, 20000))
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.01
    b = T.rng_py(7, 60000, "below", 6)
    counts = np.bincount(b, minlength=6)
    assert b.min() >= 0 and b.max() <= 5
    # chi-square with 5 dof: 99.9% quantile is 20.5
    expected = len(b) / 6
    assert ((counts - expected) ** 2 / expected).sum() < 20.5
    assert T.rng_py(0, 5, "raw").dtype == np.uint64


def test_rng_shuffle_is_a_permutation():
    a = np.arange(100)
    s = T.rng_shuffle_py(3, a)
    assert sorted(s) == list(a)
    assert not np.array_equal(s, a)
    np.testing.assert_array_equal(s, T.rng_shuffle_py(3, a))
    assert len(T.rng_shuffle_py(3, [])) == 0
