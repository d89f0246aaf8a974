"""linclass: linear classifiers and structured predictors.

Every model scores an input/output pair linearly, ``F(x, y) = w . Phi(x, y)``,
and predicts ``argmax_y F(x, y)``.  Models differ in the joint feature map
``Phi``, the decoder that finds the argmax, and the learner that fits ``w``.

Layout: the flat families in ``linear/`` and ``kernels/``; the Structure
protocol and generic learners in ``structured/``; one folder per structured
task (``joint/``, ``sequence/``, ``parsing/``, ``alignment/``, ``graph/``,
``ranking/``); ``metrics/``, ``datasets/``, ``features/``, ``demo/``; the
Cython kernels in ``_core/``.  This module imports models on first use (see
``_registry.PUBLIC_MODELS``), so ``import linclass`` stays cheap.
"""
import importlib

from ._registry import PUBLIC_MODELS as _MODELS
from ._version import __version__
from .exceptions import ConvergenceWarning, DataFormatError, ModelFormatError, NotFittedError
from .persistence import load

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
