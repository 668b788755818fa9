"""Workload value type, save/load, content hash, generators."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.errors import DPQueryError
from dpquery.queries import (
    Workload,
    all_kway_marginals,
    concat,
    describe_query,
    fem_marginals,
    marginal_cells,
    random_disjunctions,
    random_marginal_cells,
    random_marginal_queries,
    random_parities,
)
from dpquery.queries.generators import n_values


@pytest.fixture
def domain() -> Domain:
    return Domain(
        (
            Numeric("age", (0, 20, 40, 60, 100), integer=True),
            Categorical("sex", ("F", "M")),
            Binary("smoker", ("no", "yes")),
            Categorical("city", ("a", "b", "c", "d", "e")),
            Binary("owner"),
        )
    )


def test_validation_names_bad_values() -> None:
    with pytest.raises(DPQueryError, match="literal bit 9 is outside the 5 bits"):
        Workload.from_lists("conjunction", 5, [[(1, True), (9, False)]])
    with pytest.raises(DPQueryError, match="query 1 uses bit 2 twice"):
        Workload.from_lists("conjunction", 5, [[(1, True)], [(2, True), (2, False)]])
    with pytest.raises(DPQueryError, match="every literal must be positive"):
        Workload.from_lists("parity", 5, [[(1, False)]])
    with pytest.raises(DPQueryError, match="kind must be one of"):
        Workload.from_lists("xor", 5, [[(1, True)]])  # type: ignore[arg-type]


def test_save_load_roundtrip_and_hash(tmp_path, domain: Domain) -> None:
    w = random_marginal_cells(domain, 2, 3, n=1000, seed=4)
    path = tmp_path / "w.npz"
    w.save(path)
    back = Workload.load(path)
    assert back.content_hash == w.content_hash
    for a in ("offsets", "bits", "positive", "marginals"):
        np.testing.assert_array_equal(getattr(back, a), getattr(w, a))
    assert back.domain == domain and back.kind == "conjunction"
    with pytest.raises(DPQueryError, match="already exists"):
        w.save(path, overwrite=False)
    # the hash depends on the queries only, and changes with any literal
    other = Workload(w.kind, w.d, w.offsets, w.bits, ~w.positive, w.marginals, w.domain)
    assert other.content_hash != w.content_hash
    assert Workload(w.kind, w.d, w.offsets, w.bits, w.positive, w.marginals).content_hash == (
        w.content_hash
    )


def test_load_rejects_other_files(tmp_path) -> None:
    bad = tmp_path / "bad.npz"
    np.savez(bad, meta=np.array(json.dumps({"format": "other", "version": 1})))
    with pytest.raises(DPQueryError, match="format 'other'"):
        Workload.load(bad)
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(DPQueryError, match="not a dpquery workload file"):
        Workload.load(tmp_path / "junk.npz")


def test_subset_and_concat(domain: Domain) -> None:
    w = random_marginal_queries(domain, 3, 50, seed=1)
    idx = np.array([4, 0, 49, 4])
    sub = w.subset(idx)
    assert [sub.literals(i) for i in range(4)] == [w.literals(int(i)) for i in idx]
    joined = concat([w, sub])
    assert len(joined) == 54 and joined.literals(51) == w.literals(0)


def test_random_marginal_queries_are_sensible_and_seeded(domain: Domain) -> None:
    w = random_marginal_queries(domain, 3, 20_000, seed=7)
    again = random_marginal_queries(domain, 3, 20_000, seed=7)
    assert w.content_hash == again.content_hash
    assert w.content_hash != random_marginal_queries(domain, 3, 20_000, seed=8).content_hash
    attrs = domain.attribute_of_bit[w.bits].reshape(-1, 3)
    assert (np.diff(attrs, axis=1) > 0).all()  # k distinct attributes, in column order
    # one-hot attributes get positive literals; binary ones are positive for values[1] only
    binary = np.isin(attrs, [2, 4])
    assert w.positive.reshape(-1, 3)[~binary].all()
    # attribute sets are uniform: each of the C(5,3)=10 sets about 1/10 of the queries
    keys, counts = np.unique(attrs, axis=0, return_counts=True)
    assert len(keys) == 10
    assert np.abs(counts / 20_000 - 0.1).max() < 0.015  # > 6 standard deviations
    # values uniform within an attribute: city (5 values) chosen about evenly
    city = w.bits[domain.attribute_of_bit[w.bits] == 3] - domain.offsets[3]
    share = np.bincount(city, minlength=5) / city.size
    assert np.abs(share - 0.2).max() < 0.02


def test_distinct_rows_when_k_close_to_attribute_count(domain: Domain) -> None:
    w = random_marginal_queries(domain, 5, 1000, seed=0)
    attrs = domain.attribute_of_bit[w.bits].reshape(-1, 5)
    assert (attrs == np.arange(5)).all()


def test_marginal_cells_cover_every_cell(domain: Domain) -> None:
    w = marginal_cells(domain, [("city", "age"), ("smoker",)])
    assert w.marginals is not None and list(w.marginals) == [0, 20, 22]
    # cells of (age, city): row-major in column order (age first), all distinct
    cells = {tuple(w.literals(i)) for i in range(20)}
    assert len(cells) == 20
    assert w.literals(1) == [(0, True), (8, True)]  # age bin 0, city 'b' (bits 7..11)
    assert w.literals(20) == [(6, False)] and w.literals(21) == [(6, True)]  # smoker


def test_fem_protocol_matches_its_definition(domain: Domain) -> None:
    """All k-combinations in column order with at most n cells, then default_rng(seed).choice."""
    n = 30
    sizes = n_values(domain)
    combos = [c for c in itertools.combinations(range(5), 2) if math.prod(sizes[list(c)]) <= n]
    pick = np.random.default_rng(3).choice(len(combos), 4, replace=False)
    expect = [tuple(domain.names[i] for i in combos[j]) for j in pick]
    assert fem_marginals(domain, 2, 4, n, seed=3) == expect
    # fewer eligible marginals than asked: all of them, in column order
    assert len(fem_marginals(domain, 2, 100, n, seed=3)) == len(combos)
    assert all(math.prod(sizes[[domain.position(a) for a in m]]) <= n
               for m in fem_marginals(domain, 3, 100, n, seed=0))  # fmt: skip


def test_all_kway_marginals(domain: Domain) -> None:
    w = all_kway_marginals(domain, 2, ["age", "sex", "smoker"])
    assert len(w) == 4 * 2 + 4 * 2 + 2 * 2
    with pytest.raises(DPQueryError, match="max_queries=5"):
        all_kway_marginals(domain, 2, max_queries=5)


def test_parities_and_disjunctions() -> None:
    p = random_parities(50, 3, 1000, seed=1)
    q = random_disjunctions(50, 4, 1000, seed=1)
    assert p.kind == "parity" and q.kind == "disjunction"
    for w, k in ((p, 3), (q, 4)):
        b = w.bits.reshape(-1, k)
        assert (np.diff(b, axis=1) > 0).all() and w.positive.all()
    assert p.value_range == (-1.0, 1.0)
    np.testing.assert_array_equal(p.negate(np.array([0.5, -1.0])), [-0.5, 1.0])
    np.testing.assert_array_equal(q.negate(np.array([0.25])), [0.75])


def test_describe_query_in_user_terms(domain: Domain) -> None:
    w = Workload.from_lists("conjunction", domain.d, [[(1, True), (6, False), (7, True)]], domain)
    assert describe_query(w, 0) == {
        "kind": "conjunction",
        "negated": False,
        "literals": [["age", "[20, 40)", True], ["smoker", "yes", False], ["city", "a", True]],
    }
    assert describe_query(w, 0, negated=True)["negated"] is True
