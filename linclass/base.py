"""Estimator base classes, compatible with scikit-learn without importing it.

:class:`BaseEstimator` gives ``get_params``/``set_params`` (the protocol behind
scikit-learn's ``clone``, ``Pipeline`` and ``GridSearchCV``), a ``__repr__``
showing non-default parameters, and ``save``.  :class:`ClassifierMixin` adds
``score`` (accuracy) and the classifier tags scikit-learn looks for.

Data frames (pandas, polars, anything with ``.columns`` of strings): ``fit``,
``partial_fit`` and ``fit_transform`` of every estimator record
``feature_names_in_``, and ``predict``, ``predict_proba``,
``predict_log_proba``, ``decision_function``, ``transform``, ``score`` and
``score_samples`` refuse reordered, renamed or missing columns with
scikit-learn's message (:func:`check_feature_names`).  The subclass hook
``BaseEstimator.__init_subclass__`` wraps those methods once per class; the
check runs at the outermost call only, where the user's data enters.
"""
import functools
import inspect
import numbers
import threading
import warnings
import weakref
from os import PathLike
from typing import Any, Dict, Optional, TypeVar, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "TransformerMixin"]

_Estimator = TypeVar("_Estimator", bound="BaseEstimator")

# Methods whose first argument X is checked against the column names seen in
# fit, and methods that (re)learn them.
_FIT_METHODS = ("fit", "partial_fit", "fit_transform")
_NAMED_INPUT_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function",
                        "transform", "score", "score_samples")


def _column_names(X):
    """Column names of a data frame (anything with ``.columns`` that is not an
    array: pandas, polars, ...), as an object array of str, or None.

    As in scikit-learn: names are kept only when every column name is a
    string; a mix of string and non-string names raises ``TypeError``.
    """
    if isinstance(X, np.ndarray) or not hasattr(X, "columns") or hasattr(X, "tocsr"):
        return None
    try:
        names = list(X.columns)
    except TypeError:
        return None
    if not names:
        return None
    kinds = sorted({type(n).__name__ for n in names})
    is_str = [isinstance(n, str) for n in names]
    if all(is_str):
        out = np.empty(len(names), dtype=object)
        out[:] = names
        return out
    if any(is_str):
        raise TypeError("Feature names are only supported if all input features have string "
                        "names, but your input has %s as feature name / column name types. "
                        "Convert them all to strings (X.columns = X.columns.astype(str)) or "
                        "all to non-strings." % kinds)
    return None


def _name_list(names, limit=5):
    lines = ["- %s\n" % n for n in names[:limit]]
    if len(names) > limit:
        lines.append("- ...\n")
    return "".join(lines)


def check_feature_names(estimator, X):
    """Compare the column names of ``X`` with ``estimator.feature_names_in_``.

    Different, missing or reordered names raise ``ValueError`` (scikit-learn's
    message, which its estimator checks match); names on one side only warn
    (``UserWarning``), as in scikit-learn.
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    given = _column_names(X)
    if fitted is None and given is None:
        return
    who = type(estimator).__name__
    if fitted is None:
        if hasattr(estimator, "n_features_in_"):
            warnings.warn("X has feature names, but %s was fitted without feature names"
                          % who, UserWarning, stacklevel=3)
        return
    if given is None:
        warnings.warn("X does not have valid feature names, but %s was fitted with feature "
                      "names" % who, UserWarning, stacklevel=3)
        return
    if len(given) == len(fitted) and all(a == b for a, b in zip(given, fitted)):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(given) - set(fitted))
    missing = sorted(set(fitted) - set(given))
    if unexpected:
        message += "Feature names unseen at fit time:\n" + _name_list(unexpected)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


_calls = threading.local()     # per thread: depth of wrapped linclass calls
# The names are recorded and checked at the outermost wrapped linclass call of a
# thread, where the user's data enters; calls an estimator makes on itself, or a
# meta-estimator on its inner estimators (which see the data already converted),
# run unchecked (a thread-local counter, no context manager: this is on every
# predict call).


def _first_arg(args, kwargs):
    return args[0] if args else kwargs.get("X")


def _names_on_fit(method):
    @functools.wraps(method)
    def fit(self, *args, **kwargs):
        if getattr(_calls, "depth", 0):
            return method(self, *args, **kwargs)
        _calls.depth = 1
        try:
            X = _first_arg(args, kwargs)
            incremental = method.__name__.startswith("partial_fit") and \
                hasattr(self, "n_features_in_")
            if incremental:
                check_feature_names(self, X)
            else:
                names = _column_names(X)
            result = method(self, *args, **kwargs)
            if not incremental:
                if names is None:
                    self.__dict__.pop("feature_names_in_", None)
                else:
                    self.feature_names_in_ = names
            return result
        finally:
            _calls.depth = 0
    fit._linclass_feature_names = True
    return fit


def _has_fitted_attributes(estimator):
    return any(k.endswith("_") and not k.startswith("_") for k in vars(estimator))


def _names_on_input(method):
    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        if getattr(_calls, "depth", 0):
            return method(self, *args, **kwargs)
        _calls.depth = 1
        try:
            check_feature_names(self, _first_arg(args, kwargs))
            return method(self, *args, **kwargs)
        except AttributeError as exc:
            # a method reached for a fitted attribute of an estimator that was
            # never fitted: say so, with the type scikit-learn's tools expect
            from .exceptions import NotFittedError
            if isinstance(exc, NotFittedError) or _has_fitted_attributes(self):
                raise
            raise NotFittedError("this %s instance is not fitted yet; call fit() before "
                                 "%s()" % (type(self).__name__, method.__name__)) from exc
        finally:
            _calls.depth = 0
    checked._linclass_feature_names = True
    return checked


# class -> (its __init__, its sorted parameter names); weak: classes made on the fly go
_PARAM_NAMES = weakref.WeakKeyDictionary()


class BaseEstimator:
    """Base class of every linclass model.

    Subclasses list all their parameters as explicit keyword arguments of
    ``__init__`` and store each unchanged under the same name; ``fit`` sets
    the learned attributes, whose names end with an underscore.

    Every ``fit`` a subclass defines first checks the parameters whose name
    fixes their type in all models (booleans such as ``fit_intercept``,
    ``verbose``, ``random_state``, ``n_jobs``:
    :func:`linclass._validation.check_common_params`), so that no model
    accepts ``shuffle="no"`` or ``random_state="x"`` silently.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Parameters: every ``fit`` first runs the shared parameter checks.
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_checks_common_params", False):
            def make(fit):
                @functools.wraps(fit)
                def fit_with_checked_params(self, *args, **kw):
                    from ._validation import check_common_params
                    check_common_params(self)
                    return fit(self, *args, **kw)
                fit_with_checked_params._checks_common_params = True
                return fit_with_checked_params
            cls.fit = make(fit)
        # Data frames: ``fit`` records ``feature_names_in_`` and the methods
        # taking X check it (see check_feature_names).  Wrapping here covers
        # every estimator, including ones that do not call a shared validator.
        for name in _FIT_METHODS + _NAMED_INPUT_METHODS:
            method = next((klass.__dict__[name] for klass in cls.__mro__
                           if name in klass.__dict__), None)
            if not inspect.isfunction(method) or getattr(method, "_linclass_feature_names",
                                                         False):
                continue
            wrap = _names_on_fit if name in _FIT_METHODS else _names_on_input
            setattr(cls, name, wrap(method))

    @classmethod
    def _get_param_names(cls):
        # read from the signature of __init__ once per class (the shared
        # parameter checks call this on every fit: inspect.signature costs
        # ~0.1 ms, a few per cent of a small fit); keyed on the __init__ it was
        # read from, so a class whose __init__ is replaced is read again
        init = cls.__init__
        cached = _PARAM_NAMES.get(cls)
        if cached is None or cached[0] is not init:
            cached = _PARAM_NAMES[cls] = (init, tuple(cls._read_param_names(init)))
        return list(cached[1])

    @classmethod
    def _read_param_names(cls, init):
        if init is object.__init__:
            return []
        sig = inspect.signature(init)
        names = []
        for p in sig.parameters.values():
            if p.name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise RuntimeError("%s.__init__ must not take *args or **kwargs: "
                                   "parameters must be explicit" % cls.__name__)
            names.append(p.name)
        return sorted(names)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """Parameters of this estimator (and of nested estimators when ``deep``)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for k, v in value.get_params().items():
                    out["%s__%s" % (name, k)] = v
            out[name] = value
        return out

    def set_params(self: _Estimator, **params: Any) -> _Estimator:
        """Set parameters (``name`` or ``nested__name``); returns self."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid:
                raise ValueError("invalid parameter %r for %s; valid parameters: %s"
                                 % (name, type(self).__name__,
                                    ", ".join(self._get_param_names())))
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def __repr__(self):
        try:
            defaults = {name: p.default for name, p in
                        inspect.signature(type(self).__init__).parameters.items()}
        except (TypeError, ValueError):
            defaults = {}
        parts = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = defaults.get(name, inspect.Parameter.empty)
            try:
                same = value is default or bool(value == default)
            except Exception:
                same = False
            if not same:
                parts.append("%s=%r" % (name, value))
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_linclass_version"] = _version()
        return state

    def __reduce_ex__(self, protocol):
        # models whose file is far smaller than their Python objects pickle as
        # that file (one format: the pickle is the .npz's bytes, never larger)
        if self._pickle_as_model_file and _has_fitted_attributes(self):
            import io
            from .persistence import save_model
            buffer = io.BytesIO()
            save_model(self, buffer)
            return _model_from_file_bytes, (buffer.getvalue(),)
        return super().__reduce_ex__(protocol)

    #: pickle a fitted model as its model file (see ``__reduce_ex__``)
    _pickle_as_model_file = False

    def __setstate__(self, state):
        state = dict(state)
        written_by = state.pop("_linclass_version", None)
        if written_by is not None and written_by != _version():
            from .exceptions import ModelVersionWarning
            warnings.warn("unpickling a %s pickled by linclass %s with linclass %s: the "
                          "model may behave differently; re-fit or re-save it with this "
                          "version" % (type(self).__name__, written_by, _version()),
                          ModelVersionWarning, stacklevel=2)
        self.__dict__.update(state)

    # -- persistence (see linclass.persistence) ---------------------------
    def save(self, path: Union[str, "PathLike[str]"]) -> str:
        """Write the fitted model to ``path`` (``.npz`` + JSON metadata, no pickle).

        Load it back with :func:`linclass.load`.
        """
        from .persistence import save_model
        return save_model(self, path)

    #: fitted attributes that serve only continued training (``warm_start``),
    #: not prediction: kept in memory and in pickles, left out of saved files
    #: (a model file holds what predicts; a loaded model warm-starts from
    #: ``coef_`` alone)
    _training_only = ()

    def _get_state(self):
        """Fitted state to persist: every attribute ending in ``_`` except
        those in ``_training_only``.

        Models holding objects that ``linclass.persistence`` cannot encode
        (anything beyond numbers, strings, lists, dicts, numpy arrays, CSR
        matrices and nested linclass estimators) override this and
        :meth:`_set_state`.
        """
        return {k: v for k, v in vars(self).items()
                if k.endswith("_") and not k.startswith("_") and k not in self._training_only}

    def _set_state(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def _min_features_in(self):
        """Smallest valid ``n_features_in_`` of a fitted model (checked at load):
        1, except for models whose input has no fixed width (0 there)."""
        return 1

    def _check_state(self):
        """Check that the fitted attributes agree with each other.

        Called by :func:`linclass.load` after :meth:`_set_state`, so that a
        model file edited consistently with its digest cannot hand a kernel
        arrays it would index out of bounds.  Raises ``ValueError`` (``load``
        turns it into :class:`~linclass.exceptions.ModelFormatError`).  This
        generic version checks the attributes flat models share
        (``n_features_in_``, ``classes_``, ``coef_``, ``intercept_``); models
        whose kernels index other fitted arrays extend it.
        """
        state = vars(self)
        n_features = state.get("n_features_in_")
        lowest = self._min_features_in()
        if "n_features_in_" in state and (isinstance(n_features, bool) or not isinstance(
                n_features, (int, np.integer))
                or not lowest <= n_features <= np.iinfo(np.int32).max):
            raise ValueError("n_features_in_ must be an integer >= %d, got %r"
                             % (lowest, n_features))
        classes = state.get("classes_")
        if isinstance(classes, list):           # sklearn-crfsuite style (CRF, HMM)
            classes = np.asarray(classes) if classes else None
        if "classes_" in state and (not isinstance(classes, np.ndarray) or classes.ndim != 1
                                    or classes.shape[0] == 0):
            raise ValueError("classes_ must be a non-empty 1-D array or list")
        names = state.get("feature_names_in_")
        if "feature_names_in_" in state and (
                not isinstance(names, np.ndarray) or names.ndim != 1
                or not all(isinstance(n, str) for n in names.tolist())
                or (n_features is not None and names.shape[0] != n_features)):
            raise ValueError("feature_names_in_ must be a 1-D array of n_features_in_ strings")
        self._check_shape_rules(state)
        coef = state.get("coef_")
        if isinstance(coef, np.ndarray):
            if coef.ndim not in (1, 2) or coef.dtype.kind not in "fiu":
                raise ValueError("coef_ must be a 1-D or 2-D numeric array, got shape %r "
                                 "dtype %s" % (coef.shape, coef.dtype))
            if n_features is not None and self._coef_is_per_feature and \
                    coef.shape[coef.ndim - 1] != n_features:
                raise ValueError("coef_ has %d columns but n_features_in_ is %d"
                                 % (coef.shape[coef.ndim - 1], n_features))
            if coef.dtype.kind == "f" and np.isnan(coef).any():
                raise ValueError("coef_ contains NaN (fit never produces it)")
            n_rows = coef.shape[0] if coef.ndim == 2 else 1
            if classes is not None and coef.ndim == 2 and n_rows not in (1, len(classes)):
                raise ValueError("coef_ has %d rows for %d classes" % (n_rows, len(classes)))
            intercept = state.get("intercept_")
            if "intercept_" in state and not isinstance(intercept, np.ndarray) and (
                    isinstance(intercept, bool) or not isinstance(intercept, numbers.Real)):
                raise ValueError("intercept_ must be a number or a numeric array, got %r"
                                 % (intercept,))
            if isinstance(intercept, np.ndarray) and intercept.dtype.kind not in "fiu":
                raise ValueError("intercept_ must be numeric, got dtype %s" % intercept.dtype)
            if intercept is not None and np.isnan(intercept).any():
                raise ValueError("intercept_ contains NaN (fit never produces it)")
            if isinstance(intercept, np.ndarray) and intercept.ndim > 0 and \
                    intercept.shape != (n_rows,):
                raise ValueError("intercept_ has shape %r but coef_ has %d rows"
                                 % (intercept.shape, n_rows))

    # coef_'s last axis has one entry per input feature (False for models whose
    # coef_ lives in a joint feature space, e.g. MaxEnt's n_features * n_classes)
    _coef_is_per_feature = True

    # Fitted arrays shared by several models: the size of the first and last
    # axis, as K (classes), F (features), S (support vectors), M (landmarks).
    _SHAPE_RULES = {
        "feature_log_prob_": ("K", "F"), "feature_count_": ("K", "F"),
        "feature_log_prob_absent_": ("K", "F"), "class_log_prior_": ("K",),
        "class_count_": ("K",), "component_log_weight_": ("K", None),
        "support_": ("S",), "support_vectors_": ("S", "F"), "dual_coef_": (None, "S"),
        "_sv_sq_norms": ("S",), "n_support_": ("K",),
        "landmarks_": ("M", "F"), "landmark_indices_": ("M",), "eigenvalues_": ("C",),
        "projection_": ("M", "C"),
    }

    def _check_shape_rules(self, state):
        sizes = {}
        if isinstance(state.get("classes_"), np.ndarray):
            sizes["K"] = state["classes_"].shape[0]
        if "n_features_in_" in state:
            sizes["F"] = int(state["n_features_in_"])
        precomputed = state.get("kernel") == "precomputed" or \
            getattr(self, "kernel", None) == "precomputed"
        for name, rule in self._SHAPE_RULES.items():
            arr = state.get(name)
            if arr is None or ("S" in rule and "support_" not in state):
                continue
            if sp.issparse(arr) and len(rule) == 2 and arr.dtype.kind in "fiub":
                pass                # support vectors or landmarks of a sparse fit
            elif not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiub" \
                    or arr.ndim < len(rule) or (len(rule) == 1 and arr.ndim != 1):
                raise ValueError("%s must be a numeric array with at least %d dimensions"
                                 % (name, len(rule)))
            axes = ((0, rule[0]),) if len(rule) == 1 else ((0, rule[0]), (arr.ndim - 1, rule[1]))
            for axis, symbol in axes:
                if symbol is None or (precomputed and name == "support_vectors_"):
                    continue
                size = arr.shape[axis]
                if sizes.setdefault(symbol, size) != size:
                    raise ValueError("%s has shape %r, inconsistent with the other fitted "
                                     "arrays (%s = %d)" % (name, arr.shape, symbol, sizes[symbol]))
        support = state.get("support_")
        if isinstance(support, np.ndarray) and support.size and "shape_fit_" in state:
            n_fit = state["shape_fit_"][0]
            if support.min() < 0 or support.max() >= n_fit:
                raise ValueError("support_ indexes outside the %d training samples" % n_fit)
        n_support = state.get("n_support_")
        if isinstance(n_support, np.ndarray) and "S" in sizes and n_support.sum() != sizes["S"]:
            raise ValueError("n_support_ sums to %d but there are %d support vectors"
                             % (n_support.sum(), sizes["S"]))

    # -- scikit-learn integration (only called by scikit-learn) ----------
    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, InputTags
        tags = Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    input_tags=InputTags(sparse=True))
        return tags


class ClassifierMixin:
    """``score`` = mean accuracy; marks the estimator as a classifier."""

    _estimator_type = "classifier"

    def score(self, X: Any, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (weighted if given).

        A label of ``y`` the model never saw in training counts as an error
        (it can never be predicted), as in scikit-learn.
        """
        from .metrics.classification import accuracy_score
        return accuracy_score(y, self.predict(X), sample_weight=sample_weight)

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.classifier_tags = ClassifierTags()
        tags.target_tags.required = True
        return tags


class RegressorMixin:
    """``score`` = coefficient of determination R^2."""

    _estimator_type = "regressor"

    def score(self, X: Any, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> float:
        """Coefficient of determination R^2 of ``predict(X)`` against ``y``."""
        from ._validation import check_regression_target, check_sample_weight
        pred = np.asarray(self.predict(X), dtype=np.float64)
        y = check_regression_target(y, pred.shape[0])
        w = check_sample_weight(sample_weight, y.shape[0])
        if y.ndim == 2 and y.shape[1] == 1 and pred.ndim == 1:
            y = y.ravel()
        if y.shape != pred.shape:
            raise ValueError("y has shape %r but the predictions have shape %r"
                             % (y.shape, pred.shape))
        mean = np.average(y, axis=0, weights=w)
        if y.ndim == 2:                         # several targets: one weight per row
            w = w[:, None]
        ss_res = np.sum(w * (y - pred) ** 2)
        ss_tot = np.sum(w * (y - mean) ** 2)
        return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)

    def __sklearn_tags__(self):
        from sklearn.utils import RegressorTags
        tags = super().__sklearn_tags__()
        tags.estimator_type = "regressor"
        tags.regressor_tags = RegressorTags()
        tags.target_tags.required = True
        return tags


class TransformerMixin:
    """``fit_transform`` = ``fit`` then ``transform``."""

    def fit_transform(self, X: Any, y: Optional[ArrayLike] = None, **fit_params: Any) -> Any:
        """``fit(X, y, **fit_params)`` then ``transform(X)``."""
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags


def _model_from_file_bytes(data):
    """Unpickle a model pickled as its model file (``BaseEstimator.__reduce_ex__``)."""
    import io
    from .persistence import load
    # no size bound: whoever can hand over a pickle can already run any code
    return load(io.BytesIO(data), max_bytes=2 ** 62)


def binary_decision(scores):
    """scikit-learn's shape of ``decision_function``: class scores
    (n_samples, n_classes), except for two classes, where the one column
    ``scores[:, 1] - scores[:, 0]`` (positive means ``classes_[1]``)."""
    return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


def _version():
    from ._version import __version__
    return __version__
