"""Ranking: orderings of the documents of a query, learned from pairwise preferences.

``ranksvm`` holds the :class:`RankSVM` estimator (pairwise hinge loss in
O(n log n) by sorting, truncated Newton; dual coordinate descent on explicit
pairs), its objective, and the helpers that build preferences from grades or
clicks (:func:`click_pairs`, :func:`group_by_query`).  Ranking metrics (NDCG,
MAP, MRR, precision@k) are in :mod:`linclass.metrics`.

May import: ``linclass._core``, ``linclass._validation``, ``linclass.base``,
``linclass.metrics``.
"""
from .ranksvm import RankSVM, click_pairs, group_by_query, ranksvm_objective

__all__ = ["RankSVM", "click_pairs", "group_by_query", "ranksvm_objective"]
