"""Alignment DP (Gotoh, global and local, loss-augmented) against brute-force
enumeration of every alignment (every monotone matching) of short sequences."""
import itertools

import numpy as np
import pytest

from linclass.alignment.structure import AlignmentStructure, inverse_partners


def all_alignments(m, n):
    """Every monotone matching of a (length m) with b (length n) as partner arrays."""
    for k in range(min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            for cols in itertools.combinations(range(n), k):
                y = np.full(m, -1, dtype=np.int64)
                y[list(rows)] = cols
                yield y


def brute_force(structure, w, x, y_ref=None):
    best = -np.inf
    for y in all_alignments(len(x[0]), len(x[1])):
        value = structure.score(w, x, y)
        if y_ref is not None:
            value += structure.loss(y_ref, y)
        best = max(best, value)
    return best


def random_pair(rng, alphabet, max_len=5):
    m, n = rng.integers(0, max_len + 1, size=2)
    return ("".join(rng.choice(list(alphabet), size=m)),
            "".join(rng.choice(list(alphabet), size=n)))


@pytest.mark.parametrize("mode", ["global", "local"])
def test_decode_equals_brute_force(mode):
    rng = np.random.default_rng(0)
    s = AlignmentStructure("ACG", mode=mode)
    for trial in range(60):
        x = random_pair(rng, "ACG")
        w = rng.normal(size=s.n_features)
        if trial % 3 == 0:       # realistic: gaps penalised
            w[s.gap_open_index] = -abs(w[s.gap_open_index]) - 1
            w[s.gap_extend_index] = -abs(w[s.gap_extend_index])
        scores, (y,) = s.align(w, [x])
        expected = brute_force(s, w, x)
        assert scores[0] == pytest.approx(expected, abs=1e-9)
        assert s.score(w, x, y) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("mode", ["global", "local"])
def test_loss_augmented_equals_brute_force(mode):
    rng = np.random.default_rng(1)
    s = AlignmentStructure("ACG", mode=mode, loss_weight=0.7)
    for trial in range(50):
        x = random_pair(rng, "ACG")
        candidates = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = candidates[rng.integers(len(candidates))]
        w = rng.normal(size=s.n_features) * 2
        y_hat = s.loss_augmented_decode(w, x, y_ref)
        expected = brute_force(s, w, x, y_ref)
        got = s.score(w, x, y_hat) + s.loss(y_ref, y_hat)
        assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("mode", ["global", "local"])
def test_q_loss_augmented_equals_brute_force(mode):
    """The column-wise (Q-score) loss: reference pairs missed, weighted."""
    rng = np.random.default_rng(5)
    s = AlignmentStructure("ACG", mode=mode, loss_weight=1.3, loss="q")
    for trial in range(50):
        x = random_pair(rng, "ACG")
        candidates = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = candidates[rng.integers(len(candidates))]
        w = rng.normal(size=s.n_features) * 2
        y_hat = s.loss_augmented_decode(w, x, y_ref)
        expected = brute_force(s, w, x, y_ref)
        got = s.score(w, x, y_hat) + s.loss(y_ref, y_hat)
        assert got == pytest.approx(expected, abs=1e-9)
        # the loss is (1 - Q) * n_ref: reference pairs not reproduced, extra pairs free
        ref_pairs = {(i, j) for i, j in enumerate(y_ref) if j >= 0}
        hat_pairs = {(i, j) for i, j in enumerate(y_hat) if j >= 0}
        assert s.loss(y_ref, y_hat) == pytest.approx(1.3 * len(ref_pairs - hat_pairs))
    with pytest.raises(ValueError, match="loss"):
        AlignmentStructure("ACG", loss="columns")


def test_batch_matches_single_and_empty_sequences():
    rng = np.random.default_rng(2)
    s = AlignmentStructure("ACGT")
    X = [random_pair(rng, "ACGT", 6) for _ in range(20)] + [("", "ACG"), ("AC", ""), ("", "")]
    w = rng.normal(size=s.n_features)
    batch = s.batch_decode(w, X)
    for x, y in zip(X, batch):
        np.testing.assert_array_equal(y, s.decode(w, x))
    np.testing.assert_array_equal(batch[-3], np.zeros(0))
    np.testing.assert_array_equal(batch[-2], [-1, -1])


def test_textbook_global_alignment():
    # match +1, mismatch -1, gaps: a run of length L costs 2 + L
    s = AlignmentStructure("ACGT")
    S = np.where(np.eye(4, dtype=bool), 1.0, -1.0)
    w = s.substitution_weights(S, -2.0, -1.0)
    y = s.decode(w, ("ACGTACGT", "ACGACGT"))      # T deleted: ACGTACGT / ACG-ACGT
    np.testing.assert_array_equal(y, [0, 1, 2, -1, 3, 4, 5, 6])
    assert s.score(w, ("ACGTACGT", "ACGACGT"), y) == pytest.approx(7 - 3)


def test_features_count_pairs_and_gaps():
    s = AlignmentStructure("AC")
    # a = AAC, b = CA; alignment A-/-C... : a0-gap, a1~b1? build y = [-1, 1, -1]
    idx, val = s.joint_feature(("AAC", "CA"), [-1, 1, -1])
    dense = np.zeros(s.n_features)
    np.add.at(dense, idx, val)
    # pairs: (A, A) once; gaps: a0 (leading run), b0 (leading run), a2 (trailing run)
    assert dense[s.pair_index[0, 0]] == 1
    assert dense[s.gap_open_index] == 3 and dense[s.gap_extend_index] == 3
    s_local = AlignmentStructure("AC", mode="local")
    idx, val = s_local.joint_feature(("AAC", "CA"), [-1, 1, -1])
    assert dict(zip(idx.tolist(), val.tolist()))[s.gap_open_index] == 0


def test_loss_counts_residues_of_both_sequences():
    s = AlignmentStructure("AC")
    y = np.array([0, 1, -1])
    assert s.loss(y, y) == 0
    # a2 now aligned to b2: a2 wrong, b2 wrong
    assert s.loss(y, np.array([0, 1, 2])) == 2
    np.testing.assert_array_equal(inverse_partners([0, -1, 1], 3), [0, 2, -1])


def test_bad_inputs_raise_clear_errors():
    s = AlignmentStructure("ACGT")
    w = np.zeros(s.n_features)
    with pytest.raises(ValueError, match="character 'N' at position 2"):
        s.decode(w, ("ACNT", "ACG"))
    with pytest.raises(ValueError, match="code 7 outside"):
        s.decode(w, (np.array([0, 7]), np.array([1])))
    with pytest.raises(ValueError, match="strictly increasing"):
        s.check_output(("ACG", "ACG"), [1, 0, -1])
    with pytest.raises(ValueError, match="length len\\(a\\) = 3"):
        s.check_output(("ACG", "ACG"), [0, 1])
    with pytest.raises(ValueError, match="\\[0, len\\(b\\)\\)"):
        s.check_output(("ACG", "AC"), [0, 1, 2])
    with pytest.raises(ValueError, match="shape"):
        s.decode(np.zeros(3), ("A", "A"))
    with pytest.raises(ValueError, match="pair 1"):
        s.batch_inputs([("A", "C"), ("A", "Z")])
    with pytest.raises(ValueError, match="alphabet has repeated"):
        AlignmentStructure("AA")


def test_base_and_prior_weights_shift_the_decoder():
    rng = np.random.default_rng(3)
    s0 = AlignmentStructure("ACG")
    base = rng.normal(size=s0.n_features)
    s_base = AlignmentStructure("ACG", base_weights=base)
    s_prior = AlignmentStructure("ACG", prior_weights=base)
    w_prior = np.zeros(s_prior.n_features)
    w_prior[-1] = 1.0
    for _ in range(10):
        x = random_pair(rng, "ACG")
        y = s0.decode(base, x)
        np.testing.assert_array_equal(s_base.decode(np.zeros(s0.n_features), x), y)
        np.testing.assert_array_equal(s_prior.decode(w_prior, x), y)
        assert s_prior.score(w_prior, x, y) == pytest.approx(s0.score(base, x, y))


# -- end gaps and residue-class pairs ----------------------------------------------------

def _extended(loss="residue", loss_weight=1.0, end_gaps=True, classes=("AC",)):
    return AlignmentStructure("ACGT", end_gaps=end_gaps, residue_classes=classes,
                              loss=loss, loss_weight=loss_weight)


@pytest.mark.parametrize("end_gaps, classes", [(True, None), (False, ("AC",)),
                                               (True, ("AC", "G"))])
def test_extended_features_decode_equals_brute_force(end_gaps, classes):
    """With end-gap and class-pair features the DP is still an exact argmax, and the
    features' score of the returned alignment equals the DP's score."""
    rng = np.random.default_rng(11)
    s = _extended(end_gaps=end_gaps, classes=classes)
    for trial in range(60):
        x = random_pair(rng, "ACGT")
        w = rng.normal(size=s.n_features) * 2
        if trial % 3 == 0:
            w[s.gap_open_index] = -abs(w[s.gap_open_index]) - 1
        scores, (y,) = s.align(w, [x])
        expected = brute_force(s, w, x)
        assert scores[0] == pytest.approx(expected, abs=1e-9)
        assert s.score(w, x, y) == pytest.approx(scores[0], abs=1e-9)


@pytest.mark.parametrize("loss", ["residue", "q"])
def test_extended_features_loss_augmented_and_hope_equal_brute_force(loss):
    rng = np.random.default_rng(12)
    s = _extended(loss=loss, loss_weight=0.8, classes=("AC", "G"))
    for trial in range(50):
        x = random_pair(rng, "ACGT")
        candidates = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = candidates[rng.integers(len(candidates))]
        w = rng.normal(size=s.n_features) * 2
        y_hat = s.loss_augmented_decode(w, x, y_ref)
        got = s.score(w, x, y_hat) + s.loss(y_ref, y_hat)
        assert got == pytest.approx(brute_force(s, w, x, y_ref), abs=1e-9)
        (hope,) = s.batch_loss_diminished_decode(w, [x], [y_ref])
        best = max(s.score(w, x, y) - s.loss(y_ref, y) for y in candidates)
        assert s.score(w, x, hope) - s.loss(y_ref, hope) == pytest.approx(best, abs=1e-9)


def test_end_gap_features_count_terminal_runs():
    s = AlignmentStructure("ACGT", end_gaps=True, residue_classes=("AC", "GT"))
    x = ("AACGT", "CGTTT")
    y = np.array([-1, -1, 0, 1, -1])       # C-C, G-G aligned
    idx, val = s.joint_feature(x, y)
    phi = np.bincount(idx, weights=val, minlength=s.n_features)
    # pairs C-C and G-G; a's gap runs: [2 leading], [1 trailing]; b's: [3 trailing]
    assert phi[s.gap_open_index] == 0 and phi[s.gap_extend_index] == 0
    assert phi[s.end_open_index] == 3 and phi[s.end_extend_index] == 6
    cp = s.class_pair_index
    assert phi[cp[1, 1]] == 1 and phi[cp[2, 2]] == 1 and phi[s.class_offset:].sum() == 2
    # nothing aligned: one end run per sequence
    idx, val = s.joint_feature(x, np.full(5, -1))
    phi = np.bincount(idx, weights=val, minlength=s.n_features)
    assert phi[s.end_open_index] == 2 and phi[s.end_extend_index] == 10


def test_equal_end_and_internal_gaps_give_the_plain_global_alignment():
    rng = np.random.default_rng(13)
    plain = AlignmentStructure("ACGT")
    ends = AlignmentStructure("ACGT", end_gaps=True)
    for _ in range(30):
        x = random_pair(rng, "ACGT", 8)
        S = rng.normal(size=(4, 4))
        S = S + S.T
        w_plain = plain.substitution_weights(S, -2.0, -0.5)
        w_ends = ends.substitution_weights(S, -2.0, -0.5)
        s1, _ = plain.align(w_plain, [x])
        s2, (y2,) = ends.align(w_ends, [x])
        assert s1[0] == pytest.approx(s2[0], abs=1e-9)
        assert plain.score(w_plain, x, y2) == pytest.approx(s1[0], abs=1e-9)


def test_bad_extended_parameters():
    with pytest.raises(ValueError, match="end_gaps"):
        AlignmentStructure("ACGT", mode="local", end_gaps=True)
    with pytest.raises(ValueError, match="end_gaps"):
        AlignmentStructure("ACGT", end_gaps="yes")
    with pytest.raises(ValueError, match="residue_classes"):
        AlignmentStructure("ACGT", residue_classes="AC")
    with pytest.raises(ValueError, match="residue_classes"):
        AlignmentStructure("ACGT", residue_classes=("AC", "CG"))
    with pytest.raises(ValueError, match="residue_classes"):
        AlignmentStructure("ACGT", residue_classes=("AX",))
    with pytest.raises(ValueError, match="end_gaps"):
        AlignmentStructure("ACGT", end_gaps=True).check_slack_rescaling([("A", "A")], [[0]])


@pytest.mark.parametrize("mode, end_gaps", [("global", False), ("global", True),
                                            ("local", False)])
def test_gap_class_features_equal_brute_force(mode, end_gaps):
    """Residue-specific gap weights (gap_classes): exact decode and loss-augmented
    decode, and the features' score of the returned alignment equals the DP's."""
    rng = np.random.default_rng(21)
    s = AlignmentStructure("ACGT", mode=mode, end_gaps=end_gaps, residue_classes=("AC",),
                           gap_classes=True, loss_weight=0.6)
    for trial in range(50):
        x = random_pair(rng, "ACGT")
        w = rng.normal(size=s.n_features) * 2
        scores, (y,) = s.align(w, [x])
        assert scores[0] == pytest.approx(brute_force(s, w, x), abs=1e-9)
        assert s.score(w, x, y) == pytest.approx(scores[0], abs=1e-9)
        candidates = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = candidates[rng.integers(len(candidates))]
        y_hat = s.loss_augmented_decode(w, x, y_ref)
        got = s.score(w, x, y_hat) + s.loss(y_ref, y_hat)
        assert got == pytest.approx(brute_force(s, w, x, y_ref), abs=1e-9)
    # the count: residues facing a gap, by class
    idx, val = s.joint_feature(("AAGT", "AT"), np.array([0, -1, -1, 1]))
    phi = np.bincount(idx, weights=val, minlength=s.n_features)
    gap = phi[s.gap_class_index[[0, 2]]]          # class "AC" and the rest (G, T)
    np.testing.assert_array_equal(gap, [1, 1])
    with pytest.raises(ValueError, match="gap_classes"):
        AlignmentStructure("ACGT", gap_classes=True)
