"""Releases as data: adaptive-projection beside AIM (its authors' and dpmm's) and smartnoise.

Every fit runs in its own process, capped at ``--timeout`` seconds (default 1800) and
``--memory-gb`` resident GiB of its process tree (default 8); a capped or crashed fit is a row
with its ``failure``. The algorithms (``--algorithms``):

* ``ours``: adaptive-projection with its defaults (this file with ``--one``); ``ours-2rho``:
  the same at the equal guarantee (below); ``--equal-guarantee`` adds it beside ``ours``;
  ``--neighbours add-remove`` runs ours under AIM's own relation (sensitivity 1 for a
  marginal, ``max w_r`` for a selection score), the comparison at the same relation;
* ``aim-authors``: AIM as its authors run it (``aim/run_aim.py`` of the peers directory
  ``DPQUERY_PEERS_DIR``, default ``../shared/peers``: private-pgm's ``mechanisms/aim.py`` on
  ``mbi==2.0.0``, rounds 16 x attributes, model size 80, a numpy marginal projection), in the
  interpreter ``DPQUERY_AIM_PYTHON``;
* ``aim-dpmm``: dpmm 0.1.9's AIM pipeline (``dpmm/run_dpmm.py``: domain compression on, model
  size 80, no preprocessing), in the interpreter ``DPQUERY_DPMM_PYTHON``; its workload is
  fixed to every 3-way marginal of at most n cells (``--workload all3`` only) and its noise
  comes from OpenDP's sampler, not from the seed;
* ``aim`` and ``mst``: smartnoise-synth's (``peers_snsynth.py``, interpreter
  ``DPQUERY_PEERS_PYTHON``); AIM with ``rounds=16`` (``--aim-rounds``), a weak setting kept
  for comparison with earlier rows.

A peer whose interpreter is not set is skipped with a message. The two AIM drivers read the
data as an integer-coded CSV with the attribute names as header and the public domain as a JSON
object ``{attribute: number of values}`` (nothing about the domain is read from the data),
with ``delta = 1/n^2``, and write ``n`` synthetic rows in the same form. Set-up (each in a venv
of its own, never the project's)::

    python3 -m venv /work/peers-aim && /work/peers-aim/bin/pip install mbi==2.0.0 matplotlib pandas
    python3 -m venv /work/peers-dpmm && /work/peers-dpmm/bin/pip install dpmm==0.1.9

**Two comparisons.** AIM accounts under add/remove one record (a marginal's counts and its
selection score with sensitivity 1); ours under replace-one (``n`` public). At the same nominal
``(epsilon, delta)`` (rows ``ours``: the goal) AIM's run guarantees, under replace-one, at least
twice its ``rho`` (``dpquery.privacy.replace_one_rho``: ``2 rho`` for its Gaussian
measurements, ``2.2 rho`` with its selections). ``ours-2rho`` runs ours at
``replace_one_rho(zcdp_rho_for(epsilon, delta))``, the lower bound: the equal guarantee, never
weaker than the peer's.

The synthetic table, as integer codes per attribute, is scored (errors as fractions of
records; TV = half the L1 distance) on:

* ``workload``: the given marginals (``--workload all3``: every 3-way marginal of at most n
  cells, the default of the utility goal; ``--workload fem64``: the FEM protocol's 64 random
  3-way marginals, workload seed ``--workload-seed``);
* ``random64``: 64 random 3-way marginals of at most n cells not in the workload, drawn with
  seeds 100, 101, 102 (pooled: the max over a draw, then the mean over draws);
* ``all3``: every 3-way marginal of at most n cells; ``five64``: 64 random 5-way marginals of
  at most n cells (seed 100);
* ``fem3_s1``, ``fem3_s2``, ``fem5_s1``: the AIM peers' READMEs' protocol, 64 random k-way
  marginals of at most n cells drawn by ``fem_marginals`` with workload seed S.

Run (``DPQUERY_DATA_DIR=../shared/data DPQUERY_AIM_PYTHON=/work/peers-aim/bin/python
DPQUERY_DPMM_PYTHON=/work/peers-dpmm/bin/python``):

    nice .venv/bin/python benchmarks/bench_utility.py --part kernel
    nice .venv/bin/python benchmarks/bench_utility.py --part fit --equal-guarantee \
        --algorithms ours aim-authors aim-dpmm --epsilons 0.1 1 --seeds 2 3 --out adult_all3
    nice .venv/bin/python benchmarks/bench_utility.py --report

Rows go to ``docs/results/utility/<out>.csv`` after each fit; ``--report`` merges every CSV
there (not in its subfolders; ``--report-from SUB`` reads the subfolder ``SUB`` instead) into
``summary.csv`` (mean, min and max over seeds), prints the tables and draws
``docs/figures/utility_*.png`` (not for a subfolder). ``--part worst`` (with ``--algorithms``
ignored) refits ours with a fit row's arguments and prints where its largest errors are: the
marginals, their cells, and which of them the rounds measured.
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
from dpquery.privacy import replace_one_rho, zcdp_rho_for
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
# The protocol of the AIM peers' measurements: 64 random k-way marginals of at most n cells
# drawn by ``fem_marginals`` with workload seed S, for (k, S) in:
PEER_PROTOCOL = ((3, 1), (3, 2), (5, 1))
PEERS_DIR = Path(os.environ.get("DPQUERY_PEERS_DIR", ROOT.parent / "shared" / "peers"))
# The strong peers: (interpreter variable, driver, its settings as the rows label them).
AIM_PEERS = {
    "aim-authors": ("DPQUERY_AIM_PYTHON", ("aim", "run_aim.py"),
                    "authors' AIM, mbi 2.0.0, rounds=16g, max_model_size=80, numpy projection"),
    "aim-dpmm": ("DPQUERY_DPMM_PYTHON", ("dpmm", "run_dpmm.py"),
                 "dpmm 0.1.9 AIM, compress=True, max_model_size=80"),
}  # fmt: skip
# smartnoise-synth's AIM setting of the earlier comparison. AIM measures every 1-way
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


def equal_guarantee_rho(epsilon: float, delta: float) -> float:
    """Our replace-one ``rho`` equal to what an add/remove AIM run at ``(epsilon, delta)``
    guarantees under replace-one, at least: twice its ``rho`` (its selections left out)."""
    return replace_one_rho(zcdp_rho_for(epsilon, delta))


# --- one fit in its own process ----------------------------------------------------------------
def release_codes(release: Any, layout: AttributeLayout) -> np.ndarray:
    """The released records as integer codes per attribute."""
    rows = release.records.rows
    codes = np.stack([rows[:, s : s + k].argmax(1) if oh else rows[:, s]
                      for s, k, oh in zip(layout.starts, layout.sizes, layout.onehot,
                                          strict=True)], axis=1)  # fmt: skip
    return codes.astype(np.int64)


def run_ours(args: argparse.Namespace) -> None:
    data, layout, _ = load(args.dataset)
    with open(args.marginals) as f:
        marginals = [tuple(m) for m in json.load(f)]
    options = json.loads(args.options or "{}")
    if options.pop("equal_guarantee", False):  # AIM's add/remove budget under replace-one
        budget: dict[str, float] = {"rho": equal_guarantee_rho(args.epsilon, args.delta)}
    else:
        budget = {"epsilon": args.epsilon, "delta": args.delta}
    model = AdaptiveProjection(seed=args.seed, **budget, **options)
    start = time.perf_counter()
    release = model.fit(data, to_workload(data, marginals))
    seconds = time.perf_counter() - start
    np.savez(args.out_codes, codes=release_codes(release, layout))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rounds = sum(1 for r in release.rounds if isinstance(r.get("round"), int))
    print(json.dumps({"seconds": seconds, "peak_bytes": peak, "rounds": rounds,
                      "spent": release.ledger.spent}))  # fmt: skip


def launch(cmd: list[str], timeout: float, memory_gb: float) -> tuple[dict[str, Any], str]:
    """Run ``cmd``; its last stdout line is JSON. Kill it past ``timeout`` s or ``memory_gb``.

    The JSON gains ``wall_seconds``, ``load_mean`` and ``load_max`` (the machine's one-minute
    load average sampled every 0.5 s while it ran: how loaded the timing was) and, when it has
    none, ``peak_bytes``: the largest resident memory of the process tree sampled every 0.5 s."""
    import psutil

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        start, peak, failure = time.time(), 0, ""
        loads = [os.getloadavg()[0]]
        while proc.poll() is None:
            loads.append(os.getloadavg()[0])
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
        wall = time.time() - start
        load = {"load_mean": float(np.mean(loads)), "load_max": max(loads)}
        if failure:
            return {"failure": failure, "seconds": wall, "wall_seconds": wall, **load}, failure
        info = json.loads(lines[-1])
        info.setdefault("peak_bytes", peak)
        return {**info, "wall_seconds": wall, **load}, ""


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
        draw = np.random.default_rng(s).choice(len(pool), min(64, len(pool)), replace=False)
        pick = [pool[i] for i in draw]  # all of them when there are at most 64
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
    for k, S in PEER_PROTOCOL:  # the AIM peers' READMEs' scores
        picks = indices(data, fem_marginals(data.domain, k, 64, data.n, seed=S))
        me, tv = marginal_errors(true, synth, sizes, picks)
        out[f"fem{k}_s{S}_max"], out[f"fem{k}_s{S}_tv"] = me.max(), tv.mean()
    return {k: float(v) for k, v in out.items()}


def peer_command(algo: str, tmp: Path, eps: float, seed: int, out_codes: Path,
                 args: argparse.Namespace) -> list[str] | None:  # fmt: skip
    """The command running peer ``algo``, or None (with a message) when it cannot run here."""
    if algo in AIM_PEERS:
        var, (folder, script), _ = AIM_PEERS[algo]
        python = os.environ.get(var)
        if python is None:
            print(f"skipping {algo}: set {var} to the python of its venv "
                  f"({PEERS_DIR / folder / 'README.md'})")  # fmt: skip
            return None
        driver = str(PEERS_DIR / folder / script)
        csv_in, domain = str(tmp / "data.csv"), str(tmp / "domain.json")
        if algo == "aim-dpmm":
            if args.workload != "all3":
                print("skipping aim-dpmm: its driver's workload is every 3-way marginal "
                      "(--workload all3)")  # fmt: skip
                return None
            return [python, driver, "aim", csv_in, domain, str(eps), str(seed), str(out_codes)]
        cmd = [python, driver, csv_in, domain, str(eps), str(seed), str(out_codes)]
        if args.workload != "all3":  # the driver's default is every 3-way marginal
            cmd += ["--cliques", str(tmp / "cliques.json")]
        return cmd
    peers = os.environ.get("DPQUERY_PEERS_PYTHON")
    if peers is None:
        print(f"skipping {algo}: set DPQUERY_PEERS_PYTHON to a python with "
              "smartnoise-synth (pyproject extra 'peers')")  # fmt: skip
        return None
    cmd = [peers, str(HERE / "peers_snsynth.py"), "--input", str(tmp / "data.npz"),
           "--marginals", str(tmp / "marginals.json"), "--algorithm", algo, "--epsilon",
           str(eps), "--delta", str(1.0 / args.n**2), "--seed", str(seed), "--out",
           str(out_codes)]  # fmt: skip
    if algo == "aim" and args.aim_rounds:
        cmd += ["--rounds", str(args.aim_rounds)]
    return cmd


def label(algo: str, args: argparse.Namespace) -> str:
    """The settings a row is labelled with."""
    if algo.startswith("ours"):
        relation = f"neighbours={args.neighbours}" if args.neighbours else ""
        return " ".join(x for x in (relation, args.options or "") if x)
    if algo in AIM_PEERS:
        return AIM_PEERS[algo][2]
    if algo == "aim":
        return f"smartnoise rounds={args.aim_rounds or 'default'}"
    return "smartnoise"


def write_inputs(tmp: Path, data: BinaryData, layout: AttributeLayout, true: np.ndarray,
                 workload: list[Marginal]) -> None:  # fmt: skip
    """The private table and the public domain in the forms the peers read."""
    assert data.domain is not None
    names = list(data.domain.names)
    np.savez(tmp / "data.npz", codes=true.astype(np.int64), sizes=layout.sizes)
    (tmp / "marginals.json").write_text(json.dumps([list(m) for m in workload]))
    (tmp / "cliques.json").write_text(json.dumps([[names[a] for a in m] for m in workload]))
    (tmp / "domain.json").write_text(json.dumps(dict(zip(names, map(int, layout.sizes),
                                                         strict=True))))  # fmt: skip
    with (tmp / "data.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        w.writerows(true.astype(np.int64).tolist())


def read_codes(path: Path, names: list[str]) -> np.ndarray:
    """Synthetic codes from ours or a smartnoise peer (``.npz``) or an AIM driver (CSV)."""
    if path.suffix == ".npz":
        return np.load(path)["codes"]
    with path.open() as f:
        header = next(csv.reader(f))
    if header != names:
        raise SystemExit(f"{path}: columns {header} are not the domain's {names}")
    return np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)


def fit_rows(args: argparse.Namespace) -> None:
    data, layout, true = load(args.dataset)
    assert data.domain is not None
    args.n = data.n
    delta = 1.0 / data.n**2
    path = RESULTS / f"{args.out}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    algorithms = list(args.algorithms)
    if args.equal_guarantee and "ours" in algorithms and "ours-2rho" not in algorithms:
        algorithms.insert(algorithms.index("ours") + 1, "ours-2rho")
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        workload = workload_of(data, layout, args.workload, args.workload_seed)
        write_inputs(tmp, data, layout, true, workload)
        for seed, eps, algo in itertools.product(args.seeds, args.epsilons, algorithms):
            out_codes = tmp / ("synth.csv" if algo in AIM_PEERS else "synth.npz")
            out_codes.unlink(missing_ok=True)
            if algo in ("ours", "ours-2rho"):
                options = json.loads(args.options or "{}")
                if args.neighbours:
                    options["neighbours"] = args.neighbours
                if algo == "ours-2rho":
                    options["equal_guarantee"] = True
                cmd: list[str] | None = [
                    sys.executable, __file__, "--one", "--dataset", args.dataset,
                    "--marginals", str(tmp / "marginals.json"), "--epsilon", str(eps),
                    "--delta", str(delta), "--seed", str(seed), "--out-codes", str(out_codes),
                    "--options", json.dumps(options)]  # fmt: skip
            else:
                cmd = peer_command(algo, tmp, eps, seed, out_codes, args)
            if cmd is None:
                continue
            info, failure = launch(cmd, args.timeout, args.memory_gb)
            info.pop("out", None)  # a temporary path
            row: dict[str, Any] = {
                "dataset": args.dataset, "workload": args.workload,
                "workload_seed": args.workload_seed, "algorithm": algo,
                "options": label(algo, args), "epsilon": eps, "seed": seed, **info,
            }  # fmt: skip
            if algo == "ours-2rho":
                row["rho"] = equal_guarantee_rho(eps, delta)
            if not failure:
                synth = read_codes(out_codes, list(data.domain.names))
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


# --- where ours' largest errors are -------------------------------------------------------------
def worst(args: argparse.Namespace) -> None:
    """Ours refitted in this process (the same arguments as a ``--part fit`` row, so the same
    release) at each epsilon and seed: the three marginals of largest cell error and the three
    of largest TV in the workload, in the random 3-way draws and in the random 5-way draw,
    each with its largest cell, that cell's share of the records in the data and in the
    release, and whether a round measured the marginal or a pair of its attributes."""
    data, layout, true = load(args.dataset)
    assert data.domain is not None
    attrs, names = data.domain.attributes, data.domain.names
    workload = workload_of(data, layout, args.workload, args.workload_seed)
    all3 = workload_of(data, layout, "all3", 0)
    outside = [m for m in all3 if m not in set(workload)]
    pool = outside if len(outside) >= 64 else all3
    random3 = sorted({pool[i] for s in EVAL_SEEDS
                      for i in np.random.default_rng(s).choice(len(pool), min(64, len(pool)),
                                                               replace=False)})  # fmt: skip
    five = indices(data, fem_marginals(data.domain, 5, 64, data.n, seed=EVAL_SEEDS[0]))
    options = json.loads(args.options or "{}")
    if args.neighbours:
        options["neighbours"] = args.neighbours
    for eps, seed in itertools.product(args.epsilons, args.seeds):
        model = AdaptiveProjection(seed=seed, epsilon=eps, delta=1.0 / data.n**2, **options)
        release = model.fit(data, to_workload(data, workload))
        synth = release_codes(release, layout)
        rounds = [tuple(sorted(r["marginal"])) for r in release.rounds
                  if isinstance(r.get("round"), int)]  # fmt: skip
        print(f"{args.dataset} epsilon {eps:g} seed {seed}: {len(rounds)} rounds; measured "
              f"{'; '.join(' x '.join(names[a] for a in r) for r in rounds)}")  # fmt: skip
        for label_, ms in (("workload", workload), ("random 3-way", random3), ("5-way", five)):
            me, tv = marginal_errors(true, synth, layout.sizes, ms)
            print(f"  {label_}: {len(ms)} marginals, max {me.max():.4f}, mean TV {tv.mean():.4f}")
            for by, i in [("max", i) for i in np.argsort(-me)[:3]] + [
                ("TV", i) for i in np.argsort(-tv)[:3]
            ]:
                m = ms[i]
                shape = [int(layout.sizes[a]) for a in m]
                p = marginal_counts(true, layout.sizes, m) / data.n
                q = marginal_counts(synth, layout.sizes, m) / len(synth)
                k = int(np.abs(p - q).argmax())
                cell = np.unravel_index(k, shape)
                at = ", ".join(f"{names[a]}={attrs[a].labels[c]}"
                               for a, c in zip(m, cell, strict=True))  # fmt: skip
                pairs = [pr for pr in itertools.combinations(m, 2)
                         if any(set(pr) <= set(r) for r in rounds)]  # fmt: skip
                print(
                    f"    by {by}: {' x '.join(names[a] for a in m)}: max {me[i]:.4f} at "
                    f"({at}) {p[k]:.4f} in the data, {q[k]:.4f} released; TV {tv[i]:.4f}; "
                    f"measured: {'itself' if m in rounds else 'no'}, pairs "
                    f"{[' x '.join(names[a] for a in pr) for pr in pairs] or 'none'}"
                )
        print(flush=True)


# --- report --------------------------------------------------------------------------------------
METRICS = ("workload_max", "workload_tv", "random64_max", "random64_tv", "all3_max", "all3_tv",
           "five64_max", "five64_tv", *(f"fem{k}_s{S}_{m}" for k, S in PEER_PROTOCOL
                                        for m in ("max", "tv")),
           "seconds", "peak_bytes")  # fmt: skip


def report(args: argparse.Namespace) -> None:
    folder = RESULTS / args.report_from
    rows = []
    for p in sorted(folder.glob("*.csv")):
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
    with (folder / "summary.csv").open("w", newline="") as f:
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
    _means(summary)
    _goal(summary)
    if not args.report_from:
        _figure(summary)


STRONG = tuple(AIM_PEERS)


def _better(keyed: dict[tuple, dict[str, Any]], key: tuple, m: str) -> dict[str, Any] | None:
    """The strong peer with the lower mean on ``m`` at ``key`` (+ algorithm), among those run."""
    runs = [keyed[(*key, a)] for a in STRONG if (*key, a) in keyed]
    runs = [r for r in runs if r["runs"] and m in r]
    return min(runs, key=lambda r: r[m]) if runs else None


def _compare(summary: list[dict[str, Any]]) -> None:
    """Markdown: ours beside each AIM (mean [min-max] (runs) over seeds), the ratio of ours to
    the better of the two strong peers, and smartnoise's AIM and MST."""
    keyed = {(s["dataset"], s["workload"], s["workload_seed"], s["epsilon"], s["algorithm"]): s
             for s in summary}  # fmt: skip
    print("\n| data, workload | epsilon | measure | ours | authors' AIM | dpmm AIM | "
          "ours / better AIM | smartnoise AIM | MST |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for (ds, wl, ws, eps, algo), ours in sorted(keyed.items()):
        key = (ds, wl, ws, eps)
        if algo not in ("ours", "ours-2rho"):
            continue
        others = [keyed.get((*key, a)) for a in (*STRONG, "aim", "mst")]
        if not any(o is not None and o["runs"] for o in others):
            continue
        for m in METRICS:
            if m not in ours:
                continue
            scale = 2**30 if m == "peak_bytes" else 1
            fmt = "{:.1f}" if m == "seconds" else "{:.2f}" if m == "peak_bytes" else "{:.4f}"

            def cell(s: dict[str, Any] | None, m: str = m, scale: float = scale,
                     fmt: str = fmt) -> str:  # fmt: skip
                if s is None or m not in s:
                    return "-"
                v, lo, hi = (s[k] / scale for k in (m, m + "_min", m + "_max"))
                return f"{fmt.format(v)} [{fmt.format(lo)}-{fmt.format(hi)}] ({s['runs']})"

            best = _better(keyed, key, m)
            ratio = f"{ours[m] / best[m]:.2f}" if best is not None else "-"
            print(f"| {ds}, {wl}/{ws} | {eps:g} | {m}{' (ours-2rho)' if algo != 'ours' else ''}"
                  f" | {cell(ours)} | {' | '.join(cell(o) for o in others[:2])} | {ratio} | "
                  f"{' | '.join(cell(o) for o in others[2:])} |")  # fmt: skip


def _means(summary: list[dict[str, Any]]) -> None:
    """Markdown: one row per release and epsilon, the goal's cells as means over runs."""
    print("\n| data | epsilon | release (runs) | workload 3-way max / TV | random 3-way max / TV | "
          "random 5-way max / TV | seconds | peak GiB |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    order = {a: i for i, a in enumerate(("ours", "ours-2rho", *STRONG))}
    rows = [s for s in summary if s["algorithm"] in order and s["runs"]]
    for s in sorted(rows, key=lambda s: (s["dataset"], s["workload"], s["epsilon"],
                                         order[s["algorithm"]])):  # fmt: skip
        pairs = [f"{s[f'{m}_max']:.4f} / {s[f'{m}_tv']:.4f}"
                 for m in ("workload", "random64", "five64")]  # fmt: skip
        print(f"| {s['dataset']}, {s['workload']}/{s['workload_seed']} | {s['epsilon']:g} | "
              f"{s['algorithm']} ({s['runs']}) | {' | '.join(pairs)} | {s['seconds']:.1f} | "
              f"{s['peak_bytes'] / 2**30:.2f} |")  # fmt: skip


# The goal at the same relation, cell by cell: ours / the better strong peer at most this
# (a mean TV 0.9, a max error 1.0, the fit's seconds 0.1 of the faster peer's), and ours'
# peak resident memory at most GOAL_GIB.
GOAL = {"tv": 0.9, "max": 1.0, "seconds": 0.1}
GOAL_GIB = 1.0


def _goal(summary: list[dict[str, Any]]) -> None:
    """Markdown: the goal cell by cell (ratio = ours / the better of the two strong peers on
    that cell; bold where the ratio is above ``GOAL``, or the peak memory above
    ``GOAL_GIB``): ``ours`` at the same nominal epsilon, ``ours-2rho`` at the equal
    guarantee."""
    keyed = {(s["dataset"], s["workload"], s["workload_seed"], s["epsilon"], s["algorithm"]): s
             for s in summary}  # fmt: skip

    def ratios(ours: dict[str, Any], key: tuple, *ms: str) -> str:
        out = []
        for m in ms:
            best = _better(keyed, key, m)
            if best is None or m not in ours:
                out.append("-")
                continue
            r = ours[m] / best[m]
            ok = r <= GOAL[m.rsplit("_", 1)[-1]]
            out.append(f"{r:.2f}" if ok else f"**{r:.2f}**")
        return " / ".join(out)

    print(
        "\n| ours | data, workload | epsilon | 3-way max (workload / random64) | 3-way mean TV "
        "(workload / random64) | 5-way max / TV | time | peak GiB | runs ours, authors', dpmm |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (ds, wl, ws, eps, algo), ours in sorted(keyed.items()):
        key = (ds, wl, ws, eps)
        if algo not in ("ours", "ours-2rho") or _better(keyed, key, "workload_max") is None:
            continue
        runs = ", ".join(str(keyed[(*key, a)]["runs"]) if (*key, a) in keyed else "0"
                         for a in STRONG)  # fmt: skip
        gib = ours["peak_bytes_max"] / 2**30
        memory = f"{gib:.2f}" if gib <= GOAL_GIB else f"**{gib:.2f}**"
        print(f"| {algo} | {ds}, {wl}/{ws} | {eps:g} | "
              f"{ratios(ours, key, 'workload_max', 'random64_max')} | "
              f"{ratios(ours, key, 'workload_tv', 'random64_tv')} | "
              f"{ratios(ours, key, 'five64_max', 'five64_tv')} | "
              f"{ratios(ours, key, 'seconds')} | {memory} | {ours['runs']}, {runs} |")  # fmt: skip


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
    p.add_argument("--part", choices=("kernel", "fit", "wide", "worst"))
    p.add_argument("--widths", nargs="+", type=int, default=[1000, 16000, 512000])
    p.add_argument("--report", action="store_true")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--report-from", default="", help="a subfolder of docs/results/utility")
    p.add_argument("--dataset", default="adult-pgm")
    p.add_argument("--workload", default="all3", choices=("all3", "fem64"))
    p.add_argument("--workload-seed", type=int, default=0)
    p.add_argument(
        "--algorithms",
        nargs="+",
        default=["ours", "aim-authors", "aim-dpmm"],
        choices=("ours", "ours-2rho", *AIM_PEERS, "aim", "mst"),
    )
    p.add_argument(
        "--equal-guarantee",
        action="store_true",
        help="also run ours at the replace-one rho AIM's budget guarantees (ours-2rho)",
    )
    p.add_argument(
        "--neighbours",
        choices=("replace-one", "add-remove"),
        help="ours under this neighbouring relation (default: the estimator's)",
    )
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
    elif args.part == "worst":
        worst(args)
    if args.report:
        report(args)


if __name__ == "__main__":
    main()
