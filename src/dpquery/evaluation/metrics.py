"""Error metrics of released answers against the true answers, and their JSON report.

DualQuery (Section 6) reports the max and the average additive error over the workload;
FEM (Oracle-efficient, Section 7) the max additive error ``max_q |q(D) - q(D^)|``. Errors are
taken over the stored queries: a negated query ``1 - q`` has the same error as ``q``, so the
closure adds nothing (errors on the positive half suffice). When the workload is made of
whole marginals, the total variation distance of each marginal,
``TV = 1/2 Σ_cells |true - released|``, is reported as well.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.queries.workload import Workload


@dataclass(frozen=True)
class ErrorReport:
    """Summary of ``|released - true|`` over a workload (JSON via :meth:`to_dict`)."""

    n_queries: int
    max_error: float
    mean_error: float
    rmse: float
    worst_query: int
    kind: str | None = None
    n_marginals: int | None = None
    max_tv: float | None = None
    mean_tv: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> ErrorReport:
        return cls(**obj)

    def describe(self) -> str:
        """The summary, the mean total variation per marginal first when the workload has
        marginals (a mean over cells shrinks with their number, whatever the release)."""
        lines = []
        if self.n_marginals is not None:
            lines.append(f"mean TV     {self.mean_tv:.6f} (per marginal, over {self.n_marginals})")
            lines.append(f"max TV      {self.max_tv:.6f}")
        lines += [
            f"queries     {self.n_queries}" + (f" ({self.kind})" if self.kind else ""),
            f"max error   {self.max_error:.6f} (query {self.worst_query})",
            f"mean error  {self.mean_error:.6f} (per query)",
            f"rmse        {self.rmse:.6f}",
        ]
        return "\n".join(lines)


def error_report(
    true: np.ndarray, released: np.ndarray, workload: Workload | None = None
) -> ErrorReport:
    """Max, mean and RMS error of ``released`` against ``true`` (and per-marginal TV)."""
    true = np.asarray(true, dtype=np.float64)
    released = np.asarray(released, dtype=np.float64)
    if true.shape != released.shape or true.ndim != 1:
        raise DPQueryError(
            f"true and released answers must be vectors of one length, got shapes "
            f"{true.shape} and {released.shape}"
        )
    if workload is not None and len(workload) != true.size:
        raise DPQueryError(f"{true.size} answers for a workload of {len(workload)} queries")
    if true.size == 0:
        raise DPQueryError("no answers to compare")
    if not np.isfinite(released).all():
        raise DPQueryError("released answers contain NaN or infinity")
    err = np.abs(released - true)
    worst = int(np.argmax(err))
    marg: dict[str, Any] = {}
    if workload is not None and workload.marginals is not None:
        tv = 0.5 * np.add.reduceat(err, workload.marginals[:-1])
        marg = {"n_marginals": int(tv.size), "max_tv": float(tv.max()), "mean_tv": float(tv.mean())}
    return ErrorReport(
        n_queries=int(true.size),
        max_error=float(err[worst]),
        mean_error=float(err.mean()),
        rmse=float(math.sqrt(float(np.mean(err**2)))),
        worst_query=worst,
        kind=None if workload is None else workload.kind,
        **marg,
    )
