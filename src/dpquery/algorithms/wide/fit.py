"""A sparse record set fitted to the noisy measurements (post-processing only).

The records are built in two parts, from the public, noisy estimates alone:

* the **head** (the ``K`` items of largest noisy count): a pool of candidate item sets is
  drawn (each of a size from the estimated head-size distribution, items added one at a time
  in proportion to the estimated conditional co-occurrence; where most heads hold most of
  the items, a long head's items at inclusion chances that follow the counts), then weighted
  by maximum entropy relative to the pool's base weights subject to the 1-way, pair and size
  estimates, with a Gaussian penalty of each estimate's noise variance (the regularised
  maximum-entropy dual of Dudik, Phillips and Schapire 2007; MWEM's multiplicative weights,
  Hardt, Ligett and McSherry 2012, run to convergence over a pool instead of the whole
  domain);
* the **tail** (every other item): each output record gets a number of tail slots from the
  estimated joint size histogram, and each tail item fills exactly its estimated count of
  slots, dealt at random.

The ``n`` output records take their heads from the weighted pool by systematic sampling
(Madow 1949), so each head set appears within one of its expected count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from dpquery.algorithms.wide.kernels import PoolFeatures, draw_heads
from dpquery.data.sample import systematic_counts

WIDE_HEADS = 2 / 3
"""The share of the drawn items (those of positive count) past which the mean head size
makes a pool "wide": its long heads are drawn by :func:`systematic_heads`. The seen tables'
heads hold at most 0.46 of them on average (``ml100k``'s head mode; ``docs/wide.md``), so
their pools are drawn as before; ``jester5k``'s hold 0.73."""

CHANCE_DRAW_SIZE = 0.5
"""In a wide pool, the heads of more than this share of the drawn items are drawn by
:func:`systematic_heads`; shorter ones keep :func:`draw_heads`'s co-occurrence draw."""


def pair_keep(a: np.ndarray, s2: int) -> np.ndarray:
    """The chance that a given pair of an ``a``-item head survives the cut to ``s2`` items
    by a random order (the keyed hash's): ``min(1, s2 (s2 - 1) / (a (a - 1)))``."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(a <= s2, 1.0, s2 * (s2 - 1) / np.maximum(a * (a - 1), 1.0))


def head_pool(
    counts: np.ndarray,
    pairs: np.ndarray,
    sizes: np.ndarray,
    pool: int,
    rng: np.random.Generator,
    *,
    mix: float = 0.3,
    batch: int = 4096,
) -> tuple[sp.csr_array, np.ndarray]:
    """Candidate head sets and their base weights.

    ``counts`` (``K``) and ``pairs`` (``K x K``, symmetric) are the estimated counts,
    ``sizes[a]`` the estimated share of records with ``a`` head items. About ``pool * sizes[a]``
    candidates of each size ``a >= 1`` (at least a few dozen): the first item in proportion to
    its count, each next one in proportion to ``(1 - mix)`` times the mean estimated chance
    of co-occurring with the items already chosen plus ``mix`` times its share of the counts.
    The base weight of a candidate of size ``a`` is ``sizes[a]`` over their number, so the
    base matches the size distribution. Row 0 is the empty head (weight ``sizes[0]``).

    Where the mean size is above :data:`WIDE_HEADS` of the items of positive count, the
    sizes above :data:`CHANCE_DRAW_SIZE` of them (and short of all of them) are drawn
    instead at the inclusion chances of :func:`inclusion_chances` by
    :func:`systematic_heads`.
    """
    K = counts.size
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    # Only items estimated above 0 are drawn: a head of more items than that is cut to them.
    positive = int((c > 0).sum())
    if positive == 0:
        return sp.csr_array(([], [], [0, 0]), shape=(1, K)), np.array([1.0])
    if sizes.size > positive + 1:
        sizes = np.concatenate([sizes[:positive], [sizes[positive:].sum()]])
    q = c / c.sum()
    c = np.maximum(c, 1e-9)
    cond = np.maximum(np.asarray(pairs, dtype=np.float64), 0.0) / c[:, None]  # P(k | j)
    np.fill_diagonal(cond, 0.0)
    indptr, indices, weights = [0, 0], [], [float(sizes[0])]
    mean_size = float((np.arange(sizes.size) * sizes).sum() / max(float(sizes.sum()), 1e-300))
    wide = mean_size > WIDE_HEADS * positive
    for a in range(1, min(sizes.size, K + 1)):
        if sizes[a] <= 0:
            continue
        m = max(int(np.ceil(pool * sizes[a])), 32)
        # where most heads hold most of the drawn items, a head of more than half of them
        # takes its items at chances that follow the counts (inclusion_chances), where one
        # at a time they would flatten toward a / K
        by_chance = wide and CHANCE_DRAW_SIZE * positive < a < positive
        chances = inclusion_chances(c * (q > 0), a) if by_chance else None
        for start in range(0, m, batch):
            B = min(batch, m - start)
            if chances is not None:
                chosen = systematic_heads(chances, rng.random((B, K)), rng.random(B))
            else:
                # row t of the draws: the uniforms of every candidate's t-th item (kernels.py)
                chosen = draw_heads(q, cond, mix, rng.random((a, B)))
            indices.append(chosen.ravel())
            indptr.extend(indptr[-1] + a * np.arange(1, B + 1))
            weights.extend([sizes[a] / m] * B)
    flat = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
    matrix = sp.csr_array(
        (np.ones(flat.size, dtype=np.float64), flat, np.asarray(indptr)), shape=(len(weights), K)
    )
    return matrix, np.asarray(weights)


def inclusion_chances(counts: np.ndarray, a: int) -> np.ndarray:
    """Each item's chance ``pi_k = min(1, lambda c_k)`` of being in a head of ``a`` items,
    ``lambda`` such that ``sum_k pi_k = a`` (the items of count 0 at chance 0): the inclusion
    chances of a fixed-size draw proportional to size (Hajek 1981, ch. 1; Sarndal, Swensson
    and Wretman 1992, sec. 3.6), an item whose share would pass 1 held at 1 and the rest
    scaled up. ``a`` must be at most the number of items of positive count."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    positive = int((c > 0).sum())
    if not 0 <= a <= positive:
        raise ValueError(f"a head of {a} items needs {a} items of positive count, got {positive}")
    pi = np.zeros(c.size)
    full = np.zeros(c.size, dtype=bool)
    while True:  # at most K rounds: each one holds at least one more item at 1, or ends
        free = (c > 0) & ~full
        if not free.any():
            break
        pi[free] = c[free] * ((a - full.sum()) / c[free].sum())
        over = free & (pi >= 1.0)
        if not over.any():
            break
        full |= over
    pi[full] = 1.0
    return pi


def systematic_heads(pi: np.ndarray, order: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``B`` heads of ``a = sum(pi)`` items each (``order``: ``B x K`` uniforms, ``start``:
    ``B``), each row sorted, item ``k`` in each with chance exactly ``pi_k``: the items at
    chance 1 in every head, the others by systematic sampling (Madow 1949) on a random
    order, as :func:`~dpquery.data.sample.systematic_counts` draws records: laid end to end
    in the order of ``order``'s row, each over a length ``pi_k``, and chosen where one of the
    points ``start + 0, 1, 2, ...`` falls.

    Why this draw for heads holding most of the items: drawn one at a time without
    replacement in proportion to weights (:func:`draw_heads`), a head of ``a`` of ``K``
    items includes every item with a chance pulled toward ``a / K`` whatever the weights
    (73 of 100: the commonest items in 0.78 of the heads for a target of 1.0,
    ``docs/wide.md``), and the fit must tilt far from the base to meet its targets. Here the
    base meets ``pi`` exactly and the fit starts near its item targets. A random order makes
    every pair of fractional items possible together (a fixed order would not); the pairs
    are left to the fit, as they are the base's co-occurrence draw for short heads."""
    pi = np.asarray(pi, dtype=np.float64)
    full = pi >= 1.0
    part = np.where(full, 0.0, pi)
    rest = round(float(part.sum()))
    B, K = order.shape
    keys = np.argsort(order, axis=1, kind="stable")
    ends = np.cumsum(part[keys], axis=1)
    if rest > 0:
        ends *= rest / ends[:, -1:]  # no rounding drift: each row's line ends at ``rest``
        ends[:, -1] = rest
    # the points u, u + 1, ... below x: ceil(x - u) of them, u in [0, 1): ``rest`` in all
    points = np.ceil(ends - np.asarray(start, dtype=np.float64)[:, None])
    hit = np.diff(points, axis=1, prepend=0.0) > 0
    chosen = np.zeros((B, K), dtype=bool)
    np.put_along_axis(chosen, keys, hit, axis=1)
    chosen[:, full] = True
    a = int(full.sum()) + rest
    return np.nonzero(chosen)[1].reshape(B, a).astype(np.int64)


def features(pool: sp.csr_array, s2: int, keep: np.ndarray | None = None) -> sp.csr_array:
    """The statistics each candidate adds, one row per candidate: its items (``K``), its
    pairs ``j < k`` at index ``j K + k`` weighted by :func:`pair_keep` (``K^2``, the
    measured pairs are those of the cut head). The sizes are left to the base weights: the
    noisy size histogram and the noisy counts need not agree exactly, and a hard size
    constraint beside the counts would make the targets infeasible. ``keep``: each row's pair
    weight instead of :func:`pair_keep`'s."""
    K = pool.shape[1]
    M = pool.shape[0]
    a = np.diff(pool.indptr)
    rows, cols, vals = [], [], []
    rows.append(np.repeat(np.arange(M), a))
    cols.append(pool.indices.astype(np.int64))
    vals.append(np.ones(pool.nnz))
    keep = pair_keep(a, s2) if keep is None else np.asarray(keep, dtype=np.float64)
    for size in np.unique(a):
        if size < 2:
            continue
        who = np.flatnonzero(a == size)
        items = pool.indices[(pool.indptr[who][:, None] + np.arange(size)[None, :])]
        j, k = np.triu_indices(size, 1)
        rows.append(np.repeat(who, j.size))
        cols.append((K + items[:, j] * K + items[:, k]).ravel())
        vals.append(np.full(who.size * j.size, keep[who[0]]))
    return sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(M, K + K * K),
    )


def item_features(pool: sp.csr_array) -> sp.csr_array:
    """The items' columns of :func:`features` alone (``M x K``, each candidate's items, a
    repeated item counted as often as it repeats), without its ``K^2`` pair columns: a pool
    of 200,000 candidates of 35 items holds 119 million pairs, several GiB stored, where the
    head mode's fit reads only the items."""
    A = sp.csr_array((np.ones(pool.nnz), pool.indices.copy(), pool.indptr.copy()), shape=pool.shape)
    A.sum_duplicates()  # canonical (sorted, summed), as features' own conversion makes it
    return A


def pool_features(
    pool: sp.csr_array, s2: int, keep: np.ndarray | None = None
) -> PoolFeatures | sp.csr_array:
    """The features of :func:`features` computed on the fly (:class:`PoolFeatures`: the
    same products, never stored), or the stored matrix where a row of ``pool`` repeats or
    misorders an item. ``keep``: each row's pair weight (default :func:`pair_keep`)."""
    indptr, indices = pool.indptr, pool.indices
    step = np.diff(indices)
    inside = np.ones(step.size, dtype=bool)  # steps within a row, not across rows
    starts = indptr[1:-1]
    inside[starts[(starts > 0) & (starts < indices.size)] - 1] = False
    if (step[inside] <= 0).any():
        return features(pool, s2, keep)
    return PoolFeatures(pool, pair_keep(np.diff(indptr), s2) if keep is None else keep)


def maxent_weights(
    A: sp.csr_array | PoolFeatures,
    base: np.ndarray,
    target: np.ndarray,
    penalty: np.ndarray,
    *,
    iterations: int = 400,
) -> np.ndarray:
    """The distribution ``p`` over the pool rows closest to ``base`` in KL divergence with
    ``A^T p`` near ``target``: it minimises the dual
    ``log sum_x base_x exp((A theta)_x) - theta . target + sum_f penalty_f theta_f^2 / 2``
    (Dudik, Phillips and Schapire 2007, regularised maximum entropy; ``penalty`` is each
    target's noise variance, as a fraction of records squared), by L-BFGS."""
    log_base = np.log(np.maximum(base, 1e-300))
    if isinstance(A, PoolFeatures):  # the pool's features computed on the fly (kernels.py)
        transpose_times: Callable[[np.ndarray], np.ndarray] = A.rmatvec
        keep = A.used()
    else:
        At = sp.csr_array(A.T)
        transpose_times = At.__matmul__
        used = np.flatnonzero(np.asarray(abs(A).sum(axis=0)).ravel() > 0)
        keep = np.zeros(A.shape[1], dtype=bool)
        keep[used] = True
    if not keep.any():  # no candidate holds an item: the base is the answer
        return base / base.sum()

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        full = np.zeros(A.shape[1])
        full[keep] = theta
        z = log_base + A @ full
        lse = logsumexp(z)
        p = np.exp(z - lse)
        grad = transpose_times(p)[keep] - target[keep] + penalty[keep] * theta
        return float(lse - _dot(theta, target[keep]) + 0.5 * (penalty[keep] * theta**2).sum()), grad

    theta = lbfgs(objective, np.zeros(int(keep.sum())), iterations)
    full = np.zeros(A.shape[1])
    full[keep] = theta
    z = log_base + A @ full
    return np.exp(z - logsumexp(z))


def deal_tail(
    slots: np.ndarray, counts: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Tail items into records: record ``i`` gets ``slots[i]`` tokens, item ``j`` fills
    ``counts[j]`` of them, dealt at random; a record dealt an item twice keeps it once.
    Returns the (record, item) pairs."""
    tokens = np.repeat(np.arange(counts.size), counts)
    rng.shuffle(tokens)
    total = min(int(slots.sum()), tokens.size)
    owner = np.repeat(np.arange(slots.size), slots)[:total]
    return owner, tokens[:total]


def integer_counts(x: np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """Whole counts with expectation ``x`` (scaled to sum to ``total``): systematic rounding."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    if total <= 0 or x.sum() <= 0:
        return np.zeros(x.size, dtype=np.int64)
    return systematic_counts(x, total, rng)


def _dot(u: np.ndarray, v: np.ndarray) -> float:
    """``u . v`` without BLAS, whose threads spin and crowd a shared machine on long vectors."""
    return float(np.multiply(u, v).sum())


def lbfgs(
    objective: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x: np.ndarray,
    iterations: int,
    memory: int = 10,
) -> np.ndarray:
    """Minimise a smooth convex ``objective`` (value and gradient) by L-BFGS (Nocedal and
    Wright 2006, Algorithm 7.4, two-loop recursion) with a backtracking Armijo line search."""
    f, g = objective(x)
    history: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(iterations):
        q = g.copy()
        alphas = []
        for s_k, y_k, r_k in reversed(history):
            alpha = r_k * (_dot(s_k, q))
            alphas.append(alpha)
            q -= alpha * y_k
        if history:
            s_k, y_k, _ = history[-1]
            q *= _dot(s_k, y_k) / _dot(y_k, y_k)
        else:
            q /= max(np.abs(g).max(), 1e-12)
        for (s_k, y_k, r_k), alpha in zip(history, reversed(alphas), strict=True):
            q += s_k * (alpha - r_k * _dot(y_k, q))
        direction = -q
        slope = _dot(g, direction)
        if slope >= 0:  # not a descent direction: restart from the gradient
            history.clear()
            direction, slope = -g, -_dot(g, g)
        step = 1.0
        while True:
            x_new = x + step * direction
            f_new, g_new = objective(x_new)
            if f_new <= f + 1e-4 * step * slope or step < 1e-10:
                break
            step /= 2
        s_k, y_k = x_new - x, g_new - g
        if _dot(s_k, y_k) > 1e-20:
            history.append((s_k, y_k, 1.0 / _dot(s_k, y_k)))
            history = history[-memory:]
        converged = abs(f - f_new) <= 1e-13 * max(1.0, abs(f))
        x, f, g = x_new, f_new, g_new
        if converged:
            break
    return x
