"""Dask backend: answering throughput on 1 and 2 workers, and out-of-core runs with their
peak memory (client + scheduler + every worker process, sampled).

* throughput: KDD99 tiled to 2 million rows in Parquet partitions, 10,000 3-way marginal
  queries; the local backend (read, encode, answer in one process) for comparison;
* out of core: KDD99 tiled to 20 million rows (40 Parquet files written to a temporary
  folder), and biased bits at 200,000 x 100,000 generated per partition on the workers.

The 20-million-row answers are checked bit for bit against counts on the original table
(every file is the table's rows in order, wrapped around). Run:
``python benchmarks/bench_dask.py`` (or ``make bench BENCH=dask``).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil

from dpquery import datasets
from dpquery.backends import PartitionedData, connect
from dpquery.data.encode import encode
from dpquery.queries import generators as gen
from dpquery.queries.evaluate import answer_data, answers_from_counts, fold_counts

GIB = 2**30
QUERIES = 10_000
FILE_ROWS = 500_000  # rows per Parquet file; 2 row groups each
GROUP_ROWS = 250_000


class PeakMemory:
    """Peak of the summed RSS of this process (client and, in a local cluster, scheduler)
    and all its descendants (nannies, workers), sampled every ``interval`` seconds; plus the
    sum of the descendants' own peaks (VmHWM: fresh processes, so exact per process)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_sum = 0
        self.hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        total = 0
        children = me.children(recursive=True)
        for p in [me, *children]:
            try:
                total += p.memory_info().rss
                if p in children:
                    self.hwm[p.pid] = _vm_hwm(p.pid)
            except (psutil.NoSuchProcess, OSError):
                continue
        self.peak_sum = max(self.peak_sum, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> PeakMemory:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def hwm_sum(self) -> int:
        return sum(self.hwm.values())


def _vm_hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _tile(table: pd.DataFrame, rows: int, start: int = 0) -> pd.DataFrame:
    """``rows`` rows of ``table`` in order from ``start``, wrapping around."""
    return table.iloc[(start + np.arange(rows)) % len(table)].reset_index(drop=True)


def _write_tiled(table: pd.DataFrame, folder: Path, files: int) -> None:
    one = _tile(table, FILE_ROWS)  # every file holds the same rows: the check stays cheap
    for k in range(files):
        one.to_parquet(folder / f"part-{k:03d}.parquet", row_group_size=GROUP_ROWS, index=False)


@contextmanager
def _timed() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


def bench_throughput(table: pd.DataFrame, domain: Any, workload: Any, folder: Path) -> None:
    files = 4
    _write_tiled(table, folder, files)
    n = files * FILE_ROWS
    print(f"throughput: KDD99 tiled to {n:,} rows in {files} Parquet files ({2 * files} "
          f"row-group partitions), {len(workload):,} 3-way marginal queries")  # fmt: skip
    with _timed() as took:
        local = answer_data(workload, encode(pd.concat([_tile(table, FILE_ROWS)] * files), domain))
    print(f"  {'local backend (one process: concat+encode+answer)':<50}{took():7.2f} s   "
          f"{n / took():12,.0f} rows/s")  # fmt: skip
    for workers in (1, 2):
        with connect(workers=workers) as backend:
            data = PartitionedData.from_table(folder, domain, backend)
            data.answers(gen.random_marginal_queries(domain, 3, 10, 1))  # warm: imports, JIT
            with _timed() as took:
                got = data.answers(workload)
            assert np.array_equal(got, local)
            what = f"dask, {workers} worker(s) x {backend.kernel_threads} kernel thread(s)"
            print(f"  {what:<50}{took():7.2f} s   {n / took():12,.0f} rows/s  "
                  "(read+encode+answer)")  # fmt: skip
    for f in folder.iterdir():
        f.unlink()


def bench_kdd99_out_of_core(table: pd.DataFrame, domain: Any, workload: Any, folder: Path) -> None:
    files = 40
    n = files * FILE_ROWS
    with _timed() as took:
        _write_tiled(table, folder, files)
    size = sum(f.stat().st_size for f in folder.iterdir())
    in_pandas = table.memory_usage(deep=True).sum() * n / len(table)
    print(f"out of core: KDD99 tiled to {n:,} rows, {files} Parquet files "
          f"({size / GIB:.2f} GiB on disk, written in {took():.0f} s); in pandas it would take "
          f"~{in_pandas / GIB:.1f} GiB (extrapolated from the 494,021-row table), packed bits "
          f"{domain.d * n / 8 / GIB:.2f} GiB")  # fmt: skip
    with connect(workers=2) as backend, PeakMemory() as mem, _timed() as took:
        data = PartitionedData.from_table(folder, domain, backend)
        got = data.answers(workload)
    # Every file is rows 0..FILE_ROWS-1 of the table wrapped around: count those once.
    full = encode(table, domain)
    head = encode(table.iloc[: FILE_ROWS - len(table)], domain)
    counts = files * (fold_counts(workload, full) + fold_counts(workload, head))
    assert np.array_equal(got, answers_from_counts(workload, counts, n)), "not bit-exact"
    print(f"  2 workers, {len(data.partitions)} partitions, {len(workload):,} queries: "
          f"{took():.1f} s ({n / took():,.0f} rows/s); answers bit-exact")  # fmt: skip
    print(f"  peak memory, client + scheduler + workers: {mem.peak_sum / GIB:.2f} GiB sampled "
          f"every 50 ms; sum of the cluster processes' own peaks (VmHWM) {mem.hwm_sum / GIB:.2f} "
          f"GiB over {len(mem.hwm)} processes")  # fmt: skip


def bench_biased_bits_out_of_core(n: int = 200_000, d: int = 100_000, parts: int = 40) -> None:
    workload = gen.random_parities(d, 3, 1000, 0)
    print(f"out of core: biased bits {n:,} x {d:,} ({n * d / 8 / GIB:.2f} GiB packed), generated "
          f"in {parts} partitions on the workers; {len(workload)} 3-way parities")  # fmt: skip
    with connect(workers=2) as backend, PeakMemory() as mem, _timed() as took:
        data = PartitionedData.biased_bits(n, d, backend, parts, seed=0)
        data.answers(workload)
    print(f"  2 workers: {took():.1f} s (generate + count); peak memory, client + scheduler "
          f"+ workers: {mem.peak_sum / GIB:.2f} GiB sampled; sum of the cluster processes' own "
          f"peaks {mem.hwm_sum / GIB:.2f} GiB over {len(mem.hwm)} processes")  # fmt: skip


def main() -> None:
    if datasets.available("kdd99"):
        table, domain = datasets.load_table("kdd99")
        workload = gen.random_marginal_queries(domain, 3, QUERIES, 0)
        with tempfile.TemporaryDirectory(prefix="dpquery-bench-dask-") as tmp:
            bench_throughput(table, domain, workload, Path(tmp))
            bench_kdd99_out_of_core(table, domain, workload, Path(tmp))
    else:
        print("kdd99: not available (set DPQUERY_DATA_DIR); KDD99 runs skipped")
    bench_biased_bits_out_of_core()


if __name__ == "__main__":
    main()
