"""Reading CRFsuite's binary model files (``crf1d``, written by ``crfsuite
learn`` and python-crfsuite's ``Trainer.train``), so that
``CRF(model_filename="model.crfsuite")`` uses a model trained by CRFsuite, as
sklearn-crfsuite does.  Pure Python (``struct`` and numpy): python-crfsuite
is not needed.

Layout (little-endian; CRFsuite's ``crf1d_model.c`` and ``cqdb.c``):

* header (48 bytes): ``"lCRF"``, file size, ``"FOMC"``, version, numbers of
  features (left at 0 by CRFsuite), labels and attributes, then the offsets of the feature chunk, the
  label and attribute string tables, and two reference chunks (not needed here);
* feature chunk: ``"FEAT"``, chunk size, count, then per feature ``type``
  (0 state, 1 transition), ``src`` (attribute or previous label), ``dst``
  (label), all uint32, and the weight (float64): 20 bytes;
* each string table is a CQDB chunk: ``"CQDB"``, size, flag, byte-order mark
  ``0x62445371``, backward-array size and offset, 256 hash-table references
  (8 bytes each), then the records ``id`` (int32), ``ksize`` (uint32) and the
  NUL-terminated string, one after the other.

Every offset, count and id is checked against the file before use: a damaged
or foreign file raises ``ValueError`` naming the file and what is wrong.
"""
import os
import struct

import numpy as np

__all__ = ["MAGIC", "is_crfsuite_model", "read_crfsuite_model"]

MAGIC = b"lCRF"
_HEADER = struct.Struct("<4sI4sIIIIIIIII")
_CQDB_HEADER = struct.Struct("<4sIIIII")
_CQDB_DATA = _CQDB_HEADER.size + 256 * 8
_BYTE_ORDER = 0x62445371
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])


def is_crfsuite_model(path):
    """True when the file at ``path`` starts with CRFsuite's model magic."""
    try:
        with open(os.fspath(path), "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def _strings(buf, offset, count, name, what):
    """The ``count`` strings of the CQDB chunk at ``offset``, by id."""
    if offset + _CQDB_DATA > len(buf):
        raise ValueError("%s: the %s table lies outside the file" % (name, what))
    chunk, size, _, order, _, _ = _CQDB_HEADER.unpack_from(buf, offset)
    if chunk != b"CQDB" or order != _BYTE_ORDER or offset + size > len(buf):
        raise ValueError("%s: the %s table is damaged (no CQDB chunk)" % (name, what))
    out = [None] * count
    pos = offset + _CQDB_DATA
    end = offset + size
    for _ in range(count):
        if pos + 8 > end:
            raise ValueError("%s: the %s table holds fewer than %d strings" % (name, what, count))
        ident, ksize = struct.unpack_from("<iI", buf, pos)
        pos += 8
        if ksize < 1 or pos + ksize > end or buf[pos + ksize - 1] != 0:
            raise ValueError("%s: a %s string runs past its table" % (name, what))
        if not 0 <= ident < count or out[ident] is not None:
            raise ValueError("%s: %s id %d outside [0, %d) or repeated" % (name, what, ident,
                                                                          count))
        try:
            out[ident] = bytes(buf[pos:pos + ksize - 1]).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("%s: a %s is not UTF-8" % (name, what)) from None
        pos += ksize
    return out


def read_crfsuite_model(path):
    """The content of a CRFsuite model file.

    Returns
    -------
    dict with ``labels`` (list of str, by CRFsuite id), ``attributes`` (list
    of str), ``state`` (attribute ids, label ids, weights) and ``transitions``
    (previous label ids, next label ids, weights), the arrays as numpy arrays.
    """
    name = os.fspath(path)
    with open(name, "rb") as fh:
        buf = fh.read()
    if len(buf) < _HEADER.size or buf[:4] != MAGIC:
        raise ValueError("%s is not a CRFsuite model (no 'lCRF' header)" % name)
    (_, size, kind, _, _, n_labels, n_attrs, off_features, off_labels, off_attrs,
     _, _) = _HEADER.unpack_from(buf, 0)
    if kind != b"FOMC":
        raise ValueError("%s: CRFsuite model of type %r; only first-order CRFs (FOMC) are "
                         "read" % (name, kind))
    if size != len(buf):
        raise ValueError("%s: the header gives %d bytes, the file has %d (cut short?)"
                         % (name, size, len(buf)))
    if n_labels < 1:
        raise ValueError("%s: the model has no labels" % name)
    labels = _strings(buf, off_labels, n_labels, name, "label")
    attributes = _strings(buf, off_attrs, n_attrs, name, "attribute")
    if off_features + 12 > len(buf):
        raise ValueError("%s: the feature chunk lies outside the file" % name)
    # (CRFsuite leaves the header's feature count at 0: the chunk's count is used)
    chunk, chunk_size, count = struct.unpack_from("<4sII", buf, off_features)
    start = off_features + 12
    if chunk != b"FEAT" or chunk_size != 12 + count * _FEATURE.itemsize \
            or start + count * _FEATURE.itemsize > len(buf):
        raise ValueError("%s: the feature chunk is damaged" % name)
    feats = np.frombuffer(buf, dtype=_FEATURE, count=count, offset=start)
    kinds = feats["type"]
    if np.any(kinds > 1):
        raise ValueError("%s: unknown feature type %d" % (name, int(kinds.max())))
    if not np.all(np.isfinite(feats["weight"])):
        raise ValueError("%s: non-finite feature weights" % name)
    state, trans = feats[kinds == 0], feats[kinds == 1]
    if np.any(state["src"] >= n_attrs) or np.any(state["dst"] >= n_labels) \
            or np.any(trans["src"] >= n_labels) or np.any(trans["dst"] >= n_labels):
        raise ValueError("%s: a feature refers to a label or attribute the model lacks" % name)
    return {"labels": labels, "attributes": attributes,
            "state": (state["src"].astype(np.int64), state["dst"].astype(np.int64),
                      state["weight"].astype(np.float64)),
            "transitions": (trans["src"].astype(np.int64), trans["dst"].astype(np.int64),
                            trans["weight"].astype(np.float64))}
