"""LinearSVC's scikit-learn-named parameters: penalty, dual, multi_class
(``penalty="l1"`` itself: test_linear_svc_l1.py)."""
import numpy as np
import pytest

from linclass.linear import CrammerSingerSVC, LinearSVC


def _iris_like(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 1.0], [2.0, 0.5, 0.0], [0.5, 2.0, 0.5]])
    y = rng.integers(0, 3, size=90)
    X = centres[y] + rng.normal(scale=0.8, size=(90, 3))
    return X, y


def test_crammer_singer_is_crammer_singer_svc():
    X, y = _iris_like()
    kw = dict(C=0.5, tol=1e-8, max_iter=50000, random_state=0)
    ours = LinearSVC(multi_class="crammer_singer", **kw).fit(X, y)
    joint = CrammerSingerSVC(**kw).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, joint.coef_)
    np.testing.assert_array_equal(ours.intercept_, joint.intercept_)
    np.testing.assert_array_equal(ours.predict(X), joint.predict(X))
    assert not hasattr(ours, "dual_coef_")


def test_crammer_singer_matches_scikit_learn():
    svm = pytest.importorskip("sklearn.svm")
    X, y = _iris_like(1)
    ours = LinearSVC(multi_class="crammer_singer", tol=1e-8, max_iter=100000,
                     random_state=0).fit(X, y)
    theirs = svm.LinearSVC(multi_class="crammer_singer", tol=1e-8, max_iter=100000,
                           random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-5)
    # weights equal to 1e-5: a point on a decision boundary may still fall either side
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.98


def test_dual_false_gives_the_primal_solution_of_scikit_learn():
    svm = pytest.importorskip("sklearn.svm")
    X, y = _iris_like(2)
    dual = LinearSVC(tol=1e-10, max_iter=100000, random_state=0).fit(X, y)
    primal = LinearSVC(dual=False, tol=1e-10, max_iter=100000, random_state=0).fit(X, y)
    theirs = svm.LinearSVC(dual=False, tol=1e-10, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(primal.coef_, dual.coef_, atol=1e-8)
    np.testing.assert_allclose(primal.coef_, theirs.coef_, atol=1e-5)
    np.testing.assert_allclose(primal.intercept_, theirs.intercept_, atol=1e-5)


def test_unsupported_combinations_raise_like_scikit_learn():
    X, y = _iris_like()
    with pytest.raises(ValueError, match="penalty='l1' is only supported with loss="):
        LinearSVC(penalty="l1", loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="hinge.*dual=False"):
        LinearSVC(loss="hinge", dual=False).fit(X, y)
    with pytest.raises(ValueError, match="multi_class"):
        LinearSVC(multi_class="weston").fit(X, y)
    with pytest.raises(ValueError, match="dual"):
        LinearSVC(dual="yes").fit(X, y)
    svm = pytest.importorskip("sklearn.svm")
    with pytest.raises(ValueError, match="Unsupported set of arguments"):
        svm.LinearSVC(loss="hinge", dual=False).fit(X, y)


def test_save_and_load_keeps_the_new_parameters(tmp_path):
    import linclass
    X, y = _iris_like()
    model = LinearSVC(multi_class="crammer_singer", dual=True, random_state=0).fit(X, y)
    model.save(tmp_path / "m.npz")
    loaded = linclass.load(tmp_path / "m.npz")
    assert loaded.multi_class == "crammer_singer" and loaded.dual is True
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
