"""Generated tables whose date column writes a time that is always midnight, for
``docs/learn.md`` ("A time that is always midnight"): per size N (2,000 and 20,000 records),
``midnight_iso_N.csv`` (``when`` written ``YYYY-MM-DDT00:00:00``, as JSON exports and
``isoformat()`` write a day as a time) and ``midnight_us_N.csv`` (``when`` written
``M/D/YYYY 0:00:00``, as Rdatasets' ``birds``), each with a category and an amount that
depend on the year. The days are spread over 2012-2019, more of them in later years, and 3%
of the dates are missing. Seeded: ``python benchmarks/make_midnight.py OUTDIR``."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def table(n: int, style: str, seed: int) -> pd.DataFrame:
    """``n`` records; ``style`` ``"iso"`` or ``"us"``."""
    rng = np.random.default_rng(seed)
    weights = np.linspace(1, 3, 8)  # more records in later years
    years = rng.choice(np.arange(2012, 2020), n, p=weights / weights.sum())
    days = [dt.date(int(y), 1, 1) + dt.timedelta(days=int(d))
            for y, d in zip(years, rng.integers(0, 365, n), strict=True)]  # fmt: skip
    if style == "iso":
        when = [f"{d.isoformat()}T00:00:00" for d in days]
    else:
        when = [f"{d.month}/{d.day}/{d.year} 0:00:00" for d in days]
    late = years >= 2016
    kind = np.where(rng.random(n) < np.where(late, 0.7, 0.3), "online", "store")
    amount = np.round(np.exp(rng.normal(3 + 0.1 * (years - 2012), 0.7, n)), 2)
    out = pd.DataFrame({"when": when, "kind": kind, "amount": amount})
    out.loc[rng.random(n) < 0.03, "when"] = None
    return out


def main(out: Path) -> None:
    for k, n in enumerate((2000, 20000)):
        for j, style in enumerate(("iso", "us")):
            table(n, style, 20261129 + 10 * k + j).to_csv(out / f"midnight_{style}_{n}.csv",
                                                          index=False)  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]))
