"""Compressed candidate marginals (MST's domain compression in adaptive-projection): the value
maps by hand, compressed counts against the fine ones summed through the maps, the projection
kernel fitting compressed measurements, the privacy accounting with compression on (the same
ledger entries, every charge before its draw) and reproducibility.

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_marginals import RecordingLedger, small_data, workload_2way

from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal import projection as pj
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    adaptive_marginals,
    plan_adaptive,
)
from dpquery.algorithms.marginal.compress import Compression, extra_candidates, value_map
from dpquery.algorithms.marginal.one_way import one_way_estimates
from dpquery.algorithms.marginal.projection import Measurement, fit_records, initial_records, loss
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, PureDP
from dpquery.queries.marginals import (
    AttributeLayout,
    attribute_codes,
    marginal_counts,
    workload_marginals,
)

# == the value maps ==============================================================================


def test_value_map_by_hand() -> None:
    # The counts sum to n = 153, so the simplex projection leaves them as they are; with
    # sigma = 1 and c = 3 the values 1, 3 and 4 (counts 2, 1, 0 < 3) share the code 2.
    y = np.array([100.0, 2.0, 50.0, 1.0, 0.0])
    assert value_map(y, 1.0, 153, 3.0).tolist() == [0, 2, 1, 2, 2]
    # c = 0.5: only 0 is below, one value merges nothing: the identity.
    assert value_map(y, 1.0, 153, 0.5).tolist() == [0, 1, 2, 3, 4]
    # The threshold is on the projected counts: y sums to 160, tau = 7 / 3 (three values
    # stay positive: 97.67, 47.67, 7.67), so with c = 8 only value 0 and 2 stay.
    y = np.array([100.0, 10.0, 50.0, 0.0])
    assert value_map(y, 1.0, 153, 8.0).tolist() == [0, 2, 1, 2]
    assert value_map(y, 1.0, 153, 7.0).tolist() == [0, 1, 2, 3]
    # Everything below: one value.
    assert value_map(y, 100.0, 153, 3.0).tolist() == [0, 0, 0, 0]


def test_one_way_estimates_combine_by_inverse_variance() -> None:
    ms = [Measurement((0,), np.array([10.0, 20.0]), 1.0),
          Measurement((1,), np.array([5.0, 5.0, 20.0]), 2.0),
          Measurement((0,), np.array([16.0, 14.0]), 2.0),  # a second measurement of 0
          Measurement((0, 1), np.zeros(6), 1.0)]  # fmt: skip
    (y0, s0), (y1, s1) = one_way_estimates(ms, 2)
    # weights 1 and 1/4: (10 + 16/4) / 1.25 = 11.2, (20 + 14/4) / 1.25 = 18.8
    assert y0.tolist() == pytest.approx([11.2, 18.8])
    assert s0 == pytest.approx(1.25**-0.5)
    assert y1.tolist() == [5.0, 5.0, 20.0] and s1 == 2.0
    with pytest.raises(DPQueryError, match="attribute 2 has no 1-way measurement"):
        one_way_estimates(ms, 3)


def test_compressed_counts_are_the_fine_counts_summed_through_the_maps() -> None:
    data = small_data()
    layout = AttributeLayout.of_data(data)
    codes = attribute_codes(data, layout)
    ones = [Measurement((a,), marginal_counts(codes, layout.sizes, (a,)).astype(float), 60.0)
            for a in range(layout.g)]  # fmt: skip
    comp = Compression.of(ones, layout.g, data.n, 3.0)
    # Exact counts: city's last two values (about 150 records each, below 3 sigma = 180)
    # merge; blue (about 300) and the rest stay.
    assert comp.sizes.tolist() == [3, 2, 4, 2, 5]
    assert comp.maps[4].tolist() == [0, 1, 2, 3, 4, 4]
    for r in [(4,), (0, 4), (2, 4), (0, 2, 4)]:
        fine = marginal_counts(codes, layout.sizes, r).reshape([int(layout.sizes[a]) for a in r])
        want = np.zeros([int(comp.sizes[a]) for a in r])
        np.add.at(want, np.ix_(*[comp.maps[a] for a in r]), fine)
        got = comp.counts(codes, r)
        assert np.array_equal(got, want.ravel())
        coarse = np.bincount(comp.cell_map(r), weights=fine.ravel(), minlength=comp.cells(r))
        assert np.array_equal(coarse, got)
        assert np.array_equal(comp.measurement(r, got, 1.0).counts(codes, layout.sizes), got)
    assert comp.shrunk([(0,), (4,), (0, 4), (0, 1)], layout.sizes) == [(4,), (0, 4)]


# == the kernel with value maps ==================================================================


def test_kernel_counts_through_the_maps_equal_a_direct_computation() -> None:
    data = small_data()
    layout = AttributeLayout.of_data(data)
    codes = attribute_codes(data, layout)
    maps = (np.array([0, 1, 1]), np.array([0, 0, 1, 2, 2, 2]))
    x = Measurement((0, 4), np.zeros(6), 1.0, maps)
    fine = Measurement((2, 3), np.zeros(8), 1.0)
    packed = pj._pack([fine, x], layout.sizes, data.n, data.n)
    current = pj._counts_kernel(codes.astype(np.int64), packed.attrs, packed.strides, packed.k,
                                packed.offsets, packed.vmap, packed.moffs)  # fmt: skip
    direct = np.zeros((2, 3))
    np.add.at(direct, (maps[0][codes[:, 0]], maps[1][codes[:, 4]]), 1)
    assert np.array_equal(current[8:], direct.ravel())
    assert np.array_equal(current[:8], marginal_counts(codes, layout.sizes, (2, 3)))
    with pytest.raises(DPQueryError, match="has 5 counts"):
        pj._pack([Measurement((0, 4), np.zeros(5), 1.0, maps)], layout.sizes, data.n, data.n)


def test_fit_records_fits_an_exact_compressed_marginal() -> None:
    """Exact fine 1-ways plus exact compressed (color, city), (size, e, city) and (smoker,
    city) under another map of city: the fit reaches them (counts equal to the direct
    computation) and the loss decreases."""
    data = small_data()
    layout = AttributeLayout.of_data(data)
    codes = attribute_codes(data, layout)
    ones = [Measurement((a,), marginal_counts(codes, layout.sizes, (a,)).astype(float), 1.0)
            for a in range(layout.g)]  # fmt: skip
    comp = Compression(
        (np.array([0, 1, 1]), np.array([0, 1]), np.array([0, 0, 1, 2]), np.array([0, 1]),
         np.array([0, 1, 1, 1, 2, 2])),
        np.array([2, 2, 3, 2, 3]),
    )  # fmt: skip
    exact = ones + [comp.measurement(r, comp.counts(codes, r), 1.0) for r in [(0, 4), (2, 3, 4)]]
    # A second map on city (another grouping of its values): the kernel sums per map.
    other = np.array([0, 0, 0, 1, 1, 1])
    exact.append(Measurement((1, 4), marginal_counts(
        np.stack([codes[:, 1], other[codes[:, 4]]], 1), np.array([2, 2]), (0, 1)
    ).astype(float), 1.0, (np.arange(2), other)))  # fmt: skip
    rng = np.random.default_rng(3)
    X = initial_records([x.y for x in ones], data.n, rng, n=data.n)
    before = loss(X, exact, layout.sizes, data.n)
    X, _ = fit_records(X, exact, layout.sizes, n=data.n, sweeps=30, rng=rng)
    after = loss(X, exact, layout.sizes, data.n)
    assert before > 0 and after < 0.01 * before
    for x in exact[layout.g :]:
        err = np.abs(x.counts(X, layout.sizes) - x.y).max() / data.n
        assert err < 0.01
    # The records keep full-domain codes: every fine 1-way still matches.
    for a in range(layout.g):
        assert np.abs(marginal_counts(X, layout.sizes, (a,)) - ones[a].y).max() <= 0.01 * data.n


def test_a_move_within_a_merged_group_changes_no_compressed_count() -> None:
    """Only the compressed measurement: moving between two merged values gains nothing, so a
    fit from records that already match it makes no move."""
    sizes = np.array([4, 2])
    X = np.array([[0, 0], [1, 0], [2, 1], [3, 1]], dtype=np.int32)
    x = Measurement((0, 1), np.array([2.0, 0.0, 0.0, 2.0]), 1.0,
                    (np.array([0, 0, 1, 1]), np.array([0, 1])))  # fmt: skip
    X2, sweeps = fit_records(X.copy(), [x], sizes, n=4, sweeps=5, rng=np.random.default_rng(0))
    assert np.array_equal(X2, X) and sweeps == 1


# == privacy and the estimator ===================================================================


def test_compressed_rounds_charge_the_same_entries_before_their_draws() -> None:
    """With compression the ledger holds ``g`` measurements, then (selection, measurement)
    pairs costing what each round's ``sigma`` / ``epsilon`` say (the compressed marginal's
    Gaussian costs ``1 / sigma^2``, as a fine one), and the budget is spent, not exceeded;
    at least one compressed marginal is measured here."""
    data = small_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=1.0, T=20)
    rng = np.random.default_rng(1)
    ledger = RecordingLedger(plan.budget, rng)
    _X, rounds = adaptive_marginals(
        attribute_codes(data, layout), layout.sizes, workload_marginals(workload_2way(), layout),
        plan=plan, rng=rng, ledger=ledger, final_sweeps=2, compress=10.0,
    )  # fmt: skip
    selections = [r for r in rounds if isinstance(r["round"], int)]
    assert any(r["compressed"] for r in selections)
    kinds = [e.charge.mechanism for e in ledger.entries]
    assert kinds == [am.MEASURE] * layout.g + [am.SELECT, am.MEASURE] * len(selections)
    for e, r in zip(ledger.entries[layout.g :: 2], selections, strict=True):
        assert e.charge.cost == PureDP(r["epsilon"], bounded_range=True)
    for e, r in zip(ledger.entries[layout.g + 1 :: 2], selections, strict=True):
        assert isinstance(e.charge.cost, ZCDP)
        assert e.charge.cost.rho == pytest.approx(1 / r["sigma"] ** 2)
    assert 0.999 < ledger.spent <= 1.0


@pytest.mark.parametrize("fail_at", [6, 7, 8])
def test_a_refused_charge_draws_nothing_with_compression(fail_at) -> None:
    data = small_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=1.0)
    rng = np.random.default_rng(0)
    ledger = RecordingLedger(plan.budget, rng, fail_at)
    with pytest.raises(RuntimeError, match="injected"):
        adaptive_marginals(attribute_codes(data, layout), layout.sizes,
                           workload_marginals(workload_2way(), layout), plan=plan, rng=rng,
                           ledger=ledger, compress=3.0)  # fmt: skip
    assert rng.bit_generator.state == ledger.states[-1]
    assert len(ledger.entries) == fail_at - 1


def test_the_maps_read_only_the_measurements(monkeypatch) -> None:
    """The compression a run uses is :meth:`Compression.of` of its 1-way measurements (the
    noisy vectors and their scales), nothing else."""
    seen = []
    real = Compression.of

    def spy(measurements, g, n, c):
        seen.append([(x.marginal, x.y.copy(), x.sigma) for x in measurements])
        return real(measurements, g, n, c)

    monkeypatch.setattr(Compression, "of", staticmethod(spy))
    AdaptiveProjection(epsilon=1.0, seed=0, compress=3.0, final_sweeps=2).fit(
        small_data(), workload_2way()
    )
    assert len(seen) == 1 and [m for m, _, _ in seen[0]] == [(a,) for a in range(5)]


def test_compress_same_seed_same_release_and_recorded() -> None:
    data, w = small_data(), workload_2way()
    a = AdaptiveProjection(epsilon=1.0, seed=7, compress=3.0).fit(data, w)
    b = AdaptiveProjection(epsilon=1.0, seed=7, compress=3.0).fit(data, w)
    assert np.array_equal(a.records.rows, b.records.rows)
    assert a.parameters["compress"] == 3.0
    assert all("compressed" in r for r in a.rounds if isinstance(r.get("round"), int))


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "3"])
def test_bad_compress_is_refused_by_name(bad) -> None:  # 0 is off, not bad
    model = AdaptiveProjection(epsilon=1.0, compress=bad)
    with pytest.raises(DPQueryError, match="compress"):
        model.fit(small_data(), workload_2way())
    assert model.ledger_ is None


# == coarse candidates ===========================================================================


def test_extra_candidates_by_hand() -> None:
    """A candidate joins when the coarse maps leave it fewer cells than the compression
    does: (0,) does not (both maps give 2 values), (1,) and (0, 1) do; the coarse counts are
    the fine ones summed through the coarse maps, and each keeps its weight."""
    comp = Compression((np.array([0, 1, 1, 1]), np.array([0, 1, 2])), np.array([2, 3]))
    wide = Compression((np.array([0, 1, 1, 1]), np.array([0, 0, 1])), np.array([2, 2]))
    table = {(0,): 2.0, (1,): 3.0, (0, 1): 5.0}
    fine = {(0,): np.array([1.0, 2, 3, 4]), (1,): np.array([5.0, 7, 9]),
            (0, 1): np.arange(12.0)}  # fmt: skip
    picked, weights, counts, maps = extra_candidates(table, fine, np.array([4, 3]), comp, wide)
    assert picked == [(1,), (0, 1)]
    assert weights.tolist() == [3.0, 5.0]
    assert counts[0].tolist() == [12.0, 9.0]
    # (0, 1) as a 4 x 3 table 0..11: row 0 gives cells 0 (0 + 1) and 1 (2); rows 1-3 share
    # the coarse value 1: cell 2 gets 3 + 4 + 6 + 7 + 9 + 10 = 39, cell 3 gets 5 + 8 + 11 = 24.
    assert counts[1].tolist() == [1.0, 2.0, 39.0, 24.0]
    assert maps[0].tolist() == [0, 0, 1]


@pytest.mark.parametrize("coarse_final", [False, True])
def test_coarse_rounds_charge_the_same_entries_before_their_draws(coarse_final) -> None:
    """With coarse candidates the ledger is as without them: ``g`` measurements, then
    (selection, measurement) pairs at each round's scales, the budget spent, not exceeded.
    With ``coarse_final`` only the last round measures a coarse marginal, and it does."""
    data = small_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=1.0, T=20)
    rng = np.random.default_rng(1)
    ledger = RecordingLedger(plan.budget, rng)
    coarse_maps = Compression.of
    seen: list[Compression] = []

    def spy(measurements, g, n, c):
        out = coarse_maps(measurements, g, n, c)
        seen.append(out)
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(Compression, "of", staticmethod(spy))
    try:
        _X, rounds = adaptive_marginals(
            attribute_codes(data, layout), layout.sizes,
            workload_marginals(workload_2way(), layout), plan=plan, rng=rng, ledger=ledger,
            final_sweeps=2, compress=1.0, coarse=40.0, coarse_final=coarse_final,
        )  # fmt: skip
    finally:
        mp.undo()
    selections = [r for r in rounds if isinstance(r["round"], int)]
    kinds = [e.charge.mechanism for e in ledger.entries]
    assert kinds == [am.MEASURE] * layout.g + [am.SELECT, am.MEASURE] * len(selections)
    for e, r in zip(ledger.entries[layout.g + 1 :: 2], selections, strict=True):
        assert e.charge.cost.rho == pytest.approx(1 / r["sigma"] ** 2)
    assert 0.999 < ledger.spent <= 1.0
    fine_comp, wide = seen
    coarse_cells = [wide.cells(tuple(r["marginal"])) for r in selections]
    is_coarse = [r["cells"] == c < fine_comp.cells(tuple(r["marginal"]))
                 for r, c in zip(selections, coarse_cells, strict=True)]  # fmt: skip
    if coarse_final:
        assert is_coarse[-1] and not any(is_coarse[:-1])
    else:
        assert any(is_coarse)


BAD_COARSE = [("coarse", -1.0), ("coarse", float("nan")), ("coarse_weight", 0.0),
              ("coarse_weight", -0.5)]  # fmt: skip


@pytest.mark.parametrize(("key", "bad"), BAD_COARSE)
def test_bad_coarse_is_refused_by_name(key, bad) -> None:  # coarse 0 is off, not bad
    model = AdaptiveProjection(epsilon=1.0, **{key: bad})
    with pytest.raises(DPQueryError, match=key):
        model.fit(small_data(), workload_2way())
    assert model.ledger_ is None


def test_coarse_off_is_the_release_without_it() -> None:
    """``coarse=None`` (the default) and ``coarse=0`` give the release of a run without the
    option, whatever ``coarse_weight`` and ``coarse_final`` say."""
    data, w = small_data(), workload_2way()
    a = AdaptiveProjection(epsilon=1.0, seed=3).fit(data, w)
    b = AdaptiveProjection(epsilon=1.0, seed=3, coarse=0, coarse_weight=0.5,
                           coarse_final=True).fit(data, w)  # fmt: skip
    assert np.array_equal(a.records.rows, b.records.rows)
