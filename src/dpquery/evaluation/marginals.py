"""1-way and 2-way marginals of a table over its public domain, real against synthetic.

A marginal of attributes ``(a, b)`` is the fraction of records in every cell of ``a x b``.
Each attribute is written as one-hot *indicator columns* (a categorical or numeric attribute
is already one-hot in the bits; a binary attribute's one bit becomes ``(not x, x)``), so the
weighted Gram matrix ``G = X^T W X / sum(w)`` holds every 1-way marginal on its diagonal and
every 2-way marginal as a block: one pass over the rows gives all of them.

The total variation distance of two marginals is ``TV = 1/2 sum_cells |p - q|``. Computed on
the private data: these figures are NOT differentially private (evaluation for the data holder).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData, unpack_columns
from dpquery.data.domain import Binary, Domain
from dpquery.data.records import Records
from dpquery.errors import DPQueryError

_CHUNK_WORDS = 512  # 32,768 rows per pass: the float copy stays near 100 MB for d = 400
MAX_INDICATORS_FOR_PAIRS = 4000  # the d' x d' Gram matrix stays under 130 MB


@dataclass(frozen=True)
class Indicators:
    """Where each attribute's cells sit among the indicator columns."""

    domain: Domain

    @property
    def sizes(self) -> list[int]:
        return [2 if isinstance(a, Binary) else a.size for a in self.domain.attributes]

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    @property
    def width(self) -> int:
        return int(self.offsets[-1])

    def labels(self, i: int) -> list[str]:
        attr = self.domain.attributes[i]
        if isinstance(attr, Binary):
            return [str(v) for v in attr.values]
        return [str(v) for v in attr.labels]

    def expand(self, bits: np.ndarray, dtype: type[np.floating] = np.float64) -> np.ndarray:
        """``(rows, d)`` 0/1 bits -> ``(rows, width)`` indicator columns."""
        cols = []
        for attr, start, stop in zip(
            self.domain.attributes, self.domain.offsets, self.domain.offsets[1:], strict=False
        ):
            block: np.ndarray = bits[:, start:stop].astype(dtype)
            cols.append(np.hstack([1 - block, block]) if isinstance(attr, Binary) else block)
        return np.hstack(cols)


def _count_gram(data: BinaryData, ind: Indicators, pairs: bool) -> np.ndarray:
    """``X^T X`` (or the column sums) of the data's indicators: integer counts, summed in
    blocks of rows. float32 products are exact here (a block's counts stay below 2^24)."""
    out = np.zeros((ind.width, ind.width) if pairs else ind.width)
    for w0 in range(0, data.n_words, _CHUNK_WORDS):
        w1 = min(w0 + _CHUNK_WORDS, data.n_words)
        bits = unpack_columns(data.words[:, w0:w1], min(data.n, w1 * 64) - w0 * 64)
        x = ind.expand(bits, np.float32)
        out += x.T @ x if pairs else x.sum(axis=0, dtype=np.float64)
    return out


def gram(source: BinaryData | Records, domain: Domain, *, pairs: bool = True) -> np.ndarray:
    """The weighted indicator Gram matrix ``X^T W X`` with weights summing to 1 (``pairs``),
    or only its diagonal (the 1-way marginals, concatenated) when ``pairs`` is False."""
    if source.d != domain.d:
        raise DPQueryError(f"records have {source.d} bits, the domain {domain.d}")
    ind = Indicators(domain)
    if isinstance(source, BinaryData):
        return _count_gram(source, ind, pairs) / source.n
    x, w = ind.expand(source.rows), source.probabilities
    return x.T @ (x * w[:, None]) if pairs else w @ x


def one_way(diagonal: np.ndarray, ind: Indicators, i: int) -> np.ndarray:
    """The 1-way marginal of attribute ``i`` from the Gram diagonal."""
    return diagonal[ind.offsets[i] : ind.offsets[i + 1]]


def two_way(g: np.ndarray, ind: Indicators, i: int, j: int) -> np.ndarray:
    """The 2-way marginal of attributes ``i`` (rows) and ``j`` (columns) from the Gram."""
    return g[ind.offsets[i] : ind.offsets[i + 1], ind.offsets[j] : ind.offsets[j + 1]]


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """``1/2 sum |p - q|`` over the cells."""
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())
