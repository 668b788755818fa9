"""Unmeasured dependence removed from the fitted records (post-processing).

The record-set fit (:mod:`dpquery.algorithms.marginal.projection`) moves one attribute of
one record at a time to match the measured marginals. What the measurements leave free it
leaves where those moves put it: two attributes that no measured marginal joins may end up
dependent, an artefact of the order of the moves, not of the data. A graphical model fitted
to the same measurements (AIM's estimator, McKenna, Sheldon, Miklau 2019) holds the
maximum-entropy distribution instead, in which an attribute ``a`` is independent of the
rest given its neighbours ``N(a)``, the attributes some measured marginal holds with it
(the Markov blanket of ``a`` in the model's graph; Koller and Friedman 2009, Theorem 4.8).

Here each attribute ``a`` in turn has its values permuted uniformly among the records that
agree on ``N(a)``, each neighbour ``b`` read through the common refinement of the value maps
(compressed, binned or identity) of the measurements holding both: every record keeps its
neighbours' cells, so every measured marginal holding ``a`` keeps its counts exactly (the
multiset of ``a``'s values within each group is kept), and marginals without ``a`` are not
touched. Within a group the values of ``a`` become independent of every attribute outside
``N(a)``. An attribute measured alone (1-way only) is permuted among all records: independent
of every other. Groups of one record change nothing, so this reaches the attributes of few
or coarse neighbours.

The inputs are the records (themselves post-processing), which marginals were measured and
through which maps (public), and the release's generator: post-processing, nothing charged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpquery.algorithms.marginal.projection import Measurement


def neighbour_maps(
    measurements: Sequence[Measurement], sizes: np.ndarray, a: int
) -> dict[int, np.ndarray]:
    """For each neighbour ``b`` of ``a`` (an attribute some measurement of ``measurements``
    holds with ``a``), the common refinement of ``b``'s value maps over those measurements:
    an array ``value -> label`` under which two values share a label only when every such
    map sends them to the same cell."""
    seen: dict[int, list[np.ndarray]] = {}
    for x in measurements:
        if a not in x.marginal:
            continue
        for b, f in zip(x.marginal, x.value_maps(sizes), strict=True):
            if b != a:
                seen.setdefault(int(b), []).append(np.asarray(f, dtype=np.int64))
    out = {}
    for b in sorted(seen):
        _, labels = np.unique(np.stack(seen[b], axis=1), axis=0, return_inverse=True)
        out[b] = labels.reshape(-1).astype(np.int64)
    return out


def groups_of(X: np.ndarray, maps: dict[int, np.ndarray]) -> np.ndarray:
    """Each record's group: the records agreeing on every ``maps[b][x_b]`` share one (all in
    group 0 when ``maps`` is empty). The labels are combined in mixed radix when the product
    of their counts fits in 62 bits (one sort of integers), else row by row."""
    m = X.shape[0]
    if not maps:
        return np.zeros(m, dtype=np.int64)
    cells = [f[X[:, b]] for b, f in maps.items()]
    radix = [int(f.max()) + 1 for f in maps.values()]
    if float(np.prod(np.asarray(radix, dtype=np.float64))) < 2.0**62:
        key = np.zeros(m, dtype=np.int64)
        for c, k in zip(cells, radix, strict=True):
            key = key * k + c
        _, group = np.unique(key, return_inverse=True)
    else:
        _, group = np.unique(np.stack(cells, axis=1), axis=0, return_inverse=True)
    return group.reshape(-1).astype(np.int64)


def permute_within(X: np.ndarray, a: int, group: np.ndarray, rng: np.random.Generator) -> None:
    """``X[:, a]`` permuted uniformly among the records of each group (in place)."""
    here = np.argsort(group, kind="stable")
    shuffled = rng.permutation(X.shape[0])
    there = shuffled[np.argsort(group[shuffled], kind="stable")]
    X[here, a] = X[there, a]


def unlink(
    X: np.ndarray, measurements: Sequence[Measurement], sizes: np.ndarray, *, passes: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:  # fmt: skip
    """The module's post-processing of the records ``X`` (``(m, g)`` codes, changed in place):
    ``passes`` times, every attribute in a random order permuted within the groups of its
    neighbours' cells. Returns ``X`` and the share of (record, attribute) pairs, over the
    passes, whose group held more than one record (those the permutation could move)."""
    m, g = X.shape
    maps = [neighbour_maps(measurements, sizes, a) for a in range(g)]
    movable = 0
    for _ in range(passes):
        for a in rng.permutation(g):
            group = groups_of(X, maps[int(a)])
            movable += int((np.bincount(group)[group] > 1).sum())
            permute_within(X, int(a), group, rng)
    return X, movable / max(1, passes * m * g)


__all__ = ["groups_of", "neighbour_maps", "permute_within", "unlink"]
