"""The default oracle: presolve, then compiled iterated local search.

DualQuery's analysis (Theorem 4.6) only needs an *approximate* best response, and privacy
does not depend on the oracle at all, so a fast heuristic is a sound default. Its budget is
counted in iterations (restarts, kicks, passes), never in wall-clock time, so a seed
reproduces a run exactly on any machine. It proves nothing: ``bound`` is None unless the
presolve solved the whole problem. Use ``"cpsat"`` to certify.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles import _search
from dpquery.oracles.base import Answer, incidence, run_pipeline, units
from dpquery.oracles.problem import BestResponse
from dpquery.oracles.result import OracleResult
from dpquery.rng import SeedLike, make_rng


def _positive_int(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise DPQueryError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def local_search(
    problem: BestResponse,
    *,
    seed: int,
    restarts: int = 4,
    kicks: int = 200,
    kick_size: int = 3,
    max_passes: int = 1000,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Run the compiled search of :mod:`dpquery.oracles._search` on ``problem`` (no presolve).

    Returns the best feasible record found and its objective.
    """
    ptr, clause, positive = incidence(problem)
    u_start, u_stop, u_group = units(problem)
    unit_of = np.repeat(np.arange(u_start.size), u_stop - u_start)
    linear = np.zeros(problem.d) if problem.linear is None else problem.linear
    x, value = _search.local_search(
        problem.offsets, problem.bits, problem.positive, problem.parity, problem.negated,
        problem.weight, linear, u_start, u_stop, u_group, unit_of, ptr, clause, positive,
        np.uint64(seed), restarts, kicks, kick_size, max_passes,
        np.zeros(0, np.uint8) if start is None else np.asarray(start, np.uint8),
    )  # fmt: skip
    return x, float(value)


@dataclass(frozen=True)
class HeuristicOracle:
    """Presolve + iterated local search with iteration budgets (see the module docstring).

    ``restarts`` independent runs, each ``kicks`` perturbations of up to ``kick_size`` units
    followed by a descent of at most ``max_passes`` passes. ``presolve=False`` searches the
    whole problem (for tests and comparisons).
    """

    restarts: int = 4
    kicks: int = 200
    kick_size: int = 3
    max_passes: int = 1000
    presolve: bool = True
    name: str = "heuristic"

    def __post_init__(self) -> None:
        _positive_int("restarts", self.restarts)
        _positive_int("kicks", self.kicks, 0)
        _positive_int("kick_size", self.kick_size)
        _positive_int("max_passes", self.max_passes)

    def solve(self, problem: BestResponse, *, seed: SeedLike = None) -> OracleResult:
        """Best response to ``problem``; the same seed gives the same record."""
        search_seed = int(make_rng(seed).integers(0, 2**63))

        def solver(reduced: BestResponse) -> Answer:
            x, _ = local_search(
                reduced, seed=search_seed, restarts=self.restarts, kicks=self.kicks,
                kick_size=self.kick_size, max_passes=self.max_passes,
            )  # fmt: skip
            info = {"restarts": self.restarts, "kicks": self.kicks}
            return Answer(x, None, "local optimum", info=info)

        return run_pipeline(self.name, problem, solver, use_presolve=self.presolve)


ExactRun = Callable[[BestResponse, "np.ndarray | None", int], Answer]


def solve_hinted(
    name: str, problem: BestResponse, seed: SeedLike, *, hint: bool, hint_kicks: int,
    presolve: bool, run: ExactRun,
) -> OracleResult:  # fmt: skip
    """An exact oracle's solve: presolve, hint with :func:`local_search` (``hint_kicks``
    kicks) when asked, then ``run(reduced, hint, solver_seed)``. Both seeds come from
    ``seed``, so a run is reproducible."""
    rng = make_rng(seed)
    hint_seed, solver_seed = (int(v) for v in rng.integers(0, 2**31 - 1, size=2))

    def solver(reduced: BestResponse) -> Answer:
        start = local_search(reduced, seed=hint_seed, kicks=hint_kicks)[0] if hint else None
        return run(reduced, start, solver_seed)

    return run_pipeline(name, problem, solver, use_presolve=presolve)
