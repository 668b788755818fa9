"""Empirical-Bayes shrinkage of a categorical column's noisy 1-way counts before the fit.

A categorical column of many values of about equal count, measured at a small table's 1-way
noise (``sigma`` comparable to each value's count: 51 states of 14 to 22 records at a noise
sd of about 20), has a noisy 1-way vector whose spread is mostly noise: the fit follows it
(:mod:`dpquery.algorithms.marginal.projection`), and the column's shape (its total variation
from the data's) is the noise's. The values' counts are many draws of one kind, so their
spread can be estimated from the same noisy counts and the noise taken out of it.

With ``y_c = x_c + e_c``, ``e_c ~ N(0, sigma^2)`` independent (the discrete Gaussian's
variance is below ``sigma^2``; Canonne, Kamath and Steinke 2020), over the ``k`` values ``c``
of a column tested together:

- **James-Stein toward the column's mean** (positive part; Efron and Morris 1973, 1975):
  ``y_bar = mean(y)``, ``S = sum_c (y_c - y_bar)^2`` and

      x_hat_c = y_bar + (1 - B) (y_c - y_bar),   B = min(1, (k - 3) sigma^2 / S),

  the empirical-Bayes posterior mean under a normal prior ``N(mu, tau^2)`` of the counts with
  ``mu`` and ``tau^2`` estimated (``S / (k - 3)`` estimates ``sigma^2 + tau^2``). Where the
  counts differ by much more than the noise (a skewed column: ``S >> k sigma^2``) ``B`` is
  near 0 and the counts are kept; where they differ by no more than the noise, ``B`` is near
  1 and every count goes to the mean. It keeps the counts' sum; its risk (summed squared
  error) is below the raw counts' ``k sigma^2`` for every ``x`` when ``k >= 4`` (Stein 1956;
  James and Stein 1961; the positive part lowers it further, Baranchik 1964).
- **The posterior mean under a prior estimated without a form** (:func:`posterior_means`):
  the prior of the counts is the nonparametric maximum likelihood estimate (Kiefer and
  Wolfowitz 1956) on the grid 0, ``sigma / 2``, ... past the largest count, by EM (Jiang and
  Zhang 2009), the same as :func:`~dpquery.algorithms.marginal.empty_cells.null_posteriors`
  reads, and each count is replaced by its posterior mean. It shrinks toward the groups the
  counts form (the states of a column that also lists empty territories: toward 0 and toward
  about 21), not toward one mean.
- **A prior of two groups** (:func:`two_group_prior`): a point mass at 0 (an empty share
  ``pi0``) and one at a level ``mu``, two parameters fitted by EM, for a column whose domain
  lists many members the table lacks (a vocabulary's places); each count is replaced by its
  posterior mean (``"tg"``) or median (``"tgm"``: ``mu`` or 0), and ``"jstg"`` takes the
  median under this prior where its likelihood beats James-Stein's normal prior by
  :data:`TWO_GROUP_MARGIN` (:func:`two_group_gain`), James-Stein elsewhere. Measured and not
  the default (``docs/learn.md``, "Phantoms at the noise floor: a prior of two groups").

Privacy: post-processing (Bun and Steinke 2016, Lemma 1.8) of the 1-way measurements, already
charged, with their public noise scale; the cells shrunk are fixed by the public domain
(:func:`shrink_cells`). Nothing is drawn and nothing charged. The shrunk counts are the fit's
target for the column's 1-way marginal; the empty-cell tests and the compression read the
measurements themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from dpquery.data.domain import Categorical, Domain

Shrink = Literal["js", "eb", "ebm", "tg", "tgm", "jstg"]
SHRINKS: tuple[Shrink, ...] = ("js", "eb", "ebm", "tg", "tgm", "jstg")
SHRINK_MIN_CELLS = 4
"""A column is shrunk only when it has at least this many cells to shrink: James-Stein's
factor ``k - 3`` (toward an estimated mean) is positive from 4 on."""
SHRINK_MIN_FACTOR = 0.5
"""James-Stein is applied to a column only when its factor ``B`` is at least this: when the
noise accounts for at least half of the counts' spread (``S <= 2 (k - 3) sigma^2``), the
near-uniform columns it is for. A column whose counts differ by much more than the noise
keeps its counts, so the records of a large table's release do not move for a gain of a
fraction of one noise variance (a preliminary-test estimator: Sclove, Morris and
Radhakrishnan 1972)."""
TWO_GROUP_MARGIN = 0.5
"""``"jstg"``: a column's counts take the prior of two groups (an empty share and one level)
rather than James-Stein's normal prior when its log-likelihood is larger by at least this
(:func:`two_group_gain`)."""
TWO_GROUP_LEVEL = 0.5
"""The thresholded rule of the prior of two groups gives a count the level ``mu`` where its
posterior probability of the level is at least this (one half: its posterior median), 0
elsewhere."""
SHRINK_GRID_STEP = 0.5
"""The grid of :func:`posterior_means`' prior, in units of ``sigma`` (as
:data:`~dpquery.algorithms.marginal.empty_cells.LISTED_GRID_STEP`)."""
SHRINK_ITERATIONS = 500
"""EM iterations of :func:`posterior_means`' prior (a fixed number: the rule reads no clock)."""


def james_stein(y: np.ndarray, sigma: float) -> np.ndarray:
    """The positive-part James-Stein estimate of the counts ``x`` from ``y = x + N(0,
    sigma^2)`` (independent cells), toward their mean: ``y_bar + (1 - B) (y - y_bar)``,
    ``B = min(1, (k - 3) sigma^2 / sum (y - y_bar)^2)`` (module docstring). Fewer than
    :data:`SHRINK_MIN_CELLS` cells, or ``sigma <= 0``, are returned as they are."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < SHRINK_MIN_CELLS or sigma <= 0:
        return y.copy()
    mean = float(y.mean())
    return np.asarray(mean + (1.0 - stein_factor(y, sigma)) * (y - mean))


def stein_factor(y: np.ndarray, sigma: float) -> float:
    """James-Stein's ``B = min(1, (k - 3) sigma^2 / sum (y - y_bar)^2)`` of ``k >=``
    :data:`SHRINK_MIN_CELLS` counts ``y`` (1 when they are all equal)."""
    y = np.asarray(y, dtype=np.float64)
    spread = float(((y - y.mean()) ** 2).sum())
    return 1.0 if spread <= 0 else min(1.0, (y.size - 3) * sigma**2 / spread)


def npmle_prior(
    y: np.ndarray, sigma: float, step: float = SHRINK_GRID_STEP,
    iterations: int = SHRINK_ITERATIONS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``(grid, like, w)``: the grid 0, ``step sigma``, ... (the first point past
    ``max(y)``), each count's likelihood on it (each row scaled by its largest: posteriors
    are ratios) and the prior's nonparametric maximum likelihood estimate ``w`` on it, by
    ``iterations`` EM steps from the uniform prior (Kiefer and Wolfowitz 1956; Jiang and
    Zhang 2009). Deterministic: a function of ``y`` and ``sigma`` alone."""
    y = np.asarray(y, dtype=float)
    top = max(float(y.max()), 0.0)
    grid = step * sigma * np.arange(int(np.floor(top / (step * sigma))) + 2)
    logl = -0.5 * ((y[:, None] - grid[None, :]) / sigma) ** 2
    like = np.exp(logl - logl.max(axis=1, keepdims=True))
    w = np.full(grid.size, 1.0 / grid.size)
    for _ in range(iterations):
        post = like * w
        post /= post.sum(axis=1, keepdims=True)
        w = post.mean(axis=0)
    return grid, like, w


def posterior_means(
    y: np.ndarray, sigma: float, step: float = SHRINK_GRID_STEP,
    iterations: int = SHRINK_ITERATIONS,
) -> np.ndarray:  # fmt: skip
    """Each count's posterior mean under the prior :func:`npmle_prior` estimates from all of
    ``y`` (module docstring). Fewer than :data:`SHRINK_MIN_CELLS` cells, or ``sigma <= 0``,
    are returned as they are."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < SHRINK_MIN_CELLS or sigma <= 0:
        return y.copy()
    grid, like, w = npmle_prior(y, sigma, step, iterations)
    post = like * w
    return np.asarray((post * grid).sum(axis=1) / post.sum(axis=1))


def two_group_prior(
    y: np.ndarray, sigma: float, iterations: int = SHRINK_ITERATIONS
) -> tuple[float, float]:
    """``(pi0, mu)``: the maximum likelihood estimate of a prior of two groups, a point mass
    at 0 of weight ``pi0`` (the empty cells) and one at ``mu >= 0`` (the cells of one
    level), from ``y = x + N(0, sigma^2)``, by ``iterations`` EM steps (Dempster, Laird and
    Rubin 1977) from ``pi0 = 1/2`` and ``mu`` the mean of the counts above their median (or
    ``sigma``, whichever is larger). Two degrees of freedom, where :func:`npmle_prior` has
    one per grid point. Deterministic: a function of ``y`` and ``sigma`` alone."""
    y = np.asarray(y, dtype=np.float64)
    above = y[y > np.median(y)]
    pi0, mu = 0.5, max(float(above.mean()) if above.size else float(y.max()), sigma)
    for _ in range(iterations):
        r = level_posteriors(y, sigma, pi0, mu)
        pi0 = float(1.0 - r.mean())
        mu = max(float((r * y).sum() / r.sum()), 0.0) if r.sum() > 0 else 0.0
    return pi0, mu


def level_posteriors(y: np.ndarray, sigma: float, pi0: float, mu: float) -> np.ndarray:
    """Per count, the posterior probability that it is of the level ``mu`` rather than
    empty, under the prior of two groups ``(pi0, mu)`` (:func:`two_group_prior`)."""
    y = np.asarray(y, dtype=np.float64)
    if pi0 <= 0 or pi0 >= 1:  # one group only
        return np.full(y.size, 1.0 if pi0 <= 0 else 0.0)
    # the log odds of the level against 0: log((1 - pi0) / pi0) + (y mu - mu^2 / 2) / sigma^2
    odds = math.log1p(-pi0) - math.log(pi0) + (y * mu - 0.5 * mu * mu) / sigma**2
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * odds)))


def two_group_gain(y: np.ndarray, sigma: float, iterations: int = SHRINK_ITERATIONS) -> float:
    """The log-likelihood of ``y`` under the prior of two groups :func:`two_group_prior`
    fits, less that under the normal prior James-Stein estimates (``N(y_bar, sigma^2 +
    tau^2)`` marginally, ``tau^2 = max(0, mean (y - y_bar)^2 - sigma^2)``): both of two
    parameters fitted by maximum likelihood, so the difference compares the two models at
    equal degrees of freedom (Vuong 1989)."""
    y = np.asarray(y, dtype=np.float64)
    pi0, mu = two_group_prior(y, sigma, iterations)
    z0, z1 = -0.5 * (y / sigma) ** 2, -0.5 * ((y - mu) / sigma) ** 2
    top = np.maximum(z0, z1)
    two = top + np.log(pi0 * np.exp(z0 - top) + (1.0 - pi0) * np.exp(z1 - top))
    v = max(float(((y - y.mean()) ** 2).mean()), sigma**2)
    one = -0.5 * (y - y.mean()) ** 2 / v - 0.5 * np.log(v / sigma**2)
    return float((two - one).sum())


def two_group_means(
    y: np.ndarray, sigma: float, thresholded: bool = False,
    iterations: int = SHRINK_ITERATIONS,
) -> np.ndarray:  # fmt: skip
    """Each count's posterior mean under the prior of two groups :func:`two_group_prior`
    estimates from all of ``y`` (``mu`` times its level posterior), or with ``thresholded``
    its posterior median (``mu`` where the level posterior is at least one half, else 0).
    Fewer than :data:`SHRINK_MIN_CELLS` cells, or ``sigma <= 0``, are returned as they
    are."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < SHRINK_MIN_CELLS or sigma <= 0:
        return y.copy()
    pi0, mu = two_group_prior(y, sigma, iterations)
    r = level_posteriors(y, sigma, pi0, mu)
    return np.asarray(mu * (r >= TWO_GROUP_LEVEL) if thresholded else mu * r, dtype=np.float64)


def posterior_medians(
    y: np.ndarray, sigma: float, step: float = SHRINK_GRID_STEP,
    iterations: int = SHRINK_ITERATIONS,
) -> np.ndarray:  # fmt: skip
    """Each count's posterior median under the prior :func:`npmle_prior` estimates from all
    of ``y``: the first grid point at which its posterior distribution reaches one half (the
    estimate of least expected absolute error, what a column's total variation reads). Fewer
    than :data:`SHRINK_MIN_CELLS` cells, or ``sigma <= 0``, are returned as they are."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < SHRINK_MIN_CELLS or sigma <= 0:
        return y.copy()
    grid, like, w = npmle_prior(y, sigma, step, iterations)
    post = like * w
    cdf = np.cumsum(post, axis=1) / post.sum(axis=1, keepdims=True)
    return np.asarray(grid[np.argmax(cdf >= 0.5, axis=1)])


def shrunk(y: np.ndarray, sigma: float, how: Shrink) -> np.ndarray:
    """``y`` shrunk by :func:`james_stein` (``"js"``), :func:`posterior_means` (``"eb"``),
    :func:`posterior_medians` (``"ebm"``), the prior of two groups' posterior mean or median
    (``"tg"``, ``"tgm"``: :func:`two_group_means`), or the latter where that prior's
    likelihood beats James-Stein's by :data:`TWO_GROUP_MARGIN` and James-Stein elsewhere
    (``"jstg"``: :func:`two_group_gain`). All but ``"eb"`` and ``"ebm"`` only where James-Stein's
    factor is at least :data:`SHRINK_MIN_FACTOR` (elsewhere ``y`` is returned as it is)."""
    if how == "eb":
        return posterior_means(y, sigma)
    if how == "ebm":
        return posterior_medians(y, sigma)
    if how not in ("js", "tg", "tgm", "jstg"):
        raise ValueError(f"shrinkage must be one of {SHRINKS}, got {how!r}")
    y = np.asarray(y, dtype=np.float64)
    if y.size < SHRINK_MIN_CELLS or sigma <= 0 or stein_factor(y, sigma) < SHRINK_MIN_FACTOR:
        return y.copy()
    if how == "tg":
        return two_group_means(y, sigma)
    if how == "tgm" or (how == "jstg" and two_group_gain(y, sigma) >= TWO_GROUP_MARGIN):
        return two_group_means(y, sigma, thresholded=True)
    return james_stein(y, sigma)


def shrink_cells(domain: Domain | None, sizes: Sequence[int] | np.ndarray) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes shrunk together: a
    categorical attribute's values but its catch-all and missing categories (cells that
    exist so that any table can be encoded, tested by
    :mod:`dpquery.algorithms.marginal.empty_cells`), when there are at least
    :data:`SHRINK_MIN_CELLS`; none for numeric or binary attributes (bins of an ordered
    scale, whose counts are not draws of one kind), for an attribute whose size in the
    layout is not its domain size, or for a layout that is not the domain's. Public: the
    domain alone."""
    if domain is None or len(domain.attributes) != len(sizes):
        return [() for _ in sizes]
    out: list[tuple[int, ...]] = []
    for attr, size in zip(domain.attributes, sizes, strict=True):
        cells: tuple[int, ...] = ()
        if isinstance(attr, Categorical) and int(size) == attr.size:
            apart = {attr.other, attr.missing} - {None}
            cells = tuple(i for i, v in enumerate(attr.values) if v not in apart)
            if len(cells) < SHRINK_MIN_CELLS:
                cells = ()
        out.append(cells)
    return out


def shrink_estimates(
    estimates: Sequence[tuple[np.ndarray, float]], cells: Sequence[Sequence[int]], how: Shrink
) -> list[np.ndarray | None]:
    """Per attribute, its combined 1-way counts (``estimates[a] = (y, sigma)``) with its
    ``cells`` replaced by their shrunk values (:func:`shrunk`), or None where it has none or
    the rule keeps them as they are (the fit then reads the measurements themselves)."""
    out: list[np.ndarray | None] = []
    for (y, sigma), mine in zip(estimates, cells, strict=True):
        if not mine:
            out.append(None)
            continue
        z = np.asarray(y, dtype=np.float64).copy()
        idx = np.asarray(mine, dtype=np.int64)
        kept = z[idx].copy()
        z[idx] = shrunk(kept, float(sigma), how)
        out.append(None if np.array_equal(z[idx], kept) else z)
    return out


__all__ = [
    "SHRINKS",
    "SHRINK_GRID_STEP",
    "SHRINK_ITERATIONS",
    "SHRINK_MIN_CELLS",
    "SHRINK_MIN_FACTOR",
    "Shrink",
    "james_stein",
    "npmle_prior",
    "posterior_means",
    "posterior_medians",
    "shrink_cells",
    "shrink_estimates",
    "shrunk",
    "stein_factor",
]
