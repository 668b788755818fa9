"""CSV and console tables shared by the benchmarks (not a benchmark: no ``main``)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_csv(rows: list[dict], folder: Path, name: str) -> Path:
    """``rows`` as ``folder/name.csv``, columns in order of first appearance."""
    folder.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    path = folder / f"{name}.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows({k: _csv_value(r.get(k)) for k in keys} for r in rows)
    return path


def print_table(rows: Iterable[dict], columns: list[str]) -> None:
    """A right-aligned console table of ``columns`` (missing values as ``-``)."""
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))


def _csv_value(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else value


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.3g}"
    return str(value)
