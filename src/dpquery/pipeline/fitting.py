"""The third step of a release: the fit, on one ledger.

The estimator's own ledger is set before its first draw (``request.keep`` receives the
estimator first, so a front door keeps that ledger also when the fit raises). The true
answers are computed for the evaluation, or by the fit only when the algorithm reads them
(the default release does not). On dask the evaluation's (both workloads') ride on the fit's
first pass, the release's counts or the answers the algorithm reads: no pass of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpquery.algorithms.marginal.adaptive_projection import DEFAULT_MAX_RECORDS
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import attach_ledger
from dpquery.backends import PartitionedData
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets
from dpquery.pipeline.inputs import as_item_sets, item_bits
from dpquery.pipeline.learning import Learned
from dpquery.pipeline.request import ReleaseRequest
from dpquery.pipeline.universe import LearnedUniverse
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.queries import Workload, answer, default_workload


@dataclass
class Fitted:
    """A fitted release and what its later steps read: its records (item sets for item
    data), the data it was fitted on, the workloads (None for item data's wide release) with
    their true answers when evaluated, and the one generator of the run."""

    release: Release
    records: Any
    model: Any
    data: Any
    workload: Workload | None
    fresh: Workload | None
    true: Sequence[np.ndarray | None]
    rng: np.random.Generator
    domain: Domain | None = None  # the output's: a table's, in its dtypes; None for items
    messages: list[Warning] = field(default_factory=list)
    learned: Learned | None = None  # the domain learned from the data, and its cost
    universe: LearnedUniverse | None = None  # the item universe learned, and its cost

    @property
    def n(self) -> int:
        """The number of records the later steps may read: the data's (public under
        replace-one), or under add/remove the noisy ``n`` the release drew (``noisy_n``; a
        release that measures ``n`` itself, the wide release, reports it as its ``n``)."""
        parameters = self.release.parameters
        if "noisy_n" in parameters:
            return int(parameters["noisy_n"])
        if self.release.neighbours == ADD_REMOVE:
            return int(parameters["n"])
        return int(self.data.n)


def fit_table(
    request: ReleaseRequest, model: Any, data: Any, workload: Workload,
    fresh: Workload | None, rng: np.random.Generator, domain: Domain,
    learned: Learned | None = None,
) -> Fitted:  # fmt: skip
    """Fit ``model`` to the table's ``data`` for ``workload``; its rows will be written
    over ``domain``. After a ``learned`` domain the model spends the release's child of the
    run's ledger, and the release is accounted as the whole run."""
    workloads = [workload] if fresh is None else [workload, fresh]
    dask = isinstance(data, PartitionedData)
    true: Sequence[np.ndarray | None] = (None, None)
    if request.evaluate and dask:
        data.answers_later(workloads)
    elif request.evaluate:
        true = [answer(w, data) for w in workloads]
    if learned is None:
        release = _fit(request, model, data, workload, true_answers=true[0])
    else:
        try:
            release = _fit(request, model, data, workload, true_answers=true[0],
                           ledger=learned.release_ledger)  # fmt: skip
        except BaseException as exc:
            attach_ledger(exc, learned.ledger)  # the run's: the learning's charges too
            raise
        release = learned.as_run(release)
    if request.evaluate and dask:
        true = data.answers_many(workloads)  # made by now, with the fit's pass
    return Fitted(release, release.records, model, data, workload, fresh, true, rng, domain,
                  learned=learned)  # fmt: skip


def fit_items(
    request: ReleaseRequest, model: Any, items: ItemSets | PartitionedData,
    rng: np.random.Generator, universe: LearnedUniverse | None = None,
) -> Fitted:  # fmt: skip
    """Fit ``model`` (the wide release, or a named algorithm on the bits) to item data; the
    release's records come back as item sets (weighted when the algorithm weighs them).
    Only the wide release takes partitioned item data. After a ``universe`` learned from the
    data the model spends the release's child of the run's ledger, and the release is
    accounted as the whole run."""
    keywords: dict[str, Any] = {} if universe is None else {"ledger": universe.release_ledger}
    try:
        if model.name == "wide":
            release = _fit(request, model, items, **keywords)
            fitted = Fitted(release, release.records, model, items, None, None, (None,), rng)
        else:
            assert isinstance(items, ItemSets)
            data = item_bits(items)
            assert data.domain is not None
            # under add/remove n is private: the workload's cells are capped by the public bound
            add_remove = getattr(model, "relation", None) == ADD_REMOVE
            n = DEFAULT_MAX_RECORDS if add_remove else data.n
            workload = default_workload(data.domain, n, k=request.k, seed=rng)
            release = _fit(request, model, data, workload, **keywords)
            records = as_item_sets(release.records)
            fitted = Fitted(release, records, model, items, workload, None, (None,), rng)
    except BaseException as exc:
        if universe is not None:
            attach_ledger(exc, universe.ledger)  # the run's: the selection's charge too
        raise
    if universe is not None:
        fitted.release = universe.as_run(fitted.release)
        fitted.universe = universe
    return fitted


def _fit(request: ReleaseRequest, model: Any, *data: Any, **keywords: Any) -> Release:
    if request.keep is not None:
        request.keep(model)
    release: Release = model.fit(*data, **keywords)
    return release
