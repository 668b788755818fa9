"""Adaptive marginal measurement with a record-set projection (AIM's selection, our estimator).

The mechanism is AIM's (McKenna, Mullins, Sheldon, Miklau 2022, "AIM: An Adaptive and
Iterative Mechanism for Differentially Private Synthetic Data", Algorithm 1) with the
graphical model replaced by a set of discrete records fitted to the measurements
(:mod:`dpquery.algorithms.marginal.projection`), so the memory grows with the number of
attributes and records, not with the junction tree:

1. measure every 1-way marginal with (discrete) Gaussian noise (every attribute carries a
   measurement),
   and again those whose noisy marginal is estimated past ``column_tv`` in total variation,
   within a cap (:mod:`dpquery.algorithms.marginal.one_way`; not in AIM);
2. for ``t = 1, 2, ...`` until the budget is spent: select a candidate marginal ``r`` (the
   workload's marginals and their sub-marginals, and every 2-way marginal of at most ``n``
   cells on domains of at most 64 attributes: :func:`pair_candidates`; each also on the
   domain the noisy 1-way marginals compress, rare values merged: MST's compression,
   :mod:`dpquery.algorithms.marginal.compress`; and, for the attributes declared ordered,
   on contiguous bins of about equal noisy mass, ``ordinal``, and a key-like attribute's
   pair with such an attribute on its ranks within those bins, ``ranks``: not in AIM) by the
   exponential mechanism on the quality

       q_r(D) = w_r ( ||M_r(D) - M_r(D_hat)||_1 - sqrt(2/pi) sigma_t n_r ),

   ``w_r = sum_{s in W} |r ∩ s|`` (AIM, Section 4), measure it with Gaussian noise, re-fit
   the records; when the fit moved the selected marginal by less than the noise's expected
   L1 size, halve ``sigma`` and double ``epsilon`` (AIM's annealing; by ``sqrt(2)`` under
   add/remove, ``anneal``); when what is left cannot
   pay two more rounds, the last round spends all of it.

The data is read once, before the first charge: the counts of every marginal the steps may
measure or score (the 1-way marginals and the candidates, a public list), in this process or
in one pass over a partitioned dataset's partitions
(:mod:`dpquery.algorithms.marginal.candidate_counts`); everything after runs on those counts.

Privacy, for either neighbouring relation (:mod:`dpquery.privacy.neighbours`; add/remove by
default). Under replace-one (``n`` public) a marginal's count vector has L2 sensitivity
``sqrt(2)`` (one cell down, one up), so Gaussian noise ``N(0, sigma^2)`` costs
``rho = 2 / (2 sigma^2) = 1 / sigma^2`` (Bun and Steinke 2016, Proposition 1.6), and so does
the discrete Gaussian ``N_Z(0, sigma^2)`` on the integer counts (Canonne, Kamath and Steinke
2020, Theorem 4), which the measurements draw with CKS's exact sampler; the quality
``q_r`` changes by at most ``2 w_r`` (the L1 distance moves by at most 2), so the exponential
mechanism uses sensitivity ``2 max_r w_r`` and is ``epsilon``-bounded range, ``epsilon^2 / 8``-zCDP
(Cesar and Rogers 2021). Under add/remove (``n`` private) the count vector moves in one cell
(L2 sensitivity 1, ``rho = 1 / (2 sigma^2)``) and the quality by at most ``w_r`` (its
estimate ``M_r(D_hat)`` is scaled to the noisy ``n``, not to ``n``), so the selection uses
``max_r w_r``; the noisy ``n`` (:func:`~dpquery.privacy.neighbours.noisy_n`, 1% of ``rho``,
drawn first) replaces ``n`` in every rule below that reads it. Every charge reaches the
ledger before its draw (the mechanisms of :mod:`dpquery.privacy` charge first); the records
are post-processing of the measurements.
zCDP composes additively and converts to ``(epsilon, delta)`` by Canonne, Kamath and Steinke
2020. The measurements themselves are never part of the :class:`Release`. The candidates
(the workload's sub-marginals and the pairs) depend only on the workload, the attribute sizes
and ``n``, all public, so they change no cost.

(Over 400 lines: the plan, the candidates, the two mechanisms and the loop are one algorithm
box, kept in one module so that it reads as AIM's Algorithm 1; the compression of candidates
lives in :mod:`dpquery.algorithms.marginal.compress`, the column refinement in
:mod:`dpquery.algorithms.marginal.one_way`.)
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from dpquery.algorithms.columns import column_sources
from dpquery.algorithms.marginal.candidate_counts import (
    CodesSource,
    DataSource,
    MarginalSource,
    check_candidate_cells,
    counted_marginals,
    read_counts,
)
from dpquery.algorithms.marginal.compress import (
    DEFAULT_COMPRESS,
    DEFAULT_ORDINAL_BINS,
    Compression,
    extra_candidates,
    rank_candidates,
    rank_compression,
    scored_candidates,
)
from dpquery.algorithms.marginal.empty_cells import (
    DEFAULT_EMPTY_SIGMAS,
    LISTED_SIGMAS,
    RULED_SIGMAS,
    VOCABULARY_SIGMAS,
    catch_all_cells,
    condition_records,
    doubted_cells,
    doubted_listed,
    doubted_run,
    listed_cells,
    ruled_cells,
    ruled_low_cells,
    ruled_sigmas_of,
    vocabulary_cells,
)
from dpquery.algorithms.marginal.one_way import (
    DEFAULT_COLUMN_CAP,
    DEFAULT_COLUMN_TV,
    REFINE,
    check_column_tv,
    one_way_estimates,
    refine_columns,
    refinement_report,
)
from dpquery.algorithms.marginal.projection import Measurement, fit_records, initial_records
from dpquery.algorithms.marginal.shrinkage import (
    SHRINK_MIN_CELLS,
    SHRINK_MIN_FACTOR,
    SHRINKS,
    Shrink,
    shrink_cells,
    shrink_estimates,
    stein_factor,
)
from dpquery.algorithms.marginal.spelling_style import (
    FIRST_STYLE,
    PlaceColumn,
    column_style,
    place_columns,
    restyled,
    style_scores,
)
from dpquery.algorithms.marginal.unlinked import unlink
from dpquery.algorithms.marginal.within_bins import WITHIN_BINS_SWEEPS, interpolate_within_bins
from dpquery.algorithms.parameters import NO_BUDGET, positive, positive_int
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer, ZCDPBudget
from dpquery.algorithms.untouched import attributes_of
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import (
    ZCDP,
    Accountant,
    Budget,
    Charge,
    Ledger,
    ZCDPAccountant,
    exponential_mechanism,
    zcdp_rho_for,
)
from dpquery.privacy.delta import relation_default_delta
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    NOISY_N_SHARE,
    REPLACE_ONE,
    check_neighbours,
    marginal_sensitivity,
    selection_sensitivity,
)
from dpquery.progress import budget_progress
from dpquery.queries import Workload
from dpquery.queries.counts import counts_elsewhere
from dpquery.queries.marginals import (
    AttributeLayout,
    Marginal,
    marginal_counts,
    workload_marginals,
)
from dpquery.rng import SeedLike

SENSITIVITY = marginal_sensitivity(REPLACE_ONE)  # a count vector's L2, under replace-one
MEASURE = "Gaussian marginal"
SELECT = "exponential mechanism (marginal selection)"
# AIM's defaults (Algorithm 1): T = 16 g rounds fix the starting scales (here the most T, see
# plan_adaptive), alpha = 0.9 of each round's budget measures, 0.1 selects.
DEFAULT_ROUNDS_PER_ATTRIBUTE = 16
DEFAULT_ALPHA = 0.9
# AIM's annealing: sigma divided, epsilon multiplied by this when a round moved the fit by
# less than the noise's expected L1 size.
DEFAULT_ANNEAL = 2.0
# Under add/remove (docs/utility.md, Tuning under add/remove): half the noise variance for a
# cost and a selection score half as sensitive, so a gentler annealing (more rounds) and a
# smaller share of each round for the selection.
ADD_REMOVE_ANNEAL = math.sqrt(2.0)
ADD_REMOVE_ALPHA = 0.95
# ... and the ordinal bins on the domain's numeric columns (docs/utility.md, Tuning under
# add/remove); none under replace-one, whose releases are pinned.
ADD_REMOVE_ORDINAL = "numeric"
# ... and the records interpolated within those bins after the final fit (within_bins.py;
# docs/utility.md, Tuning under add/remove).
ADD_REMOVE_WITHIN_BINS = True
# ... and the 2-way candidates' selection weight times this (docs/utility.md, Tuning under
# add/remove); AIM's (1) under replace-one, whose releases are pinned.
ADD_REMOVE_PAIR_WEIGHT = 1.5
# ... and a key-like column's pair with an ordered one also offered on the ordered one's ranks
# within its ordinal bins (compress.rank_candidates; docs/learn.md, The worst pair); off under
# replace-one, whose releases are pinned.
ADD_REMOVE_RANKS = True
# ... and a categorical column's noisy 1-way counts shrunk before the fit (shrinkage.py;
# docs/learn.md, Many values of about equal count); off under replace-one, whose releases
# are pinned.
ADD_REMOVE_SHRINKAGE: Shrink | None = "js"
# ... and the column refinement's first step, when it does not fit in the cap, spent in part
# on the columns of largest excess removed per rho rather than not at all (one_way.py;
# docs/learn.md, The budget split at the noise floor); off under replace-one, whose releases
# are pinned.
ADD_REMOVE_PARTIAL_REFINE = False
# ... and a column of listed members (a public vocabulary's, Categorical.listed) whose first
# measurement James-Stein would shrink (its factor B at least SHRINK_MIN_FACTOR) measured a
# second time at its first's scale, within the cap (one_way.py; docs/learn.md, The budget
# split at the noise floor); off under replace-one, whose releases are pinned.
ADD_REMOVE_REFINE_SHRUNK = True
# ... and a column of country names written in one style (the UN's names, the World Bank's)
# released in that style, the style read off the column's 1-way counts (spelling_style.py;
# docs/learn.md, Country names written in one style); off under replace-one, whose releases
# are pinned.
ADD_REMOVE_SPELLING_STYLE = True
# The projection: sweeps after each measurement and at the end (docs/utility.md).
DEFAULT_SWEEPS = 2
DEFAULT_FINAL_SWEEPS = 30
# Records released by default: n, capped so that the fit's cost stays bounded on large data.
DEFAULT_MAX_RECORDS = 50_000
# Refuse record sets above this many codes (records x attributes) rather than run out of memory.
MAX_CODES = 2**30
# Pair candidates beyond the workload only up to this many attribute pairs (g <= 64): the
# selection scores every candidate every round.
MAX_PAIR_CANDIDATES = 2016
# kappa of the default number of rounds T = kappa g (n rho)^(1/3) (docs/utility.md: tuned on
# adult-pgm at epsilon 0.1 to 1, the power of n on ACS and KDD99).
DEFAULT_ROUND_SCALE = 0.66
# ... and at least this many (docs/utility.md: cps at epsilon 0.1).
MIN_ROUNDS = 16
OneWay = Literal["usage", "size", "equal"]
Score = Literal["l1", "max"]
ONE_WAYS: tuple[OneWay, ...] = ("usage", "size", "equal")
DEFAULT_ONE_WAY: OneWay = "size"


@dataclass(frozen=True)
class AdaptivePlan:
    """The starting scales of a run and its budget (``rho`` its zCDP equivalent)."""

    rho: float
    budget: Budget
    T: int
    alpha: float
    sigma0: float
    epsilon0: float
    records: int
    one_way: tuple[float, ...]  # the noise scale of each attribute's 1-way measurement
    column_tv: float | None = None  # the refinement's target (None: no refinement)
    column_cap: float = 0.0  # the most (rho) the refinements may spend, decided from the data
    neighbours: str = REPLACE_ONE
    anneal: float = DEFAULT_ANNEAL  # sigma / anneal, epsilon * anneal when a round changed little

    @property
    def sensitivity(self) -> float:
        """A marginal's L2 sensitivity under the plan's relation."""
        return marginal_sensitivity(self.neighbours)

    @property
    def unit(self) -> float:
        """``Delta^2 / 2``, the zCDP cost of unit-variance noise on a count vector: 1 under
        replace-one, 1/2 under add/remove (exact, so a replace-one run is unchanged)."""
        return 1.0 if self.neighbours == REPLACE_ONE else self.sensitivity**2 / 2

    def charges(self) -> list[Charge]:
        """What the run charges before its first selection: the ``g`` 1-way measurements
        (the refinements, data-dependent, spend at most ``column_cap`` of what the rounds
        would otherwise spend). Under add/remove the noisy ``n``, drawn before the plan, is
        charged by the fit."""
        return [Charge(MEASURE, ZCDP(measure_rho(s, self.sensitivity))) for s in self.one_way]


def measure_rho(sigma: float, sensitivity: float = SENSITIVITY) -> float:
    """zCDP cost of Gaussian noise ``sigma`` on a count vector of L2 ``sensitivity``
    (``sqrt(2)`` replace-one, 1 add-remove; Bun and Steinke 2016, Proposition 1.6:
    ``Delta^2 / (2 sigma^2)``)."""
    return sensitivity**2 / (2 * positive("sigma", sigma) ** 2)


def select_rho(epsilon: float) -> float:
    """zCDP cost of one ``epsilon`` exponential mechanism: ``epsilon^2 / 8`` (bounded range,
    Cesar and Rogers 2021)."""
    return positive("epsilon", epsilon) ** 2 / 8


def plan_adaptive(
    *, n: int, sizes: Sequence[int], epsilon: float | None = None, delta: float | None = None,
    rho: float | None = None, T: int | None = None, alpha: float | None = None,
    records: int | None = None, round_scale: float = DEFAULT_ROUND_SCALE,
    one_way: OneWay = DEFAULT_ONE_WAY, uses: Sequence[int] | None = None,
    one_way_share: float | None = None, column_tv: float | None = None,
    column_cap: float = DEFAULT_COLUMN_CAP, neighbours: str = REPLACE_ONE,
    anneal: float | None = None,
) -> AdaptivePlan:  # fmt: skip
    """AIM's starting scales: ``sigma_0 = sqrt(T / (alpha rho))`` (so ``T`` measurements cost
    ``alpha rho``) and ``epsilon_0 = sqrt(8 (1 - alpha) rho / T)`` (``T`` selections cost the
    rest). The budget is ``(epsilon, delta)`` (``delta`` default ``1/n^2``), converted to the
    largest ``rho`` that fits (CKS), or ``rho`` itself.

    ``T`` defaults to ``kappa g (n rho)^(1/3)`` (``kappa = round_scale``), within
    ``[max(16, g + 2), 16 g]`` (AIM's ``16 g`` the most): a small budget buys few rounds of
    useful measurements rather than many drowned ones, and more records buy more rounds,
    though fewer than the signal-to-noise ratio ``n sqrt(rho)`` of one measurement suggests
    (measured, not derived: ``rho^(1/3)`` on adult-pgm at epsilon 0.1 to 1, ``n^(1/3)`` across ACS,
    adult-pgm and KDD99, :data:`DEFAULT_ROUND_SCALE`, docs/utility.md); at least 16, so that on
    a few attributes the 1-way measurements (``g / T`` of the measuring budget) still leave
    rounds for their interactions.
    ``one_way="size"`` splits the 1-way measurements' share (``g`` measurements at
    ``sigma_0``) in proportion to ``|a|^(2/3)``, which minimises the summed expected L1 error
    ``sum_a |a| sigma_a`` of the 1-way marginals; ``"usage"`` in proportion to
    ``(|a| u_a)^(2/3)``, ``u_a = max(1, uses[a])`` the number of workload marginals containing
    ``a`` (public), minimising ``sum_a u_a |a| sigma_a``, the 1-way error as the workload
    sees it; ``"equal"`` measures each at ``sigma_0`` (AIM). Together the 1-way
    measurements cost AIM's ``g / T`` of the measuring budget ``alpha rho``, or
    ``one_way_share`` of it when given (more accurate columns, fewer rounds).

    ``column_tv`` (None: off) is the target of the column refinement
    (:mod:`dpquery.algorithms.marginal.one_way`), which may spend up to ``column_cap`` of what the
    1-way measurements leave (``rho`` minus their cost), decided from the noisy 1-way
    marginals.

    Under ``neighbours="add-remove"`` ``n`` is the noisy ``n`` (drawn and charged by the fit
    before this plan, :data:`NOISY_N_SHARE` of ``rho``), ``delta`` defaults to 1e-9 and the
    scales are those of sensitivity 1 on what the noisy ``n`` leaves of ``rho``. ``T``
    reads the budget as the signal-to-noise it buys, ``2 rho / Delta^2`` (``rho`` itself
    under replace-one; ``2 rho`` under add/remove, where the same ``rho`` buys ``1/sqrt(2)``
    of the noise). ``alpha`` and ``anneal`` (AIM's factor on ``sigma`` and ``epsilon`` when a
    round changed little) default to AIM's 0.9 and 2 under replace-one, to
    :data:`ADD_REMOVE_ALPHA` and :data:`ADD_REMOVE_ANNEAL` under add/remove (tuned,
    docs/utility.md)."""
    n = positive_int("n", n)
    add_remove = neighbours == ADD_REMOVE
    if alpha is None:
        alpha = ADD_REMOVE_ALPHA if add_remove else DEFAULT_ALPHA
    if anneal is None:
        anneal = ADD_REMOVE_ANNEAL if add_remove else DEFAULT_ANNEAL
    if not anneal >= 1:
        raise DPQueryError(f"anneal must be at least 1, got {anneal!r}")
    sizes = [positive_int("attribute size", a) for a in sizes]
    g = len(sizes)
    if g == 0:
        raise DPQueryError("the domain has no attribute")
    if epsilon is not None and rho is not None:
        raise DPQueryError("give epsilon (with delta) or rho, not both")
    if epsilon is None and rho is None:
        raise DPQueryError(NO_BUDGET)
    if rho is not None:
        if delta is not None:
            raise DPQueryError("a rho (zCDP) budget takes no delta")
        budget, total = Budget.zcdp(rho), positive("rho", rho)
    else:
        d = delta if delta is not None else relation_default_delta(n, neighbours == ADD_REMOVE)
        budget = Budget.approx(positive("epsilon", epsilon), d)
        total = zcdp_rho_for(budget.limit, d, "cks")
    if not 0 < alpha < 1:
        raise DPQueryError(f"alpha must be in (0, 1), got {alpha!r}")
    if one_way not in ONE_WAYS:
        raise DPQueryError(f"one_way must be one of {ONE_WAYS}, got {one_way!r}")
    sensitivity = marginal_sensitivity(neighbours)
    rounds = total * (1 - NOISY_N_SHARE) if neighbours == ADD_REMOVE else total
    if T is None:
        effective = rounds if not add_remove else 2 * rounds / sensitivity**2
        fit = positive("round_scale", round_scale) * g * (n * effective) ** (1 / 3)
        least = max(MIN_ROUNDS, g + 2)
        T = min(DEFAULT_ROUNDS_PER_ATTRIBUTE * g, max(least, math.floor(fit)))
    T = positive_int("T", T)
    m = min(n, DEFAULT_MAX_RECORDS) if records is None else positive_int("records", records)
    if m * g > MAX_CODES:
        raise DPQueryError(
            f"{m} records x {g} attributes = {m * g} codes exceed {MAX_CODES}; give fewer records"
        )
    sigma0 = math.sqrt(sensitivity**2 * T / (2 * alpha * rounds))
    epsilon0 = math.sqrt(8 * (1 - alpha) * rounds / T)
    if one_way_share is not None and not 0 < one_way_share < 1:
        raise DPQueryError(f"one_way_share must be in (0, 1), got {one_way_share!r}")
    if one_way == "equal" and one_way_share is None:
        sigmas = tuple([sigma0] * g)
    else:
        c = np.asarray(sizes, dtype=np.float64)
        if one_way == "equal":
            c = np.ones(g)
        elif one_way == "usage":
            if uses is None or len(uses) != g:
                raise DPQueryError(f"one_way='usage' needs uses for each of the {g} attributes")
            c = c * np.maximum(1, np.asarray(uses, dtype=np.float64))
        c = c ** (2 / 3)
        # AIM's share: g of the T measurements at sigma_0 (g / T of alpha rho).
        if one_way_share is None:
            rho_1 = g * measure_rho(sigma0, sensitivity)
        else:
            rho_1 = one_way_share * alpha * rounds
        rho_a = rho_1 * c / c.sum()
        sigmas = tuple(float(math.sqrt(sensitivity**2 / (2 * r))) for r in rho_a)
    if not 0 < column_cap < 1:
        raise DPQueryError(f"column_cap must be in (0, 1), got {column_cap!r}")
    cap = 0.0
    column_tv = check_column_tv(column_tv)
    if column_tv is not None:
        cap = column_cap * max(0.0, rounds - sum(measure_rho(s, sensitivity) for s in sigmas))
    return AdaptivePlan(
        total, budget, T, alpha, sigma0, epsilon0, m, sigmas, column_tv, cap, neighbours,
        float(anneal),
    )  # fmt: skip


def candidates_of(
    workload: Sequence[Marginal], extra: Sequence[Marginal] = ()
) -> dict[Marginal, float]:
    """AIM's candidates and weights: every sub-marginal ``r`` of a workload marginal (and every
    marginal of ``extra``), with ``w_r = sum_{s in W} |r ∩ s|`` (AIM, Section 4)."""
    out: dict[Marginal, float] = {}
    for s in workload:
        for k in range(1, len(s) + 1):
            for r in _combinations(s, k):
                out.setdefault(r, 0.0)
    for r in extra:
        out.setdefault(tuple(r), 0.0)
    for r in out:
        out[r] = float(sum(len(set(r) & set(s)) for s in workload))
    return {r: w for r, w in out.items() if w > 0}


def pair_candidates(sizes: Sequence[int] | np.ndarray, n: int) -> list[Marginal]:
    """Every 2-way marginal of at most ``n`` cells, when there are at most
    :data:`MAX_PAIR_CANDIDATES` attribute pairs (else none): candidates beyond the workload's
    sub-marginals, so that a strong dependence between attributes no workload marginal
    joins can be selected and measured (public: reads sizes and ``n`` only). AIM selects
    among the workload's downward closure only; a release read as data is also asked about
    pairs outside it (on KDD99 with 64 given 3-way marginals, the worst of 64 other 3-way
    marginals went from 0.135 to 0.004, docs/columns.md)."""
    g = len(sizes)
    if g * (g - 1) // 2 > MAX_PAIR_CANDIDATES:
        return []
    return [r for r in _combinations(tuple(range(g)), 2)
            if int(sizes[r[0]]) * int(sizes[r[1]]) <= n]  # fmt: skip


def _combinations(s: Marginal, k: int) -> list[Marginal]:
    return [tuple(c) for c in itertools.combinations(s, k)]


def measure(
    fine: dict[Marginal, np.ndarray], sizes: np.ndarray, marginal: Marginal, sigma: float,
    rng: np.random.Generator, ledger: Ledger, compression: Compression | None = None,
    name: str = MEASURE, sensitivity: float = SENSITIVITY,
) -> Measurement:  # fmt: skip
    """The marginal's counts plus discrete Gaussian noise ``N_Z(0, sigma^2)`` per cell, drawn
    exactly (Canonne, Kamath and Steinke 2020, Algorithm 3: no floating-point noise reaches
    the records) and charged before the draw; its cost is the continuous Gaussian's,
    ``Delta^2 / (2 sigma^2)`` (CKS Theorem 4), with the variance parameter rounded up to a
    rational. With ``compression``, the counts of the compressed marginal (``fine`` the
    full-domain counts read before the first charge,
    :mod:`dpquery.algorithms.marginal.candidate_counts`; the same sensitivity and cost,
    :mod:`dpquery.algorithms.marginal.compress`). ``sensitivity``: the count vector's L2,
    ``sqrt(2)`` under replace-one, 1 under add-remove."""
    c = compression
    x = fine[marginal] if c is None else c.compressed(marginal, fine[marginal])
    y = discrete_gaussian_mechanism(
        x, rho=measure_rho(sigma, sensitivity), sensitivity=sensitivity, rng=rng, ledger=ledger,
        name=name,
    ).astype(np.float64)  # fmt: skip
    return Measurement(marginal, y, sigma) if c is None else c.measurement(marginal, y, sigma)


def max_noise(sigma: float, cells: int) -> float:
    """An upper bound on the expected largest absolute noise ``E max_i |Z_i|`` over ``cells``
    Gaussian cells of scale ``sigma``: ``sigma sqrt(2 ln(2 cells))`` (the maximum of ``2K``
    sub-Gaussian variables ``+-Z_i``, by Jensen's inequality on ``exp(lambda max)``; e.g.
    Boucheron, Lugosi and Massart 2013, "Concentration Inequalities", Section 2.5): the
    largest cell error a measurement of ``r`` leaves, as ``sqrt(2/pi) sigma n_r`` is the L1
    error it leaves in AIM's quality."""
    return sigma * math.sqrt(2 * math.log(2 * cells))


def quality_scores(
    candidates: Sequence[Marginal], weights: np.ndarray, true_counts: Sequence[np.ndarray],
    X: np.ndarray, sizes: np.ndarray, *, n: int, sigma: float,
    cell_maps: Sequence[np.ndarray | None] = (), score: Score = "l1",
) -> np.ndarray:  # fmt: skip
    """AIM's quality ``w_r (||M_r(D) - M_r(D_hat)||_1 - sqrt(2/pi) sigma n_r)`` of every
    candidate (AIM, Section 4), ``M_r(D_hat)`` the records ``X`` scaled to ``n`` records (under
    add-remove the noisy ``n``: the score then moves by at most ``w_r`` between neighbours).
    A candidate with ``cell_maps[i]`` (each fine cell's compressed cell,
    :meth:`Compression.cell_map`) is the compressed marginal (``true_counts[i]`` compressed,
    ``n_r`` its cells; the same sensitivity: a record still moves at most one count down and
    one up).

    ``score="max"``: the largest single cell's error instead, MWEM's selection score
    (Hardt, Ligett and McSherry 2012, Algorithm 1: the query of largest error), less what a
    measurement leaves, and weighted as AIM's:
    ``w_r (||M_r(D) - M_r(D_hat)||_inf - sigma sqrt(2 ln(2 n_r)))`` (:func:`max_noise`).
    Only ``M_r(D)`` reads the data, and a record added or removed moves one of its counts by
    1, so the largest absolute error moves by at most 1 and the score by at most ``w_r``
    (under replace-one two counts move by 1 each, and the largest still by at most 1: the
    L1 score's ``2 w_r`` is a valid, looser bound)."""
    scale = n / X.shape[0]
    fine: dict[Marginal, np.ndarray] = {}
    scores = np.empty(len(candidates))
    for i, r in enumerate(candidates):
        if r not in fine:
            fine[r] = marginal_counts(X, sizes, r) * scale
        est = fine[r]
        cmap = cell_maps[i] if i < len(cell_maps) else None
        if cmap is not None:  # the fine estimate summed through the value maps
            est = np.bincount(cmap, weights=est, minlength=true_counts[i].size)
        gap = np.abs(true_counts[i] - est)
        if score == "max":
            scores[i] = weights[i] * (gap.max() - max_noise(sigma, est.size))
        else:
            bias = math.sqrt(2 / math.pi) * sigma * est.size
            scores[i] = weights[i] * (gap.sum() - bias)
    return scores


def select(
    candidates: Sequence[Marginal], weights: np.ndarray, true_counts: Sequence[np.ndarray],
    X: np.ndarray, sizes: np.ndarray, *, n: int, sigma: float, epsilon: float,
    rng: np.random.Generator, ledger: Ledger, cell_maps: Sequence[np.ndarray | None] = (),
    neighbours: str = REPLACE_ONE, score: Score = "l1",
) -> int:  # fmt: skip
    """AIM's selection: the exponential mechanism on :func:`quality_scores`, sensitivity
    ``2 max_r w_r`` under replace-one, ``max_r w_r`` under add-remove (``n`` then the noisy
    ``n``, so that ``M_r(D_hat)`` does not move with the data;
    :func:`~dpquery.privacy.neighbours.selection_sensitivity`); with ``score="max"`` the
    largest cell error (the same bounds hold, :func:`quality_scores`)."""
    scores = quality_scores(candidates, weights, true_counts, X, sizes, n=n, sigma=sigma,
                            cell_maps=cell_maps, score=score)  # fmt: skip
    return int(exponential_mechanism(
        scores, epsilon=epsilon, sensitivity=selection_sensitivity(weights.max(), neighbours),
        rng=rng, ledger=ledger, name=SELECT,
    )[0])  # fmt: skip


def max_round(t: int, share: float) -> bool:
    """Whether round ``t`` (from 1) selects by the largest cell error when ``share`` of the
    rounds do, spread evenly: when ``floor(t share)`` steps up (``share = 1/4``: rounds 4, 8,
    12, ...). Public: reads the round's index and the option only."""
    return share > 0 and math.floor(t * share) > math.floor((t - 1) * share)


RoundCallback = Callable[[dict[str, Any]], None]


def adaptive_marginals(
    codes: np.ndarray | MarginalSource, sizes: np.ndarray, workload: Sequence[Marginal], *,
    plan: AdaptivePlan,
    rng: np.random.Generator, ledger: Ledger, sweeps: int = DEFAULT_SWEEPS,
    final_sweeps: int = DEFAULT_FINAL_SWEEPS, on_round: RoundCallback | None = None,
    pairs: bool = True, compress: float | None = None, n: int | None = None,
    coarse: float | None = None, coarse_final: bool = False, coarse_weight: float = 1.0,
    ordinal: Mapping[int, int] | None = None, ordinal_bins: int = DEFAULT_ORDINAL_BINS,
    ordinal_weight: float = 1.0, within_bins: bool = False,
    empty: Sequence[Sequence[int]] | None = None, empty_sigmas: float = DEFAULT_EMPTY_SIGMAS,
    ruled: Sequence[Sequence[int]] | None = None,
    ruled_sigmas: float | Sequence[float] = RULED_SIGMAS,
    ruled_low: Sequence[Sequence[int]] | None = None,
    vocab: Sequence[Sequence[int]] | None = None, vocab_sigmas: float = VOCABULARY_SIGMAS,
    listed: Sequence[Sequence[int]] | None = None, listed_sigmas: float | None = LISTED_SIGMAS,
    unlinked: int = 0, pair_weight: float = 1.0, max_share: float = 0.0,
    max_final: bool = False, max_scale: float = 1.0, ranks: bool = False,
    shrink: Sequence[Sequence[int]] | None = None, shrink_how: Shrink = "js",
    refine_partial: bool = False, refine_shrunk: Sequence[Sequence[int]] | None = None,
    places: Sequence[PlaceColumn | None] | None = None,
) -> tuple[np.ndarray, list[dict[str, Any]]]:  # fmt: skip
    """Algorithm 1 of AIM with the record-set estimator: the ``(m, g)`` codes of the fitted
    records and per-round statistics (selected marginal, scales, sweeps). ``pairs`` adds
    :func:`pair_candidates` to the workload's candidates; ``compress`` (the threshold ``c``)
    adds each candidate's compressed version, on the domain the 1-way measurements define
    (:mod:`dpquery.algorithms.marginal.compress`), with the same weight ``w_r``.

    ``codes`` is the data as ``(n, g)`` attribute codes, or a source of its marginal counts
    (:mod:`dpquery.algorithms.marginal.candidate_counts`, e.g. counted on a cluster): either way the
    data is read once, every candidate's counts before the first charge. ``n`` is the number
    of records every rule reads (the data's, public under replace-one; under add-remove the
    noisy ``n`` the plan was made with).

    ``coarse`` (a threshold above ``compress``; None: off) adds every candidate again on the
    domain that threshold compresses, when that leaves it fewer cells than ``compress``
    does (:func:`~dpquery.algorithms.marginal.compress.extra_candidates`), its weight
    times ``coarse_weight``: a value most records share (adult-pgm's 40 hours a week) is
    measured with the noise of a handful of cells, which lowers the largest cell error and
    costs some mean TV (docs/utility.md, Tuning under add/remove). ``coarse_final``: only the
    last round selects among them (and only among them). Post-processing of the 1-way
    measurements, as ``compress``: the same costs and sensitivities (a weight below 1 only
    lowers a candidate's score; the selection's sensitivity is the largest weight it
    scores).

    ``ordinal`` (attribute -> the number of its leading values that are ordered, public;
    None or empty: off) adds every candidate holding such an attribute of more than
    ``ordinal_bins`` values again with it cut into at most ``ordinal_bins`` contiguous bins
    of about equal noisy mass, the other attributes compressed as by ``compress``
    (:func:`~dpquery.algorithms.marginal.compress.ordinal_map`), its weight times
    ``ordinal_weight``: post-processing of the 1-way measurements, as ``compress``.
    ``within_bins`` (with ``ordinal``) interpolates the fitted records within the bins of the
    ordered attributes of wide bins after the final fit
    (:func:`~dpquery.algorithms.marginal.within_bins.interpolate_within_bins`):
    post-processing of the records, no charge. ``unlinked`` (passes; 0: off), before that,
    permutes each attribute among the records agreeing on its measured neighbours
    (:func:`~dpquery.algorithms.marginal.unlinked.unlink`): post-processing, no charge.
    ``ranks`` (with ``ordinal``) offers a 2-way candidate pairing an ordered attribute with a
    key-like one again with the ordered one sent to its rank within its ordinal bin
    (:func:`~dpquery.algorithms.marginal.compress.rank_candidates`; post-processing of the
    1-way measurements, as ``ordinal``).
    ``pair_weight`` multiplies the weight ``w_r`` of every 2-way candidate (fine, compressed
    or binned): a choice made from the candidates' sizes alone (public), and the selection's
    sensitivity is the largest weight it scores, so the exponential mechanism's guarantee is
    unchanged. ``max_share`` (0: off) of the rounds, evenly spread (round ``t`` when
    ``floor(t s)`` steps up), and the last round with ``max_final``, select by the largest
    cell error rather than AIM's L1 error (:func:`max_round`; ``score="max"`` of
    :func:`quality_scores`): the same ``epsilon_t`` charged, a score of the same
    sensitivity bound; such a round never anneals (AIM's test reads the L1 size of the
    noise, which a max round does not aim at) and, but the last, measures at ``max_scale``
    times the round's ``sigma`` (charged at that scale before its draw).

    ``empty`` (per attribute, the codes of its catch-all cells,
    :func:`~dpquery.algorithms.marginal.empty_cells.catch_all_cells`; None: off): last, such
    a cell whose combined noisy 1-way count is below ``empty_sigmas`` standard deviations is
    taken as empty and its attribute's values are conditioned on it
    (:mod:`dpquery.algorithms.marginal.empty_cells`; post-processing, no extra cost); so is
    the leading run of ``ruled`` cells (per attribute, codes a learned domain added by rule,
    highest first: :func:`~dpquery.algorithms.marginal.empty_cells.ruled_cells`) below
    ``ruled_sigmas`` (one for all, or per attribute:
    :func:`~dpquery.algorithms.marginal.empty_cells.ruled_sigmas_of`), and the leading run
    of ``ruled_low`` cells (codes added by rule below the data's, lowest first:
    :func:`~dpquery.algorithms.marginal.empty_cells.ruled_low_cells`) at the same
    ``ruled_sigmas``, and each ``vocab``
    cell (per attribute, a public vocabulary's members a learned domain added by rule:
    :func:`~dpquery.algorithms.marginal.empty_cells.vocabulary_cells`) below
    ``vocab_sigmas``, tested on its own, and the ``listed`` cells (per attribute, a public
    vocabulary's members a learned domain listed without a selection:
    :func:`~dpquery.algorithms.marginal.empty_cells.listed_cells`) that
    :func:`~dpquery.algorithms.marginal.empty_cells.doubted_listed` takes as empty
    (``listed_sigmas``: its fixed threshold, None its empirical-Bayes rule). ``places`` (per
    attribute, its country names by place,
    :func:`~dpquery.algorithms.marginal.spelling_style.place_columns`; None: off) decides
    each such column's writing style from its 1-way counts first
    (:func:`~dpquery.algorithms.marginal.spelling_style.column_style`): in a style other
    than the first spellings, each place's spelling in it takes the first spelling's part
    among the ``listed`` cells
    (:func:`~dpquery.algorithms.marginal.spelling_style.restyled`; post-processing).

    ``shrink`` (per attribute, the codes whose combined noisy 1-way counts are shrunk
    together, :func:`~dpquery.algorithms.marginal.shrinkage.shrink_cells`; None: off) makes
    the fit's target for such an attribute's 1-way marginal its counts shrunk by
    ``shrink_how`` (:mod:`dpquery.algorithms.marginal.shrinkage`: James-Stein toward the
    column's mean, or the posterior means under an estimated prior), at the combined
    measurements' scale; the compression and the empty-cell tests read the measurements
    themselves. Post-processing of the charged 1-way measurements: no charge.

    ``refine_partial`` lets the column refinement's first step spend part of its cap when
    the whole step does not fit; ``refine_shrunk`` (per attribute, cells as ``shrink``;
    :func:`listed_shrink_cells` by default) measures again, at its first scale and within the
    cap, each attribute whose first measurement's James-Stein factor over those cells is at
    least :data:`~dpquery.algorithms.marginal.shrinkage.SHRINK_MIN_FACTOR` (:func:`shrunk_columns`)
    (:func:`~dpquery.algorithms.marginal.one_way.refine_columns`; each draw charged before
    it is made)."""
    source = CodesSource(codes, sizes) if isinstance(codes, np.ndarray) else codes
    n = source.n if n is None else n
    delta2 = plan.sensitivity
    table = candidates_of(workload, pair_candidates(sizes, n) if pairs else ())
    if pair_weight != 1.0:  # the 2-way candidates' weights scaled (public; docs/utility.md)
        table = {r: w * (pair_weight if len(r) == 2 else 1.0) for r, w in table.items()}
    fine = read_counts(source, counted_marginals(table, len(sizes)))
    acc = ledger.accountant
    sigma, epsilon = plan.sigma0, plan.epsilon0
    measured = [measure(fine, sizes, (a,), s, rng, ledger, sensitivity=delta2)
                for a, s in enumerate(plan.one_way)]  # fmt: skip
    rounds: list[dict[str, Any]] = []
    extra: list[Measurement] = []
    if plan.column_tv is not None:
        extra, refined = refine_columns(
            measured,
            lambda a, s: measure(fine, sizes, (a,), s, rng, ledger, name=REFINE,
                                 sensitivity=delta2), n=n,
            tau=plan.column_tv, cap=plan.column_cap, unit=plan.unit,
            partial=refine_partial, doubled=shrunk_columns(measured, refine_shrunk),
        )  # fmt: skip
        rounds += [{"round": "column refinement", **r} for r in refined]
    measured += extra
    # The fit's targets: the 1-way measurements of a shrunk attribute replaced by one of its
    # shrunk counts (shrinkage.py; post-processing); the rounds' measurements appended after.
    head, k0 = shrunk_one_way(measured, len(sizes), shrink, shrink_how), len(measured)

    def targets() -> list[Measurement]:
        return measured if head is None else head + measured[k0:]

    X = initial_records([y for y, _ in one_way_estimates(targets(), len(sizes))],
                        plan.records, rng, n=n)  # fmt: skip
    # Post-processing of the 1-way measurements (no charge): the compressed candidates.
    comp = None if not compress else Compression.of(measured, len(sizes), n, compress)
    candidates, weights, true_counts, cell_maps = scored_candidates(table, fine, sizes, comp)
    comps: list[Compression | None] = [None if f is None else comp for f in cell_maps]
    if ordinal:
        bins = Compression.ordinal(measured, sizes, n, ordinal_bins, ordinal, comp)
        more, w, counts, maps = extra_candidates(table, fine, sizes, comp, bins)
        candidates, weights = candidates + more, np.concatenate([weights, ordinal_weight * w])
        true_counts, cell_maps = true_counts + counts, [*cell_maps, *maps]
        comps += [bins] * len(more)
        if ranks:  # a key-like column's pair also on the ordered one's ranks (compress.py)
            digits = rank_compression(bins, ordinal, sizes, comp)
            more, w, counts, maps = rank_candidates(table, fine, sizes, digits, ordinal)
            candidates, weights = candidates + more, np.concatenate([weights, ordinal_weight * w])
            true_counts, cell_maps = true_counts + counts, [*cell_maps, *maps]
            comps += [digits] * len(more)
    if comp is not None and coarse:
        wide = Compression.of(measured, len(sizes), n, coarse)
        more, w, counts, maps = extra_candidates(table, fine, sizes, comp, wide)
        candidates, weights = candidates + more, np.concatenate([weights, coarse_weight * w])
        true_counts, cell_maps = true_counts + counts, [*cell_maps, *maps]
        comps += [wide] * len(more)
    split = len(candidates) - len(more) if comp is not None and coarse and coarse_final else None
    final, t = False, 0
    while not final:
        t0 = time.perf_counter()
        used = acc.rho(ledger.totals)
        remaining = plan.rho - used
        if remaining < 2 * (measure_rho(sigma, delta2) + select_rho(epsilon)):
            # The last round spends what is left (a hair less, for rounding in the ledger).
            remaining *= 1 - 1e-9
            if remaining <= 0:
                break
            sigma = math.sqrt(delta2**2 / (2 * plan.alpha * remaining))
            epsilon = math.sqrt(8 * (1 - plan.alpha) * remaining)
            final = True
        lo, hi = 0, len(candidates)
        if split is not None:
            lo, hi = (split, hi) if final else (0, split)
        by_max = max_round(t + 1, max_share) or (final and max_final)
        # a max round (not the last) may measure more coarsely: a large cell's error needs
        # less precision than a marginal's L1 (max_scale; 1: the round's sigma)
        s_t = sigma * max_scale if by_max and not final else sigma
        i = lo + select(
            candidates[lo:hi], weights[lo:hi], true_counts[lo:hi], X, sizes, n=n, sigma=s_t,
            epsilon=epsilon, rng=rng, ledger=ledger, cell_maps=cell_maps[lo:hi],
            neighbours=plan.neighbours, score="max" if by_max else "l1",
        )  # fmt: skip
        r = candidates[i]
        x = measure(fine, sizes, r, s_t, rng, ledger, comps[i], sensitivity=delta2)
        measured.append(x)
        before = x.counts(X, sizes) * (n / plan.records)
        X, done = fit_records(X, targets(), sizes, n=n, sweeps=sweeps, rng=rng)
        after = x.counts(X, sizes) * (n / plan.records)
        t += 1
        info = {"round": t, "marginal": list(r), "cells": int(before.size),
                "compressed": cell_maps[i] is not None, "sigma": s_t, "epsilon": epsilon,
                "sweeps": done, "seconds": time.perf_counter() - t0}  # fmt: skip
        if by_max:
            info["score"] = "max"
        # AIM's annealing reads its L1 score's yardstick; a max round, which asks for a few
        # cells of a marginal that may be large, is not judged by it (docs/utility.md).
        if (
            not by_max
            and np.abs(after - before).sum() <= math.sqrt(2 / math.pi) * sigma * before.size
        ):
            sigma, epsilon = sigma / plan.anneal, epsilon * plan.anneal
            info["annealed"] = True
        rounds.append(info)
        if on_round is not None:
            on_round(info)
    X, done = fit_records(X, targets(), sizes, n=n, sweeps=final_sweeps, rng=rng)
    rounds.append({"round": "final fit", "sweeps": done})
    if unlinked:  # post-processing of the records: no charge (unlinked.py)
        X, movable = unlink(X, measured, sizes, passes=unlinked, rng=rng)
        rounds.append({"round": "unlinked", "passes": unlinked, "movable": movable})
    if ordinal and within_bins:  # post-processing of the records: no charge (within_bins.py)
        X, cut, pseudo = interpolate_within_bins(
            X, measured, bins.maps, ordinal, sizes, n=n,
            sweeps=min(final_sweeps, WITHIN_BINS_SWEEPS), rng=rng,
        )  # fmt: skip
        rounds.append({"round": "within bins", "attributes": cut, "pseudo": pseudo})
    ruled_any = (ruled is not None and any(ruled)) or (vocab is not None and any(vocab))
    ruled_any = ruled_any or (ruled_low is not None and any(ruled_low))
    ruled_any = ruled_any or (listed is not None and any(listed))
    if empty is not None and (any(empty) or ruled_any):
        estimates = one_way_estimates(measured, len(sizes))
        if places is not None and any(p is not None for p in places):
            listed, vocab = _styled(estimates, places, listed, vocab, rounds)
        doubted = doubted_cells(estimates, empty, empty_sigmas)
        if ruled is not None and any(ruled):  # the codes past the data: the highest ones
            run = doubted_run(estimates, ruled, ruled_sigmas)
            doubted = [(*c, *r) for c, r in zip(doubted, run, strict=True)]
        if ruled_low is not None and any(ruled_low):  # the codes below the data: the lowest
            run = doubted_run(estimates, ruled_low, ruled_sigmas)
            doubted = [(*c, *r) for c, r in zip(doubted, run, strict=True)]
        if vocab is not None and any(vocab):  # unordered: each member on its own
            each = doubted_cells(estimates, vocab, vocab_sigmas)
            doubted = [(*c, *v) for c, v in zip(doubted, each, strict=True)]
        if listed is not None and any(listed):  # together: their empty share estimated
            each = doubted_listed(estimates, listed, listed_sigmas)
            doubted = [(*c, *v) for c, v in zip(doubted, each, strict=True)]
        X, k = condition_records(X, doubted, rng)
        if k:
            rounds.append({"round": "empty catch-all cells", "values_redrawn": k,
                           "cells": {a: list(c) for a, c in enumerate(doubted) if c}})  # fmt: skip
    return X, rounds


def _styled(
    estimates: Sequence[tuple[np.ndarray, float]], places: Sequence[PlaceColumn | None],
    listed: Sequence[Sequence[int]] | None, vocab: Sequence[Sequence[int]] | None,
    rounds: list[dict[str, Any]],
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:  # fmt: skip
    """The ``listed`` and ``vocab`` cells of each column of country names in the style its
    1-way ``estimates`` read (:func:`~dpquery.algorithms.marginal.spelling_style.restyled`);
    each style other than the first spellings noted in ``rounds``. Post-processing of
    charged measurements."""
    none: list[tuple[int, ...]] = [() for _ in places]
    new_listed = [tuple(c) for c in listed] if listed is not None else list(none)
    new_vocab = [tuple(c) for c in vocab] if vocab is not None else list(none)
    for a, column in enumerate(places):
        if column is None:
            continue
        y, sigma = estimates[a]
        style = column_style(y, float(sigma), column)
        if style == FIRST_STYLE:
            continue
        new_listed[a], new_vocab[a] = restyled(column, style, new_listed[a], new_vocab[a])
        z = style_scores(y, float(sigma), column)[style]
        rounds.append({"round": "spelling style", "attribute": a, "style": style, "z": float(z)})
    return new_listed, new_vocab


def listed_shrink_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray
) -> list[tuple[int, ...]]:
    """Per attribute, its :func:`~dpquery.algorithms.marginal.shrinkage.shrink_cells` when its
    domain lists members of a public vocabulary without a selection of their own
    (:func:`~dpquery.algorithms.marginal.empty_cells.listed_cells`: many may hold no record),
    none elsewhere. Public: the domain alone."""
    listed = listed_cells(domain, sizes)
    return [c if mine else () for c, mine in zip(shrink_cells(domain, sizes), listed, strict=True)]


def shrunk_columns(
    measured: Sequence[Measurement], cells: Sequence[Sequence[int]] | None
) -> list[int]:
    """The attributes whose first 1-way measurement (``measured[a]``), over their ``cells``
    (:func:`~dpquery.algorithms.marginal.shrinkage.shrink_cells`), has James-Stein's factor
    ``B`` at least :data:`~dpquery.algorithms.marginal.shrinkage.SHRINK_MIN_FACTOR`: the noise
    at least half the counts' spread. Post-processing of the charged measurements."""
    if cells is None:
        return []
    return [a for a, mine in enumerate(cells)
            if len(mine) >= SHRINK_MIN_CELLS and stein_factor(
                np.asarray(measured[a].y, dtype=np.float64)[list(mine)], measured[a].sigma
            ) >= SHRINK_MIN_FACTOR]  # fmt: skip


def shrunk_one_way(
    measured: Sequence[Measurement], g: int, cells: Sequence[Sequence[int]] | None, how: Shrink
) -> list[Measurement] | None:
    """The 1-way measurements among ``measured`` as the fit's targets, each attribute with
    ``cells`` to shrink (:func:`~dpquery.algorithms.marginal.shrinkage.shrink_cells`) holding
    one measurement of its combined counts with those cells shrunk by ``how``
    (:func:`~dpquery.algorithms.marginal.shrinkage.shrink_estimates`), at the combined scale;
    None when no attribute has any, or none is shrunk (the targets are the measurements)."""
    if cells is None or not any(cells):
        return None
    estimates = one_way_estimates(measured, g)
    shrunk = shrink_estimates(estimates, cells, how)
    if all(z is None for z in shrunk):
        return None
    out: list[Measurement] = []
    for x in measured:
        a = x.marginal[0] if len(x.marginal) == 1 and x.maps is None else None
        if a is None or shrunk[a] is None:
            out.append(x)
        elif not any(len(z.marginal) == 1 and z.maps is None and z.marginal[0] == a
                     for z in out):  # fmt: skip
            out.append(Measurement((a,), np.asarray(shrunk[a]), estimates[a][1]))
    return out


def _ordered(attr: object) -> bool:
    """A numeric attribute, or a categorical one declared ordered."""
    return isinstance(attr, Numeric) or (isinstance(attr, Categorical) and attr.ordered)


def ordinal_attributes(
    domain: Domain | None, ordinal: Sequence[str] | str | None, g: int
) -> dict[int, int]:
    """The attributes the ordinal coarsening may cut into bins, each with the number of its
    leading values that are ordered (public: the domain and the user's declaration):
    ``ordinal`` names them, or is ``"numeric"`` (every numeric attribute of the domain: its
    bins, in the order of their edges; a "missing" value after them is not ordered; and every
    categorical one declared ``ordered``; none without a domain); None or empty: none. A
    named categorical attribute is declared ordered in its codes' order (adult-pgm's ``age``
    17-90 as codes 0-84)."""
    if ordinal is None or len(ordinal) == 0:
        return {}
    if ordinal == "numeric" and (domain is None or len(domain.names) != g):
        return {}  # no domain (or not one attribute per column): no numeric column known
    if domain is None or len(domain.names) != g:
        got = "none" if domain is None else len(domain.names)
        raise DPQueryError(f"ordinal needs a domain with one attribute per column, got {got} "
                           f"for {g} columns")  # fmt: skip
    if isinstance(ordinal, str):
        if ordinal != "numeric":
            raise DPQueryError(f"ordinal must be 'numeric' or a list of attribute names, got "
                               f"{ordinal!r}")  # fmt: skip
        names = [a.name for a in domain.attributes if _ordered(a)]
    else:
        names = list(ordinal)
    out: dict[int, int] = {}
    for name in names:
        if name not in domain.names:
            raise DPQueryError(f"ordinal attribute {name!r} is not in the domain "
                               f"({list(domain.names)[:8]}...)")  # fmt: skip
        a = list(domain.names).index(name)
        attr = domain.attributes[a]
        out[a] = attr.n_bins if isinstance(attr, Numeric) else _leading(attr)
    return out


def _leading(attr: Categorical | Binary) -> int:
    """A named attribute's ordered values: a categorical one's before its missing or
    catch-all category (which are not on its scale), all of them otherwise."""
    if isinstance(attr, Binary):
        return attr.size
    apart = {attr.missing, attr.other} - {None}
    return next((i for i, v in enumerate(attr.values) if v in apart), attr.size)


def ordinal_names(domain: Domain | None, ordinal: Iterable[int]) -> list[str]:
    """The names of the attributes ``ordinal`` (e.g. :func:`ordinal_attributes`' answer)."""
    assert domain is not None
    return [domain.names[a] for a in sorted(ordinal)]


@dataclass(kw_only=True, eq=False)
class AdaptiveProjection(ZCDPBudget, Synthesizer):
    """Private synthetic data by AIM's adaptive marginal selection and a record-set projection
    (module docstring): a :class:`~dpquery.algorithms.synthesizer.Synthesizer` releasing
    ``records`` equal-weight records (default ``min(n, 50,000)``). ``T`` (default
    ``round_scale g (n rho)^(1/3)`` within ``[max(16, g + 2), 16 g]``, :func:`plan_adaptive`)
    and ``alpha`` are AIM's; ``sweeps`` and ``final_sweeps`` bound the projection;
    ``one_way`` and ``one_way_share`` split the 1-way measurements' budget
    (:func:`plan_adaptive`); ``column_tv`` (None or 0: off) re-measures the columns whose noisy
    1-way marginal is estimated past that total variation, spending at most ``column_cap``
    of the budget the 1-way measurements leave (:mod:`dpquery.algorithms.marginal.one_way`);
    ``pairs`` adds :func:`pair_candidates` to the selection's candidates; ``compress`` (a
    threshold ``c``, default 5; None or 0: off) adds every candidate on the domain compressed by
    the 1-way measurements (values below ``c sigma_a`` merged,
    :mod:`dpquery.algorithms.marginal.compress`; post-processing, no extra cost; docs/utility.md
    Tuning). ``coarse``, ``coarse_weight`` and ``coarse_final`` (default off) add the
    candidates on a more coarsely compressed domain (:func:`adaptive_marginals`).
    ``ordinal`` (names, ``"numeric"``: the domain's numeric columns, or ``[]``: none; None:
    :meth:`ordinal_spec`, ``"numeric"`` under add/remove, none under replace-one) declares the
    attributes whose values are ordered, and ``ordinal_bins`` (default 5) and
    ``ordinal_weight`` offer every candidate holding one of them again with it cut into
    contiguous bins of about equal noisy mass (:func:`ordinal_attributes`,
    :func:`~dpquery.algorithms.marginal.compress.ordinal_map`; post-processing, no extra
    cost; docs/utility.md, Method 6). ``within_bins`` (None: :meth:`within_bins_on`, on
    under add/remove, off under replace-one) interpolates the records within those bins after
    the final fit (:mod:`dpquery.algorithms.marginal.within_bins`; post-processing, no cost;
    docs/utility.md, Method 7). ``unlinked`` (passes; default 0: off, under either relation)
    permutes each attribute, after the final fit, among the records agreeing on the
    attributes it was measured with, so that no dependence the measurements do not link is
    left in the records (:mod:`dpquery.algorithms.marginal.unlinked`; post-processing, no
    cost; docs/utility.md, Method 8). ``pair_weight`` (None: :meth:`pair_weight_of`, 1.5 under
    add/remove, AIM's 1 under replace-one) multiplies the selection weight of every 2-way
    candidate (:func:`adaptive_marginals`; docs/utility.md, Method 2). ``max_share`` (default
    0: off) of the rounds, and the last one with ``max_final``, select by the largest cell
    error (MWEM's score, weighted as AIM's; the same selection charge and sensitivity bound:
    :func:`quality_scores`; docs/utility.md, Tuning under add/remove), a max round but the
    last measuring at ``max_scale`` times the round's ``sigma`` (charged at that scale).
    ``ranks`` (None: :meth:`ranks_on`, on under add/remove, off under replace-one) offers a
    key-like column's pair with an ordered one also on the ordered one's ranks within its
    ordinal bins (:func:`~dpquery.algorithms.marginal.compress.rank_candidates`; docs/learn.md,
    The worst pair).
    ``empty_cells`` (default 2; None or 0: off): last, a catch-all cell (a categorical
    attribute's ``other`` category, a numeric one's missing bin) whose combined noisy 1-way
    count is below that many noise standard deviations is taken as empty and its attribute's
    values are conditioned on it (:mod:`dpquery.algorithms.marginal.empty_cells`; post-processing,
    docs/learn.md).
    ``neighbours`` is the relation the guarantee is stated for (default
    ``"add-remove"``, ``n`` private: the fit draws a noisy ``n`` first; ``"replace-one"``:
    ``n`` public, :mod:`dpquery.privacy.neighbours`). ``seed`` fixes
    every random choice; ``progress`` shows the share of the budget spent
    (:func:`dpquery.progress.budget_progress`; False: nothing). Once :meth:`fit` runs,
    ``ledger_`` holds its ledger, even if the fit raises."""

    name: ClassVar[str] = "adaptive-projection"
    options: ClassVar[tuple[str, ...]] = (
        "epsilon", "delta", "rho", "T", "size", "compress", "column_tv", "ordinal",
    )  # fmt: skip

    T: int | None = None
    alpha: float | None = None
    size: int | None = None
    sweeps: int = DEFAULT_SWEEPS
    final_sweeps: int = DEFAULT_FINAL_SWEEPS
    round_scale: float = DEFAULT_ROUND_SCALE
    one_way: OneWay = DEFAULT_ONE_WAY
    one_way_share: float | None = None
    column_tv: float | None = DEFAULT_COLUMN_TV
    column_cap: float = DEFAULT_COLUMN_CAP
    pairs: bool = True
    compress: float | None = DEFAULT_COMPRESS
    coarse: float | None = None
    coarse_final: bool = False
    coarse_weight: float = 1.0
    ordinal: Sequence[str] | str | None = None
    ordinal_bins: int = DEFAULT_ORDINAL_BINS
    ordinal_weight: float = 1.0
    within_bins: bool | None = None
    empty_cells: float | None = DEFAULT_EMPTY_SIGMAS
    unlinked: int = 0
    pair_weight: float | None = None
    max_share: float = 0.0
    max_final: bool = False
    max_scale: float = 1.0
    ranks: bool | None = None
    shrinkage: Shrink | Literal[False] | None = None
    refine_partial: bool | None = None
    refine_shrunk: bool | None = None
    spelling_style: bool | None = None
    anneal: float | None = None
    neighbours: str = ADD_REMOVE
    seed: SeedLike = None
    progress: bool | None = None

    def __post_init__(self) -> None:
        self.ledger_: Ledger | None = None

    def validate(self) -> None:
        super().validate()
        check_neighbours(self.neighbours)
        z = self.empty_cells
        if z is not None and (
            isinstance(z, bool) or not isinstance(z, int | float) or not 0 <= z < math.inf
        ):
            raise DPQueryError(f"empty_cells must be a non-negative number of standard "
                               f"deviations, or None (off), got {z!r}")  # fmt: skip
        if self.shrinkage not in (None, False, *SHRINKS):
            raise DPQueryError(f"shrinkage must be one of {SHRINKS}, False (off) or None (the "
                               f"default), got {self.shrinkage!r}")  # fmt: skip

    def ordinal_spec(self) -> Sequence[str] | str | None:
        """``ordinal`` as given, or its default: the domain's numeric columns
        (:data:`ADD_REMOVE_ORDINAL`) under add/remove, none under replace-one (whose releases
        stay those it had before the option)."""
        if self.ordinal is not None:
            return self.ordinal
        return ADD_REMOVE_ORDINAL if self.neighbours == ADD_REMOVE else None

    def within_bins_on(self) -> bool:
        """``within_bins`` as given, or its default :data:`ADD_REMOVE_WITHIN_BINS` under
        add/remove, off under replace-one (whose releases stay as they were)."""
        if self.within_bins is not None:
            return bool(self.within_bins)
        return ADD_REMOVE_WITHIN_BINS if self.neighbours == ADD_REMOVE else False

    def ranks_on(self) -> bool:
        """``ranks`` as given, or its default :data:`ADD_REMOVE_RANKS` under add/remove, off
        under replace-one (whose releases stay as they were)."""
        if self.ranks is not None:
            return bool(self.ranks)
        return ADD_REMOVE_RANKS if self.neighbours == ADD_REMOVE else False

    def shrinkage_of(self) -> Shrink | None:
        """``shrinkage`` as given (False: off), or its default :data:`ADD_REMOVE_SHRINKAGE`
        under add/remove, off under replace-one (whose releases stay as they were)."""
        if self.shrinkage is False:
            return None
        if self.shrinkage is not None:
            return self.shrinkage
        return ADD_REMOVE_SHRINKAGE if self.neighbours == ADD_REMOVE else None

    def refine_partial_on(self) -> bool:
        """``refine_partial`` as given, or its default :data:`ADD_REMOVE_PARTIAL_REFINE` under
        add/remove, off under replace-one (whose releases stay as they were)."""
        if self.refine_partial is not None:
            return bool(self.refine_partial)
        return ADD_REMOVE_PARTIAL_REFINE if self.neighbours == ADD_REMOVE else False

    def refine_shrunk_on(self) -> bool:
        """``refine_shrunk`` as given, or its default :data:`ADD_REMOVE_REFINE_SHRUNK` under
        add/remove, off under replace-one (whose releases stay as they were)."""
        if self.refine_shrunk is not None:
            return bool(self.refine_shrunk)
        return ADD_REMOVE_REFINE_SHRUNK if self.neighbours == ADD_REMOVE else False

    def spelling_style_on(self) -> bool:
        """``spelling_style`` as given, or its default :data:`ADD_REMOVE_SPELLING_STYLE`
        under add/remove, off under replace-one (whose releases stay as they were)."""
        if self.spelling_style is not None:
            return bool(self.spelling_style)
        return ADD_REMOVE_SPELLING_STYLE if self.neighbours == ADD_REMOVE else False

    def pair_weight_of(self) -> float:
        """``pair_weight`` as given, or its default: :data:`ADD_REMOVE_PAIR_WEIGHT` under
        add/remove, AIM's 1 under replace-one (whose releases stay as they were)."""
        if self.pair_weight is not None:
            return float(self.pair_weight)
        return ADD_REMOVE_PAIR_WEIGHT if self.neighbours == ADD_REMOVE else 1.0

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None,
        n: int | None = None,
    ) -> AdaptivePlan:  # fmt: skip
        """The scales and budget :meth:`fit` would use; reads only public sizes (and refuses
        what it cannot run before anything is charged): ``n`` (default the data's, public
        under replace-one; under add-remove the fit passes the noisy ``n``)."""
        n = int(data.n) if n is None else n
        if workload.kind != "conjunction":
            raise DPQueryError(f"{self.name} answers conjunction workloads, not {workload.kind!r}")
        layout = AttributeLayout.of_data(data)
        if n * layout.g > MAX_CODES and not counts_elsewhere(data):
            raise DPQueryError(
                f"{self.name} holds the data as {n} records x {layout.g} attributes "
                f"= {n * layout.g} codes, more than {MAX_CODES}; use an oracle-efficient "
                "algorithm (fem, dqrs, dualquery) at this width"
            )
        positive_int("sweeps", self.sweeps)
        positive_int("final_sweeps", self.final_sweeps)
        if self.unlinked:  # passes of the step (0: off)
            positive_int("unlinked", self.unlinked)
        if self.compress:  # the threshold c: values below c sigma_a merge (None, 0: off)
            positive("compress", self.compress)
        if self.coarse:  # a second, larger threshold (None, 0: off)
            positive("coarse", self.coarse)
        positive("coarse_weight", self.coarse_weight)
        positive_int("ordinal_bins", self.ordinal_bins)
        positive("ordinal_weight", self.ordinal_weight)
        if self.pair_weight is not None:
            positive("pair_weight", self.pair_weight)
        if not (isinstance(self.max_share, int | float) and 0 <= self.max_share <= 1):
            raise DPQueryError(f"max_share must be a share of the rounds in [0, 1], got "
                               f"{self.max_share!r}")  # fmt: skip
        positive("max_scale", self.max_scale)
        ordinal_attributes(data.domain, self.ordinal_spec(), layout.g)
        if self.size is not None:
            positive_int("size", self.size)
        uses = np.zeros(layout.g, dtype=np.int64)
        marginals = workload_marginals(workload, layout)
        for r in marginals:
            uses[list(r)] += 1
        # What the data is read for, fixed now (public): refused here if it cannot be held.
        pairs = pair_candidates(layout.sizes, n) if self.pairs else []
        check_candidate_cells(layout, counted_marginals(candidates_of(marginals, pairs), layout.g))
        return plan_adaptive(
            n=n, sizes=layout.sizes.tolist(), **self.budget_keywords(budget, n), T=self.T,
            alpha=self.alpha, records=self.size, round_scale=self.round_scale,
            one_way=self.one_way, uses=uses.tolist(), one_way_share=self.one_way_share,
            column_tv=self.column_tv, column_cap=self.column_cap, neighbours=self.neighbours,
            anneal=self.anneal,
        )  # fmt: skip

    def plan_accountant(self, plan: AdaptivePlan) -> Accountant:
        return ZCDPAccountant(bounded_range=True, conversion="cks")

    def reads_answers(self, plan: AdaptivePlan) -> bool:
        """No: the run reads the data only through its candidates' marginal counts."""
        return False

    def run(self, run: Run) -> Outcome:
        self.ledger_ = run.ledger
        layout = AttributeLayout.of_data(run.data)
        marginals = workload_marginals(run.workload, layout)
        ordinal = ordinal_attributes(run.data.domain, self.ordinal_spec(), layout.g)
        how = self.shrinkage_of()
        with budget_progress(self.name, run.plan.rho, run.ledger, self.progress) as on_round:
            X, rounds = adaptive_marginals(
                DataSource(run.data, layout), layout.sizes, marginals, plan=run.plan,
                rng=run.rng, ledger=run.ledger, sweeps=self.sweeps,
                final_sweeps=self.final_sweeps, pairs=self.pairs, on_round=on_round,
                compress=self.compress, n=run.records_n, coarse=self.coarse,
                coarse_final=self.coarse_final, coarse_weight=self.coarse_weight,
                ordinal=ordinal, ordinal_bins=self.ordinal_bins,
                ordinal_weight=self.ordinal_weight, within_bins=self.within_bins_on(),
                empty=catch_all_cells(run.data.domain, layout.sizes) if self.empty_cells
                else None, empty_sigmas=self.empty_cells or DEFAULT_EMPTY_SIGMAS,
                ruled=ruled_cells(run.data.domain, layout.sizes) if self.empty_cells else None,
                ruled_sigmas=ruled_sigmas_of(run.data.domain, layout.sizes),
                ruled_low=ruled_low_cells(run.data.domain, layout.sizes) if self.empty_cells
                else None,
                vocab=vocabulary_cells(run.data.domain, layout.sizes) if self.empty_cells
                else None,
                listed=listed_cells(run.data.domain, layout.sizes) if self.empty_cells
                else None,
                places=place_columns(run.data.domain, layout.sizes)
                if self.empty_cells and self.spelling_style_on() else None,
                unlinked=self.unlinked, pair_weight=self.pair_weight_of(),
                max_share=self.max_share, max_final=self.max_final, max_scale=self.max_scale,
                ranks=self.ranks_on(),
                shrink=shrink_cells(run.data.domain, layout.sizes) if how else None,
                shrink_how=how or "js", refine_partial=self.refine_partial_on(),
                refine_shrunk=listed_shrink_cells(run.data.domain, layout.sizes)
                if self.refine_shrunk_on() else None,
            )  # fmt: skip
        sources = column_sources(
            run.data, tuple(attributes_of(run.data.d, run.data.onehot_groups)), "1-way marginal"
        )
        cut: list[int] = next((r["attributes"] for r in rounds if r["round"] == "within bins"), [])
        refinement = refinement_report(rounds, list(sources), run.plan.rho)
        parameters = {
            **asdict(run.plan), "budget": run.plan.budget.to_dict(),
            "pair_candidates": len(pair_candidates(layout.sizes, run.records_n))
            if self.pairs else 0,
            "workload_marginals": len(marginals), "sweeps": self.sweeps,
            "compress": self.compress,
            "coarse": {"threshold": self.coarse, "weight": self.coarse_weight,
                       "final": self.coarse_final} if self.coarse else None,
            "ordinal": {"attributes": ordinal_names(run.data.domain, ordinal),
                        "bins": self.ordinal_bins, "weight": self.ordinal_weight,
                        **({"within_bins": ordinal_names(run.data.domain, cut)}
                           if cut else {})}
            if ordinal else None,
            **({"unlinked": self.unlinked} if self.unlinked else {}),
            **({"pair_weight": self.pair_weight_of()} if self.pair_weight_of() != 1.0 else {}),
            **({"shrinkage": how} if how else {}),
            **({"refine_partial": True} if self.refine_partial_on() else {}),
            **({"refine_shrunk": True} if self.refine_shrunk_on() else {}),
            **({"max_score": {"share": self.max_share, "final": self.max_final}}
               if self.max_share or self.max_final else {}),
            "final_sweeps": self.final_sweeps, "accountant": run.ledger.accountant.name,
            "columns": {  # every attribute's 1-way marginal is measured first
                "measured": layout.g, "sources": sources, "refined": refinement.pop("refined"),
            },
            "column_refinement": {
                "target": run.plan.column_tv, "cap": run.plan.column_cap, **refinement,
            },
        }  # fmt: skip
        records = Records(layout.to_rows(X), None, run.data.domain)
        return Outcome(records, rounds, parameters, timings={})


__all__: Sequence[str] = [
    "AdaptivePlan",
    "AdaptiveProjection",
    "adaptive_marginals",
    "candidates_of",
    "max_noise",
    "max_round",
    "measure",
    "measure_rho",
    "pair_candidates",
    "plan_adaptive",
    "quality_scores",
    "select",
    "select_rho",
]
