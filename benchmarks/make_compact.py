"""A generated table of dates written YYYYMMDD and codes written zero-padded, for the
written forms of ``docs/learn.md`` ("Codes written with leading zeros, dates written
YYYYMMDD"): ``python benchmarks/make_compact.py OUTDIR`` writes ``admissions.csv`` (seeded).

5,000 hospital admissions: ``admit`` (2016 to 2020, fewer on weekends and in summer, more
each year), ``birth`` (1925 to 2005, a patient's age near 60), ``discharge`` (``admit`` plus a
stay, missing for 3%), ``zip`` (five digits, a third of them below 10000: written with a
leading 0), ``ward`` (six named wards), ``charge`` (dollars and cents, lognormal)."""

from __future__ import annotations

import csv
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np


def main(out: Path, n: int = 5000, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    start, days = date(2016, 1, 1), (date(2021, 1, 1) - date(2016, 1, 1)).days
    day = np.arange(days)
    when = [start + timedelta(int(d)) for d in day]
    weight = np.array([(0.55 if w.weekday() >= 5 else 1.0)
                       * (0.8 if w.month in (7, 8) else 1.0) for w in when])  # fmt: skip
    weight *= 1.0 + 0.3 * day / days
    admit = rng.choice(day, size=n, p=weight / weight.sum())
    age = np.clip(rng.normal(60, 15, n), 15, 95)
    stay = rng.geometric(0.25, n)
    zips = np.concatenate([rng.integers(1000, 10000, 40), rng.integers(10000, 100000, 80)])
    wards = ["cardiology", "maternity", "oncology", "orthopaedics", "surgery", "general"]
    path = out / "admissions.csv"
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["admit", "birth", "discharge", "zip", "ward", "charge"])
        for i in range(n):
            a = start + timedelta(int(admit[i]))
            b = a - timedelta(days=int(age[i] * 365.25))
            d = "" if rng.random() < 0.03 else (a + timedelta(int(stay[i]))).strftime("%Y%m%d")
            z = int(zips[min(int(rng.zipf(1.3)) - 1, zips.size - 1)])
            w.writerow([a.strftime("%Y%m%d"), b.strftime("%Y%m%d"), d, f"{z:05d}",
                        wards[int(rng.choice(6, p=[0.2, 0.1, 0.15, 0.1, 0.2, 0.25]))],
                        f"{rng.lognormal(8, 0.8):.2f}"])  # fmt: skip
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
