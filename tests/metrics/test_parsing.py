"""PARSEVAL with evalb / COLLINS.prm conventions against hand-computed examples."""
import pytest

from linclass.datasets import parse_tree
from linclass.metrics.parsing import labeled_brackets, parseval, parseval_counts

GOLD = "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (NP (DT a) (NN dog)) (PP (IN with) (NP (DT a) (NN telescope))))) (. .))"
# PP attached to the VP instead of the object NP; one tag wrong (saw/NN)
PRED = "(S (NP (DT The) (NN man)) (VP (NN saw) (NP (DT a) (NN dog)) (PP (IN with) (NP (DT a) (NN telescope)))) (. .))"


def test_brackets_ignore_punctuation_and_preterminals():
    brackets, n_words = labeled_brackets(parse_tree(GOLD))
    # the final '.' is deleted: S spans the 8 words, not 9
    assert n_words == 8
    assert brackets == {("S", 0, 8): 1, ("NP", 0, 2): 1, ("VP", 2, 8): 1, ("NP", 3, 8): 1,
                        ("NP", 3, 5): 1, ("PP", 5, 8): 1, ("NP", 6, 8): 1}


def test_hand_computed_example():
    counts = parseval_counts(parse_tree(GOLD), parse_tree(PRED))
    # gold: S NP VP NP(3,8) NP(3,5) PP NP(6,8) = 7; pred: S NP VP NP(3,5) PP NP(6,8) = 6,
    # all six in gold; tags: 8 words (the '.' deleted), 'saw' wrong
    assert counts["gold"] == 7 and counts["predicted"] == 6 and counts["matched"] == 6
    assert counts["tags_correct"] == 7 and counts["n_words"] == 8 and not counts["exact"]
    res = parseval([parse_tree(GOLD)], [parse_tree(PRED)])
    assert res["precision"] == pytest.approx(6 / 6)
    assert res["recall"] == pytest.approx(6 / 7)
    assert res["f1"] == pytest.approx(2 * 1 * (6 / 7) / (1 + 6 / 7))
    assert res["tagging_accuracy"] == pytest.approx(7 / 8)
    assert res["exact_match"] == 0.0


def test_function_tags_empty_elements_root_and_eq_label():
    gold = parse_tree("( (S (NP-SBJ-1 (PRP He)) (VP (VBD gave) (PRT (RP up)) "
                      "(NP (-NONE- *T*-1))) (. .)) )")
    pred = parse_tree("(TOP (S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up))) (. .)))")
    counts = parseval_counts(gold, pred)
    # S(0,3) NP(0,1) VP(1,3) PRT=ADVP(2,3); the empty NP is gone, TOP ignored
    assert counts == {"matched": 4, "gold": 4, "predicted": 4, "tags_correct": 3,
                      "n_words": 3, "exact": True}


def test_duplicate_brackets_are_a_multiset_and_corpus_micro_average():
    gold = parse_tree("(S (NP (NP (NN a))) (VP (VB b)))")
    pred = parse_tree("(S (NP (NN a)) (VP (VB b)))")
    c = parseval_counts(gold, pred)
    assert (c["gold"], c["predicted"], c["matched"]) == (4, 3, 3)
    res = parseval([gold, parse_tree(GOLD)], [pred, parse_tree(PRED)])
    assert res["precision"] == pytest.approx(9 / 9) and res["recall"] == pytest.approx(9 / 11)
    res = parseval([gold, parse_tree(GOLD)], [pred, None])
    assert res["predicted"] == 3 and res["gold"] == 11
    assert parseval([parse_tree(GOLD)], [parse_tree(PRED)], max_length=5)["n_sentences"] == 0


def test_bad_input():
    with pytest.raises(ValueError, match="different words"):
        parseval_counts(parse_tree("(S (A a) (B b))"), parse_tree("(S (A a) (B c))"))
    with pytest.raises(ValueError, match="2 gold trees but 1"):
        parseval([parse_tree(GOLD)] * 2, [parse_tree(GOLD)])
    with pytest.raises(ValueError, match="Tree"):
        parseval(["(S (A a))"], ["(S (A a))"])
