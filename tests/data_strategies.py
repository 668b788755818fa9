"""Hypothesis strategies for public domains (shared by the data tests)."""

from __future__ import annotations

import itertools
from decimal import Decimal

import numpy as np
from hypothesis import strategies as st

from dpquery.data import Binary, Categorical, Domain, Numeric

# -------------------------------------------------------------------------------------------
names = st.text(alphabet="abcdefghij_-0123456789", min_size=1, max_size=8)
# JSON keeps ints and strings apart, so categories mix both (never bools: True == 1).
category_values = st.one_of(
    st.integers(-1000, 1000), st.text(alphabet="xyzXYZ <>=.,?", min_size=0, max_size=5)
)


@st.composite
def categoricals(draw, name: str) -> Categorical:
    values = draw(st.lists(category_values, min_size=1, max_size=6, unique=True))
    missing = draw(st.sampled_from([None, *values]))
    recode: dict = {}
    if draw(st.booleans()):
        raws = draw(
            st.lists(st.text(alphabet="pq", min_size=6, max_size=7), max_size=3, unique=True)
        )
        recode = {r: draw(st.sampled_from(values)) for r in raws}
    return Categorical(name, tuple(values), missing, recode)


@st.composite
def numerics(draw, name: str, integer_edges: bool = False) -> Numeric:
    k = draw(st.integers(1, 6))
    if integer_edges:
        steps = draw(st.lists(st.integers(1, 20), min_size=k, max_size=k))
        lo = draw(st.integers(-50, 50))
    else:
        steps = draw(
            st.lists(
                st.floats(0.01, 1e3, allow_nan=False, allow_infinity=False),
                min_size=k,
                max_size=k,
            )
        )
        lo = draw(st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    edges = tuple(float(e) for e in np.cumsum([lo, *steps]))
    if any(b <= a for a, b in itertools.pairwise(edges)):  # float rounding
        edges = tuple(float(lo) + i for i in range(k + 1))
    return Numeric(
        name,
        edges,
        draw(st.sampled_from(["clip", "error"])),
        draw(st.booleans()),
        integer_edges,
    )


@st.composite
def binaries(draw, name: str) -> Binary:
    values = draw(st.lists(category_values, min_size=2, max_size=2, unique=True))
    return Binary(name, tuple(values))


@st.composite
def domains(draw, max_attrs: int = 5, integer_edges: bool = False) -> Domain:
    attr_names = draw(st.lists(names, min_size=1, max_size=max_attrs, unique=True))
    attrs = []
    for name in attr_names:
        kind = draw(st.sampled_from(["categorical", "numeric", "binary"]))
        if kind == "categorical":
            attrs.append(draw(categoricals(name)))
        elif kind == "numeric":
            attrs.append(draw(numerics(name, integer_edges)))
        else:
            attrs.append(draw(binaries(name)))
    return Domain(tuple(attrs), non_private=draw(st.booleans()), note=draw(st.text(max_size=10)))


@st.composite
def decimal_ranges(draw, exact_steps: bool = True) -> tuple[Decimal, Decimal, int]:
    """A codebook range ``(min, max, bins)`` written in decimals (up to 4 places, up to 12
    digits). ``exact_steps``: the width is a multiple of ``bins`` units of the last place, so
    every edge is a decimal of that many places; otherwise edges may be thirds."""
    k = draw(st.integers(0, 4))
    bins = draw(st.integers(1, 40))
    lo_units = draw(st.integers(-(10**7), 10**7))
    if exact_steps:
        width_units = bins * draw(st.integers(1, 10**5))
    else:
        width_units = draw(st.integers(1, 10**7))
    return Decimal(lo_units).scaleb(-k), Decimal(lo_units + width_units).scaleb(-k), bins
