"""The add/remove head mode's pairs of picks (``HeadShares.pairs > 0``, not the default;
docs/wide.md, "Real item tables of other shapes"): each record's pair vector over its picks
weighted ``1 / sqrt(C(a, 2))`` (L2 norm 1: sensitivity 1, checked on random neighbours of
``n`` and ``n + 1`` records) or cut to ``b`` picks (``sqrt(C(b, 2))``), the charge against
hand-computed values, the spiked-model denoising of the noisy pair matrix, and a release
whose plan and ledger list the pairs within the budget."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from tests.test_wide_head_tail import _items

from dpquery.algorithms.wide import core, measure, release
from dpquery.algorithms.wide.core import HeadShares, spiked_denoise
from dpquery.algorithms.wide.counts import PickedPairs
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data.items import ItemSets
from dpquery.privacy import ZCDP, Budget, Ledger
from dpquery.privacy.costs import bounded_range_to_zcdp
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

RHO = 0.014673596520116754  # epsilon 1, delta 1e-9, less the noisy n's 2%
SHARES = HeadShares(picks=0.68, counts=0.2, sizes=0.03, tail=0.02, pairs=0.07)


def _weighted(cells: np.ndarray, k: int, bound: int) -> np.ndarray:
    """The vector the mechanism adds noise to (measure.head_pairs without the noise)."""
    if bound > 0:
        return cells.astype(np.float64)
    by_size = cells.reshape(k - 1, k * (k - 1) // 2).astype(np.float64)
    return measure.head_pair_weights(np.arange(2, k + 1), 0) @ by_size


@pytest.mark.parametrize("bound", [0, 3])
def test_the_pair_vector_moves_by_at_most_its_sensitivity_on_random_neighbours(bound):
    # adding one record moves the weighted pair vector by its own pair vector: L2 norm
    # exactly 1 (bound 0) or sqrt(C(min(a, b), 2)) <= sqrt(C(b, 2)) (bound b), 0 below 2
    # picks; the largest move over 300 neighbours reaches the bound (records of up to 12
    # items over 40, 6 picked: a record of 3 picks or more is common)
    rng = np.random.default_rng(0)
    d, picked = 40, np.array([0, 4, 9, 13, 21, 30])
    k = picked.size
    limit = 1.0 if bound == 0 else math.sqrt(bound * (bound - 1) / 2)
    moved = []
    for trial in range(300):
        data = _items(rng, int(rng.integers(1, 25)), d, 12)
        extra = _items(rng, 1, d, 12)
        grown = ItemSets(sp.csr_array(sp.vstack([data.matrix, extra.matrix])))
        key = int(rng.integers(2**63))  # the same key on both neighbours, as in one run
        [before] = PickedPairs(picked, bound, key).count(data)
        [after] = PickedPairs(picked, bound, key).count(grown)
        step = _weighted(after, k, bound) - _weighted(before, k, bound)
        moved.append(float(np.linalg.norm(step)))
        a = int(extra.matrix[:, picked].sum())
        m = min(a, bound)
        expected = 0.0 if a < 2 else 1.0 if bound == 0 else math.sqrt(m * (m - 1) / 2)
        assert moved[-1] == pytest.approx(expected, abs=1e-9), trial
    assert max(moved) == pytest.approx(limit, abs=1e-9)


def test_picked_pairs_count_the_records_pairs_by_their_number_of_picks():
    rng = np.random.default_rng(1)
    data = _items(rng, 30, 20, 10)
    picked = np.array([1, 2, 5, 8])
    [cells] = PickedPairs(picked).count(data)
    assert PickedPairs(picked).cells() == [3 * 6] and cells.size == 18
    dense = data.matrix.toarray()[:, picked].astype(np.int64)
    a = dense.sum(axis=1)
    j, i = np.triu_indices(4, 1)
    for size in range(2, 5):
        rows = dense[a == size]
        np.testing.assert_array_equal(cells[(size - 2) * 6 : (size - 1) * 6], (rows.T @ rows)[j, i])


def test_the_pair_charge_against_hand_computed_values():
    # 7% of rho = 0.00102715175641: sigma = 1 / sqrt(2 * 0.00102715175641) = 22.0632 (the
    # normalised pairs, sensitivity 1); cut to 8 picks, sqrt(28) / sqrt(2 rho) = 116.75
    r_pairs = 0.07 * RHO
    assert r_pairs == pytest.approx(0.00102715175641, rel=1e-9)
    assert measure.head_pairs_sigma(r_pairs, 0) == pytest.approx(22.0632, abs=1e-4)
    assert measure.head_pairs_sigma(r_pairs, 8) == pytest.approx(116.749, abs=0.01)
    ledger = Ledger(Budget.zcdp(1.0))
    rng = np.random.default_rng(2)
    k = 5
    cells = np.zeros((k - 1) * 10, dtype=np.int64)
    cells[:10] = 100  # 100 records of 2 picks on each pair: weight 1 each
    draws = np.array([measure.head_pairs(cells, k, 0, r_pairs, rng, ledger) for _ in range(200)])
    assert {e.charge.mechanism for e in ledger.entries} == {measure.HEAD_PAIRS}
    assert len(ledger.entries) == 200
    assert all(e.charge.cost == ZCDP(r_pairs) for e in ledger.entries)
    j, i = np.triu_indices(k, 1)
    noise = draws[:, j, i] - 100.0
    # 2,000 draws: their mean within 4 standard errors of 0, their deviation within 10%
    # of 22.06 (a false failure about 1 in 10^4 and 1 in 10^9)
    assert abs(noise.mean()) < 4 * 22.0632 / math.sqrt(noise.size)
    assert noise.std() == pytest.approx(22.0632, rel=0.1)
    assert (draws[:, i, j] == draws[:, j, i]).all() and (draws[:, range(k), range(k)] == 0).all()


def test_spiked_denoise_keeps_a_strong_spike_and_drops_pure_noise():
    # K = 35, sigma 1: the noise's eigenvalues fill [-11.8, 11.8]. Pure noise: at most one
    # eigenvalue crosses the edge by a hair (Tracy-Widom fluctuations of order K^(-1/6) of
    # it), so the estimate is small against the noise it was given (over 20 seeded draws,
    # its Frobenius norm below 0.3 of the noise's). A rank-one spike of eigenvalue 40 is
    # recovered nearer than the noisy matrix is (Frobenius error below 0.4 of the noise's).
    K, rng = 35, np.random.default_rng(3)
    j, i = np.triu_indices(K, 1)
    v = rng.normal(size=K)
    v /= np.linalg.norm(v)
    spike = 40.0 * np.outer(v, v)
    np.fill_diagonal(spike, 0.0)
    for _ in range(20):
        N = np.zeros((K, K))
        N[j, i] = rng.normal(size=j.size)
        N = N + N.T
        assert np.linalg.norm(spiked_denoise(N, 1.0)) < 0.3 * np.linalg.norm(N)
        got = spiked_denoise(spike + N, 1.0)
        assert np.linalg.norm(got - spike) < 0.4 * np.linalg.norm(N)
        assert np.allclose(got, got.T) and (np.diag(got) == 0).all()


def _communities(rng: np.random.Generator, n: int, d: int) -> ItemSets:
    """``n`` records in two halves: each holds each item of its own community (items 0-4,
    or 5-9) with chance 0.6, none of the other's, and 10 random items of 10-``d``."""
    rows = []
    for r in range(n):
        own = np.arange(5) + 5 * (r % 2)
        rows.append(np.concatenate([own[rng.random(5) < 0.6],
                                    10 + rng.choice(d - 10, 10, replace=False)]))  # fmt: skip
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    indices = np.concatenate(rows).astype(np.int64)
    return ItemSets(sp.csr_array((np.ones(indices.size, np.uint8), indices, indptr), shape=(n, d)))


def test_the_pairs_plan_and_release_stay_within_the_budget_and_place_the_clusters(monkeypatch):
    data = _communities(np.random.default_rng(4), 2_000, 3_000)
    # the default measures the pairs at 0.12 of the head's rho; replace-one's plan lists none
    default = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, head_mode="on").plan(data)
    assert core.ADD_REMOVE_HEAD_SHARES.pairs == 0.12
    assert default.parameters.head_pairs_rho() == pytest.approx(0.12 * RHO, rel=1e-9)
    assert measure.HEAD_PAIRS in [c.mechanism for c in default.charges()]
    ro = WideRelease(epsilon=1.0, neighbours=REPLACE_ONE, head_mode="on").plan(data)
    assert measure.HEAD_PAIRS not in [c.mechanism for c in ro.charges()]
    monkeypatch.setattr(release, "ADD_REMOVE_HEAD_SHARES", SHARES)
    wide = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, head_mode="on", seed=5)
    plan = wide.plan(data)
    p = plan.parameters
    assert p.head_pairs_rho() == pytest.approx(0.07 * RHO, rel=1e-9)
    [charge] = [c for c in plan.charges() if c.mechanism == measure.HEAD_PAIRS]
    assert charge.cost == ZCDP(p.head_pairs_rho())
    r_picks, r_counts, r_sizes = p.rhos()
    eps0 = measure.pick_epsilon(r_picks, 35)
    total = plan.count_rho + 35 * bounded_range_to_zcdp(eps0) + r_counts + r_sizes
    assert total + p.tail_rho() + p.head_pairs_rho() <= 0.014973057673588525 * (1 + 1e-12)
    fitted = wide.fit(data)
    names = [e.charge.mechanism for e in wide.ledger_.entries]
    assert names.count(measure.HEAD_PAIRS) == 1 and names[-1] == measure.HEAD_PAIRS
    # The ten community items (600 records each; no record holds two of different
    # communities) are picked and kept. The fit follows the measured pairs: pairs across
    # the communities (25 of them, true count 0) are held by under a tenth as many
    # released records as pairs within them (20, true count about 360 each); the default,
    # which reads no pair, gives the same seed about as many per pair (8,738 across, 7,108
    # within). Seeded.
    X = fitted.records.matrix[:, :10].toarray().astype(np.int64)
    P = X.T @ X
    within = P[:5, :5].sum() + P[5:, 5:].sum() - np.trace(P)
    across = 2 * P[:5, 5:].sum()
    assert X.sum() > 0.8 * 6_000 and across < 0.1 * within
    assert replace(SHARES, pairs=0.0) != SHARES


def test_the_pair_estimates_say_whether_a_direction_stood_out():
    # head_pair_estimates (post-processing). Pairs at the independent law's counts plus
    # noise: where no eigenvalue crosses the noise's edge the estimates are the law's
    # (HEAD_PAIRS_GATED then fits as the default does); pure noise crosses it in about 5%
    # of draws at K = 10 (measured: 211 of 4,000), so over 200 seeded draws at most 15%
    # may (a false failure below 1 in 10^6). Two blocks of 5 items that go together (each
    # pair's weighted count 60 within a block, 0 across; the blocks' eigenvalue 240 against
    # the edge 31.6) stand out on every draw, and the estimates follow the blocks.
    K, sigma = 10, 5.0
    counts = np.full(K, 600.0)
    sizes = np.zeros(K + 1)
    sizes[3] = 1_000.0
    sizes[0] = 1_000.0
    j, i = np.triu_indices(K, 1)
    # the law's weighted pairs: 1,000 records of 3 picks, C(3, 2) / sqrt(3) each, shared evenly
    flat = np.full((K, K), 1_000 * 3 / math.sqrt(3) / (K * (K - 1) / 2))
    np.fill_diagonal(flat, 0.0)
    block = np.zeros((K, K))
    block[:5, :5] = block[5:, 5:] = 60.0
    np.fill_diagonal(block, 0.0)
    rng = np.random.default_rng(6)
    crossed = 0
    for _ in range(200):
        N = np.zeros((K, K))
        N[j, i] = rng.normal(0.0, sigma, j.size)
        N = N + N.T
        T, scale, structured = core.head_pair_estimates(flat + N, counts, sizes, sigma)
        assert scale == pytest.approx(math.sqrt(3))
        crossed += structured
        if not structured:
            assert np.allclose(T[j, i], flat[j, i])
        T, _, structured = core.head_pair_estimates(block + N, counts, sizes, sigma)
        assert structured and T[:5, :5][np.triu_indices(5, 1)].min() > 3 * T[:5, 5:].max()
    assert crossed <= 30
