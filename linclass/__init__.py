"""linclass: linear classifiers and structured predictors.

Every model scores an input/output pair linearly, ``F(x, y) = w . Phi(x, y)``,
and predicts ``argmax_y F(x, y)``.  Models differ in the joint feature map
``Phi``, the decoder that finds the argmax, and the learner that fits ``w``.
"""
__version__ = "0.1.0.dev0"

from .exceptions import (ConvergenceWarning, DataFormatError, ModelFormatError,
                         NotFittedError)
from .persistence import load

__all__ = ["__version__", "load", "ConvergenceWarning", "DataFormatError",
           "ModelFormatError", "NotFittedError"]
