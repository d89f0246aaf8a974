"""``linclass demo`` parsing part: a toy English treebank sampled from a PCFG written
here, a treebank PCFG and a discriminative CKY parser trained on it."""
import time

import numpy as np

# A small English-like grammar with PP-attachment ambiguity, adjectives,
# relative clauses and intransitive verbs; n-ary rules (NP -> DT JJ NN) so that
# binarisation matters.  Rules: (lhs, [(rhs, prob), ...]); words lower case.
TOY_GRAMMAR = [
    ("S", [(("NP", "VP"), 0.85), (("NP", "VP", "."), 0.15)]),
    ("NP", [(("DT", "NN"), 0.35), (("DT", "JJ", "NN"), 0.15), (("NNP",), 0.2),
            (("NP", "PP"), 0.15), (("DT", "NN", "SBAR"), 0.05), (("PRP",), 0.1)]),
    ("VP", [(("VBD", "NP"), 0.4), (("VBD",), 0.15), (("VP", "PP"), 0.2),
            (("VBD", "NP", "PP"), 0.15), (("VBD", "ADJP"), 0.1)]),
    ("PP", [(("IN", "NP"), 1.0)]),
    ("SBAR", [(("WDT", "VP"), 1.0)]),
    ("ADJP", [(("JJ",), 0.7), (("RB", "JJ"), 0.3)]),
]
TOY_LEXICON = {
    "DT": ["the", "a", "every", "this"],
    "NN": ["dog", "cat", "man", "telescope", "park", "garden", "student", "book", "city",
           "river", "teacher", "window"],
    "JJ": ["big", "small", "old", "happy", "green", "quiet"],
    "NNP": ["alice", "bob", "paris", "london"],
    "PRP": ["she", "he", "they"],
    "VBD": ["saw", "liked", "walked", "found", "read", "slept", "visited"],
    "IN": ["with", "in", "near", "under"],
    "WDT": ["that", "which"],
    "RB": ["very", "quite"],
    ".": ["."],
}


def make_toy_treebank(n_sentences=200, *, max_words=12, random_state=0):
    """Sample trees from :data:`TOY_GRAMMAR` (uniform words per tag).

    Sentences longer than ``max_words`` or deeper than 12 levels are
    resampled.  Returns a list of :class:`~linclass.datasets.trees.Tree`.
    """
    from ..datasets.trees import Tree
    rng = np.random.default_rng(random_state)
    rules = dict(TOY_GRAMMAR)

    def sample(label, depth):
        if label in TOY_LEXICON:
            words = TOY_LEXICON[label]
            return Tree(label, [words[rng.integers(len(words))]])
        if depth > 12:
            raise RecursionError
        options = rules[label]
        probs = np.array([p for _, p in options])
        rhs = options[rng.choice(len(options), p=probs / probs.sum())][0]
        return Tree(label, [sample(child, depth + 1) for child in rhs])

    trees = []
    while len(trees) < n_sentences:
        try:
            tree = sample("S", 0)
        except RecursionError:
            continue
        if len(tree.leaves()) <= max_words:
            trees.append(tree)
    return trees


def demo_parsing(quick=False):
    """Train a treebank PCFG and a discriminative CKY parser (perceptron) on a
    toy treebank sampled here; print PARSEVAL F1 and exact match on held-out trees."""
    from ..metrics.parsing import parseval
    from ..parsing.parsers import PCFG, DiscriminativeParser

    n_train, n_test = (150, 50) if quick else (600, 200)
    trees = make_toy_treebank(n_train + n_test, random_state=0)
    train, test = trees[:n_train], trees[n_train:]
    sentences = [t.leaves() for t in test]
    print("== Parsing: toy English treebank sampled from a PCFG (%d train / %d test trees, "
          "<= 12 words)" % (n_train, n_test))
    t0 = time.perf_counter()
    pcfg = PCFG.from_treebank(train, horizontal_markov=1)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    parsed = pcfg.parse_many(sentences)
    parse_s = time.perf_counter() - t0
    res = parseval(test, parsed)
    print("   PCFG (relative frequencies, h=1 Markovisation): %d rules, estimated in %.2fs, "
          "parsed in %.2fs" % (pcfg.n_rules, fit_s, parse_s))
    print("   %-32s F1 %.4f  P %.4f  R %.4f  exact %.3f"
          % ("PCFG Viterbi-CKY", res["f1"], res["precision"], res["recall"],
             res["exact_match"]))
    example = sentences[0]
    tree, log_prob = pcfg.parse(example, return_log_prob=True)
    print("   e.g. %r -> %s (log p = %.3f)" % (" ".join(example), tree, log_prob))
    model = DiscriminativeParser(learner="perceptron", max_iter=3 if quick else 5,
                                 random_state=0)
    t0 = time.perf_counter()
    model.fit(train)
    fit_s = time.perf_counter() - t0
    res = parseval(test, model.predict(sentences))
    print("   %-32s F1 %.4f  P %.4f  R %.4f  exact %.3f  (%d features, %d epochs, %.2fs)"
          % ("discriminative (avg. perceptron)", res["f1"], res["precision"], res["recall"],
             res["exact_match"], model.structure_.n_features, model.learner_.n_iter_, fit_s))
    return res
