"""``dpquery synth``: release a private synthetic dataset with any registered algorithm.

This module maps flags to a :class:`~dpquery.pipeline.ReleaseRequest` and makes one call,
:func:`dpquery.pipeline.release` (the steps of a release are there, shared with the pandas
API); :mod:`dpquery.cli.summary` prints what it gives back. The algorithms, their options
(help, type, choices) and which algorithm takes which come from the library's registry
(:mod:`dpquery.algorithms.registry`); ``--help`` lists the budget, data, output and the
default release's options first, then one group per other algorithm. The defaults:
``--algorithm auto`` (the measured policy of :mod:`dpquery.algorithms.auto`,
``docs/choosing.md``) and, with no ``--workload``, every ``--k``-way marginal of at most n
cells (:func:`dpquery.queries.default_workload`).

The summary on stdout leads with the guarantee asked for, then which algorithm ran and why,
what was written, the unspent budget (and why) and the other accountants. ``--quiet`` prints
nothing on success; warnings the user must see still go to stderr: a ``delta`` of ``1/n`` or
more, a domain read from the data, and the pre-release check's "not expected to beat the
baselines" (said before the fit).

By default it computes nothing on the private data beyond the release: it writes n rows
sampled from the release (``--rows N``, or ``--weights`` for the released records with their
weights), as a table or, to ``S.npz``, as packed bits, and, with ``--report``, the
publishable report (the release's account and privacy guarantee, how the rows were made).
``--evaluate [FILE]`` adds the curator's evaluation (errors against the true answers,
baselines, coherence, timings of passes over the private data): NOT private, written to its
own file and labelled so on stdout, where its numbers are printed.

Item data (``--transactions``, a ``.transactions.csv`` file, a sparse ``.npz``, or an encoded
``.npz`` of free bits only) is released as sets of items: ``auto`` runs the wide release
(:mod:`dpquery.algorithms.wide`), written as ``S.transactions.csv``, ``S.npz`` (sparse) or a
dense CSV (over more than 1,000 items only with ``--dense``). A raw user x item CSV (a header,
raw ids: :mod:`dpquery.data.raw_items`) is read over its public ``--item-list`` and written
with its item ids and synthetic user ids.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import pipeline
from dpquery.algorithms import registry
from dpquery.cli.common import (
    RAW_ITEM_FLAGS,
    add_backend_args,
    add_data_args,
    add_item_args,
    add_raw_item_args,
    as_flags,
    backend_of,
    check_backend_args,
    flag_errors,
    source_of,
)
from dpquery.cli.domain import parse_types
from dpquery.cli.output import add_output_args, output_rows
from dpquery.cli.release_flags import (
    DEFAULT_PATH,
    add_algorithm_args,
    add_budget_args,
    add_default_args,
    add_learn_items_args,
    add_learning_args,
    add_workload_args,
)
from dpquery.cli.summary import evaluation_summary, items_evaluation_summary, summary
from dpquery.data.raw_items import raw_header
from dpquery.domain_learning import DEFAULT_DOMAIN_SHARE
from dpquery.errors import DPQueryError
from dpquery.pipeline import plan
from dpquery.pipeline.inputs import holds_items
from dpquery.pipeline.learning import check_share
from dpquery.pipeline.universe import (
    DEFAULT_UNIVERSE_BOUND,
    DEFAULT_UNIVERSE_SHARE,
    check_bound,
    check_universe_share,
)
from dpquery.pipeline.writes import DENSE_COLUMNS
from dpquery.privacy.neighbours import ADD_REMOVE

# The exact oracles' limits, passed to the algorithm as its oracle's options.
ORACLE_FLAGS = "--oracle-time-limit/--oracle-gap"


USAGE = (
    "dpquery synth (--data FILE [--domain DOMAIN.json] | --dataset NAME)\n"
    "                     (--epsilon E [--delta D] | --rho RHO) --out OUT [options]"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "synth",
        help="release a differentially private synthetic dataset",
        usage=USAGE,
        description="Release private synthetic records (--out) and a JSON report: a table in "
        "the input's columns (over --domain, or one learned privately) or its bits (S.npz), "
        "or, from item data (FILE X.transactions.csv or a sparse .npz; no domain), item "
        "sets. The default release's options first; the others' grouped by algorithm.",
    )
    add_budget_args(p)
    add_data_args(p)
    add_item_args(p)
    add_default_args(p)
    g = p.add_argument_group("output")
    g.add_argument("--out", type=Path, required=True, metavar="SYNTH.csv",
                   help="synthetic records (.csv or .parquet), in the input's columns, or "
                   "S.npz: their bits packed over the domain (one-hot bits for categorical "
                   "and numeric attributes), the encoded format dpquery encode writes, "
                   "compact for wide tables; on item data S.transactions.csv (row item), "
                   "S.npz (sparse) or a dense S.csv")  # fmt: skip
    g.add_argument("--dense", action="store_true",
                   help=f"write a dense CSV even over more than {DENSE_COLUMNS} columns (items, "
                   "or attributes)")  # fmt: skip
    g.add_argument("--report", type=Path, metavar="REPORT.json",
                   help="the publishable JSON report (account and privacy)")  # fmt: skip
    g.add_argument("--evaluate", nargs="?", const="", metavar="FILE",
                   help="also evaluate the release on the private data (NOT private) and "
                   "write it to FILE (default <out stem>.evaluation.json)")  # fmt: skip
    g.add_argument("--numeric", choices=("uniform", "label"), default="uniform",
                   help="numeric bins: a uniform value in the bin, or the bin label")  # fmt: skip
    add_output_args(g)
    g.add_argument("--overwrite", action="store_true", help="replace existing output files")
    r = p.add_argument_group("reading --data (a CSV)")
    r.add_argument("--na-values", default="", metavar="V[,V...]",
                   help="more texts of --data meaning a missing value (e.g. 'unknown,?'), "
                   "besides pandas' defaults (empty, NA, NaN, ...)")  # fmt: skip
    g.add_argument("--seed", type=int, help="seed every random choice (testing/research only)")
    g.add_argument("--quiet", action="store_true",
                   help="print nothing on success (warnings the user must see still go to "
                   "stderr)")  # fmt: skip
    add_raw_item_args(p)
    add_learn_items_args(p)
    add_learning_args(p)
    add_workload_args(p)
    add_backend_args(p)
    add_algorithm_args(p)
    p.set_defaults(func=_synth)


def evaluation_path(args: argparse.Namespace) -> Path | None:
    """Where ``--evaluate`` writes (``None``: no evaluation)."""
    if args.evaluate is None:
        return None
    return Path(args.evaluate) if args.evaluate else args.out.with_suffix(".evaluation.json")


def _synth(args: argparse.Namespace) -> int:
    items = reads_items(args)
    _check_flags(args, items)  # before any work
    request = _request(args, items)
    with flag_errors("types", "domain_share"), option_flags(args.algorithm):
        result = pipeline.release(request)
    files = request.files
    assert files is not None
    domain = files.domain if request.learns else None
    if items and args.learn_items:
        domain = files.items  # the item universe learned, written beside
    summary(result.report, files.out, result.row_count, args.quiet, domain)
    if result.evaluation is not None and items:
        items_evaluation_summary(result.evaluation, files.evaluation, args.quiet)
    elif result.evaluation is not None:
        evaluation_summary(result.evaluation, files.evaluation, args.quiet)
    return 0


def reads_items(args: argparse.Namespace) -> bool:
    """Whether ``synth`` releases item data (:func:`dpquery.pipeline.inputs.holds_items`;
    a raw user x item table's flags imply it)."""
    if args.transactions or _raw_flags(args):
        return True
    return args.data is not None and holds_items(args.data, args.out)


LEARN_ITEM_FLAGS = ("learn_items_share", "learn_items_bound")
"""The options of an item universe learned from a raw table, besides ``--learn-items``."""


def _raw_flags(args: argparse.Namespace) -> bool:
    """Whether a flag of a raw user x item table is given (its catalogue, its columns, or
    its universe learned)."""
    given = any(getattr(args, f, None) is not None for f in RAW_ITEM_FLAGS + LEARN_ITEM_FLAGS)
    return given or bool(getattr(args, "learn_items", False))


def raw_items(args: argparse.Namespace) -> bool:
    """Whether item data's ``--data`` is a raw user x item table: its flags given, or a
    file (not an ``.npz``) whose first line is a header, not a 'row item' pair (only the
    first lines are read: the header is the schema, public)."""
    if _raw_flags(args):
        return True
    path = args.data
    if path is None or not path.is_file() or path.suffix.lower() == ".npz":
        return False
    return raw_header(path) is not None


def _check_raw_flags(args: argparse.Namespace) -> None:
    """A raw user x item table: its catalogue given, no sizes, read in this process."""
    given = [f"--{f.replace('_', '-')}" for f in RAW_ITEM_FLAGS if getattr(args, f) is not None]
    if args.data is not None and args.data.suffix.lower() == ".npz":
        raise DPQueryError(f"{' and '.join(given)} read a raw user x item CSV, not an .npz")
    if args.n is not None or args.items is not None:
        raise DPQueryError(
            f"{args.data} is a raw user x item table (a header line, raw ids): its records "
            "are its distinct users and its items the lines of --item-list; --n and --items "
            "are for a file of 0-based 'row item' pairs without a header: drop them"
        )
    learn = [f"--{f.replace('_', '-')}" for f in LEARN_ITEM_FLAGS if getattr(args, f) is not None]
    if learn and not args.learn_items:
        raise DPQueryError(f"{' and '.join(learn)} apply to an item universe learned from the "
                           "data: give --learn-items")  # fmt: skip
    if args.item_list is None and not args.learn_items:
        raise DPQueryError(
            f"{args.data} is a raw user x item table: give its public item universe, "
            "--item-list FILE (one item id per line, e.g. the catalogue's ids), or have it "
            "learned privately with --learn-items (a share of the budget buys a partition "
            "selection over the item ids)"
        )
    if args.item_list is not None and args.learn_items:
        raise DPQueryError("give either --item-list FILE (a public catalogue) or --learn-items "
                           "(the universe learned from the data), not both")  # fmt: skip
    if args.learn_items:
        if args.learn_items_share is not None:
            check_universe_share(args.learn_items_share, "--learn-items-share")
        if args.learn_items_bound is not None:
            check_bound(args.learn_items_bound, "--learn-items-bound")
        if args.rho is not None or args.delta == 0:
            stated = "--rho (zCDP)" if args.rho is not None else "--delta 0 (pure DP)"
            raise DPQueryError(
                f"--learn-items needs an (epsilon, delta) budget: its partition selection "
                f"has a tail probability that {stated} does not state; give --epsilon (delta "
                "defaults to 1e-9 under add/remove, 1/n^2 under replace-one) or --item-list"
            )
    if args.weights:
        raise DPQueryError("--weights writes 0-based 'row item weight' lines; a raw table's "
                           "release is written with its item ids, without --weights")  # fmt: skip


def _check_flags(args: argparse.Namespace, items: bool) -> None:
    """The flags that exclude or need each other, before any data is read."""
    if items:
        _check_item_flags(args)
    elif args.transactions or args.n is not None or args.items is not None:
        raise DPQueryError("--n and --items are for item data: give --transactions")
    output_rows(args, 1)  # --rows and --weights
    _oracle_options(args)
    if not items:
        check_budget_given(args)
        check_backend_args(args)
    if args.na_values and (items or args.backend == "dask" or args.data is None):
        raise DPQueryError("--na-values applies to a table read from --data FILE in this "
                           "process (--backend local)")  # fmt: skip
    learned = not items and _learns(args)
    if not learned and (args.domain_share is not None or args.types):
        given = " and ".join(f for f, v in (("--domain-share", args.domain_share),
                                            ("--types", args.types)) if v)  # fmt: skip
        raise DPQueryError(f"{given} apply to a domain learned from a raw table (--data FILE "
                           "without --domain, or with --learn-rest)")  # fmt: skip
    if learned:
        parse_types(args.types)
        if args.domain_share is not None:
            with flag_errors("domain_share"):
                check_share(args.domain_share)
        if args.backend == "dask":
            raise DPQueryError(
                "learning the domain reads the whole table in this process: give its domain "
                "(--domain DOMAIN.json) with --backend dask"
            )


def _learns(args: argparse.Namespace) -> bool:
    """Whether the domain is learned from the table: --data FILE (not an encoded .npz)
    without --domain (or with --learn-rest: the columns it leaves out) or --infer-domain."""
    if args.learn_rest and args.domain is None:
        raise DPQueryError("--learn-rest learns the columns a partial domain leaves out: give "
                           "that domain (--domain DOMAIN.json) with a raw table")  # fmt: skip
    return (
        args.data is not None and args.dataset is None
        and (args.domain is None or args.learn_rest)
        and not args.infer_domain and args.data.suffix.lower() != ".npz"
    )  # fmt: skip


def _check_item_flags(args: argparse.Namespace) -> None:
    """On item data: no domain, and on ``--backend dask`` only the wide release runs (its
    counts made on the workers)."""
    check_backend_args(args)
    if args.backend == "dask":
        if args.domain is not None or args.dataset is not None:
            raise DPQueryError("item data needs no domain (its items are 0..D-1): drop "
                               "--domain and --dataset")  # fmt: skip
        if args.algorithm not in ("auto", "wide"):
            raise DPQueryError(
                f"--backend dask runs the wide release on item data (auto or --algorithm "
                f"wide); {args.algorithm} fits records to the bits in this process: use "
                "--backend local"
            )
    if args.domain is not None or args.infer_domain or args.dataset is not None:
        raise DPQueryError("item data needs no domain (its items are 0..D-1): drop --domain, "
                           "--infer-domain and --dataset")  # fmt: skip
    if args.data is None:
        raise DPQueryError("item data is read from --data FILE")
    if raw_items(args):
        _check_raw_flags(args)


def _request(args: argparse.Namespace, items: bool) -> pipeline.ReleaseRequest:
    """The release the flags ask for."""
    evaluated = evaluation_path(args)
    source: pipeline.Source
    if items and raw_items(args):
        learn = None
        if args.learn_items:
            learn = pipeline.ItemLearning(
                DEFAULT_UNIVERSE_SHARE if args.learn_items_share is None
                else args.learn_items_share,
                DEFAULT_UNIVERSE_BOUND if args.learn_items_bound is None
                else args.learn_items_bound,
            )  # fmt: skip
        source = pipeline.ItemFile(
            args.data, raw=True, item_list=args.item_list, user_column=args.user_column,
            item_column=args.item_column, learn=learn,
        )  # fmt: skip
    else:
        source = pipeline.ItemFile(args.data, args.n, args.items) if items else source_of(args)
    share = DEFAULT_DOMAIN_SHARE if args.domain_share is None else args.domain_share
    return pipeline.ReleaseRequest(
        source=source,
        learning=pipeline.Learning(
            share=share,
            types=parse_types(args.types) or None,
            within=args.within,
            rest=args.learn_rest,
        ),
        algorithm=args.algorithm,
        options=release_options(args),
        oracle_options=_oracle_options(args),
        workload=workload_of(args),
        k=args.k,
        output=pipeline.Output(rows=args.rows, weights=args.weights, numeric=args.numeric),
        files=pipeline.Files(args.out, args.report, evaluated, args.overwrite, args.dense),
        evaluate=evaluated is not None,
        backend=backend_of(args),
        seed=args.seed,
        progress=False if args.quiet else None,
        say=say,
        neighbours=args.neighbours,
    )


def release_options(args: argparse.Namespace) -> dict[str, Any]:
    """Every registered option's value on the command line (None: not given)."""
    return {name: getattr(args, name) for name in registry.all_options()}


def workload_of(args: argparse.Namespace) -> Path | pipeline.WorkloadKind | None:
    """``--workload``: a saved workload, a kind to generate, or None (the default)."""
    if args.workload is None:
        return None
    if Path(args.workload).suffix == ".npz":
        return Path(args.workload)
    attributes = None if args.attributes is None else tuple(args.attributes)
    return pipeline.WorkloadKind(args.workload, args.queries, args.marginals, attributes)


def say(warning: Warning) -> None:
    """A warning the user must see, on stderr (also with ``--quiet``)."""
    print(f"dpquery synth: warning: {warning}", file=sys.stderr)


def neighbours_of(args: argparse.Namespace, learns: bool = False) -> str | None:
    """``--neighbours``, or the default (:func:`dpquery.pipeline.plan.neighbours_of`):
    add/remove for auto (a domain learned from the data, ``learns``, holds for the same
    relation), else the algorithm's own."""
    if args.neighbours is not None:
        return str(args.neighbours)
    return ADD_REMOVE if args.algorithm == "auto" else None


def budget_rule(args: argparse.Namespace, n: int, add_remove: bool = False) -> dict[str, Any]:
    """The options with the one default (``delta = 1/n^2`` with ``--epsilon``; under
    add/remove the public 1e-9), the warnings at ``delta >= 1/n`` (under add/remove at a
    public threshold) and at ``epsilon > 10`` said."""
    options = plan.with_default_delta(release_options(args), n, add_remove)
    for warning in plan.budget_warnings(options, n, add_remove):
        say(warning)
    return options


def check_budget_given(args: argparse.Namespace) -> None:
    """The default release needs a budget: say which flags give one (before any data is
    read; the other algorithms say what else they accept, e.g. explicit rounds)."""
    if args.epsilon is None and args.rho is None and args.algorithm in DEFAULT_PATH:
        raise DPQueryError(
            "no privacy budget given: pass --epsilon (e.g. --epsilon 1, with --delta "
            "defaulting to 1/n^2) or --rho (a zCDP budget)"
        )


def _oracle_options(args: argparse.Namespace) -> dict[str, float]:
    options = {"time_limit": args.oracle_time_limit, "abs_gap": args.oracle_gap}
    given = {k: v for k, v in options.items() if v is not None}
    if given and args.oracle not in ("cpsat", "highs"):
        raise DPQueryError(
            f"--oracle-time-limit/--oracle-gap apply to the exact oracles (cpsat, highs), "
            f"not to {args.oracle or 'heuristic'!r}, which runs on iteration budgets"
        )
    for name, value in given.items():
        if not value > 0:
            raise DPQueryError(f"--oracle-{name.replace('_', '-')} must be positive, got {value}")
    return given


def _flag(name: str) -> str:
    if name == "oracle_options":
        return ORACLE_FLAGS
    return registry.options()[name].cli_flag if name in registry.options() else name


def estimator(
    args: argparse.Namespace, rng: np.random.Generator | None,
    options: Mapping[str, Any] | None = None,
) -> Any:  # fmt: skip
    """The algorithm's estimator with the options given on the command line (or
    ``options``), every value's range checked."""
    with option_flags(args.algorithm):
        return plan.estimator(
            args.algorithm, release_options(args) if options is None else options,
            oracle_options=_oracle_options(args), seed=rng,
            progress=False if args.quiet else None, neighbours=neighbours_of(args),
        )  # fmt: skip


@contextmanager
def option_flags(algorithm: str) -> Iterator[None]:
    """Errors about the algorithm's options, said with their flags."""
    try:
        yield
    except registry.OptionError as exc:
        if exc.needs is not None:
            given_flag, needed = (_flag(n) for n in exc.needs)
            raise DPQueryError(f"{given_flag} needs {needed}") from None
        refused = ", ".join(sorted(_flag(n) for n in exc.refused))
        raise DPQueryError(f"--algorithm {algorithm} does not take {refused}") from None
    except plan.InvalidOption as exc:
        flags = {name: option.cli_flag for name, option in registry.all_options().items()}
        raise DPQueryError(as_flags(str(exc), flags=flags)) from None
