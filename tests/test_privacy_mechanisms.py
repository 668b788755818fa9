"""Samplers and mechanisms: their distributions, their charges, and an empirical privacy audit.

Every test is seeded. Statistical tests state their false-failure rate: the probability, for a
correct implementation and a fresh seed, that the test fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp, softmax

from dpquery.privacy import (
    AboveThreshold,
    AccountingError,
    BasicComposition,
    Budget,
    BudgetExceededError,
    Ledger,
    PrivacyParameterError,
    PureDP,
    above_threshold,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
    sample_from_log_weights,
)
from dpquery.privacy.dualquery import dualquery_round_epsilon, dualquery_sample_round
from dpquery.rng import make_rng

P_MIN = 1e-6  # every goodness-of-fit test rejects at p < 1e-6: false-failure rate 1e-6 each


def big_ledger() -> Ledger:
    return Ledger(Budget.approx(1e12, 1e-6))


def chisquare_p(counts: np.ndarray, probs: np.ndarray) -> float:
    expected = probs * counts.sum()
    return float(stats.chisquare(counts, expected).pvalue)


# --- the log-weight sampler --------------------------------------------------------------------


def test_sampler_matches_target_distribution():
    # false-failure rate 1e-6 (chi-square, 11 degrees of freedom, 200,000 draws)
    rng = make_rng(1)
    probs = rng.dirichlet(np.ones(12))
    draws = sample_from_log_weights(np.log(probs), 200_000, rng)
    counts = np.bincount(draws, minlength=12)
    assert chisquare_p(counts, probs) > P_MIN


def test_sampler_stable_for_score_ranges_of_a_million():
    # log-weights 1e6, 1e6 - ln 2, -1e6, 3e6 - 1e7: probabilities 2/3, 1/3, 0, 0.
    # false-failure rate 1e-6 (chi-square on the two live items)
    rng = make_rng(2)
    logw = np.array([1e6, 1e6 - math.log(2), -1e6, 3e6 - 1e7])
    draws = sample_from_log_weights(logw, 100_000, rng)
    counts = np.bincount(draws, minlength=4)
    assert counts[2] == counts[3] == 0
    assert chisquare_p(counts[:2], np.array([2 / 3, 1 / 3])) > P_MIN
    # adding a constant of 1e6 changes nothing in distribution (same test, same rate)
    probs = np.array([0.5, 0.3, 0.2])
    shifted = sample_from_log_weights(np.log(probs) + 1e6, 100_000, rng)
    assert chisquare_p(np.bincount(shifted, minlength=3), probs) > P_MIN


def test_sampler_never_draws_zero_weight_items():
    rng = make_rng(3)
    logw = np.full(1000, -np.inf)
    logw[[0, 499, 998]] = [0.0, 1.0, 2.0]
    draws = sample_from_log_weights(logw, 50_000, rng)
    assert set(np.unique(draws)) <= {0, 499, 998}


@pytest.mark.parametrize(
    "bad",
    [np.array([0.0, np.nan]), np.array([0.0, np.inf]), np.full(3, -np.inf), np.zeros((2, 2)), []],
)
def test_sampler_rejects_bad_log_weights(bad):
    with pytest.raises(PrivacyParameterError, match="log_weights"):
        sample_from_log_weights(bad, 5, make_rng(0))


def test_sampler_requires_a_generator():
    with pytest.raises(TypeError, match="Generator"):
        sample_from_log_weights([0.0, 1.0], 3, 42)  # type: ignore[arg-type]


def test_sampler_is_reproducible_from_a_seed():
    logw = np.linspace(0, 5, 50)
    a = sample_from_log_weights(logw, 100, make_rng(11))
    b = sample_from_log_weights(logw, 100, make_rng(11))
    assert np.array_equal(a, b)


# --- mechanisms: distributions ------------------------------------------------------------------


def test_exponential_mechanism_distribution_and_charge():
    # false-failure rate 1e-6 (chi-square, 7 degrees of freedom)
    scores = np.array([0.0, 0.1, 0.5, 0.9, 1.0, 0.3, 0.7, 0.2])
    eps, sens = 4.0, 0.25
    ledger = big_ledger()
    draws = exponential_mechanism(
        scores, epsilon=eps, sensitivity=sens, rng=make_rng(5), ledger=ledger, size=100_000
    )
    probs = softmax(eps * scores / (2 * sens))
    assert chisquare_p(np.bincount(draws, minlength=8), probs) > P_MIN
    (entry,) = ledger.entries
    assert entry.charge.cost == PureDP(4.0, bounded_range=True) and entry.charge.count == 100_000


def test_laplace_mechanism_distribution():
    # false-failure rate 1e-6 (one-sample KS on 50,000 values)
    ledger = big_ledger()
    out = laplace_mechanism(
        np.full(50_000, 3.0), epsilon=0.5, sensitivity=2.0, rng=make_rng(6), ledger=ledger
    )
    assert stats.kstest(out, stats.laplace(loc=3.0, scale=4.0).cdf).pvalue > P_MIN
    assert ledger.entries[0].charge.cost == PureDP(0.5)


def test_gaussian_mechanism_distribution():
    # sigma = sensitivity / sqrt(2 rho) = 1 / sqrt(0.5) = 1.41421; false-failure rate 1e-6
    ledger = Ledger(Budget.zcdp(10.0))
    out = gaussian_mechanism(
        np.zeros(50_000), rho=0.25, sensitivity=1.0, rng=make_rng(7), ledger=ledger
    )
    assert stats.kstest(out, stats.norm(scale=math.sqrt(2.0)).cdf).pvalue > P_MIN
    assert ledger.spent == pytest.approx(0.25)


def test_report_noisy_max_distribution():
    # exact probabilities P(i wins) = int f(x - s_i) prod_{j != i} F(x - s_j) dx, b = 2 sens / eps
    # false-failure rate 1e-6 (chi-square, 2 degrees of freedom, 20,000 runs)
    scores = np.array([0.0, 0.5, 1.0])
    eps, sens = 1.0, 0.5
    b = 2 * sens / eps
    lap = stats.laplace(scale=b)

    def win(i):
        others = [j for j in range(3) if j != i]
        f = lambda x: lap.pdf(x - scores[i]) * np.prod([lap.cdf(x - scores[j]) for j in others])  # noqa: E731
        return integrate.quad(f, -40, 40, limit=200)[0]

    probs = np.array([win(i) for i in range(3)])
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    rng, ledger = make_rng(8), big_ledger()
    wins = [
        report_noisy_max(scores, epsilon=eps, sensitivity=sens, rng=rng, ledger=ledger)
        for _ in range(20_000)
    ]
    assert chisquare_p(np.bincount(wins, minlength=3), probs) > P_MIN


def test_above_threshold_distribution():
    # P(halt at i) = int f_rho(z) prod_{j<i} F_nu(T + z - v_j) (1 - F_nu(T + z - v_i)) dz with
    # rho ~ Lap(2 sens/eps), nu ~ Lap(4 sens/eps); "None" when no query clears the threshold.
    # false-failure rate 1e-6 (chi-square, 4 degrees of freedom, 20,000 runs)
    values = np.array([0.0, 1.0, 0.5, 2.0])
    thr, eps, sens = 1.5, 2.0, 0.5
    rho, nu = stats.laplace(scale=2 * sens / eps), stats.laplace(scale=4 * sens / eps)

    def prob(i):
        def f(z):
            below = np.prod([nu.cdf(thr + z - values[j]) for j in range(i)])
            last = 1.0 if i == len(values) else 1 - nu.cdf(thr + z - values[i])
            return rho.pdf(z) * below * last

        return integrate.quad(f, -30, 30, limit=200)[0]

    probs = np.array([prob(i) for i in range(len(values) + 1)])
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    rng, ledger = make_rng(9), big_ledger()
    runs = [
        above_threshold(values, thr, epsilon=eps, sensitivity=sens, rng=rng, ledger=ledger)
        for _ in range(20_000)
    ]
    counts = np.bincount([len(values) if r is None else r for r in runs], minlength=5)
    assert chisquare_p(counts, probs) > P_MIN
    assert len(ledger.entries) == 20_000  # epsilon once per run, however many queries


def test_above_threshold_online_halts_and_charges_once():
    ledger = Ledger(Budget.pure(1.0), BasicComposition())
    svt = AboveThreshold(0.0, epsilon=1.0, sensitivity=1e-3, rng=make_rng(10), ledger=ledger)
    assert ledger.spent == 1.0
    assert svt.test(-5.0) is False  # far below: noise scale 0.004
    assert svt.test(5.0) is True
    assert svt.halted and svt.queries_answered == 2
    with pytest.raises(AccountingError, match="halted"):
        svt.test(0.0)
    with pytest.raises(BudgetExceededError):  # the budget is spent: no second instance
        AboveThreshold(0.0, epsilon=0.1, sensitivity=1.0, rng=make_rng(0), ledger=ledger)


# --- mechanisms: charge before drawing ----------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda rng, led: exponential_mechanism(
            [0.0, 1.0], epsilon=2.0, sensitivity=1.0, rng=rng, ledger=led
        ),
        lambda rng, led: laplace_mechanism(
            [1.0], epsilon=2.0, sensitivity=1.0, rng=rng, ledger=led
        ),
        lambda rng, led: report_noisy_max(
            [0.0, 1.0], epsilon=2.0, sensitivity=1.0, rng=rng, ledger=led
        ),
        lambda rng, led: above_threshold(
            [0.0], 1.0, epsilon=2.0, sensitivity=1.0, rng=rng, ledger=led
        ),
    ],
)
def test_over_budget_mechanisms_draw_nothing(call):
    rng = make_rng(12)
    state = rng.bit_generator.state
    ledger = Ledger(Budget.pure(1.0))
    with pytest.raises(BudgetExceededError):
        call(rng, ledger)
    assert rng.bit_generator.state == state  # no noise was drawn
    assert ledger.entries == ()


def test_bad_inputs_cost_nothing():
    ledger = Ledger(Budget.pure(1.0))
    with pytest.raises(PrivacyParameterError, match="scores"):
        exponential_mechanism(
            [0.0, np.nan], epsilon=0.5, sensitivity=1.0, rng=make_rng(0), ledger=ledger
        )
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        laplace_mechanism([0.0], epsilon=0.0, sensitivity=1.0, rng=make_rng(0), ledger=ledger)
    with pytest.raises(PrivacyParameterError, match="log_weights"):
        dualquery_sample_round([np.nan], t=2, eta=1.0, s=3, n=10, rng=make_rng(0), ledger=ledger)
    with pytest.raises(TypeError, match="Generator"):
        laplace_mechanism([0.0], epsilon=0.5, sensitivity=1.0, rng=None, ledger=ledger)  # type: ignore[arg-type]
    assert ledger.entries == ()


# --- empirical privacy audit --------------------------------------------------------------------


def worst_log_ratio_lcb(a: np.ndarray, b: np.ndarray, n_outcomes: int, alpha: float) -> float:
    """A lower confidence bound on max_o |log P_D(o) / P_D'(o)| from outcome samples ``a`` (on D)
    and ``b`` (on D'). Clopper-Pearson bounds at level alpha / (4 K) for each of the K outcomes,
    both directions, lower and upper: by a union bound, with probability >= 1 - alpha every
    bound holds, and then the returned value is <= the true worst log ratio."""
    ca = np.bincount(a, minlength=n_outcomes)
    cb = np.bincount(b, minlength=n_outcomes)
    level = alpha / (4 * n_outcomes)

    def lower(c, n):
        return stats.beta.ppf(level, c, n - c + 1) if c > 0 else 0.0

    def upper(c, n):
        return stats.beta.ppf(1 - level, c + 1, n - c) if c < n else 1.0

    worst = -math.inf
    for o in range(n_outcomes):
        for x, y, nx, ny in ((ca[o], cb[o], a.size, b.size), (cb[o], ca[o], b.size, a.size)):
            lo = lower(x, nx)
            if lo > 0:
                worst = max(worst, math.log(lo) - math.log(upper(y, ny)))
    return worst


AUDIT_ALPHA = 1e-6  # each audit that should pass fails with probability <= 1e-6


def tiny_em_datasets():
    """n = 4 records over 4 bits, 10 counting queries (sensitivity 1/n), neighbours D, D'
    replacing (1,0,0,0) by (0,1,1,1): one query's answer drops by 1/n, the other nine's rise,
    which makes the exponential mechanism's privacy loss close to its bound."""
    common = np.zeros((3, 4), dtype=int)
    D = np.vstack([common, [1, 0, 0, 0]])
    Dp = np.vstack([common, [0, 1, 1, 1]])
    queries = [
        lambda X: X[:, 0] == 1,
        lambda X: X[:, 1] == 1,
        lambda X: X[:, 2] == 1,
        lambda X: X[:, 3] == 1,
        lambda X: X[:, 1] & X[:, 2],
        lambda X: X[:, 1] & X[:, 3],
        lambda X: X[:, 2] & X[:, 3],
        lambda X: X[:, 1] & X[:, 2] & X[:, 3],
        lambda X: X[:, 0] == 0,
        lambda X: (X[:, 0] == 0) & (X[:, 1] == 1),
    ]

    def answers(X):
        return np.array([np.mean(q(X)) for q in queries], dtype=float)

    return answers(D), answers(Dp), 1 / 4


def run_em(scores, *, epsilon, sensitivity, seed, runs=150_000):
    # `runs` independent seeded runs of the mechanism: draws are i.i.d., so one call with
    # size=runs is the same experiment as `runs` calls (and is charged as `runs` draws).
    return exponential_mechanism(
        scores,
        epsilon=epsilon,
        sensitivity=sensitivity,
        rng=make_rng(seed),
        ledger=big_ledger(),
        size=runs,
    )


def test_audit_exponential_mechanism_within_epsilon():
    # the true worst log ratio on these neighbours is 0.923 (exact, below); claimed epsilon = 1
    sD, sDp, sens = tiny_em_datasets()
    eps = 1.0
    exact_D = eps * sD / (2 * sens) - logsumexp(eps * sD / (2 * sens))
    exact_Dp = eps * sDp / (2 * sens) - logsumexp(eps * sDp / (2 * sens))
    assert np.abs(exact_D - exact_Dp).max() == pytest.approx(0.9234, abs=1e-4)
    a = run_em(sD, epsilon=eps, sensitivity=sens, seed=100)
    b = run_em(sDp, epsilon=eps, sensitivity=sens, seed=101)
    lcb = worst_log_ratio_lcb(a, b, len(sD), AUDIT_ALPHA)
    assert lcb <= eps  # false-failure rate <= 1e-6
    # and sharp enough to see most of the true 0.923: it sits about 5 standard errors (~0.1)
    # below the truth, so falling under 0.7 needs a 6.5-sigma deviation (rate ~1e-10)
    assert lcb > 0.7


def test_audit_catches_exponential_mechanism_with_halved_sensitivity():
    # a broken mechanism passes sensitivity / 2 while claiming epsilon = 1: its weights are
    # exp(eps * score / sens), true worst log ratio 1.92. The same audit must flag it. With
    # 150,000 runs per dataset the bound is about 1.9 - 0.1; missing it has probability << 1e-6.
    sD, sDp, sens = tiny_em_datasets()
    eps = 1.0
    a = run_em(sD, epsilon=eps, sensitivity=sens / 2, seed=102)
    b = run_em(sDp, epsilon=eps, sensitivity=sens / 2, seed=103)
    assert worst_log_ratio_lcb(a, b, len(sD), AUDIT_ALPHA) > eps


def dualquery_round_setup():
    """One DualQuery sampling round on neighbours: n = 3 records over 3 bits, the queries
    x_j = 1 and their negations (Algorithm 2's Q), t = 3 with best responses x^1 = x^2 = 111,
    and D = {000, 000, 111} vs D' = {000, 000, 000}. Log-weights -eta sum_{i<t}(q(x^i) - q(D))."""
    n, eta, t = 3, 0.5, 3
    best_responses = np.array([[1, 1, 1], [1, 1, 1]])

    def answers(X):
        q = X.mean(axis=0)
        return np.concatenate([q, 1 - q])

    def log_weights(X):
        return -eta * sum(answers(x[None, :]) - answers(X) for x in best_responses)

    D = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1]])
    Dp = np.zeros((3, 3), dtype=int)
    return log_weights(D), log_weights(Dp), n, eta, t


def dualquery_round_outcomes(logw, s, runs, seed):
    """``runs`` independent rounds of ``s`` samples each; a round's outcome is its multiset of
    queries, encoded as the sorted tuple in base ``K = |Q|`` (ids in ``[0, K^s)``)."""
    draws = sample_from_log_weights(logw, s * runs, make_rng(seed)).reshape(runs, s)
    draws.sort(axis=1)
    ids = draws @ (logw.size ** np.arange(s - 1, -1, -1))
    return ids, logw.size**s


def test_dualquery_round_goes_through_the_ledger():
    logw, _, n, eta, t = dualquery_round_setup()
    ledger = big_ledger()
    out = dualquery_sample_round(logw, t=t, eta=eta, s=2, n=n, rng=make_rng(0), ledger=ledger)
    assert out.shape == (2,)
    (entry,) = ledger.entries
    assert entry.charge.cost == PureDP(2 * eta * (t - 1) / n, bounded_range=True)
    assert entry.charge.count == 2


@pytest.mark.parametrize("broken", [False, True], ids=["claimed", "sensitivity-halved"])
def test_audit_dualquery_round(broken):
    # Claimed cost of a round of s = 2 samples: 2 * eps'_t, eps'_t = 2 eta (t-1)/n = 2/3
    # (proof of Theorem 4.2). True worst log ratios (exact): 0.560 per sample, 1.119 per round.
    # The broken accountant believes the score has sensitivity (t-1)/(2n) and claims eta (t-1)/n
    # = 1/3 per sample: the audit must then fail. False-failure rate of the claimed case
    # <= 1e-6 per audit; the broken case is detected with overwhelming probability (bounds
    # 1,000,000 runs: bounds about 0.53 and 1.07 against claims of 1/3 and 2/3, with standard
    # errors below 0.02, so a miss needs a deviation of more than 9 sigma).
    logw_D, logw_Dp, n, eta, t = dualquery_round_setup()
    per_sample = dualquery_round_epsilon(t, eta=eta, n=n)
    claimed = per_sample / 2 if broken else per_sample
    exact = np.abs((logw_D - logsumexp(logw_D)) - (logw_Dp - logsumexp(logw_Dp))).max()
    assert exact == pytest.approx(0.5596, abs=1e-4)

    runs = 1_000_000
    a1 = sample_from_log_weights(logw_D, runs, make_rng(200))
    b1 = sample_from_log_weights(logw_Dp, runs, make_rng(201))
    single = worst_log_ratio_lcb(a1, b1, logw_D.size, AUDIT_ALPHA)

    a2, k = dualquery_round_outcomes(logw_D, 2, runs, seed=202)
    b2, _ = dualquery_round_outcomes(logw_Dp, 2, runs, seed=203)
    joint = worst_log_ratio_lcb(a2, b2, k, AUDIT_ALPHA)
    if broken:
        assert single > claimed and joint > 2 * claimed
    else:
        assert single <= claimed and joint <= 2 * claimed
