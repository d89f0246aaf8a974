"""Tests of the Structure protocol, the multi-class/taxonomy structures, the
structured perceptron, the cutting-plane structural SVM and its QP solvers."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from linclass.exceptions import ConvergenceWarning
from linclass.joint.svm import MultiClassSVM
from linclass.structured import (MultiClassStructure, Structure, StructuredPerceptron,
                                  StructuredSVM, TaxonomyStructure)
from linclass._core._qp import solve_block_simplex_qp, solve_block_sparse_dual


# -- helpers ---------------------------------------------------------------------
def dense_phi(structure, x, y):
    out = np.zeros(structure.n_features)
    idx, val = structure.joint_feature(x, y)
    np.add.at(out, idx, val)
    return out


def full_qp_primal(structure, X, Y, outputs, C, rescaling="margin"):
    """min 1/2||w||^2 + C sum xi s.t. every constraint of every output (scipy SLSQP)."""
    n, d = len(X), structure.n_features
    rows, rhs, owner = [], [], []
    for i in range(n):
        gold = dense_phi(structure, X[i], Y[i])
        for y in outputs:
            delta = structure.loss(Y[i], y)
            diff = gold - dense_phi(structure, X[i], y)
            if rescaling == "slack":
                rows.append(delta * diff)
            else:
                rows.append(diff)
            rhs.append(delta)
            owner.append(i)
    A, b, owner = np.array(rows), np.array(rhs), np.array(owner)

    def f(z):
        return 0.5 * z[:d] @ z[:d] + C * z[d:].sum()

    def grad(z):
        return np.concatenate([z[:d], np.full(n, C)])

    cons = [{"type": "ineq", "fun": lambda z: A @ z[:d] - b + z[d:][owner],
             "jac": lambda z: np.hstack([A, np.eye(n)[owner]])},
            {"type": "ineq", "fun": lambda z: z[d:], "jac": lambda z: np.hstack(
                [np.zeros((n, d)), np.eye(n)])}]
    res = minimize(f, np.concatenate([np.zeros(d), np.full(n, b.max())]), jac=grad,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
    assert res.success, res.message
    return res.x[:d], res.fun


def primal(structure, w, X, Y, outputs, C):
    total = 0.0
    for i in range(len(X)):
        total += max(structure.loss(Y[i], y) - w @ (dense_phi(structure, X[i], Y[i])
                                                    - dense_phi(structure, X[i], y))
                     for y in outputs)
    return 0.5 * w @ w + C * total


class TinyMultiLabel(Structure):
    """Two binary labels with a pairwise term; pure Python, no fast path."""

    def __init__(self, n_features_x):
        self.d = n_features_x
        self.n_features = 2 * n_features_x + 4

    def joint_feature(self, x, y):
        x = np.asarray(x, dtype=float)
        idx = np.concatenate([np.arange(self.d) + j * self.d for j in range(2) if y[j]]
                             + [np.array([2 * self.d + 2 * y[0] + y[1]])])
        val = np.concatenate([x for j in range(2) if y[j]] + [np.ones(1)])
        return idx.astype(np.int64), val

    outputs = [(a, b) for a in (0, 1) for b in (0, 1)]

    def decode(self, w, x):
        return max(self.outputs, key=lambda y: self.score(w, x, y))

    def loss_augmented_decode(self, w, x, y):
        return max(self.outputs, key=lambda yy: self.score(w, x, yy) + self.loss(y, yy))

    def slack_rescaled_decode(self, w, x, y):
        s = self.score(w, x, y)
        return max(self.outputs,
                   key=lambda yy: self.loss(y, yy) * (1 + self.score(w, x, yy) - s))

    def loss(self, y, y_hat):
        return float((y[0] != y_hat[0]) + (y[1] != y_hat[1]))


class GenericView(Structure):
    """The per-example protocol of another structure, without its fast path."""

    def __init__(self, inner):
        self.inner = inner
        self.n_features = inner.n_features

    def joint_feature(self, x, y):
        return self.inner.joint_feature(x, y)

    def decode(self, w, x):
        return self.inner.decode(w, x)

    def loss_augmented_decode(self, w, x, y):
        return self.inner.loss_augmented_decode(w, x, y)

    def loss(self, y, y_hat):
        return self.inner.loss(y, y_hat)


def blobs(n, d, k, seed):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    return centers[y] + rng.normal(size=(n, d)), y


# -- QP solvers ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_simplex_qp_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    starts = np.array([0, 3, 7, 9])
    m = starts[-1]
    G = rng.normal(size=(m, 4))
    G[starts[:-1]] = 0.0
    lin = np.abs(rng.normal(size=m))
    lin[starts[:-1]] = 0.0
    caps = np.array([1.0, 0.5, 2.0])
    alpha0 = np.zeros(m)
    alpha0[starts[:-1]] = caps
    K = G @ G.T
    alpha, _, viol = solve_block_simplex_qp(gram=K, linear=lin, block_starts=starts,
                                            alpha=alpha0, tol=1e-12)
    assert viol <= 1e-12
    assert np.all(alpha >= 0)
    np.testing.assert_allclose(np.add.reduceat(alpha, starts[:-1]), caps)
    cons = [{"type": "eq", "fun": (lambda a, b=b: a[starts[b]:starts[b + 1]].sum() - caps[b])}
            for b in range(3)]
    ref = minimize(lambda a: -(lin @ a - 0.5 * a @ K @ a), alpha0,
                   jac=lambda a: -(lin - K @ a), bounds=[(0, None)] * m,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14})
    ours = lin @ alpha - 0.5 * alpha @ K @ alpha
    assert ours >= -ref.fun - 1e-9
    np.testing.assert_allclose(ours, -ref.fun, rtol=1e-7)
    # the block-coordinate solver with explicit weights reaches the same optimum
    Gs = sp.csr_matrix(G)
    a2, w2, _, viol2 = solve_block_sparse_dual(
        data=Gs.data, indices=Gs.indices, indptr=Gs.indptr, losses=lin, block_starts=starts,
        alpha=alpha0, w=np.zeros(4), tol=1e-12, max_passes=100000)
    np.testing.assert_allclose(w2, G.T @ a2, atol=1e-12)
    np.testing.assert_allclose(lin @ a2 - 0.5 * w2 @ w2, ours, rtol=1e-9)


def test_qp_solvers_reject_bad_input():
    with pytest.raises(ValueError, match="gram"):
        solve_block_simplex_qp(gram=np.eye(2), linear=np.zeros(3),
                               block_starts=np.array([0, 3]), alpha=np.ones(3))
    with pytest.raises(ValueError, match="block_starts"):
        solve_block_simplex_qp(gram=np.eye(3), linear=np.zeros(3),
                               block_starts=np.array([0, 2]), alpha=np.ones(3))
    with pytest.raises(ValueError, match="unsorted"):
        solve_block_sparse_dual(data=np.ones(2), indices=np.array([1, 0]),
                                indptr=np.array([0, 2]), losses=np.zeros(1),
                                block_starts=np.array([0, 1]), alpha=np.ones(1),
                                w=np.zeros(2))
    with pytest.raises(ValueError, match="column indices"):
        solve_block_sparse_dual(data=np.ones(1), indices=np.array([5]),
                                indptr=np.array([0, 1]), losses=np.zeros(1),
                                block_starts=np.array([0, 1]), alpha=np.ones(1),
                                w=np.zeros(2))


# -- the structural SVM against the full QP -----------------------------------------
@pytest.mark.parametrize("method", ["1-slack", "n-slack"])
def test_cutting_plane_equals_full_qp_multiclass(method):
    X, Y = blobs(8, 2, 3, seed=1)
    s = MultiClassStructure(2, 3)
    w_ref, obj_ref = full_qp_primal(s, list(X), list(Y), range(3), C=0.7)
    m = StructuredSVM(s, C=0.7, method=method, tol=1e-7).fit(X, Y)
    np.testing.assert_allclose(m.objective_, obj_ref, rtol=1e-5)
    np.testing.assert_allclose(m.coef_, w_ref, atol=2e-3)
    assert m.objective_ - m.dual_objective_ <= 0.7 * 8 * 1e-6 + 1e-9
    assert primal(s, m.coef_, list(X), list(Y), range(3), 0.7) == pytest.approx(m.objective_)


@pytest.mark.parametrize("method", ["1-slack", "n-slack"])
@pytest.mark.parametrize("rescaling", ["margin", "slack"])
def test_cutting_plane_equals_full_qp_generic_structure(method, rescaling):
    rng = np.random.default_rng(3)
    s = TinyMultiLabel(3)
    X = list(rng.normal(size=(7, 3)))
    Y = [tuple(int(v) for v in rng.integers(0, 2, 2)) for _ in range(7)]
    w_ref, obj_ref = full_qp_primal(s, X, Y, s.outputs, C=0.5, rescaling=rescaling)
    m = StructuredSVM(s, C=0.5, method=method, rescaling=rescaling, tol=1e-7).fit(X, Y)
    np.testing.assert_allclose(m.objective_, obj_ref, rtol=1e-5)
    np.testing.assert_allclose(m.coef_, w_ref, atol=2e-3)


def test_one_slack_and_n_slack_reach_same_objective_and_cache_agrees():
    X, Y = blobs(60, 4, 4, seed=5)
    s = TaxonomyStructure(4, [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y", "z")])
    objs = [StructuredSVM(s, C=0.3, method=meth, tol=1e-6, inference_cache=cache)
            .fit(X, Y).objective_
            for meth in ("1-slack", "n-slack") for cache in (0, 3)]
    np.testing.assert_allclose(objs, objs[0], rtol=1e-4)


def test_fast_path_equals_generic_path():
    X, Y = blobs(40, 3, 3, seed=7)
    D = np.array([[1.0, 0.5], [0.0, 1.0], [1.0, 1.0]])
    for s in (MultiClassStructure(3, 3), MultiClassStructure(3, class_descriptions=D,
                                                             loss_matrix=[[0, 1, 2], [1, 0, 1],
                                                                          [2, 1, 0]])):
        g = GenericView(s)
        assert s.has_fast_path() and not g.has_fast_path()
        rng = np.random.default_rng(0)
        w = rng.normal(size=s.n_features)
        Xb = s.batch_inputs(sp.csr_matrix(X))
        Ys = [Y, rng.integers(0, 3, len(Y))]
        np.testing.assert_allclose(s.batch_score(w, Xb, Ys), g.batch_score(w, list(X), Ys))
        weights = rng.normal(size=(2, len(Y)))
        np.testing.assert_allclose(s.batch_joint_feature(Xb, Ys, weights),
                                   g.batch_joint_feature(list(X), Ys, weights))
        np.testing.assert_array_equal(s.batch_loss_augmented_decode(w, Xb, Y),
                                      g.batch_loss_augmented_decode(w, list(X), Y))
        np.testing.assert_array_equal(s.batch_decode(w, Xb), g.batch_decode(w, list(X)))
        fast = StructuredSVM(s, C=1.0, tol=1e-6).fit(X, Y)
        slow = StructuredSVM(g, C=1.0, tol=1e-6).fit(list(X), list(Y))
        np.testing.assert_allclose(fast.objective_, slow.objective_, rtol=1e-6)
        np.testing.assert_allclose(fast.coef_, slow.coef_, atol=1e-4)


# -- perceptron -------------------------------------------------------------------
def numpy_multiclass_perceptron(X, y, n_classes, epochs, average, order_fn, W0=None):
    W = np.zeros((n_classes, X.shape[1])) if W0 is None else W0.copy()
    total = W.copy()          # sum of the weights after each step, starting weights included
    count = 1
    for epoch in range(epochs):
        mistakes = 0
        for i in order_fn():
            pred = int(np.argmax(W @ X[i]))
            if pred != y[i]:
                W[y[i]] += X[i]
                W[pred] -= X[i]
                mistakes += 1
            total += W
            count += 1
        if mistakes == 0:
            break
    return (total / count if average else W).T.ravel()    # the structure stores W.T


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("shuffle", [True, False])
def test_perceptron_equals_multiclass_perceptron(average, shuffle):
    X, y = blobs(50, 3, 4, seed=11)
    rng = np.random.default_rng(42)
    order_fn = (lambda: rng.permutation(len(y))) if shuffle else (lambda: np.arange(len(y)))
    ref = numpy_multiclass_perceptron(X, y, 4, 6, average, order_fn)
    m = StructuredPerceptron(MultiClassStructure(3, 4), max_iter=6, average=average,
                             shuffle=shuffle, random_state=42).fit(X, y)
    np.testing.assert_allclose(m.coef_, ref, atol=1e-10)
    assert len(m.history_) == m.n_iter_


@pytest.mark.parametrize("average", [True, False])
def test_perceptron_starts_from_coef_init(average):
    X, y = blobs(50, 3, 4, seed=12)
    W0 = np.random.default_rng(5).normal(size=(4, 3))
    order_fn = lambda: np.arange(len(y))            # noqa: E731
    ref = numpy_multiclass_perceptron(X, y, 4, 3, average, order_fn, W0=W0)
    m = StructuredPerceptron(MultiClassStructure(3, 4), max_iter=3, average=average,
                             shuffle=False, coef_init=W0.T.ravel()).fit(X, y)
    np.testing.assert_allclose(m.coef_, ref, atol=1e-10)
    with pytest.raises(ValueError, match="coef_init must have shape"):
        StructuredPerceptron(MultiClassStructure(3, 4), coef_init=np.zeros(5)).fit(X, y)
    with pytest.raises(ValueError, match="coef_init contains"):
        StructuredPerceptron(MultiClassStructure(3, 4),
                             coef_init=np.full(12, np.nan)).fit(X, y)


def test_perceptron_stops_on_separable_data():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    m = StructuredPerceptron(MultiClassStructure(2, 3), max_iter=50).fit(X, [0, 1, 2])
    assert m.history_[-1]["n_mistakes"] == 0 and m.n_iter_ < 50
    assert m.predict(X) == [0, 1, 2] and m.score(X, [0, 1, 2]) == 1.0


# -- taxonomy ---------------------------------------------------------------------
def test_taxonomy_decoding_equals_exhaustive_path_scoring():
    paths = [("comp", "sys", "mac"), ("comp", "sys", "ibm"), ("comp", "graphics"),
             ("rec", "autos"), ("rec", "sport", "hockey"), ("misc",)]
    s = TaxonomyStructure(5, paths)
    rng = np.random.default_rng(0)
    node_w = {node: rng.normal(size=5) for node in s.nodes}
    w = np.stack([node_w[node] for node in s.nodes], axis=1).ravel()   # W.T row-major
    for _ in range(20):
        x = rng.normal(size=5)
        y = int(rng.integers(len(paths)))
        path_scores = [sum(node_w[p[:k]] @ x for k in range(1, len(p) + 1)) for p in paths]

        def tree_dist(a, b):
            common = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                          min(len(a), len(b)))
            return len(a) + len(b) - 2 * common

        assert s.decode(w, x) == int(np.argmax(path_scores))
        aug = [path_scores[c] + tree_dist(paths[y], paths[c]) for c in range(len(paths))]
        assert s.loss_augmented_decode(w, x, y) == int(np.argmax(aug))
        for c in range(len(paths)):
            assert s.loss(y, c) == tree_dist(paths[y], paths[c]) == s.tree_distance(y, c)
            assert s.score(w, x, c) == pytest.approx(path_scores[c])
    assert s.leaf_index(("rec", "autos")) == 3
    assert s.path_of(4) == ("rec", "sport", "hockey")


@pytest.mark.parametrize("alpha", [0.0, 0.3, 2.0])
def test_weighted_ancestors_decoding_equals_exhaustive_path_scoring(alpha):
    """Cai & Hofmann's scaled path vectors: leaf entry 1, ancestors ``alpha``;
    decoding scores every root-to-leaf path; the loss stays the tree distance."""
    paths = [("comp", "sys", "mac"), ("comp", "sys", "ibm"), ("comp", "graphics"),
             ("rec", "autos"), ("misc",)]
    s = TaxonomyStructure(4, paths, ancestor_weight=alpha)
    plain = TaxonomyStructure(4, paths)
    rng = np.random.default_rng(3)
    node_w = {node: rng.normal(size=4) for node in s.nodes}
    w = np.stack([node_w[node] for node in s.nodes], axis=1).ravel()
    for _ in range(10):
        x = rng.normal(size=4)
        y = int(rng.integers(len(paths)))
        path_scores = [node_w[p] @ x + alpha * sum(node_w[p[:k]] @ x for k in range(1, len(p)))
                       for p in paths]
        assert s.decode(w, x) == int(np.argmax(path_scores))
        aug = [path_scores[c] + plain.loss(y, c) for c in range(len(paths))]
        assert s.loss_augmented_decode(w, x, y) == int(np.argmax(aug))
        for c in range(len(paths)):
            assert s.loss(y, c) == plain.loss(y, c) == s.tree_distance(y, c)
    for bad in (-1.0, np.nan, "x", True):
        with pytest.raises(ValueError, match="ancestor_weight"):
            TaxonomyStructure(4, paths, ancestor_weight=bad)


def test_zero_ancestor_weight_is_the_flat_model():
    X, y = blobs(60, 4, 4, seed=5)
    names = np.array(["comp.mac", "comp.pc", "rec.autos", "sci.med"])[y]
    tax = {n: tuple(n.split(".")) for n in names}
    zero_one = 1.0 - np.eye(4)
    flat = MultiClassSVM(C=0.5, tol=1e-7, method="1-slack").fit(X, names)
    tax0 = MultiClassSVM("taxonomy", taxonomy=tax, ancestor_weight=0.0, loss_matrix=zero_one,
                         C=0.5, tol=1e-7, method="1-slack").fit(X, names)
    np.testing.assert_allclose(tax0.coef_, flat.coef_, atol=1e-6)
    np.testing.assert_allclose(tax0.intercept_, flat.intercept_, atol=1e-6)
    half = MultiClassSVM("taxonomy", taxonomy=tax, ancestor_weight=0.5, C=0.5,
                         random_state=0).fit(X, names)
    W = half.attribute_coef_                  # rows: the tree's nodes
    s = TaxonomyStructure(1, [tax[c] for c in half.classes_], ancestor_weight=0.5)
    np.testing.assert_allclose(half.coef_, (s.class_vectors @ W)[:, :4])
    with pytest.raises(ValueError, match="ancestor_weight"):
        MultiClassSVM("taxonomy", taxonomy=tax, ancestor_weight=-0.5).fit(X, names)


def test_taxonomy_from_names():
    from linclass.joint import taxonomy_from_names
    names = ["comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "comp.graphics",
             "alt.atheism", "rec.sport.hockey", "rec.sport.baseball"]
    tax = taxonomy_from_names(names)
    assert tax["comp.sys.ibm.pc.hardware"] == ("comp", "sys", "ibm", "pc", "hardware")
    s = TaxonomyStructure(1, [tax[n] for n in names])
    assert s.loss(0, 1) == 5 and s.loss(0, 2) == 5 and s.loss(4, 5) == 2 and s.loss(3, 4) == 5
    # single-child chains merged: ibm, ibm.pc, mac, alt and rec (only child: sport) vanish
    merged = taxonomy_from_names(names, collapse_chains=True)
    assert merged == {"comp.sys.ibm.pc.hardware": ("comp", "comp.sys",
                                                   "comp.sys.ibm.pc.hardware"),
                      "comp.sys.mac.hardware": ("comp", "comp.sys", "comp.sys.mac.hardware"),
                      "comp.graphics": ("comp", "comp.graphics"),
                      "alt.atheism": ("alt.atheism",),
                      "rec.sport.hockey": ("rec.sport", "rec.sport.hockey"),
                      "rec.sport.baseball": ("rec.sport", "rec.sport.baseball")}
    for bad, match in ((["a.b", "a"], "leaf"), (["a", "a"], "distinct"), (["a..b"], "empty"),
                       ([3], "non-empty str")):
        with pytest.raises(ValueError, match=match):
            taxonomy_from_names(bad)


def test_kernelised_form_equals_linear_scores():
    s = TaxonomyStructure(3, [("a", "b"), ("a", "c"), ("d",)])
    rng = np.random.default_rng(1)
    Xtr, Xte = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    beta = rng.normal(size=(6, 3))
    # w = sum_i sum_c beta_ic phi(x_i) (x) Lambda(c)
    w = sum(beta[i, c] * dense_phi(s, Xtr[i], c) for i in range(6) for c in range(3))
    np.testing.assert_allclose(s.kernel_class_scores(Xte @ Xtr.T, beta),
                               s.batch_class_scores(w, Xte), atol=1e-10)


# -- flat wrapper -------------------------------------------------------------------
def test_identity_descriptions_equal_one_hot_and_sparse_equals_dense():
    X, y = blobs(60, 4, 3, seed=2)
    labels = np.array(["a", "b", "c"])[y]
    onehot = MultiClassSVM(C=0.5, tol=1e-6, method="1-slack").fit(X, labels)
    desc = MultiClassSVM("description", C=0.5, tol=1e-6, method="1-slack",
                         class_descriptions=np.eye(3)).fit(X, labels)
    sparse = MultiClassSVM(C=0.5, tol=1e-6, method="1-slack").fit(sp.csr_matrix(X), labels)
    np.testing.assert_allclose(desc.coef_, onehot.coef_, atol=1e-8)
    np.testing.assert_allclose(sparse.coef_, onehot.coef_, atol=1e-8)
    np.testing.assert_allclose(desc.intercept_, onehot.intercept_, atol=1e-8)
    assert list(onehot.classes_) == ["a", "b", "c"]
    assert onehot.decision_function(X).shape == (60, 3)
    assert onehot.score(X, labels) > 0.8


def test_onehot_matches_crammer_singer_objective():
    svm = pytest.importorskip("sklearn.svm")
    X, y = blobs(80, 5, 4, seed=9)
    C = 0.2
    ref = svm.LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=False, tol=1e-10,
                        max_iter=100000).fit(X, y)
    ours = MultiClassSVM(C=C, fit_intercept=False, tol=1e-7, method="1-slack").fit(X, y)
    # the default solver (BCFW) stops at a relative duality gap of tol
    default = MultiClassSVM(C=C, fit_intercept=False, tol=1e-4, random_state=0).fit(X, y)

    def objective(W):
        S = X @ W.T
        h = np.max(S + 1 - np.eye(4)[y], axis=1) - S[np.arange(len(y)), y]
        return 0.5 * (W ** 2).sum() + C * h.sum()

    assert objective(ours.coef_) == pytest.approx(ours.objective_, rel=1e-10)
    np.testing.assert_allclose(objective(ours.coef_), objective(ref.coef_), rtol=1e-5)
    assert objective(default.coef_) == pytest.approx(default.objective_, rel=1e-10)
    assert objective(ref.coef_) * (1 - 1e-6) <= default.objective_ \
        <= objective(ref.coef_) * (1 + 1e-4)


def test_description_predicts_classes_without_examples():
    rng = np.random.default_rng(4)
    # attributes: "red", "round"; class 2 (never seen) is red and round
    D = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    X = np.vstack([rng.normal([3, 0], 0.3, size=(30, 2)), rng.normal([0, 3], 0.3, size=(30, 2))])
    y = np.repeat(["apple-ish", "ball-ish"], 30)
    m = MultiClassSVM("description", class_descriptions=D, C=1.0, fit_intercept=False,
                      classes=["apple-ish", "ball-ish", "red-ball"]).fit(X, y)
    assert list(m.classes_) == ["apple-ish", "ball-ish", "red-ball"]
    np.testing.assert_allclose(m.coef_[2], m.coef_[0] + m.coef_[1])
    # an input whose two attribute scores are both positive belongs to the unseen class
    x = np.linalg.solve(m.attribute_coef_, np.ones(2))
    assert m.predict(x[None, :])[0] == "red-ball"
    assert "red-ball" not in set(m.predict(X))


def test_taxonomy_wrapper_and_sklearn_clone():
    X, y = blobs(50, 3, 4, seed=8)
    names = np.array(["comp.mac", "comp.pc", "rec.autos", "sci.med"])[y]
    tax = {n: tuple(n.split(".")) for n in names}
    m = MultiClassSVM("taxonomy", taxonomy=tax, C=1.0).fit(X, names)
    assert m.score(X, names) > 0.7
    sk_base = pytest.importorskip("sklearn.base")
    clone = sk_base.clone(m)
    assert clone.get_params()["taxonomy"] == tax
    restored = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(restored.predict(X), m.predict(X))


def test_save_and_load(tmp_path):
    import linclass
    X, y = blobs(40, 3, 3, seed=6)
    m = MultiClassSVM("taxonomy", taxonomy={0: ("a", "b"), 1: ("a", "c"), 2: ("d",)}).fit(X, y)
    m.save(tmp_path / "model.npz")
    loaded = linclass.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.predict(X), m.predict(X))
    np.testing.assert_allclose(loaded.decision_function(X), m.decision_function(X))


# -- bad input -----------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors():
    X, y = blobs(10, 2, 2, seed=0)
    s = MultiClassStructure(2, 2)
    for C in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="C"):
            StructuredSVM(s, C=C).fit(X, y)
    with pytest.raises(ValueError, match="method"):
        StructuredSVM(s, method="3-slack").fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        StructuredSVM(s).fit(X, np.where(y == 1, 5, 0))
    with pytest.raises(ValueError, match="10 examples but Y has 9"):
        StructuredPerceptron(s).fit(X, y[:9])
    with pytest.raises(ValueError, match="not a Structure"):
        StructuredSVM(object()).fit(X, y)
    with pytest.raises(ValueError, match="not a leaf"):
        TaxonomyStructure(2, [("a", "b"), ("c",)]).check_output(X[0], ("a", "x"))
    with pytest.raises(ValueError, match="not a leaf"):
        TaxonomyStructure(2, [("a", "b"), ("c",)]).leaf_index(("a",))
    with pytest.raises(ValueError, match="ancestor"):
        TaxonomyStructure(2, [("a",), ("a", "b")])
    with pytest.raises(ValueError, match="description row"):
        MultiClassSVM("description", class_descriptions=np.eye(2),
                      classes=["p", "q"]).fit(X, np.array(["p", "r"] * 5))
    with pytest.raises(ValueError, match="leaf of the taxonomy"):
        MultiClassSVM("taxonomy", taxonomy={"p": ("p",), "q": ("q",)}).fit(
            X, np.array(["p", "r"] * 5))
    with pytest.raises(ValueError, match="zero diagonal"):
        MultiClassStructure(2, 2, loss_matrix=np.ones((2, 2)))

    class WrongDimension(TinyMultiLabel):
        def joint_feature(self, x, y):
            idx, val = super().joint_feature(x, y)
            return idx + self.n_features, val

    with pytest.raises(ValueError, match="outside the joint feature space"):
        StructuredSVM(WrongDimension(2)).fit([np.ones(2)], [(0, 1)])

    class SloppyDecoder(TinyMultiLabel):
        def loss_augmented_decode(self, w, x, y):
            return (1 - y[0], y[1]) if np.any(w) else (1 - y[0], 1 - y[1])

    rng = np.random.default_rng(0)
    Xm = list(rng.normal(size=(6, 2)))
    Ym = [(int(a), int(b)) for a, b in rng.integers(0, 2, (6, 2))]
    with pytest.raises(ValueError, match="not an exact argmax"):
        StructuredSVM(SloppyDecoder(2), C=10.0).fit(Xm, Ym)


def test_non_convergence_warns():
    X, y = blobs(30, 2, 3, seed=0)
    with pytest.warns(ConvergenceWarning):
        StructuredSVM(MultiClassStructure(2, 3), max_iter=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = StructuredSVM(MultiClassStructure(2, 3), tol=1e-3).fit(X, y)
    h = m.history_
    assert [r["iteration"] for r in h] == list(range(1, len(h) + 1))
    assert all(r["gap"] >= -1e-9 for r in h if r["gap"] is not None)
    assert h[-1]["violation"] <= 1e-3
