"""``Release``: what every synthetic-data algorithm returns.

The records are the private output. :meth:`Release.to_dict` is the publishable account of how
they were made: parameters (public inputs), the ledger's report, per-round statistics and
timings. Its round entries are charged outputs of the accounted mechanisms (a selected query,
DQRS's kept/rejected counts) or post-processing of them (the oracle's statistics on the
sampled queries); raw noisy values that the algorithms use internally (MWEM's noisy
measurements, kept in :attr:`Release.rounds`) are left out, as is every timing of a step that
reads the private data: the true answers, the cluster's pass, the private selections and the
query player's updates (scores and weights computed from the true answers), a round of
adaptive-projection (its selection and measurement), and the totals that include them. A
running time can depend on the data, and no mechanism accounts for it; only the data
player's time (``respond_s``: the oracle or learner, on charged outputs) is published. The
others are the curator's, in the NOT PRIVATE evaluation (:meth:`Release.private_timings`;
see docs/privacy.md, "Threat model and guarantees").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from dpquery.data.records import Records
from dpquery.privacy import Budget, Ledger, all_accountants
from dpquery.privacy.errors import AccountingError
from dpquery.privacy.ledger import NOT_PRIVATE, SEEDED, Guarantee
from dpquery.privacy.neighbours import REPLACE_ONE, neighbouring
from dpquery.privacy.partition_selection import partition_delta

RAW_NOISE_KEYS = frozenset({"measurement"})
"""Round entries holding a raw floating-point noise draw: internal, never published."""
PUBLIC_TIMINGS = frozenset({"respond_s"})
"""The only timings published: the data player's (an oracle or learner run on the charged
outputs of the mechanisms and on public inputs: post-processing)."""
PRIVATE_TIMINGS = frozenset(
    {"true_answers_s", "backend_s", "select_s", "observe_s", "seconds", "total_s", "base_s",
     "mwem_s"}
)  # fmt: skip
"""Timings of steps that read the private data (true answers, the cluster's pass, private
selections, the query player's updates from the true answers, adaptive-projection's rounds)
or include them (totals, a pipeline's stages): for the curator, never published."""
LABELS = {
    "rounds": "per round: charged outputs of the accounted mechanisms (the selected query, "
    "DQRS's kept/rejected counts) or post-processing of them (oracle statistics on the sampled "
    "queries); raw noisy measurements are not published",
    "timings": "wall-clock seconds of the data player (respond_s: the oracle or learner, on "
    "charged outputs and public inputs); no mechanism accounts for running times, so those of "
    "steps that read the private data (true answers, selections, measurements, totals) are "
    "not published",
}


def released_count(records: object) -> int:
    """How many records a release holds: dense records' ``m``, or item sets' ``n``."""
    return int(getattr(records, "m", getattr(records, "n", 0)))


def publishable_rounds(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The round statistics without raw noise draws or timings of steps that read the
    private data."""
    drop = RAW_NOISE_KEYS | PRIVATE_TIMINGS
    return [{k: v for k, v in r.items() if k not in drop} for r in rounds]


@dataclass(frozen=True)
class OutsideLedger:
    """The tail probability ``delta_tail`` of partition selections a run made besides its
    ledger (a domain learned from the data, ``docs/learn.md``), and the run's whole
    ``budget`` it was split from. A run whose ledger proves ``(epsilon, delta_ledger)`` is
    ``(epsilon, delta_ledger + (1 + e^epsilon) delta_tail)``-DP
    (:func:`~dpquery.privacy.partition_selection.partition_delta`); it proves no pure or
    zCDP guarantee."""

    delta_tail: float
    budget: Budget

    def delta(self, ledger_delta: float, epsilon: float) -> float:
        """The whole run's delta at the ledger's ``(epsilon, ledger_delta)``."""
        return ledger_delta + partition_delta(self.delta_tail, epsilon)


@dataclass(frozen=True, eq=False)
class Release:
    """A private synthetic dataset and the account of how it was made."""

    algorithm: str
    records: Records
    ledger: Ledger
    parameters: dict[str, Any]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    seeded: bool = False  # the noise came from a seeded (predictable) generator
    outside: OutsideLedger | None = None  # a learned domain's selections, besides the ledger

    @property
    def non_private_domain(self) -> bool:
        """Whether the records' domain was read from the private data (not DP then)."""
        domain = getattr(self.records, "domain", None)  # item sets have none
        return bool(domain is not None and domain.non_private)

    @property
    def neighbours(self) -> str:
        """The neighbouring relation the guarantee is stated for
        (:mod:`dpquery.privacy.neighbours`)."""
        return str(self.parameters.get("neighbours", REPLACE_ONE))

    def privacy(self) -> dict[str, Any]:
        """The ledger's report, plus the guarantee under every accountant (each named), under
        the release's neighbouring relation."""
        report: dict[str, Any] = self.ledger.report().to_dict()
        report["neighbouring"] = neighbouring(self.neighbours)
        report["neighbours"] = self.neighbours
        delta = self.ledger.budget.delta
        totals = self.ledger.totals
        flags = self._flags()
        report["guarantees"] = [{**g, **flags} for g in report["guarantees"]]
        if self.outside is not None:
            self._outside(report)
        by_accountant = []
        for acc in all_accountants():
            try:
                entry: dict[str, Any] = {"accountant": acc.name, "key": acc.key, **flags}
                eps = acc.epsilon(totals, delta)
                # As in LedgerReport.to_dict: no bare Infinity in a JSON report.
                entry["epsilon"] = "inf" if math.isinf(eps) else eps
                entry["delta"] = delta
                if self.outside is not None:
                    entry["delta"] = self.outside.delta(delta, eps)
            except AccountingError as exc:
                entry["epsilon"] = None
                entry["note"] = str(exc)
            by_accountant.append(entry)
        report["by_accountant"] = by_accountant
        if self.seeded:
            report["seeded"] = (
                f"{SEEDED}: the noise came from a seeded generator (for testing and "
                "research); whoever knows or guesses the seed can recompute it"
            )
        if self.non_private_domain:
            report["warning"] = (
                f"{NOT_PRIVATE}: this release is NOT differentially private, whatever the "
                "accounting of its mechanisms says"
            )
        return report

    def _outside(self, report: dict[str, Any]) -> None:
        """The whole run's budget and guarantees: the ledger's (epsilon, delta) with the
        selections' delta added, no pure or zCDP guarantee (:class:`OutsideLedger`)."""
        outside = self.outside
        assert outside is not None
        ledger_delta = self.ledger.budget.delta
        report["ledger_budget"] = report["budget"]
        report["budget"] = outside.budget.to_dict()
        report["delta_split"] = {
            "total": outside.budget.delta,
            "ledger": ledger_delta,
            "partition_selection": partition_delta(outside.delta_tail, outside.budget.limit),
            "delta_tail": outside.delta_tail,
            "rule": "the ledger proves (epsilon, ledger delta); the learned domain's partition "
            "selections add (1 + e^epsilon) delta_tail (docs/learn.md)",
        }
        report["guarantees"] = [
            {**g, "delta": outside.delta(ledger_delta, g["epsilon"])}
            for g in report["guarantees"]
            if g["measure"] == "approx" and g["epsilon"] != "inf"
        ]

    def _flags(self) -> dict[str, bool]:
        """The qualifications every guarantee of this release carries (:class:`Guarantee`)."""
        flags = {"seeded": self.seeded, "not_private": self.non_private_domain}
        return {k: True for k, v in flags.items() if v}

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee in the measure of the budget asked for: ``(epsilon, delta)`` at the
        budget's delta, pure ``epsilon``, or ``rho`` (zCDP), under the ledger's accountant
        (after a learned domain, its selections' delta added: :class:`OutsideLedger`), for the
        release's neighbouring relation;
        qualified when the noise was seeded, NOT PRIVATE when the domain was read from the
        data (:meth:`Guarantee.describe`)."""
        budget = self.ledger.budget
        for g in self.ledger.report().guarantees:
            if g.measure == budget.measure:
                if self.outside is not None and g.delta is not None and g.epsilon is not None:
                    g = replace(g, delta=self.outside.delta(g.delta, g.epsilon))
                return replace(g, seeded=self.seeded, not_private=self.non_private_domain,
                               neighbours=self.neighbours)  # fmt: skip
        raise AccountingError(f"the ledger proves no {budget.measure} guarantee")

    def private_timings(self) -> dict[str, Any]:
        """Timings of steps that read the private data, and the per-round ones: for the
        curator (the NOT PRIVATE evaluation), never for publication."""
        out: dict[str, Any] = {k: v for k, v in self.timings.items() if k not in PUBLIC_TIMINGS}
        rounds = [{k: v for k, v in r.items() if k in PRIVATE_TIMINGS or k == "round"}
                  for r in self.rounds]  # fmt: skip
        if any(len(r) > 1 for r in rounds):
            out["rounds"] = [r for r in rounds if len(r) > 1]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The publishable account (module docstring): no raw noise, no private timings."""
        return {
            "algorithm": self.algorithm,
            "parameters": dict(self.parameters),
            "privacy": self.privacy(),
            "records": released_count(self.records),
            "d": self.records.d,
            "timings": {k: v for k, v in self.timings.items() if k in PUBLIC_TIMINGS},
            "rounds": publishable_rounds(self.rounds),
            "labels": dict(LABELS),
        }
