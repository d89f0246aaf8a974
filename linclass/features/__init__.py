"""Feature maps: templates that turn tokens into integer feature ids.

* :class:`FeatureTemplate` -- sentences (token columns, or python-crfsuite
  feature dicts) -> ``(X, lengths)``, a CSR matrix with one row per token;
* :func:`parse_template` -- the template mini-language;
* :data:`CRFSUITE_CHUNKING`, :data:`POS_TEMPLATE`, :data:`NER_TEMPLATE`,
  :data:`NER_WORD_TEMPLATE`, :data:`CONLL2002_NER` -- predefined templates,
  by name in :data:`NAMED_TEMPLATES` / :func:`named_template`;
* :class:`AmbiguityClasses` -- each word's set of training tags (jackknifed
  on the training sentences) as an extra token column;
* :class:`WordClusters` -- exchange-algorithm word clusters of the training
  text as an extra token column.

May import: ``linclass._core`` (hashing and feature extraction),
``linclass.base``, ``linclass.exceptions``; nothing from the models.
"""
from .ambiguity import AmbiguityClasses
from .clusters import WordClusters
from .templates import (CONLL2002_NER, CRFSUITE_CHUNKING, NAMED_TEMPLATES, NER_TEMPLATE,
                        NER_WORD_TEMPLATE, POS_TEMPLATE, Atom, FeatureTemplate, TemplateItem,
                        named_template, parse_template)

__all__ = ["FeatureTemplate", "parse_template", "TemplateItem", "Atom",
           "CRFSUITE_CHUNKING", "POS_TEMPLATE", "CONLL2002_NER", "NER_TEMPLATE",
           "NER_WORD_TEMPLATE", "NAMED_TEMPLATES", "named_template", "AmbiguityClasses",
           "WordClusters"]
