"""Rules of the domain learning that a held-out table of a new shape (KDD Cup 99: rates in
[0, 1] written with two decimals, counts whose mass sits on two adjacent values) showed
wrong, ``docs/learn.md`` ("A held-out table of a new shape: KDD Cup 99"): a point mass
beside a larger one is an atom; a column of whole numbers with a share of fractional values
is not integer; codes are whole numbers; a bound across 0 from the mode's side needs a
strong bucket. Each is post-processing of noisy counts already drawn (no mechanism
changed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpquery.data import Numeric
from dpquery.domain_learning import (
    ATOM_PEAK,
    ATOM_SHARE,
    BOUND_CROSS_RATE,
    BOUND_FALSE_RATE,
    DECIMALS_FRACTION_MASS,
    DECIMALS_MASS,
    DECIMALS_SIGMAS,
    _atoms,
    across_zero,
    learn_domain,
    precision_of,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.privacy.partition_selection import Selection
from dpquery.privacy.quantiles import bucket_threshold, magnitude_buckets


def _probe(released: dict) -> Selection:
    return Selection(released, discrete_gaussian_sigma2(1.0, 1.0), 100, 1.0, 1e-9)


# --- atoms beside a larger atom -----------------------------------------------------------------
def test_a_point_mass_beside_a_larger_one_is_an_atom():
    # srv_count: 511 holds 46%, 510 5.5% and 509 far less: 510 is a point mass of its own,
    # once 511 (decided first, the most frequent) is one; before, 510 < 1.5 x 511 kept it out
    counts = {"511": 22900, "510": 2740, "509": 120, "1": 3860, "2": 1930, "3": 1400}
    assert _atoms(_probe(counts), 50000, 0) == [1.0, 510.0, 511.0]
    # 509 would need ATOM_PEAK times 508's count besides ATOM_SHARE of the records
    assert _atoms(_probe({**counts, "509": 1500, "508": 1400}), 50000, 0) == [1.0, 510.0, 511.0]
    assert _atoms(_probe({**counts, "509": 1500, "508": 900}), 50000, 0) == [
        1.0, 509.0, 510.0, 511.0
    ]  # fmt: skip
    assert 1500 >= ATOM_SHARE * 50000 and 1500 >= ATOM_PEAK * 900
    # a decaying run from a point mass: each value that stands ATOM_PEAK above the next
    assert _atoms(_probe({**counts, "3": 1200, "4": 1000}), 50000, 0) == [1.0, 2.0, 510.0, 511.0]


def test_atoms_still_leave_a_smooth_run_alone():
    # ages: the most frequent is no atom, so none of its neighbours is excused from the peak
    ages = _probe({str(a): 500 + 10 * (a % 3) for a in range(20, 60)})
    assert _atoms(ages, 20000, 0) == []
    # a value beside an atom still needs the peak over its other neighbour
    assert _atoms(_probe({"40": 9000, "41": 800, "42": 700}), 20000, 0) == [40.0]
    assert _atoms(_probe({"40": 9000, "41": 800, "42": 500, "43": 450}), 20000, 0) == [40.0, 41.0]


# --- the precision of a column of whole numbers and fractions ----------------------------------
def test_precision_reads_the_fractional_classes_together():
    sigma = 316.0  # KDD's column precision noise at epsilon 1 (42 columns)
    # srv_diff_host_rate: 94.6% written 0 or 1, 1% with one decimal, 4.4% with two: no
    # class beside 0 holds DECIMALS_MASS, the fractional ones together do
    rate = [47322, 496, 2182, 0, 0]
    assert max(rate[1:]) < DECIMALS_MASS * sum(rate)
    assert sum(rate[1:]) >= max(DECIMALS_FRACTION_MASS * sum(rate), DECIMALS_SIGMAS * sigma * 2)
    assert precision_of(rate, sigma) == 2
    # the sum within 4 sd of its noise (sigma * sqrt(4)) of 0: integers
    assert precision_of([49135, 23, 842, 0, 0], sigma) == 0
    assert precision_of([50000, 300, -200, 250, 100], sigma) == 0
    # under DECIMALS_FRACTION_MASS of the total: integers, however precise the noise
    assert precision_of([10**6, 3000, 4000, 0, 0], 10.0) == 0
    # a class alone holding DECIMALS_MASS decides, as before
    assert precision_of([20000, 3000, 0, 0, 0], sigma) == 1
    assert precision_of([100, 0, 5000, 0, 0], sigma) == 2
    # no single fractional class clears its floor: the largest of them
    assert precision_of([10**6, 7000, 7500, 1000, 1000], 2000.0) == 2
    assert precision_of([0, 0, 0, 0, 0], sigma) == 0 and precision_of([-5, -3, 0, 0, 0], 1.0) == 0


def _rate_table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A rate written with two decimals whose 0.00 and 1.00 are 95.5% of the values (no
    fractional class holds DECIMALS_MASS alone), and a count of connections whose mass sits
    on 511 (46%) and 510 (6%), the rest spread over 1..400."""
    kind = rng.choice(3, size=n, p=[0.93, 0.025, 0.045])
    frac = rng.integers(1, 100, size=n) / 100
    rate = np.where(kind == 0, 0.0, np.where(kind == 1, 1.0, frac))
    spread = rng.integers(1, 401, size=n)
    count = np.where(kind == 0, rng.choice([511, 510, 0], size=n, p=[0.5, 0.065, 0.435]), 0)
    count = np.where(count == 0, spread, count)
    return pd.DataFrame({"rate": [f"{x:.2f}" for x in rate], "count": [str(c) for c in count]})


def test_a_rate_and_adjacent_point_masses_learned_from_a_raw_table():
    """A regression test for the two rules on a whole learning under add/remove: the rate
    comes out with 2 decimals (before: integer, ``[0, 1]`` one bin or codes 0 and 1) and 510
    and 511 are both atoms. Seeded; at this rho the noise of the decimals histogram has sd
    about 10 against fractional counts of about 8,000, and of the probe about 7 against 510's
    6% of 100,000 records: a false failure needs a draw many sd out (rate below 1e-9)."""
    rng = np.random.default_rng(0)
    df = _rate_table(100_000, rng)
    dom, report = learn_domain(df, rho=0.01, delta=1e-9, rng=np.random.default_rng(1),
                               ledger=Ledger(Budget.zcdp(1.0)), neighbours=ADD_REMOVE)  # fmt: skip
    rate, count = dom["rate"], dom["count"]
    assert isinstance(rate, Numeric) and rate.decimals == 2 and not rate.integer
    assert isinstance(count, Numeric) and count.integer
    atoms = {c.name: c.noisy.get("atoms") for c in report.columns}
    assert {510.0, 511.0} <= set(atoms["count"])
    assert 0.0 in atoms["rate"]


# --- codes are whole numbers ------------------------------------------------------------------
def test_a_rate_of_few_frequent_values_is_a_quantity_not_a_code():
    """KDD's diff_srv_rate: 0.00, 0.05, 0.06 and 0.07 hold 98% of the values, the rest spread
    thinly over 0.08 .. 1.00. The probe releases the four and they hold CODE_MASS; before, the
    column was categorical over them and every other rate came back as the catch-all text.
    A key with a fraction is no code: the column is numeric, with 2 decimals and its point
    masses as atoms. Seeded; the probe's noise has sd about 22 against counts of at least
    3,900 and the unreleased values' about 11 each against a threshold near 140: no draw
    within 6 sd changes the outcome (false-failure rate below 1e-8)."""
    rng = np.random.default_rng(3)
    n = 100_000
    rate = rng.choice([0.0, 0.05, 0.06, 0.07], size=n, p=[0.78, 0.04, 0.11, 0.07])
    spread = rng.random(n) < 0.01
    rate[spread] = rng.integers(8, 101, int(spread.sum())) / 100
    df = pd.DataFrame({"rate": [f"{x:.2f}" for x in rate],
                       "flag": [f"{x:.2f}" for x in rng.choice([0.0, 1.0], size=n)]})  # fmt: skip
    dom, report = learn_domain(df, rho=0.01, delta=1e-9, rng=np.random.default_rng(0),
                               ledger=Ledger(Budget.zcdp(1.0)), neighbours=ADD_REMOVE)  # fmt: skip
    rule = {c.name: c.rule for c in report.columns}
    assert isinstance(dom["rate"], Numeric) and dom["rate"].decimals == 2, rule["rate"]
    assert rule["rate"].startswith("quantity")
    assert {0.0, 0.06, 0.07} <= set(report.columns[0].noisy["atoms"])
    # 0.00 and 1.00 are whole numbers: a 0/1 flag written with decimals is still a code
    assert rule["flag"].startswith("code:") and dom["flag"].size == 3


# --- a bound across 0 from the mode's side ---------------------------------------------------
def test_a_bound_across_zero_needs_a_strong_bucket_on_the_side_the_mode_lacks():
    """KDD's dst_host_same_srv_rate (all in [0, 1], seed 10 of the release after the rules
    above): one empty bucket ``[-2, -1)`` drawn above the 1% false rate's threshold gave a
    lower bound of -2. The bounds' noisy counts are hand-made here (no draw)."""
    buckets = magnitude_buckets(min_exponent=-2)
    k = buckets.size - 1
    rho = 2e-5  # about a KDD column's bounds share: noise sd 224
    usual, strict = (bucket_threshold(rho, k, r) for r in (BOUND_FALSE_RATE, BOUND_CROSS_RATE))
    assert 3.6 * 224 < usual < 3.7 * 224 < 4.6 * 224 < strict < 4.8 * 224

    def at(x: float) -> int:  # the bucket holding x
        return int(np.searchsorted(buckets, x, side="right") - 1)

    noisy = np.zeros(k, dtype=np.int64)
    noisy[at(1.0)], noisy[at(0.05)], noisy[at(-1.5)] = 35000, 9000, usual + 10
    lo, hi = float(buckets[at(-1.5)]), 2.0  # private_bounds: [-2, 2)
    assert across_zero(lo, hi, buckets, noisy, strict) == (0.0, 2.0)
    noisy[at(-1.5)] = strict  # as strong as the cross rate asks: kept
    assert across_zero(lo, hi, buckets, noisy, strict) == (-2.0, 2.0)
    noisy[at(-0.3)] = strict  # the lowest strong bucket sets the bound
    noisy[at(-1.5)] = usual
    assert across_zero(lo, hi, buckets, noisy, strict) == (-0.5, 2.0)
    # a mode below 0 and a weak positive bucket: the upper bound stops at 0
    neg = np.zeros(k, dtype=np.int64)
    neg[at(-50.0)], neg[at(30.0)] = 20000, usual
    assert across_zero(-100.0, 50.0, buckets, neg, strict) == (-100.0, 0.0)
    neg[at(30.0)] = strict
    assert across_zero(-100.0, 50.0, buckets, neg, strict) == (-100.0, 50.0)
    # bounds on the mode's side of 0 are as they were
    assert across_zero(0.0, 2.0, buckets, noisy, strict) == (0.0, 2.0)
    assert across_zero(0.5, 2.0, buckets, noisy, strict) == (0.5, 2.0)
