"""The tail fill's share and placement against the pairs beyond the head (NOT PRIVATE scores).

The add/remove head mode puts every unpicked item in the same share ``f`` of the records
(``core.tail_share``: ``TAIL_FILL`` of the noisy tail total over ``n`` and the unpicked
items) and deals it to records in proportion to one more than their head items
(``core.tail_fill``). Here the release is rerun (the library path, add/remove, epsilon 1,
delta 1e-9) with ``TAIL_FILL`` set to each ``--fills`` value and the fill dealt by each
``--placements`` rule:

* ``pP``: in proportion to ``(head items + 1)^P`` (``p1`` is the release's);
* ``topQ%``: evenly over the ``Q%`` of the records with the most head items (ties at random),
  a record taking each unpicked item at most once.

Per rule: the range of the 1-way max over zeros', the means over the seeds of the 1-way
mean over zeros', the pairs' mean (fractions of records and over zeros', with the worst
seed), the triples' mean over zeros', and the pairs' mean error by group (the pairs of the
top 200 with one item among the 35 commonest, and with neither)::

    nice .venv/bin/python benchmarks/fill_placement.py --shapes small steep --seeds 0 1 2 3 \\
        --fills 0.4 0.6 0.8 --placements p1 p2 p4 top10% top3% --out fill-placement

``--items NAME`` (``user_items.py``) runs real user x item tables instead, with ``delta =
1/n^2`` as "Beside PipelineDP" gives both releases (report only: seeds 10-12)::

    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/fill_placement.py \
        --items ratings-2016 ratings-2018 --seeds 10 11 12 --fills 0.4 0.8 \
        --placements p1 top3% --out fill-placement-movielens
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bench_wide_bounds import ITEMS, shape
from dpquery.algorithms import registry
from dpquery.algorithms.wide import core, fit
from dpquery.data.sample import systematic_counts
from dpquery.evaluation.wide import WideMeasures
from user_items import tables

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "wide"
Fill = Callable[[sp.csr_array, np.ndarray, float, np.random.Generator], sp.csr_array]


def placement(rule: str) -> Fill:
    """``core.tail_fill`` with the records' weights of ``rule`` (module docstring)."""

    def tail_fill(
        records: sp.csr_array, picked: np.ndarray, share: float, rng: np.random.Generator
    ) -> sp.csr_array:
        n, d = records.shape
        unpicked = np.setdiff1d(np.arange(d), picked)
        total = round(share * n * unpicked.size)
        if total <= 0:
            return records
        counts = fit.integer_counts(np.ones(unpicked.size), total, rng)
        h = np.diff(records.indptr) + 1.0
        if rule.startswith("top"):
            order = np.lexsort((rng.random(n), -h))
            weight = np.zeros(n)
            weight[order[: max(1, round(float(rule[3:-1]) / 100 * n))]] = 1.0
        else:
            weight = h ** float(rule[1:])
        slots = np.minimum(systematic_counts(weight / weight.sum(), total, rng), unpicked.size)
        owner, token = fit.deal_tail(slots, counts, rng)
        fill = sp.csr_array(
            (np.ones(owner.size, dtype=np.uint8), (owner, unpicked[token])), shape=(n, d)
        )
        out = sp.csr_array(records + fill)
        out.sum_duplicates()
        out.data[:] = 1
        return out

    return tail_fill


def groups(k: int = 200, head: int = 35) -> dict[str, np.ndarray]:
    """The pairs of the ``k`` commonest items with one, or neither, among the first ``head``."""
    i, j = np.triu_indices(k, k=1)
    return {"one": (i < head) & (j >= head), "neither": i >= head}


def run(name: str, data_seed: int, seeds: list[int], fill: float, rule: str) -> str:
    """One row: ``rule`` at ``TAIL_FILL = fill`` on the shape ``name``."""
    real = shape(name, data_seed)
    m = WideMeasures.of(real, seed=0)
    z = m.reference_scores()["zeros"]
    saved = core.tail_fill, core.TAIL_FILL
    core.tail_fill, core.TAIL_FILL = placement(rule), fill
    rows = []
    try:
        for s in seeds:
            delta = 1 / real.n**2 if name in ITEMS else 1e-9
            options = {"epsilon": 1.0, "delta": delta, "neighbours": "add-remove"}
            items = registry.build("wide", options, seed=s).fit(real.matrix).records
            sc = m.scores(items)
            pairs = m.answers(items)["pairs"]
            by = [float(np.abs(pairs[g] - m.pairs[g]).mean()) for g in groups().values()]
            rows.append([
                sc["one_way"]["max"] / z["one_way"]["max"],
                sc["one_way"]["mean"] / z["one_way"]["mean"],
                sc["pairs"]["mean"], sc["pairs"]["mean"] / z["pairs"]["mean"],
                sc["triples"]["mean"] / z["triples"]["mean"], *by,
            ])  # fmt: skip
    finally:
        core.tail_fill, core.TAIL_FILL = saved
    r = np.array(rows)
    return (f"| {name} | {fill} | {rule} | {r[:, 0].min():.3f}-{r[:, 0].max():.3f} | "
            f"{r[:, 1].mean():.4f} | {r[:, 2].mean():.5f} | {r[:, 3].mean():.4f} "
            f"({r[:, 3].max():.4f}) | {r[:, 4].mean():.4f} | {r[:, 5].mean():.4f} | "
            f"{r[:, 6].mean():.4f} |")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["small", "steep"])
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    p.add_argument("--fills", nargs="+", type=float, default=[core.TAIL_FILL])
    p.add_argument("--placements", nargs="+", default=["p1"])
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH")
    p.add_argument("--out", default=None, help="write docs/results/wide/<out>.md")
    args = p.parse_args()
    if args.items:
        ITEMS.update(tables(args.items))
        args.shapes = list(ITEMS)
    lines = [f"`fill_placement.py {' '.join(sys.argv[1:])}`; NOT PRIVATE; add/remove, "
             "epsilon 1, delta 1e-9 (the generated shapes) or 1/n^2 (--items)", "",
             "| shape | TAIL_FILL | placement | 1-way max / zeros' | 1-way mean / zeros' | "
             "pairs mean | pairs mean / zeros' (worst) | triples mean / zeros' | "
             "pairs, one in the top 35 | pairs, neither |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    print("\n".join(lines), flush=True)
    for name in args.shapes:
        for fill in args.fills:
            for rule in args.placements:
                lines.append(run(name, args.data_seed, args.seeds, fill, rule))
                print(lines[-1], flush=True)
    if args.out:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.out}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
