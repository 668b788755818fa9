"""Date and time columns released from a raw table, scored by sdmetrics' column shapes.

Runs ``dpquery synth --data T.csv --epsilon 1 --delta 1e-9 --seed S`` (no domain: learned
privately) in its own process, with the dpquery of ``--src`` (a checkout's ``src``; the
"before" of a change is an older commit's, e.g. ``git archive COMMIT src | tar -x -C DIR``),
and scores the release against the real table with sdmetrics' QualityReport "Column
Shapes" (NOT private, for benchmarking only): KSComplement for a datetime column (every
real value parses as ``--datetime-format``) and for a numeric one (the real column reads as
numbers with more than 20 distinct values, or a fraction), TVComplement otherwise. A
released datetime column with no value that parses as a date (``<other>`` everywhere, as
before dates were a kind) scores 0. Run it in the scoring venv (sdmetrics pins pandas<3);
the releases run with ``--python`` (the project's venv)::

    /work/venv-score/bin/python benchmarks/bench_dates.py --data taxis.csv --seeds 10 11 \\
        --src /tmp/base/src --label before --out docs/results/dates/taxis.csv
    /work/venv-score/bin/python benchmarks/bench_dates.py --data taxis.csv --seeds 10 11 \\
        --src src --label after --out docs/results/dates/taxis.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

NUMERIC_MIN_DISTINCT = 20


def kinds_of(real: pd.DataFrame, fmt: str) -> dict[str, str]:
    """``datetime``, ``numerical`` or ``categorical`` per column of the real table (read as
    text)."""
    kinds = {}
    for c in real.columns:
        present = real[c].dropna()
        if len(present) and pd.to_datetime(present, format=fmt, errors="coerce").notna().all():
            kinds[c] = "datetime"
            continue
        num = pd.to_numeric(present, errors="coerce")
        numeric = num.notna().all() and (
            bool((num % 1 != 0).any()) or num.nunique() > NUMERIC_MIN_DISTINCT
        )
        kinds[c] = "numerical" if numeric else "categorical"
    return kinds


def shapes(real: pd.DataFrame, synth: pd.DataFrame, fmt: str) -> dict[str, float]:
    """Per column sdmetrics' shape score, and ``"overall"`` (their mean)."""
    from sdmetrics.reports.single_table import QualityReport

    kinds = kinds_of(real, fmt)
    synth = synth.reindex(columns=real.columns)
    r, s = pd.DataFrame(index=real.index), pd.DataFrame(index=synth.index)
    meta: dict[str, Any] = {"columns": {}}
    empty = []
    for c, kind in kinds.items():
        if kind == "datetime":
            r[c] = pd.to_datetime(real[c], format=fmt, errors="coerce")
            s[c] = pd.to_datetime(synth[c], format=fmt, errors="coerce")
            if s[c].isna().all():
                empty.append(c)
                s[c] = r[c].iloc[0]  # scored 0 below
            meta["columns"][c] = {"sdtype": "datetime", "datetime_format": fmt}
        elif kind == "numerical":
            r[c] = pd.to_numeric(real[c], errors="coerce").astype(float)
            s[c] = pd.to_numeric(synth[c], errors="coerce").astype(float)
            meta["columns"][c] = {"sdtype": "numerical"}
        else:
            r[c] = real[c].astype(object)
            s[c] = synth[c].astype(object).where(synth[c].notna(), None)
            meta["columns"][c] = {"sdtype": "categorical"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = QualityReport()
        report.generate(r, s, meta, verbose=False)
        details = report.get_details("Column Shapes")
    out = {str(d["Column"]): float(d["Score"]) for _, d in details.iterrows()}
    for c in empty:
        out[c] = 0.0
    out["overall"] = float(np.mean([out[c] for c in real.columns]))
    return out


def release(data: Path, seed: int, src: Path, python: str, out: Path) -> None:
    cmd = [python, "-c", "from dpquery.cli import main; main()", "synth", "--data", str(data),
           "--epsilon", "1", "--delta", "1e-9", "--seed", str(seed), "--out", str(out),
           "--overwrite", "--quiet"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    subprocess.run(cmd, env=env, check=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--seeds", nargs="+", type=int, default=[10, 11])
    ap.add_argument("--src", type=Path, default=Path("src"))
    ap.add_argument("--python", default="/work/main/.venv/bin/python")
    ap.add_argument("--datetime-format", default="%Y-%m-%d %H:%M:%S")
    ap.add_argument("--label", default="after")
    ap.add_argument("--out", type=Path, help="append the scores to this CSV")
    args = ap.parse_args(argv)
    real = pd.read_csv(args.data, dtype=str)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            out = Path(tmp) / f"s{seed}.csv"
            release(args.data, seed, args.src, args.python, out)
            synth = pd.read_csv(out, dtype=str)
            score = shapes(real, synth, args.datetime_format)
            rows.append({"table": args.data.stem, "label": args.label, "seed": seed, **score})
            print(args.label, seed, " ".join(f"{k}={v:.4f}" for k, v in score.items()),
                  flush=True)  # fmt: skip
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        new = not args.out.exists()
        with open(args.out, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
