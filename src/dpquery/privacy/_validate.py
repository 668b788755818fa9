"""The privacy layer's argument checks: those of :mod:`dpquery.validation`, raising
:class:`~dpquery.privacy.errors.PrivacyParameterError`."""

from __future__ import annotations

from dpquery import validation
from dpquery.privacy.errors import PrivacyParameterError


def real(name: str, value: object) -> float:
    return validation.real(name, value, PrivacyParameterError)


def positive(name: str, value: object) -> float:
    return validation.positive(name, value, PrivacyParameterError)


def nonnegative(name: str, value: object) -> float:
    return validation.nonnegative(name, value, PrivacyParameterError)


def open_unit(name: str, value: object) -> float:
    return validation.open_unit(name, value, PrivacyParameterError)


def delta(name: str, value: object) -> float:
    return validation.delta(name, value, PrivacyParameterError)


def integer(name: str, value: object, *, minimum: int) -> int:
    return validation.integer(name, value, minimum=minimum, error=PrivacyParameterError)
