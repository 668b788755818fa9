"""Empirical-Bayes shrinkage of noisy counts: post-processing that knows most counts are tiny.

On sparse data most items are rare: a noisy count ``y = c + N(0, sigma^2)`` of an item seen
in 3 records is mostly noise. Publishing ``y`` (or ``max(y, 0)``) costs about ``0.8 sigma``
per item, far more than the all-zero table's error. The prior of the true counts is fitted
on the noisy counts themselves, by the nonparametric maximum-likelihood estimator of a
mixing distribution on a grid (Kiefer and Wolfowitz 1956; computed by EM as in Jiang and
Zhang 2009, "General maximum likelihood empirical Bayes estimation of normal means"), and
each count is replaced by its posterior median, which minimises the expected absolute error
under that prior. Everything here reads only the noisy values and their public noise scale,
so it is post-processing (Dwork and Roth 2014, Proposition 2.1). The discrete Gaussian noise
is treated as continuous Gaussian noise of the same variance parameter: an approximation in
the estimate, never in the privacy guarantee.
"""

from __future__ import annotations

import numpy as np

# Beyond this many standard deviations a count is kept as measured: the prior cannot move it.
_KEEP_ABOVE = 10.0
_EM_STEPS = 150
_SLAB = 0.05  # the initial mass off 0
_RATIO = 1.03  # spacing of the grid beyond the integers


def _grid(lo: float, hi: float, fine: int = 24) -> np.ndarray:
    """Support points: every integer up to ``fine``, then geometric steps up to ``hi``, on
    both sides of 0 when ``lo < 0``."""

    def side(top: float) -> np.ndarray:
        if top <= 0:
            return np.zeros(1)
        small = np.arange(0, min(fine, top) + 1, dtype=np.float64)
        if top <= fine:
            return small
        steps = int(np.ceil(np.log(top / fine) / np.log(_RATIO))) + 1
        return np.unique(np.concatenate([small, np.geomspace(fine, top, max(steps, 2))]))

    right = side(hi)
    if lo >= 0:
        return right
    left = -side(-lo)[::-1]
    return np.unique(np.concatenate([left, right]))


def npmle_prior(
    y: np.ndarray, sigma: float, grid: np.ndarray, steps: int = _EM_STEPS
) -> np.ndarray:
    """Weights on ``grid`` maximising the likelihood of ``y`` as draws of ``grid`` value plus
    ``N(0, sigma^2)`` noise (EM on the mixing weights; distinct values of ``y`` are
    grouped)."""
    values, counts = np.unique(np.asarray(y, dtype=np.float64), return_counts=True)
    like = np.exp(-0.5 * ((values[:, None] - grid[None, :]) / sigma) ** 2)
    # Started from a spike at 0: the mass the data cannot place (counts far below sigma are
    # indistinguishable) stays at 0, the sparse guess, instead of spreading over the grid.
    pi = np.full(grid.size, _SLAB / grid.size)
    pi[np.argmin(np.abs(grid))] += 1 - _SLAB
    for _ in range(steps):
        mix = (like * pi[None, :]).sum(axis=1)  # no BLAS threads (fit.py's _dot)
        mix = np.maximum(mix, 1e-300)
        pi = pi * ((counts / mix)[:, None] * like).sum(axis=0) / counts.sum()
    return pi / pi.sum()


def posterior_median(
    y: np.ndarray, sigma: float, grid: np.ndarray, prior: np.ndarray
) -> np.ndarray:
    """The median of each value's posterior on ``grid`` under ``prior``, interpolated
    linearly between grid points."""
    values, inverse = np.unique(np.asarray(y, dtype=np.float64), return_inverse=True)
    post = np.exp(-0.5 * ((values[:, None] - grid[None, :]) / sigma) ** 2) * prior[None, :]
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
    cdf = np.cumsum(post, axis=1)
    k = np.minimum((cdf < 0.5).sum(axis=1), grid.size - 1)
    below = np.where(k > 0, cdf[np.arange(values.size), np.maximum(k - 1, 0)], 0.0)
    at = cdf[np.arange(values.size), k]
    left = grid[np.maximum(k - 1, 0)]
    frac = np.where(at > below, (0.5 - below) / np.maximum(at - below, 1e-300), 1.0)
    med = np.where(k > 0, left + frac * (grid[k] - left), grid[k])
    return med[inverse.ravel()]


def posterior_mean(y: np.ndarray, sigma: float, grid: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """The mean of each value's posterior on ``grid`` under ``prior`` (the estimate of least
    expected squared error)."""
    values, inverse = np.unique(np.asarray(y, dtype=np.float64), return_inverse=True)
    post = np.exp(-0.5 * ((values[:, None] - grid[None, :]) / sigma) ** 2) * prior[None, :]
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
    return (post @ grid)[inverse.ravel()]


def shrink(
    y: np.ndarray, sigma: float, *, center: np.ndarray | None = None, nonnegative: bool = True,
    upper: float | None = None, mean: bool = False,
) -> np.ndarray:  # fmt: skip
    """Empirical-Bayes posterior medians of the true values behind noisy ``y`` (module
    docstring), or posterior means (``mean``). ``center`` (public, or itself
    post-processing): shrink ``y - center`` and add it back; ``nonnegative``: the true values
    ``y - center`` are known to be ``>= 0``; ``upper`` (public): they are known to be
    ``<= upper`` (the prior's grid stops there). Values more than 10 sigma from the centre
    are kept as measured."""
    y = np.asarray(y, dtype=np.float64)
    base = np.zeros_like(y) if center is None else np.asarray(center, dtype=np.float64)
    r = y - base
    out = r.copy()
    inner = np.abs(r) <= _KEEP_ABOVE * sigma
    if inner.any():
        lo = 0.0 if nonnegative else -(_KEEP_ABOVE + 4) * sigma
        hi = (_KEEP_ABOVE + 4) * sigma
        grid = _grid(lo, hi if upper is None else min(hi, upper))
        prior = npmle_prior(r[inner], sigma, grid)
        estimate = posterior_mean if mean else posterior_median
        out[inner] = estimate(r[inner], sigma, grid, prior)
    if nonnegative:
        out = np.maximum(out, 0.0)
    return base + out
