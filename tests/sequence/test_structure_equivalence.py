"""The fused Cython perceptron epoch of SequenceTagger is a fast path of the
generic StructuredPerceptron on SequenceStructure: both give the same weights."""
import itertools

import numpy as np
import pytest

from linclass.sequence import SequenceTagger
from linclass.structured import StructuredPerceptron, StructuredSVM
from linclass.sequence.structure import SequenceStructure


def small_corpus(seed=0, n_sent=40):
    rng = np.random.default_rng(seed)
    vocab = ["w%d" % i for i in range(12)]
    X, Y = [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, 7))
        words = [vocab[i] for i in rng.integers(0, len(vocab), n)]
        X.append([(w,) for w in words])
        # labels depend on the word and on the previous label: transitions matter
        tags, prev = [], "A"
        for w in words:
            k = int(w[1:])
            prev = "B" if (k % 3 == 0 or (prev == "B" and k % 2 == 0)) else ("C" if k > 8 else "A")
            tags.append(prev)
        Y.append(tags)
    return X, Y


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("average", [False, True])
def test_fused_epoch_equals_generic_perceptron(order, average):
    X, Y = small_corpus()
    tagger = SequenceTagger(features="w[0] w[-1]", order=order, max_iter=4, shuffle=False,
                            average=average).fit(X, Y)
    structure = SequenceStructure(tagger.n_features_, len(tagger.classes_), order=order)
    Xf, offsets = tagger._featurize(X, fit=False)
    sentences = structure.split(Xf, offsets)
    codes = [np.searchsorted(tagger.classes_, y).astype(np.int32) for y in Y]
    generic = StructuredPerceptron(structure, max_iter=4, shuffle=False, average=average)
    generic.fit(sentences, codes)
    W, trans, trans2, start, stop = structure.unpack(generic.coef_)
    np.testing.assert_allclose(tagger.emission_, W, atol=1e-5)
    np.testing.assert_allclose(tagger.transitions_, trans, atol=1e-5)
    np.testing.assert_allclose(tagger.start_, start, atol=1e-5)
    np.testing.assert_allclose(tagger.stop_, stop, atol=1e-5)
    np.testing.assert_allclose(tagger.transitions2_, trans2, atol=1e-5)


def test_structure_decoders_equal_brute_force():
    X, Y = small_corpus(1, 10)
    tagger = SequenceTagger(features="w[0]", max_iter=1).fit(X, Y)
    K = len(tagger.classes_)
    structure = SequenceStructure(tagger.n_features_, K)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(structure.n_features)
    Xf, offsets = tagger._featurize(X, fit=False)
    for x, y in zip(structure.split(Xf, offsets), Y):
        y = np.searchsorted(tagger.classes_, y)
        candidates = [np.array(c) for c in itertools.product(range(K), repeat=len(x))]

        def score(c, aug):
            idx, val = structure.joint_feature(x, c)
            return w[idx] @ val + (structure.loss(y, c) if aug else 0.0)
        best = max(candidates, key=lambda c: score(c, False))
        best_aug = max(candidates, key=lambda c: score(c, True))
        assert score(structure.decode(w, x), False) == pytest.approx(score(best, False))
        assert score(structure.loss_augmented_decode(w, x, y), True) == \
            pytest.approx(score(best_aug, True))


def test_ssvm_tagger_learns():
    X, Y = small_corpus(2, 60)
    ssvm = SequenceTagger(features="w[0] w[-1]", trainer="ssvm", C=10.0, max_iter=100)
    ssvm.fit(X, Y)
    assert ssvm.score(X, Y) > 0.95
    assert ssvm.objective_ is not None


def test_ssvm_objective_matches_direct_structured_svm():
    # the tagger's BCFW (fused chain passes, averaging, gap per token) stops with
    # a certified duality gap: its objective is within that gap of the optimum
    # found by the 1-slack cutting-plane solver at a tight tolerance
    X, Y = small_corpus(3, 25)
    tagger = SequenceTagger(features="w[0]", trainer="ssvm", C=1.0, max_iter=200, tol=5e-3,
                            random_state=0)
    tagger.fit(X, Y)
    structure = SequenceStructure(tagger.n_features_, len(tagger.classes_))
    Xf, offsets = tagger._featurize(X, fit=False)
    codes = [np.searchsorted(tagger.classes_, y).astype(np.int32) for y in Y]
    svm = StructuredSVM(structure, C=1.0, max_iter=2000, tol=1e-6, method="1-slack").fit(
        structure.split(Xf, offsets), codes)
    last = tagger.history_[-1]
    n_tokens = sum(len(y) for y in Y)
    assert last["gap"] <= 5e-3 * 1.0 * n_tokens
    assert svm.objective_ - 1e-4 * svm.objective_ <= tagger.objective_
    assert tagger.objective_ <= svm.objective_ + last["gap"] + 1e-6


@pytest.mark.parametrize("order", [1, 2])
def test_batch_fast_path_equals_generic_loops(order):
    from linclass.structured import Structure
    from linclass.sequence.structure import SentenceBatch
    X, Y = small_corpus(4, 30)
    X.append([])
    Y.append([])
    tagger = SequenceTagger(features="w[0] w[-1]", max_iter=1).fit(X, Y)
    structure = SequenceStructure(tagger.n_features_, len(tagger.classes_), order=order)
    assert structure.has_fast_path()
    Xf, offsets = tagger._featurize(X, fit=False)
    batch = SentenceBatch.from_matrix(Xf, offsets)
    sentences = structure.split(Xf, offsets)
    assert len(SentenceBatch.from_sentences(sentences)) == len(batch)
    rng = np.random.default_rng(order)
    w = rng.standard_normal(structure.n_features)
    codes = [np.searchsorted(tagger.classes_, y).astype(np.int32) for y in Y]
    other = [rng.integers(0, len(tagger.classes_), len(y)).astype(np.int32) for y in Y]
    fast_dec = structure.batch_loss_augmented_decode(w, batch, codes)
    slow_dec = [structure.loss_augmented_decode(w, x, y) for x, y in zip(sentences, codes)]
    assert all(np.array_equal(a, b) for a, b in zip(fast_dec, slow_dec))
    np.testing.assert_allclose(structure.batch_score(w, batch, [codes, other]),
                               Structure.batch_score(structure, w, batch, [codes, other]))
    weights = rng.standard_normal((2, len(batch)))
    np.testing.assert_allclose(
        structure.batch_joint_feature(batch, [codes, other], weights),
        Structure.batch_joint_feature(structure, batch, [codes, other], weights), atol=1e-10)
    np.testing.assert_allclose(structure.batch_loss(codes, other),
                               Structure.batch_loss(structure, codes, other))


def test_bad_inputs_are_refused_before_the_kernel():
    from linclass._core import _sequence
    from linclass.sequence.structure import SentenceBatch
    X, Y = small_corpus(5, 5)
    tagger = SequenceTagger(features="w[0]", max_iter=1).fit(X, Y)
    K = len(tagger.classes_)
    structure = SequenceStructure(tagger.n_features_, K)
    Xf, offsets = tagger._featurize(X, fit=False)
    batch = SentenceBatch.from_matrix(Xf, offsets)
    w = np.zeros(structure.n_features)
    short = [np.zeros(max(len(y) - 1, 0), np.int32) for y in Y]
    with pytest.raises(ValueError, match="labels for"):
        structure.batch_loss_augmented_decode(w, batch, short)
    with pytest.raises(ValueError, match="label codes"):
        structure.loss_augmented_decode(w, batch[0], np.full(len(batch[0]), K, np.int32))
    small = SequenceStructure(1, K)                      # feature ids beyond its space
    with pytest.raises(ValueError, match="token feature ids"):
        small.decode(np.zeros(small.n_features), batch[0])
    W, trans, trans2, start, stop = structure.unpack(w)
    out, scores = np.zeros(Xf.shape[0], np.int32), np.zeros(len(offsets) - 1)
    with pytest.raises(ValueError, match="trans must be"):
        _sequence.viterbi_batch(W, trans[:1].copy(), trans2, start, stop, Xf.indices, Xf.data,
                                Xf.indptr, offsets, out, scores)
    with pytest.raises(ValueError, match="one entry per token"):
        _sequence.viterbi_batch(W, trans, trans2, start, stop, Xf.indices, Xf.data, Xf.indptr,
                                offsets, out[:1], scores)
    with pytest.raises(ValueError, match="indptr covers"):
        _sequence.viterbi_batch(W, trans, trans2, start, stop, Xf.indices, Xf.data,
                                Xf.indptr[:-1].copy(), offsets, out, scores)
