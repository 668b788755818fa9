"""The first step of a release: the private data and its public domain.

A table is encoded over the domain given (a JSON file, a dataset's own, or the DataFrame's;
read off the data only when asked, and then NOT PRIVATE) or over the one learned from it
privately (:mod:`dpquery.pipeline.learning`); item data needs none (its items
are ``0..d-1``). On the local backend the data is read in this process; on ``dask`` a table,
a dataset or an encoded ``.npz`` is cut into partitions on the cluster, item files into
ranges of user ids, and a raw user x item CSV into blocks whose users the workers gather
(:mod:`dpquery.backends.raw`; ``docs/dask.md``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery import datasets
from dpquery.backends import DaskBackend, PartitionedData, connect
from dpquery.backends.partitions import ITEM_SUFFIXES, table_files
from dpquery.backends.raw import BUCKET_BYTES, ClusterLines, read_on_cluster
from dpquery.data.binary import _FORMAT, BinaryData, load_binary
from dpquery.data.domain import Binary, Domain, infer_domain
from dpquery.data.encode import (
    encode,
    holds_pairs,
    no_records,
    pair_file_sizes,
    read_table,
    resolve_sizes,
    warn_extra_columns,
)
from dpquery.data.items import ItemSets, read_item_sets
from dpquery.data.raw_items import (
    ItemLabels,
    RawLines,
    check_release_items,
    frame_lines,
    item_labels,
    note_dropped,
    once,
    raw_blocks,
    raw_columns,
    raw_layout,
    read_raw_items,
    read_raw_lines,
    release_sizes,
    table_columns,
)
from dpquery.data.records import Records
from dpquery.errors import DPQueryError, NonPrivateWarning
from dpquery.pipeline.learning import Learned
from dpquery.pipeline.request import (
    Backend,
    Dataset,
    Frame,
    ItemFile,
    ItemFrame,
    ItemLearning,
    ItemMatrix,
    TableFile,
)
from dpquery.pipeline.universe import check_bound, check_universe_share

TableSource = TableFile | Dataset | Frame
T = TypeVar("T")
ItemSource = ItemFile | ItemMatrix | ItemFrame


def is_item_file(path: Path) -> bool:
    """A ``.transactions.csv`` (optionally compressed) file: records as sets of items."""
    return ".transactions" in [s.lower() for s in path.suffixes]


def holds_items(path: Path, out: Path) -> bool:
    """Whether the file at ``path`` is item data: a ``.transactions`` file, a sparse
    ``.npz``, or an encoded ``.npz`` of free bits only without a domain (what ``dpquery
    encode --transactions`` writes), or with one when ``out`` asks for item sets. Of an
    encoded ``.npz`` it reads only the format, the one-hot groups and the domain, never the
    bits. A text file whose first line is a "row item" file's header (``# rows N items D``)
    is item data too, whatever its name: read as a table, its pairs would be one text
    column of as many rows as there are ones."""
    if is_item_file(path):
        return True
    if path.suffix.lower() != ".npz":
        text = path.name.lower().endswith(ITEM_SUFFIXES) and path.is_file()
        return text and pair_file_sizes(path) is not None
    if not path.exists():
        return False
    try:
        with np.load(path, allow_pickle=False) as z:  # lazy: only the keys read here
            if "format" not in z.files or str(z["format"]) != _FORMAT:
                return True  # scipy's save_npz: a sparse matrix
            free_bits = len(z["onehot_groups"]) == 0  # dpquery encode --transactions
            has_domain = bool(str(z["domain"]))
    except Exception:  # not ours to judge here: the dense path reports a bad file
        return False
    return free_bits and (not has_domain or is_item_file(out))


def warn_non_private(domain: Domain) -> None:
    if domain.non_private:
        print(
            "dpquery: WARNING: the domain was read from the private data; anything released "
            "with it is NOT differentially private",
            file=sys.stderr,
        )


def load_domain(domain: Path | None, infer: bool, table_path: Path | None = None) -> Domain:
    """The public domain of a table file: the JSON file ``domain`` (a domain or a codebook),
    or, with ``infer``, one read off the table at ``table_path`` (NOT PRIVATE, said on
    stderr)."""
    if domain is not None:
        if infer:
            raise DPQueryError("give either --domain or --infer-domain, not both")
        return Domain.load(domain)
    if infer and table_path is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            inferred = infer_domain(read_table(table_path))
        warn_non_private(inferred)
        return inferred
    raise DPQueryError(
        "--data needs --domain DOMAIN.json (the public domain); --infer-domain reads one "
        "off the data for exploration only"
    )


def encode_file(path: Path, domain: Domain, na_values: Sequence[str] = ()) -> BinaryData:
    """The table at ``path`` encoded over ``domain`` (``na_values``: texts read as missing)."""
    return encode(read_table(path, domain, na_values=list(na_values) or None), domain)


def load_data(source: TableSource, learned: Learned | None = None) -> BinaryData:
    """The data of ``source``, encoded over its public domain, or over the one ``learned``
    from it (:mod:`dpquery.pipeline.learning`, its table already read), in this process."""
    if learned is not None:
        return encode(learned.table, learned.domain)
    if isinstance(source, Dataset):
        return datasets.load(source.name)
    if isinstance(source, Frame):
        if source.domain is None:
            raise DPQueryError("a DataFrame without a domain has one learned first")
        warn_extra_columns(source.name, list(source.table.columns), list(source.domain.names))
        return encode(source.table, source.domain)
    if source.path.suffix == ".npz":
        data = load_binary(source.path)
        if data.domain is not None:
            warn_non_private(data.domain)
        return data
    domain = load_domain(source.domain, source.infer_domain, source.path)
    return encode_file(source.path, domain, source.na_values)


@contextmanager
def open_data(
    source: TableSource, backend: Backend, learned: Learned | None = None
) -> Iterator[BinaryData | PartitionedData]:
    """The data on the chosen backend: :class:`BinaryData` in memory (local), or a
    :class:`~dpquery.backends.PartitionedData` on a Dask cluster, closed on exit
    (``learned``: the domain learned from the table, on the local backend only)."""
    if backend.name == "local" or isinstance(source, Frame):
        yield load_data(source, learned)
        return
    domain = None
    if isinstance(source, TableFile) and source.path.suffix != ".npz":
        table_files(source.path)  # a missing file or a bad domain fails before connecting
        domain = load_domain(source.domain, source.infer_domain, source.path)
    with connect(backend.scheduler) as cluster:
        yield _partitioned(source, cluster, backend.partitions, domain)


def _partitioned(
    source: TableFile | Dataset, backend: DaskBackend, parts: int | None, domain: Domain | None
) -> PartitionedData:
    # In-memory inputs (a built-in dataset, an encoded .npz) default to one part per worker.
    if isinstance(source, Dataset):
        table, ds_domain = datasets.load_table(source.name)
        return PartitionedData.from_frame(table, ds_domain, backend, parts or backend.workers())
    if domain is None:
        data = load_binary(source.path)
        if data.domain is not None:
            warn_non_private(data.domain)
        return PartitionedData.from_binary(data, backend, parts or backend.workers())
    return PartitionedData.from_table(source.path, domain, backend, parts)


def output_domain(source: TableSource, domain: Domain, learned: bool = False) -> Domain:
    """The domain the rows are written over: a DataFrame's in the dtypes declared for it
    (never read off the data), else the data's own (``domain``: given or ``learned``, in
    whole or in part)."""
    if not isinstance(source, Frame):
        return domain
    public = domain if source.domain is None or learned else source.domain
    return public if source.dtypes is None else public.with_dtypes(source.dtypes)


def real_table(
    source: TableSource, domain: Domain | None, backend: str = "local",
    learned: Learned | None = None,
) -> pd.DataFrame | None:  # fmt: skip
    """The real table in its own columns (the coherence measurement needs raw values), or
    None when the data is only encoded (.npz) or partitioned (dask)."""
    if learned is not None:
        return learned.table
    if isinstance(source, Dataset):
        return datasets.load_table(source.name)[0]
    if isinstance(source, Frame):
        return source.table
    if backend == "dask":
        return None
    if source.path.suffix == ".npz" or source.path.is_dir() or domain is None:
        return None
    return read_table(source.path, domain, na_values=list(source.na_values) or None)


# -- item data --------------------------------------------------------------------------
def check_items(source: ItemSource, backend: Backend, options: Mapping[str, Any] | None = None
                ) -> None:  # fmt: skip
    """A raw table's item source, before any work: its catalogue given (public) or its
    universe to be learned (an ``(epsilon, delta)`` budget in ``options``, a share and a
    bound in range), not both; no sizes (its records are its users, its items the
    catalogue's); read in this process."""
    if isinstance(source, ItemFrame):
        _check_learning(source.name, source.item_list is None, source.learn, options)
        if source.item_list is not None:
            labels_of(source)  # the columns and the catalogue, checked before the fit
        else:
            frame_columns(source)
        return
    if not isinstance(source, ItemFile) or not source.raw:
        return
    _check_learning(str(source.path), source.item_list is None, source.learn, options)
    if source.n is not None or source.d is not None:
        raise DPQueryError(
            f"{source.path} is a raw user x item table: its records are its distinct users "
            "and its items the item_list's, so it takes no sizes n and d (those are a "
            "0-based 'row item' file's)"
        )
    if source.learn is None:
        labels = labels_of(source)  # the header's columns and the catalogue, before the fit
        sizes = release_sizes(source.path)  # a release's own file: its D the list's
        if sizes is not None and labels is not None:
            check_release_items(source.path, sizes, len(labels.items))
    else:
        raw_columns(source.path, source.user_column, source.item_column)


def _check_learning(
    name: str, unlisted: bool, learn: ItemLearning | None, options: Mapping[str, Any] | None
) -> None:  # fmt: skip
    """A raw table's catalogue (``unlisted``: none given) against ``learn``."""
    if unlisted and learn is None:
        raise DPQueryError(
            f"{name} is a raw user x item table: give its public item universe, a catalogue "
            "of item ids (item_list, one id per line), or have it learned privately "
            "(learn_items: a share of the budget buys a partition selection over the ids)"
        )
    if not unlisted and learn is not None:
        raise DPQueryError(f"{name}: give either a public item list or learn_items (the "
                           "universe learned from the data), not both")  # fmt: skip
    if learn is None:
        return
    check_universe_share(learn.share)
    check_bound(learn.bound)
    options = options or {}
    if options.get("rho") is not None or options.get("delta") == 0:
        given = "rho (zCDP)" if options.get("rho") is not None else "pure epsilon (delta=0)"
        raise DPQueryError(
            f"an item universe learned from the data needs an (epsilon, delta) budget: its "
            f"partition selection has a tail probability that no {given} states; give "
            "epsilon (delta defaults to 1/n^2, or 1e-9 under add/remove), or a public item "
            "list"
        )


def learns_items(source: object) -> bool:
    """Whether ``source`` is a raw user x item table whose item universe is learned."""
    return isinstance(source, ItemFile | ItemFrame) and source.learn is not None


def frame_columns(source: ItemFrame) -> tuple[str, str]:
    """The user and item columns of a raw user x item DataFrame, checked (no row read)."""
    return table_columns(source.table, source.user_column, source.item_column, source.name)


def labels_of(source: ItemSource) -> ItemLabels | None:
    """What a raw table's release is written with (None: 0-based ids, or a universe still
    to be learned); reads the header and the public catalogue, no record."""
    if isinstance(source, ItemFrame):
        if source.item_list is None:
            return None
        user, item = frame_columns(source)
        return ItemLabels(catalogue(source.item_list, source.name), user, item)
    if not isinstance(source, ItemFile) or not source.raw or source.item_list is None:
        return None
    return item_labels(source.path, source.item_list, source.user_column, source.item_column)


def catalogue(ids: Any, name: str = "df") -> tuple[str, ...]:
    """A catalogue given in memory: item ids (text, surrounding spaces stripped), each
    once, at least one (public: naming its ids discloses nothing)."""
    if isinstance(ids, str) or not hasattr(ids, "__iter__"):
        raise DPQueryError(f"item_list must be a sequence of item ids, got "
                           f"{type(ids).__name__}")  # fmt: skip
    out = tuple(str(i).strip() for i in ids)
    if not out or "" in out:
        raise DPQueryError(f"{name}'s item_list must name at least one item, none empty")
    return once(out, "item_list")


def raw_lines(source: ItemFile | ItemFrame) -> RawLines:
    """The lines of a raw user x item table, before any catalogue, in this process."""
    if isinstance(source, ItemFrame):
        return frame_lines(source.table, source.user_column, source.item_column, source.name)
    return read_raw_lines(source.path, user_column=source.user_column,
                          item_column=source.item_column)  # fmt: skip


def load_items(source: ItemSource) -> ItemSets:
    """The item sets of ``source``, in this process."""
    if isinstance(source, ItemMatrix):
        return source.items
    if isinstance(source, ItemFrame):
        labels = labels_of(source)
        assert labels is not None
        items, dropped = raw_lines(source).over(labels.items)
        note_dropped(source.name, dropped)
        return items
    if source.raw:
        assert source.item_list is not None
        return read_raw_items(
            source.path, source.item_list, user_column=source.user_column,
            item_column=source.item_column,
        )[0]  # fmt: skip
    if source.path.is_dir():
        raise DPQueryError(
            f"{source.path} is a folder: item files partitioned by user are read from a "
            "folder with --backend dask; give one file here"
        )
    return read_item_sets(source.path, n=source.n, d=source.d)


def item_bits(items: ItemSets) -> BinaryData:
    """Item sets as bits over a domain of one binary attribute per item."""
    bits = items.to_binary()
    domain = Domain(tuple(Binary(f"i{j}", (0, 1)) for j in range(items.d)))
    return BinaryData(bits.words, bits.n, domain=domain)


def as_item_sets(records: Records) -> ItemSets:
    """Records over :func:`item_bits` (an algorithm fitted on the bits) as item sets, with
    their weights."""
    return ItemSets(sp.csr_array(records.rows), records.weights)


def item_sizes(path: Path, files: list[Path], n: int | None, d: int | None) -> tuple[int, int]:
    """The public sizes ``(n, d)`` of the item files: ``n``/``d`` or their first lines,
    which must agree (only those lines are read)."""
    found = {sizes for f in files if (sizes := pair_file_sizes(f)) is not None}
    if len(found) > 1:
        raise DPQueryError(f"{path}: the files' first lines give different sizes (rows, "
                           f"items) {sorted(found)}")  # fmt: skip
    return resolve_sizes(path, (n, d), found.pop() if found else None)


@contextmanager
def open_items(
    source: ItemSource, backend: Backend, check: Callable[[int], T]
) -> Iterator[tuple[ItemSets | PartitionedData, T]]:
    """Item data on the chosen backend, with what ``check`` says of its number of items,
    asked before any cluster starts. On ``dask`` a ``row item`` file is cut into ranges of
    user ids (an ``.npz``, read here, into ranges of records), counted on the workers."""
    if backend.name == "local" or isinstance(source, ItemMatrix | ItemFrame):
        items = load_items(source)
        checked = check(items.d)
        yield items, checked
        return
    npz = source.path.suffix.lower() == ".npz"
    if npz:  # read here: its ranges of records are sent to the workers
        items = load_items(source)
        n, d = items.n, items.d
    else:
        files = table_files(source.path, ITEM_SUFFIXES, "item")
        if not any(holds_pairs(f) for f in files):  # the sizes alone: n empty records
            raise no_records(source.path)
        n, d = item_sizes(source.path, files, source.n, source.d)
    checked = check(d)
    with connect(backend.scheduler) as cluster:
        parts = backend.partitions or cluster.workers()
        data = (
            PartitionedData.from_items(items, cluster, parts) if npz else
            PartitionedData.from_transactions(files, n=n, d=d, backend=cluster, partitions=parts)
        )  # fmt: skip
        yield data, checked


def raw_on_cluster(source: ItemSource, backend: Backend) -> bool:
    """Whether ``source`` is a raw user x item file read on a Dask cluster."""
    return backend.name == "dask" and isinstance(source, ItemFile) and source.raw


@contextmanager
def open_raw(source: ItemFile, backend: Backend) -> Iterator[ClusterLines]:
    """The lines of a raw user x item file read in blocks on a Dask cluster and held there
    grouped by user (:mod:`dpquery.backends.raw`), over its catalogue when one is given
    (else the ids' texts, for the item universe's selection). The header and the catalogue
    are checked in this process before the cluster starts; the cluster closes on exit."""
    header, sep, skip = raw_layout(source.path)
    user, item = raw_columns(source.path, source.user_column, source.item_column, header)
    labels = labels_of(source)
    blocks = raw_blocks(source.path, header, sep, skip, user, item)
    with connect(backend.scheduler) as cluster:
        asked = backend.partitions or cluster.workers()
        buckets = max(asked, -(-source.path.stat().st_size // BUCKET_BYTES))
        sizes = release_sizes(source.path) if skip else None
        yield read_on_cluster(
            blocks, cluster, catalogue=None if labels is None else labels.items,
            buckets=buckets, source=str(source.path), requested=asked,
            numbered=None if sizes is None else sizes[0],
        )  # fmt: skip
