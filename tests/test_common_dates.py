"""Dates in a common format other than ISO 8601 (``docs/learn.md``, "Dates in other
formats"): the public list, the common formats test on the profile's charge, the format
learned and the values written back in it.

The learnings are seeded at a rho (1.0) where the rules' outcomes are far from their
thresholds (the counts are hundreds of noise sd from every bar): no assertion below
depends on the draw, except where a test states its false-failure rate."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.dates import (
    COMMON_FORMATS,
    ORDER_CLASSES,
    common_cell,
    common_format,
    format_unit,
    times_of,
    written,
)
from dpquery.data.encode import encode
from dpquery.domain_learning import (
    BOUNDS_SHARE,
    DECIMALS_SHARE,
    LEARNING_NOISY_N_SHARE,
    NUMBER_SHARE,
    NUMBER_SIGMAS,
    PROFILE_SHARE,
    CommonTest,
    common_rule,
    learn_domain,
)
from dpquery.pipeline.learning import column_notes
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

EPOCH = dt.datetime(1970, 1, 1)


def _hours(n: int, start: dt.datetime = dt.datetime(2016, 10, 3)) -> list[dt.datetime]:
    """``n`` hours from ``start``, one row each (an hourly series)."""
    return [start + dt.timedelta(hours=i) for i in range(n)]


def _us(t: dt.datetime) -> str:
    return f"{t.month}/{t.day}/{t.year} {t.hour}:{t.minute:02d}"  # 10/3/2016 0:00


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A KeyWestWater-like table: an hourly series written ``M/D/YYYY H:MM``, a reading, an
    index; and a day-first date column."""
    rng = np.random.default_rng(seed)
    hours = _hours(n)
    days = [dt.date(2019, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 365, n)]
    return pd.DataFrame({
        "DateTime": [_us(t) for t in hours],
        "temp": [f"{x:.1f}" for x in rng.normal(80, 4, n)],
        "t": np.arange(1, n + 1),
        "day": [d.strftime("%d.%m.%Y") for d in days],
    })  # fmt: skip


def _seconds(t: dt.datetime) -> int:
    return int((t - EPOCH).total_seconds())


# --- the public list ------------------------------------------------------------------------
def test_the_public_list_and_its_classes() -> None:
    assert len(COMMON_FORMATS) == 96 == len(set(COMMON_FORMATS))
    assert common_format("mdy", "/", 1, False) == "%-m/%-d/%Y %-H:00"
    assert "%-m/%-d/%Y %-H:00" in COMMON_FORMATS and "%d.%m.%Y" in COMMON_FORMATS
    assert "%Y/%m/%d %H:%M:%S" in COMMON_FORMATS and "%Y-%m-%d" not in COMMON_FORMATS
    assert [format_unit(f) for f in ("%-m/%-d/%Y", "%-m/%-d/%Y %-H:00", "%d.%m.%Y %H:%M:00",
                                     "%Y/%m/%d %H:%M:%S")] == [86400, 3600, 60, 1]  # fmt: skip
    cases = {
        "10/13/2016": 0, "13/10/2016": 1, "10/3/2016 0:00": 2, "2016/10/03": 3,
        "31.12.2019 23:59:59": 1, "1-2-2020": 2, "2016.1.3": 3,
    }  # fmt: skip
    for text, cls in cases.items():
        cell = common_cell(text)
        assert cell is not None and cell.order_class == cls, (text, cell)
        assert ORDER_CLASSES[cls]


@pytest.mark.parametrize(
    "text",
    ["2016-10-03", "2016-1-3", "13/13/2016", "2/30/2016", "1/2/16", "10/3/2016 24:00",
     "10/3/2016 1:60", "10/3/2016T1:00", "10/3/2016 1:00 PM", "3.5", "1/2", "10/3-2016", ""],
)  # fmt: skip
def test_what_is_not_a_common_date(text: str) -> None:
    assert common_cell(text) is None


def test_month_and_day_first_read_as_datetime_reads_them() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        t = dt.datetime(1900, 1, 1) + dt.timedelta(seconds=int(rng.integers(0, 200 * 365 * 86400)))
        mdy = common_cell(t.strftime("%m/%d/%Y %H:%M:%S"))
        dmy = common_cell(f"{t.day}.{t.month}.{t.year}")
        ymd = common_cell(t.strftime("%Y/%m/%d %H:%M"))
        assert mdy is not None and mdy.seconds["mdy"] == _seconds(t)
        assert dmy is not None and dmy.seconds["dmy"] == _seconds(t.replace(hour=0, minute=0,
                                                                             second=0))  # fmt: skip
        assert ymd is not None and ymd.seconds["ymd"] == _seconds(t.replace(second=0))


@pytest.mark.parametrize("fmt", COMMON_FORMATS)
def test_each_format_round_trips(fmt: str) -> None:
    """Times at the format's precision are written and read back to the same second; the
    padded formats write what ``strftime`` writes; the unpadded drop the zeros."""
    unit = format_unit(fmt)
    rng = np.random.default_rng(1)
    secs = rng.integers(-2_000_000_000, 4_000_000_000, 200) // unit * unit
    missing = np.zeros(secs.size, dtype=bool)
    missing[::7] = True
    text = written(secs.astype(float), missing, fmt)
    assert text.isna().to_numpy().tolist() == missing.tolist()
    back = times_of(text, fmt).to_numpy()
    assert np.array_equal(back[~missing], secs[~missing].astype(float))
    stamps = [EPOCH + dt.timedelta(seconds=int(s)) for s in secs[~missing]]
    if "%-" not in fmt:
        assert text[~missing].tolist() == [t.strftime(fmt) for t in stamps]
    else:  # each field without its zeros, the rest as strftime writes it

        def unpadded(t: dt.datetime) -> str:
            out = fmt
            for flag, value in (("%-m", t.month), ("%-d", t.day), ("%-H", t.hour)):
                out = out.replace(flag, str(value))
            return t.strftime(out)

        assert text[~missing].tolist() == [unpadded(t) for t in stamps]


def test_a_learned_format_in_a_domain_round_trips_through_json() -> None:
    edges = tuple(float(_seconds(dt.datetime(2016, m, 1))) for m in (10, 11, 12))
    attr = Numeric("t", edges, out_of_range="clip", missing=True, integer=True,
                   time="%-m/%-d/%Y %-H:00", texts="missing")  # fmt: skip
    domain = Domain((attr,))
    again = Domain.from_dict(domain.to_dict())
    assert again == domain and again["t"].time == "%-m/%-d/%Y %-H:00"  # type: ignore[union-attr]
    data = encode(pd.DataFrame({"t": ["10/3/2016 0:00", None, "11/20/2016 13:00", "x"]}), domain)
    assert data.n == 4


# --- the test: disjoint classes, on the profile's charge -------------------------------------
def _classes(value: object) -> np.ndarray:
    """The profile's vector of one value: (missing, number, ISO date, the four order classes)."""
    col = domain_learning._read(pd.Series([value], dtype=object))
    return np.concatenate([[col.missing, col.numbers.size, col.times.size],
                           domain_learning._common_counts(col)])  # fmt: skip


def test_the_classes_are_disjoint_so_the_vector_moves_by_its_sensitivity() -> None:
    """Each value is in one class at most: replacing a record moves the vector by L2 at
    most sqrt(2), adding or removing one by at most 1 (the profile's sensitivity)."""
    values = [
        None,
        "7",
        "3.5",
        "1,000",
        "2019-03-04",
        "2019-03-04 10:00",
        "10/3/2016 0:00",
        "13/10/2016",
        "10/13/2016",
        "2016/10/03",
        "2016.1.3",
        "abc",
        "2/30/2016",
        True,
    ]
    vecs = [_classes(v) for v in values]
    assert all(v.sum() <= 1 for v in vecs)
    for a in vecs:
        assert np.linalg.norm(a) <= 1  # add or remove
        for b in vecs:
            assert np.linalg.norm(a - b) <= math.sqrt(2) + 1e-12  # replace one


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_common_date_column_is_charged_exactly_its_plan_on_neighbours(neighbours: str) -> None:
    """Tables of ``n`` and ``n + 1`` records: the common formats test adds no charge; a
    common date column's charges are the hand-computed shares of its rho ``c``: profile
    0.1 c, format 0.1 c, years 0.2 c, months 0.2 c, quantiles 0.4 c, as an ISO one's."""
    big = _table(3001)
    rho = 1.0
    share = LEARNING_NOISY_N_SHARE if neighbours == ADD_REMOVE else 0.0
    c = (1 - share) * rho * (1 - 1e-9) / 4
    rest = (1 - PROFILE_SHARE) * c
    fmt_share = DECIMALS_SHARE / (1 - PROFILE_SHARE)
    bounds = BOUNDS_SHARE * (1 - fmt_share) * rest
    for df in (big.iloc[:3000], big):
        ledger = Ledger(Budget.zcdp(rho))
        domain, report = learn_domain(df.reset_index(drop=True), rho=rho, delta=1e-9,
                                      rng=np.random.default_rng(3), ledger=ledger,
                                      neighbours=neighbours)  # fmt: skip
        assert [k.kind for k in report.columns] == ["date", "numeric", "numeric", "date"]
        spent: dict[str, float] = {}
        for e in ledger.entries:
            cost = e.charge.cost
            rho_of = e.charge.count * (cost.rho if hasattr(cost, "rho") else cost.epsilon**2 / 8)
            spent[e.charge.mechanism] = spent.get(e.charge.mechanism, 0.0) + rho_of
        expected = {
            "DateTime: profile (discrete Gaussian)": PROFILE_SHARE * c,
            "DateTime: date format (discrete Gaussian)": fmt_share * rest,
            "DateTime: bounds, years (discrete Gaussian histogram)": bounds / 2,
            "DateTime: bounds, months (discrete Gaussian histogram)": bounds / 2,
            "DateTime: quantiles (exponential mechanism)": (1 - BOUNDS_SHARE)
            * (1 - fmt_share) * rest,
        }  # fmt: skip
        for name, value in expected.items():
            assert spent[name] == pytest.approx(value, rel=1e-12), name
        assert not [k for k in spent if k.startswith("DateTime: partition")]
        assert report.columns[0].rho == pytest.approx(c)
        assert domain["DateTime"].time == "%-m/%-d/%Y %-H:00"  # type: ignore[union-attr]
        assert domain["day"].time == "%d.%m.%Y"  # type: ignore[union-attr]
        assert report.columns[0].noisy["date_order"] == "mdy"
        assert report.columns[3].noisy["date_order"] == "dmy"
        lo = float(_seconds(dt.datetime(2016, 10, 1)))
        assert domain["DateTime"].edges[0] == lo  # type: ignore[union-attr]


def test_the_test_costs_no_charge_and_no_draw_of_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A table whose text columns the test draws for learns the same domain, on the same
    ledger, as with the test drawing nothing: its noise is a stream of its own."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], 3000),
                       "x": rng.normal(size=3000).round(2)})  # fmt: skip
    runs = []
    for patched in (False, True):
        if patched:
            monkeypatch.setattr(
                domain_learning,
                "_common_test",
                lambda col, rho, present, ctx: CommonTest(None, "", (0,) * 4),
            )
        ledger = Ledger(Budget.zcdp(1.0))
        domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(7),
                                      ledger=ledger)  # fmt: skip
        runs.append(
            (
                domain.to_dict(),
                [r.noisy for r in report.columns],
                [(e.charge.mechanism, e.charge.cost) for e in ledger.entries],
            )
        )
    assert runs[0] == runs[1]


def _noisy_rule(true: list[int], sigma: float, rng: np.random.Generator) -> CommonTest:
    noise = sample_discrete_gaussian(sigma**2, 4, rng)
    n = sum(true)
    return common_rule([int(x) for x in np.array(true) + noise], sigma, n, n, False)


def test_seeded_rates_of_the_rule() -> None:
    """At the noise of a small table's test (sd 20 on 1,000 values): 200 draws each. A
    month-first column (30% month first only) is taken every time: a false failure needs a
    draw 6.6 sd below a bar or 11 sd past the evidence's, under 1e-10 a draw. A column in
    either order alone is refused every time: a false failure needs an order's noise past
    4 sd, 6e-5 a draw, 1.3% in 200 draws. A column of both orders (25% each) is refused as
    such every time: 8.5 sd from the evidence's bar."""
    sigma = 20.0
    rng = np.random.default_rng(11)
    assert all(_noisy_rule([300, 0, 700, 0], sigma, rng).order == "mdy" for _ in range(200))
    assert all(_noisy_rule([0, 300, 700, 0], sigma, rng).order == "dmy" for _ in range(200))
    assert all(_noisy_rule([0, 0, 0, 1000], sigma, rng).order == "ymd" for _ in range(200))
    either = [_noisy_rule([0, 0, 1000, 0], sigma, rng) for _ in range(200)]
    assert all(t.order is None and t.reason == "either" for t in either)
    mixed = [_noisy_rule([250, 250, 500, 0], sigma, rng) for _ in range(200)]
    assert all(t.order is None and t.reason == "both" for t in mixed)
    # the bar: the order's values near NUMBER_SHARE of the non-missing, at NUMBER_SIGMAS sd
    margin = NUMBER_SIGMAS * sigma * math.sqrt(2 + NUMBER_SHARE**2)
    assert common_rule([200, 0, 790, 0], sigma, 1000, 1000, False).order == "mdy"
    short = int(NUMBER_SHARE * 1000 - margin) - 1
    assert common_rule([200, 0, short - 200, 0], sigma, 1000, 1000, False).order is None


def test_a_table_of_text_and_numbers_holds_no_common_date() -> None:
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"id": [f"x{i}" for i in range(3000)], "ratio": [f"{a}/{b}" for a, b in
                       rng.integers(1, 40, (3000, 2))], "x": rng.normal(size=3000)})  # fmt: skip
    _, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(4),
                             ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert [c.kind for c in report.columns] == ["categorical", "categorical", "numeric"]
    assert not any("date_order" in c.noisy for c in report.columns)


# --- what is learned ---------------------------------------------------------------------------
def test_a_column_mixing_formats() -> None:
    """Half ISO, half month first: neither rule reads 95% of the values, so the column is
    text. Mostly month first with a few ISO dates: a month-first date column, the ISO dates
    then not dates in its format (released as missing)."""
    n = 3000
    hours = _hours(n)
    half = [t.strftime("%Y-%m-%d %H:%M") if i % 2 else _us(t) for i, t in enumerate(hours)]
    few = [t.strftime("%Y-%m-%d %H:%M") if i % 100 == 0 else _us(t) for i, t in enumerate(hours)]
    df = pd.DataFrame({"half": half, "few": few})
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert [c.kind for c in report.columns] == ["categorical", "date"]
    assert domain["few"].time == "%-m/%-d/%Y %-H:00"  # type: ignore[union-attr]
    read = times_of(df["few"], domain["few"].time)  # type: ignore[union-attr]
    assert int(read.isna().sum()) == 30


def test_layouts_are_learned(tmp_path: Path) -> None:
    """The separator, the leading zeros, the time written and its precision."""
    n = 3000
    hours = _hours(n, dt.datetime(2018, 1, 1, 0, 0))
    minutes = [t + dt.timedelta(minutes=int(m)) for t, m in
               zip(hours, np.random.default_rng(0).integers(0, 60, n), strict=True)]  # fmt: skip
    df = pd.DataFrame({
        "eu": [t.strftime("%d/%m/%Y %H:%M") for t in minutes],
        "de": [t.strftime("%d.%m.%Y") for t in hours],
        "jp": [t.strftime("%Y/%m/%d %H:%M:%S") for t in minutes],
        "us": [f"{t.month}-{t.day}-{t.year}" for t in hours],
    })  # fmt: skip
    domain, _ = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(6),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    times = [domain[c].time for c in df.columns]  # type: ignore[union-attr]
    assert times == ["%d/%m/%Y %H:%M", "%d.%m.%Y", "%Y/%m/%d %H:%M:00", "%-m-%-d-%Y"]


def test_either_order_alone_is_refused_and_said_so() -> None:
    """Every day at most 12: the order cannot be told, so the column is text and the note
    says how to declare it; declared, it is a date column."""
    rng = np.random.default_rng(3)
    days = [dt.date(2020, int(m), int(d)) for m, d in rng.integers(1, 13, (3000, 2))]
    df = pd.DataFrame({"when": [d.strftime("%m/%d/%Y") for d in days]})
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(7),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert report.columns[0].kind == "categorical"
    assert report.columns[0].noisy["date_order"] == "either"
    notes = column_notes(domain, report)
    assert any("the order is never guessed" in n and "--types 'when=date:%m/%d/%Y'" in n
               for n in notes), notes  # fmt: skip
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(7),
                                  ledger=Ledger(Budget.zcdp(1.0)),
                                  types={"when": "date:%m/%d/%Y"})  # fmt: skip
    assert report.columns[0].kind == "date" and domain["when"].time == "%m/%d/%Y"  # type: ignore[union-attr]


def test_a_release_writes_the_dates_back_in_their_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(4000).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "note: DateTime: read as dates (a common format, mdy order)" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    # a learned date column keeps a missing category (its texts read as missing): the noise
    # of its empty cell releases a few
    hour = r"1?\d/[1-3]?\d/201[67] (1?\d|2[0-3]):00"
    for col, pattern in (("DateTime", hour), ("day", r"[0-3]\d\.[01]\d\.20(19|20)")):
        written = released[col][released[col] != ""]
        assert written.str.fullmatch(pattern).all(), col
        assert len(written) > 0.98 * len(released), col
    hours = times_of(released["DateTime"].replace("", None), "%-m/%-d/%Y %-H:00")
    assert hours.notna().sum() > 0.98 * len(released)
    again = tmp_path / "again.csv"  # the learned domain given back reads them alike
    assert (
        main(
            [
                "synth",
                "--data",
                str(data),
                "--epsilon",
                "1",
                "--seed",
                "1",
                "--out",
                str(again),
                "--quiet",
                "--domain",
                str(out.with_suffix(".domain.json")),
            ]
        )
        == 0
    )
    twice = pd.read_csv(again, dtype=str)["DateTime"]
    assert times_of(twice, "%-m/%-d/%Y %-H:00").notna().sum() > 0.98 * len(twice)
