"""Baselines every release is compared with (DualQuery 2015, Section 7, "Comparison with a
simple baseline"), behind the interface the algorithms use: hyperparameters in ``__init__``,
``fit(data, workload)`` returns a :class:`BaselineResult`.

* :class:`ZerosDataset`: one record with every bit 0. Touches no data.
* :class:`UniformDistribution`: the uniform distribution over the domain, answered
  analytically (:func:`dpquery.queries.uniform.uniform_answers`). Touches no data.
* :class:`LaplaceNoise` / :class:`GaussianNoise`: the true answers plus independent noise
  on every query, calibrated to the workload's sensitivity, with the privacy cost stated. The
  noise is exact integer noise (discrete Laplace / discrete Gaussian, Canonne-Kamath-Steinke
  2020) on the integer counts ``n (q(D) - lo) / (hi - lo)``, never a raw float draw
  (Mironov 2012); the released answers are those noisy counts rescaled.

Neighbouring datasets differ in one record with ``n`` fixed and public, so one query answer
moves by at most ``(hi - lo) / n`` (``1/n``, or ``2/n`` for parities), and the vector of
``q`` answers by ``q (hi - lo) / n`` in L1 and ``sqrt(q) (hi - lo) / n`` in L2. Negated
queries are post-processing of the released answers and cost nothing more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpquery.algorithms.parameters import positive
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy.budget import Budget
from dpquery.privacy.costs import ZCDP, Charge, PureDP
from dpquery.privacy.integer_mechanisms import (
    discrete_gaussian_mechanism,
    discrete_gaussian_sigma2,
    discrete_laplace_mechanism,
    discrete_laplace_scale,
)
from dpquery.privacy.ledger import Ledger
from dpquery.queries.evaluate import answer_data, answer_records
from dpquery.queries.uniform import uniform_answers
from dpquery.queries.workload import Workload
from dpquery.rng import SeedLike, make_rng

__all__ = [
    "BaselineResult",
    "GaussianNoise",
    "LaplaceNoise",
    "UniformDistribution",
    "ZerosDataset",
    "l1_sensitivity",
    "l2_sensitivity",
]


@dataclass(frozen=True, eq=False)
class BaselineResult:
    """Released answers to the workload; the synthetic records when the baseline has them;
    the privacy ``charge`` (``None`` when the data was not read)."""

    name: str
    answers: np.ndarray
    records: Records | None = None
    charge: Charge | None = None
    noise_scale: float | None = None
    counts: np.ndarray | None = None  # the released noisy integer counts (noise baselines)


def _check(data: BinaryData, workload: Workload) -> None:
    if workload.d != data.d:
        raise DPQueryError(f"the workload is over {workload.d} bits but the data has {data.d}")
    if data.n == 0:
        raise DPQueryError("the data has no records")


def l1_sensitivity(workload: Workload, n: int) -> float:
    """L1 sensitivity of the workload's answer vector under one-record replacement."""
    lo, hi = workload.value_range
    return len(workload) * (hi - lo) / n


def l2_sensitivity(workload: Workload, n: int) -> float:
    """L2 sensitivity of the workload's answer vector under one-record replacement."""
    lo, hi = workload.value_range
    return math.sqrt(len(workload)) * (hi - lo) / n


class ZerosDataset:
    """The zeros data set: a single record with every attribute 0 (DualQuery 2015, Section 7).

    On sparse real data most marginals are small, so this is a sanity bar; on DualQuery's
    biased-bits data its expected mean error over random 3-way queries is 7/32.
    """

    def fit(self, data: BinaryData, workload: Workload) -> BaselineResult:
        _check(data, workload)
        records = Records(np.zeros((1, data.d), np.uint8), domain=data.domain)
        return BaselineResult("zeros", answer_records(workload, records), records)


class UniformDistribution:
    """The uniform distribution over the domain (DualQuery 2015, Section 7: "a uniform data set
    containing one of each possible record"; MWEM's initial distribution)."""

    def fit(self, data: BinaryData, workload: Workload) -> BaselineResult:
        _check(data, workload)
        return BaselineResult("uniform", uniform_answers(workload, data.onehot_groups))


def _counts(workload: Workload, n: int, true: np.ndarray) -> np.ndarray:
    """``n (q(D) - lo) / (hi - lo)``: the whole number of records behind each answer."""
    lo, hi = workload.value_range
    counts = (true - lo) / (hi - lo) * n
    rounded = np.rint(counts)
    if np.abs(counts - rounded).max(initial=0.0) > 1e-6:
        raise DPQueryError("the true answers are not counts over n records")
    return rounded.astype(np.int64)


class _NoisyAnswers:
    """True answers plus independent exact integer noise on every query's count, drawn by a
    mechanism of :mod:`dpquery.privacy.integer_mechanisms` that charges the ledger first (a
    fresh ledger holding exactly its cost when none is given). ``true_answers`` may be passed
    when already computed."""

    label: str
    seed: SeedLike

    def _noise(
        self, counts: np.ndarray, q: int, rng: np.random.Generator, ledger: Ledger | None
    ) -> tuple[np.ndarray, Charge, float]:
        """The noisy counts, the charge made and the noise's scale (in counts)."""
        raise NotImplementedError

    def fit(
        self,
        data: BinaryData,
        workload: Workload,
        ledger: Ledger | None = None,
        true_answers: np.ndarray | None = None,
    ) -> BaselineResult:
        _check(data, workload)
        exact = _counts(workload, data.n, _true(workload, data, true_answers))
        counts, charge, scale = self._noise(exact, len(workload), make_rng(self.seed), ledger)
        lo, hi = workload.value_range
        answers = lo + (hi - lo) * counts.astype(np.float64) / data.n
        return BaselineResult(
            self.label, answers, charge=charge, noise_scale=scale * (hi - lo) / data.n,
            counts=counts,
        )  # fmt: skip


class LaplaceNoise(_NoisyAnswers):
    """True answers plus discrete Laplace noise of scale ``b >= Δ1 / epsilon`` on the integer
    counts (one count moves by at most 1 per query): ``epsilon``-DP (the geometric mechanism,
    Ghosh, Roughgarden and Sundararajan 2009), drawn exactly by
    :func:`dpquery.privacy.integer_mechanisms.discrete_laplace_mechanism`."""

    label = "laplace"

    def __init__(self, epsilon: float, *, seed: SeedLike = None) -> None:
        self.epsilon = epsilon
        self.seed = seed

    def _noise(
        self, counts: np.ndarray, q: int, rng: np.random.Generator, ledger: Ledger | None
    ) -> tuple[np.ndarray, Charge, float]:
        eps = positive("epsilon", self.epsilon)
        noisy = discrete_laplace_mechanism(
            counts, epsilon=eps, sensitivity=q, rng=rng,
            ledger=ledger if ledger is not None else Ledger(Budget.pure(eps)),
            name="laplace baseline",
        )  # fmt: skip
        return noisy, Charge("laplace baseline", PureDP(eps)), float(discrete_laplace_scale(eps, q))


class GaussianNoise(_NoisyAnswers):
    """True answers plus discrete Gaussian noise ``N_Z(0, σ²)``, ``σ² >= Δ2² / (2 rho)``, on
    the integer counts (L2 sensitivity ``sqrt(q)``): ``rho``-zCDP (Canonne, Kamath and Steinke
    2020, Theorem 4), drawn exactly by
    :func:`dpquery.privacy.integer_mechanisms.discrete_gaussian_mechanism`."""

    label = "gaussian"

    def __init__(self, rho: float, *, seed: SeedLike = None) -> None:
        self.rho = rho
        self.seed = seed

    def _noise(
        self, counts: np.ndarray, q: int, rng: np.random.Generator, ledger: Ledger | None
    ) -> tuple[np.ndarray, Charge, float]:
        rho = positive("rho", self.rho)
        # sqrt(q), rounded up so that sigma^2 >= q / (2 rho) holds in exact arithmetic
        sensitivity = math.nextafter(math.sqrt(q), math.inf)
        noisy = discrete_gaussian_mechanism(
            counts, rho=rho, sensitivity=sensitivity, rng=rng,
            ledger=ledger if ledger is not None else Ledger(Budget.zcdp(rho)),
            name="gaussian baseline",
        )  # fmt: skip
        sigma = math.sqrt(discrete_gaussian_sigma2(rho, sensitivity))
        return noisy, Charge("gaussian baseline", ZCDP(rho)), sigma


def _true(workload: Workload, data: BinaryData, true_answers: np.ndarray | None) -> np.ndarray:
    if true_answers is None:
        return answer_data(workload, data)
    true = np.asarray(true_answers, dtype=np.float64)
    if true.shape != (len(workload),):
        raise DPQueryError(f"true_answers must have {len(workload)} entries, got {true.shape}")
    return true
