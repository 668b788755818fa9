"""Rules of the domain learning that seaborn's held-out tables (diamonds, planets) showed
wrong, ``docs/learn.md`` ("Held-out tables of a data scientist's kind"): the quantiles of a
column whose values lie in a narrow range far from 0 take every value of its precision
inside the bounds as a candidate (:func:`quantile_candidates`), and a precision histogram
that no class clears is read as fractional when its fractional classes outweigh the whole
numbers. Both are functions of quantities already released (the private bounds and the
noisy precision histogram): no mechanism changed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpquery.data import Numeric
from dpquery.domain_learning import MAX_LATTICE, learn_domain, precision_of, quantile_candidates
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.privacy.quantiles import quantile_scores, signed_log_grid


# --- the quantiles' candidates --------------------------------------------------------------
def test_narrow_bounds_take_every_value_of_the_precision():
    # a diamond's depth: bounds [50, 100], one decimal: 501 candidates, every tenth
    cands = quantile_candidates(50.0, 100.0, 1)
    assert cands.size == 501 and cands[0] == 50.0 and cands[-1] == 100.0
    assert {61.1, 61.7, 62.3} <= set(cands.tolist())  # floats nearest their decimals
    # the grid alone had whole numbers only between 50 and 100 at one decimal
    grid = signed_log_grid(decimals=1)
    assert 61.1 not in set(grid.tolist()) and 61.0 in set(grid.tolist())


def test_wide_bounds_keep_the_log_grid():
    # more than MAX_LATTICE values of the precision: the grid (and the bounds) as before
    grid = signed_log_grid(decimals=0)
    cands = quantile_candidates(0.0, 1e6, 0)
    assert np.array_equal(cands, np.unique(np.r_[0.0, 1e6, grid[(grid > 0) & (grid < 1e6)]]))
    assert quantile_candidates(0.0, float(MAX_LATTICE + 1), 0).size < MAX_LATTICE
    # at MAX_LATTICE steps exactly, the lattice is taken (every integer 0 .. MAX_LATTICE)
    assert quantile_candidates(0.0, float(MAX_LATTICE), 0).size == MAX_LATTICE + 1
    # ages: the grid holds every integer up to 99 already; nothing changes
    ages = quantile_candidates(0.0, 100.0, 0)
    assert np.array_equal(ages, np.unique(np.r_[0.0, 100.0, grid[(grid > 0) & (grid < 100)]]))


def test_lattice_scores_move_by_at_most_max_alpha_on_an_added_record():
    """The quantiles' exponential mechanism keeps its sensitivity over the finer candidates
    (OpenDP's bound ``max(alpha, 1 - alpha)`` per record): random neighbouring tables of
    ``n`` and ``n + 1`` records (add/remove)."""
    rng = np.random.default_rng(33)
    cands = quantile_candidates(50.0, 100.0, 1)
    for _ in range(200):
        n = int(rng.integers(1, 80))
        x = np.round(rng.normal(61.7, 1.4, size=n), 1)
        y = np.insert(x, int(rng.integers(n + 1)), round(float(rng.normal(61.7, 5.0)), 1))
        for alpha in (0.0625, 0.5, 0.9375):
            a, b = quantile_scores(x, cands, alpha), quantile_scores(y, cands, alpha)
            assert np.abs(a - b).max() <= max(alpha, 1 - alpha) + 1e-12


def _depth(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A depth as diamonds have it (58 to 65 mostly, one decimal) and a price (integers,
    skewed)."""
    depth = np.round(rng.normal(61.75, 1.43, size=n), 1)
    price = np.round(np.exp(rng.normal(7.8, 1.0, size=n))).astype(int)
    return pd.DataFrame({"depth": [f"{x:.1f}" for x in depth], "price": [str(p) for p in price]})


def _learned(df: pd.DataFrame, seed: int) -> dict[str, Numeric]:
    dom, _ = learn_domain(df, rho=0.002, delta=1e-9, rng=np.random.default_rng(seed),
                          ledger=Ledger(Budget.zcdp(1.0)), neighbours=ADD_REMOVE)  # fmt: skip
    return {a.name: a for a in dom.attributes if isinstance(a, Numeric)}


def test_a_narrow_column_gets_bins_finer_than_whole_numbers():
    """On neighbouring tables of 50,000 and 50,001 records (add/remove) the depth's edges
    inside [60, 64] (where 80% of the values are) are not all whole numbers and number at
    least 8 (before: the grid's 60, 61, 62, 63, 64 at most). Seeded; the quantiles'
    exponential mechanism at this rho has a rank error of a few hundred records against
    bins of 3,000: a draw that leaves fewer than 8 edges in the 4 middle units needs most
    of the 15 quantiles off by a bin (rate below 1e-6)."""
    rng = np.random.default_rng(5)
    df = _depth(50_000, rng)
    bigger = pd.concat([df, _depth(1, rng)], ignore_index=True)
    for table in (df, bigger):
        depth = _learned(table, 7)["depth"]
        inner = [e for e in depth.edges if 60.0 < e < 64.0]
        assert depth.decimals == 1 and len(inner) >= 8, depth.edges
        assert any(not float(e).is_integer() for e in inner), depth.edges


# --- the precision of a small table's column --------------------------------------------------
def test_precision_undecided_reads_the_fractions_against_the_whole_numbers():
    sigma = 110.0  # a 1,035-record table of 6 columns at epsilon 1
    # planets' mass (seed 10): no class clears 4 sd, the fractions hold far more than the
    # whole numbers (-31): two decimals, the largest fractional class (before: integer)
    assert precision_of([-31, 184, 418, 295, -176], sigma) == 2
    # the year beside it: the whole numbers clear the floor, integer as before
    assert precision_of([1135, 158, -90, 14, 28], sigma) == 0
    # undecided, and the whole numbers hold more: integer as before
    assert precision_of([143, 296, -686, 119, 345], sigma) == 0
    assert precision_of([300, 100, 150, 0, 0], sigma) == 0
    # a class that clears the floor still decides
    assert precision_of([-31, 184, 600, 295, -176], sigma) == 2
    assert precision_of([0, 0, 0, 0, 0], sigma) == 0
