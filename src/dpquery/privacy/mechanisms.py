"""Noise-adding and selection mechanisms; each charges the ledger before it draws.

Every mechanism takes an explicit ``numpy.random.Generator`` (build one with
:func:`dpquery.rng.make_rng`) and a :class:`~dpquery.privacy.Ledger`. The order is always:
validate the inputs (a bad input costs nothing), charge the ledger (which raises, recording
nothing, if the budget would be exceeded), then draw.

Floating-point caveats. The textbook samplers used here act on float64: ``Laplace`` is the
inverse-CDF transform of a uniform, ``Gaussian`` numpy's ziggurat. Mironov 2012 ("On
significance of the least significant bits for differential privacy") showed that releasing
``value + Laplace`` computed this way can leak the value through which doubles are reachable
(the output set is porous and depends on the input), breaking the pure-DP proof; the remedies
are snapping (clamp and round to a grid, Mironov 2012) or discrete noise (the discrete
Laplace/Gaussian of Canonne, Kamath and Steinke 2020). The guarantees stated here are those of
the idealised real-valued mechanisms. The selection mechanisms (exponential mechanism,
report-noisy-max, sparse vector) release only an index, which removes the porous-output leak
but not the rounding of probabilities (see :mod:`dpquery.privacy.sampling`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpquery.privacy import _validate
from dpquery.privacy.costs import ZCDP, PureDP, gaussian_sigma
from dpquery.privacy.errors import AccountingError, PrivacyParameterError
from dpquery.privacy.ledger import Ledger
from dpquery.privacy.sampling import _check_rng, sample_from_log_weights


def _check_ledger(ledger: object) -> Ledger:
    if not isinstance(ledger, Ledger):
        raise TypeError(f"ledger must be a dpquery.privacy.Ledger; got {ledger!r}")
    return ledger


def _finite_array(name: str, values: ArrayLike, *, one_d: bool = False) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if one_d and (arr.ndim != 1 or arr.size == 0):
        raise PrivacyParameterError(f"{name} must be a non-empty 1-D array; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise PrivacyParameterError(f"{name} must be finite (no NaN or inf)")
    return arr


def exponential_mechanism(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    size: int = 1,
    name: str = "exponential mechanism",
    monotone: bool = False,
) -> NDArray[np.intp]:
    """Draw ``size`` indices, each with probability ``~ exp(epsilon * score / (2 sensitivity))``.

    McSherry and Talwar 2007 (DualQuery, Definition 4.1; Oracle-efficient, Definition 2.3).
    Each draw is ``epsilon``-DP and ``epsilon``-bounded range, so it is charged as
    ``PureDP(epsilon, bounded_range=True)`` ``size`` times (zCDP: ``epsilon^2/8`` each, Cesar
    and Rogers 2021; ``epsilon^2/2`` by Oracle-efficient Lemma 4). ``sensitivity`` bounds
    ``|score(D, r) - score(D', r)|`` over neighbours ``D, D'`` and all ``r``.

    ``monotone``: the scores of neighbours move in one direction (for every ``D, D'`` either
    every ``score(D', r) - score(D, r)`` lies in ``[0, sensitivity]`` or every one in
    ``[-sensitivity, 0]``: counts when one record is added or removed), and the weights are
    ``exp(epsilon * score / sensitivity)``, twice the exponent. The draw is still
    ``epsilon``-bounded range, charged the same: ``ln P(r|D)/P(r|D') - ln P(r'|D)/P(r'|D')``
    is ``epsilon / sensitivity`` times the difference of two score changes of one sign, at
    most ``epsilon`` (the bounded-range definition of Durfee and Rogers 2019;
    the factor 2 dropped for monotone scores, McSherry and Talwar 2007, Dwork and Roth 2014,
    Section 3.4, on monotone utilities).
    """
    eps = _validate.positive("epsilon", epsilon)
    delta_s = _validate.positive("sensitivity", sensitivity)
    k = _validate.integer("size", size, minimum=1)
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    scale = eps / delta_s if monotone else eps / (2 * delta_s)
    log_w = _finite_array("scores", scores, one_d=True) * scale
    if not np.isfinite(log_w).all():
        exponent = "epsilon * scores / sensitivity" if monotone else (
            "epsilon * scores / (2 sensitivity)")  # fmt: skip
        raise PrivacyParameterError(f"{exponent} overflows float64")
    ledger.charge(name, PureDP(eps, bounded_range=True), count=k)
    return sample_from_log_weights(log_w, k, rng)


def laplace_mechanism(
    values: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "Laplace mechanism",
) -> NDArray[np.float64]:
    """``values + Laplace(sensitivity / epsilon)`` in every coordinate: ``epsilon``-DP when
    ``sensitivity`` bounds the L1 change of the whole vector (Dwork and Roth 2014, Theorem 3.6).
    See the module docstring for the floating-point caveat."""
    eps = _validate.positive("epsilon", epsilon)
    delta_s = _validate.positive("sensitivity", sensitivity)
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    arr = _finite_array("values", values)
    ledger.charge(name, PureDP(eps))
    return arr + rng.laplace(0.0, delta_s / eps, size=arr.shape)


def gaussian_mechanism(
    values: ArrayLike,
    *,
    rho: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "Gaussian mechanism",
) -> NDArray[np.float64]:
    """``values + N(0, sigma^2)`` with ``sigma = sensitivity / sqrt(2 rho)``: ``rho``-zCDP when
    ``sensitivity`` bounds the L2 change of the vector (Bun and Steinke 2016, Proposition 1.6)."""
    r = _validate.positive("rho", rho)
    sigma = gaussian_sigma(r, sensitivity)
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    arr = _finite_array("values", values)
    ledger.charge(name, ZCDP(r))
    return arr + rng.normal(0.0, sigma, size=arr.shape)


def report_noisy_max(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "report noisy max",
) -> int:
    """``argmax_i (score_i + Laplace(2 sensitivity / epsilon))``: ``epsilon``-DP for scores of
    the given sensitivity (Dwork and Roth 2014, Section 3.3; their Claim 3.9 uses scale
    ``1/epsilon`` for counting queries under add/remove neighbours, which needs monotone
    scores — not assumed here). Only the index is released."""
    eps = _validate.positive("epsilon", epsilon)
    delta_s = _validate.positive("sensitivity", sensitivity)
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    arr = _finite_array("scores", scores, one_d=True)
    ledger.charge(name, PureDP(eps))
    return int(np.argmax(arr + rng.laplace(0.0, 2 * delta_s / eps, size=arr.shape)))


def above_threshold(
    values: ArrayLike,
    threshold: float,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "sparse vector (AboveThreshold)",
) -> int | None:
    """The sparse vector technique on a fixed sequence of query answers: the index of the first
    ``values[i] + Laplace(4 sensitivity / epsilon) >= threshold + Laplace(2 sensitivity /
    epsilon)``, or ``None``. ``epsilon``-DP however many queries are tested (Dwork and Roth
    2014, Algorithm 1 and Theorem 3.23). For adaptively chosen queries use
    :class:`AboveThreshold`."""
    eps = _validate.positive("epsilon", epsilon)
    delta_s = _validate.positive("sensitivity", sensitivity)
    t = _validate.real("threshold", threshold)
    if not math.isfinite(t):
        raise PrivacyParameterError(f"threshold must be finite; got {threshold!r}")
    rng = _check_rng(rng)
    ledger = _check_ledger(ledger)
    arr = _finite_array("values", values, one_d=True)
    ledger.charge(name, PureDP(eps))
    noisy_threshold = t + rng.laplace(0.0, 2 * delta_s / eps)
    above = np.flatnonzero(
        arr + rng.laplace(0.0, 4 * delta_s / eps, size=arr.shape) >= noisy_threshold
    )
    return int(above[0]) if above.size else None


@dataclass(frozen=True)
class AboveThresholdState:
    """What an :class:`AboveThreshold` needs to continue: its noisy threshold (secret: it is
    never published, and whoever holds it can learn more about the data than the mechanism's
    outputs reveal), its query-noise scale, whether it has halted and how many queries it
    answered. Plain numbers, so it can be stored (``to_dict`` / ``from_dict``)."""

    noisy_threshold: float
    query_scale: float
    halted: bool = False
    queries_answered: int = 0

    def __post_init__(self) -> None:
        t = _validate.real("noisy_threshold", self.noisy_threshold)
        if not math.isfinite(t):
            raise PrivacyParameterError(f"noisy_threshold must be finite; got {t!r}")
        _validate.positive("query_scale", self.query_scale)
        if not isinstance(self.halted, bool):
            raise PrivacyParameterError(f"halted must be true or false; got {self.halted!r}")
        _validate.integer("queries_answered", self.queries_answered, minimum=0)

    def to_dict(self) -> dict[str, float | bool | int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> AboveThresholdState:
        keys = {f.name for f in fields(cls)}
        if not isinstance(obj, Mapping) or set(obj) != keys:
            raise PrivacyParameterError(f"an AboveThreshold state needs exactly {sorted(keys)}")
        return cls(**obj)


class AboveThreshold:
    """AboveThreshold (Dwork and Roth 2014, Algorithm 1; Theorem 3.23) for adaptively chosen
    queries of the given sensitivity: charges ``epsilon`` once, when created, then answers
    :meth:`test` until the first ``True``, after which it refuses further queries.

    Its :attr:`state` is a plain value; :meth:`resume` continues from one (no new charge: the
    charge was made when the instance was created) with any generator, so a long-lived caller
    can store the state and draw each test's noise from a fresh generator.
    """

    def __init__(
        self,
        threshold: float,
        *,
        epsilon: float,
        sensitivity: float,
        rng: np.random.Generator,
        ledger: Ledger,
        name: str = "sparse vector (AboveThreshold)",
    ) -> None:
        eps = _validate.positive("epsilon", epsilon)
        delta_s = _validate.positive("sensitivity", sensitivity)
        t = _validate.real("threshold", threshold)
        if not math.isfinite(t):
            raise PrivacyParameterError(f"threshold must be finite; got {threshold!r}")
        self._rng = _check_rng(rng)
        _check_ledger(ledger).charge(name, PureDP(eps))
        self._state = AboveThresholdState(
            t + self._rng.laplace(0.0, 2 * delta_s / eps), 4 * delta_s / eps
        )

    @classmethod
    def resume(cls, state: AboveThresholdState, *, rng: np.random.Generator) -> AboveThreshold:
        """Continue an instance from its :attr:`state`; its noise now comes from ``rng``."""
        if not isinstance(state, AboveThresholdState):
            raise TypeError(f"state must be an AboveThresholdState; got {state!r}")
        self = cls.__new__(cls)
        self._rng = _check_rng(rng)
        self._state = state
        return self

    @property
    def state(self) -> AboveThresholdState:
        return self._state

    @property
    def halted(self) -> bool:
        return self._state.halted

    @property
    def queries_answered(self) -> int:
        return self._state.queries_answered

    def test(self, value: float) -> bool:
        """Whether the noisy ``value`` clears the noisy threshold; the first ``True`` halts."""
        if self._state.halted:
            raise AccountingError(
                "AboveThreshold has halted after its first above-threshold answer; start a new "
                "one (a new charge) to continue"
            )
        v = _validate.real("value", value)
        if not math.isfinite(v):
            raise PrivacyParameterError(f"value must be finite; got {value!r}")
        st = self._state
        above = v + self._rng.laplace(0.0, st.query_scale) >= st.noisy_threshold
        self._state = replace(st, halted=bool(above), queries_answered=st.queries_answered + 1)
        return self._state.halted
