"""Margin-based linear classifiers against references: brute force, KKT
conditions, LIBLINEAR (through scikit-learn and liblinear-official), a generic
QP solver (scipy) and scikit-learn's ridge/lasso."""
import ctypes
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from linclass.exceptions import ConvergenceWarning, NotFittedError
from linclass.linear.least_squares import LassoClassifier, LeastSquaresClassifier, RidgeClassifier
from linclass.linear.multiclass import (CrammerSingerSVC, OneVsOneClassifier,
                                         OneVsRestClassifier, WestonWatkinsSVC,
                                         crammer_singer_dual_objective,
                                         weston_watkins_primal_objective)
from linclass.linear.perceptron import Perceptron
from linclass.linear.svm import LinearSVC, svm_primal_objective


def _blobs(n=120, d=6, k=3, seed=0, spread=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=4.0, size=(k, d))
    y = np.arange(n) % k
    X = centers[y] + spread * rng.normal(size=(n, d))
    return X, y


def _separable(n=60, d=5, seed=1):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n * 3, d))
    m = X @ w
    keep = np.abs(m) > 0.5                       # margin
    return X[keep][:n], (m[keep][:n] > 0).astype(int)


# ------------------------------------------------------------ perceptron --

@pytest.mark.parametrize("mode", ["sequential", "batch"])
@pytest.mark.parametrize("sparse", [False, True])
def test_perceptron_converges_and_stops_on_separable_data(mode, sparse):
    X, y = _separable()
    Xi = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = Perceptron(mode=mode, max_iter=1000, random_state=0).fit(Xi, y)
    assert model.score(Xi, y) == 1.0
    assert model.n_iter_ < 1000
    assert model.mistakes_per_epoch_[-1] == 0 and (model.mistakes_per_epoch_[:-1] > 0).all()


def test_perceptron_multiclass_separable_stops():
    X, y = _blobs(spread=0.3)
    model = Perceptron(max_iter=500, random_state=0).fit(X, y)
    assert model.score(X, y) == 1.0 and model.coef_.shape == (3, X.shape[1])


def _naive_perceptron_iterates(X, y, n_classes, order, eta=1.0):
    """Textbook perceptron in Python, returning every post-example iterate."""
    n_vec = 1 if n_classes == 2 else n_classes
    W = np.zeros((n_vec, X.shape[1] + 1))
    iterates = []
    for i in order:
        x = np.append(X[i], 1.0)
        if n_vec == 1:
            s = 1.0 if y[i] == 1 else -1.0
            if s * (W[0] @ x) <= 0:
                W[0] += eta * s * x
        else:
            scores = W @ x
            rival = max((m for m in range(n_vec) if m != y[i]), key=lambda m: (scores[m], -m))
            if scores[rival] >= scores[y[i]]:
                W[y[i]] += eta * x
                W[rival] -= eta * x
        iterates.append(W.copy())
    return iterates


@pytest.mark.parametrize("n_classes", [2, 3])
def test_averaged_perceptron_equals_naive_mean_of_iterates(n_classes):
    X, y = _blobs(n=9, d=3, k=n_classes, seed=3, spread=3.0)
    model = Perceptron(average=True, shuffle=False, max_iter=2).fit(X, y)
    iterates = _naive_perceptron_iterates(X, y, n_classes, list(range(9)) * model.n_iter_)
    mean = np.mean(iterates, axis=0)
    np.testing.assert_allclose(model.coef_, mean[:, :-1], atol=1e-12)
    np.testing.assert_allclose(model.intercept_, mean[:, -1], atol=1e-12)
    plain = Perceptron(shuffle=False, max_iter=model.n_iter_).fit(X, y)
    np.testing.assert_allclose(plain.coef_, iterates[-1][:, :-1], atol=1e-12)


def test_partial_fit_matches_fit_epochs_and_voted_vote():
    X, y = _blobs(n=30, d=4, k=3, seed=5, spread=2.5)
    a = Perceptron(average=True, shuffle=False, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a.fit(X, y)
    b = Perceptron(average=True, shuffle=False)
    for _ in range(a.n_iter_):
        b.partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(a.coef_, b.coef_)
    # voted: the vote of the iterates, recomputed naively
    v = Perceptron(voted=True, shuffle=False, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        v.fit(X, y)
    iterates = _naive_perceptron_iterates(X, y, 3, list(range(30)) * 2)
    votes = np.zeros((30, 3))
    for W in iterates:
        votes[np.arange(30), np.argmax(np.c_[X, np.ones(30)] @ W.T, axis=1)] += 1
    np.testing.assert_allclose(v.decision_function(X), votes / len(iterates))
    np.testing.assert_array_equal(v.predict(X), np.argmax(votes, axis=1))


# ---------------------------------------------------------------- LinearSVC --

def _kkt_violation(model, X, y, cost, loss):
    ysign = np.where(y == model.classes_[1], 1.0, -1.0)
    alpha = model.dual_coef_[0]
    margins = ysign * model.decision_function(X)
    grad = margins - 1.0 + (alpha * 0.5 / cost if loss == "squared_hinge" else 0.0)
    upper = cost if loss == "hinge" else np.inf
    pg = np.where(alpha <= 0, np.minimum(grad, 0), np.where(alpha >= upper,
                                                            np.maximum(grad, 0), grad))
    return pg.max() - pg.min()


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_svc_reaches_kkt_and_liblinear_objective(loss, sparse):
    pytest.importorskip("sklearn")
    from sklearn.svm import LinearSVC as SkLinearSVC
    X, y = _blobs(n=200, d=8, k=2, seed=2, spread=3.0)
    Xi = sp.csr_matrix(X) if sparse else X
    C, tol = 0.3, 1e-6
    model = LinearSVC(loss=loss, C=C, tol=tol, max_iter=100000, random_state=0).fit(Xi, y)
    cost = np.full(len(y), C)
    assert _kkt_violation(model, X, y, cost, loss) <= 1e-5
    peer = SkLinearSVC(loss=loss, C=C, tol=1e-10, max_iter=1000000).fit(X, y)
    ysign = np.where(y == 1, 1.0, -1.0)
    w_ours = np.append(model.coef_[0], model.intercept_[0])
    w_peer = np.append(peer.coef_[0], peer.intercept_[0])
    primal_ours = svm_primal_objective(X, ysign, w_ours, 1.0, cost, loss)
    primal_peer = svm_primal_objective(X, ysign, w_peer, 1.0, cost, loss)
    dual_ours = -model.dual_objective_[0]
    # weak duality brackets the optimum; both sides agree to 1e-5 relative
    assert dual_ours <= primal_peer + 1e-9
    assert abs(primal_ours - primal_peer) <= 1e-5 * primal_peer
    assert abs(dual_ours - primal_peer) <= 1e-5 * primal_peer
    assert model.score(X, y) == pytest.approx(peer.score(X, y), abs=0.01)


def test_linear_svc_against_liblinear_official_objective():
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    X, y = _blobs(n=150, d=5, k=2, seed=4, spread=3.0)
    prob = liblinear.problem(np.where(y == 1, 1, -1).tolist(), sp.csr_matrix(X))
    ctypes.CDLL(None).srand(1)      # liblinear shuffles with the process-global rand()
    peer = liblinear.train(prob, "-s 1 -c 0.5 -e 1e-8 -B 1 -q")
    w_peer = np.asarray(peer.get_decfun()[0] + [peer.get_decfun()[1]])
    if peer.get_labels()[0] != 1:
        w_peer = -w_peer
    model = LinearSVC(C=0.5, tol=1e-8, max_iter=100000, random_state=0).fit(X, y)
    ysign = np.where(y == 1, 1.0, -1.0)
    p_peer = svm_primal_objective(X, ysign, w_peer, 1.0, np.full(150, 0.5), "squared_hinge")
    assert -model.dual_objective_[0] == pytest.approx(p_peer, rel=1e-6)


def test_linear_svc_weights_warm_start_and_pegasos():
    X, y = _blobs(n=150, d=5, k=3, seed=6, spread=3.0)
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    # sample_weight == duplicating rows with integer weights
    dup = np.repeat(np.arange(len(y)), 2)
    a = LinearSVC(tol=1e-9, max_iter=50000, random_state=0).fit(X, y, sample_weight=np.full(150, 2.0))
    b = LinearSVC(tol=1e-9, max_iter=50000, random_state=0).fit(X[dup], y[dup])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    # class_weight acts like sample_weight
    cw = {0: 2.0, 1: 0.5, 2: 1.0}
    c = LinearSVC(class_weight=cw, tol=1e-9, max_iter=50000, random_state=0).fit(X, y)
    d = LinearSVC(tol=1e-9, max_iter=50000, random_state=0).fit(
        X, y, sample_weight=np.array([cw[k] for k in y]))
    np.testing.assert_allclose(c.coef_, d.coef_, atol=1e-6)
    # warm start from the solution: needs a small fraction of the passes
    e = LinearSVC(tol=1e-6, max_iter=50000, random_state=0, warm_start=True).fit(X, y, sw)
    first = e.n_iter_
    e.fit(X, y, sw)
    assert e.n_iter_ * 10 < first
    # Pegasos' last iterate approaches the dual solution's objective (a
    # stochastic method: within 50% after 200 epochs on this small problem,
    # and as accurate within 5 points)
    p = LinearSVC(solver="pegasos", loss="hinge", max_iter=200, random_state=0).fit(X, y)
    q = LinearSVC(loss="hinge", tol=1e-8, max_iter=50000, random_state=0).fit(X, y)
    for k in range(3):
        ysign = np.where(y == k, 1.0, -1.0)
        ones = np.ones(150)
        f_p = svm_primal_objective(X, ysign, np.append(p.coef_[k], p.intercept_[k]), 1.0,
                                   ones, "hinge")
        f_q = svm_primal_objective(X, ysign, np.append(q.coef_[k], q.intercept_[k]), 1.0,
                                   ones, "hinge")
        assert f_q <= f_p <= 1.5 * f_q
    assert p.score(X, y) >= q.score(X, y) - 0.05


def test_linear_svc_multiclass_n_jobs_gives_the_same_model():
    X, y = _blobs(n=300, d=10, k=4, seed=7, spread=3.0)
    a = LinearSVC(random_state=3).fit(sp.csr_matrix(X), y)
    b = LinearSVC(random_state=3, n_jobs=2).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


# ---------------------------------------------------------- multi-class SVMs --

def test_crammer_singer_matches_liblinear():
    pytest.importorskip("sklearn")
    from sklearn.svm import LinearSVC as SkLinearSVC
    X, y = _blobs(n=150, d=6, k=4, seed=8, spread=3.0)
    model = CrammerSingerSVC(C=0.2, tol=1e-8, max_iter=100000, random_state=0).fit(X, y)
    peer = SkLinearSVC(multi_class="crammer_singer", C=0.2, tol=1e-10,
                       max_iter=1000000).fit(X, y)
    np.testing.assert_allclose(model.coef_, peer.coef_, atol=1e-4)
    np.testing.assert_allclose(model.intercept_, peer.intercept_, atol=1e-4)
    # dual objective = -primal at the optimum
    scores = X @ model.coef_.T + model.intercept_
    true = scores[np.arange(150), y]
    scores_wrong = scores + 1.0
    scores_wrong[np.arange(150), y] = -np.inf
    xi = np.maximum(0.0, scores_wrong.max(axis=1) - true)
    primal = 0.5 * np.sum(model.weights_ ** 2) + 0.2 * xi.sum()
    dual = crammer_singer_dual_objective(model.weights_, model.dual_coef_, y)
    assert -dual == pytest.approx(primal, rel=1e-6)


def _crammer_singer_primal(X, y, W, bias, C):
    scores = X @ W[:-1] + bias * W[-1]
    n = len(y)
    margins = scores + 1.0 - scores[np.arange(n), y][:, None]
    margins[np.arange(n), y] = 0.0
    return 0.5 * float(np.sum(W * W)) + C * float(np.maximum(margins.max(axis=1), 0.0).sum())


@pytest.mark.parametrize("sparse", [False, True])
def test_crammer_singer_shrinking_reaches_the_unshrunk_optimum(sparse):
    # many classes and well-separated blobs: most dual variables reach their
    # bounds early and leave the active sets, so the shrinking path is taken
    X, y = _blobs(n=300, d=8, k=7, seed=12, spread=2.0)
    Xs = sp.csr_matrix(X) if sparse else X
    runs = {}
    for shrinking in (True, False):
        model = CrammerSingerSVC(C=0.5, tol=1e-7, max_iter=100000, shrinking=shrinking,
                                 random_state=0).fit(Xs, y)
        runs[shrinking] = model
        # strong duality: dual objective = -primal at the optimum
        primal = _crammer_singer_primal(X, y, model.weights_, 1.0, 0.5)
        assert -model.dual_objective_ == pytest.approx(primal, rel=1e-6)
        # the dual block constraints hold
        np.testing.assert_allclose(model.dual_coef_.sum(axis=1), 0.0, atol=1e-9)
        assert np.all(model.dual_coef_[np.arange(300), y] <= 0.5 + 1e-12)
        off = np.ones_like(model.dual_coef_, dtype=bool)
        off[np.arange(300), y] = False
        assert np.all(model.dual_coef_[off] <= 1e-12)
    assert runs[True].dual_objective_ == pytest.approx(runs[False].dual_objective_, rel=1e-6)
    np.testing.assert_allclose(runs[True].coef_, runs[False].coef_, atol=1e-4)
    np.testing.assert_array_equal(runs[True].predict(Xs), runs[False].predict(Xs))


@pytest.mark.parametrize("shrinking", [True, False])
def test_crammer_singer_matches_scipy_qp_on_a_tiny_problem(shrinking):
    # the dual QP written out and solved by SLSQP: min 0.5 ||W||^2 + sum_{m != y_i} a_im
    # s.t. sum_m a_im = 0, a_im <= C [m = y_i], W = X'^T A (X' = [X, 1])
    X, y = _blobs(n=10, d=2, k=3, seed=13, spread=2.5)
    C, n, K = 0.8, 10, 3
    Xb = np.hstack([X, np.ones((n, 1))])
    off = np.ones((n, K))
    off[np.arange(n), y] = 0.0
    upper = np.zeros((n, K))
    upper[np.arange(n), y] = C

    def dual(a):
        A = a.reshape(n, K)
        W = Xb.T @ A
        return 0.5 * np.sum(W * W) + np.sum(off * A), (Xb @ W + off).ravel()

    res = scipy.optimize.minimize(
        dual, np.zeros(n * K), jac=True, method="SLSQP",
        bounds=[(None, u) for u in upper.ravel()],
        constraints=[dict(type="eq", fun=lambda a: a.reshape(n, K).sum(axis=1),
                          jac=lambda a: np.kron(np.eye(n), np.ones((1, K))))],
        options=dict(ftol=1e-14, maxiter=1000))
    assert res.success
    model = CrammerSingerSVC(C=C, tol=1e-9, max_iter=100000, shrinking=shrinking,
                             random_state=1).fit(sp.csr_matrix(X), y)
    assert model.dual_objective_ == pytest.approx(res.fun, rel=1e-6)
    np.testing.assert_allclose(model.weights_, Xb.T @ res.x.reshape(n, K), atol=1e-4)


def test_weston_watkins_matches_scipy_qp():
    X, y = _blobs(n=12, d=3, k=3, seed=9, spread=2.5)
    C = 0.7
    model = WestonWatkinsSVC(C=C, tol=1e-10, max_iter=100000, fit_intercept=False,
                             random_state=0).fit(X, y)
    n, K = 12, 3
    free = [(i, m) for i in range(n) for m in range(K) if m != y[i]]
    # dual over the free variables a_im in [0, C]; w_m = sum_i (...) x_i
    M = np.zeros((len(free), K * X.shape[1]))
    for r, (i, m) in enumerate(free):
        M[r, y[i] * 3:(y[i] + 1) * 3] += X[i]
        M[r, m * 3:(m + 1) * 3] -= X[i]

    def dual(a):
        w = M.T @ a
        return 0.5 * w @ w - a.sum(), M @ w - 1.0

    res = scipy.optimize.minimize(dual, np.zeros(len(free)), jac=True, method="L-BFGS-B",
                                  bounds=[(0, C)] * len(free),
                                  options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    w_qp = (M.T @ res.x).reshape(K, 3)
    np.testing.assert_allclose(model.coef_, w_qp, atol=1e-5)
    # and the primal QP (slack form) solved by SLSQP reaches the same objective
    primal = weston_watkins_primal_objective(X, y, model.weights_, 0.0, np.full(n, C))
    assert -model.dual_objective_ == pytest.approx(primal, rel=1e-7)
    assert res.fun == pytest.approx(model.dual_objective_, rel=1e-6)


def test_multiclass_svms_sparse_equals_dense_and_learn():
    X, y = _blobs(n=90, d=5, k=3, seed=10, spread=1.0)
    for cls in (CrammerSingerSVC, WestonWatkinsSVC):
        a = cls(random_state=0).fit(X, y)
        b = cls(random_state=0).fit(sp.csr_matrix(X), y)
        np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-12)
        assert a.score(X, y) > 0.95


def test_one_vs_rest_equals_linear_svc_and_one_vs_one_votes():
    X, y = _blobs(n=120, d=5, k=4, seed=11, spread=2.0)
    ovr = OneVsRestClassifier(LinearSVC(random_state=0), n_jobs=2).fit(X, y)
    assert ovr.score(X, y) > 0.9
    ovo = OneVsOneClassifier(LinearSVC(random_state=0), n_jobs=2).fit(X, y)
    assert len(ovo.estimators_) == 6 and ovo.score(X, y) > 0.9
    # labels that are strings survive the reduction
    names = np.array(["a", "b", "c", "d"])[y]
    assert set(OneVsOneClassifier(Perceptron(random_state=0, max_iter=5)).fit(X, names)
               .predict(X)) <= set(names)


class _FixedScore:
    """A binary 'estimator' whose score is a fixed function of x[0]."""

    def __init__(self, table=None):
        self.table = table

    def get_params(self, deep=True):
        return {"table": self.table}

    def fit(self, X, y, sample_weight=None):
        self.key_ = (int(np.min(y)), int(np.max(y)), len(y))
        return self

    def decision_function(self, X):
        return np.array([self.table[self.key_][int(row[0])] for row in X])


def test_one_vs_one_vote_ties_are_broken_deterministically():
    # 3 classes of 2 samples each; pairs (0,1), (0,2), (1,2) all have 4 rows
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 0, 1, 1, 2, 2])
    ovo = OneVsOneClassifier(_FixedScore())
    # each estimator sees y in {0, 1} and 4 rows: give them a shared table,
    # indexed by fit order through itertools.combinations
    ovo.fit(X, y)
    scores = {0: [-1.0, 3.0, -2.0],      # pair (0,1); positive votes for the second class
              1: [3.0, -1.0, 0.5],       # pair (0,2)
              2: [-1.0, 1.0, 0.5]}       # pair (1,2)
    for k, est in enumerate(ovo.estimators_):
        est.table = {est.key_: scores[k]}
    Xt = np.array([[0.0], [1.0], [2.0]])
    votes, conf = ovo._votes_and_confidence(Xt)
    # row 0: votes 0:1 (from (0,1)), 2:1 (from (0,2)), 1:1 (from (1,2)) -> 3-way tie
    np.testing.assert_array_equal(votes, [[1, 1, 1], [1, 1, 1], [1, 0, 2]])
    # ties resolved by summed confidence: row 0 conf = [-2, 0, 2] -> class 2;
    # row 1 conf = [-2, 2, 0] -> class 1
    np.testing.assert_array_equal(ovo.predict(Xt), [2, 1, 2])
    # an exact tie in confidence too goes to the smallest class index
    for est in ovo.estimators_:
        est.table = {est.key_: [0.0, 0.0, 0.0]}
    # all scores 0: every pair votes for its first class -> votes [2, 1, 0]
    np.testing.assert_array_equal(ovo.predict(Xt), [0, 0, 0])
    for k, est in enumerate(ovo.estimators_):
        est.table = {est.key_: [1.0, -1.0, 1.0] if k == 0 else [-1.0, 1.0, -1.0]
                     if k == 1 else [1.0, -1.0, 1.0]}
    # row 0: (0,1)->1, (0,2)->0, (1,2)->2: votes [1,1,1], conf [0,0,0] -> class 0
    assert ovo.predict(Xt[:1])[0] == 0


# ---------------------------------------------------------- least squares --

@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_and_lasso_match_scikit_learn(sparse):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import Lasso
    from sklearn.linear_model import RidgeClassifier as SkRidge
    X, y = _blobs(n=100, d=8, k=3, seed=12, spread=3.0)
    X[np.abs(X) < 1.0] = 0.0
    Xi = sp.csr_matrix(X) if sparse else X
    sw = np.random.default_rng(1).uniform(0.5, 2.0, size=100)
    ours = RidgeClassifier(alpha=3.0, tol=1e-10).fit(Xi, y, sample_weight=sw)
    peer = SkRidge(alpha=3.0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, peer.coef_, atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, atol=1e-7)
    Y = -np.ones((100, 3))
    Y[np.arange(100), y] = 1.0
    ref = Lasso(alpha=0.1, tol=1e-12, max_iter=100000).fit(X, Y, sample_weight=sw * 100 / sw.sum())
    for precompute in ("auto", True, False):       # dense auto: covariance (8 features)
        lasso = LassoClassifier(alpha=0.1, tol=1e-10, precompute=precompute).fit(
            Xi, y, sample_weight=sw)
        np.testing.assert_allclose(lasso.coef_, ref.coef_, atol=1e-7)
        np.testing.assert_allclose(lasso.intercept_, ref.intercept_, atol=1e-7)
        assert (lasso.coef_ == 0).any()


def test_least_squares_normal_equations_and_threshold():
    X, y = _blobs(n=80, d=4, k=2, seed=13, spread=3.0)
    model = LeastSquaresClassifier().fit(X, y)
    A = np.c_[X, np.ones(80)]
    w = np.linalg.lstsq(A, np.where(y == 1, 1.0, -1.0), rcond=None)[0]
    np.testing.assert_allclose(model.coef_[0], w[:-1], atol=1e-10)
    shifted = LeastSquaresClassifier(threshold=0.25).fit(X, y)
    np.testing.assert_allclose(shifted.decision_function(X), model.decision_function(X) - 0.25)


# ------------------------------------------------------------ bad input --

@pytest.mark.parametrize("make", [
    lambda: Perceptron(), lambda: LinearSVC(), lambda: CrammerSingerSVC(),
    lambda: WestonWatkinsSVC(), lambda: RidgeClassifier(), lambda: LassoClassifier(),
    lambda: LeastSquaresClassifier(), lambda: OneVsRestClassifier(LinearSVC()),
    lambda: OneVsOneClassifier(LinearSVC())])
def test_bad_input_raises_clear_errors(make):
    X, y = _blobs(n=30, d=3, k=3)
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make().fit(bad, y)
    with pytest.raises(ValueError, match="one class"):
        make().fit(X, np.zeros(30))
    with pytest.raises(ValueError, match="0 samples|0 sample"):
        make().fit(np.zeros((0, 3)), np.zeros(0))
    with pytest.raises(NotFittedError):
        make().predict(X)
    model = make().fit(X, y)
    with pytest.raises(ValueError, match="expecting 3 features"):
        model.predict(X[:, :2])


@pytest.mark.parametrize("model", [LinearSVC(C=0), LinearSVC(C=-1.0), CrammerSingerSVC(C=0),
                                   WestonWatkinsSVC(C=-2), RidgeClassifier(alpha=0),
                                   LinearSVC(loss="log"), Perceptron(max_iter=0)])
def test_bad_parameters(model):
    X, y = _blobs(n=30, d=3, k=3)
    with pytest.raises(ValueError):
        model.fit(X, y)


def test_max_iter_warns():
    X, y = _blobs(n=200, d=4, k=3, spread=6.0)
    for model in (Perceptron(max_iter=2), LinearSVC(max_iter=1, tol=1e-12),
                  CrammerSingerSVC(max_iter=1, tol=1e-12), WestonWatkinsSVC(max_iter=1, tol=1e-12),
                  LassoClassifier(alpha=1e-4, max_iter=1, tol=1e-12)):
        with pytest.warns(ConvergenceWarning):
            model.fit(X, y)


def test_persistence_round_trip(tmp_path):
    import linclass
    X, y = _blobs(n=60, d=4, k=3)
    for model in (Perceptron(voted=True, max_iter=3, random_state=0), LinearSVC(),
                  WestonWatkinsSVC(), OneVsOneClassifier(LinearSVC()), LassoClassifier()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        path = tmp_path / ("%s.npz" % type(model).__name__)
        model.save(path)
        loaded = linclass.load(path)
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_demo_margin_runs_and_learns(capsys):
    from linclass.demo.margin import demo_margin, make_text_like
    X1, y1 = make_text_like(n_samples=50, n_features=100, seed=3)
    X2, y2 = make_text_like(n_samples=50, n_features=100, seed=3)
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)
    results = demo_margin(quick=True)
    assert "accuracy" in capsys.readouterr().out
    assert all(acc > 0.5 for _, acc, _ in results)      # 5 classes: chance is 0.2


@pytest.mark.parametrize("cls", [CrammerSingerSVC, WestonWatkinsSVC])
def test_multiclass_svms_refuse_rows_whose_squared_norm_overflows(cls):
    X, y = _blobs(n=30, d=4, k=3, seed=14)
    for Xbad in (X * 1e300, sp.csr_matrix(X * 1e300)):
        with pytest.raises(ValueError, match="squared norms of its rows overflow"):
            cls().fit(Xbad, y)
