"""svmlight reader/writer: identical output to scikit-learn's, errors with lines.

scikit-learn's ``load_svmlight_file`` is the reference: every accepted file
must give the same matrix (values, indices, shape), labels and query ids.
"""
import bz2
import gzip
import io
import os
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.datasets.svmlight import dump_svmlight_file, load_svmlight_file, load_svmlight_files
from linclass.exceptions import DataFormatError

sk_datasets = pytest.importorskip("sklearn.datasets")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


def data_dir():
    env = os.environ.get("LINCLASS_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


def assert_same_matrix(X, X_ref):
    assert sp.isspmatrix_csr(X)
    assert X.shape == X_ref.shape
    assert X.indices.dtype == np.int32
    assert X.has_sorted_indices
    np.testing.assert_array_equal(X.indptr, X_ref.indptr)
    np.testing.assert_array_equal(X.indices, X_ref.indices)
    assert X.data.dtype == X_ref.data.dtype
    # bitwise equality (NaN == NaN, -0.0 != 0.0 would not matter for ==)
    np.testing.assert_array_equal(X.data, X_ref.data)
    assert np.array_equal(np.signbit(X.data), np.signbit(X_ref.data))


def assert_same_load(content, **kwargs):
    """linclass and sklearn read `content` (bytes) to the same arrays."""
    ours = load_svmlight_file(io.BytesIO(content), **kwargs)
    ref = sk_datasets.load_svmlight_file(io.BytesIO(content), **kwargs)
    assert len(ours) == len(ref)
    assert_same_matrix(ours[0], ref[0])
    if kwargs.get("multilabel"):
        assert ours[1] == ref[1]
    else:
        assert ours[1].dtype == ref[1].dtype == np.float64
        np.testing.assert_array_equal(ours[1], ref[1])
    if kwargs.get("query_id"):
        assert ours[2].dtype == np.int64
        np.testing.assert_array_equal(ours[2], ref[2])
    return ours


# ---------------------------------------------------------------------------
# real data


@pytest.mark.parametrize("name", ["a9a.gz", "a9a.t.gz", "w8a.gz"])
def test_libsvm_binary_identical_to_sklearn(name):
    path = data_dir() / "libsvm_binary" / name
    if not path.exists():
        pytest.skip("benchmark data not found at %s (set LINCLASS_DATA)" % path)
    X, y = load_svmlight_file(path)
    X_ref, y_ref = sk_datasets.load_svmlight_file(str(path))
    assert_same_matrix(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    X, y = load_svmlight_file(str(path), n_features=400)
    assert X.shape[1] == 400 and X.nnz == X_ref.nnz


# ---------------------------------------------------------------------------
# hand-written grammar cases


SAMPLE = (b"# header comment\n"
          b"\n"
          b"1 qid:3 1:0.5 3:2.5e3 # trailing comment with 9:9\n"
          b"-2\tqid:3\t2:-1E-2   4:+7\r\n"
          b"   \n"
          b"0.25 qid:-4 1:.5 2:5. 10:1e+300 11:-0\n"
          b"+3 qid:1\n"
          b"4.5e1 qid:2 3:inf 4:-Infinity 5:nan 6:0\n")


@pytest.mark.parametrize("zero_based", ["auto", True, False])
@pytest.mark.parametrize("query_id", [False, True])
def test_grammar_identical_to_sklearn(zero_based, query_id):
    ours = assert_same_load(SAMPLE, zero_based=zero_based, query_id=query_id)
    X, y = ours[0], ours[1]
    assert X.shape == (5, 11 if zero_based in ("auto", False) else 12)
    np.testing.assert_array_equal(y, [1, -2, 0.25, 3, 45])
    if query_id:
        np.testing.assert_array_equal(ours[2], [3, 3, -4, 1, 2])


def test_zero_based_auto_detection():
    X, _ = assert_same_load(b"1 0:1 2:3\n2 1:4\n")
    assert X.shape == (2, 3) and X[0, 0] == 1          # an index 0: zero-based
    X, _ = assert_same_load(b"1 1:1 2:3\n2 1:4\n")
    assert X.shape == (2, 2) and X[0, 0] == 1          # no index 0: one-based
    X, _ = assert_same_load(b"1\n2\n")                  # no features at all
    assert X.shape == (2, 1) and X.nnz == 0
    X, _ = assert_same_load(b"")
    assert X.shape == (0, 1)


def test_multilabel_identical_to_sklearn():
    content = (b"1,3 1:1\n"
               b"2.5,-1,0 qid:7 2:3\n"
               b"3:4\n"                     # no label at all
               b"qid:2 1:5\n"
               b"7 \n")
    _, y = assert_same_load(content, multilabel=True)
    assert y == [(1.0, 3.0), (-1.0, 0.0, 2.5), (), (), (7.0,)]
    assert_same_load(content, multilabel=True, query_id=False)


def test_float32_and_other_dtypes():
    content = b"1 1:0.1 2:3.4028236e38 3:1e-50\n0 2:7\n"
    assert_same_load(content, dtype=np.float32)
    X, _ = load_svmlight_file(io.BytesIO(content), dtype=np.float32)
    assert X.dtype == np.float32


def test_offset_and_length_chunks_identical_to_sklearn():
    rng = np.random.RandomState(0)
    lines = []
    for i in range(200):
        idx = np.sort(rng.choice(50, size=rng.randint(0, 6), replace=False))
        lines.append("%d %s" % (rng.randint(-3, 3), " ".join(
            "%d:%.6g" % (j, rng.randn()) for j in idx)))
        if i % 17 == 0:
            lines.append("# comment")
        if i % 23 == 0:
            lines.append("")
    content = ("\n".join(lines) + "\n").encode()
    n = len(content)
    for offset, length in [(0, 100), (100, 500), (37, -1), (n // 2, n), (n - 3, 10), (n, 5)]:
        ours = load_svmlight_file(io.BytesIO(content), n_features=60,
                                  offset=offset, length=length)
        ref = sk_datasets.load_svmlight_file(io.BytesIO(content), n_features=60,
                                             offset=offset, length=length)
        assert_same_matrix(ours[0], ref[0])
        np.testing.assert_array_equal(ours[1], ref[1])
    # consecutive chunks: the same rows as sklearn's chunks, and together the file
    chunk = 1000
    ours = [load_svmlight_file(io.BytesIO(content), n_features=60, offset=o, length=chunk)
            for o in range(0, n, chunk)]
    ref = [sk_datasets.load_svmlight_file(io.BytesIO(content), n_features=60, offset=o,
                                          length=chunk) for o in range(0, n, chunk)]
    for part, part_ref in zip(ours, ref):
        assert_same_matrix(part[0], part_ref[0])
    whole = load_svmlight_file(io.BytesIO(content), n_features=60, zero_based=True)
    assert sum(p[0].shape[0] for p in ours) >= whole[0].shape[0]
    with pytest.raises(ValueError, match="n_features is required"):
        load_svmlight_file(io.BytesIO(content), offset=10)


# ---------------------------------------------------------------------------
# generated files


def _number_text(draw, integral):
    value = draw(st.integers(-1000, 1000)) if integral else draw(
        st.floats(allow_nan=False, allow_infinity=False, width=64))
    style = draw(st.sampled_from(["repr", "g", "e", "E+", "plus"]))
    if style == "repr":
        return repr(value)
    if style == "g":
        return "%.6g" % value
    if style == "e":
        return "%.12e" % value
    if style == "E+":
        return ("%.3E" % value).replace("E", "E+").replace("E+-", "E-").replace("E++", "E+")
    return repr(value) if np.signbit(value) else "+%r" % value


@st.composite
def svmlight_files(draw):
    n_lines = draw(st.integers(0, 12))
    with_qid = draw(st.booleans())
    zero_based = draw(st.booleans())
    lines = []
    for _ in range(n_lines):
        kind = draw(st.sampled_from(["data"] * 6 + ["blank", "comment"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", "\t", "\r"])))
            continue
        if kind == "comment":
            lines.append("# " + draw(st.text(alphabet="ab 1:2,#", max_size=10)))
            continue
        sep = draw(st.sampled_from([" ", "  ", "\t", " \t "]))
        tokens = [_number_text(draw, draw(st.booleans()))]
        if with_qid:
            tokens.append("qid:%d" % draw(st.integers(-5, 10**12)))
        indices = sorted(draw(st.sets(st.integers(0 if zero_based else 1, 40), max_size=6)))
        tokens += ["%d:%s" % (i, _number_text(draw, draw(st.booleans()))) for i in indices]
        line = sep.join(tokens)
        if draw(st.booleans()):
            line += draw(st.sampled_from([" # note 3:4", "#x", " ", "\r"]))
        lines.append(line)
    end = draw(st.sampled_from(["\n", ""]))
    return ("\n".join(lines) + (end if lines else "")).encode()


@settings(max_examples=150, deadline=None)
@given(content=svmlight_files(), zero_based=st.sampled_from(["auto", True]),
       query_id=st.booleans())
def test_generated_files_identical_to_sklearn(content, zero_based, query_id):
    assert_same_load(content, zero_based=zero_based, query_id=query_id)


# ---------------------------------------------------------------------------
# errors: every malformed line names its file and line


STRICTER = "sklearn accepts it (or raises OverflowError)"
MALFORMED = [
    (b"1 1:1\nabc 1:2\n", 2, "invalid label 'abc'"),
    (b"1 1:1\n1:2 3:4\n", 2, "missing label"),
    (b"\n\n# c\n1 2:3 4\n", 4, "invalid feature '4'"),
    (b"1 1:1\n2 x:3\n", 2, "invalid feature index"),
    (b"1 1:1\n2 1.5:3\n", 2, "invalid feature index"),
    (b"1 1:1\n2 -3:3\n", 2, "indices are >= 0"),
    (b"1 1:1\n2 99999999999:3\n", 2, "too large", STRICTER),
    (b"1 1:1\n2 3:1 2:1\n", 2, "sorted and unique"),
    (b"1 1:1\n2 3:1 3:1\n", 2, "sorted and unique"),
    (b"1 1:1\n2 3:abc\n", 2, "invalid feature value"),
    (b"1 1:1\n2 3:\n", 2, "invalid feature value"),
    (b"1 1:1\n2 3:1:2\n", 2, "invalid feature value"),
    (b"1 1:1\n2 3:0x10\n", 2, "invalid feature value"),
    (b"1 1:1\n2 3:1_000\n", 2, "invalid feature value", STRICTER),
    (b"1 1:1\n2 3:1e\n", 2, "invalid feature value"),
    (b"1 1:1\n2 3:.\n", 2, "invalid feature value"),
    (b"1 qid:1 1:1\n2 qid:x 1:1\n", 2, "invalid query id", STRICTER),
    (b"1 qid:1 1:1\n2 qid: 1:1\n", 2, "invalid query id", STRICTER),
    (b"1 qid:1 1:1\n2 qid:99999999999999999999 1:1\n", 2, "invalid query id", STRICTER),
    (b"1 1:1\n2 1:1 qid:3\n", 2, "must come right after the label"),
    (b"1 1:1\n2 1:\x002\n", 2, "invalid feature value"),
    (b"1e400x 1:1\n", 1, "invalid label"),
]
MALFORMED = [case[:3] + (len(case) == 4,) for case in MALFORMED]


@pytest.mark.parametrize("content, lineno, message, stricter", MALFORMED)
def test_malformed_line_raises_with_line_number(content, lineno, message, stricter):
    with pytest.raises(DataFormatError, match=message) as info:
        load_svmlight_file(io.BytesIO(content))
    err = info.value
    assert isinstance(err, ValueError)
    assert err.lineno == lineno
    assert err.filename == "<stream>"
    assert str(err).startswith("<stream>:%d: " % lineno)
    if stricter:     # underscores in numbers, a qid that sklearn ignores, ...
        return
    with pytest.raises(ValueError):     # scikit-learn rejects these files too
        sk_datasets.load_svmlight_file(io.BytesIO(content))


@pytest.mark.parametrize("content, lineno, message, kwargs", [
    (b"1 1:1\n2 0:3\n", 2, "invalid feature index 0", {"zero_based": False}),
    (b"1,,2 1:1\n", 1, "invalid label list", {"multilabel": True}),
    (b"1,2, 1:1\n", 1, "invalid label list", {"multilabel": True}),
    (b"1,a 1:1\n", 1, "invalid label", {"multilabel": True}),
    (b"1 qid:1 1:1\n\n2 1:1\n", 3, "some lines have a qid", {"query_id": True}),
])
def test_malformed_with_options(content, lineno, message, kwargs):
    with pytest.raises(DataFormatError, match=message) as info:
        load_svmlight_file(io.BytesIO(content), **kwargs)
    assert info.value.lineno == lineno


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_bytes(b"1 1:1\n# c\n1 2:1 1:1\n")
    with pytest.raises(DataFormatError) as info:
        load_svmlight_file(path)
    assert info.value.filename == str(path) and info.value.lineno == 3
    assert str(info.value).startswith("%s:3: " % path)
    with open(path, "rb") as fobj:                      # named file object
        with pytest.raises(DataFormatError, match="bad.svm:3: "):
            load_svmlight_file(fobj)
    gz = tmp_path / "bad.svm.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(DataFormatError, match="bad.svm.gz:3: "):
        load_svmlight_file(str(gz))


def test_offset_error_mentions_offset():
    content = b"1 1:1\n2 1:1\n3 x:1\n"
    with pytest.raises(DataFormatError, match="byte offset 3") as info:
        load_svmlight_file(io.BytesIO(content), n_features=5, offset=3)
    assert info.value.lineno == 3


def test_n_features_too_small_names_the_line():
    content = b"1 1:1\n\n2 5:1\n3 9:1\n"
    with pytest.raises(DataFormatError, match="out of range for n_features=4") as info:
        load_svmlight_file(io.BytesIO(content), n_features=4)
    assert info.value.lineno == 3              # first line with an index beyond
    with pytest.raises(ValueError):
        sk_datasets.load_svmlight_file(io.BytesIO(content), n_features=4)
    X, _ = load_svmlight_file(io.BytesIO(content), n_features=9)
    assert X.shape == (3, 9)
    with pytest.raises(ValueError, match="n_features"):
        load_svmlight_file(io.BytesIO(content), n_features=0)


def test_load_svmlight_files_shares_n_features_and_base():
    a, b = b"1 1:1 3:2\n", b"2 0:5 7:1\n"
    ours = load_svmlight_files([io.BytesIO(a), io.BytesIO(b)])
    ref = sk_datasets.load_svmlight_files([io.BytesIO(a), io.BytesIO(b)])
    for X, X_ref in zip(ours[::2], ref[::2]):
        assert_same_matrix(X, X_ref)
    assert ours[0].shape == ours[2].shape == (1, 8)   # index 0 in b: zero-based
    with pytest.raises(TypeError, match="list of sources"):
        load_svmlight_files("file.svm")


# ---------------------------------------------------------------------------
# sources: paths, compression, descriptors, streams


def test_compressed_paths_and_descriptors(tmp_path):
    content = SAMPLE
    ref = sk_datasets.load_svmlight_file(io.BytesIO(content), query_id=True)
    (tmp_path / "d.svm").write_bytes(content)
    (tmp_path / "d.svm.gz").write_bytes(gzip.compress(content))
    (tmp_path / "d.svm.bz2").write_bytes(bz2.compress(content))
    sources = [tmp_path / "d.svm", str(tmp_path / "d.svm.gz"), tmp_path / "d.svm.bz2"]
    for source in sources:
        X, y, q = load_svmlight_file(source, query_id=True)
        assert_same_matrix(X, ref[0])
        np.testing.assert_array_equal(y, ref[1])
        np.testing.assert_array_equal(q, ref[2])
    fd = os.open(tmp_path / "d.svm", os.O_RDONLY)
    try:
        X, _ = load_svmlight_file(fd)
        assert_same_matrix(X, ref[0])
    finally:
        os.close(fd)
    with gzip.open(tmp_path / "d.svm.gz", "rb") as fobj:
        X, _ = load_svmlight_file(fobj)
        assert_same_matrix(X, ref[0])
    with open(tmp_path / "d.svm") as text:
        with pytest.raises(TypeError, match="binary mode"):
            load_svmlight_file(text)
    with pytest.raises(TypeError):
        load_svmlight_file(3.5)


# ---------------------------------------------------------------------------
# writer


def _random_data(rng, n_samples, n_features, density, extreme):
    X = sp.random(n_samples, n_features, density=density, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz) * 10.0 ** rng.randint(-5, 6, size=X.nnz)
    if extreme and X.nnz >= 4:
        X.data[:4] = [1e-310, -1.7976931348623157e308, 0.1, 1 / 3]
        X.data[rng.randint(X.nnz)] = np.round(X.data[0] * 1e6)
    return X


@pytest.mark.parametrize("seed", range(6))
def test_round_trip_with_sklearn_reader(seed, tmp_path):
    rng = np.random.RandomState(seed)
    n_samples, n_features = rng.randint(1, 60), rng.randint(1, 30)
    X = _random_data(rng, n_samples, n_features, rng.uniform(0, 0.5), extreme=seed % 2 == 0)
    y = rng.randn(n_samples) if seed % 3 else rng.randint(-3, 4, size=n_samples)
    qid = rng.randint(0, 10**12, size=n_samples)
    dense = seed % 2 == 1
    zero_based = seed % 4 < 2
    source = X.toarray() if dense else X
    path = tmp_path / "out.svm"
    dump_svmlight_file(source, y, path, zero_based=zero_based, query_id=qid,
                       comment="seed %d\nsecond line" % seed)
    for loader in (sk_datasets.load_svmlight_file, load_svmlight_file):
        X2, y2, q2 = loader(str(path), n_features=n_features, query_id=True,
                            zero_based=zero_based)
        if dense:      # zeros of a dense matrix are not written
            np.testing.assert_array_equal(X2.toarray(), X.toarray())
        else:          # stored entries (and their exact bits) survive
            np.testing.assert_array_equal(X2.indptr, X.indptr)
            np.testing.assert_array_equal(X2.indices, X.indices)
            np.testing.assert_array_equal(X2.data, X.data)
        np.testing.assert_array_equal(y2, y)
        np.testing.assert_array_equal(q2, qid)
    text = path.read_bytes()
    assert text.startswith(b"# Generated by dump_svmlight_file from linclass")
    assert b"# seed %d\n# second line\n" % seed in text


@pytest.mark.parametrize("sparse_y", [False, True])
def test_multilabel_round_trip(sparse_y):
    rng = np.random.RandomState(1)
    X = _random_data(rng, 20, 7, 0.4, extreme=True)
    Y = (rng.rand(20, 5) < 0.3).astype(int)
    blank = (Y.sum(axis=1) == 0) & (np.diff(X.indptr) == 0)
    assert blank.any()
    with pytest.raises(ValueError, match="would be blank"):
        dump_svmlight_file(X, sp.csr_matrix(Y) if sparse_y else Y, io.BytesIO(),
                           multilabel=True)
    Y[blank, 2] = 1
    buf = io.BytesIO()
    dump_svmlight_file(X, sp.csr_matrix(Y) if sparse_y else Y, buf, multilabel=True)
    content = buf.getvalue()
    ours = assert_same_load(content, multilabel=True, n_features=7, zero_based=True)
    assert ours[1] == [tuple(float(j) for j in np.flatnonzero(row)) for row in Y]
    np.testing.assert_array_equal(ours[0].toarray(), X.toarray())
    ref = io.BytesIO()
    sk_datasets.dump_svmlight_file(X, Y, ref, multilabel=True)
    # same label lists as sklearn's writer
    assert [line.split(b" ")[0] for line in content.splitlines()] == \
        [line.split(b" ")[0] for line in ref.getvalue().splitlines()]


def test_writer_matches_sklearn_bytes_on_simple_values():
    X = sp.csr_matrix(np.array([[0, 1.5, 0, -2], [0, 0, 0, 0], [3, 0, 0.25, 1e-3]]))
    y = np.array([1.0, -1.0, 2.5])
    ours, ref = io.BytesIO(), io.BytesIO()
    dump_svmlight_file(X, y, ours, zero_based=False, query_id=[1, 1, 2])
    sk_datasets.dump_svmlight_file(X, y, ref, zero_based=False, query_id=[1, 1, 2])
    assert ours.getvalue() == ref.getvalue()
    assert ours.getvalue() == b"1 qid:1 2:1.5 4:-2\n-1 qid:1 \n2.5 qid:2 1:3 3:0.25 4:0.001\n"


def test_writer_special_values_and_large_rows():
    X = np.array([[np.nan, np.inf, -np.inf, -0.0, 1e15, 2.0 ** 60, 0.1 + 0.2]])
    buf = io.BytesIO()
    dump_svmlight_file(X, [0], buf)
    X2, _ = load_svmlight_file(io.BytesIO(buf.getvalue()), n_features=7)
    np.testing.assert_array_equal(X2.toarray()[0, [0, 1, 2, 4, 5, 6]], X[0, [0, 1, 2, 4, 5, 6]])
    assert X2.nnz == 6                            # -0.0 == 0 is not written
    wide = sp.random(3, 100000, density=0.3, format="csr", random_state=0)  # > 1 MiB rows
    buf = io.BytesIO()
    dump_svmlight_file(wide, [1, 2, 3], buf)
    X3, _ = load_svmlight_file(io.BytesIO(buf.getvalue()), n_features=100000, zero_based=True)
    np.testing.assert_array_equal(X3.data, wide.data)


def test_writer_validation():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="should be the same"):
        dump_svmlight_file(X, [1, 2], io.BytesIO())
    with pytest.raises(ValueError, match="query_id"):
        dump_svmlight_file(X, [1, 2, 3], io.BytesIO(), query_id=[1, 2])
    with pytest.raises(ValueError, match="integers"):
        dump_svmlight_file(X, [1, 2, 3], io.BytesIO(), query_id=[1.5, 2, 3])
    with pytest.raises(ValueError, match="NUL"):
        dump_svmlight_file(X, [1, 2, 3], io.BytesIO(), comment="a\0b")
    with pytest.raises(ValueError, match="expected y"):
        dump_svmlight_file(X, np.ones((3, 2)), io.BytesIO())
    with pytest.raises(ValueError, match="2-D"):
        dump_svmlight_file(np.ones(3), [1, 2, 3], io.BytesIO())
    # unsorted CSR input is written sorted and the caller's matrix is untouched
    U = sp.csr_matrix((np.array([2.0, 1.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    U.has_sorted_indices = False
    buf = io.BytesIO()
    dump_svmlight_file(U, [0], buf)
    assert buf.getvalue() == b"0 0:1 1:2\n"
    np.testing.assert_array_equal(U.indices, [1, 0])
