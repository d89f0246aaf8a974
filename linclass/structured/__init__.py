"""Structured prediction: the Structure protocol and the learners written once against it.

* :class:`Structure` -- the protocol (``n_features``, ``joint_feature``,
  ``decode``, ``loss_augmented_decode``, ``loss``); see :mod:`linclass.structured.base`.
* :class:`StructuredPerceptron`, :class:`StructuredSVM` -- learners for any
  Structure (``learners``).

No task code lives here: each task has its own folder with its Structure and
estimators -- :mod:`linclass.joint` (multi-class, class descriptions,
taxonomies), :mod:`linclass.sequence`, :mod:`linclass.parsing`,
:mod:`linclass.alignment`, :mod:`linclass.graph`.  For convenience their
Structures are importable from here too (imported on first use, so that the
task folders may import this package without a cycle):

* :class:`MultiClassStructure`, :class:`TaxonomyStructure`,
  :class:`SequenceStructure`, :class:`GrammarStructure`,
  :class:`AlignmentStructure`, :class:`Graph`, :class:`GraphStructure`.

May import: ``linclass._core``, ``linclass._validation``, ``linclass.base``,
``linclass.exceptions`` -- never a task folder at import time.
"""
import importlib

from .base import Structure, check_joint_feature
from .learners import StructuredPerceptron, StructuredSVM

# task Structures re-exported here: name -> defining module
_TASK_STRUCTURES = {
    "MultiClassStructure": "linclass.joint.structure",
    "TaxonomyStructure": "linclass.joint.taxonomy",
    "SequenceStructure": "linclass.sequence.structure",
    "GrammarStructure": "linclass.parsing.grammar",
    "AlignmentStructure": "linclass.alignment.structure",
    "Graph": "linclass.graph.structure",
    "GraphStructure": "linclass.graph.structure",
}

__all__ = ["Structure", "check_joint_feature", "StructuredPerceptron", "StructuredSVM",
           *_TASK_STRUCTURES]


def __getattr__(name):
    try:
        module = _TASK_STRUCTURES[name]
    except KeyError:
        raise AttributeError("module 'linclass.structured' has no attribute %r" % name) from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_TASK_STRUCTURES))
