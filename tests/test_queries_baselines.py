"""Baselines (zeros, uniform, noise) and error metrics.

The DualQuery 2015 figures (Section 7): on biased-bits data (p_i ~ U[0,1], bit ~ Bernoulli(p_i))
with random 3-literal queries (each literal ``x = 1`` or ``x = 0`` with probability 1/2), a
literal holds with probability ``P ~ U[0,1]`` either way, so a query's expected answer is
``Z = P_a P_b P_c``. Zeros: error ``1 - Z`` on the 1/8 all-negative queries, ``Z`` otherwise:
``1/8 (1 - 1/8) + 7/8 (1/8) = 7/32``. Uniform (every answer 1/8): ``E|1/8 - Z|``. With
``-ln Z ~ Gamma(3)``, ``P(Z <= t) = t (1 + L + L²/2)``, ``L = ln(1/t)``, so
``E|c - Z| = 2 ∫_0^c P(Z <= t) dt = (7 + 18 ln 2 + 2 (ln 8)²) / 256 ≈ 0.10986`` for
``c = 1/8``. (The paper prints ``(ln 8)^3``, which gives 0.146; its own ``≈ 0.11`` and a
Monte Carlo check of 2e8 draws, 0.10987, agree with the square.) Empirical answers are
unbiased for Z, so the zeros expectation is exact; for uniform the binomial noise adds
about ``f_Z(1/8) E[Z(1-Z)] / n ≈ 1e-5`` at n = 20,000.

Tolerance: over 80 seeds of exactly this setup (n = 20,000, d = 3,000, 200,000 queries) the
statistics had standard deviations 0.00124 (zeros) and 0.00095 (uniform), mostly from the
finite number of biases p_i. The tests allow 5 standard deviations, a false-failure rate
below 1e-6 under the normal approximation; they would catch the 0.146 of the misprinted
formula or an error of 1/8 instead of 7/32 with margin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpquery.algorithms.baselines import (
    GaussianNoise,
    LaplaceNoise,
    UniformDistribution,
    ZerosDataset,
    l1_sensitivity,
    l2_sensitivity,
)
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Categorical, Domain
from dpquery.data.synthetic import biased_bits
from dpquery.errors import DPQueryError
from dpquery.evaluation import ErrorReport, error_report
from dpquery.privacy.costs import ZCDP, PureDP
from dpquery.queries import answer, marginal_cells, random_marginal_queries, random_parities

UNIFORM_EXPECTED = (7 + 18 * math.log(2) + 2 * math.log(8) ** 2) / 256


@pytest.fixture(scope="module")
def biased() -> tuple[BinaryData, object, np.ndarray]:
    d = 3000
    data = biased_bits(20_000, d, seed=2015)
    workload = random_marginal_queries(Domain.binary(d), 3, 200_000, seed=7)
    return data, workload, answer(workload, data)


def test_zeros_baseline_reproduces_7_32(biased) -> None:
    data, workload, true = biased
    result = ZerosDataset().fit(data, workload)
    assert result.charge is None and result.records is not None
    mean = error_report(true, result.answers, workload).mean_error
    assert abs(mean - 7 / 32) < 5 * 0.00124


def test_uniform_baseline_reproduces_0_11(biased) -> None:
    data, workload, true = biased
    result = UniformDistribution().fit(data, workload)
    assert (result.answers == 1 / 8).all()
    assert UNIFORM_EXPECTED == pytest.approx(0.10986, abs=1e-5)
    mean = error_report(true, result.answers, workload).mean_error
    assert abs(mean - UNIFORM_EXPECTED) < 5 * 0.00095


def test_uniform_over_one_hot_groups_is_analytic() -> None:
    domain = Domain((Categorical("a", tuple(range(4))), Categorical("b", tuple(range(3)))))
    data = BinaryData.from_dense(np.array([[1, 0, 0, 0, 0, 1, 0]], np.uint8), domain=domain)
    w = marginal_cells(domain, [("a", "b")])
    np.testing.assert_allclose(UniformDistribution().fit(data, w).answers, 1 / 12)


def test_noise_baselines_scale_and_cost() -> None:
    rng = np.random.default_rng(0)
    data = BinaryData.from_dense((rng.random((500, 40)) < 0.3).astype(np.uint8))
    w = random_parities(40, 3, 2000, seed=1)
    true = answer(w, data)
    assert l1_sensitivity(w, 500) == pytest.approx(2000 * 2 / 500)
    assert l2_sensitivity(w, 500) == pytest.approx(math.sqrt(2000) * 2 / 500)
    lap = LaplaceNoise(epsilon=50.0, seed=3).fit(data, w)
    assert lap.charge is not None and lap.charge.cost == PureDP(50.0)
    b = 2000 * 2 / 500 / 50.0
    assert lap.noise_scale == pytest.approx(b)
    # Laplace(b): E|noise| = b; the mean of 2000 has relative sd 2.2%; 10% is 4.5 sd
    assert np.abs(lap.answers - true).mean() == pytest.approx(b, rel=0.1)
    gauss = GaussianNoise(rho=2.0, seed=3).fit(data, w)
    sigma = math.sqrt(2000) * 2 / 500 / math.sqrt(2 * 2.0)
    assert gauss.charge is not None and gauss.charge.cost == ZCDP(2.0)
    assert np.std(gauss.answers - true) == pytest.approx(sigma, rel=0.1)  # sd 1.6%
    again = LaplaceNoise(epsilon=50.0, seed=3).fit(data, w).answers
    np.testing.assert_array_equal(again, lap.answers)
    with pytest.raises(DPQueryError, match="epsilon must be a positive finite number, got -1"):
        LaplaceNoise(epsilon=-1).fit(data, w)


def test_error_report_and_total_variation(tmp_path) -> None:
    domain = Domain((Categorical("a", (0, 1)), Categorical("b", (0, 1, 2))))
    w = marginal_cells(domain, [("a",), ("b",)])
    true = np.array([0.5, 0.5, 0.2, 0.3, 0.5])
    est = np.array([0.4, 0.6, 0.2, 0.5, 0.3])
    r = error_report(true, est, w)
    assert r.max_error == pytest.approx(0.2) and r.worst_query == 3
    assert r.mean_error == pytest.approx(0.6 / 5)
    assert r.rmse == pytest.approx(math.sqrt((0.01 + 0.01 + 0.04 + 0.04) / 5))
    assert r.n_marginals == 2
    assert r.max_tv == pytest.approx(0.2) and r.mean_tv == pytest.approx(0.15)
    back = ErrorReport.from_dict(r.to_dict())
    assert back == r and '"max_error"' in r.to_json()
    with pytest.raises(DPQueryError, match="shapes"):
        error_report(true, est[:3])


def test_noise_baselines_charge_the_ledger_before_drawing() -> None:
    from dpquery.privacy import Budget, BudgetExceededError, Ledger

    data = BinaryData.from_dense(np.eye(8, dtype=np.uint8))
    w = random_parities(8, 2, 50, seed=0)
    ledger = Ledger(Budget.pure(1.5))
    LaplaceNoise(epsilon=1.0, seed=0).fit(data, w, ledger)
    assert ledger.spent == pytest.approx(1.0)
    assert [e.charge.mechanism for e in ledger.entries] == ["laplace baseline"]
    with pytest.raises(BudgetExceededError):  # 1.0 more would exceed 1.5: refused, not drawn
        LaplaceNoise(epsilon=1.0, seed=0).fit(data, w, ledger)
    assert ledger.spent == pytest.approx(1.0) and len(ledger.entries) == 1
    zled = Ledger(Budget.zcdp(0.5))
    GaussianNoise(rho=0.5, seed=0).fit(data, w, zled)
    assert zled.spent == pytest.approx(0.5)
    with pytest.raises(BudgetExceededError):
        GaussianNoise(rho=0.1, seed=0).fit(data, w, zled)
