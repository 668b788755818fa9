"""The largest parameter (rounds ``T``, samples ``s``, step ``eta``, ...) that fits a budget.

Searches are exact at the boundary: the value returned passes the ledger's own test
(:func:`~dpquery.privacy.budget.fits`) and the next one (``T + 1``, or the next float) fails
it, both evaluated, so the answer is what a :class:`~dpquery.privacy.Ledger` will accept.
Monotonicity is assumed (more rounds or samples, or a larger step, never cost less), which
holds for every accountant here.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence

from dpquery.privacy.accountants import Accountant, default_accountant
from dpquery.privacy.budget import Budget, fits, require_measurable
from dpquery.privacy.composition import Composition, CompositionTotals
from dpquery.privacy.costs import Charge
from dpquery.privacy.errors import CalibrationError

MAX_ROUNDS = 10**6


def largest_integer(passes: Callable[[int], bool], *, lower: int, upper: int) -> int:
    """Largest ``x`` in ``[lower, upper]`` with ``passes(x)``, for non-increasing ``passes``.

    Requires ``passes(lower)``; raises :class:`CalibrationError` if ``passes(upper)`` (the
    boundary lies beyond the search range). Exponential search, then bisection.
    """
    if not passes(lower):
        raise CalibrationError(f"even the smallest value {lower} exceeds the budget")
    lo, step = lower, 1
    while True:  # find hi with passes(lo) and not passes(hi)
        hi = min(lo + step, upper)
        if not passes(hi):
            break
        if hi == upper:
            raise CalibrationError(f"the budget admits more than {upper}; search range exhausted")
        lo, step = hi, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _float_to_key(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _key_to_float(k: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", k))[0])


def largest_float(passes: Callable[[float], bool], *, lower: float, upper: float) -> float:
    """Largest float ``x`` in ``[lower, upper]`` (``0 <= lower``) with ``passes(x)``, for
    non-increasing ``passes``: ``passes(x)`` and ``not passes(math.nextafter(x, inf))``.

    Bisects the bit patterns of non-negative doubles (ordered like the numbers), so it ends on
    adjacent floats after at most 64 steps.
    """
    if not (0.0 <= lower <= upper < math.inf):
        raise CalibrationError(f"need 0 <= lower <= upper < inf; got [{lower}, {upper}]")
    if not passes(lower):
        raise CalibrationError(f"even the smallest value {lower!r} exceeds the budget")
    if passes(upper):
        raise CalibrationError(f"the budget admits more than {upper!r}; search range exhausted")
    lo, hi = _float_to_key(lower), _float_to_key(upper)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(_key_to_float(mid)):
            lo = mid
        else:
            hi = mid
    return _key_to_float(lo)


def max_rounds(
    round_charges: Callable[[int], Sequence[Charge]],
    budget: Budget,
    accountant: Accountant | None = None,
    *,
    limit: int = MAX_ROUNDS,
) -> int:
    """Largest ``T`` such that the charges of rounds ``1..T`` fit ``budget``.

    ``round_charges(t)`` gives round ``t``'s charges. Rounds are accumulated once, in order
    (exact sums), and the accountant is evaluated only at the ``O(log T)`` search points.
    """
    acc = accountant if accountant is not None else default_accountant()
    require_measurable(budget, acc)
    composition = Composition()
    snapshots: list[CompositionTotals] = [composition.totals()]  # snapshots[T]: rounds 1..T

    def passes(T: int) -> bool:
        while len(snapshots) <= T:
            for charge in round_charges(len(snapshots)):
                composition.add(charge)
            snapshots.append(composition.totals())
        return fits(snapshots[T], budget, acc)

    return largest_integer(passes, lower=0, upper=limit)
