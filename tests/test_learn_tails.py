"""A tail spread thinly over many magnitude buckets beyond a column's bounds
(:func:`dpquery.domain_learning.tail_reach`, docs/learn.md "Tails spread over many
buckets"): the rule by hand, its false rate on tail-free sides (seeded), a generated heavy
tail reached, and neighbouring tables charged the same (no new draw)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_membership import _charges, _learn, learned_neighbours

from dpquery import domain_learning
from dpquery.data.domain import Numeric
from dpquery.domain_learning import TAIL_FALSE_RATE, tail_reach, tail_thresholds
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import bucket_counts, magnitude_buckets

ONE = 100
"""A bucket's noise variance in the hand and rate tests (sd 10)."""


def test_thresholds_by_hand() -> None:
    """Entry ``k - 1`` is the threshold of ``k`` buckets' sum (variance ``k ONE``) at
    ``TAIL_FALSE_RATE / (2 cells)``; it grows as ``sqrt(k)``."""
    t = tail_thresholds(ONE, 10)
    rate = TAIL_FALSE_RATE / 20
    assert TAIL_FALSE_RATE == 0.005
    assert list(t) == [partition_threshold(k * ONE, rate) for k in range(1, 11)]
    # 2.5e-4 one-sided: 3.48 sd of the sum (discrete Gaussian close to the continuous one)
    assert t[0] == pytest.approx(3.48 * 10, abs=1.5) and t[3] == pytest.approx(3.48 * 20, abs=2)


def test_the_shortest_passing_run_by_hand() -> None:
    """Ten buckets ``[0, 1)`` to ``[500, 1000)``, the bounds ``[2, 10]`` (buckets 2 and 3);
    thresholds 36, 50, 61 for 1, 2, 3 buckets. Above: 20, 20, 30 (none passing alone; the
    first two's 40 < 50; the three's 70 >= 61), then empty buckets drawn -5, 3, 0: the bound
    moves to 100 (the end of bucket 6) and no run beyond passes. Below: bucket 1's 40 would
    pass, but a lower bound above 0 is never moved. The same counts mirrored below 0 move
    a lower bound of -10 to -100; counts of -3 everywhere move neither."""
    buckets = np.array([0.0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000])
    t = tail_thresholds(ONE, 10)
    assert list(t[:3]) == [36, 50, 61]
    noisy = np.array([0, 40, 500, 400, 20, 20, 30, -5, 3, 0])
    lo, hi = tail_reach(float(buckets[2]), float(buckets[4]), buckets, noisy, ONE)
    assert (lo, hi) == (float(buckets[2]), float(buckets[7]))  # lo >= 0: never moved
    signed = np.r_[-buckets[::-1][:-1], buckets]  # -hi .. 0 .. hi: 20 buckets
    x = np.r_[noisy[::-1], noisy]
    lo, hi = tail_reach(-float(buckets[4]), float(buckets[4]), signed, x, ONE)
    assert (lo, hi) == (-float(buckets[7]), float(buckets[7]))
    lo, hi = tail_reach(-float(buckets[4]), float(buckets[4]), signed, x * 0 - 3, ONE)
    assert (lo, hi) == (-float(buckets[4]), float(buckets[4]))


def test_tail_free_sides_move_at_the_stated_rate() -> None:
    """A column of ages (18 to 89) with its bounds at the data's buckets ``[10, 100]``: every
    bucket beyond is empty, and each side's runs pass with probability at most
    ``TAIL_FALSE_RATE / 2`` (the union bound over the run lengths; only the upper side is read,
    the lower bound being above 0). Seeds 0 to 999: at most 8 moves (expected at most 2.5;
    9 or more of 1,000 at 2.5e-3 has probability below 1e-3, the test's false-failure rate)."""
    ages = np.random.default_rng(0).integers(18, 90, 3000).astype(np.float64)
    buckets = magnitude_buckets(min_exponent=0)
    counts = bucket_counts(ages, buckets)
    moved = 0
    for s in range(1000):
        noise = sample_discrete_gaussian(ONE, counts.size, np.random.default_rng(s))
        moved += tail_reach(10.0, 100.0, buckets, counts + noise, ONE) != (10.0, 100.0)
    assert moved <= 8


def _incomes(n: int, seed: int) -> pd.DataFrame:
    """Incomes: a log-normal body (median 30,000) and 6% of the records log-uniform over
    ``[10^5, 10^8)`` (9 magnitude buckets, 0.67% of the records each), and a category."""
    rng = np.random.default_rng(seed)
    income = np.round(np.exp(rng.normal(np.log(30000), 0.4, n)))
    m = int(0.06 * n)
    income[:m] = np.round(10 ** rng.uniform(5, 8, m))
    return pd.DataFrame({"income": income, "kind": rng.choice(["a", "b"], n)})


def test_a_heavy_tail_is_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The incomes' tail is spread thinly (see :func:`_incomes`): without the rule the
    bounds of seeds 0 to 3 clip 2.4% to 6.1% of the values; with it, on at least two seeds
    the bounds reach the whole tail, never less far than without it, and never more than
    two buckets past the data (``5 10^8``: a side's false moves are at most 0.25% each)."""
    df = _incomes(6000, 0)
    clipped, tops = {}, {}
    for flag in (False, True):
        monkeypatch.setattr(domain_learning, "TAIL_REACH", flag)
        for s in range(4):
            d, _, _ = _learn(df, s)
            income = d["income"]
            assert isinstance(income, Numeric)
            tops[flag, s] = income.edges[-1]
            clipped[flag, s] = float((df["income"] > income.edges[-1]).mean())
    assert min(clipped[False, s] for s in range(4)) > 0.02, clipped
    assert sum(clipped[True, s] == 0 for s in range(4)) >= 2, clipped
    assert all(tops[False, s] <= tops[True, s] <= 5e8 for s in range(4)), tops


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_neighbouring_tables_charge_the_same(
    neighbours: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule reads the bounds' noisy counts only: neighbouring tables (``n``, ``n + 1``;
    one record replaced) are charged the same, and the same as without the rule."""
    monkeypatch.setattr(domain_learning, "TAIL_REACH", True)
    (_, _, la), (_, _, lb) = learned_neighbours(_incomes(3001, 1), 2, neighbours)
    monkeypatch.setattr(domain_learning, "TAIL_REACH", False)
    (_, _, lc), _ = learned_neighbours(_incomes(3001, 1), 2, neighbours)
    assert _charges(la) == _charges(lb) == _charges(lc)
