"""svmlight / libsvm shards: one partition per file, read by linclass's own parser.

:func:`svmlight_shards` turns a list of files (``.gz``/``.bz2`` too) into the
``(X, y)`` that :func:`linclass.distributed.fit` takes: a dask array of
scipy-sparse CSR chunks (one per file, rows whole, known row counts; a file
without rows gives no chunk: ``dask.array.concatenate`` drops it) and a
dask array of float64 labels chunked alike.  Before anything is built, one
pass over the files on the workers reads each file's row count and its
smallest and largest feature index, so that

* the **feature width** is global (the largest index over all files, or the
  ``n_features`` given -- an index beyond it is a ``DataFormatError`` naming
  the file and line), and
* the **zero/one-based** decision is global: one-based unless some file has
  an index 0 (files without any feature do not vote, unlike
  :func:`linclass.datasets.load_svmlight_files`, which goes zero-based for
  them),

so that concatenated the chunks are exactly what loading the concatenation
of the files in memory gives.  The global
label set is inferred by ``fit`` itself, before training.  Files are parsed on
the workers (:mod:`linclass._core._svmlight`, no GIL); only their paths
travel, so every worker must see the same paths.
"""
import os

import numpy as np

from .runner import Runner, import_dask

__all__ = ["svmlight_shards"]


def _scan(path, index):
    """(rows, smallest index, largest index) of one file, indices as written."""
    from ..datasets import load_svmlight_file
    X, _ = load_svmlight_file(path, zero_based=True)
    if X.nnz == 0:
        return X.shape[0], -1, -1, index
    return X.shape[0], int(X.indices.min()), int(X.indices.max()), index


def _load(path, zero_based, n_features, dtype):
    from ..datasets import load_svmlight_file
    X, y = load_svmlight_file(path, zero_based=zero_based, n_features=n_features, dtype=dtype)
    return X, np.asarray(y, dtype=np.float64)


def svmlight_shards(files, *, n_features=None, dtype=np.float64, zero_based="auto",
                    client=None, persist=True):
    """Dask arrays ``(X, y)`` from svmlight / libsvm files, one partition per file.

    Parameters
    ----------
    files : sequence of str or path-like
        The shards, in order (``.gz`` and ``.bz2`` are decompressed on the fly).
        Paths must be readable by every worker.
    n_features : int >= 1 or None, default=None
        Global number of columns; None: the largest index over all files.
    dtype : numpy float dtype, default=float64
        dtype of X.
    zero_based : bool or "auto", default="auto"
        Whether indices start at 0; "auto": one-based unless some file has an
        index 0 (decided over all files together).
    client : distributed.Client or None
        Where the files are scanned (and kept, with ``persist``); None: dask's
        default client if one exists, else the local scheduler.
    persist : bool, default=True
        With a client, parse the files once more and keep the partitions in the
        workers' memory (the scan is a separate, earlier pass); without a client
        the arrays stay lazy and each computation re-reads the files.

    Returns
    -------
    X : dask.array.Array, shape (n_samples, n_features), scipy.sparse CSR chunks
    y : dask.array.Array, shape (n_samples,), float64, chunked like X's rows

    Raises
    ------
    DataFormatError
        A malformed line (file and line number), or an index beyond ``n_features``.
    """
    import_dask()
    import dask
    import dask.array as da
    import scipy.sparse as sp

    from .._validation import check_positive
    from ..exceptions import DataFormatError
    from .api import _resolve_client
    if isinstance(files, (str, bytes, os.PathLike)):
        raise TypeError("files must be a list of paths (one partition per file), got a "
                        "single path")
    files = [os.fspath(f) for f in files]
    if not files:
        raise ValueError("files is empty: give at least one svmlight file")
    for f in files:
        if not isinstance(f, str):
            raise TypeError("files must hold paths, got %r" % (f,))
    if n_features is not None:
        check_positive(n_features, "n_features", integer=True)
        n_features = int(n_features)
    if zero_based not in (True, False, "auto"):
        raise ValueError("zero_based must be True, False or 'auto', got %r" % (zero_based,))
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError("dtype must be a floating-point dtype, got %s" % dtype)
    client = _resolve_client(client)
    runner = Runner(client)
    delayed = dask.delayed
    scans = runner.compute([delayed(_scan, pure=False)(f, k) for k, f in enumerate(files)])
    if zero_based == "auto":
        # files without features do not vote (load_svmlight_files would go zero-based
        # for them; loading the concatenation would not)
        zero_based = any(hi >= 0 and lo == 0 for _, lo, hi, _ in scans)
    shift = 0 if zero_based else 1
    found = max([hi - shift for _, _, hi, _ in scans if hi >= 0], default=0) + 1
    if n_features is None:
        n_features = found
    elif n_features < found:
        _, _, hi, k = max(scans, key=lambda s: s[2])
        raise DataFormatError("feature index %d is out of range for n_features=%d (the files "
                              "are read as %s-based)" % (hi, n_features,
                                                         "zero" if zero_based else "one"),
                              files[k])
    parts = [delayed(_load, pure=False)(f, bool(zero_based), n_features, dtype) for f in files]
    meta = sp.csr_matrix((0, n_features), dtype=dtype)
    X = da.concatenate([da.from_delayed(p[0], shape=(rows, n_features), dtype=dtype, meta=meta)
                        for p, (rows, _, _, _) in zip(parts, scans)], axis=0)
    y = da.concatenate([da.from_delayed(p[1], shape=(rows,), dtype=np.float64,
                                        meta=np.zeros(0))
                        for p, (rows, _, _, _) in zip(parts, scans)], axis=0)
    if persist and client is not None:
        with runner._guard():
            X, y = client.persist([X, y])
    return X, y
