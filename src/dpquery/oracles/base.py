"""The shared pipeline of every built-in oracle: presolve, solve the rest, lift, re-score.

A solver only sees the reduced problem and returns a :class:`Answer`; the pipeline lifts
its record to the original bits, checks it with :func:`validate_record`, recomputes the
objective itself, shifts the solver's bound by the presolve constant, and decides
``optimal`` from those two numbers, never from the solver's word alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpquery.oracles.presolve import Presolved, no_presolve, presolve
from dpquery.oracles.problem import BestResponse
from dpquery.oracles.result import (
    OPTIMALITY_TOLERANCE,
    OracleResult,
    free_mask,
    is_optimal,
    validate_record,
)


@dataclass
class Answer:
    """What a solver says about the reduced problem."""

    record: np.ndarray
    bound: float | None
    status: str
    timed_out: bool = False
    info: dict[str, Any] = field(default_factory=dict)


Solver = Callable[[BestResponse], Answer]


def run_pipeline(
    name: str, problem: BestResponse, solver: Solver, *, use_presolve: bool = True
) -> OracleResult:
    """Presolve (optionally), solve the reduced problem with ``solver``, build the result."""
    started = time.perf_counter()
    pre = presolve(problem) if use_presolve else no_presolve(problem)
    presolve_seconds = time.perf_counter() - started
    if pre.reduced is None:
        answer = Answer(np.zeros(0, np.uint8), 0.0, "presolved")
    else:
        answer = solver(pre.reduced)
    return _finish(name, pre, answer, started, presolve_seconds)


def _finish(
    name: str, pre: Presolved, answer: Answer, started: float, presolve_seconds: float
) -> OracleResult:
    problem = pre.original
    record = validate_record(problem, pre.lift(answer.record))
    objective = problem.objective(record)
    bound = None if answer.bound is None else _round_down(problem, answer.bound + pre.constant)
    info = {
        "presolve_seconds": presolve_seconds,
        "presolve_rounds": pre.rounds,
        "kept_bits": pre.kept_bits,
        "live_clauses": pre.live_clauses,
        **answer.info,
    }
    return OracleResult(
        record=record,
        objective=objective,
        bound=bound,
        optimal=is_optimal(objective, bound, _scale(problem)),
        seconds=time.perf_counter() - started,
        status=answer.status,
        timed_out=answer.timed_out,
        free=free_mask(problem, record),
        oracle=name,
        info=info,
    )


def _round_down(problem: BestResponse, bound: float) -> float:
    """Tighten a bound to an integer when every feasible objective value is an integer.

    That holds when the weights are integers (multiplicities) and the linear term is absent
    or integral: parities contribute ``±w``, conjunctions ``0`` or ``w``. MIP solvers report
    fractional dual bounds such as 497.9 where 497 is already proven.
    """
    integral = np.all(problem.weight == np.rint(problem.weight)) and (
        problem.linear is None or np.all(problem.linear == np.rint(problem.linear))
    )
    if not integral:
        return bound
    return float(np.floor(bound + OPTIMALITY_TOLERANCE * max(1.0, _scale(problem))))


def _scale(problem: BestResponse) -> float:
    linear = 0.0 if problem.linear is None else float(np.abs(problem.linear).sum())
    return problem.total_weight + linear


def units(problem: BestResponse) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decision units ``[start, stop)``: every one-hot group, and every free bit alone."""
    in_group = problem.group_of_bit >= 0
    free = np.flatnonzero(~in_group)
    starts = np.concatenate([problem.onehot_groups[:, 0], free])
    stops = np.concatenate([problem.onehot_groups[:, 1], free + 1])
    is_group = np.concatenate(
        [np.ones(len(problem.onehot_groups), bool), np.zeros(free.size, bool)]
    )
    order = np.argsort(starts, kind="stable")
    return starts[order], stops[order], is_group[order]


def incidence(problem: BestResponse) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bit-to-clause incidence (CSC of the literal matrix): ``ptr``, ``clause``, ``positive``."""
    order = np.argsort(problem.bits, kind="stable")
    ptr = np.zeros(problem.d + 1, dtype=np.int64)
    np.cumsum(np.bincount(problem.bits, minlength=problem.d), out=ptr[1:])
    return ptr, problem.clause_of_literal[order], problem.positive[order]


def first_feasible(problem: BestResponse) -> np.ndarray:
    """The record with every free bit 0 and each group's first bit set."""
    x = np.zeros(problem.d, dtype=np.uint8)
    x[problem.onehot_groups[:, 0]] = 1
    return x
