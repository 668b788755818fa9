"""Where a wide release can keep nothing: the keep levels of its plan against a table's counts.

NOT private (it reads the tables' exact counts): a diagnostic for docs/wide.md ("Real item
tables from new sources"), never part of a release. For each table and epsilon, under
add/remove, on the table's own ``n`` (the release reads a noisy one):

* the plan's mode (``auto``, as ``dpquery synth`` plans it);
* at each bound ``s`` of the plan's grid, the sparse mode's item noise ``sigma`` (after the
  bound's share of ``rho``), its keep level ``family_threshold(d) sigma`` (the level no noise
  draw of the ``d`` counts is expected to reach: an item is kept only above it,
  ``core.measurable``) and the table's largest cut counts at that bound (one keyed cut, key
  0): where none reaches the level at any bound, the sparse mode keeps nothing;
* the head mode's threshold share (``release.head_threshold_share``: the share of the
  records a picked item must be held by to be kept) beside the table's top item share, and
  whether the pre-fit check (``release.noise_warning``, at ``HEAD_MEASURABLE_SHARE``) warns.

::

    E=extra/items2
    DPQUERY_EXTRA_DATA_DIR=extra nice .venv/bin/python benchmarks/keep_levels.py \
        --items citeulike=$E/citeulike-a.csv jester5k=$E/jester5k.csv --shapes small steep
"""

from __future__ import annotations

import argparse

import numpy as np

from bench_wide_bounds import shape
from dpquery.algorithms.wide import measure
from dpquery.algorithms.wide.bound import count_sensitivity, truncate
from dpquery.algorithms.wide.core import BOUND_SHARE, family_threshold
from dpquery.algorithms.wide.release import (
    WideRelease,
    head_threshold_share,
    noise_warning,
)
from dpquery.data.items import ItemSets
from user_items import read_user_items, tables

ADD_REMOVE = "add-remove"


def levels(real: ItemSets, epsilon: float) -> list[str]:
    """The lines of one table at one epsilon (module docstring)."""
    n, d = real.n, real.d
    plan = WideRelease(epsilon=epsilon, neighbours=ADD_REMOVE).plan(real)
    p = plan.parameters
    lines = [f"  epsilon {epsilon}: mode {p.mode}, grid {list(p.grid)}"]
    rest = p.rho * (1 - BOUND_SHARE)
    for s in p.grid or (p.s,):
        sigma = measure.noise_sigma(p.shares.items * rest, count_sensitivity(s, ADD_REMOVE))
        level = family_threshold(d) * sigma
        cut = np.sort(np.bincount(truncate(real.matrix, s, 0).indices, minlength=d))[::-1]
        lines.append(
            f"    s = {s}: sigma {sigma:.1f}, keep level {level:.0f} ({level / n:.3f} n); "
            f"largest cut counts {cut[:3].tolist()} ({cut[0] / level:.2f}x the level); "
            f"items above it {int((cut > level).sum())}"
        )
    head = WideRelease(epsilon=epsilon, neighbours=ADD_REMOVE, head_mode="on").plan(real)
    share = head_threshold_share(head, n)
    warns = noise_warning(plan, n, noisy=True) is not None
    lines.append(
        f"    head mode: threshold share {share:.3f} ({head.parameters.K} picks); "
        f"the pre-fit check {'warns' if warns else 'does not warn'}"
    )
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", nargs="+", default=[], metavar="NAME=PATH")
    p.add_argument("--shapes", nargs="*", default=[], help="generated shapes (data seed 0)")
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    args = p.parse_args()
    named: dict[str, ItemSets] = {k: read_user_items(v) for k, v in tables(args.items).items()}
    named.update({name: shape(name, 0) for name in args.shapes})
    for name, real in named.items():
        counts = np.bincount(real.matrix.indices, minlength=real.d)
        top = np.round(np.sort(counts)[::-1][:3] / real.n, 3).tolist()
        print(f"{name}: n = {real.n:,}, d = {real.d:,}, top item shares {top}")
        for epsilon in args.epsilons:
            print("\n".join(levels(real, epsilon)))


if __name__ == "__main__":
    main()
