"""linclass.distributed.svmlight_shards: one partition per svmlight file.

References: linclass.datasets.load_svmlight_file on the concatenation of the
files in memory (itself checked against scikit-learn in tests/datasets), and
the in-memory fits on it (naive Bayes bit for bit, logistic regression's optimum).
"""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
pytest.importorskip("dask.array")

import linclass.distributed as ld  # noqa: E402
from linclass.datasets import dump_svmlight_file, load_svmlight_file  # noqa: E402
from linclass.exceptions import DataFormatError  # noqa: E402
from linclass.linear import LogisticRegression, MultinomialNB  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield


def _write_shards(tmp_path, sizes, zero_based=False, d=30, seed=0, compress=(1,)):
    """Word-count rows with 3 classes split into files of the given sizes (some gzipped).
    The last column is only used in the last shard (the global width is that shard's)."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    X.data = np.floor(X.data * 5) + 1.0
    X = X.tolil()
    X[:, d - 1] = 0
    X[n - 1, d - 1] = 2.0
    X = X.tocsr()
    y = rng.integers(0, 3, n).astype(float)
    paths, start = [], 0
    for k, size in enumerate(sizes):
        name = tmp_path / ("shard%d.svm" % k)
        dump_svmlight_file(X[start:start + size], y[start:start + size], name,
                           zero_based=zero_based)
        if k in compress:
            data = name.read_bytes()
            name.unlink()
            name = tmp_path / ("shard%d.svm.gz" % k)
            name.write_bytes(gzip.compress(data))
        paths.append(name)
        start += size
    return paths


def _concatenation(tmp_path, paths):
    joined = tmp_path / "all.svm"
    with open(joined, "wb") as out:
        for p in paths:
            raw = p.read_bytes()
            out.write(gzip.decompress(raw) if p.suffix == ".gz" else raw)
    return load_svmlight_file(joined)


@pytest.mark.parametrize("zero_based", [False, True])
def test_shards_equal_the_concatenation_loaded_in_memory(tmp_path, zero_based):
    paths = _write_shards(tmp_path, (50, 0, 70, 40), zero_based=zero_based)
    X, y = ld.svmlight_shards(paths)
    # one partition per file; dask drops the empty file's chunk
    assert X.numblocks == (3, 1) and X.chunks[0] == (50, 70, 40)
    Xm, ym = _concatenation(tmp_path, paths)
    Xc = X.compute()
    assert sp.issparse(Xc) and Xc.shape == Xm.shape
    assert (Xc != Xm).nnz == 0
    assert np.array_equal(y.compute(), ym)


def test_fits_on_shards_equal_the_in_memory_fits(tmp_path):
    paths = _write_shards(tmp_path, (60, 90, 50))
    X, y = ld.svmlight_shards(paths)
    Xm, ym = _concatenation(tmp_path, paths)
    nb, ref = ld.fit(MultinomialNB(), X, y), MultinomialNB().fit(Xm, ym)
    assert np.array_equal(nb.feature_log_prob_, ref.feature_log_prob_)
    assert np.array_equal(nb.class_log_prior_, ref.class_log_prior_)
    lr, ref = ld.fit(LogisticRegression(C=0.5), X, y), LogisticRegression(C=0.5).fit(Xm, ym)
    assert abs(lr.objective_ - ref.objective_) <= 1e-6 * ref.objective_
    assert np.array_equal(lr.classes_, ref.classes_)


def test_global_width_and_bad_shards(tmp_path):
    paths = _write_shards(tmp_path, (20, 20), compress=())
    X, _ = ld.svmlight_shards(paths, n_features=40)
    assert X.shape == (40, 40) and X.compute().shape == (40, 40)
    with pytest.raises(DataFormatError, match="shard1.svm.*index 30 is out of range for "
                                              "n_features=20"):
        ld.svmlight_shards(paths, n_features=20)
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:2 3:x\n")
    with pytest.raises(DataFormatError, match="bad.svm:1"):
        ld.svmlight_shards(paths + [bad])
    with pytest.raises(TypeError, match="list of paths"):
        ld.svmlight_shards(str(paths[0]))
    with pytest.raises(ValueError, match="files is empty"):
        ld.svmlight_shards([])
    with pytest.raises(ValueError, match="zero_based"):
        ld.svmlight_shards(paths, zero_based="yes")
    with pytest.raises(ValueError, match="n_features"):
        ld.svmlight_shards(paths, n_features=0)
    # a file with an index 0 makes every file zero-based, as load_svmlight_files does
    zero = tmp_path / "zero.svm"
    zero.write_text("2 0:1.5\n")
    X, _ = ld.svmlight_shards(paths + [zero])
    assert X.shape[1] == 31 and X.compute()[40, 0] == 1.5
