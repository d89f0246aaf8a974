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
estimator and per case, as the reliability issue (#17) tabulates them.
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
    "MultiClassSVM": "linclass.MultiClassSVM(max_iter=20)",
    "RankSVM": "linclass.RankSVM()",
    "MercerMap": "linclass.MercerMap(n_components=3, n_landmarks=20, random_state=0)",
}

REGRESSORS = {"LinearRegression", "Ridge", "Lasso", "RankSVM"}
NONNEGATIVE = {"MultinomialNB", "MixtureNB"}

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
        y = np.array([0, 1, 2] * 10)
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
        if expected == "accept":
            return "error:%s:%s" % (type(exc).__name__, str(exc)[:80])
        return "ok"


def run_cases(group, timeout=300):
    """``{(name, case): outcome}`` for a list of (name, case), each in a child
    process (one child for many cases, restarted after a crash)."""
    results = {}
    todo = list(group)
    env = dict(os.environ)
    while todo:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                               json.dumps(todo)], capture_output=True, text=True,
                              timeout=timeout, env=env)
        done = 0
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                name, case, outcome = json.loads(line[7:])
                results[(name, case)] = outcome
                done += 1
        if done < len(todo):                    # the child died in todo[done]
            results[tuple(todo[done])] = "crash(rc=%d)" % proc.returncode
            todo = todo[done + 1:]
        else:
            todo = []
    return results


def _worker(todo):
    import warnings
    warnings.simplefilter("ignore")
    for name, case in todo:
        try:
            outcome = run_case(name, case)
        except Exception as exc:  # an internal error type leaking out
            outcome = "error:%s:%s" % (type(exc).__name__, str(exc)[:80])
        print("RESULT " + json.dumps([name, case, outcome]), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        _worker(json.loads(sys.argv[2]))
        sys.exit(0)
    names = sys.argv[1:] or list(MODELS)
    allres = run_cases([(n, c) for n in names for c in CASES])
    per_case = {}
    for (name, case), outcome in sorted(allres.items()):
        if outcome != "ok":
            print(name, case, outcome)
        kind = outcome.split("(")[0].split(":")[0]
        per_case.setdefault(case, {}).setdefault(kind, 0)
        per_case[case][kind] += 1
    for case, counts in per_case.items():
        print("%-32s %s" % (case, counts))
