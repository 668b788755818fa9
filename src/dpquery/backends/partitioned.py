"""``PartitionedData``: a dataset spread over partitions, answered on a Dask cluster.

The algorithms read the private data only through the workload's true answers, ``n``, the
public domain (``d``, ``onehot_groups``), the column counts (the private-density policy) or
counts named in advance (:meth:`PartitionedData.count`: adaptive-projection's marginals).
This handle offers exactly those, computed by tasks that each encode one partition and
return integer counts; the client adds them up exactly (and, for answers, divides by ``n``
once: :func:`dpquery.queries.evaluate.answers_from_counts`), so the results are bit-for-bit
those of the local backend, whatever the partitioning or the order tasks finish in.

A worker that dies mid-pass is replaced (by its nanny) and its tasks are run again by Dask;
a partition held in the dead worker's memory is sent again from the client, and one made on
the cluster (a raw table's bucket of users) is made again there by its recipe, the same
records bit for bit. Each partition's counts are added exactly once, so a pass that
completes is the same pass.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpquery.backends.cluster import DaskBackend
from dpquery.backends.partitions import (
    HeldPart,
    PartCounts,
    Partition,
    TransactionPart,
    biased_bits_partitions,
    binary_partitions,
    count_part,
    frame_partitions,
    in_memory,
    item_partitions,
    table_partitions,
    transaction_partitions,
    zero_record_counts,
)
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets
from dpquery.errors import DPQueryError
from dpquery.queries.counts import Counter, Together, WorkloadCounts, check_cells, reads_items
from dpquery.queries.evaluate import answers_from_counts
from dpquery.queries.workload import Workload

# A partition whose in-memory copy is lost with its worker is sent again at most this often.
MAX_RESENDS = 3


def _rows(part: Partition) -> int:
    return part.rows()


@dataclass
class _Totals:
    rows: int
    counts: list[np.ndarray]
    column_counts: np.ndarray
    duplicates: int = 0


@dataclass(eq=False)
class PartitionedData:
    """n records over d bits, held as partitions that Dask workers read and encode.

    Stands in for :class:`~dpquery.data.binary.BinaryData` wherever only ``n``, ``d``,
    ``onehot_groups``, ``domain`` and :meth:`column_counts` are read (every algorithm's
    ``fit`` when ``true_answers`` are given). ``passes`` records each trip to the cluster.

    ``requested`` is the partition count the caller asked for (None: the input's default
    cut), the only count of partitions :meth:`describe` publishes: how many pieces were made
    is read from the data (files holding users, bytes of CSV, row groups).
    """

    partitions: tuple[Partition, ...]
    backend: DaskBackend
    d: int
    domain: Domain | None = None
    onehot_groups: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    declared_n: int | None = None
    source: str | None = None  # the path read, for messages
    requested: int | None = None
    passes: list[dict[str, Any]] = field(default_factory=list)
    # Repeated "row item" lines counted once, as the last pass read them: for the curator's
    # note (read from the data, so never in describe() and the report).
    duplicates: int = 0
    _n: int | None = None
    _column_counts: np.ndarray | None = None
    _sent: dict[int, Any] = field(default_factory=dict)
    # Workloads whose true answers ride on the next counting pass, and those made so far
    # (keyed by identity, the workload kept beside its answers).
    _pending: list[Workload] = field(default_factory=list)
    _answers: dict[int, tuple[Workload, np.ndarray]] = field(default_factory=dict)
    # Held partitions made again after their worker was lost (for the curator and tests;
    # never in describe(): the report is the same with and without a lost worker).
    remade: int = 0

    def __post_init__(self) -> None:
        if not self.partitions:
            raise DPQueryError("a partitioned dataset needs at least one partition")
        if self.domain is not None:
            self.onehot_groups = self.domain.onehot_groups
        self._n = self.declared_n

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def from_table(
        cls, path: str | Path, domain: Domain, backend: DaskBackend, partitions: int | None = None
    ) -> PartitionedData:
        """A table file or a folder of them (Parquet, CSV, gzipped CSV); see
        :func:`~dpquery.backends.partitions.table_partitions` for how files are cut."""
        parts = table_partitions(Path(path), domain, partitions)
        return cls(tuple(parts), backend, domain.d, domain, source=str(path),
                   requested=partitions)  # fmt: skip

    @classmethod
    def from_frame(
        cls, table: pd.DataFrame, domain: Domain, backend: DaskBackend, partitions: int
    ) -> PartitionedData:
        """An in-memory table cut into ``partitions`` row ranges (sent to the workers once)."""
        parts = tuple(frame_partitions(table, domain, partitions))
        return cls(parts, backend, domain.d, domain, requested=partitions)

    @classmethod
    def from_binary(
        cls, data: BinaryData, backend: DaskBackend, partitions: int
    ) -> PartitionedData:
        """Already-encoded data cut into ``partitions`` slices."""
        parts = tuple(binary_partitions(data, partitions))
        return cls(parts, backend, data.d, data.domain, data.onehot_groups, declared_n=data.n,
                   requested=partitions)  # fmt: skip

    @classmethod
    def from_transactions(
        cls, paths: Sequence[str | Path], *, n: int, d: int, backend: DaskBackend,
        partitions: int | None = None,
    ) -> PartitionedData:  # fmt: skip
        """Transaction files ("row item" pairs) partitioned by user: all of a user's pairs
        in one file; with ``partitions``, each file is cut further into ranges of user ids
        (:func:`~dpquery.backends.partitions.transaction_partitions`).

        ``n`` and ``d`` are public sizes; users in no file are all-zero records.
        """
        if n < 1 or d < 1:
            raise DPQueryError(f"n and d must be positive, got n={n}, d={d}")
        parts = transaction_partitions([Path(p) for p in paths], n, d, partitions)
        return cls(tuple(parts), backend, d, declared_n=n, requested=partitions)

    @classmethod
    def from_items(cls, items: ItemSets, backend: DaskBackend, partitions: int) -> PartitionedData:
        """Item sets in this process (an ``.npz``) cut into ``partitions`` ranges of records
        (sent to the workers once): what the wide release's counters read on the cluster."""
        parts = tuple(item_partitions(items, partitions))
        return cls(parts, backend, items.d, declared_n=items.n, requested=partitions)

    @classmethod
    def biased_bits(
        cls, n: int, d: int, backend: DaskBackend, partitions: int, *, seed: int | None = None
    ) -> PartitionedData:
        """n x d biased bits (DualQuery, Section 6.3), each partition generated by a worker."""
        parts, _ = biased_bits_partitions(n, d, partitions, seed=seed)
        return cls(tuple(parts), backend, d, declared_n=n, requested=partitions)

    # -- what the algorithms read ------------------------------------------------------
    @property
    def onehot_verified(self) -> bool:
        """One-hot groups come only from a domain (rows encoded by it) or from verified
        :class:`BinaryData`, so the invariant holds by construction."""
        return True

    @property
    def n(self) -> int:
        """Number of records (one cheap pass over the partitions the first time)."""
        if self._n is None:
            start = time.perf_counter()
            rows = int(sum(rows for _, rows in self._map(_rows)))
            self._log({"pass": "rows", "queries": 0}, start)
            self._check_rows(rows)
        assert self._n is not None
        return self._n

    def column_counts(self) -> np.ndarray:
        """Number of records with each bit set (int64, length d)."""
        if self._column_counts is None:
            self._pass(WorkloadCounts(()), {"pass": "column counts", "queries": 0})
        assert self._column_counts is not None
        return self._column_counts

    def answers(self, workload: Workload) -> np.ndarray:
        """True answers of ``workload`` (NOT private), equal to the local backend's."""
        return self.answers_many([workload])[0]

    def answers_many(self, workloads: Sequence[Workload]) -> list[np.ndarray]:
        """True answers of several workloads, in one pass over the data (none when an
        earlier pass made them: :meth:`answers_later`)."""
        self.answers_later(workloads)
        if any(id(w) not in self._answers for w in workloads):
            self._pass(WorkloadCounts(()), {"pass": "answers"})  # the pending ride on it
        return [self._answers[id(w)][1] for w in workloads]

    def answers_later(self, workloads: Sequence[Workload]) -> None:
        """Have the true answers of ``workloads`` made in the next pass over the data, with
        whatever that pass counts (the release's marginal counts), rather than in a pass of
        their own; :meth:`answers_many` then returns them without a pass."""
        for w in workloads:
            if w.d != self.d:
                raise DPQueryError(f"the workload is over {w.d} bits but the data has {self.d}")
            if id(w) not in self._answers and not any(w is p for p in self._pending):
                self._pending.append(w)

    def count(self, counter: Counter) -> list[np.ndarray]:
        """``counter``'s int64 vectors over every record, in one pass over the partitions:
        each worker counts its partitions, the client adds the vectors exactly. Refused
        before the pass when the vectors would not fit the client
        (:data:`~dpquery.queries.counts.MAX_COUNT_CELLS`)."""
        name = getattr(counter, "name", type(counter).__name__)  # counters together: A+B
        cells = check_cells(counter, f"counting {name}")
        record = {"pass": "counts", "counter": name,
                  "vectors": len(counter.cells()), "cells": cells}  # fmt: skip
        return self._pass(counter, record).counts

    @property
    def seconds(self) -> float:
        """Wall time spent on the cluster so far, over every pass."""
        return float(sum(p["seconds"] for p in self.passes))

    def describe(self) -> dict[str, Any]:
        """For reports: backend, the partition count requested and the passes made.

        Only public inputs: ``partitions`` is :attr:`requested` (None: the default cut),
        never ``len(self.partitions)``, which counts files holding users or blocks of bytes
        and so would publish a count of the private data without noise. Times are in
        :attr:`passes` and :attr:`seconds`, kept apart so reports compare across runs."""
        return {
            "name": "dask",
            "partitions": self.requested,
            **self.backend.describe(),
            "passes": [{k: v for k, v in p.items() if k != "seconds"} for p in self.passes],
        }

    def __repr__(self) -> str:  # for the curator's debugging, never for a report
        n = "?" if self._n is None else f"{self._n}"
        return f"PartitionedData(n={n}, d={self.d}, partitions={len(self.partitions)})"

    def forget(self) -> None:
        """Drop the partitions sent to the workers (their memory, while the client fits):
        a later pass sends them again."""
        for future in self._sent.values():
            future.release()
        self._sent.clear()

    # -- the passes --------------------------------------------------------------------
    def _input(self, i: int) -> Any:
        """Partition ``i`` as a task takes it: in-memory partitions (tables, words) are sent
        once and kept on a worker, not re-shipped on every pass; descriptions of files or
        generated blocks travel with the task, so Dask can rerun it anywhere."""
        part = self.partitions[i]
        if isinstance(part, HeldPart):
            return part.future  # made on the cluster: its task reads it where it is held
        if not in_memory(part):
            return part
        if i not in self._sent:
            missing = [j for j, p in enumerate(self.partitions) if in_memory(p)
                       and j not in self._sent]  # fmt: skip
            futures = self.backend.client.scatter([self.partitions[j] for j in missing],
                                                  hash=False)  # fmt: skip
            self._sent.update(zip(missing, futures, strict=True))
        return self._sent[i]

    def _map(self, fn: Callable[..., Any], payload: Any = None) -> Iterator[tuple[int, Any]]:
        """``fn(partition, payload, ...)`` on every partition, each result yielded once, as
        it arrives. A task whose input was lost with a worker (cancelled, or the worker
        killed under it) is submitted again: with a fresh copy of an in-memory partition
        (or payload), or, for a partition made on the cluster, after it is made again from
        its recipe (:meth:`_remake`). Each partition at most :data:`MAX_RESENDS` times a
        pass; a task's own error is raised here."""
        from distributed import as_completed  # optional (the dask extra)

        client = self.backend.client
        job: list[Any] = [None]
        # each task's partition, and its input as submitted (a held one: made again only
        # if it is still the one the lost task read)
        index: dict[Any, tuple[int, Partition]] = {}

        def submit(i: int) -> Any:
            if payload is not None and (job[0] is None or job[0].status != "finished"):
                # one copy (its key unique to the pass), fetched by the other workers when
                # their first task needs it; sent again when lost with its worker
                job[0] = one_copy(client, payload)
            extra = {} if payload is None else {"payload": job[0], **self._task_options()}
            task = client.submit(fn, self._input(i), **extra, pure=False)
            index[task.key] = (i, self.partitions[i])
            return task

        futures = [submit(i) for i in range(len(self.partitions))]
        resent = [0] * len(self.partitions)
        pending = as_completed(futures, with_results=True, raise_errors=False)
        for future, result in pending:
            i, read = index.pop(future.key)
            if _lost(future):  # its input died with a worker: send or make it again
                part = self.partitions[i]
                if isinstance(part, HeldPart) and part.recipe is None:  # made there, not here
                    raise DPQueryError(f"partition {i} was lost with its worker (it was made "
                                       "on the cluster, from the file): run again")  # fmt: skip
                resent[i] += 1
                if resent[i] > MAX_RESENDS:
                    raise DPQueryError(f"partition {i} was lost with its worker "
                                       f"{MAX_RESENDS} times; is the cluster failing?")  # fmt: skip
                if isinstance(part, HeldPart):
                    if part is read:  # not made again since the lost task was submitted
                        self._remake(i)
                else:
                    self._sent.pop(i, None)
                pending.add(submit(i))
                continue
            if future.status == "error":
                future.result()  # raises the task's exception
            future.release()  # results leave the workers as soon as they are taken
            yield i, result

    def _remake(self, i: int) -> None:
        """Held partition ``i`` made again on the cluster by its recipe, with every other
        held partition of that recipe lost by then (a raw table's buckets: one more read of
        the file for all of them). The records are those made before, bit for bit, or the
        recipe refuses (the file changed since it was read): no count, and so no draw or
        charge, depends on whether a partition was made again."""
        part = self.partitions[i]
        assert isinstance(part, HeldPart) and part.recipe is not None
        held = {j: p for j, p in enumerate(self.partitions)
                if isinstance(p, HeldPart) and p.recipe is part.recipe}  # fmt: skip
        lost = [j for j, p in held.items() if j == i or _status(p.future) in ("cancelled", "lost")]
        made = part.recipe.remake(self.backend, [held[j].bucket for j in lost])
        parts = list(self.partitions)
        for j, future in zip(lost, made, strict=True):
            parts[j] = replace(held[j], future=future)
        self.partitions = tuple(parts)
        self.remade += len(lost)

    def _task_options(self) -> dict[str, Any]:
        return {"d": self.d, "kernel_threads": self.backend.kernel_threads}

    def _log(self, record: dict[str, Any], start: float) -> None:
        self.passes.append({**record, "seconds": time.perf_counter() - start})

    def _pass(self, counter: Counter, record: dict[str, Any]) -> _Totals:
        """``counter`` on every partition, with the pending workloads' answers (on bits);
        sum exactly as results arrive."""
        riders: tuple[Workload, ...] = ()
        if self._pending and not reads_items(counter):
            riders, self._pending = tuple(self._pending), []
            counter = Together((counter, WorkloadCounts(riders)))
            record = {**record, "queries": sum(len(w) for w in riders)}
        totals = self._count_all(counter, record)
        if riders:
            ours = len(counter.cells()) - len(riders)
            for w, c in zip(riders, totals.counts[ours:], strict=True):
                self._answers[id(w)] = (w, answers_from_counts(w, c, totals.rows))
            totals.counts = totals.counts[:ours]
        return totals

    def _count_all(self, counter: Counter, record: dict[str, Any]) -> _Totals:
        start = time.perf_counter()
        totals = _Totals(0, [np.zeros(c, np.int64) for c in counter.cells()],
                         np.zeros(self.d, np.int64))  # fmt: skip
        seen = _UserCheck(self.declared_n) if self._is_transactions() else None
        for _, part in self._map(_count, counter):
            _add(totals, part)
            if seen is not None and part.users is not None:
                seen.add(part.users)
        if seen is not None:
            self._add_users_without_items(totals, counter)
        self._check_rows(totals.rows)
        self._column_counts = totals.column_counts
        self.duplicates = totals.duplicates
        self._log(record, start)
        return totals

    def _is_transactions(self) -> bool:
        return isinstance(self.partitions[0], TransactionPart)

    def _add_users_without_items(self, totals: _Totals, counter: Counter) -> None:
        assert self.declared_n is not None
        absent = self.declared_n - totals.rows
        for counts, zero in zip(totals.counts, zero_record_counts(counter, self.d), strict=True):
            counts += absent * zero
        totals.rows = self.declared_n

    def _check_rows(self, rows: int) -> None:
        if rows == 0:  # as read_table refuses a table with a header and no record
            source = "the partitioned data" if self.source is None else self.source
            raise DPQueryError(f"{source} has no records (only a header): there is nothing "
                               "to release")  # fmt: skip
        if self._n is None:
            self._n = rows
        elif rows != self._n:
            raise DPQueryError(
                f"the partitions hold {rows} records now but held {self._n} before: did the "
                "data change while it was being read?"
            )


def describe_partitions(info: dict[str, Any]) -> str:
    """The partitions and workers of ``info`` (:meth:`PartitionedData.describe`) in words,
    for the console: the count requested, as the report has it."""
    requested = info["partitions"]
    asked = "default partitions" if requested is None else f"{requested} partitions requested"
    return f"{asked} on {info['workers']} workers"


def one_copy(client: Any, value: Any) -> Any:
    """A future of ``value`` (a catalogue, a pass's counter) held by one worker, which the
    others fetch once when a task needs it. Not broadcast to every worker: a worker killed
    while a broadcast copied to it was seen to leave the scheduler retrying the copy to the
    dead address every 30 s, and the tasks waiting on it for good. A worker that dies while
    it receives the copy is a closed connection here: another is tried, at most
    :data:`MAX_RESENDS` times; a copy lost later with its worker is a lost input of the
    tasks that read it (:meth:`PartitionedData._map` sends it again)."""
    for attempt in itertools.count():
        try:
            [future] = client.scatter([value], hash=False)
            return future
        except OSError:  # distributed's CommClosedError among them
            if attempt >= MAX_RESENDS:
                raise
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _status(future: object) -> str | None:
    return getattr(future, "status", None)


def _lost(future: Any) -> bool:
    """Whether a finished task's input was lost with a worker: the task cancelled (its
    input's key gone), or it failed with the worker killed under it (``KilledWorker``) or a
    cancelled input (``FutureCancelledError``)."""
    if future.status == "cancelled":
        return True
    if future.status != "error":
        return False
    from concurrent.futures import CancelledError

    from distributed import KilledWorker  # optional (the dask extra)

    return isinstance(future.exception(), KilledWorker | CancelledError)


def _count(
    part: Partition, payload: Counter, d: int, kernel_threads: int | None = None
) -> PartCounts:
    return count_part(part, payload, d, kernel_threads)


def _add(totals: _Totals, part: PartCounts) -> None:
    totals.rows += part.rows
    for acc, counts in zip(totals.counts, part.counts, strict=True):
        acc += counts
    totals.column_counts += part.column_counts
    totals.duplicates += part.duplicates


class _UserCheck:
    """Transactions must be partitioned by user: a user in two partitions would be counted
    as two records. Tracks users seen (one byte per public row id)."""

    def __init__(self, n: int | None) -> None:
        assert n is not None
        self.seen = np.zeros(n, dtype=bool)

    def add(self, users: np.ndarray) -> None:
        twice = users[self.seen[users]]
        if twice.size:
            raise DPQueryError(
                f"user(s) {twice[:5].tolist()} appear in more than one transaction file; "
                "partition transactions by user"
            )
        self.seen[users] = True
