"""Releases as data: adaptive-projection beside AIM and MST (smartnoise-synth).

Every fit runs in its own process (ours: this file with ``--one``; the peers:
``peers_snsynth.py`` in the interpreter ``DPQUERY_PEERS_PYTHON``, skipped with a message when
unset), capped at ``--timeout`` seconds (default 1800) and ``--memory-gb`` resident GiB
(default 8); a capped fit is a row with its ``failure``. The synthetic table, as integer codes
per attribute, is scored (errors as fractions of records; TV = half the L1 distance) on:

* ``workload``: the given marginals (``--workload all3``: every 3-way marginal of at most n
  cells, the default of the utility goal; ``--workload fem64``: the FEM protocol's 64 random
  3-way marginals, workload seed ``--workload-seed``);
* ``random64``: 64 random 3-way marginals of at most n cells not in the workload, drawn with
  seeds 100, 101, 102 (pooled: the max over a draw, then the mean over draws);
* ``all3``: every 3-way marginal of at most n cells; ``five64``: 64 random 5-way marginals of
  at most n cells (seed 100).

Run (``DPQUERY_DATA_DIR=../shared/data DPQUERY_PEERS_PYTHON=/work/peers-venv/bin/python``):

    nice .venv/bin/python benchmarks/bench_utility.py --part kernel
    nice .venv/bin/python benchmarks/bench_utility.py --part fit --algorithms ours aim \
        --epsilons 0.1 1 --seeds 2 3 4 --out adult_all3
    nice .venv/bin/python benchmarks/bench_utility.py --report

Rows go to ``docs/results/utility/<out>.csv`` after each fit; ``--report`` merges every CSV
there into ``summary.csv`` (mean, min and max over seeds), prints the tables and draws
``docs/figures/utility_*.png``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.data.binary import BinaryData
from dpquery.privacy import zcdp_rho_for
from dpquery.queries import answer, fem_marginals, marginal_cells
from dpquery.queries.marginals import (
    AttributeLayout,
    Marginal,
    attribute_codes,
    marginal_counts,
    marginal_errors,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "utility"
FIGURES = ROOT / "docs" / "figures"
HERE = Path(__file__).resolve().parent
EVAL_SEEDS = (100, 101, 102)
# The AIM setting of the comparison this benchmark re-measures. AIM measures every 1-way
# marginal at the scale of 1 / rounds of the budget, so rounds < g overspends its budget (its
# last round then draws with a NaN epsilon): on wider data give ``--aim-rounds 0`` (AIM's own
# default, 16 g).
AIM_ROUNDS = 16


def load(dataset: str) -> tuple[BinaryData, AttributeLayout, np.ndarray]:
    data = datasets.load(dataset)
    layout = AttributeLayout.of_data(data)
    return data, layout, attribute_codes(data, layout)


def indices(data: BinaryData, names: list[tuple[str, ...]]) -> list[Marginal]:
    assert data.domain is not None
    pos = data.domain.names
    return [tuple(sorted(pos.index(a) for a in m)) for m in names]


def workload_of(data: BinaryData, layout: AttributeLayout, kind: str, seed: int) -> list[Marginal]:
    if kind == "all3":
        combos = itertools.combinations(range(layout.g), 3)
        return [m for m in combos if layout.size_of(m) <= data.n]
    if kind == "fem64":
        assert data.domain is not None
        return indices(data, fem_marginals(data.domain, 3, 64, data.n, seed=seed))
    raise SystemExit(f"unknown workload {kind!r}")


def to_workload(data: BinaryData, marginals: list[Marginal]) -> Any:
    assert data.domain is not None
    names = data.domain.names
    return marginal_cells(data.domain, [[names[a] for a in m] for m in marginals],
                          max_queries=10**9)  # fmt: skip


# --- one fit in its own process ----------------------------------------------------------------
def run_ours(args: argparse.Namespace) -> None:
    data, layout, _ = load(args.dataset)
    with open(args.marginals) as f:
        marginals = [tuple(m) for m in json.load(f)]
    options = json.loads(args.options or "{}")
    factor = options.pop("rho_factor", None)
    if factor is None:
        budget: dict[str, float] = {"epsilon": args.epsilon, "delta": args.delta}
    else:  # AIM's add/remove guarantee restated for replace-one: at least twice its rho
        budget = {"rho": factor * zcdp_rho_for(args.epsilon, args.delta)}
    model = AdaptiveProjection(seed=args.seed, **budget, **options)
    start = time.perf_counter()
    release = model.fit(data, to_workload(data, marginals))
    seconds = time.perf_counter() - start
    rows = release.records.rows
    codes = np.stack([rows[:, s : s + k].argmax(1) if oh else rows[:, s]
                      for s, k, oh in zip(layout.starts, layout.sizes, layout.onehot,
                                          strict=True)], axis=1)  # fmt: skip
    np.savez(args.out_codes, codes=codes.astype(np.int64))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rounds = sum(1 for r in release.rounds if isinstance(r.get("round"), int))
    print(json.dumps({"seconds": seconds, "peak_bytes": peak, "rounds": rounds,
                      "spent": release.ledger.spent}))  # fmt: skip


def launch(cmd: list[str], timeout: float, memory_gb: float) -> tuple[dict[str, Any], str]:
    """Run ``cmd``; its last stdout line is JSON. Kill it past ``timeout`` s or ``memory_gb``."""
    import psutil

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        start, peak, failure = time.time(), 0, ""
        while proc.poll() is None:
            try:
                ps = psutil.Process(proc.pid)
                rss = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(True))
                peak = max(peak, rss)
            except psutil.Error:
                pass
            if time.time() - start > timeout:
                failure = f"timeout after {timeout:.0f} s"
            elif peak > memory_gb * 2**30:
                failure = f"over {memory_gb:g} GiB resident"
            if failure:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.5)
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        if not failure and proc.returncode != 0:
            failure = f"exit {proc.returncode}: {err.read()[-400:]}"
        if failure:
            return {"failure": failure, "seconds": time.time() - start}, failure
        return json.loads(lines[-1]), ""


def score(data: BinaryData, layout: AttributeLayout, true: np.ndarray, synth: np.ndarray,
          workload: list[Marginal]) -> dict[str, float]:  # fmt: skip
    sizes = layout.sizes
    all3 = workload_of(data, layout, "all3", 0)
    out: dict[str, float] = {}
    me, tv = marginal_errors(true, synth, sizes, workload)
    out["workload_max"], out["workload_tv"] = me.max(), tv.mean()
    outside = [m for m in all3 if m not in set(workload)]
    maxes, tvs = [], []
    for s in EVAL_SEEDS:
        pool = outside if len(outside) >= 64 else all3
        pick = [pool[i] for i in np.random.default_rng(s).choice(len(pool), 64, replace=False)]
        me, tv = marginal_errors(true, synth, sizes, pick)
        maxes.append(me.max())
        tvs.append(tv.mean())
    out["random64_max"], out["random64_tv"] = float(np.mean(maxes)), float(np.mean(tvs))
    me, tv = marginal_errors(true, synth, sizes, all3)
    out["all3_max"], out["all3_tv"] = me.max(), tv.mean()
    assert data.domain is not None
    five = indices(data, fem_marginals(data.domain, 5, 64, data.n, seed=EVAL_SEEDS[0]))
    me, tv = marginal_errors(true, synth, sizes, five)
    out["five64_max"], out["five64_tv"] = me.max(), tv.mean()
    return {k: float(v) for k, v in out.items()}


def fit_rows(args: argparse.Namespace) -> None:
    data, layout, true = load(args.dataset)
    delta = 1.0 / data.n**2
    peers = os.environ.get("DPQUERY_PEERS_PYTHON")
    path = RESULTS / f"{args.out}.csv"
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        inputs, marg_file = Path(tmp) / "data.npz", Path(tmp) / "marginals.json"
        np.savez(inputs, codes=true.astype(np.int64), sizes=layout.sizes)
        workload = workload_of(data, layout, args.workload, args.workload_seed)
        marg_file.write_text(json.dumps([list(m) for m in workload]))
        for seed, eps, algo in itertools.product(args.seeds, args.epsilons, args.algorithms):
            out_codes = Path(tmp) / "synth.npz"
            if algo in ("ours", "ours-2rho"):
                options = json.loads(args.options or "{}")
                if algo == "ours-2rho":
                    options["rho_factor"] = 2.0
                cmd = [sys.executable, __file__, "--one", "--dataset", args.dataset,
                       "--marginals", str(marg_file), "--epsilon", str(eps), "--delta",
                       str(delta), "--seed", str(seed), "--out-codes", str(out_codes),
                       "--options", json.dumps(options)]  # fmt: skip
            elif peers is None:
                print(f"skipping {algo}: set DPQUERY_PEERS_PYTHON to a python with "
                      "smartnoise-synth (pyproject extra 'peers')")  # fmt: skip
                continue
            else:
                cmd = [peers, str(HERE / "peers_snsynth.py"), "--input", str(inputs),
                       "--marginals", str(marg_file), "--algorithm", algo, "--epsilon",
                       str(eps), "--delta", str(delta), "--seed", str(seed), "--out",
                       str(out_codes)]  # fmt: skip
                if args.aim_rounds:
                    cmd += ["--rounds", str(args.aim_rounds)]
            info, failure = launch(cmd, args.timeout, args.memory_gb)
            row: dict[str, Any] = {
                "dataset": args.dataset, "workload": args.workload,
                "workload_seed": args.workload_seed, "algorithm": algo,
                "options": args.options or "" if algo.startswith("ours") else
                (f"rounds={args.aim_rounds or 'default'}" if algo == "aim" else ""),
                "epsilon": eps, "seed": seed, **info,
            }  # fmt: skip
            if not failure:
                synth = np.load(out_codes)["codes"]
                row.update(score(data, layout, true, synth, workload))
            print(json.dumps(row), flush=True)
            _append(path, row)


def _append(path: Path, row: dict[str, Any]) -> None:
    rows = []
    if path.exists():
        with path.open() as f:
            rows = list(csv.DictReader(f))
    rows.append({k: ("" if v is None else v) for k, v in row.items()})
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


# --- the marginal kernel against the per-cell kernel -------------------------------------------
def kernel(args: argparse.Namespace) -> None:
    data, layout, codes = load(args.dataset)
    marginals = workload_of(data, layout, "all3", 0)
    workload = to_workload(data, marginals)
    answer(to_workload(data, marginals[:1]), data)  # compile the per-cell kernel first
    t = time.perf_counter()
    cells = answer(workload, data)
    t_cell = time.perf_counter() - t
    t = time.perf_counter()
    codes = attribute_codes(data, layout)
    counts = np.concatenate([marginal_counts(codes, layout.sizes, m) for m in marginals])
    t_marg = time.perf_counter() - t
    assert np.allclose(counts / data.n, cells)
    print(f"{args.dataset}: {len(marginals)} marginals, {len(workload)} cells")
    print(f"per-cell conjunction kernel: {t_cell:.2f} s; bincount per marginal (codes "
          f"included): {t_marg:.3f} s; {t_cell / t_marg:.0f}x")  # fmt: skip


# --- high width: DualQuery's biased bits --------------------------------------------------------
def wide(args: argparse.Namespace) -> None:
    """Biased bits (DualQuery Section 6.3), n = 20,000, at growing widths d, 64 random 3-way
    marginals (of bit attributes) as the workload, epsilon 1: runs, or refuses, and how long."""
    from dpquery.data.domain import Domain
    from dpquery.data.synthetic import biased_bits
    from dpquery.errors import DPQueryError

    for d in args.widths:
        data = biased_bits(20_000, d, seed=0)
        domain = Domain.binary(d)
        combos = np.random.default_rng(0).choice(d, size=(64, 3), replace=True)
        marginals = sorted({tuple(sorted(set(c.tolist()))) for c in combos})
        workload = marginal_cells(domain, [[domain.names[a] for a in m] for m in marginals])
        workload = type(workload)(workload.kind, d, workload.offsets, workload.bits,
                                  workload.positive, workload.marginals, None)  # fmt: skip
        start = time.perf_counter()
        try:
            release = AdaptiveProjection(epsilon=1.0, seed=0).fit(data, workload)
            outcome = f"ran: {release.records.m} records, {len(release.rounds) - 1} rounds"
        except DPQueryError as exc:
            outcome = f"refused: {exc}"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"d={d}: {time.perf_counter() - start:.1f} s, peak {peak:.2f} GiB; {outcome}",
              flush=True)  # fmt: skip
        del data


# --- report --------------------------------------------------------------------------------------
METRICS = ("workload_max", "workload_tv", "random64_max", "random64_tv", "all3_max", "all3_tv",
           "five64_max", "five64_tv", "seconds", "peak_bytes")  # fmt: skip


def report(args: argparse.Namespace) -> None:
    rows = []
    for p in sorted(RESULTS.glob("*.csv")):
        if p.name != "summary.csv":
            with p.open() as f:
                rows += list(csv.DictReader(f))
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (r["dataset"], r["workload"], r["workload_seed"], r["algorithm"], r["options"],
               float(r["epsilon"]))  # fmt: skip
        groups.setdefault(key, []).append(r)
    summary = []
    for key, rs in sorted(groups.items()):
        ok = [r for r in rs if not r.get("failure")]
        s: dict[str, Any] = dict(zip(("dataset", "workload", "workload_seed", "algorithm",
                                      "options", "epsilon"), key, strict=True))  # fmt: skip
        s["runs"], s["seeds"] = len(ok), " ".join(r["seed"] for r in ok)
        s["failures"] = "; ".join(r["failure"] for r in rs if r.get("failure"))
        for m in METRICS:
            v = [float(r[m]) for r in ok if r.get(m)]
            if v:
                s[m], s[m + "_min"], s[m + "_max"] = np.mean(v), min(v), max(v)
        summary.append(s)
    with (RESULTS / "summary.csv").open("w", newline="") as f:
        keys: list[str] = []
        for r in summary:
            keys += [k for k in r if k not in keys]
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(summary)
    for s in summary:
        cells = [f"{s['dataset']} {s['workload']}/{s['workload_seed']} {s['algorithm']} "
                 f"{s['options']} eps={s['epsilon']} runs={s['runs']}"]  # fmt: skip
        for m in METRICS:
            if m in s:
                fmt = "{:.4f}" if "seconds" not in m and "bytes" not in m else "{:.0f}"
                scale = 2**20 if m == "peak_bytes" else 1
                lo, hi = s[m + "_min"] / scale, s[m + "_max"] / scale
                cells.append(f"{m}={fmt.format(s[m] / scale)} [{fmt.format(lo)}-{fmt.format(hi)}]")
        if s["failures"]:
            cells.append("failures: " + s["failures"])
        print(" | ".join(cells))
    _compare(summary)
    _goal(summary)
    _figure(summary)


def _compare(summary: list[dict[str, Any]]) -> None:
    """Markdown: ours beside AIM (mean [min-max] over seeds) and the ratio of the means."""
    keyed = {(s["dataset"], s["workload"], s["workload_seed"], s["epsilon"], s["algorithm"]): s
             for s in summary}  # fmt: skip
    print("\n| data, workload | epsilon | measure | ours | AIM | ours / AIM | MST |")
    print("|---|---|---|---|---|---|---|")
    for (ds, wl, ws, eps, algo), ours in sorted(keyed.items()):
        aim = keyed.get((ds, wl, ws, eps, "aim"))
        mst = keyed.get((ds, wl, ws, eps, "mst"))
        if algo != "ours" or aim is None or aim["runs"] == 0:
            continue
        for m in METRICS:
            if m not in ours or m not in aim:
                continue
            scale = 2**30 if m == "peak_bytes" else 1
            fmt = "{:.1f}" if m == "seconds" else "{:.2f}" if m == "peak_bytes" else "{:.4f}"

            def cell(s: dict[str, Any], m: str = m, scale: float = scale, fmt: str = fmt) -> str:
                v, lo, hi = (s[k] / scale for k in (m, m + "_min", m + "_max"))
                return f"{fmt.format(v)} [{fmt.format(lo)}-{fmt.format(hi)}] ({s['runs']})"

            other = cell(mst) if mst is not None and m in mst else "-"
            print(f"| {ds}, {wl}/{ws} | {eps:g} | {m} | {cell(ours)} | {cell(aim)} | "
                  f"{ours[m] / aim[m]:.2f} | {other} |")  # fmt: skip


def _goal(summary: list[dict[str, Any]]) -> None:
    """Markdown: the utility goal cell by cell on adult-pgm (ratio = ours / AIM, goal <= 0.9)."""
    keyed = {(s["workload"], s["workload_seed"], s["epsilon"], s["algorithm"]): s
             for s in summary if s["dataset"] == "adult-pgm"}  # fmt: skip

    def ratios(ours: dict[str, Any], aim: dict[str, Any], *ms: str) -> str:
        out = []
        for m in ms:
            r = ours[m] / aim[m]
            out.append(f"{r:.2f}" if r <= 0.9 else f"**{r:.2f}**")
        return " / ".join(out)

    print("\n| ours | workload | epsilon | 3-way max (workload / random64) | 3-way mean TV "
          "(workload / random64) | 5-way max / TV | runs ours, AIM |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for (wl, ws, eps, algo), ours in sorted(keyed.items(), key=lambda kv: kv[0][::-1]):
        aim = keyed.get((wl, ws, eps, "aim"))
        if algo not in ("ours", "ours-2rho") or aim is None or aim["runs"] == 0:
            continue
        print(
            f"| {algo} | {wl}/{ws} | {eps:g} | "
            f"{ratios(ours, aim, 'workload_max', 'random64_max')} | "
            f"{ratios(ours, aim, 'workload_tv', 'random64_tv')} | "
            f"{ratios(ours, aim, 'five64_max', 'five64_tv')} | {ours['runs']}, {aim['runs']} |"
        )


def _figure(summary: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    adult = [s for s in summary if s["dataset"] == "adult-pgm" and s["workload"] == "all3"]
    if not adult:
        return
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    for ax, m in zip(axes, ("all3_max", "all3_tv", "five64_max", "five64_tv"), strict=True):
        for algo in sorted({s["algorithm"] for s in adult}):
            pts = sorted((s["epsilon"], s[m], s[m + "_min"], s[m + "_max"])
                         for s in adult if s["algorithm"] == algo and m in s)  # fmt: skip
            if pts:
                e, v, lo, hi = map(np.array, zip(*pts, strict=True))
                ax.errorbar(e, v, yerr=[v - lo, hi - v], marker="o", capsize=3, label=algo)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_title(f"adult-pgm, all 3-way workload: {m}")
        ax.legend()
    fig.tight_layout()
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURES / "utility_adult_all3.png", dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=("kernel", "fit", "wide"))
    p.add_argument("--widths", nargs="+", type=int, default=[1000, 16000, 512000])
    p.add_argument("--report", action="store_true")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dataset", default="adult-pgm")
    p.add_argument("--workload", default="all3", choices=("all3", "fem64"))
    p.add_argument("--workload-seed", type=int, default=0)
    p.add_argument("--algorithms", nargs="+", default=["ours", "aim"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 1.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[2, 3, 4])
    p.add_argument("--options", default="", help="JSON options of AdaptiveProjection")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--aim-rounds", type=int, default=AIM_ROUNDS, help="0: AIM's default, 16 g")
    p.add_argument("--memory-gb", type=float, default=8)
    p.add_argument("--out", default="utility")
    # --one
    p.add_argument("--marginals")
    p.add_argument("--epsilon", type=float)
    p.add_argument("--delta", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--out-codes")
    args = p.parse_args()
    if args.one:
        run_ours(args)
    elif args.part == "kernel":
        kernel(args)
    elif args.part == "fit":
        fit_rows(args)
    elif args.part == "wide":
        wide(args)
    if args.report:
        report(args)


if __name__ == "__main__":
    main()
