"""CRF(algorithm="l2sgd"): the SGD step against the batch gradient, convergence
to the L-BFGS optimum, the transition mask, determinism, parameter checks."""
import numpy as np
import pytest

from linclass.sequence import CRF
from linclass.sequence import _crf_kernels as kernels
from linclass.sequence.tagger import _encode_label_sequences

from .test_crf import generated_ner_corpus


def _setup(crf, feats, Y):
    Xf, offsets = crf._featurize(feats, fit=False)
    _, gold = _encode_label_sequences(Y, feats, classes=np.asarray(crf.classes_))
    table = crf._state_table()
    return table, kernels.make_batch(Xf, offsets, table, gold)


def test_one_sgd_step_equals_the_formula_on_the_batch_gradient():
    X, Y = generated_ner_corpus(30, 11)
    feats = [[{"w": w, "p": p} for w, p in s] for s in X]
    crf = CRF(max_iterations=5, all_possible_transitions=True).fit(feats, Y)
    table, batch = _setup(crf, feats, Y)
    K = len(crf.classes_)
    rng = np.random.default_rng(0)
    w0 = rng.normal(scale=0.3, size=table.n_state_features)
    T0 = rng.normal(scale=0.3, size=(K, K))
    mask = np.ones((K, K))
    mask[0, 1] = 0.0                       # a pair without a feature stays where it is
    lam, t0, scale = 0.01, 50.0, 0.7
    s = 3                                  # one sentence
    sub = kernels.sub_batch(batch, [s])
    nll, gw, gt, _, _ = kernels.nll_and_gradient(table, sub, scale * w0, scale * T0,
                                                 np.zeros(K), np.zeros(K), [(0, 1)])
    w, T = w0.copy(), T0.copy()
    got_nll, t, new_scale, status = kernels.sgd_epoch(table, batch, w, T, mask,
                                                      np.array([s]), lam, t0, 0.0, scale)
    assert status == 0 and t == 1.0
    eta = 1.0 / (lam * t0)
    assert got_nll == pytest.approx(nll, rel=1e-12)
    assert new_scale == pytest.approx(scale * (1 - eta * lam))
    # actual weights: (1 - eta lam) theta - eta grad  (masked for transitions)
    np.testing.assert_allclose(new_scale * w, (1 - eta * lam) * scale * w0 - eta * gw,
                               atol=1e-12)
    np.testing.assert_allclose(new_scale * T,
                               (1 - eta * lam) * scale * T0 - eta * mask * gt, atol=1e-12)


def test_l2sgd_approaches_the_lbfgs_optimum():
    X, Y = generated_ner_corpus(150, 12)
    feats = [[{"w": w, "p": p, "cap": w[:1].isupper()} for w, p in s] for s in X]
    exact = CRF(c2=1.0, epsilon=1e-8, delta=0, max_iterations=300).fit(feats, Y)
    sgd = CRF(algorithm="l2sgd", c2=1.0, max_iterations=60, period=0).fit(feats, Y)
    assert sgd.n_iter_ == 60
    assert sgd.objective_ >= exact.objective_ * (1 - 1e-9)
    assert (sgd.objective_ - exact.objective_) / exact.objective_ < 0.02
    Xt, Yt = generated_ner_corpus(80, 13)
    ft = [[{"w": w, "p": p, "cap": w[:1].isupper()} for w, p in s] for s in Xt]
    assert sgd.score(ft, Yt) >= exact.score(ft, Yt) - 0.01
    # transitions never seen in training stay zero (no feature for them)
    assert np.all(sgd.transitions_[~sgd.transition_mask_] == 0.0)
    assert sgd.learning_rate_ > 0
    # deterministic
    again = CRF(algorithm="l2sgd", c2=1.0, max_iterations=60, period=0).fit(feats, Y)
    np.testing.assert_array_equal(again.coef_, sgd.coef_)


def test_l2sgd_defaults_on_realistic_text_and_dev_stopping():
    from linclass.datasets import load_bundled_ud_english
    train = load_bundled_ud_english("train")[:400]
    dev = load_bundled_ud_english("test")[:100]
    X = [s.column("form") for s in train]
    Y = [s.column("upos") for s in train]
    Xd = [s.column("form") for s in dev]
    Yd = [s.column("upos") for s in dev]
    crf = CRF(algorithm="l2sgd", features="pos", n_iter_no_change=3).fit(X, Y, Xd, Yd)
    assert crf.n_iter_ < 1000
    assert crf.score(Xd, Yd) > 0.8
    assert [h["iteration"] for h in crf.history_] == list(range(1, crf.n_iter_ + 1))
    assert all("dev_accuracy" in h for h in crf.history_)
    assert crf.score(Xd, Yd) == pytest.approx(max(h["dev_accuracy"] for h in crf.history_))


@pytest.mark.parametrize("params, match", [
    ({"c1": 0.1}, "c1 must be 0"),
    ({"c2": 0.0}, "needs c2 > 0"),
    ({"calibration_eta": 0.0}, "calibration_eta"),
    ({"calibration_rate": 1.0}, "calibration_rate"),
    ({"calibration_samples": 0}, "calibration_samples"),
    ({"calibration_candidates": "3"}, "calibration_candidates"),
])
def test_l2sgd_parameters_are_checked(params, match):
    X, Y = generated_ner_corpus(10, 14)
    feats = [[{"w": w} for w, _ in s] for s in X]
    with pytest.raises(ValueError, match=match):
        CRF(algorithm="l2sgd", **params).fit(feats, Y)


def test_sgd_kernel_refuses_bad_arguments():
    X, Y = generated_ner_corpus(10, 15)
    feats = [[{"w": w} for w, _ in s] for s in X]
    crf = CRF(max_iterations=2).fit(feats, Y)
    table, batch = _setup(crf, feats, Y)
    K = len(crf.classes_)
    w, T, mask = np.zeros(table.n_state_features), np.zeros((K, K)), np.ones((K, K))
    with pytest.raises(ValueError, match="order"):
        kernels.sgd_epoch(table, batch, w, T, mask, np.array([len(X)]), 0.1, 10.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="t0 > 1"):
        kernels.sgd_epoch(table, batch, w, T, mask, np.array([0]), 0.1, 0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="trans_mask"):
        kernels.sgd_epoch(table, batch, w, T, np.ones((K, K + 1)), np.array([0]), 0.1, 10.0,
                          0.0, 1.0)
