"""Evaluation: every metric, plain numpy (no Cython, no scikit-learn).

Functions with a scikit-learn namesake take the same arguments and return the
same numbers (checked against scikit-learn in the tests); the few deliberate
differences are in each docstring.  By topic:

``classification``
    label predictions: accuracy, error rate, precision/recall/F1/F-beta,
    specificity, confusion matrix, classification report, class ratio.
``scores``
    ROC and coverage curves, ROC AUC (ranking accuracy of scores).
``probability``
    Brier score, log loss.
``selective``
    false positive / false negative rates, ranking error (= 1 - AUC, ties
    half), the coverage-accuracy curve of a reject option, average cost under
    a cost matrix.
``losses``
    margin losses with derivatives (0/1, hinge, logistic, exponential,
    squared) and the multi-class hinge loss.
``chunking``
    chunk precision/recall/F1 exactly as the CoNLL ``conlleval`` script,
    token and sentence accuracy of label sequences; sklearn-crfsuite's
    ``flat_*`` metrics and ``sequence_accuracy_score``.
``ranking``
    pairwise ranking accuracy, NDCG@k, MAP, MRR, precision@k, per-query tables.
``parsing``
    PARSEVAL labelled brackets (evalb / Collins conventions).
``plotting``
    ROC, coverage, margin-loss and learning-curve figures (needs matplotlib;
    not imported here: ``from linclass.metrics import plotting``).

Every name is importable from ``linclass.metrics`` itself.  May import:
``linclass._validation``, ``linclass.exceptions``, ``linclass.datasets``
(trees); nothing from the models.

References
----------
.. [Flach2012] P. Flach, *Machine Learning: The Art and Science of Algorithms
   that Make Sense of Data*, Cambridge University Press, 2012 (chapter 2:
   coverage plots, ROC plots, ranking accuracy, squared error of probability
   estimates; chapter 7: margin losses).
"""

# every public name of the topic modules, listed in each module's __all__
from . import (chunking, classification, losses, parsing, probability, ranking, scores,
               selective)
from ._checks import UndefinedMetricWarning
from .classification import *  # noqa: F401,F403
from .scores import *  # noqa: F401,F403
from .probability import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .chunking import *  # noqa: F401,F403
from .ranking import *  # noqa: F401,F403
from .parsing import *  # noqa: F401,F403
from .selective import *  # noqa: F401,F403

__all__ = ["UndefinedMetricWarning"]
for _module in (classification, scores, probability, losses, chunking, ranking, parsing,
                selective):
    __all__ += _module.__all__
del _module
