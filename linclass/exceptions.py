"""Exceptions and warnings raised by linclass.

Every error about bad input derives from :class:`ValueError`, so code that
already catches ``ValueError`` for scikit-learn keeps working.
"""

__all__ = [
    "DataFormatError",
    "ModelFormatError",
    "NotFittedError",
    "ConvergenceWarning",
    "ModelVersionWarning",
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
    """The estimator is used before ``fit`` (same bases as scikit-learn's).

    When scikit-learn is installed, every instance is also an instance of
    ``sklearn.exceptions.NotFittedError``, so code written for scikit-learn
    (``except sklearn.exceptions.NotFittedError``, its ``check_is_fitted``
    idioms) catches linclass's error too.  ``import linclass`` does not import
    scikit-learn for this: creating the first error does (only when
    scikit-learn is installed), and builds once a subclass of both classes that
    ``NotFittedError(...)`` then returns.  ``except NotFittedError`` and
    ``isinstance(err, NotFittedError)`` hold either way.
    """

    def __new__(cls, *args, **kwargs):
        if cls is NotFittedError:
            cls = _not_fitted_class()
        return super().__new__(cls, *args, **kwargs)

    def __reduce__(self):
        # by the public class: unpickling builds the right subclass again
        return NotFittedError, self.args


#: [the class NotFittedError(...) instantiates], resolved on first use
_NOT_FITTED_CLASS = []


def _not_fitted_class():
    """NotFittedError, or a subclass of it and of scikit-learn's when
    scikit-learn is installed (imported here, at the first error, not at
    ``import linclass``)."""
    if _NOT_FITTED_CLASS:
        return _NOT_FITTED_CLASS[0]
    import importlib.util
    import sys
    sklearn_class = None
    module = sys.modules.get("sklearn.exceptions")
    try:
        if module is None and importlib.util.find_spec("sklearn") is not None:
            import sklearn.exceptions as module
        sklearn_class = getattr(module, "NotFittedError", None)
    except Exception:       # a broken scikit-learn install must not hide the error
        sklearn_class = None
    if isinstance(sklearn_class, type) and issubclass(sklearn_class, BaseException) \
            and not issubclass(NotFittedError, sklearn_class):
        both = type("NotFittedError", (NotFittedError, sklearn_class),
                    {"__module__": __name__, "__qualname__": "NotFittedError",
                     "__doc__": NotFittedError.__doc__})
    else:
        both = NotFittedError
    _NOT_FITTED_CLASS.append(both)
    return both


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting ``tol``."""


class ModelVersionWarning(UserWarning):
    """A model file (or pickle) was written by another version of linclass; the
    message names both versions."""
