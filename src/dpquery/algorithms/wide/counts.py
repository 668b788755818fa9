"""The wide release's reads of the private data: two counters
(:mod:`dpquery.queries.counts`), counted where the records are.

The release reads its records only through exact integer counts of the records cut to ``s``
items by the keyed hash (:mod:`dpquery.algorithms.wide.bound`), in two requests:

1. :class:`ItemCounts`: every item's count (``d`` cells), before anything is charged;
2. :class:`HeadCounts`: the ``(s + 1)^2`` cells of the (head items, tail items) size
   histogram and the ``C(K, 2)`` head pair counts over each record's ``s2`` head items of
   smallest hash. The head is the ``K`` largest *noisy* item counts, so this request is
   made after the first measurement: it is built from post-processing of a noisy output and
   the public parameters, which is all the sensitivity argument of ``measure`` needs
   (``docs/wide.md``, Privacy).

Before them, when no bound is given, :class:`LengthCounts`: the number of records of at most
``g`` items for each ``g`` of a public grid (the private choice of ``s``; no cut); with
the second, under add/remove where the top-up is planned, :class:`LengthCounts` again at the
length histogram's bin edges (``topup.length_edges``, given ``s``), in the same pass
(:class:`~dpquery.queries.counts.Together`). In the head
mode (``core.release_head``) two others, with no cut:

3. :class:`AllItemCounts`: every item's exact count (``d`` cells), before anything is charged;
4. :class:`PickedSizes`: given the picked items (post-processing of the picks), the histogram
   of the number of picked items per record (``k + 1`` cells) and, under add/remove, the
   records' unpicked items, each record's cut at a public bound (one cell); with it,
   in the same pass, :class:`PickedPairs` where the picks' pairs are measured (no cut: no
   key to draw first).

Each counter carries the run's hash key (drawn from the run's generator, public to the
counter as in one process) and reads only :class:`~dpquery.data.items.ItemSets`: a record's
cut depends only on the record's items and the key (``h(key, g(x), item)``, never its row),
so every partition cuts its records as the whole table does and the counts add exactly over
partitions; and the counts, hence the release, are the same for the same records in any
order (a function of the multiset of records). In one process the counts come from
:func:`~dpquery.queries.counts.count_records` on the whole table; on a partitioned dataset
from one pass per request (``docs/dask.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide.bound import hash_order, keep_entries, truncate
from dpquery.algorithms.wide.kernels import cut_head_counts, cut_item_counts
from dpquery.data.items import ItemSets


def cut_records(data: ItemSets, s: int, key: int) -> tuple[sp.csr_array, np.ndarray]:
    """The records cut to their ``s`` items of smallest keyed hash, and each kept entry's
    rank by hash within its record."""
    matrix = data.matrix
    rank = hash_order(matrix, key)
    keep = rank < s
    return keep_entries(matrix, keep), rank[keep]


@dataclass(frozen=True, eq=False)
class ItemCounts:
    """Every item's count over the records cut to ``s`` items (one vector of ``d`` cells)."""

    reads: ClassVar[str] = "items"
    key: int
    s: int
    d: int

    def cells(self) -> list[int]:
        return [self.d]

    def count(self, data: ItemSets) -> list[np.ndarray]:
        # record by record (kernels.py): bincount(cut_records(...)[0].indices) without the
        # whole table's hash and rank arrays
        return [cut_item_counts(data.matrix, self.s, self.key)]


@dataclass(frozen=True, eq=False)
class HeadCounts:
    """Given the head (item ids, sorted; public), the size histogram's ``(s + 1)^2`` cells
    (cell ``a (s + 1) + b``: the cut records with ``a`` head and ``b`` tail items) and the
    ``C(K, 2)`` counts of head pairs ``j < k`` (positions in ``head``, ``np.triu_indices``
    order) over each record's ``s2`` head items of smallest hash."""

    reads: ClassVar[str] = "items"
    key: int
    s: int
    s2: int
    head: np.ndarray

    def cells(self) -> list[int]:
        K = int(self.head.size)
        return [(self.s + 1) ** 2, K * (K - 1) // 2]

    def count(self, data: ItemSets) -> list[np.ndarray]:
        # record by record (kernels.py): size_cells and pair_cells of cut_records(...)
        sizes, pairs = cut_head_counts(data.matrix, self.s, self.s2, self.head, self.key)
        return [sizes, pairs]


def size_cells(cut: sp.csr_array, head: np.ndarray, s: int) -> np.ndarray:
    """The ``(s + 1)^2`` exact counts of (head items, tail items) per cut record."""
    in_head = np.zeros(cut.shape[1], dtype=bool)
    in_head[head] = True
    rows = np.repeat(np.arange(cut.shape[0]), np.diff(cut.indptr))
    a = np.bincount(rows, weights=in_head[cut.indices].astype(np.int64),
                    minlength=cut.shape[0]).astype(np.int64)  # fmt: skip
    b = np.diff(cut.indptr) - a
    return np.bincount(a * (s + 1) + b, minlength=(s + 1) ** 2).astype(np.int64)


def pair_cells(cut: sp.csr_array, rank: np.ndarray, head: np.ndarray, s2: int) -> np.ndarray:
    """The exact counts of head pairs ``j < k`` over each cut record's ``s2`` head items of
    smallest hash (``rank``: each entry's rank by hash within its record)."""
    K = head.size
    position = np.full(cut.shape[1], -1, dtype=np.int64)
    position[head] = np.arange(K)
    in_head = position[cut.indices] >= 0
    # The s2 head items of smallest hash: among head entries, the first s2 in hash order.
    rows = np.repeat(np.arange(cut.shape[0]), np.diff(cut.indptr))
    order = np.lexsort((rank, ~in_head, rows))
    head_rank = np.empty(cut.nnz, dtype=np.int64)
    starts = np.repeat(cut.indptr[:-1], np.diff(cut.indptr))
    head_rank[order] = np.arange(cut.nnz) - starts
    kept = keep_entries(cut, in_head & (head_rank < s2))
    X = sp.csr_array(
        (np.ones(kept.nnz), position[kept.indices], kept.indptr), shape=(cut.shape[0], K)
    )
    full = (X.T @ X).toarray().astype(np.int64)  # sums of ones: exact in float64
    j, k = np.triu_indices(K, 1)
    return full[j, k]


@dataclass(frozen=True, eq=False)
class AllItemCounts:
    """Every item's exact count over the whole records (no cut; ``d`` cells)."""

    reads: ClassVar[str] = "items"
    d: int

    def cells(self) -> list[int]:
        return [self.d]

    def count(self, data: ItemSets) -> list[np.ndarray]:
        return [np.bincount(data.matrix.indices, minlength=self.d).astype(np.int64)]


@dataclass(frozen=True, eq=False)
class PickedSizes:
    """Given the picked items (ids; public), the number of records holding ``a`` of them,
    ``a = 0..k`` (``k + 1`` cells). With ``tail_bound`` ``S > 0``, also the records' unpicked
    items, each record's number cut at ``S``: ``sum_x min(|x| - a(x), S)`` (one cell, the
    same pass)."""

    reads: ClassVar[str] = "items"
    picked: np.ndarray
    tail_bound: int = 0

    def cells(self) -> list[int]:
        return [int(self.picked.size) + 1] + [1] * (self.tail_bound > 0)

    def count(self, data: ItemSets) -> list[np.ndarray]:
        matrix = data.matrix
        held = np.zeros(matrix.shape[1], dtype=np.int64)
        held[self.picked] = 1
        rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
        a = np.bincount(rows, weights=held[matrix.indices], minlength=matrix.shape[0])
        a = a.astype(np.int64)
        sizes = np.bincount(a, minlength=self.picked.size + 1).astype(np.int64)
        if self.tail_bound <= 0:
            return [sizes]
        tail = np.minimum(np.diff(matrix.indptr) - a, self.tail_bound)
        return [sizes, np.array([tail.sum()], dtype=np.int64)]


@dataclass(frozen=True, eq=False)
class PickedPairs:
    """Given the picked items (ids, sorted; public), the counts of the pairs ``j < k`` of
    picks (positions in ``picked``, ``np.triu_indices`` order). With ``bound`` ``b > 0``, over
    each record's ``b`` picks of smallest keyed hash (``key``; the record's picks cut as
    :func:`~dpquery.algorithms.wide.bound.truncate` cuts a record, reading only that record
    and the key): one vector of ``C(k, 2)`` cells. With ``bound`` 0, no cut: the pair counts
    of the records holding exactly ``a`` picks, for ``a = 2..k`` (``k - 1`` vectors of
    ``C(k, 2)`` cells, concatenated), from which the measurement weighs each record's pairs
    by its own number of picks (``measure.head_pairs``)."""

    reads: ClassVar[str] = "items"
    picked: np.ndarray
    bound: int = 0
    key: int = 0

    def cells(self) -> list[int]:
        k = int(self.picked.size)
        pairs = k * (k - 1) // 2
        return [pairs if self.bound > 0 else max(k - 1, 0) * pairs]

    def count(self, data: ItemSets) -> list[np.ndarray]:
        k = int(self.picked.size)
        sub = sp.csr_array(data.matrix[:, self.picked])  # each record's picks
        sub.sum_duplicates()
        if self.bound > 0:
            sub = truncate(sub, self.bound, self.key)
        j, i = np.triu_indices(k, 1)
        a = np.diff(sub.indptr)
        groups = [np.arange(sub.shape[0])] if self.bound > 0 else [
            np.flatnonzero(a == size) for size in range(2, k + 1)
        ]  # fmt: skip
        out = []
        for rows in groups:
            block = sub[rows]
            ones = np.ones(block.nnz)
            X = sp.csr_array((ones, block.indices, block.indptr), shape=(rows.size, k))
            full = (X.T @ X).toarray()  # sums of ones: exact in float64
            out.append(np.rint(full[j, i]).astype(np.int64))
        return [np.concatenate(out) if out else np.zeros(0, dtype=np.int64)]


@dataclass(frozen=True, eq=False)
class LengthCounts:
    """For each length ``g`` of a public grid, the number of records of at most ``g`` items
    (``len(grid)`` cells): the ranks the private choice of the bound reads."""

    reads: ClassVar[str] = "items"
    grid: np.ndarray

    def cells(self) -> list[int]:
        return [int(self.grid.size)]

    def count(self, data: ItemSets) -> list[np.ndarray]:
        lengths = np.sort(np.diff(data.matrix.indptr))
        return [np.searchsorted(lengths, self.grid, side="right").astype(np.int64)]


__all__ = [
    "AllItemCounts",
    "HeadCounts",
    "ItemCounts",
    "LengthCounts",
    "PickedPairs",
    "PickedSizes",
    "cut_records",
    "pair_cells",
    "size_cells",
]
