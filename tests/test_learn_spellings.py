"""Dates written with a month's name in other spellings (``jan``, ``JAN``, ``Jan.``,
``Sept``, ``Mon, 03 Jan 2020``, ``Monday, January 3, 2020``, ``03-Jan-2020``, ``3-JAN-20``),
learned from a raw table (``docs/learn.md``, "Dates in other spellings"): further cells of
the profile under its one charge, released in the spelling learned.

The learnings are seeded at a rho where the rules' outcomes are far from their thresholds
(hundreds of noise sd), so no assertion depends on the draw."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_written_forms import _learn, _spent, learned_alike

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.dates import (
    NAMED_CLASSES,
    NAMED_FORMATS,
    NAMED_SPELLINGS,
    SPELLING_CELLS,
    SPELLING_FORMAT_CELLS,
    check_format,
    named_cell,
    spelled_cell,
    times_of,
    written,
)
from dpquery.domain_learning import BOUNDS_SHARE, LEARNING_NOISY_N_SHARE, PROFILE_SHARE
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

JAN3 = int(dt.datetime(2022, 1, 3, tzinfo=dt.UTC).timestamp())  # a Monday
SEP9 = int(dt.datetime(1999, 9, 9, tzinfo=dt.UTC).timestamp())  # a Thursday
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
AP = ("Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.",
      "Dec.")  # fmt: skip


def _days(n: int, seed: int) -> list[dt.date]:
    rng = np.random.default_rng(seed)
    return [dt.date(2018, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 900, n)]


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """Days over about two and a half years in five spellings, an amount."""
    days = _days(n, seed)
    rng = np.random.default_rng(seed + 1)
    return pd.DataFrame({
        "sent": [f"{WEEKDAYS[d.weekday()][:3]}, {d.day:02d} {MONTHS[d.month - 1][:3]} {d.year}"
                 for d in days],
        "due": [f"{WEEKDAYS[d.weekday()]}, {MONTHS[d.month - 1]} {d.day}, {d.year}"
                for d in days],
        "booked": [f"{d.day}-{MONTHS[d.month - 1][:3].upper()}-{d.year % 100:02d}" for d in days],
        "opened": [f"{d.day} {MONTHS[d.month - 1][:3].lower()} {d.year}" for d in days],
        "paid": [f"{AP[d.month - 1]} {d.day}, {d.year}" for d in days],
        "amount": [f"{x:.2f}" for x in rng.lognormal(5, 1, n)],
    })  # fmt: skip


SPELLED = {
    "sent": "%a, %d %b %Y",
    "due": "%A, %B %d, %Y",
    "booked": "%d-%^b-%y",
    "opened": "%d %~b %Y",
    "paid": "%b. %d, %Y",
}


def test_the_spelling_of_a_value() -> None:
    """Each value's class by hand: ``36 layout + 12 weekday + 4 case + style`` (style 0
    abbreviated, 1 in full, 2 dotted, 3 May), the hyphens' ``72 + 3 (two-digit year) +
    case``."""
    cases = {
        "03 Jan 2022": 0, "3 January 2022": 1, "3 Jan. 2022": 2, "3 JAN 2022": 4,
        "3 jan 2022": 8, "3 january 2022": 9, "Jan 3, 2022": 36, "JANUARY 3, 2022": 41,
        "Mon, 03 Jan 2022": 12, "Monday, 03 Jan 2022": 24, "MON, 03 JAN 2022": 16,
        "Monday, January 3, 2022": 61, "monday, jan. 3, 2022": 70, "03-Jan-2022": 72,
        "3-JAN-2022": 73, "03-jan-2022": 74, "03-Jan-22": 75, "3-JAN-22": 76,
    }  # fmt: skip
    for text, cell in cases.items():
        assert spelled_cell(text) == (JAN3, cell), text
    assert spelled_cell("9 Sept 1999") == (SEP9, 0)  # Sept: September abbreviated
    assert spelled_cell("Sept. 9, 1999") == (SEP9, 38)
    assert spelled_cell("Thu, 09-SEP-99") is None  # the hyphens take no weekday
    assert spelled_cell("09-SEP-99") == (SEP9, 76)  # 99: 1999, as POSIX %y
    assert spelled_cell("09-SEP-68") is not None and spelled_cell("09-SEP-68")[0] > JAN3  # type: ignore[index]
    assert spelled_cell("3 May 2022")[1] == 3 and spelled_cell("may 3, 2022")[1] == 47  # type: ignore[index]
    for other in ("Tue, 03 Jan 2022",  # the wrong weekday
                  "Mon, 03 JAN 2022", "MONDAY, january 3, 2022",  # the weekday's case
                  "nOv 1, 2020", "3 JAn 2022",  # mixed case
                  "03-January-2022", "3 May. 2022", "3 January. 2022", "31 Nov 2020",
                  "Mon 03 Jan 2022", "Mon, 3 Jan 22", "Jan 2022", "3 Jan 1799", "2022-01-03",
                  "01/03/2022", "Monday", ""):  # fmt: skip
        assert spelled_cell(other) is None, other
    # named_cell: the four formats' classes only, as before, and Sept
    assert named_cell("3 May 2022") is not None and named_cell("3 May 2022")[1] == 2  # type: ignore[index]
    assert named_cell("January 3, 2022") == (JAN3, 4)
    assert named_cell("9 Sept 1999") == (SEP9, 0)
    for other in ("3 jan 2022", "Mon, 03 Jan 2022", "3 Jan. 2022", "03-Jan-2022"):
        assert named_cell(other) is None


def test_every_spelling_writes_and_reads_back() -> None:
    """Each of the 60 spellings writes a day (its weekday the day's, its case, AP's month
    names) that it reads back, the same day, in its own cells; the formats are accepted."""
    assert len(NAMED_SPELLINGS) == len(set(NAMED_SPELLINGS)) == 60
    assert set(NAMED_FORMATS) <= set(NAMED_SPELLINGS)
    days = ["2020-01-03", "2019-05-31", "1999-09-09", "2021-12-25", "2020-06-01", "2068-03-01"]
    secs = np.array(days, dtype="datetime64[s]").astype(np.int64)
    for fmt in NAMED_SPELLINGS:
        assert check_format(fmt) == fmt
        texts = written(secs, np.zeros(len(days), dtype=bool), fmt)  # %y: 68 reads 2068
        assert (times_of(texts, fmt).to_numpy() == secs).all(), (fmt, list(texts))
        for t in texts:
            cell = spelled_cell(t)
            assert cell is not None and cell[1] in SPELLING_FORMAT_CELLS[fmt], (fmt, t)
    shown = written(secs[:3], np.zeros(3, dtype=bool), "%A, %b. %d, %Y").tolist()
    assert shown == ["Friday, Jan. 03, 2020", "Friday, May 31, 2019", "Thursday, Sept. 09, 1999"]
    assert written(secs[:1], np.zeros(1, dtype=bool), "%~a, %d %~b %Y")[0] == "fri, 03 jan 2020"
    assert written(secs[:1], np.zeros(1, dtype=bool), "%d-%^b-%y")[0] == "03-JAN-20"


def _cells(value: str | None) -> np.ndarray:
    """One value's cells of the profile: missing, a number, an ISO date, a day written
    YYYYMMDD, the 78 spellings' classes."""
    col = domain_learning._read(pd.Series([value], dtype=object))
    counts, _ = domain_learning.spelled_times(col)
    digits = int(col.forms[-1])
    return np.array([col.missing, col.numbers.size - digits, col.times.size, digits, *counts])


def test_each_value_is_in_one_cell_of_the_profile() -> None:
    """A value is missing, a number, an ISO date, a day written YYYYMMDD, a date with a
    month's name in one of the 78 classes, or none of them: the profile's vector moves by
    L2 at most sqrt(2) (replace-one) and 1 (add/remove) with the spellings' cells in it, and
    the four formats' six classes are six of them."""
    values = [None, "01 Nov 2020", "Mon, 03 Jan 2022", "3-JAN-22", "3 jan 2022",
              "Jan. 3, 2022", "May 3, 2022", "2020-11-01", "20201101", "3.5", "abc",
              "Tue, 03 Jan 2022"]  # fmt: skip
    vecs = [_cells(v) for v in values]
    assert all(v.sum() <= 1 and v.min() >= 0 for v in vecs)
    for a in vecs:
        for b in vecs:
            assert np.linalg.norm(a - b) <= math.sqrt(2) + 1e-12
    assert SPELLING_CELLS == 78 and len(set(NAMED_CLASSES)) == 6
    for v in values:  # the six classes count what the named cells count, no more
        col = domain_learning._read(pd.Series([v], dtype=object))
        named, _ = domain_learning.named_times(col)
        spelled, _ = domain_learning.spelled_times(col)
        assert list(named) == [spelled[c] for c in NAMED_CLASSES]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_the_charges_are_the_plan_on_neighbouring_tables(neighbours: str) -> None:
    """Tables of ``n`` and ``n + 1`` records (add/remove) and two of ``n`` records differing
    in one (replace-one: a value of each spelled column moved to another cell, ``7``): the
    spellings' cells add no charge; each such column's charges are a declared date
    column's, hand-computed from its rho ``c``: profile 0.1 c, years 0.225 c, months
    0.225 c, quantiles 0.45 c; no partition selection."""
    big = _table(3001)
    if neighbours == ADD_REMOVE:
        tables = [big.iloc[:3000].reset_index(drop=True), big]
    else:
        other = big.iloc[:3000].copy()
        other.loc[1, list(SPELLED)] = ["7", "Mon, 03 Jan 2022", "03 Jan 2022", "3-JAN-22",
                                       "Tue, 03 Jan 2022"]  # fmt: skip
        tables = [big.iloc[:3000].reset_index(drop=True), other]
    share = LEARNING_NOISY_N_SHARE if neighbours == ADD_REMOVE else 0.0
    c = (1 - share) * (1 - 1e-9) / 6
    dated = (1 - PROFILE_SHARE) * c
    runs = []
    for df in tables:
        domain, report, ledger = _learn(df, neighbours)
        spent = _spent(ledger)
        for col, fmt in SPELLED.items():
            assert domain[col].time == fmt, col  # type: ignore[union-attr]
            assert spent[f"{col}: profile (discrete Gaussian)"] == pytest.approx(0.1 * c)
            for part in ("years", "months"):
                key = f"{col}: bounds, {part} (discrete Gaussian histogram)"
                assert spent[key] == pytest.approx(BOUNDS_SHARE * dated / 2)
            assert spent[f"{col}: quantiles (exponential mechanism)"] == pytest.approx(
                (1 - BOUNDS_SHARE) * dated
            )
            assert f"{col}: partition selection (discrete Gaussian)" not in spent
        for r in report.columns:  # type: ignore[attr-defined]
            assert r.rho <= c * (1 + 1e-12)
        runs.append(sorted(spent.items()))
    assert [k for k, _ in runs[0]] == [k for k, _ in runs[1]]
    assert np.allclose([v for _, v in runs[0]], [v for _, v in runs[1]], rtol=1e-12)


def _without_spellings(col: object, rho: float, ctx: object, named: list[int]) -> list[int]:
    """The spellings' cells not drawn: the named classes' noisy counts, 0 elsewhere."""
    out = [0] * SPELLING_CELLS
    for c, v in zip(NAMED_CLASSES, named, strict=True):
        out[c] = v
    return out


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_table_without_spellings_is_learned_as_without_their_cells(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """A table with no date in another spelling (text, month and weekday names alone,
    numbers, ISO dates, common formats, the four formats' dates; 3,000 and 400 records)
    learns the same domain, report and ledger as with the further cells not drawn: their
    noise is a stream of their own."""
    rng = np.random.default_rng(0)
    n = 3000
    days = _days(n, 2)
    big = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "month": rng.choice(["jan", "DEC", "Sept.", "Mon"], n),
        "x": [f"{v:.2f}" for v in rng.normal(size=n)],
        "when": [f"2019-01-{d:02d}" for d in rng.integers(1, 29, n)],
        "us": [f"{m}/{d}/2019" for m, d in zip(rng.integers(1, 13, n), rng.integers(13, 29, n),
                                               strict=True)],
        "day": [d.strftime("%d %b %Y") for d in days],
    })  # fmt: skip
    learned_alike(monkeypatch, big, neighbours, "_spelled_test", _without_spellings)


def test_a_declared_type_wins_and_mixed_spellings_stay_text() -> None:
    df = _table(3000)
    declared, _, _ = _learn(df, types={"sent": "categorical"})
    assert not isinstance(declared["sent"], Numeric)
    rng = np.random.default_rng(1)  # half one spelling, half another: text, as before
    mixed = df.assign(sent=np.where(rng.random(len(df)) < 0.5, df["sent"], df["booked"]))
    assert not isinstance(_learn(mixed)[0]["sent"], Numeric)
    full = df.assign(paid=[f"{MONTHS[d.month - 1].lower()} {d.day}, {d.year}"
                           for d in _days(3000, 0)])  # fmt: skip
    assert _learn(full)[0]["paid"].time == "%~B %d, %Y"  # type: ignore[union-attr]  # not AP's


def test_a_release_from_the_raw_csv_writes_the_spellings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a raw CSV: every released value of each column a date in its spelling (its
    weekday the day's, its case), of the data's years; the learned domain given back reads
    them alike."""
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(4000).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "note: sent: read as dates written %a, %d %b %Y" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    for col, fmt in SPELLED.items():
        texts = released[col][released[col] != ""]
        assert len(texts) > 0.98 * len(released)
        cells = [spelled_cell(t) for t in texts]
        assert all(c is not None and c[1] in SPELLING_FORMAT_CELLS[fmt] for c in cells), col
        years = pd.to_datetime(times_of(texts, fmt), unit="s").dt.year
        assert years.between(2017, 2021).all()
    assert released["booked"].str.fullmatch(r"\d{2}-[A-Z]{3}-\d{2}").all()
    assert released["opened"].str.fullmatch(r"\d{2} [a-z]{3} \d{4}").all()
    learned = Domain.load(out.with_suffix(".domain.json"))
    assert learned["paid"].time == "%b. %d, %Y"  # type: ignore[union-attr]
    again = tmp_path / "again.csv"
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain",
                 str(out.with_suffix(".domain.json"))]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str)
    assert times_of(twice["sent"], "%a, %d %b %Y").notna().mean() > 0.98


def test_the_plan_states_the_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["written_forms"]["named_dates"]
    assert plan["spellings"] == list(NAMED_SPELLINGS) and plan["spellings_sigmas"] == 5.0
    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1"]) == 0
    assert "56 other spellings" in capsys.readouterr().out
