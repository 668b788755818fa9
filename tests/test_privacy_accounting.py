"""Formulas, conversions, accountants, calibration and the ledger, against hand-computed values.

No randomness here. The DualQuery anchors are the settings of DualQuery Section 6.2 (KDD99):
n = 494,021, eta = 1.2, T = 170, s = 1750, delta = 0.001.
"""

from __future__ import annotations

import itertools
import json
import math
import threading

import numpy as np
import pytest

from dpquery.errors import DPQueryError
from dpquery.privacy import (
    ZCDP,
    AccountingError,
    AdvancedComposition,
    BasicComposition,
    Budget,
    BudgetExceededError,
    CalibrationError,
    Charge,
    Composition,
    Ledger,
    PrivacyParameterError,
    PureDP,
    Tightest,
    ZCDPAccountant,
    all_accountants,
    fits,
    gaussian_rho,
    gaussian_sigma,
    largest_float,
    largest_integer,
    replace_one_rho,
    zcdp_rho_for,
)
from dpquery.privacy.composition import advanced_composition, advanced_composition_heterogeneous
from dpquery.privacy.conversions import (
    zcdp_delta_cks,
    zcdp_delta_standard,
    zcdp_epsilon_cks,
    zcdp_epsilon_standard,
)
from dpquery.privacy.costs import bounded_range_to_zcdp, pure_to_zcdp
from dpquery.privacy.dqrs import (
    dqrs_fresh_epsilon,
    dqrs_fresh_samples,
    dqrs_gamma,
    dqrs_max_rounds,
    dqrs_plan,
    dqrs_rejection_epsilon,
    dqrs_rho,
    dqrs_round_rho,
    dqrs_round_rho_as_printed,
)
from dpquery.privacy.dualquery import (
    dualquery_epsilon_heterogeneous,
    dualquery_epsilon_theorem_4_3,
    dualquery_max_eta,
    dualquery_max_rounds,
    dualquery_max_samples,
    dualquery_plan,
    dualquery_pure_epsilon,
    dualquery_rho,
    dualquery_round_epsilon,
    remark_4_7_epsilon,
    remark_4_7_parameters,
)
from dpquery.privacy.fem import (
    fem_max_epsilon0,
    fem_max_rounds,
    fem_plan,
    fem_rho,
    fem_round_epsilon,
    fem_round_rho,
)

KDD = {"eta": 1.2, "T": 170, "s": 1750, "n": 494_021}
DELTA = 1e-3


def kdd_totals():
    return Composition(dualquery_plan(**KDD)).totals()


# --- DualQuery anchors (Section 6.2) -----------------------------------------------------------


def test_theorem_4_2_pure_anchor():
    # eta T (T-1) s / n = 1.2 * 170 * 169 * 1750 / 494021 = 60,333,000 / 494,021 = 122.126
    eps = dualquery_pure_epsilon(**KDD)
    assert eps == pytest.approx(60_333_000 / 494_021, rel=1e-12)
    assert round(eps, 1) == 122.1
    assert BasicComposition().epsilon(kdd_totals(), 0.0) == pytest.approx(eps, rel=1e-12)


def test_theorem_4_3_as_printed_anchor():
    # eps' = 2 * 1.2 * 169 / 494021 = 8.210177e-4, k = s (T-1) = 295,750, ln(1/delta) = 6.907755
    # sqrt(2 k ln(1/delta)) = sqrt(4,085,937) = 2021.370, times eps' = 1.659581
    # k eps' (e^eps' - 1) = 295,750 * 8.210177e-4 * 8.213549e-4 = 0.199438
    # total 1.859019
    eps = dualquery_epsilon_theorem_4_3(**KDD, delta=DELTA)
    assert eps == pytest.approx(1.659581 + 0.199438, abs=2e-6)
    assert round(eps, 3) == 1.859
    # the same bound is Lemma 2.4 (every positive-cost sample at the largest epsilon) on the plan
    lemma = AdvancedComposition(heterogeneous=False).epsilon(kdd_totals(), DELTA)
    assert lemma == pytest.approx(eps, rel=1e-12)


def test_heterogeneous_advanced_composition_anchor():
    # sum_t s eps_t^2 = s (2 eta / n)^2 sum_{j=0}^{169} j^2
    #   = 1750 * 2.360107e-11 * 1,623,245 (= 169*170*339/6) = 0.0670431
    # sqrt(2 * 6.907755 * 0.0670431) = sqrt(0.926225) = 0.962411
    # sum_t s eps_t (e^eps_t - 1) = 0.0670638 (just above sum s eps_t^2)
    # total 1.029475: the paper's "(1, 0.001)" is in fact epsilon = 1.0295
    eps = dualquery_epsilon_heterogeneous(**KDD, delta=DELTA)
    assert eps == pytest.approx(0.962411 + 0.0670638, abs=2e-6)
    assert round(eps, 4) == 1.0295
    assert AdvancedComposition().epsilon(kdd_totals(), DELTA) == pytest.approx(eps, rel=1e-12)


def test_zcdp_lemma1_anchor():
    # rho = sum_t s eps_t^2 / 2 = 0.0670431 / 2 = 0.0335215
    # eps = rho + 2 sqrt(rho ln(1/delta)) = 0.0335215 + 2 sqrt(0.231558) = 0.0335215 + 0.962411
    #     = 0.995932
    rho = dualquery_rho(**KDD, bounded_range=False)
    assert rho == pytest.approx(0.0670431 / 2, rel=1e-5)
    eps = zcdp_epsilon_standard(rho, DELTA)
    assert eps == pytest.approx(0.0335215 + 0.962411, abs=2e-6)
    assert round(eps, 3) == 0.996
    acc = ZCDPAccountant(bounded_range=False, conversion="standard")
    assert acc.rho(kdd_totals()) == pytest.approx(rho, rel=1e-12)
    assert acc.epsilon(kdd_totals(), DELTA) == pytest.approx(eps, rel=1e-12)


def test_zcdp_bounded_range_anchor():
    # rho = 0.0670431 / 8 = 0.00838038; eps = 0.00838038 + 2 sqrt(0.00838038 * 6.907755)
    #     = 0.00838038 + 2 * 0.2406026 = 0.4895856
    rho = dualquery_rho(**KDD, bounded_range=True)
    assert rho == pytest.approx(0.0670431 / 8, rel=1e-5)
    eps = zcdp_epsilon_standard(rho, DELTA)
    assert eps == pytest.approx(0.00838038 + 2 * 0.2406026, abs=2e-6)
    assert round(eps, 3) == 0.490
    acc = ZCDPAccountant(bounded_range=True, conversion="standard")
    assert acc.epsilon(kdd_totals(), DELTA) == pytest.approx(eps, rel=1e-12)


def test_default_accountant_is_the_tightest_and_names_it():
    totals = kdd_totals()
    values = {a.key: a.epsilon(totals, DELTA) for a in all_accountants()}
    eps, member = Tightest().best(totals, DELTA)
    assert eps == min(values.values())
    assert member.key == "zcdp-br-cks"
    # CKS beats the standard conversion here: about 0.3196 < 0.4896
    assert 0.30 < eps < values["zcdp-br-standard"]


# --- the lemmas and conversions ------------------------------------------------------------


def test_lemma_2_4_hand_value():
    # k = 10, eps' = 0.1, ln(1/delta) = 2: sqrt(2*10*2) * 0.1 + 10 * 0.1 * (e^0.1 - 1)
    #   = 0.6324555 + 0.1051709 = 0.7376264
    assert advanced_composition(0.1, 10, math.exp(-2)) == pytest.approx(0.7376264, abs=1e-7)
    # heterogeneous form with equal epsilons is the same number
    het = advanced_composition_heterogeneous(10 * 0.01, 10 * 0.1 * math.expm1(0.1), math.exp(-2))
    assert het == pytest.approx(0.7376264, abs=1e-7)


def test_per_mechanism_zcdp_costs():
    assert pure_to_zcdp(0.2) == pytest.approx(0.02)  # Lemma 1: 0.2^2 / 2
    assert bounded_range_to_zcdp(0.2) == pytest.approx(0.005)  # 0.2^2 / 8
    assert gaussian_rho(2.0, 1.0) == pytest.approx(0.125)  # 1 / (2 * 4)
    assert gaussian_sigma(0.125, 1.0) == pytest.approx(2.0)


def test_standard_conversion_hand_values():
    # rho = 0.5, ln(1/delta) = 2: 0.5 + 2 sqrt(1) = 2.5; inverse exp(-(2.5-0.5)^2/2) = e^-2
    assert zcdp_epsilon_standard(0.5, math.exp(-2)) == pytest.approx(2.5)
    assert zcdp_delta_standard(0.5, 2.5) == pytest.approx(math.exp(-2))
    # largest rho for (eps, delta): (sqrt(L + eps) - sqrt(L))^2 = (sqrt(4.5) - sqrt(2))^2 = 0.5
    assert zcdp_rho_for(2.5, math.exp(-2), "standard") == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize(
    ("rho", "alpha"),
    [(1.0, 2.0), (0.01, 10.0), (0.25, 3.0)],
)
def test_cks_conversion_at_a_known_optimum(rho, alpha):
    # The optimal alpha for epsilon satisfies (2 alpha - 1) rho + ln(1 - 1/alpha) = epsilon, and
    # there delta = exp(-rho (alpha-1)^2) / alpha. rho = 1, alpha = 2: epsilon = 3 - ln 2 =
    # 2.3068528, delta = e^-1 / 2 = 0.1839397. rho = 0.01, alpha = 10: epsilon = 0.19 + ln 0.9 =
    # 0.0846395, delta = e^-0.81 / 10 = 0.0444858.
    eps = (2 * alpha - 1) * rho + math.log(1 - 1 / alpha)
    delta = math.exp(-rho * (alpha - 1) ** 2) / alpha
    # Corollary 13's general expression at this alpha gives the same delta
    general = math.exp((alpha - 1) * (alpha * rho - eps)) / (alpha - 1) * (1 - 1 / alpha) ** alpha
    assert general == pytest.approx(delta, rel=1e-12)
    assert zcdp_delta_cks(rho, eps) == pytest.approx(delta, rel=1e-9)
    assert zcdp_epsilon_cks(rho, delta) == pytest.approx(eps, rel=1e-9)
    if (rho, alpha) == (1.0, 2.0):
        assert eps == pytest.approx(2.3068528, abs=1e-7)
        assert delta == pytest.approx(0.1839397, abs=1e-7)


@pytest.mark.parametrize("rho", [1e-6, 1e-3, 0.0335, 0.5, 3.0, 50.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3, 0.1])
def test_cks_matches_brute_force_minimum_over_alpha(rho, delta):
    # Independent check: minimise Corollary 13's delta over a dense alpha grid at our epsilon.
    eps = zcdp_epsilon_cks(rho, delta)
    assert eps <= zcdp_epsilon_standard(rho, delta)
    if eps == 0:
        return
    alpha = 1 + np.geomspace(1e-6, 1e7, 400_000)
    log_d = (alpha - 1) * (alpha * rho - eps) + alpha * np.log1p(-1 / alpha) - np.log(alpha - 1)
    grid_delta = float(np.exp(log_d.min()))
    assert grid_delta == pytest.approx(delta, rel=1e-4)  # the conversion is tight, not loose
    assert grid_delta >= delta * (1 - 1e-9)  # and never claims more than the bound proves


def test_cks_monotone_and_inverse():
    rhos = np.geomspace(1e-5, 10, 40)
    eps = [zcdp_epsilon_cks(r, 1e-6) for r in rhos]
    assert all(a < b for a, b in itertools.pairwise(eps))
    deltas = np.geomspace(1e-12, 0.5, 30)
    eps_d = [zcdp_epsilon_cks(0.1, d) for d in deltas]
    assert all(a > b for a, b in itertools.pairwise(eps_d))
    r = zcdp_rho_for(1.0, 1e-6, "cks")
    assert zcdp_epsilon_cks(r, 1e-6) <= 1.0 < zcdp_epsilon_cks(r * (1 + 1e-9), 1e-6)


def test_conversions_reject_bad_values():
    with pytest.raises(PrivacyParameterError, match="delta"):
        zcdp_epsilon_cks(0.1, 0.0)
    with pytest.raises(PrivacyParameterError, match="rho"):
        zcdp_epsilon_standard(-1.0, 0.1)
    with pytest.raises(DPQueryError):
        zcdp_rho_for(1.0, 1.5)


def test_replace_one_rho_by_hand():
    # Gaussian, sigma = 10: add/remove (sensitivity 1) 1/200; replace-one (sqrt 2) 2/200.
    assert replace_one_rho(1 / 200) == pytest.approx(2 / 200)
    # plus an exponential mechanism at epsilon 0.4 (0.4^2/8 = 0.02); replace-one its epsilon
    # is 0.8 (0.8^2/8 = 0.08): total 0.025 -> 0.01 + 0.08 = 0.09, selection share 0.8.
    assert replace_one_rho(0.025, selection_share=0.8) == pytest.approx(0.09)
    # AIM's split (alpha = 0.9 measuring): rho 0.1 guarantees 0.22 under replace-one.
    assert replace_one_rho(0.1, selection_share=0.1) == pytest.approx(0.22)
    assert replace_one_rho(0.0) == 0.0
    with pytest.raises(PrivacyParameterError, match="selection_share"):
        replace_one_rho(0.1, selection_share=1.5)
    with pytest.raises(PrivacyParameterError, match="rho"):
        replace_one_rho(-0.1)


# --- accountants -----------------------------------------------------------------------------


def test_accountants_on_mixed_and_pure_charges():
    pure = Composition([Charge("em", PureDP(0.1, bounded_range=True), count=4)]).totals()
    mixed = Composition(
        [Charge("em", PureDP(0.1, bounded_range=True)), Charge("gauss", ZCDP(0.01))]
    ).totals()
    assert BasicComposition().epsilon(pure, 0.0) == pytest.approx(0.4)
    with pytest.raises(AccountingError, match="zCDP"):
        BasicComposition().epsilon(mixed, 1e-6)
    with pytest.raises(AccountingError):
        AdvancedComposition().rho(pure)
    # zCDP: 0.01 (Gaussian) + 0.1^2/8 (bounded range) = 0.01125; or + 0.1^2/2 = 0.015
    assert ZCDPAccountant().rho(mixed) == pytest.approx(0.01125)
    assert ZCDPAccountant(bounded_range=False).rho(mixed) == pytest.approx(0.015)
    assert ZCDPAccountant().epsilon(mixed, 0.0) == math.inf  # zCDP proves no pure DP
    # advanced composition never quotes more than basic composition (Lemma 2.4 proves both)
    assert AdvancedComposition().epsilon(pure, 0.5) <= 0.4
    # Tightest skips members that cannot measure the charges
    assert Tightest().epsilon(mixed, 1e-6) == pytest.approx(
        ZCDPAccountant().epsilon(mixed, 1e-6), rel=1e-12
    )
    with pytest.raises(PrivacyParameterError, match="conversion"):
        ZCDPAccountant(conversion="bogus")  # type: ignore[arg-type]


def test_exact_sums_are_order_independent():
    rng = np.random.default_rng(7)
    eps = rng.random(500) * 1e-3
    charges = [Charge("m", PureDP(float(e))) for e in eps]
    a = Composition(charges).totals()
    b = Composition(reversed(charges)).totals()
    assert a == b
    assert a.epsilon_sum == math.fsum(float(e) for e in eps)


# --- ledger ----------------------------------------------------------------------------------


def test_ledger_charges_before_and_refuses_over_budget_unchanged():
    ledger = Ledger(Budget.pure(1.0))
    for _ in range(10):  # ten charges of 0.1 sum exactly (fsum) to 1.0: all fit
        ledger.charge("Laplace", PureDP(0.1))
    assert ledger.spent == 1.0
    before = (ledger.entries, ledger.totals, ledger.spent)
    with pytest.raises(BudgetExceededError, match="Laplace"):
        ledger.charge("Laplace", PureDP(1e-12))
    assert (ledger.entries, ledger.totals, ledger.spent) == before
    assert ledger.remaining == 0.0
    assert issubclass(BudgetExceededError, DPQueryError)


def test_ledger_entries_record_running_totals():
    ledger = Ledger(Budget.pure(1.0), BasicComposition())
    ledger.charge("a", PureDP(0.25))
    ledger.charge("b", PureDP(0.125), count=2)
    assert [e.spent_after for e in ledger.entries] == [0.25, 0.5]
    assert ledger.entries[1].charge == Charge("b", PureDP(0.125), count=2)


def test_ledger_spend_is_never_refunded_when_later_code_fails():
    ledger = Ledger(Budget.approx(1.0, 1e-6))

    def mechanism_then_timeout():
        ledger.charge("exponential mechanism", PureDP(0.5, bounded_range=True))
        raise TimeoutError("oracle timed out")

    with pytest.raises(TimeoutError):
        mechanism_then_timeout()
    assert len(ledger.entries) == 1 and ledger.spent > 0


def test_ledger_refuses_an_accountant_that_cannot_certify_the_budget():
    with pytest.raises(PrivacyParameterError, match="cannot certify"):
        Ledger(Budget.pure(1.0), ZCDPAccountant())
    with pytest.raises(PrivacyParameterError, match="cannot certify"):
        Ledger(Budget.zcdp(0.5), BasicComposition())
    ledger = Ledger(Budget.pure(1.0))
    with pytest.raises(AccountingError):
        ledger.charge("Gaussian", ZCDP(0.01))  # a pure budget cannot absorb a zCDP cost
    assert ledger.entries == ()


def test_ledger_check_plans_without_recording_and_plan_is_accepted_charge_by_charge():
    budget = Budget.approx(1.0, DELTA)
    T = dualquery_max_rounds(budget, eta=1.2, s=1750, n=494_021)
    ledger = Ledger(budget)
    ledger.check(dualquery_plan(eta=1.2, T=T, s=1750, n=494_021))
    with pytest.raises(BudgetExceededError):
        ledger.check(dualquery_plan(eta=1.2, T=T + 1, s=1750, n=494_021))
    assert ledger.entries == ()
    for charge in dualquery_plan(eta=1.2, T=T, s=1750, n=494_021):
        ledger.charge(charge.mechanism, charge.cost, count=charge.count)
    nxt = dualquery_plan(eta=1.2, T=T + 1, s=1750, n=494_021)[-1]
    with pytest.raises(BudgetExceededError):
        ledger.charge(nxt.mechanism, nxt.cost, count=nxt.count)
    assert len(ledger.entries) == T


def test_ledger_concurrent_charges_never_overspend():
    ledger = Ledger(Budget.pure(1.0), BasicComposition())
    accepted = []

    def worker():
        for _ in range(50):
            try:
                ledger.charge("m", PureDP(0.0078125))  # 2^-7: exactly 128 fit
                accepted.append(1)
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 128 and ledger.spent == 1.0


def test_ledger_report_per_mechanism_and_every_measure():
    ledger = Ledger(Budget.approx(2.0, 1e-6))
    ledger.charge("exponential mechanism", PureDP(0.1, bounded_range=True), count=3)
    ledger.charge("Gaussian", ZCDP(0.02))
    ledger.charge("exponential mechanism", PureDP(0.2, bounded_range=True))
    report = ledger.report(deltas=[1e-9])
    per = {m.mechanism: m for m in report.per_mechanism}
    assert per["exponential mechanism"].invocations == 4
    assert per["exponential mechanism"].epsilon == pytest.approx(0.5)
    assert per["Gaussian"].rho == pytest.approx(0.02) and per["Gaussian"].epsilon is None
    measures = {(g.measure, g.delta) for g in report.guarantees}
    assert {("zcdp", None), ("approx", 1e-6), ("approx", 1e-9)} <= measures
    assert ("pure", None) not in measures  # a Gaussian charge: no pure guarantee
    zcdp = next(g for g in report.guarantees if g.measure == "zcdp")
    # 3 * 0.1^2/8 + 0.02 + 0.2^2/8 = 0.00375 + 0.02 + 0.005 = 0.02875 (bounded range)
    assert zcdp.rho == pytest.approx(0.02875) and "bounded range" in zcdp.accountant
    assert report.accountant.startswith("tightest")
    text = json.dumps(report.to_dict())
    assert "Canonne-Kamath-Steinke" in text
    assert report.spent == pytest.approx(zcdp_epsilon_cks(0.02875, 1e-6), rel=1e-12)


def test_budget_validation():
    with pytest.raises(PrivacyParameterError, match="exactly one"):
        Budget(epsilon=1.0, rho=0.1)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        Budget.pure(-1.0)
    with pytest.raises(PrivacyParameterError, match="delta"):
        Budget.approx(1.0, 0.0)
    with pytest.raises(PrivacyParameterError, match="delta"):
        Budget(rho=0.1, delta=1e-6)
    with pytest.raises(PrivacyParameterError, match="count"):
        Charge("m", PureDP(0.1), count=-1)


# --- calibration -----------------------------------------------------------------------------


def test_generic_searches_are_exact_at_the_boundary():
    assert largest_integer(lambda x: x * x <= 1000, lower=0, upper=10**6) == 31
    x = largest_float(lambda v: v * v <= 2.0, lower=0.0, upper=4.0)
    assert x * x <= 2.0 < math.nextafter(x, math.inf) ** 2
    with pytest.raises(CalibrationError, match="exceeds"):
        largest_integer(lambda x: False, lower=0, upper=10)
    with pytest.raises(CalibrationError, match="more than"):
        largest_integer(lambda x: True, lower=0, upper=10)


def test_dualquery_max_rounds_hand_computed():
    kw = {"eta": 1.2, "s": 1750, "n": 494_021}
    # pure, epsilon = 1: eta T (T-1) s / n <= 1 iff T (T-1) <= 494021 / 2100 = 235.25: T = 15
    # (15 * 14 = 210 <= 235.25 < 240 = 16 * 15)
    assert dualquery_max_rounds(Budget.pure(1.0), **kw) == 15
    # zCDP bounded range, standard conversion, (1, 1e-3): rho* = (sqrt(L+1) - sqrt(L))^2
    # = (2.8120731 - 2.6282609)^2 = 0.0337868; (T-1) T (2T-1) <= 48 rho* / (s (2 eta/n)^2)
    # = 1.621766 / 4.130187e-8 = 3.92661e7; T = 270: 269*270*539 = 39,147,570 fits,
    # T = 271: 270*271*541 = 39,585,570 does not.
    acc = ZCDPAccountant(bounded_range=True, conversion="standard")
    assert dualquery_max_rounds(Budget.approx(1.0, DELTA), accountant=acc, **kw) == 270


@pytest.mark.parametrize("accountant", all_accountants(), ids=lambda a: a.key)
def test_dualquery_max_rounds_boundary_every_accountant(accountant):
    budget = Budget.approx(1.0, DELTA)
    kw = {"eta": 1.2, "s": 1750, "n": 494_021}
    T = dualquery_max_rounds(budget, accountant=accountant, **kw)
    assert fits(Composition(dualquery_plan(T=T, **kw)).totals(), budget, accountant)
    assert not fits(Composition(dualquery_plan(T=T + 1, **kw)).totals(), budget, accountant)


def test_dualquery_max_rounds_theorem_4_3_closed_form_agrees():
    budget = Budget.approx(1.0, DELTA)
    T = dualquery_max_rounds(
        budget, eta=1.2, s=1750, n=494_021, accountant=AdvancedComposition(heterogeneous=False)
    )
    assert dualquery_epsilon_theorem_4_3(eta=1.2, T=T, s=1750, n=494_021, delta=DELTA) <= 1
    assert dualquery_epsilon_theorem_4_3(eta=1.2, T=T + 1, s=1750, n=494_021, delta=DELTA) > 1
    # heterogeneous: T = 170 is slightly over (1.0295), the largest within epsilon = 1 is 166
    het = dualquery_max_rounds(budget, eta=1.2, s=1750, n=494_021, accountant=AdvancedComposition())
    assert het == 166


def test_calibration_monotone_in_parameters():
    b = Budget.approx(1.0, 1e-6)
    by_s = [dualquery_max_rounds(b, eta=1.0, s=s, n=100_000) for s in (100, 200, 400, 800)]
    assert by_s == sorted(by_s, reverse=True) and by_s[0] > by_s[-1]
    by_eta = [dualquery_max_rounds(b, eta=e, s=500, n=100_000) for e in (0.25, 0.5, 1.0, 2.0)]
    assert by_eta == sorted(by_eta, reverse=True) and by_eta[0] > by_eta[-1]
    by_n = [dualquery_max_rounds(b, eta=1.0, s=500, n=n) for n in (10_000, 100_000, 1_000_000)]
    assert by_n == sorted(by_n) and by_n[0] < by_n[-1]
    by_eps = [
        dualquery_max_rounds(Budget.approx(e, 1e-6), eta=1.0, s=500, n=100_000)
        for e in (0.25, 0.5, 1, 2)
    ]
    assert by_eps == sorted(by_eps) and by_eps[0] < by_eps[-1]


def test_dualquery_max_samples_and_eta_boundaries():
    budget = Budget.approx(1.0, DELTA)
    acc = Tightest()
    s = dualquery_max_samples(budget, eta=1.2, T=170, n=494_021)
    assert fits(Composition(dualquery_plan(eta=1.2, T=170, s=s, n=494_021)).totals(), budget, acc)
    assert not fits(
        Composition(dualquery_plan(eta=1.2, T=170, s=s + 1, n=494_021)).totals(), budget, acc
    )
    eta = dualquery_max_eta(budget, T=170, s=1750, n=494_021)
    up = math.nextafter(eta, math.inf)
    assert fits(
        Composition(dualquery_plan(eta=eta, T=170, s=1750, n=494_021)).totals(), budget, acc
    )
    assert not fits(
        Composition(dualquery_plan(eta=up, T=170, s=1750, n=494_021)).totals(), budget, acc
    )
    assert eta > 1.2  # (1, 0.001) at T = 170, s = 1750 leaves room under the default accountant


def test_round_epsilon_and_validation():
    assert dualquery_round_epsilon(1, eta=1.2, n=10) == 0.0  # round 1 samples uniformly: free
    assert dualquery_round_epsilon(3, eta=1.0, n=8) == pytest.approx(0.5)  # 2 * 1 * 2 / 8
    for bad in ({"eta": 0.0, "T": 5, "s": 1, "n": 1}, {"eta": 1.0, "T": 5, "s": 1, "n": 0}):
        with pytest.raises(PrivacyParameterError):
            dualquery_pure_epsilon(**bad)
    with pytest.raises(PrivacyParameterError, match="T must be an integer"):
        dualquery_plan(eta=1.0, T=2.5, s=1, n=1)  # type: ignore[arg-type]


def test_remark_4_7_parameters_hand_computed():
    # alpha = 0.5, beta = 0.1, |Q| = 1000, |X| = 2^10:
    # T = ceil(16 ln 1000 / 0.25) = ceil(64 * 6.9077553) = ceil(442.096) = 443
    # s = ceil(48 (ln 2 + 10 ln 2 + ln 443 + ln 10) / 0.25) = ceil(192 * 16.0207746) = 3076
    p = remark_4_7_parameters(
        alpha=0.5, beta=0.1, num_queries=1000, log_universe_size=10 * math.log(2)
    )
    assert (p.T, p.eta, p.s) == (443, 0.125, 3076)
    # Remark 4.7: 4 eta T sqrt(2 s T ln(1/delta)) / n equals
    # 256 ln^{3/2}|Q| sqrt(6 ln(1/delta) ln(2|X|T/beta)) / (alpha^3 n) at the real-valued T, s;
    # with the rounded-up integers the two agree to within the rounding (< 0.5%).
    n, delta = 10**6, 1e-6
    eps = remark_4_7_epsilon(eta=p.eta, T=p.T, s=p.s, n=n, delta=delta)
    closed = (
        256
        * math.log(1000) ** 1.5
        * math.sqrt(6 * math.log(1 / delta) * math.log(2 * 2**10 * 442.096 / 0.1))
        / (0.5**3 * n)
    )
    assert eps == pytest.approx(closed, rel=5e-3)
    # it upper-bounds Theorem 4.3 here (its second term is small)
    assert eps >= dualquery_epsilon_theorem_4_3(eta=p.eta, T=p.T, s=p.s, n=n, delta=delta)


# --- FEM -------------------------------------------------------------------------------------


def test_fem_rho0_and_epsilon0():
    # Algorithm 1: rho0 = rho / T = 0.3 / 3 = 0.1; epsilon0 = sqrt(2 rho0) = 0.4472136
    rho0 = fem_round_rho(0.3, 3)
    assert rho0 == pytest.approx(0.1) and 3 * rho0 <= 0.3
    assert fem_round_epsilon(0.1) == pytest.approx(math.sqrt(0.2))
    assert fem_round_epsilon(0.1, bounded_range=True) == pytest.approx(math.sqrt(0.8))
    # Theorem 8: T epsilon0^2 / 2 = rho (Lemmas 3-4)
    assert fem_rho(T=100, epsilon0=0.01) == pytest.approx(0.005)
    assert fem_rho(T=100, epsilon0=0.01, bounded_range=True) == pytest.approx(0.00125)


@pytest.mark.parametrize(("rho", "T"), [(0.3, 3), (1.0, 7), (0.1, 1000), (2.0 / 3.0, 9)])
def test_fem_algorithm_1_fits_the_ledger_exactly(rho, T):
    eps0 = fem_round_epsilon(fem_round_rho(rho, T))
    ledger = Ledger(Budget.zcdp(rho), ZCDPAccountant(bounded_range=False))
    for _ in range(T):  # every one of the T rounds is accepted
        ledger.charge("FEM", PureDP(eps0, bounded_range=True))
    assert ledger.spent <= rho


def test_fem_calibration():
    # pure, epsilon = 1, epsilon0 = 0.01: 100 rounds (100 * 0.01 = 1 exactly), not 101
    assert fem_max_rounds(Budget.pure(1.0), epsilon0=0.01) == 100
    # zCDP rho = 0.1, epsilon0 = 0.01 at epsilon^2/8 each: 0.1 / 1.25e-5 = 8000 rounds
    acc = ZCDPAccountant(bounded_range=True)
    assert fem_max_rounds(Budget.zcdp(0.1), epsilon0=0.01, accountant=acc) in (7999, 8000)
    budget = Budget.approx(1.0, 1e-6)
    e0 = fem_max_epsilon0(budget, T=100)
    acc2 = Tightest()
    assert fits(Composition(fem_plan(T=100, epsilon0=e0)).totals(), budget, acc2)
    up = math.nextafter(e0, math.inf)
    assert not fits(Composition(fem_plan(T=100, epsilon0=up)).totals(), budget, acc2)


# --- DQRS ------------------------------------------------------------------------------------


def test_dqrs_round_costs_hand_computed():
    # t = 8: gamma = 1 / (2 * 8^{2/3}) = 1/8; eta = 0.25, s = 100, n = 1000
    assert dqrs_gamma(8) == pytest.approx(0.125)
    assert dqrs_fresh_samples(8, eta=0.25, s=100) == 125  # (2/8 + 1) * 100
    assert dqrs_rejection_epsilon(8, eta=0.25, n=1000) == pytest.approx(0.002)  # Lemma 18
    assert dqrs_fresh_epsilon(8, eta=0.25, n=1000) == pytest.approx(0.004)  # 2 eta t / n
    # Algorithm 4 as written: 100 * 0.002^2 / 2 + 125 * 0.004^2 / 2 = 0.0002 + 0.001 = 0.0012
    assert dqrs_round_rho(8, eta=0.25, s=100, n=1000) == pytest.approx(0.0012)
    # as printed: eta^2 s / (2 gamma^2 n^2) + 2 eta^2 (t-1)^2 s~ / n^2
    #   = 6.25 / 31250 + 2 * 0.0625 * 49 * 125 / 1e6 = 0.0002 + 0.000765625 = 0.000965625
    printed = dqrs_round_rho_as_printed(8, eta=0.25, s=100, n=1000)
    assert printed == pytest.approx(0.000965625)
    # ... within the paper's bound (eta^2 s / n^2)(4 t^{4/3} + 8 eta t^2) = 6.25e-6 * 192 = 0.0012
    assert printed <= 6.25e-6 * (4 * 8 ** (4 / 3) + 8 * 0.25 * 64) * (1 + 1e-12)


def test_dqrs_totals_and_calibration():
    kw = {"eta": 0.1, "s": 200, "n": 50_000}
    rho = dqrs_rho(T=30, **kw)
    assert rho == pytest.approx(
        ZCDPAccountant(bounded_range=False).rho(Composition(dqrs_plan(T=30, **kw)).totals()),
        rel=1e-12,
    )
    assert dqrs_rho(T=30, as_printed=True, **kw) < rho  # the printed formula undercounts
    budget = Budget.approx(1.0, 1e-6)
    T = dqrs_max_rounds(budget, **kw)
    acc = Tightest()
    assert fits(Composition(dqrs_plan(T=T, **kw)).totals(), budget, acc)
    assert not fits(Composition(dqrs_plan(T=T + 1, **kw)).totals(), budget, acc)
