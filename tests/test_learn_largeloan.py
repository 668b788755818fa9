"""A table that is not small lends its second selection a share of the release's rho when a
column's first selection left out a large noisy share of the records (``docs/learn.md``,
"Many categories in a table that is not small"): the rule against hand values, the loan's
size against the budget by hand, its charges on neighbouring tables under both relations, a
table that does not need it learning as before, the release's rho in the pipeline, and the
plan's line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.domain_learning import (
    LARGE_BORROW_SHARE,
    LARGE_OTHER_SHARE,
    SECOND_SHARE,
    SECOND_SIGMAS,
    WITHIN_SHARE,
    large_loan,
    learn_domain,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

_SAFETY = 1.0 - 1e-9


def _counties(n_small: int = 45, size: int = 100, big: int = 1500, seed: int = 0) -> pd.DataFrame:
    """One county of ``big`` records and ``n_small`` of ``size`` each (6,000 records by
    default), a sex and a numeric column: a table that is not small whose county column's
    first selection leaves out three quarters of the records."""
    rng = np.random.default_rng(seed)
    county = ["Big"] * big + [f"c{i:02d}" for i in range(n_small) for _ in range(size)]
    n = len(county)
    return pd.DataFrame({
        "county": rng.permutation(county),
        "sex": rng.choice(["F", "M"], n),
        "hours": rng.integers(1, 80, n).astype(str),
    })  # fmt: skip


def test_large_loan_hand_values():
    s1 = 400.0
    n = 10_000
    others = {
        "county": (8372.0, 99.0, s1),  # 81.8% left out, 5 keys released: lends
        "name": (9990.0, 48.0, s1),  # one record a name: nothing released, lends nothing
        "race": (690.0, 92.0, s1),  # 5% left out: no
        "edge": (3000.0 + SECOND_SIGMAS * 50.0, 50.0, s1),  # 30% exactly after 2 sd
        "below": (2999.0 + SECOND_SIGMAS * 50.0, 50.0, s1),  # one record short
    }
    released = {"county": 5, "name": 0, "race": 3, "edge": 1, "below": 1}
    assert LARGE_OTHER_SHARE == 0.3
    assert large_loan(others, released, n) == ["county", "edge"]
    assert large_loan(others, {}, n) == []  # nothing released anywhere
    assert large_loan({}, {}, n) == []


def test_the_loan_is_a_share_of_the_release_by_hand():
    from dpquery.pipeline.learning import large_borrow_rho, run_budget, small_borrow_rho

    b = run_budget({"epsilon": 1, "delta": 1e-9}, None, 0.4, True)
    # the release's rho: 60% of rho, less the 1e-9 slack; 15% of it
    assert LARGE_BORROW_SHARE == 0.15
    assert large_borrow_rho(b) == pytest.approx(0.15 * 0.6 * b.rho * (1 - 1e-9), rel=1e-12)
    assert large_borrow_rho(b) <= small_borrow_rho(b)  # the learning's stage admits it


def _learn(df, relation, large, seed=3, rho=0.002, second=0.0003):
    ledger = Ledger(Budget.zcdp(rho + second + large))
    domain, report = learn_domain(df, rho=rho, delta=1e-9, rng=np.random.default_rng(seed),
                                  ledger=ledger, neighbours=relation, second_rho=second,
                                  large_rho=large)  # fmt: skip
    return domain, report, ledger


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_a_loan_is_charged_by_hand_on_neighbours(relation):
    """On neighbouring tables (``n`` and ``n - 1`` records, or one county replaced) the
    county column, 45 counties of 130 records under a first threshold of 187 to 257, takes
    the loan: the second selection is charged ``(second + loan)`` less the float guards
    (one column chosen), before it draws; the learning spends at most ``rho + second +
    loan``; the loan lowers the second threshold and releases counties the pool alone
    cannot."""
    rho, second, loan = 0.002, 0.0003, 0.002
    base = _counties(size=130)
    other = base.copy()
    other.loc[0, "county"] = "c00" if other.loc[0, "county"] != "c00" else "c01"
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    for df in tables:
        _, before, _ = _learn(df, relation, 0.0)
        _, report, ledger = _learn(df, relation, loan)
        assert not report.small and before.lent_rho == 0.0
        assert report.lent_rho == pytest.approx(loan * _SAFETY, rel=1e-12)
        assert report.to_dict()["large_table_lent_rho"] == pytest.approx(loan, rel=1e-8)
        charged = [e.charge.cost.rho for e in ledger.entries
                   if "second partition selection" in e.charge.mechanism]  # fmt: skip
        assert charged == [pytest.approx((second + loan * _SAFETY) * _SAFETY, rel=1e-12)]
        assert report.second_spent_rho == pytest.approx(charged[0], rel=1e-12)
        assert ledger.spent <= rho + second + loan
        assert report.rho == pytest.approx(ledger.spent)
        county = {c.name: c for c in report.columns}["county"]
        old = {c.name: c for c in before.columns}["county"]
        assert county.noisy["second_threshold"] < old.noisy["second_threshold"]
        assert county.noisy["second_threshold"] < 130 < old.noisy["second_threshold"]
        assert county.noisy["second_released"] > old.noisy.get("second_released", 0)


def test_a_table_that_does_not_need_it_learns_as_before():
    """No column leaves out 30% of the records (or only a column of names, which releases
    nothing): the loan is not taken, and the domain and every charge are those of a
    learning without it."""
    few = _counties(n_small=5, size=100, big=5500)  # 500 of 6,000 left out
    names = few.copy()
    names["name"] = [f"n{i}" for i in range(len(names))]  # one record a name
    for df in (few, names):
        d0, r0, l0 = _learn(df, ADD_REMOVE, 0.0)
        d1, r1, l1 = _learn(df, ADD_REMOVE, 0.002)
        assert r1.lent_rho == 0.0
        assert d0.to_dict() == d1.to_dict()
        assert [(e.charge.mechanism, e.charge.cost) for e in l0.entries] == [
            (e.charge.mechanism, e.charge.cost) for e in l1.entries
        ]
        assert r0.to_dict() == r1.to_dict()


def test_a_release_takes_the_loan_and_gets_what_the_pool_left():
    """In the pipeline the release's rho is the budget's (with the decoding weights' part
    when none is drawn), plus the pool's own share, less what the pool spent, loan
    included: by hand, the loan cancels; the run spends at most its rho."""
    from dpquery.pipeline.learning import large_borrow_rho, release_rho
    from dpquery.pipeline.learning import learn as learn_stage
    from dpquery.pipeline.request import Frame, Learning, ReleaseRequest

    df = _counties(n_small=60, size=110, big=3000, seed=1)
    request = ReleaseRequest(Frame(df, None), options={"epsilon": 1.0, "delta": 1e-9},
                             learning=Learning(), neighbours=ADD_REMOVE)  # fmt: skip
    learned = learn_stage(request, np.random.default_rng(2), ADD_REMOVE)
    assert learned is not None and not learned.report.small
    budget, report = learned.budget, learned.report
    assert report.lent_rho == pytest.approx(large_borrow_rho(budget) * _SAFETY, rel=1e-12)
    assert report.second_spent_rho > SECOND_SHARE * budget.learn_rho  # the loan was spent
    expect = release_rho(budget, learned.domain, report.n, 1.0)
    expect += SECOND_SHARE * budget.learn_rho - report.second_spent_rho
    release = learned.release_ledger.budget.limit
    assert release == pytest.approx(expect, rel=1e-9)
    assert release < budget.release_rho  # the loan, less nothing returned
    spent = learned.to_dict()["spent_rho"]  # the columns, the pool and the weights
    assert spent + release <= budget.rho * (1 + 1e-9)
    assert spent <= budget.learn_rho + large_borrow_rho(budget) * (1 + 1e-12)
    assert WITHIN_SHARE > SECOND_SHARE


def test_the_plan_states_the_loan(capsys):
    assert main(["privacy", "synth", "--n", "10000", "--epsilon", "1"]) == 0
    plan = capsys.readouterr().out
    # 15% of the release's 60% of rho = 0.0144076 (by hand)
    assert "the pool borrows 15% of the release's rho (rho=0.00129668)" in plan
    assert "left out at least 30% of the (noisy) records" in plan
    assert main(["privacy", "synth", "--n", "10000", "--epsilon", "1", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["large_table_borrow_rho"] == pytest.approx(0.15 * 0.6 * 0.0144076, rel=1e-5)
