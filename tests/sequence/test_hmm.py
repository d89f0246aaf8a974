"""HMM: smoothed counts by hand, posteriors and Viterbi against enumeration of P(x, y)."""
import itertools
import pickle

import numpy as np
import pytest

from linclass import NotFittedError, load
from linclass.sequence import HMM

X = [["the", "dog", "runs"], ["a", "cat"], ["the", "cat", "sees", "a", "dog"], ["dogs"]]
Y = [["D", "N", "V"], ["D", "N"], ["D", "N", "V", "D", "N"], ["N"]]


def joint_log_prob(hmm, words, labels):
    c = {lab: i for i, lab in enumerate(hmm.classes_)}
    v = {w: i for i, w in enumerate(hmm.vocabulary_)}
    y = [c[lab] for lab in labels]
    s = hmm.log_start_[y[0]] + hmm.log_stop_[y[-1]]
    s += sum(hmm.log_transitions_[y[t - 1], y[t]] for t in range(1, len(y)))
    for w, k in zip(words, y):
        s += hmm.log_emissions_[v[w], k] if w in v else hmm.log_unknown_[k]
    return s


def test_counts_with_smoothing_by_hand():
    hmm = HMM(emission_smoothing=0.5, transition_smoothing=1.0).fit(X, Y)
    assert hmm.classes_ == ["D", "N", "V"]
    # starts: D 3, N 1 of 4 sentences, +1 each over 3 labels
    np.testing.assert_allclose(np.exp(hmm.log_start_), [4 / 7, 2 / 7, 1 / 7])
    # from N: N->V 2, N->D 0, N->N 0, N->END 3; denominator 5 + 4
    D, N, V = 0, 1, 2
    np.testing.assert_allclose(np.exp(hmm.log_transitions_[N]), [1 / 9, 1 / 9, 3 / 9])
    assert np.exp(hmm.log_stop_[N]) == pytest.approx(4 / 9)
    # every distribution sums to one (transitions + stop; emissions + unknown word)
    np.testing.assert_allclose(np.exp(hmm.log_transitions_).sum(1) + np.exp(hmm.log_stop_), 1)
    np.testing.assert_allclose(np.exp(hmm.log_emissions_).sum(0) + np.exp(hmm.log_unknown_), 1)
    # B("cat" | N) = (2 + .5) / (5 + .5 * (7 + 1))
    v = hmm.vocabulary_.index("cat")
    assert np.exp(hmm.log_emissions_[v, N]) == pytest.approx(2.5 / 9)
    assert D == 0 and V == 2


@pytest.mark.parametrize("sentence", [["the", "dog"], ["a", "unseen", "runs"], ["cat"],
                                      ["dogs", "the", "sees", "a"]])
def test_posteriors_viterbi_and_likelihood_match_enumeration(sentence):
    hmm = HMM().fit(X, Y)
    paths = list(itertools.product(hmm.classes_, repeat=len(sentence)))
    logp = np.array([joint_log_prob(hmm, sentence, p) for p in paths])
    log_px = np.logaddexp.reduce(logp)
    assert hmm.log_likelihood([sentence])[0] == pytest.approx(log_px, rel=1e-12)
    assert tuple(hmm.predict_single(sentence)) == paths[int(np.argmax(logp))]
    post = np.exp(logp - log_px)
    marg = hmm.predict_marginals_single(sentence)
    for t in range(len(sentence)):
        for label in hmm.classes_:
            expected = sum(p for path, p in zip(paths, post) if path[t] == label)
            assert marg[t][label] == pytest.approx(expected, abs=1e-12)


def test_tuple_tokens_lowercase_persistence(tmp_path):
    hmm = HMM(lowercase=True).fit([[(w, "x") for w in s] for s in X], Y)
    assert hmm.predict([["The", "Dog"]]) == [["D", "N"]]
    path = tmp_path / "hmm.npz"
    hmm.save(path)
    for other in (load(path), pickle.loads(pickle.dumps(hmm))):
        assert other.predict(X) == hmm.predict(X)
        assert other.predict_marginals(X) == hmm.predict_marginals(X)
    assert hmm.score(X, Y) == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="list of tokens"):
        HMM().fit(["the", "dog"], [["D"], ["N"]])
    with pytest.raises(ValueError, match="emission_smoothing"):
        HMM(emission_smoothing=0).fit(X, Y)
    with pytest.raises(ValueError, match="word"):
        HMM().fit([[1, 2]], [["D", "N"]])
    with pytest.raises(NotFittedError):
        HMM().predict(X)
