"""How add/remove's head mode reads its noisy histogram of picked items per record: the
cells shrunk one by one (``shrink``, the default) or the beta-binomial law fitted to them
(``core.beta_binomial_sizes``), on noisy histograms simulated from a table's true one
(NOT PRIVATE: the true top ``k`` items stand for the picks; docs/wide.md, "Real item tables
of other shapes").

Per table: the true histogram of the top ``k`` items per record, ``--draws`` draws of it
plus Gaussian noise of ``--sigma`` records a cell (34 is the head mode's at epsilon 1 under
add/remove, delta 1e-9), each read both ways and tilted to the true head total
(``core.match_head_total``, as the release does); printed, the second and third factorial
moments per record (the pairs and triples of picks a record holds) over the truth's,
median and range over the draws::

    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/head_sizes_law.py \\
        --items lastfm=extra/items/lastfm.csv ml100k=extra/items/ml100k.csv \\
        --shapes small steep narrow mid
"""

from __future__ import annotations

import argparse

import numpy as np

from bench_wide_bounds import ITEMS, shape
from dpquery.algorithms.wide.core import beta_binomial_sizes, match_head_total
from dpquery.algorithms.wide.shrink import shrink
from user_items import tables


def moments(sizes: np.ndarray) -> tuple[float, float]:
    """The mean numbers of pairs and of triples of picks a record holds."""
    a = np.arange(sizes.size, dtype=np.float64)
    w = sizes / sizes.sum()
    return float((w * a * (a - 1) / 2).sum()), float((w * a * (a - 1) * (a - 2) / 6).sum())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=[])
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH")
    p.add_argument("--k", type=int, default=35)
    p.add_argument("--sigma", type=float, default=34.0)
    p.add_argument("--draws", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    ITEMS.update(tables(args.items))
    rng = np.random.default_rng(args.seed)
    for name in [*ITEMS, *args.shapes]:
        m = shape(name).matrix.tocsc().astype(np.float64)
        counts = np.asarray(m.sum(axis=0)).ravel()
        top = np.argsort(-counts)[: args.k]
        heads = np.asarray(m[:, top].sum(axis=1)).ravel().astype(np.int64)
        hist = np.bincount(heads, minlength=args.k + 1).astype(np.float64)
        n, total = m.shape[0], float(counts[top].sum())
        t2, t3 = moments(hist)
        got: dict[str, list[tuple[float, float]]] = {"shrink": [], "beta-binomial": []}
        for _ in range(args.draws):
            y = hist + rng.normal(0.0, args.sigma, hist.size)
            for law, sizes in (("shrink", shrink(y, args.sigma)),
                               ("beta-binomial", beta_binomial_sizes(y, n))):  # fmt: skip
                sizes = match_head_total(sizes[:, None] * (n / max(sizes.sum(), 1e-9)), total, n)
                m2, m3 = moments(sizes[:, 0])
                got[law].append((m2 / t2, m3 / t3))
        print(f"{name}: n {n:,}, pairs of picks {t2:.1f}, triples {t3:.1f} per record")
        for law, r in got.items():
            v = np.array(r)
            print(f"  {law:13s} pairs {np.median(v[:, 0]):.2f} ({v[:, 0].min():.2f}-"
                  f"{v[:, 0].max():.2f}), triples {np.median(v[:, 1]):.2f} "
                  f"({v[:, 1].min():.2f}-{v[:, 1].max():.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
