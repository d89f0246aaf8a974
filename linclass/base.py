"""Estimator base classes, compatible with scikit-learn without importing it.

:class:`BaseEstimator` gives ``get_params``/``set_params`` (the protocol behind
scikit-learn's ``clone``, ``Pipeline`` and ``GridSearchCV``), a ``__repr__``
showing non-default parameters, and ``save``.  :class:`ClassifierMixin` adds
``score`` (accuracy) and the classifier tags scikit-learn looks for.
"""
import functools
import inspect
import numbers

import numpy as np

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "TransformerMixin"]


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
        fit = cls.__dict__.get("fit")
        if fit is None or getattr(fit, "_checks_common_params", False):
            return

        @functools.wraps(fit)
        def fit_with_checked_params(self, *args, **kw):
            from ._validation import check_common_params
            check_common_params(self)
            return fit(self, *args, **kw)

        fit_with_checked_params._checks_common_params = True
        cls.fit = fit_with_checked_params

    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
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

    def get_params(self, deep=True):
        """Parameters of this estimator (and of nested estimators when ``deep``)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for k, v in value.get_params().items():
                    out["%s__%s" % (name, k)] = v
            out[name] = value
        return out

    def set_params(self, **params):
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

    def __setstate__(self, state):
        state = dict(state)
        state.pop("_linclass_version", None)
        self.__dict__.update(state)

    # -- persistence (see linclass.persistence) ---------------------------
    def save(self, path):
        """Write the fitted model to ``path`` (``.npz`` + JSON metadata, no pickle).

        Load it back with :func:`linclass.load`.
        """
        from .persistence import save_model
        return save_model(self, path)

    def _get_state(self):
        """Fitted state to persist: every attribute ending in ``_``.

        Models holding objects that ``linclass.persistence`` cannot encode
        (anything beyond numbers, strings, lists, dicts, numpy arrays, CSR
        matrices and nested linclass estimators) override this and
        :meth:`_set_state`.
        """
        return {k: v for k, v in vars(self).items()
                if k.endswith("_") and not k.startswith("_")}

    def _set_state(self, state):
        for k, v in state.items():
            setattr(self, k, v)

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
        if "n_features_in_" in state and (isinstance(n_features, bool) or not isinstance(
                n_features, (int, np.integer)) or not 0 < n_features <= np.iinfo(np.int32).max):
            raise ValueError("n_features_in_ must be a positive integer, got %r" % (n_features,))
        classes = state.get("classes_")
        if isinstance(classes, list):           # sklearn-crfsuite style (CRF, HMM)
            classes = np.asarray(classes) if classes else None
        if "classes_" in state and (not isinstance(classes, np.ndarray) or classes.ndim != 1
                                    or classes.shape[0] == 0):
            raise ValueError("classes_ must be a non-empty 1-D array or list")
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
        "landmarks_": ("M", "F"), "landmark_indices_": ("M",), "eigenvalues_": ("M",),
        "projection_": ("M", None),
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
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiub" \
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

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against ``y`` (weighted if given)."""
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

    def score(self, X, y, sample_weight=None):
        y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(self.predict(X), dtype=np.float64)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, float)
        ss_res = np.sum(w * (y - pred) ** 2)
        ss_tot = np.sum(w * (y - np.average(y, weights=w)) ** 2)
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

    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags


def _version():
    from ._version import __version__
    return __version__
