"""The fit pool's draw of heads that hold most of the drawn items (``fit.inclusion_chances``,
``fit.systematic_heads``, ``fit.head_pool``'s wide pools; docs/wide.md, "The pool's long
heads by inclusion chance"): chances ``min(1, lambda c_k)`` summing to the head size, met
exactly by systematic sampling on a random order, and pools whose heads are short left to
the co-occurrence draw.

The statistical tests are seeded. Each candidate's head is drawn on its own, so an item's
number of heads among ``B`` is Binomial(``B``, ``pi_k``); a test fails where an item's
standardised count passes 5 (two-sided chance 5.7e-7 an item, under 1e-4 over the items
tested)."""

from __future__ import annotations

import numpy as np
import pytest

from dpquery.algorithms.wide import fit
from dpquery.algorithms.wide.kernels import draw_heads

Z = 5.0


def _within(counts: np.ndarray, pi: np.ndarray, trials: int) -> float:
    """The largest standardised deviation of Binomial counts from ``trials * pi`` (the
    items strictly between 0 and 1)."""
    inner = (pi > 0) & (pi < 1)
    sd = np.sqrt(trials * pi[inner] * (1 - pi[inner]))
    return float((np.abs(counts[inner] - trials * pi[inner]) / sd).max())


def test_inclusion_chances_by_hand() -> None:
    # c = (4, 2, 1, 1, 0), a = 3: lambda = 3/8 puts item 0 at 1.5, held at 1; then 2 over
    # (2, 1, 1) puts item 1 at 1, held; then 1 over (1, 1): 0.5 each; item 4 at 0
    pi = fit.inclusion_chances(np.array([4.0, 2.0, 1.0, 1.0, 0.0]), 3)
    np.testing.assert_allclose(pi, [1.0, 1.0, 0.5, 0.5, 0.0])
    # nothing past 1: proportional to the counts
    pi = fit.inclusion_chances(np.array([3.0, 2.0, 1.0, 2.0]), 2)
    np.testing.assert_allclose(pi, [0.75, 0.5, 0.25, 0.5])
    # every positive item
    np.testing.assert_allclose(fit.inclusion_chances(np.array([5.0, 0.0, 1.0]), 2), [1.0, 0.0, 1.0])


def test_inclusion_chances_sum_to_the_size_and_stay_in_0_1() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        c = rng.gamma(0.5, 1.0, 40) * (rng.random(40) < 0.9)
        a = int(rng.integers(1, int((c > 0).sum()) + 1))
        pi = fit.inclusion_chances(c, a)
        assert pi.sum() == pytest.approx(a)
        assert (pi >= 0).all() and (pi <= 1).all() and (pi[c == 0] == 0).all()
        free = (pi > 0) & (pi < 1)
        if free.sum() > 1:  # the items below 1 in proportion to their counts
            ratio = pi[free] / c[free]
            np.testing.assert_allclose(ratio, ratio[0])


def test_inclusion_chances_refuse_a_head_past_the_positive_items() -> None:
    with pytest.raises(ValueError, match="head of 3 items needs 3 items of positive count, got 2"):
        fit.inclusion_chances(np.array([1.0, 0.0, 2.0]), 3)


def test_systematic_heads_meet_their_inclusion_chances() -> None:
    rng = np.random.default_rng(11)
    c = rng.gamma(1.0, 1.0, 60)
    c[:4] = 40.0  # held at 1
    c[-2:] = 0.0  # never drawn
    pi = fit.inclusion_chances(c, 40)
    B = 20_000
    heads = fit.systematic_heads(pi, rng.random((B, 60)), rng.random(B))
    assert heads.shape == (B, 40)
    assert (np.diff(heads, axis=1) > 0).all()  # distinct items, sorted
    counts = np.bincount(heads.ravel(), minlength=60)
    assert (counts[pi == 1] == B).all() and (counts[pi == 0] == 0).all()
    assert _within(counts, pi, B) < Z
    # a random order: the two commonest fractional items are together in some heads and
    # apart in others (a fixed order would fix their pair)
    top = np.argsort(-np.where(pi < 1, pi, 0))[:2]
    both = np.isin(heads, top).sum(axis=1) == 2
    assert 0 < both.mean() < 1


def test_systematic_heads_of_whole_chances_hold_exactly_those_items() -> None:
    rng = np.random.default_rng(2)
    heads = fit.systematic_heads(np.array([1.0, 0.0, 1.0, 0.0]), rng.random((5, 4)), rng.random(5))
    np.testing.assert_array_equal(heads, np.tile([0, 2], (5, 1)))


def test_a_wide_pool_meets_the_chances_where_the_one_at_a_time_draw_flattens_them() -> None:
    rng = np.random.default_rng(5)
    K, a = 50, 40
    c = np.linspace(0.3, 1.0, K) * 1000  # shares of 1,000 records
    pairs = np.outer(c, c) / 1000
    sizes = np.zeros(K + 1)
    sizes[a] = 1.0  # every head holds 40 of the 50 items: a wide pool
    pool, _ = fit.head_pool(c, pairs, sizes, 10_000, rng)
    B = pool.shape[0] - 1
    counts = np.bincount(pool.indices, minlength=K)
    pi = fit.inclusion_chances(c, a)
    assert _within(counts, pi, B) < Z
    # the co-occurrence draw of the same heads: its commonest item's share far under its
    # chance (flattened toward a / K = 0.8); the test above is one that can fail
    q = c / c.sum()
    cond = np.maximum(pairs, 0.0) / c[:, None]
    np.fill_diagonal(cond, 0.0)
    old = draw_heads(q, cond, 0.3, rng.random((a, 4096)))
    share = np.bincount(old.ravel(), minlength=K) / 4096
    assert pi[-1] - share[-1] > 0.05


def test_a_pool_of_short_heads_keeps_the_co_occurrence_draw() -> None:
    # heads of 10 of 50 items (under WIDE_HEADS): the rows are draw_heads' on the same stream
    K, a = 50, 10
    c = np.linspace(0.3, 1.0, K) * 1000
    pairs = np.outer(c, c) / 1000
    sizes = np.zeros(K + 1)
    sizes[0], sizes[a], sizes[45] = 0.5, 0.45, 0.05  # a few long heads, the mean short
    pool, _ = fit.head_pool(c, pairs, sizes, 500, np.random.default_rng(8))
    rng = np.random.default_rng(8)
    q = c / c.sum()
    cond = np.maximum(pairs, 0.0) / c[:, None]
    np.fill_diagonal(cond, 0.0)
    m10 = int(np.ceil(500 * 0.45))
    m45 = max(int(np.ceil(500 * 0.05)), 32)
    first = draw_heads(q, cond, 0.3, rng.random((a, m10)))
    second = draw_heads(q, cond, 0.3, rng.random((45, m45)))
    np.testing.assert_array_equal(pool.indices, np.concatenate([first.ravel(), second.ravel()]))
