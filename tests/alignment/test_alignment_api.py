"""Public alignment API: align, SubstitutionMatrix, AlignmentLearner, accuracy."""
import os
import pathlib
import warnings

import numpy as np
import pytest

from linclass.demo.structured import make_alignment_pairs
from linclass.alignment import (AlignmentLearner, SubstitutionMatrix, align, alignment_accuracy,
                                 partners_from_rows, rows_from_partners)


def data_home():
    env = os.environ.get("LINCLASS_DATA")
    return pathlib.Path(env) if env else pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


def test_align_textbook_and_rows_round_trip():
    m = SubstitutionMatrix.identity("ACGT", match=1, mismatch=-1)
    result = align("ACGTACGT", "ACGACGT", substitution=m, gap_open=1, gap_extend=1)
    assert result.rows == ("ACGTACGT", "ACG-ACGT")
    assert result.score == pytest.approx(7 - 2)
    np.testing.assert_array_equal(partners_from_rows(*result.rows), result.partners)
    local = align("TTTACGTTT", "GGACGGG", substitution=m, gap_open=5, gap_extend=5,
                  mode="local")
    assert local.rows == ("ACG", "ACG") and local.score == 3
    np.testing.assert_array_equal(local.pairs, [[3, 2], [4, 3], [5, 4]])


def test_rows_from_partners_inverts_partners_from_rows():
    pairs, refs = make_alignment_pairs(20, length=15, alphabet="ACGT", random_state=1)
    for (a, b), y in zip(pairs, refs):
        rows = rows_from_partners(a, b, y)
        assert rows[0].replace("-", "") == a and rows[1].replace("-", "") == b
        np.testing.assert_array_equal(partners_from_rows(*rows), y)


def test_alignment_accuracy():
    assert alignment_accuracy([0, 1, -1], [0, -1, -1]) == 0.5
    assert alignment_accuracy([[0, 1], [0]], [[0, 1], [-1]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="different lengths"):
        alignment_accuracy([0, 1], [0])


def test_bad_inputs():
    m = SubstitutionMatrix.identity("ACGT")
    with pytest.raises(ValueError, match="character 'U' at position 1"):
        align("AUG", "ACG", substitution=m)
    with pytest.raises(ValueError, match="mode"):
        align("A", "A", substitution=m, mode="semi")
    with pytest.raises(ValueError, match="symmetric"):
        SubstitutionMatrix("AC", [[1, 0], [2, 1]])
    with pytest.raises(ValueError, match="SubstitutionMatrix"):
        align("A", "A", substitution=np.eye(4))
    with pytest.raises(ValueError, match="different lengths"):
        partners_from_rows("A-C", "AC")


@pytest.mark.parametrize("learner", ["perceptron", "svm"])
def test_learner_beats_a_flat_matrix_on_synthetic_homologs(learner):
    alphabet = "ACDEFGHIKL"
    pairs, refs = make_alignment_pairs(80, length=30, alphabet=alphabet, random_state=0)
    flat = SubstitutionMatrix.identity(alphabet, match=1, mismatch=-1)
    baseline = alignment_accuracy(refs[40:], [align(a, b, substitution=flat, gap_open=2,
                                                    gap_extend=1).partners
                                              for a, b in pairs[40:]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AlignmentLearner(alphabet, learner=learner, max_iter=30, tol=0.1).fit(
            pairs[:40], refs[:40])
    assert model.score(pairs[40:], refs[40:]) > baseline
    # learned: similar residues (alphabet neighbours) score above distant ones
    S = model.substitution_
    assert np.mean(np.diag(S, 1)) > np.mean(S[np.triu_indices(10, 3)])


def test_learner_from_initial_matrix_and_persistence(tmp_path):
    import linclass
    alphabet = "ACDEFGHIKL"
    pairs, refs = make_alignment_pairs(20, length=20, alphabet=alphabet, random_state=2)
    init = SubstitutionMatrix.identity(alphabet, match=2, mismatch=-1).matrix
    model = AlignmentLearner(alphabet, init_substitution=init, init_gap_open=3,
                             init_gap_extend=1, max_iter=2).fit(pairs, refs)
    path = tmp_path / "aligner.npz"
    model.save(path)
    loaded = linclass.load(path)
    for y1, y2 in zip(model.predict(pairs), loaded.predict(pairs)):
        np.testing.assert_array_equal(y1, y2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = AlignmentLearner(alphabet, learner="svm", init_substitution=init,
                               max_iter=5).fit(pairs, refs)
    assert svm.coef_.size == 10 * 11 // 2 + 3      # + the prior feature


def test_blosum62_from_the_data_directory():
    path = data_home() / "alignment" / "BLOSUM62.txt"
    if not path.exists():
        pytest.skip("BLOSUM62.txt not found under %s (set LINCLASS_DATA)" % data_home())
    b62 = SubstitutionMatrix.blosum62(data_home=data_home())
    assert b62.alphabet == "ARNDCQEGHILKMFPSTWYVBZX*"
    assert b62.matrix[b62.alphabet.index("W"), b62.alphabet.index("W")] == 11
    result = align("HEAGAWGHEE", "PAWHEAE", substitution=b62, gap_open=11, gap_extend=1,
                   mode="local")
    assert result.score > 0
    with pytest.raises(ValueError, match="character 'J'"):
        align("HEAJ", "PAW", substitution=b62)


def test_perceptron_step_size_scales_the_correction_of_the_warm_start():
    alphabet = "ACDEFGHIKL"
    pairs, refs = make_alignment_pairs(30, length=20, alphabet=alphabet, random_state=5)
    init = SubstitutionMatrix.identity(alphabet, match=2, mismatch=-1).matrix
    models = {}
    for step in (1.0, 0.01):
        models[step] = AlignmentLearner(alphabet, init_substitution=init, init_gap_open=3,
                                        init_gap_extend=1, max_iter=2, step_size=step,
                                        random_state=0).fit(pairs, refs)
    # the effective weights are init + step * (the perceptron's correction)
    for step, model in models.items():
        structure = model._structure()
        S, gap_open, _ = structure.weights(model.coef_)
        np.testing.assert_allclose(model.substitution_, step * S)
        np.testing.assert_allclose(model.substitution_ - init, step * (S - init / step),
                                   atol=1e-9)
        assert model.gap_open_ == pytest.approx(-step * gap_open)
    # a small step keeps the matrix near the warm start, a unit step does not
    small = np.abs(models[0.01].substitution_ - init).max()
    large = np.abs(models[1.0].substitution_ - init).max()
    assert small < large
    with pytest.raises(ValueError, match="step_size"):
        AlignmentLearner(alphabet, step_size=0.0).fit(pairs, refs)
