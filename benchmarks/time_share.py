"""The released times of a date column against the real ones, for ``docs/learn.md`` ("A time
that is always midnight", "A time written to the second, always at whole minutes"): of the
released values that read as dates, the share at a whole ``--unit`` (``day``: written at
midnight, ``0:00``, ``00:00:00``, ``T00:00:00``; ``minute``: seconds 0, ``10:30:00``); and the
two-sample KS statistic of the times floored to that unit (the real and the released values
on the time axis).

Reads ``bench_raw.py``'s cache (``--cache C``): the real table ``C/T.csv`` and each kept
release ``C/runs/T.dpquery.sS.csv``. NOT private: for benchmarking only.
``python benchmarks/time_share.py --unit day|minute --cache C --tables T... --seeds S...
[--column C...]`` prints one row per table and column (the mean over the seeds) and each
seed's numbers; the column defaults to ``date``, else ``when``."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from dpquery.data.dates import DAY, common_cell, iso_cell

UNITS = {"day": DAY, "minute": 60}


def seconds(texts: pd.Series) -> np.ndarray:
    """Each text's seconds since the epoch, read as an ISO date or a common format's date
    month first (NaN for anything else)."""
    out = np.full(len(texts), np.nan)
    for i, t in enumerate(texts.tolist()):
        if not isinstance(t, str):
            continue
        iso = iso_cell(t.strip())
        if iso is not None:
            out[i] = iso[0]
            continue
        cell = common_cell(t.strip())
        if cell is not None and "mdy" in cell.seconds:
            out[i] = cell.seconds["mdy"]
    return out


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample KS statistic of ``a`` and ``b``."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--unit", choices=sorted(UNITS), required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--tables", nargs="+", required=True)
    ap.add_argument("--seeds", nargs="+", type=int, required=True)
    ap.add_argument("--column", nargs="+", default=None, help="default: date, else when")
    args = ap.parse_args()
    unit = UNITS[args.unit]
    print(f"| table | column | seeds | real at a whole {args.unit} | released at a whole "
          f"{args.unit} | KS ({args.unit}s) | an example |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for t in args.tables:
        real = pd.read_csv(args.cache / f"{t}.csv", dtype=str, keep_default_na=False)
        for col in args.column or ["date" if "date" in real.columns else "when"]:
            r = seconds(real[col])
            r = r[~np.isnan(r)]
            shares, stats, example = [], [], ""
            for s in args.seeds:
                out = pd.read_csv(args.cache / "runs" / f"{t}.dpquery.s{s}.csv", dtype=str,
                                  keep_default_na=False)  # fmt: skip
                x = seconds(out[col])
                ok = ~np.isnan(x)
                shares.append(float(np.mean(x[ok] % unit == 0)))
                stats.append(ks(np.floor(r / unit), np.floor(x[ok] / unit)))
                example = example or str(out[col][ok].iloc[0])
                print(f"  {t} {col} seed {s}: {shares[-1]:.3f} at a whole {args.unit}, KS "
                      f"{stats[-1]:.3f}, {int(ok.sum())} dates")  # fmt: skip
            seeds = " ".join(map(str, args.seeds))
            print(f"| {t} | {col} | {seeds} | {np.mean(r % unit == 0):.3f} | "
                  f"{np.mean(shares):.3f} | {np.mean(stats):.3f} | `{example}` |")  # fmt: skip


if __name__ == "__main__":
    main()
