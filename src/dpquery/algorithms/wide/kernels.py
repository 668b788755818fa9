"""Compiled kernels of the wide release's hot loops, record by record.

The cut (:mod:`dpquery.algorithms.wide.bound`) and the counts made from it
(:mod:`dpquery.algorithms.wide.counts`) were whole-table numpy passes: int64 row, hash and
rank arrays of one word per stored entry each, and a global lexsort, several GiB on a table of
10^8 ones. Here each record is hashed and ranked on its own, in a scratch buffer of its length,
and only the counts leave the loop. The pool's features (:mod:`dpquery.algorithms.wide.fit`)
are likewise never stored: the maximum-entropy fit reads them through :class:`PoolFeatures`,
computed from the pool's item lists on the fly.

Each kernel computes exactly what the numpy code it replaces computes: the same SplitMix64
hashes, ties broken by position (a stable sort, as ``np.lexsort`` is), integer counts, and
floating-point sums accumulated in the same order as scipy's CSR products, so a seeded release
is unchanged (tested against the numpy definitions).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide.bound import _splitmix as splitmix_array

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_DIGEST = np.uint64(0x243F6A8885A308D3)
_ONE = np.uint64(1)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@numba.njit(cache=True, inline="always")
def _splitmix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@numba.njit(cache=True)
def _row_hashes(indices, lo, hi, key, digest_key, out):
    """``h(key, g(x), item)`` of the record ``indices[lo:hi]`` into ``out[: hi - lo]``
    (bound.record_digests, bound.keyed_hash)."""
    g = np.uint64(0)
    for p in range(lo, hi):
        g += _splitmix(digest_key + _GOLDEN * (np.uint64(indices[p]) + _ONE))
    z = _splitmix(key + _GOLDEN * (g + _ONE))
    for p in range(lo, hi):
        out[p - lo] = _splitmix(z ^ (np.uint64(indices[p]) * _GOLDEN + key))


@numba.njit(cache=True)
def _cut_item_counts(indptr, indices, key, digest_key, s, d):
    counts = np.zeros(d, dtype=np.int64)
    n = indptr.size - 1
    longest = 0
    for i in range(n):
        longest = max(longest, indptr[i + 1] - indptr[i])
    h = np.empty(max(longest, 1), dtype=np.uint64)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        if hi - lo <= s:  # nothing cut: no hash needed
            for p in range(lo, hi):
                counts[indices[p]] += 1
            continue
        # The s entries of smallest hash, ties by position (a stable sort's first s),
        # found by a selection of the s-th smallest hash rather than a sort of them all:
        # the set is all that is counted, and the selection is linear in the record.
        L = hi - lo
        _row_hashes(indices, lo, hi, key, digest_key, h)
        t = np.partition(h[:L], s - 1)[s - 1]
        below = 0
        for r in range(L):
            if h[r] < t:
                below += 1
        ties = s - below  # entries of hash t kept, the first ones by position
        for r in range(L):
            if h[r] < t:
                counts[indices[lo + r]] += 1
            elif h[r] == t and ties > 0:
                counts[indices[lo + r]] += 1
                ties -= 1
    return counts


@numba.njit(cache=True)
def _smallest(h, take, m, out):
    """Marks in ``out[:L]`` the ``m`` entries of smallest hash among those with ``take``
    (all of them when fewer), ties by position: a stable sort's first ``m``."""
    L = h.size
    count = 0
    for r in range(L):
        out[r] = take[r]
        if take[r]:
            count += 1
    if count <= m:
        return
    chosen = np.empty(count, dtype=np.uint64)
    c = 0
    for r in range(L):
        if take[r]:
            chosen[c] = h[r]
            c += 1
    t = np.partition(chosen, m - 1)[m - 1]
    below = 0
    for x in chosen:
        if x < t:
            below += 1
    ties = m - below
    for r in range(L):
        if take[r]:
            if h[r] < t:
                out[r] = True
            elif h[r] == t and ties > 0:
                out[r] = True
                ties -= 1
            else:
                out[r] = False


@numba.njit(cache=True)
def _cut_head_counts(indptr, indices, key, digest_key, s, s2, position, K):
    sizes = np.zeros((s + 1) * (s + 1), dtype=np.int64)
    pairs = np.zeros((K, K), dtype=np.int64)
    n = indptr.size - 1
    longest = 0
    for i in range(n):
        longest = max(longest, indptr[i + 1] - indptr[i])
    h = np.empty(max(longest, 1), dtype=np.uint64)
    every = np.ones(max(longest, 1), dtype=np.bool_)
    kept = np.empty(max(longest, 1), dtype=np.bool_)  # the cut: the s of smallest hash
    head = np.empty(max(longest, 1), dtype=np.bool_)  # kept head entries
    paired = np.empty(max(longest, 1), dtype=np.bool_)  # their s2 of smallest hash
    heads = np.empty(max(s2, 1), dtype=np.int64)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        L = hi - lo
        hashed = False
        # Which entries are kept and paired is all that is counted: found by selections
        # of the s-th (s2-th) smallest hash, ties by position, as a stable sort ranks them.
        if L > s:
            _row_hashes(indices, lo, hi, key, digest_key, h)
            _smallest(h[:L], every[:L], s, kept)
            m = s
            hashed = True
        else:
            kept[:L] = True
            m = L
        a = 0
        for r in range(L):
            head[r] = kept[r] and position[indices[lo + r]] >= 0
            if head[r]:
                a += 1
        sizes[a * (s + 1) + (m - a)] += 1
        if a < 2 or s2 < 2:  # no pair
            continue
        # the s2 head items of smallest hash among the kept ones
        if a > s2:
            if not hashed:
                _row_hashes(indices, lo, hi, key, digest_key, h)
            _smallest(h[:L], head[:L], s2, paired)
        else:
            paired[:L] = head[:L]
        t = 0
        for r in range(L):
            if paired[r]:
                heads[t] = position[indices[lo + r]]
                t += 1
        for u in range(t):
            for v in range(u + 1, t):
                x, y = heads[u], heads[v]
                if x < y:
                    pairs[x, y] += 1
                else:
                    pairs[y, x] += 1
    return sizes, pairs


def _keys(key: int) -> tuple[np.uint64, np.uint64]:
    k = np.uint64(key & 0xFFFFFFFFFFFFFFFF)
    digest_key = splitmix_array(np.array([k], dtype=np.uint64) ^ _DIGEST)[0]
    return k, np.uint64(digest_key)


def cut_item_counts(matrix: sp.csr_array, s: int, key: int) -> np.ndarray:
    """Every item's count over the records of ``matrix`` (canonical CSR) cut to their ``s``
    items of smallest ``h(key, g(x), item)``: ``bincount(truncate(matrix, s, key).indices)``
    without the whole-table hash, rank and row arrays."""
    k, dk = _keys(key)
    return _cut_item_counts(matrix.indptr, matrix.indices, k, dk, int(s), int(matrix.shape[1]))


def cut_head_counts(
    matrix: sp.csr_array, s: int, s2: int, head: np.ndarray, key: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``(s + 1)^2`` size cells and the ``C(K, 2)`` head pair counts of
    :class:`~dpquery.algorithms.wide.counts.HeadCounts` (``counts.size_cells`` and
    ``counts.pair_cells`` of the records cut to ``s`` items), record by record."""
    K = int(head.size)
    position = np.full(matrix.shape[1], -1, dtype=np.int64)
    position[head] = np.arange(K)
    k, dk = _keys(key)
    sizes, full = _cut_head_counts(
        matrix.indptr, matrix.indices, k, dk, int(s), int(s2), position, K
    )
    j, kk = np.triu_indices(K, 1)
    return sizes, full[j, kk]


# -- the pool -------------------------------------------------------------------------------
@numba.njit(cache=True)
def _draw_heads(q, cond, keep_share, mix, draws):
    a, B = draws.shape
    K = q.size
    chosen = np.empty((B, a), dtype=np.int64)
    taken = np.zeros(K, dtype=np.bool_)
    score = np.zeros(K)
    prob = np.empty(K)
    cum = np.empty(K)
    for b in range(B):
        taken[:] = False
        score[:] = 0.0
        for t in range(a):
            for k in range(K):
                if t == 0:
                    v = q[k]
                else:
                    v = keep_share * score[k] / t + mix * q[k]
                prob[k] = 0.0 if (taken[k] or q[k] <= 0) else v
            total = 0.0
            for k in range(K):
                total += prob[k]
                cum[k] = total
            u = draws[t, b] * cum[K - 1]
            below = 0
            for k in range(K):
                if cum[k] < u:
                    below += 1
            pick = min(below, K - 1)
            chosen[b, t] = pick
            taken[pick] = True
            for k in range(K):
                score[k] += cond[pick, k]
        chosen[b].sort()
    return chosen


def draw_heads(q: np.ndarray, cond: np.ndarray, mix: float, draws: np.ndarray) -> np.ndarray:
    """``B`` candidate heads of ``a`` items each (``draws``: ``a x B`` uniforms, row ``t``
    the ``t``-th item's), each row sorted: the first item in proportion to ``q``, each next
    one in proportion to ``(1 - mix)`` times the mean of ``cond`` over the items already
    chosen plus ``mix q``, among the items not yet chosen with ``q > 0``
    (:func:`~dpquery.algorithms.wide.fit.head_pool`). Computed candidate by candidate with
    the numpy batch's arithmetic, in its order (the same draws give the same heads), without
    its ``B x K`` temporaries at every step."""
    return _draw_heads(
        np.ascontiguousarray(q, dtype=np.float64),
        np.ascontiguousarray(cond, dtype=np.float64),
        float(1 - mix),
        float(mix),
        np.ascontiguousarray(draws, dtype=np.float64),
    )


# -- the released records ------------------------------------------------------------------
@numba.njit(cache=True)
def _assemble(n, head_ptr, head_items, owner, tail_items):
    # the tail's (record, item) pairs bucketed by record, in their order (a counting sort)
    tail_ptr = np.zeros(n + 1, dtype=np.int64)
    for r in owner:
        tail_ptr[r + 1] += 1
    for i in range(n):
        tail_ptr[i + 1] += tail_ptr[i]
    fill = tail_ptr[:-1].copy()
    bucket = np.empty(owner.size, dtype=np.int32)
    for t in range(owner.size):
        bucket[fill[owner[t]]] = tail_items[t]
        fill[owner[t]] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(head_items.size + owner.size, dtype=np.int32)
    at = 0
    for i in range(n):
        lo = at
        for p in range(head_ptr[i], head_ptr[i + 1]):
            indices[at] = head_items[p]
            at += 1
        for p in range(tail_ptr[i], tail_ptr[i + 1]):
            indices[at] = bucket[p]
            at += 1
        row = np.sort(indices[lo:at])  # sorted, then each item once
        at = lo
        for k in range(row.size):
            if k == 0 or row[k] != row[k - 1]:
                indices[at] = row[k]
                at += 1
        indptr[i + 1] = at
    return indptr, indices[:at].copy()


def assemble_records(
    heads: sp.csr_array, head: np.ndarray, owner: np.ndarray, tail_items: np.ndarray, d: int
) -> sp.csr_array:
    """The ``n x d`` canonical 0/1 CSR of the records whose head items are ``head[j]`` for
    the ``j`` of each row of ``heads`` and whose tail items are ``tail_items[t]`` in record
    ``owner[t]``, a record's repeats kept once: the matrix of
    ``csr_array((ones, (rows, cols))).sum_duplicates()`` over the concatenated pairs, built
    record by record without the int64 row and column arrays of every pair and their COO
    copy. Its arrays are read-only, so that :class:`~dpquery.data.items.ItemSets` takes it
    as it is."""
    n = int(heads.shape[0])
    if int(heads.nnz) + int(owner.size) >= 2**31 or d >= 2**31:
        raise OverflowError("more released ones than int32 indices hold")
    head_items = np.asarray(head, dtype=np.int32)[heads.indices]
    indptr, indices = _assemble(
        n,
        np.asarray(heads.indptr, dtype=np.int64),
        head_items,
        np.asarray(owner, dtype=np.int64),
        np.asarray(tail_items, dtype=np.int32),
    )
    out = sp.csr_array(
        (np.ones(indices.size, dtype=np.uint8), indices, indptr), shape=(n, d), copy=False
    )
    out.has_canonical_format = True
    for a in (out.data, out.indices, out.indptr):
        a.setflags(write=False)
    return out


# -- the pool's features, implicit ---------------------------------------------------------
@numba.njit(cache=True)
def _features_times(indptr, indices, keep, K, x):
    """``A @ x`` for the features of fit.features: per candidate, its items' entries (value
    1, in item order) then its pairs ``j < k`` at ``K + j K + k`` (value ``keep[row]``, in
    ``np.triu_indices`` order), summed in that order from 0, as scipy's csr_matvec sums the
    sorted row."""
    M = indptr.size - 1
    out = np.zeros(M)
    for r in range(M):
        lo, hi = indptr[r], indptr[r + 1]
        acc = 0.0
        for p in range(lo, hi):
            acc += 1.0 * x[indices[p]]
        w = keep[r]
        for p in range(lo, hi):
            base = K + indices[p] * K
            for q in range(p + 1, hi):
                acc += w * x[base + indices[q]]
        out[r] = acc
    return out


@numba.njit(cache=True)
def _features_transpose_times(indptr, indices, keep, K, F, y):
    """``A^T @ y``: each feature's sum over the candidates in increasing order, as scipy's
    csr_matvec of the transposed (CSR) matrix sums its row."""
    out = np.zeros(F)
    M = indptr.size - 1
    for r in range(M):
        lo, hi = indptr[r], indptr[r + 1]
        v = y[r]
        for p in range(lo, hi):
            out[indices[p]] += 1.0 * v
        wv = keep[r] * v
        for p in range(lo, hi):
            base = K + indices[p] * K
            for q in range(p + 1, hi):
                out[base + indices[q]] += wv
    return out


@numba.njit(cache=True)
def _features_used(indptr, indices, K, F):
    used = np.zeros(F, dtype=np.bool_)
    M = indptr.size - 1
    for r in range(M):
        lo, hi = indptr[r], indptr[r + 1]
        for p in range(lo, hi):
            used[indices[p]] = True
            base = K + indices[p] * K
            for q in range(p + 1, hi):
                used[base + indices[q]] = True
    return used


class PoolFeatures:
    """The matrix of :func:`~dpquery.algorithms.wide.fit.features` (``M`` candidates x
    ``K + K^2`` features) without storing it: a candidate of ``a`` head items has ``a (a -
    1) / 2`` pair features, so a pool of 200,000 candidates of up to 128 items would hold
    hundreds of millions of entries (GiBs) where its item lists hold a few million. It
    offers the products the fit needs, equal to the stored matrix's to the last bit.

    The pool's rows must hold distinct, sorted items (what ``fit.head_pool`` draws; ``keep``
    is each row's pair weight, ``fit.pair_keep``): ``fit.pool_features`` checks that, and
    returns the stored matrix otherwise."""

    def __init__(self, pool: sp.csr_array, keep: np.ndarray) -> None:
        K = int(pool.shape[1])
        self.K = K
        self.shape = (int(pool.shape[0]), K + K * K)
        self.indptr = np.ascontiguousarray(pool.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(pool.indices, dtype=np.int64)
        self.keep = np.ascontiguousarray(keep, dtype=np.float64)

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        return _features_times(self.indptr, self.indices, self.keep, self.K, x)

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        """``A^T @ y``."""
        y = np.ascontiguousarray(y, dtype=np.float64)
        return _features_transpose_times(
            self.indptr, self.indices, self.keep, self.K, self.shape[1], y
        )

    def used(self) -> np.ndarray:
        """The features some candidate holds (boolean, ``K + K^2``)."""
        return _features_used(self.indptr, self.indices, self.K, self.shape[1])


__all__ = ["PoolFeatures", "assemble_records", "cut_head_counts", "cut_item_counts", "draw_heads"]
