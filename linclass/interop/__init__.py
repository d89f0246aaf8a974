"""Bridges to the libraries linclass's users already work in.

``MaxentClassifier``, ``NaiveBayesClassifier`` and ``NLTKParser`` are
drop-ins for NLTK's classes of the same names (one import changes; see
:mod:`linclass.interop._nltk_dropin`); they are loaded, with NLTK, on first
access.  ``nltk`` also makes any linclass classifier an NLTK classifier (``train`` from
``[(featureset, label)]``, ``classify``, ``prob_classify``, ``labels``,
``show_most_informative_features``) and converts trees both ways between
:class:`linclass.datasets.Tree` and ``nltk.Tree``.  linclass never needs the
other library: it is imported only when a function needs one of its objects.

``liblinear_cli`` is LIBLINEAR's ``train`` / ``predict`` command line
(``linclass liblinear-train``, ``linclass liblinear-predict``).

May import: ``linclass.base``, ``linclass._validation``, ``linclass.datasets``,
``linclass.exceptions``, ``linclass.metrics``, the public estimators (through
``linclass``, ``linclass.linear``, ``linclass.parsing``); only ``linclass.cli``
imports from here (the LIBLINEAR commands).
"""
from .nltk import FeaturesetEncoder, NLTKClassifier, from_nltk_tree, to_nltk_tree

# NLTK's own classes, answered by linclass (issue #39), in ._nltk_dropin, which
# imports NLTK: loaded on the first access to one of these names
_DROPIN = ("MaxentClassifier", "ConditionalExponentialClassifier", "NaiveBayesClassifier",
           "NLTKParser", "treebank_tree")

__all__ = ["FeaturesetEncoder", "MaxentClassifier", "NLTKClassifier", "NLTKParser",
           "NaiveBayesClassifier", "from_nltk_tree", "to_nltk_tree", "treebank_tree"]


def __getattr__(name):
    if name in _DROPIN:                  # imports NLTK: only when asked for
        from . import _nltk_dropin
        return getattr(_nltk_dropin, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
