"""Ordinal coarsening of candidate marginals (adaptive-projection's ``ordinal=``): the bin maps
by hand (contiguous, at most ``B``, about equal noisy mass, from the noisy counts and public
inputs only), the fit through them, the attributes a domain and a user declare ordered, and
the privacy accounting with the option on (the same ledger entries and costs, nothing new
charged, every charge before its draw).

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tests.test_marginals import DOMAIN, RecordingLedger, small_data, workload_2way

from cli_process import dpquery_cli
from dpquery import datasets
from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    adaptive_marginals,
    ordinal_attributes,
    plan_adaptive,
)
from dpquery.algorithms.marginal.compress import Compression, extra_candidates, ordinal_map
from dpquery.algorithms.marginal.options import ordinal_names
from dpquery.algorithms.marginal.projection import (
    Measurement,
    fit_records,
    initial_records,
    loss,
    simplex_projection,
)
from dpquery.data import encode
from dpquery.data.domain import Categorical, Domain, Numeric
from dpquery.errors import DomainError, DPQueryError
from dpquery.privacy import ZCDP, PureDP
from dpquery.privacy.neighbours import NOISY_N
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import (
    AttributeLayout,
    attribute_codes,
    marginal_counts,
    workload_marginals,
)

# == the bin maps =================================================================================


def _contiguous(f: np.ndarray) -> bool:
    """Codes 0, 1, ... in value order, each a run of adjacent values."""
    return f[0] == 0 and bool(np.all(np.diff(f) >= 0)) and bool(np.all(np.diff(f) <= 1))


def test_ordinal_map_by_hand() -> None:
    """Sixteen values (6,500 records), the fifth holding most of them, B = 5 (share 1,300):
    the values before it share a bin (605 records, when the spike's middle passes the share),
    the spike is a bin of its own (its share 5,895 / 4), and the 895 records after it are
    shared among the three bins left: 300 (the next share 895 / 3 = 298), 200 + 100 (the
    next 595 / 2 = 298: 100's middle, 250, is below it) and the 295 records of the rest."""
    y = np.array([5.0, 100, 200, 300, 5000, 300, 200, 100, 50, 20, 10, 5, 0, 3, 2, 205])
    f = ordinal_map(y, int(y.sum()), 5)
    assert f.tolist() == [0, 0, 0, 0, 1, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]
    # The first 14 values ordered (the last two, say "missing" and "refused", keep a code
    # each): 688 records after the spike, shares 229, 194, so 300 | 200 | 100 + the rest.
    g = ordinal_map(y, int(y.sum()), 5, ordered=14)
    assert g.tolist() == [0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 5, 6]


def test_ordinal_map_cuts_equal_mass_into_equal_bins() -> None:
    """85 values of equal counts into 10 bins: 10 runs of 8 or 9 values."""
    f = ordinal_map(np.full(85, 100.0), 8500, 10)
    assert _contiguous(f) and f.max() == 9
    assert sorted(set(np.bincount(f).tolist())) == [8, 9]


def test_ordinal_map_is_the_identity_at_or_below_b_values() -> None:
    y = np.array([3.0, 1, 2, 7])
    assert ordinal_map(y, 13, 4).tolist() == [0, 1, 2, 3]
    assert ordinal_map(y, 13, 10).tolist() == [0, 1, 2, 3]
    assert ordinal_map(y, 13, 5, ordered=3).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(20))
def test_ordinal_maps_of_noisy_counts_are_contiguous_and_balanced(seed) -> None:
    """Noisy counts (negative ones included) of random skewed attributes: the maps are
    contiguous, hold at most B bins, and no bin but one made of a single value holds more than
    twice the mass of a bin of the equal split (a bin closes once its mass passes its share
    by half a value; a single value may exceed any share)."""
    rng = np.random.default_rng(seed)
    k, bins, n = int(rng.integers(12, 120)), int(rng.integers(2, 12)), 10_000
    y = rng.multinomial(n, rng.dirichlet(np.full(k, 0.3))) + rng.normal(0, 30, k)
    f = ordinal_map(y, n, bins)
    assert _contiguous(f) and f.max() < bins
    mass = np.bincount(f, weights=simplex_projection(y, n))
    single = np.bincount(f) == 1
    assert np.all(single | (mass <= 2 * n / bins + 1e-9))


def test_ordinal_map_reads_only_its_inputs() -> None:
    """The same noisy counts, ``n`` and ``B`` give the same map (nothing else is read), and
    the map moves with the noisy counts, not with anything behind them."""
    y = np.array([10.0, 40, 5, 80, 30, 20, 60, 15, 25, 35, 45, 9])
    assert ordinal_map(y, 374, 4).tolist() == ordinal_map(y.copy(), 374, 4).tolist()
    assert ordinal_map(y, 374, 4).tolist() != ordinal_map(y[::-1].copy(), 374, 4).tolist()


@pytest.mark.parametrize(("kw", "match"), [({"bins": 0}, "bins"), ({"ordered": 13}, "ordered"),
                                           ({"ordered": -1}, "ordered")])  # fmt: skip
def test_bad_ordinal_map_inputs_are_refused_by_name(kw, match) -> None:
    args = {"y": np.ones(12), "n": 12, "bins": 4, **kw}
    with pytest.raises(DPQueryError, match=match):
        ordinal_map(**args)


def test_ordinal_compression_keeps_the_base_maps_elsewhere() -> None:
    """:meth:`Compression.ordinal` cuts the declared attribute and keeps ``base``'s map (or
    the identity) for the others; a candidate joins when the bins leave it fewer cells."""
    sizes = np.array([12, 3])
    ones = [Measurement((0,), np.full(12, 10.0), 1.0),
            Measurement((1,), np.array([60.0, 40, 20]), 1.0)]  # fmt: skip
    base = Compression((np.arange(12), np.array([0, 1, 1])), np.array([12, 2]))
    c = Compression.ordinal(ones, sizes, 120, 4, {0: 12}, base)
    assert c.maps[0].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert c.maps[1].tolist() == [0, 1, 1]
    plain = Compression.ordinal(ones, sizes, 120, 4, {0: 12}, None)
    assert plain.maps[1].tolist() == [0, 1, 2]
    table = {(0,): 1.0, (1,): 1.0, (0, 1): 2.0}
    fine = {(0,): np.ones(12), (1,): np.ones(3), (0, 1): np.ones(36)}
    picked, weights, counts, _ = extra_candidates(table, fine, sizes, base, c)
    assert picked == [(0,), (0, 1)] and weights.tolist() == [1.0, 2.0]
    assert counts[1].tolist() == [3.0, 6.0] * 4  # 3 values per bin x (1 | 2) values of attr 1


# == the fit through the bins ======================================================================


def test_fit_records_fits_exact_binned_measurements() -> None:
    """Exact fine 1-ways plus exact (size, city) and (color, city) with city cut into 3 bins:
    the fit reaches them, and the records keep full-domain codes that match every 1-way."""
    data = small_data()
    layout = AttributeLayout.of_data(data)
    codes = attribute_codes(data, layout)
    ones = [Measurement((a,), marginal_counts(codes, layout.sizes, (a,)).astype(float), 1.0)
            for a in range(layout.g)]  # fmt: skip
    bins = Compression.ordinal(ones, layout.sizes, data.n, 3, {4: 6}, None)
    assert _contiguous(bins.maps[4]) and bins.sizes[4] == 3
    binned = [bins.measurement(r, bins.counts(codes, r), 1.0) for r in [(2, 4), (0, 4)]]
    exact = ones + binned
    rng = np.random.default_rng(5)
    X = initial_records([x.y for x in ones], data.n, rng, n=data.n)
    before = loss(X, exact, layout.sizes, data.n)
    X, _ = fit_records(X, exact, layout.sizes, n=data.n, sweeps=30, rng=rng)
    assert loss(X, exact, layout.sizes, data.n) < 0.01 * before
    for x in binned:
        assert np.abs(x.counts(X, layout.sizes) - x.y).max() <= 0.01 * data.n
    for a in range(layout.g):
        assert np.abs(marginal_counts(X, layout.sizes, (a,)) - ones[a].y).max() <= 0.01 * data.n


# == which attributes are ordered ==================================================================


def test_ordinal_attributes_from_names_and_from_the_domains_numeric_columns() -> None:
    domain = Domain((
        Categorical("color", ("red", "green")),
        Numeric("age", tuple(range(0, 100, 5)), missing=True),
        Categorical("score", tuple(range(30))),
        Numeric("wage", (0, 10, 20, 30)),
    ))  # fmt: skip
    assert ordinal_attributes(domain, None, 4) == {}
    assert ordinal_attributes(domain, (), 4) == {}
    # A numeric column's bins are ordered, its "missing" value (the last code) is not.
    assert ordinal_attributes(domain, "numeric", 4) == {1: 19, 3: 3}
    assert ordinal_attributes(domain, ["score", "age"], 4) == {2: 30, 1: 19}
    with pytest.raises(DPQueryError, match="'height'"):
        ordinal_attributes(domain, ["age", "height"], 4)
    with pytest.raises(DPQueryError, match="'all'"):
        ordinal_attributes(domain, "all", 4)


def test_a_categorical_declared_ordered_is_among_the_numeric_default() -> None:
    domain = Domain((
        Categorical("color", ("red", "green")),
        Categorical("grade", tuple(range(12)), ordered=True),
        Numeric("wage", (0, 10, 20, 30)),
    ))  # fmt: skip
    assert ordinal_attributes(domain, "numeric", 3) == {1: 12, 2: 3}
    # a missing or catch-all category is not on the scale: the values before it are ordered
    coded = Domain((Categorical("grade", (*range(6), "n/a", "other"), missing="n/a",
                                other="other", ordered=True),))  # fmt: skip
    assert ordinal_attributes(coded, "numeric", 1) == {0: 6}
    assert ordinal_attributes(coded, ["grade"], 1) == {0: 6}
    # public and declared: kept by the domain's JSON and a codebook, off by default
    again = Domain.from_dict(domain.to_dict())
    assert again["grade"].ordered and not again["color"].ordered
    assert "ordered" not in domain.to_dict()["attributes"][0]
    book = Domain.from_codebook({"grade": {"values": list(range(12)), "ordered": True}})
    assert book["grade"].ordered
    with pytest.raises(DomainError, match="ordered must be true or false"):
        Categorical("grade", (1, 2), ordered="yes")  # type: ignore[arg-type]


def test_adult_pgm_declares_its_continuous_columns_ordered() -> None:
    domain = datasets.domain("adult-pgm")
    ordered = [a.name for a in domain.attributes if getattr(a, "ordered", False)]
    assert ordered == ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                       "hours-per-week"]  # fmt: skip
    assert Domain.from_sizes({"a": 3}, ordered=["a"])["a"].ordered
    with pytest.raises(DomainError, match=r"ordered names \['b'\]"):
        Domain.from_sizes({"a": 3}, ordered=["b"])


def test_an_unknown_ordinal_attribute_is_refused_before_any_charge() -> None:
    model = AdaptiveProjection(epsilon=1.0, ordinal=["city", "height"])
    with pytest.raises(DPQueryError, match="'height'"):
        model.fit(small_data(), workload_2way())
    assert model.ledger_ is None


BAD_ORDINAL = [("ordinal_bins", 0), ("ordinal_bins", 2.5), ("ordinal_weight", 0.0),
               ("ordinal_weight", -1.0)]  # fmt: skip


@pytest.mark.parametrize(("key", "bad"), BAD_ORDINAL)
def test_bad_ordinal_settings_are_refused_by_name(key, bad) -> None:
    model = AdaptiveProjection(epsilon=1.0, ordinal=["city"], **{key: bad})
    with pytest.raises(DPQueryError, match=key):
        model.fit(small_data(), workload_2way())
    assert model.ledger_ is None


# == privacy =======================================================================================


@pytest.mark.parametrize("neighbours", ["replace-one", "add-remove"])
def test_ordinal_rounds_charge_the_same_entries_before_their_draws(neighbours) -> None:
    """With binned candidates the ledger is as without them: ``g`` 1-way measurements, then
    (selection, measurement) pairs at each round's scales (a binned marginal's Gaussian costs
    ``Delta^2 / (2 sigma^2)``, as a fine one's), the budget spent and not exceeded; at least
    one binned marginal is measured; the maps are cut from the 1-way measurements only."""
    data = small_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=1.0, T=20,
                         neighbours=neighbours)  # fmt: skip
    rng = np.random.default_rng(1)
    ledger = RecordingLedger(plan.budget, rng)
    seen: list[tuple[list, Compression]] = []
    real = Compression.ordinal

    def spy(measurements, sizes, n, bins, ordered, base):
        out = real(measurements, sizes, n, bins, ordered, base)
        seen.append(([x.marginal for x in measurements], out))
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(Compression, "ordinal", staticmethod(spy))
    try:
        _X, rounds = adaptive_marginals(
            attribute_codes(data, layout), layout.sizes,
            workload_marginals(workload_2way(), layout), plan=plan, rng=rng, ledger=ledger,
            final_sweeps=2, compress=None, ordinal={4: 6, 2: 4}, ordinal_bins=2,
        )  # fmt: skip
    finally:
        mp.undo()
    selections = [r for r in rounds if isinstance(r["round"], int)]
    kinds = [e.charge.mechanism for e in ledger.entries]
    assert kinds == [am.MEASURE] * layout.g + [am.SELECT, am.MEASURE] * len(selections)
    unit = 1.0 if neighbours == "replace-one" else 0.5
    for e, r in zip(ledger.entries[layout.g :: 2], selections, strict=True):
        assert e.charge.cost == PureDP(r["epsilon"], bounded_range=True)
    for e, r in zip(ledger.entries[layout.g + 1 :: 2], selections, strict=True):
        assert isinstance(e.charge.cost, ZCDP)
        assert e.charge.cost.rho == pytest.approx(unit / r["sigma"] ** 2)
    assert 0.999 < ledger.spent <= 1.0
    ((marginals, bins),) = seen
    assert marginals == [(a,) for a in range(layout.g)]
    assert any(r["compressed"] and r["cells"] == bins.cells(tuple(r["marginal"]))
               for r in selections)  # fmt: skip


@pytest.mark.parametrize("fail_at", [6, 7, 8])
def test_a_refused_charge_draws_nothing_with_ordinal_bins(fail_at) -> None:
    data = small_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=1.0)
    rng = np.random.default_rng(0)
    ledger = RecordingLedger(plan.budget, rng, fail_at)
    with pytest.raises(RuntimeError, match="injected"):
        adaptive_marginals(attribute_codes(data, layout), layout.sizes,
                           workload_marginals(workload_2way(), layout), plan=plan, rng=rng,
                           ledger=ledger, ordinal={4: 6}, ordinal_bins=3)  # fmt: skip
    assert rng.bit_generator.state == ledger.states[-1]
    assert len(ledger.entries) == fail_at - 1


def test_the_fit_with_ordinal_bins_charges_what_it_did_without() -> None:
    """Through the estimator under add/remove: the same mechanisms charged (the noisy n first,
    the 1-way measurements, selections and measurements), the same total (the budget), and the
    option recorded; off (None or an empty list) it is the release without it."""
    data, w = small_data(), workload_2way()
    on = AdaptiveProjection(epsilon=1.0, seed=2, ordinal=["city"], ordinal_bins=3)
    release = on.fit(data, w)
    off = AdaptiveProjection(epsilon=1.0, seed=2)
    plain = off.fit(data, w)
    assert on.ledger_ is not None and off.ledger_ is not None
    mechanisms = {e.charge.mechanism for e in on.ledger_.entries}
    assert mechanisms == {e.charge.mechanism for e in off.ledger_.entries}
    assert mechanisms == {NOISY_N, am.MEASURE, am.SELECT}
    assert on.ledger_.entries[0].charge.mechanism == NOISY_N
    assert on.ledger_.spent == pytest.approx(off.ledger_.spent, rel=1e-9)
    assert release.parameters["ordinal"] == {"attributes": ["city"], "bins": 3, "weight": 1.0}
    assert plain.parameters["ordinal"] is None
    for empty in (None, []):
        again = AdaptiveProjection(epsilon=1.0, seed=2, ordinal=empty).fit(data, w)
        assert np.array_equal(again.records.rows, plain.records.rows)


def test_binned_marginals_move_by_the_relations_sensitivity_on_random_neighbours() -> None:
    """A binned marginal's counts, on n and n + 1 (or n - 1) records, differ in one cell by 1
    (L2 1, add/remove); one record replaced moves L2 at most sqrt(2): the fine marginal's
    sensitivities, which the measurements are charged at."""
    rng = np.random.default_rng(11)
    sizes = np.array([30, 4, 12])
    y = rng.normal(100, 40, 30)
    bins = Compression((ordinal_map(y, 3000, 5), np.arange(4), ordinal_map(y[:12], 1200, 3)),
                       np.array([5, 4, 3]))  # fmt: skip
    for n in (1, 7, 200):
        D = np.column_stack([rng.integers(0, s, n) for s in sizes])
        row = np.array([[rng.integers(0, s) for s in sizes]])
        for r in [(0,), (0, 1), (0, 2), (0, 1, 2)]:
            c = bins.counts(D, r)
            assert np.linalg.norm(bins.counts(np.vstack([D, row]), r) - c) == pytest.approx(1.0)
            assert np.linalg.norm(bins.counts(D[1:], r) - c) == pytest.approx(1.0)
            replaced = np.vstack([row, D[1:]])
            assert np.linalg.norm(bins.counts(replaced, r) - c) <= np.sqrt(2) + 1e-12


def test_small_datas_domain_is_what_these_tests_assume() -> None:
    assert DOMAIN.names[4] == "city" and DOMAIN.attributes[4].size == 6


def test_the_default_is_the_numeric_columns_under_add_remove_and_none_under_replace_one() -> None:
    """``ordinal=None`` resolves to the domain's numeric columns under add/remove and to
    nothing under replace-one (its releases pinned); given, it is used under either; ``[]``
    turns it off."""
    assert AdaptiveProjection(epsilon=1.0).ordinal_spec() == "numeric" == am.ADD_REMOVE_ORDINAL
    assert AdaptiveProjection(epsilon=1.0, neighbours="replace-one").ordinal_spec() is None
    given = AdaptiveProjection(epsilon=1.0, neighbours="replace-one", ordinal=["city"])
    assert given.ordinal_spec() == ["city"]
    assert (
        ordinal_attributes(DOMAIN, AdaptiveProjection(epsilon=1.0, ordinal=[]).ordinal_spec(), 5)
        == {}
    )
    # "numeric" without a domain, or on a domain with no numeric column: nothing to cut.
    assert ordinal_attributes(None, "numeric", 3) == {}
    assert ordinal_attributes(DOMAIN, "numeric", 5) == {}


def _numeric_data() -> tuple[object, object]:
    """3,000 records of an age (20 bins of 5 years, ordered, numeric) that drives a flag."""
    rng = np.random.default_rng(0)
    domain = Domain((Numeric("age", tuple(range(0, 101, 5))), Categorical("flag", ("a", "b"))))
    age = rng.integers(0, 100, 3000)
    flag = np.where(rng.random(3000) < age / 100, "b", "a")
    data = encode(pd.DataFrame({"age": age, "flag": flag}), domain)
    return data, all_kway_marginals(domain, 2)


def test_the_default_bins_the_numeric_columns_under_add_remove_only() -> None:
    data, w = _numeric_data()
    ar = AdaptiveProjection(epsilon=1.0, seed=1).fit(data, w)
    assert ar.parameters["ordinal"] == {"attributes": ["age"], "bins": 5, "weight": 1.0}
    ro = AdaptiveProjection(epsilon=1.0, seed=1, neighbours="replace-one").fit(data, w)
    assert ro.parameters["ordinal"] is None
    off = AdaptiveProjection(epsilon=1.0, seed=1, ordinal=[]).fit(data, w)
    assert off.parameters["ordinal"] is None


def test_the_ordinal_flag_parses_names_numeric_and_none() -> None:
    assert ordinal_names("numeric") == "numeric" and ordinal_names("none") == []
    assert ordinal_names("age, hours-per-week,") == ["age", "hours-per-week"]


def test_the_ordinal_flag_reaches_the_release(tmp_path) -> None:
    table = pd.DataFrame({"age": np.arange(300) % 60, "sex": np.arange(300) % 2})
    table.to_csv(tmp_path / "t.csv", index=False)
    Domain(
        (Numeric("age", tuple(float(e) for e in range(0, 61, 5))), Categorical("sex", (0, 1)))
    ).save(tmp_path / "d.json")
    base = ["synth", "--data", str(tmp_path / "t.csv"), "--domain", str(tmp_path / "d.json"),
            "--epsilon", "1", "--seed", "0"]  # fmt: skip
    out = tmp_path / "s.csv"
    ok = dpquery_cli(*base, "--ordinal", "age", "--out", str(out), "--report",
                     str(tmp_path / "r.json"), "--quiet")  # fmt: skip
    assert ok.code == 0, ok.err
    parameters = json.loads((tmp_path / "r.json").read_text())["release"]["parameters"]
    assert parameters["ordinal"]["attributes"] == ["age"]
    bad = dpquery_cli(*base, "--ordinal", "agee", "--out", str(tmp_path / "b.csv"))
    assert bad.code == 2 and "'agee' is not in the domain" in bad.err
    assert not (tmp_path / "b.csv").exists()
