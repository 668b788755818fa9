"""``Release``: what every synthetic-data algorithm returns.

The records are the private output; everything else (parameters, the ledger's report,
per-round statistics, timings) describes how it was made and is itself safe to publish: it
depends on the private data only through the records and the public inputs (``n`` included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpquery.data.records import Records
from dpquery.privacy import Ledger, all_accountants
from dpquery.privacy.errors import AccountingError


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
        return bool(self.records.domain is not None and self.records.domain.non_private)

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "parameters": dict(self.parameters),
            "privacy": self.privacy(),
            "records": self.records.m,
            "d": self.records.d,
            "timings": dict(self.timings),
            "rounds": list(self.rounds),
        }
