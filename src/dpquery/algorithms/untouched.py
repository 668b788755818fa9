"""Attributes no workload query touches: measured, never left to chance.

A query-release algorithm learns about the data only through its workload. An attribute that
no query reads comes out of the oracle as a free choice, and a synthetic column filled
without any measurement is wrong data, not missing data. So every release measures the
1-way marginal of each such attribute (the counts of its categories) and draws the records'
values of that attribute from the noisy marginal.

Under replace-one neighbours a record leaves one category and joins another, so one
attribute's count vector moves by ``sqrt(2)`` in L2 and by 2 in L1; ``k`` attributes measured
together move by ``sqrt(2 k)`` and ``2 k``. The discrete Gaussian mechanism with ``sigma``
on the integer counts is then ``k / sigma^2``-zCDP (Canonne, Kamath and Steinke 2020,
Theorem 4, the continuous Gaussian's cost, Bun and Steinke 2016, Proposition 1.6); the
discrete Laplace mechanism with scale ``2 k / epsilon`` is ``epsilon``-DP. Both draw with
CKS's exact samplers (:mod:`dpquery.privacy.integer_mechanisms`). Drawing from the noisy
marginals (clipped at zero and normalised) is post-processing.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Ledger
from dpquery.privacy.integer_mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
)
from dpquery.queries import Workload

MECHANISM = "untouched attributes: 1-way marginals"


@dataclass(frozen=True)
class Attribute:
    """Bits ``start:stop`` of the domain: a one-hot group, or a lone 0/1 bit (``stop =
    start + 1``, values "0" and "1")."""

    start: int
    stop: int

    @property
    def onehot(self) -> bool:
        return self.stop - self.start > 1

    @property
    def size(self) -> int:
        """Number of values (categories) of the attribute."""
        return max(self.stop - self.start, 2)


def attributes_of(d: int, onehot_groups: np.ndarray) -> list[Attribute]:
    """Every attribute of a domain of ``d`` bits: its one-hot groups and its lone bits, in
    bit order."""
    in_group = np.zeros(d, dtype=bool)
    found = []
    for start, stop in np.asarray(onehot_groups, dtype=np.int64).reshape(-1, 2):
        in_group[start:stop] = True
        found.append(Attribute(int(start), int(stop)))
    found += [Attribute(int(j), int(j) + 1) for j in np.flatnonzero(~in_group)]
    return sorted(found, key=lambda a: a.start)


def untouched_attributes(workload: Workload, onehot_groups: np.ndarray) -> list[Attribute]:
    """The attributes none of whose bits appears in any query of ``workload`` (public: the
    workload and the domain only)."""
    touched = np.zeros(workload.d, dtype=bool)
    touched[np.asarray(workload.bits, dtype=np.int64)] = True
    return [
        a for a in attributes_of(workload.d, onehot_groups) if not touched[a.start : a.stop].any()
    ]


def marginal_counts(data: BinaryData, attributes: list[Attribute]) -> np.ndarray:
    """The exact 1-way counts of ``attributes``, concatenated (private: measure before use)."""
    counts = data.column_counts().astype(np.int64)
    parts = [
        counts[a.start : a.stop]
        if a.onehot
        else np.array([data.n - counts[a.start], counts[a.start]])
        for a in attributes
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class MeasuredMarginals:
    """Noisy 1-way marginals of ``attributes``, as probability vectors (already paid for)."""

    attributes: tuple[Attribute, ...]
    probabilities: tuple[np.ndarray, ...]

    def fill(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``rows`` (m x d, 0/1) with each measured attribute redrawn, record by record, from
        its noisy marginal (post-processing)."""
        out = np.array(rows, dtype=np.uint8, copy=True)
        m = out.shape[0]
        for a, p in zip(self.attributes, self.probabilities, strict=True):
            values = rng.choice(p.size, size=m, p=p)
            if a.onehot:
                out[:, a.start : a.stop] = 0
                out[np.arange(m), a.start + values] = 1
            else:
                out[:, a.start] = values
        return out


def _probabilities(noisy: np.ndarray) -> np.ndarray:
    clipped = np.clip(noisy, 0.0, None)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(noisy.size, 1.0 / noisy.size)


def measure_marginals(
    data: BinaryData,
    attributes: list[Attribute],
    *,
    rng: np.random.Generator,
    ledger: Ledger,
    rho: float | None = None,
    epsilon: float | None = None,
) -> MeasuredMarginals:
    """Measure the 1-way marginals of ``attributes`` in one draw: Gaussian at ``rho``-zCDP, or
    Laplace at ``epsilon``-DP (module docstring for the sensitivities). The ledger is charged
    before the draw; with no attributes nothing is charged."""
    if (rho is None) == (epsilon is None):
        raise DPQueryError("measure_marginals takes exactly one of rho and epsilon")
    if not attributes:
        return MeasuredMarginals((), ())
    k = len(attributes)
    counts = marginal_counts(data, attributes)
    if rho is not None:
        # sqrt(2k) rounded up, so that sigma^2 >= 2k / (2 rho) holds in exact arithmetic
        sensitivity = math.nextafter(math.sqrt(2 * k), math.inf)
        noisy = discrete_gaussian_mechanism(
            counts, rho=rho, sensitivity=sensitivity, rng=rng, ledger=ledger, name=MECHANISM
        ).astype(np.float64)
    else:
        assert epsilon is not None
        noisy = discrete_laplace_mechanism(
            counts, epsilon=epsilon, sensitivity=2 * k, rng=rng, ledger=ledger, name=MECHANISM
        ).astype(np.float64)
    bounds = np.cumsum([0] + [a.size for a in attributes])
    probabilities = tuple(_probabilities(noisy[lo:hi]) for lo, hi in itertools.pairwise(bounds))
    return MeasuredMarginals(tuple(attributes), probabilities)
