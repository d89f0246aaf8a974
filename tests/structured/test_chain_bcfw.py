"""The fused chain BCFW (``_core._bcfw.chain_pass`` / ``chain_hinge``, behind
``SequenceStructure.bcfw_state`` and the tagger's SSVM): against the generic
per-sentence Python BCFW pass, the hinge sum against brute-force enumeration, bad
input refused with clear errors, and the tagger's default SSVM path."""
import gzip
import itertools
import os
import pathlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core import _bcfw
from linclass.exceptions import ConvergenceWarning
from linclass.sequence import SequenceTagger
from linclass.sequence.structure import SentenceBatch, SequenceStructure
from linclass.structured import StructuredSVM
from linclass.structured.chain import ChainBCFW

from .test_structured_learners import GenericView


def random_batch(seed, n_sent=30, F=20, K=4, max_len=7, empty=True):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0 if empty else 1, max_len + 1, size=n_sent)
    N = int(lens.sum())
    Xf = sp.random(N, F, density=0.25, random_state=seed, format="csr")
    Xf.data = rng.standard_normal(Xf.nnz)
    off = np.concatenate([[0], np.cumsum(lens)])
    batch = SentenceBatch.from_matrix(Xf, off)
    gold = rng.integers(0, K, N).astype(np.int32)
    return batch, batch.split(gold), F, K


@pytest.mark.filterwarnings("ignore::linclass.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("loss_weight", [1.0, 2.5])
def test_fused_passes_equal_generic_python_passes(average, loss_weight):
    batch, Ys, F, K = random_batch(0)
    s = SequenceStructure(F, K, loss_weight=loss_weight)
    assert isinstance(s.bcfw_state(batch, Ys, 0.7, average), ChainBCFW)
    for passes in (1, 4):
        fused = StructuredSVM(s, C=0.7, method="bcfw", tol=1e-12, max_iter=passes,
                              average=average, random_state=3).fit(batch, Ys)
        generic = StructuredSVM(GenericView(s), C=0.7, method="bcfw", tol=1e-12,
                                max_iter=passes, average=average, random_state=3).fit(
                                    [batch[i] for i in range(len(batch))], Ys)
        np.testing.assert_allclose(fused.coef_, generic.coef_, atol=1e-10)
        assert fused.objective_ == pytest.approx(generic.objective_, rel=1e-10)


def test_chain_hinge_equals_enumeration():
    batch, Ys, F, K = random_batch(2, n_sent=12, K=3, max_len=4)
    s = SequenceStructure(F, K, loss_weight=1.5)
    w = np.random.default_rng(3).standard_normal(s.n_features)
    state = ChainBCFW(s, batch, Ys, 1.0, False)
    expected = 0.0
    for i in range(len(batch)):
        x, y = batch[i], np.asarray(Ys[i])
        if len(y) == 0:
            continue
        gi, gv = s.joint_feature(x, y)
        best = max(w[idx] @ val + s.loss(y, c)
                   for c in map(np.array, itertools.product(range(K), repeat=len(y)))
                   for idx, val in [s.joint_feature(x, c)])
        expected += best - w[gi] @ gv
    assert state.hinge(w) == pytest.approx(expected, rel=1e-10)


def test_fused_bcfw_reaches_the_generic_objective():
    batch, Ys, F, K = random_batch(4, n_sent=20, empty=False)
    sentences = [batch[i] for i in range(len(batch))]
    fused = StructuredSVM(SequenceStructure(F, K), C=1.0, method="bcfw", tol=1e-3,
                          max_iter=3000, average=True, random_state=0).fit(batch, Ys)
    exact = StructuredSVM(SequenceStructure(F, K), C=1.0, method="1-slack", tol=1e-6,
                          max_iter=3000).fit(sentences, Ys)
    # the certified gap: P* <= P(fused) <= P* + gap, gap <= 1e-3 P(fused)
    assert fused.history_[-1]["gap"] <= 1e-3 * fused.objective_
    assert exact.objective_ * (1 - 1e-5) <= fused.objective_
    assert fused.objective_ <= exact.objective_ + fused.history_[-1]["gap"] + 1e-6


def test_chain_pass_refuses_bad_input():
    batch, Ys, F, K = random_batch(5)
    s = SequenceStructure(F, K)
    st = ChainBCFW(s, batch, Ys, 1.0, False)
    order = np.arange(len(batch), dtype=np.int64)
    args = (st.w, st.v, K, batch.indices, batch.data, batch.indptr, batch.offsets)
    with pytest.raises(ValueError, match="visit_order"):
        _bcfw.chain_pass(*args, st.gold, st.token_state, st.sent_state, st.l,
                         order + len(batch), C=1.0)
    bad_gold = st.gold.copy()
    bad_gold[0] = K
    with pytest.raises(ValueError, match="gold label"):
        _bcfw.chain_pass(*args, bad_gold, st.token_state, st.sent_state, st.l, order, C=1.0)
    bad_idx = batch.indices.copy()
    bad_idx[0] = F
    with pytest.raises(ValueError, match="feature index"):
        _bcfw.chain_pass(st.w, st.v, K, bad_idx, batch.data, batch.indptr, batch.offsets,
                         st.gold, st.token_state, st.sent_state, st.l, order, C=1.0)
    with pytest.raises(ValueError, match="F\\*K"):
        _bcfw.chain_hinge(st.w[:3], K, batch.indices, batch.data, batch.indptr,
                          batch.offsets, st.gold)
    with pytest.raises(ValueError, match="token_state"):
        _bcfw.chain_pass(*args, st.gold, st.token_state[:2], st.sent_state, st.l, order,
                         C=1.0)


def _data_home():
    env = os.environ.get("LINCLASS_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _conll(path, n_sentences):
    X, Y, sent, tags = [], [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                if sent:
                    X.append(sent)
                    Y.append(tags)
                    sent, tags = [], []
                    if len(X) == n_sentences:
                        break
                continue
            sent.append((parts[0], parts[1]))
            tags.append(parts[2])
    return X, Y


def test_ssvm_tagger_defaults_on_conll2000():
    # the default path on real data: chunking template, fused passes, averaging,
    # stop at a duality gap of tol per token -- without a ConvergenceWarning,
    # and at least as accurate on held-out sentences as the averaged perceptron
    path = _data_home() / "conll2000_chunking" / "train.txt.gz"
    if not path.exists():
        pytest.skip("CoNLL-2000 data not found at %s (set LINCLASS_DATA)" % path)
    X, Y = _conll(path, 900)
    Xtr, Ytr, Xte, Yte = X[:600], Y[:600], X[600:], Y[600:]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        tagger = SequenceTagger(features="chunking", trainer="ssvm",
                                random_state=0).fit(Xtr, Ytr)
    last = tagger.history_[-1]
    assert last["gap"] <= tagger.tol * tagger.C * sum(map(len, Ytr))
    assert tagger.n_iter_ < 50
    per = SequenceTagger(features="chunking", random_state=0).fit(Xtr, Ytr)
    assert tagger.score(Xte, Yte) >= per.score(Xte, Yte) - 0.005
