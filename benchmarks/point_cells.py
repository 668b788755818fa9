"""Releases with and without a decoding rule, scored as ``bench_raw.score`` scores them, the
columns the rule decoded apart (docs/learn.md, "Points decoded as points"). NOT private: it
reads the real tables, for benchmarking only.

``RUNS/V/sS/T.csv`` (and ``T.domain.json``) are ``dpquery synth --data T.csv --epsilon 1
--seed S --out RUNS/V/sS/T.csv`` with version ``V``'s source; the first version named is
the base. Per table and seed: each version's shapes / pairs mean / pairs worst / KS mean /
KS worst, the columns its domain decodes as cells (``"density": "cells"``) with their KS
against the base's, the other numeric columns' KS mean, and whether every other column is
byte for byte the base's.

    PYTHONPATH=src venv-score/bin/python benchmarks/point_cells.py RUNS OUT.json \\
        --versions base new --seeds 0 1 2 3 --tables T.csv ...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_raw import score
from sweep_check import _without_index


def cells_columns(domain_json: Path) -> list[str]:
    """The columns a learned domain decodes at cells."""
    obj = json.loads(domain_json.read_text())
    return [a["name"] for a in obj["attributes"] if a.get("density") == "cells"]


def compare(table: Path, runs: Path, versions: list[str], seed: int) -> dict[str, Any]:
    """One table and seed: each version's scores, the cells' columns and their KS."""
    real = _without_index(pd.read_csv(table))
    name = table.stem
    out: dict[str, Any] = {"table": name, "seed": seed, "versions": {}}
    base = None
    for v in versions:
        path = runs / v / f"s{seed}" / f"{name}.csv"
        if not path.exists():
            continue
        synth = pd.read_csv(path)
        row, cols = score(real, synth)
        cells = cells_columns(path.with_suffix(".domain.json"))
        ks = {c["column"]: c["ks"] for c in cols if "ks" in c}
        if base is None:
            base = (synth, ks)
        same = all(synth[c].equals(base[0][c]) for c in synth.columns if c not in cells)
        rest = [k for c, k in ks.items() if c not in cells]
        out["versions"][v] = {**row, "cells": {c: ks.get(c) for c in cells},
                              "base_cells": {c: base[1].get(c) for c in cells},
                              "others_ks_mean": sum(rest) / len(rest) if rest else None,
                              "others_same": same}  # fmt: skip
    return out


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--versions", nargs="+", required=True)
    ap.add_argument("--seeds", nargs="+", type=int, required=True)
    ap.add_argument("--tables", nargs="+", type=Path, required=True)
    args = ap.parse_args()
    rows = [compare(t, args.runs, args.versions, s) for s in args.seeds for t in args.tables]
    args.out.write_text(json.dumps(rows, indent=1))
    for r in rows:
        for v, x in r["versions"].items():
            keys = ("shapes", "pairs_mean", "pairs_min", "ks_mean", "ks_max")
            f = " / ".join(_f(x[k]) for k in keys)
            c = "; ".join(f"{k} {_f(x['base_cells'][k])} to {_f(ks)}"
                          for k, ks in x["cells"].items())  # fmt: skip
            print(
                f"{r['seed']:>3} {r['table'][:22]:22s} {v:6s} {f}  others same: "
                f"{x['others_same']}  cells: {c}"
            )


if __name__ == "__main__":
    main()
