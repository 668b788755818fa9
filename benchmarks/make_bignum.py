"""A generated table of numbers beyond 10^10 (docs/learn.md, "Numbers beyond 10^10"): GDP-like
money (log-normal, median 10^11, from about 10^8 to 10^14, in cents), 15-digit census block
numbers (state 36, five counties, tracts and blocks) and a region::

    .venv/bin/python benchmarks/make_bignum.py bignum.csv --rows 5000 --seed 0
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd


def bignum_table(n: int, seed: int) -> pd.DataFrame:
    """``n`` records of the table above, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    gdp = np.round(np.exp(rng.normal(math.log(1e11), 2.3, n)), 2)
    county = rng.choice([5, 47, 61, 81, 85], n, p=[0.2, 0.3, 0.2, 0.2, 0.1])
    code = 36 * 10**13 + county * 10**10 + rng.integers(100, 150000, n) * 10**4
    code += rng.integers(1000, 4000, n)
    region = rng.choice(["north", "south", "east", "west"], n)
    return pd.DataFrame({"region": region, "gdp": gdp, "block": code})


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    bignum_table(args.rows, args.seed).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
