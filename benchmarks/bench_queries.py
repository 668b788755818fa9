"""Benchmark: true answers of random sensible 3-way marginal queries (the kernels' target).

1. KDD99 (494,021 rows, DualQuery's bucketing) with 500,000 random 3-way queries.
2. Biased-bits data (DualQuery Section 6.3) with n = 20,000, d = 512,000 and 100,000 queries.

For each: rows, queries, seconds for all true answers with the compiled kernel (after a
warm-up call that compiles or loads the cached machine code), query-rows per second, and the
ratio against a straightforward vectorised numpy implementation (gather the bit-packed
columns of a batch of queries, AND / AND-NOT them, ``np.bitwise_count``, sum) run in the same
process. The kernel's time includes building the per-column index of nonzero words that
its sparse path uses. numpy answers a sample of the queries (all of them would take
minutes); the ratio compares rates (query-rows per second), and numpy's answers are
checked against the kernel's.

Run: ``.venv/bin/python benchmarks/bench_queries.py`` (needs $DPQUERY_DATA_DIR for KDD99).
"""

from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.synthetic import biased_bits
from dpquery.queries import Workload, answer_data, random_marginal_queries

NUMPY_BATCH = 256


def numpy_answers(workload: Workload, data: BinaryData) -> np.ndarray:
    """The straightforward vectorised numpy version, for 3-literal conjunctions."""
    bits = workload.bits.reshape(-1, 3)
    flips = np.where(workload.positive.reshape(-1, 3), np.uint64(0), ~np.uint64(0))
    out = np.empty(len(bits))
    for s in range(0, len(bits), NUMPY_BATCH):
        b, f = bits[s : s + NUMPY_BATCH], flips[s : s + NUMPY_BATCH]
        acc = (data.words[b[:, 0]] ^ f[:, 0, None]) & (data.words[b[:, 1]] ^ f[:, 1, None])
        acc &= data.words[b[:, 2]] ^ f[:, 2, None]
        acc[:, -1] &= data.tail_mask
        out[s : s + NUMPY_BATCH] = np.bitwise_count(acc).sum(axis=1)
    return out / data.n


def run(name: str, data: BinaryData, domain: Domain, count: int, numpy_sample: int) -> None:
    workload = random_marginal_queries(domain, 3, count, seed=0)
    # warm-up on a small copy: compiles (or loads) the kernels without building the sparse
    # column index of `data`, whose construction is part of the timed call below
    small = BinaryData(np.array(data.words[:, :2]), min(data.n, 128), data.onehot_groups)
    answer_data(workload.subset(np.arange(10)), small)
    t = time.perf_counter()
    answers = answer_data(workload, data)
    seconds = time.perf_counter() - t
    rate = count * data.n / seconds

    sample = workload.subset(np.arange(min(numpy_sample, count)))
    t = time.perf_counter()
    reference = numpy_answers(sample, data)
    np_seconds = time.perf_counter() - t
    np_rate = len(sample) * data.n / np_seconds
    if not np.allclose(reference, answers[: len(sample)], rtol=0, atol=1e-12):
        raise AssertionError("numpy and the kernel disagree")
    print(
        f"{name:<12} rows={data.n:>7,} bits={data.d:>7,} queries={count:>7,}  "
        f"kernel {seconds:6.2f} s  {rate:9.3e} query-rows/s  |  numpy on {len(sample):,} "
        f"queries {np_seconds:6.2f} s  {np_rate:9.3e} query-rows/s  |  ratio {rate / np_rate:5.1f}x"
    )


def main() -> None:
    print(f"bench_queries: numba threads={numba.get_num_threads()}, cpus={os.cpu_count()}")
    from dpquery import datasets

    if datasets.available("kdd99"):
        t = time.perf_counter()
        kdd = datasets.load("kdd99")
        print(f"  (KDD99 loaded and encoded in {time.perf_counter() - t:.1f} s)")
        assert kdd.domain is not None
        run("KDD99", kdd, kdd.domain, 500_000, numpy_sample=10_000)
    else:
        print("KDD99: not available (set DPQUERY_DATA_DIR); skipped", file=sys.stderr)
    t = time.perf_counter()
    d = 512_000
    bits = biased_bits(20_000, d, seed=0)
    print(f"  (biased bits generated in {time.perf_counter() - t:.1f} s)")
    run("biased-bits", bits, Domain.binary(d), 100_000, numpy_sample=10_000)


if __name__ == "__main__":
    main()
