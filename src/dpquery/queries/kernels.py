"""Compiled counting kernels over bit-packed columns (the layout of :mod:`dpquery.data.binary`).

A query is a list of literals ``(bit, positive)``. Each kernel folds the literal columns of a
query word by word, with every negative literal read as ``~column``:

* ``OP_AND``: the records satisfying every literal (conjunctions; disjunctions by De Morgan);
* ``OP_XOR``: the records with an odd number of literals true (parities).

and counts the set bits (``llvm.ctpop``). Work is blocked twice: threads (``prange``) take
blocks of queries, and each block walks the words in chunks small enough that the chunk of
every column stays in cache while all the block's queries read it. Padding bits past record
``n - 1`` are masked in the last word, since a negated column sets them.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

OP_AND = 0
OP_XOR = 1

# 256 words = 2 KiB per column: for the ~400 columns of KDD99 the chunk of every column is
# under 1 MiB, so the block's queries read it from L2 rather than from memory.
CHUNK_WORDS = 256


def _popcount_intrinsic(typingctx, x):  # pragma: no cover - jit
    """``llvm.ctpop.i64``: one instruction (vectorised with AVX-512 VPOPCNTDQ)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, args)

    return sig, codegen


_popcount: Any = intrinsic(_popcount_intrinsic)


@numba.njit(cache=True, inline="always")
def _flip(positive: bool) -> np.uint64:  # pragma: no cover - jit
    return np.uint64(0) if positive else ~np.uint64(0)


@numba.njit(cache=True)
def _fold_chunk(
    words: np.ndarray,
    bits: np.ndarray,
    positive: np.ndarray,
    s: int,
    e: int,
    op: int,
    w0: int,
    w1: int,
    last: int,
    tail_mask: np.uint64,
    buf: np.ndarray,
) -> np.ndarray:  # pragma: no cover - jit
    """Fold literals ``s:e`` over words ``w0:w1`` into ``buf`` (general k)."""
    length = w1 - w0
    f = _flip(positive[s])
    j = bits[s]
    for t in range(length):
        buf[t] = words[j, w0 + t] ^ f
    for l in range(s + 1, e):
        f = _flip(positive[l])
        j = bits[l]
        if op == OP_AND:
            for t in range(length):
                buf[t] &= words[j, w0 + t] ^ f
        else:
            for t in range(length):
                buf[t] ^= words[j, w0 + t] ^ f
    if w1 == last:
        buf[length - 1] &= tail_mask
    return buf


@numba.njit(cache=True, inline="always")
def _count3(words, a, fa, b, fb, c, fc, op, w0, w1, last, tail_mask):  # pragma: no cover - jit
    """Fused popcount of a 1-, 2- or 3-literal fold (``b``/``c`` = -1 when absent)."""
    total = 0
    end = w1 - 1 if w1 == last else w1
    if c >= 0:
        if op == OP_AND:
            for t in range(w0, end):
                total += _popcount((words[a, t] ^ fa) & (words[b, t] ^ fb) & (words[c, t] ^ fc))
        else:
            for t in range(w0, end):
                total += _popcount((words[a, t] ^ fa) ^ (words[b, t] ^ fb) ^ (words[c, t] ^ fc))
    elif b >= 0:
        if op == OP_AND:
            for t in range(w0, end):
                total += _popcount((words[a, t] ^ fa) & (words[b, t] ^ fb))
        else:
            for t in range(w0, end):
                total += _popcount((words[a, t] ^ fa) ^ (words[b, t] ^ fb))
    else:
        for t in range(w0, end):
            total += _popcount(words[a, t] ^ fa)
    if end < w1:  # the last word of the data: mask the padding bits
        x = words[a, end] ^ fa
        if b >= 0:
            y = words[b, end] ^ fb
            x = x & y if op == OP_AND else x ^ y
        if c >= 0:
            z = words[c, end] ^ fc
            x = x & z if op == OP_AND else x ^ z
        total += _popcount(x & tail_mask)
    return total


@numba.njit(cache=True, parallel=True)
def count_queries(
    words: np.ndarray,
    n: int,
    tail_mask: np.uint64,
    offsets: np.ndarray,
    bits: np.ndarray,
    positive: np.ndarray,
    op: int,
    chunk: int,
    n_blocks: int,
) -> np.ndarray:  # pragma: no cover - jit
    """Number of records whose fold of each query's literals is 1 (int64, one per query).

    An empty query folds to all ones under AND (count ``n``) and to zero under XOR.
    """
    n_queries = offsets.size - 1
    n_words = words.shape[1]
    out = np.zeros(n_queries, np.int64)
    n_blocks = max(1, min(n_queries, n_blocks))
    block = (n_queries + n_blocks - 1) // n_blocks
    for blk in prange(n_blocks):
        lo = blk * block
        hi = min(n_queries, lo + block)
        buf = np.empty(chunk, np.uint64)
        for w0 in range(0, n_words, chunk):
            w1 = min(n_words, w0 + chunk)
            for i in range(lo, hi):
                s = offsets[i]
                e = offsets[i + 1]
                k = e - s
                if k == 0:
                    if w0 == 0 and op == OP_AND:
                        out[i] = n
                elif k <= 3:
                    b = bits[s + 1] if k >= 2 else -1
                    c = bits[s + 2] if k == 3 else -1
                    fb = _flip(positive[s + 1]) if k >= 2 else np.uint64(0)
                    fc = _flip(positive[s + 2]) if k == 3 else np.uint64(0)
                    out[i] += _count3(
                        words,
                        bits[s],
                        _flip(positive[s]),
                        b,
                        fb,
                        c,
                        fc,
                        op,
                        w0,
                        w1,
                        n_words,
                        tail_mask,
                    )
                else:
                    _fold_chunk(words, bits, positive, s, e, op, w0, w1, n_words, tail_mask, buf)
                    total = 0
                    for t in range(w1 - w0):
                        total += _popcount(buf[t])
                    out[i] += total
    return out


@numba.njit(cache=True, parallel=True)
def weigh_queries(
    words: np.ndarray,
    weights: np.ndarray,
    tail_mask: np.uint64,
    offsets: np.ndarray,
    bits: np.ndarray,
    positive: np.ndarray,
    op: int,
) -> np.ndarray:  # pragma: no cover - jit
    """Total weight of the records whose fold of each query's literals is 1.

    For record sets with many distinct weights: the cost is one fold per word plus one
    addition per selected record (set bits are walked with ``x & (x - 1)``).
    """
    n_queries = offsets.size - 1
    n_words = words.shape[1]
    out = np.zeros(n_queries, np.float64)
    for i in prange(n_queries):
        s = offsets[i]
        e = offsets[i + 1]
        total = 0.0
        for t in range(n_words):
            x = ~np.uint64(0) if op == OP_AND else np.uint64(0)
            for l in range(s, e):
                y = words[bits[l], t] ^ _flip(positive[l])
                x = x & y if op == OP_AND else x ^ y
            if t == n_words - 1:
                x &= tail_mask
            base = t * 64
            while x:
                r = _ctz(x)
                total += weights[base + r]
                x &= x - np.uint64(1)
        out[i] = total
    return out


def _ctz_intrinsic(typingctx, x):  # pragma: no cover - jit
    """``llvm.cttz.i64``: index of the lowest set bit."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.cttz.i64")
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


_ctz: Any = intrinsic(_ctz_intrinsic)


# A column whose nonzero words are at most this fraction of all words is a sparse pivot.
SPARSE_PIVOT_FRACTION = 0.25


@numba.njit(cache=True, parallel=True)
def _count_nonzero_words(words: np.ndarray, limit: int) -> np.ndarray:  # pragma: no cover - jit
    """Nonzero words per column, stopping once a column passes ``limit`` (then ``limit + 1``)."""
    d, n_words = words.shape
    out = np.zeros(d, np.int64)
    for j in prange(d):
        c = 0
        for t in range(n_words):
            if words[j, t] != 0:
                c += 1
                if c > limit:
                    break
        out[j] = c
    return out


@numba.njit(cache=True, parallel=True)
def _fill_nonzero_words(words, sparse, ptr, idx):  # pragma: no cover - jit
    for j in prange(words.shape[0]):
        if sparse[j]:
            r = ptr[j]
            for t in range(words.shape[1]):
                if words[j, t] != 0:
                    idx[r] = t
                    r += 1


def nonzero_words(words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR index of the nonzero words of every sparse column: ``(sparse, ptr, idx)``.

    Columns denser than :data:`SPARSE_PIVOT_FRACTION` (``sparse[j]`` False) get an empty
    list and are never pivots, which bounds the index's size; counting stops early in them.
    """
    limit = int(SPARSE_PIVOT_FRACTION * words.shape[1])
    counts = _count_nonzero_words(words, limit)
    sparse = counts <= limit
    ptr = np.zeros(words.shape[0] + 1, np.int64)
    ptr[1:] = np.cumsum(np.where(sparse, counts, 0))
    idx = np.empty(int(ptr[-1]), np.int32)
    _fill_nonzero_words(words, sparse, ptr, idx)
    return sparse, ptr, idx


@numba.njit(cache=True, parallel=True)
def count_sparse_pivot(
    words: np.ndarray,
    offsets: np.ndarray,
    bits: np.ndarray,
    positive: np.ndarray,
    sparse: np.ndarray,
    nz_ptr: np.ndarray,
    nz_idx: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - jit
    """AND counts of the queries that have a sparse positive literal (the *pivot*).

    A record satisfying the conjunction has the pivot's bit set, so only the pivot's
    nonzero words can contribute: the fold visits those words alone (the padding bits are
    zero in the pivot, so no tail mask is needed). Returns the counts and a mask of the
    queries handled; the others (no sparse positive literal) need the dense kernel.
    """
    n_queries = offsets.size - 1
    out = np.zeros(n_queries, np.int64)
    done = np.zeros(n_queries, np.bool_)
    for i in prange(n_queries):
        s = offsets[i]
        e = offsets[i + 1]
        pivot = -1
        best = np.int64(1) << 62
        for l in range(s, e):
            j = bits[l]
            size = nz_ptr[j + 1] - nz_ptr[j]
            if positive[l] and sparse[j] and size < best:
                best = size
                pivot = l
        if pivot < 0:
            continue
        done[i] = True
        jp = bits[pivot]
        total = 0
        for r in range(nz_ptr[jp], nz_ptr[jp + 1]):
            t = nz_idx[r]
            x = words[jp, t]
            for l in range(s, e):
                if l != pivot:
                    x &= words[bits[l], t] ^ _flip(positive[l])
            total += _popcount(x)
        out[i] = total
    return out, done
