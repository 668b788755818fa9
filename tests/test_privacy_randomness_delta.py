"""The run's generator (cryptographically secure unless seeded), the one delta rule, and the
labels every report's privacy section carries."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpquery.algorithms.release import LABELS, Release
from dpquery.data.records import Records
from dpquery.privacy import Budget, Ledger, PureDP, ZCDPAccountant
from dpquery.privacy.delta import LargeDeltaWarning, check_delta, default_delta
from dpquery.privacy.ledger import NEIGHBOURING
from dpquery.rng import child_rng, describe_rng, make_rng


def test_unseeded_generators_are_cryptographic_and_independent() -> None:
    a, b = make_rng(), make_rng()
    assert type(a.bit_generator).__name__ == "AESCounter"
    assert describe_rng(a)["cryptographic"] is True
    assert not np.array_equal(a.integers(2**63, size=4), b.integers(2**63, size=4))


def test_seeded_generators_are_pcg64_and_reproducible() -> None:
    rng = make_rng(7)
    assert type(rng.bit_generator).__name__ == "PCG64"
    assert describe_rng(rng) == {
        "bit_generator": "PCG64",
        "cryptographic": False,
        "note": "seeded, NOT cryptographically secure: for testing and research only",
    }
    np.testing.assert_array_equal(rng.random(3), np.random.default_rng(7).random(3))
    assert make_rng(rng) is rng


def test_child_generators_keep_the_run_kind() -> None:
    secure = child_rng(make_rng())
    assert isinstance(secure, np.random.Generator) and describe_rng(secure)["cryptographic"]
    seeded = make_rng(3)
    child = child_rng(seeded)
    assert isinstance(child, int) and child == int(np.random.default_rng(3).integers(2**63))


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_bad_seeds_are_refused(bad) -> None:
    with pytest.raises((TypeError, ValueError), match="seed"):
        make_rng(bad)


def test_default_delta_is_one_over_n_squared() -> None:
    assert default_delta(100) == 1e-4
    assert default_delta(30_162) == pytest.approx(1.0992e-9, rel=1e-4)
    with pytest.raises(Exception, match="n"):
        default_delta(0)


@pytest.mark.parametrize(("delta", "warned"), [(0.01, True), (0.001, True), (9.9e-4, False),
                                               (None, False), (0.0, False)])  # fmt: skip
def test_delta_at_or_above_one_over_n_is_warned(delta, warned) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = check_delta(delta, 1000)
    assert (message is not None) == warned
    assert [w.category for w in caught] == ([LargeDeltaWarning] if warned else [])
    if warned:
        assert "1/n" in str(caught[0].message)


def test_every_privacy_section_states_the_neighbouring_relation() -> None:
    ledger = Ledger(Budget.approx(1.0, 1e-6))
    ledger.charge("em", PureDP(0.1, bounded_range=True), count=3)
    report = ledger.report().to_dict()
    assert report["neighbouring"] == NEIGHBOURING == "bounded DP (replace one record), n public"
    # the rho line names the per-charge rule, not an (epsilon, delta) conversion
    (zcdp,) = [g for g in report["guarantees"] if g["measure"] == "zcdp"]
    assert zcdp["accountant"] == ZCDPAccountant().rho_name
    assert "conversion" not in zcdp["accountant"] and "Canonne" not in zcdp["accountant"]
    single = Ledger(Budget.zcdp(1.0), ZCDPAccountant(conversion="standard"))
    single.charge("em", PureDP(0.1, bounded_range=True))
    (line,) = [g for g in single.report().guarantees if g.measure == "zcdp"]
    assert "Lemma 2" not in line.accountant


def test_release_publishes_no_raw_noise_nor_private_timings() -> None:
    release = Release(
        "mwem", Records(np.eye(2, dtype=np.uint8)), Ledger(Budget.pure(1.0)), {"T": 1},
        [{"round": 1, "query": 3, "measurement": 0.4173, "select_s": 0.1}],
        {"true_answers_s": 1.5, "select_s": 0.1, "total_s": 2.0},
    )  # fmt: skip
    published = release.to_dict()
    assert published["rounds"] == [{"round": 1, "query": 3, "select_s": 0.1}]
    assert published["timings"] == {"select_s": 0.1, "total_s": 2.0}
    assert published["labels"] == LABELS
    assert release.private_timings() == {"true_answers_s": 1.5}
    assert release.rounds[0]["measurement"] == 0.4173  # kept internally
    assert published["privacy"]["neighbouring"] == NEIGHBOURING


def test_estimators_warn_in_python_when_delta_is_at_least_one_over_n() -> None:
    from dpquery.algorithms.game.mwem import MWEM
    from dpquery.data.binary import BinaryData
    from dpquery.data.domain import Domain
    from dpquery.queries import random_marginal_queries

    data = BinaryData.from_dense(
        np.eye(4, dtype=np.uint8)[[0, 1, 2, 3, 0]], domain=Domain.binary(4)
    )
    workload = random_marginal_queries(data.domain, 2, 5, seed=0)
    with pytest.warns(LargeDeltaWarning, match="1/n"):
        MWEM(epsilon=1.0, delta=0.2, T=2, seed=0).fit(data, workload)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDeltaWarning)
        MWEM(epsilon=1.0, delta=0.01, T=2, seed=0).fit(data, workload)  # below 1/n = 0.2
