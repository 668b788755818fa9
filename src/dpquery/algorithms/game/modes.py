"""The parameter modes DualQuery and DQRS share (DualQuery, Section 4; Oracle-efficient,
Section 5): from ``(epsilon, delta)``, ``eta``, ``T``, ``s`` and ``alpha``, resolve

* theory: ``alpha`` alone: the paper's ``(eta, T, s)``; with ``epsilon`` they must fit it;
* explicit: ``eta, T, s`` and no ``epsilon``: the budget is what they cost (rounded up);
* budget: ``epsilon`` with ``eta`` (its default) and ``T`` or ``s``: the largest other one
  (``s`` defaults to its default when neither is given, and ``T`` is then the largest); with
  both, they must fit.

Each algorithm states its own charges, theory parameters and calibrations in a
:class:`MultiplicativeWeightsModes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict, Unpack

from dpquery.algorithms.parameters import budget_of, ceil_epsilon, check_parameters
from dpquery.errors import DPQueryError
from dpquery.privacy import Accountant, Budget, Charge, Composition, fits, spend


class ModeRequest(TypedDict, total=False):
    """What is asked of the modes (None or absent: not given): the budget ``epsilon``,
    ``delta``; the step ``eta``, the rounds ``T``, the samples per round ``s``; the target
    accuracy ``alpha`` and failure probability ``beta`` of theory mode."""

    epsilon: float | None
    delta: float | None
    eta: float | None
    T: int | None
    s: int | None
    alpha: float | None
    beta: float | None


@dataclass(frozen=True)
class MultiplicativeWeightsPlan:
    """Resolved ``eta``, ``T``, ``s`` of a run on ``n`` records, the budget its ledger
    enforces and the mode that resolved them."""

    eta: float
    T: int
    s: int
    n: int
    budget: Budget
    mode: str


@dataclass(frozen=True)
class MultiplicativeWeightsModes:
    """One algorithm's pieces: ``box`` names its algorithm box in errors; ``charges(eta, T,
    s)`` is everything a run charges; ``theory()`` the box's ``(eta, T, s)`` for the given
    ``alpha``; ``largest_s(budget, eta, T)`` and ``largest_T(budget, eta, s)`` the budget
    modes' calibrations; ``too_few`` says what a budget admitting fewer than 2 rounds admits."""

    box: str
    charges: Callable[[float, int, int], list[Charge]]
    theory: Callable[[float, float], tuple[float, int, int]]
    largest_s: Callable[[Budget, float, int], int]
    largest_T: Callable[[Budget, float, int], int]
    too_few: str
    default_eta: float
    default_s: int


Resolved = tuple[float, int, int, Budget, str]


def resolve_modes(
    modes: MultiplicativeWeightsModes,
    *,
    n: int,
    accountant: Accountant,
    **request: Unpack[ModeRequest],
) -> Resolved:
    """``(eta, T, s, budget, mode)`` by the modes of the module docstring."""
    unknown = sorted(set(request) - set(ModeRequest.__annotations__))
    if unknown:
        raise TypeError(
            f"unknown parameters {unknown}; expected {list(ModeRequest.__annotations__)}"
        )
    epsilon, delta = request.get("epsilon"), request.get("delta")
    eta, T, s, alpha = request.get("eta"), request.get("T"), request.get("s"), request.get("alpha")

    def cost(eta_: float, T_: int, s_: int) -> float:
        totals = Composition(modes.charges(eta_, T_, s_)).totals()
        return spend(totals, budget_of(1.0, delta), accountant)

    if alpha is not None:
        if eta is not None or T is not None or s is not None:
            raise DPQueryError("give either alpha (theory mode) or eta/T/s, not both")
        beta = request.get("beta")
        eta, T, s = modes.theory(alpha, 0.05 if beta is None else beta)
        needed = cost(eta, T, s)
        if epsilon is not None and needed > epsilon:
            raise DPQueryError(
                f"{modes.box}'s parameters for alpha={alpha} (T={T}, s={s}, eta={eta:g}) need "
                f"epsilon={needed:.4g} on n={n}, more than the budget {epsilon}"
            )
        return eta, T, s, budget_of(epsilon or ceil_epsilon(needed), delta), "theory"
    if epsilon is None:
        if eta is None or T is None or s is None:
            raise DPQueryError(
                "give a budget (epsilon, delta), or all of eta, T and s, or alpha (theory mode)"
            )
        check_parameters(eta, T, s)
        return eta, T, s, budget_of(ceil_epsilon(cost(eta, T, s)), delta), "explicit"
    return _budget_mode(modes, n, budget_of(epsilon, delta), eta, T, s, accountant, cost)


def _budget_mode(
    modes: MultiplicativeWeightsModes, n: int, budget: Budget, eta: float | None,
    T: int | None, s: int | None, accountant: Accountant,
    cost: Callable[[float, int, int], float],
) -> Resolved:  # fmt: skip
    eta = modes.default_eta if eta is None else eta
    if T is not None and s is not None:
        check_parameters(eta, T, s)
        if not fits(Composition(modes.charges(eta, T, s)).totals(), budget, accountant):
            raise DPQueryError(
                f"eta={eta:g}, T={T}, s={s} need epsilon={cost(eta, T, s):.4g} on n={n}, more "
                f"than the budget {budget.describe()}"
            )
        return eta, T, s, budget, "explicit"
    if T is not None:
        check_parameters(eta, T, 1)
        s = modes.largest_s(budget, eta, T)
        if s < 1:
            raise DPQueryError(f"no sample size fits {budget.describe()} with T={T}, eta={eta:g}")
        return eta, T, s, budget, "budget (largest s)"
    s = modes.default_s if s is None else s
    check_parameters(eta, 1, s)
    T = modes.largest_T(budget, eta, s)
    if T < 2:
        raise DPQueryError(
            f"{budget.describe()} admits {modes.too_few.format(T=T)} with eta={eta:g}, s={s}, "
            f"n={n}; lower eta or s"
        )
    return eta, T, s, budget, "budget (largest T)"
