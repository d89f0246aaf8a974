"""linclass: linear classifiers and structured predictors.

Every model scores an input/output pair linearly, ``F(x, y) = w . Phi(x, y)``,
and predicts ``argmax_y F(x, y)``.  Models differ in the joint feature map
``Phi``, the decoder that finds the argmax, and the learner that fits ``w``.
"""
import importlib

__version__ = "0.1.0.dev0"

from .exceptions import (ConvergenceWarning, DataFormatError, ModelFormatError,
                         NotFittedError)
from .persistence import load

# public model name -> module defining it (imported on first use, so that
# ``import linclass`` stays cheap)
_MODELS = {
    "SequenceTagger": "sequence",
    "StructuredPerceptron": "structured",
    "StructuredSVM": "structured",
    "MultiClassSVM": "multiclass_svm",
    "FeatureTemplate": "features",
    "RankSVM": "ranking",
    "Perceptron": "perceptron",
    "LinearSVC": "svm",
    "CrammerSingerSVC": "multiclass",
    "WestonWatkinsSVC": "multiclass",
    "OneVsRestClassifier": "multiclass",
    "OneVsOneClassifier": "multiclass",
    "LeastSquaresClassifier": "least_squares",
    "RidgeClassifier": "least_squares",
    "LassoClassifier": "least_squares",
    "SVC": "svc",
    "KernelPerceptron": "kernel_perceptron",
    "SGDClassifier": "sgd",
    "MercerMap": "mercer",
    "LinearRegression": "linear_model",
    "Ridge": "linear_model",
    "Lasso": "linear_model",
    "MixtureNB": "mixture_nb",
    "MultinomialNB": "naive_bayes",
    "BernoulliNB": "naive_bayes",
    "LogisticRegression": "logistic",
    "MaxEnt": "maxent",
    "AlignmentLearner": "alignment",
    "SubstitutionMatrix": "alignment",
    "CollectiveClassifier": "collective",
    "PCFG": "parsing",
    "DiscriminativeParser": "parsing",
}

__all__ = ["__version__", "load", "ConvergenceWarning", "DataFormatError",
           "ModelFormatError", "NotFittedError"] + sorted(_MODELS)


def __getattr__(name):
    try:
        module = _MODELS[name]
    except KeyError:
        raise AttributeError("module 'linclass' has no attribute %r" % name) from None
    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODELS))
