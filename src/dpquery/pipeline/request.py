"""What a release is asked for (:class:`ReleaseRequest`, built by each front door) and what
it gives back (:class:`ReleaseResult`).

A request names its data (:data:`Source`: a table file, a built-in dataset, a DataFrame,
item data in a file or a matrix), how a table without a domain has it learned
(:class:`Learning`), the algorithm and its options, the workload, the output rows, where they
go (:class:`Files`, or nowhere: the caller takes the rows) and the backend. It holds values
only: no parser namespace, no open file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from dpquery.algorithms.release import Release
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets
from dpquery.data.raw_items import ItemLabels
from dpquery.domain_learning import DEFAULT_BINS, DEFAULT_DOMAIN_SHARE
from dpquery.queries import Workload
from dpquery.rng import SeedLike


@dataclass(frozen=True)
class TableFile:
    """A table (.csv, .csv.gz, .parquet; a folder of them on dask) over the public domain
    in ``domain`` (a domain or codebook JSON file; None: learned from the table under the
    request's :class:`Learning`), or an encoded ``.npz`` (its domain inside)."""

    path: Path
    domain: Path | None = None
    infer_domain: bool = False  # read the domain off the data: NOT PRIVATE
    na_values: tuple[str, ...] = ()  # texts read as missing besides pandas' own (a CSV)


@dataclass(frozen=True)
class Dataset:
    """A built-in dataset (:mod:`dpquery.datasets`): its domain is public."""

    name: str


@dataclass(frozen=True)
class Frame:
    """A DataFrame over a public domain (None: learned from the table under the request's
    :class:`Learning`), its output columns typed by ``dtypes`` (None: the domain's dtypes);
    ``name`` is how messages call it."""

    table: pd.DataFrame
    domain: Domain | None
    dtypes: Mapping[str, Any] | None = None
    name: str = "df"


@dataclass(frozen=True)
class ItemFile:
    """Item data: a ``row item`` file (a folder of them on dask) or a sparse ``.npz``, with
    the public sizes when its first line does not give them; or, with ``raw``, a table
    with a header and raw ids (``user_column``, ``item_column``; None: its first two
    columns), its items the public catalogue ``item_list``
    (:mod:`dpquery.data.raw_items`)."""

    path: Path
    n: int | None = None
    d: int | None = None
    raw: bool = False
    item_list: Path | None = None
    user_column: str | None = None
    item_column: str | None = None
    learn: ItemLearning | None = None  # no item_list: the universe learned privately


DEFAULT_UNIVERSE_SHARE = 0.5
"""The share of the run's zCDP rho a learned item universe's partition selection spends by
default (:mod:`dpquery.pipeline.universe`). Of 0.1, 0.3 and 0.5 on
retail (seeds 0-1, epsilon 1 and 0.1), 0.5 had the lowest 1-way max and mean; on lastfm,
ml100k and MovieLens 2016 no share releases more than a handful of ids at epsilon 1
(docs/wide.md, "Learning the item universe")."""
DEFAULT_UNIVERSE_BOUND = 16
"""The default bound ``s`` on the items a user contributes to that selection: of 16, 32 and
64 at share 0.5 on retail (and 8, 16 and 32 at 0.3), 16, between its records' median length
(8) and 90th percentile (21), had the lowest 1-way max and mean (the same measurements)."""


@dataclass(frozen=True)
class ItemLearning:
    """How a raw user x item table given without a catalogue has its item universe learned
    (:mod:`dpquery.pipeline.universe`): ``share`` of the run's zCDP ``rho`` for the partition
    selection over the item ids, each user contributing at most ``bound`` items to it."""

    share: float = DEFAULT_UNIVERSE_SHARE
    bound: int = DEFAULT_UNIVERSE_BOUND


@dataclass(frozen=True)
class ItemFrame:
    """A raw user x item DataFrame (one line per user and item, other columns not read;
    ``user_column``, ``item_column``: None, its first two), its items the public catalogue
    ``item_list`` (ids in order) or, with ``learn``, learned privately; ``name`` is how
    messages call it."""

    table: pd.DataFrame
    user_column: str | None = None
    item_column: str | None = None
    item_list: tuple[str, ...] | None = None
    learn: ItemLearning | None = None
    name: str = "df"


@dataclass(frozen=True)
class ItemMatrix:
    """Item data in memory (a sparse matrix read as item sets)."""

    items: ItemSets


Source = TableFile | Dataset | Frame | ItemFile | ItemMatrix | ItemFrame
"""Where the private records come from."""


@dataclass(frozen=True)
class Learning:
    """How a table given without a domain has one learned from it, privately
    (:func:`dpquery.domain_learning.learn_domain`, ``docs/learn.md``): ``share`` of the run's
    zCDP ``rho`` (not of its epsilon), ``types`` declaring columns ``numeric`` or
    ``categorical`` (public knowledge), ``bins`` per numeric column; ``within``: part of the
    share buys decoding weights inside the numeric bins
    (:func:`dpquery.domain_learning.learn_within`); ``rest``: the source's domain is partial
    (a codebook of some columns, public, costing nothing) and the other columns are
    learned."""

    share: float = DEFAULT_DOMAIN_SHARE
    types: Mapping[str, str] | None = None
    bins: int = DEFAULT_BINS
    within: bool = True
    rest: bool = False  # a domain given covers some columns: learn the others


@dataclass(frozen=True)
class WorkloadKind:
    """A workload generated from the domain (:func:`dpquery.queries.build_workload`)."""

    kind: str
    count: int = 100_000
    marginals: int | None = None
    attributes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Output:
    """The output rows: ``rows`` sampled from the release (None: n, public under
    replace-one; under add/remove the noisy n the release drew), or, with
    ``weights``, the released records and their weights; numeric attributes as a uniform
    value in their bin or the bin's label."""

    rows: int | None = None
    weights: bool = False
    numeric: Literal["uniform", "label"] = "uniform"

    def count(self, n: int) -> int | None:
        """The rows to sample from a release of ``n`` records (None: the weighted records)."""
        return None if self.weights else n if self.rows is None else self.rows


@dataclass(frozen=True)
class Files:
    """Where a release is written, all or nothing: the rows (``out``: its suffix gives the
    form), the publishable report and the NOT PRIVATE evaluation (None: not written)."""

    out: Path
    report: Path | None = None
    evaluation: Path | None = None
    overwrite: bool = False
    dense: bool = False  # a CSV wider than DENSE_COLUMNS columns, written anyway

    @property
    def domain(self) -> Path:
        """Where a domain learned from the data is written: ``<out stem>.domain.json``."""
        return self.out.with_suffix(".domain.json")

    @property
    def items(self) -> Path:
        """Where an item universe learned from the data is written: ``<out stem>.items.txt``
        (the stem without its ``.transactions`` and compression suffixes)."""
        name = self.out.name
        for suffix in (".gz", ".bz2", ".xz", ".zip", ".zst"):
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
        stem = Path(name).stem
        if stem.lower().endswith(".transactions"):
            stem = stem[: -len(".transactions")]
        return self.out.with_name(f"{stem}.items.txt")


@dataclass(frozen=True)
class Backend:
    """Where the data is read and counted: in this process, or on a Dask cluster."""

    name: Literal["local", "dask"] = "local"
    scheduler: str | None = None
    partitions: int | None = None


@dataclass(frozen=True)
class ReleaseRequest:
    """One release: the data, the algorithm and its options (``options``: the registry's
    option names to values, the budget's ``epsilon``, ``delta``, ``rho`` among them; None
    is not given), the workload (None: every ``k``-way marginal of at most n cells; a
    :class:`Workload`, a saved one's path, or a kind to generate), the output and where it
    goes. ``say`` receives the warnings the user must see (a large delta or epsilon, auto's
    pre-release check) as they arise, and the library's Python warnings of the same are
    then silenced; without it they are issued as Python warnings. ``keep`` receives the
    estimator before it fits (its ledger is set before the first draw). ``neighbours`` is
    the relation the guarantee is stated for (:mod:`dpquery.privacy.neighbours`; None: the
    algorithm's own, add/remove for ``auto``'s releases, replace-one for the papers'
    algorithms and after a domain learned from the data)."""

    source: Source
    learning: Learning = Learning()
    algorithm: str = "auto"
    options: Mapping[str, Any] = field(default_factory=dict)
    oracle_options: Mapping[str, float] = field(default_factory=dict)
    workload: Workload | Path | WorkloadKind | None = None
    k: int = 3
    output: Output = Output()
    files: Files | None = None
    evaluate: bool = False
    backend: Backend = Backend()
    seed: SeedLike = None
    progress: bool | None = None
    say: Callable[[Warning], None] | None = None
    keep: Callable[[Any], None] | None = None
    neighbours: str | None = None

    @property
    def items(self) -> bool:
        """Whether the records are sets of items (no domain, sparse)."""
        return isinstance(self.source, ItemFile | ItemMatrix | ItemFrame)

    @property
    def learns(self) -> bool:
        """Whether the table's domain is learned from it (none given, or one given for some
        columns with ``learning.rest``; none inside it, not read off the data)."""
        source = self.source
        if isinstance(source, Frame):
            return source.domain is None or self.learning.rest
        if isinstance(source, TableFile):
            encoded = source.path.suffix.lower() == ".npz"
            given = source.domain is not None and not self.learning.rest
            return not given and not source.infer_domain and not encoded
        return False


@dataclass
class ReleaseResult:
    """A release and what was made of it: the output ``rows`` (a DataFrame; ``(bits,
    weights)`` for an encoded ``.npz``; item sets for item data), the publishable ``report``,
    the NOT PRIVATE ``evaluation`` (None unless asked for) and the warnings said."""

    release: Release
    rows: Any
    report: dict[str, Any]
    evaluation: dict[str, Any] | None = None
    messages: list[Warning] = field(default_factory=list)
    labels: ItemLabels | None = None  # a raw user x item table's: the ids and columns

    @property
    def row_count(self) -> int:
        """How many rows the output holds."""
        if isinstance(self.rows, tuple):
            return int(self.rows[0].n)
        return int(self.rows.n) if isinstance(self.rows, ItemSets) else len(self.rows)
