"""A large table's numeric columns learn twice the bins under add/remove (``large_bins``): the
rule by hand at its threshold, that it reads the noisy ``n`` (charged first) and never the
table's length, that the learning spends what it spent with the default bins (the
quantiles split the same share) on neighbouring tables of ``n`` and ``n + 1`` records, and
that replace-one keeps the default bins (its pinned releases as they were).

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning as dl
from dpquery.data import Numeric
from dpquery.domain_learning import DEFAULT_BINS, LARGE_ROWS, large_bins, learn_domain
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N, REPLACE_ONE

RHO = 0.02


def test_large_bins_by_hand() -> None:
    assert LARGE_ROWS == 64_000
    assert large_bins(16, 63_999) == 16
    assert large_bins(16, 64_000) == 32
    assert large_bins(5, 10**6) == 10
    assert large_bins(DEFAULT_BINS, 1_000) == DEFAULT_BINS


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A numeric column of three decimals (no ties), spread over [0, 1000)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": np.round(rng.uniform(0, 1000, n), 3)})


def _learn(df: pd.DataFrame, relation: str, seed: int = 1) -> tuple[Numeric, Ledger]:
    ledger = Ledger(Budget.zcdp(RHO))
    domain, _ = learn_domain(df, rho=RHO, delta=1e-9, rng=np.random.default_rng(seed),
                             ledger=ledger, neighbours=relation,
                             types={"x": "numeric"})  # fmt: skip
    (attr,) = domain.attributes
    assert isinstance(attr, Numeric)
    return attr, ledger


def _noisy_n_is(monkeypatch: pytest.MonkeyPatch, value: int) -> None:
    """The learning's noisy n answers ``value``, charged as the real draw is."""
    real = dl.noisy_n

    def fixed(n, rho, rng, ledger):
        real(n, rho, rng, ledger)  # charged and drawn as before; its answer replaced
        return value

    monkeypatch.setattr(dl, "noisy_n", fixed)


def test_the_rule_reads_the_noisy_n_not_the_tables_length(monkeypatch) -> None:
    """Under add/remove a table of 2,000 rows whose noisy n reads 64,000 learns 32 bins, one
    of 2,000 whose noisy n reads 63,999 learns 16 (at most: equal quantiles of 2,000 records
    merge, 30 of 32 on this seed): the rule sees the noisy n alone."""
    df = _table(2_000)
    _noisy_n_is(monkeypatch, LARGE_ROWS)
    attr, ledger = _learn(df, ADD_REMOVE)
    assert attr.n_bins > DEFAULT_BINS
    assert ledger.entries[0].charge.mechanism == NOISY_N  # charged before any rule reads it
    _noisy_n_is(monkeypatch, LARGE_ROWS - 1)
    assert _learn(df, ADD_REMOVE)[0].n_bins <= DEFAULT_BINS


def test_large_tables_learn_twice_the_bins_for_the_same_spend() -> None:
    """70,000 records under add/remove: 32 bins (16 at 20,000), and the ledger's total is the
    learning's rho either way; a neighbour (one record more, one fewer) learns as many bins
    and spends the same."""
    big, small = _table(70_000), _table(20_000)
    attr, ledger = _learn(big, ADD_REMOVE)
    assert attr.n_bins == 2 * DEFAULT_BINS
    few, few_ledger = _learn(small, ADD_REMOVE)
    assert few.n_bins == DEFAULT_BINS
    assert ledger.spent == pytest.approx(few_ledger.spent, rel=1e-9)
    assert ledger.spent <= RHO * (1 + 1e-9)
    for other in [big.iloc[1:], pd.concat([big, _table(1, seed=9)], ignore_index=True)]:
        a, led = _learn(other, ADD_REMOVE)
        assert a.n_bins == 2 * DEFAULT_BINS
        assert led.spent == pytest.approx(ledger.spent, rel=1e-9)
        assert [e.charge for e in led.entries] == [e.charge for e in ledger.entries]


def test_replace_one_keeps_the_default_bins_on_a_large_table() -> None:
    """Under replace-one 70,000 records learn 16 bins, and so does a table with one record
    replaced: the rule is add/remove's alone."""
    big = _table(70_000)
    replaced = big.copy()
    replaced.iloc[0, 0] = 999.999
    for df in (big, replaced):
        attr, ledger = _learn(df, REPLACE_ONE)
        assert attr.n_bins == DEFAULT_BINS
        assert ledger.spent <= RHO * (1 + 1e-9)
