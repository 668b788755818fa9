"""Dates written with a two-digit year, declared with their century window
(``docs/learn.md``, "Two-digit years"): the format's ``%y`` and ``@FIRST``, the first year
of the hundred its years fall in, on the CLI (``--types``), in ``types=`` and in a codebook.

The learnings are seeded at a rho (1.0) where no rule is near its threshold; the window is
a public input, so no assertion depends on a draw."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.dates import check_format, split_window, times_of, written
from dpquery.domain_learning import learn_domain
from dpquery.errors import DomainError, DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE

EPOCH = dt.datetime(1970, 1, 1)


def _secs(y: int, m: int, d: int) -> float:
    return (dt.datetime(y, m, d) - EPOCH).total_seconds()


@pytest.mark.parametrize(
    ("text", "fmt", "day"),
    [("7/1/62", "%m/%d/%y@1950", (1962, 7, 1)), ("3/9/05", "%m/%d/%y@1950", (2005, 3, 9)),
     ("12/31/49", "%m/%d/%y@1950", (2049, 12, 31)), ("1/1/50", "%m/%d/%y@1950", (1950, 1, 1)),
     ("3/9/05", "%m/%d/%y@1900", (1905, 3, 9)), ("7/1/62", "%m/%d/%y@2000", (2062, 7, 1)),
     ("7/1/62", "%-m/%-d/%y@1800", (1862, 7, 1)), ("05-Mar-99", "%d-%b-%y@1900", (1999, 3, 5)),
     ("2/29/00", "%m/%d/%y@1950", (2000, 2, 29)), ("990305", "%y%m%d@1950", (1999, 3, 5))],
)  # fmt: skip
def test_a_two_digit_year_reads_in_its_window(text: str, fmt: str, day: tuple[int, ...]) -> None:
    assert check_format(fmt) == fmt
    assert times_of(pd.Series([text]), fmt).tolist() == [_secs(*day)]


def test_a_day_the_windows_year_lacks_and_other_text_read_as_missing() -> None:
    read = times_of(pd.Series(["2/29/00", "x", None, "2/29/2000"]), "%m/%d/%y@1900")
    assert read.isna().all()  # 1900 was not a leap year; a four-digit year is not %y's


def test_a_time_of_day_is_kept_and_written_back() -> None:
    fmt = "%m/%d/%y %H:%M@1950"
    read = times_of(pd.Series(["07/01/62 10:30"]), fmt)
    assert read.tolist() == [_secs(1962, 7, 1) + 10.5 * 3600]
    assert written(read.to_numpy(), np.array([False]), fmt).tolist() == ["07/01/62 10:30"]


def test_dates_are_written_back_in_the_declared_format_inside_the_window() -> None:
    fmt = "%-m/%-d/%y@1950"
    texts = ["7/1/62", "3/9/05", "12/31/49", "1/1/50"]
    read = times_of(pd.Series(texts), fmt).to_numpy()
    missing = np.array([False, False, False, True])
    assert written(read, missing, fmt).tolist() == ["7/1/62", "3/9/05", "12/31/49", None]
    # outside its hundred years a time is written as the window's nearest end: two digits
    # name no other year (1940 would read back as 2040)
    far = np.array([_secs(1940, 5, 5), _secs(2060, 5, 5) + 3600])
    assert written(far, np.array([False, False]), fmt).tolist() == ["1/1/50", "12/31/49"]


@pytest.mark.parametrize(
    ("fmt", "fragment"),
    [("%m/%d/%y", "needs its century window"), ("%m/%d/%y@19", "four-digit first year"),
     ("%m/%d/%y@2101", "1800 to 2100"), ("%m/%d/%y@1799", "got '1799'"),
     ("%m/%d/%y@", "got ''"), ("%Y-%m-%d@1950", "has %Y"), ("%m/%d@1950", "has no %y"),
     ("%m/%d", "with %Y (or %y and its century window")],
)  # fmt: skip
def test_a_bad_window_is_refused_naming_it(fmt: str, fragment: str) -> None:
    with pytest.raises(ValueError) as err:
        check_format(fmt)
    assert fragment in str(err.value) and repr(fmt) in str(err.value)


def test_split_window_by_hand() -> None:
    assert split_window("%m/%d/%y@1950") == ("%m/%d/%y", 1950)
    assert split_window("%Y-%m-%d") == ("%Y-%m-%d", None)
    assert split_window("%d@%m %Y") == ("%d@%m %Y", None)  # an @ before a directive: text


def _stores(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` store openings 1962 to 2006, written M/D/YY, most after 1985."""
    rng = np.random.default_rng(seed)
    years = np.clip(np.round(rng.normal(1992, 8, n)), 1962, 2006).astype(int)
    opened = [f"{rng.integers(1, 13)}/1/{y % 100:02d}" for y in years]
    return pd.DataFrame({"OPENDATE": opened,
                         "kind": rng.choice(["Supercenter", "Wal-Mart"], n)})  # fmt: skip


def test_a_declared_window_learns_and_releases_the_dates(tmp_path: Path) -> None:
    df = _stores(3000)
    fmt = "%-m/%-d/%y@1950"
    domain, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(3),
                                  ledger=Ledger(Budget.zcdp(1.0)),
                                  types={"OPENDATE": f"date:{fmt}"})  # fmt: skip
    attr = domain["OPENDATE"]
    assert isinstance(attr, Numeric) and attr.time == fmt and report.columns[0].declared
    lo, hi = attr.edges[0], attr.edges[-1]
    # the bounds in the 1960s to 2000s, never in the 2060s (the thin first years may clip)
    assert _secs(1955, 1, 1) <= lo <= _secs(1980, 1, 1)
    assert _secs(2000, 1, 1) <= hi <= _secs(2012, 1, 1)
    assert Domain.from_dict(domain.to_dict()) == domain  # the window travels in the JSON
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    df.to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--quiet",
                 "--types", f"OPENDATE=date:{fmt}", "--out", str(out)]) == 0  # fmt: skip
    released = pd.read_csv(out, dtype=str, keep_default_na=False)["OPENDATE"]
    assert released.str.fullmatch(r"\d{1,2}/\d{1,2}/\d\d").all()
    years = times_of(released, fmt).map(lambda s: (EPOCH + dt.timedelta(seconds=s)).year)
    assert years.between(1950, 2049).all() and abs(years.median() - 1992) <= 3


def test_a_codebook_carries_the_window() -> None:
    fmt = "%m/%d/%y@1950"
    edges = (_secs(1960, 1, 1), _secs(1990, 1, 1), _secs(2010, 1, 1))
    attr = Numeric("OPENDATE", edges, out_of_range="clip", integer=True, time=fmt)
    assert Domain.from_dict(Domain((attr,)).to_dict())["OPENDATE"] == attr
    with pytest.raises(DomainError, match="century window"):
        Numeric("OPENDATE", edges, integer=True, time="%m/%d/%y")


@pytest.mark.parametrize("kind", ["date:%m/%d/%y", "date:%m/%d/%y@50", "date:%Y@1950"])
def test_the_api_and_the_cli_refuse_a_bad_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    df = _stores(100)
    with pytest.raises(DPQueryError, match=r"types\['OPENDATE'\]: .*(century window|%Y)"):
        learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(0),
                     ledger=Ledger(Budget.zcdp(1.0)), types={"OPENDATE": kind})  # fmt: skip
    data = tmp_path / "T.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "s.csv"
    argv = ["synth", "--data", str(data), "--epsilon", "1", "--out", str(out), "--types",
            f"OPENDATE={kind}"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--types OPENDATE:" in err and "window" in err + "%Y" and not out.exists()


def test_the_window_charges_nothing_of_its_own_on_neighbours() -> None:
    """A table and its neighbour of ``n - 1`` records (add/remove), each learned with two
    windows: the ledger's charges are equal entry by entry (the window is a public input,
    read by no rule that spends)."""
    big = _stores(3001)
    small = big.iloc[:3000].reset_index(drop=True)
    charges = []
    for df in (big, small):
        for first in (1950, 1900):
            ledger = Ledger(Budget.zcdp(1.0))
            learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(3), ledger=ledger,
                         neighbours=ADD_REMOVE,
                         types={"OPENDATE": f"date:%-m/%-d/%y@{first}"})  # fmt: skip
            charges.append([(e.charge.mechanism, e.charge.count, e.charge.cost)
                            for e in ledger.entries])  # fmt: skip
    assert all(c == charges[0] for c in charges[1:])
    assert any(name.startswith("OPENDATE: bounds, years") for name, _, _ in charges[0])
