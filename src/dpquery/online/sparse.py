"""The IDC-to-private conversion (Small databases, Theorem 3.3; Gupta, Roth, Ullman 2012;
Hardt and Rothblum 2010), with the accounting and the accuracy bound spelled out.

**Mechanism.** The session runs in *epochs*; an epoch ends with an update. Each epoch opens one
AboveThreshold (Dwork and Roth 2014, Algorithm 1) with threshold ``T`` over the queries'
errors ``|f_D(y) - h(y)|`` (``h`` the current hypothesis, clipped to ``[0,1]``; sensitivity
``1/n`` because ``h`` depends only on earlier outputs). "Below": answer ``h(y)``. "Above": the
epoch ends; release ``a = (c_D(y) + Z) / n`` (clipped to ``[0, 1]``) where ``c_D(y) = n f_D(y)``
is the integer count and ``Z`` discrete Laplace noise of scale ``1/eps_lap`` (exact integer
sampler, :mod:`dpquery.privacy.discrete`), and update the hypothesis with ``a`` (the IDC's
step 3). No floating-point noise draw is ever released: the sparse vector's Laplace noise
(threshold and queries) stays inside the session and only its above/below bit comes out.

**Privacy.** Each epoch is ``eps_sv``-DP (AboveThreshold, Dwork and Roth Theorem 3.23, however
many queries precede the "above") plus ``eps_lap``-DP (discrete Laplace of scale ``t`` on a
count of sensitivity 1 is ``(1/t)``-DP: the geometric mechanism of Ghosh, Roughgarden and
Sundararajan 2009; :func:`dpquery.privacy.discrete.sample_discrete_laplace`). Updates and
hypothesis answers are post-processing. At most ``E`` epochs run (``E = B``, the mistake bound,
unless capped), composed by the ledger's accountant (basic or advanced composition, zCDP, the
tightest proved): the per-epoch ``eps_sv + eps_lap`` is the largest whose ``E`` epochs fit the
``(epsilon, delta)`` budget (:func:`plan_epochs`). Every charge is written to the ledger before
its noise is drawn.

**Accuracy (our constants for Theorem 3.3).** Let the user's accuracy be ``alpha``; run the IDC
at ``alpha_I = alpha/2`` with threshold ``T = alpha_I + xi``, ``xi = alpha/4``. On the event G
that every threshold noise is ``<= xi/3``, every query noise ``<= 2 xi/3`` and every answer
noise ``|Z| / n <= alpha_I/2`` in absolute value:

* "above" implies ``|f_D - h| >= T - xi = alpha_I``: a genuine mistake, so the IDC (Theorem
  3.5) bounds the number of epochs by ``B``;
* "below" implies ``|f_D - h| < T + xi = alpha``; measured answers err by ``<= alpha/4``;
* after ``B`` updates the hypothesis is ``alpha_I``-accurate on every query (Theorem 3.5's
  proof), so it answers for free.

With ``P(|Lap(b)| > x) = exp(-x/b)`` and the scales ``2/(n eps_sv)`` (threshold) and
``4/(n eps_sv)`` (queries); ``P(|Z| >= m) = 2 exp(-m eps_lap) / (1 + exp(-eps_lap))`` for the
discrete answer noise with ``m = floor(n alpha / 4) + 1``; a union bound over ``E`` epochs and
``l`` queries gives

    P(not G) <= (E + l) exp(-n eps_sv alpha / 24) + E P(|Z| >= m),

and ``P(|Z| >= m) < 2 exp(-n eps_lap alpha / 4)``. The two exponents are about equal when
``eps_sv = 6 eps_lap``: the default split ``sv_share = 6/7``.
Theorem 3.3 as printed has ``32 sqrt(B) log(l/beta) log(4/delta) / (alpha epsilon)``; the bound
here is the same argument with explicit constants and the ledger's composition.

**Verified.** An answer is *verified* when the session's plan meets the guarantee (``E >= B``
and ``P(not G) <= beta`` for ``l = max_queries``) and the answer is among the first
``max_queries``; then, with probability at least ``1 - beta`` over the session's noise, every
verified answer is within ``alpha`` of the truth (simultaneously, however the queries were
chosen). :func:`smallest_n` and :func:`largest_queries` say what would meet it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Charge, Ledger, PureDP, largest_float
from dpquery.privacy.discrete import discrete_laplace_tail, sample_discrete_laplace
from dpquery.privacy.mechanisms import AboveThreshold, AboveThresholdState

SV_NAME = "sparse vector (AboveThreshold, Dwork-Roth Thm 3.23)"
LAPLACE_NAME = "discrete Laplace answer (geometric mechanism; CKS 2020 Alg. 2)"
DEFAULT_SV_SHARE = 6 / 7


def epoch_charges(eps_epoch: float, sv_share: float, epochs: int) -> list[Charge]:
    """The whole plan: ``epochs`` sparse-vector and ``epochs`` Laplace charges."""
    return [
        Charge(SV_NAME, PureDP(eps_epoch * sv_share), count=epochs),
        Charge(LAPLACE_NAME, PureDP(eps_epoch * (1 - sv_share)), count=epochs),
    ]


def plan_epochs(budget: Budget, epochs: int, sv_share: float = DEFAULT_SV_SHARE) -> float:
    """The largest per-epoch ``eps_sv + eps_lap`` such that ``epochs`` epochs fit ``budget``
    under the default (tightest) accountant."""
    if epochs < 1:
        raise DPQueryError(f"the number of epochs must be >= 1, got {epochs}")
    if not 0 < sv_share < 1:
        raise DPQueryError(f"sv_share must lie in (0, 1), got {sv_share!r}")
    probe = Ledger(budget)
    limit = budget.limit

    def passes(eps: float) -> bool:
        if eps == 0:
            return True
        try:
            probe.check(epoch_charges(eps, sv_share, epochs))
        except DPQueryError:
            return False
        return True

    return largest_float(passes, lower=0.0, upper=4 * limit)


@dataclass(frozen=True)
class PrivacyPlan:
    """Per-epoch costs, thresholds and the accuracy guarantee of the conversion."""

    n: int
    alpha: float  # promised accuracy of every answer
    epochs: int  # E, the most epochs (updates) the budget pays for
    mistake_bound: int  # B of Theorem 3.5
    eps_sv: float
    eps_lap: float

    @property
    def alpha_idc(self) -> float:
        return self.alpha / 2

    @property
    def xi(self) -> float:
        return self.alpha / 4

    @property
    def threshold(self) -> float:
        return self.alpha_idc + self.xi

    @property
    def sensitivity(self) -> float:
        return 1.0 / self.n

    @property
    def answer_scale(self) -> Fraction:
        """The discrete Laplace scale ``t = 1/eps_lap`` on counts, exactly (a float is a
        rational), so the answer charge ``PureDP(eps_lap)`` is exactly ``1/t``."""
        return 1 / Fraction(self.eps_lap)

    def failure_probability(self, queries: int) -> float:
        """The bound on ``P(not G)`` for ``queries`` queries (module docstring)."""
        return _failure(self.n, self.epochs, queries, self.alpha, self.eps_sv, self.eps_lap)

    def promises(self, queries: int, beta: float) -> bool:
        """Whether every one of ``queries`` answers is ``alpha``-accurate with probability
        ``>= 1 - beta`` and no query is ever refused (``E >= B``)."""
        return self.epochs >= self.mistake_bound and self.failure_probability(queries) <= beta

    def smallest_n(self, queries: int, beta: float) -> int | None:
        """The smallest number of records for which this plan's per-epoch costs promise
        ``queries`` answers at ``beta`` (the failure bound falls as ``n`` grows); ``None``
        beyond 2^62."""
        e, a, es, el = self.epochs, self.alpha, self.eps_sv, self.eps_lap
        hi = 1
        while _failure(hi, e, queries, a, es, el) > beta:
            hi *= 2
            if hi > 2**62:
                return None
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _failure(mid, e, queries, a, es, el) <= beta:
                hi = mid
            else:
                lo = mid
        return hi

    def largest_queries(self, beta: float) -> int:
        """The largest ``l`` with ``P(not G) <= beta`` at this ``n`` (0: none; capped at
        2^62)."""
        sv = math.exp(-self.n * self.eps_sv * self.alpha / 24)
        rest = beta - _failure(self.n, self.epochs, 0, self.alpha, self.eps_sv, self.eps_lap)
        if rest < 0:
            return 0
        most = rest / sv if sv > 0 else math.inf
        return 2**62 if not most < 2**62 else max(0, math.floor(most))

    def what_would_work(self, queries: int, beta: float) -> str:
        """The smallest n and the largest query count that meet ``beta`` with these costs."""
        smallest = self.smallest_n(queries, beta)
        fix_n = (
            f"the smallest n that would work is {smallest:,} (the data has n={self.n:,})"
            if smallest is not None
            else "no n up to 2^62 would work"
        )
        largest = self.largest_queries(beta)
        fix_q = (
            f"the largest max_queries that would work at this n is {largest:,}"
            if largest > 0
            else "no max_queries would work at this n"
        )
        return f"{fix_n}; {fix_q}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _failure(
    n: int, epochs: int, queries: int, alpha: float, eps_sv: float, eps_lap: float
) -> float:
    """``(E + l) exp(-n eps_sv alpha / 24) + E P(|Z| >= floor(n alpha / 4) + 1)``."""
    sv = (epochs + queries) * math.exp(-n * eps_sv * alpha / 24)
    answer = epochs * discrete_laplace_tail(math.floor(n * alpha / 4) + 1, 1 / Fraction(eps_lap))
    return min(1.0, sv + answer)


def sparse_vector_test(
    error: float,
    epoch: AboveThresholdState | None,
    plan: PrivacyPlan,
    rng: np.random.Generator,
    ledger: Ledger,
) -> tuple[bool, AboveThresholdState | None]:
    """One query of the current epoch: is ``error`` above the threshold? Opens the epoch's
    AboveThreshold (charging ``eps_sv`` before its threshold noise) when none is open; returns
    the answer and the epoch's state (``None`` once it has halted).

    The threshold and query noise are continuous Laplace: they never leave the session, only
    the above/below bit does, so no float noise draw is published (Mironov's attack needs the
    noisy value itself); see :mod:`dpquery.privacy.mechanisms` for the remaining caveat."""
    if epoch is None:
        sv = AboveThreshold(
            plan.threshold, epsilon=plan.eps_sv, sensitivity=plan.sensitivity, rng=rng,
            ledger=ledger, name=SV_NAME,
        )  # fmt: skip
    else:
        sv = AboveThreshold.resume(epoch, rng=rng)
    above = sv.test(error)
    return above, None if above else sv.state


def noisy_count(
    count: int, n: int, plan: PrivacyPlan, rng: np.random.Generator, ledger: Ledger
) -> float:
    """Release ``clip((count + Z) / n, 0, 1)``, ``Z ~ Lap_Z(1/eps_lap)``: charges
    ``PureDP(eps_lap)`` (a count of ``n`` records has sensitivity 1 under replace-one
    neighbours) before the draw. The result is a ratio of integers, never a float noise draw."""
    t = plan.answer_scale
    ledger.charge(LAPLACE_NAME, PureDP(plan.eps_lap))  # before the draw
    (z,) = sample_discrete_laplace(t.numerator, t.denominator, 1, rng)
    return min(n, max(0, count + int(z))) / n


def make_plan(
    budget: Budget,
    n: int,
    alpha: float,
    mistake_bound: int,
    max_updates: int | None = None,
    sv_share: float = DEFAULT_SV_SHARE,
) -> PrivacyPlan:
    """Calibrate the epochs: ``E = min(B, max_updates)`` epochs within ``budget``."""
    if n < 1:
        raise DPQueryError(f"the data must have at least one record, got n={n}")
    epochs = mistake_bound if max_updates is None else min(mistake_bound, max_updates)
    if max_updates is not None and max_updates < 1:
        raise DPQueryError(f"max_updates must be >= 1, got {max_updates}")
    eps = plan_epochs(budget, epochs, sv_share)
    if eps <= 0:
        raise DPQueryError(f"the budget {budget.describe()} cannot pay for {epochs:,} epochs")
    return PrivacyPlan(n, alpha, epochs, mistake_bound, eps * sv_share, eps * (1 - sv_share))
