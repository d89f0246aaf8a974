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
    token and sentence accuracy of label sequences.
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
from ._checks import UndefinedMetricWarning
from .classification import (accuracy_score, class_ratio, classification_report, confusion_matrix,
                             error_rate, f1_score, fbeta_score, precision_recall_fscore_support,
                             precision_score, recall_score, specificity_score)
from .scores import (coverage_curve, roc_auc_score, roc_curve)
from .probability import (brier_score, brier_score_loss, log_loss)
from .losses import (MARGIN_LOSSES, MarginLoss, exponential_loss_margin, hinge_loss,
                     hinge_loss_margin, logistic_loss_margin, margin_loss, squared_loss_margin,
                     zero_one_loss_margin)
from .chunking import (CHUNK_SCHEMES, ConllevalCounts, chunk_f1, chunk_precision_recall_f1,
                       conlleval_counts, conlleval_report, conlleval_report_from_lines,
                       read_conlleval_lines, sentence_accuracy, token_accuracy)
from .ranking import (average_precision_per_query, mean_average_precision, mean_reciprocal_rank,
                      ndcg_at_k, pairwise_ranking_accuracy, precision_at_k, query_metrics,
                      ranking_report)
from .parsing import (COLLINS_DELETE_LABELS, labeled_brackets, parseval, parseval_counts)
from .selective import (average_cost, coverage_accuracy_curve, false_negative_rate,
                        false_positive_rate, ranking_error)

__all__ = [
    "UndefinedMetricWarning", "accuracy_score", "class_ratio", "classification_report",
    "confusion_matrix", "error_rate", "f1_score", "fbeta_score", "precision_recall_fscore_support",
    "precision_score", "recall_score", "specificity_score", "coverage_curve", "roc_auc_score",
    "roc_curve", "brier_score", "brier_score_loss", "log_loss", "MARGIN_LOSSES", "MarginLoss",
    "exponential_loss_margin", "hinge_loss", "hinge_loss_margin", "logistic_loss_margin",
    "margin_loss", "squared_loss_margin", "zero_one_loss_margin", "CHUNK_SCHEMES",
    "ConllevalCounts", "chunk_f1", "chunk_precision_recall_f1", "conlleval_counts",
    "conlleval_report", "conlleval_report_from_lines", "read_conlleval_lines", "sentence_accuracy",
    "token_accuracy", "average_precision_per_query", "mean_average_precision",
    "mean_reciprocal_rank", "ndcg_at_k", "pairwise_ranking_accuracy", "precision_at_k",
    "query_metrics", "ranking_report", "COLLINS_DELETE_LABELS", "labeled_brackets",
    "parseval_counts", "parseval", "average_cost", "coverage_accuracy_curve",
    "false_negative_rate", "false_positive_rate", "ranking_error",
]
