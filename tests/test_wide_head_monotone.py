"""The head mode under add/remove (docs/wide.md, "The head mode under add/remove"): the
exponential mechanism's monotone weights (``exp(epsilon c)``, the same bounded range, since
every count moves one way when a record is added or removed), its accounting against
hand-computed values, the bounded range checked exactly on random neighbours of ``n`` and
``n + 1`` records, and the James-Stein estimates of the picked counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery.algorithms.wide import core, measure
from dpquery.algorithms.wide.core import (
    family_threshold,
    head_estimates,
    james_stein,
    limited_translation,
)
from dpquery.algorithms.wide.counts import AllItemCounts
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data.items import ItemSets
from dpquery.privacy import Budget, Ledger, PureDP
from dpquery.privacy import mechanisms as mech
from dpquery.privacy.costs import bounded_range_to_zcdp
from dpquery.privacy.mechanisms import exponential_mechanism
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE


def _records(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """``n`` random dense records over ``d`` items of random lengths (0 to every item)."""
    lengths = rng.integers(0, d + 1, size=n)
    return np.array([rng.permutation(d) < size for size in lengths], dtype=np.uint8)


def _add_or_remove(dense: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``dense`` with one random record inserted at a random row or one removed."""
    n, d = dense.shape
    if rng.random() < 0.5 and n > 1:
        return np.delete(dense, int(rng.integers(n)), axis=0)
    return np.insert(dense, int(rng.integers(n + 1)), _records(rng, 1, d), axis=0)


def _log_probabilities(scores: np.ndarray, eps: float, divisor: float) -> np.ndarray:
    """The exponential mechanism's exact log probabilities, ``exp(eps score / divisor)``."""
    w = scores * eps / divisor
    return w - (w.max() + np.log(np.exp(w - w.max()).sum()))


def _range(a: np.ndarray, b: np.ndarray) -> float:
    """The bounded-range width: max minus min over outcomes of ``ln P(r|D) / P(r|D')``."""
    ratio = a - b
    return float(ratio.max() - ratio.min())


def test_monotone_weights_double_the_exponent_and_charge_the_same(monkeypatch):
    seen: list[np.ndarray] = []
    draw = mech.sample_from_log_weights
    monkeypatch.setattr(
        mech, "sample_from_log_weights", lambda w, k, rng: seen.append(w) or draw(w, k, rng)
    )
    scores = np.array([0.0, 10.0, 40.0])
    ledgers = [Ledger(Budget.approx(1.0, 1e-9)), Ledger(Budget.approx(1.0, 1e-9))]
    for monotone, ledger in zip((False, True), ledgers, strict=True):
        exponential_mechanism(scores, epsilon=0.1, sensitivity=2.0, rng=np.random.default_rng(0),
                              ledger=ledger, monotone=monotone)  # fmt: skip
    # exp(eps s / (2 Delta)) = exp(0.025 s); monotone exp(eps s / Delta) = exp(0.05 s)
    assert seen[0] == pytest.approx([0.0, 0.25, 1.0])
    assert seen[1] == pytest.approx([0.0, 0.5, 2.0])
    for ledger in ledgers:  # the same charge: 0.1-bounded range, 0.1^2 / 8 zCDP
        [entry] = ledger.entries
        assert entry.charge.cost == PureDP(0.1, bounded_range=True)
    assert bounded_range_to_zcdp(0.1) == pytest.approx(0.00125)


@pytest.mark.parametrize("n", [1, 7, 40])
def test_monotone_picks_are_epsilon_bounded_range_on_random_add_remove_neighbours(n):
    """Exact probabilities (no sampling: no false failure) of one pick on the whole counts of
    tables of ``n`` and ``n + 1`` records, records up to every item long."""
    rng = np.random.default_rng(n)
    d, eps = 12, 0.7
    for _ in range(200):
        D = _records(rng, n, d)
        D2 = _add_or_remove(D, rng)
        [ca] = AllItemCounts(d).count(ItemSets(sp.csr_array(D)))
        [cb] = AllItemCounts(d).count(ItemSets(sp.csr_array(D2)))
        diff = ca.astype(int) - cb.astype(int)
        assert (diff >= 0).all() or (diff <= 0).all()  # monotone: every count moves one way
        left = np.sort(rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False))
        a = _log_probabilities(ca[left].astype(float), eps, 1.0)
        b = _log_probabilities(cb[left].astype(float), eps, 1.0)
        assert _range(a, b) <= eps + 1e-12


def test_monotone_weights_would_break_the_bound_under_replace_one():
    # replacing the record {0} by {1} moves count 0 down and count 1 up: with exp(eps c) the
    # range is 2 eps, so the monotone weights are used only under add/remove (pick_head)
    eps = 0.7
    ca, cb = np.array([3.0, 2.0, 5.0]), np.array([2.0, 3.0, 5.0])
    assert _range(_log_probabilities(ca, eps, 1.0), _log_probabilities(cb, eps, 1.0)) == (
        pytest.approx(2 * eps)
    )
    assert _range(_log_probabilities(ca, eps, 2.0), _log_probabilities(cb, eps, 2.0)) == (
        pytest.approx(eps)
    )


@pytest.mark.parametrize(("neighbours", "monotone"), [(ADD_REMOVE, True), (REPLACE_ONE, False)])
def test_pick_head_weighs_monotone_only_under_add_remove(monkeypatch, neighbours, monotone):
    seen: list[bool] = []
    em = measure.exponential_mechanism

    def spy(*args, **kwargs):
        seen.append(kwargs["monotone"])
        return em(*args, **kwargs)

    monkeypatch.setattr(measure, "exponential_mechanism", spy)
    ledger = Ledger(Budget.approx(1.0, 1e-9))
    picked = measure.pick_head(np.arange(30.0), 4, 0.02, np.random.default_rng(0), ledger,
                               neighbours)  # fmt: skip
    assert seen == [monotone] * 4 and picked.size == 4
    assert len(ledger.entries) == 4


def test_the_add_remove_head_plan_against_hand_computed_values():
    # epsilon 1, delta 1e-9: rho = 0.014973057673588525; 2% measures n, 98% is left:
    # 0.014673596520116754. The head mode's shares 0.63 / 0.2 / 0.03 / 0.02 / 0.12 of it:
    # picks 0.009244365807673556, 35 picks of epsilon_0 = sqrt(8 * 0.00924437 / 35) =
    # 0.0459674; counts 0.0029347193 (sigma = sqrt(35 / (2 * 0.0029347193)) = 77.22
    # records); sizes 0.00044020790 (0.03); the unpicked items' total 0.00029347193 (0.02);
    # the picks' pairs 0.0017608316 (0.12).
    data = ItemSets(sp.csr_array((700, 9000), dtype=np.uint8))
    plan = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, head_mode="on").plan(data)
    p = plan.parameters
    assert p.mode == "head" and p.K == 35
    r_picks, r_counts, r_sizes = p.rhos()
    assert r_picks == pytest.approx(0.009244365807673556, rel=1e-9)
    assert r_counts == pytest.approx(0.0029347193040, rel=1e-9)
    assert r_sizes == pytest.approx(0.00044020789560, rel=1e-9)
    assert p.tail_rho() == pytest.approx(0.00029347193040, rel=1e-9)
    eps0 = measure.pick_epsilon(r_picks, 35)
    assert eps0 == pytest.approx(0.04596735688, rel=1e-9)
    assert 35 * bounded_range_to_zcdp(eps0) <= r_picks
    assert measure.noise_sigma(r_counts, math.sqrt(35)) == pytest.approx(77.22, abs=0.05)
    charges = plan.charges()
    assert [c.mechanism for c in charges].count(measure.PICKS) == 35
    assert p.head_pairs_rho() == pytest.approx(0.0017608315824, rel=1e-9)
    total = plan.count_rho + 35 * bounded_range_to_zcdp(eps0) + r_counts + r_sizes
    assert total + p.tail_rho() + p.head_pairs_rho() <= 0.014973057673588525 * (1 + 1e-12)
    # replace-one keeps its head mode: 20 picks at 0.6 / 0.3 / 0.1
    replace_one = WideRelease(epsilon=1.0, delta=1e-9, head_mode="on").plan(data).parameters
    assert replace_one.K == 20 and replace_one.head_shares == core.HeadShares()


def test_james_stein_against_hand_computed_values():
    # y = 10, 12, 14, 20, sigma 2: mean 14, spread 16 + 4 + 0 + 36 = 56,
    # B = 1 - (4 - 3) 4 / 56 = 0.9285714; 14 + B (y - 14) = 10.285714, 12.142857, 14, 19.571429
    got = james_stein(np.array([10.0, 12.0, 14.0, 20.0]), 2.0)
    assert got == pytest.approx([10.285714286, 12.142857143, 14.0, 19.571428571])
    # a spread below the noise: B floored at 0, every value the mean
    flat = james_stein(np.array([10.0, 10.1, 9.9, 10.0, 10.2]), 5.0)
    assert flat == pytest.approx([10.04] * 5)
    # fewer than 4 values: unchanged
    assert james_stein(np.array([1.0, 5.0, 9.0]), 3.0) == pytest.approx([1.0, 5.0, 9.0])


def test_head_estimates_shrink_a_measurable_head_and_drop_negative_counts():
    sigma, n, k = 10.0, 700, 6
    thr = family_threshold(k) * sigma  # sqrt(2 ln 6) + 1 = 2.89 sigma
    y = np.array([120.0, 80.0, 95.0, 20.0, -5.0, 101.0])
    c, kept = head_estimates(y, sigma, n, k, shrunk=True)
    assert kept.tolist() == [True, True, True, True, False, True]
    assert c[4] == 0 and (c[kept] > 0).all()
    assert c[kept] == pytest.approx(james_stein(y[y >= 0], sigma))
    # the default rule: each count as measured where it clears the family threshold
    c0, kept0 = head_estimates(y, sigma, n, k)
    assert kept0.tolist() == (y >= thr).tolist() and c0[0] == 120.0
    # nothing clears the threshold (the head not measurable): shrunk or not, nothing kept
    low = np.array([28.0, 10.0, 25.0, 5.0])
    assert not head_estimates(low, sigma, n, k, shrunk=True)[1].any()


def test_limited_translation_against_hand_computed_values():
    # y = 10, 12, 14, 20 shrunk to 14 each, sigma 2, caps of 1 sigma: each move at most 2
    y, shrunk = np.array([10.0, 12.0, 14.0, 20.0]), np.full(4, 14.0)
    assert limited_translation(y, shrunk, 2.0, 1.0, 1.0) == pytest.approx([12, 14, 14, 18])
    # 0.5 sigma: moves of 1 at most; 0 keeps each observation; inf the estimate
    assert limited_translation(y, shrunk, 2.0, 0.5, 0.5) == pytest.approx([11, 13, 14, 19])
    assert limited_translation(y, shrunk, 2.0, 0.0, 0.0) == pytest.approx(y)
    assert limited_translation(y, shrunk, 2.0, math.inf, math.inf) == pytest.approx(shrunk)
    # one-sided: up at most 1 sigma (10 -> 12), down as the estimate says (20 -> 14)
    assert limited_translation(y, shrunk, 2.0, 1.0, math.inf) == pytest.approx([12, 14, 14, 14])
    with pytest.raises(ValueError, match="up=-1"):
        limited_translation(y, shrunk, 2.0, -1.0, 1.0)


def test_head_estimates_raise_no_pick_more_than_the_limit_above_its_noisy_count():
    # a head of 30 counts near 280 and a rare pick at 20 (sigma 77, n 700): James-Stein
    # pulls the rare pick toward the mean, about 270; the cap leaves it at 20 + limit sigma,
    # and the head's moves down are James-Stein's
    sigma, n, k = 77.0, 700, 31
    y = np.r_[np.linspace(250.0, 310.0, 30), 20.0]
    uncapped, _ = head_estimates(y, sigma, n, k, shrunk=True, raise_limit=math.inf)
    assert uncapped == pytest.approx(james_stein(y, sigma))
    assert uncapped[-1] - y[-1] > 2 * sigma
    for limit in (0.0, 0.5, 1.0):
        c, kept = head_estimates(y, sigma, n, k, shrunk=True, raise_limit=limit)
        assert kept.all()
        assert c[-1] == pytest.approx(20.0 + limit * sigma)
        assert (c - y).max() <= limit * sigma + 1e-9
        assert c[y > uncapped] == pytest.approx(uncapped[y > uncapped])
    # the release's own cap is the default
    c, _ = head_estimates(y, sigma, n, k, shrunk=True)
    again, _ = head_estimates(y, sigma, n, k, True, raise_limit=core.HEAD_RAISE_LIMIT)
    assert c == pytest.approx(again)


def test_a_raise_cap_keeps_each_pick_near_its_noisy_count(monkeypatch):
    """A steep head of 30 items, each in 40% of 700 records, among 9,000 items (the rest in
    0.2%), at epsilon 1 under add/remove: the 35 monotone picks land on about 5 rare items,
    and James-Stein pulls a rare pick's count toward the head's (0.37 of the records). With
    the head estimates' rise capped at 1 sigma (``core.HEAD_RAISE_LIMIT`` = 1; the release's
    default is uncapped), no picked item is in more of the fitted records than its noisy
    count (0 where negative) plus 1.5 deviations ``sqrt(sigma^2 + y)`` (the cap, and 0.5 for
    the noise's and the records' own draw; the fit follows the estimates at 0.1 of the noise
    variance). Measured on seeds 0-9: 0.87-1.41 capped; uncapped 1.37-2.40, and 1.98, 1.96
    and 2.40 on the seeds run here (1, 3, 4): the test fails with the cap undone. Seeded;
    the capped excess stayed below 1.5 on all of seeds 0-9 (1.41 at most), a false failure
    over other seeds perhaps 1 in 20."""
    monkeypatch.setattr(core, "HEAD_RAISE_LIMIT", 1.0)
    rng = np.random.default_rng(5)
    dense = (rng.random((700, 9000)) < 0.002).astype(np.uint8)
    dense[:, :30] = rng.random((700, 30)) < 0.4
    data = ItemSets(sp.csr_array(dense))
    noisy: dict[str, np.ndarray] = {}
    pick_head, head_counts = measure.pick_head, measure.head_counts

    def picks(*args, **kwargs):
        noisy["picked"] = pick_head(*args, **kwargs)
        return noisy["picked"]

    def counts(*args, **kwargs):
        noisy["y"] = head_counts(*args, **kwargs)
        return noisy["y"]

    monkeypatch.setattr(measure, "pick_head", picks)
    monkeypatch.setattr(measure, "head_counts", counts)
    for seed in (1, 3, 4):
        release = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, seed=seed).fit(data)
        assert release.parameters["mode"] == "head"
        sigma = release.parameters["sigma_items"]
        fitted = np.bincount(release.records.matrix.indices, minlength=data.d)
        y = noisy["y"].astype(np.float64)
        excess = (fitted[noisy["picked"]] - np.maximum(y, 0.0)) / np.sqrt(
            sigma**2 + np.maximum(y, 1.0)
        )
        assert excess.max() <= 1.5, (seed, excess.max())


def test_an_add_remove_release_finds_a_flat_head():
    """A flat head of 12 items, each in 30% of 700 records, among 9,000 items (the rest in
    0.3%), at epsilon 1 under add/remove: every head item is picked and released, at least
    0.12 of the records hold it (its estimate pulled toward the mean of the kept picks,
    which the rare picks kept at nonnegative noisy counts lower: 0.14-0.21 at least,
    measured on seeds 0-5), and the 1-way max stays below the all-zeros table's (0.58x-0.91x
    measured: a rare pick with a high noisy count is released). Before the monotone picks
    and the shrunk estimates 1-5 of the 12 cleared the family threshold (1-way max 0.99-1.00x
    zeros' on the same seeds): the test fails there.
    Seeded (seeds 0-2); with the picks' miss chance below 1e-3 per item here and the
    estimates' noise (sigma 0.11 of the records, shrunk), a false failure over other seeds
    is about 1 in 50."""
    rng = np.random.default_rng(5)
    dense = (rng.random((700, 9000)) < 0.003).astype(np.uint8)
    dense[:, :12] = rng.random((700, 12)) < 0.3
    data = ItemSets(sp.csr_array(dense))
    true = dense.mean(axis=0)
    for seed in range(3):
        release = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, seed=seed).fit(data)
        out = release.records.matrix
        share = np.asarray(out.sum(axis=0)).ravel() / out.shape[0]
        assert release.parameters["mode"] == "head"
        assert share[:12].min() >= 0.12, (seed, share[:12])
        assert np.abs(share - true).max() < true.max(), (seed, share[:12])


def test_privacy_synth_says_the_add_remove_head_mode_s_picks_and_estimates():
    r = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "1",
                    "--neighbours", "add-remove", "--head-mode", "on")  # fmt: skip
    assert r.code == 0, r.err
    assert "the k=35 commonest items" in r.out
    assert "James-Stein estimate" in r.out and "exp(epsilon_0 c)" in r.out
    assert "35 x epsilon=" in r.out
    replace_one = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon",
                              "1", "--neighbours", "replace-one", "--head-mode", "on")  # fmt: skip
    assert "the k=20 commonest items" in replace_one.out
    assert "James-Stein" not in replace_one.out
