"""The flags of a release, shared by ``dpquery synth`` and ``dpquery privacy synth``: the
budget, the default release's options, the workload, and one group per other algorithm, all
read from the library's registry (:mod:`dpquery.algorithms.registry`)."""

from __future__ import annotations

import argparse

from dpquery.algorithms import registry
from dpquery.algorithms.options import Option
from dpquery.domain_learning import DEFAULT_DOMAIN_SHARE
from dpquery.pipeline.universe import DEFAULT_UNIVERSE_BOUND, DEFAULT_UNIVERSE_SHARE
from dpquery.privacy.neighbours import ADD_REMOVE, RELATIONS, REPLACE_ONE
from dpquery.queries import WORKLOAD_KINDS

# The default release: ``auto`` runs adaptive-projection on tables of up to 1,000 attributes.
DEFAULT_PATH = ("auto", "adaptive-projection", "wide")
BUDGET = ("epsilon", "delta", "rho")
# The neighbouring relation: a flag of the budget's group, for every algorithm (the papers'
# refuse add-remove by name), never one algorithm's option.
RELATION = "neighbours"


def add_release_args(p: argparse.ArgumentParser) -> None:
    """The budget, algorithm, workload and parameter flags (shared with ``dpquery privacy
    synth``), the default release's first."""
    add_budget_args(p)
    add_default_args(p)
    add_workload_args(p)
    add_algorithm_args(p)


def add_budget_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("privacy budget (--epsilon, with --delta, or --rho)")
    for name in BUDGET:
        add_option(g, registry.all_options()[name])
    g.add_argument("--neighbours", choices=RELATIONS, metavar="R",
                   help=f"{ADD_REMOVE} (n private; auto's default) or {REPLACE_ONE} (n "
                   "public; the papers' algorithms)")  # fmt: skip


def add_learning_args(p: argparse.ArgumentParser) -> None:
    """``--domain-share``, ``--types``, ``--learn-rest``: a domain learned from a raw table
    (no --domain, or a partial one)."""
    g = p.add_argument_group(
        "a domain learned from the raw table (no --domain, or a partial "
        "one with --learn-rest; docs/learn.md)"
    )
    g.add_argument("--domain-share", type=float, metavar="SHARE",
                   help=f"the share of the budget's zCDP rho (not of epsilon) spent learning "
                   f"the domain (default {DEFAULT_DOMAIN_SHARE:g}); the release spends the "
                   "rest")  # fmt: skip
    g.add_argument("--types", action="append", default=[], metavar="COL=KIND[,...]",
                   help="declare columns numeric, categorical or date (public knowledge; no "
                   "budget is spent deciding them; date: YYYY-MM-DD[ HH:MM[:SS]], "
                   "date:%%d.%%m.%%Y another strftime format, date:%%m/%%d/%%y@1950 two-digit "
                   "years and the first year of their hundred), or categorical:V1|V2|... with "
                   "their public categories (nothing is learned on them); may be "
                   "repeated")  # fmt: skip
    g.add_argument("--learn-rest", action="store_true",
                   help="--domain covers some of the table's columns (a partial codebook, "
                   "public, costing nothing): learn the others privately from "
                   "--domain-share")  # fmt: skip
    g.add_argument("--no-within", dest="within", action="store_false",
                   help="decode a learned numeric bin uniformly, without the decoding weights "
                   "(a noisy histogram of sub-bins, bought with part of the learning's "
                   "share, which then goes to the domain)")  # fmt: skip


def add_learn_items_args(p: argparse.ArgumentParser) -> None:
    """``--learn-items [--learn-items-share SHARE --learn-items-bound S]``: a raw user x item
    table's item universe learned privately (no --item-list)."""
    g = p.add_argument_group(
        "an item universe learned from a raw user x item table (no --item-list; "
        'docs/wide.md, "Learning the item universe")'
    )
    g.add_argument("--learn-items", action="store_true",
                   help="learn which item ids to release by a private partition selection "
                   "over them (each user's items cut to a random subset of at most "
                   "--learn-items-bound), spending --learn-items-share of the budget's zCDP "
                   "rho; the ids released are written to <out stem>.items.txt")  # fmt: skip
    g.add_argument("--learn-items-share", type=float, metavar="SHARE",
                   help=f"the share of the budget's zCDP rho the selection spends (default "
                   f"{DEFAULT_UNIVERSE_SHARE:g}); the release spends the rest")  # fmt: skip
    g.add_argument("--learn-items-bound", type=int, metavar="S",
                   help=f"the items a user contributes to the selection at most (default "
                   f"{DEFAULT_UNIVERSE_BOUND})")  # fmt: skip


def add_default_args(p: argparse.ArgumentParser) -> None:
    """``--algorithm`` and the options of the default release (auto, adaptive-projection)."""
    g = p.add_argument_group(
        "the default release (--algorithm auto: adaptive-projection on tables of up to "
        "1,000 attributes, wide on item data; docs/choosing.md)"
    )
    g.add_argument("--algorithm", choices=registry.names(), default="auto",
                   help=f"{', '.join(registry.names())} (default auto: the best release "
                   "measured for the data's shape, see docs/choosing.md)")  # fmt: skip
    for name in _default_options():
        add_option(g, registry.all_options()[name])


def add_workload_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload")
    g.add_argument("--workload", metavar="KIND|W.npz",
                   help="a saved workload, or a kind to generate: "
                   + ", ".join(WORKLOAD_KINDS) + " (default: every k-way marginal of the "
                   "domain with at most n cells)")  # fmt: skip
    g.add_argument("--k", type=int, default=3, help="attributes per marginal (default 3)")
    g.add_argument("--queries", type=int, default=100_000, help="number of queries to generate")
    g.add_argument("--marginals", type=int, help="number of marginals (marginal-cells)")
    g.add_argument("--attributes", nargs="+", metavar="NAME", help="attributes (all-marginals)")


def add_algorithm_args(p: argparse.ArgumentParser) -> None:
    """One group per other algorithm: the options it is the first to take (in the
    registry's order), and a line naming those it shares with the groups above."""
    shown = {*BUDGET, RELATION, *_default_options()}
    flags = registry.all_options()
    for name in registry.names():
        if name in DEFAULT_PATH:
            continue
        takes = registry.takes(name)
        above = [flags[o].cli_flag for o in takes if o in shown]
        if "oracle" in takes and "oracle_time_limit" in shown:
            above += ["--oracle-time-limit", "--oracle-gap"]
        g = p.add_argument_group(
            f"{name} (--algorithm {name})",
            f"also takes {', '.join(above)} (above)" if above else None,
        )
        for option in takes:
            if option not in shown:
                add_option(g, flags[option])
                shown.add(option)
        if "oracle" in takes and "oracle_time_limit" not in shown:
            g.add_argument("--oracle-time-limit", type=float, metavar="SECONDS",
                           help="per-round time limit of the exact oracles (cpsat, "
                           "highs)")  # fmt: skip
            g.add_argument("--oracle-gap", type=float, metavar="GAP",
                           help="absolute gap accepted by the exact oracles, e.g. "
                           "alpha/4 * s")  # fmt: skip
            shown.add("oracle_time_limit")


def _default_options() -> list[str]:
    """The options of the default release beyond the budget, in declaration order."""
    taken = {o for name in DEFAULT_PATH for o in registry.takes(name)}
    return [o for o in registry.all_options() if o in taken and o not in (*BUDGET, RELATION)]


def add_option(group: argparse._ArgumentGroup, option: Option) -> None:
    """The option's flag; its help names the algorithms that take it, unless all do."""
    takers = registry.taken_by(option.name)
    who = "" if len(takers) == len(registry.names()) else f" ({', '.join(takers)})"
    group.add_argument(
        option.cli_flag, *option.aliases, dest=option.name, type=option.type,
        choices=option.choices, metavar=option.metavar, help=f"{option.help}{who}",
    )  # fmt: skip
