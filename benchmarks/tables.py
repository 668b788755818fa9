"""Helpers shared by the benchmarks (not a benchmark: no ``main``): CSV files, console tables,
timings, error summaries and the cached real datasets."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.data.binary import BinaryData


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


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and its wall-clock seconds."""
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def errors(true: np.ndarray, released: np.ndarray) -> tuple[float, float]:
    """Max and mean absolute error of ``released`` against ``true``."""
    err = np.abs(np.asarray(released, dtype=np.float64) - true)
    return float(err.max()), float(err.mean())


@cache
def real_data(name: str) -> BinaryData:
    """A built-in dataset, loaded once per process."""
    from dpquery import datasets

    return datasets.load(name)
