"""Hostile inputs for every flat estimator, run in child processes.

A case that crashes the interpreter (a segfault in a kernel) must fail a
test, not end the test run: :func:`run_cases` runs the cases of one group in
a child process that prints one result line per finished case, and restarts
the child after the case it was running when it died.

Outcomes of a case:

``ok``
    a clear error (``ValueError``/``TypeError``/a linclass error) for input
    that must be refused, or a finite fitted model for input that is valid;
``crash``
    the child died (signal or abnormal exit) during the case;
``silent``
    malformed input was accepted, or the model came out with NaN/inf
    weights without an error;
``error:<type>``
    any other exception type (an internal error leaking out).

Run as a script (``python tests/hostile.py``) to print the counts per
estimator and per case, as the reliability issue (#17) tabulates them;
``python tests/hostile.py --contract [GROUP[,GROUP...]|all] [MODEL...]`` runs
the input-contract classes of #35 (:data:`CONTRACT_CASES`: complex X, sample
weights, labels, huge values, empty sparse input, use before fit), one case
generator per class over every flat estimator of :data:`MODELS`.
"""
import json
import os
import subprocess
import sys

MODELS = {
    # name -> constructor expression (evaluated in the child, linclass imported)
    "Perceptron": "linclass.Perceptron(max_iter=5, random_state=0)",
    "KernelPerceptron": "linclass.KernelPerceptron(max_iter=3, random_state=0)",
    "LinearSVC": "linclass.LinearSVC()",
    "LinearSVCL1": "linclass.LinearSVC(penalty='l1', dual=False)",
    "CrammerSingerSVC": "linclass.CrammerSingerSVC()",
    "WestonWatkinsSVC": "linclass.WestonWatkinsSVC()",
    "OneVsRestClassifier": "linclass.OneVsRestClassifier(linclass.LinearSVC())",
    "OneVsOneClassifier": "linclass.OneVsOneClassifier(linclass.LinearSVC())",
    "LeastSquaresClassifier": "linclass.LeastSquaresClassifier()",
    "RidgeClassifier": "linclass.RidgeClassifier()",
    "LassoClassifier": "linclass.LassoClassifier()",
    "SVC": "linclass.SVC()",
    "SGDClassifier": "linclass.SGDClassifier(max_iter=5, tol=None, random_state=0)",
    "LinearRegression": "linclass.LinearRegression()",
    "Ridge": "linclass.Ridge()",
    "Lasso": "linclass.Lasso()",
    "MultinomialNB": "linclass.MultinomialNB()",
    "BernoulliNB": "linclass.BernoulliNB()",
    "MixtureNB": "linclass.MixtureNB(random_state=0)",
    "LogisticRegression": "linclass.LogisticRegression()",
    "LogisticRegressionL1": "linclass.LogisticRegression(penalty='l1')",
    "MaxEnt": "linclass.MaxEnt(max_iter=20)",
    "MultiClassSVM": "linclass.MultiClassSVM(max_iter=20, random_state=0)",
    "RankSVM": "linclass.RankSVM()",
    "MercerMap": "linclass.MercerMap(n_components=3, n_landmarks=20, random_state=0)",
    "GaussianNB": "linclass.GaussianNB()",
    "KernelRidge": "linclass.KernelRidge(kernel='rbf')",
    "KernelRidgeClassifier": "linclass.KernelRidgeClassifier(kernel='rbf')",
    "KernelLogisticRegression": "linclass.KernelLogisticRegression(max_iter=50)",
    "KernelMultiClassSVM": "linclass.KernelMultiClassSVM(kernel='rbf')",
    "CostSensitiveClassifier": "linclass.CostSensitiveClassifier(linclass.LogisticRegression())",
    "RejectOption": "linclass.RejectOption(linclass.LogisticRegression(), threshold=0.4)",
    "PriorShiftClassifier": "linclass.PriorShiftClassifier(linclass.LogisticRegression())",
    "CalibratedClassifier": "linclass.CalibratedClassifier(linclass.LinearSVC(), cv=3, "
                            "random_state=0)",
    "PosteriorCombiner": "linclass.PosteriorCombiner([linclass.LogisticRegression(), "
                         "linclass.GaussianNB()])",
    "ThresholdTuner": "linclass.ThresholdTuner(linclass.LogisticRegression(), cv=3, "
                      "random_state=0)",
    "OneVsRestLogistic": "linclass.OneVsRestClassifier(linclass.LogisticRegression())",
    "OneVsRestSVC": "linclass.OneVsRestClassifier(linclass.SVC())",
    "OneVsOneSVC": "linclass.OneVsOneClassifier(linclass.SVC())",
}

REGRESSORS = {"LinearRegression", "Ridge", "Lasso", "RankSVM", "KernelRidge"}
NONNEGATIVE = {"MultinomialNB", "MixtureNB"}
BINARY = {"ThresholdTuner"}
DENSE_ONLY = {"GaussianNB", "PosteriorCombiner"}     # refuse sparse X with a TypeError             # binary classifiers: two classes in the data
UNSUPERVISED = {"MercerMap"}

# case -> (where: "fit" or "predict", expected: "refuse" or "accept")
CASES = {
    "csr_index_too_large": ("fit", "refuse"),
    "csr_index_negative": ("fit", "refuse"),
    "csr_index_wraps_int32": ("fit", "refuse"),
    "csr_indptr_decreasing": ("fit", "refuse"),
    "csr_indptr_past_nnz": ("fit", "refuse"),
    "csr_indptr_start": ("fit", "refuse"),
    "csr_flag_lies_canonical": ("fit", "accept"),
    "predict_csr_index_too_large": ("predict", "refuse"),
    "predict_csr_indptr_decreasing": ("predict", "refuse"),
    "dense_nan": ("fit", "refuse"),
    "dense_inf": ("fit", "refuse"),
    "sparse_nan": ("fit", "refuse"),
    "predict_inf": ("predict", "refuse"),
    "huge_values": ("fit", "accept_or_refuse"),
    "mixed_labels": ("fit", "refuse"),
}


def _data(name):
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.random((30, 6))
    if name in REGRESSORS:
        y = X @ np.arange(1.0, 7.0) + 0.1 * rng.standard_normal(30)
        if name == "RankSVM":
            y = np.round(y)
    else:
        y = np.array([0, 1] * 15) if name in BINARY else np.array([0, 1, 2] * 10)
        X[:, 0] += y
    return X, y


def _malformed(X, case):
    import numpy as np
    import scipy.sparse as sp
    A = sp.csr_matrix(X)
    data, ind, ptr = A.data.copy(), A.indices.copy(), A.indptr.copy()
    if case.endswith("index_too_large"):
        ind[5] = 2 ** 30
    elif case.endswith("index_negative"):
        ind[5] = -3
    elif case.endswith("index_wraps_int32"):
        ind = ind.astype(np.int64)
        ind[5] = 2 ** 32 + 1
        ptr = ptr.astype(np.int64)
    elif case.endswith("indptr_decreasing"):
        ptr[3] = ptr[5] + 3
    elif case.endswith("indptr_past_nnz"):
        ptr[len(ptr) - 1] += 7
        ptr[len(ptr) - 2] += 7
    elif case.endswith("indptr_start"):
        ptr[0] = 2
    elif case == "csr_flag_lies_canonical":
        # unsorted row indices with a flag that claims canonical form
        i0, i1 = ptr[2], ptr[3]
        ind[i0:i1] = ind[i0:i1][::-1].copy()
        data[i0:i1] = data[i0:i1][::-1].copy()
        M = sp.csr_matrix((data, ind, ptr), shape=A.shape)
        M.has_sorted_indices = True
        try:
            M.has_canonical_format = True
        except Exception:
            pass
        return M
    return sp.csr_matrix((data, ind, ptr), shape=A.shape)


def _fit(model, name, X, y):
    if name == "RankSVM":
        import numpy as np
        return model.fit(X, y, qid=np.repeat(np.arange(3), 10))
    if name == "MercerMap":
        return model.fit(X)
    return model.fit(X, y)


def _use(model, name, X):
    return model.transform(X) if name == "MercerMap" else model.predict(X)


def _finite_state(model):
    import numpy as np
    for key, value in vars(model).items():
        if key.endswith("_") and isinstance(value, np.ndarray) and value.dtype.kind == "f":
            if np.isnan(value).any() or np.isposinf(value).any():
                return False
    return True


def run_case(name, case):
    """One case in this process; returns its outcome string."""
    import numpy as np
    import linclass
    where, expected = CASES[case]
    X, y = _data(name)
    if name in NONNEGATIVE:
        X = np.abs(X)
    model = eval(MODELS[name], {"linclass": linclass})
    try:
        if where == "predict":
            _fit(model, name, X, y)
            if case == "predict_inf":
                Xbad = X.copy()
                Xbad[2, 3] = np.inf
            else:
                Xbad = _malformed(X, case)
            _use(model, name, Xbad)
            return "silent"
        if case.startswith("csr_"):
            Xbad = _malformed(X, case)
        elif case == "dense_nan":
            Xbad = X.copy()
            Xbad[4, 1] = np.nan
        elif case == "dense_inf":
            Xbad = X.copy()
            Xbad[4, 1] = -np.inf
        elif case == "sparse_nan":
            import scipy.sparse as sp
            Xbad = sp.csr_matrix(X)
            Xbad.data[3] = np.nan
        elif case == "huge_values":
            Xbad = X * 1e300
        elif case == "mixed_labels":
            Xbad = X
            if name == "MercerMap":
                return "ok"                 # unsupervised
            y = [1, "a", 2] * 10
        _fit(model, name, Xbad, y)
        if expected == "refuse":
            return "silent"
        if not _finite_state(model):
            return "silent"
        if case == "csr_flag_lies_canonical":
            # same model as on the canonical matrix
            import copy
            import scipy.sparse as sp
            ref = _fit(copy.deepcopy(eval(MODELS[name], {"linclass": linclass})), name,
                       sp.csr_matrix(X), y)
            out, want = _use(model, name, X), _use(ref, name, X)
            if not np.allclose(np.asarray(out, dtype=float), np.asarray(want, dtype=float)):
                return "silent"
        return "ok"
    except (ValueError, TypeError, ArithmeticError) as exc:
        if expected == "accept" and not (name in DENSE_ONLY and isinstance(exc, TypeError)):
            return "error:%s:%s" % (type(exc).__name__, str(exc)[:80])
        return "ok"


# ------------------------------------------------- the input contract (#35) --
#: class -> its cases; every case of every class runs against every model of
#: MODELS (a case that does not apply to a model, such as a label case for an
#: unsupervised transformer, returns ``ok``).  Outcomes as for CASES, plus
#: ``silent`` for a NaN/inf output or a wrong exception type.
CONTRACT_CASES = {
    "complex_X": ["complex_dense_fit", "complex_sparse_fit", "complex_dense_predict",
                  "complex_sparse_predict"],
    "sample_weight": ["sw_complex", "sw_all_zero", "sw_negative", "sw_nan", "sw_inf",
                      "sw_huge", "sw_tiny"],
    "labels": ["y_nan_object", "y_none_object", "y_nan_float", "y_single_class",
               "y_continuous", "y_complex"],
    "huge_values": ["huge_fit", "huge_fit_extreme", "huge_predict", "huge_predict_sparse"],
    "empty_sparse": ["empty_sparse_predict", "empty_sparse_fit"],
    "not_fitted": ["not_fitted"],
}

_METHODS = ("predict", "decision_function", "predict_proba", "transform")


def _outputs(model, X):
    """Every prediction method of ``model`` on ``X``: ``{method: array}``."""
    import numpy as np
    out = {}
    for method in _METHODS:
        if hasattr(model, method):
            out[method] = np.asarray(getattr(model, method)(X))
    return out


def _finite_outputs(model, X):
    """Outputs of every method are finite (labels need not be numbers)."""
    import numpy as np
    for method, value in _outputs(model, X).items():
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            return False
        if value.shape[0] != X.shape[0]:
            return False
    return True


def _names(model):
    """Class names of ``model`` and of the estimators it wraps."""
    names = {type(model).__name__}
    for value in vars(model).values():
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if hasattr(item, "get_params") and not isinstance(item, type):
                names |= _names(item)
    return names


def _contract_fit_case(name, case, model, X, y):
    """``(X, y, fit_kwargs)`` to fit for case ``case`` (None: does not apply)."""
    import inspect
    import numpy as np
    import scipy.sparse as sp
    kw = {}
    if case.startswith("complex_") and case.endswith("_fit"):
        Xc = X.astype(complex)
        Xc[1, 1] += 1j
        return (sp.csr_matrix(Xc) if "sparse" in case else Xc), y, kw
    if case.startswith("sw_"):
        if "sample_weight" not in inspect.signature(model.fit).parameters:
            return None
        w = np.ones(X.shape[0])
        if case == "sw_complex":
            w = w.astype(complex)
            w[2] = 1 + 1j
        elif case == "sw_all_zero":
            w[:] = 0.0
        elif case == "sw_huge":                    # finite, but sums of weights overflow
            w[:] = 1e308
        elif case == "sw_tiny":                    # positive, but underflow in products
            w[:] = 5e-324
        else:
            w[3] = {"sw_negative": -1.0, "sw_nan": np.nan, "sw_inf": np.inf}[case]
        return X, y, dict(sample_weight=w)
    if case.startswith("y_"):
        if name in UNSUPERVISED:
            return None
        classifier = name not in REGRESSORS
        if case in ("y_single_class", "y_continuous") and not classifier:
            return None
        yb = np.asarray(y).astype(object if case.endswith("_object") else float)
        if case == "y_nan_object":
            yb[4] = float("nan")
        elif case == "y_none_object":
            yb[4] = None
        elif case == "y_nan_float":
            yb[4] = np.nan
        elif case == "y_single_class":
            yb[:] = 1.0
        elif case == "y_continuous":
            yb = yb + np.linspace(0.01, 0.49, len(yb))
        elif case == "y_complex":
            yb = yb.astype(complex)
            yb[5] += 1j
        return X, yb, kw
    if case == "huge_fit":
        return X * 1e300, y, kw
    if case == "huge_fit_extreme":                 # sums of two values overflow
        scaled = X / np.abs(X).max() * 1.7e308
        return (scaled if name in NONNEGATIVE else scaled * np.sign(X - 0.5)), y, kw
    if case == "empty_sparse_fit":
        return sp.csr_matrix(X.shape), y, kw
    raise KeyError(case)


def _contract_predict_X(case, X, nonnegative=False):
    import numpy as np
    import scipy.sparse as sp
    if case.startswith("complex_"):
        Xc = X.astype(complex)
        Xc[1, 1] += 1j
        return sp.csr_matrix(Xc) if "sparse" in case else Xc
    if case.startswith("huge_predict"):
        # finite, but X @ w overflows (and inf - inf is NaN) for any weights > ~1
        huge = np.where(np.arange(X.size).reshape(X.shape) % 2, 1e308, -1.7e308)
        if nonnegative:
            huge = np.abs(huge)
        return sp.csr_matrix(huge) if case.endswith("sparse") else huge
    if case == "empty_sparse_predict":
        return sp.csr_matrix((4, X.shape[1]))
    raise KeyError(case)


def _not_fitted_case(name, model, X, y):
    """Every method before ``fit`` raises linclass's NotFittedError, which is
    also scikit-learn's when scikit-learn is installed."""
    from linclass.exceptions import NotFittedError
    try:
        from sklearn.exceptions import NotFittedError as SkNotFitted
    except ImportError:
        SkNotFitted = NotFittedError
    for method in _METHODS + ("score",):
        if not hasattr(model, method):
            continue
        args = (X, y) if method == "score" else (X,)
        try:
            getattr(model, method)(*args)
        except NotFittedError as exc:
            if not isinstance(exc, SkNotFitted):
                return "silent:%s: not scikit-learn's NotFittedError" % method
            continue
        except Exception as exc:
            return "error:%s:%s:%s" % (method, type(exc).__name__, str(exc)[:60])
        return "silent:%s answered before fit" % method
    return "ok"


def _refused(exc, model, case):
    """A refusal is a ValueError/TypeError; for huge values it names the model."""
    if not isinstance(exc, (ValueError, TypeError)):
        return "error:%s:%s" % (type(exc).__name__, str(exc)[:80])
    names = _names(model) | ({"sample_weight"} if case.startswith("sw_") else set())
    if case.startswith(("huge", "sw_huge")) and not any(n in str(exc) for n in names):
        return "unclear:%s" % str(exc)[:80]
    return "ok"


def run_contract_case(name, case):
    """One case of CONTRACT_CASES in this process; returns its outcome."""
    import numpy as np
    import linclass
    X, y = _data(name)
    if name in NONNEGATIVE:
        X = np.abs(X)
    model = eval(MODELS[name], {"linclass": linclass})
    if case == "not_fitted":
        return _not_fitted_case(name, model, X, y)
    accept = case.startswith(("huge", "empty_sparse", "sw_huge", "sw_tiny"))
    if case.endswith("_predict") or case == "huge_predict_sparse":
        _fit(model, name, X, y)
        Xbad = _contract_predict_X(case, X, nonnegative=name in NONNEGATIVE)
        try:
            ok = _finite_outputs(model, Xbad)
        except (ValueError, TypeError, ArithmeticError) as exc:
            return _refused(exc, model, case)
        return "ok" if accept and ok else "silent"
    setup = _contract_fit_case(name, case, model, X, y)
    if setup is None:
        return "ok"
    Xbad, ybad, kw = setup
    try:
        _fit_with(model, name, Xbad, ybad, kw)
    except (ValueError, TypeError, ArithmeticError) as exc:
        return _refused(exc, model, case)
    if not accept:
        return "silent"
    try:
        ok = _finite_state(model) and _finite_outputs(model, Xbad)
    except (ValueError, TypeError, ArithmeticError) as exc:    # refused at predict
        return _refused(exc, model, case)
    return "ok" if ok else "silent"


def _fit_with(model, name, X, y, kw):
    if name == "RankSVM":
        import numpy as np
        return model.fit(X, y, qid=np.repeat(np.arange(3), 10), **kw)
    if name in UNSUPERVISED:
        return model.fit(X)
    return model.fit(X, y, **kw)


# ---------------------------------------------------------------- load --
# added for the input contract (#35); not (yet) in the load fuzzer and the
# parameter scan, which read LOAD_MODELS
CONTRACT_ONLY = {"KernelMultiClassSVM", "ThresholdTuner", "OneVsRestLogistic",
                 "OneVsRestSVC", "OneVsOneSVC"}
LOAD_MODELS = dict(
    {name: expr for name, expr in MODELS.items() if name not in CONTRACT_ONLY},
    SequenceTagger="linclass.SequenceTagger(n_hash=1000, max_iter=1)",
    CRF="linclass.CRF(max_iterations=5, features='pos')", HMM="linclass.HMM()",
)
SEQUENCE_MODELS = {"SequenceTagger", "CRF", "HMM"}

_TAG_X = [["the", "dog", "runs"], ["a", "cat", "sleeps", "now"], ["dogs", "run"]]
_TAG_Y = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"]]


def fitted_model_file(name, path):
    """Fit model ``name`` on the small data and save it to ``path``."""
    import warnings
    import numpy as np
    import linclass
    model = eval(LOAD_MODELS[name], {"linclass": linclass})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in SEQUENCE_MODELS:
            model.fit(_TAG_X, _TAG_Y)
        else:
            X, y = _data(name)
            if name in NONNEGATIVE:
                X = np.abs(X)
            _fit(model, name, X, y)
    model.save(path)
    return path


def _leaves(value, path=()):
    """Paths to the numbers and strings of a JSON value (params/state)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    elif not isinstance(value, bool) and isinstance(value, (int, float)):
        yield path


_NUMBER_REPLACEMENTS = [-1, 0, 1, 3, 2 ** 31 - 1, 2 ** 31, 2 ** 63, -2 ** 40, 1e308, 0.5,
                        "x", None, []]


def mutate_model_file(src, dst, seed):
    """Write to ``dst`` a copy of model file ``src`` with one random edit (an
    array resized, retyped, emptied or filled with extreme values, or a
    number of the metadata replaced) and a recomputed digest, so that the
    edit passes the checksum.  Returns a description of the edit."""
    import numpy as np
    from linclass import persistence
    rng = np.random.default_rng(seed)
    with np.load(src, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(arrays.pop("__linclass_meta__").tobytes().decode())
    arrays.pop("__linclass_digest__")
    names = sorted(arrays)
    leaves = list(_leaves({"params": meta["params"], "state": meta["state"]}))
    if names and (not leaves or rng.random() < 0.6):
        key = names[rng.integers(len(names))]
        a = arrays[key]
        kind = int(rng.integers(7))
        if kind == 0 and a.ndim:                        # one element / row fewer
            a = a[:max(0, a.shape[0] - 1)]
        elif kind == 1 and a.ndim:                      # one more
            a = np.concatenate([a, a[:1]]) if a.shape[0] else np.zeros((1,) + a.shape[1:], a.dtype)
        elif kind == 2:                                 # transposed / flattened
            a = a.T.copy() if a.ndim == 2 else a.reshape(-1, 1)
        elif kind == 3:                                 # empty
            a = a[:0]
        elif kind == 4 and a.dtype.kind in "iuf":       # extreme values
            big = np.iinfo(np.int32).max if a.dtype.kind in "iu" else 1e308
            a = a.copy()
            if a.size:
                a.reshape(-1)[rng.integers(a.size)] = big if rng.random() < 0.5 else -big \
                    if a.dtype.kind != "u" else big
        elif kind == 5 and a.dtype.kind in "iuf":       # other dtype
            a = a.astype(np.int64 if a.dtype.kind == "f" else np.float32)
        elif a.dtype.kind == "f" and a.size:            # NaN
            a = a.copy()
            a.reshape(-1)[rng.integers(a.size)] = np.nan
        arrays[key] = np.ascontiguousarray(a)
        what = "array %s kind %d" % (key, kind)
    else:
        path = leaves[rng.integers(len(leaves))]
        holder = {"params": meta["params"], "state": meta["state"]}
        for step in path[:-1]:
            holder = holder[step]
        new = _NUMBER_REPLACEMENTS[rng.integers(len(_NUMBER_REPLACEMENTS))]
        holder[path[len(path) - 1]] = new
        what = "meta %s = %r" % ("/".join(map(str, path)), new)
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    digest = persistence._digest(meta_bytes, arrays)
    with open(dst, "wb") as fh:
        np.savez_compressed(fh, __linclass_meta__=np.frombuffer(meta_bytes, dtype=np.uint8),
                            __linclass_digest__=np.frombuffer(digest.encode(), dtype=np.uint8),
                            **arrays)
    return what


def run_load_case(name, path):
    """Load a (mutated) file and predict: ``ok`` (ModelFormatError, or a model
    that predicts), ``inconsistent`` (loaded, then predict fails with some
    other error)."""
    import warnings
    import numpy as np
    import linclass
    from linclass.exceptions import ModelFormatError
    try:
        model = linclass.load(path)
    except ModelFormatError:
        return "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name in SEQUENCE_MODELS:
                out = model.predict(_TAG_X)
                assert len(out) == len(_TAG_X)
            else:
                X, _ = _data(name)
                if name in NONNEGATIVE:
                    X = np.abs(X)
                out = _use(model, name, X)
                assert len(out) == X.shape[0]
        except Exception as exc:
            return "inconsistent:%s:%s" % (type(exc).__name__, str(exc)[:60])
    return "ok"


def run_cases(group, timeout=300, chunk=500):
    """``{(name, case): outcome}`` for a list of (name, case), each in a child
    process (one child for up to ``chunk`` cases, restarted after a crash)."""
    results = {}
    todo = list(group)
    env = dict(os.environ)
    while todo:
        # the cases go through stdin: thousands of paths exceed the argv limit
        batch = todo[:chunk]
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "-"],
                              input=json.dumps(batch), capture_output=True, text=True,
                              timeout=timeout, env=env)
        done = 0
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                name, case, outcome = json.loads(line[7:])
                results[(name, case)] = outcome
                done += 1
        if done < len(batch):                   # the child died in batch[done]
            results[tuple(batch[done])] = "crash(rc=%d)" % proc.returncode
            todo = todo[done + 1:]
        else:
            todo = todo[len(batch):]
    return results


def _worker(todo):
    import warnings
    warnings.simplefilter("ignore")
    for name, case in todo:
        try:
            if case.startswith("load:"):
                outcome = run_load_case(name, case[5:])
            elif case in CASES:
                outcome = run_case(name, case)
            else:
                outcome = run_contract_case(name, case)
        except Exception as exc:  # an internal error type leaking out
            outcome = "error:%s:%s" % (type(exc).__name__, str(exc)[:80])
        print("RESULT " + json.dumps([name, case, outcome]), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        _worker(json.loads(sys.stdin.read() if sys.argv[2] == "-" else sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--load":
        import tempfile
        n_per_model = int(sys.argv[2])
        names = sys.argv[3:] or list(LOAD_MODELS)
        tmp = tempfile.mkdtemp()
        cases = []
        for name in names:
            src = fitted_model_file(name, os.path.join(tmp, name + ".npz"))
            for k in range(n_per_model):
                dst = os.path.join(tmp, "%s_%d.npz" % (name, k))
                mutate_model_file(src, dst, k)
                cases.append((name, "load:" + dst))
        res = run_cases(cases)
        totals = {}
        for (name, case), outcome in sorted(res.items()):
            kind = outcome.split("(")[0].split(":")[0]
            totals.setdefault(name, {}).setdefault(kind, 0)
            totals[name][kind] += 1
            if kind != "ok":
                print(name, case, outcome)
        for name, counts in totals.items():
            print("%-24s %s" % (name, counts))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--contract":
        groups = [c for g in (sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] != "all"
                              else CONTRACT_CASES) for c in CONTRACT_CASES[g]]
        names = sys.argv[3:] or list(MODELS)
    else:
        groups = list(CASES)
        names = sys.argv[1:] or list(MODELS)
    allres = run_cases([(n, c) for n in names for c in groups])
    per_case = {}
    for (name, case), outcome in sorted(allres.items()):
        if outcome != "ok":
            print(name, case, outcome)
        kind = outcome.split("(")[0].split(":")[0]
        per_case.setdefault(case, {}).setdefault(kind, 0)
        per_case[case][kind] += 1
    for case, counts in per_case.items():
        print("%-32s %s" % (case, counts))
