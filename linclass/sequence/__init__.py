"""Sequence labelling: one label per token, scored by a linear chain.

``structure`` is the :class:`SequenceStructure` (emission and transition
features, Viterbi and loss-augmented Viterbi, Hamming loss) with its batched
fast paths; ``tagger`` the :class:`SequenceTagger` estimator (feature
templates, averaged structured perceptron in whole Cython epochs, or the
structural SVM).  Chunk F1 (conlleval) is in :mod:`linclass.metrics`.

May import: ``linclass.structured``, ``linclass.features``, ``linclass._core``,
``linclass._validation``, ``linclass.base``, ``linclass.metrics``.
"""
from .structure import SentenceBatch, SentenceFeatures, SequenceStructure
from .tagger import SequenceTagger

__all__ = ["SentenceBatch", "SentenceFeatures", "SequenceStructure", "SequenceTagger"]
