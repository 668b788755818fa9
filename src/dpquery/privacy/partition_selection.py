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

**Privacy under add/remove.** Let ``D'`` be ``D`` with one record added, whose key is ``b``.
The argument is the same with ``U = keys(D) | keys(D')``: on ``U`` one count moves by 1, so
the count vector's L2 sensitivity is 1 and ``N_Z(0, sigma^2)`` is ``1 / (2 sigma^2)``-zCDP
(CKS Theorem 4); the real mechanism on ``D`` differs from ``M_U(D)`` only when ``b`` (absent
from ``D`` if it is new) passes ``tau``, at most ``delta_tail``. This is the setting of
Desfontaines et al. 2022 (one contribution per user, a user added or removed) and of
PipelineDP's and OpenDP's Gaussian partition selection: at the same ``rho`` the noise's
``sigma`` is ``1 / sqrt(2)`` of replace-one's, and so is the threshold's scale. The
``sensitivity`` argument of :func:`select_partitions`, :func:`held_counts` and
:func:`reselect_partitions` says which (:data:`PARTITION_SENSITIVITY`, the default, or
:data:`ADD_REMOVE_PARTITION_SENSITIVITY`).

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
ADD_REMOVE_PARTITION_SENSITIVITY = 1.0
"""The same under add/remove: one count moves by 1 (module docstring)."""


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
    sensitivity: float = PARTITION_SENSITIVITY,
) -> Selection:
    """The keys of ``counts`` (key -> number of records holding it, one key per record) whose
    count plus discrete Gaussian noise reaches the threshold (module docstring). Charges
    ``ZCDP(rho)`` before it draws; ``delta_tail`` is the probability that a key absent from
    one neighbour is released, for the caller to account (:func:`partition_delta`).
    ``sensitivity``: the count vector's L2 sensitivity, :data:`PARTITION_SENSITIVITY` under
    replace-one, :data:`ADD_REMOVE_PARTITION_SENSITIVITY` under add/remove; the noise and the
    threshold follow it."""
    selection, _ = held_counts(
        counts, rho=rho, delta_tail=delta_tail, rng=rng, ledger=ledger, name=name,
        sensitivity=sensitivity,
    )  # fmt: skip
    return selection


# --- a second selection over what the first did not release ------------------------------------
def held_counts(
    counts: Mapping[Hashable, int],
    *,
    rho: float,
    delta_tail: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "partition selection (discrete Gaussian)",
    sensitivity: float = PARTITION_SENSITIVITY,
) -> tuple[Selection, dict[Hashable, int]]:
    """:func:`select_partitions`, and the noisy counts of the keys it did not release, held
    for :func:`reselect_partitions` and never published (publishing them would release keys
    that one record alone may hold). The same draws, in the same order, as
    :func:`select_partitions` (at the same ``sensitivity``)."""
    r = _validate.positive("rho", rho)
    l2 = _validate.positive("sensitivity", sensitivity)
    sigma2 = discrete_gaussian_sigma2(r, l2)
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
        values, rho=r, sensitivity=l2, rng=rng, ledger=ledger, name=name
    )
    released = {k: int(v) for k, v in zip(keys, noisy, strict=True) if v >= tau}
    held = {k: int(v) for k, v in zip(keys, noisy, strict=True) if v < tau}
    return Selection(released, sigma2, tau, r, float(delta_tail)), held


Real = float | Fraction
"""A variance as a float or, from the discrete Gaussian's calibration, exactly."""


def combined_weights(sigma2_first: Real, sigma2_second: Real) -> tuple[float, float]:
    """The inverse-variance weights ``(a1, a2)``, ``a1 + a2 = 1``, of two independent noisy
    counts of one key: ``a1 Y1 + a2 Y2`` has the smallest variance, ``1 / (1 / s1^2 + 1 /
    s2^2)``."""
    w1, w2 = 1.0 / float(sigma2_first), 1.0 / float(sigma2_second)
    return w1 / (w1 + w2), w2 / (w1 + w2)


def combined_tail(t: float, sigma2_first: Real, sigma2_second: Real) -> float:
    """``P(a1 Z1 + a2 Z2 >= t)`` for independent ``Z_i ~ N_Z(0, s_i^2)`` and the weights of
    :func:`combined_weights`, summed exactly over ``Z1`` (each pmf normalised over ``|z| <=
    40 sigma + 40``, as :func:`discrete_gaussian_tail`)."""
    a1, a2 = combined_weights(sigma2_first, sigma2_second)
    s1, s2 = float(sigma2_first), float(sigma2_second)
    top1, top2 = math.ceil(40 * math.sqrt(s1) + 40), math.ceil(40 * math.sqrt(s2) + 40)
    z1 = np.arange(-top1, top1 + 1)
    z2 = np.arange(-top2, top2 + 1)
    p1 = discrete_gaussian_pmf(z1, s1)
    tail2 = np.cumsum(discrete_gaussian_pmf(z2, s2)[::-1])[::-1]  # P(Z2 >= z2[i])
    need = np.ceil((t - a1 * z1) / a2 - 1e-9).astype(np.int64)  # Z2 >= need
    inside = np.clip(need + top2, 0, z2.size - 1)
    t2 = np.where(need > top2, 0.0, np.where(need < -top2, 1.0, tail2[inside]))
    return float(min(1.0, (p1 * t2).sum()))


def combined_threshold(sigma2_first: Real, sigma2_second: Real, delta_tail: float) -> int:
    """The smallest integer ``tau >= 1`` with ``P(a1 Z1 + a2 Z2 >= tau) <= delta_tail``
    (:func:`combined_tail`): a key absent from one neighbour passes a second selection's
    combined count with probability at most ``delta_tail``."""
    d = _validate.open_unit("delta_tail", delta_tail)
    a1, a2 = combined_weights(sigma2_first, sigma2_second)
    s = math.sqrt(a1 * a1 * float(sigma2_first) + a2 * a2 * float(sigma2_second))
    lo, hi = 1, max(2, math.ceil(s * math.sqrt(2 * math.log(1 / d))) + 2)
    while combined_tail(hi, sigma2_first, sigma2_second) > d:
        hi *= 2
    if combined_tail(lo, sigma2_first, sigma2_second) <= d:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if combined_tail(mid, sigma2_first, sigma2_second) <= d:
            hi = mid
        else:
            lo = mid
    return hi


def reselect_partitions(
    counts: Mapping[Hashable, int],
    held: Mapping[Hashable, int],
    first: Selection,
    *,
    rho: float,
    delta_tail: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "second partition selection (discrete Gaussian)",
    sensitivity: float = PARTITION_SENSITIVITY,
) -> Selection:
    """A second selection over the keys ``first`` did not release (``held``: their first
    noisy counts, :func:`held_counts`): each gets a fresh ``count + N_Z(0, s2^2)`` at
    ``rho`` (charged before the draw), combined with its first noisy count by inverse
    variance (:func:`combined_weights`), and is released when the combination reaches
    :func:`combined_threshold` at ``delta_tail``; released with the combination, rounded.

    Privacy (the module docstring's argument, twice): on the key set ``U`` of both
    neighbours the two rounds are a post-processing of the discrete Gaussian on the count
    vector at ``first.rho`` and at ``rho``, ``first.rho + rho``-zCDP by composition (the
    second's keys and ``rho`` chosen from the first's output: adaptive composition); the real
    mechanisms differ from it only when the key absent from one neighbour passes the first
    threshold (probability at most ``first.delta_tail``) or the second (at most
    ``delta_tail``), so the two rounds' tails add. ``sensitivity`` as in
    :func:`select_partitions` (the first's relation: both rounds hold under it)."""
    r = _validate.positive("rho", rho)
    l2 = _validate.positive("sensitivity", sensitivity)
    sigma2 = discrete_gaussian_sigma2(r, l2)
    keys = canonical_order([k for k in held if k not in first.released])
    if [k for k in keys if counts.get(k, 0) < 1]:
        bad = next(k for k in keys if counts.get(k, 0) < 1)
        raise PrivacyParameterError(f"held key {bad!r} is not among the counts' keys")
    tau = combined_threshold(first.sigma2, sigma2, delta_tail)
    a1, a2 = combined_weights(first.sigma2, sigma2)
    values = np.array([counts[k] for k in keys], dtype=np.int64)
    noisy = discrete_gaussian_mechanism(
        values, rho=r, sensitivity=l2, rng=rng, ledger=ledger, name=name
    )
    released: dict[Hashable, int] = {}
    for k, y in zip(keys, noisy, strict=True):
        w = a1 * held[k] + a2 * int(y)
        if w >= tau:
            released[k] = round(w)
    combined = Fraction(1) / (1 / Fraction(first.sigma2) + 1 / Fraction(sigma2))
    return Selection(released, combined, tau, r, float(delta_tail))
