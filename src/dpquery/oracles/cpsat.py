"""The exact / certifying oracle: OR-Tools CP-SAT on the integer program of DualQuery.

Formulation (over the presolved problem; ``l`` ranges over a clause's literals, read as
``x_j`` or ``1 - x_j``):

* conjunction (DualQuery Section 5.2, ``x_a + x_b + x_c >= 3 c_i``): ``z_c => l`` for every
  literal, objective ``+w_c z_c``;
* negated conjunction (the same, and FEM Section 6): ``a_c`` is the conjunction, forced up by
  ``a_c or not l_1 or ... or not l_k`` (``a_c >= sum l - (k-1)``), objective ``w_c (1 - a_c)``;
* parity over S (DualQuery Appendix A with 0/1 bits): ``sum_{j in S} x_j = 2 y_c + 1 - c_c``
  (``c_c = 1`` iff the count is even), ``0 <= y_c <= floor(|S|/2)``; the negated parity
  uses ``2 y_c + c_c`` (``c_c = 1`` iff odd). Either way the value is ``2 c_c - 1`` and the
  objective ``w_c (2 c_c - 1)``;
* one-hot groups: ``sum_{j in g} x_j = 1``; the linear term adds ``<linear, x>``.

CP-SAT proves optima quickly here only with one worker and ``linearization_level=2`` (the
LP relaxation of the ``z <= x`` rows), hinted with the heuristic's record; the defaults can
leave 5-12% gaps. A time limit stops it with the best incumbent, which is
never worse than the hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles.base import Answer, first_feasible
from dpquery.oracles.heuristic import solve_hinted
from dpquery.oracles.problem import BestResponse
from dpquery.oracles.result import OracleResult
from dpquery.rng import SeedLike
from dpquery.validation import positive_int

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


def _check_limits(time_limit: float | None, abs_gap: float | None) -> None:
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise DPQueryError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if abs_gap is not None and not (np.isfinite(abs_gap) and abs_gap >= 0):
        raise DPQueryError(f"abs_gap must be a non-negative number, got {abs_gap!r}")


def hint_values(problem: BestResponse, x: np.ndarray) -> dict[str, np.ndarray]:
    """The auxiliary variables implied by record ``x``: conjunction values and parity counts."""
    x = np.asarray(x, dtype=np.int64)
    clause_of = problem.clause_of_literal
    holds = (x[problem.bits] == 1) == problem.positive
    sat = np.bincount(clause_of, weights=holds, minlength=problem.n_clauses)
    ones = np.bincount(clause_of, weights=x[problem.bits], minlength=problem.n_clauses)
    ones = ones.astype(np.int64)
    even = ones % 2 == 0
    return {
        "conj": (sat == np.diff(problem.offsets)).astype(np.int64),
        "parity_c": np.where(problem.negated, ~even, even).astype(np.int64),
        "parity_y": ones // 2,
    }


def _build(problem: BestResponse, hint: np.ndarray | None) -> tuple[cp_model.CpModel, list]:
    from ortools.sat.python import cp_model  # heavy: loaded only for a CP-SAT solve

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{j}") for j in range(problem.d)]
    for a, b in problem.onehot_groups:
        model.add_exactly_one(x[a:b])
    terms: list = []
    constant = 0.0
    aux = hint_values(problem, hint) if hint is not None else None
    for c in range(problem.n_clauses):
        s, e = int(problem.offsets[c]), int(problem.offsets[c + 1])
        lits = [
            x[j] if p else ~x[j]
            for j, p in zip(problem.bits[s:e], problem.positive[s:e], strict=True)
        ]
        w = float(problem.weight[c])
        if problem.parity[c]:
            k = e - s
            cc = model.new_bool_var(f"c{c}")
            y = model.new_int_var(0, k // 2, f"y{c}")
            rhs = 2 * y + (cc if problem.negated[c] else 1 - cc)
            model.add(sum(x[j] for j in problem.bits[s:e]) == rhs)
            terms.append((2 * w, cc))
            constant -= w
            if aux is not None:
                model.add_hint(cc, int(aux["parity_c"][c]))
                model.add_hint(y, int(aux["parity_y"][c]))
            continue
        z = model.new_bool_var(f"z{c}")
        if problem.negated[c]:
            model.add_bool_or([z, *(~lit for lit in lits)])
            terms.append((-w, z))
            constant += w
        else:
            for lit in lits:
                model.add_implication(z, lit)
            terms.append((w, z))
        if aux is not None:
            model.add_hint(z, int(aux["conj"][c]))
    if problem.linear is not None:
        terms += [(float(v), x[j]) for j, v in enumerate(problem.linear) if v != 0]
    if hint is not None:
        for j in range(problem.d):
            model.add_hint(x[j], int(hint[j]))
    model.maximize(sum(coef * var for coef, var in terms) + constant)
    return model, x


@dataclass(frozen=True)
class CPSatOracle:
    """CP-SAT on the formulation above, hinted by the heuristic (see the module docstring).

    ``time_limit`` (seconds, None for none) stops the search with the best incumbent and
    sets ``timed_out``; ``abs_gap`` stops once the proven bound is within that much of the
    incumbent (DualQuery needs only an approximate best response, Theorem 4.6: alpha/4 * s
    suffices). ``workers`` is CP-SAT's ``num_workers``. ``hint`` runs the heuristic first
    with ``hint_kicks`` kicks.
    """

    time_limit: float | None = 60.0
    abs_gap: float | None = None
    workers: int = 1
    linearization_level: int = 2
    hint: bool = True
    hint_kicks: int = 50
    presolve: bool = True
    name: str = "cpsat"

    def __post_init__(self) -> None:
        _check_limits(self.time_limit, self.abs_gap)
        positive_int("workers", self.workers)

    def solve(self, problem: BestResponse, *, seed: SeedLike = None) -> OracleResult:
        """Best response with a proven bound; ``optimal`` when the bound is reached."""
        return solve_hinted(
            self.name, problem, seed, hint=self.hint, hint_kicks=self.hint_kicks,
            presolve=self.presolve, run=self._run,
        )  # fmt: skip

    def _run(self, problem: BestResponse, hint: np.ndarray | None, seed: int) -> Answer:
        from ortools.sat.python import cp_model  # heavy: loaded only for a CP-SAT solve

        model, x = _build(problem, hint)
        cp = cp_model.CpSolver()
        params = cp.parameters
        params.num_workers = self.workers
        params.linearization_level = self.linearization_level
        params.random_seed = seed
        if self.time_limit is not None:
            params.max_time_in_seconds = float(self.time_limit)
        # Why 0: CP-SAT's default (1e-4) would stop short of a proof on float objectives.
        params.absolute_gap_limit = 0.0 if self.abs_gap is None else float(self.abs_gap)
        status = cp.solve(model)
        return _answer(problem, cp, status, x, hint)


def _answer(
    problem: BestResponse,
    cp: cp_model.CpSolver,
    status: cp_model.CpSolverStatus,
    x: list,
    hint: np.ndarray | None,
) -> Answer:
    from ortools.sat.python import cp_model  # heavy: loaded only for a CP-SAT solve

    name = cp.status_name(status)
    if status in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        raise DPQueryError(f"CP-SAT reports the best-response model {name}; this is a bug")
    candidates = [] if hint is None else [hint]
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        candidates.append(np.array([cp.value(v) for v in x], dtype=np.uint8))
    if not candidates:  # no hint and nothing found in time: fall back to any feasible record
        candidates.append(first_feasible(problem))
    # Why: the solver's incumbent can be worse than the hint it was given when it stops early.
    record = max(candidates, key=problem.objective)
    # Why: without a solution CP-SAT's bound field is not a proof; fall back to the trivial one.
    bound = problem.upper_bound()
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = min(bound, float(cp.best_objective_bound))
    info = {"solver_status": name, "wall_time": cp.wall_time, "branches": cp.num_branches}
    return Answer(
        record,
        bound,
        name.lower(),
        timed_out=status in (cp_model.FEASIBLE, cp_model.UNKNOWN),
        info=info,
    )
