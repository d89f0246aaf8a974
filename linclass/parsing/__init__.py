"""Constituency parsing: trees over a sentence, decoded by CKY.

``grammar`` holds the compiled CNF grammar, word signatures for unknown
words and the :class:`GrammarStructure` (rule features, Viterbi-CKY,
loss-augmented CKY with the labelled-bracket loss); ``spans`` the
:class:`SpanGrammarStructure` (the PCFG's log-probabilities as features, rule
indicators and hashed span features, beam-pruned CKY); ``parsers`` the estimators
:class:`PCFG` (relative-frequency estimates) and :class:`DiscriminativeParser`
(structured perceptron / SVM over the same chart) and the treebank
transforms.  PARSEVAL is in :mod:`linclass.metrics`.

May import: ``linclass.structured``, ``linclass.datasets`` (trees),
``linclass._core``, ``linclass._validation``, ``linclass.base``, ``linclass.metrics``.
"""
from .grammar import (CompiledGrammar, GrammarStructure, NoParseError, signature_backoffs,
                      word_signature)
from .parsers import PCFG, DiscriminativeParser, debinarize, treebank_to_cnf
from .spans import SpanGrammarStructure

__all__ = ["CompiledGrammar", "DiscriminativeParser", "GrammarStructure", "NoParseError", "PCFG",
           "SpanGrammarStructure", "debinarize", "signature_backoffs", "treebank_to_cnf", "word_signature"]
