"""Pairwise sequence alignment with learned substitution scores.

``structure`` is the :class:`AlignmentStructure` (substitution and affine gap
features, Gotoh dynamic programming, global or local, loss-augmented
decoding); ``learner`` holds :class:`SubstitutionMatrix` (BLOSUM-style fixed
scores), :func:`align`, the :class:`AlignmentLearner` estimator and
``alignment_accuracy``.

May import: ``linclass.structured``, ``linclass.datasets``, ``linclass._core``,
``linclass._validation``, ``linclass.base``.
"""
from .learner import (Alignment, AlignmentLearner, SubstitutionMatrix, align, alignment_accuracy,
                      partners_from_rows, rows_from_partners)
from .structure import AlignmentStructure, SequencePair, inverse_partners, pair_index_matrix

__all__ = ["Alignment", "AlignmentLearner", "AlignmentStructure", "SequencePair",
           "SubstitutionMatrix", "align", "alignment_accuracy", "inverse_partners",
           "pair_index_matrix", "partners_from_rows", "rows_from_partners"]
