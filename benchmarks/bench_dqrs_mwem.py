"""DQRS against DualQuery at equal budget, and MWEM against DualQuery on 17 Adult attributes.

(a) ``dqrs``: Oracle-efficient Theorem 9 predicts that DQRS (Algorithm 4) beats DualQuery
    for the same budget. On Adult (n = 30,162) and KDD99 (n = 494,021), random 3-way
    marginals (seed 0), (epsilon, 0.001) under dpquery's default (tightest) accountant, both
    with the same ``s`` and step ``eta`` and ``T`` the largest that fits; ``eta`` over a grid
    (Theorem 9's regime is ``eta = alpha/4`` small; DualQuery's experiments used 0.4-2.0).
    Rows: max and mean error, ``T``, fresh samples drawn, runtime.
(b) ``mwem``: the DualQuery 2015 revision's Figure 5: Adult restricted to 17 attributes,
    10,000 queries, pure epsilon 1..5, DualQuery with eta 0.4 and
    (s, T) = (35, 47), (40, 62), (45, 71), (50, 78), (55, 83), MWEM with T = 15, with one
    replay pass per round and with 50 (``MWEM_PASSES``).
    The 17 attributes are those of the DualQuery authors' code (``src/adult.ml``,
    ``parsing_schema_reduced``, used by ``src/runmw.ml``): age in 11 equal-width buckets of
    [0, 100], workclass codes 0..7 in 3 buckets, fnlwgt in 3 buckets of [0, 1.6e6], one-hot:
    17 bits. As in their MWEM (``usize = 2^db_bin_att``) the 17 bits are treated as free
    binary attributes, so MWEM's domain is the 2^17 = 131,072-cell cube and the queries are
    random 3-literal conjunctions over the 17 bits (``random_marginal_queries`` on
    ``Domain.binary(17)``); a second MWEM series uses the one-hot domain (11 x 3 x 3 = 99 cells).
    DualQuery's (s, T) are run as given and the pure epsilon they actually cost
    (Theorem 4.2, ``eta T (T-1) s / n``) is reported next to the nominal one.

Run: ``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_dqrs_mwem.py
[--quick] [--only dqrs mwem] [--runs N]``; ``DPQUERY_BENCH_QUICK=1`` selects quick mode when
run by ``benchmarks/run.py``. CSV go to ``docs/results/dqrs_mwem/``, PNG to ``docs/figures/``.
"""

import argparse
import gzip
import itertools
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.algorithms.baselines import UniformDistribution, ZerosDataset
from dpquery.algorithms.game.dqrs import DQRS
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.mwem import MWEM
from dpquery.data.binary import BinaryData, pack_columns
from dpquery.data.domain import Categorical, Domain
from dpquery.privacy.dualquery import dualquery_pure_epsilon
from dpquery.queries import Workload, answer, random_marginal_queries
from tables import errors, print_table, real_data, timed, write_csv

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "dqrs_mwem"
FIGURES = ROOT / "docs" / "figures"
DELTA = 0.001
FIG5_PAIRS = {1.0: (35, 47), 2.0: (40, 62), 3.0: (45, 71), 4.0: (50, 78), 5.0: (55, 83)}
# MWEM's replays of all measurements per round: 1 (one pass, the default) and 50 (Hardt et
# al. Section 3.3's replay iterated; free post-processing of the measurements)
MWEM_PASSES = (1, 50)


@cache
def problem(name: str, queries: int) -> tuple[BinaryData, Workload, np.ndarray]:
    data = real_data(name)
    assert data.domain is not None
    workload = random_marginal_queries(data.domain, 3, queries, 0)
    return data, workload, answer(workload, data)


# ----------------------------------------------------------------------------- (a) DQRS


def dqrs_rows(quick: bool, runs: int | None, points: list[str] | None = None) -> list[dict]:
    """``points``: ``dataset:epsilon:eta,eta,...`` entries replacing the grid."""
    # Quick mode is sized for ~15 minutes on 2 cores: the heuristic oracle costs ~0.1-0.3 s
    # per round and T reaches the thousands on KDD99 at small eta.
    queries = 10_000 if quick else 100_000
    grid = (
        {"adult": ((1.0,), (0.1, 0.4, 1.2)), "kdd99": ((0.25,), (0.4, 1.2))}
        if quick
        else {name: ((0.5, 1.0, 2.0), (0.05, 0.1, 0.2, 0.4, 1.2)) for name in ("adult", "kdd99")}
    )
    if points:
        grid = {}
        for point in points:
            name, eps, etas = point.split(":")
            grid[name] = ((float(eps),), tuple(float(e) for e in etas.split(",")))
    n_runs = runs if runs is not None else (1 if quick else 3)
    rows: list[dict] = []
    for name, (epsilons, etas) in grid.items():
        data, workload, true = problem(name, queries)
        for base, model in (("zeros", ZerosDataset()), ("uniform", UniformDistribution())):
            mx, mn = errors(true, model.fit(data, workload).answers)
            rows.append({"dataset": name, "algorithm": base, "max_error": mx, "mean_error": mn})
        for eps in epsilons:
            for eta in etas:
                for seed in range(n_runs):
                    for algo in ("DualQuery", "DQRS"):
                        rows.append(dqrs_run(name, data, workload, true, algo, eps, eta, seed))
                        show(rows[-1])
    return rows


def dqrs_run(name: str, data: BinaryData, workload: Workload, true: np.ndarray, algo: str,
             eps: float, eta: float, seed: int, s: int = 1000) -> dict:  # fmt: skip
    if algo == "DQRS":
        model: Any = DQRS(epsilon=eps, delta=DELTA, eta=eta, samples=s, seed=seed)
    else:
        model = DualQuery(epsilon=eps, delta=DELTA, eta=eta, samples=s, seed=seed,
                          progress=False)  # fmt: skip
    release, wall = timed(lambda: model.fit(data, workload, true))
    mx, mn = errors(true, answer(workload, release.records))
    T = release.parameters["T"]
    fresh = release.parameters.get("fresh_samples", s * (T - 1))  # DualQuery: s per paid round
    return {"dataset": name, "algorithm": algo, "epsilon": eps, "delta": DELTA, "eta": eta,
            "s": s, "run": seed, "n": data.n, "queries": len(workload), "T": T,
            "fresh_samples": fresh, "spent": release.ledger.spent, "max_error": mx,
            "mean_error": mn, "fit_s": release.timings["total_s"], "wall_s": wall}  # fmt: skip


# ----------------------------------------------------------------------------- (b) MWEM


def adult17_table() -> np.ndarray:
    """The 17 one-hot bits of the DualQuery authors' reduced Adult (see module docstring),
    one row per record of ``adult/dualquery_adult.clean.gz`` (30,162 rows)."""
    path = Path(os.environ["DPQUERY_DATA_DIR"]) / "adult" / "dualquery_adult.clean.gz"
    with gzip.open(path, "rt") as fh:
        raw = np.loadtxt(fh, delimiter=",", dtype=np.int64)
    age, workclass, fnlwgt = raw[:, 0], raw[:, 1], raw[:, 2]

    def bucket(v: np.ndarray, hi: int, k: int) -> np.ndarray:
        # Attribute.normalize_int: int(v / ((max - min) / k)), and max itself -> k - 1
        return np.where(v == hi, k - 1, (v / (hi / k)).astype(np.int64))

    codes = [bucket(age, 100, 11), bucket(workclass, 7, 3), bucket(fnlwgt, 1_600_000, 3)]
    rows = np.zeros((raw.shape[0], 17), dtype=np.uint8)
    offset = 0
    for code, k in zip(codes, (11, 3, 3), strict=True):
        rows[np.arange(raw.shape[0]), offset + code] = 1
        offset += k
    return rows


@cache
def adult17(onehot: bool) -> BinaryData:
    rows = adult17_table()
    if onehot:
        domain = Domain((Categorical("age", tuple(range(11))),
                         Categorical("workclass", tuple(range(3))),
                         Categorical("fnlwgt", tuple(range(3)))))  # fmt: skip
        return BinaryData(pack_columns(rows), rows.shape[0], domain.onehot_groups, domain)
    domain = Domain.binary(17)
    return BinaryData(pack_columns(rows), rows.shape[0], np.zeros((0, 2), np.int64), domain)


def mwem_rows(quick: bool, runs: int | None) -> list[dict]:
    n_runs = runs if runs is not None else (2 if quick else 5)
    cube = adult17(False)
    workload = random_marginal_queries(Domain.binary(17), 3, 10_000, 0)
    true = answer(workload, cube)
    onehot = adult17(True)
    rows: list[dict] = []
    for base, model in (("zeros", ZerosDataset()), ("uniform", UniformDistribution())):
        mx, mn = errors(true, model.fit(cube, workload).answers)
        rows.append({"dataset": "adult-17", "algorithm": base, "max_error": mx, "mean_error": mn})
    for eps, (s, T) in FIG5_PAIRS.items():
        for seed in range(n_runs):
            dq = DualQuery(eta=0.4, T=T, samples=s, seed=seed, progress=False)
            rel, wall = timed(lambda dq=dq: dq.fit(cube, workload, true))
            actual = dualquery_pure_epsilon(eta=0.4, T=T, s=s, n=cube.n)
            rows.append(fig5_row("DualQuery", eps, seed, rel, workload, true, wall,
                                 eta=0.4, s=s, T=T, epsilon_actual=actual))  # fmt: skip
            show(rows[-1])
            for (label, data, cells), passes in itertools.product(
                (("MWEM (2^17 cube)", cube, 2**17), ("MWEM (one-hot, 99 cells)", onehot, 99)),
                MWEM_PASSES,
            ):
                mw = MWEM(epsilon=eps, delta=0.0, T=15, passes=passes, seed=seed)
                rel, wall = timed(lambda mw=mw, data=data: mw.fit(data, workload, true))
                name = label if passes == 1 else f"{label[:-1]}, {passes} passes)"
                rows.append(fig5_row(name, eps, seed, rel, workload, true, wall, T=15,
                                     cells=cells, epsilon_actual=rel.ledger.spent))  # fmt: skip
                show(rows[-1])
    return rows


def fig5_row(algo: str, eps: float, seed: int, release: Any, workload: Workload,
             true: np.ndarray, wall: float, **extra: Any) -> dict:  # fmt: skip
    mx, mn = errors(true, answer(workload, release.records))
    return {"dataset": "adult-17", "algorithm": algo, "epsilon": eps, "run": seed,
            "n": release.parameters["n"], "queries": len(workload), **extra,
            "max_error": mx, "mean_error": mn, "wall_s": wall}  # fmt: skip


# ----------------------------------------------------------------------------- output


def show(row: dict) -> None:
    print(f"  {row['dataset']:<9} {row['algorithm']:<26} eps={row.get('epsilon', '-')!s:<4} "
          f"eta={row.get('eta', '-')!s:<5} T={row.get('T', '-')!s:<5} "
          f"max {row['max_error']:.4f} mean {row['mean_error']:.5f} "
          f"{row.get('wall_s', 0.0):6.1f} s", flush=True)  # fmt: skip


def summarise(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    out = []
    for group in groups.values():
        merged = dict(group[0])
        for key, value in group[0].items():
            if isinstance(value, float | int) and key not in keys and key != "run":
                merged[key] = float(np.mean([g[key] for g in group]))
        if "run" in merged:
            merged["max_error_sd"] = float(np.std([g["max_error"] for g in group]))
            merged["runs"] = len(group)
            merged.pop("run")
        out.append(merged)
    return out


def plot_dqrs(summary: list[dict]) -> Path:
    import matplotlib.pyplot as plt

    datasets = sorted({r["dataset"] for r in summary})
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.6))
    for ax, name in zip(np.atleast_1d(axes), datasets, strict=True):
        for algo, style in (("DualQuery", "o-"), ("DQRS", "s-")):
            for eps in sorted({r["epsilon"] for r in summary if r.get("epsilon")}):
                pts = sorted((r["eta"], r["max_error"]) for r in summary if r["dataset"] == name
                             and r["algorithm"] == algo and r.get("epsilon") == eps)  # fmt: skip
                if pts:
                    xs, ys = zip(*pts, strict=True)
                    ax.plot(xs, ys, style, ms=4, label=f"{algo}, eps {eps:g}")
        for base, ls in (("zeros", ":"), ("uniform", "--")):
            ys = [
                r["max_error"] for r in summary if r["dataset"] == name and r["algorithm"] == base
            ]
            if ys:
                ax.axhline(ys[0], color="0.5", ls=ls, lw=1, label=base)
        ax.set(title=f"{name} (delta 0.001, s 1000)", xlabel="eta", ylabel="max error",
               xscale="log", yscale="log")  # fmt: skip
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return save(fig, "dqrs_vs_dualquery")


def plot_mwem(summary: list[dict]) -> Path:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, metric in zip(axes, ("mean_error", "max_error"), strict=True):
        for algo in sorted({r["algorithm"] for r in summary if r.get("epsilon")}):
            pts = sorted((r["epsilon"], r[metric]) for r in summary if r["algorithm"] == algo)
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, "o-", ms=4, label=algo)
        for base, ls in (("zeros", ":"), ("uniform", "--")):
            ys = [r[metric] for r in summary if r["algorithm"] == base]
            if ys:
                ax.axhline(ys[0], color="0.5", ls=ls, lw=1, label=base)
        ax.set(xlabel="epsilon (pure)", ylabel=metric.replace("_", " "), yscale="log")
    axes[0].legend(fontsize=7)
    axes[0].set_title("Adult, 17 attributes, 10,000 queries")
    return save(fig, "mwem_vs_dualquery_fig5")


def save(fig: Any, name: str) -> Path:
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer points and runs")
    parser.add_argument("--runs", type=int, default=None, help="runs per point (override)")
    parser.add_argument("--only", nargs="*", default=["dqrs", "mwem"])
    parser.add_argument(
        "--points",
        nargs="*",
        metavar="DATASET:EPS:ETA,ETA",
        help="DQRS vs DualQuery at these points instead of the grid",
    )
    parser.add_argument("--out", help="suffix of the DQRS CSV files (default: the mode)")
    args = parser.parse_args([] if argv is None else argv)
    os.environ.setdefault("DPQUERY_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK", "") not in ("", "0")
    print(f"DQRS / MWEM benchmarks ({'quick' if quick else 'full'} mode)", flush=True)
    suffix = "_quick" if quick else ""
    if "mwem" in args.only:
        print("\n## (b) MWEM vs DualQuery, Adult 17 attributes", flush=True)
        rows, seconds = timed(lambda: mwem_rows(quick, args.runs))
        summary = summarise(rows, ("dataset", "algorithm", "epsilon"))
        write_csv(rows, RESULTS, f"mwem_fig5_runs{suffix}")
        write_csv(summary, RESULTS, f"mwem_fig5{suffix}")
        print_table(summary, ["algorithm", "epsilon", "epsilon_actual", "s", "T", "runs",
                              "max_error", "mean_error", "wall_s"])  # fmt: skip
        print(f"plot: {plot_mwem(summary).relative_to(ROOT)}  ({seconds:.0f} s)", flush=True)
    if "dqrs" in args.only:
        print("\n## (a) DQRS vs DualQuery at equal budget", flush=True)
        rows, seconds = timed(lambda: dqrs_rows(quick, args.runs, args.points))
        summary = summarise(rows, ("dataset", "algorithm", "epsilon", "eta"))
        out = f"_{args.out}" if args.out else suffix
        write_csv(rows, RESULTS, f"dqrs_vs_dualquery_runs{out}")
        write_csv(summary, RESULTS, f"dqrs_vs_dualquery{out}")
        print_table(summary, ["dataset", "algorithm", "epsilon", "eta", "T", "fresh_samples",
                              "runs", "max_error", "mean_error", "fit_s"])  # fmt: skip
        if not args.points:  # the figure shows the whole grid
            print(f"plot: {plot_dqrs(summary).relative_to(ROOT)}", flush=True)
        print(f"({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
