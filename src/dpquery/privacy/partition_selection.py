"""Private partition selection: which keys of an open key space may be released.

When the possible keys (the categories of a raw column) are not known in advance, a key may
only be released if enough records hold it: a key held by one record would prove that record
is in the data. Desfontaines, Voss, Gipson and Mandayam 2022 ("Differentially private
partition selection", PoPETs 2022) study this problem; the mechanism here is their noisy
threshold with Gaussian noise, as in Google's differential privacy library (Gaussian
partition selection) and Wilson et al. 2020 ("Differentially private SQL with bounded user
contribution", PoPETs 2020), with exact discrete Gaussian noise (Canonne, Kamath and Steinke
2020, CKS).

**Mechanism.** Every record contributes its one key. For each key present in the data, in a
canonical order (sorted by its text, never the data's order), ``noisy = count + N_Z(0,
sigma^2)``; the keys with ``noisy >= tau`` are released, with their noisy counts.

**Privacy under replace-one.** Let ``D, D'`` differ in one record, whose key is ``a`` in
``D`` and ``b`` in ``D'``. On the fixed key set ``U = keys(D) | keys(D')`` the same noise and
threshold are a post-processing of the discrete Gaussian on the count vector over ``U``,
whose L2 sensitivity is ``sqrt(2)`` (two counts move by 1): ``rho = 2 / (2 sigma^2) =
1 / sigma^2``-zCDP (CKS Theorem 4); call it ``M_U``. The real mechanism ``M`` run on ``D``
equals ``M_U(D)`` except that it never considers ``b`` (count 0 in ``D``), so coupling the
noise, the two differ only when ``b``'s noise reaches ``tau``: their total variation distance
is at most ``delta_tail = P(Z >= tau)`` for ``Z ~ N_Z(0, sigma^2)`` (likewise on ``D'``).
Hence for every output set ``S``:
``P[M(D) in S] <= P[M_U(D) in S] + delta_tail <= e^eps P[M_U(D') in S] + delta_conv +
delta_tail <= e^eps P[M(D') in S] + delta_conv + (1 + e^eps) delta_tail``: the run is
``(eps, delta_conv + (1 + e^eps) delta_tail)``-DP whenever its zCDP part (all mechanisms on one
pair of neighbours, composed) converts to ``(eps, delta_conv)``, and the ``delta_tail`` of
several selections add (:func:`partition_delta`).

The ledger holds zCDP and pure costs only, so :func:`select_partitions` charges it the
``rho`` and returns the threshold; the caller keeps the ``delta_tail`` aside (the domain
learner's report states it, and the command line reserves half of ``--delta`` for it).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpquery.privacy import _validate
from dpquery.privacy.discrete import discrete_gaussian_pmf
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.integer_mechanisms import (
    discrete_gaussian_mechanism,
    discrete_gaussian_sigma2,
)
from dpquery.privacy.ledger import Ledger

PARTITION_SENSITIVITY = math.sqrt(2.0)
"""The L2 sensitivity of a count vector with one contribution per record, under replace-one:
two counts move by 1 (module docstring)."""


def discrete_gaussian_tail(tau: int, sigma2: Fraction | float) -> float:
    """``P(Z >= tau)`` for ``Z ~ N_Z(0, sigma2)``, summed from the pmf normalised over ``|z|
    <= 40 sigma + 40`` (the mass left out is below ``exp(-800)``)."""
    t = _validate.integer("tau", tau, minimum=-(2**62))
    s2 = float(sigma2)
    sigma = math.sqrt(_validate.positive("sigma2", s2))
    top = math.ceil(40 * sigma + 40)
    if t > top:
        return 0.0
    z = np.arange(max(t, -top), top + 1)
    return float(min(1.0, discrete_gaussian_pmf(z, s2)[::-1].sum()))


def partition_threshold(sigma2: Fraction | float, delta_tail: float) -> int:
    """The smallest integer ``tau >= 1`` with ``P(Z >= tau) <= delta_tail``, ``Z ~ N_Z(0,
    sigma2)``: a key absent from one neighbour is released with probability at most
    ``delta_tail``."""
    d = _validate.open_unit("delta_tail", delta_tail)
    sigma = math.sqrt(_validate.positive("sigma2", float(sigma2)))
    lo, hi = 1, max(2, math.ceil(sigma * math.sqrt(2 * math.log(1 / d))) + 2)
    while discrete_gaussian_tail(hi, sigma2) > d:
        hi *= 2
    if discrete_gaussian_tail(lo, sigma2) <= d:
        return lo
    while hi - lo > 1:  # tail(lo) > d >= tail(hi)
        mid = (lo + hi) // 2
        if discrete_gaussian_tail(mid, sigma2) <= d:
            hi = mid
        else:
            lo = mid
    return hi


def partition_delta(delta_tail_total: float, epsilon: float) -> float:
    """What selections with tail probabilities summing to ``delta_tail_total`` add to the
    ``delta`` of a run that is ``epsilon``-DP otherwise: ``(1 + e^epsilon) delta_tail_total``
    (module docstring)."""
    t = _validate.nonnegative("delta_tail_total", delta_tail_total)
    e = _validate.nonnegative("epsilon", epsilon)
    return (1.0 + math.exp(e)) * t


@dataclass(frozen=True)
class Selection:
    """The released keys (in canonical order) with their noisy counts, and the public
    parameters of the selection: its noise ``sigma2``, threshold ``tau``, ``rho`` and
    ``delta_tail``."""

    released: dict[Hashable, int]
    sigma2: Fraction
    tau: int
    rho: float
    delta_tail: float


def canonical_order(keys: list[Hashable]) -> list[Hashable]:
    """``keys`` sorted by type name then text: an order that depends on the keys only."""
    return sorted(keys, key=lambda k: (type(k).__name__, str(k)))


def select_partitions(
    counts: Mapping[Hashable, int],
    *,
    rho: float,
    delta_tail: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "partition selection (discrete Gaussian)",
) -> Selection:
    """The keys of ``counts`` (key -> number of records holding it, one key per record) whose
    count plus discrete Gaussian noise reaches the threshold (module docstring). Charges
    ``ZCDP(rho)`` before it draws; ``delta_tail`` is the probability that a key absent from
    one neighbour is released, for the caller to account (:func:`partition_delta`)."""
    r = _validate.positive("rho", rho)
    sigma2 = discrete_gaussian_sigma2(r, PARTITION_SENSITIVITY)
    tau = partition_threshold(sigma2, delta_tail)
    keys = canonical_order(list(counts))
    values = np.array([counts[k] for k in keys], dtype=np.int64)
    if (values < 1).any():
        bad = keys[int(np.argmax(values < 1))]
        raise PrivacyParameterError(
            f"counts must be positive (a key with no record is not in the data); key {bad!r} "
            f"has {counts[bad]!r}"
        )
    noisy = discrete_gaussian_mechanism(
        values, rho=r, sensitivity=PARTITION_SENSITIVITY, rng=rng, ledger=ledger, name=name
    )
    released = {k: int(v) for k, v in zip(keys, noisy, strict=True) if v >= tau}
    return Selection(released, sigma2, tau, r, float(delta_tail))
