"""The privacy cost of DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu), Section 4.1.

Round ``t`` of Algorithm 2 draws ``s`` queries from the multiplicative-weights distribution
``Q^t``, an exponential mechanism with score ``r(q, D) = sum_{i<t} (q(D) - q(x^i))`` of
sensitivity ``(t-1)/n`` (proof of Theorem 4.2), i.e. each sample is ``epsilon'_t``-DP and
``epsilon'_t``-bounded range with ``epsilon'_t = 2 eta (t-1) / n`` (round 1 is free). The
best responses are post-processing. Everything below follows from that:

* Theorem 4.2 (pure): ``eta T (T-1) s / n`` (basic composition);
* Theorem 4.3 as printed: advanced composition (Lemma 2.4) with all ``k = s (T-1)`` samples
  charged the last round's ``2 eta (T-1) / n``;
* advanced composition with each round's own ``epsilon'_t`` (heterogeneous);
* zCDP: ``s sum_t epsilon'_t^2 / 2`` (Oracle-efficient, Lemma 1) or ``/ 8`` (bounded range).

:func:`dualquery_plan` gives the charges themselves, so every accountant applies; the closed
forms are kept as the paper states them and tested against the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpquery.privacy import _validate
from dpquery.privacy.accountants import Accountant, default_accountant
from dpquery.privacy.budget import Budget, fits
from dpquery.privacy.calibration import MAX_ROUNDS, largest_float, largest_integer, max_rounds
from dpquery.privacy.composition import Composition
from dpquery.privacy.costs import Charge, PureDP
from dpquery.privacy.ledger import Ledger
from dpquery.privacy.sampling import _check_rng, check_log_weights, sample_from_log_weights

MECHANISM = "DualQuery query sampling"


def dualquery_round_epsilon(t: int, *, eta: float, n: int) -> float:
    """``epsilon'_t = 2 eta (t-1) / n``: the cost of one sample in round ``t``
    (DualQuery, proof of Theorem 4.2; Oracle-efficient, Lemma 19)."""
    t = _validate.integer("t", t, minimum=1)
    eta = _validate.positive("eta", eta)
    n = _validate.integer("n", n, minimum=1)
    return 2 * eta * (t - 1) / n


def dualquery_round_charge(t: int, *, eta: float, s: int, n: int) -> Charge:
    """Round ``t``'s ``s`` samples: ``PureDP(epsilon'_t, bounded_range=True)`` times ``s``."""
    s = _validate.integer("s", s, minimum=1)
    eps = dualquery_round_epsilon(t, eta=eta, n=n)
    return Charge(MECHANISM, PureDP(eps, bounded_range=True), count=s)


def dualquery_sample_round(
    log_weights: ArrayLike,
    *,
    t: int,
    eta: float,
    s: int,
    n: int,
    rng: np.random.Generator,
    ledger: Ledger,
) -> NDArray[np.intp]:
    """Round ``t`` of Algorithm 2: charge :func:`dualquery_round_charge`, then draw ``s``
    queries from ``Q^t`` given by its log-weights ``-eta sum_{i<t} (q(x^i) - q(D))`` (any
    additive constant allowed). The caller is responsible for those weights having exactly
    this form (score sensitivity ``(t-1)/n``); the charge is what makes the draw private.
    """
    charge = dualquery_round_charge(t, eta=eta, s=s, n=n)
    logw = check_log_weights(log_weights)  # before charging: a bad input costs nothing
    _check_rng(rng)
    if not isinstance(ledger, Ledger):
        raise TypeError(f"ledger must be a dpquery.privacy.Ledger; got {ledger!r}")
    ledger.charge(charge.mechanism, charge.cost, count=charge.count)
    return sample_from_log_weights(logw, s, rng)


def dualquery_plan(*, eta: float, T: int, s: int, n: int) -> list[Charge]:
    """The charges of rounds ``1..T`` of DualQuery (Algorithm 2)."""
    T = _validate.integer("T", T, minimum=1)
    return [dualquery_round_charge(t, eta=eta, s=s, n=n) for t in range(1, T + 1)]


def dualquery_pure_epsilon(*, eta: float, T: int, s: int, n: int) -> float:
    """DualQuery, Theorem 4.2: ``epsilon = eta T (T-1) s / n`` (pure DP)."""
    eta = _validate.positive("eta", eta)
    T = _validate.integer("T", T, minimum=1)
    s = _validate.integer("s", s, minimum=1)
    n = _validate.integer("n", n, minimum=1)
    return eta * T * (T - 1) * s / n


def dualquery_epsilon_theorem_4_3(*, eta: float, T: int, s: int, n: int, delta: float) -> float:
    """DualQuery, Theorem 4.3, as printed:

        epsilon = 2 eta (T-1) / n * [sqrt(2 s (T-1) ln(1/delta))
                                     + s (T-1) (exp(2 eta (T-1) / n) - 1)],

    Lemma 2.4 with ``k = s (T-1)`` samples each charged ``epsilon' = 2 eta (T-1) / n``.
    """
    eta = _validate.positive("eta", eta)
    T = _validate.integer("T", T, minimum=1)
    s = _validate.integer("s", s, minimum=1)
    n = _validate.integer("n", n, minimum=1)
    d = _validate.open_unit("delta", delta)
    eps1 = 2 * eta * (T - 1) / n
    k = s * (T - 1)
    return eps1 * (math.sqrt(2 * k * math.log(1 / d)) + k * math.expm1(eps1))


def dualquery_epsilon_heterogeneous(*, eta: float, T: int, s: int, n: int, delta: float) -> float:
    """Advanced composition with round ``t``'s samples at their own ``2 eta (t-1) / n``:
    ``sqrt(2 ln(1/delta) s sum_t eps_t^2) + s sum_t eps_t (e^eps_t - 1)`` (the bound the
    DualQuery authors' code used; it gives the paper's "(1, 0.001)" for Section 6.2)."""
    d = _validate.open_unit("delta", delta)
    eps = [dualquery_round_epsilon(t, eta=eta, n=n) for t in range(1, T + 1)]
    s = _validate.integer("s", s, minimum=1)
    sq = s * math.fsum(e * e for e in eps)
    return math.sqrt(2 * math.log(1 / d) * sq) + s * math.fsum(e * math.expm1(e) for e in eps)


def dualquery_rho(*, eta: float, T: int, s: int, n: int, bounded_range: bool = True) -> float:
    """zCDP of DualQuery: ``s sum_{t=1}^T epsilon'_t^2 / c`` with ``c = 8`` (bounded range,
    Cesar and Rogers 2021) or ``c = 2`` (Oracle-efficient, Lemma 1), using
    ``sum_{t=1}^T (t-1)^2 = (T-1) T (2T-1) / 6``."""
    eta = _validate.positive("eta", eta)
    T = _validate.integer("T", T, minimum=1)
    s = _validate.integer("s", s, minimum=1)
    n = _validate.integer("n", n, minimum=1)
    c = 8 if bounded_range else 2
    return s * (2 * eta / n) ** 2 * ((T - 1) * T * (2 * T - 1) / 6) / c


@dataclass(frozen=True)
class DualQueryParameters:
    """``T``, ``eta`` and ``s`` of Algorithm 2 for target accuracy ``alpha``, failure ``beta``."""

    T: int
    eta: float
    s: int


def remark_4_7_parameters(
    *, alpha: float, beta: float, num_queries: int, log_universe_size: float
) -> DualQueryParameters:
    """Algorithm 2's settings behind Theorem 4.6 / Remark 4.7:

        T = 16 ln|Q| / alpha^2,  eta = alpha / 4,  s = 48 ln(2 |X| T / beta) / alpha^2,

    rounded up to integers (more rounds or samples only help accuracy). ``num_queries`` is
    ``|Q|`` (the workload with its negations, Algorithm 2's "Initialize"), and
    ``log_universe_size`` is ``ln |X|`` (``d ln 2`` for ``d`` binary attributes).
    """
    a = _validate.open_unit("alpha", alpha)
    b = _validate.open_unit("beta", beta)
    q = _validate.integer("num_queries", num_queries, minimum=2)
    log_x = _validate.nonnegative("log_universe_size", log_universe_size)
    T = math.ceil(16 * math.log(q) / a**2)
    s = math.ceil(48 * (math.log(2) + log_x + math.log(T) - math.log(b)) / a**2)
    return DualQueryParameters(T=T, eta=a / 4, s=s)


def remark_4_7_epsilon(*, eta: float, T: int, s: int, n: int, delta: float) -> float:
    """DualQuery, Remark 4.7: ``epsilon = 4 eta T sqrt(2 s T ln(1/delta)) / n``, the simplified
    form of Theorem 4.3 used to solve for ``alpha`` (it bounds the second term of Theorem 4.3 by
    the first, which needs ``s T (e^{2 eta T / n} - 1) <= sqrt(2 s T ln(1/delta))``; prefer
    :func:`dualquery_epsilon_theorem_4_3` for an actual guarantee)."""
    eta = _validate.positive("eta", eta)
    T = _validate.integer("T", T, minimum=1)
    s = _validate.integer("s", s, minimum=1)
    n = _validate.integer("n", n, minimum=1)
    d = _validate.open_unit("delta", delta)
    return 4 * eta * T * math.sqrt(2 * s * T * math.log(1 / d)) / n


def dualquery_max_rounds(
    budget: Budget, *, eta: float, s: int, n: int, accountant: Accountant | None = None
) -> int:
    """Largest ``T`` whose :func:`dualquery_plan` fits ``budget`` (``T + 1`` does not)."""
    _validate.positive("eta", eta)
    _validate.integer("s", s, minimum=1)
    _validate.integer("n", n, minimum=1)
    return max_rounds(
        lambda t: [dualquery_round_charge(t, eta=eta, s=s, n=n)],
        budget,
        accountant,
        limit=MAX_ROUNDS,
    )


def dualquery_max_samples(
    budget: Budget, *, eta: float, T: int, n: int, accountant: Accountant | None = None
) -> int:
    """Largest ``s`` such that ``T`` rounds of ``s`` samples fit ``budget``; 0 if none does."""
    acc = accountant if accountant is not None else default_accountant()
    _validate.integer("T", T, minimum=1)

    def passes(s: int) -> bool:
        return s == 0 or fits(
            Composition(dualquery_plan(eta=eta, T=T, s=s, n=n)).totals(), budget, acc
        )

    return largest_integer(passes, lower=0, upper=10**12)


def dualquery_max_eta(
    budget: Budget, *, T: int, s: int, n: int, accountant: Accountant | None = None
) -> float:
    """Largest float ``eta`` such that the plan fits ``budget`` (the next float does not)."""
    acc = accountant if accountant is not None else default_accountant()
    _validate.integer("T", T, minimum=2)

    def passes(eta: float) -> bool:
        return eta == 0 or fits(
            Composition(dualquery_plan(eta=eta, T=T, s=s, n=n)).totals(), budget, acc
        )

    return largest_float(passes, lower=0.0, upper=1e12)
