"""The one input contract of #35 (``linclass._validation``): real values only,
labels of one kind, one check of classification targets, usable sample
weights, no silent NaN out of ``predict``, and linclass's ``NotFittedError``
also scikit-learn's.  The sweep over every estimator is in
``tests/test_hostile_input.py`` (child processes); these are the shared
checks themselves."""
import importlib.util
import inspect
import pathlib
import pickle
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linclass
from linclass import _validation as v
from linclass._registry import PUBLIC_MODELS
from linclass.exceptions import NotFittedError

# children run Python from here, not from the repository root, whose unbuilt
# linclass/ would shadow the installed package
_OUTSIDE_SOURCE = os.path.dirname(os.path.abspath(__file__))

_spec = importlib.util.spec_from_file_location(
    "linclass_tests_hostile_contract", pathlib.Path(__file__).with_name("hostile.py"))
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)


# ------------------------------------------------------------- complex X --
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_complex_sparse_matrix_is_refused_not_cast(fmt):
    X = sp.random(5, 4, density=0.5, format=fmt, random_state=0).astype(complex)
    X.data[0] += 2j
    with pytest.raises(ValueError, match="Complex data not supported"):
        v.check_array(X)
    with pytest.raises(ValueError, match="Complex data not supported"):
        v.check_X(X)


def test_complex_dense_matrix_is_refused():
    X = np.ones((3, 2), dtype=complex)
    with pytest.raises(ValueError, match="[Cc]omplex"):
        v.check_array(X)


# ----------------------------------------------------------- sample weight --
@pytest.mark.parametrize("weights, match", [
    (np.array([1.0, 1 + 1j, 1.0]), "complex"),
    (np.array([1.0, 2.0, 1.0], dtype=complex), "complex"),      # imaginary part 0: still refused
    (np.array([1.0, 1j, 1.0], dtype=object), "complex"),
    (np.zeros(3), "all 3 weights are zero"),
    (np.array([1.0, -1.0, 1.0]), "negative"),
    (np.array([1.0, np.nan, 1.0]), "NaN"),
    (np.array([1.0, np.inf, 1.0]), "infinity"),
    (np.full(3, 1e308), "sums to infinity"),
    (np.full(3, 5e-324), "too small"),
    (1j, "real number"),
])
def test_unusable_sample_weights_raise(weights, match):
    with pytest.raises(ValueError, match=match):
        v.check_sample_weight(weights, 3)


def test_all_zero_weights_only_where_asked_for():
    np.testing.assert_array_equal(v.check_sample_weight(np.zeros(3), 3, allow_all_zero=True),
                                  np.zeros(3))
    np.testing.assert_array_equal(v.check_sample_weight([0.0, 2.0, 0.0], 3), [0.0, 2.0, 0.0])
    assert v.check_sample_weight(None, 0).shape == (0,)


@pytest.mark.parametrize("make", [linclass.MaxEnt, linclass.LogisticRegression,
                                  linclass.MultinomialNB, linclass.Ridge])
def test_all_zero_sample_weight_names_it_instead_of_training_a_null_model(make):
    X = np.abs(np.random.default_rng(0).random((12, 3)))
    y = np.arange(12) % 2
    with pytest.raises(ValueError, match="sample_weight"):
        make().fit(X, y, sample_weight=np.zeros(12))


# ------------------------------------------------------------------ labels --
@pytest.mark.parametrize("y, match", [
    (np.array([1.0, float("nan"), 2.0], dtype=object), "NaN"),
    (np.array(["a", float("nan"), "b"], dtype=object), "NaN|Mix"),
    (np.array(["a", None, "b"], dtype=object), "None"),
    ([1, None, 2], "None"),
    (np.array([1, 2 + 1j, 2], dtype=object), "complex"),
    (np.array([1, 2, 2], dtype=complex), "complex"),
])
def test_labels_of_one_kind(y, match):
    with pytest.raises(ValueError, match=match):
        v.check_target(y)


def test_nan_label_never_becomes_classes():
    y = np.array([0.0, 1.0, float("nan"), float("nan")], dtype=object)
    X = np.random.default_rng(0).random((4, 2))
    for model in (linclass.LogisticRegression(), linclass.LinearSVC(), linclass.GaussianNB()):
        with pytest.raises(ValueError, match="NaN"):
            model.fit(X, y)


@pytest.mark.parametrize("check", ["target", "data"])
@pytest.mark.parametrize("y, match", [
    ([0.5, 1.5, 0.5, 1.5], "continuous"),
    (np.array([0.5, 1.0, 0.5, 1.0], dtype=object), "continuous"),
    ([3, 3, 3, 3], "only one class"),
    (["a", "a", "a", "a"], "only one class"),
    (np.array([0, 1, 0, 1], dtype=complex), "complex"),
    (None, "requires y"),
])
def test_one_classification_target_check(check, y, match):
    """check_classification_data and check_classification_target refuse the same
    targets with the same words (every classifier calls one of them)."""
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match=match):
        if check == "target":
            v.check_classification_target(y, 4)
        else:
            v.check_classification_data(X, y)


def test_classification_target_codes():
    classes, codes = v.check_classification_target(np.array([2.0, 5.0, 2.0]), 3)
    np.testing.assert_array_equal(classes, [2.0, 5.0])
    np.testing.assert_array_equal(codes, [0, 1, 0])
    X, classes, codes, w = v.check_classification_data(np.ones((3, 1)), ["b", "a", "b"],
                                                       [1.0, 0.0, 2.0])
    assert classes.tolist() == ["a", "b"] and codes.tolist() == [1, 0, 1]
    assert w.tolist() == [1.0, 0.0, 2.0]


@pytest.mark.parametrize("y, match", [([1.0, 1j, 2.0], "complex"), ([1.0, None, 2.0], "None|numbers"),
                                      ([1.0, np.nan, 2.0], "NaN")])
def test_regression_targets_are_real_and_finite(y, match):
    with pytest.raises(ValueError, match=match):
        v.check_regression_target(y, 3)
    with pytest.raises(ValueError, match=match):
        linclass.LinearRegression().fit(np.eye(3), y)


# -------------------------------------------------- non-finite predictions --
def test_non_finite_scores_raise_naming_the_model():
    owner = linclass.Perceptron()
    X = np.full((2, 2), 1e308)
    with pytest.raises(ValueError, match="Perceptron: .*not finite.*1e\\+308"):
        v.check_finite_output(owner, np.array([[1.0, np.nan], [0.0, 1.0]]), X)
    scores = np.array([[0.0, 1.0]])
    assert v.check_finite_output(owner, scores) is scores


def test_log_probabilities_may_be_minus_infinity_unless_x_overflows():
    owner = linclass.MultinomialNB()
    jll = np.array([[-np.inf, -1.0], [-np.inf, -np.inf]])
    assert v.check_finite_output(owner, jll, np.ones((2, 2)), log_domain=True) is jll
    with pytest.raises(ValueError, match="MultinomialNB"):
        v.check_finite_output(owner, jll, np.full((2, 2), 1e306), log_domain=True)
    with pytest.raises(ValueError, match="MultinomialNB"):
        v.check_finite_output(owner, np.array([[np.inf, 0.0]]), log_domain=True)


@pytest.mark.parametrize("make", [linclass.LinearSVC, linclass.LogisticRegression,
                                  linclass.Ridge, linclass.MaxEnt, linclass.GaussianNB,
                                  lambda: linclass.OneVsRestClassifier(linclass.LinearSVC())])
def test_decision_values_never_silently_nan(make):
    """Finite input near the largest double: every prediction method returns
    finite values or raises naming the model, and scores that overflow (here
    ``inf - inf`` for certain: weights scaled up after fit) always raise."""
    rng = np.random.default_rng(0)
    y = np.arange(40) % 3
    X = rng.standard_normal((40, 4)) + 3 * y[:, None]
    model = make().fit(X, y)
    huge = np.where(np.arange(8).reshape(2, 4) % 2, 1e308, -1.7e308)
    for method in ("decision_function", "predict_proba", "predict"):
        if hasattr(model, method):
            try:
                out = np.asarray(getattr(model, method)(huge))
            except ValueError as exc:
                assert type(model).__name__ in str(exc) or "LinearSVC" in str(exc)
            else:
                assert out.dtype.kind not in "fc" or np.isfinite(out).all(), method
    for est in [model] + list(getattr(model, "estimators_", [])):
        if hasattr(est, "coef_"):
            est.coef_ = est.coef_ * 1e6 + np.sign(est.coef_) * 10.0
    for method in ("decision_function", "predict_proba", "predict"):
        if hasattr(model, method) and hasattr(model, "coef_"):
            with pytest.raises(ValueError, match="not finite"):
                getattr(model, method)(huge)


# ----------------------------------------------------------- NotFittedError --
def _flat_public_estimators():
    """Public models fitted on a matrix ``X`` (the registry's flat ones)."""
    names = []
    for name, family in PUBLIC_MODELS.items():
        cls = getattr(linclass, name)
        fit = getattr(cls, "fit", None)
        if fit is None or family in ("sequence", "structured", "parsing", "alignment",
                                     "graph", "features"):
            continue
        names.append(name)
    return names


def test_the_hostile_sweep_covers_every_flat_public_estimator():
    covered = {type(eval(expr, {"linclass": linclass})).__name__
               for expr in hostile.MODELS.values()}
    missing = set(_flat_public_estimators()) - covered
    assert not missing, missing
    assert len(_flat_public_estimators()) >= 33


def test_not_fitted_error_is_caught_as_linclass_and_value_error():
    with pytest.raises(NotFittedError):
        linclass.LinearSVC().predict(np.ones((1, 2)))
    err = NotFittedError("x")
    assert isinstance(err, (ValueError, AttributeError))
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, NotFittedError) and back.args == ("x",)


def test_not_fitted_error_is_scikit_learns():
    exceptions = pytest.importorskip("sklearn.exceptions")
    for model in (linclass.LogisticRegression(), linclass.MaxEnt(), linclass.GaussianNB(),
                  linclass.OneVsOneClassifier(linclass.LinearSVC()),
                  linclass.CalibratedClassifier(linclass.LinearSVC())):
        with pytest.raises(exceptions.NotFittedError) as info:
            model.predict(np.ones((1, 2)))
        assert isinstance(info.value, NotFittedError)
        assert type(model).__name__ in str(info.value)


def test_import_linclass_does_not_import_scikit_learn():
    code = ("import sys, linclass, numpy as np\n"
            "assert 'sklearn' not in sys.modules\n"
            "linclass.Perceptron().fit(np.eye(4), [0, 1, 0, 1]).predict(np.eye(4))\n"
            "assert 'sklearn' not in sys.modules\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120,
                         cwd=_OUTSIDE_SOURCE)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_not_fitted_error_takes_the_bases_of_a_scikit_learn_imported_first():
    """Without scikit-learn installed: a stand-in ``sklearn.exceptions`` module
    present before the first error gives the error its class as a base."""
    code = ("import sys, types\n"
            "mod = types.ModuleType('sklearn.exceptions')\n"
            "class NotFittedError(ValueError, AttributeError): pass\n"
            "mod.NotFittedError = NotFittedError\n"
            "sys.modules['sklearn.exceptions'] = mod\n"
            "import linclass\n"
            "try:\n"
            "    linclass.Ridge().predict([[1.0]])\n"
            "except NotFittedError as err:\n"
            "    assert isinstance(err, linclass.exceptions.NotFittedError)\n"
            "    print('caught', type(err).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120,
                         cwd=_OUTSIDE_SOURCE)
    assert out.returncode == 0 and "caught NotFittedError" in out.stdout, out.stderr


@pytest.mark.parametrize("name", ["GaussianNB", "MaxEnt", "MixtureNB", "OneVsRestClassifier",
                                  "CostSensitiveClassifier", "PriorShiftClassifier",
                                  "ThresholdTuner", "CalibratedClassifier"])
def test_every_method_raises_not_fitted_before_fit(name):
    expr = hostile.MODELS[name]
    model = eval(expr, {"linclass": linclass})
    X = np.ones((2, 6))
    methods = [m for m in ("predict", "decision_function", "predict_proba",
                           "predict_log_proba", "score") if hasattr(model, m)]
    assert methods
    for method in methods:
        args = (X, [0, 1]) if method == "score" else (X,)
        with pytest.raises(NotFittedError):
            getattr(model, method)(*args)
        assert "sample_weight" not in inspect.signature(getattr(model, method)).parameters \
            or method == "score"


# ------------------------------------------------------------- termination --
_ITERATIVE = {
    "Perceptron": lambda m: linclass.Perceptron(max_iter=m, random_state=0),
    "LinearSVC": lambda m: linclass.LinearSVC(max_iter=m),
    "LinearSVCL1": lambda m: linclass.LinearSVC(max_iter=m, penalty="l1", dual=False),
    "CrammerSingerSVC": lambda m: linclass.CrammerSingerSVC(max_iter=m),
    "WestonWatkinsSVC": lambda m: linclass.WestonWatkinsSVC(max_iter=m),
    "LassoClassifier": lambda m: linclass.LassoClassifier(max_iter=m),
    "Lasso": lambda m: linclass.Lasso(max_iter=m),
    "RidgeCG": lambda m: linclass.Ridge(solver="cg", max_iter=m),
    "SGDClassifier": lambda m: linclass.SGDClassifier(max_iter=m, random_state=0),
    "LogisticRegression": lambda m: linclass.LogisticRegression(max_iter=m),
    "LogisticRegressionL1": lambda m: linclass.LogisticRegression(max_iter=m, penalty="l1"),
    "MaxEnt": lambda m: linclass.MaxEnt(max_iter=m),
    "MaxEntGIS": lambda m: linclass.MaxEnt(max_iter=m, algorithm="gis"),
    "MixtureNB": lambda m: linclass.MixtureNB(max_iter=m, random_state=0),
}


def _separable():
    rng = np.random.default_rng(0)
    y = np.arange(30) % 2
    return np.abs(rng.standard_normal((30, 3))) + 4.0 * y[:, None], y


@pytest.mark.parametrize("name", sorted(_ITERATIVE))
def test_iteration_budget_has_a_hard_cap(name):
    """max_iter above MAX_ITER_CAP runs at most the cap (a ConvergenceWarning
    names it) and never overflows a C int; -1 is refused naming max_iter."""
    X, y = _separable()
    with pytest.warns(linclass.exceptions.ConvergenceWarning, match="hard cap"):
        model = _ITERATIVE[name](2 ** 40).fit(X, y)
    assert np.all(np.asarray(getattr(model, "n_iter_", 0)) <= v.MAX_ITER_CAP)
    assert np.isfinite(np.asarray(model.predict(X), dtype=float)).all()
    with pytest.raises(ValueError, match="max_iter"):
        _ITERATIVE[name](-1).fit(X, y)
    assert v.iteration_budget(2 ** 40) == v.MAX_ITER_CAP and v.iteration_budget(7) == 7


@pytest.mark.parametrize("expr", [
    "LinearSVC(C=1e308)", "LinearSVC(C=1e308, loss='hinge')", "LinearSVC(C=1e-308)",
    "LinearSVC(class_weight={0: 1e308})", "LinearSVC(C=1e308, penalty='l1', dual=False)",
    "LogisticRegression(C=1e308)", "LogisticRegression(C=1e308, penalty='l1')",
    "SGDClassifier(alpha=1e300, random_state=0)", "CrammerSingerSVC(C=1e308)",
    "WestonWatkinsSVC(C=1e308)", "RidgeClassifier(alpha=1e-308)", "Lasso(alpha=1e300)",
    "Perceptron(eta0=1e308)", "MultinomialNB(alpha=1e308)", "Ridge(alpha=1e-308)",
])
def test_extreme_parameters_give_a_finite_model_or_an_error_naming_it(expr):
    """Regularisation near the limits of double precision: never NaN weights,
    dual coefficients or objectives kept silently."""
    X, y = hostile._data("LinearSVC")
    model = eval("linclass." + expr, {"linclass": linclass})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
    except ValueError as exc:
        assert type(model).__name__ in str(exc)
        return
    assert hostile._finite_state(model)
    assert hostile._finite_outputs(model, X)


class _NaNPosteriors:
    """A foreign classifier whose posteriors are NaN (a broken peer model)."""

    def get_params(self, deep=True):
        return {}

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((np.shape(X)[0], len(self.classes_)), np.nan)

    def predict(self, X):
        return self.classes_[np.zeros(np.shape(X)[0], dtype=int)]


@pytest.mark.parametrize("make", [
    lambda e: linclass.CostSensitiveClassifier(e), lambda e: linclass.RejectOption(e),
    lambda e: linclass.PriorShiftClassifier(e, priors=[0.5, 0.5]),
    lambda e: linclass.PosteriorCombiner([e, linclass.GaussianNB()])])
def test_decision_wrappers_pass_no_nan_posteriors_on(make):
    X = np.random.default_rng(0).random((20, 2))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="_NaNPosteriors: the posteriors .* not finite"):
        make(_NaNPosteriors()).fit(X, y).predict(X)


@pytest.mark.parametrize("cls", ["MultinomialNB", "BernoulliNB", "Perceptron", "SGDClassifier"])
def test_partial_fit_classes_and_labels_of_another_kind(cls):
    """partial_fit's classes go through the shared label check (naive Bayes
    took NaN as a class and leaked numpy's TypeError on None); labels of
    another kind than the fitted classes raise a ValueError naming the label
    (numpy's TypeError of '<' between str and int leaked)."""
    import linclass
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 6)), np.array([0, 1, 2] * 10)
    for classes, match in [([0, 1, 2, np.nan], "NaN"),
                           (np.array([0, 1, 2, None], dtype=object), "None"),
                           ([0, 1, 2 + 1j], "complex")]:
        with pytest.raises(ValueError, match=match):
            getattr(linclass, cls)().partial_fit(X, y, classes=classes)
    model = getattr(linclass, cls)()
    model.partial_fit(X, np.array(["a", "b", "c"])[y], classes=["a", "b", "c"])
    with pytest.raises(ValueError, match="label 0 was not seen"):
        model.partial_fit(X, y)


@pytest.mark.parametrize("make", [
    lambda: linclass.MultiClassSVM(loss_matrix=(1 - np.eye(3)) + 1j),
    lambda: linclass.KernelMultiClassSVM(loss_matrix=(1 - np.eye(3)) + 1j),
    lambda: linclass.CostSensitiveClassifier(linclass.LogisticRegression(),
                                             cost_matrix=(1 - np.eye(3)) + 1j),
    lambda: linclass.PriorShiftClassifier(linclass.LogisticRegression(),
                                          priors=[0.3 + 1j, 0.3, 0.4]),
], ids=["MultiClassSVM", "KernelMultiClassSVM", "CostSensitiveClassifier",
        "PriorShiftClassifier"])
def test_complex_array_parameters_are_refused_not_cast(make):
    X, y = np.random.default_rng(0).random((30, 6)), np.array([0, 1, 2] * 10)
    with pytest.raises(ValueError, match="complex"):
        make().fit(X, y)


def test_threshold_tuner_needs_two_thresholds():
    X, y = np.random.default_rng(0).random((30, 3)), np.array([0, 1] * 15)
    with pytest.raises(ValueError, match="n_thresholds"):
        linclass.ThresholdTuner(linclass.LogisticRegression(), n_thresholds=0).fit(X, y)


def test_reject_option_keeps_numeric_classes_numeric_and_checks_its_threshold():
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 3)), np.array([0, 1] * 20)
    model = linclass.RejectOption(linclass.LogisticRegression(), threshold=0.9,
                                  reject_label="rej").fit(X, y)
    out = model.predict(X)
    assert "rej" in set(out.tolist())
    assert {type(v) for v in out.tolist() if v != "rej"} <= {int}
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        linclass.RejectOption(linclass.LogisticRegression(), threshold=2.0).fit(X, y)


@pytest.mark.parametrize("cls", ["MultiClassSVM", "KernelMultiClassSVM"])
def test_loss_matrix_beyond_double_precision_is_refused(cls):
    # losses of 1e300 swallowed every score: all samples were predicted as one class
    X, y = np.random.default_rng(0).random((30, 6)), np.array([0, 1, 2] * 10)
    for scale in (1e13, 1e300):
        with pytest.raises(ValueError, match="loss_matrix holds values up to"):
            getattr(linclass, cls)(loss_matrix=(1 - np.eye(3)) * scale).fit(X, y)


def test_loss_matrix_and_c_scaled_together_keep_the_predictions():
    # the advice the refusal gives: (c L, c C) has the solution c w of (L, C)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(60, 4)), np.repeat([0, 1, 2], 20)
    X += y[:, None]
    L = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    a = linclass.MultiClassSVM(loss_matrix=L, C=1.0, tol=1e-5).fit(X, y)
    b = linclass.MultiClassSVM(loss_matrix=L * 10, C=10.0, tol=1e-5).fit(X, y)
    np.testing.assert_allclose(b.coef_, 10 * a.coef_, rtol=1e-2, atol=1e-3)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
