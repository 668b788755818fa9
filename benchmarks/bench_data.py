"""Foundation benchmarks: KDD99 encoding throughput; memory of the biased-bits generator;
output rows (a release sampled to n rows and decoded).

Run: ``python benchmarks/bench_data.py`` (or ``make bench``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from dpquery import datasets
from dpquery.data.encode import encode

_MEMORY_CHILD = """
import json, resource, sys, time
from dpquery.data.synthetic import biased_bits
n, d = int(sys.argv[1]), int(sys.argv[2])
start = time.perf_counter()
data = biased_bits(n, d, seed=0)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "peak": peak, "packed": data.nbytes}))
"""


def bench_encode_kdd99(repeats: int = 3) -> None:
    if not datasets.available("kdd99"):
        print("kdd99: not available (set DPQUERY_DATA_DIR); skipped")
        return
    start = time.perf_counter()
    table, domain = datasets.load_table("kdd99")
    read_s = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        data = encode(table, domain)
        best = min(best, time.perf_counter() - start)
    n = data.n
    print(f"kdd99 encode: n={n:,} rows, d={data.d} bits, {len(domain)} attributes")
    print(f"  read+parse CSV        {read_s:8.2f} s   {n / read_s:12,.0f} rows/s")
    print(f"  encode (best of {repeats})    {best:8.2f} s   {n / best:12,.0f} rows/s")
    print(f"  end to end            {read_s + best:8.2f} s   {n / (read_s + best):12,.0f} rows/s")


def bench_biased_bits_memory(n: int = 20_000, d: int = 512_000) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(n), str(d)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    r = json.loads(out.stdout)
    gib = 2**30
    print(f"biased_bits n={n:,} x d={d:,} ({n * d / 1e9:.2f} G bits)")
    print(f"  time {r['seconds']:.1f} s, packed {r['packed'] / gib:.2f} GiB, "
          f"peak RSS {r['peak'] / gib:.2f} GiB (ratio {r['peak'] / r['packed']:.2f}x packed; "
          f"a dense uint8 matrix would need {n * d / gib:.1f} GiB)")  # fmt: skip


def bench_output_rows(records: int = 2000, repeats: int = 3) -> None:
    """KDD99's n = 494,021 rows sampled from ``records`` weighted records over its domain
    (drawn uniformly: the cost does not depend on the values) and decoded."""
    import numpy as np

    from dpquery.algorithms.uniform import uniform_records
    from dpquery.data import Records, output_table

    domain = datasets.domain("kdd99")
    rng = np.random.default_rng(0)
    rows = uniform_records(domain.d, domain.onehot_groups, records, rng)
    release = Records(rows, rng.random(records), domain)
    n = datasets.info("kdd99").rows
    best = float("inf")
    for seed in range(repeats):
        start = time.perf_counter()
        table, _ = output_table(release, domain, rows=n, seed=seed)
        best = min(best, time.perf_counter() - start)
    print(f"output rows: {n:,} rows x {table.shape[1]} columns from {records:,} weighted "
          f"records over {domain.d} bits: {best:.2f} s (best of {repeats})")  # fmt: skip


def main() -> None:
    bench_encode_kdd99()
    bench_biased_bits_memory()
    bench_output_rows()


if __name__ == "__main__":
    main()
