"""MWEM over an explicit support, and the two-stage FEM -> MWEM release (``Reweighted``):
the support's cells and prior, equivalence with the full domain, the split of the budget
(hand-computed), the combined ledger, refusals before anything is drawn, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.conftest import FAULTS, FaultyOracle, one_hot_ok
from tests.conftest import MIXED_DOMAIN as DOMAIN
from tests.conftest import mixed_data as small_data

from dpquery.algorithms.game.cells import enumerate_cells, support_cells
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import zcdp_rho_for
from dpquery.queries import answer, random_marginal_queries

WORKLOAD = random_marginal_queries(DOMAIN, 2, 40, seed=3)


# == MWEM over a support =====================================================================


def test_support_cells_merge_duplicates_and_drop_zero_weights() -> None:
    rows = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=np.uint8)
    cells, prior = support_cells(Records(rows, np.array([1.0, 2.0, 3.0, 0.0])), 3, 10)
    assert cells.tolist() == [[0, 1, 1], [1, 0, 1]]  # [0,0,0] had weight 0
    assert prior.tolist() == pytest.approx([2 / 6, 4 / 6])
    cells, prior = support_cells(rows, 3, 10)  # a bare array: equal weights
    assert prior.tolist() == pytest.approx([1 / 4, 1 / 4, 2 / 4])


def test_support_refusals_name_the_problem() -> None:
    rows = np.eye(4, dtype=np.uint8)
    with pytest.raises(DPQueryError, match="the support has 4 bits, the data 5"):
        support_cells(rows, 5, 10)
    with pytest.raises(DPQueryError, match="4 distinct records, more than max_cells=3"):
        support_cells(rows, 4, 3)


def test_mwem_on_the_whole_domain_as_support_is_mwem() -> None:
    """The same seed gives the same selections and measurements whatever the cell order, so
    the released answers agree with the full-domain run up to float rounding."""
    data = small_data()
    cells = enumerate_cells(DOMAIN.d, DOMAIN.onehot_groups)
    shuffled = cells[np.random.default_rng(1).permutation(len(cells))]
    full = MWEM(epsilon=2.0, T=6, seed=4).fit(data, WORKLOAD)
    on_support = MWEM(epsilon=2.0, T=6, seed=4, support=shuffled).fit(data, WORKLOAD)
    assert [r["query"] for r in on_support.rounds] == [r["query"] for r in full.rounds]
    np.testing.assert_allclose(
        answer(WORKLOAD, on_support.records), answer(WORKLOAD, full.records), atol=1e-9
    )
    assert on_support.parameters["support"] and not full.parameters["support"]


def test_mwem_reweighting_moves_a_wrong_prior_towards_the_data() -> None:
    """Support = the data's own rows (a test fixture only: a real support must not be read
    from the private data), prior badly skewed; with a large budget the reweighted answers
    are closer to the truth than the prior's. Deterministic for the seed."""
    data = small_data()
    rows = data.to_dense()
    prior = np.random.default_rng(0).exponential(size=len(rows)) ** 4
    support = Records(rows, prior)
    true = answer(WORKLOAD, data)
    before = np.abs(answer(WORKLOAD, support) - true).max()
    release = MWEM(rho=50.0, T=30, measurement="gaussian", seed=0, support=support).fit(
        data, WORKLOAD
    )
    after = np.abs(answer(WORKLOAD, release.records) - true).max()
    assert after < before / 2, (before, after)


def test_more_replay_passes_fit_the_measurement_closer_at_no_cost() -> None:
    """One round, the same selection and measurement: replaying it 20 times moves the
    distribution closer to the measured value than once, and spends the same."""
    data = small_data()
    fits, spent = [], []
    for passes in (1, 20):
        release = MWEM(epsilon=5.0, T=1, passes=passes, seed=2).fit(data, WORKLOAD)
        (chosen,) = release.rounds
        answers = answer(WORKLOAD, release.records)
        fits.append(abs(answers[chosen["query"]] - chosen["measurement"]))
        spent.append(release.ledger.spent)
    assert fits[1] < fits[0] / 5, fits
    assert spent[0] == spent[1]
    with pytest.raises(DPQueryError, match="passes must be a positive integer, got 0"):
        MWEM(epsilon=5.0, T=1, passes=0).fit(data, WORKLOAD)


def test_mwem_rho_budget_splits_evenly_hand_computed() -> None:
    """rho = 0.04 over T = 4 rounds, half of each round to each step: rho 0.005 per step; the
    selection is a bounded-range exponential mechanism, epsilon^2 / 8 = 0.005, epsilon = 0.2;
    the Gaussian measurement has rho 0.005."""
    plan = MWEM(rho=0.04, T=4, measurement="gaussian").plan(small_data(), WORKLOAD)
    assert plan.epsilon_select == pytest.approx(0.2, rel=1e-9)
    assert plan.rho_measure == pytest.approx(0.005, rel=1e-9)
    release = MWEM(rho=0.04, T=4, measurement="gaussian", seed=0).fit(small_data(), WORKLOAD)
    assert release.ledger.spent == pytest.approx(0.04, rel=1e-9)
    assert release.ledger.spent <= 0.04
    with pytest.raises(DPQueryError, match=r"epsilon .* or rho, not both"):
        MWEM(rho=0.02, epsilon=1.0, T=4).plan(small_data(), WORKLOAD)


# == FEM -> MWEM =============================================================================


def small_reweighted(oracle="heuristic", **kwargs) -> Reweighted:
    options = {"epsilon": 2.0, "fraction": 0.25, "T": 5, "seed": 7, **kwargs}
    return Reweighted(FEM(c=0.1, samples=4, oracle=oracle, progress=False), **options)


def test_budget_split_and_combined_ledger_hand_computed() -> None:
    """epsilon 2, delta 1/n^2: rho = zcdp_rho_for(2, delta); FEM gets 3/4 of it (its T
    rounds at epsilon_0 = c sqrt(2), c = 0.1, epsilon_0^2 / 8 each), MWEM 1/4 (5 rounds, each
    0.9 of rho/20 to selection and 0.1 to measurement); the release's ledger holds all of
    it, under the one (2, 1/n^2) budget."""
    data = small_data()
    release = small_reweighted().fit(data, WORKLOAD)
    rho = zcdp_rho_for(2.0, 1 / data.n**2)
    p = release.parameters
    assert p["rho_base"] == pytest.approx(0.75 * rho) and p["rho_base"] <= 0.75 * rho
    assert p["rho_mwem"] == pytest.approx(0.25 * rho) and p["rho_mwem"] <= 0.25 * rho
    eps0 = 0.1 * math.sqrt(2.0)
    assert p["base"]["epsilon0"] == pytest.approx(eps0)
    assert p["base"]["T"] == math.floor(0.75 * rho * (1 - 1e-9) / (eps0**2 / 8))
    per = {m["mechanism"]: m for m in release.ledger.report().to_dict()["per_mechanism"]}
    fem_em = per["fem: FEM query selection (exponential mechanism)"]
    assert fem_em["invocations"] == p["base"]["T"]
    assert per["mwem: MWEM exponential mechanism"]["invocations"] == 5
    # 90% of each MWEM round to selection (bounded range: epsilon^2 / 8), 10% to measurement
    mwem_em = per["mwem: MWEM exponential mechanism"]
    assert mwem_em["epsilon"] == pytest.approx(5 * math.sqrt(8 * 0.9 * 0.25 * rho / 5))
    assert per["mwem: MWEM measurement"]["rho"] == pytest.approx(0.1 * 0.25 * rho)
    budget = release.ledger.budget
    assert (budget.epsilon, budget.delta) == (2.0, 1 / data.n**2)
    assert release.ledger.spent <= 2.0
    assert release.records.m <= p["base"]["T"] * 4  # distinct records of FEM's release


@pytest.mark.parametrize(("epsilon", "T"), [(0.25, 40), (1.0, 80), (2.0, 113), (1e-5, 1)])
def test_default_mwem_rounds_are_80_sqrt_epsilon(epsilon, T) -> None:
    _, mwem = Reweighted(FEM(c=0.1), epsilon=epsilon).stages(small_data(), WORKLOAD)
    assert mwem.T == T


def test_reweighting_with_a_rho_budget_needs_the_base_epsilon0() -> None:
    data = small_data()
    with pytest.raises(DPQueryError, match="with a rho budget give the base epsilon0 or T"):
        Reweighted(FEM(), rho=0.5).fit(data, WORKLOAD)
    release = Reweighted(SepFEM(epsilon0=0.3, samples=3, progress=False), rho=0.5, T=3, seed=0).fit(
        data, WORKLOAD
    )
    assert release.ledger.spent <= 0.5
    assert release.parameters["base"]["algorithm"] == "sepfem"


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (Reweighted(FEM(), epsilon=1.0, fraction=1.0), "fraction must lie strictly between"),
        (Reweighted(FEM(), epsilon=1.0, fraction=0), "fraction must lie strictly between"),
        (Reweighted(FEM(epsilon=1.0), epsilon=1.0), "leave the base's budget unset"),
        (Reweighted(MWEM(), epsilon=1.0), "the base must be FEM or SepFEM, got MWEM"),
        (Reweighted(FEM()), "give a budget"),
        (Reweighted(FEM(), epsilon=1.0, rho=0.1), "give a budget"),
        (Reweighted(FEM(T=10**6, epsilon0=1.0), epsilon=0.5), "more than the budget"),
        (Reweighted(FEM(), epsilon=1.0, size=0), "size must be a positive integer"),
        (Reweighted(FEM(c=0.1), epsilon=1.0, max_cells=100), "more than max_cells=100"),
        (Reweighted(FEM(epsilon0=0.1), rho=0.1), "with a rho budget give T, MWEM's rounds"),
    ],
)
def test_bad_configurations_are_refused_before_anything_is_drawn(model, match, monkeypatch):
    def no_fit(*args, **kwargs):
        raise AssertionError("a stage ran")

    monkeypatch.setattr(FEM, "fit", no_fit)
    monkeypatch.setattr(MWEM, "fit", no_fit)
    with pytest.raises(DPQueryError, match=match):
        model.fit(small_data(), WORKLOAD)


def test_a_seed_reproduces_the_release_and_the_base_is_not_modified() -> None:
    data = small_data()
    base = FEM(c=0.1, samples=4, progress=False)
    a = Reweighted(base, epsilon=2.0, T=5, seed=11).fit(data, WORKLOAD)
    b = Reweighted(base, epsilon=2.0, T=5, seed=11).fit(data, WORKLOAD)
    np.testing.assert_array_equal(a.records.rows, b.records.rows)
    np.testing.assert_array_equal(a.records.weights, b.records.weights)
    assert (base.rho, base.epsilon0, base.seed) == (None, None, None)
    sized = Reweighted(base, epsilon=2.0, T=5, seed=11, size=25).fit(data, WORKLOAD)
    assert sized.records.m == 25


@pytest.mark.parametrize("fault", ["raises", "two-bits-in-group", "not-a-result"])
def test_a_faulty_base_oracle_changes_nothing_that_was_spent(fault) -> None:
    """The FEM stage's oracle is untrusted: whatever it does, both stages spend what the
    plan says (same ledger as with the real oracle) and the support is valid records."""
    data = small_data()
    reference = small_reweighted().fit(data, WORKLOAD)
    oracle = FaultyOracle(FAULTS[fault])
    release = small_reweighted(oracle).fit(data, WORKLOAD)
    assert oracle.calls > 0
    assert release.ledger.totals == reference.ledger.totals
    assert release.privacy() == reference.privacy()
    assert one_hot_ok(release.records.rows, data.onehot_groups)
