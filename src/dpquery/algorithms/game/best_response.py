"""The data player's call to an oracle, DualQuery's best-responding data player, and the
base of the estimators that play against it (DualQuery, DQRS).

The oracle is untrusted (DESIGN: layer 4): its record is validated and repaired, its
statistics sanitised, its exceptions caught. Nothing here charges privacy: a round's cost was
paid when its queries were chosen, so whatever the oracle does is post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpquery.algorithms.game.free import FreeAttributes, check_policy
from dpquery.algorithms.game.loop import QueryPlayer, play, unit_answers
from dpquery.algorithms.synthesizer import (
    EpsilonBudget,
    MultiplicativeWeightsParameters,
    OracleParameters,
    RoundStats,
    Run,
    RunParameters,
    Synthesizer,
)
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse, Oracle, OracleResult, get_oracle, validate_record
from dpquery.queries import Workload


def best_response(
    problem: BestResponse,
    oracle: Oracle,
    free: FreeAttributes,
    rng: np.random.Generator,
    on_error: str = "fallback",
) -> tuple[np.ndarray, dict[str, Any]]:
    """Ask the (untrusted) oracle; validate and repair its record; set the free bits.

    Whatever the oracle does (raise, time out, return garbage) nothing is charged here: the
    round's privacy was paid when its queries were sampled. On an exception the record is a
    random sensible one (``on_error="fallback"``) or the run stops (``"raise"``).
    """
    seed = int(rng.integers(2**63))
    try:
        result: OracleResult = oracle.solve(problem, seed=seed)
        record = validate_record(problem, result.record, repair=True)
        repaired = not np.array_equal(record, np.asarray(result.record))
        free_bits = np.asarray(result.free, dtype=bool)
        if free_bits.shape != (problem.d,):
            free_bits = np.zeros(problem.d, dtype=bool)
        info: dict[str, Any] = {
            "objective": float(problem.objective(record)),
            "bound": _finite_or_none(result.bound),  # untrusted: keep the report valid JSON
            "optimal": bool(result.optimal) and not repaired,
            "timed_out": bool(result.timed_out),
            "status": str(result.status),
            "repaired": repaired,
        }
    except Exception as exc:
        if on_error == "raise":
            raise DPQueryError(f"the oracle failed: {type(exc).__name__}: {exc}") from exc
        record = np.zeros(problem.d, dtype=np.uint8)
        record[problem.onehot_groups[:, 0]] = 1
        free_bits = np.ones(problem.d, dtype=bool)
        info = {"objective": None, "bound": None, "optimal": False, "timed_out": False,
                "status": f"oracle error, random record: {type(exc).__name__}: {exc}",
                "repaired": False}  # fmt: skip
    return free.apply(record, free_bits, rng), info


def _finite_or_none(x: object) -> float | None:
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


class BestResponder:
    """DualQuery's data player: one best-response record per round (Section 5)."""

    def __init__(
        self, workload: Workload, *, onehot_groups: np.ndarray, oracle: Oracle,
        free: FreeAttributes, rng: np.random.Generator, on_error: str = "fallback",
    ) -> None:  # fmt: skip
        self.workload, self.onehot_groups = workload, onehot_groups
        self.oracle, self.free, self.rng = oracle, free, rng
        self.on_error = on_error
        self.rows: list[np.ndarray] = []

    def start(self) -> None:
        return None

    def respond(self, t: int, sampled: np.ndarray) -> dict[str, Any]:
        problem = BestResponse.from_workload(
            self.workload, sampled, onehot_groups=self.onehot_groups
        )
        x, info = best_response(problem, self.oracle, self.free, self.rng, self.on_error)
        self.rows.append(x)
        return info

    def answers(self) -> np.ndarray:
        return unit_answers(self.workload, Records(self.rows[-1][None, :]))

    def play(
        self, queries: QueryPlayer, T: int, on_round: Callable[[RoundStats], None] | None = None
    ) -> tuple[np.ndarray, list[RoundStats]]:
        """``T`` rounds against ``queries``: the records ``(T, d)`` and per-round statistics."""
        stats = play(queries, self, T, on_round)
        return np.array(self.rows, dtype=np.uint8).reshape(T, self.workload.d), stats


@dataclass(kw_only=True, eq=False)
class BestResponseSynthesizer(
    Synthesizer, EpsilonBudget, MultiplicativeWeightsParameters, OracleParameters, RunParameters
):
    """What DualQuery and DQRS share: their hyperparameters and their data player."""

    def responder(self, run: Run, density: np.ndarray | None = None) -> BestResponder:
        """The best-responding data player of ``run`` (``density``: private-density's noisy
        frequencies, already paid for)."""
        oracle = resolve_oracle(self.oracle, self.oracle_options, self.on_error)
        free = FreeAttributes(check_policy(self.free_attributes), run.data.onehot_groups, density)
        return BestResponder(
            run.workload, onehot_groups=run.data.onehot_groups, oracle=oracle, free=free,
            rng=run.rng, on_error=self.on_error,
        )  # fmt: skip

    def report(self, plan: Any, responder: BestResponder) -> dict[str, Any]:
        """The parameters every such release reports."""
        return {**asdict(plan), "budget": plan.budget.to_dict(), "oracle": responder.oracle.name,
                "free_attributes": self.free_attributes}  # fmt: skip


def resolve_oracle(oracle: str | Oracle, options: dict[str, Any] | None, on_error: str) -> Oracle:
    """The oracle named (with its options) or given, after checking the error policy."""
    if on_error not in ("fallback", "raise"):
        raise DPQueryError(f"on_error must be 'fallback' or 'raise', got {on_error!r}")
    return get_oracle(oracle, **(options or {})) if isinstance(oracle, str) else oracle
