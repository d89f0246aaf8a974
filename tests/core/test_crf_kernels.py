"""linclass._core._crf against brute-force enumeration of every label sequence."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _crf


def random_problem(lengths, K, F=5, seed=0, dense=True, scale=1.0):
    rng = np.random.default_rng(seed)
    n_tok = int(sum(lengths))
    X = sp.random(n_tok, F, density=0.5, random_state=seed, format="csr") * 2.0
    X.data = X.data - 0.5
    X.sort_indices()
    if dense:
        attr_ptr = (np.arange(F + 1) * K).astype(np.int32)
        attr_label = np.tile(np.arange(K), F).astype(np.int32)
    else:       # a random subset of (attribute, label) pairs
        keep = rng.random((F, K)) < 0.6
        attr_ptr = np.concatenate([[0], np.cumsum(keep.sum(1))]).astype(np.int32)
        attr_label = np.nonzero(keep)[1].astype(np.int32)
    w = rng.normal(size=len(attr_label)) * scale
    trans = rng.normal(size=(K, K)) * scale
    start = rng.normal(size=K) * scale
    stop = rng.normal(size=K) * scale
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    gold = rng.integers(0, K, n_tok).astype(np.int32)
    return dict(w=w, attr_ptr=attr_ptr, attr_label=attr_label, trans=trans, start=start,
                stop=stop, X=X, offsets=offsets, gold=gold, K=K)


def dense_emissions(p):
    F = p["X"].shape[1]
    W = np.zeros((F, p["K"]))
    for f in range(F):
        for q in range(p["attr_ptr"][f], p["attr_ptr"][f + 1]):
            W[f, p["attr_label"][q]] = p["w"][q]
    return p["X"] @ W


def path_score(E, trans, start, stop, y):
    s = start[y[0]] + stop[y[-1]] + sum(E[t, y[t]] for t in range(len(y)))
    return s + sum(trans[y[t - 1], y[t]] for t in range(1, len(y)))


def brute(p, s):
    """log Z, node marginals, edge marginals of sentence s by enumeration."""
    K = p["K"]
    a, b = p["offsets"][s], p["offsets"][s + 1]
    E = dense_emissions(p)[a:b]
    n = b - a
    node = np.zeros((n, K))
    edge = np.zeros((n, K, K))
    if n == 0:
        return 0.0, node, edge, None
    paths = list(itertools.product(range(K), repeat=n))
    scores = np.array([path_score(E, p["trans"], p["start"], p["stop"], y) for y in paths])
    log_z = np.logaddexp.reduce(scores)
    probs = np.exp(scores - log_z)
    for y, pr in zip(paths, probs):
        for t in range(n):
            node[t, y[t]] += pr
            if t:
                edge[t, y[t - 1], y[t]] += pr
    best = paths[int(np.argmax(scores))]
    return log_z, node, edge, (best, scores.max())


def kernel_args(p):
    X = p["X"]
    return (p["w"], p["attr_ptr"], p["attr_label"], p["trans"], p["start"], p["stop"],
            X.indices.astype(np.int32), X.data, X.indptr.astype(np.int32), p["offsets"])


@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_marginals_and_log_partition_match_enumeration(K, dense, seed):
    lengths = [0, 1, 2, 3, 4, 0]
    p = random_problem(lengths, K, seed=seed, dense=dense)
    n_tok = int(sum(lengths))
    node = np.zeros((n_tok, K))
    log_z = np.zeros(len(lengths))
    edge = np.zeros((n_tok, K, K))
    assert _crf.marginals(*kernel_args(p), node, log_z, edge) == 0
    np.testing.assert_allclose(node.sum(1), 1.0, atol=1e-12)
    for s in range(len(lengths)):
        lz, bn, be, _ = brute(p, s)
        a, b = p["offsets"][s], p["offsets"][s + 1]
        np.testing.assert_allclose(log_z[s], lz, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(node[a:b], bn, atol=1e-12)
        np.testing.assert_allclose(edge[a:b], be, atol=1e-12)


@pytest.mark.parametrize("K", [1, 3])
@pytest.mark.parametrize("seed", [0, 3])
def test_viterbi_matches_enumeration(K, seed):
    lengths = [0, 1, 2, 3, 4, 0]
    p = random_problem(lengths, K, seed=seed, dense=False)
    out = np.zeros(int(sum(lengths)), dtype=np.int32)
    scores = np.zeros(len(lengths))
    _crf.viterbi(*kernel_args(p), out, scores)
    for s in range(1, len(lengths) - 1):
        _, _, _, (best, best_score) = brute(p, s)
        a, b = p["offsets"][s], p["offsets"][s + 1]
        assert tuple(out[a:b]) == best
        assert scores[s] == pytest.approx(best_score, abs=1e-12)


def nll(p, s_range=None):
    total = 0.0
    E = dense_emissions(p)
    for s in range(len(p["offsets"]) - 1):
        a, b = p["offsets"][s], p["offsets"][s + 1]
        if a == b:
            continue
        lz, _, _, _ = brute(p, s)
        total += lz - path_score(E[a:b], p["trans"], p["start"], p["stop"], p["gold"][a:b])
    return total


def kernel_nll(p, first=0, last=-1):
    K = p["K"]
    g = (np.zeros(len(p["w"])), np.zeros((K, K)), np.zeros(K), np.zeros(K))
    value, status = _crf.negative_log_likelihood(*kernel_args(p), p["gold"], *g,
                                                 first=first, last=last)
    assert status == 0
    return value, g


@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_matches_finite_differences(K, seed):
    p = random_problem([0, 1, 2, 3, 0], K, seed=seed, dense=False)
    value, (gw, gt, gs, ge) = kernel_nll(p)
    assert value == pytest.approx(nll(p), rel=1e-12)
    h = 1e-6
    for name, grad in (("w", gw), ("trans", gt), ("start", gs), ("stop", ge)):
        arr = p[name]
        flat = arr.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + h
            up, _ = kernel_nll(p)
            flat[i] = old - h
            down, _ = kernel_nll(p)
            flat[i] = old
            assert grad.reshape(-1)[i] == pytest.approx((up - down) / (2 * h), abs=1e-6)


def test_sentence_ranges_add_up():
    p = random_problem([2, 3, 0, 1, 4, 0], 3, seed=5)
    full, g_full = kernel_nll(p)
    a, g_a = kernel_nll(p, 0, 3)
    b, g_b = kernel_nll(p, 3, 6)
    assert a + b == pytest.approx(full, rel=1e-13)
    for x, y, z in zip(g_full, g_a, g_b):
        np.testing.assert_allclose(x, y + z, atol=1e-13)


def test_large_scores_stay_finite():
    """Scores of +-500 per token: the shifted, scaled recursions neither
    overflow nor underflow, and agree with the log-space reference."""
    p = random_problem([3], 2, seed=1, scale=300.0)
    node = np.zeros((3, 2))
    log_z = np.zeros(1)
    assert _crf.marginals(*kernel_args(p), node, log_z) == 0
    lz, bn, _, _ = brute(p, 0)
    assert log_z[0] == pytest.approx(lz, rel=1e-12)
    np.testing.assert_allclose(node, bn, atol=1e-10)


def test_long_sentence_does_not_underflow():
    p = random_problem([3000], 4, seed=2, scale=3.0)
    node = np.zeros((3000, 4))
    log_z = np.zeros(1)
    assert _crf.marginals(*kernel_args(p), node, log_z) == 0
    assert np.isfinite(log_z[0])
    np.testing.assert_allclose(node.sum(1), 1.0, atol=1e-10)


def test_bad_shapes_raise():
    p = random_problem([2, 1], 2)
    args = list(kernel_args(p))
    args[1] = np.array([0, 1], dtype=np.int32)      # attr_ptr that does not end at n_state
    with pytest.raises(ValueError, match="attr_ptr"):
        _crf.viterbi(*args, np.zeros(3, np.int32), np.zeros(2))
    with pytest.raises(ValueError, match="one entry per token"):
        _crf.viterbi(*kernel_args(p), np.zeros(2, np.int32), np.zeros(2))
    with pytest.raises(ValueError, match="gold"):
        _crf.negative_log_likelihood(*kernel_args(p), np.zeros(1, np.int32),
                                     np.zeros(len(p["w"])), np.zeros((2, 2)), np.zeros(2),
                                     np.zeros(2))


def test_state_table_requires_sorted_distinct_labels():
    from linclass.sequence._crf_kernels import StateTable
    StateTable([0, 2, 3], [0, 1, 1], 2)
    with pytest.raises(ValueError, match="sorted"):
        StateTable([0, 2, 3], [1, 0, 1], 2)
    with pytest.raises(ValueError, match="sorted"):
        StateTable([0, 2], [1, 1], 2)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        StateTable([0, 1], [2], 2)


@pytest.mark.parametrize("K", [9, 10])
def test_padded_label_rows_match_enumeration(K):
    """K above one vector block (rows padded to 16 lanes): marginals, log Z,
    Viterbi and the gradient against enumeration / finite differences."""
    lengths = [1, 3, 2]
    p = random_problem(lengths, K, seed=K, dense=False)
    n_tok = int(sum(lengths))
    node, log_z, edge = np.zeros((n_tok, K)), np.zeros(3), np.zeros((n_tok, K, K))
    assert _crf.marginals(*kernel_args(p), node, log_z, edge) == 0
    for s in range(3):
        lz, bn, be, _ = brute(p, s)
        a, b = p["offsets"][s], p["offsets"][s + 1]
        np.testing.assert_allclose(log_z[s], lz, rtol=1e-12)
        np.testing.assert_allclose(node[a:b], bn, atol=1e-12)
        np.testing.assert_allclose(edge[a:b], be, atol=1e-12)
    value, (gw, gt, gs, ge) = kernel_nll(p)
    assert value == pytest.approx(nll(p), rel=1e-12)
    h = 1e-6
    for i in range(0, K * K, 7):
        flat = p["trans"].reshape(-1)
        old = flat[i]
        flat[i] = old + h
        up, _ = kernel_nll(p)
        flat[i] = old - h
        down, _ = kernel_nll(p)
        flat[i] = old
        assert gt.reshape(-1)[i] == pytest.approx((up - down) / (2 * h), abs=1e-6)


@pytest.mark.parametrize("K", [1, 5, 8, 9, 17, 23])
def test_simd_levels_agree_with_scalar(K):
    """Every vector level of _crf_simd.h (scalar, SSE2, AVX2 where the CPU has
    it) gives the same objective, gradient and marginals: the products are
    summed in the same order on every level."""
    lengths = [0, 1, 2, 7, 30, 5]
    p = random_problem(lengths, K, F=12, seed=K, dense=False)
    n_tok = int(sum(lengths))
    best = _crf.simd_level()
    results = []
    try:
        for level in range(best + 1):
            assert _crf.set_simd_level(level) == level
            value, g = kernel_nll(p)
            node, log_z = np.zeros((n_tok, K)), np.zeros(len(lengths))
            edge = np.zeros((n_tok, K, K))
            assert _crf.marginals(*kernel_args(p), node, log_z, edge) == 0
            results.append((value, g, node, log_z, edge))
    finally:
        _crf.set_simd_level(-1)
    assert _crf.simd_level() == best
    ref = results[0]
    for other in results[1:]:
        assert other[0] == pytest.approx(ref[0], rel=1e-14)
        for x, y in zip(other[1], ref[1]):
            np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13)
        for x, y in zip(other[2:], ref[2:]):
            np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-15)


def test_kernel_exp_matches_numpy():
    """The kernel's own exp of the potentials (x <= 0): within 4e-16 relative
    of numpy's; 0 below -708 (and at -inf)."""
    x = -np.concatenate([np.linspace(0.0, 40.0, 20001), np.linspace(40.0, 707.9, 2001)])
    ours = np.array([_crf._exp(v) for v in x])
    np.testing.assert_allclose(ours, np.exp(x), rtol=4e-16, atol=0)
    assert _crf._exp(0.0) == 1.0
    assert _crf._exp(-708.5) == 0.0 and _crf._exp(-np.inf) == 0.0
