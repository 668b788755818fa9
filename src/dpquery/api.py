"""The pandas front door: a DataFrame in, a private synthetic DataFrame out.

:func:`synthesize` is one call; :class:`DPSynthesizer` is the same as an estimator following
scikit-learn's conventions (``__init__`` stores keyword hyperparameters verbatim, ``fit``
validates them and sets fitted attributes with a trailing underscore, ``get_params`` /
``set_params``). Both turn their arguments into a request of the release pipeline
(:mod:`dpquery.pipeline`, the one ``dpquery synth`` runs): encode the table over the public
domain, the default workload when none is given (all ``k``-way marginals,
:func:`dpquery.queries.default_workload`), the chosen algorithm (``"auto"`` by default,
:mod:`dpquery.algorithms.auto`) on one ledger under ``neighbours`` (``"add-remove"`` by
default for ``auto``'s releases: ``n`` is private, and the output has as many rows as the
noisy ``n`` the release drew; ``"replace-one"``: ``n`` public, as many rows as the input;
:mod:`dpquery.privacy.neighbours`) sampled from the release (:mod:`dpquery.data.sample`), in the
input's columns and the output dtypes of the public domain (:mod:`dpquery.data.schema`), or
those declared by ``dtypes=``: never the input's dtypes, which pandas infers from the values
(one age of 37.5 makes an integer column ``float64``), so copying them would tell neighbouring
tables apart. A column the domain writes in scientific notation (``Numeric.significant``,
text such as ``4.070e-04`` in a CSV) comes back as ``float64`` numbers (:func:`as_numbers`),
or in the dtype ``dtypes=`` declares for it. A float in the input is read as Python's
``repr`` writes it, as ``DataFrame.to_csv`` does (with an exponent below ``10^-4`` and from
``10^16``; :func:`dpquery.domain_learning.scientific_of`): a float64 column of p-values is
learned as the CSV pandas writes of it, and its small values come back.

A scipy sparse matrix (records x items, its entries 0 and 1; ``binarize=True`` counts every
non-zero as a one, e.g. of ratings) is item data: it needs no domain (its ``d`` items and
``n`` records are public sizes), ``"auto"`` runs the wide release
(:mod:`dpquery.algorithms.wide`) and the synthetic records come back as a CSR matrix.

The domain of a DataFrame is public: a :class:`~dpquery.data.Domain`, a codebook mapping
(:meth:`~dpquery.data.Domain.from_codebook`) or the path of a domain or codebook JSON file;
given none, it is learned from the table privately (:mod:`dpquery.pipeline.learning`,
``docs/learn.md``) with ``domain_share`` of the budget's zCDP rho, on the run's one ledger,
and the release spends the rest (``domain_`` holds it, for reuse at no further cost); what
the console of ``dpquery synth`` notes of its columns (one released only as ``<other>``, dates
read, values clipped) is warned, one :class:`~dpquery.errors.LearnedColumnWarning` a note. It is
never read off the data silently: :func:`dpquery.data.infer_domain` does that for
exploration; passing its result is the explicit opt-in, and it warns and marks the release
NOT private (its guarantee then reads NOT PRIVATE).

The estimator keeps the ledger of its fit (``ledger_``) from before the first draw, also when
the fit raises (the exception carries it as ``exc.ledger``), and refuses to fit again after a
fit that failed having spent: a retry would spend on the same data a second time.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery import pipeline
from dpquery.algorithms import registry
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import attach_ledger, refuse_after_failed_spend
from dpquery.algorithms.wide.release import as_item_sets
from dpquery.data.domain import Domain, Numeric
from dpquery.data.items import ItemSets
from dpquery.data.sample import check_rows
from dpquery.domain_learning import DEFAULT_DOMAIN_SHARE
from dpquery.errors import DPQueryError, LearnedColumnWarning, NonPrivateWarning
from dpquery.pipeline import (
    Fitted,
    Frame,
    ItemFrame,
    ItemLearning,
    ItemMatrix,
    Learning,
    Output,
    ReleaseRequest,
    Source,
)
from dpquery.pipeline.inputs import catalogue
from dpquery.pipeline.learning import column_notes
from dpquery.pipeline.rows import item_rows, table_rows
from dpquery.pipeline.universe import DEFAULT_UNIVERSE_BOUND, DEFAULT_UNIVERSE_SHARE
from dpquery.privacy import Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, check_neighbours
from dpquery.queries import Workload
from dpquery.rng import SeedLike

DEFAULT_K = 3
"""The marginal order of the default workload."""


def as_domain(domain: object) -> Domain | None:
    """A :class:`Domain` from a Domain, a codebook mapping or a domain (or codebook) JSON
    path; None (learn it from the data) for None."""
    if domain is None or isinstance(domain, Domain):
        return domain
    if isinstance(domain, Mapping):
        return Domain.from_codebook(domain)
    if isinstance(domain, str | Path):
        return Domain.load(domain)
    raise DPQueryError(
        f"domain must be a dpquery.Domain, a codebook dict or a path to a domain JSON file, "
        f"got {type(domain).__name__}"
    )


class DPSynthesizer:
    """Private synthetic data from a DataFrame, scikit-learn style (module docstring)::

        model = DPSynthesizer(epsilon=1.0, seed=0).fit(df, domain)
        synthetic = model.sample()          # as many rows as df
        model.release_.guarantee            # the privacy guarantee asked for

    Hyperparameters: the budget (``epsilon`` with ``delta``, which defaults to ``1/n^2``
    under replace-one and to 1e-9 under add/remove, or ``rho``), ``neighbours`` (the
    relation the guarantee is stated for: None, the algorithm's own, add/remove for ``auto``,
    adaptive-projection and the wide releases, replace-one for the papers' algorithms, which
    refuse add/remove; a domain learned from the data holds for the release's relation),
    the ``algorithm`` (a
    registry name, ``"auto"`` by default), ``k`` (the default
    workload's marginal order), ``options`` (the algorithm's own options, e.g. ``{"T": 50}``),
    ``seed`` (every random choice; None: a cryptographically secure generator; with a seed
    the guarantee does not hold against anyone who knows it), ``progress`` (the algorithm's
    progress display; None: its default) and ``dtypes`` (attribute name to the output
    column's pandas dtype, declared from public knowledge; None: the domain's,
    :meth:`Domain.with_dtypes`) and, for a sparse matrix, ``binarize`` (every non-zero
    entry counts as a one; by default an entry other than 0 and 1 is an error). Fitted
    without a domain, the table's is learned from ``domain_share`` of the budget's zCDP rho
    (default :data:`~dpquery.domain_learning.DEFAULT_DOMAIN_SHARE`), with ``types``
    declaring columns ``"numeric"`` or ``"categorical"``, or ``"categorical:V1|V2|..."``
    with their public categories (nothing learned on them; ``docs/learn.md``). With
    ``learn_rest``, the ``domain`` given to :meth:`fit` covers some of the columns (public,
    nothing spent on them) and the others are learned so.

    Fitted attributes: ``release_`` (the :class:`~dpquery.algorithms.release.Release`),
    ``domain_`` (the domain, with the declared ``dtypes``), ``workload_``, ``n_`` (the
    input's records under replace-one; under add/remove the noisy ``n``, never the exact one),
    ``columns_``; ``ledger_`` (every charge of the last fit, from before its first draw,
    also when it raised).
    """

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        rho: float | None = None,
        algorithm: str = "auto",
        k: int = DEFAULT_K,
        options: Mapping[str, Any] | None = None,
        seed: SeedLike = None,
        progress: bool | None = None,
        dtypes: Mapping[str, Any] | None = None,
        binarize: bool = False,
        domain_share: float = DEFAULT_DOMAIN_SHARE,
        types: Mapping[str, str] | None = None,
        neighbours: str | None = None,
        learn_rest: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.algorithm = algorithm
        self.k = k
        self.options = options
        self.seed = seed
        self.progress = progress
        self.dtypes = dtypes
        self.binarize = binarize
        self.domain_share = domain_share
        self.types = types
        self.neighbours = neighbours
        self.learn_rest = learn_rest

    # -- scikit-learn's parameter protocol -------------------------------------------------
    _PARAMS = (
        "epsilon", "delta", "rho", "algorithm", "k", "options", "seed", "progress", "dtypes",
        "binarize", "domain_share", "types", "neighbours", "learn_rest",
    )  # fmt: skip

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyperparameters as stored."""
        return {name: getattr(self, name) for name in self._PARAMS}

    def set_params(self, **params: Any) -> DPSynthesizer:
        """Change hyperparameters (checked at the next :meth:`fit`)."""
        unknown = sorted(set(params) - set(self._PARAMS))
        if unknown:
            raise DPQueryError(
                f"DPSynthesizer has no parameter {', '.join(unknown)}; it has {self._PARAMS}"
            )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v is not None)
        return f"DPSynthesizer({given})"

    # -- fit / sample ----------------------------------------------------------------------
    def _request(self, source: Source, workload: Workload | None = None) -> ReleaseRequest:
        """The release these hyperparameters ask for, of ``source`` (checked first)."""
        if self.algorithm not in registry.names():
            raise DPQueryError(
                f"algorithm must be one of {registry.names()}, got {self.algorithm!r}"
            )
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise DPQueryError(f"k must be a positive integer, got {self.k!r}")
        if self.neighbours is not None:
            check_neighbours(self.neighbours)
        if self.options is not None and not isinstance(self.options, Mapping):
            raise DPQueryError(f"options must be a dict, got {type(self.options).__name__}")
        options = dict(self.options or {})
        budget = {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho}
        clash = sorted(set(options) & set(budget))
        if clash:
            raise DPQueryError(f"give {', '.join(clash)} as keyword(s), not in options")
        return ReleaseRequest(
            source, algorithm=self.algorithm, options={**budget, **options}, workload=workload,
            k=self.k, seed=self.seed, progress=self.progress, keep=self._keep,
            learning=Learning(share=self.domain_share, types=self.types, rest=self.learn_rest),
            neighbours=self.neighbours,
        )  # fmt: skip

    def fit(
        self, df: pd.DataFrame, domain: object = None, workload: Workload | None = None
    ) -> DPSynthesizer:
        """Release private synthetic records of ``df`` over the public ``domain`` (a
        Domain, a codebook dict or a domain JSON path; None: learned from ``df`` privately,
        with ``domain_share`` of the budget) for ``workload`` (default: all ``k``-way
        marginals). Returns ``self``."""
        refuse_after_failed_spend(getattr(self, "_failed", None), "this DPSynthesizer")
        if sp.issparse(df):
            return self._fit_items(df, domain, workload)
        if not isinstance(df, pd.DataFrame):
            raise DPQueryError(
                f"df must be a pandas DataFrame or a scipy sparse matrix, got {type(df).__name__}"
            )
        if len(df) == 0:
            raise DPQueryError("df has no rows: there is nothing to release")
        if self.binarize is not False:
            raise DPQueryError(
                f"binarize={self.binarize!r} is for item data (a scipy sparse matrix), not a "
                "DataFrame: drop it"
            )
        public = as_domain(domain)
        if (public is None or self.learn_rest) and workload is not None:
            raise DPQueryError(
                "a workload is over a domain: give the domain too (a learned one is not known "
                "before the fit)"
            )
        if public is not None and public.non_private:
            warnings.warn(
                "the domain was read from the private data (infer_domain): this release is "
                "NOT differentially private",
                NonPrivateWarning,
                stacklevel=2,
            )
        if workload is not None and not isinstance(workload, Workload):
            raise DPQueryError(
                f"workload must be a dpquery.queries.Workload, got {type(workload).__name__}"
            )
        fitted = self._fit(self._request(Frame(df, public, self.dtypes), workload))
        assert fitted.domain is not None
        if fitted.learned is not None:  # the console's notes; public (noisy counts alone)
            for note in column_notes(fitted.learned.domain, fitted.learned.report):
                warnings.warn(note, LearnedColumnWarning, stacklevel=2)
        self.columns_: list[Any] | None = [c for c in df.columns if c in fitted.domain]
        return self._fitted_as(fitted)

    @property
    def ledger_(self) -> Ledger:
        """The ledger of the last fit: set before its first draw, kept when it raised (with
        a learned domain, the run's: the learning's charges and the release's)."""
        ledger = getattr(self, "_ledger", None) or getattr(
            getattr(self, "_model", None), "ledger_", None
        )
        if ledger is None:
            raise AttributeError("ledger_: this DPSynthesizer has not started a fit")
        return ledger

    def _keep(self, model: Any) -> None:
        """Keep the estimator about to fit: its ledger is set before its first draw."""
        self._model = model

    def _fit(self, request: ReleaseRequest) -> Fitted:
        """The pipeline's fit, keeping its ledger on the exception when it raises."""
        self._ledger: Ledger | None = None
        try:
            fitted = pipeline.fit(request)
        except BaseException as exc:
            ledger = getattr(exc, "ledger", None)  # the run's: it starts empty
            if isinstance(ledger, Ledger):
                self._ledger = ledger
                self._failed = attach_ledger(exc, ledger)
            raise
        self._ledger = fitted.release.ledger
        return fitted

    def _fitted_as(self, fitted: Fitted) -> DPSynthesizer:
        """The fitted attributes (module docstring)."""
        self.release_: Release = fitted.release
        self.domain_: Domain | None = fitted.domain  # None for item data
        self.workload_: Workload | None = fitted.workload
        self.n_ = fitted.n  # under add/remove the noisy n
        self._fitted = fitted
        return self

    def _fit_items(self, matrix: Any, domain: object, workload: object) -> DPSynthesizer:
        """Item data (a sparse matrix): no domain, no workload; ``auto`` is the wide release."""
        if domain is not None or workload is not None:
            raise DPQueryError(
                "a sparse matrix is item data: its items 0..d-1 need no domain or workload"
            )
        given = [f"{name}={value!r}" for name, value, unset in (
            ("dtypes", self.dtypes, None), ("k", self.k, DEFAULT_K)) if value != unset]  # fmt: skip
        if given:  # the output has no columns to type, and there is no workload of marginals
            raise DPQueryError(
                f"a sparse matrix is item data, released as a sparse matrix: drop "
                f"{' and '.join(given)} (dtypes types columns; k is the default workload's "
                "marginal order)"
            )
        items = as_item_sets(ItemSets.from_sparse(matrix, binarize=self.binarize))
        if items.n == 0:
            raise DPQueryError("the matrix has no rows: there is nothing to release")
        algorithm = "wide" if self.algorithm == "auto" else self.algorithm
        if algorithm != "wide":
            raise DPQueryError(
                f"a sparse matrix is released by the wide release (algorithm='wide' or "
                f"'auto'), not {self.algorithm!r}"
            )
        # auto's relation (add/remove) unless one is given: the wide release is auto's here
        relation = self.neighbours or (ADD_REMOVE if self.algorithm == "auto" else None)
        wide = DPSynthesizer(**{**self.get_params(), "algorithm": "wide", "neighbours": relation})
        request = replace(wide._request(ItemMatrix(items)), keep=self._keep)
        self.columns_ = None  # item data: no domain, no workload, no columns
        return self._fitted_as(self._fit(request))

    def sample(self, m: int | None = None) -> Any:
        """``m`` synthetic rows (default ``n_``: the input's ``n`` under replace-one, the noisy
        ``n`` under add/remove) sampled from the release
        (:func:`dpquery.data.output_table`), in the input's column order and ``domain_``'s
        dtypes. Post-processing: no privacy cost; each call draws afresh from the one
        generator. On item data, a CSR matrix; ``m = n`` of an unweighted release gives the
        released records themselves on every call (sampling would only reorder them)."""
        if not hasattr(self, "release_"):
            raise DPQueryError("this DPSynthesizer is not fitted yet: call fit(df, domain)")
        output = Output(rows=self.n_ if m is None else check_rows(m))
        if self.domain_ is None:  # item data: sparse records
            return item_rows(self._fitted, output).matrix
        table, _ = table_rows(self._fitted, self.domain_, output)
        return as_numbers(table[self.columns_], self.domain_, self.dtypes)


def as_numbers(
    table: pd.DataFrame, domain: Domain, dtypes: Mapping[str, Any] | None
) -> pd.DataFrame:
    """``table`` with each column written in scientific notation (``Numeric.significant``,
    decoded as text such as ``4.070e-04``) as the numbers that text holds: ``float64``, a
    missing value NaN, or the dtype ``dtypes`` declares for it. A DataFrame's numbers are
    numbers: the CLI writes the text, the API gives the same values, rounded to the
    column's significant digits. Post-processing of the decoded rows (no draw, no cost)."""
    declared = dict(dtypes or {})
    written = [
        a for a in domain.attributes
        if isinstance(a, Numeric) and a.significant is not None and a.name in table
    ]  # fmt: skip
    if written:
        table = table.copy()  # a selection of the decoded table's columns: its own frame
    for a in written:
        numbers = pd.to_numeric(table[a.name], errors="raise").astype("float64")
        table[a.name] = numbers.astype(declared[a.name]) if a.name in declared else numbers
    return table


def synthesize(
    df: Any,
    domain: object = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    workload: Workload | None = None,
    algorithm: str = "auto",
    rows: int | None = None,
    seed: SeedLike = None,
    k: int = DEFAULT_K,
    dtypes: Mapping[str, Any] | None = None,
    binarize: bool = False,
    domain_share: float = DEFAULT_DOMAIN_SHARE,
    types: Mapping[str, str] | None = None,
    neighbours: str | None = None,
    learn_rest: bool = False,
    **options: Any,
) -> tuple[pd.DataFrame, Release]:
    """A private synthetic copy of ``df`` and its :class:`Release` (its privacy account);
    of a scipy sparse matrix, a CSR matrix of the same shape (module docstring).

    ``domain`` is public: a :class:`~dpquery.data.Domain`, a codebook dict or a domain JSON
    path; None: learned from ``df`` privately with ``domain_share`` of the budget's zCDP rho
    (``types`` declares columns ``"numeric"`` or ``"categorical"``; ``docs/learn.md``); with
    ``learn_rest``, ``domain`` covers some columns and the others are learned so. The
    budget is ``epsilon`` (``delta`` defaults to 1e-9 under add/remove, ``1/n^2`` under
    replace-one; ``delta=0``: pure DP) or ``rho`` (zCDP). ``neighbours`` is the relation the
    guarantee is stated for (None: the algorithm's own, add/remove for ``auto``: ``n``
    private; ``"replace-one"``: ``n`` public; :mod:`dpquery.privacy.neighbours`).
    ``workload`` defaults to all ``k``-way marginals; ``rows`` to the noisy ``n`` under
    add/remove, ``len(df)`` under replace-one; ``dtypes`` declares output dtypes (default:
    the domain's, never ``df``'s; a column written in scientific notation ``float64``);
    ``binarize=True`` counts every non-zero entry of a sparse matrix as a one (otherwise an
    entry other than 0 and 1 is an error); ``options`` are the algorithm's own (e.g.
    ``T=50``). See :class:`DPSynthesizer`.
    """
    if rows is not None:
        check_rows(rows)  # before anything is spent
    model = DPSynthesizer(
        epsilon=epsilon, delta=delta, rho=rho, algorithm=algorithm, k=k, options=options,
        seed=seed, dtypes=dtypes, binarize=binarize, domain_share=domain_share, types=types,
        neighbours=neighbours, learn_rest=learn_rest,
    )  # fmt: skip
    model.fit(df, domain, workload)
    return model.sample(rows), model.release_


def synthesize_items(
    df: pd.DataFrame,
    *,
    user_column: str | None = None,
    item_column: str | None = None,
    item_list: Sequence[Any] | None = None,
    learn_items: bool = False,
    learn_items_share: float = DEFAULT_UNIVERSE_SHARE,
    learn_items_bound: int = DEFAULT_UNIVERSE_BOUND,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    algorithm: str = "auto",
    rows: int | None = None,
    seed: SeedLike = None,
    neighbours: str | None = None,
    **options: Any,
) -> tuple[pd.DataFrame, Release]:
    """A private synthetic copy of a raw user x item DataFrame (one row per user and item,
    as a ratings or purchases table is kept; other columns are not read) and its
    :class:`Release`: ``dpquery synth --data ratings.csv`` on a DataFrame
    (``docs/wide.md``, "From a raw user x item CSV").

    Each distinct value of ``user_column`` (default: the first column) is one record; the
    items are ``item_column``'s (default: the second), ids read as text (``7.0`` in a float
    column as ``7``). The item universe is the public catalogue ``item_list`` (ids in order;
    a row whose item is not listed is dropped) or, with ``learn_items``, learned privately:
    a partition selection over the ids spending ``learn_items_share`` of the budget's zCDP
    rho, each user contributing at most ``learn_items_bound`` of its items
    (:mod:`dpquery.pipeline.universe`); exactly one of the two. The budget is ``epsilon``
    (``delta`` defaults to 1e-9 under add/remove, ``1/n^2`` under replace-one) or, with a
    catalogue, ``rho``; ``neighbours`` as in :func:`synthesize` (add/remove for ``auto``).

    Returns the synthetic rows as a DataFrame of the two columns (synthetic user ids
    ``0..M-1``, never the real ones, and the catalogue's ids; ``rows`` records, default the
    noisy ``n`` under add/remove) and the release. ``synthetic.attrs["item_list"]`` holds
    the catalogue the release was made over: with ``learn_items`` the ids the selection
    released (public now: give them as ``item_list`` to release again at no further cost);
    no id that was not released reaches the output.
    """
    if rows is not None:
        check_rows(rows)  # before anything is spent
    if not isinstance(learn_items, bool):
        raise DPQueryError(f"learn_items must be True or False, got {learn_items!r}")
    if algorithm not in registry.names():
        raise DPQueryError(f"algorithm must be one of {registry.names()}, got {algorithm!r}")
    if neighbours is not None:
        check_neighbours(neighbours)
    learn = ItemLearning(learn_items_share, learn_items_bound) if learn_items else None
    listed = None if item_list is None else catalogue(item_list)
    source = ItemFrame(df, user_column, item_column, listed, learn)
    budget = {"epsilon": epsilon, "delta": delta, "rho": rho}
    clash = sorted(set(options) & set(budget))
    if clash:
        raise DPQueryError(f"give {', '.join(clash)} as keyword(s), not in options")
    request = ReleaseRequest(
        source, algorithm=algorithm, options={**budget, **options}, seed=seed,
        output=Output(rows=rows), neighbours=neighbours,
    )  # fmt: skip
    result = pipeline.release(request)
    labels = result.labels
    assert labels is not None and isinstance(result.rows, ItemSets)
    out: ItemSets = result.rows
    m = out.matrix.tocsr()
    synthetic = pd.DataFrame({
        labels.user_column: np.repeat(np.arange(out.n, dtype=np.int64), np.diff(m.indptr)),
        labels.item_column: np.asarray(labels.items, dtype=object)[m.indices],
    })  # fmt: skip
    synthetic.attrs["item_list"] = list(labels.items)
    return synthetic, result.release


__all__ = ["DPSynthesizer", "as_domain", "synthesize", "synthesize_items"]
