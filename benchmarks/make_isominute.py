"""Generated tables whose date column is to the minute but written to the second, as pandas
writes a datetime (``2020-01-03 10:30:00``), for ``docs/learn.md`` ("A time written to the
second, always at whole minutes"): per size N (2,000 and 20,000 records),
``isominute_N.csv``, with a category and an amount that depend on the year and the hour.
The times are spread over 2012-2019 (more in later years) and over the day (more by day
than by night), and 3% of them are missing. Seeded:
``python benchmarks/make_isominute.py OUTDIR``."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def table(n: int, seed: int) -> pd.DataFrame:
    """``n`` records, ``when`` at whole minutes written ``YYYY-MM-DD HH:MM:SS``."""
    rng = np.random.default_rng(seed)
    weights = np.linspace(1, 3, 8)  # more records in later years
    years = rng.choice(np.arange(2012, 2020), n, p=weights / weights.sum())
    by_hour = 1 + 2 * np.exp(-(((np.arange(24) - 14) / 4) ** 2))  # more by day
    hours = rng.choice(24, n, p=by_hour / by_hour.sum())
    stamps = [dt.datetime(int(y), 1, 1) + dt.timedelta(days=int(d), hours=int(h), minutes=int(m))
              for y, d, h, m in zip(years, rng.integers(0, 365, n), hours,
                                    rng.integers(0, 60, n), strict=True)]  # fmt: skip
    when = [t.strftime("%Y-%m-%d %H:%M:%S") for t in stamps]
    late = years >= 2016
    kind = np.where(rng.random(n) < np.where(late, 0.7, 0.3), "online", "store")
    amount = np.round(np.exp(rng.normal(3 + 0.1 * (years - 2012) + 0.02 * hours, 0.7, n)), 2)
    out = pd.DataFrame({"when": when, "kind": kind, "amount": amount})
    out.loc[rng.random(n) < 0.03, "when"] = None
    return out


def main(out: Path) -> None:
    for k, n in enumerate((2000, 20000)):
        table(n, 20261130 + k).to_csv(out / f"isominute_{n}.csv", index=False)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
