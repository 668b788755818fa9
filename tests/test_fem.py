"""FEM and sepFEM (Oracle-efficient, Algorithms 1-3): the ledger against Theorem 8's formulas,
the budget modes at their boundary, the perturbed oracle problems against brute force,
reproducibility, one-hot records and weights, and accuracy.

Randomised checks are seeded; where an assertion is statistical, the comment states the
false-failure rate over seeds (the seeded run itself is deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.conftest import one_hot_ok, sample_table

from dpquery.algorithms.game.fem import (
    AUTHORS_ADULT,
    FEM,
    ExponentialPerturbation,
    SeparatorPerturbation,
    SepFEM,
    fem_accountant,
    plan_fem,
    with_weighted_queries,
)
from dpquery.data import Binary, BinaryData, Categorical, Domain, Records, encode
from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse, get_oracle
from dpquery.privacy import Budget, Composition
from dpquery.privacy.fem import fem_plan, fem_round_epsilon, fem_round_rho
from dpquery.queries import Workload, answer, random_marginal_queries, random_parities

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Categorical("size", (1, 2, 3, 4)),
        Binary("e"),
        Binary("f"),
    )
)


def small_data(n: int = 2000, seed: int = 0) -> BinaryData:
    return encode(sample_table(DOMAIN, n, seed), DOMAIN)


def small_workload(count: int = 60, seed: int = 1) -> Workload:
    return random_marginal_queries(DOMAIN, 2, count, seed=seed)


def rho_of(release, bounded_range: bool) -> float:
    totals = release.ledger.totals
    return totals.rho_bounded_range if bounded_range else totals.rho_lemma1


# == the ledger equals Theorem 8's formulas ==================================================


@pytest.mark.parametrize("accounting", ["zcdp", "bounded-range"])
def test_ledger_has_T_rounds_of_rho0(accounting) -> None:
    """rho_0 = rho / T per round: epsilon_0 = sqrt(2 rho_0) (Lemma 4) or sqrt(8 rho_0)
    (bounded range), and the ledger's T charges sum to rho."""
    data, workload = small_data(), small_workload()
    rho, T = 0.02, 6
    release = FEM(rho=rho, T=T, samples=4, accounting=accounting, seed=0,
                  progress=False, workers=1).fit(data, workload)  # fmt: skip
    br = accounting == "bounded-range"
    rho0 = fem_round_rho(rho, T)
    eps0 = release.parameters["epsilon0"]
    assert eps0 == pytest.approx(fem_round_epsilon(rho0, bounded_range=br), rel=1e-12)
    assert eps0 == pytest.approx(math.sqrt((8 if br else 2) * rho / T), rel=1e-12)
    entries = release.ledger.entries
    assert len(entries) == T and all(e.charge.count == 1 for e in entries)
    assert all(e.charge.cost.epsilon == eps0 and e.charge.cost.bounded_range for e in entries)
    assert rho_of(release, br) == pytest.approx(rho, rel=1e-12)
    assert rho_of(release, br) <= rho
    # the same charges measured the other way: Lemma 4 is 4 times the bounded-range rho
    assert rho_of(release, not br) == pytest.approx(rho * (4.0 if br else 0.25), rel=1e-12)


def test_epsilon_budget_spends_at_most_epsilon_and_reports_the_accountant() -> None:
    data, workload = small_data(), small_workload()
    release = FEM(epsilon=1.0, epsilon0=0.1, samples=3, seed=0, progress=False,
                  workers=1).fit(data, workload)  # fmt: skip
    p = release.parameters
    assert release.ledger.budget.delta == pytest.approx(1 / data.n**2)
    assert release.ledger.spent <= 1.0
    assert "bounded range" in p["accountant"]
    assert p["accounting"] == "bounded-range" and p["mode"] == "budget (largest T)"
    assert len(release.ledger.entries) == p["T"]


@pytest.mark.parametrize("accounting", ["zcdp", "bounded-range"])
@pytest.mark.parametrize(("epsilon", "epsilon0"), [(0.1, 0.0025), (1.0, 0.008), (0.5, 0.05)])
def test_budget_mode_T_fits_and_T_plus_1_does_not(accounting, epsilon, epsilon0) -> None:
    n = 48_842
    plan = plan_fem(n=n, epsilon=epsilon, epsilon0=epsilon0, accounting=accounting)
    acc = fem_accountant(accounting)
    budget = Budget.approx(epsilon, 1 / n**2)

    def spent(T: int) -> float:
        return acc.epsilon(Composition(fem_plan(T=T, epsilon0=epsilon0)).totals(), budget.delta)

    assert spent(plan.T) <= epsilon < spent(plan.T + 1)
    # bounded range charges a quarter, so about 4 times as many rounds fit
    other = plan_fem(
        n=n,
        epsilon=epsilon,
        epsilon0=epsilon0,
        accounting="zcdp" if accounting == "bounded-range" else "bounded-range",
    )
    ratio = plan.T / other.T if accounting == "bounded-range" else other.T / plan.T
    assert 3.5 < ratio < 4.5


def test_budget_mode_given_T_largest_epsilon0() -> None:
    plan = plan_fem(n=1000, epsilon=0.5, T=40)
    acc = fem_accountant(plan.accounting)

    def spent(e0: float) -> float:
        return acc.epsilon(Composition(fem_plan(T=40, epsilon0=e0)).totals(), 1e-6)

    assert spent(plan.epsilon0) <= 0.5 < spent(math.nextafter(plan.epsilon0, 1.0))
    assert plan.mode == "budget (rho/T)"


def test_scaled_mode_and_authors_preset() -> None:
    c, m, s = AUTHORS_ADULT["authors-adult-3way"]
    plan = plan_fem(n=48_842, epsilon=0.25, c=c, noise_multiple=m, s=s, accounting="zcdp")
    assert plan.epsilon0 == pytest.approx(c * math.sqrt(0.25))
    assert plan.eta == pytest.approx(m * math.sqrt(plan.T))
    assert plan.s == 50
    est = FEM(epsilon=0.25, preset="authors-adult-3way", accounting="zcdp")
    data = BinaryData.from_dense(np.zeros((48_842, 2), np.uint8))
    workload = Workload.from_lists("conjunction", 2, [[(0, True)]])
    assert est.plan(data, workload) == plan
    with pytest.raises(DPQueryError, match="unknown preset"):
        FEM(epsilon=1.0, preset="nope").plan(data, workload)


def test_explicit_mode_states_its_cost() -> None:
    plan = plan_fem(n=1000, T=10, epsilon0=0.1, eta=1.0)
    assert plan.mode == "explicit"
    acc = fem_accountant(plan.accounting)
    cost = acc.epsilon(Composition(plan.charges()).totals(), plan.budget.delta)
    assert cost <= plan.budget.epsilon <= math.nextafter(cost, 2.0)


def test_plan_errors_name_the_bad_value() -> None:
    with pytest.raises(DPQueryError, match="T must be a positive integer, got 0"):
        plan_fem(n=100, epsilon=1.0, T=0)
    with pytest.raises(DPQueryError, match="epsilon0 must be a positive finite number"):
        plan_fem(n=100, epsilon=1.0, epsilon0=-1.0)
    with pytest.raises(DPQueryError, match="more than the budget"):
        plan_fem(n=100, epsilon=0.1, T=1000, epsilon0=1.0)
    with pytest.raises(DPQueryError, match="accounting must be one of"):
        plan_fem(n=100, epsilon=1.0, accounting="pure")  # type: ignore[arg-type]
    with pytest.raises(DPQueryError, match="give a budget"):
        plan_fem(n=100, T=3)
    with pytest.raises(DPQueryError, match="eta or noise_multiple"):
        plan_fem(n=100, epsilon=1.0, eta=1.0, noise_multiple=0.1)


def test_over_budget_fit_fails_before_any_work() -> None:
    data, workload = small_data(), small_workload()
    with pytest.raises(DPQueryError, match="more than the budget"):
        FEM(epsilon=0.01, T=50, epsilon0=0.5, workers=1).fit(data, workload)


# == the perturbed oracle problems against brute force =======================================


def feasible_records(d: int, groups: np.ndarray) -> np.ndarray:
    """Every record with one bit per group and free bits anything (96 for DOMAIN)."""
    free = [j for j in range(d) if not any(a <= j < b for a, b in groups)]
    picks = np.array(np.meshgrid(*[range(a, b) for a, b in groups], indexing="ij"))
    rows = []
    for pick in picks.reshape(len(groups), -1).T:
        for mask in range(2 ** len(free)):
            x = np.zeros(d, np.uint8)
            x[pick] = 1
            x[free] = [(mask >> i) & 1 for i in range(len(free))]
            rows.append(x)
    return np.array(rows)


def per_record_answers(workload: Workload, rows: np.ndarray) -> np.ndarray:
    """``(records, queries)``: each query's answer on each one-record set."""
    return np.array([answer(workload, Records(x[None, :])) for x in rows])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["fem", "sepfem-bits", "sepfem-workload"])
def test_perturbed_oracle_equals_brute_force(kind, seed) -> None:
    """The oracle's perturbed leader maximises sum_i q_i(x) + perturbation(x), computed here
    directly from the queries' answers on the one-record set (brute force over all 96
    feasible records of the small domain)."""
    rng = np.random.default_rng(seed)
    workload = small_workload(40, seed=seed)
    d, groups = workload.d, DOMAIN.onehot_groups
    chosen = rng.integers(0, 2 * len(workload), size=7)
    leader = BestResponse.from_workload(workload, chosen, onehot_groups=groups)
    separator = None
    if kind == "fem":
        pert = ExponentialPerturbation(2.0)
    elif kind == "sepfem-bits":
        pert = SeparatorPerturbation(2.0)
    else:
        separator = random_marginal_queries(DOMAIN, 2, 12, seed=seed + 10)
        pert = SeparatorPerturbation(2.0, separator)
    sigma = pert.draw(rng, 1, d)[0]
    problem = pert.perturb(leader, sigma)

    rows = feasible_records(d, groups)
    a = per_record_answers(workload, rows)
    value = np.concatenate([a, 1 - a], axis=1)[:, chosen].sum(axis=1)
    if kind == "fem":
        value = value - rows @ sigma
    elif kind == "sepfem-bits":
        value = value + rows @ sigma
    else:
        assert separator is not None
        value = value + per_record_answers(separator, rows) @ sigma
    best = value.max()
    index = {x.tobytes(): i for i, x in enumerate(rows)}
    # Constant offsets (negated separator clauses) shift objectives, never the argmax.
    for oracle in ("brute", "heuristic"):
        record = get_oracle(oracle).solve(problem, seed=0).record
        assert value[index[np.asarray(record, np.uint8).tobytes()]] == pytest.approx(best, abs=1e-9)


def test_single_bit_separator_workload_equals_linear_term() -> None:
    """sepFEM's default separator (the d bits, a linear term) is the same problem as the
    explicit workload of the d single-bit queries (weighted clauses), up to a constant."""
    d = DOMAIN.d
    bits = Workload.from_lists("conjunction", d, [[(j, True)] for j in range(d)], DOMAIN)
    rng = np.random.default_rng(3)
    leader = BestResponse.from_workload(small_workload(), rng.integers(0, 120, 5))
    sigma = rng.laplace(0, 1.0, size=d)
    a = SeparatorPerturbation(1.0).perturb(leader, sigma)
    b = with_weighted_queries(leader, bits, sigma)
    records = np.array([get_oracle("heuristic").solve(a, seed=s).record for s in range(3)])
    offsets = {round(a.objective(x) - b.objective(x), 9) for x in records}
    offsets |= {round(a.objective(x) - b.objective(x), 9) for x in np.eye(d, dtype=np.uint8)}
    assert len(offsets) == 1  # the same objective up to one constant
    assert get_oracle("brute").solve(a).objective - get_oracle("brute").solve(b).objective == (
        pytest.approx(offsets.pop())
    )


# == runs: reproducibility, records, weights ==================================================


def test_same_seed_same_release_any_worker_count() -> None:
    data, workload = small_data(), small_workload()
    kw = dict(epsilon=1.0, epsilon0=0.2, samples=6, progress=False)
    a = FEM(seed=5, workers=1, **kw).fit(data, workload)
    b = FEM(seed=5, workers=2, **kw).fit(data, workload)
    c = FEM(seed=6, workers=1, **kw).fit(data, workload)
    assert a.parameters["workers"] == 1 and b.parameters["workers"] == 2
    np.testing.assert_array_equal(a.records.rows, b.records.rows)
    assert [r["query"] for r in a.rounds] == [r["query"] for r in b.rounds]
    assert not np.array_equal(a.records.rows, c.records.rows)


@pytest.mark.parametrize("estimator", [FEM, SepFEM])
def test_records_are_one_hot_with_equal_weights(estimator) -> None:
    data, workload = small_data(), small_workload()
    release = estimator(epsilon=1.0, epsilon0=0.2, samples=5, seed=0, progress=False,
                        workers=1).fit(data, workload)  # fmt: skip
    T = release.parameters["T"]
    assert release.algorithm == estimator.name
    assert release.records.m == T * 5
    assert one_hot_ok(release.records.rows, data.onehot_groups)
    np.testing.assert_allclose(release.records.weights, 1.0 / (T * 5))
    assert sum(r["samples"] for r in release.rounds) == (T - 1) * 5  # + 5 in start()
    resized = estimator(epsilon=1.0, epsilon0=0.2, samples=5, seed=0, size=33,
                        progress=False, workers=1).fit(data, workload)  # fmt: skip
    assert resized.records.m == 33
    assert one_hot_ok(resized.records.rows, data.onehot_groups)
    assert len(resized.ledger.entries) == len(release.ledger.entries)


def test_sepfem_with_a_separator_workload_and_parities() -> None:
    data = small_data()
    workload = random_parities(data.d, 2, 30, seed=0, domain=DOMAIN)
    bits = Workload.from_lists("parity", data.d, [[(j, True)] for j in range(data.d)], DOMAIN)
    release = SepFEM(epsilon=1.0, epsilon0=0.2, samples=4, separator=bits, seed=0,
                     progress=False, workers=1).fit(data, workload)  # fmt: skip
    assert one_hot_ok(release.records.rows, data.onehot_groups)
    assert "10 queries" in release.parameters["perturbation"]
    wrong = Workload.from_lists("conjunction", 3, [[(0, True)]])
    with pytest.raises(DPQueryError, match="separator set is over 3 bits"):
        SepFEM(epsilon=1.0, epsilon0=0.2, separator=wrong, workers=1).fit(data, workload)


# == accuracy =================================================================================


@pytest.mark.parametrize(("estimator", "eta"), [(FEM, 2.0), (SepFEM, 1.0)])
def test_error_beats_uniform_on_small_data(estimator, eta) -> None:
    """n = 20,000, 60 2-way queries, rho = 0.5 (generous), T = 30, s = 20. Seeds 0-4 gave max
    error 0.070-0.111 (FEM, eta 2) and 0.062-0.088 (sepFEM, eta 1) against the uniform
    distribution's 0.311; the assertion (below 0.155) needs an error 1.4 times the worst
    seen (false-failure rate below 1/5 over seeds, observed 0/10)."""
    from dpquery.queries import uniform_answers

    data, workload = small_data(20_000, seed=2), small_workload()
    true = answer(workload, data)
    release = estimator(rho=0.5, T=30, samples=20, eta=eta, seed=0, progress=False,
                        workers=1).fit(data, workload, true)  # fmt: skip
    mine = np.abs(answer(workload, release.records) - true).max()
    assert mine < np.abs(uniform_answers(workload) - true).max() / 2


@pytest.mark.realdata
def test_adult_pgm_smoke(require_dataset) -> None:
    """adult-pgm, 8 random 3-way marginals (all cells), epsilon 0.1, the fixed default.
    Seeds 0-2 gave max error 0.101-0.111 (the published FEM value for 64 marginals is 0.172);
    the assertion (below 0.172) needs an error 1.55 times the worst seen."""
    from dpquery import datasets
    from dpquery.queries import random_marginal_cells

    require_dataset("adult")
    data = datasets.load("adult-pgm")
    workload = random_marginal_cells(data.domain, 3, 8, data.n, seed=0)
    true = answer(workload, data)
    release = FEM(epsilon=0.1, samples=20, seed=0, progress=False).fit(data, workload, true)
    assert release.ledger.spent <= 0.1
    assert np.abs(answer(workload, release.records) - true).max() < 0.172
    assert one_hot_ok(release.records.rows, data.onehot_groups)
