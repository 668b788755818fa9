"""A block of a raw ``user,item`` table is parsed by Arrow's CSV reader where it reads the
block as pandas does (``arrow_ids``), by pandas elsewhere: the ids and codes are pandas'
in every case, checked here on awkward lines one at a time and on whole files in blocks of
a few lines (integer ids read as int64, text ids, both in one file). The cut of a learned
universe orders pairs by one sort where that is lexsort's order (checked with ties)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.data.raw_items as raw_items
from dpquery.backends.raw import gather_bucket, split_block
from dpquery.data.raw_items import (
    arrow_ids,
    block_ids,
    id_texts,
    raw_blocks,
    raw_layout,
    read_options,
    read_raw_lines,
)

HEADER = ("userId", "movieId", "rating")


def _pandas(data: bytes, sep: str = ",") -> raw_items.BlockIds:
    """The block's codes as pandas reads it (what RawBlock.read does with a byte range)."""
    table = pd.read_csv(io.BytesIO(data), header=None, names=list(HEADER),
                        usecols=["userId", "movieId"], **read_options(sep))  # fmt: skip
    return block_ids(table["userId"].str.strip(), table["movieId"].str.strip())


def _same(fast: raw_items.BlockIds, slow: raw_items.BlockIds) -> None:
    assert id_texts(fast.users).tolist() == slow.users.tolist()
    assert id_texts(fast.items).tolist() == slow.items.tolist()
    assert fast.user_codes.tolist() == slow.user_codes.tolist()
    assert fast.item_codes.tolist() == slow.item_codes.tolist()
    assert (fast.lines, fast.unattributed) == (slow.lines, slow.unattributed)


# lines Arrow reads (the fast path is taken and must agree with pandas)
TAKEN = {
    "integers": b"8,1,5\n9,1,4\n8,2,3\n",
    "leading zeros are other ids": b"007,1,5\n7,1,4\n07,2,3\n",
    "signs are other ids": b"+7,1,5\n7,1,4\n-7,2,3\n",
    "spaces stripped": b" 7,1 ,5\n7, 1,4\n7 ,2,3\n",
    "empty users and items": b",1,5\n7,,4\n,,3\n7,2,1\n",
    "text ids": b"u1,m1,5\nu2,m1,4\nu1,m2,3\n",
    "crlf line ends": b"8,1,5\r\n9,1,4\r\n",
    "blank lines": b"8,1,5\n\n9,1,4\n\n",
    "no final newline": b"8,1,5\n9,1,4",
    "beyond 18 digits": b"1000000000000000000,1,5\n999999999999999999,1,4\n",
    "beyond int64": b"99999999999999999999,1,5\n1,1,4\n",
    "unicode spaces": "\u00a0u1\u2003,m1,5\nu1,m1,4\n".encode(),
    "an empty rating": b"8,1,\n9,1,4\n",
}
# lines pandas reads (the fast path declines: the readings could differ)
DECLINED = {
    "quotes": b'"8",1,5\n8,"1",4\n',
    "a quoted separator": b'"a,b",1,5\n',
    "a lone carriage return": b"8,1,5\r9,1,4\n",
    "a short line": b"8,1\n9,1,4\n",
    "a long line": b"8,1,5,6\n9,1,4\n",
    "a trailing separator": b"8,1,5,\n9,1,4,\n",
    "a space-only line": b"8,1,5\n   \n9,1,4\n",
    "a NUL byte": b"8,1\x00,5\n",
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_arrow_reads_a_block_as_pandas_does(name):
    data = TAKEN[name]
    fast = arrow_ids(data, HEADER, ",", "userId", "movieId")
    assert fast is not None, "the fast path should read these lines"
    _same(fast, _pandas(data))


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_arrow_declines_where_readings_could_differ(name):
    assert arrow_ids(DECLINED[name], HEADER, ",", "userId", "movieId") is None


def test_integer_ids_are_int64_and_text_ids_text():
    ints = arrow_ids(TAKEN["integers"], HEADER, ",", "userId", "movieId")
    text = arrow_ids(TAKEN["leading zeros are other ids"], HEADER, ",", "userId", "movieId")
    assert ints is not None and text is not None
    assert ints.users.dtype == np.int64 and ints.users.tolist() == [8, 9]
    assert text.users.dtype == object and text.users.tolist() == ["007", "7", "07"]


def test_invalid_utf8_is_pandas_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"userId,movieId\n8,1\n9,\xff\xfe\n")
    assert arrow_ids(b"8,1\n9,\xff\xfe\n", HEADER[:2], ",", "userId", "movieId") is None
    with pytest.raises(raw_items.DPQueryError, match="cannot read"):
        read_raw_lines(path)


def test_other_separators():
    for sep in ("\t", ";"):
        data = b"8%s1%s5\n u9%s 2%s4\n" % tuple(sep.encode() for _ in range(4))
        fast = arrow_ids(data, HEADER, sep, "userId", "movieId")
        assert fast is not None
        _same(fast, _pandas(data, sep))


def _mixed(seed: int) -> str:
    """400 lines, user ids mostly canonical integers, a few blocks with '007'-like ids or
    quoted fields (read by pandas), some empty ids."""
    rng = np.random.default_rng(seed)
    lines = ["userId,movieId,rating"]
    for k in range(400):
        u = int(rng.integers(0, 60))
        user = str(u) if u else ""
        if 100 <= k < 110:
            user = f"0{u}"  # another id than str(u)
        if 200 <= k < 205:
            user = f'"{u}"'  # quoted: pandas reads the block, the same id as {u}
        item = "" if rng.random() < 0.03 else str(int(rng.integers(1, 30)))
        lines.append(f"{user},{item},{rng.integers(1, 6)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", [0, 1])
def test_blocks_of_a_few_lines_read_as_the_whole_file(tmp_path, monkeypatch, seed):
    path = tmp_path / "t.csv"
    path.write_text(_mixed(seed))
    whole = read_raw_lines(path)  # one block: Arrow declines (quotes), pandas reads it
    monkeypatch.setattr(raw_items, "BLOCK_BYTES", 61)  # about 8 lines a block
    blocks = read_raw_lines(path)
    assert blocks.user_ids is not None and whole.user_ids is not None
    assert blocks.user_ids.tolist() == whole.user_ids.tolist()
    assert blocks.rows.tolist() == whole.rows.tolist()
    assert blocks.items.tolist() == whole.items.tolist()
    assert (blocks.lines, blocks.unattributed) == (whole.lines, whole.unattributed) == (400,
            whole.unattributed)  # fmt: skip
    # the cluster's split and gather of the same blocks make the same records
    catalogue = [str(j) for j in range(1, 30)]
    header, sep, skip = raw_layout(path)
    parts = [split_block(b, 3, catalogue)[0] for b in raw_blocks(path, header, sep, skip,
             "userId", "movieId", 61)]  # fmt: skip
    assert len(parts) > 20
    records = []
    for b in range(3):
        matrix = gather_bucket(len(catalogue), *[p[b] for p in parts]).matrix
        records += [tuple(matrix.indices[matrix.indptr[r] : matrix.indptr[r + 1]])
                    for r in range(matrix.shape[0])]  # fmt: skip
    local, _ = whole.over(catalogue)
    m = local.matrix
    expected = [tuple(m.indices[m.indptr[r] : m.indptr[r + 1]]) for r in range(m.shape[0])]
    assert sorted(records) == sorted(expected)
    # how many blocks Arrow read: most, not all
    fast = [arrow_ids(raw_items.range_bytes(b.path, b.start, b.stop), b.header, b.sep,
                      b.user, b.item) is not None
            for b in raw_blocks(path, header, sep, skip, "userId", "movieId", 61)]  # fmt: skip
    assert 0 < sum(not f for f in fast) < len(fast) // 4


def test_an_empty_block_is_pandas_empty(tmp_path):
    assert arrow_ids(b"", HEADER, ",", "userId", "movieId") is None
    assert arrow_ids(b"\n\n", HEADER, ",", "userId", "movieId") is None
    path: Path = tmp_path / "t.csv"
    path.write_text("userId,movieId\n")
    with pytest.raises(raw_items.DPQueryError, match="no records"):
        read_raw_lines(path)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cut_order_is_lexsort_with_ties_too(seed):
    """The cut's order (one sort of a combined key, the two-key sort where a user's keys
    tie) is ``np.lexsort((priority, user))``: on random priorities, on priorities that
    agree in their high bits (ties of the combined key) and on equal priorities."""
    rng = np.random.default_rng(seed)
    user = np.sort(rng.integers(0, 500, 5_000))
    priority = rng.integers(0, 2**63, user.size).astype(np.uint64)
    order = raw_items._by_user_then_priority
    assert np.array_equal(order(user, priority), np.lexsort((priority, user)))
    high = priority & np.uint64(0xFFFF000000000000)  # only 16 high bits: many ties
    assert np.array_equal(order(user, high), np.lexsort((high, user)))
    same = np.zeros(user.size, np.uint64)  # every priority equal: the lines' order
    assert np.array_equal(order(user, same), np.lexsort((same, user)))
    assert order(user[:0], priority[:0]).size == 0
