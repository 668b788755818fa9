"""The one rule for ``delta``: ``1/n^2`` by default, and a warning at ``1/n`` or more.

An ``(epsilon, delta)`` guarantee with ``delta >= 1/n`` allows a mechanism that publishes one
record of the data in the clear with probability ``delta`` per record ("just release a random
record": Dwork and Roth 2014, Section 2.3, the remark after Definition 2.4), so ``delta``
must be far below ``1/n``. Every algorithm that takes ``delta`` uses :func:`default_delta`
when none is given, and :func:`check_delta` warns when the one given is too large. ``n`` is
public (bounded DP, replace-one neighbours), so both read nothing private.
"""

from __future__ import annotations

import warnings

from dpquery.privacy import _validate


class LargeDeltaWarning(UserWarning):
    """``delta >= 1/n``: the guarantee permits publishing a record in the clear."""


def default_delta(n: int) -> float:
    """``1/n^2`` for ``n`` records: the default ``delta`` of every algorithm."""
    size = _validate.integer("n", n, minimum=1)
    return 1.0 / (float(size) * float(size))


def delta_too_large(delta: float, n: int) -> bool:
    """Whether ``delta >= 1/n``."""
    return _validate.integer("n", n, minimum=1) * float(delta) >= 1.0


def check_delta(delta: float | None, n: int) -> str | None:
    """Warn (:class:`LargeDeltaWarning`) when ``1/n <= delta < 1``; return the message, or
    ``None`` when ``delta`` is fine (``None`` or 0: pure DP; invalid values are left to the
    budget's own check)."""
    if delta is None or not 0 < delta < 1 or not delta_too_large(delta, n):
        return None  # pure DP, or an invalid delta that the budget itself refuses
    message = (
        f"delta={delta:g} is at least 1/n = {1 / n:.3g} (n={n:,}): such a guarantee allows "
        f"publishing records in the clear; use delta far below 1/n (default 1/n^2 = "
        f"{default_delta(n):.3g})"
    )
    warnings.warn(message, LargeDeltaWarning, stacklevel=2)
    return message
