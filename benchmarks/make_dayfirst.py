"""Two generated tables with day-first dates, for the common date formats of
``docs/learn.md`` ("Dates in other formats"): ``uksales.csv`` (5,000 sales, ``sold`` written
``D/M/YYYY H:MM`` over 2021-2022, a store, an amount) and ``dewetter.csv`` (10,956 daily
readings of three stations, ``Datum`` written ``DD.MM.YYYY`` over 2010-2019, a temperature, a
rain count). Seeded: ``python benchmarks/make_dayfirst.py OUTDIR``."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def main(out: Path) -> None:
    rng = np.random.default_rng(20261128)
    n = 5000
    start = dt.datetime(2021, 1, 1)
    days, hours, mins = rng.integers(0, 730, n), rng.integers(8, 20, n), rng.integers(0, 60, n)
    ts = [start + dt.timedelta(days=int(d), hours=int(h), minutes=int(m))
          for d, h, m in zip(days, hours, mins, strict=True)]  # fmt: skip
    store = rng.choice(["Leeds", "York", "Hull", "Bath", "Derby"], n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    amount = np.round(np.exp(rng.normal(3, 0.8, n)), 2)
    sold = [f"{t.day}/{t.month}/{t.year} {t.hour}:{t.minute:02d}" for t in ts]
    pd.DataFrame({"sold": sold, "store": store, "amount": amount}).to_csv(
        out / "uksales.csv", index=False
    )
    rows = []
    for station in ["Bonn", "Kiel", "Jena"]:
        for d in range(3652):
            day = dt.date(2010, 1, 1) + dt.timedelta(days=d)
            season = -8 * np.cos(2 * np.pi * (day.timetuple().tm_yday - 15) / 365)
            temp = 10 + season + rng.normal(0, 3)
            rows.append((day.strftime("%d.%m.%Y"), station, round(temp, 1), int(rng.poisson(2))))
    pd.DataFrame(rows, columns=["Datum", "Station", "Temp", "Regen"]).to_csv(
        out / "dewetter.csv", index=False
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
