"""ISO 8601 times with a zone (``2015-01-03T05:50:00Z``, ``+01:00``) read as dates
(``docs/learn.md``, "Times with a zone"): the public format rule, the zone classes of the
format histogram under its one charge (their noise from a stream of their own), the
format learned and the times written back with their zone.

The learnings are seeded at a rho (1.0) where the rules' outcomes are far from their
thresholds (3,000 values, the format classes' noise sd below 10): no assertion below
depends on the draw."""

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
    ISO_CLASSES,
    ISO_FORMATS,
    ZONE_FORMATS,
    check_format,
    format_unit,
    iso_cell,
    iso_format,
    times_of,
    written,
)
from dpquery.domain_learning import _read, learn_domain
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE

UTC = dt.UTC


def _secs(t: dt.datetime) -> int:
    return int(t.timestamp())


def _stamps(n: int, seed: int, fmt: str) -> list[str]:
    """``n`` times in 2015 (UTC), written in the ``strftime`` format ``fmt``."""
    rng = np.random.default_rng(seed)
    start = dt.datetime(2015, 1, 1, tzinfo=UTC)
    return [(start + dt.timedelta(seconds=int(s))).strftime(fmt)
            for s in rng.integers(0, 365 * 86400, n)]  # fmt: skip


def _table(n: int, fmt: str = "%Y-%m-%dT%H:%M:%SZ", seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed + 100)
    return pd.DataFrame({
        "when": _stamps(n, seed, fmt),
        "x": [f"{v:.1f}" for v in rng.normal(20, 5, n)],
    })  # fmt: skip


# --- the public format rule ---------------------------------------------------------------
def test_the_zone_classes_follow_the_five() -> None:
    assert len(ISO_CLASSES) == 13 and ISO_CLASSES[:5] == ISO_FORMATS
    assert ISO_CLASSES[5:] == ZONE_FORMATS
    assert ZONE_FORMATS == (
        "%Y-%m-%d %H:%MZ", "%Y-%m-%d %H:%M:%SZ", "%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M:%SZ",
        "%Y-%m-%d %H:%M+00:00", "%Y-%m-%d %H:%M:%S+00:00", "%Y-%m-%dT%H:%M+00:00",
        "%Y-%m-%dT%H:%M:%S+00:00",
    )  # fmt: skip
    assert [format_unit(f) for f in ZONE_FORMATS] == [60, 1, 60, 1] * 2
    assert all(check_format(f) == f for f in ZONE_FORMATS)
    assert iso_format(2, True, "Z") == "%Y-%m-%dT%H:%M:%SZ"
    assert iso_format(1, False, "+00:00") == "%Y-%m-%d %H:%M+00:00"
    assert iso_format(0, True, "Z") == "%Y-%m-%d"  # a day has no zone


def test_a_time_with_a_zone_is_the_instant_it_names() -> None:
    at = _secs(dt.datetime(2015, 1, 3, 5, 50, tzinfo=UTC))
    assert iso_cell("2015-01-03T05:50:00Z") == (at, 8)
    assert iso_cell("2015-01-03T05:50Z") == (at, 7)
    assert iso_cell("2015-01-03 05:50:00Z") == (at, 6)
    assert iso_cell("2015-01-03 05:50Z") == (at, 5)
    assert iso_cell("2015-01-03 06:50:00+01:00") == (at, 10)  # 05:50 UTC
    assert iso_cell("2015-01-03T00:50:00-05:00") == (at, 12)
    assert iso_cell("2015-01-03T00:50-0500") == (at, 11)
    assert iso_cell("2015-01-03 11:20+05:30") == (at, 9)
    assert iso_cell("2015-01-03T05:50:00+00:00") == (at, 12)
    assert iso_cell("2015-01-01T00:30:00+01:00") == (
        _secs(dt.datetime(2014, 12, 31, 23, 30, tzinfo=UTC)),
        12,
    )  # the year before
    for k in range(5):  # the five classes without a zone: as before
        assert iso_cell(dt.datetime(2015, 1, 3, 5, 50).strftime(ISO_FORMATS[k]))[1] == k  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    ["2015-01-03Z", "2015-01-03+01:00", "2015-01-03T05:50:00+24:00",
     "2015-01-03T05:50:00+01:60", "2015-01-03T05:50:00 Z", "2015-01-03T05:50:00z",
     "2015-01-03T05:50:00+1", "2015-01-03T05:50:00UTC", "2015-01-03T25:50:00Z",
     "2015-02-30T05:50:00Z"],
)  # fmt: skip
def test_what_is_not_a_time_with_a_zone(text: str) -> None:
    assert iso_cell(text) is None


def test_written_back_with_the_zone_and_read_again() -> None:
    secs = np.array([_secs(dt.datetime(2015, 1, 3, 5, 50, 7, tzinfo=UTC)), 0.0])
    missing = np.array([False, True])
    assert written(secs, missing, "%Y-%m-%dT%H:%M:%SZ").tolist() == ["2015-01-03T05:50:07Z", None]
    assert written(secs, missing, "%Y-%m-%d %H:%MZ").tolist() == ["2015-01-03 05:50Z", None]
    assert written(secs, missing, "%Y-%m-%dT%H:%M:%S+00:00").tolist() == [
        "2015-01-03T05:50:07+00:00", None]  # fmt: skip
    cells = pd.Series(["2015-01-03T05:50:07Z", "2015-01-03T06:50:07+01:00", "2015-01-03T05:50:07",
                       None, "soon"])  # fmt: skip
    read = times_of(cells, "%Y-%m-%dT%H:%M:%SZ")
    assert read.tolist()[:3] == [secs[0]] * 3 and read[3:].isna().all()


# --- the histogram's zone classes: one record in one class, under the one charge ------------
def test_the_format_histogram_moves_by_one_record_at_most() -> None:
    """Replace-one moves the 13 classes' counts by L2 ``sqrt(2)`` at most, add/remove by 1;
    both reached. 200 random neighbours of a mixed column."""
    rng = np.random.default_rng(0)
    pool = [*_stamps(20, 1, "%Y-%m-%dT%H:%M:%SZ"), *_stamps(20, 2, "%Y-%m-%d %H:%M+01:00"),
            *_stamps(20, 3, "%Y-%m-%d %H:%M:%S"), "2015-01-03", "n/a", "7"]  # fmt: skip
    reached = {"add": 0.0, "replace": 0.0}
    for _ in range(200):
        base = list(rng.choice(pool, 30))
        h = _read(pd.Series(base, dtype=object)).time_classes
        assert h.size == 13
        added = _read(pd.Series([*base, rng.choice(pool)], dtype=object)).time_classes
        other = list(base)
        other[int(rng.integers(30))] = rng.choice(pool)
        replaced = _read(pd.Series(other, dtype=object)).time_classes
        add, rep = np.linalg.norm(added - h), np.linalg.norm(replaced - h)
        assert add <= 1 and rep <= math.sqrt(2) + 1e-12
        reached = {"add": max(reached["add"], add), "replace": max(reached["replace"], rep)}
    assert reached == {"add": 1.0, "replace": pytest.approx(math.sqrt(2))}


def _charges(ledger: Ledger) -> list[tuple[str, int, object]]:
    return [(e.charge.mechanism, e.charge.count, e.charge.cost) for e in ledger.entries]


@pytest.mark.parametrize(
    ("written_as", "fmt"),
    [("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%SZ"), ("%Y-%m-%d %H:%MZ", "%Y-%m-%d %H:%MZ"),
     ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S+00:00")],
)  # fmt: skip
def test_a_zone_column_is_learned_in_its_format_at_the_same_charges(
    written_as: str, fmt: str
) -> None:
    """The format learned from the zone classes; the ledger's charges (names, counts, costs)
    those of the same column written without its zone, on tables of ``n`` and ``n + 1``
    records (add/remove): the zone classes ride on the format histogram's one charge."""
    for n in (3000, 3001):
        zoned = _table(n, written_as)
        plain = _table(n, written_as.replace("Z", "").replace("%z", ""))
        ledgers, domains = [], []
        for df in (zoned, plain):
            ledger = Ledger(Budget.zcdp(1.0))
            domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(4),
                                          ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
            assert report.columns[0].kind == "date"
            ledgers.append(_charges(ledger))
            domains.append(domain)
        when = domains[0]["when"]
        assert isinstance(when, Numeric) and when.time == fmt
        assert (when.edges[0], when.edges[-1]) == (
            _secs(dt.datetime(2015, 1, 1, tzinfo=UTC)),
            _secs(dt.datetime(2016, 1, 1, tzinfo=UTC)),
        )
        assert ledgers[0] == ledgers[1]


def test_a_column_without_a_zone_draws_as_before_whatever_the_zone_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The five classes' noise is the run's stream's, the zone classes' their own: another
    zone stream changes no draw of a column without a zone (its domain the same)."""
    df = _table(3000, "%Y-%m-%d %H:%M:%S")
    first, rep1 = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                               ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    monkeypatch.setattr(domain_learning, "ZONE_STREAM", 12345)
    second, rep2 = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(5),
                                ledger=Ledger(Budget.zcdp(1.0)))  # fmt: skip
    assert first.to_dict() == second.to_dict()
    h1 = rep1.columns[0].noisy["format_histogram"]
    h2 = rep2.columns[0].noisy["format_histogram"]
    assert h1[:5] == h2[:5] and h1[5:] != h2[5:]
    assert first["when"].time == "%Y-%m-%d %H:%M:%S"  # type: ignore[union-attr]


def test_a_release_writes_the_zone_back(tmp_path: Path) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(3000).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out), "--quiet"]) == 0  # fmt: skip
    released = pd.read_csv(out, dtype=str, keep_default_na=False)["when"]
    present = released[released != ""]
    assert len(present) > 0.98 * len(released)
    assert present.map(
        lambda t: re.fullmatch(r"2015-\d\d-\d\dT\d\d:\d\d:\d\dZ", t) is not None
    ).all()
    again = tmp_path / "again.csv"  # the learned domain given back reads them alike
    given = str(out.with_suffix(".domain.json"))
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain", given]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str)["when"]
    assert times_of(twice, "%Y-%m-%dT%H:%M:%SZ").notna().sum() > 0.98 * len(twice)


def test_a_declared_zone_format_reads_every_iso_cell() -> None:
    df = _table(3000)
    df.loc[:99, "when"] = "2015-06-01T07:00:00+02:00"  # 05:00 UTC
    df.loc[100:199, "when"] = "2015-06-01T05:00:00"
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(2),
                                  ledger=Ledger(Budget.zcdp(1.0)),
                                  types={"when": "date:%Y-%m-%dT%H:%M:%SZ"})  # fmt: skip
    when = domain["when"]
    assert isinstance(when, Numeric) and when.time == "%Y-%m-%dT%H:%M:%SZ"
    assert report.columns[0].declared
    read = times_of(df["when"], when.time)
    assert (
        read.notna().all() and (read[:200] == _secs(dt.datetime(2015, 6, 1, 5, tzinfo=UTC))).all()
    )
