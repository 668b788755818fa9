"""MWEM (Hardt, Ligett and McSherry 2012): multiplicative weights over an explicit domain.

The primal form of the query-release game (Oracle-efficient, Section 3): the *data* player
keeps a distribution ``A_t`` over every cell of the domain and learns by multiplicative
weights; the *query* player privately picks the query ``A_{t-1}`` answers worst (exponential
mechanism, score ``|q(D) - q(A_{t-1})|``) and measures it with noise. Each round the data
player applies the update for the new measurement and replays all earlier ones
(Hardt et al., Section 3.3: "we continue to apply the multiplicative weights update rule for
all measurements taken"). The release is the average ``(1/T) sum_t A_t``, as weighted cells.

The state is as large as the domain: :mod:`dpquery.algorithms.game.cells` counts the cells (one
value per one-hot group, two per free bit) and refuses beyond ``max_cells`` with the size and
the memory it would need, before enumerating anything.

A *support* replaces the domain when it is too large: any explicit set of candidate records,
weighted by a prior (Liu, Vietri, Steinke, Ullman and Wu 2021, "Leveraging Public Data for
Practical Private Query Release": MWEM over a public dataset's support). The support must
not be read from the private data, except through an earlier private release whose cost is
accounted for: :class:`~dpquery.algorithms.game.reweight.Reweighted` spends part of a budget on
FEM and reweights its records with MWEM (post-processing of the first release, so the two
costs compose).

Privacy, per round, a share ``f`` (``selection_share``, default 1/2 as in Hardt et al.) to
selection and ``1 - f`` to measurement:

* pure (``delta`` None or 0): ``f epsilon / T`` for the exponential mechanism (sensitivity
  ``1/n`` on unit-scaled answers) and ``(1 - f) epsilon / T`` for the Laplace measurement;
  basic composition gives ``epsilon``;
* zCDP (``delta > 0``, or a ``rho`` budget): ``rho`` is the largest that converts to
  ``(epsilon, delta)`` (Canonne-Kamath-Steinke) or the one given; each round spends
  ``f rho / T`` on selection (an ``sqrt(8 f rho / T)``-DP exponential mechanism, bounded
  range, Cesar and Rogers 2021) and ``(1 - f) rho / T`` on the Gaussian (or Laplace, at
  ``epsilon^2/2``) measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpquery.algorithms.game.cells import (
    DEFAULT_MAX_CELLS,
    answer_cells,
    check_domain_size,
    enumerate_cells,
    support_cells,
)
from dpquery.algorithms.game.loop import play, to_unit
from dpquery.algorithms.parameters import budget_of, fraction, positive_int
from dpquery.algorithms.synthesizer import Outcome, Run, RunParameters, Synthesizer, ZCDPBudget
from dpquery.data.binary import BinaryData, pack_columns
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import (
    ZCDP,
    Accountant,
    Budget,
    Charge,
    Ledger,
    PureDP,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    zcdp_rho_for,
)
from dpquery.privacy.errors import BudgetExceededError
from dpquery.queries import Workload
from dpquery.queries.evaluate import answer_weighted

MEASUREMENTS = ("laplace", "gaussian")
SELECTION = "MWEM exponential mechanism"
MEASUREMENT = "MWEM measurement"


@dataclass(frozen=True)
class MWEMPlan:
    """Per-round costs: ``epsilon_select`` for the exponential mechanism and the
    measurement's ``epsilon_measure`` (Laplace) or ``rho_measure`` (Gaussian)."""

    T: int
    measurement: str
    budget: Budget
    epsilon_select: float
    epsilon_measure: float | None
    rho_measure: float | None

    def round_charges(self) -> list[Charge]:
        measure: ZCDP | PureDP
        if self.rho_measure is not None:
            measure = ZCDP(self.rho_measure)
        else:
            assert self.epsilon_measure is not None
            measure = PureDP(self.epsilon_measure)
        return [
            Charge(SELECTION, PureDP(self.epsilon_select, bounded_range=True)),
            Charge(MEASUREMENT, measure),
        ]

    def charges(self) -> list[Charge]:
        return self.round_charges() * self.T


def plan_mwem(
    *,
    epsilon: float | None,
    delta: float | None,
    T: int,
    measurement: str,
    accountant: Accountant | None = None,
    rho: float | None = None,
    selection_share: float = 0.5,
) -> MWEMPlan:
    """Split the budget (``epsilon``, ``delta``) or ``rho`` evenly over ``T`` rounds and, within a
    round, ``selection_share`` to selection and the rest to measurement (Hardt et al. 2012,
    Section 3, split evenly), in pure DP or zCDP (module docstring)."""
    T = positive_int("T", T)
    if measurement not in MEASUREMENTS:
        raise DPQueryError(f"measurement must be 'laplace' or 'gaussian', got {measurement!r}")
    share = fraction("selection_share", selection_share)
    budget = budget_of(epsilon, delta, rho)
    if budget.measure == "zcdp":
        assert budget.rho is not None
        return _zcdp_plan(T, measurement, budget, budget.rho, share, accountant)
    if budget.measure == "pure":
        if measurement == "gaussian":
            raise DPQueryError("Gaussian measurement needs delta > 0 (zCDP); pure DP uses laplace")
        eps = budget.limit
        plan = MWEMPlan(T, measurement, budget, share * eps / T, (1 - share) * eps / T, None)
        return _within_budget(plan, accountant)
    rho = zcdp_rho_for(budget.limit, budget.delta)
    return _zcdp_plan(T, measurement, budget, rho, share, accountant)


def _zcdp_plan(
    T: int, measurement: str, budget: Budget, rho: float, share: float,
    accountant: Accountant | None,
) -> MWEMPlan:  # fmt: skip
    rho_select, rho_measure = share * rho / T, (1 - share) * rho / T
    eps_select = math.sqrt(8 * rho_select)  # bounded range: eps^2 / 8 = rho_select
    if measurement == "gaussian":
        plan = MWEMPlan(T, measurement, budget, eps_select, None, rho_measure)
    else:  # Laplace is eps-DP, hence eps^2/2-zCDP (Oracle-efficient, Lemma 1)
        plan = MWEMPlan(T, measurement, budget, eps_select, math.sqrt(2 * rho_measure), None)
    return _within_budget(plan, accountant)


def _within_budget(plan: MWEMPlan, accountant: Accountant | None) -> MWEMPlan:
    budget = plan.budget
    # The sums are exact but the split rounds: shave ulps until the ledger accepts the plan.
    ledger = Ledger(budget, accountant)
    for _ in range(64):
        try:
            ledger.check(plan.charges())
            return plan
        except BudgetExceededError:
            plan = MWEMPlan(
                plan.T, plan.measurement, budget, plan.epsilon_select * (1 - 1e-12),
                None if plan.epsilon_measure is None else plan.epsilon_measure * (1 - 1e-12),
                None if plan.rho_measure is None else plan.rho_measure * (1 - 1e-12),
            )  # fmt: skip
    ledger.check(plan.charges())  # raises the ledger's own error
    return plan


class WorstQuerySelector:
    """MWEM's query player: the exponential mechanism picks the query the current
    distribution answers worst, then a noisy measurement of its true answer."""

    def __init__(
        self, true_unit: np.ndarray, plan: MWEMPlan, *, n: int,
        rng: np.random.Generator, ledger: Ledger,
    ) -> None:  # fmt: skip
        self.true_unit, self.plan, self.n = true_unit, plan, n
        self.rng, self.ledger = rng, ledger
        self.current = np.zeros_like(true_unit)

    def select(self, t: int) -> tuple[int, float]:
        # Unit-scaled answers: the score |q(D) - q(A)| and q(D) both have sensitivity 1/n.
        scores = np.abs(self.true_unit - self.current)
        i = int(exponential_mechanism(
            scores, epsilon=self.plan.epsilon_select, sensitivity=1 / self.n, rng=self.rng,
            ledger=self.ledger, name=SELECTION,
        )[0])  # fmt: skip
        value = self.true_unit[i : i + 1]
        if self.plan.rho_measure is not None:
            noisy = gaussian_mechanism(
                value, rho=self.plan.rho_measure, sensitivity=1 / self.n, rng=self.rng,
                ledger=self.ledger, name=MEASUREMENT,
            )  # fmt: skip
        else:
            assert self.plan.epsilon_measure is not None
            noisy = laplace_mechanism(
                value, epsilon=self.plan.epsilon_measure, sensitivity=1 / self.n, rng=self.rng,
                ledger=self.ledger, name=MEASUREMENT,
            )  # fmt: skip
        return i, float(noisy[0])

    def observe(self, t: int, answers: np.ndarray) -> None:
        self.current = answers


class DomainWeights:
    """MWEM's data player: multiplicative weights over every cell of the domain.

    ``A_0`` is uniform over the cells, or ``prior`` (a support's weights). The update for a
    measurement ``m`` of query ``q`` is
    ``A(x) <- A(x) exp(q(x) (m - q(A)) / 2)`` (Hardt et al. 2012, Algorithm 1), on unit-scaled
    query values; each round applies every measurement so far, in order, ``passes`` times.
    """

    def __init__(
        self, workload: Workload, cells: np.ndarray, prior: np.ndarray | None = None,
        passes: int = 1,
    ) -> None:  # fmt: skip
        self.workload = workload
        self.passes = passes
        self.cells = cells
        self.packed = BinaryData(pack_columns(cells), cells.shape[0])
        # A_0: uniform over the cells, or the prior's weights (positive by construction)
        self.log_weights = np.zeros(cells.shape[0]) if prior is None else np.log(prior)
        self.average = np.zeros(cells.shape[0])
        self.measurements: list[tuple[int, float]] = []
        self._values: dict[int, np.ndarray] = {}
        self._answers = np.zeros(len(workload))

    def distribution(self) -> np.ndarray:
        w = np.exp(self.log_weights - self.log_weights.max())
        return w / w.sum()

    def unit_answers(self, p: np.ndarray) -> np.ndarray:
        """Unit-scaled answers of the whole workload on the cell distribution ``p``."""
        return to_unit(self.workload, answer_weighted(self.workload, self.packed, p))

    def query_values(self, i: int) -> np.ndarray:
        """``q_i(x)`` (unit-scaled, 0 or 1) on every cell, cached for the measured queries."""
        if i not in self._values:
            one = self.workload.subset(np.array([i]))
            self._values[i] = to_unit(self.workload, answer_cells(one, self.cells))
        return self._values[i]

    def start(self) -> np.ndarray:
        self._answers = self.unit_answers(self.distribution())
        return self._answers

    def respond(self, t: int, selection: tuple[int, float]) -> dict[str, Any]:
        self.measurements.append(selection)
        # replay (Hardt et al., Section 3.3), `passes` times: post-processing of the
        # measurements, so free; it lets cells of small prior weight grow to what was measured
        for i, m in self.measurements * self.passes:
            ones = self.query_values(i) == 1  # unit-scaled values are 0 or 1
            p = self.distribution()
            # q(x) = 1 on `ones`, 0 elsewhere (no BLAS: it contends with numba's threads)
            self.log_weights[ones] += (m - float(p[ones].sum())) / 2
            self.log_weights -= self.log_weights.max()  # keep exp() in range
        p = self.distribution()
        self.average += p
        self._answers = self.unit_answers(p)
        return {"query": selection[0], "measurement": selection[1]}

    def answers(self) -> np.ndarray:
        return self._answers


def mwem(
    workload: Workload,
    true_answers: np.ndarray,
    *,
    n: int,
    cells: np.ndarray,
    prior: np.ndarray | None,
    plan: MWEMPlan,
    passes: int,
    ledger: Ledger,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """MWEM (Hardt et al. 2012, Algorithm 1): the average distribution over ``cells``
    (``(1/T) sum_t A_t``) and per-round statistics."""
    queries = WorstQuerySelector(to_unit(workload, true_answers), plan, n=n, rng=rng,
                                 ledger=ledger)  # fmt: skip
    domain = DomainWeights(workload, cells, prior, passes)
    rounds = play(queries, domain, plan.T)
    return domain.average / plan.T, rounds


@dataclass(kw_only=True, eq=False)
class MWEM(Synthesizer, ZCDPBudget, RunParameters):
    """Private synthetic data by MWEM (Hardt, Ligett and McSherry 2012).

    ``epsilon`` with ``delta`` None (pure DP, Laplace measurement), ``delta > 0`` or ``rho``
    (zCDP, ``measurement="gaussian"`` or ``"laplace"``); ``T`` rounds. The domain is that of
    the data's bits and one-hot groups; beyond ``max_cells`` cells :meth:`fit` refuses (see
    :func:`check_domain_size`). ``support`` replaces the domain by explicit records and their
    weights as the starting distribution (see the module docstring for when that is private;
    :func:`support_cells`). The release is every cell weighted by the average distribution.
    """

    name: ClassVar[str] = "mwem"
    options: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "T", "measurement", "max_cells")

    T: int = 10
    measurement: str = "laplace"
    selection_share: float = 0.5
    passes: int = 1
    max_cells: int = DEFAULT_MAX_CELLS
    support: Records | np.ndarray | None = None

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> MWEMPlan:
        """The per-round costs :meth:`fit` will charge; reads nothing private."""
        keywords = self.budget_keywords(budget, data.n)
        if keywords["epsilon"] is None and keywords["rho"] is None:
            raise DPQueryError("MWEM needs a budget: epsilon (and delta for zCDP) or rho")
        plan = plan_mwem(**keywords, T=self.T, measurement=self.measurement,
                         selection_share=self.selection_share,
                         accountant=self.accountant)  # fmt: skip
        return plan

    def run(self, run: Run) -> Outcome:
        data, plan = run.data, run.plan
        if self.support is None:
            check_domain_size(data.d, data.onehot_groups, self.max_cells)  # before enumerating
            cells, prior = enumerate_cells(data.d, data.onehot_groups), None
        else:
            cells, prior = support_cells(self.support, data.d, self.max_cells)
        average, rounds = mwem(
            run.workload, run.true_answers, n=data.n, cells=cells, prior=prior, plan=plan,
            passes=self.passes, ledger=run.ledger, rng=run.rng,
        )  # fmt: skip
        parameters = {"T": plan.T, "measurement": plan.measurement,
                      "epsilon_select": plan.epsilon_select,
                      "epsilon_measure": plan.epsilon_measure, "rho_measure": plan.rho_measure,
                      "budget": plan.budget.to_dict(), "cells": int(cells.shape[0]),
                      "support": self.support is not None}  # fmt: skip
        return Outcome(Records(cells, average, data.domain), rounds, parameters)
