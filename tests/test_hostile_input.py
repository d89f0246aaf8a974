"""Hostile input at every boundary (issue #17): malformed CSR, NaN/inf,
huge values, mixed labels, edited model files, readers and writers that must
round-trip.  Cases that could crash the interpreter run in child processes
(``tests/hostile.py``), so that a crash fails a test instead of the run."""
import bz2
import copy
import gzip
import importlib.util
import io
import pathlib
import pickle
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import linclass
from linclass import persistence
from linclass._validation import check_array, check_target
from linclass.datasets import load_svmlight_file, read_conll, write_conll
from linclass.datasets.trees import Tree, parse_tree
from linclass.exceptions import DataFormatError, ModelFormatError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "linclass_tests_hostile", pathlib.Path(__file__).with_name("hostile.py"))
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)

FAST = settings(max_examples=60, deadline=None, derandomize=True)


# -------------------------------------------------------------- CSR checks --
def _csr(data, indices, indptr, shape):
    return sp.csr_matrix((np.asarray(data, float), np.asarray(indices), np.asarray(indptr)),
                         shape=shape)


@pytest.mark.parametrize("indices, indptr, problem", [
    ([0, 5], [0, 1, 2], "column index out of range"),
    ([0, -1], [0, 1, 2], "column index out of range"),
    ([0, 1, 2], [0, 2, 1, 3], "non-decreasing"),
    ([0, 1], [1, 1, 2], "indptr[0] must be 0"),
    ([0, 1, 2], [0, 5, 5, 3], "indptr points past"),
])
def test_malformed_csr_raises_naming_the_problem(indices, indptr, problem):
    n_rows = len(indptr) - 1
    X = _csr(np.ones(len(indices)), indices, [0] * len(indptr), (n_rows, 3))
    X.data = np.ones(len(indices))
    X.indices = np.asarray(indices, dtype=np.int32)     # scipy does not look again
    X.indptr = np.asarray(indptr, dtype=np.int32)
    with pytest.raises(ValueError, match="malformed sparse CSR") as info:
        check_array(X)
    assert problem in str(info.value)


def test_int64_indices_that_would_wrap_into_range_raise():
    X = _csr([1.0], np.array([2 ** 32 + 1], np.int64), np.array([0, 1, 1], np.int64), (2, 3))
    with pytest.raises(ValueError, match="int32"):
        check_array(X)


def test_malformed_csc_raises_before_scipy_converts_it():
    X = sp.csc_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match="malformed sparse CSC"):
        check_array(X)


@FAST
@given(st.data())
def test_csr_canonical_form_equals_dense(data):
    """Unsorted indices and duplicates (with flags that lie) come out canonical and
    equal to the dense sum, as scipy's own sum_duplicates computes it."""
    n_rows = data.draw(st.integers(1, 5))
    n_cols = data.draw(st.integers(1, 5))
    lengths = data.draw(st.lists(st.integers(0, 6), min_size=n_rows, max_size=n_rows))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[n_rows])
    indices = np.array(data.draw(st.lists(st.integers(0, n_cols - 1), min_size=nnz,
                                          max_size=nnz)), dtype=np.int32)
    values = np.arange(1.0, nnz + 1)
    X = sp.csr_matrix((values, indices, indptr), shape=(n_rows, n_cols))
    X.has_sorted_indices = True                     # a lie scipy does not check
    dense = np.zeros((n_rows, n_cols))
    for i in range(n_rows):
        for k in range(indptr[i], indptr[i + 1]):
            dense[i, indices[k]] += values[k]
    Y = check_array(X)
    for i in range(n_rows):
        row = Y.indices[Y.indptr[i]:Y.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    np.testing.assert_array_equal(Y.toarray(), dense)


# ---------------------------------------------- estimators, in child processes --
@pytest.fixture(scope="module")
def estimator_outcomes():
    cases = [(name, case) for name in hostile.MODELS for case in hostile.CASES]
    return hostile.run_cases(cases)


@pytest.mark.parametrize("name", sorted(hostile.MODELS))
def test_estimator_refuses_hostile_input_without_crashing(estimator_outcomes, name):
    bad = {case: out for (n, case), out in estimator_outcomes.items()
           if n == name and out != "ok"}
    assert not bad, bad


# ------------------------------------ the input contract (#35), by class --
@pytest.fixture(scope="module")
def contract_outcomes():
    """{group: {(model, case): outcome}}: each class of cases in a child
    process of its own (a crash fails that class's tests only)."""
    return {group: hostile.run_cases([(name, case) for name in hostile.MODELS
                                      for case in cases])
            for group, cases in hostile.CONTRACT_CASES.items()}


@pytest.mark.parametrize("group", sorted(hostile.CONTRACT_CASES))
@pytest.mark.parametrize("name", sorted(hostile.MODELS))
def test_every_flat_estimator_keeps_the_input_contract(contract_outcomes, name, group):
    """Complex X (dense, sparse, fit and predict), complex / all-zero /
    negative / NaN / infinite sample weights, NaN / None / complex labels, one
    class, continuous labels, huge values at fit and predict, a sparse matrix
    without stored entries, use before fit: a clear error or a finite answer."""
    outcomes = contract_outcomes[group]
    assert {case for (n, case) in outcomes if n == name} == set(hostile.CONTRACT_CASES[group])
    bad = {case: out for (n, case), out in outcomes.items() if n == name and out != "ok"}
    assert not bad, bad


def test_mixed_label_types_raise_like_scikit_learn():
    with pytest.raises(ValueError, match="Mix of label input types"):
        check_target([1, "a", 2])
    with pytest.raises(ValueError, match="Mix of label input types"):
        check_target(np.array([1, "a", 2], dtype=object))
    assert check_target(["a", "b"]).dtype.kind == "U"
    assert check_target(np.array(["a", "b"])).dtype.kind == "U"


@pytest.mark.parametrize("model", [linclass.Perceptron(), linclass.KernelPerceptron(),
                                   linclass.LassoClassifier(), linclass.Lasso()])
def test_overflowing_data_raises_naming_the_model(model):
    rng = np.random.default_rng(0)
    X = rng.random((20, 3)) * 1e300
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match=type(model).__name__):
        model.fit(X, y)


@pytest.mark.parametrize("model, fit_args", [
    (linclass.SGDClassifier(tol=-1), ()),
    (linclass.RankSVM(random_state="x"), ()),
])
def test_parameters_validated_at_fit(model, fit_args):
    X = np.random.default_rng(0).random((12, 3))
    y = np.arange(12) % 2
    with pytest.raises(ValueError):
        model.fit(X, y, *fit_args)


# ------------------------------------------------------------------- load --
def test_tagger_with_edited_hash_width_is_refused(tmp_path):
    """The reproducer of #17: an edited ``n_hash`` segfaulted in predict."""
    X, Y = [["a", "b", "c"], ["b", "c"]], [["X", "Y", "X"], ["Y", "X"]]
    m = linclass.SequenceTagger(n_hash=1000, max_iter=1).fit(X, Y)
    m.features_.n_hash = 2 ** 31 - 1
    m.save(tmp_path / "t.npz")
    with pytest.raises(ModelFormatError, match="n_hash"):
        linclass.load(tmp_path / "t.npz")


LOAD_FUZZ_MODELS = ["SequenceTagger", "Perceptron", "LinearSVC", "SGDClassifier",
                    "LogisticRegression", "RidgeClassifier", "Lasso", "MultiClassSVM",
                    "SVC", "KernelPerceptron", "LinearRegression", "OneVsOneClassifier",
                    "GaussianNB", "KernelRidgeClassifier", "CalibratedClassifier", "CRF"]


def test_mutated_model_files_never_crash(tmp_path):
    """Edited files with a recomputed digest: ModelFormatError or a model that
    predicts, never a crash (each load in a child process)."""
    cases = []
    for name in LOAD_FUZZ_MODELS:
        src = hostile.fitted_model_file(name, str(tmp_path / (name + ".npz")))
        for seed in range(12):
            dst = str(tmp_path / ("%s_%d.npz" % (name, seed)))
            hostile.mutate_model_file(src, dst, seed)
            cases.append((name, "load:" + dst))
    outcomes = hostile.run_cases(cases)
    crashes = {c: o for c, o in outcomes.items() if o.startswith("crash")}
    assert not crashes, crashes
    bad = {c: o for c, o in outcomes.items() if o != "ok"}
    assert not bad, bad


def test_load_checks_sizes_before_decompressing(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.random((20, 3)), np.arange(20) % 2
    path = linclass.Perceptron().fit(X, y).save(tmp_path / "p.npz")
    with pytest.raises(ModelFormatError, match="max_bytes"):
        linclass.load(path, max_bytes=100)
    assert linclass.load(path).predict(X).shape == (20,)


def test_load_refuses_object_arrays_from_the_header(tmp_path):
    path = tmp_path / "o.npz"
    np.savez(path, __linclass_meta__=np.frombuffer(b"{}", np.uint8),
             __linclass_digest__=np.frombuffer(b"0", np.uint8),
             a0=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ModelFormatError, match="dtype"):
        linclass.load(path)


def test_importing_main_does_not_run_the_command_line():
    code = "import sys; sys.argv = ['x', '--help']; import linclass.__main__; print('alive')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "alive" in out.stdout, out.stderr


# ---------------------------------------------------------------- readers --
_FLOAT_LITERAL = st.from_regex(
    r"\A[+-]?(([0-9]{1,25}(\.[0-9]{0,25})?)|(\.[0-9]{1,25}))([eE][+-]?[0-9]{1,12})?\Z")


@FAST
@given(st.lists(st.one_of(_FLOAT_LITERAL, st.floats(allow_nan=False).map(repr),
                          st.sampled_from(["inf", "-inf", "Infinity", "1e9999999",
                                           "-1e99999999", "1e-9999999"])),
                min_size=1, max_size=20))
def test_svmlight_numbers_agree_with_python_float(literals):
    text = "".join("%d 1:%s\n" % (i, lit) for i, lit in enumerate(literals))
    X, y = load_svmlight_file(io.BytesIO(text.encode()), n_features=1)
    got = X.toarray()[:, 0]
    want = np.array([float(lit) for lit in literals])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("literal", [
    "0." + "0" * 99999 + "1e1000000",           # inf (was read as 1.0: capped exponent)
    "-0." + "0" * 99999 + "1e1000000",          # -inf
    "0." + "0" * 99999 + "1e100005",            # 1e5, finite
    "0." + "0" * 99999 + "1e0000000100000",     # 1.0 (leading zeros in the exponent)
    "1" + "0" * 30 + "e-1000000",
])
def test_svmlight_long_exponents_agree_with_python_float(literal):
    X, _ = load_svmlight_file(io.BytesIO(("1 1:%s\n" % literal).encode()), n_features=1)
    assert X.toarray()[0, 0] == float(literal)


@FAST
@given(st.lists(st.tuples(st.integers(-3, 3), st.lists(
    st.tuples(st.integers(1, 9), st.floats(-1e6, 1e6, allow_nan=False)),
    max_size=4, unique_by=lambda t: t[0])), min_size=1, max_size=8))
def test_svmlight_agrees_with_scikit_learn(rows):
    sk = pytest.importorskip("sklearn.datasets")
    text = "".join("%d %s\n" % (label, " ".join("%d:%r" % f for f in sorted(feats)))
                   for label, feats in rows)
    X, y = load_svmlight_file(io.BytesIO(text.encode()), n_features=10)
    Xs, ys = sk.load_svmlight_file(io.BytesIO(text.encode()), n_features=10)
    np.testing.assert_array_equal(X.toarray(), Xs.toarray())
    np.testing.assert_array_equal(y, ys)


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".bz2", bz2.open)])
def test_corrupt_compressed_input_names_the_file(tmp_path, suffix, opener):
    path = tmp_path / ("data.conll" + suffix)
    with opener(path, "wb") as fh:
        fh.write(b"a B\nc D\n\n" * 200)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    raw[len(raw) // 2 + 1] ^= 0xFF
    path.write_bytes(bytes(raw[:len(raw) - 6]))
    for reader in (read_conll, load_svmlight_file):
        with pytest.raises(DataFormatError) as info:
            reader(path)
        assert str(path) in str(info.value)


def test_conllu_non_ascii_digit_id_is_a_data_format_error():
    text = "1-\u00b2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n1\tx\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(DataFormatError):
        read_conll(io.StringIO(text), format="conllu")


_TOKEN = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
                   st.text(st.sampled_from("ab \t\u00a0#-_"), max_size=4))


@FAST
@given(st.lists(st.lists(st.tuples(_TOKEN, _TOKEN), min_size=1, max_size=4),
                min_size=1, max_size=4))
def test_conll_writer_round_trips_or_refuses(sentences):
    buf = io.StringIO()
    try:
        write_conll(sentences, buf, format="conll")
    except DataFormatError:
        return
    back = read_conll(io.StringIO(buf.getvalue()), format="conll")
    assert [list(s) for s in back] == [list(s) for s in sentences]


_LABEL = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
                   st.text(st.sampled_from("ab ()\t_"), max_size=3))


def _trees(depth):
    words = _LABEL
    if depth == 0:
        return st.builds(Tree, _LABEL, st.lists(words, min_size=1, max_size=2))
    return st.builds(Tree, _LABEL, st.lists(st.one_of(words, _trees(depth - 1)),
                                            min_size=1, max_size=3))


@FAST
@given(_trees(2))
def test_tree_str_round_trips_or_refuses(tree):
    try:
        text = str(tree)
    except ValueError:
        return
    assert parse_tree(text, strip_outer=False) == tree


@pytest.mark.parametrize("tree", [Tree("X", [")"]), Tree("X", [" "]), Tree("X", ["a b"]),
                                  Tree("(", ["a"]), Tree("", ["a"]), Tree("X", [])])
def test_tree_str_refuses_what_the_parser_cannot_read(tree):
    with pytest.raises(ValueError):
        str(tree)


def test_deep_trees_copy_compare_and_pickle_without_recursion():
    tree = Tree("W", ["w"])
    for _ in range(50_000):
        tree = Tree("X", [tree])
    assert tree.copy() == tree
    assert pickle.loads(pickle.dumps(tree)) == tree
    assert copy.deepcopy(tree) == tree
    assert parse_tree(str(tree)) == tree


# ------------------------------------------------------ threads, determinism --
def test_eight_threads_predicting_on_one_model_agree_with_one_thread():
    X = [["the", "dog", "runs"], ["a", "cat", "sleeps"]] * 200
    Y = [["D", "N", "V"], ["D", "N", "V"]] * 200
    tagger = linclass.SequenceTagger(max_iter=2).fit(X, Y)
    rng = np.random.default_rng(0)
    Xf, yf = rng.random((400, 8)), rng.integers(0, 3, 400)
    svc = linclass.LinearSVC().fit(Xf, yf)
    want_tag, want_svc = tagger.predict(X), svc.decision_function(Xf)
    with ThreadPoolExecutor(8) as pool:
        tags = list(pool.map(lambda _: tagger.predict(X), range(8)))
        scores = list(pool.map(lambda _: svc.decision_function(Xf), range(8)))
    assert all(t == want_tag for t in tags)
    for s in scores:
        np.testing.assert_array_equal(s, want_svc)


@pytest.mark.parametrize("make", [
    lambda: linclass.Perceptron(random_state=3),
    lambda: linclass.SGDClassifier(random_state=3),
    lambda: linclass.KernelPerceptron(random_state=3),
    lambda: linclass.LinearSVC(random_state=3),
    lambda: linclass.MixtureNB(random_state=3),
    lambda: linclass.MercerMap(n_landmarks=20, random_state=3),
])
def test_stochastic_learners_are_deterministic_given_random_state(make):
    rng = np.random.default_rng(1)
    X, y = np.abs(rng.random((60, 5))), rng.integers(0, 3, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = make().fit(X, y), make().fit(X, y)
    state_a, state_b = a._get_state(), b._get_state()
    assert state_a.keys() == state_b.keys()
    for key in state_a:
        va, vb = state_a[key], state_b[key]
        if isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=key)


def test_persistence_module_keeps_the_allow_list():
    with pytest.raises(ModelFormatError):
        persistence._resolve_class("linclass.__main__", "f")
    with pytest.raises(ModelFormatError):
        persistence._resolve_class("os.system", "f")
