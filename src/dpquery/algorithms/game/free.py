"""Free attributes: bits no sampled query constrains (DualQuery, Section 6, "Setting free
attributes", and footnote 6).

A best response leaves such bits undetermined; a solver's arbitrary first value would bias
the synthetic data, so a policy sets them:

* ``"zeros"``: free bits 0 (the paper's choice for sparse real data);
* ``"uniform"``: free bits 0 or 1 with probability 1/2 (its choice for synthetic data);
* ``"private-density"``: footnote 6: each bit's frequency is estimated once, privately (the
  column counts plus exact discrete Laplace noise, charged to the ledger), and free bits are
  drawn from it.

In a one-hot group whose set bit is free, the one moves among the group's free bits: to a
uniformly random one under ``"zeros"`` and ``"uniform"`` (there is no "all zeros" record in a
group), in proportion to the noisy frequencies under ``"private-density"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Ledger
from dpquery.privacy.integer_mechanisms import discrete_laplace_mechanism

FreePolicy = Literal["zeros", "uniform", "private-density"]
POLICIES: tuple[FreePolicy, ...] = ("zeros", "uniform", "private-density")
DENSITY_MECHANISM = "free-attribute density (discrete Laplace)"


def check_policy(policy: str) -> FreePolicy:
    if policy not in POLICIES:
        raise DPQueryError(f"free-attribute policy must be one of {POLICIES}, got {policy!r}")
    return policy


def density_count_sensitivity(data: BinaryData) -> int:
    """L1 sensitivity of the vector of column counts under one-record replacement: a record
    moves at most 2 bits of each one-hot group and 1 of each free bit, each by 1. That holds
    only for one-hot data, so data whose groups were not verified is refused."""
    if data.onehot_groups.size and not getattr(data, "onehot_verified", False):
        raise DPQueryError(
            "the private density's sensitivity assumes at most one set bit per one-hot group, "
            f"which was not verified for this {type(data).__name__}"
        )
    in_groups = int((data.onehot_groups[:, 1] - data.onehot_groups[:, 0]).sum())
    return 2 * len(data.onehot_groups) + data.d - in_groups


def density_sensitivity(data: BinaryData) -> float:
    """The same for the bit frequencies (counts / n)."""
    return density_count_sensitivity(data) / data.n


def private_density(
    data: BinaryData, *, epsilon: float, rng: np.random.Generator, ledger: Ledger
) -> np.ndarray:
    """Noisy bit frequencies, clipped to [0, 1]: the column counts plus exact discrete Laplace
    noise (``epsilon``-DP, the geometric mechanism), divided by ``n``."""
    noisy = discrete_laplace_mechanism(
        data.column_counts(),
        epsilon=epsilon,
        sensitivity=density_count_sensitivity(data),
        rng=rng,
        ledger=ledger,
        name=DENSITY_MECHANISM,
    )
    return np.clip(noisy / data.n, 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class FreeAttributes:
    """A policy bound to the domain's groups (and, for ``private-density``, the noisy
    frequencies, already paid for)."""

    policy: FreePolicy
    onehot_groups: np.ndarray
    density: np.ndarray | None = None

    def apply(self, record: np.ndarray, free: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``record`` with its free bits set by the policy (groups stay one-hot)."""
        x = record.copy()
        in_group = np.zeros(x.size, dtype=bool)
        for start, stop in self.onehot_groups:
            in_group[start:stop] = True
            movable = np.flatnonzero(free[start:stop])
            current = int(np.argmax(x[start:stop]))
            if movable.size < 2 or not free[start + current]:
                continue
            if self.density is None:
                pick = movable[rng.integers(movable.size)]
            else:
                p = self.density[start + movable] + 1e-12  # an all-zero noisy group stays valid
                pick = movable[rng.choice(movable.size, p=p / p.sum())]
            x[start + current] = 0
            x[start + pick] = 1
        bits = np.flatnonzero(free & ~in_group)
        if self.policy == "zeros":
            x[bits] = 0
        elif self.policy == "uniform":
            x[bits] = rng.random(bits.size) < 0.5
        else:
            assert self.density is not None
            x[bits] = rng.random(bits.size) < self.density[bits]
        return x
