"""The domain learning's L2 sensitivities per neighbouring relation: every count vector it
noises (a column's profile, its precision and date-format histograms, the bounds' buckets,
the partition selections, the decoding weights' sub-bins) holds each record in exactly one
cell, so its L2 sensitivity is ``sqrt(2)`` under replace-one and 1 under add/remove
(:func:`~dpquery.privacy.neighbours.marginal_sensitivity`). Each mechanism's charge against
hand-computed values (``rho = Delta^2 / (2 sigma^2)``, CKS 2020 Theorem 4), every draw of a
learning at its relation's sensitivity, and the counts of random neighbouring tables of ``n``
and ``n + 1`` rows."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import dpquery.domain_learning as dl
import dpquery.pipeline.learning as pl
import dpquery.privacy.partition_selection as ps
import dpquery.privacy.quantiles as qu
from dpquery.data import Domain, Numeric
from dpquery.domain_learning import (
    _read,
    learn_domain,
    learn_within,
    second_plan,
    sub_bin_counts,
    within_plan,
)
from dpquery.pipeline.request import Frame, Learning, ReleaseRequest
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE, marginal_sensitivity
from dpquery.privacy.partition_selection import (
    ADD_REMOVE_PARTITION_SENSITIVITY,
    combined_threshold,
    held_counts,
    partition_threshold,
    reselect_partitions,
    select_partitions,
)
from dpquery.privacy.quantiles import (
    ADD_REMOVE_BOUND_SENSITIVITY,
    bucket_counts,
    bucket_threshold,
    magnitude_buckets,
    private_bounds,
)


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


def hand_tau(sigma2: float, delta: float) -> int:
    """The smallest ``t >= 1`` with ``P(Z >= t) <= delta``, summed from ``exp(-z^2 / (2
    sigma2))`` over ``|z| <= 400`` (the tests' sigmas are below 10)."""
    w = [math.exp(-z * z / (2 * sigma2)) for z in range(-400, 401)]
    total = sum(w)
    return next(t for t in range(1, 400) if sum(w[400 + t :]) / total <= delta)


# --- each mechanism's charge at L2 1, against hand-computed values ------------------------------
def test_partition_selection_at_l2_one():
    """rho 0.5 at L2 1: sigma^2 = 1 / (2 * 0.5) = 1 (half of replace-one's 2); by hand
    (exp(-z^2 / 2) summed), P(Z >= 6) = 6.09e-9 <= 1e-6 < P(Z >= 5) = 1.49e-6: tau = 6
    (replace-one's, at sigma^2 = 2: P(Z >= 8) = 3.22e-8 <= 1e-6 < P(Z >= 7) = 1.38e-6, 8)."""
    assert hand_tau(1.0, 1e-6) == 6 and hand_tau(2.0, 1e-6) == 8
    ledger = Ledger(Budget.zcdp(0.5))
    sel = select_partitions({"a": 100, "b": 1}, rho=0.5, delta_tail=1e-6,
                            rng=np.random.default_rng(0), ledger=ledger,
                            sensitivity=ADD_REMOVE_PARTITION_SENSITIVITY)  # fmt: skip
    assert sel.sigma2 == pytest.approx(1.0, abs=1e-5) and sel.tau == 6 and ledger.spent == 0.5
    ro = select_partitions({"a": 100}, rho=0.5, delta_tail=1e-6, rng=np.random.default_rng(0),
                           ledger=big_ledger())  # fmt: skip
    assert ro.sigma2 == pytest.approx(2.0, abs=1e-5) and ro.tau == 8  # the default: replace-one
    # held_counts: the same draws as select_partitions at the same sensitivity
    again, held = held_counts({"a": 100, "b": 1}, rho=0.5, delta_tail=1e-6,
                              rng=np.random.default_rng(0), ledger=big_ledger(),
                              sensitivity=1.0)  # fmt: skip
    assert again == sel and set(held) | set(sel.released) == {"a", "b"}
    # the second round at rho 0.25: sigma^2 = 2, combined 1 / (1 / 1 + 1 / 2) = 2/3
    ledger = Ledger(Budget.zcdp(0.25))
    first = ps.Selection({}, Fraction(1), 6, 0.5, 1e-6)
    second = reselect_partitions({"b": 1}, {"b": 0}, first, rho=0.25, delta_tail=1e-6,
                                 rng=np.random.default_rng(1), ledger=ledger,
                                 sensitivity=1.0)  # fmt: skip
    assert ledger.spent == 0.25
    assert float(second.sigma2) == pytest.approx(2 / 3, rel=1e-5)
    assert second.tau == combined_threshold(Fraction(1), Fraction(2), 1e-6)


def test_bounds_histogram_at_l2_one():
    """rho 0.5 at L2 1: sigma^2 = 1, each bucket's noise that of the discrete Gaussian at 1;
    the union-bound threshold over 10 buckets at 1e-5 is the tail 1e-6's: 6, as above."""
    assert bucket_threshold(0.5, 10, 1e-5, ADD_REMOVE_BOUND_SENSITIVITY) == hand_tau(1.0, 1e-6)
    assert bucket_threshold(0.5, 10, 1e-5) == hand_tau(2.0, 1e-6)  # the default: replace-one
    x = np.array([3.0, 3.5, 40.0, 7.0] * 25)
    edges = magnitude_buckets(0, 3)
    ledger = Ledger(Budget.zcdp(0.5))
    found = private_bounds(x, rho=0.5, threshold=6, rng=np.random.default_rng(2), ledger=ledger,
                           edges=edges, sensitivity=1.0)  # fmt: skip
    assert found is not None and ledger.spent == 0.5
    noise = found[2] - bucket_counts(x, edges)
    rng = np.random.default_rng(2)
    from dpquery.privacy.discrete import sample_discrete_gaussian

    expect = sample_discrete_gaussian(discrete_gaussian_sigma2(0.5, 1.0), edges.size - 1, rng)
    assert np.array_equal(noise, expect)  # drawn at sigma^2 = 1 / (2 rho) = 1


def test_the_planning_rules_at_l2_one():
    """The public rules on that noise: the decoding weights' sigma and sub-bins, and the
    second selection's plan, at L2 1 (hand-computed) against sqrt(2)."""
    attr = Numeric("x", (0.0, 10.0, 20.0))
    domain = Domain((attr,))
    rho = 0.02  # one numeric column: rho_c = 0.02 (less 1e-9), sigma = sqrt(1 / 0.04) = 5
    table = pd.DataFrame({"x": np.linspace(0, 20, 3200)})
    _, report = learn_within(domain, table, rho=rho, rng=np.random.default_rng(3),
                             ledger=big_ledger(), sensitivity=1.0)  # fmt: skip
    assert report.sigma == pytest.approx(5.0, rel=1e-6)
    # sub_bins_for: 3200 / (2 k) >= WITHIN_SIGMAS * sigma; at sigma 5 more sub-bins than at
    # sigma 5 sqrt(2) for some n: found by the rule's public inputs alone
    ns = [n for n in range(100, 20000, 50)
          if within_plan(domain, n, rho, 1.0)["x"] != within_plan(domain, n, rho)["x"]]  # fmt: skip
    assert ns and all(within_plan(domain, n, rho, 1.0)["x"] > within_plan(domain, n, rho)["x"]
                      for n in ns)  # fmt: skip
    # second_plan: one column whose first selection had sigma^2 = 100, its noisy other mass
    # m with sd 0, the pool rho 0.01: the second round's sigma^2 is 1 / 0.02 = 50 at L2 1, 100
    # at sqrt(2), and the combined threshold lower (35 against 43), so m = 35 passes at 1 only
    s1 = discrete_gaussian_sigma2(0.01 * (1 - 1e-9), 1.0)
    s2 = discrete_gaussian_sigma2(0.01 * (1 - 1e-9), math.sqrt(2))
    assert float(s1) == pytest.approx(50.0, rel=1e-6) and float(s2) == pytest.approx(100, rel=1e-6)
    tau1, tau2 = combined_threshold(100.0, s1, 1e-9), combined_threshold(100.0, s2, 1e-9)
    assert tau1 < tau2
    others = {"c": (float(tau1), 0.0, 100.0)}
    assert second_plan(others, 0.01, 1e-9, 1.0) == ["c"] and second_plan(others, 0.01, 1e-9) == []


# --- every draw of a learning at its relation's sensitivity -------------------------------------
def _mixed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    wage = np.round(rng.lognormal(3, 0.6, n), 2).astype(object)
    wage[rng.random(n) < 0.05] = None
    day = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    return pd.DataFrame({
        "wage": [None if w is None else str(w) for w in wage],
        "kids": rng.poisson(1.5, n).astype(str),
        "state": rng.choice(["CA", "NY", "TX", "WA"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "day": day.strftime("%Y-%m-%d"),
        "age": rng.integers(18, 90, n).astype(str),
    })  # fmt: skip


@pytest.fixture
def recorded(monkeypatch):
    """Every L2 sensitivity the learning's modules compute a noise or a threshold with."""
    seen: list[float] = []

    def spy(rho, sensitivity):
        seen.append(float(sensitivity))
        return discrete_gaussian_sigma2(rho, sensitivity)

    for module in (dl, ps, qu):
        monkeypatch.setattr(module, "discrete_gaussian_sigma2", spy)
    import dpquery.privacy.integer_mechanisms as im

    monkeypatch.setattr(im, "discrete_gaussian_sigma2", spy)
    return seen


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_every_count_mechanism_of_a_learning_uses_the_relations_l2(recorded, relation):
    """A learning of numbers, codes, text and dates with a second selection's pool: every
    noise and threshold at ``marginal_sensitivity(relation)`` (the noisy n's count, L2 1 under
    both, is drawn through noisy_n before any of them and its sigma read once at 1)."""
    ledger = Ledger(Budget.zcdp(2.0))
    _, report = learn_domain(_mixed(4000, 4), rho=1.0, delta=1e-9, rng=np.random.default_rng(4),
                             ledger=ledger, neighbours=relation, second_rho=0.5)  # fmt: skip
    assert {c.kind for c in report.columns} >= {"numeric", "categorical", "date"}
    l2 = marginal_sensitivity(relation)
    seen = recorded
    if relation == ADD_REMOVE:  # the noisy n (a count, 1 under add/remove) and its sd
        assert seen[0] == 1.0
        seen = seen[1:]
    assert len(seen) > 20 and set(seen) == {l2}


def test_the_pipelines_decoding_weights_use_the_relations_l2(monkeypatch):
    """``pipeline.learning.learn`` passes the relation's sensitivity to the weights and to
    the release's share rule (:func:`~dpquery.pipeline.learning.release_rho`)."""
    given: list[float] = []
    real_within, real_plan = pl.learn_within, pl.within_plan

    def within(*args, **kw):
        given.append(kw["sensitivity"])
        return real_within(*args, **kw)

    def plan(domain, n, rho, sensitivity=ps.PARTITION_SENSITIVITY):
        given.append(sensitivity)
        return real_plan(domain, n, rho, sensitivity)

    monkeypatch.setattr(pl, "learn_within", within)
    monkeypatch.setattr(pl, "within_plan", plan)
    for relation in (ADD_REMOVE, REPLACE_ONE):
        given.clear()
        request = ReleaseRequest(Frame(_mixed(3000, 5), None), algorithm="auto",
                                 options={"epsilon": 1.0, "delta": 1e-9}, learning=Learning(),
                                 neighbours=relation)  # fmt: skip
        pl.learn(request, np.random.default_rng(5), relation)
        assert given and set(given) == {marginal_sensitivity(relation)}


# --- random neighbouring tables of n and n + 1 rows ---------------------------------------------
CELLS = ["3", "7.25", "-2", "40", "1e4", "0.5", None, "abc", "NY", "2021-03-04",
         "2021-03-04T10:00", "12000.0", "354.90"]  # fmt: skip


def test_counts_of_tables_of_n_and_n_plus_one_rows_differ_by_one_in_one_cell():
    """D of n rows (n random, 1 to 80) and D' = D with one random row inserted at a random
    place: the profile (missing, numbers, dates), the precision and date-format histograms,
    the bounds' buckets, the selection's key counts and the weights' sub-bins each differ in
    at most one cell, by 1 (L2 at most 1); the key counts in exactly one (every record has
    one key, the missing key among them). 300 random pairs, seeded: a deterministic check,
    no false failures."""
    rng = np.random.default_rng(6)
    edges = magnitude_buckets()
    attr = Numeric("x", (-5.0, 0.0, 10.0, 100.0, 1e4))
    for _ in range(300):
        n = int(rng.integers(1, 81))
        rows = list(rng.choice(np.array(CELLS, dtype=object), size=n))
        more = list(rows)
        more.insert(int(rng.integers(n + 1)), rng.choice(np.array(CELLS, dtype=object)))
        a, b = _read(pd.Series(rows, dtype=object)), _read(pd.Series(more, dtype=object))
        assert len(more) == len(rows) + 1
        vectors = {
            "profile": (np.array([a.missing, a.numbers.size, a.times.size]),
                        np.array([b.missing, b.numbers.size, b.times.size])),
            "decimals": (a.decimals, b.decimals),
            "formats": (a.time_classes, b.time_classes),
            "bounds": (bucket_counts(a.numbers, edges), bucket_counts(b.numbers, edges)),
            "times": (bucket_counts(a.times, edges), bucket_counts(b.times, edges)),
            "within": (sub_bin_counts(attr, a.numbers, 4), sub_bin_counts(attr, b.numbers, 4)),
        }  # fmt: skip
        keys = sorted(set(a.keys) | set(b.keys), key=str)
        vectors["keys"] = (np.array([a.keys.get(k, 0) for k in keys]),
                           np.array([b.keys.get(k, 0) for k in keys]))  # fmt: skip
        for name, (x, y) in vectors.items():
            d = np.asarray(y, dtype=np.int64) - np.asarray(x, dtype=np.int64)
            assert np.count_nonzero(d) <= 1 and np.abs(d).sum() <= 1, name
            assert math.sqrt(float((d * d).sum())) <= ADD_REMOVE_PARTITION_SENSITIVITY
        x, y = vectors["keys"]  # (the profile has a fourth class: text that is no date)
        assert np.abs(y - x).sum() == 1 and (y - x).sum() == 1


def test_partition_threshold_matches_the_size_limits_rule():
    """The planner's threshold is the run's: check_learnable at the relation's sensitivity and
    size_limits agree (one rule, two readers)."""
    per = dl.column_rho(0.06, 6, True)
    tau = partition_threshold(discrete_gaussian_sigma2(per, 1.0), 1e-6)
    assert dl.size_limits(0.06, 6e-6, 6, True) == (math.ceil(tau / dl.MIN_CATEGORY_SHARE),
                                                   math.ceil(tau / dl.MIN_SMALL_SHARE))  # fmt: skip
