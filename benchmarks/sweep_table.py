"""The breadth sweep's table and causes from ``sweep_check.py``'s JSON (docs/learn.md, "A
breadth sweep of unseen CSVs").

    python benchmarks/sweep_table.py CHECK.json [BEFORE.json] > table.md

With ``BEFORE.json`` (another version's check of the same tables and seed), each row also
gives that version's exit code and count of failing columns.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from typing import Any


def cause(table: dict[str, Any], col: dict[str, Any], failure: str) -> str:
    """The general cause of one column's failure (the real values' shape, public to the
    diagnosis only: it reads the real table)."""
    kind = col["real"]
    if kind == "categories":
        return "categories below the selection's threshold"
    if kind == "dates":
        if col["learned"] in ("categorical", "other-only"):
            return "dates not read as dates"
        return (
            "dates of few values spread over the time axis"
            if col["distinct"] <= 20
            else ("dates: other")
        )
    if kind == "numbers":
        if failure.startswith("numbers"):
            return "numbers released as text or missing"
        lo, hi = col["range_real"]
        if lo == hi:
            return "numbers: a constant"
        if lo < 0 < hi:
            return "numbers: signed around 0"
        if lo * hi > 0 and (hi - lo) < 0.5 * max(abs(lo), abs(hi)):
            return "numbers: a narrow band far from 0 (few atoms, coarse or wide bounds)"
        return "numbers: other (a tail beyond the bounds, codes over a wide range)"
    return "other"


def main(path: str, before_path: str | None = None) -> None:
    tables = json.load(open(path))
    before = {t["table"]: t for t in json.load(open(before_path))} if before_path else {}
    causes: dict[str, set[str]] = defaultdict(set)
    cols_per: dict[str, set[tuple[str, str]]] = defaultdict(set)
    examples: dict[str, list[str]] = defaultdict(list)
    extra = " before: exit, failing columns |" if before else ""
    print("| table | rows x cols | exit | s | MiB | learned: numeric / time / categorical / "
          f"`<other>` only | failures (columns) |{extra}")  # fmt: skip
    print("|---|---|---|---|---|---|---|" + ("---|" if before else ""))
    for t in tables:
        fails: list[str] = []
        if t["rc"] != 0:
            c = "refused: a row index" if any("row index" in e for e in t["stderr"]) else "error"
            causes[c].add(t["table"])
            fails.append(c)
        kinds: Counter[str] = Counter()
        for col in t.get("columns", []):
            kinds[col["learned"]] += 1
            for f in col["failures"]:
                c = cause(t, col, f)
                if (t["table"], col["column"]) not in cols_per[c]:
                    cols_per[c].add((t["table"], col["column"]))
                    if len(examples[c]) < 6:
                        examples[c].append(f"{t['table'][:3]} {col['column']}")
                causes[c].add(t["table"])
            if col["failures"]:
                fails.append(f"{col['column']} ({', '.join(col['failures'])})")
        k = "/".join(str(kinds[x]) for x in ("numeric", "time", "categorical", "other-only"))
        rows, ncols = t["shape"]
        print(
            f"| {t['table']} | {rows:,} x {ncols} | {t['rc']} | {t['seconds']:.1f} | "
            f"{t['mib']:.0f} | {k if t.get('columns') else ''} | {'; '.join(fails) or '-'} |"
        )
    print()
    print("| cause | tables | columns | examples |")
    print("|---|---|---|---|")
    for c, ts in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print(f"| {c} | {len(ts)} | {len(cols_per[c]) or ''} | {'; '.join(examples[c])} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
