"""``dpquery synth``: release a private synthetic dataset.

By default it computes nothing on the private data beyond the release: it writes the records
and, with ``--report``, the publishable report (the release's account and privacy guarantee),
and prints the same. ``--evaluate [FILE]`` adds the curator's evaluation (errors against the
true answers, baselines, timings of passes over the private data): NOT private, written to its
own file and labelled so on stdout, where its numbers are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.algorithms.dqrs import DQRS
from dpquery.algorithms.dualquery import DualQuery
from dpquery.algorithms.fem import AUTHORS_ADULT, FEM, SepFEM
from dpquery.algorithms.mwem import MWEM
from dpquery.algorithms.reweight import DEFAULT_FRACTION, ROUNDS_AT_EPSILON_1, Reweighted
from dpquery.cli.common import add_backend_args, add_data_args, backend_data, check_backend_args
from dpquery.cli.workload import KINDS, _check_domains, build_workload
from dpquery.data.decode import decode
from dpquery.errors import DPQueryError
from dpquery.evaluation.release_report import evaluation_report, publishable_report
from dpquery.io import atomic_path
from dpquery.oracles import oracle_names
from dpquery.privacy.delta import LargeDeltaWarning, check_delta, default_delta
from dpquery.queries import Workload, answer
from dpquery.rng import describe_rng, make_rng

ALGORITHMS: dict[str, type] = {
    "dualquery": DualQuery,
    "dqrs": DQRS,
    "fem": FEM,
    "sepfem": SepFEM,
    "mwem": MWEM,
}
_ORACLE_BASED = ("dualquery", "dqrs", "fem", "sepfem")
# Which options each algorithm takes, by the estimator's keyword (the CLI flag is the same
# name with dashes). Giving one an algorithm does not take is an error, never ignored.
OPTIONS: dict[str, tuple[str, ...]] = {
    "dualquery": ("epsilon", "delta", "eta", "T", "samples", "alpha", "beta", "oracle",
                  "free_attributes", "density_epsilon"),
    "dqrs": ("epsilon", "delta", "eta", "T", "samples", "alpha", "beta", "oracle",
             "free_attributes"),
    "fem": ("epsilon", "delta", "rho", "epsilon0", "T", "eta", "samples", "preset",
            "noise_multiple", "accounting", "size", "oracle", "free_attributes", "workers",
            "reweight", "reweight_rounds"),
    "mwem": ("epsilon", "delta", "T", "measurement", "max_cells"),
}  # fmt: skip
OPTIONS["sepfem"] = OPTIONS["fem"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "synth",
        help="release a differentially private synthetic dataset",
        description="Release private synthetic records that answer a workload of queries. "
        "Writes the records as a table in the input's columns (--out) and a JSON report.",
    )
    add_data_args(p)
    add_backend_args(p)
    p.add_argument("--algorithm", choices=tuple(ALGORITHMS), default="dualquery",
                   help="dualquery (default), dqrs, fem, sepfem or mwem")  # fmt: skip
    g = p.add_argument_group("workload")
    g.add_argument("--workload", default="marginals", metavar="KIND|W.npz",
                   help=f"a saved workload, or a kind to generate: {', '.join(KINDS)}")  # fmt: skip
    g.add_argument("--k", type=int, default=3, help="attributes per query (default 3)")
    g.add_argument("--queries", type=int, default=100_000, help="number of queries to generate")
    g.add_argument("--marginals", type=int, help="number of marginals (marginal-cells)")
    g.add_argument("--attributes", nargs="+", metavar="NAME", help="attributes (all-marginals)")
    g = p.add_argument_group("privacy and parameters (each algorithm takes its own; see docs)")
    g.add_argument("--epsilon", type=float, help="privacy budget epsilon")
    g.add_argument(
        "--delta",
        type=float,
        help="privacy budget delta (default with --epsilon: 1/n^2; 0: pure DP)",
    )
    g.add_argument("--rho", type=float, help="zCDP budget (fem, sepfem)")
    g.add_argument("--eta", type=float, help="step (dualquery, dqrs) or noise scale (fem, sepfem)")
    g.add_argument("--T", type=int, help="rounds (default: the largest the budget allows)")
    g.add_argument("--samples", type=int, help="queries sampled (dualquery, dqrs) or FTPL "
                   "solves (fem, sepfem) per round")  # fmt: skip
    g.add_argument("--alpha", type=float, help="target accuracy (theory mode: dualquery, dqrs)")
    g.add_argument("--beta", type=float, help="failure probability (theory mode)")
    g.add_argument("--epsilon0", type=float, help="per-round exponential mechanism (fem)")
    g.add_argument("--preset", choices=tuple(AUTHORS_ADULT), help="the FEM authors' Adult values")
    g.add_argument("--noise-multiple", type=float, help="FEM noise: eta = noise_multiple sqrt(T)")
    g.add_argument("--accounting", choices=("bounded-range", "zcdp"),
                   help="FEM's per-round accounting (default bounded-range)")  # fmt: skip
    g.add_argument("--size", type=int, help="resample the FEM output to this many records")
    g.add_argument("--workers", type=int, help="processes for FEM's per-round solves")
    g.add_argument("--reweight", type=float, metavar="FRACTION",
                   help="fem, sepfem: spend FRACTION of the budget on MWEM over the released "
                   f"records (e.g. {DEFAULT_FRACTION}; docs/reweight.md)")  # fmt: skip
    g.add_argument("--reweight-rounds", type=int, metavar="T",
                   help="MWEM rounds of --reweight "
                   f"(default {ROUNDS_AT_EPSILON_1} sqrt(epsilon))")  # fmt: skip
    g.add_argument("--measurement", choices=("laplace", "gaussian"), help="MWEM's measurement")
    g.add_argument("--max-cells", type=int, help="MWEM's largest explicit domain")
    g = p.add_argument_group("oracle and free attributes")
    g.add_argument("--oracle", choices=oracle_names(), help="best-response oracle (heuristic)")
    g.add_argument("--oracle-time-limit", type=float, metavar="SECONDS",
                   help="per-round time limit of the exact oracles (cpsat, highs)")  # fmt: skip
    g.add_argument("--oracle-gap", type=float, metavar="GAP",
                   help="absolute gap accepted by the exact oracles, e.g. alpha/4 * s")  # fmt: skip
    g.add_argument("--free-attributes", choices=("zeros", "uniform", "private-density"),
                   help="policy for bits no query constrains (default zeros)")  # fmt: skip
    g.add_argument("--density-epsilon", type=float,
                   help="epsilon spent on the private density (private-density only)")  # fmt: skip
    g = p.add_argument_group("output")
    g.add_argument("--out", type=Path, required=True, metavar="SYNTH.csv",
                   help="synthetic records (.csv or .parquet), in the input's columns")  # fmt: skip
    g.add_argument("--report", type=Path, metavar="REPORT.json",
                   help="the publishable JSON report (account and privacy)")  # fmt: skip
    g.add_argument("--evaluate", nargs="?", const="", metavar="FILE",
                   help="also evaluate the release on the private data (NOT private) and "
                   "write it to FILE (default <out stem>.evaluation.json)")  # fmt: skip
    g.add_argument("--numeric", choices=("uniform", "label"), default="uniform",
                   help="numeric bins: a uniform value in the bin, or the bin label")  # fmt: skip
    g.add_argument("--overwrite", action="store_true", help="replace existing output files")
    g.add_argument("--seed", type=int, help="seed every random choice (testing/research only)")
    g.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=_synth)


def evaluation_path(args: argparse.Namespace) -> Path | None:
    """Where ``--evaluate`` writes (``None``: no evaluation)."""
    if args.evaluate is None:
        return None
    return Path(args.evaluate) if args.evaluate else args.out.with_suffix(".evaluation.json")


def _check_outputs(args: argparse.Namespace) -> None:
    outputs = [o for o in (args.out, args.report, evaluation_path(args)) if o is not None]
    inputs = [Path(p) for p in (args.data, args.domain) if p is not None]
    if Path(args.workload).suffix == ".npz":
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
    if args.out.suffix.lower() not in (".csv", ".parquet"):
        raise DPQueryError(f"--out {args.out} must end in .csv or .parquet")


def _workloads(args: argparse.Namespace, data: Any, rng: np.random.Generator) -> tuple:
    if Path(args.workload).suffix == ".npz":
        workload = Workload.load(args.workload)
        _check_domains(workload, data)  # same bits over another domain would mean other queries
        return workload, None
    if data.domain is None:
        raise DPQueryError("generating a workload needs the data's domain")
    make = {
        "k": args.k, "count": args.queries, "marginals": args.marginals,
        "attributes": args.attributes, "n": data.n,
    }  # fmt: skip
    workload = build_workload(args.workload, data.domain, seed=rng, **make)
    fresh = None if args.workload == "all-marginals" else build_workload(
        args.workload, data.domain, seed=rng, **make
    )  # fmt: skip
    return workload, fresh


def _synth(args: argparse.Namespace) -> int:
    _check_outputs(args)  # before any work: no partial output, no overwritten input
    oracle_options = _oracle_options(args)
    _estimator(args, oracle_options, None)  # every option checked before the data is read
    check_backend_args(args)
    with warnings.catch_warnings(), backend_data(args) as opened:
        warnings.simplefilter("ignore", LargeDeltaWarning)  # said once, on stderr, below
        data: Any = opened  # BinaryData, or PartitionedData standing in for it (dask)
        if data.domain is None:
            raise DPQueryError("synth needs a domain to write records in the input's columns")
        _delta_rule(args, data.n)
        rng = make_rng(args.seed)
        workload, fresh = _workloads(args, data, rng)
        model = _estimator(args, oracle_options, rng)
        report, evaluation, table = _release(args, model, data, workload, fresh, rng)
    # Serialise before writing anything: a failure here must leave no output at all.
    text = json.dumps(report, indent=2, default=_json) + "\n"
    evaluated = evaluation_path(args)
    ev_text = None if evaluation is None else json.dumps(evaluation, indent=2, default=_json)
    # Every file is written to a temporary and they are renamed together on success.
    with ExitStack() as stack:
        tmp = stack.enter_context(atomic_path(args.out, overwrite=True))
        if args.report is not None:
            stack.enter_context(atomic_path(args.report, overwrite=True)).write_text(text)
        if evaluated is not None and ev_text is not None:
            stack.enter_context(atomic_path(evaluated, overwrite=True)).write_text(ev_text + "\n")
        if args.out.suffix.lower() == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_csv(tmp, index=False)
    _summary(report, args)
    if evaluation is not None:
        _evaluation_summary(evaluation, evaluated)
    return 0


def _delta_rule(args: argparse.Namespace, n: int) -> None:
    """The one default (``delta = 1/n^2`` with ``--epsilon``) and the warning at ``1/n``."""
    if args.delta is None and args.epsilon is not None and args.rho is None:
        args.delta = default_delta(n)
    message = check_delta(args.delta, n)  # its Python warning is silenced in _synth
    if message is not None:
        print(f"dpquery synth: warning: {message}", file=sys.stderr)


def _release(
    args: argparse.Namespace, model: Any, data: Any, workload: Workload,
    fresh: Workload | None, rng: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any] | None, Any]:  # fmt: skip
    """Fit, decode and report; evaluate only when asked. The true answers the evaluation
    needs (the fresh workload's) are computed only then, in the same pass on dask."""
    evaluate = evaluation_path(args) is not None
    workloads = [workload] if fresh is None or not evaluate else [workload, fresh]
    dask = args.backend == "dask"
    true = data.answers_many(workloads) if dask else [answer(w, data) for w in workloads]
    release = model.fit(data, workload, true_answers=true[0])
    table, decode_report = decode(release.records, data.domain, numeric=args.numeric, seed=rng)
    report = publishable_report(release, randomness=describe_rng(rng))
    report["release"]["decode"] = decode_report.to_dict()
    report["backend"] = data.describe() if dask else {"name": "local", "partitions": 1}
    if not evaluate:
        return report, None, table
    evaluation = evaluation_report(
        release, data, workload, true_answers=true[0], fresh_workload=fresh,
        fresh_true_answers=true[1] if fresh is not None else None, seed=rng,
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


def _estimator(
    args: argparse.Namespace, oracle_options: dict[str, float], rng: np.random.Generator | None
) -> Any:
    """The algorithm's estimator with the options given on the command line."""
    takes = OPTIONS[args.algorithm]
    given = {
        name: getattr(args, name)
        for names in OPTIONS.values()
        for name in names
        if getattr(args, name, None) is not None
    }
    wrong = sorted(f"--{n.replace('_', '-')}" for n in given if n not in takes)
    if wrong:
        raise DPQueryError(f"--algorithm {args.algorithm} does not take {', '.join(wrong)}")
    if oracle_options and args.algorithm not in _ORACLE_BASED:
        raise DPQueryError(f"--algorithm {args.algorithm} uses no oracle")
    if "reweight_rounds" in given and "reweight" not in given:
        raise DPQueryError("--reweight-rounds needs --reweight FRACTION")
    kwargs: dict[str, Any] = dict(given, seed=rng)
    if args.algorithm in _ORACLE_BASED:
        kwargs["oracle_options"] = oracle_options
    if args.algorithm in ("dualquery", "fem", "sepfem"):
        kwargs["progress"] = False if args.quiet else None
    if "reweight" not in given:
        return ALGORITHMS[args.algorithm](**kwargs)
    # The budget, the seed and the output size belong to the two-stage release.
    outer = {k: kwargs.pop(k) for k in ("epsilon", "delta", "rho", "size", "seed") if k in kwargs}
    fraction, rounds = kwargs.pop("reweight"), kwargs.pop("reweight_rounds", None)
    return Reweighted(ALGORITHMS[args.algorithm](**kwargs), fraction=fraction, T=rounds, **outer)


def _json(x: object) -> object:
    if isinstance(x, np.integer | np.floating | np.bool_):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def _summary(report: dict[str, Any], args: argparse.Namespace) -> None:
    """The publishable account, on stdout: parameters, records, guarantees, randomness."""
    rel = report["release"]
    p = rel["parameters"]
    if "base" in p:  # reweighted: the base's parameters, then MWEM's share and rounds
        p = {**p["base"], "reweight": p["fraction"], "mwem_T": p["mwem"]["T"]}
    shown = ", ".join(f"{k}={p[k]:g}" if isinstance(p[k], float) else f"{k}={p[k]}"
                      for k in ("T", "s", "eta", "epsilon0", "mode", "reweight", "mwem_T")
                      if k in p)  # fmt: skip
    print(f"{rel['algorithm']}: {shown}; {rel['records']} records over {rel['d']} bits "
          f"-> {args.out}")  # fmt: skip
    for g in rel["privacy"]["guarantees"]:
        print(f"  privacy: {_guarantee(g)}")
    print(f"  privacy: {rel['privacy']['neighbouring']}; noise from "
          f"{rel['randomness']['bit_generator']} ({rel['randomness']['note']})")  # fmt: skip
    print(f"  time: {rel['timings'].get('total_s', 0.0):.1f} s")
    backend = report.get("backend", {})
    if backend.get("name") == "dask":
        print(f"  backend: dask, {backend['partitions']} partitions on {backend['workers']} "
              "workers")  # fmt: skip


def _evaluation_summary(ev: dict[str, Any], path: Path | None) -> None:
    """The evaluation's numbers, on stdout, under their NOT PRIVATE label."""
    print(f"  {ev['label']} (written to {path}):")
    if "backend_s" in ev["timings"]:
        print(f"  backend: {ev['timings']['backend_s']:.1f} s computing true answers")
    print(f"  {'':<16}{'max error':>10}{'mean error':>12}")
    rows = [("release", ev["errors"]["workload"])]
    if "fresh_workload" in ev["errors"]:
        rows.append(("fresh workload", ev["errors"]["fresh_workload"]))
    rows += [(f"{k} baseline", v) for k, v in ev["baselines"].items()]
    for name, e in rows:
        print(f"  {name:<16}{e['max_error']:>10.4f}{e['mean_error']:>12.4f}")


def _guarantee(g: dict[str, Any]) -> str:
    if g["measure"] == "zcdp":
        return f"rho={g['rho']:.4g} (zCDP) [{g['accountant']}]"
    if g["measure"] == "pure":
        return f"epsilon={g['epsilon']:.4g} (pure) [{g['accountant']}]"
    return f"(epsilon={g['epsilon']:.4g}, delta={g['delta']:.3g}) [{g['accountant']}]"
