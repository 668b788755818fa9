"""Argument checks shared by the privacy modules; every error names the value and the range."""

from __future__ import annotations

import math
import numbers

from dpquery.privacy.errors import PrivacyParameterError


def real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a real number; got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise PrivacyParameterError(f"{name} must be a number; got NaN")
    return x


def positive(name: str, value: object) -> float:
    x = real(name, value)
    if not (0.0 < x < math.inf):
        raise PrivacyParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return x


def nonnegative(name: str, value: object) -> float:
    x = real(name, value)
    if not (0.0 <= x < math.inf):
        raise PrivacyParameterError(f"{name} must be a finite number >= 0; got {value!r}")
    return x


def open_unit(name: str, value: object) -> float:
    x = real(name, value)
    if not (0.0 < x < 1.0):
        raise PrivacyParameterError(f"{name} must lie strictly between 0 and 1; got {value!r}")
    return x


def delta(name: str, value: object) -> float:
    """A delta in [0, 1): 0 asks for a pure guarantee."""
    x = real(name, value)
    if not (0.0 <= x < 1.0):
        raise PrivacyParameterError(f"{name} must lie in [0, 1); got {value!r}")
    return x


def integer(name: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PrivacyParameterError(f"{name} must be an integer >= {minimum}; got {value!r}")
    i = int(value)
    if i < minimum:
        raise PrivacyParameterError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return i
