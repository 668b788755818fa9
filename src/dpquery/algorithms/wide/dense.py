"""The dense mode of the wide release: every bit's count, measured at once, on tables of
free bits too wide for adaptive-projection (such as DualQuery's 512,000 biased bits,
``docs/wide.md``).

1. **Measure.** The vector ``c(D)`` of the ``d`` bit counts. Replacing one record ``x`` by
   ``x'`` (bounded DP, ``n`` public) changes count ``i`` by ``x'_i - x_i`` in ``{-1, 0, 1}``,
   so ``||c(D) - c(D')||_2 <= sqrt(d)``, attained when ``x'`` is ``x``'s complement; adding
   or removing ``x`` (add/remove, the default: ``n`` private) changes count ``i`` by ``x_i``,
   so again at most ``sqrt(d)``, attained by the all-ones record: no contribution bound is
   needed on dense bits, under either relation. ``c(D) + N_Z(0, sigma^2)`` with
   ``sigma^2 = d / (2 rho)`` is ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4),
   one discrete Gaussian draw charged to the ledger before it is drawn. The counts are
   popcounts of the packed columns (:meth:`~dpquery.data.binary.BinaryData.column_counts`):
   nothing is densified.
2. **Post-process.** The noisy counts are shrunk by empirical Bayes
   (:func:`~dpquery.algorithms.wide.shrink.shrink`, the true counts known to lie in
   ``[0, n]``) to their posterior means and divided by ``n``: probabilities ``p_i``. Under
   add/remove ``n`` is the noisy ``n`` the fit drew first
   (:func:`~dpquery.privacy.neighbours.noisy_n`, 1% of ``rho``; the measurement gets the
   rest). The
   posterior mean, not the median the sparse mode uses: when the noise is larger than ``n``
   (``sigma = 1.8 n`` at epsilon 0.1 on 512,000 bits and 20,000 records) the median jumps
   between the prior's atoms and lost to the uniform table (3-way mean TV 0.55 against
   0.44), the mean stays near the prior's centre (``docs/wide.md``).
3. **Release.** ``size`` records of independent bits, bit ``i`` ~ Bernoulli(``p_i``).

Only the 1-way marginals are measured: the records are the product of the estimated
marginals, exact when the bits are independent (as in the biased-bits table) and blind to
any correlation otherwise (pairs, as the sparse mode measures, are not measured here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpquery.algorithms.columns import column_sources
from dpquery.algorithms.parameters import budget_of
from dpquery.algorithms.synthesizer import Outcome, Run, Synthesizer, ZCDPBudget
from dpquery.algorithms.untouched import attributes_of
from dpquery.algorithms.wide.bound import sqrt_up
from dpquery.algorithms.wide.measure import noise_sigma
from dpquery.algorithms.wide.shrink import shrink
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Charge
from dpquery.privacy.budget import budget_rho
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N_SHARE, check_neighbours
from dpquery.queries import Workload
from dpquery.rng import SeedLike

BITS = "dense bit counts (discrete Gaussian)"
DEFAULT_SIZE = 1000  # 1,000 x 512,000 uint8 rows: 0.5 GB
_ROWS_PER_DRAW = 64  # records drawn at a time: 64 x d float32 uniforms
_SLACK = 1e-9  # the measurement's rho is cut by this fraction: with the noisy n's, within rho


def bits_sensitivity(d: int) -> float:
    """L2 sensitivity of the vector of ``d`` bit counts under either relation: ``sqrt(d)``
    (module docstring), rounded up as the sparse mode's are."""
    return sqrt_up(d)


@dataclass(frozen=True)
class DensePlan:
    """The budget, its zCDP ``rho`` (all of it on the one measurement) and the records."""

    budget: Budget
    rho: float
    d: int
    size: int

    def charges(self) -> list[Charge]:
        return [Charge(BITS, ZCDP(self.rho))]

    @property
    def one_way(self) -> tuple[float, ...]:
        """The noise scale of each bit's 1-way measurement (public; ``auto``'s pre-release
        check reads it as it reads adaptive-projection's)."""
        return (noise_sigma(self.rho, bits_sensitivity(self.d)),) * self.d


def independent_bits(
    p: np.ndarray, size: int, rng: np.random.Generator, rows: int = _ROWS_PER_DRAW
) -> np.ndarray:
    """``size`` records of independent bits, bit ``i`` ~ Bernoulli(``p[i]``), drawn a few
    rows at a time (the uniforms of all rows at once would be ``size x d`` floats)."""
    out = np.empty((size, p.size), dtype=np.uint8)
    p32 = p.astype(np.float32)
    for start in range(0, size, rows):
        stop = min(size, start + rows)
        out[start:stop] = rng.random((stop - start, p.size), dtype=np.float32) < p32
    return out


@dataclass(kw_only=True, eq=False)
class DenseBits(Synthesizer, ZCDPBudget):
    """Records of independent bits from every bit's noisy, shrunk count (module docstring).
    ``size`` is the number of records released; ``neighbours`` the relation (default
    ``"add-remove"``, :mod:`dpquery.privacy.neighbours`)."""

    name: ClassVar[str] = "wide-dense"
    options: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "rho", "size")

    size: int = DEFAULT_SIZE
    neighbours: str = ADD_REMOVE
    seed: SeedLike = None

    def validate(self) -> None:
        super().validate()
        check_neighbours(self.neighbours)

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None,
        n: int | None = None,
    ) -> DensePlan:  # fmt: skip
        """The whole budget, as zCDP, on the one measurement (under add/remove what the
        noisy ``n`` leaves); reads only ``n`` (the noisy ``n`` under add-remove) and ``d``."""
        n = int(data.n) if n is None else n
        if len(data.onehot_groups):
            raise DPQueryError(
                f"{self.name} releases independent free bits; the data has "
                f"{len(data.onehot_groups)} one-hot groups (use adaptive-projection or dualquery)"
            )
        whole = budget_of(**self.budget_keywords(budget, n))
        if whole.measure == "pure":
            raise DPQueryError(
                f"{self.name} measures with the discrete Gaussian (zCDP): give delta > 0 or "
                "rho, not a pure-DP budget"
            )
        rho = budget_rho(whole)
        if self.neighbours == ADD_REMOVE:
            rho *= (1 - NOISY_N_SHARE) * (1 - _SLACK)
        return DensePlan(whole, rho, int(data.d), self.size)

    def reads_answers(self, plan: DensePlan) -> bool:
        """No: the run reads the data only through its bits' counts."""
        return False

    def run(self, run: Run) -> Outcome:
        plan: DensePlan = run.plan
        data: BinaryData = run.data
        n = run.records_n
        sensitivity = bits_sensitivity(plan.d)
        y = discrete_gaussian_mechanism(
            data.column_counts(), rho=plan.rho, sensitivity=sensitivity, rng=run.rng,
            ledger=run.ledger, name=BITS,
        ).astype(np.float64)  # fmt: skip
        # post-processing from here on
        sigma = noise_sigma(plan.rho, sensitivity)
        p = np.clip(shrink(y, sigma, upper=n, mean=True), 0, n) / n
        rows = independent_bits(p, plan.size, run.rng)
        every = tuple(attributes_of(plan.d, data.onehot_groups))
        parameters = {
            "size": plan.size, "sigma": sigma, "budget": plan.budget.to_dict(),
            "columns": {"measured": len(every), "sources": column_sources(data, every, BITS)},
        }  # fmt: skip
        return Outcome(Records(rows, None, data.domain), [], parameters, {})
