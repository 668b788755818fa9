"""Dates written with a time that is always midnight (``9/30/1990 0:00:00``,
``2020-01-03T00:00:00``; ``docs/learn.md``, "A time that is always midnight"): the public
formats, the format histograms' midnight cells under the one charge (their noise from a
stream of their own), the rule, and the release written at midnight.

The learnings are seeded at a rho (1.0) where the rules' outcomes are far from their
thresholds (3,000 values, the cells' noise sd below 10): no assertion below depends on the
draw."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Numeric
from dpquery.data.dates import (
    CLOCK_FORMATS,
    COMMON_FORMATS,
    COMMON_MIDNIGHT_FORMATS,
    DAY,
    ISO_CLASSES,
    ISO_MIDNIGHT_FORMATS,
    MIDNIGHT,
    MIDNIGHT_FORMATS,
    check_format,
    common_format,
    common_order,
    format_unit,
    iso_format,
    times_of,
    written,
)
from dpquery.domain_learning import (
    _finest,
    _read,
    common_format_counts,
    iso_format_counts,
    learn_domain,
)
from dpquery.pipeline.learning import column_notes
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

EPOCH = dt.datetime(1970, 1, 1)


def _days(n: int, seed: int) -> list[dt.datetime]:
    """``n`` days of 2015 and 2016 at midnight."""
    rng = np.random.default_rng(seed)
    return [dt.datetime(2015, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 731, n)]


def _us(t: dt.datetime, seconds: bool = True) -> str:
    return f"{t.month}/{t.day}/{t.year} {t.hour}:{t.minute:02d}" + (":00" if seconds else "")


def _table(n: int, written_as: str, seed: int = 0, hours: bool = False) -> pd.DataFrame:
    """A date column ``when`` (``"us"``: ``M/D/YYYY H:MM:SS``; ``"us-hm"``: ``M/D/YYYY
    H:MM``; otherwise a ``strftime`` format), at midnight or, with ``hours``, at an hour of
    the day; and an amount."""
    rng = np.random.default_rng(seed + 100)
    days = _days(n, seed)
    if hours:
        days = [d + dt.timedelta(hours=int(h)) for d, h in zip(days, rng.integers(0, 24, n),
                                                               strict=True)]  # fmt: skip
    if written_as in ("us", "us-hm"):
        when = [_us(d, written_as == "us") for d in days]
    else:
        when = [d.strftime(written_as) for d in days]
    return pd.DataFrame({"when": when, "x": [f"{v:.1f}" for v in rng.normal(20, 5, n)]})


def _learn(df: pd.DataFrame, seed: int = 4, neighbours: str = ADD_REMOVE
           ) -> tuple[Numeric, Ledger, dict[str, object]]:  # fmt: skip
    ledger = Ledger(Budget.zcdp(1.0))
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(seed),
                                  ledger=ledger, neighbours=neighbours)  # fmt: skip
    when = domain["when"]
    assert isinstance(when, Numeric) and report.columns[0].kind == "date"
    return when, ledger, report.columns[0].noisy


# --- the public formats ---------------------------------------------------------------------
def test_the_midnight_formats() -> None:
    assert len(COMMON_MIDNIGHT_FORMATS) == 32 == len(set(COMMON_MIDNIGHT_FORMATS))
    assert ISO_MIDNIGHT_FORMATS == ("%Y-%m-%d 00:00", "%Y-%m-%d 00:00:00", "%Y-%m-%dT00:00",
                                    "%Y-%m-%dT00:00:00")  # fmt: skip
    assert {"%-m/%-d/%Y 0:00:00", "%-m/%-d/%Y 0:00", "%d.%m.%Y 00:00", "%Y/%m/%d 00:00:00"} <= (
        set(COMMON_MIDNIGHT_FORMATS)
    )
    assert not set(MIDNIGHT_FORMATS) & set(COMMON_FORMATS + ISO_CLASSES + CLOCK_FORMATS)
    assert all(format_unit(f) == DAY and check_format(f) == f for f in MIDNIGHT_FORMATS)
    assert common_format("mdy", "/", MIDNIGHT + 1, False) == "%-m/%-d/%Y 0:00:00"
    assert common_format("dmy", ".", MIDNIGHT, True) == "%d.%m.%Y 00:00"
    assert common_order("%-m/%-d/%Y 0:00:00") == "mdy" and common_order("%Y-%m-%dT00:00") is None
    assert iso_format(2, True, midnight=True) == "%Y-%m-%dT00:00:00"
    assert iso_format(1, False, midnight=True) == "%Y-%m-%d 00:00"
    assert iso_format(0, True, midnight=True) == "%Y-%m-%d"  # a day: no time to write
    assert iso_format(2, True, "Z", midnight=True) == "%Y-%m-%dT%H:%M:%SZ"  # a zone's: as is


@pytest.mark.parametrize("fmt", MIDNIGHT_FORMATS)
def test_each_midnight_format_writes_the_day_at_midnight_and_reads_it(fmt: str) -> None:
    day = int((dt.datetime(2016, 10, 3) - EPOCH).total_seconds())
    secs = np.array([day, day + 13 * 3600 + 5, day - DAY + 1, 0.0])  # a time in the day: its day
    out = written(secs, np.array([False, False, False, True]), fmt)
    assert out[3] is None
    assert all(re.search(r"(^| |T)0?0:00(:00)?$", t) for t in out[:3]), out.tolist()
    back = times_of(out, fmt).to_numpy()
    assert back[:3].tolist() == [day, day, day - DAY] and np.isnan(back[3])
    # a value that is not at midnight still reads (as written): a neighbour's data encodes
    other = "10/3/2016 13:05:00" if common_order(fmt) == "mdy" else "2016-10-03 13:05:00"
    if common_order(fmt) in (None, "mdy"):
        assert times_of(pd.Series([other]), fmt)[0] == day + 13 * 3600 + 5 * 60


# --- the cells: one value in one cell of each histogram, under the one charge --------------
def test_the_common_counts_by_hand_on_neighbours() -> None:
    """The 14 counts of a column by hand, and a value moving cell: within its time form
    ``sqrt(2)``, across every histogram ``sqrt(6)`` (replace-one's bound, ``sqrt(3) sqrt(2)``);
    a record added or removed ``sqrt(3)`` (add/remove's, ``sqrt(3)``); a record that is no
    date 0."""
    values = ["9/30/1990 0:00:00"] * 5 + ["10/1/1990 0:00:00"] * 3

    def counts(vals: list[str]) -> np.ndarray:
        return common_format_counts(_read(pd.Series(vals, dtype=object)), "mdy")

    h = counts(values)
    # separators / . -; time forms none, H:00, H:MM, H:00:00, H:MM:00, H:MM:SS (not at
    # midnight); leading zeros none below 10, one without, with; midnight 0:00, 0:00:00
    assert h.tolist() == [8, 0, 0] + [0] * 6 + [0, 8, 0] + [0, 8]
    moved = counts(["9/30/1990 10:00:00", *values[1:]])  # 0:00:00 -> H:00:00
    assert (moved - h).tolist() == [0] * 6 + [1, 0, 0] + [0] * 3 + [0, -1]
    assert np.linalg.norm(moved - h) == pytest.approx(math.sqrt(2))
    far = counts(["09-30-1990 12:34:56", *values[1:]])  # a separator, form and zeros apart
    assert (far - h).tolist() == [-1, 0, 1] + [0] * 5 + [1] + [0, -1, 1] + [0, -1]
    assert np.linalg.norm(far - h) == pytest.approx(math.sqrt(3) * math.sqrt(2))
    for neighbour in (values[1:], [*values, "9/30/1990 0:00:00"]):
        assert np.linalg.norm(counts(neighbour) - h) == pytest.approx(math.sqrt(3))
    assert np.linalg.norm(counts([*values, "n/a"]) - h) == 0
    hm = counts(["10/3/2016 0:00", "10/3/2016 1:00", "10/3/2016 1:30"])  # H:MM's midnight
    assert hm[3:9].tolist() == [0, 1, 1, 0, 0, 0] and hm[12:].tolist() == [1, 0]


def test_the_iso_counts_by_hand_on_neighbours() -> None:
    """The 23 counts by hand (17 and the six cells of whole hours and minutes), and a value
    moving cell: ``sqrt(2)`` replaced (to a time of day, to a zone), 1 added or removed."""
    values = ["2020-01-03T00:00:00"] * 4 + ["2020-01-04 00:00"] * 2 + ["2020-01-05"]

    def counts(vals: list[str]) -> np.ndarray:
        return iso_format_counts(_read(pd.Series(vals, dtype=object)))

    h = counts(values)
    assert h.size == len(ISO_CLASSES) + len(ISO_MIDNIGHT_FORMATS) + 6 == 23
    assert h.tolist() == [1, 0, 0, 0, 0] + [0] * 8 + [2, 0, 0, 4] + [0] * 6
    for other, cell in (("2020-01-03T10:00:17", 4), ("2020-01-03T10:00:00", 20),
                        ("2020-01-03T00:00:00Z", 8), ("2020-01-03", 0)):  # fmt: skip
        moved = counts([other, *values[1:]]) - h
        assert moved[16] == -1 and moved[cell] == 1
        assert np.linalg.norm(moved) == pytest.approx(math.sqrt(2))
    for neighbour in (values[1:], [*values, "2020-01-04 00:00"], [*values, "2020-01-04 07:00"]):
        assert np.linalg.norm(counts(neighbour) - h) == pytest.approx(1.0)
    col = _read(pd.Series(values, dtype=object))
    assert col.time_classes.tolist()[:5] == [1, 2, 0, 0, 4]  # the profile's classes: as before


def _charges(ledger: Ledger) -> list[tuple[str, int, object]]:
    return [(e.charge.mechanism, e.charge.count, e.charge.cost) for e in ledger.entries]


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
@pytest.mark.parametrize("written_as", ["us", "%Y-%m-%dT%H:%M:%S"])
def test_midnight_is_learned_at_the_same_charges(written_as: str, neighbours: str) -> None:
    """The ledger's charges (names, counts, costs) of a column always at midnight are those
    of the same days at hours of the day, on tables of ``n`` and ``n + 1`` records: the
    midnight cells ride on the format histogram's one charge."""
    for n in (3000, 3001):
        at_midnight, at_hours = _table(n, written_as), _table(n, written_as, hours=True)
        mid, ledger_mid, _ = _learn(at_midnight, neighbours=neighbours)
        hours, ledger_hours, _ = _learn(at_hours, neighbours=neighbours)
        assert _charges(ledger_mid) == _charges(ledger_hours)
        expected = "%-m/%-d/%Y 0:00:00" if written_as == "us" else "%Y-%m-%dT00:00:00"
        assert mid.time == expected
        # whole hours: to the hour, in either family
        assert hours.time == ("%-m/%-d/%Y %-H:00:00" if written_as == "us" else
                              "%Y-%m-%dT%H:00:00")  # fmt: skip


# --- the rule ---------------------------------------------------------------------------------
def test_the_rule_by_hand() -> None:
    """Midnight when its cell holds DECIMALS_MASS (5%) of the noisy mass and 4 sd, and no
    other class does; never when none does."""
    assert _finest([1000, 30], 10.0) == 0  # floor max(51.5, 40): the others below
    assert _finest([1000, 60], 10.0) != 0  # 60 >= 53: times of day
    assert _finest([1000, 0, 0, 60], 10.0) != 0  # seconds
    assert _finest([30, 20], 10.0) != 0  # none reaches 40: the finest (a time of day)
    assert _finest([900, -50, 45], 10.0) == 0  # a negative count adds nothing to the mass


@pytest.mark.parametrize(
    ("written_as", "fmt"),
    [("us", "%-m/%-d/%Y 0:00:00"), ("us-hm", "%-m/%-d/%Y 0:00"),
     ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y 00:00:00"), ("%d.%m.%Y %H:%M", "%d.%m.%Y 00:00"),
     ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT00:00:00"), ("%Y-%m-%d %H:%M", "%Y-%m-%d 00:00"),
     ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d 00:00:00")],
)  # fmt: skip
def test_a_column_always_at_midnight_is_learned_over_days(written_as: str, fmt: str) -> None:
    when, _, noisy = _learn(_table(3000, written_as))
    assert when.time == fmt and format_unit(fmt) == DAY
    assert all(e % DAY == 0 for e in when.edges)  # the bounds and quantiles: days
    assert len(noisy["format_histogram"]) in (14, 23)  # type: ignore[arg-type]


def test_a_tenth_of_real_times_keeps_the_times_of_day() -> None:
    df = _table(3000, "us")
    df.loc[:299, "when"] = _table(300, "us", seed=1, hours=True)["when"]
    assert _learn(df)[0].time == "%-m/%-d/%Y %-H:00:00"
    df = _table(3000, "%Y-%m-%dT%H:%M:%S")
    df.loc[:299, "when"] = _table(300, "%Y-%m-%dT%H:%M:%S", seed=1, hours=True)["when"]
    assert _learn(df)[0].time == "%Y-%m-%dT%H:00:00"  # whole hours, as the common format's


def _domain_and_histograms(df: pd.DataFrame) -> tuple[dict[str, object], list[list[int]]]:
    """``df``'s learned domain (seed 5, rho 1) and each column's noisy format histogram."""
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    return domain.to_dict(), [c.noisy["format_histogram"] for c in report.columns]


def test_a_column_with_real_times_draws_as_before_whatever_the_midnight_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The histograms' other cells are drawn from the run's stream, the midnight cells from
    their own: another midnight stream changes no other cell and no domain of columns with
    times of day (about 1/24 of their values at midnight)."""
    df = pd.DataFrame({"us": _table(3000, "us", hours=True)["when"],
                       "iso": _table(3000, "%Y-%m-%d %H:%M", hours=True)["when"]})  # fmt: skip
    first, h1 = _domain_and_histograms(df)
    monkeypatch.setattr(domain_learning, "MIDNIGHT_STREAM", 12345)
    second, h2 = _domain_and_histograms(df)
    assert first == second
    assert h1[0][:12] == h2[0][:12] and h1[0][12:] != h2[0][12:]
    assert h1[1][:13] == h2[1][:13] and h1[1][13:] != h2[1][13:]


# --- the release --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("written_as", "pattern", "fmt"),
    [("us", r"1?\d/[1-3]?\d/201[56] 0:00:00", "%-m/%-d/%Y 0:00:00"),
     ("%Y-%m-%dT%H:%M:%S", r"201[56]-\d\d-\d\dT00:00:00", "%Y-%m-%dT00:00:00")],
)  # fmt: skip
def test_a_release_writes_only_midnight(
    written_as: str, pattern: str, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "T.csv"
    _table(3000, written_as).to_csv(data, index=False)
    _released_twice(data, pattern, fmt, "every time written at midnight", capsys)


def _released_twice(
    data: Path, pattern: str, fmt: str, note: str, capsys: pytest.CaptureFixture[str]
) -> pd.Series:
    """``dpquery synth`` of ``data`` (seed 0): the console says ``note``, 98% of the released
    ``when`` present, every one matching ``pattern``; then again (seed 1) with the learned
    domain given back: the same format, 98% read by ``fmt``. The first release's column."""
    out, again = data.with_name("s.csv"), data.with_name("again.csv")
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    assert note in "".join(capsys.readouterr())
    released = pd.read_csv(out, dtype=str, keep_default_na=False)["when"]
    present = released[released != ""]
    assert len(present) > 0.98 * len(released)
    assert present.str.fullmatch(pattern).all()
    given = str(out.with_suffix(".domain.json"))
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain", given]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str, keep_default_na=False)["when"]
    assert twice[twice != ""].str.fullmatch(pattern).all()
    assert times_of(twice.replace("", None), fmt).notna().sum() > 0.98 * len(twice)
    return present


def test_the_note_says_midnight() -> None:
    df = _table(3000, "us")
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(2),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    notes = column_notes(domain, report)
    assert any(n.startswith("when: read as dates (a common format, mdy order), every time "
                            "written at midnight") for n in notes), notes  # fmt: skip
