"""Answers under the uniform distribution over a domain, computed analytically.

The uniform distribution over the domain (one of each possible record: DualQuery 2015,
Section 7, "uniform data set"; MWEM's starting point) makes attributes independent, each
uniform over its values. A one-hot group of ``s`` bits takes each value with probability
``1/s``; a free bit is a group of two values whose bit marks the value 1. So a query factors
over the groups its literals touch, and the domain is never enumerated:

* conjunction, per group with ``P`` positive and ``N`` negative literals (distinct bits):
  ``P >= 2``: 0 (two values at once); ``P == 1``: ``1/s`` (the negatives hold then);
  ``P == 0``: ``(s - N)/s``;
* disjunction: ``1 -`` the conjunction of the negated literals (De Morgan);
* parity, per group holding ``t`` bits of S: exactly one bit of the group is set, so the
  group's sum is odd with probability ``t/s`` and ``E[(-1)^sum] = 1 - 2t/s``.
"""

from __future__ import annotations

import numpy as np

from dpquery.queries.workload import Workload


def _group_of_bits(d: int, onehot_groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group id of every bit and the size (number of values) of every group id."""
    groups = np.asarray(onehot_groups, dtype=np.int64).reshape(-1, 2)
    gid = np.full(d, -1, dtype=np.int64)
    sizes = groups[:, 1] - groups[:, 0]
    gid[np.concatenate([np.arange(a, b) for a, b in groups]) if len(groups) else []] = np.repeat(
        np.arange(len(groups)), sizes
    )
    free = np.flatnonzero(gid < 0)  # each free bit is its own two-valued group
    gid[free] = len(groups) + np.arange(free.size)
    return gid, np.concatenate([sizes, np.full(free.size, 2, np.int64)])


def uniform_answers(workload: Workload, onehot_groups: np.ndarray | None = None) -> np.ndarray:
    """Exact answers of every query under the uniform distribution over the domain.

    ``onehot_groups`` defaults to the workload's domain's groups (no groups: all bits free).
    """
    if onehot_groups is None:
        onehot_groups = (
            np.zeros((0, 2), np.int64) if workload.domain is None else workload.domain.onehot_groups
        )
    gid, gsize = _group_of_bits(workload.d, onehot_groups)
    q = len(workload)
    query_of = np.repeat(np.arange(q, dtype=np.int64), workload.sizes)
    positive = workload.positive
    if workload.kind == "disjunction":
        positive = ~positive
    # one key per (query, group) touched; unique keys come out sorted by query
    n_ids = gsize.size
    keys, inverse = np.unique(query_of * n_ids + gid[workload.bits], return_inverse=True)
    inverse = inverse.ravel()
    n_pos = np.bincount(inverse, weights=positive, minlength=keys.size)
    n_all = np.bincount(inverse, minlength=keys.size).astype(np.float64)
    s = gsize[keys % n_ids].astype(np.float64)
    if workload.kind == "parity":
        factor = 1.0 - 2.0 * n_all / s
    else:
        n_neg = n_all - n_pos
        factor = np.where(n_pos >= 2, 0.0, np.where(n_pos == 1, 1.0 / s, (s - n_neg) / s))
    out = np.ones(q)
    if keys.size:
        key_query = keys // n_ids
        starts = np.flatnonzero(np.r_[True, key_query[1:] != key_query[:-1]])
        out[key_query[starts]] = np.multiply.reduceat(factor, starts)
    if workload.kind == "disjunction":
        return 1.0 - out
    return out
