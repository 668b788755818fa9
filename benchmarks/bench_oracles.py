"""Best-response oracles on instances shaped like a late DualQuery round.

Instances (DualQuery Section 6 / Figure 1 shapes): Adult (181 bits, 15 one-hot groups) and
KDD99 (396 bits, 41 groups) with 3-way marginal cells over their public domains; Netflix-like
(17,770 plain bits, 3-way positive conjunctions over power-law popular bits); 100,000 plain
bits with uniform 3-way conjunctions (Figure 4's biased-bits setting, Definition 5.1).

Sampling: s draws from the closed workload ``Q ∪ ¬Q`` with probability proportional to
``exp(+L_i)`` for query i and ``exp(-L_i)`` for its negation, ``L_i ~ Normal(0, 2)``: a
query and its negation carry opposite log-weights as under multiplicative weights
(``eta * sum_t (q(D) - q(x_t))``), so a sample rarely holds both, and the mass leans on the
badly answered side as in a late round. Duplicates become multiplicities (about 8% of
draws at s = 1000, 20% at s = 5000).

Every number printed is measured where it runs. Run:
``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_oracles.py``
(``--quick`` for a smaller run, ``--time-limit`` for the exact oracles).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator

import numpy as np

from dpquery.oracles import BestResponse, OracleResult, get_oracle, presolve
from dpquery.queries import Workload
from dpquery.queries.generators import random_marginal_queries

N_QUERIES = 100_000


def _skewed_sample(rng: np.random.Generator, q: int, s: int, scale: float = 2.0) -> np.ndarray:
    logits = rng.normal(0.0, scale, size=q)
    closed = np.concatenate([logits, -logits])
    p = np.exp(closed - closed.max())
    return rng.choice(2 * q, size=s, p=p / p.sum())


def _conjunctions(d: int, bits: np.ndarray) -> Workload:
    count, k = bits.shape
    return Workload(
        "conjunction", d, np.arange(0, count * k + 1, k), bits.ravel(), np.ones(bits.size, bool)
    )


def _distinct(rng: np.random.Generator, d: int, count: int, p: np.ndarray | None) -> np.ndarray:
    rows = rng.choice(d, size=(count, 3), p=p)
    bad = (rows[:, 0] == rows[:, 1]) | (rows[:, 1] == rows[:, 2]) | (rows[:, 0] == rows[:, 2])
    while bad.any():
        rows[bad] = rng.choice(d, size=(int(bad.sum()), 3), p=p)
        bad = (rows[:, 0] == rows[:, 1]) | (rows[:, 1] == rows[:, 2]) | (rows[:, 0] == rows[:, 2])
    return np.sort(rows, axis=1)


def workloads(seed: int = 0) -> Iterator[tuple[str, Workload, np.ndarray | None]]:
    """(name, workload of 100,000 3-way queries, one-hot groups or None)."""
    from dpquery import datasets

    rng = np.random.default_rng(seed)
    for name in ("adult", "kdd99"):
        domain = datasets.domain(name)
        yield name, random_marginal_queries(domain, 3, N_QUERIES, seed=rng), domain.onehot_groups
    d = 17_770
    popularity = 1.0 / np.arange(1, d + 1) ** 1.1  # power-law movie popularity
    yield (
        "netflix-like",
        _conjunctions(d, _distinct(rng, d, N_QUERIES, popularity / popularity.sum())),
        None,
    )
    d = 100_000
    yield "plain-100k", _conjunctions(d, _distinct(rng, d, N_QUERIES, None)), None


def _row(instance: str, s: int, problem: BestResponse, name: str, r: OracleResult) -> dict:
    return {
        "instance": instance, "s": s, "d": problem.d, "clauses": problem.n_clauses,
        "oracle": name, "seconds": r.seconds, "objective": r.objective, "bound": r.bound,
        "optimal": r.optimal, "timed_out": r.timed_out, "kept_bits": r.info["kept_bits"],
        "live_clauses": r.info["live_clauses"],
    }  # fmt: skip


def run(sizes: tuple[int, ...], time_limit: float, seed: int = 0) -> list[dict]:
    """Solve every instance with every oracle; returns one row per (instance, s, oracle)."""
    rows = []
    oracles = {
        "heuristic": get_oracle("heuristic"),
        "cpsat": get_oracle("cpsat", time_limit=time_limit),
        "highs": get_oracle("highs", time_limit=time_limit),
    }
    rng = np.random.default_rng(seed)
    for instance, workload, groups in workloads(seed):
        for s in sizes:
            sampled = _skewed_sample(rng, len(workload), s)
            problem = BestResponse.from_workload(workload, sampled, onehot_groups=groups)
            for name, oracle in oracles.items():
                rows.append(_row(instance, s, problem, name, oracle.solve(problem, seed=seed)))
    return rows


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _print(rows: list[dict]) -> None:
    head = (
        f"{'instance':<13}{'s':>5}{'d':>8}{'kept':>6}{'oracle':>11}{'seconds':>9}"
        f"{'objective':>11}{'bound':>10}{'opt':>5}{'t/o':>5}{'heur gap':>10}"
    )
    print(head)
    print("-" * len(head))
    best: dict[tuple[str, int], float] = {}
    for r in rows:  # the certified optimum, if some exact oracle proved one
        if r["optimal"]:
            best[(r["instance"], r["s"])] = r["objective"]
    for r in rows:
        bound = "-" if r["bound"] is None else f"{r['bound']:.1f}"
        gap = ""
        key = (r["instance"], r["s"])
        if r["oracle"] == "heuristic":
            gap = f"{best[key] - r['objective']:.1f}" if key in best else "uncert."
        print(
            f"{r['instance']:<13}{r['s']:>5}{r['d']:>8}{r['kept_bits']:>6}{r['oracle']:>11}"
            f"{r['seconds']:>9.3f}{r['objective']:>11.1f}{bound:>10}{_yes(r['optimal']):>5}"
            f"{_yes(r['timed_out']):>5}{gap:>10}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="s = 1000 only")
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args([] if argv is None else argv)
    os.environ.setdefault("DPQUERY_DATA_DIR", "../shared/data")
    sizes = (1000,) if args.quick else (1000, 5000)
    # Warm the numba caches so the first instance is not charged for compilation.
    warm = BestResponse(3, [0, 2], [0, 1], [True, False], [False], [True], [1.0])
    get_oracle("heuristic", presolve=False).solve(warm, seed=0)
    presolve(warm)
    started = time.perf_counter()
    rows = run(sizes, args.time_limit, args.seed)
    _print(rows)
    print(f"\ntotal {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
