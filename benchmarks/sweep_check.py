"""Per-column diagnostics of the breadth sweep's releases (docs/learn.md, "A breadth sweep
of unseen CSVs"). NOT private: it reads the real tables, for diagnosis only.

For each table ``T`` of ``DATA`` with a run in ``RUNS`` (``T.rc``, ``T.time``, ``T.stderr``,
``T.csv``, ``T.domain.json``, as ``dpquery synth`` and ``/usr/bin/time -f "%e %M"`` leave
them), each column: the kind of its real values (numbers, dates, text categories,
identifiers / free text), the kind learned, the share of ``<other>`` in the release, the
missing share real and released, for columns of numbers the KS statistic, the decimals and
the range real and released, for text categories the share of real records whose value the
release holds; sdmetrics' column shape (``bench_raw.score``) where sdmetrics imports. Then
the failures by the sweep's rules, per column.

    PYTHONPATH=src venv-score/bin/python benchmarks/sweep_check.py DATA RUNS OUT.json
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

sys.path.insert(0, str(Path(__file__).parent))
from bench_raw import score
from dpquery.data.numbers import numbers_of

OTHER = "<other>"
ID_SHARE = 0.5  # distinct values over present ones above which a text column is ids / free text
FEW = 50  # a text column of at most this many distinct values is "a category column of few"
DATE_LIKE = re.compile(
    r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}:\d{2}"
    r"|[A-Za-z]{3,9}\.? \d{1,2},? \d{4}|\d{1,2} [A-Za-z]{3,9} \d{4})"
)


def _numbers(col: pd.Series) -> pd.Series:
    """The cells as numbers, as the library reads them (``$1,200``, ``12%`` too)."""
    return numbers_of(col.astype(object).map(lambda v: v.strip() if isinstance(v, str) else v))


def _decimals(col: pd.Series) -> int:
    """The most common count of digits after the dot among the values as written."""
    present = col.dropna().astype(str).str.strip()
    if not len(present):
        return -1
    dec = present.map(lambda s: len(s.split(".", 1)[1]) if "." in s and "e" not in s.lower() else 0)
    return int(dec.mode().iloc[0])


def real_kind(col: pd.Series) -> str:
    present = col.dropna().astype(str).str.strip()
    present = present[present != ""]
    if not len(present):
        return "empty"
    if _numbers(present).notna().all():
        return "numbers"
    if present.str.match(DATE_LIKE).mean() > 0.95:
        return "dates"
    return "ids/free text" if present.nunique() > ID_SHARE * len(present) else "categories"


def _times(col: pd.Series, dayfirst: bool) -> np.ndarray:
    """Dates and times as seconds (pandas' reader, any common format), missing dropped."""
    text = col.dropna().astype(str).str.strip()
    ts = pd.Series([pd.to_datetime(v, dayfirst=dayfirst, errors="coerce", utc=True)
                    for v in text], dtype="datetime64[ns, UTC]")  # fmt: skip
    return (ts.dropna() - pd.Timestamp("1970-01-01", tz="UTC")).dt.total_seconds().to_numpy()


def _without_index(table: pd.DataFrame) -> pd.DataFrame:
    """The table without a row index (a first column with no name, which pandas calls
    ``Unnamed: 0``): the release leaves it out (docs/learn.md, "Messy tables")."""
    if len(table.columns) > 1 and str(table.columns[0]) == "Unnamed: 0":
        return table.iloc[:, 1:]
    return table


def learned_kind(attr: dict[str, Any] | None) -> str:
    if attr is None:
        return "absent"
    if attr["type"] == "numeric":
        return "time" if "time" in attr else "numeric"
    values = [v for v in attr.get("values", []) if v != attr.get("other")]
    return "categorical" if values else "other-only"


def check_table(data: Path, runs: Path, name: str) -> dict[str, Any]:
    rc = int((runs / f"{name}.rc").read_text())
    tline = (runs / f"{name}.time").read_text().strip().splitlines()[-1].split()
    secs, kib = float(tline[0]), float(tline[1])
    err = [
        line
        for line in (runs / f"{name}.stderr").read_text().splitlines()
        if not line.startswith("Command exited") and "% of budget" not in line
    ]
    out: dict[str, Any] = {"table": name, "rc": rc, "seconds": secs, "mib": kib / 1024,
                           "stderr": err}  # fmt: skip
    real = _without_index(pd.read_csv(data / f"{name}.csv", dtype=str, keep_default_na=True))
    out["shape"] = list(real.shape)
    notes = [ln.strip() for ln in (runs / f"{name}.stdout").read_text().splitlines()
             if ln.strip().startswith("note:")]  # fmt: skip
    out["notes"] = notes
    synth_path = runs / f"{name}.csv"
    if rc != 0 or not synth_path.exists():
        out["partial_output"] = synth_path.exists()
        return out
    synth = pd.read_csv(synth_path, dtype=str)
    dom = json.loads((runs / f"{name}.domain.json").read_text())
    attrs = {a["name"]: a for a in dom["attributes"]}
    # sdmetrics' shapes and KS, as the bench scores them (pandas' own reading of both)
    try:
        real_read = _without_index(pd.read_csv(data / f"{name}.csv"))
        row, per = score(real_read, pd.read_csv(synth_path))
        bench = {p["column"]: p for p in per}
        out["bench"] = row
    except Exception as exc:  # a diagnostic: note it, go on
        bench, out["bench_error"] = {}, repr(exc)
    cols = []
    for c in real.columns:
        r = real[c]
        s = synth[c] if c in synth else pd.Series([np.nan] * len(synth), dtype=object)
        kind = real_kind(r)
        d: dict[str, Any] = {
            "column": c,
            "real": kind,
            "distinct": int(r.nunique()),
            "learned": learned_kind(attrs.get(c)),
            "other": float((s.astype(str).str.strip() == OTHER).mean()),
            "miss_real": float(r.isna().mean()),
            "miss_synth": float(s.isna().mean()),
            "shape": bench.get(c, {}).get("shape"),
            "ks_bench": bench.get(c, {}).get("ks"),
        }
        if kind == "numbers":
            rn, sn = _numbers(r).dropna(), _numbers(s).dropna()
            d["text_in_synth"] = float(s.notna().mean() - len(sn) / max(len(s), 1))
            d["ks"] = float(ks_2samp(rn, sn).statistic) if len(sn) else 1.0
            d["dec_real"], d["dec_synth"] = _decimals(r), _decimals(s[_numbers(s).notna()])
            d["range_real"] = [float(rn.min()), float(rn.max())]
            d["range_synth"] = [float(sn.min()), float(sn.max())] if len(sn) else None
        elif kind == "dates":
            fmt = (attrs.get(c) or {}).get("time") or ""
            dayfirst = fmt.find("%d") >= 0 and fmt.find("%d") < fmt.find("%m")
            rt, st = _times(r, dayfirst), _times(s, dayfirst)
            d["ks"] = float(ks_2samp(rt, st).statistic) if len(st) and len(rt) else 1.0
            d["distinct_synth"] = int(s.nunique())
        elif kind == "categories":
            kept = set(s.dropna().astype(str).str.strip()) - {OTHER}
            rs = r.dropna().astype(str).str.strip()
            d["coverage"] = float(rs.isin(kept).mean()) if len(rs) else 1.0
            d["kept_values"] = len(kept)
        d["failures"] = failures(d)
        cols.append(d)
    out["columns"] = cols
    return out


def failures(d: dict[str, Any]) -> list[str]:
    """The sweep's rules for a column released wrong."""
    f = []
    kind = d["real"]
    if kind == "numbers":
        if d["learned"] in ("categorical", "other-only") and (d["other"] > 0.01):
            f.append("numbers as <other>")
        elif d["text_in_synth"] > 0.01:
            f.append("numbers as text")
        if d["miss_synth"] > 0.99 and d["miss_real"] < 0.9:
            f.append("numbers all missing")
    if kind == "dates" and d["learned"] not in ("time", "numeric"):
        f.append("date as text")
    if kind == "categories" and d["distinct"] <= FEW and d.get("coverage", 1) < 0.5:
        f.append("few categories lost")
    if kind in ("numbers", "dates"):
        # KS on the values as numbers (dates on the time axis): sdmetrics' shape of such a
        # column is 1 - KS where the bench reads it as numbers, and a text-column artifact
        # where pandas reads it as text ($1,234; 1/5/2019)
        if d["ks"] > 0.15:
            f.append("KS > 0.15")
    elif kind == "categories":
        if d["shape"] is not None and not math.isnan(d["shape"]) and d["shape"] < 0.8:
            f.append("shape < 0.8")
    return f


def main(data: str, runs: str, out: str) -> None:
    names = sorted(p.stem for p in Path(runs).glob("*.rc"))
    result = []
    for name in names:
        t = check_table(Path(data), Path(runs), name)
        result.append(t)
        fails = [f"{c['column']}: {', '.join(c['failures'])}" for c in t.get("columns", [])
                 if c["failures"]]  # fmt: skip
        print(name, t["rc"], t["seconds"], round(t["mib"]), t.get("bench", {}).get("shapes"),
              "|", "; ".join(fails), flush=True)  # fmt: skip
    Path(out).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:4])
