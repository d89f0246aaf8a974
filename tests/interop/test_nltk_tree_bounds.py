"""#35: the NLTK tree bridge handles trees of any depth and refuses a tree
that contains itself (it was walked without end)."""
import pytest

from linclass.datasets import parse_tree
from linclass.interop import from_nltk_tree, to_nltk_tree

nltk = pytest.importorskip("nltk")


def test_deep_trees_both_ways():
    depth = 5000
    text = "(S " * depth + "(NN dog)" + ")" * depth
    tree = parse_tree(text)
    converted = to_nltk_tree(tree)
    node, levels = converted, 0               # (NLTK's own methods recurse)
    while isinstance(node, nltk.Tree):
        assert node.label() == ("S" if levels < depth else "NN") and len(node) == 1
        node, levels = node[0], levels + 1
    assert (node, levels) == ("dog", depth + 1)
    assert from_nltk_tree(converted) == tree


def test_a_tree_that_contains_itself_is_refused():
    loop = nltk.Tree("S", [nltk.Tree("NN", ["dog"])])
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        from_nltk_tree(loop)
    shared = nltk.Tree("NN", ["dog"])           # shared, not cyclic: fine
    assert str(from_nltk_tree(nltk.Tree("S", [shared, shared]))) == "(S (NN dog) (NN dog))"
