"""Collective classification: labels of the nodes of a graph, predicted jointly.

``structure`` is the :class:`Graph` container and the :class:`GraphStructure`
(node and edge features, loopy max-product belief propagation, ICM, exact
decoding on trees); ``collective`` the :class:`CollectiveClassifier`
estimator and ``induced_subgraph``.

May import: ``linclass.structured``, ``linclass._core``, ``linclass._validation``,
``linclass.base``.
"""
from .collective import CollectiveClassifier, induced_subgraph
from .structure import Graph, GraphStructure

__all__ = ["CollectiveClassifier", "Graph", "GraphStructure", "induced_subgraph"]
