"""Answering a workload: on bit-packed data, and on a weighted record set.

The answer of a linear query q on a dataset is the average ``(1/n) Σ_x q(x)`` (DualQuery,
Section 2: databases are normalised histograms). On a weighted record set (what DualQuery,
FEM and MWEM release) it is the weighted average ``Σ_i w_i q(x_i) / Σ_i w_i``.

Both reduce to one primitive, the total weight of the records whose literals *fold* to 1
(:mod:`dpquery.queries.kernels`):

* conjunction: AND of the literals, ``a = T_and / N``;
* disjunction: by De Morgan, ``a = 1 - T_and(negated literals) / N``;
* parity: XOR counts the records with an odd number of bits set, ``a = 1 - 2 T_xor / N``.
"""

from __future__ import annotations

import hashlib
import weakref
from pathlib import Path

import numba
import numpy as np

from dpquery.data.binary import BinaryData, pack_columns
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.io import atomic_path
from dpquery.queries import kernels
from dpquery.queries.workload import Workload

# A record set with at most this many distinct weights is answered class by class with the
# popcount kernel; beyond it, the weighted kernel sums weights of selected records.
MAX_WEIGHT_CLASSES = 16


def _check_bits(workload: Workload, d: int) -> None:
    if workload.d != d:
        raise DPQueryError(f"the workload is over {workload.d} bits but the data has {d}")


def _fold_op(workload: Workload) -> tuple[int, np.ndarray]:
    if workload.kind == "parity":
        return kernels.OP_XOR, workload.positive
    if workload.kind == "disjunction":
        return kernels.OP_AND, np.ascontiguousarray(~workload.positive)
    return kernels.OP_AND, workload.positive


def _from_totals(workload: Workload, totals: np.ndarray, mass: float) -> np.ndarray:
    frac = totals / mass
    if workload.kind == "parity":
        return 1.0 - 2.0 * frac
    if workload.kind == "disjunction":
        return 1.0 - frac
    return frac


def fold_counts(workload: Workload, data: BinaryData) -> np.ndarray:
    """Number of records whose literals fold to 1, per query (int64; see module docstring).

    AND folds with a sparse positive literal visit only that column's nonzero words
    (:func:`kernels.count_sparse_pivot`); the rest go through the dense blocked kernel.
    """
    op, positive = _fold_op(workload)
    _check_bits(workload, data.d)
    if op != kernels.OP_AND or len(workload) == 0:
        return _count(workload, data, op, positive)
    sparse, ptr, idx = _nonzero_index(data)
    counts, done = kernels.count_sparse_pivot(
        data.words, workload.offsets, workload.bits, positive, sparse, ptr, idx
    )
    rest = np.flatnonzero(~done)
    if rest.size:
        sub = workload.subset(rest)
        counts[rest] = _count(sub, data, op, _fold_op(sub)[1])
    return counts


_NONZERO_INDEX: weakref.WeakKeyDictionary[BinaryData, tuple[np.ndarray, ...]] = (
    weakref.WeakKeyDictionary()
)


def _nonzero_index(data: BinaryData) -> tuple[np.ndarray, ...]:
    """The sparse-column index of ``data``, built once per dataset object (data is frozen)."""
    index = _NONZERO_INDEX.get(data)
    if index is None:
        index = _NONZERO_INDEX[data] = kernels.nonzero_words(data.words)
    return index


def _count(workload: Workload, data: BinaryData, op: int, positive: np.ndarray) -> np.ndarray:
    _check_bits(workload, data.d)
    return kernels.count_queries(
        data.words,
        data.n,
        data.tail_mask,
        workload.offsets,
        workload.bits,
        positive,
        op,
        kernels.CHUNK_WORDS,
        8 * numba.get_num_threads(),
    )


def answer_data(workload: Workload, data: BinaryData) -> np.ndarray:
    """True answers of every query on ``data`` (float64, in workload order).

    NOT private: these are exact statistics of the sensitive data.
    """
    return answers_from_counts(workload, fold_counts(workload, data), data.n)


def answers_from_counts(workload: Workload, counts: np.ndarray, n: int) -> np.ndarray:
    """Answers from the exact :func:`fold_counts` of ``n`` records (float64, workload order).

    Counts of disjoint parts of a dataset add up exactly (integers), so a partitioned
    backend sums them and calls this once: the same floats as :func:`answer_data`.
    """
    if n == 0:
        raise DPQueryError("cannot answer queries on a dataset with no records")
    counts = np.asarray(counts)
    if counts.shape != (len(workload),):
        raise DPQueryError(f"need {len(workload)} counts, got shape {counts.shape}")
    return _from_totals(workload, counts.astype(np.float64), n)


def _distinct_records(records: Records) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and their summed weights (duplicates are common in released sets)."""
    packed = np.packbits(records.rows, axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))[:, 0]
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    assert records.weights is not None
    weights = np.bincount(inverse.ravel(), weights=records.weights, minlength=first.size)
    return records.rows[first], weights


def answer_records(workload: Workload, records: Records) -> np.ndarray:
    """Answers of every query on a weighted record set (weights normalised to sum to 1).

    Duplicate rows are merged first; then each class of equal weight is packed column-wise
    and counted with the popcount kernel, unless there are more than
    ``MAX_WEIGHT_CLASSES`` weights, when a kernel sums the weights of selected records.
    """
    _check_bits(workload, records.d)
    if records.m == 0:
        raise DPQueryError("cannot answer queries on an empty record set")
    rows, weights = _distinct_records(records)
    keep = weights > 0
    rows, weights = rows[keep], weights[keep]
    op, positive = _fold_op(workload)
    classes, which = np.unique(weights, return_inverse=True)
    if classes.size <= MAX_WEIGHT_CLASSES:
        totals = np.zeros(len(workload))
        for c, w in enumerate(classes):
            part = BinaryData(pack_columns(rows[which == c]), int((which == c).sum()))
            totals += w * _count(workload, part, op, positive)
    else:
        order = np.argsort(weights, kind="stable")  # any order works; sorted helps caching
        packed = BinaryData(pack_columns(rows[order]), rows.shape[0])
        return answer_weighted(workload, packed, weights[order])
    return _from_totals(workload, totals, float(weights.sum()))


def answer_weighted(workload: Workload, packed: BinaryData, weights: np.ndarray) -> np.ndarray:
    """Answers on the records of ``packed`` weighted by ``weights`` (normalised to sum to 1).

    For a fixed record set whose weights change (MWEM's distribution over the domain): pack
    once, answer for every new weight vector.
    """
    _check_bits(workload, packed.d)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if weights.shape != (packed.n,) or not weights.sum() > 0:
        raise DPQueryError(f"need {packed.n} non-negative weights with a positive sum")
    op, positive = _fold_op(workload)
    totals = kernels.weigh_queries(
        packed.words, weights, packed.tail_mask, workload.offsets, workload.bits, positive, op
    )
    return _from_totals(workload, totals, float(weights.sum()))


def answer(workload: Workload, target: BinaryData | Records) -> np.ndarray:
    """Answers on a dataset (:class:`BinaryData`) or a weighted record set (:class:`Records`)."""
    if isinstance(target, BinaryData):
        return answer_data(workload, target)
    if isinstance(target, Records):
        return answer_records(workload, target)
    raise DPQueryError(f"can answer on BinaryData or Records, got {type(target).__name__}")


def data_fingerprint(data: BinaryData) -> str:
    """Hex digest of a dataset's bits and size (keys the cache of true answers)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{data.n}/{data.d}/".encode())
    h.update(data.words.data)  # C-contiguous (BinaryData guarantees it)
    return h.hexdigest()


def cached_answers(workload: Workload, data: BinaryData, cache_dir: str | Path) -> np.ndarray:
    """True answers, read from ``cache_dir`` when this workload met this data before.

    The key is ``(workload.content_hash, data_fingerprint(data))``; the cache is as
    sensitive as the data, keep it with the data.
    """
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        raise DPQueryError(f"answer cache folder {cache_dir} does not exist")
    path = cache_dir / f"answers-{workload.content_hash}-{data_fingerprint(data)}.npy"
    if path.exists():
        try:
            cached = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            cached = None  # a damaged cache entry is recomputed, never trusted
        if cached is not None and cached.shape == (len(workload),):
            return cached
    answers = answer_data(workload, data)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.save(f, answers)
    return answers
