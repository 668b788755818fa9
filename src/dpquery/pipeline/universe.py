"""Step 1 of a release from a raw user x item table given without a catalogue: its item
universe, learned privately (``--learn-items``, ``docs/wide.md``).

Which item ids may be named in the output is a partition selection over the ids
(:mod:`dpquery.privacy.partition_selection`: Desfontaines, Voss, Gipson and Mandayam 2022;
Gaussian partition selection as in Google's differential privacy library and PipelineDP;
Gopi et al. 2020 on users holding several keys; Lebeda and Retschmeier 2025, FORC, on the
Gaussian sparse histogram mechanism, whose correlated noise allows a lower threshold when a
user's keys are bounded), the mechanism the domain learner runs on a raw table's categories
(``docs/learn.md``), here with each user contributing up to ``s`` keys:

* **contribution bound**: each user's distinct items are cut to at most ``s`` of them, those
  of smallest keyed hash of the (user id, item id) pair (the key drawn from a child of the
  run's generator before the data is read; over its draw a uniform subset of the user's
  items, independent of the others': a rule fixed before the data is read, acting on each
  record alone, and the same whether the lines are read in one process or in partitions on
  a cluster);
* **noisy counts**: each item held by some cut record gets ``count + N_Z(0, sigma^2)``
  (discrete Gaussian, :func:`~dpquery.privacy.partition_selection.select_partitions`, the
  domain learner's own call), charged on the run's ledger before the draw. One user moves
  up to ``s`` counts by 1: the count vector's L2 sensitivity is ``sqrt(s)`` under add/remove
  and ``sqrt(2 s)`` under replace-one (``s`` counts down, ``s`` up);
* **threshold**: an item is released when its noisy count reaches ``tau``, the smallest
  integer with ``P(Z >= tau) <= delta_tail / s``. The partition selection module's coupling
  argument holds key by key; the keys absent from one neighbour are now up to ``s`` (the
  added, removed or replaced user's cut items), so by the union bound the real selection
  differs from the one over both neighbours' keys with probability at most ``s (delta_tail
  / s) = delta_tail``: the run is ``(epsilon, delta_ledger + (1 + e^epsilon)
  delta_tail)``-DP, as after a learned domain.

The budget is split as a learned domain's (:func:`dpquery.pipeline.learning.run_budget`):
half of ``delta`` for the ledger, half for the selection's tail; ``share`` of the ledger's
zCDP ``rho`` for the selection, the rest for the release, each on a child of the one
ledger (``item universe: ...`` and ``release: ...``). The released ids, in canonical order
(sorted by their text, never the data's order), are the release's catalogue: item ``j`` is
the ``j``-th, every line of the table whose item was not released is dropped (a rule fixed
by the selection's output: the release's sensitivities hold for it, adaptive composition),
and no id that was not released reaches any output. They are written beside the output
(``<out stem>.items.txt``) for the next release to give as ``--item-list``: public then,
at no further cost.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpquery.algorithms.release import OutsideLedger, Release
from dpquery.algorithms.synthesizer import attach_ledger
from dpquery.data.items import ItemSets
from dpquery.data.raw_items import ItemLabels, RawLines, cut_key
from dpquery.errors import DPQueryError
from dpquery.pipeline.learning import RELEASE_STAGE, RunBudget, run_budget
from dpquery.pipeline.request import DEFAULT_UNIVERSE_BOUND, DEFAULT_UNIVERSE_SHARE
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, check_neighbours
from dpquery.privacy.partition_selection import (
    Selection,
    partition_threshold,
    select_partitions,
)
from dpquery.rng import child_rng, make_rng


class CutLines(Protocol):
    """The lines of a raw table as the selection reads them: in this process
    (:class:`~dpquery.data.raw_items.RawLines`) or held on a cluster
    (:class:`~dpquery.backends.raw.ClusterLines`)."""

    @property
    def n(self) -> int: ...
    @property
    def user_column(self) -> str: ...
    @property
    def item_column(self) -> str: ...

    def cut_counts(self, bound: int, key: str) -> dict[str, int]: ...


UNIVERSE_STAGE = "item universe"
"""The prefix of the selection's charge on the run's ledger."""
SELECTION = "partition selection of the item ids (discrete Gaussian)"
"""The selection's mechanism name (charged as ``item universe: <this>``)."""


def check_bound(bound: object, name: str = "learn_items_bound") -> int:
    """A contribution bound: a positive integer (``name``: how the error calls it)."""
    if isinstance(bound, bool) or not isinstance(bound, int | np.integer) or bound < 1:
        raise DPQueryError(f"{name} must be a positive integer (the items a user contributes "
                           f"to the item universe's selection), got {bound!r}")  # fmt: skip
    return int(bound)


def check_universe_share(share: object, name: str = "learn_items_share") -> float:
    """A share of rho strictly between 0 and 1 (``name``: how the error calls it)."""
    if (isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share)
            or not 0 < share < 1):  # fmt: skip
        raise DPQueryError(f"{name} must be a number strictly between 0 and 1 (a share of "
                           f"the run's zCDP rho), got {share!r}")  # fmt: skip
    return float(share)


def universe_sensitivity(bound: int, neighbours: str) -> float:
    """The L2 sensitivity of the cut records' item counts: ``sqrt(s)`` under add/remove (one
    user's up to ``s`` counts move by 1), ``sqrt(2 s)`` under replace-one (``s`` down, ``s``
    up)."""
    s = check_bound(bound)
    return math.sqrt(s if check_neighbours(neighbours) == ADD_REMOVE else 2 * s)


@dataclass(frozen=True)
class UniversePlan:
    """The selection's public parameters, from the budget, ``s`` and the relation alone:
    its ``rho``, noise ``sigma2``, the tail each key may pass with (``key_tail``, the run's
    selection tail over ``s``) and the threshold ``tau``."""

    budget: RunBudget
    bound: int
    neighbours: str
    sensitivity: float
    sigma2: float
    key_tail: float
    tau: int

    @property
    def rho(self) -> float:
        return self.budget.learn_rho

    @property
    def delta_tail(self) -> float:
        """The selection's whole tail: ``s`` keys at ``key_tail`` each (module docstring)."""
        return self.bound * self.key_tail

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget.to_dict(),
            "bound": self.bound,
            "neighbours": self.neighbours,
            "sensitivity": self.sensitivity,
            "sigma": math.sqrt(self.sigma2),
            "key_tail": self.key_tail,
            "delta_tail": self.delta_tail,
            "threshold": self.tau,
        }


def universe_plan(
    options: dict[str, Any], n: int | None, share: float, bound: int, neighbours: str
) -> UniversePlan:
    """The plan of a selection at ``share`` of the budget in ``options`` (``n``: public
    under replace-one for the default delta ``1/n^2``; None under add/remove, not read)."""
    add_remove = check_neighbours(neighbours) == ADD_REMOVE
    s = check_bound(bound)
    budget = run_budget(options, None if add_remove else n, check_universe_share(share),
                        add_remove)  # fmt: skip
    l2 = universe_sensitivity(s, neighbours)
    sigma2 = discrete_gaussian_sigma2(budget.learn_rho, l2)
    key_tail = budget.delta_tail / s
    while s * key_tail > budget.delta_tail:  # s ids' tails within the selection's, in floats
        key_tail = math.nextafter(key_tail, 0.0)
    return UniversePlan(budget, s, neighbours, l2, float(sigma2), key_tail,
                        partition_threshold(sigma2, key_tail))  # fmt: skip


def bounded_counts(lines: CutLines, bound: int, rng: np.random.Generator) -> dict[str, int]:
    """How many users hold each item id after each user's distinct items are cut to at most
    ``bound`` of them, those of smallest keyed hash of the (user id, item id) pair, the key
    drawn from ``rng`` (:func:`~dpquery.data.raw_items.bounded_item_counts`): the
    selection's counts, exact (private). An empty id is no item. The same counts from the
    lines in one process and from their partitions on a cluster."""
    return lines.cut_counts(check_bound(bound), cut_key(rng))


@dataclass
class LearnedUniverse:
    """The item universe learned from a raw table and what it cost: the run's ``ledger``
    holds the selection's charge, ``release_ledger`` is its child for the release's share;
    ``labels`` names the released ids (the release's catalogue) and ``items`` the table's
    records over them (None when the lines are held on a cluster: they are cut there)."""

    plan: UniversePlan
    selection: Selection
    labels: ItemLabels
    items: ItemSets | None
    ledger: Ledger
    release_ledger: Ledger

    @property
    def outside(self) -> OutsideLedger:
        """The selection's tail, besides the ledger, and the run's whole budget."""
        b = self.plan.budget
        return OutsideLedger(self.plan.delta_tail, Budget.approx(b.epsilon, b.delta))

    def as_run(self, release: Release) -> Release:
        """``release`` (fitted on :attr:`release_ledger`) accounted as the whole run."""
        return replace(release, ledger=self.ledger, outside=self.outside)

    def to_dict(self) -> dict[str, Any]:
        """The publishable account of the selection: its parameters and how many ids it
        released (the ids are the catalogue written beside the output)."""
        return {
            "source": "learned from the data under differential privacy: a partition "
            "selection over the item ids, each user's items cut to a uniform random subset "
            "of at most s (docs/wide.md)",
            "share_of": "rho",
            **self.plan.to_dict(),
            "released": len(self.labels.items),
            "release_rho": self.release_ledger.budget.rho,
        }


def learn_universe(
    lines: CutLines, options: dict[str, Any], *, share: float, bound: int, neighbours: str,
    rng: np.random.Generator,
) -> LearnedUniverse:  # fmt: skip
    """The item universe of ``lines`` learned on a new ledger of the budget in ``options``
    (module docstring), drawn from ``rng`` (the run's one generator; the cut's key from a
    child of it, so that the release's draws do not depend on the table's size).
    Raises :class:`~dpquery.errors.DPQueryError` when no id reaches the threshold (nothing
    to release: said from the selection's output, post-processing), the ledger attached."""
    plan = universe_plan(options, lines.n, share, bound, neighbours)
    b = plan.budget
    ledger = Ledger(b.ledger_budget)
    stage = ledger.child(Budget.zcdp(b.learn_rho), UNIVERSE_STAGE)
    try:
        cut = bounded_counts(lines, plan.bound, make_rng(child_rng(rng)))
        counts: dict[Hashable, int] = {k: v for k, v in cut.items()}
        selection = select_partitions(
            counts, rho=b.learn_rho, delta_tail=plan.key_tail, rng=rng, ledger=stage,
            name=SELECTION, sensitivity=plan.sensitivity,
        )  # fmt: skip
        if not selection.released:
            raise DPQueryError(
                f"no item id's noisy count reached the selection's threshold ({plan.tau:,} "
                f"users, noise sd {math.sqrt(plan.sigma2):.3g}): there is no item to release; "
                "give the public catalogue (--item-list; item_list in Python), or raise the "
                "budget or the universe's share"
            )
    except BaseException as exc:
        attach_ledger(exc, ledger)
        raise
    labels = ItemLabels(tuple(str(k) for k in selection.released), lines.user_column,
                        lines.item_column)  # fmt: skip
    items = lines.over(labels.items)[0] if isinstance(lines, RawLines) else None
    release_ledger = ledger.child(Budget.zcdp(b.release_rho), RELEASE_STAGE)
    return LearnedUniverse(plan, selection, labels, items, ledger, release_ledger)


def on_all_items(
    lines: RawLines, labels: ItemLabels, released: ItemSets
) -> tuple[ItemSets, ItemSets]:
    """For the curator's evaluation (NOT private): the table's records over every id it
    holds (sorted), and the ``released`` records (over ``labels``' ids) in the same columns,
    so that the items the selection left out count as items the release never holds."""
    every = sorted({str(i) for i in lines.item_ids if i != ""} | set(labels.items))
    real, _ = lines.over(every)
    cols = pd.Index(every).get_indexer(list(labels.items))
    m = released.matrix.tocsr()
    matrix = sp.csr_array((m.data, cols[m.indices], m.indptr), shape=(released.n, len(every)))
    matrix.sort_indices()
    return real, ItemSets(matrix, released.weights)


__all__ = [
    "DEFAULT_UNIVERSE_BOUND", "DEFAULT_UNIVERSE_SHARE", "LearnedUniverse", "UniversePlan",
    "bounded_counts", "learn_universe", "on_all_items", "universe_plan", "universe_sensitivity",
]  # fmt: skip
