"""The top-up of the records the cut shortened (``wide/topup.py``, docs/wide.md "Correcting the
cut's bias"): the record-length histogram's accounting and sensitivity, the uncut counts'
model by hand, and no rare item inflated into most records."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpquery.algorithms.wide import measure, topup
from dpquery.algorithms.wide.bound import count_sensitivity, histogram_sensitivity
from dpquery.algorithms.wide.core import TOPUP_SHARES, Shares, top_up_pays
from dpquery.algorithms.wide.counts import LengthCounts
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data import ItemSets
from dpquery.privacy.budget import budget_rho
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE


def _length_cells(matrix: sp.csr_array, edges: np.ndarray) -> np.ndarray:
    """The exact length histogram the release measures: records per bin of ``edges``."""
    [below] = LengthCounts(edges).count(ItemSets(matrix))
    return np.diff(np.concatenate([[0], below]))


def _long_records(n: int, d: int, seed: int, rare: int | None = None) -> sp.csr_array:
    """``n`` records of log-normal lengths (median about 60, some in the hundreds) over ``d``
    items of power-law popularity; ``rare``: that item in 1% of the records only."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** 0.9
    if rare is not None:
        p[rare] = 0.0
    p /= p.sum()
    lengths = np.minimum(rng.lognormal(4.1, 0.9, n).astype(np.int64) + 1, d // 2)
    rows = [np.unique(rng.choice(d, size=k, p=p)) for k in lengths]
    if rare is not None:
        for i in rng.choice(n, size=n // 100, replace=False):
            rows[i] = np.union1d(rows[i], [rare])
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    indices = np.concatenate(rows)
    return sp.csr_array((np.ones(indices.size, dtype=np.uint8), indices, indptr), shape=(n, d))


def test_the_length_edges_hold_s_and_d_and_grow_geometrically():
    edges = topup.length_edges(300, 20)
    assert edges.tolist() == [0, 1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192,
                              256, 300]  # fmt: skip
    assert topup.length_edges(5, 3).tolist() == [0, 1, 2, 3, 4, 5]
    assert topup.bin_lengths(np.array([0, 1, 4])).tolist() == [0.0, 1.0, 3.0]


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
@pytest.mark.parametrize("n", [1, 7, 60])
def test_the_length_histogram_moves_within_its_sensitivity_on_random_neighbours(relation, n):
    """Random tables and a neighbour (add/remove: one record more, at a random row;
    replace-one: one record replaced): the exact length cells move by at most 1 (add/remove)
    and sqrt 2 (replace-one) in L2, the sensitivity the charge is for. Deterministic bound:
    no false failure."""
    rng = np.random.default_rng(n)
    d = 50
    edges = topup.length_edges(d, 8)
    for _ in range(50):
        table = _long_records(n, d, int(rng.integers(1 << 30))).toarray()
        new = (rng.random(d) < rng.random()).astype(np.uint8)[None]
        if relation == ADD_REMOVE:
            other = np.insert(table, int(rng.integers(n + 1)), new, axis=0)
        else:
            other = table.copy()
            other[int(rng.integers(n))] = new
        a = _length_cells(sp.csr_array(table), edges)
        b = _length_cells(sp.csr_array(other), edges)
        assert np.linalg.norm(a - b) <= histogram_sensitivity(relation) + 1e-12
    assert histogram_sensitivity(ADD_REMOVE) == 1.0
    assert histogram_sensitivity(REPLACE_ONE) == pytest.approx(math.sqrt(2))


def test_add_remove_plans_and_charges_the_lengths_by_hand():
    """Under add/remove the sparse mode's fourth charge is the lengths', 2% of what the bound
    leaves, taken from the pairs' 45% (43% left); its noise is sigma^2 = 1 / (2 rho)
    (Canonne, Kamath and Steinke 2020, Theorem 4, sensitivity 1). Replace-one plans none."""
    table = ItemSets(_long_records(2000, 300, 1))
    model = WideRelease(epsilon=4.0, seed=3, neighbours="add-remove", head_mode="off")
    plan = model.plan(table)
    p = plan.parameters
    assert p.shares == TOPUP_SHARES == Shares(0.5, 0.05, 0.43, 0.02)
    rho = budget_rho(plan.budget)
    rest = (1 - 0.02) * rho * (1 - 0.02)  # n's 2%, then the bound's 2%
    assert p.lengths_rho() == pytest.approx(0.02 * rest)
    assert p.rhos()[2] == pytest.approx(0.43 * rest)
    charges = plan.charges()
    assert [c.mechanism for c in charges][-4:] == [measure.ITEMS, measure.SIZES, measure.PAIRS,
                                                   measure.LENGTHS]  # fmt: skip
    assert charges[-1].cost.rho == pytest.approx(0.02 * rest)
    assert sum(c.cost.rho for c in charges[:1] + charges[2:]) + p.bound_rho() == pytest.approx(rho)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = model.fit(table.matrix)
    assert [e.charge for e in release.ledger.entries] == charges
    sigma = release.parameters["sigma_lengths"]
    assert sigma**2 >= 1 / (2 * 0.02 * rest)  # rounded up, never down
    assert sigma**2 == pytest.approx(1 / (2 * 0.02 * rest), rel=1e-6)
    ro = WideRelease(epsilon=4.0, seed=3, head_mode="off").plan(table)
    assert ro.parameters.lengths_rho() == 0.0
    assert measure.LENGTHS not in [c.mechanism for c in ro.charges()]


def test_uncut_counts_by_hand():
    """One bin of records longer than s: every item's uncut count is its cut count times
    L / s (exact whatever lambda); records no longer than s are not cut: unchanged. A cut
    count above the model's largest is an item of every record."""
    s = 10
    long = topup.uncut_counts(np.array([0.0, 5.0, 100.0, 399.0]), np.array([1000.0]),
                              np.array([40.0]), s)  # fmt: skip
    assert long[:3] == pytest.approx([0.0, 20.0, 400.0], rel=1e-6)
    assert long[3] == 1000.0  # above the model's largest cut count, 1000 x 10 / 40
    short = topup.uncut_counts(np.array([3.0, 50.0]), np.array([100.0]), np.array([8.0]), s)
    assert short == pytest.approx([3.0, 50.0], rel=1e-6)
    # a common item, held by every long record, scales by less than a rare one
    mixed = topup.uncut_counts(np.array([1.0, 290.0]), np.array([500.0, 500.0]),
                               np.array([5.0, 60.0]), s)  # fmt: skip
    assert mixed[0] / 1.0 > mixed[1] / 290.0 > 1.0


def test_the_top_up_never_adds_an_item_a_record_holds_and_keeps_to_the_deficits():
    rng = np.random.default_rng(0)
    n, d, s = 400, 60, 10
    records = _long_records(n, d, 2)
    cut = sp.csr_array(records[:, :d])  # stand-in fitted records: each cut to its first s
    rows = [np.sort(cut.indices[cut.indptr[i] : cut.indptr[i + 1]])[:s] for i in range(n)]
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    fitted = sp.csr_array((np.ones(indptr[-1], dtype=np.uint8), np.concatenate(rows), indptr),
                          shape=(n, d))  # fmt: skip
    counts = np.bincount(fitted.indices, minlength=d).astype(np.float64)
    edges = topup.length_edges(d, s)
    lengths = _length_cells(records, edges).astype(np.float64)
    out, info = topup.top_up(fitted, counts, lengths, edges, s, np.ones(d, bool), rng)
    out.sort_indices()
    for i in range(n):  # no repeats, every fitted item kept
        row = out.indices[out.indptr[i] : out.indptr[i + 1]]
        assert np.unique(row).size == row.size
        assert set(fitted.indices[fitted.indptr[i] : fitted.indptr[i + 1]]) <= set(row)
    added = np.bincount(out.indices, minlength=d) - counts
    whole = topup.uncut_counts(counts, lengths, topup.bin_lengths(edges), s)
    assert (added <= np.maximum(whole - counts, 0) + 1).all()  # a deficit, rounded up at most
    assert info["ones_added"] == out.nnz - fitted.nnz > 0
    assert (np.diff(out.indptr) <= d // 2 + 1).all()
    longer = np.flatnonzero(np.diff(out.indptr) > np.diff(fitted.indptr))
    assert longer.size <= round(lengths[np.concatenate([[False], edges[:-1] >= s])].sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_top_up_never_inflates_a_rare_item_into_most_records(seed):
    """A long-record table where item 5 is in 1% of the records: under add/remove (the
    top-up on) the release holds it in at most 5% of its records, and no item of true share
    below 5% in more than 20%. Seeded: no false failure."""
    table = _long_records(3000, 400, 7, rare=5)
    truth = np.bincount(table.indices, minlength=400) / 3000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = WideRelease(epsilon=1.0, seed=seed, neighbours="add-remove",
                              head_mode="off", bound=16, pool=5000).fit(table)  # fmt: skip
    out = release.records.matrix
    share = np.bincount(out.indices, minlength=400) / out.shape[0]
    assert release.parameters["ones_added"] > 0  # the top-up ran
    assert share[5] <= 0.05, share[5]
    assert share[truth < 0.05].max() <= 0.2
    # and it moved the cut's bias the right way: the commonest items nearer their counts
    top = np.argsort(-truth)[:5]
    assert np.abs(share[top] - truth[top]).max() < 0.2


def test_privacy_synth_plans_the_lengths_under_add_remove_only():
    """``dpquery privacy synth`` lists the record lengths' charge and the top-up under
    add/remove (the default relation of the command), not under replace-one."""
    from cli_process import dpquery_cli

    shape = ("privacy", "synth", "--n", "480189", "--items", "17770", "--epsilon", "1")
    ar = dpquery_cli(*shape, "--neighbours", "add-remove")
    assert ar.code == 0, ar.err
    assert f"{measure.LENGTHS}: 1 x" in ar.out and "topped up" in ar.out
    ro = dpquery_cli(*shape, "--neighbours", "replace-one")
    assert ro.code == 0, ro.err
    assert measure.LENGTHS not in ro.out and "topped up" not in ro.out


def test_the_lengths_are_measured_only_where_the_top_up_can_act_by_hand():
    """rho = 0.02 after n: the items get 0.5 x 0.98 x 0.02 = 0.0098 at the grid's largest
    bound 128 (sensitivity sqrt(128)), sigma = sqrt(128 / 0.0196) = 80.81; 2 sigma = 161.6 is
    5.4% of 3,000 records (not measured: no item's deficit that small can be topped up) and
    3.2% of 5,000 (measured). Replace-one never measures them."""
    sigma = measure.noise_sigma(0.5 * 0.98 * 0.02, count_sensitivity(128, ADD_REMOVE))
    assert sigma == pytest.approx(math.sqrt(128 / 0.0196), rel=1e-6)
    assert not top_up_pays(0.02, 3000, 128, ADD_REMOVE)
    assert top_up_pays(0.02, 5000, 128, ADD_REMOVE)
    assert top_up_pays(0.02, 3000, 16, ADD_REMOVE, drawn=False)  # a given bound of 16: 1.9%
    assert not top_up_pays(0.02, 10**9, 128, REPLACE_ONE)
