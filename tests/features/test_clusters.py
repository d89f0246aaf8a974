"""Exchange-algorithm word clusters: the kernel's gains against the objective
recomputed from scratch, the objective against the class-bigram likelihood
computed token by token, local optimality, the estimator's column and its
unseen-word fallback, parameter checks."""
import collections
import gzip
import math
import os
import pathlib

import numpy as np
import pytest

from linclass._core import _clusters
from linclass.exceptions import NotFittedError
from linclass.features.clusters import (WordClusters, _neighbours,
                                        class_bigram_objective)


def _problem(stream, n_words, cls, n_clusters):
    (rp, ri, rd), (lp, li, ld), self_count = _neighbours(np.asarray(stream), n_words)
    k = cls[stream]
    M = np.zeros((n_clusters, n_clusters), dtype=np.int64)
    np.add.at(M, (k, np.roll(k, -1)), 1)
    N = np.bincount(k, minlength=n_clusters).astype(np.int64)
    return dict(word_count=np.bincount(stream, minlength=n_words).astype(np.int64),
                self_count=self_count, r_indptr=rp, r_indices=ri, r_data=rd,
                l_indptr=lp, l_indices=li, l_data=ld, cls=cls, M=M, N=N)


def _random_problem(seed, n_words=8, n_clusters=3, n_tokens=60):
    rng = np.random.default_rng(seed)
    stream = rng.integers(0, n_words, size=n_tokens)
    stream[:n_words] = np.arange(n_words)          # every word occurs
    stream[n_words:n_words + 4] = 2                 # a self bigram (2, 2)
    cls = rng.integers(0, n_clusters, size=n_words).astype(np.int32)
    return stream, cls


def _log_likelihood(stream, cls):
    """log prod_i p(k_i | k_{i-1}) p(w_i | k_i), MLE, circular, token by token."""
    n = len(stream)
    pair, left, word, klass = {}, {}, {}, {}
    for i in range(n):
        a, b = cls[stream[i - 1 + n if i == 0 else i - 1]], cls[stream[i]]
        pair[a, b] = pair.get((a, b), 0) + 1
        left[a] = left.get(a, 0) + 1
        word[stream[i]] = word.get(stream[i], 0) + 1
        klass[b] = klass.get(b, 0) + 1
    total = 0.0
    for i in range(n):
        a, b = cls[stream[i - 1 + n if i == 0 else i - 1]], cls[stream[i]]
        total += math.log(pair[a, b] / left[a]) + math.log(word[stream[i]] / klass[b])
    return total, sum(c * math.log(c) for c in word.values())


@pytest.mark.parametrize("seed", range(6))
def test_objective_is_the_class_bigram_likelihood(seed):
    stream, cls = _random_problem(seed)
    ll, words = _log_likelihood(stream, cls)
    assert class_bigram_objective(stream, cls, 3) + words == pytest.approx(ll, rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_move_gains_equal_recomputed_objective(seed):
    stream, cls = _random_problem(seed, n_words=9, n_clusters=4)
    before = cls.copy()
    kw = _problem(stream, 9, cls, 4)
    M0, N0 = kw["M"].copy(), kw["N"].copy()
    for w in range(9):
        gains = _clusters.move_gains(word=w, **kw)
        ref = []
        for b in range(4):
            moved = cls.copy()
            moved[w] = b
            ref.append(class_bigram_objective(stream, moved, 4))
        ref = np.array(ref)
        # gains are relative to w taken out: differences between classes match
        np.testing.assert_allclose(gains - gains[cls[w]], ref - ref[cls[w]], atol=1e-9)
    # the shim leaves the state as it was
    np.testing.assert_array_equal(cls, before)
    np.testing.assert_array_equal(kw["M"], M0)
    np.testing.assert_array_equal(kw["N"], N0)


@pytest.mark.parametrize("seed", range(6))
def test_exchange_passes_reach_a_local_optimum(seed):
    stream, cls = _random_problem(seed, n_words=10, n_clusters=3, n_tokens=80)
    kw = _problem(stream, 10, cls, 3)
    start = class_bigram_objective(stream, cls, 3)
    history = _clusters.exchange_passes(order=np.arange(10, dtype=np.int32), max_iter=50,
                                        **kw)
    assert history and history[len(history) - 1] == 0
    end = class_bigram_objective(stream, cls, 3)
    assert end >= start - 1e-9
    if sum(history) > 0:
        assert end > start
    # M and N were kept consistent with the classes
    ref = _problem(stream, 10, cls.copy(), 3)
    np.testing.assert_array_equal(kw["M"], ref["M"])
    np.testing.assert_array_equal(kw["N"], ref["N"])
    # no single move improves the objective (brute force over words x classes)
    for w in range(10):
        for b in range(3):
            moved = cls.copy()
            moved[w] = b
            assert class_bigram_objective(stream, moved, 3) <= end + 1e-4


def test_clusters_recover_a_class_bigram_language():
    """Sentences from a deterministic class grammar (DET ADJ? NOUN VERB DET NOUN):
    three clusters put the words of each class together (the sentence
    boundary shares a class with one of them)."""
    rng = np.random.default_rng(0)
    det, noun, verb = ["the", "a", "this"], ["cat", "dog", "bird", "fish"], ["saw", "ate", "hit"]
    X = [[det[rng.integers(3)], noun[rng.integers(4)], verb[rng.integers(3)],
          det[rng.integers(3)], noun[rng.integers(4)]] for _ in range(300)]
    wc = WordClusters(n_clusters=3, max_iter=50).fit(X)
    for group in (det, noun, verb):
        assert len({wc.vocabulary_[w] for w in group}) == 1
    assert len({wc.vocabulary_[g[0]] for g in (det, noun, verb)}) == 3
    assert wc.moves_[len(wc.moves_) - 1] == 0
    assert wc.n_iter_ == len(wc.moves_)


def test_transform_appends_the_cluster_column_and_falls_back():
    X = [["The", "cats", "sat"], ["the", "dogs", "ran"], ["a", "dog", "sat"]]
    wc = WordClusters(n_clusters=2, n_suffix=2).fit(X)
    out = wc.transform([[("The", "x")], ["THE", "bats", "zzz"]])
    assert out[0] == [("The", "x", str(wc.vocabulary_["The"]))]
    # THE -> its lower case 'the'; bats -> suffix 'ts' of 'cats'; zzz -> unknown
    assert out[1] == [("THE", str(wc.vocabulary_["the"])),
                      ("bats", str(wc.vocabulary_["cats"])), ("zzz", "?")]
    assert wc.cluster_of("zzz") == "?"
    assert WordClusters(n_clusters=2, n_suffix=0).fit(X).cluster_of("bats") == "?"


def test_state_round_trip():
    X = [["The", "cats", "sat"], ["the", "dogs", "ran"], ["a", "dog", "sat"]]
    wc = WordClusters(n_clusters=2, n_suffix=2).fit(X)
    copy = WordClusters(n_clusters=2, n_suffix=2)
    copy._set_state(wc._get_state())
    queries = [["The", "THE", "bats", "zzz"]]
    assert copy.transform(queries) == wc.transform(queries)


def test_min_count_clusters_rare_words_as_one_symbol():
    X = [["a", "b", "a", "c"], ["a", "b"]]
    wc = WordClusters(n_clusters=2, min_count=2).fit(X)
    assert set(wc.vocabulary_) == {"a", "b"}
    assert wc.cluster_of("c") in ("?", str(wc.vocabulary_["a"]), str(wc.vocabulary_["b"]))


@pytest.mark.parametrize("params, name", [
    (dict(n_clusters=1), "n_clusters"), (dict(n_clusters=2.5), "n_clusters"),
    (dict(max_iter=0), "max_iter"), (dict(min_count=0), "min_count"),
    (dict(column=-1), "column"), (dict(n_suffix=-1), "n_suffix"),
    (dict(unknown_label=3), "unknown_label"), (dict(max_iter=True), "max_iter"),
])
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        WordClusters(**params).fit([["a", "b"]])


def test_bad_input():
    with pytest.raises(ValueError, match="list of sentences"):
        WordClusters().fit("a b c")
    with pytest.raises(ValueError, match="no tokens"):
        WordClusters().fit([[]])
    with pytest.raises(ValueError, match="column 1"):
        WordClusters(column=1).fit([[("a",)]])
    with pytest.raises(ValueError, match="plain-string"):
        WordClusters(column=1).fit([["a"]])
    with pytest.raises(ValueError, match="not a str"):
        WordClusters().fit([[(3, "x")]])
    with pytest.raises(NotFittedError):
        WordClusters().transform([["a"]])


def _ewt_words(n):
    env = os.environ.get("LINCLASS_DATA")
    home = pathlib.Path(env) if env else \
        pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"
    path = home / "ud_english_ewt" / "en_ewt-ud-train.conllu.gz"
    if not path.exists():
        pytest.skip("UD English EWT not found at %s (set LINCLASS_DATA)" % path)
    sents, cur = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if cur:
                    sents.append(cur)
                    cur = []
                if len(sents) == n:
                    break
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():
                    cur.append(cols[1])
    return sents


def test_default_parameters_on_real_text():
    X = _ewt_words(1500)
    wc = WordClusters().fit(X)          # the defaults: 256 clusters, 20 passes
    vocab = {w for s in X for w in s}
    assert set(wc.vocabulary_) == vocab
    assert set(wc.vocabulary_.values()) <= set(range(256))
    assert wc.n_iter_ <= 20 and all(m >= 0 for m in wc.moves_)
    # the passes raised the likelihood above the round-robin start
    from linclass.features.clusters import BOUNDARY
    ids = {w: i for i, w in enumerate(sorted(vocab) + [BOUNDARY])}
    stream = [ids[w] for s in X for w in s + [BOUNDARY]]
    freq = collections.Counter(stream)
    by_freq = sorted(ids, key=lambda w: -freq[ids[w]])
    start = np.zeros(len(ids), dtype=np.int64)
    for rank, w in enumerate(by_freq):
        start[ids[w]] = rank % 256
    final = np.array([wc.vocabulary_.get(w, 0) for w in sorted(ids, key=ids.get)])
    final[ids[BOUNDARY]] = -1
    # the boundary's class is internal: recompute the best objective over it
    best = max(class_bigram_objective(stream, np.where(final < 0, b, final), 256)
               for b in range(256))
    assert best >= wc.objective_ - 1e-6
    assert wc.objective_ > class_bigram_objective(stream, start, 256)
    out = wc.transform(X[:3])
    assert [len(s) for s in out] == [len(s) for s in X[:3]]
    assert all(len(tok) == 2 for s in out for tok in s)


@pytest.mark.parametrize("change, match", [
    (lambda kw: kw.update(cls=np.array([0, 5, 1, 0, 1, 2, 0, 1], dtype=np.int32)), "cls"),
    (lambda kw: kw["r_indices"].__setitem__(0, 99), "r_indices"),
    (lambda kw: kw.update(l_indptr=kw["l_indptr"][:5].copy()), "l_indptr"),
    (lambda kw: kw.update(M=np.zeros((2, 3), dtype=np.int64)), "M must be"),
    (lambda kw: kw.update(self_count=np.zeros(3, dtype=np.int64)), "self_count"),
])
def test_kernel_entry_points_check_the_problem(change, match):
    stream, cls = _random_problem(0, n_words=8, n_clusters=3)
    kw = _problem(stream, 8, cls, 3)
    change(kw)
    with pytest.raises(ValueError, match=match):
        _clusters.move_gains(word=0, **kw)
    with pytest.raises(ValueError, match=match):
        _clusters.exchange_passes(order=np.arange(8, dtype=np.int32), max_iter=2, **kw)


def test_kernel_entry_points_check_word_and_order():
    stream, cls = _random_problem(0, n_words=8, n_clusters=3)
    kw = _problem(stream, 8, cls, 3)
    with pytest.raises(ValueError, match="word"):
        _clusters.move_gains(word=8, **kw)
    with pytest.raises(ValueError, match="order"):
        _clusters.exchange_passes(order=np.array([0, 8], dtype=np.int32), max_iter=2, **kw)


def test_more_clusters_than_words_puts_each_word_alone_without_a_huge_table():
    """n_clusters=10**9 asked for a 10**9 x 10**9 count table (MemoryError): with
    more clusters than word types every word is its own cluster, as with
    n_clusters equal to the number of types."""
    X = [["a", "b", "a", "c"], ["a", "b", "d"]]
    huge = WordClusters(n_clusters=10 ** 9).fit(X)
    exact = WordClusters(n_clusters=5).fit(X)          # 4 words and the boundary
    assert huge.vocabulary_ == exact.vocabulary_
    assert len(set(huge.vocabulary_.values())) == 4
    assert huge.objective_ == pytest.approx(exact.objective_)
    copy = WordClusters(n_clusters=10 ** 9)
    copy._set_state(huge._get_state())
    assert copy.transform(X) == huge.transform(X)
