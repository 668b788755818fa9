"""The profile's share of a column's rho in a small table of many columns (``docs/learn.md``,
"Tables of many columns or few rows", "The profile's share at many columns"): the share
against hand values, and the profile's charges on neighbouring tables under add/remove
against the hand-computed share."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning
from dpquery.domain_learning import (
    PROFILE_SHARE,
    WIDE_PROFILE_FROM,
    column_rho,
    learn_budget,
    learn_domain,
    profile_share,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE


def test_the_profile_share_by_hand(monkeypatch):
    """At the default slope every table's profile keeps :data:`PROFILE_SHARE`; at a slope
    of 0.01 a small table under add/remove of 39 columns spends 0.34 of each column's rho on
    its profile, one of 15 columns or fewer 0.1, one of 100 the cap; a table that is not
    small, or replace-one, 0.1 whatever its columns."""
    for columns in (3, 15, 16, 39, 100):
        for small in (False, True):
            for add_remove in (False, True):
                assert profile_share(columns, small, add_remove) == PROFILE_SHARE
    monkeypatch.setattr(domain_learning, "WIDE_PROFILE_SLOPE", 0.01)
    assert profile_share(39, True, True) == pytest.approx(0.34)
    assert profile_share(21, True, True) == pytest.approx(0.16)
    assert profile_share(WIDE_PROFILE_FROM, True, True) == PROFILE_SHARE
    assert profile_share(3, True, True) == PROFILE_SHARE
    assert profile_share(100, True, True) == domain_learning.WIDE_PROFILE_MOST
    assert profile_share(39, False, True) == PROFILE_SHARE  # not small
    assert profile_share(39, True, False) == PROFILE_SHARE  # replace-one


def _wide(n: int, columns: int, seed: int = 0) -> pd.DataFrame:
    """A table of ``columns`` columns of rates, mostly missing, and one of text."""
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(columns - 1):
        values = np.round(rng.lognormal(0, 1, n), 3).astype(object)
        values[rng.random(n) < 0.5] = np.nan
        data[f"rate{j}"] = values
    data["name"] = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame(data)


def _profiles(df: pd.DataFrame, relation: str, seed: int = 3) -> tuple[list[float], float, bool]:
    b = learn_budget(1.0, 1e-9)
    rho = 0.3 * b.rho
    ledger = Ledger(Budget.zcdp(rho))
    _, report = learn_domain(df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(seed),
                             ledger=ledger, neighbours=relation)  # fmt: skip
    charges = [e.charge.cost.rho for e in ledger.entries if ": profile" in e.charge.mechanism]
    assert ledger.spent <= rho * (1 + 1e-12)
    assert report.rho == pytest.approx(ledger.spent)
    return charges, column_rho(rho, df.shape[1], relation == ADD_REMOVE), report.small


def test_the_profile_is_charged_its_share_on_neighbours(monkeypatch):
    """On neighbouring tables of ``n`` and ``n + 1`` records (add/remove), both small at 30
    columns, every column's profile is charged ``0.25`` of its rho at a slope of 0.01
    (``0.1 + 0.01 x 15``), before its draw, and the learning spends at most its rho; at the
    default slope, and under replace-one at any slope, ``0.1``."""
    base = _wide(1500, 30)
    monkeypatch.setattr(domain_learning, "WIDE_PROFILE_SLOPE", 0.01)
    for df in (base, base.iloc[1:]):
        charges, per, small = _profiles(df, ADD_REMOVE)
        assert small
        assert charges == [pytest.approx(0.25 * per)] * 30
        charges, per, small = _profiles(df, REPLACE_ONE)
        assert small
        assert charges == [pytest.approx(PROFILE_SHARE * per)] * 30
    monkeypatch.setattr(domain_learning, "WIDE_PROFILE_SLOPE", 0.0)
    charges, per, _ = _profiles(base, ADD_REMOVE)
    assert charges == [pytest.approx(PROFILE_SHARE * per)] * 30


def _pooled(df: pd.DataFrame, relation: str, seed: int = 3):
    """A release's learning (as ``test_learn_smalltab``'s ``_learn``): the columns' rho, the
    pool and the small table's loan."""
    b = learn_budget(1.0, 1e-9)
    learn = 0.4 * b.rho
    rho, second, small = 0.75 * learn, 0.1 * learn, 0.15 * learn
    ledger = Ledger(Budget.zcdp(learn))
    _, report = learn_domain(df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(seed),
                             ledger=ledger, neighbours=relation, second_rho=second,
                             small_rho=small)  # fmt: skip
    charges = [e.charge.cost.rho for e in ledger.entries if ": profile" in e.charge.mechanism]
    assert ledger.spent <= learn * (1 + 1e-12)
    assert report.rho == pytest.approx(ledger.spent)
    per = column_rho(rho, df.shape[1], relation == ADD_REMOVE)
    pool = second + small * (1 - 1e-9)
    return charges, per, pool, report


def test_the_profile_takes_its_part_of_the_pool_on_neighbours(monkeypatch):
    """With :data:`WIDE_POOL_SHARE` 0.2, a small table of 30 columns under add/remove (on
    neighbours of ``n`` and ``n + 1`` records) charges each column's profile ``0.1`` of its
    rho plus ``0.2 x pool / 30``, before its draw; the pool's spending counts them (the
    release gets the rest); under replace-one the profile is ``0.1`` of its rho alone."""
    base = _wide(1500, 30)
    monkeypatch.setattr(domain_learning, "WIDE_POOL_SHARE", 0.2)
    for df in (base, base.iloc[1:]):
        charges, per, pool, report = _pooled(df, ADD_REMOVE)
        assert report.small
        extra = 0.2 * pool / 30
        assert charges == [pytest.approx(PROFILE_SHARE * per + extra)] * 30
        taken = sum(c.noisy.get("profile_pool_rho", 0.0) for c in report.columns)
        assert taken == pytest.approx(0.2 * pool)
        assert report.second_spent_rho >= taken * (1 - 1e-12)
        charges, per, pool, report = _pooled(df, REPLACE_ONE)
        assert report.small
        assert charges == [pytest.approx(PROFILE_SHARE * per)] * 30
        assert not any("profile_pool_rho" in c.noisy for c in report.columns)
