"""Model files name their class by public name; the allow-list is ``linclass._MODELS``."""
import json
import zipfile

import numpy as np
import pytest

import linclass
from linclass import ModelFormatError, persistence


def _rewrite_class(src, dst, new_class):
    """Copy a model file with its metadata's class replaced and the digest recomputed."""
    with np.load(src, allow_pickle=False) as npz:
        contents = {k: npz[k] for k in npz.files}
    meta = json.loads(contents.pop("__linclass_meta__").tobytes())
    contents.pop("__linclass_digest__")
    meta["class"] = new_class
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    digest = persistence._digest(meta_bytes, contents)
    with open(dst, "wb") as fh:
        np.savez_compressed(fh, __linclass_meta__=np.frombuffer(meta_bytes, dtype=np.uint8),
                            __linclass_digest__=np.frombuffer(digest.encode(), dtype=np.uint8),
                            **contents)


@pytest.fixture
def saved_svc(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    model = linclass.LinearSVC(random_state=0).fit(X, y)
    path = tmp_path / "svc.npz"
    model.save(path)
    return model, X, path


def test_saved_class_is_the_public_name(saved_svc):
    _, _, path = saved_svc
    with zipfile.ZipFile(path) as zf, zf.open("__linclass_meta__.npy") as fh:
        raw = np.lib.format.read_array(fh)
    assert json.loads(raw.tobytes())["class"] == "linclass.LinearSVC"


def test_file_from_the_flat_layout_still_loads(saved_svc, tmp_path):
    model, X, path = saved_svc
    old = tmp_path / "old.npz"
    _rewrite_class(path, old, "linclass.svm.LinearSVC")
    np.testing.assert_array_equal(linclass.load(old).predict(X), model.predict(X))


@pytest.mark.parametrize("name", ["linclass.__main__.main", "linclass.cli.main", "os.system",
                                  "linclass.base.BaseEstimator", "linclass.NoSuchModel", ""])
def test_names_outside_the_allow_list_are_refused(saved_svc, tmp_path, name):
    _, _, path = saved_svc
    bad = tmp_path / "bad.npz"
    _rewrite_class(path, bad, name)
    with pytest.raises(ModelFormatError):
        linclass.load(bad)


def test_only_public_models_can_be_saved(tmp_path):
    class MySVC(linclass.LinearSVC):
        pass
    model = MySVC().fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(ModelFormatError, match="only the public linclass models"):
        model.save(tmp_path / "mine.npz")
