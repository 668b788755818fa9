"""Public domains: validation, bit layout, JSON (full and private-pgm), infer_domain."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from data_strategies import domains
from dpquery.data import Binary, Categorical, Domain, Numeric, encode, infer_domain
from dpquery.data.domain import MISSING_LABEL
from dpquery.errors import DomainError, NonPrivateWarning


# -- attribute validation -----------------------------------------------------------------
def test_categorical_rejects_duplicate_values():
    with pytest.raises(DomainError, match=r"'color' lists the value 'red' twice"):
        Categorical("color", ("red", "blue", "red"))


def test_categorical_rejects_empty_and_bad_missing_and_bad_recode():
    with pytest.raises(DomainError, match="no values"):
        Categorical("c", ())
    with pytest.raises(DomainError, match="missing category 'zz'"):
        Categorical("c", ("a", "b"), missing="zz")
    with pytest.raises(DomainError, match=r"recode targets \['q'\]"):
        Categorical("c", ("a", "b"), recode={"x": "q"})


@pytest.mark.parametrize(
    "edges", [(0, 1, 1), (0, 2, 1), (3,), (), (0, float("inf")), (float("nan"), 1)]
)
def test_numeric_rejects_bad_edges(edges):
    with pytest.raises(DomainError, match="'x'"):
        Numeric("x", edges)


def test_numeric_rejects_bad_out_of_range_option():
    with pytest.raises(DomainError, match="out_of_range must be 'clip' or 'error'"):
        Numeric("x", (0, 1), out_of_range="wrap")  # type: ignore[arg-type]


def test_binary_needs_two_distinct_values():
    with pytest.raises(DomainError, match="two distinct values"):
        Binary("b", ("y", "y"))
    with pytest.raises(DomainError, match="two distinct values"):
        Binary("b", ("y",))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", None, 3])
def test_attribute_names_must_be_nonempty_strings(name):
    with pytest.raises(DomainError, match="non-empty string"):
        Categorical(name, ("a",))


def test_domain_rejects_duplicate_names_and_emptiness():
    with pytest.raises(DomainError, match="'a' twice"):
        Domain((Categorical("a", (1,)), Binary("a")))
    with pytest.raises(DomainError, match="at least one attribute"):
        Domain(())
    with pytest.raises(DomainError, match="not an attribute"):
        Domain(("a",))  # type: ignore[arg-type]


def test_equal_width_edges_and_labels():
    a = Numeric.equal_width("age", 0, 100, 4, integer=True)
    assert a.edges == (0.0, 25.0, 50.0, 75.0, 100.0)
    assert a.labels == ("[0, 25)", "[25, 50)", "[50, 75)", "[75, 100]")
    with pytest.raises(DomainError, match="bins must be >= 1"):
        Numeric.equal_width("age", 0, 1, 0)
    m = Numeric("inc", (0, 0.5, 1), missing=True)
    assert m.size == 3 and m.labels == ("[0, 0.5)", "[0.5, 1]", MISSING_LABEL)


# -- layout -------------------------------------------------------------------------------
def _small_domain() -> Domain:
    return Domain(
        (
            Categorical("color", ("red", "green", "blue")),
            Binary("smoker", ("no", "yes")),
            Numeric("age", (0, 18, 65, 120), integer=True),
            Binary("flag"),
            Categorical("city", ("A", "B"), missing="B"),
        )
    )


def test_layout_offsets_groups_and_lookups():
    dom = _small_domain()
    assert dom.d == 3 + 1 + 3 + 1 + 2
    assert dom.offsets.tolist() == [0, 3, 4, 7, 8, 10]
    assert dom.onehot_groups.tolist() == [[0, 3], [4, 7], [8, 10]]
    assert list(dom.bits_of("age")) == [4, 5, 6]
    assert dom.bit("color", "blue") == 2
    assert dom.bit("smoker", "yes") == 3
    assert dom.bit("age", 17) == 4
    assert dom.bit("age", 18) == 5
    assert dom.bit("age", 120) == 6  # the last bin holds its upper edge
    assert dom.bit("age", "[18, 65)") == 5
    assert dom.bit("flag", 1) == 7
    assert dom.value_of_bit(5) == ("age", "[18, 65)")
    assert dom.value_of_bit(9) == ("city", "B")
    assert dom.attribute_of_bit.tolist() == [0, 0, 0, 1, 2, 2, 2, 3, 4, 4]
    assert "age" in dom and "nope" not in dom and len(dom) == 5


def test_lookup_errors_name_the_value():
    dom = _small_domain()
    with pytest.raises(DomainError, match="unknown attribute 'nope'"):
        dom.bits_of("nope")
    with pytest.raises(DomainError, match="'age' has no bin for 121"):
        dom.bit("age", 121)
    with pytest.raises(DomainError, match="'color' has no bit for value 'pink'"):
        dom.bit("color", "pink")
    with pytest.raises(DomainError, match="bit 10 is outside"):
        dom.value_of_bit(10)
    with pytest.raises(DomainError, match="bit -1 is outside"):
        dom.value_of_bit(-1)


@settings(max_examples=60, deadline=None)
@given(domains())
def test_every_bit_round_trips_through_value_lookup(dom):
    onehot = np.zeros(dom.d, bool)
    for start, stop in dom.onehot_groups:
        assert not onehot[start:stop].any()  # groups do not overlap
        onehot[start:stop] = True
    for j in range(dom.d):
        name, value = dom.value_of_bit(j)
        assert dom.bit(name, value) == j
        assert j in dom.bits_of(name)
        assert onehot[j] == (not isinstance(dom[name], Binary))


# -- JSON ---------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(domains())
def test_domain_json_round_trip(dom):
    text = json.dumps(dom.to_dict())
    back = Domain.from_dict(json.loads(text))
    assert back == dom
    assert back.d == dom.d
    assert back.onehot_groups.tolist() == dom.onehot_groups.tolist()
    # ints and strings stay apart through JSON
    for a, b in zip(dom.attributes, back.attributes, strict=True):
        if not isinstance(a, Numeric):
            assert [type(v) for v in a.values] == [type(v) for v in b.values]


def test_domain_save_load_file(tmp_path):
    dom = _small_domain()
    path = tmp_path / "domain.json"
    dom.save(path)
    assert Domain.load(path) == dom
    assert [p.name for p in tmp_path.iterdir()] == ["domain.json"]  # no temp files left


def test_pgm_format():
    dom = Domain.from_dict({"age": 3, "sex": 2, "zip": 1})
    assert dom.names == ("age", "sex", "zip")
    assert dom.d == 6
    assert all(isinstance(a, Categorical) for a in dom.attributes)
    assert dom["age"].values == (0, 1, 2)
    assert dom.onehot_groups.tolist() == [[0, 3], [3, 5], [5, 6]]
    table = pd.DataFrame({"age": [2, 0], "sex": [1, 1], "zip": [0, 0]})
    assert encode(table, dom).to_dense().tolist() == [[0, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1]]


def test_pgm_format_from_file(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"a": 4, "b": 2}')
    assert Domain.load(path).sizes == (4, 2)


@pytest.mark.parametrize("size", [0, -1, "3", 2.5, True, None, [2]])
def test_pgm_format_rejects_bad_sizes(size):
    with pytest.raises(DomainError, match="size of 'a' must be a positive integer"):
        Domain.from_dict({"a": size})


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"attributes": [{"name": "a", "type": "ordinal", "values": [1]}]}, "type must be"),
        (
            {"attributes": [{"name": "a", "type": "categorical", "values": [1], "size": 3}]},
            r"unknown keys \['size'\]",
        ),
        (
            {"attributes": [{"name": "a", "type": "binary", "values": [0, 1], "edges": [1]}]},
            r"unknown keys \['edges'\]",
        ),
        (
            {"attributes": [{"name": "a", "type": "categorical", "values": ["x", "y", "x"]}]},
            "lists the value 'x' twice",
        ),
        (
            {"attributes": [{"name": "a", "type": "numeric", "edges": [0, 5, 5, 10]}]},
            "edges must increase",
        ),
        (
            {"attributes": [{"name": "a", "type": "numeric", "edges": [0, 5, 3]}]},
            "edges must increase",
        ),
        ({"attributes": [{"name": "a", "type": "numeric"}]}, "missing the key 'edges'"),
        ({"attributes": [{"name": "a", "type": "categorical"}]}, "missing the key 'values'"),
        ({"attributes": [{"type": "binary"}]}, "'name' and 'type'"),
        ({"attributes": ["a"]}, "'name' and 'type'"),
        ({"attributes": {"a": 1}}, "must be a list"),
        ({"attributes": []}, "at least one attribute"),
        (
            {"attributes": [{"name": "a", "type": "binary"}, {"name": "a", "type": "binary"}]},
            "'a' twice",
        ),
        ({"attributes": [{"name": "a", "type": "categorical", "values": "xyz"}]}, "list"),
        ({"attributes": [{"name": "a", "type": "numeric", "edges": "15"}]}, "list"),
        ({"attributes": [{"name": "a", "type": "categorical", "values": 3}]}, "'a'"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_domain_json(obj, message):
    with pytest.raises(DomainError, match=message):
        Domain.from_dict(obj)


def test_bad_domain_files(tmp_path):
    with pytest.raises(DomainError, match="does not exist"):
        Domain.load(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DomainError, match="not valid JSON"):
        Domain.load(bad)


# -- infer_domain -------------------------------------------------------------------------
def _explore_table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "blue"], 200),
            "code": rng.integers(0, 5, 200),
            "income": rng.normal(5e4, 1e4, 200),
            "age": rng.integers(0, 100, 200),
            "city": [None if i % 7 == 0 else "A" for i in range(200)],
        }
    )


def test_infer_domain_warns_and_marks_non_private():
    table = _explore_table()
    with pytest.warns(NonPrivateWarning, match="NOT private"):
        dom = infer_domain(table, numeric_bins=4, max_categories=10)
    assert dom.non_private
    assert "NON-PRIVATE" in dom.describe()
    assert Domain.from_dict(json.loads(json.dumps(dom.to_dict()))).non_private
    assert dom["color"] == Categorical("color", ("blue", "red"))
    assert dom["code"].values == (0, 1, 2, 3, 4)
    income = dom["income"]
    assert isinstance(income, Numeric) and income.n_bins == 4 and not income.integer
    assert income.edges[0] == table["income"].min() and income.edges[-1] == table["income"].max()
    age = dom["age"]
    assert isinstance(age, Numeric) and age.integer
    city = dom["city"]
    assert isinstance(city, Categorical)
    assert city.values == ("A", MISSING_LABEL) and city.missing == MISSING_LABEL
    data = encode(table, dom)  # the inferred domain covers its own table
    assert data.n == 200
    assert data.column(dom.bit("city", MISSING_LABEL)).sum() == (table["city"].isna()).sum()


def test_infer_domain_refuses_many_text_categories():
    table = pd.DataFrame({"id": [f"user{i}" for i in range(20)]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        with pytest.raises(DomainError, match="'id' has 20 distinct non-numeric values"):
            infer_domain(table, max_categories=10)


def test_public_domains_are_not_marked():
    assert not _small_domain().non_private
    assert "NON-PRIVATE" not in _small_domain().describe()
