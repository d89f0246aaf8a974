"""The sorting-based pairwise loss, gradient and Hessian product equal the
explicit O(n^2) pairwise computation; dual CD over pairs reaches the optimum."""
import numpy as np
import pytest

from linclass._core._ranking import pairwise_loss_grad, pairwise_hessian_product, pairs_dual_cd
from linclass.ranking import group_by_query


def brute_force(scores, y, weights, qid, squared, z):
    """Sum over every (i, j) of a query with y_i > y_j, p_ij = (w_i + w_j) / 2."""
    loss = 0.0
    grad = np.zeros_like(scores)
    hz = np.zeros_like(scores)
    n = len(scores)
    for i in range(n):
        for j in range(n):
            if qid[i] != qid[j] or not y[i] > y[j]:
                continue
            r = 1.0 - (scores[i] - scores[j])
            if r <= 0:
                continue
            p = 0.5 * (weights[i] + weights[j])
            if squared:
                loss += p * r * r
                grad[i] -= 2 * p * r
                grad[j] += 2 * p * r
                hz[i] += 2 * p * (z[i] - z[j])
                hz[j] -= 2 * p * (z[i] - z[j])
            else:
                loss += p * r
                grad[i] -= p
                grad[j] += p
    return loss, grad, hz


def kernel(scores, y, weights, qid, squared, z):
    layout = group_by_query(y, qid)
    o = layout.order
    args = dict(scores=np.ascontiguousarray(scores[o]), grade_rank=layout.grade_rank,
                weights=np.ascontiguousarray(weights[o]), query_ptr=layout.query_ptr,
                max_grades=layout.max_grades, max_query_size=layout.max_query_size)
    loss, g, order = pairwise_loss_grad(squared=squared, **args)
    hz = pairwise_hessian_product(order=order, z=np.ascontiguousarray(z[o]), **args)
    grad = np.zeros_like(scores)
    grad[o] = g
    hz_full = np.zeros_like(scores)
    hz_full[o] = hz
    return loss, grad, hz_full


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_sorting_kernel_equals_explicit_pairs(seed, squared):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    qid = rng.integers(0, 4, size=n) * 7          # interleaved, non-contiguous queries
    y = rng.integers(0, int(rng.integers(1, 5)), size=n).astype(float)
    if seed % 2:
        # dyadic scores: many exact ties and margins of exactly 1, same
        # rounding in the kernel and the brute force
        scores = rng.integers(-8, 9, size=n) / 4.0
    else:
        scores = rng.normal(size=n) * 2
    weights = rng.uniform(0.0, 3.0, size=n)
    z = rng.normal(size=n)
    loss, grad, hz = kernel(scores, y, weights, qid, squared, z)
    ref_loss, ref_grad, ref_hz = brute_force(scores, y, weights, qid, squared, z)
    layout = group_by_query(y, qid)
    # skipped queries contribute nothing, so full-length comparison is exact
    assert loss == pytest.approx(ref_loss, rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-10)
    if squared:
        np.testing.assert_allclose(hz, ref_hz, rtol=1e-10, atol=1e-10)
    assert layout.n_pairs == sum(1 for i in range(n) for j in range(n)
                                 if qid[i] == qid[j] and y[i] > y[j])


def test_kernel_order_sorts_each_query():
    scores = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    grade = np.array([0, 1, 0, 1, 0], dtype=np.int32)
    _, _, order = pairwise_loss_grad(scores=scores, grade_rank=grade, weights=np.ones(5),
                                     query_ptr=np.array([0, 3, 5], dtype=np.int64),
                                     max_grades=2, max_query_size=3, squared=True)
    assert order.tolist() == [1, 2, 0, 4, 3]


def test_squared_loss_large_offset_is_accurate():
    # scores far from 0: the per-query centring keeps the cancellation small
    rng = np.random.default_rng(3)
    n = 30
    y = rng.integers(0, 3, size=n).astype(float)
    scores = rng.normal(size=n) + 1e5
    w = np.ones(n)
    loss, grad, _ = kernel(scores, y, w, np.zeros(n), True, np.zeros(n))
    ref_loss, ref_grad, _ = brute_force(scores, y, w, np.zeros(n), True, np.zeros(n))
    assert loss == pytest.approx(ref_loss, rel=1e-8)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-7, atol=1e-7)


def test_layout_checks():
    with pytest.raises(ValueError):
        pairwise_loss_grad(scores=np.zeros(3), grade_rank=np.zeros(2, dtype=np.int32),
                           weights=np.ones(3), query_ptr=np.array([0, 3], dtype=np.int64),
                           max_grades=1, max_query_size=3, squared=True)
    with pytest.raises(ValueError):
        pairwise_loss_grad(scores=np.zeros(3), grade_rank=np.zeros(3, dtype=np.int32),
                           weights=np.ones(3), query_ptr=np.array([0, 2], dtype=np.int64),
                           max_grades=1, max_query_size=3, squared=True)


@pytest.mark.parametrize("hinge", [True, False])
def test_dual_cd_pairs_kkt(hinge):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    hi = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.int32)
    lo = np.array([8, 9, 10, 11, 8, 9, 10, 11], dtype=np.int32)
    C = 0.7
    weight = rng.uniform(0.5, 2, size=8)
    upper = C * weight if hinge else np.full(8, np.inf)
    diag = np.zeros(8) if hinge else 1 / (2 * C * weight)
    D = X[hi] - X[lo]
    alpha = np.zeros(8)
    w, epochs, gap = pairs_dual_cd(X, pair_hi=hi, pair_lo=lo, upper=upper, diag=diag,
                                   qdiag=np.einsum("ij,ij->i", D, D), alpha=alpha,
                                   max_iter=10000, tol=1e-10, seed=1)
    assert gap <= 1e-10
    np.testing.assert_allclose(w, alpha @ D, atol=1e-10)
    # KKT: gradient of the dual G = D w - 1 + diag * alpha
    G = D @ w - 1 + diag * alpha
    free = (alpha > 1e-12) & (alpha < upper - 1e-12)
    np.testing.assert_allclose(G[free], 0, atol=1e-8)
    assert (G[alpha <= 1e-12] >= -1e-8).all()
    if hinge:
        assert (G[alpha >= upper - 1e-12] <= 1e-8).all()
    # primal = dual at the optimum
    slack = np.maximum(0, 1 - D @ w)
    primal = 0.5 * w @ w + C * (weight @ (slack if hinge else slack ** 2))
    dual = alpha.sum() - 0.5 * w @ w - 0.5 * (diag * alpha) @ alpha
    assert primal == pytest.approx(dual, rel=1e-7)
