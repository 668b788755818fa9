"""How often add/remove's head mode puts a rare item in many records, and variants of its
shrinkage tried against it (``auto``'s release, add/remove, epsilon 1; NOT PRIVATE scores).

Under add/remove the head mode keeps every picked item whose noisy count is at least 0 once
one pick clears the keep level, each count shrunk toward the picks' mean
(``core.head_estimates``, ``shrunk``). A monotone pick of a rare item (its exponential
mechanism's draw) is then kept at about that mean. Per table and seed this prints the largest
share of the released records holding an item of true share below 0.1, and that item's true
share. Variants (``--variants``, the release's ``head_estimates`` wrapped, ``src`` unchanged):

* ``default``: the release as it is;
* ``unshrunk-Z``: a pick whose noisy count is below ``Z`` sigma keeps its own noisy count,
  not pulled toward the mean;
* ``drop-Z``: such a pick is dropped (released in no record), as replace-one drops a pick
  below ``core.family_threshold``;
* ``limited-C``: Efron and Morris's limited translation (``core.limited_translation``):
  each estimate moves at most ``C`` sigma from its own noisy count, up or down;
* ``upper-C``: the cap on upward moves only (``core.head_estimates``' ``raise_limit``; a
  move down is James-Stein's); ``upper-inf`` is the James-Stein estimates uncapped;
* ``limited-C+unshrunk-Z``, ``upper-C+drop-Z`` and so on: the cap, then the rule for picks
  below ``Z`` sigma.

Tuning shapes (``--data-seed`` 0 or 1, the default 0) on seeds 0-3, the held-out tables on
report seeds only::

    nice .venv/bin/python benchmarks/rare_picks.py --shapes small steep mid narrow \\
        --seeds 0 1 2 3 --variants default unshrunk-2 unshrunk-3 drop-2 --out rare-picks-tuning
    nice .venv/bin/python benchmarks/rare_picks.py --shapes small steep mid narrow \\
        --seeds 0 1 2 3 --data-seed 1 --variants default limited-0.5 limited-1 limited-1.5 \\
        limited-1+unshrunk-2 --out rare-picks-limited-ds1
    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/rare_picks.py \\
        --items ratings-2016 ratings-2018 --seeds 10 11 12 13 14 15 16 17 18 19 \\
        --variants default --out rare-picks-movielens
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dpquery.algorithms.wide.core as core
from bench_wide_bounds import ITEMS, RESULTS, auto_run, shape
from dpquery.evaluation.wide import MEASURES, WideMeasures
from user_items import tables

RARE = 0.1  # an item of true share below this is rare here
_HEAD_ESTIMATES = core.head_estimates


def use_variant(name: str) -> None:
    """Wrap ``core.head_estimates`` as the variant ``name`` says (module docstring)."""
    if name == "default":
        core.head_estimates = _HEAD_ESTIMATES
        return
    up, down = None, np.inf  # None: the release's own cap upward (core.HEAD_RAISE_LIMIT)
    if name.startswith(("limited-", "upper-")):
        cap, _, name = name.partition("+")
        kind, c = cap.split("-", 1)
        up, down = float(c), (float(c) if kind == "limited" else np.inf)
    low_rule, z = name.rsplit("-", 1) if name else ("", "0")

    def variant(y: np.ndarray, sigma: float, n: int, k: int, shrunk: bool = False):  # type: ignore[no-untyped-def]
        c, kept = _HEAD_ESTIMATES(y, sigma, n, k, shrunk, raise_limit=up)
        if not shrunk or not kept.any():
            return c, kept
        if down < np.inf:  # the two-sided cap: the uncapped estimates' moves capped both ways
            c, _ = _HEAD_ESTIMATES(y, sigma, n, k, shrunk, raise_limit=np.inf)
            c = np.where(y >= 0, np.clip(core.limited_translation(y, c, sigma, up, down), 0, n), c)
        if low_rule:
            low = (y >= 0) & (y < float(z) * sigma)
            c = np.where(low, np.clip(y, 0.0, n) if low_rule == "unshrunk" else 0.0, c)
        return c, (y >= 0) & (c > 0)

    core.head_estimates = variant


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=[])
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    p.add_argument("--variants", nargs="+", default=["default"])
    p.add_argument("--data-seed", type=int, default=0, help="the generated shapes' seed")
    p.add_argument("--out", default=None, help="write docs/results/wide/<out>.md")
    args = p.parse_args()
    ITEMS.update(tables(args.items))
    lines = [f"`rare_picks.py {' '.join(sys.argv[1:])}`; add/remove, epsilon 1; NOT PRIVATE; "
             f"data seed {args.data_seed}", "",
             "| table | variant | seeds | mean ratio to zeros' 1-way max / mean | pairs | "
             "triples | worst 1-way max ratio | largest share of a rare item (its true share) "
             "per seed | seeds with one above 0.1 |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in [*args.shapes, *ITEMS]:
        real = shape(name, args.data_seed)
        truth = real.item_frequencies()
        measures = WideMeasures.of(real, seed=0)
        zeros = measures.reference_scores()["zeros"]
        for variant in args.variants:
            use_variant(variant)
            ratios: dict[tuple[str, str], list[float]] = {}
            rare: list[tuple[float, float]] = []
            for seed in args.seeds:
                got = auto_run(real, 1.0, seed, "add-remove")
                scores = measures.scores(got["records"])
                for m in MEASURES:
                    for s in ("max", "mean"):
                        ratios.setdefault((m, s), []).append(scores[m][s] / zeros[m][s])
                shares = got["records"].item_frequencies()
                which = np.flatnonzero(truth < RARE)
                j = which[np.argmax(shares[which])]
                rare.append((float(shares[j]), float(truth[j])))
                print(name, variant, seed, f"rare {shares[j]:.3f} ({truth[j]:.3f})", flush=True)
            cells = [f"{np.mean(ratios[(m, 'max')]):.3f} / {np.mean(ratios[(m, 'mean')]):.3f}"
                     for m in MEASURES]  # fmt: skip
            per_seed = ", ".join(f"{a:.2f} ({b:.3f})" for a, b in rare)
            lines.append(f"| {name} | {variant} | {args.seeds[0]}-{args.seeds[-1]} | "
                         + " | ".join(cells)
                         + f" | {max(ratios[('one_way', 'max')]):.3f} | {per_seed} | "
                         f"{sum(a > RARE for a, _ in rare)}/{len(rare)} |")  # fmt: skip
    use_variant("default")
    text = "\n".join(lines)
    print(text)
    if args.out:
        (RESULTS / f"{args.out}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
