"""ISO 8601 times written to the second (or the minute) whose seconds (and minutes) are always
0: pandas writes a datetime to the minute ``2020-01-03 10:30:00`` (``docs/learn.md``, "A
time written to the second, always at whole minutes"). The public formats, the ISO format
histogram's cells of whole hours and minutes under the one charge (their noise from a stream
of their own), the rule, and the release written with its zeros.

The learnings are seeded at a rho (1.0) where the rules' outcomes are far from their
thresholds (3,000 values, the cells' noise sd below 10): no assertion below depends on the
draw."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.test_midnight_dates import (
    _charges,
    _domain_and_histograms,
    _learn,
    _released_twice,
)

from dpquery import domain_learning
from dpquery.data.dates import (
    ISO_CLASSES,
    ISO_HOUR_FORMATS,
    ISO_MIDNIGHT_FORMATS,
    ISO_MINUTE_FORMATS,
    ISO_ZERO_FORMATS,
    MIDNIGHT_FORMATS,
    check_format,
    format_unit,
    iso_format,
    times_of,
    written,
)
from dpquery.domain_learning import _read, iso_format_counts, learn_domain
from dpquery.pipeline.learning import column_notes
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

EPOCH = dt.datetime(1970, 1, 1)
START = dt.datetime(2018, 1, 1)


def _table(n: int, unit: int, fmt: str = "%Y-%m-%d %H:%M:%S", seed: int = 0) -> pd.DataFrame:
    """A date column ``when``: ``n`` times of 2018 and 2019 at whole multiples of ``unit``
    seconds, written in ``fmt``; and an amount."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 2 * 365 * 86400 // unit, n)
    when = [(START + dt.timedelta(seconds=int(s) * unit)).strftime(fmt) for s in steps]
    return pd.DataFrame({"when": when, "x": [f"{v:.1f}" for v in rng.normal(20, 5, n)]})


# --- the public formats ---------------------------------------------------------------------
def test_the_formats() -> None:
    assert ISO_ZERO_FORMATS == ("%Y-%m-%d %H:00", "%Y-%m-%d %H:00:00", "%Y-%m-%dT%H:00",
                                "%Y-%m-%dT%H:00:00", "%Y-%m-%d %H:%M:00",
                                "%Y-%m-%dT%H:%M:00")  # fmt: skip
    assert not set(ISO_ZERO_FORMATS) & set(ISO_CLASSES + MIDNIGHT_FORMATS)
    assert all(format_unit(f) == 3600 and check_format(f) == f for f in ISO_HOUR_FORMATS)
    assert all(format_unit(f) == 60 and check_format(f) == f for f in ISO_MINUTE_FORMATS)
    assert iso_format(2, False, whole=2) == "%Y-%m-%d %H:%M:00"
    assert iso_format(2, True, whole=2) == "%Y-%m-%dT%H:%M:00"
    assert iso_format(2, True, whole=1) == "%Y-%m-%dT%H:00:00"
    assert iso_format(1, False, whole=1) == "%Y-%m-%d %H:00"
    assert iso_format(1, False, whole=2) == "%Y-%m-%d %H:%M"  # no seconds written: none to cut
    assert iso_format(2, True, "Z", whole=2) == "%Y-%m-%dT%H:%M:%SZ"  # a zone's: as is
    assert iso_format(0, True, whole=1) == "%Y-%m-%d"


@pytest.mark.parametrize("fmt", ISO_ZERO_FORMATS)
def test_each_format_writes_its_zeros_and_reads_any_second(fmt: str) -> None:
    t = int((dt.datetime(2016, 10, 3, 13, 47, 29) - EPOCH).total_seconds())
    out = written(np.array([t, 0.0]), np.array([False, True]), fmt)
    minute = "%M" in fmt
    expected = "2016-10-03" + ("T" if "T" in fmt else " ") + ("13:47" if minute else "13")
    expected += ":00" if minute else fmt[fmt.index("%H") + 2 :]
    assert out[0] == expected and out[1] is None
    unit = format_unit(fmt)
    assert times_of(out, fmt)[0] == t - t % unit
    # a neighbour's value with its seconds (or minutes) not 0 still reads, as written
    for other in ("2016-10-03 13:47:29", "2016-10-03T13:47:29", "2016-10-03 13:47"):
        assert times_of(pd.Series([other]), fmt)[0] == t - (29 if other.endswith("13:47") else 0)


# --- the cells: one value in one cell, under the one charge -----------------------------------
def test_the_counts_by_hand_on_neighbours() -> None:
    """The 23 counts by hand (the 13 classes, midnight's 4, whole hours' 4, whole minutes'
    2), and a value moving cell: ``sqrt(2)`` when replaced, 1 when added or removed."""
    values = (["2020-01-03 10:30:00"] * 4 + ["2020-01-03T07:00:00"] * 3 + ["2020-01-03 07:00"] * 2
              + ["2020-01-03 10:30:17", "2020-01-03 10:30", "2020-01-03 00:00:00"])  # fmt: skip

    def counts(vals: list[str]) -> np.ndarray:
        return iso_format_counts(_read(pd.Series(vals, dtype=object)))

    h = counts(values)
    assert h.size == len(ISO_CLASSES) + len(ISO_MIDNIGHT_FORMATS) + len(ISO_ZERO_FORMATS) == 23
    # classes: a date, " H:M", " H:M:S", "T H:M", "T H:M:S" (the others); the zones' 8;
    # midnight by class; whole hours by class; whole minutes of " H:M:S", "T H:M:S"
    assert h.tolist() == ([0, 1, 1, 0, 0] + [0] * 8 + [0, 1, 0, 0] + [2, 0, 0, 3]
                          + [4, 0])  # fmt: skip
    col = _read(pd.Series(values, dtype=object))
    assert col.time_classes.tolist()[:5] == [0, 3, 6, 0, 3]  # the profile's classes: as before
    for other, cell in (("2020-01-03 10:30:17", 2), ("2020-01-03 11:00:00", 18),
                        ("2020-01-03T10:30:00", 22), ("2020-01-03 00:00:00", 14),
                        ("2020-01-03 10:30:00Z", 6), ("2020-01-03", 0)):  # fmt: skip
        moved = counts([other, *values[1:]]) - h  # the first value, " 10:30:00", replaced
        assert moved[21] == -1 and moved[cell] == 1
        assert np.linalg.norm(moved) == pytest.approx(math.sqrt(2))
    for neighbour in (values[1:], [*values, "2020-01-04 11:12:00"], [*values, "2020-01-04 11:00"]):
        assert np.linalg.norm(counts(neighbour) - h) == pytest.approx(1.0)
    assert np.linalg.norm(counts([*values, "n/a"]) - h) == 0


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
@pytest.mark.parametrize("fmt", ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"])
def test_whole_minutes_are_learned_at_the_same_charges(fmt: str, neighbours: str) -> None:
    """The ledger's charges (names, counts, costs) of a column at whole minutes (and whole
    hours) are those of the same column with real seconds, on tables of ``n`` and ``n + 1``
    records: the new cells ride on the format histogram's one charge."""
    for n in (3000, 3001):
        plain, plain_ledger, _ = _learn(_table(n, 1, fmt), neighbours=neighbours)
        assert plain.time == fmt
        for unit, whole in ((60, ISO_MINUTE_FORMATS), (3600, ISO_HOUR_FORMATS)):
            when, ledger, noisy = _learn(_table(n, unit, fmt), neighbours=neighbours)
            assert when.time in whole and ("T" in when.time) == ("T" in fmt)
            assert _charges(ledger) == _charges(plain_ledger)
            assert len(noisy["format_histogram"]) == 23  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("unit", "written_as", "fmt"),
    [(60, "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:00"), (60, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:00"),
     (3600, "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:00:00"), (3600, "%Y-%m-%d %H:%M", "%Y-%m-%d %H:00"),
     (3600, "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:00"), (60, "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M"),
     (1, "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"), (1, "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%SZ"),
     (60, "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%SZ")],
)  # fmt: skip
def test_the_format_learned(unit: int, written_as: str, fmt: str) -> None:
    """Whole minutes written with seconds: to the minute; whole hours: to the hour; real
    seconds (about 1/60 at 0) and a zone (not split): as written."""
    when, _, _ = _learn(_table(3000, unit, written_as))
    assert when.time == fmt
    assert all(e % format_unit(fmt) == 0 for e in when.edges)


def test_a_tenth_of_real_seconds_keeps_the_seconds() -> None:
    df = _table(3000, 60)
    df.loc[:299, "when"] = _table(300, 1, seed=1)["when"]
    assert _learn(df)[0].time == "%Y-%m-%d %H:%M:%S"


def test_real_seconds_draw_as_before_whatever_the_zeros_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The histogram's other cells are drawn from the run's stream and the midnight stream,
    the cells of whole hours and minutes from their own: another stream for them changes no
    other cell and no domain of columns with real seconds (about 1/60 at whole minutes)."""
    df = pd.DataFrame({"sec": _table(3000, 1)["when"],
                       "t": _table(3000, 1, "%Y-%m-%dT%H:%M:%S", seed=1)["when"]})  # fmt: skip
    first, h1 = _domain_and_histograms(df)
    monkeypatch.setattr(domain_learning, "ZEROS_STREAM", 12345)
    second, h2 = _domain_and_histograms(df)
    assert first == second
    for a, b in zip(h1, h2, strict=True):
        assert a[:17] == b[:17] and a[17:] != b[17:]


# --- the release --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("unit", "pattern", "fmt"),
    [(60, r"201[89]-\d\d-\d\d \d\d:\d\d:00", "%Y-%m-%d %H:%M:00"),
     (3600, r"201[89]-\d\d-\d\d \d\d:00:00", "%Y-%m-%d %H:00:00")],
)  # fmt: skip
def test_a_release_writes_only_zero_seconds(
    unit: int, pattern: str, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "T.csv"
    _table(3000, unit).to_csv(data, index=False)
    present = _released_twice(data, pattern, fmt, "every time a whole", capsys)
    assert present.nunique() > 100  # times over the day, not one


def test_the_note_says_whole_minutes() -> None:
    domain, report = learn_domain(_table(3000, 60), rho=1.0, delta=1e-9,
                                  rng=np.random.default_rng(2),
                                  ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    notes = column_notes(domain, report)
    assert any(n.startswith("when: read as dates (the ISO 8601 rule), every time a whole "
                            "minute") for n in notes), notes  # fmt: skip
