"""Issue #35 for alignment: sequences given as lists, tuples or numpy arrays
of one-character strings align like the string they spell."""
import numpy as np
import pytest

from linclass.alignment import AlignmentLearner
from linclass.demo.structured import make_alignment_pairs
from linclass.exceptions import NotFittedError


@pytest.mark.parametrize("convert", [list, tuple, lambda s: np.array(list(s)),
                                     lambda s: np.array(list(s), dtype=object)],
                         ids=["list", "tuple", "numpy", "numpy-object"])
def test_character_sequences_work_like_strings(convert):
    pairs, refs = make_alignment_pairs(8, length=12, random_state=0)
    model = AlignmentLearner("ACDEFGHIKL", max_iter=2).fit(pairs, refs)
    as_chars = [(convert(a), convert(b)) for a, b in pairs]
    for got, want in zip(model.predict(as_chars), model.predict(pairs)):
        np.testing.assert_array_equal(got, want)
    other = AlignmentLearner("ACDEFGHIKL", max_iter=2).fit(as_chars, [tuple(r) for r in refs])
    np.testing.assert_array_equal(other.coef_, model.coef_)


def test_items_longer_than_one_character_are_refused():
    pairs, refs = make_alignment_pairs(4, length=8, random_state=1)
    model = AlignmentLearner("ACDEFGHIKL", max_iter=1).fit(pairs, refs)
    with pytest.raises(ValueError, match="pair 0: sequence a .* item 1 \\('CD'\\)"):
        model.predict([(np.array(["A", "CD"]), "ACD")])
    with pytest.raises(NotFittedError):
        AlignmentLearner("ACDEFGHIKL").predict(pairs)


def test_complex_substitution_scores_are_refused():
    """Complex scores (a SubstitutionMatrix, init_substitution) were cast to real."""
    from linclass.alignment import SubstitutionMatrix
    with pytest.raises(ValueError, match="complex"):
        SubstitutionMatrix("AB", np.eye(2) + 1j)
    pairs, refs = [("ACDE", "ACE")], [np.array([0, 1, -1, 2])]
    init = np.eye(24) + 0j
    init[0, 1] = init[1, 0] = 1 + 1j
    with pytest.raises(ValueError, match="complex"):
        AlignmentLearner(init_substitution=init, max_iter=2).fit(pairs, refs)
