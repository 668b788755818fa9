"""The oracle-efficient family on the Oracle-efficient paper's Section 6 protocols.

FEM, sepFEM, DQRS and DualQuery (MWEM where the domain allows: adult-pgm and the ACS excerpt
are far beyond its explicit-distribution limit, ``--mwem-check`` prints the refusal) on:

* Figure 1: ``m`` = 64 random ``k``-way marginals (all cells, workload seed 0, marginals of
  at most n cells; ``bench_fem.problem``), epsilon in {0.1, 0.15, 0.2, 0.25, 0.5, 1},
  delta = 1/n^2, max error over the workload; adult-pgm (``--dataset adult-pgm``) or the
  ACS national excerpt (``--dataset acs``), k = 3 or 5;
* Figure 2: epsilon 0.1, 32 to 512 random 3-way marginals (``--part fig2``).

``--settings default`` runs each algorithm's fixed library default (one setting for every
epsilon); ``--settings grid`` runs the small per-algorithm grid ``GRIDS`` (``--settings
'{"noise_multiple": 0.04}'`` runs one grid point alone) (best-of-grid is
chosen per epsilon by ``--report``, over the grid and the default). Every fit is one CSV row
(``docs/results/family/<out>.csv``, written after each run so a long job can be read while it
runs); ``--report`` merges them into ``summary.csv`` (mean, sample std over runs, runtime)
and ``best_of_grid.csv``, prints the markdown tables and draws ``docs/figures/family_*.png``.

Run (``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_family.py ...``):

    --part fig1 --settings default --runs 3 --out fig1_adult-pgm_k3_default
    --part fig1 --settings grid --runs 1 --out fig1_adult-pgm_k3_grid
    --part fig2 --runs 1 --out fig2_adult-pgm
    --part fig1 --dataset acs --runs 1 --out fig1_acs_k3_default
    --part fig1 --k 5 --epsilons 0.1 0.25 1 --runs 1 --out fig1_adult-pgm_k5_default
    --report

With no ``--part`` (``benchmarks/run.py family``) it runs Figure 1 on adult-pgm with the
defaults: 5 runs, or in quick mode (``--quick``, ``DPQUERY_BENCH_QUICK=1``) one run at
epsilon 0.1, 0.25 and 1.
"""

import argparse
import csv
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench_fem import ANCHORS, EPSILONS, QUICK_EPSILONS, measure, problem
from dpquery.algorithms.game.dqrs import DQRS
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.errors import DPQueryError
from tables import write_csv

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "family"
FIGURES = ROOT / "docs" / "figures"
HDMM = {0.1: 0.369, 0.25: 0.148, 0.5: 0.074, 1.0: 0.037}  # same protocol, FEM repository


def reweighted_fem(*, base: dict[str, Any] | None = None, **options: Any) -> Reweighted:
    """FEM then MWEM over its records; ``base`` holds FEM's own options."""
    return Reweighted(FEM(progress=False, **(base or {})), **options)


ALGORITHMS: dict[str, Any] = {"FEM": FEM, "sepFEM": SepFEM, "DQRS": DQRS, "DualQuery": DualQuery,
                              "FEM+MWEM": reweighted_fem}  # fmt: skip
QUIET = {"FEM": {"progress": False}, "sepFEM": {"progress": False},
         "DualQuery": {"progress": False}, "DQRS": {}, "FEM+MWEM": {}}  # fmt: skip
# The small grids behind best-of-grid (the library default is always a candidate too).
# FEM: epsilon_0 = c sqrt(epsilon), eta = noise_multiple sqrt(T), s = 50, bounded range
# unless stated (default c = 0.008, noise_multiple = 0.16; c = 0.016 was the first default);
# sepFEM: the same, Laplace scale noise_multiple sqrt(T) (default c = 0.008,
# noise_multiple = 0.08); DualQuery: step eta (default 1.2, s = 1000); DQRS: eta (default
# 0.1, s = 1000); FEM+MWEM: the reweighting's budget share, rounds and replay passes, and
# FEM's options under "base" (docs/reweight.md).
GRIDS: dict[str, list[dict[str, Any]]] = {
    "FEM": [
        {"c": 0.016},
        {"c": 0.024, "noise_multiple": 0.16},
        {"preset": "authors-adult-3way", "accounting": "zcdp"},
    ],
    "sepFEM": [
        {"c": 0.016, "noise_multiple": 0.16},
        {"c": 0.016, "noise_multiple": 0.08},
        {"c": 0.016, "noise_multiple": 0.04},
    ],
    "DualQuery": [{"eta": 0.4}, {"eta": 0.8}, {"eta": 2.0}, {"eta": 4.0}],
    "DQRS": [{"eta": 0.2}],
    "FEM+MWEM": [
        {"T": 8},
        {"T": 20},
        {"T": 40},
        {"T": 80},
        {"T": 40, "selection_share": 0.5, "passes": 1},
        {"T": 40, "selection_share": 0.5, "passes": 10},
        {"T": 80, "selection_share": 0.9, "passes": 1},
        {"base": {"c": 0.016, "samples": 200}, "T": 40, "selection_share": 0.5, "passes": 1},
    ],
}
MARGINALS = (32, 64, 128, 256, 512)


def label(options: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in options.items()) or "default"


def fit_row(algorithm: str, options: dict[str, Any], dataset: str, k: int, m: int,
            epsilon: float, seed: int) -> dict[str, Any]:  # fmt: skip
    n = problem(dataset, k, m)[0].n
    model = ALGORITHMS[algorithm](
        epsilon=epsilon, delta=1 / n**2, seed=seed, **QUIET[algorithm], **options
    )
    return {"dataset": dataset, "k": k, "marginals": m, "algorithm": algorithm,
            "setting": label(options), "epsilon": epsilon, "seed": seed,
            **measure(model, dataset, k, m)}  # fmt: skip


def sweep(out: str, algorithms: list[str], settings: str, dataset: str, k: int,
          marginals: tuple[int, ...], epsilons: tuple[float, ...],
          runs: int, first_seed: int = 0) -> list[dict]:  # fmt: skip
    """Seeds outermost, so that a job cut short has every point at least once."""
    rows: list[dict[str, Any]] = []
    for seed, algorithm in itertools.product(range(first_seed, first_seed + runs), algorithms):
        options = {"default": [{}], "grid": GRIDS[algorithm]}.get(settings)
        options = options if options is not None else [json.loads(settings)]
        for opts, m, eps in itertools.product(options, marginals, epsilons):
            row = fit_row(algorithm, opts, dataset, k, m, eps, seed)
            rows.append(row)
            print(f"{dataset} k{k} m{m} {algorithm:9s} {row['setting']:38s} eps {eps:<5} "
                  f"seed {seed} T {row['T']:5d} max {row['max_error']:.4f} "
                  f"mean {row['mean_error']:.2e} {row['seconds']:7.1f} s", flush=True)  # fmt: skip
            write_csv(rows, RESULTS, out)
    return rows


def mwem_check() -> None:
    for dataset in ("adult-pgm", "acs"):
        data, workload, true = problem(dataset, 3, 64)
        try:
            MWEM(epsilon=1.0, delta=1 / data.n**2, seed=0).fit(data, workload, true)
            print(f"{dataset}: MWEM ran")
        except DPQueryError as err:
            print(f"{dataset}: {err}")


# ----------------------------------------------------------------------------- report


def load_rows() -> list[dict[str, Any]]:
    rows = []
    for path in sorted(RESULTS.glob("fig*.csv")):
        for r in csv.DictReader(path.open()):
            for key in ("k", "marginals", "seed", "T"):
                r[key] = int(r[key])
            for key in ("epsilon", "max_error", "mean_error", "seconds", "spent"):
                r[key] = float(r[key])
            rows.append(r)
    # A point run by two jobs with the same seed (e.g. Figure 2's 64 marginals and Figure 1)
    # is one run: seeds reproduce fits, so keep the first copy.
    seen: dict[tuple, dict[str, Any]] = {}
    keys = ("dataset", "k", "marginals", "algorithm", "setting", "epsilon", "seed")
    for r in rows:
        seen.setdefault(tuple(r[k] for k in keys), r)
    return list(seen.values())


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("dataset", "k", "marginals", "algorithm", "setting", "epsilon")
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for key, group in sorted(groups.items()):
        mx = np.array([g["max_error"] for g in group])
        out.append({**dict(zip(keys, key, strict=True)), "runs": len(group), "T": group[0]["T"],
                    "max_error": float(mx.mean()),
                    "max_error_std": float(mx.std(ddof=1)) if len(group) > 1 else float("nan"),
                    "max_error_min": float(mx.min()), "max_error_max": float(mx.max()),
                    "mean_error": float(np.mean([g["mean_error"] for g in group])),
                    "seconds": float(np.mean([g["seconds"] for g in group]))})  # fmt: skip
    return out


def best_of_grid(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    best: dict[tuple, dict[str, Any]] = {}
    for r in summary:
        key = (r["dataset"], r["k"], r["marginals"], r["algorithm"], r["epsilon"])
        if key not in best or r["max_error"] < best[key]["max_error"]:
            best[key] = r
    return [best[k] for k in sorted(best)]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "-" if np.isnan(v) else f"{v:.4f}"
    return str(v)


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _cell(r: dict[str, Any] | None, setting: bool = False) -> str:
    if r is None:
        return "-"
    sd = "" if np.isnan(r["max_error_std"]) else f" ± {r['max_error_std']:.4f}"
    extra = f" ({r['setting']})" if setting else ""
    return f"{r['max_error']:.4f}{sd} [{r['runs']}], {r['seconds']:.0f} s{extra}"


def pivot(summary: list[dict], best: list[dict], dataset: str, k: int) -> str:
    """Max error (mean ± sample std [runs], mean seconds per run) per epsilon: the fixed
    defaults, then best of grid; with the published anchors on adult-pgm 3-way."""
    anchors = dataset == "adult-pgm" and k == 3
    lines = []
    for title, rows, setting in (("default", summary, False), ("best of grid", best, True)):
        head = ["epsilon"] + (["FEM (paper)", "HDMM (paper)"] if anchors else [])
        head += [f"{a} {title}" for a in ALGORITHMS]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for eps in sorted({r["epsilon"] for r in rows if r["dataset"] == dataset
                           and r["k"] == k and r["marginals"] == 64}):  # fmt: skip
            cells = [f"{eps:g}"]
            if anchors:
                cells += [f"{ANCHORS[eps]:.3f}", f"{HDMM[eps]:.3f}" if eps in HDMM else "-"]
            for a in ALGORITHMS:
                match = [r for r in rows if r["dataset"] == dataset and r["k"] == k
                         and r["marginals"] == 64 and r["algorithm"] == a
                         and r["epsilon"] == eps
                         and (setting or r["setting"] == "default")]  # fmt: skip
                cells.append(_cell(match[0] if match else None, setting))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_epsilon(summary: list[dict], best: list[dict], dataset: str, k: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (title, rows) in zip(axes, (("fixed default", summary), ("best of grid", best)),
                                 strict=True):  # fmt: skip
        if dataset == "adult-pgm" and k == 3:
            eps = sorted(ANCHORS)
            ax.plot(eps, [ANCHORS[e] for e in eps], "k--o", ms=4, label="published FEM (tuned)")
            ax.plot(sorted(HDMM), [HDMM[e] for e in sorted(HDMM)], "k:s", ms=4,
                    label="published HDMM")  # fmt: skip
        for algorithm in ALGORITHMS:
            pts = sorted((r["epsilon"], r["max_error"], r["max_error_std"]) for r in rows
                         if r["dataset"] == dataset and r["k"] == k and r["marginals"] == 64
                         and r["algorithm"] == algorithm
                         and (title != "fixed default" or r["setting"] == "default"))  # fmt: skip
            if pts:
                xs, ys, sd = (np.array(v) for v in zip(*pts, strict=True))
                ax.errorbar(xs, ys, yerr=np.nan_to_num(sd), fmt="-o", ms=4, capsize=2,
                            label=algorithm)  # fmt: skip
        ax.set(title=f"{dataset}, 64 {k}-way marginals: {title}", xlabel="epsilon (delta 1/n^2)",
               ylabel="max error (mean ± std over runs)", yscale="log")  # fmt: skip
        ax.legend(fontsize=7)
    _save(fig, path)


def plot_marginals(summary: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for algorithm in ALGORITHMS:
        pts = sorted((r["marginals"], r["max_error"], r["max_error_std"]) for r in summary
                     if r["dataset"] == "adult-pgm" and r["k"] == 3 and r["epsilon"] == 0.1
                     and r["algorithm"] == algorithm and r["setting"] == "default")  # fmt: skip
        if pts:
            xs, ys, sd = (np.array(v) for v in zip(*pts, strict=True))
            ax.errorbar(xs, ys, yerr=np.nan_to_num(sd), fmt="-o", ms=4, capsize=2, label=algorithm)
    ax.set(title="adult-pgm, epsilon 0.1, 3-way marginals (fixed defaults)", xscale="log",
           xlabel="number of marginals", ylabel="max error")  # fmt: skip
    ax.set_xticks(MARGINALS, [str(m) for m in MARGINALS])
    ax.legend(fontsize=7)
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report() -> None:
    summary = summarise(load_rows())
    best = best_of_grid(summary)
    write_csv(summary, RESULTS, "summary")
    write_csv(best, RESULTS, "best_of_grid")
    cols = ["dataset", "k", "marginals", "algorithm", "setting", "epsilon", "T", "runs",
            "max_error", "max_error_std", "max_error_min", "max_error_max", "seconds"]  # fmt: skip
    print("## all settings\n" + table(summary, cols))
    print("\n## best of grid\n" + table(best, cols))
    for dataset, k in sorted({(r["dataset"], r["k"]) for r in summary}):
        print(f"\n## {dataset}, 64 {k}-way marginals\n" + pivot(summary, best, dataset, k))
        plot_epsilon(summary, best, dataset, k, FIGURES / f"family_fig1_{dataset}_k{k}.png")
    fig2 = [r for r in summary if r["epsilon"] == 0.1 and r["k"] == 3
            and r["dataset"] == "adult-pgm" and r["setting"] == "default"]  # fmt: skip
    lines = ["| marginals | " + " | ".join(ALGORITHMS) + " |", "|---|" + "---|" * len(ALGORITHMS)]
    for m in sorted({r["marginals"] for r in fig2}):
        cells = [
            [r for r in fig2 if r["marginals"] == m and r["algorithm"] == a] for a in ALGORITHMS
        ]
        lines.append(f"| {m} | " + " | ".join(_cell(c[0] if c else None) for c in cells) + " |")
    print("\n## Figure 2: adult-pgm, epsilon 0.1, 3-way, fixed defaults\n" + "\n".join(lines))
    plot_marginals(summary, FIGURES / "family_fig2_marginals.png")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("fig1", "fig2"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--settings", default="default",
                        help="default, grid, or one JSON setting")  # fmt: skip
    parser.add_argument("--algorithms", nargs="+", choices=tuple(ALGORITHMS),
                        default=list(ALGORITHMS))  # fmt: skip
    parser.add_argument("--dataset", default="adult-pgm")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--epsilons", nargs="+", type=float, default=None)
    parser.add_argument("--marginals", nargs="+", type=int, default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed..+runs-1")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--mwem-check", action="store_true")
    # parse_known_args: benchmarks/run.py leaves its own arguments in sys.argv
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.report:
        return report()
    if args.mwem_check:
        return mwem_check()
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK") == "1"
    part = args.part or "fig1"
    runs = args.runs or (1 if quick else 5)
    if part == "fig2":
        epsilons, marginals = tuple(args.epsilons or (0.1,)), tuple(args.marginals or MARGINALS)
    else:
        epsilons = tuple(args.epsilons or (QUICK_EPSILONS if quick else EPSILONS))
        marginals = tuple(args.marginals or (64,))
    name = args.settings if args.settings in ("default", "grid") else "custom"
    out = args.out or f"{part}_{args.dataset}_k{args.k}_{name}" + ("_quick" * quick)
    sweep(out, args.algorithms, args.settings, args.dataset, args.k, marginals, epsilons, runs,
          args.first_seed)  # fmt: skip


if __name__ == "__main__":
    main()
