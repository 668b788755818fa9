"""MWEM (Hardt, Ligett and McSherry 2012): domain size refusal, cell enumeration and answers
against brute force, the whole run against a brute-force replay, the ledger, seeds."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from tests.conftest import MIXED_DOMAIN as DOMAIN
from tests.conftest import mixed_data as small_data

from dpquery.algorithms.game.cells import check_domain_size, domain_cells, enumerate_cells
from dpquery.algorithms.game.mwem import MWEM, DomainWeights
from dpquery.data import Domain, biased_bits
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDPAccountant, zcdp_rho_for
from dpquery.queries import (
    Workload,
    answer,
    random_disjunctions,
    random_marginal_queries,
    random_parities,
)
from dpquery.queries.reference import reference_answers


def brute_force_cells(domain: Domain) -> set[tuple[int, ...]]:
    """Every 0/1 vector over the domain's bits with exactly one bit per one-hot group."""
    groups = [range(a, b) for a, b in domain.onehot_groups]
    return {
        bits
        for bits in itertools.product((0, 1), repeat=domain.d)
        if all(sum(bits[j] for j in g) == 1 for g in groups)
    }


# == the domain ===============================================================================


def test_cells_equal_brute_force() -> None:
    cells = enumerate_cells(DOMAIN.d, DOMAIN.onehot_groups)
    assert cells.shape[0] == domain_cells(DOMAIN.d, DOMAIN.onehot_groups) == 3 * 2 * 1 * 4 * 2
    assert {tuple(int(v) for v in row) for row in cells} == brute_force_cells(DOMAIN)
    assert len({tuple(row) for row in cells}) == cells.shape[0]  # no duplicates


def test_oversized_domain_refused_with_size_and_memory() -> None:
    data = biased_bits(50, 300, seed=0)  # 2^300 cells: enumerating would never finish
    workload = random_marginal_queries(Domain.binary(300), 3, 5, seed=0)
    start = time.perf_counter()
    with pytest.raises(DPQueryError) as err:
        MWEM(epsilon=1.0, T=2).fit(data, workload)
    assert time.perf_counter() - start < 30  # refused up front, never enumerated (loose)
    message = str(err.value)
    assert "2.03e90 cells" in message  # 2^300 = 2.037...e90
    assert "max_cells=16,777,216" in message and "TiB of memory" in message


def test_max_cells_is_configurable() -> None:
    groups = DOMAIN.onehot_groups
    assert check_domain_size(DOMAIN.d, groups, max_cells=48) == 48
    with pytest.raises(DPQueryError, match=r"48 cells \(more than max_cells=47\).*MiB|48 cells"):
        check_domain_size(DOMAIN.d, groups, max_cells=47)


@pytest.mark.parametrize(
    "workload",
    [
        random_marginal_queries(DOMAIN, 3, 30, seed=2),
        random_disjunctions(DOMAIN.d, 2, 20, seed=3),
        random_parities(DOMAIN.d, 3, 20, seed=4),
    ],
    ids=["conjunction", "disjunction", "parity"],
)
def test_answers_on_the_distribution_equal_brute_force(workload: Workload) -> None:
    cells = enumerate_cells(DOMAIN.d, DOMAIN.onehot_groups)
    p = np.random.default_rng(5).dirichlet(np.ones(cells.shape[0]))
    lo, hi = workload.value_range
    got = DomainWeights(workload, cells).unit_answers(p) * (hi - lo) + lo
    assert got == pytest.approx(reference_answers(workload, cells, p), abs=1e-12)


# == the whole run against a brute-force replay ============================================


def test_run_equals_brute_force_replay() -> None:
    """Given the private choices (query, noisy measurement) of each round, the released
    weights are the average of the multiplicative-weights iterates, recomputed naively."""
    data = small_data()
    workload = random_marginal_queries(DOMAIN, 2, 40, seed=1)
    release = MWEM(epsilon=2.0, T=5, seed=0).fit(data, workload)
    cells = enumerate_cells(DOMAIN.d, DOMAIN.onehot_groups)
    values = np.array([[reference_answers(workload.subset(np.array([i])), c[None, :])[0]
                        for c in cells] for i in range(len(workload))])  # fmt: skip
    A = np.full(cells.shape[0], 1 / cells.shape[0])
    measured: list[tuple[int, float]] = []
    average = np.zeros_like(A)
    for r in release.rounds:
        measured.append((r["query"], r["measurement"]))
        for i, m in measured:
            A = A * np.exp(values[i] * (m - values[i] @ A) / 2)
            A /= A.sum()
        average += A
    assert release.records.probabilities == pytest.approx(average / len(release.rounds), rel=1e-9)
    rows = release.records.rows
    assert all((rows[:, a:b].sum(axis=1) == 1).all() for a, b in DOMAIN.onehot_groups)
    assert answer(workload, release.records) == pytest.approx(
        reference_answers(workload, rows, release.records.weights), abs=1e-12
    )


def test_selection_prefers_the_worst_query() -> None:
    """With a generous budget the exponential mechanism picks (nearly) the worst query."""
    data = small_data(5000)
    workload = random_marginal_queries(DOMAIN, 2, 40, seed=1)
    uniform = DomainWeights(workload, enumerate_cells(DOMAIN.d, DOMAIN.onehot_groups))
    worst = int(np.argmax(np.abs(answer(workload, data) - uniform.start())))
    release = MWEM(epsilon=500.0, T=1, seed=0).fit(data, workload)
    assert release.rounds[0]["query"] == worst


# == privacy ==================================================================================


def test_pure_ledger_is_epsilon_split_over_2T() -> None:
    release = MWEM(epsilon=1.5, delta=0.0, T=6, seed=0).fit(small_data(), random_marginal_queries(
        DOMAIN, 2, 20, seed=1))  # fmt: skip
    per = {m["mechanism"]: m for m in release.ledger.report().to_dict()["per_mechanism"]}
    assert per["MWEM exponential mechanism"]["invocations"] == 6
    assert per["MWEM measurement"]["invocations"] == 6
    assert per["MWEM exponential mechanism"]["epsilon"] == pytest.approx(0.75, rel=1e-9)
    assert per["MWEM measurement"]["epsilon"] == pytest.approx(0.75, rel=1e-9)
    assert release.ledger.spent <= 1.5


def test_zcdp_ledger_is_rho_for_epsilon_delta() -> None:
    release = MWEM(epsilon=1.0, delta=1e-6, T=4, measurement="gaussian", seed=0).fit(
        small_data(), random_marginal_queries(DOMAIN, 2, 20, seed=1)
    )
    rho = ZCDPAccountant(bounded_range=True).rho(release.ledger.totals)
    assert rho == pytest.approx(zcdp_rho_for(1.0, 1e-6), rel=1e-9)
    assert release.ledger.spent <= 1.0
    assert release.parameters["epsilon_select"] == pytest.approx(
        math.sqrt(8 * zcdp_rho_for(1.0, 1e-6) / 8), rel=1e-9
    )


def test_gaussian_needs_delta() -> None:
    with pytest.raises(DPQueryError, match="delta"):
        MWEM(epsilon=1.0, delta=0.0, T=2, measurement="gaussian").fit(
            small_data(), random_marginal_queries(DOMAIN, 2, 5, seed=1)
        )


def test_seed_reproduces_the_run() -> None:
    data, workload = small_data(), random_marginal_queries(DOMAIN, 2, 30, seed=1)
    a = MWEM(epsilon=1.0, T=4, seed=9).fit(data, workload)
    b = MWEM(epsilon=1.0, T=4, seed=9).fit(data, workload)
    assert np.array_equal(a.records.weights, b.records.weights)
    assert [r["query"] for r in a.rounds] == [r["query"] for r in b.rounds]
