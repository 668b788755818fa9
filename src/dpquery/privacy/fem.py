"""The privacy cost of FEM and sepFEM (Oracle-efficient, Algorithm 1 and Theorem 8).

Each of the ``T`` rounds runs one exponential mechanism ``M_E(D, S_t, Q, epsilon_0)`` on the
score ``S_t(D, q) = q(D) - q(D^t)`` of sensitivity ``1/n``; the follow-the-perturbed-leader
data player never reads ``D``. Algorithm 1 sets ``rho_0 = rho / T`` and
``epsilon_0 = sqrt(2 rho_0)``, so each round is ``rho_0``-zCDP by Lemma 4 and ``T`` rounds are
``rho``-zCDP by Lemma 3 (Theorem 8). As a bounded-range mechanism each round is in fact
``epsilon_0^2 / 8``-zCDP (Cesar and Rogers 2021), which allows ``epsilon_0 = sqrt(8 rho_0)``.
The costs do not depend on ``n``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpquery.privacy import _validate
from dpquery.privacy.accountants import Accountant, default_accountant
from dpquery.privacy.budget import Budget, budget_rho, fits
from dpquery.privacy.calibration import largest_float, max_rounds
from dpquery.privacy.composition import Composition
from dpquery.privacy.conversions import Conversion
from dpquery.privacy.costs import Charge, PureDP

MECHANISM = "FEM query selection (exponential mechanism)"


def fem_round_rho(rho: float, T: int) -> float:
    """``rho_0 = rho / T`` (Oracle-efficient, Algorithm 1, "Initialize"), rounded down if needed
    so that ``T`` rounds of ``rho_0`` sum to at most ``rho`` exactly."""
    r = _validate.positive("rho", rho)
    T = _validate.integer("T", T, minimum=1)
    rho0 = r / T
    while Fraction(rho0) * T > Fraction(r):
        rho0 = math.nextafter(rho0, 0.0)
    return rho0


def fem_round_epsilon(rho0: float, *, bounded_range: bool = False) -> float:
    """``epsilon_0`` whose exponential mechanism is ``rho0``-zCDP: ``sqrt(2 rho0)`` (Lemma 4,
    the paper's choice) or ``sqrt(8 rho0)`` (bounded range); rounded down if needed so that
    the zCDP cost computed from ``epsilon_0`` does not exceed ``rho0``."""
    r = _validate.positive("rho0", rho0)
    c = 8 if bounded_range else 2
    eps0 = math.sqrt(c * r)
    while eps0 * eps0 / c > r:
        eps0 = math.nextafter(eps0, 0.0)
    return eps0


def fem_algorithm_1_round(budget: Budget, T: int, conversion: Conversion = "cks") -> float:
    """Algorithm 1's ``rho_0 = rho / T`` for a budget (its ``rho``, or the one an
    ``(epsilon, delta)`` budget converts to by ``conversion``; Theorem 8)."""
    return fem_round_rho(budget_rho(budget, conversion), T)


def fem_round_charge(*, epsilon0: float) -> Charge:
    """One round: an exponential mechanism with parameter ``epsilon_0`` (bounded range)."""
    return Charge(MECHANISM, PureDP(_validate.positive("epsilon0", epsilon0), bounded_range=True))


def fem_plan(*, T: int, epsilon0: float) -> list[Charge]:
    """The charges of ``T`` rounds of FEM (or sepFEM, Algorithm 3: the same query player)."""
    T = _validate.integer("T", T, minimum=1)
    return [Charge(MECHANISM, fem_round_charge(epsilon0=epsilon0).cost, count=T)]


def fem_rho(*, T: int, epsilon0: float, bounded_range: bool = False) -> float:
    """``T epsilon_0^2 / 2`` (Oracle-efficient, Theorem 8 via Lemmas 3-4) or ``T epsilon_0^2 / 8``
    (bounded range)."""
    T = _validate.integer("T", T, minimum=1)
    e = _validate.positive("epsilon0", epsilon0)
    return T * e * e / (8 if bounded_range else 2)


def fem_max_rounds(budget: Budget, *, epsilon0: float, accountant: Accountant | None = None) -> int:
    """Largest ``T`` such that ``T`` rounds at ``epsilon_0`` fit ``budget``."""
    charge = fem_round_charge(epsilon0=epsilon0)
    return max_rounds(lambda t: [charge], budget, accountant)


def fem_max_epsilon0(budget: Budget, *, T: int, accountant: Accountant | None = None) -> float:
    """Largest float ``epsilon_0`` such that ``T`` rounds fit ``budget`` (the next float fails)."""
    acc = accountant if accountant is not None else default_accountant()
    T = _validate.integer("T", T, minimum=1)

    def passes(e: float) -> bool:
        return e == 0 or fits(Composition(fem_plan(T=T, epsilon0=e)).totals(), budget, acc)

    return largest_float(passes, lower=0.0, upper=1e6)
