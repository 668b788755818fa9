"""Interpolation within ordinal bins (``within_bins``,
:mod:`dpquery.algorithms.marginal.within_bins`): the permutation within bins (bins and
counts kept), a pseudo-measurement by hand, which measurements and attributes it reads,
and the estimator with it on: the same ledger under either relation (post-processing:
nothing charged), seeded reproducibility, the default on under add/remove and off under
replace-one.

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.test_marginals import assert_refusal_draws_nothing, fits_on_and_off

from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.marginal.compress import ordinal_map
from dpquery.algorithms.marginal.projection import Measurement, mapped_counts
from dpquery.algorithms.marginal.within_bins import (
    MIN_VALUES_PER_BIN,
    WITHIN_BINS_SCALE,
    interpolate_within_bins,
    interpolated,
    interpolated_measurements,
    permute_within_bins,
    wide_bins,
)
from dpquery.data import encode
from dpquery.data.domain import Categorical, Domain, Numeric
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import (
    marginal_counts,
)

# == the permutation =============================================================================


def _records(seed: int = 0, m: int = 2000) -> np.ndarray:
    """Records over an ordered attribute of 40 values driving a 3-valued one, and a flag."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40, m)
    b = np.minimum(2, (a + rng.integers(0, 20, m)) // 20)
    c = rng.integers(0, 2, m)
    return np.column_stack([a, b, c]).astype(np.int32)


BINS = np.repeat(np.arange(5), 8)  # 40 values in 5 bins of 8


def test_the_permutation_keeps_each_records_bin_and_every_count_through_the_bins() -> None:
    X = _records()
    Y = permute_within_bins(X.copy(), {0: BINS}, np.random.default_rng(1))
    assert np.array_equal(BINS[Y[:, 0]], BINS[X[:, 0]])
    assert np.array_equal(Y[:, 1:], X[:, 1:])
    assert np.array_equal(np.bincount(Y[:, 0], minlength=40), np.bincount(X[:, 0], minlength=40))
    maps = (BINS, np.arange(3), np.arange(2))
    assert np.array_equal(mapped_counts(Y, (0, 1, 2), maps), mapped_counts(X, (0, 1, 2), maps))
    # ... and it does move values within bins: the fine joint with b changes.
    assert not np.array_equal(marginal_counts(Y, np.array([40, 3, 2]), (0, 1)),
                              marginal_counts(X, np.array([40, 3, 2]), (0, 1)))  # fmt: skip


def test_the_permutation_is_reproducible_from_its_generator() -> None:
    X = _records()
    one = permute_within_bins(X.copy(), {0: BINS}, np.random.default_rng(5))
    two = permute_within_bins(X.copy(), {0: BINS}, np.random.default_rng(5))
    other = permute_within_bins(X.copy(), {0: BINS}, np.random.default_rng(6))
    assert np.array_equal(one, two) and not np.array_equal(one, other)


# == the pseudo-measurement ======================================================================


def _by_hand() -> tuple[np.ndarray, np.ndarray]:
    """Four values of a (10 records each) in two bins, {0, 1} and {2, 3}, and a flag b: 15 of
    bin 0's 20 records have b = 0, 5 of bin 1's. Centres 0.5 and 2.5; given-bin
    distributions (0.75, 0.25) and (0.25, 0.75). Value 1 is a quarter of the way from centre
    0.5 to 2.5 (0.625, 0.375), value 2 three quarters (0.375, 0.625); 0 and 3 lie outside the
    centres and keep their bin's. Times 10 records: (7.5, 2.5), (6.25, 3.75), (3.75, 6.25),
    (2.5, 7.5); rescaled so that each bin's cells sum to its counts (bin 0: b = 0 by 15 /
    13.75, b = 1 by 5 / 6.25; bin 1 the mirror image)."""
    a = np.repeat([0, 1, 2, 3], 10)
    b = np.concatenate([np.repeat([0, 1], [8, 2]), np.repeat([0, 1], [7, 3]),
                        np.repeat([0, 1], [3, 7]), np.repeat([0, 1], [2, 8])])  # fmt: skip
    up, down = 15 / 13.75, 5 / 6.25
    want = np.array([[7.5 * up, 2.5 * down], [6.25 * up, 3.75 * down],
                     [3.75 * down, 6.25 * up], [2.5 * down, 7.5 * up]])  # fmt: skip
    return np.column_stack([a, b]).astype(np.int32), want


def test_a_pseudo_measurement_by_hand_in_either_attribute_order() -> None:
    X, want = _by_hand()
    sizes = np.array([4, 2])
    f = np.array([0, 0, 1, 1])
    x = Measurement((0, 1), np.zeros(4), 2.0, (f, np.arange(2)))
    y = interpolated(X, x, 0, 4, sizes, n=40)
    assert y.marginal == (0, 1) and y.sigma == 2.0 * WITHIN_BINS_SCALE
    assert [m.tolist() for m in y.maps] == [[0, 1, 2, 3], [0, 1]]
    np.testing.assert_allclose(y.y, want.ravel())
    # Each bin's cells sum to the records' binned counts (15, 5 | 5, 15).
    np.testing.assert_allclose(mapped_counts(X, (0, 1), (f, np.arange(2))),
                               np.bincount(f.repeat(2) * 2 + np.tile([0, 1], 4),
                                           weights=y.y, minlength=4))  # fmt: skip
    # The same marginal with a second: the transposed cells. At twice the records' scale
    # (n = 80 against m = 40) every count doubles.
    Xt = X[:, ::-1].copy()
    xt = Measurement((0, 1), np.zeros(4), 2.0, (np.arange(2), f))
    yt = interpolated(Xt, xt, 1, 4, sizes[::-1].copy(), n=80, scale=1.0)
    np.testing.assert_allclose(yt.y, 2 * want.T.ravel())
    assert yt.sigma == 2.0


def test_a_pseudo_measurement_reads_the_records_and_maps_not_the_noisy_counts() -> None:
    X, _ = _by_hand()
    f = np.array([0, 0, 1, 1])
    one = interpolated(X, Measurement((0, 1), np.zeros(4), 1.0, (f, np.arange(2))), 0, 4,
                       np.array([4, 2]), n=40)  # fmt: skip
    two = interpolated(X, Measurement((0, 1), np.full(4, 1e6), 1.0, (f, np.arange(2))), 0, 4,
                       np.array([4, 2]), n=40)  # fmt: skip
    assert np.array_equal(one.y, two.y)


def test_values_after_the_ordered_ones_keep_their_bins_distribution() -> None:
    """A fifth value (say "missing", its own bin 2) after the four ordered ones."""
    X, want = _by_hand()
    X = np.vstack([X, np.array([[4, 0]] * 3 + [[4, 1]], dtype=np.int32)])
    f = np.array([0, 0, 1, 1, 2])
    x = Measurement((0, 1), np.zeros(6), 1.0, (f, np.arange(2)))
    y = interpolated(X, x, 0, 4, np.array([5, 2]), n=44).y.reshape(5, 2)
    np.testing.assert_allclose(y[:4], want)
    np.testing.assert_allclose(y[4], [3.0, 1.0])


def test_pseudo_measurements_come_from_binned_measurements_of_several_attributes_only() -> None:
    X = _records()
    sizes = np.array([40, 3, 2])
    phi = np.minimum(np.arange(40), 30)  # a compression, not the bins
    measured = [
        Measurement((0,), np.zeros(40), 1.0),  # 1-way
        Measurement((0, 1), np.zeros(120), 1.0),  # fine
        Measurement((0, 1), np.zeros(15), 1.0, (BINS, np.arange(3))),  # binned: one
        Measurement((0, 2), np.zeros(62), 1.0, (phi, np.arange(2))),  # compressed
        Measurement((0, 1, 2), np.zeros(30), 1.0, (BINS, np.arange(3), np.arange(2))),  # two
        Measurement((1, 2), np.zeros(6), 1.0),  # no ordered attribute
    ]
    out = interpolated_measurements(X, measured, {0: BINS}, {0: 40}, sizes, n=2000)
    assert [y.marginal for y in out] == [(0, 1), (0, 1, 2)]
    assert all(y.maps is not None and y.maps[0].tolist() == list(range(40)) for y in out)


def test_which_attributes_are_interpolated() -> None:
    """More than MIN_VALUES_PER_BIN values a bin on average, counted over the ordered values
    and the bins they fill."""
    assert MIN_VALUES_PER_BIN == 4
    assert wide_bins(BINS, 40)  # 8 a bin
    assert not wide_bins(np.repeat(np.arange(5), 4), 20)  # 4 a bin (ACS's AGEP)
    assert wide_bins(np.concatenate([np.repeat(np.arange(3), 5), [3]]), 15)  # 15 in 3 bins
    assert not wide_bins(np.arange(3), 0)


def test_the_interpolation_keeps_bins_and_fits_the_pseudo_measurements() -> None:
    """On records whose fine values were shuffled within their bins, the interpolation
    leaves every bin count as it was and brings the fine joint of a and b nearer the
    original's (which changes smoothly with a) than the shuffled records'."""
    X = _records(3)
    sizes = np.array([40, 3, 2])
    flat = permute_within_bins(X.copy(), {0: BINS}, np.random.default_rng(0))
    measured = [
        Measurement((0,), np.bincount(X[:, 0], minlength=40).astype(float), 1.0),
        Measurement((1,), np.bincount(X[:, 1], minlength=3).astype(float), 1.0),
        Measurement((2,), np.bincount(X[:, 2], minlength=2).astype(float), 1.0),
    ]
    binned = (BINS, np.arange(3))
    measured.append(Measurement((0, 1), mapped_counts(X, (0, 1), binned), 1.0, binned))
    Y, cut, pseudo = interpolate_within_bins(flat.copy(), measured, [BINS, np.arange(3),
                                             np.arange(2)], {0: 40}, sizes, n=2000, sweeps=10,
                                             rng=np.random.default_rng(1))  # fmt: skip
    assert cut == [0] and pseudo == 1
    maps = (BINS, np.arange(3))
    assert np.array_equal(mapped_counts(Y, (0, 1), maps), mapped_counts(X, (0, 1), maps))

    def tv(Z: np.ndarray) -> float:
        return 0.5 * float(np.abs(marginal_counts(Z, sizes, (0, 1))
                                  - marginal_counts(X, sizes, (0, 1))).sum()) / len(X)  # fmt: skip

    assert tv(Y) < 0.85 * tv(flat)  # 0.085 against 0.110


# == the estimator ===============================================================================


def _wide_numeric_data() -> tuple[object, object]:
    """3,000 records of an age in 50 bins of 2 years (ordered, numeric: 10 a bin at B = 5)
    that drives a flag, and a colour."""
    rng = np.random.default_rng(0)
    domain = Domain((Numeric("age", tuple(range(0, 101, 2))), Categorical("flag", ("a", "b")),
                     Categorical("colour", ("r", "g", "b"))))  # fmt: skip
    age = rng.integers(0, 100, 3000)
    flag = np.where(rng.random(3000) < age / 100, "b", "a")
    colour = np.where(age < 30, "r", np.where(rng.random(3000) < 0.5, "g", "b"))
    frame = pd.DataFrame({"age": age, "flag": flag, "colour": colour})
    return encode(frame, domain), all_kway_marginals(domain, 2)


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_the_interpolation_charges_nothing_under_either_relation(neighbours) -> None:
    """The same ledger entries (mechanism and cost, in order) with it on and off: it runs
    after every charge, on the records; the records differ, so it did something."""
    data, w = _wide_numeric_data()
    a, b = fits_on_and_off(data, w, {"within_bins": True}, {"within_bins": False}, epsilon=1.0,
                           seed=3, neighbours=neighbours, ordinal="numeric")  # fmt: skip
    (step,) = [r for r in a.rounds if r.get("round") == "within bins"]
    assert step["attributes"] == [0]
    if neighbours == "add-remove":  # a binned round measured (replace-one's bins: none here)
        assert step["pseudo"] >= 1
    assert a.parameters["ordinal"]["within_bins"] == ["age"]
    assert "within_bins" not in b.parameters["ordinal"]


def test_the_interpolation_keeps_each_records_bin_of_the_fit() -> None:
    """Run with a spy on the post-processing: what it returns holds each record's bin and
    every attribute but the interpolated one's ... through the bins, as the fit left them."""
    data, w = _wide_numeric_data()
    seen = []
    real = am.interpolate_within_bins

    def spy(X, measured, bins, ordinal, sizes, **kw):
        before = X.copy()
        out = real(X, measured, bins, ordinal, sizes, **kw)
        seen.append((before, out[0].copy(), bins))
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(am, "interpolate_within_bins", spy)
    try:
        AdaptiveProjection(epsilon=1.0, seed=4, within_bins=True).fit(data, w)
    finally:
        mp.undo()
    ((before, after, bins),) = seen
    sizes = np.array([51, 2, 3])
    for r in [(0,), (0, 1), (0, 2), (0, 1, 2)]:
        maps = [bins[a] for a in r]
        lo = mapped_counts(before, r, maps)
        # The re-fit may move a record to another bin where a measurement asks for it; the
        # binned counts stay within a few records of the fit's.
        assert np.abs(mapped_counts(after, r, maps) - lo).sum() <= 0.02 * len(before)
    assert int(np.asarray(bins[0]).max()) + 1 <= 6 and sizes[0] == 51


def test_seeds_reproduce_the_release_with_the_interpolation() -> None:
    data, w = _wide_numeric_data()
    one = AdaptiveProjection(epsilon=0.5, seed=7, within_bins=True).fit(data, w)
    two = AdaptiveProjection(epsilon=0.5, seed=7, within_bins=True).fit(data, w)
    other = AdaptiveProjection(epsilon=0.5, seed=8, within_bins=True).fit(data, w)
    assert np.array_equal(one.records.rows, two.records.rows)
    assert not np.array_equal(one.records.rows, other.records.rows)


def test_the_default_is_on_under_add_remove_and_off_under_replace_one() -> None:
    data, w = _wide_numeric_data()
    assert am.ADD_REMOVE_WITHIN_BINS is True
    assert AdaptiveProjection(epsilon=1.0).within_bins_on()
    assert not AdaptiveProjection(epsilon=1.0, neighbours="replace-one").within_bins_on()
    assert not AdaptiveProjection(epsilon=1.0, within_bins=False).within_bins_on()
    default = AdaptiveProjection(epsilon=1.0, seed=2).fit(data, w)
    on = AdaptiveProjection(epsilon=1.0, seed=2, within_bins=True).fit(data, w)
    assert np.array_equal(default.records.rows, on.records.rows)
    kw = {"epsilon": 1.0, "seed": 2, "neighbours": "replace-one"}
    ro = AdaptiveProjection(**kw).fit(data, w)
    assert np.array_equal(ro.records.rows, AdaptiveProjection(within_bins=False, **kw)
                          .fit(data, w).records.rows)  # fmt: skip


def test_narrow_bins_are_left_as_fitted() -> None:
    """An ordered attribute of 20 values (4 a bin at B = 5) is not interpolated: the release
    is the one without the step."""
    rng = np.random.default_rng(0)
    domain = Domain((Numeric("age", tuple(range(0, 101, 5))), Categorical("flag", ("a", "b"))))
    age = rng.integers(0, 100, 2000)
    flag = np.where(rng.random(2000) < age / 100, "b", "a")
    data = encode(pd.DataFrame({"age": age, "flag": flag}), domain)
    w = all_kway_marginals(domain, 2)
    on = AdaptiveProjection(epsilon=1.0, seed=1, within_bins=True).fit(data, w)
    off = AdaptiveProjection(epsilon=1.0, seed=1, within_bins=False).fit(data, w)
    assert np.array_equal(on.records.rows, off.records.rows)
    (step,) = [r for r in on.rounds if r.get("round") == "within bins"]
    assert step["attributes"] == [] and step["pseudo"] == 0
    assert "within_bins" not in on.parameters["ordinal"]


def test_ordinal_map_of_the_wide_data_is_wide() -> None:
    """The estimator tests above rely on the age's bins being wide."""
    f = ordinal_map(np.full(50, 60.0), 3000, 5)
    assert wide_bins(f, 50)


@pytest.mark.parametrize("fail_at", [1, 4, 7])
def test_a_refused_charge_draws_nothing_with_the_interpolation_on(fail_at) -> None:
    """The interpolation runs after every charge: a ledger refusing its k-th charge leaves
    the generator where it was when that charge was asked for, with it on as without."""
    data, w = _wide_numeric_data()
    assert_refusal_draws_nothing(data, w, fail_at, ordinal={0: 50}, within_bins=True)
