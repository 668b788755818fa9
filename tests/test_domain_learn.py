"""The domain learned privately from a raw table: its mechanisms' accounting (hand-computed),
their sensitivities on neighbouring tables (replace one record), the learned domain on a real
raw table, declared types, and ``dpquery domain learn``."""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data import Categorical, Domain, Numeric, decode, encode
from dpquery.data.records import Records
from dpquery.domain_learning import (
    DEFAULT_DOMAIN_SHARE,
    OTHER_LABEL,
    learn_budget,
    learn_domain,
)
from dpquery.errors import DomainError, DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.conversions import zcdp_rho_for, zcdp_to_epsilon
from dpquery.privacy.partition_selection import (
    discrete_gaussian_tail,
    partition_delta,
    partition_threshold,
    select_partitions,
)
from dpquery.privacy.quantiles import (
    bucket_counts,
    magnitude_buckets,
    private_quantiles,
    quantile_epsilon,
    quantile_scores,
    signed_log_grid,
)

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


# --- accounting, against hand-computed values -------------------------------------------------
def test_quantile_epsilon_and_its_charge():
    # 8 draws in rho = 0.01: 8 eps^2 / 8 = 0.01, eps = 0.1 (Cesar-Rogers epsilon^2/8 each).
    eps = quantile_epsilon(0.01, 8)
    assert eps == pytest.approx(0.1, rel=1e-12) and 8 * eps * eps / 8 <= 0.01
    ledger = Ledger(Budget.zcdp(0.01))
    private_quantiles(np.arange(100.0), signed_log_grid(decimals=0), [i / 9 for i in range(1, 9)],
                      epsilon=eps, rng=np.random.default_rng(0), ledger=ledger)  # fmt: skip
    assert ledger.spent == pytest.approx(0.01, rel=1e-12) and ledger.spent <= 0.01
    (entry,) = ledger.entries
    assert entry.charge.count == 8 and entry.charge.cost.bounded_range


def test_partition_selection_noise_tail_and_delta():
    # L2 sensitivity sqrt(2): sigma^2 = 2 / (2 rho) = 2 at rho = 0.5 (CKS Theorem 4).
    ledger = Ledger(Budget.zcdp(0.5))
    sel = select_partitions({"a": 100}, rho=0.5, delta_tail=1e-6,
                            rng=np.random.default_rng(0), ledger=ledger)  # fmt: skip
    assert 2 <= sel.sigma2 < 2 + 1e-5 and ledger.spent == 0.5
    # P(Z >= 1) at sigma^2 = 1: sum_{z>=1} e^{-z^2/2} / sum_z e^{-z^2/2}
    # = 0.753314 / (1 + 2 * 0.753314) = 0.300529 (by hand: 0.606531 + 0.135335 + 0.011109
    # + 0.000335 + 0.000004).
    assert discrete_gaussian_tail(1, 1.0) == pytest.approx(0.300529, abs=2e-6)
    tau = partition_threshold(Fraction(2), 1e-6)
    assert discrete_gaussian_tail(tau, 2.0) <= 1e-6 < discrete_gaussian_tail(tau - 1, 2.0)
    assert partition_delta(1e-10, 1.0) == pytest.approx((1 + math.e) * 1e-10, rel=1e-12)


def test_learn_budget_split():
    b = learn_budget(1.0, 1e-6)
    assert b.rho == zcdp_rho_for(1.0, 5e-7)
    assert partition_delta(b.delta_tail, 1.0) <= 5e-7
    assert b.delta_tail == pytest.approx(5e-7 / (1 + math.e), rel=1e-12)
    assert b.ledger_budget == Budget.approx(1.0, 5e-7)
    assert 0 < DEFAULT_DOMAIN_SHARE < 1


def test_learning_charges_before_drawing_and_within_rho():
    df = pd.DataFrame({"x": [str(i % 50) for i in range(400)], "c": ["a", "b"] * 200})
    ledger = Ledger(Budget.zcdp(0.2))
    _, report = learn_domain(df, rho=0.2, delta=1e-6, rng=np.random.default_rng(1),
                             ledger=ledger)  # fmt: skip
    assert ledger.spent <= 0.2 and report.rho == pytest.approx(ledger.spent, rel=1e-9)
    assert all(e.charge.mechanism.split(":")[0] in ("x", "c") for e in ledger.entries)
    small = Ledger(Budget.zcdp(0.1))  # too small a budget fails before any draw
    with pytest.raises(Exception, match="would spend"):
        learn_domain(df, rho=0.2, delta=1e-6, rng=np.random.default_rng(1), ledger=small)
    assert small.entries == ()


# --- neighbouring tables: replace one record ---------------------------------------------------
def test_quantile_score_sensitivity_is_one_under_replace_one():
    rng = np.random.default_rng(2)
    cands = signed_log_grid(decimals=1)
    worst = 0.0
    for _ in range(200):
        x = rng.choice([0.0, 1.0, 2.5, 7.0, 40.0, 1e4], size=30) * rng.integers(1, 3, 30)
        y = x.copy()
        y[rng.integers(30)] = rng.choice([0.0, 3.0, 1e5, -2.0])
        for alpha in (0.005, 0.25, 0.5, 0.9):
            d = np.abs(quantile_scores(x, cands, alpha) - quantile_scores(y, cands, alpha))
            worst = max(worst, float(d.max()))
        # a record turning missing (absent from the values) moves a score by at most 1 too
        z = np.delete(x, 0)
        d = np.abs(quantile_scores(x, cands, 0.3) - quantile_scores(z, cands, 0.3))
        assert d.max() <= 1.0 + 1e-12
    assert worst == pytest.approx(1.0)  # attained: a value crossing a candidate


def test_bucket_counts_move_by_sqrt2_at_most():
    edges = magnitude_buckets()
    rng = np.random.default_rng(3)
    for _ in range(100):
        x = rng.normal(0, 1e4, size=50)
        y = x.copy()
        y[rng.integers(50)] = rng.normal(0, 1e6)
        diff = bucket_counts(x, edges) - bucket_counts(y, edges)
        assert np.abs(diff).sum() <= 2 and np.sqrt((diff**2).sum()) <= math.sqrt(2) + 1e-12


def test_partition_selection_release_probabilities_on_neighbours():
    """D holds a five times and b four times; D' has one a replaced by a new key c. Each
    key's release probability is exact (P(count + Z >= tau)); the empirical frequencies over
    2,000 seeded runs must lie within 5 binomial standard errors of them (a false failure
    has probability below 1e-5 per check), and the exact ones must satisfy
    P[E | D] <= e^eps P[E | D'] + delta both ways, eps and delta those the module proves."""
    rho, tail = 0.5, 1e-3
    d, d2 = {"a": 5, "b": 4}, {"a": 4, "b": 4, "c": 1}
    ledger, rng, runs = big_ledger(), np.random.default_rng(4), 2000
    hits = {"D": {"a": 0, "c": 0}, "D'": {"a": 0, "c": 0}}
    sel = None
    for _ in range(runs):
        for label, counts in (("D", d), ("D'", d2)):
            sel = select_partitions(counts, rho=rho, delta_tail=tail, rng=rng, ledger=ledger)
            for key in ("a", "c"):
                hits[label][key] += key in sel.released
    assert sel is not None
    tau, s2 = sel.tau, float(sel.sigma2)
    exact = {
        "D": {"a": discrete_gaussian_tail(tau - 5, s2), "c": 0.0},
        "D'": {"a": discrete_gaussian_tail(tau - 4, s2), "c": discrete_gaussian_tail(tau - 1, s2)},
    }
    for label in exact:
        for key, p in exact[label].items():
            se = math.sqrt(max(p * (1 - p), 1e-12) / runs)
            assert abs(hits[label][key] / runs - p) <= 5 * se + 1e-9, (label, key)
    delta_conv = 1e-2
    eps = zcdp_to_epsilon(rho, delta_conv)
    delta = delta_conv + partition_delta(tail, eps)
    for key in ("a", "c"):
        p, q = exact["D"][key], exact["D'"][key]
        assert p <= math.exp(eps) * q + delta and q <= math.exp(eps) * p + delta
        assert 1 - p <= math.exp(eps) * (1 - q) + delta and 1 - q <= math.exp(eps) * (1 - p) + delta


def test_released_keys_never_depend_on_row_order():
    df = pd.DataFrame({"c": ["x"] * 300 + ["y"] * 200 + ["rare"]})
    out = []
    for frame in (df, df.iloc[::-1].reset_index(drop=True)):
        dom, _ = learn_domain(frame, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                              ledger=big_ledger(), types={"c": "categorical"})  # fmt: skip
        out.append(dom)
    assert out[0] == out[1]
    attr = out[0]["c"]
    assert isinstance(attr, Categorical) and "rare" not in attr.values
    # x and y are single lowercase letters: the other 24 come by rule (a public vocabulary)
    letters = tuple("abcdefghijklmnopqrstuvwxyz")
    assert attr.values == (*letters, OTHER_LABEL) and attr.other == OTHER_LABEL
    assert attr.by_rule == tuple(v for v in letters if v not in "xy")


# --- what is learned --------------------------------------------------------------------------
def test_precision_types_and_missing():
    rng = np.random.default_rng(6)
    n = 4000
    wage = [f"{x:.2f}" for x in rng.uniform(300, 400, n)]
    df = pd.DataFrame({
        "wage": wage,
        "kids": [str(k) for k in rng.integers(0, 4, n)],
        "score": [str(int(v)) for v in rng.integers(0, 1000, n)],
        "city": rng.choice(["Oslo", "Lima", None], n, p=[0.5, 0.3, 0.2]),
    })  # fmt: skip
    dom, report = learn_domain(df, rho=2.0, delta=1e-9, rng=np.random.default_rng(7),
                               ledger=big_ledger(), types={"kids": "numeric"})  # fmt: skip
    wage_attr, kids, score, city = (dom[c] for c in ("wage", "kids", "score", "city"))
    assert isinstance(wage_attr, Numeric) and wage_attr.decimals == 2 and not wage_attr.integer
    assert isinstance(kids, Numeric) and kids.integer  # declared: numeric despite 4 values
    assert isinstance(score, Numeric) and score.integer
    assert isinstance(city, Categorical) and city.missing is not None
    assert set(city.present_values) == {"Oslo", "Lima", OTHER_LABEL}
    kinds = {c.name: (c.kind, c.declared) for c in report.columns}
    assert kinds["kids"] == ("numeric", True) and kinds["city"] == ("categorical", False)
    json.dumps(report.to_dict())  # publishable as JSON
    assert encode(df, dom).n == n


def test_learned_wage_decodes_with_cents():
    attr = Numeric("wage", (300.0, 350.0, 400.0), decimals=2, out_of_range="clip")
    dom = Domain((attr,))
    bits = np.array([[1, 0], [0, 1]] * 50, dtype=np.uint8)
    out, _ = decode(Records(bits, domain=dom), dom, seed=0)
    cents = np.round(out["wage"].to_numpy() * 100) % 100
    assert (cents != 0).any() and out["wage"].dtype == np.float64


def test_adult_raw_table_learned_domain_encodes_and_covers_the_bulk():
    root = Path(os.environ.get("DPQUERY_DATA_DIR", "")) / "adult" / "adult.data.gz"
    if not root.is_file():
        pytest.skip(f"raw Adult not found at {root} (set DPQUERY_DATA_DIR)")
    df = pd.read_csv(root, header=None, names=ADULT_COLUMNS, dtype=str, na_values=["?"],
                     skipinitialspace=True)  # fmt: skip
    b = learn_budget(1.0, 1e-9)
    dom, report = learn_domain(df, rho=b.rho, delta=b.delta_tail, ledger=Ledger(b.ledger_budget),
                               rng=np.random.default_rng(0))  # fmt: skip
    assert not dom.non_private
    data = encode(df, dom)
    assert data.n == len(df)
    for attr in dom.attributes:
        if isinstance(attr, Numeric):
            x = pd.to_numeric(df[attr.name]).to_numpy()
            inside = ((x >= attr.edges[0]) & (x <= attr.edges[-1])).mean()
            assert inside >= 0.9, (attr.name, attr.edges, inside)
    assert {c.name: c.kind for c in report.columns}["sex"] == "categorical"
    assert isinstance(dom["age"], Numeric)


def test_bad_input_is_named():
    df = pd.DataFrame({"a": ["1", "2"]})
    kw = {"rho": 1.0, "delta": 1e-6, "rng": np.random.default_rng(0), "ledger": big_ledger()}
    with pytest.raises(DPQueryError, match="'b'"):
        learn_domain(df, types={"b": "numeric"}, **kw)
    with pytest.raises(DPQueryError, match="'number'"):
        learn_domain(df, types={"a": "number"}, **kw)
    with pytest.raises(DPQueryError, match="delta"):
        learn_domain(df, **{**kw, "delta": 0.0})
    with pytest.raises(DPQueryError, match="0 rows"):
        learn_domain(df.iloc[:0], **kw)


# --- the domain's catch-all and precision ----------------------------------------------------
def test_catch_all_and_decimals_in_the_domain():
    cat = Categorical("c", ("x", "<other>"), other="<other>")
    num = Numeric("w", (0.0, 10.0), decimals=2)
    dom = Domain((cat, num))
    assert Domain.from_dict(json.loads(json.dumps(dom.to_dict()))) == dom
    data = encode(pd.DataFrame({"c": ["x", "never seen", None], "w": [1.25, 2, 3]}), dom)
    assert data.n == 3
    with pytest.raises(DomainError, match="decimals=0 cannot write"):
        Numeric("w", (0.0, 0.5), decimals=0)
    with pytest.raises(DomainError, match="not one of its values"):
        Categorical("c", ("x",), other="<other>")
    assert Domain.from_codebook({"w": {"min": 0, "max": 10, "bins": 2, "decimals": 2}})["w"] \
        == Numeric("w", (0.0, 5.0, 10.0), decimals=2)  # fmt: skip


# --- the command line -------------------------------------------------------------------------
def _table(path: Path) -> Path:
    rng = np.random.default_rng(8)
    pd.DataFrame({
        "age": rng.integers(18, 80, 600).astype(str),
        "job": rng.choice(["a", "b", "c"], 600),
    }).to_csv(path, index=False)  # fmt: skip
    return path


def test_cli_writes_the_domain_and_report(tmp_path, capsys):
    data = _table(tmp_path / "t.csv")
    out, rep = tmp_path / "d.json", tmp_path / "r.json"
    code = main(["domain", "learn", "--data", str(data), "--epsilon", "3", "--seed", "1",
                 "--types", "age=numeric", "--out", str(out), "--report", str(rep)])  # fmt: skip
    assert code == 0
    dom = Domain.load(out)
    assert isinstance(dom["age"], Numeric) and isinstance(dom["job"], Categorical)
    summary = json.loads(rep.read_text())
    assert summary["guarantee"]["epsilon"] <= 3 and summary["guarantee"]["delta"] <= 1 / 600**2
    assert "cost:" in capsys.readouterr().out
    encode(pd.read_csv(data, dtype=str), dom)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--types", "age=num"], "kind must be"),
        (["--types", "pay=numeric"], "--types names the column 'pay'"),
        (["--epsilon", "-1"], "epsilon"),
    ],
)
def test_cli_writes_nothing_on_error(tmp_path, capsys, extra, message):
    data = _table(tmp_path / "t.csv")
    out = tmp_path / "d.json"
    args = ["domain", "learn", "--data", str(data), "--epsilon", "1", "--out", str(out)]
    assert main(args + extra) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_cli_refuses_an_existing_output(tmp_path, capsys):
    data = _table(tmp_path / "t.csv")
    out = tmp_path / "d.json"
    out.write_text("keep")
    assert main(["domain", "learn", "--data", str(data), "--epsilon", "1", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err and out.read_text() == "keep"


# --- bounds at a stated false rate, atoms, codes by range, tables too small ------------------
def test_bucket_threshold_bounds_the_false_rate_over_all_buckets():
    from dpquery.privacy.integer_mechanisms import discrete_gaussian_sigma2
    from dpquery.privacy.quantiles import BOUND_SENSITIVITY, bucket_threshold

    rho, k, rate = 1e-3, 40, 0.01
    tau = bucket_threshold(rho, k, rate)
    s2 = discrete_gaussian_sigma2(rho, BOUND_SENSITIVITY)
    assert discrete_gaussian_tail(tau, s2) <= rate / k < discrete_gaussian_tail(tau - 1, s2)
    # empirically: 2,000 seeded runs of k empty buckets; the rate of any false bucket is at
    # most 0.01 (union bound); a false failure needs 5 binomial standard errors above it
    # (probability below 1e-6)
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(2000):
        noisy = discrete_gaussian_mechanism_free(np.zeros(k, dtype=np.int64), s2, rng)
        hits += bool((noisy >= tau).any())
    assert hits / 2000 <= rate + 5 * math.sqrt(rate * (1 - rate) / 2000)


def discrete_gaussian_mechanism_free(counts, sigma2, rng):
    from dpquery.privacy.discrete import sample_discrete_gaussian

    return counts + sample_discrete_gaussian(sigma2, counts.size, rng)


def test_private_bounds_runs_keep_a_thin_tail_and_charge_first():
    from dpquery.privacy.quantiles import private_bounds

    edges = np.array([0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0])
    # 1,000 values in [1, 2); a tail of 3 x 40 over [10, 100), no bucket of it occupied alone
    x = np.concatenate([np.full(1000, 1.5), np.full(40, 15.0), np.full(40, 30.0),
                        np.full(40, 70.0)])  # fmt: skip
    kw = {"rho": 1e6, "threshold": 100, "rng": np.random.default_rng(0), "edges": edges}
    lo, hi, _ = private_bounds(x, ledger=big_ledger(), **kw)
    assert (lo, hi) == (1.0, 2.0)  # noise ~0 at rho 1e6: the tail is clipped without runs
    lo, hi, _ = private_bounds(x, ledger=big_ledger(), window=(3, 100), **kw)
    assert (lo, hi) == (1.0, 100.0)
    # a run passing by an occupied bucket alone extends nothing
    lo, hi, _ = private_bounds(np.full(1000, 1.5), ledger=big_ledger(), window=(3, 100), **kw)
    assert (lo, hi) == (1.0, 2.0)
    small = Ledger(Budget.zcdp(1.0))
    with pytest.raises(Exception, match="would spend"):
        private_bounds(x, ledger=small, **kw)
    assert small.entries == ()


def test_atom_scores_keep_sensitivity_one_on_neighbours():
    """The edges are quantiles of the values that are not atoms: whether a record is one
    depends on it and the public atoms alone, so replacing one record still moves every
    score by at most 1 (an atom turning into a non-atom, or back, included)."""
    rng = np.random.default_rng(10)
    cands = signed_log_grid(decimals=0)
    atoms = np.array([0.0, 40.0])
    worst = 0.0
    for _ in range(200):
        x = rng.choice([0.0, 0.0, 40.0, 3.0, 7.0, 55.0, 1e4], size=40)
        y = x.copy()
        y[rng.integers(40)] = rng.choice([0.0, 40.0, 5.0, 1e5])
        for alpha in (0.1, 0.5, 0.9):
            a = quantile_scores(x[~np.isin(x, atoms)], cands, alpha)
            b = quantile_scores(y[~np.isin(y, atoms)], cands, alpha)
            worst = max(worst, float(np.abs(a - b).max()))
    assert worst <= 1.0 + 1e-12


def test_a_point_mass_gets_its_own_bin_and_decodes_to_itself():
    rng = np.random.default_rng(11)
    n = 20_000
    gain = np.where(rng.random(n) < 0.9, 0, np.round(np.exp(rng.normal(8, 1, n))))
    df = pd.DataFrame({"gain": [str(int(v)) for v in gain], "c": rng.choice(["a", "b"], n)})
    dom, report = learn_domain(df, rho=5.0, delta=1e-9, rng=np.random.default_rng(12),
                               ledger=big_ledger())  # fmt: skip
    attr = dom["gain"]
    assert isinstance(attr, Numeric) and attr.edges[:2] == (0.0, 1.0)
    (col,) = [c for c in report.columns if c.name == "gain"]
    assert col.noisy["atoms"] == [0.0] and "atoms 0" in col.learned
    # the other edges are quantiles of the non-zero values: most of them inside their range
    inner = np.array(attr.edges[2:-1])
    nonzero = gain[gain > 0]
    assert ((inner >= nonzero.min()) & (inner <= nonzero.max())).mean() >= 0.8
    out, _ = decode(Records(encode(df, dom).to_dense(), domain=dom), dom, seed=0)
    assert abs((out["gain"] == 0).mean() - 0.9) < 0.01


def test_small_integer_codes_by_range_and_declared_numeric():
    rng = np.random.default_rng(13)
    n = 20_000
    edu = rng.choice(np.arange(1, 17), n, p=np.r_[[0.01] * 8, [0.3, 0.2, 0.1, 0.06, 0.1,
                                                                0.08, 0.04, 0.04]])  # fmt: skip
    df = pd.DataFrame({"edu": edu.astype(str), "years": edu.astype(str)})
    kw = {"rho": 0.05, "delta": 1e-9, "ledger": big_ledger()}
    dom, report = learn_domain(df, rng=np.random.default_rng(14), types={"years": "numeric"},
                               **kw)  # fmt: skip
    attr = dom["edu"]
    assert isinstance(attr, Categorical) and set(range(1, 17)) <= set(attr.values)
    assert isinstance(dom["years"], Numeric)  # declared: never coded
    rules = {c.name: c.rule for c in report.columns}
    assert rules["edu"].startswith(("code by range", "code:"))


def test_a_table_too_small_for_the_budget_is_refused_before_any_draw():
    # a category needs 245 noisy records here: 1,000 rows are small, 200 too few
    df = pd.DataFrame({"sex": ["0", "1"] * 100, "age": [str(20 + i % 60) for i in range(200)]})
    b = learn_budget(1.0, 1e-9)
    ledger = Ledger(b.ledger_budget)
    with pytest.raises(DPQueryError, match=r"too few.*at least [\d,]+ records"):
        learn_domain(df, rho=0.1 * b.rho, delta=b.delta_tail, ledger=ledger,
                     rng=np.random.default_rng(15))  # fmt: skip
    assert ledger.entries == ()
    # the same table at a budget that serves it
    learn_domain(df, rho=1.0, delta=1e-6, ledger=big_ledger(), rng=np.random.default_rng(15))


def test_a_positive_column_near_zero_keeps_its_low_tail():
    rng = np.random.default_rng(16)
    age = rng.integers(0, 95, 20_000)
    df = pd.DataFrame({"age": age.astype(str)})
    dom, _ = learn_domain(df, rho=5.0, delta=1e-9, rng=np.random.default_rng(17),
                          ledger=big_ledger())  # fmt: skip
    attr = dom["age"]
    assert isinstance(attr, Numeric) and attr.edges[0] == 0.0 and attr.edges[-1] >= 94


def test_a_number_column_is_not_read_as_text_by_the_profiles_noise():
    """20,000 integers, 15% missing, at a column rho whose profile noise has sd about 235 (a
    census table's at epsilon 1): the text rule's 4-sd margin keeps the column number-like
    in each of 10 seeded runs (a false failure: about 10 x 3e-5 = 3e-4; without the margin,
    the 5% share alone is 2.6 sd here: about 0.5% a run)."""
    rng = np.random.default_rng(18)
    x = rng.integers(0, 100_000, 20_000).astype(str).astype(object)
    x[rng.random(20_000) < 0.15] = None
    df = pd.DataFrame({"income": x})
    for seed in range(10):
        _, report = learn_domain(df, rho=1.8e-4, delta=1e-11, rng=np.random.default_rng(seed),
                                 ledger=big_ledger())  # fmt: skip
        (col,) = report.columns
        assert not col.rule.startswith("text"), (seed, col.rule)


def _texts_table(path: Path) -> Path:
    """A table whose numeric column holds a text now and then (``unknown``)."""
    rng = np.random.default_rng(3)
    age = rng.integers(18, 80, 3000).astype(object)
    age[rng.random(3000) < 0.03] = "unknown"
    pd.DataFrame({"age": age, "job": rng.choice(["a", "b", "c"], 3000)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("how", ["synth", "domain learn"])
def test_a_learned_domain_given_back_reads_the_table_it_was_learned_from(tmp_path, how):
    """The domain written by ``synth`` (beside its output) or by ``domain learn`` releases
    again from the same table with ``--domain``: the numeric column's texts read as missing
    (``texts="missing"``), as the learning read them, not refused."""
    data = _texts_table(tmp_path / "t.csv")
    first = tmp_path / "s.csv"
    if how == "synth":
        args = ["synth", "--data", str(data), "--epsilon", "1", "--seed", "2", "--out", str(first),
                "--quiet"]  # fmt: skip
        learned = first.with_suffix(".domain.json")
    else:
        learned = tmp_path / "d.json"
        args = ["domain", "learn", "--data", str(data), "--epsilon", "1", "--seed", "2", "--out",
                str(learned)]  # fmt: skip
    assert main(args) == 0
    dom = Domain.load(learned)
    assert isinstance(dom["age"], Numeric) and dom["age"].texts == "missing" and dom["age"].missing
    again = tmp_path / "again.csv"
    assert main(["synth", "--data", str(data), "--domain", str(learned), "--epsilon", "1",
                 "--seed", "3", "--out", str(again), "--quiet"]) == 0  # fmt: skip
    assert len(pd.read_csv(again)) > 0


def test_texts_read_as_missing_only_where_the_domain_says_so():
    series = pd.Series(["20", "unknown", None, "45"], dtype=object)
    refuse = Numeric("age", (0, 50, 100), missing=True)
    with pytest.raises(DomainError, match="are not numbers"):
        encode(pd.DataFrame({"age": series}), Domain((refuse,)))
    read = Numeric("age", (0, 50, 100), missing=True, texts="missing")
    bits = encode(pd.DataFrame({"age": series}), Domain((read,))).to_dense()
    assert bits[:, 2].tolist() == [0, 1, 1, 0]  # the missing bit, after the two bins
    with pytest.raises(DomainError, match="texts must be"):
        Numeric("age", (0, 50, 100), texts="missing")  # no missing bin to read them into
    with pytest.raises(DomainError, match="texts must be"):
        Numeric("age", (0, 50, 100), missing=True, texts="skip")  # type: ignore[arg-type]
    again = Domain.from_file_object(Domain((read,)).to_dict(), "x")
    assert again["age"].texts == "missing"
    assert "texts" not in Domain((refuse,)).to_dict()["attributes"][0]
