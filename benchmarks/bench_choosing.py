"""Which algorithm should ``dpquery synth`` run by default? The measurements behind ``auto``.

Every candidate runs on the default workload (:func:`dpquery.queries.default_workload`: all
3-way marginals of at most n cells, workload seed 0) of each table, at epsilon 0.1 and 1 with
delta = 1/n^2, each fit in its own process (a timeout or an error is a row, not a crash).
Scores, as fractions of records (the answers of the release's records against the true
answers on the private table; NOT private, for choosing only):

* ``workload_max``: the largest cell error over the workload;
* ``workload_tv``: the mean over its marginals of the total variation distance (half the L1
  distance between the two marginal tables);
* ``heldout_max`` / ``heldout_tv``: the same on 64 random 4-way marginals of at most n cells
  (seed 100), none of which is in a 3-way workload;
* beside the two baselines that read no data: ``uniform`` (the uniform distribution over
  the domain) and ``zeros`` (one all-zero record); ``seconds``: wall-clock seconds of the
  fit and of answering both workloads on its records, ``fit_seconds`` of the fit alone.

Tables: ``adult-pgm`` (48,842 x 14), ``acs`` (27,253 x 22), ``cps`` (49,427 x 5), ``kdd99``
(494,021 x 41), ``small`` (344 rows of adult-pgm drawn with seed 0, its public domain), and
``wide`` (DualQuery's biased bits, n = 20,000 x d = 512,000 free bits, seed 0).

Usage (``DPQUERY_DATA_DIR`` set, from the repository root, niced on a shared machine)::

    python benchmarks/bench_choosing.py --datasets small cps adult-pgm acs kdd99 \
        --epsilons 0.1 1 --seeds 2 3 --candidates auto fem+mwem dualquery --out grid
    python benchmarks/bench_choosing.py --report     # the table of docs/choosing.md
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.algorithms import registry
from dpquery.algorithms.baselines import UniformDistribution, ZerosDataset
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.encode import encode
from dpquery.privacy.delta import default_delta
from dpquery.queries import Workload, answer, default_workload
from dpquery.queries.default import cells_of, default_marginals

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "choosing"
WORKLOAD_SEED = 0
HELDOUT_SEED = 100
SMALL_ROWS, SMALL_SEED = 344, 0
WIDE_N, WIDE_D = 20_000, 512_000
# The candidates, as the registry builds them from flat options (the CLI's path).
CANDIDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "auto": ("auto", {}),
    "adaptive-projection": ("adaptive-projection", {}),
    "fem+mwem": ("fem", {"fraction": 0.5}),
    "fem": ("fem", {}),
    "dualquery": ("dualquery", {}),
    "dqrs": ("dqrs", {}),
    "wide-dense": ("wide-dense", {}),
}
BASELINES = ("uniform", "zeros")
FIELDS = ("dataset", "n", "g", "d", "epsilon", "delta", "seed", "candidate", "algorithm",
          "records", "seconds", "peak_gib", "workload_marginals", "workload_max", "workload_tv",
          "heldout_max", "heldout_tv", "failure", "fit_seconds")  # fmt: skip


def load(name: str) -> BinaryData:
    """The table ``name`` of the module docstring."""
    if name == "small":
        table, domain = datasets.load_table("adult-pgm")
        return encode(table.sample(SMALL_ROWS, random_state=SMALL_SEED), domain)
    if name == "wide":
        from dpquery.data.synthetic import biased_bits

        data = biased_bits(WIDE_N, WIDE_D, seed=0)
        return BinaryData(data.words, data.n, data.onehot_groups, Domain.binary(WIDE_D))
    return datasets.load(name)


def heldout(data: BinaryData, workload_k: int = 3) -> Workload:
    """64 random (k+1)-way marginals of at most n cells (seed :data:`HELDOUT_SEED`)."""
    assert data.domain is not None
    sets = default_marginals(data.domain, data.n, k=workload_k + 1, seed=HELDOUT_SEED,
                             max_marginals=64)  # fmt: skip
    return cells_of(data.domain, sets)


def scores(workload: Workload, true: np.ndarray, released: np.ndarray) -> tuple[float, float]:
    """Largest cell error and mean total variation over the workload's marginals."""
    err = np.abs(np.asarray(released, dtype=np.float64) - true)
    assert workload.marginals is not None
    tv = 0.5 * np.add.reduceat(err, workload.marginals[:-1])
    return float(err.max()), float(tv.mean())


def run_one(args: argparse.Namespace) -> None:
    """One fit (or one baseline) in this process; prints one JSON line."""
    data = load(args.dataset)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=WORKLOAD_SEED)
    held = heldout(data)
    delta = default_delta(data.n)
    row: dict[str, Any] = {"workload_marginals": len(workload.marginals) - 1}
    start = time.perf_counter()  # "seconds": the fit and the answers of its records
    if args.candidate in BASELINES:
        model = UniformDistribution() if args.candidate == "uniform" else ZerosDataset()
        released = [model.fit(data, w).answers for w in (workload, held)]
        row.update(algorithm=args.candidate, records=None)
    else:
        name, options = CANDIDATES[args.candidate]
        given = {"epsilon": args.epsilon, "delta": delta, **options, **json.loads(args.options)}
        model = registry.build(name, given, seed=args.seed, progress=False)
        release = model.fit(data, workload)
        row["fit_seconds"] = time.perf_counter() - start
        released = [answer(w, release.records) for w in (workload, held)]
        row.update(algorithm=release.algorithm, records=release.records.m,
                   spent=release.ledger.spent)  # fmt: skip
    row["seconds"] = time.perf_counter() - start
    for prefix, w, r in zip(("workload", "heldout"), (workload, held), released, strict=True):
        row[f"{prefix}_max"], row[f"{prefix}_tv"] = scores(w, answer(w, data), r)
    row.update(n=data.n, d=data.d, g=len(data.domain), delta=delta)
    row["peak_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps(row))


def launch(cmd: list[str], timeout: float) -> dict[str, Any]:
    """Run ``cmd`` (its last stdout line is JSON); a timeout or an error is a failure row."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.time()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return {"failure": f"timeout after {timeout:.0f} s", "seconds": time.time() - start}
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        if proc.returncode != 0 or not lines:
            return {"failure": f"exit {proc.returncode}: {err.read()[-300:]!r}",
                    "seconds": time.time() - start}  # fmt: skip
        return dict(json.loads(lines[-1]))


def grid(args: argparse.Namespace) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{args.out}.csv"
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for dataset in args.datasets:
            runs = [(b, None, None) for b in BASELINES if args.baselines] + [
                (c, e, s) for e in args.epsilons for s in args.seeds for c in args.candidates
            ]
            for candidate, epsilon, seed in runs:
                cmd = [sys.executable, __file__, "--part", "one", "--dataset", dataset,
                       "--candidate", candidate, "--epsilon", str(epsilon or 1.0),
                       "--seed", str(seed or 0)]  # fmt: skip
                row = launch(cmd, args.timeout)
                row.update(dataset=dataset, candidate=candidate, epsilon=epsilon, seed=seed)
                writer.writerow(row)
                f.flush()
                shown = {k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()
                         if k in FIELDS}  # fmt: skip
                print(json.dumps(shown), flush=True)


def report(args: argparse.Namespace) -> None:
    """Markdown: per dataset and epsilon, each candidate's mean over seeds (min-max)."""
    rows: list[dict[str, str]] = []
    for path in sorted(RESULTS.glob("*.csv")):
        with path.open() as f:
            rows += list(csv.DictReader(f))
    print("| data (n x g) | epsilon | release | workload max | workload TV | held-out max |"
          " held-out TV | seconds (fit + scoring) | runs |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    keys: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in rows:
        keys.setdefault((r["dataset"], r["epsilon"], r["candidate"]), []).append(r)
    order = ["small", "cps", "adult-pgm", "acs", "kdd99", "wide"]
    ranked = list(CANDIDATES)

    def rank(key: tuple[str, str, str]) -> tuple[int, float, int]:
        dataset, epsilon, candidate = key
        where = order.index(dataset) if dataset in order else len(order)
        eps = float(epsilon) if epsilon else -1.0  # the baselines first
        return where, eps, ranked.index(candidate) if candidate in ranked else -1

    for dataset, epsilon, candidate in sorted(keys, key=rank):
        group = keys[(dataset, epsilon, candidate)]
        ok = [r for r in group if not r["failure"]]
        sized = next((r for r in group if r["n"]), None)
        shape = dataset if sized is None else f"{dataset} ({sized['n']} x {sized['g']})"
        eps = epsilon or "-"
        ran = next((r["algorithm"] for r in ok), "")
        name = (
            candidate
            if candidate in BASELINES or ran in ("", candidate)
            else f"{candidate} ({ran})"
        )
        if not ok:
            failure = group[0]["failure"].replace("\\n", "\n").strip("'\" \n")
            failure = failure.split("DPQueryError: ")[-1].split("\n")[0].strip("'\"\\n ")
            print(f"| {shape} | {eps} | {name} | failed: {failure} | | | | | 0 |")
            continue

        def cell(m: str, fmt: str = ".4f", ok: list[dict[str, str]] = ok) -> str:
            v = [float(r[m]) for r in ok]
            spread = f" [{min(v):{fmt}}-{max(v):{fmt}}]" if len(v) > 1 else ""
            return f"{np.mean(v):{fmt}}{spread}"

        print(f"| {shape} | {eps} | {name} | {cell('workload_max')} | {cell('workload_tv')} | "
              f"{cell('heldout_max')} | {cell('heldout_tv')} | {cell('seconds', '.1f')} | "
              f"{len(ok)} |")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=("grid", "one"), default="grid")
    p.add_argument("--report", action="store_true")
    p.add_argument("--datasets", nargs="+", default=["small", "cps", "adult-pgm", "acs", "kdd99"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 1.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[2, 3])
    p.add_argument("--candidates", nargs="+", choices=tuple(CANDIDATES),
                   default=["auto", "fem+mwem", "dualquery"])  # fmt: skip
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per fit")
    p.add_argument("--no-baselines", dest="baselines", action="store_false")
    p.add_argument("--out", default="grid")
    p.add_argument("--dataset")
    p.add_argument("--candidate")
    p.add_argument("--epsilon", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--options", default="{}", help="JSON options of one fit (tuning)")
    args = p.parse_args()
    if args.report:
        report(args)
    elif args.part == "one":
        run_one(args)
    else:
        grid(args)


if __name__ == "__main__":
    main()
