"""Exact discrete samplers (:mod:`dpquery.privacy.discrete`, Canonne, Kamath and Steinke 2020,
Algorithms 1-3) against their exact distributions, their privacy formulas, and the integer
mechanisms built on them.

Every test is seeded. Two families of goodness-of-fit tests, each with its false-failure rate
(the probability that a correct sampler fails it for a fresh seed):

* those comparing with ``P_MIN`` reject at p < 1e-6 (false-failure rate 1e-6);
* those comparing with ``LEVEL`` (``chi_square_p``, pooling expected counts below 5) reject at
  p < 1e-3 (false-failure rate 1e-3). Each has a twin: samples at a parameter 10% off must be
  rejected by the same test (power: with these sample sizes the statistic's expectation is
  many times the critical value).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpquery.privacy import Budget, BudgetExceededError, Ledger, PrivacyParameterError
from dpquery.privacy.costs import ZCDP, PureDP
from dpquery.privacy.discrete import (
    bernoulli_exp,
    discrete_gaussian_pmf,
    discrete_gaussian_rho,
    discrete_laplace_epsilon,
    discrete_laplace_pmf,
    discrete_laplace_tail,
    rational_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    uniform_below,
)
from dpquery.privacy.integer_mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
)
from dpquery.rng import make_rng

P_MIN = 1e-6
LEVEL = 1e-3  # false-failure rate of each chi_square_p test on a correct sampler


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


def chi_square_p(samples: np.ndarray, pmf) -> float:
    """p-value of the chi-square test of ``samples`` against ``pmf`` (integers); values with
    expected count below 5 are pooled into two tail bins."""
    n = samples.size
    span = int(np.abs(samples).max()) + 50
    support = np.arange(-span, span + 1)
    expected = pmf(support) * n
    core = support[expected >= 5]
    first, last = int(core[0]), int(core[-1])
    inside = (samples >= first) & (samples <= last)
    observed = np.bincount(samples[inside] - first, minlength=last - first + 1)
    obs = [int((samples < first).sum()), *observed.tolist(), int((samples > last).sum())]
    in_core = (support >= first) & (support <= last)
    exp = np.array(
        [expected[support < first].sum(), *expected[in_core], expected[support > last].sum()]
    )
    exp *= n / exp.sum()  # the pmf is normalised over a support wide enough for float64
    keep = exp > 0
    return float(stats.chisquare(np.array(obs)[keep], exp[keep]).pvalue)


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3, 2), Fraction(7), Fraction(41, 4)])
def test_discrete_laplace_matches_its_pmf_not_a_wrong_scale(scale) -> None:
    x = sample_discrete_laplace(scale.numerator, scale.denominator, 60_000, make_rng(11))
    assert chi_square_p(x, lambda s: discrete_laplace_pmf(s, scale)) >= LEVEL
    # power: the claimed pmf of a scale 10% larger is rejected
    assert chi_square_p(x, lambda s: discrete_laplace_pmf(s, Fraction(1.1 * float(scale)))) < LEVEL


@pytest.mark.parametrize(
    "sigma2", [Fraction(1, 4), Fraction(9, 4), Fraction(50), Fraction(1001, 7)]
)
def test_discrete_gaussian_matches_its_pmf(sigma2) -> None:
    x = sample_discrete_gaussian(sigma2, 30_000, make_rng(12))
    assert x.dtype == np.int64 and x.shape == (30_000,)
    assert chi_square_p(x, lambda s: discrete_gaussian_pmf(s, float(sigma2))) >= LEVEL
    assert chi_square_p(x, lambda s: discrete_gaussian_pmf(s, 1.1 * float(sigma2))) < LEVEL


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), 4])
def test_bernoulli_exp_is_exact_at_level(gamma) -> None:
    rng = make_rng(13)
    n = 20_000
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(n))
    p = math.exp(-float(gamma))
    assert stats.binomtest(hits, n, p).pvalue >= LEVEL


def test_uniform_below_is_uniform_beyond_int64() -> None:
    m = 3 * 2**70  # needs the byte path; the top bits decide which third
    rng = make_rng(14)
    thirds = np.bincount([uniform_below(m, rng) // 2**70 for _ in range(30_000)], minlength=3)
    assert stats.chisquare(thirds).pvalue >= LEVEL and thirds.size == 3


def test_samplers_are_reproducible_and_validate() -> None:
    a = sample_discrete_gaussian(Fraction(5, 2), 50, make_rng(1))
    np.testing.assert_array_equal(a, sample_discrete_gaussian(Fraction(5, 2), 50, make_rng(1)))
    with pytest.raises(PrivacyParameterError, match="sigma2 must be positive"):
        sample_discrete_gaussian(0, 3, make_rng(0))
    with pytest.raises(PrivacyParameterError, match="scale_num"):
        sample_discrete_laplace(-1, 1, 3, make_rng(0))
    with pytest.raises(PrivacyParameterError, match="scale_num"):
        sample_discrete_laplace(math.inf, 1, 3, make_rng(0))  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="finite"):
        sample_discrete_gaussian(math.inf, 3, make_rng(0))
    with pytest.raises(PrivacyParameterError, match="gamma must be non-negative"):
        bernoulli_exp(-1, make_rng(0))
    assert rational_at_least(0.1) >= Fraction(0.1) and rational_at_least(0.1).denominator <= 2**20


def test_discrete_gaussian_rho_is_cks_theorem_4() -> None:
    # Delta^2 / (2 sigma^2), by hand: Delta = 1, sigma^2 = 1/2 -> 1; Delta = 3, sigma^2 = 9/4 -> 2
    assert discrete_gaussian_rho(1, Fraction(1, 2)) == 1.0
    assert discrete_gaussian_rho(3, Fraction(9, 4)) == 2.0
    # and the theorem itself, numerically: the Renyi divergence of N_Z(0, s2) from N_Z(D, s2)
    # is at most alpha * rho for every alpha (summed over the integers exactly enough)
    s2, delta = 2.25, 3
    x = np.arange(-400, 401)
    log_z = logsumexp(-(x**2) / (2 * s2))
    log_p, log_q = -(x**2) / (2 * s2) - log_z, -((x - delta) ** 2) / (2 * s2) - log_z
    rho = discrete_gaussian_rho(delta, Fraction(9, 4))
    for alpha in (1.5, 2.0, 4.0, 10.0):
        renyi = logsumexp(alpha * log_p + (1 - alpha) * log_q) / (alpha - 1)
        assert renyi <= alpha * rho + 1e-9


def test_discrete_laplace_epsilon_is_the_pmf_ratio() -> None:
    scale, delta = Fraction(5, 2), 2
    x = np.arange(-50, 51)
    ratio = np.log(discrete_laplace_pmf(x, scale) / discrete_laplace_pmf(x - delta, scale))
    assert np.abs(ratio).max() == pytest.approx(discrete_laplace_epsilon(delta, scale))
    assert discrete_laplace_epsilon(delta, scale) == 0.8


def test_integer_mechanisms_charge_then_add_integer_noise() -> None:
    counts = np.array([10, 0, 7])
    ledger = Ledger(Budget.zcdp(1.0))
    noisy = discrete_laplace_mechanism(
        counts, epsilon=0.5, sensitivity=3, rng=make_rng(0), ledger=ledger
    )
    assert noisy.dtype == np.int64 and noisy.shape == (3,)
    assert ledger.entries[0].charge.cost == PureDP(0.5)
    g = discrete_gaussian_mechanism(counts, rho=0.1, sensitivity=2, rng=make_rng(0), ledger=ledger)
    assert g.dtype == np.int64 and ledger.entries[1].charge.cost == ZCDP(0.1)
    with pytest.raises(PrivacyParameterError, match="whole numbers"):
        discrete_laplace_mechanism(
            [0.5], epsilon=0.5, sensitivity=1, rng=make_rng(0), ledger=ledger
        )
    small = Ledger(Budget.pure(0.1))
    with pytest.raises(BudgetExceededError):
        discrete_laplace_mechanism(
            counts, epsilon=0.5, sensitivity=1, rng=make_rng(0), ledger=small
        )
    assert small.entries == ()
