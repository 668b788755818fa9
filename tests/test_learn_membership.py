"""A column of a public vocabulary (US state names, country names, and the older groups)
learned by a private membership test (:func:`dpquery.domain_learning.membership_test`,
docs/learn.md "Columns of a public vocabulary"): the classes and their counts by hand, the
histogram's L2 sensitivity with the profile's cells on neighbouring tables (``n`` and
``n + 1`` records, one record replaced), the charges (none beyond the profile's, by hand),
seeded rates with their false-failure rates, a column of state names at 1,000 rows, a
column where only some values match, and the domain's JSON round trip.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning
from dpquery.data.domain import Categorical, Domain
from dpquery.data.place_names import COUNTRY_NAMES, US_STATE_NAMES
from dpquery.domain_learning import (
    MEMBERSHIP_SHARE,
    MEMBERSHIP_SIGMAS,
    PROFILE_SHARE,
    class_counts,
    column_rho,
    learn_domain,
    membership_classes,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

STATES = [s[0] for s in US_STATE_NAMES[:51]]  # the 50 states and DC, as listed
RHO = 0.0144  # epsilon 1, delta 1e-9 (learn_budget): `dpquery domain learn --epsilon 1`


def _index(vocabulary: str, case: str) -> int:
    return membership_classes().index((vocabulary, case))


# == the classes, by hand =========================================================================


def test_the_classes_are_each_vocabulary_in_each_case_in_a_fixed_order() -> None:
    classes = membership_classes()
    assert classes[:2] == (("uppercase letters", "none"), ("lowercase letters", "none"))
    assert classes[-8:-2] == (
        ("US state names", "upper"), ("US state names", "lower"), ("US state names", "title"),
        ("country names", "upper"), ("country names", "lower"), ("country names", "title"),
    )  # fmt: skip
    assert classes[-2:] == (("country codes, ISO 3166-1 alpha-2", "none"),
                            ("country codes, ISO 3166-1 alpha-3", "none"))  # fmt: skip
    assert ("US state codes", "none") in classes
    assert len(classes) == 2 + 4 * 3 + 1 + 2 * 3 + 2
    assert len(US_STATE_NAMES) == 59 and len(COUNTRY_NAMES) == 258
    slots = {w for s in COUNTRY_NAMES for w in s}
    for name in ("Cape Verde", "Ivory Coast", "South Korea", "Korea", "U.S.A.", "Zaire"):
        assert name in slots


def test_a_value_counts_in_the_first_class_holding_it_as_written() -> None:
    keys = {"Ohio": 5, "OHIO": 3, "ohio": 2, "oHIO": 7, "District of Columbia": 4, "DC": 6,
            "Georgia": 9, "FRANCE": 11, "U.S.A.": 1, "12": 8, 12: 8, "2020-01-01": 5,
            "Sat": 2, "S": 1, ("<missing key>",): 30}  # fmt: skip
    c = class_counts(keys)
    assert c[_index("US state names", "title")] == 5 + 4 + 9  # Georgia: a state first
    assert c[_index("US state names", "upper")] == 3
    assert c[_index("US state names", "lower")] == 2
    assert c[_index("US state codes", "none")] == 6  # DC: the codes come first
    assert c[_index("country names", "upper")] == 11 + 1  # U.S.A. is upper before as listed
    assert c[_index("days of the week, abbreviated", "title")] == 2
    assert c[_index("uppercase letters", "none")] == 1
    # oHIO (no case), numbers, dates and the missing key: in no class
    assert c.sum() == 5 + 4 + 9 + 3 + 2 + 6 + 11 + 1 + 2 + 1


# == neighbours: L2 sensitivity of the whole histogram with the profile's cells ===================


def _cells(values: list[Any]) -> np.ndarray:
    """The profile's cells (missing, numbers, ISO dates) and the classes of one column."""
    col = domain_learning._read(pd.Series(values, dtype=object))
    return np.concatenate([[col.missing, col.numbers.size, col.times.size],
                           class_counts(col.keys)])  # fmt: skip


POOL = [*STATES, "OHIO", "texas", "FRANCE", "Chad", "12", "2.5", "2020-01-01", None, "xyz",
        "Mon", "A", "DC", "oHIO"]  # fmt: skip


def neighbour_moves(
    pool: list[Any], cells: Callable[[list[Any]], np.ndarray], seed: int
) -> tuple[list[float], list[float]]:
    """The L2 moves of ``cells`` over 200 random neighbours of 300 values drawn from
    ``pool``: added or removed records (``n`` and ``n + 1``), and replaced ones."""
    rng = np.random.default_rng(seed)
    base = list(rng.choice(np.array(pool, dtype=object), 300))
    v = cells(base)
    add, rep = [], []
    for _ in range(200):
        i, new = int(rng.integers(300)), rng.choice(np.array(pool, dtype=object))
        add.append(float(np.linalg.norm(cells([*base, new]) - v)))
        add.append(float(np.linalg.norm(cells(base[:i] + base[i + 1 :]) - v)))
        rep.append(float(np.linalg.norm(cells([*base[:i], new, *base[i + 1 :]]) - v)))
    return add, rep


@pytest.mark.parametrize("seed", range(5))
def test_the_histogram_moves_by_l2_1_under_add_remove_and_sqrt2_under_replace_one(seed) -> None:
    """Every value is in at most one cell of the profile and the classes together (a number,
    a date or the missing key in no class): adding or removing a record moves the vector by
    at most L2 1, replacing one by at most ``sqrt(2)``; 200 random neighbours a seed, and
    some pairs reach each bound (the check can fail)."""
    add, rep = neighbour_moves(POOL, _cells, seed)
    assert max(add) == 1.0 and max(rep) == pytest.approx(math.sqrt(2))
    # a value in no cell (oHIO, xyz: text of no class) moves nothing
    assert min(add) == 0.0


# == the learning ===============================================================================


def _states(n: int, seed: int, share: float = 1.0, others: int = 200) -> pd.DataFrame:
    """``n`` records: ``state`` a state name (or DC) with probability ``share``, else one of
    ``others`` made-up words; ``x`` a number."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:03d}" for i in range(others)], dtype=object)
    state = np.where(rng.random(n) < share, rng.choice(np.array(STATES, dtype=object), n),
                     rng.choice(words, n))  # fmt: skip
    return pd.DataFrame({"state": state, "x": rng.normal(50, 10, n).round(1)})


def _learn(df: pd.DataFrame, seed: int, neighbours: str = ADD_REMOVE) -> tuple[Domain, Any, Any]:
    ledger = Ledger(Budget.zcdp(1.0))
    domain, report = learn_domain(df, rho=RHO, delta=1e-9, rng=np.random.default_rng(seed),
                                  ledger=ledger, neighbours=neighbours)  # fmt: skip
    return domain, report, ledger


def _charges(ledger: Ledger) -> list[tuple[str, Any]]:
    return [(e.charge.mechanism, e.charge.cost) for e in ledger.entries]


def _fired(domain: Domain) -> bool:
    attr = domain["state"]
    return isinstance(attr, Categorical) and "Wyoming" in attr.values


def test_a_column_of_state_names_at_1000_rows_lists_every_state() -> None:
    """1,000 records of 51 values (about 20 each): no state reaches the selection's
    threshold, the test lists the 59 places (each slot's spellings) in the column's case,
    the catch-all after them; the report says which class won."""
    domain, report, _ = _learn(_states(1000, 0), 3)
    state = domain["state"]
    assert isinstance(state, Categorical)
    values = set(state.values)
    assert set(STATES) <= values and {"Puerto Rico", "Washington D.C.", "<other>"} <= values
    assert not {"OHIO", "ohio", "France"} & values
    assert len(state.values) == sum(len(s) for s in US_STATE_NAMES) + 1
    col = report.columns[0]
    assert col.noisy["released"] == 0 and "US state names (title)" in col.rule
    assert col.noisy["membership_class"] == "US state names/title"
    plain = {v for v in state.values if v not in state.by_rule and v != state.other}
    ruled = set(state.by_rule)
    assert plain | ruled == values - {"<other>"} and not plain & ruled
    # each place's first spelling a plain value, its other spellings by rule (a column
    # writes one of them; the release tests each alternative against its measurements)
    assert ruled == {w for s in US_STATE_NAMES for w in s[1:]}
    assert {"Wyoming", "District of Columbia", "Guam"} <= plain and "DC" in ruled
    # upper case: the members are written upper
    upper = _states(1000, 1).assign(state=lambda d: d["state"].str.upper())
    assert "WYOMING" in _learn(upper, 3)[0]["state"].values


def test_the_charges_are_the_profiles_by_hand_and_the_same_as_without_the_test(
    monkeypatch,
) -> None:
    """The classes are drawn at the profile's noise under its charge: the ledger holds the
    same charges as a learning whose test never fires, the profile's rho is
    ``PROFILE_SHARE x (rho - 5%) / 2`` by hand (add/remove, two columns), and the test's
    sigma^2 is ``1 / (2 rho_profile)`` (L2 1). The report adds up to the ledger."""
    df = _states(1000, 2)
    domain, report, ledger = _learn(df, 4)
    per = RHO * 0.95 / 2 * (1 - 1e-9)
    assert column_rho(RHO, 2, True) == pytest.approx(per, rel=1e-12)
    profile = [c.rho for m, c in _charges(ledger) if m == "state: profile (discrete Gaussian)"]
    assert profile == [pytest.approx(PROFILE_SHARE * per, rel=1e-12)]
    sigma2 = float(discrete_gaussian_sigma2(PROFILE_SHARE * per, 1.0))
    assert sigma2 == pytest.approx(1 / (2 * PROFILE_SHARE * per), rel=1e-6)  # 731.0
    assert PROFILE_SHARE * per == pytest.approx(6.84e-4, rel=1e-6) and round(sigma2, 1) == 731.0
    state = [c.rho for m, c in _charges(ledger) if m.startswith("state:")]
    assert math.fsum(state) == pytest.approx(report.columns[0].rho, rel=1e-9)
    monkeypatch.setattr(domain_learning, "MEMBERSHIP_OTHER_SHARE", math.inf)
    off, _, ledger_off = _learn(df, 4)
    assert _charges(ledger) == _charges(ledger_off) and _fired(domain) and not _fired(off)
    # every other column is learned from the same draws (the test has a stream of its own)
    assert off["x"] == domain["x"]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_neighbouring_tables_fire_alike_with_the_same_charges(neighbours) -> None:
    """``n`` and ``n + 1`` records (add/remove), one record replaced (replace-one): the test
    fires on both with the same charges (a function of public shares alone)."""
    (da, _, la), (db, _, lb) = learned_neighbours(_states(1001, 5), 6, neighbours)
    assert _fired(da) and _fired(db) and _charges(la) == _charges(lb)


def learned_neighbours(t: pd.DataFrame, seed: int, neighbours: str) -> tuple[Any, Any]:
    """:func:`_learn` on ``t`` without its last record and on a neighbour of that table:
    ``t`` itself (add/remove: ``n`` and ``n + 1`` records) or ``t`` with its last record in
    place of the one before it (replace-one)."""
    n = len(t) - 1
    other = t if neighbours == ADD_REMOVE else pd.concat([t.iloc[: n - 1], t.iloc[[n]]])
    return (_learn(t.iloc[:n].reset_index(drop=True), seed, neighbours),
            _learn(other.reset_index(drop=True), seed, neighbours))  # fmt: skip


def test_seeded_rates_state_names_fire_and_words_never_do() -> None:
    """Seeds 0 to 19 (fixed, so the run is deterministic): a column of state names fires on
    all 20; a column of 200 made-up words (no member) on none. At this rho the classes'
    noise sd is 27 (sigma^2 731.0): 1,000 state names stand 33 sd above the 4-sd bar and
    about 18 sd above half the noisy non-missing count (itself 1,000 to within about 1 sd of
    the noisy n), so a seed fails with probability below 1e-40; an empty class passes 4 sd
    with probability 3.2e-5 and must also hold half the records (about 500, 18 sd): no word
    column can pass. False-failure rate of the whole test below 1e-30."""
    fired = [_fired(_learn(_states(1000, s), s)[0]) for s in range(20)]
    words = [_fired(_learn(_states(1000, s, share=0.0), s)[0]) for s in range(20)]
    assert all(fired) and not any(words)


def test_a_column_where_only_some_values_match() -> None:
    """70% state names, 30% spread over 200 words: the states' class holds 700 of 1,000
    (above half by 7 sd of the 27-record noise): it fires, the words are the catch-all. 30%
    state names: 300 of 1,000, 7 sd below half: it never fires (seeds 0 to 9; failure
    probability a seed below 1e-11 either way, the noisy non-missing count's noise included)."""
    for s in range(10):
        most = _learn(_states(1000, s, share=0.7), s)[0]
        assert _fired(most) and not any(v.startswith("w") for v in map(str, most["state"].values))
        assert not _fired(_learn(_states(1000, s, share=0.3), s)[0])
    assert MEMBERSHIP_SHARE == 0.5 and MEMBERSHIP_SIGMAS == 4.0


def test_countries_upper_case_and_a_selection_that_releases_most_is_not_tested() -> None:
    """A column of country names written upper (SumHes' way) fires as countries, upper; a
    column of three released values (each far above the threshold) is not tested: its
    learning is the same as with the test off (nothing drawn)."""
    names = [s[0].upper() for s in COUNTRY_NAMES[:120]]
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"country": rng.choice(np.array(names, dtype=object), 3000),
                       "x": rng.normal(0, 1, 3000).round(2)})  # fmt: skip
    domain, report, _ = _learn(df, 1)
    assert "ZIMBABWE" in domain["country"].values and "Zimbabwe" not in domain["country"].values
    assert "country names (upper)" in report.columns[0].rule
    three = pd.DataFrame({"c": rng.choice(np.array(["Ohio", "Texas", "Utah"]), 3000)})
    d3, r3, _ = _learn(three, 2)
    assert set(d3["c"].values) == {"Ohio", "Texas", "Utah", "<other>"}
    assert "membership_max" not in r3.columns[0].noisy


def test_the_json_round_trip_keeps_the_members_and_their_rule(tmp_path) -> None:
    domain, _, _ = _learn(_states(1000, 7), 8)
    path = tmp_path / "d.json"
    domain.save(path)
    back = Domain.load(path)
    assert back.to_dict() == domain.to_dict()
    assert back["state"].values == domain["state"].values
    assert back["state"].by_rule == domain["state"].by_rule


def test_counts_are_exact_on_a_table() -> None:
    """The class counts of a table, by hand: 1,000 records of state names."""
    df = _states(1000, 9)
    counts = Counter(df["state"])
    c = class_counts(counts)
    assert c[_index("US state names", "title")] == sum(v for k, v in counts.items() if k != "DC")
    assert c[_index("US state codes", "none")] == counts["DC"]


def test_the_plan_states_the_test_and_its_charge(capsys) -> None:
    """``dpquery privacy synth`` (no data read) states the test, the share whose charge
    covers it (the profile's 10% of a column's) and its rules, in text and JSON."""
    from dpquery.cli import main

    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1"]) == 0
    plan = capsys.readouterr().out
    assert "tested for a public vocabulary (US state names, country names" in plan
    assert "numbers and dates (ISO 8601; the common formats' order classes; times of day)" in plan
    assert "(10% of the column's share, charged before the profile draws)" in plan
    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["membership_test"]
    assert planned["share_of_column"] == PROFILE_SHARE == 0.1
    assert planned["class_share"] == 0.5 and planned["sigmas"] == 4.0
    assert planned["classes"] == 23 and planned["vocabularies"][-3] == "country names"
    assert planned["vocabularies"][-1] == "country codes, ISO 3166-1 alpha-3"


def test_a_released_member_of_an_older_group_keeps_the_older_rule() -> None:
    """A selection that released ``Sat`` (36% of a days column, tips' way) lists the days by
    the older rule, every other day by rule, as before: the test draws nothing there. A
    released key of no group (``xyz``) leaves the test to run, and the days' class wins."""
    days = ["Sat"] * 360 + ["Sun"] * 300 + ["Thur"] * 240 + ["Fri"] * 100
    col = domain_learning._read(pd.Series(days, dtype=object))
    rng = np.random.default_rng(0)
    ctx = domain_learning._Context(rng, Ledger(Budget.zcdp(1.0)), 16, 1e-10, 1000,
                                   vocab_rng=np.random.default_rng(1))  # fmt: skip
    sel = domain_learning.Selection({"Sat": 361}, discrete_gaussian_sigma2(0.01, 1.0), 90,
                                    0.01, 1e-10)  # fmt: skip
    assert domain_learning.membership_test(col, sel, 1000, 0.001, ctx) is None
    other = domain_learning.Selection({"xyz": 5}, sel.sigma2, 90, 0.01, 1e-10)
    found = domain_learning.membership_test(col, other, 1000, 0.001, ctx)
    assert found is not None and found.vocabulary == "days of the week, abbreviated"
    assert found.case == "title" and "Mon" in found.plain and "Thur" in found.ruled


def test_no_written_member_is_a_common_date_and_no_common_date_a_member() -> None:
    """The membership classes and the common date formats' classes
    (``domain_learning._common_counts``) are cells of the same profile under its one charge:
    one record in at most one of them. Every written form of every class reads as no common
    date, and a date written in each common format counts in no class."""
    from dpquery.data import dates

    forms = list(domain_learning._CLASS_INDEX)
    assert len(forms) > 300
    assert [w for w in forms if dates.common_cell(w) is not None] == []
    seconds = np.array([dates.iso_cell("2016-10-03 07:05:09")[0]], dtype=np.float64)
    texts = [str(dates.written(seconds, np.zeros(1, dtype=bool), f)[0])
             for f in dates.COMMON_FORMATS]  # fmt: skip
    assert all(dates.common_cell(t) is not None for t in texts)
    assert int(class_counts(dict.fromkeys(texts, 1)).sum()) == 0
