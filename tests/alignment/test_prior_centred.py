"""The prior-centred ramp-loss structural SVM of ``AlignmentLearner(prior="center")``:
the hope decoder against brute force, C -> 0 gives back the prior, the CCCP
objective decreases from the prior, ``free="gaps"`` keeps the matrix's shape,
save/load, and bad parameters."""
import itertools

import numpy as np
import pytest

import linclass
from linclass.alignment import AlignmentLearner, SubstitutionMatrix, alignment_accuracy
from linclass.alignment.structure import AlignmentStructure
from linclass.demo.structured import make_alignment_pairs


def all_alignments(m, n):
    for k in range(min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            for cols in itertools.combinations(range(n), k):
                y = np.full(m, -1, dtype=np.int64)
                y[list(rows)] = cols
                yield y


@pytest.mark.parametrize("loss", ["residue", "q"])
@pytest.mark.parametrize("mode", ["global", "local"])
def test_hope_decode_equals_brute_force(loss, mode):
    rng = np.random.default_rng(0)
    s = AlignmentStructure("ACG", mode=mode, loss=loss, loss_weight=1.5)
    for _ in range(25):
        x = tuple("".join(rng.choice(list("ACG"), size=k)) for k in rng.integers(0, 5, 2))
        refs = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = refs[rng.integers(len(refs))]
        w = rng.standard_normal(s.n_features)
        best = max(s.score(w, x, y) - s.loss(y_ref, y) for y in refs)
        hope = s.batch_loss_diminished_decode(w, [x], [y_ref])[0]
        assert s.score(w, x, hope) - s.loss(y_ref, hope) == pytest.approx(best)


def _data():
    alphabet = "ACDEFGHIKL"
    pairs, refs = make_alignment_pairs(40, length=20, alphabet=alphabet, random_state=3)
    init = SubstitutionMatrix.identity(alphabet, match=2, mismatch=-1).matrix
    return alphabet, pairs, refs, init


def _ramp_objective(model, pairs, refs, w):
    s = AlignmentStructure(model.alphabet, loss=model.loss)
    X = s.batch_inputs(pairs)
    fear = s.batch_loss_augmented_decode(w, X, refs)
    hope = s.batch_loss_diminished_decode(w, X, refs)
    return sum(s.score(w, x, f) + s.loss(r, f) - s.score(w, x, h) + s.loss(r, h)
               for x, r, f, h in zip(X, refs, fear, hope))


def test_tiny_C_gives_back_the_prior():
    alphabet, pairs, refs, init = _data()
    model = AlignmentLearner(alphabet, learner="svm", prior="center", init_substitution=init,
                             init_gap_open=3, init_gap_extend=1, C=1e-6, loss="q").fit(
        pairs, refs)
    np.testing.assert_allclose(model.substitution_, init, atol=1e-3)
    assert model.gap_open_ == pytest.approx(3, abs=1e-3)
    assert model.gap_extend_ == pytest.approx(1, abs=1e-3)


@pytest.mark.parametrize("free", ["all", "gaps"])
def test_cccp_lowers_the_objective_and_free_gaps_keeps_the_shape(free):
    alphabet, pairs, refs, init = _data()
    model = AlignmentLearner(alphabet, learner="svm", prior="center", free=free, C=0.1,
                             init_substitution=init, init_gap_open=3, init_gap_extend=1,
                             loss="q", max_iter=30, tol=1e-4).fit(pairs, refs)
    s = AlignmentStructure(alphabet)
    w0 = s.substitution_weights(init, -3.0, -1.0)
    w = s.substitution_weights(model.substitution_, -model.gap_open_, -model.gap_extend_)
    v = w - w0                  # free="gaps": v = (scale - 1, d open, d extend)
    if free == "gaps":          # only the scale of the matrix moved
        scale = model.substitution_[0, 0] / init[0, 0]
        np.testing.assert_allclose(model.substitution_, scale * init, atol=1e-9)
        v = np.array([scale - 1.0, v[s.gap_open_index], v[s.gap_extend_index]])
    before = 0.1 * _ramp_objective(model, pairs, refs, w0)
    after = 0.5 * float(v @ v) + 0.1 * _ramp_objective(model, pairs, refs, w)
    assert after < before
    # the learned weights are a readable SubstitutionMatrix
    learned = SubstitutionMatrix(alphabet, model.substitution_)
    assert learned.matrix.shape == (10, 10)
    assert alignment_accuracy(refs, model.predict(pairs)) > 0.5


def test_prior_centred_save_load(tmp_path):
    alphabet, pairs, refs, init = _data()
    model = AlignmentLearner(alphabet, learner="svm", prior="center", init_substitution=init,
                             init_gap_open=3, init_gap_extend=1, C=0.1, max_iter=3).fit(
        pairs, refs)
    path = tmp_path / "centred.npz"
    model.save(path)
    loaded = linclass.load(path)
    assert loaded.prior == "center" and loaded.free == "all"
    for a, b in zip(model.predict(pairs), loaded.predict(pairs)):
        np.testing.assert_array_equal(a, b)


def test_bad_prior_parameters():
    alphabet, pairs, refs, init = _data()
    with pytest.raises(ValueError, match="prior"):
        AlignmentLearner(alphabet, learner="svm", prior="x", init_substitution=init).fit(
            pairs, refs)
    with pytest.raises(ValueError, match="free"):
        AlignmentLearner(alphabet, learner="svm", prior="center", free="x",
                         init_substitution=init).fit(pairs, refs)
    with pytest.raises(ValueError, match="init_substitution"):
        AlignmentLearner(alphabet, learner="svm", prior="center").fit(pairs, refs)
    with pytest.raises(ValueError, match="learner='svm'"):
        AlignmentLearner(alphabet, prior="center", init_substitution=init).fit(pairs, refs)
    with pytest.raises(ValueError, match="C"):
        AlignmentLearner(alphabet, learner="svm", prior="center", C=-1.0,
                         init_substitution=init).fit(pairs, refs)


def test_centred_end_gaps_and_class_pairs(tmp_path):
    """free="gaps" with end gaps and class pairs: the matrix moves only by a scale and
    class-pair offsets, the CCCP objective decreases, tiny C gives back the prior,
    and save/load keeps the end-gap costs."""
    alphabet, pairs, refs, init = _data()
    classes = ("ACD", "EFG", "HI")          # K and L form the remaining class
    common = dict(learner="svm", prior="center", free="gaps", init_substitution=init,
                  init_gap_open=3, init_gap_extend=1, loss="q", end_gaps=True,
                  residue_classes=classes)
    tiny = AlignmentLearner(alphabet, C=1e-6, **common).fit(pairs, refs)
    np.testing.assert_allclose(tiny.substitution_, init, atol=1e-3)
    assert tiny.end_gap_open_ == pytest.approx(3, abs=1e-3)
    model = AlignmentLearner(alphabet, C=0.1, max_iter=30, tol=1e-4, **common).fit(pairs, refs)
    s = AlignmentStructure(alphabet, loss="q", end_gaps=True, residue_classes=classes)
    w0 = s.substitution_weights(init, -3.0, -1.0)
    w = model.coef_
    scale = w[0] / w0[0]
    np.testing.assert_allclose(w[:s.n_pairs], scale * w0[:s.n_pairs], atol=1e-12)
    v = np.concatenate([[scale - 1.0], (w - w0)[s.n_pairs:]])
    S, _, _ = s.weights(w)
    cls = {c: g for g, group in enumerate(classes) for c in group}
    offset = S - scale * init                # constant within each class pair
    for p in range(10):
        for q in range(10):
            gp, gq = cls.get(alphabet[p], 3), cls.get(alphabet[q], 3)
            assert offset[p, q] == pytest.approx(
                w[s.class_pair_index[p, q]], abs=1e-9), (gp, gq)
    np.testing.assert_allclose(model.substitution_, S)
    assert (model.end_gap_open_, model.end_gap_extend_) == (
        -w[s.end_open_index], -w[s.end_extend_index])

    def ramp(w):
        X = s.batch_inputs(pairs)
        fear = s.batch_loss_augmented_decode(w, X, refs)
        hope = s.batch_loss_diminished_decode(w, X, refs)
        return sum(s.score(w, x, f) + s.loss(r, f) - s.score(w, x, h) + s.loss(r, h)
                   for x, r, f, h in zip(X, refs, fear, hope))

    assert 0.5 * float(v @ v) + 0.1 * ramp(w) < 0.1 * ramp(w0)
    # predictions use the end-gap costs, and survive save/load
    assert model.end_gap_open_ != model.gap_open_
    path = tmp_path / "ends.npz"
    model.save(path)
    loaded = linclass.load(path)
    for a, b in zip(model.predict(pairs), loaded.predict(pairs)):
        np.testing.assert_array_equal(a, b)
    expected = s.batch_decode(w, s.batch_inputs(pairs))
    for a, b in zip(model.predict(pairs), expected):
        np.testing.assert_array_equal(a, b)
    one = model.align(*pairs[0])
    np.testing.assert_array_equal(one.partners, expected[0])


def test_bad_end_gap_and_class_parameters():
    alphabet, pairs, refs, init = _data()
    with pytest.raises(ValueError, match="end_gaps"):
        AlignmentLearner(alphabet, end_gaps="yes").fit(pairs, refs)
    with pytest.raises(ValueError, match="end_gaps"):
        AlignmentLearner(alphabet, mode="local", end_gaps=True).fit(pairs, refs)
    with pytest.raises(ValueError, match="residue_classes"):
        AlignmentLearner(alphabet, residue_classes="ACD").fit(pairs, refs)
    with pytest.raises(ValueError, match="residue_classes"):
        AlignmentLearner(alphabet, residue_classes=("ACD", "DE")).fit(pairs, refs)
    m = SubstitutionMatrix.identity(alphabet)
    with pytest.raises(ValueError, match="end_gap_open"):
        linclass.alignment.align("ACD", "AD", substitution=m, end_gap_open="x")
    with pytest.raises(ValueError, match="end_gap"):
        linclass.alignment.align("ACD", "AD", substitution=m, mode="local", end_gap_open=1)


def test_align_with_cheap_end_gaps_prefers_terminal_gaps():
    """Free end gaps (0/0) let a short sequence sit inside a long one without cost."""
    m = SubstitutionMatrix.identity("ACGT", match=2, mismatch=-3)
    a, b = "GGGGACGTACGTGGGG", "ACGTACGT"
    plain = linclass.alignment.align(a, b, substitution=m, gap_open=5, gap_extend=2)
    free = linclass.alignment.align(a, b, substitution=m, gap_open=5, gap_extend=2,
                                    end_gap_open=0, end_gap_extend=0)
    np.testing.assert_array_equal(free.partners[4:12], np.arange(8))
    assert free.score == pytest.approx(16.0)
    assert plain.score == pytest.approx(16.0 - 2 * (5 + 4 * 2))


def test_centred_gap_classes_predict_and_save_load(tmp_path):
    """gap_classes: the learned per-residue gap costs are used by predict and align
    (equal to decoding with the training structure) and survive save/load."""
    alphabet, pairs, refs, init = _data()
    classes = ("ACD", "EFG")
    model = AlignmentLearner(alphabet, learner="svm", prior="center", free="gaps", C=0.3,
                             init_substitution=init, init_gap_open=3, init_gap_extend=1,
                             loss="q", end_gaps=True, residue_classes=classes,
                             gap_classes=True, max_iter=10).fit(pairs, refs)
    s = AlignmentStructure(alphabet, loss="q", end_gaps=True, residue_classes=classes,
                           gap_classes=True)
    assert np.any(model.gap_residue_ != 0)
    np.testing.assert_allclose(model.gap_residue_, -s.gap_residue_weights(model.coef_))
    expected = s.batch_decode(model.coef_, s.batch_inputs(pairs))
    path = tmp_path / "gapclasses.npz"
    model.save(path)
    loaded = linclass.load(path)
    for a, b, c in zip(model.predict(pairs), loaded.predict(pairs), expected):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    np.testing.assert_array_equal(model.align(*pairs[1]).partners, expected[1])
    with pytest.raises(ValueError, match="gap_classes"):
        AlignmentLearner(alphabet, gap_classes=True).fit(pairs, refs)
