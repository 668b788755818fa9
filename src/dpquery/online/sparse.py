"""The IDC-to-private conversion (Small databases, Theorem 3.3; Gupta, Roth, Ullman 2012;
Hardt and Rothblum 2010), with the accounting and the accuracy bound spelled out.

**Mechanism.** The session runs in *epochs*; an epoch ends with an update. Each epoch opens one
AboveThreshold (Dwork and Roth 2014, Algorithm 1) with threshold ``T`` over the queries'
errors ``|f_D(y) - h(y)|`` (``h`` the current hypothesis, clipped to ``[0,1]``; sensitivity
``1/n`` because ``h`` depends only on earlier outputs). "Below": answer ``h(y)``. "Above": the
epoch ends; release ``a = f_D(y) + Lap(1/(n eps_lap))`` (clipped) and update the hypothesis with
``a`` (the IDC's step 3).

**Privacy.** Each epoch is ``eps_sv``-DP (AboveThreshold, Dwork and Roth Theorem 3.23, however
many queries precede the "above") plus ``eps_lap``-DP (Laplace, Theorem 3.6). Updates and
hypothesis answers are post-processing. At most ``E`` epochs run (``E = B``, the mistake bound,
unless capped), composed by the ledger's accountant (basic or advanced composition, zCDP, the
tightest proved): the per-epoch ``eps_sv + eps_lap`` is the largest whose ``E`` epochs fit the
``(epsilon, delta)`` budget (:func:`plan_epochs`). Every charge is written to the ledger before
its noise is drawn.

**Accuracy (our constants for Theorem 3.3).** Let the user's accuracy be ``alpha``; run the IDC
at ``alpha_I = alpha/2`` with threshold ``T = alpha_I + xi``, ``xi = alpha/4``. On the event G
that every threshold noise is ``<= xi/3``, every query noise ``<= 2 xi/3`` and every Laplace
answer noise ``<= alpha_I/2`` in absolute value:

* "above" implies ``|f_D - h| >= T - xi = alpha_I``: a genuine mistake, so the IDC (Theorem
  3.5) bounds the number of epochs by ``B``;
* "below" implies ``|f_D - h| < T + xi = alpha``; measured answers err by ``<= alpha/4``;
* after ``B`` updates the hypothesis is ``alpha_I``-accurate on every query (Theorem 3.5's
  proof), so it answers for free.

With ``P(|Lap(b)| > x) = exp(-x/b)`` and the scales ``2/(n eps_sv)`` (threshold),
``4/(n eps_sv)`` (queries), ``1/(n eps_lap)`` (answers), a union bound over ``E`` epochs and
``l`` queries gives

    P(not G) <= (E + l) exp(-n eps_sv alpha / 24) + E exp(-n eps_lap alpha / 4).

The two exponents are equal when ``eps_sv = 6 eps_lap``: the default split ``sv_share = 6/7``.
Theorem 3.3 as printed has ``32 sqrt(B) log(l/beta) log(4/delta) / (alpha epsilon)``; the bound
here is the same argument with explicit constants and the ledger's composition.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Charge, Ledger, PureDP, largest_float

SV_NAME = "sparse vector (AboveThreshold, Dwork-Roth Thm 3.23)"
LAPLACE_NAME = "Laplace answer (Dwork-Roth Thm 3.6)"
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

    def failure_probability(self, queries: int) -> float:
        """The bound on ``P(not G)`` for ``queries`` queries (module docstring)."""
        e, n = self.epochs, self.n
        sv = (e + queries) * math.exp(-n * self.eps_sv * self.alpha / 24)
        lap = e * math.exp(-n * self.eps_lap * self.alpha / 4)
        return min(1.0, sv + lap)

    def promises(self, queries: int, beta: float) -> bool:
        """Whether every one of ``queries`` answers is ``alpha``-accurate with probability
        ``>= 1 - beta`` and no query is ever refused (``E >= B``)."""
        return self.epochs >= self.mistake_bound and self.failure_probability(queries) <= beta

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


class SparseVectorEpoch:
    """One AboveThreshold run (Dwork and Roth, Algorithm 1): charges ``eps_sv`` to the ledger,
    then draws the noisy threshold ``T + Lap(2 Delta/eps_sv)``; :meth:`above` adds
    ``Lap(4 Delta/eps_sv)`` to each value. Its state can be saved and restored (the noisy
    threshold is secret: it lives only in the session state)."""

    def __init__(self, noisy_threshold: float, eps_sv: float, sensitivity: float) -> None:
        self.noisy_threshold = float(noisy_threshold)
        self.eps_sv = float(eps_sv)
        self.sensitivity = float(sensitivity)

    @classmethod
    def start(
        cls, plan: PrivacyPlan, rng: np.random.Generator, ledger: Ledger
    ) -> SparseVectorEpoch:
        ledger.charge(SV_NAME, PureDP(plan.eps_sv))  # before the draw
        noisy = plan.threshold + rng.laplace(0.0, 2 * plan.sensitivity / plan.eps_sv)
        return cls(noisy, plan.eps_sv, plan.sensitivity)

    def above(self, value: float, rng: np.random.Generator) -> bool:
        """Whether ``value + Lap(4 Delta/eps_sv)`` reaches the noisy threshold."""
        noise = rng.laplace(0.0, 4 * self.sensitivity / self.eps_sv)
        return bool(value + noise >= self.noisy_threshold)

    def to_dict(self) -> dict[str, float]:
        return {
            "noisy_threshold": self.noisy_threshold,
            "eps_sv": self.eps_sv,
            "sensitivity": self.sensitivity,
        }
