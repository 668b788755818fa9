"""General linear queries given as a predicate matrix over an explicit universe of records.

A linear query is a vector ``q ∈ [0, 1]^{|X|}`` over the data universe, answered as
``<q, D>`` on the normalised histogram ``D`` (DualQuery, Section 2, "linear queries
q_1, ..., q_k ∈ {0,1}^{|X|}"). When the universe is small enough to list, any such queries
are rows of a matrix ``M`` (queries x universe records); the answer vector is ``M @ D``.
Every record of the data must lie in the universe: a query says nothing about the others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData, unpack_columns
from dpquery.data.records import Records
from dpquery.errors import DPQueryError

_CHUNK_RECORDS = 1 << 16


def _row_keys(rows: np.ndarray) -> np.ndarray:
    packed = np.ascontiguousarray(np.packbits(rows, axis=1))
    return packed.view(np.dtype((np.void, max(packed.shape[1], 1))))[:, 0]


@dataclass(frozen=True, eq=False)
class LinearQueries:
    """``matrix[i, u]`` is query i's value on ``universe[u]`` (an ``(u, d)`` 0/1 matrix of
    distinct records). Values lie in ``[lo, hi]`` (``value_range``, default ``[0, 1]``)."""

    universe: np.ndarray
    matrix: np.ndarray
    value_range: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self) -> None:
        universe = np.ascontiguousarray(self.universe, dtype=np.uint8)
        matrix = np.ascontiguousarray(self.matrix, dtype=np.float64)
        if universe.ndim != 2 or (universe.size and universe.max() > 1):
            raise DPQueryError(f"universe must be a 2-D 0/1 matrix, got shape {universe.shape}")
        if matrix.ndim != 2 or matrix.shape[1] != universe.shape[0]:
            raise DPQueryError(
                f"matrix must have one column per universe record ({universe.shape[0]}), "
                f"got shape {matrix.shape}"
            )
        lo, hi = self.value_range
        if matrix.size and (
            matrix.min() < lo or matrix.max() > hi or not np.isfinite(matrix).all()
        ):
            raise DPQueryError(f"query values must lie in [{lo}, {hi}]")
        if np.unique(_row_keys(universe)).size != universe.shape[0]:
            raise DPQueryError("the universe lists a record twice")
        for a in (universe, matrix):
            a.setflags(write=False)
        object.__setattr__(self, "universe", universe)
        object.__setattr__(self, "matrix", matrix)

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def d(self) -> int:
        return int(self.universe.shape[1])

    def negate(self, answers: np.ndarray) -> np.ndarray:
        """Answers of the negated queries ``lo + hi - q``."""
        lo, hi = self.value_range
        return (lo + hi) - np.asarray(answers, dtype=np.float64)

    def _index(self, rows: np.ndarray) -> np.ndarray:
        """Universe index of each row; an error if a row is not in the universe."""
        u = self.universe.shape[0]
        _, inverse = np.unique(
            np.concatenate([_row_keys(self.universe), _row_keys(rows)]), return_inverse=True
        )
        inverse = inverse.ravel()
        position = np.full(inverse.max() + 1, -1, dtype=np.int64)
        position[inverse[:u]] = np.arange(u)
        index = position[inverse[u:]]
        if (index < 0).any():
            raise DPQueryError(
                f"{int((index < 0).sum())} record(s) lie outside the queries' universe "
                f"(first: row {int(np.argmax(index < 0))})"
            )
        return index

    def histogram(self, target: BinaryData | Records) -> np.ndarray:
        """Normalised histogram of ``target`` over the universe."""
        if target.d != self.d:
            raise DPQueryError(f"the queries are over {self.d} bits but the data has {target.d}")
        hist = np.zeros(self.universe.shape[0])
        if isinstance(target, Records):
            hist += np.bincount(
                self._index(target.rows), weights=target.probabilities, minlength=hist.size
            )
            return hist
        if target.n == 0:
            raise DPQueryError("cannot answer queries on a dataset with no records")
        for start in range(0, target.n, _CHUNK_RECORDS):  # unpack a chunk of records at a time
            stop = min(target.n, start + _CHUNK_RECORDS)
            words = target.words[:, start // 64 : (stop + 63) // 64]
            rows = unpack_columns(words, stop - start)
            hist += np.bincount(self._index(rows), minlength=hist.size)
        return hist / target.n

    def answer(self, target: BinaryData | Records) -> np.ndarray:
        """``M @ D``: the answers on a dataset or a weighted record set."""
        return self.matrix @ self.histogram(target)
