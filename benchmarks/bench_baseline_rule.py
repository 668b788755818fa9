"""When is the default release not expected to beat the baselines? The measurements behind
``auto``'s pre-release check (:func:`dpquery.algorithms.auto.baseline_warning`).

Real tables (``adult-pgm``, ``acs``, ``cps``, ``kdd99``) subsampled to small ``n`` (rows
drawn with the run's seed), each released by ``auto`` (adaptive-projection) on its default
workload (workload seed 0) at delta = 1/n^2. For every run it records public quantities only
(from the plan: ``n``, the attribute sizes, ``rho``, the 1-way noise scales, the workload's
cells per marginal) and the scores (NOT private, for calibration only): the mean total
variation over the workload's marginals of the release, of the uniform table and of the
zeros table (one all-zero record: 0.5 on every marginal). A run *loses* when its mean TV is
not below both baselines'.

The candidate rules are thresholds on one public feature; ``--fit`` picks each threshold on
the tuning runs (``--tune-datasets``, ``--tune-seeds``) and reports its errors on the others.

Usage (``DPQUERY_DATA_DIR`` set, from the repository root, niced)::

    python benchmarks/bench_baseline_rule.py --out baseline_rule     # the runs (CSV rows)
    python benchmarks/bench_baseline_rule.py --fit                   # the rule, tuned and checked
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.algorithms import registry
from dpquery.algorithms.auto import BaselineWarning, expected_one_way_tv
from dpquery.algorithms.baselines import UniformDistribution
from dpquery.algorithms.marginal.adaptive_projection import AdaptivePlan
from dpquery.data.encode import encode
from dpquery.privacy.delta import default_delta
from dpquery.queries import answer, default_workload

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "baseline_rule"
DATASETS = ("adult-pgm", "acs", "cps", "kdd99")
SIZES = (50, 100, 200, 500, 1000, 2000, 5000)
EPSILONS = (0.1, 0.3, 1.0)
FIELDS = ("dataset", "n", "g", "epsilon", "seed", "rho", "T", "marginals", "cells_mean",
          "tv1_min", "tv1_median", "tv1_mean", "tv1_max", "tvw_mean", "warned_before",
          "release_tv", "uniform_tv", "zeros_tv", "release_mean", "uniform_mean",
          "zeros_mean", "loses", "seconds")  # fmt: skip
# The features a rule may threshold (all public).
FEATURES = ("tv1_min", "tv1_median", "tv1_mean", "tv1_max", "tvw_mean")


@functools.cache
def _table(dataset: str) -> tuple[Any, Any]:
    return datasets.load_table(dataset)


def run_one(dataset: str, n: int, epsilon: float, seed: int) -> dict[str, Any]:
    """One subsample, one release, its public features and its scores."""
    table, domain = _table(dataset)
    data = encode(table.sample(n, random_state=seed), domain)
    workload = default_workload(domain, n, seed=0)
    model = registry.build("auto", {"epsilon": epsilon, "delta": default_delta(n)}, seed=seed,
                           progress=False)  # fmt: skip
    plan = model.plan(data, workload)
    inner = plan.inner
    assert isinstance(inner, AdaptivePlan), type(inner)
    sizes = np.array([a.size for a in domain.attributes], dtype=np.float64)
    tv1 = expected_one_way_tv(inner, n, sizes.tolist())
    assert workload.marginals is not None
    cells = np.diff(workload.marginals).astype(np.float64)
    # The expected TV of measuring a workload marginal once at the rounds' scale sigma_0.
    tvw = 0.5 * cells * math.sqrt(2 / math.pi) * inner.sigma0 / n
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BaselineWarning)
        release = model.fit(data, workload)
    seconds = time.perf_counter() - start
    true = answer(workload, data)
    starts = workload.marginals[:-1]

    def scores(released: np.ndarray) -> tuple[float, float]:
        err = np.abs(released - true)
        return float((0.5 * np.add.reduceat(err, starts)).mean()), float(err.mean())

    release_tv, release_mean = scores(answer(workload, release.records))
    uniform_tv, uniform_mean = scores(UniformDistribution().fit(data, workload).answers)
    zeros_tv, zeros_mean = scores(np.zeros_like(true))
    return {
        "dataset": dataset, "n": n, "g": len(domain), "epsilon": epsilon, "seed": seed,
        "rho": inner.rho, "T": inner.T, "marginals": int(cells.size),
        "cells_mean": float(cells.mean()), "tv1_min": float(tv1.min()),
        "tv1_median": float(np.median(tv1)), "tv1_mean": float(tv1.mean()),
        "tv1_max": float(tv1.max()), "tvw_mean": float(tvw.mean()),
        "warned_before": bool((tv1 >= 0.5).all()),
        "release_tv": release_tv, "uniform_tv": uniform_tv, "zeros_tv": zeros_tv,
        "release_mean": release_mean, "uniform_mean": uniform_mean, "zeros_mean": zeros_mean,
        "loses": release_tv >= min(uniform_tv, zeros_tv), "seconds": seconds,
    }  # fmt: skip


def grid(args: argparse.Namespace) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{args.out}.csv"
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        for seed in args.seeds:
            for dataset in args.datasets:
                for n in args.sizes:
                    for epsilon in args.epsilons:
                        row = run_one(dataset, n, epsilon, seed)
                        writer.writerow(row)
                        f.flush()
                        print(json.dumps({k: row[k] for k in ("dataset", "n", "epsilon", "seed",
                                          "tv1_median", "release_tv", "uniform_tv", "loses",
                                          "seconds")}), flush=True)  # fmt: skip


def _rows() -> list[dict[str, Any]]:
    rows = []
    for path in sorted(RESULTS.glob("*.csv")):
        with path.open() as f:
            for r in csv.DictReader(f):
                rows.append({k: (v if k == "dataset" else
                                 v == "True" if v in ("True", "False") else float(v))
                             for k, v in r.items()})  # fmt: skip
    return rows


def _errors(rows: list[dict[str, Any]], feature: str, t: float) -> tuple[int, int]:
    """(missed: lost without a warning, false alarms: warned but beat the baselines)."""
    missed = sum(1 for r in rows if r["loses"] and not r[feature] >= t)
    false = sum(1 for r in rows if not r["loses"] and r[feature] >= t)
    return missed, false


def fit(args: argparse.Namespace) -> None:
    """Each feature's threshold with the fewest errors on the tuning runs (ties: the lowest,
    which warns more), and its errors on the check runs."""
    rows = _rows()
    tune = [r for r in rows if r["dataset"] in args.tune_datasets and r["seed"] in args.tune_seeds]
    check = [r for r in rows if r not in tune]
    print(f"{len(rows)} runs: {sum(r['loses'] for r in rows)} lose; tuning on {len(tune)} "
          f"({', '.join(args.tune_datasets)}, seeds {args.tune_seeds}), checking on "
          f"{len(check)}")  # fmt: skip
    print("| feature | threshold | tuning: missed / false alarms | check: missed / false alarms |")
    print("|---|---|---|---|")
    for feature in (*FEATURES, "warned_before"):
        if feature == "warned_before":
            t = 0.5
            m_t, f_t = _errors(tune, "tv1_min", t)
            m_c, f_c = _errors(check, "tv1_min", t)
            print(f"| tv1_min (the old rule) | {t} | {m_t} / {f_t} | {m_c} / {f_c} |")
            continue
        values = sorted({r[feature] for r in tune})
        cuts = [values[0]] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
        cuts.append(values[-1] * 2)
        fewest = min(sum(_errors(tune, feature, t)) for t in cuts)
        best = [t for t in cuts if sum(_errors(tune, feature, t)) == fewest]
        # Every threshold in [lo, hi) makes the same errors on the tuning runs.
        lo = max(v for v in values if v < min(best)) if min(best) > values[0] else 0.0
        hi = min(v for v in values if v >= max(best)) if max(best) <= values[-1] else math.inf
        m_t, f_t = _errors(tune, feature, min(best))
        m_c, f_c = _errors(check, feature, min(best))
        print(f"| {feature} | {min(best):.3g} (any in ({lo:.3g}, {hi:.3g}]) | {m_t} / {f_t} | "
              f"{m_c} / {f_c} |")  # fmt: skip
    if args.threshold is not None:
        m_t, f_t = _errors(tune, args.feature, args.threshold)
        m_c, f_c = _errors(check, args.feature, args.threshold)
        print(f"| {args.feature} (chosen) | {args.threshold:g} | {m_t} / {f_t} | {m_c} / {f_c} |")
        for r in rows:
            if r["loses"] != (r[args.feature] >= args.threshold):
                print(f"  {'missed' if r['loses'] else 'false alarm'}: {r['dataset']} n={r['n']:g} "
                      f"epsilon={r['epsilon']:g} seed={r['seed']:g}: {args.feature} "
                      f"{r[args.feature]:.3f}, release TV {r['release_tv']:.3f} vs uniform "
                      f"{r['uniform_tv']:.3f}, zeros {r['zeros_tv']:.3f}")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fit", action="store_true", help="tune and check the rules on the CSVs")
    p.add_argument("--datasets", nargs="+", default=list(DATASETS))
    p.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    p.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--tune-datasets", nargs="+", default=["adult-pgm", "cps"])
    p.add_argument("--tune-seeds", nargs="+", type=float, default=[0])
    p.add_argument("--out", default="runs")
    p.add_argument("--feature", default="tv1_median", choices=FEATURES)
    p.add_argument("--threshold", type=float, help="report this threshold's errors too")
    args = p.parse_args()
    fit(args) if args.fit else grid(args)


if __name__ == "__main__":
    main()
