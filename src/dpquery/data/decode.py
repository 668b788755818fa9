"""Records out: decode synthetic bit vectors back to a table in the user's own columns.

Repair rule for one-hot groups. A solver without group constraints may return a record
with no bit, or several bits, set in a categorical/numeric attribute. Such a group is
repaired by a uniformly random choice (from the seeded generator): among the set bits when
several are set, among all of the attribute's values when none is. This uses no private
data, keeps every candidate the record "asked for", and the number of repairs per
attribute is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from dpquery.data.domain import Binary, Domain, Numeric
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.rng import SeedLike, make_rng

NumericMode = Literal["uniform", "label"]


@dataclass(frozen=True)
class DecodeReport:
    """How many records needed a one-hot group repaired, per attribute."""

    repairs: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.repairs.values())

    def to_dict(self) -> dict[str, object]:
        return {"repairs": dict(self.repairs), "total_repairs": self.total}


def _group_codes(bits: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """The set bit of each row of a one-hot group, repairing broken rows (module doc)."""
    counts = bits.sum(axis=1)
    codes = np.argmax(bits, axis=1)
    broken = counts != 1
    if broken.any():
        size = bits.shape[1]
        # Random keys, zeroed where a bit is unset, so argmax picks a set bit uniformly;
        # an empty row keeps every key and so picks uniformly among all values.
        keys = rng.random((int(broken.sum()), size))
        sub = bits[broken]
        keys = np.where(sub.any(axis=1, keepdims=True), keys * sub, keys)
        codes[broken] = np.argmax(keys, axis=1)
    return codes, int(broken.sum())


def _numeric_values(
    attr: Numeric, codes: np.ndarray, mode: NumericMode, rng: np.random.Generator
) -> pd.Series:
    if mode == "label":
        labels = np.array(attr.labels, dtype=object)
        out = pd.Series(labels[codes], dtype=object)
        return out.where(codes < attr.n_bins, None)
    edges = np.asarray(attr.edges)
    in_bin = codes < attr.n_bins
    c = np.minimum(codes, attr.n_bins - 1)
    lo, hi = edges[c], edges[c + 1]
    if attr.integer:
        last = c == attr.n_bins - 1
        first_int = np.ceil(lo)
        last_int = np.where(last, np.floor(hi), np.ceil(hi) - 1)
        # A bin narrower than one unit may hold no integer: use the integer nearest its middle.
        empty = last_int < first_int
        first_int = np.where(empty, np.round((lo + hi) / 2), first_int)
        last_int = np.where(empty, first_int, last_int)
        values = first_int + np.floor(rng.random(len(c)) * (last_int - first_int + 1))
        out = pd.Series(values.astype(np.int64), dtype="Int64")
    else:
        out = pd.Series(lo + rng.random(len(c)) * (hi - lo))
    return out.where(in_bin, pd.NA if attr.integer else np.nan)


def decode(
    records: Records,
    domain: Domain | None = None,
    *,
    numeric: NumericMode = "uniform",
    seed: SeedLike = None,
) -> tuple[pd.DataFrame, DecodeReport]:
    """Decode records to a DataFrame with one column per attribute.

    Numeric bins become a value drawn uniformly in the bin (``numeric="uniform"``, seeded)
    or the bin label (``"label"``). A missing category decodes to a missing value. When the
    weights are not all equal, a ``weight`` column (summing to 1) is added.
    """
    domain = domain if domain is not None else records.domain
    if domain is None:
        raise DPQueryError("decoding needs a domain: the records carry none and none was given")
    if records.d != domain.d:
        raise DPQueryError(f"records have {records.d} bits but the domain has {domain.d}")
    if numeric not in ("uniform", "label"):
        raise DPQueryError(f"numeric must be 'uniform' or 'label', got {numeric!r}")
    rng = make_rng(seed)
    columns: dict[str, object] = {}
    repairs: dict[str, int] = {}
    for i, attr in enumerate(domain.attributes):
        bits = records.rows[:, domain.offsets[i] : domain.offsets[i + 1]]
        if isinstance(attr, Binary):
            columns[attr.name] = np.array(attr.values, dtype=object)[bits[:, 0]]
            continue
        codes, repairs[attr.name] = _group_codes(bits, rng)
        if isinstance(attr, Numeric):
            columns[attr.name] = _numeric_values(attr, codes, numeric, rng)
        else:
            vals = pd.Series(np.array(attr.values, dtype=object)[codes], dtype=object)
            columns[attr.name] = (
                vals if attr.missing is None else vals.mask(vals == attr.missing, None)
            )
    table = pd.DataFrame(columns)
    table = table.infer_objects()
    p = records.probabilities
    if records.m and not np.allclose(p, p[0], rtol=0, atol=1e-15):
        table["weight"] = p
    return table, DecodeReport(repairs)


def sample_records(records: Records, size: int, *, seed: SeedLike = None) -> Records:
    """``size`` records drawn with replacement in proportion to the weights (equal weights
    out). Post-processing of a release: no privacy cost."""
    if size < 1 or not math.isfinite(size):
        raise DPQueryError(f"sample size must be a positive integer, got {size}")
    idx = make_rng(seed).choice(records.m, size=size, p=records.probabilities)
    return Records(records.rows[idx], None, records.domain)
