"""The output table's flags, shared by the commands that write a release as a table:
``--rows N`` (default: the input's n, public) and ``--weights`` (the weighted support)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError

PARQUET = (".parquet", ".pq")


def add_output_args(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--rows", type=int, metavar="N",
                       help="rows of the output table, sampled from the release (default: "
                       "as many as the input, n, which is public)")  # fmt: skip
    group.add_argument("--weights", action="store_true",
                       help="write the released records themselves with a 'weight' column "
                       "instead of sampling rows")  # fmt: skip


def output_rows(args: argparse.Namespace, n: int) -> int | None:
    """The rows to sample (``--rows``, default ``n``), or None with ``--weights``."""
    if args.rows is not None and args.rows < 1:
        raise DPQueryError(f"--rows must be a positive integer, got {args.rows}")
    if args.weights:
        if args.rows is not None:
            raise DPQueryError("--rows and --weights exclude each other: the weighted output "
                               "has the released records")  # fmt: skip
        return None
    return n if args.rows is None else args.rows


def describe_output(output: dict[str, Any], d: int) -> str:
    """How the table's rows were made (the report's ``release.output``), for the console."""
    if output["method"].startswith("the released records"):
        return f"the {output['rows']} released records over {d} bits, with a 'weight' column"
    return (
        f"sampled from the {output['released_records']} synthetic records over {d} bits "
        "(systematic sampling: each repeated in proportion to its weight)"
    )


def with_input_dtypes(args: argparse.Namespace, domain: Domain) -> Domain:
    """The domain with the dtypes of a Parquet input's schema (read from the file's footer,
    not its rows: the schema, like the column names); other inputs keep the domain's own
    (a CSV has no dtypes: pandas would infer them from the values)."""
    data = getattr(args, "data", None)
    if data is None or Path(data).suffix.lower() not in PARQUET or not Path(data).is_file():
        return domain
    import pyarrow.parquet as pq  # heavy: loaded only for a parquet file

    return domain.with_dtypes(pq.read_schema(data).empty_table().to_pandas())
