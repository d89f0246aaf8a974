"""LinearSVC(penalty="l1"): the kernel folds sqrt(C_i) into the columns and the
slacks once (no per-entry cost in the passes); samples of weight zero must then
drop out exactly, and per-sample costs must act as repeated samples."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.svm import LinearSVC, l1_svm_objective

TIGHT = dict(penalty="l1", dual=False, tol=1e-8, max_iter=5000, random_state=0)


def _data(sparse, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 9)) * (rng.random((120, 9)) < 0.6)
    y = np.where(X @ rng.normal(size=9) + 0.3 * rng.normal(size=120) > 0, 1, 0)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("sparse", [True, False])
def test_zero_weights_drop_samples_exactly(sparse):
    X, y = _data(sparse)
    sw = np.ones(X.shape[0])
    sw[::4] = 0.0
    keep = sw > 0
    weighted = LinearSVC(C=0.7, **TIGHT).fit(X, y, sample_weight=sw)
    subset = LinearSVC(C=0.7, **TIGHT).fit(X[keep], y[keep])
    np.testing.assert_allclose(weighted.coef_, subset.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(weighted.objective_, subset.objective_, rtol=1e-9)


@pytest.mark.parametrize("sparse", [True, False])
def test_integer_weights_equal_repeated_samples(sparse):
    X, y = _data(sparse, seed=1)
    sw = np.random.default_rng(2).integers(1, 4, X.shape[0]).astype(float)
    reps = sw.astype(int)
    idx = np.repeat(np.arange(X.shape[0]), reps)
    weighted = LinearSVC(C=0.3, **TIGHT).fit(X, y, sample_weight=sw)
    repeated = LinearSVC(C=0.3, **TIGHT).fit(X[idx], y[idx])
    np.testing.assert_allclose(weighted.objective_, repeated.objective_, rtol=1e-7)
    ysign = np.where(y == 1, 1.0, -1.0)
    w = np.append(weighted.coef_[0], weighted.intercept_[0])
    # objective_ is the primal objective with the weighted costs, recomputed in numpy
    assert abs(l1_svm_objective(X, ysign, w, 1.0, 0.3 * sw) - weighted.objective_[0]) \
        <= 1e-9 * weighted.objective_[0]
