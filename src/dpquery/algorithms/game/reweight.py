"""A two-stage release: FEM (or sepFEM) for a support, MWEM to reweight it.

FEM's records answer every query of a large workload from a small per-round budget, but its
worst cells stay off by the exponential mechanism's selection error. MWEM measures the worst
queries directly, but needs an explicit domain, which high-dimensional data does not have.
Stage 1 spends ``1 - fraction`` of a zCDP budget ``rho`` on the base algorithm; stage 2 spends
``fraction`` on MWEM whose domain is the base release's distinct records, starting from their
weights (Liu, Vietri, Steinke, Ullman and Wu 2021, "Leveraging Public Data for Practical
Private Query Release", run MWEM over a public dataset's support; here the support is itself
a private release). Stage 2 reads the private data only through its own mechanisms and the
first release (post-processing), so the costs compose: ``rho_1 + rho_2 <= rho``
(Oracle-efficient, Lemma 3: zCDP composition), converted to ``(epsilon, delta)`` as the
budget asks.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

from dpquery.algorithms.game.fem import FEM
from dpquery.algorithms.game.fem_plan import AUTHORS_ADULT, DEFAULT_C, FEMPlan
from dpquery.algorithms.game.mwem import DEFAULT_MAX_CELLS, MWEM, MWEMPlan
from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer
from dpquery.data.binary import BinaryData
from dpquery.data.decode import sample_records
from dpquery.errors import DPQueryError
from dpquery.privacy import Accountant, Budget, Charge, ZCDPAccountant
from dpquery.privacy.budget import budget_rho
from dpquery.privacy.delta import default_delta
from dpquery.queries import Workload
from dpquery.rng import SeedLike, child_rng

# Chosen on adult-pgm, 64 random 3-way marginals (docs/reweight.md): half the budget to
# MWEM, T = 80 sqrt(epsilon) rounds (like FEM's epsilon_0 = c sqrt(epsilon)), 90% of each
# round on selection (the Gaussian measurement needs little), 10 replay passes per round.
DEFAULT_FRACTION = 0.5
ROUNDS_AT_EPSILON_1 = 80
DEFAULT_SELECTION_SHARE = 0.9
DEFAULT_PASSES = 10
# Each stage gets its share of rho shrunk by this much, so that the float sum of the two
# stages' spends can never round above rho.
_SLACK = 1e-9


@dataclass(frozen=True)
class ReweightedPlan:
    """The release's budget, the total zCDP ``rho`` the stages share, and each stage: its
    configured estimator, its share of the budget and its plan."""

    budget: Budget
    rho: float
    first: FEM
    first_budget: Budget
    first_plan: FEMPlan
    second: MWEM
    second_budget: Budget
    second_plan: MWEMPlan

    def charges(self) -> list[Charge]:
        """Both stages' charges, as the release's ledger records them."""
        return [
            *(Charge(f"{self.first.name}: {c.mechanism}", c.cost, c.count)
              for c in self.first_plan.charges()),
            *(Charge(f"{self.second.name}: {c.mechanism}", c.cost, c.count)
              for c in self.second_plan.charges()),
        ]  # fmt: skip


@dataclass(eq=False)
class Reweighted(Synthesizer):
    """FEM or sepFEM, then MWEM over its records, in one budget (module docstring).

    ``base`` is an unfitted :class:`~dpquery.algorithms.game.fem.FEM` or
    :class:`~dpquery.algorithms.game.fem.SepFEM` whose own budget is left unset (its other
    hyperparameters are used as given); the budget is ``epsilon`` (``delta`` default
    ``1/n^2``) or ``rho``. With an ``epsilon`` budget and neither ``epsilon0`` nor ``T`` on the
    base, the base keeps its scaling ``epsilon_0 = c sqrt(epsilon)`` at the *whole* budget's
    epsilon and runs ``1 - fraction`` of the rounds it would run alone. MWEM runs ``T``
    rounds (default ``80 sqrt(epsilon)``, at least 1; give ``T`` with a ``rho`` budget) with
    ``measurement`` ("gaussian" default), ``selection_share`` of each round's budget on
    selection and ``passes`` replays of the measurements per round, on at most ``max_cells``
    distinct records. ``size`` resamples the output; ``seed`` fixes every random choice.

    Each stage is fitted on a :meth:`~dpquery.privacy.Ledger.child` of the release's ledger
    holding its share, so every charge reaches the release's ledger as the stage draws.
    """

    name: ClassVar[str] = "reweighted"
    # What a front end's flat options give the pipeline rather than the base: the budget,
    # the output's size and seed, the split, and MWEM's rounds (``reweight_rounds``: ``T``).
    front_options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "rho", "size", "seed", "fraction", "reweight_rounds",
    )  # fmt: skip

    base: FEM | None = None
    _: KW_ONLY
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None
    fraction: float = DEFAULT_FRACTION
    T: int | None = None
    measurement: str = "gaussian"
    selection_share: float = DEFAULT_SELECTION_SHARE
    passes: int = DEFAULT_PASSES
    max_cells: int = DEFAULT_MAX_CELLS
    size: int | None = None
    seed: SeedLike = None

    @classmethod
    def around(cls, base: type[FEM], options: dict[str, Any]) -> Reweighted:
        """The pipeline over ``base`` configured from a front end's flat ``options``
        (:attr:`front_options` go to the pipeline, the rest to the base)."""
        own = {k: options[k] for k in cls.front_options if k in options}
        rest = {k: v for k, v in options.items() if k not in own}
        T = own.pop("reweight_rounds", None)
        return cls(base(**rest), T=T, **own)

    def validate(self) -> None:
        super().validate()
        if isinstance(self.base, Synthesizer):
            self.base.validate()

    def plan_accountant(self, plan: ReweightedPlan) -> Accountant:
        return ZCDPAccountant(bounded_range=True)

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> ReweightedPlan:
        """Both stages configured, with their shares of the budget and their plans; reads
        only public sizes. Refuses a base release too large for MWEM's support."""
        whole, rho, (first, first_budget), (second, second_budget) = self._split(data, budget)
        first_plan = first.plan(data, workload, budget=first_budget)
        if first_plan.T * first_plan.s > self.max_cells:  # refuse now, not after it spent
            raise DPQueryError(
                f"the base releases up to {first_plan.T * first_plan.s:,} records (T="
                f"{first_plan.T} x s={first_plan.s}), more than max_cells={self.max_cells:,} "
                "for MWEM's support"
            )
        second_plan = second.plan(data, workload, budget=second_budget)
        return ReweightedPlan(whole, rho, first, first_budget, first_plan, second,
                              second_budget, second_plan)  # fmt: skip

    def stages(self, data: BinaryData, workload: Workload) -> tuple[FEM, MWEM]:
        """The two configured estimators (their budgets come from the ledger at fit)."""
        _, _, (first, _), (second, _) = self._split(data, None)
        return first, second

    def _split(
        self, data: BinaryData, budget: Budget | None
    ) -> tuple[Budget, float, tuple[FEM, Budget], tuple[MWEM, Budget]]:
        """The whole budget, its zCDP ``rho``, and each stage with its share."""
        base = FEM() if self.base is None else self.base
        if not isinstance(base, FEM):
            raise DPQueryError(f"the base must be FEM or SepFEM, got {type(base).__name__}")
        if any(getattr(base, k) is not None for k in ("epsilon", "delta", "rho")):
            raise DPQueryError("leave the base's budget unset: Reweighted splits its own")
        keywords = self.budget_keywords(budget, data.n)
        if (keywords["epsilon"] is None) == (keywords["rho"] is None):
            raise DPQueryError("give a budget: epsilon (with delta) or rho, not both")
        whole = budget_of(**keywords, default_delta=default_delta(data.n))
        # epsilon is converted to zCDP once; each stage spends its share of rho.
        rho = budget_rho(whole)
        first = base.with_params(**self._base_scaling(base, whole))
        assert isinstance(first, FEM)
        second = MWEM(
            T=self._mwem_rounds(whole), measurement=self.measurement,
            selection_share=self.selection_share, passes=self.passes, max_cells=self.max_cells,
        )  # fmt: skip
        return (
            whole,
            rho,
            (first, Budget.zcdp((1 - self.fraction) * rho * (1 - _SLACK))),
            (second, Budget.zcdp(self.fraction * rho * (1 - _SLACK))),
        )

    def _base_scaling(self, base: FEM, whole: Budget) -> dict[str, Any]:
        """The base's ``epsilon_0 = c sqrt(epsilon)`` at the whole budget's epsilon, unless
        the base sets ``epsilon0`` or ``T`` itself."""
        if base.epsilon0 is not None or base.T is not None:
            return {}
        if whole.epsilon is None:
            raise DPQueryError(
                "with a rho budget give the base epsilon0 or T (its scaling "
                "epsilon0 = c sqrt(epsilon) needs an epsilon)"
            )
        preset_c = AUTHORS_ADULT[base.preset][0] if base.preset in AUTHORS_ADULT else None
        c = next((v for v in (base.c, preset_c) if v is not None), DEFAULT_C)
        return {"epsilon0": c * math.sqrt(whole.epsilon), "c": None}

    def _mwem_rounds(self, whole: Budget) -> int:
        if self.T is not None:
            return self.T
        if whole.epsilon is None:
            raise DPQueryError("with a rho budget give T, MWEM's rounds")
        return max(1, round(ROUNDS_AT_EPSILON_1 * math.sqrt(whole.epsilon)))

    def run(self, run: Run) -> Outcome:
        plan: ReweightedPlan = run.plan
        data, workload, ledger = run.data, run.workload, run.ledger
        # Each stage gets a generator of the run's kind (secure unless seeded); seeded runs
        # draw the same three ints as before.
        seeds = [child_rng(run.rng) for _ in range(3)]
        base = plan.first.with_params(seed=seeds[0]).fit(
            data, workload, run.true_answers,
            ledger=ledger.child(plan.first_budget, plan.first.name),
        )  # fmt: skip
        second = plan.second.with_params(seed=seeds[1], support=base.records)
        mwem = second.fit(
            data, workload, run.true_answers,
            ledger=ledger.child(plan.second_budget, plan.second.name),
        )  # fmt: skip
        records = mwem.records
        if self.size is not None:
            records = sample_records(records, self.size, seed=seeds[2])
        parameters: dict[str, Any] = {
            "fraction": self.fraction, "rho_base": plan.first_budget.rho,
            "rho_mwem": plan.second_budget.rho, "budget": plan.budget.to_dict(),
            "size": self.size, "base": {"algorithm": base.algorithm, **base.parameters},
            "mwem": mwem.parameters,
        }  # fmt: skip
        rounds = [{"stage": base.algorithm, **r} for r in base.rounds]
        rounds += [{"stage": "mwem", **r} for r in mwem.rounds]
        timings = {"base_s": base.timings["total_s"], "mwem_s": mwem.timings["total_s"]}
        return Outcome(records, rounds, parameters, timings)
