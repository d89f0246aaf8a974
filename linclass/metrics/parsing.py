"""PARSEVAL: labelled bracket precision, recall and F1 of constituency parses,
with the conventions of ``evalb`` and its ``COLLINS.prm`` parameter file.

Conventions (``COLLINS.prm``)
-----------------------------
* Brackets are the constituents above the preterminals (part-of-speech nodes
  are not brackets; they give the tagging accuracy instead).
* Labels are compared after removing function tags and indices
  (``NP-SBJ-1`` -> ``NP``; ``-NONE-``, ``-LRB-`` ... kept), as evalb does.
* ``DELETE_LABEL TOP -NONE- , : `` '' .``: words whose gold tag is one of the
  punctuation tags ``, : `` '' .`` or ``-NONE-`` are removed before spans are
  computed, so a bracket's span counts only the remaining words; the
  root-only labels ``TOP``, ``ROOT`` and the unlabeled root ``""`` are not
  brackets.  The constituent just below the root (usually ``S``) **is** a
  bracket, as in evalb.  A bracket whose words are all deleted is dropped.
* ``EQ_LABEL ADVP PRT``: the two labels count as equal.
* Brackets are multisets: two identical (label, span) brackets in the gold
  tree must both be matched.
* Scores are corpus-level (micro-averaged) over all sentences, as evalb's
  summary; ``max_length`` restricts to sentences of at most that many words
  (evalb's ``CUTOFF_LEN 40`` section), counted without deleted words.
* Exact match: every bracket matched in both directions (evalb's "complete
  match").  The gold and predicted trees must have the same words
  (otherwise ``ValueError``, evalb's "length/word mismatch").

References
----------
E. Black et al. A procedure for quantitatively comparing the syntactic
coverage of English grammars. DARPA Speech and Natural Language Workshop,
1991 (PARSEVAL).
S. Sekine and M. Collins. evalb (1997), ``COLLINS.prm``.
"""
from collections import Counter

from ..datasets.trees import Tree, strip_label

__all__ = ["COLLINS_DELETE_LABELS", "labeled_brackets", "parseval_counts", "parseval"]

COLLINS_DELETE_LABELS = frozenset({",", ":", "``", "''", ".", "-NONE-"})
ROOT_LABELS = frozenset({"TOP", "ROOT", ""})
COLLINS_EQUIVALENT_LABELS = {"PRT": "ADVP"}


def _check_tree(tree, what):
    if not isinstance(tree, Tree):
        raise ValueError("%s must be a linclass Tree, got %s" % (what, type(tree).__name__))


def labeled_brackets(tree, *, gold_tags=None, delete_labels=COLLINS_DELETE_LABELS,
                     root_labels=ROOT_LABELS, equivalent_labels=None):
    """The evalb brackets of a tree as a Counter of (label, start, end).

    Parameters
    ----------
    tree : Tree
    gold_tags : list of str, optional
        The gold tags of the words; words whose *gold* tag is in
        ``delete_labels`` are deleted (evalb decides on the gold tree).
        Default: the tree's own tags.
    delete_labels : set of str
    root_labels : set of str
        Labels that are never brackets (the artificial root).
    equivalent_labels : dict, optional
        Label rewrites (default ``{"PRT": "ADVP"}``, ``EQ_LABEL ADVP PRT``).

    Returns
    -------
    brackets : Counter of (str, int, int)
    n_words : int
        Words left after deletion.
    """
    _check_tree(tree, "tree")
    equivalent = COLLINS_EQUIVALENT_LABELS if equivalent_labels is None else equivalent_labels
    pos = tree.pos()
    tags = [t for _, t in pos] if gold_tags is None else list(gold_tags)
    if len(tags) != len(pos):
        raise ValueError("the tree has %d words but %d gold tags were given"
                         % (len(pos), len(tags)))
    # position of each word after deleting punctuation / empty elements
    kept_before = [0]
    for tag in tags:
        kept_before.append(kept_before[-1] + (0 if strip_label(tag) in delete_labels else 1))
    out = Counter()
    for label, start, end in tree.labeled_spans():
        label = strip_label(label)
        if label in root_labels:
            continue
        s, e = kept_before[start], kept_before[end]
        if s == e:
            continue
        out[(equivalent.get(label, label), s, e)] += 1
    return out, kept_before[-1]


def parseval_counts(gold, predicted, **kwargs):
    """Bracket counts of one sentence: dict(matched, gold, predicted, tags_correct,
    n_words, exact).  Keyword arguments go to :func:`labeled_brackets`."""
    _check_tree(gold, "gold")
    _check_tree(predicted, "predicted")
    # -NONE- elements are deleted words (DELETE_LABEL -NONE-): drop them and the
    # constituents they leave empty before comparing the words
    gold, predicted = gold.remove_empty_elements(), predicted.remove_empty_elements()
    if gold is None or predicted is None:
        raise ValueError("a tree holds only empty (-NONE-) elements")
    gold_pos = gold.pos()
    pred_pos = predicted.pos()
    gold_words = [w for w, _ in gold_pos]
    pred_words = [w for w, _ in pred_pos]
    if gold_words != pred_words:
        raise ValueError("gold and predicted trees have different words (%d vs %d): %r / %r"
                         % (len(gold_words), len(pred_words), " ".join(gold_words)[:60],
                            " ".join(pred_words)[:60]))
    gold_tags = [t for _, t in gold_pos]
    g, n_words = labeled_brackets(gold, gold_tags=gold_tags, **kwargs)
    p, _ = labeled_brackets(predicted, gold_tags=gold_tags, **kwargs)
    matched = sum((g & p).values())
    delete = kwargs.get("delete_labels", COLLINS_DELETE_LABELS)
    kept = [k for k, t in enumerate(gold_tags) if strip_label(t) not in delete]
    tags_correct = sum(strip_label(gold_tags[k]) == strip_label(pred_pos[k][1]) for k in kept)
    n_gold, n_pred = sum(g.values()), sum(p.values())
    return {"matched": matched, "gold": n_gold, "predicted": n_pred,
            "tags_correct": tags_correct, "n_words": n_words,
            "exact": matched == n_gold == n_pred}


def parseval(gold_trees, predicted_trees, *, max_length=None, **kwargs):
    """Corpus PARSEVAL scores with evalb's COLLINS.prm conventions (module docs).

    Parameters
    ----------
    gold_trees, predicted_trees : sequences of Tree
        A predicted entry may be None (no parse): the sentence counts with no
        predicted bracket (all its gold brackets missed; evalb instead skips
        such sentences).
    max_length : int, optional
        Only sentences with at most this many words (after deletion).

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (fractions in [0, 1]; 0 when
        undefined), ``exact_match`` (fraction of sentences), ``tagging_accuracy``,
        ``n_sentences``, ``matched``, ``gold``, ``predicted``.
    """
    gold_trees = list(gold_trees)
    predicted_trees = list(predicted_trees)
    if len(gold_trees) != len(predicted_trees):
        raise ValueError("%d gold trees but %d predicted trees"
                         % (len(gold_trees), len(predicted_trees)))
    totals = Counter()
    n_sentences = n_exact = 0
    for k, (g, p) in enumerate(zip(gold_trees, predicted_trees)):
        if p is None:
            _check_tree(g, "gold tree %d" % k)
            brackets, n_words = labeled_brackets(g, **kwargs)
            counts = {"matched": 0, "gold": sum(brackets.values()), "predicted": 0,
                      "tags_correct": 0, "n_words": n_words, "exact": False}
        else:
            try:
                counts = parseval_counts(g, p, **kwargs)
            except ValueError as exc:
                raise ValueError("sentence %d: %s" % (k, exc)) from None
        if max_length is not None and counts["n_words"] > max_length:
            continue
        n_sentences += 1
        n_exact += bool(counts["exact"])
        for key in ("matched", "gold", "predicted", "tags_correct", "n_words"):
            totals[key] += counts[key]
    precision = totals["matched"] / totals["predicted"] if totals["predicted"] else 0.0
    recall = totals["matched"] / totals["gold"] if totals["gold"] else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1,
            "exact_match": n_exact / n_sentences if n_sentences else 0.0,
            "tagging_accuracy": (totals["tags_correct"] / totals["n_words"]
                                 if totals["n_words"] else 0.0),
            "n_sentences": n_sentences, "matched": totals["matched"],
            "gold": totals["gold"], "predicted": totals["predicted"]}
