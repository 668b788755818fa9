"""A date column whose years' histogram has no year (nor run of three) above its threshold is
bounded by wider windows of the same noisy counts (docs/learn.md, "Tables of many columns or
few rows")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning as learning
from dpquery.data import Numeric
from dpquery.data.dates import iso_cell
from dpquery.domain_learning import (
    BOUND_FALSE_RATE,
    TIME_WIDE_WINDOWS,
    learn_domain,
    wide_time_run,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.partition_selection import partition_threshold


def _year(y: int) -> float:
    cell = iso_cell(f"{y:04d}-01-01")
    assert cell is not None
    return float(cell[0])


YEARS = np.array([_year(y) for y in range(1800, 2201)])  # the years' 400 buckets


def test_wide_windows_by_hand():
    """Noise variance 1 a year: a window of ``w`` years passes when its noisy sum reaches the
    threshold an empty window's sum (variance ``w``) reaches with BOUND_FALSE_RATE over the
    ``401 - w`` windows; the narrower width is tried first, and the bounds are the union of
    the passing windows of that width."""
    assert TIME_WIDE_WINDOWS == (10, 40)
    k = YEARS.size - 1
    t10 = partition_threshold(10, BOUND_FALSE_RATE / (k - 10 + 1))
    t40 = partition_threshold(40, BOUND_FALSE_RATE / (k - 40 + 1))
    assert 4.0 * 10**0.5 <= t10 <= 4.2 * 10**0.5 + 1  # about 4.1 sd of the sum's noise
    noisy = np.zeros(k, dtype=np.int64)
    assert wide_time_run(noisy, YEARS, 1) is None
    noisy[206:212] = 0  # 2006 to 2011
    noisy[206], noisy[211] = t10 // 2, t10 - t10 // 2  # sum t10 over six years
    lo, hi, out = wide_time_run(noisy, YEARS, 1)  # type: ignore[misc]
    # the windows of ten years holding both 2006 and 2011: starting 2002 to 2006
    assert (lo, hi) == (_year(2002), _year(2016))
    assert out is noisy
    noisy[211] -= 1  # one short of t10: no window of ten passes, nor of forty (t40 > t10)
    assert t40 > t10
    assert wide_time_run(noisy, YEARS, 1) is None
    noisy[:] = 0
    noisy[[100, 120, 139]] = -(-t40 // 3)  # 1900, 1920, 1939: together t40 at least
    assert noisy[100] < t10  # no ten years pass; forty pass only from 1900 to 1939
    lo, hi, _ = wide_time_run(noisy, YEARS, 1)  # type: ignore[misc]
    assert (lo, hi) == (_year(1900), _year(1940))
    # the variance scales the threshold: the same counts at variance 4 pass no window
    assert wide_time_run(noisy, YEARS, 4) is None


def _dates(n: int, seed: int) -> pd.DataFrame:
    """``n`` dates spread over 2006 to 2011 (london_murders' form) beside a category."""
    rng = np.random.default_rng(seed)
    lo, hi = _year(2006), _year(2012)
    t = lo + rng.integers(0, int(hi - lo) // 86400, n) * 86400
    return pd.DataFrame({"when": pd.to_datetime(t, unit="s").strftime("%Y-%m-%d"),
                         "kind": rng.choice(["a", "b"], n)})  # fmt: skip


@pytest.mark.parametrize("wide", [False, True])
def test_a_small_tables_dates_are_bounded_by_wide_windows(monkeypatch, wide):
    """800 dates of six years at a rho where no year passes on this seed (a year's noise sd
    near 59, its threshold near 240, about 133 records a year): without the wide windows the
    column is one bin over the whole axis; with them it is bounded around the data, at most
    a window's width beyond it on each side. The charges are the same (post-processing)."""
    if not wide:
        monkeypatch.setattr(learning, "wide_time_run", lambda *a: None)
    ledger = Ledger(Budget.zcdp(1.0))
    dom, report = learn_domain(_dates(800, 2), rho=0.0015, delta=1e-9,
                               rng=np.random.default_rng(2), ledger=ledger,
                               neighbours="add-remove")  # fmt: skip
    assert report.small
    attr = dom["when"]
    assert isinstance(attr, Numeric)
    lo, hi = attr.edges[0], attr.edges[-1]
    if not wide:
        assert (lo, hi) == (_year(1800), _year(2200))
    else:
        assert _year(2006 - 9) <= lo <= _year(2006) and _year(2012) <= hi <= _year(2012 + 9)
    names = [e.charge.mechanism for e in ledger.entries]
    assert "when: bounds, years (discrete Gaussian histogram)" in names


def test_neighbours_are_charged_alike():
    """Tables of ``n`` and ``n + 1`` dates (add/remove), real noise: the same charges (names,
    counts, costs) whether or not the wide windows bound the column."""
    big = _dates(801, 3)
    charges = []
    for df in (big.iloc[:800], big):
        ledger = Ledger(Budget.zcdp(1.0))
        learn_domain(df.reset_index(drop=True), rho=0.0015, delta=1e-9,
                     rng=np.random.default_rng(2), ledger=ledger,
                     neighbours="add-remove")  # fmt: skip
        charges.append([(e.charge.mechanism, e.charge.count, e.charge.cost)
                        for e in ledger.entries])  # fmt: skip
    assert charges[0] == charges[1]
