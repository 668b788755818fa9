"""The raw release's writer alone at the Netflix shape's size (``docs/wide.md``, "A
Netflix-sized raw CSV"): ``write_raw_item_sets`` of a random 0/1 matrix of ``--n`` records
over ``--d`` items with about ``--lines`` ones (uniform items; the labels ``1..d``), timed,
written to ``--out`` (under the system's temporary folder by default, deleted after). With
``PYTHONPATH`` at another checkout's ``src`` it times that code; ``cmp`` two outputs kept
with ``--keep`` to compare their bytes::

    nice .venv/bin/python benchmarks/bench_raw_write.py --keep --out /tmp/new.csv
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpquery.data.items import ItemSets
from dpquery.data.raw_items import ItemLabels, write_raw_item_sets


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=480_158, help="records (the full release's)")
    p.add_argument("--d", type=int, default=17_770, help="items")
    p.add_argument("--lines", type=int, default=100_000_000, help="ones drawn (with repeats)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path)
    p.add_argument("--keep", action="store_true", help="keep the file written")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    lengths = rng.multinomial(args.lines, np.full(args.n, 1 / args.n))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    items = rng.integers(0, args.d, args.lines).astype(np.int32)
    matrix = sp.csr_array((np.ones(args.lines, np.uint8), items, indptr), shape=(args.n, args.d))
    matrix.sum_duplicates()  # a record's repeated item kept once
    matrix.data[:] = 1
    labels = ItemLabels(tuple(str(j) for j in range(1, args.d + 1)), "userId", "movieId")
    out = args.out or Path(tempfile.gettempdir()) / "bench_raw_write.transactions.csv"
    start = time.perf_counter()
    write_raw_item_sets(out, ItemSets(matrix), labels)
    wall = time.perf_counter() - start
    print(f"{matrix.nnz:,} lines, {out.stat().st_size:,} bytes written in {wall:.1f} s")
    if not args.keep:
        os.remove(out)


if __name__ == "__main__":
    main(sys.argv[1:])
