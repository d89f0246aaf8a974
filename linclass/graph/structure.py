"""Collective classification: one label per node of a graph, as a Structure.

Input ``x``: a :class:`Graph` -- a node feature matrix (CSR or dense,
``(n_nodes, n_node_features)``), an edge list ``(n_edges, 2)`` of node
indices, and optionally the labels of observed nodes (``-1`` = unknown).
Output ``y``: int64 labels in ``[0, n_labels)``, one per node.

Joint feature (``n_features = (F + 1) K + P``, F node features, K labels):

* node part: ``x_v`` (plus a constant 1, the label bias) in the block of
  label ``y_v``: index ``f * K + y_v`` (feature-major), bias ``F * K + y_v``;
* edge part: one count per label pair of an edge: ``directed=False`` (default)
  counts unordered pairs ``{y_u, y_v}`` (``P = K (K + 1) / 2``, the pair
  matrix is symmetric); ``directed=True`` counts ordered pairs
  ``(y_u, y_v)`` of the edge ``(u, v)`` (``P = K^2``; for citations
  ``(citing, cited)``).

Edges are used as given: a repeated edge (also ``(v, u)`` next to ``(u, v)``)
counts once per occurrence.  Edges to nodes outside ``[0, n_nodes)`` are an
error.  Self-loops ``(v, v)``: ``self_loops="unary"`` (default) keeps them --
they count the pair ``(y_v, y_v)`` like any edge, which is a unary term of
``v`` and is decoded as such; ``"error"`` refuses them; ``"drop"`` removes
them explicitly (``Graph.n_dropped_self_loops`` says how many).

Decoding (``inference``):

* ``"auto"`` (default): exact max-sum (Viterbi on a tree) when the graph
  without self-loops is a forest; otherwise loopy max-product belief
  propagation (damping, convergence check) followed by ICM from the BP
  labelling, which never lowers the score;
* ``"exact"`` (forests only), ``"bp"`` (BP + ICM), ``"icm"`` (ICM from the
  unary argmax).

Loss: Hamming loss over the nodes that are not observed, times
``loss_weight``, or with ``label_cost`` node-wise costs
``loss_weight * sum_v label_cost[y_v, y_hat_v]`` (a weighted Hamming loss);
loss-augmented decoding adds it to the unary scores.  No decoder here gives
an exact slack-rescaled argmax, so ``rescaling="slack"`` is refused when a
learner is configured.  On
loopy graphs the decoders are approximate: ``loss_augmented_decode`` returns
the true labelling when that scores higher than what inference found, so
the structural SVM's check never fails (Finley and Joachims, 2008).

Observed labels: nodes with ``observed[v] >= 0`` are clamped to that label
(their edges to unobserved nodes become unary terms) -- the setting of
collective classification with a partly labelled graph (Sen et al., 2008).

References
----------
B. Taskar, P. Abbeel, D. Koller. Discriminative probabilistic models for
relational data. UAI 2002.  P. Sen et al. Collective classification in
network data. AI Magazine 29(3), 2008.  T. Finley, T. Joachims. Training
structural SVMs when exact inference is intractable. ICML 2008.
"""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from .._core._graph import icm, loopy_bp, tree_decode
from .._validation import check_array
from ..structured.base import Structure

__all__ = ["Graph", "GraphStructure"]


class Graph:
    """A graph input: node features, edges, optional observed labels.

    Parameters
    ----------
    features : CSR matrix or 2-D array (n_nodes, n_node_features)
    edges : int array (n_edges, 2)
    observed : None or int array (n_nodes,)
        Known labels (``-1`` for unknown nodes); validated by the structure.
    self_loops : {"unary", "error", "drop"}
    """

    def __init__(self, features, edges, observed=None, *, self_loops="unary"):
        # the shared contract: canonical CSR (column indices checked: the
        # products with the weights index by them), real and finite values
        features = check_array(features, name="node features", allow_empty=True)
        n_nodes = features.shape[0]
        edges = np.asarray(edges)
        if edges.size == 0:
            edges = np.zeros((0, 2), dtype=np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2 or edges.dtype.kind not in "iu":
            raise ValueError("edges must be an integer array of shape (n_edges, 2), got %r"
                             % (edges.shape,))
        edges = edges.astype(np.int64)
        bad = np.flatnonzero((edges < 0).any(axis=1) | (edges >= n_nodes).any(axis=1))
        if bad.size:
            raise ValueError("edge %d (%d, %d) refers to a node outside [0, %d): edges to "
                             "missing nodes are not allowed"
                             % (bad[0], edges[bad[0], 0], edges[bad[0], 1], n_nodes))
        if self_loops not in ("unary", "error", "drop"):
            raise ValueError("self_loops must be 'unary', 'error' or 'drop', got %r"
                             % (self_loops,))
        loops = edges[:, 0] == edges[:, 1]
        self.n_dropped_self_loops = 0
        if loops.any():
            if self_loops == "error":
                k = np.flatnonzero(loops)[0]
                raise ValueError("edge %d is a self-loop (%d, %d); pass self_loops='unary' "
                                 "or 'drop' to accept it" % (k, edges[k, 0], edges[k, 1]))
            if self_loops == "drop":
                self.n_dropped_self_loops = int(loops.sum())
                edges = edges[~loops]
                loops = loops[~loops]
        self.features = features
        self.edges = np.ascontiguousarray(edges)
        self.loops = loops
        self.n_nodes = n_nodes
        self.observed = None if observed is None else np.asarray(observed)
        self._topology = None

    def topology(self):
        """Cached message-passing arrays of the edges that are not self-loops."""
        if self._topology is None:
            n = self.n_nodes
            E = self.edges[~self.loops]
            m = E.shape[0]
            # slot 2e: E[e,0] -> E[e,1] (received by E[e,1]); slot 2e+1: received by E[e,0]
            receiver = np.empty(2 * m, dtype=np.int64)
            receiver[0::2] = E[:, 1]
            receiver[1::2] = E[:, 0]
            sender = np.empty(2 * m, dtype=np.int64)
            sender[0::2] = E[:, 0]
            sender[1::2] = E[:, 1]
            order = np.argsort(receiver, kind="stable")
            in_slots = np.ascontiguousarray(order.astype(np.int64))
            in_indptr = np.concatenate([[0], np.cumsum(np.bincount(receiver, minlength=n))])
            # forest test: no cycles (also no repeated edges) among the non-loop edges
            adj = sp.coo_matrix((np.ones(m), (E[:, 0], E[:, 1])), shape=(n, n)).tocsr()
            n_comp, comp = connected_components(adj, directed=False)
            sym = (adj + adj.T).tocsr()
            is_forest = m == n - n_comp and (sym.data <= 1).all() if m else True
            self._topology = dict(E=E, in_slots=in_slots,
                                  in_indptr=in_indptr.astype(np.int64), sender=sender,
                                  is_forest=bool(is_forest), n_components=n_comp,
                                  components=comp, sym=sym)
        return self._topology

    def __repr__(self):
        return "Graph(%d nodes, %d edges)" % (self.n_nodes, self.edges.shape[0])


class GraphStructure(Structure):
    """Pairwise Markov network over node labels (see the module docs).

    Parameters
    ----------
    n_node_features : int
    n_labels : int
    directed : bool, default=False
    inference : {"auto", "exact", "bp", "icm"}, default="auto"
    max_iter : int, default=50
        BP sweeps (and ICM sweeps).
    damping : float in [0, 1), default=0.5
        ``m <- (1 - damping) m_new + damping m_old``.
    tol : float, default=1e-6
        BP stops when no message changes by more than ``tol``.
    loss_weight : float, default=1.0
    label_cost : None or array of shape (n_labels, n_labels), default=None
        Node-wise costs: ``label_cost[a, b]`` is the cost of predicting label
        ``b`` at a node whose true label is ``a`` (finite, >= 0, zero on the
        diagonal).  None: 1 off the diagonal (Hamming loss).
    self_loops : {"unary", "error", "drop"}, default="unary"
        How :meth:`batch_inputs` builds graphs from ``(features, edges)`` pairs.
    """

    def __init__(self, n_node_features, n_labels, *, directed=False, inference="auto",
                 max_iter=50, damping=0.5, tol=1e-6, loss_weight=1.0, self_loops="unary",
                 label_cost=None):
        if int(n_node_features) < 1 or int(n_labels) < 1:
            raise ValueError("n_node_features and n_labels must be positive")
        if inference not in ("auto", "exact", "bp", "icm"):
            raise ValueError("inference must be 'auto', 'exact', 'bp' or 'icm', got %r"
                             % (inference,))
        if not 0.0 <= float(damping) < 1.0:
            raise ValueError("damping must be in [0, 1), got %r" % (damping,))
        if int(max_iter) < 1 or float(tol) < 0 or not float(loss_weight) > 0:
            raise ValueError("max_iter must be >= 1, tol >= 0 and loss_weight > 0")
        self.n_node_features = int(n_node_features)
        self.n_labels = K = int(n_labels)
        self.directed = bool(directed)
        self.inference = inference
        self.max_iter = int(max_iter)
        self.damping = float(damping)
        self.tol = float(tol)
        self.loss_weight = float(loss_weight)
        self.self_loops = self_loops
        self.label_cost = None
        if label_cost is not None:
            try:
                cost = np.array(label_cost, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("label_cost must be an array of numbers") from None
            if cost.shape != (K, K) or not np.isfinite(cost).all() or (cost < 0).any() \
                    or np.any(np.diag(cost) != 0):
                raise ValueError("label_cost must be a finite (n_labels, n_labels) = (%d, %d) "
                                 "array, >= 0 with a zero diagonal" % (K, K))
            self.label_cost = cost
        self.n_node_weights = (self.n_node_features + 1) * K
        if self.directed:
            self.pair_index = np.arange(K * K, dtype=np.int64).reshape(K, K)
            n_pair = K * K
        else:
            rows, cols = np.triu_indices(K)
            self.pair_index = np.empty((K, K), dtype=np.int64)
            self.pair_index[rows, cols] = np.arange(rows.size)
            self.pair_index[cols, rows] = np.arange(rows.size)
            n_pair = rows.size
        self.pair_index += self.n_node_weights
        self.n_features = self.n_node_weights + n_pair
        self.last_info_ = {}

    # -- inputs and outputs ----------------------------------------------------
    def as_graph(self, x):
        if isinstance(x, Graph):
            g = x
        else:
            try:
                features, edges = x[:2]
            except (TypeError, ValueError):
                raise ValueError("a graph input must be a Graph or a pair (features, edges)") \
                    from None
            g = Graph(features, edges, x[2] if len(x) > 2 else None, self_loops=self.self_loops)
        if g.features.shape[1] != self.n_node_features:
            raise ValueError("graph has %d node features, the structure expects %d"
                             % (g.features.shape[1], self.n_node_features))
        if g.observed is not None:
            self._labels(g, g.observed, allow_unknown=True)
        return g

    def batch_inputs(self, X):
        return [self.as_graph(x) for x in X]

    def _labels(self, g, y, allow_unknown=False):
        y = np.asarray(y)
        if y.shape != (g.n_nodes,) or (y.size and y.dtype.kind not in "iu"):
            raise ValueError("labels must be an integer array with one entry per node "
                             "(%d), got shape %r" % (g.n_nodes, y.shape))
        y = y.astype(np.int64)
        low = -1 if allow_unknown else 0
        if y.size and (y.min() < low or y.max() >= self.n_labels):
            raise ValueError("labels must be in [%d, %d)" % (low, self.n_labels))
        return y

    def check_output(self, x, y):
        g = self.as_graph(x)
        y = self._labels(g, y)
        if g.observed is not None:
            known = g.observed >= 0
            if np.any(y[known] != g.observed[known]):
                raise ValueError("the output contradicts the graph's observed labels")

    # -- scores ------------------------------------------------------------------
    def _unpack(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError("w must have shape (%d,), got %r" % (self.n_features, w.shape))
        K = self.n_labels
        W = w[:self.n_node_features * K].reshape(self.n_node_features, K)
        bias = w[self.n_node_features * K:self.n_node_weights]
        pair = np.ascontiguousarray(w[self.pair_index])
        return W, bias, pair

    def unary_scores(self, w, g):
        """(n_nodes, K) node scores: features @ W + bias + self-loop terms."""
        W, bias, pair = self._unpack(w)
        U = np.asarray(g.features @ W) + bias
        if g.loops.any():
            counts = np.bincount(g.edges[g.loops, 0], minlength=g.n_nodes)
            U = U + counts[:, None] * np.diag(pair)[None, :]
        if not np.isfinite(U).all():
            # features near the largest double overflow features @ W (or give
            # inf - inf): decoding such scores picks arbitrary labels
            data = g.features.data if sp.issparse(g.features) else g.features
            raise ValueError("the node scores of this graph are not finite (NaN or "
                             "infinity): the node features hold values too large for "
                             "double precision (largest magnitude %.3g); scale them as "
                             "they were scaled for fit"
                             % (float(np.abs(data).max()) if data.size else 0.0))
        return np.ascontiguousarray(U, dtype=np.float64)

    def joint_feature(self, x, y):
        g = self.as_graph(x)
        y = self._labels(g, y)
        K = self.n_labels
        X = sp.csr_matrix(g.features) if not sp.issparse(g.features) else g.features
        rows = np.repeat(np.arange(g.n_nodes), np.diff(X.indptr))
        node_idx = X.indices.astype(np.int64) * K + y[rows]
        bias_idx = self.n_node_features * K + y
        E = g.edges
        pair_idx = self.pair_index[y[E[:, 0]], y[E[:, 1]]]
        idx = np.concatenate([node_idx, bias_idx, pair_idx])
        val = np.concatenate([X.data, np.ones(g.n_nodes), np.ones(E.shape[0])])
        return idx, val

    def score(self, w, x, y):
        g = self.as_graph(x)
        y = self._labels(g, y)
        _, _, pair = self._unpack(w)
        U = self.unary_scores(w, g)
        E = g.topology()["E"]
        return float(U[np.arange(g.n_nodes), y].sum() + pair[y[E[:, 0]], y[E[:, 1]]].sum())

    # -- inference ----------------------------------------------------------------
    def _map(self, U, pair, g, observed):
        """MAP labelling for unary scores U (observed nodes clamped)."""
        if observed is not None and (observed >= 0).any():
            U = U.copy()
            known = np.flatnonzero(observed >= 0)
            U[known] = -1e300
            U[known, observed[known]] = 0.0
            # clamping via unary scores keeps the topology (and its forest test) intact
        top = g.topology()
        method = self.inference
        if method == "auto":
            method = "exact" if top["is_forest"] else "bp"
        if method == "exact":
            if not top["is_forest"]:
                raise ValueError("inference='exact' needs a forest; this graph has cycles "
                                 "(or repeated edges)")
            return self._tree(U, pair, g, top)
        if method == "icm":
            labels = np.ascontiguousarray(U.argmax(axis=1).astype(np.int64))
        else:
            beliefs, n_iter, converged = loopy_bp(
                unary=U, pair=pair, in_indptr=top["in_indptr"], in_slots=top["in_slots"],
                n_slots=top["in_slots"].size, max_iter=self.max_iter, damping=self.damping,
                tol=self.tol)
            self.last_info_ = {"bp_iterations": n_iter, "bp_converged": converged}
            labels = np.ascontiguousarray(beliefs.argmax(axis=1).astype(np.int64))
        icm(unary=U, pair=pair, in_indptr=top["in_indptr"], in_slots=top["in_slots"],
            neighbor=top["sender"], labels=labels, max_iter=self.max_iter)
        return labels

    def _tree(self, U, pair, g, top):
        n = g.n_nodes
        sym = top["sym"]
        parent = np.full(n, -1, dtype=np.int64)
        sizes = np.bincount(top["components"], minlength=top["n_components"])
        single = sizes[top["components"]] == 1
        order_parts = [np.flatnonzero(single)]          # isolated nodes: their own roots
        seen = single.copy()
        for root in np.flatnonzero(~single):
            if seen[root]:
                continue
            nodes, preds = breadth_first_order(sym, root, directed=False,
                                               return_predecessors=True)
            seen[nodes] = True
            order_parts.append(nodes)
            parent[nodes[1:]] = preds[nodes[1:]]
        order = np.concatenate(order_parts).astype(np.int64)
        E = top["E"]
        child_first = np.zeros(n, dtype=np.int8)
        child_first[E[parent[E[:, 0]] == E[:, 1], 0]] = 1   # edge stored as (child, parent)
        return tree_decode(unary=U, pair=pair, order=order, parent=parent,
                           child_first=child_first)

    def max_marginals(self, w, x):
        """BP beliefs (n_nodes, K); exact max-marginals (up to a constant per node)
        on a forest."""
        g = self.as_graph(x)
        _, _, pair = self._unpack(w)
        top = g.topology()
        beliefs, _, _ = loopy_bp(unary=self.unary_scores(w, g), pair=pair,
                                 in_indptr=top["in_indptr"], in_slots=top["in_slots"],
                                 n_slots=top["in_slots"].size, max_iter=self.max_iter,
                                 damping=self.damping, tol=self.tol)
        return beliefs

    def decode(self, w, x):
        g = self.as_graph(x)
        _, _, pair = self._unpack(w)
        return self._map(self.unary_scores(w, g), pair, g, g.observed)

    def loss_augmented_decode(self, w, x, y):
        g = self.as_graph(x)
        y = self._labels(g, y)
        _, _, pair = self._unpack(w)
        U = self.unary_scores(w, g)
        scored = np.ones(g.n_nodes, dtype=bool) if g.observed is None else g.observed < 0
        if self.label_cost is None:
            U_aug = U + self.loss_weight * scored[:, None]
            U_aug[np.arange(g.n_nodes), y] -= self.loss_weight * scored
        else:                       # node v, label c: + loss_weight * label_cost[y_v, c]
            U_aug = U + self.loss_weight * scored[:, None] * self.label_cost[y]
        y_hat = self._map(U_aug, pair, g, g.observed)
        if not self._exact(g):
            # approximate inference: never return something worse than the truth
            if (self.score(w, g, y_hat) + self.loss(y, y_hat, g)
                    < self.score(w, g, y)):
                return y.copy()
        return y_hat

    def _exact(self, g):
        return self.inference in ("auto", "exact") and g.topology()["is_forest"]

    def loss(self, y, y_hat, x=None):
        y = np.asarray(y)
        y_hat = np.asarray(y_hat)
        if y.shape != y_hat.shape:
            raise ValueError("label arrays of different lengths")
        if self.label_cost is not None:
            K = self.n_labels
            for name, v in (("y", y), ("y_hat", y_hat)):
                if v.size and (v.dtype.kind not in "iu" or v.min() < 0 or v.max() >= K):
                    raise ValueError("%s must hold labels in [0, %d)" % (name, K))
            return self.loss_weight * float(self.label_cost[y.astype(np.int64),
                                                            y_hat.astype(np.int64)].sum())
        return self.loss_weight * float(np.count_nonzero(y != y_hat))
