"""CollectiveClassifier on synthetic homophilous graphs."""
import warnings

import numpy as np
import pytest

from linclass.demo.structured import make_graph
from linclass.graph.collective import CollectiveClassifier, induced_subgraph


def split(n):
    train = np.zeros(n, dtype=bool)
    train[np.random.default_rng(0).permutation(n)[: n // 2]] = True
    return train


def test_collective_beats_content_only_on_homophilous_graph():
    X, E, y = make_graph(n_nodes=200, random_state=1)
    train = split(y.size)
    acc = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, edges in (("content", np.zeros((0, 2), dtype=np.int64)), ("coll", E)):
            m = CollectiveClassifier(C=0.1, max_iter=40).fit_graph(X, edges, y, train)
            p = m.predict_graph(X, edges, y, train)
            np.testing.assert_array_equal(p[train], y[train])       # clamped
            acc[name] = np.mean(p[~train] == y[~train])
    assert acc["coll"] > acc["content"] + 0.03
    assert np.all(np.diag(m.pair_coef_) > m.pair_coef_.max(axis=0) - 1e-12) or \
        np.mean(np.diag(m.pair_coef_)) > np.mean(m.pair_coef_)


def test_fit_predict_several_graphs_with_string_labels_and_perceptron():
    graphs, labels = [], []
    for seed in range(3):
        X, E, y = make_graph(n_nodes=60, random_state=seed)
        graphs.append((X, E))
        labels.append(np.array(["a", "b", "c"])[y])
    m = CollectiveClassifier(learner="perceptron", max_iter=5).fit(graphs, labels)
    predicted = m.predict(graphs)
    assert predicted[0].dtype.kind == "U" and set(np.unique(predicted[0])) <= {"a", "b", "c"}
    assert np.mean(np.concatenate(predicted) == np.concatenate(labels)) > 0.6


def test_induced_subgraph_and_errors():
    X = np.eye(4)
    F, E = induced_subgraph(X, [[0, 1], [1, 2], [2, 3]], [1, 2, 3])
    np.testing.assert_array_equal(E, [[0, 1], [1, 2]])
    m = CollectiveClassifier()
    with pytest.raises(ValueError, match="missing nodes"):
        m.fit([(X, [[0, 9]])], [np.zeros(4, dtype=int)])
    with pytest.raises(ValueError, match="4 nodes"):
        m.fit([(X, [[0, 1]])], [np.zeros(3, dtype=int)])
    with pytest.raises(ValueError, match="boolean"):
        m.fit_graph(X, [[0, 1]], np.zeros(4, dtype=int), [1, 0, 1, 0])
    with pytest.raises(ValueError, match="self-loop"):
        CollectiveClassifier(self_loops="error").fit([(X, [[1, 1]])], [np.zeros(4, dtype=int)])
