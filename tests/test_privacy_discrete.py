"""Exact discrete samplers (:mod:`dpquery.privacy.discrete`) against their exact distributions.

Every test is seeded. Each goodness-of-fit test rejects at p < 1e-6, so for a correct sampler
and a fresh seed it fails with probability 1e-6 (its false-failure rate).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpquery.privacy import PrivacyParameterError
from dpquery.privacy.discrete import (
    bernoulli_exp,
    discrete_laplace_pmf,
    discrete_laplace_tail,
    sample_discrete_laplace,
    uniform_below,
)
from dpquery.rng import make_rng

P_MIN = 1e-6


def chisquare_p(counts: np.ndarray, probs: np.ndarray) -> float:
    return float(stats.chisquare(counts, probs * counts.sum()).pvalue)


@pytest.mark.parametrize("m", [1, 2, 7, 256, 1000])
def test_uniform_below_is_uniform(m: int) -> None:
    # chi-square with m - 1 degrees of freedom over 20 * m (at least 2,000) draws
    rng = make_rng(m)
    draws = np.array([uniform_below(m, rng) for _ in range(max(2000, 20 * m))])
    assert draws.min() >= 0 and draws.max() < m
    if m > 1:
        assert chisquare_p(np.bincount(draws, minlength=m), np.full(m, 1 / m)) > P_MIN


def test_uniform_below_beyond_64_bits() -> None:
    # m = 3 * 2^70: the top bucket (values >= 2 * 2^70) holds a third of the mass
    m = 3 * 2**70
    rng = make_rng(5)
    draws = [uniform_below(m, rng) for _ in range(3000)]
    assert all(0 <= u < m for u in draws)
    buckets = np.bincount([u // 2**70 for u in draws], minlength=3)
    assert chisquare_p(buckets, np.full(3, 1 / 3)) > P_MIN


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_is_exact(gamma: Fraction) -> None:
    # two-sided binomial test of 20,000 draws against exp(-gamma)
    rng = make_rng(int(10 * gamma))
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(20_000))
    p = math.exp(-float(gamma))
    if gamma == 0:
        assert hits == 20_000
    else:
        assert stats.binomtest(hits, 20_000, p).pvalue > P_MIN


@pytest.mark.parametrize(("num", "den"), [(1, 1), (3, 2), (10, 3), (1, 4)])
def test_discrete_laplace_matches_its_pmf(num: int, den: int) -> None:
    # chi-square over the values |z| <= c (the tails beyond c lumped into two bins), where c
    # leaves about 1e-3 of the mass outside; 40,000 draws
    scale = Fraction(num, den)
    z = sample_discrete_laplace(num, den, 40_000, make_rng(num * 10 + den))
    assert z.dtype == np.int64
    c = max(1, math.ceil(float(scale) * math.log(2000)))
    support = np.arange(-c, c + 1)
    probs = discrete_laplace_pmf(support, scale)
    tail = discrete_laplace_tail(c + 1, scale) / 2
    expected = np.concatenate([[tail], probs, [tail]])
    assert expected.sum() == pytest.approx(1.0, abs=1e-12)
    counts = np.concatenate([[(z < -c).sum()], [(z == v).sum() for v in support], [(z > c).sum()]])
    assert chisquare_p(counts, expected) > P_MIN


def test_discrete_laplace_pmf_and_privacy_by_hand() -> None:
    """Scale t = 2: P(0) = (e^(1/2) - 1) / (e^(1/2) + 1) = tanh(1/4) = 0.2449186624; every
    ratio P(z) / P(z + 1) for z >= 0 is e^(1/2): on counts c and c + 1 (neighbours) the output
    probabilities differ by at most e^(1/t), i.e. the mechanism is (1/t)-DP, and exactly that
    on every output at or above c + 1."""
    t = Fraction(2)
    assert discrete_laplace_pmf(0, t) == pytest.approx(0.2449186624, rel=1e-9)
    z = np.arange(-30, 31)
    p_c, p_c1 = discrete_laplace_pmf(z, t), discrete_laplace_pmf(z - 1, t)
    ratios = np.log(p_c / p_c1)
    assert np.abs(ratios).max() == pytest.approx(0.5, abs=1e-12)
    assert ratios[z >= 1] == pytest.approx(-0.5, abs=1e-12)
    # P(|Z| >= m) = 2 e^(-m/t) / (1 + e^(-1/t)): m = 3, t = 2 gives 0.28125...
    assert discrete_laplace_tail(3, t) == pytest.approx(
        2 * math.exp(-1.5) / (1 + math.exp(-0.5)), rel=1e-12
    )
    tail = 1 - discrete_laplace_pmf(np.arange(-2, 3), t).sum()
    assert discrete_laplace_tail(3, t) == pytest.approx(tail, rel=1e-9)


def test_discrete_laplace_reproducible_and_checked() -> None:
    a = sample_discrete_laplace(7, 3, 50, make_rng(1))
    b = sample_discrete_laplace(7, 3, 50, make_rng(1))
    assert np.array_equal(a, b)
    assert sample_discrete_laplace(1, 1, 0, make_rng(1)).shape == (0,)
    # a rational scale with a large denominator (an epsilon given as a float) stays exact
    t = 1 / Fraction(0.0123)
    assert t.denominator > 2**40
    z = sample_discrete_laplace(t.numerator, t.denominator, 200, make_rng(2))
    assert z.dtype == np.int64 and np.abs(z).max() < 5_000
    for bad in [(0, 1, 1), (1, 0, 1), (1.5, 1, 1), (1, 1, -1)]:
        with pytest.raises(PrivacyParameterError):
            sample_discrete_laplace(*bad, rng=make_rng(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Generator"):
        sample_discrete_laplace(1, 1, 1, None)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="gamma"):
        bernoulli_exp(Fraction(-1), make_rng(0))
