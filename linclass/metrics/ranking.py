"""Ranking metrics by query group: MAP, MRR, precision@k and per-query tables.

Also ``pairwise_ranking_accuracy`` and ``ndcg_at_k`` (ties averaged as
McSherry and Najork 2008).  Every function takes relevance grades
``y_true``, scores (higher = ranked first) and optional query ids ``groups``
(documents of a query need not be consecutive; ``None`` = one query).

Binary relevance for AP, RR and precision@k is ``y_true >= relevance_threshold``
(default: any positive grade).  Documents with tied scores are ranked in their
input order (as ``ndcg_at_k(..., ignore_ties=True)``; a stable sort on the
negated scores).  A query without any relevant document has no AP/RR/P@k: it
gets NaN in :func:`query_metrics` and is left out of the means; the means
raise ``ValueError`` when no query has a relevant document.

References
----------
.. [Manning2008] C. D. Manning, P. Raghavan, H. Schuetze, "Introduction to
   Information Retrieval", ch. 8 (precision@k, MAP), 2008.
.. [Voorhees1999] E. M. Voorhees, "The TREC-8 question answering track
   report" (mean reciprocal rank), 1999.
.. [Jarvelin2002] K. Jarvelin, J. Kekalainen, "Cumulated gain-based
   evaluation of IR techniques", ACM TOIS 20(4), 2002.
"""
import numbers

import numpy as np

from ._checks import _as_1d, _check_lengths, _check_scores
from .scores import _curve_counts

__all__ = ['average_precision_per_query', 'mean_average_precision', 'mean_reciprocal_rank', 'ndcg_at_k', 'pairwise_ranking_accuracy', 'precision_at_k', 'query_metrics', 'ranking_report']


def _check_inputs(y_true, scores, groups):
    y = np.asarray(y_true)
    s = np.asarray(scores)
    for arr, name in ((y, "y_true"), (s, "scores")):
        if arr.ndim != 1:
            raise ValueError("%s must be 1-D, got shape %r" % (name, arr.shape))
        try:
            arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("%s must hold numbers" % name)
    y = y.astype(np.float64)
    s = s.astype(np.float64)
    if y.shape[0] != s.shape[0]:
        raise ValueError("y_true has %d entries but scores has %d" % (y.shape[0], s.shape[0]))
    if y.shape[0] == 0:
        raise ValueError("y_true is empty; at least one document is required")
    if not np.isfinite(y).all():
        raise ValueError("y_true contains NaN or infinity")
    if not np.isfinite(s).all():
        raise ValueError("scores contains NaN or infinity (first at %d); scores must be "
                         "finite" % np.flatnonzero(~np.isfinite(s))[0])
    if groups is None:
        g = np.zeros(y.shape[0], dtype=np.int64)
    else:
        g = np.asarray(groups)
        if g.ndim != 1 or g.shape[0] != y.shape[0]:
            raise ValueError("groups must be 1-D with one query id per document (%d), got "
                             "shape %r" % (y.shape[0], g.shape))
        if g.dtype.kind == "f" and not np.isfinite(g).all():
            raise ValueError("groups (query ids) contains NaN or infinity")
    return y, s, g


def _query_slices(groups):
    """(query id, row indices) for each query, in sorted query-id order."""
    ids, inverse = np.unique(groups, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return list(zip(ids, np.split(order, bounds)))


def _check_k(k):
    if not (isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1):
        raise ValueError("k must be a positive integer, got %r" % (k,))
    return int(k)


def _relevant(y, threshold):
    """y > 0 (threshold None) or y >= threshold."""
    return y > 0 if threshold is None else y >= threshold


def _ranked_relevance(y, s, threshold):
    """Binary relevance of the documents in ranked order (ties: input order)."""
    return _relevant(y[np.argsort(-s, kind="stable")], threshold)


def _ap(rel):
    if not rel.any():
        return np.nan
    hits = np.cumsum(rel)
    ranks = np.arange(1, rel.size + 1)
    return float(np.sum((hits / ranks)[rel]) / rel.sum())


def _rr(rel):
    if not rel.any():
        return np.nan
    return 1.0 / (np.argmax(rel) + 1)


def _p_at_k(rel, k):
    if not rel.any():
        return np.nan
    return float(rel[:k].sum()) / k


def _per_query(y_true, scores, groups, fn):
    y, s, g = _check_inputs(y_true, scores, groups)
    return np.array([fn(y[rows], s[rows]) for _, rows in _query_slices(g)])


def _nanmean_or_raise(values, what):
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise ValueError("no query has a relevant document; %s is undefined" % what)
    return float(values.mean())


def average_precision_per_query(y_true, scores, groups=None, *, relevance_threshold=None):
    """Average precision of each query (NaN when it has no relevant document).

    ``AP = (1 / R) sum_{r: doc at rank r relevant} precision@r`` with R the
    number of relevant documents of the query [Manning2008]_.

    Returns
    -------
    ndarray of float64, one per query in sorted query-id order
    """
    return _per_query(y_true, scores, groups,
                      lambda y, s: _ap(_ranked_relevance(y, s, relevance_threshold)))


def mean_average_precision(y_true, scores, groups=None, *, relevance_threshold=None):
    """Mean over queries (with a relevant document) of the average precision.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades; relevant means ``>= relevance_threshold``.
    scores : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,), optional
    relevance_threshold : float, optional
        None: relevant means a positive grade.

    Returns
    -------
    float
    """
    return _nanmean_or_raise(average_precision_per_query(
        y_true, scores, groups, relevance_threshold=relevance_threshold), "MAP")


def mean_reciprocal_rank(y_true, scores, groups=None, *, relevance_threshold=None):
    """Mean over queries of ``1 / rank of the first relevant document`` [Voorhees1999]_.

    Queries without a relevant document are left out.

    Returns
    -------
    float
    """
    return _nanmean_or_raise(_per_query(
        y_true, scores, groups,
        lambda y, s: _rr(_ranked_relevance(y, s, relevance_threshold))), "MRR")


def precision_at_k(y_true, scores, groups=None, *, k=10, relevance_threshold=None):
    """Mean over queries of the fraction of relevant documents among the top ``k``.

    The denominator is always ``k`` (a query with fewer than ``k`` documents
    cannot reach 1).  Queries without a relevant document are left out.

    Returns
    -------
    float
    """
    k = _check_k(k)
    return _nanmean_or_raise(_per_query(
        y_true, scores, groups,
        lambda y, s: _p_at_k(_ranked_relevance(y, s, relevance_threshold), k)),
        "precision@%d" % k)


def _pairwise_accuracy(y, s):
    """Correctly ordered pairs of different grades / all such pairs (ties: 1/2); brute force."""
    higher = y[:, None] > y[None, :]
    n_pairs = higher.sum()
    if n_pairs == 0:
        return np.nan
    diff = s[:, None] - s[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0))[higher].sum() / n_pairs)


def _ndcg(y, s, k):
    if (y < 0).any():
        return np.nan
    return ndcg_at_k(y, s, k=k)


def query_metrics(y_true, scores, groups=None, *, k=10, relevance_threshold=None):
    """Ranking metrics of every query.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades.
    scores : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,), optional
        Query ids (None: one query).
    k : int, default=10
        Cut-off of NDCG@k and precision@k.
    relevance_threshold : float, optional
        Grades ``>=`` it are relevant for AUC, AP, RR and precision@k
        (None, the default: positive grades).

    Returns
    -------
    dict of ndarrays, one entry per query (sorted query ids)
        ``qid``, ``n_docs``, ``n_relevant``, ``pairwise_accuracy`` (pairs of
        different grades, ties count 1/2; NaN with a single grade), ``auc``
        (relevant vs non-relevant; NaN when one side is empty),
        ``ndcg@k`` (linear gain, tie-averaged as scikit-learn's
        ``ndcg_score``; NaN for negative grades), ``ap``, ``rr``,
        ``precision@k`` (NaN without a relevant document).
    """
    k = _check_k(k)
    y, s, g = _check_inputs(y_true, scores, groups)
    rows_out = {name: [] for name in ("qid", "n_docs", "n_relevant", "pairwise_accuracy",
                                      "auc", "ndcg@%d" % k, "ap", "rr", "precision@%d" % k)}
    for qid, rows in _query_slices(g):
        yq, sq = y[rows], s[rows]
        binary = _relevant(yq, relevance_threshold).astype(float)
        ranked = _ranked_relevance(yq, sq, relevance_threshold)
        rows_out["qid"].append(qid)
        rows_out["n_docs"].append(rows.size)
        rows_out["n_relevant"].append(int(binary.sum()))
        rows_out["pairwise_accuracy"].append(_pairwise_accuracy(yq, sq))
        rows_out["auc"].append(_pairwise_accuracy(binary, sq))
        rows_out["ndcg@%d" % k].append(_ndcg(yq, sq, k))
        rows_out["ap"].append(_ap(ranked))
        rows_out["rr"].append(_rr(ranked))
        rows_out["precision@%d" % k].append(_p_at_k(ranked, k))
    out = {}
    for name, values in rows_out.items():
        out[name] = (np.array(values) if name == "qid" else
                     np.array(values, dtype=np.int64 if name in ("n_docs", "n_relevant")
                              else np.float64))
    return out


def ranking_report(y_true, scores, groups=None, *, k=10, relevance_threshold=None,
                   max_queries=None):
    """Text table of :func:`query_metrics`: one line per query and a mean line.

    Means are over the queries where a metric is defined (NaN entries print
    as ``-`` and are left out).

    Parameters
    ----------
    y_true, scores, groups, k, relevance_threshold
        As in :func:`query_metrics`.
    max_queries : int, optional
        Print only the first ``max_queries`` query lines (the mean line always
        covers all queries).

    Returns
    -------
    str
    """
    table = query_metrics(y_true, scores, groups, k=k, relevance_threshold=relevance_threshold)
    metric_names = [n for n in table if n not in ("qid", "n_docs", "n_relevant")]
    widths = {n: max(8, len(n)) for n in metric_names}
    qid_width = max([len("mean")] + [len(str(q)) for q in table["qid"]])
    header = "%-*s %7s %6s " % (qid_width, "qid", "n_docs", "n_rel") + \
        " ".join("%*s" % (widths[n], n) for n in metric_names)
    lines = [header]
    n_queries = table["qid"].shape[0]
    shown = n_queries if max_queries is None else min(n_queries, int(max_queries))

    def fmt(v, name):
        return "%*s" % (widths[name], "-" if np.isnan(v) else "%.4f" % v)

    for r in range(shown):
        lines.append("%-*s %7d %6d " % (qid_width, table["qid"][r], table["n_docs"][r],
                                        table["n_relevant"][r])
                     + " ".join(fmt(table[n][r], n) for n in metric_names))
    if shown < n_queries:
        lines.append("... (%d more queries)" % (n_queries - shown))
    means = []
    for n in metric_names:
        values = table[n][~np.isnan(table[n])]
        means.append(fmt(values.mean() if values.size else np.nan, n))
    lines.append("%-*s %7d %6d " % (qid_width, "mean", int(table["n_docs"].sum()),
                                    int(table["n_relevant"].sum())) + " ".join(means))
    lines.append("(%d queries; means over queries where the metric is defined)" % n_queries)
    return "\n".join(lines)


def _group_slices(groups, n_samples):
    if groups is None:
        return [np.arange(n_samples)]
    groups = _as_1d(groups, "groups")
    _check_lengths(n_samples, groups, "groups")
    _, inverse = np.unique(groups, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    bounds = np.flatnonzero(np.diff(inverse.ravel()[order])) + 1
    return np.split(order, bounds)


def pairwise_ranking_accuracy(y_true, scores, groups=None):
    """Fraction of correctly ordered pairs, averaged over groups (queries).

    Within a group, every pair of items with different grades ``y_true``
    counts; it is correct when the higher-graded item has the higher score,
    half correct when the scores tie.  Groups without such a pair are left
    out; the result is the unweighted mean over the remaining groups.  With
    two grades and one group this is :func:`roc_auc_score`.  O(n_grades *
    n log n) per group.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Numeric relevance grades.
    scores : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,), optional
        Query id of each item; pairs are only formed inside a group.

    Returns
    -------
    float
    """
    y_true = _check_scores(y_true, "y_true")
    scores = _check_scores(scores, "scores", y_true.shape[0])
    per_group = []
    for index in _group_slices(groups, y_true.shape[0]):
        grade, score = y_true[index], scores[index]
        grades = np.unique(grade)
        if len(grades) < 2:
            continue
        correct = 0.0
        n_pairs = 0.0
        for g in grades[1:]:
            # items of grade g against all items of lower grade
            subset = grade <= g
            higher = grade[subset] == g
            fps, tps, _ = _curve_counts(higher, score[subset], None)
            pos_step = np.diff(np.r_[0.0, tps])
            neg_step = np.diff(np.r_[0.0, fps])
            correct += np.dot(pos_step, fps[-1] - fps + 0.5 * neg_step)
            n_pairs += tps[-1] * fps[-1]
        per_group.append(correct / n_pairs)
    if not per_group:
        raise ValueError("no group has two items with different grades; pairwise "
                         "ranking accuracy is undefined")
    return float(np.mean(per_group))


def _tie_averaged_dcg(gain, score, discount):
    """DCG where tied scores share the mean gain of their block [McSherry2008]_."""
    _, inverse, counts = np.unique(-score, return_inverse=True, return_counts=True)
    block_gain = np.bincount(inverse.ravel(), weights=gain) / counts
    cumulative = np.cumsum(discount)
    ends = np.cumsum(counts) - 1
    block_discount = np.diff(np.r_[0.0, cumulative[ends]])
    return float(np.dot(block_gain, block_discount))


def ndcg_at_k(y_true, scores, k=None, groups=None, *, gain="linear", ignore_ties=False):
    """Normalised discounted cumulative gain at rank ``k``, averaged over groups.

    ``DCG@k = sum_{i<=k} gain(rel_i) / log2(i + 1)`` over the items sorted
    by decreasing score, divided by the DCG of the ideal order
    [Jarvelin2002]_.  Tied scores share their averaged gain (as
    scikit-learn's ``ndcg_score`` with ``ignore_ties=False``).  A group
    without any relevant item scores 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative relevance grades.
    scores : array-like of shape (n_samples,)
    k : int, optional
        Cut-off rank (default: all items).
    groups : array-like of shape (n_samples,), optional
        Query ids; NDCG is computed per group and averaged (unweighted).
    gain : {'linear', 'exponential'}, default='linear'
        ``rel`` (scikit-learn) or ``2**rel - 1`` (LambdaMART, LightGBM).
    ignore_ties : bool, default=False
        Break ties by position instead of averaging (faster, arbitrary).

    Returns
    -------
    float
    """
    y_true = _check_scores(y_true, "y_true")
    scores = _check_scores(scores, "scores", y_true.shape[0])
    if (y_true < 0).any():
        raise ValueError("y_true (relevance grades) must be non-negative")
    if k is not None:
        check_k = isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1
        if not check_k:
            raise ValueError("k must be a positive integer or None, got %r" % (k,))
    if gain not in ("linear", "exponential"):
        raise ValueError("gain must be 'linear' or 'exponential', got %r" % (gain,))
    values = []
    for index in _group_slices(groups, y_true.shape[0]):
        relevance, score = y_true[index], scores[index]
        gains = relevance if gain == "linear" else np.exp2(relevance) - 1.0
        discount = 1.0 / np.log2(np.arange(len(index)) + 2.0)
        if k is not None:
            discount[k:] = 0.0
        ideal = float(np.dot(np.sort(gains)[::-1], discount))
        if ideal == 0:
            values.append(0.0)
            continue
        if ignore_ties:
            dcg = float(np.dot(gains[np.argsort(-score, kind="stable")], discount))
        else:
            dcg = _tie_averaged_dcg(gains, score, discount)
        values.append(dcg / ideal)
    return float(np.mean(values))


