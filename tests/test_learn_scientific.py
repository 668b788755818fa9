"""Numbers written in scientific notation, learned from a raw table (``docs/learn.md``,
"Numbers written in scientific notation"): cells of the precision's histogram under its one
charge, by the mantissa's decimals; a column written so is learned down to ``10^-14`` and
released in scientific notation with its significant digits.

The learnings are seeded at a rho where the rules' outcomes are far from their thresholds
(hundreds of noise sd), so no assertion depends on the draw except where a test states its
false-failure rate."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_written_forms import _learn, _spent, learned_alike

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.decode import decode
from dpquery.data.encode import encode
from dpquery.data.records import Records
from dpquery.domain_learning import (
    BOUNDS_SHARE,
    DECIMALS_SHARE,
    LEARNING_NOISY_N_SHARE,
    MAX_MANTISSA_DECIMALS,
    PROBE_SHARE,
    PROFILE_SHARE,
    SCIENTIFIC_DECIMALS,
    quantile_candidates,
    scientific_form,
    scientific_of,
)
from dpquery.errors import DomainError
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

SCI = re.compile(r"-?\d\.\d{3}e[-+]\d\d")  # four significant digits, as %.3e writes


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """p-values (log-normal, about 10^-8 to 1, written %.3e), concentrations (around
    10^-6, %.2e), an amount with cents and a group."""
    rng = np.random.default_rng(seed)
    p = np.minimum(1.0, np.exp(rng.normal(-7.0, 4.0, n)))
    return pd.DataFrame({
        "p": [f"{x:.3e}" for x in p],
        "conc": [f"{x:.2e}" for x in np.exp(rng.normal(np.log(1e-6), 1.5, n))],
        "amount": [f"{x:.2f}" for x in rng.lognormal(5, 1, n)],
        "group": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip


# --- the form of one value -----------------------------------------------------------------
def test_the_scientific_form_of_a_value() -> None:
    assert scientific_of("4.070e-04") == 3
    assert scientific_of("1E5") == 0
    assert scientific_of("-2.5e+03") == 1
    assert scientific_of("+.25e-3") == 2
    assert scientific_of("3.0517578125e-05") == MAX_MANTISSA_DECIMALS  # capped
    assert scientific_of("7.e2") == 0
    for other in ("0.0004", "400", "1e400", "e5", "1e", "1.5e-3.2", "abc", "", "inf",
                  "Infinity", "1e5 kg", 4.07e-4, 1e-4, 123.5, 100000, True, math.inf, math.nan,
                  ("<missing key>",)):  # fmt: skip
        assert scientific_of(other) is None, other
    # a float is written as its repr: with an exponent below 1e-4 and from 1e16
    assert scientific_of(3.35e-08) == 2 and repr(3.35e-08) == "3.35e-08"
    assert scientific_of(3.3524949385538154e-08) == MAX_MANTISSA_DECIMALS
    assert scientific_of(1e-05) == 0 and scientific_of(9.99e-05) == 2
    assert scientific_of(1.5e16) == 1 and scientific_of(-2.5e-300) == 1


def _cells(value: object) -> np.ndarray:
    col = domain_learning._read(pd.Series([value], dtype=object))
    return np.concatenate([col.decimals, col.forms, col.scientific])


def test_each_value_is_in_one_cell_so_the_histogram_moves_by_its_sensitivity() -> None:
    """The precision's classes, the written forms' cells and the scientific cells hold each
    value at most once (a number written with an exponent is not in its decimals class):
    replacing a record moves the whole vector by L2 at most sqrt(2), adding or removing one by
    at most 1."""
    values = [None, "4.070e-04", "1E5", "-2.5e+03", "0.000407", "7", "007", "20190314",
              "3.5", "abc", "1e400", 12.0, 4.07e-4, 3.35e-08, 1e20, -1e-9]  # fmt: skip
    vecs = [_cells(v) for v in values]
    assert all(v.sum() <= 1 and v.min() >= 0 for v in vecs)
    for a in vecs:
        assert np.linalg.norm(a) <= 1
        for b in vecs:
            assert np.linalg.norm(a - b) <= math.sqrt(2) + 1e-12
    assert _cells("4.070e-04")[-(MAX_MANTISSA_DECIMALS + 1) + 3] == 1
    # floats: their repr's form; a whole float (1e20) is an integer, never so written
    col = domain_learning._read(pd.Series([4.07e-4, 1e-7, 3.35e-08, 1e20, 0.5]))
    assert list(col.scientific) == [1, 0, 1, 0, 0, 0, 0]
    assert list(col.decimals) == [1, 1, 0, 0, 1]  # 1e20 (0), 0.5 (1), 4.07e-4 (4)


# --- the rule ------------------------------------------------------------------------------
def _noisy(true: dict[int, int], sigma: float, rng: np.random.Generator) -> list[int]:
    cells = np.zeros(MAX_MANTISSA_DECIMALS + 1, dtype=np.int64)
    for i, c in true.items():
        cells[i] = c
    return [int(x) for x in cells + sample_discrete_gaussian(sigma**2, cells.size, rng)]


def test_seeded_rates_of_the_rule() -> None:
    """At sd 20 a cell. 300 of 1,000 numbers written %.3e: the form every time in 200 draws
    with at least 4 digits (the cell 11 sd above its bar of 80: a failure below 1e-20 a
    draw); exactly 4 in at least 190 of them (a more precise empty class passes the digits'
    floor of 80, 4 sd, at 3.2e-5 each, about 1e-4 a draw: 11 such draws of 200 below 1e-20).
    No value so written in 10,000 numbers: None every time (the share's bar, 500, is 25 sd:
    below 1e-100 a draw); in 1,000 (the cells' bar, 4 sd: at most 2.2e-4 a draw) at most 5
    passes in 2,000 draws (0.44 expected; 6 or more about 1e-6)."""
    rng = np.random.default_rng(5)
    sigma = 20.0
    digits = [scientific_form(_noisy({3: 300}, sigma, rng), 1000, sigma) for _ in range(200)]
    assert all(d is not None and d >= 4 for d in digits)
    assert sum(d == 4 for d in digits) >= 190
    assert all(scientific_form(_noisy({}, sigma, rng), 10000, sigma) is None for _ in range(200))
    passes = sum(scientific_form(_noisy({}, sigma, rng), 1000, sigma) is not None
                 for _ in range(2000))  # fmt: skip
    assert passes <= 5
    # the bars by hand: a cell of 4 sd (80), the cells' sum 5% of the numbers
    assert scientific_form([0, 0, 0, 80, 0, 0, 0], 1000, sigma) == 4
    assert scientific_form([0, 0, 0, 79, 0, 0, 0], 1000, sigma) is None
    assert scientific_form([0, 0, 0, 99, 0, 0, 0], 2000, sigma) is None
    assert scientific_form([0, 0, 0, 100, 0, 0, 0], 2000, sigma) == 4
    # the digits: the most precise class holding 5% of the cells' mass and 4 sd
    assert scientific_form([0, 0, 0, 300, 0, 0, 79], 1000, sigma) == 4
    assert scientific_form([0, 0, 0, 300, 0, 0, 80], 1000, sigma) == 7
    assert scientific_form([0, 90, 0, 85, 0, 0, 0], 1000, sigma) == 4


# --- the charges -----------------------------------------------------------------------------


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_the_charges_are_the_plan_on_neighbouring_tables(neighbours: str) -> None:
    """Tables of ``n`` and ``n + 1`` records (add/remove) and two of ``n`` records differing
    in one (replace-one: a p-value written as plain decimals): the form adds no charge. A
    scientific column's charges are those of a number column, hand-computed from its rho
    ``c``: profile 0.1 c, probe 0.45 c, precision 0.05 c, bounds 0.2 c, quantiles 0.2 c."""
    big = _table(3001)
    if neighbours == ADD_REMOVE:
        tables = [big.iloc[:3000].reset_index(drop=True), big]
    else:
        other = big.iloc[:3000].copy()
        other.loc[0, "p"] = "0.000407"
        tables = [big.iloc[:3000].reset_index(drop=True), other]
    share = LEARNING_NOISY_N_SHARE if neighbours == ADD_REMOVE else 0.0
    c = (1 - share) * (1 - 1e-9) / 4
    assert math.isclose(PROFILE_SHARE * c + PROBE_SHARE * c, 0.55 * c)
    after = (1 - PROFILE_SHARE) * c - PROBE_SHARE * c
    precision = DECIMALS_SHARE / (1 - PROFILE_SHARE) * after
    rest = after - precision
    runs = []
    for df in tables:
        domain, report, ledger = _learn(df, neighbours)
        spent = _spent(ledger)
        for col in ("p", "conc"):
            assert spent[f"{col}: profile (discrete Gaussian)"] == pytest.approx(0.1 * c)
            assert spent[f"{col}: partition selection (discrete Gaussian)"] == pytest.approx(
                0.45 * c
            )
            assert spent[f"{col}: precision (discrete Gaussian)"] == pytest.approx(precision)
            assert precision == pytest.approx(0.05 * c)
            assert spent[f"{col}: bounds (discrete Gaussian histogram)"] == pytest.approx(
                BOUNDS_SHARE * rest
            )
            assert spent[f"{col}: quantiles (exponential mechanism)"] == pytest.approx(
                (1 - BOUNDS_SHARE) * rest
            )
            assert domain[col].significant is not None  # type: ignore[union-attr]
        for r in report.columns:  # type: ignore[attr-defined]
            assert r.rho <= c * (1 + 1e-12)
        runs.append(sorted(spent.items()))
    assert [k for k, _ in runs[0]] == [k for k, _ in runs[1]]
    assert np.allclose([v for _, v in runs[0]], [v for _, v in runs[1]], rtol=1e-12)


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_table_without_the_form_is_learned_as_without_its_cells(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """A table with no number written with an exponent (decimals, counts, codes, text, ISO
    dates, padded codes; a large and a small table) learns the same domain, report and ledger
    as with the scientific cells not drawn: their noise is a stream of their own."""
    rng = np.random.default_rng(0)
    n = 3000
    big = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "x": [f"{v:.2f}" for v in rng.normal(size=n)],
        "small": [f"{v:.6f}" for v in rng.lognormal(-8, 1, n)],
        "count": [str(v) for v in rng.poisson(40, n)],
        "zip": [f"{v:05d}" for v in rng.integers(0, 99999, n)],
        "income": [str(v) for v in rng.lognormal(10, 1, n).astype(int)],
        "when": [f"2019-01-{d:02d}" for d in rng.integers(1, 29, n)],
    })  # fmt: skip
    learned_alike(monkeypatch, big, neighbours, "_scientific", lambda *a, **k: (None, []))


# --- what is learned ---------------------------------------------------------------------------
def test_the_candidates_and_buckets_reach_small_magnitudes() -> None:
    """A scientific column's quantile candidates cover 1e-7 .. 1 at the log grid's 1-10%
    resolution (90 a decade), down to 1e-12; a column of 4 decimals' stop at 1e-4."""
    grid = quantile_candidates(0.0, 1.0, SCIENTIFIC_DECIMALS)
    for e in range(-12, 0):
        decade = grid[(grid >= 10.0**e) & (grid < 10.0 ** (e + 1))]
        assert decade.size == 90, e
    assert 1.1e-7 in grid and 4.1e-7 in grid
    plain = quantile_candidates(0.0, 1.0, 4)
    assert plain[plain > 0].min() == pytest.approx(1e-4)


def test_what_is_learned_and_released() -> None:
    df = _table(3000)
    domain, report, _ = _learn(df)
    p, conc, amount = domain["p"], domain["conc"], domain["amount"]
    assert isinstance(p, Numeric) and p.significant == 4 and not p.integer
    assert isinstance(conc, Numeric) and conc.significant == 3
    assert isinstance(amount, Numeric) and amount.significant is None
    assert p.edges[1] < 1e-5 and conc.edges[1] <= 2e-7  # edges at the data's magnitudes
    learned = report.columns[0].learned  # type: ignore[attr-defined]
    assert "scientific notation, 4 significant digits" in learned
    # declared numeric: the form is the column's precision, kept
    declared, _, _ = _learn(df, types={"p": "numeric"})
    assert declared["p"].significant == 4  # type: ignore[union-attr]
    # a few values written with an exponent (1%) in a column of decimals: not the form
    rng = np.random.default_rng(1)
    mixed = df.assign(amount=np.where(rng.random(len(df)) < 0.01, "1.5e+02", df["amount"]))
    assert _learn(mixed)[0]["amount"].significant is None  # type: ignore[union-attr]


def test_significant_digits_in_a_domain_round_trip_decode_and_are_checked() -> None:
    attr = Numeric("p", (0.0, 1e-8, 1e-4, 1.0), out_of_range="clip", missing=True,
                   significant=4)  # fmt: skip
    domain = Domain((attr,))
    again = Domain.from_dict(domain.to_dict())
    assert again["p"].significant == 4  # type: ignore[union-attr]
    assert domain.to_dict()["attributes"][0]["significant"] == 4
    assert "significant" not in Domain((Numeric("x", (0, 1)),)).to_dict()["attributes"][0]
    assert attr.precision is None and attr.output_dtype == "object"
    table = pd.DataFrame({"p": ["4.070e-04", "3.2e-09", None, "1.000e+00", "5.5e-05"]})
    data = encode(table, domain)
    out, _ = decode(Records(data.to_dense().astype(np.uint8), None, domain), seed=0)
    texts = list(out["p"])
    assert texts[2] is None and all(SCI.fullmatch(t) for t in texts if t is not None)
    x = [float(t) for t in texts if t is not None]
    assert x[1] < 1e-8 and 1e-4 <= x[0] <= 1 and 1e-4 <= x[2] <= 1 and 1e-8 <= x[3] < 1e-4
    for bad in (0, 18, 2.5, True, "4"):
        with pytest.raises(DomainError, match="significant"):
            Numeric("z", (0, 1), significant=bad)  # type: ignore[arg-type]
    for kw in ({"integer": True}, {"decimals": 2}):
        with pytest.raises(DomainError, match="significant digits take no"):
            Numeric("z", (0, 1), significant=4, **kw)  # type: ignore[arg-type]


# --- releases ------------------------------------------------------------------------------------
def test_a_release_from_the_raw_csv_writes_the_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    real = _table(4000)
    real.to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "note: p: written in scientific notation with 4 significant digits" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    ps = released["p"][released["p"] != ""]
    assert len(ps) > 0.98 * len(released) and ps.str.fullmatch(SCI.pattern).all()
    x = ps.astype(float)
    # the small values come back small (plain decimals wrote every p under 5e-5 as 0.0)
    real_small = (real["p"].astype(float) < 1e-5).mean()
    assert (x == 0).mean() < 0.01 and abs((x < 1e-5).mean() - real_small) < 0.1
    learned = Domain.load(out.with_suffix(".domain.json"))
    assert learned["p"].significant == 4  # type: ignore[union-attr]
    assert learned["conc"].significant == 3  # type: ignore[union-attr]
    again = tmp_path / "again.csv"  # the learned domain given back releases alike
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain",
                 str(out.with_suffix(".domain.json"))]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str)
    assert twice["p"].dropna().str.fullmatch(SCI.pattern).all()
    assert twice["conc"].dropna().str.fullmatch(r"\d\.\d\de[-+]\d\d").all()


def test_the_plan_states_the_form(capsys: pytest.CaptureFixture[str]) -> None:
    """``dpquery privacy synth`` states the scientific cells' charge and bars."""
    import json

    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["written_forms"]["scientific"]
    assert plan["charge"].startswith("the precision's")
    assert (plan["sigmas"], plan["share"], plan["mantissa_decimals"]) == (4.0, 0.05, 6)


# --- a DataFrame's floats ----------------------------------------------------------------------
def _floats(n: int, seed: int = 0) -> pd.DataFrame:
    """``_table``'s columns as a DataFrame types them: p-values and concentrations float64
    (no written form but their repr), the amount float64, the group text."""
    df = _table(n, seed)
    return df.assign(p=df["p"].astype(float), conc=df["conc"].astype(float),
                     amount=df["amount"].astype(float))  # fmt: skip


def test_a_float_column_is_learned_as_its_csv_is_read() -> None:
    """A float64 column's values carry their repr's written form: the frame learns the same
    domain as the CSV pandas writes of it (``to_csv``, floats as their repr) read as text."""
    df = _floats(3000)
    text = pd.read_csv(io.StringIO(df.to_csv(index=False)), dtype=str, keep_default_na=False)
    framed, _, _ = _learn(df)
    read, _, _ = _learn(text)
    assert framed == read and framed.to_dict() == read.to_dict()
    assert framed["p"].significant == 4  # type: ignore[union-attr]  # repr of 4.070e-05: 4.07e-05
    assert framed["conc"].significant == 3  # type: ignore[union-attr]  # 1.23e-06
    assert framed["amount"].significant is None  # type: ignore[union-attr]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_float_frame_without_the_form_is_learned_as_without_its_cells(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """Floats all in [1e-4, 1e16) (their repr plain: decimals, whole floats, a missing
    value) learn the same domain, report and ledger as with the scientific cells not drawn."""
    rng = np.random.default_rng(2)
    n = 3000
    x = rng.normal(size=n)
    x[::50] = np.nan
    df = pd.DataFrame({
        "x": x,
        "small": np.round(rng.lognormal(-6, 0.5, n), 6) + 1e-4,
        "whole": rng.poisson(40, n).astype(float),
        "big": rng.lognormal(20, 3, n).round(),
        "color": rng.choice(["red", "green"], n),
    })  # fmt: skip
    assert df["small"].min() >= 1e-4
    learned_alike(monkeypatch, df, neighbours, "_scientific", lambda *a, **k: (None, []))


def test_the_api_gives_floats_back(recwarn: pytest.WarningsRecorder) -> None:
    """``synthesize(df)`` with a float64 column of p-values: float64 back, the values at the
    learned digits, no 0.0, the share below 1e-5 near the data's (seeded; at this epsilon
    the share's error is about 0.02, its bar 0.1)."""
    import dpquery

    df = _floats(4000, seed=5)
    out, _ = dpquery.synthesize(df, epsilon=1, seed=4)
    assert out["p"].dtype == np.float64 and out["conc"].dtype == np.float64
    p = out["p"].dropna().to_numpy()
    assert len(p) > 0.9 * len(df) and (p > 0).all()  # the bounds are public: may pass 1
    assert abs((p < 1e-5).mean() - (df["p"] < 1e-5).mean()) < 0.1
    assert all(float(f"{v:.6e}") == v for v in p[:200])  # 7 significant digits
    # a declared dtype is kept
    typed, _ = dpquery.synthesize(df, epsilon=1, seed=4, dtypes={"conc": "Float64"})
    assert str(typed["conc"].dtype) == "Float64"
