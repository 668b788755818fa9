"""``dpquery domain learn``: a public domain learned from a raw table under a stated budget."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpquery.cli.common import flag_errors
from dpquery.data.dates import check_format
from dpquery.data.domain import Domain
from dpquery.domain_learning import (
    DATE_PREFIX,
    DEFAULT_BINS,
    GIVEN_PREFIX,
    KINDS,
    learn_budget,
    learn_domain,
)
from dpquery.errors import DPQueryError
from dpquery.pipeline.learning import column_notes, encodable, read_raw
from dpquery.pipeline.writes import json_text, write_outputs
from dpquery.privacy import Ledger
from dpquery.privacy.delta import check_delta, relation_default_delta
from dpquery.privacy.neighbours import ADD_REMOVE, RELATIONS, neighbouring
from dpquery.privacy.partition_selection import partition_delta
from dpquery.rng import describe_rng, make_rng


def register(sub: argparse._SubParsersAction) -> None:
    dom = sub.add_parser("domain", help="learn a public domain from a raw table, privately")
    dom_sub = dom.add_subparsers(dest="domain_command", metavar="ACTION", required=True)
    p = dom_sub.add_parser(
        "learn",
        help="learn a domain (kinds, categories, bins, precision) under (epsilon, delta)-DP",
        description="Learn a public domain from a raw table: every number read off the data "
        "is noisy and accounted (docs/learn.md). Writes the domain JSON for --domain.",
    )
    p.add_argument("--data", type=Path, required=True, metavar="FILE",
                   help="a raw table (.csv, .csv.gz, .tsv, .parquet) with a header")  # fmt: skip
    p.add_argument("--epsilon", type=float, required=True,
                   help="the budget of the learning (e.g. 10%% of a release's)")  # fmt: skip
    p.add_argument("--delta", type=float,
                   help="its delta (default 1e-9 under add-remove, 1/n^2 under replace-one); "
                   "half is for the categories")  # fmt: skip
    p.add_argument("--neighbours", choices=RELATIONS, default=ADD_REMOVE, metavar="R",
                   help="the neighbouring relation: add-remove (default; n private, a noisy n "
                   "is drawn first and read by every rule) or replace-one (n public)")  # fmt: skip
    p.add_argument("--types", action="append", default=[], metavar="COL=KIND[,...]",
                   help="declare columns numeric, categorical or date (public knowledge; no "
                   "budget is spent deciding them; date: YYYY-MM-DD[ HH:MM[:SS]], "
                   "date:%%d.%%m.%%Y another strftime format, date:%%m/%%d/%%y@1950 two-digit "
                   "years and the first year of their hundred), or categorical:V1|V2|... with "
                   "their public categories (nothing is learned on them); may be "
                   "repeated")  # fmt: skip
    p.add_argument("--domain", type=Path, metavar="PARTIAL.json",
                   help="a domain or codebook JSON of some of the columns (public: nothing is "
                   "read or spent on them); the others are learned, and the whole domain "
                   "written")  # fmt: skip
    p.add_argument("--bins", type=int, default=DEFAULT_BINS,
                   help=f"equal-mass bins per numeric column (default {DEFAULT_BINS})")  # fmt: skip
    p.add_argument("--na-values", default="", metavar="V[,V...]",
                   help="more texts meaning a missing value (e.g. '?,N'), besides pandas' "
                   "defaults (empty, NA, NaN, ...)")  # fmt: skip
    p.add_argument("--seed", type=int,
                   help="seed the noise (testing only: no privacy against the seed)")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, metavar="DOMAIN.json",
                   help="where to write the learned domain")  # fmt: skip
    p.add_argument("--report", type=Path, metavar="REPORT.json",
                   help="also write what was learned and its cost as JSON")  # fmt: skip
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    p.set_defaults(func=_learn)


def parse_types(items: list[str]) -> dict[str, str]:
    """``["a=numeric,b=categorical", ...]`` as a dict; a bad entry names itself. A comma
    starts a new entry only where an ``=`` follows before the next one, so a date format
    may hold commas (``day=date:%b %d, %Y``)."""
    out: dict[str, str] = {}
    for item in items:
        for entry in filter(None, (e.strip() for e in _entries(item))):
            col, eq, kind = entry.rpartition("=")
            if not eq or not col:
                raise DPQueryError(f"--types entry {entry!r} is not COLUMN=KIND")
            if kind.startswith(DATE_PREFIX):
                try:
                    check_format(kind[len(DATE_PREFIX) :])
                except ValueError as exc:
                    raise DPQueryError(f"--types {col}: {exc} (e.g. date:%d.%m.%Y)") from None
            elif kind not in KINDS and not kind.startswith(GIVEN_PREFIX):
                raise DPQueryError(
                    f"--types {col}: kind must be {', '.join(KINDS)}, {DATE_PREFIX}FORMAT (a "
                    f"strftime format, e.g. {DATE_PREFIX}%d.%m.%Y) or {GIVEN_PREFIX}V1|V2|... "
                    f"(its public categories), got {kind!r}"
                )
            out[col] = kind
    return out


def _entries(item: str) -> list[str]:
    """``item`` cut at its commas, a piece without ``=`` joined back to the entry before."""
    entries: list[str] = []
    for piece in item.split(","):
        if entries and piece.strip() and "=" not in piece:
            entries[-1] += "," + piece
        else:
            entries.append(piece)
    return entries


def _check_outputs(args: argparse.Namespace) -> list[Path]:
    outs = [p for p in (args.out, args.report) if p is not None]
    if len(outs) == 2 and outs[0].resolve() == outs[1].resolve():
        raise DPQueryError(f"--out and --report both name {outs[0]}")
    inputs = [p for p in (args.data, args.domain) if p is not None and p.exists()]
    for out in outs:
        if any(out.resolve() == i.resolve() for i in inputs):
            raise DPQueryError(f"output {out} is one of the inputs; refusing to overwrite it")
        if out.is_dir():
            raise DPQueryError(f"cannot write {out}: it is a folder")
        if not out.resolve().parent.is_dir():
            raise DPQueryError(f"cannot write {out}: folder {out.parent} does not exist")
        if out.exists() and not args.overwrite:
            raise DPQueryError(f"{out} already exists; pass --overwrite to replace it")
    return outs


def _learn(args: argparse.Namespace) -> int:
    types = parse_types(args.types)
    _check_outputs(args)
    public = Domain.load(args.domain) if args.domain is not None else None
    table = read_raw(args.data, [v for v in args.na_values.split(",") if v])
    add_remove = args.neighbours == ADD_REMOVE
    n = None if add_remove else len(table)  # public under replace-one only, never read else
    delta = relation_default_delta(n, add_remove) if args.delta is None else args.delta
    check_delta(delta, n, add_remove)
    budget = learn_budget(args.epsilon, delta)
    ledger = Ledger(budget.ledger_budget)
    rng = make_rng(args.seed)
    with flag_errors("types", "bins"):
        domain, report = learn_domain(
            table, rho=budget.rho, delta=budget.delta_tail, rng=rng, ledger=ledger,
            types=types, bins=args.bins, neighbours=args.neighbours, public=public,
        )  # fmt: skip
    domain = encodable(domain, table, public)[0]  # as synth writes it: reusable on this table
    ledger_guarantee = ledger.report().guarantees[-1]
    total_delta = (ledger_guarantee.delta or 0.0) + partition_delta(
        report.delta_tail, ledger_guarantee.epsilon or 0.0
    )
    summary = {
        "data": str(args.data),
        **({"neighbours": neighbouring(args.neighbours)} if add_remove else {}),
        "budget": {
            "epsilon": budget.epsilon,
            "delta": budget.delta,
            "rho": budget.rho,
            "delta_tail": budget.delta_tail,
        },
        "guarantee": {
            "epsilon": ledger_guarantee.epsilon,
            "delta": total_delta,
            "rho": report.rho,
            "seeded": args.seed is not None,
        },
        "noise": describe_rng(rng),
        "learned": report.to_dict(),
    }
    texts = {args.report: json_text(summary)} if args.report is not None else {}
    write_outputs(args.out, lambda tmp: tmp.write_text(json_text(domain.to_dict())), texts)
    print(report.describe())
    for note in column_notes(domain, report):
        print(f"note: {note}")
    print(
        f"cost: ({ledger_guarantee.epsilon:.6g}, {total_delta:.3g})-DP  [rho={report.rho:.6g} "
        f"on the ledger at delta {budget.delta / 2:.3g}; category selection delta "
        f"{partition_delta(report.delta_tail, ledger_guarantee.epsilon or 0.0):.3g}]"
        + (
            "; seeded: does not hold against anyone who knows the seed"
            if args.seed is not None
            else ""
        )
    )
    print(f"wrote {args.out}" + (f" and {args.report}" if args.report else ""), file=sys.stderr)
    return 0
