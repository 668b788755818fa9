"""``ItemSets``: n records, each a set of items from ``range(d)``, kept sparse.

A users x items 0/1 table (bags of words, baskets, ratings) with d in the thousands to
hundreds of thousands and a few ones per record is held as a CSR matrix, never as dense bits.
A release may weight its records; a record then counts by its normalised weight.

File form (``.transactions.csv``, read and written here): a first line
``# rows N items D`` gives the public sizes, so records with no items still count, then one
``row item`` pair per line. A weighted file has a third column, the record's weight, on every
line of the record; a record with no items is listed once with item ``-1`` to carry its
weight. scipy's ``save_npz`` files and dpquery's :class:`BinaryData` ``.npz`` files are read
too.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.binary import _FORMAT, BinaryData, load_binary, unpack_columns
from dpquery.data.domain import Domain
from dpquery.data.encode import (
    _from_pairs,
    binary_entries,
    check_indices,
    no_records,
    note_duplicates,
    read_pairs,
    resolve_sizes,
)
from dpquery.data.records import Records, check_weights
from dpquery.errors import DPQueryError
from dpquery.io import atomic_write, npz_error

_NO_ITEM = -1  # the item of a weighted file's line that only carries an empty record's weight
_UNPACK_CELLS = 1 << 26  # bits unpacked at once by from_binary (64 MiB of uint8)
_WRITE_ONES = 1 << 22  # ones formatted at once by write_item_sets (at most 168 MiB of text)


def _canonical(matrix: sp.spmatrix | sp.sparray) -> sp.csr_array:
    """Canonical CSR: data all 1 (uint8), sorted indices, no duplicates, no explicit zeros."""
    if _is_frozen_canonical(matrix):  # already so and read-only: shared, not copied
        return matrix
    csr = sp.csr_array(matrix, copy=True)
    csr.sum_duplicates()  # also sorts the indices
    csr.eliminate_zeros()
    out = sp.csr_array(
        (np.ones(csr.nnz, np.uint8), csr.indices.copy(), csr.indptr.copy()), shape=csr.shape
    )
    out.has_canonical_format = True
    for a in (out.data, out.indices, out.indptr):
        a.setflags(write=False)
    return out


def _is_frozen_canonical(matrix: sp.spmatrix | sp.sparray) -> bool:
    """Whether ``matrix`` is a canonical CSR array (:func:`_canonical`) whose arrays are
    already read-only, so that sharing them cannot let a caller change the records."""
    if not isinstance(matrix, sp.csr_array) or matrix.data.dtype != np.uint8:
        return False
    arrays = (matrix.data, matrix.indices, matrix.indptr)
    if any(a.flags.writeable for a in arrays) or not matrix.has_canonical_format:
        return False
    return bool((matrix.data == 1).all())


def _frozen_csr(matrix: sp.spmatrix | sp.sparray) -> sp.csr_array | None:
    """A CSR matrix read from a file (nobody else holds it) as a canonical, read-only CSR
    array in place, its arrays kept, when its entries are all 1 with sorted, distinct
    indices; else None (the checked, copying path then runs). On 10^8 ones this spares the
    COO form and two copies of the indices (GiBs)."""
    if not isinstance(matrix, sp.csr_array | sp.csr_matrix) or not (matrix.data == 1).all():
        return None
    ones = matrix.data if matrix.data.dtype == np.uint8 else np.ones(matrix.nnz, np.uint8)
    csr = sp.csr_array((ones, matrix.indices, matrix.indptr), shape=matrix.shape, copy=False)
    if not csr.has_canonical_format:
        return None
    for a in (csr.data, csr.indices, csr.indptr):
        a.setflags(write=False)
    return csr


@dataclass(frozen=True, eq=False)
class ItemSets:
    """n records, each a set of items from ``range(d)`` (a users x items 0/1 table kept
    sparse). Optional non-negative record weights (a release may be weighted).

    ``matrix`` is stored canonical (see :func:`_canonical`) and read-only, whatever sparse
    matrix was given; ``weights`` is ``None`` when every record counts once. The constructor
    takes every non-zero as a one (it is also fed pairs whose repeats scipy sums);
    :meth:`from_sparse` is the checked entry for a matrix from outside.
    """

    matrix: sp.csr_array
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not sp.issparse(self.matrix):
            raise DPQueryError(f"expected a scipy.sparse matrix, got {type(self.matrix).__name__}")
        if self.matrix.ndim != 2:
            raise DPQueryError(f"expected a 2-D (records x items) matrix, got {self.matrix.shape}")
        matrix = _canonical(self.matrix)
        object.__setattr__(self, "matrix", matrix)
        if self.weights is not None:
            object.__setattr__(self, "weights", check_weights(self.weights, matrix.shape[0]))

    @property
    def n(self) -> int:
        """Number of records (public)."""
        return int(self.matrix.shape[0])

    @property
    def d(self) -> int:
        """Number of items (public)."""
        return int(self.matrix.shape[1])

    @property
    def nnz(self) -> int:
        """Number of (record, item) ones."""
        return int(self.matrix.nnz)

    def lengths(self) -> np.ndarray:
        """Items per record, int64, shape (n,)."""
        return np.diff(self.matrix.indptr).astype(np.int64)

    def probabilities(self) -> np.ndarray:
        """Each record's share: its normalised weight, or 1/n when unweighted."""
        if self.weights is None:
            return np.full(self.n, 1.0 / max(self.n, 1))
        return self.weights / self.weights.sum()

    def column_counts(self) -> np.ndarray:
        """Number of records holding each item, weights ignored (int64, length d)."""
        return np.bincount(self.matrix.indices, minlength=self.d).astype(np.int64)

    def item_frequencies(self) -> np.ndarray:
        """Share of records holding each item (weighted records by their share), shape (d,)."""
        return np.asarray(self.probabilities() @ self.matrix, dtype=np.float64)

    @classmethod
    def from_sparse(
        cls,
        matrix: sp.spmatrix | sp.sparray,
        weights: np.ndarray | None = None,
        *,
        binarize: bool = False,
    ) -> ItemSets:
        """A scipy sparse (records x items) matrix of zeros and ones: any other value (a
        rating, a count) is an error naming the entry, unless ``binarize`` counts every
        non-zero as a one (:func:`~dpquery.data.encode.binary_entries`)."""
        return cls(binary_entries(matrix, binarize=binarize), weights)

    @classmethod
    def from_binary(cls, data: BinaryData) -> ItemSets:
        """The bits of ``data`` as item sets (free bits only: one-hot groups are not items).

        Unpacks a block of columns at a time, never the whole table at once.
        """
        if len(data.onehot_groups):
            raise DPQueryError(
                f"the data has {len(data.onehot_groups)} one-hot group(s) (categorical or "
                f"numeric attributes); item sets hold free binary attributes only"
            )
        step = max(1, _UNPACK_CELLS // max(data.n, 1))
        rows, cols = [], []
        for start in range(0, data.d, step):
            r, c = np.nonzero(unpack_columns(data.words[start : start + step], data.n))
            rows.append(r)
            cols.append(c + start)
        row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        col = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        ones = np.ones(row.size, np.uint8)
        return cls(sp.csr_array((ones, (row, col)), shape=(data.n, data.d)))

    def to_binary(self) -> BinaryData:
        """Bit-packed columns for the existing kernels (unweighted records; small d only)."""
        if self.weights is not None:
            raise DPQueryError(
                "weighted item sets have no BinaryData form (it holds no weights); use "
                ".matrix and .weights"
            )
        coo = self.matrix.tocoo()
        return _from_pairs(coo.row, coo.col, self.n, self.d, "item sets")

    def __repr__(self) -> str:
        weighted = ", weighted" if self.weights is not None else ""
        return f"ItemSets(n={self.n}, d={self.d}, nnz={self.nnz}{weighted})"


# -- files --------------------------------------------------------------------------------
def _read_npz(path: Path) -> tuple[ItemSets, tuple[int, int]]:
    try:
        with np.load(path, allow_pickle=False) as z:
            is_binary = "format" in z.files and str(z["format"]) == _FORMAT
        if is_binary:
            items = ItemSets.from_binary(load_binary(path))
        else:
            hint = "save the matrix with every non-zero as 1, e.g. (m != 0).astype('uint8')"
            loaded = sp.load_npz(path)
            frozen = _frozen_csr(loaded)
            items = ItemSets(binary_entries(loaded, str(path), hint=hint) if frozen is None
                             else frozen)  # fmt: skip
    except DPQueryError:
        raise
    except Exception as exc:  # OSError, zipfile.BadZipFile, a missing key, scipy's own errors
        raise npz_error(path, "sparse matrix or binary data", exc) from None
    return items, (items.n, items.d)


def read_item_sets(
    path: str | Path, *, n: int | None = None, d: int | None = None, allow_empty: bool = False
) -> ItemSets:
    """Read item sets from a ``row item [weight]`` file or a sparse / binary ``.npz``.

    Text files: ``row item`` or ``row item weight`` per line (whitespace or comma separated,
    ``#`` comments, optionally gzipped). A first line ``# rows N items D`` gives the public
    sizes; explicit ``n`` and ``d`` must agree with it and are required when it is absent.
    A file without a single pair is an error (its sizes alone would be that many empty
    records), unless ``allow_empty`` (a release whose records are all empty); a repeated
    pair is one item, and a warning gives their count. Errors and that warning name the file
    and the offending value (read from the data: for the curator only).
    """
    path = Path(path)
    if not path.exists():
        raise DPQueryError(f"item file {path} does not exist")
    if path.suffix.lower() == ".npz":
        items, found = _read_npz(path)
        resolve_sizes(path, (n, d), found)
        return items
    pairs = read_pairs(path, columns=(2, 3))
    n, d = resolve_sizes(path, (n, d), pairs.sizes)
    if pairs.rows.size == 0 and not allow_empty:
        raise no_records(path)
    rows, cols = pairs.rows, pairs.items
    weights = None
    if pairs.weights is not None:
        check_indices(rows, n, "row", str(path))
        weights = _record_weights(path, rows, pairs.weights, n)
        keep = cols != _NO_ITEM
        rows, cols = rows[keep], cols[keep]
    check_indices(rows, n, "row", str(path))
    check_indices(cols, d, "item", str(path))
    ones = np.ones(rows.size, np.uint8)
    items = ItemSets(sp.csr_array((ones, (rows, cols)), shape=(n, d)), weights)
    note_duplicates(path, rows.size - items.nnz)  # the canonical matrix holds each pair once
    return items


def _record_weights(path: Path, rows: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        raise DPQueryError(f"{path}: weights must be finite and >= 0, found {float(w[bad][0])!r}")
    weights = np.full(n, np.nan)
    weights[rows] = w
    differ = weights[rows] != w
    if differ.any():
        r = int(rows[differ][0])
        raise DPQueryError(f"{path}: the lines of record {r} give it different weights")
    absent = np.isnan(weights)
    if absent.any():
        raise DPQueryError(
            f"{path}: a weighted file gives every record's weight (an empty record on a "
            f"line 'row -1 weight'); record {int(np.argmax(absent))} has none"
        )
    if weights.sum() <= 0:
        raise DPQueryError(f"{path}: the weights are all zero")
    return weights


def _open_text(tmp: Path, target: Path) -> IO[str]:
    if target.suffix.lower() == ".gz":
        return gzip.open(tmp, "wt", compresslevel=6)
    return tmp.open("w")


@numba.njit(cache=True)
def put_decimal(value, end, out, at, digits):  # pragma: no cover - jit
    """The decimal digits of ``value`` (>= 0) and the byte ``end`` into ``out`` at ``at``
    (``digits``: a scratch array of 20 bytes); returns the position after them."""
    k = 0
    v = value
    while True:
        digits[k] = 48 + v % 10
        v //= 10
        k += 1
        if v == 0:
            break
    for r in range(k - 1, -1, -1):
        out[at] = digits[r]
        at += 1
    out[at] = end
    return at + 1


@numba.njit(cache=True)
def _format_pairs(indptr, indices, first, last, out):
    """The lines ``row item`` of records ``first..last-1`` as ASCII into ``out``; returns the
    number of bytes written (``out`` must hold them: 42 bytes a line at most)."""
    at = 0
    digits = np.empty(20, dtype=np.uint8)
    for i in range(first, last):
        for p in range(indptr[i], indptr[i + 1]):
            at = put_decimal(np.int64(i), 32, out, at, digits)  # space
            at = put_decimal(np.int64(indices[p]), 10, out, at, digits)  # newline
    return at


def _write_unweighted(fh: gzip.GzipFile | BinaryIO, matrix: sp.csr_array) -> None:
    """The ``row item`` lines of ``matrix``, a block of records at a time: the bytes
    ``DataFrame.to_csv`` writes for the two int64 columns, without their whole-table arrays
    and frame (two words a one, and more while formatting) or its per-value formatting."""
    indptr, indices = matrix.indptr, matrix.indices
    n = matrix.shape[0]
    first = 0
    while first < n:
        # about _WRITE_ONES ones at once (a longer record in a block of its own)
        last = int(np.searchsorted(indptr, indptr[first] + _WRITE_ONES, side="right")) - 1
        last = min(max(last, first + 1), n)
        buffer = np.empty(42 * int(indptr[last] - indptr[first]), dtype=np.uint8)
        size = _format_pairs(indptr, indices, first, last, buffer)
        fh.write(buffer[:size].data)
        first = last


def write_item_sets(path: str | Path, items: ItemSets) -> None:
    """Write ``# rows N items D`` then one ``row item`` line per one (plus ``weight`` on
    every line, and ``row -1 weight`` for an empty record, when ``items`` is weighted),
    atomically: no partial file on error. Gzipped when ``path`` ends in ``.gz``.
    Round-trips exactly through :func:`read_item_sets` (with ``allow_empty=True`` when no
    record holds an item and none is weighted: the file then holds its first line only)."""
    path = Path(path)
    if items.weights is None:

        def write_pairs(tmp: Path) -> None:
            gz = path.suffix.lower() == ".gz"
            with gzip.open(tmp, "wb", compresslevel=6) if gz else tmp.open("wb") as fh:
                fh.write(f"# rows {items.n} items {items.d}\n".encode())
                _write_unweighted(fh, items.matrix)

        atomic_write(path, write_pairs)
        return
    lengths = items.lengths()
    rows = np.repeat(np.arange(items.n, dtype=np.int64), lengths)
    cols = items.matrix.indices.astype(np.int64)
    table = {"row": rows, "item": cols}
    if items.weights is not None:
        empty = np.flatnonzero(lengths == 0)
        order = np.argsort(np.concatenate([rows, empty]), kind="stable")
        table = {
            "row": np.concatenate([rows, empty])[order],
            "item": np.concatenate([cols, np.full(empty.size, _NO_ITEM)])[order],
        }
        table["weight"] = items.weights[table["row"]]
    frame = pd.DataFrame(table)

    def write(tmp: Path) -> None:
        with _open_text(tmp, path) as fh:
            fh.write(f"# rows {items.n} items {items.d}\n")
            frame.to_csv(fh, sep=" ", header=False, index=False, lineterminator="\n")

    atomic_write(path, write)


def dense_records(records: Records | ItemSets, domain: Domain | None) -> Records:
    """``records`` as dense :class:`Records` over ``domain`` (item sets unpacked: for the
    table writers, on data narrow enough to be written dense)."""
    if isinstance(records, Records):
        return records
    return Records(records.matrix.toarray(), records.weights, domain)


__all__ = ["ItemSets", "dense_records", "read_item_sets", "write_item_sets"]
