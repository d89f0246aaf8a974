"""Decisions beyond argmax: what to predict once a model has scored or estimated posteriors.

Meta-estimators that wrap any fitted (or to-be-fitted) classifier through its
public protocol (``fit``, ``predict_proba`` / ``decision_function``,
``classes_``, ``get_params``):

``cost``
    :class:`CostSensitiveClassifier` -- the Bayes decision of minimum expected
    cost for a cost matrix (Duda, Hart & Stork 2001, section 2.2; Elkan 2001).
``reject``
    :class:`RejectOption` -- abstain when the posterior or the margin is below
    a threshold (Chow 1970); coverage-accuracy curves are in
    :func:`linclass.metrics.coverage_accuracy_curve`.
``threshold``
    :class:`ThresholdTuner` -- a binary decision threshold chosen on validation
    data or by cross-validation for a chosen metric.
``prior_shift``
    :class:`PriorShiftClassifier` and :func:`adjust_to_priors` -- posteriors and
    the intercept corrected for new class priors, with the EM estimate of the
    new priors (Saerens, Latinne & Decaestecker 2002).
``calibration``
    :class:`CalibratedClassifier` -- Platt's sigmoid and isotonic calibration
    on a held-out set or by cross-validation.
``combine``
    :class:`PosteriorCombiner` -- sum, product, max, min and majority-vote rules
    over the posteriors of several classifiers (Kittler et al. 1998).
``estimates``
    :func:`laplace_estimate`, :func:`m_estimate` -- smoothed class-probability
    estimates from counts (Cestnik 1990).

May import: ``linclass.base``, ``linclass._validation``, ``linclass.exceptions``
and ``linclass.metrics``; wrapped estimators are used only through their
public protocol (no import of a model family).  Helpers shared here live in
``decision/_common.py``.
"""
from .calibration import CalibratedClassifier, fit_isotonic, fit_platt
from .combine import PosteriorCombiner
from .cost import CostSensitiveClassifier, expected_costs, minimum_expected_cost
from .estimates import laplace_estimate, m_estimate
from .prior_shift import (PriorShiftClassifier, adjust_to_priors, estimate_priors_em,
                          shift_intercept)
from .reject import RejectOption
from .threshold import ThresholdTuner

__all__ = ["CalibratedClassifier", "CostSensitiveClassifier", "PosteriorCombiner",
           "PriorShiftClassifier", "RejectOption", "ThresholdTuner", "adjust_to_priors",
           "estimate_priors_em", "expected_costs", "fit_isotonic", "fit_platt",
           "laplace_estimate", "m_estimate", "minimum_expected_cost", "shift_intercept"]
