"""DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu), Algorithm 2.

The query player runs multiplicative weights over the closed workload ``Q ∪ ¬Q``; each round
it draws ``s`` queries from ``Q^t`` (an exponential mechanism: the only place privacy is
spent), the data player best-responds with one record ``x^t`` (an oracle: untrusted,
post-processing), and every query's log-weight moves by ``-eta (q(x^t) - q(D))``. The
synthetic data is the ``T`` records.

Parameters come in four modes (see :func:`plan_dualquery`): explicit ``(eta, T, s)``;
budget mode, the largest ``T`` (or ``s``) that fits ``(epsilon, delta)`` under the chosen
accountant; theory mode from ``(alpha, beta)`` (Algorithm 2's settings, Remark 4.7).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

import numpy as np

from dpquery.algorithms.game.best_response import BestResponder, BestResponseSynthesizer
from dpquery.algorithms.game.free import DENSITY_MECHANISM, check_policy, private_density
from dpquery.algorithms.game.loop import Progress, to_unit
from dpquery.algorithms.game.modes import (
    ModeRequest,
    MultiplicativeWeightsModes,
    MultiplicativeWeightsPlan,
    resolve_modes,
)
from dpquery.algorithms.parameters import epsilon_delta, log_universe_size
from dpquery.algorithms.synthesizer import Outcome, Run
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import (
    Accountant,
    Budget,
    Charge,
    Ledger,
    PureDP,
    default_accountant,
    max_rounds,
)
from dpquery.privacy.dualquery import (
    dualquery_max_samples,
    dualquery_plan,
    dualquery_round_charge,
    dualquery_sample_round,
    remark_4_7_parameters,
)
from dpquery.queries import Workload

DEFAULT_ETA = 1.2
DEFAULT_SAMPLES = 1000


@dataclass(frozen=True)
class DualQueryPlan(MultiplicativeWeightsPlan):
    """A DualQuery run's parameters, with private-density's ``epsilon`` if it has one."""

    density_epsilon: float | None = None

    def charges(self) -> list[Charge]:
        """Everything the run will charge, in order."""
        density = [] if self.density_epsilon is None else [
            Charge(DENSITY_MECHANISM, PureDP(self.density_epsilon))
        ]  # fmt: skip
        return density + dualquery_plan(eta=self.eta, T=self.T, s=self.s, n=self.n)


def plan_dualquery(
    *,
    n: int,
    num_queries: int,
    log_universe: float,
    density_epsilon: float | None = None,
    accountant: Accountant | None = None,
    **request: Unpack[ModeRequest],
) -> DualQueryPlan:
    """Resolve DualQuery's parameters (DualQuery, Theorems 4.2/4.3, Remark 4.7).

    * theory: ``alpha`` (and ``beta``, default 0.05): Algorithm 2's ``T, eta, s``; with
      ``epsilon``, they must fit it;
    * budget: ``epsilon`` (``delta``; 0 or None for pure DP) with two of ``eta, T, s``: the
      largest third one (``T`` or ``s``) that fits; ``eta`` and ``s`` default to 1.2 and 1000,
      as in the paper's experiments;
    * explicit: ``eta, T, s`` and no ``epsilon``: the budget is what they cost under the
      accountant (pure epsilon by Theorem 4.2 when ``delta`` is not given).

    ``num_queries`` is ``|Q|`` with negations (2 x the workload).
    """
    acc = accountant if accountant is not None else default_accountant()
    density = [] if density_epsilon is None else [
        Charge(DENSITY_MECHANISM, PureDP(density_epsilon))
    ]  # fmt: skip
    given = {k for k, v in request.items() if v is not None}
    if density and {"epsilon", "T"} <= given and not {"s", "alpha"} & given:
        raise DPQueryError("budget mode for s does not support private-density; give s")

    def theory(alpha: float, beta: float) -> tuple[float, int, int]:
        p = remark_4_7_parameters(
            alpha=alpha, beta=beta, num_queries=num_queries, log_universe_size=log_universe
        )
        return p.eta, p.T, p.s

    def largest_T(budget: Budget, eta_: float, s_: int) -> int:
        def round_charges(t: int) -> list[Charge]:
            first = density if t == 1 else []
            return [*first, dualquery_round_charge(t, eta=eta_, s=s_, n=n)]

        return max_rounds(round_charges, budget, acc)

    modes = MultiplicativeWeightsModes(
        box="Algorithm 2",
        charges=lambda eta_, T_, s_: density + dualquery_plan(eta=eta_, T=T_, s=s_, n=n),
        theory=theory,
        largest_s=lambda b, eta_, T_: dualquery_max_samples(b, eta=eta_, T=T_, n=n, accountant=acc),
        largest_T=largest_T,
        too_few="only {T} round(s)",
        default_eta=DEFAULT_ETA,
        default_s=DEFAULT_SAMPLES,
    )
    eta, T, s, budget, mode = resolve_modes(modes, n=n, accountant=acc, **request)
    return DualQueryPlan(eta, T, s, n, budget, mode, density_epsilon)


RoundCallback = Callable[[dict[str, Any]], None]


class MultiplicativeWeightsSampler:
    """DualQuery's query player (Algorithm 2): multiplicative weights over ``Q ∪ ¬Q``.

    The log-weight of ``q`` is ``-eta r_q`` and of ``¬q`` is ``+eta r_q``, with
    ``r_q = sum_{i<t} (q(x^i) - q(D))``; round ``t`` draws ``s`` queries from it.
    """

    def __init__(
        self, true_unit: np.ndarray, *, eta: float, s: int, n: int,
        rng: np.random.Generator, ledger: Ledger,
    ) -> None:  # fmt: skip
        self.true_unit = true_unit
        self.eta, self.s, self.n = eta, s, n
        self.rng, self.ledger = rng, ledger
        self.r = np.zeros_like(true_unit)

    def log_weights(self) -> np.ndarray:
        return np.concatenate([-self.eta * self.r, self.eta * self.r])

    def select(self, t: int) -> np.ndarray:
        return dualquery_sample_round(
            self.log_weights(), t=t, eta=self.eta, s=self.s, n=self.n,
            rng=self.rng, ledger=self.ledger,
        )  # fmt: skip

    def observe(self, t: int, answers: np.ndarray) -> None:
        self.r += answers - self.true_unit


def dualquery(
    true_answers: np.ndarray,
    records: BestResponder,
    *,
    n: int,
    plan: DualQueryPlan,
    ledger: Ledger,
    rng: np.random.Generator,
    on_round: RoundCallback | None = None,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """DualQuery, Algorithm 2: the ``T`` best-response records and per-round statistics.

    ``true_answers`` are ``q(D)`` for the stored queries. Answers are rescaled to [0, 1]
    (parities: (1 + p) / 2) so the score's sensitivity is ``(t-1)/n`` as Theorem 4.2's
    proof requires.
    """
    queries = MultiplicativeWeightsSampler(
        to_unit(records.workload, true_answers), eta=plan.eta, s=plan.s, n=n, rng=rng,
        ledger=ledger,
    )  # fmt: skip
    return records.play(queries, plan.T, on_round)


@dataclass(kw_only=True, eq=False)
class DualQuery(BestResponseSynthesizer):
    """Private synthetic data by DualQuery (Algorithm 2).

    Hyperparameters are stored as given; :meth:`fit` validates them, resolves the mode
    (:func:`plan_dualquery`; ``samples`` is the paper's ``s``), and returns a
    :class:`Release`. ``seed`` fixes every random choice (for testing and research); without
    it the run is unpredictable.
    """

    name: ClassVar[str] = "dualquery"
    options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "eta", "T", "samples", "alpha", "beta", "oracle",
        "free_attributes", "density_epsilon",
    )  # fmt: skip

    density_epsilon: float | None = None
    progress: bool | None = None

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> DualQueryPlan:
        """The parameters and budget :meth:`fit` would use; reads only public sizes."""
        policy = check_policy(self.free_attributes)
        density_eps = None
        if policy == "private-density":
            density_eps = self.density_epsilon
            if density_eps is None:
                raise DPQueryError("free_attributes='private-density' needs density_epsilon")
        elif self.density_epsilon is not None:
            raise DPQueryError("density_epsilon applies only to free_attributes='private-density'")
        return plan_dualquery(
            n=data.n, num_queries=2 * len(workload), log_universe=log_universe_size(data),
            **epsilon_delta(self.name, self.budget_keywords(budget, data.n)),
            eta=self.eta, T=self.T,
            s=self.samples, alpha=self.alpha, beta=self.beta, density_epsilon=density_eps,
            accountant=self.accountant,
        )  # fmt: skip

    def run(self, run: Run) -> Outcome:
        plan, data = run.plan, run.data
        density = None
        if plan.density_epsilon is not None:
            density = private_density(
                data, epsilon=plan.density_epsilon, rng=run.rng, ledger=run.ledger
            )
        records = self.responder(run, density)
        progress = Progress(self.name, plan.T, _describe_round, self.progress)
        rows, rounds = dualquery(
            run.true_answers, records, n=data.n, plan=plan, ledger=run.ledger, rng=run.rng,
            on_round=progress.callback,
        )  # fmt: skip
        progress.close()
        return Outcome(Records(rows, None, data.domain), rounds, self.report(plan, records))


def _describe_round(info: dict[str, Any]) -> str:
    obj = info["objective"]
    return f"objective {obj if obj is None else f'{obj:.1f}'}  {info['status'][:20]:<20}"
