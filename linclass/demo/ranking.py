"""``linclass demo`` ranking part: RankSVM on synthetic queries generated here."""
import time

import numpy as np


def make_ranking_queries(n_queries=100, docs_per_query=20, n_features=20, n_grades=4,
                         noise=1.0, random_state=0):
    """Synthetic learning-to-rank data: graded documents grouped by query.

    Each document has Gaussian features; its latent relevance is ``x . w_true
    + noise * N(0, 1)`` plus a per-query offset (queries differ in how many
    good documents they have), cut into ``n_grades`` grades 0..n_grades-1 at
    global quantiles.

    Returns
    -------
    X : ndarray (n_queries * docs_per_query, n_features)
    y : ndarray of float64 grades
    qid : ndarray of int64, documents of a query consecutive
    w_true : ndarray (n_features,)
    """
    rng = np.random.default_rng(random_state)
    n = n_queries * docs_per_query
    w_true = rng.normal(size=n_features)
    X = rng.normal(size=(n, n_features))
    qid = np.repeat(np.arange(1, n_queries + 1), docs_per_query)
    latent = X @ w_true + noise * rng.normal(size=n) + rng.normal(size=n_queries)[qid - 1]
    cuts = np.quantile(latent, np.linspace(0, 1, n_grades + 1)[1:-1])
    y = np.digitize(latent, cuts).astype(np.float64)
    return X, y, qid, w_true


def demo_ranking(quick=False):
    """Train RankSVM on synthetic graded queries and on simulated clicks; print
    NDCG@10, MAP, MRR and pairwise accuracy against a random ranking."""
    from ..metrics.ranking import ndcg_at_k, pairwise_ranking_accuracy
    from ..ranking.ranksvm import RankSVM, click_pairs
    from ..metrics.ranking import mean_average_precision, mean_reciprocal_rank, ranking_report

    n_train, n_test = (60, 20) if quick else (300, 100)
    X, y, qid, w_true = make_ranking_queries(n_queries=n_train + n_test, random_state=0)
    train = qid <= n_train
    test = ~train
    print("== Ranking: synthetic queries (%d train / %d test, %d documents each, grades 0-3)"
          % (n_train, n_test, int(np.sum(qid == 1))))
    model = RankSVM(C=0.1)
    t0 = time.perf_counter()
    model.fit(X[train], y[train], qid=qid[train])
    fit_s = time.perf_counter() - t0
    scores = model.predict(X[test])
    random_scores = np.random.default_rng(1).normal(size=scores.shape[0])
    yt, qt = y[test], qid[test]
    print("   RankSVM (truncated Newton, O(n log n) pairwise loss): %d pairs, %d Newton "
          "iterations, %.3fs" % (model.n_pairs_, model.n_iter_, fit_s))
    for name, s in (("RankSVM", scores), ("random", random_scores)):
        print("   %-8s NDCG@10 %.4f  MAP %.4f  MRR %.4f  pairwise accuracy %.4f"
              % (name, ndcg_at_k(yt, s, k=10, groups=qt),
                 mean_average_precision(yt, s, qt, relevance_threshold=2),
                 mean_reciprocal_rank(yt, s, qt, relevance_threshold=3),
                 pairwise_ranking_accuracy(yt, s, groups=qt)))
    print(ranking_report(yt, scores, qt, max_queries=3))

    # clicks: users scan a random ordering top-down and click documents of grade >= 2
    rng = np.random.default_rng(2)
    rows = np.flatnonzero(train)
    shown, clicks = [], []
    for q in range(1, n_train + 1):
        docs = rows[qid[rows] == q]
        docs = docs[rng.permutation(docs.size)][:10]
        shown.append(docs)
        examined = rng.random(docs.size) < 1.0 / np.arange(1, docs.size + 1) ** 0.5
        clicks.append(np.flatnonzero(examined & (y[docs] >= 2)))
    pairs, weights, _ = click_pairs(shown, clicks, position_bias=0.5)
    click_model = RankSVM(C=0.1, loss="hinge", random_state=0).fit_pairs(X, pairs, weights)
    click_scores = click_model.predict(X[test])
    print("   from %d skip-above click preferences (%d impressions): NDCG@10 %.4f, "
          "pairwise accuracy %.4f"
          % (pairs.shape[0], len(shown), ndcg_at_k(yt, click_scores, k=10, groups=qt),
             pairwise_ranking_accuracy(yt, click_scores, groups=qt)))
    return ndcg_at_k(yt, scores, k=10, groups=qt)
