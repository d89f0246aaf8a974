"""Exceptions and warnings raised by linclass.

Every error about bad input derives from :class:`ValueError`, so code that
already catches ``ValueError`` for scikit-learn keeps working.
"""

__all__ = [
    "DataFormatError",
    "ModelFormatError",
    "NotFittedError",
    "ConvergenceWarning",
]


class DataFormatError(ValueError):
    """A data file (or in-memory record) is malformed.

    ``str(err)`` reads ``"<file>:<line>: <what is wrong>"``; the parts are also
    available as ``err.filename``, ``err.lineno`` and ``err.reason``.
    """

    def __init__(self, reason, filename=None, lineno=None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        where = ""
        if filename is not None:
            where = str(filename)
            if lineno is not None:
                where += ":%d" % lineno
            where += ": "
        elif lineno is not None:
            where = "line %d: " % lineno
        super().__init__(where + reason)

    def __reduce__(self):
        return type(self), (self.reason, self.filename, self.lineno)


class ModelFormatError(ValueError):
    """A saved model file cannot be loaded: unknown format or version, tampered
    content, or a class that is not a linclass model."""


class NotFittedError(ValueError, AttributeError):
    """The estimator is used before ``fit`` (same bases as scikit-learn's)."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting ``tol``."""
