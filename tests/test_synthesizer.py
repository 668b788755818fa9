"""The estimator protocol, the registry and composition on one ledger: child ledgers charge
their parent as they draw, an estimator fits on a given ledger, the registry builds and
refuses, and the toy ``uniform`` synthesizer (docs/architecture.md's worked example)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import MIXED_DOMAIN as DOMAIN
from tests.conftest import mixed_data as small_data

from dpquery.algorithms import registry, synthesizer
from dpquery.algorithms.auto import Auto
from dpquery.algorithms.columns import MeasuredColumns
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.synthesizer import Synthesizer
from dpquery.algorithms.uniform import UniformRecords
from dpquery.data.synthetic import biased_bits
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Charge, Ledger, PureDP
from dpquery.privacy.errors import BudgetExceededError
from dpquery.queries import Workload, answer, random_marginal_queries

WORKLOAD = random_marginal_queries(DOMAIN, 2, 30, seed=3)


# == child ledgers ===========================================================================


def test_a_child_charges_its_parent_under_the_stage_name() -> None:
    parent = Ledger(Budget.pure(1.0))
    child = parent.child(Budget.pure(0.4), "stage")
    child.charge("Laplace", PureDP(0.25))
    assert [e.charge.mechanism for e in parent.entries] == ["stage: Laplace"]
    assert [e.charge.mechanism for e in child.entries] == ["Laplace"]
    assert parent.spent == pytest.approx(0.25) and child.spent == pytest.approx(0.25)
    assert child.parent is parent and child.accountant is parent.accountant


def test_a_child_charge_needs_room_in_both_budgets_and_records_nothing_otherwise() -> None:
    parent = Ledger(Budget.pure(1.0))
    parent.charge("before", PureDP(0.7))
    child = parent.child(Budget.pure(0.5), "stage")
    with pytest.raises(BudgetExceededError):  # fits the child (0.4 <= 0.5), not the parent
        child.charge("Laplace", PureDP(0.4))
    with pytest.raises(BudgetExceededError):  # fits the parent, not the child
        parent.child(Budget.pure(0.1), "other").charge("Laplace", PureDP(0.2))
    assert len(parent.entries) == 1 and child.entries == ()
    with pytest.raises(BudgetExceededError):  # a plan check asks both ledgers too
        child.check([Charge("Laplace", PureDP(0.4))])
    assert child.check([Charge("Laplace", PureDP(0.3))]) == pytest.approx(0.3)


def test_an_estimator_fits_on_a_given_ledger_and_plans_against_its_budget() -> None:
    ledger = Ledger(Budget.zcdp(0.05))
    child = ledger.child(Budget.zcdp(0.02), "mwem")
    release = MWEM(T=4, measurement="gaussian", seed=1).fit(small_data(), WORKLOAD, ledger=child)
    assert release.ledger is child
    assert child.spent <= 0.02 and ledger.spent == pytest.approx(child.spent)
    assert all(e.charge.mechanism.startswith("mwem: ") for e in ledger.entries)
    expected = MWEM(rho=0.02, T=4, measurement="gaussian").charges(small_data(), WORKLOAD)
    assert [e.charge.cost for e in child.entries] == [c.cost for c in expected]


def test_an_estimator_with_its_own_budget_refuses_a_given_ledger() -> None:
    with pytest.raises(DPQueryError, match="leave its own epsilon, delta and rho unset"):
        MWEM(epsilon=1.0, T=2).fit(small_data(), WORKLOAD, ledger=Ledger(Budget.pure(1.0)))


def test_reweighted_charges_the_release_ledger_as_each_stage_draws(monkeypatch) -> None:
    """When MWEM's first draw happens, FEM's charges are already on the release's ledger."""
    seen: list[int] = []
    original = MWEM.fit

    def spy(self, data, workload, true_answers=None, *, ledger=None):  # type: ignore[no-untyped-def]
        assert ledger is not None and ledger.parent is not None
        seen.append(len(ledger.parent.entries))
        return original(self, data, workload, true_answers, ledger=ledger)

    monkeypatch.setattr(MWEM, "fit", spy)
    base = FEM(T=3, samples=2, progress=False)
    release = Reweighted(base, epsilon=2.0, T=2, seed=0).fit(small_data(), WORKLOAD)
    assert seen == [3]  # FEM's three rounds, charged before MWEM started
    assert len(release.ledger.entries) == 3 + 2 * 2


# == the protocol and the registry ===========================================================


def test_with_params_builds_a_new_estimator_and_leaves_the_old_one() -> None:
    base = SepFEM(T=3, samples=2)
    other = base.with_params(epsilon0=0.2, seed=5)
    assert isinstance(other, SepFEM) and other is not base
    assert (other.epsilon0, other.seed, other.T) == (0.2, 5, 3)
    assert (base.epsilon0, base.seed) == (None, None)
    with pytest.raises(DPQueryError, match="takes no parameter nope"):
        base.with_params(nope=1)


def test_every_registered_algorithm_is_a_synthesizer_with_declared_options() -> None:
    for name in registry.names():
        cls = registry.algorithm(name)
        assert issubclass(cls, Synthesizer) and cls.name == name == name.lower()
        assert set(cls.options) <= set(registry.options())
        assert set(cls.options) <= set(cls.parameter_names())


def test_the_registry_builds_and_refuses() -> None:
    # Explicit parameters: no budget to share with a measurement of untouched attributes.
    model = registry.build("dualquery", {"eta": 1.0, "T": 3, "samples": 2, "rho": None})
    assert isinstance(model, DualQuery) and (model.eta, model.T, model.samples) == (1.0, 3, 2)
    with pytest.raises(registry.OptionError) as err:
        registry.build("mwem", {"epsilon": 1.0, "samples": 3, "oracle": "cpsat"})
    assert err.value.refused == ("samples", "oracle")
    with pytest.raises(registry.OptionError) as err:
        registry.build("fem", {"epsilon": 1.0, "reweight_rounds": 3})
    assert err.value.needs == ("reweight_rounds", "fraction")
    with pytest.raises(registry.OptionError, match="oracle_options"):
        registry.build("mwem", {"epsilon": 1.0}, oracle_options={"time_limit": 1.0})
    measured = registry.build(
        "sepfem", {"epsilon": 1.0, "T": 4, "fraction": 0.3, "reweight_rounds": 2}, seed=1
    )
    assert isinstance(measured, MeasuredColumns) and measured.seed == 1
    pipeline = measured.base
    assert isinstance(pipeline, Reweighted) and isinstance(pipeline.base, SepFEM)
    assert (pipeline.fraction, pipeline.T, pipeline.epsilon, pipeline.seed) == (0.3, 2, 1.0, None)
    assert (pipeline.base.T, pipeline.base.epsilon) == (4, None)


def test_option_ranges_are_checked_in_one_place() -> None:
    for model, match in [
        (UniformRecords(epsilon=1.0, size=0), "size must be a positive integer, got 0"),
        (MWEM(epsilon=1.0, selection_share=1.5), "selection_share must lie strictly between"),
        (FEM(epsilon=1.0, workers=0), "workers must be a positive integer, got 0"),
    ]:
        with pytest.raises(DPQueryError, match=match):
            model.fit(small_data(), WORKLOAD)


# == the worked example: uniform records =====================================================


def test_uniform_records_spend_nothing_and_are_valid_records() -> None:
    release = UniformRecords(epsilon=0.5, size=200, seed=3).fit(small_data(), WORKLOAD)
    assert release.algorithm == "uniform" and release.records.m == 200
    assert release.ledger.entries == () and release.ledger.spent == 0
    rows = release.records.rows
    for a, b in DOMAIN.onehot_groups:
        assert (rows[:, a:b].sum(axis=1) == 1).all()
    again = UniformRecords(epsilon=0.5, size=200, seed=3).fit(small_data(), WORKLOAD)
    np.testing.assert_array_equal(rows, again.records.rows)


def test_uniform_records_cover_every_value_of_a_group() -> None:
    """2000 draws over 4 values: each value missing has probability (3/4)^2000 ~ 1e-250."""
    rows = UniformRecords(epsilon=1.0, size=2000, seed=0).fit(small_data(), WORKLOAD).records.rows
    a, b = DOMAIN.onehot_groups[-1]
    assert (rows[:, a:b].sum(axis=0) > 0).all()


def test_a_zcdp_child_of_an_approximate_budget_charges_its_parent() -> None:
    parent = Ledger(Budget.approx(1.0, 1e-6))
    child = parent.child(Budget.zcdp(0.01), "stage")
    child.charge("Gaussian", ZCDP(0.005))
    assert parent.entries[0].charge.mechanism == "stage: Gaussian"


@pytest.mark.parametrize("name", sorted(registry.ALGORITHMS))
def test_every_algorithm_given_only_epsilon_plans_delta_one_over_n_squared(name: str) -> None:
    """Under replace-one (n public); add/remove's default is the public 1e-9 (below)."""
    data, workload = small_data(), random_marginal_queries(DOMAIN, 2, 20, seed=1)
    if name == "wide-dense":  # free bits only (one-hot groups are refused)
        data = biased_bits(data.n, 40, seed=0)
    model = registry.build(name, {"epsilon": 1.0}, neighbours="replace-one")
    plan = model.plan(data, workload)
    assert plan.budget.measure == "approx"
    assert plan.budget.epsilon == 1.0
    assert plan.budget.delta == 1.0 / data.n**2


@pytest.mark.parametrize("name", ["adaptive-projection", "auto", "wide-dense"])
def test_under_add_remove_delta_defaults_to_a_public_value_whatever_n(name: str) -> None:
    """n is private under add/remove: the default delta is AIM's 1e-9, the same on n and n+1
    records (and the default relation of the releases auto picks)."""
    for n in (40, 41):
        data = small_data(n) if name != "wide-dense" else biased_bits(n, 40, seed=0)
        workload = random_marginal_queries(DOMAIN, 2, 20, seed=1)
        if name == "wide-dense":  # free bits only; its workload is not read
            workload = Workload.from_lists("conjunction", 40, [[(0, True)]])
        release = registry.build(name, {"epsilon": 1.0}, seed=0).fit(data, workload)
        assert release.ledger.budget == Budget.approx(1.0, 1e-9)
        assert release.parameters["neighbours"] == "add-remove" and "n" not in release.parameters


@pytest.mark.parametrize("name", ["dualquery", "dqrs", "mwem", "uniform"])
def test_an_explicit_delta_of_zero_plans_pure_dp(name: str) -> None:
    data, workload = small_data(), random_marginal_queries(DOMAIN, 2, 20, seed=1)
    small = {"samples": 20} if name == "dualquery" else {}  # pure DP fits fewer samples
    plan = registry.ALGORITHMS[name](epsilon=1.0, delta=0.0, **small).plan(data, workload)
    assert plan.budget == Budget.pure(1.0)


def test_the_pipelines_default_delta_to_one_over_n_squared() -> None:
    data, workload = small_data(), random_marginal_queries(DOMAIN, 2, 20, seed=1)
    columns = MeasuredColumns(DualQuery(epsilon=1.0, samples=20)).plan(data, workload)
    reweighted = Reweighted(FEM(T=3, samples=2), epsilon=1.0, T=2).plan(data, workload)
    for budget in (columns.budget, reweighted.budget):
        assert budget == Budget.approx(1.0, 1.0 / data.n**2)


# == true answers ============================================================================


def _no_answers(*args: object) -> np.ndarray:
    raise AssertionError("the true answers were computed")


@pytest.mark.parametrize(
    "model",
    [
        AdaptiveProjection(epsilon=1.0, seed=0, progress=False),
        Auto(epsilon=1.0, seed=0),
        MeasuredColumns(UniformRecords(epsilon=1.0, size=10), seed=0),
        UniformRecords(epsilon=1.0, size=10, seed=0),
    ],
    ids=lambda m: m.name,
)
def test_an_algorithm_that_reads_no_answers_does_not_compute_them(
    model: Synthesizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Those runs read the data through counts only: fit computes no ``q(D)`` (a pass over
    every partition on a cluster), and the release is the one given the answers."""
    data = small_data()
    expected = model.with_params().fit(data, WORKLOAD, answer(WORKLOAD, data))
    monkeypatch.setattr(synthesizer, "answer", _no_answers)
    got = model.with_params().fit(data, WORKLOAD)
    assert np.array_equal(got.records.rows, expected.records.rows)
    assert not model.reads_answers(model.plan(data, WORKLOAD))


def test_an_algorithm_that_reads_answers_computes_them_when_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = small_data()
    model = DualQuery(eta=0.5, T=3, samples=10, seed=0, progress=False)
    assert model.reads_answers(model.plan(data, WORKLOAD))
    monkeypatch.setattr(synthesizer, "answer", _no_answers)
    with pytest.raises(AssertionError, match="were computed"):
        model.fit(data, WORKLOAD)
