"""Options shared by sub-commands that read data: ``--data FILE --domain DOMAIN.json`` or
``--dataset NAME``."""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dpquery import datasets
from dpquery.backends import DaskBackend, PartitionedData, connect
from dpquery.backends.partitions import table_files
from dpquery.data.binary import BinaryData, load_binary
from dpquery.data.domain import Domain, infer_domain
from dpquery.data.encode import encode, read_table
from dpquery.data.items import ItemSets, read_item_sets
from dpquery.errors import DPQueryError, NonPrivateWarning


@contextmanager
def flag_errors(*names: str, flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Library errors raised inside, with the parameters ``names`` spelled as flags
    (``delta`` -> ``--delta``; ``flags`` maps a parameter to another flag): the library names
    values, the command line names flags."""
    spelled = {n: "--" + n.replace("_", "-") for n in names} | dict(flags or {})
    try:
        yield
    except DPQueryError as exc:
        message = str(exc)
        for name, flag in spelled.items():
            message = re.sub(rf"(?<![\w=-]){re.escape(name)}(?![\w=])", flag, message)
        raise DPQueryError(message) from None


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


def add_item_args(parser: argparse.ArgumentParser) -> None:
    """``--transactions [--n ROWS --items D]``: --data holds records as sets of items."""
    g = parser.add_argument_group("item data (records as sets of items, kept sparse)")
    g.add_argument("--transactions", action="store_true",
                   help="--data is a 'row item' file (first line '# rows N items D', or give "
                        "--n and --items) or a sparse .npz")  # fmt: skip
    g.add_argument("--n", type=int, metavar="ROWS",
                   help="number of records of a transaction file (public)")  # fmt: skip
    g.add_argument("--items", type=int, metavar="D",
                   help="number of items of a transaction file (public)")  # fmt: skip


def is_item_file(path: Path) -> bool:
    """A ``.transactions.csv`` (optionally compressed) file: records as sets of items."""
    return ".transactions" in [s.lower() for s in path.suffixes]


def load_item_sets(args: argparse.Namespace) -> ItemSets:
    """The item data of ``--data`` (``--transactions``), with the public sizes given."""
    if args.data is None or args.dataset is not None:
        raise DPQueryError("item data is read from --data FILE (a 'row item' file or .npz)")
    if args.domain is not None or args.infer_domain:
        raise DPQueryError("item data needs no domain (its items are 0..D-1); drop --domain")
    return read_item_sets(args.data, n=args.n, d=args.items)  # its n, d: --n, --items


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


def add_backend_args(parser: argparse.ArgumentParser) -> None:
    """``--backend local|dask [--scheduler ADDRESS] [--partitions N]``."""
    g = parser.add_argument_group("backend (where the true answers are computed)")
    g.add_argument("--backend", choices=("local", "dask"), default="local",
                   help="local (default): in this process; dask: on a Dask cluster")  # fmt: skip
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: start a "
                        "local cluster of 2 workers)")  # fmt: skip
    g.add_argument("--partitions", type=int, metavar="N",
                   help="cut the data into N partitions (default: one per Parquet row group "
                        "or 32 MiB of CSV; one per worker for --dataset or a .npz)")  # fmt: skip


def check_backend_args(args: argparse.Namespace) -> None:
    """Backend options are checked before any data is read or any cluster started."""
    if args.backend != "dask":
        given = [f for f, v in (("--scheduler", args.scheduler), ("--partitions", args.partitions))
                 if v is not None]  # fmt: skip
        if given:
            raise DPQueryError(f"{' and '.join(given)} need --backend dask")
        return
    if args.partitions is not None and args.partitions < 1:
        raise DPQueryError(f"--partitions must be a positive integer, got {args.partitions}")
    if args.infer_domain:
        raise DPQueryError("--backend dask needs --domain DOMAIN.json: --infer-domain would "
                           "read the whole table in this process")  # fmt: skip
    if (args.data is None) == (args.dataset is None):
        raise DPQueryError("give exactly one of --data FILE or --dataset NAME")
    if args.dataset is not None and args.domain is not None:
        raise DPQueryError("--dataset has its own public domain; drop --domain")


@contextmanager
def backend_data(args: argparse.Namespace) -> Iterator[BinaryData | PartitionedData]:
    """The data on the chosen backend: :class:`BinaryData` in memory (local), or a
    :class:`~dpquery.backends.PartitionedData` on a Dask cluster, closed on exit."""
    check_backend_args(args)
    if args.backend == "local":
        yield load_data(args)
        return
    domain = None
    if args.data is not None and args.data.suffix != ".npz":
        table_files(args.data)  # a missing file or a bad domain fails before connecting
        domain = load_domain_arg(args, args.data)
    with connect(args.scheduler) as backend:
        yield _partitioned(args, backend, domain)


def _partitioned(
    args: argparse.Namespace, backend: DaskBackend, domain: Domain | None
) -> PartitionedData:
    # In-memory inputs (a built-in dataset, an encoded .npz) default to one part per worker.
    parts = args.partitions
    if args.dataset is not None:
        table, ds_domain = datasets.load_table(args.dataset)
        return PartitionedData.from_frame(table, ds_domain, backend, parts or backend.workers())
    if domain is None:
        data = load_binary(args.data)
        if data.domain is not None:
            warn_non_private(data.domain)
        return PartitionedData.from_binary(data, backend, parts or backend.workers())
    return PartitionedData.from_table(args.data, domain, backend, parts)
