"""The output table's flags, shared by the commands that write a release as a table:
``--rows N`` (default: the input's n, public) and ``--weights`` (the weighted support).

The table's dtypes are the public domain's (an attribute's ``"dtype"`` in the domain JSON
declares one), never read from the input: not even from a Parquet footer, whose schema
pandas or the writer inferred from the values (one age of 37.5 makes the column a double)."""

from __future__ import annotations

import argparse
from typing import Any

from dpquery.errors import DPQueryError
from dpquery.pipeline.reports import RELEASED


def add_output_args(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--rows", type=int, metavar="N",
                       help="rows of the output table, sampled from the release (default: "
                       "as many as the input, n, which is public)")  # fmt: skip
    group.add_argument("--weights", action="store_true",
                       help="write the released records themselves with a 'weight' column (an "
                       "array 'weights' in S.npz) instead of sampling rows")  # fmt: skip


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
    """How the table's rows were made (the report's ``release.output``), for the console;
    item data's output (which has a ``form``) is over items, a table's over bits."""
    over = f"over {d} {'items' if 'form' in output else 'bits'}"
    if output["method"] == RELEASED:
        return f"the {output['rows']} released records {over}"
    if output["method"].startswith(RELEASED):
        weights = "an array 'weights'" if "array" in output["method"] else "a 'weight' column"
        return f"the {output['rows']} released records {over}, with {weights}"
    return (
        f"sampled from the {output['released_records']} synthetic records {over} "
        "(systematic sampling: each repeated in proportion to its weight)"
    )
