"""Output rows: a release's records as the table a user expects.

Every algorithm releases a set of weighted records (DualQuery's T best responses, FEM's
T*s perturbed leaders, MWEM's weighted sample, adaptive projection's equal-weight records).
:func:`output_table` turns one into a table of ``rows`` records (by default ``n``, public
under the bounded-DP model) in the input's columns and dtypes, or, with ``weights=True``,
keeps the weighted support and writes a ``weight`` column.

Allocation: **systematic sampling over an ordered list** (Madow 1949). The records are put
in order of their largest attributes' values (ties in random order: "implicit
stratification"), their expected counts ``rows * p_i`` laid end to end on ``[0, rows)``,
and a comb of ``rows`` points ``u, u+1, ...`` with one uniform ``u`` drops on it: record
``i`` gets as many copies as points fall in its stretch, so

* every record gets ``floor(rows p_i)`` or ``ceil(rows p_i)`` copies, and exactly
  ``rows p_i`` in expectation (no record is favoured, however small its weight);
* the total is exactly ``rows``.

I.i.d. (multinomial) draws would add sampling noise of standard deviation
``sqrt(rows p_i (1 - p_i))`` to every record's count (with 1,000 records of 30,000 rows:
about 18% of each count), and so to every marginal of the release; here each count is off
by less than one. Deterministic largest-remainder rounding would also be off by less than
one, but drops every record whose expected count is below its cut-off (biased, and chosen
by the order of the remainders); the random comb is unbiased, whatever the order. The order
matters for the marginals: the records of one value of the leading attribute sit in one
stretch, so that value's count is off by less than one row, where a random order lets the
rounding errors of its records add up (on ACS, 264 values of ``INDP``, the output's 1-way
total variation from the release's drops to rounding). When there are fewer rows
than records, a record is kept at most once, with probability ``rows p_i`` when that is
below 1. The rows are then shuffled, so copies do not sit in blocks.

Post-processing of the release: no privacy cost. All randomness comes from the one
generator given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpquery.data.binary import BinaryData, pack_rows
from dpquery.data.decode import DecodeReport, NumericMode, decode, decode_rows, repaired_rows
from dpquery.data.domain import Domain
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.rng import SeedLike, make_rng

# Attributes (largest first) whose values order the records before the comb.
STRATA = 3
SYSTEMATIC = (
    "systematic sampling over the records ordered by their largest attributes (Madow 1949): "
    "each released record repeated "
    "floor or ceil of rows x its weight times, exactly that in expectation, rows in random "
    "order; numeric values drawn in their bins at the edges' precision"
)
WEIGHTED = "the released records with their weights (a 'weight' column summing to 1)"
SYSTEMATIC_BITS = (
    "systematic sampling over the records ordered by their largest attributes (Madow 1949), "
    "as for a table; written as bits"
)
WEIGHTED_BITS = "the released records with their weights (an array 'weights' summing to 1)"


def systematic_counts(
    p: np.ndarray, rows: int, rng: np.random.Generator, key: np.ndarray | None = None
) -> np.ndarray:
    """Copies of each record (module docstring): ``floor`` or ``ceil`` of ``rows * p``,
    expectation ``rows * p``, summing to ``rows``. ``p`` is normalised here. ``key``, an
    ``(m, k)`` array, orders the records on the line (its first column first; ties, and
    every record when ``key`` is None, in random order)."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise DPQueryError("weights must be a non-empty 1-D array, finite, >= 0, not all zero")
    rows = check_rows(rows)
    order = rng.permutation(p.size)
    if key is not None and key.shape[1]:
        # lexsort's last key is its primary one; the shuffle breaks ties.
        order = order[np.lexsort(key[order].T[::-1])]
    ends = np.cumsum(p[order] / p.sum()) * rows
    ends[-1] = rows  # no rounding drift at the end of the line
    u = rng.random()
    # Points u, u+1, ... up to x: ceil(x - u) of them (for 0 <= x <= rows).
    points = np.ceil(np.concatenate([[0.0], ends]) - u)
    counts = np.empty(p.size, dtype=np.int64)
    counts[order] = np.diff(points).astype(np.int64)
    return counts


def check_rows(rows: object) -> int:
    """``rows`` as a positive integer, or an error naming it."""
    if isinstance(rows, bool) or not isinstance(rows, int | np.integer) or rows < 1:
        raise DPQueryError(f"rows must be a positive integer, got {rows!r}")
    return int(rows)


def sample_index(records: Records, rows: int, rng: np.random.Generator) -> np.ndarray:
    """Which record each of ``rows`` output rows copies (:func:`systematic_counts`), in
    random order."""
    counts = systematic_counts(records.probabilities, rows, rng, strata(records))
    index = np.repeat(np.arange(records.m), counts)
    rng.shuffle(index)
    return index


def strata(records: Records) -> np.ndarray | None:
    """The values of the records' :data:`STRATA` largest attributes (of more than two values),
    largest first: the order of the comb. None without a domain."""
    domain = records.domain
    if domain is None:
        return None
    sizes = np.asarray(domain.sizes)
    largest = [i for i in np.argsort(-sizes, kind="stable")[:STRATA] if sizes[i] > 2]
    columns = []
    for i in largest:
        bits = domain.bits_of(domain.names[i])
        columns.append(records.rows[:, bits.start : bits.stop].argmax(axis=1))
    return np.stack(columns, axis=1) if columns else None


def resample(records: Records, rows: int, *, seed: SeedLike = None) -> Records:
    """``rows`` equal-weight records allocated from ``records`` by :func:`systematic_counts`,
    in random order."""
    index = sample_index(records, check_rows(rows), make_rng(seed))
    return Records(records.rows[index], None, records.domain)


@dataclass(frozen=True)
class OutputReport:
    """How the output table was produced from the release."""

    rows: int
    released_records: int
    method: str
    decode: DecodeReport

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "released_records": self.released_records,
            "method": self.method,
            **self.decode.to_dict(),
        }


def _weighted(records: Records, rows: int | None, weights: bool, caller: str) -> bool:
    """Whether the output is the weighted records (``weights``), refusing ``rows`` with it
    and neither."""
    if weights and rows is not None:
        raise DPQueryError(
            f"rows={rows} and weights=True exclude each other: the weighted output has "
            f"the {records.m} released records"
        )
    if not weights and rows is None:
        raise DPQueryError(f"{caller} needs rows (the input's n, public) or weights=True")
    return weights


def output_table(
    records: Records,
    domain: Domain | None = None,
    *,
    rows: int | None = None,
    weights: bool = False,
    numeric: NumericMode = "uniform",
    seed: SeedLike = None,
) -> tuple[pd.DataFrame, OutputReport]:
    """The release as a table in the domain's columns and output dtypes.

    By default ``rows`` records (give ``n``, public) allocated by :func:`resample`; with
    ``weights=True`` the released records themselves and a ``weight`` column (``rows`` must
    then be None). ``domain`` defaults to the records' own; one carrying declared output
    dtypes (:meth:`~dpquery.data.Domain.with_dtypes`) gives those (never the input's).
    """
    rng = make_rng(seed)
    if _weighted(records, rows, weights, "output_table"):
        table, report = decode(records, domain, numeric=numeric, seed=rng)
        if "weight" not in table.columns:  # equal weights: written all the same
            table["weight"] = records.probabilities
        return table, OutputReport(records.m, records.m, WEIGHTED, report)
    index = sample_index(records, check_rows(rows), rng)
    table, report = decode_rows(records, index, domain, numeric=numeric, seed=rng)
    return table, OutputReport(len(index), records.m, SYSTEMATIC, report)


def output_bits(
    records: Records,
    domain: Domain,
    *,
    rows: int | None = None,
    weights: bool = False,
    seed: SeedLike = None,
) -> tuple[BinaryData, np.ndarray | None, OutputReport]:
    """The release as bits over ``domain``, packed (:class:`BinaryData`, the layout
    ``dpquery encode`` writes): the rows :func:`output_table` would decode, kept as bits,
    each one-hot group repaired as the decoder repairs it (free bits need none). With
    ``weights=True`` the released records themselves and their weights (summing to 1),
    else ``rows`` records allocated as :func:`output_table` allocates them, and None."""
    rng = make_rng(seed)
    if _weighted(records, rows, weights, "output_bits"):
        bits, report = repaired_rows(records, domain, seed=rng)
        data = BinaryData(pack_rows(bits), records.m, domain.onehot_groups, domain)
        output = OutputReport(records.m, records.m, WEIGHTED_BITS, report)
        return data, records.probabilities, output
    index = sample_index(records, check_rows(rows), rng)
    bits, report = repaired_rows(records, domain, seed=rng)
    data = BinaryData(pack_rows(bits, index), len(index), domain.onehot_groups, domain)
    return data, None, OutputReport(len(index), records.m, SYSTEMATIC_BITS, report)


__all__ = [
    "OutputReport", "check_rows", "output_bits", "output_table", "resample", "sample_index",
    "strata", "systematic_counts",
]  # fmt: skip
