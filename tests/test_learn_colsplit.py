"""The learning's budget at many columns (``docs/learn.md``, "Tables of many columns or few
rows"): a small table's finer histogram of a narrow band takes its cell count from the
band's noisy mass (:func:`mass_cells`), and (tried, off) a table refused only when neither a
category nor a numeric column's bounds could pass at half of its records (:func:`bounds_need`). The
rules against hand values, the charges on neighbouring tables under add/remove. The refusal
on a number's bounds is off by default (``REFUSE_ON_BOUNDS``); its tests turn it on."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_smalltab import _learn

import dpquery.domain_learning as dl
from dpquery.domain_learning import (
    FINE_CELLS,
    FINE_FILL,
    MIN_SMALL_SHARE,
    WITHIN_SHARE,
    bounds_need,
    check_learnable,
    column_rho,
    fine_cells,
    learn_budget,
    mass_cells,
    size_limits,
)
from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import magnitude_buckets

_SAFETY = 1.0 - 1e-9


def _tail(sigma2: float, t: int) -> float:
    """P(Z >= t) for the discrete Gaussian of variance parameter ``sigma2``, summed by hand."""
    w = [math.exp(-k * k / (2 * sigma2)) for k in range(-2000, 2001)]
    return sum(w[2000 + t :]) / sum(w)


# --- the finer histogram's cells, from the band's noisy mass ------------------------------
def test_mass_cells_hand_values():
    """rho 0.0002 at L2 1: sigma^2 = 1 / (2 rho) = 2,500, a cell's sd 50. FINE_FILL (16)
    cells a sd: a band of noisy mass 1,000 takes at most 16 x 1,000 / 50 = 320 cells, of 149
    47 (16 x 2.98 = 47.68, floored), of 3 none but one (0.96), of a negative mass (noise
    alone) one, of 10^6 the cap, FINE_CELLS."""
    assert FINE_FILL == 16.0
    assert mass_cells(1000.0, 0.0002, 1.0) == 320
    assert mass_cells(149.0, 0.0002, 1.0) == 47
    assert mass_cells(3.0, 0.0002, 1.0) == 1
    assert mass_cells(-5.0, 0.0002, 1.0) == 1
    assert mass_cells(1e6, 0.0002, 1.0) == FINE_CELLS
    # at L2 sqrt(2) the sd is sqrt(2) times larger: 16 x 1,000 / 70.71 = 226.3
    assert mass_cells(1000.0, 0.0002, math.sqrt(2)) == 226


def test_fine_cells_take_the_most_cells_given():
    """Pressures' band [1000, 2000] at integers: at most 20 cells are cells of 50 (widths
    1, 2, 5, 10, 20, 50: 1,000 / 50 = 20), at most 9 cells of 200 (1,000 / 100 = 10 > 9), at
    most 1 cell the whole band; by default (1,000 cells) cells of 1, by powers of 10 alone."""
    assert fine_cells(1000.0, 2000.0, 0, 20).tolist() == [1000.0 + 50.0 * i for i in range(21)]
    assert fine_cells(1000.0, 2000.0, 0, 9).tolist() == [1000.0 + 200.0 * i for i in range(6)]
    assert fine_cells(1000.0, 2000.0, 0, 1).tolist() == [1000.0, 2000.0]
    assert fine_cells(1000.0, 2000.0, 0).size == 1001
    assert fine_cells(1000.0, 5000.0, 0).size == 401  # 4,000 steps: cells of 10, as before
    # a price band [1, 5] at 2 decimals: 400 steps; at most 20 cells: 0.02, 0.05, 0.1, 0.2
    cells = fine_cells(1.0, 5.0, 2, 20)
    assert cells.size == 21 and cells[1] == pytest.approx(1.2)


# --- the refusal: a category or a number's bounds ------------------------------------------
def test_bounds_need_hand_values():
    """A column's rho 0.0095 (add/remove, L2 1): its bounds get 80% (all but the profile's
    and the precision's 10% each), sigma^2 = 1 / (2 x 0.0076) = 65.79; over the integers' 62
    magnitude buckets at a 1% false rate, P(Z >= 29) = 2.19e-4 > 0.01 / 62 = 1.61e-4 >=
    P(Z >= 30) = 1.37e-4: 30 records in one bucket."""
    assert magnitude_buckets(min_exponent=0).size - 1 == 62
    s2 = 1 / (2 * 0.8 * 0.0095)
    assert _tail(s2, 29) > 0.01 / 62 >= _tail(s2, 30)
    assert bounds_need(0.0095, 1.0) == 30


@pytest.fixture
def on_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal on a number's bounds too (``REFUSE_ON_BOUNDS``, off by default)."""
    monkeypatch.setattr(dl, "REFUSE_ON_BOUNDS", True)


def test_the_default_refuses_on_a_categorys_threshold():
    """``REFUSE_ON_BOUNDS`` off (measured, docs/learn.md): the limits of before, 70 and 98
    records (test_learn_small's hand values)."""
    assert dl.REFUSE_ON_BOUNDS is False
    assert size_limits(0.06, 6e-6, 6, add_remove=True) == (350, 70)
    assert size_limits(0.06, 6e-6, 6, add_remove=False) == (490, 98)


@pytest.mark.usefixtures("on_bounds")
def test_size_limits_and_check_learnable_refuse_on_what_nothing_passes():
    """rho 0.06 over 6 columns, tail 1e-6 a column (the hand values of test_learn_small):
    add/remove, rho_c 0.0095: a category needs tau = 35, a number's bounds 30 (above): small
    below 350 records, refused below 30 / 0.5 = 60 (70 on the category's threshold alone).
    Replace-one, rho_c 0.01 at L2 sqrt(2): tau 49, bounds 41 (sigma^2 = 2 / 0.016 = 125):
    refused below 82 (98 before)."""
    per = 0.0095 * _SAFETY
    assert partition_threshold(1 / (2 * per), 1e-6) == 35
    assert size_limits(0.06, 6e-6, 6, add_remove=True) == (350, 60)
    assert check_learnable(60, per, 1e-6, noisy=True, sensitivity=1.0) is True
    with pytest.raises(DPQueryError, match=r"about 59 records .*a number's bounds need 30.*"
                                           r"at least 60 records"):  # fmt: skip
        check_learnable(59, per, 1e-6, noisy=True, sensitivity=1.0)
    s2 = 2 / (2 * 0.8 * 0.01)
    assert _tail(s2, 40) > 0.01 / 62 >= _tail(s2, 41)
    assert bounds_need(0.01 * _SAFETY, math.sqrt(2)) == 41
    assert size_limits(0.06, 6e-6, 6, add_remove=False) == (490, 82)
    assert check_learnable(82, 0.01 * _SAFETY, 1e-6) is True
    with pytest.raises(DPQueryError, match=r"81 records are too few"):
        check_learnable(81, 0.01 * _SAFETY, 1e-6)
    # the limit is the smaller need: never more than the category's alone
    tau = partition_threshold(1 / (2 * per), 1e-6)
    assert size_limits(0.06, 6e-6, 6, True)[1] == math.ceil(
        min(tau, bounds_need(per, 1.0)) / MIN_SMALL_SHARE
    )


def _wide(n: int, seed: int = 0) -> pd.DataFrame:
    """A table of 22 numeric columns (500 to 999) and two text columns of names."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{i}": rng.integers(500, 1000, n).astype(str) for i in range(22)})
    df["name"] = [f"person {i}" for i in range(n)]
    df["town"] = [f"town {i % 400}" for i in range(n)]
    return df


@pytest.mark.usefixtures("on_bounds")
def test_a_table_a_category_cannot_serve_is_learned_on_neighbours():
    """At epsilon 0.5 over 24 columns (add/remove) a category needs 711 records and a
    number's bounds 424: tables of 1,135 and 1,134 records (half of them 567), refused on
    the category's threshold before, are learned: the numbers bounded, the names all
    ``<other>``, each column charged its hand-computed share. Seeded; the noisy ``n`` (sd
    94) leaves ``(848, 1422)`` with probability 0.2%."""
    b = learn_budget(0.5, 1e-9)
    rho = (1 - WITHIN_SHARE) * 0.4 * b.rho
    per = column_rho(rho, 24, True)
    assert partition_threshold(1 / (2 * per), b.delta_tail / 24) == 711
    assert bounds_need(per, 1.0) == 424
    base = _wide(1135)
    for df in (base, base.iloc[1:]):
        domain, report, ledger, (rho, *_) = _learn(df, ADD_REMOVE, seed=5, epsilon=0.5)
        assert report.small
        assert domain["name"].values == ("<other>",)
        rule = next(c.rule for c in report.columns if c.name == "name")
        # (its selection spends 90% of the column's rho, after the profile: above 711)
        assert re.search(r"every value <other>: a value needs [\d,]+ records, over half", rule)
        for c in ("x0", "x21"):
            assert domain[c].edges[0] <= 500 and domain[c].edges[-1] >= 999
        first = [e.charge.cost.rho for e in ledger.entries  # (the pool's draws apart)
                 if e.charge.mechanism.startswith("name:") and "second" not in
                 e.charge.mechanism]  # fmt: skip
        assert math.fsum(first) == pytest.approx(per)


@pytest.mark.parametrize("seed", range(5))
def test_a_pressure_band_of_a_small_table_gets_finer_edges_on_neighbours(seed):
    """Pressures of 1,001 to 1,038 hPa in a small table (1,000 records, 12 columns: the
    bounds ``[1000, 2000]``). Under add/remove the finer histogram takes at most 16 cells
    a noise sd of its noisy mass (about 16 x 1,000 / 45: cells of 5 hPa), so its run, the
    eight cells of ``[1000, 1040]`` holding about 125 records each, is kept and the
    pressures are cut inside it; charged the
    same pool share as before on tables of ``n`` and ``n + 1`` records. False failures: six
    false steps past the data (1.6e-8 a learning), or a run short of its mass at noise of
    several sd."""
    rng = np.random.default_rng(100 + seed)
    df = pd.DataFrame({f"x{i}": rng.integers(0, 3, 1001).astype(str) for i in range(11)})
    df["pressure"] = np.round(rng.uniform(1001.0, 1038.0, 1001), 1).astype(str)
    for table in (df.iloc[1:], df):
        domain, report, ledger, (rho, *_) = _learn(table, ADD_REMOVE, seed)
        col = next(c for c in report.columns if c.name == "pressure")
        assert report.small and "fine_rho" in col.noisy
        fine = col.noisy["fine_bounds"]
        # (past 1070: six false steps of cells of 5 hPa at 5% each, 1.6e-8 a learning)
        # (cells of 5 or 10 hPa; an end cell of a quarter of the records may fall short)
        assert fine is not None and 1000.0 <= fine[0] <= 1010.0 and 1030.0 <= fine[1] <= 1070.0
        edges = domain["pressure"].edges  # (the bounds' 8 equal widths: 1000, 1125, ...)
        assert edges[0] <= 1010.0 and edges[1] <= 1020.0 and sum(e < 1040 for e in edges) >= 4
        charges = [e.charge.cost.rho for e in ledger.entries
                   if e.charge.mechanism.startswith("pressure: finer bounds")]  # fmt: skip
        assert charges == [pytest.approx(col.noisy["fine_rho"])]
        assert ledger.spent <= rho * (1 + 1e-9) + report.second_pool_rho + report.lent_rho


def test_replace_one_keeps_the_finer_histograms_cells():
    """Under replace-one the band's cells are FINE_CELLS' (the releases stay as they were):
    the pressures' finer histogram is drawn over cells of 1 hPa."""
    rng = np.random.default_rng(100)
    df = pd.DataFrame({f"x{i}": rng.integers(0, 3, 1000).astype(str) for i in range(11)})
    df["pressure"] = np.round(rng.uniform(1001.0, 1038.0, 1000), 1).astype(str)
    _, report, _, _ = _learn(df, REPLACE_ONE, 0)
    col = next(c for c in report.columns if c.name == "pressure")
    assert "fine_rho" in col.noisy and col.noisy["fine_bounds"] is None
