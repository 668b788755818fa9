"""A small table's band whose values sit on a few points with empty cells between them
(hospitals' latitudes and longitudes): the finer run looked for again on coarser cells, the
finer histogram's noisy counts summed (:func:`~dpquery.domain_learning.coarser_run`,
:data:`~dpquery.domain_learning.GAPPED_RUNS`), only where the band holds the column's numbers
(:func:`~dpquery.domain_learning.whole_band`); a band below 0 read as its mirror
(:data:`~dpquery.domain_learning.SMALL_BELOW`); a gapped run kept only on a band of point
masses, a smooth band's buckets left alone (:func:`~dpquery.domain_learning.point_band`,
:data:`~dpquery.domain_learning.POINT_BANDS`). The sums and the rules by hand, no charge of
the gapped run's own, the band below 0's charge from the pool, and seeded rates on generated
cells and tables; docs/learn.md, "Points in a band far from 0 in a small table: a gapped
run"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from tests.test_learn_short_run import _largest_bin
from tests.test_learn_short_run import _learn as learn_column

import dpquery.domain_learning as dl
from dpquery.domain_learning import (
    COARSER_MIN_CELLS,
    FINE_SIGMAS,
    ROUGH_SIGMAS,
    coarser_cells,
    coarser_run,
    fine_cells,
    point_band,
    roughness,
    whole_band,
)
from dpquery.privacy import Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE, Neighbours
from dpquery.privacy.quantiles import discrete_gaussian_sigma2

RHO = 3.0e-4  # a small table's band's finer histogram at epsilon 1 under add/remove: sd 40.8


def test_the_sums_by_hand():
    """20 cells of 1 over ``[0, 20]``: summed 2 at a time, 10 cells of 2 and their sums; 3
    at a time, 7 cells (the last of 2), fewer than ``COARSER_MIN_CELLS`` (8): None. A core's
    outer cells stay cells of their own, the band's summed between them."""
    cells = np.arange(0.0, 21.0)
    noisy = np.arange(20, dtype=np.int64) - 5
    merged = coarser_cells(cells, noisy, 2, False, False)
    assert merged is not None
    assert merged[0].tolist() == list(np.arange(0.0, 21.0, 2.0))
    assert merged[1].tolist() == [noisy[i] + noisy[i + 1] for i in range(0, 20, 2)]
    assert COARSER_MIN_CELLS == 8 and coarser_cells(cells, noisy, 3, False, False) is None
    outer = np.concatenate([[-100.0], cells, [500.0]])  # a core's outer cells a side
    counts = np.concatenate([[7], noisy, [9]]).astype(np.int64)
    both = coarser_cells(outer, counts, 2, True, True)
    assert both is not None
    assert both[0].tolist() == [-100.0, *np.arange(0.0, 21.0, 2.0).tolist(), 500.0]
    assert both[1].tolist() == [7, *merged[1].tolist(), 9]
    assert int(both[1].sum()) == int(counts.sum())  # every count in one sum


def test_whole_band_by_hand():
    """The band's noisy mass holds the column's noisy count of numbers when their difference
    is at most ``FINE_SIGMAS`` (2) sd of it: sds 30 and 40 give 50, so a count 100 above the
    band's mass passes and 101 above fails; a band holding more than the count passes."""
    assert FINE_SIGMAS == 2.0
    assert whole_band((1400.0, 30.0), (1500.0, 40.0))
    assert not whole_band((1399.0, 30.0), (1500.0, 40.0))
    assert whole_band((1700.0, 30.0), (1500.0, 40.0))


def _hospitals(lo: float, hi: float, points: list[float], counts: list[int], seed: int,
               sd: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The finer cells of a band ``[lo, hi]`` at two decimals (at most 300 cells) and noisy
    counts: ``counts[i]`` records at ``points[i]``, plus Gaussian noise of sd ``sd`` rounded
    (seeded), as a small table's finer histogram reads them."""
    cells = fine_cells(lo, hi, 2, 300)
    true = np.zeros(cells.size - 1, dtype=np.int64)
    for p, c in zip(points, counts, strict=True):
        true[int(np.searchsorted(cells, p, side="right")) - 1] += c
    noise = np.round(np.random.default_rng(seed).normal(0.0, sd, true.size)).astype(np.int64)
    return cells, true + noise


# 12 hospitals' latitudes in [37.3, 40.4] (a state's), 1,459 records, gaps of empty 0.1-cells
POINTS = [37.31, 37.78, 37.79, 38.35, 38.42, 38.93, 39.27, 39.29, 39.63, 39.65, 40.06, 40.40]
COUNTS = [60, 110, 90, 260, 140, 90, 150, 70, 200, 120, 99, 70]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_gapped_band_by_hand(sign: float):
    """Latitudes of 12 hospitals (1,459 records, 60 to 260 each) in the band ``[20, 50]``,
    cells of 0.1 at a small table's noise (sd 40.8, seed 0): the run from the mode stops at
    an empty cell (``[39.6, 39.7]``), short of the band's mass; summed 2 and 5 cells at a
    time the runs still fall short; summed 10 at a time (cells of 1) the run ``[37, 40]``
    holds the band's mass within 2 sd (noisy 1,196 of 1,459: the cell ``[40, 41)`` drew 86
    for its 169) and leaves at most a quarter of it outside (``GAPPED_REST``): kept. A band
    below 0 (longitudes: the mirror cells of ``[-50, -20]``, the same noise mirrored) gives
    the mirror run ``[-40, -37]``."""
    sd = math.sqrt(float(discrete_gaussian_sigma2(RHO, 1.0)))
    assert sd == pytest.approx(40.8, abs=0.05)
    cells, noisy = _hospitals(20.0, 50.0, POINTS, COUNTS, 0, sd)
    if sign < 0:
        cells, noisy = -cells[::-1], noisy[::-1]
    assert cells.size == 301
    band = (float(sum(COUNTS)), math.sqrt(4 * sd**2))  # the band's bucket mass: 4 buckets' sd
    fine = dl._run_kept(noisy, cells, RHO, 1.0, band, False, False)
    assert fine is not None and not fine[1]  # the finer run alone is refused
    for f in (2, 5):
        merged = coarser_cells(cells, noisy, f, False, False)
        assert merged is not None
        short = dl._run_kept(merged[1], merged[0], RHO / f, 1.0, band, False, False)
        assert short is not None and not short[1]
    run = coarser_run(cells, noisy, RHO, 1.0, band, False, False)
    assert run is not None
    assert run[0] == ((37.0, 40.0) if sign > 0 else (-40.0, -37.0))
    assert run[1][1] - run[1][0] == pytest.approx(1.0)  # cells of 1: 10 summed
    # the band's noisy mass at 1,800: the run's 1,196 leave 604 of it, more than a quarter
    # (GAPPED_REST: 450), and the sums of 20 (1,292 in [36, 40]) leave 508: none
    assert dl.GAPPED_REST == 0.25
    assert coarser_run(cells, noisy, RHO, 1.0, (1800.0, band[1]), False, False) is None
    # a band that is not held (a signed column's bounds short of 0): no gapped run is read
    assert not whole_band(band, (2 * float(sum(COUNTS)), sd))


def atom_table(rng: np.random.Generator, n: int = 1500, points: int = 22, lo: float = 37.3,
               hi: float = 40.4, columns: int = 10) -> tuple[pd.DataFrame, np.ndarray]:  # fmt: skip
    """A generated table of ``n`` records (every cell text, as a CSV is read): ``lat``,
    ``points`` values at two decimals drawn from ``[lo, hi)`` with Dirichlet(2) shares (a
    state's hospitals' latitudes; ``lo``, ``hi`` below 0 for longitudes); a count 1 to 60;
    ``columns - 2`` 0/1 flags. Returns the table and ``lat`` as numbers."""
    grid = np.round(np.arange(round(lo * 100), round(hi * 100)) / 100, 2)
    pts = np.sort(rng.choice(grid, size=points, replace=False))
    v = rng.choice(pts, size=n, p=rng.dirichlet(np.full(points, 2.0)))
    df = {"lat": [f"{x:.2f}" for x in v],
          "count": [str(x) for x in rng.geometric(0.1, size=n).clip(1, 60)]}  # fmt: skip
    for j in range(columns - 2):
        df[f"flag{j}"] = [str(x) for x in (rng.random(n) < 0.3 + 0.05 * j).astype(int)]
    return pd.DataFrame(df), v


def _learn(df: pd.DataFrame, seed: int, neighbours: Neighbours = ADD_REMOVE
           ) -> tuple[tuple[float, ...], Ledger, bool]:  # fmt: skip
    """``lat``'s edges, the ledger and whether the table is small, from a release's learning
    at epsilon 1 (the short run's tests' learning)."""
    return learn_column(df, seed, neighbours, "lat")


def _both(df: pd.DataFrame, seed: int, flag: str, neighbours: Neighbours = ADD_REMOVE
          ) -> tuple[tuple[tuple[float, ...], Ledger, bool], ...]:  # fmt: skip
    try:
        on = _learn(df, seed, neighbours)
        setattr(dl, flag, False)
        off = _learn(df, seed, neighbours)
    finally:
        setattr(dl, flag, True)
    return on, off


def test_the_gapped_run_spends_nothing():
    """The same charges, amount for amount, with the gapped run on and off, on a generated
    table where it fires (seed 2000's table, learned on seed 0) and on its neighbour of
    ``n - 1`` records: sums of the finer histogram already charged. With the rule the band's
    inner edges lie in ``[37, 41]`` and no bin holds more than half of the values; without it
    one does (the band ``[20, 50]`` cut in equal widths). Under replace-one the rule is off:
    the same edges and charges."""
    df, v = atom_table(np.random.default_rng(2000))
    for table in (df, df.iloc[1:]):
        on, off = _both(table, 0, "GAPPED_RUNS")
        assert on[2] and off[2]  # a small table
        assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]
        assert any("finer bounds" in e.charge.mechanism for e in on[1].entries)
        assert all(37.0 <= e <= 41.0 for e in on[0][1:-1])
        assert _largest_bin(on[0], v) <= 0.5 < _largest_bin(off[0], v)
    on, off = _both(df, 0, "GAPPED_RUNS", REPLACE_ONE)
    assert on[0] == off[0]
    assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]


def _finer(ledger: Ledger) -> list[float]:
    return [e.charge.cost.rho for e in ledger.entries  # type: ignore[union-attr]
            if "lat: finer bounds" in e.charge.mechanism]  # fmt: skip


def test_a_band_below_zero_draws_from_the_pool():
    """Longitudes of 22 hospitals in ``[-91.5, -88.4)`` (1,500 records, every value below 0):
    with the rule the band ``[-100, -50]`` draws a finer histogram, one charge from the pool,
    on the table and on its neighbour of ``n - 1`` records alike; its amount is a function
    of public facts and noisy counts (at most the pool, at most the column's own rho: the
    ledger admits it within the learning's budget, whose total is the same with the rule
    and without). Without the rule no finer histogram is drawn and the band is cut in the
    bucket's equal widths (one bin holds more than half); with it not. Under replace-one the
    rule is off: the same edges and charges."""
    df, v = atom_table(np.random.default_rng(3000), lo=-91.5, hi=-88.4)
    for table in (df, df.iloc[1:]):
        on, off = _both(table, 0, "SMALL_BELOW")
        assert on[2] and off[2]
        assert len(_finer(on[1])) == 1 and _finer(off[1]) == []
        assert on[1].budget.rho == off[1].budget.rho  # the learning's total: the same
        assert on[1].totals.rho_native <= on[1].budget.rho  # type: ignore[operator]
        assert all(-92.0 <= e <= -88.0 for e in on[0][1:-1])
        assert _largest_bin(on[0], v) <= 0.5 < _largest_bin(off[0], v)
    on, off = _both(df, 0, "SMALL_BELOW", REPLACE_ONE)
    assert on[0] == off[0]
    assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]


def test_a_signed_column_short_of_zero_is_left_alone():
    """A coordinate from -16.7 to 75.6 (a third of it below 20, 1,500 records): the bounds a
    small table's run from the mode reaches hold only part of the column's numbers, so no
    gapped run reads them and no band below 0 is drawn: the edges are the same with the
    rules on and off (seeds 0 to 3)."""
    rng = np.random.default_rng(4000)
    n = 1500
    x = np.concatenate([rng.uniform(-16.7, 20.0, n // 3), rng.uniform(60.0, 75.6, n - n // 3)])
    counts = rng.geometric(0.1, size=n).clip(1, 60)
    df = pd.DataFrame({"lat": [f"{a:.1f}" for a in rng.permutation(x)],
                       "count": [str(c) for c in counts]})  # fmt: skip
    for j in range(8):
        df[f"flag{j}"] = [str(c) for c in (rng.random(n) < 0.3 + 0.05 * j).astype(int)]
    for s in range(4):
        try:
            on = _learn(df, s)
            dl.GAPPED_RUNS = dl.SMALL_BELOW = False
            off = _learn(df, s)
        finally:
            dl.GAPPED_RUNS = dl.SMALL_BELOW = True
        assert on[2] and on[0] == off[0]


def test_generated_points_in_a_band_get_bins_inside():
    """Generated tables of points in a band (the generator above; each seed its own table
    and learning), a release's learning at epsilon 1 under add/remove: no learned bin holds
    more than half of the values. Measured over seeds 0 to 39 (docs/learn.md): 22 points in
    ``[37.3, 40.4)`` (latitudes), 36 of 40 with the rules, 2 of 40 without; 22 points in
    ``[-91.5, -88.4)`` (longitudes), 39 of 40 and 0 of 40. The test asks at least 9 of 12
    seeds of each: at a rate of 0.9 it fails with probability 0.026 (binomial), at 0.975
    with 0.0002, both together 0.027; at the rates without the rules (0.05, 0) it cannot
    pass."""
    for lo, hi in ((37.3, 40.4), (-91.5, -88.4)):
        resolved = 0
        for s in range(12):
            df, v = atom_table(np.random.default_rng(2000 + s), lo=lo, hi=hi)
            edges, _, small = _learn(df, s)
            assert small
            resolved += _largest_bin(edges, v) <= 0.5
        assert resolved >= 9, (lo, hi, resolved)


def test_roughness_by_hand():
    """Noisy counts ``[0, 100, 0, 100]`` at noise variance 2,500: three squared differences
    of 10,000, their mean over ``2 * 2500``: 2.0, below ``1 + 2 sqrt(3 / 3) = 3``: not
    points; ``[0, 200, 0, 200]``: 8.0, points. A flat run of equal counts: 0. One cell: no
    differences, never points."""
    assert ROUGH_SIGMAS == 2.0
    assert roughness(np.array([0, 100, 0, 100]), 2500.0) == pytest.approx(2.0)
    assert not point_band(np.array([0, 100, 0, 100]), 2500.0)
    assert roughness(np.array([0, 200, 0, 200]), 2500.0) == pytest.approx(8.0)
    assert point_band(np.array([0, 200, 0, 200]), 2500.0)
    assert roughness(np.full(10, 70), 2500.0) == 0.0
    assert not point_band(np.full(10, 70), 2500.0)
    assert not point_band(np.array([500]), 2500.0) and roughness(np.array([500]), 1.0) == 0.0


def _smooth_cells(seed: int, sd: float, n: int = 1459, mean: float = 44.0, scale: float = 6.0
                  ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The finer cells of the band ``[20, 50]`` (cells of 0.1) and noisy counts of ``n``
    values drawn from a normal (``mean``, ``scale``: a vote share), plus Gaussian noise of sd
    ``sd`` rounded (seeded)."""
    cells = fine_cells(20.0, 50.0, 2, 300)
    rng = np.random.default_rng(seed)
    true = np.histogram(rng.normal(mean, scale, n), cells)[0]
    return cells, true + np.round(rng.normal(0.0, sd, true.size)).astype(np.int64)


def test_a_point_band_cut_a_smooth_band_left_alone():
    """The 12 hospitals' latitudes above (seed 0): the 30 finer cells inside the gapped run
    ``[37, 40]`` have a roughness of 6.57, above ``1 + 2 sqrt(3 / 29) = 1.64``: points, the
    run kept. A vote share, 1,459 values from a normal (44, 6) in the same band at the same
    noise (seed 3): its finer run is refused, and a gapped run ``[36, 44]`` holds three
    quarters of the band's mass, but its 80 finer cells have a roughness of 1.13, below
    ``1 + 2 sqrt(3 / 79) = 1.39``: no gapped run with the rule (the band's buckets stand), the
    run without it."""
    sd = math.sqrt(float(discrete_gaussian_sigma2(RHO, 1.0)))
    cells, noisy = _hospitals(20.0, 50.0, POINTS, COUNTS, 0, sd)
    band = (float(sum(COUNTS)), math.sqrt(4 * sd**2))
    run = coarser_run(cells, noisy, RHO, 1.0, band, False, False)
    assert run is not None and run[0] == (37.0, 40.0)
    fine = (cells[:-1] >= 37.0) & (cells[1:] <= 40.0)
    assert int(fine.sum()) == 30
    assert roughness(noisy[fine], sd**2) == pytest.approx(6.57, abs=0.01)
    assert point_band(noisy[fine], sd**2)
    cells, noisy = _smooth_cells(3, sd)
    band = (1459.0, math.sqrt(4 * sd**2))
    assert dl._run_kept(noisy, cells, RHO, 1.0, band, False, False) is None
    assert coarser_run(cells, noisy, RHO, 1.0, band, False, False) is None
    try:
        dl.POINT_BANDS = False
        run = coarser_run(cells, noisy, RHO, 1.0, band, False, False)
    finally:
        dl.POINT_BANDS = True
    assert run is not None and run[0] == (36.0, 44.0)
    fine = (cells[:-1] >= 36.0) & (cells[1:] <= 44.0)
    assert int(fine.sum()) == 80
    assert roughness(noisy[fine], sd**2) == pytest.approx(1.13, abs=0.01)
    assert not point_band(noisy[fine], sd**2)


def test_point_band_rates_on_generated_cells():
    """Seeded rates of :func:`point_band` at a small table's noise (sd 40.8), 200 draws each
    (seed 0): a smooth band (1,459 values from a normal (44, 6), its 160 cells of 0.1 in
    ``[36, 52]``) is read as points at a rate of 2.3% (46 of 2,000 draws of seed 1 measured:
    the 2 sd test's 2.3% on a flat profile), 12 hospitals (Dirichlet(2) shares of 1,459
    records on points of ``[37, 40)``, its 30 cells) at 100% (2,000 of 2,000). The test asks
    at most 16 of 200 smooth and at least 190 of 200 hospitals: at a smooth rate of 2.3% it
    fails with probability 5e-6 (binomial), at 3.25% with 3.3e-4; at a points rate of 0.99
    with 7e-6. A rule reading every band as points (the gapped run without it) cannot pass."""
    rng = np.random.default_rng(0)
    sd = math.sqrt(float(discrete_gaussian_sigma2(RHO, 1.0)))
    cells = np.round(np.arange(36.0, 52.05, 0.1), 2)
    smooth = 0
    for _ in range(200):
        true = np.histogram(rng.normal(44.0, 6.0, 1459), cells)[0]
        smooth += point_band(true + np.round(rng.normal(0.0, sd, true.size)), sd**2)
    grid = np.round(np.arange(3700, 4000) / 100, 2)
    cells = np.round(np.arange(37.0, 40.05, 0.1), 2)
    points = 0
    for _ in range(200):
        pts = rng.choice(grid, size=12, replace=False)
        v = rng.choice(pts, size=1459, p=rng.dirichlet(np.full(12, 2.0)))
        true = np.histogram(v, cells)[0]
        points += point_band(true + np.round(rng.normal(0.0, sd, true.size)), sd**2)
    assert binom.sf(16, 200, 0.0325) < 4e-4 and binom.cdf(189, 200, 0.99) < 1e-5
    assert smooth <= 16, smooth
    assert points >= 190, points


def smooth_table(rng: np.random.Generator, n: int = 1500, columns: int = 10
                 ) -> tuple[pd.DataFrame, np.ndarray]:  # fmt: skip
    """A generated table as :func:`atom_table`'s, its ``lat`` a smooth column: ``n`` values
    from a normal (44, 6) at two decimals (a vote share)."""
    v = np.round(rng.normal(44.0, 6.0, n), 2)
    df = {"lat": [f"{x:.2f}" for x in v],
          "count": [str(x) for x in rng.geometric(0.1, size=n).clip(1, 60)]}  # fmt: skip
    for j in range(columns - 2):
        df[f"flag{j}"] = [str(x) for x in (rng.random(n) < 0.3 + 0.05 * j).astype(int)]
    return pd.DataFrame(df), v


def test_a_smooth_column_keeps_its_buckets():
    """A smooth column in a small table (seed 5000's table, learned on seed 0): without the
    rule a gapped run cuts it, with it the edges are those with no gapped run at all, on the
    table and on its neighbour of ``n - 1`` records; the charges the same, amount for amount,
    with the rule on and off (a test on noisy counts already drawn). Under replace-one the
    gapped run is off: the same edges and charges."""
    df, _ = smooth_table(np.random.default_rng(5000))
    for table in (df, df.iloc[1:]):
        on, off = _both(table, 0, "POINT_BANDS")
        try:
            dl.GAPPED_RUNS = False
            none = _learn(table, 0)
        finally:
            dl.GAPPED_RUNS = True
        assert on[2] and off[2]  # a small table
        assert on[0] == none[0] != off[0]
        assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]
        assert [e.charge for e in on[1].entries] == [e.charge for e in none[1].entries]
    on, off = _both(df, 0, "POINT_BANDS", REPLACE_ONE)
    assert on[0] == off[0]
    assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]


def test_the_point_rule_spends_nothing_on_points():
    """Points (the table of the charges' test above): the same edges and charges with the
    rule on and off, on the table and its neighbour of ``n - 1`` records: the hospitals'
    band is points, its gapped run kept either way."""
    df, _ = atom_table(np.random.default_rng(2000))
    for table in (df, df.iloc[1:]):
        on, off = _both(table, 0, "POINT_BANDS")
        assert on[0] == off[0]
        assert [e.charge for e in on[1].entries] == [e.charge for e in off[1].entries]
