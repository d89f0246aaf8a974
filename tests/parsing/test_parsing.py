"""CKY, PCFG, CNF conversion, the parsing Structure and the discriminative parser.

References: brute-force enumeration of every tree of a toy grammar, NLTK's
``ViterbiParser`` on the same PCFG, hand-built trees.
"""
import math
import pickle

import numpy as np
import pytest

from linclass.datasets import parse_tree
from linclass.datasets.trees import Tree
from linclass.parsing import PCFG, DiscriminativeParser, debinarize, treebank_to_cnf
from linclass.structured import StructuredPerceptron, StructuredSVM
from linclass.parsing.grammar import (CompiledGrammar, GrammarStructure, cnf_tree_nodes,
                                       signature_backoffs, word_signature)
from linclass.demo.parsing import make_toy_treebank

TOY = """
S -> NP VP [0.9] | VP [0.1]
VP -> V NP [0.5] | V [0.2] | VP PP [0.2] | V S [0.1]
NP -> NP PP [0.2] | 'John' [0.2] | 'Mary' [0.1] | Det N [0.3] | N [0.1] | NP NP [0.1]
PP -> P NP [1.0]
Det -> 'the' [0.7] | 'a' [0.3]
N -> 'man' [0.4] | 'telescope' [0.3] | 'saw' [0.3]
V -> 'saw' [0.6] | 'ran' [0.4]
P -> 'with' [1.0]
"""

# a grammar with unary chains A -> B -> C (the closure must find the best chain)
CHAINS = """
S -> A B [0.6] | X [0.4]
X -> Y [0.5] | A B [0.5]
Y -> S [0.3] | Z [0.7]
Z -> A B [0.2] | 'a' [0.8]
A -> 'a' [0.6] | A A [0.2] | Z [0.2]
B -> 'b' [0.7] | A B [0.3]
"""


# ------------------------------------------------------- brute force --

def all_pcfg_trees(grammar, words, symbol, i, j, chain=()):
    """Every tree rooted at ``symbol`` over words[i:j] (unary chains without a
    repeated symbol in one span: repeated symbols only add cycles, which never
    raise a probability)."""
    out = []
    for (lhs, rhs, lexical), _ in grammar._rule_logprob.items():
        if lhs != symbol:
            continue
        if lexical:
            if j == i + 1 and grammar.terminals([words[i]])[0] == rhs[0]:
                out.append(Tree(symbol, [words[i]]))
        elif len(rhs) == 1:
            if rhs[0] in chain or rhs[0] == symbol:
                continue
            for sub in all_pcfg_trees(grammar, words, rhs[0], i, j, chain + (symbol,)):
                out.append(Tree(symbol, [sub]))
        else:
            for k in range(i + 1, j):
                for left in all_pcfg_trees(grammar, words, rhs[0], i, k):
                    for right in all_pcfg_trees(grammar, words, rhs[1], k, j):
                        out.append(Tree(symbol, [left, right]))
    return out


@pytest.mark.parametrize("text", [TOY, CHAINS])
def test_cky_equals_exhaustive_enumeration(text):
    grammar = PCFG.from_string(text)
    vocab = sorted({r[1][0] for r in grammar.rules() if r[3]})
    rng = np.random.default_rng(0)
    n_parsed = 0
    for n in (1, 2, 3, 4, 5):
        for _ in range(25):
            words = list(rng.choice(vocab, size=n))
            trees = all_pcfg_trees(grammar, words, grammar.start, 0, n)
            tree, score = grammar.parse(words, return_log_prob=True)
            if not trees:
                assert tree is None and score == -np.inf
                continue
            n_parsed += 1
            best = max(grammar.log_prob(t) for t in trees)
            assert score == pytest.approx(best, rel=1e-12, abs=1e-12)
            assert grammar.log_prob(tree) == pytest.approx(score, rel=1e-12, abs=1e-12)
            assert tree.leaves() == words
    assert n_parsed > 10


def test_best_score_equals_nltk_viterbi():
    nltk = pytest.importorskip("nltk")
    for text in (TOY, CHAINS):
        grammar = PCFG.from_string(text)
        parser = nltk.ViterbiParser(grammar.to_nltk())
        vocab = sorted({r[1][0] for r in grammar.rules() if r[3]})
        rng = np.random.default_rng(1)
        sentences = [["John", "saw", "the", "man", "with", "a", "telescope"],
                     ["Mary", "ran"], ["saw", "the", "man", "saw", "John"]] if text is TOY else []
        sentences += [list(rng.choice(vocab, size=n)) for n in (2, 3, 4, 5, 6) for _ in range(8)]
        compared = 0
        for words in sentences:
            tree, score = grammar.parse(words, return_log_prob=True)
            ref = list(parser.parse(words))
            if not ref:
                assert tree is None
                continue
            compared += 1
            assert score == pytest.approx(math.log(ref[0].prob()), rel=1e-9)
        assert compared >= 5


def test_pcfg_from_treebank_matches_nltk_induce_pcfg():
    nltk = pytest.importorskip("nltk")
    trees = make_toy_treebank(60, random_state=3)
    grammar = PCFG.from_treebank(trees, unknown_words=None, horizontal_markov=None)
    prods = []
    for t in trees:
        nt = nltk.Tree.fromstring(str(treebank_to_cnf(t, horizontal_markov=None)))
        prods += nt.productions()
    ref = nltk.induce_pcfg(nltk.Nonterminal("ROOT"), prods)
    ours = {(lhs, rhs, lex): p for lhs, rhs, p, lex in grammar.rules()}
    assert len(ours) == len(ref.productions())
    for prod in ref.productions():
        lex = isinstance(prod.rhs()[0], str)
        key = (str(prod.lhs()), tuple(str(s) for s in prod.rhs()), lex)
        assert ours[key] == pytest.approx(prod.prob(), rel=1e-12)


# -------------------------------------------------- CNF conversion --

PTB_LIKE = [
    "( (S (NP-SBJ-1 (DT The) (JJ big) (JJ red) (NN dog)) (VP (VBD barked) "
    "(NP (-NONE- *T*-1)) (PP-LOC (IN in) (NP (DT the) (NN park)))) (. .)) )",
    "( (S (S-TPC (NP (PRP It)) (VP (VBZ works))) (, ,) (NP-SBJ (PRP he)) "
    "(VP (VBD said) (SBAR (-NONE- 0) (S (-NONE- *T*-2)))) (. .)) )",
    "( (FRAG (NP (NN Hello))) )",
    "( (NP (NP (NNP Mr.) (NNP Smith)) (, ,) (NP (CD 45) (NNS years)) (, ,) (ADJP (JJ old)) "
    "(. .)) )",
]


@pytest.mark.parametrize("h", [0, 1, 2, None])
@pytest.mark.parametrize("v", [1, 2])
def test_cnf_round_trip(h, v):
    for text in PTB_LIKE:
        tree = parse_tree(text)
        cnf = treebank_to_cnf(tree, horizontal_markov=h, vertical_markov=v)
        nodes, words = cnf_tree_nodes(cnf, root_label="ROOT")   # in the CKY space
        clean = tree.strip_function_tags().remove_empty_elements()
        assert words == clean.leaves()
        assert debinarize(cnf) == clean
        assert all(len(n.children) <= 2 for n in cnf.subtrees())


def test_cnf_details():
    cnf = treebank_to_cnf(parse_tree(PTB_LIKE[0]), horizontal_markov=1)
    assert cnf.label == "ROOT"
    labels = {n.label for n in cnf.subtrees()}
    assert "@NP~JJ" in labels and "@S~VP" in labels
    assert not any("-" in lab for lab in labels if lab not in ("-NONE-",))
    # unary chain (FRAG (NP (NN Hello))): FRAG+NP over the preterminal
    cnf = treebank_to_cnf(parse_tree(PTB_LIKE[2]))
    assert str(cnf) == "(ROOT (FRAG+NP (NN Hello)))"
    cnf = treebank_to_cnf(parse_tree(PTB_LIKE[1]), vertical_markov=2)
    assert cnf[0].label == "S^ROOT"


def test_cnf_bad_input():
    with pytest.raises(ValueError, match="only empty"):
        treebank_to_cnf(parse_tree("(S (-NONE- *))"))
    with pytest.raises(ValueError, match="reserved"):
        treebank_to_cnf(parse_tree("(S (NP+X (NN a)) (VP (VB b)))"))
    with pytest.raises(ValueError, match="mixes words"):
        treebank_to_cnf(Tree("S", [Tree("NN", ["a"]), "b"]))
    with pytest.raises(ValueError, match="vertical_markov"):
        treebank_to_cnf(parse_tree(PTB_LIKE[0]), vertical_markov=3)


def test_cnf_tree_nodes_rejects_trees_outside_the_space():
    with pytest.raises(ValueError, match="two unary"):
        cnf_tree_nodes(parse_tree("(ROOT (S (NP (NN a))))"), root_label="ROOT")
    with pytest.raises(ValueError, match="3 children"):
        cnf_tree_nodes(parse_tree("(ROOT (S (A a) (B b) (C c)))"), root_label="ROOT")
    with pytest.raises(ValueError, match="root"):
        cnf_tree_nodes(parse_tree("(TOP (S (A a) (B b)))"), root_label="ROOT")


# -------------------------------------------------- unknown words --

def test_word_signature():
    assert word_signature("running") == "UNK-LC-s=ing"
    assert word_signature("Obama") == "UNK-INITC"
    assert word_signature("Obama", sentence_initial=True) == "UNK-INITC0"
    assert word_signature("IBM") == "UNK-CAPS"
    assert word_signature("1,234") == "UNK-NUM"
    assert word_signature("well-known") == "UNK-LC-DASH"
    assert signature_backoffs("UNK-LC-DASH-s=ed") == ["UNK-LC-DASH-s=ed", "UNK-LC-DASH",
                                                       "UNK-LC", "UNK"]
    with pytest.raises(ValueError):
        word_signature("")


def test_unknown_words_model_and_error():
    trees = make_toy_treebank(80, random_state=0)
    trees.append(parse_tree("(S (NP (NNP Zanzibar)) (VP (VBD glimmered)))"))
    grammar = PCFG.from_treebank(trees)
    tree = grammar.parse(["the", "dog", "snored"])
    assert tree.pos()[2] == ("snored", "VBD")
    # unseen words map to signatures seen on rare training words
    assert grammar.terminals(["Timbuktu", "snored"]) == ["UNK-INITC0", "UNK-LC-s=ed"]
    tree = grammar.parse(["Timbuktu", "snored"])
    assert tree.pos() == [("Timbuktu", "NNP"), ("snored", "VBD")]
    strict = PCFG.from_treebank(trees, unknown_words=None)
    with pytest.raises(ValueError, match="unknown-word model is disabled"):
        strict.parse(["the", "dog", "snored"])
    toy = PCFG.from_string(TOY)
    with pytest.raises(ValueError, match="'dog' \\(position 1\\)"):
        toy.parse(["the", "dog"])


# -------------------------------------------------- bad grammars --

def test_bad_grammars():
    with pytest.raises(ValueError, match="start symbol 'Q' has no rules"):
        PCFG.from_string(TOY, start="Q")
    with pytest.raises(ValueError, match="unproductive"):
        PCFG.from_string("S -> A B [1.0]\nA -> 'a' [1.0]\nB -> B A [1.0]")
    with pytest.raises(ValueError, match="sum to"):
        PCFG.from_string("S -> A A [0.5]\nA -> 'a' [1.0]")
    with pytest.raises(ValueError, match="outside"):
        PCFG.from_rules([("S", ("a",), 1.5)], "S")
    with pytest.raises(ValueError, match="Chomsky"):
        PCFG.from_string("S -> A A A [1.0]\nA -> 'a' [1.0]")
    with pytest.raises(ValueError, match="has no rules"):
        PCFG.from_string("S -> A B [1.0]\nA -> 'a' [1.0]")
    with pytest.raises(ValueError, match="at least one rule"):
        PCFG.from_rules([], "S")
    with pytest.raises(ValueError, match="without probability"):
        PCFG.from_string("S -> A B")
    grammar = PCFG.from_string(TOY)
    with pytest.raises(ValueError, match="empty sentence"):
        grammar.parse([])
    with pytest.raises(ValueError, match="sequence of word"):
        grammar.parse("John ran")
    with pytest.raises(ValueError, match="rewrites a symbol as itself"):
        CompiledGrammar(["A"], np.zeros((0, 3)), [[0, 0]])


def test_compiled_grammar_validates_scores():
    g = CompiledGrammar(["S", "A"], [[0, 1, 1]], [])
    lex = np.zeros((2, 2))
    with pytest.raises(ValueError, match="shape"):
        g.viterbi(np.zeros((2, 3)), [0.0], [], [0.0, -np.inf])
    with pytest.raises(ValueError, match="NaN"):
        g.viterbi(np.full((2, 2), np.nan), [0.0], [], [0.0, -np.inf])
    with pytest.raises(ValueError, match="binary rule scores"):
        g.viterbi(lex, [0.0, 1.0], [], [0.0, -np.inf])
    score, nodes = g.viterbi(lex, [0.5], [], [0.0, -np.inf])
    assert score == 0.5 and nodes.shape == (4, 5)   # root, binary, 2 lexical


# ------------------------------------------- the parsing Structure --

def _random_structure(seed):
    """A small dense grammar: every binary rule over 3 symbols, some unary rules."""
    symbols = ["S", "A", "B", "T", "U"]
    rng = np.random.default_rng(seed + 100)
    binary = [(a, b, c) for a in "SAB" for b in "SABTU" for c in "SABTU"
              if rng.random() < 0.3]
    unary = [("S", "A"), ("A", "T"), ("B", "U"), ("S", "T"), ("A", "B")]
    root = [("S",), ("A",), ("B",)]
    word_tags = {"x": ["T", "U"], "y": ["U"], "z": ["T"]}
    signature_tags = {"UNK-LC": ["T", "U"], "UNK": ["T", "U"]}
    structure = GrammarStructure(symbols, binary, unary, root, word_tags, signature_tags)
    w = np.random.default_rng(seed).normal(size=structure.n_features)
    return structure, w


def all_structure_trees(structure, words):
    """Every tree of the CKY space (<= 1 unary per span) of a GrammarStructure."""
    px = structure.prepare(words)
    sym = structure.symbols
    n = len(words)

    def lower(i, j):
        if j == i + 1:
            for t in px.tag[px.position == i].tolist():
                yield Tree(sym[t], [words[i]])
            return
        for k in range(i + 1, j):
            for left in list(upper(i, k)):
                for right in list(upper(k, j)):
                    for (a, b, c) in structure.binary_index:
                        if sym[b] == left.label and sym[c] == right.label:
                            yield Tree(sym[a], [left, right])

    def upper(i, j):
        for low in list(lower(i, j)):
            yield low
            for (a, b) in structure.unary_index:
                if sym[b] == low.label:
                    yield Tree(sym[a], [low])

    for top in upper(0, n):
        if structure.symbol_index[top.label] in structure.root_index:
            yield Tree("ROOT", [top])


def test_structure_decode_and_loss_augmented_equal_brute_force():
    for seed in range(4):
        structure, w = _random_structure(seed)
        for words in (["x"], ["x", "y"], ["z", "x", "y"], ["y", "new", "z", "y"]):
            trees = list(all_structure_trees(structure, words))
            scores = np.array([structure.score(w, words, t) for t in trees])
            best = structure.decode(w, words)
            assert structure.score(w, words, best) == pytest.approx(scores.max(), abs=1e-10)
            # loss-augmented: against a few gold trees
            for gold in trees[:: max(1, len(trees) // 4)]:
                aug = np.array([s + structure.loss(gold, t) for s, t in zip(scores, trees)])
                got = structure.loss_augmented_decode(w, words, gold)
                got_aug = structure.score(w, words, got) + structure.loss(gold, got)
                assert got_aug == pytest.approx(aug.max(), abs=1e-10)


def test_structure_loss_and_features():
    structure, w = _random_structure(0)
    words = ["x", "y", "z"]
    trees = list(all_structure_trees(structure, words))
    a, b = trees[0], trees[-1]
    assert structure.loss(a, a) == 0 and structure.loss(a, b) > 0
    assert structure.loss(a, b) == structure.loss(b, a)
    for t in trees[:20]:
        structure.check_output(words, t)
        idx, val = structure.joint_feature(words, t)
        # one feature per rule use (root, binary, unary) + word + signature per token
        n_nodes = sum(1 for _ in t.subtrees())
        assert idx.size >= n_nodes
    with pytest.raises(ValueError, match="not a symbol"):
        structure.check_output(words, parse_tree("(ROOT (S (Q x) (@ (T y) (T z))))"))
    with pytest.raises(ValueError, match="not a candidate"):
        structure.check_output(["y"], parse_tree("(ROOT (A (T y)))"))
    with pytest.raises(ValueError, match="differ"):
        structure.check_output(["x"], parse_tree("(ROOT (A (T z)))"))


def test_structured_learners_on_toy_treebank():
    trees = make_toy_treebank(60, max_words=8, random_state=1)
    cnf = [treebank_to_cnf(t) for t in trees]
    structure = GrammarStructure.from_trees(cnf)
    X = [t.leaves() for t in cnf]
    perceptron = StructuredPerceptron(structure, max_iter=10, random_state=0).fit(X, cnf)
    assert perceptron.score(X, cnf) >= 0.75
    svm = StructuredSVM(structure, C=1.0, tol=0.5, max_iter=30).fit(X[:25], cnf[:25])
    assert svm.mean_loss(X[:25], cnf[:25]) < 1.0


def test_discriminative_parser_and_pcfg_on_toy_treebank():
    from linclass.metrics.parsing import parseval
    trees = make_toy_treebank(260, random_state=2)
    train, test = trees[:200], trees[200:]
    sentences = [t.leaves() for t in test]
    pcfg = PCFG.from_treebank(train)
    pcfg_f1 = parseval(test, pcfg.parse_many(sentences))["f1"]
    model = DiscriminativeParser(max_iter=4, random_state=0).fit(train)
    f1 = model.score(sentences, test)
    assert pcfg_f1 > 0.9 and f1 > 0.9
    model2 = pickle.loads(pickle.dumps(model))
    assert model2.predict(sentences[:3]) == model.predict(sentences[:3])
    with pytest.raises(ValueError, match="learner"):
        DiscriminativeParser(learner="crf").fit(train)
    with pytest.raises(ValueError, match="differs"):
        DiscriminativeParser().fit([["a"]], train[:1])


def test_pcfg_on_ptb_sample_round_trip_and_coverage():
    from linclass.datasets import load_ptb_sample
    try:
        test = load_ptb_sample("test")
    except FileNotFoundError as exc:
        pytest.skip("PTB sample not available: %s" % exc)
    for tree in test[:60]:
        clean = tree.strip_function_tags().remove_empty_elements()
        assert debinarize(treebank_to_cnf(tree, vertical_markov=2)) == clean
    grammar = PCFG.from_treebank(test[:150])
    parsed = grammar.parse_many([[w for w, t in tr.pos() if t != "-NONE-"]
                                 for tr in test[150:170]])
    assert all(p is not None for p in parsed)


def _brute_force_slack(structure, words, gold, trees, scores, gold_score, node_sets=None):
    """max over trees of loss * (1 + score - gold score); the loss is the size of the
    symmetric difference of the node sets (a tree's nodes are distinct)."""
    if node_sets is None:
        node_sets = [set(structure._node_set(t)) for t in trees]
    g = set(structure._node_set(gold))
    return max(len(g ^ nodes) * (1 + s - gold_score) for nodes, s in zip(node_sets, scores))


def test_slack_rescaled_decode_equals_brute_force():
    """Exact slack rescaling on trees (CKY with the bracket-loss count as an extra
    dimension) against enumeration of every tree, and the SSVM accepts it."""
    from linclass.structured import StructuredSVM
    from linclass.structured.learners import supports_slack_rescaling
    n_checked = 0
    for seed in range(4):
        structure, w = _random_structure(seed)
        assert supports_slack_rescaling(structure)
        for words in (["x"], ["x", "y"], ["z", "x", "y"], ["y", "new", "z", "y"]):
            trees = list(all_structure_trees(structure, words))
            base = np.array([structure.score(w, words, t) for t in trees])
            node_sets = [set(structure._node_set(t)) for t in trees]
            for scale in (1.0, 0.05):            # small weights: the loss factor matters
                v = w * scale
                for g in range(0, len(trees), max(1, len(trees) // 3)):
                    gold = trees[g]
                    got = structure.slack_rescaled_decode(v, words, gold)
                    value = structure.loss(gold, got) * (
                        1 + structure.score(v, words, got) - scale * base[g])
                    assert value == pytest.approx(_brute_force_slack(
                        structure, words, gold, trees, scale * base, scale * base[g],
                        node_sets), abs=1e-9)
                    n_checked += 1
    assert n_checked > 40
    # the structural SVM with slack rescaling trains on trees (it refused before)
    structure, _ = _random_structure(1)
    sentences = [["x", "y"], ["z", "x", "y"], ["y", "z"]]
    gold = [next(iter(all_structure_trees(structure, s))) for s in sentences]
    svm = StructuredSVM(structure, C=10.0, rescaling="slack", max_iter=50).fit(sentences, gold)
    assert [structure.decode(svm.coef_, s) for s in sentences] == gold


def test_slack_rescaled_decode_of_span_features_equals_brute_force():
    from linclass.demo.parsing import make_toy_treebank
    from linclass.parsing import SpanGrammarStructure
    trees = make_toy_treebank(40, max_words=5, random_state=1)
    pcfg = PCFG.from_treebank(trees, horizontal_markov=1, vertical_markov=2)
    structure = SpanGrammarStructure(pcfg, hash_bits=5)
    rng = np.random.default_rng(0)
    n_checked = 0
    for tree in trees[:12]:
        gold = treebank_to_cnf(tree, horizontal_markov=1, vertical_markov=2)
        words = gold.leaves()
        if len(words) > 4:
            continue
        space = list(all_structure_trees(structure, words))
        w = rng.normal(scale=0.3, size=structure.n_features)
        got = structure.slack_rescaled_decode(w, words, gold)
        gold_score = structure.score(w, words, gold)
        value = structure.loss(gold, got) * (1 + structure.score(w, words, got) - gold_score)
        scores = [structure.score(w, words, t) for t in space]
        assert value == pytest.approx(_brute_force_slack(structure, words, gold, space, scores,
                                                         gold_score), abs=1e-9)
        n_checked += 1
    assert n_checked >= 4
