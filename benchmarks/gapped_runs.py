"""Every gapped run a release's learning keeps, and its roughness (docs/learn.md, "A band of
points or a smooth band: the roughness test"). The release's learning alone
(``benchmarks/release_domains.py``'s) with :func:`dpquery.domain_learning.coarser_run`
wrapped: per table, seed and column whose gapped run the code kept, the run, its finer cells'
count ``w``, their :func:`~dpquery.domain_learning.roughness`, its sd above 1 on a smooth
profile (``sqrt(3 / (w - 1))``) and whether :func:`~dpquery.domain_learning.point_band`
keeps it. Run on the code before the rule (its ``src`` on ``PYTHONPATH``) to see which
learnings the rule changes: those with a run it refuses. Reads the table (NOT a release:
for comparing code only).

    PYTHONPATH=V/src python benchmarks/gapped_runs.py T1.csv T2.csv ... --seeds 3 10
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

import dpquery.domain_learning as dl
from dpquery.privacy.quantiles import discrete_gaussian_sigma2

sys.path.insert(0, str(Path(__file__).parent))
from release_domains import learned


def _point_band(noisy: np.ndarray, sigma2: float) -> bool:
    """:func:`dpquery.domain_learning.point_band`, or its test where the code has none."""
    rule = getattr(dl, "point_band", None)
    if rule is not None:
        return bool(rule(noisy, sigma2))
    w = noisy.size
    r = float(np.mean(np.diff(noisy.astype(np.float64)) ** 2) / (2.0 * sigma2))
    return w > 1 and r > 1.0 + 2.0 * math.sqrt(3.0 / (w - 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path)
    parser.add_argument("--seeds", nargs="+", type=int, default=[3, 10])
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    found: list[dict[str, Any]] = []
    inner, edges = dl.coarser_run, dl._fine_edges
    column = [""]

    def named(name: str, *rest: Any, **kw: Any) -> Any:
        column[0] = name
        return edges(name, *rest, **kw)

    def recorded(cells: np.ndarray, noisy: np.ndarray, rho: float, sensitivity: float,
                 *rest: Any) -> Any:  # fmt: skip
        out = inner(cells, noisy, rho, sensitivity, *rest)
        if out is not None:
            found.append({"name": column[0], "cells": cells, "noisy": noisy, "rho": rho,
                          "l2": sensitivity, "run": out[0]})  # fmt: skip
        return out

    dl.coarser_run = recorded  # type: ignore[assignment]
    dl._fine_edges = named  # type: ignore[assignment]
    for path in args.tables:
        for seed in args.seeds:
            found.clear()
            learned(path, seed, args.epsilon, "add-remove")
            for f in found:
                lo, hi = f["run"]
                fine = (f["cells"][:-1] >= lo) & (f["cells"][1:] <= hi)
                y = np.asarray(f["noisy"])[fine]
                sigma2 = float(discrete_gaussian_sigma2(f["rho"], f["l2"]))
                w = y.size
                r = float(np.mean(np.diff(y.astype(np.float64)) ** 2) / (2.0 * sigma2))
                z = (r - 1.0) / math.sqrt(3.0 / max(w - 1, 1))
                kept = "kept" if _point_band(y, sigma2) else "refused"
                print(f"| {path.stem} | {seed} | {f['name']} | [{lo:g}, {hi:g}] | {w} | "
                      f"{r:.2f} | {z:.2f} | {kept} |")  # fmt: skip


if __name__ == "__main__":
    main()
