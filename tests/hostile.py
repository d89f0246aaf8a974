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


# ---------------------------------------------------------------- load --
LOAD_MODELS = dict(
    MODELS, SequenceTagger="linclass.SequenceTagger(n_hash=1000, max_iter=1)",
    CRF="linclass.CRF(max_iterations=5, features='pos')", HMM="linclass.HMM()",
    GaussianNB="linclass.GaussianNB()",
    KernelRidge="linclass.KernelRidge(kernel='rbf')",
    KernelRidgeClassifier="linclass.KernelRidgeClassifier(kernel='rbf')",
    KernelLogisticRegression="linclass.KernelLogisticRegression(max_iter=50)",
    CostSensitiveClassifier="linclass.CostSensitiveClassifier(linclass.LogisticRegression())",
    RejectOption="linclass.RejectOption(linclass.LogisticRegression(), threshold=0.4)",
    PriorShiftClassifier="linclass.PriorShiftClassifier(linclass.LogisticRegression())",
    CalibratedClassifier="linclass.CalibratedClassifier(linclass.LinearSVC(), cv=3)",
    PosteriorCombiner="linclass.PosteriorCombiner([linclass.LogisticRegression(), "
                      "linclass.GaussianNB()])",
)
SEQUENCE_MODELS = {"SequenceTagger", "CRF", "HMM"}
REGRESSORS = REGRESSORS | {"KernelRidge"}

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
            outcome = (run_load_case(name, case[5:]) if case.startswith("load:")
                       else run_case(name, case))
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
