"""A time column's months' run that stops short of months holding data keeps the years'
bound on that side (docs/learn.md, "A time column's months beyond its run")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning as learning
from dpquery.data import Numeric
from dpquery.data.dates import iso_cell
from dpquery.domain_learning import (
    FAR_WINDOW_RATE,
    MONTHS_CLIP_SHARE,
    learn_domain,
    months_beyond,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.partition_selection import partition_threshold


def _month(m: int, year: int = 2015) -> float:
    cell = iso_cell(f"{year + (m - 1) // 12}-{(m - 1) % 12 + 1:02d}-01")
    assert cell is not None
    return float(cell[0])


MONTHS = np.array([_month(m) for m in range(1, 14)])  # 2015's 12 month buckets


def test_months_beyond_by_hand():
    """Noise variance 1 a month: a side of ``m`` months holds data when its noisy sum
    reaches the threshold an empty run's sum (variance ``m``) reaches with at most
    FAR_WINDOW_RATE (1e-4: about 3.7 sd). January's noisy count is made large here (10,000),
    so that the cut's second rule (below) cuts every side that the first does not keep."""
    t1, t11 = partition_threshold(1, FAR_WINDOW_RATE), partition_threshold(11, FAR_WINDOW_RATE)
    assert 4 <= t1 <= 5 and 3.7 * 11**0.5 <= t11 <= 3.8 * 11**0.5 + 1
    run = (MONTHS[0], MONTHS[1])  # January alone
    noisy = np.zeros(12, dtype=np.int64)
    noisy[0] = 10_000
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)
    noisy[1:] = [t11 // 11 + 1] * 11  # eleven months above: their sum reaches t11
    assert sum(noisy[1:]) >= t11
    assert months_beyond(noisy, MONTHS, run, 1) == (False, True)
    noisy[1:] = 0
    noisy[11] = t11 - 1  # one short
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)
    run = (MONTHS[2], MONTHS[12])  # March to December: two months below
    noisy = np.zeros(12, dtype=np.int64)
    noisy[2] = 10_000
    t2 = partition_threshold(2, FAR_WINDOW_RATE)
    noisy[0], noisy[1] = t2, 0
    assert months_beyond(noisy, MONTHS, run, 1) == (True, False)
    noisy[0] = t2 - 1
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)
    # the variance scales the threshold: eleven months summing to t11 hold data at variance
    # 1, not at variance 4 (the threshold about twice t11)
    noisy = np.zeros(12, dtype=np.int64)
    noisy[0], noisy[11] = 10_000, t11
    assert months_beyond(noisy, MONTHS, (MONTHS[0], MONTHS[1]), 1) == (False, True)
    assert months_beyond(noisy, MONTHS, (MONTHS[0], MONTHS[1]), 4) == (False, False)
    assert months_beyond(np.full(12, 10), MONTHS, (MONTHS[0], MONTHS[12]), 1) == (False, False)


def test_a_side_is_cut_only_when_its_months_hold_a_small_share():
    """The second rule: a side that fails the first is cut only when its months' noisy sum
    is within MONTHS_CLIP_SHARE (10%) of the run's noisy mass; the noise's variance plays no
    part in it."""
    assert MONTHS_CLIP_SHARE == 0.1
    run = (MONTHS[0], MONTHS[1])
    noisy = np.zeros(12, dtype=np.int64)
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)  # 0 within 10% of 0
    noisy[5] = 1
    assert months_beyond(noisy, MONTHS, run, 1) == (False, True)  # 1 above 10% of 0: kept
    noisy[0] = 10
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)  # 1 within 10% of 10: cut
    noisy[0], noisy[5] = 90, 10  # 10 above 9 (10 alone is below the first rule's t11)
    assert months_beyond(noisy, MONTHS, run, 1) == (False, True)
    noisy[0] = -50  # a run of negative noisy mass counts as 0
    noisy[5] = 0
    assert months_beyond(noisy, MONTHS, run, 1) == (False, False)
    # Gestation's seed 1 (a month's variance 14,003): January 1965 read as 425, the eleven
    # months after it as 690 in all, below the first rule's 1,461; the second keeps them
    noisy = np.array([425, 124, 0, 25, 190, 110, 115, -41, 121, 105, -53, -6])
    assert partition_threshold(14_003 * 11, FAR_WINDOW_RATE) > noisy[1:].sum() == 690
    assert months_beyond(noisy, MONTHS, run, 14_003) == (False, True)


def _times(n: int, seed: int) -> pd.DataFrame:
    """``n`` times spread over 2015, written with a zone (homicides15's form)."""
    rng = np.random.default_rng(seed)
    t = _month(1) + rng.integers(0, int(_month(13) - _month(1)) // 60, n) * 60
    stamps = pd.to_datetime(t, unit="s", utc=True).strftime("%Y-%m-%dT%H:%M:%SZ")
    return pd.DataFrame({"when": stamps, "kind": rng.choice(["a", "b", "c"], n)})


@pytest.mark.parametrize("stopped", [False, True])
def test_a_run_stopped_at_january_keeps_the_years_bound(monkeypatch, stopped):
    """The months' histogram of a small table (2,000 times of 2015) with the noise of
    homicides15's seed 0, where the run grown from January's mode stopped at once: the
    other eleven months' noisy sum (1,509) is far above its threshold, so the bounds are
    the year's; with those months' noise pulled down to nothing (a run truly alone, the
    months beyond holding less than a tenth of January's noisy count) they stay January.
    The ledger's charges are the same either way (post-processing)."""
    noise = np.array([348, -36, 88, 121, 260, 21, 166, 223, 167, 298, -3, 204])
    if stopped:
        noise[1:] = np.minimum(noise[1:], 0)
    read = learning.read_bounds

    def drawn(noisy, e, t, window, grow):  # type: ignore[no-untyped-def]
        out = read(noisy, e, t, window, grow)
        if out is None or not np.array_equal(e, MONTHS):  # the months' histogram only
            return out
        run = learning.grown_bounds(noise, t, *grow, window[0])
        assert run == (0, 0)  # January alone, as on homicides15
        return float(MONTHS[0]), float(MONTHS[1]), noise

    monkeypatch.setattr(learning, "read_bounds", drawn)
    ledger = Ledger(Budget.zcdp(1.0))
    dom, report = learn_domain(_times(2000, 0), rho=0.0008, delta=1e-9,
                               rng=np.random.default_rng(0), ledger=ledger,
                               neighbours="add-remove")  # fmt: skip
    assert report.small
    attr = dom["when"]
    assert isinstance(attr, Numeric)
    expected = (MONTHS[0], MONTHS[1]) if stopped else (MONTHS[0], MONTHS[12])
    assert (attr.edges[0], attr.edges[-1]) == expected
    names = [e.charge.mechanism for e in ledger.entries]
    assert "when: bounds, months (discrete Gaussian histogram)" in names


def test_neighbours_are_charged_alike():
    """Tables of ``n`` and ``n + 1`` times (add/remove), real noise: the same charges (names,
    counts, costs), the months' among them."""
    big = _times(2001, 1)
    charges = []
    for df in (big.iloc[:2000], big):
        ledger = Ledger(Budget.zcdp(1.0))
        learn_domain(df.reset_index(drop=True), rho=0.0008, delta=1e-9,
                     rng=np.random.default_rng(1), ledger=ledger,
                     neighbours="add-remove")  # fmt: skip
        charges.append([(e.charge.mechanism, e.charge.count, e.charge.cost)
                        for e in ledger.entries])  # fmt: skip
    assert charges[0] == charges[1]
    assert any("months" in c[0] for c in charges[0])
