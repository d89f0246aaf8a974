"""Feature maps: templates that turn tokens into integer feature ids.

* :class:`FeatureTemplate` -- sentences (token columns, or python-crfsuite
  feature dicts) -> ``(X, lengths)``, a CSR matrix with one row per token;
* :func:`parse_template` -- the template mini-language;
* :data:`CRFSUITE_CHUNKING`, :data:`POS_TEMPLATE`, :data:`NER_TEMPLATE`,
  :data:`NER_WORD_TEMPLATE`, :data:`CONLL2002_NER` -- predefined templates,
  by name in :data:`NAMED_TEMPLATES` / :func:`named_template`.

May import: ``linclass._core`` (hashing and feature extraction),
``linclass.base``, ``linclass.exceptions``; nothing from the models.
"""
from .templates import (CONLL2002_NER, CRFSUITE_CHUNKING, NAMED_TEMPLATES, NER_TEMPLATE,
                        NER_WORD_TEMPLATE, POS_TEMPLATE, Atom, FeatureTemplate, TemplateItem,
                        named_template, parse_template)

__all__ = ["FeatureTemplate", "parse_template", "TemplateItem", "Atom",
           "CRFSUITE_CHUNKING", "POS_TEMPLATE", "CONLL2002_NER", "NER_TEMPLATE",
           "NER_WORD_TEMPLATE", "NAMED_TEMPLATES", "named_template"]
