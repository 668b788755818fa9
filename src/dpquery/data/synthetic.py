"""Synthetic data generators, produced directly in the bit-packed layout.

* :func:`biased_bits`: DualQuery, Section 6.3: every attribute i has a bias p_i ~ U[0, 1]
  and every bit is Bernoulli(p_i). Generated column chunk by column chunk, so that
  n = 20,000 rows x d = 512,000 attributes (1.2 GiB packed) fits in memory.
* :func:`power_law_items`: sparse users x items data (the Netflix shape): item popularity
  falls off as a power law, each user holds a few items.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dpquery.data.binary import BinaryData, n_words_for
from dpquery.data.encode import _from_pairs
from dpquery.errors import DPQueryError
from dpquery.rng import SeedLike, make_rng

_CHUNK_BITS = 1 << 25  # ~128 MiB of float32 draws per chunk


def _check_shape(n: int, d: int) -> None:
    if n < 1 or d < 1:
        raise DPQueryError(f"n and d must be positive integers, got n={n}, d={d}")


def biased_bits(
    n: int, d: int, *, seed: SeedLike = None, bias: np.ndarray | None = None
) -> BinaryData:
    """n records of d independent bits, bit i ~ Bernoulli(p_i), p_i ~ U[0, 1] unless given.

    Draws are float32 uniforms compared with p_i, so each bit's probability is p_i rounded
    to a multiple of 2^-24.
    """
    _check_shape(n, d)
    rng = make_rng(seed)
    p = rng.random(d) if bias is None else np.asarray(bias, dtype=np.float64)
    if p.shape != (d,) or (p < 0).any() or (p > 1).any():
        raise DPQueryError(f"bias must be {d} probabilities in [0, 1]")
    n_words = n_words_for(n)
    words = np.empty((d, n_words), dtype=np.uint64)
    step = max(1, _CHUNK_BITS // n)
    starts = range(0, d, step)
    p32 = p.astype(np.float32)
    # One child generator per chunk: the output depends on the seed only, not on threads.
    children = rng.spawn(len(starts))

    def fill(k: int) -> None:
        start = starts[k]
        stop = min(d, start + step)
        block = children[k].random((stop - start, n), dtype=np.float32) < p32[start:stop, None]
        packed = np.zeros((stop - start, n_words * 8), dtype=np.uint8)
        packed[:, : (n + 7) // 8] = np.packbits(block, axis=1, bitorder="little")
        words[start:stop] = packed.view("<u8")

    # numpy's samplers release the GIL, so threads use every core.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(fill, range(len(starts))))
    return BinaryData(words, n)


def power_law_items(
    n: int, d: int, *, mean_items: float = 20.0, exponent: float = 1.0, seed: SeedLike = None
) -> BinaryData:
    """n users x d items, item j chosen with probability proportional to (j + 1)^-exponent,
    each user drawing Poisson(mean_items) items with replacement. Built from (user, item) pairs,
    never dense."""
    _check_shape(n, d)
    if mean_items <= 0 or exponent < 0:
        raise DPQueryError(f"need mean_items > 0 and exponent >= 0, got {mean_items}, {exponent}")
    rng = make_rng(seed)
    weights = (np.arange(1, d + 1, dtype=np.float64)) ** -exponent
    counts = rng.poisson(mean_items, size=n)
    users = np.repeat(np.arange(n, dtype=np.int64), counts)
    items = rng.choice(d, size=int(counts.sum()), p=weights / weights.sum())
    return _from_pairs(users, items, n, d, "power_law_items")
