"""Workload generators: the query sets of the papers' experiments.

Every random choice comes from one ``numpy.random.Generator`` resolved from ``seed``
(:func:`dpquery.rng.make_rng`), so a seed fixes the workload bit for bit.

An attribute's *values* are its categories or bins (a one-hot group: value ``v`` is the
positive literal on bit ``offset + v``) or, for a free binary attribute, its two values
(``values[1]`` is the positive literal on its bit, ``values[0]`` the negative one).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from dpquery.data.domain import Binary, Domain
from dpquery.errors import DPQueryError
from dpquery.queries.workload import QueryKind, Workload, concat
from dpquery.rng import SeedLike, make_rng

DEFAULT_MAX_QUERIES = 50_000_000


def n_values(domain: Domain) -> np.ndarray:
    """Number of values of each attribute (2 for a free binary attribute)."""
    return np.array(
        [2 if isinstance(a, Binary) else a.size for a in domain.attributes], dtype=np.int64
    )


def _is_binary(domain: Domain) -> np.ndarray:
    return np.array([isinstance(a, Binary) for a in domain.attributes], dtype=bool)


def _literals_of_values(
    domain: Domain, attrs: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bits and signs of the literals ``attribute == value`` (arrays of equal shape)."""
    binary = _is_binary(domain)[attrs]
    offsets = domain.offsets[attrs]
    bits = np.where(binary, offsets, offsets + values)
    positive = ~binary | (values == 1)
    return bits, positive


def _distinct_rows(rng: np.random.Generator, count: int, k: int, universe: int) -> np.ndarray:
    """``count`` sorted rows of ``k`` distinct integers drawn uniformly from ``range(universe)``.

    Each row is a uniform k-subset: rows with a repeat are redrawn (rejection), or, when
    repeats are likely, the subset is the first k of a random permutation.
    """
    if not 0 <= k <= universe:
        raise DPQueryError(f"cannot choose {k} distinct items out of {universe}")
    p_distinct = math.prod((universe - i) / universe for i in range(k)) if universe else 1.0
    if p_distinct < 0.25:
        rows = np.argsort(rng.random((count, universe)), axis=1)[:, :k]
        return np.sort(rows, axis=1)
    rows = np.sort(rng.integers(0, universe, size=(count, k)), axis=1)
    while True:
        bad: np.ndarray = (
            np.flatnonzero((rows[:, 1:] == rows[:, :-1]).any(axis=1))
            if k > 1
            else np.zeros(0, np.int64)
        )
        if len(bad) == 0:
            return rows
        rows[bad] = np.sort(rng.integers(0, universe, size=(len(bad), k)), axis=1)


def random_marginal_queries(domain: Domain, k: int, count: int, seed: SeedLike = None) -> Workload:
    """Random *sensible* k-way marginal queries (DualQuery 2015, Section 7 / 2022, Section 6.4).

    Each query picks k distinct attributes uniformly and one value of each uniformly, so it
    never asks an attribute for two values; it is the conjunction of the k literals
    ``attribute == value``. On free binary attributes a value of 0 is a negative literal: on
    DualQuery's biased-bits data these are the 3-literal queries of its baseline analysis.
    """
    if count < 0:
        raise DPQueryError(f"count must be non-negative, got {count}")
    if not 1 <= k <= len(domain):
        raise DPQueryError(f"k must be between 1 and the {len(domain)} attributes, got {k}")
    rng = make_rng(seed)
    attrs = _distinct_rows(rng, count, k, len(domain))
    sizes = n_values(domain)[attrs]
    values = np.floor(rng.random(attrs.shape) * sizes).astype(np.int64)
    bits, positive = _literals_of_values(domain, attrs, values)
    offsets = np.arange(0, count * k + 1, k, dtype=np.int64)
    return Workload("conjunction", domain.d, offsets, bits.ravel(), positive.ravel(), None, domain)


def marginal_size(domain: Domain, attributes: Sequence[str]) -> int:
    """Number of cells of the marginal over ``attributes`` (product of value counts)."""
    sizes = n_values(domain)
    return math.prod(int(sizes[domain.position(a)]) for a in attributes)


def marginal_cells(
    domain: Domain,
    marginals: Sequence[Sequence[str]],
    *,
    max_queries: int = DEFAULT_MAX_QUERIES,
) -> Workload:
    """All cells of each marginal, one conjunction per cell (Oracle-efficient, Definition 2.5).

    Cells of a marginal are contiguous, in row-major order of its attributes taken in
    column order; the workload's ``marginals`` marks them, so total variation can be
    reported per marginal.
    """
    total = sum(marginal_size(domain, m) for m in marginals)
    if total > max_queries:
        raise DPQueryError(
            f"the marginals have {total} cells in all, more than max_queries={max_queries}"
        )
    if not marginals:
        raise DPQueryError("give at least one marginal (a list of attribute names)")
    parts = []
    sizes = n_values(domain)
    for names in marginals:
        attrs = np.array([domain.position(a) for a in names], dtype=np.int64)
        if len(set(attrs.tolist())) != len(attrs):
            raise DPQueryError(f"marginal {list(names)} names an attribute twice")
        order = np.argsort(attrs, kind="stable")
        attrs = attrs[order]
        grid = np.indices(tuple(sizes[attrs]), dtype=np.int64).reshape(len(attrs), -1).T
        bits, positive = _literals_of_values(domain, attrs[None, :], grid)
        cells, k = grid.shape
        offsets = np.arange(0, cells * k + 1, k, dtype=np.int64)
        parts.append(
            Workload(
                "conjunction",
                domain.d,
                offsets,
                bits.ravel(),
                positive.ravel(),
                np.array([0, cells]),
                domain,
            )
        )
    return concat(parts)


def fem_marginals(
    domain: Domain, k: int, m: int, n: int, seed: SeedLike = None
) -> list[tuple[str, ...]]:
    """The FEM / RAP experiment protocol's choice of m random k-attribute marginals.

    All k-combinations of the attributes in column order whose marginal has at most ``n``
    cells (``n`` = number of records, public here); if there are more than ``m``, ``m`` of
    them drawn without replacement by ``default_rng(seed).choice`` (Oracle-efficient,
    Section 7: "64 3-way marginals of Adult"), in the order drawn.
    """
    if k < 1 or m < 1:
        raise DPQueryError(f"k and m must be positive, got k={k}, m={m}")
    sizes = n_values(domain)
    combos = [
        c
        for c in itertools.combinations(range(len(domain)), k)
        if math.prod(int(sizes[i]) for i in c) <= n
    ]
    if len(combos) > m:
        pick = make_rng(seed).choice(len(combos), m, replace=False)
        combos = [combos[i] for i in pick]
    return [tuple(domain.names[i] for i in c) for c in combos]


def random_marginal_cells(
    domain: Domain, k: int, m: int, n: int, seed: SeedLike = None, **kwargs: int
) -> Workload:
    """All cells of the m marginals chosen by :func:`fem_marginals`."""
    return marginal_cells(domain, fem_marginals(domain, k, m, n, seed), **kwargs)


def all_kway_marginals(
    domain: Domain,
    k: int,
    attributes: Sequence[str] | None = None,
    *,
    max_queries: int = DEFAULT_MAX_QUERIES,
) -> Workload:
    """All cells of every k-way marginal over ``attributes`` (default: all attributes)."""
    names = list(domain.names if attributes is None else attributes)
    if not 1 <= k <= len(names):
        raise DPQueryError(f"k must be between 1 and {len(names)}, got {k}")
    return marginal_cells(domain, list(itertools.combinations(names, k)), max_queries=max_queries)


def _random_bit_sets(
    kind: QueryKind, d: int, k: int, count: int, seed: SeedLike, domain: Domain | None
) -> Workload:
    if count < 0 or not 1 <= k <= d:
        raise DPQueryError(f"need 1 <= k <= d={d} and count >= 0, got k={k}, count={count}")
    bits = _distinct_rows(make_rng(seed), count, k, d)
    offsets = np.arange(0, count * k + 1, k, dtype=np.int64)
    return Workload(kind, d, offsets, bits.ravel(), np.ones(count * k, bool), None, domain)


def random_parities(
    d: int, k: int, count: int, seed: SeedLike = None, domain: Domain | None = None
) -> Workload:
    """``count`` k-wise parity queries over uniformly random k-sets of bits (DualQuery,
    Appendix A / journal Definition 6.1)."""
    return _random_bit_sets("parity", d, k, count, seed, domain)


def random_disjunctions(
    d: int, k: int, count: int, seed: SeedLike = None, domain: Domain | None = None
) -> Workload:
    """``count`` monotone k-way disjunctions over random k-sets of bits (Small databases,
    Section 1.2: the fraction of records with at least one bit of S set)."""
    return _random_bit_sets("disjunction", d, k, count, seed, domain)
