"""The one validation module of the algorithms: range checks of hyperparameters and the one
path from ``epsilon``/``delta``/``rho`` to a :class:`~dpquery.privacy.Budget`.

Every check raises a :class:`~dpquery.errors.DPQueryError` naming the value and what was
expected; the privacy layer's own checks (:mod:`dpquery.privacy._validate`) raise its
subclass :class:`~dpquery.privacy.errors.PrivacyParameterError` with the same wording.
"""

from __future__ import annotations

import math

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget


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
        raise DPQueryError("give a budget: epsilon (with delta) or rho")
    delta = default_delta if delta is None else delta
    return Budget.pure(epsilon) if not delta else Budget.approx(epsilon, delta)


def budget_parameters(budget: Budget) -> dict[str, float | None]:
    """``budget`` back as ``epsilon``, ``delta`` and ``rho`` keywords (:func:`budget_of`'s
    inverse)."""
    if budget.measure == "zcdp":
        return {"epsilon": None, "delta": None, "rho": budget.rho}
    return {"epsilon": budget.epsilon, "delta": budget.delta or None, "rho": None}


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


def positive(name: str, value: object) -> float:
    """``value`` as a float if it is a positive finite number, else a clear error."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise DPQueryError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def positive_int(name: str, value: object) -> int:
    """``value`` as an int if it is a positive integer, else a clear error."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise DPQueryError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def fraction(name: str, value: object) -> float:
    """``value`` as a float if it lies strictly between 0 and 1, else a clear error."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise DPQueryError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return float(value)


def epsilon_delta(name: str, budget: dict[str, float | None]) -> dict[str, float | None]:
    """The ``epsilon`` and ``delta`` of :func:`budget_of`-style keywords, for an algorithm
    whose modes are stated in them: a zCDP ``rho`` is refused."""
    if budget.get("rho") is not None:
        raise DPQueryError(f"{name} takes an epsilon (and delta) budget, not rho")
    return {"epsilon": budget.get("epsilon"), "delta": budget.get("delta")}
