"""A large table's bounds cross one thin bucket to the bucket beyond it when that bucket's
noisy count alone reaches the threshold of :data:`~dpquery.domain_learning.LARGE_SKIP_RATE`
(:func:`~dpquery.domain_learning.large_skip`, :func:`~dpquery.domain_learning.grown_past`;
docs/learn.md, "Against the hand-written codebook, under add/remove"). Post-processing of the
bounds' noisy counts: no mechanism, no charge; the tests are deterministic."""

from __future__ import annotations

import math

import numpy as np
from tests.test_learn_grown_past import EDGES, RHO, _at, _counts

from dpquery.domain_learning import LARGE_SKIP_RATE, grown_past, large_skip
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.quantiles import ADD_REMOVE_BOUND_SENSITIVITY, BOUND_SENSITIVITY

AR = ADD_REMOVE_BOUND_SENSITIVITY
ONE_AR = float(discrete_gaussian_sigma2(RHO, AR))  # noise sd 120.9 at L2 1
ONE_RO = float(discrete_gaussian_sigma2(RHO, BOUND_SENSITIVITY))  # 171.0 at L2 sqrt(2)


def test_the_threshold_by_hand():
    """One-sided 1e-4 of a normal is 3.719 sd: 449.6 counts at sd 120.88, 635.8 at 170.95;
    the discrete Gaussian's smallest integer whose tail is at most 1e-4 is one or two above
    (its tail at ``t`` is about the normal's at ``t - 1/2``): 451 and 637."""
    assert LARGE_SKIP_RATE == 1e-4
    assert math.isclose(math.sqrt(ONE_AR), 120.88, abs_tol=0.01)
    assert math.isclose(math.sqrt(ONE_RO), 170.95, abs_tol=0.01)
    assert large_skip(ONE_AR) == 451
    assert large_skip(ONE_RO) == 637


def test_an_industry_code_crosses_its_thin_bucket():
    """The census's industry codes (nist, add/remove, one draw): the union bounds [2000,
    10000); [1000, 2000) noisy 206 (below the step's 282), [500, 1000) beyond it noisy 533
    (at least 451): the bounds reach 500 (the rule at 0 then takes them to 0). One count
    short of the threshold: no crossing."""
    noisy = _counts(b50=31, b100=261, b200=-222, b500=533, b1000=206, b2000=1040, b5000=9600)
    assert grown_past(2000.0, 10000.0, EDGES, noisy, RHO, AR) == (500.0, 10000.0)
    noisy[_at(500.0)] = 450
    assert grown_past(2000.0, 10000.0, EDGES, noisy, RHO, AR) == (2000.0, 10000.0)


def test_one_thin_bucket_only():
    """Two thin buckets between the bounds and the records beyond: no crossing (each side
    crosses one, then grows by steps and crossings again)."""
    noisy = _counts(b200=900, b500=100, b1000=100, b2000=900)
    assert grown_past(2000.0, 5000.0, EDGES, noisy, RHO, AR) == (2000.0, 5000.0)
    # and after a crossing the growth goes on: [100, 200) steps in past [200, 500)
    noisy = _counts(b100=300, b200=900, b500=900, b1000=100, b2000=900)
    assert grown_past(2000.0, 5000.0, EDGES, noisy, RHO, AR) == (100.0, 5000.0)


def test_upward_too_and_at_the_relation_noise():
    """The upper side crosses alike; under replace-one (L2 sqrt(2)) the threshold is 637."""
    noisy = _counts(b100=900, b200=100, b500=640)
    assert grown_past(100.0, 200.0, EDGES, noisy, RHO, BOUND_SENSITIVITY) == (100.0, 1000.0)
    noisy[_at(500.0)] = 636
    assert grown_past(100.0, 200.0, EDGES, noisy, RHO, BOUND_SENSITIVITY) == (100.0, 200.0)


def test_never_across_zero():
    """A thin bucket [0, 1) between positive bounds and a negative bucket: the negatives
    need :func:`~dpquery.domain_learning.across_zero`'s evidence, never a crossing."""
    noisy = _counts(b1=900, b0=10)
    noisy[int(np.flatnonzero(EDGES[:-1] == -1.0)[0])] = 5000
    assert grown_past(1.0, 2.0, EDGES, noisy, RHO, AR) == (1.0, 2.0)
