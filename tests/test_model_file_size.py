"""Model files hold what predicts: a linear model's file is its coefficients plus
a few KB of metadata (no per-sample dual variables), and the sequence tagger
pickles as its model file."""
import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import linclass


def _text_like(n=4000, d=3000, k=4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.01, random_state=seed, format="csr")
    y = rng.integers(0, k, n)
    X = X + sp.csr_matrix((np.ones(n), (np.arange(n), y), ), shape=(n, d))
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("make", [linclass.LinearSVC, linclass.CrammerSingerSVC,
                                  linclass.WestonWatkinsSVC, linclass.LogisticRegression])
def test_linear_model_file_is_its_coefficients_plus_metadata(make, tmp_path):
    X, y = _text_like()
    model = make().fit(X, y)
    path = model.save(tmp_path / "m.npz")
    coef_bytes = model.coef_.nbytes + model.intercept_.nbytes
    size = os.path.getsize(path)
    assert size <= max(2 * coef_bytes, coef_bytes + 4096), (size, coef_bytes)
    loaded = linclass.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert "dual_coef_" not in vars(loaded)


def test_warm_start_still_uses_the_dual_in_memory_and_restarts_after_load(tmp_path):
    X, y = _text_like(k=2)
    model = linclass.LinearSVC(warm_start=True, tol=1e-6).fit(X, y)
    assert model.dual_coef_.shape == (1, X.shape[0])          # kept in memory
    again = model.fit(X, y)
    assert again.n_iter_ <= 2                                  # warm: already optimal
    loaded = linclass.load(model.save(tmp_path / "m.npz"))
    loaded.fit(X, y)                                           # cold start, same optimum
    np.testing.assert_allclose(loaded.coef_, model.coef_, atol=1e-4)


def test_the_tagger_pickles_as_its_model_file(tmp_path):
    X = [[("the", "DT"), ("dog", "NN"), ("runs", "VBZ")], [("a", "DT"), ("cat", "NN")]] * 30
    Y = [["B-NP", "I-NP", "B-VP"], ["B-NP", "I-NP"]] * 30
    tagger = linclass.SequenceTagger(features="chunking", max_iter=3, random_state=0).fit(X, Y)
    data = pickle.dumps(tagger)
    path = tagger.save(tmp_path / "t.npz")
    assert len(data) <= os.path.getsize(path) + 200
    copy = pickle.loads(data)
    assert copy.predict(X) == tagger.predict(X)
    assert copy.get_params() == tagger.get_params()
    unfitted = pickle.loads(pickle.dumps(linclass.SequenceTagger(max_iter=7)))
    assert unfitted.max_iter == 7 and not hasattr(unfitted, "classes_")
