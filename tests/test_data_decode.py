"""Records and decoding: round trips, the one-hot repair rule, weights, sampling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_strategies import domains
from dpquery.data import (
    Binary,
    Categorical,
    DecodeReport,
    Domain,
    Numeric,
    Records,
    decode,
    encode,
    pack_columns,
    sample_records,
)
from dpquery.data.schema import edge_decimals
from dpquery.errors import DPQueryError


# -- a table over a domain ----------------------------------------------------------------
@st.composite
def tables(draw, dom: Domain, max_rows: int = 25) -> tuple[pd.DataFrame, dict[str, list]]:
    """A table over ``dom`` and, per column, the value each row should decode to
    (``None`` for missing; for numeric columns the bin index, or -1 for missing)."""
    n = draw(st.integers(1, max_rows))
    columns: dict[str, list] = {}
    expected: dict[str, list] = {}
    for attr in dom.attributes:
        raw, exp = [], []
        for _ in range(n):
            if isinstance(attr, Categorical):
                choices = list(attr.values) + list(attr.recode)
                if attr.missing is not None:
                    choices.append(None)
                v = draw(st.sampled_from(choices))
                target = attr.recode.get(v, v) if v is not None else attr.missing
                raw.append(v)
                exp.append(None if target == attr.missing and attr.missing is not None else target)
            elif isinstance(attr, Binary):
                v = draw(st.sampled_from(attr.values))
                raw.append(v)
                exp.append(v)
            else:
                lo, hi = attr.edges[0], attr.edges[-1]
                span = hi - lo
                if attr.out_of_range == "clip":
                    lo, hi = lo - span, hi + span
                options = [st.floats(lo, hi), st.sampled_from(attr.edges)]
                if attr.missing:
                    options.append(st.none())
                v = draw(st.one_of(*options))
                raw.append(v)
                if v is None:
                    exp.append(-1)
                else:  # bin i is [e_i, e_{i+1}); the last bin holds its upper edge
                    i = sum(v >= e for e in attr.edges[1:-1])
                    exp.append(i)
        columns[attr.name] = raw
        expected[attr.name] = exp
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()}), expected


def _is_missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))


def _in_bin(attr: Numeric, i: int, v) -> bool:
    lo, hi = attr.edges[i], attr.edges[i + 1]
    last = i == attr.n_bins - 1
    return lo <= v <= hi if last else lo <= v < hi


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_encode_decode_round_trip(data):
    dom = data.draw(domains(integer_edges=data.draw(st.booleans())))
    table, expected = data.draw(tables(dom))
    encoded = encode(table, dom)
    records = Records(encoded.to_dense(), domain=dom)
    labels, report_l = decode(records, numeric="label")
    seed = data.draw(st.integers(0, 2**32))
    uniform, report_u = decode(records, numeric="uniform", seed=seed)
    assert report_l.total == report_u.total == 0  # encoded rows need no repair
    assert set(report_u.repairs) == {a.name for a in dom.attributes if not isinstance(a, Binary)}
    assert list(labels.columns) == list(dom.names) == list(uniform.columns)  # no weight column
    for attr in dom.attributes:
        exp = expected[attr.name]
        got_l, got_u = labels[attr.name].tolist(), uniform[attr.name].tolist()
        if isinstance(attr, Numeric):
            for i, gl, gu in zip(exp, got_l, got_u, strict=True):
                if i == -1:
                    assert _is_missing(gl) and _is_missing(gu)
                    continue
                assert gl == attr.labels[i]
                assert _in_bin(attr, i, gu), (attr, i, gu)
                if attr.integer:
                    assert float(gu).is_integer()
        else:  # categorical and binary values come back exactly (missing as missing)
            for e, g in zip(exp, got_l, strict=True):
                assert (_is_missing(g) and e is None) or (not _is_missing(g) and g == e)
            assert got_l == got_u or all(
                (_is_missing(a) and _is_missing(b)) or a == b
                for a, b in zip(got_l, got_u, strict=True)
            )
    # decoded values fall in the right bins: encoding them again gives the same bits
    assert np.array_equal(encode(uniform, dom).words, encoded.words)
    again, _ = decode(records, numeric="uniform", seed=seed)
    pd.testing.assert_frame_equal(again, uniform)


def test_uniform_values_spread_over_the_bin():
    dom = Domain((Numeric("x", (0, 0.5, 1)), Numeric("k", (0, 5, 10), integer=True)))
    records = Records(np.tile([[0, 1, 1, 0]], (4400, 1)), domain=dom)
    table, _ = decode(records, seed=1)
    x = table["x"].to_numpy()
    # Edges in 0.5 steps: one decimal, so the closed last bin [0.5, 1] holds the 6 values
    # 0.5, 0.6, ..., 1.0, each with probability 1/6: 733 +- 25 (sd) of 4,400; a 6-sd band
    # fails with probability < 2e-8 per value.
    values, counts = np.unique(x, return_counts=True)
    assert values.tolist() == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert (np.abs(counts - 4400 / 6) < 6 * 25).all()
    k = table["k"].to_numpy()
    assert set(np.unique(k)) == {0, 1, 2, 3, 4}  # integers of [0, 5)


def test_values_without_a_short_decimal_grid_stay_continuous():
    dom = Domain((Numeric("x", (0, 1 / 3, 2 / 3)),))
    table, _ = decode(Records(np.tile([[0, 1]], (4000, 1)), domain=dom), seed=1)
    x = table["x"].to_numpy()
    assert ((x >= 1 / 3) & (x <= 2 / 3)).all()
    # Uniform on [1/3, 2/3]: each of 10 cells holds 400 +- 19 (sd); a 6-sd band fails with
    # probability < 2e-8 per cell.
    counts = np.histogram(x, bins=10, range=(1 / 3, 2 / 3))[0]
    assert (np.abs(counts - 400) < 6 * 19).all()


@pytest.mark.parametrize(
    ("edges", "decimals"),
    [((0, 10, 20), 0), ((0, 0.5, 1), 1), ((0.25, 0.5), 2), ((0, 1 / 3), None), ((0, 1e6), 0),
     ((0, 0.1, 0.2, 0.30000000000000004), 1), ((2.225073858507203e-309, 1.0), None)],
)  # fmt: skip
def test_edge_decimals(edges, decimals):
    assert edge_decimals(edges) == decimals


def test_a_tiny_lower_edge_keeps_decoded_values_in_their_bin():
    # Found by the round-trip property: rounding to "0 decimals" put values at 0, below the
    # bin's lower edge 2.2e-309.
    dom = Domain((Numeric("x", (2.225073858507203e-309, 1.0)),))
    table, _ = decode(Records(np.ones((50, 1), dtype=np.uint8), domain=dom), seed=0)
    x = table["x"].to_numpy()
    assert ((x >= 2.225073858507203e-309) & (x <= 1.0)).all()


def test_integer_last_bin_includes_upper_edge():
    dom = Domain((Numeric("k", (0, 2, 4), integer=True),))
    table, _ = decode(Records(np.tile([[0, 1]], (2000, 1)), domain=dom), seed=2)
    # {2, 3, 4}: each has probability 1/3; missing one of them in 2,000 draws: < 3 * (2/3)^2000
    assert set(table["k"].tolist()) == {2, 3, 4}


# -- the repair rule ----------------------------------------------------------------------
REPAIR_DOM = Domain(
    (
        Categorical("c", ("a", "b", "c", "d")),
        Binary("flag", ("no", "yes")),
        Numeric("x", (0, 1, 2, 3)),
    )
)


def test_several_bits_set_decodes_to_one_of_them():
    n = 4000
    rows = np.zeros((n, REPAIR_DOM.d), np.uint8)
    rows[:, [0, 2]] = 1  # c in {a, c}
    rows[:, 4] = 1  # flag
    rows[: n // 2, 5] = 1  # x: first half fine ...
    rows[n // 2 :, [5, 6, 7]] = 1  # ... second half broken, all three bins set
    table, report = decode(Records(rows, domain=REPAIR_DOM), numeric="label", seed=7)
    assert report.repairs == {"c": n, "x": n // 2}
    assert report.total == n + n // 2
    assert report.to_dict() == {"repairs": {"c": n, "x": n // 2}, "total_repairs": n + n // 2}
    c = table["c"].value_counts()
    assert set(c.index) == {"a", "c"}
    # Uniform between the two set bits: 2000 +- 32 (sd); 6 sd fails w.p. < 2e-9.
    assert abs(c["a"] - n / 2) < 6 * np.sqrt(n / 4)
    assert (table["flag"] == "yes").all()
    assert (table["x"][: n // 2] == "[0, 1)").all()
    x = table["x"][n // 2 :].value_counts()
    assert set(x.index) == {"[0, 1)", "[1, 2)", "[2, 3]"}


def test_no_bit_set_decodes_to_any_value():
    n = 4000
    rows = np.zeros((n, REPAIR_DOM.d), np.uint8)
    table, report = decode(Records(rows, domain=REPAIR_DOM), seed=8)
    assert report.repairs == {"c": n, "x": n}
    assert (table["flag"] == "no").all()
    counts = table["c"].value_counts()
    # Uniform over 4 values: 1000 +- 27 (sd); 6 sd fails w.p. < 2e-9 per value.
    assert set(counts.index) == {"a", "b", "c", "d"}
    assert (np.abs(counts.to_numpy() - n / 4) < 6 * np.sqrt(n * 0.25 * 0.75)).all()
    x = table["x"].to_numpy()
    assert ((x >= 0) & (x <= 3)).all()
    assert (np.histogram(x, bins=3, range=(0, 3))[0] > 1000).all()  # each bin ~1333


def test_repairs_are_seeded():
    rows = np.zeros((500, REPAIR_DOM.d), np.uint8)
    rows[::2, :4] = 1
    records = Records(rows, domain=REPAIR_DOM)
    a, ra = decode(records, seed=123)
    b, rb = decode(records, seed=123)
    c, _ = decode(records, seed=124)
    pd.testing.assert_frame_equal(a, b)
    assert ra == rb
    # 500 repairs of c, each a uniform pick of 4: equal under two seeds w.p. 4^-500.
    assert not a["c"].equals(c["c"])
    rng = np.random.default_rng(123)
    d, _ = decode(records, seed=rng)  # a Generator is used as it is
    pd.testing.assert_frame_equal(d, a)


def test_missing_category_decodes_to_missing():
    dom = Domain(
        (Categorical("city", ("A", "B", "?"), missing="?"), Numeric("v", (0, 1), missing=True))
    )
    rows = np.array([[0, 0, 1, 0, 1], [1, 0, 0, 1, 0]], np.uint8)
    table, report = decode(Records(rows, domain=dom), numeric="label")
    assert _is_missing(table["city"][0]) and table["city"][1] == "A"
    assert _is_missing(table["v"][0]) and table["v"][1] == "[0, 1]"
    table, _ = decode(Records(rows, domain=dom), numeric="uniform", seed=0)
    assert _is_missing(table["v"][0]) and 0 <= table["v"][1] <= 1
    assert report.total == 0


# -- weights ------------------------------------------------------------------------------
def test_weights_become_a_column_only_when_unequal():
    dom = Domain((Binary("b"),))
    table, _ = decode(Records(np.array([[0], [1]]), np.array([1.0, 3.0]), dom))
    assert table["weight"].tolist() == [0.25, 0.75]
    table, _ = decode(Records(np.array([[0], [1]]), np.array([2.0, 2.0]), dom))
    assert "weight" not in table


def test_decode_errors():
    rows = np.zeros((2, 3), np.uint8)
    with pytest.raises(DPQueryError, match="needs a domain"):
        decode(Records(rows))
    with pytest.raises(DPQueryError, match="records have 3 bits but the domain has 4"):
        decode(Records(rows), Domain.binary(4))
    with pytest.raises(DPQueryError, match="numeric must be 'uniform' or 'label'"):
        decode(Records(rows), Domain.binary(3), numeric="mean")  # type: ignore[arg-type]
    table, _ = decode(Records(rows), Domain.binary(3))  # a domain given explicitly
    assert list(table.columns) == ["x0", "x1", "x2"]


# -- Records ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [[[0, 2]], [[0, 256]], [[0.5, 1]], [[-1, 0]]])
def test_records_hold_only_zeros_and_ones(bad):
    with pytest.raises(DPQueryError, match="only 0 and 1"):
        Records(np.array(bad))


def test_records_validation_and_views():
    with pytest.raises(DPQueryError, match="2-D"):
        Records(np.zeros(3))
    with pytest.raises(DPQueryError, match=r"shape \(2,\)"):
        Records(np.zeros((2, 3)), np.ones(3))
    for w in ([1.0, -1.0], [0.0, 0.0], [np.nan, 1.0], [np.inf, 1.0]):
        with pytest.raises(DPQueryError, match="non-negative"):
            Records(np.zeros((2, 3)), np.array(w))
    with pytest.raises(DPQueryError, match="the domain 4"):
        Records(np.zeros((2, 3)), domain=Domain.binary(4))
    rows = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], dtype=bool)
    r = Records(rows, np.array([1.0, 1.0, 2.0]))
    assert (r.m, r.d) == (3, 3)
    assert r.rows.dtype == np.uint8
    assert r.probabilities.tolist() == [0.25, 0.25, 0.5]
    b = r.to_binary()
    assert np.array_equal(b.words, pack_columns(rows)) and b.n == 3
    dom = Domain((Categorical("c", (0, 1)), Binary("b")))
    onehot = rows[:2]  # the third row sets both bits of the group: refused as BinaryData
    assert Records(onehot, domain=dom).to_binary().onehot_groups.tolist() == [[0, 2]]
    with pytest.raises(DPQueryError, match="record 2"):
        Records(rows, domain=dom).to_binary()


def test_sample_records():
    rows = np.array([[0, 0], [0, 1], [1, 0]], np.uint8)
    r = Records(rows, np.array([0.0, 1.0, 0.0]))
    s = sample_records(r, 50, seed=1)
    assert s.m == 50 and (s.rows == [0, 1]).all() and np.allclose(s.weights, 1)
    r = Records(rows, np.array([1.0, 3.0, 0.0]))
    s = sample_records(r, 4000, seed=2)
    assert np.array_equal(s.rows, sample_records(r, 4000, seed=2).rows)
    share = (s.rows[:, 1] == 1).mean()
    # Binomial(4000, 0.75) / 4000 has sd 0.0068; 6 sd fails w.p. < 2e-9.
    assert abs(share - 0.75) < 6 * 0.0069
    assert not (s.rows[:, 0] == 1).any()  # the zero-weight record is never drawn
    with pytest.raises(DPQueryError, match="positive integer"):
        sample_records(r, 0)


def test_decode_report_defaults():
    assert DecodeReport().total == 0
