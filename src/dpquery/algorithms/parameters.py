"""Parameter checks and budgets shared by the algorithms' planners."""

from __future__ import annotations

import math

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget


def budget_for(epsilon: float, delta: float | None) -> Budget:
    """Pure epsilon when ``delta`` is 0 or None, else (epsilon, delta)."""
    return Budget.pure(epsilon) if not delta else Budget.approx(epsilon, delta)


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
