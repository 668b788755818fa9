"""``dpquery demo``: the main job on real data, end to end (what ``make demo`` runs).

Encodes Adult over its public domain, releases a DualQuery synthetic dataset at
(1, 1/n^2)-DP (delta far below 1/n) for random 3-way marginal queries, and prints its errors
beside the baselines, labelled NOT PRIVATE (they are computed on the private data). The seed
is fixed so the demo is repeatable; real releases take no seed.
"""

from __future__ import annotations

import argparse
import time

from dpquery import datasets
from dpquery.algorithms.dualquery import DualQuery
from dpquery.data.decode import decode
from dpquery.data.encode import encode
from dpquery.evaluation.release_report import release_report
from dpquery.privacy.delta import check_delta, default_delta
from dpquery.privacy.ledger import Guarantee
from dpquery.queries import answer, random_marginal_queries


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="release a private synthetic Adult and compare baselines")
    p.add_argument("--dataset", default="adult", help="built-in dataset (default adult)")
    p.add_argument("--k", type=int, default=3, help="marginal order (default 3)")
    p.add_argument("--queries", type=int, default=100_000, help="workload size (default 1e5)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    p.add_argument("--delta", type=float, help="privacy delta (default 1/n^2)")
    p.add_argument("--eta", type=float, default=2.0, help="DualQuery step (default 2.0)")
    p.add_argument("--samples", type=int, default=1000, help="samples per round (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed (demo only: fixed for research)")
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    table, domain = datasets.load_table(args.dataset)
    data = encode(table, domain)
    print(f"== {args.dataset}: {data.n:,} records -> {data.d} bits "
          f"({time.perf_counter() - start:.2f} s to read and encode)")  # fmt: skip
    print(domain.describe())
    if args.delta is None:
        args.delta = default_delta(data.n)
    check_delta(args.delta, data.n)  # a Python warning on stderr when delta >= 1/n
    workload = random_marginal_queries(domain, args.k, args.queries, seed=args.seed)
    start = time.perf_counter()
    true = answer(workload, data)
    print(f"\n== workload: {len(workload):,} random sensible {args.k}-way marginal queries "
          f"(seed {args.seed}); true answers in {time.perf_counter() - start:.2f} s")  # fmt: skip
    model = DualQuery(
        epsilon=args.epsilon, delta=args.delta, eta=args.eta, samples=args.samples,
        seed=args.seed, progress=False,
    )  # fmt: skip
    release = model.fit(data, workload, true_answers=true)
    p = release.parameters
    print(f"\n== DualQuery at (epsilon={args.epsilon:g}, delta={args.delta:g}): eta={p['eta']:g}, "
          f"s={p['s']}, T={p['T']} (largest T the budget allows); "
          f"{release.timings['total_s']:.1f} s")  # fmt: skip
    for g in release.privacy()["guarantees"]:
        print(f"   {g['measure']:<7}{Guarantee.from_dict(g).describe()}")
    report = release_report(release, data, workload, true_answers=true, seed=args.seed)
    ev = report["evaluation"]
    print(f"\n{ev['label']}:")
    print(f"{'release':<22}{'max error':>12}{'mean error':>12}  privacy")
    rows = [
        ("DualQuery synthetic", ev["errors"]["workload"], f"({args.epsilon:g}, {args.delta:g})")
    ]
    rows += [
        ("zeros", ev["baselines"]["zeros"], "none (reads no data)"),
        ("uniform", ev["baselines"]["uniform"], "none (reads no data)"),
        ("laplace per query", ev["baselines"]["laplace"], f"epsilon = {args.epsilon:g}"),
    ]
    for name, e, privacy in rows:
        print(f"{name:<22}{e['max_error']:>12.4f}{e['mean_error']:>12.4f}  {privacy}")
    synthetic, _ = decode(release.records, domain, seed=args.seed)
    print(f"\n== the first synthetic records (of {len(synthetic)}), in Adult's own columns:")
    print(synthetic.head(5).to_string(index=False))
    print("\n(errors use the private data: for evaluation only; the records are the release)")
    return 0
