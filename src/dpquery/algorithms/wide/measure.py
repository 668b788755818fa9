"""The three measurements of the sparse release, each one discrete Gaussian draw charged to
the ledger before it is drawn (Canonne, Kamath and Steinke 2020, Theorem 4: an integer vector
of L2 sensitivity ``Delta`` plus ``N_Z(0, sigma^2)`` noise in every coordinate is
``Delta^2 / (2 sigma^2)``-zCDP; zCDP composes by adding ``rho``, Bun and Steinke 2016,
Lemma 2.3).

1. every item's count over the records cut to ``s`` items (sensitivity ``sqrt(2 s)``);
2. the joint histogram of (head items, tail items) per cut record, ``(s + 1)^2`` cells
   (sensitivity ``sqrt 2``), with the head chosen from measurement 1's noisy counts;
3. every pair count among the ``K`` head items over the records cut again to ``s2`` head
   items (sensitivity ``sqrt(s2 (s2 - 1))``);
3b. under add/remove where the top-up is planned (``core.top_up_pays``), the histogram of the
   whole records' lengths over public bins (no cut; sensitivity 1, :func:`record_lengths`).

In the head mode (the plan's choice where the noise of the cut item counts swamps them,
``core.swamped``) three others replace them, none with a cut:

4. the head itself: ``k`` items picked one at a time by the exponential mechanism on the
   exact item counts (each count moves by at most 1 when one record is replaced, whatever
   its length: sensitivity 1; McSherry and Talwar 2007), each pick ``epsilon_0``-DP and
   ``epsilon_0``-bounded range, so ``epsilon_0^2 / 8``-zCDP (Durfee and Rogers 2019; Cesar
   and Rogers 2021), ``k epsilon_0^2 / 8`` for the ``k`` picks (adaptive composition); under
   add/remove the counts move one way and each pick weighs ``exp(epsilon_0 c)``, the same
   bounded range (:func:`pick_head`);
5. the ``k`` picked items' exact counts (each moves by at most 1: sensitivity ``sqrt(k)``);
6. the histogram of the number of picked items per record, ``k + 1`` cells (sensitivity
   ``sqrt 2``);
7. under add/remove, the number of unpicked items the records hold, each record's cut at a
   public ``S`` (sensitivity ``S``; :func:`tail_total`).

Each takes the exact counts of :mod:`dpquery.algorithms.wide.counts` (made in this process or
on the workers of a partitioned dataset) and adds the noise.

The sensitivities above are replace-one's (``n`` public). When one record is added or removed
(``neighbours="add-remove"``, ``n`` private) measurements 1, 2, 3 and 6 have sensitivities
``sqrt(s)``, 1, ``sqrt(C(s2, 2))`` and 1 (:mod:`dpquery.algorithms.wide.bound`); 4, 5 and
the bound's quantile keep 1, ``sqrt(k)`` and 1. ``n`` itself is then measured first
(:func:`record_count`, sensitivity 1), and every rule that reads ``n`` reads that noisy count.
"""

from __future__ import annotations

import math

import numpy as np

from dpquery.algorithms.wide.bound import (
    count_sensitivity,
    head_sensitivity,
    histogram_sensitivity,
    pair_sensitivity,
)
from dpquery.privacy import Ledger
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism, discrete_gaussian_sigma2
from dpquery.privacy.mechanisms import exponential_mechanism, gaussian_mechanism, gaussian_sigma
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

ITEMS = "sparse item counts (discrete Gaussian)"
SIZES = "sparse size histogram (discrete Gaussian)"
PAIRS = "sparse head pair counts (discrete Gaussian)"
BOUND = "sparse bound: record lengths' quantile (exponential mechanism)"
PICKS = "sparse head picks (exponential mechanism)"
HEAD_COUNTS = "sparse head counts (discrete Gaussian)"
HEAD_SIZES = "sparse head sizes (discrete Gaussian)"
HEAD_TAIL = "sparse head mode's tail total (discrete Gaussian)"
HEAD_PAIRS = "sparse head mode's pair counts (Gaussian)"
RECORDS = "sparse record count (discrete Gaussian)"
LENGTHS = "sparse record lengths (discrete Gaussian)"
PROBE = "sparse probe: the (k+1)-th largest item count (discrete Gaussian)"


def noise_sigma(rho: float, sensitivity: float) -> float:
    """The standard deviation parameter the mechanism will use (public)."""
    return float(discrete_gaussian_sigma2(rho, sensitivity)) ** 0.5


def record_count(n: int, rho: float, rng: np.random.Generator, ledger: Ledger) -> int:
    """The noisy number of records under add/remove: adding or removing one record moves
    ``n`` by 1 (sensitivity 1), ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4).
    At least 1, so that every rule that divides by it is defined (post-processing)."""
    [noisy] = discrete_gaussian_mechanism(
        np.array([n]), rho=rho, sensitivity=1.0, rng=rng, ledger=ledger, name=RECORDS
    )
    return max(int(noisy), 1)


def order_count(
    counts: np.ndarray, rank: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> int:
    """The ``rank``-th largest of the exact whole item ``counts`` (0 past ``d``), noisy. Adding
    or removing one record moves every count by at most 1, so every order statistic of the
    counts by at most 1 (sensitivity 1, whatever the records' lengths): ``rho``-zCDP."""
    ordered = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    exact = int(ordered[rank - 1]) if 1 <= rank <= ordered.size else 0
    [noisy] = discrete_gaussian_mechanism(
        np.array([exact]), rho=rho, sensitivity=1.0, rng=rng, ledger=ledger, name=PROBE
    )
    return int(noisy)


def item_counts(
    counts: np.ndarray,
    s: int,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """Noisy counts of every item, from the exact ``counts`` over the ``s``-bounded records
    (:class:`~dpquery.algorithms.wide.counts.ItemCounts`)."""
    sensitivity = count_sensitivity(s, neighbours)
    return discrete_gaussian_mechanism(
        counts, rho=rho, sensitivity=sensitivity, rng=rng, ledger=ledger, name=ITEMS
    )


def size_histogram(
    cells: np.ndarray,
    s: int,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """Noisy ``(s + 1, s + 1)`` histogram: cell ``(a, b)`` counts the records with ``a`` head
    and ``b`` tail items (exact ``cells`` from
    :class:`~dpquery.algorithms.wide.counts.HeadCounts`)."""
    return histogram(cells, rho, rng, ledger, neighbours, SIZES).reshape(s + 1, s + 1)


def histogram(
    cells: np.ndarray, rho: float, rng: np.random.Generator, ledger: Ledger, neighbours: str,
    name: str,
) -> np.ndarray:  # fmt: skip
    """Noisy cells where each record is in one cell: replacing it moves two cells by 1
    (sensitivity ``sqrt 2``), adding or removing it one (sensitivity 1); ``rho``-zCDP
    (Canonne, Kamath and Steinke 2020, Theorem 4), charged as ``name``."""
    sensitivity = histogram_sensitivity(neighbours)
    return discrete_gaussian_mechanism(
        cells, rho=rho, sensitivity=sensitivity, rng=rng, ledger=ledger, name=name
    )


def pair_counts(
    cells: np.ndarray,
    K: int,
    s2: int,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """Noisy counts of the pairs ``j < k`` of the ``K`` head items (positions in the head),
    from the exact ``cells`` over each record's ``s2`` head items of smallest hash
    (:class:`~dpquery.algorithms.wide.counts.HeadCounts`, ``np.triu_indices`` order).
    Returns the symmetric ``K x K`` matrix of noisy counts (diagonal 0)."""
    j, k = np.triu_indices(K, 1)
    sensitivity = pair_sensitivity(s2, neighbours)
    noisy = discrete_gaussian_mechanism(
        cells, rho=rho, sensitivity=sensitivity, rng=rng, ledger=ledger, name=PAIRS
    )
    out = np.zeros((K, K), dtype=np.int64)
    out[j, k] = noisy
    out[k, j] = noisy
    return out


def record_lengths(
    cells: np.ndarray,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """Noisy histogram of the whole records' lengths (no cut) over public bins
    (``topup.length_edges``; :func:`histogram`)."""
    return histogram(cells, rho, rng, ledger, neighbours, LENGTHS)


def pick_epsilon(rho: float, k: int) -> float:
    """The parameter ``epsilon_0`` of each of ``k`` exponential-mechanism picks spending
    ``rho`` in all: ``k epsilon_0^2 / 8 = rho`` (Cesar and Rogers 2021, an
    ``epsilon_0``-bounded-range mechanism is ``epsilon_0^2 / 8``-zCDP), rounded down so that
    the picks never exceed ``rho`` by a rounding."""
    return (8 * rho / k) ** 0.5 * (1 - 1e-12)


def pick_head(
    counts: np.ndarray,
    k: int,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """``k`` distinct items, picked one at a time by the exponential mechanism with utility
    the exact item count (sensitivity 1: replacing, adding or removing one record moves each
    count by at most 1) among the items not yet picked (peeling; Durfee and Rogers 2019).
    Under add/remove every count moves the same way (adding a record raises each count by 0
    or 1, removing it lowers each by 0 or 1): monotone utilities, so each pick weighs
    ``exp(epsilon_0 c_j)`` instead of ``exp(epsilon_0 c_j / 2)`` for the same
    ``epsilon_0``-bounded range (``exponential_mechanism(monotone=True)``): the picks see the
    counts through half the noise. Each pick is charged before its draw. Returns the picked
    item ids, sorted."""
    counts = np.asarray(counts, dtype=np.float64)
    left = np.arange(counts.size)
    eps0 = pick_epsilon(rho, k)
    monotone = neighbours == ADD_REMOVE
    picked: list[int] = []
    for _ in range(k):
        [i] = exponential_mechanism(counts[left], epsilon=eps0, sensitivity=1.0, rng=rng,
                                    ledger=ledger, name=PICKS, monotone=monotone)  # fmt: skip
        picked.append(int(left[i]))
        left = np.delete(left, i)
    return np.sort(np.asarray(picked, dtype=np.int64))


def head_counts(
    counts: np.ndarray, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy exact counts of the ``k`` picked items (no cut: replacing one record moves each
    by at most 1, an L2 change of at most ``sqrt(k)``)."""
    return discrete_gaussian_mechanism(
        counts,
        rho=rho,
        sensitivity=head_sensitivity(len(counts)),
        rng=rng,
        ledger=ledger,
        name=HEAD_COUNTS,
    )


def head_sizes(
    cells: np.ndarray,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    neighbours: str = REPLACE_ONE,
) -> np.ndarray:
    """Noisy histogram of the number of picked items per record (``k + 1`` cells;
    :func:`histogram`)."""
    return histogram(cells, rho, rng, ledger, neighbours, HEAD_SIZES)


def tail_total(
    total: np.ndarray, bound: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> float:
    """The noisy number of unpicked items the records hold, each record's cut at ``bound``
    (``sum_x min(|x| - a(x), bound)``, :class:`~dpquery.algorithms.wide.counts.PickedSizes`):
    adding, removing or replacing one record moves it by at most ``bound`` (sensitivity
    ``bound``), ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4)."""
    [noisy] = discrete_gaussian_mechanism(
        np.asarray(total, dtype=np.int64).reshape(1), rho=rho, sensitivity=float(bound),
        rng=rng, ledger=ledger, name=HEAD_TAIL,
    )  # fmt: skip
    return float(noisy)


def head_pair_weights(a: np.ndarray, bound: int) -> np.ndarray:
    """The weight of each pair of a record of ``a`` picks in :func:`head_pairs`' counts:
    with ``bound`` ``b > 0`` the chance the pair survives the cut to ``b`` picks
    (``min(1, b (b - 1) / (a (a - 1)))``); with ``bound`` 0, ``1 / sqrt(C(a, 2))``, so that
    each record's pair vector has L2 norm 1 (0 below 2 picks)."""
    a = np.asarray(a, dtype=np.float64)
    if bound > 0:
        return np.where(a <= bound, 1.0, bound * (bound - 1) / np.maximum(a * (a - 1), 1.0))
    return np.where(a >= 2, 1.0 / np.sqrt(np.maximum(a * (a - 1) / 2, 1.0)), 0.0)


def head_pairs_sigma(rho: float, bound: int) -> float:
    """The noise standard deviation of :func:`head_pairs` (public)."""
    if bound > 0:
        return noise_sigma(rho, pair_sensitivity(bound, ADD_REMOVE))
    return gaussian_sigma(rho, 1.0)


def head_pairs(
    cells: np.ndarray, k: int, bound: int, rho: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy counts of the pairs ``j < k`` of the ``k`` picked items (``k x k``, symmetric,
    diagonal 0), ``rho``-zCDP under add/remove, from the exact ``cells`` of
    :class:`~dpquery.algorithms.wide.counts.PickedPairs`:

    * ``bound`` ``b > 0``: over each record's ``b`` picks of smallest keyed hash; adding or
      removing one record moves at most ``C(b, 2)`` of them by 1 (sensitivity
      ``sqrt(C(b, 2))``), the discrete Gaussian (Canonne, Kamath and Steinke 2020,
      Theorem 4);
    * ``bound`` 0: each record's pairs weighted ``1 / sqrt(C(a, 2))`` (``a`` its number of
      picks, :func:`head_pair_weights`): one record's pair vector has L2 norm 1 however many
      picks it holds (sensitivity 1), the Gaussian mechanism (Bun and Steinke 2016,
      Proposition 1.6). Per pair this has at least the signal-to-noise of any cut ``b``
      (Cauchy-Schwarz), and reads every record's pairs."""
    j, i = np.triu_indices(k, 1)
    if bound > 0:
        noisy = discrete_gaussian_mechanism(
            cells, rho=rho, sensitivity=pair_sensitivity(bound, ADD_REMOVE), rng=rng,
            ledger=ledger, name=HEAD_PAIRS,
        ).astype(np.float64)  # fmt: skip
    else:
        by_size = np.asarray(cells, dtype=np.float64).reshape(max(k - 1, 0), j.size)
        w = head_pair_weights(np.arange(2, k + 1), 0)
        noisy = gaussian_mechanism(w @ by_size, rho=rho, sensitivity=1.0, rng=rng,
                                   ledger=ledger, name=HEAD_PAIRS)  # fmt: skip
    out = np.zeros((k, k))
    out[j, i] = noisy
    out[i, j] = noisy
    return out


def bound_epsilon(rho: float) -> float:
    """The exponential mechanism's ``epsilon`` spending ``rho``: ``epsilon^2 / 8 = rho``
    (bounded range, Cesar and Rogers 2021), rounded down."""
    return pick_epsilon(rho, 1)


def bound_distance(below: np.ndarray, rank: float) -> np.ndarray:
    """For each grid point ``g``, how many records must change for the ``rank``-th shortest
    record's length to lie in ``(g', g]`` (``g'`` the point before, ``below = 0`` before the
    first): ``max(0, rank - below_g, below_g' - rank + 1)``."""
    before = np.concatenate([[0.0], below[:-1]])
    return np.maximum(0.0, np.maximum(rank - below, before - rank + 1))


def pick_bound(
    below: np.ndarray,
    grid: np.ndarray,
    quantile: float,
    n: int,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
) -> int:
    """The contribution bound ``s`` from the public ``grid``: the exponential mechanism with
    utility ``-max(0, r - below_g, below_g' - r + 1)``, ``r = ceil(quantile n)``
    (``below_g`` the exact number of records of at most ``g`` items,
    :class:`~dpquery.algorithms.wide.counts.LengthCounts`; ``g'`` the grid point before
    ``g``, ``below_g' = 0`` for the first): how many records must change for the ``r``-th
    shortest length to lie in ``(g', g]`` (0 for the interval that holds it,
    :func:`bound_distance`). Replacing, adding or removing one record moves each ``below_g``
    by at most 1, and ``r`` is fixed (``n`` public, or under add/remove the noisy count drawn
    before), so each term of the max, and the max, moves by at most 1: the utility's
    sensitivity is 1 (the
    quantile mechanism of Smith 2011, on a grid as OpenDP's). Unlike ``-|below_g - quantile
    n|``, it does not tie every ``g`` past the longest record: a bound past the quantile's
    interval is as far as the records between. Charged before the draw."""
    rank = math.ceil(quantile * n - 1e-9)  # the quantile's rank (n public or noisy)
    utility = -bound_distance(np.asarray(below, dtype=np.float64), rank)
    [i] = exponential_mechanism(utility, epsilon=bound_epsilon(rho), sensitivity=1.0, rng=rng,
                                ledger=ledger, name=BOUND)  # fmt: skip
    return int(grid[i])
