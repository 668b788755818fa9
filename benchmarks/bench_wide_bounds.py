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
* ``small2800``, ``small4200``: the small recipe at ``n`` = 2,800 and 4,200.

Scores (:mod:`dpquery.evaluation.wide`, NOT private), max and mean, beside ``zeros`` and
``indep``. Seeds 0-2 tuned the head mode; report seeds 10-12::

    nice .venv/bin/python benchmarks/bench_wide_bounds.py --seeds 10 11 12 --out head-rule

``--neighbours add-remove`` releases under add/remove (delta 1e-9, the command's default);
``--data-seed`` generates the shapes from another seed (the head mode under add/remove was
tuned on data seeds 0-1 and is reported on 2)::

    nice .venv/bin/python benchmarks/bench_wide_bounds.py --neighbours add-remove \
        --data-seed 2 --seeds 10 11 12 --configs "rule (default)" --shapes small --epsilons 1
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import scipy.sparse as sp

from dpquery.algorithms.wide.release import WideRelease
from dpquery.data import read_item_sets
from dpquery.data.items import ItemSets
from dpquery.datasets.shapes import SHAPES, generate
from dpquery.evaluation.wide import MEASURES, WideMeasures

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


def shape(name: str, data_seed: int = 0) -> ItemSets:
    """The table of a shape named above (generated from ``data_seed``; npm3000 is fixed)."""
    if name in VARIANTS:
        return generate(VARIANTS[name], data_seed)
    if name == "npm3000":
        full = read_item_sets(NPM, n=196_708, d=45_375)
        return ItemSets(sp.csr_array(full.matrix[:3000, :2000]))
    small = generate("small", data_seed)
    if name == "small":
        return small
    return ItemSets(sp.csr_array(small.matrix.T))  # transposed: many short records


def cell(scores: dict[str, dict[str, float]], m: str) -> str:
    return f"{scores[m]['max']:.4g} / {scores[m]['mean']:.4g}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["small", "transposed"])
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
    args = p.parse_args()
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
