"""Accountants: from the charges made so far to one privacy guarantee.

Each accountant reads :class:`~dpquery.privacy.composition.CompositionTotals` and answers in
the measures it can prove: ``epsilon`` at a ``delta`` (``delta = 0`` asks for pure DP) and,
for zCDP accountants, ``rho``. All of them are proved, so any of them may be quoted; the
default, :class:`Tightest`, quotes the smallest ``epsilon`` among them and names the one that
gave it.

* ``BasicComposition``: ``sum_i epsilon_i``, pure (DualQuery, Lemma 2.4, first part);
* ``AdvancedComposition(heterogeneous=False)``: all positive-cost invocations at the largest
  ``epsilon_i`` (DualQuery, Lemma 2.4 exactly);
* ``AdvancedComposition()``: each invocation at its own ``epsilon_i`` (Dwork, Rothblum and
  Vadhan 2010);
* ``ZCDPAccountant(bounded_range=False)``: ``epsilon^2 / 2`` per pure charge
  (Oracle-efficient, Lemmas 1-3);
* ``ZCDPAccountant()``: ``epsilon^2 / 8`` per bounded-range charge (Cesar and Rogers 2021).

zCDP accountants convert ``rho`` to ``(epsilon, delta)`` by Canonne-Kamath-Steinke
(``conversion="cks"``, the default) or by Oracle-efficient Lemma 2 (``"standard"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from dpquery.privacy import _validate
from dpquery.privacy.composition import (
    CompositionTotals,
    advanced_composition,
    advanced_composition_heterogeneous,
)
from dpquery.privacy.conversions import CONVERSIONS, Conversion, zcdp_to_epsilon
from dpquery.privacy.errors import AccountingError, PrivacyParameterError


@runtime_checkable
class Accountant(Protocol):
    """Turns composed charges into a guarantee; ``math.inf`` means "nothing finite proved"."""

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> str:
        """A short identifier, e.g. ``"zcdp-br-cks"``."""
        ...

    def epsilon(self, totals: CompositionTotals, delta: float) -> float:
        """``epsilon`` such that the charges are ``(epsilon, delta)``-DP."""
        ...

    def rho(self, totals: CompositionTotals) -> float:
        """``rho`` such that the charges are ``rho``-zCDP; raises if not a zCDP accountant."""
        ...


def _require_pure(name: str, totals: CompositionTotals) -> None:
    if not totals.all_pure:
        raise AccountingError(
            f"{name} measures pure-DP charges only; {totals.zcdp_invocations} charge(s) are "
            f"stated in zCDP (rho) — use a zCDP accountant"
        )


@dataclass(frozen=True)
class BasicComposition:
    """Pure ``epsilon = sum_i epsilon_i`` (DualQuery, Lemma 2.4, first part)."""

    @property
    def name(self) -> str:
        return "basic composition (pure epsilon; DualQuery Lemma 2.4)"

    @property
    def key(self) -> str:
        return "basic"

    def epsilon(self, totals: CompositionTotals, delta: float) -> float:
        _validate.delta("delta", delta)
        _require_pure(self.name, totals)
        return totals.epsilon_sum

    def rho(self, totals: CompositionTotals) -> float:
        raise AccountingError(f"{self.name} does not measure zCDP (rho)")


@dataclass(frozen=True)
class AdvancedComposition:
    """Advanced composition of pure-DP charges; also never worse than basic composition
    (Lemma 2.4 proves both, so the smaller is quoted).

    ``heterogeneous=False`` is DualQuery Lemma 2.4 exactly: the ``k`` invocations with positive
    cost are each charged the largest ``epsilon'`` among them. ``heterogeneous=True`` uses each
    invocation's own ``epsilon_i`` (see
    :func:`~dpquery.privacy.composition.advanced_composition_heterogeneous`).
    """

    heterogeneous: bool = True

    @property
    def key(self) -> str:
        return "advanced-heterogeneous" if self.heterogeneous else "advanced-lemma-2.4"

    @property
    def name(self) -> str:
        if self.heterogeneous:
            return "advanced composition, heterogeneous (Dwork-Rothblum-Vadhan 2010)"
        return "advanced composition (DualQuery Lemma 2.4, every charge at the largest epsilon)"

    def epsilon(self, totals: CompositionTotals, delta: float) -> float:
        d = _validate.delta("delta", delta)
        _require_pure(self.name, totals)
        if d == 0 or totals.positive_pure_invocations == 0:
            return totals.epsilon_sum
        if self.heterogeneous:
            adv = advanced_composition_heterogeneous(
                totals.epsilon_sq_sum, totals.epsilon_expm1_sum, d
            )
        elif totals.epsilon_max > 700:  # e^epsilon' overflows; the bound is useless anyway
            adv = math.inf
        else:
            adv = advanced_composition(totals.epsilon_max, totals.positive_pure_invocations, d)
        return min(adv, totals.epsilon_sum)

    def rho(self, totals: CompositionTotals) -> float:
        raise AccountingError(f"{self.name} does not measure zCDP (rho)")


@dataclass(frozen=True)
class ZCDPAccountant:
    """zCDP: pure charges become ``epsilon^2 / 2`` (Oracle-efficient, Lemma 1) or, when marked
    bounded range and ``bounded_range=True``, ``epsilon^2 / 8`` (Cesar and Rogers 2021); zCDP
    charges add (Lemma 3); ``(epsilon, delta)`` by the named ``conversion``."""

    bounded_range: bool = True
    conversion: Conversion = "cks"

    def __post_init__(self) -> None:
        if self.conversion not in CONVERSIONS:
            raise PrivacyParameterError(
                f"conversion must be one of {CONVERSIONS}; got {self.conversion!r}"
            )

    @property
    def key(self) -> str:
        return f"zcdp-{'br' if self.bounded_range else 'lemma1'}-{self.conversion}"

    @property
    def rho_name(self) -> str:
        """The name of the rule a ``rho`` guarantee rests on: the per-charge conversion to zCDP
        only (the ``(epsilon, delta)`` conversion plays no part in ``rho``)."""
        per = (
            "exponential mechanism at epsilon^2/8 (bounded range, Cesar-Rogers)"
            if self.bounded_range
            else "epsilon-DP at epsilon^2/2 (Oracle-efficient Lemma 1)"
        )
        return f"zCDP, {per}"

    @property
    def name(self) -> str:
        conv = (
            "Canonne-Kamath-Steinke conversion"
            if self.conversion == "cks"
            else "conversion rho + 2 sqrt(rho ln(1/delta)) (Oracle-efficient Lemma 2)"
        )
        return f"{self.rho_name}, {conv}"

    def rho(self, totals: CompositionTotals) -> float:
        pure = totals.rho_bounded_range if self.bounded_range else totals.rho_lemma1
        return pure + totals.rho_native

    def epsilon(self, totals: CompositionTotals, delta: float) -> float:
        d = _validate.delta("delta", delta)
        rho = self.rho(totals)
        if rho == 0:
            return 0.0
        if d == 0:
            return math.inf  # zCDP proves no pure guarantee
        return zcdp_to_epsilon(rho, d, self.conversion)


def all_accountants() -> tuple[Accountant, ...]:
    """Every accountant above, loosest family first; the members of :class:`Tightest`."""
    return (
        BasicComposition(),
        AdvancedComposition(heterogeneous=False),
        AdvancedComposition(heterogeneous=True),
        ZCDPAccountant(bounded_range=False, conversion="standard"),
        ZCDPAccountant(bounded_range=False, conversion="cks"),
        ZCDPAccountant(bounded_range=True, conversion="standard"),
        ZCDPAccountant(bounded_range=True, conversion="cks"),
    )


@dataclass(frozen=True)
class Tightest:
    """The smallest guarantee among ``members`` (all proved, so their minimum is too).

    The default accountant. :meth:`best` names the member that achieved the minimum.
    """

    members: Sequence[Accountant] = field(default_factory=all_accountants)

    @property
    def key(self) -> str:
        return "tightest"

    @property
    def name(self) -> str:
        return f"tightest proved (minimum over {len(self.members)} accountants)"

    def best(self, totals: CompositionTotals, delta: float) -> tuple[float, Accountant]:
        """``(epsilon, member)`` with the smallest ``epsilon`` at ``delta``."""
        best: tuple[float, Accountant] | None = None
        for member in self.members:
            try:
                eps = member.epsilon(totals, delta)
            except AccountingError:
                continue
            if best is None or eps < best[0]:
                best = (eps, member)
        if best is None:
            raise AccountingError(f"no accountant among {self.name} measures these charges")
        return best

    def epsilon(self, totals: CompositionTotals, delta: float) -> float:
        return self.best(totals, delta)[0]

    def best_rho(self, totals: CompositionTotals) -> tuple[float, Accountant]:
        found = [(m.rho(totals), m) for m in self.members if isinstance(m, ZCDPAccountant)]
        if not found:
            raise AccountingError(f"no zCDP accountant among {self.name}")
        return min(found, key=lambda pair: pair[0])

    def rho(self, totals: CompositionTotals) -> float:
        return self.best_rho(totals)[0]


def default_accountant() -> Accountant:
    """The tightest proved: :class:`Tightest` over :func:`all_accountants`."""
    return Tightest()


def accountant_for(totals: CompositionTotals, delta: float, accountant: Accountant) -> str:
    """The name of the accountant that actually produced the guarantee (resolves Tightest)."""
    if isinstance(accountant, Tightest):
        return accountant.best(totals, delta)[1].name
    return accountant.name
