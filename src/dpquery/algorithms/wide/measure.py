"""The three measurements of the sparse release, each one discrete Gaussian draw charged to
the ledger before it is drawn (Canonne, Kamath and Steinke 2020, Theorem 4: an integer vector
of L2 sensitivity ``Delta`` plus ``N_Z(0, sigma^2)`` noise in every coordinate is
``Delta^2 / (2 sigma^2)``-zCDP; zCDP composes by adding ``rho``, Bun and Steinke 2016,
Lemma 2.3).

1. every item's count over the records cut to ``s`` items (sensitivity ``sqrt(2 s)``);
2. the joint histogram of (head items, tail items) per cut record, ``(s + 1)^2`` cells
   (sensitivity ``sqrt 2``), with the head chosen from measurement 1's noisy counts;
3. every pair count among the ``K`` head items over the records cut again to ``s2`` head
   items (sensitivity ``sqrt(s2 (s2 - 1))``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dpquery.algorithms.wide.bound import (
    HISTOGRAM_SENSITIVITY,
    count_sensitivity,
    keep_entries,
    pair_sensitivity,
)
from dpquery.privacy import Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism, discrete_gaussian_sigma2

ITEMS = "sparse item counts (discrete Gaussian)"
SIZES = "sparse size histogram (discrete Gaussian)"
PAIRS = "sparse head pair counts (discrete Gaussian)"


def noise_sigma(rho: float, sensitivity: float) -> float:
    """The standard deviation parameter the mechanism will use (public)."""
    return float(discrete_gaussian_sigma2(rho, sensitivity)) ** 0.5


def item_counts(
    cut: sp.csr_array, s: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy counts of every item over the ``s``-bounded records ``cut``."""
    counts = np.bincount(cut.indices, minlength=cut.shape[1]).astype(np.int64)
    return discrete_gaussian_mechanism(
        counts, rho=rho, sensitivity=count_sensitivity(s), rng=rng, ledger=ledger, name=ITEMS
    )


def head_mask(d: int, head: np.ndarray) -> np.ndarray:
    mask = np.zeros(d, dtype=bool)
    mask[head] = True
    return mask


def size_histogram(
    cut: sp.csr_array, head: np.ndarray, s: int, rho: float, rng: np.random.Generator,
    ledger: Ledger,
) -> np.ndarray:  # fmt: skip
    """Noisy ``(s + 1, s + 1)`` histogram: cell ``(a, b)`` counts the records with ``a`` head
    and ``b`` tail items."""
    in_head = head_mask(cut.shape[1], head)[cut.indices].astype(np.int64)
    rows = np.repeat(np.arange(cut.shape[0]), np.diff(cut.indptr))
    a = np.bincount(rows, weights=in_head, minlength=cut.shape[0]).astype(np.int64)
    b = np.diff(cut.indptr) - a
    cells = np.bincount(a * (s + 1) + b, minlength=(s + 1) ** 2).astype(np.int64)
    noisy = discrete_gaussian_mechanism(
        cells, rho=rho, sensitivity=HISTOGRAM_SENSITIVITY, rng=rng, ledger=ledger, name=SIZES
    )
    return noisy.reshape(s + 1, s + 1)


def pair_counts(
    cut: sp.csr_array, rank: np.ndarray, head: np.ndarray, s2: int, rho: float,
    rng: np.random.Generator, ledger: Ledger,
) -> np.ndarray:  # fmt: skip
    """Noisy counts of the pairs ``j < k`` of head items (positions in ``head``), over each
    record's ``s2`` head items of smallest hash; ``rank`` is each stored entry's rank by hash
    within its record (:func:`~dpquery.algorithms.wide.bound.hash_order`). Returns the
    symmetric ``K x K`` matrix of noisy counts (diagonal 0)."""
    K = head.size
    position = np.full(cut.shape[1], -1, dtype=np.int64)
    position[head] = np.arange(K)
    in_head = position[cut.indices] >= 0
    # The s2 head items of smallest hash: among head entries, the first s2 in hash order.
    rows = np.repeat(np.arange(cut.shape[0]), np.diff(cut.indptr))
    order = np.lexsort((rank, ~in_head, rows))
    head_rank = np.empty(cut.nnz, dtype=np.int64)
    starts = np.repeat(cut.indptr[:-1], np.diff(cut.indptr))
    head_rank[order] = np.arange(cut.nnz) - starts
    kept = keep_entries(cut, in_head & (head_rank < s2))
    X = sp.csr_array(
        (np.ones(kept.nnz), position[kept.indices], kept.indptr), shape=(cut.shape[0], K)
    )
    full = (X.T @ X).toarray().astype(np.int64)
    j, k = np.triu_indices(K, 1)
    noisy = discrete_gaussian_mechanism(
        full[j, k], rho=rho, sensitivity=pair_sensitivity(s2), rng=rng, ledger=ledger, name=PAIRS
    )
    out = np.zeros((K, K), dtype=np.int64)
    out[j, k] = noisy
    out[k, j] = noisy
    return out
