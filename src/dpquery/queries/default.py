"""The workload a release answers when the user names none: all k-way marginals.

The canonical use of a synthetic table is to answer low-order marginals (the workloads of
AIM, McKenna et al. 2022, Section 6, and of the FEM / RAP protocols): every ``k``-way marginal
of the public domain whose table has at most ``n`` cells (a marginal with more cells than
records is mostly empty cells, and its counts are noise at any budget). The rule, read only
from public quantities (the domain and ``n``):

1. ``k`` is lowered to the number of attributes when the domain has fewer;
2. the candidates are the ``k``-attribute sets whose marginal has at most ``n`` cells; when
   none has, ``k`` is lowered by one until some set qualifies (and when not even one
   attribute has at most ``n`` values, every 1-way marginal is kept);
3. when more than ``max_marginals`` sets qualify (:data:`DEFAULT_MAX_MARGINALS`; a wide
   binary table of 512,000 bits has about 2.2e16 3-attribute sets), ``max_marginals`` of them
   are drawn uniformly without replacement with ``seed`` and kept in column order. When the
   sets are too many to list (more than :data:`ENUMERATION_LIMIT`), random ``k``-sets are drawn
   with the seed and the ones with at most ``n`` cells kept, until ``max_marginals`` distinct
   sets are found or :data:`DRAW_ROUNDS` rounds of draws find no more.

The workload holds every cell of each marginal, one conjunction per cell, in the order of
:func:`~dpquery.queries.generators.marginal_cells` (built here from attribute positions, so a
domain of 512,000 attributes costs no per-marginal pass over the domain).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpquery.data.domain import Binary, Domain
from dpquery.errors import DPQueryError
from dpquery.queries.generators import _distinct_rows, n_values
from dpquery.queries.workload import Workload
from dpquery.rng import SeedLike, make_rng

# Chosen so that the default release stays fast (docs/choosing.md): ACS's 22 attributes give
# 1,540 3-way sets, all kept; KDD99's 41 give 10,660, of which 2,048 are drawn.
DEFAULT_MAX_MARGINALS = 2048
# Above this many k-sets they are drawn at random instead of listed.
ENUMERATION_LIMIT = 1_000_000
DRAW_ROUNDS = 20


def default_marginals(
    domain: Domain, n: int, *, k: int = 3, seed: SeedLike = None,
    max_marginals: int = DEFAULT_MAX_MARGINALS,
) -> list[tuple[int, ...]]:  # fmt: skip
    """The attribute positions of the default workload's marginals (module docstring)."""
    if n < 1 or k < 1 or max_marginals < 1:
        raise DPQueryError(
            f"default workload needs n >= 1, k >= 1 and max_marginals >= 1, "
            f"got n={n}, k={k}, max_marginals={max_marginals}"
        )
    g = len(domain)
    if g == 0:
        raise DPQueryError("the domain has no attribute")
    sizes = n_values(domain)
    sets: list[tuple[int, ...]] = []
    for order in range(min(k, g), 0, -1):
        if math.comb(g, order) > ENUMERATION_LIMIT:
            sets = _drawn_sets(sizes, order, n, max_marginals, make_rng(seed))
        else:
            combos = itertools.combinations(range(g), order)
            sets = [c for c in combos if math.prod(int(sizes[a]) for a in c) <= n]
            if len(sets) > max_marginals:
                pick = make_rng(seed).choice(len(sets), max_marginals, replace=False)
                sets = [sets[i] for i in np.sort(pick)]
        if sets or order == 1:
            break
    if not sets:  # even single attributes have more values than n: keep every 1-way
        sets = [(a,) for a in range(min(g, max_marginals))]
    return sorted(sets)


def _drawn_sets(
    sizes: np.ndarray, k: int, n: int, count: int, rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """Up to ``count`` distinct random ``k``-sets of attributes with at most ``n`` cells."""
    found: set[tuple[int, ...]] = set()
    for _ in range(DRAW_ROUNDS):
        rows = _distinct_rows(rng, 2 * (count - len(found)), k, len(sizes))
        cells = np.prod(sizes[rows].astype(np.float64), axis=1)
        for row in rows[cells <= n]:
            found.add(tuple(int(a) for a in row))
            if len(found) == count:
                return list(found)
    return list(found)


def default_workload(
    domain: Domain, n: int, *, k: int = 3, seed: SeedLike = None,
    max_marginals: int = DEFAULT_MAX_MARGINALS,
) -> Workload:  # fmt: skip
    """Every cell of all ``k``-way marginals of ``domain`` with at most ``n`` cells, at most
    ``max_marginals`` of them drawn with ``seed`` when there are more (module docstring).
    Reads only public quantities: the domain and the number of records ``n``."""
    sets = default_marginals(domain, n, k=k, seed=seed, max_marginals=max_marginals)
    return cells_of(domain, sets)


def cells_of(domain: Domain, sets: list[tuple[int, ...]]) -> Workload:
    """Every cell of each marginal over the sorted attribute positions ``sets`` (all of one
    order), as :func:`~dpquery.queries.generators.marginal_cells` lays them out."""
    sizes = n_values(domain)
    binary = np.array([isinstance(a, Binary) for a in domain.attributes], dtype=bool)
    offsets = domain.offsets
    k = len(sets[0])
    bits, positive, marks = [], [], [0]
    for s in sets:
        attrs = np.asarray(s, dtype=np.int64)
        grid = np.indices(tuple(sizes[attrs]), dtype=np.int64).reshape(k, -1).T
        is_binary = binary[attrs]
        bits.append(np.where(is_binary, offsets[attrs], offsets[attrs] + grid).ravel())
        positive.append((~is_binary | (grid == 1)).ravel())
        marks.append(marks[-1] + len(grid))
    cells = marks[-1]
    return Workload(
        "conjunction", domain.d, np.arange(0, cells * k + 1, k, dtype=np.int64),
        np.concatenate(bits), np.concatenate(positive), np.asarray(marks, dtype=np.int64), domain,
    )  # fmt: skip


__all__ = ["DEFAULT_MAX_MARGINALS", "cells_of", "default_marginals", "default_workload"]
