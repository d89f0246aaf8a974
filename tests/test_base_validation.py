"""Estimator base (get/set_params, clone compatibility) and the validation contract."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass import NotFittedError
from linclass import _validation as V
from linclass.base import BaseEstimator, ClassifierMixin


class Toy(ClassifierMixin, BaseEstimator):
    def __init__(self, C=1.0, inner=None, classes=None):
        self.C = C
        self.inner = inner
        self.classes = classes

    def fit(self, X, y):
        X, y = V.check_X_y(X, y)
        self.classes_, codes = V.encode_labels(y)
        self.n_features_in_ = X.shape[1]
        self.majority_ = int(np.bincount(codes).argmax())
        return self

    def predict(self, X):
        V.check_is_fitted(self)
        X = V.check_array(X)
        V.check_n_features(X, self.n_features_in_, owner=self)
        return np.full(X.shape[0], self.classes_[self.majority_])


def test_get_set_params_nested_and_repr():
    est = Toy(C=2.0, inner=Toy(C=3.0))
    params = est.get_params()
    assert params["C"] == 2.0 and params["inner__C"] == 3.0
    est.set_params(C=5.0, inner__C=7.0)
    assert est.C == 5.0 and est.inner.C == 7.0
    assert repr(Toy()) == "Toy()"
    assert repr(Toy(C=2.0)) == "Toy(C=2.0)"
    with pytest.raises(ValueError, match="invalid parameter 'D'"):
        est.set_params(D=1)


def test_sklearn_clone_and_score():
    base = pytest.importorskip("sklearn.base")
    est = Toy(C=2.0).fit([[0.0], [1.0], [2.0]], ["a", "b", "b"])
    cloned = base.clone(est)
    assert cloned.C == 2.0 and not hasattr(cloned, "classes_")
    assert est.score([[0.0], [1.0]], ["b", "a"]) == 0.5
    assert base.is_classifier(est)


def test_not_fitted_and_pickle():
    with pytest.raises(NotFittedError, match="not fitted"):
        Toy().predict([[1.0]])
    est = Toy().fit([[0.0], [1.0]], [1, 1])
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict([[3.0]]), [1])


def test_check_array_dense_contract():
    X = V.check_array([[1, 2], [3, 4]])
    assert X.dtype == np.float64 and X.flags.c_contiguous
    F = np.asfortranarray(np.ones((3, 2)))
    assert V.check_array(F).flags.c_contiguous
    with pytest.raises(ValueError, match="NaN"):
        V.check_array([[1.0, np.nan]])
    with pytest.raises(ValueError, match="infinity"):
        V.check_array([[1.0, np.inf]])
    with pytest.raises(ValueError, match="2-D"):
        V.check_array([1.0, 2.0])
    with pytest.raises(ValueError, match="0 samples"):
        V.check_array(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="0 features"):
        V.check_array(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="non-numeric"):
        V.check_array([["a", "b"]])
    with pytest.raises(TypeError):
        V.check_array("abc")
    with pytest.raises(TypeError, match="dense"):
        V.check_array(sp.eye(3), accept_sparse=False)


def test_check_array_sparse_contract_does_not_touch_input():
    rows, cols = np.array([0, 0, 1, 0]), np.array([2, 0, 1, 2])
    coo = sp.coo_matrix((np.array([1.0, 2.0, 3.0, 4.0]), (rows, cols)), shape=(2, 3))
    X = V.check_array(coo)
    assert isinstance(X, sp.csr_matrix)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert X.has_canonical_format
    np.testing.assert_array_equal(X.toarray(), coo.toarray())
    user = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    user.indices = user.indices.astype(np.int64)
    user.indptr = user.indptr.astype(np.int64)
    out = V.check_array(user)
    assert user.indices.dtype == np.int64 and out.indices.dtype == np.int32
    bad = sp.csr_matrix(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN"):
        V.check_array(bad)


def test_targets_labels_weights():
    with pytest.raises(ValueError, match="3 labels but X has 2"):
        V.check_X_y([[1.0], [2.0]], [0, 1, 1])
    classes, codes = V.encode_labels(["b", "a", "b"])
    assert list(classes) == ["a", "b"] and list(codes) == [1, 0, 1]
    assert codes.dtype == np.int32
    with pytest.raises(ValueError, match="'c' was not seen"):
        V.encode_labels(["a", "c"], classes=classes)
    np.testing.assert_array_equal(V.check_sample_weight(None, 3), np.ones(3))
    with pytest.raises(ValueError, match="negative"):
        V.check_sample_weight([1, -1], 2)
    with pytest.raises(ValueError, match="shape"):
        V.check_sample_weight([1, 1, 1], 2)
    with pytest.raises(ValueError, match="lengths sum to 3"):
        V.check_lengths([1, 2], 4)
    with pytest.raises(ValueError, match="C must be > 0"):
        V.check_positive(0.0, "C")
    with pytest.raises(ValueError):
        V.check_positive(float("nan"), "C")
    with pytest.raises(ValueError, match="features, but Toy is expecting"):
        Toy().fit([[0.0], [1.0]], [0, 1]).predict([[1.0, 2.0]])


def test_draw_seed_reproducible():
    assert V.draw_seed(3) == V.draw_seed(3)
    assert V.draw_seed(np.random.RandomState(0)) >= 0
    with pytest.raises(ValueError, match="random_state"):
        V.draw_seed("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        V.draw_seed(None)
