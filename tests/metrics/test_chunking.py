"""Chunk metrics against the conlleval script (fixtures) and hand-worked examples."""
import pathlib

import pytest

from linclass.exceptions import DataFormatError
from linclass.metrics import (chunk_f1, chunk_precision_recall_f1, conlleval_counts,
                               conlleval_report, conlleval_report_from_lines,
                               read_conlleval_lines, sentence_accuracy, token_accuracy)

DATA = pathlib.Path(__file__).parent / "data"
FIXTURES = ["chunking", "edge_cases", "random"]


def _fixture(name):
    lines = (DATA / ("conlleval_%s.txt" % name)).read_text(encoding="utf-8")
    expected = (DATA / ("conlleval_%s.expected" % name)).read_text(encoding="utf-8")
    return lines.splitlines(keepends=True), expected


@pytest.mark.parametrize("name", FIXTURES)
def test_report_from_lines_matches_perl_output(name):
    lines, expected = _fixture(name)
    assert conlleval_report_from_lines(lines) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_report_from_sentences_matches_perl_output(name):
    lines, expected = _fixture(name)
    y_true, y_pred = read_conlleval_lines(lines)
    assert conlleval_report(y_true, y_pred) == expected


def test_chunking_fixture_numbers():
    # perl: processed 64 tokens with 30 phrases; found: 34 phrases; correct: 23.
    y_true, y_pred = read_conlleval_lines(_fixture("chunking")[0])
    counts = conlleval_counts(y_true, y_pred)
    assert (counts.n_tokens, counts.n_true_chunks, counts.n_pred_chunks,
            counts.n_correct_chunks, counts.n_correct_tags) == (64, 30, 34, 23, 54)
    precision, recall, f1 = chunk_precision_recall_f1(y_true, y_pred)
    assert precision == pytest.approx(23 / 34)
    assert recall == pytest.approx(23 / 30)
    assert f1 == pytest.approx(2 * 23 / (34 + 30))
    assert chunk_f1(y_true, y_pred, scheme="IOB2") == pytest.approx(f1)
    per_type = chunk_precision_recall_f1(y_true, y_pred, average=None)
    assert per_type["SBAR"] == (0.0, 0.0, 0.0, 1)
    assert per_type["ADJP"] == (1.0, 1.0, 1.0, 1)
    macro = chunk_precision_recall_f1(y_true, y_pred, average="macro")
    assert macro[2] == pytest.approx(sum(v[2] for v in per_type.values()) / len(per_type))


# --- hand-worked examples of the script's rules -----------------------------

def _counts(gold, guess, **kw):
    c = conlleval_counts([gold], [guess], **kw)
    return c.n_true_chunks, c.n_pred_chunks, c.n_correct_chunks


def test_perfect_iob2():
    tags = ["B-NP", "I-NP", "O", "B-VP", "B-NP", "I-NP"]
    assert _counts(tags, tags) == (3, 3, 3)


def test_o_followed_by_i_starts_a_chunk():
    # "O I-NP I-NP" is one NP chunk (IOB1 reading), same as "O B-NP I-NP"
    assert _counts(["O", "B-NP", "I-NP"], ["O", "I-NP", "I-NP"]) == (1, 1, 1)


def test_type_change_ends_and_starts_chunks():
    # B-NP I-VP: an NP of one token, then a VP
    assert _counts(["B-NP", "B-VP"], ["B-NP", "I-VP"]) == (2, 2, 2)


def test_boundary_mismatch_is_wrong():
    # gold: one NP of two tokens; guess: two NPs of one token
    assert _counts(["B-NP", "I-NP"], ["B-NP", "B-NP"]) == (1, 2, 0)
    # same start, guess ends later
    assert _counts(["B-NP", "O"], ["B-NP", "I-NP"]) == (1, 1, 0)


def test_wrong_type_same_span_is_wrong():
    assert _counts(["B-NP", "I-NP"], ["B-VP", "I-VP"]) == (1, 1, 0)


def test_ioe_tags():
    # IOE1: E only ends a chunk followed by one of the same type
    gold = ["I-NP", "E-NP", "I-NP", "O"]
    assert _counts(gold, gold) == (2, 2, 2)
    # IOE2: every chunk ends with E
    gold = ["I-NP", "E-NP", "E-NP", "O"]
    assert _counts(gold, gold, scheme="IOE2") == (2, 2, 2)


def test_bracket_tags_are_single_token_chunks():
    assert _counts(["[-NP", "]-NP", "O"], ["[-NP", "[-NP", "O"]) == (2, 2, 2)


def test_sentence_boundary_closes_chunks():
    c = conlleval_counts([["B-NP", "I-NP"], ["I-NP"]], [["B-NP", "I-NP"], ["I-NP"]])
    assert (c.n_true_chunks, c.n_correct_chunks) == (2, 2)


def test_iobes_rewritten_to_iob2():
    gold = ["S-LOC", "S-LOC", "B-PER", "E-PER", "B-PER", "I-PER", "E-PER", "O"]
    guess = ["S-LOC", "B-LOC", "E-LOC", "E-PER", "B-PER", "I-PER", "E-PER", "O"]
    assert _counts(gold, gold, scheme="IOBES") == (4, 4, 4)
    # the raw script misses the S-LOC S-LOC and E-PER B-PER boundaries
    assert _counts(gold, gold) == (2, 2, 2)
    # guess: LOC(0), LOC(1-2), PER(3) [E after E of other type: new chunk], PER(4-6)
    assert _counts(gold, guess, scheme="IOBES") == (4, 4, 2)
    bilou = ["U-LOC", "U-LOC", "B-PER", "L-PER", "O"]
    assert _counts(bilou, bilou, scheme="BILOU") == (3, 3, 3)


def test_scheme_rejects_foreign_prefixes():
    with pytest.raises(ValueError, match="IOB2"):
        conlleval_counts([["B-NP", "E-NP"]], [["B-NP", "I-NP"]], scheme="IOB2")
    with pytest.raises(ValueError, match="IOE1"):
        conlleval_counts([["B-NP"]], [["I-NP"]], scheme="IOE1")
    with pytest.raises(ValueError, match="scheme"):
        conlleval_counts([["B-NP"]], [["I-NP"]], scheme="BIO9")


def test_no_chunks_gives_zero_scores():
    assert chunk_precision_recall_f1([["O", "O"]], [["O", "O"]]) == (0.0, 0.0, 0.0)
    report = conlleval_report([["O", "O"]], [["O", "O"]])
    assert report == ("processed 2 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
                      "accuracy: 100.00%; precision:   0.00%; recall:   0.00%; "
                      "FB1:   0.00\n")


def test_report_layout_hand_computed():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    guess = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O"]]
    expected = (
        "processed 6 tokens with 3 phrases; found: 3 phrases; correct: 2.\n"
        "accuracy:  83.33%; precision:  66.67%; recall:  66.67%; FB1:  66.67\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n"
        "              ORG: precision:  50.00%; recall: 100.00%; FB1:  66.67  2\n"
        "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n")
    assert conlleval_report(gold, guess) == expected


def test_token_and_sentence_accuracy():
    gold = [["B-NP", "I-NP"], ["O"], ["B-VP", "O", "O"]]
    guess = [["B-NP", "I-NP"], ["B-NP"], ["B-VP", "O", "I-NP"]]
    assert token_accuracy(gold, guess) == pytest.approx(4 / 6)
    assert sentence_accuracy(gold, guess) == pytest.approx(1 / 3)


@pytest.mark.parametrize("gold, guess, match", [
    ([["B-NP"]], [["B-NP"], ["O"]], "sentences"),
    ([["B-NP", "O"]], [["B-NP"]], "sentence 0"),
    ([], [], "no sentences"),
    ([["B-NP", None]], [["B-NP", "O"]], "tag string"),
    ([["B-NP", ""]], [["B-NP", "O"]], "tag string"),
    (["B-NP O"], [["B-NP", "O"]], "string"),
])
def test_sentence_validation(gold, guess, match):
    with pytest.raises(ValueError, match=match):
        chunk_f1(gold, guess)


def test_reader_errors_name_the_line():
    with pytest.raises(DataFormatError, match=r"run\.txt:3: unexpected number"):
        read_conlleval_lines(["a B-NP B-NP\n", "b O O\n", "c x O O\n"],
                             filename="run.txt")
    with pytest.raises(DataFormatError, match=":1: a line needs"):
        read_conlleval_lines(["onlyone\n"], filename="x")


def test_reader_splits_sentences():
    lines = ["a B-NP B-NP\n", "\n", "\n", "-X- O O\n", "b I-NP O\n"]
    assert read_conlleval_lines(lines) == ([["B-NP"], [], [], ["I-NP"]],
                                           [["B-NP"], [], [], ["O"]])


# --- real data (skipped when ../shared/data is absent) -----------------------

def _data_home():
    import os
    try:
        from linclass.datasets import data_home
        return pathlib.Path(data_home())
    except FileNotFoundError:
        return pathlib.Path("/nonexistent-linclass-data")
    except (ImportError, AttributeError):
        pass
    if os.environ.get("LINCLASS_DATA"):
        return pathlib.Path(os.environ["LINCLASS_DATA"])
    return pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


# Output of the perl conlleval script on the CoNLL-2000 test set with the
# guessed column made by _corrupt(seed=0) below (15% of tags replaced).
CONLL2000_CORRUPTED_EXPECTED = """\
processed 47377 tokens with 23852 phrases; found: 28680 phrases; correct: 18513.
accuracy:  85.76%; precision:  64.55%; recall:  77.62%; FB1:  70.48
             ADJP: precision:  30.52%; recall:  79.22%; FB1:  44.06  1137
             ADVP: precision:  49.86%; recall:  84.06%; FB1:  62.60  1460
            CONJP: precision:   0.67%; recall:  55.56%; FB1:   1.33  744
             INTJ: precision:   0.27%; recall:  50.00%; FB1:   0.54  366
              LST: precision:   0.54%; recall:  80.00%; FB1:   1.07  744
               NP: precision:  71.13%; recall:  73.42%; FB1:  72.25  12822
               PP: precision:  85.95%; recall:  85.70%; FB1:  85.82  4797
              PRT: precision:  19.04%; recall:  85.85%; FB1:  31.16  478
             SBAR: precision:  38.49%; recall:  85.05%; FB1:  53.00  1182
               VP: precision:  73.52%; recall:  78.12%; FB1:  75.75  4950
"""


def _corrupt(lines, seed):
    import random
    rng = random.Random(seed)
    tags = sorted({line.split()[-1] for line in lines if line.strip()})
    out = []
    for line in lines:
        fields = line.split()
        if not fields:
            out.append("\n")
            continue
        guess = rng.choice(tags) if rng.random() < 0.15 else fields[-1]
        out.append(" ".join(fields + [guess]) + "\n")
    return out


def test_conll2000_test_set_matches_perl():
    import gzip
    path = _data_home() / "conll2000_chunking" / "test.txt.gz"
    if not path.exists():
        pytest.skip("CoNLL-2000 data not found at %s (set LINCLASS_DATA)" % path)
    with gzip.open(path, "rt", encoding="latin-1") as handle:
        lines = handle.read().splitlines()
    gold_lines = [line + " " + line.split()[-1] + "\n" if line.strip() else "\n"
                  for line in lines]
    report, counts = conlleval_report_from_lines(gold_lines, return_counts=True)
    # the CoNLL-2000 test set: 47,377 tokens in 23,852 chunks
    assert (counts.n_tokens, counts.n_true_chunks, counts.n_correct_chunks) == \
        (47377, 23852, 23852)
    assert conlleval_report_from_lines(_corrupt(lines, 0)) == CONLL2000_CORRUPTED_EXPECTED
