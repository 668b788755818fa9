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

Each takes the exact counts of :mod:`dpquery.algorithms.wide.counts` (made in this process or
on the workers of a partitioned dataset) and adds the noise.
"""

from __future__ import annotations

import numpy as np

from dpquery.algorithms.wide.bound import (
    HISTOGRAM_SENSITIVITY,
    count_sensitivity,
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
    counts: np.ndarray, s: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy counts of every item, from the exact ``counts`` over the ``s``-bounded records
    (:class:`~dpquery.algorithms.wide.counts.ItemCounts`)."""
    return discrete_gaussian_mechanism(
        counts, rho=rho, sensitivity=count_sensitivity(s), rng=rng, ledger=ledger, name=ITEMS
    )


def size_histogram(
    cells: np.ndarray, s: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy ``(s + 1, s + 1)`` histogram: cell ``(a, b)`` counts the records with ``a`` head
    and ``b`` tail items (exact ``cells`` from
    :class:`~dpquery.algorithms.wide.counts.HeadCounts`)."""
    noisy = discrete_gaussian_mechanism(
        cells, rho=rho, sensitivity=HISTOGRAM_SENSITIVITY, rng=rng, ledger=ledger, name=SIZES
    )
    return noisy.reshape(s + 1, s + 1)


def pair_counts(
    cells: np.ndarray, K: int, s2: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy counts of the pairs ``j < k`` of the ``K`` head items (positions in the head),
    from the exact ``cells`` over each record's ``s2`` head items of smallest hash
    (:class:`~dpquery.algorithms.wide.counts.HeadCounts`, ``np.triu_indices`` order).
    Returns the symmetric ``K x K`` matrix of noisy counts (diagonal 0)."""
    j, k = np.triu_indices(K, 1)
    noisy = discrete_gaussian_mechanism(
        cells, rho=rho, sensitivity=pair_sensitivity(s2), rng=rng, ledger=ledger, name=PAIRS
    )
    out = np.zeros((K, K), dtype=np.int64)
    out[j, k] = noisy
    out[k, j] = noisy
    return out
