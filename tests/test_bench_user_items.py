"""``benchmarks/user_items.py``: a real user x item CSV read as the wide benchmarks read it
(``--items``): users the records, distinct item ids the items, a repeated pair one
incidence, a header line skipped, an absent table skipped with a note."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def user_items(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return load_benchmark("user_items", monkeypatch)


def dense(items) -> np.ndarray:  # type: ignore[no-untyped-def]
    return items.matrix.toarray()


def test_a_ratings_csv_with_a_header_and_a_repeated_pair(user_items, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # MovieLens' form: a header, a rating and a time beside the ids, trailing empty fields;
    # user 7 rates movie 31 twice (one incidence); ids are numbered in numeric order (10 > 9)
    csv = tmp_path / "ratings.csv"
    csv.write_text(
        "userId,movieId,rating,timestamp,,\n"
        "10,31,2.5,1260759144,,\n"
        "7,1029,3,1260759179,,\n"
        "7,31,4,1260759182,,\n"
        "7,31,5,1260759185,,\n"
        "9,5,1,1260759186,,\n"
    )
    items = user_items.read_user_items(csv)
    assert (items.n, items.d, items.nnz) == (3, 3, 4)
    # rows: users 7, 9, 10; items: movies 5, 31, 1029
    assert dense(items).tolist() == [[0, 1, 1], [1, 0, 0], [0, 1, 0]]
    assert "3 x 3, 4 ones" in user_items.describe(items)


def test_text_ids_without_a_header_and_bad_lines(user_items, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "baskets.csv"
    csv.write_text("# user,item\nann,milk\nbob,bread\nann,bread\nann,milk\n")
    items = user_items.read_user_items(csv)
    # a text first line is data when the second is text too: here it is a '#' line, skipped
    assert dense(items).tolist() == [[1, 1], [1, 0]]  # ann, bob x bread, milk
    headless = tmp_path / "headless.csv"
    headless.write_text("1,2\n1,3\n2,2\n")
    assert dense(user_items.read_user_items(headless)).tolist() == [[1, 1], [1, 0]]
    holey = tmp_path / "holey.csv"
    holey.write_text("user,item\n1,2\n3,\n")
    with pytest.raises(ValueError, match=r"holey.csv: line 3 has no user or no item id"):
        user_items.read_user_items(holey)
    narrow = tmp_path / "narrow.csv"
    narrow.write_text("1\n2\n")
    with pytest.raises(ValueError, match="first two columns"):
        user_items.read_user_items(narrow)


def test_names_resolve_under_the_extra_data_folder(user_items, tmp_path: Path,
                                                   monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.delenv("DPQUERY_EXTRA_DATA_DIR", raising=False)
    assert user_items.tables(["ratings-2016"]) == {}
    assert "skip ratings-2016: $DPQUERY_EXTRA_DATA_DIR not set" in capsys.readouterr().out
    monkeypatch.setenv("DPQUERY_EXTRA_DATA_DIR", str(tmp_path))
    assert user_items.tables(["ratings-2016"]) == {}
    where = tmp_path / "movielens" / "ratings-2016.csv"
    assert f"{where} not found" in capsys.readouterr().out
    where.parent.mkdir()
    where.write_text("1,2\n")
    mine = tmp_path / "mine.csv"
    mine.write_text("1,2\n")
    assert user_items.tables(["ratings-2016", f"mine={mine}"]) == {
        "ratings-2016": where,
        "mine": mine,
    }
    with pytest.raises(ValueError, match="NAME=PATH"):
        user_items.resolve("=x.csv")


def test_the_movielens_table_of_2016_when_present(user_items) -> None:  # type: ignore[no-untyped-def]
    root = os.environ.get("DPQUERY_EXTRA_DATA_DIR")
    path = Path(root or "/nonexistent") / "movielens" / "ratings-2016.csv"
    if not path.is_file():
        pytest.skip(f"MovieLens' ratings are not in the repository (looked for {path})")
    items = user_items.read_user_items(path)
    assert (items.n, items.d, items.nnz) == (671, 9_066, 100_004)  # ml-latest-small, 2016


def _bench(name: str, results: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RESULTS = results  # a failing run writes nothing into docs/
    return module


def test_the_benchmarks_stop_when_every_table_is_absent(user_items, monkeypatch, capsys,
                                                        tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    # an absent --items table is skipped, never replaced by the default data
    monkeypatch.delenv("DPQUERY_EXTRA_DATA_DIR", raising=False)
    with pytest.raises(SystemExit):
        _bench("bench_wide", tmp_path).main(["--items", "ratings-2016", "--out", "x"])
    assert "every --items table is absent" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["bench_wide_bounds.py", "--auto", "--items", "nowhere"])
    with pytest.raises(SystemExit):
        _bench("bench_wide_bounds", tmp_path).main()
    assert "skip nowhere: $DPQUERY_EXTRA_DATA_DIR not set" in capsys.readouterr().out
