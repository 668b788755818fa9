"""Marginal-structured evaluation: attributes as integer codes, marginals as contingency tables.

A domain's bits fall into attributes: each one-hot group (a categorical or numeric attribute,
exactly one bit set per record) and each bit outside every group (a binary attribute, values
0 and 1). :class:`AttributeLayout` maps bits to attributes; :func:`attribute_codes` turns a
:class:`~dpquery.data.binary.BinaryData` into an ``(n, g)`` matrix of value codes once, and
:func:`marginal_counts` answers a whole marginal over attributes ``(a_1, ..., a_k)`` with one
``np.bincount`` of the mixed-radix cell index ``(((c_1 s_2 + c_2) s_3 + c_3) ...)``.

Cells are numbered row-major over the attributes in column order, the order of
:func:`~dpquery.queries.generators.marginal_cells`, so a marginal's count vector lines up with
the cells of a workload built by it. One ``bincount`` answers all cells of a marginal in
``O(n k)``; the per-cell conjunction kernel pays ``O(n / 64)`` per cell
(``benchmarks/bench_utility.py --part kernel`` compares them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData, unpack_columns
from dpquery.errors import DPQueryError
from dpquery.queries.workload import Workload

Marginal = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class AttributeLayout:
    """Attributes of a ``d``-bit domain: ``starts[a]`` is the first bit of attribute ``a``,
    ``sizes[a]`` its number of values, ``onehot[a]`` whether it is a one-hot group (else a
    single free bit with values 0 and 1)."""

    d: int
    starts: np.ndarray
    sizes: np.ndarray
    onehot: np.ndarray

    @classmethod
    def of(cls, d: int, onehot_groups: np.ndarray) -> AttributeLayout:
        """The layout of ``d`` bits with the given ``[start, stop)`` one-hot groups."""
        groups = np.asarray(onehot_groups, dtype=np.int64).reshape(-1, 2)
        in_group = np.zeros(d, dtype=bool)
        for s, e in groups:
            in_group[s:e] = True
        free = np.flatnonzero(~in_group)
        starts = np.concatenate([groups[:, 0], free]).astype(np.int64)
        sizes = np.concatenate([groups[:, 1] - groups[:, 0], np.full(free.size, 2)])
        onehot = np.concatenate([np.ones(len(groups), bool), np.zeros(free.size, bool)])
        order = np.argsort(starts, kind="stable")
        return cls(d, starts[order], sizes[order].astype(np.int64), onehot[order])

    @classmethod
    def of_data(cls, data: BinaryData) -> AttributeLayout:
        return cls.of(data.d, data.onehot_groups)

    @property
    def g(self) -> int:
        """Number of attributes."""
        return int(self.starts.size)

    def attribute_of_bit(self) -> np.ndarray:
        """Attribute index of every bit (length ``d``)."""
        out = np.empty(self.d, dtype=np.int64)
        widths = np.where(self.onehot, self.sizes, 1)
        for a, (s, w) in enumerate(zip(self.starts, widths, strict=True)):
            out[s : s + w] = a
        return out

    def code_dtype(self) -> np.dtype:
        """The smallest unsigned integer type that holds every code."""
        top = int(self.sizes.max()) if self.g else 1
        return np.dtype(np.uint8 if top <= 256 else np.uint16 if top <= 65536 else np.int64)

    def size_of(self, marginal: Sequence[int]) -> int:
        """Number of cells of a marginal."""
        return math.prod(int(self.sizes[a]) for a in marginal)

    def to_rows(self, codes: np.ndarray) -> np.ndarray:
        """Records given as ``(m, g)`` codes, as ``(m, d)`` 0/1 rows over the bits."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.g:
            raise DPQueryError(f"codes must have shape (m, {self.g}), got {codes.shape}")
        if (codes < 0).any() or (codes >= self.sizes[None, :]).any():
            raise DPQueryError("a code is outside its attribute's values")
        rows = np.zeros((codes.shape[0], self.d), dtype=np.uint8)
        m = np.arange(codes.shape[0])
        for a in range(self.g):
            c = codes[:, a].astype(np.int64)
            if self.onehot[a]:
                rows[m, self.starts[a] + c] = 1
            else:
                rows[:, self.starts[a]] = c
        return rows


def attribute_codes(data: BinaryData, layout: AttributeLayout | None = None) -> np.ndarray:
    """The ``(n, g)`` matrix of value codes of every record (see the module docstring).

    A one-hot group's code is the index of its set bit; a free bit's code is the bit.
    """
    layout = AttributeLayout.of_data(data) if layout is None else layout
    codes = np.empty((data.n, layout.g), dtype=layout.code_dtype())
    for a in range(layout.g):
        s = int(layout.starts[a])
        if layout.onehot[a]:
            block = unpack_columns(data.words[s : s + int(layout.sizes[a])], data.n)
            codes[:, a] = np.argmax(block, axis=1)
        else:
            codes[:, a] = unpack_columns(data.words[s : s + 1], data.n)[:, 0]
    return codes


def cell_index(codes: np.ndarray, sizes: np.ndarray, marginal: Sequence[int]) -> np.ndarray:
    """The mixed-radix cell of every record in a marginal (row-major, attributes in order)."""
    idx = codes[:, marginal[0]].astype(np.int64)
    for a in marginal[1:]:
        idx *= int(sizes[a])
        idx += codes[:, a]
    return idx


def marginal_counts(
    codes: np.ndarray,
    sizes: np.ndarray,
    marginal: Sequence[int],
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """The (weighted) count of every cell of the marginal over attributes ``marginal``."""
    cells = math.prod(int(sizes[a]) for a in marginal)
    idx = cell_index(codes, sizes, marginal)
    return np.bincount(idx, weights=weights, minlength=cells).astype(np.float64)


def workload_marginals(workload: Workload, layout: AttributeLayout) -> list[Marginal]:
    """The distinct attribute sets the workload's queries touch, in first-seen order.

    A workload of whole marginals (:func:`~dpquery.queries.generators.marginal_cells`) gives
    back its marginals; any other conjunction workload, the marginals its queries are cells
    (or unions of cells) of.
    """
    if workload.d != layout.d:
        raise DPQueryError(f"the workload is over {workload.d} bits, the layout {layout.d}")
    of_bit = layout.attribute_of_bit()
    attrs = of_bit[workload.bits]
    seen: dict[Marginal, None] = {}
    if workload.marginals is not None:
        firsts = workload.marginals[:-1]
    else:
        firsts = np.arange(len(workload))
    for q in firsts:
        lo, hi = workload.offsets[q], workload.offsets[q + 1]
        seen.setdefault(tuple(sorted({int(a) for a in attrs[lo:hi]})), None)
    return [m for m in seen if m]


def marginal_errors(
    true_codes: np.ndarray,
    synth_codes: np.ndarray,
    sizes: np.ndarray,
    marginals: Sequence[Marginal],
    synth_weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per marginal: the largest cell error and the total variation distance (half the L1
    distance), both between the two tables' marginals as fractions of their records."""
    n = true_codes.shape[0]
    m = float(synth_codes.shape[0] if synth_weights is None else synth_weights.sum())
    max_err = np.empty(len(marginals))
    tv = np.empty(len(marginals))
    for i, r in enumerate(marginals):
        p = marginal_counts(true_codes, sizes, r) / n
        q = marginal_counts(synth_codes, sizes, r, synth_weights) / m
        diff = np.abs(p - q)
        max_err[i], tv[i] = diff.max(), 0.5 * diff.sum()
    return max_err, tv


__all__ = [
    "AttributeLayout",
    "Marginal",
    "attribute_codes",
    "cell_index",
    "marginal_counts",
    "marginal_errors",
    "workload_marginals",
]
