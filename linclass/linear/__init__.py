"""The flat linear family: one weight vector (or one per class) scoring ``x``.

Perceptrons (``perceptron``), linear SVMs by dual coordinate descent or
Pegasos (``svm``), multi-class SVMs and one-vs-rest / one-vs-one
(``multiclass``), least squares / ridge / lasso classifiers (``least_squares``)
and regressors (``regression``), logistic regression (``logistic``), MaxEnt
with feature functions (``maxent``), naive Bayes (``naive_bayes``), Gaussian naive
Bayes (``gaussian_nb``) and the mixture (``mixture_nb``), and SGD on margin losses (``sgd``).

Every iterative solver here stops after at most ``max_iter`` iterations (epochs,
passes), and never after more than ``linclass._validation.MAX_ITER_CAP``
(10**6): a larger ``max_iter`` runs to the cap with a ``ConvergenceWarning``;
``max_iter=-1`` is refused (``ValueError``).  Weights, objectives or scores
that become NaN or infinite raise a ``ValueError`` naming the model.

May import: ``linclass._core``, ``linclass._validation``, ``linclass.base``,
``linclass.exceptions``, ``linclass.metrics``; helpers shared inside the
family live in ``linear/_common.py``.  Nothing here imports a structured task.
"""
from .gaussian_nb import GaussianNB
from .least_squares import LassoClassifier, LeastSquaresClassifier, RidgeClassifier
from .logistic import LogisticRegression
from .maxent import MaxEnt
from .mixture_nb import MixtureNB
from .multiclass import CrammerSingerSVC, OneVsOneClassifier, OneVsRestClassifier, WestonWatkinsSVC
from .naive_bayes import BernoulliNB, MultinomialNB
from .perceptron import Perceptron
from .regression import Lasso, LinearRegression, Ridge, lasso_path
from .sgd import SGDClassifier
from .svm import LinearSVC

__all__ = ["BernoulliNB", "CrammerSingerSVC", "GaussianNB", "Lasso", "LassoClassifier", "LeastSquaresClassifier",
           "LinearRegression", "LinearSVC", "LogisticRegression", "MaxEnt", "MixtureNB",
           "MultinomialNB", "OneVsOneClassifier", "OneVsRestClassifier", "Perceptron", "Ridge",
           "RidgeClassifier", "SGDClassifier", "WestonWatkinsSVC", "lasso_path"]
