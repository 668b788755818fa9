"""Partitions of a dataset, and what a worker computes on one.

A partition is a small picklable description of some rows (a file, a byte range of a CSV, a
few row groups of a Parquet file, a slice of an in-memory table or item table, a generated
block of biased bits). A worker turns it into :class:`BinaryData` with the public domain,
computes a :class:`~dpquery.queries.counts.Counter`'s int64 vectors on it (every query's count with
:func:`dpquery.queries.evaluate.fold_counts`, the same compiled kernels as the local backend,
or every marginal's cell counts) and returns only those counts, so partitions never meet in
one memory.

Nothing here imports dask: partitions can be counted in any process.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.binary import BinaryData, n_words_for
from dpquery.data.domain import Domain, Numeric
from dpquery.data.encode import (
    _from_pairs,
    check_indices,
    csv_layout,
    encode,
    read_pairs,
    read_table,
    warn_extra_columns,
)
from dpquery.data.items import ItemSets, _frozen_csr
from dpquery.data.raw_items import range_bytes
from dpquery.data.synthetic import biased_bits
from dpquery.errors import DPQueryError
from dpquery.queries.counts import Counter, WorkloadCounts, reads_items
from dpquery.queries.workload import Workload

TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt")
ITEM_SUFFIXES = tuple(
    f"{a}{b}" for a in (".txt", ".csv", ".tsv") for b in ("", ".gz", ".bz2", ".xz")
)
# Default size of a CSV byte range: parsing 32 MiB of KDD99-like text peaks near 0.5 GiB
# in pandas and the encoder, which keeps two workers well inside a laptop's memory.
CSV_BLOCK_BYTES = 32 * 2**20


class Partition(Protocol):
    """Some rows of a dataset, loadable in any process."""

    def rows(self) -> int:
        """Number of records, as cheaply as the format allows."""
        ...

    def load(self) -> BinaryData:
        """The records encoded to bits."""
        ...


# -- tables -------------------------------------------------------------------------------
def _csv_layout(path: Path, domain: Domain) -> tuple[str, list[str], dict[str, type[str]]]:
    """Separator, header and dtypes exactly as :func:`read_table` reads the whole file
    (:func:`~dpquery.data.encode.csv_layout`; the records start after the header line, so a
    spreadsheet's ``sep=`` line before it is refused)."""
    sep, skip = csv_layout(path)
    if skip:
        raise DPQueryError(f"{path}: its first line names the separator ('sep={sep}'); "
                           "remove that line to read it on --backend dask")  # fmt: skip
    header = list(pd.read_csv(path, sep=sep, nrows=0, skipinitialspace=True).columns)
    _check_header(path, header, domain)
    dtype = {a.name: str for a in domain.attributes if not isinstance(a, Numeric)}
    return sep, header, dtype


def _check_header(path: Path, header: list[str], domain: Domain) -> None:
    """A domain attribute missing from the file is an error, as :func:`read_table` says."""
    absent = [c for c in domain.names if c not in header]
    if absent:
        raise DPQueryError(f"{path}: no column(s) {absent[:10]} for domain attributes; the file "
                           f"has {header[:20]}")  # fmt: skip


def check_columns(path: Path, domain: Domain) -> list[str]:
    """The file's header, checked against the domain in the client as :func:`read_table`
    checks it: a missing attribute is an error."""
    if path.name.lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

        header = list(pq.read_schema(path).names)
        _check_header(path, header, domain)
        return header
    return _csv_layout(path, domain)[1]


@dataclass(frozen=True)
class FilePart:
    """A whole table file (any format :func:`read_table` reads, gzip included)."""

    path: Path
    domain: Domain

    def rows(self) -> int:
        if self.path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

            return int(pq.ParquetFile(self.path).metadata.num_rows)
        return len(read_table(self.path, self.domain))

    def load(self) -> BinaryData:
        return encode(read_table(self.path, self.domain), self.domain)


@dataclass(frozen=True)
class ParquetPart:
    """Some row groups of a Parquet file."""

    path: Path
    domain: Domain
    row_groups: tuple[int, ...]

    def rows(self) -> int:
        import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

        meta = pq.ParquetFile(self.path).metadata
        return sum(int(meta.row_group(g).num_rows) for g in self.row_groups)

    def load(self) -> BinaryData:
        import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

        columns = list(self.domain.names)
        table = pq.ParquetFile(self.path).read_row_groups(list(self.row_groups), columns=columns)
        return encode(table.to_pandas(), self.domain)


@dataclass(frozen=True)
class CsvRangePart:
    """The lines of an uncompressed CSV that *start* in bytes ``[start, stop)``.

    Every line starts in exactly one range, so the ranges of a file partition its rows
    (as in ``dask.dataframe.read_csv``; quoted fields holding newlines are not supported).
    """

    path: Path
    domain: Domain
    start: int
    stop: int
    sep: str
    header: tuple[str, ...]
    dtype: tuple[tuple[str, str], ...] = field(default=())

    def _bytes(self) -> bytes:
        return range_bytes(self.path, self.start, self.stop)

    def _frame(self, columns: list[str]) -> pd.DataFrame:
        data = self._bytes()
        if not data.strip():
            return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
        dtype = {k: str for k, _ in self.dtype if k in columns}
        try:
            return pd.read_csv(
                io.BytesIO(data), sep=self.sep, header=None, names=list(self.header),
                usecols=columns, dtype=dtype, skipinitialspace=True,
            )  # fmt: skip
        except (ValueError, OSError) as exc:
            raise DPQueryError(
                f"cannot read bytes {self.start}-{self.stop} of {self.path}: {exc}"
            ) from None

    def rows(self) -> int:
        return len(self._frame([self.domain.names[0]]))

    def load(self) -> BinaryData:
        return encode(self._frame(list(self.domain.names)), self.domain)


def _split_csv(path: Path, domain: Domain, pieces: int) -> list[Partition]:
    sep, header, dtype = _csv_layout(path, domain)
    with path.open("rb") as f:
        body = len(f.readline())  # the header line ends where the records begin
    size = path.stat().st_size
    cuts = np.linspace(body, size, pieces + 1).astype(np.int64)
    cuts = np.unique(cuts)  # the first range starts right after the header's newline
    if cuts.size < 2:  # a header and no record: one empty range, counted as 0 rows
        cuts = np.array([body, size])
    text_cols = tuple((k, "str") for k in dtype)
    return [
        CsvRangePart(path, domain, int(a), int(b), sep, tuple(header), text_cols)
        for a, b in itertools.pairwise(cuts)
    ]


def _split_parquet(path: Path, domain: Domain, pieces: int) -> list[Partition]:
    import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

    groups = pq.ParquetFile(path).metadata.num_row_groups
    chunks = np.array_split(np.arange(groups), min(max(pieces, 1), max(groups, 1)))
    return [ParquetPart(path, domain, tuple(int(g) for g in c)) for c in chunks if c.size]


def table_files(
    path: Path, suffixes: tuple[str, ...] = TABLE_SUFFIXES, what: str = "table"
) -> list[Path]:
    """``path`` itself, or the table files (``what`` files, named with ``suffixes``) in a
    folder (sorted by name)."""
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir()
            if p.is_file() and any(p.name.lower().endswith(s) for s in suffixes)
        )  # fmt: skip
        if not files:
            raise DPQueryError(f"folder {path} holds no {what} files ({', '.join(suffixes)})")
        return files
    if not path.exists():
        raise DPQueryError(f"data file {path} does not exist")
    return [path]


def _default_pieces(path: Path) -> int:
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

        return int(pq.ParquetFile(path).metadata.num_row_groups)  # one per row group
    return max(1, -(-path.stat().st_size // CSV_BLOCK_BYTES))


def table_partitions(path: Path, domain: Domain, partitions: int | None = None) -> list[Partition]:
    """Partitions of a table file or a folder of them.

    Each file is cut into ``ceil(partitions / files)`` pieces where its format allows:
    Parquet by row groups, an uncompressed CSV by byte ranges; a gzipped CSV is one piece.
    Without ``partitions``: one piece per Parquet row group or per 32 MiB of CSV.
    """
    if partitions is not None and partitions < 1:
        raise DPQueryError(f"partitions must be a positive integer, got {partitions}")
    files = table_files(Path(path))
    # Columns the domain does not hold are named once for the whole input, in the client
    # (the workers' warnings would not reach the user): a warning per file would count the
    # files, and a folder cut by user would count its users.
    headers = [check_columns(f, domain) for f in files]
    warn_extra_columns(str(path), list(dict.fromkeys(c for h in headers for c in h)), domain.names)
    parts: list[Partition] = []
    for f in files:
        pieces = _default_pieces(f) if partitions is None else -(-partitions // len(files))
        name = f.name.lower()
        if name.endswith((".parquet", ".pq")):
            parts += _split_parquet(f, domain, pieces)
        elif name.endswith((".csv", ".tsv", ".txt")) and pieces > 1:
            parts += _split_csv(f, domain, pieces)
        else:  # compressed text cannot be cut without decompressing it
            parts.append(FilePart(f, domain))
    return parts


@dataclass(frozen=True)
class FramePart:
    """Rows of an in-memory table (a built-in dataset, or a DataFrame from the API)."""

    table: pd.DataFrame
    domain: Domain

    def rows(self) -> int:
        return len(self.table)

    def load(self) -> BinaryData:
        return encode(self.table, self.domain)


def frame_partitions(table: pd.DataFrame, domain: Domain, partitions: int) -> list[Partition]:
    """``table`` cut into ``partitions`` consecutive row ranges of near-equal size."""
    if partitions < 1:
        raise DPQueryError(f"partitions must be a positive integer, got {partitions}")
    bounds = np.linspace(0, len(table), partitions + 1).astype(np.int64)
    cols = list(domain.names)
    return [
        FramePart(table.iloc[a:b][cols], domain) for a, b in itertools.pairwise(bounds) if b > a
    ]


# -- bits ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class WordsPart:
    """A slice of already-encoded data (whole 64-record words, so no bit shifting)."""

    words: np.ndarray
    n: int

    def rows(self) -> int:
        return self.n

    def load(self) -> BinaryData:
        return BinaryData(self.words, self.n)


def binary_partitions(data: BinaryData, partitions: int) -> list[Partition]:
    """Encoded data cut into ``partitions`` slices of whole words."""
    if partitions < 1:
        raise DPQueryError(f"partitions must be a positive integer, got {partitions}")
    bounds = np.linspace(0, data.n_words, partitions + 1).astype(np.int64)
    parts: list[Partition] = []
    for a, b in itertools.pairwise(bounds):
        rows = min(data.n, int(b) * 64) - int(a) * 64
        if rows > 0:
            parts.append(WordsPart(np.ascontiguousarray(data.words[:, a:b]), rows))
    return parts


@dataclass(frozen=True)
class ItemsPart:
    """Consecutive records of an item table held in this process (an ``.npz``): sent to a
    worker once, as a table slice is."""

    matrix: sp.csr_array

    def rows(self) -> int:
        return int(self.matrix.shape[0])

    def load(self) -> BinaryData:
        return ItemSets(self.matrix).to_binary()

    def load_items(self) -> tuple[ItemSets, None, None]:
        """The records as sparse item sets (no user ids to check: the client cut them, and
        no lines read). The worker's copy of the slice is its own: taken as it is when
        canonical (not copied again at every pass)."""
        frozen = _frozen_csr(self.matrix)
        return ItemSets(self.matrix if frozen is None else frozen), None, None


def item_partitions(items: ItemSets, partitions: int) -> list[Partition]:
    """Unweighted item sets cut into ``partitions`` ranges of consecutive records."""
    if partitions < 1:
        raise DPQueryError(f"partitions must be a positive integer, got {partitions}")
    if items.weights is not None:
        raise DPQueryError("weighted item sets are a release, not data to partition")
    cuts = np.unique(np.linspace(0, items.n, partitions + 1).astype(np.int64))
    return [ItemsPart(_rows_view(items.matrix, a, b)) for a, b in itertools.pairwise(cuts)]


def _rows_view(matrix: sp.csr_array, a: int, b: int) -> sp.csr_array:
    """Rows ``a..b-1`` of a CSR matrix whose entries are views of ``matrix``'s (only the row
    pointers are new): the client holds the table once, not once more in its partitions."""
    lo, hi = int(matrix.indptr[a]), int(matrix.indptr[b])
    indptr = matrix.indptr[a : b + 1] - lo
    return sp.csr_array((matrix.data[lo:hi], matrix.indices[lo:hi], indptr),
                        shape=(b - a, matrix.shape[1]), copy=False)  # fmt: skip


@dataclass(frozen=True)
class BiasedBitsPart:
    """``rows`` records of independent bits, bit i ~ Bernoulli(bias[i]), generated where
    counted (DualQuery, Section 6.3), from this partition's own seed."""

    rows_: int
    bias: np.ndarray
    seed: np.random.SeedSequence

    def rows(self) -> int:
        return self.rows_

    def load(self) -> BinaryData:
        rng = np.random.default_rng(self.seed)
        return biased_bits(self.rows_, self.bias.size, seed=rng, bias=self.bias)


def biased_bits_partitions(
    n: int, d: int, partitions: int, *, seed: int | None = None
) -> tuple[list[Partition], np.ndarray]:
    """Partitions of an n x d biased-bits dataset, generated on the workers, and the biases.

    The biases come from ``seed`` and each partition from its own child seed, so the data
    depends on (n, d, partitions, seed) only; it is a different draw than
    :func:`dpquery.data.synthetic.biased_bits` with the same seed.
    """
    if n < 1 or d < 1 or partitions < 1:
        raise DPQueryError(f"need positive n, d and partitions, got {n}, {d}, {partitions}")
    root = np.random.SeedSequence(seed)
    bias_seed, *children = root.spawn(partitions + 1)
    bias = np.random.default_rng(bias_seed).random(d)
    bounds = np.linspace(0, n, partitions + 1).astype(np.int64)
    parts: list[Partition] = [
        BiasedBitsPart(int(b - a), bias, s)
        for a, b, s in zip(bounds[:-1], bounds[1:], children, strict=True)
        if b > a
    ]
    return parts, bias


# -- transactions -------------------------------------------------------------------------
@dataclass(frozen=True)
class TransactionPart:
    """A "row item" file holding *every* pair of its users (partitioned by user), or the
    users of such a file whose row ids fall in ``users = [lo, hi)`` (one file cut into user
    ranges: each range's worker parses the whole file and keeps its users' pairs).

    Only users with at least one item appear; users with none are all-zero records, which
    the caller adds back from the public ``n`` (see :class:`PartCounts.users`).
    """

    path: Path
    n: int
    d: int
    users: tuple[int, int] | None = None

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = read_pairs(self.path, columns=(2,))
        rows, items = pairs.rows, pairs.items
        bad = (rows < 0) | (rows >= self.n)
        if bad.any():
            raise DPQueryError(
                f"{self.path}: {int(bad.sum())} row id(s) outside [0, {self.n}), e.g. "
                f"{rows[bad][:5].tolist()}"
            )
        if self.users is not None:
            mine = (rows >= self.users[0]) & (rows < self.users[1])
            rows, items = rows[mine], items[mine]
        return rows, items

    def rows(self) -> int:
        return int(np.unique(self._pairs()[0]).size)

    def load(self) -> BinaryData:
        return self.load_with_users()[0]

    def load_with_users(self) -> tuple[BinaryData, np.ndarray, int]:
        """The partition's users as consecutive records, their global row ids, and the
        number of ``row item`` lines read (repeats included)."""
        rows, items = self._pairs()
        users, local = np.unique(rows, return_inverse=True)
        data = _from_pairs(local.ravel(), items, int(users.size), self.d, str(self.path))
        return data, users, int(rows.size)

    def load_items(self) -> tuple[ItemSets, np.ndarray, int]:
        """The partition's users as sparse item sets (never packed bits), what an item
        counter reads (:func:`~dpquery.queries.counts.reads_items`), their global row
        ids, which the caller checks no other partition holds, and the number of lines read."""
        rows, items = self._pairs()
        check_indices(items, self.d, "item", str(self.path))
        users, local = np.unique(rows, return_inverse=True)
        ones = np.ones(rows.size, bool)  # repeated lines add up to True, never wrap to 0
        matrix = sp.csr_array((ones, (local.ravel(), items)), shape=(users.size, self.d))
        return ItemSets(matrix), users.astype(np.int64), int(rows.size)


def transaction_partitions(
    paths: Sequence[Path], n: int, d: int, partitions: int | None = None
) -> list[Partition]:
    """One partition per transaction file, or, with ``partitions``, each file cut into
    ``ceil(partitions / files)`` ranges of user ids (the files must hold disjoint users)."""
    if partitions is not None and partitions < 1:
        raise DPQueryError(f"partitions must be a positive integer, got {partitions}")
    pieces = 1 if partitions is None else -(-partitions // max(len(paths), 1))
    if pieces == 1:
        return [TransactionPart(Path(p), n, d) for p in paths]
    cuts = np.unique(np.linspace(0, n, pieces + 1).astype(np.int64))
    return [
        TransactionPart(Path(p), n, d, (int(a), int(b)))
        for p in paths
        for a, b in itertools.pairwise(cuts)
    ]


# -- the work of one task -----------------------------------------------------------------
@dataclass(frozen=True)
class PartCounts:
    """What one partition returns: its size, a counter's int64 vectors (e.g. counts per
    workload), column counts, and (transactions only) its distinct users and its repeated
    ``row item`` lines (counted once; the client tells the curator, never the report)."""

    rows: int
    counts: tuple[np.ndarray, ...]
    column_counts: np.ndarray
    users: np.ndarray | None = None
    duplicates: int = 0


def count_partition(
    part: Partition, workloads: tuple[Workload, ...], d: int, kernel_threads: int | None = None
) -> PartCounts:
    """Encode ``part`` and count every query of every workload on it (exact int64)."""
    return count_part(part, WorkloadCounts(workloads), d, kernel_threads)


def count_part(
    part: Partition, counter: Counter, d: int, kernel_threads: int | None = None
) -> PartCounts:
    """Encode ``part`` and compute ``counter``'s int64 vectors on it."""
    if kernel_threads is not None:
        # Thread-local in numba: the kernels of this task use at most this many threads,
        # so several single-threaded workers on one machine do not oversubscribe its cores.
        numba.set_num_threads(max(1, min(kernel_threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    users = lines = None
    data: BinaryData | ItemSets
    if reads_items(counter):
        if not isinstance(part, TransactionPart | ItemsPart):
            raise DPQueryError(f"{type(counter).__name__} counts item data, but partition "
                               f"{part!r:.80} holds a table")  # fmt: skip
        data, users, lines = part.load_items()
    elif isinstance(part, TransactionPart):
        data, users, lines = part.load_with_users()
    else:
        data = part.load()
    if data.d != d:
        raise DPQueryError(f"partition {part!r:.80} has {data.d} bits, the dataset {d}")
    if data.n == 0:  # an empty range: nothing to count
        zeros = tuple(np.zeros(c, np.int64) for c in counter.cells())
        return PartCounts(0, zeros, np.zeros(d, np.int64))
    counts = tuple(np.asarray(c, dtype=np.int64) for c in counter.count(data))
    column_counts = data.column_counts()
    duplicates = 0 if lines is None else lines - int(column_counts.sum())
    return PartCounts(data.n, counts, column_counts, users, duplicates)


def zero_record_counts(counter: Counter, d: int) -> list[np.ndarray]:
    """``counter``'s vectors on one all-zero record (users without items)."""
    zero: BinaryData | ItemSets = BinaryData(np.zeros((d, n_words_for(1)), np.uint64), 1)
    if reads_items(counter):
        zero = ItemSets(sp.csr_array((1, d), dtype=np.uint8))
    return [np.asarray(c, dtype=np.int64) for c in counter.count(zero)]


class Recipe(Protocol):
    """How partitions held on a cluster were made, so that lost ones can be made again there,
    the same records bit for bit (:class:`~dpquery.backends.raw.BucketRecipe`: a raw table's
    buckets read again from the file)."""

    def remake(self, backend: object, buckets: Sequence[int]) -> list[object]:
        """Futures of the held partitions numbered ``buckets``, made again (one future
        each, in that order); an error when they can no longer be made as they were."""
        ...


@dataclass(frozen=True, eq=False)
class HeldPart:
    """A partition made on the cluster and held there: ``future`` (a Dask future) resolves,
    on a worker, to the partition a task reads (an :class:`ItemsPart`: a raw table's users
    gathered by :mod:`dpquery.backends.raw`); ``rows_`` is its number of records.

    ``recipe`` (None: none kept) makes it again, as partition ``bucket`` of the recipe's,
    when its worker is lost (:meth:`~dpquery.backends.partitioned.PartitionedData._map`)."""

    future: object
    rows_: int
    recipe: Recipe | None = None
    bucket: int = 0

    def rows(self) -> int:
        return self.rows_

    def load(self) -> BinaryData:  # pragma: no cover - a task receives the held partition
        raise DPQueryError("a partition held on the cluster is read there, by its task")


def in_memory(part: Partition) -> bool:
    """Whether ``part`` carries its rows (sent to the workers once, then kept there), rather
    than describing where to read or how to generate them (small: sent with every task)."""
    return isinstance(part, FramePart | WordsPart | ItemsPart)
