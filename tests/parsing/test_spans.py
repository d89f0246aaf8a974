"""SpanGrammarStructure (PCFG log-prob + rule + span features), the CKY span scores and
beam, and save/load of the parsers."""
import numpy as np
import pytest

import linclass
from linclass._core._cky import cky_viterbi
from linclass.demo.parsing import make_toy_treebank
from linclass.parsing import (PCFG, DiscriminativeParser, SpanGrammarStructure,
                              treebank_to_cnf)
from linclass.parsing.grammar import cnf_tree_nodes
from linclass.parsing.spans import N_TEMPLATES, coarse_label

from .test_parsing import all_structure_trees


@pytest.fixture(scope="module")
def toy():
    trees = make_toy_treebank(80, max_words=7, random_state=3)
    cnf = [treebank_to_cnf(t, horizontal_markov=1, vertical_markov=2) for t in trees]
    pcfg = PCFG.from_treebank(trees, horizontal_markov=1, vertical_markov=2)
    return trees, cnf, pcfg


def _dense(structure, x, y):
    idx, val = structure.joint_feature(x, y)
    out = np.zeros(structure.n_features)
    np.add.at(out, idx, val)
    return out


@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_feature_vector_is_the_sum_over_rules_and_spans(toy, scale):
    trees, cnf, pcfg = toy
    s = SpanGrammarStructure(pcfg, hash_bits=6, logprob_scale=scale)
    n_coarse = len(s.coarse_labels)
    for y in cnf[:15]:
        x = y.leaves()
        px = s.prepare(x)
        phi = _dense(s, x, y)
        nodes, _ = cnf_tree_nodes(y, root_label="ROOT")
        expected = np.zeros(s.n_features)
        n = len(x)
        for kind, label, start, end, rhs in nodes:
            if kind == 0:
                expected[0] += pcfg._rule_logprob[("ROOT", rhs, False)]
                expected[s._offset_root + s.root_index[s.symbol_index[rhs[0]]]] += 1
                continue
            if kind == 1:
                expected[0] += pcfg._rule_logprob[(label, rhs, False)]
                k = s.unary_index[(s.symbol_index[label], s.symbol_index[rhs[0]])]
                expected[s._offset_unary + k] += 1
                continue
            if kind == 2:
                expected[0] += pcfg._rule_logprob[(label, rhs, False)]
                k = s.binary_index[tuple(s.symbol_index[v] for v in (label,) + rhs)]
                expected[s._offset_binary + k] += 1
            else:
                expected[1] += pcfg._lexicon[pcfg.terminals(x)[start]][1][
                    list(pcfg._lexicon[pcfg.terminals(x)[start]][0]).index(
                        s.symbol_index[label])]
            cell = start * n - start * (start - 1) // 2 + (end - start - 1)
            c = s.coarse_labels.index(coarse_label(label))
            for t in range(N_TEMPLATES):
                expected[s._offset_span + px.templates[cell, t] * n_coarse + c] += 1
        expected[:2] *= scale
        np.testing.assert_allclose(phi, expected, atol=1e-12)
        # with weight 1/scale on the two log-prob features the score is the PCFG log-probability
        e = np.zeros(s.n_features)
        e[:2] = 1 / scale
        assert e @ phi == pytest.approx(pcfg.log_prob(y), abs=1e-9)
        # the decoder's score of its tree is w . Phi of that tree (any w)
        w = np.random.default_rng(len(x)).normal(size=s.n_features)
        tree, score = s.decode_with_score(w, x)
        assert score == pytest.approx(w @ _dense(s, x, tree), abs=1e-9)


def test_decode_equals_brute_force_and_the_kernel_score(toy):
    trees, cnf, pcfg = toy
    s = SpanGrammarStructure(pcfg, hash_bits=5)
    rng = np.random.default_rng(0)
    for y in [t for t in cnf if len(t.leaves()) <= 3][:4]:
        x = y.leaves()
        w = rng.normal(size=s.n_features)
        best, score = s.decode_with_score(w, x)
        assert _dense(s, x, best) @ w == pytest.approx(score, abs=1e-9)
        all_scores = [_dense(s, x, t) @ w for t in all_structure_trees(s, x)]
        assert score == pytest.approx(max(all_scores), abs=1e-9)
        aug = s.loss_augmented_decode(w, x, y)
        assert _dense(s, x, aug) @ w + s.loss(y, aug) >= _dense(s, x, y) @ w - 1e-9
    # the PCFG's weights give the PCFG's parse score
    e = np.zeros(s.n_features)
    e[:2] = 1
    for t in trees[:10]:
        x = treebank_to_cnf(t).leaves()
        _, lp = pcfg.parse(x, return_log_prob=True)
        assert s.decode_with_score(e, x)[1] == pytest.approx(lp, abs=1e-9)


def test_beam_keeps_the_best_nodes_and_scores_its_tree(toy):
    trees, cnf, pcfg = toy
    exact = SpanGrammarStructure(pcfg, hash_bits=5)
    rng = np.random.default_rng(1)
    for beam in (1, 2, 4):
        s = SpanGrammarStructure(pcfg, hash_bits=5, beam_size=beam)
        for y in cnf[:10]:
            x = y.leaves()
            w = rng.normal(size=s.n_features)
            tree, score = s.decode_with_score(w, x)
            assert _dense(s, x, tree) @ w == pytest.approx(score, abs=1e-9)
            assert score <= exact.decode_with_score(w, x)[1] + 1e-9
    big = SpanGrammarStructure(pcfg, hash_bits=5, beam_size=10 ** 6)
    w = rng.normal(size=big.n_features)
    for y in cnf[:5]:
        assert big.decode(w, y.leaves()) == exact.decode(w, y.leaves())


def test_cky_span_score_and_beam_checks():
    lexical = np.zeros((2, 2))
    args = dict(lexical=lexical, binary_left_ptr=np.array([0, 1, 1], dtype=np.int32),
                binary_left=np.array([0], dtype=np.int32),
                binary_right=np.array([0], dtype=np.int32),
                binary_parent=np.array([1], dtype=np.int32),
                binary_score=np.array([0.5]), unary_child_ptr=np.zeros(3, dtype=np.int32),
                unary_child=np.zeros(0, dtype=np.int32), unary_parent=np.zeros(0, dtype=np.int32),
                unary_score=np.zeros(0), root_score=np.array([-np.inf, 0.0]))
    score, _ = cky_viterbi(**args)
    assert score == 0.5
    spans = np.zeros((3, 2))
    spans[1, 1] = 2.0       # cell (0, 2), symbol 1
    spans[0, 0] = -1.0      # cell (0, 1), symbol 0
    score, _ = cky_viterbi(**args, span_score=spans)
    assert score == pytest.approx(1.5)
    with pytest.raises(ValueError, match="span_score"):
        cky_viterbi(**args, span_score=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="beam_size"):
        cky_viterbi(**args, beam_size=-1)


def test_parsers_save_load_round_trip(toy, tmp_path):
    trees, cnf, pcfg = toy
    sentences = [treebank_to_cnf(t).leaves() for t in make_toy_treebank(
        15, max_words=8, random_state=9)]
    path = pcfg.save(tmp_path / "pcfg.npz")
    pcfg2 = linclass.load(path)
    assert pcfg2.parse_many(sentences, return_log_prob=True) == \
        pcfg.parse_many(sentences, return_log_prob=True)
    configs = [dict(features="spans"), dict(features="rules"),
               dict(features="spans", pcfg_weight=5.0, logprob_scale=0.01, test_beam_size=0)]
    for config in configs:
        features = config["features"]
        model = DiscriminativeParser(max_iter=2, vertical_markov=2, hash_bits=6, beam_size=3,
                                     random_state=0, **config).fit(trees)
        path = model.save(tmp_path / ("parser_%s_%d.npz" % (features, len(config))))
        model2 = linclass.load(path)
        assert type(model2) is DiscriminativeParser
        assert model2.get_params() == model.get_params()
        np.testing.assert_array_equal(model2.coef_, model.coef_)
        assert model2.predict(sentences) == model.predict(sentences)
        assert model2.predict(sentences, cnf=True) == model.predict(sentences, cnf=True)


def test_span_parser_learns_and_validates(toy):
    from linclass.metrics.parsing import parseval
    trees = make_toy_treebank(200, random_state=2)
    train, test = trees[:150], trees[150:]
    sentences = [t.leaves() for t in test]
    model = DiscriminativeParser(max_iter=3, hash_bits=8, random_state=0).fit(train)
    assert parseval(test, model.predict(sentences))["f1"] > 0.9
    with pytest.raises(ValueError, match="features"):
        DiscriminativeParser(features="lexical").fit(train)
    with pytest.raises(ValueError, match="hash_bits"):
        SpanGrammarStructure(PCFG.from_treebank(train), hash_bits=40)
    s = SpanGrammarStructure(PCFG.from_treebank(train), hash_bits=6)
    with pytest.raises(ValueError, match="w must have shape"):
        s.decode(np.zeros(3), sentences[0])
    with pytest.raises(ValueError, match="NaN"):
        s.decode(np.full(s.n_features, np.nan), sentences[0])


def test_exact_test_search_and_pcfg_start(toy):
    trees, cnf, pcfg = toy
    sentences = [y.leaves() for y in cnf[:12]]
    model = DiscriminativeParser(max_iter=1, vertical_markov=2, hash_bits=6, beam_size=2,
                                 test_beam_size=0, random_state=0).fit(trees)
    # exact search at test time: the parses are the exhaustive argmax of w . Phi
    exact = SpanGrammarStructure(model.pcfg_, hash_bits=6)
    assert model.predict(sentences, cnf=True) == [exact.decode(model.coef_, x)
                                                  for x in sentences]
    model.set_params(test_beam_size=2)
    beam = SpanGrammarStructure(model.pcfg_, hash_bits=6, beam_size=2)
    assert model.predict(sentences, cnf=True) == [beam.decode(model.coef_, x)
                                                  for x in sentences]
    # starting from the PCFG: the log-prob weights stay at pcfg_weight (scaled features)
    m = DiscriminativeParser(max_iter=1, vertical_markov=2, hash_bits=6, pcfg_weight=4.0,
                             logprob_scale=1e-4, random_state=0).fit(trees)
    np.testing.assert_allclose(m.coef_[:2] * 1e-4, 4.0, rtol=1e-12)
    with pytest.raises(ValueError, match="pcfg_weight"):
        DiscriminativeParser(pcfg_weight=-1.0).fit(trees)
    for bad in (0.0, 0.7, -0.1):
        with pytest.raises(ValueError, match="validation_fraction"):
            DiscriminativeParser(validation_fraction=bad).fit(trees)
    with pytest.raises(ValueError, match="validation_fraction needs"):
        DiscriminativeParser(validation_fraction=0.2, features="rules").fit(trees)
    with pytest.raises(ValueError, match="leaves no training tree"):
        DiscriminativeParser(validation_fraction=0.5).fit(trees[:1])
    with pytest.raises(ValueError, match="logprob_scale"):
        SpanGrammarStructure(pcfg, logprob_scale=0.0)
    with pytest.raises(ValueError, match="test_beam_size"):
        DiscriminativeParser(test_beam_size=-2).fit(trees)


def test_pcfg_start_is_the_pcfg_and_validation_picks_the_epoch(toy):
    """Epoch 0 of the span perceptron is the PCFG estimated on the training part;
    the kept weights are the averaged weights of the epoch with the best held-out F1."""
    from linclass.metrics.parsing import parseval
    from linclass.parsing import NoParseError, debinarize
    trees = make_toy_treebank(120, max_words=9, random_state=5)
    model = DiscriminativeParser(max_iter=3, hash_bits=8, pcfg_weight=2.0,
                                 validation_fraction=0.25, random_state=0).fit(trees)
    n_val = 30
    train, held = trees[:-n_val], trees[-n_val:]
    words = [treebank_to_cnf(t).leaves() for t in held]
    pcfg = PCFG.from_treebank(train, horizontal_markov=1, vertical_markov=2)
    assert model.pcfg_.n_rules == pcfg.n_rules
    s = SpanGrammarStructure(pcfg, hash_bits=8)
    w = np.zeros(s.n_features)
    w[:2] = 2.0
    n_same = 0
    predicted = []
    for x in words:
        ref, log_prob = pcfg.parse(x, cnf=True, return_log_prob=True)
        try:
            tree, score = s.decode_with_score(w, x)
        except NoParseError:
            predicted.append(None)
            continue
        predicted.append(debinarize(tree))
        # the PCFG may chain unary rules over one span, the span parser may not
        assert score / 2.0 <= log_prob + 1e-9
        if ref == tree:
            n_same += 1
            assert score / 2.0 == pytest.approx(log_prob, abs=1e-9)
    assert n_same >= len(words) - 3
    pcfg_f1 = parseval(held, predicted)["f1"]
    assert model.validation_scores_[0] == pcfg_f1
    assert len(model.validation_scores_) == model.learner_.n_iter_ + 1
    assert model.validation_scores_[model.best_epoch_] == max(model.validation_scores_)
    assert model.coef_[0] == model.coef_[1] == 2.0         # fixed PCFG weight
    assert parseval(held, model.predict(words))["f1"] == \
        model.validation_scores_[model.best_epoch_]
    if model.best_epoch_ == 0:
        np.testing.assert_array_equal(model.coef_, w)
