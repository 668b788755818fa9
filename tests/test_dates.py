"""Dates and times as a column kind (``docs/learn.md``, "Dates and times"), and numbers
written with a decimal comma in a ``;``-separated file ("Messy tables").

The learnings are seeded at a rho (1.0) where the rules' outcomes are far from their
thresholds (the date test's count is thousands of noise sd from its bar): no assertion
below depends on the draw, except where a test says otherwise."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.dates import ISO_FORMATS, format_unit, iso_cell, times_of, written
from dpquery.data.encode import encode, read_table
from dpquery.data.numbers import decimal_comma
from dpquery.domain_learning import (
    BOUNDS_SHARE,
    DECIMALS_SHARE,
    LEARNING_NOISY_N_SHARE,
    PROFILE_SHARE,
    learn_budget,
    learn_domain,
)
from dpquery.errors import DomainError, DPQueryError
from dpquery.pipeline.learning import column_notes
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

EPOCH = dt.datetime(1970, 1, 1)


def _stamps(n: int, seed: int = 0, fmt: str = "%Y-%m-%d %H:%M:%S") -> list[str]:
    """``n`` times in March 2019, busier in the evenings, written in ``fmt``."""
    rng = np.random.default_rng(seed)
    start = dt.datetime(2019, 3, 1)
    days = rng.integers(0, 31, n)
    secs = np.clip(rng.normal(18 * 3600, 4 * 3600, n), 0, 86399).astype(int)
    return [(start + dt.timedelta(days=int(d), seconds=int(s))).strftime(fmt)
            for d, s in zip(days, secs, strict=True)]  # fmt: skip


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "pickup": _stamps(n, seed),
        "day": _stamps(n, seed + 1, "%Y-%m-%d"),
        "fare": [f"{x:.2f}" for x in np.exp(rng.normal(2.3, 0.6, n))],
        "color": rng.choice(["yellow", "green"], n, p=[0.8, 0.2]),
    })  # fmt: skip


# --- the public format rule ---------------------------------------------------------------
def test_iso_cells_are_read_as_datetime_reads_them() -> None:
    rng = np.random.default_rng(0)
    for s in rng.integers(-5_000_000_000, 5_000_000_000, 2000):
        t = EPOCH + dt.timedelta(seconds=int(s))
        assert iso_cell(t.strftime("%Y-%m-%d %H:%M:%S")) == (int(s), 2)
        assert iso_cell(t.strftime("%Y-%m-%dT%H:%M")) == (int(s) - t.second, 3)
        day = int(s) - (t.hour * 3600 + t.minute * 60 + t.second)
        assert iso_cell(t.strftime("%Y-%m-%d")) == (day, 0)


@pytest.mark.parametrize(
    "text",
    ["2019-02-30", "2019-13-01", "1900-02-29", "2019-03-01 24:00", "2019-03-01 10:60",
     "03/01/2019", "01.03.2019", "2019-3-1", "20190301", "2019-03-01 10", "2019-03-01T10:00:00 Z",
     "2019-03-01 10:00:00.5", "march"],
)  # fmt: skip
def test_what_is_not_an_iso_date(text: str) -> None:
    assert iso_cell(text) is None


def test_written_and_read_back_at_the_formats_precision() -> None:
    secs = np.array([1553372469.0, -60.0, 0.0])
    missing = np.array([False, False, True])
    assert written(secs, missing, ISO_FORMATS[2]).tolist() == [
        "2019-03-23 20:21:09", "1969-12-31 23:59:00", None]  # fmt: skip
    assert written(secs, missing, ISO_FORMATS[0]).tolist() == ["2019-03-23", "1969-12-31", None]
    assert written(secs, missing, "%d.%m.%Y").tolist() == ["23.03.2019", "31.12.1969", None]
    back = times_of(pd.Series(["23.03.2019", "2019-03-23", None]), "%d.%m.%Y")
    assert back.iloc[0] == 1553299200.0 and back.iloc[1:].isna().all()
    assert [format_unit(f) for f in ISO_FORMATS] == [86400, 60, 1, 60, 1]


# --- the learning: the kind test, its cost, what is learned -------------------------------
def test_the_date_test_decides_and_charges_exactly_its_plan_on_neighbours() -> None:
    """Tables of ``n`` and ``n + 1`` records (add/remove): the date columns are found by the
    profile's third count, which adds no charge; a date column's charges are the hand-computed
    shares of its rho ``c``: profile 0.1 c, format 0.1 c, years 0.2 c, months 0.2 c, quantiles
    0.4 c (no selection, no tail)."""
    big = _table(3001)
    small = big.iloc[:3000].reset_index(drop=True)
    rho = 1.0
    c = (1 - LEARNING_NOISY_N_SHARE) * rho * (1 - 1e-9) / 4
    rest = (1 - PROFILE_SHARE) * c
    fmt_share = DECIMALS_SHARE / (1 - PROFILE_SHARE)
    bounds = BOUNDS_SHARE * (1 - fmt_share) * rest
    expected = {
        "pickup: profile (discrete Gaussian)": PROFILE_SHARE * c,
        "pickup: precision (discrete Gaussian)": fmt_share * rest,
        "pickup: bounds, years (discrete Gaussian histogram)": bounds / 2,
        "pickup: bounds, months (discrete Gaussian histogram)": bounds / 2,
    }
    for df in (small, big):
        ledger = Ledger(Budget.zcdp(rho))
        domain, report = learn_domain(df, rho=rho, delta=1e-9, rng=np.random.default_rng(3),
                                      ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
        assert [c.kind for c in report.columns] == ["date", "date", "numeric", "categorical"]
        spent: dict[str, float] = {}
        for e in ledger.entries:  # a quantile draw is eps-DP: eps^2 / 8 of rho (Cesar-Rogers)
            cost = e.charge.cost
            rho_of = e.charge.count * (cost.rho if hasattr(cost, "rho") else cost.epsilon**2 / 8)
            spent[e.charge.mechanism] = spent.get(e.charge.mechanism, 0.0) + rho_of
        for name, value in expected.items():
            assert spent[name] == pytest.approx(value, rel=1e-12), name
        quantiles = [k for k in spent if k.startswith("pickup: quantiles")]
        assert len(quantiles) == 1
        assert spent[quantiles[0]] == pytest.approx((1 - BOUNDS_SHARE) * (1 - fmt_share) * rest)
        assert not [k for k in spent if k.startswith("pickup: partition")]
        assert report.columns[0].rho == pytest.approx(c) and report.columns[0].delta_tail == 0
        assert sum(spent.values()) <= rho
        pickup, day = domain["pickup"], domain["day"]
        assert isinstance(pickup, Numeric) and pickup.time == "%Y-%m-%d %H:%M:%S"
        assert isinstance(day, Numeric) and day.time == "%Y-%m-%d"
        march = iso_cell("2019-03-01")[0], iso_cell("2019-04-01")[0]  # type: ignore[index]
        assert (pickup.edges[0], pickup.edges[-1]) == march  # the month's bounds
        assert "date: noisy dates" in report.columns[0].rule


def test_the_date_test_costs_no_charge_and_no_draw_of_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Undeclared date columns are charged what declared ones are (the test rides on the
    profile's charge); and the test's draws come from a stream of their own: with the test
    drawing nothing, a table with no date column learns the same domain from the same
    seed."""
    df = _table(3000)
    ledgers = []
    for types in (None, {"pickup": "date", "day": "date"}):
        ledger = Ledger(Budget.zcdp(1.0))
        learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(6), ledger=ledger,
                     types=types)  # fmt: skip
        ledgers.append(
            [(e.charge.mechanism, e.charge.count, e.charge.cost) for e in ledger.entries]
        )
    assert ledgers[0] == ledgers[1]
    plain = df.drop(columns=["pickup", "day"])
    first, _ = learn_domain(plain, rho=1.0, delta=1e-9, rng=np.random.default_rng(7),
                            ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    monkeypatch.setattr(domain_learning, "_date_count", lambda col, rho, ctx: 0)
    second, _ = learn_domain(plain, rho=1.0, delta=1e-9, rng=np.random.default_rng(7),
                             ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert first.to_dict() == second.to_dict()


def test_a_table_of_numbers_and_text_holds_no_date() -> None:
    df = _table(3000).drop(columns=["pickup", "day"])
    df["id"] = [f"x{i}" for i in range(len(df))]
    _, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(4),
                             ledger=Ledger(Budget.zcdp(1.0)), neighbours=REPLACE_ONE)  # fmt: skip
    assert [c.kind for c in report.columns] == ["numeric", "categorical", "categorical"]
    assert all(abs(c.noisy["dates"]) < 100 for c in report.columns if "dates" in c.noisy)


def test_dates_in_another_order_are_read_in_a_common_format_or_as_declared() -> None:
    df = _table(3000)
    df["day"] = _stamps(3000, 1, "%d.%m.%Y")  # day first: days 13 to 31 tell the order
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert report.columns[1].kind == "date" and not report.columns[1].declared
    assert domain["day"].time == "%d.%m.%Y"  # type: ignore[union-attr]
    df["day"] = _stamps(3000, 1, "%d%m%Y")  # not in the public list: text unless declared
    _, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                             ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert report.columns[1].kind != "date"
    df["day"] = _stamps(3000, 1, "%d.%m.%Y")
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                                  ledger=Ledger(Budget.zcdp(1.0)),
                                  types={"day": "date:%d.%m.%Y"})  # fmt: skip
    assert report.columns[1].kind == "date" and report.columns[1].declared
    assert domain["day"].time == "%d.%m.%Y"  # type: ignore[union-attr]


def test_a_column_with_no_value_is_never_a_date_in_a_small_table() -> None:
    """A column all missing has a noisy non-missing count near 0, which the dates' noise
    alone would pass; the small-table test asks for half the records. Its noise would have
    to reach 500 records at sd ~40: never, over 20 seeds (a false failure needs a draw
    beyond 12 sd)."""
    b = learn_budget(1.0, 1e-9)
    df = _table(1000).assign(empty=None)
    for seed in range(20):
        _, report = learn_domain(df, rho=0.3 * b.rho, delta=b.delta_tail,
                                 rng=np.random.default_rng(seed), ledger=Ledger(b.ledger_budget),
                                 neighbours=ADD_REMOVE)  # fmt: skip
        kinds = [c.kind for c in report.columns]
        assert "small table" in report.columns[2].rule  # the small-table rules apply
        assert kinds[0] == "date" and kinds[-1] != "date", (seed, kinds)


def test_a_declared_format_the_values_do_not_follow_is_said_so() -> None:
    df = _table(3000)  # ISO timestamps declared as DD.MM.YYYY: no value is written so
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(8),
                                  ledger=Ledger(Budget.zcdp(1.0)),
                                  types={"pickup": "date:%d.%m.%Y"})  # fmt: skip
    notes = column_notes(domain, report)
    assert any(n.startswith("pickup: declared; too few values are dates written %d.%m.%Y")
               for n in notes), notes  # fmt: skip
    assert any(n.startswith("day: read as dates (the ISO 8601 rule); learned") for n in notes)


@pytest.mark.parametrize("kind", ["date:%d.%m", "date:", "date:%Y-%Q", "dates"])
def test_a_bad_date_kind_is_refused(kind: str) -> None:
    with pytest.raises(DPQueryError, match=r"types\['day'\]"):
        learn_domain(_table(50), rho=1.0, delta=1e-9, rng=np.random.default_rng(0),
                     ledger=Ledger(Budget.zcdp(1.0)), types={"day": kind})  # fmt: skip


# --- a release from the raw table, and its domain given back ------------------------------
def _synth(data: Path, out: Path, *extra: str) -> list[str]:
    return ["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out", str(out),
            "--quiet", *extra]  # fmt: skip


def test_a_date_column_round_trips_with_its_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    df = _table(4000)
    df.loc[::50, "pickup"] = "2019-02-30 10:00:00"  # not a day: released as missing
    df.loc[1::50, "pickup"] = "03/04/2019 10:00"  # another format: missing too
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    df.to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "(2 of them dates)" in err and "note: pickup: read as dates" in err
    domain = Domain.load(out.with_suffix(".domain.json"))
    assert domain["pickup"].time == "%Y-%m-%d %H:%M:%S"  # type: ignore[union-attr]
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    stamp = re.compile(r"2019-03-\d\d \d\d:\d\d:\d\d")
    assert released["pickup"].map(lambda v: v == "" or bool(stamp.fullmatch(v))).all()
    assert released["day"].map(lambda v: bool(re.fullmatch(r"2019-0[34]-\d\d", v))).all()
    assert (released["pickup"] == "").mean() < 0.1
    again = tmp_path / "again.csv"  # the learned domain given back encodes and decodes dates
    clean = tmp_path / "clean.csv"
    _table(4000).to_csv(clean, index=False)
    assert main(_synth(clean, again, "--domain", str(out.with_suffix(".domain.json")))) == 0
    twice = pd.read_csv(again, dtype=str, keep_default_na=False)
    assert twice["pickup"].map(lambda v: v == "" or bool(stamp.fullmatch(v))).all()
    assert twice["day"].str.fullmatch(r"2019-0[34]-\d\d").all()
    # the learned domain reads a bad date as the learning did: missing ("texts": "missing")
    assert main(_synth(data, tmp_path / "reused.csv", "--domain",
                       str(out.with_suffix(".domain.json")))) == 0  # fmt: skip
    capsys.readouterr()
    # a domain without that key reads it as the number rule reads text: an error naming it
    strict = tmp_path / "strict.json"
    obj = json.loads(out.with_suffix(".domain.json").read_text())
    for attr in obj["attributes"]:
        attr.pop("texts", None)
    strict.write_text(json.dumps(obj))
    assert main(_synth(data, tmp_path / "bad.csv", "--domain", str(strict))) == 2
    err = capsys.readouterr().err
    assert "are not dates written %Y-%m-%d %H:%M:%S: '2019-02-30 10:00:00'" in err
    learned = tmp_path / "d.json"  # the learning alone shows the kind and its format
    assert main(["domain", "learn", "--data", str(data), "--epsilon", "1", "--seed", "0",
                 "--out", str(learned)]) == 0  # fmt: skip
    shown = capsys.readouterr().out
    assert re.search(r"pickup +date .* written %Y-%m-%d %H:%M:%S", shown), shown
    assert re.search(r"day +date .* written %Y-%m-%d ", shown), shown
    assert "note: pickup: read as dates" in shown
    assert Domain.load(learned)["day"].time == "%Y-%m-%d"  # type: ignore[union-attr]


def test_a_given_domain_with_a_time_column_encodes_and_decodes_dates() -> None:
    edges = tuple(float(iso_cell(d)[0]) for d in ("2019-03-01", "2019-03-15", "2019-04-01"))  # type: ignore[index]
    attr = Numeric("t", edges, out_of_range="clip", missing=True, integer=True, time="%Y-%m-%d")
    domain = Domain((attr,))
    assert Domain.from_dict(domain.to_dict()) == domain
    data = encode(pd.DataFrame({"t": ["2019-03-02", None, "2019-03-20 10:00:00"]}), domain)
    assert data.n == 3
    with pytest.raises(DomainError, match="integer=True"):
        Numeric("t", edges, integer=False, time="%Y-%m-%d")
    with pytest.raises(DomainError, match="%Y"):
        Numeric("t", edges, integer=True, time="%d/%m")


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [("date:%d.%m", "with %Y"), ("datetime", "kind must be numeric, categorical, date")],
)
def test_the_cli_refuses_a_bad_date_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, fragment: str
) -> None:
    data = tmp_path / "T.csv"
    _table(100).to_csv(data, index=False)
    for argv in (_synth(data, tmp_path / "s.csv", "--types", f"day={kind}"),
                 ["domain", "learn", "--data", str(data), "--epsilon", "1", "--out",
                  str(tmp_path / "d.json"), "--types", f"day={kind}"]):  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "--types day:" in err and fragment in err, err
        assert not (tmp_path / "s.csv").exists() and not (tmp_path / "d.json").exists()


# --- decimal commas ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "plain"),
    [("12,5", "12.5"), ("-1.234,50", "-1234.50"), ("0,05", "0.05"), ("1,234,5", None),
     ("12.5", None), ("1.23,4", None), ("abc", None), (",5", None)],
)  # fmt: skip
def test_a_decimal_comma_reads_as_its_plain_text(text: str, plain: str | None) -> None:
    assert decimal_comma(text) == plain


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_semicolon_file_with_decimal_commas_releases_as_the_file_with_dots(
    tmp_path: Path,
) -> None:
    df = _table(1500).drop(columns=["pickup", "day"])
    dots, commas = tmp_path / "dots.csv", tmp_path / "commas.csv"
    df.to_csv(dots, index=False)
    df.assign(fare=df["fare"].str.replace(".", ",")).to_csv(commas, index=False, sep=";")
    assert re.search(r"\n\d+,\d\d;", commas.read_text())
    assert read_table(commas, as_text=True).equals(read_table(dots, as_text=True))
    outs = []
    for data in (dots, commas):
        out = tmp_path / f"s-{data.stem}.csv"
        assert main(_synth(data, out)) == 0
        outs.append((_digest(out), _digest(out.with_suffix(".domain.json"))))
    assert outs[0] == outs[1]
    again = tmp_path / "again.csv"  # the learned domain encodes the comma file too
    assert main(_synth(commas, again, "--domain", str(tmp_path / "s-dots.domain.json"))) == 0


def test_decimal_commas_beside_dot_thousands_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "T.csv"
    data.write_text("price;colour\n12,5;red\n1.234;blue\n" + "3,25;red\n" * 200)
    assert main(_synth(data, tmp_path / "s.csv")) == 2
    err = capsys.readouterr().err
    assert "column 'price' holds numbers written with a decimal comma ('12,5')" in err
    assert "'1.234'" in err and not (tmp_path / "s.csv").exists()


def test_dates_spread_thinly_over_a_century_keep_their_early_years(tmp_path: Path) -> None:
    """Dates over 1870-2025, denser lately (a league's debuts), in a table of 26 columns:
    a year holds about 30 to 250 records against a year's noise sd near 110, so the years'
    bounds stop at the densest years; the blocks of 10, 20 or 40 years beyond them
    (TIME_GROW_YEARS, a block passing at FAR_WINDOW_RATE) take the early decades back. Over
    seeds 0-3 the learned lower bound keeps 0.87 to 0.97 of the dates (0.54 to 0.87 without
    the blocks); the test asks for a mean of 0.8."""
    rng = np.random.default_rng(0)
    n = 20_000
    years = np.floor(1870 + 155 * np.sqrt(rng.random(n))).astype(int)
    debut = pd.to_datetime(years.astype(str) + "-01-01") + pd.to_timedelta(
        rng.integers(0, 365, n), unit="D"
    )
    table = pd.DataFrame({"debut": debut.strftime("%Y-%m-%d")})
    for j in range(25):
        table[f"c{j}"] = rng.integers(0, 4, n)
    data = tmp_path / "T.csv"
    table.to_csv(data, index=False)
    kept = []
    for seed in range(4):
        out = tmp_path / f"d{seed}.json"
        argv = ["domain", "learn", "--data", str(data), "--epsilon", "0.6", "--seed", str(seed)]
        assert main([*argv, "--out", str(out)]) == 0
        attr = Domain.load(out)["debut"]
        assert isinstance(attr, Numeric)
        kept.append(float((debut >= pd.Timestamp(attr.edges[0], unit="s")).mean()))
    assert np.mean(kept) >= 0.8, kept
