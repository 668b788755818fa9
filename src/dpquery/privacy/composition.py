"""Running sums of charges, exact to the last bit.

Every accountant is a function of a few sums over the charges (of ``epsilon``, ``epsilon^2``,
``epsilon (e^epsilon - 1)``, ``rho``). They are kept as exact sums of the per-charge float terms
(Shewchuk's algorithm, as in :func:`math.fsum`), so the total does not depend on the order of
the charges: a plan checked in advance (:meth:`Ledger.check`) and the same charges made one by
one arrive at the same bits, and a calibrated parameter that passes at the boundary passes in
the ledger too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from dpquery.privacy import _validate
from dpquery.privacy.costs import Charge, PureDP


class ExactSum:
    """An exact sum of floats; :meth:`value` is the correctly rounded total (``math.fsum``)."""

    __slots__ = ("_inf", "_partials")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._inf = False

    def add(self, x: float) -> None:
        if not math.isfinite(x):  # only +inf arises (an overflowing e^epsilon term)
            self._inf = True
            return
        # Shewchuk's grow-expansion: partials stay non-overlapping and sum exactly to the total.
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def value(self) -> float:
        return math.inf if self._inf else math.fsum(self._partials)

    def copy(self) -> ExactSum:
        other = ExactSum()
        other._partials = list(self._partials)
        other._inf = self._inf
        return other


@dataclass(frozen=True)
class CompositionTotals:
    """The sums every accountant reads; one snapshot of a :class:`Composition`.

    Pure-DP charges contribute to the ``epsilon_*`` fields and to both zCDP totals
    (``rho_lemma1``: ``epsilon^2/2`` each; ``rho_bounded_range``: ``epsilon^2/8`` for
    bounded-range charges, ``epsilon^2/2`` otherwise); zCDP charges only to ``rho_native``.
    """

    invocations: int = 0
    zcdp_invocations: int = 0
    positive_pure_invocations: int = 0
    epsilon_sum: float = 0.0
    epsilon_max: float = 0.0
    epsilon_sq_sum: float = 0.0
    epsilon_expm1_sum: float = 0.0
    rho_lemma1: float = 0.0
    rho_bounded_range: float = 0.0
    rho_native: float = 0.0

    @property
    def all_pure(self) -> bool:
        return self.zcdp_invocations == 0


class Composition:
    """Accumulates charges into :class:`CompositionTotals` (exact sums; see module docstring)."""

    __slots__ = (
        "_eps",
        "_eps_expm1",
        "_eps_sq",
        "_max",
        "_n",
        "_n_pos",
        "_n_zcdp",
        "_rho_br",
        "_rho_l1",
        "_rho_native",
    )

    def __init__(self, charges: Iterable[Charge] = ()) -> None:
        self._n = self._n_zcdp = self._n_pos = 0
        self._max = 0.0
        self._eps, self._eps_sq, self._eps_expm1 = ExactSum(), ExactSum(), ExactSum()
        self._rho_l1, self._rho_br, self._rho_native = ExactSum(), ExactSum(), ExactSum()
        for charge in charges:
            self.add(charge)

    def add(self, charge: Charge) -> None:
        k = charge.count
        if k == 0:
            return
        self._n += k
        cost = charge.cost
        if isinstance(cost, PureDP):
            eps = cost.epsilon
            if eps > 0:
                self._n_pos += k
                self._max = max(self._max, eps)
            sq = eps * eps
            self._eps.add(k * eps)
            self._eps_sq.add(k * sq)
            self._eps_expm1.add(k * (eps * math.expm1(eps)) if eps < 700 else math.inf)
            self._rho_l1.add(k * (sq / 2))
            self._rho_br.add(k * (sq / 8 if cost.bounded_range else sq / 2))
        else:
            self._n_zcdp += k
            self._rho_native.add(k * cost.rho)

    def totals(self) -> CompositionTotals:
        return CompositionTotals(
            invocations=self._n,
            zcdp_invocations=self._n_zcdp,
            positive_pure_invocations=self._n_pos,
            epsilon_sum=self._eps.value(),
            epsilon_max=self._max,
            epsilon_sq_sum=self._eps_sq.value(),
            epsilon_expm1_sum=self._eps_expm1.value(),
            rho_lemma1=self._rho_l1.value(),
            rho_bounded_range=self._rho_br.value(),
            rho_native=self._rho_native.value(),
        )

    def copy(self) -> Composition:
        other = Composition.__new__(Composition)
        other._n, other._n_zcdp, other._n_pos, other._max = (
            self._n,
            self._n_zcdp,
            self._n_pos,
            self._max,
        )
        other._eps, other._eps_sq, other._eps_expm1 = (
            self._eps.copy(),
            self._eps_sq.copy(),
            self._eps_expm1.copy(),
        )
        other._rho_l1, other._rho_br, other._rho_native = (
            self._rho_l1.copy(),
            self._rho_br.copy(),
            self._rho_native.copy(),
        )
        return other


def advanced_composition(epsilon: float, k: int, delta: float) -> float:
    """DualQuery, Lemma 2.4 (Dwork, Rothblum and Vadhan 2010): ``k`` adaptively composed
    ``epsilon'``-DP mechanisms are ``(epsilon, delta)``-DP for

        epsilon = sqrt(2 k ln(1/delta)) epsilon' + k epsilon' (e^epsilon' - 1).

    (The 2022 revision's text puts ``epsilon'`` under the square root; the 2015 revision and the
    proof of Theorem 4.3 have it outside, which is the Dwork-Rothblum-Vadhan theorem.)
    """
    e = _validate.nonnegative("epsilon", epsilon)
    n = _validate.integer("k", k, minimum=0)
    d = _validate.open_unit("delta", delta)
    return math.sqrt(2 * n * math.log(1 / d)) * e + n * e * math.expm1(e)


def advanced_composition_heterogeneous(
    epsilon_sq_sum: float, epsilon_expm1_sum: float, delta: float
) -> float:
    """Advanced composition with per-mechanism ``epsilon_i``:

        epsilon = sqrt(2 ln(1/delta) sum_i epsilon_i^2) + sum_i epsilon_i (e^epsilon_i - 1).

    The Dwork-Rothblum-Vadhan proof of Lemma 2.4 (Azuma on the privacy loss, whose i-th step
    lies in ``[-epsilon_i, epsilon_i]`` with mean at most ``epsilon_i (e^epsilon_i - 1)``) gives
    this directly; it is the form the DualQuery authors' code used (round ``t``'s samples each
    charged ``2 eta (t-1) / n``). With all ``epsilon_i`` equal it is Lemma 2.4.
    """
    d = _validate.open_unit("delta", delta)
    return math.sqrt(2 * math.log(1 / d) * epsilon_sq_sum) + epsilon_expm1_sum
