"""Dask backend: answering throughput on 1 and 2 workers, and out-of-core runs with their
peak memory (client + scheduler + every worker process, sampled).

* throughput: KDD99 tiled to 2 million rows in Parquet partitions, 10,000 3-way marginal
  queries; the local backend (read, encode, answer in one process) for comparison;
* out of core: KDD99 tiled to 20 million rows (40 Parquet files written to a temporary
  folder), and biased bits at 200,000 x 100,000 generated per partition on the workers;
* the default release (``auto``: adaptive-projection, the default 3-way workload, epsilon 1,
  seed 3) on KDD99 tiled to 20 million rows: its candidate marginals counted on 2 workers
  in one pass, the mechanism in this process; time, the client's peak memory and the
  workers'.

The 20-million-row answers are checked bit for bit against counts on the original table
(every file is the table's rows in order, wrapped around); so are the release's counts, and
the release is checked byte for byte against the mechanism run on those exact counts. Run:
``python benchmarks/bench_dask.py [--only release] [--rows N]`` (or ``make bench
BENCH=dask``).
"""

from __future__ import annotations

import argparse
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
from dpquery.algorithms.auto import Auto
from dpquery.backends import PartitionedData, connect
from dpquery.data.encode import encode
from dpquery.queries import default_workload
from dpquery.queries import generators as gen
from dpquery.queries.counts import Counter
from dpquery.queries.evaluate import answer_data, answers_from_counts, fold_counts

GIB = 2**30
QUERIES = 10_000
FILE_ROWS = 500_000  # rows per Parquet file; 2 row groups each
GROUP_ROWS = 250_000


class PeakMemory:
    """Peak of the summed RSS of this process (client and, in a local cluster, scheduler)
    and all its descendants (nannies, workers), sampled every ``interval`` seconds; this
    process's own sampled peak; plus the descendants' own peaks (VmHWM: fresh processes, so
    exact per process)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_sum = 0
        self.peak_self = 0
        self.hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        total = 0
        children = me.children(recursive=True)
        for p in [me, *children]:
            try:
                rss = p.memory_info().rss
                total += rss
                if p is me:
                    self.peak_self = max(self.peak_self, rss)
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


class _TiledCounts:
    """The tiled dataset's public shape, counted here from the original table: ``files``
    times the counts of rows ``0..FILE_ROWS-1`` wrapped around (what the files hold)."""

    def __init__(self, table: pd.DataFrame, domain: Any, files: int) -> None:
        self.full = encode(table, domain)
        self.head = encode(table.iloc[: FILE_ROWS - len(table)], domain)
        self.files, self.domain = files, domain
        self.n, self.d, self.onehot_groups = files * FILE_ROWS, domain.d, domain.onehot_groups

    def count(self, counter: Counter) -> list[np.ndarray]:
        return [self.files * (a + b) for a, b in
                zip(counter.count(self.full), counter.count(self.head), strict=True)]  # fmt: skip


def bench_release_out_of_core(domain: Any, folder: Path, rows: int) -> None:
    """The default release (auto -> adaptive-projection, epsilon 1, seed 3) on KDD99 tiled
    to ``rows`` rows, counted by 2 workers. adaptive-projection reads no true answers (they
    are the evaluation's: ``AdaptiveProjection.run`` never reads ``Run.true_answers``), so
    they are given as NaN and not computed; ``dpquery synth`` computes them in a pass of
    its own."""
    files = rows // FILE_ROWS
    n = files * FILE_ROWS
    table = datasets.load_table("kdd99")[0]
    with _timed() as took:
        _write_tiled(table, folder, files)
    del table  # the client holds no rows during the release
    workload = default_workload(domain, n, k=3, seed=3)
    nan = np.full(len(workload), np.nan)
    print(f"default release: KDD99 tiled to {n:,} rows, {files} Parquet files (written in "
          f"{took():.0f} s); auto, epsilon 1, seed 3, the default workload "
          f"({len(workload):,} queries)")  # fmt: skip
    model = Auto(epsilon=1.0, seed=3, progress=False)
    with connect(workers=2) as backend, PeakMemory() as mem, _timed() as took:
        data = PartitionedData.from_table(folder, domain, backend)
        release = model.fit(data, workload, true_answers=nan)
    counts = next(p for p in data.passes if p["pass"] == "counts")
    print(f"  {release.algorithm}: {took():.1f} s in all; counts pass {counts['seconds']:.1f} s "
          f"({len(data.partitions)} partitions, {counts['vectors']:,} marginals, "
          f"{counts['cells']:,} cells = {counts['cells'] * 8 / 2**20:.0f} MiB as int64), "
          f"rows pass {data.passes[0]['seconds']:.1f} s, mechanism in this process "
          f"{took() - data.seconds:.1f} s ({release.parameters['records']:,} records)")  # fmt: skip
    print(f"  peak memory: client (with the local scheduler) {mem.peak_self / GIB:.2f} GiB "
          f"sampled every 50 ms; workers' own peaks (VmHWM) "
          f"{', '.join(f'{v / GIB:.2f}' for v in sorted(mem.hwm.values(), reverse=True))} GiB "
          f"over {len(mem.hwm)} processes; client + scheduler + workers {mem.peak_sum / GIB:.2f} "
          "GiB sampled")  # fmt: skip
    with _timed() as check:
        exact = _TiledCounts(datasets.load_table("kdd99")[0], domain, files)
        again = Auto(epsilon=1.0, seed=3, progress=False).fit(exact, workload, true_answers=nan)
    same = np.array_equal(again.records.rows, release.records.rows)
    charges = [e.charge for e in again.ledger.entries] == [e.charge for e in release.ledger.entries]
    assert same and charges, "the release on the cluster differs from the one on exact counts"
    print(f"  release byte-identical to the mechanism on counts made in one process from the "
          f"original table (and the same {len(release.ledger.entries)} charges); check "
          f"{check():.0f} s")  # fmt: skip
    for f in folder.iterdir():
        f.unlink()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("answers", "bits", "release"), nargs="+")
    parser.add_argument("--rows", type=int, default=20_000_000,
                        help="rows of the tiled KDD99 (default 20,000,000)")  # fmt: skip
    args = parser.parse_args([] if argv is None else argv)
    only = set(args.only or ("answers", "bits", "release"))
    if datasets.available("kdd99"):
        table, domain = datasets.load_table("kdd99")
        workload = gen.random_marginal_queries(domain, 3, QUERIES, 0)
        with tempfile.TemporaryDirectory(prefix="dpquery-bench-dask-") as tmp:
            if "answers" in only:
                bench_throughput(table, domain, workload, Path(tmp))
                bench_kdd99_out_of_core(table, domain, workload, Path(tmp))
            del table
            if "release" in only:
                bench_release_out_of_core(domain, Path(tmp), args.rows)
    else:
        print("kdd99: not available (set DPQUERY_DATA_DIR); KDD99 runs skipped")
    if "bits" in only:
        bench_biased_bits_out_of_core()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
