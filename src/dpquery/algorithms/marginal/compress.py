"""Domain compression of candidate marginals (MST's, applied to AIM's candidates).

MST (McKenna, Miklau, Sheldon 2021, "Winning the NIST Contest: A scalable and general approach
to differentially private synthetic data", Section 4, "domain compression") merges, after the
1-way marginals are measured, every value whose noisy count is below ``3 sigma`` into one
"other" value and measures later marginals on the compressed domain: cells that hold almost no
record stop taking noise, and AIM's selection penalty ``sqrt(2/pi) sigma n_r`` shrinks with the
cell count ``n_r``.

Here, per attribute ``a``, the noisy 1-way counts ``y_a`` (all 1-way measurements of ``a``
combined by inverse variance) are projected onto the simplex of ``n`` records and every value
whose projected count is below ``c sigma_a`` joins one "other" value:

    phi_a(v) = rank of v among the kept values,  or  k_a (the "other" value) when merged.

The maps read only the measurements and their public scales (:func:`value_map` takes nothing
else), so they are post-processing of charged mechanisms and change no cost. A compressed
marginal's count vector still has L2 sensitivity ``sqrt(2)`` under replace-one (a record moves
one count down and one up, or none when its old and new values share a compressed cell), and
its L1 distance still moves by at most 2, so the selection's sensitivity and the measurement's
cost are those of the fine marginal.

**Ordinal coarsening** (not in MST or AIM). An attribute whose values are ordered (a public
fact about the domain: a numeric column's bins, declared by the user) is cut into at most
``B`` contiguous bins of about equal noisy mass, ``psi_a``: over the noisy counts projected
onto the simplex, in value order, a value opens a new bin when the current bin's mass up to
the value's middle passes the bin's share of the mass left (the mass from the bin's first
value on, divided by the bins left). ``psi_a`` is non-decreasing, so every bin is a run of
adjacent values; a value holding more than its share is a bin of its own and the values after
it share the bins it leaves. Values after the ordered ones (a numeric column's "missing"
value) keep a code each. A candidate holding such an attribute is then also offered on the
bins (:func:`extra_candidates`): ``age x sex x income`` on 20 cells at ``B = 5`` instead of
340, a dependence measured over fewer, larger cells. The records keep their full-domain
codes and are fitted through ``psi_a`` as through ``phi_a`` (the other measurements, the
1-way ones first, place them within a bin). ``psi_a`` reads the same inputs as ``phi_a`` (the noisy
1-way counts, ``n`` and the public ``B``): post-processing, no cost, and the sensitivities
above hold for any value map.

**Ranks within the ordinal bins** (not in MST or AIM). A pair of an ordered attribute ``a``
and a key-like one ``b`` (unordered, more values than ``a``: 500 fish, one otolith code
each) is also offered with ``a`` sent to its rank within its ordinal bin,
``rho_a(v) = v - first(psi_a(v))`` (:func:`rank_candidates`): ``psi_a`` and ``rho_a`` are
the two digits of ``v``, so ``b x psi_a`` and ``b x rho_a`` together say which value of
``a`` each value of ``b`` holds, on ``k_b (B + r)`` cells rather than ``k_b |a|`` (``r``
the widest bin's values), few enough for AIM's selection penalty. The same inputs, the same
sensitivities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dpquery.algorithms.marginal.one_way import one_way_estimates
from dpquery.algorithms.marginal.projection import Measurement, mapped_counts, simplex_projection
from dpquery.algorithms.parameters import positive, positive_int
from dpquery.errors import DPQueryError
from dpquery.queries.marginals import Marginal

# The threshold c: values whose noisy count is below c sigma_a merge (MST uses 3; c = 5 was
# tuned on adult-pgm, docs/utility.md Tuning).
DEFAULT_COMPRESS = 5.0
# B of the ordinal coarsening: the most contiguous bins an ordered attribute is cut into
# (under add/remove, 5 against 3 and 10: lower mean TVs than 10 on ACS at every epsilon and
# on adult-pgm at 0.1 and 0.25, level at 0.5, behind at 1; 3 behind 5; docs/utility.md,
# Tuning under add/remove).
DEFAULT_ORDINAL_BINS = 5


def value_map(y: np.ndarray, sigma: float, n: int, c: float) -> np.ndarray:
    """``phi_a`` of the module docstring: the values whose noisy count ``y`` (scale
    ``sigma``), projected onto the simplex of ``n`` records, is below ``c sigma`` share one
    code after the kept values' (in value order); the identity when fewer than two values
    fall below (merging one value shrinks nothing)."""
    y = np.asarray(y, dtype=np.float64)
    keep = simplex_projection(y, float(n)) >= c * positive("sigma", sigma)
    if int((~keep).sum()) < 2:
        return np.arange(y.size, dtype=np.int64)
    out = np.full(y.size, int(keep.sum()), dtype=np.int64)
    out[keep] = np.arange(int(keep.sum()))
    return out


def ordinal_map(y: np.ndarray, n: int, bins: int, ordered: int | None = None) -> np.ndarray:
    """``psi_a`` of the module docstring: the first ``ordered`` values (default all) of an
    attribute with noisy counts ``y`` cut into at most ``bins`` contiguous bins of about equal
    mass of the counts projected onto the simplex of ``n`` records; the values after them
    keep a code each, after the bins. The identity when ``ordered <= bins``."""
    y = np.asarray(y, dtype=np.float64)
    ordered = y.size if ordered is None else ordered
    if not 0 <= ordered <= y.size:
        raise DPQueryError(f"ordered must be in [0, {y.size}], got {ordered!r}")
    bins = positive_int("bins", bins)
    if ordered <= bins:
        return np.arange(y.size, dtype=np.int64)
    p = simplex_projection(y, float(positive("n", n)))[:ordered]
    codes = np.zeros(ordered, dtype=np.int64)
    b, left, share, current = 0, float(p.sum()), float(p.sum()) / bins, 0.0
    for v in range(ordered):
        # A new bin when the value's middle passes the current bin's share of what is left
        # (the share re-read at each bin, so that a value holding many bins' mass leaves the
        # others to the rest); never an empty bin, never more than ``bins``.
        if current > 0 and b < bins - 1 and current + p[v] / 2 > share:
            b, left = b + 1, left - current
            share, current = left / (bins - b), 0.0
        codes[v] = b
        current += float(p[v])
    rest = np.arange(y.size - ordered, dtype=np.int64) + b + 1
    return np.concatenate([codes, rest])


@dataclass(frozen=True, eq=False)
class Compression:
    """The value maps ``phi_a`` of every attribute and the compressed sizes ``k_a``."""

    maps: tuple[np.ndarray, ...]
    sizes: np.ndarray

    @classmethod
    def of(cls, measurements: Sequence[Measurement], g: int, n: int, c: float) -> Compression:
        """The maps from the 1-way measurements among ``measurements`` (threshold ``c``)."""
        maps = tuple(value_map(y, s, n, c) for y, s in one_way_estimates(measurements, g))
        return cls(maps, np.array([int(f.max()) + 1 for f in maps], dtype=np.int64))

    @classmethod
    def ordinal(
        cls, measurements: Sequence[Measurement], sizes: np.ndarray, n: int, bins: int,
        ordered: Mapping[int, int], base: Compression | None,
    ) -> Compression:  # fmt: skip
        """The maps cutting each attribute of ``ordered`` (attribute -> number of its leading
        values that are ordered) into contiguous bins (:func:`ordinal_map`), from the 1-way
        measurements among ``measurements``; every other attribute keeps ``base``'s map (the
        identity without ``base``)."""
        maps = []
        for a, (y, _) in enumerate(one_way_estimates(measurements, len(sizes))):
            if a in ordered:
                maps.append(ordinal_map(y, n, bins, ordered[a]))
            elif base is not None:
                maps.append(base.maps[a])
            else:
                maps.append(np.arange(int(sizes[a]), dtype=np.int64))
        return cls(tuple(maps), np.array([int(f.max()) + 1 for f in maps], dtype=np.int64))

    def counts(self, codes: np.ndarray, marginal: Marginal) -> np.ndarray:
        """The compressed marginal's counts on ``(m, g)`` full-domain codes."""
        return mapped_counts(codes, marginal, [self.maps[a] for a in marginal])

    def compressed(self, marginal: Marginal, fine: np.ndarray) -> np.ndarray:
        """The compressed marginal's counts from the fine marginal's ``fine`` (each fine
        cell added into its compressed cell: exact, the counts being integers)."""
        return np.bincount(self.cell_map(marginal), weights=fine, minlength=self.cells(marginal))

    def cells(self, marginal: Marginal) -> int:
        """Cells of the marginal on the compressed domain."""
        return int(np.prod([self.sizes[a] for a in marginal]))

    def cell_map(self, marginal: Marginal) -> np.ndarray:
        """Each fine cell's compressed cell (cells row-major, as ``marginal_counts``)."""
        idx = np.zeros(1, dtype=np.int64)
        for a in marginal:
            idx = (idx[:, None] * self.sizes[a] + self.maps[a][None, :]).ravel()
        return idx

    def shrunk(self, candidates: Sequence[Marginal], sizes: np.ndarray) -> list[Marginal]:
        """The candidates with fewer cells compressed than fine (the others gain nothing)."""
        return [r for r in candidates
                if self.cells(r) < int(np.prod([int(sizes[a]) for a in r]))]  # fmt: skip

    def measurement(self, marginal: Marginal, y: np.ndarray, sigma: float) -> Measurement:
        """A measurement ``y`` of the compressed marginal, for the estimator."""
        return Measurement(marginal, y, sigma, tuple(self.maps[a] for a in marginal))


def scored_candidates(
    table: dict[Marginal, float], fine: dict[Marginal, np.ndarray], sizes: np.ndarray,
    compression: Compression | None,
) -> tuple[list[Marginal], np.ndarray, list[np.ndarray], list[np.ndarray | None]]:  # fmt: skip
    """The selection's candidates (AIM's, ``table`` with their weights), each with its weight,
    its true counts (from ``fine``, every candidate's counts) and ``None``; then, with
    ``compression``, every one it shrinks again with the same weight, its compressed true
    counts and its cell map."""
    candidates = list(table)
    true_counts = [fine[r] for r in candidates]
    cell_maps: list[np.ndarray | None] = [None] * len(candidates)
    if compression is not None:
        for r in compression.shrunk(list(table), sizes):
            f = compression.cell_map(r)
            candidates.append(r)
            cell_maps.append(f)
            true_counts.append(compression.compressed(r, fine[r]))
    return candidates, np.array([table[r] for r in candidates]), true_counts, cell_maps


def extra_candidates(
    table: dict[Marginal, float], fine: dict[Marginal, np.ndarray], sizes: np.ndarray,
    compression: Compression | None, coarse: Compression,
) -> tuple[list[Marginal], np.ndarray, list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """The candidates ``coarse`` (a second, larger threshold, or the ordinal bins) shrinks
    below what ``compression`` (None: the fine domain) leaves of them, each with its weight,
    its coarse true counts and its cell map: the same marginals on fewer cells, so that a
    round can measure a large cell (a value most records share, a run of adjacent values)
    with the noise of a handful of cells."""
    picked = [r for r in coarse.shrunk(list(table), sizes)
              if compression is None or coarse.cells(r) < compression.cells(r)]  # fmt: skip
    maps = [coarse.cell_map(r) for r in picked]
    counts = [coarse.compressed(r, fine[r]) for r in picked]
    return picked, np.array([table[r] for r in picked]), counts, maps


def rank_map(bins: np.ndarray, ordered: int) -> np.ndarray:
    """``rho_a`` of :func:`rank_candidates`: each of the first ``ordered`` values' rank within
    its run of the ordinal map ``bins`` (:func:`ordinal_map`, non-decreasing), from 0; the
    values after them keep a code each, after the largest rank. With ``psi_a`` it names a
    value: ``v = first(psi_a(v)) + rho_a(v)`` (a mixed-radix digit pair)."""
    bins = np.asarray(bins, dtype=np.int64)
    if not 0 <= ordered <= bins.size:
        raise DPQueryError(f"ordered must be in [0, {bins.size}], got {ordered!r}")
    head = bins[:ordered]
    first = np.searchsorted(head, head, side="left") if ordered else head
    ranks = np.arange(ordered, dtype=np.int64) - first
    top = int(ranks.max()) + 1 if ordered else 0
    rest = np.arange(bins.size - ordered, dtype=np.int64) + top
    return np.concatenate([ranks, rest])


def rank_compression(
    bins: Compression, ordered: Mapping[int, int], sizes: np.ndarray,
    base: Compression | None,
) -> Compression:  # fmt: skip
    """Every attribute of ``ordered`` that ``bins`` cuts sent through :func:`rank_map` (its
    rank within its ordinal bin), every other one through ``base``'s map (the identity
    without ``base``): post-processing of the same 1-way measurements as ``bins``."""
    maps = []
    for a, s in enumerate(sizes):
        if a in ordered and int(bins.sizes[a]) < int(s):
            maps.append(rank_map(bins.maps[a], ordered[a]))
        else:
            maps.append(base.maps[a] if base is not None else np.arange(int(s), dtype=np.int64))
    return Compression(tuple(maps), np.array([int(f.max()) + 1 for f in maps], dtype=np.int64))


def rank_candidates(
    table: dict[Marginal, float], fine: dict[Marginal, np.ndarray], sizes: np.ndarray,
    ranks: Compression, ordered: Mapping[int, int],
) -> tuple[list[Marginal], np.ndarray, list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """The 2-way candidates ``(a, b)`` of ``table`` pairing an ordered attribute ``a`` that
    ``ranks`` sends to its ranks (:func:`rank_compression`) with an unordered ``b`` of more
    (compressed) values than ``a`` has, a key-like column (500 fish, one otolith code each),
    each again on ``ranks``: ``b x psi_a`` (offered by :func:`extra_candidates`) and
    ``b x rho_a`` together pin ``b``'s value of ``a`` on ``k_b (B + r)`` cells instead of
    ``k_b |a|`` (``r`` the widest bin's values), cells AIM's selection penalty
    ``sqrt(2/pi) sigma n_r`` can pay for. The maps read the 1-way measurements and public
    sizes only: the same sensitivity and cost as any value map (module docstring). Each with
    its weight, its counts and its cell map."""
    cut = {a for a in ordered if int(ranks.sizes[a]) < int(sizes[a])}
    picked: list[Marginal] = []
    for r in table:
        if len(r) != 2:
            continue
        a, b = r if r[0] in cut else (r[1], r[0])
        # ``a`` cut into ranks, ``b`` unordered and of more values than ``a`` (key-like)
        if a in cut and b not in ordered and int(ranks.sizes[b]) > int(sizes[a]):
            picked.append(r)
    maps = [ranks.cell_map(r) for r in picked]
    counts = [ranks.compressed(r, fine[r]) for r in picked]
    return picked, np.array([table[r] for r in picked]), counts, maps


__all__ = [
    "DEFAULT_COMPRESS",
    "DEFAULT_ORDINAL_BINS",
    "Compression",
    "extra_candidates",
    "ordinal_map",
    "rank_candidates",
    "rank_compression",
    "rank_map",
    "scored_candidates",
    "value_map",
]
