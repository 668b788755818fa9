"""Fit a set of discrete records to noisy marginal measurements (pure post-processing).

The estimator of :mod:`dpquery.algorithms.marginal.adaptive_projection`: ``m`` synthetic
records, each an integer code per attribute, are moved one attribute of one record at a time
to reduce

    L(X) = sum_r w_r || C_r(X) - y_r ||_2^2,    w_r = 1 / sigma_r^2,

the weighted squared distance between the records' counts ``C_r(X)`` on every measured
marginal ``r`` and its noisy measurement ``y_r`` (rescaled to ``m`` records). With the Gaussian
noise of the measurements this is the negative log-likelihood of the counts, the objective
of mbi's L2 estimator (McKenna, Sheldon, Miklau 2019), optimised here over a discrete record
set as Private-GSD does (Liu, Vietri, Steinke, Ullman, Wu 2023, "Generating Private Synthetic
Data with Genetic Algorithms", mutations of single attributes) and as RAP does over a relaxed
one (Aydore et al. 2021): the memory is ``O(m g + sum_r |r|)``, whatever the domain's size.

Moving record ``i``'s attribute ``a`` from value ``u`` to ``v`` changes, in every measured
marginal ``r`` containing ``a``, one count down (cell ``c_u``) and one up (cell ``c_v``):

    Delta L = sum_{r ∋ a} w_r ( 2 (C[c_v] - y[c_v]) - 2 (C[c_u] - y[c_u]) + 2 ),

so one move costs ``O(sum_{r ∋ a} |a|)`` (all values ``v`` tried at once) with counts updated in
place. A measurement may be over a *compressed* domain (MST's domain compression, McKenna,
Miklau, Sheldon 2021, Section 4): each of its attributes carries a public value map
``phi_a: value -> compressed value`` and the record's cell is that of ``(phi_a(x_a))_a``; the
records keep their full-domain codes, and a move from ``u`` to ``v`` changes that measurement's
counts only when ``phi_a(u) != phi_a(v)`` (ordinary marginals: identity maps). A sweep
visits every record and every attribute in a random order and makes the best improving move;
the records start from the measured 1-way marginals (:func:`initial_records`). Nothing here
reads the data: the inputs are the measurements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from dpquery.errors import DPQueryError
from dpquery.queries.marginals import Marginal, marginal_counts


@dataclass(frozen=True)
class Measurement:
    """A noisy count vector ``y`` of the marginal over ``marginal`` (Gaussian, scale
    ``sigma``), measured on ``n`` records. ``maps`` (one integer array per attribute of the
    marginal, value -> compressed value, onto ``0..k_a-1``) makes it a marginal of the
    compressed values, ``y`` of ``prod_a k_a`` cells; None: the values themselves."""

    marginal: Marginal
    y: np.ndarray
    sigma: float
    maps: tuple[np.ndarray, ...] | None = None

    def value_maps(self, sizes: np.ndarray) -> list[np.ndarray]:
        """The map of each attribute of the marginal (identity when not compressed)."""
        if self.maps is None:
            return [np.arange(int(sizes[a]), dtype=np.int64) for a in self.marginal]
        return [np.asarray(f, dtype=np.int64) for f in self.maps]

    def counts(self, X: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The marginal's counts on records ``X`` (``(m, g)`` full-domain codes), through the
        maps: the vector ``y`` measures."""
        if self.maps is None:
            return marginal_counts(X, sizes, self.marginal)
        return mapped_counts(X, self.marginal, self.maps)


def mapped_counts(X: np.ndarray, marginal: Marginal, maps: Sequence[np.ndarray]) -> np.ndarray:
    """The counts of ``marginal`` on ``(m, g)`` full-domain codes ``X`` with each of its
    attributes' values sent through its map (onto ``0..max``): only the marginal's columns
    are mapped."""
    maps = [np.asarray(f, dtype=np.int64) for f in maps]
    Xc = np.stack([f[X[:, a]] for f, a in zip(maps, marginal, strict=True)], axis=1)
    k = np.array([int(f.max()) + 1 for f in maps], dtype=np.int64)
    return marginal_counts(Xc, k, tuple(range(len(maps))))


@dataclass(frozen=True)
class _Packed:
    """The measurements flattened for the compiled kernel."""

    attrs: np.ndarray  # (M, kmax), padded with -1
    strides: np.ndarray  # (M, kmax) mixed-radix stride of each attribute in its marginal
    k: np.ndarray  # (M,)
    offsets: np.ndarray  # (M + 1,) first cell of each marginal in the flat vectors
    target: np.ndarray  # flat noisy counts, rescaled to m records
    weight: np.ndarray  # (M,) 1 / sigma^2 (rescaled)
    vmap: np.ndarray  # flat value maps, value -> (compressed) value
    moffs: np.ndarray  # (M, kmax) offset of each attribute's map in vmap
    att_ptr: np.ndarray  # (g + 1,) CSR: the measurements touching each attribute
    att_mid: np.ndarray  # (g,) ordinary ones in [att_ptr[a], att_mid[a]), compressed after
    att_r: np.ndarray
    att_stride: np.ndarray
    att_moff: np.ndarray
    att_k: np.ndarray  # values of the attribute's (compressed) map in that measurement


def _pack(measurements: Sequence[Measurement], sizes: np.ndarray, n: int, m: int) -> _Packed:
    M = len(measurements)
    kmax = max(len(x.marginal) for x in measurements)
    attrs = np.full((M, kmax), -1, dtype=np.int64)
    strides = np.zeros((M, kmax), dtype=np.int64)
    moffs = np.zeros((M, kmax), dtype=np.int64)
    k = np.array([len(x.marginal) for x in measurements], dtype=np.int64)
    # Identity maps first (shared by every ordinary marginal), then each compressed one's.
    identity = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    vmaps: list[np.ndarray] = [np.arange(int(s), dtype=np.int64) for s in sizes]
    top = int(identity[-1])
    seen: dict[tuple[int, bytes], int] = {}
    cells: list[int] = []
    touching: list[list[tuple[bool, int, int, int, int]]] = [[] for _ in range(len(sizes))]
    for r, x in enumerate(measurements):
        maps = None if x.maps is None else x.value_maps(sizes)
        stride = 1
        for j in range(len(x.marginal) - 1, -1, -1):
            a = x.marginal[j]
            if maps is None:
                off, width = int(identity[a]), int(sizes[a])
            else:
                f = maps[j]
                if f.shape != (int(sizes[a]),) or f.min() < 0 or f.max() >= f.size:
                    raise DPQueryError(f"the value map of attribute {a} must map its "
                                       f"{f.size} values to codes in [0, {f.size})")  # fmt: skip
                key = (a, f.tobytes())  # one copy of each map: the kernel groups by it
                if key not in seen:
                    seen[key] = top
                    top += f.size
                    vmaps.append(f)
                off, width = seen[key], int(f.max()) + 1
            attrs[r, j], strides[r, j], moffs[r, j] = a, stride, off
            touching[a].append((maps is not None, r, stride, off, width))
            stride *= width
        if np.asarray(x.y).size != stride:
            raise DPQueryError(f"measurement of {x.marginal} has {np.asarray(x.y).size} "
                               f"counts, its (compressed) marginal {stride} cells")  # fmt: skip
        cells.append(stride)
    offsets = np.concatenate([[0], np.cumsum(cells)]).astype(np.int64)
    scale = m / n
    target = np.concatenate([np.asarray(x.y, dtype=np.float64) * scale for x in measurements])
    # sigma in units of m records; only relative weights matter for the argmin.
    weight = np.array([1.0 / (x.sigma * scale) ** 2 for x in measurements])
    weight /= weight.max()
    for t in touching:
        # Ordinary marginals first, in measurement order; compressed ones grouped by map.
        t.sort(key=lambda p: (p[0], p[3] if p[0] else 0))
    att_ptr = np.concatenate([[0], np.cumsum([len(t) for t in touching])]).astype(np.int64)
    att_mid = att_ptr[:-1] + np.array([sum(not p[0] for p in t) for t in touching], np.int64)
    flat = [p for t in touching for p in t]
    att_r = np.array([p[1] for p in flat], dtype=np.int64)
    att_stride = np.array([p[2] for p in flat], dtype=np.int64)
    att_moff = np.array([p[3] for p in flat], dtype=np.int64)
    att_k = np.array([p[4] for p in flat], dtype=np.int64)
    vmap = np.concatenate(vmaps).astype(np.int64)
    return _Packed(attrs, strides, k, offsets, target, weight, vmap, moffs, att_ptr, att_mid,
                   att_r, att_stride, att_moff, att_k)  # fmt: skip


@numba.njit(cache=True)
def _cell(X, i, attrs, strides, k, r):  # pragma: no cover - jit
    c = 0
    for j in range(k[r]):
        c += X[i, attrs[r, j]] * strides[r, j]
    return c


@numba.njit(cache=True)
def _mapped_cell(X, i, attrs, strides, k, r, vmap, moffs):  # pragma: no cover - jit
    c = 0
    for j in range(k[r]):
        c += vmap[moffs[r, j] + X[i, attrs[r, j]]] * strides[r, j]
    return c


@numba.njit(cache=True)
def _counts_kernel(X, attrs, strides, k, offsets, vmap, moffs):  # pragma: no cover - jit
    current = np.zeros(offsets[-1])
    for r in range(k.size):
        for i in range(X.shape[0]):
            current[offsets[r] + _mapped_cell(X, i, attrs, strides, k, r, vmap, moffs)] += 1.0
    return current


@numba.njit(cache=True)
def _sweep_kernel(
    X,
    records,
    attributes,
    sizes,
    attrs,
    strides,
    k,
    offsets,
    target,
    weight,
    current,
    vmap,
    moffs,
    att_ptr,
    att_mid,
    att_r,
    att_stride,
    att_moff,
    att_k,
):  # pragma: no cover - jit
    """One pass of best-improvement single-attribute moves; returns the number of moves."""
    delta = np.empty(sizes.max())
    coarse = np.empty(sizes.max())  # the change per compressed value
    moves = 0
    for i in records:
        for a in attributes:
            lo, hi = att_ptr[a], att_ptr[a + 1]
            if lo == hi:
                continue
            s = sizes[a]
            old = X[i, a]
            delta[:s] = 0.0
            mid = att_mid[a]
            for p in range(lo, mid):  # ordinary marginals (v = old is never chosen)
                r, st = att_r[p], att_stride[p]
                base = offsets[r] + _cell(X, i, attrs, strides, k, r) - old * st
                w = weight[r]
                oc = base + old * st
                remove = 1.0 - 2.0 * (current[oc] - target[oc])
                for v in range(s):
                    c = base + v * st
                    delta[v] += w * (remove + 2.0 * (current[c] - target[c]) + 1.0)
            p = mid
            while p < hi:  # compressed ones: summed per compressed value, one map at a time
                mo, kk = att_moff[p], att_k[p]
                mold = vmap[mo + old]
                coarse[:kk] = 0.0
                while p < hi and att_moff[p] == mo:
                    r, st = att_r[p], att_stride[p]
                    oc = offsets[r] + _mapped_cell(X, i, attrs, strides, k, r, vmap, moffs)
                    base = oc - mold * st
                    w = weight[r]
                    remove = 1.0 - 2.0 * (current[oc] - target[oc])
                    for u in range(kk):
                        c = base + u * st
                        coarse[u] += w * (remove + 2.0 * (current[c] - target[c]) + 1.0)
                    p += 1
                coarse[mold] = 0.0  # a value merged with the old one moves no count
                for v in range(s):
                    delta[v] += coarse[vmap[mo + v]]
            best, best_delta = old, -1e-9
            for v in range(s):
                if v != old and delta[v] < best_delta:
                    best, best_delta = v, delta[v]
            if best != old:
                for p in range(lo, mid):
                    r, st = att_r[p], att_stride[p]
                    base = offsets[r] + _cell(X, i, attrs, strides, k, r) - old * st
                    current[base + old * st] -= 1.0
                    current[base + best * st] += 1.0
                for p in range(mid, hi):
                    r, st, mo = att_r[p], att_stride[p], att_moff[p]
                    oc = offsets[r] + _mapped_cell(X, i, attrs, strides, k, r, vmap, moffs)
                    current[oc] -= 1.0
                    current[oc + (vmap[mo + best] - vmap[mo + old]) * st] += 1.0
                X[i, a] = best
                moves += 1
    return moves


def simplex_projection(y: np.ndarray, total: float) -> np.ndarray:
    """The Euclidean projection of ``y`` onto ``{x >= 0, sum x = total}`` (Duchi, Shalev-Shwartz,
    Singer, Chandra 2008, Figure 1): ``max(y - tau, 0)`` for the one ``tau`` that sums right."""
    u = np.sort(y)[::-1]
    excess = np.cumsum(u) - total
    k = np.arange(1, y.size + 1)
    r = int(np.flatnonzero(u - excess / k > 0)[-1])
    return np.maximum(y - excess[r] / (r + 1), 0.0)


def initial_records(
    one_way: Sequence[np.ndarray], m: int, rng: np.random.Generator, *, n: int
) -> np.ndarray:
    """``m`` records whose attribute ``a`` follows the noisy 1-way counts ``one_way[a]``
    (rescaled to ``m`` records and projected onto the simplex, the L2 fit of one
    measurement alone; clipping at 0 instead adds the noise's positive part to every empty
    cell, 1.5x the total variation on adult-pgm's 1-way marginals): each value is given its
    largest-remainder share of the ``m`` records, in an independent random order per
    attribute, so every 1-way marginal is matched up to rounding."""
    X = np.empty((m, len(one_way)), dtype=np.int32)
    for a, y in enumerate(one_way):
        quota = simplex_projection(np.asarray(y, dtype=np.float64), float(n)) * (m / n)
        counts = np.floor(quota).astype(np.int64)
        short = m - int(counts.sum())
        if short > 0:
            counts[np.argsort(counts - quota, kind="stable")[:short]] += 1
        X[:, a] = rng.permutation(np.repeat(np.arange(quota.size, dtype=np.int32), counts))
    return X


def fit_records(
    X: np.ndarray,
    measurements: Sequence[Measurement],
    sizes: np.ndarray,
    *,
    n: int,
    sweeps: int,
    rng: np.random.Generator,
    tol: float = 1e-3,
) -> tuple[np.ndarray, int]:
    """Improve records ``X`` (``(m, g)`` codes, changed in place and returned) against the
    measurements by up to ``sweeps`` sweeps of single-attribute moves (module docstring);
    stops early when a sweep moves fewer than ``tol m`` attributes. Returns ``X`` and the
    number of sweeps made."""
    if not measurements:
        raise DPQueryError("fit_records needs at least one measurement")
    m = X.shape[0]
    packed = _pack(measurements, sizes, n, m)
    sizes64 = np.asarray(sizes, dtype=np.int64)
    current = _counts_kernel(
        X, packed.attrs, packed.strides, packed.k, packed.offsets, packed.vmap, packed.moffs
    )
    done = 0
    for _ in range(sweeps):
        records = rng.permutation(m).astype(np.int64)
        attributes = rng.permutation(len(sizes64)).astype(np.int64)
        moves = _sweep_kernel(
            X, records, attributes, sizes64, packed.attrs, packed.strides, packed.k,
            packed.offsets, packed.target, packed.weight, current, packed.vmap, packed.moffs,
            packed.att_ptr, packed.att_mid, packed.att_r, packed.att_stride, packed.att_moff,
            packed.att_k,
        )  # fmt: skip
        done += 1
        if moves < tol * m:
            break
    return X, done


def loss(X: np.ndarray, measurements: Sequence[Measurement], sizes: np.ndarray, n: int) -> float:
    """``L(X)`` of the module docstring (weights ``1 / sigma^2`` in units of ``m`` records,
    normalised to a largest weight of 1, as the kernel uses them)."""
    packed = _pack(measurements, sizes, n, X.shape[0])
    total = 0.0
    for r, x in enumerate(measurements):
        lo, hi = packed.offsets[r], packed.offsets[r + 1]
        diff = x.counts(X, sizes) - packed.target[lo:hi]
        total += packed.weight[r] * float(diff @ diff)
    return total


__all__ = ["Measurement", "fit_records", "initial_records", "loss", "mapped_counts"]
