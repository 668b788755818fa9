"""Column refinement (adaptive-projection's 1-way phase): the estimate, the re-measurement's
scale and cost, the cap, each charge before its draw, nothing changed when nothing is past the
target, the plan's statement, and bad options.

Every randomised check is seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from tests.cli_process import dpquery_cli

from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal import one_way as ow
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    adaptive_marginals,
    plan_adaptive,
)
from dpquery.algorithms.marginal.projection import Measurement
from dpquery.cli import main
from dpquery.data import Binary, Categorical, Domain, encode
from dpquery.errors import DPQueryError
from dpquery.privacy import Ledger, ZCDPAccountant
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import AttributeLayout, attribute_codes, workload_marginals

DOMAIN = Domain(
    (
        Categorical("big", tuple(range(60))),
        Binary("smoker", ("no", "yes")),
        Categorical("size", (1, 2, 3, 4)),
    )
)


def wide_data(n: int = 4000, seed: int = 0):
    """A 60-valued column with a long tail (50 values of 0.4% each): at epsilon 2 and
    ``T = ROUNDS`` its 1-way measurement alone is estimated past 0.05 in total variation, the
    others are not."""
    rng = np.random.default_rng(seed)
    p = np.r_[np.full(10, 0.08), np.full(50, 0.2 / 50)]
    table = pd.DataFrame(
        {"big": rng.choice(60, n, p=p), "smoker": rng.choice(["no", "yes"], n),
         "size": rng.choice(4, n) + 1}
    )  # fmt: skip
    return encode(table, DOMAIN)


WORKLOAD = all_kway_marginals(DOMAIN, 2)
# Rounds that leave the 1-way measurements g / T = 3 / 46 of the measuring budget (the default
# T at epsilon 2 here is g + 2 = 5: accurate columns, nothing to refine).
ROUNDS = 46


# == the formulas by hand ======================================================================


def test_tv_estimate_and_target_sigma_by_hand() -> None:
    # sigma 10 on k = 50 kept cells of n = 1000 records:
    # tv = sqrt(2/pi) 10 50 / 2000 = 0.199471, sd = sqrt((1 - 2/pi) 50) 10 / 2000 = 0.0213124
    tv, sd = ow.tv_estimate(10.0, 50, 1000)
    assert tv == pytest.approx(0.199471, rel=1e-5)
    assert sd == pytest.approx(0.0213124, rel=1e-5)
    # The bound tv + 2 sd is 0.05 at sigma = 100 / (39.8942 + 8.52495) = 2.06530.
    s = ow.target_sigma(50, 1000, 0.05)
    assert s == pytest.approx(2.06530, rel=1e-5)
    tv, sd = ow.tv_estimate(s, 50, 1000)
    assert tv + ow.Z * sd == pytest.approx(0.05)


def test_second_measurement_cost_and_the_combination_by_hand() -> None:
    # From sigma 4 to a combined 2: rho' = 1/4 - 1/16 = 0.1875, sigma' = 1/sqrt(0.1875).
    assert ow.second_rho(4.0, 2.0) == pytest.approx(0.1875)
    # Under add/remove (L2 sensitivity 1, unit = 1/2) the same scales cost half.
    assert ow.second_rho(4.0, 2.0, unit=0.5) == pytest.approx(0.09375)
    first = Measurement((0,), np.array([1.0, 3.0]), 1.0)
    second = Measurement((0,), np.array([3.0, 5.0]), 2.0)
    # weights 1 and 1/4: y = ([1, 3] + [3, 5] / 4) / 1.25 = [1.4, 3.4], sigma = 1.25^-1/2
    y, sigma = ow.combine([first, second])
    assert y == pytest.approx([1.4, 3.4])
    assert sigma == pytest.approx(1 / math.sqrt(1.25))
    assert ow.combine([first])[0] is first.y  # one measurement: itself
    a = Measurement((0,), np.zeros(2), 4.0)
    b = Measurement((0,), np.zeros(2), 1 / math.sqrt(ow.second_rho(4.0, 2.0)))
    assert ow.combine([a, b])[1] == pytest.approx(2.0)


def test_records_start_from_the_combination() -> None:
    a = Measurement((0,), np.array([1.0, 3.0]), 1.0)
    b = Measurement((1,), np.array([5.0, 0.0]), 3.0)
    again = Measurement((0,), np.array([3.0, 5.0]), 2.0)
    start = [y for y, _ in ow.one_way_estimates([a, b, again], 2)]
    assert start[0] == pytest.approx([1.4, 3.4])  # as in the combination by hand above
    assert start[1] is b.y  # not re-measured: its own counts, untouched
    alone = [y for y, _ in ow.one_way_estimates([a, b], 2)]
    assert all(x is m.y for x, m in zip(alone, [a, b], strict=True))


def test_kept_cells_are_the_simplex_projection_s_support() -> None:
    # [10, 5, 0.5, -3] onto 15 records: tau = 0.5 / 3, three cells stay positive.
    assert ow.kept_cells(np.array([10.0, 5.0, 0.5, -3.0]), 15) == 3
    assert ow.kept_cells(np.array([700.0, 300.0, 0.0, 0.0]), 1000) == 2


class Fake:
    """A measure(a, sigma) that returns the given counts at the asked scale (no draw)."""

    def __init__(self, counts: np.ndarray) -> None:
        self.counts, self.calls = counts, []

    def __call__(self, a: int, sigma: float) -> Measurement:
        self.calls.append((a, sigma))
        return Measurement((a,), self.counts, sigma)


TRUE = np.array([400.0, 300.0, 200.0, 100.0])


def test_one_step_to_the_target_by_hand() -> None:
    # sigma 50, k = 4 of n = 1000: bound 0.0798 + 2 (0.0301) > 0.05. Target combined scale
    # 100 / (sqrt(2/pi) 4 + 2 sqrt((1 - 2/pi) 4)) = 17.8483; rho' = 17.8483^-2 - 50^-2 =
    # 0.00273911. The counts stay at 4 cells, so one step reaches the target.
    fake = Fake(TRUE)
    new, records = ow.refine_columns([Measurement((0,), TRUE, 50.0)], fake, n=1000, tau=0.05,
                                     cap=1.0)  # fmt: skip
    assert len(new) == 1 and len(fake.calls) == 1
    assert ow.target_sigma(4, 1000, 0.05) == pytest.approx(17.8483, rel=1e-5)
    assert records[0]["rho"] == pytest.approx(0.00273911, rel=1e-5)
    assert fake.calls[0][1] == pytest.approx(1 / math.sqrt(0.00273911), rel=1e-5)
    assert records[0]["combined_sigma"] == pytest.approx(17.8483, rel=1e-5)
    assert records[0]["tv_after"] < records[0]["tv_before"]


def test_the_cap_unaffordable_target_spends_nothing() -> None:
    fake = Fake(TRUE)
    # The target needs 0.00273911 (above); the cap is below it.
    new, records = ow.refine_columns([Measurement((0,), TRUE, 50.0)], fake, n=1000, tau=0.05,
                                     cap=0.0027)  # fmt: skip
    assert new == [] and records == [] and fake.calls == []


def test_a_later_step_spends_what_is_left_of_the_cap() -> None:
    # The first measurement keeps 2 cells: step one aims at 100 / (sqrt(2/pi) 2 +
    # 2 sqrt((1 - 2/pi) 2)) = 30.2959 (rho 0.000689511); the combination then keeps all 4
    # cells, still past the target, and the second step (0.00204960 more) does not fit the
    # cap of 0.002: it spends the 0.00131049 left, and the total is the cap.
    fake = Fake(TRUE)
    first = Measurement((0,), np.array([700.0, 300.0, 0.0, 0.0]), 50.0)
    _, records = ow.refine_columns([first], fake, n=1000, tau=0.05, cap=0.002)
    assert len(fake.calls) == 2
    assert 1 / fake.calls[0][1] ** 2 == pytest.approx(0.000689511, rel=1e-5)
    assert 1 / fake.calls[1][1] ** 2 == pytest.approx(0.002 - 0.000689511, rel=1e-5)
    assert records[0]["rho"] == pytest.approx(0.002)


def test_a_cap_spent_exactly_stops_the_steps() -> None:
    # The cap is exactly the first step's cost: nothing is left for the second.
    fake = Fake(TRUE)
    first = Measurement((0,), np.array([700.0, 300.0, 0.0, 0.0]), 50.0)
    cap = ow.second_rho(50.0, ow.target_sigma(2, 1000, 0.05))
    _, records = ow.refine_columns([first], fake, n=1000, tau=0.05, cap=cap)
    assert len(fake.calls) == 1
    assert records[0]["rho"] == pytest.approx(cap)


def test_nothing_past_the_target_measures_nothing() -> None:
    fake = Fake(TRUE)
    new, records = ow.refine_columns([Measurement((0,), TRUE, 5.0)], fake, n=1000, tau=0.05,
                                     cap=1.0)  # fmt: skip
    assert new == [] and records == [] and fake.calls == []


def test_the_plan_s_cap_is_its_share_of_what_the_1_way_measurements_leave() -> None:
    plan = plan_adaptive(n=100, sizes=[2, 16], rho=0.5, T=10, column_tv=0.05, column_cap=0.25)
    rho_1 = sum(am.measure_rho(s) for s in plan.one_way)
    assert plan.column_cap == pytest.approx(0.25 * (0.5 - rho_1))
    off = plan_adaptive(n=100, sizes=[2, 16], rho=0.5, T=10, column_tv=None)
    assert off.column_cap == 0.0 and off.column_tv is None


# == in the mechanism ==========================================================================


class RecordingLedger(Ledger):
    """Notes the generator's state at every charge; refuses the first refinement."""

    def __init__(self, budget, rng, refuse: str | None = None) -> None:
        super().__init__(budget, ZCDPAccountant(bounded_range=True, conversion="cks"))
        self.rng, self.refuse, self.states = rng, refuse, []

    def charge(self, mechanism, cost, *, count=1):
        self.states.append(self.rng.bit_generator.state)
        if mechanism == self.refuse:
            raise RuntimeError("injected refusal")
        return super().charge(mechanism, cost, count=count)


def loop(refuse: str | None = None, column_tv: float | None = 0.05):
    """The mechanism on :func:`wide_data` at epsilon 2 and ``T = ROUNDS``, where ``big`` is
    refined."""
    data = wide_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(
        n=data.n, sizes=layout.sizes.tolist(), epsilon=2.0, column_tv=column_tv, T=ROUNDS
    )
    rng = np.random.default_rng(0)
    ledger = RecordingLedger(plan.budget, rng, refuse)
    _, rounds = adaptive_marginals(
        attribute_codes(data, layout), layout.sizes, workload_marginals(WORKLOAD, layout),
        plan=plan, rng=rng, ledger=ledger, final_sweeps=2,
    )  # fmt: skip
    return layout, plan, ledger, rounds


def test_a_refused_refinement_draws_nothing() -> None:
    data = wide_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(
        n=data.n, sizes=layout.sizes.tolist(), epsilon=2.0, column_tv=0.05, T=ROUNDS
    )
    rng = np.random.default_rng(0)
    ledger = RecordingLedger(plan.budget, rng, ow.REFINE)
    with pytest.raises(RuntimeError, match="injected"):
        adaptive_marginals(attribute_codes(data, layout), layout.sizes,
                           workload_marginals(WORKLOAD, layout), plan=plan, rng=rng,
                           ledger=ledger)  # fmt: skip
    assert rng.bit_generator.state == ledger.states[-1]
    assert [e.charge.mechanism for e in ledger.entries] == [am.MEASURE] * layout.g


def test_refinements_are_charged_after_the_1_way_measurements_within_the_cap() -> None:
    layout, plan, ledger, rounds = loop()
    kinds = [e.charge.mechanism for e in ledger.entries]
    refined = [r for r in rounds if r["round"] == "column refinement"]
    assert [r["attribute"] for r in refined] == [0]  # only "big"
    steps = len(refined[0]["sigmas"])
    assert kinds[: layout.g + steps] == [am.MEASURE] * layout.g + [ow.REFINE] * steps
    assert ow.REFINE not in kinds[layout.g + steps :]
    costs = [e.charge.cost.rho for e in ledger.entries[layout.g : layout.g + steps]]
    assert costs == pytest.approx([1 / s**2 for s in refined[0]["sigmas"]])
    assert sum(costs) == pytest.approx(refined[0]["rho"])
    assert 0 < sum(costs) <= plan.column_cap
    assert 0.999 * ledger.budget.limit < ledger.spent <= ledger.budget.limit


@pytest.mark.parametrize("epsilon", [1.0, 16.0])
def test_no_refinement_changes_nothing(epsilon) -> None:
    """At epsilon 16 every column's bound is below the target; at epsilon 1 the target is not
    affordable within the cap. Either way the run is byte-identical to one without
    refinement, with the same ledger."""
    data = wide_data()
    layout = AttributeLayout.of_data(data)
    plan = plan_adaptive(n=data.n, sizes=layout.sizes.tolist(), epsilon=epsilon)
    # the bound grows with k: at k = |a| (every cell kept) it bounds every outcome
    estimates = [ow.tv_estimate(s, int(k), data.n)
                 for s, k in zip(plan.one_way, layout.sizes, strict=True)]  # fmt: skip
    bounds = [tv + ow.Z * sd for tv, sd in estimates]
    assert (max(bounds) < 0.05) == (epsilon == 16.0)
    on = AdaptiveProjection(epsilon=epsilon, seed=3, final_sweeps=2).fit(data, WORKLOAD)
    off = AdaptiveProjection(epsilon=epsilon, seed=3, final_sweeps=2, column_tv=None).fit(
        data, WORKLOAD
    )
    assert on.parameters["column_refinement"]["spent"] == 0
    assert np.array_equal(on.records.rows, off.records.rows)
    assert [(e.charge.mechanism, e.charge.cost) for e in on.ledger.entries] == [
        (e.charge.mechanism, e.charge.cost) for e in off.ledger.entries
    ]


def test_the_refinement_is_reported_column_by_column() -> None:
    data = wide_data()
    on = AdaptiveProjection(epsilon=2.0, seed=0, final_sweeps=2, T=ROUNDS).fit(data, WORKLOAD)
    report = on.parameters["column_refinement"]
    assert list(report["columns"]) == ["big"]
    big = report["columns"]["big"]
    assert on.parameters["columns"]["refined"] == {
        "big": {"rho": big["rho"], "share": big["rho"] / on.parameters["rho"]}
    }
    assert big["tv_after"] < 0.05 < big["tv_before"]
    assert big["combined_sigma"] ** -2 == pytest.approx(
        on.parameters["one_way"][0] ** -2 + sum(s**-2 for s in big["sigmas"])
    )
    assert report["spent"] <= report["cap"]
    assert on.ledger.spent <= on.ledger.budget.limit


@pytest.mark.parametrize(
    ("options", "match"),
    [({"column_tv": 1.5}, "column_tv"),
     ({"column_tv": -0.1}, "column_tv"), ({"column_cap": 0.0}, "column_cap"),
     ({"column_cap": 1.0}, "column_cap")],
)  # fmt: skip
def test_bad_refinement_options_are_refused_by_name(options, match) -> None:
    model = AdaptiveProjection(epsilon=1.0, **options)
    with pytest.raises(DPQueryError, match=match):
        model.fit(wide_data(), WORKLOAD)
    assert model.ledger_ is None


def test_privacy_synth_states_the_cap():
    text = dpquery_cli(
        "privacy", "synth", "--dataset", "adult-pgm", "--algorithm", "adaptive-projection",
        "--epsilon", "1", "--workload", "all-marginals", "--k", "3", "--json",
    )  # fmt: skip
    assert text.code == 0, text.err
    planned = json.loads(text.out)["column_refinement"]
    assert planned["target"] == 0.05
    assert planned["decided"] == "from the noisy 1-way marginals"
    assert planned["cap_rho"] > 0
    assert 0 < planned["cap_share"] < ow.DEFAULT_COLUMN_CAP
    plain = dpquery_cli(
        "privacy", "synth", "--dataset", "adult-pgm", "--algorithm", "adaptive-projection",
        "--epsilon", "1", "--workload", "all-marginals", "--k", "3",
    )  # fmt: skip
    assert f"column refinement: up to rho={planned['cap_rho']:.6g}" in plain.out
    assert "decided from the noisy 1-way marginals" in plain.out
    assert "cannot be known in advance" in plain.out


def test_synth_console_and_report_name_the_refined_columns(tmp_path, capsys) -> None:
    rng = np.random.default_rng(0)
    p = np.r_[np.full(10, 0.08), np.full(50, 0.2 / 50)]
    n = 4000
    pd.DataFrame(
        {"big": rng.choice(60, n, p=p), "smoker": rng.choice(["no", "yes"], n),
         "size": rng.choice(4, n) + 1}
    ).to_csv(tmp_path / "data.csv", index=False)  # fmt: skip
    DOMAIN.save(tmp_path / "domain.json")
    code = main([
        "synth", "--data", str(tmp_path / "data.csv"), "--domain", str(tmp_path / "domain.json"),
        "--algorithm", "adaptive-projection", "--epsilon", "2", "--workload", "all-marginals",
        "--k", "2", "--T", str(ROUNDS), "--seed", "0", "--out", str(tmp_path / "s.csv"), "--report",
        str(tmp_path / "r.json"),
    ])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    refined = json.loads((tmp_path / "r.json").read_text())["release"]["columns"]["refined"]
    assert list(refined) == ["big"]
    assert f"columns: re-measured, their noisy 1-way marginals estimated past the target: big " \
           f"(rho={refined['big']['rho']:.3g}" in out  # fmt: skip


# == a first step that does not fit, and the shrunk columns' second measurement =================


def test_a_partial_first_step_by_hand() -> None:
    # Two columns of TRUE's 4 cells, n = 1000, target 0.05 (combined scale 17.8483, rho
    # 17.8483^-2 = 0.00313911). At sigma 50: bound 0.0797885 + 2 (0.0301405) = 0.140069,
    # excess 0.0900695, need 0.00313911 - 50^-2 = 0.00273911, 32.88 per rho. At sigma 100:
    # bound 0.159577 + 2 (0.0602810) = 0.280139, excess 0.230139, need 0.00313911 - 100^-2 =
    # 0.00303911, 75.73 per rho. The cap 0.004 holds neither pair whole (0.00577822): the
    # second column (larger per rho) gets its whole 0.00303911, the first the 0.00096089 left.
    first = [Measurement((0,), TRUE, 50.0), Measurement((1,), TRUE, 100.0)]
    fake = Fake(TRUE)
    new, records = ow.refine_columns(first, fake, n=1000, tau=0.05, cap=0.004, partial=True)
    assert [a for a, _ in fake.calls] == [1, 0] and len(new) == 2
    assert 1 / fake.calls[0][1] ** 2 == pytest.approx(0.00303911, rel=1e-5)
    assert 1 / fake.calls[1][1] ** 2 == pytest.approx(0.004 - 0.00303911, rel=1e-4)
    assert sum(r["rho"] for r in records) == pytest.approx(0.004)
    # The second column reaches the target's scale; the first is only part of the way.
    by = {r["attribute"]: r for r in records}
    assert by[1]["combined_sigma"] == pytest.approx(17.8483, rel=1e-5)
    assert 17.8483 < by[0]["combined_sigma"] < 50.0
    # Without partial, the same cap spends nothing (the step does not fit).
    fake = Fake(TRUE)
    assert ow.refine_columns(first, fake, n=1000, tau=0.05, cap=0.004) == ([], [])
    assert fake.calls == []
    # Under add/remove (unit 1/2) the same scales cost half: a cap of 0.002 buys the same.
    fake = Fake(TRUE)
    _, records = ow.refine_columns(first, fake, n=1000, tau=0.05, cap=0.002, partial=True,
                                   unit=0.5)  # fmt: skip
    assert 0.5 / fake.calls[0][1] ** 2 == pytest.approx(0.00303911 / 2, rel=1e-5)
    assert sum(r["rho"] for r in records) == pytest.approx(0.002)


def test_partial_step_order_and_remainder() -> None:
    # excess per rho: 0 -> 1, 1 -> 3, 2 -> 2 (the order 1, 2, 0); room 5: 1 whole (2), 2 whole
    # (2), 0 the 1 left of its 4.
    assert ow.partial_step({0: 4.0, 1: 2.0, 2: 2.0}, {0: 4.0, 1: 6.0, 2: 4.0}, 5.0) == {
        1: 2.0, 2: 2.0, 0: 1.0
    }  # fmt: skip
    assert ow.partial_step({0: 4.0, 1: 2.0}, {0: 4.0, 1: 6.0}, 1.5) == {1: 1.5}


def test_a_doubled_column_by_hand() -> None:
    # Column 0 at sigma 50 measured again at 50 (rho 50^-2 = 0.0004): combined 50 / sqrt(2) =
    # 35.3553, still past the target, so the rule adds 0.00313911 - 0.0008 = 0.00233911.
    fake = Fake(TRUE)
    _, records = ow.refine_columns([Measurement((0,), TRUE, 50.0)], fake, n=1000, tau=0.05,
                                   cap=1.0, doubled=[0])  # fmt: skip
    assert fake.calls[0] == (0, pytest.approx(50.0))
    assert 1 / fake.calls[1][1] ** 2 == pytest.approx(0.00233911, rel=1e-5)
    # together 0.0004 + 0.00233911: the one step to the target's 0.00273911, in two draws
    assert records[0]["rho"] == pytest.approx(0.00273911, rel=1e-5)
    # A cap below the doubling (0.0003): the second measurement at 0.0003^-1/2 = 57.735, and
    # nothing left for the rule.
    fake = Fake(TRUE)
    _, records = ow.refine_columns([Measurement((0,), TRUE, 50.0)], fake, n=1000, tau=0.05,
                                   cap=0.0003, doubled=[0])  # fmt: skip
    assert fake.calls == [(0, pytest.approx(57.735, rel=1e-4))]
    assert records[0]["rho"] == pytest.approx(0.0003)
    # Under add/remove (unit 1/2): the doubling costs 0.5 / 50^2 = 0.0002, the same scale.
    fake = Fake(TRUE)
    _, records = ow.refine_columns([Measurement((0,), TRUE, 50.0)], fake, n=1000, tau=0.05,
                                   cap=0.0002, doubled=[0], unit=0.5)  # fmt: skip
    assert fake.calls == [(0, pytest.approx(50.0))]
    assert records[0]["rho"] == pytest.approx(0.0002)


def test_shrunk_columns_read_james_stein_s_factor() -> None:
    # 8 equal counts at sigma 10: spread 0, B = 1 (doubled); 8 counts 0, 100, ..., 700 at
    # sigma 10: B = 5 (100) / 420,000 = 0.0012 (not); too few cells (3): never.
    flat = Measurement((0,), np.full(8, 50.0), 10.0)
    steep = Measurement((1,), np.arange(8) * 100.0, 10.0)
    few = Measurement((2,), np.full(3, 50.0), 10.0)
    cells = [tuple(range(8)), tuple(range(8)), tuple(range(3))]
    assert am.shrunk_columns([flat, steep, few], cells) == [0]
    assert am.shrunk_columns([flat, steep, few], None) == []


LISTED = Domain(
    (
        Categorical("big", tuple(range(60)), listed=tuple(range(30, 60))),
        Binary("smoker", ("no", "yes")),
        Categorical("size", (1, 2, 3, 4)),
    )
)


def flat_data(n: int = 1000, seed: int = 0, domain: Domain = LISTED):
    """``big`` on its first 40 values, 25 records each (its last 30 values listed members of
    a public vocabulary in ``LISTED``; 20 of them hold no record)."""
    rng = np.random.default_rng(seed)
    table = pd.DataFrame(
        {"big": np.repeat(np.arange(40), n // 40), "smoker": rng.choice(["no", "yes"], n),
         "size": rng.choice(4, n) + 1}
    )  # fmt: skip
    return encode(table, domain)


def test_only_a_column_of_listed_members_is_doubled() -> None:
    # The same flat column without listed members: nothing refined, the same ledger as with
    # the rule off (byte-identical records).
    data = flat_data(domain=DOMAIN)
    on = AdaptiveProjection(epsilon=1.0, seed=3, final_sweeps=2).fit(data, WORKLOAD)
    off = AdaptiveProjection(epsilon=1.0, seed=3, final_sweeps=2, refine_shrunk=False).fit(
        data, WORKLOAD
    )
    assert on.parameters["column_refinement"]["spent"] == 0
    assert np.array_equal(on.records.rows, off.records.rows)
    assert am.listed_shrink_cells(DOMAIN, [60, 2, 4]) == [(), (), ()]
    assert am.listed_shrink_cells(LISTED, [60, 2, 4]) == [tuple(range(60)), (), ()]


@pytest.mark.parametrize("option", ["refine_partial", "refine_shrunk"])
def test_the_rules_are_charged_before_each_draw_within_the_budget(option) -> None:
    """At epsilon 1 ``big``'s target does not fit the cap (nothing is refined by default,
    test_no_refinement_changes_nothing); with the partial rule the cap is spent on it, and
    ``big`` (a 60-valued column whose 50 tail values are 0.4% each: James-Stein's factor is
    read on the noisy counts) may be doubled. Either way every refinement is charged after the
    1-way measurements and before the first selection, the refinements spend at most the cap,
    and the run spends the budget and no more."""
    data = wide_data() if option == "refine_partial" else flat_data()
    layout = AttributeLayout.of_data(data)
    model = AdaptiveProjection(epsilon=1.0, seed=3, final_sweeps=2, **{option: True})
    fit = model.fit(data, WORKLOAD)
    kinds = [e.charge.mechanism for e in fit.ledger.entries]
    refined = [e for e in fit.ledger.entries if e.charge.mechanism == ow.REFINE]
    report = fit.parameters["column_refinement"]
    assert fit.parameters[option] is True
    first = kinds.index(ow.REFINE) if refined else None
    if option == "refine_partial":
        assert refined and report["spent"] == pytest.approx(report["cap"])
    else:  # "big" (40 values of 25 records: B = 1 at this noise) measured again at its scale
        assert refined and list(report["columns"]) == ["big"]
        sigma = fit.parameters["one_way"][0]
        assert refined[0].charge.cost.rho == pytest.approx(
            min(0.5 / sigma**2, report["cap"]), rel=1e-6
        )
    if refined:
        # the noisy n and the g 1-way measurements come first; no selection before them
        assert am.MEASURE in kinds[:first] and ow.REFINE not in kinds[first + len(refined) :]
        assert kinds[first : first + len(refined)] == [ow.REFINE] * len(refined)
        assert sum(e.charge.cost.rho for e in refined) == pytest.approx(report["spent"])
    assert report["spent"] <= report["cap"] * (1 + 1e-9)
    assert 0.999 * fit.ledger.budget.limit < fit.ledger.spent <= fit.ledger.budget.limit
    assert layout.g == 3


def test_the_rules_are_off_under_replace_one_and_by_default() -> None:
    assert not AdaptiveProjection(neighbours="replace-one").refine_partial_on()
    assert not AdaptiveProjection(neighbours="replace-one").refine_shrunk_on()
    assert AdaptiveProjection().refine_partial_on() is am.ADD_REMOVE_PARTIAL_REFINE
    assert AdaptiveProjection().refine_shrunk_on() is am.ADD_REMOVE_REFINE_SHRUNK
