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

import copy
import math
import time
from typing import Any

import numpy as np

from dpquery.algorithms.fem import AUTHORS_ADULT, DEFAULT_C, FEM
from dpquery.algorithms.game import check_inputs, true_answers_of
from dpquery.algorithms.mwem import DEFAULT_MAX_CELLS, MWEM
from dpquery.algorithms.parameters import positive_int
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.data.decode import sample_records
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger, ZCDPAccountant, zcdp_rho_for
from dpquery.privacy.delta import check_delta
from dpquery.queries import Workload
from dpquery.rng import SeedLike, child_rng, make_rng

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


class Reweighted:
    """FEM or sepFEM, then MWEM over its records, in one budget (module docstring).

    ``base`` is an unfitted :class:`~dpquery.algorithms.fem.FEM` or
    :class:`~dpquery.algorithms.fem.SepFEM` whose own budget is left unset (its other
    hyperparameters are used as given); the budget is ``epsilon`` (``delta`` default
    ``1/n^2``) or ``rho``. With an ``epsilon`` budget and neither ``epsilon0`` nor ``T`` on the
    base, the base keeps its scaling ``epsilon_0 = c sqrt(epsilon)`` at the *whole* budget's
    epsilon and runs ``1 - fraction`` of the rounds it would run alone. MWEM runs ``T``
    rounds (default ``80 sqrt(epsilon)``, at least 1; give ``T`` with a ``rho`` budget) with
    ``measurement`` ("gaussian" default), ``selection_share`` of each round's budget on
    selection and ``passes`` replays of the measurements per round, on at most ``max_cells``
    distinct records. ``size`` resamples the output; ``seed`` fixes every random choice.
    """

    algorithm = "reweighted"

    def __init__(
        self,
        base: FEM | None = None,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        rho: float | None = None,
        fraction: float = DEFAULT_FRACTION,
        T: int | None = None,
        measurement: str = "gaussian",
        selection_share: float = DEFAULT_SELECTION_SHARE,
        passes: int = DEFAULT_PASSES,
        max_cells: int = DEFAULT_MAX_CELLS,
        size: int | None = None,
        seed: SeedLike = None,
    ) -> None:
        self.base = base
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.fraction = fraction
        self.T = T
        self.measurement = measurement
        self.selection_share = selection_share
        self.passes = passes
        self.max_cells = max_cells
        self.size = size
        self.seed = seed

    def budget(self, n: int) -> tuple[Budget, float]:
        """The release's budget and the total zCDP ``rho`` the two stages share."""
        if (self.epsilon is None) == (self.rho is None):
            raise DPQueryError("give a budget: epsilon (with delta) or rho, not both")
        if self.rho is not None:
            if self.delta is not None:
                raise DPQueryError("a rho (zCDP) budget takes no delta")
            budget = Budget.zcdp(self.rho)
            return budget, budget.limit
        assert self.epsilon is not None
        budget = Budget.approx(self.epsilon, 1.0 / n**2 if self.delta is None else self.delta)
        assert budget.delta is not None
        return budget, zcdp_rho_for(budget.limit, budget.delta)

    def stages(self, data: BinaryData, workload: Workload) -> tuple[FEM, MWEM]:
        """The two configured estimators (each with its share of ``rho``); reads only public
        sizes."""
        base = FEM() if self.base is None else self.base
        if not isinstance(base, FEM):
            raise DPQueryError(f"the base must be FEM or SepFEM, got {type(base).__name__}")
        if any(getattr(base, k) is not None for k in ("epsilon", "delta", "rho")):
            raise DPQueryError("leave the base's budget unset: Reweighted splits its own")
        if not (isinstance(self.fraction, float | int) and 0 < self.fraction < 1):
            raise DPQueryError(f"fraction must be strictly between 0 and 1, got {self.fraction!r}")
        budget, rho = self.budget(data.n)
        first = copy.copy(base)
        first.rho = (1 - self.fraction) * rho * (1 - _SLACK)
        if base.epsilon0 is None and base.T is None:
            if budget.epsilon is None:
                raise DPQueryError(
                    "with a rho budget give the base epsilon0 or T (its scaling "
                    "epsilon0 = c sqrt(epsilon) needs an epsilon)"
                )
            preset_c = AUTHORS_ADULT[base.preset][0] if base.preset in AUTHORS_ADULT else None
            c = next((v for v in (base.c, preset_c) if v is not None), DEFAULT_C)
            first.epsilon0, first.c = c * math.sqrt(budget.epsilon), None
        T = self.T
        if T is None:
            if budget.epsilon is None:
                raise DPQueryError("with a rho budget give T, MWEM's rounds")
            T = max(1, round(ROUNDS_AT_EPSILON_1 * math.sqrt(budget.epsilon)))
        second = MWEM(
            rho=self.fraction * rho * (1 - _SLACK), T=T, measurement=self.measurement,
            selection_share=self.selection_share, passes=self.passes, max_cells=self.max_cells,
        )  # fmt: skip
        return first, second

    def fit(
        self, data: BinaryData, workload: Workload, true_answers: np.ndarray | None = None
    ) -> Release:
        """Run both stages on ``data`` for ``workload``; the release's ledger holds both
        stages' charges against the one budget, checked before anything is drawn."""
        check_inputs(self.algorithm, data, workload)
        if self.size is not None:
            positive_int("size", self.size)
        first, second = self.stages(data, workload)
        budget, _ = self.budget(data.n)
        check_delta(budget.delta, data.n)  # warns when delta >= 1/n
        ledger = Ledger(budget, ZCDPAccountant(bounded_range=True))
        plan = first.plan(data, workload)
        ledger.check([*plan.charges(), *second.plan().charges()])
        if plan.T * plan.s > self.max_cells:  # refuse now, not after the base has spent
            raise DPQueryError(
                f"the base releases up to {plan.T * plan.s:,} records (T={plan.T} x "
                f"s={plan.s}), more than max_cells={self.max_cells:,} for MWEM's support"
            )
        rng = make_rng(self.seed)
        # Each stage gets a generator of the run's kind (secure unless seeded); seeded runs
        # draw the same three ints as before.
        first.seed, second.seed = child_rng(rng), child_rng(rng)
        resample_seed = int(rng.integers(2**63))
        start = time.perf_counter()
        true_answers, t_answers = true_answers_of(workload, data, true_answers)
        base = first.fit(data, workload, true_answers)
        second.support = base.records
        mwem = second.fit(data, workload, true_answers)
        for stage in (base, mwem):  # the combined account: every charge both stages made
            for entry in stage.ledger.entries:
                c = entry.charge
                ledger.charge(f"{stage.algorithm}: {c.mechanism}", c.cost, count=c.count)
        records = mwem.records
        if self.size is not None:
            records = sample_records(records, self.size, seed=resample_seed)
        parameters: dict[str, Any] = {
            "fraction": self.fraction, "rho_base": first.rho, "rho_mwem": second.rho,
            "budget": budget.to_dict(), "n": data.n, "d": data.d, "queries": len(workload),
            "size": self.size, "base": {"algorithm": base.algorithm, **base.parameters},
            "mwem": mwem.parameters,
        }  # fmt: skip
        return Release(
            self.algorithm, records, ledger, parameters,
            [{"stage": base.algorithm, **r} for r in base.rounds]
            + [{"stage": "mwem", **r} for r in mwem.rounds],
            {"true_answers_s": t_answers, "base_s": base.timings["total_s"],
             "mwem_s": mwem.timings["total_s"], "total_s": time.perf_counter() - start},
        )  # fmt: skip
