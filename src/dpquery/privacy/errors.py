"""Exceptions of the privacy layer; all are :class:`dpquery.errors.DPQueryError` (bad input)."""

from __future__ import annotations

from dpquery.errors import DPQueryError, ParameterError


class PrivacyParameterError(ParameterError):
    """A privacy parameter (epsilon, delta, rho, T, s, eta, n, ...) is out of range."""


class BudgetExceededError(DPQueryError):
    """A charge would take the ledger over its budget; nothing was charged, no noise drawn."""


class AccountingError(DPQueryError):
    """An accountant cannot measure a charge (e.g. a zCDP-only cost under pure accounting)."""


class CalibrationError(DPQueryError):
    """No parameter value meets the budget, or the search range was exhausted."""
