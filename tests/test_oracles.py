"""Best-response oracles: every oracle against brute force, and the problem type itself."""

from __future__ import annotations

import numpy as np
import pytest

from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import (
    BestResponse,
    HeuristicOracle,
    OracleResult,
    get_oracle,
    oracle_names,
    presolve,
    validate_record,
)
from dpquery.oracles.brute import feasible_count, objectives
from dpquery.queries import Workload, answer
from dpquery.queries.generators import random_parities


def random_problem(
    rng: np.random.Generator,
    *,
    d: int | None = None,
    groups: bool = True,
    parity: float = 0.0,
    linear: bool = False,
    negative: float = 0.4,
    negated: float = 0.4,
) -> BestResponse:
    """A small random instance: groups of 2-4 bits with free bits between them."""
    d = int(rng.integers(4, 13)) if d is None else d
    ranges, j = [], 0
    while groups and j < d - 1:
        size = int(rng.integers(2, 5))
        if j + size <= d and rng.random() < 0.7:
            ranges.append((j, j + size))
            j += size
        j += int(rng.integers(0, 2))
    m = int(rng.integers(1, 3 * d))
    k = rng.integers(1, min(4, d) + 1, size=m)
    is_parity = rng.random(m) < parity
    bits = np.concatenate([rng.choice(d, size=kk, replace=False) for kk in k])
    pos = (rng.random(bits.size) >= negative) | np.repeat(is_parity, k)
    weight = rng.integers(1, 4, size=m).astype(float)
    return BestResponse(
        d,
        np.concatenate([[0], np.cumsum(k)]),
        bits,
        pos,
        is_parity,
        rng.random(m) < negated,
        weight,
        np.array(ranges, dtype=np.int64).reshape(-1, 2),
        rng.normal(scale=0.7, size=d) if linear else None,
    )


CASES = [
    dict(groups=False),
    dict(groups=True),
    dict(groups=True, negative=0.0, negated=0.5),  # marginal-cell shaped
    dict(groups=False, parity=1.0, negative=0.0),
    dict(groups=True, parity=0.4),
    dict(groups=True, parity=0.3, linear=True),
    dict(groups=False, linear=True),
]


def brute(problem: BestResponse) -> OracleResult:
    return get_oracle("brute").solve(problem)


# -- the problem type ---------------------------------------------------------------------
def test_objective_matches_query_evaluation() -> None:
    """Clause values equal dpquery.queries' answers on a one-record set (negations too)."""
    rng = np.random.default_rng(0)
    d = 9
    for kind in ("conjunction", "disjunction", "parity"):
        queries = []
        for _ in range(30):
            bits = rng.choice(d, size=int(rng.integers(1, 4)), replace=False)
            queries.append([(int(b), kind == "parity" or bool(rng.random() < 0.6)) for b in bits])
        w = Workload.from_lists(kind, d, queries)  # type: ignore[arg-type]
        sampled = rng.integers(0, 2 * len(w), size=80)
        problem = BestResponse.from_workload(w, sampled)
        counts = np.bincount(sampled, minlength=2 * len(w)).astype(float)
        for _ in range(20):
            x = rng.integers(0, 2, size=d).astype(np.uint8)
            closed = w.closed(answer(w, Records(x[None, :])))
            assert problem.objective(x) == pytest.approx(float(counts @ closed))
            assert objectives(problem, x[None, :])[0] == pytest.approx(problem.objective(x))


def test_from_workload_aggregates_duplicates_and_uses_domain_groups() -> None:
    w = Workload.from_lists("conjunction", 4, [[(0, True), (2, True)], [(1, False)]])
    p = BestResponse.from_workload(w, np.array([0, 3, 0, 0, 1]), onehot_groups=np.array([[0, 2]]))
    assert p.n_clauses == 3
    np.testing.assert_array_equal(p.weight, [3.0, 1.0, 1.0])
    np.testing.assert_array_equal(p.negated, [False, False, True])
    assert p.kind(0) == "conjunction"
    assert p.onehot_groups.tolist() == [[0, 2]]


def test_parity_sign_convention() -> None:
    w = random_parities(6, 3, 1, seed=1)
    bits = w.literals(0)
    p = BestResponse.from_workload(w, np.array([0]))
    x = np.zeros(6, np.uint8)
    assert p.objective(x) == 1.0  # no bit set: even
    x[bits[0][0]] = 1
    assert p.objective(x) == -1.0
    neg = BestResponse.from_workload(w, np.array([1]))
    assert neg.objective(x) == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(weight=[0.0]), "weights"),
        (dict(weight=[np.nan]), "weights"),
        (dict(bits=[0, 9]), "outside"),
        (dict(bits=[1, 1]), "twice"),
        (dict(parity=[True]), "positive"),
        (dict(onehot_groups=[[2, 1]]), "group"),
        (dict(onehot_groups=[[0, 3], [2, 4]]), "overlap"),
        (dict(linear=np.ones(3)), "linear"),
        (dict(negated=[True, False]), "one entry per clause"),
        (dict(d=0), "d must be"),
    ],
)
def test_bad_problems_raise(kwargs: dict, match: str) -> None:
    base = dict(
        d=5, offsets=[0, 2], bits=[0, 1], positive=[True, False], parity=[False],
        negated=[False], weight=[1.0],
    )  # fmt: skip
    base.update(kwargs)
    with pytest.raises(DPQueryError, match=match):
        BestResponse(**base)  # type: ignore[arg-type]


def test_from_workload_rejects_bad_indices() -> None:
    w = Workload.from_lists("conjunction", 3, [[(0, True)]])
    with pytest.raises(DPQueryError, match="outside the closed workload"):
        BestResponse.from_workload(w, np.array([2]))
    with pytest.raises(DPQueryError, match="integer"):
        BestResponse.from_workload(w, np.array([0.5]))


# -- oracles against brute force -----------------------------------------------------------
@pytest.mark.parametrize("index", range(len(CASES)), ids=[str(c) for c in CASES])
def test_oracles_match_brute_force(index: int) -> None:
    case = CASES[index]
    rng = np.random.default_rng(100 + index)
    oracles = {
        "heuristic": get_oracle("heuristic"),
        "heuristic-nopresolve": get_oracle("heuristic", presolve=False),
        "cpsat": get_oracle("cpsat"),
        "cpsat-nohint": get_oracle("cpsat", hint=False, presolve=False),
        "highs": get_oracle("highs"),
        "highs-nohint": get_oracle("highs", hint=False, presolve=False),
    }
    for _ in range(12):
        problem = random_problem(rng, **case)
        truth = brute(problem)
        assert truth.optimal
        for name, oracle in oracles.items():
            result = oracle.solve(problem, seed=int(rng.integers(2**31)))
            assert problem.is_feasible(result.record), name
            assert result.objective == pytest.approx(truth.objective, abs=1e-9), (name, problem)
            assert result.objective == pytest.approx(problem.objective(result.record))
            if name.startswith(("cpsat", "highs")):
                assert result.optimal, (name, result.status, result.bound, result.objective)
                assert result.bound is not None
                assert result.bound >= truth.objective - 1e-6 * problem.upper_bound()


def test_presolve_keeps_an_optimum_and_the_constant() -> None:
    rng = np.random.default_rng(7)
    for _ in range(60):
        problem = random_problem(rng, parity=0.2, linear=bool(rng.random() < 0.3))
        pre = presolve(problem)
        truth = brute(problem).objective
        if pre.reduced is None:
            assert problem.objective(pre.lift(None)) == pytest.approx(truth)
            continue
        reduced_best = brute(pre.reduced)
        assert reduced_best.objective + pre.constant == pytest.approx(truth)
        for _ in range(5):  # the constant holds at every reduced record
            y = get_oracle("heuristic", kicks=0, restarts=1).solve(
                pre.reduced, seed=int(rng.integers(100))
            )
            lifted = pre.lift(y.record)
            assert problem.is_feasible(lifted)
            assert problem.objective(lifted) == pytest.approx(y.objective + pre.constant)


def test_presolve_fixes_monotone_bits() -> None:
    # bit 0 only in positive conjunctions, bit 1 only negatively; bit 2 in a parity (kept)
    p = BestResponse(
        4, [0, 2, 3, 5], [0, 1, 1, 2, 3], [True, False, False, True, True],
        [False, False, True], [False, False, False], [1.0, 1.0, 1.0],
    )  # fmt: skip
    pre = presolve(p)
    assert pre.fixed[0] == 1 and pre.fixed[1] == 0
    assert pre.fixed[2] == -1 and pre.fixed[3] == -1


def test_group_presolve_and_free_mask() -> None:
    # group [0, 4): bit 0 wanted, bit 1 unwanted, bits 2-3 untouched; group [4, 7) untouched
    p = BestResponse(
        8, [0, 1, 2], [0, 1], [True, True], [False, False], [False, True], [2.0, 1.0],
        np.array([[0, 4], [4, 7]]),
    )  # fmt: skip
    result = get_oracle("heuristic").solve(p, seed=0)
    assert result.record[:4].tolist() == [1, 0, 0, 0]
    assert result.objective == 3.0
    assert result.bound == 3.0 and result.optimal  # presolve solved it outright
    assert result.free.tolist() == [False, False, False, False, True, True, True, True]


def test_free_mask_when_group_one_sits_on_untouched_bit() -> None:
    # the only clause is a negated conjunction on bit 0: moving off bit 0 is best
    p = BestResponse(
        4, [0, 1], [0], [True], [False], [True], [1.0], np.array([[0, 3]])
    )  # fmt: skip
    result = get_oracle("cpsat").solve(p)
    assert result.record[0] == 0 and result.objective == 1.0
    assert result.free.tolist() == [False, True, True, True]


# -- reproducibility, limits, robustness ---------------------------------------------------
def test_heuristic_reproducible_per_seed() -> None:
    rng = np.random.default_rng(3)
    problem = random_problem(rng, d=60, groups=True, parity=0.1, linear=True)
    oracle = HeuristicOracle(restarts=2, kicks=30)
    a, b = oracle.solve(problem, seed=11), oracle.solve(problem, seed=11)
    np.testing.assert_array_equal(a.record, b.record)
    assert a.objective == b.objective


def _hard_problem() -> BestResponse:
    """Random max-3-SAT-like: too big to prove optimal in a few milliseconds."""
    rng = np.random.default_rng(5)
    d, m = 200, 3000
    bits = np.concatenate([rng.choice(d, size=3, replace=False) for _ in range(m)])
    return BestResponse(
        d, np.arange(0, 3 * m + 1, 3), bits, rng.random(3 * m) < 0.5, np.zeros(m, bool),
        rng.random(m) < 0.5, np.ones(m),
    )  # fmt: skip


@pytest.mark.parametrize("name", ["cpsat", "highs"])
def test_time_limit_returns_incumbent(name: str) -> None:
    problem = _hard_problem()
    result = get_oracle(name, time_limit=0.01, hint_kicks=5).solve(problem, seed=0)
    assert result.timed_out and not result.optimal
    assert problem.is_feasible(result.record)
    assert result.bound is not None and result.bound > result.objective
    assert result.objective == problem.objective(result.record)


def test_brute_refuses_large_problems() -> None:
    p = BestResponse(30, [0, 1], [0], [True], [False], [False], [1.0])
    with pytest.raises(DPQueryError, match="max_records"):
        get_oracle("brute").solve(p)
    assert feasible_count(p) == 2**30


def test_registry() -> None:
    assert set(oracle_names()) == {"heuristic", "cpsat", "highs", "brute"}
    assert get_oracle().name == "heuristic"
    with pytest.raises(DPQueryError, match="unknown oracle 'gurobi'"):
        get_oracle("gurobi")
    with pytest.raises(DPQueryError, match="bad options"):
        get_oracle("heuristic", time_limit=3)
    with pytest.raises(DPQueryError, match="time_limit"):
        get_oracle("cpsat", time_limit=-1)
    with pytest.raises(DPQueryError, match="kicks"):
        get_oracle("heuristic", kicks=-1)


def test_validate_record() -> None:
    p = BestResponse(
        5, [0, 1], [3], [True], [False], [False], [1.0], np.array([[0, 3]])
    )  # fmt: skip
    good = np.array([0, 1, 0, 1, 0])
    assert validate_record(p, good).dtype == np.uint8
    for bad, match in [
        (np.zeros(4), "shape"),
        (np.array([0, 1, 0, np.nan, 0]), "non-finite"),
        (np.array([0, 1, 0, 0.7, 0]), "non-binary"),
        (np.array([1, 1, 0, 1, 0]), "2 bits set"),
        (np.array([0, 0, 0, 1, 0]), "0 bits set"),
        ("abc", "not numeric"),
    ]:
        with pytest.raises(DPQueryError, match=match):
            validate_record(p, bad)
    repaired = validate_record(p, np.array([1, 1, 1, 0.7, 0]), repair=True)
    assert p.is_feasible(repaired) and repaired[3] == 1
    with pytest.raises(DPQueryError, match="shape"):
        validate_record(p, np.zeros(4), repair=True)


def test_repair_picks_best_bit_of_broken_group() -> None:
    # the clause wants bit 2 of the group
    p = BestResponse(3, [0, 1], [2], [True], [False], [False], [1.0], np.array([[0, 3]]))
    repaired = validate_record(p, np.zeros(3), repair=True)
    assert repaired.tolist() == [0, 0, 1]


def marginal_cells_problem(rng: np.random.Generator, sizes: list[int], s: int) -> BestResponse:
    """3-way marginal cells over one-hot attributes (DualQuery Section 5.2), sampled with
    their negations, as a DualQuery round would hand to the oracle."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    groups = np.stack([starts[:-1], starts[1:]], axis=1)
    queries = []
    for _ in range(4 * s):
        attrs = rng.choice(len(sizes), size=3, replace=False)
        queries.append([(int(starts[a] + rng.integers(sizes[a])), True) for a in attrs])
    w = Workload.from_lists("conjunction", int(starts[-1]), queries)
    return BestResponse.from_workload(w, rng.integers(0, 2 * len(w), size=s), onehot_groups=groups)


def test_heuristic_reaches_certified_optimum_on_medium_marginal_instances() -> None:
    """Beyond brute force: CP-SAT certifies, and the default heuristic must match it."""
    rng = np.random.default_rng(21)
    for _ in range(4):
        problem = marginal_cells_problem(rng, [5, 3, 7, 4, 6, 2, 8, 3, 5], s=120)
        exact = get_oracle("cpsat", hint=False).solve(problem, seed=0)
        assert exact.optimal
        heuristic = get_oracle("heuristic").solve(problem, seed=0)
        assert heuristic.objective == exact.objective
        assert problem.is_feasible(heuristic.record)
