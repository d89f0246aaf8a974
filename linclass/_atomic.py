"""Writing files so that a user's file is never lost.

Every file linclass writes (``model.save``, the writers of
:mod:`linclass.datasets`, every output of the ``linclass`` command) goes through
:func:`atomic_output`: the bytes go to a temporary file in the target's
directory, which is flushed, ``fsync``-ed and renamed over the target only
once it is complete.  A failure at any point (an exception, a full disk, a
killed process) leaves the target as it was: absent, or byte-identical to
before.  :func:`refuse_overwriting_inputs` refuses an output path that names
one of the inputs, before anything is opened for writing.
"""
import contextlib
import os
import stat
import tempfile

__all__ = ["atomic_output", "refuse_overwriting_inputs", "same_file"]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def same_file(a, b):
    """True when paths ``a`` and ``b`` name the same file (same inode when both
    exist, else the same absolute, symlink-resolved path)."""
    a, b = os.fspath(a), os.fspath(b)
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwriting_inputs(output, inputs, *, what="output"):
    """Raise ``ValueError`` when ``output`` names the same file as any of
    ``inputs`` (paths; ``None``, ``"-"`` and file objects are skipped)."""
    if not isinstance(output, (str, os.PathLike)) or os.fspath(output) == "-":
        return
    for given in inputs:
        if not isinstance(given, (str, os.PathLike)) or os.fspath(given) == "-":
            continue
        if same_file(output, given):
            raise ValueError("the %s %s is also an input; refusing to overwrite it "
                             "(choose another %s path)" % (what, os.fspath(output), what))


@contextlib.contextmanager
def atomic_output(path, mode="wb", *, encoding=None, newline=None):
    """Open a temporary file beside ``path`` for writing; on a clean exit it
    is flushed, fsynced and renamed over ``path``; on an exception it is
    removed and ``path`` is untouched.

    ``mode`` is ``"wb"`` or ``"w"`` (text, with ``encoding`` and ``newline``).
    The new file keeps the permission bits of the file it replaces (or the
    usual ``0o666 & ~umask`` for a new file).  A ``path`` that exists and is not
    a regular file (a directory, a FIFO, a device) is refused.
    """
    if mode not in ("wb", "w"):
        raise ValueError("mode must be 'wb' or 'w', got %r" % (mode,))
    path = os.fspath(path)
    if not path or path.endswith(tuple(s for s in (os.sep, os.altsep) if s)):
        raise ValueError("output path %r names a directory, not a file" % (path,))
    target = os.path.realpath(path)     # write beside the file a symlink points to
    try:
        st = os.stat(target)
    except FileNotFoundError:
        perms = 0o666 & ~_umask()
    else:
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("%s exists and is not a regular file; refusing to write "
                             "over it" % path)
        perms = stat.S_IMODE(st.st_mode)
    directory = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                               suffix=".tmp", dir=directory)
    try:
        if mode == "w":
            fh = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        else:
            fh = os.fdopen(fd, "wb")
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, perms)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory):
    """Make the rename durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
