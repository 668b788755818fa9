"""``benchmarks/bench_raw.py`` on raw CSVs beyond its own tables: a table given with ``--csv
NAME=PATH`` or found in ``$DPQUERY_EXTRA_DATA_DIR/seaborn`` is copied byte for byte, an absent
one is skipped with a note, and booleans are scored as the text they were read from."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_raw", ROOT / "benchmarks" / "bench_raw.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_raw", module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RESULTS", tmp_path / "results")
    return module


def test_a_raw_csv_is_copied_byte_for_byte(bench, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    raw = tmp_path / "mine.csv"
    raw.write_bytes(b"a,flag\r\n1,True\r\n2,\r\n")
    bench.EXTRA["mine"] = raw
    out = bench.prepare("mine", tmp_path / "cache")
    assert out.read_bytes() == raw.read_bytes()
    assert isinstance(bench.command("dpquery-domain", "mine", 0, tmp_path / "cache", out), str)


def test_an_absent_seaborn_table_is_skipped_with_a_note(bench, tmp_path: Path, monkeypatch,
                                                        capsys) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.delenv("DPQUERY_EXTRA_DATA_DIR", raising=False)
    bench.main(["--tables", "taxis", "--methods", "dpquery", "--cache", str(tmp_path / "c"),
                "--out", "x"])  # fmt: skip
    assert "skip taxis: $DPQUERY_EXTRA_DATA_DIR not set" in capsys.readouterr().out
    monkeypatch.setenv("DPQUERY_EXTRA_DATA_DIR", str(tmp_path))
    bench.main(["--tables", "taxis", "--methods", "dpquery", "--cache", str(tmp_path / "c"),
                "--out", "x"])  # fmt: skip
    assert f"{tmp_path / 'seaborn' / 'taxis.csv'} not found" in capsys.readouterr().out
    assert not (tmp_path / "results" / "x.csv").exists()
    with pytest.raises(SystemExit):
        bench.main(["--tables", "nowhere", "--out", "x"])
    with pytest.raises(SystemExit):
        bench.main(["--csv", "adult=x.csv", "--out", "x"])  # a name of the bench's own


def test_booleans_are_scored_as_written(bench) -> None:  # type: ignore[no-untyped-def]
    real = pd.DataFrame({"flag": [True, False, True, None], "n": [1.0, 2.0, 3.0, None]})
    synth = pd.DataFrame({"flag": ["True", "<other>", "True", "False"], "n": ["1", "2", "3", ""]})
    flag = bench._text(real["flag"])
    assert flag[:3].tolist() == ["True", "False", "True"] and pd.isna(flag[3])
    assert bench._text(synth["flag"]).tolist() == ["True", "<other>", "True", "False"]
    n = bench._text(real["n"])
    assert n[:3].tolist() == ["1", "2", "3"] and pd.isna(n[3])  # as before
    assert bench.column_kinds(real)["flag"] == "categorical"


def test_dates_are_scored_on_the_time_axis(bench) -> None:  # type: ignore[no-untyped-def]
    stamps = [f"2019-03-{d:02d} {h:02d}:15:00" for d in range(1, 29) for h in range(0, 24, 3)]
    real = pd.DataFrame({"pickup": stamps, "year": ["2019"] * len(stamps)})
    # the same times: KS 0; the dates released as the catch-all: no value on the axis, KS 1
    same, _ = bench.score(real, real.copy())
    lost, per_col = bench.score(real, real.assign(pickup="<other>"))
    assert same["ks_mean"] == 0.0 and lost["ks_mean"] == 1.0
    kinds = {c["column"]: c["kind"] for c in per_col}
    assert kinds == {"pickup": "numeric", "year": "categorical"}  # a year is no date


def test_dates_in_other_formats_score_on_the_time_axis_only_when_asked(  # type: ignore[no-untyped-def]
    bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pd.DataFrame({"when": ["10/3/2016 0:00", "10/13/2016 1:00"], "x": ["a", "b"]})
    synth = pd.DataFrame({"when": ["10/4/2016 0:00", "<other>"], "x": ["a", "a"]})
    _, _, cols = bench.on_time_axis(real, synth)
    assert cols == []  # off by default: earlier results score as they did
    monkeypatch.setattr(bench, "DATES_ANY", True)
    r, s, cols = bench.on_time_axis(real, synth)
    assert cols == ["when"]
    assert r["when"].tolist() == [1475452800.0, 1476320400.0]
    assert s["when"].iloc[0] == 1475539200.0 and pd.isna(s["when"].iloc[1])
    day_first = pd.DataFrame({"when": ["13.10.2016", "3.1.2017"]})
    assert bench._other_format(day_first["when"]) == "%d.%m.%Y"
    clock = pd.DataFrame({"time": ["00:20", "7:05", "23:50"]})
    assert bench._other_format(clock["time"]) == "%H:%M"  # a time of day alone, one day's axis
    assert bench._other_format(pd.DataFrame({"t": ["00:20:05", "7:05:00"]})["t"]) == "%H:%M:%S"
    assert bench._other_format(pd.DataFrame({"t": ["00:20", "7.05"]})["t"]) is None
