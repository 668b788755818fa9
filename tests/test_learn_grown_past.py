"""A table that is not small: its union-bound bounds grown outward a bucket at a time
(:func:`~dpquery.domain_learning.grown_past`, :func:`~dpquery.privacy.quantiles.grown_run`),
each step a single test at :data:`~dpquery.domain_learning.BOUND_STEP_RATE` (docs/learn.md,
"The bounds grown past the union bound"). Post-processing of the bounds' noisy counts."""

from __future__ import annotations

import numpy as np
import pytest

from dpquery.domain_learning import BOUND_FALSE_RATE, BOUND_STEP_RATE, grown_past
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import (
    BOUND_SENSITIVITY,
    bucket_threshold,
    grown_bounds,
    grown_run,
    magnitude_buckets,
)

# the bounds' rho of one numeric column of a 22-column table of 7,634 records at epsilon 1
# (add/remove, the default domain share): noise sd 171 counts
RHO = 3.4218e-05
EDGES = magnitude_buckets(min_exponent=0)  # an integer column's buckets: [0, 1), [1, 2), ...


def _at(start: float) -> int:
    return int(np.flatnonzero(EDGES[:-1] == start)[0])


def _counts(**by_start: int) -> np.ndarray:
    noisy = np.zeros(EDGES.size - 1, dtype=np.int64)
    for start, count in by_start.items():
        noisy[_at(float(start.lstrip("b")))] = count
    return noisy


def test_the_thresholds_at_the_columns_rho():
    """The numbers the docs quote: the union bound's 616 (3.6 sd over 62 buckets), a single
    step's 399 (2.33 sd)."""
    one = discrete_gaussian_sigma2(RHO, BOUND_SENSITIVITY)
    assert EDGES.size - 1 == 62
    assert bucket_threshold(RHO, 62, BOUND_FALSE_RATE) == 616
    assert partition_threshold(one, BOUND_STEP_RATE) == 399


def test_a_bucket_beside_the_bounds_that_fails_the_union_bound_is_grown_into():
    """Industry codes (170..9920): 3,874 records in [5000, 10000), 694 in [2000, 5000),
    whose noisy count fell to 427 on one draw (below the union bound's 616: the bounds were
    [5000, 10000), clipping those records). Grown from the bounds, 427 passes the single
    step's 399; [1000, 2000) at -27 and the run below it (47 + 148 + 33 < 690) do not."""
    noisy = _counts(b1=579, b100=47, b200=148, b500=33, b1000=-27, b2000=427, b5000=3667)
    assert grown_past(5000.0, 10000.0, EDGES, noisy, RHO) == (2000.0, 10000.0)
    # one count short of the step, and no run: the bounds stay where the union bound left them
    noisy[_at(2000.0)] = 398
    assert grown_past(5000.0, 10000.0, EDGES, noisy, RHO) == (5000.0, 10000.0)


def test_growth_steps_a_bucket_at_a_time_and_stops_at_the_first_failure():
    """Each step tests one bucket; a side stops at its first failure, and a run of buckets
    that together hold far more than a step's 399 is not grown into when its first bucket
    fails alone (runs are not tested past the bounds: they would double the false rate)."""
    noisy = _counts(b100=250, b200=400, b500=399, b1000=400, b2000=700, b5000=3700, b10000=398)
    # [1000, 2000) 400, [500, 1000) 399, [200, 500) 400 pass; [100, 200) 250 fails
    assert grown_past(5000.0, 10000.0, EDGES, noisy, RHO) == (200.0, 10000.0)
    noisy = _counts(b200=398, b500=398, b1000=398, b2000=700, b5000=3700)
    assert grown_past(5000.0, 10000.0, EDGES, noisy, RHO) == (2000.0, 10000.0)


def test_growth_crosses_0_only_on_the_union_bounds_evidence():
    """A bucket below 0 joins only when its count alone reaches the union bound's 616: a
    single step's 399 is not enough to give a non-negative column a negative side."""
    zero = _at(0.0)
    noisy = np.zeros(EDGES.size - 1, dtype=np.int64)
    noisy[zero] = 3000
    noisy[zero - 1] = 500  # [-1, 0): passes a step, not the crossing
    assert grown_past(0.0, 1.0, EDGES, noisy, RHO) == (0.0, 1.0)
    noisy[zero - 1] = 616
    assert grown_past(0.0, 1.0, EDGES, noisy, RHO) == (-1.0, 1.0)


def test_grown_run_is_grown_bounds_from_a_given_run():
    x = np.array([0, 30, 60, 45, 900, 50, 60, 0, 0])
    assert grown_bounds(x, 500, 40, 150, 3) == grown_run(x, (4, 4), 500, 40, 150, 3)
    assert grown_run(x, (3, 5), 500, 100, 1000, 3) == (3, 5)  # nothing passes: the run itself
    with pytest.raises(PrivacyParameterError, match=r"run \(5, 3\)"):
        grown_run(x, (5, 3), 500, 40, 150, 3)
    with pytest.raises(PrivacyParameterError, match=r"run \(0, 9\)"):
        grown_run(x, (0, 9), 500, 40, 150, 3)


def test_growth_rarely_lands_beyond_the_data_and_usually_finds_a_bucket_beside_it():
    """Seeded draws of the histogram's noise (rounded normal, sd 171) on a column whose
    records fill [2000, 5000) (700, 4.1 sd) and [5000, 10000) (3,700): the union bound
    misses [2000, 5000) in about a third of the draws, the growth in about 5%. Beyond the
    data ([1000, 2000) below, [10000, 20000) above) the growth lands by a false step, at
    most 0.01 per side, or by the union bound's false bucket (at most 0.01 per draw): 800
    sides and 400 draws, mean at most 12, sd at most 3.5; the bound 35 fails falsely with
    probability below 1e-6. The misses: 400
    draws at p = 0.05 (the step's power, P(Z >= -1.76)), mean 20, sd 4.4; the bound 45 fails
    falsely below 1e-6, and the union bound's misses (p = 0.32, mean 128) exceed 90 with
    probability above 0.999."""
    rng = np.random.default_rng(33)
    sigma = float(discrete_gaussian_sigma2(RHO, BOUND_SENSITIVITY)) ** 0.5
    union = bucket_threshold(RHO, EDGES.size - 1, BOUND_FALSE_RATE)
    true = _counts(b2000=700, b5000=3700)
    beyond = missed_grown = missed_union = 0
    for _ in range(400):
        noisy = true + np.round(rng.normal(0, sigma, true.size)).astype(np.int64)
        occupied = np.flatnonzero(noisy >= union)
        if occupied.size == 0:
            continue
        lo, hi = float(EDGES[occupied[0]]), float(EDGES[occupied[-1] + 1])
        missed_union += lo > 2000.0
        glo, ghi = grown_past(lo, hi, EDGES, noisy, RHO)
        missed_grown += glo > 2000.0
        beyond += (glo < 2000.0) + (ghi > 10000.0)
    assert beyond <= 35
    assert missed_grown <= 45
    assert missed_union >= 90
