"""Integers on a coarser lattice (:func:`~dpquery.domain_learning.lattice_test`,
:func:`~dpquery.domain_learning.on_lattice`, ``Numeric.lattice``): the residue histograms on
neighbouring tables, the charge by hand, the rule's bars, seeded detection rates, the domain
file and the decoding; docs/learn.md, "Integers on a coarser lattice"."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpquery.data.decode import bin_supports, decode
from dpquery.data.domain import Domain, Numeric
from dpquery.data.records import Records
from dpquery.domain_learning import (
    LATTICE_MODULI,
    LATTICE_OFF_RATIO,
    LATTICE_OFF_SIGMAS,
    LATTICE_ON_SIGMAS,
    LATTICE_SHARE,
    SECOND_SHARE,
    WITHIN_SHARE,
    lattice_counts,
    lattice_edges,
    lattice_plan,
    lattice_sensitivity,
    learn_budget,
    learn_domain,
    on_lattice,
    residue_class,
)
from dpquery.errors import DomainError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

SQRT2 = math.sqrt(2.0)


def test_lattice_counts_by_hand():
    """mod 4 then mod 5; a number that is not an integer in no cell; -3 is 1 mod 4, 2 mod 5."""
    x = np.array([1932.0, 1936.0, 1933.0, 2.5, 10.0, -3.0])
    #          mod 4: 0, 0, 1, -, 2, 1      mod 5: 2, 1, 3, -, 0, 2
    assert lattice_counts(x).tolist() == [2, 2, 1, 0, 1, 1, 2, 1, 0]
    assert lattice_counts(np.zeros(0)).tolist() == [0] * sum(LATTICE_MODULI)


def test_lattice_sensitivity_by_hand():
    """One record in one cell of each of the two histograms: sqrt(2) under add/remove (each
    histogram L2 1), 2 under replace-one (each sqrt(2))."""
    assert LATTICE_MODULI == (4, 5)
    assert lattice_sensitivity(1.0) == pytest.approx(SQRT2)
    assert lattice_sensitivity(SQRT2) == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(3))
def test_lattice_counts_on_neighbours(seed: int):
    """200 random neighbours a seed: adding or removing a record moves the cells by L2 at most
    sqrt(2), replacing one by at most 2; both bounds reached (an integer whose residues both
    change), and a number that is not an integer moves at most one histogram."""
    rng = np.random.default_rng(seed)
    top = {ADD_REMOVE: 0.0, REPLACE_ONE: 0.0}
    for _ in range(200):
        x = rng.integers(1900, 2020, 50).astype(np.float64)
        x[rng.random(50) < 0.1] += 0.5
        base = lattice_counts(x)
        i = int(rng.integers(50))
        removed = lattice_counts(np.delete(x, i))
        other = x.copy()
        other[i] = float(rng.integers(1900, 2020)) + (0.5 if rng.random() < 0.1 else 0.0)
        replaced = lattice_counts(other)
        for relation, d in ((ADD_REMOVE, removed), (REPLACE_ONE, replaced)):
            l2 = float(np.linalg.norm(base - d))
            assert l2 <= lattice_sensitivity(1.0 if relation == ADD_REMOVE else SQRT2) + 1e-12
            top[relation] = max(top[relation], l2)
    assert top[ADD_REMOVE] == pytest.approx(SQRT2)
    assert top[REPLACE_ONE] == pytest.approx(2.0)


def test_residue_class_bars_by_hand():
    """One histogram mod 4 at sd 10 a cell: a class of one cell needs 4 sd (40); the other
    three cells' sum plus 1 sd of it (sqrt(3) 10 = 17.3) at most a quarter of the class."""
    sd = 10.0
    assert (LATTICE_ON_SIGMAS, LATTICE_OFF_SIGMAS, LATTICE_OFF_RATIO) == (4.0, 1.0, 0.25)
    assert residue_class(np.array([400, 0, 0, 0]), sd) == (4, 0)
    assert residue_class(np.array([0, 0, 400, 0]), sd) == (4, 2)
    # the off cells 83: 83 + 17.3 = 100.3 > 100 (a quarter of 400); at 82, 99.3 passes
    assert residue_class(np.array([400, 83, 0, 0]), sd) == (2, 0)  # 0 and 2: 400 of 483
    assert residue_class(np.array([400, 82, 0, 0]), sd) == (4, 0)
    # with no mass off the class, its 4 sd (40) is not the bar: the off cells' 1 sd (17.3)
    # must be at most a quarter of it, so 70 passes and 69 does not (a class mod 2 then,
    # whose off cells' sd is 14.1 and 4 sd 56.6); 39 is below both
    assert residue_class(np.array([70, 0, 0, 0]), sd) == (4, 0)
    assert residue_class(np.array([69, 0, 0, 0]), sd) == (2, 0)
    assert residue_class(np.array([39, 0, 0, 0]), sd) == (1, 0)
    assert residue_class(np.array([250, 0, 250, 0]), sd) == (2, 0)  # even numbers
    assert residue_class(np.array([250, 250, 250, 250]), sd) == (1, 0)  # none


def test_on_lattice_combines_the_two_histograms():
    """By the Chinese remainder theorem: mod 4 and mod 5 classes give steps 2 to 20."""
    sd = 1.0
    assert on_lattice(lattice_counts(np.arange(1932, 2017, 4).repeat(20)), sd) == (4, 0)
    assert on_lattice(lattice_counts(np.arange(1790, 2021, 10).repeat(20)), sd) == (10, 0)
    assert on_lattice(lattice_counts(np.arange(1981, 2020, 2).repeat(20)), sd) == (2, 1)
    assert on_lattice(lattice_counts(np.arange(3, 200, 5).repeat(20)), sd) == (5, 3)
    assert on_lattice(lattice_counts(np.arange(7, 400, 20).repeat(20)), sd) == (20, 7)
    assert on_lattice(lattice_counts(np.arange(1900, 2020).repeat(20)), sd) is None


def _rates(values: np.ndarray, rho: float, seeds: int = 40) -> dict[object, int]:
    """How often each lattice is read off ``values``' noisy histograms at ``rho`` (add/remove)."""
    sigma2 = discrete_gaussian_sigma2(rho, lattice_sensitivity(1.0))
    sd = math.sqrt(float(sigma2))
    cells = lattice_counts(values)
    out: dict[object, int] = {}
    for s in range(seeds):
        noise = sample_discrete_gaussian(sigma2, cells.size, np.random.default_rng(s))
        found = on_lattice(cells + noise, sd)
        out[found] = out.get(found, 0) + 1
    return out


def test_detection_rates_at_a_releases_budget():
    """At rho 0.00025 (sd 63 a cell: a small table's band at epsilon 1), 1,100 records.
    Elections every 4 years from 1932: (4, 0) in 181 of 200 seeds (0.905; the test asks 28
    of 40, below which a rate of 0.9 falls with probability about 1e-4); plain years
    1900-2020 and small counts 0..5 never (0 of 200 each; asked 0 of 40)."""
    rng = np.random.default_rng(1)
    years = _rates(np.arange(1932, 2017, 4).repeat(50).astype(np.float64), 2.5e-4)
    assert years.get((4, 0), 0) >= 28
    assert set(years) <= {(4, 0), (2, 0), None}  # never a wrong offset
    assert _rates(rng.integers(1900, 2021, 1100).astype(np.float64), 2.5e-4) == {None: 40}
    assert _rates(rng.integers(0, 6, 1100).astype(np.float64), 2.5e-4) == {None: 40}


def test_lattice_edges_by_hand():
    """The ends up to the lattice, inner edges to the nearest point, merged."""
    assert lattice_edges([1930.0, 1950.0, 1960.0, 1961.0, 2020.0], (4, 0)) == [
        1932.0, 1952.0, 1960.0, 2020.0,
    ]  # fmt: skip
    assert lattice_edges([1930.0, 1931.0], (4, 0)) == [1932.0, 1936.0]  # at least one step


def _elections(n: int = 1100, seed: int = 0) -> pd.DataFrame:
    """A small table of presidentialElections' shape: a year every 4 from 1932 to 2016, a
    share of two decimals and a flag."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "year": rng.choice(np.arange(1932, 2017, 4), n).astype(str),
        "share": np.char.mod("%.2f", rng.uniform(20, 80, n)),
        "south": rng.choice(["TRUE", "FALSE"], n),
    })  # fmt: skip


def _learn(df: pd.DataFrame, relation: str, seed: int):
    """The learning of a release at epsilon 1 (the default share, the pool with the weights'
    part lent, as ``tests/test_learn_smalltab.py``)."""
    b = learn_budget(1.0, 1e-9)
    learn = 0.4 * b.rho
    rho = (1 - WITHIN_SHARE) * learn
    second, small = SECOND_SHARE * learn, (WITHIN_SHARE - SECOND_SHARE) * learn
    ledger = Ledger(Budget.zcdp(learn))
    domain, report = learn_domain(
        df, rho=rho, delta=b.delta_tail, rng=np.random.default_rng(seed), ledger=ledger,
        neighbours=relation, second_rho=second, small_rho=small,
    )  # fmt: skip
    return domain, report, ledger


@pytest.mark.parametrize(("relation", "seed"), [(REPLACE_ONE, 0), (ADD_REMOVE, 3)])
def test_a_small_tables_years_every_4_on_neighbours(relation: str, seed: int):
    """On neighbouring tables (a record removed; a record replaced) the year is put on the
    lattice 4 j, its edges on it; the test's charge is LATTICE_SHARE of its band's, its
    sigma^2 ``sensitivity^2 / (2 rho)`` by hand, and the learning spends its ledger. (The
    seed is one whose bounds are a narrow band: replace-one's seed 3 bounds the years at
    ``[1000, 50000]``, no band and no test.)"""
    base = _elections()
    other = base.copy()
    other.loc[0, "year"] = "1936" if other.loc[0, "year"] != "1936" else "1940"
    for df in (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:]):
        domain, report, ledger = _learn(df, relation, seed)
        year = domain["year"]
        assert isinstance(year, Numeric) and year.lattice == (4, 0)
        assert all(int(e) % 4 == 0 for e in year.edges)
        noisy = next(c for c in report.columns if c.name == "year").noisy
        assert noisy["lattice"] == (4, 0)
        test = [e.charge for e in ledger.entries if e.charge.mechanism.startswith("year: lattice")]
        finer = [e.charge for e in ledger.entries if "year: finer bounds" in e.charge.mechanism]
        assert len(test) == 1 and len(finer) == 1
        band = noisy["fine_rho"]
        assert test[0].cost.rho == pytest.approx(LATTICE_SHARE * band)
        assert finer[0].cost.rho == pytest.approx((1 - LATTICE_SHARE) * band)
        l2 = 1.0 if relation == ADD_REMOVE else SQRT2
        sigma2 = discrete_gaussian_sigma2(LATTICE_SHARE * band, lattice_sensitivity(l2))
        assert float(sigma2) == pytest.approx(2 * l2**2 / (2 * LATTICE_SHARE * band), rel=1e-9)
        assert report.rho == pytest.approx(ledger.spent)
        assert not isinstance(domain["share"], Numeric) or domain["share"].lattice is None


def test_plain_years_and_a_learning_without_a_pool_are_as_before():
    """Plain years draw the test and find no lattice; without a pool (``domain learn``) no
    band, so no test: nothing on the ledger named lattice."""
    rng = np.random.default_rng(2)
    df = _elections()
    df["year"] = rng.integers(1900, 2020, len(df)).astype(str)
    domain, report, ledger = _learn(df, ADD_REMOVE, seed=3)
    assert domain["year"].lattice is None  # type: ignore[union-attr]
    assert next(c for c in report.columns if c.name == "year").noisy["lattice"] is None
    ledger = Ledger(Budget.zcdp(1.0))
    learn_domain(_elections(), rho=0.01, delta=1e-9, rng=np.random.default_rng(3),
                 ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
    assert not [e for e in ledger.entries if "lattice" in e.charge.mechanism]


def _lattice_numeric(**kwargs: object) -> Numeric:
    args: dict[str, object] = {"integer": True, "lattice": (4, 0)} | kwargs
    return Numeric("year", (1932.0, 1944.0, 2020.0), out_of_range="clip", **args)  # type: ignore[arg-type]


def test_domain_json_round_trip_and_validation():
    """The lattice is written only when set (older readers see the same file), read back,
    and checked: integers, step >= 2, 0 <= offset < step, integer, every edge on it."""
    d = Domain((_lattice_numeric(),))
    obj = d.to_dict()
    assert obj["attributes"][0]["lattice"] == [4, 0]
    back = Domain.from_dict(json.loads(json.dumps(obj)))
    assert back["year"].lattice == (4, 0)  # type: ignore[union-attr]
    assert json.dumps(back.to_dict()) == json.dumps(obj)
    plain = Domain((_lattice_numeric(lattice=None),)).to_dict()
    assert "lattice" not in plain["attributes"][0]
    for bad in ((1, 0), (4, 4), (4, -1), (4.0, 0), (4,), "4,0", (True, 0)):
        with pytest.raises(DomainError, match="lattice"):
            _lattice_numeric(lattice=bad)
    with pytest.raises(DomainError, match="integer=True"):
        _lattice_numeric(integer=False)
    with pytest.raises(DomainError, match="on its lattice"):
        Numeric("year", (1932.0, 1945.0, 2020.0), integer=True, lattice=(4, 0))
    obj["attributes"][0]["lattice"] = 4
    with pytest.raises(DomainError, match="'lattice' must be a list"):
        Domain.from_dict(obj)


def test_decoding_snaps_to_the_lattice():
    """Each bin decodes to the lattice's points inside it, the last bin's upper edge
    excluded (a learned upper bound is the end of a bucket): bin [1932, 1944) gives 1932,
    1936 and 1940, bin [1944, 2020] 1944 to 2016; a bin's support is its points' steps."""
    attr = _lattice_numeric()
    domain = Domain((attr,))
    codes = np.array([0] * 300 + [1] * 300)
    bits = np.zeros((600, attr.size), dtype=bool)
    bits[np.arange(600), codes] = True
    table, _ = decode(Records(bits, domain=domain), domain, seed=0)
    low, high = table["year"][:300], table["year"][300:]
    assert set(low) == {1932, 1936, 1940}
    assert set(high) <= set(range(1944, 2020, 4)) and len(set(high)) > 10
    a, b, atom = bin_supports(attr)
    assert a.tolist() == [1932.0, 1944.0] and b.tolist() == [1944.0, 2020.0]
    assert not atom.any()


def test_the_plan_states_the_test():
    plan = lattice_plan()
    assert plan["moduli"] == [4, 5] and plan["share_of_band"] == LATTICE_SHARE
    assert plan["charge"].startswith("its own")
