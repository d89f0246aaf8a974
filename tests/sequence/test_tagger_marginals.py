"""SequenceTagger.predict_marginals: the Gibbs distribution of the learned
scores, checked against brute-force enumeration of every label sequence."""
import itertools

import numpy as np
import pytest

from linclass.sequence import SequenceTagger

LABELS = ["X", "Y", "Z"]
WORDS = ["a", "b", "c", "d", "e"]


def toy(n, seed):
    rng = np.random.default_rng(seed)
    X = [[str(rng.choice(WORDS)) for _ in range(rng.integers(1, 6))] for _ in range(n)]
    Y = [[LABELS[(WORDS.index(w) + i) % 3] for i, w in enumerate(s)] for s in X]
    return X, Y


def brute_force_marginals(tagger, sentence, temperature):
    """P(y_t = k | x) by summing exp(F(x, y) / T) over all K**n sequences."""
    Xf, _ = tagger._featurize([sentence], fit=False)
    E = np.asarray(Xf @ tagger.emission_.astype(np.float64))
    K = len(tagger.classes_)
    trans = tagger.transitions_.astype(np.float64)
    trans2 = tagger.transitions2_.astype(np.float64).reshape(K, K, K) \
        if tagger.order == 2 else None
    start, stop = tagger.start_.astype(np.float64), tagger.stop_.astype(np.float64)
    n = len(sentence)
    P = np.zeros((n, K))
    for ys in itertools.product(range(K), repeat=n):
        score = start[ys[0]] + stop[ys[-1]] + sum(E[t, ys[t]] for t in range(n))
        score += sum(trans[ys[t - 1], ys[t]] for t in range(1, n))
        if trans2 is not None:
            score += sum(trans2[ys[t - 2], ys[t - 1], ys[t]] for t in range(2, n))
        p = np.exp(score / temperature)
        for t in range(n):
            P[t, ys[t]] += p
    return P / P.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_marginals_equal_brute_force(order, temperature):
    X, Y = toy(60, 0)
    tagger = SequenceTagger(features="pos", order=order, max_iter=3, random_state=0).fit(X, Y)
    test = [["a", "b", "c", "d", "e"], ["e"], ["c", "a"], ["d", "d", "b"]]
    got = tagger.predict_marginals(test, temperature=temperature)
    assert [len(s) for s in got] == [len(s) for s in test]
    for sentence, marginals in zip(test, got):
        ref = brute_force_marginals(tagger, sentence, temperature)
        arr = np.array([[m[c] for c in tagger.classes_] for m in marginals])
        np.testing.assert_allclose(arr, ref, atol=1e-6)


@pytest.mark.filterwarnings("ignore::linclass.exceptions.ConvergenceWarning")
def test_ssvm_tagger_has_marginals_too():
    X, Y = toy(40, 1)
    tagger = SequenceTagger(features="pos", trainer="ssvm", max_iter=5, C=1.0).fit(X, Y)
    sentence = ["b", "a", "e"]
    got = tagger.predict_marginals_single(sentence)
    ref = brute_force_marginals(tagger, sentence, 1.0)
    np.testing.assert_allclose([[m[c] for c in tagger.classes_] for m in got], ref, atol=1e-6)


def test_low_temperature_concentrates_on_viterbi_path():
    X, Y = toy(60, 2)
    tagger = SequenceTagger(features="pos", max_iter=5, random_state=0).fit(X, Y)
    test, _ = toy(30, 3)
    viterbi = tagger.predict(test)
    cold = tagger.predict_marginals(test, temperature=1e-3)
    for path, marginals in zip(viterbi, cold):
        assert [max(m, key=m.get) for m in marginals] == path
        for m in marginals:
            assert np.isfinite(list(m.values())).all()
            assert abs(sum(m.values()) - 1) < 1e-9


def test_log_space_fallback_equals_kernel():
    from linclass.sequence._crf_kernels import _log_space_marginals, dense_score_marginals
    rng = np.random.default_rng(5)
    offsets = np.array([0, 4, 4, 5, 12])
    E, trans = rng.normal(size=(12, 4)), rng.normal(size=(4, 4))
    start, stop = rng.normal(size=4), rng.normal(size=4)
    node, log_z = dense_score_marginals(E, offsets, trans, start, stop)
    node2, log_z2 = _log_space_marginals(E, offsets, trans, start, stop)
    np.testing.assert_allclose(node, node2, atol=1e-12)
    np.testing.assert_allclose(log_z, log_z2, atol=1e-10)


def test_marginals_on_real_text_with_defaults():
    from linclass.datasets import load_bundled_ud_english
    train = load_bundled_ud_english("train")[:300]
    test = load_bundled_ud_english("test")[:50]
    X = [s.column("form") for s in train]
    Y = [s.column("upos") for s in train]
    tagger = SequenceTagger().fit(X, Y)
    Xt = [s.column("form") for s in test]
    marginals = tagger.predict_marginals(Xt)
    predicted = tagger.predict(Xt)
    flat_probs = np.array([[m[c] for c in tagger.classes_] for s in marginals for m in s])
    np.testing.assert_allclose(flat_probs.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(flat_probs >= 0)
    agree = np.mean([max(m, key=m.get) == p for ms, ps in zip(marginals, predicted)
                     for m, p in zip(ms, ps)])
    assert agree > 0.95            # max-marginal decoding close to Viterbi
    # the tokens the model is least sure of are wrong more often than the rest
    gold = [s.column("upos") for s in test]
    conf = np.array([max(m.values()) for ms in marginals for m in ms])
    wrong = np.array([p != g for ps, gs in zip(predicted, gold) for p, g in zip(ps, gs)])
    assert wrong.any()
    assert wrong[conf < np.median(conf)].mean() > wrong[conf >= np.median(conf)].mean()


def test_empty_sentence_and_bad_input():
    X, Y = toy(30, 4)
    tagger = SequenceTagger(features="pos", order=2, max_iter=2).fit(X, Y)
    out = tagger.predict_marginals([[], ["a"], []])
    assert out[0] == [] and out[2] == [] and len(out[1]) == 1
    assert abs(sum(out[1][0].values()) - 1) < 1e-12
    for bad in (0, -1.0, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="temperature"):
            tagger.predict_marginals([["a"]], temperature=bad)
    with pytest.raises(ValueError, match="one sentence"):
        tagger.predict_marginals_single("a b c")
    with pytest.raises(Exception, match="not fitted"):
        SequenceTagger().predict_marginals([["a"]])
