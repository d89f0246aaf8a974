"""Bridges to the libraries linclass's users already work in.

``nltk`` makes any linclass classifier an NLTK classifier (``train`` from
``[(featureset, label)]``, ``classify``, ``prob_classify``, ``labels``,
``show_most_informative_features``) and converts trees both ways between
:class:`linclass.datasets.Tree` and ``nltk.Tree``.  linclass never needs the
other library: it is imported only when a function needs one of its objects.

May import: ``linclass.base``, ``linclass._validation``, ``linclass.datasets``
and the public estimators (through ``linclass``); nothing imports from here.
"""
from .nltk import FeaturesetEncoder, NLTKClassifier, from_nltk_tree, to_nltk_tree

__all__ = ["FeaturesetEncoder", "NLTKClassifier", "from_nltk_tree", "to_nltk_tree"]
