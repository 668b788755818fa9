"""MeasuredColumns: untouched attributes measured before any draw, redrawn from the noisy
marginals, nothing spent when every attribute is touched, opt-outs reported
(algorithms/columns.py, the registry's default)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from conftest import mixed_data
from dpquery.algorithms import registry
from dpquery.algorithms.auto import Auto
from dpquery.algorithms.columns import (
    DEFAULT_SHARE,
    NOT_WRAPPED,
    MeasuredColumns,
    column_sources,
)
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.synthesizer import Synthesizer
from dpquery.algorithms.untouched import MECHANISM, untouched_attributes
from dpquery.algorithms.wide.dense import DenseBits
from dpquery.algorithms.wide.release import WideRelease
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Charge, Ledger
from dpquery.privacy.budget import budget_rho
from dpquery.queries import Workload, marginal_cells

DATA = mixed_data(1000, seed=0)
NAMES = list(DATA.domain.names)


def _workload(names: list[str]) -> Workload:
    return marginal_cells(DATA.domain, [tuple(names)])


def _one_way_tv(records, attr) -> float:
    true = DATA.column_counts()[attr.start : attr.stop] / DATA.n
    released = records.probabilities @ records.rows[:, attr.start : attr.stop].astype(float)
    if not attr.onehot:
        true, released = np.r_[1 - true, true], np.r_[1 - released, released]
    return 0.5 * float(np.abs(true - released).sum())


def test_the_measurement_is_charged_first_and_the_whole_budget_holds() -> None:
    workload = _workload(NAMES[:2])
    model = MeasuredColumns(FEM(epsilon=1.0, T=5, samples=4, progress=False), seed=0)
    release = model.fit(DATA, workload)
    entries = release.ledger.entries
    assert entries[0].charge.mechanism == MECHANISM  # before the base's first draw
    assert all(e.charge.mechanism.startswith("fem: ") for e in entries[1:])
    assert release.ledger.spent <= 1.0
    plan = model.plan(DATA, workload)
    whole = Budget.approx(1.0, 1.0 / DATA.n**2)  # delta defaults to 1/n^2
    assert math.isclose(plan.measurement.cost.rho, DEFAULT_SHARE * budget_rho(whole))
    # The plan's charges are what the ledger holds (names and costs; the plan counts the
    # rounds' identical charges once).
    planned = plan.charges()
    assert entries[0].charge == planned[0]
    assert sum(c.count for c in planned[1:]) == sum(e.charge.count for e in entries[1:])
    assert {e.charge.cost for e in entries[1:]} == {c.cost for c in planned[1:]}


def test_a_workload_touching_every_attribute_spends_nothing_extra() -> None:
    workload = marginal_cells(DATA.domain, [(a,) for a in NAMES])
    assert untouched_attributes(workload, DATA.onehot_groups) == []
    alone = FEM(epsilon=1.0, T=5, samples=4, progress=False, seed=5).fit(DATA, workload)
    wrapped = MeasuredColumns(FEM(epsilon=1.0, T=5, samples=4, progress=False), seed=5).fit(
        DATA, workload
    )
    assert [e.charge for e in wrapped.ledger.entries] == [e.charge for e in alone.ledger.entries]
    np.testing.assert_array_equal(wrapped.records.rows, alone.records.rows)
    assert wrapped.parameters["columns"]["measured"] == 0
    assert "share" not in wrapped.parameters["columns"]


def test_untouched_columns_follow_their_measured_marginals() -> None:
    # At a large budget the noisy 1-way marginals are close to the data's: the redrawn
    # columns' total variation is small (sigma ~ 7 counts of 1000; 4,000+ FEM records).
    workload = _workload(NAMES[:2])
    untouched = untouched_attributes(workload, DATA.onehot_groups)
    release = MeasuredColumns(
        FEM(epsilon=5.0, T=20, samples=20, progress=False), share=0.5, seed=1
    ).fit(DATA, workload)
    assert untouched
    for attr in untouched:
        assert _one_way_tv(release.records, attr) < 0.08
    sources = release.parameters["columns"]["sources"]
    assert [k for k, v in sources.items() if v == "workload"] == NAMES[:2]


def test_pure_budgets_measure_with_laplace() -> None:
    workload = _workload(NAMES[:2])
    release = MeasuredColumns(
        DualQuery(epsilon=2.0, delta=0.0, samples=20, progress=False), seed=2
    ).fit(DATA, workload)
    first = release.ledger.entries[0].charge
    assert first.mechanism == MECHANISM and math.isclose(first.cost.epsilon, DEFAULT_SHARE * 2.0)
    assert release.ledger.spent <= 2.0 + 1e-12


def test_an_over_budget_plan_is_refused_before_anything_is_drawn() -> None:
    workload = _workload(NAMES[:2])
    model = MeasuredColumns(FEM(progress=False, T=5, epsilon0=0.5, samples=4), seed=3)
    ledger = Ledger(Budget.zcdp(1e-6))  # far too small for T = 5 rounds
    with pytest.raises(DPQueryError):
        model.fit(DATA, workload, ledger=ledger)
    assert ledger.entries == ()


def test_registry_wraps_by_default_and_reports_opt_outs() -> None:
    default = registry.build("fem", {"epsilon": 1.0})
    assert isinstance(default, MeasuredColumns)
    assert isinstance(registry.build("mwem", {"epsilon": 1.0}), MeasuredColumns)
    chosen = registry.build("fem", {"epsilon": 1.0, "free_attributes": "uniform"})
    assert isinstance(chosen, FEM)
    assert not isinstance(registry.build("uniform", {"epsilon": 1.0}), MeasuredColumns)
    for name in NOT_WRAPPED:  # the bases MeasuredColumns refuses: registered, never wrapped
        assert registry.ALGORITHMS[name] and registry.COLUMNS_OPTION not in registry.takes(name)
    with pytest.raises(registry.OptionError):
        registry.build("fem", {"epsilon": 1.0, "free_attributes": "zeros",
                               "untouched_share": 0.1})  # fmt: skip
    untouched = tuple(untouched_attributes(_workload(NAMES[:2]), DATA.onehot_groups))
    note = column_sources(DATA, untouched, "not measured (uniform)")
    assert sum(v == "not measured (uniform)" for v in note.values()) == len(untouched)


def test_mwem_is_wrapped_too() -> None:
    assert "untouched_share" in registry.takes("mwem")
    assert "untouched_share" not in registry.takes("uniform")
    assert MWEM.name == "mwem"


def test_a_pure_ledger_stays_pure_for_the_base() -> None:
    # A pure budget handed down (a pure parent ledger) is not widened to (epsilon, 1/n^2).
    workload = _workload(NAMES[:2])
    ledger = Ledger(Budget.pure(2.0))
    release = MeasuredColumns(DualQuery(samples=20, progress=False), seed=4).fit(
        DATA, workload, ledger=ledger
    )
    assert release.ledger is ledger and ledger.budget.measure == "pure"
    assert all(e.charge.cost.__class__.__name__ == "PureDP" for e in ledger.entries)
    assert ledger.spent <= 2.0 + 1e-12


def _spent(charges: list[Charge]) -> Counter:
    """Charges by mechanism and cost, each counted as often as it was made."""
    made: Counter = Counter()
    for c in charges:
        made[c.mechanism, c.cost] += c.count
    return made


def _nested(**budget: Any) -> Synthesizer:
    return MeasuredColumns(FEM(T=3, samples=4, progress=False, **budget))


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda **b: AdaptiveProjection(progress=False, **b), "1-way marginal itself"),
        (lambda **b: Auto(**b), "own pipeline"),
        (lambda **b: DenseBits(**b), "every bit's count itself"),
        (lambda **b: WideRelease(**b), "no workload"),
        (_nested, "already"),
    ],
    ids=["adaptive-projection", "auto", "wide-dense", "wide", "measured-columns"],
)
def test_a_base_it_cannot_wrap_is_refused_before_anything_is_charged(
    make: Callable[..., Synthesizer], why: str
) -> None:
    # adaptive-projection (auto's choice here too) measures every attribute's 1-way marginal
    # itself and its plan lists only those measurements (its rounds spend the rest of its
    # budget): wrapped, it was planned on nearly the whole budget and ran out mid-fit, after
    # 9 charges. Every such base is refused by the plan, before the ledger exists.
    workload = _workload(NAMES[:2])
    base = make(epsilon=1.0)
    model = MeasuredColumns(base, seed=2)
    with pytest.raises(DPQueryError, match=f"cannot wrap {base.name}: .*{why}") as info:
        model.fit(DATA, workload)
    assert getattr(info.value, "ledger", None) is None
    assert getattr(model, "ledger_", None) is None
    with pytest.raises(DPQueryError, match=f"cannot wrap {base.name}"):
        model.plan(DATA, workload)
    # Spending a given ledger: refused with nothing charged on it.
    ledger = Ledger(Budget.approx(1.0, 1e-6))
    with pytest.raises(DPQueryError, match=f"cannot wrap {base.name}"):
        MeasuredColumns(make(), seed=2).fit(DATA, workload, ledger=ledger)
    assert ledger.entries == ()


@pytest.mark.parametrize(
    "name, options",
    [
        ("dualquery", {"T": 3, "samples": 10, "eta": 1.0}),
        ("dqrs", {"T": 3, "samples": 10, "eta": 1.0}),
        ("fem", {"T": 3, "samples": 4}),
        ("sepfem", {"T": 3, "samples": 4}),
        ("fem", {"T": 3, "samples": 4, "fraction": 0.5}),  # FEM, then MWEM
        ("mwem", {"T": 3}),
    ],
)
def test_the_plan_is_what_the_ledger_holds_for_every_wrapped_base(name: str, options: dict) -> None:
    # Every registered base the registry wraps: the wrapper's plan (measurement first, then
    # the base's share) is exactly what a fit charges, and it fits the whole budget.
    workload = _workload(NAMES[:2])
    model = registry.build(name, {"epsilon": 1.0, **options}, seed=0, progress=False)
    assert isinstance(model, MeasuredColumns)
    planned = model.charges(DATA, workload)
    assert planned[0].mechanism == MECHANISM
    release = model.fit(DATA, workload)
    assert _spent([e.charge for e in release.ledger.entries]) == _spent(planned)
    assert release.ledger.spent <= 1.0


def test_a_base_no_share_of_the_budget_can_plan_is_refused_by_the_plan() -> None:
    # DualQuery with eta and T fixed plans its samples from the budget: at epsilon 1e-4 not
    # even the whole budget buys one sample, so the wrapper's plan refuses, naming the base's
    # reason, before the ledger exists.
    workload = _workload(NAMES[:2])
    model = MeasuredColumns(DualQuery(epsilon=1e-4, eta=1.0, T=3, progress=False), seed=0)
    with pytest.raises(DPQueryError, match="no sample size fits") as info:
        model.fit(DATA, workload)
    assert getattr(info.value, "ledger", None) is None
    assert getattr(model, "ledger_", None) is None
