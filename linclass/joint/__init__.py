"""Flat outputs through joint feature maps ``Phi(x, y) = phi(x) (x) Lambda(y)``.

``structure`` is the multi-class Structure (one-hot classes, or classes
described by attribute vectors ``Lambda(y)``), ``taxonomy`` the classes as
leaves of a tree (ancestors share weights; the loss is the tree distance), and
``svm`` the :class:`MultiClassSVM` estimator that learns either with the
generic structural SVM of :mod:`linclass.structured`.

May import: ``linclass.structured`` (protocol and learners), ``linclass._core``,
``linclass._validation``, ``linclass.base``.
"""
from .structure import MultiClassStructure
from .svm import MultiClassSVM
from .taxonomy import TaxonomyStructure, taxonomy_from_names

__all__ = ["MultiClassSVM", "MultiClassStructure", "TaxonomyStructure", "taxonomy_from_names"]
