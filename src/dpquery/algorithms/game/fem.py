"""FEM and sepFEM (Vietri, Tian, Bun, Steinke, Wu, "New Oracle-Efficient Algorithms for
Private Synthetic Data Release", Algorithms 1, 2 and 3).

Both play the primal query-release game of :mod:`dpquery.algorithms.game.loop`: the query player
(Algorithm 1) runs the exponential mechanism over ``Q ∪ ¬Q`` (the only place privacy is spent,
``T`` times at ``epsilon_0``); the data player follows the perturbed leader (FEM, Algorithm 2:
``- <x, sigma>``, ``sigma ~ Exp(eta)^d``; sepFEM, Algorithm 3: Laplace weights on a separator
set). The output is ``1/T sum_t D_hat^t``: ``T s`` records of equal weight. The data player
never reads ``D``, so whatever the (untrusted) oracle returns is post-processing (Theorem 8).

The concepts live in their own modules: the plan and budget modes
(:mod:`~dpquery.algorithms.game.fem_plan`), the perturbations
(:mod:`~dpquery.algorithms.game.perturbations`), the players and their process pool
(:mod:`~dpquery.algorithms.game.players`); here are Algorithm 1 and the estimators.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from dpquery.algorithms.game.best_response import resolve_oracle
from dpquery.algorithms.game.fem_plan import (
    ACCOUNTINGS,
    AUTHORS_ADULT,
    DEFAULT_ACCOUNTING,
    DEFAULT_C,
    DEFAULT_NOISE_MULTIPLE,
    DEFAULT_ORACLE_OPTIONS,
    DEFAULT_SAMPLES,
    SEPFEM_NOISE_MULTIPLE,
    Accounting,
    FEMPlan,
    fem_accountant,
    plan_fem,
)
from dpquery.algorithms.game.free import FreeAttributes, check_policy
from dpquery.algorithms.game.loop import Progress, play, to_unit
from dpquery.algorithms.game.perturbations import (
    ExponentialPerturbation,
    Perturbation,
    SeparatorPerturbation,
    with_weighted_queries,
)
from dpquery.algorithms.game.players import (
    ExponentialMechanismPlayer,
    PerturbedLeader,
    picklable,
    pool,
)
from dpquery.algorithms.synthesizer import (
    OracleParameters,
    Outcome,
    Run,
    RunParameters,
    Synthesizer,
    ZCDPBudget,
)
from dpquery.data.binary import BinaryData
from dpquery.data.decode import sample_records
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import Oracle
from dpquery.privacy import Accountant, Budget, Ledger
from dpquery.queries import Workload

RoundCallback = Callable[[dict[str, Any]], None]


def fem(
    workload: Workload,
    true_answers: np.ndarray,
    *,
    n: int,
    plan: FEMPlan,
    perturbation: Perturbation,
    onehot_groups: np.ndarray,
    oracle: Oracle,
    free: FreeAttributes,
    ledger: Ledger,
    rng: np.random.Generator,
    executor: Executor | None = None,
    workers: int = 1,
    on_round: RoundCallback | None = None,
    on_error: str = "fallback",
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Algorithm 1 with a follow-the-perturbed-leader data player: the plays
    ``D_hat^1..D_hat^T`` (each ``(s, d)``) and per-round statistics."""
    queries = ExponentialMechanismPlayer(
        to_unit(workload, true_answers), epsilon0=plan.epsilon0, n=n, rng=rng, ledger=ledger
    )
    data = PerturbedLeader(
        workload, perturbation=perturbation, s=plan.s, T=plan.T, onehot_groups=onehot_groups,
        oracle=oracle, free=free, rng=rng, executor=executor, workers=workers,
        on_error=on_error,
    )  # fmt: skip
    stats = play(queries, data, plan.T, on_round)
    return data.plays, stats


@dataclass(kw_only=True, eq=False)
class FEM(Synthesizer, ZCDPBudget, OracleParameters, RunParameters):
    """Private synthetic data by FEM (Oracle-efficient, Algorithms 1 and 2).

    The budget is ``epsilon`` (``delta`` default ``1/n^2``) or ``rho``, resolved by
    :func:`~dpquery.algorithms.game.fem_plan.plan_fem` with ``epsilon0``, ``T``, ``c``, ``eta`` or
    ``noise_multiple``; ``samples`` is the paper's ``s``. The release's records are the
    ``T s`` plays (weights ``1/(T s)``), or ``size`` records resampled from them. ``preset``
    selects the authors' tuned Adult values (``"authors-adult-3way"``,
    ``"authors-adult-5way"``: ``c``, ``noise_multiple``, ``s``); explicit arguments override
    it. ``workers`` forked processes solve a round's ``s`` problems (default 1: a 2-process
    pool measured no speedup on 2 cores, see docs/fem.md, and forking after numba's
    OpenMP threads start is fragile). ``seed`` fixes every random choice.
    """

    name: ClassVar[str] = "fem"
    options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "rho", "epsilon0", "T", "eta", "samples", "preset",
        "noise_multiple", "accounting", "size", "oracle", "free_attributes", "workers",
    )  # fmt: skip
    default_noise_multiple: ClassVar[float] = DEFAULT_NOISE_MULTIPLE

    epsilon0: float | None = None
    T: int | None = None
    eta: float | None = None
    c: float | None = None
    noise_multiple: float | None = None
    samples: int | None = None
    preset: str | None = None
    accounting: Accounting = DEFAULT_ACCOUNTING
    size: int | None = None
    workers: int = 1
    progress: bool | None = None

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> FEMPlan:
        """The parameters and budget :meth:`fit` would use; reads only public sizes."""
        if check_policy(self.free_attributes) == "private-density":
            raise DPQueryError(f"{self.name} supports free_attributes 'zeros' or 'uniform'")
        self.perturbation(0.0, workload)  # the separator set must be over the workload's bits
        c, m, s = self.c, self.noise_multiple, self.samples
        if m is None and self.eta is None and self.preset is None:
            m = self.default_noise_multiple
        if self.preset is not None:
            if self.preset not in AUTHORS_ADULT:
                raise DPQueryError(
                    f"unknown preset {self.preset!r}; choose one of {tuple(AUTHORS_ADULT)}"
                )
            pc, pm, ps = AUTHORS_ADULT[self.preset]
            c = pc if c is None and self.epsilon0 is None and self.T is None else c
            m = pm if m is None and self.eta is None else m
            s = ps if s is None else s
        return plan_fem(
            n=data.n, **self.budget_keywords(budget, data.n), epsilon0=self.epsilon0, T=self.T,
            eta=self.eta, c=c, noise_multiple=m, s=s, accounting=self.accounting,
            accountant=self.accountant,
        )  # fmt: skip

    def plan_accountant(self, plan: FEMPlan) -> Accountant:
        return self.accountant if self.accountant is not None else fem_accountant(plan.accounting)

    def perturbation(self, eta: float, workload: Workload) -> Perturbation:
        """The data player's perturbation at scale ``eta`` (Algorithm 2)."""
        return ExponentialPerturbation(eta)

    def run(self, run: Run) -> Outcome:
        plan, data = run.plan, run.data
        perturbation = self.perturbation(plan.eta, run.workload)
        default = DEFAULT_ORACLE_OPTIONS if self.oracle == "heuristic" else {}
        oracle = resolve_oracle(self.oracle, self.oracle_options or default, self.on_error)
        free = FreeAttributes(check_policy(self.free_attributes), data.onehot_groups)
        workers = self.workers if picklable(oracle, perturbation) else 1
        progress = Progress(self.name, plan.T, _describe_round, self.progress)
        with pool(workers) as executor:
            plays, rounds = fem(
                run.workload, run.true_answers, n=data.n, plan=plan, perturbation=perturbation,
                onehot_groups=data.onehot_groups, oracle=oracle, free=free, ledger=run.ledger,
                rng=run.rng, executor=executor, workers=workers, on_round=progress.callback,
                on_error=self.on_error,
            )  # fmt: skip
        progress.close()
        rows = np.concatenate(plays)
        records = Records(rows, np.full(len(rows), 1.0 / len(rows)), data.domain)
        if self.size is not None:
            # Post-processing: a resample of the released average (no privacy cost).
            records = sample_records(records, self.size, seed=int(run.rng.integers(2**63)))
        parameters = {
            **asdict(plan), "budget": plan.budget.to_dict(), "oracle": oracle.name,
            "workers": workers, "accountant": run.ledger.accountant.name,
            "free_attributes": self.free_attributes, "preset": self.preset, "size": self.size,
            **self._extra_parameters(),
        }  # fmt: skip
        return Outcome(records, rounds, parameters)

    def _extra_parameters(self) -> dict[str, Any]:
        return {"perturbation": "exponential (Algorithm 2)"}


@dataclass(kw_only=True, eq=False)
class SepFEM(FEM):
    """Private synthetic data by sepFEM (Oracle-efficient, Algorithms 1 and 3).

    The same query player and budget modes as :class:`FEM`; the data player perturbs with
    ``Lap(eta)`` weights on a separator set: ``separator=None`` for the ``d`` single-bit
    queries (a separator set of every class of queries over bits; see
    :class:`~dpquery.algorithms.game.perturbations.SeparatorPerturbation`), or a
    :class:`~dpquery.queries.Workload` of separator queries over the same bits.
    """

    name: ClassVar[str] = "sepfem"
    default_noise_multiple: ClassVar[float] = SEPFEM_NOISE_MULTIPLE

    separator: Workload | None = None

    def perturbation(self, eta: float, workload: Workload) -> Perturbation:
        """Laplace weights at scale ``eta`` on the separator set (Algorithm 3)."""
        if self.separator is not None and self.separator.d != workload.d:
            raise DPQueryError(
                f"the separator set is over {self.separator.d} bits, the workload {workload.d}"
            )
        return SeparatorPerturbation(eta, self.separator)

    def _extra_parameters(self) -> dict[str, Any]:
        sep = "single bits" if self.separator is None else f"{len(self.separator)} queries"
        return {"perturbation": f"Laplace on a separator set ({sep}, Algorithm 3)"}


def _describe_round(info: dict[str, Any]) -> str:
    obj = info.get("objective_mean")
    return f"mean objective {obj if obj is None else f'{obj:.1f}'}"


__all__: Sequence[str] = [
    "ACCOUNTINGS",
    "AUTHORS_ADULT",
    "DEFAULT_C",
    "DEFAULT_SAMPLES",
    "FEM",
    "ExponentialMechanismPlayer",
    "ExponentialPerturbation",
    "FEMPlan",
    "PerturbedLeader",
    "SepFEM",
    "SeparatorPerturbation",
    "fem",
    "fem_accountant",
    "plan_fem",
    "with_weighted_queries",
]
