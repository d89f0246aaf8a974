"""Ranking: linclass RankSVM vs scikit-learn LinearSVC on explicit pair differences.

Cases:

* ``lightgbm_lambdarank`` (201 training queries, grades 0-4, 300 features),
  C in {0.01, 0.1}: ``RankSVM(C)`` (truncated Newton, sorting kernel, no pair
  list) vs ``LinearSVC(C, loss='squared_hinge', fit_intercept=False)`` trained
  on the differences ``x_i - x_j`` of every pair of different grades (signs
  alternated so that both classes occur; the objective is unchanged).  The
  peer time includes building the pair-difference matrix.  Quality: NDCG@10
  and pairwise accuracy on the test queries, and the training objective of
  each solution evaluated by the same function (the two must agree within
  1e-3 relative).  The same fits on the dense array of the same features
  (``X.toarray()``) against the same peer time.
* scaling curve (synthetic, one query of n documents, 10 features, 5 grades):
  time of one evaluation of the loss and gradient over all pairs, the
  O(n log n) sorting kernel vs the O(n^2) explicit pair list (numpy, pair list
  built outside the timer); and a whole ``RankSVM`` fit vs ``LinearSVC`` on
  the pair differences while the pairs fit in memory.
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.metrics import ndcg_at_k, pairwise_ranking_accuracy  # noqa: E402
from linclass.ranking import RankSVM, group_by_query, ranksvm_objective  # noqa: E402
from linclass.ranking.ranksvm import _explicit_pairs  # noqa: E402


def pair_differences(X, y, qid):
    hi, lo, _ = _explicit_pairs(np.asarray(y, float), qid)
    D = X[hi] - X[lo]
    sign = np.where(np.arange(D.shape[0]) % 2 == 0, 1.0, -1.0)
    if hasattr(D, "multiply"):
        D = D.multiply(sign[:, None]).tocsr()
    else:
        D = D * sign[:, None]
    return D, sign


def _quality(coef, X_test, y_test, q_test, objective):
    scores = np.asarray(X_test @ coef).ravel()
    return ("NDCG@10 %.4f, pair acc %.4f, obj %.6g"
            % (ndcg_at_k(y_test, scores, k=10, groups=q_test),
               pairwise_ranking_accuracy(y_test, scores, groups=q_test), objective))


def lambdarank_rows(quick, data_dir, repeat, svm):
    from linclass.datasets import load_lambdarank
    rows = []
    try:
        X, y, qid = load_lambdarank("train", data_home=data_dir)
        Xt, yt, qt = load_lambdarank("test", data_home=data_dir)
    except (FileNotFoundError, OSError) as exc:
        return [_harness.make_row("RankSVM fit", "lightgbm_lambdarank", None, None, None,
                                  note="data not found: %s" % exc)]
    for C in (0.01, 0.1):
        lc_s, model = _harness.median_time(lambda: RankSVM(C=C).fit(X, y, qid=qid), repeat)
        lc_q = _quality(model.coef_, Xt, yt, qt, model.objective_)
        if svm is None:
            rows.append(_harness.make_row("RankSVM fit C=%g" % C, "lightgbm_lambdarank", None,
                                          None, lc_s, None, lc_q,
                                          note="scikit-learn is not installed"))
            continue

        def peer_fit():
            D, sign = pair_differences(X, y, qid)
            return svm.LinearSVC(C=C, fit_intercept=False, loss="squared_hinge",
                                 tol=1e-6, max_iter=100000).fit(D, sign)
        sk_s, ref = _harness.median_time(peer_fit, repeat)
        ref_obj = ranksvm_objective(ref.coef_.ravel(), X, y, qid, C=C)
        rel = abs(model.objective_ - ref_obj) / abs(ref_obj)
        rows.append(_harness.make_row(
            "RankSVM fit C=%g" % C, "lightgbm_lambdarank (%d pairs)" % model.n_pairs_,
            "scikit-learn LinearSVC on pairs", sk_s, lc_s,
            _quality(ref.coef_.ravel(), Xt, yt, qt, ref_obj), lc_q,
            note="objective relative difference %.1e (%s 1e-3); %d queries skipped"
                 % (rel, "within" if rel <= 1e-3 else "NOT within",
                    model.n_skipped_queries_)))
        # the same features as a dense array: numpy's matrix-vector products run
        # under one BLAS thread (threads of its own fought the caller's)
        X_dense = X.toarray()
        dense_s, dense_model = _harness.median_time(
            lambda: RankSVM(C=C).fit(X_dense, y, qid=qid), repeat)
        dense_rel = abs(dense_model.objective_ - ref_obj) / abs(ref_obj)
        rows.append(_harness.make_row(
            "RankSVM fit C=%g, dense input" % C, "lightgbm_lambdarank (%d pairs)"
            % dense_model.n_pairs_, "scikit-learn LinearSVC on pairs (sparse, as above)",
            sk_s, dense_s, _quality(ref.coef_.ravel(), Xt, yt, qt, ref_obj),
            _quality(dense_model.coef_, Xt, yt, qt, dense_model.objective_),
            note="objective relative difference %.1e (%s 1e-3)"
                 % (dense_rel, "within" if dense_rel <= 1e-3 else "NOT within")))
    return rows


def synthetic_query(n_docs, n_features=10, n_grades=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_docs, n_features))
    latent = X @ rng.normal(size=n_features) + rng.normal(size=n_docs)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, n_grades + 1)[1:-1]))
    return X, y.astype(float), np.zeros(n_docs, dtype=np.int64)


def explicit_loss_grad(scores, hi, lo, n):
    """Squared pairwise hinge over an explicit pair list (the O(n^2) method)."""
    r = 1.0 - (scores[hi] - scores[lo])
    active = r > 0
    r = r[active]
    loss = float(r @ r)
    grad = np.bincount(lo[active], weights=2 * r, minlength=n) - \
        np.bincount(hi[active], weights=2 * r, minlength=n)
    return loss, grad


def scaling_rows(quick, repeat, svm):
    from linclass._core._ranking import pairwise_loss_grad
    rows = []
    sizes = (10, 100, 1000, 3000) if quick else (10, 100, 1000, 3000, 10000)
    for n in sizes:
        X, y, qid = synthetic_query(n)
        scores = np.ascontiguousarray(X @ np.random.default_rng(1).normal(size=X.shape[1]))
        layout = group_by_query(y, qid)
        s_sorted = np.ascontiguousarray(scores[layout.order])
        ones = np.ones(n)
        inner = 200 if n <= 100 else 20 if n <= 1000 else 3

        def kernel():
            for _ in range(inner):
                out = pairwise_loss_grad(scores=s_sorted, grade_rank=layout.grade_rank,
                                         weights=ones, query_ptr=layout.query_ptr,
                                         max_grades=layout.max_grades,
                                         max_query_size=layout.max_query_size, squared=True)
            return out
        lc_s, (lc_loss, _, _) = _harness.median_time(kernel, repeat)
        hi, lo, _ = _explicit_pairs(y, qid)

        def explicit():
            for _ in range(inner):
                out = explicit_loss_grad(scores, hi, lo, n)
            return out
        pe_s, (pe_loss, _) = _harness.median_time(explicit, repeat)
        rows.append(_harness.make_row(
            "loss+grad, all pairs", "synthetic 1 query n=%d (%d pairs)" % (n, hi.shape[0]),
            "explicit pair list (numpy)", pe_s / inner, lc_s / inner,
            "loss %.6g" % pe_loss, "loss %.6g" % lc_loss,
            note="per evaluation; sorting O(n log n) vs pair list O(n^2)"))
        # whole fit, while LinearSVC on the pairs is affordable
        fit_s, model = _harness.median_time(lambda: RankSVM(C=0.01).fit(X, y, qid=qid),
                                            1 if n >= 3000 else repeat)
        if svm is not None and hi.shape[0] <= 2_000_000 and n <= (1000 if quick else 3000):
            def peer_fit():
                D, sign = pair_differences(X, y, qid)
                return svm.LinearSVC(C=0.01, fit_intercept=False, tol=1e-6,
                                     max_iter=100000).fit(D, sign)
            sk_s, ref = _harness.median_time(peer_fit, 1 if n >= 1000 else repeat)
            rows.append(_harness.make_row(
                "RankSVM fit C=0.01", "synthetic 1 query n=%d" % n,
                "scikit-learn LinearSVC on pairs", sk_s, fit_s,
                "obj %.6g" % ranksvm_objective(ref.coef_.ravel(), X, y, qid, C=0.01),
                "obj %.6g" % model.objective_))
        else:
            rows.append(_harness.make_row(
                "RankSVM fit C=0.01", "synthetic 1 query n=%d" % n, None, None, fit_s, None,
                "obj %.6g" % model.objective_,
                note="peer skipped: %d explicit pairs" % hi.shape[0]))
    return rows


def run(quick, data_dir):
    repeat = _harness.n_repeats(quick)
    svm = _harness.import_peer("sklearn.svm")
    rows = lambdarank_rows(quick, data_dir, repeat, svm)
    rows += scaling_rows(quick, repeat, svm)
    return rows


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=pathlib.Path, default=_harness.default_data_dir())
    args = parser.parse_args()
    result = run(args.quick, args.data)
    print(_harness.format_table(result))
    for row in result:
        if row.get("note"):
            print("%s / %s: %s" % (row["task"], row["data"], row["note"]))
