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

import numba
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
    pi = em_steps(like, counts.astype(np.float64), pi, steps, float(counts.sum()))
    return pi / pi.sum()


@numba.njit(cache=True)
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - jit
    """:func:`pairwise_sum` of at most 128 terms."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    end = n - n % 8
    while i < end:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@numba.njit(cache=True)
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - jit
    """``a[lo:lo + n].sum()`` added in numpy's order (its ``pairwise_sum`` of a contiguous
    float64 reduction): fewer than 8 terms one by one; up to 128 in 8 running sums combined
    as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, the rest added after; beyond,
    the two halves (the first a multiple of 8) summed so and added (numpy's order since 1.9;
    ``tests/test_fit_kernels_exact.py`` checks it against the installed numpy). numpy
    recurses; this walks the same tree with a stack (numba's cache does not load a recursive
    function)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    return _tree_sum(a, lo, n, np.empty((2, 128), dtype=np.int64), np.empty(128))


@numba.njit(cache=True)
def _tree_sum(
    a: np.ndarray, lo: int, n: int, todo: np.ndarray, values: np.ndarray
) -> float:  # pragma: no cover - jit
    """:func:`pairwise_sum` beyond 128 terms, on scratch stacks ``todo`` (``2 x 128``
    integers) and ``values`` (128 floats), enough for any length (two entries a level)."""
    # pending work: (lo, n) to sum, or n = -1: add the two sums on top of the value stack
    todo_lo, todo_n = todo[0], todo[1]
    top, held = 1, 0
    todo_lo[0], todo_n[0] = lo, n
    while top > 0:
        top -= 1
        at, m = todo_lo[top], todo_n[top]
        if m < 0:
            held -= 1
            values[held - 1] = values[held - 1] + values[held]
        elif m <= 128:
            values[held] = _block_sum(a, at, m)
            held += 1
        else:
            half = m // 2
            half -= half % 8
            todo_lo[top], todo_n[top] = 0, -1  # after both halves: their sum
            todo_lo[top + 1], todo_n[top + 1] = at + half, m - half
            todo_lo[top + 2], todo_n[top + 2] = at, half  # the first half first
            top += 3
    return values[0]


@numba.njit(cache=True)
def em_steps(
    like: np.ndarray, counts: np.ndarray, pi: np.ndarray, steps: int, total: float
) -> np.ndarray:  # pragma: no cover - jit
    """``steps`` EM updates of the mixing weights ``pi`` (in place), each the numpy
    expressions ``mix = maximum((like * pi).sum(axis=1), 1e-300)`` and ``pi = pi * ((counts
    / mix)[:, None] * like).sum(axis=0) / total`` with every product and sum made in numpy's
    order (a row's sum :func:`pairwise_sum`'s, a column's from the first row down), so the
    weights are theirs to the last bit; one pass over ``like`` a step, where numpy writes and
    reads two temporaries of its size. A step that leaves ``pi`` unchanged, bit for bit, is
    a fixed point: the steps left would repeat it, and are skipped."""
    V, G = like.shape
    row = np.empty(G)
    acc = np.empty(G)
    todo, values = np.empty((2, 128), dtype=np.int64), np.empty(128)
    for _ in range(steps):
        acc[:] = 0.0
        for i in range(V):
            for j in range(G):
                row[j] = like[i, j] * pi[j]
            mix = _block_sum(row, 0, G) if G <= 128 else _tree_sum(row, 0, G, todo, values)
            if mix < 1e-300:  # np.maximum's (a NaN stays NaN)
                mix = 1e-300
            r = counts[i] / mix
            for j in range(G):
                acc[j] += r * like[i, j]
        fixed = True
        for j in range(G):
            new = pi[j] * acc[j] / total
            if new != pi[j]:
                fixed = False
            pi[j] = new
        if fixed:
            break
    return pi


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
