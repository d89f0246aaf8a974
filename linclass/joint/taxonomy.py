"""Hierarchical classification over a taxonomy (classes are the leaves of a tree).

A class is a leaf, identified by its path ``y = (y_1, ..., y_d)`` from the
root.  ``Lambda(y)`` stacks the indicator vectors of every node on the path
(the root excluded, since it is on every path), so
``w . Phi(x, y) = sum over nodes v on the path of w_v . x``: a class's weight
vector is the sum of the weight vectors of its ancestors, and sibling classes
share strength through their common ancestors.  The loss is the tree distance
(number of edges between the two leaves) unless the user gives a loss matrix.

Decoding is exact: the scores of all leaves are computed at once (one matrix
product, see :class:`~linclass.structured.MultiClassStructure`), which is the
same as walking and scoring every root-to-leaf path.  The kernelised form
``sum_i beta_i k(x_i, x) Lambda(y_i) . Lambda(y)`` is available through
:meth:`~linclass.structured.MultiClassStructure.kernel_class_scores`, with
``Lambda(y) . Lambda(y')`` the number of common ancestors (the depth of the
lowest common ancestor).

References
----------
L. Cai, T. Hofmann. Hierarchical document categorization with support vector
machines. CIKM 2004.
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005, sec. 4.1.
"""
import numbers

import numpy as np

from .structure import MultiClassStructure

__all__ = ["TaxonomyStructure", "taxonomy_from_names"]


class TaxonomyStructure(MultiClassStructure):
    """Classes are the leaves of a tree given by their root-to-leaf paths.

    Parameters
    ----------
    n_features_x : int
        Dimension of the input vectors.
    paths : sequence of tuples
        One path per class (leaf), each a non-empty tuple of node names from
        the child of the root down to the leaf, e.g.
        ``("comp", "sys", "mac", "hardware")``.  Output ``c`` of the structure
        is leaf ``paths[c]``.  No path may be a prefix of another (leaves are
        leaves) and paths must be distinct.
    loss_matrix : array-like of shape (n_leaves, n_leaves), optional
        Default: the tree distance between leaves.
    ancestor_weight : float, default=1.0
        Weight of the inner (non-leaf) nodes in ``Lambda``: a class's entry is
        1 for its own leaf node and ``ancestor_weight`` for each ancestor
        (Cai & Hofmann's scaled path indicators).  Since ``||w_v||^2`` is
        penalised while ``ancestor_weight * w_v`` enters the scores, a small
        weight regularises the shared (ancestor) part more strongly; 0 gives
        the flat one-hot model, which every weighting contains as a special
        case (the leaf blocks alone).  Must be a finite number >= 0.  The
        default loss (tree distance) does not depend on it.

    Attributes
    ----------
    nodes : list of tuples
        Every non-root node, as its path prefix; node ``k`` is attribute ``k``
        of ``Lambda``.
    depths : ndarray of shape (n_leaves,)
    """

    def __init__(self, n_features_x, paths, *, loss_matrix=None, ancestor_weight=1.0):
        if isinstance(ancestor_weight, bool) or not isinstance(ancestor_weight, numbers.Real) \
                or not np.isfinite(ancestor_weight) or ancestor_weight < 0:
            raise ValueError("ancestor_weight must be a finite number >= 0, got %r"
                             % (ancestor_weight,))
        self.ancestor_weight = float(ancestor_weight)
        paths = [tuple(p) if isinstance(p, (tuple, list)) else (p,) for p in paths]
        if not paths:
            raise ValueError("a taxonomy needs at least one leaf path")
        for p in paths:
            if len(p) == 0:
                raise ValueError("a leaf path must have at least one node")
        if len(set(paths)) != len(paths):
            seen = set()
            dup = next(p for p in paths if p in seen or seen.add(p))
            raise ValueError("leaf path %r is given twice" % (dup,))
        prefixes = {p[:k] for p in paths for k in range(1, len(p))}
        inner = [p for p in paths if p in prefixes]
        if inner:
            raise ValueError("path %r is a leaf but also the ancestor of another leaf; "
                             "classes must be leaves" % (inner[0],))
        nodes = sorted({p[:k] for p in paths for k in range(1, len(p) + 1)},
                       key=lambda t: (len(t), [str(s) for s in t]))
        self.nodes = nodes
        self.paths = paths
        node_index = {v: k for k, v in enumerate(nodes)}
        Lam = np.zeros((len(paths), len(nodes)))
        for c, p in enumerate(paths):
            for k in range(1, len(p) + 1):
                Lam[c, node_index[p[:k]]] = 1.0
        self.depths = Lam.sum(axis=1)
        common = Lam @ Lam.T                          # depth of the lowest common ancestor
        self._tree_distance = self.depths[:, None] + self.depths[None, :] - 2.0 * common
        if loss_matrix is None:
            loss_matrix = self._tree_distance.copy()
        if self.ancestor_weight != 1.0:
            for c, p in enumerate(paths):
                for k in range(1, len(p)):            # the ancestors, not the leaf
                    Lam[c, node_index[p[:k]]] = self.ancestor_weight
        self._leaf_index = {p: c for c, p in enumerate(paths)}
        super().__init__(n_features_x, len(paths), class_descriptions=Lam,
                         loss_matrix=loss_matrix)

    def leaf_index(self, path):
        """The output (class index) of a leaf path; ``ValueError`` if it is not a leaf."""
        key = tuple(path) if isinstance(path, (tuple, list)) else (path,)
        try:
            return self._leaf_index[key]
        except (KeyError, TypeError):
            raise ValueError("path %r is not a leaf of the taxonomy (it has %d leaves, "
                             "e.g. %r)" % (path, len(self.paths), self.paths[0])) from None

    def path_of(self, leaf):
        """The path of output ``leaf``."""
        return self.paths[self._check_class(leaf)]

    def tree_distance(self, y, y_hat):
        """Number of edges between leaves ``y`` and ``y_hat`` (independent of a user loss)."""
        a, b = self._check_class(y), self._check_class(y_hat)
        return float(self._tree_distance[a, b])

    def _check_class(self, y):
        if isinstance(y, tuple):
            if y not in self._leaf_index:
                raise ValueError("path %r is not a leaf of the taxonomy" % (y,))
            raise ValueError("taxonomy outputs are leaf indices; convert the path %r "
                             "with leaf_index(path)" % (y,))
        return super()._check_class(y)


def taxonomy_from_names(labels, *, sep=".", collapse_chains=False):
    """The taxonomy encoded in hierarchical class names (``comp.sys.mac.hardware``).

    Parameters
    ----------
    labels : sequence of str
        Distinct class names; ``sep`` splits a name into its path from the
        child of the root to the leaf.
    sep : str
    collapse_chains : bool
        Merge every inner node that has a single child into that child (the
        nodes ``comp.sys.ibm`` and ``comp.sys.ibm.pc`` of
        ``comp.sys.ibm.pc.hardware``, the only group under them, vanish).  Such
        a node adds no branching but an extra weight vector for the classes
        below it, which then carry several copies of the same weights and are
        regularised less than their siblings.  The node names of the result
        are the joined path prefixes.

    Returns
    -------
    dict
        label -> path tuple, as ``MultiClassSVM(structure="taxonomy",
        taxonomy=...)`` takes it.

    Raises
    ------
    ValueError
        A label that is not a non-empty str, duplicate labels, an empty path
        component, or a label whose path is a prefix of another's (the
        classes must be leaves).
    """
    if not isinstance(sep, str) or not sep:
        raise ValueError("sep must be a non-empty str, got %r" % (sep,))
    labels = list(labels)
    for label in labels:
        if not isinstance(label, str) or not label:
            raise ValueError("class names must be non-empty str, got %r" % (label,))
    if len(set(labels)) != len(labels):
        raise ValueError("class names must be distinct")
    paths = [tuple(label.split(sep)) for label in labels]
    for label, path in zip(labels, paths):
        if "" in path:
            raise ValueError("class name %r has an empty path component" % label)
    TaxonomyStructure(1, paths)          # checks that every class is a leaf
    if not collapse_chains:
        return dict(zip(labels, paths))
    children = {}
    for path in paths:
        for k in range(len(path)):
            children.setdefault(path[:k], set()).add(path[k])
    out = {}
    for label, path in zip(labels, paths):
        kept = tuple(sep.join(path[:k]) for k in range(1, len(path) + 1)
                     if len(children.get(path[:k], ())) != 1)
        out[label] = kept
    return out
