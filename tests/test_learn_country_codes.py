"""Country codes (ISO 3166-1 alpha-2 and alpha-3) as classes of the private membership test
(:func:`dpquery.domain_learning.membership_test`, docs/learn.md "Country codes"): the lists
and the classes by hand, the histogram's L2 sensitivity with the codes on neighbouring
tables, the code classes' own stream (the other classes' noise is that of the test without
them), the charges (none beyond the profile's), seeded rates with their false-failure rates,
a column mostly of codes, and the older groups' rule not read off the listed codes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_membership import (  # the same learning
    _charges,
    _learn,
    learned_neighbours,
    neighbour_moves,
)

from dpquery import domain_learning
from dpquery.data.domain import Categorical, Domain
from dpquery.data.place_names import COUNTRY_CODES_2, COUNTRY_CODES_3
from dpquery.domain_learning import (
    CODE_VOCABULARIES,
    class_counts,
    membership_classes,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

A2 = [s[0] for s in COUNTRY_CODES_2]
A3 = [s[0] for s in COUNTRY_CODES_3]


def _index(vocabulary: str, case: str = "none") -> int:
    return membership_classes().index((vocabulary, case))


# == the lists and the classes, by hand ===========================================================


def test_the_lists_are_the_iso_codes_one_slot_each() -> None:
    """249 codes of ISO 3166-1 and Kosovo's, one spelling a slot, alpha-2 and alpha-3 in the
    same order (a country's two codes at one index)."""
    assert len(A2) == len(A3) == 250 and len(set(A2)) == len(set(A3)) == 250
    assert all(len(s) == 1 for s in (*COUNTRY_CODES_2, *COUNTRY_CODES_3))
    assert all(len(c) == 2 and c.isupper() and c.isalpha() for c in A2)
    assert all(len(c) == 3 and c.isupper() and c.isalpha() for c in A3)
    pairs = dict(zip(A2, A3, strict=True))
    assert pairs["AT"] == "AUT" and pairs["NA"] == "NAM" and pairs["GB"] == "GBR"
    assert pairs["US"] == "USA" and pairs["XK"] == "XKX" and pairs["TW"] == "TWN"


def test_the_code_classes_are_the_last_and_a_code_counts_in_the_first_class_holding_it() -> None:
    """``AT`` and ``AUT`` count as codes; ``CA`` (a USPS code first), ``USA`` (a spelling of
    the United States among the country names) in the earlier class; ``at`` (a code is
    matched in capitals only) and an aggregate of no list (``EUU``) in none."""
    assert membership_classes()[-2:] == tuple((v, "none") for v in CODE_VOCABULARIES)
    keys = {"AT": 5, "AUT": 7, "CA": 3, "USA": 2, "at": 11, "EUU": 13, "NAM": 1}
    c = class_counts(keys)
    assert c[_index(CODE_VOCABULARIES[0])] == 5
    assert c[_index(CODE_VOCABULARIES[1])] == 7 + 1
    assert c[_index("US state codes")] == 3
    assert c[_index("country names", "upper")] == 2  # written upper: that class first
    assert c.sum() == 5 + 7 + 1 + 3 + 2


def _cells(values: list[Any]) -> np.ndarray:
    """The profile's cells (missing, numbers, ISO dates) and the classes of one column."""
    col = domain_learning._read(pd.Series(values, dtype=object))
    return np.concatenate([[col.missing, col.numbers.size, col.times.size],
                           class_counts(col.keys)])  # fmt: skip


POOL = ["AT", "DE", "CA", "AUT", "DEU", "USA", "Ohio", "EUU", "12", None, "xyz", "2020-01-01"]


@pytest.mark.parametrize("seed", range(3))
def test_the_histogram_with_the_codes_moves_by_l2_1_or_sqrt2(seed) -> None:
    """One record in one cell, the code classes with the others: adding or removing a record
    moves the profile's cells and the classes by at most L2 1, replacing one by at most
    ``sqrt(2)``; 200 random neighbours a seed, some of them reaching each bound."""
    add, rep = neighbour_moves(POOL, _cells, seed)
    assert max(add) == 1.0 and max(rep) == pytest.approx(math.sqrt(2))


# == the code classes' own stream =================================================================


def _ctx(vocab: int, codes: int) -> Any:
    return domain_learning._Context(
        np.random.default_rng(0), Ledger(Budget.zcdp(1.0)), 16, 1e-10, 1000,
        vocab_rng=np.random.default_rng(vocab), codes_rng=np.random.default_rng(codes), l2=1.0,
    )  # fmt: skip


def test_the_other_classes_noise_is_drawn_as_without_the_codes() -> None:
    """The older classes' noise is the first ``k - 2`` draws of the membership stream, as
    before the codes were added (by hand: the largest noisy class of a column of 1,000 made-up
    words is that of ``counts[:k-2] + sample_discrete_gaussian(sigma2, k - 2, stream)``, the
    code classes' noise left aside), whatever the codes' stream; so a column of no code is
    learned byte for byte as before unless a code class's noise alone wins."""
    words = [f"w{i % 200:03d}" for i in range(1000)]
    col = domain_learning._read(pd.Series(words, dtype=object))
    sel = domain_learning.Selection({}, discrete_gaussian_sigma2(0.01, 1.0), 90, 0.01, 1e-10)
    k = len(membership_classes())
    sigma2 = discrete_gaussian_sigma2(0.001, 1.0)
    older = class_counts(col.keys)[: k - 2] + sample_discrete_gaussian(
        sigma2, k - 2, np.random.default_rng(1)
    )
    seen = []
    for codes in range(5):
        found = domain_learning.membership_test(col, sel, 1000, 0.001, _ctx(1, codes))
        assert found is not None and found.vocabulary is None
        seen.append(found.noisy["membership_max"])
    # the code classes' noise (sd 22) tops the older classes' largest on some streams only:
    # where it does not, the report is the older classes' largest, by hand
    assert int(older.max()) in seen
    assert all(m >= int(older.max()) for m in seen)


# == the learning =================================================================================


def _codes(n: int, seed: int, codes: list[str], share: float = 1.0) -> pd.DataFrame:
    """``n`` records: ``code`` one of ``codes`` with probability ``share``, else one of 60
    made-up aggregates (``Q00`` to ``Q59``: no list holds them); ``x`` a number."""
    rng = np.random.default_rng(seed)
    other = np.array([f"Q{i:02d}" for i in range(60)], dtype=object)
    code = np.where(rng.random(n) < share, rng.choice(np.array(codes, dtype=object), n),
                    rng.choice(other, n))  # fmt: skip
    return pd.DataFrame({"code": code, "x": rng.normal(50, 10, n).round(1)})


def _listed(domain: Domain, codes: list[str]) -> bool:
    attr = domain["code"]
    return isinstance(attr, Categorical) and set(codes) <= set(attr.values)


def test_a_column_of_codes_lists_every_code_as_a_plain_value() -> None:
    """1,000 records of 250 alpha-3 codes (4 each): no code reaches the selection's threshold;
    the alpha-3 class wins and lists the 250 codes as plain values (the release tests each),
    none by rule: ``MAR`` (Morocco) adds no month, the catch-all after them."""
    domain, report, _ = _learn(_codes(1000, 0, A3), 3)
    code = domain["code"]
    assert isinstance(code, Categorical)
    assert set(code.values) == {*A3, "<other>"} and not code.by_rule
    assert set(code.listed) == set(A3) and "JAN" not in code.values
    assert report.columns[0].noisy["membership_class"] == "country codes, ISO 3166-1 alpha-3/none"
    two, _, _ = _learn(_codes(1000, 1, A2), 3)
    assert set(two["code"].values) == {*A2, "<other>"}


def test_the_charges_are_the_same_as_without_the_codes(monkeypatch) -> None:
    """The code classes are cells of the profile's histogram, under its charge: the ledger
    holds the same charges whether the test fires or not (the test turned off), and every
    other column is learned from the same draws."""
    df = _codes(1000, 2, A2)
    domain, _, ledger = _learn(df, 4)
    monkeypatch.setattr(domain_learning, "MEMBERSHIP_OTHER_SHARE", math.inf)
    off, _, ledger_off = _learn(df, 4)
    assert _charges(ledger) == _charges(ledger_off)
    assert _listed(domain, A2) and not _listed(off, A2) and off["x"] == domain["x"]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_neighbouring_tables_fire_alike_with_the_same_charges(neighbours) -> None:
    (da, _, la), (db, _, lb) = learned_neighbours(_codes(1001, 5, A3), 6, neighbours)
    assert _listed(da, A3) and _listed(db, A3) and _charges(la) == _charges(lb)


def test_seeded_rates_codes_fire_mixed_columns_by_their_share() -> None:
    """Seeds 0 to 9 (fixed): at the classes' noise (sd 27, sigma^2 731.0 at this rho and two
    columns), a column of alpha-2 codes holds about 880 of 1,000 records in its class (the
    USPS codes ``CA``, ``IN``, ... count in theirs), 14 sd above half the noisy non-missing
    count: it fires on all ten (failure below 1e-30 a seed); 80% codes and 20% aggregates
    (about 700 in the class, 7 sd above half) fires on all ten (below 1e-11 a seed); 30%
    codes (about 260, 9 sd below half) on none (below 1e-18 a seed); a column of aggregates
    alone (no code) on none (an empty class passes 4 sd with probability 3.2e-5 and must
    hold half the records). False-failure rate of the whole test below 1e-10."""
    for s in range(10):
        assert _listed(_learn(_codes(1000, s, A2), s)[0], A2)
        mostly = _learn(_codes(1000, s, A3, share=0.8), s)[0]
        assert _listed(mostly, A3) and not {f"Q{i:02d}" for i in range(60)} & set(
            mostly["code"].values
        )  # the aggregates: the catch-all
        assert not _listed(_learn(_codes(1000, s, A3, share=0.3), s)[0], A3)
        assert not _listed(_learn(_codes(1000, s, A3, share=0.0), s)[0], A3)
