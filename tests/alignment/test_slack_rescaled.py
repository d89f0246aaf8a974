"""Exact slack-rescaled alignment (the DP with a loss-count dimension) against
brute-force enumeration, and the structural SVM with slack rescaling on
alignments."""
import itertools

import numpy as np
import pytest

from linclass.alignment.structure import AlignmentStructure
from linclass.structured import StructuredSVM
from linclass.structured.learners import supports_slack_rescaling


def all_alignments(m, n):
    for k in range(min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            for cols in itertools.combinations(range(n), k):
                y = np.full(m, -1, dtype=np.int64)
                y[list(rows)] = cols
                yield y


def rescaled(s, w, x, y_ref, y):
    return s.loss(y_ref, y) * (1.0 + s.score(w, x, y) - s.score(w, x, y_ref))


@pytest.mark.parametrize("loss", ["residue", "q"])
@pytest.mark.parametrize("mode", ["global", "local"])
def test_slack_rescaled_decode_equals_brute_force(loss, mode):
    rng = np.random.default_rng(1)
    s = AlignmentStructure("ACG", mode=mode, loss=loss, loss_weight=1.5)
    assert supports_slack_rescaling(s)
    for trial in range(40):
        x = tuple("".join(rng.choice(list("ACG"), size=k)) for k in rng.integers(0, 5, 2))
        candidates = list(all_alignments(len(x[0]), len(x[1])))
        y_ref = candidates[rng.integers(len(candidates))]
        w = rng.standard_normal(s.n_features) * (0.3 if trial % 2 else 2.0)
        best = max(rescaled(s, w, x, y_ref, y) for y in candidates)
        y_hat = s.slack_rescaled_decode(w, x, y_ref)
        s.check_output(x, y_hat)
        assert rescaled(s, w, x, y_ref, y_hat) == pytest.approx(best, abs=1e-9)


def test_slack_rescaled_refuses_huge_tables():
    from linclass._core._alignment import slack_rescaled_align
    a = np.zeros(50, np.int32)
    with pytest.raises(ValueError, match="max_entries"):
        slack_rescaled_align(a, a, np.eye(2), -1.0, -1.0, False,
                             np.arange(50, dtype=np.int64), np.arange(50, dtype=np.int64),
                             1.0, False, 0.0, max_entries=1000)


@pytest.mark.filterwarnings("ignore::linclass.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("method", ["bcfw", "1-slack"])
def test_svm_with_slack_rescaling_learns_alignments(method):
    from linclass.demo.structured import make_alignment_pairs
    alphabet = "ACDE"
    pairs, refs = make_alignment_pairs(12, length=6, alphabet=alphabet, random_state=0)
    s = AlignmentStructure(alphabet)
    svm = StructuredSVM(s, C=1.0, rescaling="slack", method=method, tol=1e-2, max_iter=300,
                        random_state=0).fit(pairs, refs)
    margin = StructuredSVM(s, C=1.0, method=method, tol=1e-2, max_iter=300,
                           random_state=0).fit(pairs, refs)
    zero = np.mean([s.loss(r, y) for r, y in zip(refs, s.batch_decode(np.zeros(s.n_features),
                                                                     s.batch_inputs(pairs)))])
    assert svm.mean_loss(pairs, refs) < zero
    assert svm.mean_loss(pairs, refs) <= margin.mean_loss(pairs, refs) + 2.0


@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_loopy_graphs_refuse_slack_rescaling_before_decoding(method):
    from linclass.graph.structure import Graph, GraphStructure

    class Watched(GraphStructure):
        def decode(self, w, x):
            raise AssertionError("decoded before refusing")
        loss_augmented_decode = batch_decode = batch_loss_augmented_decode = decode

    rng = np.random.default_rng(0)
    g = Graph(rng.normal(size=(4, 2)), [[0, 1], [1, 2], [2, 0], [2, 3]])   # a cycle
    with pytest.raises(ValueError, match="rescaling='slack' is not available for Watched"):
        StructuredSVM(Watched(2, 2), rescaling="slack", method=method).fit(
            [g], [np.array([0, 1, 0, 1])])


@pytest.mark.parametrize("loss", ["residue", "q"])
@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_too_long_pairs_refused_at_fit_start(monkeypatch, loss, method):
    import linclass.alignment.structure as structure_module
    from linclass.demo.structured import make_alignment_pairs
    pairs, refs = make_alignment_pairs(4, length=6, alphabet="ACDE", random_state=0)
    s = AlignmentStructure("ACDE", loss=loss)
    calls = []
    monkeypatch.setattr(AlignmentStructure, "slack_rescaled_decode",
                        lambda self, w, x, y: calls.append(1))
    monkeypatch.setattr(structure_module, "SLACK_MAX_ENTRIES", 20)
    with pytest.raises(ValueError, match="rescaling='slack': training pair 0 "):
        StructuredSVM(s, rescaling="slack", method=method).fit(pairs, refs)
    assert calls == []          # refused before any decoding
