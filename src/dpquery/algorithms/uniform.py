"""A toy synthesizer: records drawn uniformly from the domain.

It is the worked example of ``docs/architecture.md`` (how to add an algorithm): a plan, a
run, a registry entry. It never reads the private records, so it charges nothing: its
release is ``(epsilon, delta)``-DP for any budget, at a cost of 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.synthesizer import EpsilonBudget, Outcome, Run, Synthesizer
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.privacy import Budget, Charge
from dpquery.queries import Workload
from dpquery.rng import SeedLike


@dataclass(frozen=True)
class UniformPlan:
    """The budget and the number of records; nothing is charged."""

    budget: Budget
    size: int

    def charges(self) -> list[Charge]:
        return []  # the records do not depend on the data


def uniform_records(
    d: int, onehot_groups: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` records over ``d`` bits: one uniform value per one-hot group, every other
    bit a fair coin."""
    rows = (rng.random((size, d)) < 0.5).astype(np.uint8)
    for a, b in np.asarray(onehot_groups).reshape(-1, 2):
        rows[:, a:b] = 0
        rows[np.arange(size), a + rng.integers(b - a, size=size)] = 1
    return rows


@dataclass(kw_only=True, eq=False)
class UniformRecords(Synthesizer, EpsilonBudget):
    """``size`` records drawn uniformly from the domain, whatever the data."""

    name: ClassVar[str] = "uniform"
    options: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "size")

    size: int = 1000
    seed: SeedLike = None

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> UniformPlan:
        return UniformPlan(budget_of(**self.budget_keywords(budget, data.n)), self.size)

    def reads_answers(self, plan: UniformPlan) -> bool:
        """No: the run reads nothing of the data beyond its public size."""
        return False

    def run(self, run: Run) -> Outcome:
        rows = uniform_records(run.data.d, run.data.onehot_groups, run.plan.size, run.rng)
        parameters = {"size": run.plan.size, "budget": run.plan.budget.to_dict()}
        return Outcome(Records(rows, None, run.data.domain), [], parameters)
