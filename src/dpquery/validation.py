"""The one set of argument checks: every library error about a value's range comes from here.

Each check returns the value converted (``float`` or ``int``) or raises ``error`` (default
:class:`~dpquery.errors.ParameterError`; the privacy layer passes its subclass
:class:`~dpquery.privacy.errors.PrivacyParameterError`) naming the value and the range.
"""

from __future__ import annotations

import math
import numbers

from dpquery.errors import ParameterError

Error = type[ParameterError]


def real(name: str, value: object, error: Error = ParameterError) -> float:
    """A real number (not NaN, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise error(f"{name} must be a number, got NaN")
    return x


def positive(name: str, value: object, error: Error = ParameterError) -> float:
    """A finite number > 0."""
    x = real(name, value, error)
    if not 0.0 < x < math.inf:
        raise error(f"{name} must be a positive finite number, got {value!r}")
    return x


def nonnegative(name: str, value: object, error: Error = ParameterError) -> float:
    """A finite number >= 0."""
    x = real(name, value, error)
    if not 0.0 <= x < math.inf:
        raise error(f"{name} must be a finite number >= 0, got {value!r}")
    return x


def open_unit(name: str, value: object, error: Error = ParameterError) -> float:
    """A number strictly between 0 and 1 (a delta of approximate DP, a share, a fraction)."""
    x = real(name, value, error)
    if not 0.0 < x < 1.0:
        raise error(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return x


def delta(name: str, value: object, error: Error = ParameterError) -> float:
    """A delta in [0, 1): 0 asks for a pure guarantee."""
    x = real(name, value, error)
    if not 0.0 <= x < 1.0:
        raise error(f"{name} must lie in [0, 1), got {value!r}")
    return x


def integer(name: str, value: object, *, minimum: int, error: Error = ParameterError) -> int:
    """An integer (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise error(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def positive_int(name: str, value: object, error: Error = ParameterError) -> int:
    """An integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise error(f"{name} must be a positive integer, got {value!r}")
    return int(value)
