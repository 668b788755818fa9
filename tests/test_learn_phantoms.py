"""Listed vocabulary members and phantoms (docs/learn.md, "Phantoms and the released keys'
rule"): the released keys' rule by hand (styles, hyphens, the slots a key names, the margin),
that it draws nothing (the same charges as without it, on neighbouring tables under both
relations), the ``listed`` field's JSON, the empirical-Bayes posteriors by hand, and that a
release puts no record on a listed member it takes as empty.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.test_empty_codes import _charges as _release_charges
from tests.test_empty_codes import _code_column, _fit
from tests.test_learn_membership import _charges, _learn, learned_neighbours

from dpquery import domain_learning
from dpquery.algorithms.marginal import adaptive_projection as ap
from dpquery.algorithms.marginal.empty_cells import (
    LISTED_NULL,
    doubted_listed,
    listed_cells,
    null_posteriors,
)
from dpquery.data.domain import Categorical, Domain, DomainError
from dpquery.data.encode import encode
from dpquery.domain_learning import (
    MEMBERSHIP_TAIL_SHARE,
    MEMBERSHIP_TAIL_SIGMAS,
    released_membership,
)
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import Selection
from dpquery.queries.marginals import AttributeLayout


def _sel(released: dict[Any, int], sigma2: float = 100.0) -> Selection:
    return Selection(released, Fraction(sigma2), 300, 0.001, 1e-10)


# == the released keys' rule, by hand ============================================================


def test_hyphens_adult_style_list_every_country_written_with_hyphens() -> None:
    """UCI Adult's keys: ``United-States`` (a space written as a hyphen), ``Mexico``,
    ``Philippines``, 7% left out: countries, title case, spaces as hyphens. The places no key
    names are listed by their first spelling (``El-Salvador``); the other spellings of
    every place, the named ones' too, by rule; no key is listed."""
    found = released_membership(
        _sel({"United-States": 29000, "Mexico": 640, "Philippines": 200}), 32000, 30.0
    )
    assert found is not None and found.vocabulary == "country names"
    assert found.case == "title, spaces as '-'"
    plain, ruled = set(found.plain), set(found.ruled)
    assert {"El-Salvador", "Puerto-Rico", "Dominican-Republic", "England"} <= plain
    assert {"United-States", "Mexico"}.isdisjoint(plain)
    assert {"United-States-of-America", "USA", "The-Netherlands"} <= ruled
    assert "United States" not in plain | ruled and "El Salvador" not in plain
    assert found.noisy["membership_left_out"] == 32000 - 29840


def test_spaces_upper_case_states_and_the_first_style_that_fits() -> None:
    found = released_membership(_sel({"NEW YORK": 500, "OHIO": 300}), 1000, 10.0)
    assert found is not None and found.vocabulary == "US state names" and found.case == "upper"
    assert "WYOMING" in found.plain and "NEW-YORK" not in found.plain
    # one-word names fit both separators: the first (spaces) is taken
    one = released_membership(_sel({"Ohio": 500, "Utah": 300}), 1000, 10.0)
    assert one is not None and one.case == "title" and "New York" in one.plain


@pytest.mark.parametrize(
    ("released", "present", "why"),
    [
        ({"United-States": 900}, 1000, "one key"),
        ({"United-States": 500, "Atlantis": 300}, 1000, "a key of no vocabulary"),
        ({"Ohio": 500, "Mexico": 300}, 1000, "two vocabularies"),
        ({"United-States": 500, "Mexico": 485}, 1000, "1.5% left out"),
        ({"S": 500, "C": 300}, 1000, "an older group's (letters)"),
        ({"United-States": 500, 12: 300}, 1000, "a number"),
    ],
)
def test_the_rule_does_not_fire(released: dict[Any, int], present: int, why: str) -> None:
    assert released_membership(_sel(released), present, 5.0) is None, why


def test_the_margin_in_sd_of_the_mass_left_out_by_hand() -> None:
    """Two keys of sigma^2 100 and the profile's sd 30: the left-out mass has sd
    ``sqrt(2 x 100 + 2 x 900)`` = 44.7, its bar 2 sd = 89.4; 89 left out of 1,000 (above
    the 2% share) does not fire, 90 does."""
    assert MEMBERSHIP_TAIL_SHARE == 0.02 and MEMBERSHIP_TAIL_SIGMAS == 2.0
    assert released_membership(_sel({"Ohio": 600, "Utah": 311}), 1000, 30.0) is None
    assert released_membership(_sel({"Ohio": 600, "Utah": 310}), 1000, 30.0) is not None


# == the learning: nothing drawn, the same charges ===============================================

RARE = ["El-Salvador", "Puerto-Rico", "Cuba", "India", "Jamaica", "Haiti", "Peru", "Iran",
        "Poland", "Italy", "Canada", "China", "Japan", "Greece", "France", "Ireland", "Laos",
        "Vietnam", "Taiwan", "Nicaragua"]  # fmt: skip


def _table(n: int, seed: int) -> pd.DataFrame:
    """90% United-States, 7% Mexico, 0.15% each of twenty more countries written as UCI
    Adult writes them (3% together)."""
    rng = np.random.default_rng(seed)
    names = np.array(["United-States", "Mexico", *RARE], dtype=object)
    country = rng.choice(names, n, p=[0.9, 0.07, *[0.0015] * 20])
    return pd.DataFrame({"country": country, "x": rng.normal(50, 10, n).round(1)})


def test_the_rule_fires_on_a_large_table_and_draws_nothing(monkeypatch) -> None:
    """30,000 records (:func:`_table`): the selection releases the two large countries
    (each far above its threshold) and few of the twenty of 45 records (about its
    threshold), 3% is left out (about 900 records, many sd of its noise): the
    countries are listed in the hyphen style, most of the twenty among them, and the ledger
    holds the same charges as with the rule off (nothing drawn); the other column is the
    same."""
    df = _table(30_000, 0)
    domain, report, ledger = _learn(df, 1)
    country = domain["country"]
    assert isinstance(country, Categorical)
    assert set(RARE) <= set(country.values) and len(set(RARE) & set(country.listed)) >= 10
    assert "United-States" not in country.listed and "USA" in country.by_rule
    assert "the released keys" in report.columns[0].rule
    monkeypatch.setattr(domain_learning, "MEMBERSHIP_TAIL_SHARE", 2.0)
    off, _, ledger_off = _learn(df, 1)
    assert not off["country"].listed and _charges(ledger) == _charges(ledger_off)  # type: ignore[union-attr]
    assert off["x"] == domain["x"]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_neighbouring_tables_list_alike_with_the_same_charges(neighbours: str) -> None:
    """``n`` and ``n + 1`` records (add/remove), one record replaced (replace-one): the rule
    fires on both, with the same charges (a function of public shares alone)."""
    (da, _, la), (db, _, lb) = learned_neighbours(_table(30_001, 2), 3, neighbours)
    assert da["country"].listed and db["country"].listed  # type: ignore[union-attr]
    assert _charges(la) == _charges(lb)


# == the domain's JSON ===========================================================================


def test_listed_round_trips_and_is_checked() -> None:
    attr = Categorical("c", ("a", "b", "c", "<other>"), other="<other>", by_rule=("c",),
                       listed=("a", "b"))  # fmt: skip
    back = Domain.from_dict(Domain([attr]).to_dict())
    assert back["c"].listed == ("a", "b") and back["c"].by_rule == ("c",)  # type: ignore[union-attr]
    assert "listed" not in Domain([Categorical("c", ("a", "b"))]).to_dict()["attributes"][0]
    with pytest.raises(DomainError, match="listed values"):
        Categorical("c", ("a", "<other>"), other="<other>", listed=("<other>",))
    with pytest.raises(DomainError, match="both by_rule and listed"):
        Categorical("c", ("a", "b"), by_rule=("a",), listed=("a",))


# == the empirical-Bayes rule, by hand ===========================================================


def test_null_posteriors_by_hand() -> None:
    """Two counts, 0 and 4 sd, on the grid 0, 0.5 sd, ...: the prior's estimate puts half its
    mass on each (each count its own atom), so the first's posterior of 0 is
    ``1 / (1 + exp(-8))`` = 0.99966 and the second's ``exp(-8) / (1 + exp(-8))`` = 3.4e-4."""
    p = null_posteriors(np.array([0.0, 40.0]), 10.0)
    assert p[0] == pytest.approx(1 / (1 + np.exp(-8)), abs=1e-3)
    assert p[1] == pytest.approx(np.exp(-8) / (1 + np.exp(-8)), abs=1e-3)


def test_null_posteriors_fall_with_the_count_and_read_the_empty_share() -> None:
    """200 members at 0 and 50 at 3 sd, noisy (seeded): the posterior of 0 falls with the
    noisy count; a member at 1 sd is taken as empty among many empty ones and kept when few
    are (the prior read off the same column)."""
    rng = np.random.default_rng(0)
    sd = 10.0
    many = np.r_[np.zeros(200), np.full(50, 30.0)] + rng.normal(0, sd, 250)
    p = null_posteriors(many, sd)
    order = np.argsort(many)
    assert np.all(np.diff(p[order]) <= 1e-12)
    few = np.r_[np.zeros(5), np.full(245, 30.0)] + rng.normal(0, sd, 250)
    at1 = [null_posteriors(np.r_[x, 10.0], sd)[-1] for x in (many, few)]
    assert at1[0] >= LISTED_NULL > at1[1]


def test_doubted_listed_by_threshold_and_by_rule() -> None:
    y = np.array([5.0, 50.0, 19.0, 21.0, -3.0])
    est = [(y, 10.0)]
    assert doubted_listed(est, [(0, 2, 3, 4)], 2.0) == [(0, 2, 4)]
    assert doubted_listed(est, [()], None) == [()]
    rule = doubted_listed(est, [(0, 1, 2, 3, 4)], None)[0]
    p = null_posteriors(y, 10.0)
    assert rule == tuple(c for c in range(5) if p[c] >= LISTED_NULL)


# == a release puts no record on a listed member taken as empty =================================


@pytest.mark.parametrize("sigmas", [None, 2.0])
def test_no_record_on_a_listed_member_below_the_bar(monkeypatch, sigmas: float | None) -> None:
    """800 records over 5 of a column's 40 values (the other 35 listed, none holding a
    record): the release's last step sees the combined noisy 1-way counts; every listed
    member below the bar (the posterior rule, or 2 sd) holds no record of the released set,
    some were taken as empty, and the charges are those without the step (the check can
    fail: without the step some listed member holds records)."""
    values = tuple(f"v{i:02d}" for i in range(40))
    domain = Domain([Categorical("c", (*values, "<other>"), other="<other>",
                                 listed=values[5:]),
                     Categorical("d", ("a", "b"))])  # fmt: skip
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"c": rng.choice(np.array(values[:5], dtype=object), 800),
                       "d": rng.choice(np.array(["a", "b"], dtype=object), 800)})  # fmt: skip
    data = encode(df, domain)
    seen: dict[str, Any] = {}
    real = ap.doubted_listed

    def spy(estimates, cells, z=None):  # type: ignore[no-untyped-def]
        out = real(estimates, cells, sigmas)
        seen.update(estimates=estimates, cells=cells, out=out)
        return out

    monkeypatch.setattr(ap, "doubted_listed", spy)
    on = _fit(data, 5)
    y, sd = seen["estimates"][0]
    cells = seen["cells"][0]
    assert cells == listed_cells(domain, AttributeLayout.of_data(data).sizes)[0]
    assert cells == tuple(range(5, 40))
    doubted = set(seen["out"][0])
    if sigmas is not None:
        assert doubted == {c for c in cells if y[c] < sigmas * sd}
    else:
        p = null_posteriors(np.asarray(y, dtype=float)[list(cells)], float(sd))
        assert doubted == {c for c, q in zip(cells, p, strict=True) if q >= LISTED_NULL}
    assert doubted
    held = _code_column(data, np.asarray(on.records.rows))
    assert not np.isin(held, sorted(doubted)).any()
    off = _fit(data, 5, empty_cells=None)
    assert np.isin(_code_column(data, np.asarray(off.records.rows)), cells).any()
    assert _release_charges(on) == _release_charges(off)


def test_the_plan_states_the_rule_and_that_it_charges_nothing(capsys) -> None:
    """``dpquery privacy synth`` (no data read) states the released keys' rule, its margins
    and its (absent) charge, in text and JSON."""
    from dpquery.cli import main

    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1"]) == 0
    plan = capsys.readouterr().out
    assert "released 2 or more keys, all place names of one vocabulary in one style" in plan
    assert "left out 2% of it and 2 sd" in plan and "no charge (post-processing" in plan
    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1", "--json"]) == 0
    keys = json.loads(capsys.readouterr().out)["membership_test"]["released_keys"]
    assert keys == {"vocabularies": ["US state names", "country names"], "keys": 2,
                    "left_out_share": 0.02, "left_out_sigmas": 2.0, "separators": [" ", "-"],
                    "charge": "none (post-processing)"}  # fmt: skip
