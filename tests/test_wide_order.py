"""The wide release is a function of the multiset of records, not of their order.

The truncation hashes each record's own contents (``bound.py``: ``h(key, digest(x), item)``),
never its row index. Rows given in a data-dependent order (sorted by content, by length)
then keep the contribution bound: replacing one record, which moves the positions of many
others, changes the cut of that record only. And the same records in any order give the
same release, byte for byte, with the same seed: through the API, the command line and a
Dask cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpquery.algorithms.wide.bound import (
    HISTOGRAM_SENSITIVITY,
    count_sensitivity,
    hash_order,
    pair_sensitivity,
    truncate,
)
from dpquery.algorithms.wide.counts import HeadCounts, ItemCounts
from dpquery.algorithms.wide.release import WideRelease
from dpquery.backends import DaskBackend, connect
from dpquery.cli import main
from dpquery.data import ItemSets, write_item_sets

SMALL = {"bound": 6, "pair_bound": 4, "head": 12, "pool": 3000}
FAST = ("--bound", "6", "--pair-bound", "4", "--head", "12", "--pool", "3000", "--quiet")


def _items(n: int, d: int, seed: int) -> sp.csr_array:
    """Power-law items, records of 0 to about 15 items (many over the bound 6, so the cut
    matters), some repeated: identical records in different rows."""
    rng = np.random.default_rng(seed)
    p = np.minimum(1.0, 4.0 / np.arange(1, d + 1))
    dense = rng.random((n, d)) < p
    dense[rng.random(n) < 0.1] = False
    dense[rng.choice(n, n // 10)] = dense[rng.choice(n, n // 10)]  # repeated records
    return sp.csr_array(dense.astype(np.uint8))


def _by_content(matrix: sp.csr_array) -> np.ndarray:
    """Row order by content: lexicographic on each record's sorted items (a shorter record
    before its extensions), as a file sorted by its text would be."""
    rows = [tuple(matrix.indices[matrix.indptr[i] : matrix.indptr[i + 1]]) for i in
            range(matrix.shape[0])]  # fmt: skip
    return np.array(sorted(range(len(rows)), key=rows.__getitem__), dtype=np.int64)


def _by_length(matrix: sp.csr_array) -> np.ndarray:
    return np.argsort(-np.diff(matrix.indptr), kind="stable")


def _orders(matrix: sp.csr_array, seed: int) -> dict[str, np.ndarray]:
    n = matrix.shape[0]
    return {
        "given": np.arange(n),
        "shuffled": np.random.default_rng(seed).permutation(n),
        "by content": _by_content(matrix),
        "by length": _by_length(matrix),
    }


def _same(a: sp.csr_array, b: sp.csr_array) -> bool:
    return (
        a.shape == b.shape
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.data, b.data)
    )


# --- the cut reads the record's contents ------------------------------------------------------
def test_the_cut_of_a_record_does_not_depend_on_its_row():
    """Permuting the rows permutes the cuts: ``T(P D) = P T(D)``; identical records in
    different rows are cut identically."""
    matrix = _items(400, 40, 1)
    s, key = 4, 2024
    cut = truncate(matrix, s, key)
    for name, order in _orders(matrix, 2).items():
        assert _same(truncate(matrix[order], s, key), cut[order]), name
    dense, kept = matrix.toarray(), cut.toarray()
    twins = [(i, j) for i in range(400) for j in range(i + 1, 400)
             if dense[i].sum() > s and (dense[i] == dense[j]).all()]  # fmt: skip
    assert twins  # the table has repeated records longer than the bound
    assert all((kept[i] == kept[j]).all() for i, j in twins)
    # the cut still follows the key, and each record's ranks are 0..len-1
    assert not _same(truncate(matrix, s, key + 1), cut)
    rank = hash_order(matrix, key)
    for i in range(0, 400, 7):
        r = rank[matrix.indptr[i] : matrix.indptr[i + 1]]
        assert sorted(r) == list(range(r.size))


def test_replace_one_with_rows_sorted_by_content_keeps_the_sensitivities():
    """Neighbours whose rows are sorted by content (one record replaced, so the rows after
    it move): the cut item counts differ by at most ``sqrt(2 s)`` in L2, the size histogram
    by ``sqrt 2``, the head pair counts by ``sqrt(s2 (s2 - 1))``. A hash of the row index
    fails here: the replacement shifts many records' rows, hence their cuts (a review
    measured an item-count L2 change of 156.8 against ``sqrt(2 s) = 8``). The check is
    exact (no statistical tolerance): 40 random tables and replacements, seeded."""
    rng = np.random.default_rng(7)
    s, s2, d = 6, 4, 50
    head = np.arange(0, d, 3)
    worst = [0.0, 0.0, 0.0]
    for _ in range(40):
        D = _items(300, d, int(rng.integers(2**31))).toarray()
        D2 = D.copy()
        i = int(rng.integers(300))
        D2[i] = rng.random(d) < rng.uniform(0.05, 0.5)  # a replaced record, often long
        key = int(rng.integers(2**63))
        cells = []
        for dense in (D, D2):
            m = sp.csr_array(dense.astype(np.uint8))
            m = m[_by_content(m)]  # the order the data itself dictates
            rows = ItemSets(m)
            cells.append([*ItemCounts(key, s, d).count(rows),
                          *HeadCounts(key, s, s2, head).count(rows)])  # fmt: skip
        for k in range(3):
            worst[k] = max(worst[k], float(np.linalg.norm(cells[0][k] - cells[1][k])))
    bounds = [count_sensitivity(s), HISTOGRAM_SENSITIVITY, pair_sensitivity(s2)]
    assert all(w <= b for w, b in zip(worst, bounds, strict=True)), (worst, bounds)


# --- the release is the same in every order ---------------------------------------------------
def test_the_release_is_the_same_in_every_row_order():
    matrix = _items(500, 60, 3)
    releases = {
        name: WideRelease(epsilon=1.0, seed=11, **SMALL).fit(matrix[order])
        for name, order in _orders(matrix, 4).items()
    }
    given = releases.pop("given")
    for name, r in releases.items():
        assert _same(r.records.matrix, given.records.matrix), name
        assert [e.charge for e in r.ledger.entries] == [e.charge for e in given.ledger.entries]


@pytest.fixture(scope="module")
def item_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One table written in four row orders (row ids relabelled; lines shuffled too in one)."""
    folder = tmp_path_factory.mktemp("orders")
    matrix = _items(600, 80, 5)
    files = {}
    for name, order in _orders(matrix, 6).items():
        files[name] = folder / f"{name.replace(' ', '_')}.transactions.csv"
        write_item_sets(files[name], ItemSets(matrix[order]))
    lines = files["shuffled"].read_text().splitlines()
    shuffled = [lines[0], *np.random.default_rng(8).permutation(lines[1:])]
    files["shuffled"].write_text("\n".join(shuffled) + "\n")
    return files


def _synth(data: Path, out: Path, *extra: str) -> bytes:
    argv = ["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out", str(out),
            "--neighbours", "replace-one"]  # n public: the header's n rows  # fmt: skip
    assert main([*argv, *FAST, *extra]) == 0
    return out.read_bytes()


def test_synth_writes_the_same_bytes_in_every_row_order(item_files, tmp_path):
    outs = {name: _synth(path, tmp_path / f"{k}.transactions.csv")
            for k, (name, path) in enumerate(item_files.items())}  # fmt: skip
    assert outs["given"].startswith(b"# rows 600 items 80\n")
    assert all(out == outs["given"] for out in outs.values())


@pytest.fixture(scope="module")
def backend() -> Iterator[DaskBackend]:
    """The library's local cluster: 2 single-threaded worker processes on loopback."""
    pytest.importorskip("distributed")
    with connect(workers=2) as b:
        yield b


def test_synth_on_dask_writes_the_same_bytes_in_every_row_order(item_files, tmp_path, backend):
    """Each order cut into 3 ranges of user ids on the cluster: the local release's bytes."""
    local = _synth(item_files["given"], tmp_path / "local.transactions.csv")
    dask = ("--backend", "dask", "--scheduler", backend.address, "--partitions", "3")
    for k, (name, path) in enumerate(item_files.items()):
        assert _synth(path, tmp_path / f"d{k}.transactions.csv", *dask) == local, name
