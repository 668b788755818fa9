"""The cells of MWEM's explicit domain: counting them (and refusing too many, with the
memory they would need) before enumerating them, enumerating them, and the cells and prior
weights of an explicit support.

A domain of ``d`` bits with one-hot groups has one value per group and two per free bit:
``prod(group sizes) * 2^(free bits)`` cells, an exact integer however large.
"""

from __future__ import annotations

import math

import numpy as np

from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.queries import Workload

DEFAULT_MAX_CELLS = 2**24


def domain_cells(d: int, onehot_groups: np.ndarray) -> int:
    """Number of records over ``d`` bits with one bit per one-hot group: the product of the
    group sizes times ``2^(free bits)`` (an exact integer, however large)."""
    sizes = [int(b - a) for a, b in np.asarray(onehot_groups).reshape(-1, 2)]
    return math.prod(sizes) * 2 ** (d - sum(sizes))


def cells_memory(cells: int, d: int) -> int:
    """Bytes MWEM needs for ``cells`` cells over ``d`` bits: the released rows (``d`` bytes
    each), their packed columns (``d/8``) and four float64 vectors (log-weights, current and
    average distribution, one query's values)."""
    return cells * (d + math.ceil(d / 8) + 4 * 8)


def _approx(x: int) -> str:
    digits = str(x)
    return f"{x:,}" if len(digits) <= 12 else f"{digits[0]}.{digits[1:3]}e{len(digits) - 1}"


def _bytes(x: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if x >= size:
            return f"{_approx(x // size)} {unit}"
    return f"{x:,} bytes"


def check_domain_size(d: int, onehot_groups: np.ndarray, max_cells: int) -> int:
    """The number of cells, or a :class:`DPQueryError` naming it and the memory it needs."""
    cells = domain_cells(d, onehot_groups)
    if cells > max_cells:
        raise DPQueryError(
            f"MWEM keeps an explicit distribution over the domain: {_approx(cells)} cells "
            f"(more than max_cells={max_cells:,}) would need about "
            f"{_bytes(cells_memory(cells, d))} of memory; use DualQuery, DQRS or FEM, which "
            f"never enumerate the domain, or raise max_cells"
        )
    return cells


def enumerate_cells(d: int, onehot_groups: np.ndarray) -> np.ndarray:
    """Every record (``(cells, d)`` uint8, one bit per group), in mixed-radix order: cell
    ``c`` takes value ``(c // stride_j) % size_j`` of factor ``j`` (groups and free bits in
    bit order, the last varying fastest). Call :func:`check_domain_size` first."""
    groups = [(int(a), int(b)) for a, b in np.asarray(onehot_groups).reshape(-1, 2)]
    in_group = np.zeros(d, dtype=bool)
    for a, b in groups:
        in_group[a:b] = True
    # (first bit, number of values, one-hot?) for every factor, in bit order
    factors = sorted([(a, b - a, True) for a, b in groups]
                     + [(j, 2, False) for j in np.flatnonzero(~in_group).tolist()])  # fmt: skip
    cells = domain_cells(d, onehot_groups)
    rows = np.zeros((cells, d), dtype=np.uint8)
    index = np.arange(cells, dtype=np.int64)
    stride = 1
    for a, size, onehot in reversed(factors):
        digit = (index // stride) % size
        if onehot:
            rows[index, a + digit] = 1
        else:  # a free bit: its value is the digit
            rows[:, a] = digit
        stride *= size
    return rows


def support_cells(
    support: Records | np.ndarray, d: int, max_cells: int
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``support`` (records with weights, or an ``(m, d)`` 0/1 array of
    equally weighted rows) and the total weight of each: MWEM's cells and prior. Rows of
    zero weight are dropped (multiplicative weights would never revive them)."""
    records = support if isinstance(support, Records) else Records(np.asarray(support))
    if records.d != d:
        raise DPQueryError(f"the support has {records.d} bits, the data {d}")
    weights = np.ones(records.m) if records.weights is None else records.weights
    keep = weights > 0  # Records guarantees some
    cells, inverse = np.unique(records.rows[keep], axis=0, return_inverse=True)
    if cells.shape[0] > max_cells:
        raise DPQueryError(
            f"the support has {cells.shape[0]:,} distinct records, more than "
            f"max_cells={max_cells:,} (about {_bytes(cells_memory(cells.shape[0], d))}); "
            f"raise max_cells or pass fewer records"
        )
    prior = np.bincount(inverse.ravel(), weights=weights[keep], minlength=len(cells))
    return cells, prior / prior.sum()


def answer_cells(workload: Workload, cells: np.ndarray) -> np.ndarray:
    """Each query's value on each cell, ``(len(workload), cells)`` flattened for one query:
    the fold of its literals over the dense rows (conjunction AND, disjunction OR, parity
    ``+1`` for an even number of set bits)."""
    out = np.zeros((len(workload), cells.shape[0]))
    for q in range(len(workload)):
        lits = workload.literals(q)
        holds = np.stack([cells[:, b] == int(p) for b, p in lits]) if lits else None
        if workload.kind == "conjunction":
            out[q] = True if holds is None else holds.all(axis=0)
        elif workload.kind == "disjunction":
            out[q] = False if holds is None else holds.any(axis=0)
        else:
            ones = cells[:, [b for b, _ in lits]].sum(axis=1) if lits else 0
            out[q] = np.where(np.asarray(ones) % 2 == 0, 1.0, -1.0)
    return out[0] if len(workload) == 1 else out
