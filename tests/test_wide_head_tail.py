"""The head mode's tail fill under add/remove (docs/wide.md, "The tail fill"): the unpicked
items' total, each record's cut at ``TAIL_BOUND``, measured by the discrete Gaussian
(sensitivity ``TAIL_BOUND``, checked on random neighbours of ``n`` and ``n + 1`` records),
its charge against hand-computed values, and the fill (post-processing) spreading
``TAIL_FILL`` of its mean over the unpicked items."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery.algorithms.wide import core, measure
from dpquery.algorithms.wide.core import TAIL_BOUND, TAIL_FILL, tail_fill, tail_share
from dpquery.algorithms.wide.counts import PickedSizes
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data.items import ItemSets
from dpquery.privacy import ZCDP, Budget, Ledger
from dpquery.privacy.costs import bounded_range_to_zcdp
from dpquery.privacy.neighbours import ADD_REMOVE

RHO = 0.014673596520116754  # epsilon 1, delta 1e-9, less the noisy n's 2%


def _items(rng: np.random.Generator, n: int, d: int, longest: int) -> ItemSets:
    """``n`` random records over ``d`` items, of random lengths up to ``longest``."""
    rows = [rng.choice(d, size=int(rng.integers(0, longest + 1)), replace=False) for _ in range(n)]
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    indices = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64)
    matrix = sp.csr_array((np.ones(indices.size, np.uint8), indices, indptr), shape=(n, d))
    return ItemSets(matrix)


def test_the_tail_total_moves_by_at_most_its_bound_on_random_neighbours():
    # adding one record of up to 2 * bound items moves sum min(|x| - a(x), bound) by at
    # most bound, and by exactly bound for a record holding bound or more unpicked items
    rng = np.random.default_rng(0)
    bound, d = 12, 60
    picked = np.array([0, 3, 7, 11, 20])
    moved = []
    for _ in range(200):
        data = _items(rng, int(rng.integers(1, 30)), d, 2 * bound)
        extra = _items(rng, 1, d, 2 * bound)
        grown = ItemSets(sp.csr_array(sp.vstack([data.matrix, extra.matrix])))
        [_, before] = PickedSizes(picked, bound).count(data)
        [_, after] = PickedSizes(picked, bound).count(grown)
        moved.append(int(after[0] - before[0]))
    assert 0 <= min(moved) and max(moved) == bound


def test_picked_sizes_keep_their_one_cell_without_a_tail_bound():
    rng = np.random.default_rng(1)
    data = _items(rng, 20, 30, 10)
    picked = np.array([1, 2, 5])
    [sizes] = PickedSizes(picked).count(data)
    with_tail = PickedSizes(picked, 4).count(data)
    assert PickedSizes(picked).cells() == [4] and PickedSizes(picked, 4).cells() == [4, 1]
    assert (with_tail[0] == sizes).all()
    dense = data.matrix.toarray()
    a = dense[:, picked].sum(axis=1)
    assert with_tail[1][0] == np.minimum(dense.sum(axis=1) - a, 4).sum()


def test_the_tail_charge_against_hand_computed_values():
    # rho 0.0002934719304 (2% of 0.0146736): sigma = 256 / sqrt(2 * 0.0002934719304)
    # = 10,566.76 records of unpicked items; charged as zCDP before the draw
    ledger = Ledger(Budget.zcdp(1.0))
    rng = np.random.default_rng(2)
    r_tail = 0.02 * RHO
    assert measure.noise_sigma(r_tail, 256.0) == pytest.approx(10566.76, abs=0.01)
    draws = [measure.tail_total(np.array([50_000]), 256, r_tail, rng, ledger) for _ in range(400)]
    [entry] = {e.charge.mechanism for e in ledger.entries}
    assert entry == measure.HEAD_TAIL and len(ledger.entries) == 400
    assert all(e.charge.cost == ZCDP(r_tail) for e in ledger.entries)
    # the noise's spread: 400 draws, their standard deviation within 20% of 10,567
    # (a false failure about 1 in 10^6: the sample deviation's sd is 3.5% here)
    assert np.std(draws) == pytest.approx(10566.76, rel=0.2)


def test_the_add_remove_head_plan_lists_the_tail_total_within_the_budget():
    data = ItemSets(sp.csr_array((700, 9000), dtype=np.uint8))
    plan = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, head_mode="on").plan(data)
    p = plan.parameters
    _, r_counts, r_sizes = p.rhos()
    assert r_sizes == pytest.approx(0.03 * RHO, rel=1e-9)
    assert p.tail_rho() == pytest.approx(0.0002934719304023, rel=1e-9)
    tail = [c for c in plan.charges() if c.mechanism == measure.HEAD_TAIL]
    assert [c.cost for c in tail] == [ZCDP(p.tail_rho())]
    eps0 = measure.pick_epsilon(p.rhos()[0], 35)
    total = plan.count_rho + 35 * bounded_range_to_zcdp(eps0) + r_counts + r_sizes
    assert total + p.tail_rho() <= 0.014973057673588525 * (1 + 1e-12)
    # replace-one's head mode measures no tail (its releases are pinned)
    replace_one = WideRelease(epsilon=1.0, delta=1e-9, head_mode="on").plan(data)
    assert replace_one.parameters.tail_rho() == 0.0
    assert measure.HEAD_TAIL not in [c.mechanism for c in replace_one.charges()]


def test_tail_share_against_hand_computed_values():
    # 0.4 * 60,000 / (700 * 8,965) = 0.0038244
    assert tail_share(60_000.0, 10_000.0, 700, 8_965) == pytest.approx(
        TAIL_FILL * 60_000 / (700 * 8_965)
    )
    assert tail_share(60_000.0, 10_000.0, 700, 8_965) == pytest.approx(0.00382443, rel=1e-5)
    # below 3 noise deviations (or negative): no fill
    assert tail_share(29_999.0, 10_000.0, 700, 8_965) == 0.0
    assert tail_share(-5_000.0, 10_000.0, 700, 8_965) == 0.0
    assert tail_share(1e9, 1.0, 10, 5) == 1.0  # at most every record


def test_tail_fill_spreads_the_share_over_the_unpicked_items_only():
    rng = np.random.default_rng(3)
    n, d = 2_000, 500
    head = np.array([0, 1, 2])
    dense = np.zeros((n, d), dtype=np.uint8)
    dense[:1000, 0] = dense[:500, 1] = 1
    records = sp.csr_array(dense)
    out = tail_fill(records, head, 0.05, rng)
    counts = np.asarray(out.sum(axis=0)).ravel()
    assert (counts[head] == dense[:, head].sum(axis=0)).all()  # the picked items untouched
    assert (out.toarray() >= dense).all()  # nothing taken away
    # each unpicked item in about 0.05 of the records: systematic counts of 100 each, less
    # those dealt twice to one record (a record of ~25 fill items over 497: about 2.5%)
    assert 0.95 * 0.05 * n <= counts[3:].mean() <= 0.05 * n
    assert counts[3:].min() >= 85 and counts[3:].max() <= 100
    # a record's number of fill items grows with its items: the first 500 rows hold 2
    fill = np.diff(out.indptr) - np.diff(records.indptr)
    assert fill[:500].mean() > 1.3 * fill[1000:].mean()
    assert tail_fill(records, head, 0.0, rng) is records


def clear_head_table() -> ItemSets:
    """700 records over 4,012 items: 12 in 30% of them, the other 4,000 in 2%."""
    rng = np.random.default_rng(4)
    dense = (rng.random((700, 4012)) < 0.02).astype(np.uint8)
    dense[:, :12] = rng.random((700, 12)) < 0.3
    return ItemSets(sp.csr_array(dense))


def test_an_add_remove_release_fills_the_tail_thinly():
    # 700 records, 12 head items in 30% of them, the other 4,000 in 2%: the fill puts each
    # unpicked item in about 0.4 of the records' mean share of them (cut at 256 items),
    # never near the head's. Seeded (0-1); the total's noise is 10,567 against 56,000:
    # the share within 0.5-1.5x of 0.4 * 0.02 fails about 1 in 10^4.
    data = clear_head_table()
    for seed in (0, 1):
        release = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, seed=seed).fit(data)
        share = release.parameters["tail_share"]
        assert release.parameters["mode"] == "head"
        assert 0.5 * TAIL_FILL * 0.02 < share < 1.5 * TAIL_FILL * 0.02, share
        out = release.records.matrix
        freq = np.asarray(out.sum(axis=0)).ravel() / out.shape[0]
        # the unpicked items at the fill's share (a rare pick may be kept higher, at its
        # shrunk estimate: at most 35 - 12 of those)
        assert np.median(freq[12:]) == pytest.approx(share, rel=0.25)
        assert (freq[12:] > 0.05).sum() <= 23 and freq[:12].min() > 0.12
        assert math.isfinite(release.parameters["fit_excess_sigmas"])
    # at epsilon 0.1 the total's noise (about 100,000) hides its 56,000: no fill, and no
    # head clears its noise: every record empty, as the all-zeros table (a false failure
    # needs a 0.4-sigma total to draw 3 sigma: about 1 in 10^4)
    low = WideRelease(epsilon=0.1, neighbours=ADD_REMOVE, seed=0).fit(data)
    assert low.parameters["tail_share"] == 0.0 and low.records.matrix.nnz == 0


def test_tail_constants_are_the_documented_ones():
    assert (TAIL_BOUND, TAIL_FILL, core.TAIL_SIGMAS) == (256, 0.4, 3.0)
    assert core.ADD_REMOVE_HEAD_SHARES == core.HeadShares(0.63, 0.2, 0.03, 0.02, 0.12)


def test_privacy_synth_lists_the_tail_total_under_add_remove_only():
    r = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "1",
                    "--neighbours", "add-remove", "--head-mode", "on")  # fmt: skip
    assert r.code == 0, r.err
    assert measure.HEAD_TAIL in r.out and "cut at 256 (sensitivity 256)" in r.out
    replace_one = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon",
                              "1", "--neighbours", "replace-one", "--head-mode", "on")  # fmt: skip
    assert replace_one.code == 0 and measure.HEAD_TAIL not in replace_one.out
