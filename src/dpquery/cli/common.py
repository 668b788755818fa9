"""Options shared by sub-commands that read data: ``--data FILE --domain DOMAIN.json`` or
``--dataset NAME``."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from dpquery.data.binary import BinaryData, load_binary
from dpquery.data.domain import Domain, infer_domain
from dpquery.data.encode import encode, read_table
from dpquery.errors import DPQueryError, NonPrivateWarning


def add_data_args(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    g = parser.add_argument_group("data (one of --data or --dataset)")
    g.add_argument("--data", type=Path, metavar="FILE",
                   help="a table (.csv, .csv.gz, .parquet) or an encoded .npz file")  # fmt: skip
    g.add_argument("--domain", type=Path, metavar="DOMAIN.json",
                   help="the public domain of --data (full or private-pgm format)")  # fmt: skip
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (dpquery datasets list)")
    g.add_argument(
        "--infer-domain", action="store_true",
        help="read the domain off the data: NOT PRIVATE, for exploration only",
    )  # fmt: skip
    parser.set_defaults(_data_required=required)


def warn_non_private(domain: Domain) -> None:
    if domain.non_private:
        print(
            "dpquery: WARNING: the domain was read from the private data; anything released "
            "with it is NOT differentially private",
            file=sys.stderr,
        )


def load_domain_arg(args: argparse.Namespace, table_path: Path | None = None) -> Domain:
    if args.domain is not None:
        if args.infer_domain:
            raise DPQueryError("give either --domain or --infer-domain, not both")
        return Domain.load(args.domain)
    if args.infer_domain and table_path is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            domain = infer_domain(read_table(table_path))
        warn_non_private(domain)
        return domain
    raise DPQueryError(
        "--data needs --domain DOMAIN.json (the public domain); --infer-domain reads one "
        "off the data for exploration only"
    )


def load_data(args: argparse.Namespace) -> BinaryData:
    """The data named on the command line, encoded over its public domain."""
    from dpquery import datasets

    if (args.data is None) == (args.dataset is None):
        raise DPQueryError("give exactly one of --data FILE or --dataset NAME")
    if args.dataset is not None:
        if args.domain is not None or args.infer_domain:
            raise DPQueryError("--dataset has its own public domain; drop --domain")
        return datasets.load(args.dataset)
    if args.data.suffix == ".npz":
        data = load_binary(args.data)
        if data.domain is not None:
            warn_non_private(data.domain)
        return data
    domain = load_domain_arg(args, args.data)
    return encode(read_table(args.data, domain), domain)
