"""Graph inference (exact tree decoding, loopy BP, ICM, loss augmentation)
against brute-force enumeration of all labellings of tiny graphs."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.graph.structure import Graph, GraphStructure


def random_tree(rng, n):
    return np.array([(v, rng.integers(v)) if rng.random() < 0.5 else (rng.integers(v), v)
                     for v in range(1, n)], dtype=np.int64).reshape(-1, 2)


def brute_force(structure, w, g, y_ref=None):
    """(best labelling, best value, max-marginals (n, K))."""
    K, n = structure.n_labels, g.n_nodes
    mm = np.full((n, K), -np.inf)
    best, best_y = -np.inf, None
    for y in itertools.product(range(K), repeat=n):
        y = np.array(y)
        if g.observed is not None and np.any(y[g.observed >= 0] != g.observed[g.observed >= 0]):
            continue
        value = structure.score(w, g, y)
        if y_ref is not None:
            value += structure.loss(y_ref, y)
        mm[np.arange(n), y] = np.maximum(mm[np.arange(n), y], value)
        if value > best:
            best, best_y = value, y
    return best_y, best, mm


def make(rng, n, F, edges, **kw):
    X = sp.random(n, F, density=0.5, random_state=int(rng.integers(1 << 30)), format="csr")
    return Graph(X, edges, **kw)


@pytest.mark.parametrize("directed", [False, True])
def test_exact_tree_decode_and_bp_max_marginals(directed):
    rng = np.random.default_rng(0)
    for trial in range(25):
        n, K, F = int(rng.integers(1, 7)), int(rng.integers(1, 4)), 3
        s = GraphStructure(F, K, directed=directed, damping=0.0, max_iter=100, tol=1e-12)
        g = make(rng, n, F, random_tree(rng, n))
        w = rng.normal(size=s.n_features)
        y_bf, best, mm = brute_force(s, w, g)
        y = s.decode(w, g)
        assert s.score(w, g, y) == pytest.approx(best, abs=1e-9)
        beliefs = s.max_marginals(w, g)
        # exact max-marginals up to a constant per node
        np.testing.assert_allclose(beliefs - beliefs.max(axis=1, keepdims=True),
                                   mm - mm.max(axis=1, keepdims=True), atol=1e-8)


def test_bp_on_forest_with_two_components_and_self_loop():
    rng = np.random.default_rng(1)
    s = GraphStructure(2, 3, damping=0.0, max_iter=100, tol=1e-12)
    g = make(rng, 5, 2, [[0, 1], [1, 2], [3, 4], [4, 4]])
    w = rng.normal(size=s.n_features)
    _, best, mm = brute_force(s, w, g)
    assert s.score(w, g, s.decode(w, g)) == pytest.approx(best)
    b = s.max_marginals(w, g)
    np.testing.assert_allclose(b - b.max(1, keepdims=True), mm - mm.max(1, keepdims=True),
                               atol=1e-8)


@pytest.mark.parametrize("inference", ["auto", "bp", "icm"])
def test_loopy_decoders_are_local_optima_and_usually_exact(inference):
    rng = np.random.default_rng(2)
    n_exact = 0
    for trial in range(20):
        n, K = 5, 3
        edges = np.array([(u, v) for u in range(n) for v in range(u + 1, n)
                          if rng.random() < 0.4] + [(0, 1), (1, 2), (2, 0)])
        s = GraphStructure(3, K, inference=inference, directed=bool(trial % 2))
        g = make(rng, n, 3, edges)
        w = rng.normal(size=s.n_features)
        _, best, _ = brute_force(s, w, g)
        y = s.decode(w, g)
        value = s.score(w, g, y)
        assert value <= best + 1e-9
        for v in range(n):           # ICM fixed point: no single relabelling improves
            for k in range(K):
                z = y.copy()
                z[v] = k
                assert s.score(w, g, z) <= value + 1e-9
        n_exact += value == pytest.approx(best)
    if inference != "icm":
        assert n_exact >= 15


@pytest.mark.parametrize("directed", [False, True])
def test_loss_augmented_equals_brute_force_on_trees(directed):
    rng = np.random.default_rng(3)
    for trial in range(20):
        n, K = int(rng.integers(1, 6)), 3
        s = GraphStructure(2, K, directed=directed, loss_weight=0.8)
        g = make(rng, n, 2, random_tree(rng, n))
        w = rng.normal(size=s.n_features)
        y = rng.integers(K, size=n)
        _, best, _ = brute_force(s, w, g, y)
        y_hat = s.loss_augmented_decode(w, g, y)
        assert s.score(w, g, y_hat) + s.loss(y, y_hat) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("directed", [False, True])
def test_node_cost_loss_augmented_equals_brute_force_on_trees(directed):
    """Node-wise costs (weighted Hamming): label_cost[y_v, y_hat_v] per node."""
    rng = np.random.default_rng(7)
    K = 3
    cost = rng.uniform(0.2, 3.0, size=(K, K))
    np.fill_diagonal(cost, 0.0)
    for trial in range(20):
        n = int(rng.integers(1, 6))
        s = GraphStructure(2, K, directed=directed, loss_weight=0.6, label_cost=cost)
        g = make(rng, n, 2, random_tree(rng, n))
        w = rng.normal(size=s.n_features)
        y = rng.integers(K, size=n)
        _, best, _ = brute_force(s, w, g, y)
        y_hat = s.loss_augmented_decode(w, g, y)
        assert s.loss(y, y_hat) == pytest.approx(0.6 * cost[y, y_hat].sum())
        assert s.score(w, g, y_hat) + s.loss(y, y_hat) == pytest.approx(best, abs=1e-9)
    # the identity-free default equals label_cost = 1 - I
    plain = GraphStructure(2, K)
    unit = GraphStructure(2, K, label_cost=1.0 - np.eye(K))
    g = make(rng, 4, 2, random_tree(rng, 4))
    w, y = rng.normal(size=plain.n_features), rng.integers(K, size=4)
    np.testing.assert_array_equal(plain.loss_augmented_decode(w, g, y),
                                  unit.loss_augmented_decode(w, g, y))
    for bad in (np.ones((K, K)), -cost, np.ones((2, 2)) - np.eye(2), [["a"] * K] * K):
        with pytest.raises(ValueError, match="label_cost"):
            GraphStructure(2, K, label_cost=bad)
    with pytest.raises(ValueError, match="labels in"):
        GraphStructure(2, K, label_cost=cost).loss(np.array([0, 5]), np.array([0, 1]))


def test_loss_augmented_on_loopy_graph_never_below_truth():
    rng = np.random.default_rng(4)
    s = GraphStructure(2, 3)
    g = make(rng, 5, 2, [[0, 1], [1, 2], [2, 0], [2, 3], [3, 4], [4, 2]])
    for _ in range(10):
        w = rng.normal(size=s.n_features) * 3
        y = rng.integers(3, size=5)
        y_hat = s.loss_augmented_decode(w, g, y)
        _, best, _ = brute_force(s, w, g, y)
        value = s.score(w, g, y_hat) + s.loss(y, y_hat)
        assert s.score(w, g, y) - 1e-9 <= value <= best + 1e-9


def test_observed_labels_are_clamped():
    rng = np.random.default_rng(5)
    s = GraphStructure(2, 3)
    observed = np.array([2, -1, -1, 0, -1])
    g = make(rng, 5, 2, random_tree(rng, 5), observed=observed)
    w = rng.normal(size=s.n_features)
    y_bf, best, _ = brute_force(s, w, g)
    y = s.decode(w, g)
    assert y[0] == 2 and y[3] == 0
    assert s.score(w, g, y) == pytest.approx(best)


def test_joint_feature_matches_score():
    rng = np.random.default_rng(6)
    for directed in (False, True):
        s = GraphStructure(4, 3, directed=directed)
        g = make(rng, 6, 4, [[0, 1], [1, 2], [2, 0], [3, 3], [4, 5], [5, 4]])
        w = rng.normal(size=s.n_features)
        y = rng.integers(3, size=6)
        idx, val = s.joint_feature(g, y)
        dense = np.zeros(s.n_features)
        np.add.at(dense, idx, val)
        assert dense @ w == pytest.approx(s.score(w, g, y))
    # undirected: the pair (a, b) and (b, a) share one weight
    s = GraphStructure(1, 2)
    idx1, _ = s.joint_feature(Graph(np.ones((2, 1)), [[0, 1]]), [0, 1])
    idx2, _ = s.joint_feature(Graph(np.ones((2, 1)), [[0, 1]]), [1, 0])
    assert idx1[-1] == idx2[-1]


def test_bad_graphs_raise_clear_errors():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="outside \\[0, 3\\).*missing nodes"):
        Graph(X, [[0, 1], [1, 3]])
    with pytest.raises(ValueError, match="outside"):
        Graph(X, [[-1, 1]])
    with pytest.raises(ValueError, match="self-loop"):
        Graph(X, [[0, 1], [2, 2]], self_loops="error")
    g = Graph(X, [[0, 1], [2, 2]], self_loops="drop")
    assert g.n_dropped_self_loops == 1 and g.edges.shape == (1, 2)
    with pytest.raises(ValueError, match="shape \\(n_edges, 2\\)"):
        Graph(X, [0, 1, 2])
    s = GraphStructure(2, 2)
    with pytest.raises(ValueError, match="one entry per node"):
        s.joint_feature(Graph(X, [[0, 1]]), [0, 1])
    with pytest.raises(ValueError, match="labels must be in"):
        s.check_output(Graph(X, [[0, 1]]), [0, 1, 2])
    with pytest.raises(ValueError, match="expects 2"):
        s.decode(np.zeros(s.n_features), Graph(np.ones((3, 5)), []))
    with pytest.raises(ValueError, match="forest"):
        GraphStructure(2, 2, inference="exact").decode(
            np.zeros(s.n_features), Graph(X, [[0, 1], [1, 2], [2, 0]]))
