"""Collective classification of the nodes of graphs.

:class:`CollectiveClassifier` learns the weights of
:class:`~linclass.graph.structure.GraphStructure` -- node features x label,
plus one weight per label pair of an edge -- with the structural SVM or the
structured perceptron, and labels all nodes of a graph jointly (exact on
forests, loopy max-product BP + ICM otherwise).

Two ways to use it:

* several labelled graphs: ``fit(graphs, labels)`` / ``predict(graphs)``;
* one big partly labelled graph (citation networks):
  :meth:`CollectiveClassifier.fit_graph` trains on the subgraph induced by the
  labelled nodes, :meth:`CollectiveClassifier.predict_graph` labels the other
  nodes with the known labels clamped (Sen et al., 2008).

References
----------
B. Taskar, P. Abbeel, D. Koller. Discriminative probabilistic models for
relational data. UAI 2002.  P. Sen, G. Namata, M. Bilgic, L. Getoor,
B. Gallagher, T. Eliassi-Rad. Collective classification in network data.
AI Magazine 29(3), 2008.
"""
import numpy as np

from .._validation import (check_classification_target, check_is_fitted, check_no_overflow,
                           check_positive)
from ..base import BaseEstimator
from .structure import Graph, GraphStructure
from ..structured.learners import StructuredPerceptron, StructuredSVM

__all__ = ["CollectiveClassifier", "Graph", "induced_subgraph"]


def induced_subgraph(features, edges, nodes):
    """Features and edges (renumbered) of the subgraph induced by ``nodes``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    n = features.shape[0]
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    new_index = np.full(n, -1, dtype=np.int64)
    new_index[nodes] = np.arange(nodes.size)
    keep = (new_index[edges[:, 0]] >= 0) & (new_index[edges[:, 1]] >= 0)
    return features[nodes], new_index[edges[keep]]


class CollectiveClassifier(BaseEstimator):
    """Joint labelling of graph nodes by a learned pairwise Markov network.

    Parameters
    ----------
    directed : bool, default=False
        Label-pair weights per ordered pair (edge direction matters) or per
        unordered pair.
    learner : {"svm", "perceptron"}, default="svm"
        1-slack structural SVM (margin rescaling, Hamming loss) or averaged
        structured perceptron.
    C : float, default=1.0
        SVM regularisation (sum of slacks over graphs).
    max_iter : int, default=100
        Cutting-plane iterations (SVM) or epochs (perceptron).
    tol : float, default=1e-3
    inference : {"auto", "exact", "bp", "icm"}, default="auto"
    bp_iter : int, default=50
    damping : float, default=0.5
    self_loops : {"unary", "error", "drop"}, default="unary"
        See :mod:`linclass.graph.structure`.
    random_state : None or int, default=0

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray
        The structure's weight vector.
    node_coef_ : ndarray (n_node_features, n_classes)
    intercept_ : ndarray (n_classes,)
    pair_coef_ : ndarray (n_classes, n_classes)
        Label-pair weights (symmetric unless ``directed``).
    """

    def __init__(self, *, directed=False, learner="svm", C=1.0, max_iter=100, tol=1e-3,
                 inference="auto", bp_iter=50, damping=0.5, self_loops="unary",
                 random_state=0):
        self.directed = directed
        self.learner = learner
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.inference = inference
        self.bp_iter = bp_iter
        self.damping = damping
        self.self_loops = self_loops
        self.random_state = random_state

    def _structure(self, n_node_features, n_labels):
        return GraphStructure(n_node_features, n_labels, directed=self.directed,
                              inference=self.inference, max_iter=self.bp_iter,
                              damping=self.damping, self_loops=self.self_loops)

    def _as_graph(self, x):
        if isinstance(x, Graph):
            return x
        if not isinstance(x, (tuple, list)) or len(x) not in (2, 3):
            raise ValueError("a graph must be a Graph or a tuple (features, edges[, observed])")
        return Graph(x[0], x[1], x[2] if len(x) == 3 else None, self_loops=self.self_loops)

    def fit(self, graphs, labels):
        """Learn from labelled graphs.

        Parameters
        ----------
        graphs : list of Graph or of (features, edges) tuples
        labels : list of arrays, one label per node
        """
        check_positive(self.max_iter, "max_iter", integer=True)
        if self.learner not in ("svm", "perceptron"):
            raise ValueError("learner must be 'svm' or 'perceptron', got %r" % (self.learner,))
        graphs = [self._as_graph(g) for g in graphs]
        labels = [np.asarray(y) for y in labels]
        if not graphs or len(graphs) != len(labels):
            raise ValueError("graphs and labels must be non-empty lists of equal length")
        for k, (g, y) in enumerate(zip(graphs, labels)):
            if y.shape != (g.n_nodes,):
                raise ValueError("graph %d has %d nodes but %r labels"
                                 % (k, g.n_nodes, y.shape))
        n_features = {g.features.shape[1] for g in graphs}
        if len(n_features) != 1:
            raise ValueError("all graphs must have the same number of node features")
        # one check of the labels for every classifier: one kind, not continuous,
        # no NaN/None/complex, at least two classes
        kinds = {y.dtype.kind for y in labels if y.size}
        # labels of different kinds across graphs (numbers in one, strings in
        # another) would be cast to one kind by concatenate: an object array
        # keeps them apart for the check below, which refuses the mix
        all_labels = np.concatenate([y.astype(object) for y in labels]) \
            if len(kinds) > 1 else np.concatenate(labels)
        for g in graphs:
            check_no_overflow(g.features, self)
        check_classification_target(all_labels, all_labels.size)
        self.classes_, encoded = np.unique(all_labels, return_inverse=True)
        splits = np.cumsum([y.size for y in labels])[:-1]
        Y = [part.astype(np.int64) for part in np.split(encoded, splits)]
        structure = self._structure(n_features.pop(), self.classes_.size)
        if self.learner == "svm":
            model = StructuredSVM(structure, C=self.C, max_iter=self.max_iter, tol=self.tol)
        else:
            model = StructuredPerceptron(structure, max_iter=self.max_iter,
                                         random_state=self.random_state)
        try:
            model.fit(graphs, Y)
        except ValueError as exc:                # the solver's errors name this model
            raise ValueError("CollectiveClassifier: %s" % exc) from None
        self.structure_ = structure
        self.coef_ = model.coef_
        self.n_iter_ = model.n_iter_
        W, bias, pair = structure._unpack(self.coef_)
        self.node_coef_, self.intercept_, self.pair_coef_ = W.copy(), bias.copy(), pair.copy()
        return self

    def predict(self, graphs):
        """Jointly decoded labels of every node of every graph (list of arrays)."""
        check_is_fitted(self, "coef_")
        out = []
        for x in graphs:
            g = self._as_graph(x)
            if g.observed is not None:
                g = Graph(g.features, g.edges, self._encode_known(g.observed, unknown=-1),
                          self_loops=self.self_loops)
            out.append(self.classes_[self._decode(g)])
        return out

    def _encode_known(self, known, unknown=None):
        """Class codes of known labels; entries equal to ``unknown`` stay -1."""
        known = np.asarray(known)
        encoded = np.full(known.shape, -1, dtype=np.int64)
        mask = np.ones(known.shape, dtype=bool) if unknown is None else known != unknown
        if known[mask].dtype.kind != self.classes_.dtype.kind and not (
                known[mask].dtype.kind in "iuf" and self.classes_.dtype.kind in "iuf"):
            if mask.any():
                raise ValueError("known labels contain classes not seen in fit")
            return encoded
        pos = np.searchsorted(self.classes_, known[mask])
        pos = np.minimum(pos, self.classes_.size - 1)
        if np.any(self.classes_[pos] != known[mask]):
            raise ValueError("known labels contain classes not seen in fit")
        encoded[mask] = pos
        return encoded

    # -- one partly labelled graph --------------------------------------------------
    def fit_graph(self, features, edges, labels, train_mask):
        """Fit on the subgraph induced by the nodes with ``train_mask`` True."""
        g = Graph(features, edges, self_loops=self.self_loops)   # edges in [0, n_nodes)
        train_mask = self._mask(train_mask, g.n_nodes)
        labels = self._node_labels(labels, g.n_nodes)
        nodes = np.flatnonzero(train_mask)
        sub_features, sub_edges = induced_subgraph(g.features, g.edges, nodes)
        return self.fit([Graph(sub_features, sub_edges, self_loops=self.self_loops)],
                        [labels[nodes]])

    def predict_graph(self, features, edges, labels, train_mask):
        """Labels of all nodes, the ``train_mask`` nodes clamped to ``labels``."""
        check_is_fitted(self, "coef_")
        g = Graph(features, edges, self_loops=self.self_loops)   # edges in [0, n_nodes)
        train_mask = self._mask(train_mask, g.n_nodes)
        labels = self._node_labels(labels, g.n_nodes)
        known = np.full(g.n_nodes, -1, dtype=np.int64)
        known[train_mask] = self._encode_known(labels[train_mask])
        g = Graph(g.features, g.edges, known, self_loops=self.self_loops)
        return self.classes_[self._decode(g)]

    def _decode(self, g):
        try:
            return self.structure_.decode(self.coef_, g)
        except ValueError as exc:               # non-finite scores: name this model
            raise ValueError("CollectiveClassifier: %s" % exc) from None

    @staticmethod
    def _node_labels(labels, n):
        labels = np.asarray(labels)
        if labels.shape != (n,):
            raise ValueError("labels must have one entry per node (%d), got shape %r"
                             % (n, labels.shape))
        return labels

    @staticmethod
    def _mask(mask, n):
        mask = np.asarray(mask)
        if mask.shape != (n,) or mask.dtype != bool:
            raise ValueError("train_mask must be a boolean array with one entry per node")
        return mask
