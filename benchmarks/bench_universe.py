"""The item universe learned privately (``--learn-items``) against the same release given
the full id list, on real user x item tables (``docs/wide.md``, "Learning the item
universe").

For each table, epsilon, seed and variant, the whole release (``dpquery.pipeline``, as
``dpquery synth`` runs it: ``auto``, add/remove) is scored on the wide measures against the
table over every id it holds (NOT private): each measure's max and mean as a ratio to the
all-zeros table's. A run whose selection released no id ends in an error (nothing is
written): it is scored as the all-zeros table (ratio 1), the output a user would have
instead, and marked ``none``.

    nice python benchmarks/bench_universe.py --tables retail lastfm --epsilons 1 0.1 \\
        --seeds 0 1 --shares 0.3 --bounds 16 --out universe-tune

The tables are read from ``DPQUERY_EXTRA_DATA_DIR`` (``docs/wide.md`` gives their sources);
one that is not there is skipped with a message. Quick mode (``make bench``,
``DPQUERY_BENCH_QUICK=1``): epsilon 1, seed 0, the defaults' share and bound.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from dpquery import pipeline
from dpquery.errors import DPQueryError
from dpquery.evaluation.wide import MEASURES
from dpquery.pipeline.universe import DEFAULT_UNIVERSE_BOUND, DEFAULT_UNIVERSE_SHARE

ITEMS = Path(os.environ.get("DPQUERY_EXTRA_DATA_DIR", "extra-data"))
TABLES = {
    "lastfm": ITEMS / "items" / "lastfm.csv",
    "ml100k": ITEMS / "items" / "ml100k.csv",
    "retail": ITEMS / "items" / "retail.csv",
    "ml2016": ITEMS / "movielens" / "ratings-2016.csv",
}


def read(path: Path) -> pd.DataFrame:
    """The table's first two columns (user, item) as text."""
    table = pd.read_csv(path, usecols=[0, 1], dtype=str, keep_default_na=False)
    return table.set_axis(["user", "item"], axis=1)


def run(df: pd.DataFrame, epsilon: float, seed: int, variant: str, share: float, bound: int
        ) -> tuple[dict[str, dict[str, float]] | None, int, float, dict]:  # fmt: skip
    """One release's ratios to zeros (None: no id released), ids, seconds, evaluation."""
    if variant == "full":
        ids = tuple(sorted(set(df["item"]) - {""}))
        source = pipeline.ItemFrame(df, item_list=ids)
    else:
        source = pipeline.ItemFrame(df, learn=pipeline.ItemLearning(share, bound))
    request = pipeline.ReleaseRequest(source, options={"epsilon": epsilon}, seed=seed,
                                      evaluate=True)  # fmt: skip
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = pipeline.release(request)
    except DPQueryError as exc:
        if "no item id" not in str(exc):
            raise
        return None, 0, time.perf_counter() - start, {}
    seconds = time.perf_counter() - start
    assert result.evaluation is not None
    scores = result.evaluation["scores"]
    ratios = {m: {k: scores["synthetic"][m][k] / scores["zeros"][m][k] for k in ("max", "mean")}
              for m in MEASURES}  # fmt: skip
    return ratios, int(result.rows.d), seconds, scores


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    p.add_argument("--epsilons", nargs="+", type=float, default=None)
    p.add_argument("--seeds", nargs="+", type=int, default=None)
    p.add_argument("--shares", nargs="+", type=float, default=[DEFAULT_UNIVERSE_SHARE])
    p.add_argument("--bounds", nargs="+", type=int, default=[DEFAULT_UNIVERSE_BOUND])
    p.add_argument("--no-full", action="store_true", help="skip the full-list release")
    p.add_argument("--out", help="name of the markdown file written (default: print only)")
    args = p.parse_args([] if argv is None else argv)  # make bench: the defaults
    quick = os.environ.get("DPQUERY_BENCH_QUICK", "") not in ("", "0")
    args.epsilons = args.epsilons or ([1.0] if quick else [1.0, 0.1])
    args.seeds = args.seeds or ([0] if quick else [0, 1])
    variants = [] if args.no_full else [("full", 0.0, 0)]
    variants += [("learn", s, b) for s in args.shares for b in args.bounds]
    lines = [
        "| table | epsilon | variant | seed | ids | 1-way max / mean | pairs max / mean "
        "| triples max / mean | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in args.tables:
        if not TABLES[name].exists():
            print(f"{name}: skipped, {TABLES[name]} not found (set DPQUERY_EXTRA_DATA_DIR)")
            continue
        df = read(TABLES[name])
        for eps in args.epsilons:
            for variant, share, bound in variants:
                label = "full list" if variant == "full" else f"learn {share:g}, s={bound}"
                for seed in args.seeds:
                    ratios, ids, seconds, _ = run(df, eps, seed, variant, share, bound)
                    cells = (["1 / 1 (none)"] * 3 if ratios is None else
                             [f"{ratios[m]['max']:.3f} / {ratios[m]['mean']:.3f}"
                              for m in MEASURES])  # fmt: skip
                    row = (f"| {name} | {eps:g} | {label} | {seed} | {ids} | "
                           + " | ".join(cells) + f" | {seconds:.1f} |")  # fmt: skip
                    print(row, flush=True)
                    lines.append(row)
    if args.out:
        Path(f"{args.out}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
