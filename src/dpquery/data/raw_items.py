"""Item data from a raw ``user,item`` table, as a data holder keeps it.

A ratings or purchases table such as ``userId,movieId,rating,timestamp`` (a header line, raw
ids of any kind, other columns) is read as item sets without hand preparation: each distinct
user id is one record (one person), the items are the lines of a public catalogue (an item
list, one id per line) in its order, and a line whose item is not in the catalogue is
dropped. That rule maps each record ``x`` to ``x`` intersected with the catalogue, a function
of the record alone fixed before the data is read, so a neighbouring table (one user added,
removed or replaced) gives neighbouring item sets and every sensitivity of the release holds
unchanged. A line without a user id belongs to no record and is dropped too.

The released item sets are written back in the same form (:func:`write_raw_item_sets`): a
first line ``# rows M items D`` (so that records without items count), the header of the
two columns, then one ``user,item`` line per one, with synthetic user ids ``0..M-1`` (never
the real ones) and the catalogue's item ids. That file reads back through
:func:`read_raw_items` with the same catalogue, its first line giving the number of records
(users without a line count).
"""

from __future__ import annotations

import csv
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pandas.io.common import get_handle

from dpquery.data.encode import _SIZES, SEPARATORS, check_header
from dpquery.data.items import ItemSets
from dpquery.errors import DPQueryError
from dpquery.io import atomic_write

_INTEGER = re.compile(r"[+-]?\d+")
_LOOKAHEAD = 50  # lines read to find the first data line of a file (comments skipped)


@dataclass(frozen=True)
class ItemLabels:
    """What the released item sets are written with: the catalogue's item ids (column ``j``
    of the item sets is ``items[j]``) and the names of the user and item columns."""

    items: tuple[str, ...]
    user_column: str
    item_column: str


def _lines(path: Path, count: int) -> list[str]:
    """Up to ``count`` first lines of ``path``, decompressed by its suffix as pandas does (a
    UTF-8 byte order mark dropped)."""
    if not path.is_file():
        raise DPQueryError(f"item file {path} does not exist")
    try:
        with get_handle(path, "r", compression="infer", encoding="utf-8-sig") as handles:
            out = []
            for _ in range(count):
                line = handles.handle.readline()
                if not line:
                    break
                out.append(str(line).rstrip("\r\n"))
            return out
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DPQueryError(f"cannot read {path}: {exc}") from None


def raw_header(path: str | Path) -> list[str] | None:
    """The column names of a raw ``user,item`` table at ``path``, or None when the file is a
    ``row item`` file (its first data line two integers). Only the first lines are read: a
    header is the schema (public), no record is read. A first line ``# rows M items D`` (as
    :func:`write_raw_item_sets` writes) is skipped; an empty file has none."""
    layout = _layout(Path(path))
    return None if layout is None else layout[0]


def _layout(path: Path) -> tuple[list[str], str, int] | None:
    """A raw table's header names, separator and the lines before the header (None: a
    ``row item`` file)."""
    lines = _lines(path, _LOOKAHEAD)
    if all(not line.strip() for line in lines):
        return None  # empty: the reader of either form says so
    skip = 1 if _SIZES.match(lines[0].lstrip()) else 0
    body = next((line for line in lines[skip:] if line.strip()), None)
    if body is None or (not skip and body.lstrip().startswith("#")):
        return None  # sizes or comments, then pairs: a 'row item' file
    if all(_INTEGER.fullmatch(v) for v in re.split(r"[\s,;]+", body.strip())):
        return None  # integers: a 'row item' line, not a header
    sep = _separator(path, body)
    names = next(csv.reader([body], delimiter=sep))
    check_header(path, names, sep)
    return [n.strip() for n in names], sep, skip


def _separator(path: Path, header: str) -> str:
    """The header's separator: a tab for ``.tsv``, else the first of
    :data:`~dpquery.data.encode.SEPARATORS` it holds (a comma for one name)."""
    if ".tsv" in [s.lower() for s in path.suffixes]:
        return "\t"
    bare = re.sub(r'"[^"]*"', "", header)  # a quoted name may hold any character
    return next((s for s in SEPARATORS if s in bare), ",")


def read_item_list(path: str | Path) -> tuple[str, ...]:
    """The public catalogue at ``path``: one item id per line, in order, surrounding spaces
    stripped, blank lines skipped. A repeated id or an empty list is an error (the list is
    public: naming its ids discloses nothing)."""
    path = Path(path)
    if not path.is_file():
        raise DPQueryError(f"item list {path} does not exist")
    try:
        with get_handle(path, "r", compression="infer", encoding="utf-8-sig") as handles:
            ids = [line.strip() for line in handles.handle.read().splitlines()]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DPQueryError(f"cannot read {path}: {exc}") from None
    ids = [i for i in ids if i]
    if not ids:
        raise DPQueryError(f"item list {path} is empty: give one public item id per line")
    index = pd.Index(ids)
    if index.has_duplicates:
        first = str(index[index.duplicated()][0])
        raise DPQueryError(f"item list {path} names item {first!r} twice: give each id once")
    return tuple(ids)


def _column(path: Path, header: Sequence[str], name: str | None, default: int, what: str) -> str:
    if name is None:
        if len(header) < 2:
            raise DPQueryError(f"{path}: the header names {len(header)} column ({header[0]!r}); "
                               "a user x item table has a user column and an item "
                               "column")  # fmt: skip
        return header[default]
    if name not in header:
        raise DPQueryError(f"{path}: no {what} column {name!r}; the file has the columns "
                           f"{', '.join(map(repr, header[:20]))}")  # fmt: skip
    return name


def item_labels(
    path: str | Path, item_list: str | Path, user_column: str | None = None,
    item_column: str | None = None,
) -> ItemLabels:  # fmt: skip
    """The catalogue and the two columns of the raw table at ``path`` (defaults: its first
    two columns), checked against its header; reads no record."""
    path = Path(path)
    header = raw_header(path)
    if header is None and all(not line.strip() for line in _lines(path, _LOOKAHEAD)):
        raise DPQueryError(f"{path} is empty: a user x item table starts with a header "
                           "line naming its columns (e.g. userId,movieId), then one "
                           "line per (user, item)")  # fmt: skip
    if header is None:
        raise DPQueryError(f"{path} has no header line: a raw user x item table starts with "
                           "one naming its columns (a file of 0-based 'row item' pairs takes "
                           "--n and --items instead of --item-list)")  # fmt: skip
    user = _column(path, header, user_column, 0, "user")
    item = _column(path, header, item_column, 1, "item")
    if user == item:
        raise DPQueryError(f"{path}: the user and item columns are both {user!r}; name two "
                           "columns")  # fmt: skip
    return ItemLabels(read_item_list(item_list), user, item)


def read_raw_items(
    path: str | Path, item_list: str | Path, *, user_column: str | None = None,
    item_column: str | None = None,
) -> tuple[ItemSets, ItemLabels]:  # fmt: skip
    """The item sets of a raw ``user,item`` table: one record per distinct user id (a line
    with an empty user id is dropped), item ``j`` the ``j``-th id of the public
    ``item_list``, a line whose item is not in the list dropped (both rules
    data-independent). Ids are read as text, surrounding spaces stripped; other columns
    are not read. After a first line ``# rows M items D`` (a release's file,
    :func:`write_raw_item_sets`) the users are ``0..M-1``, M records. A table without a
    single line is an error. The number of lines dropped is said in a warning for the
    curator (read from the data: not private)."""
    path = Path(path)
    labels = item_labels(path, item_list, user_column, item_column)
    _, sep, skip = _layout(path) or ([], ",", 0)
    try:
        table = pd.read_csv(
            path, sep=sep, skiprows=skip, usecols=[labels.user_column, labels.item_column],
            dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True,
            index_col=False, encoding="utf-8-sig",
        )  # fmt: skip
    except (ValueError, OSError) as exc:
        raise DPQueryError(f"cannot read {path}: {exc}") from None
    if len(table) == 0:
        raise DPQueryError(f"{path} has no records (only a header): there is nothing to "
                           "release")  # fmt: skip
    users = table[labels.user_column].str.strip().to_numpy()
    items = pd.Index(labels.items).get_indexer(table[labels.item_column].str.strip())
    attributed = users != ""
    sizes = _SIZES.match(_lines(path, 1)[0].lstrip()) if skip else None
    if sizes is None:
        rows, n = _user_rows(users[attributed])
    else:  # a release's own file: its users 0..M-1, M records (those without items too)
        rows, n = _numbered_rows(path, users[attributed], int(sizes[1]))
        if int(sizes[2]) != len(labels.items):
            raise DPQueryError(f"{path}: its first line says {sizes[2]} items, the item list "
                               f"holds {len(labels.items)}")  # fmt: skip
    cols = items[attributed]
    kept = cols >= 0
    matrix = sp.csr_array(
        (np.ones(int(kept.sum()), np.uint8), (rows[kept], cols[kept])),
        shape=(n, len(labels.items)),
    )
    note_dropped(path, len(table) - int(kept.sum()))
    return ItemSets(matrix), labels


def _user_rows(users: np.ndarray) -> tuple[np.ndarray, int]:
    """Each line's record (0-based, by first appearance) and the number of records."""
    codes, uniques = pd.factorize(users)
    return codes.astype(np.int64), len(uniques)


def _numbered_rows(path: Path, users: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """The records of a file whose first line gives their number ``n``: user ids
    ``0..n-1``."""
    numbers = pd.to_numeric(pd.Series(users), errors="coerce")
    bad = numbers.isna() | (numbers < 0) | (numbers >= n) | (numbers != numbers.round())
    if bad.any():
        raise DPQueryError(f"{path}: its first line says {n} records (users 0..{n - 1}); "
                           f"user {users[bad.to_numpy()][0]!r} is not one")  # fmt: skip
    return numbers.to_numpy(dtype=np.int64), n


def note_dropped(path: str | Path, count: int) -> None:
    """Say (a warning, for the curator) that ``count`` lines of ``path`` were dropped (an
    item outside the list, or no user id): the count is read from the data, so it is not
    private, as :func:`~dpquery.data.encode.note_duplicates` says of repeated lines."""
    if count:
        lines = "line" if count == 1 else "lines"
        warnings.warn(
            f"{path}: {count} {lines} dropped (an item not in the item list, or no user id; "
            "not private: read from the data, for the curator)",
            stacklevel=3,
        )


def write_raw_item_sets(path: str | Path, items: ItemSets, labels: ItemLabels) -> None:
    """Write ``# rows M items D``, the header ``user,item`` (``labels``' column names), then
    one line per one: the record's synthetic id ``0..M-1`` and the item's id from
    ``labels``, atomically (no partial file on error; gzipped when ``path`` ends in
    ``.gz``). Weighted item sets are refused (their weights have no column here)."""
    if items.weights is not None:
        raise DPQueryError("weighted records are written as 0-based 'row item weight' lines; "
                           "write raw ids without --weights")  # fmt: skip
    if items.d != len(labels.items):
        raise DPQueryError(f"{items.d} items against an item list of {len(labels.items)}")
    path = Path(path)
    rows = np.repeat(np.arange(items.n, dtype=np.int64), items.lengths())
    names = np.asarray(labels.items, dtype=object)[items.matrix.indices]
    frame = pd.DataFrame({labels.user_column: rows, labels.item_column: names})
    if labels.user_column == labels.item_column:  # pragma: no cover - refused when read
        raise DPQueryError("the user and item columns need two names")

    def write(tmp: Path) -> None:
        compression = "gzip" if path.suffix.lower() == ".gz" else None
        with get_handle(tmp, "w", compression=compression, encoding="utf-8") as handles:
            handles.handle.write(f"# rows {items.n} items {items.d}\n")
            frame.to_csv(handles.handle, index=False, lineterminator="\n")

    atomic_write(path, write)


__all__ = [
    "ItemLabels", "item_labels", "raw_header", "read_item_list", "read_raw_items",
    "write_raw_item_sets",
]  # fmt: skip
