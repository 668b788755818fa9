"""The pairs beyond the head: could a second pass lift the next tier (NOT PRIVATE simulation)?

On ``small`` the add/remove head mode measures about 35 items and puts every other item in
one small share ``f`` of the records (the tail fill). The pairs among the 200 most frequent
items are then mostly pairs with one item, or none, among the head, answered near 0 by the
release. PipelineDP's ``l0 = 128`` answers them by products of noisy 1-way counts clipped at
0, which lifts every item, the 200 commonest among them, to about 0.1 of the records: its
pairs' mean is lower, its 1-way mean 3.5x zeros'. This script asks, on the exact counts
(for deciding whether to build a measurement; nothing here is released), whether a second
pass over the unpicked items can give the pairs that lift without raising the 1-way mean:

* ``uniform``: the release's fill, ``TAIL_FILL`` of the exact cut total over ``n`` and the
  unpicked items;
* ``two-pass a K b c``: every unpicked item's count with each record's unpicked items
  weighted ``1 / sqrt(L)`` (L2 norm 1, sensitivity 1 under add/remove) and Gaussian noise
  at a share ``a`` of ``rho``; the ``K`` largest noisy values taken (the noisy rank); those
  ``K`` items counted again, each record cut to ``b`` of them (sensitivity ``sqrt b``; ``b``
  the exact 0.9-quantile of the records' numbers of them, and the cut's bias undone by the
  exact ratio, both optimistic for a private quantile and correction) at a share ``c``,
  the positive-part James-Stein estimates (``core.james_stein``) released as the items'
  shares (at least ``f``), or (``npmean``) the NPMLE prior's posterior means
  (``shrink.shrink(mean=True)``), or (``thr2``) the noisy counts that clear 2 deviations;
* ``lift l2 a K q``, ``lift em a K q``: the ``K`` items of largest noisy rank (the L2
  statistic above, or the exact counts through Gumbel noise of scale ``1 / epsilon_0``,
  the peeling exponential mechanism's law with add/remove's monotone weights,
  ``epsilon_0 = sqrt(8 a rho / K)``) put in a share ``q`` of the records each;
* ``pipelinedp-like``: every unpicked item's count over records cut to 128 items, Gaussian
  noise of 120 records (about PipelineDP's at ``l0 = 128``, half of epsilon 1, ``delta /
  2``), clipped at 0;
* ``oracle tier``: the exact shares of the unpicked top-200 items, the fill elsewhere.

Every choice is optimistic for the second pass: the head is the exact top 35 with its exact
columns (the release's picks miss some and spend the budget ``a`` and ``c`` come from),
noise is continuous, and each unpicked item is placed in the records independently, with
probability in proportion to a weight: ``p1``, one more than the record's head items (the
release's ``core.tail_fill``), or ``len``, the record's exact length (pairs beyond the head
then follow ``E[L^2] / E[L]^2``). Scores: the 1-way mean over all ``d`` items, the pairs'
mean over the 19,900 pairs of the top 200 (expected co-occurrences), split into the pairs
with one item in the head and with neither, and the lifted items (those put in more than
twice the fill's share): their number and their precision (their share among the true top
200). ``rho`` is add/remove's at epsilon 1 and ``delta = 1/n^2``
(the relation PipelineDP is run at), less the 2% that measures ``n``::

    nice .venv/bin/python benchmarks/tier_lift.py --shapes small steep --seeds 0 1 2 3 \\
        --out tier-lift
    nice .venv/bin/python benchmarks/tier_lift.py --shapes small --seeds 10 11 12 \\
        --out tier-lift-report
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bench_wide_bounds import shape as table_of
from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.wide.core import TAIL_BOUND, TAIL_FILL, james_stein
from dpquery.algorithms.wide.release import ADD_REMOVE_PICKS, RECORDS_SHARE
from dpquery.algorithms.wide.shrink import shrink
from dpquery.privacy.budget import budget_rho

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "wide"
TOP = 200
PDP_SIGMA = 120.0  # PipelineDP's count noise at l0 = 128, epsilon 0.5, delta 1/(2 n^2)


class Table:
    """The exact quantities of one generated table that the variants are scored against."""

    def __init__(self, shape: str, data_seed: int) -> None:
        X = sp.csr_array(table_of(shape, data_seed).matrix, dtype=np.float64)
        self.n, self.d = X.shape
        self.counts = np.asarray(X.sum(axis=0)).ravel()
        order = np.argsort(-self.counts, kind="stable")
        picked, top = order[:ADD_REMOVE_PICKS], order[:TOP]
        self.unpicked = np.setdiff1d(np.arange(self.d), picked)
        self.tail = sp.csr_array(X[:, self.unpicked])
        self.tail_lengths = np.asarray(self.tail.sum(axis=1)).ravel()
        self.uniform = TAIL_FILL * np.minimum(self.tail_lengths, TAIL_BOUND).sum()
        self.uniform /= self.n * self.unpicked.size
        self.head = np.isin(top, picked)
        self.top = sp.csr_array(X[:, top]).toarray()
        self.pairs = self.top.T @ self.top / self.n
        self.upper = np.triu_indices(TOP, 1)
        self.tier = np.searchsorted(self.unpicked, top[~self.head])  # unpicked top items
        self.weights = {
            "p1": np.asarray(X[:, picked].sum(axis=1)).ravel() + 1.0,
            "len": np.asarray(X.sum(axis=1)).ravel().astype(np.float64),
        }
        L = np.maximum(self.tail_lengths, 1.0)
        self.l2 = np.asarray(self.tail.multiply((1.0 / np.sqrt(L))[:, None]).sum(axis=0)).ravel()
        cut = np.minimum(1.0, 128.0 / np.maximum(self.weights["len"], 1.0))
        self.cut128 = np.asarray(self.tail.multiply(cut[:, None]).sum(axis=0)).ravel()

    def scores(self, share: np.ndarray, placement: str) -> tuple[float, ...]:
        """1-way mean over all items, the pairs' mean over the top 200, its one-head and
        neither groups, for the share of each unpicked item (the head exact)."""
        share = np.minimum(share, 1.0)
        one_way = float(np.abs(self.counts[self.unpicked] / self.n - share).sum() / self.d)
        w = self.weights[placement]
        P = self.top.copy()
        P[:, ~self.head] = np.minimum(1.0, np.outer(w * self.n / w.sum(), share[self.tier]))
        err = np.abs(P.T @ P / self.n - self.pairs)[self.upper]
        i, j = self.upper
        both, neither = self.head[i] & self.head[j], ~self.head[i] & ~self.head[j]
        return (
            one_way,
            float(err.mean()),
            float(err[~both & ~neither].mean()),
            float(err[neither].mean()),
        )

    def precision(self, chosen: np.ndarray) -> float:
        """The share of ``chosen`` (indices into the unpicked items) among the top 200."""
        return float(np.isin(chosen, self.tier).mean()) if chosen.size else float("nan")


Variant = Callable[[Table, float, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def variants() -> dict[str, Variant]:
    """Each variant maps the table, ``rho`` and a generator to the unpicked items' shares
    and the items it lifted."""
    none = np.zeros(0, dtype=np.int64)

    def two_pass(a: float, K: int, c: float, estimate: str = "js") -> Variant:
        def fill(t: Table, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
            y = t.l2 + rng.normal(0.0, 1.0 / np.sqrt(2 * a * rho), t.l2.size)
            chosen = np.argsort(-y)[:K]
            sub = sp.csr_array(t.tail[:, chosen])
            m = np.asarray(sub.sum(axis=1)).ravel()
            b = max(1.0, float(np.quantile(m, 0.9)))
            kept = np.asarray(
                sub.multiply(np.minimum(1.0, b / np.maximum(m, 1.0))[:, None]).sum(axis=0)
            ).ravel()
            sigma = np.sqrt(b) / np.sqrt(2 * c * rho)
            y2 = kept + rng.normal(0.0, sigma, K)
            if estimate == "js":
                est = james_stein(y2, sigma)
            elif estimate == "npmean":  # the NPMLE prior's posterior means
                est = shrink(y2, sigma, mean=True)
            else:  # "thr2": the noisy counts that clear 2 deviations, the rest at the fill
                est = np.where(y2 > 2 * sigma, y2, 0.0)
            est = est * (sub.sum() / kept.sum())
            share = np.full(t.unpicked.size, t.uniform)
            share[chosen] = np.maximum(est / t.n, t.uniform)
            return share, chosen[share[chosen] > 2 * t.uniform]  # the items it lifted

        return fill

    def lift(a: float, K: int, q: float, em: bool) -> Variant:
        def fill(t: Table, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
            if em:
                epsilon_0 = np.sqrt(8 * a * rho / K)
                y = t.counts[t.unpicked] + rng.gumbel(0.0, 1.0 / epsilon_0, t.unpicked.size)
            else:
                y = t.l2 + rng.normal(0.0, 1.0 / np.sqrt(2 * a * rho), t.l2.size)
            chosen = np.argsort(-y)[:K]
            share = np.full(t.unpicked.size, t.uniform)
            share[chosen] = q
            return share, chosen

        return fill

    def pipelinedp(t: Table, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = t.cut128 + rng.normal(0.0, PDP_SIGMA, t.cut128.size)
        return np.maximum(y, 0.0) / t.n, none

    def oracle(t: Table, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        share = np.full(t.unpicked.size, t.uniform)
        share[t.tier] = t.counts[t.unpicked][t.tier] / t.n
        return share, t.tier

    out: dict[str, Variant] = {
        "uniform (the release's fill)": lambda t, rho, rng: (
            np.full(t.unpicked.size, t.uniform),
            none,
        )
    }
    for a, c in ((0.1, 0.1), (0.3, 0.2)):
        for K in (200, 400):
            out[f"two-pass a={a:g} K={K} c={c:g}"] = two_pass(a, K, c)
    for K in (400, 2000):
        for estimate in ("npmean", "thr2"):
            out[f"two-pass a=0.3 K={K} c=0.2 {estimate}"] = two_pass(0.3, K, 0.2, estimate)
    for em in (False, True):
        for a in (0.3, 1.0):
            for K in (200, 400):
                for q in (0.06, 0.1):
                    out[f"lift {'em' if em else 'l2'} a={a:g} K={K} q={q:g}"] = lift(a, K, q, em)
    out["pipelinedp-like (l0 = 128, clipped)"] = pipelinedp
    out["oracle tier (exact shares)"] = oracle
    return out


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["small", "steep"])
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    p.add_argument("--placements", nargs="+", default=["p1", "len"])
    p.add_argument("--out", help="write docs/results/wide/<out>.md")
    args = p.parse_args(argv)
    lines = [
        f"`tier_lift.py {' '.join(argv)}`; NOT PRIVATE simulation on the exact counts (the head "
        f"exact, data seed {args.data_seed}); means over the seeds",
        "",
        "| shape | variant | placement | 1-way mean | pairs mean | one in the head | neither "
        "| lifted | precision |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape in args.shapes:
        table = Table(shape, args.data_seed)
        n = table.n
        rho = budget_rho(budget_of(epsilon=1.0, delta=1.0 / n**2)) * (1 - RECORDS_SHARE)
        for name, fill in variants().items():
            made = [fill(table, rho, np.random.default_rng(s)) for s in args.seeds]
            prec = float(np.mean([table.precision(chosen) for _, chosen in made]))
            lifted = float(np.mean([chosen.size for _, chosen in made]))
            for placement in args.placements:
                r = np.mean([table.scores(share, placement) for share, _ in made], axis=0)
                lines.append(
                    f"| {shape} | {name} | {placement} | {r[0]:.5f} | {r[1]:.5f} | {r[2]:.4f} "
                    f"| {r[3]:.4f} | {lifted:.0f} | {prec:.2f} |"
                )
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        (RESULTS / f"{args.out}.md").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
