"""The privacy cost of DQRS, DualQuery with rejection sampling (Oracle-efficient, Algorithm 4,
proof of Theorem 17 in Appendix B).

Round ``t`` (with ``gamma_t = 1 / (2 t^{2/3})``) spends privacy twice:

* rejection sampling: each of the ``s`` queries in ``S_t`` is kept with probability
  ``e^{-eta - gamma_t} exp(-eta A_D(x^t, q))``, which is ``max(eta/n, eta/(gamma_t n))``-DP
  (Lemma 18);
* fresh samples: ``s~_t = (2 gamma_t + 4 eta) s`` queries drawn from the multiplicative-weights
  distribution, an exponential mechanism (Lemma 19: sampling from ``Q^t`` is
  ``2 eta (t-1) / n``-DP).

The proof composes them as ``rho_t = eta^2 s / (2 gamma_t^2 n^2) + 2 eta^2 (t-1)^2 s~_t / n^2``
(Lemma 1 for both). Algorithm 4 as written, however, draws round ``t``'s fresh samples from
``Q^{t+1}`` — after the update with ``x^t`` — whose score sums ``t`` terms, so Lemma 19 gives
``2 eta t / n`` for them, not ``2 eta (t-1) / n``. :func:`dqrs_round_charges` (used by the
accountants and the default) charges what Algorithm 4 does, with the integer
``ceil((2 gamma_t + 4 eta) s)`` samples it must draw; :func:`dqrs_round_rho_as_printed` keeps
the proof's formula.
"""

from __future__ import annotations

import math

from dpquery.privacy import _validate
from dpquery.privacy.accountants import Accountant, ZCDPAccountant
from dpquery.privacy.budget import Budget, budget_rho
from dpquery.privacy.calibration import largest_integer, max_rounds
from dpquery.privacy.composition import Composition
from dpquery.privacy.conversions import Conversion
from dpquery.privacy.costs import Charge, PureDP

REJECTION = "DQRS rejection sampling"
FRESH = "DQRS fresh query sampling"


def _check(t: int, eta: float, s: int, n: int) -> tuple[int, float, int, int]:
    return (
        _validate.integer("t", t, minimum=1),
        _validate.positive("eta", eta),
        _validate.integer("s", s, minimum=1),
        _validate.integer("n", n, minimum=1),
    )


def dqrs_gamma(t: int) -> float:
    """``gamma_t = 1 / (2 t^{2/3})`` (Algorithm 4)."""
    t = _validate.integer("t", t, minimum=1)
    return 1 / (2 * t ** (2 / 3))


def dqrs_fresh_samples(t: int, *, eta: float, s: int) -> int:
    """``s~_t = (2 gamma_t + 4 eta) s`` fresh samples, rounded up to an integer (Algorithm 4)."""
    eta = _validate.positive("eta", eta)
    s = _validate.integer("s", s, minimum=1)
    return math.ceil((2 * dqrs_gamma(t) + 4 * eta) * s)


def dqrs_rejection_epsilon(t: int, *, eta: float, n: int) -> float:
    """``max(eta/n, eta/(gamma_t n))``: one rejection test in round ``t`` (Lemma 18)."""
    eta = _validate.positive("eta", eta)
    n = _validate.integer("n", n, minimum=1)
    return max(eta / n, eta / (dqrs_gamma(t) * n))


def dqrs_fresh_epsilon(t: int, *, eta: float, n: int) -> float:
    """``2 eta t / n``: one fresh sample from ``Q^{t+1}`` in round ``t`` (Lemma 19 at ``t+1``)."""
    t, eta, _, n = _check(t, eta, 1, n)
    return 2 * eta * t / n


def dqrs_round_charges(t: int, *, eta: float, s: int, n: int) -> list[Charge]:
    """Round ``t`` of Algorithm 4: ``s`` rejection tests and ``s~_t`` fresh samples."""
    t, eta, s, n = _check(t, eta, s, n)
    return [
        Charge(REJECTION, PureDP(dqrs_rejection_epsilon(t, eta=eta, n=n)), count=s),
        Charge(
            FRESH,
            PureDP(dqrs_fresh_epsilon(t, eta=eta, n=n), bounded_range=True),
            count=dqrs_fresh_samples(t, eta=eta, s=s),
        ),
    ]


def dqrs_plan(*, eta: float, T: int, s: int, n: int) -> list[Charge]:
    """The charges of rounds ``1..T`` of DQRS (the initial sample ``S_1`` is uniform: free)."""
    T = _validate.integer("T", T, minimum=1)
    return [c for t in range(1, T + 1) for c in dqrs_round_charges(t, eta=eta, s=s, n=n)]


def dqrs_round_rho(t: int, *, eta: float, s: int, n: int) -> float:
    """``rho_t`` of round ``t`` of Algorithm 4 by Lemma 1 for both steps:
    ``s eps_rej^2 / 2 + s~_t (2 eta t / n)^2 / 2``."""
    charges = dqrs_round_charges(t, eta=eta, s=s, n=n)
    return ZCDPAccountant(bounded_range=False).rho(Composition(charges).totals())


def dqrs_round_rho_as_printed(t: int, *, eta: float, s: int, n: int) -> float:
    """``rho_t`` exactly as printed in the proof of Theorem 17:
    ``eta^2 s / (2 gamma_t^2 n^2) + 2 eta^2 (t-1)^2 s~_t / n^2`` with real
    ``s~_t = (2 gamma_t + 4 eta) s``. See the module docstring for why it undercounts."""
    t, eta, s, n = _check(t, eta, s, n)
    g = dqrs_gamma(t)
    return eta**2 * s / (2 * g**2 * n**2) + 2 * eta**2 * (t - 1) ** 2 * (2 * g + 4 * eta) * s / n**2


def dqrs_rho(*, eta: float, T: int, s: int, n: int, as_printed: bool = False) -> float:
    """``rho = sum_{t=1}^T rho_t`` (Lemma 3), by :func:`dqrs_round_rho` or, with
    ``as_printed``, by :func:`dqrs_round_rho_as_printed`."""
    T = _validate.integer("T", T, minimum=1)
    f = dqrs_round_rho_as_printed if as_printed else dqrs_round_rho
    return math.fsum(f(t, eta=eta, s=s, n=n) for t in range(1, T + 1))


def dqrs_max_rounds_as_printed(
    budget: Budget, *, eta: float, s: int, n: int, conversion: Conversion = "cks"
) -> int:
    """Largest ``T`` whose :func:`dqrs_rho` ``as_printed`` (the proof of Theorem 17's
    ``rho_t``) stays within the budget's ``rho`` (:func:`~dpquery.privacy.budget.budget_rho`
    by ``conversion``)."""
    _check(1, eta, s, n)
    limit = budget_rho(budget, conversion)

    def fits_printed(T: int) -> bool:
        return T == 0 or dqrs_rho(T=T, as_printed=True, eta=eta, s=s, n=n) <= limit

    return largest_integer(fits_printed, lower=0, upper=10**6)


def dqrs_max_rounds(
    budget: Budget, *, eta: float, s: int, n: int, accountant: Accountant | None = None
) -> int:
    """Largest ``T`` whose :func:`dqrs_plan` fits ``budget`` (``T + 1`` does not)."""
    _check(1, eta, s, n)
    return max_rounds(lambda t: dqrs_round_charges(t, eta=eta, s=s, n=n), budget, accountant)
