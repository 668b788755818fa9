"""The public domain: which attributes a record has and which values each may take.

A domain is public knowledge, fixed before the private data is read (bin edges from a
codebook, categories from a data dictionary). It maps every (attribute, value) to bits:

* a :class:`Categorical` or :class:`Numeric` attribute becomes a *one-hot group* of bits,
  exactly one of which is set in every record;
* a :class:`Binary` attribute becomes one free bit.

:func:`infer_domain` reads a domain off a table for exploration only; what it returns is
marked ``non_private`` and every release built on it says so.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from dpquery.data import dates, schema
from dpquery.errors import DomainError, NonPrivateWarning
from dpquery.io import atomic_write_text

OutOfRange = Literal["clip", "error"]
# How a numeric bin without decoding weights is decoded (Numeric.density); "cells" reads
# the weights themselves as a density of equal-width cells.
Density = Literal["uniform", "linear", "cells"]
DENSITIES: tuple[Density, ...] = ("uniform", "linear", "cells")
Texts = Literal["error", "missing"]
TEXTS: tuple[Texts, ...] = ("error", "missing")
MISSING_LABEL = "<missing>"


def cell_text(value: object) -> str:
    """One cell's text as a category holds it: ``str(value)`` without the spaces around it.

    The one normalisation of a text cell, read alike where a domain is learned
    (:mod:`dpquery.domain_learning`) and where a table is encoded over it
    (:func:`dpquery.data.encode.attribute_codes`): a column written ``"C7 "`` (a fixed-width
    export) is learned as the category ``C7``, its records encode to it, and the release writes
    ``C7``."""
    return str(value).strip()


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise DomainError(f"an attribute name must be a non-empty string, got {name!r}")
    return name


def _check_unique(name: str, values: Sequence[Hashable]) -> None:
    seen: set[Hashable] = set()
    for v in values:
        if v in seen:
            raise DomainError(f"attribute {name!r} lists the value {v!r} twice")
        seen.add(v)


MAX_WIDTH = 20
"""The widest zero-padded written form an attribute's ``width`` may name."""
MAX_SIGNIFICANT = 17
"""The most significant digits a numeric attribute's ``significant`` may name (a float64's
17 write it exactly)."""
NOTATIONS = ("below", "from")
"""The sides of an attribute's ``notation`` (a column written in scientific notation at some
magnitudes only): an exponent below a magnitude, or from it up
(:func:`dpquery.data.decode.scientific_text`)."""


def _check_width(name: str, width: object) -> None:
    if width is None:
        return
    if (
        isinstance(width, bool)
        or not isinstance(width, int | np.integer)
        or not (2 <= int(width) <= MAX_WIDTH)
    ):
        raise DomainError(f"attribute {name!r}: width must be an integer from 2 to "
                          f"{MAX_WIDTH}, got {width!r}")  # fmt: skip


def padded(value: Hashable, width: int) -> Hashable:
    """``value`` written zero-padded to ``width`` digits when it is a non-negative integer
    (``3`` -> ``"003"``), else ``value`` itself (a catch-all's label, a missing category)."""
    whole = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if whole and value >= 0:  # type: ignore[operator]
        return str(int(value)).zfill(width)  # type: ignore[call-overload]
    return value


@dataclass(frozen=True)
class Categorical:
    """A categorical attribute: one bit per category, in the order given.

    ``missing`` names the category that a missing value (NaN/None) encodes to; it must be one
    of ``values``. Without it, a missing value is an error. ``recode`` maps raw values to
    categories, for public merges of raw codes (e.g. two rare services into one). ``dtype``
    is the column's pandas dtype in decoded output (:mod:`dpquery.data.schema`; None: from
    the values' types). ``other`` names the catch-all category (one of ``values``): every
    value not listed encodes to it, and so does a missing value when there is no ``missing``
    category; it decodes to itself, never to the raw values it stood for. Without it, a
    value not listed is an error. ``keep_missing`` decodes the missing category to itself
    (a code such as 5 comes back as 5, in the column's dtype) instead of to a missing value;
    it changes no bit of the layout. ``ordered`` declares the values ordered as listed (public
    knowledge, such as an age coded in years): a release may then group adjacent values
    (adaptive-projection's ordinal bins); it changes no bit of the layout either.
    ``by_rule`` lists values, in the order of ``values``, that a learned domain added by a
    public rule rather than by a noisy count of their own: the integer codes of a learned
    column above the first code of its bounds' top bucket (numbers), and the members of a
    public vocabulary whose released keys hold one member (text: single letters, days,
    months; ``docs/learn.md``). A release may take the highest codes, and each member on its
    own, as empty when its own measurements cannot tell them from empty
    (:mod:`dpquery.algorithms.marginal.empty_cells`); the kind is read off the value's type.
    A codebook's domain has none. It changes no bit of the layout either.
    ``listed`` lists values, in the order of ``values``, that a learned domain took from a
    public vocabulary a private membership test or the released keys named (``docs/learn.md``,
    "Phantoms and the released keys' rule"), not released by a selection of their own: many
    hold no record of the table (the 258 places of a column holding 125 countries). A release
    gives no record to one its own 1-way measurements cannot tell from empty
    (:func:`~dpquery.algorithms.marginal.empty_cells.listed_cells`). None of them is in
    ``by_rule``; a codebook's domain has none, and it changes no bit of the layout.
    ``width`` (2 to :data:`MAX_WIDTH`) writes its non-negative integer values zero-padded to
    that many digits when decoded (a code ``3`` of a column written ``003``; ``zfill``), as
    text; a learned domain holds the width its written forms' count found
    (``docs/learn.md``, "Codes written with leading zeros"). It changes no bit of the layout.
    ``other_missing`` decodes the catch-all category to a missing value instead of to its
    text: a learned column of numbers read as codes, whose catch-all stands for numbers the
    codes do not list (``docs/learn.md``, "Columns mostly missing"), comes back as numbers
    or missing, never as the text ``<other>``. It needs ``other``; it changes no bit of the
    layout, only the decoded column (and its dtype, read off the other values).
    """

    name: str
    values: tuple[Hashable, ...]
    missing: Hashable | None = None
    recode: Mapping[Hashable, Hashable] = field(default_factory=dict)
    dtype: str | None = field(default=None, compare=False)
    other: Hashable | None = None
    keep_missing: bool = field(default=False, compare=False)
    ordered: bool = field(default=False, compare=False)
    by_rule: tuple[Hashable, ...] = field(default=(), compare=False)
    listed: tuple[Hashable, ...] = field(default=(), compare=False)
    width: int | None = field(default=None, compare=False)
    other_missing: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_width(self.name, self.width)
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "by_rule", tuple(self.by_rule))
        object.__setattr__(self, "listed", tuple(self.listed))
        object.__setattr__(self, "recode", dict(self.recode))
        if not self.values:
            raise DomainError(f"categorical attribute {self.name!r} has no values")
        _check_unique(self.name, self.values)
        if self.missing is not None and self.missing not in self.values:
            raise DomainError(
                f"attribute {self.name!r}: missing category {self.missing!r} is not one of its "
                f"values {list(self.values)[:10]}"
            )
        if self.other is not None and self.other not in self.values:
            raise DomainError(
                f"attribute {self.name!r}: the catch-all category {self.other!r} is not one of "
                f"its values {list(self.values)[:10]}"
            )
        if self.other is not None and self.other == self.missing:
            raise DomainError(
                f"attribute {self.name!r}: {self.other!r} cannot be both the missing and the "
                "catch-all category"
            )
        bad = [c for c in self.recode.values() if c not in self.values]
        if bad:
            raise DomainError(f"attribute {self.name!r}: recode targets {bad} are not values")
        if not isinstance(self.keep_missing, bool):
            raise DomainError(f"attribute {self.name!r}: keep_missing must be true or false, "
                              f"got {self.keep_missing!r}")  # fmt: skip
        if self.keep_missing and self.missing is None:
            raise DomainError(f"attribute {self.name!r}: keep_missing needs a missing category")
        if not isinstance(self.other_missing, bool):
            raise DomainError(f"attribute {self.name!r}: other_missing must be true or false, "
                              f"got {self.other_missing!r}")  # fmt: skip
        if self.other_missing and self.other is None:
            raise DomainError(f"attribute {self.name!r}: other_missing needs a catch-all "
                              "category")  # fmt: skip
        if not isinstance(self.ordered, bool):
            raise DomainError(f"attribute {self.name!r}: ordered must be true or false, "
                              f"got {self.ordered!r}")  # fmt: skip
        self._check_by_rule()
        schema.check_dtype(self.name, self.dtype, self.present_values)

    def _check_by_rule(self) -> None:
        """``by_rule`` and ``listed``: values of the attribute, in their order, neither its
        catch-all nor its missing category, and none in both."""
        for key, vals in (("by_rule", self.by_rule), ("listed", self.listed)):
            bad = [v for v in vals if v not in self.values or v in (self.other, self.missing)]
            if bad:
                raise DomainError(
                    f"attribute {self.name!r}: {key} values {bad[:6]} are not values of it "
                    "other than its catch-all and missing categories"
                )
            order = [self.values.index(v) for v in vals]
            if any(b <= a for a, b in itertools.pairwise(order)):
                raise DomainError(
                    f"attribute {self.name!r}: {key} must list values once each, in the order "
                    f"of its values; got {list(vals)[:6]}"
                )
        both = set(self.by_rule) & set(self.listed)
        if both:
            raise DomainError(f"attribute {self.name!r}: values {sorted(map(str, both))[:6]} "
                              "are both by_rule and listed")  # fmt: skip

    @property
    def present_values(self) -> tuple[Hashable, ...]:
        """The values that decode to themselves (all but the missing category, unless
        ``keep_missing``, and but the catch-all with ``other_missing``)."""
        gone = {self.missing} if self.missing is not None and not self.keep_missing else set()
        if self.other_missing:
            gone.add(self.other)
        return tuple(v for v in self.values if v not in gone) if gone else self.values

    @property
    def decodes_missing(self) -> bool:
        """Whether a category (the missing one, or the catch-all with ``other_missing``)
        decodes to a missing value."""
        return (self.missing is not None and not self.keep_missing) or self.other_missing

    @property
    def written_values(self) -> tuple[Hashable, ...]:
        """The values as decoded: each non-negative integer zero-padded to :attr:`width`
        digits (text) when the attribute has one, else the values themselves."""
        if self.width is None:
            return self.values
        return tuple(padded(v, self.width) for v in self.values)

    @property
    def output_dtype(self) -> str:
        """The dtype of the decoded column (:mod:`dpquery.data.schema`)."""
        present = self.present_values
        if self.width is not None:
            present = tuple(padded(v, self.width) for v in present)
        base = self.dtype or schema.values_dtype(present)
        return schema.nullable(base) if self.decodes_missing else base

    @property
    def size(self) -> int:
        return len(self.values)

    @property
    def labels(self) -> tuple[Hashable, ...]:
        return self.values


@dataclass(frozen=True)
class Numeric:
    """A numeric attribute cut into bins by public ``edges`` (k + 1 increasing numbers).

    Bin i is ``[edges[i], edges[i+1])``; the last bin also holds ``edges[-1]``. Values outside
    ``[edges[0], edges[-1]]`` clip to the end bins (``out_of_range="clip"``) or are an error
    (``"error"``, the default). With ``missing=True`` one extra bit, after the bins, holds
    missing values. ``integer=True`` decodes bins to integers; ``dtype`` is the column's
    pandas dtype in decoded output (:mod:`dpquery.data.schema`; None: ``int64`` for an integer
    attribute or integer edges, ``float64`` otherwise). ``decimals`` is the public precision
    of decoded values (0 to :data:`~dpquery.data.schema.MAX_DECIMALS`; None: the fewest
    decimals that write every edge, :func:`~dpquery.data.schema.edge_decimals`): a wage
    binned at whole dollars with ``decimals=2`` decodes with cents. It must write every edge.
    ``within`` holds public decoding weights, one tuple per bin over equal-width sub-bins of
    that bin (each tuple non-negative, summing to 1): a decoded value first draws a sub-bin
    by them, then a value uniformly inside it. None (the default): uniformly in the bin. They
    change no bit of the layout (a learned domain holds noisy ones, ``docs/learn.md``).
    ``time`` (a ``strftime`` format, :mod:`dpquery.data.dates`) makes the attribute a date or
    time column: its edges are seconds since 1970-01-01 00:00:00, its values are read as
    dates written in that format (the ISO 8601 family for one of
    :data:`~dpquery.data.dates.ISO_FORMATS`) and decoded back to text in it, at its
    precision; it must be ``integer``.
    ``density`` is how a bin without weights is decoded: ``"uniform"`` (the default) or
    ``"linear"``, a density inside each bin with the slope of its neighbours' (the release's
    own bin masses; :func:`dpquery.data.decode.linear_slopes`), each bin's mass kept; or
    ``"cells"`` (with ``within`` only): the weights read as a density uniform inside each
    sub-bin, a value drawn at its quantile of the one uniform a bin's value takes, with no
    draw of a sub-bin (a learned band of point masses, its sub-bins the finer histogram's
    cells, ``docs/learn.md``). It changes no bit of the layout either (a learned domain
    decodes ``"linear"``).
    ``texts`` is how a value that is not a number (not a date in ``time``'s format) is read:
    ``"error"`` (the default) or ``"missing"`` (needs ``missing=True``), as a learned domain's
    columns read it, so that the domain reused on the table it was learned from encodes it as
    the learning did (``docs/learn.md``). It changes no bit of the layout.
    ``lattice`` (``(step, offset)``, integers with ``step >= 2`` and ``0 <= offset < step``)
    says that the column's values are the integers ``offset + step * j`` (an election year
    every 4 years, ``(4, 0)``; prices in whole hundreds, ``(100, 0)``): a decoded value is
    drawn among the lattice's points inside its bin (post-processing of the released bin),
    so every edge must be one of them (a bin then holds at least its lower edge). Only for
    an ``integer`` attribute that is not a ``time``. A learned domain holds one its lattice
    test found (``docs/learn.md``, "Integers on a coarser lattice"); it changes no bit of
    the layout.
    ``exact`` holds values written with more decimals than the precision, each the one value
    of its bin (a bin one step of the precision wide): a value decoded in that bin is the
    exact value, not the precision's multiple (a study's end, 3.270499657768651 years, that a
    quarter of the records hold, at a precision of 4 decimals). Public values, such as the
    exact text of a released key (a learned domain's atoms, ``docs/learn.md``); only for an
    attribute decoded with decimals that is not a ``time``. It changes no bit of the layout.
    ``width`` (2 to :data:`MAX_WIDTH`) writes decoded values zero-padded to that many digits,
    as text (a ZIP code ``403`` as ``00403``; ``zfill``, a value below 0 as it is): the
    column's written form, which a learned domain reads off a private count
    (``docs/learn.md``, "Codes written with leading zeros"). Only for an ``integer``
    attribute that is not a ``time``; it changes no bit of the layout.
    ``significant`` (1 to :data:`MAX_SIGNIFICANT`) writes decoded values as text in
    scientific notation with that many significant digits (``4.070e-04`` at 4), unrounded to
    any decimals before: a column written so (p-values, concentrations), whose small values
    decimals would round to 0 (``docs/learn.md``, "Numbers written in scientific
    notation"). Only for an attribute that is not ``integer``, a ``time``, of a ``width``,
    ``lattice`` or ``exact`` values, nor of declared ``decimals``; it changes no bit of the
    layout. ``notation`` (with ``significant`` only): None writes every value so;
    ``("below", t)`` writes a value with an exponent only where its magnitude is below ``t``
    (``1.2e-05`` beside ``0.0123`` at ``t = 10^-4``: R's ``write.csv`` and Python's ``repr``),
    ``("from", t)`` only at ``t`` and above (a spreadsheet's ``1.5e+10`` beside ``123``),
    each value otherwise written as plain decimals; both at the significant digits, trailing
    zeros dropped, as those writers drop them (:data:`NOTATIONS`).
    """

    name: str
    edges: tuple[float, ...]
    out_of_range: OutOfRange = "error"
    missing: bool = False
    integer: bool = False
    dtype: str | None = field(default=None, compare=False)
    decimals: int | None = None
    within: tuple[tuple[float, ...], ...] | None = field(default=None, compare=False)
    time: str | None = None
    density: Density = field(default="uniform", compare=False)
    texts: Texts = field(default="error", compare=False)
    lattice: tuple[int, int] | None = field(default=None, compare=False)
    exact: tuple[float, ...] = field(default=(), compare=False)
    width: int | None = field(default=None, compare=False)
    significant: int | None = field(default=None, compare=False)
    notation: tuple[str, float] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_width(self.name, self.width)
        self._check_significant()
        self._check_notation()
        if self.width is not None and (not self.integer or self.time is not None):
            raise DomainError(
                f"numeric attribute {self.name!r}: a width needs integer=True and no time "
                f"(integer={self.integer}, time={self.time!r})"
            )
        edges = tuple(float(e) for e in self.edges)
        object.__setattr__(self, "edges", edges)
        if len(edges) < 2 or not all(map(math.isfinite, edges)):
            raise DomainError(
                f"numeric attribute {self.name!r} needs at least two finite bin edges, "
                f"got {list(edges)}"
            )
        if any(b <= a for a, b in itertools.pairwise(edges)):
            raise DomainError(f"numeric attribute {self.name!r}: edges must increase: {edges}")
        if self.out_of_range not in ("clip", "error"):
            raise DomainError(
                f"attribute {self.name!r}: out_of_range must be 'clip' or 'error', "
                f"got {self.out_of_range!r}"
            )
        if self.decimals is not None:
            self._check_decimals(edges)
        if self.within is not None:
            object.__setattr__(self, "within", self._check_within(self.within))
        if self.time is not None:
            self._check_time()
        if self.density not in DENSITIES:
            raise DomainError(
                f"numeric attribute {self.name!r}: density must be one of "
                f"{', '.join(map(repr, DENSITIES))}, got {self.density!r}"
            )
        if self.density == "cells" and self.within is None:
            raise DomainError(
                f"numeric attribute {self.name!r}: density 'cells' reads the within weights "
                "as its cells; give within (one list of weights per bin)"
            )
        if self.texts not in TEXTS or (self.texts == "missing" and not self.missing):
            raise DomainError(
                f"numeric attribute {self.name!r}: texts must be 'error', or 'missing' with "
                f"missing=True; got texts={self.texts!r}, missing={self.missing}"
            )
        if self.lattice is not None:
            object.__setattr__(self, "lattice", self._check_lattice(self.lattice, edges))
        if self.exact:
            object.__setattr__(self, "exact", self._check_exact(self.exact, edges))
        schema.check_dtype(self.name, self.dtype, None, whole=self.whole)

    def _check_significant(self) -> None:
        s = self.significant
        if s is None:
            return
        if (
            isinstance(s, bool)
            or not isinstance(s, int | np.integer)
            or not (1 <= int(s) <= MAX_SIGNIFICANT)
        ):
            raise DomainError(f"numeric attribute {self.name!r}: significant must be an "
                              f"integer from 1 to {MAX_SIGNIFICANT}, got {s!r}")  # fmt: skip
        others = {"integer": self.integer, "time": self.time, "width": self.width,
                  "lattice": self.lattice, "exact": self.exact or None,
                  "decimals": self.decimals}  # fmt: skip
        if given := [k for k, v in others.items() if v not in (None, False)]:
            raise DomainError(f"numeric attribute {self.name!r}: significant digits take no "
                              f"{', '.join(given)}")  # fmt: skip
        object.__setattr__(self, "significant", int(s))

    def _check_notation(self) -> None:
        n = self.notation
        if n is None:
            return
        ok = (isinstance(n, tuple | list) and len(n) == 2 and n[0] in NOTATIONS
              and isinstance(n[1], int | float) and not isinstance(n[1], bool)
              and math.isfinite(n[1]) and n[1] > 0)  # fmt: skip
        if not ok:
            raise DomainError(f"numeric attribute {self.name!r}: notation must be [side, t] "
                              f"with side one of {', '.join(map(repr, NOTATIONS))} and t > 0, "
                              f"got {n!r}")  # fmt: skip
        if self.significant is None:
            raise DomainError(f"numeric attribute {self.name!r}: a notation needs significant "
                              "digits")  # fmt: skip
        object.__setattr__(self, "notation", (str(n[0]), float(n[1])))

    def _check_lattice(self, lattice: Any, edges: tuple[float, ...]) -> tuple[int, int]:
        """``(step, offset)`` as two ints, checked against the attribute and its edges."""
        bad = f"numeric attribute {self.name!r}: lattice must be [step, offset], integers with "
        bad += "step >= 2 and 0 <= offset < step"
        if isinstance(lattice, str | bytes) or not isinstance(lattice, Sequence):
            raise DomainError(f"{bad}; got {lattice!r}")
        parts = tuple(lattice)
        if len(parts) != 2 or not all(
            isinstance(x, int | np.integer) and not isinstance(x, bool) for x in parts
        ):
            raise DomainError(f"{bad}; got {lattice!r}")
        step, offset = int(parts[0]), int(parts[1])
        if step < 2 or not 0 <= offset < step:
            raise DomainError(f"{bad}; got {lattice!r}")
        if not self.integer or self.time is not None:
            raise DomainError(
                f"numeric attribute {self.name!r}: a lattice needs integer=True and no time "
                f"(integer={self.integer}, time={self.time!r})"
            )
        off = [e for e in edges if not (e.is_integer() and (int(e) - offset) % step == 0)]
        if off:
            raise DomainError(
                f"numeric attribute {self.name!r}: every edge must lie on its lattice "
                f"{offset} + {step} j; {off[:4]} do not"
            )
        return step, offset

    def _check_exact(self, exact: Any, edges: tuple[float, ...]) -> tuple[float, ...]:
        """``exact`` as increasing floats, each inside the range, the only one of its bin, and
        that bin one step of the precision wide (:meth:`exact_bins`)."""
        bad = f"numeric attribute {self.name!r}: exact must be a list of numbers"
        if isinstance(exact, str | bytes) or not isinstance(exact, Sequence):
            raise DomainError(f"{bad}; got {exact!r}")
        if not all(isinstance(x, int | float | np.number) and not isinstance(x, bool)
                   for x in exact):  # fmt: skip
            raise DomainError(f"{bad}; got {list(exact)[:6]}")
        values = tuple(sorted(float(x) for x in exact))
        k = self.precision
        if self.time is not None or k is None or k == 0:
            raise DomainError(
                f"numeric attribute {self.name!r}: exact values need decimals and no time "
                f"(precision {k}, time={self.time!r})"
            )
        if not all(math.isfinite(x) and edges[0] <= x < edges[-1] for x in values):
            raise DomainError(
                f"numeric attribute {self.name!r}: exact values must lie in [{edges[0]:g}, "
                f"{edges[-1]:g}); got {list(values)[:6]}"
            )
        bins = [int(np.searchsorted(edges, x, side="right")) - 1 for x in values]
        step = Decimal(1).scaleb(-k)
        wide = [x for x, b in zip(values, bins, strict=True)
                if _decimal(edges[b + 1]) - _decimal(edges[b]) != step]  # fmt: skip
        if wide or len(set(bins)) < len(bins):
            raise DomainError(
                f"numeric attribute {self.name!r}: each exact value must be the only one of "
                f"a bin {step} wide (one step of its {k} decimals); {(wide or values)[:4]} "
                "are not"
            )
        return values

    def exact_bins(self) -> dict[int, float]:
        """The bin of each :attr:`exact` value, and the value (the bin's decoded value)."""
        edges = np.asarray(self.edges)
        return {int(np.searchsorted(edges, x, side="right")) - 1: x for x in self.exact}

    def _check_time(self) -> None:
        try:
            dates.check_format(self.time)
        except ValueError as exc:
            raise DomainError(f"numeric attribute {self.name!r}: {exc}") from None
        if not self.integer:
            raise DomainError(
                f"numeric attribute {self.name!r}: a time column (time="
                f"{self.time!r}) counts whole seconds: set integer=True"
            )

    def _check_within(self, within: Any) -> tuple[tuple[float, ...], ...]:
        """The weights as tuples of floats, each bin's summing to 1."""
        bad = f"numeric attribute {self.name!r}: within must hold one list of weights per bin"
        if isinstance(within, str | bytes) or len(within) != self.n_bins:
            raise DomainError(f"{bad} ({self.n_bins}), got {str(within)[:60]}")
        out = []
        for weights in within:
            if isinstance(weights, str | bytes) or not len(weights):
                raise DomainError(f"{bad}, each non-empty; got {weights!r}")
            w = tuple(float(x) for x in weights)
            total = sum(w)
            if not all(math.isfinite(x) and x >= 0 for x in w) or not total > 0:
                raise DomainError(
                    f"{bad}, each finite, non-negative and not all zero; got {list(w)[:8]}"
                )
            # weights summing to 1 but for float rounding are kept as given (a JSON round
            # trip gives them back exactly); others are normalised
            out.append(w if abs(total - 1.0) <= 1e-9 else tuple(x / total for x in w))
        return tuple(out)

    def _check_decimals(self, edges: tuple[float, ...]) -> None:
        k = self.decimals
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= schema.MAX_DECIMALS:
            raise DomainError(
                f"numeric attribute {self.name!r}: decimals must be an integer from 0 to "
                f"{schema.MAX_DECIMALS}, got {k!r}"
            )
        needed = schema.edge_decimals(edges)
        if needed is None or needed > k:
            raise DomainError(
                f"numeric attribute {self.name!r}: decimals={k} cannot write its edges "
                f"{list(edges)[:6]} (they need {'more' if needed is None else needed})"
            )
        if self.integer and k > 0:
            raise DomainError(
                f"numeric attribute {self.name!r}: integer=True takes decimals=0, got {k}"
            )

    @property
    def precision(self) -> int | None:
        """The decimals decoded values are rounded to: 0 for an integer attribute, else
        ``decimals``, else the edges' (None: not rounded)."""
        if self.integer:
            return 0
        if self.significant is not None:  # significant digits, at any magnitude
            return None
        return self.decimals if self.decimals is not None else schema.edge_decimals(self.edges)

    @property
    def whole(self) -> bool:
        """Whether decoded values are integers (``integer``, ``decimals=0``, or no declared
        decimals and edges that are all integers)."""
        return self.precision == 0

    @classmethod
    def equal_width(cls, name: str, lo: float, hi: float, bins: int, **kwargs: Any) -> Numeric:
        """``bins`` equal-width bins over the public range ``[lo, hi]``.

        Edges are exact decimals: ``lo + i (hi - lo) / bins`` computed in decimal arithmetic
        from the decimals ``lo`` and ``hi`` stand for, then rounded once to the nearest float.
        Over [0, 5.2] in 26 bins the fourth edge is 0.6 (the float a CSV's "0.6" reads as),
        not the 0.6000000000000001 of float steps, so a value written as an edge falls in
        the bin that edge opens."""
        if bins < 1:
            raise DomainError(f"attribute {name!r}: bins must be >= 1, got {bins}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise DomainError(f"attribute {name!r}: the range must be finite, got [{lo}, {hi}]")
        a, b = _decimal(lo), _decimal(hi)
        return cls(name, tuple(float(a + (b - a) * i / bins) for i in range(bins + 1)), **kwargs)

    @property
    def n_bins(self) -> int:
        return len(self.edges) - 1

    @property
    def output_dtype(self) -> str:
        """The dtype of the decoded column (:mod:`dpquery.data.schema`)."""
        if self.time is not None or self.width is not None or self.significant is not None:
            return "object"  # text in the column's written format
        base = self.dtype or ("int64" if self.whole else "float64")
        return schema.nullable(base) if self.missing else base

    @property
    def size(self) -> int:
        return self.n_bins + int(self.missing)

    @property
    def labels(self) -> tuple[str, ...]:
        last = self.n_bins - 1
        fmt = _fmt_int if self.integer else _fmt_float
        bins = tuple(
            f"[{fmt(lo)}, {fmt(hi)}{']' if i == last else ')'}"
            for i, (lo, hi) in enumerate(zip(self.edges, self.edges[1:], strict=False))
        )
        return (*bins, MISSING_LABEL) if self.missing else bins


def _decimal(x: float) -> Decimal:
    """The decimal a number stands for: an integer exactly, a float as its shortest repr
    (0.6, not the binary 0.59999999999999997779...)."""
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return Decimal(int(x))
    return Decimal(repr(float(x)))


def _fmt_float(x: float) -> str:
    return f"{x:g}"


def _fmt_int(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Binary:
    """A two-valued attribute encoded as one free bit: ``values[1]`` sets it. ``dtype`` is
    the column's pandas dtype in decoded output (None: from the values' types)."""

    name: str
    values: tuple[Hashable, Hashable] = (0, 1)
    dtype: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        object.__setattr__(self, "values", tuple(self.values))
        if len(self.values) != 2 or self.values[0] == self.values[1]:
            raise DomainError(
                f"binary attribute {self.name!r} needs two distinct values, got {self.values}"
            )
        schema.check_dtype(self.name, self.dtype, self.values)

    @property
    def output_dtype(self) -> str:
        """The dtype of the decoded column (:mod:`dpquery.data.schema`)."""
        return self.dtype or schema.values_dtype(self.values)

    @property
    def size(self) -> int:
        return 1

    @property
    def labels(self) -> tuple[Hashable, ...]:
        return (self.values[1],)


Attribute = Categorical | Numeric | Binary


@dataclass(frozen=True)
class Domain:
    """Ordered public attributes and their bit layout.

    ``non_private`` is True when the domain was read from the private data (see
    :func:`infer_domain`); such a domain leaks and releases built on it are flagged.
    """

    attributes: tuple[Attribute, ...]
    non_private: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        attrs = tuple(self.attributes)
        object.__setattr__(self, "attributes", attrs)
        if not attrs:
            raise DomainError("a domain needs at least one attribute")
        for a in attrs:
            if not isinstance(a, Categorical | Numeric | Binary):
                raise DomainError(f"not an attribute: {a!r}")
        _check_unique("<domain>", [a.name for a in attrs])

    # -- layout -----------------------------------------------------------------------
    @cached_property
    def offsets(self) -> np.ndarray:
        """First bit of each attribute; ``offsets[-1] == d``."""
        return np.concatenate([[0], np.cumsum([a.size for a in self.attributes])]).astype(np.int64)

    @property
    def d(self) -> int:
        """Number of bits after encoding."""
        return int(self.offsets[-1])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.attributes)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {a.name: i for i, a in enumerate(self.attributes)}

    @cached_property
    def onehot_groups(self) -> np.ndarray:
        """``(g, 2)`` array of ``[start, stop)`` bit ranges of the one-hot attributes."""
        rows = [
            (self.offsets[i], self.offsets[i + 1])
            for i, a in enumerate(self.attributes)
            if not isinstance(a, Binary)
        ]
        groups = np.array(rows, dtype=np.int64).reshape(-1, 2)
        groups.setflags(write=False)
        return groups

    @cached_property
    def attribute_of_bit(self) -> np.ndarray:
        """Attribute index of every bit (length d)."""
        return np.repeat(np.arange(len(self.attributes)), self.sizes)

    def __len__(self) -> int:
        return len(self.attributes)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> Attribute:
        return self.attributes[self.position(name)]

    def position(self, name: str) -> int:
        """Index of the attribute called ``name``."""
        try:
            return self._index[name]
        except KeyError:
            raise DomainError(
                f"unknown attribute {name!r}; the domain has {list(self.names)[:20]}"
            ) from None

    def bits_of(self, name: str) -> range:
        """The bit positions of attribute ``name``."""
        i = self.position(name)
        return range(int(self.offsets[i]), int(self.offsets[i + 1]))

    def bit(self, name: str, value: Hashable) -> int:
        """The bit that is set when attribute ``name`` takes ``value`` (a category, a bin
        label, a number inside a bin, or the true value of a binary attribute)."""
        attr = self[name]
        start = self.bits_of(name).start
        if isinstance(attr, Numeric):
            if value in attr.labels:
                return start + attr.labels.index(value)
            if isinstance(value, int | float | np.number) and not isinstance(value, bool):
                x = float(value)
                if attr.edges[0] <= x <= attr.edges[-1]:
                    return start + min(
                        int(np.searchsorted(attr.edges, x, side="right")) - 1, attr.n_bins - 1
                    )
            raise DomainError(
                f"attribute {name!r} has no bin for {value!r}; bins are {list(attr.labels)}"
            )
        labels = list(attr.labels)
        if value in labels:
            return start + labels.index(value)
        strs = [str(v) for v in labels]
        if str(value) in strs:
            return start + strs.index(str(value))
        raise DomainError(
            f"attribute {name!r} has no bit for value {value!r}; expected one of {labels[:20]}"
        )

    def value_of_bit(self, j: int) -> tuple[str, Hashable]:
        """``(attribute name, value or bin label)`` of bit ``j``."""
        if not 0 <= j < self.d:
            raise DomainError(f"bit {j} is outside the domain's {self.d} bits")
        i = int(self.attribute_of_bit[j])
        attr = self.attributes[i]
        return attr.name, attr.labels[j - int(self.offsets[i])]

    def describe(self) -> str:
        """A human-readable summary: one line per attribute."""
        lines = [
            f"{len(self)} attributes, {self.d} bits, {len(self.onehot_groups)} one-hot groups"
            + ("  [NON-PRIVATE domain inferred from the data]" if self.non_private else "")
        ]
        for a, off in zip(self.attributes, self.offsets, strict=False):
            kind = type(a).__name__.lower()
            detail = ", ".join(map(str, a.labels[:4])) + (", ..." if a.size > 4 else "")
            lines.append(f"  {a.name:<28} {kind:<11} {a.size:>5} bits @ {off:<6} {detail}")
        return "\n".join(lines)

    def with_dtypes(self, dtypes: Mapping[str, Any]) -> Domain:
        """This domain with the output dtypes declared in ``dtypes`` (attribute name to a
        pandas dtype or its name, :mod:`dpquery.data.schema`), a public schema like the
        domain itself. Never the dtypes of the private table: pandas infers them from the
        values (one age of 37.5 or one missing cell makes an integer column ``float64``), so
        copying them onto the output would tell neighbouring tables apart. An unknown
        attribute, or a dtype the attribute cannot decode to, is a :class:`DomainError`."""
        if isinstance(dtypes, pd.DataFrame | pd.Series) or not isinstance(dtypes, Mapping):
            raise DomainError(
                f"dtypes must be a dict of attribute name to dtype, declared from public "
                f"knowledge, got {type(dtypes).__name__}; a table's dtypes are inferred from "
                "its values and would leak them"
            )
        unknown = [k for k in dtypes if k not in self]
        if unknown:
            raise DomainError(
                f"dtypes names {unknown}, not attributes of the domain {list(self.names)}"
            )
        attrs = tuple(
            replace(a, dtype=schema.dtype_name(dtypes[a.name])) if a.name in dtypes else a
            for a in self.attributes
        )
        return Domain(attrs, self.non_private, self.note)

    def layout(self) -> list[dict[str, Any]]:
        """The attributes' bit layout as JSON (``to_dict`` without the output dtypes): two
        domains with the same layout encode every record to the same bits."""
        return [_layout_to_dict(a) for a in self.attributes]

    # -- JSON -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "attributes": [_attr_to_dict(a) for a in self.attributes],
            "non_private": self.non_private,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Domain:
        """Read the full format (``{"attributes": [...]}``) or the private-pgm format
        ``{"attr": size}`` (integer-coded columns with values ``0 .. size-1``)."""
        if not isinstance(obj, Mapping):
            raise DomainError(f"a domain must be a JSON object, got {type(obj).__name__}")
        if "attributes" in obj:
            attrs = obj["attributes"]
            if not isinstance(attrs, list):
                raise DomainError("'attributes' must be a list of attribute objects")
            return cls(
                tuple(_attr_from_dict(a) for a in attrs),
                non_private=bool(obj.get("non_private", False)),
                note=str(obj.get("note", "")),
            )
        return cls.from_sizes(obj)

    @classmethod
    def from_file_object(cls, obj: object, source: str = "the domain") -> Domain:
        """A domain file's JSON in any of its forms: the full format (``{"attributes":
        [...]}``), the private-pgm sizes (``{"attr": size}``, every value an integer) or a
        codebook (:meth:`from_codebook`, ``docs/codebook.md``); anything else is an error
        naming the three."""
        neither = (
            f'{source} is neither a domain (the full format {{"attributes": [...]}}, or '
            f'private-pgm sizes {{"attr": size}}) nor a codebook (docs/codebook.md)'
        )
        if not isinstance(obj, Mapping) or not obj:
            raise DomainError(f"{neither}: got {type(obj).__name__} {str(obj)[:60]}")
        sizes = all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values())
        if "attributes" in obj or sizes:
            return cls.from_dict(obj)
        try:
            return cls.from_codebook(obj)
        except DomainError as exc:
            raise DomainError(f"{neither}; read as a codebook: {exc}") from None

    @classmethod
    def from_codebook(cls, codebook: Mapping[str, Any]) -> Domain:
        """A domain from a codebook, one entry per attribute in column order::

            Domain.from_codebook({
                "sex": ["F", "M"],                              # categories
                "age": {"min": 0, "max": 100, "bins": 20},      # equal-width bins
                "income": {"edges": [0, 1e4, 5e4, 1e6], "out_of_range": "clip"},
                "state": {"values": ["CA", "NY", "other"], "missing": "other"},
                "smoker": {"type": "binary", "values": ["no", "yes"]},
            })

        The accepted forms are listed in :func:`attributes_from_codebook`; a bad entry is an
        error naming its key and the expected forms.
        """
        return cls(attributes_from_codebook(codebook))

    @classmethod
    def from_sizes(cls, sizes: Mapping[str, int], ordered: Iterable[str] = ()) -> Domain:
        """The private-pgm domain: every attribute categorical over ``0 .. size-1``, those
        named in ``ordered`` declared ordered (public knowledge)."""
        ordered = set(ordered)
        unknown = sorted(ordered - set(sizes))
        if unknown:
            raise DomainError(f"ordered names {unknown}, which are not attributes")
        attrs = []
        for name, size in sizes.items():
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise DomainError(
                    f"private-pgm domain: size of {name!r} must be a positive integer, got {size!r}"
                )
            attrs.append(Categorical(name, tuple(range(size)), ordered=name in ordered))
        return cls(tuple(attrs))

    @classmethod
    def binary(cls, d: int, prefix: str = "x") -> Domain:
        """``d`` free binary attributes named ``x0 .. x{d-1}``."""
        return cls(tuple(Binary(f"{prefix}{j}") for j in range(d)))

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Domain:
        path = Path(path)
        if not path.is_file():
            problem = "is a folder, not a JSON file" if path.is_dir() else "does not exist"
            raise DomainError(f"domain file {path} {problem}")
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise DomainError(
                f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                f"{exc.start}); save the domain JSON as UTF-8"
            ) from None
        except json.JSONDecodeError as exc:
            raise DomainError(f"{path}: not valid JSON ({exc})") from None
        domain = cls.from_file_object(obj, str(path))
        if domain.non_private:  # the flag travels with the file, and so does the warning
            warnings.warn(
                f"{path}: this domain was read from the private data (non_private is set); "
                "anything released with it is NOT differentially private",
                NonPrivateWarning,
                stacklevel=2,
            )
        return domain


def _attr_to_dict(a: Attribute) -> dict[str, Any]:
    out = _layout_to_dict(a)
    if a.dtype is not None:  # only when declared: older readers see the same layout
        out["dtype"] = a.dtype
    if isinstance(a, Categorical) and a.keep_missing:
        out["keep_missing"] = True
    if isinstance(a, Categorical) and a.other_missing:  # only when learned: the same before
        out["other_missing"] = True
    if isinstance(a, Categorical) and a.ordered:
        out["ordered"] = True
    if isinstance(a, Categorical) and a.by_rule:  # only when learned: older readers see the same
        out["by_rule"] = list(a.by_rule)
    if isinstance(a, Categorical) and a.listed:  # only when learned: older readers see the same
        out["listed"] = list(a.listed)
    if isinstance(a, Numeric) and a.within is not None:
        out["within"] = [list(w) for w in a.within]
    if isinstance(a, Numeric) and a.density != "uniform":  # older readers see the same
        out["density"] = a.density
    if isinstance(a, Numeric) and a.texts != "error":  # older readers see the same
        out["texts"] = a.texts
    if isinstance(a, Numeric) and a.lattice is not None:  # only when learned: the same
        out["lattice"] = list(a.lattice)
    if isinstance(a, Numeric) and a.exact:  # only when learned: older readers see the same
        out["exact"] = list(a.exact)
    if isinstance(a, Categorical | Numeric) and a.width is not None:  # only when learned
        out["width"] = int(a.width)
    if isinstance(a, Numeric) and a.significant is not None:  # only when learned
        out["significant"] = int(a.significant)
    if isinstance(a, Numeric) and a.notation is not None:  # only when learned
        out["notation"] = [a.notation[0], a.notation[1]]
    return out


def _layout_to_dict(a: Attribute) -> dict[str, Any]:
    if isinstance(a, Categorical):
        out: dict[str, Any] = {"name": a.name, "type": "categorical", "values": list(a.values)}
        if a.missing is not None:
            out["missing"] = a.missing
        if a.recode:
            out["recode"] = [[k, v] for k, v in a.recode.items()]
        if a.other is not None:
            out["other"] = a.other
        return out
    if isinstance(a, Numeric):
        numeric: dict[str, Any] = {
            "name": a.name,
            "type": "numeric",
            "edges": list(a.edges),
            "out_of_range": a.out_of_range,
            "missing": a.missing,
            "integer": a.integer,
        }
        if a.decimals is not None:  # only when declared: older readers see the same layout
            numeric["decimals"] = a.decimals
        if a.time is not None:
            numeric["time"] = a.time
        return numeric
    return {"name": a.name, "type": "binary", "values": list(a.values)}


# a numeric attribute's decoding: no layout bit
_DECODE = ("within", "density", "lattice", "exact", "width", "significant", "notation")


def _attr_from_dict(obj: Any) -> Attribute:
    if not isinstance(obj, Mapping) or "name" not in obj or "type" not in obj:
        raise DomainError(f"an attribute must be an object with 'name' and 'type', got {obj!r}")
    kind, name = obj["type"], obj["name"]
    allowed = {
        "categorical": {
            "values",
            "missing",
            "recode",
            "dtype",
            "other",
            "keep_missing",
            "ordered",
            "by_rule",
            "listed",
            "width",
            "other_missing",
        },
        "numeric": {
            "edges",
            "out_of_range",
            "missing",
            "integer",
            "dtype",
            "decimals",
            "time",
            "texts",
            *_DECODE,
        },
        "binary": {"values", "dtype"},
    }
    if kind not in allowed:
        raise DomainError(
            f"attribute {name!r}: type must be categorical, numeric or binary, got {kind!r}"
        )
    extra = set(obj) - allowed[kind] - {"name", "type"}
    if extra:
        raise DomainError(f"attribute {name!r}: unknown keys {sorted(extra)} for type {kind}")
    for key in ("values", "edges", "recode"):  # a string would be split into characters
        if key in obj and not isinstance(obj[key], list):
            raise DomainError(
                f"attribute {name!r}: {key!r} must be a list, got {type(obj[key]).__name__}"
            )
    try:
        if kind == "categorical":
            return Categorical(
                name,
                tuple(_hashable(v) for v in obj["values"]),
                _hashable(obj.get("missing")),
                {_hashable(k): _hashable(v) for k, v in obj.get("recode", [])},
                obj.get("dtype"),
                _hashable(obj.get("other")),
                obj.get("keep_missing", False),
                obj.get("ordered", False),
                _by_rule(name, obj.get("by_rule", [])),
                _by_rule(name, obj.get("listed", []), "listed"),
                obj.get("width"),
                obj.get("other_missing", False),
            )
        if kind == "numeric":
            return Numeric(
                name,
                tuple(obj["edges"]),
                obj.get("out_of_range", "error"),
                bool(obj.get("missing", False)),
                bool(obj.get("integer", False)),
                obj.get("dtype"),
                obj.get("decimals"),
                _within(obj.get("within")),
                obj.get("time"),
                obj.get("density", "uniform"),
                obj.get("texts", "error"),
                _lattice(name, obj.get("lattice")),
                _exact(name, obj.get("exact", [])),
                obj.get("width"),
                obj.get("significant"),
                obj.get("notation"),
            )
        values = tuple(_hashable(v) for v in obj.get("values", (0, 1)))
        return Binary(name, values, obj.get("dtype"))  # type: ignore[arg-type]
    except KeyError as exc:
        raise DomainError(f"attribute {name!r} ({kind}) is missing the key {exc}") from None
    except TypeError as exc:
        raise DomainError(f"attribute {name!r}: {exc}") from None


def _by_rule(name: str, v: Any, key: str = "by_rule") -> tuple[Hashable, ...]:
    """A domain file's ``by_rule`` (or ``listed``) list as a tuple of values."""
    if not isinstance(v, list):
        raise DomainError(f"attribute {name!r}: {key!r} must be a list, got {type(v).__name__}")
    return tuple(_hashable(x) for x in v)


def _lattice(name: str, v: Any) -> tuple[int, int] | None:
    """A domain file's ``lattice`` (``[step, offset]``) as a tuple; checked by ``Numeric``."""
    if v is None:
        return None
    if not isinstance(v, list):
        raise DomainError(
            f"attribute {name!r}: 'lattice' must be a list [step, offset], got {type(v).__name__}"
        )
    return tuple(v)  # its length and types: checked by Numeric


def _exact(name: str, v: Any) -> tuple[float, ...]:
    """A domain file's ``exact`` (a list of numbers) as a tuple; checked by ``Numeric``."""
    if not isinstance(v, list):
        raise DomainError(f"attribute {name!r}: 'exact' must be a list, got {type(v).__name__}")
    return tuple(v)


def _within(v: Any) -> tuple[tuple[float, ...], ...] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(w, list) for w in v):
        raise DomainError(f"'within' must be a list of lists of weights, got {str(v)[:60]}")
    return tuple(tuple(w) for w in v)


def _hashable(v: Any) -> Hashable:
    return tuple(v) if isinstance(v, list) else v


# --- codebooks: the short forms of Domain.from_codebook -------------------------------
_RANGE_KEYS = {"min", "max", "bins"}
_NUMERIC_OPTIONS = {"integer", "missing", "out_of_range", "dtype", "decimals"}
_FORMS = (
    "a list of categories, {'values': [...]}, {'min': ..., 'max': ..., 'bins': ...}, "
    "{'edges': [...]} or a full attribute object with 'type'"
)


def _fail(name: str, message: str) -> DomainError:
    return DomainError(f"codebook[{name!r}]: {message}")


def _number(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(name, f"{key!r} must be a number, got {value!r}")
    return float(value)


def _check_keys(name: str, spec: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(spec) - allowed)
    if extra:
        raise _fail(name, f"unknown key(s) {extra}; expected some of {sorted(allowed)}")


def _numeric(name: str, spec: Mapping[str, Any]) -> Any:
    options = {k: spec[k] for k in _NUMERIC_OPTIONS if k in spec}
    for key in ("integer", "missing"):
        if key in options and not isinstance(options[key], bool):
            raise _fail(name, f"{key!r} must be true or false, got {options[key]!r}")
    if "edges" in spec:
        _check_keys(name, spec, {"edges"} | _NUMERIC_OPTIONS)
        edges = spec["edges"]
        if not isinstance(edges, list | tuple) or len(edges) < 2:
            raise _fail(name, f"'edges' must be a list of at least two numbers, got {edges!r}")
        values = [_number(name, "edges", e) for e in edges]
        return Numeric(name, tuple(values), **options)
    _check_keys(name, spec, _RANGE_KEYS | _NUMERIC_OPTIONS)
    absent = sorted(_RANGE_KEYS - set(spec))
    if absent:
        raise _fail(name, f"a numeric range needs 'min', 'max' and 'bins'; missing {absent}")
    lo, hi = _number(name, "min", spec["min"]), _number(name, "max", spec["max"])
    bins = spec["bins"]
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise _fail(name, f"'bins' must be a positive integer, got {bins!r}")
    if not lo < hi:
        raise _fail(
            name, f"'min' must be below 'max', got min={spec['min']!r}, max={spec['max']!r}"
        )
    integer_ends = all(isinstance(spec[k], int) for k in ("min", "max"))
    integer_ends = integer_ends and options.get("decimals") in (None, 0)
    options.setdefault("integer", integer_ends)
    return Numeric.equal_width(name, lo, hi, bins, **options)


def _categorical(name: str, spec: Mapping[str, Any] | list[Any]) -> Any:
    if isinstance(spec, list):
        spec = {"values": spec}
    _check_keys(name, spec, {"values", "missing", "dtype", "other", "keep_missing", "ordered"})
    values = spec["values"]
    if not isinstance(values, list | tuple) or not values:
        raise _fail(name, f"'values' must be a non-empty list of categories, got {values!r}")
    if any(isinstance(v, dict) for v in values):
        raise _fail(name, "categories must be strings or numbers, not objects")
    values = tuple(_hashable(v) for v in values)
    return Categorical(
        name, values, spec.get("missing"), dtype=spec.get("dtype"), other=spec.get("other"),
        keep_missing=spec.get("keep_missing", False), ordered=spec.get("ordered", False),
    )  # fmt: skip


def attribute_from_codebook(name: str, spec: Any) -> Any:
    """One attribute of a codebook (the accepted forms: :func:`attributes_from_codebook`)."""
    if not isinstance(name, str) or not name:
        raise DomainError(f"codebook keys must be non-empty attribute names, got {name!r}")
    try:
        if isinstance(spec, list):
            return _categorical(name, spec)
        if not isinstance(spec, Mapping):
            raise _fail(name, f"expected {_FORMS}; got {spec!r}")
        if "type" in spec:
            return _attr_from_dict({"name": name, **spec})
        if "values" in spec:
            return _categorical(name, spec)
        if "edges" in spec or set(spec) & _RANGE_KEYS:
            return _numeric(name, spec)
        raise _fail(name, f"expected {_FORMS}; got {dict(spec)!r}")
    except DomainError as exc:
        if str(exc).startswith("codebook["):
            raise
        raise _fail(name, str(exc)) from None


def attributes_from_codebook(codebook: Mapping[str, Any]) -> tuple[Any, ...]:
    """The attributes of a codebook, in its key order: ``Domain.from_codebook({...})`` for
    the common case.

    Each key is an attribute name (in column order); each value is one of

    * a list of categories: ``"sex": ["F", "M"]`` (categorical, one bit per category);
    * ``{"values": [...], "missing": "unknown"}``: categorical; a missing value (NaN)
      encodes to the category ``missing`` (which must be one of ``values``); with
      ``"other": "<other>"`` (one of ``values``) every value not listed encodes to it;
    * a numeric range: ``"age": {"min": 0, "max": 100, "bins": 20}``: ``bins`` equal-width
      bins over ``[min, max]``; optional ``"integer"`` (default: both ends are integers, so
      records decode to integers), ``"missing": true`` (one more bit for missing values) and
      ``"out_of_range": "clip"`` (values outside the range go to the end bins instead of
      being an error);
    * explicit bin edges: ``"income": {"edges": [0, 10000, 50000, 1e6]}`` (same options);
    * any attribute of the full JSON format, with its ``"type"``: ``{"type": "binary",
      "values": ["no", "yes"]}`` (one free bit).

    Errors name the key and what was expected. A codebook is public knowledge written
    without looking at the data: nothing here reads a record.
    """
    if not isinstance(codebook, Mapping) or not codebook:
        raise DomainError(
            f"a codebook must be a non-empty mapping of attribute name to spec, got {codebook!r}"
        )
    return tuple(attribute_from_codebook(name, spec) for name, spec in codebook.items())


def infer_domain(
    data: pd.DataFrame,
    *,
    numeric_bins: int = 10,
    max_categories: int = 64,
    columns: Iterable[str] | None = None,
) -> Domain:
    """Read a domain off the data itself. NOT PRIVATE: for exploration only.

    Categories and bin ranges read from the sensitive table reveal it (a rare category
    proves someone has it). The returned domain has ``non_private=True``; a
    :class:`~dpquery.errors.NonPrivateWarning` is issued, and releases built on it say so.
    Columns with at most ``max_categories`` distinct values become categorical; other
    numeric columns get ``numeric_bins`` equal-width bins over their observed range.
    """
    warnings.warn(
        "infer_domain reads categories and ranges from the private data: the domain is NOT "
        "private. Use a public domain (codebook, data dictionary) for a real release.",
        NonPrivateWarning,
        stacklevel=2,
    )
    attrs: list[Attribute] = []
    for name in columns if columns is not None else data.columns:
        col = data[name]
        has_na = bool(col.isna().any())
        distinct = col.dropna().unique()
        if len(distinct) <= max_categories or not pd.api.types.is_numeric_dtype(col):
            if len(distinct) > max_categories:
                raise DomainError(
                    f"column {name!r} has {len(distinct)} distinct non-numeric values (more "
                    f"than max_categories={max_categories}); give a public domain instead"
                )
            values = sorted(distinct.tolist(), key=lambda v: (str(type(v)), v))
            if has_na:
                values.append(MISSING_LABEL)
            attrs.append(Categorical(str(name), tuple(values), MISSING_LABEL if has_na else None))
        else:
            lo, hi = float(col.min()), float(col.max())
            attrs.append(
                Numeric.equal_width(
                    str(name),
                    lo,
                    hi if hi > lo else lo + 1,
                    numeric_bins,
                    missing=has_na,
                    integer=pd.api.types.is_integer_dtype(col),
                )
            )
    return Domain(
        tuple(attrs), non_private=True, note="inferred from the private data by infer_domain"
    )
