"""``dpquery demo``: the main job on real data, end to end (what ``make demo`` runs)."""

from __future__ import annotations

import argparse
import time

from dpquery import datasets
from dpquery.algorithms.baselines import LaplaceNoise, UniformDistribution, ZerosDataset
from dpquery.data.encode import encode
from dpquery.evaluation import error_report
from dpquery.queries import answer, random_marginal_queries


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="encode a real dataset and compare the baselines")
    p.add_argument("--dataset", default="adult", help="built-in dataset (default adult)")
    p.add_argument("--k", type=int, default=3, help="marginal order (default 3)")
    p.add_argument("--queries", type=int, default=100_000, help="workload size (default 1e5)")
    p.add_argument("--epsilon", type=float, default=1.0, help="Laplace baseline's epsilon")
    p.add_argument("--seed", type=int, default=0, help="seed (demo only: fixed for research)")
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    table, domain = datasets.load_table(args.dataset)
    data = encode(table, domain)
    print(f"== {args.dataset}: {data.n:,} records -> {data.d} bits "
          f"({time.perf_counter() - start:.2f} s to read and encode)")  # fmt: skip
    print(domain.describe())
    workload = random_marginal_queries(domain, args.k, args.queries, seed=args.seed)
    start = time.perf_counter()
    true = answer(workload, data)
    print(f"\n== workload: {len(workload):,} random sensible {args.k}-way marginal queries "
          f"(seed {args.seed}); true answers in {time.perf_counter() - start:.2f} s")  # fmt: skip
    rows = [
        ("zeros", ZerosDataset().fit(data, workload).answers, "none (reads no data)"),
        ("uniform", UniformDistribution().fit(data, workload).answers, "none (reads no data)"),
        (
            "laplace per query",
            LaplaceNoise(args.epsilon, seed=args.seed).fit(data, workload).answers,
            f"epsilon = {args.epsilon:g}",
        ),
    ]
    print(f"\n{'release':<20}{'max error':>12}{'mean error':>12}  privacy")
    for name, released, privacy in rows:
        r = error_report(true, released, workload)
        print(f"{name:<20}{r.max_error:>12.4f}{r.mean_error:>12.4f}  {privacy}")
    return 0
