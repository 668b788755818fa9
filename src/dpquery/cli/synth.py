"""``dpquery synth``: release a private synthetic dataset with any registered algorithm.

The algorithms, their options (help, type, choices) and which algorithm takes which come from
the library's registry (:mod:`dpquery.algorithms.registry`); this module maps flags to those
options and formats the output (``--help`` lists the budget, data, output and the default
release's options first, then one group per other algorithm). The defaults: ``--algorithm
auto`` (the measured policy of :mod:`dpquery.algorithms.auto`, ``docs/choosing.md``) and,
with no ``--workload``, every ``--k``-way marginal of at most n cells
(:func:`dpquery.queries.default_workload`).

The summary on stdout leads with the guarantee asked for, then which algorithm ran and why,
what was written, the unspent budget (and why) and the other accountants. ``--quiet`` prints
nothing on success; warnings the user must see still go to stderr: a ``delta`` of ``1/n`` or
more, a domain read from the data, and the pre-release check's "not expected to beat the
baselines" (said before the fit).

By default it computes nothing on the private data beyond the release: it writes n rows
sampled from the release (``--rows N``, or ``--weights`` for the released records with their
weights; :mod:`dpquery.cli.output`), as a table or, to ``S.npz``, as packed bits
(:func:`dpquery.data.sample.output_bits`), and, with ``--report``, the publishable report (the
release's account and privacy guarantee, how the rows were made), and prints the same.
``--evaluate [FILE]`` adds the curator's evaluation (errors against the true answers,
baselines, coherence, timings of passes over the private data): NOT private, written to its
own file and labelled so on stdout, where its numbers are printed.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.algorithms import registry
from dpquery.algorithms.auto import Auto, BaselineWarning
from dpquery.algorithms.columns import columns_report
from dpquery.algorithms.options import Option
from dpquery.backends.partitioned import describe_partitions
from dpquery.cli.common import (
    add_backend_args,
    add_data_args,
    add_item_args,
    backend_data,
    check_backend_args,
    flag_errors,
)
from dpquery.cli.output import (
    add_output_args,
    describe_output,
    json_text,
    output_rows,
    write_outputs,
)
from dpquery.cli.report import describe_coherence, real_table
from dpquery.cli.synth_items import DENSE_COLUMNS, ItemFront, reads_items, synth_items
from dpquery.cli.workload import workload_of_kind
from dpquery.data.binary import write_binary
from dpquery.data.items import dense_records
from dpquery.data.sample import output_bits, output_table
from dpquery.errors import DPQueryError
from dpquery.evaluation.release_report import evaluation_report, publishable_report
from dpquery.privacy.delta import (
    LargeDeltaWarning,
    WeakBudgetWarning,
    check_delta,
    check_epsilon,
    default_delta,
)
from dpquery.privacy.ledger import NOT_PRIVATE, SEEDED, Guarantee
from dpquery.queries import (
    WORKLOAD_KINDS,
    Workload,
    answer,
    check_same_domain,
    default_workload,
)
from dpquery.rng import describe_rng, make_rng

# The exact oracles' limits, passed to the algorithm as its oracle's options.
ORACLE_FLAGS = "--oracle-time-limit/--oracle-gap"


# The default release: ``auto`` runs adaptive-projection on tables of up to 1,000 attributes.
DEFAULT_PATH = ("auto", "adaptive-projection", "wide")
BUDGET = ("epsilon", "delta", "rho")
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
        "the input's columns (over --domain) or its bits (S.npz), or, from item data "
        "(FILE X.transactions.csv or a sparse .npz; no domain), item sets. The default "
        "release's options first; the others' grouped by algorithm.",
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
    g.add_argument("--seed", type=int, help="seed every random choice (testing/research only)")
    g.add_argument("--quiet", action="store_true",
                   help="print nothing on success (warnings the user must see still go to "
                   "stderr)")  # fmt: skip
    add_workload_args(p)
    add_backend_args(p)
    add_algorithm_args(p)
    p.set_defaults(func=_synth)


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
        _add_option(g, registry.all_options()[name])


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
        _add_option(g, registry.all_options()[name])


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
    shown = {*BUDGET, *_default_options()}
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
                _add_option(g, flags[option])
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
    return [o for o in registry.all_options() if o in taken and o not in BUDGET]


def evaluation_path(args: argparse.Namespace) -> Path | None:
    """Where ``--evaluate`` writes (``None``: no evaluation)."""
    if args.evaluate is None:
        return None
    return Path(args.evaluate) if args.evaluate else args.out.with_suffix(".evaluation.json")


def _add_option(group: argparse._ArgumentGroup, option: Option) -> None:
    """The option's flag; its help names the algorithms that take it, unless all do."""
    takers = registry.taken_by(option.name)
    who = "" if len(takers) == len(registry.names()) else f" ({', '.join(takers)})"
    group.add_argument(
        option.cli_flag, *option.aliases, dest=option.name, type=option.type,
        choices=option.choices, metavar=option.metavar, help=f"{option.help}{who}",
    )  # fmt: skip


def _check_outputs(args: argparse.Namespace, items: bool = False) -> None:
    outputs = [o for o in (args.out, args.report, evaluation_path(args)) if o is not None]
    inputs = [Path(p) for p in (args.data, args.domain) if p is not None]
    if args.workload is not None and Path(args.workload).suffix == ".npz":
        inputs.append(Path(args.workload))
    resolved = [o.resolve() for o in outputs]
    if len(set(resolved)) != len(resolved):
        raise DPQueryError("two of --out, --report and --evaluate name the same file")
    for out in outputs:
        if any(out.resolve() == i.resolve() for i in inputs if i.exists()):
            raise DPQueryError(f"output {out} is one of the inputs; refusing to overwrite it")
        if out.is_dir() or not out.parent.is_dir():  # before "exists": --overwrite cannot help
            raise DPQueryError(f"cannot write {out}: not a file in an existing folder")
        if out.exists() and not args.overwrite:
            raise DPQueryError(f"{out} already exists; pass --overwrite to replace it")
    if not items and args.out.suffix.lower() not in (".csv", ".parquet", ".npz"):
        raise DPQueryError(f"--out {args.out} must end in .csv, .parquet or .npz (bits)")


def _workloads(args: argparse.Namespace, data: Any, rng: np.random.Generator) -> tuple:
    """The workload to release for and, when it is drawn at random, a fresh one of the same
    kind to evaluate on (None for the default and all-marginals workloads)."""
    if args.workload is None:
        if data.domain is None:
            raise DPQueryError("the default workload needs the data's domain")
        return default_workload(data.domain, data.n, k=args.k, seed=rng), None
    if Path(args.workload).suffix == ".npz":
        workload = Workload.load(args.workload)
        check_same_domain(workload, data.d, data.domain)
        return workload, None
    if data.domain is None:
        raise DPQueryError("generating a workload needs the data's domain")
    make = {
        "k": args.k, "count": args.queries, "marginals": args.marginals,
        "attributes": args.attributes, "n": data.n,
    }  # fmt: skip
    workload = workload_of_kind(args.workload, data.domain, seed=rng, **make)
    fresh = None if args.workload == "all-marginals" else workload_of_kind(
        args.workload, data.domain, seed=rng, **make
    )  # fmt: skip
    return workload, fresh


def _check_width(args: argparse.Namespace, columns: int) -> None:
    """A CSV over more than :data:`DENSE_COLUMNS` columns (one per attribute) is written only
    when ``--dense`` asks for it: at 512,000 free bits it is gigabytes per thousand rows."""
    if columns > DENSE_COLUMNS and args.out.suffix.lower() == ".csv" and not args.dense:
        raise DPQueryError(
            f"--out {args.out} would be a CSV of {columns} columns; write "
            f"{args.out.with_suffix('.npz').name} (the bits, packed), or pass --dense to write "
            "the CSV anyway"
        )


def _synth(args: argparse.Namespace) -> int:
    items = reads_items(args)
    _check_outputs(args, items)  # before any work: no partial output, no overwritten input
    if items:
        front = ItemFront(
            lambda a, rng: _estimator(a, _oracle_options(a), rng), _summary, _delta_rule
        )
        return synth_items(args, front, evaluation_path(args))
    if args.transactions or args.n is not None or args.items is not None:
        raise DPQueryError("--n and --items are for item data: give --transactions")
    output_rows(args, 1)  # --rows and --weights checked before the data is read
    oracle_options = _oracle_options(args)
    _estimator(args, oracle_options, None)  # every option checked before the data is read
    check_budget_given(args)
    check_backend_args(args)
    with warnings.catch_warnings(), backend_data(args) as opened:
        warnings.simplefilter("ignore", LargeDeltaWarning)  # said once, on stderr, below
        warnings.simplefilter("ignore", WeakBudgetWarning)  # likewise
        warnings.simplefilter("ignore", BaselineWarning)  # likewise, before the fit
        data: Any = opened  # BinaryData, or PartitionedData standing in for it (dask)
        if data.domain is None:
            raise DPQueryError("synth needs a domain to write records in the input's columns")
        _check_width(args, len(data.domain.attributes))
        _delta_rule(args, data.n)
        rng = make_rng(args.seed)
        workload, fresh = _workloads(args, data, rng)
        model = _estimator(args, oracle_options, rng)
        _baseline_check(model, data, workload)
        report, evaluation, table = _release(args, model, data, workload, fresh, rng)
    # Serialise before writing anything: a failure here must leave no output at all.
    texts = {} if args.report is None else {args.report: json_text(report)}
    evaluated = evaluation_path(args)
    if evaluated is not None and evaluation is not None:
        texts[evaluated] = json_text(evaluation)
    write_outputs(args.out, _writer(args.out, table), texts)
    _summary(report, args, table[0].n if isinstance(table, tuple) else len(table))
    if evaluation is not None:
        _evaluation_summary(evaluation, evaluated, args.quiet)
    return 0


def _writer(out: Path, table: Any) -> Callable[[Path], object]:
    """How :func:`write_outputs` writes the output ``table`` to its temporary: a DataFrame
    as CSV or Parquet, or bits and their weights (:func:`_release`) as an encoded ``.npz``."""
    if isinstance(table, tuple):
        bits, weights = table
        return lambda tmp: write_binary(tmp, bits, weights)
    to_file = table.to_parquet if out.suffix.lower() == ".parquet" else table.to_csv
    return lambda tmp: to_file(tmp, index=False)


def _delta_rule(args: argparse.Namespace, n: int) -> None:
    """The one default (``delta = 1/n^2`` with ``--epsilon``), the warning at ``delta >=
    1/n`` and the one at ``epsilon > 10`` (:func:`dpquery.privacy.delta.check_epsilon`)."""
    if args.delta is None and args.epsilon is not None and args.rho is None:
        args.delta = default_delta(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakBudgetWarning)  # said here, on stderr
        messages = [check_delta(args.delta, n), check_epsilon(args.epsilon, args.rho, n)]
    for message in messages:  # check_delta's Python warning is silenced in _synth
        if message is not None:
            print(f"dpquery synth: warning: {message}", file=sys.stderr)


def check_budget_given(args: argparse.Namespace) -> None:
    """The default release needs a budget: say which flags give one (before any data is
    read; the other algorithms say what else they accept, e.g. explicit rounds)."""
    if args.epsilon is None and args.rho is None and args.algorithm in DEFAULT_PATH:
        raise DPQueryError(
            "no privacy budget given: pass --epsilon (e.g. --epsilon 1, with --delta "
            "defaulting to 1/n^2) or --rho (a zCDP budget)"
        )


def _baseline_check(model: Any, data: Any, workload: Workload) -> None:
    """The public pre-release check of ``auto`` (docs/choosing.md), said on stderr before
    the fit, also with ``--quiet``: the user must see it."""
    if isinstance(model, Auto):
        warning = model.plan(data, workload).warning
        if warning is not None:
            print(f"dpquery synth: warning: {warning}", file=sys.stderr)


def _release(
    args: argparse.Namespace, model: Any, data: Any, workload: Workload,
    fresh: Workload | None, rng: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any] | None, Any]:  # fmt: skip
    """Fit, decode and report; evaluate only when asked. The true answers are computed for
    the evaluation, or by the fit only when the algorithm reads them (the default release
    does not). On dask the evaluation's (both workloads') ride on the fit's first pass, the
    release's counts or the answers the algorithm reads: no pass of their own. The output
    is a DataFrame, or, for ``--out S.npz``, the bits and their weights (None unless
    ``--weights``)."""
    evaluate = evaluation_path(args) is not None
    workloads = [workload] if fresh is None else [workload, fresh]
    dask = args.backend == "dask"
    true: Sequence[np.ndarray | None] = (None, None)
    if evaluate and dask:
        data.answers_later(workloads)
    elif evaluate:
        true = [answer(w, data) for w in workloads]
    release = model.fit(data, workload, true_answers=true[0])
    if evaluate and dask:
        true = data.answers_many(workloads)  # made by now, with the fit's pass
    records = dense_records(release.records, data.domain)
    rows = output_rows(args, data.n)
    table: Any
    if args.out.suffix.lower() == ".npz":
        bits, weights, output = output_bits(
            records, data.domain, rows=rows, weights=args.weights, seed=rng
        )
        table = (bits, weights)
    else:
        table, output = output_table(
            records, data.domain, rows=rows, weights=args.weights, numeric=args.numeric,
            seed=rng,
        )  # fmt: skip
    report = publishable_report(release, randomness=describe_rng(rng))
    report["release"]["output"] = output.to_dict()
    report["release"]["decode"] = output.decode.to_dict()
    report["release"]["columns"] = columns_report(
        release.parameters, data, workload, getattr(model, "free_attributes", None)
    )
    report["backend"] = data.describe() if dask else {"name": "local", "partitions": 1}
    if not evaluate:
        return report, None, table
    evaluation = evaluation_report(
        release, data, workload, true_answers=true[0], fresh_workload=fresh,
        fresh_true_answers=true[1] if fresh is not None else None, seed=rng,
        real_table=real_table(args, data.domain),
        synthetic_table=None if isinstance(table, tuple) else table,
    )  # fmt: skip
    if dask:  # time on the cluster: the row count and both workloads' answers
        evaluation["timings"]["backend_s"] = data.seconds
    return report, evaluation, table


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


def _estimator(
    args: argparse.Namespace, oracle_options: dict[str, float], rng: np.random.Generator | None
) -> Any:
    """The algorithm's estimator with the options given on the command line."""
    given = {name: getattr(args, name) for name in registry.all_options()}
    try:
        model = registry.build(
            args.algorithm, given, seed=rng, oracle_options=oracle_options,
            progress=False if args.quiet else None,
        )  # fmt: skip
    except registry.OptionError as exc:
        if exc.needs is not None:
            given_flag, needed = (_flag(n) for n in exc.needs)
            raise DPQueryError(f"{given_flag} needs {needed}") from None
        refused = ", ".join(sorted(_flag(n) for n in exc.refused))
        raise DPQueryError(f"--algorithm {args.algorithm} does not take {refused}") from None
    flags = {name: option.cli_flag for name, option in registry.all_options().items()}
    with flag_errors(flags=flags):
        model.validate()  # every value's range, before the data is read
    return model


def asked_guarantee(budget: dict[str, Any]) -> str:
    """The guarantee the user asked for, in one phrase: ``(1, 2.0e-09)-DP``."""
    if budget["measure"] == "zcdp":
        return f"rho = {budget['rho']:g} zCDP"
    if budget["measure"] == "pure" or not budget["delta"]:
        return f"({budget['epsilon']:g}, 0)-DP (pure)"
    return f"({budget['epsilon']:g}, {budget['delta']:.1e})-DP"


def qualified_guarantee(privacy: dict[str, Any]) -> str:
    """The guarantee asked for (:func:`asked_guarantee`), said with what it does not cover:
    NOT PRIVATE first when the domain was read from the data, and, with a seed, that it does
    not hold against anyone who knows the seed (:class:`~dpquery.privacy.ledger.Guarantee`)."""
    asked = asked_guarantee(privacy["budget"])
    if "seeded" in privacy:
        asked += f" ({SEEDED})"
    if any(g.get("not_private") for g in privacy["guarantees"]):
        return f"{NOT_PRIVATE} (accounted as {asked}, which would hold for a public domain)"
    return asked


# Why an algorithm may leave part of the budget unspent (its rounds come whole).
UNSPENT_REASON = (
    "the algorithm's rounds come whole, and one more would exceed the budget; ask for fewer "
    "rounds or a larger step to spend it"
)


def _summary(report: dict[str, Any], args: argparse.Namespace, rows: int) -> None:
    """The publishable account on stdout, the guarantee asked for first (nothing with
    ``--quiet``): what ran and why, what was written, then the other accountants."""
    if args.quiet:
        return
    rel = report["release"]
    privacy, p = rel["privacy"], rel["parameters"]
    budget = privacy["budget"]
    print(f"privacy: {qualified_guarantee(privacy)}, {privacy['neighbouring']}")
    if "auto" in p:
        print(f"algorithm: {rel['algorithm']}, chosen by auto: {p['auto']['reason']}")
    else:
        print(f"algorithm: {rel['algorithm']} (--algorithm)")
    shown = _shown_parameters(p)
    if shown:
        print(f"  parameters: {shown}")
    print(f"wrote {rows} rows to {args.out}: {describe_output(rel['output'], rel['d'])}")
    _columns_summary(rel.get("columns", {}))
    limit = budget["rho"] if budget["measure"] == "zcdp" else budget["epsilon"]
    unit = "rho" if budget["measure"] == "zcdp" else "epsilon"
    remaining = privacy["remaining"]
    if isinstance(remaining, float | int) and remaining > 1e-6 * limit:
        print(f"unspent: {remaining:.3g} of {unit} {limit:g} ({remaining / limit:.0%}): "
              f"{UNSPENT_REASON}")  # fmt: skip
    print("other accountants (the same run, proved in other measures):")
    for g in privacy["guarantees"]:
        print(f"  {Guarantee.from_dict(g).describe()}")
    print(f"noise: {rel['randomness']['bit_generator']} ({rel['randomness']['note']})")
    backend = report.get("backend", {})
    if backend.get("name") == "dask":
        print(f"backend: dask, {describe_partitions(backend)}")


def _shown_parameters(p: dict[str, Any]) -> str:
    if "base" in p:  # reweighted: the base's parameters, then MWEM's share and rounds
        p = {**p["base"], "reweight": p["fraction"], "mwem_T": p["mwem"]["T"]}
    keys = ("T", "s", "eta", "epsilon0", "mode", "reweight", "mwem_T", "records")
    return ", ".join(f"{k}={p[k]:g}" if isinstance(p[k], float) else f"{k}={p[k]}"
                     for k in keys if k in p)  # fmt: skip


def _columns_summary(columns: dict[str, Any]) -> None:
    unmeasured = [k for k, v in columns.get("sources", {}).items() if v.startswith("not measured")]
    if "share" in columns:
        print(f"columns: {columns['measured']} no query touches, measured as 1-way "
              f"marginals ({columns['share']:.0%} of the budget)")  # fmt: skip
    elif columns.get("measured"):
        print(f"columns: all {columns['measured']} measured as 1-way marginals")
    if unmeasured:
        print(f"columns: {', '.join(unmeasured)} not measured: no information about the data")
    refined = columns.get("refined", {})
    if refined:
        costs = ", ".join(f"{k} (rho={v['rho']:.3g}, {v['share']:.1%} of rho)"
                          for k, v in refined.items())  # fmt: skip
        print(f"columns: re-measured, their noisy 1-way marginals estimated past the target: "
              f"{costs}")  # fmt: skip


BASELINE_MEANING = {
    "zeros": "one all-zero record; reads no data",
    "uniform": "the uniform distribution over the domain; reads no data",
}


def _evaluation_summary(ev: dict[str, Any], path: Path | None, quiet: bool) -> None:
    """The evaluation's numbers, on stdout, under their NOT PRIVATE label, each baseline
    explained (nothing with ``--quiet``: they are in the file)."""
    if quiet:
        return
    print(f"{ev['label']} (written to {path}):")
    if "backend_s" in ev["timings"]:
        print(f"  backend: {ev['timings']['backend_s']:.1f} s computing true answers")
    if "total_s" in ev["timings"]:
        print(f"  time: {ev['timings']['total_s']:.1f} s to release (its steps read the data)")
    rows = [("release", ev["errors"]["workload"], "the synthetic records, on the workload")]
    if "fresh_workload" in ev["errors"]:
        rows.append(("fresh workload", ev["errors"]["fresh_workload"],
                     "the records, on queries drawn afresh"))  # fmt: skip
    for line in error_lines(ev, rows):
        print(f"  {line}")
    print(f"  {describe_coherence(ev.get('coherence'))}")


def error_lines(ev: dict[str, Any], rows: list[tuple[str, dict[str, Any], str]]) -> list[str]:
    """The error table of an evaluation (``rows``: the release's, then the baselines'), the
    mean total variation per marginal first: a mean over cells shrinks with their number,
    whatever the release. The Laplace-per-query baseline is said in one line, not shown as a
    row: its noise grows with the number of queries and would dwarf the table."""
    errors = rows[0][1]
    if "mean_tv" in errors:
        lines = [f"errors as fractions of records: mean TV, the total variation between the "
                 f"released and the true table of each of the workload's "
                 f"{errors['n_marginals']:,} marginals (0: identical, 1: disjoint), averaged; "
                 f"max/mean error, |released - true| per cell, over its {errors['n_queries']:,} "
                 "cells"]  # fmt: skip
    else:
        lines = [f"errors as fractions of records: |released - true| per query, over its "
                 f"{errors['n_queries']:,} queries"]  # fmt: skip
    width = max(16, *(len(name) + 2 for name, _, _ in rows))
    lines.append(f"{'':<{width}}{'mean TV':>9}{'max error':>11}{'mean error':>12}  what it is")
    rows = rows + [(f"{k} baseline", v, BASELINE_MEANING[k]) for k, v in ev["baselines"].items()
                   if k in BASELINE_MEANING]  # fmt: skip
    for name, e, meaning in rows:
        tv = f"{e['mean_tv']:>9.4f}" if "mean_tv" in e else f"{'-':>9}"
        lines.append(f"{name:<{width}}{tv}{e['max_error']:>11.4f}{e['mean_error']:>12.4f}  "
                     f"{meaning}")  # fmt: skip
    laplace = ev["baselines"].get("laplace")
    if laplace is not None:
        lines.append(f"(not shown: the Laplace baseline, each of the {laplace['n_queries']:,} "
                     f"queries answered with its own noise at epsilon {laplace['epsilon']:g}, "
                     "noise that grows with the number of queries: mean error "
                     f"{laplace['mean_error']:.3g}, useless; it is in the file)")  # fmt: skip
    return lines
