"""Free-set steps of the dual coordinate descent (``subspace_every`` of
``_linear_svm.dual_cd_svc``: a few conjugate-gradient steps on the free
variables together, projected onto the box, exact line search): the optimum
is plain coordinate descent's and LIBLINEAR's, ``w`` stays the image of
``alpha``, the steps cut the passes on text-like data, they are skipped (the
same bits as without) when the free variables outnumber half the columns, the
estimator uses them for the hinge only, and bad values raise."""
import functools
import warnings

import numpy as np
import pytest

from linclass._core import _linear_svm
from linclass.linear import svm as svm_module
from linclass.linear.svm import LinearSVC, svm_dual_objective, svm_primal_objective

from .test_linear_svc_relax import _binary
from .test_linear_svc_relax import _text_like as _relax_text_like

# sparse non-negative unit-norm rows (class-specific and shared terms), here
# with many more columns than rows
_text_like = functools.partial(_relax_text_like, d=2000)


def _solve(X, ysign, loss, every, max_iter=100000, **kw):
    """Plain steps (relax 1) with a free-set step after every ``every`` passes."""
    return _binary(X, ysign, loss, 1.0, max_iter=max_iter, subspace_every=every, **kw)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("every", [1, 3, 20])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("C", [0.3, 5.0])
@pytest.mark.parametrize("dense", [False, True])
def test_free_set_steps_reach_the_optimum(loss, every, shrinking, C, dense):
    X, y = _text_like(seed=1)
    if dense:
        X = np.ascontiguousarray(X.toarray())
    ysign = np.where(y == 2, 1.0, -1.0)
    cost = np.full(len(y), C)
    w0, a0, _, _ = _solve(X, ysign, loss, 0, C=C, shrinking=shrinking)
    w, a, n_iter, viol = _solve(X, ysign, loss, every, C=C, shrinking=shrinking)
    assert viol <= 1e-9 and n_iter < 100000
    assert np.all(a >= 0.0) and (loss == "squared_hinge" or np.all(a <= C))
    # w is still sum_i alpha_i s_i [x_i, 1] after the steps moved w along u
    np.testing.assert_allclose(w[:-1], X.T @ (a * ysign), atol=1e-9)
    np.testing.assert_allclose(w[-1], np.sum(a * ysign), atol=1e-9)
    ref = svm_dual_objective(w0, a0, cost, loss)
    assert abs(svm_dual_objective(w, a, cost, loss) - ref) <= 1e-10 * abs(ref)
    np.testing.assert_allclose(w, w0, atol=1e-5)


def test_free_set_steps_match_liblinear_hinge():
    skl = pytest.importorskip("sklearn.svm")
    X, y = _text_like(seed=2)
    ysign = np.where(y == 0, 1.0, -1.0)
    w, _, _, _ = _solve(X, ysign, "hinge", 5, C=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = skl.LinearSVC(loss="hinge", C=2.0, tol=1e-9, max_iter=500000,
                             random_state=0).fit(X, ysign)
    w_peer = np.append(peer.coef_[0], peer.intercept_[0])
    cost = np.full(len(y), 2.0)
    f = svm_primal_objective(X, ysign, w, 1.0, cost, "hinge")
    g = svm_primal_objective(X, ysign, w_peer, 1.0, cost, "hinge")
    assert abs(f - g) <= 1e-6 * g


def test_free_set_steps_cut_the_hinge_passes():
    """High C (many free variables, slow coordinate descent): far fewer passes
    to the same tol, the same optimum (seeded: the counts are fixed)."""
    X, y = _text_like(n=500, d=3000, seed=3)
    ysign = np.where(y == 1, 1.0, -1.0)
    _, a0, n0, _ = _solve(X, ysign, "hinge", 0, C=20.0, tol=1e-6)
    _, a1, n1, v1 = _solve(X, ysign, "hinge", 20, C=20.0, tol=1e-6)
    assert v1 <= 1e-6
    assert n1 < 0.8 * n0


def test_skipped_when_free_variables_outnumber_half_the_columns():
    """Dense rows with 6 columns: the free set is always larger than 3.5, no
    step is taken and every bit is the same as without."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 6))
    ysign = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    for loss in ("hinge", "squared_hinge"):
        a = _solve(X, ysign, loss, 0, tol=1e-6)
        b = _solve(X, ysign, loss, 1, tol=1e-6)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]


def test_estimator_uses_free_set_steps_for_the_hinge_only(monkeypatch):
    seen = []
    original = _linear_svm.dual_cd_svc

    def spy(*args, **kwargs):
        seen.append((kwargs["loss"], kwargs["subspace_every"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(_linear_svm, "dual_cd_svc", spy)
    monkeypatch.setattr(svm_module, "_FUSED_OVR", False)
    X, y = _text_like(n=200, k=3, seed=5)
    LinearSVC(loss="hinge", random_state=0).fit(X, y)
    LinearSVC(random_state=0).fit(X, y)
    assert set(seen) == {(1, svm_module._SUBSPACE_EVERY["hinge"]), (2, 0)}
    assert svm_module._SUBSPACE_EVERY["hinge"] > 0


@pytest.mark.parametrize("every", [-1, -20])
def test_negative_subspace_every_raises(every):
    X, y = _text_like(n=40, k=2, seed=6)
    with pytest.raises(ValueError, match="subspace_every"):
        _solve(X, np.where(y == 0, 1.0, -1.0), "hinge", every)
