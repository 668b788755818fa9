"""The algorithms' parameter helpers: the one path from ``epsilon``/``delta``/``rho`` to a
:class:`~dpquery.privacy.Budget` (:func:`budget_of`), and the checks of ``eta``, ``T`` and
``s``. Range checks come from :mod:`dpquery.validation` (re-exported here), so every error
names the value and what was expected in the same words.
"""

from __future__ import annotations

import math

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget
from dpquery.privacy.delta import default_delta as default_delta_of
from dpquery.privacy.delta import relation_default_delta
from dpquery.validation import open_unit, positive, positive_int

# What an estimator without a budget says (the command line spells the flags).
NO_BUDGET = (
    "no privacy budget given: give epsilon (e.g. epsilon=1; delta defaults to 1/n^2) or rho (zCDP)"
)


def budget_of(
    epsilon: float | None,
    delta: float | None = None,
    rho: float | None = None,
    *,
    default_delta: float | None = None,
) -> Budget:
    """The budget an estimator's ``epsilon``, ``delta`` and ``rho`` give: ``rho`` alone is
    zCDP; ``epsilon`` with ``delta`` (``default_delta`` when None) is ``(epsilon, delta)``-DP,
    pure when ``delta`` is 0 or None."""
    if epsilon is not None and rho is not None:
        raise DPQueryError("give epsilon (with delta) or rho, not both")
    if rho is not None:
        if delta is not None:
            raise DPQueryError("a rho (zCDP) budget takes no delta")
        return Budget.zcdp(rho)
    if epsilon is None:
        raise DPQueryError(NO_BUDGET)
    delta = default_delta if delta is None else delta
    return Budget.pure(epsilon) if not delta else Budget.approx(epsilon, delta)


def with_default_delta(
    keywords: dict[str, float | None], n: int | None, add_remove: bool = False
) -> dict[str, float | None]:
    """``keywords`` (``epsilon``, ``delta``, ``rho``) with ``delta`` set to ``1/n^2``
    (:func:`~dpquery.privacy.delta.default_delta`; under add/remove neighbours, where ``n`` is
    private, the public 1e-9 of :func:`~dpquery.privacy.delta.relation_default_delta`) when
    ``epsilon`` is given and ``delta`` is None: the one default of every estimator.
    ``delta=0`` stays pure DP; ``rho`` is untouched."""
    if keywords.get("epsilon") is None or keywords.get("delta") is not None:
        return dict(keywords)
    if add_remove:
        return {**keywords, "delta": relation_default_delta(None, True)}
    assert n is not None
    return {**keywords, "delta": default_delta_of(n)}


def budget_parameters(budget: Budget) -> dict[str, float | None]:
    """``budget`` back as ``epsilon``, ``delta`` and ``rho`` keywords (:func:`budget_of`'s
    inverse: a pure budget keeps ``delta = 0``, so no default delta is applied to it)."""
    if budget.measure == "zcdp":
        return {"epsilon": None, "delta": None, "rho": budget.rho}
    return {"epsilon": budget.epsilon, "delta": budget.delta, "rho": None}


def log_universe_size(data: BinaryData) -> float:
    """``ln |X|``: one value per one-hot group, two per free bit (Remark 4.7's ``|X|``)."""
    sizes = data.onehot_groups[:, 1] - data.onehot_groups[:, 0]
    free_bits = data.d - int(sizes.sum())
    return float(np.log(sizes).sum() + free_bits * math.log(2))


def ceil_epsilon(epsilon: float) -> float:
    """A budget just above ``epsilon``, for the explicit modes' own cost."""
    # The ledger recomputes the same exact sums; one ulp of room absorbs the last rounding.
    return math.nextafter(epsilon, math.inf) if epsilon > 0 else 1e-300


def check_parameters(eta: float, T: int, s: int) -> None:
    """``eta`` a positive number, ``T`` and ``s`` positive integers, or a clear error."""
    positive("eta", eta)
    positive_int("T", T)
    positive_int("s", s)


def fraction(name: str, value: object) -> float:
    """A share strictly between 0 and 1 (:func:`dpquery.validation.open_unit`)."""
    return open_unit(name, value)


def epsilon_delta(name: str, budget: dict[str, float | None]) -> dict[str, float | None]:
    """The ``epsilon`` and ``delta`` of :func:`budget_of`-style keywords, for an algorithm
    whose modes are stated in them: a zCDP ``rho`` is refused."""
    if budget.get("rho") is not None:
        raise DPQueryError(f"{name} takes an epsilon (and delta) budget, not rho")
    return {"epsilon": budget.get("epsilon"), "delta": budget.get("delta")}
