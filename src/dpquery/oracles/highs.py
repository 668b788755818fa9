"""An alternative exact oracle: the HiGHS MIP solver (via ``highspy``) on the linearised IP.

The formulation is the textbook linearisation of DualQuery's program (Section 5.2; FEM
Section 6), with the clause variables continuous because the objective drives them to
integers once ``x`` is integral:

* conjunction: ``z_c <= x_j`` (positive literal) or ``z_c <= 1 - x_j`` (negative),
  ``0 <= z_c <= 1``, objective ``+w_c z_c``;
* negated conjunction: ``a_c >= sum_l l - (k - 1)``, ``0 <= a_c <= 1``, objective
  ``w_c (1 - a_c)``;
* parity over S (DualQuery Appendix A, 0/1 bits): ``sum_S x_j + c_c - 2 y_c = 1``
  (negated: ``sum_S x_j - c_c - 2 y_c = 0``), ``c_c`` binary, ``y_c`` integer in
  ``[0, floor(|S|/2)]``, objective ``w_c (2 c_c - 1)``;
* one-hot groups ``sum_g x_j = 1``; the linear term on ``x``.

A good exact fallback on large plain (group-free) instances (docs/oracles.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import highspy
import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles.base import Answer
from dpquery.oracles.cpsat import _check_limits
from dpquery.oracles.heuristic import solve_hinted
from dpquery.oracles.problem import BestResponse
from dpquery.oracles.result import OracleResult
from dpquery.rng import SeedLike
from dpquery.validation import positive_int

_banner_shown = False


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence file descriptor 1: HiGHS prints a banner when its first instance is made."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _new_highs() -> highspy.Highs:
    global _banner_shown
    if _banner_shown:
        h = highspy.Highs()
    else:
        with _quiet_stdout():
            h = highspy.Highs()
        _banner_shown = True
    h.setOptionValue("output_flag", False)
    return h


@dataclass
class _Rows:
    """A row-wise sparse constraint matrix under construction."""

    starts: list[int]
    index: list[int]
    value: list[float]
    lower: list[float]
    upper: list[float]

    def add(self, cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        self.starts.append(len(self.index))
        self.index += cols
        self.value += vals
        self.lower.append(lo)
        self.upper.append(hi)


def build_lp(problem: BestResponse) -> tuple[highspy.HighsLp, float]:
    """The MIP of the module docstring and its objective constant."""
    d, m = problem.d, problem.n_clauses
    n_y = int(problem.parity.sum())
    n_col = d + m + n_y
    cost = np.zeros(n_col)
    lower, upper = np.zeros(n_col), np.ones(n_col)
    integer = np.zeros(n_col, dtype=bool)
    integer[:d] = True
    if problem.linear is not None:
        cost[:d] = problem.linear
    rows = _Rows([], [], [], [], [])
    for a, b in problem.onehot_groups:
        rows.add(list(range(a, b)), [1.0] * (b - a), 1.0, 1.0)
    constant, y = 0.0, d + m
    for c in range(m):
        s, e = int(problem.offsets[c]), int(problem.offsets[c + 1])
        bits = [int(j) for j in problem.bits[s:e]]
        pos = problem.positive[s:e]
        w, aux = float(problem.weight[c]), d + c
        if problem.parity[c]:
            sign, rhs = (-1.0, 0.0) if problem.negated[c] else (1.0, 1.0)
            rows.add([*bits, aux, y], [1.0] * len(bits) + [sign, -2.0], rhs, rhs)
            integer[[aux, y]] = True
            upper[y] = len(bits) // 2
            cost[aux], constant, y = 2 * w, constant - w, y + 1
        elif problem.negated[c]:
            n_neg = int((~pos).sum())
            coefs = [1.0 if p else -1.0 for p in pos]
            rows.add([*bits, aux], [*coefs, -1.0], -np.inf, len(bits) - 1.0 - n_neg)
            cost[aux], constant = -w, constant + w
        else:
            for j, p in zip(bits, pos, strict=True):
                rows.add([aux, j], [1.0, -1.0 if p else 1.0], -np.inf, 0.0 if p else 1.0)
            cost[aux] = w
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_col, len(rows.lower)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = np.array(rows.lower), np.array(rows.upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array([*rows.starts, len(rows.index)], dtype=np.int32)
    lp.a_matrix_.index_ = np.array(rows.index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(rows.value)
    lp.integrality_ = [
        highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in integer
    ]
    lp.sense_ = highspy.ObjSense.kMaximize
    return lp, constant


@dataclass(frozen=True)
class HighsOracle:
    """HiGHS branch-and-cut on the formulation above.

    ``time_limit`` (seconds, None for none) stops with the best incumbent and sets
    ``timed_out``; ``abs_gap`` is HiGHS's ``mip_abs_gap``; ``workers`` its thread count.
    ``hint`` runs the heuristic first; its record is returned when HiGHS finds nothing better.
    It is deliberately not passed to HiGHS as a MIP start: with ``setSolution`` highspy 1.16
    reported "optimal" with incumbent and dual bound above its own solution's objective
    (bound 15 for a true optimum of 11 on a 10-bit test instance), so no proof came out.
    """

    time_limit: float | None = 60.0
    abs_gap: float | None = None
    workers: int = 1
    hint: bool = True
    hint_kicks: int = 50
    presolve: bool = True
    name: str = "highs"

    def __post_init__(self) -> None:
        _check_limits(self.time_limit, self.abs_gap)
        positive_int("workers", self.workers)

    def solve(self, problem: BestResponse, *, seed: SeedLike = None) -> OracleResult:
        """Best response with HiGHS's proven dual bound."""
        return solve_hinted(
            self.name, problem, seed, hint=self.hint, hint_kicks=self.hint_kicks,
            presolve=self.presolve, run=self._run,
        )  # fmt: skip

    def _run(self, problem: BestResponse, hint: np.ndarray | None, seed: int) -> Answer:
        lp, constant = build_lp(problem)
        h = _new_highs()
        h.setOptionValue("threads", self.workers)
        h.setOptionValue("random_seed", seed)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-6 if self.abs_gap is None else float(self.abs_gap))
        if self.time_limit is not None:
            h.setOptionValue("time_limit", float(self.time_limit))
        h.passModel(lp)
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        candidates = [] if hint is None else [hint]
        if info.primal_solution_status == 2:  # kSolutionStatusFeasible
            col = np.asarray(h.getSolution().col_value)[: problem.d]
            candidates.append(np.rint(col).clip(0, 1).astype(np.uint8))
        if not candidates:
            raise DPQueryError(f"HiGHS found no record ({h.modelStatusToString(status)})")
        feasible = [x for x in candidates if problem.is_feasible(x)]
        if not feasible:
            raise DPQueryError("HiGHS returned a record that breaks a one-hot group")
        record = max(feasible, key=problem.objective)
        bound = problem.upper_bound()  # trivial, valid even when HiGHS has no dual bound yet
        dual = float(info.mip_dual_bound) + constant
        if np.isfinite(dual):
            bound = min(bound, dual)
        name = h.modelStatusToString(status)
        return Answer(
            record,
            bound,
            name.lower(),
            timed_out=status == highspy.HighsModelStatus.kTimeLimit,
            info={"solver_status": name, "nodes": int(info.mip_node_count)},
        )
