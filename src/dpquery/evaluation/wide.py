"""The measures that mean something on wide sparse 0/1 data, and the references they need.

On a users x items table with thousands of items and a few ones per record, every k-way
marginal is almost all "absent", so the dense workloads say little. These measures, as
fractions of records (weighted records by their normalised weight), do:

* **1-way**: the frequency of every item, over all d items;
* **pairs**: the co-occurrence frequency of every pair among the ``pair_top`` (200) items
  most frequent in the real data;
* **triples**: ``triples`` (2,000) distinct 3-item positive conjunctions drawn at random, with
  a seed, among the ``triple_top`` (100) most frequent real items.

Each is summarised by the max and the mean absolute error. References computed from the same
data: ``zeros`` (the all-zero table: its mean 1-way error is the mean frequency, strong on
sparse data), ``indep`` (the product of the TRUE item frequencies: a non-private reference a
private release has to approach) and ``uniform`` (each item present with probability 1/2).

Everything here reads the real data (which items are frequent, the true answers): it is NOT
differentially private, for the data holder only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpquery.data.items import ItemSets
from dpquery.errors import DPQueryError

NOT_PRIVATE_NOTE = (
    "NOT PRIVATE: computed on the private data (item frequencies, which items are frequent, "
    "true co-occurrences) for the data holder; do not publish this evaluation"
)
MEASURES = ("one_way", "pairs", "triples")
REFERENCES = ("zeros", "indep", "uniform")
_CHUNK_CELLS = 1 << 23  # (records x triples) cells tested at once


def _frequencies(items: ItemSets) -> np.ndarray:
    """Each item's share of records (exact counts / n when unweighted)."""
    m = items.matrix
    if items.weights is None:
        return np.bincount(m.indices, minlength=items.d) / max(items.n, 1)
    rows = np.repeat(np.arange(items.n), items.lengths())
    return np.bincount(m.indices, weights=items.probabilities()[rows], minlength=items.d)


def _columns(items: ItemSets, cols: np.ndarray) -> sp.csr_array:
    """The records restricted to ``cols`` (in that order), as float64 (no uint8 overflow)."""
    return sp.csr_array(items.matrix[:, cols], dtype=np.float64)


def _draw_triples(k: int, count: int, seed: int) -> np.ndarray:
    """``count`` distinct sorted triples of ``range(k)`` (all of them when there are fewer),
    in the order a seeded generator draws them."""
    total = k * (k - 1) * (k - 2) // 6
    if total <= count:
        return np.array(
            [(a, b, c) for a in range(k) for b in range(a + 1, k) for c in range(b + 1, k)],
            dtype=np.int64,
        ).reshape(-1, 3)
    rng = np.random.default_rng(seed)
    found: dict[tuple[int, int, int], None] = {}
    while len(found) < count:
        batch = np.sort(rng.random((2 * count, k)).argsort(axis=1)[:, :3], axis=1)
        for t in map(tuple, batch.tolist()):
            found.setdefault(t, None)
            if len(found) == count:
                break
    return np.array(list(found), dtype=np.int64)


def _errors(released: np.ndarray, true: np.ndarray) -> dict[str, float]:
    err = np.abs(np.asarray(released, dtype=np.float64) - true)
    if err.size == 0:
        return {"max": 0.0, "mean": 0.0, "count": 0}
    return {"max": float(err.max()), "mean": float(err.mean()), "count": int(err.size)}


@dataclass(frozen=True)
class WideMeasures:
    """The measures of the module docstring on one real table: which items and triples,
    and their true answers (NOT private). Build with :meth:`of`; score any release with
    :meth:`scores` and the references with :meth:`reference_scores`."""

    n: int
    d: int
    one_way: np.ndarray  # (d,) true item frequencies
    pair_items: np.ndarray  # the pair_top most frequent items, most frequent first
    pairs: np.ndarray  # true co-occurrence of pair_items[i], pair_items[j], i < j (row-major)
    triples: np.ndarray  # (m, 3) item ids
    triple_answers: np.ndarray  # (m,) true frequency of each triple's conjunction
    seed: int

    @classmethod
    def of(
        cls,
        real: ItemSets,
        *,
        seed: int = 0,
        pair_top: int = 200,
        triple_top: int = 100,
        triples: int = 2000,
    ) -> WideMeasures:
        """The measures on ``real``: frequent items by true count (ties: the lower id)."""
        if real.weights is not None:
            raise DPQueryError("the real data is a table of records; it cannot be weighted")
        f = _frequencies(real)
        by_count = np.argsort(-f, kind="stable")
        pair_items = by_count[: min(pair_top, real.d)]
        top = by_count[: min(triple_top, real.d)]
        chosen = top[_draw_triples(len(top), triples, seed)]
        probe = cls(real.n, real.d, f, pair_items, np.zeros(0), chosen, np.zeros(0), seed)
        answers = probe.answers(real)
        return cls(
            real.n, real.d, f, pair_items, answers["pairs"], chosen, answers["triples"], seed
        )

    def answers(self, items: ItemSets) -> dict[str, np.ndarray]:
        """The answers of ``items`` (a release or the data) to every measure."""
        if items.d != self.d:
            raise DPQueryError(f"the records have {items.d} items, the data {self.d}")
        p = items.probabilities()
        s = _columns(items, self.pair_items)
        gram = (s.T @ s.multiply(p[:, None])).toarray()
        upper = np.triu_indices(len(self.pair_items), k=1)
        return {
            "one_way": _frequencies(items),
            "pairs": gram[upper],
            "triples": self._triple_answers(items, p),
        }

    def _triple_answers(self, items: ItemSets, p: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.triples))
        if not len(self.triples):
            return out
        top, local = np.unique(self.triples, return_inverse=True)
        a, b, c = local.reshape(self.triples.shape).T
        x = ItemSets(items.matrix[:, top])
        if items.weights is None:  # popcounts of ANDed bit columns, a few triples at a time
            words = x.to_binary().words
            step = max(1, _CHUNK_CELLS // (64 * max(words.shape[1], 1)))
            for s in range(0, len(out), step):
                both = words[a[s : s + step]] & words[b[s : s + step]] & words[c[s : s + step]]
                out[s : s + step] = np.bitwise_count(both).sum(axis=1) / max(items.n, 1)
            return out
        m = x.matrix
        rows = np.flatnonzero(np.diff(m.indptr) >= 3)  # fewer than 3 top items: no triple
        step = max(1, _CHUNK_CELLS // len(out))
        for s in range(0, rows.size, step):
            block = rows[s : s + step]
            dense = m[block].toarray().astype(bool)
            out += p[block] @ (dense[:, a] & dense[:, b] & dense[:, c])
        return out

    def reference_answers(self, name: str) -> dict[str, np.ndarray]:
        """The answers of ``zeros``, ``indep`` (product of the true frequencies) or
        ``uniform`` (every item with probability 1/2)."""
        f = self.one_way
        if name == "zeros":
            g = np.zeros_like(f)
        elif name == "uniform":
            g = np.full_like(f, 0.5)
        elif name == "indep":
            g = f
        else:
            raise DPQueryError(f"unknown reference {name!r}; expected one of {REFERENCES}")
        fp = g[self.pair_items]
        upper = np.triu_indices(len(self.pair_items), k=1)
        return {
            "one_way": g,
            "pairs": np.outer(fp, fp)[upper],
            "triples": np.prod(g[self.triples], axis=1) if len(self.triples) else np.zeros(0),
        }

    def _scores(self, answers: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
        true = {"one_way": self.one_way, "pairs": self.pairs, "triples": self.triple_answers}
        return {k: _errors(answers[k], true[k]) for k in MEASURES}

    def scores(self, items: ItemSets) -> dict[str, dict[str, float]]:
        """Max and mean absolute error of ``items`` on each measure (fractions of records)."""
        return self._scores(self.answers(items))

    def reference_scores(self) -> dict[str, dict[str, dict[str, float]]]:
        """:meth:`scores` of every reference of :data:`REFERENCES`."""
        return {name: self._scores(self.reference_answers(name)) for name in REFERENCES}

    def describe(self) -> dict[str, Any]:
        """What was measured (JSON-ready)."""
        return {
            "one_way": f"frequency of each of the {self.d} items",
            "pairs": f"co-occurrence of each of the {len(self.pairs)} pairs among the "
            f"{len(self.pair_items)} most frequent real items",
            "triples": f"{len(self.triples)} random 3-item conjunctions among the "
            f"{len(np.unique(self.triples))} most frequent real items (seed {self.seed})",
        }


def wide_scores(real: ItemSets, synthetic: ItemSets, *, seed: int = 0) -> dict[str, Any]:
    """Max and mean absolute error of ``synthetic`` on each measure, as fractions of
    records: ``{"one_way": {"max", "mean", "count"}, "pairs": ..., "triples": ...}``.
    NOT private: reads ``real``."""
    return WideMeasures.of(real, seed=seed).scores(synthetic)


def wide_evaluation(
    real: ItemSets, synthetic: ItemSets, *, seed: int = 0, measures: WideMeasures | None = None
) -> dict[str, Any]:
    """The synthetic records' scores beside the references' (JSON-ready, NOT PRIVATE)."""
    measures = WideMeasures.of(real, seed=seed) if measures is None else measures
    return {
        "note": NOT_PRIVATE_NOTE,
        "data": {"records": real.n, "items": real.d, "ones": real.nnz},
        "synthetic": {
            "records": synthetic.n,
            "ones": synthetic.nnz,
            "weighted": synthetic.weights is not None,
        },
        "measures": measures.describe(),
        "scores": {"synthetic": measures.scores(synthetic), **measures.reference_scores()},
    }


def describe_wide(evaluation: dict[str, Any]) -> str:
    """The console table of :func:`wide_evaluation`: max / mean per measure and table."""
    scores = evaluation["scores"]
    names = list(scores)
    width = 11 + 22 * len(names)
    lines = [
        "NOT PRIVATE: errors on the private data, as fractions of records (max / mean)",
        f"{'measure':<11}" + "".join(f"{k:>22}" for k in names),
        "-" * width,
    ]
    for m in MEASURES:
        cells = [f"{scores[k][m]['max']:.4g} / {scores[k][m]['mean']:.3g}" for k in names]
        lines.append(f"{m:<11}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


__all__ = [
    "MEASURES",
    "NOT_PRIVATE_NOTE",
    "REFERENCES",
    "WideMeasures",
    "describe_wide",
    "wide_evaluation",
    "wide_scores",
]
