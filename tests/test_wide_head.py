"""The head mode of the wide release (docs/wide.md, "Shapes" and "Privacy"): the k commonest
items picked by the exponential mechanism on whole counts, counted whole, and the number of
picked items per record. Its accounting against hand-computed values, the sensitivity of
each measurement on random neighbours, the plan against the ledger, and what it releases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery.algorithms.wide import measure
from dpquery.algorithms.wide.bound import HISTOGRAM_SENSITIVITY, head_sensitivity
from dpquery.algorithms.wide.core import BOUND_FIRST, MEASURABLE_SHARE
from dpquery.algorithms.wide.counts import AllItemCounts, PickedSizes
from dpquery.algorithms.wide.release import WideRelease, bound_shares, head_threshold_share
from dpquery.data.items import ItemSets
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.accountants import ZCDPAccountant
from dpquery.privacy.composition import Composition
from dpquery.privacy.costs import bounded_range_to_zcdp


def _records(rng: np.random.Generator, n: int, d: int, longest: int) -> sp.csr_array:
    """``n`` random records over ``d`` items, of lengths 0..longest (some very long)."""
    rows = []
    for _ in range(n):
        size = int(rng.integers(0, longest + 1))
        rows.append(np.sort(rng.choice(d, size=size, replace=False)))
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    indices = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return sp.csr_array((np.ones(indices.size, dtype=np.uint8), indices, indptr), shape=(n, d))


def _neighbour(matrix: sp.csr_array, rng: np.random.Generator, longest: int) -> sp.csr_array:
    """``matrix`` with one random record replaced by a random record (replace-one)."""
    n, d = matrix.shape
    i = int(rng.integers(n))
    new = _records(rng, 1, d, longest)
    dense = matrix.toarray()
    dense[i] = new.toarray()[0]
    return sp.csr_array(dense)


def test_pick_epsilon_against_hand_computed_values():
    # k epsilon_0^2 / 8 = rho (Cesar and Rogers 2021): rho = 0.02, k = 20 gives
    # epsilon_0 = sqrt(8 * 0.02 / 20) = sqrt(0.008) = 0.0894427191
    assert measure.pick_epsilon(0.02, 20) == pytest.approx(0.0894427191, rel=1e-9)
    assert measure.pick_epsilon(0.02, 20) < math.sqrt(0.008)  # rounded down, never above
    assert 20 * bounded_range_to_zcdp(measure.pick_epsilon(0.02, 20)) <= 0.02
    # rho = 0.0156, k = 1: sqrt(0.1248) = 0.3532704347
    assert measure.pick_epsilon(0.0156, 1) == pytest.approx(0.3532704347, rel=1e-9)
    assert head_sensitivity(20) ** 2 >= 20 and head_sensitivity(20) == pytest.approx(4.47213595)


@pytest.mark.parametrize("seed", range(4))
def test_each_head_measurement_moves_within_its_sensitivity_on_random_neighbours(seed):
    rng = np.random.default_rng(seed)
    d, longest = 60, 60  # records up to every item: no bound on a record's length
    for _ in range(50):
        D = _records(rng, 30, d, longest)
        D2 = _neighbour(D, rng, longest)
        a, b = ItemSets(D), ItemSets(D2)
        [ca] = AllItemCounts(d).count(a)
        [cb] = AllItemCounts(d).count(b)
        # the picks' utility (every item's whole count): sensitivity 1 per item
        assert np.abs(ca - cb).max() <= 1
        picked = np.sort(rng.choice(d, size=int(rng.integers(1, 25)), replace=False))
        # the picked items' counts: L2 at most sqrt(k)
        assert np.linalg.norm(ca[picked] - cb[picked]) <= head_sensitivity(picked.size)
        [ha] = PickedSizes(picked).count(a)
        [hb] = PickedSizes(picked).count(b)
        assert ha.sum() == hb.sum() == 30 and ha.size == picked.size + 1
        assert np.linalg.norm(ha - hb) <= HISTOGRAM_SENSITIVITY


def test_the_sensitivities_are_reached():
    # a record of every picked item replaced by an empty one: each of the k counts moves by 1
    # (L2 sqrt(k)) and two cells of the histogram by 1 (sqrt 2): the bounds are tight
    full = ItemSets(sp.csr_array(np.ones((3, 5), dtype=np.uint8)))
    empty = ItemSets(sp.csr_array(np.array([[0] * 5, [1] * 5, [1] * 5], dtype=np.uint8)))
    picked = np.arange(5)
    [ca], [cb] = AllItemCounts(5).count(full), AllItemCounts(5).count(empty)
    assert np.linalg.norm(ca - cb) == pytest.approx(math.sqrt(5))
    [ha], [hb] = PickedSizes(picked).count(full), PickedSizes(picked).count(empty)
    assert np.linalg.norm(ha - hb) == pytest.approx(math.sqrt(2))


def _head_data(seed: int = 0) -> ItemSets:
    """700 records over 9,000 items: items 0-4 in 60% of the records, the rest rare."""
    rng = np.random.default_rng(seed)
    dense = (rng.random((700, 9000)) < 0.005).astype(np.uint8)
    dense[:, :5] = rng.random((700, 5)) < 0.6
    return ItemSets(sp.csr_array(dense))


def _spy_draws(monkeypatch, ledger: Ledger) -> list[int]:
    """The number of ledger entries at each noise draw (discrete Gaussian or exponential
    mechanism), appended as the draws happen."""
    import dpquery.privacy.integer_mechanisms as im
    import dpquery.privacy.mechanisms as mech

    seen: list[int] = []
    draw_dg, draw_em = im.sample_discrete_gaussian, mech.sample_from_log_weights

    def spy_dg(sigma2, size, rng):
        seen.append(len(ledger.entries))
        return draw_dg(sigma2, size, rng)

    def spy_em(log_w, k, rng):
        seen.append(len(ledger.entries))
        return draw_em(log_w, k, rng)

    monkeypatch.setattr(im, "sample_discrete_gaussian", spy_dg)
    monkeypatch.setattr(mech, "sample_from_log_weights", spy_em)
    return seen


def test_the_plan_lists_every_charge_and_each_reaches_the_ledger_before_its_draw(monkeypatch):

    data = _head_data()
    model = WideRelease(epsilon=1.0, delta=1 / 700**2, seed=0, pool=3000)
    plan = model.plan(data)
    assert plan.parameters.mode == "head" and plan.parameters.K == 20
    planned = plan.charges()
    ledger = Ledger(Budget.approx(1.0, 1 / 700**2))
    seen = _spy_draws(monkeypatch, ledger)
    release = model.with_params(epsilon=None, delta=None).fit(data, ledger=ledger)
    charged = [e.charge for e in ledger.entries]
    assert (
        [c.mechanism for c in charged]
        == [c.mechanism for c in planned]
        == ([measure.PICKS] * 20 + [measure.HEAD_COUNTS, measure.HEAD_SIZES])
    )
    assert [c.cost for c in charged] == [c.cost for c in planned]
    assert seen == list(range(1, 23))  # each draw came after its own charge
    # the whole plan spends the budget's rho: picks 60%, counts 30%, sizes 10%
    rho = plan.parameters.rho
    picks = sum(bounded_range_to_zcdp(c.cost.epsilon) for c in charged[:20])
    assert picks == pytest.approx(0.6 * rho, rel=1e-9) and picks <= 0.6 * rho
    assert charged[20].cost.rho == pytest.approx(0.3 * rho)
    assert charged[21].cost.rho == pytest.approx(0.1 * rho)
    assert release.parameters["mode"] == "head"


def test_the_picks_find_a_clear_head_and_the_release_holds_it():
    # items 0-4 in ~420 of 700 records, the others in ~3.5: each pick's weight of a head item
    # is exp(0.079 * 420 / 2) = e^16.6 against 9,000 e^(0.079 * 3.5 / 2) = e^9.2 for the rest,
    # so a pick misses the head (while one is left) with chance under e^-7 = 1e-3; over the 5
    # picks that take them and 5 seeds, under 3% false failures.
    data = _head_data()
    exact = np.bincount(data.matrix.indices, minlength=data.d)
    for seed in range(5):
        release = WideRelease(epsilon=1.0, delta=1 / 700**2, seed=seed, pool=3000).fit(data)
        held = np.bincount(release.records.matrix.indices, minlength=data.d)
        sigma = release.parameters["sigma_items"]  # 35.8 records
        # each head item kept, within 5 noise sigma of its count (plus the fit's rounding of
        # 10 records): a noise draw past 5 sigma has chance 6e-7, 2e-5 over 25 counts
        assert np.abs(held[:5] - exact[:5]).max() < 5 * sigma + 10
        # nothing else: a rare item's count (3.5 records) never clears the threshold (123)
        assert held[5:].max() == 0
        assert release.parameters["items_kept"] == 5


def test_the_threshold_share_and_warning_follow_the_budget():
    def plan(epsilon):
        return WideRelease(epsilon=epsilon, delta=1 / 700**2).plan(_Sizes(700, 9000))

    # epsilon 1: rho 0.026, counts' rho 0.0078, sigma = sqrt(20 / (2 * 0.0078)) = 35.8
    # records; threshold sqrt(2 ln 20) + 1 = 3.448 sigma = 123.5 records = 17.6% of 700
    assert head_threshold_share(plan(1.0), 700) == pytest.approx(0.176, abs=0.002)
    assert head_threshold_share(plan(0.1), 700) > 1  # no item can be kept


def test_privacy_synth_shows_the_head_mode_and_its_rule():
    import json

    r = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "1")
    assert r.code == 0, r.err
    assert ("mode: head (with the bound s drawn privately from [8, 16, 32, 64, 128], an item "
            "must be among the s kept items of 10.7% (s = 8) to 43% (s = 128) of the "
            "records") in r.out  # fmt: skip
    assert "at every bound of the grid" in r.out
    assert "20 x epsilon=0.078997 (bounded range)" in r.out
    assert "warning" not in r.out
    j = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "1",
                    "--json")  # fmt: skip
    plan = json.loads(j.out)
    assert plan["mode"] == "head" and "head mode" in plan["rule"]
    assert [c["mechanism"] for c in plan["charges"]] == [
        measure.PICKS, measure.HEAD_COUNTS, measure.HEAD_SIZES,
    ]  # fmt: skip
    low = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "0.1")
    assert "warning: " in low.out and "no item can" in low.out
    off = dpquery_cli("privacy", "synth", "--n", "700", "--items", "9000", "--epsilon", "1",
                      "--head-mode", "off")  # fmt: skip
    assert "mode: sparse" in off.out and measure.ITEMS in off.out


class _Sizes:
    def __init__(self, n: int, d: int) -> None:
        self.n, self.d = n, d


def test_the_plan_takes_the_head_mode_from_its_measured_share():
    from dpquery.algorithms.wide.release import HEAD_MODE_SHARE, measurable_share

    def plan(n, d=9000, epsilon=1.0, **options):
        return WideRelease(epsilon=epsilon, delta=1 / n**2, **options).plan(_Sizes(n, d))

    # The bound drawn privately (the default): the head mode where the drawn bound leaves the
    # sparse mode swamped (10%). n = 700: swamped at every bound of the grid, the head mode
    # with no bound drawn; 2,800: only at s = 128 (12.1%), the bound drawn first; 4,200 (8.3%
    # at s = 128), 7,000 and npm_words' n: never, the sparse mode.
    for n, mode, switch in ((700, "head", ()), (2800, BOUND_FIRST, (128,)),
                            (4200, "sparse", ()), (7000, "sparse", ()),
                            (196_708, "sparse", ())):  # fmt: skip
        p = plan(n)
        assert (p.parameters.mode, p.parameters.switch) == (mode, switch)
        assert p.parameters.grid == (8, 16, 32, 64, 128)
        swamped = tuple(g for g, x in bound_shares(p, n).items() if x >= MEASURABLE_SHARE)
        assert swamped == (switch or (p.parameters.grid if mode == "head" else ()))
    # npm_words' first 3,000 records over 2,000 words: the head mode only if s = 128 is drawn
    assert plan(3000, 2000).parameters.switch == (128,)
    # The bound given: the head mode from the share at that bound (4%, tuned at s = 32)
    for n, mode in ((700, "head"), (2800, "head"), (4200, "head"), (7000, "sparse")):
        p = plan(n, bound=32)
        x = measurable_share(WideRelease(epsilon=1.0, delta=1 / n**2, bound=32,
                                         head_mode="off").plan(_Sizes(n, 9000)), n)  # fmt: skip
        assert p.parameters.mode == mode and (x >= HEAD_MODE_SHARE) == (mode == "head")
    assert plan(196_708, head_mode="on").parameters.mode == "head"
    assert plan(700, head_mode="off").parameters.mode == "sparse"
    assert plan(700, head=7).parameters.K == 7  # the head mode's k is --head when given
    assert plan(2800, head=7).parameters.picks == 7


def _long_and_short(n_long: int, seed: int = 0) -> ItemSets:
    """1,500 records over 3,000 items: items 0-9 in 60% of the records; ``n_long`` records
    of about 100 rare items, the others of about 3 (lengths' 0.9-quantile: about 11 when
    ``n_long`` is 0, about 120 when 1,500)."""
    rng = np.random.default_rng(seed)
    n, d = 1500, 3000
    dense = rng.random((n, d)) < 0.001
    dense[:n_long, 10:] |= rng.random((n_long, d - 10)) < 100 / d
    dense[:, :10] = rng.random((n, 10)) < 0.6
    return ItemSets(sp.csr_array(dense.astype(np.uint8)))


@pytest.mark.parametrize("n_long, mode", [(1500, "head"), (0, "sparse")])
def test_the_bound_drawn_first_chooses_the_mode_and_every_charge_precedes_its_draw(
    monkeypatch, n_long, mode
):

    data = _long_and_short(n_long)
    model = WideRelease(epsilon=1.0, delta=1 / 1500**2, seed=3, pool=3000)
    plan = model.plan(data)
    # shares 5.4% (s = 8) to 21% (s = 128): the head mode from s = 32
    assert plan.parameters.mode == BOUND_FIRST and plan.parameters.switch == (32, 64, 128)
    ledger = Ledger(Budget.approx(1.0, 1 / 1500**2))
    seen = _spy_draws(monkeypatch, ledger)
    release = model.with_params(epsilon=None, delta=None).fit(data, ledger=ledger)
    charged = [e.charge for e in ledger.entries]
    # records of ~110 items draw s = 128 (the head mode), of ~9 items s = 16 (the sparse)
    assert release.parameters["mode"] == mode and release.parameters["bound_first"]
    assert release.parameters["s"] == (128 if mode == "head" else 16)
    expected = [measure.BOUND] + (
        [measure.PICKS] * 20 + [measure.HEAD_COUNTS, measure.HEAD_SIZES]
        if mode == "head" else [measure.ITEMS, measure.SIZES, measure.PAIRS]
    )  # fmt: skip
    assert [c.mechanism for c in charged] == expected
    assert seen == list(range(1, len(expected) + 1))  # each draw came after its own charge
    branch = plan.charges() if mode == "sparse" else plan.charges()[:1] + plan.head_charges()
    assert [c.cost for c in charged] == [c.cost for c in branch]
    assert ZCDPAccountant().rho(Composition(charged).totals()) == pytest.approx(
        plan.parameters.rho, rel=1e-9
    )
    if mode == "head":
        kept = np.bincount(release.records.matrix.indices, minlength=data.d)
        # the common items kept; the others (each in about 50 records) at most at their
        # noisy counts past the threshold (a 5-sigma draw: chance 3e-7)
        assert set(range(10)) <= set(np.flatnonzero(kept))
        assert kept[10:].max() < 50 + 5 * release.parameters["sigma_items"]


def test_the_bound_drawn_first_gives_the_sparse_mode_s_bytes_where_it_keeps_it():
    data = _long_and_short(0, seed=1)
    first = WideRelease(epsilon=1.0, delta=1 / 1500**2, seed=5, pool=3000).fit(data)
    off = WideRelease(epsilon=1.0, delta=1 / 1500**2, seed=5, pool=3000, head_mode="off")
    sparse = off.fit(data)
    assert first.parameters["mode"] == "sparse" and first.parameters["bound_first"]
    assert (first.records.matrix != sparse.records.matrix).nnz == 0


def test_privacy_synth_shows_the_bound_drawn_first():
    r = dpquery_cli("privacy", "synth", "--n", "3000", "--items", "2000", "--epsilon", "1")
    assert r.code == 0, r.err
    assert "mode: bound first" in r.out and "if the bound drawn is one of [128]" in r.out
    assert "or, where the bound drawn takes the head mode, after it instead:" in r.out
    assert measure.BOUND in r.out and measure.ITEMS in r.out and measure.HEAD_COUNTS in r.out


# -- the sparse mode's private bound: the record lengths' quantile -------------------------
def test_bound_epsilon_against_hand_computed_values():
    # epsilon^2 / 8 = rho: rho = 0.0005 gives sqrt(0.004) = 0.0632455532; npm_words' plan at
    # epsilon 1 (2% of rho = 0.0123967) 0.0445363
    assert measure.bound_epsilon(0.0005) == pytest.approx(0.0632455532, rel=1e-9)
    assert measure.bound_epsilon(0.02 * 0.0123967) == pytest.approx(0.0445363, rel=1e-5)
    assert bounded_range_to_zcdp(measure.bound_epsilon(0.0005)) <= 0.0005


@pytest.mark.parametrize("seed", range(3))
def test_the_length_ranks_move_by_at_most_one_on_random_neighbours(seed):
    from dpquery.algorithms.wide.counts import LengthCounts

    rng = np.random.default_rng(seed)
    grid = np.array([1, 2, 4, 8, 16, 32, 64])
    for _ in range(100):
        D = _records(rng, 25, 60, 60)
        D2 = _neighbour(D, rng, 60)
        [a] = LengthCounts(grid).count(ItemSets(D))
        [b] = LengthCounts(grid).count(ItemSets(D2))
        assert np.abs(a - b).max() <= 1  # so |rank - q n| moves by at most 1: sensitivity 1
        lengths = np.diff(D.indptr)
        assert a.tolist() == [(lengths <= g).sum() for g in grid]


def test_the_bound_is_the_quantile_on_clear_data_and_charged_before_its_draw():
    # 10,000 records: half of 5 items, 30% of 12, 20% of 30: the 9,000th shortest is in
    # (16, 32], so 32 (utility 0); 16 is 1,000 records off, 64 and 128 1,001 (past the
    # longest record, yet not tied with 32), 8 4,000: at epsilon 0.089 the chance of any
    # other than 32 is under 4 exp(-0.089 * 1000 / 2) = 2e-19
    below = np.array([5000, 8000, 10000, 10000, 10000])
    grid = np.array([8, 16, 32, 64, 128])
    assert measure.bound_distance(below.astype(float), 9000).tolist() == [4000, 1000, 0, 1001,
                                                                           1001]  # fmt: skip
    ledger = Ledger(Budget.approx(1.0, 1e-8))
    for seed in range(5):
        s = measure.pick_bound(below, grid, 0.9, 10_000, 0.001, np.random.default_rng(seed),
                               ledger)  # fmt: skip
        assert s == 32
    assert [e.charge.mechanism for e in ledger.entries] == [measure.BOUND] * 5


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_utility_moves_by_at_most_one_on_random_neighbours(seed):
    from dpquery.algorithms.wide.counts import LengthCounts

    rng = np.random.default_rng(seed)
    grid = np.array([1, 2, 4, 8, 16, 32, 64])
    worst = 0.0
    for _ in range(200):
        D = _records(rng, 25, 60, 60)
        D2 = _neighbour(D, rng, 60)
        [a] = LengthCounts(grid).count(ItemSets(D))
        [b] = LengthCounts(grid).count(ItemSets(D2))
        for q in (0.5, 0.9, 0.99):
            r = math.ceil(q * 25)
            move = np.abs(measure.bound_distance(a.astype(float), r)
                          - measure.bound_distance(b.astype(float), r))  # fmt: skip
            worst = max(worst, float(move.max()))
    assert worst <= 1.0  # the exponential mechanism's sensitivity 1
    assert worst == 1.0  # and reached


def test_the_sparse_plan_chooses_its_bound_privately_unless_one_is_given():
    rng = np.random.default_rng(0)
    dense = (rng.random((3000, 200)) < 0.03).astype(np.uint8)
    data = ItemSets(sp.csr_array(dense))  # lengths ~6, 0.9-quantile 9: in (8, 16], so 16
    model = WideRelease(epsilon=1.0, delta=1 / 3000**2, seed=0, pool=3000, head_mode="off")
    plan = model.plan(data)
    assert plan.parameters.grid == (8, 16, 32, 64, 128) and plan.parameters.quantile == 0.9
    planned = [c.mechanism for c in plan.charges()]
    assert planned == [measure.BOUND, measure.ITEMS, measure.SIZES, measure.PAIRS]
    rho = plan.parameters.rho
    assert plan.parameters.bound_rho() == pytest.approx(0.02 * rho)
    assert sum(plan.parameters.rhos()) == pytest.approx(0.98 * rho)
    release = model.fit(data)
    assert [e.charge.mechanism for e in release.ledger.entries] == planned
    assert release.parameters["s"] == 16 and release.parameters["s_private"]
    fixed = WideRelease(epsilon=1.0, delta=1 / 3000**2, bound=32, head_mode="off").plan(data)
    assert fixed.parameters.grid == () and measure.BOUND not in [
        c.mechanism for c in fixed.charges()
    ]
