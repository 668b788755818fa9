"""The head mode's next tier: could a cheap measurement of the unpicked items place the fill?

On the ``small`` shape the add/remove head mode picks 35 items and puts every other item in
one small share of the records (the tail fill, ``core.tail_fill``). The pairs among the 200
most frequent items are then mostly pairs of items it never measured (ranks 36-200, shares
0.1-0.3), answered near 0. This script asks, on the exact counts (NOT PRIVATE: a simulation
that reads the data, for deciding whether to build a measurement), what a fill spread by a
noisy measurement of every unpicked item would give, at a share ``f`` of add/remove's
``rho`` (epsilon 1, delta 1e-9, less the 2% that measures ``n``):

* ``uniform``: the release's fill, ``TAIL_FILL`` of the exact cut total over ``n`` and the
  unpicked items (the total's noise left out);
* ``l2 f``: each record's unpicked items weighted ``1 / sqrt(L)`` (``L`` its number of them:
  L2 norm 1, sensitivity 1 under add/remove, at least the signal-to-noise of any cut by
  Cauchy-Schwarz), continuous Gaussian noise of ``1 / sqrt(2 f rho)``, posterior means under
  the NPMLE prior (``shrink.shrink(mean=True)``), the uniform fill's total spread in
  proportion to them;
* ``l2 f, JS``: the same with the positive-part James-Stein estimates (``core.james_stein``);
* ``cut8 f``: each record cut to 8 unpicked items (its expected counts, sensitivity
  ``sqrt 8``), NPMLE posterior means;
* ``oracle``: the exact shares (what no measurement at this budget gives).

Every choice is optimistic for the measurement: the picks are the exact top 35, the noise
continuous, the fill placed in the records in proportion to their exact picked items plus
one, and its pair answers are expected co-occurrences. Scores: the 1-way mean error over
all ``d`` items (the picked ones exact), the mean error of the pairs of the top 200 whose
two items are both unpicked, and the mean fill of the unpicked top-200 items over the
uniform fill's. Tune on data seeds 0-1 and noise seeds 0-3, report data seed 2, seeds
10-12::

    nice .venv/bin/python benchmarks/bench_wide_tier.py --data-seeds 2 --seeds 10 11 12 \
        --out tier-fill-ds2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.wide.core import TAIL_BOUND, TAIL_FILL, james_stein
from dpquery.algorithms.wide.release import ADD_REMOVE_PICKS, RECORDS_SHARE
from dpquery.algorithms.wide.shrink import shrink
from dpquery.datasets.shapes import generate
from dpquery.privacy.budget import budget_rho

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "wide"
TOP = 200


class Table:
    """The exact quantities of one generated table that the variants are scored against."""

    def __init__(self, shape: str, data_seed: int) -> None:
        X = sp.csr_array(generate(shape, data_seed).matrix, dtype=np.float64)
        self.n, self.d = X.shape
        self.counts = np.asarray(X.sum(axis=0)).ravel()
        order = np.argsort(-self.counts, kind="stable")
        picked, self.top = order[:ADD_REMOVE_PICKS], order[:TOP]
        self.unpicked = np.setdiff1d(np.arange(self.d), picked)
        tail = sp.csr_array(X[:, self.unpicked])
        self.lengths = np.asarray(tail.sum(axis=1)).ravel()
        self.tail = tail
        self.uniform = TAIL_FILL * np.minimum(self.lengths, TAIL_BOUND).sum()
        self.uniform /= self.n * self.unpicked.size
        self.weight = np.asarray(X[:, picked].sum(axis=1)).ravel() + 1.0  # tail_fill's
        rest = ~np.isin(self.top, picked)
        self.tier = np.searchsorted(self.unpicked, self.top[rest])  # unpicked top items
        top_cols = sp.csr_array(X[:, self.top[rest]])
        self.pairs = (top_cols.T @ top_cols).toarray() / self.n
        self.upper = np.triu_indices(self.tier.size, 1)

    def statistic(self, cut: int | None) -> tuple[np.ndarray, float]:
        """Every unpicked item's weighted count and its L2 sensitivity: records L2-normalised
        (``cut`` None) or cut to ``cut`` unpicked items (their expected cut counts)."""
        L = np.maximum(self.lengths, 1.0)
        w = 1.0 / np.sqrt(L) if cut is None else np.minimum(1.0, cut / L)
        stat = np.asarray(self.tail.multiply(w[:, None]).sum(axis=0)).ravel()
        return stat, 1.0 if cut is None else float(np.sqrt(cut))

    def scores(self, share: np.ndarray) -> tuple[float, float, float]:
        """1-way mean over all items, the unpicked top items' pairs mean, their mean fill
        over the uniform one, for the fill ``share`` of each unpicked item."""
        share = np.minimum(share, 1.0)
        one_way = float(np.abs(self.counts[self.unpicked] / self.n - share).sum() / self.d)
        p = np.minimum(1.0, np.outer(self.weight * self.n / self.weight.sum(), share[self.tier]))
        fitted = p.T @ p / self.n  # expected co-occurrence of independent placements
        pairs = float(np.abs(fitted - self.pairs)[self.upper].mean())
        return one_way, pairs, float(share[self.tier].mean() / self.uniform)


def spread(table: Table, estimates: np.ndarray) -> np.ndarray:
    """The uniform fill's total spread over the unpicked items in proportion to
    ``estimates`` (uniform where they are all 0)."""
    total = table.uniform * table.unpicked.size
    e = np.maximum(estimates, 0.0)
    return e * (total / e.sum()) if e.sum() > 0 else np.full(e.size, table.uniform)


def variants(fractions: list[float]) -> dict[str, Callable[[Table, float, np.random.Generator],
                                                          np.ndarray]]:  # fmt: skip
    """The fills compared, each a function of the table, ``rho`` and the noise's generator."""

    def measured(f: float, cut: int | None, js: bool) -> Callable[..., np.ndarray]:
        def fill(t: Table, rho: float, rng: np.random.Generator) -> np.ndarray:
            stat, sens = t.statistic(cut)
            sigma = sens / np.sqrt(2 * f * rho)
            y = stat + rng.normal(0.0, sigma, stat.size)
            return spread(t, james_stein(y, sigma) if js else shrink(y, sigma, mean=True))

        return fill

    out: dict[str, Callable[..., np.ndarray]] = {
        "zeros (no fill)": lambda t, rho, rng: np.zeros(t.unpicked.size),
        "uniform (the release's fill)": lambda t, rho, rng: np.full(t.unpicked.size, t.uniform),
    }
    for f in fractions:
        out[f"l2 {f:g}"] = measured(f, None, False)
        out[f"l2 {f:g}, JS"] = measured(f, None, True)
        out[f"cut8 {f:g}"] = measured(f, 8, False)
    out["oracle (exact shares)"] = lambda t, rho, rng: t.counts[t.unpicked] / t.n
    return out


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="small")
    p.add_argument("--data-seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    p.add_argument("--fractions", type=float, nargs="+", default=[0.05, 0.1, 0.2, 1.0])
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--out", help="write docs/results/wide/<out>.md")
    args = p.parse_args(argv)
    rho = budget_rho(budget_of(epsilon=args.epsilon, delta=1e-9)) * (1 - RECORDS_SHARE)
    lines = [
        f"`bench_wide_tier.py {' '.join(argv)}`; NOT PRIVATE simulation on the exact counts; "
        "means over the seeds",
        "",
        "| data seed | fill | 1-way mean | unpicked top pairs mean | tier fill / uniform |",
        "|---|---|---|---|---|",
    ]
    for data_seed in args.data_seeds:
        table = Table(args.shape, data_seed)
        for name, fill in variants(args.fractions).items():
            rows = [table.scores(fill(table, rho, np.random.default_rng(s))) for s in args.seeds]
            one_way, pairs, tier = np.mean(rows, axis=0)
            lines.append(f"| {data_seed} | {name} | {one_way:.5f} | {pairs:.5f} | {tier:.2f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        (RESULTS / f"{args.out}.md").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
