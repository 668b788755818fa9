"""Dates written with a month's name (``01 Nov 2020``, ``November 1, 2020``), learned from a
raw table (``docs/learn.md``, "Dates written with a month's name"): cells of the profile
under its one charge, read by the ISO test's rule.

The learnings are seeded at a rho where the rules' outcomes are far from their thresholds
(hundreds of noise sd), so no assertion depends on the draw."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_written_forms import _learn, _spent, learned_alike

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.dates import NAMED_FORMATS, digits_cell, iso_cell, named_cell, times_of
from dpquery.domain_learning import (
    BOUNDS_SHARE,
    LEARNING_NOISY_N_SHARE,
    PROFILE_SHARE,
)
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

NOV1 = int(dt.datetime(2020, 11, 1, tzinfo=dt.UTC).timestamp())


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """Days over two years written ``%d %b %Y`` and ``%B %-d, %Y``, an amount, a group."""
    rng = np.random.default_rng(seed)
    days = [dt.date(2018, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 700, n)]
    return pd.DataFrame({
        "day": [d.strftime("%d %b %Y") for d in days],
        "when": [f"{d.strftime('%B')} {d.day}, {d.year}" for d in days],
        "amount": [f"{x:.2f}" for x in rng.lognormal(5, 1, n)],
        "group": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip


def test_the_named_form_of_a_value() -> None:
    assert named_cell("01 Nov 2020") == (NOV1, 0)
    assert named_cell("1 Nov 2020") == (NOV1, 0)
    assert named_cell("1 November 2020") == (NOV1, 1)
    assert named_cell("Nov 1, 2020") == (NOV1, 3)
    assert named_cell("November 01, 2020") == (NOV1, 4)
    assert named_cell("3 May 2019") is not None and named_cell("3 May 2019")[1] == 2  # type: ignore[index]
    assert named_cell("May 3, 2019") is not None and named_cell("May 3, 2019")[1] == 5  # type: ignore[index]
    assert named_cell("1 Sept 2020") == (NOV1 - 61 * 86400, 0)  # Sept: September abbreviated
    for other in ("31 Nov 2020", "29 Feb 2019", "1 nov 2020", "1 Jan. 2020", "Nov 2020",
                  "1 Nov 20", "1 Nov 1799", "1 Nov 2200", "Nov 1 2020", "2020-11-01",
                  "11/01/2020", "20201101", "1.5", ""):  # fmt: skip
        assert named_cell(other) is None, other
    for fmt in NAMED_FORMATS:  # each format's own writing reads back in its class
        text = pd.Timestamp(NOV1, unit="s").strftime(fmt)
        f = NAMED_FORMATS.index(fmt)
        assert named_cell(text) == (NOV1, 3 * (f // 2) + f % 2)
        assert times_of(pd.Series([text]), fmt)[0] == NOV1


def _classes(value: str) -> np.ndarray:
    """One value's cells of the profile: missing, a number, an ISO date, a day written
    YYYYMMDD, and the named formats' classes."""
    col = domain_learning._read(pd.Series([value], dtype=object))
    counts, _ = domain_learning.named_times(col)
    digits = int(col.forms[-1])
    return np.array([col.missing, col.numbers.size - digits, col.times.size, digits, *counts])


def test_each_value_is_in_one_cell_of_the_profile() -> None:
    """A value is missing, a number, an ISO date, a day written YYYYMMDD, a date with a
    month's name of one class, or none of them: the profile's vector moves by L2 at most
    sqrt(2) (replace-one) and 1 (add/remove) with the named cells in it."""
    values = [None, "01 Nov 2020", "November 1, 2020", "Nov 1, 2020", "1 November 2020",
              "2020-11-01", "20201101", "3.5", "abc", "31 Nov 2020"]  # fmt: skip
    vecs = [_classes(v) for v in values]  # type: ignore[arg-type]
    assert all(v.sum() <= 1 and v.min() >= 0 for v in vecs)
    for a in vecs:
        for b in vecs:
            assert np.linalg.norm(a - b) <= math.sqrt(2) + 1e-12
    assert iso_cell("01 Nov 2020") is None and digits_cell("01 Nov 2020") is None


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_the_charges_are_the_plan_on_neighbouring_tables(neighbours: str) -> None:
    """Tables of ``n`` and ``n + 1`` records (add/remove) and two of ``n`` records differing
    in one (replace-one: a day written ``7``): the named cells add no charge; such a column's
    charges are a declared date column's, hand-computed from its rho ``c``: profile 0.1 c,
    years 0.225 c, months 0.225 c (two years' bounds), quantiles 0.45 c."""
    big = _table(3001)
    if neighbours == ADD_REMOVE:
        tables = [big.iloc[:3000].reset_index(drop=True), big]
    else:
        other = big.iloc[:3000].copy()
        other.loc[1, "day"] = "7"
        tables = [big.iloc[:3000].reset_index(drop=True), other]
    share = LEARNING_NOISY_N_SHARE if neighbours == ADD_REMOVE else 0.0
    c = (1 - share) * (1 - 1e-9) / 4
    dated = (1 - PROFILE_SHARE) * c
    runs = []
    for df in tables:
        domain, report, ledger = _learn(df, neighbours)
        spent = _spent(ledger)
        for col in ("day", "when"):
            assert spent[f"{col}: profile (discrete Gaussian)"] == pytest.approx(0.1 * c)
            assert spent[f"{col}: bounds, years (discrete Gaussian histogram)"] == pytest.approx(
                BOUNDS_SHARE * dated / 2
            )
            assert spent[f"{col}: bounds, months (discrete Gaussian histogram)"] == pytest.approx(
                BOUNDS_SHARE * dated / 2
            )
            assert spent[f"{col}: quantiles (exponential mechanism)"] == pytest.approx(
                (1 - BOUNDS_SHARE) * dated
            )
            assert f"{col}: partition selection (discrete Gaussian)" not in spent
        assert domain["day"].time == "%d %b %Y"  # type: ignore[union-attr]
        assert domain["when"].time == "%B %d, %Y"  # type: ignore[union-attr]
        for r in report.columns:  # type: ignore[attr-defined]
            assert r.rho <= c * (1 + 1e-12)
        runs.append(sorted(spent.items()))
    assert [k for k, _ in runs[0]] == [k for k, _ in runs[1]]
    assert np.allclose([v for _, v in runs[0]], [v for _, v in runs[1]], rtol=1e-12)


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_a_table_without_named_dates_is_learned_as_without_their_cells(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """A table with no date written with a month's name (text, numbers, codes, ISO dates,
    common formats, month names alone; 3,000 and 400 records) learns the same domain, report
    and ledger as with the named cells not drawn: their noise is a stream of their own."""
    rng = np.random.default_rng(0)
    n = 3000
    big = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "month": rng.choice(["Nov", "December", "May"], n),
        "x": [f"{v:.2f}" for v in rng.normal(size=n)],
        "count": [str(v) for v in rng.poisson(40, n)],
        "when": [f"2019-01-{d:02d}" for d in rng.integers(1, 29, n)],
        "us": [f"{m}/{d}/2019" for m, d in zip(rng.integers(1, 13, n), rng.integers(13, 29, n),
                                               strict=True)],
    })  # fmt: skip
    learned_alike(monkeypatch, big, neighbours, "_named_passes", lambda *a, **k: None)


def test_a_declared_type_wins_and_mixed_formats_stay_text() -> None:
    df = _table(3000)
    declared, _, _ = _learn(df, types={"day": "categorical"})
    assert not isinstance(declared["day"], Numeric)
    # half written one way, half another: no class holds 95%, text as before
    rng = np.random.default_rng(1)
    mixed = df.assign(day=np.where(rng.random(len(df)) < 0.5, df["day"], df["when"]))
    assert not isinstance(_learn(mixed)[0]["day"], Numeric)


def test_a_release_from_the_raw_csv_writes_the_dates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(4000).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "note: day: read as dates written %d %b %Y" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    for col, fmt in (("day", "%d %b %Y"), ("when", "%B %d, %Y")):
        texts = released[col][released[col] != ""]
        assert len(texts) > 0.98 * len(released)
        secs = times_of(texts, fmt)
        assert secs.notna().all(), texts[secs.isna()].head()
        years = pd.to_datetime(secs, unit="s").dt.year
        assert years.between(2017, 2020).all()
    learned = Domain.load(out.with_suffix(".domain.json"))
    assert learned["day"].time == "%d %b %Y"  # type: ignore[union-attr]
    again = tmp_path / "again.csv"  # the learned domain given back reads them alike
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "1", "--out",
                 str(again), "--quiet", "--domain",
                 str(out.with_suffix(".domain.json"))]) == 0  # fmt: skip
    twice = pd.read_csv(again, dtype=str)
    assert times_of(twice["when"], "%B %d, %Y").notna().mean() > 0.98


def test_the_plan_states_the_formats(capsys: pytest.CaptureFixture[str]) -> None:
    """``dpquery privacy synth`` states the named formats' charge and bar."""
    import json

    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["written_forms"]["named_dates"]
    assert plan["charge"].startswith("the profile's")
    assert plan["formats"] == list(NAMED_FORMATS) and plan["share"] == 0.95
    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1"]) == 0
    assert "a month's English name (%d %b %Y" in capsys.readouterr().out
