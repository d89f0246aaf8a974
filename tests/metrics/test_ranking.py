"""Per-query ranking metrics against brute-force definitions and scikit-learn."""
import numpy as np
import pytest

from linclass import metrics
from linclass.metrics.ranking import (average_precision_per_query, mean_average_precision,
                                       mean_reciprocal_rank, precision_at_k, query_metrics,
                                       ranking_report)


def random_queries(seed):
    rng = np.random.default_rng(seed)
    n = 60
    qid = rng.integers(0, 6, size=n) + 100          # interleaved queries
    y = rng.integers(0, 4, size=n).astype(float)
    scores = rng.integers(0, 6, size=n) / 2.0      # many ties
    return y, scores, qid


def brute_rank_lists(y, scores, qid):
    """Per query: relevance in ranked order, ties in input order (explicit sort)."""
    out = []
    for q in np.unique(qid):
        rows = [i for i in range(len(y)) if qid[i] == q]
        rows.sort(key=lambda i: (-scores[i], i))
        out.append([y[i] for i in rows])
    return out


@pytest.mark.parametrize("seed", range(5))
def test_map_mrr_precision_brute_force(seed):
    y, scores, qid = random_queries(seed)
    aps, rrs, p5s = [], [], []
    for ranked in brute_rank_lists(y, scores, qid):
        rel = [r > 0 for r in ranked]
        if not any(rel):
            continue
        hits, total = 0, 0.0
        for r, is_rel in enumerate(rel, start=1):
            if is_rel:
                hits += 1
                total += hits / r
        aps.append(total / sum(rel))
        rrs.append(1.0 / (rel.index(True) + 1))
        p5s.append(sum(rel[:5]) / 5)
    assert mean_average_precision(y, scores, qid) == pytest.approx(np.mean(aps))
    assert mean_reciprocal_rank(y, scores, qid) == pytest.approx(np.mean(rrs))
    assert precision_at_k(y, scores, qid, k=5) == pytest.approx(np.mean(p5s))


def test_average_precision_matches_sklearn_without_ties():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=40).astype(float)
    scores = rng.normal(size=40)
    qid = np.repeat([1, 2, 3, 4], 10)
    ours = average_precision_per_query(y, scores, qid, relevance_threshold=2)
    for q, value in zip([1, 2, 3, 4], ours):
        m = qid == q
        if (y[m] >= 2).any():
            assert value == pytest.approx(skm.average_precision_score(y[m] >= 2, scores[m]))
        else:
            assert np.isnan(value)


@pytest.mark.parametrize("seed", range(4))
def test_query_metrics_per_query_against_sklearn_and_brute_force(seed):
    skm = pytest.importorskip("sklearn.metrics")
    y, scores, qid = random_queries(seed)
    table = query_metrics(y, scores, qid, k=5)
    assert table["qid"].tolist() == sorted(set(qid.tolist()))
    for r, q in enumerate(table["qid"]):
        m = qid == q
        yq, sq = y[m], scores[m]
        assert table["n_docs"][r] == m.sum()
        if len(yq) > 1:
            assert table["ndcg@5"][r] == pytest.approx(
                skm.ndcg_score(yq[None, :], sq[None, :], k=5))
        # pairwise accuracy by enumeration, ties one half
        good, total = 0.0, 0
        for i in range(len(yq)):
            for j in range(len(yq)):
                if yq[i] > yq[j]:
                    total += 1
                    good += 1.0 if sq[i] > sq[j] else 0.5 if sq[i] == sq[j] else 0.0
        if total:
            assert table["pairwise_accuracy"][r] == pytest.approx(good / total)
        else:
            assert np.isnan(table["pairwise_accuracy"][r])
        binary = yq > 0
        if 0 < binary.sum() < len(yq):
            assert table["auc"][r] == pytest.approx(skm.roc_auc_score(binary, sq))
        else:
            assert np.isnan(table["auc"][r])
    # the means agree with linclass.metrics' grouped versions
    assert np.nanmean(table["pairwise_accuracy"]) == pytest.approx(
        metrics.pairwise_ranking_accuracy(y, scores, groups=qid))
    assert np.mean(table["ndcg@5"]) == pytest.approx(metrics.ndcg_at_k(y, scores, k=5, groups=qid))


def test_report_text():
    y = np.array([0, 1, 2, 0, 3, 0, 0])
    scores = np.array([0.1, 0.2, 0.3, 0.5, 0.1, 1.0, 2.0])
    qid = np.array([5, 5, 5, 7, 7, 9, 9])
    text = ranking_report(y, scores, qid, k=3)
    lines = text.splitlines()
    assert lines[0].split() == ["qid", "n_docs", "n_rel", "pairwise_accuracy", "auc",
                                "ndcg@3", "ap", "rr", "precision@3"]
    assert lines[1].split() == ["5", "3", "2", "1.0000", "1.0000", "1.0000", "1.0000",
                                "1.0000", "0.6667"]
    assert lines[3].split()[:3] == ["9", "2", "0"] and lines[3].split()[3:] == \
        ["-", "-", "0.0000", "-", "-", "-"]
    assert lines[4].split()[:4] == ["mean", "7", "3", "0.5000"]
    assert "3 queries" in lines[5]
    short = ranking_report(y, scores, qid, max_queries=1)
    assert "(2 more queries)" in short


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        query_metrics([1, 0], [np.nan, 1.0])
    with pytest.raises(ValueError, match="entries"):
        query_metrics([1, 0], [1.0])
    with pytest.raises(ValueError, match="groups"):
        query_metrics([1, 0], [1.0, 2.0], [1])
    with pytest.raises(ValueError, match="NaN"):
        query_metrics([1, 0], [1.0, 2.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="k must"):
        precision_at_k([1, 0], [1.0, 2.0], k=0)
    with pytest.raises(ValueError, match="no query has a relevant"):
        mean_average_precision([0, 0], [1.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        mean_reciprocal_rank([], [])
