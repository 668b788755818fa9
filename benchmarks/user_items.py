"""Real user x item tables for the wide benchmarks (``--items``), read in the benchmark only.

A table is a CSV whose first two columns are the user and the item ids (any ids: numbers or
text; the other columns, a rating or a time, are ignored). The records are the distinct
users, the items the distinct item ids, and a user who holds an item holds it once: a pair
seen twice (two ratings of one movie) is one incidence. Rows and items are numbered in the
order of their ids (numerically when every id is an integer, else as text), so a table reads
the same way every time. A first line whose two fields are not both integers, followed by a
line whose two are, is a header and skipped (``userId,movieId,...``); lines that begin with
``#`` are skipped too (the way to mark a header over text ids).

``--items NAME=PATH`` names a table by its path; a bare ``NAME`` is
``$DPQUERY_EXTRA_DATA_DIR/movielens/NAME.csv`` (MovieLens' ``ml-latest-small`` ratings, as
GroupLens publishes them: ``ratings-2016.csv`` is the release of 2016-10-17, 671 users x
9,066 movies, and ``ratings-2018.csv`` that of 2018, 610 x 9,724; not in the repository, as
their licence allows use, not redistribution). An absent table is skipped with a note.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.items import ItemSets

MOVIELENS = "movielens"  # the folder under $DPQUERY_EXTRA_DATA_DIR


def _integers(values: pd.Series) -> bool:
    """Whether every id is written as an integer."""
    return bool(values.str.fullmatch(r"[+-]?\d+").all())


def read_user_items(path: str | Path) -> ItemSets:
    """The user x item 0/1 table of the CSV at ``path`` (module docstring): one record per
    distinct user id, one item per distinct item id, a repeated pair counted once."""
    path = Path(path)
    try:
        table = pd.read_csv(path, header=None, usecols=[0, 1], dtype=str, skip_blank_lines=True,
                            skipinitialspace=True, keep_default_na=False)  # fmt: skip
    except ValueError as exc:  # fewer than two columns
        msg = f"{path}: needs the user and item ids as its first two columns ({exc})"
        raise ValueError(msg) from exc
    users, items = table[0].str.strip(), table[1].str.strip()
    keep = ~users.str.startswith("#")
    users, items = users[keep], items[keep]
    if len(users) > 1 and not (_integers(users[:1]) and _integers(items[:1])):
        if _integers(users[1:2]) and _integers(items[1:2]):
            users, items = users[1:], items[1:]  # a header line
    missing = np.flatnonzero((users == "").to_numpy() | (items == "").to_numpy())
    if len(missing):
        line = int(users.index[missing[0]]) + 1
        raise ValueError(f"{path}: line {line} has no user or no item id")
    if users.empty:
        raise ValueError(f"{path}: holds no user-item pair")
    rows, cols = _codes(users), _codes(items)
    matrix = sp.csr_array((np.ones(len(rows), np.uint8), (rows, cols)),
                          shape=(int(rows.max()) + 1, int(cols.max()) + 1))  # fmt: skip
    matrix.sum_duplicates()
    matrix.data[:] = 1  # a repeated pair is one incidence
    return ItemSets(matrix)


def _codes(ids: pd.Series) -> np.ndarray:
    """0-based codes of ``ids`` in the order of the ids (numeric when all are integers)."""
    values = ids.astype(np.int64) if _integers(ids) else ids
    return pd.factorize(values, sort=True)[0].astype(np.int64)


def resolve(spec: str) -> tuple[str, Path | str]:
    """``NAME=PATH`` or ``NAME`` (``$DPQUERY_EXTRA_DATA_DIR/movielens/NAME.csv``): the name
    and the path, or why the table is absent."""
    name, sep, given = spec.partition("=")
    if not name:
        raise ValueError(f"--items {spec!r}: give NAME=PATH or NAME")
    if sep:
        path = Path(given)
    else:
        root = os.environ.get("DPQUERY_EXTRA_DATA_DIR")
        if not root:
            return name, "$DPQUERY_EXTRA_DATA_DIR not set (MovieLens' ratings CSVs)"
        path = Path(root) / MOVIELENS / f"{name}.csv"
    return name, path if path.is_file() else f"{path} not found"


def tables(specs: list[str]) -> dict[str, Path]:
    """The tables of ``--items`` that are present, by name; each absent one is skipped with
    a note on stdout."""
    found: dict[str, Path] = {}
    for spec in specs:
        name, path = resolve(spec)
        if isinstance(path, str):
            print(f"skip {name}: {path}", flush=True)
        else:
            found[name] = path
    return found


def describe(items: ItemSets) -> str:
    """The table's shape as docs/wide.md's shape tables give it."""
    lengths = items.lengths()
    top = items.item_frequencies().max()
    return (f"{items.n:,} x {items.d:,}, {items.nnz:,} ones, record length mean / median / "
            f"p90 / max {lengths.mean():.0f} / {np.median(lengths):g} / "
            f"{np.quantile(lengths, 0.9):.0f} / {lengths.max()}, top item {top:.2f}")  # fmt: skip
