"""A release from a raw table, scored as a user would judge it, beside the peers.

Tables (``$DPQUERY_DATA_DIR``), prepared once into a cache folder (``--cache``, by default
``~/.cache/dpquery/bench_raw``; never into the repository):

- ``adult``: UCI Adult's ``adult/adult.data.gz`` (32,561 rows) with the header of
  ``adult.names`` and ``income``; cells stripped, ``?`` written as an empty (missing) cell.
- ``pums``: ``acs/smartnoise_PUMS_1000.csv`` (1,000 rows) as it is.
- ``nist``: 20,000 rows of ``acs/nist_national2019.csv.gz`` (``DataFrame.sample``, seed 0),
  ``N`` written as an empty (missing) cell.
- ``cps``: ``census_cps/hdmm_CPS.csv.gz`` (49,427 rows: income, age, marital, race, sex).
- ``ma``: ``acs/nist_ma2019.csv.gz`` (7,634 rows, the columns of ``nist``), ``N`` missing.
- ``kdd``: 50,000 rows of KDD Cup 99's ``kdd99/kddcup.data_10_percent.gz`` (494,021 rows, no
  header; ``DataFrame.sample``, seed 0) with the 41 names of ``kddcup.names`` and ``label``
  (the attack type, e.g. ``normal.``), every cell as written. No hand-written domain.
- ``taxis``, ``diamonds``, ``titanic``, ``planets``: seaborn's sample tables as a data
  scientist downloads them (repository mwaskom/seaborn-data, BSD-3-Clause, commit 71e2436;
  the sources are listed in its README), read from ``$DPQUERY_EXTRA_DATA_DIR/seaborn/NAME.csv``
  and copied byte for byte. They are not in the repository: without the variable, or the
  file, the table is skipped with a printed note. No hand-written domain.
- any raw CSV: ``--csv NAME=PATH`` adds a table NAME, the file copied byte for byte (no
  codebook: ``dpquery`` and the peers, no ``dpquery-domain``).

Each release is at total epsilon 1, delta 1e-9, and starts from the prepared CSV alone:

- ``dpquery``: the whole ``dpquery synth --data T.csv --epsilon 1 --delta 1e-9 --seed S
  --neighbours R`` command (``--neighbours``: ``add-remove``, the library's default, or
  ``replace-one``, as the ``second`` results were measured; no ``--domain``: the domain is
  learned privately, docs/learn.md), in its own process. ``dpquery-domain``: the same with
  the table's hand-written domain (``nist``: the
  SDNist schema's domain, ``dpquery.datasets.domains.acs_domain`` (``ma``: its own schema),
  over the raw sample with
  its literal ``N``, missing in the numeric columns as ``dpquery.datasets`` reads it; its
  two weight columns are not in that domain; ``adult``, ``pums``, ``cps``: codebooks written
  from the tables' public documentation, :func:`adult_codebook` and the like).
- the peers, with the scripts of ``$DPQUERY_PEERS_DIR`` (by default
  ``$DPQUERY_DATA_DIR/../peers/rawcsv``) as they are: ``sn-aim`` and ``sn-mst`` (smartnoise-synth,
  interpreter ``$DPQUERY_SN_PYTHON``, preprocessor_eps 1/3) and ``dpmm-aim`` and ``dpmm-mst``
  (dpmm, interpreter ``$DPQUERY_DPMM_PYTHON``, proc_epsilon 0.1). A peer whose interpreter is
  not given is skipped with a printed note; a run is stopped after ``--timeout`` seconds.

Scores of a synthetic table against the real one (NOT private, for benchmarking only). A
column is numeric when the real column reads as numbers with more than 20 distinct values,
or with a fractional value, otherwise categorical (values compared as text, integer-valued
floats written as integers):

- ``shapes``: sdmetrics' QualityReport "Column Shapes" (KSComplement for numeric columns,
  TVComplement for categorical ones), overall and per column. sdmetrics is imported lazily
  (the ``scoring`` extra, in a venv of its own); without it these scores are left empty
  with a printed note.
- ``pairs``: every pair of columns binned on the REAL table's edges (10 quantile bins of a
  numeric column, missing values a bin of their own; categories as they are, values the real
  column lacks one more bin), scored 1 - total variation distance of the 2-way tables;
  the mean and the worst pair.
- ``ks``: each numeric column's two-sample KS statistic over the non-missing values; the mean
  and the worst column (1 when the synthetic column has no numbers).
- ``seconds`` (wall) and ``peak_mb`` (the child's maximum resident set size, ``os.wait4``).

Rows are appended to ``docs/results/raw/<out>.csv`` as each run ends, per-column scores to
``<out>_columns.csv``, and the table (mean over seeds) to ``<out>.md``::

    nice .venv/bin/python benchmarks/bench_raw.py --tables adult pums nist --seeds 10 11 \
        --methods dpquery dpquery-domain --out first
    DPQUERY_DPMM_PYTHON=venv-dpmm/bin/python nice .venv/bin/python benchmarks/bench_raw.py \
        --methods dpmm-aim dpmm-mst --seeds 10 --out first
    .venv/bin/python benchmarks/bench_raw.py --report first     # the table again
    .venv/bin/python benchmarks/bench_raw.py --rescore first    # score the kept outputs again
    .venv/bin/python benchmarks/bench_raw.py --rescore first --tables nist --drop PWGTP WGTP \
        --into common
    nice .venv/bin/python benchmarks/bench_raw.py --tables adult cps --methods dpquery \
        --neighbours replace-one --out ro     # the release under replace-one neighbours
    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/bench_raw.py \
        --tables taxis diamonds titanic planets --methods dpquery --out heldout  # seaborn's
    nice .venv/bin/python benchmarks/bench_raw.py --csv mine=path/to/T.csv \
        --methods dpquery sn-mst --out mine   # any raw CSV (only it: --tables mine)
"""

from __future__ import annotations

import argparse
import csv
import gzip
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "raw"
EPSILON = 1.0
DELTA = 1e-9
NUMERIC_MIN_DISTINCT = 20
PAIR_BINS = 10
NIST_ROWS = 20_000
KDD_ROWS = 50_000
TABLES = ("adult", "pums", "nist", "cps", "ma", "kdd")
SEABORN = ("taxis", "diamonds", "titanic", "planets")  # in $DPQUERY_EXTRA_DATA_DIR/seaborn
EXTRA: dict[str, Path] = {}  # --csv NAME=PATH: raw CSVs given on the command line
NIST_NUMERIC = ["AGEP", "PINCP", "POVPIP", "DENSITY"]
METHODS = ("dpquery", "dpquery-domain", "sn-aim", "sn-mst", "dpmm-aim", "dpmm-mst")
PEERS = {  # method: (interpreter env, script, algorithm)
    "sn-aim": ("DPQUERY_SN_PYTHON", "run_sn.py", "aim"),
    "sn-mst": ("DPQUERY_SN_PYTHON", "run_sn.py", "mst"),
    "dpmm-aim": ("DPQUERY_DPMM_PYTHON", "run_dpmm.py", "aim"),
    "dpmm-mst": ("DPQUERY_DPMM_PYTHON", "run_dpmm.py", "mst"),
}
FIELDS = ["table", "rows", "method", "seed", "status", "seconds", "peak_mb", "shapes",
          "pairs_mean", "pairs_min", "ks_mean", "ks_max", "note"]  # fmt: skip
COLUMN_FIELDS = ["table", "method", "seed", "column", "kind", "shape_metric", "shape", "ks"]


def data_dir() -> Path:
    return Path(os.environ.get("DPQUERY_DATA_DIR", Path.home() / ".cache" / "dpquery"))


def extra_csv(table: str) -> Path | str:
    """The raw CSV of a table not in ``$DPQUERY_DATA_DIR`` (``--csv`` or seaborn's), or why
    it is absent."""
    if table in EXTRA:
        path = EXTRA[table]
    else:
        root = os.environ.get("DPQUERY_EXTRA_DATA_DIR")
        if not root:
            return "$DPQUERY_EXTRA_DATA_DIR not set (seaborn's tables: mwaskom/seaborn-data)"
        path = Path(root) / "seaborn" / f"{table}.csv"
    return path if path.is_file() else f"{path} not found"


def peers_dir() -> Path:
    return Path(os.environ.get("DPQUERY_PEERS_DIR", data_dir().parent / "peers" / "rawcsv"))


# ---------------------------------------------------------------- the raw tables


def _adult_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("|") and ":" in line:
            names.append(line.split(":", 1)[0].strip())
    return [*names, "income"]


def _kdd_names(path: Path) -> list[str]:
    """The 41 feature names of ``kddcup.names`` (its first line lists the labels) and
    ``label``."""
    names = [line.split(":", 1)[0].strip() for line in path.read_text().splitlines()[1:]
             if ":" in line]  # fmt: skip
    return [*names, "label"]


def prepare(table: str, cache: Path) -> Path:
    """The raw CSV of ``table`` in ``cache`` (written once)."""
    out = cache / f"{table}.csv"
    if out.exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    d = data_dir()
    if table == "adult":
        names = _adult_names(d / "adult" / "adult.names")
        with gzip.open(d / "adult" / "adult.data.gz", "rt") as f:
            df = pd.read_csv(f, header=None, names=names, dtype=str, skipinitialspace=True)
        df = df.dropna(how="all").apply(lambda c: c.str.strip()).replace("?", np.nan)
    elif table == "pums":
        df = pd.read_csv(d / "acs" / "smartnoise_PUMS_1000.csv", dtype=str)
    elif table == "cps":
        df = pd.read_csv(d / "census_cps" / "hdmm_CPS.csv.gz", dtype=str)
    elif table in ("nist", "ma"):
        if table == "nist":
            raw = pd.read_csv(d / "acs" / "nist_national2019.csv.gz", dtype=str)
            raw = raw.sample(n=NIST_ROWS, random_state=0).reset_index(drop=True)
        else:
            raw = pd.read_csv(d / "acs" / "nist_ma2019.csv.gz", dtype=str)
        hand = raw.copy()  # as dpquery.datasets reads it: N is missing in the numeric columns
        hand[NIST_NUMERIC] = hand[NIST_NUMERIC].replace("N", np.nan)
        hand.to_csv(cache / f"{table}_with_N.csv", index=False)
        df = raw.replace("N", np.nan)
    elif table in SEABORN or table in EXTRA:  # as the user has it: copied byte for byte
        src = extra_csv(table)
        if isinstance(src, str):
            raise FileNotFoundError(src)
        tmp = out.with_suffix(".tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(out)
        return out
    elif table == "kdd":
        names = _kdd_names(d / "kdd99" / "kddcup.names")
        raw = pd.read_csv(d / "kdd99" / "kddcup.data_10_percent.gz", header=None, names=names,
                          dtype=str, keep_default_na=False)  # fmt: skip
        df = raw.sample(n=KDD_ROWS, random_state=0).reset_index(drop=True)
    else:
        raise ValueError(f"unknown table {table!r}")
    tmp = out.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    tmp.replace(out)
    return out


def _missing(values: list[str]) -> dict[str, Any]:
    return {"values": [*values, "Unknown"], "missing": "Unknown"}


def adult_codebook(names: Path) -> dict[str, Any]:
    """Adult's codebook as a user writes it from ``adult.names`` (the categories it lists; a
    missing value in the three columns the UCI page says have them) and the documented
    ranges (age 17..90, hours 1..99, capital gains up to 99,999 with most at 0)."""
    listed: dict[str, list[str]] = {}
    for line in names.read_text().splitlines():
        if line and not line.startswith("|") and ":" in line:
            key, rest = line.split(":", 1)
            if "continuous" not in rest:
                listed[key.strip()] = [v.strip() for v in rest.strip().rstrip(".").split(",")]
    clip = {"out_of_range": "clip"}
    book: dict[str, Any] = {
        "age": {"edges": [*range(15, 95, 5), 95], **clip},
        "workclass": _missing(listed["workclass"]),
        "fnlwgt": {"edges": [1e4, 5e4, 1e5, 1.5e5, 2e5, 2.5e5, 3e5, 4e5, 5e5, 1.5e6], **clip},
        "education": listed["education"],
        "education-num": list(range(1, 17)),
        "marital-status": listed["marital-status"],
        "occupation": _missing(listed["occupation"]),
        "relationship": listed["relationship"],
        "race": listed["race"],
        "sex": listed["sex"],
        "capital-gain": {"edges": [0, 1, 2000, 3000, 4000, 5000, 7500, 10000, 15000, 20000,
                                   50000, 100000], **clip},
        "capital-loss": {"edges": [0, 1, 1000, 1500, 1750, 2000, 2500, 5000], **clip},
        "hours-per-week": {"edges": [1, 10, 20, 30, 35, 40, 41, 45, 50, 55, 60, 70, 80, 100],
                           **clip},
        "native-country": _missing(listed["native-country"]),
        "income": ["<=50K", ">50K"],
    }  # fmt: skip
    return book


def pums_codebook() -> dict[str, Any]:
    """PUMS's codebook from its smartnoise metadata (``PUMS.yaml``: age 0..100, income
    0..500,000) and the census codes of its categorical columns."""
    return {
        "age": {"min": 0, "max": 100, "bins": 20, "out_of_range": "clip"},
        "sex": [0, 1],
        "educ": list(range(1, 17)),
        "race": list(range(1, 7)),
        "income": {"edges": [0, 1, 5000, 10000, 20000, 30000, 40000, 50000, 75000, 100000,
                             150000, 250000, 500000], "out_of_range": "clip"},
        "married": [0, 1],
    }  # fmt: skip


def cps_codebook() -> dict[str, Any]:
    """CPS's codebook from HDMM's description (income in dollars, age 15..90, marital 1..7,
    race 1..4, sex 1..2)."""
    return {
        "income": {"edges": [0, 5000, 10000, 15000, 20000, 25000, 30000, 40000, 50000, 60000,
                             75000, 100000, 150000, 250000, 500000], "out_of_range": "clip"},
        "age": {"edges": [*range(15, 95, 5), 95], "out_of_range": "clip"},
        "marital": list(range(1, 8)),
        "race": list(range(1, 5)),
        "sex": [1, 2],
    }  # fmt: skip


def hand_domain(table: str, cache: Path) -> tuple[Path, Path] | None:
    """(domain or codebook JSON, the raw CSV it encodes) for a table with a hand-written
    domain: nist's SDNist schema, codebooks for the others written from their public
    documentation."""
    data = prepare(table, cache)
    path = cache / f"{table}.hand-domain.json"
    if table in ("nist", "ma"):
        from dpquery.datasets import domains

        if not path.exists():
            name = "national" if table == "nist" else "ma"
            schema = data_dir() / "acs" / f"nist_{name}2019-schema.json"
            domains.acs_domain(schema).save(path)
        return path, cache / f"{table}_with_N.csv"
    books = {"adult": lambda: adult_codebook(data_dir() / "adult" / "adult.names"),
             "pums": pums_codebook, "cps": cps_codebook}  # fmt: skip
    if table not in books:  # kdd: kddcup.names lists no values of its symbolic columns
        return None
    path.write_text(json.dumps(books[table](), indent=1) + "\n")
    return path, data


# ---------------------------------------------------------------- running one release


def run_child(cmd: list[str], timeout: float, log: Path) -> tuple[str, float, float]:
    """(status, wall seconds, peak MB) of one command in its own process group."""
    t0 = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        status = None
        while True:
            pid, code, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = "ok" if os.waitstatus_to_exitcode(code) == 0 else "failed"
                break
            if time.perf_counter() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                _, code, ru = os.wait4(proc.pid, 0)
                status = "timeout"
                break
            time.sleep(0.2)
        proc.returncode = 0  # reaped above
    return status, time.perf_counter() - t0, ru.ru_maxrss / 1024


def command(
    method: str, table: str, seed: int, cache: Path, out: Path, neighbours: str = "add-remove"
) -> list[str] | str:
    """The command of one release, or why it is skipped."""
    data = prepare(table, cache)
    if method in ("dpquery", "dpquery-domain"):
        cli = "import sys; from dpquery.cli import main; sys.exit(main())"
        cmd = [sys.executable, "-c", cli, "synth",
               "--data", str(data), "--epsilon", str(EPSILON), "--delta", str(DELTA),
               "--seed", str(seed), "--neighbours", neighbours,
               "--out", str(out), "--overwrite", "--quiet"]  # fmt: skip
        if method == "dpquery-domain":
            hand = hand_domain(table, cache)
            if hand is None:
                return "no hand-written domain fits the raw CSV"
            cmd[cmd.index("--data") + 1] = str(hand[1])
            cmd += ["--domain", str(hand[0])]
        return cmd
    env, script, algo = PEERS[method]
    python = os.environ.get(env)
    if not python:
        return f"${env} not set"
    return [python, str(peers_dir() / script), str(data), algo, str(seed), str(out)]


# ---------------------------------------------------------------- scoring


def _text(col: pd.Series) -> pd.Series:
    """Values as text without the spaces around them (``"C7 "`` is ``C7``: as the library
    reads a category, ``dpquery.data.domain.cell_text``); integer-valued numbers written as
    integers, missing as None; a boolean (pandas reads ``True``/``False`` as one) as it is
    written, ``True``."""
    col = _unbool(col)
    num = pd.to_numeric(col, errors="coerce")
    out = (
        col.astype(object)
        .where(col.notna(), None)
        .map(lambda v: None if v is None else str(v).strip())
    )
    isint = num.notna() & np.isclose(num.fillna(0) % 1, 0)
    out[isint] = num[isint].astype("int64").astype(str)
    return out


def _unbool(col: pd.Series) -> pd.Series:
    """Booleans as the text they were read from (``True``), so that a column pandas reads as
    booleans in one table and as text in the other (a release's ``<other>`` among them)
    compares value for value; a column without booleans is returned as it is."""
    if col.dtype == bool or (
        col.dtype == object and col.map(lambda v: isinstance(v, (bool, np.bool_))).any()
    ):
        return col.map(lambda v: str(bool(v)) if isinstance(v, (bool, np.bool_)) else v)
    return col


def _seconds(col: pd.Series) -> pd.Series:
    """ISO 8601 dates and times (pandas' reader, not the library's) as seconds since 1970;
    NaN for anything else. A time with a zone (``2013-01-01T06:00:00Z``) is read in UTC and
    one without as if in UTC, so that a column of either reads (pandas refuses to subtract
    one kind from the other)."""
    ts = pd.to_datetime(col.astype(object), format="ISO8601", errors="coerce", utc=True)
    return (ts - pd.Timestamp("1970-01-01", tz="UTC")).dt.total_seconds()


def _is_dates(col: pd.Series) -> bool:
    """Whether every value present in the real column is an ISO 8601 date or time (all
    with a ``-`` between year and month, so that numbers such as years never are)."""
    present = col.dropna().astype(str)
    return (
        bool(len(present))
        and bool(present.str.match(r"\d{4}-\d{2}-\d{2}").all())
        and bool(_seconds(present).notna().all())
    )


_OTHER_DAYS = ("%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y", "%m-%d-%Y", "%d-%m-%Y", "%Y/%m/%d", "%Y.%m.%d")
OTHER_DATES = (
    *(f"{day}{time}" for day in _OTHER_DAYS for time in ("", " %H:%M", " %H:%M:%S")),
    "%H:%M",
    "%H:%M:%S",
)
"""With ``--dates-any`` (off by default, so that earlier results score as they did): the
formats besides ISO 8601 in which a real column whose every value reads (pandas'
``strptime``, which reads ``10/3/2016`` under ``%m/%d/%Y``) is scored on the time axis too,
the first that reads every value (month first before day first when both do); a time of
day alone (``7:05``, ``00:20``) on the axis of one day."""
DATES_ANY = False


def _other_format(col: pd.Series) -> str | None:
    """The first of :data:`OTHER_DATES` that reads every value present in ``col``."""
    present = col.dropna().astype(str).str.strip()
    written = r"\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}|\d{1,2}:\d{2}(:\d{2})?$"
    if not len(present) or not present.str.match(written).all():
        return None
    for fmt in OTHER_DATES:
        if pd.to_datetime(present, format=fmt, errors="coerce").notna().all():
            return fmt
    return None


def _seconds_in(col: pd.Series, fmt: str) -> pd.Series:
    ts = pd.to_datetime(col.astype(object).astype(str).str.strip(), format=fmt, errors="coerce")
    return (ts - pd.Timestamp("1970-01-01")).dt.total_seconds()


def on_time_axis(
    real: pd.DataFrame, synth: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Both tables with the real table's date columns as seconds since 1970 (a value of the
    synthetic table that is not a date: missing), so that KS, the pairs' bins and the column
    shapes (sdmetrics' KSComplement, as it scores datetimes) read them as quantities; and the
    names of those columns. ISO 8601 dates; with :data:`DATES_ANY`, those of
    :data:`OTHER_DATES` too."""
    cols = [
        c for c in real.columns if not pd.api.types.is_numeric_dtype(real[c]) and _is_dates(real[c])
    ]
    other = {}
    if DATES_ANY:
        for c in real.columns:
            if c not in cols and not pd.api.types.is_numeric_dtype(real[c]):
                fmt = _other_format(real[c])
                if fmt is not None:
                    other[c] = fmt
    if not cols and not other:
        return real, synth, cols
    real, synth = real.copy(), synth.copy()
    for c in cols:
        real[c], synth[c] = _seconds(real[c]), _seconds(synth[c])
    for c, fmt in other.items():
        real[c], synth[c] = _seconds_in(real[c], fmt), _seconds_in(synth[c], fmt)
    return real, synth, [*cols, *other]


def column_kinds(real: pd.DataFrame) -> dict[str, str]:
    kinds = {}
    for c in real.columns:
        num = pd.to_numeric(_unbool(real[c]), errors="coerce")
        fractional = bool((num.dropna() % 1 != 0).any())
        numeric = num.notna().sum() == real[c].notna().sum() and (
            fractional or num.nunique() > NUMERIC_MIN_DISTINCT
        )
        kinds[c] = "numeric" if numeric else "categorical"
    return kinds


def _codes(real: pd.Series, synth: pd.Series, kind: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Both columns binned on the real column's edges: (real codes, synth codes, bins)."""
    if kind == "numeric":
        r = pd.to_numeric(real, errors="coerce").to_numpy(float)
        s = pd.to_numeric(synth, errors="coerce").to_numpy(float)
        qs = np.nanquantile(r, np.linspace(0, 1, PAIR_BINS + 1)[1:-1])
        edges = np.unique(qs)
        k = len(edges) + 1

        def code(x: np.ndarray) -> np.ndarray:
            c = np.searchsorted(edges, x, side="right")
            return np.where(np.isnan(x), k, c)

        return code(r), code(s), k + 1
    rt, st = _text(real), _text(synth)
    cats = {v: i for i, v in enumerate(pd.unique(rt))}  # None included when present
    other = len(cats)
    rc = np.array([cats[v] for v in rt])
    sc = np.array([cats.get(v, other) for v in st])
    return rc, sc, other + 1


def score(real: pd.DataFrame, synth: pd.DataFrame) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    synth = synth.reindex(columns=real.columns)  # a missing column scores as all missing
    real, synth, times = on_time_axis(real, synth)
    kinds = column_kinds(real) | dict.fromkeys(times, "numeric")
    per_col: dict[str, dict[str, Any]] = {c: {"column": c, "kind": kinds[c]} for c in real}
    ks = []
    for c, kind in kinds.items():
        if kind != "numeric":
            continue
        r = pd.to_numeric(real[c], errors="coerce").dropna().to_numpy()
        s = pd.to_numeric(synth[c], errors="coerce").dropna().to_numpy()
        per_col[c]["ks"] = float(ks_2samp(r, s).statistic) if len(s) else 1.0
        ks.append(per_col[c]["ks"])
    codes = {c: _codes(real[c], synth[c], kinds[c]) for c in real}
    pairs = []
    for a, b in itertools.combinations(real.columns, 2):
        ra, sa, ka = codes[a]
        rb, sb, kb = codes[b]
        p = np.bincount(ra * kb + rb, minlength=ka * kb) / len(ra)
        q = np.bincount(sa * kb + sb, minlength=ka * kb) / max(len(sa), 1)
        pairs.append(max(0.0, 1 - 0.5 * np.abs(p - q).sum()))
    shapes = _shapes(real, synth, kinds, per_col)
    row = {
        "shapes": shapes,
        # a table of one column has no pair
        "pairs_mean": float(np.mean(pairs)) if pairs else None,
        "pairs_min": float(np.min(pairs)) if pairs else None,
        "ks_mean": float(np.mean(ks)) if ks else None,
        "ks_max": float(np.max(ks)) if ks else None,
    }
    return row, list(per_col.values())


_SDMETRICS_NOTE: list[str] = []


def _shapes(real: pd.DataFrame, synth: pd.DataFrame, kinds: dict[str, str],
            per_col: dict[str, dict[str, Any]]) -> float | None:  # fmt: skip
    try:
        from sdmetrics.reports.single_table import QualityReport
    except ImportError:
        if not _SDMETRICS_NOTE:
            _SDMETRICS_NOTE.append("x")
            print("note: sdmetrics is not installed (the 'scoring' extra, in a venv of its "
                  "own: it pins pandas<3): the column-shape scores are left empty",
                  flush=True)  # fmt: skip
        return None
    r, s = pd.DataFrame(index=real.index), pd.DataFrame(index=synth.index)
    meta: dict[str, Any] = {"columns": {}}
    for c, kind in kinds.items():
        if kind == "numeric":
            r[c] = pd.to_numeric(real[c], errors="coerce").astype(float)
            s[c] = pd.to_numeric(synth[c], errors="coerce").astype(float)
            meta["columns"][c] = {"sdtype": "numerical"}
        else:
            r[c] = _text(real[c]).astype(object)
            s[c] = _text(synth[c]).astype(object)
            meta["columns"][c] = {"sdtype": "categorical"}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = QualityReport()
        report.generate(r, s, meta, verbose=False)
        details = report.get_details("Column Shapes")
    for _, d in details.iterrows():
        per_col[d["Column"]]["shape_metric"] = d["Metric"]
        per_col[d["Column"]]["shape"] = float(d["Score"])
    return float(report.get_properties().set_index("Property").loc["Column Shapes", "Score"])


# ---------------------------------------------------------------- the run and its table


def append(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerows(rows)


def _fmt(v: Any, digits: int = 3) -> str:
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{digits}f}"


def report(name: str) -> str:
    runs = pd.read_csv(RESULTS / f"{name}.csv")
    runs = runs.drop_duplicates(["table", "method", "seed"], keep="last")  # a run repeated
    ok = runs[runs["status"] == "ok"]
    agg = ok.groupby(["table", "method"], sort=True).agg(
        seeds=("seed", lambda s: " ".join(str(int(x)) for x in s)),
        shapes=("shapes", "mean"), pairs_mean=("pairs_mean", "mean"),
        pairs_min=("pairs_min", "mean"), ks_mean=("ks_mean", "mean"), ks_max=("ks_max", "mean"),
        seconds=("seconds", "mean"), peak_mb=("peak_mb", "max"),
    )  # fmt: skip
    lines = ["| table | method | seeds | shapes | pairs mean | pairs worst | KS mean | KS worst "
             "| seconds | peak MB |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (t, m), r in agg.iterrows():
        lines.append(f"| {t} | {m} | {r.seeds} | {_fmt(r.shapes)} | {_fmt(r.pairs_mean)} | "
                     f"{_fmt(r.pairs_min)} | {_fmt(r.ks_mean)} | {_fmt(r.ks_max)} | "
                     f"{r.seconds:.0f} | {r.peak_mb:.0f} |")  # fmt: skip
    bad = runs[runs["status"] != "ok"]
    for _, r in bad.iterrows():
        lines.append(f"\n- {r.table} {r.method} seed {r.seed}: {r.status} ({r.note})")
    text = "\n".join(lines) + "\n"
    (RESULTS / f"{name}.md").write_text(text)
    return text


def synth_table(path: Path, method: str) -> pd.DataFrame:
    synth = pd.read_csv(path, low_memory=False)
    if method == "dpquery-domain":  # the hand domain's literal N is missing
        synth = synth.replace("N", np.nan)
    return synth


def rescore(
    name: str,
    cache: Path,
    drop: list[str] | None = None,
    into: str | None = None,
    tables: list[str] | None = None,
) -> None:
    """Score the kept outputs of NAME's runs again (after a change to the scores), into
    ``into`` (by default NAME itself); ``drop``: columns left out of every score (e.g. those
    a hand-written domain does not release, to compare on the columns both release);
    ``tables``: only these tables' runs."""
    runs = pd.read_csv(RESULTS / f"{name}.csv", keep_default_na=False)
    if tables is not None:
        runs = runs[runs["table"].isin(tables)]
    runs = runs.drop_duplicates(["table", "method", "seed"], keep="last")
    rows, cols = [], []
    for row in runs.to_dict("records"):
        out = cache / "runs" / f"{row['table']}.{row['method']}.s{row['seed']}.csv"
        if row["status"] == "ok":
            real = pd.read_csv(prepare(row["table"], cache))
            real = real.drop(columns=[c for c in drop or [] if c in real.columns])
            scores, c = score(real, synth_table(out, row["method"]))
            row.update({k: (round(v, 4) if v is not None else None) for k, v in scores.items()})
            key = {"table": row["table"], "method": row["method"], "seed": row["seed"]}
            cols += [{**key, **x} for x in c]
        rows.append(row)
    into = into or name
    for path in (RESULTS / f"{into}.csv", RESULTS / f"{into}_columns.csv"):
        path.unlink(missing_ok=True)
    append(RESULTS / f"{into}.csv", FIELDS, rows)
    append(RESULTS / f"{into}_columns.csv", COLUMN_FIELDS, cols)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+",
                    help=f"of {', '.join(TABLES + SEABORN)} and the names given by --csv "
                         "(default: the first six and those of --csv)")  # fmt: skip
    ap.add_argument(
        "--csv",
        nargs="+",
        default=[],
        metavar="NAME=PATH",
        help="a raw CSV with no codebook, run as table NAME",
    )
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[10, 11])
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    cache = os.environ.get("DPQUERY_BENCH_CACHE", Path.home() / ".cache" / "dpquery" / "bench_raw")
    ap.add_argument("--cache", type=Path, default=Path(cache))
    ap.add_argument("--out", default="quick")
    ap.add_argument("--neighbours", choices=("add-remove", "replace-one"), default="add-remove",
                    help="dpquery's neighbouring relation (the library's default: add-remove); "
                         "the peers are not given it")  # fmt: skip
    ap.add_argument("--report", metavar="NAME", help="print the table of NAME and exit")
    ap.add_argument("--rescore", metavar="NAME", help="score NAME's kept outputs again")
    ap.add_argument("--drop", nargs="+", metavar="COL", help="with --rescore: columns left out")
    ap.add_argument(
        "--dates-any",
        action="store_true",
        help="score dates in the common formats of OTHER_DATES on the time axis too",
    )
    ap.add_argument("--into", metavar="NAME", help="with --rescore: the results' name")
    args = ap.parse_args(argv)
    global DATES_ANY
    DATES_ANY = args.dates_any
    for spec in args.csv:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path or name in TABLES + SEABORN:
            ap.error(f"--csv {spec!r}: give NAME=PATH, NAME not one of the tables' names")
        EXTRA[name] = Path(path)
    given = args.tables
    args.tables = given or [*TABLES, *EXTRA]
    unknown = [t for t in args.tables if t not in TABLES + SEABORN and t not in EXTRA]
    if unknown:
        ap.error(f"unknown table(s) {unknown}: give a raw CSV with --csv NAME=PATH")
    if args.rescore:
        rescore(args.rescore, args.cache, args.drop, args.into, given)
        print(report(args.into or args.rescore))
        return
    if args.report:
        print(report(args.report))
        return
    work = args.cache / "runs"
    work.mkdir(parents=True, exist_ok=True)
    for table in args.tables:
        if table in SEABORN or table in EXTRA:
            src = extra_csv(table)
            if isinstance(src, str) and not (args.cache / f"{table}.csv").exists():
                print(f"skip {table}: {src}", flush=True)
                continue
        data = prepare(table, args.cache)
        real = pd.read_csv(data)
        for method in args.methods:
            for seed in args.seeds:
                out = work / f"{table}.{method}.s{seed}.csv"
                cmd = command(method, table, seed, args.cache, out, args.neighbours)
                if isinstance(cmd, str):
                    print(f"skip {table} {method}: {cmd}", flush=True)
                    break
                status, secs, peak = run_child(cmd, args.timeout, out.with_suffix(".log"))
                row: dict[str, Any] = {"table": table, "rows": len(real), "method": method,
                                       "seed": seed, "status": status, "seconds": round(secs, 1),
                                       "peak_mb": round(peak), "note": ""}  # fmt: skip
                cols: list[dict[str, Any]] = []
                if status == "ok" and not out.exists():
                    status = "failed"
                if status == "ok":
                    synth = synth_table(out, method)
                    scores, cols = score(real, synth)
                    row.update({k: (round(v, 4) if v is not None else None)
                                for k, v in scores.items()})  # fmt: skip
                    row["note"] = f"{len(synth)} rows out"
                else:
                    tail = out.with_suffix(".log").read_text().strip().splitlines()[-1:]
                    row["note"] = (tail[0][:200] if tail else "").replace("|", "/")
                print(json.dumps(row), flush=True)
                append(RESULTS / f"{args.out}.csv", FIELDS, [row])
                key = {"table": table, "method": method, "seed": seed}
                append(RESULTS / f"{args.out}_columns.csv", COLUMN_FIELDS,
                       [{**key, **c} for c in cols])  # fmt: skip
    if (RESULTS / f"{args.out}.csv").exists():
        print(report(args.out))


if __name__ == "__main__":
    main()
