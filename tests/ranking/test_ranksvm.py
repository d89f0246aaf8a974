"""RankSVM against explicit-pair references, click pairs by the skip-above rule,
bad input."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.exceptions import ConvergenceWarning, NotFittedError
from linclass.ranking import RankSVM, click_pairs, ranksvm_objective
from linclass.ranking.ranksvm import _explicit_pairs


def make_queries(seed=0, n_queries=20, n_docs=12, n_features=5, n_grades=3):
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=n_features)
    X = rng.normal(size=(n_queries * n_docs, n_features))
    qid = np.repeat(np.arange(n_queries), n_docs)
    latent = X @ w_true + 0.5 * rng.normal(size=X.shape[0])
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, n_grades + 1)[1:-1]))
    return X, y.astype(float), qid


def explicit_pair_matrix(X, y, qid):
    hi, lo, _ = _explicit_pairs(np.asarray(y, float), qid)
    return X[hi] - X[lo]


@pytest.mark.parametrize("C", [0.01, 1.0])
def test_newton_matches_sklearn_linearsvc_on_pair_differences(C):
    svm = pytest.importorskip("sklearn.svm")
    X, y, qid = make_queries()
    model = RankSVM(C=C).fit(X, y, qid=qid)
    D = explicit_pair_matrix(X, y, qid)
    sign = np.where(np.arange(D.shape[0]) % 2 == 0, 1, -1)
    ref = svm.LinearSVC(C=C, fit_intercept=False, loss="squared_hinge", tol=1e-10,
                        max_iter=200000).fit(D * sign[:, None], sign)
    ref_obj = ranksvm_objective(ref.coef_.ravel(), X, y, qid, C=C)
    assert model.objective_ == pytest.approx(ref_obj, rel=1e-6)
    assert model.objective_ <= ref_obj * (1 + 1e-9)
    np.testing.assert_allclose(model.coef_, ref.coef_.ravel(), rtol=1e-3, atol=1e-4)
    assert model.n_pairs_ == D.shape[0]


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_pairs_solver_same_objective_as_explicit_primal(loss):
    X, y, qid = make_queries(seed=1, n_queries=6, n_docs=8)
    C = 0.3
    model = RankSVM(C=C, loss=loss, solver="pairs", tol=1e-7, random_state=0).fit(X, y, qid=qid)
    D = explicit_pair_matrix(X, y, qid)
    slack = np.maximum(0, 1 - D @ model.coef_)
    primal = 0.5 * model.coef_ @ model.coef_ + C * np.sum(slack if loss == "hinge" else slack ** 2)
    assert model.objective_ == pytest.approx(primal, rel=1e-10)
    if loss == "squared_hinge":
        newton = RankSVM(C=C).fit(X, y, qid=qid)
        assert newton.objective_ == pytest.approx(model.objective_, rel=1e-7)
    # the dual objective certifies optimality (strong duality)
    alpha = model.dual_coef_
    diag = 0.0 if loss == "hinge" else 1 / (2 * C)
    dual = alpha.sum() - 0.5 * model.coef_ @ model.coef_ - 0.5 * diag * alpha @ alpha
    assert dual == pytest.approx(primal, rel=1e-5)


def test_sample_weight_is_mean_of_document_weights_and_query_weight():
    X, y, qid = make_queries(seed=2, n_queries=4, n_docs=6)
    # a query weight of 2 equals that query's documents duplicated as 2 queries
    sw = np.where(qid == 0, 2.0, 1.0)
    weighted = RankSVM(C=0.5, tol=1e-10).fit(X, y, qid=qid, sample_weight=sw)
    rows = np.r_[np.arange(len(y)), np.flatnonzero(qid == 0)]
    dup_qid = np.r_[qid, np.full((qid == 0).sum(), 99)]
    duplicated = RankSVM(C=0.5, tol=1e-10).fit(X[rows], y[rows], qid=dup_qid)
    np.testing.assert_allclose(weighted.coef_, duplicated.coef_, rtol=1e-7, atol=1e-9)
    # and the pair solver agrees on the weighted objective
    pairs = RankSVM(C=0.5, solver="pairs", tol=1e-7, random_state=0).fit(
        X, y, qid=qid, sample_weight=sw)
    assert pairs.objective_ == pytest.approx(weighted.objective_, rel=1e-6)


def test_non_contiguous_queries_are_grouped():
    X, y, qid = make_queries(seed=3)
    perm = np.random.default_rng(0).permutation(len(y))
    a = RankSVM(C=0.1).fit(X, y, qid=qid)
    b = RankSVM(C=0.1).fit(X[perm], y[perm], qid=qid[perm])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
    assert a.n_queries_ == b.n_queries_ == 20


def test_skipped_queries_are_counted_not_errors():
    X, y, qid = make_queries(seed=4, n_queries=5)
    X = np.vstack([X, np.ones((4, X.shape[1]))])
    y = np.r_[y, 2, 2, 2, 1]
    qid = np.r_[qid, 100, 100, 100, 101]     # one single-grade query, one singleton
    model = RankSVM().fit(X, y, qid=qid)
    assert model.n_skipped_queries_ == 2
    assert model.n_queries_ == 5
    reference = RankSVM().fit(X[:-4], y[:-4], qid=qid[:-4])
    np.testing.assert_allclose(model.coef_, reference.coef_)


def test_sparse_equals_dense_and_predict_is_score():
    X, y, qid = make_queries(seed=5)
    dense = RankSVM(C=0.2).fit(X, y, qid=qid)
    sparse = RankSVM(C=0.2).fit(sp.csr_matrix(X), y, qid=qid)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-8)
    np.testing.assert_allclose(dense.predict(X), X @ dense.coef_)
    np.testing.assert_allclose(dense.decision_function(X), dense.predict(X))


def test_score_is_mean_pairwise_accuracy():
    from linclass.metrics import pairwise_ranking_accuracy
    X, y, qid = make_queries(seed=6)
    model = RankSVM().fit(X, y, qid=qid)
    assert model.score(X, y, qid) == pytest.approx(
        pairwise_ranking_accuracy(y, X @ model.coef_, groups=qid))
    assert model.score(X, y, qid) > 0.8


def test_qid_none_is_one_query():
    X, y, qid = make_queries(seed=7, n_queries=1)
    a = RankSVM().fit(X, y)
    b = RankSVM().fit(X, y, qid=np.full(len(y), 5))
    np.testing.assert_allclose(a.coef_, b.coef_)


def test_convergence_warning_at_max_iter():
    X, y, qid = make_queries(seed=8)
    with pytest.warns(ConvergenceWarning):
        RankSVM(C=10.0, max_iter=1, tol=1e-12).fit(X, y, qid=qid)
    with pytest.warns(ConvergenceWarning):
        RankSVM(C=10.0, loss="hinge", max_iter=1, tol=1e-12, random_state=0).fit(X, y, qid=qid)


def test_clone_pickle_and_params():
    X, y, qid = make_queries(seed=9, n_queries=3)
    model = RankSVM(C=0.3).fit(X, y, qid=qid)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(again.predict(X), model.predict(X))
    assert model.get_params()["C"] == 0.3
    sklearn_base = pytest.importorskip("sklearn.base")
    assert sklearn_base.clone(model).get_params() == model.get_params()


# ---- bad input ------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(C=0), "C must be"), (dict(C=-1.0), "C must be"), (dict(loss="log"), "loss"),
    (dict(solver="sgd"), "solver"), (dict(loss="hinge", solver="newton"), "squared_hinge"),
    (dict(max_iter=0), "max_iter"), (dict(tol=float("nan")), "tol"),
])
def test_bad_parameters(kwargs, match):
    X, y, qid = make_queries(seed=10, n_queries=2)
    with pytest.raises(ValueError, match=match):
        RankSVM(**kwargs).fit(X, y, qid=qid)


def test_bad_data():
    X, y, qid = make_queries(seed=11, n_queries=2)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankSVM().fit(Xn, y, qid=qid)
    yn = y.copy()
    yn[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankSVM().fit(X, yn, qid=qid)
    qn = qid.astype(float)
    qn[2] = np.nan
    with pytest.raises(ValueError, match="qid contains NaN"):
        RankSVM().fit(X, y, qid=qn)
    with pytest.raises(ValueError, match="qid has"):
        RankSVM().fit(X, y, qid=qid[:-1])
    with pytest.raises(ValueError, match="labels but X has"):
        RankSVM().fit(X, y[:-1], qid=qid)
    with pytest.raises(ValueError, match="numeric"):
        RankSVM().fit(X, np.array(["a"] * len(y), dtype=object), qid=qid)
    with pytest.raises(ValueError, match="no query has two documents"):
        RankSVM().fit(X, np.ones(len(y)), qid=qid)
    with pytest.raises(ValueError, match="sample_weight"):
        RankSVM().fit(X, y, qid=qid, sample_weight=-np.ones(len(y)))
    with pytest.raises(NotFittedError):
        RankSVM().predict(X)
    model = RankSVM().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(Xn)


# ---- click logs -------------------------------------------------------------

def test_click_pairs_skip_above_hand_made():
    shown = [[10, 11, 12, 13, 14], [20, 21, 22], [30, 31], [40, 41, 42]]
    clicks = [[3, 1], [0], [], [2, 0, 1]]
    pairs, weights, impression = click_pairs(shown, clicks)
    # impression 0: click at rank 1 beats 10; click at rank 3 beats 10 and 12 (11 clicked)
    # impression 1: top click, nothing above; 2: no click; 3: all clicked
    assert pairs.tolist() == [[11, 10], [13, 10], [13, 12]]
    assert weights.tolist() == [1.0, 1.0, 1.0]
    assert impression.tolist() == [0, 0, 0]


def test_click_pairs_position_weighting():
    shown = [[1, 2, 3, 4]]
    pairs, weights, _ = click_pairs(shown, [[2]], position_bias=1.0)
    assert pairs.tolist() == [[3, 1], [3, 2]]
    np.testing.assert_allclose(weights, [3.0, 3.0])         # 1 / (1/3)
    pairs, weights, _ = click_pairs(shown, [[1, 3]], position_bias=[1.0, 0.5, 0.25, 0.2])
    assert pairs.tolist() == [[2, 1], [4, 1], [4, 3]]
    np.testing.assert_allclose(weights, [2.0, 5.0, 5.0])
    pairs, weights, _ = click_pairs([[], [5]], [[], []])
    assert pairs.shape == (0, 2) and weights.shape == (0,)


@pytest.mark.parametrize("shown, clicks, kwargs, match", [
    ([[1, 2]], [[0], [1]], {}, "impressions"),
    ([[1, 2]], [[2]], {}, "outside"),
    ([[1, 2]], [[-1]], {}, "outside"),
    ([[1, 2]], [[1, 1]], {}, "repeats"),
    ([[1.5, 2]], [[1]], {}, "integer document"),
    ([[1, 2]], [[0.5]], {}, "integer ranks"),
    ([[1, 2]], [[1]], dict(position_bias=-1.0), "eta"),
    ([[1, 2]], [[1]], dict(position_bias=[1.0]), "examination"),
    ([[1, 2]], [[1]], dict(position_bias=[1.0, 0.0]), "> 0"),
])
def test_click_pairs_bad_input(shown, clicks, kwargs, match):
    with pytest.raises(ValueError, match=match):
        click_pairs(shown, clicks, **kwargs)


def test_fit_pairs_from_clicks_learns_the_preference():
    rng = np.random.default_rng(12)
    w_true = np.array([1.0, -1.0, 0.5])
    X = rng.normal(size=(200, 3))
    shown, clicks = [], []
    for _ in range(60):
        docs = rng.choice(200, size=8, replace=False)   # random display order
        utility = X[docs] @ w_true
        clicks.append(np.flatnonzero(utility > np.quantile(utility, 0.7)))
        shown.append(docs)
    pairs, weights, _ = click_pairs(shown, clicks, position_bias=0.5)
    model = RankSVM(C=1.0, loss="hinge", random_state=0).fit_pairs(X, pairs, weights)
    cosine = model.coef_ @ w_true / np.linalg.norm(model.coef_) / np.linalg.norm(w_true)
    assert cosine > 0.9
    margins = X[pairs[:, 0]] @ model.coef_ - X[pairs[:, 1]] @ model.coef_
    slack = np.maximum(0, 1 - margins)
    assert model.objective_ == pytest.approx(
        0.5 * model.coef_ @ model.coef_ + weights @ slack)
    with pytest.raises(ValueError, match="itself"):
        model.fit_pairs(X, [[1, 1]])
    with pytest.raises(ValueError, match="outside"):
        model.fit_pairs(X, [[1, 200]])
    with pytest.raises(ValueError, match="shape"):
        model.fit_pairs(X, [1, 2])


def test_save_and_load_round_trip(tmp_path):
    import linclass
    X, y, qid = make_queries(seed=13, n_queries=4)
    for loss in ("squared_hinge", "hinge"):
        model = RankSVM(C=0.2, loss=loss, random_state=0).fit(X, y, qid=qid)
        model.save(tmp_path / "ranksvm.npz")
        again = linclass.load(tmp_path / "ranksvm.npz")
        assert again.get_params() == model.get_params()
        np.testing.assert_array_equal(again.predict(X), model.predict(X))
        assert again.n_skipped_queries_ == model.n_skipped_queries_


@pytest.mark.parametrize("solver", ["newton", "pairs"])
def test_solvers_run_with_one_blas_thread(monkeypatch, solver):
    # numpy's threaded BLAS inside the dense products would oversubscribe the
    # caller's cores (RankSVM took 1.6-8 s instead of 0.5 s next to other work)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen = []
    method = "_fit_newton" if solver == "newton" else "_fit_dual_pairs"
    original = getattr(RankSVM, method)

    def spy(self, *args, **kwargs):
        seen.append([info["num_threads"] for info in threadpoolctl.threadpool_info()
                     if info["user_api"] == "blas"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RankSVM, method, spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = np.round(X @ rng.normal(size=5)).clip(-2, 2)
    model = RankSVM(C=0.1, solver=solver, random_state=0).fit(X, y)
    assert seen and all(n == 1 for n in seen[0])
    reference = RankSVM(C=0.1, solver=solver, random_state=0)
    monkeypatch.setattr(RankSVM, method, original)
    assert reference.fit(X, y).objective_ == pytest.approx(model.objective_, rel=1e-12)
