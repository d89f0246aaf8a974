"""Bracketed (Penn Treebank) trees."""
import gzip
import io
import pickle

import pytest

from linclass.datasets import Tree, parse_tree, read_trees
from linclass.exceptions import DataFormatError

PTB = """( (S (NP-SBJ-1 (NNP Mr.) (NNP Vinken))
     (VP (VBZ is)
       (NP-PRD (NP (NN chairman))
         (PP (IN of) (NP (NNP Elsevier) (NNP N.V.)))))
     (. .)) )
( (S (NP-SBJ (-NONE- *-1)) (VP (VBD said) (SBAR (-NONE- 0) (S (-NONE- *T*-2)))) (. .)) ) ((FRAG (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-))))
"""


def test_parse_multi_line_and_several_trees_per_line():
    trees = read_trees(io.StringIO(PTB))
    assert len(trees) == 3
    first = trees[0]
    assert first.label == "S"
    assert first.leaves() == ["Mr.", "Vinken", "is", "chairman", "of", "Elsevier", "N.V.", "."]
    assert first.pos()[:3] == [("Mr.", "NNP"), ("Vinken", "NNP"), ("is", "VBZ")]
    assert str(first) == ("(S (NP-SBJ-1 (NNP Mr.) (NNP Vinken)) (VP (VBZ is) (NP-PRD (NP (NN "
                          "chairman)) (PP (IN of) (NP (NNP Elsevier) (NNP N.V.))))) (. .))")
    assert first.height() == 7
    assert trees[2].leaves() == ["-LRB-", "x", "-RRB-"]


def test_outer_root_kept_when_asked():
    tree = parse_tree("( (S (NN x)) )", strip_outer=False)
    assert tree.label == "" and len(tree) == 1 and tree[0].label == "S"
    assert str(tree) == "( (S (NN x)))"
    assert parse_tree(str(tree), strip_outer=False) == tree
    assert parse_tree("( (S (NN x)) )") == Tree("S", [Tree("NN", ["x"])])
    # an unlabeled root with two children is not stripped
    assert parse_tree("( (A a) (B b))").label == ""


def test_str_round_trip_and_equality():
    for tree in read_trees(io.StringIO(PTB), strip_outer=False):
        assert parse_tree(str(tree), strip_outer=False) == tree
    assert Tree("A", ["x"]) != Tree("A", ["y"])
    assert Tree("A", ["x"]) != Tree("B", ["x"])


def test_productions_and_labeled_spans():
    tree = parse_tree("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    assert [(p.lhs, p.rhs, p.lexical) for p in tree.productions()] == [
        ("S", ("NP", "VP"), False), ("NP", ("DT", "NN"), False), ("DT", ("the",), True),
        ("NN", ("dog",), True), ("VP", ("VBZ",), False), ("VBZ", ("barks",), True)]
    assert tree.labeled_spans() == [("S", 0, 3), ("NP", 0, 2), ("VP", 2, 3)]
    assert tree.labeled_spans(preterminals=True) == [
        ("S", 0, 3), ("NP", 0, 2), ("DT", 0, 1), ("NN", 1, 2), ("VP", 2, 3), ("VBZ", 2, 3)]
    assert [t.label for t in tree.subtrees()] == ["S", "NP", "DT", "NN", "VP", "VBZ"]


def test_strip_function_tags_and_empty_elements():
    tree = read_trees(io.StringIO(PTB))[1]
    stripped = tree.strip_function_tags()
    assert [t.label for t in stripped.subtrees()][:3] == ["S", "NP", "-NONE-"]
    assert tree.label == "S" and tree[0].label == "NP-SBJ"      # original unchanged
    assert parse_tree("(NP=2 (NN x))").strip_function_tags().label == "NP"
    assert parse_tree("(-LRB- -LRB-)").strip_function_tags().label == "-LRB-"
    cleaned = stripped.remove_empty_elements()
    assert str(cleaned) == "(S (VP (VBD said)) (. .))"
    assert cleaned.labeled_spans() == [("S", 0, 2), ("VP", 0, 1)]
    assert parse_tree("(S (-NONE- *))").remove_empty_elements() is None


@pytest.mark.parametrize("text, match, lineno", [
    ("(S (NP (NN x))", "never closed", 1),
    ("(S (NN x)))", "without a matching", 1),
    ("(S\n (NN x))\n)", "without a matching", 3),
    ("(S (NN x))\n\n(NP (DT a)", "never closed", 3),
    ("(S ())", "empty brackets", 1),
    ("(S (NP))", "no children", 1),
    ("word (S (NN x))", "outside of any bracket", 1),
    ("(S (NN x))\n(", "never closed", 2),
])
def test_malformed_trees_name_file_and_line(tmp_path, text, match, lineno):
    path = tmp_path / "bad.mrg"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=match) as info:
        read_trees(path)
    assert info.value.filename == str(path)
    assert info.value.lineno == lineno
    assert str(info.value).startswith("%s:%d: " % (path, lineno))


def test_parse_tree_expects_exactly_one_tree():
    with pytest.raises(DataFormatError, match="no tree"):
        parse_tree("   \n ")
    with pytest.raises(DataFormatError, match="expected one tree, found 2") as info:
        parse_tree("(A a)\n(B b)")
    assert info.value.lineno == 2
    with pytest.raises(TypeError):
        parse_tree(b"(A a)")
    assert read_trees(io.StringIO("  \n")) == []


def test_gzip_and_pickle(tmp_path):
    path = tmp_path / "t.mrg.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(PTB)
    trees = read_trees(path)
    assert trees == read_trees(io.StringIO(PTB))
    assert pickle.loads(pickle.dumps(trees)) == trees
    assert trees[0].copy() == trees[0] and trees[0].copy() is not trees[0]


def test_against_nltk_on_the_ptb_sample():
    nltk = pytest.importorskip("nltk")
    from linclass.datasets import data_home
    try:
        path = data_home() / "ptb_wsj_sample" / "dev.mrg.gz"
    except FileNotFoundError as err:
        pytest.skip("benchmark data not available: %s" % err)
    if not path.exists():
        pytest.skip("%s not found" % path)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    ours = read_trees(path, strip_outer=False)
    assert len(ours) == len(lines) == 273
    for tree, line in zip(ours, lines):
        reference = nltk.Tree.fromstring(line)
        assert str(tree) == reference.pformat(margin=10 ** 9)
        assert tree.leaves() == reference.leaves()
        assert tree.pos() == reference.pos()
        assert tree.height() == reference.height()
        expected = [(str(p.lhs()), tuple(str(x) if isinstance(x, nltk.Nonterminal) else x
                                         for x in p.rhs())) for p in reference.productions()]
        assert [(p.lhs, p.rhs) for p in tree.productions()] == expected
        # spans from NLTK's tree positions
        spans = []
        for position in reference.treepositions():
            node = reference[position]
            if isinstance(node, nltk.Tree) and node.label() and node.height() > 2:
                leaves_before = [p for p in reference.treepositions("leaves") if p < position]
                spans.append((node.label(), len(leaves_before),
                              len(leaves_before) + len(node.leaves())))
        assert tree.labeled_spans() == spans
    # the stripped trees are the single children of the outer brackets
    assert read_trees(path) == [t[0] for t in ours]
