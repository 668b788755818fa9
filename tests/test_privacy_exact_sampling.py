"""The exponential mechanism's sampler is exact: its rejection step keeps the ideal
distribution whichever way each acceptance is decided (float fast path, exact decimal path,
or many rejections), so there is no floating-point allowance to add to delta.

Chi-square tests at level 1e-3 (false-failure rate 1e-3 over the seed; seeds are fixed)."""

from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax

import dpquery.privacy.sampling as sampling
from dpquery.privacy.sampling import proposal_bits, sample_from_log_weights
from dpquery.rng import make_rng

LEVEL = 1e-3
LOGW = np.array([0.0, -0.3, -1.0, -2.5, 0.7, -np.inf, -4.0, 0.69])


def chi_square_p(draws: np.ndarray, logw: np.ndarray) -> float:
    p = softmax(logw)
    keep = p > 0
    observed = np.bincount(draws, minlength=logw.size)
    assert observed[~keep].sum() == 0  # zero-weight items are never drawn
    return float(stats.chisquare(observed[keep], p[keep] * draws.size).pvalue)


def test_fast_path_matches_the_target() -> None:
    draws = sample_from_log_weights(LOGW, 200_000, make_rng(21))
    assert chi_square_p(draws, LOGW) >= LEVEL


def test_exact_path_matches_the_target(monkeypatch) -> None:
    # every acceptance within 50% of a_i goes to the exact decimal comparison
    monkeypatch.setattr(sampling, "DECIDE", 0.5)
    calls = []
    real = sampling._accept_exactly

    def counting(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(sampling, "_accept_exactly", counting)
    draws = sample_from_log_weights(LOGW, 20_000, make_rng(22))
    assert len(calls) > 5_000  # about half of the acceptances
    assert chi_square_p(draws, LOGW) >= LEVEL


def test_many_rejections_keep_the_target(monkeypatch) -> None:
    # with B = 1 the integer proposal is far from the target (V = 3 for the top item, 1 for
    # most others): the acceptance step alone restores the target
    monkeypatch.setattr(sampling, "proposal_bits", lambda n: 1)
    draws = sample_from_log_weights(LOGW, 100_000, make_rng(23))
    assert chi_square_p(draws, LOGW) >= LEVEL


def test_a_broken_acceptance_is_caught_by_the_same_test(monkeypatch) -> None:
    # power: without the acceptance step the draws follow that proposal, which the test
    # rejects (expected counts off by factors of about 6)
    monkeypatch.setattr(sampling, "proposal_bits", lambda n: 1)
    monkeypatch.setattr(sampling, "_accept", lambda idx, *a: np.ones(idx.size, dtype=bool))
    draws = sample_from_log_weights(LOGW, 100_000, make_rng(24))
    assert chi_square_p(draws, LOGW) < LEVEL


@pytest.mark.parametrize("gamma", [0.0, 0.25, 1.0, 37.5, 700.0])
def test_exact_acceptance_agrees_with_high_precision(gamma) -> None:
    bits, V = 20, 2**20 + 7
    e = Context(prec=80).exp(Decimal(-gamma))
    a = Fraction(e) * Fraction(2**bits, V)
    rng = make_rng(25)
    for u in rng.integers(0, 2**64, size=200, dtype=np.uint64).tolist():
        if abs(Fraction(u, 2**64) - a) > Fraction(1, 2**60):  # decided by the first 64 bits
            assert sampling._accept_exactly(u, gamma, V, bits, rng) == (Fraction(u, 2**64) < a)


def test_every_finite_item_can_be_proposed() -> None:
    # exp(-800) underflows to 0 in float64, but its ideal probability is not 0: the proposal
    # keeps a weight of 1 for it, and -inf alone gets 0
    logw = np.array([0.0, -800.0, -np.inf])
    bits = proposal_bits(logw.size)
    assert 3 * (math.ldexp(1 + sampling.MARGIN, bits) + 1) < 2**63
    draws = sample_from_log_weights(logw, 1000, make_rng(26))
    assert set(draws.tolist()) == {0}


def test_seeded_draws_are_reproducible() -> None:
    a = sample_from_log_weights(LOGW, 500, make_rng(5))
    np.testing.assert_array_equal(a, sample_from_log_weights(LOGW, 500, make_rng(5)))


@pytest.mark.parametrize("force_exact", [False, True], ids=["fast", "exact-path"])
def test_bernoulli_exp_neg_is_exact(monkeypatch, force_exact) -> None:
    # the DQRS rejection test's coin: one Bernoulli(exp(-gamma_j)) per entry
    if force_exact:
        monkeypatch.setattr(sampling, "DECIDE", 0.5)
    gamma = np.repeat([0.0, 0.1, 0.7, 1.0, 3.3], 20_000)
    coins = sampling.bernoulli_exp_neg(gamma, make_rng(27))
    assert coins.dtype == bool and coins.shape == gamma.shape
    for g in np.unique(gamma):
        hits = int(coins[gamma == g].sum())
        assert stats.binomtest(hits, 20_000, math.exp(-g)).pvalue >= LEVEL
    with pytest.raises(Exception, match="non-negative"):
        sampling.bernoulli_exp_neg([-0.1], make_rng(0))
