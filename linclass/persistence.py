"""Saving and loading models without pickle.

File format (``FORMAT_VERSION`` 1)
----------------------------------
A numpy ``.npz`` archive holding

``__linclass_meta__``
    UTF-8 JSON (as a uint8 array) with the keys ``format`` (always
    ``"linclass-model"``), ``format_version``, ``linclass_version``,
    ``class`` (``"linclass.<Name>"``, a public model name), ``params`` (constructor
    parameters) and ``state`` (fitted attributes).
``__linclass_digest__``
    SHA-256 of the metadata bytes followed by every array's name, dtype,
    shape and bytes, in sorted name order: a file damaged on disk or in
    transfer, or cut short, fails to load with
    :class:`~linclass.exceptions.ModelFormatError`.  The digest is *not* keyed:
    it detects corruption, not tampering (anyone can recompute it).  What
    protects :func:`load` against a hostile file is that it trusts nothing in
    it: reads are bounded, no pickle is used, only allow-listed classes are
    built, no state entry may replace a method or class attribute, and the
    model's consistency check of its fitted state always runs.
``a0``, ``a1``, ...
    The numpy arrays referenced from the JSON as ``{"__array__": "a0"}``.

JSON values are tagged where JSON alone would lose information:
``{"__tuple__": [...]}``, ``{"__dict__": [[key, value], ...]}`` (keys of any
encodable type), ``{"__float__": "nan"|"inf"|"-inf"}``,
``{"__csr__": [data, indices, indptr], "shape": [m, n]}`` and
``{"__estimator__": "linclass.Y", "params": ..., "state": ...}`` for nested
linclass estimators.  Arrays are loaded with ``allow_pickle=False``; object
arrays are refused at save time.  Only the public model classes of
``linclass`` (the names ``from linclass import ...`` offers) are instantiated
on load: the class is looked up by name in that allow-list, and no module named
by a file is imported.  Files that name a class by its defining module
(``"linclass.svm.LinearSVC"``, as written before the package layout changed)
load the same way, by the last component.

Writing is atomic: the file is written to a temporary file in the target's
directory, fsynced and renamed over the target when complete
(:mod:`linclass._atomic`), so a failed or killed ``save`` leaves the previous
file intact.  A file written by another linclass version loads with a
:class:`~linclass.exceptions.ModelVersionWarning` naming both versions; a file
of another format version raises :class:`~linclass.exceptions.ModelFormatError`.

A savable object implements ``get_params(deep=False)``, ``_get_state()`` and
``_set_state(state)`` (:class:`linclass.base.BaseEstimator` does); this module
does not import :mod:`linclass.base`.
"""
import hashlib
import importlib
import inspect
import io
import json
import math
import numbers
import os
import stat
import warnings
import zipfile
from typing import Any, BinaryIO, Union

import numpy as np
import scipy.sparse as sp

from ._atomic import atomic_output
from ._registry import PUBLIC_MODELS
from ._version import __version__
from .exceptions import ModelFormatError, ModelVersionWarning

FORMAT_NAME = "linclass-model"
FORMAT_VERSION = 1

__all__ = ["save_model", "load", "FORMAT_VERSION"]


class _Encoder:
    def __init__(self):
        self.arrays = {}

    def _array(self, arr, where):
        arr = np.asarray(arr)
        if arr.dtype == object or arr.dtype.kind == "V":
            if arr.dtype == object:
                try:  # arrays of strings saved as unicode arrays
                    arr2 = arr.astype(str)
                except Exception:
                    arr2 = None
                if arr2 is not None and all(isinstance(v, str) for v in arr.ravel()):
                    name = "a%d" % len(self.arrays)
                    self.arrays[name] = np.ascontiguousarray(arr2)
                    return {"__array__": name, "object_str": True}
            raise ModelFormatError("cannot save %s: object arrays are not supported "
                                   "by the pickle-free format" % where)
        name = "a%d" % len(self.arrays)
        self.arrays[name] = np.ascontiguousarray(arr)
        return {"__array__": name}

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            value = float(value)
            if math.isnan(value):
                return {"__float__": "nan"}
            if math.isinf(value):
                return {"__float__": "inf" if value > 0 else "-inf"}
            return value
        if isinstance(value, np.ndarray):
            return self._array(value, where)
        if sp.issparse(value):
            csr = sp.csr_matrix(value)
            return {"__csr__": [self._array(csr.data, where), self._array(csr.indices, where),
                                self._array(csr.indptr, where)],
                    "shape": list(csr.shape)}
        if isinstance(value, list):
            return [self.encode(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, "%s[%d]" % (where, i))
                                  for i, v in enumerate(value)]}
        if isinstance(value, dict):
            return {"__dict__": [[self.encode(k, where + " key"),
                                  self.encode(v, "%s[%r]" % (where, k))]
                                 for k, v in value.items()]}
        if _is_savable(value):
            return {"__estimator__": _class_path(type(value)),
                    "params": self.encode(value.get_params(deep=False), where + ".params"),
                    "state": self.encode(value._get_state(), where + ".state")}
        raise ModelFormatError("cannot save %s: values of type %s are not supported "
                               "by the pickle-free format" % (where, type(value).__name__))


class _Decoder:
    def __init__(self, arrays, filename):
        self.arrays = arrays
        self.filename = filename

    def _array(self, ref):
        name = ref["__array__"]
        if not isinstance(name, str) or name not in self.arrays:
            raise ModelFormatError("%s: array %r referenced by the metadata is missing"
                                   % (self.filename, name))
        arr = self.arrays[name]
        return arr.astype(object) if ref.get("object_str") else arr

    # the keys each tagged value has: anything else is not a linclass file
    _TAGS = {"__array__": {"__array__", "object_str"}, "__float__": {"__float__"},
             "__tuple__": {"__tuple__"}, "__dict__": {"__dict__"},
             "__csr__": {"__csr__", "shape"}, "__estimator__": {"__estimator__", "params",
                                                                 "state"}}

    def decode(self, value):
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        tags = [t for t in self._TAGS if t in value]
        if len(tags) != 1 or not set(value) <= self._TAGS[tags[0]]:
            raise ModelFormatError("%s: unexpected tagged value with keys %s"
                                   % (self.filename, sorted(value)))
        if "__array__" in value:
            return self._array(value)
        if "__float__" in value:
            return float(value["__float__"])
        if "__tuple__" in value:
            return tuple(self.decode(v) for v in value["__tuple__"])
        if "__dict__" in value:
            return {_hashable(self.decode(k)): self.decode(v) for k, v in value["__dict__"]}
        if "__csr__" in value:
            data, indices, indptr = (self._array(r) for r in value["__csr__"])
            shape = tuple(int(n) for n in value["shape"])
            if len(shape) != 2:
                raise ModelFormatError("%s: sparse matrix of shape %r" % (self.filename, shape))
            mat = sp.csr_matrix((data, indices, indptr), shape=shape)
            # the same one-pass structure check as any sparse input
            from ._validation import _csr_arrays
            data, indices, indptr, _ = _csr_arrays(mat, "%s: stored sparse matrix"
                                                   % self.filename)
            return sp.csr_matrix((data, indices, indptr), shape=shape)
        if "__estimator__" in value:
            cls = _resolve_class(value["__estimator__"], self.filename)
            if not isinstance(value.get("params"), dict):
                raise ModelFormatError("%s: nested %s without parameters"
                                       % (self.filename, value["__estimator__"]))
            est = cls(**self.decode(value["params"]))
            _restore_state(est, self.decode(value.get("state", {})))
            return est
        raise ModelFormatError("%s: unknown tagged value with keys %s"
                               % (self.filename, sorted(value)))


def _hashable(k):
    return tuple(k) if isinstance(k, list) else k


def _is_savable(value):
    return (not isinstance(value, type) and callable(getattr(value, "get_params", None))
            and callable(getattr(value, "_get_state", None))
            and callable(getattr(value, "_set_state", None)))


def _public_class(name):
    """The public model class ``from linclass import <name>`` (name in the allow-list)."""
    return getattr(importlib.import_module("linclass." + PUBLIC_MODELS[name]), name)


def _class_path(cls):
    name = cls.__qualname__
    if name not in PUBLIC_MODELS or _public_class(name) is not cls:
        raise ModelFormatError("cannot save a %s: only the public linclass models (%s) can be "
                               "saved" % (name, ", ".join(sorted(PUBLIC_MODELS))))
    return "linclass." + name


def _resolve_class(path, filename):
    if not isinstance(path, str) or not (path == "linclass" or path.startswith("linclass.")):
        raise ModelFormatError("%s: class %r is not a linclass model; refusing to load it"
                               % (filename, path))
    name = path.rpartition(".")[2]
    if name not in PUBLIC_MODELS:
        raise ModelFormatError("%s: model class %r does not exist in this version of "
                               "linclass" % (filename, path))
    return _public_class(name)


def _digest(meta_bytes, arrays):
    h = hashlib.sha256()
    h.update(meta_bytes)
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(arr.dtype.str).encode())
        h.update(repr(arr.shape).encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def save_model(model: Any, path: Union[str, "os.PathLike[str]"]) -> str:
    """Write ``model`` to ``path`` in the format described above; returns the path.

    ``path`` is a path (written atomically: the previous file survives any
    failure) or a writable binary file object."""
    if not _is_savable(model):
        raise TypeError("save_model expects a linclass estimator, got %s" % type(model).__name__)
    enc = _Encoder()
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "linclass_version": __version__,
        "class": _class_path(type(model)),
        "params": enc.encode(model.get_params(deep=False), "params"),
        "state": enc.encode(model._get_state(), "state"),
    }
    meta_bytes = json.dumps(meta, sort_keys=True, allow_nan=False).encode("utf-8")
    digest = _digest(meta_bytes, enc.arrays)
    arrays = {"__linclass_meta__": np.frombuffer(meta_bytes, dtype=np.uint8),
              "__linclass_digest__": np.frombuffer(digest.encode(), dtype=np.uint8),
              **enc.arrays}
    if hasattr(path, "write"):           # a binary file object of the caller's
        np.savez_compressed(path, **arrays)
        return path
    path = os.fspath(path)
    with atomic_output(path, "wb") as fh:   # temp file beside path, fsync, rename
        np.savez_compressed(fh, **arrays)
    return path


#: Default limit on the total uncompressed size of a model file's arrays
#: (``load(path, max_bytes=...)`` raises it for larger models).
MAX_BYTES = 2 ** 30
#: Limit on the JSON metadata, and on the number of arrays in a file.
MAX_META_BYTES = 2 ** 26
MAX_ARRAYS = 100_000

_LOAD_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError,
                OverflowError, RecursionError, UnicodeError, zipfile.BadZipFile, EOFError)


def _read_npy(zf, info, filename, with_data):
    """The array stored in zip member ``info``; the ``.npy`` header is read and
    checked against the zip directory (dtype without objects, size =
    product of the shape) before any data is decompressed."""
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError("unsupported .npy version %r" % (version,))
        if dtype.hasobject or dtype.kind == "V":
            raise ValueError("array %s has dtype %s, which model files never hold"
                             % (info.filename, dtype))
        n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if n_bytes != info.file_size - fh.tell():
            raise ValueError("array %s: header says %d bytes of data, the archive holds %d"
                             % (info.filename, n_bytes, info.file_size - fh.tell()))
        if not with_data:
            return None
        data = fh.read(n_bytes)
        if len(data) != n_bytes:
            raise EOFError("array %s is cut short" % info.filename)
        arr = np.frombuffer(data, dtype=dtype)
        return arr.reshape(shape, order="F" if fortran else "C").copy()


def _open_source(source, max_bytes):
    """``(binary file object, display name)`` for a path or a file object.

    A path must name a regular file no larger than the limit: FIFOs, devices
    (``/dev/zero``), sockets and directories are refused before anything is
    read (opened non-blocking, so a FIFO without a writer cannot hang).  A file
    object is read up to the limit into memory (``load`` never reads without
    bound from a stream)."""
    limit = max_bytes + MAX_META_BYTES + 2 ** 20        # arrays, metadata, zip overhead
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        name = os.fspath(name) if isinstance(name, (str, os.PathLike)) else "<stream>"
        data = source.read(limit + 1)
        if not isinstance(data, bytes):
            raise TypeError("load() needs a binary file object (open the file with 'rb'), "
                            "got a stream returning %s" % type(data).__name__)
        if len(data) > limit:
            raise ModelFormatError("%s: more than %d bytes, larger than any model within "
                                   "max_bytes=%d" % (name, limit, max_bytes))
        return io.BytesIO(data), name
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("load() expects a path or a binary file object, got %s"
                        % type(source).__name__)
    name = os.fspath(source)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", name)
        if not stat.S_ISREG(st.st_mode):
            raise ModelFormatError("%s: not a regular file (a FIFO, device or socket); "
                                   "model files are regular files" % name)
        if st.st_size > limit:
            raise ModelFormatError(
                "%s: %d bytes, larger than any model within max_bytes=%d; if you trust "
                "the file, call linclass.load(path, max_bytes=...) with a larger limit"
                % (name, st.st_size, max_bytes))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), name
    except BaseException:
        os.close(fd)
        raise


def _read_archive(fileobj, filename, max_bytes):
    """``{name: array}`` of a model file, checking the zip directory, the
    ``.npy`` headers and the total size before decompressing any array data."""
    with fileobj, zipfile.ZipFile(fileobj) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_ARRAYS:
            raise ModelFormatError("%s: %d entries; a linclass model file holds at most %d"
                                   % (filename, len(infos), MAX_ARRAYS))
        names = {}
        for info in infos:
            if not info.filename.endswith(".npy") or info.filename[:-4] in names:
                raise ModelFormatError("%s: unexpected archive entry %r"
                                       % (filename, info.filename))
            names[info.filename[:-4]] = info
        if "__linclass_meta__" not in names or "__linclass_digest__" not in names:
            raise ModelFormatError("%s: not a linclass model file (no linclass metadata)"
                                   % filename)
        if names["__linclass_meta__"].file_size > MAX_META_BYTES:
            raise ModelFormatError("%s: metadata of %d bytes exceeds the limit of %d"
                                   % (filename, names["__linclass_meta__"].file_size,
                                      MAX_META_BYTES))
        total = sum(info.file_size for info in infos)
        if total > max_bytes:
            raise ModelFormatError(
                "%s: the arrays take %d bytes uncompressed, more than max_bytes=%d; "
                "if you trust the file, call linclass.load(path, max_bytes=...) with a "
                "larger limit" % (filename, total, max_bytes))
        for info in infos:                      # every header, before any data
            _read_npy(zf, info, filename, with_data=False)
        return {name: _read_npy(zf, info, filename, with_data=True)
                for name, info in names.items()}


def _is_code(attr):
    return callable(attr) or isinstance(attr, (property, staticmethod, classmethod))


def _restore_state(model, state):
    """Set the decoded fitted ``state`` on ``model`` and run the class's
    consistency checks of it, which no entry of the file can switch off.

    Every key must be a plain attribute name that does not shadow anything
    the class defines (a method such as ``_check_state``, a property, a class
    constant): a file cannot replace code or class-level settings.  The checks
    are looked up on the class, never on the instance: ``_check_state`` (every
    array a kernel indexes agrees with the others; nested models were checked
    when they were decoded) and ``_check_params`` (the parameter checks
    ``fit`` runs), when it takes no arguments."""
    cls = type(model)
    if not isinstance(state, dict):
        raise ModelFormatError("the fitted state of a %s must be a mapping" % cls.__name__)
    for key in state:
        if not isinstance(key, str) or not key.isidentifier() or key.startswith("__") \
                or hasattr(cls, key):
            raise ModelFormatError("the fitted state of a %s has the entry %r, which is not "
                                   "a fitted attribute (it would replace part of the class)"
                                   % (cls.__name__, key))
    model._set_state(state)
    shadowing = sorted(k for k in vars(model) if k.startswith("__") or (
        hasattr(cls, k) and _is_code(inspect.getattr_static(cls, k))))
    if shadowing:
        raise ModelFormatError("loading a %s set %s, which would replace methods of the "
                               "class" % (cls.__name__, ", ".join(shadowing)))
    check = getattr(cls, "_check_state", None)
    if callable(check):
        check(model)
    check = getattr(cls, "_check_params", None)     # the checks fit runs
    if callable(check) and not any(
            p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                p.POSITIONAL_OR_KEYWORD)
            for p in list(inspect.signature(check).parameters.values())[1:]):
        check(model)


def load(path: Union[str, "os.PathLike[str]", BinaryIO], *, max_bytes: int = MAX_BYTES) -> Any:
    """Load a model written by ``model.save(path)``.

    Loading trusts nothing in the file and never runs code named by it: the
    class comes from the allow-list of public models, arrays are read without
    pickle, reads are bounded (a path must be a regular file within the size
    limit; FIFOs and devices are refused before any read), sizes are checked
    (against the zip directory, each ``.npy`` header and ``max_bytes``) before
    any array is decompressed, no state entry may replace a method or class
    attribute, and the fitted state is always checked for consistency
    (``_check_state``) before the model is returned.

    Parameters
    ----------
    path : str, path-like or binary file object
        A file object (``open(p, "rb")``, ``io.BytesIO``) is read from its
        current position, at most the size limit, and left open.
    max_bytes : int, default 2**30
        Refuse files whose arrays take more than this many bytes uncompressed.

    Returns
    -------
    BaseEstimator
        The fitted model, of the class named in the file.

    Raises
    ------
    ModelFormatError
        A file that is not a linclass model, is damaged (checksum), is
        inconsistent, too large, not a regular file, or of another format
        version.

    Warns
    -----
    ModelVersionWarning
        The file was written by another version of linclass (both named).
    """
    from ._validation import check_int_param
    check_int_param(max_bytes, "max_bytes", low=1)
    fileobj, filename = _open_source(path, max_bytes)
    try:
        contents = _read_archive(fileobj, filename, max_bytes)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError,
            NotImplementedError, RuntimeError, OverflowError, MemoryError, KeyError) as exc:
        # (zlib.error is an Exception subclass raised as is by zipfile)
        raise ModelFormatError("%s: not a linclass model file (%s: %s)"
                               % (filename, type(exc).__name__, exc))
    except Exception as exc:  # zlib.error and other decompression failures
        if type(exc).__module__ in ("zlib", "zipfile"):
            raise ModelFormatError("%s: not a linclass model file (%s)" % (filename, exc))
        raise
    meta_bytes = contents.pop("__linclass_meta__").tobytes()
    stored_digest = contents.pop("__linclass_digest__").tobytes().decode("ascii", "replace")
    try:
        meta = json.loads(meta_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFormatError("%s: corrupt metadata (%s)" % (filename, exc))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFormatError("%s: not a linclass model file" % filename)
    version = meta.get("format_version")
    if not isinstance(version, int):
        raise ModelFormatError("%s: missing or invalid format_version" % filename)
    written_by = meta.get("linclass_version")
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            "%s: written with model format version %d by linclass %s; this linclass (%s) "
            "reads format version %d only: %s" % (
                filename, version, written_by, __version__, FORMAT_VERSION,
                "upgrade linclass to load it" if version > FORMAT_VERSION else
                "load it with the linclass that wrote it and retrain or re-save"))
    if _digest(meta_bytes, contents) != stored_digest:
        raise ModelFormatError("%s: checksum mismatch: the file was damaged (or edited) "
                               "after it was saved" % filename)
    if not isinstance(written_by, str):
        raise ModelFormatError("%s: missing or invalid linclass_version" % filename)
    if written_by != __version__:
        warnings.warn("%s was written by linclass %s and is loaded by linclass %s; the "
                      "format is the same (version %d), but the model may behave "
                      "differently: re-save it with this version"
                      % (filename, written_by, __version__, FORMAT_VERSION),
                      ModelVersionWarning, stacklevel=2)
    cls = _resolve_class(meta.get("class", ""), filename)
    if not isinstance(meta.get("params"), dict) or not isinstance(meta.get("state"), dict):
        raise ModelFormatError("%s: metadata lacks the params/state of the model" % filename)
    dec = _Decoder(contents, filename)
    try:
        params = dec.decode(meta["params"])
        model = cls(**params)
    except ModelFormatError:
        raise
    except _LOAD_ERRORS as exc:
        raise ModelFormatError("%s: parameters do not match %s: %s" % (filename, cls.__name__, exc))
    try:
        _restore_state(model, dec.decode(meta["state"]))
    except ModelFormatError:
        raise
    except _LOAD_ERRORS as exc:
        raise ModelFormatError("%s: inconsistent %s model: %s: %s"
                               % (filename, cls.__name__, type(exc).__name__, exc))
    return model
