"""#35: tree handling in linclass.parsing and linclass.datasets.trees has no
recursion bounded by the input (deep trees, long unary chains), sentences may
be numpy string arrays, and an unknown word makes one sentence unparsable,
not the whole run."""
import sys

import numpy as np
import pytest

from linclass.datasets import Tree, parse_tree
from linclass.demo.parsing import make_toy_treebank
from linclass.parsing import PCFG, DiscriminativeParser, NoParseError, debinarize, treebank_to_cnf

DEEP = 5000          # far beyond the interpreter's recursion limit
assert DEEP > 3 * sys.getrecursionlimit()


# The recursive transformations as they were before #35: the reference the
# iterative ones must reproduce exactly on ordinary trees.
def _ref_binarize(tree, h):
    if tree.is_preterminal():
        return tree
    children = [_ref_binarize(c, h) for c in tree.children]
    if len(children) <= 2:
        return Tree(tree.label, children)
    labels = [c.label for c in tree.children]
    node = children[-1]
    for k in range(len(children) - 2, 0, -1):
        siblings = labels[k:] if h is None else labels[k:k + h]
        node = Tree("@%s~%s" % (tree.label, "~".join(siblings)), [children[k], node])
    return Tree(tree.label, [children[0], node])


def _ref_annotate(tree, parent):
    if tree.is_preterminal():
        return tree
    label = tree.label + "^" + parent.split("^", 1)[0].split("+", 1)[0]
    return Tree(label, [_ref_annotate(c, tree.label) for c in tree.children])


def _ref_collapse(tree):
    children = tree.children
    if all(isinstance(c, str) for c in children):
        return Tree(tree.label, children)
    label = tree.label
    while len(children) == 1 and not children[0].is_preterminal():
        label = label + "+" + children[0].label
        children = children[0].children
    return Tree(label, [_ref_collapse(c) for c in children])


def _ref_debinarize(tree):
    def children_of(node):
        out = []
        for c in node.children:
            if isinstance(c, Tree) and c.label.startswith("@"):
                out.extend(children_of(c))
            else:
                out.append(convert(c) if isinstance(c, Tree) else c)
        return out

    def convert(node):
        chain = node.label.split("^", 1)[0].split("+")
        result = Tree(chain[-1], children_of(node))
        for label in reversed(chain[:-1]):
            result = Tree(label, [result])
        return result
    return convert(tree.children[0])


def _with_unary_chains(trees):
    """The toy trees with unary chains over phrases added (S -> X -> Y -> ...)."""
    out = []
    for k, tree in enumerate(trees):
        top = tree
        for j in range(k % 4):
            top = Tree("X%d" % j, [top])
        out.append(Tree("S", [top, Tree("NN", ["end"])]))
    return out


@pytest.mark.parametrize("h, v", [(1, 1), (2, 2), (None, 1), (0, 2)])
def test_cnf_conversion_equals_the_recursive_reference(h, v):
    trees = _with_unary_chains(make_toy_treebank(40, max_words=10, random_state=3))
    for tree in trees:
        expected = _ref_collapse(tree)
        if v == 2:
            expected = _ref_annotate(expected, "ROOT")
        expected = Tree("ROOT", [_ref_binarize(expected, h)])
        cnf = treebank_to_cnf(tree, horizontal_markov=h, vertical_markov=v)
        assert cnf == expected
        assert debinarize(cnf) == _ref_debinarize(expected) == tree


def test_deep_unary_chain_tree():
    text = "(S " * DEEP + "(NN dog)" + ")" * DEEP
    tree = parse_tree(text)
    assert tree.height() == DEEP + 2
    assert str(tree) == text
    assert tree.strip_function_tags() == tree
    assert tree.remove_empty_elements() == tree
    cnf = treebank_to_cnf(tree, vertical_markov=2)
    assert cnf.children[0].label == "+".join(["S"] * DEEP) + "^ROOT"
    assert debinarize(cnf) == tree
    grammar = PCFG.from_treebank([tree])
    assert grammar.parse(["dog"]) == tree


def test_deep_branching_tree_with_function_tags_and_empty_elements():
    text = "".join("(S-SBJ-%d (NN w) (-NONE- *T*) " % i for i in range(DEEP)) + "(NN w)" \
        + ")" * DEEP
    tree = parse_tree(text)
    cleaned = tree.strip_function_tags().remove_empty_elements()
    assert cleaned.height() == DEEP + 2
    assert {t.label for t in cleaned.subtrees()} == {"S", "NN"}
    assert len(cleaned.leaves()) == DEEP + 1
    assert debinarize(treebank_to_cnf(tree, vertical_markov=2)) == cleaned


def test_grammar_with_a_long_unary_chain():
    n = sys.getrecursionlimit() + 100
    text = "S -> A0 B [1.0]\nB -> 'b' [1.0]\n" + "".join(
        "A%d -> A%d [1.0]\n" % (i, i + 1) for i in range(n)) + "A%d -> 'w' [1.0]\n" % n
    grammar = PCFG.from_string(text)
    tree, log_prob = grammar.parse(["w", "b"], return_log_prob=True)
    assert log_prob == 0.0 == grammar.log_prob(tree)
    node, depth = tree.children[0], 0
    while isinstance(node, Tree):
        assert node.label == "A%d" % depth
        node, depth = node.children[0], depth + 1
    assert depth == n + 1


@pytest.fixture(scope="module")
def toy():
    trees = make_toy_treebank(60, max_words=7, random_state=5)
    return trees, PCFG.from_treebank(trees), DiscriminativeParser(max_iter=1, hash_bits=8,
                                                                  random_state=0).fit(trees)


def test_numpy_string_arrays_are_sentences(toy):
    trees, pcfg, parser = toy
    sentences = [t.leaves() for t in trees[:5]]
    for words in sentences:
        array = np.array(words)
        assert pcfg.parse(array) == pcfg.parse(words)
        assert all(type(w) is str for w in pcfg.parse(array).leaves())
        assert pcfg.parse(np.array(words, dtype=object)) == pcfg.parse(words)
    predicted = parser.predict([np.array(w) for w in sentences])
    assert predicted == parser.predict(sentences)
    assert all(type(w) is str for t in predicted for w in t.leaves())
    with pytest.raises(ValueError, match="one-dimensional"):
        pcfg.parse(np.array([sentences[0]]))


def test_an_unknown_word_makes_only_its_sentence_unparsable(toy):
    trees, pcfg, parser = toy
    sentences = [t.leaves() for t in trees[:3]]
    odd = ["Zork", "-", "42"]      # no signature of these is a terminal of the toy grammar
    with pytest.raises(NoParseError):
        pcfg.parse(odd)
    predicted = parser.predict(sentences[:2] + [odd] + sentences[2:])
    assert predicted[2] is None
    assert predicted[:2] + predicted[3:] == parser.predict(sentences)
