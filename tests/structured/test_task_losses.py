"""Task losses with the structural SVM: the Q-score loss of alignments and the
node-wise costs of graphs train with margin rescaling (every method) and
slack rescaling is refused before any decoding (no exact slack-rescaled
argmax for these structures)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.alignment.structure import AlignmentStructure
from linclass.graph.structure import Graph, GraphStructure
from linclass.structured import StructuredSVM


def _alignment_data():
    rng = np.random.default_rng(0)
    pairs, refs = [], []
    while len(pairs) < 8:
        a = "".join(rng.choice(list("ACGT"), size=6))
        if len({a[1], a[2], a[3]}) < 3:
            continue                         # the gap's place would be ambiguous
        b = a[:2] + a[3:]                    # one deletion: a[2] faces a gap
        pairs.append((a, b))
        refs.append(np.array([0, 1, -1, 2, 3, 4]))
    return pairs, refs


def _graph_data():
    rng = np.random.default_rng(1)
    X, Y = [], []
    for _ in range(6):
        n = 5
        y = rng.integers(3, size=n)
        feats = sp.csr_matrix(np.eye(3)[y] + 0.1 * rng.normal(size=(n, 3)))
        X.append(Graph(feats, [[v, v + 1] for v in range(n - 1)]))
        Y.append(y)
    return X, Y


def _cases():
    cost = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [3.0, 1.0, 0.0]])
    return [("alignment q", AlignmentStructure("ACGT", loss="q"), _alignment_data()),
            ("graph costs", GraphStructure(3, 3, label_cost=cost), _graph_data())]


@pytest.mark.parametrize("case", range(2))
@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_margin_rescaling_trains(case, method):
    name, structure, (X, Y) = _cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # BCFW's gap after max_iter passes
        svm = StructuredSVM(structure, C=10.0, method=method, max_iter=300, tol=1e-3,
                            random_state=0).fit(X, Y)
    pred = svm.predict(X)
    total = sum(structure.loss(y, p) for y, p in zip(Y, pred))
    assert total == 0, name                  # separable toy data: learnt exactly
    assert np.isfinite(svm.objective_)


@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_alignment_slack_rescaling_trains(method):
    # alignments have an exact slack-rescaled argmax (the DP with a loss dimension)
    name, structure, (X, Y) = _cases()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # BCFW's gap after max_iter passes
        svm = StructuredSVM(structure, C=10.0, method=method, rescaling="slack",
                            max_iter=300, tol=1e-3, random_state=0).fit(X, Y)
    pred = svm.predict(X)
    assert sum(structure.loss(y, p) for y, p in zip(Y, pred)) == 0, name


@pytest.mark.parametrize("case", [1])
@pytest.mark.parametrize("method", ["bcfw", "1-slack", "n-slack"])
def test_slack_rescaling_refused_before_decoding(case, method, monkeypatch):
    name, structure, (X, Y) = _cases()[case]    # loopy graph: no exact rescaled argmax

    def fail(*args, **kwargs):
        raise AssertionError("decoded before refusing")

    for attr in ("decode", "loss_augmented_decode", "batch_decode",
                 "batch_loss_augmented_decode"):
        monkeypatch.setattr(structure, attr, fail, raising=False)
    with pytest.raises(ValueError, match="rescaling='slack' is not available"):
        StructuredSVM(structure, rescaling="slack", method=method).fit(X, Y)
