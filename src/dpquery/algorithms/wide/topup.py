"""The cut's bias corrected after the fit: records that reached the cut topped up
(post-processing of noisy quantities only; ``docs/wide.md``, "Correcting the cut's bias").

The sparse mode measures every count over records cut to ``s`` items, so on long records
each count is low: ``netflix``'s cut records hold 0.41 of its ones at ``s = 128``. Raising the
measured counts before the fit (a record-length model) made the fit's records hold more head
items each, and those co-occur more than the cut pairs say: the pairs' and triples' errors
rose above the all-zeros table's. Here the fit is left as it is (fitted to the cut
measurements) and only afterwards:

1. a noisy histogram of the record lengths (no cut; :data:`LENGTHS` in ``measure.py``) says
   how many records are longer than ``s`` and how long;
2. each item's count before the cut is solved from its cut count under a model where a
   record of length ``L`` holds the item with chance ``1 - exp(-lambda L)`` and the cut
   keeps it with chance ``min(1, s / L)`` (:func:`uncut_counts`; the cut count is increasing
   in ``lambda``: bisection);
3. that many fitted records, the longest (those that reached the cut), each get a length
   drawn from the histogram's bins beyond ``s``, and their extra slots are filled with the
   items' deficits (the uncut count minus the fitted count), dealt at random, never an item
   the record already holds (:func:`top_up`).

The extra items go only into the long records, each independently of the record's head, so
the head pairs grow by about the product of two items' deficits over the long records, not
by the fit's co-occurrence.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide.kernels import _GOLDEN, _splitmix
from dpquery.data.sample import systematic_counts

# The share of rho (after the bound) of the record-length histogram, taken from the pairs'.
LENGTHS_SHARE = 0.02


def length_edges(d: int, s: int) -> np.ndarray:
    """The upper edges of the length histogram's bins (public): 0, 1, 2, 3, then the powers
    of two from 4 and the points half way between (4, 6, 8, 12, 16, 24, ...), ``s`` and
    ``d``; bin ``i`` holds the records of length in ``(edges[i - 1], edges[i]]`` (bin 0:
    the empty records)."""
    points = {0, 1, 2, 3, int(s), int(d)}
    g = 4
    while g < d:
        points.update((g, g * 3 // 2))
        g *= 2
    return np.asarray(sorted(p for p in points if p <= d), dtype=np.int64)


def bin_lengths(edges: np.ndarray) -> np.ndarray:
    """Each bin's representative length: the mean of the integers it holds."""
    lo = np.concatenate([[0], edges[:-1] + 1])
    return (lo + edges) / 2.0


def _cut_at(lam: np.ndarray, records: np.ndarray, lengths: np.ndarray, s: int) -> np.ndarray:
    """The model's cut count of items of rate ``lam`` (one per item)."""
    keep = np.minimum(1.0, s / np.maximum(lengths, 1.0))
    held = -np.expm1(-np.outer(lam, lengths))
    return held @ (records * keep)


def uncut_counts(cut: np.ndarray, records: np.ndarray, lengths: np.ndarray, s: int) -> np.ndarray:
    """Each item's count before the cut to ``s`` items, from its (estimated) count ``cut``
    after it and the records by length (``records[b]`` records of length ``lengths[b]``):
    ``lambda`` solves ``sum_b N_b (1 - exp(-lambda L_b)) min(1, s / L_b) = cut`` (increasing
    in ``lambda``: bisection on ``log lambda``), the count is ``sum_b N_b (1 - exp(-lambda
    L_b))``. A rare item scales by about the ones over the kept ones, a common one, which the
    long records all hold, by less; a cut count at or above the model's largest (``lambda``
    infinite) is taken as held by every non-empty record. Post-processing."""
    cut = np.maximum(np.asarray(cut, dtype=np.float64), 0.0)
    records = np.maximum(np.asarray(records, dtype=np.float64), 0.0)
    out = cut.copy()
    most = float((records * np.minimum(1.0, s / np.maximum(lengths, 1.0)) * (lengths > 0)).sum())
    # at or above the model's largest cut count (lambda infinite): held by every record
    # that holds an item
    out[cut >= most] = np.maximum(cut[cut >= most], float(records[lengths > 0].sum()))
    solve = (cut > 0) & (cut < most)
    if not solve.any():
        return out
    lo = np.full(int(solve.sum()), -30.0)  # log lambda
    hi = np.full(lo.size, 5.0)
    target = cut[solve]
    for _ in range(60):
        mid = (lo + hi) / 2
        low = _cut_at(np.exp(mid), records, lengths, s) < target
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    lam = np.exp((lo + hi) / 2)
    whole = -np.expm1(-np.outer(lam, lengths)) @ records
    out[solve] = np.maximum(whole, target)
    return out


def length_estimate(noisy: np.ndarray, level: float) -> np.ndarray:
    """The length histogram's estimate: each bin's noisy count where it reaches ``level``
    (the caller's: a level no noise draw of the bins reaches), else 0 (post-processing)."""
    noisy = np.asarray(noisy, dtype=np.float64)
    return np.where(noisy >= level, noisy, 0.0)


@numba.njit(cache=True)
def _deal_extra(indptr, indices, who, extra, tokens, d, seed):
    """Record ``who[r]`` gets up to ``extra[r]`` of the shuffled ``tokens`` (items), in
    order, none it already holds nor twice: a token it holds is swapped with a random later
    one (up to 16 tries; SplitMix64 from ``seed``), then the record takes no more. Returns
    the new CSR arrays."""
    state = np.uint64(seed)
    n = indptr.size - 1
    T = tokens.size
    mark = np.full(d, -1, dtype=np.int64)
    added = np.zeros(n, dtype=np.int64)
    got = np.empty(T, dtype=np.int32)
    start = np.zeros(who.size + 1, dtype=np.int64)
    cursor = 0
    for r in range(who.size):
        i = who[r]
        for p in range(indptr[i], indptr[i + 1]):
            mark[indices[p]] = i
        start[r + 1] = start[r]
        for _ in range(extra[r]):
            if cursor >= T:
                break
            tries = 0
            while mark[tokens[cursor]] == i and tries < 16 and cursor + 1 < T:
                state += _GOLDEN  # SplitMix64's stream (kernels.py): a random later token
                q = cursor + 1 + np.int64(_splitmix(state) % np.uint64(T - cursor - 1))
                tokens[cursor], tokens[q] = tokens[q], tokens[cursor]
                tries += 1
            t = tokens[cursor]
            if mark[t] == i:
                break
            mark[t] = i
            got[start[r + 1]] = t
            start[r + 1] += 1
            cursor += 1
        added[i] = start[r + 1] - start[r]
    new_ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        new_ptr[i + 1] = new_ptr[i] + indptr[i + 1] - indptr[i] + added[i]
    new_idx = np.empty(new_ptr[n], dtype=np.int32)
    where = np.full(n, -1, dtype=np.int64)
    for r in range(who.size):
        where[who[r]] = r
    for i in range(n):
        lo = new_ptr[i]
        m = indptr[i + 1] - indptr[i]
        new_idx[lo : lo + m] = indices[indptr[i] : indptr[i + 1]]
        r = where[i]
        if r >= 0 and added[i] > 0:
            new_idx[lo + m : new_ptr[i + 1]] = got[start[r] : start[r + 1]]
            new_idx[lo : new_ptr[i + 1]] = np.sort(new_idx[lo : new_ptr[i + 1]])
    return new_ptr, new_idx


def top_up(
    records: sp.csr_array,
    cut: np.ndarray,
    lengths: np.ndarray,
    edges: np.ndarray,
    s: int,
    eligible: np.ndarray,
    rng: np.random.Generator,
    floor: float = 0.0,
) -> tuple[sp.csr_array, dict[str, int]]:
    """The fitted ``records`` (fitted to the counts ``cut`` of records cut to ``s`` items)
    with the records that reached the cut made as long as the estimated ``lengths``
    (records per bin of ``edges``) say, their extra slots filled by the ``eligible`` items'
    deficits: :func:`uncut_counts` minus the count in ``records``, where at least ``floor``.
    The ``m`` records the bins beyond ``s`` hold are the longest fitted records (ties at
    random); each gets a length drawn from those bins (uniform within its bin), the deficits
    are rounded systematically to the extra slots' total (at most) and dealt at random.
    Post-processing. Returns the records and ``{"topped_up": m, "ones_added": ...}``."""
    n, d = records.shape
    L = bin_lengths(edges)
    beyond = np.flatnonzero(np.concatenate([[False], edges[:-1] >= s]))
    m = min(round(float(lengths[beyond].sum())), n)
    info = {"topped_up": 0, "ones_added": 0}
    if m == 0:
        return records, info
    fitted = np.bincount(records.indices, minlength=d)
    deficit = np.where(eligible, np.maximum(uncut_counts(cut, lengths, L, s) - fitted, 0.0), 0.0)
    deficit[deficit < floor] = 0.0  # a correction within the noise is left out
    held = np.diff(records.indptr)
    who = np.lexsort((rng.random(n), -held))[:m]
    share = lengths[beyond] / lengths[beyond].sum()
    bins = beyond[rng.choice(beyond.size, size=m, p=share)]
    target = rng.integers(edges[bins - 1] + 1, edges[bins] + 1)
    extra = np.maximum(target - held[who], 0).astype(np.int64)
    total = int(min(extra.sum(), round(float(deficit.sum()))))
    if total <= 0:
        return records, info
    tokens = np.repeat(np.arange(d, dtype=np.int32), systematic_counts(deficit, total, rng))
    rng.shuffle(tokens)
    order = rng.permutation(m)  # which long records take the tokens first: at random
    indptr, indices = _deal_extra(
        np.asarray(records.indptr, dtype=np.int64),
        np.asarray(records.indices, dtype=np.int32),
        who[order].astype(np.int64),
        extra[order],
        tokens,
        d,
        np.uint64(rng.integers(2**63)),
    )
    out = sp.csr_array(
        (np.ones(indices.size, dtype=np.uint8), indices, indptr), shape=(n, d), copy=False
    )
    out.has_canonical_format = True
    for a in (out.data, out.indices, out.indptr):
        a.setflags(write=False)
    info = {"topped_up": m, "ones_added": int(indices.size - records.nnz)}
    return out, info
