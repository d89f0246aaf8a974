"""Before ``fit``, every public model raises ``NotFittedError`` (a ``ValueError``
and an ``AttributeError``, and scikit-learn's own type when it is installed)
from each of its prediction methods, never an AttributeError about a missing
attribute or a crash."""
import numpy as np
import pytest

import linclass
import linclass.datasets.trees
from linclass._registry import PUBLIC_MODELS
from linclass.exceptions import NotFittedError

LR = linclass.LogisticRegression
KERNEL_FUNCTIONS = {"KernelFunction", "SumKernel", "ProductKernel", "ScaledKernel",
                    "NormalizedKernel", "SpectrumKernel", "SubsequenceKernel"}
# usable without fit: given their tables at construction
USABLE_UNFITTED = {"PCFG", "SubstitutionMatrix"}
METHODS = ("predict", "decision_function", "predict_proba", "predict_log_proba",
           "transform", "score", "score_samples", "predict_marginals")


def _unfitted(name):
    cls = getattr(linclass, name)
    wrapped = {"OneVsRestClassifier", "OneVsOneClassifier", "CostSensitiveClassifier",
               "RejectOption", "ThresholdTuner", "PriorShiftClassifier",
               "CalibratedClassifier"}
    if name in wrapped:
        return cls(LR())
    if name == "PosteriorCombiner":
        return cls([LR(), linclass.GaussianNB()])
    if name in ("StructuredPerceptron", "StructuredSVM"):
        from linclass.joint import MultiClassStructure
        return cls(MultiClassStructure(3, 2))
    return cls()


def _inputs(name):
    """(X, y) of the kind the model takes."""
    flat = np.ones((2, 3))
    if name in ("SequenceTagger", "HMM"):
        return [["a", "b"]], [["X", "Y"]]
    if name == "CRF":
        return [[{"w": "a"}, {"w": "b"}]], [["X", "Y"]]
    if name in ("StructuredPerceptron", "StructuredSVM"):
        return list(flat), [0, 1]
    if name == "CollectiveClassifier":
        from linclass.graph import Graph
        return [Graph(flat, np.array([[0, 1]]))], [np.array([0, 1])]
    if name == "DiscriminativeParser":
        return [["the", "dog"]], [linclass.datasets.trees.parse_tree("(S (D the) (N dog))")]
    if name == "AlignmentLearner":
        return [("ab", "ab")], [[(0, 0), (1, 1)]]
    if name in ("FeatureTemplate", "AmbiguityClasses", "WordClusters"):
        return [["a", "b"]], None
    return flat, np.array([0, 1])


NAMES = sorted(set(PUBLIC_MODELS) - KERNEL_FUNCTIONS - USABLE_UNFITTED)


@pytest.mark.parametrize("name", NAMES)
def test_prediction_before_fit_raises_not_fitted(name):
    model = _unfitted(name)
    X, y = _inputs(name)
    tried = 0
    for method in METHODS:
        fn = getattr(model, method, None)
        if not callable(fn):
            continue
        tried += 1
        args = (X, y) if method == "score" and y is not None else (X,)
        with pytest.raises(NotFittedError, match="not fitted"):
            fn(*args)
    assert tried


def test_not_fitted_error_is_scikit_learns_when_installed():
    sklearn_exceptions = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(sklearn_exceptions.NotFittedError):
        linclass.LinearSVC().predict(np.ones((2, 3)))
    assert issubclass(NotFittedError, (ValueError, AttributeError))
