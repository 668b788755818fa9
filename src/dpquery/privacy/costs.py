"""Privacy costs, each stated in the measure it is proved in (the OpenDP convention).

A mechanism's cost is either pure ``epsilon``-DP or ``rho``-zCDP; conversions between
measures are explicit functions here and in :mod:`dpquery.privacy.conversions`, never implicit.
A :class:`Charge` is one entry a mechanism writes to the :class:`~dpquery.privacy.Ledger`:
``count`` independent invocations of a mechanism with the same per-invocation cost (DualQuery
charges a round's ``s`` samples as one charge with ``count = s``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpquery.privacy import _validate


@dataclass(frozen=True)
class PureDP:
    """Cost of an ``epsilon``-differentially private mechanism.

    ``bounded_range`` marks mechanisms that are also ``epsilon``-bounded range (the exponential
    mechanism with weights ``exp(epsilon * score / (2 * sensitivity))``; Durfee and Rogers 2019).
    zCDP accountants may then charge ``epsilon^2 / 8`` instead of ``epsilon^2 / 2``
    (Cesar and Rogers 2021): see :func:`bounded_range_to_zcdp`.
    """

    epsilon: float
    bounded_range: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _validate.nonnegative("epsilon", self.epsilon))
        if not isinstance(self.bounded_range, bool):
            raise TypeError(f"bounded_range must be a bool; got {self.bounded_range!r}")

    def describe(self) -> str:
        kind = "pure DP, bounded range" if self.bounded_range else "pure DP"
        return f"epsilon={self.epsilon:.6g} ({kind})"


@dataclass(frozen=True)
class ZCDP:
    """Cost of a ``rho``-zero-concentrated DP mechanism (Bun and Steinke 2016, Definition 1.1)."""

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _validate.nonnegative("rho", self.rho))

    def describe(self) -> str:
        return f"rho={self.rho:.6g} (zCDP)"


Cost = PureDP | ZCDP


@dataclass(frozen=True)
class Charge:
    """``count`` invocations of ``mechanism``, each costing ``cost`` in its own measure."""

    mechanism: str
    cost: Cost
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str) or not self.mechanism:
            raise TypeError(f"mechanism must be a non-empty name; got {self.mechanism!r}")
        if not isinstance(self.cost, PureDP | ZCDP):
            raise TypeError(f"cost must be PureDP or ZCDP; got {self.cost!r}")
        object.__setattr__(self, "count", _validate.integer("count", self.count, minimum=0))

    def describe(self) -> str:
        times = "" if self.count == 1 else f" x {self.count}"
        return f"{self.mechanism!r} ({self.cost.describe()}{times})"


def pure_to_zcdp(epsilon: float) -> float:
    """``epsilon``-DP implies ``epsilon^2 / 2``-zCDP.

    Oracle-efficient, Lemma 1 (Bun and Steinke 2016, Proposition 1.4).
    """
    eps = _validate.nonnegative("epsilon", epsilon)
    return eps * eps / 2


def bounded_range_to_zcdp(epsilon: float) -> float:
    """An ``epsilon``-bounded-range mechanism is ``epsilon^2 / 8``-zCDP.

    Cesar and Rogers 2021 ("Bounding, concentrating, and truncating", ALT 2021); the
    exponential mechanism with parameter ``epsilon`` is ``epsilon``-bounded range (Durfee and
    Rogers 2019). Four times tighter than Oracle-efficient Lemma 4 (``epsilon^2 / 2``).
    """
    eps = _validate.nonnegative("epsilon", epsilon)
    return eps * eps / 8


def gaussian_rho(sigma: float, sensitivity: float) -> float:
    """Gaussian noise ``N(0, sigma^2)`` on an L2-``sensitivity`` function is
    ``sensitivity^2 / (2 sigma^2)``-zCDP (Bun and Steinke 2016, Proposition 1.6)."""
    s = _validate.positive("sigma", sigma)
    d = _validate.positive("sensitivity", sensitivity)
    return d * d / (2 * s * s)


def gaussian_sigma(rho: float, sensitivity: float) -> float:
    """The noise scale with :func:`gaussian_rho` equal to ``rho``: ``sensitivity / sqrt(2 rho)``."""
    r = _validate.positive("rho", rho)
    d = _validate.positive("sensitivity", sensitivity)
    return d / (2 * r) ** 0.5
