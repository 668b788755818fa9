"""``auto``: the release dpquery makes by default, chosen for the data's shape.

The policy (measured in ``docs/choosing.md``, ``benchmarks/bench_choosing.py``) reads only
public quantities: the number of records ``n`` (public under the library's bounded,
replace-one neighbouring relation), the domain (attributes ``g``, bits ``d``, values per
attribute), the budget and the workload's shape. It never looks at the data's values.

1. **adaptive-projection** (AIM's whole-marginal measurements fitted by a record set,
   :mod:`dpquery.algorithms.marginals`) whenever its record matrix fits: ``min(n, 50,000)``
   records x ``g`` attributes within ``MAX_CODES`` codes and at most :data:`MAX_ATTRIBUTES`
   attributes (its rounds start with one measurement per attribute, so its time grows with
   ``g``), and the workload is conjunctions. It was the best release measured wherever it runs.
2. otherwise the oracle-efficient family, which works on bits and runs at hundreds of
   thousands of them: :data:`WIDE` (see ``docs/choosing.md`` for the measurements).

:class:`Auto` resolves the choice in :meth:`Auto.plan` (public sizes only), plans the chosen
estimator (built by :func:`dpquery.algorithms.registry.build`, so it carries the same
pipeline, e.g. :class:`~dpquery.algorithms.columns.MeasuredColumns`, as when named), and runs
it on the same ledger. The :class:`~dpquery.algorithms.release.Release` carries the chosen
algorithm's name and, under ``parameters["auto"]``, the algorithm and the reason in one
sentence.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpquery.algorithms.marginals import DEFAULT_MAX_RECORDS, MAX_CODES
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer, ZCDPBudget
from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Accountant, Budget, Ledger
from dpquery.queries import Workload
from dpquery.queries.marginals import AttributeLayout
from dpquery.rng import SeedLike

# Above this many attributes adaptive-projection's rounds (one 1-way measurement per
# attribute, then a selection over every candidate) take minutes (docs/utility.md: 1,000
# binary attributes took 43 s, 16,000 did not finish in 300 s).
MAX_ATTRIBUTES = 1000
# The algorithm for wider data (docs/choosing.md).
WIDE = "dualquery"


@dataclass(frozen=True)
class Choice:
    """The algorithm the policy picked, why (one sentence), and the options it gets."""

    algorithm: str
    reason: str
    options: dict[str, Any]


def choose(
    *, n: int, g: int, d: int, workload_kind: str, budget_keywords: dict[str, Any],
    size: int | None = None,
) -> Choice:  # fmt: skip
    """The policy of the module docstring, from public quantities only."""
    records = min(n, DEFAULT_MAX_RECORDS) if size is None else size
    if workload_kind != "conjunction":
        reason = f"the workload is {workload_kind} queries, which the game-based algorithms answer"
    elif records * g > MAX_CODES:
        reason = (
            f"{records} records x {g} attributes exceed adaptive-projection's "
            f"{MAX_CODES} codes, so the oracle-efficient {WIDE} runs on the {d} bits"
        )
    elif g > MAX_ATTRIBUTES:
        reason = (
            f"{g} attributes is more than the {MAX_ATTRIBUTES} adaptive-projection handles "
            f"in reasonable time, so the oracle-efficient {WIDE} runs on the {d} bits"
        )
    else:
        return Choice(
            "adaptive-projection",
            f"{n} records x {g} attributes fit adaptive-projection (whole-marginal "
            "measurements fitted by a record set), the most accurate release measured on "
            "tables of this shape",
            {"size": size},
        )
    return Choice(WIDE, reason, {"size": size} if WIDE != "dualquery" else {})


@dataclass(frozen=True)
class AutoPlan:
    """The choice, the chosen estimator and its plan (whose budget and charges are ours)."""

    choice: Choice
    model: Synthesizer
    inner: Any

    @property
    def budget(self) -> Budget:
        return self.inner.budget

    def charges(self) -> list:
        return list(self.inner.charges())


@dataclass(kw_only=True, eq=False)
class Auto(ZCDPBudget, Synthesizer):
    """The default release: the algorithm :func:`choose` picks for the data's shape, run with
    this estimator's budget (module docstring). ``size`` is the number of records released
    (the chosen algorithm's default when None)."""

    name: ClassVar[str] = "auto"
    options: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "rho", "size")

    size: int | None = None
    seed: SeedLike = None
    progress: bool | None = None

    def choose(self, data: BinaryData, workload: Workload) -> Choice:
        """The policy's choice for ``data``'s public shape and ``workload``."""
        layout = AttributeLayout.of_data(data)
        keywords = {k: getattr(self, k) for k in ("epsilon", "delta", "rho")}
        return choose(
            n=data.n, g=layout.g, d=data.d, workload_kind=workload.kind,
            budget_keywords=keywords, size=self.size,
        )  # fmt: skip

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> AutoPlan:
        """Choose (public sizes only), build the chosen estimator and plan it."""
        from dpquery.algorithms import registry  # the registry lists this class

        choice = self.choose(data, workload)
        own = {k: getattr(self, k) for k in ("epsilon", "delta", "rho")}
        if budget is not None and any(v is not None for v in own.values()):
            raise DPQueryError(
                f"{self.name} is spending a given ledger's budget: leave its own epsilon, "
                "delta and rho unset"
            )
        given = {**(own if budget is None else {}), **choice.options}
        taken = registry.takes(choice.algorithm)
        refused = [k for k, v in given.items() if v is not None and k not in taken]
        if refused:
            raise DPQueryError(
                f"auto chose {choice.algorithm} ({choice.reason}), which does not take "
                f"{', '.join(refused)}"
            )
        model = registry.build(choice.algorithm, given, seed=self.seed, progress=self.progress)
        model.validate()
        return AutoPlan(choice, model, model.plan(data, workload, budget=budget))

    def plan_accountant(self, plan: AutoPlan) -> Accountant | None:
        return plan.model.plan_accountant(plan.inner)

    def run(self, run: Run) -> Outcome:
        plan: AutoPlan = run.plan
        outcome = plan.model.run(dataclasses.replace(run, plan=plan.inner))
        parameters = {
            **outcome.parameters,
            "auto": {"algorithm": plan.choice.algorithm, "reason": plan.choice.reason},
        }
        return Outcome(outcome.records, outcome.rounds, parameters, outcome.timings)

    def fit(
        self,
        data: BinaryData,
        workload: Workload,
        true_answers: np.ndarray | None = None,
        *,
        ledger: Ledger | None = None,
    ) -> Release:
        """:meth:`Synthesizer.fit`, the release named after the algorithm that ran."""
        release = super().fit(data, workload, true_answers, ledger=ledger)
        return dataclasses.replace(release, algorithm=release.parameters["auto"]["algorithm"])


__all__ = ["MAX_ATTRIBUTES", "WIDE", "Auto", "AutoPlan", "Choice", "choose"]
