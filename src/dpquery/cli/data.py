"""``dpquery datasets ...`` and ``dpquery encode ...``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpquery import datasets
from dpquery.cli.common import load_domain_arg
from dpquery.data.binary import BinaryData, save_binary
from dpquery.data.encode import read_transactions
from dpquery.errors import DPQueryError
from dpquery.pipeline.inputs import encode_file


def register(sub: argparse._SubParsersAction) -> None:
    ds = sub.add_parser("datasets", help="list, describe and fetch the built-in datasets")
    ds_sub = ds.add_subparsers(dest="datasets_command", metavar="ACTION", required=True)
    p = ds_sub.add_parser("list", help="list the datasets and whether they are available")
    p.set_defaults(func=_list)
    p = ds_sub.add_parser("info", help="describe a dataset and its public domain")
    p.add_argument("name")
    p.add_argument("--save-domain", type=Path, metavar="DOMAIN.json",
                   help="write the dataset's public domain as JSON")  # fmt: skip
    p.set_defaults(func=_info)
    p = ds_sub.add_parser("fetch", help="download a dataset from its official source")
    p.add_argument("name")
    p.add_argument("--dest", type=Path, help="folder to store it in (default ~/.cache/dpquery)")
    p.add_argument("--force", action="store_true", help="download again even if present")
    p.set_defaults(func=_fetch)

    p = sub.add_parser(
        "encode",
        help="encode a table to bits over a public domain",
        description="Encode a table over its public domain and print n, d and the one-hot "
        "groups. Writes nothing unless -o is given.",
    )
    p.add_argument("table", type=Path, metavar="DATA",
                   help=".csv, .csv.gz, .parquet, or a 'row item' transaction file")  # fmt: skip
    g = p.add_argument_group("domain (one of --domain or --infer-domain)")
    g.add_argument("--domain", type=Path, metavar="DOMAIN.json",
                   help="the public domain of DATA (full or private-pgm format)")  # fmt: skip
    g.add_argument(
        "--infer-domain", action="store_true",
        help="read the domain off the data: NOT PRIVATE, for exploration only",
    )  # fmt: skip
    p.add_argument("--transactions", action="store_true",
                   help="DATA is a 'row item' file; needs --n and --items")  # fmt: skip
    p.add_argument("--n", type=int, help="number of rows of a transaction file (public)")
    p.add_argument("--items", type=int, help="number of items of a transaction file (public)")
    p.add_argument("-o", "--output", type=Path, help="write the encoded data (.npz)")
    p.add_argument("--save-domain", type=Path, metavar="DOMAIN.json",
                   help="write the domain used (e.g. the inferred one) as JSON")  # fmt: skip
    p.set_defaults(func=_encode)


def _list(args: argparse.Namespace) -> int:
    for name, info in datasets.DATASETS.items():
        source = datasets.source_of(name)
        status = "missing" if source is None else f"available ({source})"
        print(f"{name:<11} {info.rows:>8,} rows  {status:<30}  {info.description}")
    return 0


def _info(args: argparse.Namespace) -> int:
    info = datasets.info(args.name)
    domain = datasets.domain(args.name)
    print(f"{info.name}: {info.description}")
    print(f"rows: {info.rows:,}   source: {info.source}")
    for f in info.files:
        print(f"file: {f.path}" + (f"  <- {f.url}" if f.url else ""))
    print(domain.describe())
    if args.save_domain:
        domain.save(args.save_domain)
    return 0


def _fetch(args: argparse.Namespace) -> int:
    for rel, path in datasets.fetch(args.name, dest=args.dest, force=args.force).items():
        print(f"{rel}: {path}")
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Fail before any work (and so before any write) on an output that is an input, a
    folder, in a missing folder, or named twice."""
    inputs = [p.resolve() for p in (args.table, args.domain) if p is not None]
    outputs = [p for p in (args.output, args.save_domain) if p is not None]
    for out in outputs:
        if out.resolve() in inputs:
            raise DPQueryError(f"refusing to overwrite the input {out}")
        if out.is_dir():
            raise DPQueryError(f"cannot write {out}: it is a folder")
        if not out.resolve().parent.is_dir():
            raise DPQueryError(f"cannot write {out}: folder {out.parent} does not exist")
    if len(outputs) == 2 and outputs[0].resolve() == outputs[1].resolve():
        raise DPQueryError(f"-o and --save-domain both name {outputs[0]}")


def _encode(args: argparse.Namespace) -> int:
    _check_outputs(args)
    if args.transactions:
        if args.n is None or args.items is None:
            raise DPQueryError("--transactions needs --n ROWS and --items ITEMS (public sizes)")
        data: BinaryData = read_transactions(args.table, n=args.n, d=args.items)
    else:
        domain = load_domain_arg(args, args.table)
        data = encode_file(args.table, domain)
        if args.save_domain:
            domain.save(args.save_domain)
    print(f"n = {data.n}")
    print(f"d = {data.d} bits")
    print(f"one-hot groups = {len(data.onehot_groups)}")
    print(f"packed size = {data.nbytes / 2**20:.2f} MiB")
    if data.domain is not None:
        print(data.domain.describe())
    if args.output is not None:
        save_binary(args.output, data)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0
