"""``WideRelease``: the sparse release as a :class:`~dpquery.algorithms.synthesizer.Synthesizer`.

It takes item data (:class:`~dpquery.data.items.ItemSets`, any scipy sparse matrix, or a
:class:`~dpquery.data.binary.BinaryData` of free bits) and returns item sets: no domain and no
workload are needed (the ``d`` items and ``n`` are public sizes). Its plan lists the three
discrete Gaussian measurements of :mod:`dpquery.algorithms.wide.measure`, with the budget
converted to zCDP once (``budget_rho``) and shared among them; every charge reaches the ledger
before its draw, and the whole plan is checked first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, TypeAlias

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer, ZCDPBudget
from dpquery.algorithms.wide import measure
from dpquery.algorithms.wide.bound import check_bound, count_sensitivity, head_sensitivity
from dpquery.algorithms.wide.core import (
    BOUND_FIRST,
    BOUND_GRID,
    BOUND_QUANTILE,
    BOUND_SHARE,
    MEASURABLE_SHARE,
    Shares,
    SparseParameters,
    family_threshold,
    mode_charges,
    release_sparse,
)
from dpquery.algorithms.wide.core import measurable_share as core_share
from dpquery.data.binary import BinaryData
from dpquery.data.items import ItemSets
from dpquery.data.sample import systematic_counts
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Charge, Ledger, PureDP
from dpquery.privacy.budget import budget_rho
from dpquery.queries import Workload
from dpquery.queries.counts import counts_elsewhere
from dpquery.rng import SeedLike

ItemData: TypeAlias = ItemSets | BinaryData | sp.sparray | sp.spmatrix

DEFAULT_BOUND = 32  # npm_words: at most 25 words a record, 99th percentile 19 (docs/wide.md)
DEFAULT_PAIR_BOUND = 8
DEFAULT_HEAD = 300
DEFAULT_POOL = 200_000
# The head mode's number of picked items (tuned on the small shape, seeds 0-2, docs/wide.md).
DEFAULT_PICKS = 20
HEAD_MODES = ("auto", "on", "off")
# The plan takes the head mode where an item must be kept by at least this share of the records
# for its cut count to stand 3 noise standard deviations out (measurable_share). On the small
# recipe at epsilon 1 (seeds 0-2) the head mode was at or below the sparse mode on every
# measure at n = 2,800 (share 0.060) and 4,200 (0.041); at n = 7,000 (0.026) the sparse mode's
# 1-way mean was better, on the transposed small table (0.020) every measure (docs/wide.md).
# With the bound given (--bound); with the bound drawn privately, the head mode is taken where
# the drawn bound leaves the sparse mode swamped (MEASURABLE_SHARE, docs/wide.md).
HEAD_MODE_SHARE = 0.04
# In the head mode, the plan warns when only items in at least this share of the records
# can stand above every noise draw of the picked items' counts (head_threshold_share).
HEAD_MEASURABLE_SHARE = 0.5


def as_item_sets(data: ItemData) -> ItemSets:
    """Item data in any accepted form as :class:`ItemSets` (weights are refused: a private
    input counts each record once)."""
    if isinstance(data, ItemSets):
        items = data
    elif isinstance(data, BinaryData):
        items = ItemSets.from_binary(data)
    elif sp.issparse(data):
        items = ItemSets.from_sparse(data)
    else:
        raise DPQueryError(
            f"item data must be ItemSets, a scipy sparse matrix or BinaryData; got "
            f"{type(data).__name__}"
        )
    if items.weights is not None:
        raise DPQueryError("the private item data must be unweighted (one record, one person)")
    return items


@dataclass(frozen=True, eq=False)
class ItemRelease(Release):
    """A :class:`Release` whose records are item sets (sparse, possibly weighted)."""

    records: ItemSets  # type: ignore[assignment]  # item sets, not dense Records


@dataclass(frozen=True)
class WidePlan:
    """The budget, the release's public parameters and its three charges, in order."""

    budget: Budget
    parameters: SparseParameters

    def charges(self) -> list[Charge]:
        """The charges in order. In the mode "bound first", the bound's and the sparse
        mode's: the head mode's, taken instead where the drawn bound says so
        (:meth:`head_charges`), cost the same ``rho``."""
        p = self.parameters
        bound = [Charge(measure.BOUND, PureDP(measure.bound_epsilon(p.bound_rho()), True))]
        return bound * (p.bound_rho() > 0) + mode_charges(p)

    def head_charges(self) -> list[Charge]:
        """In the mode "bound first", the charges after the bound where its draw takes the
        head mode (empty in the other modes)."""
        p = self.parameters
        if p.mode != BOUND_FIRST:
            return []
        return mode_charges(p.after_bound(p.switch[0]))


@dataclass(kw_only=True, eq=False)
class WideRelease(Synthesizer, ZCDPBudget):
    """Sparse synthetic records fitted to noisy item counts, sizes and head pairs
    (``docs/wide.md``). ``bound`` is the public contribution bound ``s``, ``pair_bound`` the
    bound ``s2`` on head items for the pairs, ``head`` the number ``K`` of head items,
    ``pool`` the number of candidate head sets."""

    name: ClassVar[str] = "wide"
    release_type: ClassVar[type[Release]] = ItemRelease
    options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "rho", "bound", "pair_bound", "head", "pool", "head_mode",
    )  # fmt: skip

    bound: int | None = None  # None: min(DEFAULT_BOUND, d)
    pair_bound: int | None = None  # None: min(DEFAULT_PAIR_BOUND, s)
    head: int | None = None  # None: min(DEFAULT_HEAD, d)
    pool: int = DEFAULT_POOL
    seed: SeedLike = None
    # "auto": the head mode where an item must be kept by HEAD_MODE_SHARE of the records for its
    # cut count to stand out (public: from n, s and the budget), the sparse mode otherwise;
    # "on", "off".
    head_mode: str = "auto"

    def plan(
        self, data: Any, workload: Workload | None = None, *, budget: Budget | None = None
    ) -> WidePlan:
        """Resolve the bounds against the public ``n`` and ``d`` and split ``rho``; a bad
        bound is refused by name here, before anything is charged."""
        n, d = int(data.n), int(data.d)
        s = min(DEFAULT_BOUND, d) if self.bound is None else check_bound("bound", self.bound, d)
        s2 = (
            min(DEFAULT_PAIR_BOUND, s)
            if self.pair_bound is None
            else min(check_bound("pair_bound", self.pair_bound, d), s)
        )
        K = (
            min(DEFAULT_HEAD, d)
            if self.head is None
            else check_bound("head", self.head, d, "head items")
        )
        if isinstance(self.pool, bool) or not isinstance(self.pool, int) or self.pool < 1:
            raise DPQueryError(f"pool must be a positive number of head sets; got {self.pool!r}")
        whole = budget_of(**self.budget_keywords(budget, n))
        if whole.measure == "pure":
            raise DPQueryError(
                "wide measures with the discrete Gaussian (zCDP): give delta > 0 or rho, "
                "not a pure-DP budget"
            )
        rho = budget_rho(whole)
        if self.head_mode not in HEAD_MODES:
            raise DPQueryError(f"head_mode must be one of {HEAD_MODES}; got {self.head_mode!r}")
        picks = min(DEFAULT_PICKS, d) if self.head is None else K
        grid = tuple(g for g in BOUND_GRID if g <= d) or (d,)
        switch: tuple[int, ...] = ()
        if self.head_mode == "on":
            mode = "head"
        elif self.head_mode == "off":
            mode = "sparse"
        elif self.bound is not None:  # the bound given: the mode from its planned noise
            sigma = measure.noise_sigma(Shares().items * rho, count_sensitivity(s))
            mode = "head" if core_share(sigma, n) >= HEAD_MODE_SHARE else "sparse"
        else:  # the head mode where the bound drawn leaves the sparse mode's counts swamped
            rest = rho * (1 - BOUND_SHARE)
            switch = tuple(
                g for g in grid
                if core_share(measure.noise_sigma(Shares().items * rest,
                                                  count_sensitivity(g)), n) >= MEASURABLE_SHARE
            )  # fmt: skip
            mode = "head" if switch == grid else "sparse" if not switch else BOUND_FIRST
        if mode == "head":
            K, switch = picks, ()
        if self.bound is not None:
            grid = ()
        return WidePlan(
            whole,
            SparseParameters(rho, s, s2, K, Shares(), self.pool, mode, grid=grid,
                             quantile=BOUND_QUANTILE, switch=switch, picks=picks),
        )  # fmt: skip

    def reads_answers(self, plan: WidePlan) -> bool:
        """No: the run reads the items only through their counts."""
        return False

    def run(self, run: Run) -> Outcome:
        """The release on ``run``: its records are item sets."""
        data: Any = run.data
        if not counts_elsewhere(data):  # in this process: the whole table
            data = as_item_sets(data)
        matrix, info = release_sparse(data, run.plan.parameters, run.rng, run.ledger)
        parameters = {**info, "budget": run.plan.budget.to_dict()}
        return Outcome(ItemSets(matrix), [], parameters, {})  # type: ignore[arg-type]  # item sets

    def fit(
        self,
        data: ItemData,
        workload: Workload | None = None,
        true_answers: np.ndarray | None = None,
        *,
        ledger: Ledger | None = None,
    ) -> Release:
        """The release of item ``data`` by :meth:`Synthesizer.fit` (its ledger kept as
        ``ledger_``, also when the fit raises), with no workload: the measures are the
        items', the sizes' and the head pairs'. ``data`` may also be a partitioned dataset of
        item data (:meth:`dpquery.backends.PartitionedData.from_transactions`): its counts
        are then made on the cluster, two passes (``docs/dask.md``)."""
        items = data if counts_elsewhere(data) else as_item_sets(data)
        return super().fit(items, workload, true_answers, ledger=ledger)  # type: ignore[arg-type]


def measurable_share(plan: WidePlan, n: int) -> float:
    """The smallest share of the ``n`` records an item must be kept in (after the cut to
    ``s`` items) for its count to stand 3 noise standard deviations above 0: public, from
    the plan's noise scale and ``n`` (:func:`~dpquery.algorithms.wide.core.measurable_share`)."""
    r_items, _, _ = plan.parameters.rhos()
    sigma = measure.noise_sigma(r_items, count_sensitivity(plan.parameters.s))
    return core_share(sigma, n)


def bound_shares(plan: WidePlan, n: int) -> dict[int, float]:
    """With the bound drawn privately, :func:`measurable_share` of the sparse mode at each
    bound of the grid (public)."""
    p = replace(plan.parameters, mode="sparse", switch=())
    return {g: measurable_share(WidePlan(plan.budget, replace(p, s=g)), n) for g in p.grid}


def head_mode_rule(plan: WidePlan, n: int) -> str:
    """The plan's rule for its mode, in words (public: ``n``, ``s`` and the budget)."""
    p = plan.parameters
    if p.grid:
        shares = bound_shares(plan, n)
        low, high = shares[p.grid[0]], shares[p.grid[-1]]
        switch = [g for g in p.grid if shares[g] >= MEASURABLE_SHARE]
        where = (
            "at every bound of the grid" if switch == list(p.grid)
            else "at no bound of the grid" if not switch
            else f"if the bound drawn is one of {switch}, drawn first"
        )  # fmt: skip
        return (
            f"with the bound s drawn privately from {list(p.grid)}, an item must be among the s "
            f"kept items of {100 * low:.3g}% (s = {p.grid[0]}) to {100 * high:.3g}% "
            f"(s = {p.grid[-1]}) of the records to stand 3 noise standard deviations out of "
            f"its cut count; the head mode where that is {MEASURABLE_SHARE:.0%} or more (the "
            f"sparse mode swamped): {where}"
        )
    share = measurable_share(WidePlan(plan.budget, replace(p, mode="sparse")), n)
    said = (
        f"an item must be among the {plan.parameters.s} kept items of {100 * share:.3g}% of the "
        f"records to stand 3 noise standard deviations out of its cut count"
    )
    limit = f"the head mode from {HEAD_MODE_SHARE:.0%}"
    return f"{said}; {limit}"


def head_threshold_share(plan: WidePlan, n: int) -> float:
    """In the head mode, the smallest share of the ``n`` records a picked item must be held
    by for its noisy count to clear the level no noise draw of the ``k`` reaches
    (:func:`~dpquery.algorithms.wide.core.family_threshold`): public, from the plan."""
    p = plan.parameters
    _, r_counts, _ = p.rhos()
    sigma = measure.noise_sigma(r_counts, head_sensitivity(p.K))
    return family_threshold(p.K) * sigma / max(n, 1)


def noise_warning(plan: WidePlan, n: int) -> str | None:
    """The public pre-release check of the wide release: a message when
    :func:`measurable_share` is at least :data:`MEASURABLE_SHARE`. Then the noise of every
    item's count is as large as all but the most common items' counts, the estimates are
    shrunk to 0 and the release keeps only what stands out: few items, or none (every
    record empty, the all-zeros table): the release then keeps only the counts no noise draw
    reaches. Reads the plan and ``n`` only. In the head mode: a message when a picked item
    must be held by at least :data:`HEAD_MEASURABLE_SHARE` of the records to be kept."""
    if plan.parameters.mode == BOUND_FIRST:  # the head mode's warning, where it is drawn
        head = WidePlan(plan.budget, plan.parameters.after_bound(plan.parameters.switch[0]))
        warning = noise_warning(head, n)
        return None if warning is None else (
            f"if the bound drawn is one of {list(plan.parameters.switch)} (the head mode): "
            f"{warning}"
        )  # fmt: skip
    if plan.parameters.mode == "head":
        share = head_threshold_share(plan, n)
        if share < HEAD_MEASURABLE_SHARE:
            return None
        what = (
            "no item can"
            if share >= 1
            else f"only items held by {share:.0%} or more of the records can"
        )
        return (
            f"at this budget on n = {n} records, {what} stand out of the noise of the "
            f"{plan.parameters.K} commonest items' counts (the head mode, docs/wide.md): the "
            "release is expected to be nearly or wholly empty, no better than the all-zeros "
            "table; raise epsilon"
        )
    share = measurable_share(plan, n)
    if share < MEASURABLE_SHARE:
        return None
    s = plan.parameters.s
    what = (
        "no item can"
        if share >= 1
        else f"only items among the kept items of {share:.0%} or more of the records can"
    )
    return (
        f"at this budget on n = {n} records, {what} stand out of the noise of the item counts "
        f"(3 standard deviations, each record cut to {s} items; measured threshold "
        f"{MEASURABLE_SHARE:g}, docs/wide.md): the release keeps only those items and is "
        "expected to be nearly or wholly empty, no better than the all-zeros table; raise "
        "epsilon"
    )


def sample_items(released: ItemSets, rows: int | None, rng: np.random.Generator) -> ItemSets:
    """``rows`` records sampled from the release (systematic sampling by weight, random
    order), or the released records with their weights (``rows`` None)."""
    if rows is None:
        weights = released.weights if released.weights is not None else np.ones(released.n)
        return ItemSets(released.matrix, weights)
    if released.weights is None and rows == released.n:
        return released
    counts = systematic_counts(released.probabilities(), rows, rng)
    index = np.repeat(np.arange(released.n), counts)
    rng.shuffle(index)
    return ItemSets(released.matrix[index])
