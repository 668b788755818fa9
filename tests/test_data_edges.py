"""Bin edges are exact decimals: a value written as an edge (in a CSV, a codebook, a decoded
table) falls in the bin that edge opens, and every decoded value re-encodes to its own bin.

Equal-width edges used to be float steps: ``{"min": 0.0, "max": 5.2, "bins": 26}`` gave
0.6000000000000001, so the value 0.6 was encoded in [0.4, 0.6) and the decoded 0.6 of
[0.6000000000000001, 0.8) re-encoded one bin low.
"""

from __future__ import annotations

import io
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from data_strategies import decimal_ranges
from dpquery.data import Domain, Numeric
from dpquery.data.decode import decode_rows
from dpquery.data.encode import attribute_codes, read_table
from dpquery.data.records import Records


def codebook_number(x: Decimal) -> int | float:
    """The number a JSON codebook holds for ``x``: an int when it has no decimals."""
    return int(x) if x == x.to_integral_value() and x.as_tuple().exponent >= 0 else float(x)


def domain_of(lo: Decimal, hi: Decimal, bins: int, **options: object) -> Domain:
    spec = {"min": codebook_number(lo), "max": codebook_number(hi), "bins": bins, **options}
    return Domain.from_codebook({"x": spec})


def as_read(texts: list[str]) -> pd.Series:
    """``texts`` as a CSV column read back by pandas (how a data value reaches the encoder)."""
    return pd.read_csv(io.StringIO("x\n" + "\n".join(texts)))["x"]


def test_the_reported_carat_edges() -> None:
    domain = Domain.from_codebook({"carat": {"min": 0.0, "max": 5.2, "bins": 26}})
    carat = domain["carat"]
    assert isinstance(carat, Numeric)
    assert carat.edges[3] == 0.6 and carat.edges[6] == 1.2
    assert carat.edges == tuple(round(0.2 * i, 1) for i in range(27))
    assert domain.bit("carat", 0.6) == domain.bit("carat", "[0.6, 0.8)") == 3
    codes = attribute_codes(as_read(["0.6", "1.2", "0.59", "5.2"]), carat)
    assert codes.tolist() == [3, 6, 2, 25]


def test_equal_width_rate_edges() -> None:
    # 10 bins over [0, 1]: float steps (np.linspace) put 0.3, 0.6 and 0.7 one bin low
    rate = Numeric.equal_width("rate", 0, 1, 10)
    assert rate.edges == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    codes = attribute_codes(pd.Series([0.3, 0.6, 0.7, 1.0]), rate)
    assert codes.tolist() == [3, 6, 7, 9]


@settings(max_examples=200, deadline=None)
@given(decimal_ranges(exact_steps=True))
def test_every_edge_encodes_to_the_bin_it_opens(case) -> None:
    lo, hi, bins = case
    domain = domain_of(lo, hi, bins)
    attr = domain["x"]
    assert isinstance(attr, Numeric)
    step = (hi - lo) / bins
    texts = [f"{lo + i * step:f}" for i in range(bins + 1)]  # the edges, as written
    assert attr.edges == tuple(float(t) for t in texts)  # exact decimals
    expected = [*range(bins), bins - 1]  # the last edge closes the last bin
    assert attribute_codes(as_read(texts), attr).tolist() == expected
    assert [domain.bit("x", float(t)) for t in texts] == expected


@settings(max_examples=100, deadline=None)
@given(decimal_ranges(exact_steps=False))
def test_equal_width_edges_are_the_nearest_floats(case) -> None:
    lo, hi, bins = case
    attr = Numeric.equal_width("x", float(lo), float(hi), bins)
    exact = [Fraction(lo) + Fraction(hi - lo) * i / bins for i in range(bins + 1)]
    assert attr.edges == tuple(float(e) for e in exact)


@settings(max_examples=150, deadline=None)
@given(st.booleans().flatmap(decimal_ranges), st.integers(0, 2**32 - 1))
def test_every_decoded_value_reencodes_to_its_bin(case, seed) -> None:
    lo, hi, bins = case
    step = (hi - lo) / bins
    # integer decoding only where every bin holds an integer (a bin holding none decodes to
    # the integer nearest its middle, outside it: docs/data.md)
    integer = step >= 1 and step == step.to_integral_value() and lo == lo.to_integral_value()
    domain = domain_of(lo, hi, bins, integer=bool(integer))
    attr = domain["x"]
    assert isinstance(attr, Numeric)
    records = Records(np.eye(bins, dtype=np.uint8), None, domain)
    per_bin = 20
    index = np.repeat(np.arange(bins), per_bin)
    table, _ = decode_rows(records, index, domain, seed=seed)
    assert attribute_codes(table["x"], attr).tolist() == index.tolist()
    # and through a CSV file, the way a released table is read back
    buffer = io.StringIO()
    table.to_csv(buffer, index=False)
    back = pd.read_csv(io.StringIO(buffer.getvalue()))
    assert attribute_codes(back["x"], attr).tolist() == index.tolist()


def test_decoded_edges_reencode_through_read_table(tmp_path) -> None:
    domain = Domain.from_codebook({"carat": {"min": 0.0, "max": 5.2, "bins": 26}})
    records = Records(np.eye(26, dtype=np.uint8), None, domain)
    index = np.repeat(np.arange(26), 200)
    table, _ = decode_rows(records, index, domain, seed=0)
    assert (table["carat"] == 0.6).any()  # the bin's lower edge is drawn
    table.to_csv(tmp_path / "s.csv", index=False)
    back = read_table(tmp_path / "s.csv", domain)
    assert attribute_codes(back["carat"], domain["carat"]).tolist() == index.tolist()


def test_decoding_far_from_zero_stays_in_its_bin() -> None:
    # -450761.6 .. -450761.5 in 40 bins of 0.0025: an edge over the step is -4507615975
    # give or take 5e-7, which rounding to 6 decimals did not make whole; 3 of these 800
    # values landed in the next bin (found by the property test above)
    domain = Domain.from_codebook({"x": {"min": -450761.6, "max": -450761.5, "bins": 40}})
    index = np.repeat(np.arange(40), 20)
    table, _ = decode_rows(Records(np.eye(40, dtype=np.uint8), None, domain), index, seed=0)
    assert attribute_codes(table["x"], domain["x"]).tolist() == index.tolist()
    assert (table["x"] == -450761.6).any()  # on the grid of the edges' 4 decimals
