"""Sequence labelling: one label per token, scored by a linear chain.

``structure`` is the :class:`SequenceStructure` (emission and transition
features, Viterbi and loss-augmented Viterbi, Hamming loss) with its batched
fast paths; ``tagger`` the :class:`SequenceTagger` estimator (feature
templates, averaged structured perceptron in whole Cython epochs, or the
structural SVM); ``crf`` the linear-chain :class:`CRF` (forward-backward in
:mod:`linclass._core._crf`, L-BFGS / OWL-QN in ``_optimize``, sklearn-crfsuite's
interface) and ``hmm`` the generative :class:`HMM` on the same kernels
(``_crf_kernels`` holds their shared plumbing; ``_crf_compat`` the
python-crfsuite-like training log and tagger, ``_crfsuite_format`` the reader
of CRFsuite's model files).  Chunk F1 (conlleval) is in :mod:`linclass.metrics`.

May import: ``linclass.structured``, ``linclass.features``, ``linclass._core``,
``linclass._validation``, ``linclass.base``, ``linclass.metrics``.
"""
from .structure import SentenceBatch, SentenceFeatures, SequenceStructure
from .tagger import SequenceTagger
from .crf import CRF
from .hmm import HMM

__all__ = ["SentenceBatch", "SentenceFeatures", "SequenceStructure", "SequenceTagger", "CRF",
           "HMM"]
