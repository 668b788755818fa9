"""``dpquery workload make|show``, ``dpquery answer`` and ``dpquery evaluate``.

``answer`` and ``evaluate`` read the private data and print exact statistics of it: they are
tools for the data holder, not releases, and say so on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dpquery import datasets
from dpquery.backends import PartitionedData
from dpquery.backends.partitioned import describe_partitions
from dpquery.cli.common import (
    RAW_ITEM_FLAGS,
    add_backend_args,
    add_data_args,
    add_item_args,
    add_raw_item_args,
    backend_data,
    load_data,
    load_item_sets,
)
from dpquery.cli.report import (
    add_html_args,
    check_html_support,
    coherence_of,
    describe_coherence,
    load_release_report,
    write_html_report,
    write_wide_html_report,
)
from dpquery.data.binary import BinaryData, load_binary, load_weighted
from dpquery.data.domain import Domain
from dpquery.data.encode import read_table
from dpquery.data.items import read_item_sets
from dpquery.data.raw_items import raw_header, read_raw_items
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.evaluation.metrics import error_report
from dpquery.evaluation.wide import describe_wide, wide_evaluation
from dpquery.io import atomic_path, atomic_write_text
from dpquery.pipeline.inputs import encode_file, is_item_file
from dpquery.pipeline.plan import workload_of_kind
from dpquery.queries import WORKLOAD_KINDS, check_same_domain
from dpquery.queries.evaluate import answer, answer_data, cached_answers
from dpquery.queries.workload import Workload, describe_query

NOT_PRIVATE = (
    "dpquery: NOTE: these are exact answers computed on the private data; they are NOT "
    "differentially private. Do not publish them."
)


def register(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser("workload", help="make and inspect query workloads")
    w_sub = w.add_subparsers(dest="workload_command", metavar="ACTION", required=True)

    p = w_sub.add_parser(
        "make",
        help="generate a workload over a domain",
        description="Generate a workload over the public domain of --dataset, of --data "
        "--domain, or of --domain alone. Reads no records unless --kind marginal-cells needs "
        "the number of records n (give --n to avoid reading the data).",
    )
    add_data_args(p, required=False)
    p.add_argument("--kind", choices=WORKLOAD_KINDS, required=True,
                   help="marginals: random sensible k-way queries (DualQuery); marginal-cells: "
                        "all cells of --marginals random k-attribute marginals (FEM); "
                        "all-marginals: all k-way marginals of --attributes")  # fmt: skip
    p.add_argument("--k", type=int, default=3, help="attributes (or bits) per query")
    p.add_argument(
        "--count", type=int, help="number of queries (marginals, parities, disjunctions)"
    )
    p.add_argument("--marginals", type=int, help="number of marginals (marginal-cells)")
    p.add_argument("--attributes", nargs="+", metavar="NAME", help="attributes (all-marginals)")
    p.add_argument("--n", type=int, help="public number of records (marginal-cells)")
    p.add_argument("--seed", type=int, help="seed of every random choice (default: OS entropy)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="W.npz")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    p.set_defaults(func=_make)

    p = w_sub.add_parser("show", help="print queries in the user's terms, one JSON per line")
    p.add_argument("workload", type=Path, metavar="W.npz")
    p.add_argument("--limit", type=int, help="print at most this many queries")
    p.add_argument("--format", choices=("jsonl",), default="jsonl")
    p.add_argument("--negations", action="store_true",
                   help="also print the negated queries (the implicit closure)")  # fmt: skip
    p.set_defaults(func=_show)

    _register_answer_and_evaluate(sub)


def _register_answer_and_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "answer",
        help="true answers of a workload on the data (NOT private)",
        description="Exact answers of every query, in workload order. NOT private: for the "
        "data holder only.",
    )
    p.add_argument("workload", type=Path, metavar="W.npz")
    add_data_args(p)
    p.add_argument("-o", "--output", type=Path, required=True, metavar="A.npy|A.csv")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    p.add_argument("--cache-dir", type=Path, help="folder caching true answers by content hash")
    add_backend_args(p)
    p.set_defaults(func=_answer)

    p = sub.add_parser(
        "evaluate",
        help="error of synthetic records against the true answers (NOT private)",
        description="Compare the answers of --synthetic records with the true answers on the "
        "data; print the error report and write it as JSON. On item data (--transactions, "
        "or a synthetic S.transactions.csv) the measures are each item's frequency, the "
        "co-occurrence of frequent items and 3-way conjunctions, beside the zeros, indep and "
        "uniform tables (docs/evaluation.md).",
    )
    add_data_args(p)
    add_item_args(p)
    add_raw_item_args(p)
    p.add_argument("--synthetic", type=Path, required=True, metavar="S.csv",
                   help="synthetic records: a table over the domain (optional 'weight' "
                        "column), an encoded .npz, or item sets (S.transactions.csv)")  # fmt: skip
    p.add_argument("--workload", type=Path, metavar="W.npz",
                   help="the workload (required, except on item data)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random triples on item data (default 0)")  # fmt: skip
    p.add_argument("--report", type=Path, metavar="R.json", help="write the report as JSON")
    add_html_args(p)
    p.add_argument("--overwrite", action="store_true", help="replace an existing report file")
    p.add_argument("--cache-dir", type=Path, help="folder caching true answers by content hash")
    p.set_defaults(func=_evaluate)


# -- helpers --------------------------------------------------------------------------
def _inputs(args: argparse.Namespace) -> list[Path]:
    names = ("data", "domain", "workload", "synthetic")
    return [Path(getattr(args, a)) for a in names if getattr(args, a, None) is not None]


def _check_output(args: argparse.Namespace, output: Path) -> None:
    """Refuse to write onto a folder, an input, or an existing file without --overwrite."""
    if output.is_dir():
        raise DPQueryError(f"cannot write {output}: it is a folder; give a file name")
    for path in _inputs(args):
        if path.exists() and output.exists() and output.resolve() == path.resolve():
            raise DPQueryError(f"output {output} is one of the inputs; refusing to overwrite it")
    if output.exists() and not args.overwrite:
        raise DPQueryError(f"{output} already exists; pass --overwrite to replace it")


def _domain_and_n(args: argparse.Namespace, need_n: bool) -> tuple[Domain, int | None]:
    """The public domain named on the command line, and n when needed."""
    if args.dataset is not None:
        if args.data is not None or args.domain is not None:
            raise DPQueryError("give --dataset alone, or --data with --domain")
        n = args.n if args.n is not None else datasets.info(args.dataset).rows
        return datasets.domain(args.dataset), n
    if args.data is not None:
        if need_n and args.n is None:
            data = load_data(args)
            if data.domain is None:
                raise DPQueryError(f"{args.data} carries no domain; give --domain")
            return data.domain, data.n
        if args.data.suffix == ".npz":
            binary = load_binary(args.data)
            if binary.domain is None:
                raise DPQueryError(f"{args.data} carries no domain")
            return binary.domain, args.n if args.n is not None else binary.n
        if args.domain is None:
            raise DPQueryError("--data needs --domain DOMAIN.json (the public domain)")
        return Domain.load(args.domain), args.n
    if args.domain is not None:
        return Domain.load(args.domain), args.n
    raise DPQueryError("give --dataset NAME, --data FILE --domain DOMAIN.json, or --domain")


def _make_workload(args: argparse.Namespace) -> Workload:
    domain, n = _domain_and_n(args, need_n=args.kind == "marginal-cells")
    return workload_of_kind(
        args.kind, domain, k=args.k, count=args.count, marginals=args.marginals,
        attributes=args.attributes, n=n, seed=args.seed,
    )  # fmt: skip


def _true_answers(
    args: argparse.Namespace, workload: Workload, data: BinaryData | PartitionedData
) -> np.ndarray:
    check_same_domain(workload, data.d, data.domain)
    if isinstance(data, PartitionedData):
        return data.answers(workload)
    if args.cache_dir is not None:
        return cached_answers(workload, data, args.cache_dir)
    return answer_data(workload, data)


def _load_synthetic(path: Path, domain: Domain | None) -> BinaryData | Records:
    """Synthetic records: an encoded ``.npz`` (``weights`` optional, as ``dpquery synth
    --weights`` writes it) or a table over the domain (``weight`` column optional)."""
    if path.suffix == ".npz":
        bits, weights = load_weighted(path)
        return bits if weights is None else Records(bits.to_dense(), weights, bits.domain)
    if domain is None:
        raise DPQueryError("reading a synthetic table needs the data's domain")
    table = read_table(path, None)
    weights = table.pop("weight").to_numpy(float) if "weight" in table.columns else None
    encoded = encode_file(path, domain)
    if weights is None:
        return encoded
    return Records(encoded.to_dense(), weights, domain)


# -- commands -------------------------------------------------------------------------
def _make(args: argparse.Namespace) -> int:
    _check_output(args, args.output)
    workload = _make_workload(args)
    workload.save(args.output, overwrite=args.overwrite)
    print(f"wrote {args.output}: {workload!r}, hash {workload.content_hash}")
    return 0


def _show(args: argparse.Namespace) -> int:
    workload = Workload.load(args.workload)
    if args.limit is not None and args.limit < 0:
        raise DPQueryError(f"--limit must be non-negative, got {args.limit}")
    count = len(workload) if args.limit is None else min(args.limit, len(workload))
    out = sys.stdout
    for i in range(count):
        out.write(json.dumps(describe_query(workload, i)) + "\n")
        if args.negations:
            out.write(json.dumps(describe_query(workload, i, negated=True)) + "\n")
    return 0


def _answer(args: argparse.Namespace) -> int:
    suffix = args.output.suffix.lower()
    if suffix not in (".npy", ".csv"):
        raise DPQueryError(f"output {args.output} must end in .npy or .csv")
    _check_output(args, args.output)
    if args.backend == "dask" and args.cache_dir is not None:
        raise DPQueryError("--cache-dir works with the local backend only (its key hashes "
                           "the data in memory)")  # fmt: skip
    workload = Workload.load(args.workload)
    with backend_data(args) as data:
        answers = _true_answers(args, workload, data)
        if isinstance(data, PartitionedData):
            print(f"dask: {describe_partitions(data.describe())}, {data.seconds:.1f} s")
    print(NOT_PRIVATE, file=sys.stderr)
    with atomic_path(args.output, overwrite=args.overwrite) as tmp:
        if suffix == ".npy":
            with open(tmp, "wb") as f:
                np.save(f, answers)
        else:
            np.savetxt(tmp, answers, fmt="%.17g", header="answer", comments="")
    print(f"wrote {len(answers)} answers to {args.output}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    for output in (args.report, args.html):
        if output is not None:
            _check_output(args, output)
    check_html_support(args)  # a missing extra fails before any data is read
    release = load_release_report(args)  # a bad --release-report fails before any work
    raw = any(getattr(args, f) is not None for f in RAW_ITEM_FLAGS)
    if args.transactions or raw or is_item_file(args.synthetic):
        return _evaluate_items(args, release)
    if args.n is not None or args.items is not None:
        raise DPQueryError("--n and --items are the sizes of item data: give --transactions")
    if args.workload is None:
        raise DPQueryError("evaluate needs --workload W.npz (item data needs none)")
    workload = Workload.load(args.workload)
    data = load_data(args)
    synthetic = _load_synthetic(args.synthetic, data.domain)
    if synthetic.d != data.d:
        raise DPQueryError(f"synthetic records have {synthetic.d} bits, the data {data.d}")
    true = _true_answers(args, workload, data)
    report = error_report(true, answer(workload, synthetic), workload)
    coherence = coherence_of(args, data)
    print(NOT_PRIVATE)  # on the stream of the numbers it labels
    print(report.describe())
    print(describe_coherence(coherence))
    if args.html is not None:
        write_html_report(args, data, synthetic, workload, true, release)
    if args.report is not None:
        obj = report.to_dict()
        if coherence is not None:  # NOT PRIVATE, like the errors; its note says so
            obj["coherence"] = coherence
        atomic_write_text(args.report, json.dumps(obj, indent=2) + "\n", overwrite=args.overwrite)
    return 0


def _evaluate_items(args: argparse.Namespace, release: dict[str, Any] | None) -> int:
    """The wide measures (:mod:`dpquery.evaluation.wide`) of item sets, NOT private."""
    if args.workload is not None:
        raise DPQueryError("item data is scored on the wide measures; drop --workload")
    real = load_item_sets(args)
    npz = args.synthetic.suffix.lower() == ".npz"
    if args.item_list is not None and not npz and raw_header(args.synthetic) is not None:
        synthetic, _ = read_raw_items(args.synthetic, args.item_list)
    else:
        synthetic = read_item_sets(args.synthetic, allow_empty=True)  # may hold no item
    if synthetic.d != real.d:
        raise DPQueryError(
            f"{args.synthetic}: the synthetic records have {synthetic.d} items, the data {real.d}"
        )
    evaluation = wide_evaluation(real, synthetic, seed=args.seed)
    print(NOT_PRIVATE)  # on the stream of the numbers it labels
    print(describe_wide(evaluation))
    if args.html is not None:
        write_wide_html_report(args, evaluation, release)
    if args.report is not None:
        text = json.dumps(evaluation, indent=2) + "\n"
        atomic_write_text(args.report, text, overwrite=args.overwrite)
    return 0
