"""Reader and writer of the svmlight / libsvm sparse text format.

One example per line::

    <label>[,<label>...] [qid:<query id>] <index>:<value> <index>:<value> ... [# comment]

The reader is a drop-in replacement for scikit-learn's
``sklearn.datasets.load_svmlight_file`` / ``load_svmlight_files``: same
signature, same values in the returned arrays (``X`` is a
``scipy.sparse.csr_matrix`` with sorted int32 indices, ``y`` float64 or a
list of sorted tuples when ``multilabel=True``, ``qid`` int64), same
zero/one-based auto-detection and the same ``offset``/``length`` chunking.
It parses the whole decompressed file in Cython without the GIL
(:mod:`linclass._core._svmlight`), and it is stricter: every malformed line
raises :class:`linclass.exceptions.DataFormatError` naming the file and the
line, nothing is skipped silently.

Differences from scikit-learn, all on input scikit-learn also rejects or
mishandles:

* errors are ``DataFormatError`` (a ``ValueError``) with file and line;
* numbers with ``_`` separators (``1_000``) and tokens such as ``qidx:3``
  are rejected (scikit-learn accepts them through Python's ``int``/``float``);
* with ``query_id=True`` a file where only some lines carry a ``qid`` is an
  error (scikit-learn returns a shorter, misaligned ``qid`` array);
* a feature index beyond ``n_features`` is reported with its line.

The writer :func:`dump_svmlight_file` writes every value in the shortest
``%.15g``/``%.16g``/``%.17g`` form that reads back to the same double, so a
dump/load round trip is exact (scikit-learn writes ``%.16g``, which is not
always exact).

References
----------
T. Joachims, "Making large-scale SVM learning practical", in B. Schoelkopf,
C. Burges and A. Smola (eds.), Advances in Kernel Methods - Support Vector
Learning, MIT Press, 1999 (the format, http://svmlight.joachims.org/).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011 (the libsvm variant without ``qid``).
"""
import bz2
import gzip
import numbers
import os

import numpy as np
import scipy.sparse as sp

from .._atomic import atomic_output
from .._core import _svmlight
from ..exceptions import DataFormatError
from ._io import refuse_device

__all__ = ["load_svmlight_file", "load_svmlight_files", "dump_svmlight_file"]

_STREAM_NAME = "<stream>"


# ---------------------------------------------------------------------------
# reading


def _check_load_params(n_features, dtype, multilabel, zero_based, query_id,
                       offset, length):
    if n_features is not None:
        if (isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral)
                or n_features < 1):
            raise ValueError("n_features must be None or an integer >= 1, got %r"
                             % (n_features,))
    if not (isinstance(zero_based, (bool, np.bool_)) or zero_based == "auto"):
        raise ValueError("zero_based must be True, False or 'auto', got %r" % (zero_based,))
    for name, value in (("multilabel", multilabel), ("query_id", query_id)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError("%s must be a bool, got %r" % (name, value))
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral) or offset < 0:
        raise ValueError("offset must be an integer >= 0, got %r" % (offset,))
    if isinstance(length, bool) or not isinstance(length, numbers.Integral):
        raise ValueError("length must be an integer, got %r" % (length,))
    if (offset != 0 or length > 0) and n_features is None:
        raise ValueError("n_features is required when offset or length is specified.")
    return np.dtype(dtype)


def _source_name(f):
    """Name used in error messages for a path, descriptor or file object."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    if isinstance(f, numbers.Integral):
        return "<file descriptor %d>" % f
    name = getattr(f, "name", None)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    return name if isinstance(name, str) and name else _STREAM_NAME


def _open_binary(f):
    """(file object, should_close) for a path (.gz/.bz2 aware), fd or file object."""
    if hasattr(f, "read"):
        return f, False
    if isinstance(f, bool):
        raise TypeError("expected a path, file descriptor or binary file object, got bool")
    if isinstance(f, numbers.Integral):
        return open(int(f), "rb", closefd=False), True
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        refuse_device(path)
        ext = os.path.splitext(path)[1]
        if ext == ".gz":
            return gzip.open(path, "rb"), True
        if ext == ".bz2":
            return bz2.BZ2File(path, "rb"), True
        return open(path, "rb"), True
    raise TypeError("expected a path (str or path-like), file descriptor or binary "
                    "file object, got %s" % type(f).__name__)


def _read_buffer(f, offset):
    """Read the source from ``offset`` (or its current position) to the end.

    Returns ``(buf, start_pos)``: the bytes and the file position of buf[0].
    """
    fobj, should_close = _open_binary(f)
    try:
        if offset > 0:
            fobj.seek(offset)
            start_pos = offset
        else:
            try:
                start_pos = fobj.tell()
            except (AttributeError, OSError, ValueError):
                start_pos = 0
        try:
            buf = fobj.read()
        except (EOFError, OSError, ValueError) as err:   # corrupt .gz / .bz2
            if isinstance(err, (FileNotFoundError, IsADirectoryError, PermissionError)):
                raise
            raise DataFormatError("cannot decompress the file (%s: %s)"
                                  % (type(err).__name__, err), _source_name(f)) from err
        except Exception as err:
            if type(err).__module__ == "zlib":
                raise DataFormatError("cannot decompress the file (%s)" % err,
                                      _source_name(f)) from err
            raise
    finally:
        if should_close:
            fobj.close()
    if isinstance(buf, (bytearray, memoryview)):
        buf = bytes(buf)
    if not isinstance(buf, bytes):
        raise TypeError("svmlight files must be opened in binary mode ('rb'); "
                        "%s.read() returned %s" % (_source_name(f), type(buf).__name__))
    return buf, start_pos


def _parse_source(f, *, multilabel, zero_based, query_id, offset, length):
    name = _source_name(f)
    buf, start_pos = _read_buffer(f, offset)
    start = 0
    note = ""
    if offset > 0:
        # like sklearn: drop the (possibly partial) line that holds byte `offset`
        newline = buf.find(b"\n")
        start = len(buf) if newline < 0 else newline + 1
        note = " (line counted from byte offset %d)" % offset
    elif start_pos == 0 and buf.startswith(b"\xef\xbb\xbf"):
        start = 3               # a UTF-8 byte order mark before the first label
    offset_max = offset + length - start_pos if length > 0 else -1
    parsed = _svmlight.parse_svmlight(
        buf, start=start, offset_max=offset_max, first_lineno=1 if offset == 0 else 2,
        multilabel=bool(multilabel), zero_based=bool(zero_based),
        query_id=bool(query_id), filename=name, line_note=note)
    parsed["name"] = name
    parsed["note"] = note
    return parsed


def load_svmlight_files(files, *, n_features=None, dtype=np.float64, multilabel=False,
                        zero_based="auto", query_id=False, offset=0, length=-1):
    """Load several svmlight / libsvm files with a shared number of features.

    Same as calling :func:`load_svmlight_file` on each file, except that all
    matrices get the same number of columns and the zero/one-based detection
    looks at all files together (as scikit-learn does).

    Parameters
    ----------
    files : sequence of (str, path-like, int or binary file object)
        The sources; see :func:`load_svmlight_file`.
    n_features, dtype, multilabel, zero_based, query_id, offset, length
        See :func:`load_svmlight_file`.

    Returns
    -------
    list
        ``[X1, y1, ..., Xn, yn]``, or ``[X1, y1, q1, ..., Xn, yn, qn]`` when
        ``query_id=True``.

    Raises
    ------
    DataFormatError
        A malformed line, with its file and line number, or a feature index
        that does not fit ``n_features``.
    """
    dtype = _check_load_params(n_features, dtype, multilabel, zero_based, query_id,
                               offset, length)
    if isinstance(files, (str, bytes, os.PathLike)) or hasattr(files, "read"):
        raise TypeError("files must be a list of sources; use load_svmlight_file "
                        "for a single file")
    files = list(files)
    if not isinstance(zero_based, str):
        zero_based = bool(zero_based)
    if (offset != 0 or length > 0) and zero_based == "auto":
        zero_based = True          # the heuristic would differ between chunks
    parsed = [_parse_source(f, multilabel=multilabel, zero_based=zero_based is not False,
                           
                            query_id=query_id, offset=offset, length=length)
              for f in files]

    # one-based unless told otherwise or some file has an index 0 (sklearn's rule)
    if zero_based is False or (zero_based == "auto" and
                               all(p["max_index"] >= 0 and p["min_index"] > 0
                                   for p in parsed)):
        shift = 1
    else:
        shift = 0
    n_features_found = max([p["max_index"] - shift for p in parsed if p["max_index"] >= 0],
                           default=0) + 1
    if n_features is None:
        n_features = n_features_found
    elif n_features < n_features_found:
        _raise_too_many_features(parsed, n_features, shift)

    result = []
    for p in parsed:
        indices = p["indices"]
        if shift:
            indices -= 1                          # in place: a fresh array
        indptr = p["indptr"]
        if indptr[-1] <= np.iinfo(np.int32).max:
            indptr = indptr.astype(np.int32)
        else:  # pragma: no cover - more than 2**31 non-zeros
            indices = indices.astype(np.int64)
        values = p["values"]
        if values.dtype != dtype:
            with np.errstate(over="ignore", invalid="ignore"):
                values = values.astype(dtype)   # as sklearn: out of range -> inf
        X = sp.csr_matrix((values, indices, indptr),
                          shape=(indptr.shape[0] - 1, n_features), copy=False)
        X.has_sorted_indices = True               # checked strictly increasing
        if multilabel:
            labels, label_ptr = p["labels"].tolist(), p["label_ptr"].tolist()
            y = [tuple(labels[label_ptr[i]:label_ptr[i + 1]])
                 for i in range(len(label_ptr) - 1)]
        else:
            y = p["labels"]
        result += [X, y]
        if query_id:
            result.append(p["qids"])
    return result


def _raise_too_many_features(parsed, n_features, shift):
    for p in parsed:
        bad = np.flatnonzero(p["indices"] >= n_features + shift)
        if bad.size:
            row = np.searchsorted(p["indptr"], bad[0], side="right") - 1
            index = int(p["indices"][bad[0]])
            raise DataFormatError(
                "feature index %d is out of range for n_features=%d (the file is "
                "read as %s-based, so the largest allowed index is %d)%s"
                % (index, n_features, "one" if shift else "zero",
                   n_features - 1 + shift, p["note"]),
                p["name"], int(p["row_lineno"][row]))
    raise AssertionError("unreachable: no index beyond n_features")  # pragma: no cover


def load_svmlight_file(f, *, n_features=None, dtype=np.float64, multilabel=False,
                       zero_based="auto", query_id=False, offset=0, length=-1):
    """Load an svmlight / libsvm file into a CSR matrix and a label vector.

    Drop-in replacement for ``sklearn.datasets.load_svmlight_file`` with the
    same arguments and the same output values; the parser runs in Cython
    without the GIL.

    Parameters
    ----------
    f : str, path-like, int or binary file object
        Path (``.gz`` and ``.bz2`` are decompressed on the fly), file
        descriptor, or a file object opened in binary mode (read from its
        current position; not closed).
    n_features : int >= 1, optional
        Number of columns; inferred from the largest index when None.  An
        index that does not fit raises ``DataFormatError`` with its line.
        Required when ``offset`` or ``length`` is given.
    dtype : numpy dtype, default float64
        dtype of ``X`` (values are parsed as float64 and then cast).
    multilabel : bool, default False
        Labels are comma-separated lists (``1,3``); ``y`` is then a list of
        sorted tuples of floats (an empty tuple when a line has no label).
    zero_based : bool or "auto", default "auto"
        Whether indices in the file start at 0.  "auto": one-based unless some
        index is 0 (forced to True when ``offset``/``length`` are given).
        ``False`` makes an index 0 an error.
    query_id : bool, default False
        Also return the ``qid:`` values (int64).
    offset : int >= 0, default 0
        Start reading at this byte, after dropping the line that holds it.
    length : int, default -1
        If > 0, stop after the first data line that ends beyond
        ``offset + length`` bytes.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        int32 sorted indices; explicit zeros of the file are kept.
    y : ndarray of float64, shape (n_samples,), or list of tuples
    qid : ndarray of int64
        Only with ``query_id=True`` (empty if the file has no qid).

    Raises
    ------
    DataFormatError
        ``"<file>:<line>: <reason>"`` for a malformed label, feature, index
        or qid, unsorted/duplicate indices, an index 0 when one-based, or an
        index beyond ``n_features``.  File objects without a name are
        reported as ``<stream>``.

    Examples
    --------
    >>> import io
    >>> from linclass.datasets import load_svmlight_file
    >>> X, y = load_svmlight_file(io.BytesIO(b"1 1:0.5 3:2\\n-1 2:1 # comment\\n"))
    >>> X.toarray()
    array([[0.5, 0. , 2. ],
           [0. , 1. , 0. ]])
    >>> y
    array([ 1., -1.])
    """
    return tuple(load_svmlight_files(
        [f], n_features=n_features, dtype=dtype, multilabel=multilabel,
        zero_based=zero_based, query_id=query_id, offset=offset, length=length))


# ---------------------------------------------------------------------------
# writing


def _as_csr(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X)          # copy of the structure only when needed
        if X.ndim != 2:  # pragma: no cover
            raise ValueError("X must be 2-D")
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()        # also sorts the indices
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        return data, indices, indptr, X.shape
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError("X must be a 2-D array or sparse matrix, got shape %r" % (X.shape,))
    if X.dtype.kind not in "biuf":
        raise ValueError("X must be numeric, got dtype %s" % X.dtype)
    X = X.astype(np.float64, copy=False)
    mask = X != 0                                 # NaN is written, as sklearn does
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    rows, cols = np.nonzero(mask)
    return (np.ascontiguousarray(X[rows, cols]), cols.astype(np.int32),
            indptr, X.shape)


def dump_svmlight_file(X, y, f, *, zero_based=True, comment=None, query_id=None,
                       multilabel=False):
    """Write a data set in svmlight / libsvm format.

    Drop-in replacement for ``sklearn.datasets.dump_svmlight_file``; values
    are written in the shortest form that reads back exactly (``%.17g`` at
    most), so ``load_svmlight_file`` returns the same matrix.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Zeros of a dense X are not written; stored entries of a sparse X are
        (explicit zeros included).
    y : array-like of shape (n_samples,), or (n_samples, n_labels) indicator
        matrix (dense or sparse) when ``multilabel=True``; a multilabel line
        lists the columns where y is non-zero.
    f : str, path-like or binary file object
        A path is replaced atomically: the file is written beside it and
        renamed over it only when complete (a failure leaves it as it was).
        A file object is written as is and not closed.
    zero_based : bool, default True
        Write column indices starting at 0 (True) or 1 (False).
    comment : str or bytes, optional
        Written at the top as ``#`` lines, after a line naming linclass.
    query_id : array-like of int, shape (n_samples,), optional
        Written as ``qid:<q>`` after the label.
    multilabel : bool, default False

    Raises
    ------
    ValueError
        Shapes that disagree, non-numeric input, a non-integer query_id, or a
        comment with a NUL byte.
    """
    from .._version import __version__

    if not isinstance(zero_based, (bool, np.bool_)):
        raise ValueError("zero_based must be a bool, got %r" % (zero_based,))
    if not isinstance(multilabel, (bool, np.bool_)):
        raise ValueError("multilabel must be a bool, got %r" % (multilabel,))
    if comment is not None:
        if isinstance(comment, bytes):
            comment.decode("ascii")               # raises on non-ASCII bytes
        elif isinstance(comment, str):
            comment = comment.encode("utf-8")
        else:
            raise TypeError("comment must be str or bytes, got %s" % type(comment).__name__)
        if b"\0" in comment:
            raise ValueError("comment string contains NUL byte")

    data, indices, indptr, shape = _as_csr(X)
    n_samples = shape[0]
    empty_i64 = np.zeros(0, dtype=np.int64)
    labels = np.zeros(0)
    label_ptr, label_idx = empty_i64, empty_i64
    if multilabel:
        if sp.issparse(y):
            Y = sp.csr_matrix(y, copy=True)
            Y.eliminate_zeros()
            Y.sort_indices()
            label_ptr = Y.indptr.astype(np.int64)
            label_idx = Y.indices.astype(np.int64)
        else:
            Y = np.asarray(y)
            if Y.ndim != 2:
                raise ValueError("multilabel y must be a 2-D indicator matrix, got "
                                 "shape %r" % (Y.shape,))
            mask = Y != 0
            label_ptr = np.zeros(Y.shape[0] + 1, dtype=np.int64)
            np.cumsum(mask.sum(axis=1), out=label_ptr[1:])
            label_idx = np.nonzero(mask)[1].astype(np.int64)
        n_y = Y.shape[0]
        if n_y == indptr.shape[0] - 1:
            blank = np.flatnonzero((np.diff(label_ptr) == 0) & (np.diff(indptr) == 0))
            if blank.size:
                raise ValueError(
                    "row %d has neither labels nor stored features: its svmlight line "
                    "would be blank, and readers skip blank lines (%d such rows)"
                    % (blank[0], blank.size))
    else:
        if sp.issparse(y):
            if y.shape[1] != 1:
                raise ValueError("expected y of shape (n_samples, 1), got %r" % (y.shape,))
            y = y.toarray().ravel()
        yval = np.asarray(y)
        if yval.ndim != 1:
            raise ValueError("expected y of shape (n_samples,), got %r" % (yval.shape,))
        if yval.dtype.kind not in "biuf":
            raise ValueError("y must be numeric, got dtype %s" % yval.dtype)
        labels = np.ascontiguousarray(yval, dtype=np.float64)
        n_y = labels.shape[0]
    if n_y != n_samples:
        raise ValueError("X.shape[0] and y.shape[0] should be the same, got %d and %d "
                         "instead." % (n_samples, n_y))
    qids = empty_i64
    if query_id is not None:
        q = np.asarray(query_id)
        if q.ndim != 1 or q.shape[0] != n_samples:
            raise ValueError("expected query_id of shape (n_samples,), got %r" % (q.shape,))
        if q.dtype.kind not in "biu":
            if q.dtype.kind == "f" and np.all(np.isfinite(q)) and np.all(q == np.round(q)):
                q = q.astype(np.int64)
            else:
                raise ValueError("query_id must hold integers, got dtype %s" % q.dtype)
        qids = np.ascontiguousarray(q, dtype=np.int64)
    if indices.size and int(indices.max()) >= np.iinfo(np.int32).max:  # pragma: no cover
        raise ValueError("column index too large for the svmlight writer")

    def write(fobj):
        if comment:
            fobj.write(("# Generated by dump_svmlight_file from linclass %s\n"
                        % __version__).encode())
            fobj.write(("# Column indices are %s-based\n"
                        % ("zero" if zero_based else "one")).encode())
            fobj.write(b"#\n")
            fobj.writelines(b"# %s\n" % line for line in comment.splitlines())
        _svmlight.write_svmlight(
            fobj, values=data, indices=indices, indptr=indptr, labels=labels,
            label_ptr=label_ptr, label_idx=label_idx, qids=qids,
            multilabel=bool(multilabel), has_qid=query_id is not None,
            one_based=not zero_based)

    if hasattr(f, "write"):
        write(f)
    elif isinstance(f, (str, os.PathLike)):
        with atomic_output(f, "wb") as fobj:     # f is replaced only when complete
            write(fobj)
    else:
        raise TypeError("f must be a path or a binary file object, got %s"
                        % type(f).__name__)
