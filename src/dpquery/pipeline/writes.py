"""The last step of a release: its files, written all or nothing.

The paths are checked before any work (no partial output, no overwritten input), the form
of the rows follows the output's suffix (checked once the data's width is known), and every
file is written to a temporary and renamed only when all writes succeeded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.data.binary import write_binary
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets, write_item_sets
from dpquery.data.raw_items import ItemLabels, write_raw_item_sets
from dpquery.errors import DPQueryError
from dpquery.io import atomic_path
from dpquery.pipeline.inputs import is_item_file, learns_items
from dpquery.pipeline.request import Files, ItemFile, ReleaseRequest, TableFile

DENSE_COLUMNS = 1000
"""Above this many columns (items, or attributes) a CSV is written only with ``dense``."""


def check_files(request: ReleaseRequest) -> None:
    """The output paths, before any work: distinct, none of them an input, each a new file
    in an existing folder (or ``overwrite``), a table's rows in a known format."""
    files = request.files
    if files is None:
        return
    learned = files.domain if request.learns else None  # the domain learned, written beside
    if learns_items(request.source):  # the item universe learned, written beside
        learned = files.items
    outputs = [o for o in (files.out, files.report, files.evaluation, learned) if o is not None]
    source = request.source
    inputs = []
    if isinstance(source, TableFile | ItemFile):
        inputs.append(source.path)
    if isinstance(source, ItemFile) and source.item_list is not None:
        inputs.append(source.item_list)
    if isinstance(source, TableFile) and source.domain is not None:
        inputs.append(source.domain)
    if isinstance(request.workload, Path):
        inputs.append(request.workload)
    resolved = [o.resolve() for o in outputs]
    if len(set(resolved)) != len(resolved):
        raise DPQueryError(
            "two of --out, --report, --evaluate"
            + (f" and the learned domain or items ({learned})" if learned is not None else "")
            + " name the same file"
        )
    for out in outputs:
        if any(out.resolve() == i.resolve() for i in inputs if i.exists()):
            raise DPQueryError(f"output {out} is one of the inputs; refusing to overwrite it")
        if out.is_dir() or not out.parent.is_dir():  # before "exists": --overwrite cannot help
            raise DPQueryError(f"cannot write {out}: not a file in an existing folder")
        if out.exists() and not files.overwrite:
            raise DPQueryError(f"{out} already exists; pass --overwrite to replace it")
    if not request.items and files.out.suffix.lower() not in (".csv", ".parquet", ".npz"):
        raise DPQueryError(f"--out {files.out} must end in .csv, .parquet or .npz (bits)")


def table_form(files: Files | None, columns: int) -> bool:
    """Whether a table's rows are written as packed bits (``S.npz``). A CSV over more than
    :data:`DENSE_COLUMNS` columns (one per attribute) is written only when ``dense`` asks for
    it: at 512,000 free bits it is gigabytes per thousand rows."""
    if files is None:
        return False
    out = files.out
    if columns > DENSE_COLUMNS and out.suffix.lower() == ".csv" and not files.dense:
        raise DPQueryError(
            f"--out {out} would be a CSV of {columns} columns; write "
            f"{out.with_suffix('.npz').name} (the bits, packed), or pass --dense to write "
            "the CSV anyway"
        )
    return out.suffix.lower() == ".npz"


def item_form(files: Files | None, weights: bool, d: int | None) -> str:
    """The output form of item data (``items``, ``npz`` or ``dense``; ``matrix`` when
    nothing is written), refusing a dense CSV over more than :data:`DENSE_COLUMNS` items,
    or of ``d`` None items (a number still to be learned), unless ``dense`` asks for it."""
    if files is None:
        return "matrix"
    out = files.out
    suffix = out.suffix.lower()
    if is_item_file(out):
        return "items"
    if suffix == ".npz":
        if weights:
            raise DPQueryError("a sparse .npz holds no weights: write S.transactions.csv")
        return "npz"
    if suffix != ".csv":
        raise DPQueryError(
            f"--out {out}: item data is written as S.transactions.csv (row item), "
            "S.npz (sparse) or, with --dense, a dense S.csv"
        )
    if d is None and not files.dense:
        raise DPQueryError(
            f"--out {out}: the number of item ids is learned, so a dense CSV could have any "
            "width; write S.transactions.csv or S.npz, or pass --dense"
        )
    if d is not None and d > DENSE_COLUMNS and not files.dense:
        raise DPQueryError(
            f"--out {out} would be a dense CSV of {d} columns; write the items as "
            f"{out.with_suffix('.transactions.csv').name} (sparse), or pass --dense to "
            "write the dense table anyway"
        )
    return "dense"


def json_text(value: object) -> str:
    """``value`` as indented JSON text (numpy scalars as Python numbers), ending in a newline."""
    return json.dumps(value, indent=2, default=_json) + "\n"


def _json(x: object) -> object:
    if isinstance(x, np.integer | np.floating | np.bool_):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def write_outputs(out: Path, write: Callable[[Path], object], texts: Mapping[Path, str]) -> None:
    """``write(tmp)`` for ``out`` and each of ``texts`` (path to text) written to temporaries,
    renamed together only when every write succeeded: a failure leaves no output at all."""
    with ExitStack() as stack:
        tmp = stack.enter_context(atomic_path(out, overwrite=True))
        for path, text in texts.items():
            stack.enter_context(atomic_path(path, overwrite=True)).write_text(text)
        write(tmp)


def write_release(
    files: Files, rows: Any, form: str, report: dict[str, Any],
    evaluation: dict[str, Any] | None, domain: Domain | None = None,
    labels: ItemLabels | None = None, catalogue: tuple[str, ...] | None = None,
) -> None:  # fmt: skip
    """The rows (in ``form``), the report, the evaluation and a ``domain`` learned from the
    data (``files.domain``), as ``files`` asks; every text serialised before anything is
    written, so a failure leaves no output at all. Item sets with ``labels`` (from a raw
    table) are written with its item ids and column names."""
    texts = {} if files.report is None else {files.report: json_text(report)}
    if files.evaluation is not None and evaluation is not None:
        texts[files.evaluation] = json_text(evaluation)
    if domain is not None:
        texts[files.domain] = json_text(domain.to_dict())
    if catalogue is not None:  # an item universe learned: its ids, one a line
        texts[files.items] = "".join(f"{i}\n" for i in catalogue)
    write_outputs(files.out, writer(files.out, rows, form, labels), texts)


def writer(
    out: Path, rows: Any, form: str, labels: ItemLabels | None = None
) -> Callable[[Path], object]:
    """How :func:`write_outputs` writes the rows to their temporary: a DataFrame as CSV or
    Parquet, bits and their weights as an encoded ``.npz``, item sets in ``form`` (with a
    raw table's ``labels``)."""
    if isinstance(rows, ItemSets):
        return lambda tmp: write_items(tmp, form, rows, labels)
    if isinstance(rows, tuple):
        bits, weights = rows
        return lambda tmp: write_binary(tmp, bits, weights)
    to_file = rows.to_parquet if out.suffix.lower() == ".parquet" else rows.to_csv
    return lambda tmp: to_file(tmp, index=False)


def write_items(path: Path, form: str, items: ItemSets, labels: ItemLabels | None = None) -> None:
    """Write ``items`` to ``path`` in ``form`` (a temporary of :func:`write_outputs`). With a
    raw table's ``labels``, ``S.transactions.csv`` holds ``user,item`` lines (synthetic
    users ``0..M-1``, the catalogue's item ids) and a dense CSV names its columns by the
    item ids; an ``.npz``'s column ``j`` is the catalogue's ``j``-th item."""
    if form == "items" and labels is not None:
        write_raw_item_sets(path, items, labels)
    elif form == "items":
        write_item_sets(path, items)
    elif form == "npz":
        with path.open("wb") as fh:
            sp.save_npz(fh, items.matrix)
    else:
        names = [f"i{j}" for j in range(items.d)] if labels is None else list(labels.items)
        table = pd.DataFrame(items.matrix.toarray(), columns=names)
        if items.weights is not None:
            table["weight"] = items.weights / items.weights.sum()
        table.to_csv(path, index=False)
