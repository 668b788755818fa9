"""The local reader of a raw ``user,item`` table reads it in blocks (the cluster's blocks,
``dpquery.backends.raw.raw_blocks``; a compressed file a number of lines at a time) and cuts
the users a range at a time: the lines, records and counts are those of a read of the whole
file at once, checked here with blocks of a few lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.data.raw_items as raw_items
from dpquery.data.raw_items import bounded_item_counts, id_hashes, read_raw_lines


def _text(seed: int) -> str:
    """A table of 300 lines: text and integer user ids, some empty; some empty item ids;
    spaces around ids; the lines in random order."""
    rng = np.random.default_rng(seed)
    lines = ["userId,movieId,rating"]
    for _ in range(300):
        u = rng.integers(0, 40)
        user = "" if u == 0 else (f" u{u}" if u % 3 else str(u))
        item = "" if rng.random() < 0.05 else f"m{rng.integers(0, 25)} "
        lines.append(f"{user},{item},{rng.integers(1, 6)}")
    return "\n".join(lines) + "\n"


def _whole(path: Path) -> tuple[list[str], list[str], list[str], int]:
    """The lines of a read of the whole file at once: each attributed line's user id and
    item id, the item ids by first appearance over every line, and the lines without a
    user."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    users, items = table["userId"].str.strip(), table["movieId"].str.strip()
    attributed = (users != "").to_numpy()
    return (users[attributed].tolist(), items[attributed].tolist(),
            list(pd.unique(items)), int((~attributed).sum()))  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("gz", [False, True])
def test_blocks_read_the_lines_of_the_whole_file(tmp_path, monkeypatch, seed, gz):
    monkeypatch.setattr(raw_items, "BLOCK_BYTES", 97)  # about 8 lines a block
    monkeypatch.setattr(raw_items, "_READ_LINES", 7)  # a compressed file 7 lines at a time
    text = _text(seed)
    plain = tmp_path / "t.csv"
    plain.write_text(text)
    path = plain
    if gz:
        path = tmp_path / "t.csv.gz"
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    lines = read_raw_lines(path)
    users, items, item_ids, unattributed = _whole(plain)
    assert lines.lines == 300 and lines.unattributed == unattributed > 0
    assert lines.item_ids.tolist() == item_ids  # first appearance, over every line
    assert lines.items.tolist() == items
    assert lines.user_ids is not None
    assert lines.user_ids.tolist() == list(pd.unique(pd.Series(users)))
    assert lines.user_ids[lines.rows].tolist() == users
    assert lines.n == len(set(users))


@pytest.mark.parametrize("bound", [1, 3, 50])
def test_the_cut_by_ranges_of_users_counts_as_the_whole(monkeypatch, bound):
    rng = np.random.default_rng(bound)
    users, d, lines = 200, 30, 3_000
    rows, items = rng.integers(0, users, lines), rng.integers(0, d, lines)
    user_hash = id_hashes(np.array([f"u{u}" for u in range(users)], dtype=object), "k" * 16)
    item_hash = id_hashes(np.array([f"i{j}" for j in range(d)], dtype=object), "k" * 16)
    whole = bounded_item_counts(rows, items, user_hash, item_hash, bound)
    monkeypatch.setattr(raw_items, "_CUT_LINES", 128)  # 24 ranges of users
    ranged = bounded_item_counts(rows.astype(np.int32), items.astype(np.int32), user_hash,
                                 item_hash, bound)  # fmt: skip
    assert (ranged == whole).all() and whole.sum() > 0
    if bound == 1:
        assert whole.sum() == len(np.unique(rows))  # one item a user
