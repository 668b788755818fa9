"""Phantoms: released records on a categorical value the real column lacks (NOT private,
for benchmarking only; docs/learn.md, "Phantoms and the released keys' rule").

For each kept run of ``bench_raw.py`` in ``CACHE/runs`` (``T.METHOD.sS.csv`` beside its
``.domain.json``), per text category of the learned domain (not its catch-all or missing
category), the records on values the real table (``CACHE/T.csv``) lacks, those of them on
``listed`` values, and how many of the real column's values the release holds. Values are
compared as written::

    python benchmarks/phantoms.py /tmp/vocab-cache-F [TABLE ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd


def main(cache: Path, only: set[str]) -> None:
    for dom in sorted((cache / "runs").glob("*.domain.json")):
        table, method, seed = dom.name.split(".")[:3]
        out = dom.with_name(dom.name.replace(".domain.json", ".csv"))
        if (only and table not in only) or not out.exists():
            continue
        real = pd.read_csv(cache / f"{table}.csv", dtype=str, keep_default_na=False)
        syn = pd.read_csv(out, dtype=str, keep_default_na=False)
        total, parts = 0, []
        for a in json.loads(dom.read_text())["attributes"]:
            if a["type"] != "categorical" or a["name"] not in real:
                continue
            skip = (a.get("other"), a.get("missing"))
            values = [v for v in a["values"] if isinstance(v, str) and v not in skip]
            have = set(real[a["name"]])
            absent = [v for v in values if v not in have]
            listed = set(a.get("listed", []))
            ph = syn[a["name"]].isin(absent)
            phl = syn[a["name"]].isin([v for v in absent if v in listed])
            found = len(set(syn[a["name"]]) & have)
            if ph.sum():
                parts.append(f"{a['name']}:{int(ph.sum())}/{len(syn)} ({100 * ph.mean():.1f}%, "
                             f"listed {int(phl.sum())}; found {found} of {len(have)})")  # fmt: skip
            total += int(ph.sum())
        print(table, method, seed, "phantoms", total, "|", "; ".join(parts))


if __name__ == "__main__":
    main(Path(sys.argv[1]), set(sys.argv[2:]))
