"""Small tables (a category's selection threshold above 10% of the records): learned by the
small-table rules, not refused (docs/learn.md, "Tables too small for the budget"): no probe,
bounds grown from the mode (:func:`~dpquery.privacy.quantiles.grown_bounds`), integer codes
from 0, the text rule's zero test at half the records; refused only below half."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data import Categorical, Domain, Numeric
from dpquery.domain_learning import (
    BOUND_FALSE_RATE,
    BOUND_WINDOW,
    DECIMALS_SHARE,
    PROFILE_SHARE,
    SMALL_BOUND_STEP_RATE,
    SMALL_BOUNDS_SHARE,
    SMALL_CODE_STEP_RATE,
    ZERO_POINT_RATE,
    _code_top,
    _range_codes,
    _small_edges,
    check_learnable,
    learn_budget,
    learn_domain,
    size_limits,
    zero_point,
)
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N, REPLACE_ONE
from dpquery.privacy.partition_selection import partition_threshold
from dpquery.privacy.quantiles import (
    BOUND_GROW_WINDOW,
    BOUND_SENSITIVITY,
    bucket_counts,
    bucket_threshold,
    grown_bounds,
    magnitude_buckets,
    private_bounds,
)


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


def pums_like(n: int, seed: int = 0) -> pd.DataFrame:
    """A table of PUMS's shape: ages, a 0/1 code, codes 1..16, skewed incomes with zeros."""
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10, 1, n)).astype(int)
    income[rng.random(n) < 0.12] = 0
    return pd.DataFrame({
        "age": rng.integers(17, 94, n).astype(str),
        "sex": rng.integers(0, 2, n).astype(str),
        "educ": rng.choice(np.arange(1, 17), n, p=np.r_[[0.02] * 8, [0.12] * 7, 0.0]).astype(str),
        "income": income.astype(str),
    })  # fmt: skip


# --- grown bounds: post-processing of the buckets' noisy counts ------------------------------
def test_grown_bounds_grow_from_the_mode_and_stop_at_the_first_failure():
    x = np.array([0, 0, 120, 0, 50, 300, 900, 200, 10, 0, 0, 0, 0, 400])
    # the mode (index 6) grows to 4..7: bucket 3 fails alone and the run 1..3 sums to 120 < 150
    assert grown_bounds(x, 500, 40, 150, 3) == (4, 7)
    # a run of three beyond a failing bucket joins whole: 1..3 sums to 120 >= 100
    assert grown_bounds(x, 500, 40, 100, 3) == (1, 7)
    # the far bucket 13 (a false positive of the noise, say) is never reached from the mode
    assert grown_bounds(x, 500, 40, 1000, 3)[1] == 7
    assert grown_bounds(x, 901, 40, 150, 3) is None  # no bucket reaches the mode's threshold
    assert grown_bounds(np.array([5, 5]), 5, 1, 1, 3) == (0, 1)  # ties: the first maximum


def test_grown_bounds_cross_zero_only_on_the_modes_evidence():
    """``zero`` (the index of the bucket starting at 0): from a mode at or above 0 the lower
    side steps below 0 only by a bucket reaching the mode's threshold, and no run joins
    across 0; the same for the upper side of a mode below 0."""
    x = np.array([0, 0, 50, 900, 300, 0])
    assert grown_bounds(x, 500, 40, 150, 3) == (2, 4)  # without zero: 50 >= 40 steps below
    assert grown_bounds(x, 500, 40, 150, 3, zero=3) == (3, 4)  # 50 < 500: stops at 0
    assert grown_bounds(np.array([0, 0, 600, 900, 300, 0]), 500, 40, 150, 3, zero=3) == (2, 4)
    # a run across 0 (buckets 2..4 sum to 130 >= 100) joins only without zero
    y = np.array([0, 0, 90, 10, 30, 900])
    assert grown_bounds(y, 500, 50, 100, 3) == (2, 5)
    assert grown_bounds(y, 500, 50, 100, 3, zero=3) == (5, 5)  # bucket 4 fails alone
    # a negative mode's upper side: into bucket 2 (starting at 0) only at the mode's threshold
    z = np.array([900, 60, 45])
    assert grown_bounds(z, 500, 40, 150, 3) == (0, 2)
    assert grown_bounds(z, 500, 40, 150, 3, zero=2) == (0, 1)


def test_code_top_regrows_the_upper_end_at_the_stricter_rate():
    """Hand-computed: at rho 0.001 one bucket's noise has variance 1 / rho = 1000 (L2
    sensitivity sqrt(2)); a count between the 5% and the 1% single-step thresholds (and its
    run below the 1% run threshold) joins the loose bounds but not the codes' top."""
    rho = 0.001
    edges = magnitude_buckets(min_exponent=0)
    one = discrete_gaussian_sigma2(rho, BOUND_SENSITIVITY)
    assert float(one) == pytest.approx(1000.0)
    loose = partition_threshold(one, SMALL_BOUND_STEP_RATE)
    strict = partition_threshold(one, SMALL_CODE_STEP_RATE)
    assert SMALL_CODE_STEP_RATE == 0.01 and (loose, strict) == (53, 75)  # ~ z sd + 1/2: 52.5, 74.1
    i0 = int(np.flatnonzero(edges == 0.0)[0])  # [0, 1), then [1, 2), [2, 5), [5, 10)
    noisy = np.zeros(edges.size - 1, dtype=np.int64)
    noisy[i0], noisy[i0 + 1], noisy[i0 + 2] = 500, 480, 60  # 53 <= 60 < 75
    mode = bucket_threshold(rho, edges.size - 1, BOUND_FALSE_RATE)
    run = grown_bounds(noisy, mode, loose, partition_threshold(one * BOUND_WINDOW, 0.05), 3, i0)
    assert run == (i0, i0 + 2)  # the loose bounds: [0, 5)
    assert _code_top((0.0, 5.0), edges, noisy, rho) == (0.0, 2.0)  # codes 0, 1
    noisy[i0 + 2] = 75
    assert _code_top((0.0, 5.0), edges, noisy, rho) == (0.0, 5.0)  # never above the first
    assert _code_top((0.0, 5.0), edges, np.zeros(0, dtype=np.int64), rho) == (0.0, 5.0)


def test_a_small_tables_flag_rarely_gets_codes_beyond_its_values():
    """A 0/1 column of 1,000 records (rho 0.001: a small table): its codes' top steps
    beyond 1 only by a false pass of the 1% single or run test (at most 0.02 a run), and its
    lower bound below 0 only by a bucket reaching the mode's union-bound threshold (at most
    0.01 / 88 a run). Seeded: 400 runs; at most 20 over (mean at most 8, binomial sd 2.8:
    false failure below 1e-4) and at most 2 below 0 (mean at most 0.05: below 1e-4). The
    5% rules with runs across 0 gave 34 and 34 on these seeds."""
    rng = np.random.default_rng(40)
    df = pd.DataFrame({"flag": rng.integers(0, 2, 1000).astype(str)})
    over = below = 0
    for s in range(400):
        domain, report = learn_domain(df, rho=0.001, delta=1e-9, ledger=big_ledger(),
                                      rng=np.random.default_rng(1000 + s),
                                      neighbours=REPLACE_ONE)  # fmt: skip
        assert "small table" in report.columns[0].rule
        codes = [v for v in domain["flag"].values if isinstance(v, int)]
        over += max(codes) > 1
        below += min(codes) < 0
    assert over <= 20 and below <= 2


def test_grown_bounds_rarely_step_beyond_the_data():
    """All 10,000 values in one bucket: each side steps beyond it only when the next bucket's
    noise passes the single test or the next run's does (at most 2 x 0.05 per side, 0.2 in
    all). Seeded: 400 runs, 800 sides, mean at most 80, sd at most 8.5; the bound 115 (4.1
    sd) fails falsely with probability below 1e-4."""
    rho, rng = 0.001, np.random.default_rng(30)
    edges = magnitude_buckets(min_exponent=0)
    sigma2 = 1 / rho  # discrete_gaussian_sigma2(rho, sqrt(2)) = 2 / (2 rho)
    grow = (partition_threshold(sigma2, SMALL_BOUND_STEP_RATE),
            partition_threshold(sigma2 * BOUND_GROW_WINDOW, SMALL_BOUND_STEP_RATE))  # fmt: skip
    beyond = 0
    for _ in range(400):
        lo, hi, _ = private_bounds(np.full(10_000, 30.0), rho=rho, threshold=500, rng=rng,
                                   ledger=big_ledger(), edges=edges, grow=grow)  # fmt: skip
        beyond += (lo < 20.0) + (hi > 50.0)
    assert beyond <= 115


def test_the_grown_bounds_counts_move_by_one_on_neighbours():
    """Grown bounds read the same bucket histogram as the bounds (L1 and L2 sensitivity 1 on
    tables of n and n + 1 records), and nothing else: post-processing."""
    rng = np.random.default_rng(31)
    edges = magnitude_buckets(min_exponent=0)
    for _ in range(200):
        x = rng.integers(0, 10**5, int(rng.integers(1, 80))).astype(float)
        y = np.append(x, float(rng.integers(0, 10**6)))
        assert np.abs(bucket_counts(y, edges) - bucket_counts(x, edges)).sum() == 1


# --- the accounting, against hand-computed values ----------------------------------------------
def test_size_limits_against_hand_computed_thresholds():
    """rho 0.06 over 6 columns (replace-one): rho_c = 0.01 (less 1e-9 of it), sigma^2 =
    1 / rho_c = 100 (sensitivity sqrt(2)); the tail delta 6e-6 / 6 = 1e-6 per column. Summed
    by hand from exp(-k^2 / 200): P(Z >= 48) = 1.007e-6 > 1e-6 >= P(Z >= 49) = 6.11e-7,
    so tau = 49: small below 49 / 0.1 = 490 records, refused below 49 / 0.5 = 98."""
    w = [math.exp(-k * k / 200) for k in range(-400, 401)]
    tail = [sum(w[400 + t :]) / sum(w) for t in (48, 49)]
    assert tail[0] > 1e-6 >= tail[1]
    assert size_limits(0.06, 6e-6, 6, add_remove=False) == (490, 98)
    # under add/remove the columns share 95% of rho (rho_c = 0.0095) at L2 sensitivity 1:
    # sigma^2 = 1 / (2 rho_c) = 52.63; P(Z >= 34) = 1.91e-6 > 1e-6 >= P(Z >= 35) = 9.72e-7,
    # so tau = 35: small below 350, refused below 70 (at sqrt(2), tau would be above 49)
    s2 = 1 / (2 * 0.0095)
    w = [math.exp(-k * k / (2 * s2)) for k in range(-400, 401)]
    tail = [sum(w[400 + t :]) / sum(w) for t in (34, 35)]
    assert tail[0] > 1e-6 >= tail[1]
    assert size_limits(0.06, 6e-6, 6, add_remove=True) == (350, 70)
    assert check_learnable(350, 0.0095 * (1 - 1e-9), 1e-6, sensitivity=1.0) is False
    assert check_learnable(349, 0.0095 * (1 - 1e-9), 1e-6, sensitivity=1.0) is True
    assert check_learnable(490, 0.01 * (1 - 1e-9), 1e-6) is False
    assert check_learnable(489, 0.01 * (1 - 1e-9), 1e-6) is True
    assert check_learnable(98, 0.01 * (1 - 1e-9), 1e-6) is True
    with pytest.raises(DPQueryError, match=r"97 records are too few.*at least 98 records"):
        check_learnable(97, 0.01 * (1 - 1e-9), 1e-6)


def test_a_small_table_charges_each_column_its_shares_and_no_selection():
    """1,000 records, rho 0.004 over 4 columns: rho_c = 0.001, a category's threshold above
    100 records, so small. Every number-like column spends (hand-computed, of rho_c): profile
    0.1, precision 0.1, bounds 0.8 (the rest: the edges are read off the bounds' counts); no
    partition selection (no probe), no quantiles, no tail delta: rho_c in all."""
    ledger = Ledger(Budget.zcdp(0.004))
    domain, report = learn_domain(pums_like(1000), rho=0.004, delta=1e-9, ledger=ledger,
                                  rng=np.random.default_rng(32),
                                  neighbours=REPLACE_ONE)  # fmt: skip
    rho_c = 0.004 * (1 - 1e-9) / 4
    assert PROFILE_SHARE == 0.1 and DECIMALS_SHARE == 0.1 and SMALL_BOUNDS_SHARE == 1.0
    by_col: dict[str, dict[str, float]] = {}
    for e in ledger.entries:
        col, what = e.charge.mechanism.split(": ", 1)
        assert isinstance(e.charge.cost, ZCDP)  # no exponential mechanism
        by_col.setdefault(col, {})[what.split(" (")[0]] = e.charge.cost.rho
    assert set(by_col) == {"age", "sex", "educ", "income"}
    for spent in by_col.values():
        assert set(spent) == {"profile", "precision", "bounds"}
        assert spent["profile"] == pytest.approx(0.1 * rho_c)
        assert spent["precision"] == pytest.approx(0.1 * rho_c)
        assert spent["bounds"] == pytest.approx(0.8 * rho_c)
    assert isinstance(domain["age"], Numeric) and isinstance(domain["income"], Numeric)
    assert isinstance(domain["sex"], Categorical) and isinstance(domain["educ"], Categorical)
    assert all(c.delta_tail == 0.0 for c in report.columns)
    assert all(c.rho == pytest.approx(rho_c) for c in report.columns)
    assert report.rho == pytest.approx(ledger.spent, rel=1e-9) and ledger.spent <= 0.004


def test_small_edges_split_heavy_buckets_and_merge_light_ones():
    """Post-processing of the bounds' noisy counts: buckets [0, 1), [1, 2), [2, 5), [5, 10),
    [10, 20), [20, 50), [50, 100) with noisy counts 50, -3, 10, 20, 100, 420, 400 (total of the
    clipped counts 1,000), 10 bins: a target of 100 a bin. [20, 50) splits in 4 (widths
    7.5, rounded to integers), [50, 100) in 4, [10, 20) stays whole, the light buckets below
    merge into [0, 10) (their 80 never reach 100), and the 0 gets [0, 1)."""
    buckets = np.array([0, 1, 2, 5, 10, 20, 50, 100], dtype=float)
    noisy = np.array([50, -3, 10, 20, 100, 420, 400])
    edges = _small_edges((0.0, 100.0), buckets, noisy, 0, 10)
    assert edges == [0, 1, 10, 20, 28, 35, 42, 50, 62, 75, 88, 100]
    # a decimal column rounds its edges to its precision; bounds cut the end buckets
    edges = _small_edges((0.0, 7.5), buckets, noisy, 2, 4)
    assert edges[0] == 0.0 and edges[1] == 0.01 and edges[-1] == 7.5
    assert all(round(e, 2) == e for e in edges) and edges == sorted(set(edges))
    # no counts at all: equal-width bins
    assert _small_edges((0.0, 8.0), buckets, np.zeros(0), 0, 4) == [0, 1, 2, 4, 6, 8]


def test_the_zero_bucket_decides_a_bin_or_a_code_of_its_own():
    """:func:`zero_point`: the bucket [0, 1)'s noisy count against the threshold an empty
    bucket's noise reaches with probability :data:`ZERO_POINT_RATE` (20%). At rho = 0.000576
    and L2 1 (about PUMS's bounds under add/remove) sigma^2 = 1 / (2 rho) = 868.06, sd 29.46:
    P(Z >= 26) = 0.1934 <= 0.2 < P(Z >= 25) = 0.2028 (the discrete Gaussian's sums by
    hand), so 26 passes and 25 does not."""
    buckets = np.array([0, 1, 2, 5, 10, 20, 50, 100], dtype=float)
    rho = 0.000576
    assert ZERO_POINT_RATE == 0.2
    assert partition_threshold(discrete_gaussian_sigma2(rho, 1.0), ZERO_POINT_RATE) == 26
    noisy = np.array([26, -3, 10, 20, 100, 420, 400])
    assert zero_point(buckets, noisy, rho, 1.0)
    assert not zero_point(buckets, noisy - np.eye(7, dtype=int)[0], rho, 1.0)
    assert not zero_point(buckets[3:], noisy[3:], rho, 1.0)  # no bucket starts at 0
    assert not zero_point(buckets, np.zeros(0), rho, 1.0)  # no bounds drawn
    # edges, 10 bins: the 0's bin only when it holds records, beside the 10 bins of the rest
    # (their target 920 / 10 = 92: [20, 50) in 5 parts) and not merged with them; without it
    # (clipped total 1,000, a target of 100) the 80 of [0, 1) and the 25 of [1, 2) reach the
    # target together and cut a bin [0, 2) off, and [20, 50) is cut in 4
    noisy = np.array([80, 25, 10, 20, 110, 420, 335])
    edges = _small_edges((0.0, 100.0), buckets, noisy, 0, 10, zero=True)
    assert edges[:6] == [0, 1, 10, 20, 26, 32]
    edges = _small_edges((0.0, 100.0), buckets, noisy, 0, 10, zero=False)
    assert edges[:6] == [0, 2, 10, 20, 28, 35]
    # codes from 0 only when the 0 holds records, else from 1
    assert _range_codes("c", (5.0, 20.0), False, from_zero=True)[0].values[0] == 0
    assert _range_codes("c", (5.0, 20.0), False, from_zero=True, zero=False)[0].values[:2] == (
        1, 2)  # fmt: skip
    assert _range_codes("c", (0.0, 2.0), False, from_zero=True, zero=False)[0].values[0] == 0


def test_a_small_tables_positive_column_keeps_its_lower_bound():
    """Ages 17 to 93 in a small table: the bucket [0, 1) holds none, so the lower bound is
    not taken to 0 (:data:`BOUND_ZERO_RATIO`) and 0 gets no bin; incomes with 12% zeros do."""
    for seed in (33, 44, 45):
        domain, _ = learn_domain(pums_like(1000, seed=seed), rho=0.004, delta=1e-9,
                                 ledger=big_ledger(), rng=np.random.default_rng(seed),
                                 neighbours=ADD_REMOVE)  # fmt: skip
        age, income = domain["age"], domain["income"]
        assert isinstance(age, Numeric) and isinstance(income, Numeric)
        assert age.edges[0] >= 10 and income.edges[:2] == (0.0, 1.0)


def test_a_small_table_reads_codes_from_zero():
    """educ's codes 1..16 (16 never held): the grown bounds find [5, 20) or wider; its codes
    are then every integer from 1 (no record holds 0: its bucket's noisy count is below a
    step's threshold, :func:`zero_point`) to the upper bound, so the rare codes 1..4 are kept;
    sex's 0, held by half the records, is a code."""
    domain, report = learn_domain(pums_like(1000), rho=0.004, delta=1e-9,
                                  ledger=big_ledger(), rng=np.random.default_rng(33),
                                  neighbours=REPLACE_ONE)  # fmt: skip
    educ = domain["educ"]
    assert isinstance(educ, Categorical) and set(range(1, 16)) <= set(educ.values)
    assert 0 not in educ.values
    assert isinstance(domain["sex"], Categorical) and {0, 1} <= set(domain["sex"].values)
    rules = {c.name: c.rule for c in report.columns}
    assert "small table" in rules["educ"] and "small table" in rules["age"]


# --- neighbours: tables of n and n + 1 records (add/remove) ------------------------------------
def test_small_tables_of_n_and_n_plus_1_records_charge_alike_and_report_no_n():
    """The small-table decision reads the noisy n: the same seed on neighbouring tables of
    1,000 and 1,001 records draws noisy counts one apart, takes the same small-table path
    and charges the same mechanisms at the same rho; no report holds the exact n."""
    big = pums_like(1001, seed=34)
    small = big.iloc[:1000].reset_index(drop=True)
    b = learn_budget(0.5, 1e-9)
    seen = []
    for df in (small, big):
        ledger = Ledger(b.ledger_budget)
        _, report = learn_domain(df, rho=b.rho, delta=b.delta_tail, ledger=ledger,
                                 rng=np.random.default_rng(35), neighbours=ADD_REMOVE)  # fmt: skip
        assert ledger.entries[0].charge.mechanism == NOISY_N
        assert all("small table" in c.rule for c in report.columns)
        assert "1,000" not in report.describe() and "1,001" not in report.describe()
        seen.append((report.n, [(e.charge.mechanism, e.charge.cost, e.charge.count)
                                for e in ledger.entries]))  # fmt: skip
    assert seen[1][0] - seen[0][0] == 1 and seen[0][0] != 1000
    assert seen[0][1] == seen[1][1]


def test_the_cli_releases_a_small_table_and_the_plan_states_the_limits(tmp_path, capsys):
    path = tmp_path / "T.csv"
    pums_like(1000, seed=36).to_csv(path, index=False)
    out = tmp_path / "s.csv"
    assert main(["synth", "--data", str(path), "--epsilon", "1", "--seed", "0",
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["age", "sex", "educ", "income"] and len(synthetic) > 500
    capsys.readouterr()
    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1"]) == 0
    plan = capsys.readouterr().out
    # add/remove (the default): the selections' L2 sensitivity is 1, their threshold
    # 1/sqrt(2) of replace-one's (2,530 and 506 at sqrt(2))
    assert "6 columns: below 1,790, refused below 358" in plan and "grown from the mode" in plan
    # the small table's loan from the release: 40% of its 60% of rho = 0.0144076 (by hand)
    assert "borrow 40% of the release's rho besides (rho=0.00345782)" in plan
    assert main(["privacy", "synth", "--n", "1000", "--epsilon", "1", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["small_table_borrow_rho"] == pytest.approx(0.4 * 0.6 * 0.0144076, rel=1e-5)


# --- a column given with its public categories (a partial codebook) ----------------------------
def test_a_column_given_with_its_categories_costs_nothing_and_the_rest_share_rho():
    """A mostly-missing code column whose codes no selection can release at this budget,
    declared ``categorical:1|2|...|6``: its domain is those codes, the catch-all and a
    missing category, with no charge; the other column takes the whole rho."""
    rng = np.random.default_rng(37)
    code = np.full(2000, None, dtype=object)
    code[:40] = rng.integers(1, 7, 40).astype(str)
    df = pd.DataFrame({"code": code, "x": rng.integers(0, 100, 2000).astype(str)})
    ledger = Ledger(Budget.zcdp(0.05))
    domain, report = learn_domain(df, rho=0.05, delta=1e-9, ledger=ledger,
                                  rng=np.random.default_rng(38), neighbours=REPLACE_ONE,
                                  types={"code": "categorical:1|2|3|4|5|6"})  # fmt: skip
    attr = domain["code"]
    assert isinstance(attr, Categorical) and attr.values[:6] == (1, 2, 3, 4, 5, 6)
    assert attr.other in attr.values and attr.missing in attr.values
    assert all(not e.charge.mechanism.startswith("code") for e in ledger.entries)
    given, learned = report.columns
    assert given.rho == 0.0 and given.delta_tail == 0.0 and given.declared
    assert learned.rho == pytest.approx(0.05 * (1 - 1e-9))  # the whole rho (one column learned)
    with pytest.raises(DPQueryError, match=r"distinct and non-empty"):
        learn_domain(df, rho=0.05, delta=1e-9, ledger=big_ledger(), rng=np.random.default_rng(0),
                     types={"code": "categorical:1||2"})  # fmt: skip


def test_types_on_the_command_line_take_public_categories():
    from dpquery.cli.domain import parse_types

    assert parse_types(["DVET=categorical:1|2|3,age=numeric"]) == {
        "DVET": "categorical:1|2|3", "age": "numeric"}  # fmt: skip
    with pytest.raises(DPQueryError, match=r"--types x: kind must be .*categorical:V1\|V2"):
        parse_types(["x=text"])
    # a date format's comma stays in it; an entry after it still starts at its own comma
    types = parse_types(["shipped=date:%b %d, %Y,n=numeric", "a=numeric,,b=categorical"])
    assert types == {"shipped": "date:%b %d, %Y", "n": "numeric", "a": "numeric",
                     "b": "categorical"}  # fmt: skip
    with pytest.raises(DPQueryError, match=r"--types entry 'x' is not COLUMN=KIND"):
        parse_types(["x"])


# --- the decoding weights' share, unusable in a small table, goes to the release ------------
def small_budget_and_domain(n: int = 1000):
    from dpquery.pipeline.learning import run_budget

    budget = run_budget({"epsilon": 1.0, "delta": 1e-9}, n, 0.4)
    domain, _ = learn_domain(pums_like(n), rho=0.75 * budget.learn_rho, delta=1e-10,
                             ledger=big_ledger(), rng=np.random.default_rng(41),
                             neighbours=REPLACE_ONE)  # fmt: skip
    return budget, domain


def test_a_small_table_releases_with_the_weights_share_by_hand():
    """epsilon 1, delta 1e-9: rho = zcdp_rho_for(1, 5e-10) = 0.0144076 (docs/learn.md), the
    learning 40% of it (0.0057630), the weights 25% of that (0.0014408), the release 60% of
    rho less a 1e-9 slack (0.0086445) plus the weights' 0.0014408 = 0.0100853 when no
    numeric column of 1,000 records gets 2 sub-bins (a bin of 1/16 of the records, 62, below
    2 noise sd); a public 100,000 records get them and the release keeps 60%."""
    from dpquery.domain_learning import SECOND_SHARE, WITHIN_SHARE, within_plan
    from dpquery.pipeline.learning import release_rho

    budget, domain = small_budget_and_domain()
    assert budget.rho == pytest.approx(0.0144076, abs=1e-7)
    within = (WITHIN_SHARE - SECOND_SHARE) * budget.learn_rho  # the second selection's pool
    assert within == pytest.approx(0.0008645, abs=1e-7)  # comes out of the weights' 25%
    assert not any(within_plan(domain, 1000, within).values())
    # with the pool's 0.0005763, unspent in a small table (learning.learn adds it)
    assert release_rho(budget, domain, 1000) == pytest.approx(0.0100853 - 0.0005763, abs=1e-7)
    assert release_rho(budget, domain, 1000) == budget.release_rho + within
    assert budget.learn_rho - within + release_rho(budget, domain, 1000) <= budget.rho
    # n and n + 1 records: the same plan, the same release budget
    assert release_rho(budget, domain, 1001) == release_rho(budget, domain, 1000)
    assert any(within_plan(domain, 100_000, within).values())
    assert release_rho(budget, domain, 100_000) == budget.release_rho


def test_a_small_tables_release_is_the_same_with_and_without_the_weights(tmp_path, capsys):
    """The weights draw nothing at 1,000 records, so the release's budget, and its bytes, do
    not depend on ``--no-within``; the run spends its whole epsilon to within 1e-6."""
    import json

    data = tmp_path / "t.csv"
    pums_like(1000).to_csv(data, index=False)
    outs = []
    for extra in ([], ["--no-within"]):
        out = tmp_path / f"s{len(extra)}.csv"
        report = tmp_path / f"r{len(extra)}.json"
        main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "5", "--out", str(out),
              "--report", str(report), *extra])  # fmt: skip
        console = capsys.readouterr().out
        assert "the release spent the rest, rho=0.01009 (70%)" in console
        assert (
            "the decoding weights' part and the second selection's unused pool, "
            "rho=0.00144, went to the release"
        ) in console
        outs.append(out.read_bytes())
        run = json.loads(report.read_text())["release"]
        assert 1 - 1e-6 <= run["privacy"]["spent"] <= 1.0
        budget = run["domain"]["budget"]
        weights = 0.25 * budget["learn_rho"]
        assert run["domain"]["release_rho"] == pytest.approx(budget["release_rho"] + weights)
    assert outs[0] == outs[1]


def test_a_small_tables_numeric_columns_get_half_the_bins():
    """At a small table's noise a narrow bin's count is mostly noise: its numeric columns are
    cut with half the bins asked (8 of the default 16), the same rule as before otherwise."""
    from dpquery.domain_learning import DEFAULT_BINS, small_bins

    assert small_bins(DEFAULT_BINS) == 8 and small_bins(10) == 5 and small_bins(1) == 1
    domain, _ = learn_domain(pums_like(1000), rho=0.004, delta=1e-9, ledger=big_ledger(),
                             rng=np.random.default_rng(33), neighbours=REPLACE_ONE)  # fmt: skip
    age = domain["age"]
    assert isinstance(age, Numeric)
    # the bounds' buckets split and merged for a target of 1/8 of the noisy mass each; the
    # bin [0, 1) of a lower bound at 0 and the partial end buckets may add a few
    assert 4 <= age.n_bins <= 8 + 3


def test_a_floats_residue_is_not_said_to_have_gone_to_the_release():
    from dpquery.cli.summary import learned_lines

    budget = {"learn_rho": 0.005763, "release_rho": 0.008645, "rho": 0.01441, "share": 0.4}
    learned = {"budget": budget, "kinds": {"categorical": 8, "numeric": 6},
               "spent_rho": 0.005646}  # fmt: skip
    privacy = {"delta_split": {"partition_selection": 4.64e-10, "ledger": 5e-10}}
    for moved, said in ((5.76e-13, False), (0.00144, True)):
        lines = learned_lines(learned | {"release_rho": 0.008645 + moved}, privacy)
        assert any("went to the release" in line for line in lines) is said


def test_a_loan_from_the_release_is_said():
    """A small table's second selection spent rho borrowed from the release: the console
    says how much (the release's rho below its planned share), and nothing when none was."""
    from dpquery.cli.summary import learned_lines

    budget = {"learn_rho": 0.005763, "release_rho": 0.008645, "rho": 0.01441, "share": 0.4}
    learned = {"budget": budget, "kinds": {"categorical": 13, "numeric": 2},
               "spent_rho": 0.009221}  # fmt: skip
    privacy = {"delta_split": {"partition_selection": 5e-10, "ledger": 5e-10}}
    lines = learned_lines(learned | {"release_rho": 0.005187}, privacy)
    assert any("borrowed: rho=0.00346 of the release's share" in line for line in lines)
    lines = learned_lines(learned | {"release_rho": 0.008645}, privacy)
    assert not any("borrowed" in line for line in lines)


def test_a_small_table_is_said_to_be_small_first():
    """A small table's notes open with what its size means: the records, the columns learned
    (a public column, rho 0, is not counted) and the largest selection threshold; a table
    that is not small gets no such note."""
    from dpquery.domain_learning import ColumnReport, LearnReport
    from dpquery.pipeline.learning import column_notes, small_note

    cols = (
        ColumnReport("a", "categorical", False, "text", 0.001, 1e-10, "", {"threshold": 282}),
        ColumnReport("b", "numeric", False, "quantity", 0.001, 0.0, "", {"bounds": (0, 5)}),
        ColumnReport("c", "categorical", True, "public", 0.0, 0.0, ""),
    )
    report = LearnReport(n=964, rho=0.002, delta_tail=1e-10, columns=cols, small=True)
    note = small_note(report)
    assert note.startswith("about 964 records are few for 2 learned columns")
    assert "reaches about 282 records" in note and "--types" in note
    domain = Domain([Categorical("a", ("x", "<other>"), other="<other>"),
                     Numeric("b", (0.0, 5.0)), Categorical("c", ("p", "q"))])  # fmt: skip
    assert column_notes(domain, report)[0] == note
    assert not column_notes(domain, replace(report, small=False))
