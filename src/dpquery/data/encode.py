"""Tables in, bits out: encode a table over a public :class:`Domain` into :class:`BinaryData`.

Dense input (DataFrame, CSV, Parquet) goes through :func:`encode`; sparse binary input
(scipy.sparse matrices, "row item" transaction files) is packed without ever densifying.

Encoding errors quote offending values and how many rows hold them: they are read from the
private data, so they are for the curator only (not differentially private; never publish or
forward them).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.binary import WORD_BITS, BinaryData, n_words_for
from dpquery.data.domain import Attribute, Binary, Categorical, Domain, Numeric, cell_text
from dpquery.data.numbers import DECIMAL_COMMA_SEPARATORS, axis_values, decimal_commas
from dpquery.errors import DomainError, DPQueryError

_SHOW = 5  # offending values listed in an error message


def _fail(attr: Attribute, what: str, bad: pd.Series) -> DomainError:
    counts = bad.value_counts(dropna=False)
    shown = ", ".join(f"{v!r} ({c}x)" for v, c in counts.head(_SHOW).items())
    more = f" and {len(counts) - _SHOW} more" if len(counts) > _SHOW else ""
    return DomainError(f"column {attr.name!r}: {len(bad)} value(s) {what}: {shown}{more}")


def _missing_codes(series: pd.Series, attr: Attribute, missing_code: int | None) -> np.ndarray:
    na = series.isna().to_numpy()
    if na.any() and missing_code is None:
        raise DomainError(
            f"column {attr.name!r} has {int(na.sum())} missing value(s) (first at row "
            f"{int(np.argmax(na))}); declare a missing category in the domain to allow them"
        )
    return na


def attribute_codes(series: pd.Series, attr: Attribute) -> np.ndarray:
    """Index of each value within its attribute's bits (0 or 1 for a binary attribute)."""
    if isinstance(attr, Numeric):
        return _numeric_codes(series, attr)
    if isinstance(series.dtype, pd.CategoricalDtype):  # map by value, not by pandas' codes
        series = series.astype(object)
    values = attr.values
    lookup: dict[object, int] = {}
    for i, v in enumerate(values):  # exact values first, then their text (CSV reads text)
        lookup.setdefault(str(v), i)
    for i, v in enumerate(values):
        lookup[v] = i
    if isinstance(attr, Categorical):
        for raw, cat in attr.recode.items():
            lookup[raw] = lookup[str(raw)] = values.index(cat)
        missing_code = None if attr.missing is None else values.index(attr.missing)
        other_code = None if attr.other is None else values.index(attr.other)
        if missing_code is None:
            missing_code = other_code
    else:
        missing_code = other_code = None
    na = _missing_codes(series, attr, missing_code)
    codes = series.map(lookup)
    unknown = codes.isna().to_numpy() & ~na
    if unknown.any():
        # their text as a category holds it (cell_text: "1.0" read where "1.0" is declared,
        # "C7 " where the learned C7 is)
        codes_str = series[unknown].map(cell_text).map(lookup)
        still = codes_str.isna().to_numpy()
        if still.any():  # e.g. text "1" (a CSV read as text) where the number 1.0 is declared
            as_number = pd.to_numeric(series[unknown][still], errors="coerce")
            codes_str[still] = as_number.map(lookup).to_numpy()
        if codes_str.notna().all():
            codes[unknown] = codes_str
        elif other_code is not None:  # values not listed go to the catch-all category
            codes[unknown] = codes_str.fillna(other_code)
        else:
            bad = series[unknown][codes_str.isna().to_numpy()]
            raise _fail(attr, f"outside the domain (expected one of {list(values)[:10]})", bad)
    if missing_code is not None:
        codes[na] = missing_code
    return codes.to_numpy(dtype=np.int64)


def _numeric_codes(series: pd.Series, attr: Numeric) -> np.ndarray:
    x = axis_values(series, attr).to_numpy(dtype=np.float64)  # "$1,200.50" too, as learned
    na = _missing_codes(series, attr, attr.n_bins if attr.missing else None)
    not_numbers = np.isnan(x) & ~na
    if not_numbers.any() and attr.texts == "missing":  # a learned domain reads them so
        na = na | not_numbers
    elif not_numbers.any():
        what = "are not numbers" if attr.time is None else f"are not dates written {attr.time}"
        error = _fail(attr, what, series[not_numbers])
        raise DomainError(f"{error} (texts meaning a missing value: synth --na-values)")
    lo, hi = attr.edges[0], attr.edges[-1]
    outside = ~na & ((x < lo) | (x > hi))
    # (a time column's range is seconds on the time axis: dpquery.data.dates)
    if outside.any() and attr.out_of_range == "error":
        raise _fail(
            attr,
            f"outside the public range [{lo:g}, {hi:g}] (set out_of_range='clip' to clip them)",
            series[outside],
        )
    codes = np.searchsorted(np.asarray(attr.edges), x, side="right") - 1
    codes = np.clip(codes, 0, attr.n_bins - 1)  # x == hi belongs to the last bin
    codes[na] = attr.n_bins
    return codes.astype(np.int64)


@numba.njit(parallel=True, cache=True)
def _pack_codes(bit_of_row: np.ndarray, words: np.ndarray) -> None:  # pragma: no cover - jit
    # One thread per block of 64 rows owns its word: no write races.
    n, n_attr = bit_of_row.shape
    for w in numba.prange(words.shape[1]):
        for i in range(w * 64, min(n, (w + 1) * 64)):
            mask = np.uint64(1) << np.uint64(i & 63)
            for a in range(n_attr):
                b = bit_of_row[i, a]
                if b >= 0:
                    words[b, w] |= mask


def encode(table: pd.DataFrame, domain: Domain) -> BinaryData:
    """Encode ``table`` (one column per domain attribute, extra columns ignored) to bits.

    Values outside the domain fail with the column, the offending values and their count.
    """
    if not isinstance(table, pd.DataFrame):
        raise DPQueryError(f"expected a pandas DataFrame, got {type(table).__name__}")
    missing_cols = [a for a in domain.names if a not in table.columns]
    if missing_cols:
        raise DomainError(
            f"the table lacks domain attribute(s) {missing_cols[:10]}; its columns are "
            f"{list(table.columns)[:20]}"
        )
    n = len(table)
    bit_of_row = np.empty((n, len(domain)), dtype=np.int64)
    for i, attr in enumerate(domain.attributes):
        codes = attribute_codes(table[attr.name], attr)
        if isinstance(attr, Binary):
            codes = np.where(codes == 1, 0, -1)  # only the true value sets the bit
        bit_of_row[:, i] = np.where(codes >= 0, codes + domain.offsets[i], -1)
    words = np.zeros((domain.d, n_words_for(n)), dtype=np.uint64)
    if n:
        _pack_codes(bit_of_row, words)
    return BinaryData(words, n, domain.onehot_groups, domain)


def read_table(
    path: str | Path,
    domain: Domain | None = None,
    *,
    as_text: bool = False,
    na_values: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read a CSV (optionally gzipped) or Parquet file with a header row.

    With a domain, only its attributes are read, categorical and binary columns as text
    (values are matched to the domain by text), numeric columns as numbers; the file's other
    columns are dropped, with a warning naming them (column names are the schema, public). A
    CSV whose first column has no name (a row index, as pandas' ``to_csv`` and R's
    ``write.csv`` write one by default) is read without it, with a warning saying so. A
    file with a header and no record is an error naming the file. ``as_text`` reads every CSV
    cell as text (no dtype inferred from the values: the raw table a domain is learned from),
    and ``na_values`` are texts read as missing besides pandas' own.
    """
    path = Path(path)
    if not path.exists():
        raise DPQueryError(f"data file {path} does not exist")
    suffixes = [s.lower() for s in path.suffixes]
    columns = None if domain is None else list(domain.names)
    try:
        if suffixes and suffixes[-1] in (".parquet", ".pq"):
            import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

            header = named = pd.Index(pq.read_schema(path).names)
            table = pd.read_parquet(path, columns=columns)
        elif any(s in (".csv", ".tsv", ".txt") for s in suffixes):
            sep, skip, names = _layout(path)
            check_header(path, names, sep, row_index=True)
            dtype: type[str] | dict[str, type[str]] | None = str if as_text else None
            if domain is not None and not as_text:
                # a date column as text too: one written as digits (20190314) is no number
                dtype = {a.name: str for a in domain.attributes
                         if not isinstance(a, Numeric) or a.time is not None}  # fmt: skip
            header = pd.read_csv(path, sep=sep, nrows=0, skipinitialspace=True,
                                 skiprows=skip).columns  # fmt: skip
            named = header
            usecols: Sequence[str] | Sequence[int] | None = columns
            if _is_row_index(names):
                # a row index (pandas' to_csv, R's write.csv): left out, never read; the
                # header alone says so (the schema: public)
                warnings.warn(ROW_INDEX_NOTE.format(path=path), stacklevel=2)
                named = header[1:]
                if columns is None:
                    usecols = list(range(1, len(header)))
            if columns is not None:
                absent = [c for c in columns if c not in named]
                if absent:
                    raise DomainError(
                        f"{path}: no column(s) {absent[:10]} for domain attributes; the file "
                        f"has {list(named)[:20]}"
                    )
            with warnings.catch_warnings():  # a record longer than the header: refused
                warnings.simplefilter("error", pd.errors.ParserWarning)
                table = pd.read_csv(path, sep=sep, usecols=usecols, dtype=dtype,
                                    na_values=na_values or None, skipinitialspace=True,
                                    index_col=False, skiprows=skip)  # fmt: skip
            if sep in DECIMAL_COMMA_SEPARATORS:  # "12,5" is 12.5 (docs/learn.md)
                table = decimal_commas(table, str(path))
        else:
            raise DPQueryError(
                f"{path}: unknown file type; expected .csv, .csv.gz, .tsv or .parquet"
            )
    except pd.errors.ParserWarning:
        raise DPQueryError(
            f"{path}: a record has more fields than the header's {len(header)} column(s), "
            f"read as separated by {sep!r} (a decimal comma, or an unquoted separator in a "
            "value?); quote such values or save the file with another separator"
        ) from None
    except (ValueError, OSError) as exc:
        if isinstance(exc, DPQueryError):
            raise
        raise DPQueryError(f"cannot read {path}: {exc}") from None
    if len(table) == 0:
        raise DPQueryError(f"{path} has no records (only a header): there is nothing to release")
    if columns is not None:
        warn_extra_columns(str(path), named, columns)
    return table


SEPARATORS = (",", "\t", ";")
"""The separators a CSV file's header is read with, in this order (:func:`csv_layout`)."""


_HINT = re.compile(r"sep=(.)")  # a spreadsheet's first line naming the separator


ROW_INDEX_NOTE = (
    "{path}: column 1 of the header has no name: read as a row index (as pandas' to_csv "
    "and R's write.csv write one) and left out, not read and not released; name it to "
    "release it"
)
"""The warning when a CSV's first column is left out as a row index (:func:`read_table`)."""


def csv_layout(path: Path) -> tuple[str, int]:
    """The separator of a CSV (``.csv``, ``.tsv``, ``.txt``, optionally compressed), read
    off its header line alone (the column names are the schema: public; no record is read):
    the first of :data:`SEPARATORS` the header holds, a tab for a ``.tsv`` file, a comma for
    a header of one name, or the one a first line ``sep=;`` names (as spreadsheets write it);
    and the lines before the header (1 after a ``sep=`` line). The header's names are
    checked (:func:`check_header`); an empty file is an error naming it."""
    sep, skip, names = _layout(path)
    check_header(path, names, sep)
    return sep, skip


def _is_row_index(names: Sequence[str]) -> bool:
    """Whether a header's first column is a row index: its name blank, every other named (the
    header alone is read: the schema, public)."""
    return len(names) > 1 and not names[0].strip() and all(n.strip() for n in names[1:])


def _layout(path: Path) -> tuple[str, int, list[str]]:
    """The separator, the lines before the header and the header's names (unchecked)."""
    line, second = _header_lines(path)
    hint = _HINT.fullmatch(line)
    skip = 0 if hint is None else 1
    if hint is not None:
        line = second
    if not line.strip():
        raise DPQueryError(f"{path} is empty: a CSV file starts with a header line naming its "
                           "columns, then one record per line")  # fmt: skip
    if hint is not None:
        sep = hint[1]
    elif ".tsv" in [s.lower() for s in path.suffixes]:
        sep = "\t"
    else:
        bare = re.sub(r'"[^"]*"', "", line)  # a quoted name may hold any character
        sep = next((s for s in SEPARATORS if s in bare), ",")
    return sep, skip, next(csv.reader([line], delimiter=sep))


def _header_lines(path: Path) -> tuple[str, str]:
    """The first two lines of ``path``, opened as pandas opens it (decompressed by its
    suffix; a UTF-8 byte order mark dropped)."""
    from pandas.io.common import get_handle  # pandas' own opener: the same compressions

    try:
        with get_handle(path, "r", compression="infer", encoding="utf-8-sig") as handles:
            first, second = (str(handles.handle.readline()).rstrip("\r\n") for _ in range(2))
            return first, second
    except UnicodeDecodeError as exc:
        raise DPQueryError(f"cannot read {path}: it is not UTF-8 text ({exc.reason} at byte "
                           f"{exc.start})") from None  # fmt: skip


def check_header(path: Path, names: Sequence[str], sep: str, *, row_index: bool = False) -> None:
    """Every column named, each name once: pandas would call a blank name ``Unnamed: 1``
    and a repeated ``age`` ``age.1``, names the user never wrote (a domain given back, or a
    second release, would not match their table). With ``row_index``, a blank first name
    beside named others is allowed: a row index, as pandas' ``to_csv`` and R's ``write.csv``
    write one by default, which :func:`read_table` leaves out."""
    start = 1 if row_index and _is_row_index(names) else 0  # the row index: no name to check
    blank = [i + 1 for i, n in enumerate(names) if i >= start and not n.strip()]
    if blank and len(names) > 1:
        index = " (a row index, as pandas' to_csv writes by default? drop it)" * (blank == [1])
        raise DPQueryError(f"{path}: column {blank[0]} of the header (separated by {sep!r}) "
                           f"has no name{index}; name every column")  # fmt: skip
    seen: dict[str, int] = {}
    for i, name in enumerate(n.lstrip() for n in names):  # as read (skipinitialspace)
        if i < start:
            continue
        if name in seen:
            raise DPQueryError(f"{path}: the header names column {name!r} twice (columns "
                               f"{seen[name] + 1} and {i + 1}); give each column its own "
                               "name")  # fmt: skip
        seen[name] = i


def warn_extra_columns(source: str, header: Sequence[object], columns: Sequence[str]) -> None:
    """Warn, naming them, about the columns of ``header`` the domain does not hold: they are
    dropped, never released (column names are the schema: public)."""
    extra = [str(c) for c in header if c not in columns]
    if extra:
        shown = ", ".join(extra[:20]) + (f" and {len(extra) - 20} more" if len(extra) > 20 else "")
        warnings.warn(
            f"{source}: column(s) {shown} are not in the domain: dropped, not released "
            "(--learn-rest, learn_rest=True, learns them privately)",
            stacklevel=3,
        )


def encode_file(path: str | Path, domain: Domain) -> BinaryData:
    """:func:`read_table` then :func:`encode`."""
    return encode(read_table(path, domain), domain)


# -- sparse binary input ------------------------------------------------------------------
@numba.njit(cache=True)
def _pack_pairs(rows: np.ndarray, cols: np.ndarray, words: np.ndarray) -> None:  # pragma: no cover
    for k in range(rows.shape[0]):
        r = rows[k]
        words[cols[k], r >> 6] |= np.uint64(1) << np.uint64(r & 63)


def check_indices(idx: np.ndarray, limit: int, name: str, what: str) -> None:
    """Refuse ids outside ``[0, limit)``, naming ``what`` (a file) and a few of them."""
    bad = (idx < 0) | (idx >= limit)
    if bad.any():
        raise DPQueryError(
            f"{what}: {int(bad.sum())} {name} index(es) outside [0, {limit}), e.g. "
            f"{idx[bad][:_SHOW].tolist()}"
        )


def _from_pairs(rows: np.ndarray, cols: np.ndarray, n: int, d: int, what: str) -> BinaryData:
    check_indices(rows, n, "row", what)
    check_indices(cols, d, "item", what)
    words = np.zeros((d, n_words_for(n)), dtype=np.uint64)
    _pack_pairs(rows.astype(np.int64), cols.astype(np.int64), words)
    return BinaryData(words, n)


BINARIZE = "pass binarize=True to count every non-zero as 1"
"""How a matrix holding other values than 0 and 1 is taken anyway (:func:`binary_entries`)."""


def binary_entries(
    matrix: sp.spmatrix | sp.sparray,
    what: str = "the matrix",
    *,
    binarize: bool = False,
    hint: str = BINARIZE,
) -> sp.coo_array:
    """``matrix`` as COO with every stored entry 0 or 1 (explicit zeros are zeros; a one
    stored twice is one item). Item data holds ones: a rating or a count (-1, 2, 2.5) is an
    error naming ``what``, the entry and ``hint``, unless ``binarize`` counts every non-zero
    of the matrix (duplicates summed) as 1. A NaN is refused either way."""
    if not sp.issparse(matrix):
        raise DPQueryError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
    if not isinstance(binarize, bool):
        raise DPQueryError(f"binarize must be True or False, got {binarize!r}")
    coo = sp.coo_array(matrix)
    if binarize:
        coo.sum_duplicates()
    data = coo.data
    bad = data != data if binarize else (data != 0) & (data != 1)  # data != data: NaN
    if bad.any():
        at = np.flatnonzero(bad)
        first = at[np.lexsort((coo.col[at], coo.row[at]))[0]]  # the first in row order
        value = data[first].item()
        advice = "" if binarize or value != value else f" ({hint})"
        raise DPQueryError(
            f"{what}: entry ({coo.row[first]}, {coo.col[first]}) is {value:g}; item data "
            f"holds 0 and 1{advice}"
        )
    return coo


def from_sparse(matrix: sp.spmatrix | sp.sparray, *, binarize: bool = False) -> BinaryData:
    """Pack a scipy.sparse users x items 0/1 matrix without densifying (other values are
    refused unless ``binarize``: :func:`binary_entries`)."""
    coo = binary_entries(matrix, binarize=binarize)
    keep = coo.data != 0
    n, d = coo.shape
    return _from_pairs(coo.row[keep], coo.col[keep], n, d, "sparse matrix")


_SIZES = re.compile(r"#\s*rows\s+(\d+)\s+items\s+(\d+)\b")
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


@dataclass(frozen=True)
class Pairs:
    """The lines of a "row item [weight]" file, and the sizes its first line gives."""

    rows: np.ndarray
    items: np.ndarray
    weights: np.ndarray | None
    sizes: tuple[int, int] | None  # (n, d) from a first line "# rows N items D"


def _first_bad(column: pd.Series) -> object:
    """The first value of ``column`` that is not an integer (for the error message)."""
    numbers = pd.to_numeric(column, errors="coerce")
    bad = numbers.isna() | (numbers != np.floor(numbers))
    value = column[bad].iloc[0] if bad.any() else None
    return value.item() if isinstance(value, np.generic) else value


def _first_line(path: Path) -> str:
    """The first non-blank line of a "row item" file, decompressed."""
    lines = (line for chunk in _text_chunks(path, 1 << 16) for line in chunk.splitlines())
    return next((line for line in lines if line.strip()), "")


# The text a "row item" file is parsed in: 64 Mi characters at a time, so that the reader
# holds the pairs and one piece of text, never the whole text (about 1 GB for Netflix's
# 100 million ratings).
CHUNK_CHARS = 1 << 26


def _text_chunks(path: Path, size: int | None = None) -> Iterator[str]:
    """The text of a "row item" file, decompressed, in pieces of about ``size`` characters
    (default :data:`CHUNK_CHARS`), each ending at the end of a line."""
    size = CHUNK_CHARS if size is None else size
    if not path.exists():
        raise DPQueryError(f"transaction file {path} does not exist")
    opener = _OPENERS.get(path.suffix.lower(), open)
    try:
        with opener(path, "rt") as fh:  # type: ignore[operator]
            while chunk := fh.read(size):
                yield chunk + fh.readline()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DPQueryError(f"cannot read {path}: {exc}") from None


_TOKENIZING = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _pair_rule(columns: tuple[int, ...]) -> str:
    """What a "row item" file accepted with ``columns`` holds on each line."""
    rule = "'row item' (two integers) on every line"
    if 3 in columns:
        rule += ", or 'row item weight' on every line of a weighted file"
    return rule


def _data_lines(text: str) -> list[tuple[int, str]]:
    """Each data line of ``text`` (commas already spaces) with its line number: what
    pandas parses, ``#`` comments and blank lines skipped. Read only to place an error."""
    bodies = ((i, line.split("#", 1)[0].strip()) for i, line in enumerate(text.split("\n"), 1))
    return [(i, body) for i, body in bodies if body]


def _bad_width(path: Path, text: str, columns: tuple[int, ...], *, line: int | None = None,
               k: int = 0, offset: int = 0) -> DPQueryError:  # fmt: skip
    """The error for a line with a wrong number of values: line number ``line`` of
    ``text``, or else its ``k``-th data line; ``text`` starts after line ``offset`` of the
    file."""
    lines = _data_lines(text)
    at = [(i, b) for i, b in lines if i == line] if line is not None else lines[k : k + 1]
    number, body = at[0] if at else (line, "")
    number = None if number is None else number + offset
    shown = body if len(body) <= 40 else f"{body[:37]}..."
    values = len(body.split())
    return DPQueryError(
        f"{path}: line {number} holds {values} value{'s' * (values != 1)} ({shown!r}); "
        f"expected {_pair_rule(columns)}"
    )


def read_pairs(path: str | Path, *, columns: tuple[int, ...] = (2,)) -> Pairs:
    """Parse a "row item" file (whitespace or comma separated integers, ``#`` comments,
    optionally .gz / .bz2 / .xz): the one parser of every transaction reader.

    ``columns`` lists the accepted numbers of values per line, the same on every line: 2
    (``row item``) or, when 3 is listed, 3 (``row item weight``, a float weight). A file
    with no pairs gives empty arrays (:func:`no_records` is the readers' error for it). The
    text is parsed a piece at a time (:data:`CHUNK_CHARS`); the ids are kept as 32-bit
    integers when they fit.
    """
    path = Path(path)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
    sizes, width, offset = None, None, 0
    for i, chunk in enumerate(_text_chunks(path)):
        text = chunk.replace(",", " ")  # one separator for the C parser
        if i == 0:
            header = _SIZES.match(text.lstrip())
            sizes = (int(header[1]), int(header[2])) if header else None
        part = _parse_pairs(path, text, columns if width is None else (width,), offset)
        if part is not None:
            width = 2 if part[2] is None else 3
            parts.append(part)
        offset += text.count("\n")
    if not parts:
        empty = np.zeros(0, np.int64)
        return Pairs(empty, empty, None, sizes)
    rows, items, weights = zip(*parts, strict=True)
    return Pairs(np.concatenate(rows), np.concatenate(items),
                 None if width == 2 else np.concatenate(weights), sizes)  # fmt: skip


def _parse_pairs(
    path: Path, text: str, columns: tuple[int, ...], offset: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """The rows, items and weights of one piece of a "row item" file (commas already
    spaces), which starts after line ``offset``; None when it holds no data line."""
    try:
        table = pd.read_csv(io.StringIO(text), sep=r"\s+", header=None, comment="#")
        # no dtype=int64 here: it would truncate "1.5" to 1 silently
    except pd.errors.EmptyDataError:  # no pairs in this piece
        return None
    except (ValueError, OSError) as exc:
        wider = _TOKENIZING.search(str(exc))  # a line longer than the first: pandas' C error
        if wider is not None:
            raise _bad_width(path, text, columns, line=int(wider[2]), offset=offset) from None
        raise DPQueryError(f"{path}: cannot parse ({exc}); expected {_pair_rule(columns)}"
                           ) from None  # fmt: skip
    if table.shape[1] not in columns:  # the first data line sets the width
        raise _bad_width(path, text, columns, offset=offset)
    short = table.isna().any(axis=1).to_numpy()  # a line shorter than the first, or "nan"
    if short.any():
        k, lines = int(np.argmax(short)), _data_lines(text)
        if k < len(lines) and len(lines[k][1].split()) != table.shape[1]:
            raise _bad_width(path, text, columns, k=k, offset=offset)
    for j, name in ((0, "row"), (1, "item")):
        if not pd.api.types.is_integer_dtype(table[j].dtype):
            raise DPQueryError(
                f"{path}: expected integer 'row item' pairs per line; {name} "
                f"{_first_bad(table[j])!r} is not an integer"
            )
    weights = None
    if table.shape[1] == 3:
        w = pd.to_numeric(table[2], errors="coerce")
        if w.isna().any():
            raise DPQueryError(f"{path}: weight {table[2][w.isna()].iloc[0]!r} is not a number")
        weights = w.to_numpy(np.float64)
    return _narrow(table[0].to_numpy()), _narrow(table[1].to_numpy()), weights


def _narrow(ids: np.ndarray) -> np.ndarray:
    """``ids`` as 32-bit integers when they all fit (half the memory), else 64-bit."""
    info = np.iinfo(np.int32)
    fits = ids.size == 0 or (ids.min() >= info.min and ids.max() <= info.max)
    return ids.astype(np.int32 if fits else np.int64)


def holds_pairs(path: str | Path) -> bool:
    """Whether a "row item" file has a line of data, reading up to the first one only (the
    pairs themselves may be parsed elsewhere, e.g. on a cluster)."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix.lower(), open)
    try:
        with opener(path, "rt") as fh:  # type: ignore[operator]
            return any(line.split("#", 1)[0].replace(",", " ").strip() for line in fh)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DPQueryError(f"cannot read {path}: {exc}") from None


def no_records(path: str | Path) -> DPQueryError:
    """The error for a "row item" file without a single line of data: its sizes alone
    would release that many empty records, which is never what was meant."""
    return DPQueryError(f"{path} holds no records (no 'row item' lines): is it the right file?")


def note_duplicates(path: str | Path, count: int) -> None:
    """Say (a warning, for the curator) that ``count`` repeated ``row item`` lines of
    ``path`` were counted once: the count is read from the data, so it is not private."""
    if count:
        lines = "line" if count == 1 else "lines"
        warnings.warn(
            f"{path}: {count} duplicate (row, item) {lines} counted once (not private: read "
            "from the data, for the curator)",
            stacklevel=3,
        )


def pair_file_sizes(path: str | Path) -> tuple[int, int] | None:
    """The sizes ``(n, d)`` a "row item" file's first line gives (``# rows N items D``), or
    None; only that line is read (the pairs may be parsed elsewhere, e.g. on a cluster)."""
    header = _SIZES.match(_first_line(Path(path)).lstrip())
    return (int(header[1]), int(header[2])) if header else None


def resolve_sizes(
    path: Path, given: tuple[int | None, int | None], found: tuple[int, int] | None
) -> tuple[int, int]:
    """The public sizes (n, d): given, or from the file's first line (both must agree)."""
    for name, value in zip(("n", "d"), given, strict=True):
        if value is not None and (isinstance(value, bool) or int(value) != value or value < 1):
            raise DPQueryError(f"n and d must be positive integers, got {name}={value!r}")
    if found is not None and min(found) < 1:
        raise DPQueryError(
            f"{path}: n and d must be positive integers, got n={found[0]}, "
            f"d={found[1]} in the first line"
        )
    if found is None:
        if given[0] is None or given[1] is None:
            raise DPQueryError(
                f"{path}: no '# rows N items D' first line; give the public sizes n (rows) "
                f"and d (items)"
            )
        return int(given[0]), int(given[1])
    for name, value, header in zip(("n", "d"), given, found, strict=True):
        if value is not None and int(value) != header:
            raise DPQueryError(
                f"{path}: {name}={value} was given but the file's first line says {header}"
            )
    return found


def read_transactions(path: str | Path, *, n: int | None = None, d: int | None = None
                      ) -> BinaryData:  # fmt: skip
    """Read a "row item" transaction file: one ``row item`` pair per line (whitespace or
    comma separated, integers, ``#`` comments). ``n`` (rows) and ``d`` (items) are public
    sizes: given, or read from a first line ``# rows N items D`` (given ones must agree with
    it); ids outside ``[0, n)`` / ``[0, d)`` are an error, and so is a file with no pair.
    A repeated pair is one bit, and a warning gives their count (for the curator)."""
    path = Path(path)
    pairs = read_pairs(path, columns=(2,))
    n, d = resolve_sizes(path, (n, d), pairs.sizes)
    if pairs.rows.size == 0:
        raise no_records(path)
    data = _from_pairs(pairs.rows, pairs.items, n, d, str(path))
    keys = pairs.rows.astype(np.int64) * d + pairs.items  # 64-bit: n * d may pass 2^31
    note_duplicates(path, pairs.rows.size - np.unique(keys).size)
    return data


__all__ = [
    "WORD_BITS",
    "Pairs",
    "attribute_codes",
    "binary_entries",
    "check_indices",
    "encode",
    "encode_file",
    "from_sparse",
    "holds_pairs",
    "no_records",
    "note_duplicates",
    "pair_file_sizes",
    "read_pairs",
    "read_table",
    "read_transactions",
    "resolve_sizes",
]
