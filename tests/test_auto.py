"""The default path: ``default_workload`` and the ``auto`` policy."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import mixed_data

from dpquery.algorithms import registry
from dpquery.algorithms.auto import (
    BASELINE_MEDIAN_TV,
    MAX_ATTRIBUTES,
    MIN_RECORDS,
    WIDE,
    WORK,
    Auto,
    BaselineWarning,
    baseline_warning,
    candidate_count,
    choose,
    records_for,
    wide_warning,
)
from dpquery.algorithms.marginal.adaptive_projection import MAX_CODES, AdaptivePlan
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, zcdp_rho_for
from dpquery.queries import default_workload, marginal_cells, random_parities
from dpquery.queries.default import default_marginals

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 20),
        Categorical("size", (1, 2, 3, 4)),
        Binary("e"),
    )
)


# --- default_workload ---------------------------------------------------------------------------
def test_default_workload_is_every_kway_marginal_of_at_most_n_cells() -> None:
    # value counts 3, 2, 20, 4, 2: by hand, the 3-way sets of at most 100 cells are
    # 3*2*4 = 24, 3*2*2 = 12, 3*4*2 = 24, 2*20*2 = 80, 2*4*2 = 16 cells; the other five
    # (e.g. color x age x size, 240 cells) have more
    n = 100
    expected = [(0, 1, 3), (0, 1, 4), (0, 3, 4), (1, 2, 4), (1, 3, 4)]
    assert default_marginals(DOMAIN, n, k=3) == expected
    workload = default_workload(DOMAIN, n, k=3)
    names = DOMAIN.names
    reference = marginal_cells(DOMAIN, [[names[a] for a in c] for c in expected])
    for field in ("offsets", "bits", "positive", "marginals"):
        assert np.array_equal(getattr(workload, field), getattr(reference, field)), field
    assert workload.domain is DOMAIN


def test_default_workload_lowers_k_to_what_the_domain_allows() -> None:
    assert default_marginals(DOMAIN, 10**6, k=9) == [(0, 1, 2, 3, 4)]  # k > g: all g
    # at n = 5 no 3-way or 2-way marginal fits except binary pairs: (smoker, e) has 4 cells
    assert default_marginals(DOMAIN, 5, k=3) == [(1, 4)]
    # at n = 1 nothing fits: every 1-way marginal
    assert default_marginals(DOMAIN, 1, k=3) == [(a,) for a in range(5)]


def test_default_workload_draws_a_seeded_subset_when_there_are_too_many() -> None:
    wide = Domain.binary(40)  # C(40, 3) = 9,880 sets of 8 cells
    a = default_marginals(wide, 1000, k=3, seed=1, max_marginals=50)
    b = default_marginals(wide, 1000, k=3, seed=1, max_marginals=50)
    c = default_marginals(wide, 1000, k=3, seed=2, max_marginals=50)
    assert a == b != c
    assert len(a) == 50 == len(set(a)) and a == sorted(a)
    assert all(len(s) == 3 and list(s) == sorted(s) for s in a)


def test_default_workload_on_half_a_million_bits_is_drawn_not_listed() -> None:
    wide = Domain.binary(512_000)  # about 2.2e16 3-way sets: drawn at random
    sets = default_marginals(wide, 20_000, k=3, seed=0, max_marginals=100)
    assert len(sets) == 100 == len(set(sets))
    assert default_marginals(wide, 20_000, k=3, seed=0, max_marginals=100) == sets
    workload = default_workload(wide, 20_000, k=3, seed=0, max_marginals=100)
    assert len(workload) == 800 and workload.d == 512_000


@pytest.mark.parametrize("bad", [{"n": 0}, {"k": 0}, {"max_marginals": 0}])
def test_default_workload_refuses_bad_sizes(bad: dict[str, int]) -> None:
    keywords = {"n": 10, "k": 3, "max_marginals": 10, **bad}
    n = keywords.pop("n")
    with pytest.raises(DPQueryError, match=next(iter(bad))):
        default_marginals(DOMAIN, n, **keywords)


# --- the registry ---------------------------------------------------------------------------
def test_auto_is_registered_and_takes_a_budget() -> None:
    assert "auto" in registry.names()
    assert {"epsilon", "delta", "rho", "size"} <= set(registry.takes("auto"))
    model = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False)
    assert isinstance(model, Auto)
    with pytest.raises(registry.OptionError, match="eta"):
        registry.build("auto", {"epsilon": 1.0, "eta": 1.0})


# --- the policy ---------------------------------------------------------------------------------
def test_policy_picks_adaptive_projection_where_it_fits() -> None:
    c = choose(n=48_842, g=15, d=588, workload_kind="conjunction")
    assert c.algorithm == "adaptive-projection" and "48842 records x 15 attributes" in c.reason


def test_policy_picks_the_wide_algorithm_beyond_adaptive_projection() -> None:
    c = choose(n=20_000, g=512_000, d=512_000, workload_kind="conjunction")
    assert c.algorithm == WIDE and str(MAX_CODES) in c.reason
    c = choose(n=100, g=MAX_ATTRIBUTES + 1, d=5000, workload_kind="conjunction",
               )  # fmt: skip
    assert c.algorithm == WIDE and str(MAX_ATTRIBUTES) in c.reason
    c = choose(n=100, g=5, d=20, workload_kind="parity")
    assert c.algorithm == WIDE and "parity" in c.reason


def test_auto_release_says_what_ran_and_why() -> None:
    data = mixed_data(300, seed=0)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    release = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False).fit(data, workload)
    assert release.algorithm == "adaptive-projection"
    assert release.parameters["auto"]["algorithm"] == "adaptive-projection"
    assert "fit adaptive-projection" in release.parameters["auto"]["reason"]
    assert 0.999 <= release.ledger.spent <= 1.0
    again = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False).fit(data, workload)
    assert np.array_equal(release.records.rows, again.records.rows)


# --- the runtime rule and the pre-release check (hand-computed) ------------------------------
def test_records_follow_the_candidates() -> None:
    assert WORK == 20_000_000 and MIN_RECORDS == 2_000
    assert records_for(27_253, 1_740) == 11_494  # 20e6 // 1,740 (ACS's default workload)
    assert records_for(48_842, 383) == 48_842  # 52,219 > n: every record
    assert records_for(10**6, 100) == 50_000  # the cap of adaptive-projection
    assert records_for(10**6, 20_000) == 2_000  # 1,000 would be too few: the floor
    assert records_for(500, 20_000) == 500  # never more than n
    # Sizes 2 x 2 x 2 x 100 with n = 10: the pairs with attribute 3 have 200 cells > n.
    sizes, n = [2, 2, 2, 100], 10
    assert candidate_count([(0, 1, 2)], sizes, n) == 7  # 3 + 3 + 1; no other pair overlaps
    # (1,), (2,), (1, 2) shared; pairs (0, 3) and (3, x) are over n cells, so none is added.
    assert candidate_count([(0, 1, 2), (1, 2, 3)], sizes, n) == 11
    # With n = 1,000 every pair fits: (0, 3) joins the candidates (it overlaps the workload).
    assert candidate_count([(0, 1, 2), (1, 2, 3)], sizes, 1000) == 12


def test_the_chosen_records_are_in_the_reason() -> None:
    c = choose(n=27_253, g=22, d=448, workload_kind="conjunction", candidates=1_740)
    assert c.options == {"size": 11_494}
    assert "it fits 11494 records (not 27253)" in c.reason
    c = choose(n=27_253, g=22, d=448, workload_kind="conjunction", candidates=1_740, size=500)
    assert c.options == {"size": 500} and "it fits" not in c.reason  # the user's size


def _plan(one_way: tuple[float, ...]) -> AdaptivePlan:
    return AdaptivePlan(1.0, Budget.zcdp(1.0), 10, 0.9, 1.0, 1.0, 100, one_way)


def test_baseline_check_threshold_by_hand() -> None:
    """Expected total variation of a noisy 1-way marginal: 0.5 |a| sqrt(2/pi) sigma / n. At
    n = 100 and |a| = 2 it is 0.0079788 sigma, so the median attribute reaches the threshold
    0.43 at sigma = 0.43 / 0.0079788 = 53.89; the other attributes do not matter."""
    assert BASELINE_MEDIAN_TV == 0.43
    sizes = [2, 2, 2]
    assert baseline_warning(_plan((10.0, 53.8, 200.0)), 100, sizes) is None
    assert baseline_warning(_plan((0.1, 54.0, 0.1)), 100, sizes) is None  # the median: 0.1
    message = baseline_warning(_plan((10.0, 54.0, 200.0)), 100, sizes)
    assert message is not None and "0.43 for the median attribute, 0.08 to 1.60" in message
    assert "not expected to beat the uniform or zeros baselines" in message


def test_auto_warns_before_drawing_and_records_the_warning() -> None:
    data = mixed_data(60, seed=0)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    model = registry.build("auto", {"epsilon": 0.05}, seed=0, progress=False)
    assert model.plan(data, workload).warning is not None
    with pytest.warns(BaselineWarning, match="not expected to beat"):
        release = model.fit(data, workload)
    assert "warning" in release.parameters["auto"]
    quiet = registry.build("auto", {"epsilon": 5.0}, seed=0, progress=False)
    assert quiet.plan(data, workload).warning is None


def test_auto_charges_what_the_chosen_algorithm_charges() -> None:
    data = mixed_data(300, seed=0)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    auto = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False)
    plan = auto.plan(data, workload)
    named = registry.build("adaptive-projection", {"epsilon": 1.0, **plan.choice.options})
    assert plan.charges() == named.charges(data, workload)
    assert plan.budget == named.plan(data, workload).budget


def test_a_size_the_wide_choice_cannot_take_is_refused_by_name() -> None:
    data = mixed_data(50, seed=0)
    assert data.domain is not None
    parities = registry.build("auto", {"epsilon": 1.0, "size": 10}, seed=0)
    workload = random_parities(data.d, 2, 20, seed=0, domain=data.domain)
    with pytest.raises(DPQueryError, match=r"auto chose dualquery .* does not take size"):
        parities.plan(data, workload)


def test_compress_and_column_tv_pass_to_adaptive_projection_and_zero_turns_them_off() -> None:
    data = mixed_data(300, seed=0)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    off = {"epsilon": 1.0, "compress": 0, "column_tv": 0}
    plan = registry.build("auto", off, seed=0, progress=False).plan(data, workload)
    assert plan.model.compress == 0 and plan.inner.column_tv is None and plan.inner.column_cap == 0
    release = registry.build("auto", off, seed=0, progress=False).fit(data, workload)
    rounds = [r for r in release.rounds if isinstance(r.get("round"), int)]
    assert rounds and not any(r["compressed"] for r in rounds)
    # 0 is the same run as None: byte-identical records
    plain = registry.build("adaptive-projection", {"epsilon": 1.0}, seed=0, progress=False)
    plain.compress, plain.column_tv = None, None
    assert np.array_equal(plain.fit(data, workload).records.rows, release.records.rows)
    on = registry.build("auto", {"epsilon": 1.0, "compress": 3.0}, seed=0, progress=False)
    assert on.plan(data, workload).model.compress == 3.0
    parities = registry.build("auto", {"epsilon": 1.0, "compress": 3.0}, seed=0)
    with pytest.raises(DPQueryError, match=r"auto chose dualquery .* does not take compress"):
        parities.plan(data, random_parities(data.d, 2, 20, seed=0, domain=data.domain))


@pytest.mark.parametrize(
    ("option", "value"), [("compress", -1.0), ("column_tv", 1.5), ("column_tv", -0.1)]
)
def test_bad_compress_or_column_tv_is_refused_by_name(option: str, value: float) -> None:
    data = mixed_data(50, seed=0)
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    model = registry.build("adaptive-projection", {"epsilon": 1.0, option: value}, seed=0)
    with pytest.raises(DPQueryError, match=option):
        model.fit(data, workload)


def test_the_wide_path_says_it_is_not_expected_to_beat_uniform_where_measured() -> None:
    n = 20_000
    assert wide_warning(Budget.approx(1.0, 1e-9), n) is not None
    assert wide_warning(Budget.pure(0.1), n) is not None
    assert wide_warning(Budget.approx(2.0, 1e-9), n) is None  # not measured: no claim
    rho_1 = zcdp_rho_for(1.0, 1 / n**2)  # rho worth epsilon 1 at delta 1/n^2
    assert wide_warning(Budget.zcdp(0.9 * rho_1), n) is not None
    assert wide_warning(Budget.zcdp(1.5 * rho_1), n) is None
    message = wide_warning(Budget.pure(0.1), n)
    assert message is not None and "uniform baseline" in message


def test_partitioned_data_keeps_adaptive_projection_counted_on_the_cluster() -> None:
    c = choose(n=494_021, g=41, d=396, workload_kind="conjunction", partitioned=True,
               candidates=2909)  # fmt: skip
    assert c.algorithm == "adaptive-projection" and not c.wide
    assert "computed on the cluster" in c.reason and c.options == {"size": 6875}
    local = choose(n=494_021, g=41, d=396, workload_kind="conjunction", candidates=2909)
    assert local.options == c.options and "cluster" not in local.reason
    c = choose(n=20_000, g=5000, d=10_000, workload_kind="conjunction", partitioned=True)
    assert c.algorithm == WIDE and c.wide  # too wide: the wide path, as in one process
    c = choose(n=20_000, g=512_000, d=512_000, workload_kind="conjunction")
    assert c.wide
