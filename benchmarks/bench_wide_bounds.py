"""The wide release's rule for its mode and bound against fixed bounds, on generated shapes.

The rule (``head_mode="auto"``, the default: the head mode where the plan says the sparse
mode's cut item counts are swamped, the sparse mode at ``s = 32`` otherwise) beside the
sparse mode at fixed bounds ``s = 8, 32, 128`` (``head_mode="off"``) and the head mode
forced (``head_mode="on"``), through the library path ``dpquery synth`` takes (the same
release as the command). Shapes (``dpquery.datasets.shapes``, data seed 0):

* ``small``: 700 x 9,000, records of ~150 items (the shape of a real user x movie table);
* ``transposed``: the small table transposed, 9,000 records of ~11 items over 700 items
  (many short records);
* ``steep``: the small recipe with a steeper head (popularity offset 7 instead of 25: top
  share about 0.53, as a real user x movie table's 0.51);
* ``mid``: 1,500 x 5,000, records of median 60 and 90th percentile 300 items (offset 15);
* ``narrow``: 700 x 3,000, the small recipe's lengths over fewer items (offset 10);
* ``npm3000``: npm_words' first 3,000 records over its 2,000 most frequent words (many
  short records, small ``n``; ``shared/data/wide``);
* ``small2800``, ``small4200``: the small recipe at ``n`` = 2,800 and 4,200;
* the extremes of ``dpquery.datasets.shapes.UNSEEN`` (``tiny``, ``dense``, ``common``,
  ``empty``, ``samelen``, ``wideshort``, ``narrowdeep``, ``uniform``, ``twocomm``), shapes the
  release was not tuned on.

Scores (:mod:`dpquery.evaluation.wide`, NOT private), max and mean, beside ``zeros`` and
``indep``. Seeds 0-2 tuned the head mode; report seeds 10-12::

    nice .venv/bin/python benchmarks/bench_wide_bounds.py --seeds 10 11 12 --out head-rule

``--neighbours add-remove`` releases under add/remove (delta 1e-9, the command's default);
``--data-seed`` generates the shapes from another seed (the head mode under add/remove was
tuned on data seeds 0-1 and is reported on 2)::

    nice .venv/bin/python benchmarks/bench_wide_bounds.py --neighbours add-remove \
        --data-seed 2 --seeds 10 11 12 --configs "rule (default)" --shapes small --epsilons 1

``--auto`` runs instead what ``dpquery synth`` runs on item data with ``--algorithm auto``
(:func:`dpquery.pipeline.release` on the table in memory, its ``say`` recording the
warnings), under both relations (add/remove, the default, and replace-one), and records
beside each measure whether a warning came before the fit (the plan's, or the release's
measured check on its noisy counts, ``WideKeptWarning``), what the release kept (its mode,
its items kept, or an empty release said so), the seconds and the peak of the memory traced
(``tracemalloc``: Python's and numpy's allocations). The table gives every shape x epsilon x
relation each measure's ratio to zeros' at the worst seed (docs/wide.md, "Shapes it was not
tuned on")::

    nice .venv/bin/python benchmarks/bench_wide_bounds.py --auto --shapes tiny dense common \
        empty samelen wideshort narrowdeep uniform twocomm --seeds 10 11 --out unseen

``--items NAME=PATH`` (or ``NAME``: ``$DPQUERY_EXTRA_DATA_DIR/movielens/NAME.csv``) adds a
real user x item table, a CSV whose first two columns are the user and item ids
(``user_items.py``); with ``--items`` the generated shapes run only where ``--shapes`` names
them. The summary also counts the seeds whose 1-way max is at most 0.75x zeros'::

    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/bench_wide_bounds.py \
        --auto --items ratings-2016 ratings-2018 --seeds 10 11 12 --out movielens-auto
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import scipy.sparse as sp

from dpquery.algorithms.wide import core
from dpquery.algorithms.wide import release as release_module
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data import read_item_sets
from dpquery.data.items import ItemSets
from dpquery.datasets.shapes import SHAPES, UNSEEN, generate
from dpquery.evaluation.wide import MEASURES, WideMeasures
from dpquery.pipeline import ItemMatrix, ReleaseRequest, release
from user_items import describe, read_user_items, tables

NPM = Path(os.environ.get("DPQUERY_DATA_DIR", "data")) / "wide" / "npm_words.transactions.csv.gz"
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "wide"
CONFIGS: dict[str, dict[str, Any]] = {
    "rule (default)": {},
    "sparse, private s": {"head_mode": "off"},
    "sparse s=8": {"bound": 8, "head_mode": "off"},
    "sparse s=32": {"bound": 32, "head_mode": "off"},
    "sparse s=128": {"bound": 128, "head_mode": "off"},
    "head mode": {"head_mode": "on"},
}


SMALL = SHAPES["small"]
VARIANTS = {
    "steep": replace(SMALL, name="steep", offset=7.0),
    "mid": replace(SMALL, name="mid", n=1_500, d=5_000, median=60, p90=300, offset=15.0),
    "narrow": replace(SMALL, name="narrow", d=3_000, offset=10.0),
    "small2800": replace(SMALL, name="small2800", n=2_800),
    "small4200": replace(SMALL, name="small4200", n=4_200),
}
ITEMS: dict[str, Path] = {}  # --items: real user x item tables, by name


def shape(name: str, data_seed: int = 0) -> ItemSets:
    """The table of a shape named above (generated from ``data_seed``; npm3000 and the
    ``--items`` tables are fixed)."""
    if name in ITEMS:
        return read_user_items(ITEMS[name])
    if name in VARIANTS:
        return generate(VARIANTS[name], data_seed)
    if name in UNSEEN:
        return generate(name, data_seed)
    if name == "npm3000":
        full = read_item_sets(NPM, n=196_708, d=45_375)
        return ItemSets(sp.csr_array(full.matrix[:3000, :2000]))
    small = generate("small", data_seed)
    if name == "small":
        return small
    return ItemSets(sp.csr_array(small.matrix.T))  # transposed: many short records


def cell(scores: dict[str, dict[str, float]], m: str) -> str:
    return f"{scores[m]['max']:.4g} / {scores[m]['mean']:.4g}"


RELATIONS = ("add-remove", "replace-one")
# The pre-fit checks' warnings (auto's plan under replace-one, the release's own on the noisy
# n under add/remove, the release's measured check on its noisy counts, before the fit);
# EmptyReleaseWarning is said after the fit.
BEFORE_FIT = ("BaselineWarning", "WideNoiseWarning", "WideKeptWarning")


def auto_run(real: ItemSets, epsilon: float, seed: int, neighbours: str) -> dict[str, Any]:
    """One ``auto`` release of ``real`` as ``dpquery synth`` makes it (module docstring): the
    records, the messages said (``say``) and warned, the release's parameters, the time and
    the traced peak memory; a crash is recorded, not raised."""
    said: list[str] = []
    request = ReleaseRequest(
        source=ItemMatrix(real), algorithm="auto", options={"epsilon": epsilon}, seed=seed,
        say=lambda w: said.append(f"{type(w).__name__}: {w}"),
        neighbours=None if neighbours == "add-remove" else neighbours,
    )  # fmt: skip
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = release(request)
        out: dict[str, Any] = {"records": result.rows, "parameters": result.release.parameters}
    except Exception as exc:  # a crash is a finding, recorded
        caught, out = [], {"crash": f"{type(exc).__name__}: {exc}"}
    out["seconds"] = time.perf_counter() - start
    out["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out["said"] = said + [f"{w.category.__name__}: {w.message}" for w in caught]
    return out


def sweep(args: argparse.Namespace) -> str:
    """``--auto``: every shape x epsilon x relation x seed (module docstring); the detail
    rows, then the summary of ratios to zeros' at the worst seed."""
    detail = ["| shape | epsilon | relation | seed | mode | items kept | 1-way | pairs | "
              "triples | not above zeros | warned | seconds | peak MiB |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    summary = ["| shape (n x d) | epsilon | relation | 1-way max / mean | pairs max / mean | "
               "triples max / mean | all seeds <= zeros | 1-way max <= 0.75x zeros' | "
               "warned before fit | kept |",
               "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in args.shapes:
        real = shape(name, args.data_seed)
        print(name, describe(real), flush=True)
        measures = WideMeasures.of(real, seed=0)
        zeros = measures.reference_scores()["zeros"]
        for epsilon in args.epsilons:
            for relation in args.relations:
                worst = {(m, s): 0.0 for m in MEASURES for s in ("max", "mean")}
                oks, warned, kept, within = [], [], [], []
                for seed in args.seeds:
                    got = auto_run(real, epsilon, seed, relation)
                    said = "; ".join(got["said"])
                    if "crash" in got:
                        detail.append(f"| {name} | {epsilon:g} | {relation} | {seed} | CRASH: "
                                      f"{got['crash']} |||||||||")  # fmt: skip
                        print(name, epsilon, relation, seed, "CRASH", got["crash"], flush=True)
                        oks.append(False)
                        continue
                    p = got["parameters"]
                    scores = measures.scores(got["records"])
                    ratio = {(m, s): scores[m][s] / zeros[m][s] if zeros[m][s] else 0.0
                             for m in MEASURES for s in ("max", "mean")}  # fmt: skip
                    worst = {k: max(worst[k], v) for k, v in ratio.items()}
                    ok = all(scores[m][s] <= zeros[m][s] for m in MEASURES
                             for s in ("max", "mean"))  # fmt: skip
                    before = any(said.startswith(w) or f"; {w}" in said for w in BEFORE_FIT)
                    oks.append(ok)
                    within.append(ratio[("one_way", "max")] <= 0.75)
                    warned.append(before)
                    kept.append(f"{p.get('mode', '?')}:{p.get('items_kept', '?')}")
                    row = " | ".join(cell(scores, m) for m in MEASURES)
                    detail.append(f"| {name} | {epsilon:g} | {relation} | {seed} | "
                                  f"{p.get('mode', '?')} | {p.get('items_kept', '?')} | {row} | "
                                  f"{'yes' if ok else 'NO'} | {'yes' if before else 'no'} | "
                                  f"{got['seconds']:.1f} | {got['peak_mib']:.0f} |")  # fmt: skip
                    print(name, epsilon, relation, seed, p.get("mode"), p.get("items_kept"),
                          row, ok, f"warned={before}", f"{got['seconds']:.1f}s",
                          f"{got['peak_mib']:.0f}MiB", said[:300], flush=True)  # fmt: skip
                cells = [f"{worst[(m, 'max')]:.2f} / {worst[(m, 'mean')]:.2f}" for m in MEASURES]
                summary.append(
                    f"| {name} ({real.n:,} x {real.d:,}) | {epsilon:g} | {relation} | "
                    + " | ".join(cells)
                    + f" | {'yes' if all(oks) else 'NO'} | {sum(within)}/{len(args.seeds)} | "
                    f"{sum(warned)}/{len(args.seeds)} | {', '.join(kept)} |"
                )
    return "\n".join(["Ratios to zeros' (worst seed; <= 1: never worse than publishing "
                      "nothing):", "", *summary, "", "Every run:", "", *detail])  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", help="default: small transposed (none with --items)")
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH",
                   help="real user x item CSVs (user_items.py)")  # fmt: skip
    p.add_argument("--seeds", type=int, nargs="+", default=[10, 11, 12])
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    p.add_argument("--configs", nargs="+", default=list(CONFIGS))
    p.add_argument("--out", default=None, help="write docs/results/wide/<out>.md")
    p.add_argument("--data-seed", type=int, default=0, help="the generated shapes' seed")
    p.add_argument(
        "--neighbours",
        default="replace-one",
        choices=("replace-one", "add-remove"),
        help="the relation (add-remove: delta 1e-9, the command's default)",
    )
    p.add_argument("--auto", action="store_true",
                   help="what synth runs (auto), both relations; ratios to zeros'")  # fmt: skip
    p.add_argument("--relations", nargs="+", default=list(RELATIONS), choices=RELATIONS)
    p.add_argument("--head-sizes-law", choices=("shrink", "beta-binomial", "independent"),
                   help="core.HEAD_SIZES_LAW for these runs (default: the release's)")  # fmt: skip
    p.add_argument("--head-shares", type=float, nargs=5,
                   metavar=("PICKS", "COUNTS", "SIZES", "TAIL", "PAIRS"),
                   help="add/remove's head shares (release.ADD_REMOVE_HEAD_SHARES) for these "
                        "runs; PAIRS > 0 measures the picks' pairs")  # fmt: skip
    p.add_argument("--head-pair-bound", type=int, help="core.HEAD_PAIR_BOUND for these runs")
    p.add_argument("--head-pair-penalty", type=float,
                   help="core.HEAD_PAIR_PENALTY for these runs")  # fmt: skip
    p.add_argument("--head-pairs-gated", action="store_true",
                   help="core.HEAD_PAIRS_GATED for these runs")  # fmt: skip
    args = p.parse_args()
    core.HEAD_PAIRS_GATED = core.HEAD_PAIRS_GATED or args.head_pairs_gated
    if args.head_shares:  # the module default the plan reads
        release_module.ADD_REMOVE_HEAD_SHARES = core.HeadShares(*args.head_shares)
    if args.head_pair_bound is not None:
        core.HEAD_PAIR_BOUND = args.head_pair_bound
    if args.head_pair_penalty is not None:
        core.HEAD_PAIR_PENALTY = args.head_pair_penalty
    if args.head_sizes_law:  # how add/remove's head mode reads its picks-per-record histogram
        core.HEAD_SIZES_LAW = args.head_sizes_law
    ITEMS.update(tables(args.items))
    if args.shapes is None:
        args.shapes = [] if args.items else ["small", "transposed"]
    args.shapes += [name for name in ITEMS if name not in args.shapes]
    if not args.shapes:
        p.error("no table to run: every --items table is absent")
    if args.auto:
        header = (f"`bench_wide_bounds.py {' '.join(sys.argv[1:])}`; NOT PRIVATE scores, "
                  f"data seed {args.data_seed}\n\n")  # fmt: skip
        text = header + sweep(args)
        print(text)
        if args.out:
            (RESULTS / f"{args.out}.md").write_text(text + "\n")
        return
    lines = [f"`bench_wide_bounds.py {' '.join(sys.argv[1:])}`; NOT PRIVATE "
             "scores, fractions of records, max / mean", ""]  # fmt: skip
    for name in args.shapes:
        real = shape(name, args.data_seed)
        measures = WideMeasures.of(real, seed=0)
        refs = measures.reference_scores()
        for epsilon in args.epsilons:
            lines += [f"### {name} ({real.n:,} x {real.d:,}), epsilon = {epsilon:g}", "",
                      "| release | seed | mode | 1-way | pairs | triples | not above zeros | s |",
                      "|---|---|---|---|---|---|---|---|"]  # fmt: skip
            for ref in ("zeros", "indep"):
                row = " | ".join(cell(refs[ref], m) for m in MEASURES)
                lines.append(f"| {ref} | - | - | {row} | - | - |")
            for config in args.configs:
                for seed in args.seeds:
                    start = time.perf_counter()
                    delta = 1e-9 if args.neighbours == "add-remove" else 1 / real.n**2
                    model = WideRelease(epsilon=epsilon, delta=delta, seed=seed,
                                        neighbours=args.neighbours,
                                        **CONFIGS[config])  # fmt: skip
                    release = model.fit(real)
                    scores = measures.scores(release.records)
                    ok = all(scores[m][s] <= refs["zeros"][m][s] for m in MEASURES
                             for s in ("max", "mean"))  # fmt: skip
                    mode = release.parameters["mode"]
                    s = release.parameters.get("s", "-")
                    row = " | ".join(cell(scores, m) for m in MEASURES)
                    lines.append(f"| {config} | {seed} | {mode} | {row} | "
                                 f"{'yes' if ok else 'NO'} | {s} |")  # fmt: skip
                    print(
                        name,
                        epsilon,
                        config,
                        seed,
                        mode,
                        row,
                        ok,
                        f"{time.perf_counter() - start:.1f}s",
                        flush=True,
                    )
            lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        (RESULTS / f"{args.out}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
