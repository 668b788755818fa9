"""A small table's second step (``docs/learn.md``, "Tables too small for the budget"): the
pool, with the decoding weights' part a small table lends it, buys a second category
selection over the tails its number-like columns left unused and a finer histogram of its
narrow bands (a discovery year inside ``[1000, 5000]``). The rules against hand values, the
charges against hand-computed shares on neighbouring tables under both relations, and the
release's rho in the pipeline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpquery.domain_learning import (
    FINE_CELLS,
    LATTICE_SHARE,
    LEARNING_NOISY_N_SHARE,
    SECOND_SHARE,
    SMALL_BORROW_SHARE,
    WITHIN_SHARE,
    column_rho,
    fine_cells,
    learn_budget,
    learn_domain,
    narrow_band,
    second_plan,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import combined_threshold

_SAFETY = 1.0 - 1e-9


def test_narrow_band_hand_values():
    assert narrow_band(1000.0, 5000.0, 0)  # the years' bucket: 4,000 whole numbers
    assert narrow_band(500.0, 5000.0, 0)  # a factor of 10 exactly
    assert not narrow_band(200.0, 5000.0, 0)  # wider than a factor of 10
    assert not narrow_band(0.0, 5000.0, 0)  # from 0
    assert not narrow_band(-5000.0, -1000.0, 0)  # negative: not a small table's band
    assert narrow_band(-5000.0, -1000.0, 0, below=True)  # a large table's: the mirror
    assert not narrow_band(20.0, 100.0, 0)  # 80 ages: the lattice's size, no finer cells
    assert narrow_band(20.0, 100.0, 2)  # 8,000 steps of 0.01
    assert not narrow_band(5.0, 100.0, 4)  # a fare's bounds: a factor of 20


def test_fine_cells_hand_values():
    cells = fine_cells(1000.0, 5000.0, 0)  # 4,000 steps of 1: cells of 10
    assert cells[0] == 1000.0 and cells[-1] == 5000.0 and cells.size == 401
    assert np.all(np.diff(cells) == 10.0)
    cells = fine_cells(2000.0, 10000.0, 0)  # 8,000 steps: cells of 10 (800 <= 1,000)
    assert cells.size == 801
    cells = fine_cells(20.0, 100.0, 2)  # 8,000 steps of 0.01: cells of 0.1
    assert cells.size == 801 and cells[1] == pytest.approx(20.1)
    assert cells.size - 1 <= FINE_CELLS


def test_second_plan_prefix_keeps_the_leading_run_where_all_at_once_drops_all():
    """Eight columns share the pool at first; the rule of a table that is not small drops
    every column failing at that split at once (here all of them), the prefix rule keeps the
    longest leading run (by margin) that passes at its own split: hand-checked with
    :func:`combined_threshold` at that split."""
    s1 = float(discrete_gaussian_sigma2(2.4e-4, 1.0))  # titanic's first selection: sd 45
    others = {"a": (390.0, 66.0, s1), "b": (360.0, 66.0, s1), "c": (190.0, 66.0, s1)}
    others |= {f"z{i}": (0.0, 80.0, s1) for i in range(5)}
    pool, tail = 5.8e-4, 6e-11
    assert second_plan(others, pool, tail, 1.0) == []
    chosen = second_plan(others, pool, tail, 1.0, prefix=True)
    assert chosen == ["a", "b"]
    s2 = float(discrete_gaussian_sigma2(pool * _SAFETY / 2, 1.0))
    assert 360.0 - 2 * 66.0 >= combined_threshold(s1, s2, tail / 2)  # b passes at 2
    s3 = float(discrete_gaussian_sigma2(pool * _SAFETY / 3, 1.0))
    assert 190.0 - 2 * 66.0 < combined_threshold(s1, s3, tail / 3)  # c fails at 3
    # a narrow band takes a share too: with two of them, only a passes
    assert second_plan(others, pool, tail, 1.0, extra=2, prefix=True) == ["a"]


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A small table of planets' shape: a year from 1989 to 2014, a method of two frequent
    values and rarer ones, a mass and a number."""
    rng = np.random.default_rng(seed)
    years = np.clip(np.round(rng.normal(2009, 4, n)), 1989, 2014).astype(int)
    methods = rng.choice(["RV", "Transit", "Imaging", "Lensing"], n, p=[0.5, 0.3, 0.12, 0.08])
    return pd.DataFrame({
        "method": methods,
        "number": rng.integers(1, 4, n).astype(str),
        "mass": np.round(rng.lognormal(0, 1, n), 2).astype(str),
        "year": years.astype(str),
    })  # fmt: skip


def _learn(df: pd.DataFrame, relation: str, seed: int = 3, epsilon: float = 1.0):
    b = learn_budget(epsilon, 1e-9)
    learn = 0.4 * b.rho  # as a release's learning splits the default share
    rho, second, small = (
        (1 - WITHIN_SHARE) * learn,
        SECOND_SHARE * learn,
        (WITHIN_SHARE - SECOND_SHARE) * learn,
    )
    ledger = Ledger(Budget.zcdp(learn))
    domain, report = learn_domain(
        df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(seed), ledger=ledger,
        neighbours=relation, second_rho=second, small_rho=small,
    )  # fmt: skip
    return domain, report, ledger, (rho, second, small, b.delta_tail)


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_a_small_tables_year_gets_finer_edges_charged_from_the_pool_on_neighbours(relation):
    """On neighbouring tables of ``n`` and ``n + 1`` records (add/remove), or one record
    replaced, the small table's year is a narrow band: its finer histogram is charged its
    hand-computed share of the pool (the pool, with the weights' part lent, split equally
    over its users, and for a band at most what its column spent first) before it draws,
    its edges lie among the years, and the learning spends at most its rho and the tails
    at most ``delta``."""
    base = _table(1000)
    other = base.copy()
    other.loc[0, "year"] = "1989" if other.loc[0, "year"] != "1989" else "2014"
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    for df in tables:
        domain, report, ledger, (rho, second, small, delta) = _learn(df, relation)
        assert report.small and report.lent_rho == pytest.approx(small)
        pool = second + small
        users = [c for c in report.columns if "fine_rho" in c.noisy or "second_rho" in c.noisy]
        year = next(c for c in report.columns if c.name == "year")
        assert "fine_rho" in year.noisy
        share = pool * _SAFETY / len(users)
        first = year.rho - year.noisy["fine_rho"]  # what the column spent first
        assert first == pytest.approx(column_rho(rho, 4, relation == ADD_REMOVE))
        # an integer band: its lattice test takes LATTICE_SHARE of the band's share
        band = min(share, first)
        charges = [e.charge for e in ledger.entries if "finer bounds" in e.charge.mechanism]
        assert [c.cost.rho for c in charges] == [pytest.approx((1 - LATTICE_SHARE) * band)]
        tests = [e.charge for e in ledger.entries if ": lattice" in e.charge.mechanism]
        assert [c.cost.rho for c in tests] == [pytest.approx(LATTICE_SHARE * band)]
        spent = [c.noisy.get("second_rho", c.noisy.get("fine_rho")) for c in users]
        assert report.second_spent_rho == pytest.approx(math.fsum(spent))
        edges = domain["year"].edges
        assert 1980 <= edges[0] and edges[-1] <= 2030  # inside the band, on the years' scale
        assert len(edges) >= 5
        assert ledger.spent <= rho + pool
        assert report.rho == pytest.approx(ledger.spent)
        assert report.delta_tail <= delta * (1 + 1e-12)
        n_rho = LEARNING_NOISY_N_SHARE * rho if relation == ADD_REMOVE else 0.0
        assert report.noisy_n_rho == pytest.approx(n_rho)


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_a_second_selection_in_a_small_table_uses_the_tails_left_unused(relation):
    """A small table whose text column leaves a third of its records out gets a second
    selection: its tail is the tails the number-like columns did not use (each column's
    share of ``delta``, 5 of 6 here), so the learning's tails sum to ``delta``; its charge is
    the pool's share, on each of two neighbouring tables."""
    base = _table(1000, seed=1)
    base["mass2"] = base["mass"]  # six columns: a column's share is small
    base["number2"] = base["number"]
    # Transit below the first threshold (about 190 records under add/remove, 270 under
    # replace-one at sd 27 and 38), above the second's, with Imaging beside it: enough left
    # out for the plan (the mass left out less 2 sd, the noisy n's among them)
    transit, imaging = (170, 150) if relation == ADD_REMOVE else (240, 60)
    rest = 1000 - transit - imaging
    base["method"] = ["Transit"] * transit + ["Imaging"] * imaging + ["RV"] * rest
    other = base.copy()
    other.loc[0, "method"] = "Imaging"
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    seen = []
    for df in tables:
        _, report, ledger, (rho, second, small, delta) = _learn(df, relation, seed=4)
        method = next(c for c in report.columns if c.name == "method")
        users = [c for c in report.columns if "fine_rho" in c.noisy or "second_rho" in c.noisy]
        if "second_rho" not in method.noisy:  # the first released both: nothing left out
            assert method.noisy["released"] == 2
            continue
        share = (second + small) * _SAFETY / len(users)
        assert method.noisy["second_rho"] == pytest.approx(share)
        first_tail = delta / 6  # five number-like columns left theirs unused
        assert method.delta_tail == pytest.approx(first_tail + 5 * first_tail)
        assert report.delta_tail == pytest.approx(delta)
        assert method.noisy["second_threshold"] < method.noisy["threshold"]
        assert ledger.spent <= rho + second + small
        seen.append(len(users))
    assert seen, "no table ran a second selection: the test checks nothing"


def test_a_small_release_lends_the_weights_part_and_spends_what_is_left():
    """In the pipeline a small table draws no decoding weights: their part joins the pool,
    with :data:`SMALL_BORROW_SHARE` of the release's rho besides, and the release gets the
    budget's release rho, the weights' part and the pool's second share, less what the
    learning spent of them (by hand: the run spends at most its rho)."""
    from dpquery.pipeline.learning import learn as learn_stage
    from dpquery.pipeline.learning import small_borrow_rho, weights_rho
    from dpquery.pipeline.request import Frame, Learning, ReleaseRequest

    df = _table(1000)
    request = ReleaseRequest(Frame(df, None), options={"epsilon": 1.0, "delta": 1e-9},
                             learning=Learning(), neighbours=ADD_REMOVE)  # fmt: skip
    learned = learn_stage(request, np.random.default_rng(0), ADD_REMOVE)
    assert learned is not None and learned.report.small and learned.within is None
    budget = learned.budget
    within = weights_rho(budget)
    borrow = small_borrow_rho(budget)
    assert borrow == pytest.approx(SMALL_BORROW_SHARE * (1 - 0.4) * budget.rho, rel=1e-8)
    report = learned.report
    assert report.lent_rho == pytest.approx(within + borrow)
    assert report.to_dict()["small_table_lent_rho"] == pytest.approx(within + borrow)
    assert report.second_spent_rho > 0  # the year's finer histogram at least
    expect = budget.release_rho + within + SECOND_SHARE * budget.learn_rho
    expect -= report.second_spent_rho
    release = learned.release_ledger.budget.limit
    assert release == pytest.approx(expect, rel=1e-12)
    spent = math.fsum(e.charge.cost.rho for e in learned.ledger.entries
                      if e.charge.mechanism.startswith("domain learning"))  # fmt: skip
    assert math.isclose(report.rho, spent, rel_tol=1e-9)
    assert spent <= (budget.learn_rho + borrow) * (1 + 1e-12)
    assert spent + release <= budget.rho * (1 + 1e-9)


def test_a_spread_band_keeps_its_edges_and_a_concentrated_one_gets_finer():
    """Two narrow bands of a small table: years on 26 values of 4,000 get finer edges; body
    masses spread over 3,600 grams of ``[2000, 10000]`` (about 3 values a cell of 10 g,
    under 2 noise sd) keep the bounds' edges, their finer histogram charged all the same
    (the plan is made before it draws)."""
    df = _table(1000, seed=2)
    rng = np.random.default_rng(7)
    df["body"] = rng.integers(2700, 6300, 1000).astype(str)
    domain, report, ledger, _ = _learn(df, ADD_REMOVE, seed=8)
    cols = {c.name: c for c in report.columns}
    assert "fine_rho" in cols["body"].noisy and cols["body"].noisy["fine_bounds"] is None
    assert "finer" not in cols["body"].learned
    assert cols["year"].noisy["fine_bounds"] is not None
    assert domain["body"].edges[0] <= 2700 and domain["body"].edges[-1] >= 6300
    charges = [e.charge.mechanism for e in ledger.entries if "finer bounds" in e.charge.mechanism]
    assert len(charges) == 2


def test_the_three_parts_of_a_learning_fit_its_rho_despite_float_rounding():
    """At epsilon 0.35 and the default share the columns' part, the pool and the loan sum to
    an ulp above the learning's rho in floats; the learning still runs on a ledger of
    exactly that rho (the loan is checked less 1e-9 of it), and spends within it."""
    b = learn_budget(0.35, 1e-9)
    learn = 0.4 * b.rho
    rho, second = (1 - WITHIN_SHARE) * learn, SECOND_SHARE * learn
    small = (WITHIN_SHARE - SECOND_SHARE) * learn
    assert rho + second + small > learn  # the rounding this guards against
    df = _table(3000)  # small at this epsilon: it takes the loan
    ledger = Ledger(Budget.zcdp(learn))
    _, report = learn_domain(df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(1),
                             ledger=ledger, neighbours=ADD_REMOVE, second_rho=second,
                             small_rho=small)  # fmt: skip
    assert report.small and report.lent_rho == pytest.approx(small)
    assert ledger.spent <= learn


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_a_borrowed_pool_is_charged_by_hand_on_neighbours(relation):
    """The pool a release's small table lends the learning (the weights' part and
    :data:`SMALL_BORROW_SHARE` of the release's rho, hand-computed from the budget) is split
    equally over its users and each share charged before its draw, on neighbouring tables of
    ``n`` and ``n + 1`` records (add/remove) or one record replaced; the learning spends at
    most its rho and the loan, and a larger loan lowers the second threshold."""
    b = learn_budget(1.0, 1e-9)
    learn = 0.4 * b.rho
    rho, second = (1 - WITHIN_SHARE) * learn, SECOND_SHARE * learn
    within = (WITHIN_SHARE - SECOND_SHARE) * learn
    borrow = SMALL_BORROW_SHARE * (1 - 0.4) * b.rho  # the release's share of rho, by hand
    base = _table(1000, seed=1)
    base["mass2"] = base["mass"]
    base["number2"] = base["number"]
    transit, imaging = (170, 150) if relation == ADD_REMOVE else (240, 60)
    base["method"] = (["Transit"] * transit + ["Imaging"] * imaging
                      + ["RV"] * (1000 - transit - imaging))  # fmt: skip
    other = base.copy()
    other.loc[0, "method"] = "Imaging"
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    seen = 0
    for df in tables:
        thresholds = []
        for small in (within, within + borrow):
            ledger = Ledger(Budget.zcdp(learn + borrow))
            _, report = learn_domain(
                df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(4), ledger=ledger,
                neighbours=relation, second_rho=second, small_rho=small,
            )  # fmt: skip
            assert report.small and report.lent_rho == pytest.approx(small)
            method = next(c for c in report.columns if c.name == "method")
            if "second_rho" not in method.noisy:
                break
            users = [c for c in report.columns
                     if "fine_rho" in c.noisy or "second_rho" in c.noisy]  # fmt: skip
            share = (second + small) * _SAFETY / len(users)
            charged = [e.charge.cost.rho for e in ledger.entries
                       if "second partition selection" in e.charge.mechanism]  # fmt: skip
            assert charged == [pytest.approx(share)]
            assert ledger.spent <= rho + second + small
            assert report.second_spent_rho <= second + small
            thresholds.append(method.noisy["second_threshold"])
        if len(thresholds) == 2:
            assert thresholds[1] < thresholds[0]
            seen += 1
    assert seen, "no table ran a second selection: the test checks nothing"
