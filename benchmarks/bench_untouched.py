"""Columns no workload query touches: given-workload error vs error elsewhere.

Protocol: ``m`` = 64 random 3-way marginals of a dataset (workload seed 1, the FEM protocol's
draw, or each of ``--workload-seeds``: marginals of at most n cells), FEM+MWEM
(``Reweighted``, or ``--algorithm``) at epsilon 1, delta = 1/n^2. Scored on the given
workload (max error), on 64 other 3-way marginals not in it (drawn with seeds 1001, 1002,
...; max error and mean TV) and on every attribute's 1-way marginal (max TV).
``--untouched-share`` is the share of the budget spent measuring the 1-way marginals of
attributes no workload query touches (default: the library's; 0 = leave them to FEM's
free-attribute policy, as before they were measured).

Run: ``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_untouched.py
--datasets kdd99 acs adult-pgm --seeds 0 1 2 --out untouched``; rows are appended to
``docs/results/untouched/<out>.csv`` as each fit ends.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.algorithms import registry
from dpquery.algorithms.untouched import attributes_of, untouched_attributes
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.queries.evaluate import answer
from dpquery.queries.generators import fem_marginals, marginal_cells

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "untouched"


def other_marginals(data: BinaryData, given: list[tuple[str, ...]], m: int) -> list:
    """``m`` 3-way marginals not in ``given``, from the same protocol with other seeds."""
    seen = {frozenset(g) for g in given}
    out: list[tuple[str, ...]] = []
    seed = 1001
    while len(out) < m:
        for mg in fem_marginals(data.domain, 3, m, data.n, seed=seed):
            if frozenset(mg) not in seen and len(out) < m:
                seen.add(frozenset(mg))
                out.append(mg)
        seed += 1
    return out


def one_way_tv(data: BinaryData, records: Records) -> float:
    """Largest total variation between the data's and the release's 1-way marginals."""
    true = data.column_counts() / data.n
    released = records.probabilities @ records.rows.astype(np.float64)
    worst = 0.0
    for a in attributes_of(data.d, data.onehot_groups):
        t, r = true[a.start : a.stop], released[a.start : a.stop]
        if not a.onehot:
            t, r = np.array([1 - t[0], t[0]]), np.array([1 - r[0], r[0]])
        worst = max(worst, 0.5 * float(np.abs(t - r).sum()))
    return worst


def marginal_scores(workload: Any, true: np.ndarray, released: np.ndarray) -> dict[str, float]:
    err = np.abs(released - true)
    bounds = workload.marginals
    tv = [0.5 * err[lo:hi].sum() for lo, hi in itertools.pairwise(bounds)]
    return {"max": float(err.max()), "mean_tv": float(np.mean(tv))}


def fit(
    dataset: str,
    seed: int,
    epsilon: float,
    share: float | None,
    algorithm: str = "fem",
    workload_seed: int = 1,
    keywords: dict[str, Any] | None = None,
) -> dict[str, Any]:
    data = datasets.load(dataset)
    given = fem_marginals(data.domain, 3, 64, data.n, seed=workload_seed)
    workload = marginal_cells(data.domain, given)
    others = marginal_cells(data.domain, other_marginals(data, given, 64))
    # The command line's path: FEM reweighted by MWEM, untouched attributes measured with
    # ``share`` of the budget (the default), or left to FEM's free-attribute policy (share 0).
    options: dict[str, Any] = {"epsilon": epsilon, "delta": 1 / data.n**2}
    if algorithm == "fem":
        options["fraction"] = 0.5
    if share == 0:
        options["free_attributes"] = "zeros"
    elif share is not None:
        options["untouched_share"] = share
    if keywords:  # library keywords the command line does not expose: the estimator itself
        model = registry.algorithm(algorithm)(seed=seed, **options, **keywords)
    else:
        model = registry.build(algorithm, options, seed=seed, progress=False)
    start = time.perf_counter()
    release = model.fit(data, workload)
    seconds = time.perf_counter() - start
    refinement = release.parameters.get("column_refinement", {})
    on_given = marginal_scores(workload, answer(workload, data), answer(workload, release.records))
    on_others = marginal_scores(others, answer(others, data), answer(others, release.records))
    return {
        "dataset": dataset, "algorithm": algorithm, "epsilon": epsilon, "seed": seed,
        "workload_seed": workload_seed, "keywords": json.dumps(keywords or {}),
        # the share the release spent (0 when nothing was measured or the algorithm
        # measures every attribute itself)
        "untouched_share": release.parameters.get("columns", {}).get("share", 0.0),
        "untouched": len(untouched_attributes(workload, data.onehot_groups)),
        "given_max": on_given["max"], "given_mean_tv": on_given["mean_tv"],
        "other_max": on_others["max"], "other_mean_tv": on_others["mean_tv"],
        "ratio": on_others["max"] / on_given["max"],
        "one_way_max_tv": one_way_tv(data, release.records),
        "spent": release.ledger.spent, "seconds": seconds,
        # adaptive-projection's column refinement: the columns re-measured, its share of rho
        "refined": " ".join(refinement.get("columns", {})),
        "refined_share": refinement.get("spent", 0.0) / release.parameters.get("rho", 1.0),
    }  # fmt: skip


SUMMARY = ("given_max", "other_max", "ratio", "other_mean_tv", "one_way_max_tv")


def report(names: list[str]) -> None:
    """Per file, dataset and estimator keywords: runs, and mean [min-max] of each score."""
    print("| rows | data | runs (seed/workload seed) | " + " | ".join(SUMMARY) + " |")
    print("|---" * (len(SUMMARY) + 3) + "|")
    for name in names:
        with (RESULTS / f"{name}.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        groups: dict[tuple[str, str], list[dict[str, str]]] = {}
        for r in rows:
            groups.setdefault((r["dataset"], r.get("keywords") or "{}"), []).append(r)
        for (dataset, keywords), rs in sorted(groups.items()):
            runs = " ".join(f"{r['seed']}/{r.get('workload_seed', '1')}" for r in rs)
            cells = []
            for m in SUMMARY:
                v = [float(r[m]) for r in rs]
                cells.append(f"{np.mean(v):.4g} [{min(v):.4g}-{max(v):.4g}]")
            print(f"| {name} {keywords} | {dataset} | {runs} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["kdd99", "acs", "adult-pgm"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--workload-seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--untouched-share", type=float, default=None)
    parser.add_argument(
        "--algorithm",
        default="fem",
        help="fem (reweighted by MWEM) or any registered algorithm taking epsilon",
    )
    parser.add_argument("--keywords", default="", help="JSON estimator keywords (library only)")
    parser.add_argument("--out", default="untouched")
    parser.add_argument(
        "--report",
        nargs="+",
        metavar="CSV",
        help="print a markdown summary of these CSVs (names in docs/results/untouched) and exit",
    )
    args = parser.parse_args(argv)
    if args.report:
        report(args.report)
        return 0
    path = RESULTS / f"{args.out}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    # seeds outermost: a job cut short has every dataset once
    for seed, workload_seed in itertools.product(args.seeds, args.workload_seeds):
        for dataset in args.datasets:
            row = fit(
                dataset,
                seed,
                args.epsilon,
                args.untouched_share,
                args.algorithm,
                workload_seed,
                json.loads(args.keywords) if args.keywords else None,
            )
            new = not path.exists()
            with path.open("a", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in row.items()), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
