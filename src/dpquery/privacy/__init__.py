"""Privacy core: costs, budgets, accountants, mechanisms, calibration and the ledger.

Every privacy-spending call charges a :class:`Ledger` before it draws; costs are stated in the
measure they are proved in (:class:`PureDP`, :class:`ZCDP`); accountants turn charges into
guarantees, the default being the tightest proved (:class:`Tightest`). The papers' own formulas
are named functions in their submodules: :mod:`dpquery.privacy.dualquery` (Theorems 4.2/4.3,
Remark 4.7), :mod:`dpquery.privacy.fem` (``rho_0 = rho/T``), :mod:`dpquery.privacy.dqrs`
(``rho_t``), :mod:`dpquery.privacy.composition` and :mod:`dpquery.privacy.conversions` (the
composition theorems and conversions by name). See ``docs/privacy.md``.
"""

from __future__ import annotations

from dpquery.privacy.accountants import (
    Accountant,
    AdvancedComposition,
    BasicComposition,
    Tightest,
    ZCDPAccountant,
    all_accountants,
    default_accountant,
)
from dpquery.privacy.budget import Budget, fits, spend
from dpquery.privacy.calibration import largest_float, largest_integer, max_rounds
from dpquery.privacy.composition import (
    Composition,
    CompositionTotals,
)
from dpquery.privacy.conversions import (
    replace_one_rho,
    zcdp_rho_for,
    zcdp_to_epsilon,
)
from dpquery.privacy.costs import (
    ZCDP,
    Charge,
    Cost,
    PureDP,
    gaussian_rho,
    gaussian_sigma,
)
from dpquery.privacy.errors import (
    AccountingError,
    BudgetExceededError,
    CalibrationError,
    PrivacyParameterError,
)
from dpquery.privacy.ledger import Guarantee, Ledger, LedgerEntry, LedgerReport, MechanismSpend
from dpquery.privacy.mechanisms import (
    AboveThreshold,
    above_threshold,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
)
from dpquery.privacy.sampling import sample_from_log_weights

__all__ = [
    "ZCDP",
    "AboveThreshold",
    "Accountant",
    "AccountingError",
    "AdvancedComposition",
    "BasicComposition",
    "Budget",
    "BudgetExceededError",
    "CalibrationError",
    "Charge",
    "Composition",
    "CompositionTotals",
    "Cost",
    "Guarantee",
    "Ledger",
    "LedgerEntry",
    "LedgerReport",
    "MechanismSpend",
    "PrivacyParameterError",
    "PureDP",
    "Tightest",
    "ZCDPAccountant",
    "above_threshold",
    "all_accountants",
    "default_accountant",
    "exponential_mechanism",
    "fits",
    "gaussian_mechanism",
    "gaussian_rho",
    "gaussian_sigma",
    "laplace_mechanism",
    "largest_float",
    "largest_integer",
    "max_rounds",
    "replace_one_rho",
    "report_noisy_max",
    "sample_from_log_weights",
    "spend",
    "zcdp_rho_for",
    "zcdp_to_epsilon",
]
