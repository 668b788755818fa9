"""The contribution bound: every record keeps at most ``s`` of its items.

A record of a users x items table is a set ``x`` of items. With a public bound ``s``, the
count vector ``c(D) = sum_x 1_x`` over all ``d`` items changes, when one record ``x`` is
replaced by ``x'`` (bounded DP, ``n`` public), by ``1_{T(x')} - 1_{T(x)}``, whose L2 norm is
``sqrt(|T(x) symmetric-difference T(x')|) <= sqrt(2 s)``: the sensitivity depends on ``s``,
not on ``d`` (the set-valued setting of Korolova et al. 2009 and Gopi et al. 2020,
"Differentially private set union", Section 2).

The truncation ``T(x)`` keeps the ``s`` items of ``x`` with the smallest keyed hash
``h(key, g(x), item)``, where ``g(x) = sum_{j in x} f(key, j) mod 2^64`` is a keyed digest of
the record's item set (a sum, so it does not depend on the order the items are listed in).
``T(x)`` reads only the items of ``x`` and the public ``key``, drawn once per run: changing one
record leaves every other record's truncation unchanged, which is what the sensitivity
argument needs. It reads no row index: were the hash keyed by the record's row (its
position), a replaced record that moves the rows of others (data sorted by content, by
length, by user name) would change their cuts too, and the count vector by far more than
``sqrt(2 s)``. Keyed by content, the truncated table is ``T`` applied record by record, so
every count, and the release built from them, is a function of the multiset of records:
the same records in any order give the same release. Identical records get identical cuts,
which costs nothing (each cut still reads one record). (A sequential random walk over the
records would not do either: one record's choice would move the generator for all the
records after it.)

Pairs among a set ``H`` of head items (chosen from noisy counts, so public) are bounded the
same way: ``T2(x)`` keeps the ``s2`` items of ``x`` in ``H`` with the smallest hash (the same
hash, so the choice still reads only ``x``). A record adds 1 to each of the ``C(|T2(x)|, 2)``
pairs it holds; replacing it moves at most ``2 C(s2, 2)`` pair counts by 1, an L2 change of
at most ``sqrt(s2 (s2 - 1))``.

When one record is added or removed instead (``n`` private, ``neighbours="add-remove"``),
each count vector moves by one cut record's contribution alone: ``1_{T(x)}``, of L2 norm at
most ``sqrt(s)``; ``C(|T2(x)|, 2)`` pair counts by 1, at most ``sqrt(C(s2, 2))``; one cell of a
histogram by 1. The truncation reads one record either way, so the argument is the same.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_DIGEST = np.uint64(0x243F6A8885A308D3)  # domain separation of the digest's key (pi's bits)


def _splitmix(z: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser (Steele, Lea and Flood 2014): a bijection on 64-bit words
    whose outputs look independent for distinct inputs."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))


def record_digests(matrix: sp.csr_array, key: int) -> np.ndarray:
    """``g(key, x) = sum_{j in x} f(key, j) mod 2^64`` for each record ``x`` (row) of
    ``matrix`` (canonical CSR: no repeated item, so a function of the item set): a keyed
    digest of the record's contents alone, not of its row or of the order of its items.
    ``f`` is SplitMix64 under a key separated from the item hash's."""
    k = _splitmix(np.array([key & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64) ^ _DIGEST)
    with np.errstate(over="ignore"):
        f = _splitmix(k + _GOLDEN * (np.asarray(matrix.indices, dtype=np.uint64) + np.uint64(1)))
        # row sums as differences of one running sum: exact mod 2^64, 0 for an empty record
        total = np.concatenate([np.zeros(1, np.uint64), np.cumsum(f, dtype=np.uint64)])
        return total[matrix.indptr[1:]] - total[matrix.indptr[:-1]]


def keyed_hash(key: int, digests: np.ndarray, items: np.ndarray) -> np.ndarray:
    """``h(key, g, item)`` for each ``(digest, item)`` pair (``g`` the record's
    :func:`record_digests`): 64-bit words that depend only on the key and the pair."""
    k = np.uint64(key & 0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        z = _splitmix(k + _GOLDEN * (np.asarray(digests, dtype=np.uint64) + np.uint64(1)))
        return _splitmix(z ^ (np.asarray(items, dtype=np.uint64) * _GOLDEN + k))


def check_bound(name: str, value: object, d: int, noun: str = "items per record") -> int:
    """``value`` as a number of ``noun`` (a bound on items per record by default): an
    integer in ``[1, d]``, or an error that names it (before anything is charged)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise DPQueryError(f"{name} must be a whole number of {noun}; got {value!r}")
    if not 1 <= int(value) <= max(d, 1):
        raise DPQueryError(f"{name} must be between 1 and the number of items d={d}; got {value!r}")
    return int(value)


def hash_order(matrix: sp.csr_array, key: int) -> np.ndarray:
    """For each stored entry of ``matrix`` (canonical CSR: sorted, no duplicates), its rank
    within its own row by ``h(key, g(x), item)`` (0 = smallest hash). A row's ranks read only
    that row's items, so any partition or reordering of the records ranks each of them as
    the whole table does."""
    n = matrix.shape[0]
    lengths = np.diff(matrix.indptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    h = keyed_hash(key, np.repeat(record_digests(matrix, key), lengths), matrix.indices)
    order = np.lexsort((h, rows))  # by row, then by hash within the row
    rank = np.empty(matrix.nnz, dtype=np.int64)
    rank[order] = np.arange(matrix.nnz) - np.repeat(matrix.indptr[:-1], lengths)
    return rank


def keep_entries(matrix: sp.csr_array, keep: np.ndarray) -> sp.csr_array:
    """The CSR matrix of the stored entries where ``keep`` is true (order kept)."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[keep], minlength=matrix.shape[0]))])
    return sp.csr_array(
        (np.ones(int(indptr[-1]), dtype=np.uint8), matrix.indices[keep], indptr),
        shape=matrix.shape,
    )


def truncate(matrix: sp.csr_array, s: int, key: int) -> sp.csr_array:
    """Every record ``x`` of ``matrix`` cut to its ``s`` items of smallest
    ``h(key, g(x), item)`` (module docstring): record ``i``'s result reads only record
    ``i``'s items, not its row."""
    return keep_entries(matrix, hash_order(matrix, key) < s)


def sqrt_up(x: int) -> float:
    """``sqrt(x)`` rounded up: the float whose square is at least ``x`` exactly, so that the
    noise ``sigma^2 >= Delta^2 / (2 rho)`` never falls below the true value by a rounding
    (``math.sqrt(6) ** 2 < 6``)."""
    r = math.sqrt(x)
    return r if Fraction(r) ** 2 >= x else math.nextafter(r, math.inf)


def count_sensitivity(s: int, neighbours: str = REPLACE_ONE) -> float:
    """L2 sensitivity of the item-count vector of ``s``-bounded records (rounded up):
    replace-one ``sqrt(2 s)`` (two cut records' symmetric difference), add/remove
    ``sqrt(s)`` (one cut record's items)."""
    return sqrt_up(s if neighbours == ADD_REMOVE else 2 * s)


def pair_sensitivity(s2: int, neighbours: str = REPLACE_ONE) -> float:
    """L2 sensitivity of the pair-count vector of records bounded to ``s2`` head items
    (at least 1, the count of one pair; rounded up): replace-one ``sqrt(2 C(s2, 2)) =
    sqrt(s2 (s2 - 1))``, add/remove ``sqrt(C(s2, 2))``."""
    pairs = s2 * (s2 - 1) // 2
    return sqrt_up(max(pairs if neighbours == ADD_REMOVE else 2 * pairs, 1))


def head_sensitivity(k: int) -> float:
    """L2 sensitivity of the exact (uncut) counts of ``k`` fixed items under either relation:
    each count moves by at most 1, so ``sqrt(k)`` (rounded up), whatever the records'
    lengths."""
    return sqrt_up(max(k, 1))


HISTOGRAM_SENSITIVITY = sqrt_up(2)
"""A record sits in one cell of a histogram; replacing it moves two cells by 1."""


def histogram_sensitivity(neighbours: str = REPLACE_ONE) -> float:
    """L2 sensitivity of a histogram of one cell per record: replacing a record moves two
    cells by 1 (``sqrt 2``); adding or removing one moves one cell (1)."""
    return 1.0 if neighbours == ADD_REMOVE else HISTOGRAM_SENSITIVITY
