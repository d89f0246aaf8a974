"""Viterbi kernels and the perceptron epoch against brute force / plain Python."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _sequence


def random_problem(rng, n_tokens_per_sent, K, F, dtype=np.float32, order=1, density=0.4):
    n_tokens = int(sum(n_tokens_per_sent))
    dense = (rng.random((n_tokens, F)) < density) * rng.integers(1, 3, (n_tokens, F))
    X = sp.csr_matrix(dense.astype(np.float64))
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    W = rng.standard_normal((F, K)).astype(dtype)
    trans = rng.standard_normal((K, K)).astype(dtype)
    trans2 = (rng.standard_normal(K ** 3).astype(dtype) if order == 2
              else np.zeros(0, dtype=dtype))
    start = rng.standard_normal(K).astype(dtype)
    stop = rng.standard_normal(K).astype(dtype)
    offsets = np.concatenate([[0], np.cumsum(n_tokens_per_sent)]).astype(np.int64)
    return X, W, trans, trans2, start, stop, offsets


def path_score(E, y, trans, trans2, start, stop):
    if len(y) == 0:
        return 0.0
    s = start[y[0]] + stop[y[-1]] + sum(E[t, y[t]] for t in range(len(y)))
    s += sum(trans[y[t - 1], y[t]] for t in range(1, len(y)))
    if trans2.size:
        K = len(start)
        s += sum(trans2[(y[t - 2] * K + y[t - 1]) * K + y[t]] for t in range(2, len(y)))
    return s


def brute_force(E, K, trans, trans2, start, stop, gold=None, loss_weight=1.0):
    n = E.shape[0]
    best, best_y = -np.inf, None
    for y in itertools.product(range(K), repeat=n):
        s = path_score(E.astype(np.float64), y, trans.astype(np.float64),
                       trans2.astype(np.float64), start.astype(np.float64),
                       stop.astype(np.float64))
        if gold is not None:
            s += loss_weight * sum(a != b for a, b in zip(y, gold))
        if s > best + 1e-9:
            best, best_y = s, y
    return best, best_y


def decode(X, W, trans, trans2, start, stop, offsets, order, gold=None, loss_weight=1.0):
    out = np.full(X.shape[0], -1, dtype=np.int32)
    scores = np.zeros(len(offsets) - 1)
    _sequence.viterbi_batch(W, trans, trans2, start, stop, X.indices, X.data, X.indptr,
                            offsets, out, scores, order=order, gold=gold,
                            loss_weight=loss_weight)
    return out, scores


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(12))
def test_viterbi_equals_brute_force(seed, dtype, order):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    lengths = rng.integers(0, 5, size=4)
    X, W, trans, trans2, start, stop, offsets = random_problem(rng, lengths, K, 5, dtype, order)
    gold = rng.integers(0, K, X.shape[0]).astype(np.int32)
    E_all = X.toarray() @ W.astype(np.float64)
    for augmented in (False, True):
        out, scores = decode(X, W, trans, trans2, start, stop, offsets, order,
                             gold=gold if augmented else None, loss_weight=0.7)
        for s in range(len(lengths)):
            a, b = offsets[s], offsets[s + 1]
            best, best_y = brute_force(E_all[a:b], K, trans, trans2, start, stop,
                                       gold[a:b] if augmented else None, 0.7)
            tol = 1e-4 if dtype == np.float32 else 1e-9
            assert scores[s] == pytest.approx(best, abs=tol)
            if b > a:
                assert tuple(out[a:b]) == best_y


def test_viterbi_ties_pick_a_best_path_deterministically():
    K, F = 3, 2
    X = sp.csr_matrix(np.ones((4, F)))
    W = np.zeros((F, K), np.float32)
    z = np.zeros(K, np.float32)
    offsets = np.array([0, 4], np.int64)
    out, scores = decode(X, W, np.zeros((K, K), np.float32), np.zeros(0, np.float32), z, z,
                         offsets, 1)
    assert scores[0] == 0.0
    np.testing.assert_array_equal(out, [0, 0, 0, 0])


def reference_training(X, offsets, gold, K, order, visit, n_epochs):
    """Plain averaged structured perceptron that stores every weight vector.

    Returns the final weights and the mean of the weights w_0 (zero), w_1, ...,
    w_N in effect after each of the N visited sentences -- the average the
    lazy-averaging trick computes (see _weights.pxd).  Decoding uses the
    Viterbi kernel (checked against brute force above) so that ties -- common
    with integer weights -- are broken the same way.
    """
    F = X.shape[1]
    W, trans, trans2 = np.zeros((F, K)), np.zeros((K, K)), np.zeros(K ** 3 if order == 2 else 0)
    start, stop = np.zeros(K), np.zeros(K)
    weights = (W, trans, trans2, start, stop)
    history = [[a.copy() for a in weights]]
    Xd = X.toarray()
    for _ in range(n_epochs):
        for s in visit:
            a, b = offsets[s], offsets[s + 1]
            g = tuple(gold[a:b])
            if b > a:
                y, _ = decode(X, W, trans, trans2, start, stop,
                              np.array([a, b], np.int64), order)
                y = tuple(y[a:b])
                if y != g:
                    for t in range(b - a):
                        if y[t] != g[t]:
                            W[:, g[t]] += Xd[a + t]
                            W[:, y[t]] -= Xd[a + t]
                    start[g[0]] += 1
                    start[y[0]] -= 1
                    stop[g[-1]] += 1
                    stop[y[-1]] -= 1
                    for t in range(1, b - a):
                        trans[g[t - 1], g[t]] += 1
                        trans[y[t - 1], y[t]] -= 1
                    for t in range(2, b - a) if order == 2 else ():
                        trans2[(g[t - 2] * K + g[t - 1]) * K + g[t]] += 1
                        trans2[(y[t - 2] * K + y[t - 1]) * K + y[t]] -= 1
            history.append([a.copy() for a in weights])
    averages = [np.mean([h[i] for h in history], axis=0) for i in range(5)]
    return weights, averages, len(history)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_perceptron_epoch_equals_python_reference(seed, order):
    rng = np.random.default_rng(100 + seed)
    K, F = 3, 4
    lengths = rng.integers(0, 5, size=6)
    X, W, trans, trans2, start, stop, offsets = random_problem(rng, lengths, K, F, np.float32,
                                                               order, density=0.5)
    weights = [np.zeros_like(a) for a in (W, trans, trans2, start, stop)]
    sums = [np.zeros(a.shape, np.float64) for a in weights]
    gold = rng.integers(0, K, X.shape[0]).astype(np.int32)
    visit = rng.permutation(len(lengths)).astype(np.int32)
    n_epochs = 3
    final_ref, avg_ref, n_vectors = reference_training(X, offsets, gold, K, order, visit,
                                                       n_epochs)
    c = 1.0
    for _ in range(n_epochs):
        c, n_sent_err, n_tok_err = _sequence.perceptron_epoch(
            weights[0], sums[0], weights[1], sums[1], weights[2], sums[2],
            weights[3], sums[3], weights[4], sums[4],
            X.indices, X.data, X.indptr, offsets, gold, visit, order=order, counter=c)
        assert 0 <= n_sent_err <= len(lengths) and 0 <= n_tok_err <= X.shape[0]
    assert c == n_vectors
    for mine, u, ref, ref_avg in zip(weights, sums, final_ref, avg_ref):
        np.testing.assert_allclose(mine, ref, atol=1e-5)
        np.testing.assert_allclose(mine - u / c, ref_avg, atol=1e-5)


@pytest.mark.parametrize("K", [4, 5, 6, 7, 9, 13])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_viterbi_many_labels_equals_brute_force(K, dtype):
    """Label counts that exercise the 4-wide SIMD relaxation and its
    overlapping last block (K % 4 != 0) in float32, and the scalar float64 path."""
    rng = np.random.default_rng(K)
    lengths = np.array([1, 2, 3, 3, 0, 2])
    X, W, trans, trans2, start, stop, offsets = random_problem(rng, lengths, K, 6, dtype)
    gold = rng.integers(0, K, X.shape[0]).astype(np.int32)
    E_all = X.toarray() @ W.astype(np.float64)
    for augmented in (False, True):
        out, scores = decode(X, W, trans, trans2, start, stop, offsets, 1,
                             gold=gold if augmented else None, loss_weight=0.5)
        for s in range(len(lengths)):
            a, b = offsets[s], offsets[s + 1]
            best, best_y = brute_force(E_all[a:b], K, trans, trans2, start, stop,
                                       gold[a:b] if augmented else None, 0.5)
            assert scores[s] == pytest.approx(best, abs=1e-4)
            if b > a:
                assert tuple(out[a:b]) == best_y


@pytest.mark.parametrize("K", [5, 8])
def test_viterbi_ties_with_many_labels_pick_smallest_predecessor(K):
    # all-zero weights: every path ties; the kernel must return label 0 everywhere,
    # in float32 (SIMD) exactly as in float64 (scalar)
    X = sp.csr_matrix(np.ones((6, 2)))
    offsets = np.array([0, 6], np.int64)
    for dtype in (np.float32, np.float64):
        z = np.zeros(K, dtype)
        out, _ = decode(X, np.zeros((2, K), dtype), np.zeros((K, K), dtype),
                        np.zeros(0, dtype), z, z, offsets, 1)
        np.testing.assert_array_equal(out, np.zeros(6))


@pytest.mark.parametrize("K", [1, 3, 8, 9, 22, 33, 45])
@pytest.mark.parametrize("binary", [True, False])
def test_simd_levels_decode_and_train_bit_identically(K, binary):
    """The float32 kernels (emission rows in registers, max-only forward pass
    with back pointers recomputed in the backtrace) give the same labels,
    scores and trained weights, bit for bit, at every instruction-set level
    (AVX2 / SSE2 / scalar); label counts cover the partial last vector, one
    vector, several, and more than one 32-label pass."""
    rng = np.random.default_rng(K + 100 * binary)
    lengths = rng.integers(0, 9, size=40)
    X, W, trans, trans2, start, stop, offsets = random_problem(rng, lengths, K, 12,
                                                               density=0.3)
    if binary:
        X.data[:] = 1.0
    W = np.round(W, 1)                 # coarse weights: ties between paths happen
    trans = np.round(trans, 1)
    gold = rng.integers(0, K, X.shape[0]).astype(np.int32)
    visit = rng.permutation(len(lengths)).astype(np.int32)
    results = []
    default = _sequence.simd_level()
    try:
        for level in range(default, -1, -1):
            assert _sequence.simd_level(level) == level
            out = []
            for g in (None, gold):
                labels, scores = decode(X, W, trans, trans2, start, stop, offsets, 1,
                                        gold=g, loss_weight=0.5)
                out += [labels, scores]
            weights = [np.zeros_like(a) for a in (W, trans, trans2, start, stop)]
            sums = [np.zeros(a.shape, np.float64) for a in weights]
            c = 1.0
            for _ in range(3):
                c, _, _ = _sequence.perceptron_epoch(
                    weights[0], sums[0], weights[1], sums[1], weights[2], sums[2],
                    weights[3], sums[3], weights[4], sums[4], X.indices, X.data, X.indptr,
                    offsets, gold, visit, order=1, counter=c)
            out += weights + sums
            results.append(out)
    finally:
        _sequence.simd_level(default)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_binary_flag_matches_the_data():
    """``binary=1`` (the caller's promise that every value is 1.0) and the
    kernel's own check give the same result on binary data."""
    rng = np.random.default_rng(5)
    X, W, trans, trans2, start, stop, offsets = random_problem(rng, [4, 0, 3, 6], 5, 7)
    X.data[:] = 1.0
    a = decode(X, W, trans, trans2, start, stop, offsets, 1)
    out = np.full(X.shape[0], -1, dtype=np.int32)
    scores = np.zeros(len(offsets) - 1)
    _sequence.viterbi_batch(W, trans, trans2, start, stop, X.indices, X.data, X.indptr,
                            offsets, out, scores, order=1, binary=1)
    np.testing.assert_array_equal(a[0], out)
    np.testing.assert_array_equal(a[1], scores)


def test_simd_level_rejects_unknown_levels():
    with pytest.raises(ValueError, match="level"):
        _sequence.simd_level(3)


def _random_chain_problem(rng, n_sent=40, F=30, K=5):
    lengths = rng.integers(1, 8, n_sent)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n_tok = int(offsets[-1])
    nnz = rng.integers(1, 5, n_tok)
    indptr = np.concatenate(([0], np.cumsum(nnz))).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(F, size=k, replace=False))
                              for k in nnz]).astype(np.int32)
    data = np.ones(len(indices))
    gold = rng.integers(0, K, n_tok).astype(np.int32)
    return indices, data, indptr, offsets, gold


def _new_overlay(F, K):
    return {"slot": np.zeros((F, 2), np.int32), "rows": np.empty(F, np.int32),
            "touched": np.empty(F, np.int32), "pool_u": np.empty((F, K)), "n_rows": 0,
            "n_touched": 0}


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("zero_start", [False, True])
def test_overlay_shard_epochs_and_mixing_equal_dense_private_copies(n_shards, zero_start):
    # parameter mixing with the shards' emission sums in compact overlays kept over the
    # fit == each shard on dense private weights and dense sums (zero at the start of
    # the fit, kept over its epochs), the float64 mean of the weights after each epoch,
    # and at the end the shards' sums added to the model's in shard order; bit for bit
    # (weights after every epoch, the fold, the averages)
    from linclass._core import _sequence as core
    rng = np.random.default_rng(n_shards + 10 * zero_start)
    F, K = 30, 5
    indices, data, indptr, offsets, gold = _random_chain_problem(rng, F=F, K=K)
    n_sent = len(offsets) - 1
    if zero_start:
        W, U = np.zeros((F, K), np.float32), np.zeros((F, K))
    else:
        W, U = rng.normal(size=(F, K)).astype(np.float32), rng.normal(size=(F, K))
    small = [rng.normal(size=(K, K)).astype(np.float32), np.zeros(0, np.float32),
             rng.normal(size=K).astype(np.float32), rng.normal(size=K).astype(np.float32)]
    W_ref, U_ref = W.copy(), U.copy()
    shards = [dict(_new_overlay(F, K), w=W if j == 0 else W.copy()) for j in range(n_shards)]
    dense_u = [np.zeros((F, K)) for _ in range(n_shards)]
    counter = 1.0
    for epoch in range(3):
        stamp = epoch + 1
        order = rng.permutation(n_sent).astype(np.int32)
        bounds = np.linspace(0, n_sent, n_shards + 1).astype(int)
        dense_w = [W_ref.copy() for _ in range(n_shards)]
        counters = []
        for j in range(n_shards):
            part = np.ascontiguousarray(order[bounds[j]:bounds[j + 1]])
            ref_small = [a.copy() for a in small]
            ref_sums = [np.zeros(a.shape) for a in small]
            before = dense_u[j].copy()
            w_before = dense_w[j].copy()
            c_ref = core.perceptron_epoch(
                dense_w[j], dense_u[j], ref_small[0], ref_sums[0], ref_small[1], ref_sums[1],
                ref_small[2], ref_sums[2], ref_small[3], ref_sums[3], indices, data, indptr,
                offsets, gold, part, counter=counter, sum_scale=1.0 / n_shards)
            got_small = [a.copy() for a in small]
            got_sums = [np.zeros(a.shape) for a in small]
            sh = shards[j]
            out = core.perceptron_epoch_shard(
                sh["w"], got_small[0], got_sums[0], got_small[1], got_sums[1], got_small[2],
                got_sums[2], got_small[3], got_sums[3], indices, data, indptr, offsets, gold,
                part, sh["slot"], sh["rows"], sh["pool_u"], sh["n_rows"], sh["touched"],
                stamp, counter=counter, sum_scale=1.0 / n_shards)
            sh["n_rows"], sh["n_touched"] = out[3], out[4]
            assert out[:3] == c_ref
            assert sh["w"].tobytes() == dense_w[j].tobytes()
            for a, b in zip(got_small + got_sums, ref_small + ref_sums):
                assert a.tobytes() == b.tobytes()
            # the pool: every row updated so far in the fit, its sums those of the dense run
            rows = sh["rows"][:out[3]]
            assert len(set(rows.tolist())) == out[3]
            assert np.array_equal(np.sort(rows), np.flatnonzero(np.any(dense_u[j] != 0, axis=1)))
            assert np.array_equal(sh["slot"][rows, 0], np.arange(1, out[3] + 1))
            assert np.count_nonzero(sh["slot"][:, 0]) == out[3]
            assert sh["pool_u"][:out[3]].tobytes() == dense_u[j][rows].tobytes()
            # the epoch's list: the rows this epoch updated, each once, stamped
            touched = sh["touched"][:out[4]]
            changed = np.flatnonzero(np.any(dense_u[j] != before, axis=1)
                                     | np.any(dense_w[j] != w_before, axis=1))
            assert len(set(touched.tolist())) == out[4]
            assert set(changed.tolist()) <= set(touched.tolist())
            assert np.array_equal(np.sort(np.flatnonzero(sh["slot"][:, 1] == stamp)),
                                  np.sort(touched))
            counters.append(c_ref[0])
        mean = np.zeros((F, K))
        for w in dense_w:
            mean += w
        W_ref = (mean / n_shards).astype(np.float32)
        args = ([sh["w"] for sh in shards], [sh["slot"] for sh in shards],
                [sh["touched"] for sh in shards], [sh["n_touched"] for sh in shards], stamp)
        n_parts = 2
        for part_id in reversed(range(n_parts)):      # any order: each row has one part
            core.mix_shard_rows(part_id, n_parts, *args)
        for sh in shards:
            assert sh["w"].tobytes() == W_ref.tobytes()
        counter = max(counters)
    for u in dense_u:
        U_ref += u
    avg_ref = np.empty_like(W_ref)
    core.averaged_weights(W_ref.reshape(-1), U_ref.reshape(-1), counter, avg_ref.reshape(-1))
    slots, pools = [sh["slot"] for sh in shards], [sh["pool_u"] for sh in shards]
    # the averages alone (the model's sums not written), in two row blocks
    avg = np.full_like(W_ref, np.nan)
    U_before = U.copy()
    for a, b in ((0, 13), (13, F)):
        core.fold_shard_sums(a, b, shards[0]["w"], U, slots, pools, counter, avg,
                             zero_start=zero_start, write_sums=False)
    assert avg.tobytes() == avg_ref.tobytes()
    assert U.tobytes() == U_before.tobytes()
    # then the sums folded (later, as partial_fit does), and both at once
    core.fold_shard_sums(0, F, shards[0]["w"], U, slots, pools, zero_start=zero_start)
    assert U.tobytes() == U_ref.tobytes()
    U2, avg2 = U_before.copy(), np.full_like(W_ref, np.nan)
    core.fold_shard_sums(0, F, shards[0]["w"], U2, slots, pools, counter, avg2,
                         zero_start=zero_start)
    assert U2.tobytes() == U_ref.tobytes() and avg2.tobytes() == avg_ref.tobytes()


def test_overlay_kernels_refuse_bad_shapes():
    from linclass._core import _sequence as core
    F, K = 6, 3
    W = np.zeros((F, K), np.float32)
    small = [np.zeros((K, K), np.float32), np.zeros((K, K)), np.zeros(0, np.float32),
             np.zeros(0), np.zeros(K, np.float32), np.zeros(K), np.zeros(K, np.float32),
             np.zeros(K)]
    problem = (np.array([0], np.int32), np.ones(1), np.array([0, 1], np.int32),
               np.array([0, 1], np.int64), np.zeros(1, np.int32), np.zeros(1, np.int32))
    ov = _new_overlay(F, K)
    slot, rows, touched, pool_u = ov["slot"], ov["rows"], ov["touched"], ov["pool_u"]
    with pytest.raises(ValueError, match="slot must be"):
        core.perceptron_epoch_shard(W, *small, *problem, slot[:-1], rows, pool_u, 0,
                                    touched, 1)
    with pytest.raises(ValueError, match="slot must be"):
        core.perceptron_epoch_shard(W, *small, *problem, slot, rows, pool_u, 0,
                                    touched[:-1], 1)
    with pytest.raises(ValueError, match="n_rows"):
        core.perceptron_epoch_shard(W, *small, *problem, slot, rows, pool_u, F + 1,
                                    touched, 1)
    with pytest.raises(ValueError, match="in use"):
        core.perceptron_epoch_shard(W, *small, *problem, slot, rows, pool_u, 1, touched, 1)
    bad = slot.copy()
    bad[2, 0] = 3                         # row 2 claims pool row 2, beyond n_rows = 1
    rows[0] = 2
    with pytest.raises(ValueError, match="inconsistent"):
        core.perceptron_epoch_shard(W, *small, *problem, bad, rows, pool_u, 1, touched, 1)
    with pytest.raises(ValueError, match="stamp"):
        core.perceptron_epoch_shard(W, *small, *problem, slot, rows, pool_u, 0, touched, 0)
    touched[0] = F
    with pytest.raises(ValueError, match="out of range"):
        core.mix_shard_rows(0, 1, [W], [slot], [touched], [1], 1)
    with pytest.raises(ValueError, match="wrong shapes"):
        core.mix_shard_rows(0, 1, [W], [slot[:-1]], [touched], [0], 1)
    with pytest.raises(ValueError, match="one weight matrix"):
        core.mix_shard_rows(0, 1, [W, W], [slot], [touched], [0], 1)
    with pytest.raises(ValueError, match="part"):
        core.mix_shard_rows(2, 2, [W], [slot], [touched], [0], 1)
    U = np.zeros((F, K))
    with pytest.raises(ValueError, match="out of range"):
        core.fold_shard_sums(0, F, W, U, [bad], [pool_u[:2]])
    with pytest.raises(ValueError, match="first <= last"):
        core.fold_shard_sums(0, F + 1, W, U, [slot], [pool_u])
    with pytest.raises(ValueError, match="nothing to write"):
        core.fold_shard_sums(0, F, W, U, [slot], [pool_u], write_sums=False)
    with pytest.raises(ValueError, match="shape of W"):
        core.fold_shard_sums(0, F, W, U[:-1], [slot], [pool_u])