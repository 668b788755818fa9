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
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

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
    args = p.parse_args()
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


if __name__ == "__main__":
    main()
