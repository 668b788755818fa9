"""Bit packing, BinaryData, encoding tables (and their errors), sparse input, generators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from dpquery.data import (
    Binary,
    BinaryData,
    Categorical,
    Domain,
    Numeric,
    biased_bits,
    encode,
    encode_file,
    from_sparse,
    load_binary,
    pack_columns,
    power_law_items,
    read_table,
    read_transactions,
    save_binary,
    synthetic,
    unpack_columns,
)
from dpquery.errors import DomainError, DPQueryError


def padding_is_zero(words: np.ndarray, n: int) -> bool:
    """Every bit past record n-1 (in the last word) is zero, checked independently."""
    if n % 64 == 0:
        return True
    tail = words[:, -1] >> np.uint64(n % 64)
    return bool((tail == 0).all())


# -- packing ------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(0, 300), st.integers(0, 6)),
        elements=st.integers(0, 1),
    )
)
def test_pack_unpack_round_trip(dense):
    n, d = dense.shape
    words = pack_columns(dense)
    assert words.dtype == np.uint64
    assert words.shape == (d, -(-n // 64))
    assert padding_is_zero(words, n)
    assert np.array_equal(unpack_columns(words, n), dense)
    data = BinaryData(words, n)
    assert np.array_equal(data.to_dense(), dense)
    assert data.column_counts().tolist() == dense.sum(axis=0).tolist()
    for j in range(d):
        assert np.array_equal(data.column(j), dense[:, j].astype(bool))


def test_layout_record_i_is_bit_i_mod_64_of_word_i_div_64():
    n = 130
    for i in (0, 1, 63, 64, 100, 129):
        dense = np.zeros((n, 2), np.uint8)
        dense[i, 1] = 1
        words = pack_columns(dense)
        expected = np.zeros((2, 3), np.uint64)
        expected[1, i // 64] = np.uint64(1) << np.uint64(i % 64)
        assert np.array_equal(words, expected)


def test_pack_treats_nonzero_as_one_and_needs_2d():
    assert unpack_columns(pack_columns(np.array([[0, 5], [-1, 0]])), 2).tolist() == [
        [0, 1],
        [1, 0],
    ]
    with pytest.raises(DPQueryError, match="2-D"):
        pack_columns(np.zeros(5))


@pytest.mark.parametrize(("n", "mask"), [(1, 1), (64, 2**64 - 1), (70, 2**6 - 1), (128, 2**64 - 1)])
def test_tail_mask(n, mask):
    data = BinaryData.from_dense(np.ones((n, 1), np.uint8))
    assert int(data.tail_mask) == mask
    assert int(data.words[0, -1]) == mask


def test_binary_data_validation():
    with pytest.raises(DPQueryError, match="n=65 records need 2"):
        BinaryData(np.zeros((3, 1), np.uint64), 65)
    with pytest.raises(DPQueryError, match=r"\(d, n_words\)"):
        BinaryData(np.zeros(3, np.uint64), 3)
    with pytest.raises(DPQueryError, match="only 0 and 1"):
        BinaryData.from_dense(np.array([[0, 2]]))
    with pytest.raises(DPQueryError, match="inside"):
        BinaryData(np.zeros((3, 1), np.uint64), 5, np.array([[1, 4]]))
    with pytest.raises(DPQueryError, match="overlap"):
        BinaryData(np.zeros((4, 1), np.uint64), 5, np.array([[0, 3], [2, 4]]))
    with pytest.raises(DPQueryError, match="non-empty"):
        BinaryData(np.zeros((4, 1), np.uint64), 5, np.array([[2, 2]]))
    dom = Domain.binary(3)
    with pytest.raises(DPQueryError, match="domain has 3 bits but the data has 4"):
        BinaryData(np.zeros((4, 1), np.uint64), 5, domain=dom)
    data = BinaryData(np.zeros((4, 1), np.uint64), 5)
    with pytest.raises(ValueError, match="read-only"):
        data.words[0, 0] = 1


def test_save_load_binary_round_trip(tmp_path):
    dom = Domain((Categorical("c", ("a", "b", "c")), Binary("b"), Numeric("x", (0, 1, 2))))
    table = pd.DataFrame({"c": ["a", "c", "b"] * 30, "b": [0, 1, 1] * 30, "x": [0.5, 2, 1] * 30})
    data = encode(table, dom)
    path = tmp_path / "data.npz"
    save_binary(path, data)
    back = load_binary(path)
    assert back.n == data.n and np.array_equal(back.words, data.words)
    assert back.onehot_groups.tolist() == data.onehot_groups.tolist()
    assert back.domain == dom
    assert [p.name for p in tmp_path.iterdir()] == ["data.npz"]
    bare = BinaryData.from_dense(np.eye(3, dtype=np.uint8))
    save_binary(tmp_path / "bare.npz", bare)
    assert load_binary(tmp_path / "bare.npz").domain is None


def test_load_binary_rejects_other_files(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, words=np.zeros((1, 1), np.uint64))
    with pytest.raises(DPQueryError, match="not a dpquery binary data file"):
        load_binary(other)
    text = tmp_path / "t.npz"
    text.write_text("hello")
    with pytest.raises(DPQueryError, match=r"t\.npz"):
        load_binary(text)
    with pytest.raises(DPQueryError, match=r"absent\.npz"):
        load_binary(tmp_path / "absent.npz")
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, format=np.array("something/else"), words=np.zeros((1, 1), np.uint64))
    with pytest.raises(DPQueryError, match=r"is not dpquery\.BinaryData"):
        load_binary(wrong)


def test_save_binary_into_missing_folder_writes_nothing(tmp_path):
    with pytest.raises(DPQueryError, match="does not exist"):
        save_binary(tmp_path / "nope" / "d.npz", BinaryData.from_dense(np.eye(2, dtype=np.uint8)))
    assert list(tmp_path.iterdir()) == []


# -- encoding -----------------------------------------------------------------------------
DOM = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric("age", (0, 18, 65, 120), integer=True),
        Categorical("city", ("A", "B", "?"), missing="?"),
        Numeric("income", (0, 1e4, 1e5), out_of_range="clip", missing=True),
    )
)


def test_encode_small_table_exactly():
    table = pd.DataFrame(
        {
            "color": ["blue", "red", "green"],
            "smoker": ["yes", "no", "no"],
            "age": [18, 0, 120],
            "city": ["A", None, "B"],
            "income": [5e3, np.nan, 1e6],
            "extra": [1, 2, 3],  # ignored
        }
    )
    data = encode(table, DOM)
    assert (data.n, data.d) == (3, 3 + 1 + 3 + 3 + 3)
    assert data.domain is DOM
    assert data.onehot_groups.tolist() == DOM.onehot_groups.tolist()
    assert data.to_dense().tolist() == [
        [0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0],
        [1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1],
        [0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0],
    ]


def test_encode_empty_table():
    table = pd.DataFrame({name: pd.Series([], dtype=object) for name in DOM.names})
    data = encode(table, DOM)
    assert (data.n, data.d, data.n_words) == (0, DOM.d, 0)


def test_values_outside_domain_name_column_values_and_count():
    table = pd.DataFrame(
        {"color": ["red", "pink", "pink", "teal", "red"], "smoker": ["no"] * 5, "age": [1] * 5}
    )
    dom = Domain(DOM.attributes[:3])
    with pytest.raises(DomainError) as err:
        encode(table, dom)
    msg = str(err.value)
    assert "column 'color'" in msg
    assert "3 value(s)" in msg
    assert "'pink' (2x)" in msg and "'teal' (1x)" in msg
    assert "red" in msg  # what was expected


def test_outside_domain_lists_at_most_five_values():
    dom = Domain((Categorical("c", ("a",)),))
    with pytest.raises(DomainError, match=r"7 value\(s\).* and 2 more"):
        encode(pd.DataFrame({"c": list("bcdefgh")}), dom)


def test_binary_value_outside_domain():
    dom = Domain((Binary("smoker", ("no", "yes")),))
    with pytest.raises(DomainError, match=r"column 'smoker': 1 value\(s\).*'maybe' \(1x\)"):
        encode(pd.DataFrame({"smoker": ["no", "maybe"]}), dom)


def test_missing_values_need_a_missing_category():
    dom = Domain((Categorical("c", ("a", "b")), Numeric("x", (0, 1)), Binary("b")))
    ok = {"c": ["a", "b", "a"], "x": [0.5, 0.1, 1.0], "b": [0, 1, 1]}
    encode(pd.DataFrame(ok), dom)
    for col in ok:
        bad = dict(ok)
        bad[col] = [*ok[col][:2], None]
        with pytest.raises(DomainError, match=rf"column '{col}' has 1 missing value.*row 2"):
            encode(pd.DataFrame(bad), dom)


def test_missing_category_and_missing_bin():
    data = encode(pd.DataFrame({"city": [None, "A", np.nan]}), Domain((DOM["city"],)))
    assert data.to_dense().tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 1]]
    num = Domain((Numeric("x", (0, 1, 2), missing=True),))
    data = encode(pd.DataFrame({"x": [None, 1.5, np.nan]}), num)
    assert data.to_dense().tolist() == [[0, 0, 1], [0, 1, 0], [0, 0, 1]]


def test_out_of_range_numeric_error_vs_clip():
    table = pd.DataFrame({"x": [-5.0, 0.0, 3.0, 10.0, 11.0, 1e9]})
    strict = Domain((Numeric("x", (0, 5, 10)),))
    with pytest.raises(DomainError) as err:
        encode(table, strict)
    msg = str(err.value)
    assert "column 'x'" in msg and "3 value(s)" in msg
    assert "-5.0 (1x)" in msg and "11.0 (1x)" in msg and "[0, 10]" in msg
    assert "out_of_range='clip'" in msg
    clip = Domain((Numeric("x", (0, 5, 10), out_of_range="clip"),))
    assert encode(table, clip).to_dense()[:, 1].tolist() == [0, 0, 0, 1, 1, 1]


def test_non_numeric_values_in_numeric_column():
    table = pd.DataFrame({"x": ["1", "two", "3", "n/a", "two"]})
    with pytest.raises(
        DomainError, match=r"column 'x': 3 value\(s\) are not numbers.*'two' \(2x\)"
    ):
        encode(table, Domain((Numeric("x", (0, 5)),)))


def test_table_must_have_every_attribute():
    with pytest.raises(DomainError, match=r"lacks domain attribute\(s\) \['smoker'"):
        encode(pd.DataFrame({"color": ["red"]}), Domain(DOM.attributes[:2]))
    with pytest.raises(DPQueryError, match="DataFrame"):
        encode([["red"]], DOM)  # type: ignore[arg-type]


def test_recode_merges_raw_values():
    dom = Domain((Categorical("svc", ("http", "other"), recode={"ftp": "other", "ssh": "other"}),))
    data = encode(pd.DataFrame({"svc": ["ftp", "http", "other", "ssh"]}), dom)
    assert data.to_dense().tolist() == [[0, 1], [1, 0], [0, 1], [0, 1]]


def test_text_and_numbers_match_declared_values():
    """A CSV read as text holds "1" where the domain declares the number 1 (or 1.0)."""
    dom = Domain((Categorical("a", (1, 2)), Categorical("b", (1.0, 2.0)), Binary("c", (0, 1))))
    as_text = pd.DataFrame({"a": ["2", "1"], "b": ["1", "2.0"], "c": ["1", "0"]})
    as_numbers = pd.DataFrame({"a": [2.0, 1.0], "b": [1, 2], "c": [1, 0]})
    expected = [[0, 1, 1, 0, 1], [1, 0, 0, 1, 0]]
    assert encode(as_text, dom).to_dense().tolist() == expected
    assert encode(as_numbers, dom).to_dense().tolist() == expected
    with pytest.raises(DomainError, match="column 'a'"):
        encode(pd.DataFrame({"a": ["3"], "b": ["1"], "c": ["1"]}), dom)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_encode_sets_exactly_one_bit_per_group(data):
    k = data.draw(st.integers(1, 5))
    n = data.draw(st.integers(0, 150))
    dom = Domain(
        (
            Categorical("c", tuple(range(k))),
            Binary("b"),
            Numeric.equal_width("x", 0, 1, k),
        )
    )
    codes = data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    flags = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    xs = data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    table = pd.DataFrame({"c": codes, "b": flags, "x": xs}, dtype=object)
    dense = encode(table, dom).to_dense()
    for start, stop in dom.onehot_groups:
        assert (dense[:, start:stop].sum(axis=1) == 1).all()
    assert dense[:, :k].argmax(axis=1).tolist() == codes
    assert dense[:, k].tolist() == flags
    expected_bin = np.minimum(np.floor(np.asarray(xs, float) * k), k - 1)
    assert dense[:, k + 1 :].argmax(axis=1).tolist() == expected_bin.astype(int).tolist()


# -- files --------------------------------------------------------------------------------
FILE_DOM = Domain(
    (
        Categorical("code", (1, 2, 3)),
        Categorical("name", ("x", "y")),
        Numeric("v", (0, 10, 20)),
    )
)
FILE_TABLE = pd.DataFrame({"code": [3, 1, 2, 1], "name": ["x", "y", "y", "x"], "v": [1, 15, 20, 0]})


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet", ".tsv"])
def test_encode_file_equals_encode_dataframe(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        FILE_TABLE.to_parquet(path)
    else:
        FILE_TABLE.assign(extra=9).to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",")
    expected = encode(FILE_TABLE, FILE_DOM)
    got = encode_file(path, FILE_DOM)
    assert np.array_equal(got.words, expected.words) and got.n == 4
    assert list(read_table(path, FILE_DOM).columns) == ["code", "name", "v"]


def test_read_table_with_comma_space_separator(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("code, name, v\n3, x, 1\n1, y, 15\n")
    got = encode_file(path, FILE_DOM)
    assert np.array_equal(got.words, encode(FILE_TABLE.iloc[:2], FILE_DOM).words)


def test_read_table_errors(tmp_path):
    with pytest.raises(DPQueryError, match="does not exist"):
        read_table(tmp_path / "absent.csv")
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(DPQueryError, match="unknown file type"):
        read_table(tmp_path / "t.xlsx")
    path = tmp_path / "t.csv"
    path.write_text("code,v\n1,2\n")
    with pytest.raises(DomainError, match=r"no column\(s\) \['name'\]"):
        read_table(path, FILE_DOM)
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(DPQueryError, match="cannot read"):
        read_table(bad)


# -- sparse input -------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.int8, st.tuples(st.integers(1, 150), st.integers(1, 8)), elements=st.integers(0, 3)
    ),
    st.sampled_from(["csr", "csc", "coo", "csr_array", "lil"]),
)
def test_sparse_input_equals_dense_packing(dense, kind):
    matrix = {
        "csr": sp.csr_matrix,
        "csc": sp.csc_matrix,
        "coo": sp.coo_matrix,
        "csr_array": sp.csr_array,
        "lil": sp.lil_matrix,
    }[kind](dense)
    data = from_sparse(matrix, binarize=True)  # counts up to 3: every non-zero a one
    assert (data.n, data.d) == dense.shape
    assert np.array_equal(data.words, pack_columns(dense != 0))


def test_sparse_duplicates_and_explicit_zeros():
    rows, cols = np.array([0, 0, 2, 1]), np.array([1, 1, 0, 2])
    m = sp.coo_matrix((np.array([1, 1, 1, 0]), (rows, cols)), shape=(3, 3))
    assert from_sparse(m).to_dense().tolist() == [[0, 1, 0], [0, 0, 0], [1, 0, 0]]
    with pytest.raises(DPQueryError, match=r"scipy\.sparse"):
        from_sparse(np.eye(2))


def test_transaction_file_equals_dense_packing(tmp_path):
    rng = np.random.default_rng(1)
    n, d = 130, 17
    dense = (rng.random((n, d)) < 0.1).astype(np.uint8)
    r, c = np.nonzero(dense)
    lines = ["# user item"]
    seps = [" ", "\t", ",", "  "]
    lines += [f"{i}{seps[k % 4]}{j}" for k, (i, j) in enumerate(zip(r, c, strict=True))]
    lines.append(f"{r[0]} {c[0]}")  # a repeated pair is still one bit
    path = tmp_path / "tx.txt"
    path.write_text("\n".join(lines) + "\n")
    data = read_transactions(path, n=n, d=d)
    assert (data.n, data.d) == (n, d)
    assert np.array_equal(data.words, pack_columns(dense))
    assert np.array_equal(data.words, from_sparse(sp.csr_matrix(dense)).words)


@pytest.mark.parametrize(
    ("text", "n", "d", "message"),
    [
        ("0 1\n5 0\n", 5, 3, r"1 row index\(es\) outside \[0, 5\).*\[5\]"),
        ("0 1\n1 3\n2 7\n", 5, 3, r"2 item index\(es\) outside \[0, 3\).*\[3, 7\]"),
        ("-1 0\n", 5, 3, r"row index\(es\) outside"),
        ("0 1.5\n", 5, 3, "integer 'row item' pairs"),
        ("0 a\n", 5, 3, "integer 'row item' pairs"),
        ("0 1 2\n1 1 0\n", 5, 3, "two integers"),
        ("0\n1\n", 5, 3, "two integers"),
        ("0 1\n", 0, 3, "must be positive"),
    ],
)
def test_bad_transaction_files(tmp_path, text, n, d, message):
    path = tmp_path / "tx.txt"
    path.write_text(text)
    with pytest.raises(DPQueryError, match=message):
        read_transactions(path, n=n, d=d)


def test_transaction_file_missing_or_empty(tmp_path):
    with pytest.raises(DPQueryError, match="does not exist"):
        read_transactions(tmp_path / "absent.txt", n=2, d=2)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nobody holds anything\n")
    with pytest.raises(DPQueryError, match=r"empty\.txt holds no records"):
        read_transactions(empty, n=3, d=2)


# -- generators ---------------------------------------------------------------------------
def test_biased_bits_shape_padding_and_seed():
    a = biased_bits(1000, 37, seed=5)
    assert (a.n, a.d, a.n_words) == (1000, 37, 16)
    assert padding_is_zero(a.words, a.n)
    assert np.array_equal(a.words, biased_bits(1000, 37, seed=5).words)
    assert not np.array_equal(a.words, biased_bits(1000, 37, seed=6).words)


def test_biased_bits_frequencies_match_given_bias():
    # Each column frequency has sd <= sqrt(0.25 / n) = 0.0035; a 5-sd tolerance fails with
    # probability < 6e-7 per column, < 4e-5 for the 64 columns (and the seed is fixed).
    n = 20_000
    bias = np.linspace(0, 1, 64)
    data = biased_bits(n, 64, seed=11, bias=bias)
    freq = data.column_counts() / n
    tol = 5 * np.sqrt(bias * (1 - bias) / n)
    assert (np.abs(freq - bias) <= tol + 1e-12).all()
    assert freq[0] == 0 and freq[-1] == 1  # p = 0 and p = 1 are exact


def test_biased_bits_biases_are_uniform():
    # DualQuery 6.3: p_i ~ U[0, 1]. Column frequencies (noise sd <= 0.011 at n = 2,000) of
    # d = 2,000 columns against U[0, 1]: a KS test at level 1e-3 (false-failure rate ~1e-3).
    data = biased_bits(2000, 2000, seed=3)
    freq = data.column_counts() / 2000
    assert stats.kstest(freq, "uniform").pvalue > 1e-3


def test_biased_bits_in_many_chunks(monkeypatch):
    # Several chunks filled by threads: shape, padding, reproducibility and frequencies hold.
    monkeypatch.setattr(synthetic, "_CHUNK_BITS", 7 * 2000)  # 7 columns per chunk
    bias = np.linspace(0.05, 0.95, 50)
    a = biased_bits(2000, 50, seed=9, bias=bias)
    assert (a.n, a.d) == (2000, 50)
    assert padding_is_zero(a.words, a.n)
    assert np.array_equal(a.words, biased_bits(2000, 50, seed=9, bias=bias).words)
    # 5-sd tolerance per column: false-failure rate < 6e-7 x 50 columns.
    freq = a.column_counts() / 2000
    assert (np.abs(freq - bias) <= 5 * np.sqrt(bias * (1 - bias) / 2000)).all()
    # Chunks draw independent streams: with equal biases, the first columns of the 8 chunks
    # would coincide if they shared one (two independent ones coincide w.p. 2^-2000).
    same = biased_bits(2000, 50, seed=9, bias=np.full(50, 0.5))
    assert len({same.words[j].tobytes() for j in range(0, 50, 7)}) == 8


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n": 0, "d": 3},
        {"n": 3, "d": 0},
        {"n": 3, "d": 2, "bias": [0.5]},
        {"n": 3, "d": 2, "bias": [0.5, 1.5]},
        {"n": 3, "d": 2, "bias": [-0.1, 0.5]},
    ],
)
def test_biased_bits_errors(kwargs):
    with pytest.raises(DPQueryError):
        biased_bits(**kwargs)


def test_power_law_items():
    n, d = 3000, 200
    a = power_law_items(n, d, mean_items=10, seed=4)
    assert (a.n, a.d) == (n, d)
    assert padding_is_zero(a.words, n)
    assert np.array_equal(a.words, power_law_items(n, d, mean_items=10, seed=4).words)
    counts = a.column_counts()
    # Item 0 is drawn with probability 1/H_200 ~ 0.17 per draw, item 199 ~ 0.00085: the top
    # item is held by most users, the last few by very few (expected ~26 each).
    assert counts[0] > 0.7 * n
    assert counts[:10].sum() > 5 * counts[-10:].sum()
    per_user = a.to_dense().sum(axis=1)
    assert 5 < per_user.mean() < 10  # <= Poisson(10) draws, minus repeats
    with pytest.raises(DPQueryError):
        power_law_items(3, 2, mean_items=0)
    with pytest.raises(DPQueryError):
        power_law_items(0, 2)
