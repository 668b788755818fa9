"""The one rule for ``delta``: ``1/n^2`` by default, and a warning at ``1/n`` or more; under
add/remove neighbours (``n`` private) the public 1e-9, and a warning at 1e-6 or more.

An ``(epsilon, delta)`` guarantee with ``delta >= 1/n`` allows a mechanism that publishes one
record of the data in the clear with probability ``delta`` per record ("just release a random
record": Dwork and Roth 2014, Section 2.3, the remark after Definition 2.4), so ``delta``
must be far below ``1/n``. Every algorithm that takes ``delta`` uses :func:`default_delta`
when none is given, and :func:`check_delta` warns when the one given is too large. Under
replace-one neighbours (bounded DP) ``n`` is public, so both read nothing private; under
add/remove ``n`` is private and neither reads it (:func:`relation_default_delta`).

Likewise :func:`check_epsilon` warns above :data:`WEAK_EPSILON`: an epsilon-DP guarantee
bounds how far one release can move an adversary's odds on any fact about one record, by a
factor ``e^epsilon`` (the Bayesian reading of the definition: Dwork and Roth 2014, Section
2.3; Kasiviswanathan and Smith 2014); at ``epsilon = 10`` that factor is ``e^10 ~ 22,000``,
which turns prior odds of 1 to 100 into 220 to 1: no protection anyone could rely on.
"""

from __future__ import annotations

import warnings

from dpquery.privacy import _validate
from dpquery.privacy.conversions import zcdp_to_epsilon

ADD_REMOVE_DELTA = 1e-9
"""The default ``delta`` under add/remove neighbours: public, independent of ``n`` (AIM's
default)."""
ADD_REMOVE_LARGE_DELTA = 1e-6
"""Under add/remove ``delta`` at or above this is warned of: it is at least ``1/n`` for every
table of a million records or more, and ``n`` is not public to compare with."""

# Above this epsilon (or the epsilon of a rho at delta = 1/n^2) the guarantee is said to
# protect nothing (module docstring).
WEAK_EPSILON = 10.0


class LargeDeltaWarning(UserWarning):
    """``delta >= 1/n``: the guarantee permits publishing a record in the clear."""


class WeakBudgetWarning(UserWarning):
    """``epsilon > WEAK_EPSILON``: the guarantee protects nothing one could rely on."""


def default_delta(n: int) -> float:
    """``1/n^2`` for ``n`` records: the default ``delta`` of every algorithm."""
    size = _validate.integer("n", n, minimum=1)
    return 1.0 / (float(size) * float(size))


def delta_too_large(delta: float, n: int) -> bool:
    """Whether ``delta >= 1/n``."""
    return _validate.integer("n", n, minimum=1) * float(delta) >= 1.0


def relation_default_delta(n: int | None, add_remove: bool) -> float:
    """The default ``delta``: ``1/n^2`` (``n`` public, replace-one), or under add/remove
    neighbours, where ``n`` is private, the public
    :data:`ADD_REMOVE_DELTA` (1e-9, AIM's)."""
    if add_remove:
        return ADD_REMOVE_DELTA
    assert n is not None
    return default_delta(n)


def check_delta(delta: float | None, n: int | None, add_remove: bool = False) -> str | None:
    """Warn (:class:`LargeDeltaWarning`) when ``1/n <= delta < 1``; return the message, or
    ``None`` when ``delta`` is fine (``None`` or 0: pure DP; invalid values are left to the
    budget's own check). Under add/remove neighbours (``add_remove``) ``n`` is private and
    not read: the warning is at ``delta >=`` :data:`ADD_REMOVE_LARGE_DELTA`, public."""
    if add_remove:
        return _check_delta_add_remove(delta)
    assert n is not None
    if delta is None or not 0 < delta < 1 or not delta_too_large(delta, n):
        return None  # pure DP, or an invalid delta that the budget itself refuses
    message = (
        f"delta={delta:g} is at least 1/n = {1 / n:.3g} (n={n:,}): such a guarantee allows "
        f"publishing records in the clear; use delta far below 1/n (default 1/n^2 = "
        f"{default_delta(n):.3g})"
    )
    warnings.warn(message, LargeDeltaWarning, stacklevel=2)
    return message


def _check_delta_add_remove(delta: float | None) -> str | None:
    if delta is None or not ADD_REMOVE_LARGE_DELTA <= delta < 1:
        return None
    message = (
        f"delta={delta:g} is at least {ADD_REMOVE_LARGE_DELTA:g}, which is 1/n or more for "
        "any table of a million records or more (under add/remove neighbours n is private): "
        "such a guarantee allows publishing records in the clear; use delta far below 1/n "
        f"(default {ADD_REMOVE_DELTA:g})"
    )
    warnings.warn(message, LargeDeltaWarning, stacklevel=3)
    return message


def check_epsilon(
    epsilon: float | None, rho: float | None, n: int | None, add_remove: bool = False
) -> str | None:
    """Warn (:class:`WeakBudgetWarning`) when ``epsilon`` (or ``rho`` converted to epsilon at
    the default ``delta``, ``1/n^2`` or under add/remove 1e-9, Canonne-Kamath-Steinke) exceeds
    :data:`WEAK_EPSILON`; return the message, or ``None`` (invalid values are left to the
    budget's own check)."""
    if epsilon is not None and 0 < epsilon < float("inf"):
        e, given = float(epsilon), f"epsilon={epsilon:g}"
    elif epsilon is None and rho is not None and 0 < rho < float("inf"):
        d = relation_default_delta(n, add_remove)
        e = zcdp_to_epsilon(float(rho), d)
        at = f"{d:g}" if add_remove else "1/n^2"
        given = f"rho={rho:g} (epsilon {e:.3g} at delta {at})"
    else:
        return None
    if e <= WEAK_EPSILON:
        return None
    message = (
        f"{given} is above {WEAK_EPSILON:g}: a guarantee this weak protects nothing (one "
        f"release may multiply an adversary's odds on any record by up to e^{e:.3g}); "
        "use epsilon of at most a few"
    )
    warnings.warn(message, WeakBudgetWarning, stacklevel=2)
    return message
