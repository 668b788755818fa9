"""FEM's parameters and budget (Oracle-efficient, Algorithm 1 and Theorem 8).

Given a budget, the largest ``T`` for an ``epsilon_0`` (or the largest ``epsilon_0`` for a
``T``: ``rho_0 = rho / T``); the authors' scaling ``epsilon_0 = c sqrt(epsilon)``,
``eta = noise_multiple sqrt(T)``; or explicit ``(T, epsilon_0)``. ``docs/fem.md`` documents
the defaults and how they were measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from dpquery.algorithms.parameters import budget_of, ceil_epsilon, positive, positive_int
from dpquery.errors import DPQueryError
from dpquery.privacy import Accountant, Budget, Charge, Composition, ZCDPAccountant, spend
from dpquery.privacy.conversions import Conversion
from dpquery.privacy.delta import default_delta
from dpquery.privacy.fem import fem_max_epsilon0, fem_max_rounds, fem_plan

Accounting = Literal["zcdp", "bounded-range"]
ACCOUNTINGS: tuple[Accounting, ...] = ("zcdp", "bounded-range")

# The authors' tuned Adult values (c, noise_multiple, s): epsilon_0 = c sqrt(epsilon),
# eta = noise_multiple sqrt(T), s samples per round (FEM repository, 64 marginals).
AUTHORS_ADULT: dict[str, tuple[float, float, int]] = {
    "authors-adult-3way": (0.008, 0.16, 50),
    "authors-adult-5way": (0.010, 0.16, 50),
}
# The fixed default, chosen on adult-pgm 3-way marginals (64 marginals, 3 runs at each of the
# six epsilons of Figure 1; docs/family-results.md): c = 0.008 with bounded-range accounting
# was best at every epsilon. sepFEM's Laplace perturbation wants half FEM's noise.
DEFAULT_C = 0.008
DEFAULT_NOISE_MULTIPLE = 0.16
SEPFEM_NOISE_MULTIPLE = 0.08
DEFAULT_SAMPLES = 50
DEFAULT_ACCOUNTING: Accounting = "bounded-range"
# The data player's oracle: the shared heuristic with a smaller iteration budget. FEM's
# problems have only t clauses against a perturbation on every bit; on adult-pgm one restart
# of 50 kicks matched CP-SAT's certified optimum (docs/fem.md) at ~1/15 of the default cost.
DEFAULT_ORACLE_OPTIONS: dict[str, Any] = {"restarts": 1, "kicks": 50}


@dataclass(frozen=True)
class FEMPlan:
    """Resolved parameters of a run and the budget its ledger enforces."""

    T: int
    epsilon0: float
    eta: float
    s: int
    budget: Budget
    mode: str
    accounting: Accounting

    def charges(self) -> list[Charge]:
        """Everything the run will charge: ``T`` exponential mechanisms at ``epsilon_0``."""
        return fem_plan(T=self.T, epsilon0=self.epsilon0)


def fem_accountant(
    accounting: Accounting = DEFAULT_ACCOUNTING, conversion: Conversion = "cks"
) -> Accountant:
    """The zCDP accountant of a run: ``"zcdp"`` charges each exponential mechanism
    ``epsilon_0^2 / 2`` (Lemma 4, as Theorem 8 does, so ``epsilon_0 = sqrt(2 rho_0)``);
    ``"bounded-range"`` charges ``epsilon_0^2 / 8`` (Cesar and Rogers 2021: the exponential
    mechanism is ``epsilon_0``-bounded range), which allows 4 times as many rounds. Both
    convert to ``(epsilon, delta)`` by ``conversion`` (default Canonne-Kamath-Steinke,
    tighter than Lemma 2's ``rho + 2 sqrt(rho ln(1/delta))``, ``"standard"``)."""
    if accounting not in ACCOUNTINGS:
        raise DPQueryError(f"accounting must be one of {ACCOUNTINGS}, got {accounting!r}")
    return ZCDPAccountant(bounded_range=accounting == "bounded-range", conversion=conversion)


def plan_fem(
    *,
    n: int,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    epsilon0: float | None = None,
    T: int | None = None,
    eta: float | None = None,
    c: float | None = None,
    noise_multiple: float | None = None,
    s: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    accountant: Accountant | None = None,
) -> FEMPlan:
    """Resolve FEM's parameters (Oracle-efficient, Algorithm 1 and Theorem 8).

    The budget is ``(epsilon, delta)`` (``delta`` defaults to ``1/n^2``, as in Section 6) or
    ``rho`` (zCDP). Then:

    * ``epsilon0`` given: the largest ``T`` whose ``T`` rounds fit ("budget (largest T)");
    * ``T`` given: the largest ``epsilon_0`` that fits, i.e. ``rho_0 = rho / T`` and
      ``epsilon_0 = sqrt(2 rho_0)`` (``sqrt(8 rho_0)`` bounded range) ("budget (rho/T)");
    * neither: the authors' scaling ``epsilon_0 = c sqrt(epsilon)`` (``c`` default
      :data:`DEFAULT_C`) and the largest ``T`` ("scaled");
    * no budget: ``T`` and ``epsilon0`` explicit, the budget is what they cost ("explicit").

    ``eta`` (the perturbation scale) defaults to ``noise_multiple sqrt(T)`` (the authors'
    implementation; ``noise_multiple`` default :data:`DEFAULT_NOISE_MULTIPLE`).
    """
    acc = accountant if accountant is not None else fem_accountant(accounting)
    s = DEFAULT_SAMPLES if s is None else positive_int("s", s)
    if eta is not None and noise_multiple is not None:
        raise DPQueryError("give eta or noise_multiple, not both")
    if epsilon is None and rho is None:
        if T is None or epsilon0 is None:
            raise DPQueryError("give a budget (epsilon, delta or rho), or both T and epsilon0")
        T, eps0 = positive_int("T", T), positive("epsilon0", epsilon0)
        cost = Composition(fem_plan(T=T, epsilon0=eps0)).totals()
        d = default_delta(n) if delta is None else delta
        budget = Budget.approx(ceil_epsilon(spend(cost, Budget.approx(1.0, d), acc)), d)
        return _finish(T, eps0, eta, noise_multiple, s, budget, "explicit", accounting)
    budget = budget_of(epsilon, delta, rho, default_delta=default_delta(n))
    if c is not None and (epsilon0 is not None or T is not None):
        raise DPQueryError("c sets epsilon0 = c sqrt(epsilon); give c or epsilon0 or T")
    T, eps0, mode = _rounds(budget, T, epsilon0, c, acc)
    return _finish(T, eps0, eta, noise_multiple, s, budget, mode, accounting)


def _rounds(
    budget: Budget, T: int | None, epsilon0: float | None, c: float | None, acc: Accountant
) -> tuple[int, float, str]:
    """``T``, ``epsilon_0`` and the mode, for a budget (:func:`plan_fem`'s modes)."""
    if T is not None and epsilon0 is not None:
        T, eps0 = positive_int("T", T), positive("epsilon0", epsilon0)
        needed = spend(Composition(fem_plan(T=T, epsilon0=eps0)).totals(), budget, acc)
        if needed > budget.limit:
            raise DPQueryError(
                f"T={T} rounds at epsilon0={eps0:g} spend {needed:.6g}, more than the budget "
                f"{budget.describe()}"
            )
        return T, eps0, "explicit"
    if T is not None:
        T = positive_int("T", T)
        eps0 = fem_max_epsilon0(budget, T=T, accountant=acc)
        if not eps0 > 0:
            raise DPQueryError(f"no epsilon0 fits {budget.describe()} with T={T}")
        return T, eps0, "budget (rho/T)"
    mode = "budget (largest T)"
    if epsilon0 is None:
        if budget.epsilon is None:
            raise DPQueryError("the scaling epsilon0 = c sqrt(epsilon) needs an epsilon budget")
        epsilon0 = (DEFAULT_C if c is None else positive("c", c)) * math.sqrt(budget.epsilon)
        mode = "scaled (epsilon0 = c sqrt(epsilon))"
    eps0 = positive("epsilon0", epsilon0)
    T = fem_max_rounds(budget, epsilon0=eps0, accountant=acc)
    if T < 1:
        raise DPQueryError(f"{budget.describe()} admits no round at epsilon0={eps0:g}")
    return T, eps0, mode


def _finish(
    T: int, eps0: float, eta: float | None, noise_multiple: float | None, s: int,
    budget: Budget, mode: str, accounting: Accounting,
) -> FEMPlan:  # fmt: skip
    if eta is None:
        m = DEFAULT_NOISE_MULTIPLE if noise_multiple is None else noise_multiple
        eta = positive("noise_multiple", m) * math.sqrt(T)
    return FEMPlan(T, eps0, positive("eta", eta), s, budget, mode, accounting)
