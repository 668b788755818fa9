"""No column left to chance: a pipeline that measures the attributes a workload leaves free.

A query-release algorithm learns about the data only through its workload's queries. An
attribute no query touches comes out of the game as the oracle's free choice, and a synthetic
column filled without any measurement is wrong data, not missing data. :class:`MeasuredColumns`
wraps any :class:`~dpquery.algorithms.synthesizer.Synthesizer`: before the base runs it
measures the 1-way marginal of every untouched attribute in one draw
(:func:`~dpquery.algorithms.untouched.measure_marginals`: Gaussian on the count vectors, or
Laplace under a pure-DP budget), charged to the release's ledger first; then it fits the base
on a :meth:`~dpquery.privacy.Ledger.child` ledger holding the rest of the budget, and redraws
each released record's untouched attributes from the noisy marginals (post-processing).

The split: the measurement gets ``share`` of the whole budget's zCDP ``rho`` (``share`` of
``epsilon`` under pure DP); the base gets the largest budget of the same kind (same ``delta``)
whose planned charges, together with the measurement, fit the whole budget under the base's
accountant. Both are checked on the release's ledger before anything is drawn. A workload that
touches every attribute spends nothing on this: the base runs alone, on the whole budget.

The split is computed from the base's plan, so the base's plan must list everything it charges.
The registered algorithms that measure every attribute themselves, or leave none untouched, are
refused as bases by :meth:`MeasuredColumns.plan`, before anything is charged
(:data:`NOT_WRAPPED`); the registry never wraps them.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

from dpquery.algorithms.parameters import budget_of, with_default_delta
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer
from dpquery.algorithms.untouched import (
    MECHANISM,
    Attribute,
    attributes_of,
    measure_marginals,
    untouched_attributes,
)
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Accountant, Budget, Charge, Ledger, PureDP
from dpquery.privacy.budget import budget_rho
from dpquery.queries import Workload
from dpquery.rng import SeedLike, child_rng

# Chosen by measurement (docs/columns.md, KDD99 with FEM+MWEM): 1% of the budget measures
# the untouched attributes; it moved the given workload's max error by 1-3% (5% moved it 4-9%).
DEFAULT_SHARE = 0.01
_BISECTION_STEPS = 40
# Registered algorithms refused as the base, by name, and why: wrapped, each would only measure
# its columns a second time. adaptive-projection's plan, besides, lists only its 1-way
# measurements (its rounds spend what is left of its budget), so the split would give it nearly
# the whole budget and the release would run out of budget mid-fit, after spending.
NOT_WRAPPED: dict[str, str] = {
    "adaptive-projection": (
        "it measures every attribute's 1-way marginal itself, and its plan lists only those "
        "measurements (its rounds spend the rest of its budget), so no share of the budget "
        "can be planned for it beside another measurement"
    ),
    "wide-dense": "it measures every bit's count itself",
    "auto": "it runs its choice inside the choice's own pipeline",
    "wide": "it releases item data with no workload, so no attribute is left untouched",
}


@dataclass(frozen=True)
class ColumnsPlan:
    """The whole budget, the untouched attributes and the measurement's charge (None when
    every attribute is touched), and the base with its budget and plan."""

    budget: Budget
    untouched: tuple[Attribute, ...]
    measurement: Charge | None
    base: Synthesizer
    base_budget: Budget
    base_plan: Any

    def charges(self) -> list[Charge]:
        if self.measurement is None:  # the base runs alone on the release's ledger
            return list(self.base_plan.charges())
        stage = [Charge(f"{self.base.name}: {c.mechanism}", c.cost, c.count)
                 for c in self.base_plan.charges()]  # fmt: skip
        return [self.measurement, *stage]


def _scaled(budget: Budget, f: float) -> Budget:
    if budget.measure == "zcdp":
        assert budget.rho is not None
        return Budget.zcdp(f * budget.rho)
    assert budget.epsilon is not None
    return (
        Budget.pure(f * budget.epsilon)
        if not budget.delta
        else Budget.approx(f * budget.epsilon, budget.delta)
    )


def column_sources(
    data: BinaryData, untouched: tuple[Attribute, ...], source: str
) -> dict[str, str]:
    """What each column of the release was learned from, column by column (public): the
    workload, or ``source`` for the untouched ones."""
    attributes = attributes_of(data.d, data.onehot_groups)
    names = list(data.domain.names) if data.domain is not None else []
    if len(names) != len(attributes):  # no domain, or one not one attribute per group
        names = [f"bits {a.start}:{a.stop}" for a in attributes]
    free = {a.start for a in untouched}
    return {
        name: source if a.start in free else "workload"
        for name, a in zip(names, attributes, strict=True)
    }


def columns_report(
    parameters: dict[str, Any], data: BinaryData, workload: Workload, policy: str | None
) -> dict[str, Any]:
    """The release's columns, column by column: measured by the pipeline (its own report), or
    left to the free-attribute ``policy`` the user chose (then they say so)."""
    if "columns" in parameters:
        return dict(parameters["columns"])
    untouched = tuple(untouched_attributes(workload, data.onehot_groups))
    if policy == "private-density":
        source = "private density (noisy bit frequencies)"
    else:
        source = f"not measured ({policy or 'algorithm'}): carries no information about the data"
    return {"measured": 0, "sources": column_sources(data, untouched, source)}


@dataclass(eq=False)
class MeasuredColumns(Synthesizer):
    """``base`` with its untouched attributes measured and redrawn (module docstring).

    ``base`` holds the budget (its ``epsilon``/``delta`` or ``rho``) and every other
    hyperparameter; ``share`` is the part of the budget the 1-way marginals get.
    """

    name: ClassVar[str] = "measured-columns"

    base: Synthesizer | None = None
    _: KW_ONLY
    share: float = DEFAULT_SHARE
    seed: SeedLike = None

    def __post_init__(self) -> None:
        # Reported under the base's name: the pipeline adds a measurement, not an algorithm.
        if isinstance(self.base, Synthesizer):
            self.__dict__["name"] = self.base.name

    def validate(self) -> None:
        if not isinstance(self.base, Synthesizer):
            raise DPQueryError(f"MeasuredColumns needs a base Synthesizer, got {self.base!r}")
        self._refuse_base()
        if not 0 < self.share < 1:
            raise DPQueryError(f"share must be in (0, 1), got {self.share!r}")
        self.base.validate()

    def _refuse_base(self) -> None:
        """Refuse a base the pipeline adds nothing to (:data:`NOT_WRAPPED`, or a pipeline of
        its own), before any plan or charge."""
        assert self.base is not None
        if isinstance(self.base, MeasuredColumns):
            why = "it already measures its untouched attributes (a MeasuredColumns pipeline)"
        elif self.base.name in NOT_WRAPPED:
            why = NOT_WRAPPED[self.base.name]
        else:
            return
        raise DPQueryError(f"MeasuredColumns cannot wrap {self.base.name}: {why}; fit it alone")

    def plan_accountant(self, plan: ColumnsPlan) -> Accountant | None:
        return plan.base.plan_accountant(plan.base_plan)

    def reads_answers(self, plan: ColumnsPlan) -> bool:
        return plan.base.reads_answers(plan.base_plan)

    def _whole(self, data: BinaryData, budget: Budget | None) -> tuple[Budget, Synthesizer]:
        """The whole budget and the base with its own budget unset."""
        assert self.base is not None
        keywords = {k: getattr(self.base, k, None) for k in ("epsilon", "delta", "rho")}
        if budget is not None:
            if any(v is not None for v in keywords.values()):
                raise DPQueryError("spending a given ledger: leave the base's budget unset")
            return budget, self.base
        if keywords["epsilon"] is None and keywords["rho"] is None:
            raise DPQueryError(
                "MeasuredColumns shares the base's budget: give the base epsilon or rho"
            )
        whole = budget_of(**with_default_delta(keywords, data.n))
        stripped = {k: None for k, v in keywords.items() if v is not None}
        return whole, self.base.with_params(**stripped)

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> ColumnsPlan:
        """The measurement's charge and the base's share; reads only public sizes. A base it
        cannot wrap is refused here, before anything is charged."""
        self._refuse_base()
        whole, base = self._whole(data, budget)
        untouched = tuple(untouched_attributes(workload, data.onehot_groups))
        if not untouched:
            return ColumnsPlan(
                whole, (), None, base, whole, base.plan(data, workload, budget=whole)
            )
        if whole.measure == "pure":
            assert whole.epsilon is not None
            measurement = Charge(MECHANISM, PureDP(self.share * whole.epsilon))
        else:
            measurement = Charge(MECHANISM, ZCDP(self.share * budget_rho(whole)))
        accountant = base.plan_accountant(base.plan(data, workload, budget=whole))
        best = None
        lo, hi = 0.0, 1.0
        for _ in range(_BISECTION_STEPS):
            f = (lo + hi) / 2
            try:
                candidate = base.plan(data, workload, budget=_scaled(whole, f))
            except DPQueryError:  # too small a budget for the base to plan: more
                lo = f
                continue
            probe = ColumnsPlan(whole, untouched, measurement, base, _scaled(whole, f), candidate)
            if fits_all(probe.charges(), whole, accountant):
                best, lo = probe, f
            else:
                hi = f
        if best is None:
            raise DPQueryError(
                f"the budget is too small to measure {len(untouched)} untouched attributes "
                f"with share {self.share} and run {base.name}; raise the budget or lower share"
            )
        return best

    def run(self, run: Run) -> Outcome:
        plan: ColumnsPlan = run.plan
        measured = None
        if plan.measurement is not None:
            cost = plan.measurement.cost
            measured = measure_marginals(
                run.data, list(plan.untouched), rng=run.rng, ledger=run.ledger,
                **({"epsilon": cost.epsilon} if isinstance(cost, PureDP) else {"rho": cost.rho}),
            )  # fmt: skip
        if measured is None:  # nothing to measure: the base alone, drawing what it would
            seed: SeedLike = self.seed
            ledger = run.ledger
        else:
            seed, ledger = child_rng(run.rng), run.ledger.child(plan.base_budget, plan.base.name)
        answers = run.true_answers if self.reads_answers(plan) else None  # else empty
        base = plan.base.with_params(seed=seed).fit(run.data, run.workload, answers, ledger=ledger)
        records = base.records
        if measured is not None:
            rows = measured.fill(records.rows, run.rng)
            records = Records(rows, records.weights, records.domain)
        parameters = {
            **base.parameters,
            "algorithm": base.algorithm,
            "columns": {
                "measured": len(plan.untouched),
                **({"share": self.share} if measured is not None else {}),
                "sources": column_sources(run.data, plan.untouched, "1-way marginal"),
            },
        }
        return Outcome(records, base.rounds, parameters, base.timings)


def fits_all(charges: list[Charge], budget: Budget, accountant: Accountant | None) -> bool:
    """Whether ``charges`` fit ``budget`` under ``accountant`` (the ledger's own test)."""
    try:
        Ledger(budget, accountant).check(charges)
    except DPQueryError:
        return False
    return True
