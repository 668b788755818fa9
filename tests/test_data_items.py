"""Item sets: canonical sparse records, their file form, and conversions to and from bits."""

from __future__ import annotations

import gzip
import importlib
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dpquery.data.items as items_module
from dpquery.data import (
    BinaryData,
    ItemSets,
    from_sparse,
    read_item_sets,
    read_transactions,
    save_binary,
    write_item_sets,
)
from dpquery.errors import DPQueryError


def _random_items(n: int, d: int, p: float, seed: int) -> ItemSets:
    dense = (np.random.default_rng(seed).random((n, d)) < p).astype(np.uint8)
    return ItemSets.from_sparse(sp.csr_array(dense))


def _same(a: ItemSets, b: ItemSets) -> bool:
    weights_equal = (a.weights is None and b.weights is None) or (
        a.weights is not None and b.weights is not None and np.array_equal(a.weights, b.weights)
    )
    return (
        a.matrix.shape == b.matrix.shape
        and np.array_equal(a.matrix.indptr, b.matrix.indptr)
        and np.array_equal(a.matrix.indices, b.matrix.indices)
        and weights_equal
    )


def test_canonical_form_from_any_sparse_matrix():
    rows, cols = np.array([0, 0, 2, 1, 2]), np.array([3, 1, 0, 2, 0])
    data = np.array([5, 1, 1, 0, 2])  # a duplicate (2, 0), an explicit zero (1, 2)
    matrix = sp.coo_matrix((data, (rows, cols)), shape=(4, 4))
    items = ItemSets.from_sparse(matrix, binarize=True)  # 5 and 2 are ones
    m = items.matrix
    assert isinstance(m, sp.csr_array) and m.dtype == np.uint8
    assert m.toarray().tolist() == [[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    assert m.indices.tolist() == [1, 3, 0] and (m.data == 1).all()
    assert (items.n, items.d, items.nnz) == (4, 4, 3)
    assert items.lengths().tolist() == [2, 0, 1, 0] and items.lengths().dtype == np.int64
    with pytest.raises(ValueError, match="read-only"):
        m.data[0] = 7
    with pytest.raises(DPQueryError, match=r"scipy\.sparse"):
        ItemSets(np.eye(2))  # type: ignore[arg-type]


def test_weights_checked_and_used():
    m = sp.csr_array(np.array([[1, 0], [1, 1], [0, 0]]))
    items = ItemSets(m, np.array([1.0, 3.0, 0.0]))
    assert items.item_frequencies().tolist() == [1.0, 0.75]
    assert ItemSets(m).item_frequencies().tolist() == [2 / 3, 1 / 3]
    for bad, message in (
        ([1.0, -1.0, 0.0], "record 1 has weight -1.0"),
        ([1.0, np.nan, 0.0], "record 1"),
        ([0.0, 0.0, 0.0], "not all be zero"),
        ([1.0, 1.0], r"shape \(3,\)"),
    ):
        with pytest.raises(DPQueryError, match=message):
            ItemSets(m, np.array(bad))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["s.transactions.csv", "s.transactions.csv.gz"])
def test_round_trip_with_empty_records(tmp_path, weighted, name):
    items = _random_items(57, 11, 0.15, seed=3)
    assert (items.lengths() == 0).any()  # empty records must survive the round trip
    lengths = items.lengths().copy()
    lengths[-1] = 0  # the last record empty too: only the header says it exists
    m = items.matrix.tolil()
    m[56, :] = 0
    items = ItemSets(m)
    if weighted:
        w = np.random.default_rng(0).random(items.n) / 3  # floats that need every digit
        w[3] = 0.0
        items = ItemSets(items.matrix, w)
    path = tmp_path / name
    write_item_sets(path, items)
    opened = gzip.open(path, "rt") if name.endswith(".gz") else path.open()
    with opened as fh:
        assert fh.readline() == "# rows 57 items 11\n"
    back = read_item_sets(path)
    assert _same(back, items)
    assert _same(read_item_sets(path, n=57, d=11), items)


def test_all_empty_and_npz_forms(tmp_path):
    empty = ItemSets(sp.csr_array((5, 4), dtype=np.uint8))
    write_item_sets(tmp_path / "e.csv", empty)
    assert _same(read_item_sets(tmp_path / "e.csv", allow_empty=True), empty)
    items = _random_items(70, 9, 0.2, seed=1)
    sp.save_npz(tmp_path / "m.npz", sp.csc_matrix(items.matrix.toarray()))
    assert _same(read_item_sets(tmp_path / "m.npz"), items)
    save_binary(tmp_path / "b.npz", items.to_binary())
    assert _same(read_item_sets(tmp_path / "b.npz", n=70), items)
    with pytest.raises(DPQueryError, match="d=8 was given but the file's first line says 9"):
        read_item_sets(tmp_path / "m.npz", d=8)
    grouped = BinaryData.from_dense(np.eye(3, dtype=np.uint8), np.array([[0, 3]]))
    save_binary(tmp_path / "g.npz", grouped)
    with pytest.raises(DPQueryError, match="one-hot group"):
        read_item_sets(tmp_path / "g.npz")


def test_binary_conversions_agree_with_packing():
    rng = np.random.default_rng(2)
    dense = (rng.random((131, 23)) < 0.2).astype(np.uint8)
    bits = BinaryData.from_dense(dense)
    items = ItemSets.from_binary(bits)
    assert np.array_equal(items.matrix.toarray(), dense)
    assert np.array_equal(items.to_binary().words, from_sparse(sp.csr_array(dense)).words)
    grouped = BinaryData.from_dense(np.eye(3, dtype=np.uint8), np.array([[0, 3]]))
    with pytest.raises(DPQueryError, match="one-hot group"):
        ItemSets.from_binary(grouped)
    with pytest.raises(DPQueryError, match="weighted item sets"):
        ItemSets(items.matrix, np.ones(131)).to_binary()


def test_sizes_from_the_header_or_given(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# rows 4 items 3\n0,2\n3 1\n")
    assert read_item_sets(path).matrix.toarray().tolist() == [
        [0, 0, 1],
        [0] * 3,
        [0] * 3,
        [0, 1, 0],
    ]
    assert read_transactions(path).to_dense().tolist() == [[0, 0, 1], [0] * 3, [0] * 3, [0, 1, 0]]
    with pytest.raises(DPQueryError, match="n=5 was given but the file's first line says 4"):
        read_item_sets(path, n=5)
    with pytest.raises(DPQueryError, match="n=5 was given"):
        read_transactions(path, n=5, d=3)
    bare = tmp_path / "bare.csv"
    bare.write_text("0 2\n")
    with pytest.raises(DPQueryError, match=r"bare.csv: no '# rows N items D' first line"):
        read_item_sets(bare, n=2)
    assert read_item_sets(bare, n=2, d=3).nnz == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# rows 3 items 2\n0 1\n3 0\n", r"bad.csv: 1 row index\(es\) outside \[0, 3\).*\[3\]"),
        ("# rows 3 items 2\n0 1\n1 -1\n", r"bad.csv: 1 item index\(es\) outside \[0, 2\).*\[-1\]"),
        ("# rows 3 items 2\n0 1\n1 x\n", r"bad.csv: .*item 'x' is not an integer"),
        ("# rows 3 items 2\n0 1.5\n", r"bad.csv: .*item '?1.5'? is not an integer"),
        ("# rows 3 items 2\n0 1 w\n", r"bad.csv: weight 'w' is not a number"),
        ("# rows 3 items 2\n0 1 1\n1 0 1\n", r"bad.csv: .*record 2 has none"),
        ("# rows 2 items 2\n0 1 1\n0 0 2\n1 -1 1\n", r"bad.csv: the lines of record 0"),
        ("# rows 2 items 2\n0 1 -2\n1 -1 1\n", r"bad.csv: weights must be finite.*-2"),
        ("# rows 2 items 2\n0 1 0\n1 -1 0\n", r"bad.csv: the weights are all zero"),
        ("# rows 2 items 2\n0 1 1 1\n", r"bad.csv: line 2 holds 4 values \('0 1 1 1'\)"),
        ("# rows 0 items 2\n", r"bad.csv: n and d must be positive integers, got n=0, d=2"),
    ],
)
def test_bad_files_name_the_file_and_the_value(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DPQueryError, match=message):
        read_item_sets(path)


@pytest.mark.parametrize("value", [-1, 2, 2.5])
def test_a_matrix_holding_other_values_than_0_and_1_is_refused(tmp_path, value):
    """A rating or a count is not an item: refused, naming the entry, unless binarize=True;
    explicit zeros and a one stored twice are fine."""
    rows, cols = np.array([0, 0, 1, 3, 3, 4]), np.array([2, 2, 5, 17, 19, 1])
    data = np.array([1, 1, 0, value, 1, value], dtype=float)  # (4, 1) comes after (3, 17)
    matrix = sp.coo_array((data, (rows, cols)), shape=(5, 20))
    message = (
        rf"entry \(3, 17\) is {value:g}; item data holds 0 and 1 \(pass binarize=True to "
        r"count every non-zero as 1\)"
    )
    for read in (ItemSets.from_sparse, from_sparse):
        with pytest.raises(DPQueryError, match=message):
            read(matrix)
    ones = ItemSets.from_sparse(matrix, binarize=True)
    assert sorted(zip(*ones.matrix.nonzero(), strict=True)) == [(0, 2), (3, 17), (3, 19), (4, 1)]
    assert from_sparse(matrix, binarize=True).to_dense().sum() == 4
    ok = sp.coo_array((np.array([1, 1, 0.0]), (np.array([0, 0, 1]), np.array([2, 2, 3]))))
    assert ItemSets.from_sparse(ok).nnz == 1  # a one stored twice, an explicit zero
    once = sp.csr_array((data[1:], (rows[1:], cols[1:])), shape=(5, 20))  # no pair repeated
    sp.save_npz(tmp_path / "ratings.npz", once)
    with pytest.raises(DPQueryError, match=rf"ratings.npz: entry \(3, 17\) is {value:g}"):
        read_item_sets(tmp_path / "ratings.npz")
    nan = sp.csr_array(np.array([[0.0, np.nan]]))
    for binarize in (False, True):
        with pytest.raises(DPQueryError, match=r"entry \(0, 1\) is nan; item data holds 0 and 1$"):
            ItemSets.from_sparse(nan, binarize=binarize)


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [("# rows 9 items 9\n1 2\n3 4\n7 5 0.5\n", 4, "3 values ('7 5 0.5')"),
     ("1 2\n# a comment\n\n7 5 0.5\n", 4, "3 values ('7 5 0.5')"),
     ("1 2\n3\n", 2, "1 value ('3')")],
)  # fmt: skip
def test_a_line_of_the_wrong_width_is_named_once(tmp_path, text, line, shown):
    path = tmp_path / "t.txt"
    path.write_text(text)
    with pytest.raises(DPQueryError) as raised:
        read_transactions(path, n=9, d=9)
    assert str(raised.value) == (
        f"{path}: line {line} holds {shown}; expected 'row item' (two integers) on every line"
    )
    with pytest.raises(DPQueryError) as raised:
        read_item_sets(path, n=9, d=9)  # a third value is a weight, on every line or none
    assert str(raised.value) == (
        f"{path}: line {line} holds {shown}; expected 'row item' (two integers) on every "
        "line, or 'row item weight' on every line of a weighted file"
    )
    weighted = tmp_path / "w.txt"
    weighted.write_text("0 1 0.5\n1 -1 1\n1 0\n")
    with pytest.raises(DPQueryError, match=r"w.txt: line 3 holds 2 values \('1 0'\); expected"):
        read_item_sets(weighted, n=2, d=2)


def test_a_file_parsed_in_small_pieces_reads_the_same_and_names_the_files_lines(
    tmp_path, monkeypatch
):
    """The text is parsed a piece at a time (encode.CHUNK_CHARS): pieces of 16 characters
    cut a 3,600-line file into hundreds, and the pairs, the header's sizes, the weights and
    each error's line number are those of the file read whole."""
    # the module: the package's name encode is its function
    encode_module = importlib.import_module("dpquery.data.encode")
    items = _random_items(300, 40, 0.3, seed=4)  # no empty record
    rows, cols = items.matrix.nonzero()
    lines = [
        f"{r},{c}" if k % 7 == 0 else f"{r} {c}"
        for k, (r, c) in enumerate(zip(rows, cols, strict=True))
    ]
    text = "# rows 300 items 40\n" + "\n".join(lines[:500]) + "\n# a comment\n\n"
    text += "\n".join(lines[500:]) + "\n"
    plain, packed = tmp_path / "t.txt", tmp_path / "t.txt.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    whole = [read_item_sets(p) for p in (plain, packed)]
    monkeypatch.setattr(encode_module, "CHUNK_CHARS", 16)
    assert all(_same(read_item_sets(p), w) for p, w in zip((plain, packed), whole, strict=True))
    assert np.array_equal(read_transactions(plain).words, whole[0].to_binary().words)
    weighted = tmp_path / "w.txt"  # one weight per record, on every line of the record
    weighted.write_text("".join(f"{r} {c} {1 + r % 3}\n" for r, c in zip(rows, cols, strict=True)))
    assert np.array_equal(read_item_sets(weighted, n=300, d=40).weights[rows], 1 + rows % 3)
    last = len(text.splitlines())
    for bad, shown in (("7 5 0.5", "3 values ('7 5 0.5')"), ("3", "1 value ('3')")):
        plain.write_text(text + bad + "\n")
        with pytest.raises(DPQueryError, match=rf"line {last + 1} holds {re.escape(shown)}"):
            read_transactions(plain)
    plain.write_text(text + "1 2\n4 x\n")
    with pytest.raises(DPQueryError, match=r"item 'x' is not an integer"):
        read_item_sets(plain)


@pytest.mark.parametrize("text", ["", "\n\n", "# rows 100 items 50\n", "# only a comment\n"])
def test_a_file_without_pairs_is_refused(tmp_path, text):
    path = tmp_path / "x.transactions.csv"
    path.write_text(text)
    message = r"x.transactions.csv holds no records \(no 'row item' lines\): is it the right file"
    with pytest.raises(DPQueryError, match=message):
        read_item_sets(path, n=100, d=50)
    with pytest.raises(DPQueryError, match=message):
        read_transactions(path, n=100, d=50)
    assert read_item_sets(path, n=100, d=50, allow_empty=True).nnz == 0  # a release of empties


def test_duplicate_lines_are_counted_once_and_said(tmp_path):
    path = tmp_path / "people.txt"
    path.write_text("0 1\n0 1\n2 3\n0 1\n2 3\n1 1\n")
    said = r"people.txt: 3 duplicate \(row, item\) lines counted once \(not private: read from "
    with pytest.warns(UserWarning, match=said + r"the data, for the curator\)"):
        items = read_item_sets(path, n=3, d=4)
    assert items.nnz == 3
    with pytest.warns(UserWarning, match=said):
        assert read_transactions(path, n=3, d=4).to_dense().sum() == 3
    path.write_text("0 1\n0 2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_item_sets(path, n=3, d=4)
        read_transactions(path, n=3, d=4)


def test_missing_and_unwritable_paths_leave_nothing(tmp_path, monkeypatch):
    with pytest.raises(DPQueryError, match="does not exist"):
        read_item_sets(tmp_path / "absent.csv", n=2, d=2)
    with pytest.raises(DPQueryError, match="not a dpquery"):
        (tmp_path / "junk.npz").write_bytes(b"not a zip")
        read_item_sets(tmp_path / "junk.npz")
    items = _random_items(10, 4, 0.3, seed=0)
    with pytest.raises(DPQueryError, match="does not exist"):
        write_item_sets(tmp_path / "no" / "s.csv", items)
    # a failure half-way through the write leaves neither the target nor a temporary file
    target = tmp_path / "out.csv"

    def fail_half_way(fh, matrix):  # the lines of unweighted records
        fh.write(b"0 1\n")
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(items_module, "_write_unweighted", fail_half_way)
        with pytest.raises(OSError, match="disk full"):
            write_item_sets(target, items)
    assert list(tmp_path.glob("*out.csv*")) == []
    # and an existing file is left as it was
    target.write_text("keep me")
    with monkeypatch.context() as patch:
        patch.setattr(items_module, "_write_unweighted", fail_half_way)
        with pytest.raises(OSError):
            write_item_sets(target, items)
    assert target.read_text() == "keep me"
    assert [p.name for p in tmp_path.glob("*out.csv*")] == ["out.csv"]


NPM = "wide/npm_words.transactions.csv.gz"


@pytest.mark.realdata
def test_reads_the_whole_npm_words_file(real_data_dir):
    path = real_data_dir / NPM
    if not path.exists():
        pytest.skip(f"{path} is absent (npm_words, see data/wide/README.md)")
    items = read_item_sets(path, n=196_708, d=45_375)
    assert (items.n, items.d, items.nnz) == (196_708, 45_375, 1_384_005)
    assert items.lengths().max() == 25 and items.lengths().min() == 1
    counts = np.asarray(items.matrix.sum(axis=0)).ravel()
    assert counts[:5000].min() >= counts[5000:].max()  # items 0..4,999 are the most frequent
