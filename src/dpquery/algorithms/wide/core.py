"""The sparse release end to end: bound, measure, shrink, fit, assemble (``docs/wide.md``)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import betaln, gammaln

from dpquery.algorithms.wide import fit, measure, topup
from dpquery.algorithms.wide.bound import (
    count_sensitivity,
    head_sensitivity,
    histogram_sensitivity,
    pair_sensitivity,
)
from dpquery.algorithms.wide.counts import (
    AllItemCounts,
    HeadCounts,
    ItemCounts,
    LengthCounts,
    PickedPairs,
    PickedSizes,
)
from dpquery.algorithms.wide.kept import WideKeptWarning, kept_warning
from dpquery.algorithms.wide.kernels import assemble_records
from dpquery.algorithms.wide.shrink import shrink
from dpquery.algorithms.wide.topup import LENGTHS_SHARE
from dpquery.data.items import ItemSets
from dpquery.data.sample import systematic_counts
from dpquery.privacy import ZCDP, Charge, Ledger, PureDP
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.queries.counts import Together, count_records

# How loosely the fit follows each estimate: its noise variance times this (fractions of
# records). The noisy estimates are jointly infeasible (no distribution over the pool meets
# them all), so a fit at the bare variance chases the noise far from the base; 3000 on the
# pairs converges in a few hundred steps and measured best on npm_words (docs/wide.md).
ITEM_PENALTY = 1.0
# Under add/remove the fit follows the head's shrunk estimates this closely: its penalty is
# this times the noise variance (with ITEM_PENALTY's 1 the fit carried four flat-head items
# of noisy counts 0.11-0.33 of the records to 0.35-0.37 on the small shape; docs/wide.md).
HEAD_FIT_PENALTY = 0.1
# An item's count in the fitted records more than this many noise standard deviations above
# its noisy count is a fault of the fit (fit_excess): said by a WideFitWarning. The largest
# of d Gaussian draws is about sqrt(2 ln d) sigma (4.7 at d = 45,375), and shrinking a
# negative noisy count to 0 moves it that far at most.
FIT_EXCESS_LIMIT = 8.0
# Under add/remove how many noise deviations a head estimate may rise above its own noisy
# count (limited_translation, one-sided; inf: James-Stein's estimates as they are). A pick of
# a rare item, shrunk toward the picks' mean, is lifted up to about 2 sigma; caps of 0-1
# were tried and not kept (docs/wide.md, "A rare movie in a quarter to a third of the
# records"): at 1 the rare item's share did not fall on the tuning shapes, at 0.5 it fell
# but a flat head's release went above the all-zeros table on a seed; the two-sided cap
# (Efron and Morris's) at 0.5-1 kept overestimated head items high (small: 1-way max above
# zeros').
HEAD_RAISE_LIMIT = float("inf")
# Under add/remove how the head mode reads its histogram of picked items per record:
# "shrink" (the default), cell by cell (shrink.shrink); "beta-binomial", the law fitted to
# it (beta_binomial_sizes); "independent", the Poisson-binomial law of the picks' noisy
# counts, the histogram unread. Shrunk, the cells past the longest real head keep their
# positive noise draws (about 20 records each at 34 records of noise): on Last.fm's 1,892
# users x 17,632 artists the fitted records held heads of 25-35 picks where none has more
# than 24, the triples among the picks were answered 2.5x too high, and the triples' mean
# was 1.03-1.21x the all-zeros table's (9 of seeds 10-19). The law brought it to 1.02-1.04x and,
# with the picks' pairs measured (HeadShares.pairs), to 0.93-0.98x on seeds 10-12: the
# default, for no measure may be above the all-zeros table's (docs/wide.md, "Real item
# tables of other shapes").
HEAD_SIZES_LAW = "beta-binomial"
# The grid of the beta-binomial law's two shapes (alpha, beta), geometric.
BETA_GRID = np.geomspace(0.02, 200.0, 90)


# The swamped regime (swamped): an item must be among the kept items of at least this share of
# the records for its count to stand 3 noise standard deviations out. On the small shape
# (n = 700, d = 9,000, records of ~150 items) the share is 0.21 at epsilon 1 and 2.1 at
# epsilon 0.1, where no item's cut count reached 2 sigma; on npm_words (n = 196,708) 0.0008
# and 0.008, where the release beat the references (docs/wide.md, "Shapes").
MEASURABLE_SHARE = 0.1


def measurable_share(sigma_items: float, n: int) -> float:
    """The smallest share of the ``n`` records an item must be kept in (after the cut to
    ``s`` items) for its count to stand 3 noise standard deviations above 0 (public)."""
    return 3 * sigma_items / max(n, 1)


def swamped(sigma_items: float, n: int) -> bool:
    """Whether the plan's item noise swamps all but the commonest items (public)."""
    return measurable_share(sigma_items, n) >= MEASURABLE_SHARE


def family_threshold(d: int) -> float:
    """In noise standard deviations, a level that none of ``d`` Gaussian noise draws is
    expected to reach: ``sqrt(2 ln d) + 1`` (the largest is about ``sqrt(2 ln d)``)."""
    return math.sqrt(2 * math.log(max(d, 2))) + 1.0


def measurable(y: np.ndarray, sigma: float) -> bool:
    """Whether some of the noisy counts ``y`` (noise ``sigma``) stands out of the noise:
    reaches :func:`family_threshold` of ``y.size`` draws, which no draw of pure noise is
    expected to. Where none does, the nonparametric prior of :func:`shrink` is fitted to noise
    alone and puts a spike at its largest draw: on 5,000 records of which 4,500 are empty (no
    item's cut count above 1 sigma), one item held by 2 records came out in 76
    (``docs/wide.md``, "Shapes it was not tuned on"). Post-processing."""
    return bool(y.size) and bool((y >= family_threshold(y.size) * sigma).any())


# few_stand_out: the level (noise standard deviations) past which the draws of pure noise
# expected among the counts are set against the counts that stand out. Below 31,600 counts
# fewer than one draw is expected past it, and the rule is measurable's.
FEW_LEVEL = 4.0


def few_stand_out(y: np.ndarray, sigma: float) -> bool:
    """Whether fewer of the noisy counts ``y`` (noise ``sigma``) reach
    :func:`family_threshold` than pure-noise draws are expected past :data:`FEW_LEVEL`
    sigma among ``y.size`` (``y.size Q(4)``, at least 1: none reaching it is
    :func:`measurable`'s case). Then a count between that level and the threshold is more
    likely one of the noise draws than one of the few that stand out, yet the prior of
    :func:`shrink` puts a spike beside those few and lifts the largest noise draw to it:
    of 200,000 counts (50,000 records of 3 items, sigma 313 records) one cleared the
    threshold, and an item held by no record, its noisy count 4.97 sigma, was estimated
    at 1,525 records and released in 1,522, 1.19x the all-zeros table's 1-way max
    (``docs/wide.md``, "Shapes it was not tuned on"). Post-processing."""
    standing = int((y >= family_threshold(y.size) * sigma).sum())
    return standing < max(1.0, y.size * 0.5 * math.erfc(FEW_LEVEL / math.sqrt(2)))


class WideFitWarning(UserWarning):
    """The fitted records contradict the measurements they were fitted to (a fault)."""


PAIR_PENALTY = 3000.0
# The top-up (topup.py) corrects only the items whose noisy cut count stands this many noise
# standard deviations above 0: below it the correction would mostly scale noise.
TOPUP_SIGMAS = 3.0
# ... and whose deficit (its uncut count less its fitted count) is at least this many: a
# smaller correction is within the noise (npm_words at epsilon 0.1, docs/wide.md).
TOPUP_FLOOR = 2.0


@dataclass(frozen=True)
class Shares:
    """The parts of ``rho`` each measurement gets (they sum to 1)."""

    items: float = 0.5
    sizes: float = 0.05
    pairs: float = 0.45
    # The whole records' length histogram of the top-up (topup.py; 0: not measured).
    lengths: float = 0.0


# Under add/remove the sparse mode also measures the records' lengths, for the top-up of
# the records the cut shortened (topup.py), with LENGTHS_SHARE of rho taken from the pairs'.
TOPUP_SHARES = Shares(pairs=Shares().pairs - LENGTHS_SHARE, lengths=LENGTHS_SHARE)
# top_up_pays: the lengths are measured only where an item whose deficit is this share of the
# records could be topped up (TOPUP_FLOOR noise deviations at the largest bound). npm_words'
# first 3,000 records at epsilon 1 (6.3%) were topped up on no seed, netflix's recipe at
# n = 50,000 and epsilon 0.1 (3.5%) gained on every measure (docs/wide.md).
TOPUP_NOISE = 0.05


def top_up_pays(rho: float, n: int, s: int, neighbours: str, drawn: bool = True) -> bool:
    """Whether the sparse mode measures the whole records' lengths for the top-up
    (``topup.py``): under add/remove, where :data:`TOPUP_FLOOR` item-noise deviations at the
    bound ``s`` (the grid's largest where ``drawn``) are at most :data:`TOPUP_NOISE` of the
    ``n`` records. Public: ``rho`` (after ``n``'s share), ``n`` (under add/remove the noisy
    count, or the plan's forecast), ``s``."""
    if neighbours != ADD_REMOVE:
        return False
    rest = rho * (1 - BOUND_SHARE) if drawn else rho
    sigma = measure.noise_sigma(Shares().items * rest, count_sensitivity(s, neighbours))
    return TOPUP_FLOOR * sigma <= TOPUP_NOISE * max(n, 1)


# The share of rho that chooses the sparse mode's bound s when none is given (the record
# lengths' 0.9-quantile over BOUND_GRID; docs/wide.md).
BOUND_SHARE = 0.02
BOUND_GRID = (8, 16, 32, 64, 128)
BOUND_QUANTILE = 0.9
# Under add/remove a record moves each item count by 1 where replace-one moves two (squared
# L2 sensitivity s, not 2 s), so the bound can be about twice as long at the same noise: the
# 0.99-quantile, on a grid with points between 8 and 32 so that it is not rounded up to
# twice the longest records it must keep (docs/wide.md, "Beside PipelineDP": on npm_words,
# 99th percentile 19 words, s = 16 cut the commonest words' counts by up to 0.16% of the
# records, the 1-way max; s = 32 doubled the noise variance of the rare words'). Only where
# the noise is small against n (long_bounds): at epsilon 0.1 the cut's bias is below the
# noise, and the longer bounds' extra noise measured worse.
ADD_REMOVE_BOUND_GRID = (8, 12, 16, 20, 24, 32, 48, 64, 96, 128)
ADD_REMOVE_BOUND_QUANTILE = 0.99
# long_bounds: the largest of d item-noise draws at s = LONG_BOUNDS_AT, as a share of n, must
# be below this: about the 0.9-quantile's cut bias on npm_words' commonest words (0.0016).
# npm_words at epsilon 1: 0.00096 (d = 5,000), the longer bounds measured better; at 0.1:
# 0.0089, worse (docs/wide.md, "Tuned for add/remove").
LONG_BOUNDS_NOISE = 0.002
LONG_BOUNDS_AT = 16


def long_bounds(rho: float, n: int, d: int, neighbours: str) -> bool:
    """Whether the release takes add/remove's longer bounds (the 0.99-quantile on the finer
    grid, ``s2`` = 10): under add/remove, where the largest of ``d`` item-noise draws
    (:func:`family_threshold` sigma) at ``s = LONG_BOUNDS_AT`` is below
    :data:`LONG_BOUNDS_NOISE` of the ``n`` records. Public: ``rho`` (after ``n``'s share),
    ``n`` (under add/remove the noisy count, or the plan's forecast) and ``d``."""
    if neighbours != ADD_REMOVE:
        return False
    rho_items = Shares().items * (1 - BOUND_SHARE) * rho
    sigma = measure.noise_sigma(rho_items, count_sensitivity(LONG_BOUNDS_AT, neighbours))
    return family_threshold(d) * sigma < LONG_BOUNDS_NOISE * max(n, 1)


def bound_grid(long: bool) -> tuple[int, ...]:
    """The public grid the private bound ``s`` is drawn from (:func:`long_bounds`)."""
    return ADD_REMOVE_BOUND_GRID if long else BOUND_GRID


def bound_quantile(long: bool) -> float:
    """The record lengths' quantile the private bound ``s`` aims at (:func:`long_bounds`)."""
    return ADD_REMOVE_BOUND_QUANTILE if long else BOUND_QUANTILE


# The mode whose bound is drawn first, its mode chosen from the drawn bound (release.py).
BOUND_FIRST = "bound first"


@dataclass(frozen=True)
class HeadShares:
    """The head mode's parts of ``rho`` (they sum to 1): the picks, the picked items'
    counts, the histogram of picked items per record (tuned on the small shape, seeds 0-2,
    docs/wide.md)."""

    picks: float = 0.6
    counts: float = 0.3
    sizes: float = 0.1
    # The unpicked items' total (measure.tail_total), spread thin over them (tail_fill);
    # 0: not measured (replace-one's head mode, its releases pinned).
    tail: float = 0.0
    # Under add/remove, the picked items' pair counts (measure.head_pairs, HEAD_PAIR_BOUND),
    # which the fit then follows (release_head); 0: not measured (replace-one). Add/remove's
    # 0.12 (with the beta-binomial law) brought Last.fm's triples' mean under the all-zeros
    # table's (0.93-0.98x from 1.11-1.21x) and cost the generated long-record shapes 1-3% of
    # theirs, every run still under zeros' (docs/wide.md, "Real item tables of other shapes").
    pairs: float = 0.0


# Under add/remove the picks' utilities are monotone (measure.pick_head: each pick sees the
# counts through half the noise), so the head mode picks more items and keeps the picked
# counts by their empirical-Bayes estimates (release_head; tuned on the long-record shapes,
# data seeds 0-1, seeds 0-3, docs/wide.md "The head mode under add/remove"); 0.12 of the
# picks' 0.75 reads the picks' pairs (tuned on Last.fm and MovieLens 100K, seeds 0-3).
ADD_REMOVE_HEAD_SHARES = HeadShares(picks=0.63, counts=0.2, sizes=0.03, tail=0.02, pairs=0.12)
# The tail fill (add/remove's head mode, tail_fill): each record's unpicked items are counted
# up to TAIL_BOUND (the total's sensitivity; on the small shape 0.73 of the unpicked items
# lie within it), and each unpicked item is put in TAIL_FILL of the records' mean share of
# them, where that total stands TAIL_SIGMAS noise deviations out. A constant fill lowers the
# 1-way mean error where it is below about the unpicked shares' median (the best constant
# in absolute error); 0.4 of the cut mean is 0.2-0.3 of the whole mean on the generated
# shapes (their median 0.53-0.65 of it), safe also for a count law as skewed as a lognormal
# of median 3 and mean 13.5 records, a movie table's (docs/wide.md, "The tail fill").
TAIL_BOUND = 256
TAIL_FILL = 0.4
TAIL_SIGMAS = 3.0
# The head mode's pairs (HeadShares.pairs > 0, add/remove; measure.head_pairs): with
# HEAD_PAIR_BOUND b > 0 each record's picks are cut to b by the keyed hash before its pairs
# are counted (sensitivity sqrt(C(b, 2))); with 0 each record's pairs are weighted
# 1 / sqrt(C(a, 2)) for its a picks (L2 norm 1, sensitivity 1: per pair at least any cut's
# signal-to-noise; on Last.fm's 35 picks the cut to 8 with per-pair shrinkage measured worse,
# docs/wide.md). The fit follows the denoised pair estimates within HEAD_PAIR_PENALTY times
# their noise variance (0.1, the items' HEAD_FIT_PENALTY, measured no better).
HEAD_PAIR_BOUND = 0
HEAD_PAIR_PENALTY = 1.0
# Whether the fit follows the pairs only where spiked_denoise keeps some direction of them
# (else the pairs' estimates are the independent law's, and the fit is the default's).
HEAD_PAIRS_GATED = False
# The probe (add/remove, the bound drawn first; release.WideRelease.with_mode): the share of
# the rho left after the bound that measures the (picks + 1)-th largest whole item count
# (sensitivity 1), where the drawn bound puts the sparse mode's keep level above the head
# mode's. At epsilon 1 (delta 1e-9) its noise sd is 42 records, whatever n.
PROBE_SHARE = 0.02


def sparse_keep_level(rho: float, d: int, s: int, neighbours: str) -> float:
    """The sparse mode's keep level at the bound ``s``, in records: :func:`family_threshold`
    of ``d`` noise deviations of its cut item counts (``rho``: its share after the bound).
    Where no cut count reaches it the release keeps no item (:func:`measurable`)."""
    sigma = measure.noise_sigma(Shares().items * rho, count_sensitivity(s, neighbours))
    return family_threshold(d) * sigma


def head_keep_level(rho: float, picks: int, shares: HeadShares) -> float:
    """The head mode's keep level, in records: :func:`family_threshold` of ``picks`` noise
    deviations of its whole (uncut) counts, sensitivity ``sqrt(picks)`` (``rho``: its rho)."""
    sigma = measure.noise_sigma(shares.counts * rho, head_sensitivity(picks))
    return family_threshold(picks) * sigma


@dataclass(frozen=True)
class SparseParameters:
    """The public parameters of one release. ``mode`` is "sparse" (every item's cut count,
    the sizes, the head pairs) or "head" (the ``k`` commonest items picked and counted whole,
    chosen by the plan, release.py); in the head mode ``K`` is ``k`` and ``s``, ``s2`` are
    unused."""

    rho: float
    s: int
    s2: int
    K: int
    shares: Shares
    pool: int
    mode: str = "sparse"
    head_shares: HeadShares = HeadShares()
    # The sparse mode's private bound: when ``grid`` is given, ``s`` is chosen from it by the
    # exponential mechanism on the record lengths' ``quantile`` (measure.pick_bound), with
    # BOUND_SHARE of ``rho``; the three measurements share the rest. Empty: ``s`` is fixed.
    grid: tuple[int, ...] = ()
    quantile: float = 0.9
    # The relation the sensitivities are for (options.NEIGHBOURS); under add/remove ``rho``
    # is what is left after the noisy record count (release.WidePlan.count_rho).
    neighbours: str = REPLACE_ONE
    # Mode "bound first": the bound is drawn from ``grid`` first, then the head mode is taken
    # where the drawn ``s`` is one of ``switch`` (public, from the plan), with ``picks`` items
    # picked; the sparse mode otherwise. Both spend the same ``rho`` after the bound.
    switch: tuple[int, ...] = ()
    picks: int = 20
    # Mode "bound first" under add/remove: where the drawn ``s`` is one of ``probe``, the
    # (picks + 1)-th largest whole item count is measured first (PROBE_SHARE of the rho left
    # after the bound) and the head mode taken where it is below the sparse mode's keep level
    # at ``s`` (:meth:`after_probe`, release_sparse).
    probe: tuple[int, ...] = ()

    def bound_rho(self) -> float:
        """The ``rho`` of the private choice of ``s`` (0 when ``s`` is fixed)."""
        drawn = self.mode in ("sparse", BOUND_FIRST)
        return BOUND_SHARE * self.rho if self.grid and drawn else 0.0

    def rhos(self) -> tuple[float, float, float]:
        """The three measurements' ``rho``, in the order they are charged (the sparse
        mode's items, sizes, pairs; the head mode's picks, counts, sizes). In the mode
        "bound first", the sparse mode's (the head mode's are those of :meth:`after_bound`)."""
        if self.mode == "head":
            h = self.head_shares
            return (h.picks * self.rho, h.counts * self.rho, h.sizes * self.rho)
        rest = self.rho - self.bound_rho()
        return (self.shares.items * rest, self.shares.sizes * rest, self.shares.pairs * rest)

    def tail_rho(self) -> float:
        """The head mode's ``rho`` for the unpicked items' total (0: not measured)."""
        return self.head_shares.tail * self.rho if self.mode == "head" else 0.0

    def head_pairs_rho(self) -> float:
        """The head mode's ``rho`` for the picked items' pair counts (0: not measured)."""
        return self.head_shares.pairs * self.rho if self.mode == "head" else 0.0

    def lengths_rho(self) -> float:
        """The sparse mode's fourth measurement's ``rho``, the record lengths of the top-up
        (0 when it is not measured; the head mode measures none)."""
        if self.mode == "head":
            return 0.0
        return self.shares.lengths * (self.rho - self.bound_rho())

    def after_bound(self, s: int) -> SparseParameters:
        """The parameters of the mode "bound first" once the bound ``s`` is drawn: the head
        mode (``picks`` items, the ``rho`` left after the bound) where ``s`` is one of
        ``switch``, the sparse mode at the private ``s`` otherwise (its ``rhos`` unchanged)."""
        if self.mode != BOUND_FIRST:
            return self
        if s in self.switch:
            return replace(self, mode="head", rho=self.rho - self.bound_rho(), s=s,
                           s2=min(self.s2, s), K=self.picks, grid=(), switch=(),
                           probe=())  # fmt: skip
        return replace(self, mode="sparse", s=s, s2=min(self.s2, s), switch=(), probe=())

    def probe_rho(self) -> float:
        """The probe's ``rho`` where the drawn bound is one of ``probe`` (0 without one)."""
        if self.mode != BOUND_FIRST or not self.probe:
            return 0.0
        return PROBE_SHARE * (self.rho - self.bound_rho())

    def after_probe(self, s: int, head: bool) -> SparseParameters:
        """The parameters of the mode "bound first" once the bound ``s`` (one of ``probe``)
        is drawn and the probe measured: the head mode (``head``) or the sparse mode at ``s``,
        either on the ``rho`` left after the bound and the probe."""
        rest = self.rho - self.bound_rho() - self.probe_rho()
        common = {"rho": rest, "s": s, "s2": min(self.s2, s), "grid": (), "switch": (),
                  "probe": ()}  # fmt: skip
        if head:
            return replace(self, mode="head", K=self.picks, **common)  # type: ignore[arg-type]
        return replace(self, mode="sparse", **common)  # type: ignore[arg-type]

    def head_branch(self) -> SparseParameters:
        """In the mode "bound first", the head mode's parameters where the drawn bound takes
        it (after the bound alone, or after the probe where ``switch`` is empty)."""
        if self.switch:
            return self.after_bound(self.switch[0])
        return self.after_probe(self.probe[0], head=True)


def mode_charges(params: SparseParameters) -> list[Charge]:
    """The charges of the ``params``' measurements after the bound, in order (the head mode's
    ``K`` picks, counts and sizes; the sparse mode's items, sizes and pairs; the mode "bound
    first"'s are the sparse mode's, the head mode's costing the same ``rho``)."""
    if params.mode == "head":
        r_picks, r_counts, r_sizes = params.rhos()
        pick = PureDP(measure.pick_epsilon(r_picks, params.K), True)
        return [
            *[Charge(measure.PICKS, pick)] * params.K,
            Charge(measure.HEAD_COUNTS, ZCDP(r_counts)),
            Charge(measure.HEAD_SIZES, ZCDP(r_sizes)),
            *[Charge(measure.HEAD_TAIL, ZCDP(params.tail_rho()))] * (params.tail_rho() > 0),
            *[Charge(measure.HEAD_PAIRS, ZCDP(params.head_pairs_rho()))]
            * (params.head_pairs_rho() > 0),
        ]
    r_items, r_sizes, r_pairs = params.rhos()
    lengths = [Charge(measure.LENGTHS, ZCDP(params.lengths_rho()))]
    return [
        Charge(measure.ITEMS, ZCDP(r_items)),
        Charge(measure.SIZES, ZCDP(r_sizes)),
        Charge(measure.PAIRS, ZCDP(r_pairs)),
    ] + lengths * (params.lengths_rho() > 0)


def pair_baseline(counts: np.ndarray, cut_sizes: np.ndarray, s2: int) -> np.ndarray:
    """Expected pair counts among the head with the items independent given a record's head
    size: ``sum_a N_a C(min(a, s2), 2)`` pairs shared in proportion to ``q_j q_k`` (``q`` the
    counts' shares). ``cut_sizes[a]`` is the estimated number of records with ``a`` head items."""
    q = np.maximum(counts, 0.0)
    q = q / max(q.sum(), 1e-300)
    a = np.arange(cut_sizes.size)
    m = np.minimum(a, s2)
    total = float((cut_sizes * m * (m - 1) / 2).sum())
    outer = np.outer(q, q)
    np.fill_diagonal(outer, 0.0)
    return total * outer / max(outer.sum() / 2, 1e-300)


def pool_head_sizes(head_sizes: np.ndarray, s2: int, sigma_pairs: float) -> np.ndarray:
    """The head sizes the fit's pool is drawn with: ``head_sizes`` (records by number of
    head items), with every size above ``s2`` merged into ``s2`` where the records
    estimated to hold more than ``s2`` head items are fewer than ``3 sigma_pairs``
    (post-processing; the same array otherwise).

    The pair counts are measured over each record's ``s2`` head items, and a pair held by
    fewer records than 3 pair-noise standard deviations does not stand out of the noise:
    so nothing measured says which items those few long heads hold together. Drawn one
    item at a time from the shrunk pairs, a head of ``a`` items then carries ``C(a, 3)``
    triples, most of them not the data's (npm_words' first 3,000 records under add/remove:
    docs/wide.md, "Shapes"); merged into ``s2``, the fit's weights still meet the 1-way
    estimates with heads of at most ``s2`` items."""
    sizes = np.asarray(head_sizes, dtype=np.float64)
    if sizes.size <= s2 + 1 or sizes[s2 + 1 :].sum() >= 3 * sigma_pairs:
        return sizes
    return np.concatenate([sizes[:s2], [sizes[s2:].sum()]])


# A record of a head items holds C(a, 3) head triples. Where the release's own estimates
# expect no head triple in as many as this many records, every triple's count has median 0
# (a Poisson count of mean lambda is 0 with chance exp(-lambda), at least 1/2 while lambda
# <= ln 2), and a released triple costs the absolute error of a whole record where the
# all-zeros table's costs the triple's own small count (short_heads).
TRIPLE_MEDIAN = math.log(2.0)


def implied_triple_max(
    counts: np.ndarray, pairs: np.ndarray, head_sizes: np.ndarray, enough: float = math.inf
) -> float:
    """The largest number of records the release's estimates imply for any triple of head
    items (post-processing): the larger of two models, each of the head's estimated
    ``counts`` (``K``) and shrunk ``pairs`` (``K x K``, symmetric), with ``head_sizes[a]``
    records of ``a`` head items (``n`` in all):

    * the pool's own draw with the items independent given the head size,
      ``sum_a N_a a (a - 1) (a - 2) q_i q_j q_k`` at the three largest shares ``q`` of the
      counts (a triple among ``a`` items drawn in proportion to ``q``, small shares);
    * the pairs' Kirkwood superposition ``n c_ij c_jk c_ik / (c_i c_j c_k)`` (Kirkwood 1935;
      the triple frequency of a distribution fixed by its pairs, ``f_ijk = f_ij f_jk f_ik /
      (f_i f_j f_k)``), at most the triple's smallest pair, over every triple: where the
      measured pairs hold items together (a template of three items), it says so.

    Once a model implies ``enough`` records, that is returned without the rest."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    if c.sum() <= 0:
        return 0.0
    q = np.sort(c / c.sum())[::-1]
    a = np.arange(head_sizes.size, dtype=np.float64)
    falling = float((head_sizes * a * (a - 1) * (a - 2)).sum())
    independent = falling * float(np.prod(q[:3])) if q.size >= 3 else 0.0
    if independent >= enough:
        return independent
    n = float(head_sizes.sum())
    live = np.flatnonzero(c > 0)
    P = np.maximum(np.asarray(pairs, dtype=np.float64)[np.ix_(live, live)], 0.0)
    x = c[live]
    kirkwood = 0.0
    for i in range(live.size - 2):  # the triples i < j < k, one i at a time
        Pi = P[i, i + 1 :]
        Q = P[i + 1 :, i + 1 :]
        lam = n * Pi[:, None] * Pi[None, :] * Q / (x[i] * x[i + 1 :, None] * x[None, i + 1 :])
        lam = np.minimum(lam, np.minimum(np.minimum(Pi[:, None], Pi[None, :]), Q))
        kirkwood = max(kirkwood, float(np.triu(lam, 1).max(initial=0.0)))
        if kirkwood >= enough:
            break
    return max(independent, kirkwood)


def short_heads(
    head_sizes: np.ndarray, counts: np.ndarray, pairs: np.ndarray, n: int
) -> np.ndarray:
    """The head sizes the fit's pool is drawn with: ``head_sizes`` (records by number of head
    items), with every head of 3 items or more cut to 2 and the sizes tilted back to the
    head's total (:func:`match_head_total`), where :func:`implied_triple_max` is below
    :data:`TRIPLE_MEDIAN` (the same array otherwise). Post-processing.

    Under absolute error the best answer to a count is its median, 0 for a Poisson count of
    mean ``lambda <= ln 2`` (the rule of :func:`~dpquery.algorithms.wide.shrink.shrink`'s
    posterior medians), while records drawn to the estimates hold each triple about
    ``lambda`` times, each a whole record's error where the data's own triples (as rare,
    nearly never the same) are not met: on 50,000 records of 3 items over 200,000
    (``docs/wide.md``, "Shapes it was not tuned on") the release's triples among the 100
    commonest items were 1.8x the all-zeros table's mean error, and records of the right sizes
    drawn to the true shares would be 2.1x."""
    sizes = np.asarray(head_sizes, dtype=np.float64)
    if sizes.size <= 3 or sizes[3:].sum() <= 0 or (np.asarray(counts) > 0).sum() < 3:
        return sizes  # no long head, or no three items to draw one of (fit.head_pool)
    if implied_triple_max(counts, pairs, sizes, enough=TRIPLE_MEDIAN) >= TRIPLE_MEDIAN:
        return sizes
    cut = sizes[:3].copy()  # the records of 3 head items or more hold 2 of them
    cut[2] += sizes[3:].sum()
    total = float(np.maximum(counts, 0.0).sum())
    return match_head_total(cut[:, None], total, n)[:, 0]


def independent_sizes(head: float, tail: float, s: int) -> np.ndarray:
    """The ``(s + 1, s + 1)`` histogram of a record's (head, tail) items, as shares, where
    its items are independent: head and tail sizes Poisson of means ``head`` and ``tail``
    (the estimated counts over ``n``), cells past the bound (``a + b > s``) left out.
    Post-processing.

    The fallback where the noisy histogram is noise alone: shrunk, it kept the empty cell
    only, and :func:`match_head_total`'s tilt of its floor then met the head's total with
    a tenth of the records holding about 110 head items each (3,000 records of two disjoint
    communities at ``s`` = 128: 16,641 cells of noise 26): triples 1.8x the all-zeros
    table's mean error (``docs/wide.md``, "Shapes it was not tuned on")."""
    a = np.arange(s + 1, dtype=np.float64)
    head_pmf = poisson_pmf(a, max(head, 0.0))
    tail_pmf = poisson_pmf(a, max(tail, 0.0))
    out = np.outer(head_pmf, tail_pmf)
    out[a[:, None] + a[None, :] > s] = 0.0
    return out / max(out.sum(), 1e-300)


def beta_binomial_sizes(hist: np.ndarray, n: int, grid: np.ndarray | None = None) -> np.ndarray:
    """The histogram of picked items per record (``hist``: noisy, cells ``0..k``) read as
    ``n`` records whose numbers of picks are beta-binomial: each record holds each of the
    ``k`` picks with its own chance ``q ~ Beta(alpha, beta)``. The shapes are those of
    least squares to ``hist`` over a geometric grid (``grid``, default :data:`BETA_GRID`,
    for both; the noise is the same in every cell, so least squares is its Gaussian
    likelihood). Post-processing: reads the noisy histogram and the noisy ``n``.

    Why a law and not the cells: records differ in how much they hold (heavy and light
    users: overdispersion, which the independent Poisson-binomial law misses), but a
    histogram's far cells, past the longest real head, hold nothing but noise, and the
    shrunk cells keep its positive draws there. Those records of many picks weigh on the
    fitted pairs and triples as ``a^2`` and ``a^3``: on Last.fm (1,892 records, 35 picks,
    noise 34 records a cell) the shrunk cells put the third factorial moment of the heads
    at 1.9x the truth (median of 40 noise draws), the beta-binomial at 1.1x; on the
    generated shapes, whose heads come from groups of items, the law is lower than the
    truth (0.6-0.8x), never far above it (``docs/wide.md``)."""
    y = np.asarray(hist, dtype=np.float64)
    k = y.size - 1
    if k < 1 or n <= 0:
        return np.maximum(y, 0.0)
    g = BETA_GRID if grid is None else np.asarray(grid, dtype=np.float64)
    a = np.arange(k + 1, dtype=np.float64)
    choose = gammaln(k + 1) - gammaln(a + 1) - gammaln(k - a + 1)
    best, law = math.inf, np.zeros_like(y)
    for alpha in g:  # one row of the grid at a time: (beta, cell) arrays
        logp = choose[None, :] + betaln(a[None, :] + alpha, k - a[None, :] + g[:, None])
        pmf = n * np.exp(logp - betaln(alpha, g)[:, None])
        sse = ((pmf - y[None, :]) ** 2).sum(axis=1)
        j = int(np.argmin(sse))
        if sse[j] < best:
            best, law = float(sse[j]), pmf[j]
    return law


def poisson_binomial(p: np.ndarray) -> np.ndarray:
    """The law of the number of independent events of chances ``p`` that happen (the
    Poisson-binomial law, ``p.size + 1`` cells), by one convolution per event."""
    out = np.zeros(p.size + 1)
    out[0] = 1.0
    for i, q in enumerate(np.clip(p, 0.0, 1.0)):
        out[1 : i + 2] = out[1 : i + 2] * (1 - q) + out[: i + 1] * q
        out[0] *= 1 - q
    return out


def poisson_pmf(k: np.ndarray, mean: float) -> np.ndarray:
    """The Poisson probabilities of ``k`` (``mean`` 0: all at 0), in logs (no overflow)."""
    if mean <= 0:
        return (k == 0).astype(np.float64)
    return np.exp(k * math.log(mean) - mean - gammaln(k + 1))


def match_head_total(sizes: np.ndarray, total: float, n: int) -> np.ndarray:
    """The ``(a, b)`` size histogram (``n`` records) tilted along ``a`` so that the records
    hold ``total`` head items in all: ``N_ab exp(lambda a)``, rescaled to ``n``, the
    distribution nearest the histogram in KL divergence with that mean. When the histogram
    has no record on the far side of the mean, cells ``(a, 0)`` for every ``a`` get a floor
    of ``n / 1000`` records first, so the tilt can reach it. Post-processing."""
    A = sizes.shape[0]
    a = np.arange(A, dtype=np.float64)
    mean = min(max(total / max(n, 1), 0.0), A - 1.0)
    rows = sizes.sum(axis=1)
    held = np.flatnonzero(rows > 0)
    if held.size == 0 or not held[0] <= mean <= held[-1] or held[0] == held[-1] != mean:
        sizes = sizes.copy()
        sizes[:, 0] += n / 1000 / A
        rows = sizes.sum(axis=1)
    if abs(float((rows * a).sum() / rows.sum()) - mean) < 1e-9 * max(mean, 1.0):
        return sizes * (n / sizes.sum())

    def mean_at(lam: float) -> float:
        w = np.log(np.maximum(rows, 1e-300)) + lam * a
        w = np.exp(w - w.max()) * (rows > 0)
        return float((w * a).sum() / w.sum())

    lo, hi = -50.0, 50.0  # bisection: the tilted mean grows with lambda
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_at(mid) < mean else (lo, mid)
    lam = (lo + hi) / 2
    scale = np.exp(lam * a - (lam * a).max())
    out = sizes * scale[:, None]
    return out * (n / out.sum())


def release_sparse(
    data: ItemSets | Any,
    params: SparseParameters,
    rng: np.random.Generator,
    ledger: Ledger,
    n: int | None = None,
) -> tuple[sp.csr_array, dict[str, object]]:
    """``n`` synthetic records (an ``n x d`` CSR 0/1 matrix) from the private ``data``: the
    whole table as :class:`ItemSets`, or a partitioned dataset counted on its workers
    (:mod:`dpquery.algorithms.wide.counts`). Every charge goes to ``ledger`` before its draw,
    and each measurement's exact counts are complete before its charge. ``n`` is the number
    of records every rule reads: ``data.n`` (None; public under replace-one), or under
    add/remove the noisy count already drawn."""
    if params.mode == "head":
        return release_head(data, params, rng, ledger, n)
    n, d = int(data.n) if n is None else n, int(data.d)
    s, s2 = params.s, params.s2
    nb = params.neighbours
    r_items, r_sizes, r_pairs = params.rhos()
    key = int(rng.integers(2**63))  # the truncation's hash key: one draw per run
    if params.bound_rho() > 0:  # 0. the bound, from the record lengths (public grid)
        grid = np.asarray(params.grid, dtype=np.int64)
        [below] = count_records(data, LengthCounts(grid))
        s = measure.pick_bound(below, grid, params.quantile, n, params.bound_rho(), rng, ledger)
        s2 = min(s2, s)
        if params.mode == BOUND_FIRST and s in params.switch:
            # The drawn bound says the sparse mode's cut counts are swamped: the head mode,
            # on what is left of rho (the mode is a function of a noisy output). Its charges
            # cost the sparse mode's rho, which the plan checked; checked again as charged.
            head_params = params.after_bound(s)
            ledger.check(mode_charges(head_params))
            matrix, head_info = release_head(data, head_params, rng, ledger, n)
            return matrix, {**head_info, "s": s, "s_private": True, "bound_first": True}
        if params.mode == BOUND_FIRST and s in params.probe:
            return release_probed(data, params, s, rng, ledger, n)

    # 1. every item's count
    [item_cells] = count_records(data, ItemCounts(key, s, d))
    y = measure.item_counts(item_cells, s, r_items, rng, ledger, nb).astype(np.float64)
    K = min(params.K, d)
    head = np.sort(np.argsort(-y, kind="stable")[:K])  # public: chosen from noisy counts
    # 2. (head, tail) sizes, 3. head pairs: counted given the head, a noisy output's function;
    # 4. the whole records' lengths (no cut), for the top-up, at edges given s: in the same
    # pass (their counts exact, each charged and drawn in the order below)
    r_lengths = params.lengths_rho()
    counter = HeadCounts(key, s, s2, head)
    if r_lengths > 0:
        edges = topup.length_edges(d, s)
        size_cells, pair_cells, below = count_records(
            data, Together((counter, LengthCounts(edges)))
        )
    else:
        size_cells, pair_cells = count_records(data, counter)
    hist = measure.size_histogram(size_cells, s, r_sizes, rng, ledger, nb).astype(np.float64)
    pairs = measure.pair_counts(pair_cells, K, s2, r_pairs, rng, ledger, nb).astype(np.float64)
    if r_lengths > 0:
        cells = np.diff(np.concatenate([[0], below]))
        lengths = measure.record_lengths(cells, r_lengths, rng, ledger, nb).astype(np.float64)
    if hasattr(data, "forget"):  # the data's last read: the workers free their partitions
        data.forget()

    # post-processing from here on
    sigma_items = measure.noise_sigma(r_items, count_sensitivity(s, nb))
    sigma_sizes = measure.noise_sigma(r_sizes, histogram_sensitivity(nb))
    sigma_pairs = measure.noise_sigma(r_pairs, pair_sensitivity(s2, nb))
    c = shrink(y, sigma_items)
    level = family_threshold(d) * sigma_items  # the count no noise draw reaches
    cut = swamped(sigma_items, n) or not measurable(y, sigma_items) or few_stand_out(y, sigma_items)
    if cut:
        # Noise as large as all but the commonest items' counts (or, whatever the plan
        # said, no count stands out of it, or fewer than the noise draws expected past 4
        # sigma): the prior fitted to the noisy counts is mostly the noise's, and the
        # largest of d noise draws (about sqrt(2 ln d) sigma) can pass for an item. Keep
        # only counts no noise draw reaches.
        c[y < level] = 0.0
    said = say_kept(int((c > 0).sum()), y, level, sigma_items, n)
    sizes = shrink(hist.ravel(), sigma_sizes).reshape(hist.shape)
    if not measurable(hist.ravel(), sigma_sizes):
        # no cell of the (head, tail) sizes stands out (s^2 cells of noise on few records):
        # the items' own counts say how many each record holds, as if independent
        head_total = float(c[head].sum())
        sizes = independent_sizes(head_total / n, (float(c.sum()) - head_total) / n, s)
    if sizes.sum() <= 0:
        sizes[0, 0] = 1.0
    sizes *= n / sizes.sum()
    # The head items the records hold in all: the head's counts say so with noise
    # sigma sqrt(K), the histogram's (s + 1)^2 cells with noise in every cell. Where they
    # disagree (small n: the histogram is mostly noise, shrunk to a few cells), the counts
    # win, or the pool is drawn with more head items than the counts hold and every
    # candidate carries the few items estimated above 0 (docs/wide.md, "Shapes").
    sizes = match_head_total(sizes, float(c[head].sum()), n)
    head_sizes = sizes.sum(axis=1)  # records by number of head items
    center = pair_baseline(c[head], head_sizes, s2)
    j, k = np.triu_indices(K, 1)
    dev = shrink(pairs[j, k], sigma_pairs, center=center[j, k], nonnegative=False)
    cap = np.minimum(c[head][j], c[head][k])
    T = np.zeros((K, K))
    T[j, k] = np.clip(dev, 0.0, cap)
    T[k, j] = T[j, k]

    # Under add/remove a few noisy long heads are drawn at most s2 long (pool_head_sizes);
    # replace-one's pool is drawn from the sizes as they are (its releases are pinned).
    pool_sizes = pool_head_sizes(head_sizes, s2, sigma_pairs) if nb == ADD_REMOVE else head_sizes
    kept_pairs = (c[head][j] > 0) & (c[head][k] > 0)
    if cut and kept_pairs.any() and not measurable(pairs[j, k][kept_pairs], sigma_pairs):
        # Only the counts no noise draw reaches are kept, and no pair of them stands out of
        # its noise: nothing measured says which go together, and the few items' product
        # can be far above their pairs (records of 3 items of 200,000: the pairs' mean
        # 1.009x the all-zeros table's, docs/wide.md). No record holds two of them.
        T[:] = 0.0
        pool_sizes = np.concatenate([pool_sizes[:1], [pool_sizes[1:].sum()]])
    # Under both: where no head triple is implied in ln 2 records, none is drawn (short_heads;
    # replace-one's pinned releases imply more).
    pool_sizes = short_heads(pool_sizes, c[head], T, n)
    pool, base = fit.head_pool(c[head], T, pool_sizes / n, params.pool, rng)
    A = fit.pool_features(pool, s2)  # never stored: kernels.py
    target = np.zeros(A.shape[1])
    penalty = np.zeros(A.shape[1])
    target[:K] = c[head] / n
    penalty[:K] = ITEM_PENALTY * (sigma_items / n) ** 2
    target[K + j * K + k] = T[j, k] / n
    penalty[K + j * K + k] = PAIR_PENALTY * (sigma_pairs / n) ** 2
    p = fit.maxent_weights(A, base, target, penalty)

    heads = draw_records(pool, p, n, rng)
    a = np.diff(heads.indptr)
    # tail slots: b from the size histogram given a, then matched to the tail's total
    tail_items = np.setdiff1d(np.arange(d), head)
    tail_total = round(c[tail_items].sum())
    tail_counts = fit.integer_counts(c[tail_items], tail_total, rng)
    slots = np.zeros(n, dtype=np.int64)
    for size in np.unique(a):
        who = np.flatnonzero(a == size)
        row = sizes[min(size, s)]
        if row.sum() <= 0:
            continue
        slots[who] = rng.choice(s + 1, size=who.size, p=row / row.sum())
    slots = _match_total(slots, int(tail_counts.sum()), rng)
    owner, token = fit.deal_tail(slots, tail_counts, rng)
    out = assemble_records(heads, head, owner, tail_items[token], d)  # kernels.py
    del heads, owner, token
    excess = fit_excess(out, y, sigma_items)
    if excess > FIT_EXCESS_LIMIT:
        warnings.warn(
            f"the fitted records hold an item {excess:.1f} noise standard deviations more "
            f"often than its noisy count (limit {FIT_EXCESS_LIMIT:g}): a fault of the fit, "
            "please report it",
            WideFitWarning,
            stacklevel=2,
        )
    # checked above as fitted, to the cut counts; then the records that reached the cut
    # are topped up (topup.py)
    topped: dict[str, object] = {}
    if r_lengths > 0:
        sigma_lengths = measure.noise_sigma(r_lengths, histogram_sensitivity(nb))
        estimate = topup.length_estimate(lengths, family_threshold(lengths.size) * sigma_lengths)
        eligible = y >= TOPUP_SIGMAS * sigma_items
        out, added = topup.top_up(out, c, estimate * (n / max(estimate.sum(), 1.0)), edges,
                                  s, eligible, rng, TOPUP_FLOOR * sigma_items)  # fmt: skip
        topped = {"sigma_lengths": sigma_lengths, **added}
    info: dict[str, object] = {
        "mode": "sparse", "s": s, "s2": s2, "s_private": params.bound_rho() > 0, "K": K,
        "bound_first": params.mode == BOUND_FIRST,
        "pool": int(pool.shape[0]),
        "sigma_items": sigma_items, "sigma_sizes": sigma_sizes, "sigma_pairs": sigma_pairs,
        "items_kept": int((c > 0).sum()), "fit_excess_sigmas": excess, **topped, **said,
    }  # fmt: skip
    return out, info


def say_kept(
    kept: int, y: np.ndarray, level: float, sigma: float, n: int, filled: bool = False
) -> dict[str, str]:
    """The measured check (:func:`~dpquery.algorithms.wide.kept.kept_warning`), warned before
    the fit where it fires, and its message as the release's parameter ``kept_warning``."""
    message = kept_warning(kept, y, level, sigma, n, filled)
    if message is None:
        return {}
    warnings.warn(message, WideKeptWarning, stacklevel=3)
    return {"kept_warning": message}


def release_probed(
    data: ItemSets | Any,
    params: SparseParameters,
    s: int,
    rng: np.random.Generator,
    ledger: Ledger,
    n: int | None = None,
) -> tuple[sp.csr_array, dict[str, object]]:
    """The mode "bound first" after a drawn bound ``s`` that is one of ``params.probe``: the
    (picks + 1)-th largest whole item count measured (sensitivity 1,
    :func:`measure.order_count`), then the head mode where it is below the sparse mode's
    keep level at ``s`` (:func:`sparse_keep_level`), the sparse mode at ``s`` otherwise, on
    the ``rho`` left (the mode a function of noisy outputs). An item's cut count is at most
    its whole count, so there at most ``picks`` items can clear the sparse mode's level, and
    the head mode, whose own level is lower (``probe``'s public condition), can keep each of
    them and the items between the two levels. ``n`` as in :func:`release_sparse`."""
    d = int(data.d)
    rank = params.picks + 1
    [exact] = count_records(data, AllItemCounts(d))
    probe = measure.order_count(exact, rank, params.probe_rho(), rng, ledger)
    sparse = params.after_probe(s, head=False)
    level = sparse_keep_level(sparse.rho, d, s, params.neighbours)
    after = params.after_probe(s, head=probe < level)
    ledger.check(mode_charges(after))  # the plan checked their rho; checked again as charged
    if after.mode == "head":  # the whole counts just made: no second pass over the data
        matrix, info = release_head(data, after, rng, ledger, n, exact)
    else:
        matrix, info = release_sparse(data, after, rng, ledger, n)
    return matrix, {**info, "s": s, "s_private": True, "bound_first": True,
                    "probe": probe, "probe_level": level}  # fmt: skip


def release_head(
    data: ItemSets | Any,
    params: SparseParameters,
    rng: np.random.Generator,
    ledger: Ledger,
    n: int | None = None,
    exact: np.ndarray | None = None,
) -> tuple[sp.csr_array, dict[str, object]]:
    """The head mode (``docs/wide.md``, "Shapes"): where the noise of the cut item counts
    swamps them (few records, long records), the ``k`` commonest items are picked by the
    exponential mechanism on the exact counts, counted whole (no cut: sensitivity
    ``sqrt(k)``), and the histogram of picked items per record measured; the records are
    fitted to those alone (every other item is left out: its count is not measured). A
    picked item is kept only where its noisy count stands above every noise draw of the
    ``k`` (:func:`family_threshold`), so that a pick of a rare item releases nothing; under
    add/remove the kept counts are shrunk (:func:`head_estimates`) and, where the head
    shares give the tail a part of ``rho``, the unpicked items' total is measured and spread
    over them (:func:`tail_share`, :func:`tail_fill`). ``n`` as in :func:`release_sparse`;
    ``exact``: the whole item counts where the caller has made them (:func:`release_probed`)."""
    n, d = int(data.n) if n is None else n, int(data.d)
    k = min(params.K, d)
    r_picks, r_counts, r_sizes = params.rhos()
    if exact is None:
        [exact] = count_records(data, AllItemCounts(d))
    picked = measure.pick_head(exact, k, r_picks, rng, ledger, params.neighbours)
    y = measure.head_counts(exact[picked], r_counts, rng, ledger).astype(np.float64)
    r_tail = params.tail_rho()
    bound = TAIL_BOUND if r_tail > 0 else 0
    r_pairs = params.head_pairs_rho()
    # Without a cut the picks' pairs need no key: their counter is known with the sizes'
    # and rides on their pass (each vector the one its counter makes alone)
    together = r_pairs > 0 and HEAD_PAIR_BOUND == 0
    if together:
        *sized, pair_cells = count_records(
            data, Together((PickedSizes(picked, bound), PickedPairs(picked, 0, 0)))
        )
        size_cells, *tail_cells = sized
    else:
        size_cells, *tail_cells = count_records(data, PickedSizes(picked, bound))
    hist = measure.head_sizes(size_cells, r_sizes, rng, ledger, params.neighbours)
    hist = hist.astype(np.float64)
    tail = measure.tail_total(tail_cells[0], bound, r_tail, rng, ledger) if bound else 0.0
    if r_pairs > 0:  # the picks' pairs (measure.head_pairs)
        if not together:
            # the cut's hash key, drawn only where the pairs are measured (pinned bytes)
            key = int(rng.integers(2**63))
            [pair_cells] = count_records(data, PickedPairs(picked, HEAD_PAIR_BOUND, key))
        noisy_pairs = measure.head_pairs(pair_cells, k, HEAD_PAIR_BOUND, r_pairs, rng, ledger)

    # post-processing from here on
    sigma = measure.noise_sigma(r_counts, head_sensitivity(k))
    sigma_sizes = measure.noise_sigma(r_sizes, histogram_sensitivity(params.neighbours))
    c, kept = head_estimates(y, sigma, n, k, shrunk=params.neighbours == ADD_REMOVE)
    head = picked[kept]
    c = c[kept]
    K = head.size
    share = 0.0
    if bound:  # the unpicked items' fill (tail_fill, after the fit)
        share = tail_share(tail, measure.noise_sigma(r_tail, float(bound)), n, d - k)
    said = say_kept(K, y, family_threshold(k) * sigma, sigma, n, share > 0)
    if K == 0:
        out = sp.csr_array((n, d), dtype=np.uint8)
    else:
        independent = n * poisson_binomial(np.clip(y, 0.0, n) / max(n, 1))
        if params.neighbours == ADD_REMOVE and HEAD_SIZES_LAW == "beta-binomial":
            sizes = beta_binomial_sizes(hist, n)
        elif params.neighbours == ADD_REMOVE and HEAD_SIZES_LAW == "independent":
            sizes = independent.copy()
        else:
            sizes = shrink(hist, sigma_sizes)
        if params.neighbours == REPLACE_ONE and not measurable(
            np.abs(hist - independent), sigma_sizes
        ):
            # No cell of the picked-size histogram departs from the picks' independent law
            # by more than a noise draw: its far cells are the noise's, and shrunk toward
            # 0 they put heads of 7-12 picks in 5% of the records (records of 40 items:
            # the triples' mean 1.006x the all-zeros table's). Under add/remove (35 picks,
            # the histogram 3% of rho) real departures did not stand out, and the law
            # raised the triples' mean of long records by up to 4% (docs/wide.md).
            sizes = independent
        if sizes.sum() <= 0:
            sizes[0] = 1.0
        sizes = match_head_total(sizes[:, None] * (n / sizes.sum()), float(c.sum()), n)[:, 0]
        factor = HEAD_FIT_PENALTY if params.neighbours == ADD_REMOVE else ITEM_PENALTY
        structured = False
        if r_pairs > 0:
            sigma_pairs = measure.head_pairs_sigma(r_pairs, HEAD_PAIR_BOUND)
            T, scale, structured = head_pair_estimates(
                noisy_pairs[np.ix_(kept, kept)], c, sizes, sigma_pairs
            )
            # HEAD_PAIRS_GATED: where no direction of the pairs stands out of their noise,
            # the estimates are the independent law's, and the fit is the default's
            structured = structured or not HEAD_PAIRS_GATED
        if structured:
            pool, base = fit.head_pool(c, T * scale, sizes / n, params.pool, rng)
            weight = measure.head_pair_weights(np.diff(pool.indptr), HEAD_PAIR_BOUND)
            A = fit.pool_features(pool, HEAD_PAIR_BOUND, weight)
            target = np.zeros(K + K * K)
            penalty = np.zeros(K + K * K)
            target[:K] = c / n
            penalty[:K] = factor * (sigma / n) ** 2
            j, i2 = np.triu_indices(K, 1)
            target[K + j * K + i2] = T[j, i2] / n
            penalty[K + j * K + i2] = HEAD_PAIR_PENALTY * (sigma_pairs / n) ** 2
            p = fit.maxent_weights(A, base, target, penalty)
        else:
            T = pair_baseline(c, sizes, k)
            pool, base = fit.head_pool(c, T, sizes / n, params.pool, rng)
            A = fit.item_features(pool)  # the items' features alone: the fit reads no pair
            p = fit.maxent_weights(A, base, c / n, np.full(K, factor * (sigma / n) ** 2))
        heads = draw_records(pool, p, n, rng)
        a = np.diff(heads.indptr)
        rows = np.repeat(np.arange(n), a)
        out = sp.csr_array(
            (np.ones(rows.size, dtype=np.uint8), (rows, head[heads.indices])), shape=(n, d)
        )
        out.sum_duplicates()
        out.data[:] = 1
    if bound:
        out = tail_fill(out, picked, share, rng)
    full = np.full(d, share * n)  # the unpicked items' measured level: the fill's
    full[picked] = y
    excess = fit_excess(out, full, sigma)
    info: dict[str, object] = {
        "mode": "head", "K": k, "pool": params.pool, "sigma_items": sigma,
        "sigma_sizes": sigma_sizes, "epsilon_pick": measure.pick_epsilon(r_picks, k),
        "items_kept": int(K), "fit_excess_sigmas": excess, **said,
    }  # fmt: skip
    if bound:
        info["tail_share"] = share
    return out, info


def head_pair_estimates(
    noisy: np.ndarray, counts: np.ndarray, sizes: np.ndarray, sigma: float
) -> tuple[np.ndarray, float, bool]:
    """The head mode's estimates of the kept picks' weighted pair counts (``K x K``,
    symmetric, diagonal 0; :func:`measure.head_pairs`) from their noisy counts ``noisy``
    (noise ``sigma``): their departures from the pair's count were the picks independent
    given a record's number of them (the estimated ``counts``, and ``sizes``, records by
    number of picks: a record of ``a`` picks holds ``C(a, 2)`` pairs of weight ``w(a)``,
    shared in proportion to ``q_j q_k`` as :func:`pair_baseline` does) denoised by
    :func:`spiked_denoise` (the directions that stand out of the noise, shrunk), added back
    to it and held within ``[0, min(c_j, c_k)]``. Also the ratio of the records' whole pairs
    to their weighted ones (the pool draws from whole co-occurrence), and whether any
    direction stood out. Post-processing."""
    K = counts.size
    a = np.arange(sizes.size, dtype=np.float64)
    pairs = sizes * a * (a - 1) / 2
    weighted = float((pairs * measure.head_pair_weights(a, HEAD_PAIR_BOUND)).sum())
    scale = float(pairs.sum()) / weighted if weighted > 0 else 1.0
    q = np.maximum(counts, 0.0)
    q = q / max(q.sum(), 1e-300)
    outer = np.outer(q, q)
    np.fill_diagonal(outer, 0.0)
    center = weighted * outer / max(outer.sum() / 2, 1e-300)
    j, k = np.triu_indices(K, 1)
    T = np.zeros((K, K))
    if j.size == 0:
        return T, scale, False
    low_rank = spiked_denoise(noisy - center, sigma)
    dev = center + low_rank
    T[j, k] = np.clip(dev[j, k], 0.0, np.minimum(counts[j], counts[k]))
    T[k, j] = T[j, k]
    return T, scale, bool(np.any(low_rank != 0.0))


def spiked_denoise(Y: np.ndarray, sigma: float) -> np.ndarray:
    """A symmetric ``K x K`` matrix ``Y`` (diagonal 0) read as low rank plus noise of
    standard deviation ``sigma`` in each off-diagonal entry (a Wigner matrix, whose
    eigenvalues fill ``[-2 sigma sqrt(K), 2 sigma sqrt(K)]``): each eigenvalue past that edge
    kept at the optimal shrinkage of the spiked model, the others set to 0. An observed
    ``lambda`` past the edge comes from a spike ``theta = (lambda + sqrt(lambda^2 - 4 sigma^2
    K)) / 2`` whose eigenvector's squared overlap with the observed one is ``1 - sigma^2 K /
    theta^2`` (Benaych-Georges and Nadakuditi 2011), so ``theta (1 - sigma^2 K / theta^2)``
    is the Frobenius-optimal eigenvalue (Donoho, Gavish and Johnstone 2018 for the
    covariance case). Where each pair's deviation is below its noise but the deviations
    share a few directions (listeners of one genre), the whole matrix still shows them.
    Post-processing."""
    K = Y.shape[0]
    if K < 2:
        return np.zeros_like(Y, dtype=np.float64)
    ev, V = np.linalg.eigh((Y + Y.T) / 2)
    s2k = sigma**2 * K
    lam = np.abs(ev)
    big = lam > 2 * math.sqrt(s2k)
    theta = np.where(big, (lam + np.sqrt(np.maximum(lam**2 - 4 * s2k, 0.0))) / 2, 0.0)
    kept = np.where(big, np.sign(ev) * (theta - s2k / np.maximum(theta, 1e-300)), 0.0)
    out = (V * kept) @ V.T
    np.fill_diagonal(out, 0.0)
    return out


def tail_share(total: float, sigma: float, n: int, unpicked: int) -> float:
    """The share of the records each of the ``unpicked`` items is put in by
    :func:`tail_fill`: :data:`TAIL_FILL` of the noisy ``total`` (noise ``sigma``) over
    ``n`` records and the unpicked items, where it stands :data:`TAIL_SIGMAS` deviations
    out; 0 otherwise. Post-processing."""
    if unpicked <= 0 or total < TAIL_SIGMAS * sigma:
        return 0.0
    return min(TAIL_FILL * total / (max(n, 1) * unpicked), 1.0)


def tail_fill(
    records: sp.csr_array, picked: np.ndarray, share: float, rng: np.random.Generator
) -> sp.csr_array:
    """``records`` with every item outside ``picked`` added to about ``share`` of them, at
    random, a record's number of them in proportion to one more than its items (a long
    record holds more of both), off the records of 2 kept items or more where the fill is
    thin (:func:`fill_weights`; post-processing). With nothing measured of an unpicked item
    but the total, one small share for all of them lowers the 1-way error of those held by
    more than twice the share, where all-zeros leaves each at its whole share."""
    n, d = records.shape
    unpicked = np.setdiff1d(np.arange(d), picked)
    total = round(share * n * unpicked.size)
    if total <= 0:
        return records
    counts = fit.integer_counts(np.ones(unpicked.size), total, rng)
    weight = fill_weights(records, total / unpicked.size)
    slots = systematic_counts(weight / weight.sum(), total, rng)
    owner, token = fit.deal_tail(slots, counts, rng)
    fill = sp.csr_array(
        (np.ones(owner.size, dtype=np.uint8), (owner, unpicked[token])), shape=(n, d)
    )
    out = sp.csr_array(records + fill)
    out.sum_duplicates()
    out.data[:] = 1
    return out


def fill_weights(records: sp.csr_array, per_item: float) -> np.ndarray:
    """The weights :func:`tail_fill` deals its items to the ``records`` by (``per_item``:
    the records each unpicked item is put in): one more than a record's items; and only
    the records of fewer than 2 items, where the fill implies no triple of two kept items
    and one unpicked item in :data:`TRIPLE_MEDIAN` records (its largest expected count,
    over the kept pairs, is below it; where every record holds 2 items or more, the
    weights as they are). Such a triple's count is then 0 with chance at least 1/2 under
    the release's own estimates, so its best answer under absolute error is 0
    (:func:`short_heads`' rule), yet each fill item dealt to a record of ``a`` kept items
    answers ``C(a, 2)`` of them with a whole record: on CiteULike at epsilon 1 (add/remove,
    24 kept articles, each unpicked one put in 5 of 5,520 records) those records took the
    triples' mean to 1.00001x the all-zeros table's (``docs/wide.md``, "The measured
    warning, and the fill kept off the kept pairs"). Post-processing."""
    lengths = np.diff(records.indptr)
    weight = lengths + 1.0
    if per_item <= 0 or not (lengths < 2).any():
        return weight
    share = per_item * weight / weight.sum()  # an unpicked item's expected fill per record
    kept = np.unique(records.indices)
    X = sp.csr_array(records[:, kept], dtype=np.float64)
    together = (X.T @ X.multiply(share[:, None])).toarray()  # kept pairs' expected fill
    np.fill_diagonal(together, 0.0)
    if together.max(initial=0.0) >= TRIPLE_MEDIAN:
        return weight
    return weight * (lengths < 2)


def head_estimates(
    y: np.ndarray,
    sigma: float,
    n: int,
    k: int,
    shrunk: bool = False,
    raise_limit: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The head mode's estimates of the ``k`` picked items' counts from their noisy counts
    ``y`` (noise ``sigma``) and which are kept. By default each noisy count is kept as
    measured where it clears :func:`family_threshold` (no noise draw of the ``k`` reaches it),
    so a pick of a rare item releases nothing. ``shrunk`` (the monotone picks of add/remove,
    which rarely pick a rare item): where some count clears that threshold (the head is
    measurable at all), the nonnegative counts are kept, each replaced by its James-Stein
    estimate toward their mean (:func:`james_stein`): a flat head's counts are pulled
    together instead of each dropped or inflated by its own noise draw. ``raise_limit``
    caps how many ``sigma`` an estimate may rise above its own noisy count
    (:func:`limited_translation` upward only; default :data:`HEAD_RAISE_LIMIT`, uncapped),
    so that a pick of a rare item is not lifted to the head's mean. Post-processing."""
    threshold = family_threshold(k) * sigma
    if not shrunk or not (y >= threshold).any():
        return np.minimum(y, n), y >= threshold
    up = HEAD_RAISE_LIMIT if raise_limit is None else raise_limit
    kept = y >= 0
    c = np.zeros_like(y, dtype=np.float64)
    shrunk_y = james_stein(y[kept], sigma)
    c[kept] = np.clip(limited_translation(y[kept], shrunk_y, sigma, up, np.inf), 0.0, n)
    return c, kept & (c > 0)


def limited_translation(
    y: np.ndarray, estimate: np.ndarray, sigma: float, up: float, down: float
) -> np.ndarray:
    """Efron and Morris's limited-translation estimator (Efron and Morris 1972, "Limiting
    the risk of Bayes and empirical Bayes estimators -- Part II: the empirical Bayes case",
    JASA 67): each coordinate of the shrunk ``estimate`` moved at most ``up`` noise
    deviations ``sigma`` above its own observation ``y`` and ``down`` below it,
    ``y + clip(estimate - y, -down sigma, up sigma)`` (theirs: ``up = down``, about 1).
    James-Stein's gain is in the total risk; one coordinate far from the others (a rare
    item among head items) can lose much to it. With the cap no estimate is further from its
    true value than its own observation is plus the cap, and most of the total gain is kept.
    A cap of ``inf`` leaves that side's moves as ``estimate`` makes them. Post-processing."""
    if not (up >= 0 and down >= 0):
        raise ValueError(f"the caps must be at least 0, got up={up}, down={down}")
    # clip(estimate, y - down sigma, y + up sigma): the same, and an uncapped side (inf)
    # returns ``estimate`` bit for bit
    low = y - down * sigma if math.isfinite(down) else -np.inf
    high = y + up * sigma if math.isfinite(up) else np.inf
    return np.clip(estimate, low, high)


def james_stein(y: np.ndarray, sigma: float) -> np.ndarray:
    """The positive-part James-Stein estimate of the means behind ``y`` (each with Gaussian
    noise of standard deviation ``sigma``) shrunk toward their average: ``m + B (y - m)``,
    ``B = max(0, 1 - (p - 3) sigma^2 / sum (y - m)^2)`` (Efron and Morris 1973, the version
    with an estimated centre; the identity for ``p < 4``). Where the true values spread
    less than the noise (a flat head) ``B`` is small and every value moves most of the way
    to ``m``. Post-processing."""
    p = y.size
    if p < 4:
        return y.astype(np.float64)
    m = float(y.mean())
    spread = float(((y - m) ** 2).sum())
    b = max(0.0, 1.0 - (p - 3) * sigma**2 / spread) if spread > 0 else 0.0
    return m + b * (y - m)


def draw_records(
    pool: sp.csr_array, p: np.ndarray, n: int, rng: np.random.Generator
) -> sp.csr_array:
    """``n`` records from the candidate ``pool`` weighted ``p``: each candidate repeated the
    floor or ceiling of ``n p`` times (systematic sampling), in a random order."""
    chosen = np.repeat(np.arange(pool.shape[0]), systematic_counts(p, n, rng))
    rng.shuffle(chosen)
    return pool[chosen]


def fit_excess(records: sp.csr_array, noisy: np.ndarray, sigma: float) -> float:
    """The most noise standard deviations by which an item's count in the fitted ``records``
    exceeds its noisy count (0 when none does). The estimates are shrunk toward 0 from the
    noisy counts, so a fit far above one is a fault of the fit, never the noise's: the
    release's own check (:data:`FIT_EXCESS_LIMIT`). Post-processing. The deviation counts
    the records' own draw too (a count of about ``c`` drawn records moves by about
    ``sqrt(c)``), so a large budget's tiny ``sigma`` does not make rounding a fault."""
    if noisy.size == 0:
        return 0.0
    fitted = np.bincount(records.indices, minlength=noisy.size)
    scale = np.sqrt(sigma**2 + np.maximum(noisy, 1.0))
    return max(float(((fitted - noisy) / scale).max()), 0.0)


def _match_total(slots: np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """``slots`` moved to sum to ``total``: random slots removed, or added to random records."""
    have = int(slots.sum())
    if have > total:
        owner = np.repeat(np.arange(slots.size), slots)
        keep = rng.choice(owner.size, size=total, replace=False)
        return np.bincount(owner[keep], minlength=slots.size)
    if have < total:
        return slots + np.bincount(
            rng.integers(slots.size, size=total - have), minlength=slots.size
        )
    return slots
