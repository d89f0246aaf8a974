"""Issue #35 for the kernel models: sparse input with no stored entries (once a
segfault), extreme C and sample weights (once a hang), overflowing data (once
NaN decision values), save/load of sparse fits, label checks of the
multi-class SVMs.  Cases that could crash the interpreter run in one child
process, so that a crash fails a test instead of the run."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linclass
from linclass.exceptions import ConvergenceWarning, NotFittedError
from linclass.joint.svm import MultiClassSVM
from linclass.kernels import (SVC, KernelLogisticRegression, KernelMultiClassSVM,
                              KernelPerceptron, KernelRidge, KernelRidgeClassifier, MercerMap,
                              pairwise_kernels)

MODELS = {
    "SVC": lambda: SVC(kernel="rbf", gamma=0.5),
    "KernelPerceptron": lambda: KernelPerceptron(kernel="rbf", gamma=0.5, random_state=0),
    "MercerMap": lambda: MercerMap(n_landmarks=10, kernel="rbf", gamma=0.5, random_state=0),
    "KernelRidge": lambda: KernelRidge(kernel="rbf", gamma=0.5),
    "KernelRidgeClassifier": lambda: KernelRidgeClassifier(kernel="rbf", gamma=0.5),
    "KernelLogisticRegression": lambda: KernelLogisticRegression(kernel="rbf", gamma=0.5),
    "KernelMultiClassSVM": lambda: KernelMultiClassSVM(kernel="rbf", gamma=0.5),
}


# children run Python from here, not from the repository root, whose unbuilt
# linclass/ would shadow the installed package
_OUTSIDE_SOURCE = os.path.dirname(os.path.abspath(__file__))


def _data(n=30, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


def _output(model, X):
    if isinstance(model, MercerMap):
        return model.transform(X)
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    return model.predict(X)


# Run in a child: every kernel model x {linear, rbf, poly} x fit on {dense,
# sparse with empty rows, sparse with no stored entry}, then predict on
# {sparse without entries, dense, sparse}; each sparse answer must equal the
# dense one.  Also pairwise_kernels on every mix with an empty CSR matrix.
_CHILD = r"""
import json, sys, warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
sys.path.insert(0, %(here)r)
from test_kernel_hostile import MODELS, _data, _output
from linclass.kernels import pairwise_kernels

def report(case, ok):
    print("RESULT " + json.dumps([case, ok]), flush=True)

X, y = _data()
y2 = (X[:, 0] > 0).astype(int)
Xs = sp.csr_matrix(X * (np.arange(30) %% 5 != 0)[:, None])     # 6 empty rows
fits = {"dense": X, "sparse-empty-rows": Xs, "no-entries": sp.csr_matrix((30, 4))}
E = sp.csr_matrix((3, 4))
for name, make in MODELS.items():
    for kernel in ("linear", "rbf", "poly"):
        for fit_name, Xfit in fits.items():
            model = make().set_params(kernel=kernel)
            target = X[:, 2] if name == "KernelRidge" else y2 if fit_name == "no-entries" else y
            if fit_name == "no-entries" and name in ("MercerMap", "KernelLogisticRegression"):
                continue          # a zero kernel matrix has nothing to map or fit
            try:
                model.fit(Xfit, target)
            except ValueError as exc:          # a clear refusal is fine
                report([name, kernel, fit_name, "fit"], "refused: %%s" %% exc)
                continue
            got = _output(model, E)
            want = _output(model, np.zeros((3, 4)))
            report([name, kernel, fit_name, "empty"], bool(np.allclose(got, want)))
            got = _output(model, sp.csr_matrix(X[:5]))
            want = _output(model, X[:5])
            report([name, kernel, fit_name, "sparse"], bool(np.allclose(got, want)))
for kernel in ("linear", "poly", "rbf", "sigmoid"):
    for a, b in ((E, X), (X, E), (E, E), (E, None), (sp.csr_matrix(X), E)):
        K = pairwise_kernels(a, b, kernel=kernel)
        dense = pairwise_kernels(a.toarray() if sp.issparse(a) else a,
                                 None if b is None else b.toarray() if sp.issparse(b) else b,
                                 kernel=kernel)
        report(["pairwise_kernels", kernel, a.shape, None if b is None else b.shape],
               bool(np.allclose(K, dense)))
print("DONE", flush=True)
"""


def test_empty_and_mixed_sparse_input_in_a_child_process():
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, "-c", _CHILD % {"here": here}],
                          capture_output=True, text=True, timeout=600,
                          cwd=_OUTSIDE_SOURCE)
    results = [json.loads(line[7:]) for line in proc.stdout.splitlines()
               if line.startswith("RESULT ")]
    last = results[-1][0] if results else None
    assert proc.returncode == 0 and "DONE" in proc.stdout, \
        "child died (rc=%d) after %r: %s" % (proc.returncode, last, proc.stderr[-2000:])
    bad = [(case, ok) for case, ok in results if ok is not True]
    assert not bad, bad
    # 7 models x 3 kernels x 3 fits (2 models skip one) x 2 inputs + 4 x 5 pairwise
    assert len(results) == 7 * 3 * 3 * 2 - 2 * 3 * 2 + 20


def test_svc_with_extreme_weights_returns_with_a_convergence_warning():
    X, y = _data(n=40, d=3)
    y = (X[:, 0] + 0.5 * np.random.default_rng(1).normal(size=40) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="hard cap"):
        model = SVC(kernel="linear", C=1e30, max_iter=-1).fit(X, y)
    assert model.n_iter_[0] == max(linclass.kernels.svc.SMO_ITERATION_CAP, 100 * 40)
    assert np.isfinite(model.decision_function(X)).all()
    # C * sample_weight beyond double precision: a clear error, not a hang
    with pytest.raises(ValueError, match="SVC: C \\* sample_weight"):
        SVC(C=1e300).fit(X, y, sample_weight=np.full(40, 1e300))


def test_smo_budget_for_max_iter_minus_one():
    from linclass.kernels.svc import SMO_ITERATION_CAP, smo_iteration_budget
    assert smo_iteration_budget(-1, 10) == SMO_ITERATION_CAP
    assert smo_iteration_budget(-1, 10 ** 6) == 10 ** 8
    assert smo_iteration_budget(7, 10 ** 6) == 7


def test_smo_stops_on_a_non_finite_gradient():
    from linclass._core._smo import smo_solve
    G = np.array([[1e308, -1e308], [-1e308, 1e308]])     # Q overflows in the update
    with pytest.raises(FloatingPointError, match="non-finite"):
        smo_solve(data=G.ravel(), indices=np.zeros(0, np.int32), indptr=np.zeros(0, np.int32),
                  n_rows=2, n_cols=2, sparse=False, sq_norms=None,
                  rows=np.arange(2, dtype=np.int32), y=np.array([1.0, -1.0]),
                  C=np.array([1e300, 1e300]), kind=4, gamma=0.0, coef0=0.0, degree=1,
                  tol=1e-3, cache_bytes=1e6, shrinking=True, max_iter=1000)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_huge_values_raise_naming_the_model(name):
    X, y = _data()
    target = X[:, 2] if name == "KernelRidge" else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match=name):
            MODELS[name]().set_params(kernel="linear").fit(X * 1e300, target)
        model = MODELS[name]().set_params(kernel="poly").fit(X, target)
    # (gamma x.x' + coef0) ** 3 overflows: an error, not NaN or infinite scores
    with pytest.raises(ValueError, match=name + ".*not finite|not finite.*" + name):
        _output(model, X * 1e300)


def test_pairwise_kernels_overflow_names_the_function():
    X, _ = _data()
    with pytest.raises(ValueError, match="pairwise_kernels: the 'poly' kernel"):
        pairwise_kernels(X * 1e300, X, kernel="poly", gamma=1.0)
    # far apart is exact for the RBF kernel: the values are 0, not NaN
    K = pairwise_kernels(X * 1e300, X, kernel="rbf", gamma=1.0)
    assert np.array_equal(K, np.zeros_like(K))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("make", [
    lambda: SVC(kernel="rbf", probability=True, random_state=0),
    lambda: SVC(kernel="linear", multi_class="ovr"),
    lambda: KernelPerceptron(kernel="poly", degree=2, random_state=0),
    lambda: MercerMap(n_landmarks=12, n_components=4, random_state=0),
    lambda: MercerMap(n_landmarks=12, kernel="poly", random_state=0),
    lambda: KernelMultiClassSVM(kernel="rbf", gamma=0.5),
], ids=["SVC-proba", "SVC-ovr", "KernelPerceptron", "MercerMap-components",
        "MercerMap-poly", "KernelMultiClassSVM"])
def test_save_load_predicts_the_same(make, sparse, tmp_path):
    X, y = _data()
    Xin = sp.csr_matrix(X * (np.abs(X) > 0.3)) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = make().fit(Xin, y)
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = linclass.load(path)
    for Z in (Xin, sp.csr_matrix((4, 4)), X[:7]):
        np.testing.assert_array_equal(_output(loaded, Z), _output(model, Z))
        if not isinstance(model, MercerMap):
            np.testing.assert_array_equal(loaded.predict(Z), model.predict(Z))


@pytest.mark.parametrize("cls", [MultiClassSVM, KernelMultiClassSVM])
@pytest.mark.parametrize("y, message", [
    (np.ones(12), "only one class"),
    (np.linspace(0.05, 0.95, 12), "continuous"),
    (np.arange(12) % 3 + 1j, "complex"),
    (np.array(["a", None] * 6, dtype=object), "None"),
])
def test_multiclass_svms_check_their_labels(cls, y, message):
    X = np.random.default_rng(0).normal(size=(12, 3))
    with pytest.raises(ValueError, match=message):
        cls().fit(X, y)


def test_kernel_multiclass_svm_refuses_all_zero_weights():
    X, y = _data()
    with pytest.raises(ValueError, match="zero"):
        KernelMultiClassSVM().fit(X, y, sample_weight=np.zeros(len(y)))


@pytest.mark.parametrize("make", [*MODELS.values(), lambda: MultiClassSVM(),
                                  lambda: SVC(probability=True)],
                         ids=[*MODELS, "MultiClassSVM", "SVC-proba"])
def test_not_fitted_error_before_fit(make):
    model = make()
    X = np.ones((2, 4))
    for method in ("predict", "decision_function", "predict_proba", "transform", "score"):
        if not hasattr(type(model), method):
            continue
        if method == "predict_proba" and isinstance(model, SVC):
            method = "_predict_proba"
        args = (X, [0, 1]) if method == "score" else (X,)
        with pytest.raises(NotFittedError):
            getattr(model, method)(*args)


@pytest.mark.parametrize("y, message", [(np.arange(30) + 1j, "complex"),
                                        ([1.0] * 29 + [None], "None"),
                                        ([1.0] * 29 + [np.nan], "NaN")])
def test_kernel_ridge_targets_are_real_numbers(y, message):
    X, _ = _data()
    with pytest.raises(ValueError, match=message):
        KernelRidge().fit(X, y)


@pytest.mark.parametrize("make", [lambda: SVC(C=2.0),
                                  lambda: KernelPerceptron(max_iter=3, random_state=0)],
                         ids=["SVC", "KernelPerceptron"])
def test_unfitted_kernel_models_save_and_load(make, tmp_path):
    """A meta-estimator saves its unfitted template (CalibratedClassifier(SVC()))."""
    path = tmp_path / "unfitted.npz"
    make().save(path)
    loaded = linclass.load(path)
    assert loaded.get_params() == make().get_params()
    with pytest.raises(NotFittedError):
        loaded.predict(np.ones((2, 4)))
    X, y = _data()
    np.testing.assert_array_equal(loaded.fit(X, y).predict(X), make().fit(X, y).predict(X))


def test_multiclass_svm_overflowing_scores_raise_naming_the_model():
    X, y = _data()
    model = MultiClassSVM(max_iter=20, random_state=0).fit(X, y)
    huge = np.where(np.arange(X.size).reshape(X.shape) % 2, 1e308, -1.7e308)
    for Z in (huge, sp.csr_matrix(huge)):
        with pytest.raises(ValueError, match="MultiClassSVM"):
            model.decision_function(Z)


@pytest.mark.parametrize("make, attribute", [
    (lambda: SVC(kernel="rbf"), "dual_coef_"),
    (lambda: SVC(kernel="rbf"), "intercept_"),
    (lambda: SVC(kernel="rbf"), "support_vectors_"),
    (lambda: KernelPerceptron(kernel="rbf", random_state=0), "dual_coef_"),
    (lambda: KernelPerceptron(kernel="rbf", random_state=0), "support_vectors_"),
], ids=["SVC-dual", "SVC-intercept", "SVC-sv", "KernelPerceptron-dual", "KernelPerceptron-sv"])
def test_state_check_refuses_non_finite_fitted_arrays(make, attribute):
    X, y = _data()
    model = make().fit(X, y)
    model._check_state()
    value = getattr(model, attribute).copy()
    value.flat[0] = np.nan
    setattr(model, attribute, value)
    with pytest.raises(ValueError, match=attribute + " must be finite"):
        model._check_state()


@pytest.mark.parametrize("make, attribute, value", [
    (lambda: MercerMap(n_landmarks=10, random_state=0), "landmarks_", np.nan),
    (lambda: MercerMap(n_landmarks=10, random_state=0), "landmarks_", 1e300),
    (lambda: MercerMap(n_landmarks=10, random_state=0), "projection_", np.inf),
    (lambda: KernelRidgeClassifier(kernel="rbf"), "X_fit_", 1e300),
    (lambda: KernelRidgeClassifier(kernel="rbf"), "dual_coef_", np.nan),
    (lambda: SVC(kernel="rbf"), "support_vectors_", -1e300),
], ids=["mercer-nan", "mercer-huge", "mercer-projection", "ridge-huge-basis",
        "ridge-nan-coef", "svc-huge-sv"])
@pytest.mark.parametrize("sparse", [False, True])
def test_state_check_refuses_what_would_overflow_at_predict(make, attribute, value, sparse,
                                                             tmp_path):
    X, y = _data()
    model = make().fit(sp.csr_matrix(X) if sparse else X, y)
    model._check_state()
    array = getattr(model, attribute).copy()
    (array.data if sp.issparse(array) else array.reshape(-1))[0] = value
    setattr(model, attribute, array)
    with pytest.raises(ValueError, match=attribute):
        model._check_state()


def _linear_callable(a, b):
    return np.asarray(a) @ np.asarray(b).T


@pytest.mark.parametrize("cls", [SVC, KernelLogisticRegression, KernelMultiClassSVM,
                                 KernelRidge, KernelRidgeClassifier, KernelPerceptron])
def test_kernel_callables_complex_values_refused_and_called_with_two_matrices(cls):
    """A callable returning complex values was cast to real (SVC); the
    representer models (kernel ridge, kernel logistic, kernel multi-class SVM)
    called the callable with Y=None at fit (TypeError inside the user's code)."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 4))
    y = np.array([0, 1, 2] * 10)
    X[:, 0] += y
    model = cls(kernel=_linear_callable).fit(X, y)
    assert np.asarray(model.predict(X)).shape == (30,)
    with pytest.raises(ValueError, match="complex"):
        cls(kernel=lambda a, b: _linear_callable(a, b) * (1 + 1j)).fit(X, y)


@pytest.mark.parametrize("cls", [KernelLogisticRegression, KernelMultiClassSVM,
                                 KernelRidgeClassifier])
def test_sequence_kernels_take_generators(cls):
    """A generator of strings was consumed by counting it: 'X has 0 samples'."""
    strings, y = ["abab", "abba", "cdcd", "dcdc"] * 3, [0, 0, 1, 1] * 3
    model = cls(kernel=linclass.SpectrumKernel(2)).fit((s for s in strings), y)
    np.testing.assert_array_equal(model.predict(s for s in strings[:4]), [0, 0, 1, 1])
