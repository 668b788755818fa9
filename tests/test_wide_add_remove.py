"""The wide release under the add/remove-one-record relation (docs/wide.md, "Privacy"): each
sensitivity on random neighbouring tables of different sizes, the noisy n that every rule
reads, no exact n in what the release outputs, and replace-one's bytes pinned."""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from dpquery.algorithms import registry
from dpquery.algorithms.wide import fit, measure
from dpquery.algorithms.wide.bound import (
    count_sensitivity,
    head_sensitivity,
    histogram_sensitivity,
    pair_sensitivity,
)
from dpquery.algorithms.wide.core import (
    ADD_REMOVE_BOUND_GRID,
    ADD_REMOVE_BOUND_QUANTILE,
    BOUND_GRID,
    BOUND_QUANTILE,
    LONG_BOUNDS_AT,
    LONG_BOUNDS_NOISE,
    long_bounds,
    pool_head_sizes,
)
from dpquery.algorithms.wide.counts import (
    AllItemCounts,
    HeadCounts,
    ItemCounts,
    LengthCounts,
    PickedSizes,
)
from dpquery.algorithms.wide.release import ADD_REMOVE_PAIR_BOUND, RECORDS_SHARE, WideRelease
from dpquery.data import ItemSets
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.budget import budget_rho
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    ADD_REMOVE_DELTA,
    NOISY_N,
    NOISY_N_SHARE,
    REPLACE_ONE,
)


def _zipf_items(n: int, d: int, seed: int, mean: float = 4.0) -> sp.csr_array:
    """Zipf-like sparse records: item j with probability proportional to 1/(j+1)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1)
    p = np.minimum(1.0, p * mean / p.sum())
    return sp.csr_array((rng.random((n, d)) < p).astype(np.uint8))


def _head_items(seed: int = 0) -> sp.csr_array:
    """700 records over 2,000 items: items 0-4 in 60% of the records, the rest rare (the
    head mode's shape)."""
    rng = np.random.default_rng(seed)
    dense = (rng.random((700, 2000)) < 0.005).astype(np.uint8)
    dense[:, :5] = rng.random((700, 5)) < 0.6
    return sp.csr_array(dense)


def _digest(records: ItemSets, parameters: dict[str, object]) -> str:
    """SHA-256 of the released matrix (shape, indptr, indices) and its parameters."""
    m = sp.csr_array(records.matrix)
    m.sort_indices()
    h = hashlib.sha256()
    for a in (np.asarray(m.shape), m.indptr, m.indices):
        h.update(np.asarray(a, dtype=np.int64).tobytes())
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return h.hexdigest()


# -- replace-one: n public, no count of it, the same draws --------------------------------
# Digests of the two seeded releases below (replace-one draws nothing for n: its bytes stay
# those of a release that knows no other relation).
SPARSE_DIGEST = "a0c8c4635fb2ce3b20ff18f1563341f1551b0ec5c9bacfca5e34544d480a5a27"
HEAD_DIGEST = "01b263dd3b736c6052f2247a61c25a9b99b09b7b7681d346c00cdb9575d9a6bd"


def test_replace_one_releases_the_pinned_bytes_with_the_same_seed():
    sparse = WideRelease(epsilon=1.0, seed=11, pair_bound=4, head=12, pool=3000,
                         head_mode="off").fit(_zipf_items(3000, 80, 3))  # fmt: skip
    head = WideRelease(epsilon=1.0, seed=5, pool=3000).fit(_head_items())
    assert sparse.parameters["mode"] == "sparse" and head.parameters["mode"] == "head"
    assert _digest(sparse.records, sparse.parameters) == SPARSE_DIGEST
    assert _digest(head.records, head.parameters) == HEAD_DIGEST


# -- add/remove: each sensitivity on random neighbours ----------------------------------------
def _records_near(rng: np.random.Generator, n: int, d: int, s: int) -> sp.csr_array:
    """``n`` random records over ``d`` items, most of about ``s`` items (lengths s - 3 to
    s + 5), one in ten empty or of every item: around the bound and far from it."""
    rows = []
    for _ in range(n):
        u = rng.random()
        size = 0 if u < 0.05 else d if u < 0.1 else int(rng.integers(max(s - 3, 0), s + 6))
        rows.append(np.sort(rng.choice(d, size=min(size, d), replace=False)))
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    indices = np.concatenate(rows) if n else np.zeros(0, dtype=np.int64)
    return sp.csr_array((np.ones(indices.size, dtype=np.uint8), indices, indptr), shape=(n, d))


def _add_or_remove(
    matrix: sp.csr_array, rng: np.random.Generator, s: int
) -> tuple[sp.csr_array, sp.csr_array]:
    """``(D, D')``: ``matrix`` and the same with one random record added at a random row (the
    rows after it move) or one random record removed, in a random order of the two."""
    n, d = matrix.shape
    dense = matrix.toarray()
    if rng.random() < 0.5 and n > 1:
        other = np.delete(dense, int(rng.integers(n)), axis=0)
    else:
        new = _records_near(rng, 1, d, s).toarray()
        other = np.insert(dense, int(rng.integers(n + 1)), new, axis=0)
    pair = (sp.csr_array(dense), sp.csr_array(other))
    return pair if rng.random() < 0.5 else pair[::-1]


@pytest.mark.parametrize("n", [2, 9, 40, 150])
def test_each_measurement_moves_within_its_add_remove_sensitivity_on_random_neighbours(n):
    """Tables of ``n`` and ``n + 1`` records, lengths around ``s``: after the cut, the item
    counts move by at most sqrt(s) in L2, the size histogram and the head sizes by 1, the
    head pairs by sqrt(C(s2, 2)), every whole count by 1 (the picks' and the bound's
    utilities), the picked counts by sqrt(k), n by 1. Deterministic bounds: no false
    failure."""
    rng = np.random.default_rng(n)
    d, s, s2 = 40, 6, 4
    head = np.sort(rng.choice(d, size=12, replace=False))
    grid = np.array([2, 4, 8, 16, 32])
    for _ in range(40):
        key = int(rng.integers(2**63))
        D, D2 = _add_or_remove(_records_near(rng, n, d, s), rng, s)
        a, b = ItemSets(D), ItemSets(D2)
        assert abs(a.n - b.n) == 1
        [ca], [cb] = ItemCounts(key, s, d).count(a), ItemCounts(key, s, d).count(b)
        assert np.linalg.norm(ca - cb) <= count_sensitivity(s, ADD_REMOVE)
        heads = HeadCounts(key, s, s2, head)
        (ha, pa), (hb, pb) = heads.count(a), heads.count(b)
        assert np.abs(ha - hb).sum() == 1  # one cell, by 1
        assert np.linalg.norm(ha - hb) <= histogram_sensitivity(ADD_REMOVE)
        assert np.linalg.norm(pa - pb) <= pair_sensitivity(s2, ADD_REMOVE)
        [wa], [wb] = AllItemCounts(d).count(a), AllItemCounts(d).count(b)
        assert np.abs(wa - wb).max() <= 1
        picked = np.sort(rng.choice(d, size=int(rng.integers(1, 20)), replace=False))
        assert np.linalg.norm(wa[picked] - wb[picked]) <= head_sensitivity(picked.size)
        [sa], [sb] = PickedSizes(picked).count(a), PickedSizes(picked).count(b)
        assert np.abs(sa - sb).sum() == 1
        [la], [lb] = LengthCounts(grid).count(a), LengthCounts(grid).count(b)
        assert np.abs(la - lb).max() <= 1  # so -|below_g - 0.9 n_hat| moves by at most 1


def test_the_add_remove_sensitivities_are_reached_and_half_replace_ones():
    """Adding a record of s items (s2 of them in the head) to a table reaches each bound:
    sqrt(s), sqrt(C(s2, 2)) and 1, which square to half of replace-one's."""
    s, s2, d = 5, 4, 12
    head = np.arange(6)
    base = sp.csr_array(np.zeros((3, d), dtype=np.uint8))
    more = sp.csr_array(np.vstack([np.zeros((3, d)), (np.arange(d) < s)[None]]).astype(np.uint8))
    a, b = ItemSets(base), ItemSets(more)
    [ca], [cb] = ItemCounts(1, s, d).count(a), ItemCounts(1, s, d).count(b)
    assert np.linalg.norm(ca - cb) == pytest.approx(count_sensitivity(s, ADD_REMOVE))
    (ha, pa), (hb, pb) = HeadCounts(1, s, s2, head).count(a), HeadCounts(1, s, s2, head).count(b)
    assert np.linalg.norm(pa - pb) == pytest.approx(pair_sensitivity(s2, ADD_REMOVE))
    assert np.linalg.norm(ha - hb) == histogram_sensitivity(ADD_REMOVE) == 1.0
    for k in range(1, 200):
        assert Fraction(count_sensitivity(k, ADD_REMOVE)) ** 2 >= k
        assert Fraction(pair_sensitivity(k, ADD_REMOVE)) ** 2 >= max(k * (k - 1) // 2, 1)
        assert count_sensitivity(k, ADD_REMOVE) ** 2 == pytest.approx(count_sensitivity(k) ** 2 / 2)
    assert pair_sensitivity(8, ADD_REMOVE) ** 2 == pytest.approx(28)  # C(8, 2)
    assert pair_sensitivity(8) ** 2 == pytest.approx(56)


# -- add/remove: n private --------------------------------------------------------------------
def _exact_n_in(text: str, n: int) -> bool:
    return re.search(rf"(?<![\d.,])({n}|{n:,})(?![\d.,])", text) is not None


@pytest.mark.parametrize(("data", "options", "swamped"), [
    (lambda n: _zipf_items(n, 80, 3),
     {"epsilon": 0.3, "pair_bound": 4, "head": 12, "pool": 3000, "head_mode": "off"}, True),
    (lambda n: _head_items()[:n], {"epsilon": 0.1, "pool": 3000}, True),
    (lambda n: _zipf_items(n, 80, 3), {"epsilon": 3.0, "pool": 3000, "head_mode": "off"}, False),
])  # fmt: skip
def test_an_add_remove_release_on_n_and_n_plus_1_records_tells_no_exact_n(data, options, swamped):
    """n = 700 and 701 records, the same seed, the sparse and the head mode: the output's
    size, the parameters, the privacy report and every warning (a large delta, at a public
    threshold; the noise check, where noise swamps the counts, on the noisy n) never say the
    exact n. The seed
    was chosen so that the noisy n differs from both (a noisy n equal to n would be a
    coincidence the test cannot tell from a leak)."""
    for n in (700, 701):
        table = data(n) if n <= 700 else sp.csr_array(sp.vstack([data(700), data(700)[:1]]))
        assert table.shape[0] == n
        model = WideRelease(delta=0.01, seed=4, neighbours="add-remove", **options)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            release = model.fit(table)
        said = [str(w.message) for w in caught]
        assert any("(a noisy count)" in m for m in said) == swamped  # the check on the noisy n
        # the large delta said at the public threshold of add/remove, as every release says it
        assert any("delta=0.01 is at least 1e-06" in m for m in said)
        noisy = release.records.n
        assert release.parameters["n"] == noisy and noisy not in (700, 701)
        assert release.privacy()["neighbouring"].startswith("unbounded DP (add or remove")
        text = json.dumps([release.parameters, release.privacy(), said], default=str)
        assert not _exact_n_in(text, n), text
        assert release.ledger.entries[0].charge.mechanism == measure.RECORDS


def test_add_remove_defaults_delta_to_a_public_value_and_charges_n_first():
    table = ItemSets(_zipf_items(3000, 80, 3))
    model = WideRelease(epsilon=1.0, seed=0, neighbours="add-remove", head_mode="off")
    plan = model.plan(table)
    assert plan.budget.delta == ADD_REMOVE_DELTA == 1e-9  # not 1/n^2: it would publish n
    rho = budget_rho(plan.budget)
    charges = plan.charges()
    assert charges[0].mechanism == measure.RECORDS and charges[0].cost.rho == RECORDS_SHARE * rho
    assert plan.parameters.rho == pytest.approx((1 - RECORDS_SHARE) * rho)
    assert [c.mechanism for c in charges[1:]] == [measure.BOUND, measure.ITEMS, measure.SIZES,
                                                  measure.PAIRS, measure.LENGTHS]  # fmt: skip
    release = model.fit(table.matrix)
    assert [e.charge for e in release.ledger.entries] == charges
    # the sparse mode's noise is add/remove's: sqrt(s) for the items, 1 for the sizes
    r_items, r_sizes, _ = replace(plan.parameters, s=release.parameters["s"]).rhos()
    s = release.parameters["s"]
    assert release.parameters["sigma_items"] == measure.noise_sigma(r_items, math.sqrt(s))
    assert release.parameters["sigma_sizes"] == measure.noise_sigma(r_sizes, 1.0)


def test_auto_on_free_bits_draws_n_once_and_the_wide_release_reads_it():
    """auto draws the noisy n (NOISY_N_SHARE of rho) before it chooses; the wide release it
    picks reads that n, counts the records no second time, and its parameters share the rest:
    the whole budget spent, no more."""
    from dpquery.data.binary import BinaryData
    from dpquery.queries import Workload

    data = BinaryData.from_dense(_zipf_items(3000, 1200, 5, mean=12.0).toarray())
    workload = Workload.from_lists("conjunction", 1200, [[(0, True)], [(1, True), (2, True)]])
    release = registry.build("auto", {"epsilon": 1.0}, seed=0).fit(data, workload)
    assert release.parameters["auto"]["algorithm"] == "wide"
    mechanisms = [e.charge.mechanism for e in release.ledger.entries]
    assert mechanisms[0] == NOISY_N and measure.RECORDS not in mechanisms
    rho = budget_rho(release.ledger.budget)
    assert release.ledger.entries[0].charge.cost.rho == pytest.approx(NOISY_N_SHARE * rho)
    assert release.ledger.spent == pytest.approx(1.0)  # epsilon: all of it, once
    assert release.parameters["n"] == release.parameters["noisy_n"] != 3000
    assert release.records.matrix.shape[0] == release.parameters["noisy_n"]


def test_the_noisy_n_is_n_plus_discrete_gaussian_noise_of_the_planned_scale():
    """2,000 draws of the noisy count of n = 5,000 at rho = 0.001 (sigma^2 = 500): their mean
    within 4.5 standard errors of n and their variance within 15% of 500 (false-failure rate
    below 1e-5 for each, by the normal tail and the chi-square's)."""
    ledger = Ledger(Budget.zcdp(10.0))  # 2,000 x 0.001 + 5
    rng = np.random.default_rng(7)
    draws = np.array([measure.record_count(5000, 0.001, rng, ledger) for _ in range(2000)])
    assert abs(draws.mean() - 5000) < 4.5 * math.sqrt(500 / 2000)
    assert abs(draws.var() / 500 - 1) < 0.15
    assert measure.record_count(0, 5.0, rng, ledger) == 1  # at least one record


@pytest.mark.parametrize("bad", ["bounded", "add_remove", None, 1])
def test_a_bad_relation_is_refused_by_name_before_any_charge(bad):
    table = _zipf_items(200, 30, 1)
    with pytest.raises(DPQueryError, match=r"neighbours must be 'add-remove' .* or 'replace-one'"):
        WideRelease(epsilon=1.0, neighbours=bad).plan(ItemSets(table))
    if bad is None:  # the registry reads None as not given: the default
        return
    with pytest.raises(DPQueryError, match="neighbours must be"):  # before any estimator
        registry.build("wide", {"epsilon": 1.0, "neighbours": bad}, seed=0)


def test_replace_one_stays_the_default():
    assert WideRelease().neighbours == REPLACE_ONE


# -- add/remove: the bounds' defaults (docs/wide.md, "Beside PipelineDP") -----------------------
class _Shape:
    """A table's public shape: all a plan reads."""

    def __init__(self, n: int, d: int) -> None:
        self.n, self.d = n, d


def test_add_remove_plans_the_longer_bounds_where_the_noise_is_small():
    """npm_words' shape (n = 196,708, d cut to 80 here): under add/remove at epsilon 1 the
    0.99-quantile on the finer grid (cut to d, then d itself, the bound that cuts nothing)
    and s2 = 10; at epsilon 0.1 replace-one's grid (and d), 0.9-quantile and s2 = 8; under
    replace-one its grid cut to d alone. A given bound or s2 is kept."""
    shape, delta = _Shape(196_708, 80), 1 / 196_708**2

    def plan(**options):
        return WideRelease(delta=delta, head_mode="off", **options).plan(shape).parameters

    ar = plan(epsilon=1.0, neighbours="add-remove")
    assert ar.grid == (8, 12, 16, 20, 24, 32, 48, 64, 80)  # d = 80
    assert ar.quantile == ADD_REMOVE_BOUND_QUANTILE == 0.99
    assert ar.s2 == ADD_REMOVE_PAIR_BOUND == 10
    low = plan(epsilon=0.1, neighbours="add-remove")
    assert low.grid == (*BOUND_GRID[:4], 80) == (8, 16, 32, 64, 80)
    assert plan(epsilon=1.0).grid == (8, 16, 32, 64) == BOUND_GRID[:4]
    for p in (low, plan(epsilon=1.0)):
        assert (p.quantile, p.s2) == (BOUND_QUANTILE, 8) == (0.9, 8)
    given = plan(epsilon=1.0, neighbours="add-remove", bound=10, pair_bound=3)
    assert (given.s2, given.grid) == (3, ())


def test_add_remove_grid_ends_at_d_only_below_its_largest_bound():
    """Under add/remove the grid gains d (no cut) where d lies strictly between the largest
    grid point under d and the grid's last (128); at d = 128 or above, or d on the grid,
    or d under the first point, the grid is as before; replace-one's never changes."""
    delta = 1e-9

    def grid(d: int, neighbours: str = "add-remove") -> tuple[int, ...]:
        release = WideRelease(epsilon=1.0, delta=delta, head_mode="off", neighbours=neighbours)
        return release.plan(_Shape(1000, d)).parameters.grid

    assert grid(100) == (8, 16, 32, 64, 100)
    assert grid(127) == (8, 16, 32, 64, 127)
    assert grid(64) == (8, 16, 32, 64)
    assert grid(128) == grid(5000) == BOUND_GRID
    assert grid(5) == (5,)
    assert grid(100, "replace-one") == (8, 16, 32, 64)


@pytest.mark.parametrize("n", [20, 57])
def test_the_bound_d_cuts_nothing_and_moves_the_counts_by_at_most_sqrt_d(n):
    """With s = d every record keeps all its items (identical full records included), so
    the cut counts are the exact counts, and adding or removing one record moves them by
    its indicator vector: L2 at most sqrt(d) = count_sensitivity(d) under add/remove (5 at
    d = 25), on random neighbours of n and n + 1 records (deterministic: no false failure)."""
    rng = np.random.default_rng(n)
    d = 25
    for _ in range(20):
        dense = rng.random((n, d)) < rng.uniform(0.3, 0.9)
        dense[: n // 3] = True  # a third of the records hold every item (Jester's shape)
        key = int(rng.integers(2**63))
        [exact] = ItemCounts(key, d, d).count(ItemSets(sp.csr_array(dense.astype(np.uint8))))
        assert np.array_equal(exact, dense.sum(axis=0))
        a, b = (ItemSets(m) for m in _add_or_remove(sp.csr_array(dense.astype(np.uint8)), rng, d))
        [ca], [cb] = ItemCounts(key, d, d).count(a), ItemCounts(key, d, d).count(b)
        assert abs(a.n - b.n) == 1
        assert np.linalg.norm(ca - cb) <= count_sensitivity(d, ADD_REMOVE) == 5.0


def test_long_bounds_is_the_hand_computed_noise_rule():
    """rho = 0.049 after n's share: the items get 0.5 x 0.98 x 0.049 = 0.02401, so sigma at
    s = 16 is 4 / sqrt(2 x 0.02401) = 18.2536; with d = 5,000 the largest draw is
    (sqrt(2 ln 5000) + 1) sigma = 5.12727 x 18.2536 = 93.59 records, below 0.002 n for n
    above 46,796. Never under replace-one."""
    assert not long_bounds(0.049, 46_300, 5000, ADD_REMOVE)
    assert long_bounds(0.049, 47_300, 5000, ADD_REMOVE)
    assert not long_bounds(0.049, 10**9, 5000, REPLACE_ONE)
    assert LONG_BOUNDS_NOISE == 0.002 and LONG_BOUNDS_AT == 16


def test_add_remove_pair_noise_at_s2_10_is_hand_computed():
    """rho = 0.5 under add/remove: n takes 2% (0.01), the bound 2% of the rest (0.0098), the
    pairs 43% of what is left (0.206486; the record lengths of the top-up 2%, 0.009604); their
    sensitivity sqrt(C(10, 2)) = sqrt(45), reached by one added record of 10 head items, so
    sigma^2 = 45 / (2 x 0.206486) = 108.96..."""
    plan = WideRelease(rho=0.5, neighbours="add-remove", head_mode="off").plan(_Shape(196_708, 80))
    assert plan.parameters.s2 == 10
    _, _, r_pairs = plan.parameters.rhos()
    assert r_pairs == pytest.approx(0.43 * (0.49 - 0.0098))
    assert r_pairs == pytest.approx(0.206486)
    assert plan.parameters.lengths_rho() == pytest.approx(0.009604)
    assert Fraction(pair_sensitivity(10, ADD_REMOVE)) ** 2 >= 45
    assert measure.noise_sigma(r_pairs, pair_sensitivity(10, ADD_REMOVE)) ** 2 == pytest.approx(
        45 / (2 * 0.206486)
    )
    d, head = 20, np.arange(14)
    base = sp.csr_array(np.zeros((2, d), dtype=np.uint8))
    more = sp.csr_array(np.vstack([np.zeros((2, d)), (np.arange(d) < 10)[None]]).astype(np.uint8))
    counts = HeadCounts(5, 16, 10, head)
    (_, pa), (_, pb) = counts.count(ItemSets(base)), counts.count(ItemSets(more))
    assert np.linalg.norm(pa - pb) ** 2 == pytest.approx(45)


@pytest.mark.parametrize("n", [3, 50, 400])
def test_the_bound_utility_at_the_add_remove_quantile_moves_by_at_most_one(n):
    """On random neighbours of n and n + 1 records (lengths 0 to 40, and d), with the noisy
    n read by both (post-processing of the first draw), the distance of every point of the
    add/remove grid from the 0.99-quantile's interval moves by at most 1, and by exactly 1
    for some pair: sensitivity 1, reached. Deterministic bounds: no false failure."""
    rng = np.random.default_rng(100 + n)
    grid = np.asarray(ADD_REMOVE_BOUND_GRID)
    reached = 0.0
    for _ in range(60):
        D, D2 = _add_or_remove(_records_near(rng, n, 130, 20), rng, 20)
        noisy_n = n + int(rng.integers(-3, 4))
        rank = math.ceil(ADD_REMOVE_BOUND_QUANTILE * noisy_n - 1e-9)
        [la], [lb] = LengthCounts(grid).count(ItemSets(D)), LengthCounts(grid).count(ItemSets(D2))
        moved = np.abs(measure.bound_distance(la, rank) - measure.bound_distance(lb, rank)).max()
        assert moved <= 1
        reached = max(reached, moved)
    assert reached == 1


@pytest.mark.filterwarnings("ignore:rho=40")  # a large budget, for a sharp draw
def test_add_remove_draws_the_interval_of_the_records_099_quantile():
    """1,900 records of 10 items and 100 of 19: the 0.99-quantile lies in (16, 20], the
    0.9-quantile in (8, 16]. At rho = 40 the noise is small against n (long_bounds: 3.72 x
    0.645 = 2.4 records, 0.0012 n) and the bound's epsilon is 2.50: a point other than 20 is
    at distance 21 or more from the interval, so it is drawn with probability below
    10 exp(-2.50 x 21 / 2) < 1e-10 (the false-failure rate; the noisy n moves the rank by a
    record or so); replace-one draws 16 with the same budget."""
    rng = np.random.default_rng(3)
    rows = [rng.choice(40, size=10 if i < 1900 else 19, replace=False) for i in range(2000)]
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    table = sp.csr_array((np.ones(int(indptr[-1]), dtype=np.uint8), np.concatenate(rows),
                          indptr), shape=(2000, 40))  # fmt: skip
    options = {"rho": 40.0, "seed": 1, "pool": 2000, "head": 10, "head_mode": "off"}
    ar = WideRelease(neighbours="add-remove", **options).fit(table)
    ro = WideRelease(**options).fit(table)
    assert (ar.parameters["s"], ar.parameters["s2"]) == (20, 10)
    assert (ro.parameters["s"], ro.parameters["s2"]) == (16, 8)


def test_privacy_synth_says_add_removes_bounds_and_cut_sensitivity():
    """The plan printed for npm_words' shape: under add/remove at epsilon 1 the finer grid,
    the 0.99-quantile, s2 = 10 and the cut counts' sensitivity sqrt(s); replace-one's
    sqrt(2s), its grid and s2 = 8."""
    from cli_process import dpquery_cli

    shape = ("privacy", "synth", "--n", "196708", "--items", "5000", "--epsilon", "1")
    ar = dpquery_cli(*shape, "--neighbours", "add-remove")
    assert ar.code == 0, ar.err
    assert ("chosen from [8, 12, 16, 20, 24, 32, 48, 64, 96, 128] as the record lengths' "
            "0.99-quantile") in ar.out  # fmt: skip
    assert "(count sensitivity sqrt(s))" in ar.out and "s2=min(10, s)" in ar.out
    ro = dpquery_cli(*shape)
    assert "chosen from [8, 16, 32, 64, 128] as the record lengths' 0.9-quantile" in ro.out
    assert "(count sensitivity sqrt(2s))" in ro.out and "s2=min(8, s)" in ro.out


def test_the_noisy_n_chooses_the_longer_bounds_again():
    """The plan's choice on the n it is given is a forecast: the run chooses again on the
    noisy n (post-processing), the longer bounds at npm_words' size, not at 5,000 records."""
    model = WideRelease(epsilon=1.0, delta=1e-11, neighbours="add-remove", head_mode="off")
    plan = model.plan(_Shape(196_708, 5000))
    assert plan.parameters.s2 == 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the noise check on a small noisy n
        small = model.on_noisy_n(plan, 5000, 5000).parameters
    again = model.on_noisy_n(plan, 196_650, 5000).parameters
    assert (small.grid, small.quantile, small.s2) == (BOUND_GRID, 0.9, 8)
    assert (again.grid, again.quantile, again.s2) == (ADD_REMOVE_BOUND_GRID, 0.99, 10)


# -- add/remove: a few noisy long heads are drawn at most s2 long ----------------------------
def test_pool_head_sizes_merges_the_sizes_above_s2_when_they_are_too_few_for_the_pairs():
    sizes = np.array([10.0, 20.0, 30.0, 5.0, 4.0, 3.0])
    # 5 + 4 + 3 = 12 records above s2 = 2, below 3 sigma_pairs = 15: merged into size 2
    assert pool_head_sizes(sizes, 2, 5.0).tolist() == [10.0, 20.0, 42.0]
    # 12 records against 3 x 4 = 12: as many as the pairs resolve, kept as they are
    assert pool_head_sizes(sizes, 2, 4.0).tolist() == sizes.tolist()
    # nothing above s2: unchanged
    assert pool_head_sizes(sizes, 5, 100.0).tolist() == sizes.tolist()


def _long_few(seed: int = 0) -> sp.csr_array:
    """600 short Zipf records of ~3 items over 60 items, 20 of them also holding 12 of the
    first 20 items (a few long heads)."""
    m = _zipf_items(600, 60, seed, mean=3.0).toarray()
    m[:20, :12] = 1
    return sp.csr_array(m)


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_the_pool_holds_heads_of_at_most_s2_items_only_under_add_remove(monkeypatch, neighbours):
    drawn: list[np.ndarray] = []
    real_pool = fit.head_pool

    def spy(counts, pairs, sizes, pool, rng, **kw):  # type: ignore[no-untyped-def]
        drawn.append(np.asarray(sizes).copy())
        return real_pool(counts, pairs, sizes, pool, rng, **kw)

    monkeypatch.setattr(fit, "head_pool", spy)
    model = WideRelease(epsilon=1.0, delta=1e-6, seed=3, neighbours=neighbours, bound=16,
                        pair_bound=4, head=20, pool=2000, head_mode="off")  # fmt: skip
    release = model.fit(ItemSets(_long_few()))
    [sizes] = drawn
    s2 = release.parameters["s2"]
    assert s2 == 4
    if neighbours == "add-remove":  # the few long heads merged: no candidate longer than s2
        assert sizes.size == s2 + 1
    else:  # replace-one draws its pool from every size (its bytes are pinned above)
        assert sizes.size == 16 + 1
