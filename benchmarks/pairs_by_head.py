"""Where the pairs' mean error lies: the wide release beside PipelineDP, by how many of a
pair's two items are among the ``--head`` most frequent (NOT PRIVATE scores).

The pairs are ``WideMeasures``' (every pair of the 200 most frequent items). The wide
release is ``bench_wide.py``'s under add/remove (its library path, ``delta = 1/n^2``, one
seed); PipelineDP is one run of ``pdp_run.py`` per bound, answered as ``bench_wide.py``
answers it (a pair outside its DP head by the product of the two clipped 1-way answers).
Per group: the pairs, their true mean, zeros', the wide release's and each PipelineDP run's
mean absolute error, and the mean answer::

    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/pairs_by_head.py \\
        --items ratings-2016 ratings-2018 --pipelinedp venv-pdp/bin/python --bounds 128 \\
        --out pairs-by-head-movielens
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench_wide import PEERS, RESULTS, pipelinedp_answers
from dpquery.algorithms import registry
from dpquery.data import write_item_sets
from dpquery.evaluation.wide import WideMeasures
from user_items import read_user_items, tables


def groups(k: int, head: int) -> dict[str, np.ndarray]:
    """The pairs ``i < j`` of the ``k`` most frequent items (row-major, as ``WideMeasures``)
    by how many of the two are among the first ``head``."""
    i, j = np.triu_indices(k, k=1)
    return {f"both in the top {head}": j < head, f"one in the top {head}": (i < head) & (j >= head),
            "neither": i >= head}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", nargs="+", required=True, metavar="NAME=PATH")
    p.add_argument("--pipelinedp", required=True, metavar="PYTHON")
    p.add_argument("--bounds", nargs="+", default=["128"])
    p.add_argument("--seed", type=int, default=10)
    p.add_argument("--head", type=int, default=35, help="the head mode's picks under add/remove")
    p.add_argument("--out", default=None, help="write docs/results/wide/<out>.md")
    args = p.parse_args()
    lines = [f"`pairs_by_head.py {' '.join(sys.argv[1:])}`; NOT PRIVATE; mean absolute error "
             "(mean answer)", "",
             "| table | pairs | count | true mean | zeros | wide | "
             + " | ".join(f"PipelineDP l0 = {b}" for b in args.bounds) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(args.bounds)]  # fmt: skip
    notes: list[str] = []
    for name, path in tables(args.items).items():
        real = read_user_items(path)
        measures = WideMeasures.of(real, seed=0)
        options = {"epsilon": 1.0, "delta": 1 / real.n**2, "neighbours": "add-remove"}
        release = registry.build("wide", options, seed=args.seed).fit(real.matrix)
        answers = {"wide": measures.answers(release.records)["pairs"]}
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data.transactions.csv"
            write_item_sets(data, real)
            for bound in args.bounds:
                out = Path(tmp) / "pdp.npz"
                subprocess.run([args.pipelinedp, str(PEERS / "pdp_run.py"), str(data), "--eps",
                                "1.0", "--noise", "gaussian", "--l0", bound, "--out", str(out)],
                               check=True, capture_output=True)  # fmt: skip
                got = np.load(out)
                answers[bound] = pipelinedp_answers(measures, got)["pairs"]
                inside = np.isin(measures.pair_items, got["head"])
                both = inside[:, None] & inside[None, :]
                notes.append(f"{name}, PipelineDP l0 = {bound}: {inside.sum()} of the "
                             f"{inside.size} pair items in its DP head; "
                             f"{both[np.triu_indices(inside.size, k=1)].mean():.1%} of the pairs "
                             "answered by its pair counts, the rest by products")  # fmt: skip
        true = measures.pairs
        for group, member in groups(len(measures.pair_items), args.head).items():
            cells = [f"{np.abs(a - true)[member].mean():.4f} ({a[member].mean():.4f})"
                     for a in answers.values()]  # fmt: skip
            lines.append(f"| {name} | {group} | {member.sum():,} | {true[member].mean():.4f} | "
                         f"{true[member].mean():.4f} | " + " | ".join(cells) + " |")  # fmt: skip
            print(lines[-1], flush=True)
    text = "\n".join([*lines, "", *notes])
    print(text)
    if args.out:
        (RESULTS / f"{args.out}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
