"""DQRS, DualQuery with rejection sampling (Oracle-efficient, Algorithm 4 and Appendix B).

DualQuery (Algorithm 2) pays for ``s`` fresh samples of the multiplicative-weights
distribution every round. DQRS recycles them: ``Q^{t+1}`` is close to ``Q^t``, so each kept
query ``q`` of ``S_t`` survives with probability

    Q_hat^{t+1}_q / Q^t_q = e^{-eta - gamma_t} exp(-eta A_D(x^t, q)),  gamma_t = 1/(2 t^{2/3}),

which leaves survivors distributed as ``Q^{t+1}`` (Lemma 10/20), and only
``s~_t = (2 gamma_t + 4 eta) s`` fresh samples are drawn, enough to refill ``S_{t+1}`` with
high probability (Lemma 21); extras are discarded at random. The data player is DualQuery's
best responder, unchanged; the loop is :func:`dpquery.algorithms.game.loop.play`.

Privacy (zCDP, on the ledger): the rejection tests read the data and are
``max(eta/n, eta/(gamma_t n))``-DP each (Lemma 11/18); the fresh samples are exponential
mechanisms (Lemma 19). :func:`dpquery.privacy.dqrs.dqrs_round_charges` states both; see
``docs/dqrs-mwem.md`` for the derivation and the off-by-one in the proof of Theorem 17.

Indexing. Algorithm 4's round ``t`` best-responds to ``S_t`` and then builds ``S_{t+1}``.
Here round ``t``'s :meth:`RejectionSampler.select` builds ``S_t`` from ``S_{t-1}`` (the
rejection step of Algorithm 4's round ``t-1``, charged as such), so the useless
``S_{T+1}`` after the last best response is never drawn nor paid for: ``T`` rounds cost
``dqrs_plan(T-1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

import numpy as np

from dpquery.algorithms.game.best_response import BestResponder, BestResponseSynthesizer
from dpquery.algorithms.game.dualquery import DEFAULT_SAMPLES, MultiplicativeWeightsSampler
from dpquery.algorithms.game.free import check_policy
from dpquery.algorithms.game.loop import to_unit
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
    Composition,
    Ledger,
    default_accountant,
    fits,
    largest_integer,
    sample_from_log_weights,
)
from dpquery.privacy.dqrs import (
    dqrs_fresh_samples,
    dqrs_gamma,
    dqrs_max_rounds,
    dqrs_plan,
    dqrs_round_charges,
)
from dpquery.privacy.sampling import bernoulli_exp_neg
from dpquery.queries import Workload

# Rejection sampling only pays off when s~_t = (2 gamma_t + 4 eta) s < s, i.e. eta < 1/4
# (Theorem 9's regime, eta = alpha/4): DualQuery's default 1.2 would draw 4.8 s per round.
DEFAULT_ETA = 0.1


@dataclass(frozen=True)
class DQRSPlan(MultiplicativeWeightsPlan):
    """A DQRS run's parameters."""

    def charges(self) -> list[Charge]:
        """Everything the run will charge, in order: the rejection steps of rounds
        ``1..T-1`` (``S_1`` is uniform, hence free; ``S_{T+1}`` is never built)."""
        return dqrs_plan(eta=self.eta, T=self.T - 1, s=self.s, n=self.n) if self.T > 1 else []


def algorithm_4_parameters(
    *, alpha: float, beta: float, num_queries: int, log_universe: float
) -> tuple[float, int, int]:
    """Algorithm 4's ``(eta, T, s)``: ``T = 16 ln|Q| / alpha^2``, ``eta = alpha/4``,
    ``s = 48 ln(3 |X| T / beta) / alpha^2`` (rounded up; the printed "``/2``" of ``s`` is
    ``alpha^2`` as in DualQuery Algorithm 2, by Lemma 21's ``4 eta s = 48/alpha ...``)."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise DPQueryError(f"alpha and beta must lie in (0, 1), got alpha={alpha}, beta={beta}")
    T = math.ceil(16 * math.log(num_queries) / alpha**2)
    s = math.ceil(48 * (math.log(3 * T / beta) + log_universe) / alpha**2)
    return alpha / 4, T, s


def plan_dqrs(
    *,
    n: int,
    num_queries: int,
    log_universe: float,
    accountant: Accountant | None = None,
    **request: Unpack[ModeRequest],
) -> DQRSPlan:
    """Resolve DQRS's parameters, in the modes of :func:`~dpquery.algorithms.game.dualquery.
    plan_dualquery`:

    * theory: ``alpha`` (``beta`` default 0.05): :func:`algorithm_4_parameters`; with
      ``epsilon`` they must fit it;
    * budget: ``epsilon`` (``delta``; none for pure DP) with ``eta`` (default 0.1) and one of
      ``T``, ``s`` (default ``s = 1000``): the largest other one that fits (``T`` via
      :func:`dpquery.privacy.dqrs.dqrs_max_rounds`, plus one: the last round resamples nothing);
    * explicit: ``eta, T, s`` without ``epsilon``: the budget is what they cost.
    """
    acc = accountant if accountant is not None else default_accountant()

    def plan_of(eta_: float, T_: int, s_: int) -> list[Charge]:
        return dqrs_plan(eta=eta_, T=T_ - 1, s=s_, n=n) if T_ > 1 else []

    def largest_s(budget: Budget, eta_: float, T_: int) -> int:
        def passes(s_: int) -> bool:
            return s_ == 0 or fits(Composition(plan_of(eta_, T_, s_)).totals(), budget, acc)

        return largest_integer(passes, lower=0, upper=10**12)

    modes = MultiplicativeWeightsModes(
        box="Algorithm 4",
        charges=plan_of,
        theory=lambda alpha, beta: algorithm_4_parameters(
            alpha=alpha, beta=beta, num_queries=num_queries, log_universe=log_universe
        ),
        largest_s=largest_s,
        largest_T=lambda b, eta_, s_: 1 + dqrs_max_rounds(b, eta=eta_, s=s_, n=n, accountant=acc),
        too_few="no rejection step",
        default_eta=DEFAULT_ETA,
        default_s=DEFAULT_SAMPLES,
    )
    eta, T, s, budget, mode = resolve_modes(modes, n=n, accountant=acc, **request)
    return DQRSPlan(eta, T, s, n, budget, mode)


def rejection_step(
    S_t: np.ndarray,
    payoff: np.ndarray,
    log_weights_next: np.ndarray,
    *,
    t: int,
    eta: float,
    s: int,
    n: int,
    rng: np.random.Generator,
    ledger: Ledger,
) -> tuple[np.ndarray, dict[str, int]]:
    """Algorithm 4, "Construct ``S_{t+1}``": keep each ``q`` in ``S_t`` with probability
    ``e^{-eta - gamma_t} exp(-eta A_D(x^t, q))``, add ``s~_t`` fresh samples of ``Q^{t+1}``,
    discard at random down to ``s``.

    ``payoff[q] = A_D(x^t, q) = q(x^t) - q(D)`` over the closed workload (in [-1, 1]);
    ``log_weights_next`` gives ``Q^{t+1}`` (any additive constant). Both read the private
    data, so :func:`dpquery.privacy.dqrs.dqrs_round_charges` (Lemmas 18 and 19) is charged first.
    If more than ``s~_t`` queries are rejected (probability at most ``(e/4)^{s~_t}``, Lemma 21)
    ``S_{t+1}`` keeps fewer than ``s`` queries: drawing more would make the spend depend on
    the data.
    """
    charges = dqrs_round_charges(t, eta=eta, s=s, n=n)
    ledger.check(charges)  # both charges or neither
    for c in charges:
        ledger.charge(c.mechanism, c.cost, count=c.count)
    gamma_t = dqrs_gamma(t)
    s_tilde = dqrs_fresh_samples(t, eta=eta, s=s)
    # Q_hat^{t+1}_q / Q^t_q <= e^{-gamma_t} < 1 since A_D >= -1: a probability (Lemma 18).
    keep = bernoulli_exp_neg(eta + gamma_t + eta * payoff[S_t], rng)  # exact (sampling.py)
    fresh = sample_from_log_weights(log_weights_next, s_tilde, rng)
    S_next = np.concatenate([S_t[keep], fresh])
    pooled = int(S_next.size)
    if pooled > s:  # independent of the data: post-processing
        S_next = rng.choice(S_next, size=s, replace=False)
    info = {"kept": int(keep.sum()), "rejected": int((~keep).sum()), "fresh": s_tilde,
            "discarded": max(0, pooled - s), "size": int(S_next.size)}  # fmt: skip
    return S_next.astype(np.intp, copy=False), info


class RejectionSampler(MultiplicativeWeightsSampler):
    """DQRS's query player (Algorithm 4): DualQuery's multiplicative weights over
    ``Q ∪ ¬Q``, with the sample set recycled by :func:`rejection_step`.

    ``Q^{t+1} ∝ Q_hat^{t+1} = e^{-eta - gamma_t} exp(-eta A_D(x^t, q)) Q^t`` has the same
    normalised form ``exp(-eta sum_{i<=t} A_D(x^i, q))`` as DualQuery's, so the log-weights
    are inherited. ``sample_stats[t-1]`` records round ``t``'s kept/fresh/discarded counts.
    """

    def __init__(
        self, true_unit: np.ndarray, *, eta: float, s: int, n: int,
        rng: np.random.Generator, ledger: Ledger,
    ) -> None:  # fmt: skip
        super().__init__(true_unit, eta=eta, s=s, n=n, rng=rng, ledger=ledger)
        self.S = np.zeros(0, dtype=np.intp)
        self.payoff = np.zeros(2 * true_unit.size)
        self.sample_stats: list[dict[str, int]] = []

    def select(self, t: int) -> np.ndarray:
        if t == 1:  # S_1 from Uniform(Q): no data involved, free
            self.S = self.rng.integers(2 * self.true_unit.size, size=self.s).astype(np.intp)
            info = {"kept": 0, "rejected": 0, "fresh": self.s, "discarded": 0, "size": self.s}
        else:  # Algorithm 4's round t-1 builds S_t
            self.S, info = rejection_step(
                self.S, self.payoff, self.log_weights(), t=t - 1, eta=self.eta, s=self.s,
                n=self.n, rng=self.rng, ledger=self.ledger,
            )  # fmt: skip
        self.sample_stats.append(info)
        return self.S

    def observe(self, t: int, answers: np.ndarray) -> None:
        a = answers - self.true_unit  # A_D(x^t, q); for ¬q it is -(q(x^t) - q(D))
        self.payoff = np.concatenate([a, -a])
        super().observe(t, answers)


def dqrs(
    true_answers: np.ndarray,
    records: BestResponder,
    *,
    n: int,
    plan: DQRSPlan,
    ledger: Ledger,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """DQRS, Algorithm 4: DualQuery's best responder against the rejection-sampling query
    player; the ``T`` records and per-round statistics (with each round's kept, rejected,
    fresh and discarded counts)."""
    queries = RejectionSampler(
        to_unit(records.workload, true_answers), eta=plan.eta, s=plan.s, n=n, rng=rng,
        ledger=ledger,
    )  # fmt: skip
    rows, rounds = records.play(queries, plan.T)
    for info, samples in zip(rounds, queries.sample_stats, strict=True):
        info.update(samples)
    return rows, rounds


@dataclass(kw_only=True, eq=False)
class DQRS(BestResponseSynthesizer):
    """Private synthetic data by DQRS (Oracle-efficient, Algorithm 4).

    Parameters as :class:`~dpquery.algorithms.game.dualquery.DualQuery` (modes: explicit
    ``eta, T, samples``; budget ``epsilon`` (+ ``delta``) with the largest ``T`` or
    ``samples``; theory ``alpha``/``beta``), except that ``eta`` defaults to 0.1 (rejection
    sampling saves privacy only for ``eta < 1/4``) and free attributes may be ``"zeros"`` or
    ``"uniform"``. :meth:`fit` returns a :class:`Release` whose ``rounds`` carry, per round,
    how many queries were kept, rejected, fresh and discarded.
    """

    name: ClassVar[str] = "dqrs"
    options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "eta", "T", "samples", "alpha", "beta", "oracle",
        "free_attributes",
    )  # fmt: skip

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> DQRSPlan:
        """The parameters and budget :meth:`fit` would use; reads only public sizes."""
        if check_policy(self.free_attributes) == "private-density":
            raise DPQueryError("DQRS supports free_attributes 'zeros' or 'uniform', not "
                               "'private-density'")  # fmt: skip
        return plan_dqrs(
            n=data.n, num_queries=2 * len(workload), log_universe=log_universe_size(data),
            **epsilon_delta(self.name, self.budget_keywords(budget, data.n)),
            eta=self.eta, T=self.T,
            s=self.samples, alpha=self.alpha, beta=self.beta, accountant=self.accountant,
        )  # fmt: skip

    def run(self, run: Run) -> Outcome:
        plan = run.plan
        records = self.responder(run)
        rows, rounds = dqrs(
            run.true_answers, records, n=run.data.n, plan=plan, ledger=run.ledger, rng=run.rng
        )
        parameters = {**self.report(plan, records),
                      "fresh_samples": int(sum(r["fresh"] for r in rounds[1:])),
                      "short_rounds": int(sum(r["size"] < plan.s for r in rounds))}  # fmt: skip
        return Outcome(Records(rows, None, run.data.domain), rounds, parameters)
