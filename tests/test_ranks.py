"""A key-like column's pair with an ordered one, also offered on the ordered one's ranks within
its ordinal bins (adaptive-projection's ``ranks=``): the rank map by hand (with the ordinal
bin it names the value), which pairs are offered, the counts' sensitivity on neighbouring
tables (n and n + 1 records, one replaced), the ledger with the option on (the same entries
and costs, nothing new charged, every charge before its draw) and the defaults (on under
add/remove, off under replace-one, whose pinned releases stay as they were).

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_marginals import RecordingLedger, small_data, workload_2way

from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    adaptive_marginals,
    plan_adaptive,
)
from dpquery.algorithms.marginal.compress import (
    Compression,
    ordinal_map,
    rank_candidates,
    rank_compression,
    rank_map,
)
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, PureDP
from dpquery.queries.marginals import marginal_counts


def test_rank_map_by_hand() -> None:
    # Nine ordered values in bins of 3, 2 and 4, then a missing value after them.
    bins = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3])
    assert rank_map(bins, 9).tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3, 4]
    # The ordinal bin and the rank name the value: first(psi(v)) + rho(v) = v.
    first = {int(b): int(np.flatnonzero(bins == b)[0]) for b in np.unique(bins[:9])}
    assert [first[int(b)] + int(r) for b, r in zip(bins[:9], rank_map(bins, 9), strict=False)] \
        == list(range(9))  # fmt: skip
    # One bin a value: every rank 0; nothing ordered: each value a code of its own.
    assert rank_map(np.arange(4), 4).tolist() == [0, 0, 0, 0]
    assert rank_map(np.array([0, 1, 2]), 0).tolist() == [0, 1, 2]


def test_rank_map_refuses_a_bad_ordered_count_by_name() -> None:
    with pytest.raises(DPQueryError, match="ordered must be in"):
        rank_map(np.array([0, 0, 1]), 4)


def test_rank_compression_keeps_the_base_maps_elsewhere() -> None:
    sizes = np.array([5, 6, 3])
    bins = Compression((np.array([0, 0, 0, 1, 1]), np.array([0, 0, 1, 1, 2, 3]),
                        np.arange(3)), np.array([2, 4, 3]))  # fmt: skip
    base = Compression((np.array([0, 1, 1, 2, 2]), np.array([0, 1, 2, 3, 4, 4]),
                        np.array([0, 1, 1])), np.array([3, 5, 2]))  # fmt: skip
    # Attribute 0 is cut (2 bins < 5 values): its ranks; 1 too (5 ordered values in 3 bins,
    # 4 codes for its 6 values), its sixth value (missing) a code after its ranks 0 and 1;
    # 2 is not ordered: the base map.
    c = rank_compression(bins, {0: 5, 1: 5}, sizes, base)
    assert c.maps[0].tolist() == [0, 1, 2, 0, 1]
    assert c.maps[1].tolist() == [0, 1, 0, 1, 0, 2]
    assert c.maps[2].tolist() == [0, 1, 1]
    assert c.sizes.tolist() == [3, 3, 2]
    # An ordered attribute the bins do not cut (as many codes as values) keeps its base map.
    same = Compression((*bins.maps[:2], np.arange(3)), np.array([2, 4, 3]))
    assert rank_compression(same, {2: 3}, sizes, base).maps[2].tolist() == [0, 1, 1]
    # Without a base map the others keep their values.
    assert rank_compression(bins, {0: 5}, sizes, None).maps[2].tolist() == [0, 1, 2]


def test_rank_candidates_are_the_key_like_pairs_with_an_ordered_column() -> None:
    # 0: 20 values, unordered (key-like); 1: 6 ordered values cut into 2 bins; 2: 3 values,
    # unordered; 3: 8 ordered values cut into 2 bins.
    sizes = np.array([20, 6, 3, 8])
    rng = np.random.default_rng(3)
    D = np.column_stack([rng.integers(0, s, 500) for s in sizes])
    table = {(0, 1): 2.0, (1, 2): 2.0, (1, 3): 2.0, (0, 3): 3.0, (0, 1, 2): 3.0, (1,): 1.0}
    fine = {r: marginal_counts(D, sizes, r).astype(np.float64) for r in table}
    bins = Compression((np.arange(20), np.array([0, 0, 0, 1, 1, 1]), np.arange(3),
                        np.array([0, 0, 0, 0, 1, 1, 1, 1])), np.array([20, 2, 3, 2]))  # fmt: skip
    ranks = rank_compression(bins, {1: 6, 3: 8}, sizes, None)
    picked, weights, counts, maps = rank_candidates(table, fine, sizes, ranks, {1: 6, 3: 8})
    # (1, 2): 3 values are not more than 6; (1, 3): both ordered; 3-way and 1-way: not pairs.
    assert picked == [(0, 1), (0, 3)]
    assert weights.tolist() == [2.0, 3.0]
    assert [c.size for c in counts] == [20 * 3, 20 * 4]
    for r, c, f in zip(picked, counts, maps, strict=True):
        assert np.array_equal(c, ranks.counts(D, r))  # the fine counts summed through the map
        assert np.array_equal(c, np.bincount(f, weights=fine[r], minlength=c.size))
    # A key-like column compressed to fewer values than the ordered one has: no candidate.
    few = Compression((np.arange(20) % 4, *ranks.maps[1:]), np.array([4, 3, 3, 4]))
    assert rank_candidates(table, fine, sizes, few, {1: 6, 3: 8})[0] == []


def test_rank_counts_move_by_the_relations_sensitivity_on_random_neighbours() -> None:
    """A rank-mapped marginal's counts, on n and n + 1 (or n - 1) records, differ in one cell
    by 1 (L2 1, add/remove); one record replaced moves L2 at most sqrt(2): the fine
    marginal's sensitivities, which the measurements are charged at."""
    rng = np.random.default_rng(12)
    sizes = np.array([40, 13])
    y = rng.normal(100, 40, 13)
    bins = Compression((np.arange(40), ordinal_map(y, 1300, 3, 12)), np.array([40, 4]))
    ranks = rank_compression(bins, {1: 12}, sizes, None)
    for n in (1, 9, 300):
        D = np.column_stack([rng.integers(0, s, n) for s in sizes])
        row = np.array([[rng.integers(0, s) for s in sizes]])
        c = ranks.counts(D, (0, 1))
        assert np.linalg.norm(ranks.counts(np.vstack([D, row]), (0, 1)) - c) == pytest.approx(1)
        assert np.linalg.norm(ranks.counts(D[1:], (0, 1)) - c) == pytest.approx(1.0)
        replaced = np.vstack([row, D[1:]])
        assert np.linalg.norm(ranks.counts(replaced, (0, 1)) - c) <= np.sqrt(2) + 1e-12


def _key_table(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A key of 40 values, each with one of 12 ordered values (a one-to-one pair), and a
    third column of 3 values."""
    rng = np.random.default_rng(seed)
    key = rng.integers(0, 40, n)
    value = (key * 7) % 12
    return np.column_stack([key, value, rng.integers(0, 3, n)]), np.array([40, 12, 3])


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_rank_rounds_charge_the_same_entries_before_their_draws(neighbours) -> None:
    """With rank candidates the ledger is as without them: ``g`` 1-way measurements, then
    (selection, measurement) pairs at each round's scales (a rank-mapped marginal's Gaussian
    costs ``Delta^2 / (2 sigma^2)``, as a fine one's), the budget spent and not exceeded; a
    rank-mapped pair (40 x 4 cells: 12 values in 3 bins) is measured."""
    codes, sizes = _key_table()
    plan = plan_adaptive(n=codes.shape[0], sizes=sizes.tolist(), epsilon=1.0, T=12,
                         neighbours=neighbours)  # fmt: skip
    rng = np.random.default_rng(1)
    ledger = RecordingLedger(plan.budget, rng)
    _X, rounds = adaptive_marginals(
        codes, sizes, [(0, 1), (1, 2)], plan=plan, rng=rng, ledger=ledger, final_sweeps=2,
        compress=None, ordinal={1: 12}, ordinal_bins=3, ranks=True,
    )  # fmt: skip
    selections = [r for r in rounds if isinstance(r["round"], int)]
    kinds = [e.charge.mechanism for e in ledger.entries]
    assert kinds == [am.MEASURE] * len(sizes) + [am.SELECT, am.MEASURE] * len(selections)
    unit = 1.0 if neighbours == "replace-one" else 0.5
    for e, r in zip(ledger.entries[len(sizes) :: 2], selections, strict=True):
        assert e.charge.cost == PureDP(r["epsilon"], bounded_range=True)
    for e, r in zip(ledger.entries[len(sizes) + 1 :: 2], selections, strict=True):
        assert isinstance(e.charge.cost, ZCDP)
        assert e.charge.cost.rho == pytest.approx(unit / r["sigma"] ** 2)
    assert 0.999 < ledger.spent <= 1.0
    assert any(r["marginal"] == [0, 1] and r["compressed"] and r["cells"] == 40 * 4
               for r in selections)  # fmt: skip


@pytest.mark.parametrize("fail_at", [4, 5, 6])
def test_a_refused_charge_draws_nothing_with_rank_candidates(fail_at) -> None:
    codes, sizes = _key_table()
    plan = plan_adaptive(n=codes.shape[0], sizes=sizes.tolist(), epsilon=1.0, T=12)
    rng = np.random.default_rng(0)
    ledger = RecordingLedger(plan.budget, rng, fail_at)
    with pytest.raises(RuntimeError, match="injected"):
        adaptive_marginals(codes, sizes, [(0, 1)], plan=plan, rng=rng, ledger=ledger,
                           ordinal={1: 12}, ordinal_bins=3, ranks=True)  # fmt: skip
    assert rng.bit_generator.state == ledger.states[-1]
    assert len(ledger.entries) == fail_at - 1


def test_without_a_key_like_pair_the_release_is_the_one_without_ranks() -> None:
    """small_data has no column of more values than an ordered one's (city, 6 values, the
    largest): no rank candidate, the same records with the option on or off."""
    data, w = small_data(), workload_2way()
    on = AdaptiveProjection(epsilon=1.0, seed=2, ordinal=["city"], ordinal_bins=3, ranks=True)
    off = AdaptiveProjection(epsilon=1.0, seed=2, ordinal=["city"], ordinal_bins=3, ranks=False)
    assert np.array_equal(on.fit(data, w).records.rows, off.fit(data, w).records.rows)


def test_ranks_default_on_under_add_remove_and_off_under_replace_one() -> None:
    assert AdaptiveProjection(epsilon=1.0).ranks_on() is am.ADD_REMOVE_RANKS is True
    assert AdaptiveProjection(epsilon=1.0, neighbours="replace-one").ranks_on() is False
    assert AdaptiveProjection(epsilon=1.0, ranks=False).ranks_on() is False
    data, w = small_data(), workload_2way()
    pinned = AdaptiveProjection(epsilon=1.0, seed=4, neighbours="replace-one")
    off = AdaptiveProjection(epsilon=1.0, seed=4, neighbours="replace-one", ranks=False)
    assert np.array_equal(pinned.fit(data, w).records.rows, off.fit(data, w).records.rows)
