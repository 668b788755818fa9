"""Generated item tables of public shapes, for benchmarks and tests of the wide release.

A shape is a recipe, not data: from a seed it makes a users x items table
(:class:`~dpquery.data.items.ItemSets`) whose sizes and statistics resemble a kind of real
table, without reading one (``docs/wide.md``, "Shapes"):

* ``small``: about 700 users x 9,000 items, records of about 150 items on average with
  heavy-tailed lengths (median about 70, 90th percentile about 320): the shape of a small
  user x movie ratings table, where records are long and ``n`` is small;
* ``netflix``: 480,189 users x 17,770 items, about 100 million ones, median record length
  about 100, some records in the thousands;
* ``npm``: many short records (about 7 items each over 45,000 items), the shape the wide
  release was tuned on (npm_words), for comparison at a small size.

:data:`UNSEEN` holds the extremes the release was not tuned on (``docs/wide.md``, "Shapes it
was not tuned on"): tiny ``n``, dense-ish records, one item in almost every record, mostly
empty records, records all of one length, very wide and short, narrow and deep, uniform
popularity (no head), and two disjoint communities.

Every shape has power-law item popularity (``w_j`` proportional to ``(j + offset)^-alpha``,
item 0 the most popular) and latent groups of items that go together: each item belongs to
one of ``groups`` clusters, each record to one cluster, and a share ``together`` of its
items is drawn from its cluster (by the same popularity law restricted to the cluster), the
rest from all items (``together = 1``: each record's items all from its cluster, so with
two clusters the table is two disjoint communities). Record lengths are log-normal, capped
(``median == p90``: every record drawn at one length); a share ``empty`` of the records is
emptied, and the most popular item is added to a share ``common`` of the records. Items
are drawn with replacement and a record's duplicates are merged, so long records come out a
little shorter than drawn.

Generation is vectorised and made chunk by chunk of records, the CSR arrays built directly
(no COO of the whole table): ``netflix`` takes well under a minute and about 2 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpquery.data.items import ItemSets
from dpquery.errors import DPQueryError


@dataclass(frozen=True)
class Shape:
    """The public recipe of a generated item table (module docstring)."""

    name: str
    n: int
    d: int
    median: float  # median drawn record length
    p90: float  # 90th percentile of the drawn lengths
    cap: int  # longest drawn record
    alpha: float = 1.0  # popularity exponent
    offset: float = 10.0  # popularity offset: the head's flatness
    groups: int = 20
    together: float = 0.5  # share of a record's items drawn from its group
    empty: float = 0.0  # share of the records left empty
    common: float = 0.0  # share of the records given item 0 (on top of their drawn items)

    @property
    def sigma(self) -> float:
        """The log-normal's scale from its median and 90th percentile."""
        return float(np.log(self.p90 / self.median) / 1.2815515655446004)


SHAPES = {
    "small": Shape("small", 700, 9_000, median=76, p90=520, cap=2_500, alpha=0.95,
                   offset=25.0, groups=20),
    "netflix": Shape("netflix", 480_189, 17_770, median=125, p90=800, cap=8_000, alpha=1.0,
                     offset=40.0, groups=50),
    "npm": Shape("npm", 20_000, 45_375, median=6, p90=13, cap=25, alpha=1.1, offset=3.0,
                 groups=100),
}  # fmt: skip

# The extremes of docs/wide.md, "Shapes it was not tuned on" (public recipes).
UNSEEN = {
    # tiny n, long records
    "tiny": Shape("tiny", 200, 5_000, median=150, p90=600, cap=2_000, alpha=0.95, offset=25.0),
    # dense-ish rows: about 1,000 distinct items a record of 5,000
    "dense": Shape("dense", 1_000, 5_000, median=2_000, p90=3_000, cap=4_500, alpha=0.8,
                   offset=50.0),
    # one item in 95% of the records beside a long tail
    "common": Shape("common", 2_000, 5_000, median=20, p90=80, cap=500, offset=25.0,
                    common=0.95),
    # 90% of the records empty, the rest long
    "empty": Shape("empty", 5_000, 5_000, median=100, p90=400, cap=2_000, offset=25.0,
                   empty=0.9),
    # every record drawn at 40 items
    "samelen": Shape("samelen", 2_000, 5_000, median=40, p90=40, cap=40, offset=25.0),
    # very wide and short: 3 items a record over 200,000
    "wideshort": Shape("wideshort", 50_000, 200_000, median=3, p90=3, cap=3, alpha=1.0,
                       offset=10.0, groups=100),
    # narrow and deep: 50 items, 100,000 records
    "narrowdeep": Shape("narrowdeep", 100_000, 50, median=6, p90=15, cap=50, offset=3.0,
                        groups=5),
    # no head at all: every item equally popular
    "uniform": Shape("uniform", 3_000, 5_000, median=30, p90=100, cap=1_000, alpha=0.0),
    # two disjoint communities: each record's items all from one of two halves
    "twocomm": Shape("twocomm", 3_000, 5_000, median=30, p90=100, cap=1_000, offset=25.0,
                     groups=2, together=1.0),
}  # fmt: skip


def _popularity(shape: Shape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each item's weight (item 0 the most popular) and its group."""
    w = (np.arange(shape.d) + shape.offset) ** -shape.alpha
    group = rng.integers(shape.groups, size=shape.d)
    return w / w.sum(), group


def _alias(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of the distribution ``p``: draw slot ``k`` uniformly, keep it with
    probability ``keep[k]``, else take ``alias[k]``."""
    m = p.size
    scaled = p * (m / p.sum())
    keep = np.ones(m)
    alias = np.arange(m, dtype=np.int32)
    small = [i for i in range(m) if scaled[i] < 1.0]
    large = [i for i in range(m) if scaled[i] >= 1.0]
    while small and large:
        s, big = small.pop(), large.pop()
        keep[s] = scaled[s]
        alias[s] = big
        scaled[big] -= 1.0 - scaled[s]
        (small if scaled[big] < 1.0 else large).append(big)
    return keep, alias


def generate(shape: str | Shape, seed: int = 0) -> ItemSets:
    """The table of ``shape`` (a name of :data:`SHAPES` or a :class:`Shape`) from ``seed``:
    the same seed gives the same table."""
    if isinstance(shape, str):
        known = {**SHAPES, **UNSEEN}
        if shape not in known:
            raise DPQueryError(f"unknown shape {shape!r}; known: {', '.join(known)}")
        shape = known[shape]
    rng = np.random.default_rng(seed)
    w, group = _popularity(shape, rng)
    # Alias tables (Walker 1977, Vose 1991): one draw in O(1) by two lookups. The items
    # sorted by group: group g's items sit at starts[g]..starts[g] + sizes[g] of ``by_group``.
    by_group = np.argsort(group, kind="stable").astype(np.int32)
    starts = np.searchsorted(group[by_group], np.arange(shape.groups))
    sizes = np.diff(np.append(starts, shape.d))
    keep_all, alias_all = _alias(w)
    keep_group = np.ones(shape.d)
    alias_group = np.arange(shape.d, dtype=np.int32)
    for g in range(shape.groups):
        lo, hi = starts[g], starts[g] + sizes[g]
        if hi > lo:
            keep_group[lo:hi], local = _alias(w[by_group[lo:hi]])
            alias_group[lo:hi] = lo + local
    group_share = np.bincount(group, weights=w, minlength=shape.groups).astype(np.float64)
    group_share /= group_share.sum()

    lengths = np.exp(np.log(shape.median) + shape.sigma * rng.standard_normal(shape.n))
    lengths = np.clip(np.rint(lengths), 1, min(shape.cap, shape.d)).astype(np.int64)
    if shape.empty > 0:  # drawn only here: the other shapes' tables are unchanged
        lengths[rng.random(shape.n) < shape.empty] = 0
    indptr = np.zeros(shape.n + 1, dtype=np.int64)
    parts: list[np.ndarray] = []
    chunk = max(1, min(50_000, (2**31 - 1) // shape.d))  # records at once: int32 keys
    for start in range(0, shape.n, chunk):
        stop = min(start + chunk, shape.n)
        L = lengths[start:stop]
        m = stop - start
        rows = np.repeat(np.arange(m, dtype=np.int32), L)
        record_group = rng.choice(shape.groups, size=m, p=group_share)
        own = rng.random(rows.size) < shape.together
        u = rng.random(rows.size)
        # a uniform slot among all items, or among the record's group's
        slot = rng.random(rows.size)
        in_group = record_group[rows]
        slot = np.where(own, starts[in_group] + slot * sizes[in_group], slot * shape.d).astype(
            np.int32
        )
        del in_group
        keep = np.where(own, keep_group[slot], keep_all[slot])
        other = np.where(own, alias_group[slot], alias_all[slot])
        items = np.where(u < keep, slot, other)
        items = np.where(own, by_group[items], items)
        del slot, keep, other, own, u
        key = rows * np.int32(shape.d) + items.astype(np.int32)  # < 2**31: chunk * d
        del rows, items
        if shape.common > 0:  # item 0 added to a share of the records
            given = np.flatnonzero(rng.random(m) < shape.common).astype(np.int32)
            key = np.concatenate([key, given * np.int32(shape.d)])
        key.sort()  # by record, then item
        key = key[np.concatenate([[True], key[1:] != key[:-1]])]  # duplicates merged
        per_row = np.bincount(key // shape.d, minlength=m)
        indptr[start + 1 : stop + 1] = indptr[start] + np.cumsum(per_row)
        parts.append((key % shape.d).astype(np.int32))
    indices = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    data = np.ones(indices.size, dtype=np.uint8)
    matrix = sp.csr_array((data, indices, indptr), shape=(shape.n, shape.d))
    return ItemSets(matrix)


def describe(items: ItemSets) -> dict[str, float]:
    """The public-shape statistics of a table: sizes, ones, record lengths, item counts."""
    lengths = items.lengths()
    counts = np.bincount(items.matrix.indices, minlength=items.d)
    return {
        "n": items.n,
        "d": items.d,
        "ones": int(items.nnz),
        "mean_length": float(lengths.mean()),
        "median_length": float(np.median(lengths)),
        "p90_length": float(np.percentile(lengths, 90)),
        "max_length": int(lengths.max()),
        "top_item_share": float(counts.max() / items.n),
        "items_seen": int((counts > 0).sum()),
        "items_once": int((counts == 1).sum()),
    }


__all__ = ["SHAPES", "UNSEEN", "Shape", "describe", "generate"]
