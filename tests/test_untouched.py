"""Untouched attributes: which they are, their exact counts, the measurement's charge and the
redraw (algorithms/untouched.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpquery.algorithms.untouched import (
    MECHANISM,
    Attribute,
    MeasuredMarginals,
    attributes_of,
    marginal_counts,
    measure_marginals,
    untouched_attributes,
)
from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.errors import BudgetExceededError
from dpquery.queries import Workload

# Bits: group A = 0:3, lone bit 3, group B = 4:6, lone bit 6.
GROUPS = np.array([[0, 3], [4, 6]])


def _data(seed: int = 0, n: int = 500) -> BinaryData:
    rng = np.random.default_rng(seed)
    dense = np.zeros((n, 7), dtype=np.uint8)
    dense[np.arange(n), rng.choice(3, n, p=[0.7, 0.2, 0.1])] = 1
    dense[:, 3] = rng.random(n) < 0.3
    dense[np.arange(n), 4 + rng.choice(2, n, p=[0.9, 0.1])] = 1
    dense[:, 6] = rng.random(n) < 0.8
    return BinaryData.from_dense(dense, GROUPS)


def _workload(*bit_lists: list[int]) -> Workload:
    bits = np.concatenate([np.asarray(b) for b in bit_lists])
    offsets = np.cumsum([0] + [len(b) for b in bit_lists])
    return Workload("conjunction", 7, offsets, bits, np.ones(bits.size, dtype=bool))


def test_attributes_are_groups_and_lone_bits_in_order() -> None:
    assert attributes_of(7, GROUPS) == [
        Attribute(0, 3),
        Attribute(3, 4),
        Attribute(4, 6),
        Attribute(6, 7),
    ]
    assert [a.size for a in attributes_of(7, GROUPS)] == [3, 2, 2, 2]


def test_an_attribute_is_touched_by_any_of_its_bits() -> None:
    # Bit 1 touches group A; bit 6 the last lone bit. Group B and bit 3 stay untouched.
    assert untouched_attributes(_workload([1], [6]), GROUPS) == [Attribute(3, 4), Attribute(4, 6)]
    assert untouched_attributes(_workload([0, 3, 5, 6]), GROUPS) == []


def test_marginal_counts_are_the_exact_category_counts() -> None:
    data = _data()
    dense = data.to_dense()
    want = np.concatenate(
        [
            dense[:, 0:3].sum(0),
            [(dense[:, 3] == 0).sum(), dense[:, 3].sum()],
            dense[:, 4:6].sum(0),
        ]
    )
    got = marginal_counts(data, [Attribute(0, 3), Attribute(3, 4), Attribute(4, 6)])
    np.testing.assert_array_equal(got, want)
    assert got[:3].sum() == data.n


def test_gaussian_charge_is_k_over_sigma_squared_and_made_before_the_draw() -> None:
    data = _data()
    ledger = Ledger(Budget.zcdp(1.0))
    attrs = [Attribute(3, 4), Attribute(4, 6)]
    measured = measure_marginals(data, attrs, rho=0.25, rng=np.random.default_rng(1), ledger=ledger)
    (entry,) = ledger.entries
    assert entry.charge.mechanism == MECHANISM
    assert math.isclose(ledger.spent, 0.25)
    for p in measured.probabilities:
        assert (p >= 0).all() and math.isclose(p.sum(), 1.0)
    # An over-budget charge is refused before anything is drawn: the rng is untouched.
    rng = np.random.default_rng(2)
    before = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        measure_marginals(data, attrs, rho=0.8, rng=rng, ledger=ledger)
    assert rng.bit_generator.state == before
    assert len(ledger.entries) == 1


def test_noise_scale_matches_the_joint_sensitivity() -> None:
    # k = 2 attributes at rho: sigma = sqrt(2k) / sqrt(2 rho) = sqrt(k / rho) on every count.
    # The sample sd of 4,000 repeated noise draws is within 5% of sigma with overwhelming
    # probability (relative sd of a sample sd ~ 1/sqrt(2 * 4000) = 1.1%; 5% is > 4 sd).
    data = _data()
    attrs = [Attribute(3, 4), Attribute(4, 6)]
    rho, k = 0.5, 2
    exact = marginal_counts(data, attrs)
    from dpquery.privacy import gaussian_mechanism

    rng = np.random.default_rng(3)
    draws = np.stack(
        [
            gaussian_mechanism(
                exact.astype(float),
                rho=rho,
                sensitivity=math.sqrt(2 * k),
                rng=rng,
                ledger=Ledger(Budget.zcdp(rho)),
            )
            for _ in range(4000)
        ]
    )
    assert abs(draws.std(axis=0).mean() / math.sqrt(k / rho) - 1) < 0.05


def test_laplace_path_is_charged_as_pure_dp() -> None:
    ledger = Ledger(Budget.pure(1.0))
    measure_marginals(
        _data(), [Attribute(0, 3)], epsilon=0.5, rng=np.random.default_rng(0), ledger=ledger
    )
    assert math.isclose(ledger.spent, 0.5)


def test_nothing_to_measure_costs_nothing() -> None:
    ledger = Ledger(Budget.zcdp(1.0))
    measured = measure_marginals(_data(), [], rho=0.5, rng=np.random.default_rng(0), ledger=ledger)
    assert measured.attributes == () and ledger.entries == ()


def test_exactly_one_of_rho_and_epsilon() -> None:
    ledger = Ledger(Budget.zcdp(1.0))
    with pytest.raises(DPQueryError, match="exactly one"):
        measure_marginals(_data(), [Attribute(0, 3)], rng=np.random.default_rng(0), ledger=ledger)


def test_fill_keeps_groups_one_hot_and_follows_the_marginal() -> None:
    # Chi-square goodness of fit of 20,000 redrawn values to p; false-failure rate 1e-6.
    p = np.array([0.6, 0.3, 0.1])
    q = np.array([0.25, 0.75])
    measured = MeasuredMarginals((Attribute(0, 3), Attribute(3, 4)), (p, q))
    rows = np.zeros((20_000, 7), dtype=np.uint8)
    rows[:, 2] = 1
    rows[:, 5] = 1
    out = measured.fill(rows, np.random.default_rng(4))
    assert (out[:, 0:3].sum(1) == 1).all()
    np.testing.assert_array_equal(out[:, 4:], rows[:, 4:])  # others unchanged
    counts = out[:, 0:3].sum(0)
    assert stats.chisquare(counts, p * len(out)).pvalue > 1e-6
    ones = int(out[:, 3].sum())
    assert stats.binomtest(ones, len(out), 0.75).pvalue > 1e-6
