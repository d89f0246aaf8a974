"""CoNLL / CoNLL-U reading and writing."""
import bz2
import gzip
import io
import pickle

import pytest

from linclass.datasets import Sentence, read_conll, write_conll
from linclass.datasets.conll import CONLLU_COLUMNS
from linclass.exceptions import DataFormatError

CHUNKING = """Confidence NN B-NP
in IN B-PP
the DT B-NP
pound NN I-NP

# # B-NP
5 CD I-NP
. . O

"""

NER_DOCS = """-DOCSTART- -DOCSTART- O
De Art O
tekst N O

Jan N B-PER
. Punc O

-DOCSTART- -DOCSTART- O

Piet N B-PER

"""

CONLLU = """# newdoc id = doc1
# sent_id = s1
# text = I can't go.
1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t3:nsubj\t_
2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_
2\tca\tcan\tAUX\tMD\t_\t3\taux\t3:aux\t_
3\tn't\tnot\tPART\tRB\t_\t0\troot\t0:root\tSpaceAfter=No
3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

# sent_id = s2
# newpar
# text = Go home
1\tGo\tgo\tVERB\tVB\t_\t0\troot\t0:root\t_
2\thome\thome\tADV\tRB\t_\t1\tadvmod\t1:advmod\t_
2.1\tleft\tleave\tVERB\tVBD\t_\t_\t_\t1:conj\t_
2.2\tthere\tthere\tADV\tRB\t_\t_\t_\t2.1:advmod\t_

# newdoc id = doc2
# sent_id = s3
1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t0:root\t_

"""


def write_file(path, text, opener=open):
    with opener(path, "wt", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return path


def test_conll_columns_and_sentences():
    sentences = read_conll(io.StringIO(CHUNKING), columns=("word", "pos", "chunk"))
    assert [len(s) for s in sentences] == [4, 3]
    assert sentences[0].column("word") == ["Confidence", "in", "the", "pound"]
    assert sentences[0].column(2) == ["B-NP", "B-PP", "B-NP", "I-NP"]
    # '#' is an ordinary word in CoNLL files, not a comment
    assert sentences[1][0] == ("#", "#", "B-NP")
    assert all(isinstance(row, tuple) for s in sentences for row in s)
    with pytest.raises(KeyError):
        sentences[0].column("lemma")


def test_conll_without_names_rejects_string_columns():
    sentence = read_conll(io.StringIO(CHUNKING))[0]
    with pytest.raises(KeyError, match="columns="):
        sentence.column("word")


@pytest.mark.parametrize("opener, suffix", [(open, ".txt"), (gzip.open, ".txt.gz"),
                                            (bz2.open, ".txt.bz2")])
def test_compressed_files_read_transparently(tmp_path, opener, suffix):
    path = write_file(tmp_path / ("chunks" + suffix), CHUNKING, opener)
    plain = read_conll(io.StringIO(CHUNKING))
    assert read_conll(path) == plain
    assert read_conll(str(path)) == plain
    with open(path, "rb") as handle:   # a binary stream of a plain file
        if suffix == ".txt":
            assert read_conll(handle) == plain


def test_crlf_and_trailing_blank_lines():
    text = CHUNKING.replace("\n", "\r\n") + "\r\n\r\n"
    assert read_conll(io.BytesIO(text.encode())) == read_conll(io.StringIO(CHUNKING))


def test_column_count_mismatch_names_file_and_line(tmp_path):
    bad = CHUNKING.replace("the DT B-NP", "the DT")
    path = write_file(tmp_path / "bad.txt", bad)
    with pytest.raises(DataFormatError) as info:
        read_conll(path)
    assert info.value.filename == str(path)
    assert info.value.lineno == 3
    assert str(info.value).startswith("%s:3: expected 3 columns (as on line 1), found 2" % path)
    # a later sentence with a different width is an error too
    with pytest.raises(DataFormatError, match=r":6: expected 3 columns"):
        read_conll(io.StringIO(CHUNKING.replace("# # B-NP", "# # B-NP extra")))
    with pytest.raises(DataFormatError, match="columns="):
        read_conll(io.StringIO(CHUNKING), columns=("word", "pos"))


def test_docstart_is_a_document_boundary_not_a_token():
    sentences = read_conll(io.StringIO(NER_DOCS), columns=("word", "pos", "ner"))
    assert [s.column("word") for s in sentences] == [["De", "tekst"], ["Jan", "."], ["Piet"]]
    assert [s.doc_index for s in sentences] == [0, 0, 1]
    assert sentences[0].metadata["docstart"] == ("-DOCSTART-", "-DOCSTART-", "O")
    assert "docstart" not in sentences[1].metadata
    assert sentences[2].metadata.get("docstart_own_block") is True
    out = io.StringIO()
    write_conll(sentences, out)
    assert out.getvalue() == NER_DOCS


def test_docstart_inside_sentence_is_an_error():
    text = "a B O\n-DOCSTART- -DOCSTART- O\n\n"
    with pytest.raises(DataFormatError, match="line 2|:2:"):
        read_conll(io.StringIO(text))


def test_conll_round_trip_file(tmp_path):
    path = write_file(tmp_path / "in.txt.gz", CHUNKING, gzip.open)
    out = tmp_path / "out.txt.gz"
    write_conll(read_conll(path), out)
    with gzip.open(out, "rt", encoding="utf-8") as handle:
        assert handle.read() == CHUNKING
    # plain lists of tuples can be written too
    buffer = io.StringIO()
    write_conll([[("a", "DT"), ("dog", "NN")], [("ok", "UH")]], buffer, sep="\t")
    assert buffer.getvalue() == "a\tDT\ndog\tNN\n\nok\tUH\n\n"


def test_conllu_words_comments_multiword_and_empty_nodes():
    sentences = read_conll(io.StringIO(CONLLU))
    assert len(sentences) == 3
    first, second, third = sentences
    assert first.columns == CONLLU_COLUMNS
    assert first.column("form") == ["I", "ca", "n't", "."]
    assert first.column("id") == ["1", "2", "3", "4"]
    assert first.metadata == {"newdoc id": "doc1", "sent_id": "s1", "text": "I can't go."}
    assert first.comments[0] == "# newdoc id = doc1"
    assert [(pos, row[0]) for pos, row in first.extra_rows] == [(1, "2-3"), (3, "3.1")]
    assert second.metadata["newpar"] is None
    assert [(pos, row[0]) for pos, row in second.extra_rows] == [(2, "2.1"), (2, "2.2")]
    assert [s.doc_index for s in sentences] == [0, 0, 1]
    assert third.column("upos") == ["INTJ"]


def test_conllu_round_trip_is_identical(tmp_path):
    out = io.StringIO()
    write_conll(read_conll(io.StringIO(CONLLU)), out)
    assert out.getvalue() == CONLLU
    path = tmp_path / "x.conllu.gz"
    write_conll(read_conll(io.StringIO(CONLLU)), path)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        assert handle.read() == CONLLU
    assert read_conll(path) == read_conll(io.StringIO(CONLLU))


def test_conllu_forms_with_spaces_are_one_field():
    line = "1\t2 1/2\t2 1/2\tNUM\tCD\t_\t0\troot\t0:root\t_\n\n"
    sentence = read_conll(io.StringIO(line), format="conllu")[0]
    assert sentence.column("form") == ["2 1/2"]


@pytest.mark.parametrize("lineno, edit, match", [
    (6, lambda line: line.rsplit("\t", 1)[0], "exactly 10"),             # 9 fields
    (9, lambda line: line + "\textra", "exactly 10"),                    # 11 fields
    (9, lambda line: line.replace("\t", " "), "exactly 10"),             # spaces, not tabs
    (7, lambda line: line.replace("3\t", "5\t", 1), "out of order"),
    (5, lambda line: line.replace("2-3", "3-4", 1), "multi-word"),
    (5, lambda line: line.replace("2-3", "2-x", 1), "malformed multi-word"),
    (8, lambda line: line.replace("3.1", "3.2", 1), "empty node"),
    (16, lambda line: line.replace("2.1", "1.1", 1), "empty node"),
    (14, lambda line: line.replace("1\t", "0\t", 1), "out of order"),
])
def test_conllu_malformed_lines(lineno, edit, match):
    lines = CONLLU.split("\n")
    lines[lineno - 1] = edit(lines[lineno - 1])
    with pytest.raises(DataFormatError, match=match) as info:
        read_conll(io.StringIO("\n".join(lines)), format="conllu")
    assert info.value.lineno == lineno


def test_conllu_structure_errors(tmp_path):
    comment_inside = CONLLU.replace("4\t.\t.", "# oops\n4\t.\t.", 1)
    path = write_file(tmp_path / "bad.conllu", comment_inside)
    with pytest.raises(DataFormatError, match="comment line inside a sentence") as info:
        read_conll(path)
    assert info.value.filename == str(path) and info.value.lineno == 9
    with pytest.raises(DataFormatError, match="malformed word id"):
        read_conll(io.StringIO("x\ta\tb\tc\td\te\tf\tg\th\ti\n"), format="conllu")
    with pytest.raises(DataFormatError, match="ends at 3"):
        read_conll(io.StringIO("1-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n"
                               "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n\n"), format="conllu")
    with pytest.raises(DataFormatError, match="not followed by a sentence"):
        read_conll(io.StringIO("# sent_id = 1\n\n"), format="conllu")


def test_auto_format_detection(tmp_path):
    assert read_conll(io.StringIO(CONLLU))[0].columns == CONLLU_COLUMNS
    assert read_conll(io.StringIO(CHUNKING))[0].columns is None
    # a CoNLL file starting with the word '#'
    assert len(read_conll(io.StringIO("# # B-NP\nx NN I-NP\n\n"))[0]) == 2
    path = write_file(tmp_path / "x.conllu", CONLLU)
    assert len(read_conll(path)) == 3
    with pytest.raises(ValueError, match="format"):
        read_conll(path, format="tsv")


def test_sentence_pickles_and_copies():
    sentence = read_conll(io.StringIO(CONLLU))[0]
    clone = pickle.loads(pickle.dumps(sentence))
    assert clone == sentence and clone.metadata == sentence.metadata
    assert clone.extra_rows == sentence.extra_rows and clone.columns == sentence.columns
    copy = sentence.copy()
    copy.metadata["x"] = "y"
    assert "x" not in sentence.metadata
    assert isinstance(Sentence([("a", "b")]), list)


def test_decode_error_names_file(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Espa\xf1a NP B-LOC\n\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match="decode") as info:
        read_conll(path)
    assert info.value.filename == str(path)
    assert read_conll(path, encoding="latin-1")[0][0][0] == "Espa\xf1a"


def test_real_conll2000_round_trip():
    from linclass.datasets import data_home
    try:
        path = data_home() / "conll2000_chunking" / "test.txt.gz"
    except FileNotFoundError as err:
        pytest.skip("benchmark data not available: %s" % err)
    if not path.exists():
        pytest.skip("%s not found" % path)
    sentences = read_conll(path)
    out = io.StringIO()
    write_conll(sentences, out)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        assert out.getvalue() == handle.read()
