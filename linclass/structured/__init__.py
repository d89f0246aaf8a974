"""Structured prediction: the Structure protocol, its problems and the generic learners.

* :class:`Structure` -- the protocol (``n_features``, ``joint_feature``,
  ``decode``, ``loss_augmented_decode``, ``loss``); see :mod:`linclass.structured.base`.
* :class:`MultiClassStructure` -- one-hot or class-description multi-class problems.
* :class:`TaxonomyStructure` -- classes as leaves of a tree, tree-distance loss.
* :class:`SequenceStructure` -- linear-chain sequence labelling (Viterbi, Hamming loss).
* :class:`GrammarStructure` -- constituency parsing (CKY, labelled-bracket loss).
* :class:`AlignmentStructure` -- pairwise sequence alignment (Gotoh DP, affine gaps).
* :class:`GraphStructure` -- collective classification (BP / ICM / exact on trees).
* :class:`StructuredPerceptron`, :class:`StructuredSVM` -- learners for any Structure.
"""
from .base import Structure, check_joint_feature
from .learners import StructuredPerceptron, StructuredSVM
from .multiclass import MultiClassStructure
from .taxonomy import TaxonomyStructure
from .sequence import SequenceStructure
from .grammar import GrammarStructure
from .alignment import AlignmentStructure
from .graph import Graph, GraphStructure

__all__ = ["Structure", "check_joint_feature", "MultiClassStructure", "TaxonomyStructure",
           "SequenceStructure", "GrammarStructure", "AlignmentStructure", "Graph", "GraphStructure",
           "StructuredPerceptron", "StructuredSVM"]
