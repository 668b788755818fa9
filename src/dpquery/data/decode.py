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

from dpquery.data import dates, schema
from dpquery.data.domain import Binary, Categorical, Domain, Numeric, padded
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.rng import SeedLike, make_rng

NumericMode = Literal["uniform", "label"]
_BELOW_ONE = float(np.nextafter(1.0, 0.0))
# A "linear" bin's density is this blend of the linear one and the uniform: the tilt
# ``beta`` of :func:`linear_slopes` times it. The neighbours' masses are the release's own,
# noisy; on PUMS's 1,000 records (30 tuning seeds, docs/learn.md "Decoding weights") the
# whole tilt moved shapes / pairs / KS by +0.0003 / -0.0013 / -0.0011 against the uniform
# decoding, half of it by +0.0004 / -0.0002 / -0.0013.
LINEAR_BLEND = 0.5


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


def _steps(x: np.ndarray) -> np.ndarray:
    """``x`` (an edge divided by the step) as a whole number of steps where only float error
    separates it from one: within 1e-6 (0.5 / 0.1 = 5.000000000000001), or within a few ulps
    where the floats are coarser than that (an edge of -450761.5975 is -4507615975 steps of
    1e-4, give or take 5e-7)."""
    whole = np.rint(x)
    close = np.abs(x - whole) <= np.maximum(1e-6, 8 * np.finfo(np.float64).eps * np.abs(x))
    return np.where(close, whole, x)


def _grid_range(
    lo: np.ndarray, hi: np.ndarray, last: np.ndarray, step: float
) -> tuple[np.ndarray, np.ndarray]:
    """The first and final multiples of ``step`` (in steps) inside each bin ``[lo, hi)`` (the
    last bin closed); a bin holding none has only the multiple nearest its middle."""
    lo_u, hi_u = _steps(lo / step), _steps(hi / step)
    first = np.ceil(lo_u)
    final = np.where(last, np.floor(hi_u), np.ceil(hi_u) - 1)
    empty = final < first
    first = np.where(empty, np.round((lo_u + hi_u) / 2), first)
    final = np.where(empty, first, final)
    return first, final


def _grid_values(
    lo: np.ndarray,
    hi: np.ndarray,
    last: np.ndarray,
    step: float,
    u: np.ndarray,
    bins: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """A value uniform over the multiples of ``step`` inside each bin ``[lo, hi)`` (the last
    bin closed); a bin holding none gets the multiple nearest its middle. ``bins``: the
    ``(lo, hi, last)`` of the bins ``[lo, hi)`` are sub-bins of, whose multiples the value is
    kept among (a sub-bin narrower than a step may hold none)."""
    first, final = _grid_range(lo, hi, last, step)
    steps = first + np.floor(u * (final - first + 1))
    if bins is not None:
        outer_first, outer_final = _grid_range(*bins, step)
        steps = np.clip(steps, outer_first, outer_final)
    return steps * step


def bin_supports(attr: Numeric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each bin's support ``[a, b)`` as its decoded values cover it, and whether it holds a
    single value (an atom, such as an amount's bin ``[0, 1)`` of integers). At a precision
    of step ``s`` a bin's values ``v`` each stand for ``[v, v + s)`` (a bin of integers
    ``[20, 23)`` covers ``[20, 23)``, the closed last bin ``[92, 100]`` covers ``[92, 101)``);
    on a lattice (``Numeric.lattice``) its points ``v`` each stand for ``[v, v + step)``;
    without a precision, the bin itself (no atom)."""
    edges = np.asarray(attr.edges)
    lo, hi = edges[:-1], edges[1:]
    if attr.precision is None:
        return lo, hi, np.zeros(attr.n_bins, dtype=bool)
    last = np.arange(attr.n_bins) == attr.n_bins - 1
    if attr.lattice is None:
        step = 10.0**-attr.precision
        first, final = _grid_range(lo, hi, last, step)
        return first * step, (final + 1) * step, final == first
    step, offset = _lattice_of(attr)  # the lattice's points: offset + step j, below each end
    first, final = _grid_range(lo - offset, hi - offset, np.zeros_like(last), step)
    return first * step + offset, (final + 1) * step + offset, final == first


def _lattice_of(attr: Numeric) -> tuple[float, float]:
    """The step and offset of a lattice column's values (``Numeric.lattice``: an integer
    column on a coarser lattice, ``offset + step j``)."""
    assert attr.lattice is not None
    return float(attr.lattice[0]), float(attr.lattice[1])


def linear_slopes(masses: np.ndarray, a: np.ndarray, b: np.ndarray, atom: np.ndarray) -> np.ndarray:
    """The tilt ``beta`` of a linear density inside each bin ``[a, b)`` holding ``masses``:
    ``f(x) = (m / w) (1 + beta ((x - c) / w))`` on the bin of width ``w`` and centre ``c``,
    which integrates to ``m`` whatever ``beta``, and is non-negative for ``|beta| <= 2``.

    The slope is the minmod of the differences of density ``m / w`` to the two neighbouring
    bins over the distance of their centres (van Leer 1979, "Towards the ultimate
    conservative difference scheme V", J. Comput. Phys. 32: the piecewise-linear
    reconstruction of cell averages, limited so that it adds no new extremum): 0 at a peak
    or a trough, the gentler side's slope on a run. A bin at an end of the column, or beside
    an atom, takes its one neighbour's difference; an atom, or a bin without neighbours,
    stays flat (``beta = 0``), and an atom is no neighbour (its density is a point mass's).
    ``beta`` is clipped to ``[-2, 2]``, so that the density stays non-negative."""
    w = b - a
    d = masses / w
    centre = (a + b) / 2
    k = len(d)
    slope = np.zeros(k)
    for i in range(k):
        if atom[i]:
            continue
        sides = [
            (d[j] - d[i]) / (centre[j] - centre[i])
            for j in (i - 1, i + 1)
            if 0 <= j < k and not atom[j]
        ]
        if len(sides) == 1:
            slope[i] = sides[0]
        elif len(sides) == 2 and sides[0] * sides[1] > 0:
            slope[i] = min(sides, key=abs)
    beta = np.where(d > 0, slope * w / np.where(d > 0, d, 1.0), 0.0)
    return np.clip(beta, -2.0, 2.0)


def linear_quantile(u: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """The quantile ``t`` in ``[0, 1)`` of the density ``1 + beta (t - 1/2)`` at the uniform
    ``u``: the root of ``t + beta (t^2 - t) / 2 = u`` in ``[0, 1]``, written so that
    ``beta = 0`` gives ``t = u`` exactly (one uniform per value, as the uniform decoding);
    at ``beta = 2`` and ``u = 0`` (``t = sqrt(u)``) the denominator is 0 and ``t`` is 0."""
    h = 1.0 - beta / 2.0
    den = h + np.sqrt(h * h + 2.0 * beta * u)
    return np.where(den > 0, 2.0 * u / np.where(den > 0, den, 1.0), 0.0)


def _numeric_values(
    attr: Numeric,
    codes: np.ndarray,
    mode: NumericMode,
    rng: np.random.Generator,
    masses: np.ndarray | None = None,
) -> pd.Series:
    in_bin = codes < attr.n_bins
    if mode == "label":
        labels = np.array(attr.labels, dtype=object)
        return pd.Series(labels[codes], dtype=object).where(in_bin, None)
    edges = np.asarray(attr.edges)
    c = np.minimum(codes, attr.n_bins - 1)
    lo, hi = edges[c], edges[c + 1]
    last = c == attr.n_bins - 1
    bins = None
    if attr.within is not None and attr.density == "cells":
        # one uniform per value, as a bin without weights takes: its sub-bin, then its place
        bins = (lo, hi, last)
        lo, hi, last, u = _cell_quantile(attr.within, c, lo, hi, last, rng.random(len(c)))
    else:
        if attr.within is not None:
            bins = (lo, hi, last)
            lo, hi, last = _sub_bins(attr.within, c, lo, hi, last, rng.random(len(c)))
        u = rng.random(len(c))
    if attr.within is None and attr.density == "linear" and masses is not None:
        beta = LINEAR_BLEND * linear_slopes(masses, *bin_supports(attr))
        u = np.minimum(linear_quantile(u, beta[c]), _BELOW_ONE)  # float rounding stays in
    decimals = attr.precision
    if decimals is None:
        values = lo + u * (hi - lo)
    else:
        # the multiples of the precision's step in the bin, or the points of its lattice
        # (Numeric.lattice: offset + step j), the bin's own when a sub-bin holds none
        if attr.lattice is None:
            values = _grid_values(lo, hi, last, 10.0**-decimals, u, bins)
        else:
            # the points a <= v < b of each bin [a, b), the last one's too: a learned upper
            # bound is the end of a bucket, past the column's values
            step, offset = _lattice_of(attr)
            below = np.zeros_like(last)
            outer = None if bins is None else (bins[0] - offset, bins[1] - offset, below)
            values = _grid_values(lo - offset, hi - offset, below, step, u, outer) + offset
        values = np.round(values, decimals)
        for b, x in attr.exact_bins().items():  # a bin of one value written exactly: that value
            values[c == b] = x
    if attr.time is not None:  # whole seconds on the time axis, written in the column's format
        return dates.written(values, ~in_bin, attr.time)
    if attr.width is not None:  # integers written zero-padded (a ZIP code's 00403)
        return _padded(values, ~in_bin, attr.width)
    if attr.significant is not None:  # written in scientific notation (4.070e-04)
        out = np.full(len(values), None, dtype=object)
        keep = np.asarray(in_bin, dtype=bool)
        out[keep] = [scientific_text(x, attr.significant, attr.notation)
                     for x in np.asarray(values)[keep].tolist()]  # fmt: skip
        return pd.Series(out, dtype=object)
    return schema.column(values, ~in_bin, attr.output_dtype)


def scientific_text(x: float, significant: int, notation: tuple[str, float] | None = None) -> str:
    """``x`` written at ``significant`` digits in scientific notation (``f"{x:.3e}"`` at 4,
    ``4.070e-04``), or with a ``notation`` (``("below", t)``, ``("from", t)``,
    :data:`~dpquery.data.domain.NOTATIONS`) so only where its magnitude is below ``t`` (at
    or above it), plain decimals elsewhere: the number rounded to those digits, trailing
    zeros dropped in both forms, as R's ``write.csv`` and Python's ``repr`` write a mixed
    column (``1.2e-05`` beside ``0.0123``). Public: a rule on one decoded value."""
    sci = f"{x:.{significant - 1}e}"
    if notation is None:
        return sci
    rounded = float(sci)
    side, t = notation
    if (0 < abs(rounded) < t) if side == "below" else abs(rounded) >= t:
        mantissa, exponent = sci.split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{exponent}"
    return str(np.format_float_positional(rounded, trim="-"))


def _padded(values: np.ndarray, missing: np.ndarray, width: int) -> pd.Series:
    """Integers written as text zero-padded to ``width`` digits (``Numeric.width``; one below
    0 as it is), None where ``missing``."""
    ints = np.where(missing, 0, np.asarray(values, dtype=np.float64)).astype(np.int64)
    text = ints.astype(str)
    out = np.where(ints >= 0, np.char.zfill(text, width), text).astype(object)
    out[np.asarray(missing, dtype=bool)] = None
    return pd.Series(out, dtype=object)


def _sub_bins(
    within: tuple[tuple[float, ...], ...],
    c: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    last: np.ndarray,
    s: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sub-bin of each bin ``c`` drawn by the public weights ``within`` from the uniforms
    ``s``: its ends ``[lo, hi)`` (equal-width sub-bins of the bin) and whether it is the
    domain's last (closed) sub-bin. A sub-bin of weight 0 is never drawn."""
    j, k, _ = _sub_bin_index(within, c, s)
    return _sub_bin_ends(j, k[c], lo, hi, last)


def _sub_bin_index(
    within: tuple[tuple[float, ...], ...], c: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sub-bin ``j`` of each bin ``c`` whose share of the weights ``within`` holds the
    uniform ``s``, the sub-bins per bin ``k``, and each bin's cumulative weights (infinite
    from its last positive one: a sub-bin of weight 0 is never drawn)."""
    k = np.array([len(w) for w in within])
    cum = np.zeros((len(within), int(k.max())))
    for i, w in enumerate(within):
        cum[i, : len(w)] = np.cumsum(w)
        # the last sub-bin of positive weight takes float rounding, and all above it
        cum[i, int(np.flatnonzero(np.asarray(w) > 0)[-1]) :] = np.inf
    j = np.minimum((cum[c] <= s[:, None]).sum(axis=1), k[c] - 1)
    return j, k, cum


def _sub_bin_ends(
    j: np.ndarray, k: np.ndarray, lo: np.ndarray, hi: np.ndarray, last: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ends ``[lo, hi)`` of sub-bin ``j`` of ``k`` equal-width sub-bins of each bin, and
    whether it is the domain's last (closed) sub-bin."""
    width = (hi - lo) / k
    sub_lo = lo + j * width
    sub_hi = np.where(j == k - 1, hi, lo + (j + 1) * width)
    return sub_lo, sub_hi, last & (j == k - 1)


def _cell_quantile(
    within: tuple[tuple[float, ...], ...],
    c: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    last: np.ndarray,
    u: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The quantile at the uniforms ``u`` of each bin ``c``'s density uniform inside each
    of its equal-width sub-bins, of mass its weight in ``within`` (``Numeric.density``
    ``"cells"``): the sub-bin's ends and closedness (as :func:`_sub_bins`) and the place
    inside it, ``u`` rescaled over the sub-bin's share, in ``[0, 1)``. One uniform per
    value, as the uniform decoding takes, so the columns decoded after it draw the same."""
    j, k, cum = _sub_bin_index(within, c, u)
    weights = np.zeros_like(cum)
    for i, w in enumerate(within):
        weights[i, : len(w)] = w
    below = np.where(j > 0, cum[c, np.maximum(j - 1, 0)], 0.0)
    share = weights[c, j]
    t = np.where(share > 0, (u - below) / np.where(share > 0, share, 1.0), 0.0)
    return (*_sub_bin_ends(j, k[c], lo, hi, last), np.clip(t, 0.0, _BELOW_ONE))


def _bin_masses(attr: Numeric, codes: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    """The release's own mass in each of ``attr``'s bins (its records' weights ``p`` by bin;
    a missing value in none), for its ``"linear"`` density; None for the others."""
    if attr.density != "linear" or attr.within is not None:
        return None
    here = codes < attr.n_bins
    return np.bincount(codes[here], weights=p[here], minlength=attr.n_bins)


def _categorical_values(attr: Categorical | Binary, codes: np.ndarray) -> pd.Series:
    values = np.empty(len(attr.values), dtype=object)
    # element-wise: a value may itself be a tuple; a code of a width written zero-padded
    values[:] = attr.written_values if isinstance(attr, Categorical) else attr.values
    missing = (
        codes == attr.values.index(attr.missing)
        if isinstance(attr, Categorical) and attr.missing is not None and not attr.keep_missing
        else np.zeros(len(codes), dtype=bool)
    )
    if isinstance(attr, Categorical) and attr.other_missing:  # numbers the codes do not list
        missing |= codes == attr.values.index(attr.other)
    present = attr.present_values if isinstance(attr, Categorical) else attr.values
    if isinstance(attr, Categorical) and attr.width is not None:
        present = tuple(padded(v, attr.width) for v in present)
    return schema.column(values[codes], missing, attr.output_dtype, present)


def decode(
    records: Records,
    domain: Domain | None = None,
    *,
    numeric: NumericMode = "uniform",
    seed: SeedLike = None,
) -> tuple[pd.DataFrame, DecodeReport]:
    """Decode records to a DataFrame with one column per attribute, in the attribute's
    output dtype (:mod:`dpquery.data.schema`).

    Numeric bins become a value drawn uniformly in the bin, on the grid of the edges'
    precision (:func:`edge_decimals`; integers for an ``integer`` attribute)
    (``numeric="uniform"``, seeded; with the attribute's ``within`` weights, a sub-bin drawn
    by them first; without them, an attribute of ``density="linear"`` draws from a linear
    density in the bin, :data:`LINEAR_BLEND` of the tilt :func:`linear_slopes` reads off
    the released records' bin masses) or the bin label (``"label"``); a bin holding one of
    the attribute's ``exact`` values decodes to it. A missing category
    decodes to a missing value (to itself with ``keep_missing``). When the weights are not
    all equal, a ``weight`` column (summing to 1) is added.
    """
    table, report = decode_rows(records, None, domain, numeric=numeric, seed=seed)
    p = records.probabilities
    if records.m and not np.allclose(p, p[0], rtol=0, atol=1e-15):
        table["weight"] = p
    return table, report


def decode_rows(
    records: Records,
    index: np.ndarray | None,
    domain: Domain | None = None,
    *,
    numeric: NumericMode = "uniform",
    seed: SeedLike = None,
) -> tuple[pd.DataFrame, DecodeReport]:
    """The rows ``index`` of ``records`` (repeats allowed; None: every record once) as
    :func:`decode` makes them, without weights. A broken one-hot group is repaired once per
    record, and every output row draws its own numeric values; nothing of size
    rows x bits is built, so a wide release decodes to many rows."""
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
            codes = bits[:, 0].astype(np.int64)
        else:
            codes, repairs[attr.name] = _group_codes(bits, rng)
        if isinstance(attr, Numeric):
            masses = _bin_masses(attr, codes, records.probabilities)
            codes = codes if index is None else codes[index]
            columns[attr.name] = _numeric_values(attr, codes, numeric, rng, masses)
        else:
            codes = codes if index is None else codes[index]
            columns[attr.name] = _categorical_values(attr, codes)
    return pd.DataFrame(columns), DecodeReport(repairs)


def repaired_rows(
    records: Records, domain: Domain, *, seed: SeedLike = None
) -> tuple[np.ndarray, DecodeReport]:
    """The records' bits with every broken one-hot group repaired by the rule of the module
    docstring (the rows themselves when the domain has no group: free bits need none), and
    the repairs per attribute. The bits :func:`decode_rows` would decode, kept as bits."""
    if records.d != domain.d:
        raise DPQueryError(f"records have {records.d} bits but the domain has {domain.d}")
    if not len(domain.onehot_groups):
        return records.rows, DecodeReport({})
    rng = make_rng(seed)
    rows = records.rows.copy()
    repairs: dict[str, int] = {}
    for i, attr in enumerate(domain.attributes):
        if isinstance(attr, Binary):
            continue
        start, stop = domain.offsets[i], domain.offsets[i + 1]
        codes, repairs[attr.name] = _group_codes(rows[:, start:stop], rng)
        rows[:, start:stop] = 0
        rows[np.arange(rows.shape[0]), start + codes] = 1
    return rows, DecodeReport(repairs)


def sample_records(records: Records, size: int, *, seed: SeedLike = None) -> Records:
    """``size`` records drawn with replacement in proportion to the weights (equal weights
    out). Post-processing of a release: no privacy cost."""
    if size < 1 or not math.isfinite(size):
        raise DPQueryError(f"sample size must be a positive integer, got {size}")
    idx = make_rng(seed).choice(records.m, size=size, p=records.probabilities)
    return Records(records.rows[idx], None, records.domain)
