"""A country column's release per table, mean over seeds (NOT private, for benchmarking only;
docs/learn.md, "Country names written in one style").

For each ``TABLE=COLUMN``, from ``bench_raw.py``'s results ``docs/results/raw/<out>.csv`` and
``<out>_columns.csv`` and its kept runs in ``CACHE/runs``: the table's scores (shapes / pairs
mean / pairs worst / KS mean / KS worst), the column's shape, the share of its released
records on a value of the learned domain the real column lacks (phantoms, as
``phantoms.py``), on the catch-all, and how many of the real column's values the release
holds; the mean over ``--seeds``::

    python benchmarks/spelling_styles.py --out spellstyle-run-kept --cache /tmp/ss/cache-kept \
        --seeds 0 1 2 3 --columns wbd_example=country global_economy=Country
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

RAW = Path(__file__).resolve().parents[1] / "docs" / "results" / "raw"
SCORES = ["shapes", "pairs_mean", "pairs_min", "ks_mean", "ks_max"]


def row(out: str, cache: Path, seeds: list[int], table: str, column: str) -> str:
    runs = pd.read_csv(RAW / f"{out}.csv")
    cols = pd.read_csv(RAW / f"{out}_columns.csv")
    runs = runs[(runs.table == table) & runs.seed.isin(seeds)]
    shape = cols[(cols.table == table) & (cols.column == column) & cols.seed.isin(seeds)]
    real = pd.read_csv(cache / f"{table}.csv", dtype=str, keep_default_na=False)[column]
    have = set(real)
    phantoms, other, found = [], [], []
    for s in sorted(runs.seed):
        syn = pd.read_csv(cache / "runs" / f"{table}.dpquery.s{s}.csv", dtype=str,
                          keep_default_na=False)[column]  # fmt: skip
        dom = json.loads((cache / "runs" / f"{table}.dpquery.s{s}.domain.json").read_text())
        a = next(a for a in dom["attributes"] if a["name"] == column)
        skip = (a.get("other"), a.get("missing"))
        absent = [v for v in a["values"] if isinstance(v, str) and v not in skip and v not in have]
        phantoms.append(100 * syn.isin(absent).mean())
        other.append(100 * (syn == a.get("other")).mean())
        found.append(len(set(syn) & have))
    m = runs[SCORES].mean()
    return (f"| {table} | {' / '.join(f'{x:.3f}' for x in m)} | {shape['shape'].mean():.3f} | "
            f"{np.mean(phantoms):.1f}% | {np.mean(other):.1f}% | {np.mean(found):.1f} of "
            f"{len(have)} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="bench_raw.py's --out (docs/results/raw)")
    ap.add_argument("--cache", type=Path, required=True, help="bench_raw.py's --cache")
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--columns", nargs="+", required=True, help="TABLE=COLUMN")
    args = ap.parse_args()
    for spec in args.columns:
        table, column = spec.split("=", 1)
        print(row(args.out, args.cache, args.seeds, table, column))


if __name__ == "__main__":
    main()
