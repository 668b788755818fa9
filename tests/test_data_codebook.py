"""``Domain.from_codebook``: the accepted forms, their domains, and errors that name the key."""

from __future__ import annotations

import pandas as pd
import pytest

from dpquery.data import Binary, Categorical, Domain, Numeric, Records, decode, encode
from dpquery.errors import DomainError

CODEBOOK = {
    "sex": ["F", "M"],
    "age": {"min": 0, "max": 100, "bins": 20},
    "income": {"edges": [0, 10_000, 50_000, 1e6], "out_of_range": "clip"},
    "state": {"values": ["CA", "NY", "other"], "missing": "other"},
    "smoker": {"type": "binary", "values": ["no", "yes"]},
    "score": {"min": 0.0, "max": 1.0, "bins": 4, "missing": True},
}


def test_each_form_builds_the_attribute_it_names():
    domain = Domain.from_codebook(CODEBOOK)
    assert domain.names == tuple(CODEBOOK)
    assert domain["sex"] == Categorical("sex", ("F", "M"))
    assert domain["age"] == Numeric.equal_width("age", 0, 100, 20, integer=True)
    income = domain["income"]
    assert isinstance(income, Numeric)
    assert income.edges == (0.0, 10_000.0, 50_000.0, 1e6) and income.out_of_range == "clip"
    assert not income.integer  # integer decoding only for an integer min/max range
    assert domain["state"] == Categorical("state", ("CA", "NY", "other"), "other")
    assert domain["smoker"] == Binary("smoker", ("no", "yes"))
    score = domain["score"]
    assert isinstance(score, Numeric) and score.missing and not score.integer
    assert score.edges == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert domain.d == 2 + 20 + 3 + 3 + 1 + 5
    assert not domain.non_private
    assert Domain.from_dict(domain.to_dict()) == domain  # saves as the full format


def test_a_codebook_domain_encodes_and_decodes_a_table():
    table = pd.DataFrame({
        "sex": ["F", "M"], "age": [3, 99], "income": [5_000, 2e6], "state": ["NY", None],
        "smoker": ["no", "yes"], "score": [0.1, None],
    })  # fmt: skip
    domain = Domain.from_codebook(CODEBOOK)
    data = encode(table, domain)
    assert data.n == 2 and data.d == domain.d
    back, _ = decode(Records(data.to_dense(), None, domain), seed=0)
    assert back["sex"].tolist() == ["F", "M"]
    assert back["state"].iloc[0] == "NY" and pd.isna(back["state"].iloc[1])
    assert back["age"].between(0, 100).all()
    assert pd.api.types.is_integer_dtype(back["age"])


@pytest.mark.parametrize(
    ("codebook", "fragments"),
    [
        ({}, ["non-empty mapping"]),
        (["sex"], ["non-empty mapping"]),
        ({"": ["a"]}, ["non-empty attribute names"]),
        ({"age": 42}, ["codebook['age']", "expected a list of categories", "got 42"]),
        ({"age": {"min": 0, "max": 100}}, ["codebook['age']", "missing ['bins']"]),
        ({"age": {"min": 0, "max": 100, "bins": 0}}, ["codebook['age']", "positive integer"]),
        ({"age": {"min": 0, "max": 100, "bins": 2.5}}, ["'bins' must be a positive integer"]),
        ({"age": {"min": 10, "max": 10, "bins": 2}}, ["'min' must be below 'max'"]),
        ({"age": {"min": "0", "max": 100, "bins": 2}}, ["'min' must be a number", "'0'"]),
        ({"age": {"min": 0, "max": 9, "bins": 3, "bin": 3}}, ["unknown key(s) ['bin']"]),
        ({"age": {"min": 0, "max": 9, "bins": 3, "integer": "yes"}}, ["true or false"]),
        ({"inc": {"edges": [5]}}, ["codebook['inc']", "at least two numbers"]),
        ({"inc": {"edges": [5, 1]}}, ["codebook['inc']", "edges must increase"]),
        ({"inc": {"edges": [0, "x"]}}, ["codebook['inc']", "'edges' must be a number"]),
        ({"sex": []}, ["codebook['sex']", "non-empty list of categories"]),
        ({"sex": ["F", "F"]}, ["codebook['sex']", "lists the value 'F' twice"]),
        ({"sex": {"values": ["F"], "missing": "?"}}, ["codebook['sex']", "'?' is not one of"]),
        ({"sex": {"values": ["F"], "order": 1}}, ["codebook['sex']", "unknown key(s) ['order']"]),
        ({"sex": [{"a": 1}]}, ["codebook['sex']", "strings or numbers"]),
        ({"s": {"type": "binary", "values": [1]}}, ["codebook['s']", "two distinct values"]),
        ({"s": {"type": "bit"}}, ["codebook['s']", "categorical, numeric or binary"]),
        ({"s": {"colour": "red"}}, ["codebook['s']", "expected a list of categories"]),
    ],
)
def test_errors_name_the_key_and_what_was_expected(codebook, fragments):
    with pytest.raises(DomainError) as err:
        Domain.from_codebook(codebook)
    for fragment in fragments:
        assert fragment in str(err.value), (fragment, str(err.value))
