"""Options shared by sub-commands that read data: ``--data FILE --domain DOMAIN.json`` or
``--dataset NAME``."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dpquery.backends import PartitionedData
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets, read_item_sets
from dpquery.data.raw_items import read_raw_items
from dpquery.errors import DPQueryError
from dpquery.pipeline import inputs
from dpquery.pipeline.inputs import load_domain
from dpquery.pipeline.request import Backend, Dataset, TableFile


@contextmanager
def flag_errors(*names: str, flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Library errors raised inside, with the parameters ``names`` spelled as flags
    (``delta`` -> ``--delta``; ``flags`` maps a parameter to another flag): the library names
    values, the command line names flags. The error's notes (what a failed run spent) are
    kept."""
    try:
        yield
    except DPQueryError as exc:
        spelled = DPQueryError(as_flags(str(exc), *names, flags=flags))
        for note in getattr(exc, "__notes__", []):
            spelled.add_note(note)
        raise spelled from None


def as_flags(message: str, *names: str, flags: Mapping[str, str] | None = None) -> str:
    """``message`` with the parameters ``names`` (and ``flags``' keys) spelled as flags."""
    spelled = {n: "--" + n.replace("_", "-") for n in names} | dict(flags or {})
    for name, flag in spelled.items():
        message = re.sub(rf"(?<![\w=-]){re.escape(name)}(?![\w=])", flag, message)
    return message


def add_data_args(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    g = parser.add_argument_group("data (one of --data or --dataset)")
    g.add_argument("--data", type=Path, metavar="FILE",
                   help="a table (.csv, .csv.gz, .parquet) or an encoded .npz file")  # fmt: skip
    g.add_argument("--domain", type=Path, metavar="DOMAIN.json",
                   help="the public domain of --data (a domain or codebook JSON); synth "
                   "without it learns one privately")  # fmt: skip
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (dpquery datasets list)")
    g.add_argument(
        "--infer-domain", action="store_true",
        help="read the domain off the data: NOT PRIVATE, for exploration only",
    )  # fmt: skip
    parser.set_defaults(_data_required=required)


RAW_ITEM_FLAGS = ("item_list", "user_column", "item_column")
"""The options of a raw user x item table (:func:`add_raw_item_args`)."""


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


def add_raw_item_args(parser: argparse.ArgumentParser) -> None:
    """``--item-list FILE [--user-column NAME --item-column NAME]``: --data is a raw user x
    item CSV (a header, raw ids; :mod:`dpquery.data.raw_items`)."""
    g = parser.add_argument_group(
        "a raw user x item CSV (a header, raw ids: e.g. userId,movieId,rating; each distinct "
        "user a record)"
    )
    g.add_argument("--item-list", type=Path, metavar="FILE",
                   help="its public item universe: one item id per line (a catalogue); lines "
                        "of --data whose item is not listed are dropped. Implies "
                        "--transactions")  # fmt: skip
    g.add_argument(
        "--user-column", metavar="NAME", help="its user id column (default: the first column)"
    )
    g.add_argument(
        "--item-column", metavar="NAME", help="its item id column (default: the second column)"
    )


def load_item_sets(args: argparse.Namespace) -> ItemSets:
    """The item data of ``--data`` (``--transactions``), with the public sizes given."""
    if args.data is None or args.dataset is not None:
        raise DPQueryError("item data is read from --data FILE (a 'row item' file or .npz)")
    if args.domain is not None or args.infer_domain:
        raise DPQueryError("item data needs no domain (its items are 0..D-1); drop --domain")
    if getattr(args, "item_list", None) is not None:  # a raw user x item table
        if args.n is not None or args.items is not None:
            raise DPQueryError(f"{args.data} is read over --item-list (its records its "
                               "users): drop --n and --items")  # fmt: skip
        return read_raw_items(args.data, args.item_list, user_column=args.user_column,
                              item_column=args.item_column)[0]  # fmt: skip
    return read_item_sets(args.data, n=args.n, d=args.items)  # its n, d: --n, --items


def load_domain_arg(args: argparse.Namespace, table_path: Path | None = None) -> Domain:
    """The public domain of ``--domain``, or with ``--infer-domain`` read off the table."""
    return load_domain(args.domain, args.infer_domain, table_path)


def source_of(args: argparse.Namespace) -> TableFile | Dataset:
    """The table named on the command line: ``--data FILE`` or ``--dataset NAME``."""
    if (args.data is None) == (args.dataset is None):
        raise DPQueryError("give exactly one of --data FILE or --dataset NAME")
    if args.dataset is not None:
        if args.domain is not None or args.infer_domain:
            raise DPQueryError("--dataset has its own public domain; drop --domain")
        return Dataset(args.dataset)
    na_values = tuple(v for v in getattr(args, "na_values", "").split(",") if v)
    return TableFile(args.data, args.domain, args.infer_domain, na_values)


def load_data(args: argparse.Namespace) -> BinaryData:
    """The data named on the command line, encoded over its public domain."""
    return inputs.load_data(source_of(args))


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


def backend_of(args: argparse.Namespace) -> Backend:
    """``--backend``, ``--scheduler`` and ``--partitions``."""
    return Backend(args.backend, args.scheduler, args.partitions)


@contextmanager
def backend_data(args: argparse.Namespace) -> Iterator[BinaryData | PartitionedData]:
    """The data on the chosen backend: :class:`BinaryData` in memory (local), or a
    :class:`~dpquery.backends.PartitionedData` on a Dask cluster, closed on exit."""
    check_backend_args(args)
    with inputs.open_data(source_of(args), backend_of(args)) as data:
        yield data
