"""Item data from a raw ``user,item`` CSV (a header, raw ids, a public item list):
``dpquery.data.raw_items`` and ``dpquery synth --item-list``."""

from __future__ import annotations

import gzip
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery import pipeline
from dpquery.data import ItemSets, read_item_sets, write_item_sets
from dpquery.data.raw_items import (
    ItemLabels,
    raw_header,
    read_item_list,
    read_raw_items,
    write_raw_item_sets,
)
from dpquery.errors import DPQueryError

CATALOGUE = [f"tt{j:04d}" for j in range(40)] + ["Le Fabuleux, Amélie", "  spaced  "]


def _table(n: int, seed: int) -> pd.DataFrame:
    """A ratings table: string user ids, string item ids (some outside the catalogue),
    ratings and times, the lines shuffled (a user's lines interleaved with others')."""
    rng = np.random.default_rng(seed)
    popular = rng.random(len(CATALOGUE)) ** 3
    rows = []
    for u in range(n):
        held = np.flatnonzero(rng.random(len(CATALOGUE)) < popular)
        rows += [(f"user-{7919 * u + 13}", CATALOGUE[j].strip()) for j in held]
        rows += [(f"user-{7919 * u + 13}", f"unlisted{u}")] * int(u % 5 == 0)
    frame = pd.DataFrame(rows, columns=["userId", "movieId"])
    frame["rating"] = rng.integers(1, 6, len(frame))
    frame["timestamp"] = rng.integers(10**9, 2 * 10**9, len(frame))
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.fixture
def raw(tmp_path):
    table = _table(60, seed=1)
    table.to_csv(tmp_path / "ratings.csv", index=False)
    (tmp_path / "items.txt").write_text("\n".join(CATALOGUE) + "\n\n")
    return tmp_path, table


def _expected(table: pd.DataFrame) -> list[frozenset[str]]:
    listed = {c.strip() for c in CATALOGUE}
    records: dict[str, set[str]] = {}
    for user, item in zip(table["userId"], table["movieId"], strict=True):
        records.setdefault(user, set())
        if item in listed:
            records[user].add(item)
    return [frozenset(r) for r in records.values()]


def _records(items: ItemSets, labels: ItemLabels) -> list[frozenset[str]]:
    names = np.asarray(labels.items, dtype=object)
    m = items.matrix
    return [frozenset(names[m.indices[m.indptr[i] : m.indptr[i + 1]]]) for i in range(items.n)]


# -- reading --------------------------------------------------------------------------
def test_reads_one_record_per_user_over_the_catalogue(raw):
    tmp, table = raw
    with pytest.warns(UserWarning, match="lines dropped .* for the curator"):
        items, labels = read_raw_items(tmp / "ratings.csv", tmp / "items.txt")
    assert labels.user_column == "userId" and labels.item_column == "movieId"
    assert labels.items == tuple(c.strip() for c in CATALOGUE)  # spaces stripped
    assert items.n == table["userId"].nunique() and items.d == len(CATALOGUE)
    got = _records(items, labels)
    assert sorted(map(sorted, got)) == sorted(map(sorted, _expected(table)))


def test_columns_named_tabs_gzip_and_an_empty_user_dropped(tmp_path):
    lines = ["rating\tartist\tuser", "5\ta\tu1", "3\tb\tu1", "1\ta\t", "2\tc\tu2"]
    with gzip.open(tmp_path / "t.tsv.gz", "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    (tmp_path / "l.txt").write_text("a\nb\nc\nd\n")
    with pytest.warns(UserWarning, match="1 line dropped"):
        items, labels = read_raw_items(
            tmp_path / "t.tsv.gz", tmp_path / "l.txt", user_column="user", item_column="artist"
        )
    assert items.n == 2 and items.d == 4
    assert sorted(map(sorted, _records(items, labels))) == [["a", "b"], ["c"]]


def test_ids_are_text_never_numbers(tmp_path):
    (tmp_path / "t.csv").write_text("u,i\n007,01\n7,1\n7,1.0\n")
    (tmp_path / "l.txt").write_text("1\n01\n1.0\n")
    items, labels = read_raw_items(tmp_path / "t.csv", tmp_path / "l.txt")
    assert items.n == 2  # "007" and "7" are two users
    assert sorted(map(sorted, _records(items, labels))) == [["01"], ["1", "1.0"]]


def test_the_id_mapping_round_trips(raw, tmp_path):
    tmp, _ = raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items, labels = read_raw_items(tmp / "ratings.csv", tmp / "items.txt")
    for name in ("back.transactions.csv", "back.transactions.csv.gz"):
        write_raw_item_sets(tmp_path / name, items, labels)
        again, labels2 = read_raw_items(tmp_path / name, tmp / "items.txt")
        assert labels2 == labels
        assert again.n == items.n and (again.matrix != items.matrix).nnz == 0  # empty users too
    text = (tmp_path / "back.transactions.csv").read_text().splitlines()
    assert text[0] == f"# rows {items.n} items {items.d}" and text[1] == "userId,movieId"
    assert '"Le Fabuleux, Amélie"' in (tmp_path / "back.transactions.csv").read_text() or (
        "Le Fabuleux" not in "".join(text)
    )


def test_a_release_file_gives_its_records_by_number(tmp_path):
    (tmp_path / "l.txt").write_text("a\nb\n")
    (tmp_path / "s.csv").write_text("# rows 4 items 2\nuser,item\n3,b\n1,a\n1,b\n")
    items, _ = read_raw_items(tmp_path / "s.csv", tmp_path / "l.txt")
    assert items.n == 4 and items.matrix.toarray().tolist() == [[0, 0], [1, 1], [0, 0], [0, 1]]
    (tmp_path / "bad.csv").write_text("# rows 2 items 2\nuser,item\n2,b\n")
    with pytest.raises(DPQueryError, match=r"says 2 records .* user '2' is not one"):
        read_raw_items(tmp_path / "bad.csv", tmp_path / "l.txt")
    (tmp_path / "wide.csv").write_text("# rows 2 items 3\nuser,item\n1,b\n")
    with pytest.raises(DPQueryError, match="says 3 items, the item list holds 2"):
        read_raw_items(tmp_path / "wide.csv", tmp_path / "l.txt")


def test_a_row_item_file_is_not_a_raw_table(tmp_path):
    write_item_sets(tmp_path / "x.transactions.csv", ItemSets(sp.csr_array(np.eye(3))))
    (tmp_path / "bare.txt").write_text("# user,item\n0,1\n2 0\n")
    (tmp_path / "plain.csv").write_text("0,1\n1,2\n")
    for name in ("x.transactions.csv", "bare.txt", "plain.csv"):
        assert raw_header(tmp_path / name) is None
    (tmp_path / "h.csv").write_text("\n\nuser;item\n1;2\n")
    assert raw_header(tmp_path / "h.csv") == ["user", "item"]


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        ("", {}, "is empty"),
        ("userId,movieId\n", {}, "no records"),
        ("userId,movieId\n1,2\n", {"user_column": "user"},
         "no user column 'user'; the file has the columns 'userId', 'movieId'"),
        ("userId,movieId\n1,2\n", {"item_column": "userId", "user_column": "userId"},
         "both 'userId'"),
        ("only\n1\n", {}, "a user column and an item column"),
        ("1,2\n3,4\n", {}, "no header line"),
    ],
)  # fmt: skip
def test_errors_name_what_is_wrong(tmp_path, text, kwargs, message):
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "l.txt").write_text("2\n")
    with pytest.raises(DPQueryError, match=message):
        read_raw_items(tmp_path / "t.csv", tmp_path / "l.txt", **kwargs)


def test_item_list_errors(tmp_path):
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    (tmp_path / "blank.txt").write_text("\n  \n")
    with pytest.raises(DPQueryError, match="names item 'a' twice"):
        read_item_list(tmp_path / "dup.txt")
    with pytest.raises(DPQueryError, match="is empty"):
        read_item_list(tmp_path / "blank.txt")
    with pytest.raises(DPQueryError, match="does not exist"):
        read_item_list(tmp_path / "none.txt")
    with pytest.raises(DPQueryError, match="does not exist"):
        read_raw_items(tmp_path / "none.csv", tmp_path / "dup.txt")


# -- privacy: neighbours and the same release -------------------------------------------
def test_a_user_added_adds_one_record_and_changes_no_other(raw, tmp_path):
    """Add/remove: the table with one more user's lines (interleaved with the others') reads
    as the same item sets plus one record, that user's items in the catalogue: every
    sensitivity of the release over item sets holds unchanged."""
    tmp, table = raw
    rng = np.random.default_rng(5)
    extra = pd.DataFrame({"userId": "newcomer", "movieId": ["tt0001", "tt0003", "zzz"],
                          "rating": 4, "timestamp": 1})  # fmt: skip
    grown = pd.concat([table, extra]).iloc[rng.permutation(len(table) + 3)]
    grown.to_csv(tmp_path / "grown.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base, labels = read_raw_items(tmp / "ratings.csv", tmp / "items.txt")
        more, _ = read_raw_items(tmp_path / "grown.csv", tmp / "items.txt")
    assert more.n == base.n + 1
    left = sorted(map(sorted, _records(base, labels)))
    right = sorted(map(sorted, _records(more, labels)))
    right.remove(["tt0001", "tt0003"])
    assert left == right


def test_the_release_is_the_row_item_files_release(raw, tmp_path):
    """Read from the raw table or from the equivalent 0-based 'row item' file (its users in
    another order), the same seed releases the same records: the raw reader only maps ids,
    before any mechanism."""
    tmp, table = raw
    listed = pd.Index([c.strip() for c in CATALOGUE])
    users = pd.Index(sorted(table["userId"].unique(), reverse=True))
    cols = listed.get_indexer(table["movieId"])
    keep = cols >= 0
    rows = users.get_indexer(table["userId"])[keep]
    lines = [f"{r} {c}" for r, c in zip(rows, cols[keep], strict=True)]
    (tmp_path / "x.transactions.csv").write_text(
        f"# rows {len(users)} items {len(listed)}\n" + "\n".join(lines) + "\n"
    )
    for relation in ("add-remove", "replace-one"):
        results = []
        for source in (
            pipeline.ItemFile(tmp / "ratings.csv", raw=True, item_list=tmp / "items.txt"),
            pipeline.ItemFile(tmp_path / "x.transactions.csv"),
        ):
            request = pipeline.ReleaseRequest(source=source, options={"epsilon": 4.0},
                                              seed=11, neighbours=relation)  # fmt: skip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(pipeline.release(request))
        a, b = (r.rows.matrix for r in results)
        assert a.shape == b.shape and (a != b).nnz == 0
        assert results[0].report == results[1].report


# -- the command line -------------------------------------------------------------------
def test_synth_writes_catalogue_ids_and_synthetic_users(raw):
    tmp, table = raw
    out = tmp / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                    str(tmp / "items.txt"), "--epsilon", "8", "--out", str(out),
                    "--seed", "3", "--report", str(tmp / "r.json"))  # fmt: skip
    assert r.code == 0, r.err
    assert "lines dropped" in r.err and "for the curator" in r.err
    text = out.read_text()
    m = int(text.split()[2])  # the noisy count of records the release drew (n private)
    assert "n private" in r.out and f"wrote {m} rows" in r.out
    assert not any(u in text for u in table["userId"].unique())  # no real user id
    header = text.splitlines()[1]
    assert header == "userId,movieId"
    written = pd.read_csv(out, skiprows=1, dtype=str, keep_default_na=False)
    assert set(written["userId"].astype(int)) <= set(range(m))
    assert set(written["movieId"]) <= {c.strip() for c in CATALOGUE}
    assert len(written) > 0  # at epsilon 8 the head items are released
    again, _ = read_raw_items(out, tmp / "items.txt")
    assert again.d == len(CATALOGUE)


def test_synth_dense_csv_names_columns_by_item_id(raw):
    tmp, _ = raw
    out = tmp / "s.csv"
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                    str(tmp / "items.txt"), "--epsilon", "1", "--out", str(out), "--seed", "3",
                    "--quiet")  # fmt: skip
    assert r.code == 0, r.err
    assert list(pd.read_csv(out, nrows=0).columns) == [c.strip() for c in CATALOGUE]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--transactions"], "give its public item universe, --item-list FILE"),
        (["--transactions", "--n", "60", "--items", "42"],
         "--n and --items are for a file of 0-based 'row item' pairs"),
        (["--item-list", "ITEMS", "--item-column", "movie"],
         "no item column 'movie'; the file has the columns 'userId', 'movieId', 'rating'"),
        (["--item-list", "ITEMS", "--weights"], "without --weights"),
        (["--item-list", "NOPE"], "item list .* does not exist"),
    ],
)  # fmt: skip
def test_synth_errors_exit_non_zero_and_write_nothing(raw, flags, message):
    tmp, _ = raw
    flags = [str(tmp / "items.txt") if f == "ITEMS" else str(tmp / "no.txt") if f == "NOPE"
             else f for f in flags]  # fmt: skip
    out = tmp / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), *flags, "--epsilon", "1",
                    "--out", str(out))  # fmt: skip
    assert r.code != 0 and pytest.importorskip("re").search(message, r.err), r.err
    assert not out.exists() and sorted(p.name for p in tmp.iterdir()) == [
        "items.txt",
        "ratings.csv",
    ]


def test_plan_takes_the_item_list_as_d(raw):
    tmp, _ = raw
    common = ["privacy", "synth", "--n", "60", "--epsilon", "1"]
    by_list = dpquery_cli(*common, "--item-list", str(tmp / "items.txt"))
    by_d = dpquery_cli(*common, "--items", str(len(CATALOGUE)))
    assert by_list.code == 0 and by_list.out == by_d.out


@pytest.mark.skipif(
    not (Path(os.environ.get("DPQUERY_DATA_DIR", "/nonexistent")) / "wide").is_dir(),
    reason="DPQUERY_DATA_DIR's wide table not available",
)
def test_npm_words_as_a_raw_table(tmp_path):
    """npm_words' first 2,000 records, written as a raw table of package and word names
    (its public vocabulary the item list), read back as the same item sets."""
    wide = Path(os.environ["DPQUERY_DATA_DIR"]) / "wide"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = read_item_sets(wide / "npm_words.transactions.csv.gz", n=196_708, d=45_375)
    assert raw_header(wide / "npm_words.transactions.csv.gz") is None  # a comment, pairs
    part = ItemSets(items.matrix[:2000])
    words = tuple((wide / "npm_words.vocab.txt").read_text().split())
    assert len(words) == part.d
    coo = part.matrix.tocoo()
    frame = pd.DataFrame({"package": [f"pkg-{r}" for r in coo.row],
                          "word": np.asarray(words, dtype=object)[coo.col]})  # fmt: skip
    frame.to_csv(tmp_path / "npm.csv", index=False)
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    got, labels = read_raw_items(tmp_path / "npm.csv", tmp_path / "vocab.txt")
    nonempty = ItemSets(part.matrix[np.diff(part.matrix.indptr) > 0])
    assert got.n == nonempty.n and (got.matrix != nonempty.matrix).nnz == 0
    assert labels.items == words


def test_evaluate_reads_the_raw_table_and_its_release(raw):
    """``dpquery evaluate`` on a raw table over its item list and the release synth wrote
    from it: the same measures as on the equivalent item sets (NOT private)."""
    tmp, _ = raw
    out = tmp / "s.transactions.csv"
    made = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                       str(tmp / "items.txt"), "--epsilon", "8", "--out", str(out),
                       "--seed", "3", "--quiet")  # fmt: skip
    assert made.code == 0, made.err
    r = dpquery_cli("evaluate", "--data", str(tmp / "ratings.csv"), "--item-list",
                    str(tmp / "items.txt"), "--synthetic", str(out), "--report",
                    str(tmp / "e.json"))  # fmt: skip
    assert r.code == 0, r.err
    from dpquery.evaluation.wide import wide_evaluation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real, _ = read_raw_items(tmp / "ratings.csv", tmp / "items.txt")
        synthetic, _ = read_raw_items(out, tmp / "items.txt")
    import json

    assert json.loads((tmp / "e.json").read_text()) == json.loads(
        json.dumps(wide_evaluation(real, synthetic, seed=0))
    )
    made = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                       str(tmp / "items.txt"), "--epsilon", "8", "--out", str(tmp / "s.npz"),
                       "--seed", "3", "--quiet")  # fmt: skip
    r = dpquery_cli("evaluate", "--data", str(tmp / "ratings.csv"), "--item-list",
                    str(tmp / "items.txt"), "--synthetic", str(tmp / "s.npz"))  # fmt: skip
    assert made.code == 0 and r.code == 0, (made.err, r.err)  # its columns: the list's order
