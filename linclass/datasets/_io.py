"""Opening text files for the readers and writers of :mod:`linclass.datasets`.

Every reader accepts a path (``str`` or :class:`os.PathLike`) or an open file
object.  Paths ending in ``.gz`` or ``.bz2`` are decompressed transparently;
an open binary stream is decoded with the requested encoding; an open text
stream is used as is.  The helpers also return a display name for the file
(its path, or ``"<stream>"``), which readers put into
:class:`~linclass.exceptions.DataFormatError` messages.
"""
import bz2
import contextlib
import gc
import gzip
import io
import os
import stat

from .._atomic import atomic_output

__all__ = ["open_text", "read_text", "iter_lines", "source_name", "gc_paused", "refuse_device"]


def source_name(f):
    """Name of a path or file object for error messages."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    name = getattr(f, "name", None)
    if isinstance(name, (str, os.PathLike)):
        return os.fspath(name)
    return "<stream>"


def refuse_device(path):
    """Raise ``ValueError`` when ``path`` is a character or block device other
    than a terminal: ``/dev/zero`` or ``/dev/urandom`` would be read without
    end.  Regular files, pipes (``/dev/stdin`` of a pipeline) and terminals pass."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return                              # the open reports a missing file
    if not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        interactive = os.isatty(fd)
    finally:
        os.close(fd)
    if not interactive:
        raise ValueError("%s is a device, not a data file" % os.fspath(path))


def _open_path(path, mode, encoding):
    path = os.fspath(path)
    if mode == "r":
        refuse_device(path)
    lower = path.lower()
    text_mode = mode + "t"
    if lower.endswith(".gz"):
        return gzip.open(path, text_mode, encoding=encoding, newline=None if mode == "r" else "")
    if lower.endswith(".bz2"):
        return bz2.open(path, text_mode, encoding=encoding, newline=None if mode == "r" else "")
    return open(path, text_mode, encoding=encoding, newline=None if mode == "r" else "")


@contextlib.contextmanager
def _atomic_text(path, encoding):
    """A text stream writing to ``path`` through :func:`~linclass._atomic.atomic_output`
    (compressed for ``.gz`` / ``.bz2``): ``path`` is replaced only once the
    whole text is written, and left as it was when writing fails."""
    lower = os.fspath(path).lower()
    with atomic_output(path, "wb") as raw:
        if lower.endswith(".gz"):
            packed = gzip.GzipFile(fileobj=raw, mode="wb")
        elif lower.endswith(".bz2"):
            packed = bz2.BZ2File(raw, "wb")
        else:
            packed = None
        stream = io.TextIOWrapper(packed if packed is not None else raw,
                                  encoding=encoding, newline="")
        yield stream
        stream.flush()
        stream.detach()
        if packed is not None:
            packed.close()          # writes the trailer; ``raw`` stays open


@contextlib.contextmanager
def open_text(f, mode="r", *, encoding="utf-8"):
    """Open ``f`` as a text stream.

    Parameters
    ----------
    f : str, os.PathLike or file object
        A path (``.gz`` / ``.bz2`` decompressed or compressed transparently)
        or an open file object, text or binary.  A file object is not closed
        on exit; a path opened here is.  A path opened for writing is
        written atomically (a temporary file beside it, renamed over it only
        when the ``with`` block completes without an exception).
    mode : {"r", "w"}
    encoding : str
        Used for paths and binary streams.

    Yields
    ------
    stream : text stream
        Reading uses universal newlines (``\\r\\n`` becomes ``\\n``); writing
        writes ``\\n`` unchanged.
    """
    if mode not in ("r", "w"):
        raise ValueError("mode must be 'r' or 'w', got %r" % (mode,))
    if isinstance(f, (str, os.PathLike)) and mode == "w":
        with _atomic_text(f, encoding) as stream:
            yield stream
        return
    if isinstance(f, (str, os.PathLike)):
        stream = _open_path(f, mode, encoding)
        try:
            yield stream
        finally:
            stream.close()
        return
    if not (hasattr(f, "read") or hasattr(f, "write")):
        raise TypeError("expected a path or a file object, got %s" % type(f).__name__)
    if isinstance(f, io.TextIOBase):
        yield f
        return
    # A binary stream (or anything without a text layer): wrap it without
    # taking ownership, so that closing the wrapper does not close ``f``.
    probe = f.read(0) if mode == "r" else None
    if isinstance(probe, str):
        yield f
        return
    wrapper = io.TextIOWrapper(f, encoding=encoding, newline=None if mode == "r" else "")
    try:
        yield wrapper
    finally:
        if mode == "w":
            wrapper.flush()
        wrapper.detach()


def _undecodable_line(f, encoding):
    """Line number (1-based) of the first byte of the path ``f`` that does not
    decode as ``encoding``: the text reader decodes in chunks, so its error
    offset is not a position in the file.  None for file objects (they cannot
    be read again) or when the file cannot be re-read."""
    if not isinstance(f, (str, os.PathLike)):
        return None
    try:
        with _open_path(f, "r", "latin-1") as stream:      # one char per byte, never fails
            raw = stream.read().encode("latin-1")
        raw.decode(encoding)
    except UnicodeDecodeError as err:
        return raw.count(b"\n", 0, err.start) + 1
    except (OSError, EOFError, ValueError):
        return None
    return None


def read_text(f, *, encoding="utf-8"):
    """Read the whole of ``f`` as one string (newlines normalised to ``\\n``).

    A leading byte order mark (U+FEFF, as some editors write at the start
    of a UTF-8 file) is dropped.

    Returns
    -------
    text : str
    name : str
        The display name of the source for error messages.
    """
    name = source_name(f)
    if isinstance(f, (str, os.PathLike)):
        refuse_device(f)
    try:
        with open_text(f, "r", encoding=encoding) as stream:
            text = stream.read()
    except UnicodeDecodeError as err:
        from ..exceptions import DataFormatError
        line = _undecodable_line(f, encoding)
        raise DataFormatError("cannot decode the file as %s (%s)" % (encoding, err.reason),
                              name, line) from err
    except (EOFError, OSError, ValueError) as err:   # corrupt .gz / .bz2 (zlib.error is OSError-like)
        if isinstance(err, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        from ..exceptions import DataFormatError
        raise DataFormatError("cannot decompress the file (%s: %s)"
                              % (type(err).__name__, err), name) from err
    except Exception as err:
        if type(err).__module__ == "zlib":
            from ..exceptions import DataFormatError
            raise DataFormatError("cannot decompress the file (%s)" % err, name) from err
        raise
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark is not part of the first token
        text = text[1:]
    if "\r" in text:  # text streams handed in by the caller may keep \r\n
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, name


def iter_lines(f, *, encoding="utf-8"):
    """Yield ``(lineno, line)`` for each line of ``f``, 1-based, without the newline.

    Parameters
    ----------
    f : str, os.PathLike or file object
        See :func:`open_text`.
    encoding : str
    """
    text, _ = read_text(f, encoding=encoding)
    if not text:
        return
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    yield from enumerate(lines, 1)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a reader builds many small objects.

    Readers allocate millions of tuples and strings, none of them in reference
    cycles; without this the collector runs hundreds of times for nothing
    (it doubles the time to read UD English EWT).  The previous state is
    restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
