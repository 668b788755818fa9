"""A raw ``user,item`` CSV released whole by ``dpquery synth``, locally and on the Dask
backend (``docs/wide.md``, "From a raw user x item CSV"; ``docs/dask.md``).

A generated shape (``dpquery.datasets.shapes``: ``netflix`` by default, ``small`` in quick
mode) is written as the file a data holder keeps: a header ``userId,movieId,rating``, then one
line per (user, movie), the ids 1-based integers, the lines in movie order (as the Netflix
prize's files are: a user's lines lie all over the file) and a rating. It is written once to
``--file`` (default under the system's temporary folder, never in the repository) and kept
for later runs. Each run is the whole command, in its own process group, with the catalogue
(``--item-list``, the ids ``1..d``) or with the universe learned (``--learn-items``), on the
local backend and with ``--backend dask`` (a local cluster of 2 worker processes): its wall
time and the peak of the summed resident sizes of the command and every process it started
(the client, the scheduler it runs, the nannies and the workers), sampled every 0.2 s. The
releases are compared byte for byte (same ``--seed``: the same bytes are expected on both
backends). The load average at the start of each run is recorded beside it, as wall time
grows with it::

    nice .venv/bin/python benchmarks/bench_raw_dask.py --shape netflix --out raw-dask-netflix

Quick mode (``make bench``, ``DPQUERY_BENCH_QUICK=1``, or ``--quick``): the ``small`` shape
(700 users), the two backends and the two universes. Rows are written to
``docs/results/wide/<out>.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import psutil
import scipy.sparse as sp

from dpquery.data.items import put_decimal
from dpquery.datasets.shapes import SHAPES, Shape, generate

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results" / "wide"


@numba.njit(cache=True)
def _format(indptr, indices, ratings, first, last, out):  # pragma: no cover - jit
    """Lines ``user,movie,rating`` of columns ``first..last-1`` of a CSC matrix (movies as
    columns), 1-based ids, into ``out``; returns the bytes written."""
    at = 0
    digits = np.empty(20, dtype=np.uint8)
    for j in range(first, last):
        for p in range(indptr[j], indptr[j + 1]):
            at = put_decimal(np.int64(indices[p] + 1), 44, out, at, digits)  # comma
            at = put_decimal(np.int64(j + 1), 44, out, at, digits)
            at = put_decimal(np.int64(ratings[p]), 10, out, at, digits)  # newline
    return at


def write_raw(path: Path, shape: str | Shape, data_seed: int) -> tuple[int, int, int]:
    """The shape's table as a raw CSV at ``path`` (module docstring); its n, d and lines."""
    items = generate(shape, data_seed)
    csc = sp.csc_array(items.matrix)
    csc.sort_indices()
    ratings = np.random.default_rng(data_seed).integers(1, 6, csc.nnz).astype(np.int64)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        fh.write(b"userId,movieId,rating\n")
        first = 0
        while first < items.d:
            last = int(np.searchsorted(csc.indptr, csc.indptr[first] + 4_000_000, "right")) - 1
            last = min(max(last, first + 1), items.d)
            buffer = np.empty(30 * int(csc.indptr[last] - csc.indptr[first]), np.uint8)
            size = _format(csc.indptr, csc.indices, ratings, first, last, buffer)
            fh.write(buffer[:size].data)
            first = last
    tmp.rename(path)
    return items.n, items.d, items.nnz


def measured(
    cmd: list[str], timeout: float, max_gib: float
) -> tuple[int, float, float, float, str]:
    """Exit status, wall seconds, peak GiB of the summed resident sizes of the command and
    its descendants (sampled every 0.2 s), their CPU seconds (user + system, each process's
    last sample: a lower bound), and the error said on stderr (or its last line).
    The command is killed when it passes ``timeout`` seconds or ``max_gib``."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        root = psutil.Process(proc.pid)
        peak = 0
        cpu: dict[int, float] = {}  # each process's user + system seconds, as last sampled
        while proc.poll() is None:
            if time.perf_counter() - start > timeout:
                proc.kill()
                break
            try:
                procs = [root, *root.children(recursive=True)]
                peak = max(peak, sum(_rss(p) for p in procs))
                for p in procs:
                    cpu[p.pid] = max(cpu.get(p.pid, 0.0), _cpu(p))
            except psutil.NoSuchProcess:
                pass
            if peak > max_gib * 2**30:
                for child in root.children(recursive=True):
                    child.kill()
                proc.kill()
                break
            time.sleep(0.2)
        code = proc.wait()
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    said = [line for line in lines if line.startswith("dpquery: error")] or lines[-1:] or [""]
    return code, time.perf_counter() - start, peak / 2**30, sum(cpu.values()), said[0]


def _cpu(p: psutil.Process) -> float:
    try:
        t = p.cpu_times()
        return float(t.user + t.system)
    except psutil.Error:
        return 0.0


def _rss(p: psutil.Process) -> int:
    try:
        return int(p.memory_info().rss)
    except psutil.Error:
        return 0


def scaled_table(name: str, users: int | None, data_seed: int) -> tuple[Path, Shape]:
    """The raw CSV of shape ``name`` (its users scaled to ``users``, when given) in the
    benchmarks' temporary folder, written when absent, and its shape."""
    shape = SHAPES[name]
    if users is not None:
        shape = dataclasses.replace(shape, name=f"{shape.name}-{users}", n=users)
    folder = Path(tempfile.gettempdir()) / "dpquery-bench-raw"
    folder.mkdir(exist_ok=True)
    path = folder / f"{shape.name}-{data_seed}.ratings.csv"
    if not path.exists():
        n, d, ones = write_raw(path, shape, data_seed)
        print(f"wrote {path}: {n:,} users x {d:,} movies, {ones:,} lines", flush=True)
    return path, shape


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="the small shape")
    p.add_argument("--shape", choices=sorted(SHAPES), help="default: netflix (quick: small)")
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--file", type=Path, help="the raw CSV (written when absent)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=10)
    p.add_argument("--backends", nargs="+", default=["local", "dask"])
    p.add_argument("--universes", nargs="+", default=["item-list", "learn-items"])
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--max-gib", type=float, default=12.0, help="kill a run beyond this peak")
    p.add_argument("--out", help="results name under docs/results/wide")
    args = p.parse_args([] if argv is None else argv)
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK", "") not in ("", "0")
    shape = args.shape or ("small" if quick else "netflix")
    folder = Path(tempfile.gettempdir()) / "dpquery-bench-raw"
    folder.mkdir(exist_ok=True)
    path = args.file or folder / f"{shape}-{args.data_seed}.ratings.csv"
    if not path.exists():
        start = time.perf_counter()
        n, d, ones = write_raw(path, shape, args.data_seed)
        print(f"wrote {path}: {n:,} users x {d:,} movies, {ones:,} lines, "
              f"{path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - start:.0f} s",
              flush=True)  # fmt: skip
    d = SHAPES[shape].d
    listed = path.with_suffix(".items.txt")
    listed.write_text("".join(f"{j}\n" for j in range(1, d + 1)))
    dpquery = str(Path(sys.executable).with_name("dpquery"))
    rows = []
    for universe in args.universes:
        outputs = {}
        for backend in args.backends:
            out = folder / f"{shape}-{universe}-{backend}.transactions.csv"
            flags = ["--item-list", str(listed)] if universe == "item-list" else ["--learn-items"]
            cmd = [dpquery, "synth", "--data", str(path), *flags, "--epsilon", str(args.epsilon),
                   "--seed", str(args.seed), "--out", str(out), "--quiet",
                   "--overwrite"]  # fmt: skip
            if backend == "dask":
                cmd += ["--backend", "dask"]
            load = os.getloadavg()[0]
            code, wall, peak, cpu, last = measured(cmd, args.timeout, args.max_gib)
            outputs[backend] = out.read_bytes() if code == 0 and out.exists() else None
            row = (f"| {universe} | {backend} | {'ok' if code == 0 else f'exit {code}: {last}'} "
                   f"| {wall:.0f} s | {cpu:.0f} s | {peak:.2f} GiB | {load:.1f} |")  # fmt: skip
            print(row, flush=True)
            rows.append(row)
        if len(outputs) == 2 and None not in outputs.values():
            same = outputs["local"] == outputs["dask"]
            rows.append(f"| {universe} | both | outputs {'identical' if same else 'DIFFER'} "
                        "| | | | |")  # fmt: skip
            print(rows[-1], flush=True)
    text = "\n".join([
        f"`bench_raw_dask.py {' '.join(argv or [])}` (quick={quick}): {shape}, data seed "
        f"{args.data_seed}, epsilon {args.epsilon}, seed {args.seed}, file {path}",
        "", "| universe | backend | status | wall | CPU | peak (all processes) | load at start |",
        "|---|---|---|---|---|---|---|", *rows,
    ])  # fmt: skip
    if args.out:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.out}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
