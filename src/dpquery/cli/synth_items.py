"""``dpquery synth`` on item data: records as sets of items, read and written sparse.

The input is a ``row item`` file (``--transactions``, or a name ending ``.transactions.csv``;
sizes from its ``# rows N items D`` line or ``--n``/``--items``), a sparse ``.npz``, or an
encoded ``.npz`` of free bits only without a domain (what ``dpquery encode --transactions``
writes), or with one when ``--out`` asks for item sets. The output follows ``--out``:
``S.transactions.csv`` (a ``row item`` file whose first line is ``# rows N items D``, a third
column the weight with ``--weights``), ``S.npz`` (a scipy sparse matrix), or a dense CSV of
one 0/1 column per item, written over more than :data:`DENSE_COLUMNS` items only with
``--dense``.

``auto`` runs the wide release (:mod:`dpquery.algorithms.wide`) on item data; any other
algorithm named runs on the bits (a domain of one binary attribute per item, the default
workload), and its records are written as item sets. With ``--backend dask`` a ``row item``
file is cut into ranges of user ids (a folder of them, partitioned by user, is read file by
file; an ``.npz`` is read in this process and its ranges of records sent to the workers) and
the wide release's counts are made on the workers (``docs/dask.md``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.algorithms.release import Release
from dpquery.algorithms.wide.release import noise_warning, sample_items
from dpquery.backends import PartitionedData, connect
from dpquery.backends.partitions import ITEM_SUFFIXES, table_files
from dpquery.cli.common import check_backend_args, is_item_file
from dpquery.cli.output import RELEASED, json_text, output_rows, write_outputs
from dpquery.data.binary import _FORMAT, BinaryData
from dpquery.data.domain import Binary, Domain
from dpquery.data.encode import (
    holds_pairs,
    no_records,
    note_duplicates,
    pair_file_sizes,
    resolve_sizes,
)
from dpquery.data.items import ItemSets, read_item_sets, write_item_sets
from dpquery.errors import DPQueryError
from dpquery.evaluation.release_report import publishable_report
from dpquery.evaluation.wide import describe_wide, wide_evaluation
from dpquery.privacy.delta import LargeDeltaWarning, WeakBudgetWarning
from dpquery.queries import default_workload
from dpquery.rng import describe_rng, make_rng

DENSE_COLUMNS = 1000
"""Above this many items a dense CSV (one column per item) is written only with --dense."""
AUTO_REASON = (
    "item data ({n} records x {d} items): the wide release measures every item's count, the "
    "record sizes and the pairs among the {K} most frequent items, and fits sparse records "
    "to them (docs/choosing.md)"
)
HEAD_REASON = (
    "item data ({n} records x {d} items): the wide release's head mode (the cut item counts "
    "would be swamped by noise at this n) picks the {K} most frequent items by the "
    "exponential mechanism, counts them and the picked items per record, and fits records "
    "to them (docs/wide.md)"
)


@dataclass(frozen=True)
class ItemFront:
    """The parts of ``dpquery synth`` the item path shares (passed in, so that this module
    does not import the command that imports it)."""

    estimator: Callable[[argparse.Namespace, np.random.Generator | None], Any]
    summary: Callable[[dict[str, Any], argparse.Namespace, int], None]
    delta_rule: Callable[[argparse.Namespace, int], None]


def reads_items(args: argparse.Namespace) -> bool:
    """Whether ``synth`` takes the item path (module docstring); of an encoded ``.npz`` it
    reads only the format, the one-hot groups and the domain, never the bits."""
    if args.transactions or (args.data is not None and is_item_file(args.data)):
        return True
    if args.data is None or args.data.suffix.lower() != ".npz" or not args.data.exists():
        return False
    try:
        with np.load(args.data, allow_pickle=False) as z:  # lazy: only the keys read here
            if "format" not in z.files or str(z["format"]) != _FORMAT:
                return True  # scipy's save_npz: a sparse matrix
            free_bits = len(z["onehot_groups"]) == 0  # dpquery encode --transactions
            has_domain = bool(str(z["domain"]))
    except Exception:  # not ours to judge here: the dense path reports a bad file
        return False
    return free_bits and (not has_domain or is_item_file(args.out))


def check_item_output(args: argparse.Namespace, d: int) -> str:
    """The output form of ``--out`` (``items``, ``npz`` or ``dense``), refusing a dense CSV
    over more than :data:`DENSE_COLUMNS` items unless ``--dense`` asks for it."""
    suffix = args.out.suffix.lower()
    if is_item_file(args.out):
        return "items"
    if suffix == ".npz":
        if args.weights:
            raise DPQueryError("a sparse .npz holds no weights: write S.transactions.csv")
        return "npz"
    if suffix != ".csv":
        raise DPQueryError(
            f"--out {args.out}: item data is written as S.transactions.csv (row item), "
            "S.npz (sparse) or, with --dense, a dense S.csv"
        )
    if d > DENSE_COLUMNS and not args.dense:
        raise DPQueryError(
            f"--out {args.out} would be a dense CSV of {d} columns; write the items as "
            f"{args.out.with_suffix('.transactions.csv').name} (sparse), or pass --dense to "
            "write the dense table anyway"
        )
    return "dense"


def load_items(args: argparse.Namespace) -> ItemSets:
    if args.domain is not None or args.infer_domain or args.dataset is not None:
        raise DPQueryError("item data needs no domain (its items are 0..D-1): drop --domain, "
                           "--infer-domain and --dataset")  # fmt: skip
    if args.data.is_dir():
        raise DPQueryError(f"{args.data} is a folder: item files partitioned by user are read "
                           "from a folder with --backend dask; give one file here")  # fmt: skip
    return read_item_sets(args.data, n=args.n, d=args.items)


def _bits(items: ItemSets) -> BinaryData:
    bits = items.to_binary()
    domain = Domain(tuple(Binary(f"i{j}", (0, 1)) for j in range(items.d)))
    return BinaryData(bits.words, bits.n, domain=domain)


def release_items(
    args: argparse.Namespace, model: Any, items: ItemSets | PartitionedData,
    rng: np.random.Generator,
) -> tuple[Release, ItemSets]:  # fmt: skip
    """Fit ``model`` (the wide release, or a named algorithm on the bits) and return the
    release with its records as item sets (weighted when the algorithm weighs them). Only
    the wide release takes partitioned item data (:func:`check_item_backend`)."""
    if model.name == "wide":
        release = model.fit(items)
        return release, release.records
    assert isinstance(items, ItemSets)
    data = _bits(items)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, k=args.k, seed=rng)
    release = model.fit(data, workload)
    records = release.records
    return release, ItemSets(sp.csr_array(records.rows), records.weights)


def write_output(path: Path, form: str, items: ItemSets) -> None:
    """Write ``items`` to ``path`` in ``form`` (a temporary of :func:`write_outputs`)."""
    if form == "items":
        write_item_sets(path, items)
    elif form == "npz":
        with path.open("wb") as fh:
            sp.save_npz(fh, items.matrix)
    else:
        table = pd.DataFrame(items.matrix.toarray(), columns=[f"i{j}" for j in range(items.d)])
        if items.weights is not None:
            table["weight"] = items.weights / items.weights.sum()
        table.to_csv(path, index=False)


def check_item_backend(args: argparse.Namespace) -> None:
    """The backend options on item data, checked before any data is read or cluster
    started: on ``--backend dask`` only the wide release runs (its counts made on the
    workers)."""
    check_backend_args(args)
    if args.backend != "dask":
        return
    if args.domain is not None or args.dataset is not None:
        raise DPQueryError("item data needs no domain (its items are 0..D-1): drop --domain "
                           "and --dataset")  # fmt: skip
    if args.algorithm not in ("auto", "wide"):
        raise DPQueryError(
            f"--backend dask runs the wide release on item data (auto or --algorithm wide); "
            f"{args.algorithm} fits records to the bits in this process: use --backend local"
        )


def item_sizes(args: argparse.Namespace, files: list[Path]) -> tuple[int, int]:
    """The public sizes ``(n, d)`` of the item files: ``--n``/``--items`` or their first
    lines, which must agree (only those lines are read)."""
    found = {sizes for f in files if (sizes := pair_file_sizes(f)) is not None}
    if len(found) > 1:
        raise DPQueryError(f"{args.data}: the files' first lines give different sizes (rows, "
                           f"items) {sorted(found)}")  # fmt: skip
    return resolve_sizes(args.data, (args.n, args.items), found.pop() if found else None)


def synth_items(args: argparse.Namespace, front: ItemFront, evaluated: Path | None) -> int:
    """``dpquery synth`` on item data (module docstring), with ``front``'s pieces of the
    synth command (the estimator from the flags, the summary, the delta rule); ``evaluated``
    is where ``--evaluate`` writes the wide measures (NOT private), or None. On
    ``--backend dask`` the file is cut into ranges of user ids (an ``.npz``, read here, into
    ranges of records), counted on the workers."""
    check_item_backend(args)
    output_rows(args, 1)  # --rows and --weights checked before the data is read
    chosen = args.algorithm == "auto"
    if chosen:  # auto's choice on item data (docs/choosing.md), with its options
        args.algorithm = "wide"
    front.estimator(args, None)  # every option checked before the data is read
    if args.backend == "local":
        items = load_items(args)
        form = check_item_output(args, items.d)
        return _synth_items(args, front, evaluated, items, form, chosen)
    npz = args.data.suffix.lower() == ".npz"
    if npz:  # read here: its ranges of records are sent to the workers
        items = load_items(args)
        n, d = items.n, items.d
    else:
        files = table_files(args.data, ITEM_SUFFIXES, "item")
        if not any(holds_pairs(f) for f in files):  # the sizes alone: n empty records
            raise no_records(args.data)
        n, d = item_sizes(args, files)
    form = check_item_output(args, d)
    with connect(args.scheduler) as backend:
        parts = args.partitions or backend.workers()
        data = (
            PartitionedData.from_items(items, backend, parts) if npz else
            PartitionedData.from_transactions(files, n=n, d=d, backend=backend, partitions=parts)
        )  # fmt: skip
        return _synth_items(args, front, evaluated, data, form, chosen)


def _synth_items(
    args: argparse.Namespace, front: ItemFront, evaluated: Path | None,
    data: ItemSets | PartitionedData, form: str, chosen: bool,
) -> int:  # fmt: skip
    """The release of ``data`` (item sets in memory, or partitioned on a cluster), written
    in ``form``."""
    dask = isinstance(data, PartitionedData)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LargeDeltaWarning)  # said once, on stderr
        warnings.simplefilter("ignore", WeakBudgetWarning)  # likewise, by the delta rule
        front.delta_rule(args, data.n)
        rng = make_rng(args.seed)
        model = front.estimator(args, rng)
        reason = warning = None
        if chosen:
            parameters = model.plan(data).parameters
            text = HEAD_REASON if parameters.mode == "head" else AUTO_REASON
            reason = text.format(n=data.n, d=data.d, K=parameters.K)
            if dask:
                reason += "; its counts computed on the cluster, in two passes"
            warning = noise_warning(model.plan(data), data.n)
            if warning is not None:  # auto's pre-release check, before the fit
                print(f"dpquery synth: warning: {warning}", file=sys.stderr)
        release, released = release_items(args, model, data, rng)
        if release.parameters.get("items_kept") == 0:  # said, also with --quiet
            print(
                "dpquery synth: warning: no item's noisy count stood out of the noise: every "
                "released record is empty (the all-zeros table)",
                file=sys.stderr,
            )
    if isinstance(data, PartitionedData):  # the workers read the lines; in memory: on read
        note_duplicates(args.data, data.duplicates)
    out = sample_items(released, output_rows(args, data.n), rng)
    report = publishable_report(release, randomness=describe_rng(rng))
    rel = report["release"]
    if reason is not None:
        rel["parameters"]["auto"] = {"chosen": "wide", "reason": reason}
        if warning is not None:
            rel["parameters"]["auto"]["warning"] = warning
    if args.weights:
        method = "the released records with their weights"
    elif out is released:  # unweighted, rows = n: sampling would only reorder them
        method = RELEASED
    else:
        method = "sampled from the released records (systematic sampling by weight)"
    rel["output"] = {"rows": out.n, "released_records": released.n, "form": form,
                     "method": method}  # fmt: skip
    report["backend"] = (
        data.describe() if isinstance(data, PartitionedData) else {"name": "local", "partitions": 1}
    )
    texts = {} if args.report is None else {args.report: json_text(report)}
    evaluation = None
    if evaluated is not None:  # NOT private: the curator's, in its own file
        # the evaluation reads the real records in this process
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its notes were said when the release read it
            real = load_items(args) if isinstance(data, PartitionedData) else data
        evaluation = wide_evaluation(real, out, seed=0)
        texts[evaluated] = json_text(evaluation)
    write_outputs(args.out, lambda tmp: write_output(tmp, form, out), texts)
    front.summary(report, args, out.n)
    if evaluation is not None and not args.quiet:
        print(f"{describe_wide(evaluation)}\n(written to {evaluated})")
    return 0
