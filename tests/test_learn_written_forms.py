"""Written forms learned from a raw table (``docs/learn.md``, "Codes written with leading
zeros, dates written YYYYMMDD"): codes zero-padded to a width and dates written as eight
digits, counted in cells of the precision's histogram under its one charge.

The learnings are seeded at a rho where the rules' outcomes are far from their thresholds
(hundreds of noise sd), so no assertion depends on the draw except where a test states its
false-failure rate."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery
from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Categorical, Domain, Numeric
from dpquery.data.dates import DIGITS_FORMAT, digits_cell, times_of
from dpquery.data.decode import decode
from dpquery.data.encode import encode
from dpquery.data.records import Records
from dpquery.domain_learning import (
    BOUNDS_SHARE,
    DECIMALS_SHARE,
    LEARNING_NOISY_N_SHARE,
    PROBE_SHARE,
    PROFILE_SHARE,
    WRITTEN_FORMS,
    learn_domain,
    precision_of,
    written_form,
    written_form_of,
)
from dpquery.errors import DomainError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

DATE = len(WRITTEN_FORMS) - 1  # the YYYYMMDD cell


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """ZIP codes (a third below 10000, written with a leading 0), three-digit codes 000 to
    029, admission days written YYYYMMDD over two years, an amount with cents."""
    rng = np.random.default_rng(seed)
    zips = np.concatenate([rng.integers(1000, 10000, 200), rng.integers(10000, 99999, 400)])
    days = [dt.date(2018, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 730, n)]
    return pd.DataFrame({
        "zip": [f"{z:05d}" for z in rng.choice(zips, n)],
        "code": [f"{c:03d}" for c in rng.integers(0, 30, n)],
        "day": [d.strftime("%Y%m%d") for d in days],
        "amount": [f"{x:.2f}" for x in rng.lognormal(5, 1, n)],
    })  # fmt: skip


def _learn(df: pd.DataFrame, neighbours: str = ADD_REMOVE, seed: int = 3, rho: float = 1.0,
           **kw: object) -> tuple[Domain, object, Ledger]:  # fmt: skip
    ledger = Ledger(Budget.zcdp(rho))
    domain, report = learn_domain(
        df,
        rho=rho,
        delta=1e-9,
        rng=np.random.default_rng(seed),
        ledger=ledger,
        neighbours=neighbours,
        **kw,
    )  # type: ignore[arg-type]
    return domain, report, ledger


def learned_alike(monkeypatch: pytest.MonkeyPatch, df: pd.DataFrame, neighbours: str,
                  name: str, replacement: object) -> None:  # fmt: skip
    """``df`` and its first 400 records learn the same domain, report and ledger with
    ``domain_learning.<name>`` replaced: a form's cells, drawn from a stream of their own,
    change nothing of a table without that form."""
    for part in (df, df.iloc[:400]):
        runs = []
        for patched in (False, True):
            if patched:
                monkeypatch.setattr(domain_learning, name, replacement)
            domain, report, ledger = _learn(part.reset_index(drop=True), neighbours, seed=7)
            noisy = [r.noisy for r in report.columns]  # type: ignore[attr-defined]
            charges = [(e.charge.mechanism, e.charge.cost) for e in ledger.entries]
            runs.append((domain.to_dict(), noisy, charges))
            monkeypatch.undo()
        assert runs[0] == runs[1]


# --- the forms of one value ------------------------------------------------------------------
def test_the_written_form_of_a_value() -> None:
    assert written_form_of("00403") == WRITTEN_FORMS.index(5)
    assert written_form_of("003") == WRITTEN_FORMS.index(3)
    assert written_form_of("07") == WRITTEN_FORMS.index(2)
    assert written_form_of("030001") == WRITTEN_FORMS.index(6)
    assert written_form_of("20190314") == DATE
    assert written_form_of(20190314) == DATE  # an integer so written
    assert written_form_of("02190314") == WRITTEN_FORMS.index(8)  # year 219: padded, no date
    for other in (
        "0",
        "7",
        "403",
        "20191399",
        "17991231",
        "22000101",
        "2019031",
        "-007",
        "+007",
        "0.5",
        "007.0",
        "0" * 13,
        "abc",
        "",
        7,
        3.0,
        True,
        ("<missing key>",),
    ):
        assert written_form_of(other) is None, other
    assert digits_cell("20190314") == int(dt.datetime(2019, 3, 14).timestamp()) - int(
        dt.datetime(1970, 1, 1).timestamp()
    )
    assert digits_cell("20200229") is not None and digits_cell("20190229") is None


def _cells(value: object) -> np.ndarray:
    col = domain_learning._read(pd.Series([value], dtype=object))
    return np.concatenate([col.decimals, col.forms])


def test_each_value_is_in_one_cell_so_the_histogram_moves_by_its_sensitivity() -> None:
    """The precision's classes and the forms' cells hold each value at most once (a whole
    number written in a form is not in class 0): replacing a record moves the vector by L2 at
    most sqrt(2), adding or removing one by at most 1, as the five classes alone did."""
    values = [None, "7", "007", "00403", "20190314", 20190314, "3.5", "0.25", "1,000",
              "abc", "2019-03-04", "0", "00", True, 12.0]  # fmt: skip
    vecs = [_cells(v) for v in values]
    assert all(v.sum() <= 1 and v.min() >= 0 for v in vecs)
    for a in vecs:
        assert np.linalg.norm(a) <= 1
        for b in vecs:
            assert np.linalg.norm(a - b) <= math.sqrt(2) + 1e-12
    # a column of floats (pandas' dtype: no text) carries no form
    col = domain_learning._read(pd.Series([20190314.0, 7.0]))
    assert col.forms.sum() == 0 and col.decimals[0] == 2


# --- the rule ----------------------------------------------------------------------------------
def _noisy(true: dict[int, int], sigma: float, rng: np.random.Generator) -> list[int]:
    cells = np.zeros(len(WRITTEN_FORMS), dtype=np.int64)
    for i, c in true.items():
        cells[i] = c
    return [int(x) for x in cells + sample_discrete_gaussian(sigma**2, cells.size, rng)]


def test_seeded_rates_of_the_rule() -> None:
    """At sd 20 a cell, 200 draws each. Dates in 60% of 1,000 numbers: YYYYMMDD every time (a
    false failure needs a draw 5 sd below the majority's bar, 3e-7 a draw). 30% of 10,000 (a
    count column holding some 8-digit values naming days) never (100 sd above its count, and
    the widths' bar is 25 sd).
    300 values padded to width 5: width 5 every time (11 sd above the bar of 4 sd). No value
    in a form, 10,000 numbers: None every time (the share's bar, 500, is 25 sd: a cell
    passing it is below 1e-100 a draw; at 1,000 numbers the bar is 4 sd, 3.8e-4 a draw
    over the 12 cells)."""
    rng = np.random.default_rng(5)
    sigma = 20.0
    assert all(written_form(_noisy({DATE: 600}, sigma, rng), 1000, sigma) == "YYYYMMDD"
               for _ in range(200))  # fmt: skip
    assert all(written_form(_noisy({DATE: 3000}, sigma, rng), 10000, sigma) is None
               for _ in range(200))  # fmt: skip
    five = WRITTEN_FORMS.index(5)
    assert all(written_form(_noisy({five: 300}, sigma, rng), 1000, sigma) == 5
               for _ in range(200))  # fmt: skip
    assert all(written_form(_noisy({}, sigma, rng), 10000, sigma) is None for _ in range(200))
    # the bars by hand: 4 sd (80) and 5% of the numbers for a width, half of them for dates
    assert written_form([0] * 3 + [80] + [0] * 9, 1000, sigma) == 5
    assert written_form([0] * 3 + [79] + [0] * 9, 1000, sigma) is None
    assert written_form([0] * 3 + [99] + [0] * 9, 2000, sigma) is None
    assert written_form([0] * 12 + [500], 1000, sigma) == "YYYYMMDD"
    assert written_form([0] * 12 + [499], 1000, sigma) is None
    assert written_form([0, 90, 0, 120] + [0] * 9, 1000, sigma) == 5  # the largest width


# --- the charges -------------------------------------------------------------------------------
def _spent(ledger: Ledger) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in ledger.entries:
        cost = e.charge.cost
        rho = e.charge.count * (cost.rho if hasattr(cost, "rho") else cost.epsilon**2 / 8)
        out[e.charge.mechanism] = out.get(e.charge.mechanism, 0.0) + rho
    return out


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_the_charges_are_the_plan_on_neighbouring_tables(neighbours: str) -> None:
    """Tables of ``n`` and ``n + 1`` records (add/remove) and two of ``n`` records differing
    in one (replace-one: a padded ZIP code written without its zero, a day written as a
    plain number): the forms add no charge. A padded column's charges are those of a number
    column, hand-computed from its rho ``c``: profile 0.1 c, probe 0.45 c, precision 0.05 c,
    bounds 0.2 c, quantiles 0.2 c; a YYYYMMDD column's those of a declared date column's:
    profile 0.1 c, then years 0.225 c and months 0.225 c (two years' bounds) and quantiles
    0.45 c, no probe and no precision."""
    big = _table(3001)
    if neighbours == ADD_REMOVE:
        tables = [big.iloc[:3000].reset_index(drop=True), big]
    else:
        other = big.iloc[:3000].copy()
        other.loc[0, "zip"] = "12345"
        other.loc[1, "day"] = "7"
        tables = [big.iloc[:3000].reset_index(drop=True), other]
    share = LEARNING_NOISY_N_SHARE if neighbours == ADD_REMOVE else 0.0
    c = (1 - share) * (1 - 1e-9) / 4
    after = (1 - PROFILE_SHARE) * c - PROBE_SHARE * c
    precision = DECIMALS_SHARE / (1 - PROFILE_SHARE) * after
    rest = after - precision
    runs = []
    for df in tables:
        domain, report, ledger = _learn(df, neighbours)
        spent = _spent(ledger)
        for col in ("zip", "day"):
            assert spent[f"{col}: profile (discrete Gaussian)"] == pytest.approx(PROFILE_SHARE * c)
        assert spent["zip: precision (discrete Gaussian)"] == pytest.approx(precision)
        assert "day: precision (discrete Gaussian)" not in spent
        assert "day: partition selection (discrete Gaussian)" not in spent
        dated = (1 - PROFILE_SHARE) * c
        assert spent["zip: bounds (discrete Gaussian histogram)"] == pytest.approx(
            BOUNDS_SHARE * rest
        )
        assert spent["day: bounds, years (discrete Gaussian histogram)"] == pytest.approx(
            BOUNDS_SHARE * dated / 2
        )
        assert spent["day: bounds, months (discrete Gaussian histogram)"] == pytest.approx(
            BOUNDS_SHARE * dated / 2
        )
        assert spent["day: quantiles (exponential mechanism)"] == pytest.approx(
            (1 - BOUNDS_SHARE) * dated
        )
        for r in report.columns:  # type: ignore[attr-defined]
            assert r.rho <= c * (1 + 1e-12)
        assert domain["zip"].width == 5  # type: ignore[union-attr]
        assert domain["day"].time == DIGITS_FORMAT  # type: ignore[union-attr]
        runs.append(sorted(spent.items()))
    assert [k for k, _ in runs[0]] == [k for k, _ in runs[1]]
    assert np.allclose([v for _, v in runs[0]], [v for _, v in runs[1]], rtol=1e-12)


def _old_decimals(name: str, col: object, rho: float, ctx: object, numbers: object = None
                  ) -> tuple[int, list[int], None, list[int]]:  # fmt: skip
    """The precision as drawn before the forms: the five classes alone."""
    noisy = discrete_gaussian_mechanism(
        col.decimals, rho=rho, sensitivity=ctx.l2, rng=ctx.rng,  # type: ignore[attr-defined]
        ledger=ctx.ledger, name=f"{name}: precision (discrete Gaussian)",  # type: ignore[attr-defined]
    )  # fmt: skip
    counts = [int(c) for c in noisy]
    sigma = domain_learning._sigma(rho, ctx.l2)  # type: ignore[attr-defined]
    return precision_of(counts, sigma), counts, None, []


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_table_without_forms_is_learned_as_without_their_cells(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """A table with no value written in a form (integers, decimals, codes, text, ISO dates, a
    small and a large table) learns the same domain, report and ledger as with the
    precision drawing its five classes alone: the forms' noise is a stream of its own."""
    rng = np.random.default_rng(0)
    n = 3000
    big = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "x": [f"{v:.2f}" for v in rng.normal(size=n)],
        "count": [str(v) for v in rng.poisson(40, n)],
        "k": [str(v) for v in rng.integers(0, 5, n)],
        "income": [str(v) for v in rng.lognormal(10, 1, n).astype(int)],
        "when": [str(dt.date(2019, 1, 1) + dt.timedelta(int(d))) for d in rng.integers(0, 99, n)],
    })  # fmt: skip
    learned_alike(monkeypatch, big, neighbours, "_decimals", _old_decimals)


# --- what is learned ---------------------------------------------------------------------------
def test_what_is_learned_and_a_declared_type_wins() -> None:
    df = _table(3000)
    domain, report, _ = _learn(df)
    zip_, code, day = domain["zip"], domain["code"], domain["day"]
    assert isinstance(zip_, Numeric) and zip_.width == 5 and zip_.integer
    # the probe released the codes: their texts as written (a small table's codes by range
    # are integers, written with the width: test_a_small_table_s_codes_by_range)
    assert isinstance(code, Categorical) and code.width is None and "003" in code.values
    assert isinstance(day, Numeric) and day.time == DIGITS_FORMAT
    assert day.edges[0] >= times_of(pd.Series(["20170101"]), DIGITS_FORMAT)[0]
    kinds = {r.name: r.kind for r in report.columns}  # type: ignore[attr-defined]
    assert kinds == {"zip": "numeric", "code": "categorical", "day": "date", "amount": "numeric"}
    assert domain["amount"].width is None  # type: ignore[union-attr]
    assert "written 5 digits wide" in report.columns[0].learned  # type: ignore[attr-defined]
    declared, _, _ = _learn(df, types={"zip": "numeric", "day": "numeric"})
    assert declared["zip"].width is None  # type: ignore[union-attr]
    assert declared["day"].time is None  # type: ignore[union-attr]
    # 70% days, 30% other eight-digit numbers: short of the profile's rule (95%), a majority
    # of the precision's histogram: a date column too (its other values released missing)
    rng = np.random.default_rng(1)
    other = [str(v) for v in rng.integers(20181301, 20181399, len(df))]
    mixed = df.assign(day=np.where(rng.random(len(df)) < 0.7, df["day"], other))
    both, report2, _ = _learn(mixed)
    assert both["day"].time == DIGITS_FORMAT  # type: ignore[union-attr]
    day_report = report2.columns[2]  # type: ignore[attr-defined]
    assert day_report.noisy["written_form"] == "YYYYMMDD"
    assert day_report.rule.startswith("date: written YYYYMMDD")
    dated, _, _ = _learn(df, types={"day": "date:%Y%m%d", "code": "categorical"})
    assert dated["day"].time == DIGITS_FORMAT  # type: ignore[union-attr]
    assert "003" in dated["code"].values  # type: ignore[union-attr]  # the texts as written


def test_a_small_table_s_codes_by_range() -> None:
    """A small table (400 records at rho 0.05): no probe, its codes by range are the
    integers in their bounds, written with the width learned."""
    domain, report, _ = _learn(_table(400), rho=0.05)
    assert report.small  # type: ignore[attr-defined]
    code, zip_ = domain["code"], domain["zip"]
    assert isinstance(code, Categorical) and code.width == 3 and 7 in code.values
    assert "007" in code.written_values and "<other>" in code.written_values
    assert isinstance(zip_, Numeric) and zip_.width == 5


def test_a_width_in_a_domain_round_trips_decodes_and_is_checked() -> None:
    zip_ = Numeric("zip", (0, 500, 1000), integer=True, width=5, out_of_range="clip",
                   missing=True)  # fmt: skip
    code = Categorical("code", (0, 7, 29, "<other>"), other="<other>", width=3)
    domain = Domain((zip_, code))
    again = Domain.from_dict(domain.to_dict())
    assert again["zip"].width == 5 and again["code"].width == 3  # type: ignore[union-attr]
    assert domain.to_dict()["attributes"][0]["width"] == 5
    assert "width" not in Domain((Numeric("x", (0, 1)),)).to_dict()["attributes"][0]
    table = pd.DataFrame({"zip": ["00403", "00007", None, "00999"],
                          "code": ["007", "029", "003", "000"]})  # fmt: skip
    data = encode(table, domain)
    out, _ = decode(Records(data.to_dense().astype(np.uint8), None, domain), seed=0)
    assert all(v is None or (len(v) == 5 and v.isdigit()) for v in out["zip"])
    assert list(out["code"]) == ["007", "029", "<other>", "000"]
    for bad in (1, 21, 2.5, True):
        with pytest.raises(DomainError, match="width"):
            Numeric("z", (0, 1), integer=True, width=bad)  # type: ignore[arg-type]
    with pytest.raises(DomainError, match="integer=True"):
        Numeric("z", (0, 1), width=5)
    with pytest.raises(DomainError, match="width"):
        Domain.from_dict({"attributes": [{"name": "c", "type": "categorical",
                                          "values": [1], "width": "5"}]})  # fmt: skip


# --- releases ------------------------------------------------------------------------------------
def test_a_release_from_the_raw_csv_writes_the_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(4000).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "note: zip: written zero-padded to 5 digits" in err
    assert "note: day: read as dates written YYYYMMDD" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    zips = released["zip"][released["zip"] != ""]
    assert len(zips) > 0.98 * len(released) and zips.str.fullmatch(r"\d{5}").all()
    assert (zips.str[0] == "0").mean() > 0.1  # the real table's third below 10000
    codes = released["code"]
    assert codes[~codes.isin(["<other>", ""])].str.fullmatch(r"\d{3}").all(), codes.unique()
    days = released["day"][released["day"] != ""]
    assert len(days) > 0.98 * len(released)
    assert all(digits_cell(d) is not None for d in days)  # valid YYYYMMDD, no 20191399
    assert days.str[:4].isin(["2017", "2018", "2019", "2020"]).all()
    learned = Domain.load(out.with_suffix(".domain.json"))
    assert learned["zip"].width == 5  # type: ignore[union-attr]
    again = tmp_path / "again.csv"  # the learned domain given back reads them alike
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain",
                 str(out.with_suffix(".domain.json"))]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str)
    assert times_of(twice["day"], DIGITS_FORMAT).notna().mean() > 0.98
    assert twice["zip"].dropna().str.fullmatch(r"\d{5}").all()


def test_a_frame_of_integer_dates_releases_dates() -> None:
    """``dpquery.synthesize`` on a frame whose dates pandas read as integers: learned as
    dates (an integer written so is in the form) and encoded by their text, not as seconds."""
    df = _table(4000)
    df["day"] = df["day"].astype(np.int64)
    df = df.drop(columns=["zip", "code"])
    out, _ = dpquery.synthesize(df, epsilon=1, seed=0)
    days = out["day"].dropna()
    assert len(days) > 0.98 * len(out)
    assert all(digits_cell(str(d)) is not None for d in days)
    assert pd.Series(days).astype(str).str[:4].isin(["2017", "2018", "2019", "2020"]).all()


def test_the_plan_states_the_forms(capsys: pytest.CaptureFixture[str]) -> None:
    """``dpquery privacy synth`` states the forms' charge and bars (public: no data read)."""
    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["written_forms"]
    assert plan["charge"].startswith("the precision's") and plan["widths"] == list(range(2, 13))
    assert (plan["sigmas"], plan["width_share"], plan["date_share"]) == (4.0, 0.05, 0.5)
