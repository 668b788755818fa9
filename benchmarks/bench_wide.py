"""Wide sparse data: the default release of npm_words beside the tables that read no data.

Data: ``$DPQUERY_DATA_DIR/wide/npm_words`` (196,708 npm package descriptions as bags of
words over 45,375 words, items ordered by frequency), whole (d = 45,375) and restricted to
its 5,000 most frequent words (d = 5,000). Each release is the whole ``dpquery synth``
command a user runs (read, fit, write), in its own process, timed, with its peak memory
(the child's maximum resident set size): epsilon 1 and 0.1, delta = 1/n^2, ``--seed`` 0,
1, 2. Candidates: ``auto`` (the default) and ``dualquery`` (by name, its defaults).

Input and output forms: when ``dpquery synth`` reads item data (``--transactions``), the
input is the ``row item`` file and the release is written as ``S.transactions.csv``;
otherwise the input is the bits as an encoded ``.npz`` over a domain of one binary attribute
per word, and the released records are written with their weights (``--weights``), never as
a dense n-row CSV.

Scores (:mod:`dpquery.evaluation.wide`, NOT private, for benchmarking only), as fractions of
records, max and mean absolute error: every word's frequency (1-way), the co-occurrence of
every pair among the 200 most frequent words (pairs), 2,000 random 3-word conjunctions among
the 100 most frequent (triples, seed 0); beside ``zeros`` (the all-zero table), ``indep``
(the product of the TRUE word frequencies: reads the data) and ``uniform``. The done-when
targets are checked on every seed (met = met by the worst seed).

Generated shapes (``--shape small`` or ``--shape netflix``, ``dpquery.datasets.shapes``,
data seed ``--data-seed``, 0 by default): a table of that public shape instead of npm_words,
given to ``synth`` as a scipy sparse ``.npz`` and scored with the same measures beside the
same references (``zeros``, ``indep``); ``--d`` is then ignored (the shape's d)::

    nice .venv/bin/python benchmarks/bench_wide.py --shape small --seeds 10 11 12 \
        --candidates auto --out shape-small

Real user x item tables (``--items NAME=PATH``, or ``NAME`` for
``$DPQUERY_EXTRA_DATA_DIR/movielens/NAME.csv``; ``user_items.py``): a CSV whose first two
columns are the user and item ids, each distinct user a record, each distinct item id an
item, a repeated pair one incidence; given to ``synth`` as a scipy sparse ``.npz`` and scored
as a generated shape is (every measure against zeros'), one table after the other::

    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/bench_wide.py \
        --items ratings-2016 --seeds 10 11 12 --epsilons 1 --candidates auto \
        --neighbours add-remove --pipelinedp venv-pdp/bin/python --out ar-pipelinedp-ml2016

Quick mode (``make bench``, ``DPQUERY_BENCH_QUICK=1``, or ``--quick``): d = 5,000, seed 10.
Full protocol (``make bench FULL=1 BENCH=wide``): both d, seeds 10, 11, 12 (the wide
release's constants were tuned on seeds 0-2, so these report on seeds it was not tuned on).
Rows are appended to ``docs/results/wide/<out>.csv`` as each run ends, the table to
``<out>.md``::

    nice .venv/bin/python benchmarks/bench_wide.py --d 5000 45375 --seeds 10 11 12 --out full
    .venv/bin/python benchmarks/bench_wide.py --report full     # the table again

The neighbouring relation (``--neighbours add-remove``): the wide release under add/remove
(``n`` private: the output holds a noisy ``n`` records) by its library path
(``registry.build("wide", ...)``, then the records written as ``synth`` writes them), in its
own process, timed as the command is: what the release itself outputs, whatever the command
around it prints. ``--shape-n N`` scales a generated shape to ``N`` records, its other
parameters unchanged.

PipelineDP beside it (``--pipelinedp PYTHON``, the Python of a venv with ``pipeline-dp``;
the runners of ``shared/peers/pipelinedp``, ``--pipelinedp-dir``): a DP count of every item
and of the pairs among its 200 largest DP counts, each at half of ``(epsilon, delta)``,
add/remove, one record one privacy unit, ``max_partitions_contributed`` fixed
(``--pdp-bounds 8 32 128``) or chosen by PipelineDP's own tuner (``tuned``: 10% of epsilon,
the rest to the two counts). Its answers are scored with the same measures: 1-way
``clip(count / n, 0, 1)``, a pair with both items in its DP head by its DP pair count, any
other by the product of the two 1-way answers (no triples: it releases no records; with
``--pdp-oneway-only`` it counts the items alone, with the whole budget, and every pair is such
a product: where its pair rows are too many for it to run). Its
noise is not seedable: ``--pdp-runs`` (default: the number of seeds) counts its runs::

    nice .venv/bin/python benchmarks/bench_wide.py --shape small --seeds 10 11 --epsilons 1 \
        --candidates auto --neighbours add-remove --pipelinedp venv-pdp/bin/python \
        --out ar-small
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data import Binary, BinaryData, Domain, ItemSets, read_item_sets, save_binary
from dpquery.data.items import write_item_sets
from dpquery.datasets.shapes import SHAPES, generate
from dpquery.evaluation.wide import MEASURES, REFERENCES, WideMeasures
from user_items import describe, read_user_items, tables

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "wide"
NPM = Path("wide") / "npm_words.transactions.csv.gz"
N, D = 196_708, 45_375
CANDIDATES = ("auto", "dualquery")
EPSILONS = (1.0, 0.1)
SHORT = {"one_way": "1-way", "pairs": "pairs", "triples": "triples"}
SCORES = [f"{m}_{s}" for m in MEASURES for s in ("max", "mean")]
FIELDS = ["data", "d", "epsilon", "seed", "candidate", "algorithm", "records", "seconds",
          "peak_gib", "form", "failure", *SCORES, "neighbours", "bound"]  # fmt: skip
LIMITS = {"seconds": 300.0, "peak_gib": 4.0}  # the whole synth command at d = 45,375
_CLI = "import sys; from dpquery.cli import main; sys.exit(main())"
TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"  # GNU time
PEERS = ROOT.parent / "shared" / "peers" / "pipelinedp"
REPLACE_ONE = "replace-one"
# The library path of the wide release, for a relation the synth command does not take.
_LIBRARY = """
import sys
import scipy.sparse as sp
from dpquery.algorithms import registry
from dpquery.data import ItemSets, read_item_sets, write_item_sets
data, out, epsilon, delta, seed, neighbours = sys.argv[1:]
matrix = sp.load_npz(data) if data.endswith(".npz") else read_item_sets(data).matrix
options = {"epsilon": float(epsilon), "delta": float(delta), "neighbours": neighbours}
release = registry.build("wide", options, seed=int(seed)).fit(matrix)
write_item_sets(out, ItemSets(release.records.matrix))
print("algorithm: wide, records:", release.records.n)
"""


# -- inputs --------------------------------------------------------------------------------
def load_real(d: int) -> ItemSets:
    """npm_words over its ``d`` most frequent words (items 0..d-1)."""
    base = Path(os.environ.get("DPQUERY_DATA_DIR", ROOT.parent / "shared" / "data"))
    items = read_item_sets(base / NPM, n=N, d=D)
    return items if d == D else ItemSets(items.matrix[:, :d])


def reads_items() -> bool:
    """Whether ``dpquery synth`` reads item data (``--transactions``) on this version."""
    out = subprocess.run([sys.executable, "-c", _CLI, "synth", "--help"],
                         capture_output=True, text=True, check=False).stdout  # fmt: skip
    return "--transactions" in out


def input_file(real: ItemSets, folder: Path, sparse: bool, shape: str | None = None) -> Path:
    """The data as the user gives it to ``synth``: a row-item file, or an encoded .npz (a
    generated shape: a scipy sparse .npz, read as item data)."""
    if shape is not None:
        path = folder / f"{shape}.npz"
        if not path.exists():
            sp.save_npz(path, real.matrix)
        return path
    if sparse:
        path = folder / f"npm{real.d}.transactions.csv"
        if not path.exists():
            write_item_sets(path, real)
        return path
    path = folder / f"npm{real.d}.npz"
    if not path.exists():
        bits = real.to_binary()
        domain = Domain(tuple(Binary(f"w{j}", ("0", "1")) for j in range(real.d)))
        save_binary(path, BinaryData(bits.words, bits.n, domain=domain))
    return path


def synth_command(data: Path, out: Path, candidate: str, epsilon: float, seed: int,
                  sparse: bool, n: int = N,
                  neighbours: str = REPLACE_ONE) -> list[str]:  # fmt: skip
    """The synth command; under another relation than replace-one, the wide release's
    library path (item data only; module docstring)."""
    if neighbours != REPLACE_ONE:
        return [sys.executable, "-c", _LIBRARY, str(data), str(out), str(epsilon),
                repr(1 / n**2), str(seed), neighbours]  # fmt: skip
    cmd = [sys.executable, "-c", _CLI, "synth", "--data", str(data), "--out", str(out),
           "--algorithm", candidate, "--epsilon", str(epsilon), "--delta", repr(1 / n**2),
           "--seed", str(seed)]  # fmt: skip
    return cmd + (["--transactions"] if sparse else ["--weights"])


def released(out: Path, d: int) -> ItemSets:
    """The records ``synth`` wrote: item sets, or weighted records over the word columns."""
    if ".transactions" in out.suffixes:
        return read_item_sets(out, allow_empty=True)  # an all-empty release is a release
    table = pd.read_csv(out, dtype=str)
    weights = table.pop("weight").to_numpy(np.float64)
    bits = (table[[f"w{j}" for j in range(d)]].to_numpy() == "1").astype(np.uint8)
    return ItemSets(sp.csr_array(bits), weights)


# -- one run -------------------------------------------------------------------------------
def run(cmd: list[str], timeout: float) -> tuple[int, float, float, str, str]:
    """Exit code, wall seconds, the command's peak resident memory (GiB), stdout, stderr.

    The peak is GNU time's (``%M``): the rusage of a child of this process would not do, as
    Linux records the parent's high-water mark in the child's ``ru_maxrss`` when it execs.
    """
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        timed = [TIME, "-f", "%M", "-o", str(peak_file), *cmd]
        with (Path(tmp) / "out").open("w+") as out, (Path(tmp) / "err").open("w+") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(timed, stdout=out, stderr=err, start_new_session=True)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # time and the command under it
                code = proc.wait()
            seconds = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            lines = peak_file.read_text().split() if peak_file.exists() else []
            peak = int(lines[-1]) / 2**20 if lines and lines[-1].isdigit() else float("nan")
            return code, seconds, peak, out.read(), err.read()


def one(real: ItemSets, measures: WideMeasures, data: Path, folder: Path, candidate: str,
        epsilon: float, seed: int, sparse: bool, timeout: float,
        dataset: str = "npm_words", neighbours: str = REPLACE_ONE) -> dict[str, Any]:  # fmt: skip
    out = folder / (f"{candidate}.transactions.csv" if sparse else f"{candidate}.csv")
    out.unlink(missing_ok=True)
    cmd = synth_command(data, out, candidate, epsilon, seed, sparse, real.n, neighbours)
    code, seconds, peak, stdout, stderr = run(cmd, timeout)
    row: dict[str, Any] = {"data": dataset, "d": real.d, "epsilon": epsilon, "seed": seed,
                           "candidate": candidate, "seconds": seconds, "peak_gib": peak,
                           "form": "items" if sparse else "npz+weights",
                           "neighbours": neighbours}  # fmt: skip
    if code != 0:
        why = f"timeout after {timeout:.0f} s" if code < 0 else f"exit {code}"  # killed: < 0
        row["failure"] = f"{why}: {stderr.strip().splitlines()[-1:] or ''}"
        return row
    ran = [ln for ln in stdout.splitlines() if ln.startswith("algorithm:")]
    row["algorithm"] = ran[0].split()[1].rstrip(",") if ran else candidate
    synthetic = released(out, real.d)
    row["records"] = synthetic.n
    for m, s in measures.scores(synthetic).items():
        row[f"{m}_max"], row[f"{m}_mean"] = s["max"], s["mean"]
    out.unlink(missing_ok=True)
    return row


# -- PipelineDP ----------------------------------------------------------------------------
PDP_HEAD = 200  # the items whose pairs PipelineDP counts (the pairs measure's top 200)


def pipelinedp(real: ItemSets, measures: WideMeasures, items: Path, folder: Path,
               epsilon: float, bound: str, run_no: int, args: argparse.Namespace,
               dataset: str) -> dict[str, Any]:  # fmt: skip
    """One PipelineDP run (module docstring), timed as the synth command is (the tuner's
    run included), scored by :func:`pipelinedp_scores`."""
    python, where = args.pipelinedp, Path(args.pipelinedp_dir)
    row: dict[str, Any] = {"data": dataset, "d": real.d, "epsilon": epsilon, "seed": run_no,
                           "candidate": f"pipelinedp {args.pdp_noise} l0={bound}"
                           + (" (items only)" if args.pdp_oneway_only else ""),
                           "algorithm": "pipelinedp", "neighbours": "add-remove",
                           "form": "answers", "seconds": 0.0, "peak_gib": 0.0}  # fmt: skip
    share, l0 = 1.0, bound
    if bound == "tuned":  # PipelineDP's own private choice, 10% of epsilon
        tune = [python, str(where / "pdp_l0.py"), str(items), "--eps", str(epsilon),
                "--noise", args.pdp_noise]  # fmt: skip
        code, seconds, peak, stdout, stderr = run(tune, args.timeout)
        row.update(seconds=seconds, peak_gib=peak)
        if code != 0:
            row["failure"] = f"tuner exit {code}: {stderr.strip().splitlines()[-1:]}"
            return row
        share, l0 = 0.9, str(json.loads(stdout)["chosen_max_partitions_contributed"])
    out = folder / "pdp.npz"
    cmd = [python, str(where / "pdp_run.py"), str(items), "--eps", repr(share * epsilon),
           "--noise", args.pdp_noise, "--l0", l0, "--out", str(out),
           "--head", str(min(PDP_HEAD, real.d))]  # fmt: skip  # its DP head: at most d items
    cmd += ["--oneway-only"] if args.pdp_oneway_only else []
    code, seconds, peak, stdout, stderr = run(cmd, args.timeout)
    row.update(seconds=row["seconds"] + seconds, peak_gib=max(row["peak_gib"], peak), bound=l0)
    if code != 0:
        row["failure"] = f"exit {code}: {stderr.strip().splitlines()[-1:]}"
        return row
    answers = dict(np.load(out))
    if args.pdp_oneway_only:  # no pair was counted: its (zero) pair table is not an answer
        answers["head"] = np.zeros(0, dtype=np.int64)
    for m, s in pipelinedp_scores(measures, answers).items():
        row[f"{m}_max"], row[f"{m}_mean"] = s["max"], s["mean"]
    return row


def pipelinedp_scores(measures: WideMeasures, answers: Any) -> dict[str, dict[str, float]]:
    """Max and mean error of PipelineDP's answers (:func:`pipelinedp_answers`) on the 1-way
    and pair measures."""
    out = {}
    got = pipelinedp_answers(measures, answers)
    for m, true in (("one_way", measures.one_way), ("pairs", measures.pairs)):
        err = np.abs(got[m] - true)
        out[m] = {"max": float(err.max()), "mean": float(err.mean())}
    return out


def pipelinedp_answers(measures: WideMeasures, answers: Any) -> dict[str, np.ndarray]:
    """PipelineDP's counts as answers to the 1-way and pair measures: fractions of the ``n``
    records, each clipped to [0, 1]; a pair outside its DP head is answered by the product of
    the two 1-way answers (post-processing)."""
    n = measures.n
    f1 = np.clip(answers["oneway"] / n, 0.0, 1.0)
    position = np.full(measures.d, -1)
    position[answers["head"]] = np.arange(len(answers["head"]))
    upper = np.triu_indices(len(measures.pair_items), k=1)
    i, j = measures.pair_items[upper[0]], measures.pair_items[upper[1]]
    pi, pj = position[i], position[j]
    both = (pi >= 0) & (pj >= 0)
    lo, hi = np.where(both, np.minimum(pi, pj), 0), np.where(both, np.maximum(pi, pj), 0)
    f2 = np.clip(np.where(both, answers["pairs"][lo, hi] / n, f1[i] * f1[j]), 0.0, 1.0)
    return {"one_way": f1, "pairs": f2}


def reference_rows(measures: WideMeasures, data: str = "npm_words") -> list[dict[str, Any]]:
    rows = []
    for name, scores in measures.reference_scores().items():
        row: dict[str, Any] = {"data": data, "d": measures.d, "candidate": name, "algorithm": name}
        for m, s in scores.items():
            row[f"{m}_max"], row[f"{m}_mean"] = s["max"], s["mean"]
        rows.append(row)
    return rows


# -- the table -----------------------------------------------------------------------------
def _f(row: dict[str, Any], key: str) -> float | None:
    v = row.get(key)
    return None if v in (None, "") else float(v)


def targets(d: int, epsilon: float, runs: list[dict], ref: dict[str, dict]) -> list[tuple]:
    """The done-when targets of the default release: (what, worst seed's value, limit)."""
    z, ind = ref["zeros"], ref["indep"]

    def worst(key: str) -> float:
        return max(float(r[key]) for r in runs)

    if epsilon == 1.0:
        share = 0.4 if d <= 5000 else 0.5
        out = [
            ("1-way max <= 0.005", worst("one_way_max"), 0.005),
            (f"1-way mean <= {share}x zeros'", worst("one_way_mean"), share * z["one_way_mean"]),
            ("pair max <= 0.8x indep's", worst("pairs_max"), 0.8 * ind["pairs_max"]),
            ("pair mean <= 0.75x zeros'", worst("pairs_mean"), 0.75 * z["pairs_mean"]),
            ("triple max <= zeros'", worst("triples_max"), z["triples_max"]),
            ("triple mean <= zeros'", worst("triples_mean"), z["triples_mean"]),
        ]
    elif epsilon == 0.1:
        out = [
            ("1-way max <= 0.03", worst("one_way_max"), 0.03),
            ("1-way mean <= 0.8x zeros'", worst("one_way_mean"), 0.8 * z["one_way_mean"]),
            ("pair max <= zeros'", worst("pairs_max"), z["pairs_max"]),
            ("pair mean <= zeros'", worst("pairs_mean"), z["pairs_mean"]),
        ]
    else:
        out = []
    if d == D:
        out += [(f"synth <= {LIMITS['seconds']:.0f} s", worst("seconds"), LIMITS["seconds"]),
                (f"synth <= {LIMITS['peak_gib']:.0f} GiB", worst("peak_gib"),
                 LIMITS["peak_gib"])]  # fmt: skip
    return out


def shape_targets(runs: list[dict], ref: dict[str, dict]) -> list[tuple]:
    """On a generated shape: never worse than publishing nothing (the all-zeros table), on
    every measure, max and mean, worst seed."""
    return [(f"{key.replace('_', ' ')} <= zeros'", max(float(r[key]) for r in runs),
             ref["zeros"][key]) for key in SCORES]  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per d and epsilon, each release's max / mean (mean over seeds), its time
    and memory, its ratios to zeros and indep, and the targets met or missed."""
    lines: list[str] = []

    def key(r: dict[str, Any]) -> tuple[str, int]:
        return (r.get("data") or "npm_words", int(r["d"]))

    refs = {(*key(r), r["candidate"]): r for r in rows if r["candidate"] in REFERENCES}
    runs = [r for r in rows if r["candidate"] not in REFERENCES]
    for data, d in sorted({key(r) for r in rows}):
        ref = {name: {k: _f(refs[(data, d, name)], k) for k in SCORES} for name in REFERENCES
               if (data, d, name) in refs}  # fmt: skip
        for epsilon in sorted({float(r["epsilon"]) for r in runs if key(r) == (data, d)},
                              reverse=True):  # fmt: skip
            here = [r for r in runs if key(r) == (data, d) and float(r["epsilon"]) == epsilon]
            lines += [
                f"\n### {data}, d = {d:,}, epsilon = {epsilon:g}, delta = 1/n^2\n",
                "| release | seeds | 1-way max / mean | pairs max / mean | triples "
                "max / mean | synth seconds | peak GiB |",
                "|---|---|---|---|---|---|---|",
            ]
            for candidate in dict.fromkeys(r["candidate"] for r in here):
                lines.append(_row(candidate, [r for r in here if r["candidate"] == candidate]))
            for name, r in ref.items():
                cells = [f"{r[f'{m}_max']:.4g} / {r[f'{m}_mean']:.3g}" for m in MEASURES]
                lines.append(f"| {name} (reference) | - | " + " | ".join(cells) + " | - | - |")
            default = [r for r in here if r["candidate"] == "auto" and not r.get("failure")]
            if default and "zeros" in ref and "indep" in ref:
                lines += _ratios(default, ref)
                lines.append("")
                goals = (targets(d, epsilon, default, ref) if data == "npm_words"
                         else shape_targets(default, ref))  # fmt: skip
                for what, value, limit in goals:
                    flag = "met" if value <= limit else "MISSED"
                    lines.append(f"- {what}: worst seed {value:.4g}, limit {limit:.4g}: {flag}")
    return "\n".join(lines)


def _row(candidate: str, group: list[dict[str, Any]]) -> str:
    ok = [r for r in group if not r.get("failure")]
    ran = {str(r["algorithm"]) for r in ok if r.get("algorithm")} - {candidate}
    name = candidate + (f" ({', '.join(sorted(ran))})" if ran else "")
    seeds = ",".join(str(r["seed"]) for r in ok)
    if not ok:
        return f"| {name} | failed: {group[0]['failure']} | | | | | |"

    def mean(key: str) -> float:
        return float(np.mean([float(r[key]) for r in ok]))

    cells = [f"{mean(f'{m}_max'):.4g} / {mean(f'{m}_mean'):.3g}"
             if all(r.get(f"{m}_max") not in (None, "") for r in ok) else "-"
             for m in MEASURES]  # fmt: skip
    return (f"| {name} | {seeds} | " + " | ".join(cells)
            + f" | {mean('seconds'):.1f} | {mean('peak_gib'):.2f} |")  # fmt: skip


def _ratios(default: list[dict[str, Any]], ref: dict[str, dict]) -> list[str]:
    out = ["", "Default release against the references (mean over seeds; < 1 is better):", ""]
    for m in MEASURES:
        parts = []
        for stat in ("max", "mean"):
            v = float(np.mean([float(r[f"{m}_{stat}"]) for r in default]))
            for name in ("zeros", "indep"):
                base = ref[name][f"{m}_{stat}"]
                parts.append(f"{stat} {v / base:.2f}x {name}" if base else f"{stat} ({name}: 0)")
        out.append(f"- {SHORT[m]}: " + ", ".join(parts))
    return out


# -- main ----------------------------------------------------------------------------------
def bench(args: argparse.Namespace) -> list[dict[str, Any]]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{args.out}.csv"
    path.unlink(missing_ok=True)
    sparse = reads_items()
    form = "row-item files" if sparse else "encoded .npz, --weights output"
    print(f"synth reads item data: {sparse} (inputs: {form})", flush=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench_wide.") as tmp:
        folder = Path(tmp)
        for d, given in [(d, None) for d in args.d] + [(0, name) for name in args.items]:
            if given:  # a real user x item table (--items)
                real = read_user_items(args.items[given])
                print(f"{given} ({args.items[given]}): {describe(real)}", flush=True)
            elif args.shape:
                shape = SHAPES[args.shape]
                real = generate(replace(shape, n=args.shape_n or shape.n), args.data_seed)
                print(f"shape {args.shape}, data seed {args.data_seed}: n = {real.n:,}, "
                      f"d = {real.d:,}, {real.nnz:,} ones", flush=True)  # fmt: skip
            else:
                real = load_real(d)
            measures = WideMeasures.of(real, seed=0)
            dataset = given or args.shape or "npm_words"
            if args.shape_n and not given:
                dataset += f" (n = {args.shape_n:,})"
            rows += reference_rows(measures, dataset)
            data = input_file(real, folder, sparse, given or args.shape)
            for epsilon in args.epsilons:
                for seed in args.seeds:
                    for candidate in args.candidates:
                        row = one(real, measures, data, folder, candidate, epsilon, seed,
                                  sparse, args.timeout, dataset, args.neighbours)  # fmt: skip
                        if sparse and str(row.get("failure", "")).startswith("exit"):
                            # a release that cannot take item data: as bits, --weights out
                            dense = input_file(real, folder, False)
                            row = one(real, measures, dense, folder, candidate, epsilon,
                                      seed, False, args.timeout, dataset)  # fmt: skip
                        rows.append(row)
                        _append(path, rows)
                        shown = {k: (f"{v:.4g}" if isinstance(v, float) else v)
                                 for k, v in row.items()}  # fmt: skip
                        print(json.dumps(shown), flush=True)
                if args.pipelinedp:
                    items = folder / "pdp.transactions.csv"
                    write_item_sets(items, real)
                    for bound in args.pdp_bounds:
                        for k in range(args.pdp_runs or len(args.seeds)):
                            rows.append(pipelinedp(real, measures, items, folder, epsilon,
                                                   bound, k, args, dataset))  # fmt: skip
                            _append(path, rows)
                            print(json.dumps(rows[-1], default=str), flush=True)
            for leftover in {*folder.glob("npm*"), *folder.glob("*.npz"), *folder.glob("pdp*")}:
                leftover.unlink()
    _append(path, rows)
    return rows


def _append(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as fh:  # rewritten whole: a run cut short keeps its rows
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        writer.writerows({k: r.get(k, "") for k in FIELDS} for r in rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="d = 5,000, seed 10")
    p.add_argument("--d", nargs="+", type=int, choices=(5000, D))
    p.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        help="a generated table of this shape instead of npm_words (dpquery.datasets.shapes)",
    )
    p.add_argument("--data-seed", type=int, default=0, help="the generated shape's seed")
    p.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    p.add_argument("--seeds", nargs="+", type=int)
    p.add_argument(
        "--candidates",
        nargs="*",
        default=list(CANDIDATES),
        help="none given (--candidates alone): PipelineDP and the references only",
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per synth command")
    p.add_argument("--out", help="results name under docs/results/wide (default quick/full)")
    p.add_argument("--report", metavar="NAME", help="print the table of NAME.csv and exit")
    p.add_argument(
        "--neighbours",
        choices=(REPLACE_ONE, "add-remove"),
        default=REPLACE_ONE,
        help="the relation of the releases (add-remove: n private)",
    )
    p.add_argument("--shape-n", type=int, help="the generated shape scaled to this many records")
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH",
                   help="real user x item CSVs, instead of npm_words (user_items.py)")  # fmt: skip
    p.add_argument(
        "--pipelinedp",
        metavar="PYTHON",
        help="run PipelineDP beside the releases, with this venv's Python",
    )
    p.add_argument("--pipelinedp-dir", default=str(PEERS), help="pdp_run.py and pdp_l0.py")
    p.add_argument(
        "--pdp-bounds",
        nargs="+",
        default=["tuned", "8", "32", "128"],
        help="PipelineDP's max_partitions_contributed: tuned, or fixed values",
    )
    p.add_argument("--pdp-noise", choices=("gaussian", "laplace"), default="gaussian")
    p.add_argument("--pdp-runs", type=int, help="PipelineDP runs per bound (default: seeds)")
    p.add_argument(
        "--pdp-oneway-only",
        action="store_true",
        help="PipelineDP's item counts only, with the whole budget (pairs: products)",
    )
    args = p.parse_args([] if argv is None else argv)
    if args.report:
        with (RESULTS / f"{args.report}.csv").open() as fh:
            print(table(list(csv.DictReader(fh))))
        return
    quick = args.quick or os.environ.get("DPQUERY_BENCH_QUICK", "") not in ("", "0")
    asked, args.items = args.items, tables(args.items)
    if asked:  # the real tables alone, unless a shape or d is asked for too
        args.d = [0] if args.shape else args.d or []
        if not args.d and not args.items:
            p.error("no table to run: every --items table is absent")
    else:
        args.d = [0] if args.shape else args.d or ([5000] if quick else [5000, D])
    args.seeds = args.seeds if args.seeds is not None else ([10] if quick else [10, 11, 12])
    args.out = args.out or ("quick" if quick else "full")
    rows = bench(args)
    text = table(rows)
    (RESULTS / f"{args.out}.md").write_text(
        f"`{' '.join(['bench_wide.py', *(argv or [])])}` (quick={quick}); NOT PRIVATE scores, "
        f"fractions of records\n{text}\n"
    )
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
