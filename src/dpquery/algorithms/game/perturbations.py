"""How a follow-the-perturbed-leader player perturbs its oracle problem: FEM's exponential
noise on every bit (Algorithm 2) and sepFEM's Laplace weights on a separator set (Algorithm 3).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse
from dpquery.queries import Workload


class Perturbation(Protocol):
    """How a follow-the-perturbed-leader player perturbs its oracle problem."""

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        """``s`` perturbation vectors, one per row."""
        ...

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        """The leader's problem with the perturbation ``sigma`` added to its objective."""
        ...


@dataclass(frozen=True)
class ExponentialPerturbation:
    """FEM (Algorithm 2): ``- <x, sigma>`` with ``sigma ~ Exp(eta)^d``; ``eta`` is the scale
    (mean), as ``numpy.random.exponential(eta)`` in the authors' implementation."""

    eta: float

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        return rng.exponential(self.eta, size=(s, d))

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        return replace(leader, linear=-sigma)


@dataclass(frozen=True)
class SeparatorPerturbation:
    """sepFEM (Algorithm 3): ``sum_j sigma_j q~_j(x)`` with ``sigma ~ Lap(eta)^M`` over a
    separator set ``sep(Q) = {q~_1, ..., q~_M}`` (Definition 4.1: any two distinct records are
    told apart by some ``q~_j``).

    ``separator=None`` is the set of the ``d`` single-bit queries ``q~_j(x) = x_j``: two
    distinct records of ``{0,1}^d`` differ in some bit ``j``, and ``x_j`` then takes different
    values on them, so the set separates every class of queries over the bits (conjunctions,
    disjunctions, parities). The perturbation is then exactly the linear term ``<sigma, x>``.
    Any other separator set is a :class:`~dpquery.queries.Workload` whose queries enter the
    oracle problem as clauses of weight ``|sigma_j|``: a negative weight is a positive weight
    on the negated query up to a constant (``-w q = w (1 - q) - w`` for a conjunction,
    ``-w p = w (-p)`` for a parity), which leaves the argmax unchanged.
    """

    eta: float
    separator: Workload | None = None

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        M = d if self.separator is None else len(self.separator)
        return rng.laplace(0.0, self.eta, size=(s, M))

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        if self.separator is None:
            return replace(leader, linear=sigma)
        return with_weighted_queries(leader, self.separator, sigma)


def with_weighted_queries(
    problem: BestResponse, queries: Workload, weights: np.ndarray
) -> BestResponse:
    """``problem`` with ``sum_j weights_j q_j(x)`` added to its objective (up to a constant):
    query ``j`` becomes a clause of weight ``|weights_j|``, negated when ``weights_j < 0``;
    zero weights are dropped."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(queries),):
        raise DPQueryError(f"need one weight per query ({len(queries)}), got {weights.shape}")
    keep = np.flatnonzero(weights != 0)
    if keep.size == 0:
        return problem
    closed = np.where(weights[keep] > 0, keep, keep + len(queries))
    extra = BestResponse.from_workload(queries, closed, onehot_groups=problem.onehot_groups)
    # from_workload orders clauses by closed index; carry each weight along with its index.
    extra_w = np.abs(weights[keep])[np.argsort(closed, kind="stable")]
    return replace(
        problem,
        offsets=np.concatenate([problem.offsets, problem.offsets[-1] + extra.offsets[1:]]),
        bits=np.concatenate([problem.bits, extra.bits]),
        positive=np.concatenate([problem.positive, extra.positive]),
        parity=np.concatenate([problem.parity, extra.parity]),
        negated=np.concatenate([problem.negated, extra.negated]),
        weight=np.concatenate([problem.weight, extra_w]),
    )
