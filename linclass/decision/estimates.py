"""Smoothed probability estimates from counts: Laplace's rule and the m-estimate.

``laplace_estimate``: ``(n_k + alpha) / (N + alpha K)`` -- Laplace's rule of
succession for ``alpha = 1``, Lidstone's for other ``alpha`` (the add-alpha
smoothing of naive Bayes).  ``m_estimate``: ``(n_k + m p_k) / (N + m)`` --
Cestnik's m-estimate, shrinking towards a prior distribution ``p`` with the
weight of ``m`` virtual samples; with uniform ``p`` and ``m = alpha K`` it is
the Laplace estimate.  Use them for class priors (``priors=`` of the naive
Bayes models) or for the leaf / bin probabilities of any counting model.

References
----------
Cestnik, B. (1990). Estimating probabilities: a crucial task in machine
learning. ECAI, 147-149.
Flach, P. (2012). *Machine Learning*, Cambridge University Press, section 2.3
(Laplace correction and m-estimate of probabilities).
"""
import numbers

import numpy as np

__all__ = ["laplace_estimate", "m_estimate"]


def _check_counts(counts):
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0 or c.shape[c.ndim - 1] == 0:
        raise ValueError("counts must be a non-empty array (..., n_classes), got %r" % (counts,))
    if not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("counts must be finite and >= 0")
    return c


def laplace_estimate(counts, alpha=1.0):
    """``(n_k + alpha) / (N + alpha K)`` along the last axis.

    Parameters
    ----------
    counts : array-like (..., K)
        Counts (or summed weights) per outcome.
    alpha : float >= 0, default=1.0
        Pseudo-count per outcome (1: Laplace; 0: relative frequencies).

    Examples
    --------
    >>> from linclass.decision import laplace_estimate
    >>> laplace_estimate([3, 0, 1])
    array([0.57142857, 0.14285714, 0.28571429])
    """
    c = _check_counts(counts)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha >= 0:
        raise ValueError("alpha must be a number >= 0, got %r" % (alpha,))
    num = c + alpha
    den = num.sum(axis=-1, keepdims=True)
    if (den <= 0).any():
        raise ValueError("no counts and alpha = 0: the estimate is undefined")
    return num / den


def m_estimate(counts, prior=None, m=2.0):
    """``(n_k + m p_k) / (N + m)`` along the last axis.

    Parameters
    ----------
    counts : array-like (..., K)
    prior : array-like (K,) or None
        Prior distribution ``p`` (normalised here); None: uniform.
    m : float >= 0, default=2.0
        Weight of the prior in virtual samples.
    """
    c = _check_counts(counts)
    K = c.shape[c.ndim - 1]
    p = np.full(K, 1.0 / K) if prior is None else np.asarray(prior, dtype=np.float64)
    if p.shape != (K,) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError("prior must be %d non-negative numbers, not all zero" % K)
    p = p / p.sum()
    if isinstance(m, bool) or not isinstance(m, numbers.Real) or not m >= 0:
        raise ValueError("m must be a number >= 0, got %r" % (m,))
    den = c.sum(axis=-1, keepdims=True) + m
    if (den <= 0).any():
        raise ValueError("no counts and m = 0: the estimate is undefined")
    return (c + m * p) / den
