"""Exact integer counts over the records: what a mechanism that reads its data only through
counts asks of it, wherever the records are.

A *counter* names some count vectors over the records before anything is drawn (public) and
computes them on any set of records (:meth:`Counter.count` on a
:class:`~dpquery.data.binary.BinaryData`). Counts add over disjoint sets of records, so a
backend may count pieces of the data in other processes and add the int64 vectors exactly:
the totals do not depend on how the records were cut or in which order the pieces finished
(:meth:`dpquery.backends.PartitionedData.count`). :func:`count_records` is the one call a
mechanism makes: it counts in this process on :class:`BinaryData`, on the cluster on a
partitioned dataset.

* :class:`MarginalCounts`: the cell counts of attribute marginals (the counts
  adaptive-projection reads, :mod:`dpquery.algorithms.marginal.adaptive_projection`);
* :class:`WorkloadCounts`: the records each query of some workloads folds to 1 (true
  answers, :func:`~dpquery.queries.evaluate.fold_counts`).

Another mechanism plugs in by writing its own counter: a picklable object with ``cells()``
(the length of every vector, known before counting) and ``count(data)`` (int64 vectors). A
counter of item data (sets of items, e.g. the wide release's,
:mod:`dpquery.algorithms.wide.counts`) says so with ``reads = "items"``: it counts
:class:`~dpquery.data.items.ItemSets` (sparse records), never packed bits.
:data:`MAX_COUNT_CELLS` bounds what one request may hold in the client's memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numba
import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.queries.evaluate import fold_counts
from dpquery.queries.marginals import AttributeLayout, Marginal, attribute_codes
from dpquery.queries.workload import Workload

# The most cells one request may hold: 2^27 int64 counts are 1 GiB on the client, which
# also holds them once more as float64 for the mechanism (docs/dask.md, Memory).
MAX_COUNT_CELLS = 2**27


class Counter(Protocol):
    """Count vectors over records, named before any is computed."""

    def cells(self) -> list[int]:
        """The length of every count vector (public: no record is read)."""
        ...

    def count(self, data: Any) -> list[np.ndarray]:
        """The int64 count vectors on ``data``'s records: :class:`BinaryData`, or
        :class:`~dpquery.data.items.ItemSets` for a counter that :func:`reads_items`."""
        ...


def reads_items(counter: Counter) -> bool:
    """Whether ``counter`` counts item data (``reads = "items"``: sparse records) rather
    than packed bits."""
    return getattr(counter, "reads", "bits") == "items"


@dataclass(frozen=True, eq=False)
class Together:
    """Several counters' vectors from one pass over the records, each counter's in turn and
    each the one it makes alone: requests whose inputs are known at the same time read the
    data once rather than once each (a workload's answers riding on a pass; the wide
    release's head counts and the top-up's length ranks). The counters read the same kind
    of records (:func:`reads_items`)."""

    counters: tuple[Counter, ...]

    def __post_init__(self) -> None:
        if len({reads_items(c) for c in self.counters}) != 1:
            raise ValueError("counters together must read the same kind of records")

    @property
    def reads(self) -> str:
        return "items" if reads_items(self.counters[0]) else "bits"

    @property
    def name(self) -> str:
        """The pass's name in reports: its counters' names joined by ``+``."""
        return "+".join(getattr(c, "name", type(c).__name__) for c in self.counters)

    def cells(self) -> list[int]:
        return [cells for c in self.counters for cells in c.cells()]

    def count(self, data: Any) -> list[np.ndarray]:
        return [vector for c in self.counters for vector in c.count(data)]


@dataclass(frozen=True, eq=False)
class MarginalCounts:
    """The cell counts of each marginal (attributes of ``layout``), cells row-major as
    :func:`~dpquery.queries.marginals.marginal_counts` numbers them."""

    layout: AttributeLayout
    marginals: tuple[Marginal, ...]

    def cells(self) -> list[int]:
        return [self.layout.size_of(r) for r in self.marginals]

    def count(self, data: BinaryData) -> list[np.ndarray]:
        return codes_counts(attribute_codes(data, self.layout), self.layout.sizes, self.marginals)


def codes_counts(
    codes: np.ndarray, sizes: np.ndarray, marginals: Sequence[Marginal]
) -> list[np.ndarray]:
    """The int64 cell counts of each marginal on ``(n, g)`` attribute codes (cells row-major,
    as :func:`~dpquery.queries.marginals.cell_index` numbers them), all in one compiled
    loop: per marginal, one sweep over the attributes' code columns, its count vector in
    cache (numpy's cell index and bincount would make a pass over n per attribute)."""
    if not marginals:
        return []
    attrs = np.array([a for r in marginals for a in r], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum([len(r) for r in marginals])]).astype(np.int64)
    strides = np.empty(attrs.size, dtype=np.int64)
    cells = np.empty(len(marginals), dtype=np.int64)
    for k, r in enumerate(marginals):
        stride = 1
        for j in range(len(r) - 1, -1, -1):
            strides[ptr[k] + j] = stride
            stride *= int(sizes[r[j]])
        cells[k] = stride
    offsets = np.concatenate([[0], np.cumsum(cells)]).astype(np.int64)
    out = np.zeros(int(offsets[-1]), dtype=np.int64)
    if codes.shape[0]:
        _count_cells(np.ascontiguousarray(codes.T), attrs, strides, ptr, offsets, out)
    return [out[offsets[k] : offsets[k + 1]] for k in range(len(marginals))]


@numba.njit(parallel=True, cache=True)
def _count_cells(codes_t, attrs, strides, ptr, offsets, out):  # pragma: no cover - jit
    for k in numba.prange(ptr.size - 1):
        lo, hi, base = ptr[k], ptr[k + 1], offsets[k]
        for i in range(codes_t.shape[1]):
            c = 0
            for j in range(lo, hi):
                c += np.int64(codes_t[attrs[j], i]) * strides[j]
            out[base + c] += 1


@dataclass(frozen=True, eq=False)
class WorkloadCounts:
    """Per workload, the records each query folds to 1 (the counts behind true answers)."""

    workloads: tuple[Workload, ...]

    def cells(self) -> list[int]:
        return [len(w) for w in self.workloads]

    def count(self, data: BinaryData) -> list[np.ndarray]:
        return [fold_counts(w, data).astype(np.int64, copy=False) for w in self.workloads]


def check_cells(counter: Counter, what: str) -> int:
    """The cells ``counter`` asks for, refused with the number past :data:`MAX_COUNT_CELLS`."""
    cells = sum(counter.cells())
    if cells > MAX_COUNT_CELLS:
        raise DPQueryError(
            f"{what} needs {cells:,} count cells, more than the {MAX_COUNT_CELLS:,} "
            f"({MAX_COUNT_CELLS * 8 / 2**30:.0f} GiB as int64) the client holds; use fewer or "
            "smaller marginals"
        )
    return cells


def counts_elsewhere(data: Any) -> bool:
    """Whether ``data`` counts its records itself (a partitioned dataset: the records are
    never in this process), rather than being records in memory."""
    return callable(getattr(data, "count", None))


def count_records(data: BinaryData | Any, counter: Counter) -> list[np.ndarray]:
    """``counter``'s int64 vectors on ``data``: records in this process (:class:`BinaryData`,
    or :class:`~dpquery.data.items.ItemSets` for an item counter), or a partitioned dataset
    in one pass over its partitions (:func:`counts_elsewhere`)."""
    if isinstance(data, BinaryData) or not counts_elsewhere(data):
        return counter.count(data)
    return list(data.count(counter))


__all__ = [
    "MAX_COUNT_CELLS",
    "Counter",
    "MarginalCounts",
    "Together",
    "WorkloadCounts",
    "check_cells",
    "codes_counts",
    "count_records",
    "counts_elsewhere",
    "reads_items",
]
