"""``Release``: what every synthetic-data algorithm returns.

The records are the private output. :meth:`Release.to_dict` is the publishable account of how
they were made: parameters (public inputs), the ledger's report, per-round statistics and
timings. Its round entries are charged outputs of the accounted mechanisms (a selected query,
DQRS's kept/rejected counts) or post-processing of them (the oracle's statistics on the
sampled queries); raw noisy values that the algorithms use internally (MWEM's noisy
measurements, kept in :attr:`Release.rounds`) are left out, as are the timings of steps that
read the private data in bulk (``true_answers_s``, ``backend_s``). Timings are not covered by
the privacy guarantee (see docs/privacy.md, "Threat model and guarantees").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpquery.data.records import Records
from dpquery.privacy import Ledger, all_accountants
from dpquery.privacy.errors import AccountingError
from dpquery.privacy.ledger import Guarantee

RAW_NOISE_KEYS = frozenset({"measurement"})
"""Round entries holding a raw floating-point noise draw: internal, never published."""
PRIVATE_TIMINGS = frozenset({"true_answers_s", "backend_s"})
"""Timings of computations over the private data (true answers, the cluster's pass)."""
LABELS = {
    "rounds": "per round: charged outputs of the accounted mechanisms (the selected query, "
    "DQRS's kept/rejected counts) or post-processing of them (oracle statistics on the sampled "
    "queries); raw noisy measurements are not published",
    "timings": "wall-clock seconds of steps on public inputs and charged outputs (select_s "
    "times the private selection itself); timings are outside the privacy guarantee, and "
    "those of passes over the private data (true answers, backend) are not published",
}


def released_count(records: object) -> int:
    """How many records a release holds: dense records' ``m``, or item sets' ``n``."""
    return int(getattr(records, "m", getattr(records, "n", 0)))


def publishable_rounds(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The round statistics without raw noise draws or timings of private computations."""
    drop = RAW_NOISE_KEYS | PRIVATE_TIMINGS
    return [{k: v for k, v in r.items() if k not in drop} for r in rounds]


@dataclass(frozen=True, eq=False)
class Release:
    """A private synthetic dataset and the account of how it was made."""

    algorithm: str
    records: Records
    ledger: Ledger
    parameters: dict[str, Any]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def non_private_domain(self) -> bool:
        """Whether the records' domain was read from the private data (not DP then)."""
        domain = getattr(self.records, "domain", None)  # item sets have none
        return bool(domain is not None and domain.non_private)

    def privacy(self) -> dict[str, Any]:
        """The ledger's report, plus the guarantee under every accountant (each named)."""
        report = self.ledger.report().to_dict()
        delta = self.ledger.budget.delta
        totals = self.ledger.totals
        by_accountant = []
        for acc in all_accountants():
            try:
                entry: dict[str, Any] = {"accountant": acc.name, "key": acc.key}
                eps = acc.epsilon(totals, delta)
                # As in LedgerReport.to_dict: no bare Infinity in a JSON report.
                entry["epsilon"] = "inf" if math.isinf(eps) else eps
                entry["delta"] = delta
            except AccountingError as exc:
                entry["epsilon"] = None
                entry["note"] = str(exc)
            by_accountant.append(entry)
        report["by_accountant"] = by_accountant
        if self.non_private_domain:
            report["warning"] = (
                "the domain was read from the private data: this release is NOT "
                "differentially private"
            )
        return report

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee in the measure of the budget asked for: ``(epsilon, delta)`` at the
        budget's delta, pure ``epsilon``, or ``rho`` (zCDP), under the ledger's accountant."""
        budget = self.ledger.budget
        for g in self.ledger.report().guarantees:
            if g.measure == budget.measure:
                return g
        raise AccountingError(f"the ledger proves no {budget.measure} guarantee")

    def private_timings(self) -> dict[str, float]:
        """Timings of passes over the private data: for the curator, not for publication."""
        return {k: v for k, v in self.timings.items() if k in PRIVATE_TIMINGS}

    def to_dict(self) -> dict[str, Any]:
        """The publishable account (module docstring): no raw noise, no private timings."""
        return {
            "algorithm": self.algorithm,
            "parameters": dict(self.parameters),
            "privacy": self.privacy(),
            "records": released_count(self.records),
            "d": self.records.d,
            "timings": {k: v for k, v in self.timings.items() if k not in PRIVATE_TIMINGS},
            "rounds": publishable_rounds(self.rounds),
            "labels": dict(LABELS),
        }
