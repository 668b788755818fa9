"""A raw ``user,item`` table read on a Dask cluster: its lines in blocks on the workers,
grouped by user there, never in the client.

A data holder's ratings or purchases table (``docs/wide.md``, "From a raw user x item CSV")
is one line per (user, item), in any order: a user's lines may lie anywhere in the file.
The records are the users, so the lines must meet by user before anything is counted.
Two rounds of tasks do that (a shuffle by user, as ``dask.dataframe`` shuffles a frame, on
compact arrays rather than frames of text):

1. **Blocks.** The file is cut into byte ranges (the lines that *start* in a range, as
   ``dask.dataframe.read_csv`` cuts a file; a compressed file is one block). A worker reads
   its block as the local reader does (:meth:`~dpquery.data.raw_items.RawBlock.ids`: Arrow's
   CSV reader where it reads the block as pandas does, pandas with
   :func:`~dpquery.data.raw_items.read_options` otherwise; every id as text, spaces
   stripped, canonical integer ids as int64), drops the lines without a user id, and sends each
   user to one of ``B`` buckets by a fixed hash of the user id's text (routing only: two
   users whose hashes agree share a bucket and stay two users). Each block returns, per
   bucket, the distinct user ids it saw there and each line's user and item codes (the
   catalogue's column with ``--item-list``; the block's own item ids to be learned).
2. **Buckets.** A worker gathers its bucket's pieces from every block, merges the user ids
   by their text (a user whose lines lie in several blocks is one record) and holds the
   bucket's users as sparse records (:class:`~dpquery.backends.partitions.ItemsPart`, each
   distinct pair once), which the wide release's counters then read in every pass
   (:class:`~dpquery.backends.partitioned.PartitionedData`), as they read a ``row item``
   file's ranges of users.

Every user's lines end in exactly one bucket, so the records on the cluster are the records
of the local reader (:func:`~dpquery.data.raw_items.read_raw_lines`), in another order. The
wide release reads them only through exact integer counts that do not depend on the order of
the records (``docs/dask.md``), so a seeded release is the local one, byte for byte.

With ``--learn-items`` the buckets keep the ids' texts: the item universe's selection reads
the cut records' counts (:meth:`ClusterLines.cut_counts`: each user's distinct items cut to
the ``s`` of smallest keyed hash of the (user id, item id) pair, a rule of the two texts and
the key alone, so a user's cut is the one the local reader makes), summed exactly in the
client; the released ids are then sent to the buckets, which keep their users' items among
them (:meth:`ClusterLines.over`).

A worker lost after the read loses the buckets it held. The client keeps how they were made
(:class:`BucketRecipe`: the blocks, the number of buckets, the catalogue, the file's size and
modification time, and each block's fingerprint taken at the read), and the pass that finds
a bucket lost makes it again on the cluster (every bucket lost by then together): the blocks
are read again, each checked against its fingerprint, and the bucket's users gathered as
before, the same records bit for bit. A file that changed since the read is refused.

The client holds only the counts, the users' number and the lines' (for the curator's note
and the empty table's error). Nothing here is private accounting: the mechanisms run in the
client, on the same counts as in one process.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.backends.cluster import DaskBackend
from dpquery.backends.partitioned import MAX_RESENDS, PartitionedData, one_copy
from dpquery.backends.partitions import HeldPart, ItemsPart
from dpquery.data.raw_items import (
    _GOLDEN,
    RawBlock,
    _mix,
    bounded_item_counts,
    distinct,
    id_hashes,
    id_texts,
    numbered_ids,
)
from dpquery.errors import DPQueryError

BUCKET_BYTES = 128 * 2**20
"""At least one bucket per this many bytes of the file, whatever the partitions asked for:
a bucket's worker holds its users' pairs and sorts them once (about 8 M lines of a
Netflix-like table, a few hundred MiB at the peak)."""
_ROUTE_KEY = "dpquery-buckets!"  # the routing hash's fixed key (16 characters): not secret


@dataclass(frozen=True)
class Piece:
    """A block's lines of one bucket: the distinct user ids seen (``users``: int64 when each
    is a canonical decimal integer, else text), each line's
    user (a code into them) and item (a code: a catalogue column, or into ``items``, the
    block's item ids; -1 for no item, a line kept for its user)."""

    users: np.ndarray
    user_codes: np.ndarray
    item_codes: np.ndarray
    items: np.ndarray | None = None


@dataclass(frozen=True)
class BlockStats:
    """What a block read: its lines, those without a user id, and (with a catalogue) those
    whose item is not listed, for the curator's note and the empty table's error; and the
    fingerprint of its bytes (:meth:`~dpquery.data.raw_items.RawBlock.digest`), which a
    bucket made again checks (:class:`BucketRecipe`)."""

    lines: int
    unattributed: int
    unlisted: int
    digest: str = ""


_CANONICAL = r"0|[1-9][0-9]{0,17}"  # a decimal integer's own text, within int64


def _compact(ids: np.ndarray) -> np.ndarray:
    """User ids as int64 when every one is a canonical decimal integer (its text is
    ``str(value)``: a bijection, so two ids are equal exactly when their texts are), else
    as text: eight bytes an id rather than a Python string, on most real tables."""
    if ids.dtype == np.int64:  # read as canonical integers already (arrow_ids)
        return ids
    if ids.size and pd.Series(ids).str.fullmatch(_CANONICAL).all():
        return ids.astype(np.int64)
    return ids


def _route(ids: np.ndarray, buckets: int) -> np.ndarray:
    """Each user id's bucket: a fixed hash of its text, computed on the integer of a
    canonical decimal text (the same bucket for the same text, whichever form a block
    holds it in)."""
    out = np.empty(ids.size, np.uint64)
    if ids.dtype == np.int64:
        canonical = np.ones(ids.size, bool)
    else:
        canonical = pd.Series(ids, dtype=object).str.fullmatch(_CANONICAL).to_numpy(bool)
    numbers = ids[canonical].astype(np.int64).view(np.uint64)
    out[canonical] = _mix(numbers + _GOLDEN)
    out[~canonical] = id_hashes(ids[~canonical], _ROUTE_KEY)
    return (out % np.uint64(buckets)).astype(np.int64)


def split_block(
    block: RawBlock, buckets: int, catalogue: Sequence[str] | None, numbered: int | None = None,
    digest: str | None = None,
) -> tuple[list[Piece], BlockStats]:  # fmt: skip
    """Read ``block`` and cut its lines into ``buckets`` pieces by user (step 1 of the
    module docstring). In a release's own file (``numbered``: its first line's ``M``) a
    user is its number ``0..M-1``, as the local reader numbers it. With ``digest`` (the
    block's fingerprint at an earlier read) the block must read the same bytes again, or
    it is refused: the records made from it would not be those read before."""
    data = block.data()
    seen = block.digest(data)
    if digest is not None and seen != digest:
        where = "" if block.start is None else f" (bytes {block.start}-{block.stop})"
        raise DPQueryError(changed(block.path, f"its lines{where} are not those read"))
    ids = block.ids(data)
    user_ids, user_codes, item_codes = ids.users, ids.user_codes, ids.item_codes
    if numbered is not None:
        user_codes, user_ids = numbered_ids(block.path, user_ids, user_codes, numbered)
    unlisted = 0
    item_ids: np.ndarray | None = None
    if catalogue is not None:  # each distinct id's column (-1: not listed)
        columns = pd.Index(list(catalogue)).get_indexer(id_texts(ids.items))
        item_codes = columns[item_codes] if len(columns) else item_codes
        unlisted = int((item_codes < 0).sum())
    else:  # the ids to be learned; an empty id is no item
        item_ids = id_texts(ids.items)
        if (item_ids == "").any():
            item_codes = np.where(item_codes == int(np.flatnonzero(item_ids == "")[0]), -1,
                                  item_codes)  # fmt: skip
    user_ids = _compact(user_ids)
    route = _route(user_ids, buckets)
    line_route = route[user_codes]
    pieces = []
    for b in range(buckets):
        mine = route == b
        renumber = np.cumsum(mine) - 1  # the bucket's users, in the block's order
        at = line_route == b
        pieces.append(Piece(user_ids[mine], renumber[user_codes[at]].astype(np.int32),
                            item_codes[at].astype(np.int32), item_ids))  # fmt: skip
    stats = BlockStats(ids.lines, ids.unattributed, unlisted, seen)
    return pieces, stats


@dataclass(frozen=True)
class RawUsers:
    """A bucket's users with every line of theirs (step 2 of the module docstring), their
    items still the ids' texts (``items``): what the item universe's selection reads."""

    users: np.ndarray  # int64 when every id is a canonical decimal integer, else text
    items: np.ndarray
    matrix: sp.csr_array  # users x items, each distinct pair once

    def cut_counts(self, bound: int, key: str) -> tuple[np.ndarray, np.ndarray]:
        """The ids held by some cut record and their counts (the cut of
        :func:`~dpquery.data.raw_items.bounded_item_counts`, the same as in one process)."""
        m = self.matrix
        rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
        counts = bounded_item_counts(rows, m.indices, id_hashes(id_texts(self.users), key),
                                     id_hashes(self.items, key), bound)  # fmt: skip
        held = np.flatnonzero(counts)
        return self.items[held], counts[held]

    def over(self, catalogue: Sequence[str]) -> ItemsPart:
        """The users as records over ``catalogue`` (item ``j`` its ``j``-th id; an item not
        in it dropped)."""
        cols = pd.Index(list(catalogue)).get_indexer(self.items)
        m = self.matrix
        rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
        return ItemsPart(_records(rows, cols[m.indices], m.shape[0], len(catalogue)))


def _records(rows: np.ndarray, cols: np.ndarray, n: int, d: int) -> sp.csr_array:
    """Canonical CSR records of ``n`` users over ``d`` items: each distinct ``(row, col)``
    pair once, sorted; ``col`` -1 is no item (the row stays, empty)."""
    kept = cols >= 0
    keys = distinct(rows[kept].astype(np.int64) * max(d, 1) + cols[kept])
    indptr = np.r_[0, np.cumsum(np.bincount(keys // max(d, 1), minlength=n))]
    indices = (keys % max(d, 1)).astype(np.int32)
    return sp.csr_array((np.ones(keys.size, np.uint8), indices, indptr), shape=(n, d))


def gather_bucket(d: int | None, *pieces: Piece) -> ItemsPart | RawUsers:
    """A bucket's pieces from every block as one bucket of users: records over the
    catalogue's ``d`` items (an :class:`ItemsPart`, what the counters read), or, with
    ``d`` None, :class:`RawUsers` over the ids seen."""
    if all(p.users.dtype == np.int64 for p in pieces):
        user_ids = np.concatenate([p.users for p in pieces])
    else:  # some block held a user id that is not a canonical integer: all as text
        user_ids = np.concatenate([id_texts(p.users) for p in pieces])
    codes, users = pd.factorize(user_ids)
    offsets = np.cumsum([0] + [len(p.users) for p in pieces])
    rows = np.concatenate([codes[o + p.user_codes] for o, p in zip(offsets, pieces, strict=False)])
    if d is not None:
        cols = np.concatenate([p.item_codes for p in pieces]).astype(np.int64)
        return ItemsPart(_records(rows, cols, len(users), d))
    item_ids = [p.items if p.items is not None else np.zeros(0, object) for p in pieces]
    item_codes, items = pd.factorize(np.concatenate(item_ids))
    starts = np.cumsum([0] + [len(i) for i in item_ids])
    cols = np.concatenate([
        np.where(p.item_codes >= 0, item_codes[s + np.maximum(p.item_codes, 0)], -1)
        if len(item_codes) else np.full(len(p.item_codes), -1)
        for s, p in zip(starts, pieces, strict=False)
    ]).astype(np.int64)  # fmt: skip
    items = np.asarray(items, dtype=object)
    matrix = _records(rows, cols, len(users), len(items))
    return RawUsers(np.asarray(users), items, matrix)


def _users(bucket: ItemsPart | RawUsers) -> int:
    return int(bucket.matrix.shape[0])


def _cut_counts(
    bucket: RawUsers, payload: tuple[int, str], d: int = 0, kernel_threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """A bucket's cut counts (``payload``: the bound and the key), as a pass's task (``d``
    and ``kernel_threads``, which every pass gives its tasks, are not read)."""
    return bucket.cut_counts(*payload)


def _over(bucket: RawUsers, catalogue: Sequence[str]) -> ItemsPart:
    return bucket.over(catalogue)


def _piece(result: tuple[list[Piece], BlockStats], b: int) -> Piece:
    return result[0][b]


def _stats(result: tuple[list[Piece], BlockStats]) -> BlockStats:
    return result[1]


def _silent(users: int, d: int | None) -> ItemsPart | RawUsers:
    """``users`` empty records (a release's own file's users without a line): over ``d``
    items, or with no id yet (``d`` None)."""
    empty = np.zeros(0, np.int64)
    if d is None:
        return RawUsers(empty, np.zeros(0, object), _records(empty, empty, users, 0))
    return ItemsPart(_records(empty, empty, users, d))


def _futures(data: PartitionedData) -> list[Any]:
    """The futures of ``data``'s held partitions as they are now (made again where a worker
    was lost in its passes)."""
    return [p.future for p in data.partitions if isinstance(p, HeldPart)]


def changed(path: object, why: str) -> str:
    """The error of a raw table that changed after it was read, when some of its buckets
    must be made again (a worker holding them was lost)."""
    return (f"{path} changed since it was read ({why}): a worker holding some of its users "
            "was lost and their records cannot be read again as they were; the privacy "
            "budget charged so far is spent. Release again from the file as it is now")  # fmt: skip


@dataclass(frozen=True)
class FileStamp:
    """A file's size and modification time (in nanoseconds) when it was read."""

    path: Path
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        st = path.stat()
        return cls(path, st.st_size, st.st_mtime_ns)

    def check(self) -> None:
        """Refuse (the error of :func:`changed`) a file whose size or modification time
        is no longer the one stamped."""
        try:
            now = FileStamp.of(self.path)
        except OSError as exc:
            raise DPQueryError(changed(self.path, f"it cannot be read: {exc}")) from None
        if now.size != self.size:
            raise DPQueryError(changed(self.path, f"{self.size} bytes when read, {now.size} "
                                       "now"))  # fmt: skip
        if now.mtime_ns != self.mtime_ns:
            raise DPQueryError(changed(self.path, "it was modified after it was read"))


def _made(
    client: Any, blocks: Sequence[RawBlock], buckets: int, catalogue: Any, d: int | None,
    numbered: int | None, digests: Sequence[str | None], which: Sequence[int],
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    """Steps 1 and 2 of the module docstring as tasks: each block read and split into
    ``buckets`` pieces by user (against ``catalogue``, a future of the ids, of ``d`` items;
    each block checked against its digest, when given), and the buckets ``which`` gathered
    from them. Returns the blocks' futures and the buckets'."""
    read = [client.submit(split_block, b, buckets, catalogue, numbered, digest, pure=False)
            for b, digest in zip(blocks, digests, strict=True)]  # fmt: skip
    held = [
        client.submit(gather_bucket, d, *[client.submit(_piece, r, b, pure=False) for r in read],
                      pure=False)
        for b in which
    ]  # fmt: skip
    return read, held


@dataclass(frozen=True, eq=False)
class BucketRecipe:
    """How :func:`read_on_cluster` made a raw table's buckets, kept in the client so that
    buckets lost with a worker are made again on the cluster (:meth:`remake`), the same
    records bit for bit: the file's blocks, read again; the routing of users to
    ``buckets`` buckets; the catalogue the blocks were read against (None: the ids' texts
    kept, for the item universe's selection) and, after the selection, the released ids
    the buckets were then kept over (``over``); a release's own file's ``numbered``
    users and its ``silent`` ones (users without a line: bucket number ``buckets``).

    Every step is a function of the blocks' bytes and these public inputs alone (the
    users' order in a bucket is their order of first appearance over the blocks in file
    order, their items the catalogue's columns): the client holds the catalogue, so no id
    is learned again. The bytes are checked against what was read: the file's size and
    modification time in the client (``stamp``), each block's fingerprint (``digests``,
    :meth:`~dpquery.data.raw_items.RawBlock.digest`, taken at the read) on the workers. A
    file that changed is refused: its records could differ from those the charges so far
    were made on."""

    blocks: tuple[RawBlock, ...]
    buckets: int
    catalogue: tuple[str, ...] | None
    numbered: int | None
    stamp: FileStamp
    digests: tuple[str, ...]
    silent: int = 0
    over: tuple[str, ...] | None = None

    def remake(self, backend: object, buckets: Sequence[int]) -> list[Any]:
        """Futures of the buckets numbered ``buckets`` made again: one more read of the
        blocks for all of them (a bucket takes lines from every block)."""
        assert isinstance(backend, DaskBackend)
        self.stamp.check()  # before any task: a file that changed is refused at once
        client = backend.client
        d = None if self.catalogue is None else len(self.catalogue)
        read = [b for b in buckets if b < self.buckets]
        made: dict[int, Any] = {}
        if read:
            ids = None
            if self.catalogue is not None:
                ids = one_copy(client, self.catalogue)
            _, held = _made(client, self.blocks, self.buckets, ids, d, self.numbered,
                            self.digests, read)  # fmt: skip
            made = dict(zip(read, held, strict=True))
        out = []
        for b in buckets:
            if b not in made:  # the silent users' bucket, made in the client
                [made[b]] = client.scatter([_silent(self.silent, d)], hash=False)
            out.append(made[b])
        if self.over is not None:
            kept = one_copy(client, self.over)
            out = [client.submit(_over, f, kept, pure=False) for f in out]
        return out


@dataclass(eq=False)
class ClusterLines:
    """The lines of a raw table held on a cluster, grouped into buckets of users (the
    module docstring): ``n`` users, ``lines`` lines read, ``dropped`` of them without a
    user id or (with a catalogue) with an unlisted item. Stands in for
    :class:`~dpquery.data.raw_items.RawLines` where the item universe's selection reads
    them (``n``, the columns, :meth:`cut_counts`). ``recipe`` makes lost buckets again;
    every pass over the buckets (:class:`~dpquery.backends.partitioned.PartitionedData`)
    uses it when a worker is lost."""

    backend: DaskBackend
    buckets: list[Any]  # futures of ItemsPart (a catalogue) or RawUsers (ids to learn)
    sizes: list[int]
    d: int | None
    user_column: str
    item_column: str
    lines: int
    dropped: int
    source: str
    requested: int | None
    recipe: BucketRecipe

    @property
    def n(self) -> int:
        return int(sum(self.sizes))

    def cut_counts(self, bound: int, key: str) -> dict[str, int]:
        """The selection's counts, summed exactly over the buckets (each user in one), in
        the buckets' order."""
        held = self._held(0)
        results = dict(held._map(_cut_counts, (bound, key)))
        self.buckets = _futures(held)
        out: dict[str, int] = {}
        for b in range(len(self.buckets)):
            ids, counts = results[b]
            for i, c in zip(ids.tolist(), counts.tolist(), strict=True):
                out[str(i)] = out.get(str(i), 0) + int(c)
        return out

    def over(self, catalogue: Sequence[str]) -> PartitionedData:
        """The users as records over ``catalogue`` on the cluster (the ids' texts dropped)."""
        client = self.backend.client
        ids = one_copy(client, tuple(catalogue))
        held = [client.submit(_over, b, ids, pure=False) for b in self.buckets]
        self.buckets = held  # the ids' buckets are let go once their records are made
        self.recipe = replace(self.recipe, over=tuple(catalogue))
        return self.data(len(catalogue))

    def data(self, d: int | None = None) -> PartitionedData:
        """The buckets as partitioned item data over ``d`` items (a catalogue's)."""
        width = self.d if d is None else d
        assert width is not None
        return self._held(width, self.n)

    def _held(self, d: int, n: int | None = None) -> PartitionedData:
        """The buckets as held partitions, each made again by the recipe when lost."""
        pairs = enumerate(zip(self.buckets, self.sizes, strict=True))
        parts = tuple(HeldPart(f, s, self.recipe, b) for b, (f, s) in pairs)
        return PartitionedData(parts, self.backend, d, declared_n=n, source=self.source,
                               requested=self.requested)  # fmt: skip


def read_on_cluster(
    blocks: Sequence[RawBlock], backend: DaskBackend, *, catalogue: Sequence[str] | None,
    buckets: int, source: str, requested: int | None, numbered: int | None = None,
) -> ClusterLines:  # fmt: skip
    """Steps 1 and 2 of the module docstring: ``blocks`` read on the workers, their users
    gathered into ``buckets`` held there, with the recipe that makes a lost bucket again
    (:class:`BucketRecipe`: the file's stamp taken before the read, each block's
    fingerprint at the read). A table of no line is refused, as the local reader refuses
    it. A release's own file (``numbered``: the ``M`` of its first line
    ``# rows M items D``) holds ``M`` records, its users ``0..M-1`` (:func:`split_block`):
    those without a line are empty records, held in one more bucket."""
    from distributed import KilledWorker  # optional (the dask extra)

    client = backend.client
    stamp = FileStamp.of(blocks[0].path)
    ids = None
    if catalogue is not None:
        ids = one_copy(client, tuple(catalogue))
    d = None if catalogue is None else len(catalogue)
    for attempt in itertools.count():
        read, held = _made(client, blocks, buckets, ids, d, numbered, [None] * len(blocks),
                           range(buckets))  # fmt: skip
        stats = [client.submit(_stats, r, pure=False) for r in read]
        del read  # the blocks' pieces are freed by the scheduler once gathered
        try:  # raises a block's error (a block that cannot be read)
            read_stats: list[BlockStats] = client.gather(stats)
            break
        except (CancelledError, KilledWorker):
            # A worker lost with what a block read, its task forgotten (the read has no
            # recipe yet): the file is read again, as nothing has been charged.
            if attempt >= MAX_RESENDS:
                raise DPQueryError(f"a worker was lost {attempt + 1} times while {source} was "
                                   "being read (nothing was charged); is the cluster "
                                   "failing?") from None  # fmt: skip
            if ids is not None and ids.status != "finished":
                ids = one_copy(client, tuple(catalogue or ()))
    lines = sum(s.lines for s in read_stats)
    if lines == 0:
        raise DPQueryError(f"{source} has no records (only a header): there is nothing to "
                           "release")  # fmt: skip
    recipe = BucketRecipe(tuple(blocks), buckets, None if catalogue is None else tuple(catalogue),
                          numbered, stamp, tuple(s.digest for s in read_stats))  # fmt: skip
    dropped = sum(s.unattributed + s.unlisted for s in read_stats)
    user, item = blocks[0].user, blocks[0].item
    out = ClusterLines(backend, held, [0] * buckets, d, user, item, lines, dropped, source,
                       requested, recipe)  # fmt: skip
    sized = out._held(0)  # a lost bucket is made again here too
    sizes = dict(sized._map(_users))
    out.buckets, out.sizes = _futures(sized), [int(sizes[b]) for b in range(buckets)]
    if numbered is not None and numbered > out.n:  # the users without a line
        silent = numbered - out.n
        [future] = client.scatter([_silent(silent, d)], hash=False)
        out.buckets, out.sizes = [*out.buckets, future], [*out.sizes, silent]
        out.recipe = replace(recipe, silent=silent)
    return out


__all__ = [
    "BUCKET_BYTES", "BucketRecipe", "ClusterLines", "FileStamp", "RawUsers", "gather_bucket",
    "read_on_cluster", "split_block",
]  # fmt: skip
