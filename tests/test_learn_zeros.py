"""A point mass at 0 apart from the bounds (:func:`~dpquery.domain_learning.zero_mode_run`,
docs/learn.md, "A point mass at 0 apart from the bounds"), bounds holding one integer read
as codes (:func:`~dpquery.domain_learning._range_codes`), and a small table's growth across
one thin bucket (:data:`~dpquery.domain_learning.BOUND_SKIP_RATE`). Post-processing of the
bounds' noisy counts and the profile's count: no further cost."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from tests.test_learn_grown_past import EDGES, _at, _counts

from dpquery.data.domain import Categorical, Numeric
from dpquery.domain_learning import (
    BOUND_FALSE_RATE,
    BOUND_SKIP_RATE,
    BOUND_STEP_RATE,
    _range_codes,
    grown_past,
    learn_domain,
    zero_mode,
    zero_mode_run,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import (
    ADD_REMOVE_BOUND_SENSITIVITY,
    grown_bounds,
    magnitude_buckets,
)

RHO = 3.4218e-05  # noise sd about 121 counts at L2 1
ONE = float(discrete_gaussian_sigma2(RHO, ADD_REMOVE_BOUND_SENSITIVITY))
STEPS = (float(partition_threshold(ONE, BOUND_STEP_RATE)), math.inf)  # a large table's steps


def test_the_thresholds():
    """Hand-checked: a bucket's noise sd is about 121 counts, the rest's test (the profile's
    count less the bucket of 0, sd sqrt(121^2 + 121^2) = 171) about 2.33 sd, 399 counts;
    a run's (sd 209) 488."""
    assert round(math.sqrt(ONE)) == 121
    assert partition_threshold(2 * ONE, BOUND_FALSE_RATE) == 399
    assert partition_threshold(3 * ONE, BOUND_FALSE_RATE) == 488


def test_the_rest_of_a_point_mass_at_0_is_bounded_apart():
    """A debt column: the bucket of 0 the mode (3,600), ``[1, 2)`` empty, the rest over
    ``[200, 10000)``; the bounds grown from 0 stopped at ``[0, 1]``. The largest run,
    ``[500, 5000)`` (850), is found and grown up by ``[5000, 10000)`` (290 passes a step's
    282), not down (``[200, 500)``, 100); the profile's count puts 1,300 beyond the bucket
    of 0."""
    noisy = _counts(b0=3600, b200=100, b500=300, b1000=300, b2000=250, b5000=290, b20000=-90)
    assert zero_mode(EDGES, noisy) == _at(0)
    run = zero_mode_run(noisy, EDGES, (4900, math.sqrt(ONE)), ONE, STEPS, hi=1.0)
    assert run == (_at(500), _at(5000))
    # the rest not seen: the profile's count within the noise of the bucket of 0's
    assert zero_mode_run(noisy, EDGES, (3900, math.sqrt(ONE)), ONE, STEPS, hi=1.0) is None


def test_no_run_where_the_rule_does_not_fire():
    """The mode elsewhere; the largest run below a run's test (the rest seen but not
    placed); the largest run reached by the bounds already (a 0/1 flag's ``[1, 2)``)."""
    elsewhere = _counts(b0=300, b100=900, b200=800)
    assert zero_mode(EDGES, elsewhere) is None
    assert zero_mode_run(elsewhere, EDGES, (2000, math.sqrt(ONE)), ONE, STEPS, 1.0) is None
    thin = _counts(b0=3600, b50=150, b100=150, b200=150)  # 450 < 488
    assert zero_mode_run(thin, EDGES, (4900, math.sqrt(ONE)), ONE, STEPS, 1.0) is None
    flag = _counts(b0=3000, b1=2000)
    assert zero_mode_run(flag, EDGES, (5000, math.sqrt(ONE)), ONE, STEPS, hi=2.0) is None


def _debts(n: int = 5000, share: float = 0.18) -> pd.DataFrame:
    """82% zeros, the rest log-uniform over [100, 50,000): no value from 1 to 99."""
    rng = np.random.default_rng(5)
    k = int(share * n)
    values = np.concatenate([np.zeros(n - k), np.round(10 ** rng.uniform(2, 4.7, k))])
    return pd.DataFrame({"debt": values.astype(int).astype(str)})


def test_a_debt_column_keeps_its_rest_and_its_0():
    """At rho 0.0005 (add/remove; not a small table) the bounds grown from the bucket of 0
    stop at the empty ``[1, 2)``: without the rule 103 of 200 seeds (1000..1199) kept a top
    of 1,000 or more, with it 179 (0.895). Seeded: 40 runs, at least 29 (the mean at 0.895
    is 35.8, sd 1.9: a false failure below 1e-3); without the rule about 20.6 pass. Each
    numeric release holds 0 as an atom: a bin ``[0, 1)``."""
    df = _debts()
    kept = 0
    for s in range(40):
        domain, report = learn_domain(df, rho=0.0005, delta=1e-9, ledger=Ledger(Budget.zcdp(1e6)),
                                      rng=np.random.default_rng(1000 + s),
                                      neighbours=ADD_REMOVE)  # fmt: skip
        assert "small table" not in report.columns[0].rule
        attr = domain["debt"]
        if isinstance(attr, Numeric):
            kept += attr.edges[-1] >= 1000
            assert attr.edges[:2] == (0.0, 1.0)
    assert kept >= 29


def test_one_integer_in_the_bounds_makes_two_codes_and_other():
    """Bounds ``[0, 1]`` (the bucket of 0 alone) of an integer column: codes 0 and 1 and
    the catch-all, not a bin ``[0, 1]`` decoded as 0 or 1 about equally; ``[3, 4]``: 3
    and 4. Two integers and more are as they were."""
    coded = _range_codes("reports", (0.0, 1.0), has_missing=False)
    assert coded is not None
    attr, learned = coded
    assert isinstance(attr, Categorical)
    assert attr.values == (0, 1, "<other>") and attr.other == "<other>"
    assert "2 codes 0..1" in learned
    attr3 = _range_codes("x", (3.0, 4.0), has_missing=True)
    assert attr3 is not None and attr3[0].values[:3] == (3, 4, "<other>")
    assert _range_codes("x", (0.0, 3.0), has_missing=False)[0].values == (0, 1, 2, "<other>")
    assert _range_codes("x", (0.0, 200.0), has_missing=False) is None


def test_growth_crosses_one_thin_bucket_to_a_run_that_passes():
    """A small table's share column (counts as seed 10's, noise sd 42.7): growth down from
    the mode ``[0.02, 0.05)`` takes ``[0.01, 0.02)`` (119 >= 71), fails at ``[0.005, 0.01)``
    (21) and at the run below it (3 + 94 + 21 = 118 < 123), then crosses it: the run beyond,
    ``[0.0005, 0.005)``, sums 94 + 3 + 94 = 191 >= 173 (1%); ``[0.0002, 0.0005)`` (191)
    joins, ``[0.0001, 0.0002)`` (27) and the runs below (across 0) do not. Without the
    crossing (the default) the run stops at 0.01."""
    edges = magnitude_buckets(min_exponent=-4)
    at = {float(e): i for i, e in enumerate(edges[:-1])}
    noisy = np.zeros(edges.size - 1, dtype=np.int64)
    counts = {0.0001: 27, 0.0002: 191, 0.0005: 94, 0.001: 3, 0.002: 94, 0.005: 21,
              0.01: 119, 0.02: 323, 0.05: 195, 0.1: 181, 0.2: 98, 0.5: 48}  # fmt: skip
    for start, c in counts.items():
        noisy[at[start]] = c
    one = 42.7**2
    skip = partition_threshold(3 * one, BOUND_SKIP_RATE)
    assert skip == 173
    grow = (71.0, 123.0)
    zero = at[0.0]
    crossed = grown_bounds(noisy, 158, *grow, 3, zero, skip)
    assert crossed is not None and edges[crossed[0]] == 0.0002
    assert edges[crossed[1] + 1] == 0.5  # [0.5, 1): 48 fails, and the runs beyond it
    plain = grown_bounds(noisy, 158, *grow, 3, zero)
    assert plain is not None and edges[plain[0]] == 0.01
    # the thin bucket's run beyond below the 1% test: no crossing
    noisy[at[0.0005]] = 60  # 60 + 3 + 94 = 157 < 173
    short = grown_bounds(noisy, 158, *grow, 3, zero, skip)
    assert short is not None and edges[short[0]] == 0.01


def test_a_large_table_crosses_a_thin_bucket_only_at_the_strict_rate():
    """Growth past a large table's union bounds has no run test (``window_threshold``
    infinite); it crosses one thin bucket only to a bucket beyond whose noisy count alone
    reaches :func:`~dpquery.domain_learning.large_skip` (451 here, at 1e-4; a small table's
    crossing is a run's at 1%): 900 does, then grows by steps; 450 does not."""
    noisy = _counts(b100=900, b200=100, b500=900, b1000=900)
    lo, hi = grown_past(100.0, 200.0, EDGES, noisy, RHO, ADD_REMOVE_BOUND_SENSITIVITY)
    assert (lo, hi) == (100.0, 2000.0)
    noisy = _counts(b100=900, b200=100, b500=450, b1000=900)
    lo, hi = grown_past(100.0, 200.0, EDGES, noisy, RHO, ADD_REMOVE_BOUND_SENSITIVITY)
    assert (lo, hi) == (100.0, 200.0)


def test_no_codes_from_the_stand_in_bounds():
    """No bounds found: ``[0, 1]`` stands in for them and makes no codes."""
    assert _range_codes("deck", (0.0, 1.0), has_missing=True, single=False) is None
