"""Exact integer samplers (Canonne, Kamath and Steinke 2020, Algorithms 1-3) against their
exact distributions, their privacy formulas, and the integer mechanisms built on them.

Distribution tests are chi-square goodness-of-fit tests against the exact pmf at level 1e-3:
a correct sampler fails one with probability 1e-3 over the seed (every seed here is fixed, so
the outcome is reproducible). Each has a twin: samples at a parameter 10% off must be rejected
by the same test (power: with these sample sizes the statistic's expectation is many times
the critical value)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpquery.privacy import Budget, BudgetExceededError, Ledger
from dpquery.privacy.costs import ZCDP, PureDP
from dpquery.privacy.discrete_gaussian import (
    bernoulli_exp_neg,
    discrete_gaussian_pmf,
    discrete_gaussian_rho,
    discrete_laplace_epsilon,
    rational_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    uniform_below,
)
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.integer_mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
)
from dpquery.rng import make_rng

LEVEL = 1e-3  # false-failure rate of each goodness-of-fit test on a correct sampler


def laplace_pmf(x: np.ndarray, scale: float) -> np.ndarray:
    r = math.exp(-1 / scale)
    return (1 - r) / (1 + r) * r ** np.abs(x)


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
def test_discrete_laplace_matches_its_pmf(scale) -> None:
    x = sample_discrete_laplace(scale, 60_000, make_rng(11))
    assert chi_square_p(x, lambda s: laplace_pmf(s, float(scale))) >= LEVEL
    # power: the claimed pmf of a scale 10% larger is rejected
    assert chi_square_p(x, lambda s: laplace_pmf(s, 1.1 * float(scale))) < LEVEL


@pytest.mark.parametrize(
    "sigma2", [Fraction(1, 4), Fraction(9, 4), Fraction(50), Fraction(1001, 7)]
)
def test_discrete_gaussian_matches_its_pmf(sigma2) -> None:
    x = sample_discrete_gaussian(sigma2, 30_000, make_rng(12))
    assert x.dtype == np.int64 and x.shape == (30_000,)
    assert chi_square_p(x, lambda s: discrete_gaussian_pmf(s, float(sigma2))) >= LEVEL
    assert chi_square_p(x, lambda s: discrete_gaussian_pmf(s, 1.1 * float(sigma2))) < LEVEL


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), 4])
def test_bernoulli_exp_neg_is_exact(gamma) -> None:
    rng = make_rng(13)
    n = 20_000
    hits = sum(bernoulli_exp_neg(gamma, rng) for _ in range(n))
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
    with pytest.raises(PrivacyParameterError, match="scale"):
        sample_discrete_laplace(-1, 3, make_rng(0))
    with pytest.raises(PrivacyParameterError, match="finite"):
        sample_discrete_laplace(math.inf, 3, make_rng(0))
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
    ratio = np.log(laplace_pmf(x, float(scale)) / laplace_pmf(x - delta, float(scale)))
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
