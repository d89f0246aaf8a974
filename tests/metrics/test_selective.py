"""False positive/negative rates and the ranking error, by brute force and against scikit-learn."""
import itertools

import numpy as np
import pytest

from linclass.metrics import (false_negative_rate, false_positive_rate, ranking_error,
                              roc_auc_score)


def test_rates_by_counting():
    y = np.array([0, 0, 1, 1, 1, 0, 1])
    p = np.array([1, 0, 1, 0, 0, 0, 1])
    assert false_positive_rate(y, p) == pytest.approx(1 / 3)
    assert false_negative_rate(y, p) == pytest.approx(2 / 4)
    w = np.arange(1.0, 8.0)
    assert false_positive_rate(y, p, sample_weight=w) == pytest.approx(1 / (1 + 2 + 6))
    with pytest.raises(ValueError, match="negative samples"):
        false_positive_rate([1, 1], [1, 0])


def test_ranking_error_brute_force_and_auc():
    rng = np.random.RandomState(0)
    y = rng.randint(2, size=40)
    s = np.round(rng.randn(40), 1)                       # ties
    pos, neg = s[y == 1], s[y == 0]
    half = np.mean([(a < b) + 0.5 * (a == b) for a, b in itertools.product(pos, neg)])
    strict = np.mean([(a <= b) for a, b in itertools.product(pos, neg)])
    assert ranking_error(y, s) == pytest.approx(half)
    assert ranking_error(y, s, ties="strict") == pytest.approx(strict)
    assert ranking_error(y, s) == pytest.approx(1 - roc_auc_score(y, s))
