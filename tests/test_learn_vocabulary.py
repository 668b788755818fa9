"""Public vocabularies (single letters, days of the week, months): a learned categorical whose
released keys hold a member of one also lists the group's other members, as added by rule
(:func:`dpquery.domain_learning.vocabulary`, ``Categorical.by_rule``), and a release tests
each such member on its own against its 1-way measurements
(:func:`dpquery.algorithms.marginal.empty_cells.vocabulary_cells`, docs/learn.md "Public
vocabularies"): the groups and the case (by hand), a learning without members unchanged,
the kind read off the domain's JSON, and adaptive-projection with the step (post-processing:
the same charges; neighbouring tables of ``n`` and ``n + 1`` records).

Every randomised check is seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.test_empty_codes import _charges, _code_column, _fit

from dpquery import domain_learning
from dpquery.algorithms.marginal.empty_cells import (
    VOCABULARY_SIGMAS,
    doubted_cells,
    doubted_run,
    ruled_cells,
    vocabulary_cells,
)
from dpquery.data.domain import Categorical, Domain, Numeric
from dpquery.data.encode import encode
from dpquery.domain_learning import learn_domain, vocabulary
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N
from dpquery.queries.marginals import AttributeLayout

# == the rule, by hand ============================================================================


def test_a_letter_adds_the_other_letters_of_its_case() -> None:
    upper = vocabulary(["S"])
    assert upper == [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c != "S"]
    assert vocabulary(["x", "y"]) == [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in "xy"]
    # two cases, two groups; a key of two letters is no member
    assert set(vocabulary(["A", "b"])) == set("BCDEFGHIJKLMNOPQRSTUVWXYZacdefghijklmnopqrstuvwxyz")
    assert vocabulary(["AB", "red", 1, 2.5]) == []


def test_days_keep_the_keys_case_and_every_spelling_of_a_missing_day() -> None:
    # seaborn's tips writes Thur: the slot of Thursday is filled by any of its spellings
    assert vocabulary(["Sat", "Sun", "Thur", "Fri"]) == ["Mon", "Tue", "Tues", "Wed"]
    assert vocabulary(["SAT"]) == ["MON", "TUE", "TUES", "WED", "THU", "THUR", "THURS", "FRI",
                                   "SUN"]  # fmt: skip
    assert vocabulary(["monday"])[:2] == ["tuesday", "wednesday"]
    assert len(vocabulary(["Monday"])) == 6


def test_months_and_a_key_in_two_groups() -> None:
    assert vocabulary(["Sept"]) == ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
                                    "Oct", "Nov", "Dec"]  # fmt: skip
    assert len(vocabulary(["december"])) == 11
    # May is a full name and an abbreviation: both groups' other members
    may = vocabulary(["May"])
    assert "June" in may and "Jun" in may and "Sep" in may and "Sept" in may
    assert len(may) == 11 + 12


def test_released_keys_and_pairs_are_never_repeated() -> None:
    assert vocabulary([*"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]) == []
    assert "C" not in vocabulary(["S", "C"])
    assert vocabulary(["True", "False", "yes", "male"]) == []  # pairs stay partners'


def test_state_codes_need_three_released_keys_all_codes() -> None:
    """US state codes (USPS: 50 states, DC, 8 territories) are added only when at least
    three released keys are codes and every released text key is one: ``IN``, ``OR`` and
    ``OK`` are words too, ``CA`` and ``DE`` country codes."""
    added = vocabulary(["CA", "NY", "TX"])
    assert len(added) == 59 - 3 and added[:4] == ["AL", "AK", "AZ", "AR"]
    assert added[-8:] == ["PR", "GU", "VI", "AS", "MP", "FM", "MH", "PW"]
    assert "CA" not in added and "DC" in added
    assert vocabulary(["CA", "NY"]) == []  # two keys: too few
    assert vocabulary(["OK", "NO", "CA", "TX"]) == []  # NO is no code: not a column of codes
    assert vocabulary(["IN", "OUT"]) == []
    assert vocabulary(["ca", "ny", "tx"]) == []  # exact case: codes are upper case
    # one missing state among 58 released: only it comes back
    codes = [*added, "CA", "NY", "TX"]
    assert vocabulary([c for c in codes if c != "WY"]) == ["WY"]


# == in a learning =============================================================================


def _ports(n: int, seed: int = 0) -> pd.DataFrame:
    """Titanic's ports: S about 72%, C 19%, Q 9%; a pair and a text column of no group."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "embarked": rng.choice(["S", "C", "Q"], n, p=[0.72, 0.19, 0.09]),
        "sex": np.where(rng.random(n) < 0.35, "female", "male"),
        "colour": rng.choice(["red", "green"], n, p=[0.8, 0.2]),
    })  # fmt: skip


def _learn(df: pd.DataFrame) -> tuple[Domain, Any]:
    return learn_domain(df, rho=0.0006, delta=1e-9, rng=np.random.default_rng(1),
                        ledger=Ledger(Budget.zcdp(1.0)), neighbours=ADD_REMOVE)  # fmt: skip


def test_a_small_tables_letters_come_back_by_rule_and_the_json_keeps_them(tmp_path) -> None:
    """900 records at a small table's budget: S alone passes the selection, the other letters
    are values added by rule, in the values' order; C and Q are no longer the catch-all. The
    domain file keeps them; loaded again, the release tests the same cells."""
    domain, _ = _learn(_ports(900))
    port = domain["embarked"]
    assert isinstance(port, Categorical)
    released = [v for v in port.values if v not in (port.other, port.missing)]
    assert released == list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert port.by_rule == tuple(c for c in released if c != "S")
    assert domain["sex"].by_rule == () and domain["colour"].by_rule == ()
    path = tmp_path / "d.json"
    domain.save(path)
    back = Domain.load(path)
    assert back["embarked"].by_rule == port.by_rule
    assert back.to_dict() == domain.to_dict()


def test_a_learning_without_members_is_unchanged(monkeypatch) -> None:
    """A table whose keys hold no member: the same domain, byte for byte in its JSON, as a
    learning with no vocabulary at all (the rule draws nothing and reads no data)."""
    df = _ports(900).drop(columns="embarked")
    with_rule = _learn(df)[0].to_dict()
    monkeypatch.setattr(domain_learning, "VOCABULARIES", {})
    assert _learn(df)[0].to_dict() == with_rule
    # and a table with members does change under the rule (the check can fail)
    assert _learn(_ports(900))[0].to_dict() != (
        monkeypatch.undo() or _learn(_ports(900))[0].to_dict()
    )


# == the release ================================================================================

LETTERS = ("A", "B", "Q", "S", "T")


def _domain(by_rule: tuple[Any, ...] = ("A", "B", "Q", "T")) -> Domain:
    """``port`` over five letters and a catch-all, all but S added by rule; ``code`` with
    integer codes 3 and 4 by rule; ``x`` numeric."""
    return Domain(
        (
            Categorical("port", (*LETTERS, "<other>"), other="<other>", by_rule=by_rule),
            Categorical("code", (1, 2, 3, 4, "<other>"), other="<other>", by_rule=(3, 4)),
            Numeric("x", (0.0, 10.0, 20.0, 30.0, 40.0), out_of_range="clip"),
        )
    )


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` records in S (70%) and Q (30%) alone: Q, listed by rule, holds records above
    the empty A and B; codes 1 and 2 alone."""
    rng = np.random.default_rng(seed)
    port = rng.choice(["S", "Q"], n, p=[0.7, 0.3])
    return pd.DataFrame({
        "port": port,
        "code": np.where(port == "S", rng.integers(1, 3, n), 2),
        "x": rng.uniform(0, 40, n).round(1),
    })  # fmt: skip


EMPTY = [0, 1, 4]  # A, B, T


def test_the_kind_is_read_off_the_values_and_members_are_tested_one_by_one() -> None:
    """Text by rule are vocabulary cells, numbers integer codes; a member is doubted below
    z sigma whatever the member above it holds (a run from the highest would stop at Q)."""
    sizes = AttributeLayout.of_data(encode(_table(50), _domain())).sizes
    assert vocabulary_cells(_domain(), sizes) == [(4, 2, 1, 0), (), ()]
    assert ruled_cells(_domain(), sizes) == [(), (3, 2), ()]
    assert vocabulary_cells(None, sizes) == [(), (), ()]
    y = np.array([-1.0, 2.0, 200.0, 500.0, 1.0, 0.0])  # A, B, Q, S, T, <other>; sigma 3
    cells = vocabulary_cells(_domain(), sizes)[:1]
    assert doubted_cells([(y, 3.0)], cells, 2.0) == [(4, 1, 0)]
    assert doubted_run([(y, 3.0)], cells, 2.0) == [(4,)]  # what a run would leave
    assert VOCABULARY_SIGMAS == 2.5


@pytest.mark.parametrize("seed", [0, 7, 13])
def test_no_record_in_an_empty_member_q_kept_and_the_same_charges(seed: int) -> None:
    """800 records in S and Q: the release holds none in A, B or T, keeps about 30% in Q,
    and makes the same charges as without the step (post-processing). Each empty member
    passes 2.5 sigma with probability about 0.6%; the seeds are fixed: without the step the
    noise put 12, 47 and 32 records in A, B or T (of seeds 0 to 29, 20 put some there and
    none of them kept any with the step; at 2 sigma one did)."""
    data = encode(_table(800, seed), _domain())
    on, off = _fit(data, seed), _fit(data, seed, empty_cells=None)
    port = _code_column(data, np.asarray(on.records.rows))
    assert not np.isin(port, EMPTY).any()
    assert 0.2 < (port == 2).mean() < 0.4
    assert np.isin(_code_column(data, np.asarray(off.records.rows)), EMPTY).sum() >= 5
    assert _charges(on) == _charges(off)


def test_neighbouring_tables_of_n_and_n_plus_one_under_add_remove() -> None:
    """Add one record (n = 800 and 801): both releases make the same charges with and
    without the step and hold no record in an empty member."""
    table = _table(801, 2)
    for t in (table.iloc[:800], table):
        data = encode(t.reset_index(drop=True), _domain())
        on, off = _fit(data, 5), _fit(data, 5, empty_cells=None)
        assert _charges(on) == _charges(off)
        assert not np.isin(_code_column(data, np.asarray(on.records.rows)), EMPTY).any()
    assert _charges(on)[0][0] == NOISY_N
