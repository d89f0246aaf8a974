"""String kernels against explicit feature maps (brute force), composition and the Mercer check."""
import itertools

import numpy as np
import pytest

from linclass.kernels import (KernelFunction, NormalizedKernel, SpectrumKernel, SubsequenceKernel,
                              check_mercer, is_positive_semidefinite, pairwise_kernels)


def _spectrum_features(s, k):
    out = {}
    for i in range(len(s) - k + 1):
        g = tuple(s[i:i + k])
        out[g] = out.get(g, 0) + 1
    return out


def _subsequence_features(s, n, lam):
    """phi_u(s) = sum over index tuples i with s[i] = u of lam^(i_n - i_1 + 1)."""
    out = {}
    for idx in itertools.combinations(range(len(s)), n):
        u = tuple(s[i] for i in idx)
        out[u] = out.get(u, 0.0) + lam ** (idx[n - 1] - idx[0] + 1)
    return out


def _dot(a, b):
    return sum(v * b.get(k, 0.0) for k, v in a.items())


STRINGS = ["", "a", "ab", "abab", "cat", "car", "bar", "abracadabra", "aaaa", "cbacb"]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_spectrum_equals_explicit_counts(k):
    K = SpectrumKernel(k)(STRINGS)
    F = [_spectrum_features(s, k) for s in STRINGS]
    ref = np.array([[_dot(a, b) for b in F] for a in F])
    np.testing.assert_allclose(K, ref)
    np.testing.assert_allclose(SpectrumKernel(k).diag(STRINGS), np.diag(ref))
    M, vocab = SpectrumKernel(k).feature_map(STRINGS)
    np.testing.assert_allclose((M @ M.T).toarray(), ref)
    # a cross block with new symbols
    other = ["zab", "abz", "q"]
    Fo = [_spectrum_features(s, k) for s in other]
    np.testing.assert_allclose(SpectrumKernel(k)(other, STRINGS),
                               [[_dot(a, b) for b in F] for a in Fo])


def test_spectrum_token_sequences_and_large_alphabet():
    docs = [("the", "cat", "sat"), ["the", "cat", "ran"], ["a", "dog", "sat", "the", "cat"]]
    K = SpectrumKernel(2)(docs)
    F = [_spectrum_features(d, 2) for d in docs]
    np.testing.assert_allclose(K, [[_dot(a, b) for b in F] for a in F])
    # 5000 distinct tokens, k = 6: 5000^6 > 2^62 keys fall back to shared ids
    rng = np.random.RandomState(0)
    seqs = [list(rng.randint(5000, size=40)) for _ in range(5)]
    seqs.append(seqs[0][3:20])
    F = [_spectrum_features(s, 6) for s in seqs]
    np.testing.assert_allclose(SpectrumKernel(6)(seqs[:3], seqs[3:]),
                               [[_dot(a, b) for b in F[3:]] for a in F[:3]])


@pytest.mark.parametrize("n,lam", [(1, 0.5), (2, 0.5), (3, 0.8), (2, 1.0)])
def test_subsequence_equals_explicit_feature_map(n, lam):
    strings = [s for s in STRINGS if len(s) <= 8] + ["science", "scent"]
    F = [_subsequence_features(s, n, lam) for s in strings]
    ref = np.array([[_dot(a, b) for b in F] for a in F])
    raw = SubsequenceKernel(n, lam, normalize=False)(strings)
    np.testing.assert_allclose(raw, ref, rtol=1e-12, atol=1e-14)
    norm = SubsequenceKernel(n, lam)(strings, strings[:4])
    d = np.diag(ref)
    scale = np.sqrt(np.outer(d, d[:4]))
    np.testing.assert_allclose(norm, np.divide(ref[:, :4], scale, out=np.zeros_like(scale),
                                               where=scale > 0), rtol=1e-12, atol=1e-14)


def test_lodhi_worked_example():
    # Lodhi et al. (2002), section 2: K_2(cat, car) = lam^4 (only "ca" is shared)
    lam = 0.3
    assert SubsequenceKernel(2, lam, normalize=False)(["cat"], ["car"])[0, 0] == \
        pytest.approx(lam ** 4)
    expected = 1.0 / (2 + lam ** 2)
    assert SubsequenceKernel(2, lam)(["cat"], ["car"])[0, 0] == pytest.approx(expected)


def test_composition_and_mercer_check():
    rng = np.random.RandomState(0)
    X = rng.randn(15, 3)
    lin, rbf = KernelFunction("linear"), KernelFunction("rbf", gamma=0.5)
    np.testing.assert_allclose((lin + rbf)(X), X @ X.T + pairwise_kernels(X, kernel="rbf",
                                                                          gamma=0.5))
    np.testing.assert_allclose((2.0 * lin * rbf)(X), 2 * (X @ X.T) *
                               pairwise_kernels(X, kernel="rbf", gamma=0.5))
    cos = NormalizedKernel(lin)(X)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    np.testing.assert_allclose(cos, Xn @ Xn.T)
    for k in (lin + rbf, lin * rbf, NormalizedKernel(KernelFunction("poly", degree=2)),
              NormalizedKernel(SpectrumKernel(2)) + SubsequenceKernel(2)):
        data = ["abc", "abd", "xbc", "aaa", "cab"] if getattr(k, "accepts_sequences", False) \
            else X
        assert is_positive_semidefinite(k(data))
        check_mercer(k(data))
    bad = pairwise_kernels(X, kernel="sigmoid", gamma=2.0, coef0=-1.0)
    assert not is_positive_semidefinite(bad)
    with pytest.raises(ValueError, match="not positive semi-definite: smallest eigenvalue"):
        check_mercer(bad)
    with pytest.raises(ValueError, match="not symmetric"):
        check_mercer(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="scale must be"):
        (lin * -1.0)(X)


def test_bad_sequence_inputs():
    with pytest.raises(ValueError, match="single string"):
        SpectrumKernel(2)("abc")
    with pytest.raises(ValueError, match="k must be"):
        SpectrumKernel(0)(["abc"])
    with pytest.raises(ValueError, match="decay"):
        SubsequenceKernel(2, decay=1.5)(["abc"])
    with pytest.raises(ValueError, match="string or a list"):
        SpectrumKernel(2)([1.0, 2.0])


def test_subsequence_kernel_refuses_a_pair_beyond_max_pair_size():
    """Two 40,000-character strings ran for over a minute; the limit names the
    lengths, ``None`` lifts it, and pairs under it are untouched."""
    long_a, long_b = "ab" * 20_000, "ba" * 20_000
    with pytest.raises(ValueError, match="40000 and 40000 symbols"):
        SubsequenceKernel(2)([long_a], [long_b])
    with pytest.raises(ValueError, match="max_pair_size"):
        SubsequenceKernel(2, max_pair_size=10)(["abcd", "abcdef"])
    with pytest.raises(ValueError, match="max_pair_size must be"):
        SubsequenceKernel(2, max_pair_size=0)(["abc"])
    small = ["abcd", "abce", "xbcd"]
    np.testing.assert_array_equal(SubsequenceKernel(2, max_pair_size=16)(small),
                                  SubsequenceKernel(2, max_pair_size=None)(small))
