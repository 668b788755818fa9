"""Tables in, bits out: encode a table over a public :class:`Domain` into :class:`BinaryData`.

Dense input (DataFrame, CSV, Parquet) goes through :func:`encode`; sparse binary input
(scipy.sparse matrices, "row item" transaction files) is packed without ever densifying.

Encoding errors quote offending values and how many rows hold them: they are read from the
private data, so they are for the curator only (not differentially private; never publish or
forward them).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.binary import WORD_BITS, BinaryData, n_words_for
from dpquery.data.domain import Attribute, Binary, Categorical, Domain, Numeric
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
    else:
        missing_code = None
    na = _missing_codes(series, attr, missing_code)
    codes = series.map(lookup)
    unknown = codes.isna().to_numpy() & ~na
    if unknown.any():
        codes_str = series[unknown].astype(str).map(lookup)  # e.g. 1.0 read where "1" declared
        still = codes_str.isna().to_numpy()
        if still.any():  # e.g. text "1" (a CSV read as text) where the number 1.0 is declared
            as_number = pd.to_numeric(series[unknown][still], errors="coerce")
            codes_str[still] = as_number.map(lookup).to_numpy()
        if codes_str.notna().all():
            codes[unknown] = codes_str
        else:
            bad = series[unknown][codes_str.isna().to_numpy()]
            raise _fail(attr, f"outside the domain (expected one of {list(values)[:10]})", bad)
    if missing_code is not None:
        codes[na] = missing_code
    return codes.to_numpy(dtype=np.int64)


def _numeric_codes(series: pd.Series, attr: Numeric) -> np.ndarray:
    x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    na = _missing_codes(series, attr, attr.n_bins if attr.missing else None)
    not_numbers = np.isnan(x) & ~na
    if not_numbers.any():
        raise _fail(attr, "are not numbers", series[not_numbers])
    lo, hi = attr.edges[0], attr.edges[-1]
    outside = ~na & ((x < lo) | (x > hi))
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


def read_table(path: str | Path, domain: Domain | None = None) -> pd.DataFrame:
    """Read a CSV (optionally gzipped) or Parquet file with a header row.

    With a domain, only its attributes are read, categorical and binary columns as text
    (values are matched to the domain by text), numeric columns as numbers; the file's other
    columns are dropped, with a warning naming them (column names are the schema, public). A
    file with a header and no record is an error naming the file.
    """
    path = Path(path)
    if not path.exists():
        raise DPQueryError(f"data file {path} does not exist")
    suffixes = [s.lower() for s in path.suffixes]
    columns = None if domain is None else list(domain.names)
    try:
        if suffixes and suffixes[-1] in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            header = pd.Index(pq.read_schema(path).names)
            table = pd.read_parquet(path, columns=columns)
        elif any(s in (".csv", ".tsv", ".txt") for s in suffixes):
            sep = "\t" if ".tsv" in suffixes else ","
            dtype = None
            if domain is not None:
                dtype = {a.name: str for a in domain.attributes if not isinstance(a, Numeric)}
            header = pd.read_csv(path, sep=sep, nrows=0, skipinitialspace=True).columns
            if columns is not None:
                absent = [c for c in columns if c not in header]
                if absent:
                    raise DomainError(
                        f"{path}: no column(s) {absent[:10]} for domain attributes; the file "
                        f"has {list(header)[:20]}"
                    )
            table = pd.read_csv(path, sep=sep, usecols=columns, dtype=dtype, skipinitialspace=True)
        else:
            raise DPQueryError(
                f"{path}: unknown file type; expected .csv, .csv.gz, .tsv or .parquet"
            )
    except (ValueError, OSError) as exc:
        if isinstance(exc, DPQueryError):
            raise
        raise DPQueryError(f"cannot read {path}: {exc}") from None
    if len(table) == 0:
        raise DPQueryError(f"{path} has no records (only a header): there is nothing to release")
    extra = [] if columns is None else [str(c) for c in header if c not in columns]
    if extra:
        shown = ", ".join(extra[:20]) + (f" and {len(extra) - 20} more" if len(extra) > 20 else "")
        warnings.warn(
            f"{path}: column(s) {shown} are not in the domain: dropped, not released",
            stacklevel=2,
        )
    return table


def encode_file(path: str | Path, domain: Domain) -> BinaryData:
    """:func:`read_table` then :func:`encode`."""
    return encode(read_table(path, domain), domain)


# -- sparse binary input ------------------------------------------------------------------
@numba.njit(cache=True)
def _pack_pairs(rows: np.ndarray, cols: np.ndarray, words: np.ndarray) -> None:  # pragma: no cover
    for k in range(rows.shape[0]):
        r = rows[k]
        words[cols[k], r >> 6] |= np.uint64(1) << np.uint64(r & 63)


def _from_pairs(rows: np.ndarray, cols: np.ndarray, n: int, d: int, what: str) -> BinaryData:
    for name, idx, limit in (("row", rows, n), ("item", cols, d)):
        bad = (idx < 0) | (idx >= limit)
        if bad.any():
            raise DPQueryError(
                f"{what}: {int(bad.sum())} {name} index(es) outside [0, {limit}), e.g. "
                f"{idx[bad][:_SHOW].tolist()}"
            )
    words = np.zeros((d, n_words_for(n)), dtype=np.uint64)
    _pack_pairs(rows.astype(np.int64), cols.astype(np.int64), words)
    return BinaryData(words, n)


def from_sparse(matrix: sp.spmatrix | sp.sparray) -> BinaryData:
    """Pack a scipy.sparse users x items matrix (non-zero entries are 1s) without densifying."""
    if not sp.issparse(matrix):
        raise DPQueryError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
    coo = sp.coo_array(matrix)
    coo.sum_duplicates()
    keep = coo.data != 0
    n, d = coo.shape
    return _from_pairs(coo.row[keep], coo.col[keep], n, d, "sparse matrix")


def read_transactions(path: str | Path, *, n: int, d: int) -> BinaryData:
    """Read a "row item" transaction file: one ``row item`` pair per line (whitespace or
    comma separated, integers, ``#`` comments). ``n`` (rows) and ``d`` (items) are public
    sizes and must be given; ids outside ``[0, n)`` / ``[0, d)`` are an error."""
    path = Path(path)
    if not path.exists():
        raise DPQueryError(f"transaction file {path} does not exist")
    if n < 1 or d < 1:
        raise DPQueryError(f"n and d must be positive, got n={n}, d={d}")
    try:
        pairs = pd.read_csv(
            path,
            sep=r"[\s,]+",
            header=None,
            comment="#",
            engine="python",
        )  # no dtype=int64 here: it would truncate "1.5" to 1 silently
    except pd.errors.EmptyDataError:  # no pairs at all: n all-zero rows
        pairs = pd.DataFrame({0: np.zeros(0, np.int64), 1: np.zeros(0, np.int64)})
    except (ValueError, OSError) as exc:
        raise DPQueryError(f"{path}: expected integer 'row item' pairs per line ({exc})") from None
    if pairs.shape[1] != 2:
        raise DPQueryError(
            f"{path}: expected two integers ('row item') per line, got {pairs.shape[1]}"
        )
    if not all(pd.api.types.is_integer_dtype(t) for t in pairs.dtypes):
        raise DPQueryError(f"{path}: expected integer 'row item' pairs per line")
    pairs.columns = ["row", "item"]
    return _from_pairs(pairs["row"].to_numpy(), pairs["item"].to_numpy(), n, d, str(path))


__all__ = [
    "WORD_BITS",
    "attribute_codes",
    "encode",
    "encode_file",
    "from_sparse",
    "read_table",
    "read_transactions",
]
