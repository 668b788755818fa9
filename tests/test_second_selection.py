"""The second partition selection over what a categorical column's first did not release
(``dpquery.privacy.partition_selection.reselect_partitions``, ``docs/learn.md``): its
threshold against hand-computed tails, its charges before its draws, its accounting in a
learned domain on neighbouring tables under both relations, and the atoms' peak rule."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpquery.domain_learning import (
    LEARNING_NOISY_N_SHARE,
    SECOND_SHARE,
    SECOND_TAIL_SHARE,
    WITHIN_SHARE,
    _atoms,
    column_rho,
    learn_domain,
    second_plan,
)
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.discrete import discrete_gaussian_pmf
from dpquery.privacy.errors import BudgetExceededError
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import (
    PARTITION_SENSITIVITY,
    Selection,
    combined_tail,
    combined_threshold,
    combined_weights,
    discrete_gaussian_tail,
    held_counts,
    partition_delta,
    partition_threshold,
    reselect_partitions,
    select_partitions,
)


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


def brute_tail(t: float, s1: float, s2: float) -> float:
    """``P(a1 Z1 + a2 Z2 >= t)`` by a double sum over both supports (written apart from
    :func:`combined_tail`)."""
    a1, a2 = 1 / s1 / (1 / s1 + 1 / s2), 1 / s2 / (1 / s1 + 1 / s2)
    top1, top2 = math.ceil(40 * math.sqrt(s1) + 40), math.ceil(40 * math.sqrt(s2) + 40)
    z1, z2 = np.arange(-top1, top1 + 1), np.arange(-top2, top2 + 1)
    p1, p2 = discrete_gaussian_pmf(z1, s1), discrete_gaussian_pmf(z2, s2)
    grid = a1 * z1[:, None] + a2 * z2[None, :]
    return float((p1[:, None] * p2[None, :])[grid >= t - 1e-9].sum())


# --- the threshold ----------------------------------------------------------------------------
@pytest.mark.parametrize(("s1", "s2", "t"), [(4.0, 4.0, 3.0), (9.0, 2.0, 4.5), (2.5, 30.0, 6.0)])
def test_combined_tail_matches_a_double_sum(s1, s2, t):
    assert combined_tail(t, s1, s2) == pytest.approx(brute_tail(t, s1, s2), rel=1e-9, abs=1e-300)


def test_combined_weights_are_inverse_variance():
    a1, a2 = combined_weights(4.0, 12.0)  # 1/4 : 1/12 = 3 : 1
    assert (a1, a2) == pytest.approx((0.75, 0.25))


@pytest.mark.parametrize(
    ("s1", "s2", "d"), [(4.0, 4.0, 1e-3), (9.0, 2.0, 1e-6), (25.0, 100.0, 1e-9)]
)
def test_combined_threshold_is_the_smallest_integer_within_the_tail(s1, s2, d):
    tau = combined_threshold(s1, s2, d)
    assert brute_tail(tau, s1, s2) <= d < brute_tail(tau - 1, s1, s2)


def test_combined_threshold_hand_values():
    # equal variances: (Z1 + Z2) / 2, the threshold of a single selection at half the
    # variance, near enough (the sum of two discrete Gaussians is not one); a second round
    # of negligible weight leaves the first's threshold
    s = float(discrete_gaussian_sigma2(2.46e-4 * 0.63, PARTITION_SENSITIVITY))
    assert abs(combined_threshold(s, s, 4.5e-12) - partition_threshold(s / 2, 4.5e-12)) <= 1
    assert abs(combined_threshold(s, 1e9, 4.5e-12) - partition_threshold(s, 4.5e-12)) <= 1
    # s1 = s2 = 1: P((Z1 + Z2) / 2 >= 3) = P(Z1 + Z2 >= 6), summed by hand over the pmf
    z = np.arange(-60, 61)
    p = discrete_gaussian_pmf(z, 1.0)
    by_hand = sum(p[i] * p[j] for i in range(z.size) for j in range(z.size) if z[i] + z[j] >= 6)
    assert combined_tail(3.0, 1.0, 1.0) == pytest.approx(by_hand, rel=1e-9)


# --- the mechanism ----------------------------------------------------------------------------
COUNTS = {"a": 900, "b": 40, "c": 25, "d": 3}


def test_held_counts_draw_as_select_partitions():
    one = select_partitions(COUNTS, rho=0.05, delta_tail=1e-6, rng=np.random.default_rng(1),
                            ledger=big_ledger())  # fmt: skip
    two, held = held_counts(COUNTS, rho=0.05, delta_tail=1e-6, rng=np.random.default_rng(1),
                            ledger=big_ledger())  # fmt: skip
    assert one == two
    assert set(held) == set(COUNTS) - set(one.released)
    assert all(v < one.tau for v in held.values())


def test_reselect_charges_before_it_draws_and_skips_the_released():
    first, held = held_counts(COUNTS, rho=5e-4, delta_tail=1e-6, rng=np.random.default_rng(2),
                              ledger=big_ledger())  # fmt: skip
    assert "a" in first.released and "b" not in first.released
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        reselect_partitions(COUNTS, held, first, rho=2.0, delta_tail=1e-6, rng=rng,
                            ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert rng.bit_generator.state == state  # refused before any draw
    ledger = big_ledger()
    again = reselect_partitions(COUNTS, held, first, rho=2.0, delta_tail=1e-6, rng=rng,
                                ledger=ledger)  # fmt: skip
    assert [e.charge.cost.rho for e in ledger.entries] == [pytest.approx(2.0)]
    assert not set(again.released) & set(first.released)
    # at rho 2 (sd 1, against the first's 45) a key of 25 passes, one of 3 does not (seeded)
    assert "b" in again.released and "c" in again.released and "d" not in again.released
    s2 = discrete_gaussian_sigma2(2.0, PARTITION_SENSITIVITY)
    assert again.tau == combined_threshold(first.sigma2, s2, 1e-6)
    assert float(again.sigma2) == pytest.approx(1 / (1 / float(first.sigma2) + 1 / float(s2)))


def test_two_rounds_on_neighbours_within_the_stated_delta():
    """D holds key a c times; D' adds (or, under replace-one, swaps in) one record of a new
    key b. Exact release probabilities of the two rounds, per key, satisfy ``P[E | D] <= e^eps
    P[E | D'] + delta`` both ways at the rounds' summed rho and tails: b's release is the tail
    event of either round, a's is its count moved by 1."""
    rho1, rho2, t1, t2 = 0.3, 0.6, 1e-3, 1e-3
    s1 = float(discrete_gaussian_sigma2(rho1, PARTITION_SENSITIVITY))
    s2 = float(discrete_gaussian_sigma2(rho2, PARTITION_SENSITIVITY))
    tau1 = partition_threshold(s1, t1)
    tau2 = combined_threshold(s1, s2, t2)
    delta_conv = 1e-2
    eps = zcdp_to_epsilon(rho1 + rho2, delta_conv)
    delta = delta_conv + partition_delta(t1 + t2, eps)

    def released(c: int) -> float:  # P(a key of c records passes either round)
        first = discrete_gaussian_tail(tau1 - c, s1)
        a1, a2 = combined_weights(s1, s2)
        top = math.ceil(40 * math.sqrt(s1) + 40)
        z1 = np.arange(-top, top + 1)
        y1 = c + z1
        miss = y1 < tau1  # not released first: a second chance
        need = np.ceil((tau2 - a1 * y1) / a2 - 1e-9).astype(int) - c
        second = np.array([discrete_gaussian_tail(int(m), s2) for m in need[miss]])
        return first + float((discrete_gaussian_pmf(z1[miss], s1) * second).sum())

    for c in (tau2 - 3, tau2, tau1):
        p, q = released(c), released(c + 1)  # a moved by one (either relation)
        assert p <= math.exp(eps) * q + delta and q <= math.exp(eps) * p + delta
    # b: absent (never released) against one record
    p, q = 0.0, released(1)
    assert q <= delta and p <= math.exp(eps) * q + delta


# --- the learning -----------------------------------------------------------------------------
def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A text column with rare categories (the second selection's case), a common one and a
    number."""
    rng = np.random.default_rng(seed)
    rare = [f"r{i}" for i in range(6)]
    p = np.array([0.6, 0.3] + [0.1 / 6] * 6)
    return pd.DataFrame({
        "job": rng.choice(["clerk", "nurse", *rare], n, p=p),
        "sex": rng.choice(["F", "M"], n),
        "hours": rng.integers(1, 80, n).astype(str),
    })  # fmt: skip


@pytest.mark.parametrize("relation", [REPLACE_ONE, ADD_REMOVE])
def test_learning_accounts_the_second_selection_on_neighbours(relation):
    """On neighbouring tables (one record added, or one replaced) the learning charges the
    hand-computed shares: the columns their whole share of ``rho``, the second selection the
    pool ``second_rho`` split over the columns chosen; the tails split
    :data:`SECOND_TAIL_SHARE`; nothing over ``rho + second_rho``."""
    rho, delta = 0.01, 1e-9  # first threshold about 120 records, the rare jobs hold 100 each
    pool = SECOND_SHARE / (1 - WITHIN_SHARE) * rho  # as a release's learning splits them
    base = _table(6000)
    other = base.copy()
    other.loc[0, "job"] = "r0" if other.loc[0, "job"] != "r0" else "clerk"
    tables = (base, other) if relation == REPLACE_ONE else (base, base.iloc[1:])
    for df in tables:
        ledger = Ledger(Budget.zcdp(rho + pool))
        _, report = learn_domain(df, rho=rho, delta=delta, rng=np.random.default_rng(5),
                                 ledger=ledger, neighbours=relation, second_rho=pool)  # fmt: skip
        whole = column_rho(rho, 3, relation == ADD_REMOVE)
        assert report.second_pool_rho == pytest.approx(pool)
        seconds = [e.charge for e in ledger.entries if "second partition" in e.charge.mechanism]
        chosen = [c for c in report.columns if "second_rho" in c.noisy]
        assert [c.name for c in chosen] == ["job"]  # sex: nothing left out; hours: numeric
        assert [s.cost.rho for s in seconds] == [pytest.approx(pool * (1 - 1e-9))]
        assert report.second_spent_rho == pytest.approx(pool)
        job = chosen[0]
        assert job.rho == pytest.approx(whole + pool, rel=1e-6)
        assert all(c.rho <= whole for c in report.columns if c is not job)
        tail1 = (1 - SECOND_TAIL_SHARE) * delta / 3
        assert job.delta_tail == pytest.approx(tail1 + SECOND_TAIL_SHARE * delta)
        assert report.delta_tail <= delta * (1 + 1e-12)
        assert ledger.spent <= rho + pool
        n_rho = LEARNING_NOISY_N_SHARE * rho if relation == ADD_REMOVE else 0.0
        assert report.rho == pytest.approx(ledger.spent)
        assert report.noisy_n_rho == pytest.approx(n_rho)
        # the second selection's threshold is below the first's, and it released rare jobs
        # the first could not
        assert job.noisy["second_threshold"] < job.noisy["threshold"]
        assert job.noisy["second_released"] >= 1


def test_second_plan_drops_columns_that_cannot_pass_then_reshares():
    s1 = float(discrete_gaussian_sigma2(1e-4, PARTITION_SENSITIVITY))
    # a column with 1,000 records out and sd 50 passes; one with 100 out does not
    others = {"a": (1000.0, 50.0, s1), "b": (100.0, 50.0, s1), "c": (0.0, 50.0, s1)}
    assert second_plan(others, 3e-4, 1e-10) == ["a"]
    assert second_plan({}, 3e-4, 1e-10) == []


def test_small_tables_and_no_pool_leave_it_unspent():
    ledger = Ledger(Budget.zcdp(0.003))
    _, report = learn_domain(_table(1000), rho=0.002, delta=1e-9, rng=np.random.default_rng(6),
                             ledger=ledger, neighbours=ADD_REMOVE, second_rho=0.001)  # fmt: skip
    # small: no column the plan takes (jobs too rare for a second threshold) and no band
    assert report.second_unspent_rho == pytest.approx(0.001)
    assert not [e for e in ledger.entries if "second" in e.charge.mechanism]
    ledger = Ledger(Budget.zcdp(0.01))
    _, report = learn_domain(_table(6000), rho=0.01, delta=1e-9, rng=np.random.default_rng(6),
                             ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
    assert report.second_pool_rho == 0.0 and "second_pool_rho" not in report.to_dict()
    with pytest.raises(DPQueryError, match="second_rho"):
        learn_domain(_table(100), rho=0.01, delta=1e-9, rng=np.random.default_rng(6),
                     ledger=big_ledger(), second_rho=-1.0)  # fmt: skip


# --- atoms: a point mass stands above its neighbours ---------------------------------------------
def _probe(released: dict, tau: int = 100) -> Selection:
    return Selection(released, discrete_gaussian_sigma2(1.0, 1.0), tau, 1.0, 1e-9)


def test_atoms_need_a_peak_over_their_neighbours():
    # ages: consecutive values of like counts are no atoms; hours' 40 and 30 stand out
    ages = _probe({str(a): 500 + 10 * (a % 3) for a in range(20, 60)})
    assert _atoms(ages, 20000, 0) == []
    hours = _probe({"40": 9000, "39": 150, "30": 1000, "50": 1200, "51": 900})
    # 30: neighbours not released (count 0); 50 against 51: 1200 < 1.5 x 900
    assert _atoms(hours, 20000, 0) == [30.0, 40.0]
    # a value released alone (its neighbours below the threshold) is one, if frequent enough
    assert _atoms(_probe({"52": 420}, tau=300), 20000, 0) == [52.0]
    assert _atoms(_probe({"52": 390}, tau=300), 20000, 0) == []  # under ATOM_SHARE
    # decimals: a step of the precision
    money = _probe({"0.50": 5000, "0.51": 4900, "1.00": 6000})
    assert _atoms(money, 20000, 2) == [1.0]
