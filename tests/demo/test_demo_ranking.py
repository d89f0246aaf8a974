"""The ranking demo runs and RankSVM beats a random ranking on its data."""
import numpy as np

from linclass.demo.ranking import demo_ranking, make_ranking_queries


def test_demo_ranking_quick(capsys):
    ndcg = demo_ranking(quick=True)
    out = capsys.readouterr().out
    assert "RankSVM" in out and "skip-above" in out and "mean" in out
    assert ndcg > 0.85


def test_make_ranking_queries_layout():
    X, y, qid, w = make_ranking_queries(n_queries=5, docs_per_query=4, n_features=3)
    assert X.shape == (20, 3) and w.shape == (3,)
    assert qid.tolist() == np.repeat(np.arange(1, 6), 4).tolist()
    assert set(np.unique(y)) <= {0.0, 1.0, 2.0, 3.0}
