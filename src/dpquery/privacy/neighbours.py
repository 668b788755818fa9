"""The neighbouring relation a guarantee is stated for, and the sensitivities it gives.

Differential privacy bounds how much a release can change between *neighbouring* datasets;
what "neighbouring" means is part of the guarantee:

* **add-remove** (:data:`ADD_REMOVE`, unbounded DP): ``D'`` is ``D`` with one record added
  or removed. The number of records ``n`` differs between neighbours, so ``n`` is private:
  a release may only read a noisy ``n`` (:func:`noisy_n`) or a public bound. This is the
  relation AIM, OpenDP, Tumult and PipelineDP state epsilon for.
* **replace-one** (:data:`REPLACE_ONE`, bounded DP): ``D'`` is ``D`` with one record
  replaced. ``n`` is the same on both sides and public. DualQuery, FEM, sepFEM, DQRS, MWEM
  and the online mechanism prove their theorems for this relation.

A replace-one neighbour is an add-remove neighbour of an add-remove neighbour, so an
add-remove guarantee of ``rho``-zCDP gives ``4 rho`` under replace-one (group privacy,
Bun and Steinke 2016, Proposition 1.9; :func:`~dpquery.privacy.conversions.replace_one_rho`
for the tighter per-mechanism statement). The sensitivities per relation:

=======================================  ===============  ==========
statistic                                replace-one      add-remove
=======================================  ===============  ==========
the number of records ``n``              0 (public)       1
one count (a cell, an item)              1                1
a marginal's count vector, L2            ``sqrt(2)``      1
AIM's quality score ``q_r`` (Section 4)  ``2 w_r``        ``w_r``
=======================================  ===============  ==========

A marginal's count vector: replacing a record moves one cell down and one up (L2
``sqrt(2)``), adding or removing one moves one cell (L2 1); Gaussian noise ``N(0, sigma^2)``
then costs ``Delta^2 / (2 sigma^2)``-zCDP (Bun and Steinke 2016, Proposition 1.6), and so does
the discrete Gaussian (Canonne, Kamath and Steinke 2020, Theorem 4). AIM's quality
``q_r(D) = w_r (||M_r(D) - M_r(D_hat)||_1 - b_r)`` with ``M_r(D_hat)`` scaled to a noisy or
public total (not to ``n``) moves by ``w_r`` times the L1 change of ``M_r(D)``: 2 under
replace-one, 1 under add-remove (McKenna et al. 2022, Section 4 and Appendix; the exponential
mechanism with sensitivity ``Delta`` is ``epsilon``-DP, McSherry and Talwar 2007, Theorem 6).
"""

from __future__ import annotations

import math
from typing import Final, Literal

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.privacy.budget import Budget, budget_rho
from dpquery.privacy.delta import ADD_REMOVE_DELTA, ADD_REMOVE_LARGE_DELTA
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism
from dpquery.privacy.ledger import Ledger

ADD_REMOVE: Final = "add-remove"
REPLACE_ONE: Final = "replace-one"
Neighbours = Literal["add-remove", "replace-one"]
RELATIONS: Final[tuple[str, str]] = (ADD_REMOVE, REPLACE_ONE)
"""The accepted spellings, in one place (the API's ``neighbours=``, the CLI's ``--neighbours``)."""

NOISY_N_SHARE: Final = 0.01
"""The share of the budget's zCDP ``rho`` that buys the noisy ``n`` (:func:`noisy_n`)."""
NOISY_N: Final = "the number of records (discrete Gaussian)"
"""The ledger's name of the noisy ``n``'s charge."""

_DESCRIPTIONS: Final = {
    ADD_REMOVE: "add/remove one record (n private)",
    REPLACE_ONE: "replace one record (n public)",
}
_NEIGHBOURING: Final = {
    ADD_REMOVE: "unbounded DP (add or remove one record), n private",
    REPLACE_ONE: "bounded DP (replace one record), n public",
}


def check_neighbours(value: object) -> str:
    """``value`` if it is one of :data:`RELATIONS`, else a clear error naming it."""
    if value not in RELATIONS:
        raise DPQueryError(
            f"neighbours must be {ADD_REMOVE!r} (one record added or removed, n private) or "
            f"{REPLACE_ONE!r} (one record replaced, n public); got {value!r}"
        )
    return str(value)


def describe(relation: str) -> str:
    """The relation in words, e.g. ``"add/remove one record (n private)"``."""
    return _DESCRIPTIONS[check_neighbours(relation)]


def neighbouring(relation: str) -> str:
    """The relation as a report states it, e.g. ``"unbounded DP (add or remove one record),
    n private"``."""
    return _NEIGHBOURING[check_neighbours(relation)]


def count_sensitivity(relation: str) -> float:
    """One count's sensitivity: 1 under either relation (a record is in it or not)."""
    check_neighbours(relation)
    return 1.0


def marginal_sensitivity(relation: str) -> float:
    """The L2 sensitivity of a marginal's count vector (each record in one cell):
    ``sqrt(2)`` under replace-one, 1 under add-remove (module docstring)."""
    return math.sqrt(2.0) if check_neighbours(relation) == REPLACE_ONE else 1.0


def selection_sensitivity(max_weight: float, relation: str) -> float:
    """The sensitivity of AIM's quality score ``q_r`` (AIM, Section 4) over candidates of
    weights at most ``max_weight``: ``2 max w_r`` under replace-one, ``max w_r`` under
    add-remove (module docstring)."""
    factor = 2.0 if check_neighbours(relation) == REPLACE_ONE else 1.0
    return factor * float(max_weight)


def refuse_add_remove(algorithm: str) -> DPQueryError:
    """The error of an algorithm whose theorems hold for replace-one only, asked for
    add-remove."""
    return DPQueryError(
        f"{algorithm} is proved for replace-one neighbours (n public) and does not support "
        f"neighbours={ADD_REMOVE!r}; pass neighbours={REPLACE_ONE!r} (--neighbours "
        f"{REPLACE_ONE}), or use a release that supports add/remove (auto, "
        "adaptive-projection, wide-dense)"
    )


def noisy_n_rho(budget: Budget) -> float:
    """The zCDP cost of the noisy ``n``: :data:`NOISY_N_SHARE` of the budget's ``rho``."""
    if budget.measure == "pure":
        raise DPQueryError(
            f"under {ADD_REMOVE} neighbours n is measured with the discrete Gaussian (zCDP): "
            "give delta > 0 or rho, not a pure-DP budget"
        )
    return NOISY_N_SHARE * budget_rho(budget)


def noisy_n(n: int, rho: float, rng: np.random.Generator, ledger: Ledger) -> int:
    """``n + N_Z(0, sigma^2)``, ``sigma^2 >= 1 / (2 rho)``, at least 1: ``rho``-zCDP under
    add-remove (a count of sensitivity 1; Canonne, Kamath and Steinke 2020, Theorem 4),
    charged to ``ledger`` before the draw. Every rule that reads ``n`` under add-remove
    reads this (post-processing)."""
    y = discrete_gaussian_mechanism(
        np.array([n]), rho=rho, sensitivity=count_sensitivity(ADD_REMOVE), rng=rng,
        ledger=ledger, name=NOISY_N,
    )  # fmt: skip
    return max(1, int(y[0]))


__all__ = [
    "ADD_REMOVE",
    "ADD_REMOVE_DELTA",
    "ADD_REMOVE_LARGE_DELTA",
    "NOISY_N",
    "NOISY_N_SHARE",
    "RELATIONS",
    "REPLACE_ONE",
    "Neighbours",
    "check_neighbours",
    "count_sensitivity",
    "describe",
    "marginal_sensitivity",
    "neighbouring",
    "noisy_n",
    "noisy_n_rho",
    "refuse_add_remove",
    "selection_sensitivity",
]
