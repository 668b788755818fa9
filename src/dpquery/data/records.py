"""``Records``: a (weighted) set of synthetic records over the bits of a domain.

This is what every algorithm releases: DualQuery's T best responses, FEM's T*s perturbed
leaders, MWEM's sample. Rows are dense ``uint8`` 0/1 vectors (a synthetic set is small next
to the data); weights are non-negative and are normalised to sum to 1 when answering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData, pack_columns
from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError


def check_weights(weights: object, n: int) -> np.ndarray:
    """``weights`` as ``n`` finite, non-negative float64s, not all zero (when ``n``), read-only;
    an error naming the first bad record otherwise."""
    w = np.array(weights, dtype=np.float64)
    if w.shape != (n,):
        raise DPQueryError(f"weights must have shape ({n},), got {w.shape}")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        raise DPQueryError(
            f"weights must be finite and non-negative; record {int(np.argmax(bad))} has "
            f"weight {float(w[bad][0])!r}"
        )
    if n and w.sum() <= 0:
        raise DPQueryError("weights must be finite and non-negative, and must not all be zero")
    w.setflags(write=False)
    return w


@dataclass(frozen=True, eq=False)
class Records:
    """``m`` records (rows of 0/1 over d bits) with non-negative weights."""

    rows: np.ndarray
    weights: np.ndarray | None = None
    domain: Domain | None = None

    def __post_init__(self) -> None:
        raw = np.asarray(self.rows)
        if raw.ndim != 2:
            raise DPQueryError(f"records must be a 2-D (m, d) array, got shape {raw.shape}")
        # Check before the cast to uint8, which would wrap 256 to 0 and truncate 0.5 to 0.
        if raw.size and (raw.dtype != np.uint8 or raw.max() > 1) and not np.isin(raw, (0, 1)).all():
            raise DPQueryError("records may hold only 0 and 1")
        rows = np.ascontiguousarray(raw, dtype=np.uint8)
        m = rows.shape[0]
        w = np.ones(m) if self.weights is None else check_weights(self.weights, m)
        if self.domain is not None and self.domain.d != rows.shape[1]:
            raise DPQueryError(f"records have {rows.shape[1]} bits, the domain {self.domain.d}")
        rows.setflags(write=False)
        w.setflags(write=False)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "weights", w)

    @property
    def m(self) -> int:
        return int(self.rows.shape[0])

    @property
    def d(self) -> int:
        return int(self.rows.shape[1])

    @property
    def probabilities(self) -> np.ndarray:
        """Weights normalised to sum to 1."""
        assert self.weights is not None
        return self.weights / self.weights.sum()

    def to_binary(self) -> BinaryData:
        """The rows as column-packed :class:`BinaryData` (weights dropped)."""
        groups = None if self.domain is None else self.domain.onehot_groups
        return BinaryData(
            pack_columns(self.rows),
            self.m,
            np.zeros((0, 2), np.int64) if groups is None else groups,
            self.domain,
        )
