"""Where the wide fit's counting passes spend their time on a raw ``user,item`` CSV held on a
Dask cluster (``docs/dask.md``, "The fit's passes").

The whole ``dpquery synth --backend dask`` runs in this process on ``bench_raw_dask.py``'s
file (``--item-list``, the ids ``1..d``; or ``--learn-items``), with each pass over the
buckets timed in the client: its wall time, the size of its payload (the counter, pickled)
and of what its tasks return, and, from the scheduler's task stream, the tasks' compute,
transfer and deserialization seconds summed over the workers. The local run of the same
command (``--backend local``) is timed too, and the two outputs compared byte for byte::

    nice .venv/bin/python benchmarks/bench_raw_passes.py --shape netflix --users 48019
    nice .venv/bin/python benchmarks/bench_raw_passes.py --shape small

``--users`` scales the shape's users (a tenth of ``netflix``: about 10 M lines, 0.12 GB),
written once under the system's temporary folder, as ``bench_raw_heal.py`` writes it.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import sys
import time
from typing import Any

from bench_raw_dask import scaled_table
from dpquery.backends import partitioned
from dpquery.cli import main as dpquery
from dpquery.datasets.shapes import SHAPES
from dpquery.pipeline import inputs, run, writes


def _profiled() -> list[dict[str, Any]]:
    """Wrap :meth:`PartitionedData._map` so that each pass's wall time, payload and result
    sizes and the task stream's seconds are recorded (returned list, one dict a pass)."""
    passes: list[dict[str, Any]] = []
    plain = partitioned.PartitionedData._map

    def timed(self: Any, fn: Any, payload: Any = None) -> Any:
        client = self.backend.client
        start, began = time.perf_counter(), time.time()
        out_bytes = 0
        for i, result in plain(self, fn, payload):
            out_bytes += len(pickle.dumps(result, protocol=5))
            yield i, result
        wall = time.perf_counter() - start
        stream = client.get_task_stream(start=began)
        seconds: dict[str, float] = {}
        for task in stream:
            for step in task.get("startstops", ()):
                action = step["action"]
                seconds[action] = seconds.get(action, 0.0) + step["stop"] - step["start"]
        name = getattr(payload, "__class__", type(None)).__name__
        name = getattr(payload, "name", name)  # counters together: A+B
        passes.append({
            "fn": fn.__name__, "payload": name,
            "payload_bytes": len(pickle.dumps(payload, protocol=5)) if payload is not None else 0,
            "result_bytes": out_bytes, "tasks": len(stream), "wall": wall, **seconds,
        })  # fmt: skip

    partitioned.PartitionedData._map = timed  # type: ignore[method-assign]
    return passes


def _phases() -> dict[str, float]:
    """Wrap the command's phases (the read on the cluster, the fit, the write) so that each
    one's wall seconds are added up in the returned dict."""
    seconds: dict[str, float] = {}

    def wrap(module: Any, name: str, phase: str) -> None:
        plain = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return plain(*args, **kwargs)
            finally:
                seconds[phase] = seconds.get(phase, 0.0) + time.perf_counter() - start

        setattr(module, name, timed)

    wrap(inputs, "read_on_cluster", "read")  # on the cluster
    wrap(inputs, "load_items", "read")  # in this process
    wrap(run, "_fit_items", "fit")
    wrap(writes, "write_release", "write")
    return seconds


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", choices=sorted(SHAPES), default="small")
    p.add_argument("--users", type=int, help="the shape's users scaled to this many")
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--universe", choices=["item-list", "learn-items"], default="item-list")
    p.add_argument("--backends", nargs="+", default=["dask", "local"])
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=10)
    args = p.parse_args([] if argv is None else argv)
    path, shape = scaled_table(args.shape, args.users, args.data_seed)
    folder = path.parent
    listed = folder / f"{shape.name}-{args.data_seed}.passes.items.txt"
    listed.write_text("".join(f"{j}\n" for j in range(1, shape.d + 1)))
    passes = _profiled()
    phases = _phases()
    outputs = {}
    print(f"`bench_raw_passes.py {' '.join(argv or [])}`: {path.name}, {args.universe}, "
          f"epsilon {args.epsilon}, seed {args.seed}")  # fmt: skip
    for backend in args.backends:
        out = folder / f"{shape.name}-passes-{backend}.transactions.csv"
        flags = ["--item-list", str(listed)] if args.universe == "item-list" else ["--learn-items"]
        load = os.getloadavg()[0]
        phases.clear()
        passes.clear()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        code = dpquery(["synth", "--data", str(path), *flags, "--epsilon", str(args.epsilon),
                        "--seed", str(args.seed), "--out", str(out), "--quiet", "--overwrite",
                        "--backend", backend])  # fmt: skip
        wall = time.perf_counter() - start
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
               + kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime)  # fmt: skip
        outputs[backend] = out.read_bytes() if code == 0 else None
        print(f"{backend}: exit {code}, wall {wall:.2f} s, CPU {cpu:.1f} s (this process and "
              f"its finished children), load at start {load:.1f}", flush=True)  # fmt: skip
        print("  phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
        if backend == "dask":
            for q in passes:
                rest = " ".join(f"{k} {v:.2f} s" for k, v in q.items()
                                if k not in ("fn", "payload", "payload_bytes", "result_bytes",
                                             "tasks", "wall"))  # fmt: skip
                print(f"  pass {q['fn']}({q['payload']}): wall {q['wall']:.2f} s, {q['tasks']} "
                      f"tasks, payload {q['payload_bytes'] / 1e3:.1f} kB, results "
                      f"{q['result_bytes'] / 1e3:.1f} kB; tasks' {rest}")  # fmt: skip
            counted = [q for q in passes if q["fn"] == "_count"]
            print(f"  the fit's {len(counted)} counting passes: "
                  f"{sum(q['wall'] for q in counted):.2f} s wall")  # fmt: skip
    if len(outputs) == 2 and None not in outputs.values():
        same = outputs["dask"] == outputs["local"]
        print(f"outputs {'identical' if same else 'DIFFER'} ({len(outputs['dask']):,} bytes)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"this process's peak RSS {peak:.2f} GiB (the client; the workers are not in it)")


if __name__ == "__main__":
    main(sys.argv[1:])
