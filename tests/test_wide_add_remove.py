"""The wide release under the add/remove-one-record relation (docs/wide.md, "Privacy"): each
sensitivity on random neighbouring tables of different sizes, the noisy n that every rule
reads, no exact n in what the release outputs, and replace-one byte-identical to before."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide.release import WideRelease
from dpquery.data import ItemSets


def _zipf_items(n: int, d: int, seed: int, mean: float = 4.0) -> sp.csr_array:
    """Zipf-like sparse records: item j with probability proportional to 1/(j+1)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1)
    p = np.minimum(1.0, p * mean / p.sum())
    return sp.csr_array((rng.random((n, d)) < p).astype(np.uint8))


def _head_items(seed: int = 0) -> sp.csr_array:
    """700 records over 2,000 items: items 0-4 in 60% of the records, the rest rare (the
    head mode's shape)."""
    rng = np.random.default_rng(seed)
    dense = (rng.random((700, 2000)) < 0.005).astype(np.uint8)
    dense[:, :5] = rng.random((700, 5)) < 0.6
    return sp.csr_array(dense)


def _digest(records: ItemSets, parameters: dict[str, object]) -> str:
    """SHA-256 of the released matrix (shape, indptr, indices) and its parameters."""
    m = sp.csr_array(records.matrix)
    m.sort_indices()
    h = hashlib.sha256()
    for a in (np.asarray(m.shape), m.indptr, m.indices):
        h.update(np.asarray(a, dtype=np.int64).tobytes())
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return h.hexdigest()


# -- replace-one: the same bytes as before the relation was an option ----------------------
# Digests of the two releases below made by the code before `neighbours` existed.
SPARSE_DIGEST = "1bcf2f57a96854f0d35bb008f7409d6cdfedd4a6d30f6def69ea4a2d95311172"
HEAD_DIGEST = "adeda6acaf81e4128b8cffb56632f42df3d1d32709475e3f4edbf2f72f0edab0"


def test_replace_one_is_byte_identical_to_before_with_the_same_seed():
    sparse = WideRelease(epsilon=1.0, seed=11, pair_bound=4, head=12, pool=3000,
                         head_mode="off").fit(_zipf_items(3000, 80, 3))  # fmt: skip
    head = WideRelease(epsilon=1.0, seed=5, pool=3000).fit(_head_items())
    assert sparse.parameters["mode"] == "sparse" and head.parameters["mode"] == "head"
    assert _digest(sparse.records, sparse.parameters) == SPARSE_DIGEST
    assert _digest(head.records, head.parameters) == HEAD_DIGEST
