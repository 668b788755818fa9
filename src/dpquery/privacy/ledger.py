"""The ledger every privacy-spending call writes to before it draws noise.

A :class:`Ledger` holds a :class:`~dpquery.privacy.budget.Budget` and an accountant. A mechanism
calls :meth:`Ledger.charge` with its cost *before* it draws: if the new total would exceed the
budget, :class:`~dpquery.privacy.errors.BudgetExceededError` is raised, nothing is recorded
and no noise is drawn; otherwise the charge is recorded and cannot be taken back. There is no
refund: if an oracle times out or an exception is raised after a charge, the charge stays, which
is correct (noise may already have been drawn from the data). An algorithm can check its whole
plan first with :meth:`Ledger.check`, so it fails before touching data rather than mid-run;
totals are exact sums (:mod:`dpquery.privacy.composition`), so a plan that passes ``check`` is
accepted charge by charge.

A pipeline of releases composes on one ledger: :meth:`Ledger.child` gives a stage its share
of the budget as a ledger of its own, whose every charge is also made on the parent (named
``"<stage>: <mechanism>"``) at the moment it is made, and only if both budgets admit it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dpquery.privacy import _validate
from dpquery.privacy.accountants import Accountant, Tightest, accountant_for, default_accountant
from dpquery.privacy.budget import Budget, require_measurable, spend
from dpquery.privacy.composition import Composition, CompositionTotals
from dpquery.privacy.costs import ZCDP, Charge, Cost
from dpquery.privacy.errors import AccountingError, BudgetExceededError

NEIGHBOURING = "bounded DP (replace one record), n public"
"""The neighbouring relation a ledger's own report states: datasets of the same, public size
``n`` that differ in one record (Dwork and Roth 2014, Section 2.3; DualQuery and
Oracle-efficient both prove their theorems for it). A release states its own relation
(:meth:`dpquery.algorithms.release.Release.privacy`, :mod:`dpquery.privacy.neighbours`)."""


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded charge and the ledger's spend (in the budget's measure) after it."""

    index: int
    charge: Charge
    spent_after: float


@dataclass(frozen=True)
class MechanismSpend:
    """What one mechanism spent, in its own measure(s)."""

    mechanism: str
    invocations: int
    epsilon: float | None  # sum of pure-DP costs, None if it made no pure-DP charge
    rho: float | None  # sum of zCDP costs, None if it made no zCDP charge

    def to_dict(self) -> dict[str, object]:
        return {
            "mechanism": self.mechanism,
            "invocations": self.invocations,
            "epsilon": self.epsilon,
            "rho": self.rho,
        }


SEEDED = "seeded: does not hold against anyone who knows the seed"
"""The qualification of a guarantee whose noise came from a seeded, predictable generator:
whoever knows the seed can recompute the noise and subtract it."""
NOT_PRIVATE = "NOT PRIVATE: the domain was read from the private data"
"""The verdict on a release whose domain was read from the data (``infer_domain``): the
domain itself (the values present, the ranges) is published without any privacy."""


@dataclass(frozen=True)
class Guarantee:
    """A guarantee in one measure and the accountant that proved it; ``seeded`` when the
    noise came from a seeded generator (:data:`SEEDED`), ``not_private`` when the domain was
    read from the private data (:data:`NOT_PRIVATE`: then the mechanisms' accounting is no
    guarantee at all); ``neighbours`` the relation it is stated for, when known (a release's:
    :mod:`dpquery.privacy.neighbours`)."""

    measure: str  # "pure", "approx" or "zcdp"
    accountant: str
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None
    seeded: bool = False
    not_private: bool = False
    neighbours: str | None = None

    @classmethod
    def from_dict(cls, obj: dict[str, object]) -> Guarantee:
        """The guarantee :meth:`to_dict` wrote (a report's ``"inf"`` back to infinity)."""

        def number(key: str) -> float | None:
            v = obj.get(key)
            return math.inf if v == "inf" else None if v is None else float(v)  # type: ignore[arg-type]

        return cls(str(obj["measure"]), str(obj["accountant"]), number("epsilon"),
                   number("delta"), number("rho"), bool(obj.get("seeded", False)),
                   bool(obj.get("not_private", False)),
                   None if obj.get("neighbours") is None else str(obj["neighbours"]))  # fmt: skip

    def describe(self) -> str:
        """The one printed form of a guarantee: its value(s), the neighbouring relation (when
        known) and the accountant, qualified when the noise was seeded, and NOT PRIVATE first
        when the domain was read from the data."""
        if self.measure == "zcdp":
            value = f"rho={self.rho:.6g}"
        elif self.measure == "pure":
            value = f"epsilon={self.epsilon:.6g}"
        else:
            value = f"epsilon={self.epsilon:.6g}, delta={self.delta:.3g}"
        if self.neighbours is not None:
            value += f" for {self.neighbours} neighbours"
        text = f"{value}  [{self.accountant}]"
        if self.seeded:
            text += f"; {SEEDED}"
        if self.not_private:
            text = f"{NOT_PRIVATE} (accounted as {text}, which would hold for a public domain)"
        return text

    def to_dict(self) -> dict[str, object]:
        """The guarantee as JSON; ``seeded`` and ``not_private`` only when they are set."""
        out: dict[str, object] = {
            "measure": self.measure,
            "accountant": self.accountant,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
        }
        if self.seeded:
            out["seeded"] = True
        if self.not_private:
            out["not_private"] = True
        if self.neighbours is not None:
            out["neighbours"] = self.neighbours
        return out


@dataclass(frozen=True)
class LedgerReport:
    """Spend per mechanism and the guarantee in every measure asked for."""

    budget: Budget
    accountant: str
    spent: float
    remaining: float
    charges: int
    per_mechanism: tuple[MechanismSpend, ...]
    guarantees: tuple[Guarantee, ...]

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable dict (``math.inf`` becomes the string ``"inf"``)."""

        def clean(x: object) -> object:
            return "inf" if isinstance(x, float) and math.isinf(x) else x

        return {
            "neighbouring": NEIGHBOURING,
            "budget": self.budget.to_dict(),
            "accountant": self.accountant,
            "spent": clean(self.spent),
            "remaining": clean(self.remaining),
            "charges": self.charges,
            "per_mechanism": [m.to_dict() for m in self.per_mechanism],
            "guarantees": [{k: clean(v) for k, v in g.to_dict().items()} for g in self.guarantees],
        }


class Ledger:
    """Records every charge against ``budget`` under ``accountant`` (default: tightest proved).

    >>> ledger = Ledger(Budget.approx(1.0, 1e-6))
    >>> entry = ledger.charge("Laplace", PureDP(0.25))
    >>> ledger.spent <= 0.25
    True
    """

    def __init__(
        self,
        budget: Budget,
        accountant: Accountant | None = None,
        *,
        parent: Ledger | None = None,
        stage: str = "",
    ) -> None:
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget; got {budget!r}")
        self._budget = budget
        self._parent, self._stage = parent, stage
        if accountant is None:
            accountant = parent.accountant if parent is not None else default_accountant()
        self._accountant = accountant
        if not isinstance(self._accountant, Accountant):
            raise TypeError(f"accountant must be an Accountant; got {accountant!r}")
        require_measurable(budget, self._accountant)
        self._composition = Composition()
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()

    def child(self, budget: Budget, stage: str, accountant: Accountant | None = None) -> Ledger:
        """A ledger for one stage of a pipeline: its own ``budget`` (a share of this one) and
        accountant (default: this ledger's); each of its charges is made here too, as
        ``"<stage>: <mechanism>"``, before the stage draws, and only if both budgets admit it."""
        return Ledger(budget, accountant, parent=self, stage=stage)

    @property
    def parent(self) -> Ledger | None:
        return self._parent

    def _upward(self, charges: Sequence[Charge]) -> list[Charge]:
        return [Charge(f"{self._stage}: {c.mechanism}", c.cost, c.count) for c in charges]

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def accountant(self) -> Accountant:
        return self._accountant

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._entries)

    @property
    def totals(self) -> CompositionTotals:
        return self._composition.totals()

    @property
    def spent(self) -> float:
        """Spend so far, in the budget's measure (``epsilon`` at its ``delta``, or ``rho``)."""
        return spend(self.totals, self._budget, self._accountant)

    @property
    def remaining(self) -> float:
        return max(0.0, self._budget.limit - self.spent)

    def _try(self, composition: Composition, charges: Sequence[Charge]) -> float:
        total = spend(composition.totals(), self._budget, self._accountant)
        what = ", ".join(c.describe() for c in charges[:3])
        if len(charges) > 3:
            what += f", ... ({len(charges)} charges)"
        if math.isinf(total):
            raise AccountingError(
                f"{self._accountant.name} proves no finite guarantee of the form "
                f"{self._budget.describe()} for {what} (e.g. a zCDP cost against a pure budget); "
                f"nothing was charged"
            )
        if not total <= self._budget.limit:
            raise BudgetExceededError(
                f"charging {what} would spend {total:.6g} of a budget of "
                f"{self._budget.describe()} (already spent {self.spent:.6g}) under "
                f"{self._accountant.name}; nothing was charged"
            )
        return total

    def check(self, charges: Iterable[Charge]) -> float:
        """The spend if ``charges`` were all made now; raises
        :class:`BudgetExceededError` if they do not fit. Records nothing."""
        plan = list(charges)
        with self._lock:
            trial = self._composition.copy()
            for charge in plan:
                trial.add(charge)
            total = self._try(trial, plan)
        if self._parent is not None:
            self._parent.check(self._upward(plan))
        return total

    def charge(self, mechanism: str, cost: Cost, *, count: int = 1) -> LedgerEntry:
        """Record ``count`` invocations of ``mechanism`` at ``cost`` each, before any noise is
        drawn; raises :class:`BudgetExceededError` (recording nothing) if over budget."""
        entry = Charge(mechanism, cost, count)
        with self._lock:
            trial = self._composition.copy()
            trial.add(entry)
            total = self._try(trial, [entry])
            if self._parent is not None:  # raises, recording nothing here, if over its budget
                (up,) = self._upward([entry])
                self._parent.charge(up.mechanism, up.cost, count=up.count)
            self._composition = trial
            recorded = LedgerEntry(len(self._entries), entry, total)
            self._entries.append(recorded)
            return recorded

    def report(self, deltas: Sequence[float] = ()) -> LedgerReport:
        """Spend per mechanism, and the guarantee as pure ``epsilon`` (if proved), as ``rho``
        (if the accountant measures zCDP) and as ``(epsilon, delta)`` at the budget's delta and
        at every delta in ``deltas``; each names the accountant that proved it."""
        asked = [_validate.open_unit("delta", d) for d in deltas]
        with self._lock:
            totals = self._composition.totals()
            entries = list(self._entries)
        acc = self._accountant
        guarantees: list[Guarantee] = []
        try:
            pure = acc.epsilon(totals, 0.0)
        except AccountingError:
            pure = math.inf
        if math.isfinite(pure):
            guarantees.append(Guarantee("pure", accountant_for(totals, 0.0, acc), epsilon=pure))
        try:
            if isinstance(acc, Tightest):
                rho, member = acc.best_rho(totals)
                guarantees.append(Guarantee("zcdp", _rho_name(member), rho=rho))
            else:
                guarantees.append(Guarantee("zcdp", _rho_name(acc), rho=acc.rho(totals)))
        except AccountingError:
            pass
        budget_delta = [self._budget.delta] if self._budget.measure == "approx" else []
        for d in dict.fromkeys(budget_delta + asked):
            guarantees.append(
                Guarantee(
                    "approx",
                    accountant_for(totals, d, acc),
                    epsilon=acc.epsilon(totals, d),
                    delta=d,
                )
            )
        spent = spend(totals, self._budget, acc)
        return LedgerReport(
            budget=self._budget,
            accountant=acc.name,
            spent=spent,
            remaining=max(0.0, self._budget.limit - spent),
            charges=len(entries),
            per_mechanism=_per_mechanism(entries),
            guarantees=tuple(guarantees),
        )


def _rho_name(accountant: Accountant) -> str:
    # A rho guarantee names the rule that produced rho, not an (epsilon, delta) conversion.
    return str(getattr(accountant, "rho_name", accountant.name))


def _per_mechanism(entries: Sequence[LedgerEntry]) -> tuple[MechanismSpend, ...]:
    eps: dict[str, list[float]] = {}
    rho: dict[str, list[float]] = {}
    calls: dict[str, int] = {}
    for e in entries:
        c = e.charge
        calls[c.mechanism] = calls.get(c.mechanism, 0) + c.count
        if isinstance(c.cost, ZCDP):
            rho.setdefault(c.mechanism, []).append(c.count * c.cost.rho)
        else:
            eps.setdefault(c.mechanism, []).append(c.count * c.cost.epsilon)
    return tuple(
        MechanismSpend(
            name,
            n,
            math.fsum(eps[name]) if name in eps else None,
            math.fsum(rho[name]) if name in rho else None,
        )
        for name, n in calls.items()
    )
