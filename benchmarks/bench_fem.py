"""FEM on the Oracle-efficient paper's Figure 1 protocol (Vietri et al., Section 6).

adult-pgm (48,842 x 14), 64 random 3-way marginals (all cells, workload seed 0, marginals of
at most n cells: ``random_marginal_cells``), epsilon in {0.1, 0.15, 0.2, 0.25, 0.5, 1},
delta = 1/n^2, max error over the workload. Two settings:

* ``default``: dpquery's fixed default (``FEM(epsilon=...)``, no per-epsilon tuning);
* ``authors``: the authors' tuned Adult 3-way values (c, noise_multiple, s) =
  (0.008, 0.16, 50) with their accounting (zCDP at epsilon_0^2/2, Theorem 8).

Published anchors (FEM repository, max error, 64 marginals, Adult 3-way) are in ``ANCHORS``.
``grid`` is the small grid that chose the default (``--grid``; see docs/fem.md).

Run: ``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_fem.py [--quick]
[--runs N] [--grid]``; ``DPQUERY_BENCH_QUICK=1`` selects quick mode (epsilon 0.1, 0.25, 1;
one run). CSV under ``docs/results/fem/``, PNG ``docs/figures/fem_fig1_epsilon.png``.
"""

import argparse
import csv
import itertools
import os
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.algorithms.game.fem import FEM
from dpquery.data.binary import BinaryData
from dpquery.queries import Workload, answer, random_marginal_cells
from tables import write_csv

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "fem"
FIGURES = ROOT / "docs" / "figures"
EPSILONS = (0.1, 0.15, 0.2, 0.25, 0.5, 1.0)
QUICK_EPSILONS = (0.1, 0.25, 1.0)
ANCHORS = {0.1: 0.172, 0.15: 0.133, 0.2: 0.113, 0.25: 0.106, 0.5: 0.078, 1.0: 0.076}
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "authors": {"preset": "authors-adult-3way", "accounting": "zcdp"},
}
GRID_EPSILONS = (0.1, 0.25)
GRID_C = (0.016,)
GRID_NOISE = (0.08, 0.16, 0.32, 0.64)


@cache
def problem(
    dataset: str = "adult-pgm", k: int = 3, m: int = 64
) -> tuple[BinaryData, Workload, np.ndarray]:
    """The Figure 1 protocol's instance: ``m`` random ``k``-way marginals of ``dataset``, all
    cells, workload seed 0, marginals of at most n cells (shared with bench_family.py)."""
    data = datasets.load(dataset)
    workload = random_marginal_cells(data.domain, k, m, data.n, seed=0)
    return data, workload, answer(workload, data)


def measure(model: Any, dataset: str = "adult-pgm", k: int = 3, m: int = 64) -> dict[str, Any]:
    """Fit ``model`` on the instance; max and mean error over the workload, wall time, and
    the release's parameters (shared with bench_family.py)."""
    data, workload, true = problem(dataset, k, m)
    start = time.perf_counter()
    release = model.fit(data, workload, true)
    seconds = time.perf_counter() - start
    err = np.abs(answer(workload, release.records) - true)
    p = release.parameters
    p = {**p["base"], "mwem_T": p["mwem"]["T"]} if "base" in p else p  # Reweighted: FEM's
    return {
        "T": p["T"], "epsilon0": p.get("epsilon0", ""), "eta": p["eta"], "s": p["s"],
        "accounting": p.get("accounting", ""), "spent": release.ledger.spent,
        "max_error": float(err.max()), "mean_error": float(err.mean()), "seconds": seconds,
    }  # fmt: skip


def run_once(epsilon: float, seed: int, **options: Any) -> dict[str, Any]:
    model = FEM(epsilon=epsilon, seed=seed, **options)
    return {"epsilon": epsilon, "seed": seed, **measure(model)}


def figure1(
    epsilons: tuple[float, ...], runs: int, suffix: str = "", settings: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    chosen = {k: v for k, v in SETTINGS.items() if not settings or k in settings}
    rows = []
    for (name, options), eps, seed in itertools.product(chosen.items(), epsilons, range(runs)):
        row = {"setting": name, **run_once(eps, seed, **options), "anchor": ANCHORS[eps]}
        rows.append(row)
        print(f"{name:8s} eps {eps:5.2f} seed {seed}  T {row['T']:5d}  max error "
              f"{row['max_error']:.4f} (anchor {ANCHORS[eps]:.3f})  {row['seconds']:6.1f} s",
              flush=True)  # fmt: skip
        write_csv(rows, RESULTS, f"figure1{suffix}")
    if settings:
        return rows  # one setting of a split run: plot when merged (--plot)
    plot(rows, FIGURES / f"fem_fig1_epsilon{suffix}.png")
    return rows


def grid(runs: int = 1) -> list[dict[str, Any]]:
    """The grid that chose the default: bounded-range accounting, s = 50, epsilon_0 = c
    sqrt(epsilon), eta = noise_multiple sqrt(T)."""
    rows = []
    for c, m, eps, seed in itertools.product(GRID_C, GRID_NOISE, GRID_EPSILONS, range(runs)):
        row = {"c": c, "noise_multiple": m, **run_once(eps, 100 + seed, c=c, noise_multiple=m)}
        rows.append(row)
        print(f"c {c} m {m} eps {eps} T {row['T']} max error {row['max_error']:.4f} "
              f"{row['seconds']:.1f} s", flush=True)  # fmt: skip
        write_csv(rows, RESULTS, "grid")
    return rows


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    eps = sorted(ANCHORS)
    ax.plot(eps, [ANCHORS[e] for e in eps], "k--o", label="published FEM (tuned)")
    for name in SETTINGS:
        mine = [r for r in rows if r["setting"] == name]
        xs = sorted({r["epsilon"] for r in mine})
        ys = [np.mean([r["max_error"] for r in mine if r["epsilon"] == x]) for x in xs]
        ax.plot(xs, ys, "-o", label=f"dpquery FEM, {name}")
    ax.set_xlabel("epsilon (delta = 1/n^2)")
    ax.set_ylabel("max error, 64 3-way marginals")
    ax.set_title("FEM on adult-pgm (Oracle-efficient Figure 1a protocol)")
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--grid", action="store_true", help="run the default-choosing grid")
    parser.add_argument(
        "--setting",
        choices=tuple(SETTINGS),
        action="append",
        default=[],
        help="run only this setting (CSV suffixed with its name)",
    )
    parser.add_argument("--plot", nargs="+", type=Path, help="merge CSVs and plot them")
    # parse_known_args: benchmarks/run.py leaves its own arguments (e.g. "fem") in sys.argv
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.grid:
        grid(args.runs or 1)
        return
    if args.plot:
        rows = [row for path in args.plot for row in csv.DictReader(path.open())]
        for r in rows:
            r["epsilon"], r["max_error"] = float(r["epsilon"]), float(r["max_error"])
        plot(rows, FIGURES / "fem_fig1_epsilon.png")
        return
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK") == "1"
    runs = args.runs or (1 if quick else 5)
    suffix = ("_quick" if quick else "") + "".join(f"_{name}" for name in args.setting)
    figure1(QUICK_EPSILONS if quick else EPSILONS, runs, suffix, tuple(args.setting))


if __name__ == "__main__":
    main()
