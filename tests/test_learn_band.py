"""A band far from 0 in a table that is not small (``docs/learn.md``, "Held-out tables, a
second set", "A band far from 0 in a large table"): bounds within :data:`NARROW_RATIO` of
each other that hold more than :data:`MAX_LATTICE` steps of the precision (a decimal year
2000.0 to 2015.5 inside the bucket ``[2000, 5000)``) are narrowed by a finer histogram from
half the quantiles' share (:func:`_fine_run`, charged before it draws), and the quantiles'
candidates are the band's fine cells (:func:`fine_cells`) instead of the log grid, whose
points 2000 and 2100 held every value. The candidates against hand values (a function of
the bounds and precision alone), the rule firing on such a band only, and the charges on
neighbouring tables under both relations against hand-computed shares."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery.data import Categorical, Numeric
from dpquery.domain_learning import (
    BAND_SHARE,
    BOUND_FALSE_RATE,
    BOUND_WINDOW,
    BOUNDS_SHARE,
    DECIMALS_SHARE,
    FAR_WINDOW_RATE,
    PROBE_SHARE,
    PROFILE_SHARE,
    column_rho,
    far_windows,
    fine_cells,
    learn_domain,
    quantile_candidates,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import bucket_threshold, magnitude_buckets, signed_log_grid


def _grid(lo: float, hi: float, decimals: int) -> np.ndarray:
    g = signed_log_grid(decimals=decimals)
    return np.unique(np.r_[lo, hi, g[(g > lo) & (g < hi)]])


# --- the candidates: a function of the bounds and precision alone ---------------------------
def test_a_band_takes_its_fine_cells_as_candidates():
    # a decimal year narrowed to [2000, 2020] at 4 decimals: cells of 0.1 (200 <= 1,000)
    cands = quantile_candidates(2000.0, 2020.0, 4)
    tenths = np.array([round(2000 + u / 10, 1) for u in range(201)])
    assert np.array_equal(cands, np.unique(np.r_[_grid(2000.0, 2020.0, 4), tenths]))
    assert {2003.1, 2012.7, 2015.5} <= set(cands.tolist())
    # before: the bounds alone (the grid has no point between 2000 and 2100)
    assert quantile_candidates(2000.0, 2020.0, 4, fine=False).tolist() == [2000.0, 2020.0]
    # the years' bucket [2000, 5000] of integers: its cells of 10, inside the bounds
    cells = fine_cells(2000.0, 5000.0, 0)
    cands = quantile_candidates(2000.0, 5000.0, 0)
    assert np.array_equal(cands, np.unique(np.r_[_grid(2000.0, 5000.0, 0), cells]))
    assert 2010.0 in set(cands.tolist()) and cands.min() == 2000 and cands.max() == 5000
    # the same bounds give the same candidates: no data is an argument


def test_other_bounds_keep_their_candidates():
    # from 0, wider than a factor of 10 (above or below 0), or within the lattice: as before
    # (a band below 0 takes its cells as its mirror does: tests/test_learn_negative_band.py)
    for lo, hi, d in [(0.0, 5000.0, 0), (100.0, 5000.0, 0), (-5000.0, -200.0, 0),
                      (50.0, 100.0, 1), (58.0, 65.0, 1), (0.0, 1e6, 0)]:  # fmt: skip
        cands = quantile_candidates(lo, hi, d)
        g = _grid(lo, hi, d)
        if (hi - lo) * 10**d <= 1000 and not lo <= 0 <= hi:  # the lattice, as before
            assert cands.size == round((hi - lo) * 10**d) + 1
        else:
            assert np.array_equal(cands, g), (lo, hi, d)


# --- the rule in a learning ----------------------------------------------------------------
def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """txhousing's shape: a month's decimal year (twelfths, 2000.0 to 2015.5, written to 4
    decimals), its year (2000 to 2015), and a skewed amount (not a band)."""
    rng = np.random.default_rng(seed)
    month = rng.integers(0, 187, n)  # January 2000 to July 2015
    date = 2000 + month / 12
    return pd.DataFrame({
        "year": (2000 + month // 12).astype(str),
        "date": [f"{x:.4f}" for x in date],
        "sales": np.round(rng.lognormal(5, 1, n)).astype(int).astype(str),
    })  # fmt: skip


RHO = 0.003  # a release's learning at epsilon 1 on a table of this size (not small)


def _learn(df: pd.DataFrame, relation: str, seed: int = 3):
    ledger = Ledger(Budget.zcdp(RHO))
    domain, report = learn_domain(df, rho=RHO, delta=1e-10, rng=np.random.default_rng(seed),
                                  ledger=ledger, neighbours=relation)  # fmt: skip
    return domain, report, ledger


def _band_share(relation: str, columns: int = 3) -> float:
    """By hand: a quantity's share of its column's rho after the profile, probe, precision
    and bounds, halved (0.1 of the column's rho at the default shares)."""
    rest = (1 - PROFILE_SHARE - PROBE_SHARE) * column_rho(RHO, columns, relation == ADD_REMOVE)
    decimals = DECIMALS_SHARE / (1 - PROFILE_SHARE)
    return BAND_SHARE * (1 - BOUNDS_SHARE) * (1 - decimals) * rest


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_a_large_tables_band_is_narrowed_on_neighbouring_tables(relation):
    """On neighbouring tables of ``n`` and ``n + 1`` records (add/remove), or one record
    replaced, the decimal year's bounds (inside ``[2000, 5000)``) are narrowed by a finer
    histogram charged its hand-computed share (0.1 of the column's rho) before it draws;
    the date's edges fall inside the data (every inner edge below 2020; before, all but one
    above 2100), the year comes out as its codes 2000..2015, and the amount, no band, has
    no finer histogram. The learning spends at most its rho. Seeded: at this rho a cell of
    10 years holds at least 70 noise sd, so the run of two cells is found and passes its checks
    but for a rate below 1e-6; the quantiles' rank error is a few hundred records against
    bins of 1,000."""
    base = _table(16_000)
    other = base.copy()
    other.loc[0, ["year", "date"]] = ["2015", "2015.5000"]
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    for df in tables:
        domain, report, ledger = _learn(df, relation)
        assert not report.small
        cols = {c.name: c for c in report.columns}
        charges = {e.charge.mechanism: e.charge.cost.rho for e in ledger.entries
                   if "finer bounds" in e.charge.mechanism}  # fmt: skip
        # the date's band; the year's too when the probe did not code it (a thin year)
        assert "date: finer bounds (discrete Gaussian histogram)" in charges, charges
        assert all(k.split(":")[0] in ("date", "year") for k in charges)
        for rho in charges.values():
            assert rho == pytest.approx(_band_share(relation))
        date = domain["date"]
        assert isinstance(date, Numeric)
        assert date.edges[0] == 2000.0 and date.edges[-1] <= 2030.0, date.edges
        assert all(e < 2020.0 for e in date.edges[1:-1]) and len(date.edges) >= 10
        assert cols["date"].noisy["band_bounds"] is not None
        # the quantity spends its column's rho, the band's part included
        assert cols["date"].rho == pytest.approx(column_rho(RHO, 3, relation == ADD_REMOVE))
        year = domain["year"]
        assert isinstance(year, Categorical)
        assert set(range(2000, 2016)) <= set(year.values) and 2100 not in year.values
        assert "band_bounds" not in cols["sales"].noisy
        assert ledger.spent <= RHO * (1 + 1e-12)
        assert report.rho == pytest.approx(ledger.spent)


def test_no_band_no_finer_histogram():
    """A table without a band far from 0 (an amount from 0, a count from 1, and a taxi
    fare's total of 6 to 45 with cents, whose buckets ``[5, 50]`` the rule at 0 takes to 0):
    nothing charged for a finer histogram, and no band read."""
    df = _table(16_000).drop(columns=["year", "date"])
    rng = np.random.default_rng(1)
    df["count"] = rng.integers(1, 40, len(df)).astype(str)
    df["total"] = [f"{x:.2f}" for x in np.clip(rng.lognormal(2.6, 0.4, len(df)), 6, 45)]
    _, report, ledger = _learn(df, ADD_REMOVE)
    assert not [e for e in ledger.entries if "finer bounds" in e.charge.mechanism]
    assert all("band_bounds" not in c.noisy for c in report.columns)
    assert next(c for c in report.columns if c.name == "total").noisy["bounds"][0] == 0.0


def test_a_declared_numeric_year_gets_edges_on_the_years():
    """A year declared numeric (no code by range) in the bucket ``[2000, 5000)``: its
    narrowed bounds end by 2030 and its inner edges lie among the years, its finer
    histogram charged the hand-computed share as the date's. Seeded (rates as above)."""
    domain, _, ledger = _learn_typed(_table(16_000))
    year = domain["year"]
    assert isinstance(year, Numeric) and year.edges[0] == 2000.0 and year.edges[-1] <= 2030.0
    assert all(e <= 2016.0 for e in year.edges[1:-1]) and len(year.edges) >= 8, year.edges
    charges = [e.charge.cost.rho for e in ledger.entries if "finer bounds" in e.charge.mechanism]
    assert charges == [pytest.approx(_band_share(ADD_REMOVE))] * 2


def _learn_typed(df: pd.DataFrame):
    ledger = Ledger(Budget.zcdp(RHO))
    domain, report = learn_domain(df, rho=RHO, delta=1e-10, rng=np.random.default_rng(4),
                                  ledger=ledger, neighbours=ADD_REMOVE,
                                  types={"year": "numeric"})  # fmt: skip
    return domain, report, ledger


# --- a window far from the mode --------------------------------------------------------------
def _year_counts() -> tuple[np.ndarray, np.ndarray, float]:
    """txhousing's year bounds histogram on a seed whose window test passed far above the
    data (the noisy counts as drawn, the others 0), at the rho giving its thresholds: 267
    for a bucket, 461 for a run of three."""
    buckets = magnitude_buckets(min_exponent=0)
    noisy = np.zeros(buckets.size - 1, dtype=np.int64)
    at = {2000.0: 8587, 1000.0: 96, 1e7: 56, 2e7: 160, 5e7: 256, 1e8: 23, 2e8: 80}
    for start, count in at.items():
        noisy[int(np.flatnonzero(buckets == start)[0])] = count
    return buckets, noisy, 9.13e-5


def test_far_window_hand_values():
    buckets, noisy, rho = _year_counts()
    k = buckets.size - 1
    assert bucket_threshold(rho, k, BOUND_FALSE_RATE, 1.0) == 267
    one = discrete_gaussian_sigma2(rho, 1.0)
    runs = k - BOUND_WINDOW + 1
    assert partition_threshold(one * 3, BOUND_FALSE_RATE / runs) == 461
    strict = partition_threshold(one * 3, FAR_WINDOW_RATE / runs)
    assert strict == 597 and 56 + 160 + 256 < strict  # 472 passed the 1% test, not this
    # the union-bound bounds reach 10^8 through the window; far_windows drops it
    lo, hi = 2000.0, 1e8
    assert far_windows(lo, hi, buckets, noisy, rho, 1.0) == (2000.0, 5000.0)
    # the same run strong enough: kept, and the empty buckets between with it
    strong = noisy.copy()
    strong[int(np.flatnonzero(buckets == 5e7)[0])] = strict
    assert far_windows(lo, hi, buckets, strong, rho, 1.0) == (2000.0, 1e8)
    # a far bucket passing alone: kept at the stricter rate only (the decimal year's [1, 2),
    # noisy 277 against 267 here, dropped; one at the 1e-4 threshold kept)
    single = bucket_threshold(rho, k, FAR_WINDOW_RATE, 1.0)
    assert single == 346
    low = noisy.copy()
    low[:] = 0
    low[int(np.flatnonzero(buckets == 2000.0)[0])] = 8587
    low[int(np.flatnonzero(buckets == 1.0)[0])] = 277
    assert far_windows(1.0, 5000.0, buckets, low, rho, 1.0) == (2000.0, 5000.0)
    low[int(np.flatnonzero(buckets == 1.0)[0])] = single
    assert far_windows(1.0, 5000.0, buckets, low, rho, 1.0) == (1.0, 5000.0)


def test_a_window_next_to_the_mode_stays():
    """A thin tail just above the mode's bucket, passing as a window of three (300, 100, 80
    of a bucket threshold 267 and a window's 461): next to the mode, so the bounds keep it;
    bounds with no window are returned as they are."""
    buckets, noisy, rho = _year_counts()
    tail = np.zeros_like(noisy)
    i = int(np.flatnonzero(buckets == 2000.0)[0])
    tail[i] = 8587
    tail[i + 1 : i + 4] = [200, 150, 120]
    assert far_windows(2000.0, 5e4, buckets, tail, rho, 1.0) == (2000.0, 5e4)
    plain = np.zeros_like(noisy)
    plain[i] = 8587
    assert far_windows(2000.0, 5000.0, buckets, plain, rho, 1.0) == (2000.0, 5000.0)


def test_a_mode_at_zero_keeps_its_far_run():
    """credit_data's debts: the bucket of 0 the mode (82% of the values), the rest spread
    thinly over 100 to 5,000, found by a window of noisy 578 that passes the 1% test alone:
    an amount's shape, kept (the zero rule of the bounds, not a band's)."""
    buckets = magnitude_buckets(min_exponent=0)
    noisy = np.zeros(buckets.size - 1, dtype=np.int64)
    for start, count in {0.0: 3809, 500.0: 116, 1000.0: 198, 2000.0: 264}.items():
        noisy[int(np.flatnonzero(buckets == start)[0])] = count
    rho = 5.86e-5
    k = buckets.size - 1
    one = discrete_gaussian_sigma2(rho, 1.0)
    assert partition_threshold(one * 3, BOUND_FALSE_RATE / (k - 2)) == 575
    assert partition_threshold(one * 3, FAR_WINDOW_RATE / (k - 2)) == 745
    assert far_windows(0.0, 5000.0, buckets, noisy, rho, 1.0) == (0.0, 5000.0)
