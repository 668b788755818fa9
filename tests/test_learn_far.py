"""Numbers beyond ``10^10``: the bounds' far buckets (:func:`dpquery.domain_learning.far_reach`,
docs/learn.md "Numbers beyond 10^10"): the grid by hand, the whole histogram's L2 moves on
neighbouring tables, the far buckets' own stream (a table under ``10^10`` learned as without
them), the charges on neighbouring tables, seeded rates of the far mode and of the growth
past ``10^10`` with their false-failure rates, and a CLI round trip of money to ``10^14``
and 15-digit codes written as they were.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_membership import _charges, _learn, learned_neighbours, neighbour_moves

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data.domain import Numeric
from dpquery.domain_learning import (
    BOUND_STEP_RATE,
    FAR_CELLS,
    FAR_EXPONENT,
    FAR_MODE_RATE,
    LARGEST_FAR,
    NEAR_LIMIT,
    _Context,
    far_reach,
    large_skip,
    quantile_candidates,
)
from dpquery.pipeline.learning import LARGEST_BOUND
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import bounds_histogram, bucket_counts, magnitude_buckets

# == the grid, by hand =============================================================================


def test_the_far_buckets_extend_the_near_ones_to_10_to_the_16() -> None:
    """18 buckets a side, ``[10^10, 2 10^10)`` to ``[5 10^15, 10^16)``, outside the near
    buckets unchanged (at every precision); the largest bound is ``10^16``, past ``2^53``."""
    assert FAR_EXPONENT == 15 and FAR_CELLS == 18 and LARGEST_FAR == 1e16 == LARGEST_BOUND
    assert NEAR_LIMIT == 1e10 == float(magnitude_buckets()[-1]) and FAR_MODE_RATE == 1e-3
    assert 2.0**53 < LARGEST_FAR
    for d in (0, 2, 4):
        whole = magnitude_buckets(min_exponent=-d, max_exponent=FAR_EXPONENT)
        assert np.array_equal(whole[FAR_CELLS:-FAR_CELLS], magnitude_buckets(min_exponent=-d))
        assert list(whole[-FAR_CELLS - 1 : -FAR_CELLS + 2]) == [1e10, 2e10, 5e10]
        assert list(whole[:3]) == [-1e16, -5e15, -2e15] and whole[FAR_CELLS] == -1e10


def test_the_quantile_grid_reaches_the_far_bounds_only_for_them() -> None:
    """Bounds beyond ``10^10`` take the log grid's points up to ``9.9 10^15``; bounds within
    it the grid as before (the points beyond lie outside them)."""
    far = quantile_candidates(0.0, 5e13, 2, fine=False)
    assert {1.5e10, 9.9e10, 1e12, 4.9e13} <= set(far) and far[-1] == 5e13
    assert np.all(np.diff(far) > 0)
    near = quantile_candidates(0.0, 1e10, 0, fine=False)
    assert near[-2] == 9.9e9 and near[-1] == 1e10


# == privacy: one record in one cell of the whole histogram ========================================


def _cells(values: list[Any]) -> np.ndarray:
    """The whole histogram of the bounds as drawn: the near buckets count the values within
    ``+-10^10`` alone, the far buckets those beyond it."""
    x = np.asarray(values, dtype=np.float64)
    near_edges = magnitude_buckets(min_exponent=0)
    inside = (x >= -NEAR_LIMIT) & (x < NEAR_LIMIT)
    near = bucket_counts(x[inside], near_edges)
    whole = bucket_counts(x[~inside], magnitude_buckets(0, FAR_EXPONENT))
    f = FAR_CELLS
    return np.concatenate([whole[:f], near, whole[-f:]])


@pytest.mark.parametrize("seed", range(3))
def test_the_whole_histogram_moves_by_l2_1_under_add_remove_and_sqrt2_under_replace_one(
    seed: int,
) -> None:
    """Values on both sides of ``10^10`` (and of 0, and past ``10^16``): 200 random neighbours
    a seed move the near and far cells together by at most L2 1 (add/remove) and ``sqrt(2)``
    (replace-one), and both bounds are reached (the check can fail)."""
    pool = [3.0, 7e9, 9.99e9, 1e10, 3e12, -4e11, -1e10, 2e17, -5.0, 0.0]
    add, rep = neighbour_moves(pool, _cells, seed)
    assert max(add) == 1.0 and max(rep) == pytest.approx(math.sqrt(2))
    assert all(a <= 1.0 for a in add) and all(r <= math.sqrt(2) + 1e-12 for r in rep)


def _near_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "income": np.round(np.exp(rng.normal(10, 1.5, n)), 2),
        "age": rng.integers(18, 90, n),
        "change": np.round(rng.normal(0, 3, n), 1),
        "kind": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_a_table_under_10_to_the_10_is_learned_as_without_the_far_buckets(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The far buckets' noise is a stream of its own, read only when the bounds reach
    ``10^10`` or no near bucket passes: a table whose values stay under ``10^10`` has the
    same domain and charges with the far buckets never read (``far_reach`` returning None,
    the bounds' rules as they were) and with another far stream."""
    df = _near_table(3000, seed)
    domain, _, ledger = _learn(df, seed)
    monkeypatch.setattr(domain_learning, "FAR_STREAM", 0x1234)
    other, _, ledger_other = _learn(df, seed)
    monkeypatch.setattr(domain_learning, "far_reach", lambda *a, **k: None)
    without, _, ledger_without = _learn(df, seed)
    assert domain.to_dict() == other.to_dict() == without.to_dict()
    assert _charges(ledger) == _charges(ledger_other) == _charges(ledger_without)


def _money(n: int, seed: int) -> pd.DataFrame:
    """GDP-like money (log-normal, median 10^11, 1e8 to 1e14 or so, in cents), 15-digit
    census block codes (state 36, five counties, tracts and blocks) and a category."""
    rng = np.random.default_rng(seed)
    county = rng.choice([5, 47, 61, 81, 85], n, p=[0.2, 0.3, 0.2, 0.2, 0.1])
    code = 36 * 10**13 + county * 10**10 + rng.integers(100, 150000, n) * 10**4
    return pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west"], n),
        "gdp": np.round(np.exp(rng.normal(math.log(1e11), 2.3, n)), 2),
        "block": code + rng.integers(1000, 4000, n),
    })  # fmt: skip


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_neighbouring_tables_charge_the_same_and_reach_past_10_to_the_10(neighbours: str) -> None:
    """A table of money to ``10^14`` and 15-digit codes, and its neighbour (``n``, ``n + 1``;
    one record replaced): the same charges (the far buckets are under the near ones'
    charge), and on both the money's bounds pass ``10^12`` and the codes' lie around them."""
    (da, _, la), (db, _, lb) = learned_neighbours(_money(3001, 5), 5, neighbours)
    assert _charges(la) == _charges(lb)
    for d in (da, db):
        gdp, block = d["gdp"], d["block"]
        assert isinstance(gdp, Numeric) and isinstance(block, Numeric)
        assert gdp.edges[0] <= 1e9 and 1e12 < gdp.edges[-1] <= LARGEST_FAR
        assert 2e14 <= block.edges[0] <= 3.6e14 and 3.61e14 <= block.edges[-1] <= 5e14


# == seeded rates ==================================================================================

RHO = 0.002
"""The bounds' rho of the rate tests: noise variance 1 / (2 rho) = 250 at L2 1 (sd 15.8)."""


def _far(values: np.ndarray, found: tuple[float, float] | None, seed: int) -> Any:
    """:func:`far_reach` as a table that is not small reads it, at :data:`RHO` under
    add/remove, the near buckets drawn first (seed ``seed``), the far ones from their stream."""
    rng = np.random.default_rng(seed)
    ledger = Ledger(Budget.zcdp(1.0))
    ctx = _Context(rng, ledger, 16, 1e-10, len(values), l2=1.0, add_remove=True,
                   far_rng=np.random.default_rng([seed, 7]))  # fmt: skip
    inside = (values >= -NEAR_LIMIT) & (values < NEAR_LIMIT)
    edges = magnitude_buckets(min_exponent=0)
    _, noisy = bounds_histogram(values[inside], rho=RHO, rng=rng, ledger=ledger, edges=edges,
                                sensitivity=1.0)  # fmt: skip
    one = discrete_gaussian_sigma2(RHO, 1.0)
    ways = (partition_threshold(one, BOUND_STEP_RATE), math.inf, 1, large_skip(one))
    return far_reach(values, found, 0, noisy, RHO, ctx, ways)


def test_the_far_mode_passes_on_no_empty_column_at_its_rate() -> None:
    """A column of ages (18 to 89) with no near bucket taken (``found`` None): its far
    buckets are empty, and the mode test over the 36 passes with probability at most
    :data:`FAR_MODE_RATE` (1e-3) a seed by the union bound. Seeds 0 to 199: at most 3
    passes; at 1e-3 a seed, 4 or more of 200 have probability below 6e-5 (the test's
    false-failure rate)."""
    ages = np.random.default_rng(0).integers(18, 90, 2000).astype(np.float64)
    passes = sum(_far(ages, None, s) is not None for s in range(200))
    assert passes <= 3


def test_the_far_mode_finds_a_column_wholly_beyond_10_to_the_10() -> None:
    """2,000 values log-uniform in ``[10^11, 10^13)`` (300 to 400 a bucket, 19 noise sd or
    more): on seeds 0 to 19 the far mode passes and the bounds hold ``[10^11, 10^13]``, at
    most two buckets past it a side. A data bucket fails its step (2.3 sd) with probability
    below 1e-50; three false steps in a row past the data (1e-2 each) happen with
    probability 1e-6 a side and seed: false-failure rate below 1e-4."""
    rng = np.random.default_rng(1)
    values = np.round(10 ** rng.uniform(11, 13, 2000))
    for s in range(20):
        got = _far(values, None, s)
        assert got is not None
        (lo, hi), whole, noisy = got
        assert 2e10 <= lo <= 1e11 and 1e13 <= hi <= 5e13
        assert whole[0] == -LARGEST_FAR and noisy.size == whole.size - 1


def test_bounds_at_10_to_the_10_grow_into_the_far_buckets() -> None:
    """Values log-uniform in ``[10^6, 10^13)`` (2,800 values, 400 a decade, 120 to 160 a
    bucket, 7.6 noise sd or more): bounds found up to ``10^10`` grow to ``[10^13, 5 10^13]``
    on seeds 0 to 19. A data bucket fails its step (2.3 sd) when its noise is 5.3 sd low,
    probability 6e-8, at most 180 such steps: 1.1e-5; three false steps in a row past the
    data 1e-6 a seed: false-failure rate below 2e-5. Bounds short of ``10^10`` stay as they
    are."""
    rng = np.random.default_rng(2)
    values = np.round(10 ** rng.uniform(6, 13, 2800))
    for s in range(20):
        got = _far(values, (1e6, 1e10), s)
        assert got is not None and got[0][0] == 1e6 and 1e13 <= got[0][1] <= 5e13
    assert _far(values, (1e6, 5e9), 0) is None


# == a CLI round trip ==============================================================================


def test_a_release_of_money_to_10_to_the_14_and_15_digit_codes_writes_them_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dpquery synth`` from a raw CSV of GDP-like money (in cents, to ``10^14``) and
    15-digit codes: the money comes back past ``10^12`` with at most 2 decimals and no
    exponent, the codes as 15-digit integers (each exactly the integer its float is: no
    rounding) around the real ones; the domain written beside it, given back, releases
    again at no further cost."""
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table = _money(4000, 0)
    table.to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0",
                 "--out", str(out)]) == 0  # fmt: skip
    assert "its bounds reached" not in capsys.readouterr().out
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    gdp, block = released["gdp"], released["block"]
    assert gdp.str.fullmatch(r"\d+(\.\d{1,2})?").all()
    assert pd.to_numeric(gdp).max() > 1e12
    assert block.str.fullmatch(r"36\d{13}").all()
    assert all(float(b) == int(b) for b in block)
    codes = pd.to_numeric(block)
    assert 3.6e14 <= codes.min() and codes.max() <= 3.61e14
    again = tmp_path / "again.csv"
    assert main(["synth", "--data", str(data), "--domain", str(tmp_path / "s.domain.json"),
                 "--epsilon", "1", "--seed", "1", "--out", str(again)]) == 0  # fmt: skip
    assert pd.read_csv(again, dtype=str)["block"].str.fullmatch(r"36\d{13}").all()
