"""``check_array(accept_unsorted=True)``: unsorted CSR rows without duplicates
are kept as they are (no copy), duplicates are still summed, the default is
unchanged; LinearSVC (dual CD, Newton finish, Pegasos), SGDClassifier, the
Perceptron and the least-squares classifiers (ridge, lasso, plain), which opt in, fit unsorted input to the model of the sorted input
(the only difference is the summation order inside a row's dot products)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linclass._core._checks import csr_has_duplicates
from linclass._validation import check_array, check_classification_data
from linclass.linear.least_squares import (LassoClassifier, LeastSquaresClassifier,
                                           RidgeClassifier)
from linclass.linear.perceptron import Perceptron
from linclass.linear.sgd import SGDClassifier
from linclass.linear.svm import LinearSVC, svm_primal_objective


def _shuffled_rows(X, seed=0):
    """The same CSR matrix with every row's entries stored in a random order."""
    X = sp.csr_matrix(X)
    X.sort_indices()
    rng = np.random.default_rng(seed)
    data, indices = X.data.copy(), X.indices.copy()
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        perm = rng.permutation(b - a) + a
        data[a:b], indices[a:b] = data[perm], indices[perm]
    out = sp.csr_matrix((data, indices, X.indptr.copy()), shape=X.shape)
    assert not out.has_sorted_indices
    return out


def _problem(n=200, d=30, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    y = rng.integers(0, k, n)
    X = centers[y] + rng.normal(size=(n, d))
    X[rng.random(X.shape) > 0.3] = 0.0
    return X, y


def test_duplicate_marker_check_against_brute_force():
    rng = np.random.default_rng(1)
    for trial in range(50):
        n, d = rng.integers(1, 6), rng.integers(1, 6)
        counts = rng.integers(0, 5, n)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        indices = rng.integers(0, d, indptr[-1]).astype(np.int32)
        expected = any(len(set(indices[indptr[i]:indptr[i + 1]]))
                       < indptr[i + 1] - indptr[i] for i in range(n))
        assert csr_has_duplicates(indptr, indices, n, d) == expected


def test_accept_unsorted_keeps_rows_and_sums_duplicates():
    X, _ = _problem()
    U = _shuffled_rows(X)
    kept = check_array(U, accept_unsorted=True)
    assert np.shares_memory(kept.data, U.data)            # no copy
    assert not kept.has_sorted_indices
    np.testing.assert_array_equal(kept.toarray(), X)
    default = check_array(U)                               # default: copied and sorted
    assert default.has_sorted_indices and not np.shares_memory(default.data, U.data)
    np.testing.assert_array_equal(default.toarray(), X)
    # duplicates (unsorted) are summed even with the opt-in
    D = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 5.0]), np.array([2, 0, 2, 1]),
                       np.array([0, 3, 4])), shape=(2, 3))
    for accept in (False, True):
        C = check_array(D, accept_unsorted=accept)
        assert C.has_canonical_format
        np.testing.assert_array_equal(C.toarray(), [[2.0, 0.0, 4.0], [0.0, 5.0, 0.0]])
    # the caller's matrix is untouched
    assert list(D.indices) == [2, 0, 2, 1]
    X2, *_ = check_classification_data(U, np.arange(U.shape[0]) % 2, accept_unsorted=True)
    assert np.shares_memory(X2.data, U.data)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_linear_svc_unsorted_equals_sorted(loss):
    X, y = _problem()
    S, U = sp.csr_matrix(X), _shuffled_rows(X)
    a = LinearSVC(loss=loss, tol=1e-6, max_iter=5000, random_state=0).fit(S, y)
    b = LinearSVC(loss=loss, tol=1e-6, max_iter=5000, random_state=0).fit(U, y)
    np.testing.assert_allclose(a.dual_objective_, b.dual_objective_, rtol=1e-9)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(a.predict(X), b.predict(U))


def test_linear_svc_newton_finish_and_pegasos_on_unsorted_rows():
    X, y = _problem(seed=3)
    yb = (y == 0).astype(int)
    U = _shuffled_rows(X)
    cost = np.full(X.shape[0], 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = LinearSVC(C=10.0, tol=1e-8, max_iter=400, random_state=0).fit(X, yb)
        b = LinearSVC(C=10.0, tol=1e-8, max_iter=400, random_state=0).fit(U, yb)
    s = np.where(yb == 1, 1.0, -1.0)
    fa = svm_primal_objective(X, s, np.append(a.coef_[0], a.intercept_[0]), 1.0, cost,
                              "squared_hinge")
    fb = svm_primal_objective(X, s, np.append(b.coef_[0], b.intercept_[0]), 1.0, cost,
                              "squared_hinge")
    assert abs(fa - fb) <= 1e-8 * fa
    pa = LinearSVC(solver="pegasos", max_iter=5, random_state=0).fit(X, yb)
    pb = LinearSVC(solver="pegasos", max_iter=5, random_state=0).fit(U, yb)
    np.testing.assert_allclose(pb.coef_, pa.coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("params", [dict(loss="hinge"), dict(loss="logistic", average=True),
                                    dict(loss="hinge", penalty="elasticnet")])
@pytest.mark.parametrize("binary", [False, True])
def test_sgd_unsorted_equals_sorted(params, binary):
    X, y = _problem()
    if binary:
        y = (y == 0).astype(int)
    U = _shuffled_rows(X)
    kw = dict(alpha=1e-3, max_iter=5, tol=None, random_state=0, **params)
    a = SGDClassifier(**kw).fit(sp.csr_matrix(X), y)
    b = SGDClassifier(**kw).fit(U, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-7, atol=1e-9)
    c = SGDClassifier(**kw).partial_fit(U, y, classes=np.unique(y))
    d = SGDClassifier(**kw).partial_fit(sp.csr_matrix(X), y, classes=np.unique(y))
    np.testing.assert_allclose(c.coef_, d.coef_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("average", [False, True])
def test_perceptron_unsorted_equals_sorted(average):
    X, y = _problem()
    U = _shuffled_rows(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Perceptron(average=average, max_iter=5, random_state=0).fit(sp.csr_matrix(X), y)
        b = Perceptron(average=average, max_iter=5, random_state=0).fit(U, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(a.predict(X), b.predict(U))


@pytest.mark.parametrize("model", [
    RidgeClassifier(alpha=1.0, tol=1e-10),                       # kernel-side CG (n < d)
    RidgeClassifier(alpha=1.0, solver="cg", tol=1e-10),
    RidgeClassifier(alpha=1.0, solver="cholesky"),
    LassoClassifier(alpha=1e-3, tol=1e-10, precompute=False),    # naive CD on the columns
    LassoClassifier(alpha=1e-3, tol=1e-10, precompute=True),     # sparse Gram matrix
    LeastSquaresClassifier(),
])
@pytest.mark.parametrize("wide", [False, True])
def test_least_squares_classifiers_unsorted_equal_sorted(model, wide):
    from sklearn.base import clone
    X, y = _problem(n=60 if wide else 200, d=90 if wide else 30)
    S = sp.csr_matrix(X)
    U = _shuffled_rows(X, seed=4)
    sorted_fit = clone(model).fit(S, y)
    unsorted_fit = clone(model).fit(U, y)
    np.testing.assert_allclose(unsorted_fit.coef_, sorted_fit.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(unsorted_fit.intercept_, sorted_fit.intercept_, rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_array_equal(unsorted_fit.predict(U), sorted_fit.predict(S))
