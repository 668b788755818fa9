"""What a lost worker costs a raw ``user,item`` CSV held on a Dask cluster (``docs/dask.md``,
"Faults"): the buckets it held are made again from the file, the same records bit for bit.

The shape's raw CSV (``bench_raw_dask.py``'s file: a header ``userId,movieId,rating``, the
lines in movie order) is read on a local cluster of 2 worker processes into buckets of users
over the catalogue ``1..d``, as ``dpquery synth --backend dask --item-list`` reads it (the
same blocks and number of buckets). One pass of item counts is timed, then a worker holding
some bucket alone is killed (SIGKILL; its nanny starts another) and the next pass, which
makes the lost buckets again before counting, is timed; its counts must equal the first
pass's::

    nice .venv/bin/python benchmarks/bench_raw_heal.py --shape small
    nice .venv/bin/python benchmarks/bench_raw_heal.py --shape netflix --users 48019

``--users`` scales the shape's users (a tenth of ``netflix``: about 10 M lines, 0.13 GB).
The file is written once under the system's temporary folder and kept for later runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

import numpy as np

from bench_raw_dask import scaled_table
from dpquery.algorithms.wide.counts import AllItemCounts
from dpquery.backends.cluster import connect
from dpquery.backends.raw import BUCKET_BYTES, read_on_cluster
from dpquery.data.raw_items import raw_blocks, raw_layout
from dpquery.datasets.shapes import SHAPES


def _kill_a_holder(client: object, futures: list) -> int:
    """SIGKILL a worker holding some of ``futures`` alone (both when none is alone); waits
    until the scheduler has heard. Returns how many workers were killed."""
    holders = list(client.who_has(futures).values())  # type: ignore[attr-defined]
    alone = sorted({ws[0] for ws in holders if len(ws) == 1})
    workers = alone[:1] or sorted({w for ws in holders for w in ws})
    for pid in client.run(os.getpid, workers=workers).values():  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
    while all(f.status == "finished" for f in futures):
        time.sleep(0.05)
    return len(workers)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", choices=sorted(SHAPES), default="small")
    p.add_argument("--users", type=int, help="the shape's users scaled to this many")
    p.add_argument("--data-seed", type=int, default=0)
    args = p.parse_args([] if argv is None else argv)
    path, shape = scaled_table(args.shape, args.users, args.data_seed)
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "userId", "movieId")
    catalogue = [str(j) for j in range(1, shape.d + 1)]
    with connect(workers=2) as backend:
        buckets = max(backend.workers(), -(-path.stat().st_size // BUCKET_BYTES))
        start = time.perf_counter()
        lines = read_on_cluster(blocks, backend, catalogue=catalogue, buckets=buckets,
                                source=str(path), requested=None)  # fmt: skip
        read = time.perf_counter() - start
        data = lines.data()
        start = time.perf_counter()
        first = data.count(AllItemCounts(shape.d))[0]
        counted = time.perf_counter() - start
        killed = _kill_a_holder(backend.client, [q.future for q in data.partitions])  # type: ignore[attr-defined]
        start = time.perf_counter()
        again = data.count(AllItemCounts(shape.d))[0]
        healed = time.perf_counter() - start
    size = path.stat().st_size
    print(f"`bench_raw_heal.py {' '.join(argv or [])}`: {shape.name}, {lines.n:,} users, "
          f"{lines.lines:,} lines, {size / 1e9:.3f} GB in {len(blocks)} blocks, {buckets} "
          f"buckets; load at start {os.getloadavg()[0]:.1f}")  # fmt: skip
    same = "equal" if np.array_equal(first, again) else "DIFFER"
    print(f"read {read:.2f} s; a pass {counted:.2f} s; {killed} worker(s) killed, "
          f"{data.remade} bucket(s) made again: the pass {healed:.2f} s "
          f"({healed - counted:+.2f} s); counts {same}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
