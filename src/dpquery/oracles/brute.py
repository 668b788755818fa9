"""Brute force: score every feasible record. Ground truth for the tests; tiny d only.

No presolve: the point is to check the presolve and the other oracles against something
that shares none of their reasoning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles.base import Answer, run_pipeline, units
from dpquery.oracles.problem import BestResponse
from dpquery.oracles.result import OracleResult
from dpquery.rng import SeedLike

_CHUNK = 1 << 14


def feasible_count(problem: BestResponse) -> int:
    """Number of feasible records: the product of group sizes times 2^(free bits)."""
    sizes = np.diff(problem.onehot_groups, axis=1).ravel()
    free = problem.d - int(sizes.sum())
    return math.prod(int(s) for s in sizes) * 2**free


def objectives(problem: BestResponse, records: np.ndarray) -> np.ndarray:
    """The objective of every row of ``records`` (an ``(n, d)`` 0/1 matrix)."""
    x = np.asarray(records, dtype=np.float64)
    literal_clause = np.zeros((problem.bits.size, problem.n_clauses))
    literal_clause[np.arange(problem.bits.size), problem.clause_of_literal] = 1.0
    vals = x[:, problem.bits]
    satisfied = np.where(problem.positive, vals, 1.0 - vals) @ literal_clause
    ones = vals @ literal_clause
    conj = (satisfied == np.diff(problem.offsets)).astype(np.float64)
    par = np.where(np.rint(ones).astype(np.int64) % 2 == 0, 1.0, -1.0)
    value = np.where(problem.parity, par, conj)
    value = np.where(problem.negated, np.where(problem.parity, -value, 1.0 - value), value)
    out = value @ problem.weight
    if problem.linear is not None:
        out = out + x @ problem.linear
    return out


def _records(problem: BestResponse, index: np.ndarray) -> np.ndarray:
    """Feasible records number ``index`` in a mixed-radix order over the units."""
    starts, stops, is_group = units(problem)
    radix = np.where(is_group, stops - starts, 2)
    x = np.zeros((index.size, problem.d), dtype=np.uint8)
    rest = index.copy()
    for a, size, group in zip(starts, radix, is_group, strict=True):
        choice = rest % size
        rest //= size
        if group:
            x[np.arange(index.size), a + choice] = 1
        else:
            x[:, a] = choice
    return x


@dataclass(frozen=True)
class BruteForceOracle:
    """Enumerate all feasible records; refuse when there are more than ``max_records``."""

    max_records: int = 1 << 20
    name: str = "brute"

    def solve(self, problem: BestResponse, *, seed: SeedLike = None) -> OracleResult:
        """The exact optimum (lowest enumeration index among ties); ``seed`` is unused."""
        total = feasible_count(problem)
        if total > self.max_records:
            raise DPQueryError(
                f"brute force would enumerate {total} records (d={problem.d}); the limit is "
                f"max_records={self.max_records}"
            )

        def solver(p: BestResponse) -> Answer:
            best_value, best_index = -np.inf, 0
            for lo in range(0, total, _CHUNK):
                index = np.arange(lo, min(total, lo + _CHUNK), dtype=np.int64)
                scores = objectives(p, _records(p, index))
                i = int(np.argmax(scores))
                if scores[i] > best_value:
                    best_value, best_index = float(scores[i]), lo + i
            record = _records(p, np.array([best_index]))[0]
            return Answer(record, best_value, "optimal", info={"records": total})

        return run_pipeline(self.name, problem, solver, use_presolve=False)
