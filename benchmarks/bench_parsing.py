"""Constituency parsing: linclass Viterbi-CKY vs NLTK ``ViterbiParser`` on the PTB WSJ sample.

Data: ``<data>/ptb_wsj_sample`` (train wsj_0001-0159, test wsj_0180-0199) via
:func:`linclass.datasets.load_ptb_sample`.

Cases
-----
* ``PCFG Viterbi (<= 12 words)``: the PCFG estimated from the training trees
  (``PCFG.from_treebank``: h=1 Markovisation, no parent annotation, rare words
  (count 1) as signatures) is handed to NLTK as an ``nltk.PCFG``
  (``PCFG.to_nltk()``), and both parse the test sentences of at most 12 words
  (with ``--quick``: the first 6 of them) mapped to the grammar's terminals.
  Quality: whether the best-parse log-probabilities agree (max abs difference).
  NLTK is timed once (it takes seconds per sentence); linclass is the median
  of repeats.
* ``PCFG all test sentences``: linclass alone parses every test sentence
  (up to 54 words); total and per-sentence time, PARSEVAL F1 (evalb
  COLLINS.prm conventions).  The same with parent annotation (v=2).
* ``discriminative CKY vs PCFG``: ``DiscriminativeParser(features="spans")``
  (the h=1 v=2 PCFG's rule and lexical log-probabilities as two real-valued
  features, rule indicators, hashed span features; Hall, Durrett and Klein
  2014) trained by the averaged perceptron started from the PCFG (the
  log-probability weights fixed at ``PCFG_WEIGHT``, every other weight 0, so
  the model before the first update is the PCFG and a unit update is worth
  ``1 / PCFG_WEIGHT`` nats of its score), ``EPOCHS`` epochs shuffled with
  seed 0, on all 3,396 training trees (``--quick``: the first 300, 1 epoch),
  exact CKY in training and at test time, against the PCFG h=1 v=2 of the
  same run; F1 and parse time on all 245 test sentences.  ``PCFG_WEIGHT``,
  ``EPOCHS`` and ``HASH_BITS`` were chosen on development trees taken from
  the training split -- PCFG and perceptron on its first 1,500 trees
  (wsj_0001-0084), F1 on its last 300 (from wsj_0141 on) -- never on the
  test part.  Dev F1: PCFG 72.14;
  learning rate 0.05: 75.86 / 76.11 after epochs 1 / 2; 0.2: 78.04 / 78.98;
  with a span-shape template (dropped): lr 0.2 77.61 / 78.30, lr 0.5 77.62,
  lr 1.0 76.92 after epoch 1; 2^17 instead of 2^15 rows 77.67 (lr 0.2, epoch
  1, with span shape).  Search is exact: the beam of 20 upper nodes per cell
  used before cost the PCFG 8 points of dev F1 (63.88) through search errors,
  and exact CKY is only about twice as slow.  The split is the sample's fixed
  one (train wsj_0001-0159, test wsj_0180-0199).
"""
import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.datasets import load_ptb_sample  # noqa: E402
from linclass.metrics.parsing import parseval  # noqa: E402
from linclass.parsing import PCFG, DiscriminativeParser  # noqa: E402
from linclass.parsing.spans import N_TEMPLATES  # noqa: E402

# chosen on development trees of the training split (module docs), never on test
PCFG_WEIGHT = 5.0      # learning rate 1 / PCFG_WEIGHT relative to the PCFG
EPOCHS = 2
HASH_BITS = 15

NOTES = [
    "PCFG: relative frequencies from the 3,396 training trees after function-tag/-NONE- "
    "removal, unary-chain collapse, right binarisation with h=1 Markovisation; rare words "
    "(seen once) replaced by Berkeley-style signatures.",
    "NLTK ViterbiParser(max_time=None) gets the identical grammar (PCFG.to_nltk()) and the "
    "sentence already mapped to grammar terminals; it is timed once per sentence "
    "(too slow to repeat).",
    "F1: PARSEVAL labelled brackets, evalb COLLINS.prm conventions (punctuation deleted, "
    "ADVP=PRT, root label ignored), all 245 test sentences.",
]


def _words(tree):
    return [w for w, t in tree.pos() if t != "-NONE-"]


def _f1_string(res):
    return "F1 %.2f (P %.2f R %.2f, exact %.1f%%)" % (100 * res["f1"], 100 * res["precision"],
                                                      100 * res["recall"],
                                                      100 * res["exact_match"])


def run(quick, data_dir):
    data_dir = pathlib.Path(data_dir)
    train = load_ptb_sample("train", data_home=data_dir)
    test = load_ptb_sample("test", data_home=data_dir)
    sentences = [_words(t) for t in test]
    repeat = _harness.n_repeats(quick)
    rows = []

    grammar = PCFG.from_treebank(train, horizontal_markov=1, vertical_markov=1)
    short = [s for s in sentences if len(s) <= 12]
    if quick:
        short = short[:6]
    nltk = _harness.import_peer("nltk")
    lin_s, lin_results = _harness.median_time(
        lambda: [grammar.parse(s, return_log_prob=True) for s in short], repeat)
    if nltk is not None:
        parser = nltk.ViterbiParser(grammar.to_nltk(), max_time=None)
        peer_s = 0.0
        diffs = []
        for s, (_, score) in zip(short, lin_results):
            terminals = grammar.terminals(s)
            t0 = time.perf_counter()
            ref = list(parser.parse(terminals))
            peer_s += time.perf_counter() - t0
            ref_score = math.log(ref[0].prob()) if ref else -np.inf
            diffs.append(abs(ref_score - score) if np.isfinite(score) else
                         (0.0 if ref_score == score else np.inf))
        rows.append(_harness.make_row(
            "PCFG Viterbi-CKY, %d sentences <= 12 words" % len(short), "ptb_wsj_sample test",
            "nltk ViterbiParser", peer_s, lin_s,
            peer_quality="same grammar",
            linclass_quality="max |log p - log p_nltk| = %.1e" % max(diffs)))
    else:
        rows.append(_harness.make_row(
            "PCFG Viterbi-CKY, %d sentences <= 12 words" % len(short), "ptb_wsj_sample test",
            None, None, lin_s, note="NLTK not installed"))

    pcfg_results = {}
    for v in (1, 2):
        g = grammar if v == 1 else PCFG.from_treebank(train, horizontal_markov=1,
                                                      vertical_markov=2)
        lin_s, parsed = _harness.median_time(lambda: g.parse_many(sentences), 1)
        res = parseval(test, parsed)
        pcfg_results[v] = (lin_s, res)
        rows.append(_harness.make_row(
            "PCFG h=1 v=%d, all %d test sentences (<= %d words)"
            % (v, len(sentences), max(map(len, sentences))), "ptb_wsj_sample test",
            None, None, lin_s, linclass_quality=_f1_string(res),
            note="%.1f ms per sentence; %d symbols, %d rules; %d sentences without parse"
                 % (1000 * lin_s / len(sentences), len(g.symbols), g.n_rules,
                    sum(p is None for p in parsed))))

    # discriminative parser: the h=1 v=2 PCFG's log-probabilities (weight fixed at
    # PCFG_WEIGHT) + rule indicators + hashed span features, averaged perceptron
    # started from the PCFG, exact CKY in training and at test time; trained on every
    # training tree (--quick: the first 300, 1 epoch)
    n_train, epochs = (300, 1) if quick else (len(train), EPOCHS)
    model = DiscriminativeParser(learner="perceptron", features="spans", max_iter=epochs,
                                 horizontal_markov=1, vertical_markov=2, beam_size=0,
                                 pcfg_weight=PCFG_WEIGHT, hash_bits=HASH_BITS,
                                 random_state=0)
    t0 = time.perf_counter()
    model.fit(train[:n_train])
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    parsed = model.predict(sentences)
    pred_s = time.perf_counter() - t0
    res = parseval(test, parsed)
    pcfg_v2 = pcfg_results[2]
    rows.append(_harness.make_row(
        "discriminative CKY vs PCFG h=1 v=2 (avg. perceptron from the PCFG, %d epochs, "
        "%d trees, exact CKY)" % (epochs, n_train), "ptb_wsj_sample test",
        "PCFG h=1 v=2 (linclass)", pcfg_v2[0], pred_s,
        peer_quality=_f1_string(pcfg_v2[1]), linclass_quality=_f1_string(res),
        note="times are parse times of the 245 test sentences: PCFG %.1f ms/sentence, "
             "discriminative %.1f ms/sentence (ratio = PCFG time / discriminative time); "
             "features: PCFG rule and lexical log-probabilities (weight fixed at %g), %d "
             "rule indicators, hashed span features (2^%d rows x %d labels, %d templates); "
             "fit %.0fs (%s); %d test sentences without parse"
             % (1000 * pcfg_v2[0] / len(sentences), 1000 * pred_s / len(sentences),
                PCFG_WEIGHT, model.structure_._offset_span - 2, model.hash_bits,
                len(model.structure_.coarse_labels), N_TEMPLATES, fit_s,
                ", ".join("epoch %d: %d mistakes" % (h["iteration"], h["n_mistakes"])
                          for h in model.learner_.history_),
                sum(p is None for p in parsed))))
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    rows = run(quick, _harness.default_data_dir())
    print(_harness.format_table(rows))
    for n in NOTES:
        print("-", n)
    for r in rows:
        if r.get("note"):
            print("- %s: %s" % (r["task"], r["note"]))
