"""What one constant share for every unpicked item does to the 1-way mean error (NOT private:
it reads the true counts, for the method's design; docs/wide.md, "The tail fill").

The head mode releases the ``k`` = 35 picked items and, with the tail fill, every other item
at one share ``f``. For the exact top 35 of each shape (data seed 0 or ``--data-seed``) as the
picks, this prints the unpicked shares' median over their mean, the share of their total
that a cut at ``S`` items per record keeps, and the change in the 1-way mean error
(``sum_j |s_j - f| - s_j`` over the unpicked items, divided by ``d``; negative is better) for
``f`` at fractions of their mean share; then the same on lognormal item counts of median 3
records over 9,066 items and 671 records (a more skewed law than the generated shapes')::

    nice .venv/bin/python benchmarks/tail_fill.py

``--release`` instead releases (add/remove, epsilon 1, seeds 0-2) a generated table of that
skew, with and without the fill, and prints each measure over zeros' (max / mean): 671
records of lognormal lengths (median 72) drawing items without replacement in proportion to
lognormal weights (sigma 1.8) over 9,066 items (seed 7).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide import release
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data.items import ItemSets
from dpquery.evaluation.wide import MEASURES, WideMeasures

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wide_bounds import shape

FRACTIONS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
CUTS = (64, 128, 256, 512)


def change(shares: np.ndarray, f: float, d: int) -> float:
    """The 1-way mean error's change when every one of ``shares`` is released at ``f``."""
    return float((np.abs(shares - f) - shares).sum() / d)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["small", "narrow", "steep", "mid"])
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--release", action="store_true", help="release the skewed table")
    args = p.parse_args()
    if args.release:
        releases()
        return
    head = " | ".join(f"{f:g} mean" for f in FRACTIONS)
    print(f"| table | zeros' 1-way mean | median / mean | kept at S = {CUTS} | {head} |")
    print("|---|---|---|---|" + "---|" * len(FRACTIONS))
    for name in args.shapes:
        X = shape(name, args.data_seed).matrix.tocsr()
        n, d = X.shape
        counts = np.bincount(X.indices, minlength=d).astype(np.float64)
        picked = np.argsort(-counts, kind="stable")[:35]
        held = np.zeros(d)
        held[picked] = 1
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        tail = np.diff(X.indptr) - np.bincount(rows, weights=held[X.indices], minlength=n)
        rest = np.setdiff1d(np.arange(d), picked)
        s = counts[rest] / n
        kept = ", ".join(f"{np.minimum(tail, c).sum() / tail.sum():.2f}" for c in CUTS)
        moved = " | ".join(f"{change(s, f * s.mean(), d):+.5f}" for f in FRACTIONS)
        print(f"| {name} | {counts.mean() / n:.5f} | {np.median(s) / s.mean():.2f} | {kept} | "
              f"{moved} |")  # fmt: skip
    rng = np.random.default_rng(1)
    for spread in (1.2, 1.5, 1.8):
        x = np.minimum(np.maximum(1, np.round(np.exp(rng.normal(np.log(3), spread, 9066)))), 340)
        s = x / 671
        moved = " | ".join(f"{change(s, f * s.mean(), s.size):+.5f}" for f in FRACTIONS)
        print(f"| lognormal, sigma {spread:g} (median {np.median(x):g}, mean {x.mean():.1f}) | "
              f"{s.mean():.5f} | {np.median(s) / s.mean():.2f} | - | {moved} |")  # fmt: skip


def skewed_table() -> ItemSets:
    """The ``--release`` table: long records over items of a lognormal popularity."""
    rng = np.random.default_rng(7)
    n, d = 671, 9066
    w = np.exp(rng.normal(0, 1.8, d))
    lengths = np.clip(np.round(np.exp(rng.normal(np.log(72), 1.0, n))), 20, 2000).astype(int)
    items = [rng.choice(d, size=int(m), replace=False, p=w / w.sum()) for m in lengths]
    rows = np.repeat(np.arange(n), [i.size for i in items])
    cols = np.concatenate(items)
    return ItemSets(sp.csr_array((np.ones(rows.size, np.uint8), (rows, cols)), shape=(n, d)))


def releases() -> None:
    """The skewed table released with and without the fill (seeds 0-2)."""
    data = skewed_table()
    counts = np.bincount(data.matrix.indices, minlength=data.d)
    print(f"skewed table: {data.n} x {data.d}, item counts median {np.median(counts):g}, "
          f"mean {counts.mean():.2f}, {(counts == 0).sum()} items in no record")  # fmt: skip
    measures = WideMeasures.of(data, seed=0)
    zeros = measures.reference_scores()["zeros"]
    print("| release | seed | " + " | ".join(MEASURES) + " |")
    print("|---|---|" + "---|" * len(MEASURES))
    without = replace(release.ADD_REMOVE_HEAD_SHARES, sizes=0.05, tail=0.0)
    for label, shares in (("tail fill (default)", release.ADD_REMOVE_HEAD_SHARES),
                          ("no fill (0.75 / 0.20 / 0.05)", without)):  # fmt: skip
        release.ADD_REMOVE_HEAD_SHARES = shares  # the module default the plan reads
        for seed in (0, 1, 2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = WideRelease(epsilon=1.0, neighbours="add-remove", seed=seed).fit(data)
            scores = measures.scores(out.records)
            ratio = {m: (scores[m]["max"] / zeros[m]["max"], scores[m]["mean"] / zeros[m]["mean"])
                     for m in MEASURES}  # fmt: skip
            cells = " | ".join(f"{a:.3f} / {b:.3f}" for a, b in ratio.values())
            print(f"| {label} | {seed} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
