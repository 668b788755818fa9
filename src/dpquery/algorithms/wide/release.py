"""``WideRelease``: the sparse release as a :class:`~dpquery.algorithms.synthesizer.Synthesizer`.

It takes item data (:class:`~dpquery.data.items.ItemSets`, any scipy sparse matrix, or a
:class:`~dpquery.data.binary.BinaryData` of free bits) and returns item sets: no domain and no
workload are needed (``d`` is public; ``n`` is public under replace-one, and under add/remove
measured first and read only as that noisy count). Its plan lists the three discrete Gaussian
measurements of :mod:`dpquery.algorithms.wide.measure` (four where the top-up is planned),
with the budget converted to zCDP once (``budget_rho``) and shared among them; every charge
reaches the ledger before its draw, and the whole plan is checked first.
"""

from __future__ import annotations

import warnings
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
    ADD_REMOVE_HEAD_SHARES,
    BOUND_FIRST,
    BOUND_QUANTILE,
    BOUND_SHARE,
    MEASURABLE_SHARE,
    PROBE_SHARE,
    TOPUP_SHARES,
    HeadShares,
    Shares,
    SparseParameters,
    bound_grid,
    bound_quantile,
    family_threshold,
    head_keep_level,
    long_bounds,
    mode_charges,
    release_sparse,
    sparse_keep_level,
    top_up_pays,
)
from dpquery.algorithms.wide.core import measurable_share as core_share
from dpquery.data.binary import BinaryData
from dpquery.data.items import ItemSets
from dpquery.data.sample import systematic_counts
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Charge, Ledger, PureDP
from dpquery.privacy.budget import budget_rho
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N_SHARE, REPLACE_ONE, check_neighbours
from dpquery.queries import Workload
from dpquery.queries.counts import counts_elsewhere
from dpquery.rng import SeedLike

ItemData: TypeAlias = ItemSets | BinaryData | sp.sparray | sp.spmatrix

DEFAULT_BOUND = 32  # npm_words: at most 25 words a record, 99th percentile 19 (docs/wide.md)
DEFAULT_PAIR_BOUND = 8
# Under add/remove a record's pairs move the pair counts by sqrt(C(s2, 2)), not sqrt(2 C(s2, 2)):
# 10 head items keep every pair of a record of up to 10 head items at less than the noise of
# replace-one's 8 (sqrt 45 against sqrt 56). On npm_words a template of 10 head words shared
# by 1,265 records lost a third of its pairs to the cut at 8, and the fit's pool did not
# bring them back: the pair max. 12 measured a lower pair max but higher pair and triple
# means (docs/wide.md, "Beside PipelineDP").
ADD_REMOVE_PAIR_BOUND = 10
DEFAULT_HEAD = 300
DEFAULT_POOL = 200_000
# The head mode's number of picked items (tuned on the small shape, seeds 0-2, docs/wide.md).
DEFAULT_PICKS = 20
# Under add/remove (monotone picks, shrunk counts; tuned on the long-record shapes, data seeds
# 0-1, seeds 0-3, docs/wide.md "The head mode under add/remove").
ADD_REMOVE_PICKS = 35
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
# Under add/remove, the share of rho that measures n (sensitivity 1) before anything else. At
# epsilon 1 on the small shape (n = 700) its noise is about 5% of n; on npm_words 0.02%.
RECORDS_SHARE = 0.02


ADD_REMOVE_STATED = "unbounded DP (add or remove one record), n private"


class WideNoiseWarning(UserWarning):
    """Under add/remove, the release's own pre-fit check on the noisy n (:func:`noise_warning`):
    noise swamps the counts it can measure."""


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

    def privacy(self) -> dict[str, Any]:
        """:meth:`Release.privacy`, naming add/remove as the relation where it holds."""
        report = super().privacy()
        if self.parameters.get("neighbours") == ADD_REMOVE:
            report["neighbouring"] = ADD_REMOVE_STATED
        return report


@dataclass(frozen=True)
class WidePlan:
    """The budget, the release's public parameters and its three charges, in order. Under
    add/remove, ``count_rho`` measures ``n`` first (0 under replace-one), the parameters
    share the rest, and with ``head_mode="auto"`` their mode is chosen again on the noisy
    ``n`` (the plan's, on the ``n`` it was given, is a forecast; both modes spend the same
    ``rho``)."""

    budget: Budget
    parameters: SparseParameters
    count_rho: float = 0.0

    def charges(self) -> list[Charge]:
        """The charges in order: under add/remove the noisy record count first; in the mode
        "bound first", the bound's and the sparse mode's (the head mode's, taken instead where
        the drawn bound says so (:meth:`head_charges`), cost the same ``rho``)."""
        count = [Charge(measure.RECORDS, ZCDP(self.count_rho))] * (self.count_rho > 0)
        p = self.parameters
        bound = [Charge(measure.BOUND, PureDP(measure.bound_epsilon(p.bound_rho()), True))]
        return count + bound * (p.bound_rho() > 0) + mode_charges(p)

    def head_charges(self) -> list[Charge]:
        """In the mode "bound first", the charges after the bound where its draw takes the
        head mode (the probe's first where only the probe takes it; empty in the other
        modes)."""
        p = self.parameters
        if p.mode != BOUND_FIRST:
            return []
        probe = [Charge(measure.PROBE, ZCDP(p.probe_rho()))] * (not p.switch)
        return probe + mode_charges(p.head_branch())


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
        "neighbours",
    )  # fmt: skip

    bound: int | None = None  # None: min(DEFAULT_BOUND, d)
    pair_bound: int | None = None  # None: min(DEFAULT_PAIR_BOUND, s); add/remove 10 (long_bounds)
    head: int | None = None  # None: min(DEFAULT_HEAD, d)
    pool: int = DEFAULT_POOL
    seed: SeedLike = None
    # "auto": the head mode where an item must be kept by HEAD_MODE_SHARE of the records for its
    # cut count to stand out (public: from n, s and the budget), the sparse mode otherwise;
    # "on", "off".
    head_mode: str = "auto"
    # The relation the guarantee is for: "replace-one" (n public) or "add-remove" (n private:
    # measured first, every rule reads the noisy count, the output holds that many records).
    neighbours: str = REPLACE_ONE

    def plan(
        self, data: Any, workload: Workload | None = None, *, budget: Budget | None = None
    ) -> WidePlan:
        """Resolve the bounds against ``n`` and ``d`` and split ``rho``; a bad bound or
        relation is refused by name here, before anything is charged. Under add/remove ``n``
        chooses only the forecast mode (:class:`WidePlan`)."""
        n, d = int(data.n), int(data.d)
        neighbours = check_neighbours(self.neighbours)
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
        count_rho = RECORDS_SHARE * rho if neighbours == ADD_REMOVE else 0.0
        sparse = SparseParameters(rho - count_rho, s, s2, K, Shares(), self.pool,
                                  quantile=BOUND_QUANTILE, neighbours=neighbours)  # fmt: skip
        return WidePlan(whole, self.with_mode(sparse, n, d), count_rho)

    def with_mode(self, sparse: SparseParameters, n: int, d: int) -> SparseParameters:
        """The sparse mode's ``sparse`` parameters with the mode chosen on ``n`` records
        (``head_mode``; "auto" reads ``n``, the budget and the bounds only): the head mode
        (``picks`` items), the sparse mode, or "bound first" (the bound drawn first, the head
        mode where the drawn bound leaves the sparse mode's counts swamped or, under
        add/remove, where the probe after it says so: :func:`probe_bounds`). Under add/remove,
        where the noise is small against ``n`` (:func:`long_bounds`), the bound's grid and
        quantile and the default ``s2`` are the longer ones."""
        rho, relation = sparse.rho, sparse.neighbours
        default = ADD_REMOVE_PICKS if relation == ADD_REMOVE else DEFAULT_PICKS
        picks = min(default, d) if self.head is None else sparse.K
        if relation == ADD_REMOVE:
            sparse = replace(sparse, head_shares=ADD_REMOVE_HEAD_SHARES)
        long = long_bounds(rho, n, d, relation)  # add/remove's longer bounds, or not
        points = bound_grid(long)
        grid = () if self.bound is not None else tuple(g for g in points if g <= d) or (d,)
        if relation == ADD_REMOVE and grid and grid[-1] < d < points[-1]:
            # d itself, the bound that cuts nothing: where records can hold more items than
            # the grid's largest bound under d, the cut keeps the s items of least keyed hash,
            # the same s for identical records, so the items it drops lose every such record
            # (Jester5k: 1,473 of 5,000 users hold all 100 jokes; at s = 64 the cut counts
            # were off the records' own share by up to 0.21 n, docs/wide.md "Real item tables
            # from new sources"). Public (d); replace-one's grid is pinned.
            grid = (*grid, d)
        # the top-up's lengths measured where the noise leaves it something to correct
        pays = top_up_pays(rho, n, max(grid or (sparse.s,)), relation, drawn=bool(grid))
        sparse = replace(sparse, shares=TOPUP_SHARES if pays else Shares())
        if self.pair_bound is None:
            s2 = min(ADD_REMOVE_PAIR_BOUND if long else DEFAULT_PAIR_BOUND, sparse.s)
            sparse = replace(sparse, s2=s2)
        sparse = replace(sparse, quantile=bound_quantile(long))
        switch: tuple[int, ...] = ()
        probe: tuple[int, ...] = ()
        if self.head_mode == "on":
            mode = "head"
        elif self.head_mode == "off":
            mode = "sparse"
        elif self.bound is not None:  # the bound given: the mode from its planned noise
            sigma = measure.noise_sigma(Shares().items * rho, count_sensitivity(sparse.s, relation))
            mode = "head" if core_share(sigma, n) >= HEAD_MODE_SHARE else "sparse"
        else:  # the head mode where the bound drawn leaves the sparse mode's counts swamped
            rest = rho * (1 - BOUND_SHARE)
            switch = tuple(
                g for g in grid
                if core_share(measure.noise_sigma(Shares().items * rest,
                                                  count_sensitivity(g, relation)),
                              n) >= MEASURABLE_SHARE
            )  # fmt: skip
            probe = probe_bounds(grid, switch, rest, d, picks, relation, sparse.head_shares)
            mode = (
                "head" if switch == grid else "sparse" if not switch + probe else BOUND_FIRST
            )  # fmt: skip
        if mode == "head":
            return replace(sparse, K=picks, mode=mode, grid=grid, switch=(), picks=picks)
        return replace(sparse, mode=mode, grid=grid, switch=switch, probe=probe, picks=picks)

    def on_noisy_n(self, plan: WidePlan, n: int, d: int) -> WidePlan:
        """Under add/remove, ``plan`` on the noisy ``n`` (post-processing): the mode chosen
        again when ``head_mode`` is "auto", and the pre-fit check said
        (:class:`WideNoiseWarning`)."""
        plan = self.remode(plan, n, d, plan.parameters.rho, plan.count_rho)
        warning = noise_warning(plan, n, noisy=True)
        if warning is not None:
            warnings.warn(warning, WideNoiseWarning, stacklevel=2)
        return plan

    def after_drawn_n(self, plan: WidePlan, n: int, d: int) -> WidePlan:
        """Under add/remove, ``plan`` for a fit that drew the noisy ``n`` before this release
        (``auto``'s, :data:`~dpquery.privacy.neighbours.NOISY_N_SHARE` of ``rho``, charged
        first): no second count of the records; the parameters share what that count left,
        their mode chosen on its ``n``; the run reads that ``n`` (``Run.n``)."""
        rest = budget_rho(plan.budget) * (1 - NOISY_N_SHARE)
        return self.remode(plan, n, d, rest, count_rho=0.0)

    def remode(self, plan: WidePlan, n: int, d: int, rho: float, count_rho: float) -> WidePlan:
        """``plan`` with ``rho`` for its parameters and the mode chosen on ``n`` records."""
        K = min(DEFAULT_HEAD, d) if self.head is None else int(self.head)
        sparse = replace(plan.parameters, rho=rho, K=K, mode="sparse", grid=(), switch=(), probe=())
        return WidePlan(plan.budget, self.with_mode(sparse, n, d), count_rho)

    def reads_answers(self, plan: WidePlan) -> bool:
        """No: the run reads the items only through their counts."""
        return False

    def run(self, run: Run) -> Outcome:
        """The release on ``run``: its records are item sets."""
        data: Any = run.data
        if not counts_elsewhere(data):  # in this process: the whole table
            data = as_item_sets(data)
        plan, n = run.plan, run.n  # under auto and add/remove: the noisy n auto drew
        if plan.count_rho > 0:  # add/remove: n is private, every rule reads its noisy count
            n = measure.record_count(int(data.n), plan.count_rho, run.rng, run.ledger)
            plan = self.on_noisy_n(plan, n, int(data.d))
        matrix, info = release_sparse(data, plan.parameters, run.rng, run.ledger, n)
        parameters = {**info, "budget": run.plan.budget.to_dict()}
        if n is not None:  # add/remove: the noisy n, the output's size
            parameters.update(n=n, neighbours=ADD_REMOVE)
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
        check_neighbours(self.neighbours)
        return super().fit(items, workload, true_answers, ledger=ledger)  # type: ignore[arg-type]


def probe_bounds(
    grid: tuple[int, ...],
    switch: tuple[int, ...],
    rho: float,
    d: int,
    picks: int,
    neighbours: str,
    head_shares: HeadShares,
) -> tuple[int, ...]:
    """Under add/remove, the bounds of ``grid`` (not in ``switch``, which take the head mode
    at once) after whose draw the release probes the (picks + 1)-th largest item count
    (core.release_probed): those under ``d`` where the sparse mode's keep level
    (:func:`~dpquery.algorithms.wide.core.sparse_keep_level`, ``family_threshold(d)`` noise
    deviations of counts cut to ``s``, sensitivity ``sqrt(s)``) is above the head mode's
    (``family_threshold(picks)`` deviations of ``picks`` whole counts, ``sqrt(picks)``).
    An item's cut count is at most its whole count, so there every item the sparse mode can
    keep clears the head mode's level too; whether the sparse mode keeps more than the
    ``picks`` the head mode can hold is a fact of the data, so the probe asks it. Public:
    ``rho`` (after the bound), ``d``, the grid; the levels' ratio reads no ``n``. A bound of
    ``d`` or more cuts nothing: the sparse mode then counts every item whole, not the head
    mode's ``picks`` alone (Jester5k, 100 items of which 70 in half the records, docs/wide.md
    "Real item tables from new sources"). Replace-one's modes are unchanged (pinned)."""
    if neighbours != ADD_REMOVE:
        return ()
    head = head_keep_level(rho, picks, head_shares)
    return tuple(
        g for g in grid
        if g not in switch and g < d and sparse_keep_level(rho, d, g, neighbours) > head
    )  # fmt: skip


def measurable_share(plan: WidePlan, n: int) -> float:
    """The smallest share of the ``n`` records an item must be kept in (after the cut to
    ``s`` items) for its count to stand 3 noise standard deviations above 0: public, from
    the plan's noise scale and ``n`` (:func:`~dpquery.algorithms.wide.core.measurable_share`)."""
    r_items, _, _ = plan.parameters.rhos()
    p = plan.parameters
    sigma = measure.noise_sigma(r_items, count_sensitivity(p.s, p.neighbours))
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
        probe = (
            f"; if it is one of {list(p.probe)} (the sparse mode's keep level above the head "
            f"mode's), the (k + 1)-th largest item count (k = {p.picks}) is measured first "
            f"({PROBE_SHARE:.0%} of rho) and the head mode taken where it is below the sparse "
            "mode's keep level"
        ) if p.probe else ""  # fmt: skip
        return (
            f"with the bound s drawn privately from {list(p.grid)}, an item must be among the s "
            f"kept items of {100 * low:.3g}% (s = {p.grid[0]}) to {100 * high:.3g}% "
            f"(s = {p.grid[-1]}) of the records to stand 3 noise standard deviations out of "
            f"its cut count; the head mode where that is {MEASURABLE_SHARE:.0%} or more (the "
            f"sparse mode swamped): {where}{probe}"
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


def noise_warning(plan: WidePlan, n: int, noisy: bool = False) -> str | None:
    """The public pre-release check of the wide release: a message when
    :func:`measurable_share` is at least :data:`MEASURABLE_SHARE`. Then the noise of every
    item's count is as large as all but the most common items' counts, the estimates are
    shrunk to 0 and the release keeps only what stands out: few items, or none (every
    record empty, the all-zeros table): the release then keeps only the counts no noise draw
    reaches. Reads the plan and ``n`` only. In the head mode: a message when a picked item
    must be held by at least :data:`HEAD_MEASURABLE_SHARE` of the records to be kept.
    ``noisy``: ``n`` is the noisy count of add/remove, and the message says so."""
    p = plan.parameters
    if p.mode == BOUND_FIRST:  # the head mode's warning, where it is drawn
        warning = noise_warning(WidePlan(plan.budget, p.head_branch()), n, noisy)
        where = (
            f"if the bound drawn is one of {list(p.switch)} (the head mode)" if p.switch
            else f"if the bound drawn is one of {list(p.probe)} and the probe takes the head "
            "mode"
        )  # fmt: skip
        return None if warning is None else f"{where}: {warning}"
    records = f"about n = {n} records (a noisy count)" if noisy else f"n = {n} records"
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
            f"at this budget on {records}, {what} stand out of the noise of the "
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
        f"at this budget on {records}, {what} stand out of the noise of the item counts "
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
