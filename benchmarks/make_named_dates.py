"""A generated table of dates written with the month's English name, for ``docs/learn.md``
("Dates written with a month's name"): ``python benchmarks/make_named_dates.py OUTDIR``
writes ``orders.csv`` (seeded).

4,000 orders over 2018-2020: ``ordered`` written ``%d %b %Y`` (``05 Feb 2020``), ``shipped``
(``ordered`` plus a few days) written as ``February 7, 2020`` (no leading zero; ``May`` is
both styles), ``amount`` (dollars and cents, lognormal) and ``region`` (four names)."""

from __future__ import annotations

import csv
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np


def main(out: Path, n: int = 4000, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    start = date(2018, 1, 1)
    growth = np.linspace(1.0, 2.0, 1096)
    ordered = rng.choice(1096, size=n, p=growth / growth.sum())
    path = out / "orders.csv"
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ordered", "shipped", "amount", "region"])
        for i in range(n):
            o = start + timedelta(int(ordered[i]))
            s = o + timedelta(int(rng.geometric(0.3)))
            w.writerow([o.strftime("%d %b %Y"), f"{s.strftime('%B')} {s.day}, {s.year}",
                        f"{rng.lognormal(4, 1):.2f}",
                        ["north", "south", "east", "west"][int(rng.integers(0, 4))]])  # fmt: skip
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
