"""The options the wide release takes beside the shared ones
(:mod:`dpquery.algorithms.options`): its bounds and sizes (``docs/wide.md``)."""

from __future__ import annotations

from dpquery.algorithms.options import Option, one_of
from dpquery.algorithms.parameters import positive_int
from dpquery.privacy.neighbours import RELATIONS, check_neighbours

OPTIONS = (
    Option(
        "bound",
        "wide: items kept per record, the public contribution bound s (default 32, at most d)",
        int,
        check=positive_int,
        metavar="S",
    ),
    Option(
        "pair_bound",
        "wide: head items kept per record for the pair counts (default 8)",
        int,
        check=positive_int,
        metavar="S2",
    ),
    Option(
        "head",
        "wide: items whose pairs are measured, the largest noisy counts (default 300)",
        int,
        check=positive_int,
        metavar="K",
    ),
    Option(
        "head_mode",
        "wide: the head mode, the commonest items picked and counted whole (auto: where the "
        "plan says noise swamps the cut item counts; on; off)",
        str,
        choices=("auto", "on", "off"),
        check=one_of(("auto", "on", "off")),
    ),
    Option(
        "pool",
        "wide: candidate head sets the fit weighs (default 200000)",
        int,
        check=positive_int,
    ),
    Option(
        "neighbours",
        "wide: the neighbouring relation (replace-one: n public, the default; add-remove: "
        "n private, measured first, the output holds a noisy n of records)",
        str,
        choices=RELATIONS,
        check=lambda name, value: check_neighbours(value),
    ),
)
