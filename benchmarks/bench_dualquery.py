"""DualQuery, reproducing the paper's experiments (Gaboardi et al., Section 6 / 2015 Section 7).

* Targets: KDD99, 500,000 3-way marginals, eta 1.2, T 170, s 1750: the whole run,
  true answers included, under 120 s, mean error < 0.01, max error well below the zeros
  data set; biased bits with d = 512,000 (n = 20,000), 100,000 queries, eta 0.4, s 50,000,
  T from (1, 0.001): under 10 minutes in all (generation, true answers, run, evaluation).
* Figure 2: max error (mean over runs) against epsilon, delta 0.001, 500,000 3-way marginals,
  eta 2.0, s 1000 (Netflix-like: s 5000), on Adult, KDD99 and Netflix-like data. ``T`` is the
  largest that fits (epsilon, 0.001) under two accountants, both plotted: Theorem 4.3 as
  printed (what the paper says it used) and dpquery's default, the tightest proved.
* Figure 3: KDD99, 40,000 to 2,000,000 queries, eta 1.2, T 170, s 1750.
* Figure 4: biased bits (n = 20,000), d from 50 to 512,000, 100,000 queries, (1, 0.001),
  eta 0.4, s growing with d (the authors' schedule), both accountants.

Queries on plain bits (biased bits, Netflix-like) are those of the authors' code: three
distinct attributes, each literal positive or negative with probability 1/2
(``random_marginal_queries(Domain.binary(d), 3, ...)``). Netflix-like data:
``power_law_items`` with the real Netflix shape, n = 480,189 users x 17,770 movies, popularity
exponent 0.5 and 183 draws per user (about 180 movies per user, the most popular movie seen
by about half the users, as in Netflix: the paper's zeros max error there is 0.51).

Errors are over the stored (positive) queries; runtimes are DualQuery's ``fit`` excluding
true answers (the paper's Figure 4 convention) unless stated. Every figure carries the zeros,
uniform and Laplace-per-query (pure epsilon, unclipped) baselines.

Run: ``DPQUERY_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_dualquery.py
[--quick] [--only targets fig2 fig3 fig4] [--runs N]``; ``make bench`` runs it in quick mode
when ``DPQUERY_BENCH_QUICK=1``. CSV go to ``docs/results/dualquery/``, PNG to
``docs/figures/``.
"""

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.algorithms.baselines import LaplaceNoise, UniformDistribution, ZerosDataset
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.synthetic import biased_bits, power_law_items
from dpquery.privacy import AdvancedComposition, Tightest
from dpquery.queries import Workload, answer, random_marginal_queries
from tables import errors, print_table, real_data, timed, write_csv

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "dualquery"
FIGURES = ROOT / "docs" / "figures"
DELTA = 0.001
WORKLOAD_SEED = 0
NETFLIX_N, NETFLIX_D = 480_189, 17_770
BIASED_N = 20_000
# Sample size per dimension for Figure 4: the DualQuery authors' schedule (their code,
# icml.ml, Attributes.ran_bias_ba) from 200 at d = 50 to 25,000 at d = 128,000, then up to
# the 50,000 the paper quotes (Section 6.3: "from 200 to 50,000").
BIASED_SAMPLES = {
    50: 200, 250: 400, 500: 1000, 1000: 2000, 2000: 3000, 4000: 4000, 8000: 5500,
    16000: 7000, 32000: 9000, 64000: 14000, 128000: 25000, 256000: 37000, 512000: 50000,
}  # fmt: skip
ACCOUNTANTS = {
    "Thm 4.3": AdvancedComposition(heterogeneous=False),
    "tightest": Tightest(),
}
BASELINES = ("zeros", "uniform", "laplace")


@dataclass(frozen=True)
class Config:
    quick: bool
    runs: int | None = None  # overrides the mode's number of runs

    def n_runs(self, full: int) -> int:
        return self.runs if self.runs is not None else (1 if self.quick else full)


@dataclass
class Problem:
    """A data set, its workload and the true answers (with their cost in seconds)."""

    name: str
    data: BinaryData
    workload: Workload
    true: np.ndarray
    setup_s: dict[str, float] = field(default_factory=dict)
    _baselines: dict[float, dict[str, tuple[float, float]]] = field(default_factory=dict)

    def baselines(self, epsilon: float) -> dict[str, tuple[float, float]]:
        """(max, mean) error of the zeros, uniform and Laplace baselines (cached)."""
        if epsilon not in self._baselines:
            answers = {
                "zeros": ZerosDataset().fit(self.data, self.workload).answers,
                "uniform": UniformDistribution().fit(self.data, self.workload).answers,
                "laplace": LaplaceNoise(epsilon, seed=1).fit(self.data, self.workload).answers,
            }
            self._baselines[epsilon] = {k: errors(self.true, a) for k, a in answers.items()}
        return self._baselines[epsilon]


# ----------------------------------------------------------------------------- data


@cache
def biased_data(d: int) -> BinaryData:
    return biased_bits(BIASED_N, d, seed=d)


@cache
def netflix_data() -> BinaryData:
    return power_law_items(NETFLIX_N, NETFLIX_D, mean_items=183.0, exponent=0.5, seed=0)


@cache
def binary_domain(d: int) -> Domain:
    return Domain.binary(d)


def make_problem(name: str, load: Callable[[], BinaryData], queries: int) -> Problem:
    """Load (or generate) the data, draw ``queries`` random 3-way marginals, answer them."""
    data, load_s = timed(load)
    domain = data.domain if data.domain is not None else binary_domain(data.d)
    workload, wl_s = timed(lambda: random_marginal_queries(domain, 3, queries, WORKLOAD_SEED))
    true, true_s = timed(lambda: answer(workload, data))
    setup = {"data_s": load_s, "workload_s": wl_s, "true_answers_s": true_s}
    return Problem(name, data, workload, true, setup)


def problem_for(dataset: str, queries: int) -> Problem:
    loaders: dict[str, Callable[[], BinaryData]] = {
        "adult": lambda: real_data("adult"),
        "kdd99": lambda: real_data("kdd99"),
        "netflix-like": netflix_data,
    }
    if dataset.startswith("biased-"):
        d = int(dataset.removeprefix("biased-"))
        return make_problem(dataset, lambda: biased_data(d), queries)
    return make_problem(dataset, loaders[dataset], queries)


# ----------------------------------------------------------------------------- runs


def fit(problem: Problem, seed: int, **params: Any) -> tuple[Release, float]:
    model = DualQuery(delta=DELTA, seed=seed, progress=False, **params)
    return timed(lambda: model.fit(problem.data, problem.workload, problem.true))


def guarantees(release: Release) -> dict[str, float]:
    """epsilon at delta 0.001 of the run under Theorem 4.3 as printed and the tightest."""
    by_key = {a["key"]: a["epsilon"] for a in release.privacy()["by_accountant"]}
    return {"eps_thm43": by_key["advanced-lemma-2.4"], "eps_tightest": min(by_key.values())}


def run_row(problem: Problem, x: float, series: str, seed: int, **params: Any) -> dict:
    """One DualQuery run as a result row: parameters, errors, guarantees, timings."""
    release, wall = fit(problem, seed, **params)
    max_err, mean_err = errors(problem.true, answer(problem.workload, release.records))
    p = release.parameters
    return {
        "dataset": problem.name, "x": x, "series": series, "run": seed, "n": p["n"],
        "d": p["d"], "queries": p["queries"], "eta": p["eta"], "T": p["T"], "s": p["s"],
        **guarantees(release), "max_error": max_err, "mean_error": mean_err,
        "fit_s": release.timings["total_s"], "oracle_s": release.timings["respond_s"],
        "sampling_s": release.timings["select_s"], "update_s": release.timings["observe_s"],
        "wall_s": wall, "true_answers_s": problem.setup_s["true_answers_s"],
    }  # fmt: skip


def baseline_rows(problem: Problem, x: float, epsilon: float) -> list[dict]:
    return [
        {"dataset": problem.name, "x": x, "series": name, "max_error": mx, "mean_error": mn}
        for name, (mx, mn) in problem.baselines(epsilon).items()
    ]


def accountant_runs(
    problem: Problem, x: float, epsilon: float, runs: int, **params: Any
) -> list[dict]:
    """``runs`` seeds under each accountant (T the largest that fits), plus the baselines."""
    rows = [
        run_row(
            problem, x, f"DualQuery, T by {label}", seed, epsilon=epsilon, accountant=acc, **params
        )
        for label, acc in ACCOUNTANTS.items()
        for seed in range(runs)
    ]
    return rows + baseline_rows(problem, x, epsilon)


def summarise(rows: list[dict]) -> list[dict]:
    """Mean over runs per (dataset, x, series); numeric columns averaged, ``runs`` counted."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["x"], r["series"]), []).append(r)
    out = []
    for group in groups.values():
        merged = dict(group[0])
        for key, value in group[0].items():
            if isinstance(value, float) and key != "x":
                merged[key] = float(np.mean([g[key] for g in group]))
        merged["runs"] = len(group) if "run" in merged else 0
        merged.pop("run", None)
        out.append(merged)
    return out


# ----------------------------------------------------------------------------- figures


def figure2(cfg: Config) -> list[dict]:
    """Max error against epsilon on Adult, KDD99 and Netflix-like (eta 2.0)."""
    epsilons = (0.25, 1.0, 2.0, 5.0) if cfg.quick else (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0)
    settings = (("adult", 1000), ("kdd99", 1000), ("netflix-like", 5000))
    rows: list[dict] = []
    for dataset, s in settings:
        problem = problem_for(dataset, 500_000)
        for eps in epsilons:
            rows += accountant_runs(problem, eps, eps, cfg.n_runs(5), eta=2.0, samples=s)
            progress(rows[-4])
    return rows


def figure3(cfg: Config) -> list[dict]:
    """KDD99, error and runtime against the number of queries (eta 1.2, T 170, s 1750)."""
    counts = (
        (40_000, 500_000, 2_000_000)
        if cfg.quick
        else (40_000, 100_000, 250_000, 500_000, 1_000_000, 1_500_000, 2_000_000)
    )
    rows: list[dict] = []
    for count in counts:
        problem = problem_for("kdd99", count)
        for seed in range(cfg.n_runs(2)):
            rows.append(run_row(problem, count, "DualQuery", seed, eta=1.2, T=170, samples=1750))
            progress(rows[-1])
        rows += baseline_rows(problem, count, 1.0)
    return rows


def figure4(cfg: Config) -> list[dict]:
    """Biased bits, error and runtime against d (100,000 queries, (1, 0.001), eta 0.4)."""
    dims = (50, 1000, 16000, 128000, 512000) if cfg.quick else tuple(BIASED_SAMPLES)
    rows: list[dict] = []
    for d in dims:
        problem = problem_for(f"biased-{d}", 100_000)
        rows += accountant_runs(
            problem,
            d,
            1.0,
            cfg.n_runs(3),
            eta=0.4,
            samples=BIASED_SAMPLES[d],
            free_attributes="uniform",
        )
        progress(rows[-4])
        if d >= 128000:  # free the packed bits (1.2 GiB at d = 512,000)
            biased_data.cache_clear()
    return rows


def targets(cfg: Config) -> list[dict]:
    """The two reproduction targets, timed end to end (data, workload, answers, run, errors)."""
    del cfg
    kdd = target_run("kdd99", 500_000, dict(eta=1.2, T=170, samples=1750), 120.0)
    kdd["pass"] = (
        kdd["pass"] and kdd["mean_error"] < 0.01 and kdd["max_error"] < kdd["zeros_max"] / 4
    )
    biased = target_run(
        "biased-512000",
        100_000,
        dict(epsilon=1.0, eta=0.4, samples=50_000, free_attributes="uniform"),
        600.0,
    )
    return [kdd, biased]


def target_run(dataset: str, queries: int, params: dict, limit_s: float) -> dict:
    start = time.perf_counter()
    problem = problem_for(dataset, queries)
    row = run_row(problem, queries, "DualQuery", 0, **params)
    total = time.perf_counter() - start
    zeros_max, zeros_mean = problem.baselines(1.0)["zeros"]
    row.update(problem.setup_s)
    row.update(
        total_s=total,
        limit_s=limit_s,
        zeros_max=zeros_max,
        zeros_mean=zeros_mean,
        **{f"{k}_max": v[0] for k, v in problem.baselines(1.0).items() if k != "zeros"},
    )
    row["pass"] = total < limit_s
    return row


def progress(row: dict) -> None:
    print(
        f"  {row['dataset']:<14} x={row['x']:<9g} {row['series']:<28} T={row.get('T', '-')!s:<4}"
        f" max {row['max_error']:.4f} mean {row['mean_error']:.5f}"
        f" fit {row.get('fit_s', 0.0):7.1f} s",
        flush=True,
    )


# ----------------------------------------------------------------------------- output


STYLE = {
    "zeros": dict(color="0.5", ls=":", marker="x"),
    "uniform": dict(color="tab:olive", ls=":", marker="+"),
    "laplace": dict(color="tab:red", ls="--", marker="v"),
}


def plot_series(
    ax: Any, rows: list[dict], dataset: str, metric: str, series: Iterable[str]
) -> None:
    for name in series:
        pts = sorted(
            (r["x"], r[metric]) for r in rows if r["dataset"] == dataset and r["series"] == name
        )
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.plot(xs, ys, label=name, ms=4, lw=1.2, **STYLE.get(name, {"marker": "o"}))


def save_figure(fig: Any, name: str) -> Path:
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    return path


def dq_series(rows: list[dict]) -> list[str]:
    return sorted({r["series"] for r in rows if r["series"].startswith("DualQuery")})


def plot_figure2(rows: list[dict]) -> Path:
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3.4))
    for ax, dataset in zip(np.atleast_1d(axes), datasets, strict=True):
        plot_series(ax, rows, dataset, "max_error", [*dq_series(rows), *BASELINES])
        ax.set(title=dataset, xlabel="epsilon (delta = 0.001)", ylabel="max error", yscale="log")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return save_figure(fig, "dualquery_fig2_epsilon")


def plot_error_runtime(rows: list[dict], dataset: str | None, xlabel: str, name: str) -> Path:
    """Figures 3 and 4: max and mean error (with baselines) and runtime against x."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    datasets = sorted({r["dataset"] for r in rows}) if dataset is None else [dataset]
    flat = [dict(r, dataset="all") for r in rows if r["dataset"] in datasets]
    for ax, metric in zip(axes[:2], ("max_error", "mean_error"), strict=True):
        plot_series(ax, flat, "all", metric, [*dq_series(rows), *BASELINES])
        ax.set(xlabel=xlabel, ylabel=metric.replace("_", " "), yscale="log", xscale="log")
    plot_series(axes[2], flat, "all", "fit_s", dq_series(rows))
    axes[2].set(xlabel=xlabel, ylabel="DualQuery runtime (s)", xscale="log")
    axes[0].legend(fontsize=7)
    return save_figure(fig, name)


def plot_figure3(rows: list[dict]) -> Path:
    return plot_error_runtime(rows, "kdd99", "queries", "dualquery_fig3_queries")


def plot_figure4(rows: list[dict]) -> Path:
    return plot_error_runtime(rows, None, "attributes d", "dualquery_fig4_dimension")


# ----------------------------------------------------------------------------- main

COLUMNS = ["dataset", "x", "series", "runs", "T", "s", "eps_thm43", "eps_tightest",
           "max_error", "mean_error", "fit_s", "oracle_s"]  # fmt: skip
TARGET_COLUMNS = ["dataset", "queries", "eta", "T", "s", "eps_thm43", "eps_tightest",
                  "max_error", "mean_error", "zeros_max", "zeros_mean", "uniform_max",
                  "laplace_max", "data_s", "true_answers_s", "fit_s", "total_s", "limit_s",
                  "pass"]  # fmt: skip


def run_figure(name: str, build: Callable[[Config], list[dict]], cfg: Config) -> list[dict]:
    print(f"\n## {name}", flush=True)
    runs, seconds = timed(lambda: build(cfg))
    summary = summarise(runs)
    write_csv(runs, RESULTS, f"{name}_runs")
    write_csv(summary, RESULTS, name)
    print_table(summary, COLUMNS)
    print(f"{name}: {seconds:.0f} s", flush=True)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and points")
    parser.add_argument("--runs", type=int, default=None, help="runs per point (override)")
    parser.add_argument("--only", nargs="*", default=["targets", "fig2", "fig3", "fig4"])
    args = parser.parse_args([] if argv is None else argv)
    os.environ.setdefault("DPQUERY_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK", "") not in ("", "0")
    cfg = Config(quick=quick, runs=args.runs)
    print(
        f"DualQuery benchmarks ({'quick' if quick else 'full'} mode); accountants for T: "
        f"{', '.join(ACCOUNTANTS)} (dpquery's default is the tightest)"
    )
    if "targets" in args.only:
        print("\n## targets", flush=True)
        rows, seconds = timed(lambda: targets(cfg))
        write_csv(rows, RESULTS, "targets")
        print_table(rows, TARGET_COLUMNS)
        print(f"targets: {seconds:.0f} s", flush=True)
    plots = {
        "fig2": (figure2, plot_figure2),
        "fig3": (figure3, plot_figure3),
        "fig4": (figure4, plot_figure4),
    }
    for name, (build, plot) in plots.items():
        if name in args.only:
            print(f"plot: {plot(run_figure(name, build, cfg)).relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
