"""Exceptions and warnings raised by linclass.

Every error about bad input derives from :class:`ValueError`, so code that
already catches ``ValueError`` for scikit-learn keeps working.
"""

__all__ = [
    "DataFormatError",
    "ModelFormatError",
    "NotFittedError",
    "ConvergenceWarning",
    "DataConversionWarning",
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
            cls = _sklearn_twin(NotFittedError)
        return super().__new__(cls, *args, **kwargs)

    def __reduce__(self):
        # by the public class: unpickling builds the right subclass again
        return NotFittedError, self.args


class DataConversionWarning(UserWarning):
    """The input had to be converted: a column-vector ``y`` of shape
    ``(n_samples, 1)`` where a 1-D array was expected (it is ravelled).

    Like :class:`NotFittedError`, an instance is also one of
    ``sklearn.exceptions.DataConversionWarning`` when scikit-learn is
    installed, so scikit-learn's warning filters apply to it."""

    def __new__(cls, *args, **kwargs):
        if cls is DataConversionWarning:
            cls = _sklearn_twin(DataConversionWarning)
        return super().__new__(cls, *args, **kwargs)

    def __reduce__(self):
        return DataConversionWarning, self.args


#: linclass class -> the class its constructor instantiates, resolved on first use
_TWINS = {}


def _sklearn_twin(own):
    """``own``, or a subclass of it and of scikit-learn's class of the same name
    when scikit-learn is installed (imported here, at the first instance, not at
    ``import linclass``)."""
    twin = _TWINS.get(own)
    if twin is not None:
        return twin
    import importlib.util
    import sys
    sklearn_class = None
    module = sys.modules.get("sklearn.exceptions")
    try:
        if module is None and importlib.util.find_spec("sklearn") is not None:
            import sklearn.exceptions as module
        sklearn_class = getattr(module, own.__name__, None)
    except Exception:       # a broken scikit-learn install must not hide the error
        sklearn_class = None
    if isinstance(sklearn_class, type) and issubclass(sklearn_class, BaseException) \
            and not issubclass(own, sklearn_class):
        twin = type(own.__name__, (own, sklearn_class),
                    {"__module__": __name__, "__qualname__": own.__name__,
                     "__doc__": own.__doc__})
    else:
        twin = own
    _TWINS[own] = twin
    return twin


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting ``tol``."""


class ModelVersionWarning(UserWarning):
    """A model file (or pickle) was written by another version of linclass; the
    message names both versions."""
