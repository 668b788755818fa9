"""adaptive-projection's one read of the private data: the counts of its candidate marginals.

AIM's mechanism (:mod:`dpquery.algorithms.marginal.adaptive_projection`) reads the data only
through marginal counts, and every marginal it may ever read is on a list fixed before
anything is drawn: every 1-way marginal (measured first, and again by the column
refinement), the workload's marginals and their sub-marginals, and the pair candidates. That
list depends only on the workload, the attribute sizes and ``n``, all public. The compressed
candidates (:mod:`dpquery.algorithms.marginal.compress`) are sums of fine cells through
value maps, so their counts follow from the fine ones on the client.

So the mechanism asks a :class:`MarginalSource` once, for the whole list, before its first
charge, and then runs on those counts: on :class:`~dpquery.data.binary.BinaryData` they are
counted in this process; on a partitioned dataset
(:class:`~dpquery.backends.PartitionedData`) in one pass over its partitions, each worker
returning int64 counts that the client adds exactly. The counts are equal either way, so a
seeded release is byte-identical on both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpquery.queries.counts import MarginalCounts, check_cells, codes_counts, count_records
from dpquery.queries.marginals import AttributeLayout, Marginal


class MarginalSource(Protocol):
    """The data as adaptive-projection sees it: ``n`` (public) and marginal counts."""

    @property
    def n(self) -> int: ...

    def counts(self, marginals: Sequence[Marginal]) -> list[np.ndarray]:
        """The int64 cell counts of every marginal, in one read of the data."""
        ...


@dataclass(frozen=True, eq=False)
class CodesSource:
    """Records given as ``(n, g)`` attribute codes, counted in this process."""

    codes: np.ndarray
    sizes: np.ndarray

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    def counts(self, marginals: Sequence[Marginal]) -> list[np.ndarray]:
        return codes_counts(self.codes, self.sizes, marginals)


@dataclass(frozen=True, eq=False)
class DataSource:
    """A dataset counted where it lives (:func:`~dpquery.queries.counts.count_records`): in
    this process, or on the cluster for a partitioned one."""

    data: Any
    layout: AttributeLayout

    @property
    def n(self) -> int:
        return int(self.data.n)

    def counts(self, marginals: Sequence[Marginal]) -> list[np.ndarray]:
        return count_records(self.data, MarginalCounts(self.layout, tuple(marginals)))


def counted_marginals(candidates: Iterable[Marginal], g: int) -> list[Marginal]:
    """Every marginal the mechanism may read: the ``g`` 1-way marginals, then the
    candidates (each once, in order)."""
    return list(dict.fromkeys([*((a,) for a in range(g)), *candidates]))


def check_candidate_cells(layout: AttributeLayout, marginals: Sequence[Marginal]) -> int:
    """The count cells of ``marginals``, refused (with the number) past the client's limit."""
    return check_cells(MarginalCounts(layout, tuple(marginals)), "adaptive-projection's candidates")


def read_counts(
    source: MarginalSource, marginals: Sequence[Marginal]
) -> dict[Marginal, np.ndarray]:
    """The counts of ``marginals`` from ``source`` in one request, as float64 (exact: counts
    stay far below 2^53), the form the mechanism computes with."""
    fine = source.counts(marginals)
    return {r: np.asarray(c).astype(np.float64) for r, c in zip(marginals, fine, strict=True)}


__all__ = [
    "CodesSource",
    "DataSource",
    "MarginalSource",
    "check_candidate_cells",
    "counted_marginals",
    "read_counts",
]
