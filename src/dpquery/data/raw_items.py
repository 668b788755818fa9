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
import hashlib
import io
import itertools
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import scipy.sparse as sp
from pandas.io.common import get_handle

from dpquery.data.encode import _SIZES, SEPARATORS, check_header
from dpquery.data.items import ItemSets, put_decimal
from dpquery.errors import DPQueryError
from dpquery.io import atomic_write

_INTEGER = re.compile(r"[+-]?\d+")
_READ_LINES = 1 << 21  # lines of a compressed file read at once (its one block)
_LOOKAHEAD = 50  # lines read to find the first data line of a file (comments skipped)
_CUT_LINES = 1 << 23  # lines whose users are cut at once (bounded_item_counts)
_WRITE_LINES = 1 << 21  # lines formatted at once by the writer of a release
_PLAIN_LINES = 1 << 18  # the same, formatted by _plain_block (three copies of its bytes)


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
    return once(ids, f"item list {path}")


def once(ids: Sequence[str], what: str) -> tuple[str, ...]:
    """``ids`` as a catalogue, each id once (``what`` names the list in the error)."""
    index = pd.Index(ids)
    if index.has_duplicates:
        first = str(index[index.duplicated()][0])
        raise DPQueryError(f"{what} names item {first!r} twice: give each id once")
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
    header = _header(path)
    user, item = raw_columns(path, user_column, item_column, header)
    return ItemLabels(read_item_list(item_list), user, item)


def _header(path: Path) -> list[str]:
    """The header of the raw table at ``path``: an empty file, or one without a header, is
    an error naming what a raw table holds."""
    header = raw_header(path)
    if header is None and all(not line.strip() for line in _lines(path, _LOOKAHEAD)):
        raise DPQueryError(f"{path} is empty: a user x item table starts with a header "
                           "line naming its columns (e.g. userId,movieId), then one "
                           "line per (user, item)")  # fmt: skip
    if header is None:
        raise DPQueryError(f"{path} has no header line: a raw user x item table starts with "
                           "one naming its columns (a file of 0-based 'row item' pairs takes "
                           "--n and --items instead of --item-list)")  # fmt: skip
    return header


def raw_columns(
    path: str | Path, user_column: str | None = None, item_column: str | None = None,
    header: list[str] | None = None,
) -> tuple[str, str]:  # fmt: skip
    """The user and item columns of the raw table at ``path`` (defaults: its first two),
    checked against its header; reads no record."""
    path = Path(path)
    if header is None:
        header = _header(path)
    user = _column(path, header, user_column, 0, "user")
    item = _column(path, header, item_column, 1, "item")
    if user == item:
        raise DPQueryError(f"{path}: the user and item columns are both {user!r}; name two "
                           "columns")  # fmt: skip
    return user, item


@dataclass(frozen=True)
class RawLines:
    """The lines of a raw ``user,item`` table, before any catalogue: line ``k`` belongs to
    record ``rows[k]`` (``0..n-1``) and names the item id ``item_ids[item_codes[k]]``
    (text, spaces stripped; the distinct ids once, so that a line costs two integers, not
    a string; lines without a user id are already dropped, ``unattributed`` of them). Read
    from a file (:func:`read_raw_lines`) or a DataFrame (:func:`frame_lines`)."""

    rows: np.ndarray
    item_codes: np.ndarray
    item_ids: np.ndarray
    n: int
    user_column: str
    item_column: str
    lines: int
    unattributed: int
    user_ids: np.ndarray | None = None  # record r's user id is user_ids[r] (text)

    @property
    def items(self) -> np.ndarray:
        """Each line's item id (text)."""
        return self.item_ids[self.item_codes]

    def cut_counts(self, bound: int, key: str) -> dict[str, int]:
        """How many users hold each item id once each user's distinct items are cut to the
        ``bound`` of smallest keyed hash (:func:`bounded_item_counts`): exact (private). An
        empty id is no item."""
        rows, codes = self.rows, self.item_codes
        if (self.item_ids == "").any():  # copies only when some line names no item
            named = (self.item_ids != "")[codes]
            rows, codes = rows[named], codes[named]
        users = self.user_ids
        if users is None:  # a release's own file: its users are the numbers 0..n-1
            users = np.array([str(r) for r in range(self.n)], dtype=object)
        counts = bounded_item_counts(rows, codes, id_hashes(users, key),
                                     id_hashes(self.item_ids, key), bound)  # fmt: skip
        return {str(self.item_ids[j]): int(c) for j, c in enumerate(counts) if c > 0}

    def over(self, catalogue: Sequence[str]) -> tuple[ItemSets, int]:
        """The item sets over ``catalogue`` (item ``j`` its ``j``-th id; a line whose item
        is not in it dropped: a rule acting on each record alone) and the number of lines
        dropped with those of no user."""
        columns = pd.Index(list(catalogue)).get_indexer(self.item_ids)
        cols = columns.astype(_code_type(len(catalogue)))[self.item_codes]
        kept = int((cols >= 0).sum())
        rows = self.rows
        if kept < len(cols):  # copies only when some line is dropped
            at = cols >= 0
            rows, cols = rows[at], cols[at]
        matrix = sp.csr_array((np.ones(kept, np.uint8), (rows, cols)),
                              shape=(self.n, len(catalogue)))  # fmt: skip
        return ItemSets(matrix), self.lines - kept


COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar")
"""Suffixes of files read whole, as one block (pandas decompresses them by suffix)."""
BLOCK_BYTES = 32 * 2**20
"""The size of a block of an uncompressed raw table (read at each call: tests make it small),
as the cluster's CSV blocks (:data:`~dpquery.backends.partitions.CSV_BLOCK_BYTES`)."""


def range_bytes(path: Path, start: int, stop: int) -> bytes:
    """The lines of ``path`` that *start* in bytes ``[start, stop)`` (``start`` at least 1:
    the header line comes first), whole."""
    with path.open("rb") as f:
        f.seek(start - 1)
        f.readline()  # to the first line starting at or after `start`
        pos = f.tell()
        if pos >= stop:
            return b""
        data = f.read(stop - pos)
        if data and not data.endswith(b"\n"):
            data += f.readline()  # finish the last line that starts in the range
        return data


@dataclass(frozen=True)
class RawBlock:
    """The lines of a raw table that start in bytes ``[start, stop)`` (None: the whole
    file, after its ``skip`` lines and its header), read as the local reader reads them."""

    path: Path
    sep: str
    header: tuple[str, ...]
    user: str
    item: str
    skip: int = 0
    start: int | None = None
    stop: int | None = None

    def read(self, data: bytes | None = None) -> tuple[pd.Series, pd.Series]:
        """Each line's user id and item id (text, surrounding spaces stripped), as pandas
        reads them (Arrow-backed strings: no Python string a line); ``data``: a byte
        range's bytes when already read."""
        columns = [self.user, self.item]
        try:
            if self.start is None:
                table = pd.read_csv(self.path, skiprows=self.skip, usecols=columns,
                                    encoding="utf-8-sig", **read_options(self.sep))  # fmt: skip
            else:
                assert self.stop is not None
                if data is None:
                    data = range_bytes(self.path, self.start, self.stop)
                if not data.strip():
                    empty = pd.Series([], dtype=str)
                    return empty, empty
                table = pd.read_csv(io.BytesIO(data), header=None, names=list(self.header),
                                    usecols=columns, **read_options(self.sep))  # fmt: skip
        except (ValueError, OSError) as exc:
            where = "" if self.start is None else f"bytes {self.start}-{self.stop} of "
            raise DPQueryError(f"cannot read {where}{self.path}: {exc}") from None
        return table[self.user].str.strip(), table[self.item].str.strip()

    def ids(self, data: bytes | None = None) -> BlockIds:
        """The block's lines as codes (:func:`block_ids` of :meth:`read`). A byte range is
        parsed by Arrow's CSV reader where it reads the range as pandas does
        (:func:`arrow_ids`: no quote, every line of the header's width, valid UTF-8), by
        pandas otherwise: the same ids either way, and pandas' errors on a malformed range.
        ``data``: a byte range's bytes when already read (:meth:`data`)."""
        if self.start is None:
            return block_ids(*self.read())
        assert self.stop is not None
        if data is None:
            data = range_bytes(self.path, self.start, self.stop)
        fast = arrow_ids(data, self.header, self.sep, self.user, self.item)
        return block_ids(*self.read(data)) if fast is None else fast

    def data(self) -> bytes | None:
        """A byte range's lines as bytes (:func:`range_bytes`); None for the whole file."""
        if self.start is None:
            return None
        assert self.stop is not None
        return range_bytes(self.path, self.start, self.stop)

    def digest(self, data: bytes | None = None) -> str:
        """A fingerprint of what the block reads (SHA-256): a byte range's lines (``data``,
        when already read), or every byte of the whole file. Two reads of the block with
        the same fingerprint read the same lines, so the same records."""
        if self.start is not None:
            read = self.data() if data is None else data
            assert read is not None
            return hashlib.sha256(read).hexdigest()
        digest = hashlib.sha256()
        try:
            with self.path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as exc:
            raise DPQueryError(f"cannot read {self.path}: {exc}") from None
        return digest.hexdigest()

    def pieces(self, chunk_lines: int) -> Iterator[BlockIds]:
        """The block's lines as codes: a byte range at once (:meth:`ids`, a block's size
        already), the whole file (a compressed one) ``chunk_lines`` lines at a time, so that
        one piece's texts are held at once."""
        if self.start is not None:
            yield self.ids()
            return
        columns = [self.user, self.item]
        try:
            with pd.read_csv(self.path, skiprows=self.skip, usecols=columns,
                             encoding="utf-8-sig", chunksize=chunk_lines,
                             **read_options(self.sep)) as chunks:  # fmt: skip
                for table in chunks:
                    yield block_ids(table[self.user].str.strip(), table[self.item].str.strip())
        except (ValueError, OSError) as exc:
            raise DPQueryError(f"cannot read {self.path}: {exc}") from None


def raw_blocks(
    path: Path, header: Sequence[str], sep: str, skip: int, user: str, item: str,
    block_bytes: int | None = None,
) -> list[RawBlock]:  # fmt: skip
    """The file at ``path`` as blocks of about ``block_bytes`` (None: :data:`BLOCK_BYTES`;
    a compressed file whole)."""
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    whole = RawBlock(path, sep, tuple(header), user, item, skip)
    if path.suffix.lower() in COMPRESSED:
        return [whole]
    with path.open("rb") as f:
        for _ in range(skip + 1):  # the lines before the header, and the header
            f.readline()
        body = f.tell()  # the records begin here
    size = path.stat().st_size
    if size <= body:
        return [RawBlock(path, sep, tuple(header), user, item, skip, body, body)]
    cuts = np.unique(np.r_[np.arange(body, size, block_bytes), size])
    return [RawBlock(path, sep, tuple(header), user, item, skip, int(a), int(b))
            for a, b in itertools.pairwise(cuts)]  # fmt: skip


@dataclass(frozen=True)
class BlockIds:
    """A block's lines as codes (:func:`block_ids`): line ``k`` (of the lines with a user
    id) is user ``users[user_codes[k]]`` and item ``items[item_codes[k]]`` (the distinct
    ids, each once, by first appearance; ``items`` those of every line read, the empty id
    among them when a line has it). The ids are texts, or int64 when every id of the
    column is a canonical decimal integer (:func:`arrow_ids`; :func:`id_texts` gives their
    texts)."""

    users: np.ndarray
    user_codes: np.ndarray
    items: np.ndarray
    item_codes: np.ndarray
    lines: int
    unattributed: int


_CANONICAL_TOP = 10**18  # canonical ids are the texts of 0..10**18-1 (int64, 18 digits)
_AWKWARD = (b'"', b"\x00")  # bytes after which pandas' and Arrow's readings may differ


def arrow_ids(
    data: bytes, header: Sequence[str], sep: str, user: str, item: str
) -> BlockIds | None:  # fmt: skip
    """:func:`block_ids` of the lines ``data`` (a block's bytes, after the header), parsed
    by Arrow's CSV reader, or None where pandas' reading (:func:`read_options`) could differ
    from Arrow's and pandas must read them: a quote character or a NUL byte in the bytes,
    a carriage return outside a ``\r\n`` line end, a line that is not the header's width
    (pandas fills or trims it), a byte sequence that is not UTF-8 (pandas says so). Without
    quotes, Arrow and pandas cut the same fields at the same separators and skip the same
    blank lines; the fields' surrounding spaces are stripped here as :meth:`RawBlock.read`
    strips them (Python's :meth:`str.strip`, on each distinct text once).

    A column whose every value is a canonical decimal integer below ``10**18`` (its text
    is ``str(value)``: a bijection of texts and values) is factorized as int64 and its
    distinct ids returned as int64 (:attr:`BlockIds.users`): no Python string a distinct id.
    """
    if any(b in data for b in _AWKWARD):
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    if not data or data.isspace():
        return None  # no line: pandas' reading says so
    try:
        table = pcsv.read_csv(
            pa.py_buffer(data),
            read_options=pcsv.ReadOptions(column_names=list(header), use_threads=False,
                                          block_size=len(data) + 1),
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char=False,
                                            double_quote=False, escape_char=False),
            convert_options=pcsv.ConvertOptions(
                include_columns=[user, item], column_types={user: pa.string(), item: pa.string()},
                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )  # fmt: skip
    except (pa.ArrowInvalid, ValueError):
        return None
    lines = table.num_rows
    user_codes, user_ids = _arrow_factorized(table.column(user))
    item_codes, item_ids = _arrow_factorized(table.column(item))
    del table
    return _attributed(user_ids, user_codes, item_ids, item_codes, lines)


def _attributed(
    user_ids: np.ndarray, user_codes: np.ndarray, items: np.ndarray, item_codes: np.ndarray,
    lines: int,
) -> BlockIds:  # fmt: skip
    """A block's codes without the lines whose user id is empty (counted as unattributed),
    the users renumbered without the empty id (int64 ids hold none)."""
    unattributed = 0
    if user_ids.dtype == object and (user_ids == "").any():
        attributed = user_codes != int(np.flatnonzero(user_ids == "")[0])
        keep = user_ids != ""
        renumber = np.cumsum(keep) - 1
        user_codes, user_ids = renumber[user_codes[attributed]], user_ids[keep]
        item_codes = item_codes[attributed]
        unattributed = lines - int(attributed.sum())
    return BlockIds(user_ids, user_codes, items, item_codes, lines, unattributed)


def _arrow_factorized(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow string column's codes and distinct ids (stripped), by first appearance, as
    :func:`pandas.factorize` gives them of the stripped texts: int64 ids when every text
    is canonical (:func:`arrow_ids`), else the distinct texts."""
    values = column.combine_chunks()
    try:
        numbers = pc.cast(values, pa.int64())
        canonical = (pc.all(pc.equal(pc.cast(numbers, pa.string()), values)).as_py()
                     and pc.min(numbers).as_py() >= 0
                     and pc.max(numbers).as_py() < _CANONICAL_TOP)  # fmt: skip
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        canonical = False
    if canonical and len(values):
        codes, uniques = pd.factorize(numbers.to_numpy())
        return codes, np.asarray(uniques, dtype=np.int64)
    encoded = pc.dictionary_encode(values)
    raw = encoded.dictionary.to_numpy(zero_copy_only=False)
    # two texts that differ only in surrounding spaces are one id: the distinct texts are
    # stripped, then merged (first appearance kept: the dictionary is in that order)
    merged, uniques = pd.factorize(np.array([t.strip() for t in raw.tolist()], dtype=object))
    return merged[encoded.indices.to_numpy()], np.asarray(uniques, dtype=object)


def id_texts(ids: np.ndarray) -> np.ndarray:
    """Ids as text: int64 ids (canonical decimal integers, :func:`arrow_ids`) written back
    as their texts, text ids unchanged."""
    return ids.astype(str).astype(object) if ids.dtype == np.int64 else ids


def block_ids(users: pd.Series, items: pd.Series) -> BlockIds:
    """The lines of a block (each line's user id and item id, as :meth:`RawBlock.read`
    returns them) as two integer codes a line and the distinct ids' texts, the lines
    without a user id dropped. Factorized where pandas holds the texts (a hash table in C),
    so that only the distinct ids become Python strings: both the local reader
    (:func:`~dpquery.data.raw_items.read_raw_lines`) and the cluster's blocks
    (:func:`~dpquery.backends.raw.split_block`) read a block through here."""
    lines = len(users)
    user_codes, uniques = pd.factorize(users)
    user_ids = np.asarray(uniques, dtype=object)
    item_codes, item_uniques = pd.factorize(items)
    item_texts = np.asarray(item_uniques, dtype=object)
    return _attributed(user_ids, user_codes, item_texts, item_codes, lines)


def read_raw_lines(
    path: str | Path, *, user_column: str | None = None, item_column: str | None = None,
    items_expected: int | None = None,
) -> RawLines:  # fmt: skip
    """The lines of the raw table at ``path`` (its header checked, its two columns named or
    its first two), every id read as text. After a first line ``# rows M items D`` (a
    release's own file) the users are ``0..M-1``, M records, and ``D`` must be
    ``items_expected`` when given. A table without a single line is an error."""
    path = Path(path)
    header, sep, skip = raw_layout(path)
    user, item = raw_columns(path, user_column, item_column, header)
    # Block by block (the cluster's blocks, :func:`raw_blocks`): only
    # a block's texts are held at once; a line keeps two integer codes, the distinct ids
    # their texts. Codes are given by first appearance over the blocks in file order, so
    # the records and the ids come in the order of a read of the whole file.
    user_index: dict[str, int] = {}
    item_index: dict[str, int] = {}
    user_parts: list[np.ndarray] = []
    item_parts: list[np.ndarray] = []
    lines = unattributed = 0
    for block in raw_blocks(path, header, sep, skip, user, item):
        for codes in block.pieces(_READ_LINES):
            user_parts.append(_coded(user_index, id_texts(codes.users), codes.user_codes))
            item_parts.append(_coded(item_index, id_texts(codes.items), codes.item_codes))
            lines, unattributed = lines + codes.lines, unattributed + codes.unattributed
            del codes
    if lines == 0:
        raise DPQueryError(f"{path} has no records (only a header): there is nothing to "
                           "release")  # fmt: skip
    user_codes, item_codes = _joined(user_parts), _joined(item_parts)
    user_texts = np.fromiter(user_index, dtype=object, count=len(user_index))
    item_texts = np.fromiter(item_index, dtype=object, count=len(item_index))
    del user_index, item_index
    sizes = _SIZES.match(_lines(path, 1)[0].lstrip()) if skip else None
    user_ids = None
    if sizes is None:  # records by first appearance (the empty id is no user: dropped)
        rows, n, user_ids = user_codes, len(user_texts), user_texts
    else:  # a release's own file: its users 0..M-1, M records (those without items too)
        numbers, n = _numbered_rows(path, user_texts, int(sizes[1]))
        rows = numbers.astype(_code_type(n))[user_codes]
        if items_expected is not None:
            check_release_items(path, (n, int(sizes[2])), items_expected)
    return RawLines(rows, item_codes, item_texts, n, user, item, lines, unattributed,
                    user_ids)  # fmt: skip


def release_sizes(path: str | Path) -> tuple[int, int] | None:
    """The ``(M, D)`` of a first line ``# rows M items D`` (a release's own file,
    :func:`write_raw_item_sets`), or None; reads the first line alone."""
    first = _lines(Path(path), 1)
    sizes = _SIZES.match(first[0].lstrip()) if first else None
    return None if sizes is None else (int(sizes[1]), int(sizes[2]))


def check_release_items(path: str | Path, sizes: tuple[int, int], expected: int) -> None:
    """A release's own file's ``D`` against the ``expected`` items of its item list."""
    if sizes[1] != expected:
        raise DPQueryError(f"{path}: its first line says {sizes[1]} items, the item list "
                           f"holds {expected}")  # fmt: skip


def numbered_ids(
    path: str | Path, ids: np.ndarray, codes: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """A block's user ``ids`` (each line's a code into them) in a file whose first line
    gives its ``n`` records: each id's number ``0..n-1`` (as the local reader numbers
    them: ``7`` and ``07`` are record 7; another id is its error), the lines' codes into
    the distinct numbers, and those numbers (int64)."""
    numbers, _ = _numbered_rows(Path(path), id_texts(ids), n)
    merged, uniques = pd.factorize(numbers)
    return merged[codes], np.asarray(uniques, dtype=np.int64)


def _code_type(count: int) -> type[np.signedinteger]:
    """The integer type of codes ``0..count-1``: 32 bits where they fit (half the memory of
    a line's two codes), else 64."""
    return np.int32 if count < 2**31 else np.int64


def _coded(index: dict[str, int], ids: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """A block's lines' codes (into its distinct ``ids``) as codes in ``index`` (the ids of
    the blocks before, each numbered by first appearance; a new id is numbered next and
    added), of :func:`_code_type`."""
    merged = np.fromiter((index.setdefault(i, len(index)) for i in ids), dtype=np.int64,
                         count=len(ids))  # fmt: skip
    return merged.astype(_code_type(len(index)))[codes]


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The blocks' codes as one array (emptied from ``parts`` as they are copied)."""
    top = max((int(p.max()) for p in parts if p.size), default=0)
    out = np.empty(sum(p.size for p in parts), _code_type(top + 1))
    at = 0
    while parts:
        part = parts.pop(0)
        out[at : at + part.size] = part
        at += part.size
    return out


def raw_layout(path: str | Path) -> tuple[list[str], str, int]:
    """The header names, the separator and the number of lines before the header (a first
    line ``# rows M items D``) of the raw table at ``path`` (an empty file, or one without a
    header, is an error naming what a raw table holds); reads no record."""
    path = Path(path)
    _header(path)
    layout = _layout(path)
    assert layout is not None
    return layout


def read_options(sep: str) -> dict[str, object]:
    """How :func:`pandas.read_csv` reads the lines of a raw table, whole or a block of it:
    every id as text, nothing taken as missing, spaces after the separator skipped."""
    return {"sep": sep, "dtype": str, "keep_default_na": False, "na_filter": False,
            "skipinitialspace": True, "index_col": False}  # fmt: skip


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
    lines = read_raw_lines(
        path, user_column=labels.user_column, item_column=labels.item_column,
        items_expected=len(labels.items),
    )  # fmt: skip
    items, dropped = lines.over(labels.items)
    note_dropped(path, dropped)
    return items, labels


def frame_lines(
    df: pd.DataFrame, user_column: str | None = None, item_column: str | None = None,
    name: str = "df",
) -> RawLines:  # fmt: skip
    """The lines of a user x item DataFrame (``user_column``, ``item_column``: None, its
    first two columns), read as :func:`read_raw_lines` reads a file's: every id as text
    (an integer-valued float, ``7.0``, written ``7``: pandas makes a column of integers
    with a missing value float), surrounding spaces stripped, a line with a missing or
    empty user id dropped (a missing item id is the empty id, which no catalogue lists)."""
    user, item = table_columns(df, user_column, item_column, name)
    header = [str(c) for c in df.columns]
    if len(df) == 0:
        raise DPQueryError(f"{name} has no rows: there is nothing to release")
    frame = df.set_axis(header, axis=1)
    users = _ids(frame[user])
    ids = _ids(frame[item])
    attributed = users != ""
    rows, n, user_ids = _user_rows(users[attributed])
    item_codes, item_ids = pd.factorize(ids[attributed])
    return RawLines(rows, item_codes.astype(np.int64), np.asarray(item_ids, dtype=object), n,
                    user, item, len(df), int((~attributed).sum()), user_ids)  # fmt: skip


def table_columns(
    df: object, user_column: str | None = None, item_column: str | None = None,
    name: str = "df",
) -> tuple[str, str]:  # fmt: skip
    """The user and item columns of a user x item DataFrame (defaults: its first two),
    checked against its columns; reads no row."""
    if not isinstance(df, pd.DataFrame):
        raise DPQueryError(f"{name} must be a pandas DataFrame of user and item ids, got "
                           f"{type(df).__name__}")  # fmt: skip
    header = [str(c) for c in df.columns]
    if not header:
        raise DPQueryError(f"{name} has no columns: a user x item table has a user column "
                           "and an item column")  # fmt: skip
    if len(set(header)) != len(header):
        raise DPQueryError(f"{name} names a column twice: {header[:20]}")
    user = _column(Path(name), header, user_column, 0, "user")
    item = _column(Path(name), header, item_column, 1, "item")
    if user == item:
        raise DPQueryError(f"{name}: the user and item columns are both {user!r}; name two "
                           "columns")  # fmt: skip
    return user, item


def _ids(column: pd.Series) -> np.ndarray:
    """A column's values as id texts (module docstring of :func:`frame_lines`): missing
    values empty."""
    values = column.to_numpy(dtype=object)
    missing = pd.isna(column).to_numpy()
    out = np.empty(len(values), dtype=object)
    for k, v in enumerate(values):  # ids of any type: text, integers, floats
        if missing[k]:
            out[k] = ""
        elif isinstance(v, float | np.floating) and float(v).is_integer():
            out[k] = str(int(v))
        else:
            out[k] = str(v).strip()
    return out


def _user_rows(users: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Each line's record (0-based, by first appearance), the number of records and each
    record's user id."""
    codes, uniques = pd.factorize(users)
    return codes.astype(np.int64), len(uniques), np.asarray(uniques, dtype=object)


# -- the contribution bound of a learned item universe ----------------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def cut_key(rng: np.random.Generator) -> str:
    """A key for the cut's hash, drawn from ``rng``: 8 random bytes as 16 hex characters
    (the siphash key :func:`pandas.util.hash_array` takes)."""
    return rng.bytes(8).hex()


def id_hashes(ids: np.ndarray, key: str) -> np.ndarray:
    """Each id's keyed 64-bit hash (siphash-2-4 of its UTF-8 text, keyed by ``key``): a
    function of the id's text alone, the same in any process and in any order."""
    values = np.asarray(ids, dtype=object)
    if values.size == 0:
        return np.zeros(0, np.uint64)
    return pd.util.hash_array(values, hash_key=key, categorize=False).astype(np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer (a bijection of 64-bit words that spreads every input bit)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of an int64 array, sorted (``np.unique``'s result, by a sort:
    numpy's hash-based unique is several times slower on tens of millions of keys)."""
    out = np.sort(keys)
    return out[np.r_[True, out[1:] != out[:-1]]] if out.size else out


def bounded_item_counts(
    rows: np.ndarray, items: np.ndarray, user_hash: np.ndarray, item_hash: np.ndarray,
    bound: int,
) -> np.ndarray:  # fmt: skip
    """How many users hold each item after each user's distinct items are cut to at most
    ``bound`` of them: the line ``k`` is user ``rows[k]``'s item ``items[k]`` (codes), a
    distinct pair's priority is ``mix(user_hash[u] + golden * item_hash[i])`` (keyed hashes
    of the two ids' texts, :func:`id_hashes`) and a user keeps its ``bound`` pairs of
    smallest priority. The priority of a pair depends on its two ids and the key alone, so
    a user's cut is the same whichever lines, partitions or order it is read in; over the
    key's draw each user's kept items are a uniform subset, independent of the other users'
    (up to the hash, a keyed pseudorandom function). Returns the counts over
    ``item_hash``'s items (int64).

    A user's cut reads its own lines alone, so the users are cut a range of them at a time
    (about :data:`_CUT_LINES` lines each) and the counts summed: the same counts, with a
    range's sorts and copies held at once rather than the whole table's."""
    parts = -(-len(rows) // _CUT_LINES)
    if parts <= 1:
        return _cut_counts(rows, items, user_hash, item_hash, bound)
    counts = np.zeros(len(item_hash), np.int64)
    cuts = np.linspace(0, len(user_hash), parts + 1).astype(np.int64)
    for lo, hi in itertools.pairwise(cuts):
        at = np.flatnonzero((rows >= lo) & (rows < hi))
        counts += _cut_counts(rows[at], items[at], user_hash, item_hash, bound)
    return counts


def _cut_counts(
    rows: np.ndarray, items: np.ndarray, user_hash: np.ndarray, item_hash: np.ndarray,
    bound: int,
) -> np.ndarray:  # fmt: skip
    """:func:`bounded_item_counts` of some users' lines, all at once."""
    width = max(len(item_hash), 1)
    pairs = distinct(rows.astype(np.int64) * width + items.astype(np.int64))
    user, item = pairs // width, pairs % width
    with np.errstate(over="ignore"):
        priority = _mix(user_hash[user] + _GOLDEN * item_hash[item])
    order = _by_user_then_priority(user, priority)
    user, item = user[order], item[order]
    starts = np.r_[0, np.flatnonzero(np.diff(user)) + 1]
    rank = np.arange(len(user)) - np.repeat(starts, np.diff(np.r_[starts, len(user)]))
    return np.bincount(item[rank < bound], minlength=len(item_hash)).astype(np.int64)


def _by_user_then_priority(user: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """``np.lexsort((priority, user))``: the order by user, then by priority. One sort of a
    single 64-bit key (the user's number in the high bits, the priority's high bits below
    it) gives that order when no two of a user's keys are equal; where two are (a user's
    two priorities agree in their high bits: rare), the two-key sort is made instead."""
    if user.size == 0:
        return np.zeros(0, np.intp)
    bits = max(int(user.max()).bit_length(), 1)
    if bits >= 32:  # too few of the priority's bits would be left to tell pairs apart
        return np.lexsort((priority, user))
    key = (user.astype(np.uint64) << np.uint64(64 - bits)) | (priority >> np.uint64(bits))
    order = np.argsort(key)
    ranked = key[order]
    if (ranked[1:] == ranked[:-1]).any():
        return np.lexsort((priority, user))
    return order


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


def _plain_labels(labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """The labels' UTF-8 bytes, each followed by a newline (concatenated), and where each
    starts (``d + 1`` offsets), when every label is a non-empty string that the CSV writer
    writes as it is (no delimiter, quote or line break: ``csv.QUOTE_MINIMAL`` quotes nothing
    else); None otherwise (pandas then formats the lines)."""
    if not all(type(x) is str and x and not _QUOTED.search(x) for x in labels):
        return None
    encoded = [x.encode("utf-8") + b"\n" for x in labels]
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=starts[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), starts


_QUOTED = re.compile(r'[,"\r\n]')


def _plain_block(
    matrix: sp.csr_array, first: int, last: int, text: np.ndarray, starts: np.ndarray
) -> str:
    """The lines ``row,label`` of records ``first..last-1`` (:func:`_plain_labels`' labels),
    the text pandas' ``to_csv`` writes for them, formatted by :func:`_format_raw_lines`."""
    lo, hi = int(matrix.indptr[first]), int(matrix.indptr[last])
    indices = np.asarray(matrix.indices[lo:hi], dtype=np.int64)
    size = 21 * (hi - lo) + int((starts[indices + 1] - starts[indices]).sum())
    out = np.empty(size, dtype=np.uint8)
    indptr = np.asarray(matrix.indptr[first : last + 1], dtype=np.int64) - lo
    at = _format_raw_lines(indptr, indices, first, text, starts, out)
    return str(out[:at].data, "utf-8")  # decoded from the buffer, not a copy of it


@numba.njit(cache=True)
def _format_raw_lines(indptr, indices, first, text, starts, out):  # pragma: no cover - jit
    """Record ``first + i``'s lines ``row,label`` (labels ``text[starts[j]:starts[j + 1]]``,
    newline included) for the entries ``indptr[i]..indptr[i + 1]`` of ``indices``, into
    ``out``; returns the bytes written."""
    at = 0
    digits = np.empty(20, dtype=np.uint8)
    for i in range(indptr.size - 1):
        for p in range(indptr[i], indptr[i + 1]):
            at = put_decimal(np.int64(first + i), 44, out, at, digits)  # comma
            j = indices[p]
            for b in range(starts[j], starts[j + 1]):
                out[at] = text[b]
                at += 1
    return at


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
    if labels.user_column == labels.item_column:  # pragma: no cover - refused when read
        raise DPQueryError("the user and item columns need two names")
    names = np.asarray(labels.items, dtype=object)
    matrix = items.matrix
    columns = [labels.user_column, labels.item_column]
    plain = _plain_labels(labels.items)

    def write(tmp: Path) -> None:
        compression = "gzip" if path.suffix.lower() == ".gz" else None
        with get_handle(tmp, "w", compression=compression, encoding="utf-8") as handles:
            handles.handle.write(f"# rows {items.n} items {items.d}\n")
            pd.DataFrame(columns=columns).to_csv(handles.handle, index=False,
                                                 lineterminator="\n")  # fmt: skip
            # a block of records at a time: the bytes of one frame of every line, without
            # its whole-table columns (a Python reference a line) and their formatting
            first = 0
            lines = _WRITE_LINES if plain is None else _PLAIN_LINES
            while first < items.n:
                last = int(np.searchsorted(matrix.indptr, matrix.indptr[first] + lines,
                                           side="right")) - 1  # fmt: skip
                last = min(max(last, first + 1), items.n)
                if plain is not None:
                    handles.handle.write(_plain_block(matrix, first, last, *plain))
                    first = last
                    continue
                lo, hi = int(matrix.indptr[first]), int(matrix.indptr[last])
                rows = np.repeat(np.arange(first, last, dtype=np.int64),
                                 np.diff(matrix.indptr[first : last + 1]))  # fmt: skip
                block = pd.DataFrame({columns[0]: rows, columns[1]: names[matrix.indices[lo:hi]]})
                block.to_csv(handles.handle, index=False, header=False, lineterminator="\n")
                first = last

    atomic_write(path, write)


__all__ = [
    "BLOCK_BYTES", "BlockIds", "ItemLabels", "RawBlock", "RawLines", "arrow_ids", "block_ids",
    "bounded_item_counts", "check_release_items", "cut_key", "distinct", "frame_lines",
    "id_hashes", "id_texts", "item_labels", "numbered_ids", "once", "range_bytes",
    "raw_blocks", "raw_columns", "raw_header", "raw_layout", "read_item_list", "read_options",
    "read_raw_items", "read_raw_lines", "release_sizes", "table_columns",
    "write_raw_item_sets",
]  # fmt: skip
