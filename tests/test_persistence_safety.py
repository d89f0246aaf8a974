"""``save`` never loses the previous file; ``load`` trusts nothing in a file.

* a save that fails (an unsavable model, a full disk, a killed process)
  leaves the previous file byte-identical and no temporary file behind;
* ``load`` reads only regular files within the size limit (a FIFO without a
  writer or ``/dev/zero`` is refused at once), from a path or a binary file
  object, and no entry of a file can switch off the state checks (the digest
  is recomputable: it detects damage, not tampering);
* another format version raises, another linclass version warns naming both.
"""
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import linclass
from linclass import ModelFormatError, persistence
from linclass.persistence import ModelVersionWarning


# children run Python from here, not from the repository root, whose unbuilt
# linclass/ would shadow the installed package
_OUTSIDE_SOURCE = os.path.dirname(os.path.abspath(__file__))

def _fitted(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(40, 3)
    y = (X[:, 0] + 0.1 * rng.randn(40) > 0).astype(int)
    return linclass.LogisticRegression().fit(X, y), X


def _contents(path):
    with np.load(path, allow_pickle=False) as npz:
        contents = {k: npz[k] for k in npz.files}
    meta = json.loads(contents.pop("__linclass_meta__").tobytes())
    contents.pop("__linclass_digest__")
    return meta, contents


def _set_state_entry(meta, key, value):
    entries = meta["state"]["__dict__"]             # [[key, value], ...]
    entries[:] = [kv for kv in entries if kv[0] != key] + [[key, value]]


def _write_with_valid_digest(path, meta, contents):
    """What an adversary can do: edit the file and recompute the unkeyed digest."""
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    digest = persistence._digest(meta_bytes, contents)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __linclass_meta__=np.frombuffer(meta_bytes, dtype=np.uint8),
                            __linclass_digest__=np.frombuffer(digest.encode(), dtype=np.uint8),
                            **contents)


def _no_temporaries(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------ save --
def test_failed_save_leaves_the_previous_file_identical(tmp_path):
    model, _ = _fitted()
    path = tmp_path / "model.npz"
    model.save(path)
    before = path.read_bytes()
    model.bad_ = object()                      # not encodable: the save fails
    with pytest.raises(ModelFormatError, match="bad_"):
        model.save(path)
    assert path.read_bytes() == before
    assert _no_temporaries(tmp_path) == []


def test_full_disk_during_save_leaves_the_previous_file_identical(tmp_path, monkeypatch):
    model, X = _fitted()
    path = tmp_path / "model.npz"
    model.save(path)
    before = path.read_bytes()
    real = np.savez_compressed

    def half_then_full(fh, **arrays):
        fh.write(b"PK\x03\x04 half a zip")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(persistence.np, "savez_compressed", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        _fitted(seed=1)[0].save(path)
    monkeypatch.setattr(persistence.np, "savez_compressed", real)
    assert path.read_bytes() == before
    assert _no_temporaries(tmp_path) == []
    np.testing.assert_array_equal(linclass.load(path).predict(X), model.predict(X))


def test_process_killed_in_the_middle_of_save_leaves_the_old_model(tmp_path):
    model, X = _fitted()
    path = tmp_path / "model.npz"
    model.save(path)
    before = path.read_bytes()
    # the child writes a different model and is killed after the new bytes
    # are written but before the rename (it waits inside fsync)
    child = textwrap.dedent("""
        import os, sys, time
        import numpy as np
        import linclass
        rng = np.random.RandomState(5)
        X = rng.randn(200, 30); y = (X[:, 1] > 0).astype(int)
        model = linclass.LogisticRegression().fit(X, y)
        real_fsync = os.fsync
        def stall(fd):
            real_fsync(fd)
            print("writing", flush=True)
            time.sleep(120)
        os.fsync = stall
        model.save(sys.argv[1])
    """)
    proc = subprocess.Popen([sys.executable, "-c", child, str(path)], stdout=subprocess.PIPE,
                            text=True,
                            cwd=_OUTSIDE_SOURCE)
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert len(_no_temporaries(tmp_path)) == 1          # the half-done save
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert path.read_bytes() == before
    np.testing.assert_array_equal(linclass.load(path).predict(X), model.predict(X))


def test_save_keeps_permissions_and_writes_through_a_symlink(tmp_path):
    model, X = _fitted()
    target = tmp_path / "real.npz"
    model.save(target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    _fitted(seed=2)[0].save(link)
    assert link.is_symlink() and (os.stat(target).st_mode & 0o777) == 0o640
    assert linclass.load(link).coef_.tolist() == linclass.load(target).coef_.tolist()
    assert linclass.load(target).coef_.tolist() != model.coef_.tolist()


def test_save_refuses_to_replace_a_directory(tmp_path):
    model, _ = _fitted()
    (tmp_path / "d.npz").mkdir()
    with pytest.raises((ValueError, OSError)):
        model.save(tmp_path / "d.npz")
    assert (tmp_path / "d.npz").is_dir() and _no_temporaries(tmp_path) == []


# ------------------------------------------------------------------ load --
def test_load_from_a_binary_file_object_and_bytes_io(tmp_path):
    model, X = _fitted()
    path = model.save(tmp_path / "m.npz")
    with open(path, "rb") as fh:
        from_file = linclass.load(fh)
        assert not fh.closed
    buffer = io.BytesIO(open(path, "rb").read())
    for other in (from_file, linclass.load(buffer)):
        np.testing.assert_array_equal(other.predict_proba(X), model.predict_proba(X))
    with pytest.raises(TypeError, match="binary"):
        linclass.load(io.StringIO("text"))
    with pytest.raises(TypeError, match="path or a binary file object"):
        linclass.load(42)


def test_load_refuses_endless_streams_and_devices_without_blocking(tmp_path):
    """A FIFO with no writer would block ``open`` forever; /dev/zero never ends."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code = textwrap.dedent("""
        import sys, linclass
        for source in sys.argv[1:]:
            try:
                linclass.load(source)
            except linclass.ModelFormatError as exc:
                print("refused", "not a regular file" in str(exc))
    """)
    out = subprocess.run([sys.executable, "-c", code, str(fifo), "/dev/zero"],
                         capture_output=True, text=True, timeout=60,
                         cwd=_OUTSIDE_SOURCE)
    assert out.stdout.split("\n")[:2] == ["refused True", "refused True"], out.stderr


def test_load_refuses_a_file_larger_than_the_limit_before_reading(tmp_path):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    with open(path, "ab") as fh:               # too large for any model within max_bytes
        fh.write(b"\0" * (persistence.MAX_META_BYTES + 2 ** 20 + 4096))
    with pytest.raises(ModelFormatError, match="larger than any model within max_bytes"):
        linclass.load(path, max_bytes=1024)
    stream = io.BytesIO(open(path, "rb").read())
    with pytest.raises(ModelFormatError, match="larger than any model"):
        linclass.load(stream, max_bytes=1024)


@pytest.mark.parametrize("entry", ["_check_state", "_check_params", "predict", "__class__",
                                   "_coef_is_per_feature", "save", "_set_state"])
def test_no_file_entry_can_replace_class_code_or_switch_off_checks(tmp_path, entry):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    _set_state_entry(meta, entry, None)
    _write_with_valid_digest(path, meta, contents)
    with pytest.raises(ModelFormatError, match="not a fitted attribute"):
        linclass.load(path)


def test_inconsistent_state_with_a_valid_digest_is_refused(tmp_path):
    """The digest is recomputable; the state check is what refuses the file."""
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    _set_state_entry(meta, "n_features_in_", 7)         # coef_ has 3 columns
    _write_with_valid_digest(path, meta, contents)
    with pytest.raises(ModelFormatError, match="n_features_in_"):
        linclass.load(path)


def test_damaged_file_fails_the_digest(tmp_path):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    contents["a0"] = contents["a0"] + 1e-9                # a flipped bit, say
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __linclass_meta__=np.frombuffer(meta_bytes, dtype=np.uint8),
                            __linclass_digest__=np.frombuffer(
                                persistence._digest(meta_bytes, _contents(
                                    model.save(tmp_path / "n.npz"))[1]).encode(), np.uint8),
                            **contents)
    with pytest.raises(ModelFormatError, match="checksum"):
        linclass.load(path)


def test_other_linclass_version_warns_naming_both(tmp_path):
    model, X = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    meta["linclass_version"] = "0.0.7"
    _write_with_valid_digest(path, meta, contents)
    with pytest.warns(ModelVersionWarning, match=r"linclass 0\.0\.7.*linclass %s"
                      % linclass.__version__.replace(".", r"\.")):
        loaded = linclass.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert issubclass(ModelVersionWarning, UserWarning)


@pytest.mark.parametrize("version", [0, 2])
def test_other_format_version_raises(tmp_path, version):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    meta["format_version"] = version
    _write_with_valid_digest(path, meta, contents)
    with pytest.raises(ModelFormatError, match="format version %d" % version):
        linclass.load(path)


def test_pickle_from_another_version_warns():
    import pickle
    model, _ = _fitted()
    state = model.__getstate__()
    state["_linclass_version"] = "0.0.7"
    clone = linclass.LogisticRegression.__new__(linclass.LogisticRegression)
    with pytest.warns(ModelVersionWarning, match="0.0.7"):
        clone.__setstate__(state)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        pickle.loads(pickle.dumps(model))      # same version: no warning


def test_model_file_is_a_plain_zip_of_npy(tmp_path):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    with zipfile.ZipFile(path) as zf:
        assert all(n.endswith(".npy") for n in zf.namelist())


def test_tagged_values_with_extra_keys_are_refused(tmp_path):
    model, _ = _fitted()
    path = model.save(tmp_path / "m.npz")
    meta, contents = _contents(path)
    meta["state"]["extra"] = {"__array__": "a0"}
    _write_with_valid_digest(path, meta, contents)
    with pytest.raises(ModelFormatError, match="unexpected tagged value"):
        linclass.load(path)


def test_atomic_output_refuses_a_path_ending_in_a_separator(tmp_path):
    from linclass._atomic import atomic_output
    f = tmp_path / "f"
    f.write_bytes(b"keep")
    for bad in (str(f) + os.sep, ""):
        with pytest.raises(ValueError):
            with atomic_output(bad, "wb") as fh:
                fh.write(b"x")
    assert f.read_bytes() == b"keep"
