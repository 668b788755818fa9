"""Private quantiles: the exponential mechanism over a public grid of candidates.

Smith 2011 ("Privacy-preserving statistical estimation with optimal convergence rates",
STOC 2011, Section 3) releases a quantile with the exponential mechanism (McSherry and Talwar
2007) whose score is how far a candidate's rank is from the target rank. Here the candidates
are a public, finite grid (:func:`signed_log_grid`) and the score is the one of OpenDP's
``make_quantile_score_candidates`` (``src/transformations/quantile_score_candidates``), negated
so that higher is better:

    score_alpha(c) = -| (1 - alpha) #{x < c} - alpha #{x > c} |.

It is 0 at an exact alpha-quantile and counts ties fairly (a candidate equal to many values
is neither below nor above them).

**Sensitivity 1 under replace-one** (n public; a record may also be absent from ``values``,
e.g. missing): replacing one record moves one value between the three sets ``{x < c}``,
``{x = c}``, ``{x > c}`` (or into or out of them), so ``#{x < c}`` and ``#{x > c}`` change by
at most 1 each and not both in the same direction: the inner difference moves by at most
``(1 - alpha) + alpha = 1``. (OpenDP states ``max(alpha, 1 - alpha)`` per added or removed
record; a replacement is one of each, and a value that crosses ``c`` moves the score by
exactly 1.) :func:`quantile_scores` computes it exactly from the sorted values.

**Sensitivity ``max(alpha, 1 - alpha)`` under add/remove** (n private): adding a value
``x`` adds 1 to ``#{x < c}`` for every candidate ``c > x`` (the inner difference moves by
``1 - alpha``), 1 to ``#{x > c}`` for every ``c < x`` (it moves by ``-alpha``) and nothing
where ``c = x``; removing one is the reverse. So every score moves by at most ``max(alpha,
1 - alpha)``, the bound OpenDP's ``make_quantile_score_candidates`` states per added or
removed record (its stability map under ``InsertDeleteDistance``, scaled to integers there).
:func:`quantile_sensitivity`
gives it and :func:`private_quantiles` calibrates each draw to it (``add_remove=True``):
at ``alpha = 1/2`` the scores are scaled by ``epsilon`` rather than ``epsilon / 2`` at the
same cost, ``alpha = 1/16`` by ``epsilon / (2 * 15/16)``.

**Bounds.** The exponential mechanism finds extreme quantiles badly: every candidate below
the smallest value scores within ``alpha n`` of the best. So the range comes first, from a
noisy histogram over fixed buckets of magnitude (:func:`magnitude_buckets`: 0, and ``[1, 2)``,
``[2, 5)``, ``[5, 10)`` times each power of ten, either sign), the approach of Google's
differential privacy library (``ApproxBounds``: a noisy histogram over logarithmic bins, the
outermost bins above a threshold). One record falls in one bucket, so the count vector has L2
sensitivity ``sqrt(2)`` under replace-one and 1 under add/remove (one bucket moves by 1; the
``sensitivity`` argument of :func:`private_bounds` and :func:`bucket_threshold`);
:func:`private_bounds` releases the lowest and highest
bucket ends whose noisy counts reach a threshold (:func:`bucket_threshold`: the count an
empty bucket's noise reaches with a stated small probability, over all buckets; a
post-processing of the discrete Gaussian: ``rho``-zCDP, CKS Theorem 4; the buckets are
public, so no ``delta``).

**Cost.** Each draw is the exponential mechanism with ``epsilon``: ``epsilon``-DP and
``epsilon``-bounded range (Durfee and Rogers 2019), so ``epsilon^2 / 8``-zCDP (Cesar and Rogers
2021). :func:`private_quantiles` charges the ledger once for its ``k`` draws, as ``k``
invocations of ``PureDP(epsilon, bounded_range=True)``, before it draws;
:func:`quantile_epsilon` is the largest ``epsilon`` whose ``k`` draws fit in ``rho``.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpquery.privacy import _validate
from dpquery.privacy.costs import PureDP
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism, discrete_gaussian_sigma2
from dpquery.privacy.ledger import Ledger
from dpquery.privacy.mechanisms import _check_ledger
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.sampling import _check_rng, sample_from_log_weights

QUANTILE_SENSITIVITY = 1.0
"""The replace-one sensitivity of :func:`quantile_scores` (module docstring)."""


def quantile_sensitivity(alpha: float, add_remove: bool = False) -> float:
    """The sensitivity of :func:`quantile_scores` at ``alpha``: :data:`QUANTILE_SENSITIVITY`
    (1) under replace-one, ``max(alpha, 1 - alpha)`` under add/remove (module docstring;
    OpenDP's ``make_quantile_score_candidates``). Public: reads no data."""
    a = _validate.real("alpha", alpha)
    if not 0.0 <= a <= 1.0:
        raise PrivacyParameterError(f"alpha must be in [0, 1], got {alpha!r}")
    return max(a, 1.0 - a) if add_remove else QUANTILE_SENSITIVITY


MANTISSAS = tuple(range(10, 100))
"""The grid's mantissas in tenths: 1.0, 1.1, ..., 9.9 (two significant digits)."""


def signed_log_grid(
    min_exponent: int = -4, max_exponent: int = 9, decimals: int | None = None
) -> NDArray[np.float64]:
    """The public candidates: 0 and ``+-m 10^e`` for every two-digit mantissa ``m`` in
    1.0 .. 9.9 and exponent ``e`` in ``[min_exponent, max_exponent]``, sorted.

    Relative resolution 1-10% wherever the values lie, from ``10^min_exponent`` to ``9.9
    10^max_exponent`` (every integer up to 99, every 10 up to 990, ...), so one grid serves
    ages and incomes alike. Each point is the float nearest its decimal (0.3, not
    0.30000000000000004). With ``decimals``, the points rounded to that many decimals,
    duplicates dropped: the candidates a column of that precision can take. Reads no data."""
    lo = _validate.integer("min_exponent", min_exponent, minimum=-300)
    hi = _validate.integer("max_exponent", max_exponent, minimum=lo)
    mags = [float(Decimal(m).scaleb(e - 1)) for e in range(lo, hi + 1) for m in MANTISSAS]
    grid = np.array(sorted({0.0, *mags, *(-x for x in mags)}), dtype=np.float64)
    if decimals is not None:
        k = _validate.integer("decimals", decimals, minimum=0)
        # digits enough for the largest point at k decimals (the default context's 28 are
        # not, for a column learned at 14 decimals beyond 10^14)
        with localcontext(prec=max(28, hi + k + 4)):
            grid = np.unique(np.array([float(round(Decimal(repr(float(x))), k)) for x in grid]))
    return grid


def quantile_scores(values: ArrayLike, candidates: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """``-|(1 - alpha) #{x < c} - alpha #{x > c}|`` for every candidate ``c`` (module
    docstring): sensitivity :data:`QUANTILE_SENSITIVITY` under replace-one."""
    a = _validate.real("alpha", alpha)
    if not 0.0 <= a <= 1.0:
        raise PrivacyParameterError(f"alpha must be in [0, 1], got {alpha!r}")
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if np.isnan(x).any():
        raise PrivacyParameterError("values must not hold NaN (drop missing values first)")
    c = np.asarray(candidates, dtype=np.float64)
    below = np.searchsorted(x, c, side="left")
    above = x.size - np.searchsorted(x, c, side="right")
    return -np.abs((1.0 - a) * below - a * above)


def quantile_epsilon(rho: float, draws: int) -> float:
    """The largest ``epsilon`` whose ``draws`` exponential-mechanism draws, each
    ``epsilon^2 / 8``-zCDP (Cesar and Rogers 2021), compose (Bun and Steinke 2016, Lemma 2.3)
    to at most ``rho``: ``sqrt(8 rho / draws)``, nudged down past float rounding."""
    r = _validate.positive("rho", rho)
    k = _validate.integer("draws", draws, minimum=1)
    eps = math.sqrt(8.0 * r / k)
    while k * (eps * eps / 8.0) > r:
        eps = math.nextafter(eps, 0.0)
    return eps


def private_quantiles(
    values: ArrayLike,
    candidates: ArrayLike,
    alphas: ArrayLike,
    *,
    epsilon: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "quantiles (exponential mechanism)",
    add_remove: bool = False,
) -> NDArray[np.float64]:
    """One candidate per ``alpha``, each drawn with probability ``~ exp(epsilon score / (2
    Delta))`` (Smith 2011; scores of :func:`quantile_scores`, ``Delta`` their sensitivity
    under the relation, :func:`quantile_sensitivity`: 1 under replace-one, ``max(alpha, 1 -
    alpha)`` with ``add_remove``). Each draw is ``epsilon``-DP and ``epsilon``-bounded range
    (McSherry and Talwar 2007; Durfee and Rogers 2019) under that relation. Charges
    ``len(alphas)`` invocations of ``PureDP(epsilon, bounded_range=True)`` before the first
    draw; the draws are independent, returned in the order of ``alphas`` (not sorted)."""
    eps = _validate.positive("epsilon", epsilon)
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    a = np.asarray(alphas, dtype=np.float64).ravel()
    c = np.asarray(candidates, dtype=np.float64).ravel()
    if a.size == 0 or c.size == 0:
        raise PrivacyParameterError("private_quantiles needs at least one alpha and candidate")
    if not np.isfinite(c).all():
        raise PrivacyParameterError("candidates must be finite numbers")
    x = np.asarray(values, dtype=np.float64).ravel()
    log_w = [
        quantile_scores(x, c, float(q)) * (eps / (2 * quantile_sensitivity(float(q), add_remove)))
        for q in a
    ]
    ledger.charge(name, PureDP(eps, bounded_range=True), count=int(a.size))
    return np.array([c[int(sample_from_log_weights(w, 1, rng)[0])] for w in log_w])


BOUND_SENSITIVITY = math.sqrt(2.0)
"""The replace-one L2 sensitivity of the bucket counts of :func:`private_bounds`."""
ADD_REMOVE_BOUND_SENSITIVITY = 1.0
"""Their add/remove L2 sensitivity: one record moves one bucket by 1."""


def magnitude_buckets(min_exponent: int = -4, max_exponent: int = 9) -> NDArray[np.float64]:
    """The public bucket edges of :func:`private_bounds`, increasing: ``+-{1, 2, 5} 10^e`` for
    ``e`` in ``[min_exponent, max_exponent]``, ``+-10^(max_exponent + 1)`` and 0. Values
    beyond the outer edges count in the outer buckets."""
    lo = _validate.integer("min_exponent", min_exponent, minimum=-300)
    hi = _validate.integer("max_exponent", max_exponent, minimum=lo)
    mags = [float(Decimal(m).scaleb(e)) for e in range(lo, hi + 1) for m in (1, 2, 5)]
    mags.append(float(Decimal(1).scaleb(hi + 1)))
    return np.array(sorted({0.0, *mags, *(-x for x in mags)}), dtype=np.float64)


def bucket_counts(values: ArrayLike, edges: ArrayLike) -> NDArray[np.int64]:
    """How many values fall in each bucket ``[edges[i], edges[i+1])`` (values below the first
    edge in the first bucket, at or above the last in the last): one bucket per value."""
    e = np.asarray(edges, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64).ravel()
    idx = np.clip(np.searchsorted(e, x, side="right") - 1, 0, e.size - 2)
    return np.bincount(idx, minlength=e.size - 1).astype(np.int64)


def bucket_threshold(
    rho: float, buckets: int, false_rate: float, sensitivity: float = BOUND_SENSITIVITY
) -> int:
    """The smallest integer ``tau >= 1`` such that, at the noise of :func:`private_bounds` at
    ``rho``, each of ``buckets`` empty buckets reaches ``tau`` with probability at most
    ``false_rate / buckets`` (``P(Z >= tau)``, ``Z ~ N_Z(0, sigma^2)``): by the union bound, a
    bucket holding no value is taken as occupied with probability at most ``false_rate``.
    ``sensitivity``: that of the histogram drawn (:func:`private_bounds`'s). Public: reads no
    data."""
    r = _validate.positive("rho", rho)
    k = _validate.integer("buckets", buckets, minimum=1)
    p = _validate.open_unit("false_rate", false_rate)
    l2 = _validate.positive("sensitivity", sensitivity)
    return partition_threshold(discrete_gaussian_sigma2(r, l2), p / k)


def private_bounds(
    values: ArrayLike,
    *,
    rho: float,
    threshold: float,
    rng: np.random.Generator,
    ledger: Ledger,
    edges: ArrayLike | None = None,
    window: tuple[int, float] | None = None,
    grow: tuple[float, float] | None = None,
    name: str = "bounds (discrete Gaussian histogram)",
    sensitivity: float = BOUND_SENSITIVITY,
) -> tuple[float, float, NDArray[np.int64]] | None:
    """``(lo, hi, noisy counts)``: the lower end of the lowest and the upper end of the
    highest bucket (:func:`magnitude_buckets`, or ``edges``) whose noisy count reaches
    ``threshold`` (a count; :func:`bucket_threshold` bounds the chance that an empty bucket
    does); None when no bucket does. ``window = (w, t)``: a run of ``w`` consecutive buckets
    whose noisy counts sum to at least ``t`` counts as occupied too (a tail spread thinly over
    several buckets; post-processing of the same noisy counts). ``grow = (t1, tw)``: the
    bounds are grown from the mode instead (:func:`grown_bounds`; ``threshold`` then applies
    to the mode alone). ``sensitivity``: the counts' L2 sensitivity,
    :data:`BOUND_SENSITIVITY` under replace-one, :data:`ADD_REMOVE_BOUND_SENSITIVITY` under
    add/remove (the thresholds are the caller's: compute them at the same one). Charges
    ``ZCDP(rho)`` before it draws (module docstring)."""
    t = _validate.positive("threshold", threshold)
    e, noisy = bounds_histogram(
        values, rho=rho, rng=rng, ledger=ledger, edges=edges, name=name, sensitivity=sensitivity
    )
    return read_bounds(noisy, e, t, window, grow)


def bounds_histogram(
    values: ArrayLike,
    *,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    edges: ArrayLike | None = None,
    name: str = "bounds (discrete Gaussian histogram)",
    sensitivity: float = BOUND_SENSITIVITY,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The bucket edges and the noisy counts :func:`private_bounds` reads: the discrete
    Gaussian histogram of ``values`` over the buckets (:func:`magnitude_buckets`, or
    ``edges``; :func:`bucket_counts`) at ``rho`` and L2 ``sensitivity``. Charges
    ``ZCDP(rho)`` before it draws (CKS 2020, Theorem 4; module docstring)."""
    r = _validate.positive("rho", rho)
    l2 = _validate.positive("sensitivity", sensitivity)
    e = magnitude_buckets() if edges is None else np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or not np.isfinite(e).all() or (np.diff(e) <= 0).any():
        raise PrivacyParameterError("bucket edges must be at least two increasing finite numbers")
    counts = bucket_counts(values, e)
    noisy = discrete_gaussian_mechanism(
        counts, rho=r, sensitivity=l2, rng=rng, ledger=ledger, name=name
    )
    return e, noisy


def read_bounds(
    noisy: NDArray[np.int64],
    e: NDArray[np.float64],
    t: float,
    window: tuple[int, float] | None = None,
    grow: tuple[float, float] | None = None,
) -> tuple[float, float, NDArray[np.int64]] | None:
    """:func:`private_bounds`' reading of the noisy counts ``noisy`` over the buckets of
    edges ``e`` at the threshold ``t`` (``window``, ``grow``: as there): post-processing of
    :func:`bounds_histogram` (Bun and Steinke 2016, Lemma 1.8), no further cost."""
    if grow is not None:
        w = BOUND_GROW_WINDOW if window is None else window[0]
        zeros = np.flatnonzero(e[:-1] == 0.0)  # the bucket starting at 0, when the edges have one
        run = grown_bounds(noisy, t, grow[0], grow[1], w, int(zeros[0]) if zeros.size else None)
        return None if run is None else (float(e[run[0]]), float(e[run[1] + 1]), noisy)
    occupied = noisy >= t
    if window is not None:
        w = _validate.integer("window size", window[0], minimum=1)
        tw = _validate.positive("window threshold", window[1])
        if w <= noisy.size:
            ones = np.ones(w, dtype=np.int64)
            sums = np.convolve(noisy, ones, "valid")
            alone = np.convolve(occupied.astype(np.int64), ones, "valid") > 0
            # a run holding an occupied bucket passes by that bucket alone: it says nothing
            # about its other buckets, so only runs of buckets none of which is occupied count
            for i in np.flatnonzero((sums >= tw) & ~alone):
                occupied[i : i + w] = True
    found = np.flatnonzero(occupied)
    if found.size == 0:
        return None
    return float(e[found[0]]), float(e[found[-1] + 1]), noisy


BOUND_GROW_WINDOW = 3
"""The run of buckets :func:`grown_bounds` tests at once beyond a bucket that fails alone."""


def grown_bounds(
    noisy: ArrayLike, mode_threshold: float, step_threshold: float, window_threshold: float,
    window: int = BOUND_GROW_WINDOW, zero: int | None = None, skip: float = math.inf,
) -> tuple[int, int] | None:  # fmt: skip
    """The first and last bucket of the run grown from the mode of ``noisy`` (post-processing
    of :func:`private_bounds`' noisy counts): None when the largest count is below
    ``mode_threshold`` (no bucket is taken as occupied); otherwise, on each side, the next
    bucket joins while its count reaches ``step_threshold``, or the next ``window`` buckets
    (with the side's end) join when their sum reaches ``window_threshold``; growth stops on
    a side at the first failure (``skip``: see :func:`grown_run`). ``zero``: the index of
    the bucket starting at 0; growth from a mode on one side of 0 crosses it only by a
    bucket whose count alone reaches ``mode_threshold`` (no run): a sign the mode's side
    lacks is as unlikely a priori as a far bucket, so it needs the mode's evidence, not a
    single step's.

    Why: the union-bound threshold of :func:`bucket_threshold` guards every one of a column's
    ~90 buckets at once, which at a small table's noise hides buckets holding a tenth of the
    records. Grown from the mode, a bucket is tested only when its neighbour was taken, so a
    bound lands ``k`` buckets beyond the data only after ``k`` consecutive false passes
    (probability at most ``p^k`` for a per-step false rate ``p``): the per-step threshold
    can be a single test's, and a far bucket that the noise alone lifts (a bound of 10^6 on
    a column of codes 1..6) is never reached. The mode is the bucket with the most records,
    up to the noise.

    Privacy: a function of the noisy counts alone (and public thresholds), so it costs
    nothing beyond :func:`private_bounds`' discrete Gaussian histogram (``rho``-zCDP, CKS
    2020 Theorem 4), by post-processing (Dwork and Roth 2014, Proposition 2.1; Bun and
    Steinke 2016, Lemma 1.8 for zCDP). The growth rule is the sequential extension of
    Google's ``ApproxBounds`` idea (the outermost bins above a threshold) to one contiguous
    run, so that the thresholds need no union bound over every bucket."""
    x = np.asarray(noisy, dtype=np.float64)
    if x.size == 0 or x.max() < mode_threshold:
        return None
    mode = int(np.argmax(x))  # the first of equal maxima: a public tie rule
    return grown_run(x, (mode, mode), mode_threshold, step_threshold, window_threshold, window,
                     zero, skip)  # fmt: skip


def grown_run(
    noisy: ArrayLike, run: tuple[int, int], cross_threshold: float, step_threshold: float,
    window_threshold: float, window: int = BOUND_GROW_WINDOW, zero: int | None = None,
    skip: float = math.inf,
) -> tuple[int, int]:  # fmt: skip
    """The run of buckets ``run = (first, last)`` (taken as occupied) grown on each side by
    the steps of :func:`grown_bounds`: the next bucket joins while its count in ``noisy``
    reaches ``step_threshold``, or the next ``window`` buckets when their sum reaches
    ``window_threshold``; a side stops at its first failure, and crosses the bucket starting
    at 0 (index ``zero``) only by a count alone reaching ``cross_threshold``. ``skip``: when
    both fail, a side crosses one thin bucket to the ``window`` buckets beyond it when their
    sum reaches ``skip`` (a threshold; not across 0): a tail whose nearest bucket the noise
    put low (a card's share of spending, 31% of the values in ``[0.0001, 0.01)``, stopped at
    ``[0.005, 0.01)``, noisy 21 of 46) is reached by the run beyond it, at one more test a
    side at ``skip``'s false rate.
    :func:`grown_bounds` grows the mode this way; a large table's union-bound bounds are
    grown so too (``dpquery.domain_learning``, :data:`~dpquery.domain_learning.BOUND_STEP_RATE`).
    Post-processing of the noisy counts (no further cost)."""
    x = np.asarray(noisy, dtype=np.float64)
    w = _validate.integer("window", window, minimum=1)
    lo, hi = run
    if not 0 <= lo <= hi < x.size:
        raise PrivacyParameterError(f"run {run} is not a run of the {x.size} buckets")
    z = -1 if zero is None else _validate.integer("zero", zero, minimum=0)
    while True:
        if lo == z and z >= 1:  # into the negatives from a mode at or above 0
            if x[lo - 1] < cross_threshold:
                break
            lo -= 1
        elif lo >= 1 and x[lo - 1] >= step_threshold:
            lo -= 1
        elif (
            lo >= w and (z < 0 or not lo - w < z <= lo) and x[lo - w : lo].sum() >= window_threshold
        ):
            lo -= w
        elif (
            lo >= w + 1
            and (z < 0 or not lo - w - 1 < z <= lo)
            and x[lo - w - 1 : lo - 1].sum() >= skip
        ):
            lo -= w + 1  # across one thin bucket
        else:
            break
    while True:
        if hi + 1 == z:  # into the non-negatives from a mode below 0
            if x[hi + 1] < cross_threshold:
                break
            hi += 1
        elif hi + 1 < x.size and x[hi + 1] >= step_threshold:
            hi += 1
        elif (
            hi + w < x.size
            and (z < 0 or not hi < z <= hi + w)
            and x[hi + 1 : hi + 1 + w].sum() >= window_threshold
        ):
            hi += w
        elif (
            hi + 1 + w < x.size
            and (z < 0 or not hi < z <= hi + 1 + w)
            and x[hi + 2 : hi + 2 + w].sum() >= skip
        ):
            hi += w + 1  # across one thin bucket
        else:
            break
    return lo, hi
