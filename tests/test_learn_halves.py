"""Whole numbers and halves (ratings) coded on the half lattice (:func:`~dpquery.domain_learning.
half_steps`, :func:`~dpquery.domain_learning.on_halves`), and a small table's integer codes over
bounds far from 0 (:func:`~dpquery.domain_learning.far_codes`); docs/learn.md, "Half steps,
spikes and codes far from 0"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpquery.data.domain import Categorical, Domain, Numeric
from dpquery.data.encode import attribute_codes
from dpquery.domain_learning import (
    _SAFETY,
    HALF_SHARE,
    MAX_CODES,
    _half_codes,
    far_codes,
    half_counts,
    half_seen,
    learn_domain,
    on_halves,
)
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.privacy.quantiles import magnitude_buckets


def _ratings(n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """Ratings as a CSV holds them: ``5``, ``4.5``, ``4``, ``3.5`` (60%, 33%, 5%, 2%)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rating": rng.choice(["5", "4.5", "4", "3.5"], p=[0.6, 0.33, 0.05, 0.02],
                                              size=n)})  # fmt: skip


def _tenths(n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """One decimal spread over the tenths of 3.0 to 5.0."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rating": np.char.mod("%.1f", rng.integers(30, 51, size=n) / 10)})


def _learn(df: pd.DataFrame, seed: int) -> tuple[object, object, Ledger]:
    ledger = Ledger(Budget.zcdp(1e6))
    rng = np.random.default_rng(seed)
    domain, report = learn_domain(df, rho=0.0005, delta=1e-9, ledger=ledger, rng=rng,
                                  neighbours=ADD_REMOVE)  # fmt: skip
    return domain, report, ledger


def test_half_counts_by_hand():
    """Halves and values off the lattice; whole numbers (and -0.5, a half) counted as such."""
    assert half_counts(np.array([5.0, 4.5, 4.0, 3.5, 4.3, -0.5, 10.0, 0.25])) == [3, 2]
    assert half_counts(np.zeros(0)) == [0, 0]


@pytest.mark.parametrize("seed", range(5))
def test_half_counts_neighbours(seed: int):
    """Adding or removing a record moves the pair by L2 at most 1 (one cell by 1, or none:
    a whole number); replacing one by at most ``sqrt(2)`` (n and n + 1, replace-one)."""
    rng = np.random.default_rng(seed)
    x = rng.choice([5.0, 4.5, 4.0, 3.7, 2.25], size=200)
    base = np.array(half_counts(x))
    for extra in (5.0, 4.5, 3.7, 2.25):
        added = np.array(half_counts(np.append(x, extra)))
        assert np.linalg.norm(added - base) <= 1.0
    for i in range(20):
        for new in (5.0, 4.5, 3.7):
            y = x.copy()
            y[i] = new
            assert np.linalg.norm(np.array(half_counts(y)) - base) <= math.sqrt(2) + 1e-12


def test_half_seen_and_on_halves_by_hand():
    """The precondition: class 1 at least 2 sd (200 at sd 100), whole numbers at least half
    of it, each finer class below 4 sd (400); the rule: halves at least 2 sd, off below 2 sd
    and below half the halves."""
    assert half_seen([1000, 200, 399, 0, 0], 100.0)
    assert half_seen([300, 600, 0, 0, 0], 100.0)
    assert not half_seen([299, 600, 0, 0, 0], 100.0)  # few whole numbers: tenths, or cents
    assert not half_seen([1000, 199, 0, 0, 0], 100.0)
    assert not half_seen([1000, 600, 400, 0, 0], 100.0)  # a finer class seen: cents
    assert on_halves(500, 199, 100.0)
    assert not on_halves(500, 200, 100.0)  # off reaches 2 sd
    assert not on_halves(300, 150, 100.0)  # off at half the halves
    assert not on_halves(199, -50, 100.0)  # the halves not seen


def test_half_codes_over_the_bounds():
    """Bounds ``[2, 10]`` of one decimal: the 16 points 2.0 .. 9.5, those above 5 (the start
    of the bucket ``[5, 10)`` holding the last) added by rule; the catch-all last. More than
    :data:`MAX_CODES` points: none."""
    buckets = magnitude_buckets(min_exponent=-1)
    attr, learned = _half_codes("rating", (2.0, 10.0), buckets, has_missing=True)
    assert attr.values[:16] == tuple(v / 2 for v in range(4, 20))
    assert attr.values[16:] == ("<other>", "<missing>")
    assert attr.by_rule == tuple(v / 2 for v in range(11, 20))
    assert "16 codes 2..9.5" in learned
    assert _half_codes("x", (0.0, MAX_CODES / 2 + 1), buckets, has_missing=False) is None


def test_far_codes_by_hand():
    """Bounds ``[50, 100]`` (50 integers): codes while the bucket of 0's noisy count stays
    below the 5% test of an empty bucket's noise (sd 100 at rho 5e-5, L2 1: 1.645 sd, 165
    counts); at 165 or with bounds ``[20, 100]`` (80 integers), not."""
    buckets = magnitude_buckets(min_exponent=0)
    noisy = np.zeros(buckets.size - 1, dtype=np.int64)
    z = int(np.flatnonzero(buckets == 0.0)[0])
    rho = 5e-5
    assert far_codes((50.0, 100.0), buckets, noisy, rho, 1.0)
    noisy[z] = 164
    assert far_codes((50.0, 100.0), buckets, noisy, rho, 1.0)
    noisy[z] = 165
    assert not far_codes((50.0, 100.0), buckets, noisy, rho, 1.0)
    assert not far_codes((20.0, 100.0), buckets, np.zeros_like(noisy), rho, 1.0)


def test_the_half_steps_charge_by_hand():
    """One column at rho 0.0005 under add/remove: the noisy n takes 5% (2.5e-5), the column
    0.000475 (times the safety factor); its profile and precision 10% each (4.75e-5), the
    half steps :data:`HALF_SHARE` of the bounds' 80% (7.6e-5), the bounds the rest
    (3.04e-4). Each charged on the ledger before its draw, the half steps before the bounds."""
    _, report, ledger = _learn(_ratings(), 2000)
    charges = [(e.charge.mechanism, e.charge.cost.rho) for e in ledger.entries]
    col = 0.000475 * _SAFETY
    assert HALF_SHARE == 0.2
    expected = [("the number of records (discrete Gaussian)", 2.5e-5),
                ("rating: profile (discrete Gaussian)", 0.1 * col),
                ("rating: precision (discrete Gaussian)", 0.1 * col),
                ("rating: half steps (discrete Gaussian)", 0.16 * col),
                ("rating: bounds (discrete Gaussian histogram)", 0.64 * col)]  # fmt: skip
    assert [m for m, _ in charges] == [m for m, _ in expected]
    for (_, got), (_, want) in zip(charges, expected, strict=True):
        assert got == pytest.approx(want, rel=1e-9)
    assert report.columns[0].rho == pytest.approx(col, rel=1e-9)


def test_ratings_are_coded_on_the_half_lattice():
    """1,500 ratings at rho 0.0005: coded on halves (4.5 and 5.0 both codes) in 198 of 200
    seeds (1000..1199). Seeded: 40 seeds, at least 34 (the mean at 0.99 is 39.6, sd 0.63: a
    false failure far below 1e-3); without the rule none is."""
    df = _ratings()
    coded = 0
    for s in range(40):
        domain, report, _ = _learn(df, 1000 + s)
        attr = domain["rating"]
        if isinstance(attr, Categorical) and "halves" in report.columns[0].learned:
            assert {4.5, 5.0} <= set(attr.values)
            coded += 1
    assert coded >= 34


def test_tenths_are_not_coded_on_halves():
    """One decimal over the tenths: a tenth of the values whole, so the half steps are not
    drawn (none of 200 seeds, 1000..1199; without :data:`HALF_WHOLE_RATIO` they were drawn in
    all 200 and read as halves in none); seeded, 20 seeds, none drawn, a numeric column."""
    df = _tenths()
    for s in range(20):
        domain, report, ledger = _learn(df, 1000 + s)
        assert not [e for e in ledger.entries if "half steps" in e.charge.mechanism]
        assert "halves" not in report.columns[0].learned
        assert isinstance(domain["rating"], Numeric)


def test_off_lattice_values_are_not_halves():
    """The rule itself on tenths (the precondition passed by hand): the off count is four
    times the halves, far above both of its bars, at any seed (no noise here)."""
    halves, off = half_counts(_tenths()["rating"].astype(float).to_numpy())
    assert off > 4 * halves > 0
    assert not on_halves(halves, off, 100.0)


def test_no_half_steps_drawn_for_whole_numbers():
    """Whole numbers: the precision's class 1 holds noise alone, the test is drawn only when
    it reaches 2 sd (a 2.3% chance): seeds 1000..1009 draw none, and the domain is that of a
    learning without the rule (the half steps' stream is its own)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"score": rng.integers(50, 100, size=1500).astype(str)})
    for s in range(10):
        _, _, ledger = _learn(df, 1000 + s)
        assert not [e for e in ledger.entries if "half steps" in e.charge.mechanism]


def test_scores_far_from_0_are_codes():
    """Scores of 60 to 95 (a sixth on 88) at rho 0.0005: bounds ``[50, 100]``, codes 50..99
    (not 0..99, more than :data:`MAX_CODES`: bins of 6 points that smoothed the spike) in 75
    of 100 seeds (1000..1099; the others' bounds reach 0 or 1,000); without the rule in none.
    Seeded: 20 seeds, at least 9 (binomial at 0.75: a false failure below 1e-3)."""
    rng = np.random.default_rng(6)
    x = np.where(rng.random(1500) < 0.17, 88, rng.integers(60, 96, size=1500))
    df = pd.DataFrame({"walk": x.astype(str)})
    coded = 0
    for s in range(20):
        ledger = Ledger(Budget.zcdp(1e6))
        rng = np.random.default_rng(1000 + s)
        domain, _ = learn_domain(df, rho=0.0005, delta=1e-9, ledger=ledger, rng=rng,
                                 neighbours=ADD_REMOVE)  # fmt: skip
        attr = domain["walk"]
        if isinstance(attr, Categorical):
            codes = [v for v in attr.values if isinstance(v, int)]
            assert codes[0] >= 50 and 88 in codes and len(codes) <= MAX_CODES
            coded += 1
    assert coded >= 9


def test_half_codes_survive_the_domain_file_and_encode_the_values(tmp_path):
    """The learned halves written and read back as a domain JSON are the same floats, and
    the ratings as a CSV holds them (``5``, ``4.5``) and as pandas reads them (5.0, 4.5)
    encode to their own codes, not the catch-all."""
    df = _ratings()
    domain, report, _ = _learn(df, 1000)
    assert "halves" in report.columns[0].learned
    path = tmp_path / "d.json"
    domain.save(path)
    back = Domain.load(path)
    attr = back["rating"]
    assert isinstance(attr, Categorical) and attr.values == domain["rating"].values
    for series in (df["rating"], df["rating"].astype(float)):
        codes = attribute_codes(series, attr)
        got = [attr.values[c] for c in codes[:50]]
        assert got == [float(v) for v in series[:50]]
