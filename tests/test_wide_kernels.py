"""The wide release's compiled kernels equal the numpy definitions they replace, exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dpquery.data.items as items_module
from dpquery.algorithms.wide import fit
from dpquery.algorithms.wide.counts import (
    HeadCounts,
    ItemCounts,
    cut_records,
    pair_cells,
    size_cells,
)
from dpquery.algorithms.wide.kernels import PoolFeatures, assemble_records
from dpquery.data.items import ItemSets, read_item_sets, write_item_sets
from dpquery.datasets.shapes import SHAPES, generate


def _tables() -> list[ItemSets]:
    long_records = generate(dataclasses.replace(SHAPES["netflix"], n=600), 1)
    random = sp.random(400, 120, density=0.2, random_state=2, format="csr")
    return [long_records, ItemSets((random != 0).astype(np.uint8))]


@pytest.mark.parametrize("s", [4, 32, 128])
def test_cut_counts_equal_the_whole_table_cut(s: int) -> None:
    rng = np.random.default_rng(0)
    for items in _tables():
        key = int(rng.integers(2**63))
        cut, rank = cut_records(items, s, key)
        counts = np.bincount(cut.indices, minlength=items.d)
        assert np.array_equal(ItemCounts(key, s, items.d).count(items)[0], counts)
        for s2, head in ((2, np.sort(np.argsort(-counts, kind="stable")[:40])),
                         (8, np.sort(rng.choice(items.d, size=30, replace=False)))):  # fmt: skip
            sizes, pairs = HeadCounts(key, s, s2, head).count(items)
            assert np.array_equal(sizes, size_cells(cut, head, s))
            assert np.array_equal(pairs, pair_cells(cut, rank, head, s2))


def test_implicit_features_equal_the_stored_matrix() -> None:
    rng = np.random.default_rng(1)
    K = 30
    counts = rng.random(K) * 100
    counts[-3:] = 0
    pairs = rng.random((K, K)) * 5
    sizes = rng.random(20)
    pool, base = fit.head_pool(counts, (pairs + pairs.T) / 2, sizes / sizes.sum(), 1500, rng)
    for s2 in (2, 8, 40):
        A, B = fit.features(pool, s2), fit.pool_features(pool, s2)
        assert isinstance(B, PoolFeatures)
        x, y = rng.standard_normal(A.shape[1]), rng.random(A.shape[0])
        assert np.array_equal(A @ x, B @ x)
        assert np.array_equal(sp.csr_array(A.T) @ y, B.rmatvec(y))
        assert np.array_equal(np.asarray(abs(A).sum(axis=0)).ravel() > 0, B.used())
        target, penalty = rng.random(A.shape[1]) * 0.01, np.full(A.shape[1], 1e-4)
        assert np.array_equal(
            fit.maxent_weights(A, base, target, penalty, iterations=20),
            fit.maxent_weights(B, base, target, penalty, iterations=20),
        )
    repeated = sp.csr_array((np.ones(4), np.array([3, 1, 2, 2]), np.array([0, 2, 4])), shape=(2, 5))
    assert not isinstance(fit.pool_features(repeated, 8), PoolFeatures)  # the stored matrix


def test_assembled_records_equal_the_summed_pairs() -> None:
    rng = np.random.default_rng(2)
    n, d, K = 300, 80, 12
    head = np.sort(rng.choice(d, size=K, replace=False))
    heads = sp.random(n, K, density=0.3, random_state=3, format="csr")
    heads.data[:] = 1
    owner = np.sort(rng.integers(n, size=900))
    tail = rng.integers(d, size=900)  # repeats, and items of the head too
    out = assemble_records(heads, head, owner, tail, d)
    rows = np.concatenate([np.repeat(np.arange(n), np.diff(heads.indptr)), owner])
    cols = np.concatenate([head[heads.indices], tail])
    want = sp.csr_array((np.ones(rows.size, np.uint8), (rows, cols)), shape=(n, d))
    want.sum_duplicates()
    assert np.array_equal(out.indptr, want.indptr)
    assert np.array_equal(out.indices, want.indices)
    assert (out.data == 1).all() and not out.indices.flags.writeable
    assert ItemSets(out).matrix is out  # taken as it is, not copied


def test_written_lines_are_the_frame_writers(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(items_module, "_WRITE_ONES", 500)  # several blocks
    for i, items in enumerate([*_tables(), ItemSets(sp.csr_array((3, 4), dtype=np.uint8))]):
        rows = np.repeat(np.arange(items.n), items.lengths())
        frame = pd.DataFrame({"row": rows, "item": items.matrix.indices.astype(np.int64)})
        want = f"# rows {items.n} items {items.d}\n" + frame.to_csv(
            sep=" ", header=False, index=False, lineterminator="\n"
        )
        path = tmp_path / f"s{i}.transactions.csv"
        write_item_sets(path, items)
        assert path.read_text() == want
        back = read_item_sets(path, allow_empty=True)
        assert (back.matrix != items.matrix).nnz == 0


def test_an_npz_of_canonical_ones_is_read_without_a_copy(tmp_path) -> None:
    items = _tables()[0]
    sp.save_npz(tmp_path / "x.npz", items.matrix)
    back = read_item_sets(tmp_path / "x.npz")
    assert not back.matrix.indices.flags.writeable
    assert (back.matrix != items.matrix).nnz == 0
    # entries other than 1, repeats and unsorted rows take the checked path
    loose = sp.csr_array((np.array([1, 1, 1]), np.array([2, 0, 2]), np.array([0, 2, 3])),
                         shape=(2, 3))  # fmt: skip
    sp.save_npz(tmp_path / "y.npz", loose, compressed=False)
    assert read_item_sets(tmp_path / "y.npz").matrix.toarray().tolist() == [[1, 0, 1], [0, 0, 1]]
