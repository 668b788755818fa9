"""The released times of an ISO date column against the real ones, for ``docs/learn.md`` ("A
time written to the second, always at whole minutes"): of the released values that read as
dates, the share written with seconds 0 (``10:30:00``); and the two-sample KS statistic of
the times as minutes (the real and the released values on the time axis, floored to the
minute).

Reads ``bench_raw.py``'s cache (``--cache C``): the real table ``C/T.csv`` and each kept
release ``C/runs/T.dpquery.sS.csv``. NOT private: for benchmarking only.
``python benchmarks/whole_share.py --cache C --tables T... --seeds S... [--column when]``
prints one row per table (the mean over the seeds) and each seed's numbers; with several
columns (``--column pickup dropoff``) one row per column."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from midnight_share import ks, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--tables", nargs="+", required=True)
    ap.add_argument("--seeds", nargs="+", type=int, required=True)
    ap.add_argument("--column", nargs="+", default=["when"])
    args = ap.parse_args()
    print("| table | column | seeds | real at :00 | released at :00 | KS (minutes) | an example |")
    print("|---|---|---|---|---|---|---|")
    for t in args.tables:
        real = pd.read_csv(args.cache / f"{t}.csv", dtype=str, keep_default_na=False)
        for col in args.column:
            r = seconds(real[col])
            r = r[~np.isnan(r)]
            shares, stats, example = [], [], ""
            for s in args.seeds:
                out = pd.read_csv(args.cache / "runs" / f"{t}.dpquery.s{s}.csv", dtype=str,
                                  keep_default_na=False)  # fmt: skip
                x = seconds(out[col])
                ok = ~np.isnan(x)
                shares.append(float(np.mean(x[ok] % 60 == 0)))
                stats.append(ks(np.floor(r / 60), np.floor(x[ok] / 60)))
                example = example or str(out[col][ok].iloc[0])
                print(f"  {t} {col} seed {s}: {shares[-1]:.3f} at :00, KS {stats[-1]:.3f}, "
                      f"{int(ok.sum())} dates")  # fmt: skip
            seeds = " ".join(map(str, args.seeds))
            print(f"| {t} | {col} | {seeds} | {np.mean(r % 60 == 0):.3f} | {np.mean(shares):.3f} "
                  f"| {np.mean(stats):.3f} | `{example}` |")  # fmt: skip


if __name__ == "__main__":
    main()
