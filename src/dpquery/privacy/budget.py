"""A privacy budget in one measure, and what a set of charges spends of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dpquery.privacy import _validate
from dpquery.privacy.accountants import Accountant
from dpquery.privacy.composition import Composition, CompositionTotals
from dpquery.privacy.conversions import Conversion, zcdp_rho_for
from dpquery.privacy.costs import Charge, PureDP
from dpquery.privacy.errors import AccountingError, PrivacyParameterError

Measure = Literal["pure", "approx", "zcdp"]


@dataclass(frozen=True)
class Budget:
    """Either ``epsilon`` (with ``delta = 0``: pure DP; ``delta > 0``: approximate DP) or
    ``rho`` (zCDP). Use :meth:`pure`, :meth:`approx` or :meth:`zcdp` to build one."""

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self) -> None:
        if (self.epsilon is None) == (self.rho is None):
            raise PrivacyParameterError(
                f"a budget needs exactly one of epsilon or rho; got epsilon={self.epsilon!r}, "
                f"rho={self.rho!r}"
            )
        object.__setattr__(self, "delta", _validate.delta("delta", self.delta))
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", _validate.positive("epsilon", self.epsilon))
        else:
            object.__setattr__(self, "rho", _validate.positive("rho", self.rho))
            if self.delta != 0:
                raise PrivacyParameterError(
                    f"a rho (zCDP) budget takes no delta; got delta={self.delta!r}"
                )

    @classmethod
    def pure(cls, epsilon: float) -> Budget:
        return cls(epsilon=epsilon)

    @classmethod
    def approx(cls, epsilon: float, delta: float) -> Budget:
        _validate.open_unit("delta", delta)
        return cls(epsilon=epsilon, delta=delta)

    @classmethod
    def zcdp(cls, rho: float) -> Budget:
        return cls(rho=rho)

    @property
    def measure(self) -> Measure:
        if self.rho is not None:
            return "zcdp"
        return "approx" if self.delta > 0 else "pure"

    @property
    def limit(self) -> float:
        """The number spend is compared with: ``rho`` for zCDP, ``epsilon`` otherwise."""
        value = self.rho if self.rho is not None else self.epsilon
        assert value is not None
        return value

    def describe(self) -> str:
        if self.measure == "zcdp":
            return f"rho={self.limit:.6g} (zCDP)"
        if self.measure == "pure":
            return f"epsilon={self.limit:.6g} (pure DP)"
        return f"(epsilon={self.limit:.6g}, delta={self.delta:.3g})-DP"

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.measure,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
        }


def budget_rho(budget: Budget, conversion: Conversion = "cks") -> float:
    """The zCDP ``rho`` a budget allows: its own ``rho``, or the largest ``rho`` whose
    ``conversion`` to ``(epsilon, delta)`` stays within an approximate budget
    (:func:`~dpquery.privacy.conversions.zcdp_rho_for`). A pure budget has none."""
    if budget.measure == "zcdp":
        return budget.limit
    if budget.measure == "pure":
        raise PrivacyParameterError(f"{budget.describe()} converts to no zCDP rho; give delta > 0")
    return zcdp_rho_for(budget.limit, budget.delta, conversion)


def spend(totals: CompositionTotals, budget: Budget, accountant: Accountant) -> float:
    """What ``totals`` spend in ``budget``'s measure under ``accountant``."""
    if budget.measure == "zcdp":
        return accountant.rho(totals)
    return accountant.epsilon(totals, budget.delta)


def fits(totals: CompositionTotals, budget: Budget, accountant: Accountant) -> bool:
    """Whether ``totals`` stay within ``budget`` (the ledger's own test)."""
    return spend(totals, budget, accountant) <= budget.limit


def require_measurable(budget: Budget, accountant: Accountant) -> None:
    """Raise :class:`PrivacyParameterError` unless ``accountant`` can certify ``budget``'s
    measure (zCDP proves no pure DP; composition theorems prove no ``rho``)."""
    # One tiny pure charge must have a finite spend.
    probe = Composition([Charge("probe", PureDP(1e-3))]).totals()
    try:
        value = spend(probe, budget, accountant)
    except AccountingError as exc:
        raise PrivacyParameterError(
            f"{accountant.name} cannot certify a budget of {budget.describe()}: {exc}"
        ) from None
    if not value < float("inf"):
        raise PrivacyParameterError(
            f"{accountant.name} cannot certify a budget of {budget.describe()}; give delta > 0 "
            f"or use basic composition"
        )
